// engine/fmath*.c against the host's glibc: expf (and both of its ways), tanhf, expm1f, logf, sinf,
// cosf and sqrtf over all 2^32 float inputs (bit-exact, NaN payloads
// included; `make test-fmath`) or every STRIDE-th (`make test`: 7), exp (double) over a dense random sample and the softmax-table
// range (within 1 ulp, nearly always equal), sqrt (double) over a random
// sample (bit-exact), fmodf (bit-exact, NaNs included) and floor over random
// and special inputs. Exits non-zero on any float mismatch, any exp error
// above 1 ulp or any sqrt, fmodf or floor difference.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/fmath.h"

// Through pointers so the compiler cannot fold or inline libm's results.
static float (*volatile libm_expf)(float) = expf;
static float (*volatile libm_tanhf)(float) = tanhf;
static double (*volatile libm_exp)(double) = exp;
static float (*volatile libm_fmodf)(float, float) = fmodf;
static double (*volatile libm_floor)(double) = floor;
static float (*volatile libm_expm1f)(float) = expm1f;
static float (*volatile libm_logf)(float) = logf;
static float (*volatile libm_sinf)(float) = sinf;
static float (*volatile libm_cosf)(float) = cosf;
static float (*volatile libm_sqrtf)(float) = sqrtf;
static double (*volatile libm_sqrt)(double) = sqrt;

// The float functions checked input by input.
static const struct {
    const char *name;
    float (*ours)(float);
    float (*const volatile *ref)(float);
} FLOAT_FUNCS[] = {
    { "expf", tflm_expf, &libm_expf },
    // Both of its ways, whichever this host takes.
    { "expf (fixed point)", tflm_expf_fixed, &libm_expf },
    { "expf (double)", tflm_expf_double, &libm_expf },
    { "tanhf", tflm_tanhf, &libm_tanhf },
    { "expm1f", tflm_expm1f, &libm_expm1f },
    { "logf", tflm_logf, &libm_logf },
    { "sinf", tflm_sinf, &libm_sinf },
    { "cosf", tflm_cosf, &libm_cosf },
    { "sqrtf", tflm_sqrtf, &libm_sqrtf },
};
#define N_FLOAT_FUNCS (sizeof(FLOAT_FUNCS) / sizeof(FLOAT_FUNCS[0]))

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static uint64_t f64_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof(u));
    return u;
}

// Every `stride`-th float input (1: all 2^32), starting at `first`.
static unsigned long long check_float(const char *name, float (*ours)(float), float (*ref)(float), uint32_t stride,
    uint32_t first) {
    unsigned long long bad = 0, n = 0;
    for (uint64_t v = first; v < 0x100000000ull; v += stride, ++n) {
        uint32_t u = (uint32_t)v;
        float x;
        memcpy(&x, &u, sizeof(x));
        uint32_t a = f32_bits(ours(x)), b = f32_bits(ref(x));
        if (a != b && bad++ < 10) {
            printf("  %s(%a) [0x%08x]: ours %a [0x%08x], glibc %a [0x%08x]\n", name, (double)x, (unsigned)u,
                (double)ours(x), (unsigned)a, (double)ref(x), (unsigned)b);
        }
    }
    if (stride == 1) {
        printf("%s: %llu mismatches over all 2^32 inputs\n", name, bad);
    } else {
        printf("%s: %llu mismatches over %llu inputs (stride %u, from %u)\n", name, bad, n, (unsigned)stride,
            (unsigned)first);
    }
    return bad;
}

// Distance in ulps between two finite doubles of the same sign (or zero).
static uint64_t ulp_distance(double a, double b) {
    int64_t ia = (int64_t)f64_bits(a), ib = (int64_t)f64_bits(b);
    return ia > ib ? (uint64_t)(ia - ib) : (uint64_t)(ib - ia);
}

static uint64_t next_random(uint64_t *state) {
    // xorshift64*
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 2685821657736338717ull;
}

static int check_exp(void) {
    unsigned long long n = 0, differ = 0, far = 0;
    uint64_t state = 88172645463325252ull;
    for (long i = 0; i < 20000000; ++i) {
        double x;
        if (i < 4000000) {
            // The softmax-table range, densely.
            x = -20.0 + 20.0 * (double)(next_random(&state) >> 11) * 0x1p-53;
        } else if (i < 4100000) {
            // Around the overflow and underflow edges.
            x = (i & 1 ? 709.78 : -745.2) + 0.01 * (double)(next_random(&state) >> 11) * 0x1p-53;
        } else if (i < 4200000) {
            // Tiny arguments.
            uint64_t u = (next_random(&state) & 0x800fffffffffffffull) | ((uint64_t)(960 + i % 64) << 52);
            memcpy(&x, &u, sizeof(x));
        } else {
            x = -750.0 + 1462.0 * (double)(next_random(&state) >> 11) * 0x1p-53;
        }
        double a = tflm_exp(x), b = libm_exp(x);
        ++n;
        if (f64_bits(a) != f64_bits(b)) {
            ++differ;
            if (ulp_distance(a, b) > 1 && far++ < 10) {
                printf("  exp(%a): ours %a, glibc %a\n", x, a, b);
            }
        }
    }
    static const double special[] = { 0.0, -0.0, 1.0, -1.0, 709.782712893384, 709.79, -745.13321910194122,
        -745.2, -708.4, -709.0, -740.0, 1e-300, -1e-300 };
    for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); ++i) {
        double a = tflm_exp(special[i]), b = libm_exp(special[i]);
        ++n;
        if (f64_bits(a) != f64_bits(b)) {
            ++differ;
            if (ulp_distance(a, b) > 1 && far++ < 10) {
                printf("  exp(%a): ours %a, glibc %a\n", special[i], a, b);
            }
        }
    }
    double inf = (double)INFINITY;
    if (f64_bits(tflm_exp(inf)) != f64_bits(libm_exp(inf)) || tflm_exp(-inf) != 0.0 || !isnan(tflm_exp((double)NAN))) {
        printf("  exp: inf/nan handling differs\n");
        ++far;
    }
    printf("exp: %llu of %llu samples differ from glibc by one ulp, %llu by more\n", differ, n, far);
    return far != 0;
}

// fmodf over pairs of random bit patterns (every class: infinities,
// subnormals), pairs of nearby magnitudes, and pairs of special values. Not
// NaN operands: TFLM's std::fmod (x87 code GCC inlines) and glibc's fmodf
// return different ones, and the op tests check tflm_fmodf's against TFLM.
static int check_fmodf(void) {
    static const uint32_t special[] = { 0x0, 0x80000000u, 0x1, 0x80000001u, 0x7fffff, 0x800000, 0x3f800000u,
        0xbf800000u, 0x7f7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7fc00001u, 0xffc00002u,
        0x7f800001u, 0xff800003u, 0x7fffffffu, 0x40490fdbu, 0x4b800001u };
    const unsigned n_special = sizeof(special) / sizeof(special[0]);
    unsigned long long bad = 0, n = 0;
    uint64_t state = 12345;
    for (unsigned long long k = 0; k < 4000000ull + n_special * n_special; ++k) {
        uint32_t ux, uy;
        if (k < n_special * n_special) {
            ux = special[k / n_special];
            uy = special[k % n_special];
        } else {
            ux = (uint32_t)next_random(&state);
            uy = (uint32_t)next_random(&state);
            if (k & 1) {
                // Exponents close together: long remainders, not just x.
                uy = (ux & 0xff800000u) - (((uint32_t)next_random(&state) & 0xf) << 23) + (uy & 0x807fffffu);
            }
        }
        if ((ux & 0x7fffffffu) > 0x7f800000u || (uy & 0x7fffffffu) > 0x7f800000u) {
            continue;
        }
        float x, y;
        memcpy(&x, &ux, sizeof(x));
        memcpy(&y, &uy, sizeof(y));
        uint32_t a = f32_bits(tflm_fmodf(x, y)), b = f32_bits(libm_fmodf(x, y));
        ++n;
        if (a != b && bad++ < 10) {
            printf("  fmodf(0x%08x, 0x%08x): ours 0x%08x, glibc 0x%08x\n", (unsigned)ux, (unsigned)uy, (unsigned)a,
                (unsigned)b);
        }
    }
    printf("fmodf: %llu mismatches over %llu pairs\n", bad, n);
    unsigned long long bad_floor = 0;
    for (unsigned k = 0; k < 2000000u; ++k) {
        uint64_t u = next_random(&state);
        double d;
        memcpy(&d, &u, sizeof(d));
        if (k & 1) {
            d = (double)(int64_t)(u >> 40) / 1024.0 - 8192.0; // many near integers, both signs
        }
        if (f64_bits(tflm_floor(d)) != f64_bits(libm_floor(d)) && bad_floor++ < 10) {
            printf("  floor(%a) differs\n", d);
        }
    }
    printf("floor: %llu mismatches\n", bad_floor);
    return bad != 0 || bad_floor != 0;
}

// sqrt (double), correctly rounded as sqrtsd: random doubles of every kind
// (subnormals among them) and the special values.
static int check_sqrt(void) {
    unsigned long long bad = 0;
    uint64_t state = 88172645463325252ull;
    for (long i = 0; i < 4000000; ++i) {
        uint64_t u = next_random(&state);
        if (i % 3 == 0) {
            u &= 0x7fffffffffffffffull;
        }
        if (i % 7 == 0) {
            u &= 0x800fffffffffffffull;
        }
        double x;
        memcpy(&x, &u, sizeof(x));
        if (f64_bits(tflm_sqrt(x)) != f64_bits(libm_sqrt(x)) && bad++ < 10) {
            printf("  sqrt(%a): ours %a, glibc %a\n", x, tflm_sqrt(x), libm_sqrt(x));
        }
    }
    static const double special[] = { 0.0, -0.0, 1.0, 2.0, 4.0, -1.0, 5e-324, 0x1.fffffffffffffp1023 };
    for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); ++i) {
        bad += f64_bits(tflm_sqrt(special[i])) != f64_bits(libm_sqrt(special[i]));
    }
    double inf = (double)INFINITY;
    bad += f64_bits(tflm_sqrt(inf)) != f64_bits(libm_sqrt(inf));
    bad += f64_bits(tflm_sqrt(-inf)) != f64_bits(libm_sqrt(-inf));
    bad += f64_bits(tflm_sqrt((double)NAN)) != f64_bits(libm_sqrt((double)NAN));
    printf("sqrt: %llu mismatches\n", bad);
    return bad != 0;
}

int main(int argc, char **argv) {
    // test_fmath [STRIDE]: every STRIDE-th float input (all of them without;
    // "quick" is 97, for development). Each function starts at its own
    // offset, so that over the functions the runs cover other inputs.
    uint32_t stride = 1;
    if (argc > 1) {
        stride = strcmp(argv[1], "quick") == 0 ? 97u : (uint32_t)strtoul(argv[1], NULL, 0);
        if (stride == 0) {
            fprintf(stderr, "usage: test_fmath [STRIDE|quick]\n");
            return 2;
        }
    }
    int fail = 0;
    for (size_t f = 0; f < N_FLOAT_FUNCS; ++f) {
        fail |= check_float(FLOAT_FUNCS[f].name, FLOAT_FUNCS[f].ours, *FLOAT_FUNCS[f].ref, stride,
            (uint32_t)(f % stride)) != 0;
    }
    fail |= check_exp();
    fail |= check_fmodf();
    fail |= check_sqrt();
    printf(fail ? "test_fmath: FAILED\n" : "test_fmath: OK\n");
    return fail;
}
