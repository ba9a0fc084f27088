// Overlapped in-place placement: how far below its dying input an op's
// output must start so that the kernel never overwrites an input byte it
// still has to read (docs/planning.md, "Overlapped buffers").
//
// An op whose input X is read for the last time by it (X dies there) may
// write its output Y over X's bytes if Y starts at least d bytes below X:
// Y.off <= X.off - d. Y may reach past X's end. The greedy planner offers
// that position and the plan validator accepts it; no other pair of live
// buffers may share bytes.
//
// Row ops (kernels with an overlap hook, engine/kernel.h: the convolutions,
// pools and pads of NHWC maps): their kernels finish output row y (all its
// columns and channels) before they write anything of row y + 1, and output
// row y reads input rows >= lo(y) = max(0, y * stride - pad_top) only. Row y
// may therefore be written once it lies below input row lo(y):
//
//     Y.off + (y + 1) * row_y <= X.off + lo(y) * row_x    for every y
//     that still reads input (lo(y) < in_h).
//
// A kernel may call other units of its tensors rows: the LSTM's are steps
// (kernels/lstm.c), and output unit u reads input units > u only: lo(u) =
// u + 1 (stride 1, pad_top -1).
//
// A patch-based stage (patch.h) at its last node: it reads its input in
// windows, patch by patch, and writes its output region by region, so its
// distance is its own (computed by tflm_patch_finish from the grid). Inside
// its patch buffer each op's output lies over its input by this rule
// applied to the patch's windows (patch.c, patch_sizes).
//
// Backward (a kernel whose overlap hook sets tflm_rows_t.backward: the int8
// CONV_2D): the kernel can also run its bands of rows last first, so Y may
// instead start e bytes or more above X: Y.off >= X.off + e. Output row y
// reads input rows below hi(y) = y * stride - pad_top + reach (clamped to
// the map; reach: the rows one window spans), so when a band of rows
// [y0, y1) is written every input row below hi(y1 - 1) may still be read:
//
//     Y.off + y0 * row_y >= X.off + hi(y1 - 1) * row_x    for every band.
//
// Chains of such ops zigzag: a depthwise layer's output below its input,
// the next pointwise layer's above its own, the pair back where it started
// (kws_ref_model's four blocks need a row and a pixel of room, not four
// pairs' worth).
//
// Pixels (a kernel whose overlap hook sets tflm_rows_t.pixels: the int8
// DEPTHWISE_CONV_2D of one output channel per input channel, one batch):
// its loops write output pixels in raster order, each after its window was
// read, and each output channel from the same input channel. Output pixel p
// (raster index) reads input pixels from first(p) on, the first tap of its
// window (clamped to the map), so written over input bytes below first(p)
// it destroys nothing a later pixel reads; nor, within pixel p, a channel
// its window still has to give, when Y is at least p - first(p) pixels
// below X whatever the channels' order. Hence, px the bytes of a pixel:
//
//     Y.off <= X.off - P,  P = px * max over p of (p - first(p))
//
// rounded up to a multiple of px and TFLM_ALIGN, so that the planners'
// usual placement, exactly P below, is a whole number of pixels: the
// kernel's fast loops, which go over chunks of channels, are then in order
// (each channel's bytes only meet the same channel's). At another distance
// between P and the row rule's, the kernel goes pixel by pixel, all
// channels of each (depthwise_conv.c's dw_s8_pixels). The smaller of the
// two rules is the op's distance: a 3x3 window of stride 1 needs one row
// and two pixels instead of two rows, of stride 2 none at all.
//
// Element-wise ops (the kernels marked in_place in kernel_table.txt, output
// and input of the same size and element size): element i is written after
// elements 0..i of the input were read, in increasing order, so d = 0.
// Views (RESHAPE, SQUEEZE, EXPAND_DIMS: a memmove of input 0 when the
// buffers differ) are safe at any overlap: d = 0 too.
#ifndef TFLM_ENGINE_OVERLAP_H
#define TFLM_ENGINE_OVERLAP_H

#include "plan.h"

// What a row op reads: batches of in_h input rows of row_x bytes; it
// writes batches of out_h rows of row_y bytes, `band` rows at a time (the
// rows of a band in any order, bands in order; the planner's rule has
// bands of 1); output row y reads input rows from y * stride - pad_top on
// (clamped at 0), `reach` rows from there (the backward rule's only).
typedef struct {
    uint32_t batches;
    uint32_t in_h, out_h;
    uint32_t row_x, row_y;
    uint32_t stride;
    int32_t pad_top;
    uint32_t band;
    uint32_t reach;
} tflm_overlap_rows_t;

// Where an op's output may start over its dying input: `below` bytes or
// more below it, or `up` bytes or more above it (TFLM_OVERLAP_NO_UP: not
// above; the kernel runs forward only).
typedef struct {
    uint32_t below;
    uint32_t up;
} tflm_overlap_t;

#define TFLM_OVERLAP_NO_UP UINT32_MAX

// The first input row output row y of a batch reads, in_h when it reads none.
static inline uint64_t tflm_overlap_first_row(const tflm_overlap_rows_t *g, uint32_t y) {
    int64_t lo = (int64_t)y * g->stride - g->pad_top;
    lo = lo < 0 ? 0 : lo;
    return (uint64_t)(lo < (int64_t)g->in_h ? lo : (int64_t)g->in_h);
}

// The input rows [0, end) output row y of a batch and the rows before it
// read at most (the backward rule), in_h at most.
static inline uint64_t tflm_overlap_rows_end(const tflm_overlap_rows_t *g, uint32_t y) {
    int64_t end = (int64_t)y * g->stride - g->pad_top + g->reach;
    end = end < 0 ? 0 : end;
    return (uint64_t)(end < (int64_t)g->in_h ? end : (int64_t)g->in_h);
}

// The smallest distance for a row op, over all bands of output rows
// (batches one after another). Forward (`up` false): over the bands that
// still read input, (end of the band) * row_y - (first input row the band
// reads) * row_x; rows of the last batch that read no input are free.
// Backward (`up`, batches and bands last first): the input still to be
// read when a band is written (every earlier batch's, this batch's rows
// below the band's last window's end) less where the band starts.
static inline uint64_t tflm_overlap_rows_span(const tflm_overlap_rows_t *g, bool up) {
    uint64_t d = 0;
    const uint32_t band = g->band ? g->band : 1u;
    for (uint32_t b = 0; b < g->batches; ++b) {
        for (uint32_t y = 0; y < g->out_h; y += band) {
            const uint32_t end = g->out_h - y < band ? g->out_h : y + band;
            uint64_t ahead, behind;  // the band's extent that must not pass the input still read
            if (up) {
                ahead = ((uint64_t)b * g->in_h + tflm_overlap_rows_end(g, end - 1)) * g->row_x;
                behind = ((uint64_t)b * g->out_h + y) * g->row_y;
            } else {
                const uint64_t lo = tflm_overlap_first_row(g, y);
                if (lo == g->in_h && b + 1 == g->batches) {
                    break;  // nothing left to read
                }
                // The next batch's rows still wait when this one reads none.
                ahead = ((uint64_t)b * g->out_h + end) * g->row_y;
                behind = ((uint64_t)b * g->in_h + lo) * g->row_x;
            }
            d = ahead > behind && ahead - behind > d ? ahead - behind : d;
        }
    }
    return d;
}

// The smallest d (forward) and e (backward) for a row op.
static inline uint64_t tflm_overlap_rows_distance(const tflm_overlap_rows_t *g) {
    return tflm_overlap_rows_span(g, false);
}

static inline uint64_t tflm_overlap_rows_distance_up(const tflm_overlap_rows_t *g) {
    return tflm_overlap_rows_span(g, true);
}

// tflm_overlap_rows_distance out of line, for a kernel that checks where
// the plan put its output (one copy of the loop in the build).
uint64_t tflm_overlap_rows_forward(const tflm_overlap_rows_t *g);

// Whether record y (output 0 of the op that writes it) may share bytes with
// record x (an input of that op that dies there) although both are alive
// during the op; sets *o to the distances its kernel allows. False for
// every other pair.
bool tflm_overlap_distance(const tflm_plan_view_t *v, uint32_t y, uint32_t x, tflm_overlap_t *o);

// Record x is an output of some subgraph: it lives on after its last
// reader (the caller, or the user after invoke(), reads it), so nothing may
// be written over it in place.
bool tflm_plan_is_output(const tflm_plan_view_t *v, uint32_t x);

// The pair's placement is allowed: y starts at least o->below below x, or
// at least o->up above it.
static inline bool tflm_overlap_ok(const tflm_plan_rec_t *ry, const tflm_plan_rec_t *rx, const tflm_overlap_t *o) {
    return (uint64_t)ry->data + o->below <= rx->data
        || (o->up != TFLM_OVERLAP_NO_UP && (uint64_t)rx->data + o->up <= ry->data);
}

#endif // TFLM_ENGINE_OVERLAP_H
