// Placeholder: HARD_SWISH not written yet.
#include "kernels/kernels.h"

#if TFLM_KERNEL_HARD_SWISH
tflm_status_t tflm_hard_swish_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "HARD_SWISH kernel not written yet");
}

tflm_status_t tflm_hard_swish_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

