// The int8 matrix-multiply blocks of the convolution and fully connected
// kernels: the sums of two pixels (or one) against two filters over n int8
// values, kept in registers. Each input value is loaded once for both
// filters and each filter value once for both pixels. Sums wrap as the
// reference's int32 sums do (wrapping addition is associative, so any
// grouping gives the same bits). The input offset is not added here: the
// caller folds it into each filter's starting sum (tflm_out_s8_t.bias).
//
// Per core family (kernels/arch.h): with DSP, four values per step, widened
// two at a time with SXTB16 and multiplied in pairs with SMLAD (lanes 0/2
// and 1/3 of both operands pair up alike, so no reordering is needed);
// on Xtensa (ESP32) two values per step in assembly, the loop the core's
// own (LOOP); elsewhere one value per step, four steps unrolled. With DSP,
// four pointwise pixels also share each multiply, two by two in lanes of a
// 64-bit sum (TFLM_MM_S8_LANE, below); on the Cortex-M3, two pixels share
// each 32-bit multiply, packed in one word (tflm_mm_s8_pair2x2, below).
#ifndef TFLM_KERNELS_MM_S8_H
#define TFLM_KERNELS_MM_S8_H

#include <stdbool.h>

#include "kernels/arch.h"

// Whether the Thumb-2 loops below are in assembly (M profile, optimised
// builds; the host's tests build the same sums in C).
#ifndef TFLM_MM_S8_LANES_ASM
#if defined(__thumb2__) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M' && defined(__OPTIMIZE__)
#define TFLM_MM_S8_LANES_ASM (1)
#else
#define TFLM_MM_S8_LANES_ASM (0)
#endif
#endif
// Whether tflm_mm_s8_2x2's loop is in assembly on the Cortex-M3 and the DSP
// cores, and tflm_mm_s8_1x2's on the Cortex-M3 (0 keeps GCC's code for the
// C loops, which spills sums or pointers, or adds to an index each value:
// a large window read in place then takes 5-8% more cycles on the M3).
#ifndef TFLM_MM_S8_2X2_ASM
#define TFLM_MM_S8_2X2_ASM (TFLM_MM_S8_LANES_ASM \
    && (TFLM_KERNEL_ARCH == TFLM_ARCH_DSP || TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2))
#endif

// One value of each pixel and each filter at byte offset `at` (Cortex-M3):
// four loads back to back (one cycle each after the first), four MLA into
// a0 = p0.f0, a1 = p0.f1, a2 = p1.f0, a3 = p1.f1. The value at offset 0
// comes last in TFLM_MM_S8_2X2_T2_FOUR, its loads moving the pointers on
// (post-indexed), so the loop adds nothing to them. (conv_s8.c's blocks run
// the same steps.)
#define TFLM_MM_S8_2X2_T2_STEP(at) \
    "ldrsb %[t0], [%[p0]" at "\n\t" \
    "ldrsb %[t1], [%[p1]" at "\n\t" \
    "ldrsb %[t2], [%[f0]" at "\n\t" \
    "ldrsb %[t3], [%[f1]" at "\n\t" \
    "mla %[a0], %[t0], %[t2], %[a0]\n\t" \
    "mla %[a1], %[t0], %[t3], %[a1]\n\t" \
    "mla %[a2], %[t1], %[t2], %[a2]\n\t" \
    "mla %[a3], %[t1], %[t3], %[a3]\n\t"
// tflm_mm_s8_1x2's value at offset `at` (Cortex-M3): the pixel's and both
// filters' bytes, two MLA.
#define TFLM_MM_S8_1X2_T2_STEP(at) \
    "ldrsb %[t0], [%[p0]" at "\n\t" \
    "ldrsb %[t1], [%[f0]" at "\n\t" \
    "ldrsb %[t2], [%[f1]" at "\n\t" \
    "mla %[a0], %[t0], %[t1], %[a0]\n\t" \
    "mla %[a1], %[t0], %[t2], %[a1]\n\t"
// Four values, the pointers moved past them.
#define TFLM_MM_S8_2X2_T2_FOUR \
    TFLM_MM_S8_2X2_T2_STEP(", #1]") \
    TFLM_MM_S8_2X2_T2_STEP(", #2]") \
    TFLM_MM_S8_2X2_T2_STEP(", #3]") \
    TFLM_MM_S8_2X2_T2_STEP("], #4")
// Four values with DSP: a word of each pixel and of filter 0 widened with
// SXTB16 (lanes 0/2, then 1/3), eight SMLAD against both pixels; then
// filter 1's word. Fourteen registers: the sums, the four pointers, six
// for the values (the loop's end is read from the stack).
#define TFLM_MM_S8_2X2_DSP_FOUR \
    "ldr %[t0], [%[p0]], #4\n\t" \
    "ldr %[t1], [%[p1]], #4\n\t" \
    "ldr %[t4], [%[f0]], #4\n\t" \
    "sxtb16 %[t2], %[t0]\n\t" \
    "sxtb16 %[t0], %[t0], ror #8\n\t" \
    "sxtb16 %[t3], %[t1]\n\t" \
    "sxtb16 %[t1], %[t1], ror #8\n\t" \
    "sxtb16 %[t5], %[t4]\n\t" \
    "sxtb16 %[t4], %[t4], ror #8\n\t" \
    "smlad %[a0], %[t2], %[t5], %[a0]\n\t" \
    "smlad %[a0], %[t0], %[t4], %[a0]\n\t" \
    "smlad %[a2], %[t3], %[t5], %[a2]\n\t" \
    "smlad %[a2], %[t1], %[t4], %[a2]\n\t" \
    "ldr %[t4], [%[f1]], #4\n\t" \
    "sxtb16 %[t5], %[t4]\n\t" \
    "sxtb16 %[t4], %[t4], ror #8\n\t" \
    "smlad %[a1], %[t2], %[t5], %[a1]\n\t" \
    "smlad %[a1], %[t0], %[t4], %[a1]\n\t" \
    "smlad %[a3], %[t3], %[t5], %[a3]\n\t" \
    "smlad %[a3], %[t1], %[t4], %[a3]\n\t"

// a[0] += x.w0, a[1] += x.w1 over n values: one pixel, two filters.
static TFLM_ALWAYS_INLINE void tflm_mm_s8_1x2(const int8_t *x, const int8_t *w0, const int8_t *w1, int32_t n, uint32_t *a) {
    uint32_t a0 = a[0], a1 = a[1];
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
    for (; n >= 4; n -= 4) {
        const uint32_t xv = tflm_ld_u32(x), wa = tflm_ld_u32(w0), wb = tflm_ld_u32(w1);
        x += 4;
        w0 += 4;
        w1 += 4;
        const uint32_t x02 = tflm_sxtb16(xv), x13 = tflm_sxtb16_ror8(xv);
        a0 = tflm_smlad(x02, tflm_sxtb16(wa), a0);
        a0 = tflm_smlad(x13, tflm_sxtb16_ror8(wa), a0);
        a1 = tflm_smlad(x02, tflm_sxtb16(wb), a1);
        a1 = tflm_smlad(x13, tflm_sxtb16_ror8(wb), a1);
    }
#endif
#if TFLM_MM_S8_2X2_ASM && TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2
    // Cortex-M3: four values a turn, the three loads of each back to back
    // and post-indexed at the last (GCC's loop adds to an index each value).
    if (n >= 4) {
        const int8_t *end = x + (n & ~3);
        int32_t t0, t1, t2;
        __asm__ volatile(
            ".p2align 2\n"
            "1:\n\t"
            TFLM_MM_S8_1X2_T2_STEP(", #1]") TFLM_MM_S8_1X2_T2_STEP(", #2]") TFLM_MM_S8_1X2_T2_STEP(", #3]")
            TFLM_MM_S8_1X2_T2_STEP("], #4")
            "cmp %[p0], %[e]\n\t"
            "bne 1b"
            : [a0] "+r"(a0), [a1] "+r"(a1), [p0] "+r"(x), [f0] "+r"(w0), [f1] "+r"(w1), [t0] "=&r"(t0),
              [t1] "=&r"(t1), [t2] "=&r"(t2)
            : [e] "r"(end)
            : "memory", "cc");
        n &= 3;
    }
#endif
#if TFLM_KERNEL_ARCH == TFLM_ARCH_V6M
    // Thumb-1 loads bytes with a register offset only: one index, counting
    // up to zero, serves the three streams, and its increment sets the flags.
    x += n;
    w0 += n;
    w1 += n;
    for (int32_t k = -n; k != 0; ++k) {
        const int32_t xv = x[k];
        a0 += (uint32_t)(xv * w0[k]);
        a1 += (uint32_t)(xv * w1[k]);
    }
#else
    for (int32_t k = 0; k < n; ++k) {
        const int32_t xv = x[k];
        a0 += (uint32_t)(xv * w0[k]);
        a1 += (uint32_t)(xv * w1[k]);
    }
#endif
    a[0] = a0;
    a[1] = a1;
}

#if TFLM_KERNEL_ARCH == TFLM_ARCH_XTENSA
// One value of each pixel and each filter at byte offset k: four bytes
// loaded and sign-extended (L8UI, SEXT), four 16 x 16 products (MUL16S),
// each added to its sum through the one scratch register.
#define TFLM_MM_S8_XT_STEP(k) \
    "l8ui %[xa], %[x0], " #k "\n\t" \
    "l8ui %[wa], %[w0], " #k "\n\t" \
    "l8ui %[xb], %[x1], " #k "\n\t" \
    "l8ui %[wb], %[w1], " #k "\n\t" \
    "sext %[xa], %[xa], 7\n\t" \
    "sext %[wa], %[wa], 7\n\t" \
    "sext %[xb], %[xb], 7\n\t" \
    "sext %[wb], %[wb], 7\n\t" \
    "mul16s %[t], %[xa], %[wa]\n\t" \
    "add %[a00], %[a00], %[t]\n\t" \
    "mul16s %[t], %[xa], %[wb]\n\t" \
    "add %[a01], %[a01], %[t]\n\t" \
    "mul16s %[t], %[xb], %[wa]\n\t" \
    "add %[a10], %[a10], %[t]\n\t" \
    "mul16s %[t], %[xb], %[wb]\n\t" \
    "add %[a11], %[a11], %[t]\n\t"

// tflm_mm_s8_2x2's pairs of values on Xtensa: the four sums, four pointers
// and five scratch registers take thirteen of the window's fourteen (GCC's
// own code for the unrolled C loop spills sums to the stack); LOOPNEZ runs
// the body with no branch. The scratch register starts as the pair count,
// which LOOPNEZ copies into the loop counter.
static TFLM_ALWAYS_INLINE void tflm_mm_s8_2x2_xtensa(const int8_t **x0, const int8_t **x1, const int8_t **w0,
    const int8_t **w1, int32_t pairs, uint32_t *a00, uint32_t *a01, uint32_t *a10, uint32_t *a11) {
    const int8_t *p0 = *x0, *p1 = *x1, *q0 = *w0, *q1 = *w1;
    uint32_t s00 = *a00, s01 = *a01, s10 = *a10, s11 = *a11;
    int32_t xa, xb, wa, wb, t = pairs;
    __asm__ volatile(
        "loopnez %[t], 1f\n\t"
        TFLM_MM_S8_XT_STEP(0) TFLM_MM_S8_XT_STEP(1)
        "addi %[x0], %[x0], 2\n\t"
        "addi %[x1], %[x1], 2\n\t"
        "addi %[w0], %[w0], 2\n\t"
        "addi %[w1], %[w1], 2\n\t"
        "1:\n\t"
        : [a00] "+r"(s00), [a01] "+r"(s01), [a10] "+r"(s10), [a11] "+r"(s11), [x0] "+r"(p0), [x1] "+r"(p1),
          [w0] "+r"(q0), [w1] "+r"(q1), [xa] "=&r"(xa), [xb] "=&r"(xb), [wa] "=&r"(wa), [wb] "=&r"(wb), [t] "+r"(t)
        :
        : "memory");
    *x0 = p0;
    *x1 = p1;
    *w0 = q0;
    *w1 = q1;
    *a00 = s00;
    *a01 = s01;
    *a10 = s10;
    *a11 = s11;
}
#endif

// One value of each pixel against one of each filter (offset k): four
// products. Written out four times per step, not looped, so the loads take
// immediate offsets.
#define TFLM_MM_S8_2X2_STEP(k) \
    { \
        const int32_t xa = x0[k], xb = x1[k], wa = w0[k], wb = w1[k]; \
        a00 += (uint32_t)(xa * wa); \
        a01 += (uint32_t)(xa * wb); \
        a10 += (uint32_t)(xb * wa); \
        a11 += (uint32_t)(xb * wb); \
    }

// a[0] += x0.w0, a[1] += x0.w1, a[2] += x1.w0, a[3] += x1.w1 over n values.
static TFLM_ALWAYS_INLINE void tflm_mm_s8_2x2(const int8_t *x0, const int8_t *x1, const int8_t *w0, const int8_t *w1,
    int32_t n, uint32_t *a) {
#if TFLM_KERNEL_ARCH == TFLM_ARCH_V6M
    // Eight low registers cannot hold four sums and four streams: one pixel
    // at a time (5 instructions per MAC, against 5.75 for the block).
    tflm_mm_s8_1x2(x0, w0, w1, n, a);
    tflm_mm_s8_1x2(x1, w0, w1, n, a + 2);
#else
    uint32_t a00 = a[0], a01 = a[1], a10 = a[2], a11 = a[3];
#if TFLM_KERNEL_ARCH == TFLM_ARCH_XTENSA
    if (n >= 2) {
        tflm_mm_s8_2x2_xtensa(&x0, &x1, &w0, &w1, n >> 1, &a00, &a01, &a10, &a11);
        n &= 1;
    }
#elif TFLM_MM_S8_2X2_ASM
    // GCC's code for the C loop below spills sums or pointers (a load or a
    // store a step). Four values a step, an odd step first, then two a
    // turn from a word (a 32-bit instruction across a word boundary costs
    // the branch back a cycle).
    if (n >= 4) {
        const int8_t *end = x0 + (n & ~3);
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
        uint32_t t0, t1, t2, t3, t4, t5;
        __asm__ volatile(
            "ldr %[t0], %[end]\n\t"
            "sub %[t0], %[t0], %[p0]\n\t"
            "tst %[t0], #4\n\t"
            "beq 2f\n\t"
            TFLM_MM_S8_2X2_DSP_FOUR
            "2:\n\t"
            "ldr %[t0], %[end]\n\t"
            "cmp %[p0], %[t0]\n\t"
            "beq 3f\n\t"
            ".p2align 2\n"
            "1:\n\t"
            TFLM_MM_S8_2X2_DSP_FOUR TFLM_MM_S8_2X2_DSP_FOUR
            "ldr %[t0], %[end]\n\t"
            "cmp %[p0], %[t0]\n\t"
            "bne 1b\n"
            "3:"
            : [a0] "+r"(a00), [a1] "+r"(a01), [a2] "+r"(a10), [a3] "+r"(a11), [p0] "+r"(x0), [p1] "+r"(x1),
              [f0] "+r"(w0), [f1] "+r"(w1), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3),
              [t4] "=&r"(t4), [t5] "=&r"(t5)
            : [end] "m"(end)
            : "memory", "cc");
#else
        int32_t t0, t1, t2, t3;
        __asm__ volatile(
            "sub %[t0], %[e], %[p0]\n\t"
            "tst %[t0], #4\n\t"
            "beq 2f\n\t"
            TFLM_MM_S8_2X2_T2_FOUR
            "2:\n\t"
            "cmp %[p0], %[e]\n\t"
            "beq 3f\n\t"
            ".p2align 2\n"
            "1:\n\t"
            TFLM_MM_S8_2X2_T2_FOUR TFLM_MM_S8_2X2_T2_FOUR
            "cmp %[p0], %[e]\n\t"
            "bne 1b\n"
            "3:"
            : [a0] "+r"(a00), [a1] "+r"(a01), [a2] "+r"(a10), [a3] "+r"(a11), [p0] "+r"(x0), [p1] "+r"(x1),
              [f0] "+r"(w0), [f1] "+r"(w1), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3)
            : [e] "r"(end)
            : "memory", "cc");
#endif
        n &= 3;
    }
#endif
    for (; n >= 4; n -= 4) {
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
        // Each word widened once: filter 0 against both pixels, then filter 1.
        const uint32_t wa = tflm_ld_u32(w0), xa = tflm_ld_u32(x0), xb = tflm_ld_u32(x1);
        const uint32_t wa02 = tflm_sxtb16(wa), wa13 = tflm_sxtb16_ror8(wa);
        const uint32_t xa02 = tflm_sxtb16(xa), xa13 = tflm_sxtb16_ror8(xa);
        a00 = tflm_smlad(xa02, wa02, a00);
        a00 = tflm_smlad(xa13, wa13, a00);
        const uint32_t xb02 = tflm_sxtb16(xb), xb13 = tflm_sxtb16_ror8(xb);
        a10 = tflm_smlad(xb02, wa02, a10);
        a10 = tflm_smlad(xb13, wa13, a10);
        const uint32_t wb = tflm_ld_u32(w1);
        const uint32_t wb02 = tflm_sxtb16(wb), wb13 = tflm_sxtb16_ror8(wb);
        a01 = tflm_smlad(xa02, wb02, a01);
        a01 = tflm_smlad(xa13, wb13, a01);
        a11 = tflm_smlad(xb02, wb02, a11);
        a11 = tflm_smlad(xb13, wb13, a11);
#else
        TFLM_MM_S8_2X2_STEP(0);
        TFLM_MM_S8_2X2_STEP(1);
        TFLM_MM_S8_2X2_STEP(2);
        TFLM_MM_S8_2X2_STEP(3);
#endif
        x0 += 4;
        x1 += 4;
        w0 += 4;
        w1 += 4;
    }
    for (int32_t k = 0; k < n; ++k) {
        TFLM_MM_S8_2X2_STEP(k);
    }
    a[0] = a00;
    a[1] = a01;
    a[2] = a10;
    a[3] = a11;
#endif
}

// Whether Armv6-M's loops below are in assembly (Thumb-1, optimised
// builds; the host's tests build the same sums in C). Position-independent
// ones too (tflm.mpy): GCC finds the GOT base a register around them, and
// no block names a symbol (kws_ref_model on the Cortex-M0+ through tflm.mpy:
// 51.1 M cycles with the C loops, 24.4 M with these).
#ifndef TFLM_MM_S8_V6M_ASM
#define TFLM_MM_S8_V6M_ASM TFLM_V6M_ASM
#endif

#if TFLM_KERNEL_ARCH == TFLM_ARCH_V6M
// One pixel against filters 0-5 (Armv6-M): a[f] = from[f] + x . w_f over n
// values, filter f at w + f * stride, each from[f] `from_step` bytes after
// the one before (a constant: 4 for an array of sums, or the size of the
// output stage's records, whose first field is the starting sum). On the
// Cortex-M0+ a byte load takes two cycles, a multiply and an add one each,
// so the pixel's value is loaded once for six filters: the sums live in the
// high registers (r8-r12, lr, which ADD reaches), and two indexes, k and
// k + stride, reach the six filters from three base pointers. 30 cycles a
// value, 5 a product (the 1x2 loop: 6.5). GCC hands Thumb-1 inline assembly
// to the assembler in divided syntax (and returns to unified after it): the
// loops ask for unified.
static TFLM_ALWAYS_INLINE void tflm_mm_s8_1x6(const int8_t *x, const int8_t *w, int32_t stride, int32_t n,
    const void *from, int32_t from_step, uint32_t *a) {
#if TFLM_MM_S8_V6M_ASM
    if (n <= 0) {
        for (int32_t f = 0; f < 6; ++f) {
            a[f] = *(const uint32_t *)((const uint8_t *)from + f * from_step);
        }
        return;
    }
    // The bases point past the values; k counts up from -n to 0.
    const int8_t *px = x + n, *p0 = w + n, *p2 = p0 + 2 * stride, *p4 = p2 + 2 * stride;
    int32_t k = -n;
    uint32_t kc = (uint32_t)(uintptr_t)from, xv = (uint32_t)(uintptr_t)a, wv;
    __asm__ volatile(
        ".syntax unified\n\t"
        "push {%[xv]}\n\t"
        "ldr %[wv], [%[kc], %[o0]]\n\t"
        "mov r8, %[wv]\n\t"
        "ldr %[wv], [%[kc], %[o1]]\n\t"
        "mov r9, %[wv]\n\t"
        "ldr %[wv], [%[kc], %[o2]]\n\t"
        "mov r10, %[wv]\n\t"
        "ldr %[wv], [%[kc], %[o3]]\n\t"
        "mov r11, %[wv]\n\t"
        "ldr %[wv], [%[kc], %[o4]]\n\t"
        "mov r12, %[wv]\n\t"
        "ldr %[wv], [%[kc], %[o5]]\n\t"
        "mov lr, %[wv]\n\t"
        "subs %[kc], %[p2], %[p0]\n\t"
        "asrs %[kc], %[kc], #1\n\t"
        "adds %[kc], %[kc], %[k]\n\t"
        "1:\n\t"
        "ldrsb %[xv], [%[px], %[k]]\n\t"
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
        "add r12, %[wv]\n\t"
        "ldrsb %[wv], [%[p4], %[kc]]\n\t"
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
        "mov %[wv], r12\n\t"
        "str %[wv], [%[kc], #16]\n\t"
        "mov %[wv], lr\n\t"
        "str %[wv], [%[kc], #20]"
        : [k] "+l"(k), [kc] "+l"(kc), [xv] "+l"(xv), [wv] "=&l"(wv)
        : [px] "l"(px), [p0] "l"(p0), [p2] "l"(p2), [p4] "l"(p4), [o0] "i"(0), [o1] "i"(from_step),
          [o2] "i"(2 * from_step), [o3] "i"(3 * from_step), [o4] "i"(4 * from_step), [o5] "i"(5 * from_step)
        : "r8", "r9", "r10", "r11", "r12", "lr", "memory", "cc");
#else
    for (int32_t f = 0; f < 6; ++f) {
        const int8_t *wf = w + f * stride;
        uint32_t s = *(const uint32_t *)((const uint8_t *)from + f * from_step);
        for (int32_t k = 0; k < n; ++k) {
            s += (uint32_t)(x[k] * wf[k]);
        }
        a[f] = s;
    }
#endif
}

// The same against filters 0-3 (a chunk's last ones): 22 cycles a value.
static TFLM_ALWAYS_INLINE void tflm_mm_s8_1x4(const int8_t *x, const int8_t *w, int32_t stride, int32_t n,
    const void *from, int32_t from_step, uint32_t *a) {
#if TFLM_MM_S8_V6M_ASM
    if (n <= 0) {
        for (int32_t f = 0; f < 4; ++f) {
            a[f] = *(const uint32_t *)((const uint8_t *)from + f * from_step);
        }
        return;
    }
    const int8_t *px = x + n, *p0 = w + n, *p2 = p0 + 2 * stride;
    int32_t k = -n;
    uint32_t kc = (uint32_t)(uintptr_t)from, xv = (uint32_t)(uintptr_t)a, wv;
    __asm__ volatile(
        ".syntax unified\n\t"
        "push {%[xv]}\n\t"
        "ldr %[wv], [%[kc], %[o0]]\n\t"
        "mov r8, %[wv]\n\t"
        "ldr %[wv], [%[kc], %[o1]]\n\t"
        "mov r9, %[wv]\n\t"
        "ldr %[wv], [%[kc], %[o2]]\n\t"
        "mov r10, %[wv]\n\t"
        "ldr %[wv], [%[kc], %[o3]]\n\t"
        "mov r11, %[wv]\n\t"
        "subs %[kc], %[p2], %[p0]\n\t"
        "asrs %[kc], %[kc], #1\n\t"
        "adds %[kc], %[kc], %[k]\n\t"
        "1:\n\t"
        "ldrsb %[xv], [%[px], %[k]]\n\t"
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
        : [k] "+l"(k), [kc] "+l"(kc), [xv] "+l"(xv), [wv] "=&l"(wv)
        : [px] "l"(px), [p0] "l"(p0), [p2] "l"(p2), [o0] "i"(0), [o1] "i"(from_step), [o2] "i"(2 * from_step),
          [o3] "i"(3 * from_step)
        : "r8", "r9", "r10", "r11", "memory", "cc");
#else
    for (int32_t f = 0; f < 4; ++f) {
        const int8_t *wf = w + f * stride;
        uint32_t s = *(const uint32_t *)((const uint8_t *)from + f * from_step);
        for (int32_t k = 0; k < n; ++k) {
            s += (uint32_t)(x[k] * wf[k]);
        }
        a[f] = s;
    }
#endif
}
#endif // TFLM_KERNEL_ARCH == TFLM_ARCH_V6M

#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP

// Two pixels' first 4 * groups values widened to 16 bits once, for all the
// filters they meet: per 4 values, pixel 0's lanes 0/2 and 1/3, then pixel
// 1's (the order tflm_mm_s16s8_2x2 reads, two words at a time).
static TFLM_ALWAYS_INLINE void tflm_mm_s8_widen2(const int8_t *x0, const int8_t *x1, int32_t groups, uint32_t *xw) {
    for (; groups > 0; --groups, x0 += 4, x1 += 4, xw += 4) {
        const uint32_t a = tflm_ld_u32(x0), b = tflm_ld_u32(x1);
        xw[0] = tflm_sxtb16(a);
        xw[1] = tflm_sxtb16_ror8(a);
        xw[2] = tflm_sxtb16(b);
        xw[3] = tflm_sxtb16_ror8(b);
    }
}

// Four values of tflm_mm_s16s8_2x2's loop in assembly: both pixels'
// widened words (four LDR: 5 cycles as one LDM, two LDRD take 6, and the
// first filter's LDR then pipelines behind them: 1 cycle, not 2), then
// each filter's word widened and multiplied by both.
#define TFLM_MM_S16S8_2X2_STEP \
    "ldr %[xb], [%[xw], #4]\n\t" \
    "ldr %[xc], [%[xw], #8]\n\t" \
    "ldr %[xd], [%[xw], #12]\n\t" \
    "ldr %[xa], [%[xw]], #16\n\t" \
    "ldr %[wv], [%[w0]], #4\n\t" \
    "sxtb16 %[wt], %[wv]\n\t" \
    "sxtb16 %[wv], %[wv], ror #8\n\t" \
    "smlad %[a00], %[xa], %[wt], %[a00]\n\t" \
    "smlad %[a00], %[xb], %[wv], %[a00]\n\t" \
    "smlad %[a10], %[xc], %[wt], %[a10]\n\t" \
    "smlad %[a10], %[xd], %[wv], %[a10]\n\t" \
    "ldr %[wv], [%[w1]], #4\n\t" \
    "sxtb16 %[wt], %[wv]\n\t" \
    "sxtb16 %[wv], %[wv], ror #8\n\t" \
    "smlad %[a01], %[xa], %[wt], %[a01]\n\t" \
    "smlad %[a01], %[xb], %[wv], %[a01]\n\t" \
    "smlad %[a11], %[xc], %[wt], %[a11]\n\t" \
    "smlad %[a11], %[xd], %[wv], %[a11]\n\t"

// The four registers of the widened words (r0-r3: with them the blocks
// that use the loop leave GCC the registers it allocates best).
#define TFLM_MM_S16S8_X_REGS \
    register uint32_t xa __asm__("r0"); \
    register uint32_t xb __asm__("r1"); \
    register uint32_t xc __asm__("r2"); \
    register uint32_t xd __asm__("r3")

// The loop over widened pixels from xw to end (a multiple of 16 bytes
// apart, none at all included): one step, then two, first as the count's
// bits ask (both tested at once: into N and C, which the steps leave
// alone), then four a turn, from a word. Also conv_s8.c's block for pairs of channels, which goes on from
// its label 3.
#define TFLM_MM_S16S8_2X2_LOOP \
    "sub %[wt], %[end], %[xw]\n\t" \
    TFLM_ASM_TWO_BITS("%[wt]", 27, 2, TFLM_MM_S16S8_2X2_STEP, "bcc 6f\n\t") \
    TFLM_MM_S16S8_2X2_STEP TFLM_MM_S16S8_2X2_STEP \
    "6:\n\t" \
    "cmp %[xw], %[end]\n\t" \
    "beq 3f\n\t" \
    ".p2align 2\n" \
    "1:\n\t" \
    TFLM_MM_S16S8_2X2_STEP TFLM_MM_S16S8_2X2_STEP TFLM_MM_S16S8_2X2_STEP TFLM_MM_S16S8_2X2_STEP \
    "cmp %[xw], %[end]\n\t" \
    "bne 1b\n" \
    "3:\n\t"

// tflm_mm_s8_2x2 on widened pixels: xw from tflm_mm_s8_widen2 up to xw_end,
// filter 0 at w0 and filter 1 w1_at bytes after it. Per 4 values: two
// doubleword loads, one word per filter widened, eight SMLAD.
static TFLM_ALWAYS_INLINE void tflm_mm_s16s8_2x2(const uint32_t *xw, const uint32_t *xw_end, const int8_t *w0,
    int32_t w1_at, uint32_t *a) {
    uint32_t a00 = a[0], a01 = a[1], a10 = a[2], a11 = a[3];
#if TFLM_MM_S8_LANES_ASM
    // In assembly: GCC's own code for the C loop below keeps the loop's end
    // or w1_at on the stack (a load a step); here the fourteen registers
    // hold everything and each load moves its pointer. An odd step first,
    // then two steps a turn.
    if (xw != xw_end) {
        const int8_t *w1 = w0 + w1_at;
        TFLM_MM_S16S8_X_REGS;
        uint32_t wv, wt;
        __asm__ volatile(
            TFLM_MM_S16S8_2X2_LOOP
            : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [xw] "+r"(xw), [w0] "+r"(w0),
              [w1] "+r"(w1), [xa] "=&r"(xa), [xb] "=&r"(xb), [xc] "=&r"(xc), [xd] "=&r"(xd), [wv] "=&r"(wv),
              [wt] "=&r"(wt)
            : [end] "r"(xw_end)
            : "memory", "cc");
    }
#else
    while (xw != xw_end) {
        const uint32_t xa02 = xw[0], xa13 = xw[1], xb02 = xw[2], xb13 = xw[3];
        xw += 4;
        uint32_t w = tflm_ld_u32(w0);
        uint32_t w02 = tflm_sxtb16(w), w13 = tflm_sxtb16_ror8(w);
        a00 = tflm_smlad(xa02, w02, a00);
        a00 = tflm_smlad(xa13, w13, a00);
        a10 = tflm_smlad(xb02, w02, a10);
        a10 = tflm_smlad(xb13, w13, a10);
        w = tflm_ld_u32(w0 + w1_at);
        w0 += 4;
        w02 = tflm_sxtb16(w);
        w13 = tflm_sxtb16_ror8(w);
        a01 = tflm_smlad(xa02, w02, a01);
        a01 = tflm_smlad(xa13, w13, a01);
        a11 = tflm_smlad(xb02, w02, a11);
        a11 = tflm_smlad(xb13, w13, a11);
    }
#endif
    a[0] = a00;
    a[1] = a01;
    a[2] = a10;
    a[3] = a11;
}

#endif // TFLM_KERNEL_ARCH == TFLM_ARCH_DSP

#if TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2
// Two pixels in one 32-bit multiply (the Cortex-M3, which has no 16-bit
// lanes: MUL takes 1 cycle, MLA 2, SMLAL 4-7). A word X = x0 + x1 * 2^16
// (modulo 2^32) times a filter value is x0.w + x1.w * 2^16. Two values at
// a time (a block), t = 2^15 - X0.w0 - X1.w1 holds 2^15 - a in its low
// half and -c in its high one, a = x0.w and c = x1.w over the block: with
// x and w int8 (-128 to 127: the input offset is in the starting sums), a
// and c lie in [-32512, 32768], so the low half's 2^15 - a in [0, 65280]
// and the high half's -c in [-32768, 32512] are exact, and t >> 16
// (arithmetic) is -c. Per block, h -= t >> 16 and
// l -= t: h started at pixel 1's starting sum s1 ends at its sum; l,
// started at s0 + s1 * 2^16 + 2^15 per block, ends at pixel 0's sum plus
// h * 2^16 (every step modulo 2^32, as the reference's int32 sums wrap).
// Four products in MUL, MLA, RSB and two SUB: 6 cycles, against four MLA's
// 8, and a word of both pixels loaded once for two filters.

// Two pixels' n values packed once for all the filters they meet: xw[i] =
// x0[i] + x1[i] * 2^16.
static TFLM_ALWAYS_INLINE void tflm_mm_s8_pack2(const int8_t *x0, const int8_t *x1, int32_t n, uint32_t *xw) {
    // Four values a turn: the eight loads back to back, the stores at
    // offsets (about 5 cycles a value; one a turn, 8).
    for (; n >= 4; n -= 4, x0 += 4, x1 += 4, xw += 4) {
        const int32_t a0 = x0[0], a1 = x0[1], a2 = x0[2], a3 = x0[3];
        const int32_t b0 = x1[0], b1 = x1[1], b2 = x1[2], b3 = x1[3];
        xw[0] = (uint32_t)a0 + ((uint32_t)b0 << 16);
        xw[1] = (uint32_t)a1 + ((uint32_t)b1 << 16);
        xw[2] = (uint32_t)a2 + ((uint32_t)b2 << 16);
        xw[3] = (uint32_t)a3 + ((uint32_t)b3 << 16);
    }
    for (int32_t i = 0; i < n; ++i) {
        xw[i] = (uint32_t)x0[i] + ((uint32_t)x1[i] << 16);
    }
}

// One block's t into the running l and h.
static inline void tflm_mm_s8_pair_add(uint32_t t, uint32_t *l, uint32_t *h) {
    *l -= t;
    *h -= (uint32_t)((int32_t)t >> 16);
}

// tflm_mm_s8_2x2 on packed pixels (tflm_mm_s8_pack2), a[] starting sums in
// and sums out as there: a[0] = x0.w0, a[1] = x0.w1, a[2] = x1.w0,
// a[3] = x1.w1 over n values (conv_s8.c's assembly runs the same blocks).
static TFLM_ALWAYS_INLINE void tflm_mm_s8_pair2x2(const uint32_t *xw, int32_t n, const int8_t *w0,
    const int8_t *w1, uint32_t *a) {
    const uint32_t half = (uint32_t)((n + 1) >> 1) << 15;
    uint32_t l0 = a[0] + (a[2] << 16) + half, h0 = a[2];
    uint32_t l1 = a[1] + (a[3] << 16) + half, h1 = a[3];
    int32_t i = 0;
    for (; i + 2 <= n; i += 2) {
        tflm_mm_s8_pair_add(0x8000u - (xw[i] * (uint32_t)w0[i] + xw[i + 1] * (uint32_t)w0[i + 1]), &l0, &h0);
        tflm_mm_s8_pair_add(0x8000u - (xw[i] * (uint32_t)w1[i] + xw[i + 1] * (uint32_t)w1[i + 1]), &l1, &h1);
    }
    if (i < n) {
        tflm_mm_s8_pair_add(0x8000u - xw[i] * (uint32_t)w0[i], &l0, &h0);
        tflm_mm_s8_pair_add(0x8000u - xw[i] * (uint32_t)w1[i], &l1, &h1);
    }
    a[0] = l0 - (h0 << 16);
    a[1] = l1 - (h1 << 16);
    a[2] = h0;
    a[3] = h1;
}
#endif // TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2

// Two pixels in one multiply (cores with DSP, tflm_mm_s8_4x2): a word holding two
// pixels' values, x0 + x1 * 2^23, times a filter value is x0.w + x1.w * 2^23,
// so SMLAL's 64-bit sums of such products hold two pixels' sums at once,
// s0 + s1 * 2^23, and give both back exactly while -2^22 <= s0 < 2^22 (the
// sums are exact integers; s1 is only bounded by the 64 bits). That holds
// whatever the input when the filter's absolute values add up to less than
// 2^15 (|x| <= 128): every filter of a layer must (tflm_mm_s8_lanes_fit).
#define TFLM_MM_S8_LANE (23)

// The core family that sums in lanes: DSP (Cortex-M4, M7, M33), whose
// 32x32+64 multiply-accumulate (SMLAL) takes one cycle, with the loop in
// assembly (for the host's tests, the same in C). Not the Cortex-M3: its
// SMLAL takes 4 to 7 cycles by the operands' size (TRM r2p1, table 3-1),
// MLA 2, so two products in one SMLAL save instructions, not cycles (the
// packed operand is large): measured by the cycle estimator at the TRM's
// worst, the plain 2x2 block takes 9-11% fewer cycles on kws_ref_model,
// person_detect and vww_96_int8.
// tflm_mm_s8_4x2's assembly (and tflm_mm_s16s8_2x2's) takes all fourteen
// registers, r7 and r9 included: a build that reserves one (frame pointers,
// a fixed r9, -O0) fails to compile it and needs -DTFLM_MM_S8_LANES_ASM=0
// (the same sums in C, slower).
#define TFLM_MM_S8_LANES (TFLM_KERNEL_ARCH == TFLM_ARCH_DSP)

// Whether each of `filters` filters of n values sums in lanes.
static inline bool tflm_mm_s8_lanes_fit(const int8_t *w, int32_t filters, int32_t n) {
    for (int32_t f = 0; f < filters; ++f, w += n) {
        int32_t total = 0;
        for (int32_t k = 0; k < n && total < 32768; ++k) {
            total += w[k] < 0 ? -w[k] : w[k];
        }
        if (total >= 32768) {
            return false;
        }
    }
    return true;
}

// Where lane sums start: the low pixel's sum plus 2^22 then lies in
// [0, 2^23), the bits below the high pixel's, which need no borrow back.
#define TFLM_MM_S8_LANE_START ((int64_t)1 << (TFLM_MM_S8_LANE - 1))

// Both pixels' sums out of a lane sum that started at TFLM_MM_S8_LANE_START:
// the low pixel's plus 2^22 (a mask; callers take 2^22 off with the bias
// they add anyway) and the high pixel's (a shift).
static inline void tflm_mm_s8_unlane(int64_t acc, uint32_t *s0_up, int32_t *s1) {
    *s0_up = (uint32_t)acc & ((1u << TFLM_MM_S8_LANE) - 1u);
    *s1 = (int32_t)(uint32_t)((uint64_t)acc >> TFLM_MM_S8_LANE);
}

// Four pixels of n values (x, and each next one `step` bytes further), two
// by two in words: xp[2k] pixels 0 and 1, xp[2k + 1] pixels 2 and 3.
static TFLM_ALWAYS_INLINE void tflm_mm_s8_pack4(const int8_t *x, int32_t step, int32_t n, int32_t *xp) {
    const int8_t *x1 = x + step, *x2 = x1 + step, *x3 = x2 + step;
#if TFLM_MM_S8_LANES_ASM
    // Two values of each pixel a turn, the eight loads back to back (each
    // behind the one before: 9 cycles), then the four words: 10 cycles a
    // value where GCC's loop, a load, an addition and a store at a time,
    // took 14.
    if (n >= 2) {
        const int8_t *const end = x + (n & ~1);
        int32_t a, b, c, d, e, f, g, h;
        __asm__ volatile(
            "1:\n\t"
            "ldrsb %[a], [%[x0]], #1\n\t"
            "ldrsb %[b], [%[x1]], #1\n\t"
            "ldrsb %[c], [%[x2]], #1\n\t"
            "ldrsb %[d], [%[x3]], #1\n\t"
            "ldrsb %[e], [%[x0]], #1\n\t"
            "ldrsb %[f], [%[x1]], #1\n\t"
            "ldrsb %[g], [%[x2]], #1\n\t"
            "ldrsb %[h], [%[x3]], #1\n\t"
            "add %[a], %[a], %[b], lsl #23\n\t"
            "add %[c], %[c], %[d], lsl #23\n\t"
            "add %[e], %[e], %[f], lsl #23\n\t"
            "add %[g], %[g], %[h], lsl #23\n\t"
            "str %[a], [%[xp]], #16\n\t"
            "str %[c], [%[xp], #-12]\n\t"
            "str %[e], [%[xp], #-8]\n\t"
            "str %[g], [%[xp], #-4]\n\t"
            "cmp %[x0], %[end]\n\t"
            "bne 1b"
            : [x0] "+r"(x), [x1] "+r"(x1), [x2] "+r"(x2), [x3] "+r"(x3), [xp] "+r"(xp), [a] "=&r"(a), [b] "=&r"(b),
              [c] "=&r"(c), [d] "=&r"(d), [e] "=&r"(e), [f] "=&r"(f), [g] "=&r"(g), [h] "=&r"(h)
            : [end] "r"(end)
            : "memory", "cc");
        n &= 1;
    }
#endif
    for (int32_t k = 0; k < n; ++k, xp += 2) {
        xp[0] = x[k] + x1[k] * (1 << TFLM_MM_S8_LANE);
        xp[1] = x2[k] + x3[k] * (1 << TFLM_MM_S8_LANE);
    }
}

// One value of tflm_mm_s8_4x2's loop in assembly: both words of the four
// pixels, each filter's value, four SMLAL. The words by two LDR rather than
// one LDRD: as many cycles (3), but the first filter's LDRSB then pipelines
// behind the second LDR (1 cycle instead of 2: 10 a step on the Cortex-M4,
// not 11).
#define TFLM_MM_S8_4X2_STEP \
    "ldr %[xb], [%[p], #4]\n\t" \
    "ldr %[xa], [%[p]], #8\n\t" \
    "ldrsb %[wv], [%[w0]], #1\n\t" \
    "smlal %Q[a00], %R[a00], %[xa], %[wv]\n\t" \
    "smlal %Q[a10], %R[a10], %[xb], %[wv]\n\t" \
    "ldrsb %[wv], [%[w1]], #1\n\t" \
    "smlal %Q[a01], %R[a01], %[xa], %[wv]\n\t" \
    "smlal %Q[a11], %R[a11], %[xb], %[wv]\n\t"

// a[0] += (pixels 0, 1) . w0, a[1] += (pixels 2, 3) . w0, a[2] += (pixels
// 0, 1) . w1, a[3] += (pixels 2, 3) . w1 over n values, the pixels packed by
// tflm_mm_s8_pack4: two filter values for eight products. In assembly the
// loop holds all fourteen registers the core has (its end is read from the
// stack); GCC's own code splits the LDRD and spills.
static TFLM_ALWAYS_INLINE void tflm_mm_s8_4x2(const int32_t *xp, int32_t n, const int8_t *w0, const int8_t *w1,
    int64_t *a) {
    int64_t a00 = a[0], a10 = a[1], a01 = a[2], a11 = a[3];
#if TFLM_MM_S8_LANES_ASM
    if (n >= 4) {
        const int32_t *end = xp + 2 * (n & ~3);
        int32_t xa, xb, wv;
        // The loop's first instruction on a word: a 32-bit one across a word
        // boundary costs the branch back a cycle (Cortex-M3/M4 fetch).
        __asm__ volatile(
            ".p2align 2\n"
            "1:\n\t"
            TFLM_MM_S8_4X2_STEP TFLM_MM_S8_4X2_STEP TFLM_MM_S8_4X2_STEP TFLM_MM_S8_4X2_STEP
            "ldr %[wv], %[end]\n\t"
            "cmp %[p], %[wv]\n\t"
            "bne 1b"
            : [a00] "+r"(a00), [a10] "+r"(a10), [a01] "+r"(a01), [a11] "+r"(a11), [p] "+r"(xp), [w0] "+r"(w0),
              [w1] "+r"(w1), [xa] "=&r"(xa), [xb] "=&r"(xb), [wv] "=&r"(wv)
            : [end] "m"(end)
            : "memory", "cc");
        n &= 3;
    }
#endif
    for (int32_t k = 0; k < n; ++k, xp += 2) {
        const int32_t va = w0[k], vb = w1[k];
        a00 += (int64_t)xp[0] * va;
        a10 += (int64_t)xp[1] * va;
        a01 += (int64_t)xp[0] * vb;
        a11 += (int64_t)xp[1] * vb;
    }
    a[0] = a00;
    a[1] = a10;
    a[2] = a01;
    a[3] = a11;
}

// sum of n int8 values (a filter's sum, for folding the input offset), a
// word of values at a time (kernels/mm_s8.c).
uint32_t tflm_sum_s8(const int8_t *w, int32_t n);

#endif // TFLM_KERNELS_MM_S8_H
