// FULLY_CONNECTED: float32, int8 (per-tensor or per-channel weights) and
// int16 activations with int8 weights, bit-exact with TFLM's reference.
#include "kernels/kernels.h"
#include "kernels/dot.h"
#include "kernels/fold.h"
#include "kernels/mm_s8.h"
#if TFLM_KERNEL_ARCH == TFLM_ARCH_V6M
// The output stage's wide form and multiplier 0 by the reference's steps
// here (out_s8.h): their cases cost the Cortex-M0's output loop a register.
#define TFLM_OUT_S8_WIDE (0)
#endif
#include "kernels/out_s8.h"
#include "engine/quant.h"
#include "engine/ops.h"
#include "engine/schema.h"

#if TFLM_KERNEL_FULLY_CONNECTED

enum { FC_FLOAT32, FC_INT8, FC_INT16 };

typedef struct {
    uint8_t kind;
    uint8_t per_channel;
    uint8_t has_bias;
    uint8_t folded;        // int8: starts[] below hold bias + input offset * weights' sum
    int32_t batches;
    int32_t output_depth;
    int32_t accum_depth;
    int32_t input_offset;  // -input zero point
    int32_t filter_offset; // -filter zero point
    int32_t output_offset; // output zero point
    int32_t multiplier;    // per-tensor requantization
    int32_t shift;
    int32_t act_min;
    int32_t act_max;
    float fact_min;
    float fact_max;
    // per channel: int32 multipliers[output_depth], then int8
    // shifts[output_depth]; folded: then int32 starts[output_depth] at a
    // multiple of 4
} fc_data_t;

static const int32_t *fc_multipliers(const fc_data_t *d) {
    return (const int32_t *)(d + 1);
}

static const int8_t *fc_shifts(const fc_data_t *d) {
    return (const int8_t *)(fc_multipliers(d) + d->output_depth);
}

// The bytes before the starting sums.
static uint32_t fc_filled_bytes(bool per_channel, int32_t units) {
    return (uint32_t)sizeof(fc_data_t) + (per_channel ? 5u * (uint32_t)units : 0u);
}

// Each unit's starting sum, the input offset folded in (a prepared model's,
// computed once on the host and read from flash): the loops then multiply
// the input as it is, one addition per value fewer.
static const int32_t *fc_starts(const fc_data_t *d) {
    return (const int32_t *)((const uint8_t *)d + tflm_align_up(fc_filled_bytes(d->per_channel, d->output_depth), 4));
}

// Whether a layer whose activation's range is all of int8 clamps with one
// SSAT (Armv7-M; on Armv6-M, which has none, the field and the second copy
// of the store loop cost hello_world_int8 0.6-1.1% of its cycles).
#define FC_S8_SAT (TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2 || TFLM_KERNEL_ARCH == TFLM_ARCH_DSP)

// Fields are read into locals before the loops: stores through `output`
// could alias the kernel data and force reloads.
static void tflm_fully_connected_float32(const fc_data_t *d, const float *input, const float *filter,
    const float *bias, float *output) {
    const int32_t batches = d->batches, depth = d->accum_depth, units = d->output_depth;
    const float act_min = d->fact_min, act_max = d->fact_max;
#define FC_F32_OUT(total, u) tflm_clampf((total) + (bias ? bias[u] : 0.0f), act_min, act_max)
    for (int32_t b = 0; b < batches; ++b, input += depth) {
        const float *w = filter;
        int32_t u = 0;
        // Two units at a time share the input's loads; each sum keeps its order.
        for (; u + 2 <= units; u += 2, w += 2 * depth) {
            float t0 = 0.0f, t1 = 0.0f;
            tflm_dot2_f32(&t0, &t1, w, w + depth, input, depth);
            *output++ = FC_F32_OUT(t0, u);
            *output++ = FC_F32_OUT(t1, u + 1);
        }
        for (; u < units; ++u, w += depth) {
            *output++ = FC_F32_OUT(tflm_dot_f32(0.0f, w, input, depth), u);
        }
    }
#undef FC_F32_OUT
}

// The int8 output stage's constants for one call (kernels/out_s8.h: where
// the shift allows, one 64-bit multiply-accumulate and a shift a value,
// the output zero point folded in; on the Cortex-M0 no library call).
typedef struct {
    tflm_out_s8_t q;       // per tensor; per channel, set for each unit
    const int32_t *mults;  // per channel, else NULL
    const int8_t *shifts;
    const int32_t *starts; // each unit's bias or folded starting sum; NULL: 0
    int32_t zp, lo, hi;
#if FC_S8_SAT
    bool sat;              // the activation's range is all of int8
#endif
} fc_out_t;

static TFLM_ALWAYS_INLINE uint32_t fc_start(const fc_out_t *o, int32_t u) {
    return o->starts ? (uint32_t)o->starts[u] : 0u;
}

// Units u .. u + n - 1 to int8 from their sums (starts included), any
// multipliers and shifts.
static void fc_store_any(const fc_out_t *o, const uint32_t *acc, int32_t n, int32_t u, int8_t *out) {
    const int32_t zp = o->zp, lo = o->lo, hi = o->hi;
    tflm_out_s8_t q = o->q;
    const int32_t *mults = o->mults;
    const int8_t *shifts = o->shifts;
    out += u;
    for (int32_t j = 0; j < n; ++j) {
        if (mults) {
            tflm_out_s8_setup(&q, mults[u + j], shifts[u + j], zp);
        }
        out[j] = tflm_out_s8((int32_t)acc[j], &q, zp, lo, hi);
    }
}

// The same, inline for a group of units where one multiplier and a shift
// of 1 to 24 serve all (the common case): the constants are read into
// locals first (stores through `out` could alias them and force reloads).
static TFLM_ALWAYS_INLINE void fc_store(const fc_out_t *o, const uint32_t *acc, int32_t n, int32_t u, int8_t *out) {
    if (o->mults != NULL || o->q.shift < 0) {
        fc_store_any(o, acc, n, u, out);
        return;
    }
    const int32_t mult = o->q.mult, k = o->q.k, shift = o->q.shift, lo = o->lo, hi = o->hi;
    out += u;
#if FC_S8_SAT
    if (o->sat) {
        for (int32_t j = 0; j < n; ++j) {
            out[j] = (int8_t)tflm_out_s8_sat(tflm_out_s8_scale((int32_t)acc[j], mult, k, shift));
        }
        return;
    }
#endif
    for (int32_t j = 0; j < n; ++j) {
        out[j] = (int8_t)tflm_clamp(tflm_out_s8_scale((int32_t)acc[j], mult, k, shift), lo, hi);
    }
}

// Whether the Thumb-2 loops below are in assembly (M profile, optimised
// builds, every register free: the conditions of mm_s8.h's; the host's
// tests build the same sums in C). TFLM_FC_S8_QUAD=0 takes the units in
// pairs instead, in C: 780 B less on the Cortex-M4, ad01_int8 43% slower.
#ifndef TFLM_FC_S8_QUAD
#define TFLM_FC_S8_QUAD (1)
#endif
#define FC_S8_QUAD (TFLM_FC_S8_QUAD && (TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2 || TFLM_KERNEL_ARCH == TFLM_ARCH_DSP))
#define FC_S8_ASM (FC_S8_QUAD && TFLM_MM_S8_LANES_ASM && TFLM_KERNEL_O2)
// Whether a stage's slices (fc_run_slice) take four units at a time too, as
// the whole layer does: 656 B more on the Cortex-M4, micro_speech_quantized
// in bands 2% faster there. (PYBV11, short of flash, turns it off.)
#ifndef TFLM_FC_S8_SLICE_QUADS
#define TFLM_FC_S8_SLICE_QUADS (1)
#endif

#if FC_S8_QUAD
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
// One unit's word of four weights (in wv) against the four values widened
// with their offset (x02: lanes 0/2, x13: lanes 1/3): two SMLAD.
#define FC_DSP_UNIT(a) \
    "sxtb16 %[t], %[wv]\n\t" \
    "smlad %[" #a "], %[x02], %[t], %[" #a "]\n\t" \
    "sxtb16 %[wv], %[wv], ror #8\n\t" \
    "smlad %[" #a "], %[x13], %[wv], %[" #a "]\n\t"
// The loop's end (`end`) against x (t: scratch): in a register, or in
// memory for position-independent code, which keeps a register for itself.
#ifdef __PIC__
#define FC_DSP_SUB_END "ldr %[t], %[end]\n\t" "sub %[t], %[t], %[x]\n\t"
#define FC_DSP_CMP_END "ldr %[t], %[end]\n\t" "cmp %[x], %[t]\n\t"
#define FC_DSP_END [end] "m"(end)
#else
#define FC_DSP_SUB_END "sub %[t], %[end], %[x]\n\t"
#define FC_DSP_CMP_END "cmp %[x], %[end]\n\t"
#define FC_DSP_END [end] "r"(end)
#endif
// Four values of x, widened with their offset, against the four units'
// words (units 1, 0, 3, 2: each load behind the one before where it can).
#define FC_DSP_STEP \
    "ldr %[x13], [%[x]], #4\n\t" \
    "ldr %[wv], [%[w], %[s]]\n\t" \
    "sxtab16 %[x02], %[off], %[x13]\n\t" \
    "sxtab16 %[x13], %[off], %[x13], ror #8\n\t" \
    FC_DSP_UNIT(a1) \
    "ldr %[wv], [%[w]], #4\n\t" \
    FC_DSP_UNIT(a0) \
    "ldr %[wv], [%[q], %[s]]\n\t" \
    FC_DSP_UNIT(a3) \
    "ldr %[wv], [%[q]], #4\n\t" \
    FC_DSP_UNIT(a2)
#else
// Value k of four against the four units (Cortex-M3): the loads two by two,
// the second behind the first (one cycle), then the multiply-accumulates.
// Value 0 comes last with the pointers' increments (post-indexed loads).
#define FC_T2_VALUE(k, xinc, winc) \
    "ldrsb %[xv], [%[x]" xinc "\n\t" \
    "ldrsb %[wv], [%[w0]" winc "\n\t" \
    "ldrsb %[t], [%[w1]" winc "\n\t" \
    "add %[xv], %[off]\n\t" \
    "mla %[a0], %[wv], %[xv], %[a0]\n\t" \
    "mla %[a1], %[t], %[xv], %[a1]\n\t" \
    "ldrsb %[wv], [%[w2]" winc "\n\t" \
    "ldrsb %[t], [%[w3]" winc "\n\t" \
    "mla %[a2], %[wv], %[xv], %[a2]\n\t" \
    "mla %[a3], %[t], %[xv], %[a3]\n\t"
// Four values, the pointers moved past them.
#define FC_T2_STEP \
    FC_T2_VALUE(1, ", #1]", ", #1]") \
    FC_T2_VALUE(2, ", #2]", ", #2]") \
    FC_T2_VALUE(3, ", #3]", ", #3]") \
    FC_T2_VALUE(0, "], #4", "], #4")
#endif

// acc[j] += sum of w_j[i] * (x[i] + x_offset) over n values, w_j at
// w + j * stride, for four units (the sums start in registers from acc[]:
// a loop adding the starts after cost the small layers' units more than
// their products): each value of x loaded once for four
// products. With DSP four values a step, widened (and offset) once for the
// four units, each unit's word loaded through one pointer and the stride.
static TFLM_ALWAYS_INLINE void fc_dot4(const int8_t *x, const int8_t *w, int32_t stride, int32_t n, int32_t x_offset,
    uint32_t *acc) {
    uint32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
    const int8_t *q = w + 2 * stride;
    // x + x_offset must fit a halfword (it always does for a valid zero point).
    if (n >= 4 && x_offset >= -32640 && x_offset <= 32639) {
        const int8_t *end = x + (n & ~3);
        const uint32_t off2 = ((uint32_t)x_offset & 0xffffu) * 0x00010001u;
#if FC_S8_ASM
        // GCC's own code for the C below keeps the pointers on the stack
        // (a load each a step): here the fourteen registers hold it all.
        // Position-independent code (tflm.mpy) keeps one for the GOT's
        // address: `end` is then read from memory where it is compared (a
        // load per 32 products).
        uint32_t x02, x13, wv, t;
        // An odd step first, then two a turn (one branch for 32 products).
        // The loop starts on a word: its first instruction takes 32 bits,
        // and across a word boundary the branch's refill costs one cycle
        // more (Cortex-M3/M4 TRM, 3.3.1).
        __asm__ volatile(
            FC_DSP_SUB_END
            "tst %[t], #4\n\t"
            "beq 2f\n\t"
            FC_DSP_STEP
            "2:\n\t"
            FC_DSP_CMP_END
            "beq 3f\n\t"
            ".p2align 2\n"
            "1:\n\t"
            FC_DSP_STEP FC_DSP_STEP
            FC_DSP_CMP_END
            "bne 1b\n\t"
            "3:"
            : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x), [w] "+r"(w), [q] "+r"(q),
              [x02] "=&r"(x02), [x13] "=&r"(x13), [wv] "=&r"(wv), [t] "=&r"(t)
            : FC_DSP_END, [s] "r"(stride), [off] "r"(off2)
            : "memory", "cc");
#else
        for (; x != end; x += 4, w += 4, q += 4) {
            const uint32_t xv = tflm_ld_u32(x);
            const uint32_t x02 = tflm_sxtab16(off2, xv), x13 = tflm_sxtab16_ror8(off2, xv);
            a0 = tflm_dot_s8_step4(x02, x13, w, a0);
            a1 = tflm_dot_s8_step4(x02, x13, w + stride, a1);
            a2 = tflm_dot_s8_step4(x02, x13, q, a2);
            a3 = tflm_dot_s8_step4(x02, x13, q + stride, a3);
        }
#endif
        n &= 3;
    }
    const int8_t *w0 = w, *w1 = w + stride, *w2 = q, *w3 = q + stride;
#else
    const int8_t *w0 = w, *w1 = w0 + stride, *w2 = w1 + stride, *w3 = w2 + stride;
#if FC_S8_ASM
    if (n >= 4) {
        const int8_t *end = x + (n & ~3);
        int32_t xv, wv, t;
        // An odd step first, then two a turn; the loop starts on a word, as
        // the DSP one.
        __asm__ volatile(
            "sub %[t], %[end], %[x]\n\t"
            "tst %[t], #4\n\t"
            "beq 2f\n\t"
            FC_T2_STEP
            "2:\n\t"
            "cmp %[x], %[end]\n\t"
            "beq 3f\n\t"
            ".p2align 2\n"
            "1:\n\t"
            FC_T2_STEP FC_T2_STEP
            "cmp %[x], %[end]\n\t"
            "bne 1b\n\t"
            "3:"
            : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x), [w0] "+r"(w0),
              [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3), [xv] "=&r"(xv), [wv] "=&r"(wv), [t] "=&r"(t)
            : [end] "r"(end), [off] "r"(x_offset)
            : "memory", "cc");
        n &= 3;
    }
#endif
#endif
    for (int32_t i = 0; i < n; ++i) {
        const int32_t xi = x[i] + x_offset;
        a0 += (uint32_t)(w0[i] * xi);
        a1 += (uint32_t)(w1[i] * xi);
        a2 += (uint32_t)(w2[i] * xi);
        a3 += (uint32_t)(w3[i] * xi);
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}
#endif // FC_S8_QUAD

#if TFLM_KERNEL_ARCH == TFLM_ARCH_V6M && TFLM_MM_S8_V6M_ASM
// One row of x, its offset added to each value, against units 0-4 (the
// Cortex-M0): a[f] = from[f] + sum of w_f[i] * (x[i] + x_offset), w_f at
// w + f * stride, n > 0. tflm_mm_s8_1x6's loop with the offset in r12 and
// five sums (r8-r11, lr): 27 cycles a value, 5.4 a product (pairs: 7).
static TFLM_ALWAYS_INLINE void fc_1x5_off(const int8_t *x, const int8_t *w, int32_t stride, int32_t n,
    int32_t x_offset, const int32_t *from, uint32_t *a) {
    const int8_t *px = x + n, *p0 = w + n, *p2 = p0 + 2 * stride, *p4 = p2 + 2 * stride;
    int32_t k = -n;
    uint32_t kc = (uint32_t)(uintptr_t)from, xv = (uint32_t)(uintptr_t)a, wv = (uint32_t)x_offset;
    __asm__ volatile(
        ".syntax unified\n\t"
        "push {%[xv]}\n\t"
        "mov r12, %[wv]\n\t"
        "ldr %[wv], [%[kc], #0]\n\t"
        "mov r8, %[wv]\n\t"
        "ldr %[wv], [%[kc], #4]\n\t"
        "mov r9, %[wv]\n\t"
        "ldr %[wv], [%[kc], #8]\n\t"
        "mov r10, %[wv]\n\t"
        "ldr %[wv], [%[kc], #12]\n\t"
        "mov r11, %[wv]\n\t"
        "ldr %[wv], [%[kc], #16]\n\t"
        "mov lr, %[wv]\n\t"
        "subs %[kc], %[p2], %[p0]\n\t"
        "asrs %[kc], %[kc], #1\n\t"
        "adds %[kc], %[kc], %[k]\n\t"
        "1:\n\t"
        "ldrsb %[xv], [%[px], %[k]]\n\t"
        "add %[xv], r12\n\t"
        "ldrsb %[wv], [%[p0], %[k]]\n\t"
        "muls %[wv], %[xv]\n\t"
        "add r8, %[wv]\n\t"
        "ldrsb %[wv], [%[p0], %[kc]]\n\t"
        "muls %[wv], %[xv]\n\t"
        "add r9, %[wv]\n\t"
        "ldrsb %[wv], [%[p2], %[k]]\n\t"
        "muls %[wv], %[xv]\n\t"
        "add r10, %[wv]\n\t"
        "ldrsb %[wv], [%[p2], %[kc]]\n\t"
        "muls %[wv], %[xv]\n\t"
        "add r11, %[wv]\n\t"
        "ldrsb %[wv], [%[p4], %[k]]\n\t"
        "muls %[wv], %[xv]\n\t"
        "add lr, %[wv]\n\t"
        "adds %[kc], #1\n\t"
        "adds %[k], #1\n\t"
        "bne 1b\n\t"
        "pop {%[kc]}\n\t"
        "mov %[wv], r8\n\t"
        "str %[wv], [%[kc], #0]\n\t"
        "mov %[wv], r9\n\t"
        "str %[wv], [%[kc], #4]\n\t"
        "mov %[wv], r10\n\t"
        "str %[wv], [%[kc], #8]\n\t"
        "mov %[wv], r11\n\t"
        "str %[wv], [%[kc], #12]\n\t"
        "mov %[wv], lr\n\t"
        "str %[wv], [%[kc], #16]"
        : [k] "+l"(k), [kc] "+l"(kc), [xv] "+l"(xv), [wv] "+l"(wv)
        : [px] "l"(px), [p0] "l"(p0), [p2] "l"(p2), [p4] "l"(p4)
        : "r8", "r9", "r10", "r11", "r12", "lr", "memory", "cc");
}

// The same against units 0-3: 23 cycles a value.
static TFLM_ALWAYS_INLINE void fc_1x4_off(const int8_t *x, const int8_t *w, int32_t stride, int32_t n,
    int32_t x_offset, const int32_t *from, uint32_t *a) {
    const int8_t *px = x + n, *p0 = w + n, *p2 = p0 + 2 * stride;
    int32_t k = -n;
    uint32_t kc = (uint32_t)(uintptr_t)from, xv = (uint32_t)(uintptr_t)a, wv = (uint32_t)x_offset;
    __asm__ volatile(
        ".syntax unified\n\t"
        "push {%[xv]}\n\t"
        "mov r12, %[wv]\n\t"
        "ldr %[wv], [%[kc], #0]\n\t"
        "mov r8, %[wv]\n\t"
        "ldr %[wv], [%[kc], #4]\n\t"
        "mov r9, %[wv]\n\t"
        "ldr %[wv], [%[kc], #8]\n\t"
        "mov r10, %[wv]\n\t"
        "ldr %[wv], [%[kc], #12]\n\t"
        "mov r11, %[wv]\n\t"
        "subs %[kc], %[p2], %[p0]\n\t"
        "asrs %[kc], %[kc], #1\n\t"
        "adds %[kc], %[kc], %[k]\n\t"
        "1:\n\t"
        "ldrsb %[xv], [%[px], %[k]]\n\t"
        "add %[xv], r12\n\t"
        "ldrsb %[wv], [%[p0], %[k]]\n\t"
        "muls %[wv], %[xv]\n\t"
        "add r8, %[wv]\n\t"
        "ldrsb %[wv], [%[p0], %[kc]]\n\t"
        "muls %[wv], %[xv]\n\t"
        "add r9, %[wv]\n\t"
        "ldrsb %[wv], [%[p2], %[k]]\n\t"
        "muls %[wv], %[xv]\n\t"
        "add r10, %[wv]\n\t"
        "ldrsb %[wv], [%[p2], %[kc]]\n\t"
        "muls %[wv], %[xv]\n\t"
        "add r11, %[wv]\n\t"
        "adds %[kc], #1\n\t"
        "adds %[k], #1\n\t"
        "bne 1b\n\t"
        "pop {%[kc]}\n\t"
        "mov %[wv], r8\n\t"
        "str %[wv], [%[kc], #0]\n\t"
        "mov %[wv], r9\n\t"
        "str %[wv], [%[kc], #4]\n\t"
        "mov %[wv], r10\n\t"
        "str %[wv], [%[kc], #8]\n\t"
        "mov %[wv], r11\n\t"
        "str %[wv], [%[kc], #12]"
        : [k] "+l"(k), [kc] "+l"(kc), [xv] "+l"(xv), [wv] "+l"(wv)
        : [px] "l"(px), [p0] "l"(p0), [p2] "l"(p2)
        : "r8", "r9", "r10", "r11", "r12", "memory", "cc");
}

// And against units 0-1: 14 cycles a value (GCC's own loop for the pair,
// in the kernel's register pressure, keeps a sum on the stack).
static TFLM_ALWAYS_INLINE void fc_1x2_off(const int8_t *x, const int8_t *w, int32_t stride, int32_t n,
    int32_t x_offset, const int32_t *from, uint32_t *a) {
    const int8_t *px = x + n, *p0 = w + n, *p1 = p0 + stride;
    int32_t k = -n;
    uint32_t kc = (uint32_t)(uintptr_t)from, xv = (uint32_t)(uintptr_t)a, wv = (uint32_t)x_offset;
    __asm__ volatile(
        ".syntax unified\n\t"
        "push {%[xv]}\n\t"
        "mov r12, %[wv]\n\t"
        "ldr %[wv], [%[kc], #0]\n\t"
        "mov r8, %[wv]\n\t"
        "ldr %[wv], [%[kc], #4]\n\t"
        "mov r9, %[wv]\n\t"
        "1:\n\t"
        "ldrsb %[xv], [%[px], %[k]]\n\t"
        "add %[xv], r12\n\t"
        "ldrsb %[wv], [%[p0], %[k]]\n\t"
        "muls %[wv], %[xv]\n\t"
        "add r8, %[wv]\n\t"
        "ldrsb %[wv], [%[p1], %[k]]\n\t"
        "muls %[wv], %[xv]\n\t"
        "add r9, %[wv]\n\t"
        "adds %[k], #1\n\t"
        "bne 1b\n\t"
        "pop {%[kc]}\n\t"
        "mov %[wv], r8\n\t"
        "str %[wv], [%[kc], #0]\n\t"
        "mov %[wv], r9\n\t"
        "str %[wv], [%[kc], #4]"
        : [k] "+l"(k), [kc] "+l"(kc), [xv] "+l"(xv), [wv] "+l"(wv)
        : [px] "l"(px), [p0] "l"(p0), [p1] "l"(p1)
        : "r8", "r9", "r12", "memory", "cc");
}
#endif

// One row of x against units 0 .. units - 1 in the groups the core's loops
// take (each value of x loaded once for the group), the outputs stored;
// returns the first unit left (at most one).
static TFLM_ALWAYS_INLINE int32_t fc_groups(fc_out_t *o, const int8_t *x, const int8_t *w, int32_t depth,
    int32_t units, int32_t x_offset, int8_t *out) {
    int32_t u = 0;
#if FC_S8_QUAD
    for (; u + 4 <= units; u += 4, w += 4 * depth) {
        uint32_t a[4] = {fc_start(o, u), fc_start(o, u + 1), fc_start(o, u + 2), fc_start(o, u + 3)};
        fc_dot4(x, w, depth, depth, x_offset, a);
        fc_store(o, a, 4, u, out);
    }
#elif TFLM_KERNEL_ARCH == TFLM_ARCH_V6M && TFLM_MM_S8_V6M_ASM
    // Sums start at the units' starts (or these zeros). Six units at a time
    // without an input offset, five with one, then four, then two.
    static const int32_t zeros[6];
    if (depth > 0) {
        uint32_t a[6];
        if (x_offset == 0) {
            for (; u + 6 <= units; u += 6, w += 6 * depth) {
                tflm_mm_s8_1x6(x, w, depth, depth, o->starts ? o->starts + u : zeros, 4, a);
                fc_store(o, a, 6, u, out);
            }
        } else {
            for (; u + 5 <= units; u += 5, w += 5 * depth) {
                fc_1x5_off(x, w, depth, depth, x_offset, o->starts ? o->starts + u : zeros, a);
                fc_store(o, a, 5, u, out);
            }
        }
        if (u + 4 <= units) {
            fc_1x4_off(x, w, depth, depth, x_offset, o->starts ? o->starts + u : zeros, a);
            fc_store(o, a, 4, u, out);
            u += 4;
            w += 4 * depth;
        }
        for (; u + 2 <= units; u += 2, w += 2 * depth) {
            fc_1x2_off(x, w, depth, depth, x_offset, o->starts ? o->starts + u : zeros, a);
            fc_store(o, a, 2, u, out);
        }
    }
#endif
    for (; u + 2 <= units; u += 2, w += 2 * depth) {
        uint32_t a[2] = {fc_start(o, u), fc_start(o, u + 1)};
#if !(TFLM_KERNEL_ARCH == TFLM_ARCH_V6M && TFLM_MM_S8_V6M_ASM)
        // A literal 0 (a prepared model's, the offset folded in) lets the
        // inlined loop drop the addition.
        if (x_offset == 0) {
            tflm_dot2_s8(w, w + depth, x, depth, 0, &a[0], &a[1]);
        } else
#endif
        {
            tflm_dot2_s8(w, w + depth, x, depth, x_offset, &a[0], &a[1]);
        }
        fc_store(o, a, 2, u, out);
    }
    return u;
}

// Whether units of fewer than four values take fc_short (PYBV11, short of
// flash, turns it off: they take the groups' loops).
#ifndef TFLM_FC_S8_SHORT
#define TFLM_FC_S8_SHORT (1)
#endif

// One row of x against all units when a unit has fewer than four values
// (an input layer of one to three features: hello_world_int8's 1->16):
// each sum straight from its start, eight outputs a store, a loop for each
// depth (`depth` a constant in each). The groups' loops above set up more
// per group than such units multiply (on the Cortex-M4 hello_world_int8's
// 1->16 layer took 930 cycles through them, for 16 products).
static TFLM_ALWAYS_INLINE void fc_short_depth(const fc_out_t *o, const int8_t *x, const int8_t *w, int32_t depth,
    int32_t units, int32_t x_offset, int8_t *out) {
    const int32_t x0 = x[0] + x_offset, x1 = depth > 1 ? x[1] + x_offset : 0, x2 = depth > 2 ? x[2] + x_offset : 0;
    for (int32_t u = 0; u < units; u += 8) {
        const int32_t n = units - u < 8 ? units - u : 8;
        uint32_t acc[8];
        for (int32_t j = 0; j < n; ++j, w += depth) {
            uint32_t a = fc_start(o, u + j) + (uint32_t)(w[0] * x0);
            if (depth > 1) {
                a += (uint32_t)(w[1] * x1);
            }
            if (depth > 2) {
                a += (uint32_t)(w[2] * x2);
            }
            acc[j] = a;
        }
        fc_store(o, acc, n, u, out);
    }
}

static void fc_short(const fc_out_t *o, const int8_t *x, const int8_t *w, int32_t depth, int32_t units,
    int32_t x_offset, int8_t *out) {
    if (depth == 1) {
        fc_short_depth(o, x, w, 1, units, x_offset, out);
    } else if (depth == 2) {
        fc_short_depth(o, x, w, 2, units, x_offset, out);
    } else {
        fc_short_depth(o, x, w, 3, units, x_offset, out);
    }
}

// (Inline: a call here cost the tiny models' one-unit layers about 2% of their cycles on the M4.)
static TFLM_ALWAYS_INLINE void fc_out_init(fc_out_t *o, const fc_data_t *d, const int32_t *bias) {
    tflm_out_s8_setup(&o->q, d->multiplier, d->shift, d->output_offset);
    o->mults = d->per_channel ? fc_multipliers(d) : NULL;
    o->shifts = d->per_channel ? fc_shifts(d) : NULL;
    o->starts = d->folded ? fc_starts(d) : bias;
    o->zp = d->output_offset;
    o->lo = d->act_min;
    o->hi = d->act_max;
#if FC_S8_SAT
    o->sat = d->act_min == -128 && d->act_max == 127;
#endif
}

static void tflm_fully_connected_int8(const fc_data_t *d, const int8_t *input, const int8_t *filter,
    const int32_t *bias, int8_t *output) {
    const int32_t batches = d->batches, depth = d->accum_depth, units = d->output_depth;
    const int32_t filter_offset = d->filter_offset;
    // Folded: the input offset is in each unit's start, the loops add none.
    const int32_t x_offset = d->folded ? 0 : d->input_offset;
    fc_out_t o;
    fc_out_init(&o, d, bias);
    for (int32_t b = 0; b < batches; ++b, input += depth, output += units) {
        // Sums wrap on overflow as the reference's do on its targets.
        if (TFLM_FC_S8_SHORT && filter_offset == 0 && depth > 0 && depth < 4) {
            fc_short(&o, input, filter, depth, units, x_offset, output);
            continue;
        }
        int32_t u = filter_offset == 0 ? fc_groups(&o, input, filter, depth, units, x_offset, output) : 0;
        for (const int8_t *w = filter + u * depth; u < units; ++u, w += depth) {
            uint32_t acc = fc_start(&o, u) + (filter_offset == 0 ? tflm_dot_s8_row(w, input, depth, x_offset)
                : tflm_dot_s8_off(w, input, depth, filter_offset, x_offset));
            fc_store(&o, &acc, 1, u, output);
        }
    }
}

static void tflm_fully_connected_int16(const fc_data_t *d, const int16_t *input, const int8_t *filter,
    const void *bias, int16_t *output) {
    const int32_t batches = d->batches, depth = d->accum_depth, units = d->output_depth;
    const int32_t input_offset = d->input_offset, filter_offset = d->filter_offset;
    const int32_t output_offset = d->output_offset, act_min = d->act_min, act_max = d->act_max;
    const int32_t *mults = d->per_channel ? fc_multipliers(d) : &d->multiplier;
    const int8_t *shifts = d->per_channel ? fc_shifts(d) : NULL;
    const int32_t q_step = d->per_channel ? 1 : 0;
    const int32_t tensor_shift = d->shift;
    for (int32_t b = 0; b < batches; ++b, input += depth) {
        const int8_t *w = filter;
        for (int32_t u = 0; u < units; ++u, w += depth) {
            uint64_t acc = 0;
            if (filter_offset == 0 && input_offset == 0) {
                acc = tflm_dot64_s16_s8(w, input, depth);
            } else {
                for (int32_t k = 0; k < depth; ++k) {
                    acc += (uint64_t)(int64_t)((int32_t)(w[k] + filter_offset) * (input[k] + input_offset));
                }
            }
            if (bias) {
                acc += (uint64_t)tflm_ld_i64(bias, (uint32_t)u);
            }
            int32_t shift = q_step ? shifts[u] : tensor_shift;
            int32_t out = tflm_wrap_add(tflm_mul_by_quantized_mul64((int64_t)acc, mults[u * q_step], shift), output_offset);
            *output++ = (int16_t)tflm_clamp(out, act_min, act_max);
        }
    }
}

tflm_status_t tflm_fully_connected_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 2, 3, 1);
    if (st) {
        return st;
    }
    tflm_tinfo_t in, w, bias, out;
    if ((st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_input(p, 1, &w))
        || (st = tflm_prep_input(p, 2, &bias)) || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (in.index < 0 || w.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input or weights missing");
    }
    uint8_t kind;
    uint8_t bias_type;
    if (in.type == TFLM_FLOAT32 && w.type == TFLM_FLOAT32 && out.type == TFLM_FLOAT32) {
        kind = FC_FLOAT32;
        bias_type = TFLM_FLOAT32;
    } else if (in.type == TFLM_INT8 && w.type == TFLM_INT8 && out.type == TFLM_INT8) {
        kind = FC_INT8;
        bias_type = TFLM_INT32;
    } else if (in.type == TFLM_INT16 && w.type == TFLM_INT8 && out.type == TFLM_INT16) {
        kind = FC_INT16;
        bias_type = TFLM_INT64;
    } else {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "%s input with %s weights and %s output is not supported",
            tflm_type_name(in.type), tflm_type_name(w.type), tflm_type_name(out.type));
    }
    if (bias.index >= 0 && bias.type != bias_type) {
        return tflm_prep_unsupported_type(p, "bias", bias.type);
    }
    if (out.ndims == 0 || w.ndims < 2) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "weights need 2 dimensions and the output at least 1");
    }
    // Shapes as TFLM reads them; checked here so eval never reads out of bounds.
    int32_t units = out.dims[out.ndims - 1];
    int32_t depth = w.dims[w.ndims - 1];
    int32_t batches = units ? (int32_t)(out.elements / (uint32_t)units) : 0;
    if (w.dims[w.ndims - 2] != units || (uint64_t)units * (uint64_t)depth > w.elements
        || (uint64_t)batches * (uint64_t)depth > in.elements
        || (bias.index >= 0 && bias.elements < (uint32_t)units)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "shapes do not match: input %u elements, weights %dx%d, output %u elements",
            (unsigned)in.elements, (int)units, (int)depth, (unsigned)out.elements);
    }
    bool per_channel = kind != FC_FLOAT32 && w.n_scales > 1;
    if (per_channel && w.n_scales != (uint32_t)units) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%u weight scales for %d output channels", (unsigned)w.n_scales, (int)units);
    }
    // Symmetric constant weights (TFLM's int8 scheme) in data the model
    // keeps: the input offset goes into each unit's starting sum.
    bool folded = kind == FC_INT8 && w.zero_point == 0 && w.data != NULL && (bias.index < 0 || bias.data != NULL)
        && tflm_prep_data_in_model(p);
    uint32_t bytes = fc_filled_bytes(per_channel, units);
    fc_data_t *d = folded ? tflm_prep_alloc_streamed(p, bytes, (uint32_t)units) : tflm_prep_alloc(p, bytes);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    uint8_t activation = tflm_prep_opt_u8(p, TFLM_OPT_FULLY_CONNECTED_FUSED_ACTIVATION_FUNCTION, TFLM_ACT_NONE);
    d->kind = kind;
    d->per_channel = per_channel;
    d->has_bias = bias.index >= 0;
    d->batches = batches;
    d->output_depth = units;
    d->accum_depth = depth;
    if (kind == FC_FLOAT32) {
        tflm_activation_range_float(activation, &d->fact_min, &d->fact_max);
        return TFLM_OK;
    }
    d->input_offset = -in.zero_point;
    d->filter_offset = -w.zero_point;
    d->output_offset = out.zero_point;
    if (folded) {
        d->folded = 1;
        tflm_fold_starts(p, 0, (const int8_t *)w.data, units, depth, bias.index >= 0 ? bias.data : NULL,
            d->input_offset);
    }
    // The 64-bit rescaling of int16 handles shifts up to 7, as TFLM's.
    int32_t max_shift = kind == FC_INT8 ? 31 : 7;
    if (per_channel) {
        int32_t *mults = (int32_t *)(d + 1);
        if ((st = tflm_prep_channel_multipliers(p, &in, &w, &out, (uint32_t)units, max_shift, mults,
                 (int8_t *)(mults + units)))) {
            return st;
        }
    } else {
        double real = (double)in.scale * (double)w.scale / (double)out.scale;
        if ((st = tflm_prep_multiplier(p, real, max_shift, &d->multiplier, &d->shift))) {
            return st;
        }
    }
    int32_t qmin = kind == FC_INT8 ? -128 : -32768;
    int32_t qmax = kind == FC_INT8 ? 127 : 32767;
    return tflm_prep_activation_range(p, activation, out.scale, out.zero_point, qmin, qmax, &d->act_min,
        &d->act_max);
}

#if TFLM_PATCH
// The int8 layer of one batch as a stage's last node (kernel.h's reduce):
// its input in slices, in order, each unit's sum kept between them. The
// sums wrap as the whole layer's do, so any slicing gives its output bit
// for bit.
static bool fc_reduce(const void *data, uint32_t *depth, uint32_t *acc_bytes) {
    const fc_data_t *d = data;
    if (d->kind != FC_INT8 || d->batches != 1) {
        return false;
    }
    *depth = (uint32_t)d->accum_depth;
    *acc_bytes = 4u * (uint32_t)d->output_depth;
    return true;
}

static tflm_status_t fc_run_slice(tflm_eval_t *e, void *acc_bytes, uint32_t k0, uint32_t k1, bool last) {
    const fc_data_t *d = e->data;
    uint32_t *acc = acc_bytes;
    fc_out_t o;
    fc_out_init(&o, d, d->has_bias ? e->in[2] : NULL);
    const int32_t depth = d->accum_depth, units = d->output_depth, n = (int32_t)(k1 - k0);
    const int32_t filter_offset = d->filter_offset, x_offset = d->folded ? 0 : d->input_offset;
    const int8_t *x = e->in[0], *w = (const int8_t *)e->in[1] + k0;
    int32_t u = 0;
#if TFLM_FC_S8_SLICE_QUADS && (FC_S8_QUAD || (TFLM_KERNEL_ARCH == TFLM_ARCH_V6M && TFLM_MM_S8_V6M_ASM))
    // Four units at a time, each value of the slice loaded once for them.
    for (; filter_offset == 0 && n > 0 && u + 4 <= units; u += 4, w += 4 * depth) {
#if FC_S8_QUAD
        uint32_t a[4];
        for (int32_t j = 0; j < 4; ++j) {
            a[j] = k0 == 0 ? fc_start(&o, u + j) : acc[u + j];
        }
        fc_dot4(x, w, depth, n, x_offset, a);
        for (int32_t j = 0; j < 4; ++j) {
            acc[u + j] = a[j];
        }
#else
        // (From the sums into the sums: the loop reads them all first.)
        static const int32_t zeros[4];
        fc_1x4_off(x, w, depth, n, x_offset, k0 > 0 ? (const int32_t *)acc + u : o.starts ? o.starts + u : zeros,
            acc + u);
#endif
    }
#endif
    for (; u < units; ++u, w += depth) {
        uint32_t a = k0 == 0 ? fc_start(&o, u) : acc[u];
        if (filter_offset == 0) {
            a += tflm_dot_s8_row(w, x, n, x_offset);
        } else {
            // (Weights with a zero point, which TFLM's converter does not
            // emit: a plain loop, as flash is short on PYBV11.)
            for (int32_t k = 0; k < n; ++k) {
                a += (uint32_t)((w[k] + filter_offset) * (x[k] + x_offset));
            }
        }
        acc[u] = a;
    }
    if (last) {
        fc_store_any(&o, acc, units, 0, e->out[0]);
    }
    return TFLM_OK;
}
#endif // TFLM_PATCH

const tflm_kernel_hooks_t tflm_fully_connected_hooks = {
#if TFLM_PATCH
    .reduce = fc_reduce,
    .run_slice = fc_run_slice,
#else
    .reduce = NULL, // (no hook left: an initializer list may not be empty in C99)
#endif
};

tflm_status_t tflm_fully_connected_eval(tflm_eval_t *e) {
    const fc_data_t *d = e->data;
    const void *bias = d->has_bias ? e->in[2] : NULL;
    switch (d->kind) {
        case FC_FLOAT32:
            tflm_fully_connected_float32(d, e->in[0], e->in[1], bias, e->out[0]);
            break;
        case FC_INT8:
            tflm_fully_connected_int8(d, e->in[0], e->in[1], bias, e->out[0]);
            break;
        default:
            tflm_fully_connected_int16(d, e->in[0], e->in[1], bias, e->out[0]);
            break;
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_FULLY_CONNECTED
