// GATHER_ND: float32 and int8 params, int32 indices whose last dimension
// (at most 5) indexes the leading params dimensions, as TFLM's reference.
// Like TFLM, each index tuple is turned into a flat position (in wrapping
// int32 arithmetic) and only that position is checked: a tuple whose parts
// leave their dimensions but whose slice lies inside params is taken (on a
// 3x4 params, [0, 5] gives element [1, 1]); a slice outside params fails
// the invoke, as in TFLM.
#include "kernels/kernels.h"

#if TFLM_KERNEL_GATHER_ND

#define GATHER_ND_MAX (5)

typedef struct {
    uint32_t nd;          // values per index tuple
    uint32_t slices;      // index tuples
    uint32_t slice;       // values per slice
    uint32_t flat;        // params values
    uint32_t esize;
    int32_t count[GATHER_ND_MAX];  // params values per step of each indexed dimension
} gather_nd_data_t;

tflm_status_t tflm_gather_nd_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t params, idx, out;
    tflm_status_t st = tflm_prep_io_2_1(p, &params, &idx, &out);
    if (st) {
        return st;
    }
    if (params.type != TFLM_FLOAT32 && params.type != TFLM_INT8) {
        return tflm_prep_unsupported_type(p, "params", params.type);
    }
    if (idx.type != TFLM_INT32) {
        return tflm_prep_unsupported_type(p, "indices", idx.type);
    }
    if (out.type != params.type) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "params are %s, the output %s", tflm_type_name(params.type),
            tflm_type_name(out.type));
    }
    if (params.ndims < 1 || idx.ndims < 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "params and indices need at least one dimension");
    }
    uint32_t nd = (uint32_t)idx.dims[idx.ndims - 1];
    if (nd > params.ndims || nd > GATHER_ND_MAX) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "index tuples of %u values for %u-D params (at most %u)",
            (unsigned)nd, (unsigned)params.ndims, (unsigned)GATHER_ND_MAX);
    }
    uint64_t slices = 1, slice = 1;
    for (uint32_t i = 0; i + 1 < idx.ndims; ++i) {
        slices *= (uint32_t)idx.dims[i];
    }
    for (uint32_t i = nd; i < params.ndims; ++i) {
        slice *= (uint32_t)params.dims[i];
    }
    if (slices * slice != out.elements) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the output holds %u values, gather_nd gives %u",
            (unsigned)out.elements, (unsigned)TFLM_MIN(slices * slice, UINT32_MAX));
    }
    gather_nd_data_t *d = tflm_prep_alloc(p, sizeof(gather_nd_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->nd = nd;
    d->slices = (uint32_t)slices;
    d->slice = (uint32_t)slice;
    d->flat = params.elements;
    d->esize = (uint32_t)tflm_type_size(params.type);
    uint32_t remain = params.elements;
    for (uint32_t i = 0; i < nd; ++i) {
        if (params.dims[i] == 0) {
            // TFLM divides by it.
            return tflm_error(p->err, TFLM_ERR_VALUE, "indexed params dimension %u is empty", (unsigned)i);
        }
        remain /= (uint32_t)params.dims[i];
        d->count[i] = (int32_t)remain;
    }
    return TFLM_OK;
}

tflm_status_t tflm_gather_nd_eval(tflm_eval_t *e) {
    const gather_nd_data_t *d = e->data;
    const uint8_t *params = e->in[0];
    const int32_t *idx = e->in[1];
    uint8_t *out = e->out[0];
    const size_t bytes = (size_t)d->slice * d->esize;
    for (uint32_t s = 0; s < d->slices; ++s, idx += d->nd, out += bytes) {
        uint32_t at = 0;
        for (uint32_t j = 0; j < d->nd; ++j) {
            at += (uint32_t)idx[j] * (uint32_t)d->count[j];
        }
        int32_t from = (int32_t)at;
        if (from < 0 || (uint64_t)(uint32_t)from + d->slice > d->flat) {
            return tflm_error(e->err, TFLM_ERR_RUNTIME, "index tuple %u is out of bounds", (unsigned)s);
        }
        memcpy(out, params + (size_t)(uint32_t)from * d->esize, bytes);
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_GATHER_ND
