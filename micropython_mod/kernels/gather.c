// GATHER: float32 and int8 values, int32 indices, with axis and batch_dims,
// as TFLM's reference. An index outside the axis fails the invoke, as in TFLM.
#include "kernels/kernels.h"

#if TFLM_KERNEL_GATHER

// GatherOptions fields

typedef struct {
    uint32_t batch;
    uint32_t outer;
    uint32_t coords;     // indices per batch
    int32_t axis_size;
    uint32_t inner_bytes;
} gather_data_t;

tflm_status_t tflm_gather_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, idx, out;
    tflm_status_t st = tflm_prep_io_2_1(p, &in, &idx, &out);
    if (st) {
        return st;
    }
    if (idx.type != TFLM_INT32) {
        return tflm_prep_unsupported_type(p, "indices", idx.type);
    }
    if (in.type != TFLM_FLOAT32 && in.type != TFLM_INT8) {
        return tflm_prep_unsupported_type(p, "input", in.type);
    }
    if ((st = tflm_prep_same_type(p, &in, &out))) {
        return st;
    }
    const int32_t in_dims = in.ndims, idx_dims = idx.ndims;
    int32_t axis = tflm_prep_opt_i32(p, TFLM_OPT_GATHER_AXIS, 0);
    if (axis < 0) {
        axis += in_dims;
    }
    if (axis < 0 || axis >= in_dims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "axis %d out of range", (int)tflm_prep_opt_i32(p, TFLM_OPT_GATHER_AXIS, 0));
    }
    int32_t batch_dims = tflm_prep_opt_i32(p, TFLM_OPT_GATHER_BATCH_DIMS, 0);
    if (batch_dims < 0) {
        batch_dims += idx_dims;
    }
    if (batch_dims > axis || batch_dims < 0 || batch_dims >= in_dims || batch_dims > idx_dims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "batch_dims %d out of range",
            (int)tflm_prep_opt_i32(p, TFLM_OPT_GATHER_BATCH_DIMS, 0));
    }
    uint64_t batch = 1, outer = 1, inner = 1, coords = 1;
    for (int32_t i = 0; i < batch_dims; ++i) {
        if (in.dims[i] != idx.dims[i]) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "input and indices differ in batch dimension %d", (int)i);
        }
        batch *= (uint32_t)in.dims[i];
    }
    for (int32_t i = batch_dims; i < axis; ++i) {
        outer *= (uint32_t)in.dims[i];
    }
    for (int32_t i = axis + 1; i < in_dims; ++i) {
        inner *= (uint32_t)in.dims[i];
    }
    for (int32_t i = batch_dims; i < idx_dims; ++i) {
        coords *= (uint32_t)idx.dims[i];
    }
    // TFLM sets the output's shape itself; the model's must hold as many values.
    uint64_t total = batch * outer * coords * inner;
    if (in.elements == 0 || idx.elements == 0) {
        total = 0;
    }
    if (total != out.elements) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output has %u values, gather gives %u",
            (unsigned)out.elements, (unsigned)TFLM_MIN(total, UINT32_MAX));
    }
    gather_data_t *d = tflm_prep_alloc(p, sizeof(gather_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->batch = total ? (uint32_t)batch : 0;
    d->outer = (uint32_t)outer;
    d->coords = (uint32_t)coords;
    d->axis_size = in.dims[axis];
    d->inner_bytes = (uint32_t)inner * (uint32_t)tflm_type_size(in.type);
    return TFLM_OK;
}

tflm_status_t tflm_gather_eval(tflm_eval_t *e) {
    const gather_data_t *d = e->data;
    const uint8_t *in = e->in[0];
    const uint8_t *idx = e->in[1];
    uint8_t *out = e->out[0];
    const size_t inner = d->inner_bytes;
    for (uint32_t b = 0; b < d->batch; ++b) {
        const uint8_t *coords = idx + (size_t)b * d->coords * 4u;
        for (uint32_t o = 0; o < d->outer; ++o) {
            const uint8_t *src = in + ((size_t)b * d->outer + o) * (size_t)d->axis_size * inner;
            for (uint32_t c = 0; c < d->coords; ++c) {
                int32_t at = tflm_rd_i32(coords + 4u * c);
                if (at < 0 || at >= d->axis_size) {
                    return tflm_error(e->err, TFLM_ERR_RUNTIME, "index %d out of range [0, %d)",
                        (int)at, (int)d->axis_size);
                }
                if (inner) {
                    memcpy(out, src + (size_t)at * inner, inner);
                    out += inner;
                }
            }
        }
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_GATHER
