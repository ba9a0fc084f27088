// tanhf and expm1f, glibc 2.36's (fdlibm's) (fmath.h; fmath_impl.h: what the
// fmath files share).
#include "fmath_impl.h"

// -- tanhf ----------------------------------------------------------------

// glibc 2.36's tanhf is fdlibm's: built on expm1f, all in float arithmetic.
// These follow the same operations in the same order.

#define EXPM1F_LN2_HI (0x1.62e300p-1f)     // ln2 with its low bits cleared
#define EXPM1F_LN2_LO (0x1.2fefa2p-17f)
#define EXPM1F_INV_LN2 (0x1.715476p+0f)
#define EXPM1F_Q1 (-0x1.111112p-5f)
#define EXPM1F_Q2 (0x1.a01a02p-10f)
#define EXPM1F_Q3 (-0x1.4ce19ap-14f)
#define EXPM1F_Q4 (0x1.0cfca8p-18f)
#define EXPM1F_Q5 (-0x1.afdb76p-23f)

// Adds k to the exponent of y (never leaves the normal range here).
static inline float expm1f_scale(float y, int32_t k) {
    return tflm_f32_from(tflm_f32_bits(y) + ((uint32_t)k << 23)); // wraps like the signed sum
}

float tflm_expm1f(float x) {
    uint32_t hx = tflm_f32_bits(x);
    const bool negative = (hx & 0x80000000u) != 0;
    hx &= 0x7fffffffu;
    if (hx >= 0x4195b844u) { // |x| >= 27 ln2
        if (hx >= 0x42b17218u) { // |x| >= 88.72
            if (hx > 0x7f800000u) {
                return x + x;
            }
            if (hx == 0x7f800000u) {
                return negative ? -1.0f : x;
            }
            if (!negative) {
                return tflm_f32_from(0x7f800000u); // overflow
            }
        }
        if (negative) {
            return 1.0e-30f - 1.0f;
        }
    }
    float hi, lo, c = 0.0f;
    int32_t k;
    if (hx > 0x3eb17218u) { // |x| > ln2 / 2: reduce by k ln2
        if (hx < 0x3f851592u) { // |x| < 3 ln2 / 2
            if (!negative) {
                hi = x - EXPM1F_LN2_HI;
                lo = EXPM1F_LN2_LO;
                k = 1;
            } else {
                hi = x + EXPM1F_LN2_HI;
                lo = -EXPM1F_LN2_LO;
                k = -1;
            }
        } else {
            k = (int32_t)(EXPM1F_INV_LN2 * x + (negative ? -0.5f : 0.5f));
            float t = (float)k;
            hi = x - t * EXPM1F_LN2_HI; // exact
            lo = t * EXPM1F_LN2_LO;
        }
        x = hi - lo;
        c = (hi - x) - lo;
    } else if (hx < 0x33000000u) { // |x| < 2^-25
        return x;
    } else {
        k = 0;
    }
    const float hfx = 0.5f * x;
    const float hxs = x * hfx;
    const float r1 = 1.0f + hxs * (EXPM1F_Q1 + hxs * (EXPM1F_Q2 + hxs * (EXPM1F_Q3 + hxs * (EXPM1F_Q4 + hxs * EXPM1F_Q5))));
    float t = 3.0f - r1 * hfx;
    float e = hxs * ((r1 - t) / (6.0f - x * t));
    if (k == 0) {
        return x - (x * e - hxs);
    }
    e = (x * (e - c) - c);
    e -= hxs;
    if (k == -1) {
        return 0.5f * (x - e) - 0.5f;
    }
    if (k == 1) {
        if (x < -0.25f) {
            return -2.0f * (e - (x + 0.5f));
        }
        return 1.0f + 2.0f * (x - e);
    }
    float y;
    if (k <= -2 || k > 56) {
        y = 1.0f - (e - x);
        return expm1f_scale(y, k) - 1.0f;
    }
    if (k < 23) {
        t = tflm_f32_from(0x3f800000u - (0x1000000u >> k)); // 1 - 2^-k
        y = t - (e - x);
    } else {
        t = tflm_f32_from((uint32_t)(0x7f - k) << 23); // 2^-k
        y = x - (e + t);
        y += 1.0f;
    }
    return expm1f_scale(y, k);
}

float tflm_tanhf(float x) {
    uint32_t jx = tflm_f32_bits(x);
    uint32_t ix = jx & 0x7fffffffu;
    const bool negative = (jx & 0x80000000u) != 0;
    if (ix >= 0x7f800000u) { // inf or nan
        return negative ? 1.0f / x - 1.0f : 1.0f / x + 1.0f;
    }
    float z;
    if (ix < 0x41b00000u) { // |x| < 22
        if (ix == 0) {
            return x; // keeps the sign of zero
        }
        if (ix < 0x24000000u) { // |x| < 2^-55
            return x * (1.0f + x);
        }
        float ax = tflm_f32_from(ix);
        if (ix >= 0x3f800000u) { // |x| >= 1
            float t = tflm_expm1f(2.0f * ax);
            z = 1.0f - 2.0f / (t + 2.0f);
        } else {
            float t = tflm_expm1f(-2.0f * ax);
            z = -t / (t + 2.0f);
        }
    } else {
        z = 1.0f - 1.0e-30f;
    }
    return negative ? -z : z;
}
