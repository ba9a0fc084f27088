// STRIDED_SLICE: float32, int8, int16, int32 and bool inputs of up to 4
// dimensions with constant int32 begin/end/strides, as TFLM's reference: the
// begin, end and shrink-axis masks apply; TFLM ignores the ellipsis and
// new-axis masks and the offset option, and so does this kernel.
#include "kernels/kernels.h"

#if TFLM_KERNEL_STRIDED_SLICE

// StridedSliceOptions fields

#define SS_MAX_DIMS (4)
// The reference runs every slice as 5-D.
#define SS_DIMS (5)

typedef struct {
    uint8_t elem_size;
    uint8_t reserved[3];
    int32_t shape[SS_DIMS];
    int32_t start[SS_DIMS];
    int32_t stop[SS_DIMS];
    int32_t stride[SS_DIMS];
} ss_data_t;

// First index along an axis, as TFLM's prepare computes it for the output shape.
static int32_t ss_shape_start(int32_t begin, int32_t stride, bool masked, int32_t size) {
    if (size == 0) {
        return 0;
    }
    int64_t start = masked ? (stride > 0 ? INT32_MIN : INT32_MAX) : begin;
    if (start < 0) {
        start += size;
    }
    return stride > 0 ? (int32_t)TFLM_MAX(TFLM_MIN(start, size), 0) : (int32_t)TFLM_MAX(TFLM_MIN(start, size - 1), -1);
}

static int32_t ss_shape_stop(int32_t end, int32_t stride, bool masked, bool shrink, int32_t size, int32_t start) {
    if (size == 0) {
        return 0;
    }
    if (shrink) {
        return start + 1;
    }
    int64_t stop = masked ? (stride > 0 ? INT32_MAX : INT32_MIN) : end;
    if (stop < 0) {
        stop += size;
    }
    return stride > 0 ? (int32_t)TFLM_MAX(TFLM_MIN(stop, size), 0) : (int32_t)TFLM_MAX(TFLM_MIN(stop, size - 1), -1);
}

// Output length along an axis: ceil((stop - start) / stride) in float, as TFLM.
static int32_t ss_length(int32_t start, int32_t stop, int32_t stride) {
    float q = (float)(stop - start) / (float)stride;
    if (!(q > 0.0f)) {
        return 0;
    }
    int64_t n = (int64_t)q;
    if ((float)n < q) {
        ++n;
    }
    return n > INT32_MAX ? INT32_MAX : (int32_t)n;
}

// Iterations of the reference's loop along an axis.
static uint32_t ss_count(int32_t start, int32_t stop, int32_t stride) {
    int64_t span = stride > 0 ? (int64_t)stop - start : (int64_t)start - stop;
    if (span <= 0) {
        return 0;
    }
    int64_t step = stride > 0 ? stride : -(int64_t)stride;
    return (uint32_t)((span + step - 1) / step);
}

static tflm_status_t ss_indices(tflm_prepare_t *p, uint32_t i, uint32_t dims, tflm_tinfo_t *t) {
    tflm_status_t st = tflm_prep_input(p, i, t);
    if (st) {
        return st;
    }
    static const char *const names[] = { "", "begin", "end", "strides" };
    if (t->index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%s missing", names[i]);
    }
    if (!t->is_const) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "non-constant %s is not supported", names[i]);
    }
    if (t->type != TFLM_INT32) {
        return tflm_prep_unsupported_type(p, names[i], t->type);
    }
    if (t->elements < dims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%s holds %u values for %u dimensions",
            names[i], (unsigned)t->elements, (unsigned)dims);
    }
    return TFLM_OK;
}

tflm_status_t tflm_strided_slice_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 4, 4, 1);
    if (st) {
        return st;
    }
    tflm_tinfo_t in, begin, end, strides, out;
    if ((st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (in.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input missing");
    }
    if (in.ndims > SS_MAX_DIMS) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "input has %u dimensions, at most %u supported",
            (unsigned)in.ndims, (unsigned)SS_MAX_DIMS);
    }
    const uint32_t dims = in.ndims;
    if ((st = ss_indices(p, 1, dims, &begin)) || (st = ss_indices(p, 2, dims, &end))
        || (st = ss_indices(p, 3, dims, &strides))) {
        return st;
    }
    static const uint8_t in_types[] = {TFLM_FLOAT32, TFLM_INT8, TFLM_INT16, TFLM_INT32, TFLM_BOOL};
    if ((st = tflm_prep_type_in(p, "input", &in, in_types, sizeof(in_types), NULL)) || (st = tflm_prep_same_type(p, &in, &out))) {
        return st;
    }
    uint32_t begin_mask = (uint32_t)tflm_prep_opt_i32(p, TFLM_OPT_STRIDED_SLICE_BEGIN_MASK, 0);
    uint32_t end_mask = (uint32_t)tflm_prep_opt_i32(p, TFLM_OPT_STRIDED_SLICE_END_MASK, 0);
    uint32_t shrink_mask = (uint32_t)tflm_prep_opt_i32(p, TFLM_OPT_STRIDED_SLICE_SHRINK_AXIS_MASK, 0);
    // The output shape TFLM expects.
    uint32_t o = 0;
    for (uint32_t i = 0; i < dims; ++i) {
        int32_t stride = tflm_rd_i32(strides.data + 4u * i);
        if (stride == 0) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "stride value has to be non-zero");
        }
        bool shrink = (shrink_mask >> i) & 1u;
        int32_t a = ss_shape_start(tflm_rd_i32(begin.data + 4u * i), stride, (begin_mask >> i) & 1u, in.dims[i]);
        int32_t b = ss_shape_stop(tflm_rd_i32(end.data + 4u * i), stride, (end_mask >> i) & 1u, shrink, in.dims[i], a);
        if (shrink) {
            continue;
        }
        int32_t n = ss_length(a, b, stride);
        if (o >= out.ndims || out.dims[o] != n) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "output dimension %u should be %d", (unsigned)o, (int)n);
        }
        ++o;
    }
    if (o != out.ndims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output has %u dimensions, expected %u", (unsigned)out.ndims, (unsigned)o);
    }
    // What eval runs: the indices padded to 5-D at the front, then resolved
    // as the reference's eval does.
    const uint32_t pad = SS_DIMS - dims;
    int32_t shape[SS_DIMS], start[SS_DIMS], stop[SS_DIMS], step[SS_DIMS];
    uint64_t writes = 1;
    for (uint32_t k = 0; k < SS_DIMS; ++k) {
        int32_t size = 1, b = 0, e = 1, s = 1;
        bool bm = true, em = true, shrink = false;
        if (k >= pad) {
            uint32_t i = k - pad;
            size = in.dims[i];
            b = tflm_rd_i32(begin.data + 4u * i);
            e = tflm_rd_i32(end.data + 4u * i);
            s = tflm_rd_i32(strides.data + 4u * i);
            bm = (begin_mask >> i) & 1u;
            em = (end_mask >> i) & 1u;
            shrink = (shrink_mask >> i) & 1u;
        }
        int64_t a = b;
        if (a < 0) {
            a += size;
        }
        a = s > 0 ? TFLM_MAX(TFLM_MIN(a, size), 0) : TFLM_MAX(TFLM_MIN(a, (int64_t)size - 1), -1);
        if (bm) {
            a = s > 0 ? 0 : (int64_t)size - 1;
        }
        int64_t z;
        if (shrink) {
            z = a >= size ? a : a + 1;
        } else {
            z = e;
            if (z < 0) {
                z += size;
            }
            z = s > 0 ? TFLM_MAX(TFLM_MIN(z, size), 0) : TFLM_MAX(TFLM_MIN(z, (int64_t)size - 1), -1);
            if (em) {
                z = s > 0 ? size : -1;
            }
        }
        shape[k] = size;
        start[k] = (int32_t)a;
        stop[k] = (int32_t)z;
        step[k] = s;
        writes *= ss_count(start[k], stop[k], s);
    }
    if (writes > out.elements) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "slice writes %u values into %u",
            (unsigned)TFLM_MIN(writes, UINT32_MAX), (unsigned)out.elements);
    }
    ss_data_t *d = tflm_prep_alloc(p, sizeof(ss_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->elem_size = (uint8_t)tflm_type_size(in.type);
    memcpy(d->shape, shape, sizeof(shape));
    memcpy(d->start, start, sizeof(start));
    memcpy(d->stop, stop, sizeof(stop));
    memcpy(d->stride, step, sizeof(step));
    return TFLM_OK;
}

static bool ss_more(int64_t i, int32_t stop, int32_t stride) {
    return stride > 0 ? i < stop : i > stop;
}

tflm_status_t tflm_strided_slice_eval(tflm_eval_t *e) {
    const ss_data_t *d = e->data;
    const size_t es = d->elem_size;
    const uint8_t *in = e->in[0];
    uint8_t *out = e->out[0];
    const int32_t *n = d->shape, *a = d->start, *z = d->stop, *s = d->stride;
    for (int64_t i0 = a[0]; ss_more(i0, z[0], s[0]); i0 += s[0]) {
        for (int64_t i1 = a[1]; ss_more(i1, z[1], s[1]); i1 += s[1]) {
            size_t base1 = (size_t)(i0 * n[1] + i1);
            for (int64_t i2 = a[2]; ss_more(i2, z[2], s[2]); i2 += s[2]) {
                size_t base2 = base1 * (size_t)n[2] + (size_t)i2;
                for (int64_t i3 = a[3]; ss_more(i3, z[3], s[3]); i3 += s[3]) {
                    size_t row = (base2 * (size_t)n[3] + (size_t)i3) * (size_t)n[4];
                    if (s[4] == 1) {
                        if (z[4] > a[4]) {
                            size_t len = (size_t)(z[4] - a[4]) * es;
                            memcpy(out, in + (row + (size_t)a[4]) * es, len);
                            out += len;
                        }
                        continue;
                    }
                    for (int64_t i4 = a[4]; ss_more(i4, z[4], s[4]); i4 += s[4]) {
                        memcpy(out, in + (row + (size_t)i4) * es, es);
                        out += es;
                    }
                }
            }
        }
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_STRIDED_SLICE
