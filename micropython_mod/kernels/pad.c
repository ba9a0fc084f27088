// Placeholder: PAD, PADV2 not written yet.
#include "kernels/kernels.h"

#if TFLM_KERNEL_PAD
tflm_status_t tflm_pad_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "PAD kernel not written yet");
}

tflm_status_t tflm_pad_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

#if TFLM_KERNEL_PADV2
tflm_status_t tflm_padv2_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "PADV2 kernel not written yet");
}

tflm_status_t tflm_padv2_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

