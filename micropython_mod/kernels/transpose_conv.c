// Placeholder: TRANSPOSE_CONV not written yet.
#include "kernels/kernels.h"

#if TFLM_KERNEL_TRANSPOSE_CONV
tflm_status_t tflm_transpose_conv_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "TRANSPOSE_CONV kernel not written yet");
}

tflm_status_t tflm_transpose_conv_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

