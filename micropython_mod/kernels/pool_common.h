// The pooling kernels' data (kernels/pooling.c), also read by the
// patch-based stages (engine/patch.c), which run a pool over a patch by
// changing its geometry.
#ifndef TFLM_KERNELS_POOL_COMMON_H
#define TFLM_KERNELS_POOL_COMMON_H

#include <stdint.h>

enum { POOL_FLOAT32, POOL_INT8, POOL_INT16 };

typedef struct {
    uint8_t kind;
    uint8_t reserved;
    // Window geometry fits 16 bits (checked in prepare): keeps the block small.
    uint16_t stride_h;
    uint16_t stride_w;
    uint16_t filter_h;
    uint16_t filter_w;
    uint16_t pad_h;
    uint16_t pad_w;
    uint16_t reserved2;
    int32_t batches;
    int32_t in_h;
    int32_t in_w;
    int32_t depth;
    int32_t out_h;
    int32_t out_w;
    union {
        int32_t q;
        float f;
    } act_min, act_max;
} pool_data_t;

#endif // TFLM_KERNELS_POOL_COMMON_H
