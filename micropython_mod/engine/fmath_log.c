// logf, glibc's FMA build (fmath.h; fmath_impl.h: what the fmath files
// share).
#include "fmath_impl.h"

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
    r = tflm_fmath_fma(z, invc, -1.0);
    y0 = tflm_fmath_fma(kd, LOGF_LN2, logc);
    r2 = r * r;
    y = tflm_fmath_fma(LOGF_A1, r, LOGF_A2);
    y = tflm_fmath_fma(LOGF_A0, r2, y);
    y = tflm_fmath_fma(y, r2, y0 + r);
    return (float)y;
}
