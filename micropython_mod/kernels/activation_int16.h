// TFLM's int16 logistic and tanh: a 256-entry sigmoid table with linear
// interpolation, shared by LOGISTIC, TANH and the LSTM kernel.
#ifndef TFLM_KERNELS_ACTIVATION_INT16_H
#define TFLM_KERNELS_ACTIVATION_INT16_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/fixedpoint.h"
#include "engine/kernel.h"
#include "engine/quant.h"

// input_multiplier / input_left_shift as TFLM's prepare computes them
// (multiplier 0: power-of-two input scale). `in` may equal `out`.
void tflm_logistic_int16_apply(int32_t input_multiplier, int32_t input_left_shift, uint32_t n, const int16_t *in, int16_t *out);
void tflm_tanh_int16_apply(int32_t input_multiplier, int32_t input_left_shift, uint32_t n, const int16_t *in, int16_t *out);

// Prepare-time parameters of LOGISTIC's and TANH's quantized paths, as
// TFLM's prepare computes them; each reports an out-of-range scale through
// p (TFLM_ERR_VALUE) and returns its status.
// int8: (input - zero point) rescaled into Q`ib`.(31 - ib), and the radius
// past which the output saturates (0: every input saturates).
tflm_status_t tflm_act_int8_params(tflm_prepare_t *p, float in_scale, int ib,
    int32_t *multiplier, int32_t *shift, int32_t *radius);
// int16: zero points 0, output scale 2^-15, and the input's multiplier and
// left shift onto the table's Q3.12 (multiplier 0 for the power-of-two
// input scales 2^(s - 12), 0 <= s <= max_pot_shift).
tflm_status_t tflm_act_int16_params(tflm_prepare_t *p, const tflm_tinfo_t *in, const tflm_tinfo_t *out,
    int max_pot_shift, int32_t *multiplier, int32_t *shift);

// LOGISTIC and TANH, which differ only in their functions: one prepare
// (`tanh` picks the op's int8 and int16 rules) and one data layout.
enum { TFLM_ACT_FLOAT32, TFLM_ACT_INT8, TFLM_ACT_INT16 };
// int8 inputs are rescaled into Q4.27.
#define TFLM_ACT_INPUT_IB (4)

typedef struct {
    uint8_t kind;       // TFLM_ACT_*
    uint32_t n;
    int32_t zero_point;
    int32_t radius;     // int8: |input - zero point| at which the output saturates
    int32_t multiplier;
    int32_t shift;
} tflm_act_data_t;

tflm_status_t tflm_act_prepare(tflm_prepare_t *p, bool tanh);

// The int8 path (gemmlowp fixed point): LOGISTIC's output in 1/256 steps
// from -128, TANH's in 1/128 steps around 0 (TFLM ignores its output zero
// point). `tanh` is a constant at each call, so each op gets its own loop.
static inline void tflm_act_int8(const tflm_act_data_t *d, const int8_t *in, int8_t *out, bool tanh) {
    for (uint32_t i = 0; i < d->n; ++i) {
        int32_t x = in[i] - d->zero_point;
        if (x <= -d->radius) {
            out[i] = -128;
        } else if (x >= d->radius) {
            out[i] = 127;
        } else {
            int32_t q4 = tflm_mul_by_quantized_mul(x, d->multiplier, d->shift);
            int32_t r = tanh ? tflm_rounding_divide_by_pot(tflm_fp_tanh(q4, TFLM_ACT_INPUT_IB), 24)
                             : tflm_rounding_divide_by_pot(tflm_fp_logistic(q4, TFLM_ACT_INPUT_IB), 23) - 128;
            out[i] = (int8_t)tflm_clamp(r, -128, 127);
        }
    }
}

#endif // TFLM_KERNELS_ACTIVATION_INT16_H
