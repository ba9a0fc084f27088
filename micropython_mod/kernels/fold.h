// Starting sums with the input offset folded in, for the data of a prepared
// model (tflm_prep_alloc_streamed): each row of int8 weights starts at its
// bias plus the offset times the row's sum, so the kernel's loops multiply
// the input as it is. The sums wrap modulo 2^32 as the loops' do: the same
// bits in any order.
#ifndef TFLM_KERNELS_FOLD_H
#define TFLM_KERNELS_FOLD_H

#include "engine/kernel.h"
#include "kernels/mm_s8.h"

// Words word0 .. word0 + rows - 1 of the streamed data: row r's start,
// bias[r] (int32, NULL: none) + offset * sum of w[r][0 .. depth).
static inline void tflm_fold_starts(tflm_prepare_t *p, uint32_t word0, const int8_t *w, int32_t rows,
    int32_t depth, const uint8_t *bias, int32_t offset) {
    for (int32_t r = 0; r < rows; ++r, w += depth) {
        uint32_t b = bias ? tflm_rd_u32(bias + 4 * (uint32_t)r) : 0u;
        tflm_prep_put_u32(p, word0 + (uint32_t)r, b + tflm_sum_s8(w, depth) * (uint32_t)offset);
    }
}

#endif // TFLM_KERNELS_FOLD_H
