// Float functions the kernels need, the same on every target: bare-metal
// MicroPython builds link their own small libm, whose results differ from
// the host's glibc that TFLM's reference kernels run with.
#ifndef TFLM_ENGINE_FMATH_H
#define TFLM_ENGINE_FMATH_H

#include "common.h"

// expf's two ways: fixed point with a double fallback, for cores
// without double-precision hardware (the Cortex-M3, M4, M0, the ESP32),
// where double arithmetic is a call per operation; glibc's own double steps
// where the hardware has them (TFLM_FMATH_DOUBLE: x86-64, AArch64, Arm
// FPv5-D16), fewer instructions there. tflm_expf takes the one the target
// builds for (the engine's sanitized host build: the fixed-point one, as on
// the boards); the tests check both over every input.
float tflm_expf_fixed(float x);
float tflm_expf_double(float x);
#ifndef TFLM_FMATH_DOUBLE
#if defined(__x86_64__) || defined(__aarch64__) || (defined(__ARM_FP) && (__ARM_FP & 8))
#define TFLM_FMATH_DOUBLE (1)
#else
#define TFLM_FMATH_DOUBLE (0)
#endif
#endif

// Bit-exact with glibc's expf.
static inline float tflm_expf(float x) {
    return TFLM_FMATH_DOUBLE ? tflm_expf_double(x) : tflm_expf_fixed(x);
}

float tflm_tanhf(float x);  // bit-exact with glibc 2.36's tanhf (fdlibm's, not correctly rounded)
double tflm_exp(double x);  // glibc's exp (for tables computed in prepare)
double tflm_floor(double x); // floor, exact (signed zeros kept, NaNs quieted)
// fmodf as TFLM's std::fmod gives it on x86-64 (the x87 code GCC inlines),
// exact, its NaNs included: of two NaNs the one with the larger significand
// once both are quiet (the positive one on a tie), a NaN operand quieted,
// and 0xffc00000 for x infinite or y zero.
float tflm_fmodf(float x, float y);
float tflm_expm1f(float x); // glibc 2.36's expm1f (fdlibm's)
float tflm_logf(float x);   // glibc's logf (FMA build: its fused multiply-adds emulated)
float tflm_sinf(float x);   // glibc's sinf and cosf (FMA build)
float tflm_cosf(float x);
float tflm_sqrtf(float x);  // correctly rounded; sqrt(x < 0) is x86's default NaN
double tflm_sqrt(double x); // the same in double (for prepare)

// NaN results as x86-64 gives them: a NaN operand quieted (sign and payload
// kept), and the default NaN of an invalid operation (sign bit set).
float tflm_nan_quiet(float x);
float tflm_nan_default(void);

static inline bool tflm_isnan_bits(uint32_t u) {
    return (u & 0x7fffffffu) > 0x7f800000u;
}

static inline bool tflm_isnanf(float x) {
    return tflm_isnan_bits(tflm_f32_bits(x));
}

// The NaN an x86-64 SSE operation x op y gives when its result is NaN: the
// first NaN operand, quieted, or the default NaN when neither is NaN (inf -
// inf, 0 * inf, ...). ARM's default NaN is positive and its choice among NaN
// operands differs: kernels whose results TFLM's reference leaves to the
// processor call this (or tflm_nan_x86) where a result is NaN.
float tflm_x86_nan(float x, float y);

// Whether the target's own float operations give x86-64's NaNs (SSE: a NaN
// operand's bits quieted, the default NaN of an invalid operation): then
// tflm_nan_x86 has nothing to fix, and its check is left out of the loops.
// The engine's sanitized host build sets it to 0, to test the fix-up.
#ifndef TFLM_NAN_IS_X86
#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE2_MATH__))
#define TFLM_NAN_IS_X86 (1)
#else
#define TFLM_NAN_IS_X86 (0)
#endif
#endif

// The result r of a binary operation on a and b, with the NaN x86 gives
// where r is one: a's quieted, else b's, else the default NaN. (a is the
// first operand: for + and *, where a compiler may swap them, inputs with two
// different NaNs are left aside.)
static inline float tflm_nan_x86(float r, float a, float b) {
#if TFLM_NAN_IS_X86
    (void)a;
    (void)b;
    return r;
#else
    return tflm_isnanf(r) ? tflm_x86_nan(a, b) : r;
#endif
}

#endif // TFLM_ENGINE_FMATH_H
