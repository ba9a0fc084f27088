// Placeholder: AVERAGE_POOL_2D, MAX_POOL_2D not written yet.
#include "kernels/kernels.h"

#if TFLM_KERNEL_AVERAGE_POOL_2D
tflm_status_t tflm_average_pool_2d_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "AVERAGE_POOL_2D kernel not written yet");
}

tflm_status_t tflm_average_pool_2d_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

#if TFLM_KERNEL_MAX_POOL_2D
tflm_status_t tflm_max_pool_2d_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "MAX_POOL_2D kernel not written yet");
}

tflm_status_t tflm_max_pool_2d_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

