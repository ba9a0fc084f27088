// MUL: float32, int32, int8 and int16 (zero points 0) with broadcasting,
// bit-exact with TFLM's reference: the product of the offset inputs is
// rescaled once to the output.
#include "kernels/kernels.h"
#include "kernels/broadcast.h"
#include "engine/quant.h"
#include "engine/schema.h"

#if TFLM_KERNEL_MUL

// MulOptions fields

enum { MUL_FLOAT32, MUL_INT32, MUL_INT8, MUL_INT16 };

// The rescaling of one quantized MUL, set up once per eval in a local (stores
// to the output could alias the kernel data, forcing reloads in the loop).
typedef struct {
    int32_t in1_offset, in2_offset, out_offset;
    int32_t act_min, act_max;
    tflm_requant_t out;
} mul_quant_t;

static inline mul_quant_t mul_quant_init(const tflm_arith_data_t *d) {
    mul_quant_t q;
    q.in1_offset = d->off.in1;
    q.in2_offset = d->off.in2;
    q.out_offset = d->off.out;
    q.act_min = d->act_min.i;
    q.act_max = d->act_max.i;
    q.out = tflm_requant_init(d->multiplier, d->shift);
    return q;
}

static inline int32_t mul_quantized(const mul_quant_t *q, int32_t x, int32_t y) {
    int32_t prod = (int32_t)((uint32_t)(q->in1_offset + x) * (uint32_t)(q->in2_offset + y));
    int32_t r = tflm_wrap_add(q->out_offset, tflm_requant(&q->out, prod));
    return tflm_clamp(r, q->act_min, q->act_max);
}

// The element operations (ctx: the activation range, or the rescaling).
static float mul_f32(const void *ctx, float a, float b) {
    const float *range = ctx;
    return tflm_clampf(a * b, range[0], range[1]);
}
// Wrapping product, as TFLM's WrappingMul.
static int32_t mul_i32(const void *ctx, int32_t a, int32_t b) {
    const int32_t *range = ctx;
    return tflm_clamp((int32_t)((uint32_t)a * (uint32_t)b), range[0], range[1]);
}
static int8_t mul_q8(const void *ctx, int8_t a, int8_t b) {
    return (int8_t)mul_quantized(ctx, a, b);
}
static int16_t mul_q16(const void *ctx, int16_t a, int16_t b) {
    return (int16_t)mul_quantized(ctx, a, b);
}

// Input types, in the order of the kinds above.
static const uint8_t mul_types[] = { TFLM_FLOAT32, TFLM_INT32, TFLM_INT8, TFLM_INT16 };

tflm_status_t tflm_mul_prepare(tflm_prepare_t *p) {
    tflm_arith_t a;
    tflm_status_t st = tflm_arith_prepare(p, "MUL", mul_types, sizeof(mul_types), TFLM_OPT_MUL_FUSED_ACTIVATION_FUNCTION,
        &a);
    if (st) {
        return st;
    }
    if (a.kind == MUL_INT16 && (a.in1.zero_point != 0 || a.in2.zero_point != 0 || a.out.zero_point != 0)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "int16 MUL needs zero points 0");
    }
    tflm_arith_data_t *d = tflm_arith_alloc(p, &a);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    if (!a.quantized) {
        return TFLM_OK;
    }
    double real = (double)a.in1.scale * (double)a.in2.scale / (double)a.out.scale;
    int32_t shift;
    if ((st = tflm_prep_multiplier(p, real, 31, &d->multiplier, &shift))) {
        return st;
    }
    d->shift = (int8_t)shift;
    return TFLM_OK;
}

tflm_status_t tflm_mul_eval(tflm_eval_t *e) {
    const tflm_arith_data_t *d = e->data;
    // Each kind's context in a local: stores to the output could alias the
    // kernel data, forcing reloads in the loop.
    if (d->kind == MUL_FLOAT32) {
        const float range[2] = { d->act_min.f, d->act_max.f };
        tflm_bcast_float32(d->plan, e->in[0], e->in[1], e->out[0], mul_f32, range);
    } else if (d->kind == MUL_INT32) {
        const int32_t range[2] = { d->act_min.i, d->act_max.i };
        tflm_bcast_int32(d->plan, e->in[0], e->in[1], e->out[0], mul_i32, range);
    } else {
        const mul_quant_t q = mul_quant_init(d);
        if (d->kind == MUL_INT8) {
            tflm_bcast_int8(d->plan, e->in[0], e->in[1], e->out[0], mul_q8, &q);
        } else {
            tflm_bcast_int16(d->plan, e->in[0], e->in[1], e->out[0], mul_q16, &q);
        }
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_MUL
