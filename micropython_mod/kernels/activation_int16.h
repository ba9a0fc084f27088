// TFLM's int16 logistic and tanh: a 256-entry sigmoid table with linear
// interpolation, shared by LOGISTIC, TANH and the LSTM kernel.
#ifndef TFLM_KERNELS_ACTIVATION_INT16_H
#define TFLM_KERNELS_ACTIVATION_INT16_H

#include <stdint.h>

// input_multiplier / input_left_shift as TFLM's prepare computes them
// (multiplier 0: power-of-two input scale). `in` may equal `out`.
void tflm_logistic_int16_apply(int32_t input_multiplier, int32_t input_left_shift, uint32_t n, const int16_t *in, int16_t *out);
void tflm_tanh_int16_apply(int32_t input_multiplier, int32_t input_left_shift, uint32_t n, const int16_t *in, int16_t *out);

#endif // TFLM_KERNELS_ACTIVATION_INT16_H
