// Float functions the kernels need, the same on every target: bare-metal
// MicroPython builds link their own small libm, whose results differ from
// the host's glibc that TFLM's reference kernels run with.
#ifndef TFLM_ENGINE_FMATH_H
#define TFLM_ENGINE_FMATH_H

#include "common.h"

float tflm_expf(float x);   // bit-exact with glibc's expf (integer fast path, double fallback)
float tflm_tanhf(float x);  // bit-exact with glibc 2.36's tanhf (fdlibm's, not correctly rounded)
double tflm_exp(double x);  // glibc's exp (for tables computed in prepare)
float tflm_sqrtf(float x);  // correctly rounded; sqrt(x < 0) is x86's default NaN

#endif // TFLM_ENGINE_FMATH_H
