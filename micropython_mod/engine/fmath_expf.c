// expf, bit-exact with glibc's (fmath.h; fmath_impl.h: what the fmath files
// share).
#include "fmath_impl.h"

const double tflm_fmath_exp2[32][2] = {
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

// -- expf -----------------------------------------------------------------

// glibc's expf: x * 32/ln2 = k + r, |r| <= 1/2, exp(x) = 2^(k/32) * 2^(r/32)
// with a cubic for 2^(r/32), evaluated in double and rounded once to float.
#define EXPF_INV_LN2_N (0x1.71547652b82fep+5)
#define EXPF_C0 (0x1.c6af84b912394p-5 / 32768.0)
#define EXPF_C1 (0x1.ebfce50fac4f3p-3 / 1024.0)
#define EXPF_C2 (0x1.62e42ff0c52d6p-1 / 32.0)

// 2^(k/32) for the integer k held in the low bits of kbits.
static inline double expf_scale(uint64_t kbits) {
    return f64_from(f64_bits(tflm_fmath_exp2[kbits % 32][0]) + ((kbits >> 5) << 52));
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
    double kd = z + TFLM_FMATH_SHIFT;
    uint64_t kbits = f64_bits(kd);
    kd -= TFLM_FMATH_SHIFT;
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
    kd = tflm_fmath_fma(EXPF_INV_LN2_N, xd, TFLM_FMATH_SHIFT);
    kbits = f64_bits(kd);
    kd -= TFLM_FMATH_SHIFT;
    r = tflm_fmath_fma(EXPF_INV_LN2_N, xd, -kd);
    r2 = r * r;
    double p = tflm_fmath_fma(EXPF_C0, r, EXPF_C1);
    y = tflm_fmath_fma(EXPF_C2, r, 1.0);
    y = tflm_fmath_fma(p, r2, y);
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
    uint64_t tm = (f64_bits(tflm_fmath_exp2[j][0]) & 0xfffffffffffffu) | ((uint64_t)1 << 52); // Q52
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
