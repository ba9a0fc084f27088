// Fixed-point and rounding arithmetic (see quant.h).
#include <float.h>

#include "quant.h"
#include "schema.h"

typedef union {
    double d;
    uint64_t u;
} tflm_f64_bits_t;

double tflm_frexp(double x, int *exponent) {
    tflm_f64_bits_t b = { .d = x };
    int e = (int)((b.u >> 52) & 0x7ff);
    *exponent = 0;
    if (e == 0x7ff || x == 0.0) {
        return x; // inf, nan, zero
    }
    if (e == 0) {
        // Subnormal: scale into the normal range first.
        b.d = x * 18014398509481984.0; // 2^54
        e = (int)((b.u >> 52) & 0x7ff) - 54;
    }
    *exponent = e - 1022;
    b.u = (b.u & ~((uint64_t)0x7ff << 52)) | ((uint64_t)1022 << 52);
    return b.d;
}

double tflm_round(double x) {
    double ax = x < 0 ? -x : x;
    if (!(ax < 4503599627370496.0)) {
        return x; // 2^52 and above are integral; also inf and nan
    }
    double t = (double)(int64_t)x; // truncation
    double frac = x - t;           // exact
    if (frac >= 0.5) {
        t += 1.0;
    } else if (frac <= -0.5) {
        t -= 1.0;
    }
    return t;
}

float tflm_roundf(float x) {
    float ax = x < 0 ? -x : x;
    if (!(ax < 8388608.0f)) {
        return x; // 2^23 and above are integral
    }
    float t = (float)(int32_t)x;
    float frac = x - t;
    if (frac >= 0.5f) {
        t += 1.0f;
    } else if (frac <= -0.5f) {
        t -= 1.0f;
    }
    return t;
}

bool tflm_quantize_multiplier(double real, int32_t *multiplier, int32_t *shift) {
    *multiplier = 0;
    *shift = 0;
    if (real == 0.0) {
        return true;
    }
    if (!(real > 0.0 && real < 2147483648.0)) {
        return false;
    }
    int e;
    double q = tflm_frexp(real, &e);
    int64_t q_fixed = (int64_t)tflm_round(q * 2147483648.0);
    if (q_fixed == ((int64_t)1 << 31)) {
        q_fixed /= 2;
        ++e;
    }
    // All bits would be shifted out: TFLM uses a zero multiplier instead.
    if (e < -31) {
        e = 0;
        q_fixed = 0;
    }
    if (e > 31) {
        return false;
    }
    *multiplier = (int32_t)q_fixed;
    *shift = e;
    return true;
}

// zero_point + round(f / scale) as the reference sums it (TFLM's Quantize
// in kernel_util): false where round(f / scale) lies outside [-2^31, 2^31]
// or is not a number, which the reference refuses. Exactly 2^31 passes its
// check (float(INT32_MAX) is 2^31) and converts to INT32_MIN, as x86-64
// converts (docs/arithmetic.md, float to int); the sum wraps.
static bool quantize_with(float f, float scale, int32_t zero_point, int32_t *q) {
    const float t = tflm_roundf(f / scale);
    if (!(t >= -2147483648.0f && t <= 2147483648.0f)) {
        return false;
    }
    *q = tflm_wrap_add(zero_point, tflm_float_to_int32(t));
    return true;
}

void tflm_activation_range_float(unsigned activation, float *act_min, float *act_max) {
    *act_min = -FLT_MAX;
    *act_max = FLT_MAX;
    switch (activation) {
        case TFLM_ACT_RELU:
            *act_min = 0.0f;
            break;
        case TFLM_ACT_RELU6:
            *act_min = 0.0f;
            *act_max = 6.0f;
            break;
        case TFLM_ACT_RELU_N1_TO_1:
            *act_min = -1.0f;
            *act_max = 1.0f;
            break;
        default:
            break;
    }
}

bool tflm_activation_range_quantized(unsigned activation, float scale, int32_t zero_point,
    int32_t qmin, int32_t qmax, int32_t *act_min, int32_t *act_max) {
    float lo, hi;
    int32_t q;
    tflm_activation_range_float(activation, &lo, &hi);
    // A side the activation leaves open (the float range's end) keeps the type's limit.
    *act_min = qmin;
    *act_max = qmax;
    if (lo > -FLT_MAX) {
        if (!quantize_with(lo, scale, zero_point, &q)) {
            return false;
        }
        *act_min = TFLM_MAX(qmin, q);
    }
    if (hi < FLT_MAX) {
        if (!quantize_with(hi, scale, zero_point, &q)) {
            return false;
        }
        *act_max = TFLM_MIN(qmax, q);
    }
    if (*act_min > *act_max) {
        // Crossed (a bound at 2^31, wrapped): the reference's clamp,
        // min(max(x, act_min), act_max), gives act_max whatever x is, stored
        // in the output's type (its low bits). Both bounds that value, so
        // that every kernel's clamp, in either order, gives it too.
        const uint32_t v = (uint32_t)*act_max;
        *act_min = *act_max = qmin == -128 ? (int32_t)(int8_t)(uint8_t)v
            : qmin == -32768 ? (int32_t)(int16_t)(uint16_t)v : qmin == 0 && qmax == 255 ? (int32_t)(v & 0xffu)
            : (int32_t)v;
    }
    return true;
}
