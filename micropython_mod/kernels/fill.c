// Outputs made of copies of an input's values, in the types TFLM's kernels
// take. FILL: one scalar value (float32, int32, int8) everywhere, the dims
// input constant (int8/16/32/64) and equal to the output's shape, as TFLM
// requires (it refuses computed dims: the arena is planned for the model's
// shape). ZEROS_LIKE: zeros of the input's type (float32, int8, int32,
// int64) and size. BROADCAST_TO: the input broadcast to a constant shape of
// up to 5 dimensions that the output has, any fixed-size type, through the
// binary ops' loop plan (kernels/broadcast.h) with the input on both sides.
#include "kernels/kernels.h"
#include "kernels/broadcast.h"

#if TFLM_KERNEL_FILL || TFLM_KERNEL_BROADCAST_TO
// n copies of the esize-byte value at src into dst: the first copied, then
// the copies made so far doubled.
static void repeat_bytes(uint8_t *dst, const uint8_t *src, size_t esize, size_t n) {
    if (n == 0) {
        return;
    }
    if (esize == 1) {
        memset(dst, *src, n);
        return;
    }
    size_t total = n * esize, done = esize;
    memcpy(dst, src, esize);
    while (done < total) {
        size_t k = TFLM_MIN(done, total - done);
        memcpy(dst + done, dst, k);
        done += k;
    }
}

// The value at index i of a constant integer tensor (int64 truncated to
// int, as TFLM compares it); false for other types.
static bool int_value(const tflm_tinfo_t *t, uint32_t i, int32_t *v) {
    switch (t->type) {
        case TFLM_INT8:
            *v = (int8_t)t->data[i];
            return true;
        case TFLM_INT16:
            *v = (int16_t)tflm_rd_u16(t->data + 2u * i);
            return true;
        case TFLM_INT32:
            *v = tflm_rd_i32(t->data + 4u * i);
            return true;
        case TFLM_INT64:
            *v = (int32_t)(uint32_t)tflm_rd_u64(t->data + 8u * i);
            return true;
        default:
            return false;
    }
}

// ValueError unless the constant 1-D `shape` holds exactly `out`'s dimensions.
static tflm_status_t shape_is_output(tflm_prepare_t *p, const tflm_tinfo_t *shape, const tflm_tinfo_t *out,
    const char *what) {
    if (shape->ndims != 1 || shape->elements != out->ndims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%s has %u values for a %u-D output", what,
            (unsigned)shape->elements, (unsigned)out->ndims);
    }
    for (uint32_t i = 0; i < out->ndims; ++i) {
        int32_t v = 0;
        if (!int_value(shape, i, &v)) {
            return tflm_prep_unsupported_type(p, what, shape->type);
        }
        if (v != out->dims[i]) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "%s value %u is %d, the output's dimension %d", what,
                (unsigned)i, (int)v, (int)out->dims[i]);
        }
    }
    return TFLM_OK;
}
#endif

#if TFLM_KERNEL_FILL
typedef struct {
    uint32_t elements;
    uint32_t esize;
} fill_data_t;

tflm_status_t tflm_fill_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t dims, value, out;
    tflm_status_t st = tflm_prep_io_2_1(p, &dims, &value, &out);
    if (st) {
        return st;
    }
    if (value.type != TFLM_FLOAT32 && value.type != TFLM_INT32 && value.type != TFLM_INT8) {
        return tflm_prep_unsupported_type(p, "value", value.type);
    }
    if (out.type != value.type) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the value is %s, the output %s", tflm_type_name(value.type),
            tflm_type_name(out.type));
    }
    if (value.ndims != 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the value must be a scalar");
    }
    // An empty dims vector has no data either: TFLM refuses it as computed.
    if (!dims.is_const || dims.data == NULL || dims.elements == 0) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "dims must be a constant tensor");
    }
    if ((st = shape_is_output(p, &dims, &out, "dims"))) {
        return st;
    }
    fill_data_t *d = tflm_prep_alloc(p, sizeof(fill_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->elements = out.elements;
    d->esize = (uint32_t)tflm_type_size(out.type);
    return TFLM_OK;
}

tflm_status_t tflm_fill_eval(tflm_eval_t *e) {
    const fill_data_t *d = e->data;
    repeat_bytes(e->out[0], e->in[1], d->esize, d->elements);
    return TFLM_OK;
}
#endif // TFLM_KERNEL_FILL

#if TFLM_KERNEL_ZEROS_LIKE
static const uint8_t zeros_like_types[] = { TFLM_FLOAT32, TFLM_INT8, TFLM_INT32, TFLM_INT64 };

tflm_status_t tflm_zeros_like_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, out;
    tflm_status_t st = tflm_prep_unary(p, zeros_like_types, sizeof(zeros_like_types), &in, &out, NULL);
    if (st) {
        return st;
    }
    uint32_t *d = tflm_prep_alloc(p, 4);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    *d = out.bytes;
    return TFLM_OK;
}

tflm_status_t tflm_zeros_like_eval(tflm_eval_t *e) {
    // All-zero bytes are 0 in every type it takes (0.0f included).
    memset(e->out[0], 0, *(const uint32_t *)e->data);
    return TFLM_OK;
}
#endif // TFLM_KERNEL_ZEROS_LIKE

#if TFLM_KERNEL_BROADCAST_TO
#define BROADCAST_TO_DIMS (5)

tflm_status_t tflm_broadcast_to_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, shape, out;
    tflm_status_t st = tflm_prep_io_2_1(p, &in, &shape, &out);
    if (st) {
        return st;
    }
    if (tflm_type_size(in.type) == 0 || in.type == TFLM_RESOURCE) {
        return tflm_prep_unsupported_type(p, "input", in.type);
    }
    if (shape.type != TFLM_INT32 && shape.type != TFLM_INT64) {
        return tflm_prep_unsupported_type(p, "shape", shape.type);
    }
    if (out.type != in.type) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the input is %s, the output %s", tflm_type_name(in.type),
            tflm_type_name(out.type));
    }
    if (!shape.is_const || shape.data == NULL || shape.elements == 0) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "the shape must be a constant tensor");
    }
    if (out.ndims > BROADCAST_TO_DIMS || in.ndims > out.ndims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "a %u-D input to a %u-D output (at most %u)", (unsigned)in.ndims,
            (unsigned)out.ndims, (unsigned)BROADCAST_TO_DIMS);
    }
    if ((st = shape_is_output(p, &shape, &out, "shape"))) {
        return st;
    }
    tflm_bcast_plan_t plan;
    if ((st = tflm_bcast_plan(p, &in, &in, &out, &plan))) {
        return st;
    }
    int32_t *d = tflm_bcast_alloc(p, &plan, 4u);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d[0] = (int32_t)tflm_type_size(in.type);
    return TFLM_OK;
}

tflm_status_t tflm_broadcast_to_eval(tflm_eval_t *e) {
    const int32_t *d = e->data;
    const size_t esize = (size_t)d[0];
    const uint8_t *in = e->in[0];
    uint8_t *out = e->out[0];
    tflm_bcast_iter_t it;
    for (bool more = tflm_bcast_begin(&it, d + 1); more; more = tflm_bcast_next(&it)) {
        // A row is a run of the input, or one of its values repeated.
        const uint8_t *src = in + (size_t)it.at1 * esize;
        uint8_t *dst = out + (size_t)it.out * esize;
        if (it.inc1 != 0) {
            memcpy(dst, src, (size_t)it.len * esize);
        } else {
            repeat_bytes(dst, src, esize, (size_t)it.len);
        }
    }
    return TFLM_OK;
}
#endif // TFLM_KERNEL_BROADCAST_TO
