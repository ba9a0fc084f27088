// The out-of-line helpers of the int8 matrix blocks (kernels/mm_s8.h), for
// the kernels that fold an input offset into their starting sums.
#include "kernels/loop_opt.h"
#include "tflm_config.h"
#include "kernels/mm_s8.h"

#if TFLM_KERNEL_CONV_2D || TFLM_KERNEL_FULLY_CONNECTED || TFLM_KERNEL_UNIDIRECTIONAL_SEQUENCE_LSTM \
    || TFLM_KERNEL_SVDF || TFLM_KERNEL_BATCH_MATMUL

// sum of n int8 values (a filter's sum, for folding the input offset):
// after the bytes up to a word boundary (the loads need one on Armv6-M and
// Xtensa), two words of four values a step, their values added into two
// 16-bit lanes, which go into the sum every TFLM_SUM_S8_STEPS steps, before
// they can overflow; the last few values (up to 7) one by one. With DSP,
// two SXTAB16 a word (a lane takes two values a word: |lane| <= 128 * 256);
// elsewhere each byte is made unsigned, plus 128 (its top bit flipped), and
// masked two by two into the lanes (a lane takes up to 2 * 255 a word),
// 128 a value taken off at the end: a few instructions a word where a loop
// of byte loads takes three or four a value. Out of line, in one place:
// the callers' loops keep their registers.
#define TFLM_SUM_S8_STEPS (64)
uint32_t tflm_sum_s8(const int8_t *w, int32_t n) {
    uint32_t s = 0;
    for (; n > 0 && ((uintptr_t)w & 3u) != 0; --n, ++w) {
        s += (uint32_t)(int32_t)*w;
    }
    while (n >= 8) {
        const int32_t steps = n >> 3 < TFLM_SUM_S8_STEPS ? n >> 3 : TFLM_SUM_S8_STEPS;
        const int8_t *end = w + 8 * steps;
        n -= 8 * steps;
        uint32_t lanes = 0;
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
        // Two steps a turn (four loads back to back, the loop's end test
        // and branch once for 16 values), an odd one first.
        if (steps & 1) {
            const uint32_t a = tflm_ld_u32(w), b = tflm_ld_u32(w + 4);
            w += 8;
            lanes = tflm_sxtab16(lanes, a);
            lanes = tflm_sxtab16_ror8(lanes, a);
            lanes = tflm_sxtab16(lanes, b);
            lanes = tflm_sxtab16_ror8(lanes, b);
        }
        while (w != end) {
            const uint32_t a = tflm_ld_u32(w), b = tflm_ld_u32(w + 4), c = tflm_ld_u32(w + 8),
                           d = tflm_ld_u32(w + 12);
            w += 16;
            lanes = tflm_sxtab16(lanes, a);
            lanes = tflm_sxtab16_ror8(lanes, a);
            lanes = tflm_sxtab16(lanes, b);
            lanes = tflm_sxtab16_ror8(lanes, b);
            lanes = tflm_sxtab16(lanes, c);
            lanes = tflm_sxtab16_ror8(lanes, c);
            lanes = tflm_sxtab16(lanes, d);
            lanes = tflm_sxtab16_ror8(lanes, d);
        }
        s = tflm_smlad(lanes, 0x00010001u, s);
#else
        const uint32_t m = 0x00ff00ffu;
        s -= 1024u * (uint32_t)steps;
        do {
            const uint32_t a = tflm_ld_u32_aligned(w) ^ 0x80808080u, b = tflm_ld_u32_aligned(w + 4) ^ 0x80808080u;
            w += 8;
            lanes += (a & m) + ((a >> 8) & m) + (b & m) + ((b >> 8) & m);
        } while (w != end);
        s += (lanes & 0xffffu) + (lanes >> 16);
#endif
    }
    for (; n > 0; --n, ++w) {
        s += (uint32_t)(int32_t)*w;
    }
    return s;
}

#endif
