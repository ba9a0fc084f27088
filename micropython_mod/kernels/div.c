// DIV: float32, int32 and int8 with broadcasting, bit-exact with TFLM's
// reference. int8 divides through a fixed-point reciprocal of the divisor.
#include "kernels/kernels.h"
#include "kernels/broadcast.h"
#include "engine/fixedpoint.h"
#include "engine/quant.h"
#include "engine/schema.h"

#if TFLM_KERNEL_DIV

// DivOptions fields

enum { DIV_FLOAT32, DIV_INT32, DIV_INT8 };

// Leading bits equal to the sign bit, not counting the sign bit (31 for 0).
static int div_leading_sign_bits(int32_t x) {
    uint32_t u = x < 0 ? ~(uint32_t)x : (uint32_t)x;
    int n = 0;
    while (n < 31 && !(u & ((uint32_t)1 << (30 - n)))) {
        ++n;
    }
    return n;
}

// Rounding right shift as TFLM's reference computes it on x86-64 hosts, also
// for exponents of 32 and more (reached for small quotients): the mask keeps
// all 32 bits and the shift count wraps modulo 32.
static int32_t div_rounding_shift(int32_t x, int exponent) {
    if (exponent <= 31) {
        return tflm_rounding_divide_by_pot(x, exponent);
    }
    int32_t threshold = x < 0 ? 0 : -1;
    int32_t shifted = x >> (exponent & 31);
    return shifted + (x > threshold ? 1 : 0);
}

static inline int32_t div_quantized(const tflm_arith_data_t *d, int32_t x, int32_t y) {
    int32_t num = d->off.in1 + x;
    int32_t den = d->off.in2 + y;
    if (den < 0) {
        // The reciprocal needs a positive divisor.
        num = -num;
        den = -den;
    }
    if (den == 0) {
        // TFLM leaves division by zero undefined; give the saturated sign.
        int32_t r = num == 0 ? d->off.out : (num > 0 ? d->act_max.i : d->act_min.i);
        return tflm_clamp(r, d->act_min.i, d->act_max.i);
    }
    int recip_shift;
    int32_t recip = tflm_fp_get_reciprocal(den, 31, &recip_shift);
    int headroom = div_leading_sign_bits(num);
    int32_t quotient = tflm_srdhm((int32_t)((uint32_t)num << headroom), recip);
    int total_shift = d->shift - recip_shift - headroom;
    int32_t r = div_rounding_shift(tflm_srdhm(quotient, d->multiplier), -total_shift);
    return tflm_clamp(tflm_wrap_add(r, d->off.out), d->act_min.i, d->act_max.i);
}

// The element operations (ctx: the kernel data).
static float div_f32(const void *ctx, float a, float b) {
    const tflm_arith_data_t *d = ctx;
    return tflm_clampf(a / b, d->act_min.f, d->act_max.f);
}
static int32_t div_i32(const void *ctx, int32_t a, int32_t b) {
    const tflm_arith_data_t *d = ctx;
    // Division by zero traps in TFLM: 0 here. INT32_MIN / -1 wraps.
    int32_t q = b == 0 ? 0 : (b == -1 ? (int32_t)(0u - (uint32_t)a) : a / b);
    return tflm_clamp(q, d->act_min.i, d->act_max.i);
}
static int8_t div_q8(const void *ctx, int8_t a, int8_t b) {
    return (int8_t)div_quantized(ctx, a, b);
}

// Output types, in the order of the kinds above.
static const uint8_t div_types[] = { TFLM_FLOAT32, TFLM_INT32, TFLM_INT8 };

tflm_status_t tflm_div_prepare(tflm_prepare_t *p) {
    tflm_arith_t a;
    tflm_status_t st = tflm_arith_prepare(p, "DIV", div_types, sizeof(div_types), TFLM_OPT_DIV_FUSED_ACTIVATION_FUNCTION,
        &a);
    if (st) {
        return st;
    }
    if (a.kind == DIV_INT32 && (a.in1.n_scales != 0 || a.in2.n_scales != 0)) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "quantized int32 DIV is not supported");
    }
    int32_t multiplier = 0, shift = 0;
    if (a.quantized) {
        // In float, as TFLM computes it.
        float real = a.in1.scale / (a.in2.scale * a.out.scale);
        if ((st = tflm_prep_multiplier(p, (double)real, 31, &multiplier, &shift))) {
            return st;
        }
        // Beyond these the reference's shifts leave the range it defines.
        if (shift > 22 || shift < -25) {
            return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "DIV scale ratio out of the supported range");
        }
    }
    tflm_arith_data_t *d = tflm_arith_alloc(p, &a);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->multiplier = multiplier; // 0 unless quantized, as the zeroed data
    d->shift = (int8_t)shift;
    return TFLM_OK;
}

tflm_status_t tflm_div_eval(tflm_eval_t *e) {
    const tflm_arith_data_t *d = e->data;
    switch (d->kind) {
        case DIV_FLOAT32:
            tflm_bcast_float32(d->plan, e->in[0], e->in[1], e->out[0], div_f32, d);
            break;
        case DIV_INT32:
            tflm_bcast_int32(d->plan, e->in[0], e->in[1], e->out[0], div_i32, d);
            break;
        default:
            tflm_bcast_int8(d->plan, e->in[0], e->in[1], e->out[0], div_q8, d);
            break;
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_DIV
