// The int8 average pool's steps for windows of at most TFLM_POOL_S8_TAPS
// taps: four channels summed a word at a time in 16-bit lanes, and the
// rounded average by a multiply instead of a division per channel (Armv6-M
// has no divide instruction). Bit-exact with the reference's int32 sum and
// its division rounded half away from zero; tests/test_speed_paths.py checks
// the average for every tap count and sum.
#ifndef TFLM_KERNELS_POOL_S8_H
#define TFLM_KERNELS_POOL_S8_H

#include "kernels/arch.h"

// Taps whose int8 sum fits a 16-bit lane: |sum| <= 128 * 256 in a signed
// lane (SXTAB16), sum + 128 * taps <= 255 * 256 in an unsigned one.
#define TFLM_POOL_S8_TAPS (256)

// ceil(2^24 / taps), set up once per window.
static inline uint32_t tflm_pool_s8_recip(int32_t taps) {
    return ((1u << 24) + (uint32_t)taps - 1u) / (uint32_t)taps;
}

// (sum +- taps / 2) / taps truncated, the reference's average, for |sum| <=
// 128 * taps and taps <= 256. With u = |sum| + taps / 2 <= 128.5 taps and
// recip = (2^24 + e) / taps, e < taps: u * recip / 2^24 = u / taps + u * e /
// (taps * 2^24), and u * e < 128.5 * 256 * 255 < 2^24 keeps the floor that
// of u / taps; u * recip < 128.5 * 2^24 + 128.5 * 256 fits 32 bits.
static inline int32_t tflm_pool_s8_average(int32_t sum, int32_t half, uint32_t recip) {
    // Sign and magnitude without branches (a sum of 0 gives 0 either way).
    const uint32_t sign = (uint32_t)(sum >> 31);
    const uint32_t u = ((uint32_t)sum ^ sign) - sign + (uint32_t)half;
    return (int32_t)((((u * recip) >> 24) ^ sign) - sign);
}

// The sums of four channels (a word of each tap, word-aligned) over a
// window of rows x cols taps, at most TFLM_POOL_S8_TAPS; col_step and
// row_step in bytes, row_step from the end of a row to the next. Channels 0
// and 2 come back in the halfwords of *even, 1 and 3 in those of *odd, as
// tflm_pool_s8_lane reads them.
static inline void tflm_pool_s8_sum4(const int8_t *p, int32_t rows, int32_t cols, int32_t col_step,
    int32_t row_step, uint32_t *even, uint32_t *odd) {
    uint32_t e = 0, o = 0;
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
    // Signed lanes.
    for (int32_t r = 0; r < rows; ++r, p += row_step) {
        // Up to the row's end: no count of its own in the loop.
        for (const int8_t *end = p + cols * col_step; p != end; p += col_step) {
            const uint32_t v = tflm_ld_u32_aligned(p);
            e = tflm_sxtab16(e, v);
            o = tflm_sxtab16_ror8(o, v);
        }
    }
#else
    // Unsigned lanes of value + 128 (the sign bit flipped): the bias comes
    // off in tflm_pool_s8_lane.
    const uint32_t lanes = 0x00ff00ffu;
    for (int32_t r = 0; r < rows; ++r, p += row_step) {
        for (const int8_t *end = p + cols * col_step; p != end; p += col_step) {
            const uint32_t v = tflm_ld_u32_aligned(p) ^ 0x80808080u;
            e += v & lanes;
            o += (v >> 8) & lanes;
        }
    }
#endif
    *even = e;
    *odd = o;
}

#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
// Eight channels (two words of each tap) as tflm_pool_s8_sum4 sums four:
// one loop's steps for both words. lanes: the first word's even and odd
// lanes, then the second's.
static inline void tflm_pool_s8_sum8(const int8_t *p, int32_t rows, int32_t cols, int32_t col_step,
    int32_t row_step, uint32_t lanes[4]) {
    uint32_t e0 = 0, o0 = 0, e1 = 0, o1 = 0;
    for (int32_t r = 0; r < rows; ++r, p += row_step) {
        for (const int8_t *end = p + cols * col_step; p != end; p += col_step) {
            const uint32_t v0 = tflm_ld_u32_aligned(p), v1 = tflm_ld_u32_aligned(p + 4);
            e0 = tflm_sxtab16(e0, v0);
            o0 = tflm_sxtab16_ror8(o0, v0);
            e1 = tflm_sxtab16(e1, v1);
            o1 = tflm_sxtab16_ror8(o1, v1);
        }
    }
    lanes[0] = e0;
    lanes[1] = o0;
    lanes[2] = e1;
    lanes[3] = o1;
}
#endif

// The sum in the low halfword of a word from tflm_pool_s8_sum4, over `taps` taps.
static inline int32_t tflm_pool_s8_lane(uint32_t lanes, int32_t taps) {
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
    (void)taps;
    return (int16_t)(lanes & 0xffffu);
#else
    return (int32_t)(lanes & 0xffffu) - 128 * taps;
#endif
}

#endif // TFLM_KERNELS_POOL_S8_H
