// SignalIrfft: the inverse real FFT of TFLM's signal library, KISS FFT's:
// the fft_length / 2 + 1 complex bins of each input row are folded into a
// half-length complex spectrum with the inverse "super twiddles", whose
// inverse complex FFT (signal_fft.c) gives the row's fft_length samples.
// int16 and int32 are KISS's fixed-point builds (each stage divides by its
// radix, so the result is the inverse transform divided by the length, as
// TFLM's); float32 is KISS's float build divided by fft_length afterwards,
// as TFLM divides it. The folded spectrum is written straight to the
// positions the FFT reads it from, in the output row: no work buffer.
#include "kernels/kernels.h"
#include "kernels/signal_fft.h"

#if TFLM_KERNEL_SIGNAL_IRFFT

typedef struct {
    signal_fft_t fft;
    uint32_t type;
    uint32_t length;        // fft_length: samples per output row
    uint32_t input_bins;    // complex values per input row
    uint32_t rows;
    uint8_t tw[];           // half twiddles, then half / 2 super twiddles
} irfft_data_t;

tflm_status_t tflm_signal_irfft_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, out;
    int32_t type, length;
    tflm_status_t st = signal_fft_prepare_io(p, "SignalIrfft", &in, &out, &type, &length);
    if (st) {
        return st;
    }
    uint32_t half = (uint32_t)length / 2;
    int32_t in_last = in.ndims ? in.dims[in.ndims - 1] : 0;
    if (in.ndims < 1 || in.ndims != out.ndims || in_last <= 0 || (in_last & 1) || (uint32_t)in_last < 2 * (half + 1)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input rows must hold at least %u complex bins (fft_length %d)",
            (unsigned)(half + 1), (int)length);
    }
    uint32_t rows = in.elements / (uint32_t)in_last;
    if (out.dims[out.ndims - 1] != length || out.elements != rows * (uint32_t)length) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output must be %u rows of fft_length (%d) samples",
            (unsigned)rows, (int)length);
    }
    irfft_data_t *d = signal_fft_alloc(p, offsetof(irfft_data_t, tw), type, length, true);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->type = (uint32_t)type;
    d->length = (uint32_t)length;
    d->input_bins = (uint32_t)in_last / 2;
    d->rows = rows;
    return TFLM_OK;
}

// Each fold: bins k and n - k give the half-length spectrum's values k and
// n - k (k = n / 2 gives the second only, as in KISS, which writes both).

static void irfft_row_q15(const irfft_data_t *d, const signal_c16_t *in, signal_c16_t *x) {
    const uint32_t n = d->fft.half;
    const signal_c16_t *tw = (const signal_c16_t *)d->tw, *super = tw + n;
    signal_c16_t dc = { signal_w16(in[0].r + in[n].r), signal_w16(in[0].r - in[n].r) };
    x[0] = signal_cdiv15(dc, 2);
    for (uint32_t k = 1; k <= n / 2; ++k) {
        signal_c16_t fek, fok;
        signal_split15(in, n, k, &super[k - 1], &fek, &fok);
        if (k != n - k) {
            x[signal_fft_position(&d->fft, k)] = signal_cadd15(fek, fok);
        }
        signal_c16_t b = signal_csub15(fek, fok);
        b.i = signal_w16(-(int32_t)b.i);
        x[signal_fft_position(&d->fft, n - k)] = b;
    }
    signal_fft_run_q15(&d->fft, x, tw);
}

static void irfft_row_q31(const irfft_data_t *d, const signal_c32_t *in, signal_c32_t *x) {
    const uint32_t n = d->fft.half;
    const signal_c32_t *tw = (const signal_c32_t *)d->tw, *super = tw + n;
    signal_c32_t dc = { signal_add31(in[0].r, in[n].r), signal_sub31(in[0].r, in[n].r) };
    x[0] = signal_cdiv31(dc, 2);
    for (uint32_t k = 1; k <= n / 2; ++k) {
        signal_c32_t fek, fok;
        signal_split31(in, n, k, &super[k - 1], &fek, &fok);
        if (k != n - k) {
            x[signal_fft_position(&d->fft, k)] = signal_cadd31(fek, fok);
        }
        signal_c32_t b = signal_csub31(fek, fok);
        b.i = signal_sub31(0, b.i);
        x[signal_fft_position(&d->fft, n - k)] = b;
    }
    signal_fft_run_q31(&d->fft, x, tw);
}

static void irfft_row_f32(const irfft_data_t *d, const signal_cf_t *in, signal_cf_t *x) {
    const uint32_t n = d->fft.half;
    const signal_cf_t *tw = (const signal_cf_t *)d->tw, *super = tw + n;
    signal_cf_t dc = { in[0].r + in[n].r, in[0].r - in[n].r };
    x[0] = dc;
    for (uint32_t k = 1; k <= n / 2; ++k) {
        signal_cf_t fek, fok;
        signal_splitf(in, n, k, &super[k - 1], &fek, &fok);
        if (k != n - k) {
            x[signal_fft_position(&d->fft, k)] = signal_caddf(fek, fok);
        }
        signal_cf_t b = signal_csubf(fek, fok);
        b.i = b.i * -1.0f; // KISS multiplies by -1 (a NaN keeps its sign)
        x[signal_fft_position(&d->fft, n - k)] = b;
    }
    signal_fft_run_f32(&d->fft, x, tw);
    float *y = (float *)x;
    const float len = (float)d->length;
    for (uint32_t i = 0; i < d->length; ++i) {
        y[i] /= len;
    }
}

tflm_status_t tflm_signal_irfft_eval(tflm_eval_t *e) {
    const irfft_data_t *d = e->data;
    const uint32_t n = d->fft.half;
    for (uint32_t row = 0; row < d->rows; ++row) {
        if (d->type == TFLM_INT16) {
            irfft_row_q15(d, (const signal_c16_t *)e->in[0] + row * d->input_bins, (signal_c16_t *)e->out[0] + row * n);
        } else if (d->type == TFLM_INT32) {
            irfft_row_q31(d, (const signal_c32_t *)e->in[0] + row * d->input_bins, (signal_c32_t *)e->out[0] + row * n);
        } else {
            irfft_row_f32(d, (const signal_cf_t *)e->in[0] + row * d->input_bins, (signal_cf_t *)e->out[0] + row * n);
        }
    }
    return TFLM_OK;
}

#endif
