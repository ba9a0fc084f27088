// SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND: float32 and int8 tensors of 3
// (NHC) or 4 (NHWC) dimensions, int32 block shape and paddings / crops, as
// TFLM's reference; int16 ones too, which TFLM refuses when it runs them and
// TF Lite moves as the other types (16x8 models with dilated convolutions
// converted at an unknown batch). TFLM reads the block shape and paddings at run time, so
// they may be computed tensors: constant ones are checked here once, others
// at each invoke (a mismatch with the output's shape is a RuntimeError
// where TFLM would leave values unwritten or write past them).
//
// SPACE_TO_BATCH_ND's padding is zero bytes for every type, what TFLM gives
// in a fresh arena: it fills the padding with a pad value it never sets (a
// field of its kernel data, whatever the arena held there), never the int8
// zero point. (int16's zero point is 0: TF Lite's padding.)
#include "kernels/kernels.h"
#include "kernels/pixel_copy.h"

#if TFLM_KERNEL_SPACE_TO_BATCH_ND || TFLM_KERNEL_BATCH_TO_SPACE_ND

typedef struct {
    uint8_t to_batch;   // SPACE_TO_BATCH_ND
    uint8_t dynamic;    // block shape and paddings read at run time
    uint8_t three_d;    // NHC: one spatial dimension
    uint8_t elem_size;
    int32_t in[4];      // NHWC (W = 1 for NHC)
    int32_t out[4];
    int32_t block_h, block_w, top, left;  // resolved when not dynamic
} space_batch_data_t;

// Block shape and the leading paddings (crops) from the tensors' bytes;
// false unless they give the output's shape from the input's, as TensorFlow
// defines the ops.
static bool space_batch_resolve(const space_batch_data_t *d, const uint8_t *block, const uint8_t *pads,
    int32_t *bh, int32_t *bw, int32_t *top, int32_t *left) {
    int32_t h = tflm_rd_i32(block), w = d->three_d ? 1 : tflm_rd_i32(block + 4);
    int32_t t = tflm_rd_i32(pads), b = tflm_rd_i32(pads + 4);
    int32_t l = d->three_d ? 0 : tflm_rd_i32(pads + 8), r = d->three_d ? 0 : tflm_rd_i32(pads + 12);
    if (h < 1 || w < 1 || t < 0 || b < 0 || l < 0 || r < 0) {
        return false;
    }
    // The spatial side's rows (columns) plus the paddings or crops are
    // block_h (block_w) times the batch side's, which holds block_h x
    // block_w times its batches.
    const int32_t *space = d->to_batch ? d->in : d->out, *batch = d->to_batch ? d->out : d->in;
    const int64_t hw = (int64_t)h * w;
    // (Positions along the spatial side fit int32.)
    if (hw > INT32_MAX || (int64_t)batch[1] * h > INT32_MAX || (int64_t)batch[2] * w > INT32_MAX
        || (int64_t)space[1] + t + b != (int64_t)batch[1] * h
        || (int64_t)space[2] + l + r != (int64_t)batch[2] * w || (int64_t)batch[0] != (int64_t)space[0] * hw
        || d->in[3] != d->out[3]) {
        return false;
    }
    *bh = h;
    *bw = w;
    *top = t;
    *left = l;
    return true;
}

// The error for constant block shape and paddings that do not fit, saying
// so when only the batch side's batch is off: what TF's converter writes
// for a model of unknown batch size (batch 1 in every static shape, which
// host_tools/tflm_host/batch_shapes.py corrects).
static tflm_status_t space_batch_refuse(tflm_prepare_t *p, const space_batch_data_t *d, const uint8_t *block,
    const uint8_t *pads) {
    const char *what = d->to_batch ? "paddings" : "crops";
    space_batch_data_t fit = *d;
    int32_t *batch = d->to_batch ? fit.out : fit.in;
    const int32_t *space = d->to_batch ? d->in : d->out;
    const int32_t h = tflm_rd_i32(block), w = d->three_d ? 1 : tflm_rd_i32(block + 4);
    // (Each factor checked first: their product then fits int64.)
    const int64_t hw = h > 0 && w > 0 ? (int64_t)h * w : 0;
    const int64_t given = hw <= INT32_MAX ? space[0] * hw : 0;
    int32_t unused;
    if (given > 0 && given <= INT32_MAX) {
        const int32_t written = batch[0];
        batch[0] = (int32_t)given;
        if (space_batch_resolve(&fit, block, pads, &unused, &unused, &unused, &unused)) {
            return tflm_error(p->err, TFLM_ERR_VALUE,
                "block shape and %s do not give the output's shape: batch %d, not %d (converted with an "
                "unknown batch size? tflm-host prepare writes the batch)", what, (int)written, (int)given);
        }
    }
    return tflm_error(p->err, TFLM_ERR_VALUE, "block shape and %s do not give the output's shape", what);
}

static tflm_status_t space_batch_prepare(tflm_prepare_t *p, bool to_batch) {
    tflm_status_t st = tflm_prep_expect_io(p, 3, 3, 1);
    if (st) {
        return st;
    }
    tflm_tinfo_t in, block, pads, out;
    if ((st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_input(p, 1, &block))
        || (st = tflm_prep_input(p, 2, &pads)) || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (in.index < 0 || block.index < 0 || pads.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input, block shape or %s missing", to_batch ? "paddings" : "crops");
    }
    if (in.type != TFLM_FLOAT32 && in.type != TFLM_INT8 && in.type != TFLM_INT16) {
        return tflm_prep_unsupported_type(p, "input", in.type);
    }
    if ((st = tflm_prep_same_type(p, &in, &out))) {
        return st;
    }
    if (in.ndims < 3 || in.ndims > 4 || out.ndims != in.ndims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input and output need 3 or 4 dimensions alike");
    }
    if (block.type != TFLM_INT32 || pads.type != TFLM_INT32) {
        return tflm_prep_unsupported_type(p, "block shape or paddings", block.type != TFLM_INT32 ? block.type : pads.type);
    }
    const uint32_t spatial = in.ndims - 2;
    if (block.ndims != 1 || block.elements != spatial || pads.ndims != 2 || pads.dims[0] != (int32_t)spatial
        || pads.dims[1] != 2) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "block shape needs %u values and %s %ux2",
            (unsigned)spatial, to_batch ? "paddings" : "crops", (unsigned)spatial);
    }
    space_batch_data_t tmp;
    memset(&tmp, 0, sizeof(tmp));
    tmp.to_batch = to_batch;
    tmp.three_d = in.ndims == 3;
    tmp.dynamic = !block.is_const || !pads.is_const;
    tmp.elem_size = (uint8_t)tflm_type_size(in.type);
    for (uint32_t i = 0, k = 0; i < 4; ++i) {
        // NHC reads as NH1C.
        bool w1 = tmp.three_d && i == 2;
        tmp.in[i] = w1 ? 1 : in.dims[k];
        tmp.out[i] = w1 ? 1 : out.dims[k];
        k += w1 ? 0 : 1;
    }
    if (!tmp.dynamic && !space_batch_resolve(&tmp, block.data, pads.data, &tmp.block_h, &tmp.block_w, &tmp.top,
        &tmp.left)) {
        return space_batch_refuse(p, &tmp, block.data, pads.data);
    }
    space_batch_data_t *d = tflm_prep_alloc(p, sizeof(space_batch_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    *d = tmp;
    return TFLM_OK;
}

// Output order: each output row is padding, or every block_w-th input pixel
// of an input row with padding around (a whole row when block_w is 1).
static void space_to_batch(const space_batch_data_t *d, int32_t bh, int32_t bw, int32_t top, int32_t left,
    const uint8_t *input, uint8_t *output) {
    const size_t pixel = (size_t)d->in[3] * d->elem_size;
    const int32_t in_b = d->in[0], in_h = d->in[1], in_w = d->in[2];
    const int32_t out_b = d->out[0], out_h = d->out[1], out_w = d->out[2];
    const size_t in_row = (size_t)in_w * pixel, out_row = (size_t)out_w * pixel;
    for (int32_t b = 0; b < out_b; ++b) {
        const int32_t shift = b / in_b, sh = shift / bw, sw = shift % bw;
        const uint8_t *image = input + (size_t)(b % in_b) * (size_t)in_h * in_row;
        for (int32_t y = 0; y < out_h; ++y, output += out_row) {
            const int32_t iy = y * bh + sh - top;
            if (iy < 0 || iy >= in_h) {
                memset(output, 0, out_row);
                continue;
            }
            const uint8_t *row = image + (size_t)iy * in_row;
            // Output columns x take input column x * bw + sw - left: those in [x0, x1) exist.
            int32_t x0 = left > sw ? (left - sw + bw - 1) / bw : 0;
            int32_t x1 = (in_w + left - sw + bw - 1) / bw;
            x0 = TFLM_MIN(x0, out_w);
            x1 = TFLM_MAX(TFLM_MIN(x1, out_w), x0);
            memset(output, 0, (size_t)x0 * pixel);
            if (bw == 1) {
                memcpy(output + (size_t)x0 * pixel, row + (size_t)(x0 - left) * pixel, (size_t)(x1 - x0) * pixel);
            } else {
                const uint8_t *src = row + (size_t)(x0 * bw + sw - left) * pixel;
                uint8_t *dst = output + (size_t)x0 * pixel;
                for (int32_t x = x0; x < x1; ++x, src += (size_t)bw * pixel, dst += pixel) {
                    tflm_pixel_copy(dst, src, pixel);
                }
            }
            memset(output + (size_t)x1 * pixel, 0, (size_t)(out_w - x1) * pixel);
        }
    }
}

// Input order: each input pixel lands at most once in the output (crops drop some).
static void batch_to_space(const space_batch_data_t *d, int32_t bh, int32_t bw, int32_t top, int32_t left,
    const uint8_t *input, uint8_t *output) {
    const size_t pixel = (size_t)d->in[3] * d->elem_size;
    const int32_t in_b = d->in[0], in_h = d->in[1], in_w = d->in[2];
    const int32_t out_b = d->out[0], out_h = d->out[1], out_w = d->out[2];
    const size_t out_row = (size_t)out_w * pixel;
    for (int32_t b = 0; b < in_b; ++b) {
        const int32_t spatial = b / out_b, sh = spatial / bw, sw = spatial % bw;
        uint8_t *image = output + (size_t)(b % out_b) * (size_t)out_h * out_row;
        for (int32_t y = 0; y < in_h; ++y, input += (size_t)in_w * pixel) {
            const int32_t oy = y * bh + sh - top;
            if (oy < 0 || oy >= out_h) {
                continue;
            }
            uint8_t *row = image + (size_t)oy * out_row;
            const uint8_t *src = input;
            for (int32_t x = 0; x < in_w; ++x, src += pixel) {
                const int32_t ox = x * bw + sw - left;
                if (ox >= 0 && ox < out_w) {
                    tflm_pixel_copy(row + (size_t)ox * pixel, src, pixel);
                }
            }
        }
    }
}

static tflm_status_t space_batch_eval(tflm_eval_t *e) {
    const space_batch_data_t *d = e->data;
    int32_t bh = d->block_h, bw = d->block_w, top = d->top, left = d->left;
    if (d->dynamic && !space_batch_resolve(d, e->in[1], e->in[2], &bh, &bw, &top, &left)) {
        return tflm_error(e->err, TFLM_ERR_RUNTIME, "block shape and %s do not give the output's shape",
            d->to_batch ? "paddings" : "crops");
    }
    if (d->to_batch) {
        space_to_batch(d, bh, bw, top, left, e->in[0], e->out[0]);
    } else {
        batch_to_space(d, bh, bw, top, left, e->in[0], e->out[0]);
    }
    return TFLM_OK;
}

#endif

#if TFLM_KERNEL_SPACE_TO_BATCH_ND
tflm_status_t tflm_space_to_batch_nd_prepare(tflm_prepare_t *p) {
    return space_batch_prepare(p, true);
}

tflm_status_t tflm_space_to_batch_nd_eval(tflm_eval_t *e) {
    return space_batch_eval(e);
}
#endif

#if TFLM_KERNEL_BATCH_TO_SPACE_ND
tflm_status_t tflm_batch_to_space_nd_prepare(tflm_prepare_t *p) {
    return space_batch_prepare(p, false);
}

tflm_status_t tflm_batch_to_space_nd_eval(tflm_eval_t *e) {
    return space_batch_eval(e);
}
#endif
