// Placeholder: PACK, UNPACK not written yet.
#include "kernels/kernels.h"

#if TFLM_KERNEL_PACK
tflm_status_t tflm_pack_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "PACK kernel not written yet");
}

tflm_status_t tflm_pack_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

#if TFLM_KERNEL_UNPACK
tflm_status_t tflm_unpack_prepare(tflm_prepare_t *p) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "UNPACK kernel not written yet");
}

tflm_status_t tflm_unpack_eval(tflm_eval_t *e) {
    (void)e;
    return TFLM_ERR_NOT_IMPLEMENTED;
}
#endif

