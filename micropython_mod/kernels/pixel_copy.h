// A pixel's bytes copied in the layout kernels' inner loops (RESIZE_*,
// SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND): one, two or four bytes without a
// call to memcpy (the compiler makes them single loads and stores), longer
// pixels through it.
#ifndef TFLM_KERNELS_PIXEL_COPY_H
#define TFLM_KERNELS_PIXEL_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "engine/common.h"

static TFLM_ALWAYS_INLINE void tflm_pixel_copy(uint8_t *dst, const uint8_t *src, size_t n) {
    switch (n) {
        case 1:
            *dst = *src;
            break;
        case 2:
            memcpy(dst, src, 2);
            break;
        case 4:
            memcpy(dst, src, 4);
            break;
        default:
            memcpy(dst, src, n);
            break;
    }
}

#endif // TFLM_KERNELS_PIXEL_COPY_H
