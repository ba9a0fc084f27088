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
double tflm_floor(double x); // floor, exact (signed zeros kept, NaNs quieted)
// fmodf as TFLM's std::fmod gives it on x86-64 (the x87 code GCC inlines),
// exact, its NaNs included: of two NaNs the one with the larger significand
// once both are quiet (the positive one on a tie), a NaN operand quieted,
// and 0xffc00000 for x infinite or y zero.
float tflm_fmodf(float x, float y);

// The NaN an x86-64 SSE operation x op y gives when its result is NaN: the
// first NaN operand, quieted, or the default NaN 0xffc00000 when neither is
// NaN (inf - inf, 0 * inf, ...). ARM's default NaN is positive and its
// choice among NaN operands differs: kernels whose results TFLM's reference
// leaves to the processor call this where a result is NaN.
float tflm_x86_nan(float x, float y);

static inline bool tflm_isnan_bits(uint32_t u) {
    return (u & 0x7fffffffu) > 0x7f800000u;
}

#endif // TFLM_ENGINE_FMATH_H
