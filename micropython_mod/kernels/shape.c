// Ops whose outputs are shapes. SHAPE: the input's dimensions (any type)
// as int32, the only output type TFLM's kernel writes; they are known in
// prepare() and kept in the kernel's data. BROADCAST_ARGS: the broadcast of
// two int32 or int64 shape vectors into an output whose length the model
// gives, as TFLM's reference: aligned on their last values, missing ones
// count as 1, and values pass through int (int64 ones are truncated to 32
// bits, as TFLM does). Shapes that do not broadcast fail the invoke (TFLM
// aborts).
#include "kernels/kernels.h"

#if TFLM_KERNEL_SHAPE
tflm_status_t tflm_shape_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, out;
    tflm_status_t st = tflm_prep_io_1_1(p, &in, &out);
    if (st) {
        return st;
    }
    if (out.type != TFLM_INT32) {
        return tflm_prep_unsupported_type(p, "output", out.type);
    }
    if (out.elements != in.ndims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the output holds %u values for %u dimensions",
            (unsigned)out.elements, (unsigned)in.ndims);
    }
    // The count, then the dimensions.
    int32_t *d = tflm_prep_alloc(p, 4u * (1u + in.ndims));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d[0] = in.ndims;
    memcpy(d + 1, in.dims, 4u * in.ndims);
    return TFLM_OK;
}

tflm_status_t tflm_shape_eval(tflm_eval_t *e) {
    const int32_t *d = e->data;
    memcpy(e->out[0], d + 1, 4u * (uint32_t)d[0]);
    return TFLM_OK;
}
#endif // TFLM_KERNEL_SHAPE

#if TFLM_KERNEL_BROADCAST_ARGS
typedef struct {
    uint32_t n1, n2, n_out;
    uint8_t is64;
} bargs_data_t;

tflm_status_t tflm_broadcast_args_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t s1, s2, out;
    tflm_status_t st = tflm_prep_io_2_1(p, &s1, &s2, &out);
    if (st) {
        return st;
    }
    if (s1.type != TFLM_INT32 && s1.type != TFLM_INT64) {
        return tflm_prep_unsupported_type(p, "shape", s1.type);
    }
    if (s2.type != s1.type || out.type != s1.type) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "shape types %s and %s and the output's %s differ",
            tflm_type_name(s1.type), tflm_type_name(s2.type), tflm_type_name(out.type));
    }
    if (s1.ndims != 1 || s2.ndims != 1 || out.ndims != 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the shapes and the output must be 1-D");
    }
    bargs_data_t *d = tflm_prep_alloc(p, sizeof(bargs_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->n1 = s1.elements;
    d->n2 = s2.elements;
    d->n_out = out.elements;
    d->is64 = s1.type == TFLM_INT64;
    return TFLM_OK;
}

// Value i counted from the end of an n-value shape, as an int; 1 before its start.
static int32_t bargs_from_end(const void *shape, uint32_t n, uint32_t i, bool is64) {
    if (i >= n) {
        return 1;
    }
    uint32_t at = n - 1u - i;
    return is64 ? (int32_t)(uint32_t)(uint64_t)tflm_ld_i64(shape, at) : tflm_rd_i32((const uint8_t *)shape + 4u * at);
}

tflm_status_t tflm_broadcast_args_eval(tflm_eval_t *e) {
    const bargs_data_t *d = e->data;
    for (uint32_t i = 0; i < d->n_out; ++i) {
        int32_t a = bargs_from_end(e->in[0], d->n1, i, d->is64);
        int32_t b = bargs_from_end(e->in[1], d->n2, i, d->is64);
        int32_t v = a;
        if (a == 1) {
            v = b;
        } else if (b != 1 && a != b) {
            return tflm_error(e->err, TFLM_ERR_RUNTIME, "shapes do not broadcast: %d and %d", (int)a, (int)b);
        }
        uint32_t at = d->n_out - 1u - i;
        if (d->is64) {
            int64_t w = v;
            memcpy((uint8_t *)e->out[0] + 8u * at, &w, 8);
        } else {
            ((int32_t *)e->out[0])[at] = v;
        }
    }
    return TFLM_OK;
}
#endif // TFLM_KERNEL_BROADCAST_ARGS
