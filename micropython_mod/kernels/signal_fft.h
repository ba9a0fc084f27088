// The complex FFT under TFLM's signal library's SignalRfft and SignalIrfft:
// KISS FFT's, which TFLM links, for power-of-two lengths. A half-length
// complex FFT runs over the samples in digit-reversed order, radix-4 stages
// then one radix-2 stage when the length is not a power of 4. int16 and
// int32 are KISS's fixed-point builds (every stage divides by its radix
// with rounding, Q15/Q31 products rounded, sums wrapping as the reference's
// stores and int arithmetic do); float32 its float build. Twiddles are the
// values KISS computes in double (the phase rounded as it rounds it, then
// its cos and sin, rounded to Q15, Q31 or float).
#ifndef TFLM_KERNELS_SIGNAL_FFT_H
#define TFLM_KERNELS_SIGNAL_FFT_H

#include "engine/kernel.h"

#define SIGNAL_FFT_MIN_LENGTH (4)
#define SIGNAL_FFT_MAX_LENGTH (32768)

typedef struct {
    int16_t r, i;
} signal_c16_t;

typedef struct {
    int32_t r, i;
} signal_c32_t;

typedef struct {
    float r, i;
} signal_cf_t;

typedef struct {
    uint32_t half;        // complex FFT length: the real length / 2
    uint8_t levels;       // stages: radix 4, the last one radix 2 when `two`
    uint8_t two;
    uint8_t inverse;
    uint8_t pad;
} signal_fft_t;

// What SignalRfft and SignalIrfft check alike (`name` is the op's): one
// input and one output of the options' type T (int16, int32 or float32),
// fft_length a power of two from SIGNAL_FFT_MIN_LENGTH to
// SIGNAL_FFT_MAX_LENGTH. The caller checks the shapes.
tflm_status_t signal_fft_prepare_io(tflm_prepare_t *p, const char *name, tflm_tinfo_t *in, tflm_tinfo_t *out,
    int32_t *type, int32_t *length);

// The plan of a real FFT of `length` (a power of two from
// SIGNAL_FFT_MIN_LENGTH to SIGNAL_FFT_MAX_LENGTH, checked by the caller) and
// its twiddles of `type` (int16: Q15, int32: Q31, else float32) into tw:
// `half` of the complex FFT, then half / 2 "super twiddles" of the real
// split (3 * half / 2 values).
void signal_fft_init(signal_fft_t *f, uint32_t length, bool inverse, int32_t type, void *tw);

// SignalRfft's and SignalIrfft's kernel data: `header` bytes that start
// with the plan, then the twiddles. NULL: tflm_prep_status(p) says why.
void *signal_fft_alloc(tflm_prepare_t *p, uint32_t header, int32_t type, int32_t length, bool inverse);

// Where the FFT's input `src` (0 .. half - 1) goes before the stages run.
static inline uint32_t signal_fft_position(const signal_fft_t *f, uint32_t src) {
    uint32_t pos = 0, m = f->half;
    for (uint32_t l = 0; l < f->levels; ++l) {
        uint32_t bits = (f->two && l + 1 == f->levels) ? 1 : 2;
        m >>= bits;
        pos += (src & ((1u << bits) - 1)) * m;
        src >>= bits;
    }
    return pos;
}

// The positions of inputs 0, 1, 2, ... in turn (signal_fft_position's
// values) as a digit-reversed counter: each step adds the lowest digit's
// weight and carries, 4/3 digits on average instead of every level.
#define SIGNAL_FFT_MAX_LEVELS (8)

typedef struct {
    uint32_t pos;
    uint32_t levels;
    uint32_t weight[SIGNAL_FFT_MAX_LEVELS]; // of each digit in the position
    uint8_t radix[SIGNAL_FFT_MAX_LEVELS];
    uint8_t digit[SIGNAL_FFT_MAX_LEVELS];
} signal_fft_walk_t;

static inline void signal_fft_walk_start(const signal_fft_t *f, signal_fft_walk_t *w) {
    memset(w, 0, sizeof(*w));
    w->levels = f->levels;
    uint32_t m = f->half;
    for (uint32_t l = 0; l < f->levels; ++l) {
        w->radix[l] = (f->two && l + 1 == f->levels) ? 2 : 4;
        m /= w->radix[l];
        w->weight[l] = m;
    }
}

static inline void signal_fft_walk_next(signal_fft_walk_t *w) {
    for (uint32_t l = 0; l < w->levels; ++l) {
        w->pos += w->weight[l];
        if (++w->digit[l] < w->radix[l]) {
            return;
        }
        w->pos -= w->weight[l] * w->radix[l];
        w->digit[l] = 0;
    }
}

// Every stage's butterflies, in place, on values already at their positions.
void signal_fft_run_q15(const signal_fft_t *f, signal_c16_t *x, const signal_c16_t *tw);
void signal_fft_run_q31(const signal_fft_t *f, signal_c32_t *x, const signal_c32_t *tw);
void signal_fft_run_f32(const signal_fft_t *f, signal_cf_t *x, const signal_cf_t *tw);

// -- the fixed-point arithmetic, shared with the real splits ------------------

// Arithmetic shifts right of signed values (what the reference's >> does):
// >> of a negative value is one on GCC and Clang, which build this module
// (engine/quant.h relies on it too), and a single instruction.
static inline int32_t signal_asr32(int32_t x, uint32_t s) {
    return x >> s;
}
static inline int64_t signal_asr64(int64_t x, uint32_t s) {
    return x >> s;
}

// Stores into int16 / int32 wrap, as the reference's do.
static inline int16_t signal_w16(int32_t x) {
    return (int16_t)(uint16_t)(uint32_t)x;
}
static inline int32_t signal_w32(int64_t x) {
    return (int32_t)(uint32_t)(uint64_t)x;
}

// Q15: a product sum rounded (int32 sums wrap as on the reference's target).
static inline int16_t signal_round15(uint32_t x) {
    return signal_w16(signal_asr32((int32_t)(x + (1u << 14)), 15));
}
static inline int16_t signal_div15(int16_t x, int32_t k) {
    return signal_round15((uint32_t)((int32_t)x * (32767 / k)));
}
static inline signal_c16_t signal_cdiv15(signal_c16_t a, int32_t k) {
    signal_c16_t m = { signal_div15(a.r, k), signal_div15(a.i, k) };
    return m;
}
static inline signal_c16_t signal_cmul15(signal_c16_t a, signal_c16_t b) {
    signal_c16_t m;
    m.r = signal_round15((uint32_t)((int32_t)a.r * b.r) - (uint32_t)((int32_t)a.i * b.i));
    m.i = signal_round15((uint32_t)((int32_t)a.r * b.i) + (uint32_t)((int32_t)a.i * b.r));
    return m;
}
static inline signal_c16_t signal_cadd15(signal_c16_t a, signal_c16_t b) {
    signal_c16_t m = { signal_w16(a.r + b.r), signal_w16(a.i + b.i) };
    return m;
}
static inline signal_c16_t signal_csub15(signal_c16_t a, signal_c16_t b) {
    signal_c16_t m = { signal_w16(a.r - b.r), signal_w16(a.i - b.i) };
    return m;
}

// Q31: products in int64 (two of them never overflow it), rounded.
static inline int32_t signal_round31(int64_t x) {
    return signal_w32(signal_asr64(x + (1 << 30), 31));
}
static inline int32_t signal_div31(int32_t x, int32_t k) {
    return signal_round31((int64_t)x * (2147483647 / k));
}
static inline signal_c32_t signal_cdiv31(signal_c32_t a, int32_t k) {
    signal_c32_t m = { signal_div31(a.r, k), signal_div31(a.i, k) };
    return m;
}
static inline signal_c32_t signal_cmul31(signal_c32_t a, signal_c32_t b) {
    signal_c32_t m;
    m.r = signal_round31((int64_t)a.r * b.r - (int64_t)a.i * b.i);
    m.i = signal_round31((int64_t)a.r * b.i + (int64_t)a.i * b.r);
    return m;
}
static inline int32_t signal_add31(int32_t a, int32_t b) {
    return (int32_t)((uint32_t)a + (uint32_t)b);
}
static inline int32_t signal_sub31(int32_t a, int32_t b) {
    return (int32_t)((uint32_t)a - (uint32_t)b);
}
static inline signal_c32_t signal_cadd31(signal_c32_t a, signal_c32_t b) {
    signal_c32_t m = { signal_add31(a.r, b.r), signal_add31(a.i, b.i) };
    return m;
}
static inline signal_c32_t signal_csub31(signal_c32_t a, signal_c32_t b) {
    signal_c32_t m = { signal_sub31(a.r, b.r), signal_sub31(a.i, b.i) };
    return m;
}

static inline signal_cf_t signal_cmulf(signal_cf_t a, signal_cf_t b) {
    signal_cf_t m = { a.r * b.r - a.i * b.i, a.r * b.i + a.i * b.r };
    return m;
}
static inline signal_cf_t signal_caddf(signal_cf_t a, signal_cf_t b) {
    signal_cf_t m = { a.r + b.r, a.i + b.i };
    return m;
}
static inline signal_cf_t signal_csubf(signal_cf_t a, signal_cf_t b) {
    signal_cf_t m = { a.r - b.r, a.i - b.i };
    return m;
}

// KISS's split of a real transform at bin k of a half spectrum x of n bins,
// the same both ways (SignalRfft's forward, SignalIrfft's inverse with its
// own super twiddle *w): with a = x[k] and b = conj(x[n - k]), both halved
// in fixed point, *even = a + b and *odd = (a - b) * *w. The twiddle is read
// where it is used, as the loops did before (by value, soft-float builds
// kept it in registers across the float calls).
static TFLM_ALWAYS_INLINE void signal_split15(const signal_c16_t *x, uint32_t n, uint32_t k, const signal_c16_t *w,
    signal_c16_t *even, signal_c16_t *odd) {
    signal_c16_t a = signal_cdiv15(x[k], 2);
    signal_c16_t b = { x[n - k].r, signal_w16(-(int32_t)x[n - k].i) };
    b = signal_cdiv15(b, 2);
    *even = signal_cadd15(a, b);
    *odd = signal_cmul15(signal_csub15(a, b), *w);
}
static TFLM_ALWAYS_INLINE void signal_split31(const signal_c32_t *x, uint32_t n, uint32_t k, const signal_c32_t *w,
    signal_c32_t *even, signal_c32_t *odd) {
    signal_c32_t a = signal_cdiv31(x[k], 2);
    signal_c32_t b = { x[n - k].r, signal_sub31(0, x[n - k].i) };
    b = signal_cdiv31(b, 2);
    *even = signal_cadd31(a, b);
    *odd = signal_cmul31(signal_csub31(a, b), *w);
}
static TFLM_ALWAYS_INLINE void signal_splitf(const signal_cf_t *x, uint32_t n, uint32_t k, const signal_cf_t *w,
    signal_cf_t *even, signal_cf_t *odd) {
    signal_cf_t a = x[k];
    signal_cf_t b = { x[n - k].r, -x[n - k].i };
    *even = signal_caddf(a, b);
    *odd = signal_cmulf(signal_csubf(a, b), *w);
}

#endif // TFLM_KERNELS_SIGNAL_FFT_H
