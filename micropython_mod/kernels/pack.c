// PACK (float32, int8, int16, int32, int64) and UNPACK (float32, int8,
// int16, int32), as TFLM's reference: tensors stacked along a new axis, or a
// tensor unstacked along one.
#include "kernels/kernels.h"

#if TFLM_KERNEL_PACK || TFLM_KERNEL_UNPACK

// PackOptions / UnpackOptions fields (same layout)

typedef struct {
    uint32_t outer;
    uint32_t count;
    uint32_t bytes; // bytes of one piece per outer step
} pack_data_t;

// The shared checks: `whole` is the stacked tensor, the pieces are the
// inputs (PACK) or outputs (UNPACK).
static tflm_status_t pack_prepare(tflm_prepare_t *p, bool pack) {
    uint32_t n = pack ? tflm_prep_num_inputs(p) : tflm_prep_num_outputs(p);
    uint32_t n_whole = pack ? tflm_prep_num_outputs(p) : tflm_prep_num_inputs(p);
    if (n_whole != 1 || n < 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "has %u inputs and %u outputs",
            (unsigned)tflm_prep_num_inputs(p), (unsigned)tflm_prep_num_outputs(p));
    }
    int32_t count = tflm_prep_opt_i32(p, pack ? TFLM_OPT_PACK_VALUES_COUNT : TFLM_OPT_UNPACK_NUM, 0);
    if (count != (int32_t)n) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "option says %d tensors, the op has %u", (int)count, (unsigned)n);
    }
    tflm_tinfo_t whole, piece;
    tflm_status_t st = pack ? tflm_prep_output(p, 0, &whole) : tflm_prep_input(p, 0, &whole);
    if (st) {
        return st;
    }
    if (whole.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input missing");
    }
    switch (whole.type) {
        case TFLM_FLOAT32:
        case TFLM_INT8:
        case TFLM_INT16:
        case TFLM_INT32:
            break;
        case TFLM_INT64:
            if (pack) {
                break;
            }
            // fall through
        default:
            return tflm_prep_unsupported_type(p, pack ? "output" : "input", whole.type);
    }
    int32_t axis = tflm_prep_opt_i32(p, pack ? TFLM_OPT_PACK_AXIS : TFLM_OPT_UNPACK_AXIS, 0);
    if (axis < 0) {
        axis += (int32_t)whole.ndims;
    }
    if (axis < 0 || axis >= (int32_t)whole.ndims || whole.dims[axis] != (int32_t)n) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "axis %d does not hold the %u tensors",
            (int)tflm_prep_opt_i32(p, pack ? TFLM_OPT_PACK_AXIS : TFLM_OPT_UNPACK_AXIS, 0), (unsigned)n);
    }
    uint32_t outer = 1, inner = 1;
    for (int32_t i = 0; i < axis; ++i) {
        outer *= (uint32_t)whole.dims[i];
    }
    for (int32_t i = axis + 1; i < (int32_t)whole.ndims; ++i) {
        inner *= (uint32_t)whole.dims[i];
    }
    if (whole.elements == 0) {
        outer = 0;
    }
    for (uint32_t k = 0; k < n; ++k) {
        if ((st = pack ? tflm_prep_input(p, k, &piece) : tflm_prep_output(p, k, &piece))) {
            return st;
        }
        if (piece.index < 0 || piece.type != whole.type || (outer && piece.elements != outer * inner)) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "tensor %u does not match the stacked one", (unsigned)k);
        }
    }
    pack_data_t *d = tflm_prep_alloc(p, sizeof(pack_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->outer = outer;
    d->count = n;
    d->bytes = inner * (uint32_t)tflm_type_size(whole.type);
    return TFLM_OK;
}

// One loop both ways: piece i's k-th run of `bytes` is run k * count + i of
// the stacked tensor.
static tflm_status_t pack_eval(tflm_eval_t *e, bool pack) {
    const pack_data_t *d = e->data;
    uint8_t *whole = pack ? e->out[0] : e->in[0];
    if (d->bytes == 0) {
        return TFLM_OK;
    }
    for (uint32_t i = 0; i < d->count; ++i) {
        uint8_t *piece = pack ? e->in[i] : e->out[i];
        for (uint32_t k = 0; k < d->outer; ++k) {
            uint8_t *run = whole + ((size_t)k * d->count + i) * d->bytes, *at = piece + (size_t)k * d->bytes;
            if (pack) {
                memcpy(run, at, d->bytes);
            } else {
                memcpy(at, run, d->bytes);
            }
        }
    }
    return TFLM_OK;
}

#endif

#if TFLM_KERNEL_PACK
tflm_status_t tflm_pack_prepare(tflm_prepare_t *p) {
    return pack_prepare(p, true);
}

tflm_status_t tflm_pack_eval(tflm_eval_t *e) {
    return pack_eval(e, true);
}
#endif

#if TFLM_KERNEL_UNPACK
tflm_status_t tflm_unpack_prepare(tflm_prepare_t *p) {
    return pack_prepare(p, false);
}

tflm_status_t tflm_unpack_eval(tflm_eval_t *e) {
    return pack_eval(e, false);
}
#endif
