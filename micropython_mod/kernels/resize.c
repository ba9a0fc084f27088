// RESIZE_BILINEAR (float32, int8) and RESIZE_NEAREST_NEIGHBOR (float32,
// int8, int16) of NHWC tensors to a constant size, with align_corners and
// half_pixel_centers, bit-exact with TFLM's reference.
//
// prepare() works out each output column's and row's source positions and
// weights once, as TFLM computes them per pixel (float32 scales and floors
// for float32 and nearest, 10-bit fixed point for int8), and keeps them in
// the kernel data: eval() walks the tables. An output row whose taps equal
// the previous row's is a copy of it.
#include "kernels/kernels.h"
#include "kernels/pixel_copy.h"
#include "engine/quant.h"

#if TFLM_KERNEL_RESIZE_BILINEAR || TFLM_KERNEL_RESIZE_NEAREST_NEIGHBOR

enum { RESIZE_BILINEAR_F32, RESIZE_BILINEAR_S8, RESIZE_NEAREST };

typedef struct {
    uint8_t kind;
    uint8_t elem_size;
    uint16_t reserved;
    int32_t batches;
    int32_t out_h;
    int32_t out_w;
    int32_t depth;
    uint32_t in_image;     // elements of one input image
    // then the column table (out_w entries), then the row table (out_h):
    // resize_tap_t for bilinear, uint32_t byte offsets for nearest
} resize_data_t;

// One output column (row) of a bilinear resize: the two source columns
// (rows) as element offsets and their weights, float32 (1 - f and f) or
// 10-bit fixed point (1024 - d and d).
typedef struct {
    uint32_t lo;
    uint32_t hi;
    union {
        float f;
        int32_t q;
    } w_lo, w_hi;
} resize_tap_t;

// floor and ceil of a float whose value fits int32 (the engine links no libm).
static int32_t resize_floor(float v) {
    int32_t i = (int32_t)v;
    return (float)i > v ? i - 1 : i;
}

static int32_t resize_ceil(float v) {
    int32_t i = (int32_t)v;
    return (float)i < v ? i + 1 : i;
}

// TFLM's scale of one axis: (in - 1) / (out - 1) with aligned corners.
static float resize_scale(int32_t in, int32_t out, bool align_corners) {
    if (align_corners && out > 1) {
        return (float)(in - 1) / (float)(out - 1);
    }
    return (float)in / (float)out;
}

// A tap's two sources (lo clamped below, hi above) as element offsets;
// false when one is still outside the input.
static bool resize_tap_sources(resize_tap_t *t, int32_t lo, int32_t hi, int32_t in, uint32_t stride) {
    if (lo > in - 1 || hi < 0) {
        return false;
    }
    t->lo = (uint32_t)lo * stride;
    t->hi = (uint32_t)hi * stride;
    return true;
}

// The float32 bilinear taps of one axis; false when TFLM would read past
// the input (it clamps the upper source only).
static bool resize_taps_f32(resize_tap_t *t, int32_t in, int32_t out, bool align_corners, bool half_pixel,
    uint32_t stride) {
    const float scale = resize_scale(in, out, align_corners);
    for (int32_t o = 0; o < out; ++o) {
        float v = half_pixel ? ((float)o + 0.5f) * scale - 0.5f : (float)o * scale;
        int32_t lo = TFLM_MAX(resize_floor(v), 0);
        if (!resize_tap_sources(&t[o], lo, TFLM_MIN(resize_ceil(v), in - 1), in, stride)) {
            return false;
        }
        float f = v - (float)lo;
        t[o].w_lo.f = 1.0f - f;
        t[o].w_hi.f = f;
    }
    return true;
}

// The int8 bilinear taps: TFLM's integer path, positions in 1/1024 steps.
static bool resize_taps_s8(resize_tap_t *t, int32_t in, int32_t out, bool align_corners, bool half_pixel,
    uint32_t stride) {
    int32_t scale = (1024 * in + out / 2) / out;
    if (align_corners && out > 1) {
        scale = (1024 * (in - 1) + (out - 1) / 2) / (out - 1);
    }
    for (int32_t o = 0; o < out; ++o) {
        int32_t v = half_pixel ? o * scale + scale / 2 - 512 : o * scale;
        int32_t lo = TFLM_MAX(v / 1024, 0);
        if (!resize_tap_sources(&t[o], lo, TFLM_MIN((v + 1023) / 1024, in - 1), in, stride)) {
            return false;
        }
        int32_t d = v - 1024 * lo;
        t[o].w_lo.q = 1024 - d;
        t[o].w_hi.q = d;
    }
    return true;
}

// TFLM's nearest source of one axis, as a byte offset.
static void resize_nearest_taps(uint32_t *t, int32_t in, int32_t out, bool align_corners, bool half_pixel,
    uint32_t stride) {
    const float scale = resize_scale(in, out, align_corners);
    const float offset = half_pixel ? 0.5f : 0.0f;
    for (int32_t o = 0; o < out; ++o) {
        float v = ((float)o + offset) * scale;
        int32_t src = TFLM_MIN(align_corners ? (int32_t)tflm_roundf(v) : resize_floor(v), in - 1);
        if (half_pixel) {
            src = TFLM_MAX(src, 0);
        }
        // Without half-pixel centers the position is never negative.
        t[o] = (uint32_t)src * stride;
    }
}

static tflm_status_t resize_prepare(tflm_prepare_t *p, bool bilinear) {
    tflm_status_t st = tflm_prep_expect_io(p, 2, 2, 1);
    if (st) {
        return st;
    }
    tflm_tinfo_t in, size, out;
    if ((st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_input(p, 1, &size))
        || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (in.index < 0 || size.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input or size missing");
    }
    bool ok_type = in.type == TFLM_FLOAT32 || in.type == TFLM_INT8 || (!bilinear && in.type == TFLM_INT16);
    if (!ok_type) {
        return tflm_prep_unsupported_type(p, "input", in.type);
    }
    if ((st = tflm_prep_same_type(p, &in, &out))) {
        return st;
    }
    if (in.ndims != 4 || out.ndims != 4) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input and output need 4 dimensions");
    }
    if (size.type != TFLM_INT32) {
        return tflm_prep_unsupported_type(p, "size", size.type);
    }
    if (size.ndims != 1 || size.elements != 2) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "size must hold 2 values");
    }
    if (!size.is_const) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "non-constant size is not supported");
    }
    uint8_t ac, hpc;
    if (bilinear) {
        ac = tflm_prep_opt_u8(p, TFLM_OPT_RESIZE_BILINEAR_ALIGN_CORNERS, 0);
        hpc = tflm_prep_opt_u8(p, TFLM_OPT_RESIZE_BILINEAR_HALF_PIXEL_CENTERS, 0);
        if (ac && hpc) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "half_pixel_centers needs align_corners false");
        }
    } else {
        ac = tflm_prep_opt_u8(p, TFLM_OPT_RESIZE_NEAREST_NEIGHBOR_ALIGN_CORNERS, 0);
        hpc = tflm_prep_opt_u8(p, TFLM_OPT_RESIZE_NEAREST_NEIGHBOR_HALF_PIXEL_CENTERS, 0);
    }
    const int32_t out_h = tflm_rd_i32(size.data), out_w = tflm_rd_i32(size.data + 4);
    const int32_t in_h = in.dims[1], in_w = in.dims[2], depth = in.dims[3];
    if (out_h < 1 || out_w < 1 || in_h < 1 || in_w < 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "cannot resize %dx%d to %dx%d", (int)in_h, (int)in_w, (int)out_h, (int)out_w);
    }
    if (out.dims[0] != in.dims[0] || out.dims[1] != out_h || out.dims[2] != out_w || out.dims[3] != depth) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output shape is not %dx%dx%dx%d",
            (int)in.dims[0], (int)out_h, (int)out_w, (int)depth);
    }
    uint8_t kind = !bilinear ? RESIZE_NEAREST : in.type == TFLM_FLOAT32 ? RESIZE_BILINEAR_F32 : RESIZE_BILINEAR_S8;
    // TFLM's integer positions are int32 products of 1024 x the input size.
    if (kind == RESIZE_BILINEAR_S8 && (in_h >= (1 << 20) || in_w >= (1 << 20))) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "int8 inputs of 2^20 rows or columns are not supported");
    }
    const uint32_t entry = kind == RESIZE_NEAREST ? sizeof(uint32_t) : sizeof(resize_tap_t);
    const uint64_t bytes = sizeof(resize_data_t) + ((uint64_t)out_w + (uint64_t)out_h) * entry;
    if (bytes > UINT32_MAX / 2) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output of %dx%d is too large", (int)out_h, (int)out_w);
    }
    resize_data_t *d = tflm_prep_alloc(p, (uint32_t)bytes);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    const uint32_t es = (uint32_t)tflm_type_size(in.type);
    d->kind = kind;
    d->elem_size = (uint8_t)es;
    d->batches = in.dims[0];
    d->out_h = out_h;
    d->out_w = out_w;
    d->depth = depth;
    d->in_image = (uint32_t)in_h * (uint32_t)in_w * (uint32_t)depth;
    // Offsets fit 32 bits: the input's bytes do.
    const uint32_t col = (uint32_t)depth, row = (uint32_t)in_w * (uint32_t)depth;
    if (kind == RESIZE_NEAREST) {
        uint32_t *cols = (uint32_t *)(d + 1);
        resize_nearest_taps(cols, in_w, out_w, ac, hpc, col * es);
        resize_nearest_taps(cols + out_w, in_h, out_h, ac, hpc, row * es);
        return TFLM_OK;
    }
    resize_tap_t *cols = (resize_tap_t *)(d + 1);
    bool ok = kind == RESIZE_BILINEAR_F32
        ? resize_taps_f32(cols, in_w, out_w, ac, hpc, col) && resize_taps_f32(cols + out_w, in_h, out_h, ac, hpc, row)
        : resize_taps_s8(cols, in_w, out_w, ac, hpc, col) && resize_taps_s8(cols + out_w, in_h, out_h, ac, hpc, row);
    if (!ok) {
        // TFLM reads past the input there (large upscaling of int8).
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "resizing %dx%d to %dx%d reads past the input",
            (int)in_h, (int)in_w, (int)out_h, (int)out_w);
    }
    return TFLM_OK;
}

static bool resize_same_taps(const resize_tap_t *a, const resize_tap_t *b) {
    return a->lo == b->lo && a->hi == b->hi && a->w_lo.q == b->w_lo.q && a->w_hi.q == b->w_hi.q;
}

// The four taps weighted in TFLM's order: each value times its row weight,
// then its column weight, summed left to right, plus 0 (which makes -0 +0).
static void resize_bilinear_f32(const resize_data_t *d, const float *input, float *output) {
    const int32_t batches = d->batches, out_h = d->out_h, out_w = d->out_w, depth = d->depth;
    const uint32_t in_image = d->in_image;
    const resize_tap_t *cols = (const resize_tap_t *)(d + 1), *rows = cols + out_w;
    const size_t row_elems = (size_t)out_w * (size_t)depth;
    for (int32_t b = 0; b < batches; ++b, input += in_image) {
        for (int32_t y = 0; y < out_h; ++y, output += row_elems) {
            const resize_tap_t ty = rows[y];
            if (y > 0 && resize_same_taps(&ty, &rows[y - 1])) {
                memcpy(output, output - row_elems, row_elems * sizeof(float));
                continue;
            }
            const float *r0 = input + ty.lo, *r1 = input + ty.hi;
            const float gy = ty.w_lo.f, fy = ty.w_hi.f;
            float *o = output;
            for (int32_t x = 0; x < out_w; ++x) {
                const resize_tap_t tx = cols[x];
                const float gx = tx.w_lo.f, fx = tx.w_hi.f;
                const float *p00 = r0 + tx.lo, *p10 = r1 + tx.lo, *p01 = r0 + tx.hi, *p11 = r1 + tx.hi;
                for (int32_t c = 0; c < depth; ++c) {
                    float v = p00[c] * gy * gx + p10[c] * fy * gx + p01[c] * gy * fx + p11[c] * fy * fx;
                    *o++ = v + 0.0f;
                }
            }
        }
    }
}

// Integer weights: each tap's is the product of its row's and column's (as
// TFLM multiplies them), and the sum is TFLM's 2^20-scaled value, exact in
// 32 bits (the four weights' magnitudes add up to at most 2048^2, the
// values' to 128), rounded half away from zero.
static void resize_bilinear_s8(const resize_data_t *d, const int8_t *input, int8_t *output) {
    const int32_t batches = d->batches, out_h = d->out_h, out_w = d->out_w, depth = d->depth;
    const uint32_t in_image = d->in_image;
    const resize_tap_t *cols = (const resize_tap_t *)(d + 1), *rows = cols + out_w;
    const size_t row_elems = (size_t)out_w * (size_t)depth;
    for (int32_t b = 0; b < batches; ++b, input += in_image) {
        for (int32_t y = 0; y < out_h; ++y, output += row_elems) {
            const resize_tap_t ty = rows[y];
            if (y > 0 && resize_same_taps(&ty, &rows[y - 1])) {
                memcpy(output, output - row_elems, row_elems);
                continue;
            }
            const int8_t *r0 = input + ty.lo, *r1 = input + ty.hi;
            const int32_t gy = ty.w_lo.q, fy = ty.w_hi.q;
            int8_t *o = output;
            for (int32_t x = 0; x < out_w; ++x) {
                const resize_tap_t tx = cols[x];
                const int32_t w00 = gy * tx.w_lo.q, w10 = fy * tx.w_lo.q, w01 = gy * tx.w_hi.q, w11 = fy * tx.w_hi.q;
                const int8_t *p00 = r0 + tx.lo, *p10 = r1 + tx.lo, *p01 = r0 + tx.hi, *p11 = r1 + tx.hi;
                for (int32_t c = 0; c < depth; ++c) {
                    const int32_t acc = p00[c] * w00 + p10[c] * w10 + p01[c] * w01 + p11[c] * w11;
                    // Half away from zero: below zero the half is one less.
                    *o++ = (int8_t)((acc + (1 << 19) + (acc >> 31)) >> 20);
                }
            }
        }
    }
}

static void resize_nearest(const resize_data_t *d, const uint8_t *input, uint8_t *output) {
    const int32_t batches = d->batches, out_h = d->out_h, out_w = d->out_w;
    const size_t pixel = (size_t)d->depth * d->elem_size;
    const size_t in_image = (size_t)d->in_image * d->elem_size;
    const uint32_t *cols = (const uint32_t *)(d + 1), *rows = cols + out_w;
    const size_t row_bytes = (size_t)out_w * pixel;
    if (pixel == 0) {
        return;
    }
    for (int32_t b = 0; b < batches; ++b, input += in_image) {
        for (int32_t y = 0; y < out_h; ++y, output += row_bytes) {
            if (y > 0 && rows[y] == rows[y - 1]) {
                memcpy(output, output - row_bytes, row_bytes);
                continue;
            }
            const uint8_t *src = input + rows[y];
            uint8_t *o = output;
            for (int32_t x = 0; x < out_w; ++x, o += pixel) {
                tflm_pixel_copy(o, src + cols[x], pixel);
            }
        }
    }
}

static tflm_status_t resize_eval(tflm_eval_t *e) {
    const resize_data_t *d = e->data;
    switch (d->kind) {
        case RESIZE_BILINEAR_F32:
            resize_bilinear_f32(d, e->in[0], e->out[0]);
            break;
        case RESIZE_BILINEAR_S8:
            resize_bilinear_s8(d, e->in[0], e->out[0]);
            break;
        default:
            resize_nearest(d, e->in[0], e->out[0]);
            break;
    }
    return TFLM_OK;
}

#endif

#if TFLM_KERNEL_RESIZE_BILINEAR
tflm_status_t tflm_resize_bilinear_prepare(tflm_prepare_t *p) {
    return resize_prepare(p, true);
}

tflm_status_t tflm_resize_bilinear_eval(tflm_eval_t *e) {
    return resize_eval(e);
}
#endif

#if TFLM_KERNEL_RESIZE_NEAREST_NEIGHBOR
tflm_status_t tflm_resize_nearest_neighbor_prepare(tflm_prepare_t *p) {
    return resize_prepare(p, false);
}

tflm_status_t tflm_resize_nearest_neighbor_eval(tflm_eval_t *e) {
    return resize_eval(e);
}
#endif
