// TANH: float32, int8 (gemmlowp fixed point) and int16 (TFLM's sigmoid
// table), bit-exact with TFLM's reference kernels; prepare and the
// quantized paths are LOGISTIC's too (activation_int16.h).
#include "kernels/kernels.h"
#include "kernels/activation_int16.h"
#include "engine/fmath.h"

#if TFLM_KERNEL_TANH

static void tflm_tanh_float32(uint32_t n, const float *in, float *out) {
    for (uint32_t i = 0; i < n; ++i) {
        out[i] = tflm_tanhf(in[i]);
    }
}

tflm_status_t tflm_tanh_prepare(tflm_prepare_t *p) {
    return tflm_act_prepare(p, true);
}

tflm_status_t tflm_tanh_eval(tflm_eval_t *e) {
    const tflm_act_data_t *d = e->data;
    if (d->kind == TFLM_ACT_FLOAT32) {
        tflm_tanh_float32(d->n, e->in[0], e->out[0]);
    } else if (d->kind == TFLM_ACT_INT8) {
        tflm_act_int8(d, e->in[0], e->out[0], true);
    } else {
        tflm_tanh_int16_apply(d->multiplier, d->shift, d->n, e->in[0], e->out[0]);
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_TANH
