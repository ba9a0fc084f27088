// What the files of engine/fmath_*.c share: bit casts of doubles, exact
// double-double steps, and glibc's table of 2^(i/32). One function (or a
// family) a file, so that a link taking objects from an archive (the ESP32's
// tflm.mpy, natmod.mk) takes only the functions its kernels call.
#ifndef TFLM_ENGINE_FMATH_IMPL_H
#define TFLM_ENGINE_FMATH_IMPL_H

#include "fmath.h"

static inline uint64_t f64_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof(u));
    return u;
}

static inline double f64_from(uint64_t u) {
    double d;
    memcpy(&d, &u, sizeof(d));
    return d;
}

// 2^(i/32) as a double-double: hi is the correctly rounded double, lo the
// rest (engine/fmath_expf.c).
extern const double tflm_fmath_exp2[32][2];

// Rounds a double in [-2^51, 2^51] to an integer held in its low bits.
#define TFLM_FMATH_SHIFT (0x1.8p+52)

// -- exact arithmetic helpers ---------------------------------------------

// hi + lo == a + b exactly.
static inline double two_sum(double a, double b, double *lo) {
    double s = a + b;
    double bb = s - a;
    *lo = (a - (s - bb)) + (b - bb);
    return s;
}

// Veltkamp split: hi holds the top 26 bits, hi + lo == a.
static inline double split(double a, double *lo) {
    double t = a * 134217729.0; // 2^27 + 1
    double hi = t - (t - a);
    *lo = a - hi;
    return hi;
}

// hi + lo == a * b exactly (no overflow or underflow in our ranges).
static inline double two_prod(double a, double b, double *lo) {
    double p = a * b;
    double ah, al, bh, bl;
    ah = split(a, &al);
    bh = split(b, &bl);
    *lo = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    return p;
}

// a + b rounded to odd: when inexact, the neighbour with an odd last bit.
static inline double add_round_odd(double a, double b) {
    double err;
    double s = two_sum(a, b, &err);
    uint64_t u = f64_bits(s);
    if (err != 0.0 && (u & 1) == 0) {
        // Step one ulp toward the exact value.
        u = ((err > 0.0) == (s > 0.0)) ? u + 1 : u - 1;
        s = f64_from(u);
    }
    return s;
}

// a * b + c rounded once (Boldo and Melquiond's emulation with rounding to
// odd); exact for the normal-range operands glibc's expf gives it
// (fmath_fma.c).
double tflm_fmath_fma(double a, double b, double c);


// Whether y rounds to the same float as every value within 2^-42 of it
// relative: then so does the fused result, which differs from the unfused
// one by far less in every function here (logf, sinf, cosf).
static inline bool rounds_clear(double y) {
    return (float)(y * (1.0 - 0x1p-42)) == (float)(y * (1.0 + 0x1p-42));
}

#endif // TFLM_ENGINE_FMATH_IMPL_H
