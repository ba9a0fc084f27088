// PAD and PADV2: float32, int8, int16 and int32 with constant int32
// paddings (up to 5 dimensions), as TFLM's reference. PAD fills int8 with the
// output zero point and other types with 0; PADV2 takes the value from its
// third input, which may be computed at run time.
#include "kernels/kernels.h"

#if TFLM_KERNEL_PAD || TFLM_KERNEL_PADV2

#define PAD_MAX_DIMS (5)

typedef struct {
    uint8_t elem_size;
    uint8_t value_input; // the pad value comes from input 2
    uint16_t reserved;
    uint8_t value[4];    // pad value otherwise
    int32_t out_dims[PAD_MAX_DIMS];
    int32_t lo[PAD_MAX_DIMS]; // first element copied from the input
    int32_t hi[PAD_MAX_DIMS]; // one past the last
} pad_data_t;

tflm_status_t tflm_pad_prepare(tflm_prepare_t *p) {
    // TFLM runs PAD and PADV2 alike: both take an optional pad value.
    tflm_status_t st = tflm_prep_expect_io(p, 2, 3, 1);
    if (st) {
        return st;
    }
    tflm_tinfo_t in, pads, val, out;
    if ((st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_input(p, 1, &pads))
        || (st = tflm_prep_input(p, 2, &val)) || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (in.index < 0 || pads.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input or paddings missing");
    }
    bool has_value = tflm_prep_num_inputs(p) == 3;
    if (has_value && val.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "constant value missing");
    }
    if ((st = tflm_prep_same_type(p, &in, &out))) {
        return st;
    }
    static const uint8_t types[] = {TFLM_FLOAT32, TFLM_INT8, TFLM_INT16, TFLM_INT32};
    if ((st = tflm_prep_type_in(p, "input", &in, types, sizeof(types), NULL))) {
        return st;
    }
    if (in.ndims > PAD_MAX_DIMS) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "at most %u dimensions supported", (unsigned)PAD_MAX_DIMS);
    }
    if (has_value) {
        if (val.type != in.type) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "constant value is %s, input %s",
                tflm_type_name(val.type), tflm_type_name(in.type));
        }
        if (val.elements != 1) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "constant value must be a single value");
        }
    }
    if (!pads.is_const) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "non-constant paddings are not supported");
    }
    if (pads.type != TFLM_INT32) {
        return tflm_prep_unsupported_type(p, "paddings", pads.type);
    }
    if (pads.elements != 2u * out.ndims || in.ndims != out.ndims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "paddings hold %u values for %u output dimensions",
            (unsigned)pads.elements, (unsigned)out.ndims);
    }
    // Negative paddings crop, as the reference's loop does.
    uint32_t copied = 1;
    int32_t lo[PAD_MAX_DIMS], hi[PAD_MAX_DIMS], dims[PAD_MAX_DIMS];
    uint32_t shift = PAD_MAX_DIMS - out.ndims;
    for (uint32_t i = 0; i < PAD_MAX_DIMS; ++i) {
        dims[i] = 1;
        lo[i] = 0;
        hi[i] = 1;
    }
    for (uint32_t i = 0; i < out.ndims; ++i) {
        int32_t left = tflm_rd_i32(pads.data + 8u * i);
        int32_t right = tflm_rd_i32(pads.data + 8u * i + 4u);
        int64_t want = (int64_t)in.dims[i] + left + right;
        if (out.dims[i] != want) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "output dimension %u is %d, input and paddings give %d",
                (unsigned)i, (int)out.dims[i], (int)TFLM_MAX(TFLM_MIN(want, INT32_MAX), INT32_MIN));
        }
        int32_t a = TFLM_MIN(TFLM_MAX(left, 0), out.dims[i]);
        int32_t b = (int32_t)TFLM_MIN((int64_t)out.dims[i] - right, (int64_t)out.dims[i]);
        b = TFLM_MAX(b, a);
        dims[shift + i] = out.dims[i];
        lo[shift + i] = a;
        hi[shift + i] = b;
        copied *= (uint32_t)(b - a);
    }
    if (out.elements && copied > in.elements) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "paddings read past the input");
    }
    uint8_t value[4] = { 0 };
    if (in.type == TFLM_INT8) {
        if (!has_value) {
            value[0] = (uint8_t)out.zero_point;
        } else if (tflm_prep_zero_point(p, &val, 0) != tflm_prep_zero_point(p, &out, 0)
                   || tflm_prep_scale(p, &val, 0) != tflm_prep_scale(p, &out, 0)) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "constant value is not quantized as the output");
        }
    }
    pad_data_t *d = tflm_prep_alloc(p, sizeof(pad_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->elem_size = (uint8_t)tflm_type_size(in.type);
    d->value_input = has_value;
    memcpy(d->value, value, sizeof(value));
    for (uint32_t i = 0; i < PAD_MAX_DIMS; ++i) {
        // An empty output writes nothing.
        d->out_dims[i] = out.elements ? dims[i] : 0;
        d->lo[i] = lo[i];
        d->hi[i] = hi[i];
    }
    return TFLM_OK;
}

static void pad_fill(uint8_t *out, const uint8_t *value, uint32_t es, int32_t n) {
    for (int32_t i = 0; i < n; ++i) {
        memcpy(out, value, es);
        out += es;
    }
}

tflm_status_t tflm_pad_eval(tflm_eval_t *e) {
    const pad_data_t *d = e->data;
    const uint32_t es = d->elem_size;
    uint8_t value[4];
    memcpy(value, d->value_input ? e->in[2] : d->value, es);
    const uint8_t *in = e->in[0];
    uint8_t *out = e->out[0];
    const int32_t *n = d->out_dims, *lo = d->lo, *hi = d->hi;
    const int32_t depth = n[4];
    for (int32_t b = 0; b < n[0]; ++b) {
        bool pb = b < lo[0] || b >= hi[0];
        for (int32_t q = 0; q < n[1]; ++q) {
            bool pq = pb || q < lo[1] || q >= hi[1];
            for (int32_t h = 0; h < n[2]; ++h) {
                bool ph = pq || h < lo[2] || h >= hi[2];
                for (int32_t w = 0; w < n[3]; ++w) {
                    if (ph || w < lo[3] || w >= hi[3]) {
                        pad_fill(out, value, es, depth);
                        out += (size_t)depth * es;
                        continue;
                    }
                    // A row: padding, the input's elements, padding.
                    size_t copy = (size_t)(hi[4] - lo[4]) * es;
                    pad_fill(out, value, es, lo[4]);
                    out += (size_t)lo[4] * es;
                    if (copy) {
                        memcpy(out, in, copy);
                        out += copy;
                        in += copy;
                    }
                    pad_fill(out, value, es, depth - hi[4]);
                    out += (size_t)(depth - hi[4]) * es;
                }
            }
        }
    }
    return TFLM_OK;
}

// The engine's hooks (engine/kernel.h): eval() writes the output in order
// and reads the input in order with it, so over 4-D tensors padded (not
// cropped) along rows, columns and channels only, output row y is written
// whole before row y + 1 and reads input rows from y - top on.
static bool pad_overlap(tflm_prepare_t *p, const void *data, tflm_rows_t *g) {
    (void)data;
    tflm_tinfo_t in, pads, out;
    if (tflm_prep_input(p, 0, &in) || tflm_prep_input(p, 1, &pads) || tflm_prep_output(p, 0, &out)
        || in.ndims != 4 || out.ndims != 4 || pads.data == NULL || pads.type != TFLM_INT32 || pads.bytes != 32) {
        return false;
    }
    for (uint32_t i = 0; i < 8; ++i) {
        int32_t v = tflm_rd_i32(pads.data + 4 * i);
        if (v < 0 || (i < 2 && v != 0)) {
            return false;
        }
    }
    memset(g, 0, sizeof(*g));
    g->batches = in.dims[0];
    g->in_h = in.dims[1];
    g->out_h = out.dims[1];
    g->stride_h = 1;
    g->pad_h = tflm_rd_i32(pads.data + 8);
    return true;
}

#endif

#if TFLM_KERNEL_PAD
const tflm_kernel_hooks_t tflm_pad_hooks = { .overlap = pad_overlap };
#endif

#if TFLM_KERNEL_PADV2
// TFLM runs PADV2 as PAD: the same functions (its optional input 2 is read there).
const tflm_kernel_hooks_t tflm_padv2_hooks = { .overlap = pad_overlap };

tflm_status_t tflm_padv2_prepare(tflm_prepare_t *p) {
    return tflm_pad_prepare(p);
}

tflm_status_t tflm_padv2_eval(tflm_eval_t *e) {
    return tflm_pad_eval(e);
}
#endif
