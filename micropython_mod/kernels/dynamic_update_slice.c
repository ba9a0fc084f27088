// DYNAMIC_UPDATE_SLICE: the operand with a block overwritten by the update,
// float32, int8, int16 and int32, start indices int32 or int64 (constant or
// computed), as TFLM's reference: each start is clamped to
// [0, operand dim - update dim], so the block always lies inside the
// operand (indices are never an error), and an update as large as the
// operand replaces it whatever the indices. TFLM takes operands of up to 6
// dimensions otherwise.
#include "kernels/kernels.h"

#if TFLM_KERNEL_DYNAMIC_UPDATE_SLICE

#define DUS_MAX_DIMS (6)

typedef struct {
    uint8_t ndims;
    uint8_t esize;
    uint8_t index64;      // int64 start indices
    uint8_t whole;        // the update replaces the whole operand
    uint32_t bytes;       // operand bytes
    uint32_t update_elements;
    int32_t dims[TFLM_MAX_DIMS];
    int32_t update_dims[TFLM_MAX_DIMS];
} dus_data_t;

tflm_status_t tflm_dynamic_update_slice_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t operand, update, start, out;
    tflm_status_t st = tflm_prep_io_3_1(p, &operand, &update, &start, &out);
    if (st) {
        return st;
    }
    static const uint8_t types[] = {TFLM_FLOAT32, TFLM_INT8, TFLM_INT16, TFLM_INT32};
    if ((st = tflm_prep_type_in(p, "operand", &operand, types, sizeof(types), NULL))) {
        return st;
    }
    if (update.type != operand.type || out.type != operand.type) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "operand, update and output types differ (%s, %s, %s)",
            tflm_type_name(operand.type), tflm_type_name(update.type), tflm_type_name(out.type));
    }
    if (start.type != TFLM_INT32 && start.type != TFLM_INT64) {
        return tflm_prep_unsupported_type(p, "start indices", start.type);
    }
    if (start.ndims != 1 || start.elements != operand.ndims || update.ndims != operand.ndims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the update and the start indices need the operand's %u dimensions",
            (unsigned)operand.ndims);
    }
    for (uint32_t i = 0; i < operand.ndims; ++i) {
        if (update.dims[i] > operand.dims[i]) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "the update is larger than the operand in dimension %u",
                (unsigned)i);
        }
    }
    if (out.elements != operand.elements) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the output holds %u values, the operand %u",
            (unsigned)out.elements, (unsigned)operand.elements);
    }
    bool whole = update.elements == operand.elements;
    if (!whole && operand.ndims > DUS_MAX_DIMS) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "at most %u dimensions supported", (unsigned)DUS_MAX_DIMS);
    }
    dus_data_t *d = tflm_prep_alloc(p, sizeof(dus_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->ndims = operand.ndims;
    d->esize = (uint8_t)tflm_type_size(operand.type);
    d->index64 = start.type == TFLM_INT64;
    d->whole = whole;
    d->bytes = operand.bytes;
    d->update_elements = update.elements;
    memcpy(d->dims, operand.dims, sizeof(d->dims));
    memcpy(d->update_dims, update.dims, sizeof(d->update_dims));
    return TFLM_OK;
}

tflm_status_t tflm_dynamic_update_slice_eval(tflm_eval_t *e) {
    const dus_data_t *d = e->data;
    const uint8_t *upd = e->in[1];
    uint8_t *out = e->out[0];
    if (d->whole) {
        memcpy(out, upd, (size_t)d->update_elements * d->esize);
        return TFLM_OK;
    }
    if (out != e->in[0]) {
        memcpy(out, e->in[0], d->bytes);
    }
    if (d->update_elements == 0) {
        return TFLM_OK;
    }
    const uint32_t n = d->ndims;
    // Clamped starts and the output's strides, in bytes.
    size_t stride[DUS_MAX_DIMS];
    size_t at = 0;
    size_t s = d->esize;
    for (uint32_t k = n; k-- > 0;) {
        stride[k] = s;
        s *= (size_t)d->dims[k];
        int64_t v = d->index64 ? tflm_ld_i64(e->in[2], k) : (int64_t)tflm_rd_i32((const uint8_t *)e->in[2] + 4u * k);
        int64_t hi = (int64_t)d->dims[k] - d->update_dims[k];
        v = v < 0 ? 0 : (v > hi ? hi : v);
        at += (size_t)v * stride[k];
    }
    // The update's rows (its last dimension) one by one, an odometer over
    // the dimensions before.
    const size_t row = (size_t)d->update_dims[n - 1] * d->esize;
    int32_t idx[DUS_MAX_DIMS] = { 0 };
    for (;;) {
        memcpy(out + at, upd, row);
        upd += row;
        int32_t k = (int32_t)n - 2;
        for (; k >= 0; --k) {
            at += stride[k];
            if (++idx[k] < d->update_dims[k]) {
                break;
            }
            at -= stride[k] * (size_t)d->update_dims[k];
            idx[k] = 0;
        }
        if (k < 0) {
            return TFLM_OK;
        }
    }
}

#endif // TFLM_KERNEL_DYNAMIC_UPDATE_SLICE
