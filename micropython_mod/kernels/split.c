// SPLIT and SPLIT_V: float32, int8, int16 and int32, as TFLM's reference.
// The axis must be constant; the pieces' sizes come from the output tensors
// (TFLM does not read SPLIT_V's size_splits input).
#include "kernels/kernels.h"

#if TFLM_KERNEL_SPLIT || TFLM_KERNEL_SPLIT_V

typedef struct {
    uint32_t outer;
    uint32_t count;
    // then uint32 bytes[count]: bytes each output takes per outer step
} split_data_t;

static tflm_status_t split_prepare(tflm_prepare_t *p, uint32_t input, uint32_t axis_input, bool equal) {
    uint32_t n = tflm_prep_num_outputs(p);
    if (n < 1 || n > TFLM_MAX_NODE_IO) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "has %u outputs", (unsigned)n);
    }
    tflm_tinfo_t in, axis_t, out;
    tflm_status_t st;
    if ((st = tflm_prep_input(p, input, &in)) || (st = tflm_prep_input(p, axis_input, &axis_t))) {
        return st;
    }
    if (in.index < 0 || axis_t.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input or axis missing");
    }
    if (!axis_t.is_const) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "non-constant axis is not supported");
    }
    // TFLM reads the axis as int32: the low half of an int64 value.
    if ((axis_t.type != TFLM_INT32 && axis_t.type != TFLM_INT64) || axis_t.elements < 1) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "axis must be one int32 or int64 value");
    }
    static const uint8_t types[] = {TFLM_FLOAT32, TFLM_INT8, TFLM_INT16, TFLM_INT32};
    if ((st = tflm_prep_type_in(p, "input", &in, types, sizeof(types), NULL))) {
        return st;
    }
    int32_t axis = tflm_rd_i32(axis_t.data);
    if (axis < 0) {
        axis += (int32_t)in.ndims;
    }
    if (axis < 0 || axis >= (int32_t)in.ndims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "axis %d out of range for %u dimensions",
            (int)tflm_rd_i32(axis_t.data), (unsigned)in.ndims);
    }
    uint32_t es = (uint32_t)tflm_type_size(in.type);
    uint32_t outer = 1, inner = 1;
    for (int32_t i = 0; i < axis; ++i) {
        outer *= (uint32_t)in.dims[i];
    }
    for (int32_t i = axis + 1; i < (int32_t)in.ndims; ++i) {
        inner *= (uint32_t)in.dims[i];
    }
    int64_t total = 0;
    int32_t first = 0;
    for (uint32_t k = 0; k < n; ++k) {
        if ((st = tflm_prep_output(p, k, &out))) {
            return st;
        }
        if (out.type != in.type || out.ndims != in.ndims) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "output %u does not match the input's type and rank", (unsigned)k);
        }
        for (int32_t i = 0; i < (int32_t)in.ndims; ++i) {
            if (i != axis && out.dims[i] != in.dims[i]) {
                return tflm_error(p->err, TFLM_ERR_VALUE, "output %u does not match the input's shape", (unsigned)k);
            }
        }
        if (k == 0) {
            first = out.dims[axis];
        }
        // SPLIT copies every piece by the first output's size.
        if (equal && out.dims[axis] != first) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "outputs differ in size");
        }
        total += out.dims[axis];
    }
    if (total != in.dims[axis]) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "outputs add up to %d along axis %d, input has %d",
            (int)total, (int)axis, (int)in.dims[axis]);
    }
    split_data_t *d = tflm_prep_alloc(p, (uint32_t)sizeof(split_data_t) + 4u * n);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->outer = in.elements ? outer : 0;
    d->count = n;
    uint32_t *bytes = (uint32_t *)(d + 1);
    for (uint32_t k = 0; k < n; ++k) {
        if ((st = tflm_prep_output(p, k, &out))) {
            return st;
        }
        bytes[k] = (uint32_t)out.dims[axis] * inner * es;
    }
    return TFLM_OK;
}

static tflm_status_t split_eval(tflm_eval_t *e, uint32_t input) {
    const split_data_t *d = e->data;
    const uint32_t *bytes = (const uint32_t *)(d + 1);
    const uint8_t *in = e->in[input];
    for (uint32_t k = 0; k < d->outer; ++k) {
        for (uint32_t i = 0; i < d->count; ++i) {
            if (bytes[i]) {
                memcpy((uint8_t *)e->out[i] + (size_t)k * bytes[i], in, bytes[i]);
                in += bytes[i];
            }
        }
    }
    return TFLM_OK;
}

#endif

#if TFLM_KERNEL_SPLIT
tflm_status_t tflm_split_prepare(tflm_prepare_t *p) {
    // Inputs: axis, then the tensor.
    if (tflm_prep_num_inputs(p) != 2) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "has %u inputs, expected 2", (unsigned)tflm_prep_num_inputs(p));
    }
    return split_prepare(p, 1, 0, true);
}

tflm_status_t tflm_split_eval(tflm_eval_t *e) {
    return split_eval(e, 1);
}
#endif

#if TFLM_KERNEL_SPLIT_V
tflm_status_t tflm_split_v_prepare(tflm_prepare_t *p) {
    // Inputs: the tensor, size_splits, axis.
    if (tflm_prep_num_inputs(p) != 3) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "has %u inputs, expected 3", (unsigned)tflm_prep_num_inputs(p));
    }
    return split_prepare(p, 0, 2, false);
}

tflm_status_t tflm_split_v_eval(tflm_eval_t *e) {
    return split_eval(e, 0);
}
#endif
