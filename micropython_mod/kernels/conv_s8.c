// CONV_2D, int8: output rows [row0, row1) of one batch, bit-exact with
// TFLM's reference. The eval() calls it over all rows; a caller that works
// patch by patch or over overlapped buffers calls it row range by row range.
//
// Output channels go in chunks whose constants (the input offset folded
// into each filter's starting sum, the requantization) sit on the stack;
// pixels go in pairs through tflm_mm_s8_2x2, two filters at a time, sums in
// registers (on cores with DSP, pointwise pixels in fours summed two pixels
// per multiply; on the Cortex-M3, a pair's values packed two pixels to a
// word for all the chunk's filters, also two pixels per multiply:
// kernels/mm_s8.h). A pixel's window is read where it lies
// when it is inside the input and its rows are long enough; otherwise
// (borders, or short rows such as a 3-channel or 1-channel input) it is
// first gathered on the stack, with the zero point where the window leaves
// the input (those taps then add nothing, as the reference skips them).
// A larger window goes the same way a slab of its values at a time, the
// chunk's sums of the pixel pair kept on the stack between slabs. Grouped
// filters take the generic per-pixel loop.

// At -Os GCC cannot place the operands of mm_s8.h's DSP blocks where this
// file inlines them ("impossible constraints"): the C loops then (a build
// at -Os asked for size; tests/test_build_settings.py). The Cortex-M3's
// blocks fit.
#if defined(__OPTIMIZE_SIZE__) && defined(__ARM_FEATURE_DSP) && !defined(TFLM_MM_S8_LANES_ASM)
#define TFLM_MM_S8_LANES_ASM (0)
#endif
#include "kernels/loop_opt.h"
#include "kernels/conv_common.h"
#include "kernels/dot.h"
#include "kernels/mm_s8.h"
#include "kernels/out_s8.h"

#if TFLM_KERNEL_CONV_2D

// Output channels whose constants are set up at once (16 bytes each).
#define CONV_S8_CHUNK (32)
// Output channels whose starting sums an overlapped call computes once (4
// bytes each on the stack); a wider layer's others are computed per band
// (tests/test_overlap.py has such a layer).
#ifndef TFLM_CONV_S8_FOLD_MAX
#define TFLM_CONV_S8_FOLD_MAX (128)
#endif
// Output channels whose constants an overlapped call sets up once, all of
// them, in the stack bytes a wider layer uses for one chunk's constants and
// the starting sums: its bands (or pixels) then go over all channels at once.
#define CONV_S8_HOLD ((int32_t)((sizeof(tflm_out_s8_t) * CONV_S8_CHUNK + 4 * TFLM_CONV_S8_FOLD_MAX) \
    / sizeof(tflm_out_s8_t)))
// Largest window (values) gathered for a pixel; two pixels' on the stack.
// On the Cortex-M3 and the DSP cores 256 (3x3 windows of up to 28
// channels go through conv_s8_pair's assembly; the pretrainedResnet_quant's
// 3x3 16-channel layers: -2.8% / -4.4% of its cycles on the M3 / M4, the
// stack's deepest use 6,036 B on the M4); 128 elsewhere (the Cortex-M0+'s
// stack is shorter, and gathering pays off less there).
#if TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2 || TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
#define CONV_S8_GATHER_MAX (256)
#else
#define CONV_S8_GATHER_MAX (128)
#endif
// Longest pixel widened to 16 bits on the stack for the DSP loops (two
// pixels: 4 bytes a value).
#define CONV_S8_WIDE_MAX (256)
// Longest pixel of four packed in lanes (the DSP cores' pointwise loop).
#define CONV_S8_QUAD_MAX (128)
// Whether the kernel notes that every channel of a chunk has the fast
// scaling and the activation's range is all of int8 (conv_s8_t.sat): the
// Cortex-M3's loops and the DSP cores' lanes then clamp with one SSAT.
#define CONV_S8_SAT (TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2 || TFLM_MM_S8_LANES)
// Whether conv_s8_quad_sat's assembly runs the lanes' pointwise outputs
// in the fast form with SMMLAR (out_s8.h): a layer whose constants fit it
// (TFLM_CONV_LANES_MMR). That block takes fourteen registers
// (TFLM_KERNEL_O2).
#define CONV_S8_QUAD_ASM (TFLM_MM_S8_LANES_ASM && TFLM_KERNEL_O2)
#define CONV_S8_QUAD_MMR (TFLM_MM_S8_LANES && CONV_S8_QUAD_ASM)
// Whether that block has its own loops for k of 8, 16, 32, 64 and 128
// (each pair's second filter read at k past the first: one register for
// a weight more, 10% fewer cycles in the loop; 4.8 KB of flash more on the
// Cortex-M4, the fast and the wide form's copies; a board short of flash
// says 0).
#ifndef TFLM_CONV_S8_QUAD_K
#define TFLM_CONV_S8_QUAD_K (1)
#endif
#define CONV_S8_QUAD_K (CONV_S8_QUAD_MMR && TFLM_CONV_S8_QUAD_K)
// Shortest window row read in place (a shorter one is gathered).
#define CONV_S8_DIRECT_MIN (8)
// Whether a window that fits CONV_S8_GATHER_MAX is gathered even where its
// rows could be read in place: on the Cortex-M3 and the DSP cores, the
// gathered pair of pixels goes through one block of assembly for all the
// chunk's channels (conv_s8_pair), a window read in place through a 2x2
// loop per row and pair of channels (conv_s8_block), whose starts cost more
// than the copy (estimator, the shape sweep's conv 3x3 s1 16x16x8->16: M3
// -19%, M4 -20%). On the Cortex-M0+ the copy costs more (+4%).
#define CONV_S8_GATHER_FIRST (TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2 || TFLM_KERNEL_ARCH == TFLM_ARCH_DSP)

// A large window (more than CONV_S8_GATHER_MAX values) is gathered a slab
// at a time, at most CONV_S8_SLAB_MAX values (two pixels' on the stack),
// the sums of a pair of pixels against CONV_S8_SLAB_CH output channels (8
// bytes each) kept from slab to slab in the small windows' buffer (which
// such a layer leaves unused). Each slab costs each pair of channels its
// sums' loads and stores and a loop's start and end: long slabs where the
// loops take few cycles a value and stacks are larger (with DSP the 2x2
// loop's frame is deeper still), shorter ones on Armv6-M (small stacks).
#if TFLM_KERNEL_ARCH == TFLM_ARCH_V6M
#define CONV_S8_SLAB_MAX (96)
#else
#define CONV_S8_SLAB_MAX (256)
#endif
#define CONV_S8_SLAB_CH (2 * CONV_S8_GATHER_MAX / 8)
// On the Cortex-M0 (Armv6-M), the least share of a large window inside the
// input (percent) for which the slabs (which multiply the taps outside too)
// take fewer cycles than the generic loop (which skips them, at more cycles
// a tap, fewer the more channels a tap has), by the cycle estimator: for
// taps of 64 channels or more, then fewer. Elsewhere the slabs take fewer
// cycles whatever the share (the generic loop's taps cost more there).
#if TFLM_KERNEL_ARCH == TFLM_ARCH_V6M
#define CONV_S8_SLAB_INSIDE_LONG (67)
#define CONV_S8_SLAB_INSIDE_SHORT (60)
#endif

// How a pixel is read: in place, gathered, or apart (conv_s8_apart: a
// large window slab by slab, or grouped filters).
enum { PIX_NONE, PIX_DIRECT, PIX_GATHER, PIX_APART };

// What every part of the loops reads, copied out of the kernel data (stores
// through `output` could alias it).
typedef struct {
    const int8_t *in_b;      // this batch's input
    const int8_t *filter;
    const int32_t *bias;
    int32_t in_h, in_w, in_d, f_h, f_w, f_d, out_d;
    int32_t stride_w, pad_w, dil_h, dil_w;
    int32_t in_row, y_step;  // bytes per input row, between window rows
    int32_t w_size, run;     // values per filter, per full window row
    int32_t input_offset, zero_point, act_min, act_max;
    int32_t per_group;       // output channels per group
    int32_t c0, n;           // the chunk of output channels
    const tflm_out_s8_t *q;  // its constants
#if CONV_S8_SAT
    bool sat;                // every one fast (shift >= 0), the activation's range all of int8
    bool wide;               // every one in the wide form (conv_s8_setup), the range all of int8
#endif
#if TFLM_MM_S8_LANES
    uint8_t lanes;           // conv_data_t.lanes: two pixels may sum in one 64-bit sum
#endif
#if TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2
    bool packs;              // pairs of pixels packed for the chunk (conv_s8_packs)
#endif
} conv_s8_t;

// One output row's window rows: origin, first and end tap (vertical).
typedef struct {
    int32_t y0, fy0, fy1;
} conv_s8_row_t;

// n bytes from src to dst (a window row: a few to a few hundred bytes, too
// short for a call to memcpy to pay off).
static inline void conv_s8_copy(int8_t *dst, const int8_t *src, int32_t n) {
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP || TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2
    // These cores load and store words at any address.
    for (; n >= 4; n -= 4, src += 4, dst += 4) {
        const uint32_t v = tflm_ld_u32(src);
        memcpy(dst, &v, 4);
    }
#endif
    for (int32_t i = 0; i < n; ++i) {
        dst[i] = src[i];
    }
}

static inline void conv_s8_fill(int8_t *dst, int8_t value, int32_t n) {
    for (int32_t i = 0; i < n; ++i) {
        dst[i] = value;
    }
}

// conv_s8_fill for the longer runs of a large window (a word at a time
// where any address takes one).
static inline void conv_s8_fill_run(int8_t *dst, int8_t value, int32_t n) {
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP || TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2
    const uint32_t v = (uint8_t)value * 0x01010101u;
    for (; n >= 4; n -= 4, dst += 4) {
        memcpy(dst, &v, 4);
    }
#endif
    conv_s8_fill(dst, value, n);
}

// The window of the pixel at column ox, gathered into dst: f_h x f_w x in_d
// values, the input zero point where it leaves the input.
static TFLM_ALWAYS_INLINE void conv_s8_gather(const conv_s8_t *c, const conv_s8_row_t *row, int32_t ox,
    int8_t *dst) {
    int32_t fx0, fx1;
    const int32_t x0 = conv_window(ox, c->stride_w, c->pad_w, c->dil_w, c->f_w, c->in_w, &fx0, &fx1);
    const int8_t fill = (int8_t)-c->input_offset;
    const int32_t in_d = c->in_d, w_row = c->f_w * in_d;
    for (int32_t fy = 0; fy < c->f_h; ++fy, dst += w_row) {
        if (fy < row->fy0 || fy >= row->fy1 || fx0 >= fx1) {
            conv_s8_fill(dst, fill, w_row);
            continue;
        }
        const int8_t *src = c->in_b + (row->y0 + c->dil_h * fy) * c->in_row + (x0 + c->dil_w * fx0) * in_d;
        conv_s8_fill(dst, fill, fx0 * in_d);
        if (c->dil_w == 1) {
            conv_s8_copy(dst + fx0 * in_d, src, (fx1 - fx0) * in_d);
        } else {
            for (int32_t fx = fx0; fx < fx1; ++fx, src += c->dil_w * in_d) {
                conv_s8_copy(dst + fx * in_d, src, in_d);
            }
        }
        conv_s8_fill(dst + fx1 * in_d, fill, (c->f_w - fx1) * in_d);
    }
}

// The window whose first value is at src, whole inside the input and its
// rows contiguous (no horizontal dilation), gathered into dst: a copy of
// each row, none of conv_s8_gather's edge arithmetic (on the Cortex-M4 a
// 3x3x3 window took about 336 instructions with it, 184 without).
static TFLM_ALWAYS_INLINE void conv_s8_gather_in(const conv_s8_t *c, const int8_t *src, int8_t *dst) {
    const int32_t run = c->run, y_step = c->y_step;
    for (int32_t fy = c->f_h; fy > 0; --fy, src += y_step, dst += run) {
        conv_s8_copy(dst, src, run);
    }
}

// Values [k0, k0 + k) of the window of the pixel at column ox (in the
// filter's order: rows, columns, channels) into dst, the input zero point
// where the window leaves the input.
static TFLM_ALWAYS_INLINE void conv_s8_gather_part(const conv_s8_t *c, const conv_s8_row_t *row, int32_t ox,
    int32_t k0, int32_t k, int8_t *dst) {
    int32_t fx0, fx1;
    const int32_t x0 = conv_window(ox, c->stride_w, c->pad_w, c->dil_w, c->f_w, c->in_w, &fx0, &fx1);
    const int8_t fill = (int8_t)-c->input_offset;
    const int32_t in_d = c->in_d, run = c->run;
    // A window row's values inside the input: [lo, hi).
    const int32_t lo = fx0 * in_d, hi = fx1 * in_d;
    int32_t fy = k0 / run, i = k0 - fy * run;
    for (; k > 0; ++fy, i = 0) {
        // Values [i, e) of window row fy.
        const int32_t e = run - i < k ? run : i + k;
        k -= e - i;
        if (fy < row->fy0 || fy >= row->fy1) {
            conv_s8_fill_run(dst, fill, e - i);
            dst += e - i;
            continue;
        }
        // Value i of the row, once inside, at in_b[at + i] (dilated: plus the gaps).
        const int32_t at = (row->y0 + c->dil_h * fy) * c->in_row + x0 * in_d;
        if (i < lo) {
            const int32_t m = (e < lo ? e : lo) - i;
            conv_s8_fill_run(dst, fill, m);
            dst += m;
            i += m;
        }
        const int32_t b = e < hi ? e : hi;
        if (c->dil_w == 1) {
            if (i < b) {
                conv_s8_copy(dst, c->in_b + (at + i), b - i);
                dst += b - i;
                i = b;
            }
        } else {
            // Tap by tap: the taps lie dil_w pixels apart.
            while (i < b) {
                const int32_t fx = i / in_d, m = ((fx + 1) * in_d < b ? (fx + 1) * in_d : b) - i;
                conv_s8_copy(dst, c->in_b + (at + (c->dil_w - 1) * fx * in_d + i), m);
                dst += m;
                i += m;
            }
        }
        if (i < e) {
            conv_s8_fill_run(dst, fill, e - i);
            dst += e - i;
        }
    }
}

// Any window (grouped filters; on Armv6-M, large windows mostly outside the
// input): the taps inside the input, each with the input offset added, one
// output channel at a time.
__attribute__((noinline)) static void conv_s8_generic(const conv_s8_t *c, const conv_s8_row_t *row, int32_t ox,
    int8_t *out) {
    int32_t fx0, fx1;
    const int32_t x0 = conv_window(ox, c->stride_w, c->pad_w, c->dil_w, c->f_w, c->in_w, &fx0, &fx1);
    const int32_t f_d = c->f_d, w_row = c->f_w * f_d;
    const int32_t fy_end = fx0 < fx1 ? row->fy1 : row->fy0;
    for (int32_t j = 0; j < c->n; ++j) {
        const int32_t oc = c->c0 + j;
        const int8_t *x = c->in_b + (oc / c->per_group) * f_d;
        const int8_t *w = c->filter + oc * c->w_size;
        uint32_t acc = c->bias ? (uint32_t)c->bias[oc] : 0u;
        for (int32_t fy = row->fy0; fy < fy_end; ++fy) {
            const int8_t *xr = x + (row->y0 + c->dil_h * fy) * c->in_row;
            for (int32_t fx = fx0; fx < fx1; ++fx) {
                acc += tflm_dot_s8(w + fy * w_row + fx * f_d, xr + (x0 + c->dil_w * fx) * c->in_d, f_d,
                    c->input_offset);
            }
        }
        out[j] = tflm_out_s8((int32_t)acc, &c->q[j], c->zero_point, c->act_min, c->act_max);
    }
}

#ifdef CONV_S8_SLAB_INSIDE_LONG
// Whether enough of the window of the pixel at column ox lies inside the
// input for the slabs to pay off. Out of line: the slabs' loops keep their
// registers.
__attribute__((noinline)) static bool conv_s8_mostly_inside(const conv_s8_t *c, const conv_s8_row_t *row,
    int32_t ox) {
    int32_t fx0, fx1;
    conv_window(ox, c->stride_w, c->pad_w, c->dil_w, c->f_w, c->in_w, &fx0, &fx1);
    const int32_t least = c->in_d >= 64 ? CONV_S8_SLAB_INSIDE_LONG : CONV_S8_SLAB_INSIDE_SHORT;
    return 100 * (row->fy1 - row->fy0) * (fx1 - fx0) >= least * c->f_h * c->f_w;
}
#endif

// A pixel of a large window waiting for a second one, and where a pair's
// sums go from slab to slab.
typedef struct {
    conv_s8_row_t row;
    int32_t ox;
    int8_t *out;  // NULL: none waits
    uint32_t *sums;
} conv_s8_wait_t;

// The waiting pixel of a large window and (row not NULL) the one at column
// ox of `row`: their windows gathered a slab of values at a time, each
// slab against the chunk's filters two at a time, the sums kept in
// wait->sums (4 per pair of channels) from slab to slab (for a chunk of
// channels wider than CONV_S8_SLAB_CH, part by part). out: the second
// pixel's output at the chunk's first channel.
__attribute__((noinline)) static void conv_s8_slabs(const conv_s8_t *c, conv_s8_wait_t *wait,
    const conv_s8_row_t *row, int32_t ox, int8_t *out) {
    const conv_s8_row_t *rows[2] = { &wait->row, row };
    const int32_t cols[2] = { wait->ox, ox };
    int8_t *out0 = wait->out, *out1 = out;
    uint32_t *sums = wait->sums;
    const bool pair = row != NULL;
    wait->out = NULL;
    const int32_t w_size = c->w_size, zp = c->zero_point, lo = c->act_min, hi = c->act_max;
    // Slabs of equal length (a multiple of 4 values), the last shorter.
    const int32_t slabs = (w_size + CONV_S8_SLAB_MAX - 1) / CONV_S8_SLAB_MAX;
    const int32_t len = ((w_size + slabs - 1) / slabs + 3) & ~3;
    int8_t x[2 * CONV_S8_SLAB_MAX];
    int8_t *x0 = x, *x1 = x + CONV_S8_SLAB_MAX;
    for (int32_t p0 = 0; p0 < c->n; p0 += CONV_S8_SLAB_CH) {
        const int32_t pn = c->n - p0 < CONV_S8_SLAB_CH ? c->n : p0 + CONV_S8_SLAB_CH;
        for (int32_t k0 = 0; k0 < w_size; k0 += len) {
            const int32_t k = w_size - k0 < len ? w_size - k0 : len;
            const bool first = k0 == 0, last = k0 + k == w_size;
            for (int32_t p = 0; p < 1 + pair; ++p) {
                conv_s8_gather_part(c, rows[p], cols[p], k0, k, x0 + p * CONV_S8_SLAB_MAX);
            }
            const int8_t *w = c->filter + (c->c0 + p0) * w_size + k0;
            for (int32_t j = p0; j < pn; j += 2, w += 2 * w_size) {
                // An odd last channel runs against itself; its second sum is dropped.
                const bool two = j + 1 < c->n;
                const tflm_out_s8_t *q0 = &c->q[j], *q1 = two ? q0 + 1 : q0;
                const int8_t *w1 = two ? w + w_size : w;
                uint32_t *a = sums + 2 * (j - p0);
                if (first) {
                    a[0] = a[2] = (uint32_t)q0->bias;
                    a[1] = a[3] = (uint32_t)q1->bias;
                }
                if (pair) {
                    tflm_mm_s8_2x2(x0, x1, w, w1, k, a);
                } else {
                    tflm_mm_s8_1x2(x0, w, w1, k, a);
                }
                if (!last) {
                    continue;
                }
                out0[j] = tflm_out_s8((int32_t)a[0], q0, zp, lo, hi);
                if (two) {
                    out0[j + 1] = tflm_out_s8((int32_t)a[1], q1, zp, lo, hi);
                }
                if (pair) {
                    out1[j] = tflm_out_s8((int32_t)a[2], q0, zp, lo, hi);
                    if (two) {
                        out1[j + 1] = tflm_out_s8((int32_t)a[3], q1, zp, lo, hi);
                    }
                }
            }
        }
    }
}

// The pixels that do not pair up in place, at column ox of `row` (out: its
// output at the chunk's first channel): with grouped filters alone
// (conv_s8_generic); else (a large window) left waiting, or with the
// waiting one (row NULL: the waiting one alone) through conv_s8_slabs. Out
// of line, as the two it calls, so that the pixel loops keep their
// registers and the generic loop's frame does not stack on the slabs'.
__attribute__((noinline)) static void conv_s8_apart(const conv_s8_t *c, conv_s8_wait_t *wait,
    const conv_s8_row_t *row, int32_t ox, int8_t *out) {
    if (c->f_d != c->in_d) {
        conv_s8_generic(c, row, ox, out);
        return;
    }
#ifdef CONV_S8_SLAB_INSIDE_LONG
    if (row != NULL && !conv_s8_mostly_inside(c, row, ox)) {
        conv_s8_generic(c, row, ox, out);
        return;
    }
#endif
    if (row != NULL && wait->out == NULL) {
        wait->row = *row;
        wait->ox = ox;
        wait->out = out;
        return;
    }
    conv_s8_slabs(c, wait, row, ox, out);
}

#if TFLM_KERNEL_ARCH == TFLM_ARCH_V6M
// Which pixels go through conv_s8_pixel_v6m: windows of CONV_S8_V6M_RUN_MIN
// values or more, or chunks of CONV_S8_V6M_CH_MIN channels or more. Its sums
// go through memory between the loop and the output stage, and a chunk's
// last channels (beyond a multiple of 6 or 4) through the 1x2 loop a pixel at
// a time: on 8 values against 8 channels that costs more than the six-filter
// loop saves (conv 1x1 16x16x8->8 of the shape sweep: 316,210 cycles through
// the 1x2 loops, 339,232 through it), on 8 against 16 less (person_detect's
// conv 1x1 48x48x8->48x48x16: 5,341,430 against 5,182,424).
#define CONV_S8_V6M_RUN_MIN (12)
#define CONV_S8_V6M_CH_MIN (16)

static inline bool conv_s8_v6m_six(const conv_s8_t *c, int32_t values) {
    return values >= CONV_S8_V6M_RUN_MIN || c->n >= CONV_S8_V6M_CH_MIN;
}

// One pixel against the chunk's filters (Armv6-M): six at a time
// (tflm_mm_s8_1x6: its value loaded once for six products), then four, then
// the rest two by two. A window is `rows` runs of `run` values, `step` apart
// (the filter's rows are contiguous); out: the pixel's output at the chunk's
// first channel.
static void conv_s8_pixel_v6m(const conv_s8_t *c, const int8_t *x, int32_t rows, int32_t run, int32_t step,
    int8_t *out) {
    const tflm_out_s8_t *q = c->q;
    const int32_t n = c->n, w_size = c->w_size, zp = c->zero_point, lo = c->act_min, hi = c->act_max;
    const int8_t *w = c->filter + c->c0 * w_size;
    int32_t j = 0;
    for (; j + 6 <= n; j += 6, w += 6 * w_size) {
        // The sums start from the channels' records, then go on from a.
        uint32_t a[6];
        tflm_mm_s8_1x6(x, w, w_size, run, &q[j].bias, (int32_t)sizeof(tflm_out_s8_t), a);
        for (int32_t r = 1; r < rows; ++r) {
            tflm_mm_s8_1x6(x + r * step, w + r * run, w_size, run, a, 4, a);
        }
        for (int32_t i = 0; i < 6; ++i) {
            out[j + i] = tflm_out_s8((int32_t)a[i], &q[j + i], zp, lo, hi);
        }
    }
    if (j + 4 <= n) {
        uint32_t a[4];
        tflm_mm_s8_1x4(x, w, w_size, run, &q[j].bias, (int32_t)sizeof(tflm_out_s8_t), a);
        for (int32_t r = 1; r < rows; ++r) {
            tflm_mm_s8_1x4(x + r * step, w + r * run, w_size, run, a, 4, a);
        }
        for (int32_t i = 0; i < 4; ++i) {
            out[j + i] = tflm_out_s8((int32_t)a[i], &q[j + i], zp, lo, hi);
        }
        j += 4;
        w += 4 * w_size;
    }
    for (; j < n; j += 2, w += 2 * w_size) {
        // An odd last channel runs against itself; its second sum is dropped.
        const bool two = j + 1 < n;
        const int32_t j1 = two ? j + 1 : j;
        const int8_t *w1 = two ? w + w_size : w;
        uint32_t a[2] = { (uint32_t)q[j].bias, (uint32_t)q[j1].bias };
        for (int32_t r = 0; r < rows; ++r) {
            tflm_mm_s8_1x2(x + r * step, w + r * run, w1 + r * run, run, a);
        }
        out[j] = tflm_out_s8((int32_t)a[0], &q[j], zp, lo, hi);
        if (two) {
            out[j + 1] = tflm_out_s8((int32_t)a[1], &q[j1], zp, lo, hi);
        }
    }
}
#endif

// Two pixels (x1 == NULL: one) against the chunk's filters. A window is
// `rows` runs of `run` values, `step` apart (the filter's rows are
// contiguous). out0/out1: the pixels' outputs at the chunk's first channel.
static void conv_s8_block(const conv_s8_t *c, const int8_t *x0, const int8_t *x1, int32_t rows, int32_t run,
    int32_t step, int8_t *out0, int8_t *out1) {
    const tflm_out_s8_t *q = c->q;
    const int32_t n = c->n, w_size = c->w_size, zp = c->zero_point, lo = c->act_min, hi = c->act_max;
    const int8_t *w = c->filter + c->c0 * w_size;
    for (int32_t j = 0; j < n; j += 2, w += 2 * w_size) {
        // An odd last channel runs against itself; its second sum is dropped.
        const bool two = j + 1 < n;
        const int32_t j1 = two ? j + 1 : j;
        const int8_t *w1 = two ? w + w_size : w;
        uint32_t a[4] = { (uint32_t)q[j].bias, (uint32_t)q[j1].bias, (uint32_t)q[j].bias, (uint32_t)q[j1].bias };
        if (x1 != NULL) {
            for (int32_t r = 0; r < rows; ++r) {
                tflm_mm_s8_2x2(x0 + r * step, x1 + r * step, w + r * run, w1 + r * run, run, a);
            }
            out1[j] = tflm_out_s8((int32_t)a[2], &q[j], zp, lo, hi);
            if (two) {
                out1[j + 1] = tflm_out_s8((int32_t)a[3], &q[j1], zp, lo, hi);
            }
        } else {
            for (int32_t r = 0; r < rows; ++r) {
                tflm_mm_s8_1x2(x0 + r * step, w + r * run, w1 + r * run, run, a);
            }
        }
        out0[j] = tflm_out_s8((int32_t)a[0], &q[j], zp, lo, hi);
        if (two) {
            out0[j + 1] = tflm_out_s8((int32_t)a[1], &q[j1], zp, lo, hi);
        }
    }
}

// One output value; `sat` (conv_s8_t.sat): the channel's scaling is the fast
// one and the activation's range all of int8, which on Armv7-M one SSAT
// clamps to (the range's bounds stay out of registers).
static TFLM_ALWAYS_INLINE int8_t conv_s8_out(int32_t acc, const tflm_out_s8_t *q, int32_t zp, int32_t lo,
    int32_t hi, bool sat) {
#if CONV_S8_SAT && defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT
    if (sat) {
        return (int8_t)tflm_out_s8_sat(tflm_out_s8_scale(acc, q->mult, q->k, q->shift));
    }
#else
    (void)sat;
#endif
    return tflm_out_s8(acc, q, zp, lo, hi);
}

// The assembly blocks below read tflm_out_s8_t as four words.
_Static_assert(offsetof(tflm_out_s8_t, bias) == 0 && offsetof(tflm_out_s8_t, mult) == 4
    && offsetof(tflm_out_s8_t, k) == 8 && offsetof(tflm_out_s8_t, shift) == 12 && sizeof(tflm_out_s8_t) == 16,
    "the assembly reads tflm_out_s8_t as four words");
// tflm_out_s8_scale of the sum in register v, then `post` (the wide form's
// zero point, else TFLM_OUT_S8_ASM_NONE) and SSAT, into register u (t:
// scratch): the multiplier in m, k in k, the shift in sh; out_s8.h's steps
// with 2^30 an immediate (the blocks have no register left for it).
#define CONV_S8_ASM_OUT(v, m, k, sh, t, u, post) \
    TFLM_OUT_S8_ASM((v, m, k, sh, t, u, ""), TFLM_OUT_S8_ASM_LO_IMM, post, TFLM_OUT_S8_ASM_SSAT)
// The wide form's shift, -(r + 1), to the fast form's r - 1, in register sh.
#define CONV_S8_ASM_WIDE_SHIFT(sh) "mvn " sh ", " sh "\n\t" "sub " sh ", " sh ", #1\n\t"

// Whether the DSP cores' pairs of pixels run their channels in assembly
// when `sat` or `wide` (conv_s8_pair_run).
#define CONV_S8_PAIR_DSP_ASM (TFLM_KERNEL_ARCH == TFLM_ARCH_DSP && TFLM_MM_S8_LANES_ASM)

#if CONV_S8_PAIR_DSP_ASM
// The output stage into wv: the multiplier in xa, k in xb, the shift in xc
// (the loop's registers, free once it is done).
#define CONV_S8_PAIR_DSP_OUT(v, post) CONV_S8_ASM_OUT(v, "%[xa]", "%[xb]", "%[xc]", "%[xd]", "%[wv]", post)
// The wide form (conv_s8_t.wide): the zero point in wt, added after the
// shift, and the shift from -(r + 1) to r - 1.
#define CONV_S8_PAIR_DSP_ZP "ldr %[wt], %[zpm]\n\t"
#define CONV_S8_PAIR_DSP_SH CONV_S8_ASM_WIDE_SHIFT("%[xc]")
#define CONV_S8_PAIR_DSP_POST(v, m, k, sh, t, u, c30) "add " u ", " u ", %[wt]\n\t"

// conv_s8_pair_run's channels two by two on the DSP cores, in one block of
// assembly, when every channel has the fast scaling (or every one the wide
// form: `wide`, the second copy) and the activation's range is all of int8
// (`sat`): tflm_mm_s16s8_2x2's loop over the widened
// pixels xw .. xw_end, the k3 values left one a step (x0, x1: where they
// start), then the four outputs from the registers the loops leave their
// sums in (as conv_s8_pair_sat on the Cortex-M3).
#define CONV_S8_PAIR_DSP_BLOCK(zp, sh, post) \
    "0:\n\t" \
    "ldr %[wt], %[qm]\n\t" \
    "ldr %[a00], [%[wt]]\n\t" \
    "ldr %[a01], [%[wt], #16]\n\t" \
    "mov %[a10], %[a00]\n\t" \
    "mov %[a11], %[a01]\n\t" \
    "ldr %[xw], %[xwm]\n\t" \
    "ldr %[end], %[endm]\n\t" \
    "ldr %[w0], %[wm]\n\t" \
    "ldr %[w1], %[km]\n\t" \
    "add %[w1], %[w0], %[w1]\n\t" \
    TFLM_MM_S16S8_2X2_LOOP \
    "ldr %[end], %[k3m]\n\t" \
    "cmp %[end], #0\n\t" \
    "beq 5f\n\t" \
    "ldr %[xa], %[x0m]\n\t" \
    "ldr %[xb], %[x1m]\n" \
    "4:\n\t" \
    "ldrsb %[xc], [%[xa]], #1\n\t" \
    "ldrsb %[xd], [%[xb]], #1\n\t" \
    "ldrsb %[wv], [%[w0]], #1\n\t" \
    "ldrsb %[wt], [%[w1]], #1\n\t" \
    "mla %[a00], %[xc], %[wv], %[a00]\n\t" \
    "mla %[a01], %[xc], %[wt], %[a01]\n\t" \
    "mla %[a10], %[xd], %[wv], %[a10]\n\t" \
    "mla %[a11], %[xd], %[wt], %[a11]\n\t" \
    "subs %[end], %[end], #1\n\t" \
    "bne 4b\n" \
    "5:\n\t" \
    "str %[w1], %[wm]\n\t" \
    "ldr %[xw], %[qm]\n\t" \
    "ldr %[xa], [%[xw], #4]\n\t" \
    "ldr %[xb], [%[xw], #8]\n\t" \
    "ldr %[xc], [%[xw], #12]\n\t" \
    sh \
    "ldr %[w0], %[o0m]\n\t" \
    "ldr %[end], %[o1dm]\n\t" \
    "add %[end], %[w0], %[end]\n\t" \
    zp \
    CONV_S8_PAIR_DSP_OUT("%[a00]", post) \
    "strb %[wv], [%[w0]]\n\t" \
    CONV_S8_PAIR_DSP_OUT("%[a10]", post) \
    "strb %[wv], [%[end]]\n\t" \
    "ldr %[xa], [%[xw], #20]\n\t" \
    "ldr %[xb], [%[xw], #24]\n\t" \
    "ldr %[xc], [%[xw], #28]\n\t" \
    sh \
    CONV_S8_PAIR_DSP_OUT("%[a01]", post) \
    "strb %[wv], [%[w0], #1]\n\t" \
    CONV_S8_PAIR_DSP_OUT("%[a11]", post) \
    "strb %[wv], [%[end], #1]\n\t" \
    "add %[xw], %[xw], #32\n\t" \
    "str %[xw], %[qm]\n\t" \
    "add %[w0], %[w0], #2\n\t" \
    "str %[w0], %[o0m]\n\t" \
    "ldr %[wt], %[left]\n\t" \
    "subs %[wt], %[wt], #1\n\t" \
    "str %[wt], %[left]\n\t" \
    "bne 0b"
#define CONV_S8_PAIR_DSP_OPERANDS \
    : [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11), [xw] "=&r"(xw), \
    [end] "=&r"(end), [w0] "=&r"(w0), [w1] "=&r"(w1), [xa] "=&r"(xa), [xb] "=&r"(xb), [xc] "=&r"(xc), \
    [xd] "=&r"(xd), [wv] "=&r"(wv), [wt] "=&r"(wt), [wm] "+m"(w), [qm] "+m"(q), [o0m] "+m"(o0), \
    [left] "+m"(pairs) \
    : [xwm] "m"(xws), [endm] "m"(xw_end), [km] "m"(k), [k3m] "m"(k3), [x0m] "m"(x0), [x1m] "m"(x1), \
      [zpm] "m"(zp), [o1dm] "m"(o1d) \
    : "memory", "cc"

static void conv_s8_pair_sat_dsp(const uint32_t *xws, const uint32_t *xw_end, const int8_t *x0, const int8_t *x1,
    int32_t k3, int32_t k, const int8_t *w, const tflm_out_s8_t *q, int32_t zp, bool wide, int8_t *o0, int8_t *o1,
    int32_t pairs) {
    const ptrdiff_t o1d = o1 - o0;  // (an operand fewer than o1 itself: GCC takes at most 30)
    uint32_t a00, a01, a10, a11, wv, wt;
    TFLM_MM_S16S8_X_REGS;
    const uint32_t *xw, *end;
    const int8_t *w0, *w1;
    if (wide) {
        __asm__ volatile(CONV_S8_PAIR_DSP_BLOCK(CONV_S8_PAIR_DSP_ZP, CONV_S8_PAIR_DSP_SH, CONV_S8_PAIR_DSP_POST)
            CONV_S8_PAIR_DSP_OPERANDS);
    } else {
        __asm__ volatile(CONV_S8_PAIR_DSP_BLOCK("", "", TFLM_OUT_S8_ASM_NONE) CONV_S8_PAIR_DSP_OPERANDS);
    }
}
#undef CONV_S8_PAIR_DSP_BLOCK
#undef CONV_S8_PAIR_DSP_OPERANDS
#undef CONV_S8_PAIR_DSP_ZP
#undef CONV_S8_PAIR_DSP_SH
#undef CONV_S8_PAIR_DSP_POST
#undef CONV_S8_PAIR_DSP_OUT
#endif

// Whether the Cortex-M3's pairs of pixels run in assembly (Thumb-2 without
// DSP, optimised builds: the conditions of mm_s8.h's loops).
#if TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2 && defined(__thumb2__) && defined(__ARM_ARCH_PROFILE) \
    && __ARM_ARCH_PROFILE == 'M' && defined(__OPTIMIZE__)
#define CONV_S8_PAIR_ASM (1)
#else
#define CONV_S8_PAIR_ASM (0)
#endif

#if TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2
// Whether a pair of pixels of k values goes through the packed blocks
// (mm_s8.h, conv_s8_pair_packed) against n channels: by the cycle
// estimator on pointwise layers of 8 to 256 values and 4 to 16 channels,
// they save about 3.5 cycles a value for each pair of channels less 8 for
// its start, and the packing and the calls cost about 6.5 a value and 95
// more (so one pair of channels alone gains nothing, and k = 4 never).
static inline bool conv_s8_packs(int32_t k, int32_t n) {
    return k <= CONV_S8_WIDE_MAX && (n >> 1) * (7 * k - 16) > 13 * k + 192;
}
#endif

// Two pixels (x1 == NULL: one) of `k` contiguous values each (a 1x1
// window, or a window gathered on the stack) against the chunk's filters,
// two at a time. out0/out1: the pixels' outputs at the chunk's first channel.
static TFLM_ALWAYS_INLINE void conv_s8_pair_run(const conv_s8_t *c, const int8_t *x0, const int8_t *x1, int32_t k,
    int8_t *out0, int8_t *out1, bool sat) {
    const int32_t n = c->n, zp = c->zero_point, lo = c->act_min, hi = c->act_max;
    const tflm_out_s8_t *q = c->q;
    const int8_t *w = c->filter + c->c0 * k;
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
    // Both pixels widened once for all the filters (up to the last multiple
    // of 4; the rest, if any, value by value).
    uint32_t xw[CONV_S8_WIDE_MAX];  // one word per value: two pixels' halfwords
    const int32_t k4 = k <= CONV_S8_WIDE_MAX ? k & ~3 : 0;
    if (x1 != NULL) {
        tflm_mm_s8_widen2(x0, x1, k4 >> 2, xw);
    }
#elif TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2 && !CONV_S8_PAIR_ASM
    // Both pixels packed once for all the filters (mm_s8.h, conv_s8_packs):
    // conv_s8_pair_packed's sums in C. (The assembly's builds leave the
    // rare chunks it does not take, which are not `sat`, to the 2x2 block:
    // this frame then stays small.)
    uint32_t xw[CONV_S8_WIDE_MAX];
    const bool packed = x1 != NULL && c->packs && k <= CONV_S8_WIDE_MAX;
    if (packed) {
        tflm_mm_s8_pack2(x0, x1, k, xw);
    }
#endif
    int32_t j = 0;
#if CONV_S8_PAIR_DSP_ASM
    if ((sat || c->wide) && x1 != NULL && k <= CONV_S8_WIDE_MAX && n >= 2) {
        conv_s8_pair_sat_dsp(xw, xw + k4, x0 + k4, x1 + k4, k - k4, k, w, q, zp, c->wide, out0, out1, n >> 1);
        j = n & ~1;
        w += j * k;
    }
#endif
    for (; j < n; j += 2, w += 2 * k) {
        // An odd last channel runs against itself; its second sum is dropped.
        const bool two = j + 1 < n;
        const tflm_out_s8_t *q0 = &q[j], *q1 = two ? q0 + 1 : q0;
        const int8_t *w1 = two ? w + k : w;
        uint32_t a[4] = { (uint32_t)q0->bias, (uint32_t)q1->bias, (uint32_t)q0->bias, (uint32_t)q1->bias };
        if (x1 != NULL) {
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
            tflm_mm_s16s8_2x2(xw, xw + k4, w, (int32_t)(w1 - w), a);
            tflm_mm_s8_2x2(x0 + k4, x1 + k4, w + k4, w1 + k4, k - k4, a);
#elif TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2 && !CONV_S8_PAIR_ASM
            if (packed) {
                tflm_mm_s8_pair2x2(xw, k, w, w1, a);
            } else {
                tflm_mm_s8_2x2(x0, x1, w, w1, k, a);
            }
#else
            tflm_mm_s8_2x2(x0, x1, w, w1, k, a);
#endif
            out1[j] = conv_s8_out((int32_t)a[2], q0, zp, lo, hi, sat);
            if (two) {
                out1[j + 1] = conv_s8_out((int32_t)a[3], q1, zp, lo, hi, sat);
            }
        } else {
            tflm_mm_s8_1x2(x0, w, w1, k, a);
        }
        out0[j] = conv_s8_out((int32_t)a[0], q0, zp, lo, hi, sat);
        if (two) {
            out0[j + 1] = conv_s8_out((int32_t)a[1], q1, zp, lo, hi, sat);
        }
    }
}

#if CONV_S8_PAIR_ASM
// The output stage into t1: the multiplier in f0, k in f1, the shift in p1
// (the loop's registers, free once it is done).
#define CONV_S8_PAIR_OUT(v, post) CONV_S8_ASM_OUT(v, "%[f0]", "%[f1]", "%[p1]", "%[t0]", "%[t1]", post)
// The wide form (conv_s8_t.wide): the zero point in t3, added after the
// shift, and the shift from -(r + 1) to r - 1.
#define CONV_S8_PAIR_ZP "ldr %[t3], %[zpm]\n\t"
#define CONV_S8_PAIR_SH CONV_S8_ASM_WIDE_SHIFT("%[p1]")
#define CONV_S8_PAIR_POST(v, m, k, sh, t, u, c30) "add " u ", " u ", %[t3]\n\t"

// conv_s8_pair_run's channels two by two for two pixels, in one block of
// assembly (the Cortex-M3), when each channel has the fast scaling (or each
// the wide form: copies that add the zero point after the shift) and the
// activation's range is all of int8 (conv_s8_t.sat, .wide): the 2x2 block's
// loop with post-indexed loads (sixteen values a turn, four, eight or
// twelve first as k's bits ask, both tested by one LSLS into N and C,
// which the steps leave alone; then one a step for the k % 4 left,
// pointwise or a gathered window), then the four outputs from the registers
// it leaves its sums in. (GCC's code added the four
// pointers' increments at each step, and reloaded and spilled about 50
// instructions' worth at each pair of channels around the loop.) Where
// conv_s8_pair_packed does not pay (conv_s8_packs: short windows, few
// channels) or cannot take the window (over CONV_S8_WIDE_MAX values).
// Four values: tflm_mm_s8_2x2's steps (kernels/mm_s8.h).
#define CONV_S8_PAIR_FOUR TFLM_MM_S8_2X2_T2_FOUR
// The block for each pair of channels; `start` enters the loop of four a
// step (CONV_S8_PAIR_START for k a multiple of 4; else
// CONV_S8_PAIR_FIRST, which skips it when k < 4), `rest` runs the k % 4
// values left one a step (empty for k a multiple of 4).
#define CONV_S8_PAIR_BLOCK(start, rest, zp, sh, post) \
    "0:\n\t" \
    "ldr %[e], %[qm]\n\t" \
    "ldr %[a0], [%[e]]\n\t" \
    "ldr %[a1], [%[e], #16]\n\t" \
    "mov %[a2], %[a0]\n\t" \
    "mov %[a3], %[a1]\n\t" \
    "ldr %[p0], %[x0m]\n\t" \
    "ldr %[p1], %[x1m]\n\t" \
    "ldr %[f0], %[wm]\n\t" \
    "ldr %[e], %[km]\n\t" \
    "add %[f1], %[f0], %[e]\n\t" \
    start \
    "cmp %[p0], %[e]\n\t" \
    "beq 5f\n" \
    ".p2align 2\n" \
    "1:\n\t" \
    CONV_S8_PAIR_FOUR CONV_S8_PAIR_FOUR CONV_S8_PAIR_FOUR CONV_S8_PAIR_FOUR \
    "cmp %[p0], %[e]\n\t" \
    "bne 1b\n" \
    "5:\n\t" \
    rest \
    "str %[f1], %[wm]\n\t" \
    "ldr %[e], %[qm]\n\t" \
    "ldr %[f0], [%[e], #4]\n\t" \
    "ldr %[f1], [%[e], #8]\n\t" \
    "ldr %[p1], [%[e], #12]\n\t" \
    sh \
    "ldr %[p0], %[o0m]\n\t" \
    "ldr %[t2], %[o1m]\n\t" \
    zp \
    CONV_S8_PAIR_OUT("%[a0]", post) \
    "strb %[t1], [%[p0]]\n\t" \
    CONV_S8_PAIR_OUT("%[a2]", post) \
    "strb %[t1], [%[t2]]\n\t" \
    "ldr %[f0], [%[e], #20]\n\t" \
    "ldr %[f1], [%[e], #24]\n\t" \
    "ldr %[p1], [%[e], #28]\n\t" \
    sh \
    CONV_S8_PAIR_OUT("%[a1]", post) \
    "strb %[t1], [%[p0], #1]\n\t" \
    CONV_S8_PAIR_OUT("%[a3]", post) \
    "strb %[t1], [%[t2], #1]\n\t" \
    "add %[e], %[e], #32\n\t" \
    "str %[e], %[qm]\n\t" \
    "add %[p0], %[p0], #2\n\t" \
    "str %[p0], %[o0m]\n\t" \
    "add %[t2], %[t2], #2\n\t" \
    "str %[t2], %[o1m]\n\t" \
    "ldr %[t0], %[left]\n\t" \
    "subs %[t0], %[t0], #1\n\t" \
    "str %[t0], %[left]\n\t" \
    "bne 0b"
// The loop's start for k a multiple of 4 (e holds k).
#define CONV_S8_PAIR_START \
    TFLM_ASM_START16("%[e]", 29, "%[t0]", "add %[e], %[p0], %[e]\n\t", CONV_S8_PAIR_FOUR, 6, 8, 7, 1)
// Else the loop's share, k4 = k & ~3 values (possibly none), then the k % 4
// values left one a step (CONV_S8_PAIR_REST).
#define CONV_S8_PAIR_FIRST \
    "ldr %[e], %[k4m]\n\t" \
    "add %[e], %[p0], %[e]\n\t" \
    "cmp %[p0], %[e]\n\t" \
    "beq 2f\n\t" \
    "sub %[t0], %[e], %[p0]\n\t" \
    TFLM_ASM_TWO_BITS("%[t0]", 29, 6, CONV_S8_PAIR_FOUR, "bcc 7f\n\t") \
    CONV_S8_PAIR_FOUR CONV_S8_PAIR_FOUR \
    "7:\n\t"
#define CONV_S8_PAIR_REST \
    "2:\n\t" \
    "ldr %[t0], %[k3m]\n\t" \
    "add %[e], %[p0], %[t0]\n" \
    "3:\n\t" \
    TFLM_MM_S8_2X2_T2_STEP("], #1") \
    "cmp %[p0], %[e]\n\t" \
    "bne 3b\n\t"
#define CONV_S8_PAIR_OPERANDS \
    : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [p0] "=&r"(p0), [p1] "=&r"(p1), \
      [f0] "=&r"(f0), [f1] "=&r"(f1), [e] "=&r"(e), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), \
      [t3] "=&r"(t3), [wm] "+m"(w), [qm] "+m"(q), [o0m] "+m"(o0), [o1m] "+m"(o1), [left] "+m"(pairs) \
    : [x0m] "m"(x0), [x1m] "m"(x1), [km] "m"(k), [k4m] "m"(k4), [k3m] "m"(k3), [zpm] "m"(zp) \
    : "memory", "cc"

static void conv_s8_pair_sat(const int8_t *x0, const int8_t *x1, int32_t k, const int8_t *w,
    const tflm_out_s8_t *q, int32_t zp, bool wide, int8_t *o0, int8_t *o1, int32_t pairs) {
    const int32_t k4 = k & ~3, k3 = k & 3;
    uint32_t a0, a1, a2, a3;
    const int8_t *p0, *p1, *f0, *f1, *e;
    int32_t t0, t1, t2, t3;
    // (With k3 == 0, k >= 4: conv_s8_pair takes no empty window.)
    if (wide && k3 == 0) {
        __asm__ volatile(
            CONV_S8_PAIR_BLOCK(CONV_S8_PAIR_START, "", CONV_S8_PAIR_ZP, CONV_S8_PAIR_SH, CONV_S8_PAIR_POST)
            CONV_S8_PAIR_OPERANDS);
    } else if (wide) {
        __asm__ volatile(CONV_S8_PAIR_BLOCK(CONV_S8_PAIR_FIRST, CONV_S8_PAIR_REST,
            CONV_S8_PAIR_ZP, CONV_S8_PAIR_SH, CONV_S8_PAIR_POST) CONV_S8_PAIR_OPERANDS);
    } else if (k3 == 0) {
        __asm__ volatile(CONV_S8_PAIR_BLOCK(CONV_S8_PAIR_START, "", "", "", TFLM_OUT_S8_ASM_NONE)
            CONV_S8_PAIR_OPERANDS);
    } else {
        __asm__ volatile(CONV_S8_PAIR_BLOCK(CONV_S8_PAIR_FIRST, CONV_S8_PAIR_REST,
            "", "", TFLM_OUT_S8_ASM_NONE) CONV_S8_PAIR_OPERANDS);
    }
}
#undef CONV_S8_PAIR_BLOCK
#undef CONV_S8_PAIR_FOUR
#undef CONV_S8_PAIR_FIRST
#undef CONV_S8_PAIR_START
#undef CONV_S8_PAIR_REST
#undef CONV_S8_PAIR_OPERANDS
#undef CONV_S8_PAIR_ZP
#undef CONV_S8_PAIR_SH
#undef CONV_S8_PAIR_POST
#undef CONV_S8_PAIR_OUT
#endif

#if CONV_S8_PAIR_ASM
// conv_s8_pair_sat with both pixels packed (mm_s8.h, tflm_mm_s8_pair2x2):
// per pair of channels, the blocks of two values four a turn (one, then
// two first as the count's bits ask, tested by one LSLS into N and C), an
// odd last value alone, then the four outputs. A block of both channels:
// the pixels' two words and the four weights loaded back to back (7
// cycles), then per channel MUL, MLA, RSB and two SUB (6): 19 cycles for
// eight products, where conv_s8_pair_sat's loop takes 26.
// The loop's end: in register e, or, in position-independent builds
// (tflm.mpy), where the GOT's address takes a register, loaded at each
// turn (2 cycles in 79).
#if defined(__PIC__)
#define CONV_S8_PACKED_END_LOAD ""
#define CONV_S8_PACKED_CMP "ldr %[wa], %[endm]\n\t" "cmp %[xp], %[wa]\n\t"
#define CONV_S8_PACKED_E
#else
#define CONV_S8_PACKED_END_LOAD "ldr %[e], %[endm]\n\t"
#define CONV_S8_PACKED_CMP "cmp %[xp], %[e]\n\t"
#define CONV_S8_PACKED_E , [e] "=&r"(e)
#endif
#define CONV_S8_PACKED_OUT(v, post) CONV_S8_ASM_OUT(v, "%[ya]", "%[yb]", "%[wa]", "%[wb]", "%[wc]", post)
#define CONV_S8_PACKED_ZP "ldr %[wd], %[zpm]\n\t"
#define CONV_S8_PACKED_SH CONV_S8_ASM_WIDE_SHIFT("%[wa]")
#define CONV_S8_PACKED_POST(v, m, k, sh, t, u, c30) "add " u ", " u ", %[wd]\n\t"
// Both channels' products of a block whose words are in ya, yb and weights
// in wa, wb (channel 0) and wc, wd (channel 1).
#define CONV_S8_PACKED_MACS \
    "mul %[wa], %[ya], %[wa]\n\t" \
    "mla %[wa], %[yb], %[wb], %[wa]\n\t" \
    "rsb %[wa], %[wa], #32768\n\t" \
    "sub %[l0], %[l0], %[wa]\n\t" \
    "sub %[h0], %[h0], %[wa], asr #16\n\t" \
    "mul %[wc], %[ya], %[wc]\n\t" \
    "mla %[wc], %[yb], %[wd], %[wc]\n\t" \
    "rsb %[wc], %[wc], #32768\n\t" \
    "sub %[l1], %[l1], %[wc]\n\t" \
    "sub %[h1], %[h1], %[wc], asr #16\n\t"
// Block i of a turn (words at 8i, weights at 2i), not the first.
#define CONV_S8_PACKED_AT(xo, xo1, wo, wo1) \
    "ldr %[ya], [%[xp], #" #xo "]\n\t" \
    "ldr %[yb], [%[xp], #" #xo1 "]\n\t" \
    "ldrsb %[wa], [%[f0], #" #wo "]\n\t" \
    "ldrsb %[wb], [%[f0], #" #wo1 "]\n\t" \
    "ldrsb %[wc], [%[f1], #" #wo "]\n\t" \
    "ldrsb %[wd], [%[f1], #" #wo1 "]\n\t" \
    CONV_S8_PACKED_MACS
// The first block of a turn, last: its loads move the pointers past the
// turn's `blocks` blocks (post-indexed).
#define CONV_S8_PACKED_LAST(xstep, wstep) \
    "ldr %[yb], [%[xp], #4]\n\t" \
    "ldr %[ya], [%[xp]], #" #xstep "\n\t" \
    "ldrsb %[wb], [%[f0], #1]\n\t" \
    "ldrsb %[wa], [%[f0]], #" #wstep "\n\t" \
    "ldrsb %[wd], [%[f1], #1]\n\t" \
    "ldrsb %[wc], [%[f1]], #" #wstep "\n\t" \
    CONV_S8_PACKED_MACS
#define CONV_S8_PACKED_ONE CONV_S8_PACKED_LAST(8, 2)
#define CONV_S8_PACKED_TWO CONV_S8_PACKED_AT(8, 12, 2, 3) CONV_S8_PACKED_LAST(16, 4)
#define CONV_S8_PACKED_FOUR \
    CONV_S8_PACKED_AT(8, 12, 2, 3) CONV_S8_PACKED_AT(16, 20, 4, 5) CONV_S8_PACKED_AT(24, 28, 6, 7) \
    CONV_S8_PACKED_LAST(32, 8)
#define CONV_S8_PACKED_BLOCK(zp, sh, post) \
    "0:\n\t" \
    "ldr %[wa], %[qm]\n\t" \
    "ldr %[h0], [%[wa]]\n\t" \
    "ldr %[h1], [%[wa], #16]\n\t" \
    "ldr %[wb], %[halfm]\n\t" \
    "add %[l0], %[h0], %[h0], lsl #16\n\t" \
    "add %[l0], %[l0], %[wb]\n\t" \
    "add %[l1], %[h1], %[h1], lsl #16\n\t" \
    "add %[l1], %[l1], %[wb]\n\t" \
    "ldr %[xp], %[xwm]\n\t" \
    "ldr %[f0], %[wm]\n\t" \
    "ldr %[wa], %[km]\n\t" \
    "add %[f1], %[f0], %[wa]\n\t" \
    "lsls %[wa], %[wa], #30\n\t" \
    "bpl 2f\n\t" \
    CONV_S8_PACKED_ONE \
    "2:\n\t" \
    "bcc 7f\n\t" \
    CONV_S8_PACKED_TWO \
    "7:\n\t" \
    CONV_S8_PACKED_END_LOAD \
    CONV_S8_PACKED_CMP \
    "beq 5f\n" \
    ".p2align 2\n" \
    "1:\n\t" \
    CONV_S8_PACKED_FOUR \
    CONV_S8_PACKED_CMP \
    "bne 1b\n" \
    "5:\n\t" \
    "ldr %[wa], %[km]\n\t" \
    "lsls %[wa], %[wa], #31\n\t" \
    "beq 3f\n\t" \
    "ldr %[ya], [%[xp]]\n\t" \
    "ldrsb %[wa], [%[f0]]\n\t" \
    "ldrsb %[wc], [%[f1]], #1\n\t" \
    "mul %[wa], %[ya], %[wa]\n\t" \
    "rsb %[wa], %[wa], #32768\n\t" \
    "sub %[l0], %[l0], %[wa]\n\t" \
    "sub %[h0], %[h0], %[wa], asr #16\n\t" \
    "mul %[wc], %[ya], %[wc]\n\t" \
    "rsb %[wc], %[wc], #32768\n\t" \
    "sub %[l1], %[l1], %[wc]\n\t" \
    "sub %[h1], %[h1], %[wc], asr #16\n" \
    "3:\n\t" \
    "str %[f1], %[wm]\n\t" \
    "sub %[l0], %[l0], %[h0], lsl #16\n\t" \
    "sub %[l1], %[l1], %[h1], lsl #16\n\t" \
    "ldr %[xp], %[qm]\n\t" \
    "ldr %[ya], [%[xp], #4]\n\t" \
    "ldr %[yb], [%[xp], #8]\n\t" \
    "ldr %[wa], [%[xp], #12]\n\t" \
    sh \
    "ldr %[f0], %[o0m]\n\t" \
    "ldr %[f1], %[o1dm]\n\t" \
    "add %[f1], %[f0], %[f1]\n\t" \
    zp \
    CONV_S8_PACKED_OUT("%[l0]", post) \
    "strb %[wc], [%[f0]]\n\t" \
    CONV_S8_PACKED_OUT("%[h0]", post) \
    "strb %[wc], [%[f1]]\n\t" \
    "ldr %[ya], [%[xp], #20]\n\t" \
    "ldr %[yb], [%[xp], #24]\n\t" \
    "ldr %[wa], [%[xp], #28]\n\t" \
    sh \
    CONV_S8_PACKED_OUT("%[l1]", post) \
    "strb %[wc], [%[f0], #1]\n\t" \
    CONV_S8_PACKED_OUT("%[h1]", post) \
    "strb %[wc], [%[f1], #1]\n\t" \
    "add %[xp], %[xp], #32\n\t" \
    "str %[xp], %[qm]\n\t" \
    "add %[f0], %[f0], #2\n\t" \
    "str %[f0], %[o0m]\n\t" \
    "ldr %[wb], %[left]\n\t" \
    "subs %[wb], %[wb], #1\n\t" \
    "str %[wb], %[left]\n\t" \
    "bne 0b"
#define CONV_S8_PACKED_OPERANDS \
    : [l0] "=&r"(l0), [h0] "=&r"(h0), [l1] "=&r"(l1), [h1] "=&r"(h1), [xp] "=&r"(xp) CONV_S8_PACKED_E, \
      [f0] "=&r"(f0), [f1] "=&r"(f1), [ya] "=&r"(ya), [yb] "=&r"(yb), [wa] "=&r"(wa), [wb] "=&r"(wb), \
      [wc] "=&r"(wc), [wd] "=&r"(wd), [wm] "+m"(w), [qm] "+m"(q), [o0m] "+m"(o0), [left] "+m"(pairs) \
    : [xwm] "m"(xws), [endm] "m"(xw_end), [km] "m"(k), [halfm] "m"(half), [zpm] "m"(zp), [o1dm] "m"(o1d) \
    : "memory", "cc"

// The block above over both pixels packed in xw (tflm_mm_s8_pack2, k
// values). (conv_s8_pair_pack holds xw: in this frame it would put the
// operands in memory out of reach of an offset from SP that GCC accepts,
// which then takes a register for their base, one more than
// position-independent builds have.)
__attribute__((noinline)) static void conv_s8_pair_packed(const uint32_t *xw, const conv_s8_t *c, int8_t *o0,
    int8_t *o1) {
    const int32_t k = c->w_size, zp = c->zero_point;
    int32_t pairs = c->n >> 1;
    const int8_t *w = c->filter + c->c0 * k;
    const tflm_out_s8_t *q = c->q;
    const uint32_t half = (uint32_t)((k + 1) >> 1) << 15;
    const uint32_t *xws = xw, *xw_end = xw + (k & ~1);
    const ptrdiff_t o1d = o1 - o0;
    uint32_t l0, h0, l1, h1, ya, yb, wa, wb, wc, wd;
    const uint32_t *xp;
    const int8_t *f0, *f1;
#if !defined(__PIC__)
    int32_t e;
#endif
    if (c->wide) {
        __asm__ volatile(CONV_S8_PACKED_BLOCK(CONV_S8_PACKED_ZP, CONV_S8_PACKED_SH, CONV_S8_PACKED_POST)
            CONV_S8_PACKED_OPERANDS);
    } else {
        __asm__ volatile(CONV_S8_PACKED_BLOCK("", "", TFLM_OUT_S8_ASM_NONE) CONV_S8_PACKED_OPERANDS);
    }
}
#undef CONV_S8_PACKED_OUT
#undef CONV_S8_PACKED_ZP
#undef CONV_S8_PACKED_SH
#undef CONV_S8_PACKED_POST
#undef CONV_S8_PACKED_MACS
#undef CONV_S8_PACKED_AT
#undef CONV_S8_PACKED_LAST
#undef CONV_S8_PACKED_ONE
#undef CONV_S8_PACKED_TWO
#undef CONV_S8_PACKED_FOUR
#undef CONV_S8_PACKED_BLOCK
#undef CONV_S8_PACKED_OPERANDS
#undef CONV_S8_PACKED_END_LOAD
#undef CONV_S8_PACKED_CMP
#undef CONV_S8_PACKED_E

#endif

#if CONV_S8_PAIR_ASM
// What conv_s8_pair_sat leaves (a single pixel, an odd last channel, a
// chunk that is not `sat`), out of line: inlined, the 2x2 loop's assembly
// (all fourteen registers) made every call of conv_s8_pair save three more
// (person_detect +0.04% on the M3).
// `from`: the chunk's channels from there on (the odd last one; its copy
// of the chunk sits in this frame, not in conv_s8_pair's, which is on the
// stack under conv_s8_pair_packed's).
__attribute__((noinline)) static void conv_s8_pair_rest(const conv_s8_t *c, int32_t from, const int8_t *x0,
    const int8_t *x1, int32_t k, int8_t *out0, int8_t *out1) {
    conv_s8_t part = *c;
    part.c0 += from;
    part.n -= from;
    part.q += from;
    out0 += from;
    out1 = x1 != NULL ? out1 + from : NULL;
    if (part.sat) {
        conv_s8_pair_run(&part, x0, x1, k, out0, out1, true);
    } else {
        conv_s8_pair_run(&part, x0, x1, k, out0, out1, false);
    }
}

// Both pixels of a window (c->w_size values) packed on the stack, then
// conv_s8_pair_packed over the chunk's channels, and an odd last one
// through conv_s8_pair_rest: a pair of pixels of a chunk that c->packs and
// that is `sat` or `wide`. Out of line: its frame (1 KB) is not taken by
// the pixels that go another way. Its callers test the chunk once
// (conv_s8_packed), not each pair of pixels: a test in conv_s8_pair cost
// small layers that keep the 2x2 loop up to 1.4% more cycles.
__attribute__((noinline)) static void conv_s8_pair_pack(const conv_s8_t *c, const int8_t *x0, const int8_t *x1,
    int8_t *out0, int8_t *out1) {
    uint32_t xw[CONV_S8_WIDE_MAX];
    tflm_mm_s8_pack2(x0, x1, c->w_size, xw);
    conv_s8_pair_packed(xw, c, out0, out1);
    if (c->n & 1) {
        conv_s8_pair_rest(c, c->n & ~1, x0, x1, c->w_size, out0, out1);  // the odd last channel
    }
}

// Whether a chunk's pairs of pixels go through conv_s8_pair_pack.
static inline bool conv_s8_packed(const conv_s8_t *c) {
    return c->packs && (c->sat || c->wide);
}
#endif

// k: the window's values, c->w_size (a pointwise layer's in_d).
static void conv_s8_pair(const conv_s8_t *c, const int8_t *x0, const int8_t *x1, int32_t k, int8_t *out0,
    int8_t *out1) {
#if CONV_S8_PAIR_DSP_ASM
    // One copy of the loop: `sat` chooses the assembly for pairs of pixels
    // and the clamp of what is left (single pixels, an odd last channel,
    // windows over 256 values) value by value (1.1 KB less text).
    conv_s8_pair_run(c, x0, x1, k, out0, out1, c->sat);
#elif CONV_S8_PAIR_ASM
    if ((c->sat || c->wide) && x1 != NULL && k >= 1 && c->n >= 2) {
        const int32_t m = c->n & ~1;
        conv_s8_pair_sat(x0, x1, k, c->filter + c->c0 * k, c->q, c->zero_point, c->wide, out0, out1, m >> 1);
        if (m != c->n) {
            conv_s8_pair_rest(c, m, x0, x1, k, out0, out1);  // the odd last channel
        }
        return;
    }
    conv_s8_pair_rest(c, 0, x0, x1, k, out0, out1);
#else
#if CONV_S8_SAT
    if (c->sat) {
        conv_s8_pair_run(c, x0, x1, k, out0, out1, true);
        return;
    }
#endif
    conv_s8_pair_run(c, x0, x1, k, out0, out1, false);
#endif
}

#if TFLM_MM_S8_LANES
// Channel j's four outputs (`step` bytes apart from o) from two lane sums
// (started at TFLM_MM_S8_LANE_START).
static TFLM_ALWAYS_INLINE void conv_s8_out4(const conv_s8_t *c, int32_t j, int64_t a01, int64_t a23, int8_t *o,
    int32_t step, int32_t lo, int32_t hi) {
    uint32_t u0, u2;
    int32_t s1, s3;
    tflm_mm_s8_unlane(a01, &u0, &s1);
    tflm_mm_s8_unlane(a23, &u2, &s3);
    const tflm_out_s8_t *q = &c->q[j];
    const uint32_t b = (uint32_t)q->bias, b0 = b - (uint32_t)TFLM_MM_S8_LANE_START;
    const int32_t v0 = (int32_t)(u0 + b0), v1 = (int32_t)((uint32_t)s1 + b);
    const int32_t v2 = (int32_t)(u2 + b0), v3 = (int32_t)((uint32_t)s3 + b);
    if (c->sat) {
        // Fast scaling and the activation's range all of int8: one SSAT clamps.
        const int32_t m = q->mult, k = q->k, sh = q->shift;
        o[0] = (int8_t)tflm_out_s8_sat(tflm_out_s8_scale(v0, m, k, sh));
        o[step] = (int8_t)tflm_out_s8_sat(tflm_out_s8_scale(v1, m, k, sh));
        o[2 * step] = (int8_t)tflm_out_s8_sat(tflm_out_s8_scale(v2, m, k, sh));
        o[3 * step] = (int8_t)tflm_out_s8_sat(tflm_out_s8_scale(v3, m, k, sh));
    } else if (q->shift >= 0) {
        // The channel's constants once for its four values.
        const int32_t m = q->mult, k = q->k, sh = q->shift;
        o[0] = (int8_t)tflm_clamp(tflm_out_s8_scale(v0, m, k, sh), lo, hi);
        o[step] = (int8_t)tflm_clamp(tflm_out_s8_scale(v1, m, k, sh), lo, hi);
        o[2 * step] = (int8_t)tflm_clamp(tflm_out_s8_scale(v2, m, k, sh), lo, hi);
        o[3 * step] = (int8_t)tflm_clamp(tflm_out_s8_scale(v3, m, k, sh), lo, hi);
    } else {
        const int32_t zp = c->zero_point;
        o[0] = tflm_out_s8(v0, q, zp, lo, hi);
        o[step] = tflm_out_s8(v1, q, zp, lo, hi);
        o[2 * step] = tflm_out_s8(v2, q, zp, lo, hi);
        o[3 * step] = tflm_out_s8(v3, q, zp, lo, hi);
    }
}

#if CONV_S8_QUAD_ASM
// One channel's four outputs in conv_s8_quad_sat's assembly, from lane
// sums A (pixels 0, 1) and B (pixels 2, 3): the four sums out of the lanes
// (`sums`: as they are, or doubled for SMMLAR), `adjust` to the channel's
// constants, `scale` on each sum (out_s8.h's steps, SSAT last), stored at
// o, o + od, o + 2 od and o + 3 od. Once the loop is done its registers
// take other roles: the channel's tflm_out_s8_t at q (%R[a11]): bias (xa),
// multiplier (xb), k (w0), shift (w1), four LDR (5 cycles, two LDRD 6); o
// (p), od (wv); scratch %Q[a01], %R[a01] (the value), %Q[a11].
#define CONV_S8_OUT4(A, B, sums, adjust, scale) \
    "ldr %[xa], [%R[a11]]\n\t" \
    "ldr %[xb], [%R[a11], #4]\n\t" \
    "ldr %[w0], [%R[a11], #8]\n\t" \
    "ldr %[w1], [%R[a11], #12]\n\t" \
    "ubfx %Q[a01], %Q[" A "], #0, #23\n\t" \
    "lsr %Q[" A "], %Q[" A "], #23\n\t" \
    "orr %Q[" A "], %Q[" A "], %R[" A "], lsl #9\n\t" \
    "ubfx %R[a01], %Q[" B "], #0, #23\n\t" \
    "lsr %Q[" B "], %Q[" B "], #23\n\t" \
    "orr %Q[" B "], %Q[" B "], %R[" B "], lsl #9\n\t" \
    sums(A, B) \
    adjust \
    scale("%R[" A "]") \
    "strb %R[a01], [%[p]]\n\t" \
    scale("%Q[" A "]") \
    "strb %R[a01], [%[p], %[wv]]\n\t" \
    "add %Q[a01], %[p], %[wv], lsl #1\n\t" \
    scale("%R[" B "]") \
    "strb %R[a01], [%Q[a01]]\n\t" \
    scale("%Q[" B "]") \
    "strb %R[a01], [%Q[a01], %[wv]]\n\t"
// The bias added to each pixel's sum (the low lanes' less the 2^22 they
// started from).
#define CONV_S8_OUT4_SUMS(A, B) \
    "add %Q[" A "], %Q[" A "], %[xa]\n\t" \
    "add %Q[" B "], %Q[" B "], %[xa]\n\t" \
    "sub %[xa], %[xa], #0x400000\n\t" \
    "add %R[" A "], %Q[a01], %[xa]\n\t" \
    "add %R[" B "], %R[a01], %[xa]\n\t"
// The same, doubled: the bias once, each lane's sum in the addition's shift.
#define CONV_S8_OUT4_SUMS2(A, B) \
    "lsl %[xa], %[xa], #1\n\t" \
    "add %Q[" A "], %[xa], %Q[" A "], lsl #1\n\t" \
    "add %Q[" B "], %[xa], %Q[" B "], lsl #1\n\t" \
    "sub %[xa], %[xa], #0x800000\n\t" \
    "add %R[" A "], %[xa], %Q[a01], lsl #1\n\t" \
    "add %R[" B "], %[xa], %R[a01], lsl #1\n\t"
// The fast form with SMMLAR (each constant fits it: prepare()'s
// TFLM_CONV_LANES_MMR): the shift from r - 1 to r.
#define CONV_S8_OUT4_FAST_R "add %[w1], %[w1], #1\n\t"
#define CONV_S8_OUT4_FAST_SCALE(v) \
    TFLM_OUT_S8_ASM_MMR(v, "%[xb]", "%[w0]", "%[w1]", "%R[a01]", "", TFLM_OUT_S8_ASM_SSAT)
#define CONV_S8_OUT4_FAST(A, B) CONV_S8_OUT4(A, B, CONV_S8_OUT4_SUMS2, CONV_S8_OUT4_FAST_R, CONV_S8_OUT4_FAST_SCALE)
// The wide form by the 64-bit constant (its biases may be too large for
// SMMLAR: vww_96_int8's layers have channels of bias 2^30): the zero point
// into xa once the bias is added, the shift from -(r + 1) to r - 1; the
// zero point added after the shift.
#define CONV_S8_OUT4_WIDE_ADJUST "ldr %[xa], %[zpm]\n\t" CONV_S8_ASM_WIDE_SHIFT("%[w1]")
#define CONV_S8_OUT4_WIDE_POST(v, m, k, sh, t, u, c30) "add " u ", " u ", %[xa]\n\t"
#define CONV_S8_OUT4_WIDE_SCALE(v) \
    CONV_S8_ASM_OUT(v, "%[xb]", "%[w0]", "%[w1]", "%Q[a11]", "%R[a01]", CONV_S8_OUT4_WIDE_POST)
#define CONV_S8_OUT4_WIDE(A, B) CONV_S8_OUT4(A, B, CONV_S8_OUT4_SUMS, CONV_S8_OUT4_WIDE_ADJUST, CONV_S8_OUT4_WIDE_SCALE)

// conv_s8_quad's channels two by two (pairs of them), in one block of
// assembly, when each has the fast scaling (`out4`: CONV_S8_OUT4_FAST, by
// SMMLAR) or each the wide form (CONV_S8_OUT4_WIDE: a second copy, by the
// 64-bit constant, adds the zero point after the shift) and the
// activation's range is all of int8 (conv_s8_t.sat, .wide) and k is a
// multiple of 4: tflm_mm_s8_4x2's loop sixteen values a turn (four, eight
// or twelve first as k's bits ask, TFLM_ASM_START16; the loop's end test
// and branch once per 16 values), then conv_s8_out4's arithmetic with
// SSAT, the values in the registers the loop leaves them in. (In C the output stage cost
// more than half the loop's instructions again on 64 values: the loop
// takes every register, and GCC reloaded and spilled around it at each
// pair.) The second channel's sums wait in `keep` while the first's go
// out. The code a pair of channels runs is kept within the STM32F4's 1 KB
// flash cache (its ART accelerator: a few lines more, and each pair
// missed every line of it again): the sums start from one register
// pair's 2^22 and 0 copied by 16-bit MOVs, the start tests k itself, a k
// of a multiple of 16 enters the loop at once, and the wide form's outputs
// go in a loop (lines conv_s8_quad missed an invoke in the estimator's
// model of the ART: person_detect 764,000, then 94,000; vww_96_int8
// 780,000, then 91,000; kws_ref_model 268,000, then 10,000).
#define CONV_S8_QUAD_BLOCK(sums, outputs) \
    "0:\n\t" \
    "mov %Q[a00], #0x400000\n\t" \
    "movs %R[a00], #0\n\t" \
    "mov %Q[a10], %Q[a00]\n\t" \
    "mov %R[a10], %R[a00]\n\t" \
    "mov %Q[a01], %Q[a00]\n\t" \
    "mov %R[a01], %R[a00]\n\t" \
    "mov %Q[a11], %Q[a00]\n\t" \
    "mov %R[a11], %R[a00]\n\t" \
    "ldr %[p], %[xp]\n\t" \
    "ldr %[w0], %[w]\n\t" \
    sums \
    "2:\n\t" \
    "str %[w1], %[w]\n\t" \
    "str %Q[a01], %[keep0]\n\t" \
    "str %R[a01], %[keep1]\n\t" \
    "str %Q[a11], %[keep2]\n\t" \
    "str %R[a11], %[keep3]\n\t" \
    "ldr %R[a11], %[qm]\n\t" \
    "ldr %[wv], %[odm]\n\t" \
    "ldr %[p], %[om]\n\t" \
    outputs \
    "add %R[a11], %R[a11], #16\n\t" \
    "add %[p], %[p], #1\n\t" \
    "str %R[a11], %[qm]\n\t" \
    "str %[p], %[om]\n\t" \
    "ldr %Q[a01], %[left]\n\t" \
    "subs %Q[a01], %Q[a01], #1\n\t" \
    "str %Q[a01], %[left]\n\t" \
    "bne 0b"
// A step four and sixteen times.
#define CONV_S8_QUAD_X4(step) step step step step
#define CONV_S8_QUAD_X16(step) CONV_S8_QUAD_X4(CONV_S8_QUAD_X4(step))
// The sums' loop from numeric label `label`: sixteen steps a turn (the
// pixels' pointer p at the end, read from the stack, ends it).
#define CONV_S8_QUAD_TURNS(label, step) \
    ".p2align 2\n" \
    label ":\n\t" \
    CONV_S8_QUAD_X16(step) \
    "ldr %[wv], %[end]\n\t" \
    "cmp %[p], %[wv]\n\t" \
    "bne " label "b\n\t"
// The pair's sums for any k (a multiple of 4): w1 walks the second
// channel's filter, the next pair's start after it.
#define CONV_S8_QUAD_SUMS \
    "ldr %[w1], %[kk]\n\t" \
    TFLM_ASM_START16("%[w1]", 29, "%[wv]", "add %[w1], %[w0], %[w1]\n\t", \
        CONV_S8_QUAD_X4(TFLM_MM_S8_4X2_STEP), 3, 5, 4, 1) \
    "ldr %[wv], %[end]\n\t" \
    "cmp %[p], %[wv]\n\t" \
    "beq 2f\n" \
    CONV_S8_QUAD_TURNS("1", TFLM_MM_S8_4X2_STEP)
#if CONV_S8_QUAD_K
// One step of the sums for a k known to the code (K, a string): the second
// channel's value read at K past the first's through one pointer, so that
// w1 holds a value and both loads follow the pixels' back to back (a
// load after a multiply takes two cycles, each load behind another one):
// 9 cycles a step on the Cortex-M4 where the two pointers' took 10.
#define CONV_S8_QUAD_STEP_K(K) \
    "ldr %[xb], [%[p], #4]\n\t" \
    "ldr %[xa], [%[p]], #8\n\t" \
    "ldrsb %[wv], [%[w0], #" K "]\n\t" \
    "ldrsb %[w1], [%[w0]], #1\n\t" \
    "smlal %Q[a00], %R[a00], %[xa], %[w1]\n\t" \
    "smlal %Q[a10], %R[a10], %[xb], %[w1]\n\t" \
    "smlal %Q[a01], %R[a01], %[xa], %[wv]\n\t" \
    "smlal %Q[a11], %R[a11], %[xb], %[wv]\n\t"
// k values (K) at once (`steps`) or sixteen a turn, then the next pair's
// start into w1.
#define CONV_S8_QUAD_SUMS_K(K, steps) \
    steps \
    "add %[w1], %[w0], #" K "\n\t" \
    "b 2f\n"
#define CONV_S8_QUAD_SUMS_K_ONCE(label, K, steps) CONV_S8_QUAD_SUMS_K(K, label ":\n\t" steps)
#define CONV_S8_QUAD_SUMS_K_LOOP(label, K) CONV_S8_QUAD_SUMS_K(K, CONV_S8_QUAD_TURNS(label, CONV_S8_QUAD_STEP_K(K)))
// The sums by k (conv_s8_quad_k: 8, 16, 32, 64, 128, else any), through a
// table of branches (TBH, about as many cycles as the start of the
// sixteen-step loop for any k): each pair runs one of them.
#define CONV_S8_QUAD_SUMS_BY_K \
    "ldr %[wv], %[kix]\n\t" \
    "tbh [pc, %[wv], lsl #1]\n" \
    "3:\n\t" \
    ".hword (10f - 3b) / 2\n\t" \
    ".hword (11f - 3b) / 2\n\t" \
    ".hword (12f - 3b) / 2\n\t" \
    ".hword (13f - 3b) / 2\n\t" \
    ".hword (14f - 3b) / 2\n\t" \
    ".hword (15f - 3b) / 2\n" \
    CONV_S8_QUAD_SUMS_K_ONCE("10", "8", CONV_S8_QUAD_X4(CONV_S8_QUAD_STEP_K("8") CONV_S8_QUAD_STEP_K("8"))) \
    CONV_S8_QUAD_SUMS_K_ONCE("11", "16", CONV_S8_QUAD_X16(CONV_S8_QUAD_STEP_K("16"))) \
    CONV_S8_QUAD_SUMS_K_LOOP("12", "32") \
    CONV_S8_QUAD_SUMS_K_LOOP("13", "64") \
    CONV_S8_QUAD_SUMS_K_LOOP("14", "128") \
    "15:\n\t" \
    CONV_S8_QUAD_SUMS

// The table's entry for k.
static inline int32_t conv_s8_quad_k(int32_t k) {
    return k == 8 ? 0 : k == 16 ? 1 : k == 32 ? 2 : k == 64 ? 3 : k == 128 ? 4 : 5;
}
#else
#define CONV_S8_QUAD_SUMS_BY_K CONV_S8_QUAD_SUMS
static inline int32_t conv_s8_quad_k(int32_t k) {
    (void)k;
    return 0;
}
#endif
// The two channels' outputs, `out4` each: written out twice (the fast
// form), or (the wide form, whose steps would take the code a pair runs
// past 1 KB) in a loop of two turns, told apart by Z: set by a CMP of a
// register with itself for the first (the sums' loops may end without
// one), cleared by the move of the output pointer for the second. (Six
// cycles more a pair.)
// The second channel's sums back from `keep`, its constants and output
// next (`add`: ADD, or ADDS where the loop reads Z).
#define CONV_S8_QUAD_SECOND(add) \
    "ldr %Q[a00], %[keep0]\n\t" \
    "ldr %R[a00], %[keep1]\n\t" \
    "ldr %Q[a10], %[keep2]\n\t" \
    "ldr %R[a10], %[keep3]\n\t" \
    "add %R[a11], %R[a11], #16\n\t" \
    add " %[p], %[p], #1\n\t"
#define CONV_S8_QUAD_OUTS_TWICE(out4) out4 CONV_S8_QUAD_SECOND("add") out4
#define CONV_S8_QUAD_OUTS_LOOP(out4) \
    "cmp %[p], %[p]\n" \
    "8:\n\t" \
    out4 \
    "bne 9f\n\t" \
    CONV_S8_QUAD_SECOND("adds") \
    "b 8b\n" \
    "9:\n\t"
#define CONV_S8_QUAD_OPERANDS \
    : [a00] "=&r"(a00), [a10] "=&r"(a10), [a01] "=&r"(a01), [a11] "=&r"(a11), [p] "=&r"(p), [w0] "=&r"(w0), \
      [w1] "=&r"(w1), [xa] "=&r"(xa), [xb] "=&r"(xb), [wv] "=&r"(wv), \
      [w] "+m"(w), [qm] "+m"(q), [om] "+m"(o), [left] "+m"(pairs), [keep0] "=m"(keep[0]), \
      [keep1] "=m"(keep[1]), [keep2] "=m"(keep[2]), [keep3] "=m"(keep[3]) \
    : [xp] "m"(xp), [end] "m"(end), [kk] "m"(k), [odm] "m"(od), [zpm] "m"(zp), [kix] "m"(kix) \
    : "memory", "cc"

static void conv_s8_quad_sat(const int32_t *xp, int32_t k, const int8_t *w, const tflm_out_s8_t *q, int32_t zp,
    bool wide, int8_t *o, int32_t od, int32_t pairs) {
    const int32_t *end = xp + 2 * k;
    const int32_t kix = conv_s8_quad_k(k);
    uint32_t keep[4];
    int64_t a00, a10, a01, a11;
    int32_t p, w0, w1, xa, xb, wv;
    if (wide) {
        __asm__ volatile(CONV_S8_QUAD_BLOCK(CONV_S8_QUAD_SUMS_BY_K,
            CONV_S8_QUAD_OUTS_LOOP(CONV_S8_OUT4_WIDE("a00", "a10")))
            CONV_S8_QUAD_OPERANDS);
    } else {
        __asm__ volatile(CONV_S8_QUAD_BLOCK(CONV_S8_QUAD_SUMS_BY_K,
            CONV_S8_QUAD_OUTS_TWICE(CONV_S8_OUT4_FAST("a00", "a10")))
            CONV_S8_QUAD_OPERANDS);
    }
}
#undef CONV_S8_QUAD_BLOCK
#undef CONV_S8_QUAD_SUMS
#undef CONV_S8_QUAD_X4
#undef CONV_S8_QUAD_X16
#undef CONV_S8_QUAD_TURNS
#undef CONV_S8_QUAD_STEP_K
#undef CONV_S8_QUAD_SUMS_K
#undef CONV_S8_QUAD_SUMS_K_ONCE
#undef CONV_S8_QUAD_SUMS_K_LOOP
#undef CONV_S8_QUAD_SUMS_BY_K
#undef CONV_S8_QUAD_OPERANDS
#undef CONV_S8_QUAD_OUTS_TWICE
#undef CONV_S8_QUAD_OUTS_LOOP
#undef CONV_S8_QUAD_SECOND
#undef CONV_S8_OUT4
#undef CONV_S8_OUT4_SUMS
#undef CONV_S8_OUT4_SUMS2
#undef CONV_S8_OUT4_FAST_R
#undef CONV_S8_OUT4_FAST_SCALE
#undef CONV_S8_OUT4_FAST
#undef CONV_S8_OUT4_WIDE_ADJUST
#undef CONV_S8_OUT4_WIDE_POST
#undef CONV_S8_OUT4_WIDE_SCALE
#undef CONV_S8_OUT4_WIDE
#endif

// Four pointwise pixels (k values each, one after the other) against the
// chunk's filters one at a time, packed two by two in lanes: one filter
// value for four products. Every input value is read (packed) before any
// output is written, so the group reads nothing it has overwritten.
__attribute__((noinline)) static void conv_s8_quad(const conv_s8_t *c, const int8_t *x, int32_t k, int8_t *out) {
    const int32_t n = c->n, lo = c->act_min, hi = c->act_max, out_d = c->out_d;
    const int8_t *w = c->filter + c->c0 * k;
    int32_t xp[2 * CONV_S8_QUAD_MAX];
    tflm_mm_s8_pack4(x, k, k, xp);
    int32_t j = 0;
#if CONV_S8_QUAD_ASM
    // The fast form by SMMLAR where every channel's constants fit it
    // (TFLM_CONV_LANES_MMR); a layer in the fast form that does not takes
    // the C loop below (vww_96_int8's channels of bias 2^30 shift by 24 to
    // 35 bits: the wide form, or the reference's steps).
    if (((c->sat && c->lanes == TFLM_CONV_LANES_MMR) || c->wide) && k >= 4 && (k & 3) == 0 && n >= 2) {
        conv_s8_quad_sat(xp, k, w, c->q, c->zero_point, c->wide, out, out_d, n >> 1);
        j = n & ~1;
        w += j * k;
    }
#endif
    for (; j < n; j += 2, w += 2 * k) {
        // An odd last channel runs against itself; its second sums are dropped.
        const bool two = j + 1 < n;
        int64_t a[4] = { TFLM_MM_S8_LANE_START, TFLM_MM_S8_LANE_START, TFLM_MM_S8_LANE_START,
            TFLM_MM_S8_LANE_START };
        tflm_mm_s8_4x2(xp, k, w, two ? w + k : w, a);
        conv_s8_out4(c, j, a[0], a[1], out + j, out_d, lo, hi);
        if (two) {
            conv_s8_out4(c, j + 1, a[2], a[3], out + j + 1, out_d, lo, hi);
        }
    }
}
#endif

// 1x1 windows with stride 1, no groups: the rows' pixels follow each other
// in the input, a matrix of pixels x in_d against the chunk's filters.
static TFLM_ALWAYS_INLINE void conv_s8_pointwise(const conv_s8_t *c, const int8_t *x, int32_t pixels, int8_t *out) {
    const int32_t k = c->in_d, out_d = c->out_d;
#if TFLM_MM_S8_LANES
    if (c->lanes && k <= CONV_S8_QUAD_MAX) {
        for (; pixels >= 4; pixels -= 4, x += 4 * k, out += 4 * out_d) {
            conv_s8_quad(c, x, k, out);
        }
    }
#endif
#if TFLM_KERNEL_ARCH == TFLM_ARCH_V6M
    // Called from here rather than through conv_s8_pair: one frame fewer on
    // the stack.
    if (conv_s8_v6m_six(c, k)) {
        for (; pixels > 0; --pixels, x += k, out += out_d) {
            conv_s8_pixel_v6m(c, x, 1, k, 0, out);
        }
        return;
    }
#endif
#if CONV_S8_PAIR_ASM
    if (conv_s8_packed(c)) {
        for (; pixels >= 2; pixels -= 2, x += 2 * k, out += 2 * out_d) {
            conv_s8_pair_pack(c, x, x + k, out, out + out_d);
        }
    }
#endif
    for (; pixels >= 2; pixels -= 2, x += 2 * k, out += 2 * out_d) {
        conv_s8_pair(c, x, x + k, k, out, out + out_d);
    }
    if (pixels > 0) {
        conv_s8_pair(c, x, NULL, k, out, NULL);
    }
}

// The pixels conv_s8_pointwise takes at once in its main loop: four in
// lanes, else two (one on the Armv6-M, within two).
static inline int32_t conv_s8_pointwise_unit(const conv_data_t *d) {
#if TFLM_MM_S8_LANES
    if (d->lanes && d->in_d <= CONV_S8_QUAD_MAX) {
        return 4;
    }
#endif
    (void)d;
    return 2;
}

// conv_s8_pointwise's loops over an input below the output (the backward
// rule), last pixels first: those past the last whole unit (alone, then in
// a pair), then the units downwards. A unit reads its input while it
// writes its outputs, so each unit's output must start at or above the end
// of its input (conv_s8_back_ok). Out of line: once per call, and the
// conv_s8_rows it would be inlined into are large already.
__attribute__((noinline)) static void conv_s8_pointwise_back(const conv_s8_t *c, const int8_t *x, int32_t pixels,
    int8_t *out) {
    const int32_t k = c->in_d, out_d = c->out_d;
    int32_t p = pixels;
#if TFLM_KERNEL_ARCH == TFLM_ARCH_V6M
    if (conv_s8_v6m_six(c, k)) {
        for (--p; p >= 0; --p) {
            conv_s8_pixel_v6m(c, x + p * k, 1, k, 0, out + p * out_d);
        }
        return;
    }
#endif
    if (p % 2 != 0) {
        --p;
        conv_s8_pair(c, x + p * k, NULL, k, out + p * out_d, NULL);
    }
#if TFLM_MM_S8_LANES
    if (c->lanes && k <= CONV_S8_QUAD_MAX) {
        if (p % 4 != 0) {
            p -= 2;
            conv_s8_pair(c, x + p * k, x + (p + 1) * k, k, out + p * out_d, out + (p + 1) * out_d);
        }
        for (p -= 4; p >= 0; p -= 4) {
            conv_s8_quad(c, x + p * k, k, out + p * out_d);
        }
        return;
    }
#endif
#if CONV_S8_PAIR_ASM
    if (conv_s8_packed(c)) {
        for (p -= 2; p >= 0; p -= 2) {
            conv_s8_pair_pack(c, x + p * k, x + (p + 1) * k, out + p * out_d, out + (p + 1) * out_d);
        }
        return;
    }
#endif
    for (p -= 2; p >= 0; p -= 2) {
        conv_s8_pair(c, x + p * k, x + (p + 1) * k, k, out + p * out_d, out + (p + 1) * out_d);
    }
}

// One or two pixels of a kind: read in place (rows of the window), or
// gathered (one run).
static void conv_s8_pixels(const conv_s8_t *c, int kind, const int8_t *x0, const int8_t *x1, int8_t *out0,
    int8_t *out1) {
#if TFLM_KERNEL_ARCH == TFLM_ARCH_V6M
    // A gathered window is one run of w_size values.
    const bool direct = kind == PIX_DIRECT;
    if (conv_s8_v6m_six(c, c->w_size)) {
        const int32_t rows = direct ? c->f_h : 1, run = direct ? c->run : c->w_size;
        conv_s8_pixel_v6m(c, x0, rows, run, c->y_step, out0);
        if (x1 != NULL) {
            conv_s8_pixel_v6m(c, x1, rows, run, c->y_step, out1);
        }
        return;
    }
#endif
    if (kind == PIX_DIRECT) {
        conv_s8_block(c, x0, x1, c->f_h, c->run, c->y_step, out0, out1);
    } else {
        conv_s8_pair(c, x0, x1, c->w_size, out0, out1);
    }
}

// A filter's starting sum: its bias plus the input offset times the sum of
// its weights (the sums then run over the values as they are).
static inline int32_t conv_s8_start(const int8_t *filter, const int32_t *bias, int32_t oc, int32_t w_size,
    int32_t input_offset) {
    const uint32_t offset = (uint32_t)input_offset * tflm_sum_s8(filter + oc * w_size, w_size);
    return (int32_t)((bias ? (uint32_t)bias[oc] : 0u) + offset);
}

// 1x1 windows, stride 1 (so no padding either), no groups: the pixels
// follow each other, batch after batch.
static inline bool conv_s8_pointwise_layer(const conv_data_t *d) {
    return d->f_d == d->in_d && d->f_h == 1 && d->f_w == 1 && d->stride_w == 1 && d->stride_h == 1
        && d->out_w == d->in_w && d->out_h == d->in_h;
}

// What calls by bands or groups of pixels keep from one to the next: every
// output channel's constants (`all`: the calls go over all channels as one
// chunk), else a chunk's (the calls go over the chunks first to last, then
// last to first, so the chunk set up last serves again) and the starting
// sums of output channels below n_start computed once (the others per
// chunk); the columns whose window lies inside the input; the bands.
typedef struct {
    tflm_out_s8_t *q;
    int32_t held;           // the first channel of the chunk in q, -1: none
    bool all;               // q holds every output channel's constants
    bool reverse;           // this call goes last chunk first
    const int32_t *start;
    int32_t n_start;
    int32_t ox_lo, ox_hi;
    int32_t band;           // rows of a band, the first one's a multiple of it
    bool back;              // a pointwise call's pixels go last first (conv_s8_pointwise_back)
#if CONV_S8_SAT
    bool fast;              // every channel set up last in q has the fast scaling (shift >= 0)
    bool wide;              // else every one the wide form (shift < -1)
#endif
} conv_s8_keep_t;

// The constants of the chunk of n output channels from c0 into keep->q.
// (Out of line: the pixel loops keep their registers.)
__attribute__((noinline)) static void conv_s8_setup(const conv_data_t *d, const int8_t *filter, const int32_t *bias,
    conv_s8_keep_t *keep, int32_t c0, int32_t n) {
    // All in locals: the stores into q could alias the data and keep (a
    // band or a patch sets up every chunk once per call).
    const int32_t step = d->per_channel ? 1 : 0;
    const int32_t *mults = conv_multipliers(d) + c0 * step;
    const int8_t *shifts = conv_shifts(d) + c0 * step;
    const int32_t w_size = d->f_h * d->f_w * d->f_d, zp = d->output_offset, input_offset = d->input_offset;
    const int32_t *start = keep->start, n_start = keep->n_start;
    tflm_out_s8_t *q = keep->q;
#if CONV_S8_SAT
    bool fast = true, wide = true;
#endif
    for (int32_t j = 0; j < n; ++j) {
        const int32_t oc = c0 + j;
        q[j].bias = oc < n_start ? start[oc] : conv_s8_start(filter, bias, oc, w_size, input_offset);
        tflm_out_s8_setup(&q[j], mults[j * step], shifts[j * step], zp);
#if CONV_S8_SAT
        fast &= q[j].shift >= 0;
        wide &= q[j].shift != -1;
#endif
    }
#if CONV_S8_SAT
    // A chunk with shifts of 25-31 bits (out_s8.h's wide form, the zero
    // point added after the shift) and else fast ones: all take the wide
    // form, so that the assembly blocks serve it with one more addition a
    // value (most of vww_96_int8's last pointwise layers' chunks).
    wide = wide && !fast;
    for (int32_t j = 0; wide && j < n; ++j) {
        tflm_out_s8_widen(&keep->q[j]);
    }
    keep->fast = fast;
    keep->wide = wide;
#endif
    keep->held = c0;
}

// The output columns whose window lies inside the input: [*lo, *hi).
static TFLM_ALWAYS_INLINE void conv_s8_inside(const conv_data_t *d, int32_t *lo, int32_t *hi) {
    int32_t ox_lo = 0, ox_hi = 0, fx0, fx1;
    while (ox_lo < d->out_w) {
        conv_window(ox_lo, d->stride_w, d->pad_w, d->dil_w, d->f_w, d->in_w, &fx0, &fx1);
        if (fx0 == 0 && fx1 == d->f_w) {
            break;
        }
        ++ox_lo;
    }
    ox_hi = ox_lo;
    while (ox_hi < d->out_w) {
        conv_window(ox_hi, d->stride_w, d->pad_w, d->dil_w, d->f_w, d->in_w, &fx0, &fx1);
        if (fx0 != 0 || fx1 != d->f_w) {
            break;
        }
        ++ox_hi;
    }
    *lo = ox_lo;
    *hi = ox_hi;
}

// Rows [row0, row1) of one batch, or for a pointwise layer its pixels
// [pix0, pix1) counted from the batch's first; keep NULL: a call alone,
// which with `band` (else 0) stops its waiting pixels at the end of every
// `band` rows (as keep->band does). Inlined in its callers, with the loops
// it calls: the pixel loops of a call alone (keep NULL, a constant there)
// keep the registers they had before calls kept constants (out of line
// they cost resnet 3% on the M3).
static TFLM_ALWAYS_INLINE void conv_s8_rows(const conv_data_t *d, const int8_t *input, const int8_t *filter,
    const int32_t *bias, const int32_t *starts, int8_t *output, int32_t batch, int32_t row0, int32_t row1,
    int32_t pix0, int32_t pix1, conv_s8_keep_t *keep, int32_t band) {
    conv_s8_t c;
    const int32_t out_w = d->out_w, out_h = d->out_h, stride_h = d->stride_h, pad_h = d->pad_h;
    c.in_h = d->in_h;
    c.in_w = d->in_w;
    c.in_d = d->in_d;
    c.f_h = d->f_h;
    c.f_w = d->f_w;
    c.f_d = d->f_d;
    c.out_d = d->out_d;
    c.stride_w = d->stride_w;
    c.pad_w = d->pad_w;
    c.dil_h = d->dil_h;
    c.dil_w = d->dil_w;
    c.in_row = c.in_w * c.in_d;
    c.y_step = c.dil_h * c.in_row;
    c.w_size = c.f_h * c.f_w * c.f_d;
    c.run = c.f_w * c.in_d;
    c.in_b = input + batch * c.in_h * c.in_row;
    c.filter = filter;
    c.bias = bias;
    c.input_offset = d->input_offset;
    c.zero_point = d->output_offset;
    c.act_min = d->act_min.q;
    c.act_max = d->act_max.q;
    c.per_group = c.out_d / (c.in_d / c.f_d);
#if TFLM_MM_S8_LANES
    c.lanes = d->lanes;
#endif

    // How pixels are read: in place (inside the input, window rows long
    // enough), gathered (a small window), else apart (a large window slab
    // by slab, grouped filters by the generic loop).
    const bool plain = c.f_d == c.in_d;
#if CONV_S8_GATHER_FIRST
    const bool gather = plain && c.w_size <= CONV_S8_GATHER_MAX;
    const bool direct = plain && c.dil_w == 1 && c.run >= CONV_S8_DIRECT_MIN && !gather;
#else
    const bool direct = plain && c.dil_w == 1 && c.run >= CONV_S8_DIRECT_MIN;
    const bool gather = plain && c.w_size <= CONV_S8_GATHER_MAX;
#endif
    const int border = gather ? PIX_GATHER : PIX_APART;
    const bool pointwise = conv_s8_pointwise_layer(d);
    const int inner = direct ? PIX_DIRECT : border;
    // Windows inside the input gathered by a plain copy of their rows, where
    // they are gathered (CONV_S8_GATHER_FIRST; on the Cortex-M0+ those with
    // short rows only, and there the test per pixel cost resnet more than
    // the copy saved kws_ref_model).
    const bool gather_in = CONV_S8_GATHER_FIRST && inner == PIX_GATHER && c.dil_w == 1;
    // Columns whose window lies inside the input: [ox_lo, ox_hi).
    int32_t ox_lo = 0, ox_hi = 0;
    if (keep != NULL) {
        ox_lo = keep->ox_lo;
        ox_hi = keep->ox_hi;
    } else if (!pointwise) {
        conv_s8_inside(d, &ox_lo, &ox_hi);
    }

    // Two gathered windows, or the sums of a pair of large ones (conv_s8_apart).
    uint32_t gathered_words[2 * CONV_S8_GATHER_MAX / 4];
    int8_t *gathered = (int8_t *)gathered_words;
    tflm_out_s8_t own[CONV_S8_CHUNK];
    c.q = keep ? keep->q : own;
    const bool all = keep && keep->all;
#if TFLM_KERNEL_ARCH == TFLM_ARCH_V6M
    // More than 64 channels go 30 at a time, a multiple of the six filters
    // conv_s8_pixel_v6m takes at once (chunks of 32 leave 2 of every 32 to
    // the 1x2 loop: person_detect's conv 1x1 6x6x128->6x6x128, 3,563,452
    // cycles, 3,514,527 in chunks of 30). Up to 64 channels two chunks of
    // 32 take fewer cycles than three (kws_ref_model, whose layers have 64,
    // 142,000 more in chunks of 30).
    const int32_t chunk = c.out_d > 64 ? 30 : CONV_S8_CHUNK;
#else
    const int32_t chunk = CONV_S8_CHUNK;
#endif
    const int32_t last = all ? 0 : (c.out_d - 1) / chunk * chunk;
    const bool reverse = keep && keep->reverse;
    const int32_t step = reverse ? -chunk : chunk;
    for (c.c0 = reverse ? last : 0; c.c0 >= 0 && c.c0 <= last; c.c0 += step) {
        c.n = all ? c.out_d : c.out_d - c.c0 < chunk ? c.out_d - c.c0 : chunk;
#if TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2
        c.packs = conv_s8_packs(c.w_size, c.n);
#endif
        if (all) {
            // Set up once by the caller.
        } else if (keep == NULL) {
            conv_s8_keep_t mine;
            mine.q = own;
            mine.start = starts;
            mine.n_start = starts != NULL ? c.out_d : 0;
            conv_s8_setup(d, filter, bias, &mine, c.c0, c.n);
#if CONV_S8_SAT
            c.sat = mine.fast;
            c.wide = mine.wide;
#endif
        } else if (keep->held != c.c0) {
            conv_s8_setup(d, filter, bias, keep, c.c0, c.n);
        }
#if CONV_S8_SAT
        if (keep != NULL) {
            c.sat = keep->fast;
            c.wide = keep->wide;
        }
        c.sat = c.sat && c.act_min == -128 && c.act_max == 127;
        c.wide = c.wide && c.act_min == -128 && c.act_max == 127;
#endif
#if CONV_S8_PAIR_ASM
        // Gathered pairs through the packed blocks, the chunk's choice made
        // once here (in conv_s8_pixels it cost small layers that keep the
        // 2x2 loop up to 2% more cycles).
        const bool packed = conv_s8_packed(&c);
#endif
        if (pointwise) {
            int8_t *out = output + ((size_t)batch * out_h * out_w + pix0) * c.out_d + c.c0;
            if (keep != NULL && keep->back) {
                conv_s8_pointwise_back(&c, c.in_b + pix0 * c.in_d, pix1 - pix0, out);
            } else {
                conv_s8_pointwise(&c, c.in_b + pix0 * c.in_d, pix1 - pix0, out);
            }
            continue;
        }
        // A pixel waits here for a second one of its kind.
        int kind = PIX_NONE;
        const int8_t *x_wait = NULL;
        int8_t *out_wait = NULL;
        // A pixel gathered slab by slab waits apart (the others pass it).
        conv_s8_wait_t slab;
        slab.out = NULL;
        slab.sums = gathered_words;
        // Over an overlapped input no pixel waits past the end of a band
        // (the distance allows a band's rows in any order, not the next's).
        int32_t band_left = keep ? keep->band : band;
        for (int32_t oy = row0; oy < row1; ++oy) {
            conv_s8_row_t row;
            row.y0 = conv_window(oy, stride_h, pad_h, c.dil_h, c.f_h, c.in_h, &row.fy0, &row.fy1);
            const bool full_rows = row.fy0 == 0 && row.fy1 == c.f_h;
            int8_t *out = output + ((batch * out_h + oy) * out_w) * c.out_d + c.c0;
            for (int32_t ox = 0; ox < out_w; ++ox, out += c.out_d) {
                const bool inside = full_rows && ox >= ox_lo && ox < ox_hi;
                const int k = inside ? inner : border;
                if (k == PIX_APART) {
                    conv_s8_apart(&c, &slab, &row, ox, out);
                    continue;
                }
                if (kind != PIX_NONE && kind != k) {
                    // The waiting pixel goes alone.
                    conv_s8_pixels(&c, kind, x_wait, NULL, out_wait, NULL);
                    kind = PIX_NONE;
                }
                const int8_t *x;
                if (k == PIX_GATHER) {
                    int8_t *slot = gathered + (kind == PIX_NONE ? 0 : c.w_size);
                    if (inside && gather_in) {
                        conv_s8_gather_in(&c, c.in_b + row.y0 * c.in_row + (ox * c.stride_w - c.pad_w) * c.in_d,
                            slot);
                    } else {
                        conv_s8_gather(&c, &row, ox, slot);
                    }
                    x = slot;
                } else {
                    x = c.in_b + row.y0 * c.in_row + (ox * c.stride_w - c.pad_w) * c.in_d;
                }
                if (kind == PIX_NONE) {
                    kind = k;
                    x_wait = x;
                    out_wait = out;
                    continue;
                }
#if CONV_S8_PAIR_ASM
                if (k == PIX_GATHER && packed) {
                    conv_s8_pair_pack(&c, x_wait, x, out_wait, out);
                    kind = PIX_NONE;
                    continue;
                }
#endif
                conv_s8_pixels(&c, k, x_wait, x, out_wait, out);
                kind = PIX_NONE;
            }
            if ((keep != NULL || band > 0) && --band_left == 0) {
                band_left = keep ? keep->band : band;
                if (kind != PIX_NONE) {
                    conv_s8_pixels(&c, kind, x_wait, NULL, out_wait, NULL);
                    kind = PIX_NONE;
                }
                if (slab.out != NULL) {
                    conv_s8_apart(&c, &slab, NULL, 0, NULL);
                }
            }
        }
        if (kind != PIX_NONE) {
            conv_s8_pixels(&c, kind, x_wait, NULL, out_wait, NULL);
        }
        if (slab.out != NULL) {
            conv_s8_apart(&c, &slab, NULL, 0, NULL);
        }
    }
}

void tflm_conv_2d_s8_rows(const conv_data_t *d, const int8_t *input, const int8_t *filter, const int32_t *bias,
    const int32_t *starts, int8_t *output, int32_t batch, int32_t row0, int32_t row1) {
    conv_s8_rows(d, input, filter, bias, starts, output, batch, row0, row1, row0 * d->out_w, row1 * d->out_w, NULL,
        0);
}

// A pointwise layer over an overlapped input, `below` bytes from the
// output's start to the input's: the most pixels that may go as one group,
// all channels of a group before the next; an even number (pixels go in
// pairs) at least as large as a band of rows less its odd pixel (`fewer`
// pixels), else 0 (the bands of rows then). A group's chunks all read its
// input pixels, so its output must end at or below its first input pixel
// (output pixels of earlier groups lie below it as well).
static int32_t conv_s8_pixel_group(const conv_data_t *d, int64_t below, int32_t pixels, int32_t fewer) {
    const int64_t in_d = d->in_d, out_d = d->out_d;
    if (below < 0) {
        return 0;
    }
    int64_t g = below / out_d < pixels ? below / out_d : pixels + 1;
    // A few tries: each is a pass over the groups.
    for (int32_t tries = 0; tries < 16; ++tries, g -= 2) {
        const int64_t even = g & ~(int64_t)1;
        if (even < 2 || even + 1 < fewer) {
            break;
        }
        bool ok = true;
        for (int64_t p0 = 0; p0 < pixels && ok; p0 += even) {
            const int64_t end = pixels - p0 < even ? pixels : p0 + even;
            ok = end * out_d - below <= p0 * in_d;
        }
        if (ok) {
            return (int32_t)even;
        }
    }
    return 0;
}

// A pointwise layer over an overlapped input, `below` bytes from the
// output's start to the input's, all channels at once: whether its pixels
// may go in pairs in order, each pair's output ending at or below its first
// input pixel (pixels are read by their own outputs alone; the bound is
// linear in the pair, so the first and last pairs are the ones to check).
static bool conv_s8_pairs_in_order(const conv_data_t *d, int64_t below, int32_t pixels) {
    const int64_t in_d = d->in_d, out_d = d->out_d, p = (pixels - 1) & ~1;
    return below >= 2 * out_d && (p + 2) * out_d - below <= p * in_d;
}

// A pointwise layer over an input `above` bytes below its output, all
// channels at once: whether its pixels may go last first in one call
// (conv_s8_pointwise_back), each unit's output starting at or above the
// end of its input. The bound is linear in a unit's place, so the first
// unit and a unit ending at the last pixel are the ones to check.
__attribute__((noinline)) static bool conv_s8_back_ok(const conv_data_t *d, int64_t above, int32_t pixels) {
    const int64_t in_d = d->in_d, out_d = d->out_d, unit = conv_s8_pointwise_unit(d);
    const int64_t top = pixels > unit ? pixels - unit : 0;
    return unit * in_d <= above && (top + unit) * in_d - top * out_d <= above;
}

void tflm_conv_2d_s8_all(const conv_data_t *d, const int8_t *input, const int8_t *filter, const int32_t *bias,
    const int32_t *starts, int8_t *output) {
    if (!tflm_conv_s8_overlapped(d, input, output)) {
        tflm_conv_s8_all_rows(tflm_conv_2d_s8_rows, d, input, filter, bias, starts, output, true);
        return;
    }
    // Over an overlapped input rows go in bands (tflm_conv_s8_band), all
    // channels of a band before the next: pixels go in pairs, and a pair
    // across two rows writes the second row's output before it has read
    // the first row's window for every channel.
    union {
        tflm_out_s8_t all[CONV_S8_HOLD];
        struct {
            tflm_out_s8_t q[CONV_S8_CHUNK];
            int32_t start[TFLM_CONV_S8_FOLD_MAX];
        } part;
    } held;
    conv_s8_keep_t keep;
    keep.held = -1;
    keep.reverse = false;
    keep.all = d->out_d <= CONV_S8_HOLD;
    const int32_t w_size = d->f_h * d->f_w * d->f_d;
    // The starting sums: a folded layer's from the model, else computed
    // here for up to TFLM_CONV_S8_FOLD_MAX channels (with every channel's
    // constants held, by the setup below).
    keep.q = keep.all ? held.all : held.part.q;
    keep.start = starts;
    keep.n_start = starts != NULL ? d->out_d : 0;
    if (starts == NULL && !keep.all) {
        keep.start = held.part.start;
        keep.n_start = d->out_d < TFLM_CONV_S8_FOLD_MAX ? d->out_d : TFLM_CONV_S8_FOLD_MAX;
        for (int32_t oc = 0; oc < keep.n_start; ++oc) {
            held.part.start[oc] = conv_s8_start(filter, bias, oc, w_size, d->input_offset);
        }
    }
    if (keep.all) {
        conv_s8_setup(d, filter, bias, &keep, 0, d->out_d);
    }
    keep.ox_lo = keep.ox_hi = 0;
    keep.band = 1;
    keep.back = false;
    // Over an input below the output (conv_2d_overlap's backward rule) the
    // groups of pixels, bands and batches go last first, each all channels
    // before the one below it; the loops below visit them by their index
    // (one call site each: conv_s8_rows is inlined).
    const int64_t below = (int64_t)((intptr_t)input - (intptr_t)output);
    const bool back = below < 0;
    if (conv_s8_pointwise_layer(d)) {
        const int32_t pixels = d->batches * d->out_h * d->out_w;
        int32_t group = 0;
        if (back) {
            // One call, every channel at once, pixels last first; else the
            // bands of rows below.
            keep.back = keep.all && conv_s8_back_ok(d, -below, pixels);
            group = keep.back ? pixels : 0;
        } else {
            group = keep.all && conv_s8_pairs_in_order(d, below, pixels) ? pixels : 0;
            if (group == 0) {
                group = conv_s8_pixel_group(d, below, pixels, tflm_conv_s8_band(d, input, output) * d->out_w);
            }
        }
        if (group > 0) {
            const int32_t n = (pixels + group - 1) / group;
            for (int32_t i = 0; i < n; ++i) {
                const int32_t p = (back ? n - 1 - i : i) * group;
                conv_s8_rows(d, input, filter, bias, starts, output, 0, 0, 0, p,
                    pixels - p < group ? pixels : p + group, &keep, 0);
                keep.reverse = !keep.reverse;
            }
            return;
        }
    } else {
        conv_s8_inside(d, &keep.ox_lo, &keep.ox_hi);
    }
    keep.band = tflm_conv_s8_band(d, input, output);
    // With every channel's constants held, one call goes band after band
    // (but a pointwise layer's, whose pixels do not stop at a band's end,
    // and backward, whose bands go last first).
    const int32_t step = keep.all && !back && !conv_s8_pointwise_layer(d) ? d->out_h : keep.band;
    const int32_t n = (d->out_h + step - 1) / step;
    for (int32_t i = 0; i < d->batches * n; ++i) {
        const int32_t k = back ? d->batches * n - 1 - i : i, b = k / n, y = k % n * step;
        const int32_t y1 = d->out_h - y < step ? d->out_h : y + step;
        conv_s8_rows(d, input, filter, bias, starts, output, b, y, y1, y * d->out_w, y1 * d->out_w, &keep, 0);
        keep.reverse = !keep.reverse;
    }
}

#if TFLM_PATCH
// A patch's overlapped layers of one chunk in one call (conv_s8_bands:
// about 3 KB more code on the Cortex-M4); 0 (PYBV11, short of flash): a
// band a call, as other layers go.
#ifndef TFLM_CONV_S8_WINDOW_BANDS
#define TFLM_CONV_S8_WINDOW_BANDS (1)
#endif

#if TFLM_CONV_S8_WINDOW_BANDS
// tflm_conv_2d_s8_window's overlapped layers of one chunk of channels:
// band after band (`band` rows) in one call, as tflm_conv_s8_row_by_row's
// calls go, its constants set up once rather than once per band. The
// calls' order of pixels is kept: conv_s8_rows stops its waiting pixels at
// each band's end, and a 1x1 layer comes here only where a band's pixels
// are whole units of conv_s8_pointwise's loop (its units then fall as the
// calls' did). So every pixel of a band is finished, all its channels,
// before the next band's input is read. Out of line, as
// tflm_conv_2d_s8_rows: the frame of its loops is not under the caller's
// other calls.
__attribute__((noinline)) static void conv_s8_bands(const conv_data_t *d, const int8_t *input, const int8_t *filter,
    const int32_t *bias, const int32_t *starts, int8_t *output, int32_t band) {
    for (int32_t b = 0; b < d->batches; ++b) {
        conv_s8_rows(d, input, filter, bias, starts, output, b, 0, d->out_h, 0, d->out_h * d->out_w, NULL, band);
    }
}
#endif

void tflm_conv_2d_s8_window(const conv_data_t *d, const int8_t *input, const int8_t *filter, const int32_t *bias,
    const int32_t *starts, int8_t *output) {
    if (!tflm_conv_s8_overlapped(d, input, output)) {
        tflm_conv_s8_all_rows(tflm_conv_2d_s8_rows, d, input, filter, bias, starts, output, false);
        return;
    }
    const int32_t band = tflm_conv_s8_band(d, input, output);
#if TFLM_CONV_S8_WINDOW_BANDS
    if (d->out_d <= CONV_S8_CHUNK
        && (!conv_s8_pointwise_layer(d) || band * d->out_w % conv_s8_pointwise_unit(d) == 0)) {
        conv_s8_bands(d, input, filter, bias, starts, output, band);
        return;
    }
#endif
    tflm_conv_s8_by_bands(tflm_conv_2d_s8_rows, d, input, filter, bias, starts, output, band);
}

#endif // TFLM_PATCH

#endif // TFLM_KERNEL_CONV_2D
