// AVERAGE_POOL_2D and MAX_POOL_2D: float32, int8 and int16; L2_POOL_2D:
// float32 (TFLM has no other). Bit-exact with TFLM's reference (same
// summation order, same rounding of the average, a correctly rounded root).
#include "kernels/kernels.h"
#include "engine/fmath.h"
#include "engine/quant.h"
#include "engine/schema.h"
#include "kernels/pool_s8.h"

#define TFLM_KERNEL_ANY_POOL_2D (TFLM_KERNEL_AVERAGE_POOL_2D || TFLM_KERNEL_MAX_POOL_2D || TFLM_KERNEL_L2_POOL_2D)

#if TFLM_KERNEL_ANY_POOL_2D

enum { POOL_FLOAT32, POOL_INT8, POOL_INT16 };

// The kernels' data.
typedef struct {
    uint8_t kind;
    uint8_t reserved;
    // Window geometry fits 16 bits (checked in prepare): keeps the block small.
    uint16_t stride_h;
    uint16_t stride_w;
    uint16_t filter_h;
    uint16_t filter_w;
    uint16_t pad_h;
    uint16_t pad_w;
    uint16_t reserved2;
    int32_t batches;
    int32_t in_h;
    int32_t in_w;
    int32_t depth;
    int32_t out_h;
    int32_t out_w;
    union {
        int32_t q;
        float f;
    } act_min, act_max;
} pool_data_t;

// The part of the filter window that lies inside the input, along one axis.
static inline void pool_window(int32_t out_pos, int32_t stride, int32_t pad, int32_t filter, int32_t in_size,
    int32_t *origin, int32_t *start, int32_t *end) {
    *origin = out_pos * stride - pad;
    *start = *origin < 0 ? -*origin : 0;
    *end = in_size - *origin < filter ? in_size - *origin : filter;
}

// Walks the output positions and channels with the geometry in locals
// (stores through `output` could alias the kernel data). BODY sees `win`,
// the first tap of the window inside the input for this channel, the window's
// `rows` and `cols` there, and the strides `in_row` and `depth`; it writes
// *output.
#define POOL_LOOP(T, BODY) \
    const int32_t batches = d->batches, in_h = d->in_h, in_w = d->in_w, depth = d->depth; \
    const int32_t out_h = d->out_h, out_w = d->out_w; \
    const int32_t stride_h = d->stride_h, stride_w = d->stride_w; \
    const int32_t filter_h = d->filter_h, filter_w = d->filter_w, pad_h = d->pad_h, pad_w = d->pad_w; \
    const int32_t in_row = in_w * depth; \
    for (int32_t b = 0; b < batches; ++b) { \
        const T *in_b = input + b * in_h * in_row; \
        for (int32_t oy = 0; oy < out_h; ++oy) { \
            int32_t iy, ys, ye; \
            pool_window(oy, stride_h, pad_h, filter_h, in_h, &iy, &ys, &ye); \
            for (int32_t ox = 0; ox < out_w; ++ox) { \
                int32_t ix, xs, xe; \
                pool_window(ox, stride_w, pad_w, filter_w, in_w, &ix, &xs, &xe); \
                const int32_t rows = ye - ys, cols = xe - xs; \
                const T *win = in_b + (iy + ys) * in_row + (ix + xs) * depth; \
                for (int32_t c = 0; c < depth; ++c, ++win, ++output) { \
                    BODY \
                } \
            } \
        } \
    }

// The window's values in TFLM's order (rows, then columns).
#define POOL_TAPS(T, v, STMT) \
    for (int32_t r = 0; r < rows; ++r) { \
        for (int32_t k = 0; k < cols; ++k) { \
            const T v = win[r * in_row + k * depth]; \
            STMT; \
        } \
    }

#endif

#if TFLM_KERNEL_AVERAGE_POOL_2D

static void tflm_average_pool_2d_float32(const pool_data_t *d, const float *input, float *output) {
    const float act_min = d->act_min.f, act_max = d->act_max.f;
    POOL_LOOP(float, {
        float total = 0.0f;
        POOL_TAPS(float, v, total += v);
        // The tap count is exact as a float, as the reference counts it.
        *output = tflm_clampf(total / (float)(rows * cols), act_min, act_max);
    })
}

// Rounds half away from zero; the sum wraps as the reference's int32 does.
static inline int32_t pool_average(uint32_t acc, int32_t count) {
    int32_t sum = (int32_t)acc;
    int32_t half = count / 2;
    return sum > 0 ? tflm_wrap_add(sum, half) / count : tflm_wrap_add(sum, -half) / count;
}

static void average_pool_2d_int8_taps(const pool_data_t *d, const int8_t *input, int8_t *output) {
    const int32_t act_min = d->act_min.q, act_max = d->act_max.q;
    POOL_LOOP(int8_t, {
        uint32_t acc = 0;
        POOL_TAPS(int8_t, v, acc += (uint32_t)(int32_t)v);
        *output = (int8_t)tflm_clamp(pool_average(acc, rows * cols), act_min, act_max);
    })
}

// The averages of four channels from their lane words (pool_s8.h):
// channels 0 and 1, then 2 and 3 (the lanes' high halves).
static inline void pool_put4(int8_t *output, uint32_t even, uint32_t odd, int32_t taps, int32_t half, uint32_t recip,
    int32_t act_min, int32_t act_max) {
    for (int k = 0; k < 4; k += 2, even >>= 16, odd >>= 16) {
        int32_t a0 = tflm_pool_s8_average(tflm_pool_s8_lane(even, taps), half, recip);
        int32_t a1 = tflm_pool_s8_average(tflm_pool_s8_lane(odd, taps), half, recip);
        output[k] = (int8_t)tflm_clamp(a0, act_min, act_max);
        output[k + 1] = (int8_t)tflm_clamp(a1, act_min, act_max);
    }
}

// Four channels at a time (pool_s8.h), eight on DSP cores: channels a
// multiple of four, the input on a word, windows of TFLM_POOL_S8_TAPS taps at
// most. Not inlined into eval(): the tap loop keeps its steps in registers then.
__attribute__((noinline)) static void average_pool_2d_int8_words(const pool_data_t *d, const int8_t *input, int8_t *output) {
    const int32_t act_min = d->act_min.q, act_max = d->act_max.q;
    const int32_t batches = d->batches, in_h = d->in_h, in_w = d->in_w, depth = d->depth;
    const int32_t out_h = d->out_h, out_w = d->out_w;
    const int32_t stride_h = d->stride_h, stride_w = d->stride_w;
    const int32_t filter_h = d->filter_h, filter_w = d->filter_w, pad_h = d->pad_h, pad_w = d->pad_w;
    const int32_t in_row = in_w * depth;
    for (int32_t b = 0; b < batches; ++b) {
        const int8_t *in_b = input + b * in_h * in_row;
        for (int32_t oy = 0; oy < out_h; ++oy) {
            int32_t iy, ys, ye;
            pool_window(oy, stride_h, pad_h, filter_h, in_h, &iy, &ys, &ye);
            for (int32_t ox = 0; ox < out_w; ++ox) {
                int32_t ix, xs, xe;
                pool_window(ox, stride_w, pad_w, filter_w, in_w, &ix, &xs, &xe);
                int32_t rows = ye - ys, cols = xe - xs;
                const int32_t taps = rows * cols, half = taps / 2;
                // Whole input rows follow each other: one run of taps.
                if (cols * depth == in_row) {
                    cols = taps;
                    rows = 1;
                }
                const uint32_t recip = tflm_pool_s8_recip(taps);
                const int8_t *win = in_b + (iy + ys) * in_row + (ix + xs) * depth;
                for (int32_t c = 0; c < depth;) {
#if TFLM_KERNEL_ARCH == TFLM_ARCH_DSP
                    // Eight channels while they last: two words' lanes, then
                    // one loop over them (one copy of the averages' code).
                    uint32_t lanes[4];
                    int32_t n = 4;
                    if (c + 8 <= depth) {
                        tflm_pool_s8_sum8(win + c, rows, cols, depth, in_row - cols * depth, lanes);
                        n = 8;
                    } else {
                        tflm_pool_s8_sum4(win + c, rows, cols, depth, in_row - cols * depth, &lanes[0], &lanes[1]);
                    }
                    for (int32_t k = 0; k < n; k += 2, output += 2) {
                        const uint32_t *word = lanes + (k >> 2) * 2;
                        const int shift = (k & 2) * 8;
                        int32_t a0 = tflm_pool_s8_average(tflm_pool_s8_lane(word[0] >> shift, taps), half, recip);
                        int32_t a1 = tflm_pool_s8_average(tflm_pool_s8_lane(word[1] >> shift, taps), half, recip);
                        output[0] = (int8_t)tflm_clamp(a0, act_min, act_max);
                        output[1] = (int8_t)tflm_clamp(a1, act_min, act_max);
                    }
                    c += n;
#else
                    uint32_t even, odd;
                    tflm_pool_s8_sum4(win + c, rows, cols, depth, in_row - cols * depth, &even, &odd);
                    pool_put4(output, even, odd, taps, half, recip, act_min, act_max);
                    c += 4, output += 4;
#endif
                }
            }
        }
    }
}

static void tflm_average_pool_2d_int8(const pool_data_t *d, const int8_t *input, int8_t *output) {
    if ((d->depth & 3) == 0 && ((uintptr_t)input & 3u) == 0
        && (uint32_t)d->filter_h * d->filter_w <= TFLM_POOL_S8_TAPS) {
        average_pool_2d_int8_words(d, input, output);
    } else {
        average_pool_2d_int8_taps(d, input, output);
    }
}

static void tflm_average_pool_2d_int16(const pool_data_t *d, const int16_t *input, int16_t *output) {
    const int32_t act_min = d->act_min.q, act_max = d->act_max.q;
    POOL_LOOP(int16_t, {
        uint32_t acc = 0;
        POOL_TAPS(int16_t, v, acc += (uint32_t)(int32_t)v);
        *output = (int16_t)tflm_clamp(pool_average(acc, rows * cols), act_min, act_max);
    })
}

#endif

#if TFLM_KERNEL_MAX_POOL_2D

static void tflm_max_pool_2d_float32(const pool_data_t *d, const float *input, float *output) {
    const float act_min = d->act_min.f, act_max = d->act_max.f;
    POOL_LOOP(float, {
        float max = -3.40282347e+38f;
        // std::max's comparison: a NaN input never replaces the maximum.
        POOL_TAPS(float, v, max = (max < v) ? v : max);
        *output = tflm_clampf(max, act_min, act_max);
    })
}

static void tflm_max_pool_2d_int8(const pool_data_t *d, const int8_t *input, int8_t *output) {
    const int32_t act_min = d->act_min.q, act_max = d->act_max.q;
    POOL_LOOP(int8_t, {
        int32_t max = -128;
        POOL_TAPS(int8_t, v, max = v > max ? v : max);
        *output = (int8_t)tflm_clamp(max, act_min, act_max);
    })
}

static void tflm_max_pool_2d_int16(const pool_data_t *d, const int16_t *input, int16_t *output) {
    const int32_t act_min = d->act_min.q, act_max = d->act_max.q;
    POOL_LOOP(int16_t, {
        int32_t max = -32768;
        POOL_TAPS(int16_t, v, max = v > max ? v : max);
        *output = (int16_t)tflm_clamp(max, act_min, act_max);
    })
}

#endif

#if TFLM_KERNEL_L2_POOL_2D

static void tflm_l2_pool_2d_float32(const pool_data_t *d, const float *input, float *output) {
    const float act_min = d->act_min.f, act_max = d->act_max.f;
    POOL_LOOP(float, {
        float total = 0.0f;
        POOL_TAPS(float, v, total += v * v);
        *output = tflm_clampf(tflm_sqrtf(total / (float)(rows * cols)), act_min, act_max);
    })
}

#endif

#if TFLM_KERNEL_ANY_POOL_2D

// Input types, in the order of the kinds.
static const uint8_t pool_types[] = { TFLM_FLOAT32, TFLM_INT8, TFLM_INT16 };

// float_only: L2_POOL_2D, which TFLM runs in float32 only. types: the op's
// TFLM_TYPES_<OP>, the types its kernel was built for.
static tflm_status_t pool_prepare(tflm_prepare_t *p, bool float_only, uint32_t types) {
    tflm_tinfo_t in, out;
    uint8_t kind = 0;
    tflm_status_t st = tflm_prep_io_1_1(p, &in, &out);
    if (st || (st = tflm_prep_type_in(p, "input", &in, pool_types, float_only ? 1 : sizeof(pool_types), &kind))
        || (st = tflm_prep_same_type(p, &in, &out))) {
        return st;
    }
    if (TFLM_TYPES_LEFT_OUT && !tflm_type_enabled(types, in.type)) {
        return tflm_prep_unsupported_type(p, "input", in.type);
    }
    if (in.ndims != 4 || out.ndims != 4) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input and output need 4 dimensions");
    }
    uint8_t padding = tflm_prep_opt_u8(p, TFLM_OPT_POOL2D_PADDING, TFLM_PADDING_SAME);
    int32_t stride_w = tflm_prep_opt_i32(p, TFLM_OPT_POOL2D_STRIDE_W, 0);
    int32_t stride_h = tflm_prep_opt_i32(p, TFLM_OPT_POOL2D_STRIDE_H, 0);
    int32_t filter_w = tflm_prep_opt_i32(p, TFLM_OPT_POOL2D_FILTER_WIDTH, 0);
    int32_t filter_h = tflm_prep_opt_i32(p, TFLM_OPT_POOL2D_FILTER_HEIGHT, 0);
    uint8_t activation = tflm_prep_opt_u8(p, TFLM_OPT_POOL2D_FUSED_ACTIVATION_FUNCTION, TFLM_ACT_NONE);
    if (padding != TFLM_PADDING_SAME && padding != TFLM_PADDING_VALID) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "unknown padding %u", (unsigned)padding);
    }
    if (stride_w <= 0 || stride_h <= 0 || filter_w <= 0 || filter_h <= 0
        || stride_w > UINT16_MAX || stride_h > UINT16_MAX || filter_w > UINT16_MAX || filter_h > UINT16_MAX) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "bad window: stride %dx%d, filter %dx%d",
            (int)stride_h, (int)stride_w, (int)filter_h, (int)filter_w);
    }
    int32_t in_h = in.dims[1], in_w = in.dims[2];
    int32_t out_h = tflm_window_out_size(padding, in_h, filter_h, stride_h, 1);
    int32_t out_w = tflm_window_out_size(padding, in_w, filter_w, stride_w, 1);
    if (out_h == 0 || out_w == 0 || out.dims[0] != in.dims[0] || out.dims[3] != in.dims[3]
        || out.dims[1] != out_h || out.dims[2] != out_w) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output shape does not match: input %dx%dx%dx%d, output %dx%dx%dx%d",
            (int)in.dims[0], (int)in_h, (int)in_w, (int)in.dims[3],
            (int)out.dims[0], (int)out.dims[1], (int)out.dims[2], (int)out.dims[3]);
    }
    int32_t offset;
    int32_t pad_h = tflm_window_padding(in_h, filter_h, stride_h, 1, out_h, &offset);
    int32_t pad_w = tflm_window_padding(in_w, filter_w, stride_w, 1, out_w, &offset);
    if (kind != POOL_FLOAT32) {
        // The reference copies values without rescaling: the scales must agree.
        double diff = (double)in.scale - (double)out.scale;
        if (in.n_scales == 0 || out.n_scales == 0 || !(out.scale > 0.0f) || diff > 1.0e-6 || diff < -1.0e-6
            || in.zero_point != out.zero_point) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "input and output quantization differ");
        }
    }
    pool_data_t *d = tflm_prep_alloc(p, sizeof(pool_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->kind = kind;
    d->stride_h = (uint16_t)stride_h;
    d->stride_w = (uint16_t)stride_w;
    d->filter_h = (uint16_t)filter_h;
    d->filter_w = (uint16_t)filter_w;
    // Padding never exceeds the filter size minus one.
    d->pad_h = (uint16_t)pad_h;
    d->pad_w = (uint16_t)pad_w;
    d->batches = in.dims[0];
    d->in_h = in_h;
    d->in_w = in_w;
    d->depth = in.dims[3];
    d->out_h = out_h;
    d->out_w = out_w;
    if (kind == POOL_FLOAT32) {
        tflm_activation_range_float(activation, &d->act_min.f, &d->act_max.f);
    } else if (kind == POOL_INT8) {
        return tflm_prep_activation_range(p, activation, out.scale, out.zero_point, -128, 127, &d->act_min.q,
            &d->act_max.q);
    } else {
        return tflm_prep_activation_range(p, activation, out.scale, out.zero_point, -32768, 32767, &d->act_min.q,
            &d->act_max.q);
    }
    return TFLM_OK;
}

#endif

#if TFLM_KERNEL_AVERAGE_POOL_2D || TFLM_KERNEL_MAX_POOL_2D

// The engine's hooks (engine/kernel.h): the loops write the output row
// after row, and a patch runs a copy of the data on the stack given the
// patch's geometry.
static bool pool_geometry(const void *data, tflm_rows_t *g) {
    const pool_data_t *d = data;
    g->batches = d->batches;
    g->in_h = d->in_h, g->in_w = d->in_w, g->in_d = d->depth;
    g->out_h = d->out_h, g->out_w = d->out_w, g->out_d = d->depth;
    g->f_h = d->filter_h, g->f_w = d->filter_w, g->stride_h = d->stride_h, g->stride_w = d->stride_w;
    g->dil_h = g->dil_w = 1;
    g->pad_h = d->pad_h, g->pad_w = d->pad_w;
    g->macs = (uint32_t)d->filter_h * d->filter_w * (uint32_t)d->depth;
    return true;
}

static bool pool_overlap(tflm_prepare_t *p, const void *data, tflm_rows_t *g) {
    (void)p;
    return pool_geometry(data, g);
}

#if TFLM_PATCH
// The node's data (w->data, which e->data holds: read only) given the
// patch's window, for the op's own eval() through e->data. (eval() itself
// stays as it is: reading the data through an argument instead costs the
// int8 max pool 7% more cycles on the Cortex-M0+.)
typedef tflm_status_t (*pool_eval_fn)(tflm_eval_t *e);
static tflm_status_t pool_run_window(tflm_eval_t *e, const tflm_window_t *w, pool_eval_fn eval) {
    pool_data_t d = *(const pool_data_t *)w->data;
    d.in_h = w->in_h, d.in_w = w->in_w, d.out_h = w->out_h, d.out_w = w->out_w;
    d.pad_h = (uint16_t)w->pad_h, d.pad_w = (uint16_t)w->pad_w;
    void *node = e->data;
    e->data = &d;
    const tflm_status_t st = eval(e);
    e->data = node;
    return st;
}
#endif

#endif

#if TFLM_KERNEL_AVERAGE_POOL_2D

tflm_status_t tflm_average_pool_2d_prepare(tflm_prepare_t *p) {
    return pool_prepare(p, false, TFLM_TYPES_AVERAGE_POOL_2D);
}

// (prepare() gives only the kinds of the types this kernel was built for:
// the others' code is left out.)
tflm_status_t tflm_average_pool_2d_eval(tflm_eval_t *e) {
    const pool_data_t *d = e->data;
    switch (d->kind) {
        case POOL_FLOAT32:
            if (tflm_type_enabled(TFLM_TYPES_AVERAGE_POOL_2D, TFLM_FLOAT32)) {
                tflm_average_pool_2d_float32(d, e->in[0], e->out[0]);
            }
            break;
        case POOL_INT8:
            if (tflm_type_enabled(TFLM_TYPES_AVERAGE_POOL_2D, TFLM_INT8)) {
                tflm_average_pool_2d_int8(d, e->in[0], e->out[0]);
            }
            break;
        default:
            if (tflm_type_enabled(TFLM_TYPES_AVERAGE_POOL_2D, TFLM_INT16)) {
                tflm_average_pool_2d_int16(d, e->in[0], e->out[0]);
            }
            break;
    }
    return TFLM_OK;
}

#if TFLM_PATCH
static tflm_status_t average_pool_2d_run_window(tflm_eval_t *e, const tflm_window_t *w) {
    return pool_run_window(e, w, tflm_average_pool_2d_eval);
}
#endif

const tflm_kernel_hooks_t tflm_average_pool_2d_hooks = {
    .overlap = pool_overlap,
#if TFLM_PATCH
    .window = pool_geometry,
    .run_window = average_pool_2d_run_window,
#endif
};

#endif

#if TFLM_KERNEL_MAX_POOL_2D

tflm_status_t tflm_max_pool_2d_prepare(tflm_prepare_t *p) {
    return pool_prepare(p, false, TFLM_TYPES_MAX_POOL_2D);
}

// (prepare() gives only the kinds of the types this kernel was built for:
// the others' code is left out.)
tflm_status_t tflm_max_pool_2d_eval(tflm_eval_t *e) {
    const pool_data_t *d = e->data;
    switch (d->kind) {
        case POOL_FLOAT32:
            if (tflm_type_enabled(TFLM_TYPES_MAX_POOL_2D, TFLM_FLOAT32)) {
                tflm_max_pool_2d_float32(d, e->in[0], e->out[0]);
            }
            break;
        case POOL_INT8:
            if (tflm_type_enabled(TFLM_TYPES_MAX_POOL_2D, TFLM_INT8)) {
                tflm_max_pool_2d_int8(d, e->in[0], e->out[0]);
            }
            break;
        default:
            if (tflm_type_enabled(TFLM_TYPES_MAX_POOL_2D, TFLM_INT16)) {
                tflm_max_pool_2d_int16(d, e->in[0], e->out[0]);
            }
            break;
    }
    return TFLM_OK;
}

#if TFLM_PATCH
static tflm_status_t max_pool_2d_run_window(tflm_eval_t *e, const tflm_window_t *w) {
    return pool_run_window(e, w, tflm_max_pool_2d_eval);
}
#endif

const tflm_kernel_hooks_t tflm_max_pool_2d_hooks = {
    .overlap = pool_overlap,
#if TFLM_PATCH
    .window = pool_geometry,
    .run_window = max_pool_2d_run_window,
#endif
};

#endif

#if TFLM_KERNEL_L2_POOL_2D

tflm_status_t tflm_l2_pool_2d_prepare(tflm_prepare_t *p) {
    return pool_prepare(p, true, TFLM_TYPES_L2_POOL_2D);
}

tflm_status_t tflm_l2_pool_2d_eval(tflm_eval_t *e) {
    if (tflm_type_enabled(TFLM_TYPES_L2_POOL_2D, TFLM_FLOAT32)) {
        tflm_l2_pool_2d_float32(e->data, e->in[0], e->out[0]);
    }
    return TFLM_OK;
}

#endif
