// Placeholder: MINIMUM, MAXIMUM not written yet.
#include "kernels/kernels.h"

#if TFLM_KERNEL_MINIMUM
tflm_status_t tflm_minimum_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "MINIMUM kernel not written yet");
}

tflm_status_t tflm_minimum_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

#if TFLM_KERNEL_MAXIMUM
tflm_status_t tflm_maximum_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "MAXIMUM kernel not written yet");
}

tflm_status_t tflm_maximum_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

