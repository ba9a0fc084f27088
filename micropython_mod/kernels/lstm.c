// Placeholder: UNIDIRECTIONAL_SEQUENCE_LSTM not written yet.
#include "kernels/kernels.h"

#if TFLM_KERNEL_UNIDIRECTIONAL_SEQUENCE_LSTM
tflm_status_t tflm_unidirectional_sequence_lstm_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "UNIDIRECTIONAL_SEQUENCE_LSTM kernel not written yet");
}

tflm_status_t tflm_unidirectional_sequence_lstm_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

