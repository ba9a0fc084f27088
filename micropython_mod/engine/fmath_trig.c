// sinf and cosf, glibc's FMA build (fmath.h; fmath_impl.h: what the fmath
// files share).
#include "fmath_impl.h"

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
        double s1 = tflm_fmath_fma(x2, p->s3, p->s2);
        double s = tflm_fmath_fma(x3, p->s1, x);
        return (float)tflm_fmath_fma(x7, s1, s);
    }
    double x4 = x2 * x2;
    double x6 = x4 * x2;
    y = ((p->c0 + x2 * p->c1) + x4 * p->c2) + x6 * (p->c3 + x2 * p->c4);
    if (rounds_clear(y)) {
        return (float)y;
    }
    double c2 = tflm_fmath_fma(x2, p->c4, p->c3);
    double c1 = tflm_fmath_fma(x2, p->c1, p->c0);
    double c = tflm_fmath_fma(x4, p->c2, c1);
    return (float)tflm_fmath_fma(x6, c2, c);
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
