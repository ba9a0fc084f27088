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

// zero_point + round(f / scale), the reference's sum. Where a scale too
// small for the activation's bound puts it beyond int32 (a cast the C
// standard leaves undefined there, and a sum that overflows) it saturates:
// the bound then lies outside every type's range, as it does in real
// numbers. (Not a number, from a scale that is none: the zero point.)
static int32_t quantize_with(float f, float scale, int32_t zero_point) {
    const float q = tflm_roundf(f / scale);
    int64_t v = zero_point;
    if (q >= 2147483648.0f) {
        v += INT32_MAX;
    } else if (q <= -2147483648.0f) {
        v += INT32_MIN;
    } else if (q == q) {
        v += (int32_t)q;
    }
    return (int32_t)TFLM_MIN(TFLM_MAX(v, (int64_t)INT32_MIN), (int64_t)INT32_MAX);
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

void tflm_activation_range_quantized(unsigned activation, float scale, int32_t zero_point,
    int32_t qmin, int32_t qmax, int32_t *act_min, int32_t *act_max) {
    float lo, hi;
    tflm_activation_range_float(activation, &lo, &hi);
    // A side the activation leaves open (the float range's end) keeps the type's limit.
    *act_min = lo > -FLT_MAX ? TFLM_MAX(qmin, quantize_with(lo, scale, zero_point)) : qmin;
    *act_max = hi < FLT_MAX ? TFLM_MIN(qmax, quantize_with(hi, scale, zero_point)) : qmax;
}
