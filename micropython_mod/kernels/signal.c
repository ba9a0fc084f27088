// TFLM's audio front end ("signal" library) as custom ops: window, FFT
// auto-scale, energy, mel filter bank, its square root, spectral
// subtraction (stateful), PCAN gain control and log. The arithmetic follows
// the documented fixed-point behaviour of TFLM's signal library, so outputs
// are bit-exact with it; the real FFT is in signal_rfft.c. Parameters come
// from the FlexBuffer custom options (kernels/flexbuffer.c).
#include "kernels/kernels.h"
#include "kernels/flexbuffer.h"
#include "kernels/signal_common.h"
#include "engine/quant.h"

// Position of the highest set bit counting from 1; 32 for 0, as TFLM's
// signal library returns with GCC (its callers rely on that value).
static inline uint32_t signal_msb32(uint32_t x) {
    return x == 0 ? 32 : 32 - (uint32_t)__builtin_clz(x);
}

static inline uint32_t signal_msb64(uint64_t x) {
    return x == 0 ? 64 : 64 - (uint32_t)__builtin_clzll(x);
}

// Arithmetic shift right of a signed value (what the reference's >> does;
// signal_fft.h says why >> is one).
static inline int32_t signal_asr(int32_t x, uint32_t s) {
    return x >> s;
}

// The data of the kernels that need their element count only, after the
// check that the scale bits operand holds one value (FftAutoScale,
// FilterBankSquareRoot).
typedef struct {
    uint32_t count;
} signal_count_data_t;

static inline tflm_status_t signal_count_prepare(tflm_prepare_t *p, const tflm_tinfo_t *bits, uint32_t count) {
    tflm_status_t st = signal_one_value(p, bits, "scale bits");
    if (st) {
        return st;
    }
    signal_count_data_t *d = tflm_prep_alloc(p, sizeof(signal_count_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->count = count;
    return TFLM_OK;
}

#if TFLM_KERNEL_SIGNAL_WINDOW
// ---------------------------------------------------------------------------
// SignalWindow: out = clamp_int16((in * window) >> shift), the window
// repeated over the input's rows.

typedef struct {
    uint32_t count;
    uint32_t window;
    uint32_t shift;
} window_data_t;

tflm_status_t tflm_signal_window_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 2, 2, 1);
    tflm_tinfo_t in, w, out;
    tflm_flex_map_t opts;
    int32_t shift;
    if (st || (st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_input(p, 1, &w)) || (st = tflm_prep_output(p, 0, &out))
        || (st = signal_expect(p, &in, "input", TFLM_INT16, -1)) || (st = signal_expect(p, &w, "window", TFLM_INT16, 1))
        || (st = signal_expect(p, &out, "output", TFLM_INT16, in.ndims)) || (st = signal_same_count(p, &in, &out, "output"))
        || (st = tflm_flex_map(p, &opts)) || (st = tflm_flex_int(p, &opts, "shift", 0, 31, &shift))) {
        return st;
    }
    if (in.ndims < 1 || w.elements == 0 || in.elements % w.elements) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input of %u elements is not rows of the window's %u",
            (unsigned)in.elements, (unsigned)w.elements);
    }
    window_data_t *d = tflm_prep_alloc(p, sizeof(window_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->count = in.elements;
    d->window = w.elements;
    d->shift = (uint32_t)shift;
    return TFLM_OK;
}

tflm_status_t tflm_signal_window_eval(tflm_eval_t *e) {
    const window_data_t *d = e->data;
    const uint8_t *in = e->in[0];
    const uint8_t *w = e->in[1];
    int16_t *out = e->out[0];
    // In locals: stores to the output could alias the kernel data.
    const uint32_t count = d->count, window = d->window, shift = d->shift;
    // Row by row (whole rows: prepare() checks), the window from its start.
    for (uint32_t row = 0; row < count; row += window) {
        const uint8_t *c = w;
        for (const int16_t *end = out + window; out < end; ++out, in += 2, c += 2) {
            int32_t x = (int16_t)tflm_rd_u16(in);
            *out = (int16_t)tflm_clamp(signal_asr(x * (int16_t)tflm_rd_u16(c), shift), INT16_MIN, INT16_MAX);
        }
    }
    return TFLM_OK;
}
#endif

#if TFLM_KERNEL_SIGNAL_FFT_AUTO_SCALE
// ---------------------------------------------------------------------------
// SignalFftAutoScale: shifts the input left by as many bits as its largest
// magnitude allows; output 1 is that shift.

tflm_status_t tflm_signal_fft_auto_scale_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 1, 1, 2);
    tflm_tinfo_t in, out, bits;
    if (st || (st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_output(p, 0, &out)) || (st = tflm_prep_output(p, 1, &bits))
        || (st = signal_expect(p, &in, "input", TFLM_INT16, -1)) || (st = signal_expect(p, &out, "output", TFLM_INT16, -1))
        || (st = signal_expect(p, &bits, "scale bits", TFLM_INT32, -1)) || (st = signal_same_count(p, &in, &out, "output"))) {
        return st;
    }
    return signal_count_prepare(p, &bits, in.elements);
}

tflm_status_t tflm_signal_fft_auto_scale_eval(tflm_eval_t *e) {
    const signal_count_data_t *d = e->data;
    const int16_t *in = e->in[0];
    int16_t *out = e->out[0];
    // The reference's running maximum is an int16: -32768 is kept as itself
    // (negative), and a later value above it replaces it.
    int16_t max = 0;
    for (uint32_t i = 0; i < d->count; ++i) {
        int32_t v = in[i];
        if (v > max) {
            max = (int16_t)v;
        } else if (-v > max) {
            max = (int16_t)(uint16_t)(-v);
        }
    }
    int32_t bits = 16 - (int32_t)signal_msb32((uint32_t)(int32_t)max) - 1;
    if (bits < 0) {
        bits = 0;
    }
    for (uint32_t i = 0; i < d->count; ++i) {
        out[i] = (int16_t)(uint16_t)((uint32_t)(int32_t)in[i] << bits);
    }
    int32_t *scale = e->out[1];
    *scale = bits;
    return TFLM_OK;
}
#endif

#if TFLM_KERNEL_SIGNAL_ENERGY
// ---------------------------------------------------------------------------
// SignalEnergy: squared magnitude of complex int16 bins [start, end); the
// other outputs are zero (the reference leaves them unwritten).

typedef struct {
    uint32_t count;
    uint32_t start;
    uint32_t end;
} energy_data_t;

tflm_status_t tflm_signal_energy_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 1, 1, 1);
    tflm_tinfo_t in, out;
    tflm_flex_map_t opts;
    int32_t start, end;
    if (st || (st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_output(p, 0, &out))
        || (st = signal_expect(p, &in, "input", TFLM_INT16, 1)) || (st = signal_expect(p, &out, "output", TFLM_UINT32, 1))
        || (st = tflm_flex_map(p, &opts)) || (st = tflm_flex_int(p, &opts, "start_index", 0, INT32_MAX, &start))
        || (st = tflm_flex_int(p, &opts, "end_index", 0, INT32_MAX, &end))) {
        return st;
    }
    if (start > end || (uint32_t)end > out.elements || (uint32_t)end > in.elements / 2) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "bins %d to %d outside the input's %u and the output's %u",
            (int)start, (int)end, (unsigned)(in.elements / 2), (unsigned)out.elements);
    }
    energy_data_t *d = tflm_prep_alloc(p, sizeof(energy_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->count = out.elements;
    d->start = (uint32_t)start;
    d->end = (uint32_t)end;
    return TFLM_OK;
}

tflm_status_t tflm_signal_energy_eval(tflm_eval_t *e) {
    const energy_data_t *d = e->data;
    const int16_t *in = e->in[0];
    uint32_t *out = e->out[0];
    // In locals: stores to the output could alias the kernel data.
    const uint32_t count = d->count, start = d->start, end = d->end;
    uint32_t i = 0;
    for (; i < start; ++i) {
        out[i] = 0;
    }
    for (; i < end; ++i) {
        int32_t re = in[2 * i], im = in[2 * i + 1];
        // each square is below 2^30; their sum wraps as the reference's int32 does
        out[i] = (uint32_t)(re * re) + (uint32_t)(im * im);
    }
    for (; i < count; ++i) {
        out[i] = 0;
    }
    return TFLM_OK;
}
#endif

#if TFLM_KERNEL_SIGNAL_FILTER_BANK
// ---------------------------------------------------------------------------
// SignalFilterBank: mel channels as weighted sums of energy bins. Each bin
// range feeds its channel with `weights` and the next with `unweights`;
// the first channel's sum is discarded. The channel tables (start bin,
// start weight, width; one more entry than channels) must be constants:
// they are checked here and copied, so eval() cannot index outside.

typedef struct {
    uint16_t outputs;     // channels computed: the output's elements, at most num_channels
    uint16_t rows;        // entries per table: num_channels + 1 (at most 4097)
    int16_t table[];      // freq starts, weight starts, widths: `rows` each
} filter_bank_data_t;

tflm_status_t tflm_signal_filter_bank_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 6, 6, 1);
    tflm_tinfo_t in, w, uw, fs, ws, wd, out;
    tflm_flex_map_t opts;
    int32_t channels;
    if (st || (st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_input(p, 1, &w)) || (st = tflm_prep_input(p, 2, &uw))
        || (st = tflm_prep_input(p, 3, &fs)) || (st = tflm_prep_input(p, 4, &ws)) || (st = tflm_prep_input(p, 5, &wd))
        || (st = tflm_prep_output(p, 0, &out))
        || (st = signal_expect(p, &in, "input", TFLM_UINT32, 1)) || (st = signal_expect(p, &w, "weights", TFLM_INT16, 1))
        || (st = signal_expect(p, &uw, "unweights", TFLM_INT16, 1))
        || (st = signal_expect(p, &fs, "channel frequency starts", TFLM_INT16, 1))
        || (st = signal_expect(p, &ws, "channel weight starts", TFLM_INT16, 1))
        || (st = signal_expect(p, &wd, "channel widths", TFLM_INT16, 1))
        || (st = signal_expect(p, &out, "output", TFLM_UINT64, 1))
        || (st = tflm_flex_map(p, &opts)) || (st = tflm_flex_int(p, &opts, "num_channels", 1, 4096, &channels))) {
        return st;
    }
    uint32_t n = (uint32_t)channels + 1;
    if (!fs.data || !ws.data || !wd.data) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "channel tables that are not constants");
    }
    if (fs.elements < n || ws.elements < n || wd.elements < n || out.elements > (uint32_t)channels) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%d channels need tables of %u entries and at most %d outputs",
            (int)channels, (unsigned)n, (int)channels);
    }
    filter_bank_data_t *d = tflm_prep_alloc(p, sizeof(filter_bank_data_t) + 3 * n * sizeof(int16_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    for (uint32_t i = 0; i < n; ++i) {
        int32_t f = (int16_t)tflm_rd_u16(fs.data + 2 * i);
        int32_t s = (int16_t)tflm_rd_u16(ws.data + 2 * i);
        int32_t width = (int16_t)tflm_rd_u16(wd.data + 2 * i);
        if (f < 0 || s < 0 || width < 0 || (uint32_t)(f + width) > in.elements
            || (uint32_t)(s + width) > w.elements || (uint32_t)(s + width) > uw.elements) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "channel %u reads outside the input or the weights", (unsigned)i);
        }
        d->table[i] = (int16_t)f;
        d->table[n + i] = (int16_t)s;
        d->table[2 * n + i] = (int16_t)width;
    }
    // An output shorter than num_channels gets the first channels, as in
    // TFLM; the tables keep their num_channels + 1 rows (checked above).
    d->outputs = (uint16_t)out.elements;
    d->rows = (uint16_t)n;
    return TFLM_OK;
}

tflm_status_t tflm_signal_filter_bank_eval(tflm_eval_t *e) {
    const filter_bank_data_t *d = e->data;
    const uint8_t *in = e->in[0];
    const uint8_t *w = e->in[1];
    const uint8_t *uw = e->in[2];
    uint8_t *out = e->out[0];
    const int16_t *freq = d->table, *start = d->table + d->rows, *width = d->table + 2 * d->rows;
    uint64_t acc = 0;
    for (uint32_t i = 0; i <= d->outputs; ++i) {
        uint64_t next = 0;
        for (int32_t j = 0; j < width[i]; ++j) {
            uint64_t x = tflm_rd_u32(in + 4 * (freq[i] + j));
            // the int16 weight converts to uint64 (negative ones wrap), as in the reference
            acc += (uint64_t)(int64_t)(int16_t)tflm_rd_u16(w + 2 * (start[i] + j)) * x;
            next += (uint64_t)(int64_t)(int16_t)tflm_rd_u16(uw + 2 * (start[i] + j)) * x;
        }
        if (i > 0) {
            memcpy(out + 8 * (i - 1), &acc, 8);
        }
        acc = next;
    }
    return TFLM_OK;
}
#endif

#if TFLM_KERNEL_SIGNAL_FILTER_BANK_SQUARE_ROOT
// ---------------------------------------------------------------------------
// SignalFilterBankSquareRoot: rounded integer square root, shifted right by
// the scale bits of input 1.

// Digit-by-digit square root over 32 bits, rounded up when the remainder
// exceeds the root (not past 0xFFFF).
static uint32_t signal_sqrt32(uint32_t num) {
    if (num == 0) {
        return 0;
    }
    uint32_t res = 0;
    uint32_t top = (32 - signal_msb32(num)) | 1;
    uint32_t bit = (uint32_t)1 << (31 - top);
    for (uint32_t k = (31 - top) / 2 + 1; k > 0; --k) {
        if (num >= res + bit) {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if (num > res && res != 0xFFFF) {
        ++res;
    }
    return res & 0xFFFF; // the reference returns a uint16
}

// The same over 64 bits; values below 2^32 take the 32-bit path, as in the reference.
static uint32_t signal_sqrt64(uint64_t num) {
    if ((num >> 32) == 0) {
        return signal_sqrt32((uint32_t)num);
    }
    uint64_t res = 0;
    uint32_t top = (64 - signal_msb64(num)) | 1;
    uint64_t bit = (uint64_t)1 << (63 - top);
    for (uint32_t k = (63 - top) / 2 + 1; k > 0; --k) {
        if (num >= res + bit) {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if (num > res && res != 0xFFFFFFFFu) {
        ++res;
    }
    return (uint32_t)res;
}

tflm_status_t tflm_signal_filter_bank_square_root_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 2, 2, 1);
    tflm_tinfo_t in, bits, out;
    if (st || (st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_input(p, 1, &bits)) || (st = tflm_prep_output(p, 0, &out))
        || (st = signal_expect(p, &in, "input", TFLM_UINT64, 1)) || (st = signal_expect(p, &bits, "scale bits", TFLM_INT32, 0))
        || (st = signal_expect(p, &out, "output", TFLM_UINT32, 1)) || (st = signal_same_count(p, &in, &out, "output"))) {
        return st;
    }
    return signal_count_prepare(p, &bits, in.elements);
}

tflm_status_t tflm_signal_filter_bank_square_root_eval(tflm_eval_t *e) {
    const signal_count_data_t *d = e->data;
    const uint8_t *in = e->in[0];
    // a shift of 32 or more is undefined in C; x86-64, where the reference
    // runs, uses the count modulo 32
    uint32_t shift = (uint32_t)tflm_rd_i32(e->in[1]) & 31;
    uint32_t *out = e->out[0];
    for (uint32_t i = 0; i < d->count; ++i) {
        out[i] = signal_sqrt64(tflm_rd_u64(in + 8 * i)) >> shift;
    }
    return TFLM_OK;
}
#endif

#if TFLM_KERNEL_SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION
// ---------------------------------------------------------------------------
// SignalFilterBankSpectralSubtraction: a low-pass noise estimate per channel
// (kept between invokes, zero when the interpreter is built) subtracted from
// the signal, never below min_signal_remaining of it. Output 1 is the
// estimate.

typedef struct {
    uint32_t channels;
    uint32_t smoothing;
    uint32_t one_minus_smoothing;
    uint32_t alternate_smoothing;
    uint32_t alternate_one_minus_smoothing;
    uint32_t min_signal_remaining;
    uint32_t smoothing_bits;
    uint32_t subtraction_bits;
    uint32_t clamping;
    uint32_t noise[];     // the state
} spectral_subtraction_data_t;

static void spectral_subtraction_start(spectral_subtraction_data_t *d) {
    memset(d->noise, 0, 4 * d->channels);
}

static void spectral_subtraction_reset(tflm_eval_t *e) {
    spectral_subtraction_start(e->data);
}

tflm_status_t tflm_signal_filter_bank_spectral_subtraction_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 1, 1, 2);
    tflm_tinfo_t in, out, noise;
    tflm_flex_map_t opts;
    int32_t channels, sm, omsm, asm_, aomsm, minsig, smbits, ssbits, clamping;
    if (st || (st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_output(p, 0, &out)) || (st = tflm_prep_output(p, 1, &noise))
        || (st = signal_expect(p, &in, "input", TFLM_UINT32, 1)) || (st = signal_expect(p, &out, "output", TFLM_UINT32, 1))
        || (st = signal_expect(p, &noise, "noise estimate", TFLM_UINT32, 1))
        || (st = tflm_flex_map(p, &opts))
        || (st = tflm_flex_int(p, &opts, "num_channels", 1, 4096, &channels))
        || (st = tflm_flex_int(p, &opts, "smoothing", 0, UINT16_MAX, &sm))
        || (st = tflm_flex_int(p, &opts, "one_minus_smoothing", 0, UINT16_MAX, &omsm))
        || (st = tflm_flex_int(p, &opts, "alternate_smoothing", 0, UINT16_MAX, &asm_))
        || (st = tflm_flex_int(p, &opts, "alternate_one_minus_smoothing", 0, UINT16_MAX, &aomsm))
        || (st = tflm_flex_int(p, &opts, "min_signal_remaining", 0, UINT16_MAX, &minsig))
        || (st = tflm_flex_int(p, &opts, "smoothing_bits", 0, 31, &smbits))
        || (st = tflm_flex_int(p, &opts, "spectral_subtraction_bits", 0, 63, &ssbits))
        || (st = tflm_flex_int(p, &opts, "clamping", 0, 1, &clamping))) {
        return st;
    }
    if (in.elements != (uint32_t)channels || out.elements != (uint32_t)channels || noise.elements != (uint32_t)channels) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input, output and noise estimate must have %d elements", (int)channels);
    }
    spectral_subtraction_data_t *d = tflm_prep_alloc_state(p, sizeof(spectral_subtraction_data_t) + 4 * (uint32_t)channels);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->channels = (uint32_t)channels;
    d->smoothing = (uint32_t)sm;
    d->one_minus_smoothing = (uint32_t)omsm;
    d->alternate_smoothing = (uint32_t)asm_;
    d->alternate_one_minus_smoothing = (uint32_t)aomsm;
    d->min_signal_remaining = (uint32_t)minsig;
    d->smoothing_bits = (uint32_t)smbits;
    d->subtraction_bits = (uint32_t)ssbits;
    d->clamping = (uint32_t)clamping;
    spectral_subtraction_start(d);
    return TFLM_OK;
}

tflm_status_t tflm_signal_filter_bank_spectral_subtraction_eval(tflm_eval_t *e) {
    spectral_subtraction_data_t *d = e->data;
    const uint8_t *in = e->in[0];
    uint32_t *out = e->out[0];
    uint32_t *noise_out = e->out[1];
    for (uint32_t i = 0; i < d->channels; ++i) {
        bool odd = (i & 1) != 0;
        uint64_t sm = odd ? d->alternate_smoothing : d->smoothing;
        uint64_t omsm = odd ? d->alternate_one_minus_smoothing : d->one_minus_smoothing;
        uint32_t x = tflm_rd_u32(in + 4 * i);
        uint32_t scaled = x << d->smoothing_bits;
        uint32_t noise = (uint32_t)(((uint64_t)scaled * sm + (uint64_t)d->noise[i] * omsm) >> d->subtraction_bits);
        uint32_t estimate = noise;
        if (estimate > scaled) {
            estimate = scaled;
            if (d->clamping) {
                noise = estimate;
            }
        }
        d->noise[i] = noise;
        uint32_t floor = (uint32_t)(((uint64_t)x * d->min_signal_remaining) >> d->subtraction_bits);
        uint32_t sub = (scaled - estimate) >> d->smoothing_bits;
        out[i] = sub > floor ? sub : floor;
    }
    memcpy(noise_out, d->noise, 4 * d->channels);
    return TFLM_OK;
}

const tflm_kernel_hooks_t tflm_signal_filter_bank_spectral_subtraction_hooks = { .reset = spectral_subtraction_reset };
#endif

#if TFLM_KERNEL_SIGNAL_PCAN
// ---------------------------------------------------------------------------
// SignalPCAN: per-channel energy normalisation; the gain is a piecewise
// quadratic of the noise estimate (a lookup table of 4 coefficients per
// power of two), the result a "shrink" of the signal-to-noise ratio.

#define PCAN_SNR_BITS (12)
#define PCAN_OUTPUT_BITS (6)
// Entries the gain table needs: noise values up to 2^32 use entry 4 * 32 - 4.
#define PCAN_LUT_MIN (4 * 32 - 3)

typedef struct {
    uint32_t channels;
    uint32_t snr_shift;
} pcan_data_t;

tflm_status_t tflm_signal_pcan_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 3, 3, 1);
    tflm_tinfo_t in, noise, lut, out;
    tflm_flex_map_t opts;
    int32_t shift;
    if (st || (st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_input(p, 1, &noise)) || (st = tflm_prep_input(p, 2, &lut))
        || (st = tflm_prep_output(p, 0, &out))
        || (st = signal_expect(p, &in, "input", TFLM_UINT32, 1)) || (st = signal_expect(p, &noise, "noise estimate", TFLM_UINT32, 1))
        || (st = signal_expect(p, &lut, "gain table", TFLM_INT16, 1)) || (st = signal_expect(p, &out, "output", TFLM_UINT32, 1))
        || (st = signal_same_count(p, &in, &noise, "noise estimate")) || (st = signal_same_count(p, &in, &out, "output"))
        || (st = tflm_flex_map(p, &opts)) || (st = tflm_flex_int(p, &opts, "snr_shift", 0, 63, &shift))) {
        return st;
    }
    if (lut.elements < PCAN_LUT_MIN) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "gain table has %u entries, needs %u",
            (unsigned)lut.elements, (unsigned)PCAN_LUT_MIN);
    }
    pcan_data_t *d = tflm_prep_alloc(p, sizeof(pcan_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->channels = in.elements;
    d->snr_shift = (uint32_t)shift;
    return TFLM_OK;
}

static int16_t pcan_gain(uint32_t x, const uint8_t *lut) {
    if (x <= 2) {
        return (int16_t)tflm_rd_u16(lut + 2 * x);
    }
    uint32_t interval = signal_msb32(x); // 2 .. 32
    const uint8_t *c = lut + 2 * (4 * interval - 6);
    int32_t frac = (int32_t)((interval < 11 ? x << (11 - interval) : x >> (interval - 11)) & 0x3FF);
    int32_t c0 = (int16_t)tflm_rd_u16(c), c1 = (int16_t)tflm_rd_u16(c + 2), c2 = (int16_t)tflm_rd_u16(c + 4);
    int32_t r = signal_asr(c2 * frac, 5);
    r = (int32_t)((uint32_t)r + ((uint32_t)c1 << 5));
    r = (int32_t)((uint32_t)r * (uint32_t)frac); // wraps like the reference's int32
    r = signal_asr((int32_t)((uint32_t)r + (1u << 14)), 15);
    return (int16_t)(uint16_t)((uint32_t)r + (uint32_t)c0);
}

static uint32_t pcan_shrink(uint32_t x) {
    if (x < (2u << PCAN_SNR_BITS)) {
        return (x * x) >> (2 + 2 * PCAN_SNR_BITS - PCAN_OUTPUT_BITS);
    }
    return (x >> (PCAN_SNR_BITS - PCAN_OUTPUT_BITS)) - (1u << PCAN_OUTPUT_BITS);
}

tflm_status_t tflm_signal_pcan_eval(tflm_eval_t *e) {
    const pcan_data_t *d = e->data;
    const uint8_t *in = e->in[0];
    const uint8_t *noise = e->in[1];
    const uint8_t *lut = e->in[2];
    uint32_t *out = e->out[0];
    for (uint32_t i = 0; i < d->channels; ++i) {
        // the int16 gain converts to uint32 (a negative one wraps), as in the reference
        uint32_t gain = (uint32_t)(int32_t)pcan_gain(tflm_rd_u32(noise + 4 * i), lut);
        uint32_t snr = (uint32_t)(((uint64_t)tflm_rd_u32(in + 4 * i) * gain) >> d->snr_shift);
        out[i] = pcan_shrink(snr);
    }
    return TFLM_OK;
}
#endif

#if TFLM_KERNEL_SIGNAL_FILTER_BANK_LOG
// ---------------------------------------------------------------------------
// SignalFilterBankLog: scaled natural log in fixed point: log2 from the
// highest bit plus a table-interpolated fraction, times ln 2.

// log2(1 + k/128) - k/128 in 1/65536ths, k = 0..128 (and one pad entry).
static const uint16_t log_table[130] = {
    0, 224, 442, 654, 861, 1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646, 2797,
    2944, 3087, 3224, 3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460, 4549, 4633,
    4714, 4791, 4864, 4934, 5001, 5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444, 5477, 5507,
    5533, 5557, 5578, 5595, 5610, 5622, 5631, 5637, 5640, 5641, 5638, 5633, 5626, 5615, 5602, 5586,
    5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332, 5291, 5249, 5203, 5156, 5106, 5054, 5000,
    4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341, 4264, 4184, 4103, 4020, 3935, 3848,
    3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981, 2875, 2768, 2659, 2549, 2437, 2323, 2207,
    2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224, 1094, 963, 830, 695, 559, 421, 282, 142, 0, 0,
};

#define LOG_SCALE_BITS (16)
#define LOG_SEGMENT_BITS (7)
#define LOG_LN2 (45426u)   // ln(2) * 65536

typedef struct {
    uint32_t channels;
    uint32_t correction_bits;
    uint32_t output_scale;
} log_data_t;

tflm_status_t tflm_signal_filter_bank_log_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 1, 1, 1);
    tflm_tinfo_t in, out;
    tflm_flex_map_t opts;
    int32_t bits, scale;
    if (st || (st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_output(p, 0, &out))
        || (st = signal_expect(p, &in, "input", TFLM_UINT32, 1)) || (st = signal_expect(p, &out, "output", TFLM_INT16, 1))
        || (st = signal_same_count(p, &in, &out, "output")) || (st = tflm_flex_map(p, &opts))
        || (st = tflm_flex_int(p, &opts, "input_correction_bits", 0, 31, &bits))
        || (st = tflm_flex_int(p, &opts, "output_scale", 0, INT32_MAX, &scale))) {
        return st;
    }
    log_data_t *d = tflm_prep_alloc(p, sizeof(log_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->channels = in.elements;
    d->correction_bits = (uint32_t)bits;
    d->output_scale = (uint32_t)scale;
    return TFLM_OK;
}

static uint32_t signal_log32(uint32_t x, uint32_t out_scale) {
    uint32_t integer = signal_msb32(x) - 1;
    // the fraction below the highest bit, in 16 bits
    int32_t frac = (int32_t)(x - ((uint32_t)1 << integer));
    if (integer < LOG_SCALE_BITS) {
        frac = (int32_t)((uint32_t)frac << (LOG_SCALE_BITS - integer));
    } else {
        frac = frac >> (integer - LOG_SCALE_BITS); // frac >= 0 here
    }
    uint32_t seg = (uint32_t)frac >> (LOG_SCALE_BITS - LOG_SEGMENT_BITS);
    int32_t c0 = log_table[seg], c1 = log_table[seg + 1];
    int32_t seg_base = (int32_t)(seg << (LOG_SCALE_BITS - LOG_SEGMENT_BITS));
    int32_t rel = signal_asr((c1 - c0) * (frac - seg_base), LOG_SCALE_BITS);
    uint32_t fraction = (uint32_t)(frac + c0 + rel);
    uint32_t log2 = (integer << LOG_SCALE_BITS) + fraction;
    uint32_t round = 1u << (LOG_SCALE_BITS - 1);
    uint32_t loge = (uint32_t)(((uint64_t)LOG_LN2 * log2 + round) >> LOG_SCALE_BITS);
    return (out_scale * loge + round) >> LOG_SCALE_BITS; // uint32 arithmetic, as the reference's
}

tflm_status_t tflm_signal_filter_bank_log_eval(tflm_eval_t *e) {
    const log_data_t *d = e->data;
    const uint8_t *in = e->in[0];
    int16_t *out = e->out[0];
    for (uint32_t i = 0; i < d->channels; ++i) {
        uint32_t scaled = tflm_rd_u32(in + 4 * i) << d->correction_bits;
        int16_t v = 0;
        if (scaled > 1) {
            uint32_t l = signal_log32(scaled, d->output_scale);
            v = (int16_t)(l < INT16_MAX ? l : INT16_MAX);
        }
        out[i] = v;
    }
    return TFLM_OK;
}
#endif
