// TFLM's int16 logistic and tanh: a 256-entry sigmoid table with linear
// interpolation, shared by LOGISTIC, TANH and the LSTM kernel.
#ifndef TFLM_KERNELS_ACTIVATION_INT16_H
#define TFLM_KERNELS_ACTIVATION_INT16_H

#include <stdint.h>

#include "engine/kernel.h"

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

#endif // TFLM_KERNELS_ACTIVATION_INT16_H
