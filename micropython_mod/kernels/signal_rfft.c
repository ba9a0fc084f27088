// SignalRfft: the real FFT of TFLM's signal library, KISS FFT's real
// transform: a complex FFT of half the length over sample pairs
// (signal_fft.c), then the split into the real signal's spectrum with
// "super twiddles". int16 and int32 are KISS's fixed-point builds, float32
// its float build. Rows of the input are transformed one by one, each
// zero-padded to fft_length; each output row holds fft_length / 2 + 1
// complex bins.
#include "kernels/kernels.h"
#include "kernels/signal_fft.h"

#if TFLM_KERNEL_SIGNAL_RFFT

typedef struct {
    signal_fft_t fft;
    uint32_t type;
    uint32_t input_length;  // samples per input row
    uint32_t rows;
    uint32_t pad;
    uint8_t tw[];           // half twiddles, then half / 2 super twiddles
} rfft_data_t;

tflm_status_t tflm_signal_rfft_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, out;
    int32_t type, length;
    tflm_status_t st = signal_fft_prepare_io(p, "SignalRfft", &in, &out, &type, &length);
    if (st) {
        return st;
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
    // the FFT's work buffer: half complex values, fft_length samples (TFLM's scratch)
    uint32_t size = (uint32_t)tflm_type_size((unsigned)type);
    uint32_t scratch;
    if ((st = tflm_prep_scratch(p, (uint32_t)length * size, &scratch))) {
        return st;
    }
    rfft_data_t *d = signal_fft_alloc(p, offsetof(rfft_data_t, tw), type, length, false);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->type = (uint32_t)type;
    d->input_length = in_len;
    d->rows = rows;
    d->pad = 0;
    return TFLM_OK;
}

static void rfft_row_q15(const rfft_data_t *d, const int16_t *x, signal_c16_t *f, signal_c16_t *y) {
    const uint32_t half = d->fft.half;
    const signal_c16_t *tw = (const signal_c16_t *)d->tw, *super = tw + half;
    signal_fft_walk_t w;
    signal_fft_walk_start(&d->fft, &w);
    // Sample pairs to their positions: the whole ones, then zeros past the row.
    const uint32_t pairs = TFLM_MIN(half, d->input_length / 2);
    uint32_t src = 0;
    for (; src < pairs; ++src) {
        signal_c16_t v = { x[2 * src], x[2 * src + 1] };
        f[w.pos] = v;
        signal_fft_walk_next(&w);
    }
    for (; src < half; ++src) {
        signal_c16_t v = { 2 * src < d->input_length ? x[2 * src] : 0, 0 };
        f[w.pos] = v;
        signal_fft_walk_next(&w);
    }
    signal_fft_run_q15(&d->fft, f, tw);
    signal_c16_t dc = signal_cdiv15(f[0], 2);
    y[0].r = signal_w16(dc.r + dc.i);
    y[0].i = 0;
    y[half].r = signal_w16(dc.r - dc.i);
    y[half].i = 0;
    for (uint32_t k = 1; k <= half / 2; ++k) {
        signal_c16_t f1, t;
        signal_split15(f, half, k, &super[k - 1], &f1, &t);
        // halved in int, then stored (wrapping) as int16
        y[k].r = signal_w16(signal_asr32(f1.r + t.r, 1));
        y[k].i = signal_w16(signal_asr32(f1.i + t.i, 1));
        y[half - k].r = signal_w16(signal_asr32(f1.r - t.r, 1));
        y[half - k].i = signal_w16(signal_asr32(t.i - f1.i, 1));
    }
}

static void rfft_row_q31(const rfft_data_t *d, const int32_t *x, signal_c32_t *f, signal_c32_t *y) {
    const uint32_t half = d->fft.half;
    const signal_c32_t *tw = (const signal_c32_t *)d->tw, *super = tw + half;
    signal_fft_walk_t w;
    signal_fft_walk_start(&d->fft, &w);
    // Sample pairs to their positions: the whole ones, then zeros past the row.
    const uint32_t pairs = TFLM_MIN(half, d->input_length / 2);
    uint32_t src = 0;
    for (; src < pairs; ++src) {
        signal_c32_t v = { x[2 * src], x[2 * src + 1] };
        f[w.pos] = v;
        signal_fft_walk_next(&w);
    }
    for (; src < half; ++src) {
        signal_c32_t v = { 2 * src < d->input_length ? x[2 * src] : 0, 0 };
        f[w.pos] = v;
        signal_fft_walk_next(&w);
    }
    signal_fft_run_q31(&d->fft, f, tw);
    signal_c32_t dc = signal_cdiv31(f[0], 2);
    y[0].r = signal_add31(dc.r, dc.i);
    y[0].i = 0;
    y[half].r = signal_sub31(dc.r, dc.i);
    y[half].i = 0;
    for (uint32_t k = 1; k <= half / 2; ++k) {
        signal_c32_t f1, t;
        signal_split31(f, half, k, &super[k - 1], &f1, &t);
        // int32 sums (wrapping), then halved
        y[k].r = signal_asr32(signal_add31(f1.r, t.r), 1);
        y[k].i = signal_asr32(signal_add31(f1.i, t.i), 1);
        y[half - k].r = signal_asr32(signal_sub31(f1.r, t.r), 1);
        y[half - k].i = signal_asr32(signal_sub31(t.i, f1.i), 1);
    }
}

static void rfft_row_f32(const rfft_data_t *d, const float *x, signal_cf_t *f, signal_cf_t *y) {
    const uint32_t half = d->fft.half;
    const signal_cf_t *tw = (const signal_cf_t *)d->tw, *super = tw + half;
    signal_fft_walk_t w;
    signal_fft_walk_start(&d->fft, &w);
    // Sample pairs to their positions: the whole ones, then zeros past the row.
    const uint32_t pairs = TFLM_MIN(half, d->input_length / 2);
    uint32_t src = 0;
    for (; src < pairs; ++src) {
        signal_cf_t v = { x[2 * src], x[2 * src + 1] };
        f[w.pos] = v;
        signal_fft_walk_next(&w);
    }
    for (; src < half; ++src) {
        signal_cf_t v = { 2 * src < d->input_length ? x[2 * src] : 0.0f, 0.0f };
        f[w.pos] = v;
        signal_fft_walk_next(&w);
    }
    signal_fft_run_f32(&d->fft, f, tw);
    signal_cf_t dc = f[0];
    y[0].r = dc.r + dc.i;
    y[0].i = 0.0f;
    y[half].r = dc.r - dc.i;
    y[half].i = 0.0f;
    for (uint32_t k = 1; k <= half / 2; ++k) {
        signal_cf_t f1, t;
        signal_splitf(f, half, k, &super[k - 1], &f1, &t);
        y[k].r = (f1.r + t.r) * 0.5f;
        y[k].i = (f1.i + t.i) * 0.5f;
        y[half - k].r = (f1.r - t.r) * 0.5f;
        y[half - k].i = (t.i - f1.i) * 0.5f;
    }
}

tflm_status_t tflm_signal_rfft_eval(tflm_eval_t *e) {
    const rfft_data_t *d = e->data;
    const uint32_t bins = d->fft.half + 1;
    for (uint32_t row = 0; row < d->rows; ++row) {
        if (d->type == TFLM_INT16) {
            rfft_row_q15(d, (const int16_t *)e->in[0] + row * d->input_length, e->scratch[0],
                (signal_c16_t *)e->out[0] + row * bins);
        } else if (d->type == TFLM_INT32) {
            rfft_row_q31(d, (const int32_t *)e->in[0] + row * d->input_length, e->scratch[0],
                (signal_c32_t *)e->out[0] + row * bins);
        } else {
            rfft_row_f32(d, (const float *)e->in[0] + row * d->input_length, e->scratch[0],
                (signal_cf_t *)e->out[0] + row * bins);
        }
    }
    return TFLM_OK;
}

#endif
