// ARG_MAX and ARG_MIN: float32 and int8 inputs, an int32 axis (constant or
// computed), int32 or int64 indices out, as TFLM's reference: the first
// index wins a tie, and a NaN is never greater or less than anything, so it
// only stays the answer when it comes first. TFLM fails at invoke on int64
// indices, which TensorFlow's converter gives by default (tf.argmax's
// output_type); they are the same indices, widened.
//
// TFLM reads the axis at run time and trusts it; a constant axis is checked
// here once, a computed one at each invoke, where an axis that leaves the
// input or gives another number of outputs than the output holds fails the
// invoke instead of writing past the output.
#include "kernels/kernels.h"

#if TFLM_KERNEL_ARG_MAX || TFLM_KERNEL_ARG_MIN

typedef struct {
    uint8_t is_int8;
    uint8_t ndims;
    uint8_t wide;  // int64 indices out
    uint32_t out_elements;
    int32_t dims[TFLM_MAX_DIMS];
} arg_data_t;

// The loops for one axis: outer x axis x inner, the output outer x inner.
typedef struct {
    uint32_t outer, size, inner;
} arg_loops_t;

// False when `axis` (negative counts from the end) is not a dimension, the
// axis is empty while outputs need a value, or the output count differs.
static bool arg_loops(const arg_data_t *d, int32_t axis, arg_loops_t *l) {
    int32_t nd = d->ndims;
    if (axis < 0) {
        axis += nd;
    }
    if (axis < 0 || axis >= nd) {
        return false;
    }
    uint64_t outer = 1, inner = 1;
    for (int32_t i = 0; i < axis; ++i) {
        outer *= (uint32_t)d->dims[i];
    }
    for (int32_t i = axis + 1; i < nd; ++i) {
        inner *= (uint32_t)d->dims[i];
    }
    l->outer = (uint32_t)outer;
    l->size = (uint32_t)d->dims[axis];
    l->inner = (uint32_t)inner;
    return outer * inner == d->out_elements && (l->size > 0 || d->out_elements == 0);
}

static tflm_status_t arg_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, axis, out;
    tflm_status_t st = tflm_prep_axis_io(p, &in, &axis, &out);
    if (st) {
        return st;
    }
    if (out.type != TFLM_INT32 && out.type != TFLM_INT64) {
        return tflm_prep_unsupported_type(p, "output", out.type);
    }
    if (in.ndims == 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the input needs at least one dimension");
    }
    if (axis.elements == 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the axis tensor is empty");
    }
    arg_data_t *d = tflm_prep_alloc(p, sizeof(arg_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->is_int8 = in.type == TFLM_INT8;
    d->wide = out.type == TFLM_INT64;
    d->ndims = in.ndims;
    d->out_elements = out.elements;
    memcpy(d->dims, in.dims, sizeof(d->dims));
    arg_loops_t l;
    if (axis.is_const && axis.data != NULL && !arg_loops(d, tflm_rd_i32(axis.data), &l)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "axis %d does not fit the input and output shapes",
            (int)tflm_rd_i32(axis.data));
    }
    return TFLM_OK;
}

// Index of the best value along each axis line: strict comparisons, so the
// first of equal values wins and a NaN never replaces anything. Inlined with
// a constant is_max, each call is the loop with its comparison written in.
static TFLM_ALWAYS_INLINE void arg_f32(const arg_loops_t *l, const float *in, int32_t *out, bool is_max) {
    const size_t line = (size_t)l->size * l->inner;
    for (uint32_t o = 0; o < l->outer; ++o, in += line) {
        for (uint32_t j = 0; j < l->inner; ++j) {
            const float *x = in + j;
            float best = x[0];
            int32_t at = 0;
            for (uint32_t i = 1; i < l->size; ++i) {
                x += l->inner;
                if (is_max ? *x > best : *x < best) {
                    best = *x;
                    at = (int32_t)i;
                }
            }
            *out++ = at;
        }
    }
}

static TFLM_ALWAYS_INLINE void arg_s8(const arg_loops_t *l, const int8_t *in, int32_t *out, bool is_max) {
    const size_t line = (size_t)l->size * l->inner;
    for (uint32_t o = 0; o < l->outer; ++o, in += line) {
        for (uint32_t j = 0; j < l->inner; ++j) {
            const int8_t *x = in + j;
            int32_t best = x[0];
            int32_t at = 0;
            for (uint32_t i = 1; i < l->size; ++i) {
                x += l->inner;
                if (is_max ? *x > best : *x < best) {
                    best = *x;
                    at = (int32_t)i;
                }
            }
            *out++ = at;
        }
    }
}

static tflm_status_t arg_eval(tflm_eval_t *e, bool is_max) {
    const arg_data_t *d = e->data;
    int32_t axis = tflm_rd_i32(e->in[1]);
    arg_loops_t l;
    if (!arg_loops(d, axis, &l)) {
        return tflm_error(e->err, TFLM_ERR_RUNTIME, "axis %d does not fit the input and output shapes", (int)axis);
    }
    if (d->out_elements == 0) {
        return TFLM_OK;
    }
    if (d->is_int8) {
        if (is_max) {
            arg_s8(&l, e->in[0], e->out[0], true);
        } else {
            arg_s8(&l, e->in[0], e->out[0], false);
        }
    } else if (is_max) {
        arg_f32(&l, e->in[0], e->out[0], true);
    } else {
        arg_f32(&l, e->in[0], e->out[0], false);
    }
    if (d->wide) {
        // The int32 indices fill the output's first half. Widened from the
        // last: index k's 8 bytes lie over int32 indices 2k and 2k + 1,
        // read already. Stored by bytes, which alias the int32 view (an
        // int64 store need not).
        uint8_t *out = e->out[0];
        for (uint32_t k = d->out_elements; k-- > 0;) {
            const int64_t v = ((const int32_t *)(const void *)out)[k];
            memcpy(out + 8u * k, &v, sizeof(v));
        }
    }
    return TFLM_OK;
}

#endif

#if TFLM_KERNEL_ARG_MAX
tflm_status_t tflm_arg_max_prepare(tflm_prepare_t *p) {
    return arg_prepare(p);
}

tflm_status_t tflm_arg_max_eval(tflm_eval_t *e) {
    return arg_eval(e, true);
}
#endif

#if TFLM_KERNEL_ARG_MIN
tflm_status_t tflm_arg_min_prepare(tflm_prepare_t *p) {
    return arg_prepare(p);
}

tflm_status_t tflm_arg_min_eval(tflm_eval_t *e) {
    return arg_eval(e, false);
}
#endif
