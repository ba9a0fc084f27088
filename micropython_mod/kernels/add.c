// Placeholder: ADD not written yet.
#include "kernels/kernels.h"

#if TFLM_KERNEL_ADD
tflm_status_t tflm_add_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "ADD kernel not written yet");
}

tflm_status_t tflm_add_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

