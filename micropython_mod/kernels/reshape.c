// RESHAPE, SQUEEZE and EXPAND_DIMS: the output shape comes from the model's
// output tensor, as in TFLM; eval copies the bytes when the buffers differ.
#include "kernels/kernels.h"

#if TFLM_KERNEL_RESHAPE || TFLM_KERNEL_SQUEEZE || TFLM_KERNEL_EXPAND_DIMS

typedef struct {
    uint32_t bytes;
} reshape_data_t;

static tflm_status_t reshape_finish(tflm_prepare_t *p, uint32_t bytes) {
    reshape_data_t *d = tflm_prep_alloc(p, sizeof(reshape_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->bytes = bytes;
    return TFLM_OK;
}

static tflm_status_t reshape_copy(tflm_eval_t *e) {
    const reshape_data_t *d = e->data;
    if (e->out[0] != e->in[0]) {
        memmove(e->out[0], e->in[0], d->bytes);
    }
    return TFLM_OK;
}

#endif

#if TFLM_KERNEL_RESHAPE
tflm_status_t tflm_reshape_prepare(tflm_prepare_t *p) {
    // The shape input and the new_shape option are not read: TFLM takes the
    // shape from the output tensor.
    tflm_status_t st = tflm_prep_expect_io(p, 1, 2, 1);
    if (st) {
        return st;
    }
    tflm_tinfo_t in, out;
    if ((st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (in.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input missing");
    }
    if ((st = tflm_prep_same_type(p, &in, &out))) {
        return st;
    }
    if (tflm_type_size(in.type) == 0) {
        return tflm_prep_unsupported_type(p, "input", in.type);
    }
    if (tflm_prep_num_inputs(p) == 1 && out.ndims == 1 && out.dims[0] == 0) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "legacy scalar output shape [0] is not supported");
    }
    if (in.elements != out.elements) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input has %u elements, output %u",
            (unsigned)in.elements, (unsigned)out.elements);
    }
    return reshape_finish(p, in.bytes);
}

tflm_status_t tflm_reshape_eval(tflm_eval_t *e) {
    return reshape_copy(e);
}
#endif

#if TFLM_KERNEL_SQUEEZE
// SqueezeOptions fields
// TFLM's limit on the input's dimensions.
#define SQUEEZE_MAX_DIMS (8)

tflm_status_t tflm_squeeze_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, out;
    tflm_status_t st = tflm_prep_io_1_1(p, &in, &out);
    if (st) {
        return st;
    }
    if (in.ndims > SQUEEZE_MAX_DIMS) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "input has %u dimensions, at most %u supported",
            (unsigned)in.ndims, (unsigned)SQUEEZE_MAX_DIMS);
    }
    if (tflm_type_size(in.type) == 0) {
        return tflm_prep_unsupported_type(p, "input", in.type);
    }
    int32_t dims[SQUEEZE_MAX_DIMS];
    uint32_t n_dims;
    if ((st = tflm_prep_opt_i32s(p, TFLM_OPT_SQUEEZE_SQUEEZE_DIMS, dims, SQUEEZE_MAX_DIMS, &n_dims))) {
        return st;
    }
    bool squeeze[SQUEEZE_MAX_DIMS] = { false };
    if (n_dims == 0) {
        for (uint32_t i = 0; i < in.ndims; ++i) {
            squeeze[i] = in.dims[i] == 1;
        }
    } else {
        for (uint32_t i = 0; i < n_dims; ++i) {
            int32_t axis = dims[i] < 0 ? dims[i] + (int32_t)in.ndims : dims[i];
            if (axis < 0 || axis >= (int32_t)in.ndims || in.dims[axis] != 1) {
                return tflm_error(p->err, TFLM_ERR_VALUE, "cannot squeeze dimension %d", (int)dims[i]);
            }
            squeeze[axis] = true;
        }
    }
    // The kept dimensions must fit the output's, and the byte sizes match.
    uint32_t o = 0;
    for (uint32_t i = 0; i < in.ndims; ++i) {
        if (squeeze[i]) {
            continue;
        }
        if (o >= out.ndims || out.dims[o] < in.dims[i]) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "output shape does not match the squeezed input");
        }
        ++o;
    }
    if (in.bytes != out.bytes) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input has %u bytes, output %u", (unsigned)in.bytes, (unsigned)out.bytes);
    }
    return reshape_finish(p, in.bytes);
}

tflm_status_t tflm_squeeze_eval(tflm_eval_t *e) {
    return reshape_copy(e);
}
#endif

#if TFLM_KERNEL_EXPAND_DIMS
tflm_status_t tflm_expand_dims_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, axis_t, out;
    tflm_status_t st = tflm_prep_io_2_1(p, &in, &axis_t, &out);
    if (st) {
        return st;
    }
    if (!axis_t.is_const) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "non-constant axis is not supported");
    }
    if (axis_t.type != TFLM_INT32) {
        return tflm_prep_unsupported_type(p, "axis", axis_t.type);
    }
    if (axis_t.ndims > 1 || axis_t.elements < 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "axis must hold one value");
    }
    if (in.type != TFLM_FLOAT32 && in.type != TFLM_INT8 && in.type != TFLM_INT16) {
        return tflm_prep_unsupported_type(p, "input", in.type);
    }
    if ((st = tflm_prep_same_type(p, &in, &out))) {
        return st;
    }
    int32_t axis = tflm_rd_i32(axis_t.data);
    if (axis < 0) {
        axis += (int32_t)in.ndims + 1;
    }
    if (axis < 0 || axis > (int32_t)in.ndims || out.ndims != in.ndims + 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "axis %d does not fit a %u-dimensional input and %u-dimensional output",
            (int)tflm_rd_i32(axis_t.data), (unsigned)in.ndims, (unsigned)out.ndims);
    }
    for (int32_t i = 0; i < (int32_t)out.ndims; ++i) {
        int32_t want = i < axis ? in.dims[i] : (i == axis ? 1 : in.dims[i - 1]);
        if (out.dims[i] != want) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "output dimension %d is %d, expected %d",
                (int)i, (int)out.dims[i], (int)want);
        }
    }
    return reshape_finish(p, in.bytes);
}

tflm_status_t tflm_expand_dims_eval(tflm_eval_t *e) {
    return reshape_copy(e);
}
#endif
