// DEPTH_TO_SPACE and SPACE_TO_DEPTH: float32 and int8 NHWC tensors, a
// block size from the options, as TFLM's reference.
//
// Both move the same pieces: in row y of the spatial tensor, block_size
// neighbouring pixels (block_size x depth values) are one contiguous run of
// the deep tensor's pixel (y / block_size, x / block_size), at
// (y % block_size) x block_size x depth. So each is one copy per block.
#include "kernels/kernels.h"

#if TFLM_KERNEL_DEPTH_TO_SPACE || TFLM_KERNEL_SPACE_TO_DEPTH

typedef struct {
    uint8_t to_space;   // DEPTH_TO_SPACE
    uint8_t elem_size;
    uint16_t reserved;
    int32_t block;
    int32_t batches;
    int32_t rows;       // of the spatial tensor
    int32_t blocks;     // blocks per row: the deep tensor's width
    int32_t depth;      // of the spatial tensor
} depth_space_data_t;

static tflm_status_t depth_space_prepare(tflm_prepare_t *p, bool to_space) {
    // Not tflm_prep_unary(): a block that does not fit says so below.
    static const uint8_t types[] = {TFLM_FLOAT32, TFLM_INT8};
    tflm_tinfo_t in, out;
    tflm_status_t st = tflm_prep_io_1_1(p, &in, &out);
    if (st || (st = tflm_prep_type_in(p, "input", &in, types, sizeof(types), NULL))
        || (st = tflm_prep_same_type(p, &in, &out))) {
        return st;
    }
    if (in.ndims != 4 || out.ndims != 4) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input and output need 4 dimensions");
    }
    const int32_t block = to_space ? tflm_prep_opt_i32(p, TFLM_OPT_DEPTH_TO_SPACE_BLOCK_SIZE, 0)
        : tflm_prep_opt_i32(p, TFLM_OPT_SPACE_TO_DEPTH_BLOCK_SIZE, 0);
    // The spatial and the deep tensor's shapes, as TFLM works out the output's.
    const tflm_tinfo_t *space = to_space ? &out : &in, *deep = to_space ? &in : &out;
    const int64_t bb = (int64_t)block * block;
    bool ok = block >= 1 && bb <= INT32_MAX && space->dims[0] == deep->dims[0]
        && (int64_t)space->dims[1] == (int64_t)deep->dims[1] * block
        && (int64_t)space->dims[2] == (int64_t)deep->dims[2] * block
        && (int64_t)deep->dims[3] == (int64_t)space->dims[3] * bb;
    if (!ok) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "block size %d does not turn %dx%dx%dx%d into %dx%dx%dx%d", (int)block,
            (int)in.dims[0], (int)in.dims[1], (int)in.dims[2], (int)in.dims[3],
            (int)out.dims[0], (int)out.dims[1], (int)out.dims[2], (int)out.dims[3]);
    }
    depth_space_data_t *d = tflm_prep_alloc(p, sizeof(depth_space_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->to_space = to_space;
    d->elem_size = (uint8_t)tflm_type_size(in.type);
    d->block = block;
    d->batches = space->dims[0];
    d->rows = space->dims[1];
    d->blocks = deep->dims[2];
    d->depth = space->dims[3];
    return TFLM_OK;
}

static tflm_status_t depth_space_eval(tflm_eval_t *e) {
    const depth_space_data_t *d = e->data;
    const int32_t block = d->block, blocks = d->blocks;
    const size_t run = (size_t)block * (size_t)d->depth * d->elem_size;  // one block's bytes
    const size_t deep_pixel = run * (size_t)block;
    const size_t deep_row = deep_pixel * (size_t)blocks;
    const int32_t images_rows = d->batches * d->rows;
    // The spatial tensor is walked in order, row by row; the deep one is
    // addressed: row y is deep row y / block, at offset (y % block) x run.
    const uint8_t *src = e->in[0];
    uint8_t *dst = e->out[0];
    for (int32_t y = 0; y < images_rows; ++y) {
        const size_t deep_at = (size_t)(y / block) * deep_row + (size_t)(y % block) * run;
        if (d->to_space) {
            const uint8_t *from = src + deep_at;
            for (int32_t x = 0; x < blocks; ++x, from += deep_pixel, dst += run) {
                memcpy(dst, from, run);
            }
        } else {
            uint8_t *to = dst + deep_at;
            for (int32_t x = 0; x < blocks; ++x, to += deep_pixel, src += run) {
                memcpy(to, src, run);
            }
        }
    }
    return TFLM_OK;
}

#endif

#if TFLM_KERNEL_DEPTH_TO_SPACE
tflm_status_t tflm_depth_to_space_prepare(tflm_prepare_t *p) {
    return depth_space_prepare(p, true);
}

tflm_status_t tflm_depth_to_space_eval(tflm_eval_t *e) {
    return depth_space_eval(e);
}
#endif

#if TFLM_KERNEL_SPACE_TO_DEPTH
tflm_status_t tflm_space_to_depth_prepare(tflm_prepare_t *p) {
    return depth_space_prepare(p, false);
}

tflm_status_t tflm_space_to_depth_eval(tflm_eval_t *e) {
    return depth_space_eval(e);
}
#endif
