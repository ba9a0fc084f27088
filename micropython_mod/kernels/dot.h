// Dot products of the kernels' inner loops (conv, depthwise, fully
// connected, LSTM, SVDF), four products per step: fewer loop branches.
// Integer sums wrap as the reference's int32/int64 sums do on its targets
// (wrapping addition is associative, so they may be grouped); float sums add
// each product in order, as TFLM rounds them.
#ifndef TFLM_KERNELS_DOT_H
#define TFLM_KERNELS_DOT_H

#include "engine/common.h"
#include "kernels/arch.h"

#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
// With DSP, four values per step: x widened to halfwords with SXTB16 and its
// offset added with SADD16 (x + x_offset is within 9 bits for int8 zero
// points, each product within 16 x 16 bits), two products per SMLAD. Lanes
// 0/2 and 1/3 of x and of w pair up alike.
static TFLM_ALWAYS_INLINE uint32_t tflm_dot_s8_step4(uint32_t x02, uint32_t x13, const int8_t *w, uint32_t acc) {
    const uint32_t wv = tflm_ld_u32(w);
    acc = tflm_smlad(x02, tflm_sxtb16(wv), acc);
    return tflm_smlad(x13, tflm_sxtb16_ror8(wv), acc);
}
// x's halfwords plus the offset's; an offset folded away by the caller (a
// constant 0 once inlined) costs nothing.
static TFLM_ALWAYS_INLINE uint32_t tflm_dot_s8_add_off2(uint32_t x, uint32_t off2) {
    return (__builtin_constant_p(off2) && off2 == 0u) ? x : tflm_sadd16(x, off2);
}
#endif

// sum w[i] * (x[i] + x_offset) over n int8 values.
static inline uint32_t tflm_dot_s8(const int8_t *w, const int8_t *x, int32_t n, int32_t x_offset) {
    uint32_t acc = 0;
    int32_t i = 0;
#if TFLM_KERNEL_ARCH == TFLM_ARCH_V6M
    // Thumb-1 loads bytes with a register offset only: one index, counting
    // up to zero, serves both streams, and its increment sets the flags.
    x += n;
    w += n;
    for (int32_t k = -n; k != 0; ++k) {
        acc += (uint32_t)(w[k] * (x[k] + x_offset));
    }
    n = 0;
#endif
    for (; i + 4 <= n; i += 4) {
        acc += (uint32_t)(w[i] * (x[i] + x_offset)) + (uint32_t)(w[i + 1] * (x[i + 1] + x_offset))
            + (uint32_t)(w[i + 2] * (x[i + 2] + x_offset)) + (uint32_t)(w[i + 3] * (x[i + 3] + x_offset));
    }
    for (; i < n; ++i) {
        acc += (uint32_t)(w[i] * (x[i] + x_offset));
    }
    return acc;
}

// The same for rows of many values (fully connected, SVDF): with DSP four
// values per step. (The conv kernel's generic path, whose rows are a few
// channels, keeps the above: set-up per call costs more than it saves.)
static TFLM_ALWAYS_INLINE uint32_t tflm_dot_s8_row(const int8_t *w, const int8_t *x, int32_t n, int32_t x_offset) {
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
    uint32_t acc = 0;
    int32_t i = 0;
    const uint32_t off2 = ((uint32_t)x_offset & 0xffffu) * 0x00010001u;
    // x + x_offset must fit a halfword (it always does for a valid zero point).
    const int32_t n4 = x_offset >= -32640 && x_offset <= 32639 ? n : 0;
    for (; i + 4 <= n4; i += 4) {
        const uint32_t xv = tflm_ld_u32(x + i);
        acc = tflm_dot_s8_step4(tflm_dot_s8_add_off2(tflm_sxtb16(xv), off2),
            tflm_dot_s8_add_off2(tflm_sxtb16_ror8(xv), off2), w + i, acc);
    }
    return acc + tflm_dot_s8(w + i, x + i, n - i, x_offset);
#else
    return tflm_dot_s8(w, x, n, x_offset);
#endif
}

// Two such sums over the same input, for two filters: each input value is
// loaded once.
static TFLM_ALWAYS_INLINE void tflm_dot2_s8(const int8_t *w0, const int8_t *w1, const int8_t *x, int32_t n, int32_t x_offset,
    uint32_t *acc0, uint32_t *acc1) {
    uint32_t a0 = 0, a1 = 0;
    int32_t i = 0;
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
    const uint32_t off2 = ((uint32_t)x_offset & 0xffffu) * 0x00010001u;
    // x + x_offset must fit a halfword (it always does for a valid zero point).
    const int32_t n4 = x_offset >= -32640 && x_offset <= 32639 ? n : 0;
    for (; i + 4 <= n4; i += 4) {
        const uint32_t xv = tflm_ld_u32(x + i);
        const uint32_t x02 = tflm_dot_s8_add_off2(tflm_sxtb16(xv), off2);
        const uint32_t x13 = tflm_dot_s8_add_off2(tflm_sxtb16_ror8(xv), off2);
        a0 = tflm_dot_s8_step4(x02, x13, w0 + i, a0);
        a1 = tflm_dot_s8_step4(x02, x13, w1 + i, a1);
    }
#endif
#if TFLM_KERNEL_ARCH == TFLM_ARCH_V6M
    // Thumb-1 loads bytes with a register offset only: one index, counting
    // up to zero, serves the three streams, and its increment sets the flags.
    x += n;
    w0 += n;
    w1 += n;
    for (int32_t k = -n; k != 0; ++k) {
        const int32_t xk = x[k] + x_offset;
        a0 += (uint32_t)(w0[k] * xk);
        a1 += (uint32_t)(w1[k] * xk);
    }
    n = 0;
#endif
    for (; i + 4 <= n; i += 4) {
        const int32_t x0 = x[i] + x_offset, x1 = x[i + 1] + x_offset;
        const int32_t x2 = x[i + 2] + x_offset, x3 = x[i + 3] + x_offset;
        a0 += (uint32_t)(w0[i] * x0) + (uint32_t)(w0[i + 1] * x1) + (uint32_t)(w0[i + 2] * x2)
            + (uint32_t)(w0[i + 3] * x3);
        a1 += (uint32_t)(w1[i] * x0) + (uint32_t)(w1[i + 1] * x1) + (uint32_t)(w1[i + 2] * x2)
            + (uint32_t)(w1[i + 3] * x3);
    }
    for (; i < n; ++i) {
        const int32_t xi = x[i] + x_offset;
        a0 += (uint32_t)(w0[i] * xi);
        a1 += (uint32_t)(w1[i] * xi);
    }
    *acc0 += a0;
    *acc1 += a1;
}

#if TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2
// Four such sums over the same input (Thumb-2 has the registers for four
// sums and four weight pointers): each input value loaded once per four
// multiply-accumulates.
static TFLM_ALWAYS_INLINE void tflm_dot4_s8(const int8_t *w0, int32_t stride, const int8_t *x, int32_t n, int32_t x_offset,
    uint32_t *acc) {
    const int8_t *w1 = w0 + stride, *w2 = w1 + stride, *w3 = w2 + stride;
    uint32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
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
#endif

// sum (w[i] + w_offset) * (x[i] + x_offset) over n int8 values.
static inline uint32_t tflm_dot_s8_off(const int8_t *w, const int8_t *x, int32_t n, int32_t w_offset,
    int32_t x_offset) {
    uint32_t acc = 0;
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        acc += (uint32_t)((w[i] + w_offset) * (x[i] + x_offset))
            + (uint32_t)((w[i + 1] + w_offset) * (x[i + 1] + x_offset))
            + (uint32_t)((w[i + 2] + w_offset) * (x[i + 2] + x_offset))
            + (uint32_t)((w[i + 3] + w_offset) * (x[i + 3] + x_offset));
    }
    for (; i < n; ++i) {
        acc += (uint32_t)((w[i] + w_offset) * (x[i] + x_offset));
    }
    return acc;
}

// sum w[i] * x[i] over int8 weights and int16 values, 32-bit sum.
static inline uint32_t tflm_dot_s16_s8(const int8_t *w, const int16_t *x, int32_t n) {
    uint32_t acc = 0;
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        acc += (uint32_t)(w[i] * x[i]) + (uint32_t)(w[i + 1] * x[i + 1]) + (uint32_t)(w[i + 2] * x[i + 2])
            + (uint32_t)(w[i + 3] * x[i + 3]);
    }
    for (; i < n; ++i) {
        acc += (uint32_t)(w[i] * x[i]);
    }
    return acc;
}

// The same with a 64-bit sum (each product fits 32 bits).
static inline uint64_t tflm_dot64_s16_s8(const int8_t *w, const int16_t *x, int32_t n) {
    uint64_t acc = 0;
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        acc += (uint64_t)(int64_t)(w[i] * x[i]) + (uint64_t)(int64_t)(w[i + 1] * x[i + 1])
            + (uint64_t)(int64_t)(w[i + 2] * x[i + 2]) + (uint64_t)(int64_t)(w[i + 3] * x[i + 3]);
    }
    for (; i < n; ++i) {
        acc += (uint64_t)(int64_t)(w[i] * x[i]);
    }
    return acc;
}

// total + sum w[i] * x[i], each product added in order (four per step, the
// additions still one after another: the same roundings).
static inline float tflm_dot_f32(float total, const float *w, const float *x, int32_t n) {
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        total += x[i] * w[i];
        total += x[i + 1] * w[i + 1];
        total += x[i + 2] * w[i + 2];
        total += x[i + 3] * w[i + 3];
    }
    for (; i < n; ++i) {
        total += x[i] * w[i];
    }
    return total;
}

// Two such sums over the same input, for two filters, each in its own order.
static inline void tflm_dot2_f32(float *total0, float *total1, const float *w0, const float *w1, const float *x,
    int32_t n) {
    float t0 = *total0, t1 = *total1;
    int32_t i = 0;
    for (; i + 2 <= n; i += 2) {
        const float xa = x[i], xb = x[i + 1];
        t0 += xa * w0[i];
        t1 += xa * w1[i];
        t0 += xb * w0[i + 1];
        t1 += xb * w1[i + 1];
    }
    for (; i < n; ++i) {
        const float xi = x[i];
        t0 += xi * w0[i];
        t1 += xi * w1[i];
    }
    *total0 = t0;
    *total1 = t1;
}

// Thumb-2: four units at a time first (u and wu_ are TFLM_DOT_S8_UNITS's).
#if TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2
#define TFLM_DOT_S8_UNITS4(xr, depth, units, wu, x_offset, OUT) \
    for (; u + 4 <= (units); u += 4, wu += 4 * (depth)) { \
        uint32_t acc4_[4]; \
        tflm_dot4_s8(wu, (depth), xr, (depth), (x_offset), acc4_); \
        OUT(acc4_[0], u); \
        OUT(acc4_[1], u + 1); \
        OUT(acc4_[2], u + 2); \
        OUT(acc4_[3], u + 3); \
    }
#else
#define TFLM_DOT_S8_UNITS4(xr, depth, units, wu, x_offset, OUT)
#endif

// Each of `rows` int8 rows of x (depth values, x_offset added) against each
// of `units` int8 weight rows (w_offset added): OUT(acc, u) finishes unit u's
// wrapped sum, row by row, unit by unit. With symmetric weights (offset 0),
// two units at a time share the row's loads, four on Thumb-2 (with DSP the
// LSTM's gates, rows of a few dozen values, were faster in pairs; the
// fully connected kernel has its own groups, kernels/fully_connected.c).
#define TFLM_DOT_S8_UNITS(x, rows, depth, units, w, x_offset, w_offset, OUT) \
    for (int32_t r_ = 0; r_ < (rows); ++r_) { \
        const int8_t *xr_ = (x) + r_ * (depth); \
        const int8_t *wu_ = (w); \
        int32_t u = 0; \
        if ((w_offset) == 0) { \
            TFLM_DOT_S8_UNITS4(xr_, depth, units, wu_, x_offset, OUT) \
            for (; u + 2 <= (units); u += 2, wu_ += 2 * (depth)) { \
                uint32_t acc0_ = 0, acc1_ = 0; \
                tflm_dot2_s8(wu_, wu_ + (depth), xr_, (depth), (x_offset), &acc0_, &acc1_); \
                OUT(acc0_, u); \
                OUT(acc1_, u + 1); \
            } \
        } \
        for (; u < (units); ++u, wu_ += (depth)) { \
            uint32_t acc_ = (w_offset) == 0 ? tflm_dot_s8_row(wu_, xr_, (depth), (x_offset)) \
                : tflm_dot_s8_off(wu_, xr_, (depth), (w_offset), (x_offset)); \
            OUT(acc_, u); \
        } \
    }

#endif // TFLM_KERNELS_DOT_H
