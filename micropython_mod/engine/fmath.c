// Float functions with the results of the host's glibc (2.36, x86-64 with
// FMA), from + - * / and bit manipulation only, so every target computes the
// same bits: no libm, no long double, no FMA instruction (an exact FMA is
// emulated where glibc's code fuses a multiply and an add). This file:
// floor, fmodf, sqrtf and sqrt, the NaNs x86 gives; the others one family a
// file (fmath_expf.c, fmath_exp.c, fmath_tanh.c, fmath_log.c, fmath_trig.c).
#include "fmath_impl.h"

double tflm_floor(double x) {
    uint64_t u = f64_bits(x);
    if ((u & ~((uint64_t)1 << 63)) > ((uint64_t)0x7ff << 52)) {
        return f64_from(u | ((uint64_t)1 << 51)); // NaN, quieted
    }
    double ax = x < 0 ? -x : x;
    if (!(ax < 4503599627370496.0) || x == 0.0) {
        return x; // 2^52 and above are integral; also infinities and signed zeros
    }
    double t = (double)(int64_t)x; // truncation, exact
    return t > x ? t - 1.0 : t;
}

#define F32_QUIET (0x00400000u)
#define F32_SIGN (0x80000000u)
#define F32_DEFAULT_NAN (0xffc00000u)

float tflm_x86_nan(float x, float y) {
    return tflm_isnanf(x) ? tflm_nan_quiet(x) : tflm_isnanf(y) ? tflm_nan_quiet(y) : tflm_nan_default();
}

// A finite non-zero magnitude as m * 2^(e - 150), m below 2^24.
static inline uint32_t f32_mantissa(uint32_t a, int32_t *e) {
    uint32_t ex = a >> 23;
    *e = ex ? (int32_t)ex : 1;
    return ex ? (a & 0x7fffffu) | 0x800000u : a;
}

float tflm_fmodf(float x, float y) {
    uint32_t ux = tflm_f32_bits(x), uy = tflm_f32_bits(y);
    uint32_t ax = ux & ~F32_SIGN, ay = uy & ~F32_SIGN;
    if (tflm_isnan_bits(ux) || tflm_isnan_bits(uy)) {
        if (!tflm_isnan_bits(uy)) {
            return tflm_f32_from(ux | F32_QUIET);
        }
        if (!tflm_isnan_bits(ux)) {
            return tflm_f32_from(uy | F32_QUIET);
        }
        uint32_t qx = ux | F32_QUIET, qy = uy | F32_QUIET;
        uint32_t sx = qx & 0x7fffffu, sy = qy & 0x7fffffu;
        if (sx != sy) {
            return tflm_f32_from(sx > sy ? qx : qy);
        }
        return tflm_f32_from((qx & F32_SIGN) ? qy : qx);
    }
    if (ax == 0x7f800000u || ay == 0) {
        return tflm_f32_from(F32_DEFAULT_NAN);
    }
    if (ax < ay || ay == 0x7f800000u) {
        return x; // |x| < |y| (x zero too), or y infinite
    }
    uint32_t sign = ux & F32_SIGN;
    int32_t ex, ey;
    uint32_t mx = f32_mantissa(ax, &ex), my = f32_mantissa(ay, &ey);
    // r = mx * 2^(ex - ey) mod my, eight bits at a time (r stays below 2^24).
    uint32_t r = mx % my;
    for (int32_t d = ex - ey; d > 0 && r != 0;) {
        int32_t k = d < 8 ? d : 8;
        r = (r << k) % my;
        d -= k;
    }
    if (r == 0) {
        return tflm_f32_from(sign);
    }
    // r * 2^(ey - 150) is exact: normalize it, or keep it subnormal.
    int32_t e = ey;
    while (r < 0x800000u && e > 1) {
        r <<= 1;
        --e;
    }
    uint32_t bits = r >= 0x800000u ? ((uint32_t)e << 23) | (r & 0x7fffffu) : r;
    return tflm_f32_from(sign | bits);
}

// -- NaN results ----------------------------------------------------------

// What x86-64 (TFLM's reference host) gives where a result is not a number:
// a NaN operand comes back quieted, with its sign and payload; an invalid
// operation (0/0, inf - inf, sqrt(-1)) gives the "default NaN", whose sign
// bit is set there (ARM's is positive). Built from bits, so every target
// gives the same.
float tflm_nan_quiet(float x) {
    return tflm_f32_from(tflm_f32_bits(x) | F32_QUIET);
}

float tflm_nan_default(void) {
    return tflm_f32_from(F32_DEFAULT_NAN);
}

// -- sqrtf ------------------------------------------------------------------

// Correctly rounded, as the SSE instruction glibc's sqrtf is: the root of
// the significand's integer, one bit more than needed, then rounded with the
// remainder as sticky bit (a root is never exactly halfway).
float tflm_sqrtf(float x) {
    uint32_t ix = tflm_f32_bits(x);
    if (ix >= 0x7f800000u) { // +inf, nan, negative (and -0)
        if ((ix & 0x7fffffffu) > 0x7f800000u) {
            return tflm_nan_quiet(x);
        }
        if (ix == 0x7f800000u || ix == 0x80000000u) {
            return x;
        }
        return tflm_nan_default();
    }
    if (ix == 0) {
        return x;
    }
    // x = m * 2^e with m in [2^23, 2^24).
    int32_t e = (int32_t)(ix >> 23);
    uint32_t m = ix & 0x7fffffu;
    if (e == 0) { // subnormal
        int32_t s = __builtin_clz(m) - 8;
        m <<= s;
        e = 1 - s;
    } else {
        m |= 0x800000u;
    }
    e -= 150;
    // a = m * 2^k in [2^48, 2^50) with e - k even: its root has 25 bits.
    // The remainder stays below 2^26, so 32-bit words do (a in two).
    int32_t k = 26 - (e & 1);
    const uint32_t a_hi = m >> (32 - k), a_lo = m << k;
    int32_t half = (e - k) / 2; // exact
    uint32_t root = 0, rem = 0;
    for (int32_t i = 48; i >= 0; i -= 2) {
        uint32_t pair = i >= 32 ? (a_hi >> (i - 32)) & 3u : (a_lo >> i) & 3u;
        rem = (rem << 2) | pair;
        uint32_t trial = (root << 2) | 1u;
        root <<= 1;
        if (rem >= trial) {
            rem -= trial;
            root |= 1u;
        }
    }
    // root in [2^24, 2^25): 24 bits and a rounding bit.
    uint32_t q = (root >> 1) + (root & 1u); // never a tie
    int32_t be = half + 1 + 127 + 23;
    return tflm_f32_from(((uint32_t)be << 23) + (q - 0x800000u));
}

// -- sqrt (double) --------------------------------------------------------------

// Correctly rounded, as x86's sqrtsd (for prepare()): the same digit-by-digit
// root as tflm_sqrtf, over a 108-bit radicand held in two words.
double tflm_sqrt(double x) {
    uint64_t ix = f64_bits(x);
    if (ix >= 0x7ff0000000000000u) { // +inf, nan, negative (and -0)
        if ((ix & 0x7fffffffffffffffu) > 0x7ff0000000000000u) {
            return f64_from(ix | 0x0008000000000000u);
        }
        if (ix == 0x7ff0000000000000u || ix == 0x8000000000000000u) {
            return x;
        }
        return f64_from(0xfff8000000000000u);
    }
    if (ix == 0) {
        return x;
    }
    int32_t e = (int32_t)(ix >> 52);
    uint64_t m = ix & 0xfffffffffffffu;
    if (e == 0) {
        int32_t s = __builtin_clzll(m) - 11;
        m <<= s;
        e = 1 - s;
    } else {
        m |= (uint64_t)1 << 52;
    }
    e -= 1075; // x = m * 2^e, m in [2^52, 2^53)
    // a = m * 2^k in [2^106, 2^108) with e - k even: its root has 54 bits.
    int32_t k = 54 + (e & 1);
    uint64_t a_hi = m >> (64 - k), a_lo = m << k;
    int32_t half = (e - k) / 2;
    uint64_t root = 0, rem = 0;
    for (int32_t i = 106; i >= 0; i -= 2) {
        uint64_t pair = i >= 64 ? (a_hi >> (i - 64)) & 3u : (a_lo >> i) & 3u;
        rem = (rem << 2) | pair;
        uint64_t trial = (root << 2) | 1u;
        root <<= 1;
        if (rem >= trial) {
            rem -= trial;
            root |= 1u;
        }
    }
    uint64_t q = (root >> 1) + (root & 1u); // never a tie
    int64_t be = half + 1 + 1023 + 52;
    return f64_from(((uint64_t)be << 52) + (q - ((uint64_t)1 << 52)));
}
