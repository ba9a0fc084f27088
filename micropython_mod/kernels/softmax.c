// Placeholder: SOFTMAX not written yet.
#include "kernels/kernels.h"

#if TFLM_KERNEL_SOFTMAX
tflm_status_t tflm_softmax_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "SOFTMAX kernel not written yet");
}

tflm_status_t tflm_softmax_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

