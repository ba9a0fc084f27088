// Placeholder: MEAN, SUM not written yet.
#include "kernels/kernels.h"

#if TFLM_KERNEL_MEAN
tflm_status_t tflm_mean_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "MEAN kernel not written yet");
}

tflm_status_t tflm_mean_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

#if TFLM_KERNEL_SUM
tflm_status_t tflm_sum_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "SUM kernel not written yet");
}

tflm_status_t tflm_sum_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

