// Placeholder: SPLIT, SPLIT_V not written yet.
#include "kernels/kernels.h"

#if TFLM_KERNEL_SPLIT
tflm_status_t tflm_split_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "SPLIT kernel not written yet");
}

tflm_status_t tflm_split_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

#if TFLM_KERNEL_SPLIT_V
tflm_status_t tflm_split_v_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "SPLIT_V kernel not written yet");
}

tflm_status_t tflm_split_v_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

