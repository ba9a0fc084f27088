// Q-format fixed-point functions on int32, bit-exact with the gemmlowp
// fixedpoint routines TFLM's reference kernels use (exp, logistic, tanh,
// reciprocal). A value with `ib` integer bits has 31 - ib fractional bits;
// "Q0" values lie in [-1, 1).
#ifndef TFLM_ENGINE_FIXEDPOINT_H
#define TFLM_ENGINE_FIXEDPOINT_H

#include "common.h"

// x * 2^exponent: saturating when exponent > 0, rounding to nearest when < 0.
int32_t tflm_fp_mul_pot(int32_t x, int exponent);

// Changes the number of integer bits of x from src_ib to dst_ib.
static inline int32_t tflm_fp_rescale(int32_t x, int src_ib, int dst_ib) {
    return tflm_fp_mul_pot(x, src_ib - dst_ib);
}

// (a + b) / 2 rounded half away from zero.
int32_t tflm_fp_rounding_half_sum(int32_t a, int32_t b);

// exp(a) for a <= 0 with ib integer bits (0 <= ib <= 30); result in Q0.
int32_t tflm_fp_exp_on_negative_values(int32_t a, int ib);

// 1 / (1 + a) and (1 - a) / (1 + a) for a in [0, 1), Q0 in and out.
int32_t tflm_fp_one_over_one_plus_x_for_x_in_0_1(int32_t a);
int32_t tflm_fp_one_minus_x_over_one_plus_x_for_x_in_0_1(int32_t a);

// logistic(a) and tanh(a) for any a with ib integer bits (ib <= 29); Q0 results.
int32_t tflm_fp_logistic(int32_t a, int ib);
int32_t tflm_fp_tanh(int32_t a, int ib);

// 1 / x for x > 0 with x_integer_digits integer bits: returns a Q0 value v and
// sets *num_bits_over_unit so that 1/x = v * 2^-num_bits_over_unit.
int32_t tflm_fp_get_reciprocal(int32_t x, int x_integer_digits, int *num_bits_over_unit);

// 1/sqrt(x) for x >= 0 as a Q0 multiplier and a left shift (<= 0): TFLM's
// GetInvSqrtQuantizedMultiplierExp with kReverseShift; x <= 1 gives INT32_MAX, 0.
void tflm_fp_inv_sqrt(int32_t x, int32_t *multiplier, int32_t *shift);

// log(x) for x >= 1 with in_ib integer bits; the result has out_ib
// (gemmlowp's log_x_for_x_greater_than_or_equal_to_1, out_ib < 30).
int32_t tflm_fp_log_x_ge_1(int32_t x, int in_ib, int out_ib);

// TFLM's CheckedLog2: *log2 = round(log2(x)); true when x is within 0.1% of
// a power of two (x > 0).
bool tflm_fp_checked_log2(float x, int *log2);

#endif // TFLM_ENGINE_FIXEDPOINT_H
