// MIRROR_PAD: float32 and int8 tensors of any rank, REFLECT (the edge is not
// repeated, paddings up to size - 1) and SYMMETRIC (repeated, up to size),
// int32 or int64 paddings, as TFLM's reference. TFLM reads the paddings at
// run time, so they may be computed: constant ones are checked here once,
// others at each invoke (a RuntimeError where TFLM would read outside the
// input).
//
// The output is built row by row (the last dimension): each output row is
// an input row, chosen by mirroring the other coordinates, with its own
// ends mirrored around it.
#include "kernels/kernels.h"

#if TFLM_KERNEL_MIRROR_PAD

typedef struct {
    uint8_t rank;
    uint8_t elem_size;
    uint8_t reflect;     // 1: REFLECT, 0: SYMMETRIC
    uint8_t dynamic;     // paddings read at run time
    uint8_t pad_type;    // TFLM_INT32 or TFLM_INT64
    uint8_t reserved[3];
    int32_t in[TFLM_MAX_DIMS];
    int32_t out[TFLM_MAX_DIMS];
    int32_t before[TFLM_MAX_DIMS];  // resolved when not dynamic
} mirror_pad_data_t;

// The leading paddings from the paddings' bytes; false unless they are
// within the mode's bounds and give the output's shape.
static bool mirror_pad_resolve(const mirror_pad_data_t *d, const uint8_t *pads, int32_t *before) {
    for (uint32_t i = 0; i < d->rank; ++i) {
        int64_t lo, hi;
        if (d->pad_type == TFLM_INT32) {
            lo = tflm_rd_i32(pads + 8u * i);
            hi = tflm_rd_i32(pads + 8u * i + 4u);
        } else {
            lo = (int64_t)tflm_rd_u64(pads + 16u * i);
            hi = (int64_t)tflm_rd_u64(pads + 16u * i + 8u);
        }
        const int64_t most = (int64_t)d->in[i] - d->reflect;
        if (lo < 0 || hi < 0 || lo > most || hi > most || (int64_t)d->in[i] + lo + hi != d->out[i]) {
            return false;
        }
        before[i] = (int32_t)lo;
    }
    return true;
}

tflm_status_t tflm_mirror_pad_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 2, 2, 1);
    if (st) {
        return st;
    }
    tflm_tinfo_t in, pads, out;
    if ((st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_input(p, 1, &pads))
        || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (in.index < 0 || pads.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input or paddings missing");
    }
    if (in.type != TFLM_FLOAT32 && in.type != TFLM_INT8) {
        return tflm_prep_unsupported_type(p, "input", in.type);
    }
    if ((st = tflm_prep_same_type(p, &in, &out))) {
        return st;
    }
    if (pads.type != TFLM_INT32 && pads.type != TFLM_INT64) {
        return tflm_prep_unsupported_type(p, "paddings", pads.type);
    }
    if (pads.ndims != 2 || pads.dims[0] != (int32_t)in.ndims || pads.dims[1] != 2 || out.ndims != in.ndims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "paddings must be %ux2 for the input's dimensions", (unsigned)in.ndims);
    }
    uint8_t mode = tflm_prep_opt_u8(p, TFLM_OPT_MIRROR_PAD_MODE, 0);
    if (mode > 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "unknown mirror padding mode %u", (unsigned)mode);
    }
    mirror_pad_data_t tmp;
    memset(&tmp, 0, sizeof(tmp));
    tmp.rank = (uint8_t)in.ndims;
    tmp.elem_size = (uint8_t)tflm_type_size(in.type);
    tmp.reflect = mode == 0;
    tmp.dynamic = !pads.is_const;
    tmp.pad_type = pads.type;
    for (uint32_t i = 0; i < in.ndims; ++i) {
        tmp.in[i] = in.dims[i];
        tmp.out[i] = out.dims[i];
    }
    if (!tmp.dynamic && !mirror_pad_resolve(&tmp, pads.data, tmp.before)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "paddings do not fit the input in %s mode or give another shape",
            tmp.reflect ? "REFLECT" : "SYMMETRIC");
    }
    mirror_pad_data_t *d = tflm_prep_alloc(p, sizeof(mirror_pad_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    *d = tmp;
    return TFLM_OK;
}

// The input coordinate an output coordinate `o` reads along one dimension.
static inline int32_t mirror_pad_source(int32_t o, int32_t before, int32_t size, int32_t reflect) {
    if (o < before) {
        return before - 1 + reflect - o;
    }
    o -= before;
    return o < size ? o : 2 * size - 1 - reflect - o;
}

static void mirror_pad_row(uint8_t *out, const uint8_t *row, int32_t before, int32_t size, int32_t out_size,
    int32_t reflect, uint32_t es) {
    // The mirrored ends element by element, the input row in one copy.
    for (int32_t o = 0; o < before; ++o, out += es) {
        memcpy(out, row + (size_t)mirror_pad_source(o, before, size, reflect) * es, es);
    }
    memcpy(out, row, (size_t)size * es);
    out += (size_t)size * es;
    for (int32_t o = before + size; o < out_size; ++o, out += es) {
        memcpy(out, row + (size_t)mirror_pad_source(o, before, size, reflect) * es, es);
    }
}

tflm_status_t tflm_mirror_pad_eval(tflm_eval_t *e) {
    const mirror_pad_data_t *d = e->data;
    int32_t before_buf[TFLM_MAX_DIMS];
    const int32_t *before = d->before;
    if (d->dynamic) {
        if (!mirror_pad_resolve(d, e->in[1], before_buf)) {
            return tflm_error(e->err, TFLM_ERR_RUNTIME, "paddings do not fit the input in %s mode or give another shape",
                d->reflect ? "REFLECT" : "SYMMETRIC");
        }
        before = before_buf;
    }
    const uint32_t es = d->elem_size, rank = d->rank;
    const uint8_t *in = e->in[0];
    uint8_t *out = e->out[0];
    if (rank == 0) {
        memcpy(out, in, es);
        return TFLM_OK;
    }
    const int32_t last = (int32_t)rank - 1, reflect = d->reflect;
    // Input strides (elements) and the output rows to make.
    size_t stride[TFLM_MAX_DIMS];
    size_t rows = 1;
    stride[last] = 1;
    for (int32_t i = last - 1; i >= 0; --i) {
        stride[i] = stride[i + 1] * (size_t)d->in[i + 1];
        rows *= (size_t)d->out[i];
    }
    if (d->out[last] == 0) {
        return TFLM_OK;
    }
    const size_t out_row = (size_t)d->out[last] * es;
    int32_t at[TFLM_MAX_DIMS] = { 0 };  // output coordinates of the row
    for (size_t r = 0; r < rows; ++r, out += out_row) {
        size_t src = 0;
        for (int32_t i = 0; i < last; ++i) {
            src += (size_t)mirror_pad_source(at[i], before[i], d->in[i], reflect) * stride[i];
        }
        mirror_pad_row(out, in + src * es, before[last], d->in[last], d->out[last], reflect, es);
        for (int32_t i = last - 1; i >= 0 && ++at[i] == d->out[i]; --i) {
            at[i] = 0;
        }
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_MIRROR_PAD
