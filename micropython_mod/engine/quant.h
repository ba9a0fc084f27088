// Fixed-point and rounding arithmetic, bit-exact with TFLM's reference kernels.
// frexp/round are implemented here because bare-metal MicroPython builds link
// no double-precision libm, and so every target rounds alike.
#ifndef TFLM_ENGINE_QUANT_H
#define TFLM_ENGINE_QUANT_H

#include "common.h"

double tflm_frexp(double x, int *exponent);
double tflm_round(double x);   // half away from zero, like C's round()
float tflm_roundf(float x);

// Splits a real multiplier into a Q31 fixed-point multiplier and a power of
// two. False (and a zero multiplier) when it is negative, not finite or 2^31
// or more: no model's scales give that, only broken ones.
bool tflm_quantize_multiplier(double real, int32_t *multiplier, int32_t *shift);

// Saturating rounding doubling high multiply: round(a * b / 2^31), the one
// overflowing case (INT32_MIN squared) saturated. Inline: kernels call it per
// output value. Adding 2^30 and flooring gives the reference's rounding (its
// nudge of 1 - 2^30 for negative products, then truncation toward zero, is
// the same floor), so there is no branch on the sign.
static inline int32_t tflm_srdhm(int32_t a, int32_t b) {
    int64_t r = ((int64_t)a * (int64_t)b + ((int64_t)1 << 30)) >> 31;
    // Only INT32_MIN squared gives more than INT32_MAX (2^31).
    return r > INT32_MAX ? INT32_MAX : (int32_t)r;
}

// x / 2^exponent rounded half away from zero (0 <= exponent <= 31): add half
// the divisor (one less below zero, so that ties go down there) and floor.
// Same results as the reference's remainder-and-threshold form, fewer steps.
static inline int32_t tflm_rounding_divide_by_pot(int32_t x, int32_t exponent) {
    int32_t half = (int32_t)(((uint32_t)1 << exponent) >> 1);
    int32_t nudge = (x < 0 && half > 0) ? half - 1 : half;
    return (int32_t)(((int64_t)x + nudge) >> exponent);
}

// tflm_mul_by_quantized_mul in two parts, for loops that rescale many values
// alike: what depends on the multiplier and shift only, worked out once, and
// the part per value.
typedef struct {
    int32_t multiplier;
    uint32_t scale;      // 2^shift for a positive shift, else 1
    int32_t right;       // -shift for a negative shift, else 0
    int32_t nudge_pos;   // rounding of the right shift, for values >= 0
    int32_t nudge_neg;   // and for values < 0 (ties away from zero)
} tflm_requant_t;

static inline tflm_requant_t tflm_requant_init(int32_t multiplier, int32_t shift) {
    tflm_requant_t r;
    r.multiplier = multiplier;
    r.scale = (uint32_t)1 << (shift > 0 ? shift : 0);
    r.right = shift > 0 ? 0 : -shift;
    r.nudge_pos = (int32_t)(((uint32_t)1 << r.right) >> 1);
    r.nudge_neg = r.nudge_pos > 0 ? r.nudge_pos - 1 : 0;
    return r;
}

// x * multiplier * 2^shift, rounded as TFLM does (double rounding).
static inline int32_t tflm_requant(const tflm_requant_t *r, int32_t x) {
    // Wrapping multiply, as the reference does on two's complement targets.
    int32_t high = tflm_srdhm((int32_t)((uint32_t)x * r->scale), r->multiplier);
    return (int32_t)(((int64_t)high + (high < 0 ? r->nudge_neg : r->nudge_pos)) >> r->right);
}

// The same in one call.
static inline int32_t tflm_mul_by_quantized_mul(int32_t x, int32_t multiplier, int32_t shift) {
    tflm_requant_t r = tflm_requant_init(multiplier, shift);
    return tflm_requant(&r, x);
}

// An 8-bit value less its zero point (|v| <= 256), shifted left by
// `left_shift` (at most 15) and rescaled by a multiplier below one as
// TFLM's MultiplyByQuantizedMultiplierSmallerThanOneExp does, in 32-bit
// arithmetic: with m = mh * 2^16 + ml, the doubling high multiply of
// v * 2^L by m is (v * mh + ((v * ml + 2^(30 - L)) >> 16)) >> (15 - L)
// exactly (no 64-bit product: a library call on the Cortex-M0).
typedef struct {
    int32_t mh, ml;
    int32_t round;      // 2^(30 - left_shift)
    int32_t high_shift; // 15 - left_shift
    int32_t right;      // the multiplier's right shift
    int32_t nudge_pos, nudge_neg;
} tflm_rescale8_t;

static inline tflm_rescale8_t tflm_rescale8_init(int32_t multiplier, int32_t shift, int32_t left_shift) {
    tflm_rescale8_t r;
    r.mh = multiplier >> 16;
    r.ml = multiplier & 0xffff;
    r.round = (int32_t)1 << (30 - left_shift);
    r.high_shift = 15 - left_shift;
    r.right = -shift;
    r.nudge_pos = (int32_t)(((uint32_t)1 << r.right) >> 1);
    r.nudge_neg = r.nudge_pos > 0 ? r.nudge_pos - 1 : 0;
    return r;
}

static inline int32_t tflm_rescale8(const tflm_rescale8_t *r, int32_t v) {
    const int32_t high = (v * r->mh + ((v * r->ml + r->round) >> 16)) >> r->high_shift;
    return (high + (high < 0 ? r->nudge_neg : r->nudge_pos)) >> r->right;
}

// The 64-bit-input variant TFLM uses for int16 activations.
static inline int32_t tflm_mul_by_quantized_mul64(int64_t x, int32_t multiplier, int32_t shift) {
    int32_t reduced = multiplier < 0x7fff0000 ? ((multiplier + (1 << 15)) >> 16) : 0x7fff;
    int32_t total_shift = 15 - shift;
    // The product and the rounding wrap as on the reference's targets (a bias
    // near 2^63 can take them past int64), in uint64_t: no undefined behaviour.
    const uint64_t round = (uint64_t)1 << (total_shift - 1);
    const int64_t result = (int64_t)((uint64_t)x * (uint64_t)(int64_t)reduced + round);
    return (int32_t)(result >> total_shift);
}

// float -> int32 as x86-64 converts (what TFLM's reference gives on the host
// its Python package runs on): NaN and out-of-range values become INT32_MIN.
static inline int32_t tflm_float_to_int32(float x) {
    if (!(x >= -2147483648.0f && x < 2147483648.0f)) {
        return INT32_MIN;
    }
    return (int32_t)x;
}

// Wrapping int32 add (the reference's overflow behaviour, without UB).
static inline int32_t tflm_wrap_add(int32_t a, int32_t b) {
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

// Clamp range of a fused activation for a quantized output of the type
// [qmin, qmax], as the reference computes it; false where the reference
// refuses it (a bound beyond int32 at the output's scale).
bool tflm_activation_range_quantized(unsigned activation, float scale, int32_t zero_point,
    int32_t qmin, int32_t qmax, int32_t *act_min, int32_t *act_max);
// Clamp range of a fused activation for a float output.
void tflm_activation_range_float(unsigned activation, float *act_min, float *act_max);

static inline float tflm_clampf(float x, float lo, float hi) {
    // Same comparisons as std::min(std::max(x, lo), hi): NaN passes through.
    x = (x < lo) ? lo : x;
    return (hi < x) ? hi : x;
}

static inline int32_t tflm_clamp(int32_t x, int32_t lo, int32_t hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}

// The values of an integer tensor type; false for other types.
static inline bool tflm_int_range(unsigned type, int32_t *lo, int32_t *hi) {
    switch (type) {
        case TFLM_INT8:
            *lo = INT8_MIN, *hi = INT8_MAX;
            return true;
        case TFLM_UINT8:
            *lo = 0, *hi = UINT8_MAX;
            return true;
        case TFLM_INT16:
            *lo = INT16_MIN, *hi = INT16_MAX;
            return true;
        case TFLM_INT32:
            *lo = INT32_MIN, *hi = INT32_MAX;
            return true;
        default:
            return false;
    }
}

// One value as TFLM's QUANTIZE (AffineQuantize) gives it: x / scale in
// float32, rounded half away from zero, plus the zero point, clamped to
// [qmin, qmax]. The QUANTIZE kernel and the binding's predict() share it.
static inline int32_t tflm_quantize_one(float x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax) {
    return tflm_clamp(tflm_wrap_add(tflm_float_to_int32(tflm_roundf(x / scale)), zero_point), qmin, qmax);
}

// One value as TFLM's DEQUANTIZE gives it: scale * (q - zero point) in
// double, then float.
static inline float tflm_dequantize_one(int32_t q, float scale, int32_t zero_point) {
    return (float)((double)scale * (double)((int64_t)q - zero_point));
}

#endif // TFLM_ENGINE_QUANT_H
