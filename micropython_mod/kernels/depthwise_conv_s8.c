// DEPTHWISE_CONV_2D, int8: output rows [row0, row1) of one batch, bit-exact
// with TFLM's reference. The eval() calls it over all rows; a caller that
// works patch by patch or over overlapped buffers calls it by row ranges.
//
// Three paths (dw_s8_path). 3x3 windows without dilation, stride 1 or 2,
// on outputs wide enough, go one output channel along one output row at a
// time, the window in registers: the nine weights are loaded once per row,
// each input column (three values) once, and shared by the outputs whose
// windows hold it (three with stride 1, two with stride 2). Rows and
// columns outside the input are zeros: the input offset is added as values
// are loaded, so a zero adds nothing, as the reference skips those taps.
// Other layers with one output channel per input channel go channels
// innermost (dw_s8_channels): per output pixel the taps inside the input
// are listed once, then four channels at a time sum over them in
// registers, so nothing is set up per channel and row (small maps, where a
// row has few outputs to share that setup); on the Cortex-M3 and M4, 3x3
// windows of multiplier 1 walk the window's rows instead of a list of taps
// (dw_s8_channels_3x3), and a one-channel input's windows of at most ten
// taps with multipliers past 1 go two taps a step (dw_s8_one_in: the
// window packed in pairs once per pixel for all its channels, one SMLAD a
// pair with DSP). The rest
// (other depth multipliers, windows of more than DW_S8_TAPS_MAX taps) take
// the generic loop.
#include "kernels/loop_opt.h"
#include "kernels/conv_common.h"
#include "kernels/out_s8.h"

#if TFLM_KERNEL_DEPTHWISE_CONV_2D

// Output channels whose constants are set up at once (16 bytes each).
#define DW_S8_CHUNK (16)

// What the loops read, copied out of the kernel data (stores through the
// output could alias it).
typedef struct {
    const int8_t *in_b;
    const int8_t *filter;
    const int32_t *bias;
    int32_t in_h, in_w, in_d, f_h, f_w, mult, out_h, out_w, out_d;
    int32_t stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
    int32_t in_row;
    int32_t input_offset, zero_point, act_min, act_max;
    int32_t c0, n;             // the chunk of output channels
    const tflm_out_s8_t *q;    // its constants
} dw_s8_t;

static inline int8_t dw_s8_out(uint32_t sum, const tflm_out_s8_t *q, int32_t zp, int32_t lo, int32_t hi) {
    return tflm_out_s8((int32_t)sum, q, zp, lo, hi);
}

// One output channel along one output row of a 3x3 window: the input
// channel's three rows (r0 at column 0, the others in_row after it), the
// nine weights (zero for rows outside the input), and the output stage's
// constants. Values are used as they are, without the input offset: it is
// folded into `bias` (times the sum of the weights), and a column outside
// the input adds z[kx], the input zero point times the column's weights,
// which the fold cancels (the reference skips those taps). The loops read
// weights and constants from here as they need them: they do not all fit
// the registers, and stores through the output keep the compiler from
// hoisting (then spilling) them.
typedef struct {
    const int8_t *r0;
    int32_t w[9];
    uint32_t wp[3];  // DSP: weights of rows 0 and 1 of each column, packed
    uint32_t z[3];
    uint32_t bias;
    int32_t in_d, in_w, in_row, x0;  // column step, columns, row step, first window column (0 or -1)
    int32_t inside;            // outputs whose rightmost column is inside the input
    int32_t out_w, out_d;
    int32_t mult, k, shift, zp, lo, hi;
} dw_s8_row_t;

// A column's three products with column kx of the weights, each within 16
// bits, summed modulo 2^32 as the reference's int32 sums wrap.
#define DW_S8_COL(sum, r, kx, a, b, c) \
    sum += (uint32_t)((r)->w[kx] * (a)); \
    sum += (uint32_t)((r)->w[3 + (kx)] * (b)); \
    sum += (uint32_t)((r)->w[6 + (kx)] * (c))
// The three values of the column at p.
#define DW_S8_LOAD(p, in_row, a, b, c) \
    const int32_t a = (p)[0], b = (p)[in_row], c = (p)[2 * (in_row)]

#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
// Stride 1 with DSP, where each column serves three outputs: its first two
// values packed into halfwords once (`b` is not declared), then per output
// one SMLAD with the first two weights packed alike, the third by itself.
// The same products, summed modulo 2^32. (With stride 2 a column serves
// fewer outputs than the packing costs.)
#define DW_S8_COL1(sum, r, kx, a, b, c) \
    sum = tflm_smlad((a), (r)->wp[kx], sum); \
    sum += (uint32_t)((r)->w[6 + (kx)] * (c))
#define DW_S8_LOAD1(p, in_row, a, b, c) \
    const uint32_t a = tflm_pack16((p)[0], (p)[in_row]); \
    const int32_t c = (p)[2 * (in_row)]
#else
#define DW_S8_COL1 DW_S8_COL
#define DW_S8_LOAD1 DW_S8_LOAD
#endif

static inline int8_t dw_s8_put(uint32_t sum, const dw_s8_row_t *r) {
    int32_t v;
    if (r->shift >= 0) {
        v = tflm_out_s8_scale((int32_t)sum, r->mult, r->k, r->shift);
    } else {
        const tflm_out_s8_t q = { 0, r->mult, r->k, r->shift };
        v = tflm_out_s8_other((int32_t)sum, &q, r->zp);
    }
    return (int8_t)tflm_clamp(v, r->lo, r->hi);
}

// On the Cortex-M3 and M4 the outputs whose window is inside the input go
// along the row in segments: the sums of up to DW_S8_SEG outputs into a
// buffer, the weights in registers (dw_s8_sums_s1, _s2), then those sums
// through the output stage, its constants in registers (dw_s8_flush). In
// one loop the two did not fit the registers: GCC reloaded weights and
// constants, and tested the shift, for each output.
#define DW_S8_SPLIT (TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2 || TFLM_KERNEL_ARCH == TFLM_ARCH_DSP)
#define DW_S8_SEG (48)

// Windows of at most DW_S8_TAPS_MAX taps: one function for each `in`, or
// with TFLM_DW_S8_COMPACT=1 one for all three, smaller and slower (as
// measured for commit f087493 with the sweep's depthwise shapes: about
// 3.5 KB less; 1-12% more cycles on the M4, 0.4-12% on the Cortex-M0+, up
// to a third more instructions on the LX6). The default on Armv6-M, whose
// parts have the least flash (and on PYBV11, short of it).
#ifndef TFLM_DW_S8_COMPACT
#define TFLM_DW_S8_COMPACT (TFLM_KERNEL_ARCH == TFLM_ARCH_V6M)
#endif

// The segments' loops in assembly on the M profile in builds at -O2
// (TFLM_KERNEL_O2: at -Og GCC cannot place their operands), as
// DW_S8_FULL_ASM (the host's tests build the C loops, the same sums and
// outputs); not with TFLM_DW_S8_COMPACT (PYBV11, short of flash).
#if DW_S8_SPLIT && !TFLM_DW_S8_COMPACT && defined(__thumb2__) && defined(__ARM_ARCH_PROFILE) \
    && __ARM_ARCH_PROFILE == 'M' && defined(__OPTIMIZE__) && TFLM_KERNEL_O2
#define DW_S8_ROW_ASM (1)
#else
#define DW_S8_ROW_ASM (0)
#endif
// On the Cortex-M3 the loops' functions inlined in dw_s8_row_s1 and _s2
// (their calls' cost: person_detect 0.3% fewer cycles); on the M4 GCC
// cannot give the DSP blocks their fourteen registers there.
// The DSP cores' output stage there by SMMLAR (out_s8.h): a row whose
// constants do not fit it takes the stage's steps a value at a time.
#define DW_S8_ROW_MMR (DW_S8_ROW_ASM && TFLM_KERNEL_ARCH == TFLM_ARCH_DSP)
#if DW_S8_ROW_ASM && TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2
#define DW_S8_ROW_LINKAGE static TFLM_ALWAYS_INLINE
#else
#define DW_S8_ROW_LINKAGE __attribute__((noinline)) static
#endif

// Branch hints that lay a row's usual path out in one run of code (the
// STM32F4's 1 KB flash cache holds a row's code only if it is compact).
#if defined(__GNUC__)
#define DW_S8_LIKELY(x) __builtin_expect(!!(x), 1)
#define DW_S8_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define DW_S8_LIKELY(x) (x)
#define DW_S8_UNLIKELY(x) (x)
#endif

#if DW_S8_SPLIT
// One column of three values (or weights): with DSP the first two packed
// into halfwords (one SMLAD), the third by itself.
typedef struct {
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
    uint32_t ab;
#else
    int32_t a, b;
#endif
    int32_t c;
} dw_s8_col_t;

static TFLM_ALWAYS_INLINE dw_s8_col_t dw_s8_col_at(const int8_t *p, int32_t in_row) {
    dw_s8_col_t x;
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
    x.ab = tflm_pack16(p[0], p[in_row]);
#else
    x.a = p[0];
    x.b = p[in_row];
#endif
    x.c = p[2 * in_row];
    return x;
}

// Column kx of the weights.
static TFLM_ALWAYS_INLINE dw_s8_col_t dw_s8_wcol(const dw_s8_row_t *r, int32_t kx) {
    dw_s8_col_t w;
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
    w.ab = r->wp[kx];
#else
    w.a = r->w[kx];
    w.b = r->w[3 + kx];
#endif
    w.c = r->w[6 + kx];
    return w;
}

// acc plus a column's three products (modulo 2^32).
static TFLM_ALWAYS_INLINE uint32_t dw_s8_dot3(uint32_t acc, dw_s8_col_t x, dw_s8_col_t w) {
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
    return tflm_smlad(x.ab, w.ab, acc + (uint32_t)(x.c * w.c));
#else
    return acc + (uint32_t)(x.a * w.a) + (uint32_t)(x.b * w.b) + (uint32_t)(x.c * w.c);
#endif
}

#if DW_S8_ROW_ASM
// The segments' loops below, over the sums from s to %[end], four a turn
// (`half`, two, twice: half0 then half1): an odd n's first by itself
// (`first`), then the loop entered at its second half where four do not
// divide the rest, both chosen by TFLM_ASM_TWO_BITS on the count in bytes
// in register cnt (bits 2 and 3: one LSLS, where two TST and a reload of
// the end were; `c_branch` goes to label 2 if C); else out at once if
// nothing is left (n = 1). The end in memory (`load` it into register e
// first) or in register e (`load` empty); the end's test and branch once
// per turn.
#define DW_S8_ROW_LOOP(cnt, load, e, first, c_branch, half0, half1) \
    load \
    "sub " cnt ", " e ", %[s]\n\t" \
    TFLM_ASM_TWO_BITS(cnt, 29, 3, first, c_branch) \
    load \
    "cmp %[s], " e "\n\t" \
    "beq 9f\n\t" \
    ".p2align 2\n" \
    "1:\n\t" \
    half0 \
    "2:\n\t" \
    half1 \
    load \
    "cmp %[s], " e "\n\t" \
    "bne 1b\n" \
    "9:"
// The same for a loop of four equal steps (one sum each) without a first
// step of its own: entered at the step that leaves a multiple of four,
// as bits 2 and 3 of the count in bytes ask (N: odd, C: two or three
// left over); with three left over (a stride-1 row's usual count) its
// branches cost what the loop above's did, with other counts fewer. Any
// n above 0. Fewer lines of code for the flash cache: no separate first
// step, no test of the end before the loop.
#define DW_S8_ROW_LOOP4(cnt, load, e, step) \
    load \
    "sub " cnt ", " e ", %[s]\n\t" \
    "lsls " cnt ", " cnt ", #29\n\t" \
    "bcc 5f\n\t" \
    "bmi 1f\n\t" \
    "b 2f\n" \
    "5:\n\t" \
    "bmi 3f\n\t" \
    ".p2align 2\n" \
    "0:\n\t" \
    step \
    "1:\n\t" \
    step \
    "2:\n\t" \
    step \
    "3:\n\t" \
    step \
    load \
    "cmp %[s], " e "\n\t" \
    "bne 0b\n"
// The end in memory, into register r.
#define DW_S8_END_M(r) "ldr " r ", %[end]\n\t"
#define DW_S8_C_HALF "bcs 2f\n\t"
#endif

// Stride 1, as dw_s8_row_s1's loop, a column a step: n sums (even; with
// DW_S8_ROW_ASM any above 0) without the bias into s from the columns at
// p; acc[0], acc[1] the next two outputs' sums so far (without the bias),
// in and out. Returns p past the columns read.
#if DW_S8_ROW_ASM && TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
// A column's three values (the first two packed), p moved on.
#define DW_S8_COL_LOAD \
    "ldrsb %[xa], [%[p]]\n\t" \
    "ldrsb %[xb], [%[p], %[row]]\n\t" \
    "ldrsb %[xc], [%[p], %[row], lsl #1]\n\t" \
    "add %[p], %[p], %[d]\n\t" \
    "pkhbt %[xa], %[xa], %[xb], lsl #16\n\t"
// The output that takes the column as its last: the sum so far in a,
// finished with the column's products by the third weights and stored.
#define DW_S8_COL_LAST \
    "smlad %[xb], %[xa], %[w2], %[a]\n\t" \
    "smlabb %[xb], %[xc], %[w2c], %[xb]\n\t" \
    "str %[xb], [%[s]], #4\n\t"
// One column of dw_s8_sums_s1 with DSP: its three values (the first two
// packed), the finished sum stored, the next two moved on. The third
// weights of columns 0 and 1 packed in wc (SMLABB, SMLABT), column 2's in
// w2c.
#define DW_S8_S1_COL \
    DW_S8_COL_LOAD \
    DW_S8_COL_LAST \
    "smlad %[a], %[xa], %[w1], %[b]\n\t" \
    "smlabt %[a], %[xc], %[wc], %[a]\n\t" \
    "smuad %[b], %[xa], %[w0]\n\t" \
    "smlabb %[b], %[xc], %[wc], %[b]\n\t"
#elif DW_S8_ROW_ASM
// A later row of the window for DW_S8_S1_M3_TWO: the row's value of each
// column (at `at` from p1 and p2) and its weights m[a], m[b], m[c]; all six
// products added.
#define DW_S8_S1_M3_ROW(o0, o1, n0, n1, at, ma, mb, mc) \
    "ldrsb %[x1], [%[p1]" at "]\n\t" \
    "ldrsb %[x2], [%[p2]" at "]\n\t" \
    "ldr %[t0], %[" ma "]\n\t" \
    "ldr %[t1], %[" mb "]\n\t" \
    "ldr %[t2], %[" mc "]\n\t" \
    "mla %[" o0 "], %[x1], %[t2], %[" o0 "]\n\t" \
    "mla %[" o1 "], %[x1], %[t1], %[" o1 "]\n\t" \
    "mla %[" o1 "], %[x2], %[t2], %[" o1 "]\n\t" \
    "mla %[" n0 "], %[x1], %[t0], %[" n0 "]\n\t" \
    "mla %[" n0 "], %[x2], %[t1], %[" n0 "]\n\t" \
    "mla %[" n1 "], %[x2], %[t0], %[" n1 "]\n\t"
// dw_s8_sums_s1 on the Cortex-M3, two columns at a time (at p1 and p2 =
// p1 + in_d, both moved on by d2 = 2 in_d), a row of the window at a time:
// the row's value of each column and its three weights (loaded back to
// back from the stack, w[k] at %[mk]), then the six products of the four
// outputs the columns touch (o0 finished by the first, o1 by the second,
// n0 and n1 started): each weight loaded once for two columns. The next
// two columns take n0 and n1 as their o0 and o1.
#define DW_S8_S1_M3_TWO(o0, o1, n0, n1) \
    "ldrsb %[x1], [%[p1]]\n\t" \
    "ldrsb %[x2], [%[p2]]\n\t" \
    "ldr %[t0], %[m0]\n\t" \
    "ldr %[t1], %[m1]\n\t" \
    "ldr %[t2], %[m2]\n\t" \
    "mla %[" o0 "], %[x1], %[t2], %[" o0 "]\n\t" \
    "mla %[" o1 "], %[x1], %[t1], %[" o1 "]\n\t" \
    "mla %[" o1 "], %[x2], %[t2], %[" o1 "]\n\t" \
    "mul %[" n0 "], %[x1], %[t0]\n\t" \
    "mla %[" n0 "], %[x2], %[t1], %[" n0 "]\n\t" \
    "mul %[" n1 "], %[x2], %[t0]\n\t" \
    DW_S8_S1_M3_ROW(o0, o1, n0, n1, ", %[row]", "m3", "m4", "m5") \
    DW_S8_S1_M3_ROW(o0, o1, n0, n1, ", %[row], lsl #1", "m6", "m7", "m8") \
    "str %[" o0 "], [%[s]], #4\n\t" \
    "str %[" o1 "], [%[s]], #4\n\t" \
    "add %[p1], %[p1], %[d2]\n\t" \
    "add %[p2], %[p2], %[d2]\n\t"
// The sums in a, b, c, e: the columns alternately finish a, b and start c,
// e, and the other way round.
#define DW_S8_S1_M3_TWO_AB DW_S8_S1_M3_TWO("a", "b", "c", "e")
#define DW_S8_S1_M3_TWO_CE DW_S8_S1_M3_TWO("c", "e", "a", "b")
// One column by itself (an odd count's first), as dw_s8_sums_s1's C.
#define DW_S8_S1_M3_ONE \
    "ldrsb %[x1], [%[p1]]\n\t" \
    "ldrsb %[x2], [%[p1], %[row]]\n\t" \
    "ldrsb %[t0], [%[p1], %[row], lsl #1]\n\t" \
    "ldr %[t1], %[m2]\n\t" \
    "ldr %[t2], %[m5]\n\t" \
    "ldr %[c], %[m8]\n\t" \
    "mla %[a], %[x1], %[t1], %[a]\n\t" \
    "mla %[a], %[x2], %[t2], %[a]\n\t" \
    "mla %[a], %[t0], %[c], %[a]\n\t" \
    "ldr %[t1], %[m1]\n\t" \
    "ldr %[t2], %[m4]\n\t" \
    "ldr %[c], %[m7]\n\t" \
    "str %[a], [%[s]], #4\n\t" \
    "mla %[a], %[x1], %[t1], %[b]\n\t" \
    "mla %[a], %[x2], %[t2], %[a]\n\t" \
    "mla %[a], %[t0], %[c], %[a]\n\t" \
    "ldr %[t1], %[m0]\n\t" \
    "ldr %[t2], %[m3]\n\t" \
    "ldr %[c], %[m6]\n\t" \
    "mul %[b], %[x1], %[t1]\n\t" \
    "mla %[b], %[x2], %[t2], %[b]\n\t" \
    "mla %[b], %[t0], %[c], %[b]\n\t" \
    "mov %[p1], %[p2]\n\t" \
    "add %[p2], %[p2], %[d2], lsr #1\n\t"
#endif

DW_S8_ROW_LINKAGE const int8_t *dw_s8_sums_s1(const dw_s8_row_t *r, const int8_t *p, int32_t n,
    uint32_t *s, uint32_t *acc) {
    const int32_t in_row = r->in_row, in_d = r->in_d;
#if DW_S8_ROW_ASM
    // GCC's loop reloaded weights and the end from the stack, and the
    // values' loads were apart (not pipelined). Four columns a step, the
    // loop entered at the column that leaves a multiple of four (the
    // end's test and branch once per four; the Cortex-M3's two columns a
    // step: an odd n's first by itself, then the loop entered at its
    // second two where four do not divide the rest).
    const uint32_t *const end = s + n;
    uint32_t a = acc[0], b = acc[1];
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
    int32_t xa, xb, xc;
    const uint32_t w0 = r->wp[0], w1 = r->wp[1], w2 = r->wp[2], wc = tflm_pack16(r->w[6], r->w[7]);
    const int32_t w2c = r->w[8];
    __asm__ volatile(
        DW_S8_ROW_LOOP4("%[xa]", DW_S8_END_M("%[xa]"), "%[xa]", DW_S8_S1_COL)
        : [p] "+r"(p), [s] "+r"(s), [a] "+r"(a), [b] "+r"(b), [xa] "=&r"(xa), [xb] "=&r"(xb), [xc] "=&r"(xc)
        : [row] "r"(in_row), [d] "r"(in_d), [w0] "r"(w0), [w1] "r"(w1), [w2] "r"(w2), [wc] "r"(wc), [w2c] "r"(w2c),
          [end] "m"(end)
        : "memory", "cc");
#else
    const int32_t wm[9] = { r->w[0], r->w[1], r->w[2], r->w[3], r->w[4], r->w[5], r->w[6], r->w[7], r->w[8] };
    const int8_t *p2 = p + in_d;
    uint32_t c, e;
    int32_t x1, x2, t0, t1, t2;
    __asm__ volatile(
        // Entered at its second half, the sums so far move to c and e.
        DW_S8_ROW_LOOP("%[x1]", DW_S8_END_M("%[x1]"), "%[x1]", DW_S8_S1_M3_ONE,
            "bcc 4f\n\t" "mov %[c], %[a]\n\t" "mov %[e], %[b]\n\t" "b 2f\n" "4:\n\t",
            DW_S8_S1_M3_TWO_AB, DW_S8_S1_M3_TWO_CE)
        : [p1] "+r"(p), [p2] "+r"(p2), [s] "+r"(s), [a] "+r"(a), [b] "+r"(b), [c] "=&r"(c), [e] "=&r"(e),
          [x1] "=&r"(x1), [x2] "=&r"(x2), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2)
        : [row] "r"(in_row), [d2] "r"(2 * in_d), [m0] "m"(wm[0]), [m1] "m"(wm[1]), [m2] "m"(wm[2]),
          [m3] "m"(wm[3]), [m4] "m"(wm[4]), [m5] "m"(wm[5]), [m6] "m"(wm[6]), [m7] "m"(wm[7]), [m8] "m"(wm[8]),
          [end] "m"(end)
        : "memory", "cc");
#endif
    acc[0] = a;
    acc[1] = b;
    return p;
#else
    const dw_s8_col_t w0 = dw_s8_wcol(r, 0), w1 = dw_s8_wcol(r, 1), w2 = dw_s8_wcol(r, 2);
    uint32_t acc_a = acc[0], acc_b = acc[1];
    const uint32_t *const end = s + n;
    do {
        dw_s8_col_t x = dw_s8_col_at(p, in_row);
        p += in_d;
#if defined(__GNUC__)
        // One pointer: GCC otherwise keeps a second one for the second
        // column, and spills weights for it.
        __asm__("" : "+r"(p));
#endif
        s[0] = dw_s8_dot3(acc_a, x, w2);
        acc_a = dw_s8_dot3(acc_b, x, w1);
        acc_b = dw_s8_dot3(0, x, w0);
        x = dw_s8_col_at(p, in_row);
        p += in_d;
        s[1] = dw_s8_dot3(acc_a, x, w2);
        acc_a = dw_s8_dot3(acc_b, x, w1);
        acc_b = dw_s8_dot3(0, x, w0);
        s += 2;
    } while (s != end);
    acc[0] = acc_a;
    acc[1] = acc_b;
    return p;
#endif
}

// Stride 2, as dw_s8_row_s2's loop: n sums (as dw_s8_sums_s1's) without
// the bias into s; acc[0] the next output's column 0, in and out.
#if DW_S8_ROW_ASM && TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
// dw_s8_sums_s2's columns with DSP, as DW_S8_S1_COL: the first of an
// output's two new columns (its middle one), then the second (its last,
// and the next output's first).
#define DW_S8_S2_COL_A \
    DW_S8_COL_LOAD \
    "smlad %[a], %[xa], %[w1], %[a]\n\t" \
    "smlabt %[a], %[xc], %[wc], %[a]\n\t"
#define DW_S8_S2_COL_B \
    DW_S8_COL_LOAD \
    DW_S8_COL_LAST \
    "smuad %[a], %[xa], %[w0]\n\t" \
    "smlabb %[a], %[xc], %[wc], %[a]\n\t"
#elif DW_S8_ROW_ASM
// On the Cortex-M3: a column's three values loaded back to back with two
// weights from the stack (w[k] at %[mk]), weights 3, 6, 7 and 8 in
// registers.
#define DW_S8_S2_COL_A \
    "ldrsb %[xa], [%[p]]\n\t" \
    "ldrsb %[xb], [%[p], %[row]]\n\t" \
    "ldrsb %[xc], [%[p], %[row], lsl #1]\n\t" \
    "ldr %[t0], %[m1]\n\t" \
    "ldr %[t1], %[m4]\n\t" \
    "add %[p], %[p], %[d]\n\t" \
    "mla %[a], %[xa], %[t0], %[a]\n\t" \
    "mla %[a], %[xb], %[t1], %[a]\n\t" \
    "mla %[a], %[xc], %[w7], %[a]\n\t"
#define DW_S8_S2_COL_B \
    "ldrsb %[xa], [%[p]]\n\t" \
    "ldrsb %[xb], [%[p], %[row]]\n\t" \
    "ldrsb %[xc], [%[p], %[row], lsl #1]\n\t" \
    "ldr %[t0], %[m2]\n\t" \
    "ldr %[t1], %[m5]\n\t" \
    "add %[p], %[p], %[d]\n\t" \
    "mla %[a], %[xa], %[t0], %[a]\n\t" \
    "mla %[a], %[xb], %[t1], %[a]\n\t" \
    "mla %[a], %[xc], %[w8], %[a]\n\t" \
    "ldr %[t0], %[m0]\n\t" \
    "str %[a], [%[s]], #4\n\t" \
    "mul %[a], %[xa], %[t0]\n\t" \
    "mla %[a], %[xb], %[w3], %[a]\n\t" \
    "mla %[a], %[xc], %[w6], %[a]\n\t"
#endif

DW_S8_ROW_LINKAGE const int8_t *dw_s8_sums_s2(const dw_s8_row_t *r, const int8_t *p, int32_t n,
    uint32_t *s, uint32_t *acc) {
    const int32_t in_row = r->in_row, in_d = r->in_d;
#ifdef DW_S8_S2_COL_A
    const uint32_t *const end = s + n;
    uint32_t a = acc[0];
    int32_t xa, xb, xc;
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
    const uint32_t w0 = r->wp[0], w1 = r->wp[1], w2 = r->wp[2], wc = tflm_pack16(r->w[6], r->w[7]);
    const int32_t w2c = r->w[8];
    __asm__ volatile(
        DW_S8_ROW_LOOP4("%[xa]", "", "%[end]", DW_S8_S2_COL_A DW_S8_S2_COL_B)
        : [p] "+r"(p), [s] "+r"(s), [a] "+r"(a), [xa] "=&r"(xa), [xb] "=&r"(xb), [xc] "=&r"(xc)
        : [row] "r"(in_row), [d] "r"(in_d), [w0] "r"(w0), [w1] "r"(w1), [w2] "r"(w2), [wc] "r"(wc), [w2c] "r"(w2c),
          [end] "r"(end)
        : "memory", "cc");
#else
    const int32_t wm[6] = { r->w[0], r->w[1], r->w[2], r->w[3], r->w[4], r->w[5] };
    int32_t t0, t1;
    __asm__ volatile(
        DW_S8_ROW_LOOP4("%[xa]", DW_S8_END_M("%[xa]"), "%[xa]", DW_S8_S2_COL_A DW_S8_S2_COL_B)
        : [p] "+r"(p), [s] "+r"(s), [a] "+r"(a), [xa] "=&r"(xa), [xb] "=&r"(xb), [xc] "=&r"(xc), [t0] "=&r"(t0),
          [t1] "=&r"(t1)
        : [row] "r"(in_row), [d] "r"(in_d), [w3] "r"(r->w[3]), [w6] "r"(r->w[6]), [w7] "r"(r->w[7]),
          [w8] "r"(r->w[8]), [m0] "m"(wm[0]), [m1] "m"(wm[1]), [m2] "m"(wm[2]), [m4] "m"(wm[4]), [m5] "m"(wm[5]),
          [end] "m"(end)
        : "memory", "cc");
#endif
    acc[0] = a;
    return p;
#else
    const dw_s8_col_t w0 = dw_s8_wcol(r, 0), w1 = dw_s8_wcol(r, 1), w2 = dw_s8_wcol(r, 2);
    uint32_t a0 = acc[0];
    const uint32_t *const end = s + n;
    do {
        dw_s8_col_t x = dw_s8_col_at(p, in_row);
        p += in_d;
#if defined(__GNUC__)
        __asm__("" : "+r"(p));  // one pointer, as in dw_s8_sums_s1
#endif
        a0 = dw_s8_dot3(a0, x, w1);
        x = dw_s8_col_at(p, in_row);
        p += in_d;
#if defined(__GNUC__)
        __asm__("" : "+r"(p));
#endif
        s[0] = dw_s8_dot3(a0, x, w2);
        a0 = dw_s8_dot3(0, x, w0);
        x = dw_s8_col_at(p, in_row);
        p += in_d;
#if defined(__GNUC__)
        __asm__("" : "+r"(p));
#endif
        a0 = dw_s8_dot3(a0, x, w1);
        x = dw_s8_col_at(p, in_row);
        p += in_d;
        s[1] = dw_s8_dot3(a0, x, w2);
        a0 = dw_s8_dot3(0, x, w0);
        s += 2;
    } while (s != end);
    acc[0] = a0;
    return p;
#endif
}

// The fast output stage of n sums (as dw_s8_sums_s1's), the bias added
// here, to out and on every out_d bytes, two a step; returns out past
// them. Clamped by one SSAT where the range is all of int8 (no
// activation).
static TFLM_ALWAYS_INLINE int32_t dw_s8_clamp(int32_t v, int32_t lo, int32_t hi, const bool sat) {
#if defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT
    if (sat) {
        return tflm_out_s8_sat(v);
    }
#endif
    (void)sat;
    // Two selects (GCC makes tflm_clamp's nested one a branch here).
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

#if DW_S8_ROW_ASM
// dw_s8_flush_in's step for one sum (out_s8.h's steps, 2^30 in c30),
// clamped to [lo, hi] (two selects).
#define DW_S8_OUT_R0 ("%[v0]", "%[mult]", "%[k]", "%[shift]", "%[l0]", "%[h0]", "%[c30]")
#define DW_S8_OUT_R1 ("%[v1]", "%[mult]", "%[k]", "%[shift]", "%[l1]", "%[h1]", "%[c30]")
// With the flag-setting shifts: with h0, shift and out low registers
// ("l") both shifts and the store take 16 bits (24 B less in the loop of
// four; the flags are free there).
#define DW_S8_OUT_CLAMP \
    "ldr %[v0], [%[s]], #4\n\t" \
    "add %[v0], %[v0], %[bias]\n\t" \
    TFLM_OUT_S8_ASM_S(DW_S8_OUT_R0, TFLM_OUT_S8_ASM_LO_REG, TFLM_OUT_S8_ASM_NONE, TFLM_OUT_S8_ASM_CLAMP) \
    "strb %[h0], [%[out]]\n\t" \
    "add %[out], %[out], %[d]\n\t"
// One sum clamped by SSAT, then two side by side.
#define DW_S8_OUT_SAT1 \
    "ldr %[v0], [%[s]], #4\n\t" \
    "add %[v0], %[v0], %[bias]\n\t" \
    TFLM_OUT_S8_ASM(DW_S8_OUT_R0, TFLM_OUT_S8_ASM_LO_REG, TFLM_OUT_S8_ASM_NONE, TFLM_OUT_S8_ASM_SSAT) \
    "strb %[h0], [%[out]]\n\t" \
    "add %[out], %[out], %[d]\n\t"
#define DW_S8_OUT_SAT2 \
    "ldrd %[v0], %[v1], [%[s]], #8\n\t" \
    "add %[v0], %[v0], %[bias]\n\t" \
    "add %[v1], %[v1], %[bias]\n\t" \
    TFLM_OUT_S8_ASM2(DW_S8_OUT_R0, DW_S8_OUT_R1, TFLM_OUT_S8_ASM_LO_REG, TFLM_OUT_S8_ASM_NONE, \
        TFLM_OUT_S8_ASM_SSAT) \
    "strb %[h0], [%[out]]\n\t" \
    "strb %[h1], [%[out], %[d]]\n\t" \
    "add %[out], %[out], %[d], lsl #1\n\t"
#endif

#if DW_S8_ROW_MMR
// With SMMLAR (the DSP cores): each sum doubled by the bias's addition
// (the bias doubled once), out_s8.h's four steps, r in `shift`; clamped
// by SSAT (two sums side by side), or to [lo, hi].
#define DW_S8_MMR_SCALE(v, u, clamp) TFLM_OUT_S8_ASM_MMR(v, "%[mult]", "%[k]", "%[shift]", u, "", clamp)
#define DW_S8_OUT_MMR1(clamp) \
    "ldr %[v0], [%[s]], #4\n\t" \
    "add %[v0], %[bias], %[v0], lsl #1\n\t" \
    DW_S8_MMR_SCALE("%[v0]", "%[h0]", clamp) \
    "strb %[h0], [%[out]]\n\t" \
    "add %[out], %[out], %[d]\n\t"
#define DW_S8_OUT_MMR2 \
    "ldrd %[v0], %[v1], [%[s]], #8\n\t" \
    "add %[v0], %[bias], %[v0], lsl #1\n\t" \
    "add %[v1], %[bias], %[v1], lsl #1\n\t" \
    "add %[h0], %[k], %[v0], asr #31\n\t" \
    "add %[h1], %[k], %[v1], asr #31\n\t" \
    "smmlar %[h0], %[v0], %[mult], %[h0]\n\t" \
    "smmlar %[h1], %[v1], %[mult], %[h1]\n\t" \
    "asr %[h0], %[h0], %[shift]\n\t" \
    "asr %[h1], %[h1], %[shift]\n\t" \
    "ssat %[h0], #8, %[h0]\n\t" \
    "ssat %[h1], #8, %[h1]\n\t" \
    "strb %[h0], [%[out]]\n\t" \
    "strb %[h1], [%[out], %[d]]\n\t" \
    "add %[out], %[out], %[d], lsl #1\n\t"
#endif

static TFLM_ALWAYS_INLINE int8_t *dw_s8_flush_in(const dw_s8_row_t *r, const uint32_t *s, int32_t n, int8_t *out,
    const bool sat) {
    const int32_t mult = r->mult, k = r->k, shift = r->shift, lo = r->lo, hi = r->hi, out_d = r->out_d;
    const uint32_t bias = r->bias;
    const uint32_t *const end = s + n;
#if DW_S8_ROW_MMR
    const uint32_t bias2 = 2u * bias;
    const int32_t rr = shift + 1;
    uint32_t v0, h0;
    if (sat) {
        uint32_t v1, h1;
        __asm__ volatile(
            DW_S8_ROW_LOOP("%[v0]", DW_S8_END_M("%[v0]"), "%[v0]", DW_S8_OUT_MMR1(TFLM_OUT_S8_ASM_SSAT), DW_S8_C_HALF,
                DW_S8_OUT_MMR2, DW_S8_OUT_MMR2)
            : [s] "+r"(s), [out] "+r"(out), [v0] "=&r"(v0), [v1] "=&r"(v1), [h0] "=&r"(h0), [h1] "=&r"(h1)
            : [bias] "r"(bias2), [k] "r"(k), [mult] "r"(mult), [shift] "r"(rr), [d] "r"(out_d), [end] "m"(end)
            : "memory", "cc");
        return out;
    }
    __asm__ volatile(
        DW_S8_ROW_LOOP4("%[v0]", "", "%[end]", DW_S8_OUT_MMR1(TFLM_OUT_S8_ASM_CLAMP))
        : [s] "+r"(s), [out] "+r"(out), [v0] "=&r"(v0), [h0] "=&r"(h0)
        : [bias] "r"(bias2), [k] "r"(k), [mult] "r"(mult), [shift] "r"(rr), [d] "r"(out_d), [lo] "r"(lo),
          [hi] "r"(hi), [end] "r"(end)
        : "memory", "cc");
    return out;
#elif DW_S8_ROW_ASM
    // tflm_out_s8_scale's steps with its constants in registers (GCC's
    // loop read out_d from the stack and built 2^30 twice): with SSAT two
    // sums side by side (14 registers, the end read from the stack), else
    // one after the other; four a step (with SSAT an odd n's first sum by
    // itself, then the second two where four do not divide the rest; else
    // entered at the sum that leaves a multiple of four), as the
    // sums' loops.
    const uint32_t c30 = 0x40000000u;
    uint32_t v0, h0, l0;
    if (sat) {
        uint32_t v1, h1, l1;
        __asm__ volatile(
            DW_S8_ROW_LOOP("%[v0]", DW_S8_END_M("%[v0]"), "%[v0]", DW_S8_OUT_SAT1, DW_S8_C_HALF, DW_S8_OUT_SAT2,
                DW_S8_OUT_SAT2)
            : [s] "+r"(s), [out] "+r"(out), [v0] "=&r"(v0), [v1] "=&r"(v1), [h0] "=&r"(h0), [h1] "=&r"(h1),
              [l0] "=&r"(l0), [l1] "=&r"(l1)
            : [bias] "r"(bias), [k] "r"(k), [c30] "r"(c30), [mult] "r"(mult), [shift] "r"(shift), [d] "r"(out_d),
              [end] "m"(end)
            : "memory", "cc");
        return out;
    }
    __asm__ volatile(
        DW_S8_ROW_LOOP4("%[v0]", "", "%[end]", DW_S8_OUT_CLAMP)
        : [s] "+r"(s), [out] "+l"(out), [v0] "=&r"(v0), [h0] "=&l"(h0), [l0] "=&r"(l0)
        : [bias] "r"(bias), [k] "r"(k), [c30] "r"(c30), [mult] "r"(mult), [shift] "l"(shift), [d] "r"(out_d),
          [lo] "r"(lo), [hi] "r"(hi), [end] "r"(end)
        : "memory", "cc");
    return out;
#else
    do {
        const int32_t v0 = tflm_out_s8_scale((int32_t)(s[0] + bias), mult, k, shift);
        const int32_t v1 = tflm_out_s8_scale((int32_t)(s[1] + bias), mult, k, shift);
        s += 2;
        out[0] = (int8_t)dw_s8_clamp(v0, lo, hi, sat);
        out[out_d] = (int8_t)dw_s8_clamp(v1, lo, hi, sat);
        out += 2 * out_d;
    } while (s != end);
    return out;
#endif
}

// Any output stage: the other ones (rare) a value at a time.
DW_S8_ROW_LINKAGE int8_t *dw_s8_flush(const dw_s8_row_t *r, const uint32_t *s, int32_t n,
    int8_t *out) {
#if DW_S8_ROW_MMR
    // (The sums without the bias: under 2^19 in magnitude.)
    const bool other = r->shift < 0 || !tflm_out_s8_mmr_bias_fits((int32_t)r->bias)
        || !tflm_out_s8_mmr_k_fits(r->k);
#else
    const bool other = r->shift < 0;
#endif
    if (DW_S8_UNLIKELY(other)) {
        for (const uint32_t *const end = s + n; s != end; ++s, out += r->out_d) {
            *out = dw_s8_put(*s + r->bias, r);
        }
        return out;
    }
    if (DW_S8_LIKELY(r->lo == -128 && r->hi == 127)) {
        return dw_s8_flush_in(r, s, n, out, true);
    }
    return dw_s8_flush_in(r, s, n, out, false);
}
#endif

// Stride 1: each column is loaded once and serves three outputs; two
// outputs per step, so each weight is loaded once for two columns.
__attribute__((noinline)) static void dw_s8_row_s1(const dw_s8_row_t *r, int8_t *out) {
    const int32_t in_row = r->in_row, out_d = r->out_d;
    // acc_a: the next output's sum so far (columns 0 and 1); acc_b: the
    // one after it (column 0).
    uint32_t acc_a = r->bias, acc_b = r->bias;
    const int8_t *p = r->r0;
    if (DW_S8_LIKELY(r->x0 < 0)) {
        acc_a += r->z[0];
    } else {
        DW_S8_LOAD1(p, in_row, a, b, c);
        p += r->in_d;
        DW_S8_COL1(acc_a, r, 0, a, b, c);
    }
    {
        DW_S8_LOAD1(p, in_row, a, b, c);
        p += r->in_d;
        DW_S8_COL1(acc_a, r, 1, a, b, c);
        DW_S8_COL1(acc_b, r, 0, a, b, c);
    }
#if DW_S8_ROW_ASM
    // The assembly takes any count: the last segment ends with the odd
    // output and those past the right edge (at most two; else as below),
    // so that all go through dw_s8_flush.
    if (DW_S8_LIKELY(r->out_w - r->inside <= 2)) {
        uint32_t acc[2] = { acc_a - r->bias, acc_b - r->bias }, sums[DW_S8_SEG + 2];
        int32_t left = r->inside;
        for (; DW_S8_UNLIKELY(left > DW_S8_SEG); left -= DW_S8_SEG) {
            p = dw_s8_sums_s1(r, p, DW_S8_SEG, sums, acc);
            out = dw_s8_flush(r, sums, DW_S8_SEG, out);
        }
        if (DW_S8_LIKELY(left > 0)) {
            dw_s8_sums_s1(r, p, left, sums, acc);
        }
        // Past the right edge (at most two outputs, straight code):
        // columns of zero points (sums without the bias, as the segments').
        if (r->inside < r->out_w) {
            sums[left++] = acc[0] + r->z[2];
            if (r->inside + 1 < r->out_w) {
                sums[left++] = acc[1] + r->z[1] + r->z[2];
            }
        }
        if (DW_S8_LIKELY(left > 0)) {
            dw_s8_flush(r, sums, left, out);
        }
        return;
    }
#endif
#if DW_S8_SPLIT
    {
        uint32_t acc[2] = { acc_a - r->bias, acc_b - r->bias }, sums[DW_S8_SEG];
        for (int32_t left = r->inside & ~1; left > 0; left -= DW_S8_SEG) {
            const int32_t n = left < DW_S8_SEG ? left : DW_S8_SEG;
            p = dw_s8_sums_s1(r, p, n, sums, acc);
            out = dw_s8_flush(r, sums, n, out);
        }
        acc_a = acc[0] + r->bias;
        acc_b = acc[1] + r->bias;
    }
#else
    const int8_t *end = p + (r->inside & ~1) * r->in_d;
    while (p != end) {
        DW_S8_LOAD1(p, in_row, a1, b1, c1);
        p += r->in_d;
        DW_S8_LOAD1(p, in_row, a2, b2, c2);
        p += r->in_d;
        uint32_t s0 = acc_a, s1 = acc_b;
        acc_a = acc_b = r->bias;
        DW_S8_COL1(s0, r, 2, a1, b1, c1);
        DW_S8_COL1(s1, r, 1, a1, b1, c1);
        DW_S8_COL1(s1, r, 2, a2, b2, c2);
        DW_S8_COL1(acc_a, r, 0, a1, b1, c1);
        DW_S8_COL1(acc_a, r, 1, a2, b2, c2);
        DW_S8_COL1(acc_b, r, 0, a2, b2, c2);
        out[0] = dw_s8_put(s0, r);
        out[out_d] = dw_s8_put(s1, r);
        out += 2 * out_d;
    }
#endif
    int32_t ox = r->inside & ~1;
    if (ox < r->inside) {
        DW_S8_LOAD1(p, in_row, a, b, c);
        uint32_t s0 = acc_a;
        DW_S8_COL1(s0, r, 2, a, b, c);
        acc_a = acc_b;
        DW_S8_COL1(acc_a, r, 1, a, b, c);
        acc_b = r->bias;
        DW_S8_COL1(acc_b, r, 0, a, b, c);
        *out = dw_s8_put(s0, r);
        out += out_d;
        ++ox;
    }
    // Past the right edge: columns of zero points.
    for (; ox < r->out_w; ++ox, out += out_d) {
        *out = dw_s8_put(acc_a + r->z[2], r);
        acc_a = acc_b + r->z[1];
        acc_b = r->bias + r->z[0];
    }
}

// Stride 2: two new columns per output, the second one shared with the
// next output; two outputs per step.
__attribute__((noinline)) static void dw_s8_row_s2(const dw_s8_row_t *r, int8_t *out) {
    const int32_t in_row = r->in_row, out_d = r->out_d, in_d = r->in_d;
    uint32_t acc = r->bias;  // the next output's column 0
    const int8_t *p = r->r0;
    // SAME padding pads on the left with stride 2 only for odd widths.
    if (DW_S8_UNLIKELY(r->x0 < 0)) {
        acc += r->z[0];
    } else {
        DW_S8_LOAD(p, in_row, a, b, c);
        p += in_d;
        DW_S8_COL(acc, r, 0, a, b, c);
    }
#if DW_S8_ROW_ASM
    // As dw_s8_row_s1's.
    if (DW_S8_LIKELY(r->out_w - r->inside <= 2)) {
        uint32_t a[1] = { acc - r->bias }, sums[DW_S8_SEG + 2];
        int32_t left = r->inside;
        for (; DW_S8_UNLIKELY(left > DW_S8_SEG); left -= DW_S8_SEG) {
            p = dw_s8_sums_s2(r, p, DW_S8_SEG, sums, a);
            out = dw_s8_flush(r, sums, DW_S8_SEG, out);
        }
        if (DW_S8_LIKELY(left > 0)) {
            p = dw_s8_sums_s2(r, p, left, sums, a);
        }
        // Past the right edge (at most two outputs): the first one's middle
        // column (at p) may still be inside (the input's last), its last is
        // not; the second one's are not.
        if (r->inside < r->out_w) {
            uint32_t s0 = a[0] + r->z[2];
            if (r->x0 + 2 * r->inside + 1 < r->in_w) {
                s0 = dw_s8_dot3(s0, dw_s8_col_at(p, in_row), dw_s8_wcol(r, 1));
            } else {
                s0 += r->z[1];
            }
            sums[left++] = s0;
            if (r->inside + 1 < r->out_w) {
                sums[left++] = r->z[0] + r->z[2] + r->z[1];
            }
        }
        if (DW_S8_LIKELY(left > 0)) {
            dw_s8_flush(r, sums, left, out);
        }
        return;
    }
#endif
#if DW_S8_SPLIT
    {
        uint32_t a[1] = { acc - r->bias }, sums[DW_S8_SEG];
        for (int32_t left = r->inside & ~1; left > 0; left -= DW_S8_SEG) {
            const int32_t n = left < DW_S8_SEG ? left : DW_S8_SEG;
            p = dw_s8_sums_s2(r, p, n, sums, a);
            out = dw_s8_flush(r, sums, n, out);
        }
        acc = a[0] + r->bias;
    }
#else
    const int8_t *end = p + 4 * (r->inside >> 1) * in_d;
    while (p != end) {
        uint32_t s0 = acc, s1 = r->bias;
        acc = r->bias;
        {
            DW_S8_LOAD(p, in_row, a, b, c);
            p += in_d;
            DW_S8_COL(s0, r, 1, a, b, c);
        }
        {
            DW_S8_LOAD(p, in_row, a, b, c);
            p += in_d;
            DW_S8_COL(s0, r, 2, a, b, c);
            DW_S8_COL(s1, r, 0, a, b, c);
        }
        {
            DW_S8_LOAD(p, in_row, a, b, c);
            p += in_d;
            DW_S8_COL(s1, r, 1, a, b, c);
        }
        {
            DW_S8_LOAD(p, in_row, a, b, c);
            p += in_d;
            DW_S8_COL(s1, r, 2, a, b, c);
            DW_S8_COL(acc, r, 0, a, b, c);
        }
        out[0] = dw_s8_put(s0, r);
        out[out_d] = dw_s8_put(s1, r);
        out += 2 * out_d;
    }
#endif
    int32_t ox = r->inside & ~1;
    if (ox < r->inside) {
        uint32_t s0 = acc;
        DW_S8_LOAD(p, in_row, a1, b1, c1);
        DW_S8_COL(s0, r, 1, a1, b1, c1);
        p += in_d;
        DW_S8_LOAD(p, in_row, a2, b2, c2);
        p += in_d;
        DW_S8_COL(s0, r, 2, a2, b2, c2);
        acc = r->bias;
        DW_S8_COL(acc, r, 0, a2, b2, c2);
        *out = dw_s8_put(s0, r);
        out += out_d;
        ++ox;
    }
    // Past the right edge: the first new column may still be inside (the
    // input's last), the second is not.
    for (; ox < r->out_w; ++ox, out += out_d) {
        uint32_t s0 = acc + r->z[2];
        const int32_t cx = r->x0 + 2 * ox + 1;
        if (cx < r->in_w) {
            const int8_t *q = r->r0 + cx * in_d;
            DW_S8_LOAD(q, in_row, a, b, c);
            DW_S8_COL(s0, r, 1, a, b, c);
        } else {
            s0 += r->z[1];
        }
        acc = r->bias + r->z[0];
        *out = dw_s8_put(s0, r);
    }
}

// The first input row whose values count for output row oy (the 3x3
// path also reads rows outside a window at the edges, with weights zero:
// what they hold adds nothing).
static inline int64_t dw_s8_first_row(const conv_data_t *d, int32_t oy) {
    const int32_t y0 = oy * d->stride_h - d->pad_h;
    return y0 < 0 ? 0 : y0;
}

// The 3x3 path over the chunk's channels and the rows [row0, row1): one
// channel at a time, its weights read once, then row by row.
static void dw_s8_3x3(const dw_s8_t *c, int8_t *output, int32_t batch, int32_t row0, int32_t row1) {
    const int32_t in_w = c->in_w, out_w = c->out_w, out_d = c->out_d, in_row = c->in_row;
    const int32_t zp_in = -c->input_offset;
    dw_s8_row_t r;
    r.in_d = c->in_d;
    r.in_w = in_w;
    r.in_row = in_row;
    r.x0 = -c->pad_w;
    r.out_w = out_w;
    r.out_d = out_d;
    r.zp = c->zero_point;
    r.lo = c->act_min;
    r.hi = c->act_max;
    // Outputs whose rightmost column is inside the input.
    int32_t inside = c->stride_w == 1 ? in_w - (r.x0 + 2) : (in_w - r.x0 - 1) / 2;
    r.inside = inside < 0 ? 0 : inside > out_w ? out_w : inside;
    int32_t w[9];
    for (int32_t j = 0; j < c->n; ++j) {
        const int32_t oc = c->c0 + j, ic = oc / c->mult;
        // Into r.w too: every row of a band but the map's first and last
        // takes the weights as they are.
        for (int32_t t = 0; t < 9; ++t) {
            r.w[t] = w[t] = c->filter[t * out_d + oc];
        }
        bool as_is = true; // r.w holds w
        const tflm_out_s8_t *q = &c->q[j];
        r.mult = q->mult;
        r.k = q->k;
        r.shift = q->shift;
        const int8_t *in_c = c->in_b + ic;
        int8_t *out = output + ((batch * c->out_h + row0) * out_w) * out_d + oc;
        bool full_set = false;
        for (int32_t oy = row0; oy < row1; ++oy, out += out_w * out_d) {
            int32_t fy0, fy1;
            const int32_t y0 = conv_window(oy, c->stride_h, c->pad_h, 1, 3, c->in_h, &fy0, &fy1);
            const bool full = fy0 == 0 && fy1 == 3;
            // The loops read three rows in_row apart: the three inside the
            // input nearest the window (the input has at least three), each
            // with the weights of the window row it is, zero for rows the
            // window does not cover.
            const int32_t first = full ? y0 : y0 < 0 ? 0 : y0 + 3 > c->in_h ? c->in_h - 3 : y0;
            if (full && !as_is) {
                for (int32_t t = 0; t < 9; ++t) {
                    r.w[t] = w[t];
                }
                as_is = true;
            } else if (!full) {
                as_is = false;
                for (int32_t ky = 0; ky < 3; ++ky) {
                    const int32_t wy = first + ky - y0;  // the window row this input row is
                    const bool used = wy >= fy0 && wy < fy1;
                    for (int32_t kx = 0; kx < 3; ++kx) {
                        r.w[ky * 3 + kx] = used ? w[wy * 3 + kx] : 0;
                    }
                }
            }
            if (!full || !full_set) {
                uint32_t sum = 0;
                for (int32_t kx = 0; kx < 3; ++kx) {
                    const int32_t col = r.w[kx] + r.w[3 + kx] + r.w[6 + kx];
                    r.z[kx] = (uint32_t)zp_in * (uint32_t)col;
                    sum += (uint32_t)col;
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
                    r.wp[kx] = tflm_pack16(r.w[kx], r.w[3 + kx]);
#endif
                }
                r.bias = (uint32_t)q->bias + (uint32_t)c->input_offset * sum;
                full_set = full;
            }
            r.r0 = in_c + first * in_row;
            if (c->stride_w == 1) {
                dw_s8_row_s1(&r, out);
            } else {
                dw_s8_row_s2(&r, out);
            }
        }
    }
}

// The generic loop's linkage: out of line on the Arm cores, where inlined
// in tflm_depthwise_conv_2d_s8_rows it moved the 3x3 path's registers (1-5%
// more cycles); inlined on the LX6 (micro_speech 2% fewer instructions).
#if TFLM_KERNEL_ARCH == TFLM_ARCH_XTENSA
#define DW_S8_GENERIC_LINKAGE static
#else
#define DW_S8_GENERIC_LINKAGE __attribute__((noinline)) static
#endif

// Any window: for each output position, each tap inside the input adds to
// the chunk's sums (channels innermost), in TFLM's order.
DW_S8_GENERIC_LINKAGE void dw_s8_generic(const dw_s8_t *c, int8_t *output, int32_t batch, int32_t row0, int32_t row1) {
    const int32_t in_d = c->in_d, out_w = c->out_w, out_d = c->out_d, mult = c->mult, n = c->n;
    const int32_t off = c->input_offset, w_row = c->f_w * out_d;
    const int32_t ic0 = c->c0 / mult, m0 = c->c0 % mult;
    const bool one_input = mult > 1 && m0 + n <= mult;
    uint32_t sums[DW_S8_CHUNK];
    for (int32_t oy = row0; oy < row1; ++oy) {
        int32_t fy0, fy1;
        const int32_t y0 = conv_window(oy, c->stride_h, c->pad_h, c->dil_h, c->f_h, c->in_h, &fy0, &fy1);
        int8_t *out = output + ((batch * c->out_h + oy) * out_w) * out_d + c->c0;
        for (int32_t ox = 0; ox < out_w; ++ox, out += out_d) {
            int32_t fx0, fx1;
            const int32_t x0 = conv_window(ox, c->stride_w, c->pad_w, c->dil_w, c->f_w, c->in_w, &fx0, &fx1);
            const int32_t fy_end = fx0 < fx1 ? fy1 : fy0;
            for (int32_t j = 0; j < n; ++j) {
                sums[j] = (uint32_t)c->q[j].bias;
            }
            for (int32_t fy = fy0; fy < fy_end; ++fy) {
                const int8_t *x_row = c->in_b + (y0 + c->dil_h * fy) * c->in_row;
                const int8_t *w_at = c->filter + fy * w_row + c->c0;
                for (int32_t fx = fx0; fx < fx1; ++fx) {
                    const int8_t *x = x_row + (x0 + c->dil_w * fx) * in_d;
                    const int8_t *w = w_at + fx * out_d;
                    if (mult == 1) {
                        x += c->c0;
                        for (int32_t j = 0; j < n; ++j) {
                            sums[j] += (uint32_t)(w[j] * (x[j] + off));
                        }
                        continue;
                    }
                    if (one_input) {
                        // The chunk's channels all read one input channel
                        // (a single-channel input, say): one value per tap.
                        const int32_t v = x[ic0] + off;
                        for (int32_t j = 0; j < n; ++j) {
                            sums[j] += (uint32_t)(w[j] * v);
                        }
                        continue;
                    }
                    // Each input value serves `mult` channels in a row.
                    int32_t ic = ic0, j = 0, left = mult - m0;
                    while (j < n) {
                        const int32_t end = n - j < left ? n : j + left;
                        const int32_t v = x[ic++] + off;
                        for (; j < end; ++j) {
                            sums[j] += (uint32_t)(w[j] * v);
                        }
                        left = mult;
                    }
                }
            }
            for (int32_t j = 0; j < n; ++j) {
                out[j] = dw_s8_out(sums[j], &c->q[j], c->zero_point, c->act_min, c->act_max);
            }
        }
    }
}

// Taps the channels path lists at once (a 5x5 window; a larger one goes in
// blocks of whole window rows).
#define DW_S8_TAPS_MAX (25)

// One tap of a pixel's window: its input and filter offsets.
typedef struct {
    int32_t x, w;
} dw_s8_tap_t;

// Which input channels a group of four output channels reads, as a
// constant of the loop below: channels 0-3 of x (multiplier 1), 0, 0, 1, 1
// (multiplier 2), or one input channel for all four (a multiplier of 4, 8...).
enum { DW_S8_IN_EACH, DW_S8_IN_PAIRS, DW_S8_IN_ONE };

#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
// One tap's products for four output channels with DSP: the four weights
// (one word, channels 0-3) widened into halfword pairs (channels 0 and 2,
// 1 and 3) against the inputs' pairs alike (x02, x13; offset added), one
// 16x16 multiply-accumulate each.
static TFLM_ALWAYS_INLINE void dw_s8_mac4(uint32_t x02, uint32_t x13, uint32_t wv, uint32_t *a0, uint32_t *a1,
    uint32_t *a2, uint32_t *a3) {
    const uint32_t w02 = tflm_sxtb16(wv), w13 = tflm_sxtb16_ror8(wv);
    *a0 = tflm_smlabb(x02, w02, *a0);
    *a1 = tflm_smlabb(x13, w13, *a1);
    *a2 = tflm_smlatt(x02, w02, *a2);
    *a3 = tflm_smlatt(x13, w13, *a3);
}
#endif

// On the Cortex-M0 and M0+ the tap loops of multiplier 1 and of one input
// channel in assembly (in optimised GCC builds), where each four channels'
// weights (and, with multiplier 1, inputs) are a word at every tap:
// Armv6-M has no unaligned loads. GCC's loops loaded each byte with an
// offset register of its own and kept a sum on the stack: 42 instructions
// a tap of multiplier 1 against 29 here (and 31 against 20), the sums in
// r8-r11, the offset in r12 (ADD reaches the high registers, one cycle).
// By the estimator on MICROBIT, person_detect's kept patch stage (its
// narrow tiles go channels innermost): 66.44 M -> 64.53 M cycles.
#define DW_S8_V6M_ASM (TFLM_V6M_ASM && TFLM_KERNEL_O2)

#if DW_S8_V6M_ASM
// One tap's offsets into p and q (LDM's registers go in ascending order:
// hence the fixed registers), then the words at them.
#define DW_S8_V6M_TAP(load_x) \
    ".syntax unified\n\t" \
    "1:\n\t" \
    "ldm %[t]!, {%[p], %[q]}\n\t" load_x "ldr %[q], [%[w], %[q]]\n\t"
// Channel k's value of word v (bits 8k to 8k + 7) into d, sign-extended.
#define DW_S8_V6M_BYTE1(d, v) "lsls " d ", " v ", #16\n\tasrs " d ", " d ", #24\n\t"
#define DW_S8_V6M_BYTE2(d, v) "lsls " d ", " v ", #8\n\tasrs " d ", " d ", #24\n\t"

// dw_s8_taps4 for DW_S8_IN_EACH and DW_S8_IN_ONE (the same sums): x, w
// and the taps' offsets as above; at least one tap.
static TFLM_ALWAYS_INLINE void dw_s8_taps4_v6m(const int8_t *x, const int8_t *w, const dw_s8_tap_t *tap,
    const dw_s8_tap_t *end, int32_t off, uint32_t *a, const int in) {
    register const int8_t *rx __asm__("r0") = x;
    register const int8_t *rw __asm__("r1") = w;
    register const dw_s8_tap_t *rt __asm__("r2") = tap;
    register const dw_s8_tap_t *re __asm__("r3") = end;
    register uint32_t p __asm__("r4"), q __asm__("r5"), u __asm__("r6");
    register uint32_t a0 __asm__("r8") = a[0], a1 __asm__("r9") = a[1], a2 __asm__("r10") = a[2],
                      a3 __asm__("r11") = a[3];
    register int32_t ro __asm__("r12") = off;
    if (in == DW_S8_IN_EACH) {
        register uint32_t v __asm__("r7");
        __asm__ volatile(
            DW_S8_V6M_TAP("ldr %[p], [%[x], %[p]]\n\t")
            "sxtb %[u], %[p]\n\t"
            "sxtb %[v], %[q]\n\t"
            "add %[u], %[o]\n\t"
            "muls %[u], %[v]\n\t"
            "add %[a0], %[u]\n\t"
            DW_S8_V6M_BYTE1("%[u]", "%[p]") DW_S8_V6M_BYTE1("%[v]", "%[q]")
            "add %[u], %[o]\n\t"
            "muls %[u], %[v]\n\t"
            "add %[a1], %[u]\n\t"
            DW_S8_V6M_BYTE2("%[u]", "%[p]") DW_S8_V6M_BYTE2("%[v]", "%[q]")
            "add %[u], %[o]\n\t"
            "muls %[u], %[v]\n\t"
            "add %[a2], %[u]\n\t"
            "asrs %[p], %[p], #24\n\t"
            "asrs %[q], %[q], #24\n\t"
            "add %[p], %[o]\n\t"
            "muls %[p], %[q]\n\t"
            "add %[a3], %[p]\n\t"
            "cmp %[t], %[e]\n\t"
            "bcc 1b"
            : [t] "+l"(rt), [p] "=&l"(p), [q] "=&l"(q), [u] "=&l"(u), [v] "=&l"(v), [a0] "+h"(a0), [a1] "+h"(a1),
              [a2] "+h"(a2), [a3] "+h"(a3)
            : [x] "l"(rx), [w] "l"(rw), [e] "l"(re), [o] "h"(ro)
            : "cc", "memory");
    } else {
        __asm__ volatile(
            DW_S8_V6M_TAP("ldrsb %[p], [%[x], %[p]]\n\t")
            "add %[p], %[o]\n\t"
            "sxtb %[u], %[q]\n\t"
            "muls %[u], %[p]\n\t"
            "add %[a0], %[u]\n\t"
            DW_S8_V6M_BYTE1("%[u]", "%[q]")
            "muls %[u], %[p]\n\t"
            "add %[a1], %[u]\n\t"
            DW_S8_V6M_BYTE2("%[u]", "%[q]")
            "muls %[u], %[p]\n\t"
            "add %[a2], %[u]\n\t"
            "asrs %[q], %[q], #24\n\t"
            "muls %[q], %[p]\n\t"
            "add %[a3], %[q]\n\t"
            "cmp %[t], %[e]\n\t"
            "bcc 1b"
            : [t] "+l"(rt), [p] "=&l"(p), [q] "=&l"(q), [u] "=&l"(u), [a0] "+h"(a0), [a1] "+h"(a1), [a2] "+h"(a2),
              [a3] "+h"(a3)
            : [x] "l"(rx), [w] "l"(rw), [e] "l"(re), [o] "h"(ro)
            : "cc", "memory");
    }
    a[0] = a0;
    a[1] = a1;
    a[2] = a2;
    a[3] = a3;
}
#endif

// Four output channels' sums (a) over a block of taps, the input from x and
// the weights from w at each tap's offsets, the input offset added to each
// input value; `in` says which input channels from x the four read. With
// `words` (DW_S8_V6M_ASM's condition holds for these x, w and offsets) the
// assembly's loops.
static TFLM_ALWAYS_INLINE void dw_s8_taps4(const int8_t *x, const int8_t *w, const dw_s8_tap_t *tap,
    const dw_s8_tap_t *end, int32_t off, uint32_t *a, const int in, const bool words) {
#if DW_S8_V6M_ASM
    if (words && in != DW_S8_IN_PAIRS) {
        if (tap != end) {
            dw_s8_taps4_v6m(x, w, tap, end, off, a, in);
        }
        return;
    }
#else
    (void)words;
#endif
    uint32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
#if defined(__GNUC__)
    // Each base in one register: GCC otherwise splits x's sum of offsets
    // across the loop and keeps a part of it on the stack.
    __asm__("" : "+r"(x), "+r"(w));
#endif
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
    // The four weights as one word (dw_s8_mac4), the inputs into pairs with
    // the offset added to both halves at once (|x + off| < 2^8).
    const uint32_t off2 = tflm_pack16(off, off);
    for (; tap < end; ++tap) {
        const int8_t *xp = x + tap->x;
        const uint32_t wv = tflm_ld_u32(w + tap->w);
        uint32_t x02, x13;
        if (in == DW_S8_IN_EACH) {
            const uint32_t xv = tflm_ld_u32(xp);
            x02 = tflm_sadd16(tflm_sxtb16(xv), off2);
            x13 = tflm_sadd16(tflm_sxtb16_ror8(xv), off2);
        } else if (in == DW_S8_IN_PAIRS) {
            x02 = x13 = tflm_sadd16(tflm_pack16(xp[0], xp[1]), off2);
        } else {
            const int32_t v = xp[0] + off;
            x02 = x13 = tflm_pack16(v, v);
        }
        dw_s8_mac4(x02, x13, wv, &a0, &a1, &a2, &a3);
    }
#else
    for (; tap < end; ++tap) {
        const int8_t *xp = x + tap->x, *wp = w + tap->w;
        if (in == DW_S8_IN_EACH) {
            a0 += (uint32_t)((xp[0] + off) * wp[0]);
            a1 += (uint32_t)((xp[1] + off) * wp[1]);
            a2 += (uint32_t)((xp[2] + off) * wp[2]);
            a3 += (uint32_t)((xp[3] + off) * wp[3]);
        } else if (in == DW_S8_IN_PAIRS) {
            const int32_t v0 = xp[0] + off, v1 = xp[1] + off;
            a0 += (uint32_t)(v0 * wp[0]);
            a1 += (uint32_t)(v0 * wp[1]);
            a2 += (uint32_t)(v1 * wp[2]);
            a3 += (uint32_t)(v1 * wp[3]);
        } else {
            const int32_t v = xp[0] + off;
            a0 += (uint32_t)(v * wp[0]);
            a1 += (uint32_t)(v * wp[1]);
            a2 += (uint32_t)(v * wp[2]);
            a3 += (uint32_t)(v * wp[3]);
        }
    }
#endif
    a[0] = a0;
    a[1] = a1;
    a[2] = a2;
    a[3] = a3;
}

// Lists the taps inside the input of window rows from *fy, whole rows, at
// most DW_S8_TAPS_MAX of them unless `whole` (the window has no more), the
// input offsets from the pixel's first input channel, the filter's from its
// first output channel; returns the end of the list and moves *fy past the
// rows listed.
static TFLM_ALWAYS_INLINE dw_s8_tap_t *dw_s8_list(const dw_s8_t *c, dw_s8_tap_t *tap, int32_t *fy, int32_t fy1,
    int32_t y0, int32_t x0, int32_t fx0, int32_t fx1, const bool whole) {
    const int32_t x_step = c->dil_w * c->in_d, w_step = c->out_d, per_row = fx1 - fx0;
    const dw_s8_tap_t *last = tap + DW_S8_TAPS_MAX;
    for (; *fy < fy1 && (whole || tap + per_row <= last); ++*fy) {
        int32_t xo = (y0 + c->dil_h * *fy) * c->in_row + (x0 + c->dil_w * fx0) * c->in_d;
        int32_t wo = (*fy * c->f_w + fx0) * w_step;
        for (int32_t fx = fx0; fx < fx1; ++fx, ++tap, xo += x_step, wo += w_step) {
            tap->x = xo;
            tap->w = wo;
        }
    }
    return tap;
}

// The chunk's channels over a block of taps, four at a time (`in` as in
// dw_s8_taps4), the rest one by one; sums in acc.
static TFLM_ALWAYS_INLINE void dw_s8_block(const dw_s8_t *c, const int32_t *xi, const dw_s8_tap_t *taps,
    const dw_s8_tap_t *end, uint32_t *acc, const int in) {
    const int8_t *w = c->filter + c->c0;
    const int32_t n = c->n, off = c->input_offset;
    int32_t j = 0;
    for (; j + 4 <= n; j += 4) {
        dw_s8_taps4(c->in_b + xi[j], w + j, taps, end, off, acc + j, in, false);
    }
    for (; j < n; ++j) {
        const int8_t *x = c->in_b + xi[j];
        uint32_t a = acc[j];
        for (const dw_s8_tap_t *t = taps; t < end; ++t) {
            a += (uint32_t)((x[t->x] + off) * w[j + t->w]);
        }
        acc[j] = a;
    }
}

// What the channels path reads per pixel, in locals (stores through the
// output could alias the kernel data).
typedef struct {
    const int8_t *x, *w;       // the input's first channel, the chunk's weights
    const tflm_out_s8_t *q;
    int32_t c0, n, off, zp, lo, hi;
    bool words;                // dw_s8_taps4's `words` for every pixel
} dw_s8_chunk_t;

// One output pixel's chunk of channels over a window of at most
// DW_S8_TAPS_MAX taps listed from `taps`: each four channels' sums from
// the bias to the output stage in registers.
static TFLM_ALWAYS_INLINE void dw_s8_pixel(const dw_s8_chunk_t k, const int32_t *xi, const dw_s8_tap_t *taps,
    const dw_s8_tap_t *end, int8_t *out, const int in) {
    const tflm_out_s8_t *q = k.q;
    int32_t j = 0;
    for (; j + 4 <= k.n; j += 4) {
        uint32_t a[4] = { (uint32_t)q[j].bias, (uint32_t)q[j + 1].bias, (uint32_t)q[j + 2].bias,
                          (uint32_t)q[j + 3].bias };
        // (`in` is a constant in each of dw_s8_channels_each/pairs/one, so
        // two branches fold away; TFLM_DW_S8_COMPACT's one function keeps
        // all three tap loops and shares the output stage.)
        if (in == DW_S8_IN_EACH) {
            dw_s8_taps4(k.x + k.c0 + j, k.w + j, taps, end, k.off, a, DW_S8_IN_EACH, k.words);
        } else if (in == DW_S8_IN_PAIRS) {
            dw_s8_taps4(k.x + xi[j], k.w + j, taps, end, k.off, a, DW_S8_IN_PAIRS, k.words);
        } else {
            dw_s8_taps4(k.x + xi[j], k.w + j, taps, end, k.off, a, DW_S8_IN_ONE, k.words);
        }
        out[j] = dw_s8_out(a[0], &q[j], k.zp, k.lo, k.hi);
        out[j + 1] = dw_s8_out(a[1], &q[j + 1], k.zp, k.lo, k.hi);
        out[j + 2] = dw_s8_out(a[2], &q[j + 2], k.zp, k.lo, k.hi);
        out[j + 3] = dw_s8_out(a[3], &q[j + 3], k.zp, k.lo, k.hi);
    }
    for (; j < k.n; ++j) {
        const int8_t *x = k.x + xi[j];
        uint32_t a = (uint32_t)q[j].bias;
        for (const dw_s8_tap_t *t = taps; t < end; ++t) {
            a += (uint32_t)((x[t->x] + k.off) * k.w[j + t->w]);
        }
        out[j] = dw_s8_out(a, &q[j], k.zp, k.lo, k.hi);
    }
}

// The chunk's output channels channels innermost: per output pixel its
// taps inside the input listed once, then the channels summed over them
// four at a time in registers, so nothing is set up per channel and row.
// A window of at most DW_S8_TAPS_MAX taps (`whole`) is listed at once and
// its sums go from the bias straight to the output stage; a larger one
// (rows of at most that many taps) in blocks of whole window rows, each
// channel's sum kept on the stack from one block to the next. Each sum is
// the reference's (the same products, modulo 2^32).
static TFLM_ALWAYS_INLINE void dw_s8_channels_in(const dw_s8_t *c, int8_t *output, int32_t batch, int32_t row0,
    int32_t row1, const int in, const bool whole) {
    const int32_t in_w = c->in_w, out_w = c->out_w, out_d = c->out_d, n = c->n;
#if DW_S8_V6M_ASM
    // Words at every tap: the weights' (and with multiplier 1 the inputs')
    // first channel aligned, and the offsets' steps whole words.
    const uintptr_t wa = (uintptr_t)(c->filter + c->c0) | (uintptr_t)out_d;
    const bool words = ((in == DW_S8_IN_ONE ? wa : wa | (uintptr_t)(c->in_b + c->c0) | (uintptr_t)c->in_d) & 3) == 0;
#else
    const bool words = false;
#endif
    const dw_s8_chunk_t k = { c->in_b, c->filter + c->c0, c->q, c->c0, n, c->input_offset, c->zero_point,
                              c->act_min, c->act_max, words };
    dw_s8_tap_t taps[DW_S8_TAPS_MAX];
    int32_t xi[DW_S8_CHUNK];  // each output channel's input channel
    for (int32_t j = 0; j < n; ++j) {
        xi[j] = c->mult == 1 ? c->c0 + j : (c->c0 + j) / c->mult;
    }
    for (int32_t oy = row0; oy < row1; ++oy) {
        int32_t fy0, fy1;
        const int32_t y0 = conv_window(oy, c->stride_h, c->pad_h, c->dil_h, c->f_h, c->in_h, &fy0, &fy1);
        int8_t *out = output + ((batch * c->out_h + oy) * out_w) * out_d + c->c0;
        for (int32_t ox = 0; ox < out_w; ++ox, out += out_d) {
            int32_t fx0, fx1;
            const int32_t x0 = conv_window(ox, c->stride_w, c->pad_w, c->dil_w, c->f_w, in_w, &fx0, &fx1);
            int32_t fy = fx0 < fx1 ? fy0 : fy1;
            if (whole) {
                dw_s8_pixel(k, xi, taps, dw_s8_list(c, taps, &fy, fy1, y0, x0, fx0, fx1, true), out, in);
                continue;
            }
            uint32_t acc[DW_S8_CHUNK];
            for (int32_t j = 0; j < n; ++j) {
                acc[j] = (uint32_t)k.q[j].bias;
            }
            while (fy < fy1) {
                const dw_s8_tap_t *end = dw_s8_list(c, taps, &fy, fy1, y0, x0, fx0, fx1, false);
                if (in == DW_S8_IN_EACH) {
                    dw_s8_block(c, xi, taps, end, acc, DW_S8_IN_EACH);
                } else if (in == DW_S8_IN_PAIRS) {
                    dw_s8_block(c, xi, taps, end, acc, DW_S8_IN_PAIRS);
                } else {
                    dw_s8_block(c, xi, taps, end, acc, DW_S8_IN_ONE);
                }
            }
            for (int32_t j = 0; j < n; ++j) {
                out[j] = dw_s8_out(acc[j], &k.q[j], k.zp, k.lo, k.hi);
            }
        }
    }
}

// 3x3 windows of multiplier 1 without dilation on the Cortex-M3 and M4
// (dw_s8_channels_3x3; not with TFLM_DW_S8_COMPACT, which PYBV11 builds
// with for its flash): channels innermost as above, but the window is
// walked row by row with each row's columns unrolled instead of a list of
// taps built per pixel and read per tap (on small maps with many channels
// the list's loads and loop cost as much as a third of the products).
#define DW_S8_3X3_CHANNELS \
    ((TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2 || TFLM_KERNEL_ARCH == TFLM_ARCH_DSP) && !TFLM_DW_S8_COMPACT)

#if DW_S8_3X3_CHANNELS
// Out of line and out of GCC's interprocedural passes: with them, its call
// in tflm_depthwise_conv_2d_s8_rows (dw_s8_channels_whole inlined) made
// that function's frame 768 bytes on the M3 and M4; without, 632 (752
// before this path).
#if defined(__GNUC__) && !defined(__clang__)
#define DW_S8_NOIPA __attribute__((noinline, noipa))
#else
#define DW_S8_NOIPA __attribute__((noinline))
#endif

// The products of one tap for four channels: the input at x + k and the
// weights at w + k (the channels' first), the input offset added to each
// input value.
static TFLM_ALWAYS_INLINE void dw_s8_tap4(const int8_t *x, const int8_t *w, int32_t k, uint32_t off, uint32_t *a0,
    uint32_t *a1, uint32_t *a2, uint32_t *a3) {
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
    // `off` packed in both halfwords; pairs as in dw_s8_taps4.
    const uint32_t xv = tflm_ld_u32(x + k), wv = tflm_ld_u32(w + k);
    dw_s8_mac4(tflm_sadd16(tflm_sxtb16(xv), off), tflm_sadd16(tflm_sxtb16_ror8(xv), off), wv, a0, a1, a2, a3);
#else
    // Each four values in one load (unaligned loads are allowed), then
    // sign-extended a byte at a time (SXTB with rotation, ASR for the top
    // one): fewer loads than byte by byte, no address per byte.
    const int32_t o = (int32_t)off;
#if defined(__GNUC__)
    // The loads after the previous tap's products: GCC otherwise loads
    // the taps of a row at once and spills sums for the registers.
    __asm__("" : "+r"(k) : "r"(*a0), "r"(*a1), "r"(*a2), "r"(*a3));
#endif
    const uint32_t xv = tflm_ld_u32(x + k), wv = tflm_ld_u32(w + k);
    *a0 += (uint32_t)(((int8_t)xv + o) * (int8_t)wv);
    *a1 += (uint32_t)(((int8_t)(xv >> 8) + o) * (int8_t)(wv >> 8));
    *a2 += (uint32_t)(((int8_t)(xv >> 16) + o) * (int8_t)(wv >> 16));
    *a3 += (uint32_t)((((int32_t)xv >> 24) + o) * ((int32_t)wv >> 24));
#endif
}

// The output stage of a channel whose shift takes tflm_out_s8_scale,
// clamped to [lo, hi], or with `sat` (the range is all of int8: no
// activation) by one SSAT instead of two compares.
static TFLM_ALWAYS_INLINE int8_t dw_s8_out_fast(uint32_t sum, const tflm_out_s8_t *q, int32_t lo, int32_t hi,
    bool sat) {
    return (int8_t)dw_s8_clamp(tflm_out_s8_scale((int32_t)sum, q->mult, q->k, q->shift), lo, hi, sat);
}

// The output stage of channels j to j + 3 (sums a0 to a3) to out[j] to
// out[j + 3], for dw_s8_groups and (in C builds) dw_s8_full_groups: with
// `sat` (a constant at each call) one SSAT each, else clamped to [lo, hi].
// The callers test `sat` and `continue`, as before this function: with the
// test in here (or q + j and out + j given) GCC's code for the pixel loop
// came out otherwise (other registers and stack slots).
static TFLM_ALWAYS_INLINE void dw_s8_out4(const tflm_out_s8_t *q, int32_t j, uint32_t a0, uint32_t a1, uint32_t a2,
    uint32_t a3, int32_t lo, int32_t hi, const bool sat, int8_t *out) {
    out[j] = dw_s8_out_fast(a0, &q[j], lo, hi, sat);
    out[j + 1] = dw_s8_out_fast(a1, &q[j + 1], lo, hi, sat);
    out[j + 2] = dw_s8_out_fast(a2, &q[j + 2], lo, hi, sat);
    out[j + 3] = dw_s8_out_fast(a3, &q[j + 3], lo, hi, sat);
}

// Each four of the chunk's n channels (returns how many it did) of one
// output pixel, its window's `cols` columns (a constant: 1, 2 or 3) on
// rows from xs and ws to xs + span, to the output stage.
static TFLM_ALWAYS_INLINE int32_t dw_s8_groups(const tflm_out_s8_t *q, int32_t n, const int8_t *xs,
    const int8_t *ws, int32_t span, int32_t in_d, int32_t in_row, uint32_t off4, int32_t lo, int32_t hi, bool sat,
    int8_t *out, const int32_t cols) {
    const int32_t w_row = 3 * in_d;
    int32_t j = 0;
    for (; j + 4 <= n; j += 4) {
        uint32_t a0 = (uint32_t)q[j].bias, a1 = (uint32_t)q[j + 1].bias, a2 = (uint32_t)q[j + 2].bias,
                 a3 = (uint32_t)q[j + 3].bias;
        const int8_t *x = xs + j, *w = ws + j;
        const int8_t *const x_end = x + span;
        for (; x != x_end; x += in_row, w += w_row) {
            dw_s8_tap4(x, w, 0, off4, &a0, &a1, &a2, &a3);
            if (cols > 1) {
                dw_s8_tap4(x, w, in_d, off4, &a0, &a1, &a2, &a3);
            }
            if (cols > 2) {
                dw_s8_tap4(x, w, 2 * in_d, off4, &a0, &a1, &a2, &a3);
            }
        }
        if (sat) {
            dw_s8_out4(q, j, a0, a1, a2, a3, lo, hi, true, out);
            continue;
        }
        dw_s8_out4(q, j, a0, a1, a2, a3, lo, hi, false, out);
    }
    return j;
}

// A window whole inside the input (three rows, three columns): its sums
// start from its group's bias (dw_s8_group_t), which holds the input
// offset times the channel's nine weights, so the taps add the products of
// the values as they are (sum (x + off) * w = sum x * w + off * sum w: the
// reference's sums, modulo 2^32). Each four channels' nine weights are
// copied once per call next to each other, so that a tap's are one load at
// a constant offset; with DSP already widened (SXTB16: channels 0 and 2,
// then 1 and 3).
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
#define DW_S8_FULL_WORDS (2)
#else
#define DW_S8_FULL_WORDS (1)
#endif
// In assembly on the M profile in optimised builds (the host's tests build
// the C loop below, the same sums), not position-independent ones (the
// natmod's: its register for the data leaves the blocks too few).
#if defined(__thumb2__) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M' && defined(__OPTIMIZE__) \
    && !defined(__PIC__)
#define DW_S8_FULL_ASM (1)
#else
#define DW_S8_FULL_ASM (0)
#endif
// Whether the assembly's output stage is out_s8.h's SMMLAR form (the DSP
// cores): the groups' weights and starts are then doubled, each shift is r.
#define DW_S8_FULL_MMR (DW_S8_FULL_ASM && TFLM_KERNEL_ARCH == TFLM_ARCH_DSP)
// A group of four channels as a whole window takes it: the sums' starts
// and the nine taps' weights, and for the assembly loop
// (dw_s8_full_pixel), which walks the groups with one pointer, the output
// stage's constants and the call's geometry next to them.
typedef struct {
    uint32_t bias[4];
    uint32_t w[9][DW_S8_FULL_WORDS];
#if DW_S8_FULL_ASM
    int32_t q[4][3];  // each channel's mult, k and shift (tflm_out_s8_t's; with SMMLAR r)
    int32_t back;     // from the input past the nine taps to the next group's first tap
    int32_t lo, hi;   // the clamp
    int32_t d, row;   // in_d, in_row - in_d (the taps' steps)
#endif
} dw_s8_group_t;

#if DW_S8_FULL_ASM
// The assembly's immediates: the starts first, the weights after them; the
// offsets of the fields after those, as text (the loop's block has no
// operand left for them: GCC takes at most 30).
_Static_assert(offsetof(dw_s8_group_t, bias) == 0 && offsetof(dw_s8_group_t, w) == 16,
    "DW_S8_GROUP_LOOP and DW_S8_GROUP_TAPS read the starts at 0 and the weights at 16");
#define DW_S8_G_Q (16 + 36 * DW_S8_FULL_WORDS)
#define DW_S8_G_BACK (DW_S8_G_Q + 48)
#define DW_S8_G_LO (DW_S8_G_BACK + 4)
#define DW_S8_G_D (DW_S8_G_BACK + 12)
#define DW_S8_G_SIZE (DW_S8_G_BACK + 20)
_Static_assert(offsetof(dw_s8_group_t, q) == DW_S8_G_Q && offsetof(dw_s8_group_t, back) == DW_S8_G_BACK
    && offsetof(dw_s8_group_t, lo) == DW_S8_G_LO && offsetof(dw_s8_group_t, d) == DW_S8_G_D
    && sizeof(dw_s8_group_t) == DW_S8_G_SIZE, "the assembly's offsets into dw_s8_group_t");
#define DW_S8_TEXT_(x) #x
#define DW_S8_TEXT(x) DW_S8_TEXT_(x)
_Static_assert(offsetof(tflm_out_s8_t, bias) == 0, "DW_S8_BORDER_START reads each channel's bias at 0");
#endif

typedef struct {
    dw_s8_group_t g[DW_S8_CHUNK / 4];
#if DW_S8_FULL_MMR
    bool fits;
#endif
} dw_s8_full_t;

// For the chunk's groups of four channels (the rest go one by one). With
// SMMLAR, whether every group's constants fit it (f->fits: the sums'
// starts within 2^29 and the taps' at most 2^19, so that the doubled sums
// fit 32 bits); if not, the caller takes the loops without the groups.
static void dw_s8_full_setup(dw_s8_full_t *f, const tflm_out_s8_t *q, int32_t n, const int8_t *w_c, int32_t in_d,
    int32_t in_row, int32_t off, int32_t lo, int32_t hi) {
#if DW_S8_FULL_MMR
    bool fits = true;
#endif
    for (int32_t j = 0; j + 4 <= n; j += 4) {
        dw_s8_group_t *g = &f->g[j / 4];
        int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (int32_t t = 0; t < 9; ++t) {
            const uint32_t wv = tflm_ld_u32(w_c + t * in_d + j);
#if DW_S8_FULL_MMR
            g->w[t][0] = tflm_sadd16(tflm_sxtb16(wv), tflm_sxtb16(wv));
            g->w[t][1] = tflm_sadd16(tflm_sxtb16_ror8(wv), tflm_sxtb16_ror8(wv));
#elif TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
            g->w[t][0] = tflm_sxtb16(wv);
            g->w[t][1] = tflm_sxtb16_ror8(wv);
#else
            g->w[t][0] = wv;
#endif
            s0 += (int8_t)wv;
            s1 += (int8_t)(wv >> 8);
            s2 += (int8_t)(wv >> 16);
            s3 += (int32_t)wv >> 24;
        }
        g->bias[0] = (uint32_t)q[j].bias + (uint32_t)(off * s0);
        g->bias[1] = (uint32_t)q[j + 1].bias + (uint32_t)(off * s1);
        g->bias[2] = (uint32_t)q[j + 2].bias + (uint32_t)(off * s2);
        g->bias[3] = (uint32_t)q[j + 3].bias + (uint32_t)(off * s3);
#if DW_S8_FULL_ASM
        for (int32_t i = 0; i < 4; ++i) {
            g->q[i][0] = q[j + i].mult;
            g->q[i][1] = q[j + i].k;
            g->q[i][2] = q[j + i].shift;
#if DW_S8_FULL_MMR
            // Border windows start from the bias alone (dw_s8_border_groups).
            // (Every channel here in the fast form: dw_s8_channels_3x3.)
            fits &= tflm_out_s8_mmr_bias_fits(q[j + i].bias) & tflm_out_s8_mmr_k_fits(q[j + i].k)
                & tflm_out_s8_mmr_bias_fits((int32_t)g->bias[i]);
            g->bias[i] *= 2u;
            g->q[i][2] += 1;
#endif
        }
        g->back = 2 * in_row + in_d - 4;
        g->lo = lo;
        g->hi = hi;
        g->d = in_d;
        g->row = in_row - in_d;
#else
        (void)in_row, (void)lo, (void)hi;
#endif
    }
#if DW_S8_FULL_MMR
    f->fits = fits;
#endif
}

#if DW_S8_FULL_ASM && TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
// One tap: the four values (a word at x plus `at`), the widened weights at
// `w` bytes into the group's (two LDR pipelined behind the first, a cycle
// fewer than an LDRD after it); then four 16x16 multiply-accumulates.
#define DW_S8_FULL_LOAD(at, w) \
    "ldr %[t0], [%[x]" at "]\n\t" \
    "ldr %[w0], [%[wg], #" w "]\n\t" \
    "ldr %[w1], [%[wg], #" w "+4]\n\t"
#define DW_S8_FULL_WIDEN \
    "sxtb16 %[t1], %[t0]\n\t" \
    "sxtb16 %[t0], %[t0], ror #8\n\t"
#define DW_S8_FULL_SMLA \
    "smlabb %[a0], %[t1], %[w0], %[a0]\n\t" \
    "smlatt %[a2], %[t1], %[w0], %[a2]\n\t" \
    "smlabb %[a1], %[t0], %[w1], %[a1]\n\t" \
    "smlatt %[a3], %[t0], %[w1], %[a3]\n\t"
#define DW_S8_FULL_MAC DW_S8_FULL_WIDEN DW_S8_FULL_SMLA
// The same with the input offset (packed in both halfwords) added to the
// values, for a window whose sums start from the bias alone.
#define DW_S8_OFF_MAC \
    DW_S8_FULL_WIDEN "sadd16 %[t1], %[t1], %[off]\n\t" "sadd16 %[t0], %[t0], %[off]\n\t" DW_S8_FULL_SMLA
#define DW_S8_TAP_BYTES "8"
#elif DW_S8_FULL_ASM && TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2
// One tap on the Cortex-M3: the four values and the four weights a word
// each, sign-extended a byte at a time (SXTB with rotation, ASR for the top
// one), four MLA.
#define DW_S8_FULL_LOAD(at, w) \
    "ldr %[t0], [%[x]" at "]\n\t" \
    "ldr %[w0], [%[wg], #" w "]\n\t"
#define DW_S8_FULL_MAC \
    "sxtb %[t1], %[t0]\n\t" \
    "sxtb %[w1], %[w0]\n\t" \
    "mla %[a0], %[t1], %[w1], %[a0]\n\t" \
    "sxtb %[t1], %[t0], ror #8\n\t" \
    "sxtb %[w1], %[w0], ror #8\n\t" \
    "mla %[a1], %[t1], %[w1], %[a1]\n\t" \
    "sxtb %[t1], %[t0], ror #16\n\t" \
    "sxtb %[w1], %[w0], ror #16\n\t" \
    "mla %[a2], %[t1], %[w1], %[a2]\n\t" \
    "asr %[t0], %[t0], #24\n\t" \
    "asr %[w0], %[w0], #24\n\t" \
    "mla %[a3], %[t0], %[w0], %[a3]\n\t"
// The same with the input offset added to each value.
#define DW_S8_OFF_MAC \
    "sxtb %[t1], %[t0]\n\t" \
    "sxtb %[w1], %[w0]\n\t" \
    "add %[t1], %[t1], %[off]\n\t" \
    "mla %[a0], %[t1], %[w1], %[a0]\n\t" \
    "sxtb %[t1], %[t0], ror #8\n\t" \
    "sxtb %[w1], %[w0], ror #8\n\t" \
    "add %[t1], %[t1], %[off]\n\t" \
    "mla %[a1], %[t1], %[w1], %[a1]\n\t" \
    "sxtb %[t1], %[t0], ror #16\n\t" \
    "sxtb %[w1], %[w0], ror #16\n\t" \
    "add %[t1], %[t1], %[off]\n\t" \
    "mla %[a2], %[t1], %[w1], %[a2]\n\t" \
    "asr %[t0], %[t0], #24\n\t" \
    "asr %[w0], %[w0], #24\n\t" \
    "add %[t0], %[t0], %[off]\n\t" \
    "mla %[a3], %[t0], %[w0], %[a3]\n\t"
#define DW_S8_TAP_BYTES "4"
#endif
#ifdef DW_S8_FULL_LOAD
// A row of the window: its third column from x moved by in_d, then `next`
// (on to the next row); x moved once its loads are
// done, between them and the products, as the core has no path from an
// addition's result to the next instruction's address (a cycle lost).
#define DW_S8_TAPS_ROW3(mac, w0, w1, w2, next) \
    DW_S8_FULL_LOAD("", w0) mac DW_S8_FULL_LOAD(", %[d]", w1) "add %[x], %[x], %[d]\n\t" \
    mac DW_S8_FULL_LOAD(", %[d]", w2) next mac
#define DW_S8_FULL_ROW(w0, w1, w2, next) DW_S8_TAPS_ROW3(DW_S8_FULL_MAC, w0, w1, w2, next)
// A row of two columns (`next` then moves x by a whole input row).
#define DW_S8_TAPS_ROW2(mac, w0, w1, next) DW_S8_FULL_LOAD("", w0) mac DW_S8_FULL_LOAD(", %[d]", w1) next mac
// The weights of the window's tap (r, c) from its first tap's.
#define DW_S8_TAP_W(r, c) "(" #r "*3+" #c ")*" DW_S8_TAP_BYTES
#define DW_S8_FULL_NEXT "add %[x], %[x], %[row]\n\t"
#endif

#if DW_S8_FULL_ASM
// The output stage of channel i of a group (its sum in register v):
// out_s8.h's steps with the group's constants (mult, k and shift loaded
// together: two of the loads pipelined), then `clamp`, the byte stored.
// (With SMMLAR on the doubled sum, four steps where the 64-bit constant
// took seven.)
#if DW_S8_FULL_MMR
#define DW_S8_GROUP_SCALE(v, clamp) TFLM_OUT_S8_ASM_MMR(v, "%[t1]", "%[t0]", "%[w0]", "%[t0]", "", clamp)
#else
#define DW_S8_GROUP_SCALE(v, clamp) \
    TFLM_OUT_S8_ASM((v, "%[t1]", "%[t0]", "%[w0]", "%[w1]", "%[t0]", ""), TFLM_OUT_S8_ASM_LO_IMM, \
        TFLM_OUT_S8_ASM_NONE, clamp)
#endif
#define DW_S8_GROUP_OUT_AT(g, v, i, clamp) \
    "ldr %[t0], [" g ", #" DW_S8_TEXT(DW_S8_G_Q) "+" #i "*12+4]\n\t" \
    "ldr %[t1], [" g ", #" DW_S8_TEXT(DW_S8_G_Q) "+" #i "*12]\n\t" \
    "ldr %[w0], [" g ", #" DW_S8_TEXT(DW_S8_G_Q) "+" #i "*12+8]\n\t" \
    DW_S8_GROUP_SCALE(v, clamp) \
    "strb %[t0], [%[o], #" #i "]\n\t"
#define DW_S8_GROUP_OUT(v, i, clamp) DW_S8_GROUP_OUT_AT("%[wg]", v, i, clamp)
// The clamp to the group's range, loaded into the registers of the taps'
// steps (reloaded before the next group's taps).
#define DW_S8_GROUP_CLAMP(v, m, k, sh, t, u, c30) TFLM_OUT_S8_ASM_CLAMP_TO(u, "%[d]", "%[row]")
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
#define DW_S8_GROUP_TAPS \
    DW_S8_FULL_ROW("16", "24", "32", DW_S8_FULL_NEXT) DW_S8_FULL_ROW("40", "48", "56", DW_S8_FULL_NEXT) \
    DW_S8_FULL_ROW("64", "72", "80", "")
#else
#define DW_S8_GROUP_TAPS \
    DW_S8_FULL_ROW("16", "20", "24", DW_S8_FULL_NEXT) DW_S8_FULL_ROW("28", "32", "36", DW_S8_FULL_NEXT) \
    DW_S8_FULL_ROW("40", "44", "48", "")
#endif
// One group a turn from g to end: the sums from the starts through the nine
// taps (x back to the next group's first after them), the four outputs.
// `pre` and `post` go around the outputs (the clamp's range in, the steps
// back). Then the next of `count` pixels (from memory: every register is
// the groups'): its first tap xstep bytes on, its outputs ostep, the
// groups again from g.
#define DW_S8_GROUP_LOOP(pre, clamp, post) \
    "2:\n\t" \
    "1:\n\t" \
    "ldrd %[a0], %[a1], [%[wg]]\n\t" \
    "ldrd %[a2], %[a3], [%[wg], #8]\n\t" \
    DW_S8_GROUP_TAPS \
    "ldr %[t0], [%[wg], #" DW_S8_TEXT(DW_S8_G_BACK) "]\n\t" \
    "sub %[x], %[x], %[t0]\n\t" \
    pre \
    DW_S8_GROUP_OUT("%[a0]", 0, clamp) DW_S8_GROUP_OUT("%[a1]", 1, clamp) \
    DW_S8_GROUP_OUT("%[a2]", 2, clamp) DW_S8_GROUP_OUT("%[a3]", 3, clamp) \
    post \
    "adds %[o], %[o], #4\n\t" \
    "adds %[wg], %[wg], #" DW_S8_TEXT(DW_S8_G_SIZE) "\n\t" \
    "cmp %[wg], %[e]\n\t" \
    "bne 1b\n\t" \
    "ldr %[t0], %[cm]\n\t" \
    "subs %[t0], %[t0], #1\n\t" \
    "beq 3f\n\t" \
    "str %[t0], %[cm]\n\t" \
    "ldr %[x], %[xm]\n\t" \
    "ldr %[t0], %[xsm]\n\t" \
    "ldr %[o], %[om]\n\t" \
    "ldr %[t1], %[osm]\n\t" \
    "ldr %[wg], %[gm]\n\t" \
    "add %[x], %[x], %[t0]\n\t" \
    "add %[o], %[o], %[t1]\n\t" \
    "str %[x], %[xm]\n\t" \
    "str %[o], %[om]\n\t" \
    "b 2b\n" \
    "3:\n\t"

// The groups g to end (one or more) of `count` output pixels in a row whose
// windows are whole inside the input (the first's first tap at x, each
// next xstep bytes on), to out (each next ostep on): each group's
// registers stay in one loop, its constants next to its weights, and the
// pixels follow in the same block (a call and the C loop's window
// arithmetic a pixel cost about 60 cycles more).
static TFLM_ALWAYS_INLINE void dw_s8_full_pixel(const dw_s8_group_t *g, const dw_s8_group_t *end, const int8_t *x,
    int8_t *out, int32_t count, int32_t xstep, int32_t ostep, bool sat) {
    uint32_t a0, a1, a2, a3, t0, t1, w0, w1;
    int32_t d = g->d, row = g->row;
    const dw_s8_group_t *g0 = g;
    const int8_t *x_pix = x;
    int8_t *o_pix = out;
#define DW_S8_GROUP_OPERANDS \
    : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [t0] "=&r"(t0), [t1] "=&r"(t1), \
      [w0] "=&r"(w0), [w1] "=&r"(w1), [x] "+r"(x), [wg] "+r"(g), [o] "+r"(out), [d] "+r"(d), [row] "+r"(row), \
      [cm] "+m"(count), [xm] "+m"(x_pix), [om] "+m"(o_pix) \
    : [e] "r"(end), [xsm] "m"(xstep), [osm] "m"(ostep), [gm] "m"(g0) \
    : "memory", "cc"
    if (sat) {
        __asm__ volatile(DW_S8_GROUP_LOOP("", TFLM_OUT_S8_ASM_SSAT, "") DW_S8_GROUP_OPERANDS);
    } else {
        __asm__ volatile(DW_S8_GROUP_LOOP("ldrd %[d], %[row], [%[wg], #" DW_S8_TEXT(DW_S8_G_LO) "]\n\t",
            DW_S8_GROUP_CLAMP, "ldrd %[d], %[row], [%[wg], #" DW_S8_TEXT(DW_S8_G_D) "]\n\t") DW_S8_GROUP_OPERANDS);
    }
#undef DW_S8_GROUP_OPERANDS
}
#else
// Four channels' sums over a whole window from x (its first tap, columns
// in_d apart, rows in_row) with the group's copied weights wg.
static TFLM_ALWAYS_INLINE void dw_s8_full4(const int8_t *x, const uint32_t (*wg)[DW_S8_FULL_WORDS], int32_t in_d,
    int32_t in_row, uint32_t *a) {
    uint32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    for (int32_t t = 0; t < 9; ++t) {
        const uint32_t xv = tflm_ld_u32(x + (t / 3) * in_row + (t % 3) * in_d);
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
        const uint32_t x02 = tflm_sxtb16(xv), x13 = tflm_sxtb16_ror8(xv);
        a0 = tflm_smlabb(x02, wg[t][0], a0);
        a1 = tflm_smlabb(x13, wg[t][1], a1);
        a2 = tflm_smlatt(x02, wg[t][0], a2);
        a3 = tflm_smlatt(x13, wg[t][1], a3);
#else
        const uint32_t wv = wg[t][0];
        a0 += (uint32_t)((int8_t)xv * (int8_t)wv);
        a1 += (uint32_t)((int8_t)(xv >> 8) * (int8_t)(wv >> 8));
        a2 += (uint32_t)((int8_t)(xv >> 16) * (int8_t)(wv >> 16));
        a3 += (uint32_t)(((int32_t)xv >> 24) * ((int32_t)wv >> 24));
#endif
    }
    a[0] = a0;
    a[1] = a1;
    a[2] = a2;
    a[3] = a3;
}
#endif

// Each four of the chunk's n channels of one output pixel whose window is
// whole inside the input (first tap at xs), to the output stage; returns
// how many it did.
static TFLM_ALWAYS_INLINE int32_t dw_s8_full_groups(const tflm_out_s8_t *q, const dw_s8_full_t *f, int32_t n,
    const int8_t *xs, int32_t in_d, int32_t in_row, int32_t lo, int32_t hi, bool sat, int8_t *out) {
#if DW_S8_FULL_ASM
    (void)q, (void)in_d, (void)in_row, (void)lo, (void)hi;
    const int32_t groups = n / 4;
    if (groups > 0) {
        dw_s8_full_pixel(f->g, f->g + groups, xs, out, 1, 0, 0, sat);
    }
    return groups * 4;
#else
    int32_t j = 0;
    for (; j + 4 <= n; j += 4) {
        uint32_t a[4] = { f->g[j / 4].bias[0], f->g[j / 4].bias[1], f->g[j / 4].bias[2], f->g[j / 4].bias[3] };
        dw_s8_full4(xs + j, f->g[j / 4].w, in_d, in_row, a);
        if (sat) {
            dw_s8_out4(q, j, a[0], a[1], a[2], a[3], lo, hi, true, out);
            continue;
        }
        dw_s8_out4(q, j, a[0], a[1], a[2], a[3], lo, hi, false, out);
    }
    return j;
#endif
}

#if DW_S8_FULL_ASM
// Each four of the chunk's n channels of one output pixel whose window has
// two or three rows and two or three columns inside the input, not both
// three (a border's: `rows` and `cols` of the window), its first tap at xs
// and its weights `wt` bytes into a group's: the sums from the bias, the
// offset added to the values (the taps outside would otherwise have to be
// taken off a folded start), then the outputs, the groups in one block of
// assembly as dw_s8_full_pixel's (each group's first tflm_out_s8_t, the
// step back to the next group's first tap, the weights' distance from
// their group's start, the end and the registers the outputs take over:
// from memory). Returns how many channels it did.
_Static_assert(sizeof(tflm_out_s8_t) == 16, "DW_S8_BORDER_LOOP reads each channel's bias 16 bytes apart");
#if DW_S8_FULL_MMR
// The SMMLAR stage's doubled starts (the weights are doubled already).
#define DW_S8_BORDER_DOUBLE \
    "add %[a0], %[a0], %[a0]\n\t" \
    "add %[a1], %[a1], %[a1]\n\t" \
    "add %[a2], %[a2], %[a2]\n\t" \
    "add %[a3], %[a3], %[a3]\n\t"
#else
#define DW_S8_BORDER_DOUBLE ""
#endif
#define DW_S8_BORDER_LOOP(taps, pre, clamp, post) \
    "1:\n\t" \
    "ldr %[t1], %[qm]\n\t" \
    "ldr %[a0], [%[t1]]\n\t" \
    "ldr %[a1], [%[t1], #16]\n\t" \
    "ldr %[a2], [%[t1], #32]\n\t" \
    "ldr %[a3], [%[t1], #48]\n\t" \
    DW_S8_BORDER_DOUBLE \
    "add %[t1], %[t1], #64\n\t" \
    "str %[t1], %[qm]\n\t" \
    taps \
    "ldr %[t0], %[backm]\n\t" \
    "sub %[x], %[x], %[t0]\n\t" \
    "ldr %[t0], %[wtm]\n\t" \
    "sub %[off], %[wg], %[t0]\n\t" \
    pre \
    DW_S8_GROUP_OUT_AT("%[off]", "%[a0]", 0, clamp) DW_S8_GROUP_OUT_AT("%[off]", "%[a1]", 1, clamp) \
    DW_S8_GROUP_OUT_AT("%[off]", "%[a2]", 2, clamp) DW_S8_GROUP_OUT_AT("%[off]", "%[a3]", 3, clamp) \
    post \
    "ldr %[off], %[offm]\n\t" \
    "adds %[o], %[o], #4\n\t" \
    "adds %[wg], %[wg], #" DW_S8_TEXT(DW_S8_G_SIZE) "\n\t" \
    "ldr %[t0], %[endm]\n\t" \
    "cmp %[wg], %[t0]\n\t" \
    "bne 1b\n\t"
#define DW_S8_BORDER_TAPS_2X3 \
    DW_S8_TAPS_ROW3(DW_S8_OFF_MAC, DW_S8_TAP_W(0, 0), DW_S8_TAP_W(0, 1), DW_S8_TAP_W(0, 2), DW_S8_FULL_NEXT) \
    DW_S8_TAPS_ROW3(DW_S8_OFF_MAC, DW_S8_TAP_W(1, 0), DW_S8_TAP_W(1, 1), DW_S8_TAP_W(1, 2), "")
#define DW_S8_BORDER_TAPS_3X2 \
    DW_S8_TAPS_ROW2(DW_S8_OFF_MAC, DW_S8_TAP_W(0, 0), DW_S8_TAP_W(0, 1), DW_S8_FULL_NEXT) \
    DW_S8_TAPS_ROW2(DW_S8_OFF_MAC, DW_S8_TAP_W(1, 0), DW_S8_TAP_W(1, 1), DW_S8_FULL_NEXT) \
    DW_S8_TAPS_ROW2(DW_S8_OFF_MAC, DW_S8_TAP_W(2, 0), DW_S8_TAP_W(2, 1), "")
#define DW_S8_BORDER_TAPS_2X2 \
    DW_S8_TAPS_ROW2(DW_S8_OFF_MAC, DW_S8_TAP_W(0, 0), DW_S8_TAP_W(0, 1), DW_S8_FULL_NEXT) \
    DW_S8_TAPS_ROW2(DW_S8_OFF_MAC, DW_S8_TAP_W(1, 0), DW_S8_TAP_W(1, 1), "")
// The clamp's range into the taps' step registers, and the steps back.
#define DW_S8_BORDER_PRE "ldrd %[d], %[row], [%[off], #" DW_S8_TEXT(DW_S8_G_LO) "]\n\t"
#define DW_S8_BORDER_POST "ldr %[d], %[dm]\n\t" "ldr %[row], %[rowm]\n\t"
#define DW_S8_BORDER_BLOCK(taps, sat) \
    if (sat) { \
        __asm__ volatile(DW_S8_BORDER_LOOP(taps, "", TFLM_OUT_S8_ASM_SSAT, "") DW_S8_BORDER_OPERANDS); \
    } else { \
        __asm__ volatile(DW_S8_BORDER_LOOP(taps, DW_S8_BORDER_PRE, DW_S8_GROUP_CLAMP, DW_S8_BORDER_POST) \
            DW_S8_BORDER_OPERANDS); \
    }
static TFLM_ALWAYS_INLINE int32_t dw_s8_border_groups(const tflm_out_s8_t *q, const dw_s8_full_t *f, int32_t n,
    const int8_t *xs, int32_t wt, int32_t in_d, int32_t in_row, uint32_t off4, bool sat, int8_t *out, int32_t rows,
    int32_t cols) {
    const int32_t groups = n / 4;
    if (groups == 0) {
        return 0;
    }
    uint32_t a0, a1, a2, a3, t0, t1, w0, w1;
    const uint8_t *wg = (const uint8_t *)f->g[0].w + wt;
    const uint8_t *const end = wg + groups * DW_S8_G_SIZE;
    const int32_t wt16 = wt + 16;  // the weights' distance from their group's start
    const int8_t *x = xs;
    int8_t *o = out;
    uint32_t off = off4;
    const uint32_t off_keep = off4;
    // Each window's rows: the step from the end of one to the next, and from
    // the last tap back to the next group's first.
    const int32_t d = in_d, step = cols == 3 ? in_row - in_d : in_row;
    const int32_t back = cols == 3 ? in_row + in_d - 4 : rows == 3 ? 2 * in_row - 4 : in_row - 4;
    int32_t dr = d, rowr = step;
#define DW_S8_BORDER_OPERANDS \
    : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [t0] "=&r"(t0), [t1] "=&r"(t1), \
      [w0] "=&r"(w0), [w1] "=&r"(w1), [x] "+r"(x), [wg] "+r"(wg), [o] "+r"(o), [d] "+r"(dr), [row] "+r"(rowr), \
      [off] "+r"(off), [qm] "+m"(q) \
    : [backm] "m"(back), [wtm] "m"(wt16), [endm] "m"(end), [offm] "m"(off_keep), [dm] "m"(d), [rowm] "m"(step) \
    : "memory", "cc"
    if (cols == 3) {
        DW_S8_BORDER_BLOCK(DW_S8_BORDER_TAPS_2X3, sat)
    } else if (rows == 3) {
        DW_S8_BORDER_BLOCK(DW_S8_BORDER_TAPS_3X2, sat)
    } else {
        DW_S8_BORDER_BLOCK(DW_S8_BORDER_TAPS_2X2, sat)
    }
#undef DW_S8_BORDER_OPERANDS
    return groups * 4;
}
#undef DW_S8_BORDER_LOOP
#undef DW_S8_BORDER_TAPS_2X3
#undef DW_S8_BORDER_TAPS_3X2
#undef DW_S8_BORDER_TAPS_2X2
#undef DW_S8_BORDER_PRE
#undef DW_S8_BORDER_POST
#undef DW_S8_BORDER_BLOCK
#undef DW_S8_BORDER_DOUBLE
#endif

// The pixels of rows [row0, row1) of dw_s8_channels_3x3's chunk: per
// output pixel the window's first tap inside the input and how many rows
// and columns of it are inside, then each four channels from the bias
// through those taps (rows in_row apart in the input, 3 * in_d in the
// filter; columns in_d apart in both; a loop for each number of columns)
// to the output stage, the rest one by one. With `groups` (a constant at
// each call: the pixel loop then keeps the registers the assembly's blocks
// need) whole windows, and in the assembly border windows, take the
// groups' set-up in `full`.
static TFLM_ALWAYS_INLINE void dw_s8_3x3_pixels(const dw_s8_t *c, int8_t *output, int32_t batch, int32_t row0,
    int32_t row1, const dw_s8_full_t *full, const bool groups) {
    const tflm_out_s8_t *q = c->q;
    const int32_t n = c->n;
    const int32_t in_d = c->in_d, in_row = c->in_row, out_w = c->out_w, w_row = 3 * in_d;
    const int32_t off = c->input_offset, lo = c->act_min, hi = c->act_max;
    const bool sat = lo == -128 && hi == 127;
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
    const uint32_t off4 = tflm_pack16(off, off);
#else
    const uint32_t off4 = (uint32_t)off;
#endif
    const int8_t *in_c = c->in_b + c->c0, *w_c = c->filter + c->c0;
#if DW_S8_FULL_ASM
    // Past the last column whose window ends inside the input (those from
    // one that starts inside it are whole).
    const int32_t ox_whole = groups && c->in_w + c->pad_w >= 3 ? (c->in_w + c->pad_w - 3) / c->stride_w + 1 : 0;
#endif
    for (int32_t oy = row0; oy < row1; ++oy) {
        int32_t fy0, fy1;
        const int32_t y0 = conv_window(oy, c->stride_h, c->pad_h, 1, 3, c->in_h, &fy0, &fy1);
        int8_t *out = output + ((batch * c->out_h + oy) * out_w) * in_d + c->c0;
        for (int32_t ox = 0; ox < out_w; ++ox, out += in_d) {
            int32_t fx0, fx1, j;
            const int32_t x0 = conv_window(ox, c->stride_w, c->pad_w, 1, 3, c->in_w, &fx0, &fx1);
            const int32_t cols = fx1 - fx0, rows = cols > 0 ? fy1 - fy0 : 0;
            const int32_t span = rows * in_row;  // from a tap's first row to past its last
            const int8_t *xs = in_c + (y0 + fy0) * in_row + (x0 + fx0) * in_d;
            const int8_t *ws = w_c + (fy0 * 3 + fx0) * in_d;
#if DW_S8_FULL_ASM
            if (groups && cols == 3 && rows == 3 && (n & 3) == 0) {
                // The run of whole windows from here, in one block.
                const int32_t run = (ox_whole < out_w ? ox_whole : out_w) - ox;
                dw_s8_full_pixel(full->g, full->g + n / 4, xs, out, run, c->stride_w * in_d, in_d, sat);
                ox += run - 1;
                out += (run - 1) * in_d;
                continue;
            }
#endif
            if (groups && cols == 3 && rows == 3) {
                j = dw_s8_full_groups(q, full, n, xs, in_d, in_row, lo, hi, sat, out);
#if DW_S8_FULL_ASM
            } else if (groups && cols >= 2 && rows >= 2) {
                j = dw_s8_border_groups(q, full, n, xs, (fy0 * 3 + fx0) * 4 * DW_S8_FULL_WORDS, in_d, in_row, off4,
                    sat, out, rows, cols);
#endif
            } else if (cols == 3) {
                j = dw_s8_groups(q, n, xs, ws, span, in_d, in_row, off4, lo, hi, sat, out, 3);
            } else if (cols == 2) {
                j = dw_s8_groups(q, n, xs, ws, span, in_d, in_row, off4, lo, hi, sat, out, 2);
            } else {
                j = dw_s8_groups(q, n, xs, ws, span, in_d, in_row, off4, lo, hi, sat, out, 1);
            }
            for (; j < n; ++j) {
                uint32_t a = (uint32_t)q[j].bias;
                const int8_t *x = xs + j, *w = ws + j;
                for (int32_t r = 0; r < rows; ++r, x += in_row, w += w_row) {
                    for (int32_t t = 0; t < cols; ++t) {
                        a += (uint32_t)((x[t * in_d] + off) * w[t * in_d]);
                    }
                }
                out[j] = dw_s8_out_fast(a, &q[j], lo, hi, false);
            }
        }
    }
}

// The chunk's output channels over rows [row0, row1) (dw_s8_3x3_pixels).
// Each sum is the reference's: the same products, modulo 2^32. Only for a
// chunk whose output stages are all one multiply and shift
// (tflm_out_s8_scale): returns false, having written nothing, for another
// (dw_s8_channels_whole's then).
DW_S8_NOIPA static bool dw_s8_channels_3x3(const dw_s8_t *c, int8_t *output, int32_t batch,
    int32_t row0, int32_t row1) {
    const tflm_out_s8_t *q = c->q;
    const int32_t n = c->n;
    int32_t shift_bits = 0;  // negative if a channel's shift is (-1: the reference's steps)
    int32_t j = 0;
    for (; j + 4 <= n; j += 4) {
        shift_bits |= q[j].shift | q[j + 1].shift | q[j + 2].shift | q[j + 3].shift;
    }
    for (; j < n; ++j) {
        shift_bits |= q[j].shift;
    }
    if (shift_bits < 0) {
        return false;
    }
    // The groups' set-up only where a row has whole windows: on a map of
    // three columns or fewer (at most one a row) it costs what it saves.
    dw_s8_full_t full;
    if (c->out_w > 3) {
        dw_s8_full_setup(&full, q, n, c->filter + c->c0, c->in_d, c->in_row, c->input_offset, c->act_min,
            c->act_max);
#if DW_S8_FULL_MMR
        if (!full.fits) {
            dw_s8_3x3_pixels(c, output, batch, row0, row1, NULL, false);
            return true;
        }
#endif
        dw_s8_3x3_pixels(c, output, batch, row0, row1, &full, true);
    } else {
        dw_s8_3x3_pixels(c, output, batch, row0, row1, NULL, false);
    }
    return true;
}
#endif

#if TFLM_DW_S8_COMPACT
__attribute__((noinline)) static void dw_s8_channels_whole(const dw_s8_t *c, int8_t *output, int32_t batch,
    int32_t row0, int32_t row1, int in) {
    dw_s8_channels_in(c, output, batch, row0, row1, in, true);
}
#else
__attribute__((noinline)) static void dw_s8_channels_each(const dw_s8_t *c, int8_t *output, int32_t batch,
    int32_t row0, int32_t row1) {
    dw_s8_channels_in(c, output, batch, row0, row1, DW_S8_IN_EACH, true);
}

__attribute__((noinline)) static void dw_s8_channels_pairs(const dw_s8_t *c, int8_t *output, int32_t batch,
    int32_t row0, int32_t row1) {
    dw_s8_channels_in(c, output, batch, row0, row1, DW_S8_IN_PAIRS, true);
}

__attribute__((noinline)) static void dw_s8_channels_one(const dw_s8_t *c, int8_t *output, int32_t batch,
    int32_t row0, int32_t row1) {
    dw_s8_channels_in(c, output, batch, row0, row1, DW_S8_IN_ONE, true);
}

static void dw_s8_channels_whole(const dw_s8_t *c, int8_t *output, int32_t batch, int32_t row0, int32_t row1,
    int in) {
    if (in == DW_S8_IN_EACH) {
#if DW_S8_3X3_CHANNELS
        if (c->f_h == 3 && c->f_w == 3 && c->dil_h == 1 && c->dil_w == 1
            && dw_s8_channels_3x3(c, output, batch, row0, row1)) {
            return;
        }
#endif
        dw_s8_channels_each(c, output, batch, row0, row1);
    } else if (in == DW_S8_IN_PAIRS) {
        dw_s8_channels_pairs(c, output, batch, row0, row1);
    } else {
        dw_s8_channels_one(c, output, batch, row0, row1);
    }
}
#endif

// Windows of more than DW_S8_TAPS_MAX taps go channels innermost in blocks
// (micro_speech's 10x8 layer: a quarter fewer cycles on the M3 and M0+, a
// third on the M4), except on the ESP32's LX6, where its blocks took a
// quarter more instructions than the generic loop.
#define DW_S8_BLOCKS (TFLM_KERNEL_ARCH != TFLM_ARCH_XTENSA)

#if DW_S8_BLOCKS
// Any of the three `in`.
__attribute__((noinline)) static void dw_s8_channels_blocks(const dw_s8_t *c, int8_t *output, int32_t batch,
    int32_t row0, int32_t row1, int in) {
    dw_s8_channels_in(c, output, batch, row0, row1, in, false);
}
#endif

// Windows of more than DW_S8_TAPS_MAX taps where each group of four
// output channels reads one input channel (multipliers of 4, 8, ...: a
// conv's first layer on a one-channel input, as micro_speech's 10x8 layer):
// the window's rows walked in place, no list of taps, each input value
// loaded once for four weights. (On the LX6 such layers take the generic
// loop, as above.)
#ifndef TFLM_DW_S8_WALK
#define TFLM_DW_S8_WALK DW_S8_BLOCKS
#endif

#if TFLM_DW_S8_WALK
// Four output channels' sums over window rows [fy0, fy1) and columns
// [fx0, fx1) of one input channel, from x (the window's first tap inside
// the input) and w (the weights of that tap for the four channels).
static TFLM_ALWAYS_INLINE void dw_s8_walk4(const dw_s8_t *c, const int8_t *x, const int8_t *w, int32_t rows,
    int32_t cols, uint32_t *a) {
    const int32_t x_step = c->dil_w * c->in_d, y_step = c->dil_h * c->in_row;
    const int32_t w_step = c->out_d, w_row = c->f_w * c->out_d, off = c->input_offset;
    uint32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    for (; rows > 0; --rows, x += y_step, w += w_row) {
        const int8_t *xp = x, *wp = w;
        for (int32_t k = cols; k > 0; --k, xp += x_step, wp += w_step) {
            const int32_t v = *xp + off;
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
            // dw_s8_mac4's products, the weights widened before the value is
            // packed (through dw_s8_mac4 the order turned: micro_speech 0.1%
            // more cycles on the M4).
            const uint32_t wv = tflm_ld_u32(wp), w02 = tflm_sxtb16(wv), w13 = tflm_sxtb16_ror8(wv);
            const uint32_t vv = tflm_pack16(v, v);
            a0 = tflm_smlabb(vv, w02, a0);
            a1 = tflm_smlabb(vv, w13, a1);
            a2 = tflm_smlatt(vv, w02, a2);
            a3 = tflm_smlatt(vv, w13, a3);
#else
            a0 += (uint32_t)(v * wp[0]);
            a1 += (uint32_t)(v * wp[1]);
            a2 += (uint32_t)(v * wp[2]);
            a3 += (uint32_t)(v * wp[3]);
#endif
        }
    }
    a[0] = a0;
    a[1] = a1;
    a[2] = a2;
    a[3] = a3;
}

__attribute__((noinline)) static void dw_s8_channels_walk(const dw_s8_t *c, int8_t *output, int32_t batch,
    int32_t row0, int32_t row1) {
    const int32_t out_w = c->out_w, out_d = c->out_d, n = c->n;
    const tflm_out_s8_t *q = c->q;
    for (int32_t oy = row0; oy < row1; ++oy) {
        int32_t fy0, fy1;
        const int32_t y0 = conv_window(oy, c->stride_h, c->pad_h, c->dil_h, c->f_h, c->in_h, &fy0, &fy1);
        int8_t *out = output + ((batch * c->out_h + oy) * out_w) * out_d + c->c0;
        for (int32_t ox = 0; ox < out_w; ++ox, out += out_d) {
            int32_t fx0, fx1;
            const int32_t x0 = conv_window(ox, c->stride_w, c->pad_w, c->dil_w, c->f_w, c->in_w, &fx0, &fx1);
            const int32_t rows = fx0 < fx1 ? fy1 - fy0 : 0;
            // The first tap inside the input, for input channel 0 and output channel 0.
            const int8_t *x = c->in_b + (y0 + c->dil_h * fy0) * c->in_row + (x0 + c->dil_w * fx0) * c->in_d;
            const int8_t *w = c->filter + (fy0 * c->f_w + fx0) * out_d;
            for (int32_t j = 0; j < n; j += 4) {
                const int32_t oc = c->c0 + j;
                uint32_t a[4] = { (uint32_t)q[j].bias, (uint32_t)q[j + 1].bias, (uint32_t)q[j + 2].bias,
                                  (uint32_t)q[j + 3].bias };
                dw_s8_walk4(c, x + oc / c->mult, w + oc, rows, fx1 - fx0, a);
                out[j] = dw_s8_out(a[0], &q[j], c->zero_point, c->act_min, c->act_max);
                out[j + 1] = dw_s8_out(a[1], &q[j + 1], c->zero_point, c->act_min, c->act_max);
                out[j + 2] = dw_s8_out(a[2], &q[j + 2], c->zero_point, c->act_min, c->act_max);
                out[j + 3] = dw_s8_out(a[3], &q[j + 3], c->zero_point, c->act_min, c->act_max);
            }
        }
    }
}
#endif

// One input channel and windows of at most DW_S8_ONE_TAPS taps, on the
// Cortex-M3 and M4 (a first layer written as a depthwise one, as
// person_detect's 96x96x1 with multiplier 8): per output pixel the
// window's values, the offset added (zero for taps outside the input, which
// the reference skips), are packed in pairs of taps once for all the
// chunk's channels, and each channel's weights in the same pairs once per
// call, so one SMLAD takes two taps of a channel (two multiplies on the
// M3). The channels path loads each value once per four channels and takes
// one tap a product. Multiplier 2 and those from DW_S8_ONE_MULT: on 8x8
// outputs of a 3x3 window (tflm-host bench sweep's shapes, one input
// channel), against the channels path, on the M4 a third fewer cycles with
// multiplier 2, a sixth with 4 and (stride 2) a third with 8, but a
// thirteenth more with 1; on the M3 a fifth fewer with 2 and a twentieth
// with 8, but a twentieth more with 4 and a fifth more with 1. Not with
// TFLM_DW_S8_COMPACT (PYBV11, short of flash).
#define DW_S8_ONE_IN ((TFLM_KERNEL_ARCH == TFLM_ARCH_DSP || TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2) && !TFLM_DW_S8_COMPACT)
#define DW_S8_ONE_MULT (TFLM_KERNEL_ARCH == TFLM_ARCH_DSP ? 2 : 8)
#define DW_S8_ONE_PAIRS (5)
#define DW_S8_ONE_TAPS (2 * DW_S8_ONE_PAIRS)

#if DW_S8_ONE_IN
// Output channel j's sum over the window's pairs x0-x4 from its bias (the
// five in registers across the chunk's channels, w[j]'s five loads apart).
static TFLM_ALWAYS_INLINE uint32_t dw_s8_one_sum(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, uint32_t x4,
    const uint32_t *w, uint32_t acc) {
    acc = tflm_smlad(x0, w[0], acc);
    acc = tflm_smlad(x1, w[1], acc);
    acc = tflm_smlad(x2, w[2], acc);
    acc = tflm_smlad(x3, w[3], acc);
    return tflm_smlad(x4, w[4], acc);
}

__attribute__((noinline)) static void dw_s8_one_in(const dw_s8_t *c, int8_t *output, int32_t batch, int32_t row0,
    int32_t row1) {
    const int32_t f_h = c->f_h, f_w = c->f_w, taps = f_h * f_w, out_d = c->out_d, n = c->n;
    const int32_t in_row = c->in_row, off = c->input_offset;
    const int8_t *in = c->in_b;
    const tflm_out_s8_t *q = c->q;
    // Each tap's input from the window's first (taps past the window: 0,
    // a value inside it, against a zero weight).
    int32_t at[DW_S8_ONE_TAPS];
    for (int32_t t = 0; t < DW_S8_ONE_TAPS; ++t) {
        at[t] = t < taps ? (t / f_w) * c->dil_h * in_row + (t % f_w) * c->dil_w : 0;
    }
    // Channel j's weights of taps 2p (low halfword) and 2p + 1; whether
    // every output stage is one multiply and shift (tflm_out_s8_scale).
    uint32_t w[DW_S8_CHUNK][DW_S8_ONE_PAIRS];
    int32_t shift_bits = 0;
    for (int32_t j = 0; j < n; ++j) {
        shift_bits |= q[j].shift;
        const int8_t *f = c->filter + c->c0 + j;
        for (int32_t p = 0; p < DW_S8_ONE_PAIRS; ++p) {
            const int32_t t = 2 * p;
            w[j][p] = tflm_pack16(t < taps ? f[t * out_d] : 0, t + 1 < taps ? f[(t + 1) * out_d] : 0);
        }
    }
    const bool scale = shift_bits >= 0;
    const int32_t lo = c->act_min, hi = c->act_max;
    for (int32_t oy = row0; oy < row1; ++oy) {
        int32_t fy0, fy1;
        const int32_t y0 = conv_window(oy, c->stride_h, c->pad_h, c->dil_h, f_h, c->in_h, &fy0, &fy1);
        int8_t *out = output + ((batch * c->out_h + oy) * c->out_w) * out_d + c->c0;
        for (int32_t ox = 0; ox < c->out_w; ++ox, out += out_d) {
            int32_t fx0, fx1;
            const int32_t x0 = conv_window(ox, c->stride_w, c->pad_w, c->dil_w, f_w, c->in_w, &fx0, &fx1);
            uint32_t xv[DW_S8_ONE_PAIRS];
            if (fy1 - fy0 == f_h && fx1 - fx0 == f_w) {
                const int8_t *x = in + y0 * in_row + x0;
                xv[0] = tflm_pack16(x[at[0]] + off, x[at[1]] + off);
                xv[1] = tflm_pack16(x[at[2]] + off, x[at[3]] + off);
                xv[2] = tflm_pack16(x[at[4]] + off, x[at[5]] + off);
                xv[3] = tflm_pack16(x[at[6]] + off, x[at[7]] + off);
                xv[4] = tflm_pack16(x[at[8]] + off, x[at[9]] + off);
            } else {
                // At an edge: the taps outside the input (or a window with
                // none inside, fy0 == fy1 or fx0 == fx1) are zeros.
                int32_t v[DW_S8_ONE_TAPS] = { 0 };
                for (int32_t fy = fy0; fy < fy1; ++fy) {
                    for (int32_t fx = fx0; fx < fx1; ++fx) {
                        const int32_t t = fy * f_w + fx;
                        v[t] = in[(y0 + fy * c->dil_h) * in_row + x0 + fx * c->dil_w] + off;
                    }
                }
                for (int32_t p = 0; p < DW_S8_ONE_PAIRS; ++p) {
                    xv[p] = tflm_pack16(v[2 * p], v[2 * p + 1]);
                }
            }
            const uint32_t x0v = xv[0], x1v = xv[1], x2v = xv[2], x3v = xv[3], x4v = xv[4];
            if (scale) {
                for (int32_t j = 0; j < n; ++j) {
                    out[j] = dw_s8_out_fast(dw_s8_one_sum(x0v, x1v, x2v, x3v, x4v, w[j], (uint32_t)q[j].bias), &q[j],
                        lo, hi, false);
                }
                continue;
            }
            for (int32_t j = 0; j < n; ++j) {
                out[j] = dw_s8_out(dw_s8_one_sum(x0v, x1v, x2v, x3v, x4v, w[j], (uint32_t)q[j].bias), &q[j],
                    c->zero_point, lo, hi);
            }
        }
    }
}
#endif

enum { DW_S8_GENERIC, DW_S8_ROWS, DW_S8_CHANNELS };

// Outputs at most this wide take the channels path rather than the 3x3
// row path where both can: with multiplier 1, and with a larger one (the
// row path then reads each input once per output channel). Measured by
// tflm-host bench sweep (docs/speed.md) on the Cortex-M0+, M3 and M4: 8x8
// outputs of multiplier 1 take 13-20% more cycles on the channels path,
// 4x4 ones a quarter to three fifths fewer; with multiplier 8, 8x8 outputs
// a fifth to a quarter fewer (a wider one of person_detect's more). (6x6
// outputs of multiplier 1: 4% fewer on the M4, but kws_ref_model's 25x5
// ones 5% more there; 0-10% more on the M3, 7-12% on the M0+.) Where
// dw_s8_channels_3x3 takes the 3x3 windows of multiplier 1 (the M3 and M4),
// outputs up to 8 wide: against the row path, the sweep's 8x8x64 layer 20%
// fewer cycles on the M3, 26% on the M4, its 16x16x8 stride 2 one 10% and
// 24%; kws_ref_model 5% and 9%, person_detect 2.4% and 4.5%, vww_96_int8
// 2.2% and 3.9%. Up to 16 wide instead: the 16x16x8 layer (16x16 outputs)
// 3% more on the M3, 5% on the M4; person_detect and vww_96_int8 0.2%
// fewer on the M3, 0.5% on the M4.
#define DW_S8_NARROW (DW_S8_3X3_CHANNELS ? 8 : 4)
#define DW_S8_NARROW_MULT (8)

// The path a layer takes: the window-in-registers path for 3x3 windows
// without dilation, stride 1 or 2, at most one column of padding (what SAME
// gives them) and three input rows, unless the output is narrow; channels
// innermost for multipliers 1, 2 and multiples of 4 (a group of four
// output channels reads one, two or four input channels in a fixed
// pattern) and window rows of at most DW_S8_TAPS_MAX taps (windows of at
// most that many where DW_S8_BLOCKS is 0); else the generic loop.
static int dw_s8_path(const conv_data_t *d) {
    const int32_t mult = d->f_d;
    const bool channels = (mult <= 2 || mult % 4 == 0) && d->f_w <= DW_S8_TAPS_MAX
        && (DW_S8_BLOCKS || d->f_h * d->f_w <= DW_S8_TAPS_MAX);
    if (d->f_h == 3 && d->f_w == 3 && d->dil_h == 1 && d->dil_w == 1 && d->stride_w <= 2 && d->pad_w <= 1
        && d->in_h >= 3 && !(channels && d->out_w <= (mult > 1 ? DW_S8_NARROW_MULT : DW_S8_NARROW))) {
        return DW_S8_ROWS;
    }
    return channels ? DW_S8_CHANNELS : DW_S8_GENERIC;
}

bool tflm_depthwise_conv_2d_s8_in_order(const conv_data_t *d, const int8_t *input, const int8_t *output) {
    const int64_t below = (int64_t)((intptr_t)input - (intptr_t)output);
    if (dw_s8_path(d) != DW_S8_ROWS) {
        // One chunk: each row is finished before the next, each pixel
        // (all its channels) before the next (the pixel rule). Several, with
        // one output channel per input channel and the output a whole
        // number of pixels away: a chunk reads and writes only its own
        // channels' bytes, in the order row-by-row calls would, so the
        // other chunks' writes change nothing it reads.
        return d->out_d <= DW_S8_CHUNK || (d->f_d == 1 && below % d->in_d == 0);
    }
    // The 3x3 path goes channel by channel, each along its rows. With one
    // output channel per input channel and the output a whole number of
    // pixels below the input, channel c of output pixel p is written over
    // channel c of input pixel p - shift: the channels before c are done,
    // the ones after it untouched, and the pixel must lie before every
    // input pixel channel c's later outputs read. Those start (raster
    // order) at the next output's first column in this row's first input
    // row, or at the next row's first input row; the gap between output
    // pixel and the first of these can only grow along a row (stride >= 1,
    // padding <= 1), so each row's first and last outputs are the ones to
    // check.
    const int32_t ch = d->in_d, in_w = d->in_w, out_w = d->out_w;
    if (d->batches != 1 || d->f_d != 1 || d->out_d != ch || below < 0 || below % ch != 0) {
        return false;
    }
    const int64_t shift = below / ch, in_pixels = (int64_t)d->in_h * in_w;
    for (int32_t oy = 0; oy < d->out_h; ++oy) {
        // This output row's and the next one's first input pixel read.
        const int64_t row = dw_s8_first_row(d, oy) * in_w;
        const int64_t next_row = oy + 1 < d->out_h ? dw_s8_first_row(d, oy + 1) * in_w : in_pixels;
        const int64_t first = (int64_t)oy * out_w - shift, last = first + out_w - 1;
        if (first >= in_pixels) {
            return true;  // written past the input's end from here on
        }
        if (out_w > 1 && first >= 0 && first >= row + d->stride_w - d->pad_w) {
            return false;
        }
        if (last >= 0 && last >= next_row) {
            return false;
        }
    }
    return true;
}

void tflm_depthwise_conv_2d_s8_rows(const conv_data_t *d, const int8_t *input, const int8_t *filter,
    const int32_t *bias, int8_t *output, int32_t batch, int32_t row0, int32_t row1) {
    dw_s8_t c;
    c.in_h = d->in_h;
    c.in_w = d->in_w;
    c.in_d = d->in_d;
    c.f_h = d->f_h;
    c.f_w = d->f_w;
    c.mult = d->f_d;
    c.out_h = d->out_h;
    c.out_w = d->out_w;
    c.out_d = d->out_d;
    c.stride_h = d->stride_h;
    c.stride_w = d->stride_w;
    c.pad_h = d->pad_h;
    c.pad_w = d->pad_w;
    c.dil_h = d->dil_h;
    c.dil_w = d->dil_w;
    c.in_row = c.in_w * c.in_d;
    c.in_b = input + batch * c.in_h * c.in_row;
    c.filter = filter;
    c.bias = bias;
    c.input_offset = d->input_offset;
    c.zero_point = d->output_offset;
    c.act_min = d->act_min.q;
    c.act_max = d->act_max.q;
    const int32_t *mults = conv_multipliers(d);
    const int8_t *shifts = conv_shifts(d);
    const int path = dw_s8_path(d);
    tflm_out_s8_t q[DW_S8_CHUNK];
    c.q = q;
    for (c.c0 = 0; c.c0 < c.out_d; c.c0 += DW_S8_CHUNK) {
        c.n = c.out_d - c.c0 < DW_S8_CHUNK ? c.out_d - c.c0 : DW_S8_CHUNK;
        for (int32_t j = 0; j < c.n; ++j) {
            const int32_t oc = c.c0 + j, m = d->per_channel ? oc : 0;
            q[j].bias = bias ? bias[oc] : 0;
            tflm_out_s8_setup(&q[j], mults[m], shifts[m], c.zero_point);
        }
        if (path == DW_S8_ROWS) {
            dw_s8_3x3(&c, output, batch, row0, row1);
        } else if (path == DW_S8_CHANNELS) {
            const int in = c.mult == 1 ? DW_S8_IN_EACH : c.mult == 2 ? DW_S8_IN_PAIRS : DW_S8_IN_ONE;
#if DW_S8_ONE_IN
            if (c.in_d == 1 && (c.mult == 2 || c.mult >= DW_S8_ONE_MULT) && c.f_h * c.f_w <= DW_S8_ONE_TAPS) {
                dw_s8_one_in(&c, output, batch, row0, row1);
                continue;
            }
#endif
#if TFLM_DW_S8_WALK
            // (A multiple of 4: chunks of DW_S8_CHUNK channels are groups of four.)
            if (in == DW_S8_IN_ONE && c.f_h * c.f_w > DW_S8_TAPS_MAX) {
                dw_s8_channels_walk(&c, output, batch, row0, row1);
                continue;
            }
#endif
#if DW_S8_BLOCKS
            if (c.f_h * c.f_w > DW_S8_TAPS_MAX) {
                dw_s8_channels_blocks(&c, output, batch, row0, row1, in);
                continue;
            }
#endif
            dw_s8_channels_whole(&c, output, batch, row0, row1, in);
        } else {
            dw_s8_generic(&c, output, batch, row0, row1);
        }
    }
}

#endif // TFLM_KERNEL_DEPTHWISE_CONV_2D
