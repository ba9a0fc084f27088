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
// elsewhere one value per step, four steps unrolled.
#ifndef TFLM_KERNELS_MM_S8_H
#define TFLM_KERNELS_MM_S8_H

#include "kernels/arch.h"

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

// tflm_mm_s8_2x2 on widened pixels: xw from tflm_mm_s8_widen2 up to xw_end,
// filter 0 at w0 and filter 1 w1_at bytes after it. Per 4 values: two
// doubleword loads, one word per filter widened, eight SMLAD.
static TFLM_ALWAYS_INLINE void tflm_mm_s16s8_2x2(const uint32_t *xw, const uint32_t *xw_end, const int8_t *w0,
    int32_t w1_at, uint32_t *a) {
    uint32_t a00 = a[0], a01 = a[1], a10 = a[2], a11 = a[3];
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
    a[0] = a00;
    a[1] = a01;
    a[2] = a10;
    a[3] = a11;
}

#endif // TFLM_KERNEL_ARCH == TFLM_ARCH_DSP

// sum of n int8 values (a filter's sum, for folding the input offset).
static inline uint32_t tflm_sum_s8(const int8_t *w, int32_t n) {
    uint32_t s = 0;
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
    for (; n >= 4; n -= 4, w += 4) {
        const uint32_t v = tflm_ld_u32(w);
        s = tflm_smlad(tflm_sxtb16(v), 0x00010001u, s);
        s = tflm_smlad(tflm_sxtb16_ror8(v), 0x00010001u, s);
    }
#endif
    for (int32_t k = 0; k < n; ++k) {
        s += (uint32_t)(int32_t)w[k];
    }
    return s;
}

#endif // TFLM_KERNELS_MM_S8_H
