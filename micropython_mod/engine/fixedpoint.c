// gemmlowp-style fixed-point arithmetic (see fixedpoint.h). Plain additions
// wrap on overflow, as the reference's do on its two's complement targets.
#include "fixedpoint.h"
#include "quant.h"

// Constants of the gemmlowp polynomial and Newton-Raphson steps, raw int32.
#define FP_EXP_MINUS_ONE_EIGHTH (1895147668)  // exp(-1/8), Q0
#define FP_ONE_THIRD (715827883)              // 1/3, Q0
#define FP_48_OVER_17 (1515870810)            // Q2
#define FP_MINUS_32_OVER_17 (-1010580540)     // Q2
#define FP_Q2_ONE (1 << 29)

static inline int32_t add(int32_t a, int32_t b) {
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static inline int32_t sub(int32_t a, int32_t b) {
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

static inline int32_t mul(int32_t a, int32_t b) {
    return tflm_srdhm(a, b);
}

int32_t tflm_fp_mul_pot(int32_t x, int exponent) {
    if (exponent > 0) {
        int32_t threshold = (int32_t)((1u << (31 - exponent)) - 1u);
        if (x > threshold) {
            return INT32_MAX;
        }
        if (x < -threshold) {
            return INT32_MIN;
        }
        return (int32_t)((uint32_t)x << exponent);
    }
    if (exponent < 0) {
        return tflm_rounding_divide_by_pot(x, -exponent);
    }
    return x;
}

int32_t tflm_fp_rounding_half_sum(int32_t a, int32_t b) {
    int64_t sum = (int64_t)a + (int64_t)b;
    return (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
}

// exp(a) for a in [-1/4, 0), Q0: Taylor expansion around -1/8.
static int32_t exp_on_quarter_interval(int32_t a) {
    int32_t x = add(a, 1 << 28);
    int32_t x2 = mul(x, x);
    int32_t x3 = mul(x2, x);
    int32_t x4 = mul(x2, x2);
    int32_t x4_over_4 = tflm_fp_mul_pot(x4, -2);
    int32_t poly = tflm_fp_mul_pot(add(mul(add(x4_over_4, x3), FP_ONE_THIRD), x2), -1);
    return add(FP_EXP_MINUS_ONE_EIGHTH, mul(FP_EXP_MINUS_ONE_EIGHTH, add(x, poly)));
}

// exp(-2^k) in Q0 for k = -2 .. 4, the factors of the barrel shifter.
static const int32_t exp_minus_pot[7] = {
    1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242,
};

int32_t tflm_fp_exp_on_negative_values(int32_t a, int ib) {
    const int frac = 31 - ib;
    const int32_t one_quarter = (int32_t)1 << (frac - 2);
    int32_t a_mod_minus_quarter = sub(a & (one_quarter - 1), one_quarter);
    int32_t result = exp_on_quarter_interval(tflm_fp_rescale(a_mod_minus_quarter, ib, 0));
    int32_t remainder = sub(a_mod_minus_quarter, a);
    // Each set bit of the whole-quarter part multiplies by exp(-2^k).
    for (int k = -2; k <= 4; ++k) {
        if (ib > k && (remainder & ((int32_t)1 << (frac + k)))) {
            result = mul(result, exp_minus_pot[k + 2]);
        }
    }
    if (ib > 5 && a < -((int32_t)1 << (36 - ib))) {
        result = 0;  // below -32
    }
    return a == 0 ? INT32_MAX : result;
}

// Newton-Raphson reciprocal of (1 + a) / 2, in Q2.
static int32_t reciprocal_half_denominator(int32_t a) {
    int32_t half_denominator = tflm_fp_rounding_half_sum(a, INT32_MAX);
    int32_t x = add(FP_48_OVER_17, mul(half_denominator, FP_MINUS_32_OVER_17));
    for (int i = 0; i < 3; ++i) {
        int32_t one_minus = sub(FP_Q2_ONE, mul(half_denominator, x));
        x = add(x, tflm_fp_rescale(mul(x, one_minus), 4, 2));
    }
    return x;
}

int32_t tflm_fp_one_over_one_plus_x_for_x_in_0_1(int32_t a) {
    // x approximates 2 / (1 + a) in Q2, i.e. 1 / (1 + a) in Q1.
    return tflm_fp_rescale(reciprocal_half_denominator(a), 1, 0);
}

int32_t tflm_fp_one_minus_x_over_one_plus_x_for_x_in_0_1(int32_t a) {
    return tflm_fp_rescale(sub(reciprocal_half_denominator(a), FP_Q2_ONE), 2, 0);
}

int32_t tflm_fp_logistic(int32_t a, int ib) {
    if (a == 0) {
        return 1 << 30;  // one half
    }
    int32_t abs_a = a > 0 ? a : sub(0, a);
    int32_t positive = tflm_fp_one_over_one_plus_x_for_x_in_0_1(tflm_fp_exp_on_negative_values(sub(0, abs_a), ib));
    return a > 0 ? positive : sub(INT32_MAX, positive);
}

int32_t tflm_fp_tanh(int32_t a, int ib) {
    if (a == 0) {
        return 0;
    }
    int32_t neg = a < 0 ? a : sub(0, a);
    // exp(2 * neg): the same raw value read with one more integer bit.
    int32_t t = tflm_fp_one_minus_x_over_one_plus_x_for_x_in_0_1(tflm_fp_exp_on_negative_values(neg, ib + 1));
    return a < 0 ? sub(0, t) : t;
}

int32_t tflm_fp_get_reciprocal(int32_t x, int x_integer_digits, int *num_bits_over_unit) {
    uint32_t ux = (uint32_t)x;
    int headroom_plus_one = ux ? __builtin_clz(ux) : 32;
    *num_bits_over_unit = x_integer_digits - headroom_plus_one;
    // x scaled into [1, 2), minus one, as a Q0 value.
    uint32_t shifted = headroom_plus_one < 32 ? ux << headroom_plus_one : ux;
    int32_t shifted_minus_one = (int32_t)(shifted - (1u << 31));
    return tflm_fp_one_over_one_plus_x_for_x_in_0_1(shifted_minus_one);
}

bool tflm_fp_checked_log2(float x, int *log2) {
    *log2 = 0;
    if (!(x > 0.0f) || x > 3.0e38f) {
        return false;
    }
    int e;
    double m = tflm_frexp((double)x, &e);
    // log2(m) for m in [0.5, 1) from the atanh series: 2 atanh(t) / ln 2.
    double t = (m - 1.0) / (m + 1.0), t2 = t * t, term = t, series = 0.0;
    for (int k = 1; k < 40; k += 2) {
        series += term / k;
        term *= t2;
    }
    float x_log2 = (float)((double)e + 2.0 * series / 0.69314718055994530942);
    float rounded = tflm_roundf(x_log2);
    float frac = x_log2 - rounded;
    *log2 = (int)rounded;
    return (frac < 0.0f ? -frac : frac) < 1e-3f;
}

// 1/sqrt(x) by five Newton-Raphson steps in Q3 from a guess of 1, on x
// scaled by a power of four into [2^27, 2^29) (TFLM's
// GetInvSqrtQuantizedMultiplierExp, its right shift given as a left one).
void tflm_fp_inv_sqrt(int32_t x, int32_t *multiplier, int32_t *shift) {
    if (x <= 1) {
        *multiplier = INT32_MAX;
        *shift = 0;
        return;
    }
    int32_t right = 11;
    while (x >= (1 << 29)) {
        x /= 4;
        ++right;
    }
    uint32_t pairs = ((uint32_t)__builtin_clz((uint32_t)x) - 1u) / 2u - 1u;
    right -= (int32_t)pairs;
    x <<= 2u * pairs;
    const int32_t half_x = tflm_fp_mul_pot(x >> 1, -1);     // Q3
    const int32_t three_halves = (1 << 28) + (1 << 27);      // Q3
    int32_t y = 1 << 28;                                     // Q3 one
    for (int i = 0; i < 5; ++i) {
        int32_t y3 = tflm_fp_mul_pot(mul(mul(y, y), y), 6);  // Q9 to Q3
        y = tflm_fp_mul_pot(sub(mul(three_halves, y), mul(half_x, y3)), 3); // Q6 to Q3
    }
    y = mul(y, 1518500250); // times sqrt(2) / 2 (Q0)
    if (right < 0) {
        y = (int32_t)((uint32_t)y << -right);
        right = 0;
    }
    *multiplier = y;
    *shift = -right;
}

// log(x) for x >= 1 given with in_ib integer bits, result with out_ib
// (gemmlowp's log_x_for_x_greater_than_or_equal_to_1 as TFLM has it): x =
// 2^z r with r in [sqrt(1/2), sqrt(2)) chosen from two scalings, log(r) from
// a Pade-like rational in q = 2 (r - 2^-1/4), plus z log 2 summed in Q(out_ib + 1).
static int32_t sat_add(int32_t a, int32_t b) {
    int64_t s = (int64_t)a + b;
    return s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : (int32_t)s;
}

int32_t tflm_fp_log_x_ge_1(int32_t x, int in_ib, int out_ib) {
    const int32_t log_2 = 1488522236, sqrt_sqrt_half = 1805811301, sqrt_half = 1518500250;
    const int32_t alpha_n = 117049297, alpha_d = 127690142, alpha_i = 1057819769, alpha_f = 638450708;
    const int accum_ib = out_ib + 1;
    const int32_t quarter = tflm_fp_rescale(1 << 29, 0, accum_ib);
    // Two normalizations of x read as Q0: one by its headroom, one by that of x / sqrt(2).
    int z_a_headroom_plus_1 = x ? __builtin_clz((uint32_t)x) : 32;
    int32_t r_a = tflm_fp_mul_pot(mul(tflm_fp_mul_pot(x, z_a_headroom_plus_1 - 1), sqrt_half), 1);
    int32_t z_a_pow_2 = sat_add(tflm_fp_mul_pot(in_ib - z_a_headroom_plus_1, 31 - accum_ib), quarter);
    int32_t z_b = mul(x, sqrt_half);
    int z_b_headroom = (z_b ? __builtin_clz((uint32_t)z_b) : 32) - 1;
    int32_t r_b = tflm_fp_mul_pot(x, z_b_headroom);
    int64_t d = (int64_t)tflm_fp_mul_pot(in_ib - z_b_headroom, 31 - accum_ib) - quarter;
    int32_t z_b_pow_2 = d > INT32_MAX ? INT32_MAX : d < INT32_MIN ? INT32_MIN : (int32_t)d;
    const int32_t r = r_a < r_b ? r_a : r_b;
    const int32_t z_pow_2 = z_a_pow_2 > z_b_pow_2 ? z_a_pow_2 : z_b_pow_2;
    const int32_t p = tflm_fp_rounding_half_sum(r, sqrt_sqrt_half);
    int32_t q = sub(r, sqrt_sqrt_half);
    q = add(q, q);
    const int32_t common_sq = mul(q, q);
    const int32_t num = add(mul(q, r), mul(mul(q, common_sq), alpha_n));
    const int32_t denom_minus_one = add(mul(p, add(add(alpha_i, q), mul(alpha_d, common_sq))), mul(alpha_f, q));
    const int32_t recip_denom = tflm_fp_one_over_one_plus_x_for_x_in_0_1(denom_minus_one);
    const int32_t num_scaled = tflm_fp_rescale(num, 0, accum_ib);
    return tflm_fp_rescale(add(mul(z_pow_2, log_2), mul(num_scaled, recip_denom)), accum_ib, out_ib);
}
