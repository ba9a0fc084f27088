// exp in double, for tables computed in prepare() (fmath.h; fmath_impl.h:
// what the fmath files share).
#include "fmath_impl.h"

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
    double kd = x * EXP_N_LN2 + TFLM_FMATH_SHIFT;
    int64_t k = (int64_t)(f64_bits(kd) & 0xfffffffffffffu) - ((int64_t)1 << 51);
    kd -= TFLM_FMATH_SHIFT;
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
    double th = tflm_fmath_exp2[j][0], tl = tflm_fmath_exp2[j][1];
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
