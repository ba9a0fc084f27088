// LOGISTIC: float32, int8 (gemmlowp fixed point) and int16 (TFLM's sigmoid
// table), bit-exact with TFLM's reference kernels; prepare and the
// quantized paths are TANH's too (activation_int16.h).
#include "kernels/kernels.h"
#include "kernels/activation_int16.h"
#include "engine/fmath.h"

#if TFLM_KERNEL_LOGISTIC

static void tflm_logistic_float32(uint32_t n, const float *in, float *out) {
    for (uint32_t i = 0; i < n; ++i) {
        float x = in[i];
        float r;
        // TFLM's cutoffs: 1 above, exp(x) far below zero.
        if (x > 16.619047164916992188f) {
            r = 1.0f;
        } else if (x < -9.0f) {
            r = tflm_expf(x);
        } else {
            r = 1.0f / (1.0f + tflm_expf(-x));
        }
        out[i] = r;
    }
}

tflm_status_t tflm_logistic_prepare(tflm_prepare_t *p) {
    return tflm_act_prepare(p, false);
}

tflm_status_t tflm_logistic_eval(tflm_eval_t *e) {
    const tflm_act_data_t *d = e->data;
    if (d->kind == TFLM_ACT_FLOAT32) {
        tflm_logistic_float32(d->n, e->in[0], e->out[0]);
    } else if (d->kind == TFLM_ACT_INT8) {
        tflm_act_int8(d, e->in[0], e->out[0], false);
    } else {
        tflm_logistic_int16_apply(d->multiplier, d->shift, d->n, e->in[0], e->out[0]);
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_LOGISTIC
