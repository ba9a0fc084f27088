// Float functions with the results of the host's glibc (2.36, x86-64 with
// FMA), from + - * / and bit manipulation only, so every target computes the
// same bits: no libm, no long double, no FMA instruction (an exact FMA is
// emulated where glibc's code fuses a multiply and an add).
#include "fmath.h"

static inline uint64_t f64_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof(u));
    return u;
}

static inline double f64_from(uint64_t u) {
    double d;
    memcpy(&d, &u, sizeof(d));
    return d;
}

// 2^(i/32) as a double-double: hi is the correctly rounded double, lo the rest.
static const double exp2_table[32][2] = {
    { 0x1.0000000000000p+0, 0x0.0p+0 },
    { 0x1.059b0d3158574p+0, 0x1.d73e2a475b465p-55 },
    { 0x1.0b5586cf9890fp+0, 0x1.8a62e4adc610bp-54 },
    { 0x1.11301d0125b51p+0, -0x1.6c51039449b3ap-54 },
    { 0x1.172b83c7d517bp+0, -0x1.19041b9d78a76p-55 },
    { 0x1.1d4873168b9aap+0, 0x1.e016e00a2643cp-54 },
    { 0x1.2387a6e756238p+0, 0x1.9b07eb6c70573p-54 },
    { 0x1.29e9df51fdee1p+0, 0x1.612e8afad1255p-55 },
    { 0x1.306fe0a31b715p+0, 0x1.6f46ad23182e4p-55 },
    { 0x1.371a7373aa9cbp+0, -0x1.63aeabf42eae2p-54 },
    { 0x1.3dea64c123422p+0, 0x1.ada0911f09ebcp-55 },
    { 0x1.44e086061892dp+0, 0x1.89b7a04ef80d0p-59 },
    { 0x1.4bfdad5362a27p+0, 0x1.d4397afec42e2p-56 },
    { 0x1.5342b569d4f82p+0, -0x1.07abe1db13cadp-55 },
    { 0x1.5ab07dd485429p+0, 0x1.6324c054647adp-54 },
    { 0x1.6247eb03a5585p+0, -0x1.383c17e40b497p-54 },
    { 0x1.6a09e667f3bcdp+0, -0x1.bdd3413b26456p-54 },
    { 0x1.71f75e8ec5f74p+0, -0x1.16e4786887a99p-55 },
    { 0x1.7a11473eb0187p+0, -0x1.41577ee04992fp-55 },
    { 0x1.82589994cce13p+0, -0x1.d4c1dd41532d8p-54 },
    { 0x1.8ace5422aa0dbp+0, 0x1.6e9f156864b27p-54 },
    { 0x1.93737b0cdc5e5p+0, -0x1.75fc781b57ebcp-57 },
    { 0x1.9c49182a3f090p+0, 0x1.c7c46b071f2bep-56 },
    { 0x1.a5503b23e255dp+0, -0x1.d2f6edb8d41e1p-54 },
    { 0x1.ae89f995ad3adp+0, 0x1.7a1cd345dcc81p-54 },
    { 0x1.b7f76f2fb5e47p+0, -0x1.5584f7e54ac3bp-56 },
    { 0x1.c199bdd85529cp+0, 0x1.11065895048ddp-55 },
    { 0x1.cb720dcef9069p+0, 0x1.503cbd1e949dbp-56 },
    { 0x1.d5818dcfba487p+0, 0x1.2ed02d75b3707p-55 },
    { 0x1.dfc97337b9b5fp+0, -0x1.1a5cd4f184b5cp-54 },
    { 0x1.ea4afa2a490dap+0, -0x1.e9c23179c2893p-54 },
    { 0x1.f50765b6e4540p+0, 0x1.9d3e12dd8a18bp-54 },
};

// -- exact arithmetic helpers ---------------------------------------------

// hi + lo == a + b exactly.
static inline double two_sum(double a, double b, double *lo) {
    double s = a + b;
    double bb = s - a;
    *lo = (a - (s - bb)) + (b - bb);
    return s;
}

// Veltkamp split: hi holds the top 26 bits, hi + lo == a.
static inline double split(double a, double *lo) {
    double t = a * 134217729.0; // 2^27 + 1
    double hi = t - (t - a);
    *lo = a - hi;
    return hi;
}

// hi + lo == a * b exactly (no overflow or underflow in our ranges).
static inline double two_prod(double a, double b, double *lo) {
    double p = a * b;
    double ah, al, bh, bl;
    ah = split(a, &al);
    bh = split(b, &bl);
    *lo = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    return p;
}

// a + b rounded to odd: when inexact, the neighbour with an odd last bit.
static inline double add_round_odd(double a, double b) {
    double err;
    double s = two_sum(a, b, &err);
    uint64_t u = f64_bits(s);
    if (err != 0.0 && (u & 1) == 0) {
        // Step one ulp toward the exact value.
        u = ((err > 0.0) == (s > 0.0)) ? u + 1 : u - 1;
        s = f64_from(u);
    }
    return s;
}

// a * b + c rounded once (Boldo and Melquiond's emulation with rounding to
// odd); exact for the normal-range operands glibc's expf gives it.
static double exact_fma(double a, double b, double c) {
    double pl;
    double ph = two_prod(a, b, &pl);
    double tl;
    double th = two_sum(c, ph, &tl);
    return th + add_round_odd(tl, pl);
}

// -- expf -----------------------------------------------------------------

// glibc's expf: x * 32/ln2 = k + r, |r| <= 1/2, exp(x) = 2^(k/32) * 2^(r/32)
// with a cubic for 2^(r/32), evaluated in double and rounded once to float.
#define EXPF_INV_LN2_N (0x1.71547652b82fep+5)
#define EXPF_SHIFT (0x1.8p+52)
#define EXPF_C0 (0x1.c6af84b912394p-5 / 32768.0)
#define EXPF_C1 (0x1.ebfce50fac4f3p-3 / 1024.0)
#define EXPF_C2 (0x1.62e42ff0c52d6p-1 / 32.0)

// 2^(k/32) for the integer k held in the low bits of kbits.
static inline double expf_scale(uint64_t kbits) {
    return f64_from(f64_bits(exp2_table[kbits % 32][0]) + ((kbits >> 5) << 52));
}

float tflm_expf_double(float x) {
    uint32_t ux = tflm_f32_bits(x);
    uint32_t top = (ux >> 20) & 0x7ff;
    if (top >= 0x42b) { // |x| >= 88, inf or nan
        if (ux == 0xff800000u) {
            return 0.0f;
        }
        if (top >= 0x7f8) {
            return x + x;
        }
        if (x > 0x1.62e42ep6f) {
            return tflm_f32_from(0x7f800000u);
        }
        if (x < -0x1.9fe368p6f) {
            return 0.0f;
        }
    }
    const double xd = (double)x;
    // The same formula without fused operations: the result differs from
    // glibc's fused evaluation by less than 2^-45 relative, unless the
    // rounding of k is in doubt. When neither can change the float, done.
    double z = EXPF_INV_LN2_N * xd;
    double kd = z + EXPF_SHIFT;
    uint64_t kbits = f64_bits(kd);
    kd -= EXPF_SHIFT;
    double r = z - kd;
    double r2 = r * r;
    double y = ((EXPF_C0 * r + EXPF_C1) * r2 + (EXPF_C2 * r + 1.0)) * expf_scale(kbits);
    if (r < 0.5 - 0x1p-30 && r > -0.5 + 0x1p-30) {
        float lo = (float)(y * (1.0 - 0x1p-42));
        float hi = (float)(y * (1.0 + 0x1p-42));
        if (lo == hi) {
            return (float)y;
        }
    }
    // Rare: glibc's exact sequence, every multiply-add fused.
    kd = exact_fma(EXPF_INV_LN2_N, xd, EXPF_SHIFT);
    kbits = f64_bits(kd);
    kd -= EXPF_SHIFT;
    r = exact_fma(EXPF_INV_LN2_N, xd, -kd);
    r2 = r * r;
    double p = exact_fma(EXPF_C0, r, EXPF_C1);
    y = exact_fma(EXPF_C2, r, 1.0);
    y = exact_fma(p, r2, y);
    return (float)(y * expf_scale(kbits));
}

// The fast path, in integers only (no soft-float calls on cores without a
// double FPU): glibc's k, r and polynomial computed in fixed point, within
// 2^-34.5 of glibc's double result (the errors are listed below); when no
// float rounding boundary lies within EXPF_FAST_ERR of it, that rounding is
// glibc's. Otherwise, and outside |x| in [2^-26, 86), tflm_expf_double decides.

// 32/ln2 (glibc's double) = EXPF_CM * 2^-47, split as CH * 2^21 + CL.
#define EXPF_CH (0xb8aa3b29u)
#define EXPF_CL (0xb82feu)
// The polynomial's coefficients in fixed point: C2 * 2^36, C1 * 2^43, C0 * 2^50.
#define EXPF_C2_Q36 (1488522236)
#define EXPF_C1_Q43 (2063546692)
#define EXPF_C0_Q50 (1907089710)
// The error bound in units of 2^-61: 2^-33, three times the sum of the
// truncations (r to Q31: 2^-37.5 after C2; C2: 2^-38; f to Q37: 2^-37;
// 2^(j/32) to Q30: 2^-36.5; each at most doubled by 2^(j/32)) and of glibc's
// own double roundings (2^-51).
#define EXPF_FAST_ERR ((int64_t)1 << 28)

float tflm_expf_fixed(float x) {
    uint32_t ux = tflm_f32_bits(x);
    uint32_t ax = ux & 0x7fffffffu;
    if (ax < 0x32800000u) { // |x| < 2^-26 (zeros and subnormals too): 1 + x rounds to 1
        return 1.0f;
    }
    if (ax >= 0x42ac0000u) { // |x| >= 86, inf, nan
        return tflm_expf_double(x);
    }
    // z = x * 32/ln2 exactly but for the last bit, in Q51: x = m * 2^(ex - 23).
    int32_t ex = (int32_t)(ax >> 23) - 127; // -26 .. 6
    uint64_t m = (ax & 0x7fffffu) | 0x800000u;
    uint64_t a = m * EXPF_CH, b = m * EXPF_CL;
    int32_t sh = 19 - ex; // 13 .. 45
    uint64_t zmag = (sh <= 21 ? a << (21 - sh) : a >> (sh - 21)) + (b >> sh);
    int64_t z = (ux >> 31) ? -(int64_t)zmag : (int64_t)zmag;
    // k = round(z); z is never a tie, but our z may be off by 2^-50.
    int64_t zh = z + ((int64_t)1 << 50);
    uint64_t frac = (uint64_t)zh & (((uint64_t)1 << 51) - 1);
    if (frac < 4 || frac > ((uint64_t)1 << 51) - 4) {
        return tflm_expf_double(x);
    }
    int32_t k = (int32_t)(zh >> 51);
    int32_t r = (int32_t)((z - (int64_t)k * ((int64_t)1 << 51) + (1 << 19)) >> 20); // Q31, |r| <= 2^30
    // f = C2 r + (C1 + C0 r) r^2 in Q62; 2^(r/32) = 1 + f.
    int64_t t1 = (int64_t)r * EXPF_C2_Q36;                                     // Q67
    int32_t r2 = (int32_t)(((int64_t)r * r) >> 31);                            // Q31
    int32_t inner = EXPF_C1_Q43 + (int32_t)(((int64_t)EXPF_C0_Q50 * r) >> 38); // Q43
    int64_t f = (t1 >> 5) + (((int64_t)inner * r2) >> 12);                    // Q62
    // v = 2^(j/32) (1 + f) in Q61, 2^(j/32) exact from the table.
    int32_t j = k & 31;
    uint64_t tm = (f64_bits(exp2_table[j][0]) & 0xfffffffffffffu) | ((uint64_t)1 << 52); // Q52
    int64_t tf = (int64_t)(int32_t)(f >> 25) * (int32_t)(tm >> 22);           // Q37 * Q30
    int64_t v = (int64_t)(tm << 9) + (tf >> 6);
    // Round v to 24 bits unless a midpoint is within the error bound.
    if (((v - EXPF_FAST_ERR) >> 61) != ((v + EXPF_FAST_ERR) >> 61)) {
        return tflm_expf_double(x);
    }
    int32_t low = v >= ((int64_t)1 << 61) ? 38 : 37;
    int64_t rem = v & (((int64_t)1 << low) - 1);
    int64_t off = rem - ((int64_t)1 << (low - 1));
    if (off <= EXPF_FAST_ERR && off >= -EXPF_FAST_ERR) {
        return tflm_expf_double(x);
    }
    uint32_t q = (uint32_t)(v >> low) + (off > 0); // 2^23 .. 2^24
    int32_t e = (k - j) / 32 + (low == 38 ? 126 : 125);
    return tflm_f32_from(((uint32_t)e << 23) + q);
}

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

// -- exp (double) -------------------------------------------------------------

// Evaluated in double-double and rounded once: correctly rounded except when
// the result lies within about 2^-100 of a rounding boundary (glibc's exp is
// within 0.51 ulp, so the two agree but for its own misroundings). Results
// in the subnormal range may be rounded twice.
#define EXP_N_LN2 (0x1.71547652b82fep+5)     // 32 / ln2
#define EXP_LN2_N_HI (0x1.62e42fefa0000p-6)  // ln2 / 32: 36 bits, k * hi is exact
#define EXP_LN2_N_LO (0x1.cf79abc9e3b3ap-45)

double tflm_exp(double x) {
    uint64_t ux = f64_bits(x);
    uint32_t top = (uint32_t)(ux >> 52) & 0x7ff;
    if (top >= 0x7ff) {
        if (ux == 0xfff0000000000000u) {
            return 0.0; // -inf
        }
        return x + x; // +inf, nan
    }
    if (x > 0x1.62e42fefa39efp+9) {
        return f64_from(0x7ff0000000000000u); // overflow
    }
    if (x < -0x1.74910d52d3052p+9) {
        return 0.0; // below half the smallest subnormal
    }
    if (top < 0x3c9) { // |x| < 2^-54: exp(x) rounds to 1 + x
        return 1.0 + x;
    }
    // x = k ln2/32 + r, |r| <= ln2/64 (slightly more at worst).
    double kd = x * EXP_N_LN2 + EXPF_SHIFT;
    int64_t k = (int64_t)(f64_bits(kd) & 0xfffffffffffffu) - ((int64_t)1 << 51);
    kd -= EXPF_SHIFT;
    double rh0 = x - kd * EXP_LN2_N_HI; // exact
    double t_lo;
    double t_hi = two_prod(kd, EXP_LN2_N_LO, &t_lo);
    double rl;
    double rh = two_sum(rh0, -t_hi, &rl);
    rl -= t_lo;
    // exp(r) - 1 = r + r^2/2 + r^3/6 + ..., the first terms kept exact.
    double sq_lo;
    double sq = two_prod(rh, rh, &sq_lo);
    double tail = rh * sq * (1.0 / 6 + rh * (1.0 / 24 + rh * (1.0 / 120 + rh * (1.0 / 720 + rh * (1.0 / 5040
        + rh * (1.0 / 40320 + rh * (1.0 / 362880)))))));
    double pl;
    double ph = two_sum(rh, 0.5 * sq, &pl);
    pl += rl + (0.5 * sq_lo + rh * rl + tail);
    // 2^(j/32) * (1 + p), as a double-double then rounded once.
    int64_t j = k & 31;
    double th = exp2_table[j][0], tl = exp2_table[j][1];
    double a_lo;
    double a = two_prod(th, ph, &a_lo);
    double s_lo;
    double s = two_sum(th, a, &s_lo);
    double lo = s_lo + (a_lo + th * pl + tl + tl * ph);
    int64_t e = (k - j) / 32;
    // 2^e applied in two exact steps where the result is normal.
    int64_t e1 = e / 2;
    int64_t e2 = e - e1;
    double scale1 = f64_from((uint64_t)(1023 + e1) << 52);
    double scale2 = f64_from((uint64_t)(1023 + e2) << 52);
    return ((s + lo) * scale1) * scale2;
}

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

// -- logf -------------------------------------------------------------------

// glibc's logf (2.27 and later): x = 2^k z, z near one of 16 points c with
// 1/c and log(c) tabled, log(x) = k ln2 + log(c) + log1p(z/c - 1) with a
// cubic for log1p, evaluated in double and rounded once. TFLM's host runs
// its FMA build: five multiply-adds fused. Unfused here, then fused (exactly
// emulated) only when the two could round differently.
static const double logf_tab[16][2] = { // 1/c, log(c)
    { 0x1.661ec79f8f3bep+0, -0x1.57bf7808caadep-2 },
    { 0x1.571ed4aaf883dp+0, -0x1.2bef0a7c06ddbp-2 },
    { 0x1.49539f0f010bp+0, -0x1.01eae7f513a67p-2 },
    { 0x1.3c995b0b80385p+0, -0x1.b31d8a68224e9p-3 },
    { 0x1.30d190c8864a5p+0, -0x1.6574f0ac07758p-3 },
    { 0x1.25e227b0b8eap+0, -0x1.1aa2bc79c81p-3 },
    { 0x1.1bb4a4a1a343fp+0, -0x1.a4e76ce8c0e5ep-4 },
    { 0x1.12358f08ae5bap+0, -0x1.1973c5a611cccp-4 },
    { 0x1.0953f419900a7p+0, -0x1.252f438e10c1ep-5 },
    { 0x1p+0, 0x0p+0 },
    { 0x1.e608cfd9a47acp-1, 0x1.aa5aa5df25984p-5 },
    { 0x1.ca4b31f026aap-1, 0x1.c5e53aa362eb4p-4 },
    { 0x1.b2036576afce6p-1, 0x1.526e57720db08p-3 },
    { 0x1.9c2d163a1aa2dp-1, 0x1.bc2860d22477p-3 },
    { 0x1.886e6037841edp-1, 0x1.1058bc8a07ee1p-2 },
    { 0x1.767dcf5534862p-1, 0x1.4043057b6ee09p-2 },
};
#define LOGF_LN2 (0x1.62e42fefa39efp-1)
#define LOGF_A0 (-0x1.00ea348b88334p-2)
#define LOGF_A1 (0x1.5575b0be00b6ap-2)
#define LOGF_A2 (-0x1.ffffef20a4123p-2)
#define LOGF_OFF (0x3f330000u)

// Whether y rounds to the same float as every value within 2^-42 of it
// relative: then so does the fused result, which differs from the unfused
// one by far less in every function here.
static inline bool rounds_clear(double y) {
    return (float)(y * (1.0 - 0x1p-42)) == (float)(y * (1.0 + 0x1p-42));
}

float tflm_logf(float x) {
    uint32_t ix = tflm_f32_bits(x);
    if (ix == 0x3f800000u) {
        return 0.0f;
    }
    if (ix - 0x00800000u >= 0x7f800000u - 0x00800000u) { // zero, subnormal, negative, inf, nan
        if (ix * 2u == 0) {
            return tflm_f32_from(0xff800000u); // -inf
        }
        if (ix == 0x7f800000u) {
            return x;
        }
        if ((ix & 0x7fffffffu) > 0x7f800000u) {
            return tflm_nan_quiet(x);
        }
        if (ix & 0x80000000u) {
            return tflm_nan_default();
        }
        // Subnormal: the bits of x * 2^23, less 23 in the exponent field
        // (which may go below zero: k comes out right from the subtraction).
        int32_t s = __builtin_clz(ix) - 8;
        ix = (ix << s) - ((uint32_t)s << 23);
    }
    uint32_t tmp = ix - LOGF_OFF;
    uint32_t i = (tmp >> 19) % 16u;
    int32_t k = (int32_t)tmp >> 23; // arithmetic shift
    uint32_t iz = ix - (tmp & 0xff800000u);
    const double invc = logf_tab[i][0], logc = logf_tab[i][1];
    const double z = (double)tflm_f32_from(iz);
    const double kd = (double)k;
    double r = z * invc - 1.0;
    double y0 = logc + kd * LOGF_LN2;
    double r2 = r * r;
    double y = LOGF_A1 * r + LOGF_A2;
    y = LOGF_A0 * r2 + y;
    y = y * r2 + (y0 + r);
    if (rounds_clear(y)) {
        return (float)y;
    }
    r = exact_fma(z, invc, -1.0);
    y0 = exact_fma(kd, LOGF_LN2, logc);
    r2 = r * r;
    y = exact_fma(LOGF_A1, r, LOGF_A2);
    y = exact_fma(LOGF_A0, r2, y);
    y = exact_fma(y, r2, y0 + r);
    return (float)y;
}

// -- sinf, cosf ---------------------------------------------------------------

// glibc's sinf and cosf (2.28 and later): reduction by pi/2 (one fused
// multiply-subtract below 120, 4/pi to 192 bits in integers above), then a
// sine or cosine polynomial in double; the FMA build fuses the reduction and
// the polynomials' multiply-adds. The reduction is exact here (an integer
// difference), the polynomial unfused, then fused when the rounding is in doubt.
typedef struct {
    double c0, c1, c2, c3, c4; // cosine (negated in the second set)
    double s1, s2, s3;         // sine
} sincosf_poly_t;

static const sincosf_poly_t sincosf_polys[2] = {
    { 0x1p0, -0x1.ffffffd0c621cp-2, 0x1.55553e1068f19p-5, -0x1.6c087e89a359dp-10, 0x1.99343027bf8c3p-16,
      -0x1.555545995a603p-3, 0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13 },
    { -0x1p0, 0x1.ffffffd0c621cp-2, -0x1.55553e1068f19p-5, 0x1.6c087e89a359dp-10, -0x1.99343027bf8c3p-16,
      -0x1.555545995a603p-3, 0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13 },
};

// 4/pi to 192 bits; entry j holds bits 8j .. 8j + 31.
static const uint32_t sincosf_inv_pio4[24] = {
    0xa2, 0xa2f9, 0xa2f983, 0xa2f9836e,
    0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529,
    0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1,
    0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0,
    0x34ddc0db, 0xddc0db62, 0xc0db6295, 0xdb629599,
    0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041,
};

#define SINCOSF_HPI_INV (0x1.45F306DC9C883p+23) // 2/pi * 2^24
#define SINCOSF_HPI_BITS (0x1921FB54442D18ull)   // pi/2 = this * 2^-52
#define SINCOSF_PI63 (0x1.921FB54442D18p-62)    // 2pi * 2^-64

// The polynomial of quadrant n (odd: cosine) at x, x2 = x * x.
static float sincosf_poly(double x, double x2, const sincosf_poly_t *p, int32_t n) {
    double y;
    if ((n & 1) == 0) {
        double x3 = x * x2;
        double x7 = x3 * x2;
        y = (x + x3 * p->s1) + x7 * (p->s2 + x2 * p->s3);
        if (rounds_clear(y)) {
            return (float)y;
        }
        double s1 = exact_fma(x2, p->s3, p->s2);
        double s = exact_fma(x3, p->s1, x);
        return (float)exact_fma(x7, s1, s);
    }
    double x4 = x2 * x2;
    double x6 = x4 * x2;
    y = ((p->c0 + x2 * p->c1) + x4 * p->c2) + x6 * (p->c3 + x2 * p->c4);
    if (rounds_clear(y)) {
        return (float)y;
    }
    double c2 = exact_fma(x2, p->c4, p->c3);
    double c1 = exact_fma(x2, p->c1, p->c0);
    double c = exact_fma(x4, p->c2, c1);
    return (float)exact_fma(x6, c2, c);
}

// |y| in [2^-12, inf): y reduced to [-pi/4, pi/4] (a little more below 120)
// and its quadrant.
static double sincosf_reduce(float y, int32_t *np) {
    uint32_t xi = tflm_f32_bits(y);
    uint32_t top = (xi >> 20) & 0x7ffu;
    if (top < 0x42fu) { // |y| < 120: n = nearest multiple of pi/2, y - n pi/2 fused
        double r = (double)y * SINCOSF_HPI_INV;
        int32_t n = ((int32_t)r + 0x800000) >> 24;
        *np = n;
        // y * 2^52 - n * (pi/2 * 2^52), exact in 64 bits (y < 2^7, n < 2^7).
        int64_t m = (int64_t)((xi & 0x7fffffu) | 0x800000u);
        m = (xi >> 31) ? -m : m;
        int32_t sh = (int32_t)((xi >> 23) & 0xffu) - 150 + 52; // 28 .. 35
        int64_t d = m * ((int64_t)1 << sh) - (int64_t)n * (int64_t)SINCOSF_HPI_BITS;
        return (double)d * 0x1p-52;
    }
    // 4/pi times the significand, modulo 4, in 2.62 fixed point.
    const uint32_t *arr = &sincosf_inv_pio4[(xi >> 26) & 15u];
    uint32_t shift = (xi >> 23) & 7u;
    uint32_t m = ((xi & 0xffffffu) | 0x800000u) << shift;
    uint64_t res0 = (uint64_t)(uint32_t)(m * arr[0]);
    uint64_t res1 = (uint64_t)m * arr[4];
    uint64_t res2 = (uint64_t)m * arr[8];
    res0 = (res2 >> 32) | (res0 << 32);
    res0 += res1;
    uint64_t n = (res0 + ((uint64_t)1 << 61)) >> 62;
    res0 -= n << 62;
    *np = (int32_t)n;
    return (double)(int64_t)res0 * SINCOSF_PI63;
}

// sinf (cos false) or cosf (cos true).
static float sincosf_eval(float y, bool cos) {
    uint32_t xi = tflm_f32_bits(y);
    uint32_t top = (xi >> 20) & 0x7ffu;
    if (top < 0x3f4u) { // |y| < 0.75
        if (top < 0x398u) { // |y| < 2^-12
            return cos ? 1.0f : y;
        }
        double x = (double)y;
        return sincosf_poly(x, x * x, &sincosf_polys[0], cos ? 1 : 0);
    }
    if (top >= 0x7f8u) { // inf, nan
        return (xi & 0x7fffffffu) > 0x7f800000u ? tflm_nan_quiet(y) : tflm_nan_default();
    }
    int32_t n;
    double x = sincosf_reduce(y, &n);
    // Above 120 the quadrant does not include the sign: add it.
    int32_t q = top < 0x42fu ? n : n + (int32_t)(xi >> 31);
    const double sign = ((q + 1) & 2) ? -1.0 : 1.0; // + - - + by quadrant
    const sincosf_poly_t *p = &sincosf_polys[(q & 2) ? 1 : 0];
    x *= sign;
    return sincosf_poly(x, x * x, p, cos ? n ^ 1 : n);
}

float tflm_sinf(float x) {
    return sincosf_eval(x, false);
}

float tflm_cosf(float x) {
    return sincosf_eval(x, true);
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
