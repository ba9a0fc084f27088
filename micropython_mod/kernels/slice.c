// Placeholder: SLICE not written yet.
#include "kernels/kernels.h"

#if TFLM_KERNEL_SLICE
tflm_status_t tflm_slice_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "SLICE kernel not written yet");
}

tflm_status_t tflm_slice_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

