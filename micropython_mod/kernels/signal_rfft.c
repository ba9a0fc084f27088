// SignalRfft (int16): the real FFT of TFLM's signal library, which is KISS
// FFT's fixed-point real transform: a complex FFT of half the length over
// sample pairs (radix-4 stages, then one radix-2 if needed, every stage
// dividing by its radix with rounding, 16-bit results wrapping), then the
// split into the real spectrum with "super twiddles". Twiddles are
// round(32767 * cos/sin) of the same angles. Rows of the input are
// transformed one by one, each zero-padded to fft_length.
#include "kernels/kernels.h"
#include "kernels/flexbuffer.h"

#if TFLM_KERNEL_SIGNAL_RFFT

#define RFFT_MAX_LEVELS (16)
#define RFFT_MAX_LENGTH (32768)

typedef struct {
    uint32_t fft_length;
    uint32_t half;          // complex FFT length: fft_length / 2
    uint32_t input_length;  // samples per input row
    uint32_t rows;
    uint32_t levels;
    uint8_t radix[RFFT_MAX_LEVELS];
    int16_t tw[];           // half twiddles, then half / 2 super twiddles (re, im pairs)
} rfft_data_t;

// Scratch of the int16 transform: one complex (2 x int16) per bin of the half-length FFT.
static inline uint32_t signal_rfft_int16_scratch_bytes(uint32_t fft_length) {
    return fft_length * 2;
}

// ---------------------------------------------------------------------------
// Twiddles: cos and sin of 2 pi * num / den in double precision (no libm on
// bare metal): the angle is reduced exactly in integers to [0, pi/4].

#define RFFT_HALF_PI (1.57079632679489661923)

static void rfft_sin_cos_small(double x, double *s, double *c) {
    // Taylor series, |x| <= pi/4: the terms after x^25 are below 1e-22
    double x2 = x * x;
    double sn = 0.0, cs = 0.0;
    // the terms one from the other: x^(2k+1)/(2k+1)!, x^(2k)/(2k)!
    double ts[14], tc[14];
    ts[0] = x;
    tc[0] = 1.0;
    for (int k = 1; k < 14; ++k) {
        ts[k] = -ts[k - 1] * x2 / (double)((2 * k) * (2 * k + 1));
        tc[k] = -tc[k - 1] * x2 / (double)((2 * k - 1) * (2 * k));
    }
    // sum the smallest terms first
    for (int k = 13; k >= 0; --k) {
        sn += ts[k];
        cs += tc[k];
    }
    *s = sn;
    *c = cs;
}

static void rfft_turns(int64_t num, int64_t den, double *c, double *s) {
    int64_t r = num % den;
    if (r < 0) {
        r += den;
    }
    int64_t q = (4 * r) / den;          // quadrant
    int64_t rem = 4 * r - q * den;      // angle within it: pi/2 * rem / den
    double sx, cx;
    if (2 * rem <= den) {
        rfft_sin_cos_small(RFFT_HALF_PI * ((double)rem / (double)den), &sx, &cx);
    } else {
        double sy, cy;
        rfft_sin_cos_small(RFFT_HALF_PI * ((double)(den - rem) / (double)den), &sy, &cy);
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

// floor(0.5 + 32767 * v), as the reference rounds its twiddles.
static int16_t rfft_q15(double v) {
    double x = 0.5 + 32767.0 * v;
    int32_t i = (int32_t)x;
    if ((double)i > x) {
        --i;
    }
    return (int16_t)i;
}

tflm_status_t tflm_signal_rfft_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 1, 1, 1);
    tflm_tinfo_t in, out;
    tflm_flex_map_t opts;
    int32_t type, length;
    if (st || (st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_output(p, 0, &out))
        || (st = tflm_flex_map(p, &opts)) || (st = tflm_flex_int(p, &opts, "T", 0, 255, &type))
        || (st = tflm_flex_int(p, &opts, "fft_length", 0, INT32_MAX, &length))) {
        return st;
    }
    if (in.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input missing");
    }
    if (type != TFLM_INT16 || in.type != TFLM_INT16 || out.type != TFLM_INT16) {
        return tflm_prep_unsupported_type(p, "SignalRfft", type != TFLM_INT16 ? (unsigned)type : (in.type != TFLM_INT16 ? in.type : out.type));
    }
    if (length < 4 || length > RFFT_MAX_LENGTH || (length & (length - 1))) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "fft_length %d (supported: powers of two from 4 to %d)",
            (int)length, RFFT_MAX_LENGTH);
    }
    uint32_t half = (uint32_t)length / 2;
    if (in.ndims < 1 || in.ndims != out.ndims || in.dims[in.ndims - 1] <= 0 || in.dims[in.ndims - 1] > length) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input rows must have 1 to fft_length (%d) samples", (int)length);
    }
    uint32_t in_len = (uint32_t)in.dims[in.ndims - 1];
    uint32_t rows = in.elements / in_len;
    if ((uint32_t)out.dims[out.ndims - 1] != 2 * (half + 1) || out.elements != rows * 2 * (half + 1)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output rows must hold %u complex bins", (unsigned)(half + 1));
    }
    uint32_t scratch;
    if ((st = tflm_prep_scratch(p, signal_rfft_int16_scratch_bytes((uint32_t)length), &scratch))) {
        return st;
    }
    uint32_t n_tw = half + half / 2;
    rfft_data_t *d = tflm_prep_alloc(p, sizeof(rfft_data_t) + 4 * n_tw);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->fft_length = (uint32_t)length;
    d->half = half;
    d->input_length = in_len;
    d->rows = rows;
    // radix 4 while it divides, then a radix 2 (powers of two only)
    d->levels = 0;
    for (uint32_t n = half; n > 1; ) {
        uint32_t r = n % 4 == 0 ? 4 : 2;
        d->radix[d->levels++] = (uint8_t)r;
        n /= r;
    }
    for (uint32_t i = 0; i < half; ++i) {
        double c, s;
        rfft_turns(-(int64_t)i, half, &c, &s);
        d->tw[2 * i] = rfft_q15(c);
        d->tw[2 * i + 1] = rfft_q15(s);
    }
    int16_t *super = d->tw + 2 * half;
    for (uint32_t i = 0; i < half / 2; ++i) {
        // angle -pi * ((i + 1) / half + 1/2), in turns -(2 (i + 1) + half) / (4 half)
        double c, s;
        rfft_turns(-(int64_t)(2 * (i + 1) + half), 4 * (int64_t)half, &c, &s);
        super[2 * i] = rfft_q15(c);
        super[2 * i + 1] = rfft_q15(s);
    }
    return TFLM_OK;
}

// 16-bit results wrap, as the reference's stores into int16 do.
static inline int16_t w16(int32_t x) {
    return (int16_t)(uint16_t)(uint32_t)x;
}

static inline int32_t asr(int32_t x, uint32_t s) {
    return x < 0 ? (int32_t)~(~(uint32_t)x >> s) : (int32_t)((uint32_t)x >> s);
}

// Q15 rounding of a product sum (int32 sums wrap as on the reference's target).
static inline int16_t sround(uint32_t x) {
    return w16(asr((int32_t)(x + (1u << 14)), 15));
}

static inline int16_t fixdiv(int16_t x, int32_t k) {
    return sround((uint32_t)((int32_t)x * (32767 / k)));
}

typedef struct {
    int16_t r, i;
} cpx_t;

static inline cpx_t cmul(cpx_t a, const int16_t *b) {
    cpx_t m;
    m.r = sround((uint32_t)((int32_t)a.r * b[0]) - (uint32_t)((int32_t)a.i * b[1]));
    m.i = sround((uint32_t)((int32_t)a.r * b[1]) + (uint32_t)((int32_t)a.i * b[0]));
    return m;
}

static inline cpx_t cadd(cpx_t a, cpx_t b) {
    cpx_t m = { w16(a.r + b.r), w16(a.i + b.i) };
    return m;
}

static inline cpx_t csub(cpx_t a, cpx_t b) {
    cpx_t m = { w16(a.r - b.r), w16(a.i - b.i) };
    return m;
}

static inline cpx_t cfixdiv(cpx_t a, int32_t k) {
    cpx_t m = { fixdiv(a.r, k), fixdiv(a.i, k) };
    return m;
}

static void bfly2(cpx_t *f, const int16_t *tw, uint32_t fstride, uint32_t m) {
    for (uint32_t k = 0; k < m; ++k) {
        cpx_t a = cfixdiv(f[k], 2);
        cpx_t b = cfixdiv(f[k + m], 2);
        cpx_t t = cmul(b, tw + 2 * (k * fstride));
        f[k + m] = csub(a, t);
        f[k] = cadd(a, t);
    }
}

static void bfly4(cpx_t *f, const int16_t *tw, uint32_t fstride, uint32_t m) {
    for (uint32_t k = 0; k < m; ++k) {
        cpx_t a0 = cfixdiv(f[k], 4);
        cpx_t a1 = cfixdiv(f[k + m], 4);
        cpx_t a2 = cfixdiv(f[k + 2 * m], 4);
        cpx_t a3 = cfixdiv(f[k + 3 * m], 4);
        cpx_t s0 = cmul(a1, tw + 2 * (k * fstride));
        cpx_t s1 = cmul(a2, tw + 2 * (2 * k * fstride));
        cpx_t s2 = cmul(a3, tw + 2 * (3 * k * fstride));
        cpx_t s5 = csub(a0, s1);
        a0 = cadd(a0, s1);
        cpx_t s3 = cadd(s0, s2);
        cpx_t s4 = csub(s0, s2);
        f[k + 2 * m] = csub(a0, s3);
        f[k] = cadd(a0, s3);
        f[k + m].r = w16(s5.r + s4.i);
        f[k + m].i = w16(s5.i - s4.r);
        f[k + 3 * m].r = w16(s5.r - s4.i);
        f[k + 3 * m].i = w16(s5.i + s4.r);
    }
}

tflm_status_t tflm_signal_rfft_eval(tflm_eval_t *e) {
    const rfft_data_t *d = e->data;
    const uint8_t *in = e->in[0];
    int16_t *out = e->out[0];
    cpx_t *f = e->scratch[0];
    uint32_t half = d->half;
    const int16_t *super = d->tw + 2 * half;
    for (uint32_t row = 0; row < d->rows; ++row) {
        const uint8_t *x = in + 2 * row * d->input_length;
        int16_t *y = out + row * 2 * (half + 1);
        // samples in mixed-radix digit-reversed order (the pairs are complex
        // inputs), zero past the row's end
        for (uint32_t pos = 0; pos < half; ++pos) {
            uint32_t rest = pos, src = 0, stride = 1, m = half;
            for (uint32_t l = 0; l < d->levels; ++l) {
                m /= d->radix[l];
                src += (rest / m) * stride;
                rest %= m;
                stride *= d->radix[l];
            }
            uint32_t j = 2 * src;
            f[pos].r = j < d->input_length ? (int16_t)tflm_rd_u16(x + 2 * j) : 0;
            f[pos].i = j + 1 < d->input_length ? (int16_t)tflm_rd_u16(x + 2 * j + 2) : 0;
        }
        // butterflies, innermost stage first
        for (uint32_t l = d->levels; l-- > 0; ) {
            uint32_t fstride = 1;
            for (uint32_t k = 0; k < l; ++k) {
                fstride *= d->radix[k];
            }
            uint32_t m = half / fstride / d->radix[l];
            uint32_t block = d->radix[l] * m;
            for (uint32_t b = 0; b < fstride; ++b) {
                if (d->radix[l] == 4) {
                    bfly4(f + b * block, d->tw, fstride, m);
                } else {
                    bfly2(f + b * block, d->tw, fstride, m);
                }
            }
        }
        // split into the real signal's spectrum
        cpx_t dc = cfixdiv(f[0], 2);
        y[0] = w16(dc.r + dc.i);
        y[1] = 0;
        y[2 * half] = w16(dc.r - dc.i);
        y[2 * half + 1] = 0;
        for (uint32_t k = 1; k <= half / 2; ++k) {
            cpx_t fpk = cfixdiv(f[k], 2);
            cpx_t fpnk = { f[half - k].r, w16(-(int32_t)f[half - k].i) };
            fpnk = cfixdiv(fpnk, 2);
            cpx_t f1 = cadd(fpk, fpnk);
            cpx_t f2 = csub(fpk, fpnk);
            cpx_t tw = cmul(f2, super + 2 * (k - 1));
            y[2 * k] = w16(asr(f1.r + tw.r, 1));
            y[2 * k + 1] = w16(asr(f1.i + tw.i, 1));
            y[2 * (half - k)] = w16(asr(f1.r - tw.r, 1));
            y[2 * (half - k) + 1] = w16(asr(tw.i - f1.i, 1));
        }
    }
    return TFLM_OK;
}

#endif
