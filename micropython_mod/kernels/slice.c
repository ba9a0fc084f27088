// SLICE: float32, int8, int16, int32 and bool inputs of up to 5 dimensions,
// begin and size int32 or int64 (size -1: to the end), as TFLM's reference.
// TFLM reads begin and size at run time, so they may be computed tensors;
// constant ones are resolved and checked here once.
#include "kernels/kernels.h"

#if TFLM_KERNEL_SLICE

#define SLICE_DIMS (5)

typedef struct {
    uint8_t elem_size;
    uint8_t dynamic;    // begin and size read at run time
    uint8_t index_type; // TFLM_INT32 or TFLM_INT64
    uint8_t ndims;
    uint32_t out_elements;
    int32_t shape[SLICE_DIMS]; // input shape, padded to 5-D at the front
    int32_t start[SLICE_DIMS];
    int32_t stop[SLICE_DIMS];
} slice_data_t;

static int32_t slice_value(const uint8_t *p, uint8_t type, uint32_t i) {
    // int64 values are truncated to int, as TFLM does.
    return type == TFLM_INT32 ? tflm_rd_i32(p + 4u * i) : (int32_t)(uint32_t)tflm_rd_u64(p + 8u * i);
}

// Resolves begin/size into 5-D start/stop; false when they leave the input
// or do not give the output's element count.
static bool slice_resolve(const uint8_t *begin, const uint8_t *size, uint8_t type, uint32_t ndims,
    const int32_t *shape, uint32_t out_elements, int32_t *start, int32_t *stop) {
    uint32_t pad = SLICE_DIMS - ndims;
    uint64_t count = 1;
    for (uint32_t k = 0; k < SLICE_DIMS; ++k) {
        int64_t a = 0, z = shape[k];
        if (k >= pad) {
            a = slice_value(begin, type, k - pad);
            int32_t n = slice_value(size, type, k - pad);
            if (n != -1) {
                z = a + n;
            }
        }
        if (a < 0 || a > z || z > shape[k]) {
            return false;
        }
        start[k] = (int32_t)a;
        stop[k] = (int32_t)z;
        count *= (uint64_t)(z - a);
    }
    return count == out_elements;
}

tflm_status_t tflm_slice_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, begin, size, out;
    tflm_status_t st = tflm_prep_io_3_1(p, &in, &begin, &size, &out);
    if (st) {
        return st;
    }
    static const uint8_t in_types[] = {TFLM_FLOAT32, TFLM_INT8, TFLM_INT16, TFLM_INT32, TFLM_BOOL};
    if ((st = tflm_prep_type_in(p, "input", &in, in_types, sizeof(in_types), NULL)) || (st = tflm_prep_same_type(p, &in, &out))) {
        return st;
    }
    if (begin.type != TFLM_INT32 && begin.type != TFLM_INT64) {
        return tflm_prep_unsupported_type(p, "begin", begin.type);
    }
    if (size.type != begin.type) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "begin is %s, size %s", tflm_type_name(begin.type), tflm_type_name(size.type));
    }
    if (in.ndims > SLICE_DIMS) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "at most %u dimensions supported", (unsigned)SLICE_DIMS);
    }
    if (begin.ndims != 1 || size.ndims != 1 || begin.elements != in.ndims || size.elements != in.ndims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "begin and size need one value per input dimension");
    }
    int32_t shape[SLICE_DIMS], start[SLICE_DIMS], stop[SLICE_DIMS];
    uint32_t pad = SLICE_DIMS - in.ndims;
    for (uint32_t k = 0; k < SLICE_DIMS; ++k) {
        shape[k] = k < pad ? 1 : in.dims[k - pad];
    }
    bool dynamic = !begin.is_const || !size.is_const;
    if (!dynamic && !slice_resolve(begin.data, size.data, begin.type, in.ndims, shape, out.elements, start, stop)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "begin and size do not fit the input and output shapes");
    }
    slice_data_t *d = tflm_prep_alloc(p, sizeof(slice_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->elem_size = (uint8_t)tflm_type_size(in.type);
    d->dynamic = dynamic;
    d->index_type = begin.type;
    d->ndims = in.ndims;
    d->out_elements = out.elements;
    memcpy(d->shape, shape, sizeof(shape));
    if (!dynamic) {
        memcpy(d->start, start, sizeof(start));
        memcpy(d->stop, stop, sizeof(stop));
    }
    return TFLM_OK;
}

tflm_status_t tflm_slice_eval(tflm_eval_t *e) {
    const slice_data_t *d = e->data;
    int32_t start_buf[SLICE_DIMS], stop_buf[SLICE_DIMS];
    const int32_t *a = d->start, *z = d->stop;
    if (d->dynamic) {
        // TFLM does not check run-time values; reading outside the input is
        // refused here instead.
        if (!slice_resolve(e->in[1], e->in[2], d->index_type, d->ndims, d->shape, d->out_elements, start_buf, stop_buf)) {
            return tflm_error(e->err, TFLM_ERR_RUNTIME, "begin and size do not fit the input and output shapes");
        }
        a = start_buf;
        z = stop_buf;
    }
    const size_t es = d->elem_size;
    const int32_t *n = d->shape;
    const uint8_t *in = e->in[0];
    uint8_t *out = e->out[0];
    const size_t len = (size_t)(z[4] - a[4]) * es;
    if (len == 0) {
        return TFLM_OK;
    }
    for (int32_t i0 = a[0]; i0 < z[0]; ++i0) {
        for (int32_t i1 = a[1]; i1 < z[1]; ++i1) {
            size_t b1 = (size_t)i0 * (size_t)n[1] + (size_t)i1;
            for (int32_t i2 = a[2]; i2 < z[2]; ++i2) {
                size_t b2 = b1 * (size_t)n[2] + (size_t)i2;
                for (int32_t i3 = a[3]; i3 < z[3]; ++i3) {
                    size_t row = (b2 * (size_t)n[3] + (size_t)i3) * (size_t)n[4] + (size_t)a[4];
                    memcpy(out, in + row * es, len);
                    out += len;
                }
            }
        }
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_SLICE
