// Placeholder: RELU, RELU6, LEAKY_RELU not written yet.
#include "kernels/kernels.h"

#if TFLM_KERNEL_RELU
tflm_status_t tflm_relu_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "RELU kernel not written yet");
}

tflm_status_t tflm_relu_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

#if TFLM_KERNEL_RELU6
tflm_status_t tflm_relu6_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "RELU6 kernel not written yet");
}

tflm_status_t tflm_relu6_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

#if TFLM_KERNEL_LEAKY_RELU
tflm_status_t tflm_leaky_relu_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "LEAKY_RELU kernel not written yet");
}

tflm_status_t tflm_leaky_relu_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

