// LOGISTIC: float32, int8 (gemmlowp fixed point) and int16 (TFLM's sigmoid
// table), bit-exact with TFLM's reference kernels.
#include "kernels/kernels.h"
#include "kernels/activation_int16.h"
#include "engine/fixedpoint.h"
#include "engine/fmath.h"
#include "engine/quant.h"

#if TFLM_KERNEL_LOGISTIC

enum { LOGISTIC_FLOAT32, LOGISTIC_INT8, LOGISTIC_INT16 };

// int8 inputs are rescaled into Q4.27.
#define LOGISTIC_INPUT_IB (4)

typedef struct {
    uint8_t kind;
    uint32_t n;
    int32_t zero_point;
    int32_t radius;     // int8: |input - zero point| at which the output saturates
    int32_t multiplier;
    int32_t shift;
} logistic_data_t;

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

static void tflm_logistic_int8(const logistic_data_t *d, const int8_t *in, int8_t *out) {
    for (uint32_t i = 0; i < d->n; ++i) {
        int32_t x = in[i] - d->zero_point;
        if (x <= -d->radius) {
            out[i] = -128;
        } else if (x >= d->radius) {
            out[i] = 127;
        } else {
            int32_t q4 = tflm_mul_by_quantized_mul(x, d->multiplier, d->shift);
            // Q0.31 to 1/256 steps, output zero point -128.
            int32_t r = tflm_rounding_divide_by_pot(tflm_fp_logistic(q4, LOGISTIC_INPUT_IB), 23);
            out[i] = (int8_t)tflm_clamp(r - 128, -128, 127);
        }
    }
}

// Input types, in the order of the kinds above.
static const uint8_t logistic_types[] = { TFLM_FLOAT32, TFLM_INT8, TFLM_INT16 };

tflm_status_t tflm_logistic_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, out;
    uint8_t kind = 0;
    tflm_status_t st = tflm_prep_unary(p, logistic_types, sizeof(logistic_types), &in, &out, &kind);
    if (st) {
        return st;
    }
    int32_t multiplier = 0, shift = 0, radius = 0;
    if (kind == LOGISTIC_INT8) {
        if (out.zero_point != -128) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "int8 output needs zero point -128");
        }
        st = tflm_act_int8_params(p, in.scale, LOGISTIC_INPUT_IB, &multiplier, &shift, &radius);
    } else if (kind == LOGISTIC_INT16) {
        st = tflm_act_int16_params(p, &in, &out, 0, &multiplier, &shift);
    }
    if (st) {
        return st;
    }
    logistic_data_t *d = tflm_prep_alloc(p, sizeof(logistic_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->kind = kind;
    d->n = in.elements;
    d->zero_point = in.zero_point;
    d->radius = radius;
    d->multiplier = multiplier;
    d->shift = shift;
    return TFLM_OK;
}

tflm_status_t tflm_logistic_eval(tflm_eval_t *e) {
    const logistic_data_t *d = e->data;
    switch (d->kind) {
        case LOGISTIC_FLOAT32:
            tflm_logistic_float32(d->n, e->in[0], e->out[0]);
            break;
        case LOGISTIC_INT8:
            tflm_logistic_int8(d, e->in[0], e->out[0]);
            break;
        default:
            tflm_logistic_int16_apply(d->multiplier, d->shift, d->n, e->in[0], e->out[0]);
            break;
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_LOGISTIC
