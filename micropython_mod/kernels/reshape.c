// Placeholder: RESHAPE, SQUEEZE, EXPAND_DIMS not written yet.
#include "kernels/kernels.h"

#if TFLM_KERNEL_RESHAPE
tflm_status_t tflm_reshape_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "RESHAPE kernel not written yet");
}

tflm_status_t tflm_reshape_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

#if TFLM_KERNEL_SQUEEZE
tflm_status_t tflm_squeeze_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "SQUEEZE kernel not written yet");
}

tflm_status_t tflm_squeeze_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

#if TFLM_KERNEL_EXPAND_DIMS
tflm_status_t tflm_expand_dims_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "EXPAND_DIMS kernel not written yet");
}

tflm_status_t tflm_expand_dims_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

