// The complex FFT of SignalRfft and SignalIrfft (see signal_fft.h).
#include "kernels/kernels.h"
#include "kernels/signal_fft.h"
#include "kernels/flexbuffer.h"
#include "engine/fmath.h"

#if TFLM_KERNEL_SIGNAL_RFFT || TFLM_KERNEL_SIGNAL_IRFFT

tflm_status_t signal_fft_prepare_io(tflm_prepare_t *p, const char *name, tflm_tinfo_t *in, tflm_tinfo_t *out,
    int32_t *type, int32_t *length) {
    tflm_status_t st = tflm_prep_expect_io(p, 1, 1, 1);
    tflm_flex_map_t opts;
    if (st || (st = tflm_prep_input(p, 0, in)) || (st = tflm_prep_output(p, 0, out))
        || (st = tflm_flex_map(p, &opts)) || (st = tflm_flex_int(p, &opts, "T", 0, 255, type))
        || (st = tflm_flex_int(p, &opts, "fft_length", 0, INT32_MAX, length))) {
        return st;
    }
    if (in->index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input missing");
    }
    const unsigned t = (unsigned)*type;
    if (t != TFLM_INT16 && t != TFLM_INT32 && t != TFLM_FLOAT32) {
        return tflm_prep_unsupported_type(p, name, t);
    }
    if (in->type != t || out->type != t) {
        return tflm_prep_unsupported_type(p, name, in->type != t ? in->type : out->type);
    }
    const int32_t n = *length;
    if (n < SIGNAL_FFT_MIN_LENGTH || n > SIGNAL_FFT_MAX_LENGTH || (n & (n - 1))) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "fft_length %d (supported: powers of two from %d to %d)",
            (int)n, SIGNAL_FFT_MIN_LENGTH, SIGNAL_FFT_MAX_LENGTH);
    }
    return TFLM_OK;
}

static void fft_init(signal_fft_t *f, uint32_t length, bool inverse) {
    memset(f, 0, sizeof(*f));
    f->half = length / 2;
    // radix 4 while it divides, then a 2: KISS's factoring of a power of two
    for (uint32_t n = f->half; n > 1; n /= (n % 4 == 0 ? 4 : 2)) {
        f->two = n % 4 != 0;
        f->levels++;
    }
    f->inverse = inverse;
}

// ---------------------------------------------------------------------------
// Twiddles. KISS computes a phase in double (its rounding included), then
// cos and sin of it with libm. Here: cos and sin of the exact angle (a
// rational number of turns, reduced exactly to [0, pi/4] in integers and
// summed as a Taylor series, no libm on bare metal), then moved by the
// phase's rounding error (cos(a + d) = cos a - d sin a, |d| < 1e-15). For
// every power-of-two length this gives glibc's values rounded to Q15, Q31
// and float (the engine's tests compare them all).

#define FFT_HALF_PI (1.57079632679489661923)
// 2 pi as the double KISS multiplies by, and the rest of it
#define FFT_TWO_PI_HI (6.283185307179586)
#define FFT_TWO_PI_LO (2.4492935982947064e-16)
#define FFT_PI (3.14159265358979323846264338327)

static void fft_sin_cos_small(double x, double *s, double *c) {
    // |x| <= pi/4: the terms after x^27 are below 1e-22
    double x2 = x * x;
    double ts[14], tc[14];
    ts[0] = x;
    tc[0] = 1.0;
    for (int k = 1; k < 14; ++k) {
        ts[k] = -ts[k - 1] * x2 / (double)((2 * k) * (2 * k + 1));
        tc[k] = -tc[k - 1] * x2 / (double)((2 * k - 1) * (2 * k));
    }
    double sn = 0.0, cs = 0.0;
    for (int k = 13; k >= 0; --k) { // smallest terms first
        sn += ts[k];
        cs += tc[k];
    }
    *s = sn;
    *c = cs;
}

// cos and sin of 2 pi num / den.
static void fft_turns(int64_t num, int64_t den, double *c, double *s) {
    int64_t r = num % den;
    if (r < 0) {
        r += den;
    }
    int64_t q = (4 * r) / den;          // quadrant
    int64_t rem = 4 * r - q * den;      // angle within it: pi/2 * rem / den
    double sx, cx;
    if (2 * rem <= den) {
        fft_sin_cos_small(FFT_HALF_PI * ((double)rem / (double)den), &sx, &cx);
    } else {
        double sy, cy;
        fft_sin_cos_small(FFT_HALF_PI * ((double)(den - rem) / (double)den), &sy, &cy);
        sx = cy;
        cx = sy;
    }
    switch (q) {
        case 0: *c = cx; *s = sx; break;
        case 1: *c = -sx; *s = cx; break;
        case 2: *c = -cx; *s = -sx; break;
        default: *c = sx; *s = -cx; break;
    }
}

// a * b as a sum of two doubles, exactly (no fused multiply-add needed).
static void fft_two_prod(double a, double b, double *p, double *e) {
    const double split = 134217729.0; // 2^27 + 1
    double ta = split * a, tb = split * b;
    double ah = ta - (ta - a), al = a - ah;
    double bh = tb - (tb - b), bl = b - bh;
    *p = a * b;
    *e = ((ah * bh - *p) + ah * bl + al * bh) + al * bl;
}

// cos and sin of `phase`, a double within 1e-15 of 2 pi num / den (den a
// power of two, so dividing by it is exact).
static void fft_cos_sin(double phase, int64_t num, int64_t den, double *c, double *s) {
    double c0, s0, p, e;
    fft_turns(num, den, &c0, &s0);
    fft_two_prod(FFT_TWO_PI_HI, (double)num, &p, &e);
    e += FFT_TWO_PI_LO * (double)num;
    p /= (double)den;
    e /= (double)den;
    // phase - (p + e): the first difference is exact (they are within a factor 2)
    double d = (phase - p) - e;
    *c = c0 - s0 * d;
    *s = s0 + c0 * d;
}

typedef void (*fft_put_t)(void *tw, uint32_t i, double c, double s);

// Calls put() with every twiddle's cos and sin, in KISS's order and with
// its phases: -2 pi i / half for the complex FFT, -pi ((i + 1) / half + 1/2)
// for the split; both negated for the inverse.
static void fft_twiddles(const signal_fft_t *f, void *tw, fft_put_t put) {
    const int64_t half = f->half;
    const double sign = f->inverse ? -1.0 : 1.0;
    double c, s;
    for (int64_t i = 0; i < half; ++i) {
        double phase = sign * (-2.0 * FFT_PI * (double)i / (double)half);
        fft_cos_sin(phase, f->inverse ? i : -i, half, &c, &s);
        put(tw, (uint32_t)i, c, s);
    }
    for (int64_t i = 0; i < half / 2; ++i) {
        double phase = sign * (-FFT_PI * ((double)(i + 1) / (double)half + 0.5));
        int64_t num = 2 * (i + 1) + half;
        fft_cos_sin(phase, f->inverse ? num : -num, 4 * half, &c, &s);
        put(tw, (uint32_t)(half + i), c, s);
    }
}

// floor(0.5 + scale * v), as KISS rounds its fixed-point twiddles.
static double fft_fixed(double scale, double v) {
    return tflm_floor(0.5 + scale * v);
}

static void put_q15(void *tw, uint32_t i, double c, double s) {
    signal_c16_t *t = (signal_c16_t *)tw + i;
    t->r = (int16_t)fft_fixed(32767.0, c);
    t->i = (int16_t)fft_fixed(32767.0, s);
}

static void put_q31(void *tw, uint32_t i, double c, double s) {
    signal_c32_t *t = (signal_c32_t *)tw + i;
    t->r = (int32_t)fft_fixed(2147483647.0, c);
    t->i = (int32_t)fft_fixed(2147483647.0, s);
}

static void put_f32(void *tw, uint32_t i, double c, double s) {
    signal_cf_t *t = (signal_cf_t *)tw + i;
    t->r = (float)c;
    t->i = (float)s;
}

void signal_fft_init(signal_fft_t *f, uint32_t length, bool inverse, int32_t type, void *tw) {
    fft_init(f, length, inverse);
    fft_twiddles(f, tw, type == TFLM_INT16 ? put_q15 : type == TFLM_INT32 ? put_q31 : put_f32);
}

void *signal_fft_alloc(tflm_prepare_t *p, uint32_t header, int32_t type, int32_t length, bool inverse) {
    const uint32_t half = (uint32_t)length / 2;
    uint8_t *d = tflm_prep_alloc(p, header + (half + half / 2) * 2 * (uint32_t)tflm_type_size((unsigned)type));
    if (d != NULL) {
        signal_fft_init((signal_fft_t *)(void *)d, (uint32_t)length, inverse, type, d + header);
    }
    return d;
}

// ---------------------------------------------------------------------------
// Stages. Stage l (the last one first) runs `stride` butterflies blocks of
// radix * m values, twiddles taken every `stride`.

static inline uint32_t fft_stride(uint32_t l) {
    return 1u << (2 * l); // the stages before l are all radix 4
}

static inline uint32_t fft_radix(const signal_fft_t *f, uint32_t l) {
    return (f->two && l + 1 == f->levels) ? 2 : 4;
}

static void bfly2_q15(signal_c16_t *x, const signal_c16_t *tw, uint32_t stride, uint32_t m) {
    for (uint32_t k = 0; k < m; ++k) {
        signal_c16_t a = signal_cdiv15(x[k], 2);
        signal_c16_t t = signal_cmul15(signal_cdiv15(x[k + m], 2), tw[k * stride]);
        x[k + m] = signal_csub15(a, t);
        x[k] = signal_cadd15(a, t);
    }
}

static void bfly4_q15(signal_c16_t *x, const signal_c16_t *tw, uint32_t stride, uint32_t m, bool inverse) {
    for (uint32_t k = 0; k < m; ++k) {
        signal_c16_t a0 = signal_cdiv15(x[k], 4);
        signal_c16_t s0 = signal_cmul15(signal_cdiv15(x[k + m], 4), tw[k * stride]);
        signal_c16_t s1 = signal_cmul15(signal_cdiv15(x[k + 2 * m], 4), tw[2 * k * stride]);
        signal_c16_t s2 = signal_cmul15(signal_cdiv15(x[k + 3 * m], 4), tw[3 * k * stride]);
        signal_c16_t s5 = signal_csub15(a0, s1);
        a0 = signal_cadd15(a0, s1);
        signal_c16_t s3 = signal_cadd15(s0, s2);
        signal_c16_t s4 = signal_csub15(s0, s2);
        x[k + 2 * m] = signal_csub15(a0, s3);
        x[k] = signal_cadd15(a0, s3);
        if (inverse) { // s4 turned by +i, else by -i
            x[k + m].r = signal_w16(s5.r - s4.i);
            x[k + m].i = signal_w16(s5.i + s4.r);
            x[k + 3 * m].r = signal_w16(s5.r + s4.i);
            x[k + 3 * m].i = signal_w16(s5.i - s4.r);
        } else {
            x[k + m].r = signal_w16(s5.r + s4.i);
            x[k + m].i = signal_w16(s5.i - s4.r);
            x[k + 3 * m].r = signal_w16(s5.r - s4.i);
            x[k + 3 * m].i = signal_w16(s5.i + s4.r);
        }
    }
}

void signal_fft_run_q15(const signal_fft_t *f, signal_c16_t *x, const signal_c16_t *tw) {
    for (uint32_t l = f->levels; l-- > 0; ) {
        uint32_t stride = fft_stride(l), radix = fft_radix(f, l);
        uint32_t m = f->half / stride / radix;
        for (uint32_t b = 0; b < stride; ++b) {
            if (radix == 4) {
                bfly4_q15(x + b * 4 * m, tw, stride, m, f->inverse);
            } else {
                bfly2_q15(x + b * 2 * m, tw, stride, m);
            }
        }
    }
}

static void bfly2_q31(signal_c32_t *x, const signal_c32_t *tw, uint32_t stride, uint32_t m) {
    for (uint32_t k = 0; k < m; ++k) {
        signal_c32_t a = signal_cdiv31(x[k], 2);
        signal_c32_t t = signal_cmul31(signal_cdiv31(x[k + m], 2), tw[k * stride]);
        x[k + m] = signal_csub31(a, t);
        x[k] = signal_cadd31(a, t);
    }
}

static void bfly4_q31(signal_c32_t *x, const signal_c32_t *tw, uint32_t stride, uint32_t m, bool inverse) {
    for (uint32_t k = 0; k < m; ++k) {
        signal_c32_t a0 = signal_cdiv31(x[k], 4);
        signal_c32_t s0 = signal_cmul31(signal_cdiv31(x[k + m], 4), tw[k * stride]);
        signal_c32_t s1 = signal_cmul31(signal_cdiv31(x[k + 2 * m], 4), tw[2 * k * stride]);
        signal_c32_t s2 = signal_cmul31(signal_cdiv31(x[k + 3 * m], 4), tw[3 * k * stride]);
        signal_c32_t s5 = signal_csub31(a0, s1);
        a0 = signal_cadd31(a0, s1);
        signal_c32_t s3 = signal_cadd31(s0, s2);
        signal_c32_t s4 = signal_csub31(s0, s2);
        x[k + 2 * m] = signal_csub31(a0, s3);
        x[k] = signal_cadd31(a0, s3);
        if (inverse) {
            x[k + m].r = signal_sub31(s5.r, s4.i);
            x[k + m].i = signal_add31(s5.i, s4.r);
            x[k + 3 * m].r = signal_add31(s5.r, s4.i);
            x[k + 3 * m].i = signal_sub31(s5.i, s4.r);
        } else {
            x[k + m].r = signal_add31(s5.r, s4.i);
            x[k + m].i = signal_sub31(s5.i, s4.r);
            x[k + 3 * m].r = signal_sub31(s5.r, s4.i);
            x[k + 3 * m].i = signal_add31(s5.i, s4.r);
        }
    }
}

void signal_fft_run_q31(const signal_fft_t *f, signal_c32_t *x, const signal_c32_t *tw) {
    for (uint32_t l = f->levels; l-- > 0; ) {
        uint32_t stride = fft_stride(l), radix = fft_radix(f, l);
        uint32_t m = f->half / stride / radix;
        for (uint32_t b = 0; b < stride; ++b) {
            if (radix == 4) {
                bfly4_q31(x + b * 4 * m, tw, stride, m, f->inverse);
            } else {
                bfly2_q31(x + b * 2 * m, tw, stride, m);
            }
        }
    }
}

static void bfly2_f32(signal_cf_t *x, const signal_cf_t *tw, uint32_t stride, uint32_t m) {
    for (uint32_t k = 0; k < m; ++k) {
        signal_cf_t t = signal_cmulf(x[k + m], tw[k * stride]);
        x[k + m] = signal_csubf(x[k], t);
        x[k] = signal_caddf(x[k], t);
    }
}

static void bfly4_f32(signal_cf_t *x, const signal_cf_t *tw, uint32_t stride, uint32_t m, bool inverse) {
    for (uint32_t k = 0; k < m; ++k) {
        signal_cf_t s0 = signal_cmulf(x[k + m], tw[k * stride]);
        signal_cf_t s1 = signal_cmulf(x[k + 2 * m], tw[2 * k * stride]);
        signal_cf_t s2 = signal_cmulf(x[k + 3 * m], tw[3 * k * stride]);
        signal_cf_t s5 = signal_csubf(x[k], s1);
        signal_cf_t a0 = signal_caddf(x[k], s1);
        signal_cf_t s3 = signal_caddf(s0, s2);
        signal_cf_t s4 = signal_csubf(s0, s2);
        x[k + 2 * m] = signal_csubf(a0, s3);
        x[k] = signal_caddf(a0, s3);
        if (inverse) {
            x[k + m].r = s5.r - s4.i;
            x[k + m].i = s5.i + s4.r;
            x[k + 3 * m].r = s5.r + s4.i;
            x[k + 3 * m].i = s5.i - s4.r;
        } else {
            x[k + m].r = s5.r + s4.i;
            x[k + m].i = s5.i - s4.r;
            x[k + 3 * m].r = s5.r - s4.i;
            x[k + 3 * m].i = s5.i + s4.r;
        }
    }
}

void signal_fft_run_f32(const signal_fft_t *f, signal_cf_t *x, const signal_cf_t *tw) {
    for (uint32_t l = f->levels; l-- > 0; ) {
        uint32_t stride = fft_stride(l), radix = fft_radix(f, l);
        uint32_t m = f->half / stride / radix;
        for (uint32_t b = 0; b < stride; ++b) {
            if (radix == 4) {
                bfly4_f32(x + b * 4 * m, tw, stride, m, f->inverse);
            } else {
                bfly2_f32(x + b * 2 * m, tw, stride, m);
            }
        }
    }
}

#endif
