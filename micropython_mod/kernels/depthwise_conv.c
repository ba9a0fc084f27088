// DEPTHWISE_CONV_2D: float32, int8 (per-tensor or per-channel int8 weights,
// int32 bias) and int16 activations with int8 weights and int64 bias; depth
// multiplier, strides, dilation, both paddings, bit-exact with TFLM's
// reference. prepare() is shared with CONV_2D (kernels/conv.c).
#include "kernels/conv_common.h"
#include "engine/quant.h"
#include "engine/schema.h"

#if TFLM_KERNEL_DEPTHWISE_CONV_2D

// DepthwiseConv2DOptions fields

// Output channels summed together: their taps are neighbours in the input
// and the filter. The sums live on the stack (at most 256 bytes).
#define DW_CHUNK (32)

// For each output position, its channels (oc = ic * multiplier + m) in runs
// of DW_CHUNK: each tap of the window inside the input adds its products to
// the run's sums, so every sum still takes its taps in TFLM's order (rows,
// then columns). The filter is [1, f_h, f_w, out_d]. The geometry is copied
// to locals first (stores through `output` could alias the kernel data).
// TAP(acc, w, x) adds the product of a filter and an input value to a sum;
// FINISH writes *output from `acc` for channel oc.
// A macro, not an always-inline function given the variant as a constant:
// the three forms of that tried cost magic_wand 10,000 to 13,000 more
// instructions per invoke on the Cortex-M3 (+0.3%; QEMU instruction counts).
#define DW_LOOPS(T_IN, T_W, T_ACC, TAP, FINISH) \
    const int32_t batches = d->batches, in_h = d->in_h, in_w = d->in_w, in_d = d->in_d; \
    const int32_t f_h = d->f_h, f_w = d->f_w, mult = d->f_d; \
    const int32_t out_h = d->out_h, out_w = d->out_w, out_d = d->out_d; \
    const int32_t stride_h = d->stride_h, stride_w = d->stride_w, dil_h = d->dil_h, dil_w = d->dil_w; \
    const int32_t pad_h = d->pad_h, pad_w = d->pad_w; \
    const int32_t in_row = in_w * in_d, w_row = f_w * out_d; \
    T_ACC sums[DW_CHUNK]; \
    for (int32_t b = 0; b < batches; ++b) { \
        const T_IN *in_b = input + b * in_h * in_row; \
        for (int32_t oy = 0; oy < out_h; ++oy) { \
            int32_t fy0, fy1; \
            const int32_t y0 = conv_window(oy, stride_h, pad_h, dil_h, f_h, in_h, &fy0, &fy1); \
            for (int32_t ox = 0; ox < out_w; ++ox) { \
                int32_t fx0, fx1; \
                const int32_t x0 = conv_window(ox, stride_w, pad_w, dil_w, f_w, in_w, &fx0, &fx1); \
                const int32_t fy_end = fx0 < fx1 ? fy1 : fy0; \
                for (int32_t c0 = 0; c0 < out_d; c0 += DW_CHUNK) { \
                    const int32_t n = out_d - c0 < DW_CHUNK ? out_d - c0 : DW_CHUNK; \
                    const int32_t ic0 = c0 / mult, m0 = c0 % mult; \
                    for (int32_t j = 0; j < n; ++j) { \
                        sums[j] = 0; \
                    } \
                    for (int32_t fy = fy0; fy < fy_end; ++fy) { \
                        const T_IN *x_row = in_b + (y0 + dil_h * fy) * in_row; \
                        const T_W *w_row_c = filter + fy * w_row + c0; \
                        for (int32_t fx = fx0; fx < fx1; ++fx) { \
                            const T_IN *x = x_row + (x0 + dil_w * fx) * in_d; \
                            const T_W *w = w_row_c + fx * out_d; \
                            if (mult == 1) { \
                                x += c0; \
                                for (int32_t j = 0; j < n; ++j) { \
                                    TAP(sums[j], w[j], x[j]); \
                                } \
                            } else { \
                                /* Each input value serves `mult` channels in a row. */ \
                                int32_t ic = ic0, j = 0, left = mult - m0; \
                                while (j < n) { \
                                    const int32_t end = n - j < left ? n : j + left; \
                                    const T_IN v = x[ic++]; \
                                    for (; j < end; ++j) { \
                                        TAP(sums[j], w[j], v); \
                                    } \
                                    left = mult; \
                                } \
                            } \
                        } \
                    } \
                    for (int32_t j = 0; j < n; ++j) { \
                        const int32_t oc = c0 + j; \
                        const T_ACC acc = sums[j]; \
                        FINISH; \
                        ++output; \
                    } \
                } \
            } \
        } \
    }

static void tflm_depthwise_conv_2d_float32(const conv_data_t *d, const float *input, const float *filter,
    const float *bias, float *output) {
    const float act_min = d->act_min.f, act_max = d->act_max.f;
#define DW_TAP(acc, w, x) acc += (x) * (w)
    DW_LOOPS(float, float, float, DW_TAP,
        {
            float bias_value = bias ? bias[oc] : 0.0f;
            *output = tflm_clampf(acc + bias_value, act_min, act_max);
        })
#undef DW_TAP
}

// int16: 64-bit accumulator, no zero points (as TFLM's reference).
static void tflm_depthwise_conv_2d_int16(const conv_data_t *d, const int16_t *input, const int8_t *filter,
    const void *bias, int16_t *output) {
    CONV_QUANT_LOCALS;
#define DW_TAP(acc, w, x) acc += (uint64_t)(int64_t)((w) * (x))
    DW_LOOPS(int16_t, int8_t, uint64_t, DW_TAP,
        {
            uint64_t total = acc + (bias ? (uint64_t)tflm_ld_i64(bias, (uint32_t)(oc)) : 0u);
            const int32_t c = per_channel ? oc : 0;
            int32_t v = tflm_mul_by_quantized_mul64((int64_t)total, mults[c], shifts[c]);
            *output = (int16_t)tflm_clamp(v, act_min, act_max);
        })
#undef DW_TAP
}

tflm_status_t tflm_depthwise_conv_2d_prepare(tflm_prepare_t *p) {
    conv_options_t opt = {
        .padding = tflm_prep_opt_u8(p, TFLM_OPT_DEPTHWISE_CONV2D_PADDING, TFLM_PADDING_SAME),
        .activation = tflm_prep_opt_u8(p, TFLM_OPT_DEPTHWISE_CONV2D_FUSED_ACTIVATION_FUNCTION, TFLM_ACT_NONE),
        .stride_h = tflm_prep_opt_i32(p, TFLM_OPT_DEPTHWISE_CONV2D_STRIDE_H, 0),
        .stride_w = tflm_prep_opt_i32(p, TFLM_OPT_DEPTHWISE_CONV2D_STRIDE_W, 0),
        .dil_h = tflm_prep_opt_i32(p, TFLM_OPT_DEPTHWISE_CONV2D_DILATION_H_FACTOR, 1),
        .dil_w = tflm_prep_opt_i32(p, TFLM_OPT_DEPTHWISE_CONV2D_DILATION_W_FACTOR, 1),
        .depth_multiplier = tflm_prep_opt_i32(p, TFLM_OPT_DEPTHWISE_CONV2D_DEPTH_MULTIPLIER, 0),
    };
    return tflm_conv_prepare_common(p, &opt, true);
}

// prepare() gives only the variants of the types this kernel was built for:
// the others' code is left out.
static inline bool dw_has(unsigned type) {
    return tflm_type_enabled(TFLM_TYPES_DEPTHWISE_CONV_2D, type);
}

// The rows as tflm_conv_s8_all_rows calls them (no starting sums here).
static void dw_s8_rows(const conv_data_t *d, const int8_t *input, const int8_t *filter, const int32_t *bias,
    const int32_t *starts, int8_t *output, int32_t batch, int32_t row0, int32_t row1) {
    (void)starts;
    tflm_depthwise_conv_2d_s8_rows(d, input, filter, bias, output, batch, row0, row1);
}

#if defined(TFLM_CONV_TEST_BAND) && TFLM_CONV_TEST_BAND > 0
#define DW_S8_REORDERED (1)  // tflm_conv_s8_all_rows runs an overlapped map's rows in bands, last first
#else
#define DW_S8_REORDERED (0)
#endif

// Every output pixel by pixel, all the channels of a pixel before the next,
// in TFLM's order, each value from its window and requantized as the
// reference does: the order the pixel rule (engine/overlap.h) takes at any distance it
// allows. Slow, but only an output nearer its input than the row rule
// allows and not a whole number of pixels from it comes here (the planners
// place it a whole number away). Sums as depthwise_conv_s8.c's
// dw_s8_generic's. (Here, not there: the core natmod builds that file at
// -O2, this one for size.)
static void dw_s8_pixels(const conv_data_t *d, const int8_t *input, const int8_t *filter,
    const int32_t *bias, int8_t *output) {
    const int32_t *mults = conv_multipliers(d);
    const int8_t *shifts = conv_shifts(d);
    const int32_t in_w = d->in_w, in_d = d->in_d, out_d = d->out_d, mult = d->f_d, off = d->input_offset;
    const int32_t zp = d->output_offset, lo = d->act_min.q, hi = d->act_max.q;
    int8_t *out = output;
    for (int32_t b = 0; b < d->batches; ++b) {
        const int8_t *in_b = input + (size_t)b * d->in_h * in_w * in_d;
        for (int32_t oy = 0; oy < d->out_h; ++oy) {
            int32_t fy0, fy1, fx0, fx1;
            const int32_t y0 = conv_window(oy, d->stride_h, d->pad_h, d->dil_h, d->f_h, d->in_h, &fy0, &fy1);
            for (int32_t ox = 0; ox < d->out_w; ++ox) {
                const int32_t x0 = conv_window(ox, d->stride_w, d->pad_w, d->dil_w, d->f_w, in_w, &fx0, &fx1);
                for (int32_t oc = 0; oc < out_d; ++oc, ++out) {
                    uint32_t sum = bias ? (uint32_t)bias[oc] : 0;
                    for (int32_t fy = fy0; fy < fy1; ++fy) {
                        const int8_t *x = in_b + (size_t)(y0 + d->dil_h * fy) * in_w * in_d + oc / mult;
                        const int8_t *w = filter + (size_t)fy * d->f_w * out_d + oc;
                        for (int32_t fx = fx0; fx < fx1; ++fx) {
                            sum += (uint32_t)((x[(x0 + d->dil_w * fx) * in_d] + off) * w[fx * out_d]);
                        }
                    }
                    const int32_t m = d->per_channel ? oc : 0;
                    const int32_t v = tflm_wrap_add(tflm_mul_by_quantized_mul((int32_t)sum, mults[m], shifts[m]), zp);
                    *out = (int8_t)TFLM_MIN(TFLM_MAX(v, lo), hi);
                }
            }
        }
    }
}

// Whether the output starts below the input by less than the row rule's
// distance (engine/overlap.h): a placement only the pixel rule allows.
static bool dw_s8_below_rows(const conv_data_t *d, const int8_t *input, const int8_t *output) {
    if (d->batches != 1 || d->f_d != 1 || (uintptr_t)output > (uintptr_t)input) {
        return false;
    }
    const tflm_overlap_rows_t g = { .batches = 1, .in_h = d->in_h, .out_h = d->out_h,
        .row_x = (uint32_t)d->in_w * d->in_d, .row_y = (uint32_t)d->out_w * d->out_d, .stride = d->stride_h,
        .pad_top = d->pad_h, .band = 1, .reach = 0 };
    return (uint64_t)((uintptr_t)input - (uintptr_t)output) < tflm_overlap_rows_forward(&g);
}

// Every row of the int8 variant; row by row over an overlapped input when
// one call would not keep the rows in order (the order matters only there),
// or pixel by pixel where only the pixel rule allows the placement and the
// fast loops' order is not one it takes.
static void dw_s8_all(const conv_data_t *d, const int8_t *input, const int8_t *filter, const int32_t *bias,
    int8_t *output) {
    const bool overlapped = tflm_conv_s8_overlapped(d, input, output);
    const bool in_order = !overlapped || tflm_depthwise_conv_2d_s8_in_order(d, input, output);
    if (overlapped && (!in_order || DW_S8_REORDERED) && dw_s8_below_rows(d, input, output)) {
        dw_s8_pixels(d, input, filter, bias, output);
        return;
    }
    tflm_conv_s8_all_rows(dw_s8_rows, d, input, filter, bias, NULL, output, in_order);
}

tflm_status_t tflm_depthwise_conv_2d_eval(tflm_eval_t *e) {
    const conv_data_t *d = e->data;
    const void *bias = d->has_bias ? e->in[2] : NULL;
    switch (d->kind) {
        case CONV_FLOAT32:
            if (dw_has(TFLM_FLOAT32)) {
                tflm_depthwise_conv_2d_float32(d, e->in[0], e->in[1], bias, e->out[0]);
            }
            break;
        case CONV_INT8:
            if (dw_has(TFLM_INT8)) {
                dw_s8_all(d, e->in[0], e->in[1], bias, e->out[0]);
            }
            break;
        default:
            if (dw_has(TFLM_INT16)) {
                tflm_depthwise_conv_2d_int16(d, e->in[0], e->in[1], bias, e->out[0]);
            }
            break;
    }
    return TFLM_OK;
}

#if TFLM_PATCH
static bool depthwise_conv_2d_window(const void *data, tflm_rows_t *g) {
    return tflm_conv_geometry(data, 1, g);
}

// As eval(): int8 by its rows (fast paths included; row by row over an
// overlapped input when needed), float32 by its loops (row after row).
static tflm_status_t depthwise_conv_2d_run_window(tflm_eval_t *e, const tflm_window_t *w) {
    tflm_conv_window_t c;
    const conv_data_t *d = tflm_conv_window(&c, w);
    const void *bias = d->has_bias ? e->in[2] : NULL;
    if (d->kind == CONV_INT8) {
        dw_s8_all(d, e->in[0], e->in[1], bias, e->out[0]);
    } else if (dw_has(TFLM_FLOAT32)) {
        tflm_depthwise_conv_2d_float32(d, e->in[0], e->in[1], bias, e->out[0]);
    }
    return TFLM_OK;
}
#endif // TFLM_PATCH

// The rows rule of both ops, and for the int8 variant of one output channel
// per input channel the pixel rule too (dw_s8_all keeps it).
static bool depthwise_conv_2d_overlap(tflm_prepare_t *p, const void *data, tflm_rows_t *g) {
    const conv_data_t *d = data;
    tflm_conv_overlap(p, data, g);
    g->pixels = d->kind == CONV_INT8 && d->f_d == 1 && d->batches == 1;
    return true;
}

const tflm_kernel_hooks_t tflm_depthwise_conv_2d_hooks = {
    .overlap = depthwise_conv_2d_overlap,
#if TFLM_PATCH
    .window = depthwise_conv_2d_window,
    .run_window = depthwise_conv_2d_run_window,
#endif
};

#endif // TFLM_KERNEL_DEPTHWISE_CONV_2D
