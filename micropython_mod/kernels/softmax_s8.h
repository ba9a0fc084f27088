// The int8 softmax's fixed-point steps with its formats folded in: exp() of
// a difference in Q5.26 and the reciprocal of a sum of exps in Q12.19,
// bit-exact with engine/fixedpoint.c's tflm_fp_exp_on_negative_values(a, 5)
// and tflm_fp_get_reciprocal(x, 12, ...). Those take any format and call out
// for every product (the engine is built for size); here each product is one
// 64-bit multiply inlined, none of them can saturate, and the shifts are
// constants. tests/test_speed_paths.py checks both against the engine's.
#ifndef TFLM_KERNELS_SOFTMAX_S8_H
#define TFLM_KERNELS_SOFTMAX_S8_H

#include "engine/quant.h"
#include "kernels/arch.h"

// a * b / 2^31 rounded half up: tflm_srdhm for any pair but INT32_MIN twice
// (the one product that saturates).
static inline int32_t tflm_sm_mul(int32_t a, int32_t b) {
#if TFLM_KERNEL_ARCH == TFLM_ARCH_V6M
    // No 32x32->64 multiply on Armv6-M (GCC calls __aeabi_lmul): four 16-bit
    // products, with a = ah * 2^16 + al and b = bh * 2^16 + bl (al, bl
    // unsigned). Each partial sum below stays within 32 bits: |al * bh|,
    // |ah * bl| <= 65535 * 32768, plus at most 65535 + 2^14.
    const uint32_t al = (uint32_t)a & 0xffffu, bl = (uint32_t)b & 0xffffu;
    const int32_t ah = a >> 16, bh = b >> 16;
    // Bits 16 and up of al * b's low part, with the rounding 2^30 (bit 14 of them).
    const int32_t z = (int32_t)al * bh + (int32_t)((al * bl) >> 16) + 0x4000;
    const int32_t y = ah * (int32_t)bl + (z & 0xffff);
    // The product's high word (modulo 2^32), then bits 31..62 of the whole.
    const uint32_t hi = (uint32_t)(ah * bh) + (uint32_t)(y >> 16) + (uint32_t)(z >> 16);
    return (int32_t)((hi << 1) | (((uint32_t)y >> 15) & 1u));
#else
    return (int32_t)(((int64_t)a * b + ((int64_t)1 << 30)) >> 31);
#endif
}

// tflm_srdhm through tflm_sm_mul (Armv6-M's product without a call).
static inline int32_t tflm_sm_srdhm(int32_t a, int32_t b) {
    return a == INT32_MIN && b == INT32_MIN ? INT32_MAX : tflm_sm_mul(a, b);
}

// The same for |a| < 2^30, where 2a fits: (2a * b + 2^31) / 2^32 is one
// SMMULR on the cores with DSP.
static inline int32_t tflm_sm_mul_small(int32_t a, int32_t b) {
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP && defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
    int32_t r;
    __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a * 2), "r"(b));
    return r;
#else
    return tflm_sm_mul(a, b);
#endif
}

static inline int32_t tflm_sm_add(int32_t a, int32_t b) {
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

// exp(a) in Q0 for a <= 0 in Q5.26. a = -n/4 + m with m in [-1/4, 0):
// exp(m) from gemmlowp's polynomial around -1/8, then a factor exp(-2^k)
// for each bit set in the whole quarters n.
static inline int32_t tflm_sm_exp_q5(int32_t a) {
    const int32_t m = (int32_t)((uint32_t)a & 0xffffffu) - (1 << 24);
    // m in Q0 (a shift by 5 that cannot saturate), plus 1/8: in [-1/8, 1/8).
    const int32_t x = (int32_t)((uint32_t)m << 5) + (1 << 28);
    const int32_t x2 = tflm_sm_mul_small(x, x);
    const int32_t x3 = tflm_sm_mul_small(x, x2);
    const int32_t x4 = tflm_sm_mul_small(x2, x2);
    // x4 / 4 and the sum / 2 rounded half away from zero (x4 >= 0).
    const int32_t x4_over_4 = (x4 + 2) >> 2;
    const int32_t sum = tflm_sm_add(tflm_sm_mul_small(tflm_sm_add(x4_over_4, x3), 715827883), x2); // 1/3
    const int32_t poly = (int32_t)(((int64_t)sum + (sum >= 0)) >> 1);
    const int32_t exp_m1_8 = 1895147668; // exp(-1/8)
    int32_t r = tflm_sm_add(exp_m1_8, tflm_sm_mul_small(tflm_sm_add(x, poly), exp_m1_8));
    const uint32_t n = (uint32_t)m - (uint32_t)a;
    // exp(-1/4) and exp(-1/2) are 2^30 or more: the 64-bit form.
    if (n & (1u << 24)) {
        r = tflm_sm_mul(r, 1672461947);
    }
    if (n & (1u << 25)) {
        r = tflm_sm_mul(r, 1302514674);
    }
    if (n & (1u << 26)) {
        r = tflm_sm_mul_small(790015084, r);
    }
    if (n & (1u << 27)) {
        r = tflm_sm_mul_small(290630308, r);
    }
    if (n & (1u << 28)) {
        r = tflm_sm_mul_small(39332535, r);
    }
    if (n & (1u << 29)) {
        r = tflm_sm_mul_small(720401, r);
    }
    if (n & (1u << 30)) {
        r = tflm_sm_mul_small(242, r);
    }
    return a == 0 ? INT32_MAX : r;
}

// x * 2^shift saturated (shift 1 or 2, Q2 to Q0 and Q4 to Q2).
static inline int32_t tflm_sm_sat_shl(int32_t x, int shift) {
    const int32_t limit = (int32_t)((1u << (31 - shift)) - 1u);
    if (x > limit) {
        return INT32_MAX;
    }
    if (x < -limit) {
        return INT32_MIN;
    }
    return (int32_t)((uint32_t)x << shift);
}

// 1 / x for a sum x > 0 in Q12.19: a Q0 value v and the shift, 1/x = v *
// 2^-bits_over_unit. x is scaled into [1, 2); 1 / (1 + f) comes from three
// Newton-Raphson steps on (1 + f) / 2, gemmlowp's.
static inline int32_t tflm_sm_reciprocal_q12(int32_t x, int *bits_over_unit) {
    const uint32_t ux = (uint32_t)x;
    const int headroom_plus_one = ux ? __builtin_clz(ux) : 32;
    *bits_over_unit = 12 - headroom_plus_one;
    const uint32_t shifted = headroom_plus_one < 32 ? ux << headroom_plus_one : ux;
    // (f + 1) / 2 with f = shifted - 1 in Q0, rounded half away from zero.
    const int64_t twice = (int64_t)(int32_t)(shifted - (1u << 31)) + INT32_MAX;
    const int32_t half_denominator = (int32_t)((twice + (twice >= 0 ? 1 : -1)) / 2);
    int32_t y = tflm_sm_add(1515870810, tflm_sm_srdhm(half_denominator, -1010580540)); // 48/17, -32/17 in Q2
    for (int i = 0; i < 3; ++i) {
        const int32_t one_minus = (int32_t)((uint32_t)(1 << 29) - (uint32_t)tflm_sm_srdhm(half_denominator, y));
        y = tflm_sm_add(y, tflm_sm_sat_shl(tflm_sm_srdhm(y, one_minus), 2));
    }
    return tflm_sm_sat_shl(y, 1);
}

#endif // TFLM_KERNELS_SOFTMAX_S8_H
