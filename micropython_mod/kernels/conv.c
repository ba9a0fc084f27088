// Placeholder: CONV_2D not written yet.
#include "kernels/kernels.h"

#if TFLM_KERNEL_CONV_2D
tflm_status_t tflm_conv_2d_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "CONV_2D kernel not written yet");
}

tflm_status_t tflm_conv_2d_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

