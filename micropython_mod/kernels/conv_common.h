// What CONV_2D and DEPTHWISE_CONV_2D share: their kernel data and the
// prepare() that validates the model and fills it (kernels/conv.c).
#ifndef TFLM_KERNELS_CONV_COMMON_H
#define TFLM_KERNELS_CONV_COMMON_H

#include "kernels/kernels.h"
#include "engine/overlap.h"

// Arithmetic variants. int16 CONV_2D accumulates in 32 bits with an int32
// bias and in 64 bits otherwise, as TFLM's does.
enum { CONV_FLOAT32, CONV_INT8, CONV_INT16_ACC32, CONV_INT16_ACC64 };

typedef struct {
    uint8_t kind;
    uint8_t per_channel;   // one multiplier per output channel, else one in all
    uint8_t has_bias;
    // CONV_2D int8, constant filters whose absolute values each add up to
    // less than 2^15: two pixels sum in one 64-bit sum (kernels/mm_s8.h):
    // TFLM_CONV_LANES, or TFLM_CONV_LANES_MMR where every channel's output
    // stage fits out_s8.h's SMMLAR form too (the DSP cores' pointwise block,
    // conv_s8.c; in this field, so that the kernel reads both at once).
    uint8_t lanes : 2;
    // CONV_2D int8 in a prepared model (tflm_prep_data_in_model), constant
    // filters and bias: the data ends with each output channel's starting
    // sum (tflm_conv_starts), computed once on the host and read from flash.
    // (A bit of this byte: a byte more would make every node's data 4 larger.)
    uint8_t folded : 1;
    // A patch's copy of the header alone (tflm_conv_window_t): the
    // multipliers and shifts are the node's data's, at the address the copy
    // holds after the header (conv_multipliers).
    uint8_t window : 1;
    // Geometry: 16 bits each (prepare rejects larger), keeps the data small.
    uint16_t batches;
    uint16_t in_h, in_w, in_d;
    uint16_t f_h, f_w;
    uint16_t f_d;          // CONV_2D: input channels per filter; DEPTHWISE: depth multiplier
    uint16_t out_h, out_w, out_d;
    uint16_t stride_h, stride_w;
    uint16_t dil_h, dil_w;
    uint16_t pad_h, pad_w;
    int32_t input_offset;  // -input zero point (int8)
    int32_t output_offset; // output zero point (int8)
    union { int32_t q; float f; } act_min, act_max;
    // Then int32 multipliers[n] and int8 shifts[n]: n = out_d per channel, 1 per tensor.
} conv_data_t;

enum { TFLM_CONV_LANES = 1, TFLM_CONV_LANES_MMR = 3 };

// Bytes of a conv_data_t with its multipliers and shifts (none for float32).
static inline uint32_t tflm_conv_data_size(unsigned kind, bool per_channel, uint32_t out_d) {
    return (uint32_t)sizeof(conv_data_t) + (kind != CONV_FLOAT32 ? 5u * (per_channel ? out_d : 1u) : 0u);
}

// A folded layer's starting sums (bias + input offset * the filter's sum),
// int32 per output channel after its multipliers and shifts, from the
// data prepare() left (not a patch's copy of its header, which holds none:
// tflm_window_t.data).
static inline const int32_t *tflm_conv_starts(const conv_data_t *d) {
    const uint32_t at = tflm_align_up(tflm_conv_data_size(d->kind, d->per_channel, d->out_d), 4);
    return (const int32_t *)(const void *)((const uint8_t *)d + at);
}

// Builtin options of either op, read by its own prepare().
typedef struct {
    uint8_t padding;
    uint8_t activation;
    int32_t stride_h, stride_w;
    int32_t dil_h, dil_w;
    int32_t depth_multiplier; // DEPTHWISE_CONV_2D only
} conv_options_t;

tflm_status_t tflm_conv_prepare_common(tflm_prepare_t *p, const conv_options_t *opt, bool depthwise);

// The engine's hooks (engine/kernel.h) both ops share: every variant writes
// its output row after row, all channels of a row before the next; a patch
// runs a copy of the node's header given the patch's geometry.
bool tflm_conv_overlap(tflm_prepare_t *p, const void *data, tflm_rows_t *g);
// A patch's run of a node (run_window): its header copied to the stack and
// given the patch's window, followed by the address of the node's own
// multipliers and shifts, so that a patch stage copies no per-channel
// constants (5 bytes a channel) for each patch of each op and keeps no copy
// of any node's data in its arena. (Bytes after the header, not a pointer
// member: no padding between the two on any core.)
typedef struct {
    conv_data_t d;
    uint8_t consts[sizeof(void *)];
} tflm_conv_window_t;
static inline const conv_data_t *tflm_conv_window(tflm_conv_window_t *c, const tflm_window_t *w) {
    const conv_data_t *node = w->data;
    const void *consts = node + 1;
    c->d = *node;
    c->d.in_h = (uint16_t)w->in_h, c->d.in_w = (uint16_t)w->in_w, c->d.out_h = (uint16_t)w->out_h;
    c->d.out_w = (uint16_t)w->out_w, c->d.pad_h = (uint16_t)w->pad_h, c->d.pad_w = (uint16_t)w->pad_w;
    c->d.window = 1;
    memcpy(c->consts, &consts, sizeof consts);
    return &c->d;
}
// The node's geometry; `taps` per output value (f_h * f_w * taps per filter
// position: the filter's depth, or 1 for a depthwise filter). Whether
// patches can run it: int8 and float32.
bool tflm_conv_geometry(const conv_data_t *d, uint32_t taps, tflm_rows_t *g);

// The int8 kernels by rows: output rows [row0, row1) of batch `batch`, the
// tensors given whole. eval() runs all rows; a caller working patch by patch
// (or over overlapped buffers) runs row ranges in any order. `starts`: a
// folded CONV_2D's starting sums (tflm_conv_starts), else NULL.
void tflm_conv_2d_s8_rows(const conv_data_t *d, const int8_t *input, const int8_t *filter, const int32_t *bias,
    const int32_t *starts, int8_t *output, int32_t batch, int32_t row0, int32_t row1);
void tflm_depthwise_conv_2d_s8_rows(const conv_data_t *d, const int8_t *input, const int8_t *filter,
    const int32_t *bias, int8_t *output, int32_t batch, int32_t row0, int32_t row1);

typedef void (*tflm_conv_s8_rows_fn)(const conv_data_t *d, const int8_t *input, const int8_t *filter,
    const int32_t *bias, const int32_t *starts, int8_t *output, int32_t batch, int32_t row0, int32_t row1);

// The output shares bytes with the input: the plan overlapped them
// (engine/overlap.h), which is safe only if each output row is finished,
// all its channels, before the next row is started.
static inline bool tflm_conv_s8_overlapped(const conv_data_t *d, const int8_t *input, const int8_t *output) {
    const size_t in_bytes = (size_t)d->batches * d->in_h * d->in_w * d->in_d;
    const size_t out_bytes = (size_t)d->batches * d->out_h * d->out_w * d->out_d;
    return (uintptr_t)output < (uintptr_t)input + in_bytes && (uintptr_t)input < (uintptr_t)output + out_bytes;
}

// Bands of rows in order: the kernels go over their rows once per chunk of
// output channels, so one call over all rows would write every row's first
// channels before the later chunks read the input again. A band's rows may
// be written in any order, so a band may be as tall as the distance the
// plan left between output and input allows (engine/overlap.h, the rule the
// planner used with bands of one row): the taller, the fewer calls. An
// output above its input takes the backward rule (bands last first: only
// tflm_conv_2d_s8_all goes that way).
static inline int32_t tflm_conv_s8_band(const conv_data_t *d, const int8_t *input, const int8_t *output) {
    tflm_overlap_rows_t g = {
        d->batches, d->in_h, d->out_h, (uint32_t)d->in_w * d->in_d, (uint32_t)d->out_w * d->out_d,
        d->stride_h, d->pad_h, d->out_h, (uint32_t)((d->f_h - 1) * d->dil_h + 1),
    };
    const int64_t below = (int64_t)((intptr_t)input - (intptr_t)output);
    const bool up = below < 0;
    const uint64_t room = (uint64_t)(up ? -below : below);
    while (g.band > 1 && tflm_overlap_rows_span(&g, up) > room) {
        g.band = (g.band + 1) / 2;
    }
    return (int32_t)g.band;
}

// Every row of every batch, `band` rows a call.
static inline void tflm_conv_s8_by_bands(tflm_conv_s8_rows_fn rows, const conv_data_t *d, const int8_t *input,
    const int8_t *filter, const int32_t *bias, const int32_t *starts, int8_t *output, int32_t band) {
    for (int32_t b = 0; b < d->batches; ++b) {
        for (int32_t y = 0; y < d->out_h; y += band) {
            rows(d, input, filter, bias, starts, output, b, y, d->out_h - y < band ? d->out_h : y + band);
        }
    }
}

static inline void tflm_conv_s8_row_by_row(tflm_conv_s8_rows_fn rows, const conv_data_t *d, const int8_t *input,
    const int8_t *filter, const int32_t *bias, const int32_t *starts, int8_t *output) {
    tflm_conv_s8_by_bands(rows, d, input, filter, bias, starts, output, tflm_conv_s8_band(d, input, output));
}

// CONV_2D's eval over every row of every batch (conv_s8.c): over an
// overlapped input in bands of rows (a pointwise layer: pixels in order, or
// in groups), the output stage's constants set up once per call, not once
// per band: every output channel's for up to 64 channels (then all channels
// at once), else each filter's starting sum (the bias plus the input offset
// times the filter's sum) for up to TFLM_CONV_S8_FOLD_MAX output channels,
// in the same 1 KB of stack.
void tflm_conv_2d_s8_all(const conv_data_t *d, const int8_t *input, const int8_t *filter, const int32_t *bias,
    const int32_t *starts, int8_t *output);

// A patch's CONV_2D over every row (conv_s8.c; engine/patch.c's windows):
// over an overlapped input in bands of rows, each band's pixels finished
// before the next band's (the row rule), as row-by-row calls would, in one
// call (the constants set up once) where the layer's output channels are
// one chunk (and a 1x1 layer's bands whole units of its pixel loop). The
// bands go first to last: an output overlapping its input lies below it
// (patch.c's placement, patch_place, puts none above; the backward rule is
// tflm_conv_2d_s8_all's alone).
void tflm_conv_2d_s8_window(const conv_data_t *d, const int8_t *input, const int8_t *filter, const int32_t *bias,
    const int32_t *starts, int8_t *output);

// Whether one call of the int8 DEPTHWISE_CONV_2D kernel over all rows
// never reads an input byte it has overwritten, `output` overlapping
// `input`: one chunk of output channels, not the 3x3 path (which goes
// channel by channel along the rows), so that each row is finished before
// later rows' input is read, and each pixel before the next (the pixel
// rule's order, engine/overlap.h); chunks of one output channel per input
// channel, the output a whole number of pixels away (each chunk touches
// only its own channels' bytes); or the 3x3 path where the plan's actual
// distance keeps each channel's bytes apart from the others' and behind
// the ones its later outputs read.
bool tflm_depthwise_conv_2d_s8_in_order(const conv_data_t *d, const int8_t *input, const int8_t *output);

// Every output row of every batch through a row-range kernel; when the
// output overlaps the input and one call would not keep the rows in order
// (`in_order` false), row by row. Built with
// TFLM_CONV_TEST_BAND=n (tests only), the rows go in bands of n, the last
// band first, as a patch-by-patch caller would visit them: the outputs must
// not change.
static inline void tflm_conv_s8_all_rows(tflm_conv_s8_rows_fn rows, const conv_data_t *d, const int8_t *input,
    const int8_t *filter, const int32_t *bias, const int32_t *starts, int8_t *output, bool in_order) {
#if defined(TFLM_CONV_TEST_BAND) && TFLM_CONV_TEST_BAND > 0
    in_order = false;  // the bands below go last first
#endif
    if (!in_order && tflm_conv_s8_overlapped(d, input, output)) {
        tflm_conv_s8_row_by_row(rows, d, input, filter, bias, starts, output);
        return;
    }
    for (int32_t b = 0; b < d->batches; ++b) {
#if defined(TFLM_CONV_TEST_BAND) && TFLM_CONV_TEST_BAND > 0
        for (int32_t r1 = d->out_h; r1 > 0; r1 -= TFLM_CONV_TEST_BAND) {
            rows(d, input, filter, bias, starts, output, b, r1 > TFLM_CONV_TEST_BAND ? r1 - TFLM_CONV_TEST_BAND : 0,
                r1);
        }
#else
        rows(d, input, filter, bias, starts, output, b, 0, d->out_h);
#endif
    }
}

// One axis of a window: returns the input position of tap 0 for output
// position `o` and sets [*lo, *hi) to the taps inside the input (padding
// adds nothing), both 0 when none is.
static inline int32_t conv_window(int32_t o, int32_t stride, int32_t pad, int32_t dil, int32_t f, int32_t in,
    int32_t *lo, int32_t *hi) {
    int32_t origin = o * stride - pad;
    // Without dilation (the common case) no division is needed.
    int32_t first = origin >= 0 ? 0 : dil == 1 ? -origin : (dil - 1 - origin) / dil;
    int32_t room = in - origin;
    int32_t last = room <= 0 ? 0 : dil == 1 ? room : (room + dil - 1) / dil;
    last = last < f ? last : f;
    if (first >= last) {
        first = last = 0;
    }
    *lo = first;
    *hi = last;
    return origin;
}

static inline const int32_t *conv_multipliers(const conv_data_t *d) {
    if (d->window) {
        const void *consts;
        memcpy(&consts, d + 1, sizeof consts);
        return consts;
    }
    return (const int32_t *)(d + 1);
}

static inline const int8_t *conv_shifts(const conv_data_t *d) {
    return (const int8_t *)(conv_multipliers(d) + (d->per_channel ? d->out_d : 1));
}

// Locals of the integer variants' requantization: per channel, set up for
// each output channel; per tensor, once.
#define CONV_QUANT_LOCALS \
    const int32_t *mults = conv_multipliers(d); \
    const int8_t *shifts = conv_shifts(d); \
    const bool per_channel = d->per_channel; \
    const int32_t act_min = d->act_min.q, act_max = d->act_max.q

#endif // TFLM_KERNELS_CONV_COMMON_H
