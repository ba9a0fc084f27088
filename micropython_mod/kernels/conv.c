// CONV_2D: float32, int8 (per-tensor or per-channel int8 weights, int32 bias)
// and int16 activations with int8 weights (int64 or int32 bias), grouped
// filters, strides, dilation, both paddings, bit-exact with TFLM's reference.
// Also holds the prepare() shared with DEPTHWISE_CONV_2D (conv_common.h).
#include "kernels/conv_common.h"
#include "kernels/fold.h"
#include "kernels/dot.h"
#include "kernels/mm_s8.h"
#include "kernels/out_s8.h"
#include "engine/quant.h"
#include "engine/schema.h"

#if TFLM_KERNEL_CONV_2D || TFLM_KERNEL_DEPTHWISE_CONV_2D

static bool conv_fits_u16(int32_t v) {
    return v >= 0 && v <= UINT16_MAX;
}

// The operator's tensors, as prepare() checks them.
typedef struct {
    tflm_tinfo_t in, w, bias, out;
} conv_tensors_t;

// Reads the tensors: input, filter, optional bias, output.
static tflm_status_t conv_read(tflm_prepare_t *p, conv_tensors_t *t) {
    tflm_status_t st = tflm_prep_expect_io(p, 2, 3, 1);
    if (st || (st = tflm_prep_input(p, 0, &t->in)) || (st = tflm_prep_input(p, 1, &t->w))
        || (st = tflm_prep_input(p, 2, &t->bias)) || (st = tflm_prep_output(p, 0, &t->out))) {
        return st;
    }
    if (t->in.index < 0 || t->w.index < 0 || t->out.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input, filter or output missing");
    }
    return TFLM_OK;
}

// Whether the op's kernel was built for tensors of `type` (TFLM_TYPES_<OP>);
// a constant when no linked kernel of the two was.
static inline bool conv_has(bool depthwise, unsigned type) {
    const uint32_t linked = (TFLM_KERNEL_CONV_2D ? (TFLM_TYPES_CONV_2D) : 0u)
        | (TFLM_KERNEL_DEPTHWISE_CONV_2D ? (TFLM_TYPES_DEPTHWISE_CONV_2D) : 0u);
    return tflm_type_enabled(linked, type)
        && tflm_type_enabled(depthwise ? (TFLM_TYPES_DEPTHWISE_CONV_2D) : (TFLM_TYPES_CONV_2D), type);
}

// The variant from the types: the combinations TFLM's reference kernels
// compute (those this build has code for). DEPTHWISE_CONV_2D always sums
// int16 in 64 bits; CONV_2D in 32 bits with an int32 bias and in 64 bits
// with an int64 bias or none, as TFLM does.
static tflm_status_t conv_kind(tflm_prepare_t *p, const conv_tensors_t *t, bool depthwise, uint8_t *kind) {
    const tflm_tinfo_t *in = &t->in, *w = &t->w, *bias = &t->bias, *out = &t->out;
    const bool has_bias = bias->index >= 0;
    if (in->type != out->type) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%s input with %s output",
            tflm_type_name(in->type), tflm_type_name(out->type));
    }
    if (in->type == TFLM_FLOAT32 && w->type == TFLM_FLOAT32 && conv_has(depthwise, TFLM_FLOAT32)) {
        *kind = CONV_FLOAT32;
        return has_bias && bias->type != TFLM_FLOAT32 ? tflm_prep_unsupported_type(p, "float32 conv bias", bias->type)
                                                      : TFLM_OK;
    }
    if (in->type == TFLM_INT8 && w->type == TFLM_INT8 && conv_has(depthwise, TFLM_INT8)) {
        *kind = CONV_INT8;
        return has_bias && bias->type != TFLM_INT32 ? tflm_prep_unsupported_type(p, "int8 conv bias", bias->type)
                                                    : TFLM_OK;
    }
    if (in->type != TFLM_INT16 || w->type != TFLM_INT8 || !conv_has(depthwise, TFLM_INT16)) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "%s input with %s filter is not supported",
            tflm_type_name(in->type), tflm_type_name(w->type));
    }
    if (depthwise) {
        *kind = CONV_INT16_ACC64;
        return has_bias && bias->type != TFLM_INT64
                   ? tflm_prep_unsupported_type(p, "int16 depthwise conv bias", bias->type) : TFLM_OK;
    }
    if (has_bias && bias->type == TFLM_INT32) {
        *kind = CONV_INT16_ACC32;
    } else if (!has_bias || bias->type == TFLM_INT64) {
        *kind = CONV_INT16_ACC64;
    } else {
        return tflm_prep_unsupported_type(p, "int16 conv bias", bias->type);
    }
    return TFLM_OK;
}

// The geometry (NHWC input and output; OHWI filter, or 1HWO for depthwise)
// and the options, into the data's header `g`: everything eval() reads fits
// 16 bits, so its index arithmetic cannot overflow; the output size and
// padding are TFLM's.
static tflm_status_t conv_geometry(tflm_prepare_t *p, const conv_tensors_t *t, const conv_options_t *opt,
    bool depthwise, conv_data_t *g) {
    const tflm_tinfo_t *in = &t->in, *w = &t->w, *bias = &t->bias, *out = &t->out;
    if (in->ndims != 4 || w->ndims != 4 || out->ndims != 4) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input, filter and output need 4 dimensions");
    }
    int32_t batches = in->dims[0], in_h = in->dims[1], in_w = in->dims[2], in_d = in->dims[3];
    int32_t f_h = w->dims[1], f_w = w->dims[2];
    int32_t out_h = out->dims[1], out_w = out->dims[2], out_d = out->dims[3];
    int32_t f_d;
    if (out->dims[0] != batches) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%d input batches, %d output batches", (int)batches, (int)out->dims[0]);
    }
    if (depthwise) {
        f_d = opt->depth_multiplier;
        if (w->dims[3] != out_d || w->dims[0] < 1 || f_d <= 0 || (int64_t)in_d * f_d != out_d) {
            return tflm_error(p->err, TFLM_ERR_VALUE,
                "%d input channels with depth multiplier %d do not give %d output channels (filter %d)",
                (int)in_d, (int)f_d, (int)out_d, (int)w->dims[3]);
        }
    } else {
        f_d = w->dims[3];
        // Grouped filters: each group of out_d / groups filters reads f_d input channels.
        int32_t groups = f_d > 0 ? in_d / f_d : 0;
        if (w->dims[0] != out_d || f_d <= 0 || in_d % f_d != 0 || groups == 0 || out_d % groups != 0) {
            return tflm_error(p->err, TFLM_ERR_VALUE,
                "filter %dx%dx%dx%d does not fit %d input and %d output channels",
                (int)w->dims[0], (int)f_h, (int)f_w, (int)f_d, (int)in_d, (int)out_d);
        }
    }
    if (bias->index >= 0 && bias->elements < (uint32_t)out_d) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%u bias values for %d output channels", (unsigned)bias->elements, (int)out_d);
    }
    if (opt->padding != TFLM_PADDING_SAME && opt->padding != TFLM_PADDING_VALID) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "unknown padding %u", (unsigned)opt->padding);
    }
    if (opt->stride_h <= 0 || opt->stride_w <= 0 || opt->dil_h <= 0 || opt->dil_w <= 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "strides %dx%d and dilation %dx%d must be positive",
            (int)opt->stride_h, (int)opt->stride_w, (int)opt->dil_h, (int)opt->dil_w);
    }
    if (opt->activation > TFLM_ACT_RELU6) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "fused activation %u is not supported", (unsigned)opt->activation);
    }
    int64_t eff_h = (int64_t)(f_h - 1) * opt->dil_h + 1, eff_w = (int64_t)(f_w - 1) * opt->dil_w + 1;
    if (!conv_fits_u16(batches) || !conv_fits_u16(in_h) || !conv_fits_u16(in_w) || !conv_fits_u16(in_d)
        || !conv_fits_u16(f_h) || !conv_fits_u16(f_w) || !conv_fits_u16(f_d) || !conv_fits_u16(out_d)
        || !conv_fits_u16(opt->stride_h) || !conv_fits_u16(opt->stride_w) || !conv_fits_u16(opt->dil_h)
        || !conv_fits_u16(opt->dil_w) || f_h < 1 || f_w < 1
        || eff_h > UINT16_MAX || eff_w > UINT16_MAX) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "sizes beyond 65535 are not supported");
    }
    int32_t want_h = tflm_window_out_size(opt->padding, in_h, f_h, opt->stride_h, opt->dil_h);
    int32_t want_w = tflm_window_out_size(opt->padding, in_w, f_w, opt->stride_w, opt->dil_w);
    if (out_h != want_h || out_w != want_w) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output is %dx%d, the window gives %dx%d",
            (int)out_h, (int)out_w, (int)want_h, (int)want_w);
    }
    int32_t offset;
    g->batches = (uint16_t)batches;
    g->in_h = (uint16_t)in_h;
    g->in_w = (uint16_t)in_w;
    g->in_d = (uint16_t)in_d;
    g->f_h = (uint16_t)f_h;
    g->f_w = (uint16_t)f_w;
    g->f_d = (uint16_t)f_d;
    g->out_h = (uint16_t)out_h;
    g->out_w = (uint16_t)out_w;
    g->out_d = (uint16_t)out_d;
    g->stride_h = (uint16_t)opt->stride_h;
    g->stride_w = (uint16_t)opt->stride_w;
    g->dil_h = (uint16_t)opt->dil_h;
    g->dil_w = (uint16_t)opt->dil_w;
    g->pad_h = (uint16_t)tflm_window_padding(in_h, f_h, opt->stride_h, opt->dil_h, out_h, &offset);
    g->pad_w = (uint16_t)tflm_window_padding(in_w, f_w, opt->stride_w, opt->dil_w, out_w, &offset);
    return TFLM_OK;
}

// Quantization: per-tensor, or one filter scale per output channel.
static tflm_status_t conv_check_scales(tflm_prepare_t *p, const conv_tensors_t *t, int32_t out_d, bool per_channel) {
    const tflm_tinfo_t *in = &t->in, *w = &t->w, *out = &t->out;
    if (in->n_scales == 0 || out->n_scales == 0 || w->n_scales == 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "quantized tensors need scales");
    }
    if (per_channel && (w->n_scales != (uint32_t)out_d || w->quantized_dimension < 0
        || w->quantized_dimension > 3 || w->dims[w->quantized_dimension] != out_d)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%u filter scales for %d output channels", (unsigned)w->n_scales, (int)out_d);
    }
    return TFLM_OK;
}

// Whether every output channel of an int8 layer in lanes fits out_s8.h's
// SMMLAR form: a start (bias plus the input offset times the filter's sum:
// under 128 * 2^15 = 2^22 in magnitude with lanes) within +-2^29, and k.
static bool conv_mmr_fits(const conv_tensors_t *t, const conv_data_t *d, const int32_t *mults,
    const int8_t *shifts) {
    const uint8_t *bias = t->bias.index >= 0 ? t->bias.data : NULL;
    if (t->bias.index >= 0 && bias == NULL) {
        return false; // a bias computed by the model
    }
    for (uint32_t c = 0; c < d->out_d; ++c) {
        const uint32_t m = d->per_channel ? c : 0u;
        tflm_out_s8_t q;
        tflm_out_s8_setup(&q, mults[m], shifts[m], d->output_offset);
        const int32_t b = bias != NULL ? (int32_t)tflm_rd_u32(bias + 4 * c) : 0;
        q.bias = 0;
        // A channel of the reference's steps (left shifts, none) puts its
        // chunk on the C loops whatever the others (neither fast nor wide).
        if (q.shift == -1) {
            continue;
        }
        if (b <= -((1 << 29) - (1 << 22)) || b >= (1 << 29) - (1 << 22) || !tflm_out_s8_mmr_fits(&q)) {
            return false;
        }
    }
    return true;
}

// The integer variants' output stage: multipliers and shifts (the 64-bit
// rescaling handles left shifts up to 7, as TFLM's), offsets, clamps, and
// whether int8 pixels may share sums (kernels/mm_s8.h).
static tflm_status_t conv_quantize(tflm_prepare_t *p, const conv_tensors_t *t, uint8_t activation, bool depthwise,
    conv_data_t *d) {
    const tflm_tinfo_t *in = &t->in, *w = &t->w, *out = &t->out;
    const uint32_t n_mult = d->per_channel ? d->out_d : 1u;
    const int32_t max_shift = d->kind == CONV_INT16_ACC64 ? 7 : 31;
    int32_t *mults = (int32_t *)(d + 1);
    int8_t *shifts = (int8_t *)(mults + n_mult);
    d->input_offset = -in->zero_point;
    d->output_offset = out->zero_point;
    tflm_status_t st = tflm_prep_channel_multipliers(p, in, w, out, n_mult, max_shift, mults, shifts);
    if (st) {
        return st;
    }
    const bool is8 = d->kind == CONV_INT8;
    const bool lanes = is8 && !depthwise && w->data != NULL
        && tflm_mm_s8_lanes_fit((const int8_t *)w->data, d->out_d, d->f_h * d->f_w * d->f_d);
    d->lanes = !lanes ? 0 : conv_mmr_fits(t, d, mults, shifts) ? TFLM_CONV_LANES_MMR : TFLM_CONV_LANES;
    return tflm_prep_activation_range(p, activation, out->scale, out->zero_point, is8 ? -128 : -32768,
        is8 ? 127 : 32767, &d->act_min.q, &d->act_max.q);
}

tflm_status_t tflm_conv_prepare_common(tflm_prepare_t *p, const conv_options_t *opt, bool depthwise) {
    conv_tensors_t t;
    conv_data_t g;
    memset(&g, 0, sizeof(g));
    tflm_status_t st = conv_read(p, &t);
    if (st || (st = conv_kind(p, &t, depthwise, &g.kind)) || (st = conv_geometry(p, &t, opt, depthwise, &g))) {
        return st;
    }
    const bool quantized = g.kind != CONV_FLOAT32;
    const bool per_channel = quantized && t.w.n_scales > 1;
    if (quantized && (st = conv_check_scales(p, &t, g.out_d, per_channel))) {
        return st;
    }
    // CONV_2D int8 with constant filters (symmetric, as TFLM requires) and
    // bias, in data the model keeps: each output channel's starting sum is
    // computed here once, not by every eval() (nor by every patch).
    const bool folded = g.kind == CONV_INT8 && !depthwise && t.w.data != NULL && t.w.zero_point == 0
        && (t.bias.index < 0 || t.bias.data != NULL) && tflm_prep_data_in_model(p);
    const uint32_t bytes = tflm_conv_data_size(g.kind, per_channel, g.out_d);
    conv_data_t *d = folded ? tflm_prep_alloc_streamed(p, bytes, g.out_d) : tflm_prep_alloc(p, bytes);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    *d = g;
    d->per_channel = per_channel;
    d->has_bias = t.bias.index >= 0;
    d->folded = folded;
    if (!quantized) {
        tflm_activation_range_float(opt->activation, &d->act_min.f, &d->act_max.f);
        return TFLM_OK;
    }
    if ((st = conv_quantize(p, &t, opt->activation, depthwise, d))) {
        return st;
    }
    if (folded) {
        tflm_fold_starts(p, 0, (const int8_t *)t.w.data, g.out_d, g.f_h * g.f_w * g.f_d,
            t.bias.index >= 0 ? t.bias.data : NULL, d->input_offset);
    }
    return TFLM_OK;
}

bool tflm_conv_geometry(const conv_data_t *d, uint32_t taps, tflm_rows_t *g) {
    g->batches = d->batches;
    g->in_h = d->in_h, g->in_w = d->in_w, g->in_d = d->in_d;
    g->out_h = d->out_h, g->out_w = d->out_w, g->out_d = d->out_d;
    g->f_h = d->f_h, g->f_w = d->f_w, g->stride_h = d->stride_h, g->stride_w = d->stride_w;
    g->dil_h = d->dil_h, g->dil_w = d->dil_w, g->pad_h = d->pad_h, g->pad_w = d->pad_w;
    g->macs = (uint32_t)d->f_h * d->f_w * taps * d->out_d;
    g->backward = false;
    g->pixels = false;
    return d->kind == CONV_INT8 || d->kind == CONV_FLOAT32;
}

bool tflm_conv_overlap(tflm_prepare_t *p, const void *data, tflm_rows_t *g) {
    (void)p;
    tflm_conv_geometry(data, 1, g);
    return true;
}

#endif // TFLM_KERNEL_CONV_2D || TFLM_KERNEL_DEPTHWISE_CONV_2D

#if TFLM_KERNEL_CONV_2D

// Conv2DOptions fields

// The loops of all variants, in TFLM's order: for each output value, the
// rows and columns of its window that lie inside the input. The geometry is
// copied to locals first: stores through `output` could alias the kernel
// data, so the compiler would otherwise reload it in the loops. Along a
// filter row the taps are one run in the input and the filter when there is
// neither dilation nor grouping (the common case): then a row is one
// ROW(acc, w, x, n), adding n products to acc; else each tap is one. With
// PAIRS, output channels of the same group go in pairs there:
// ROW2(acc0, acc1, w0, w1, x, n) adds two filters' products over one pass of
// the input. Every sum still takes its products in TFLM's order.
// FINISH(acc, oc) writes *output.
// A macro, not an always-inline function given the variant as a constant:
// that form compiled the float32 loops less well (magic_wand +3,800
// instructions per invoke on the Cortex-M3, +0.1%; measured with the QEMU
// boards' instruction counts).
#define CONV_LOOPS(T_IN, T_W, T_ACC, PAIRS, ROW, ROW2, FINISH) \
    const int32_t batches = d->batches, in_h = d->in_h, in_w = d->in_w, in_d = d->in_d; \
    const int32_t f_h = d->f_h, f_w = d->f_w, f_d = d->f_d; \
    const int32_t out_h = d->out_h, out_w = d->out_w, out_d = d->out_d; \
    const int32_t stride_h = d->stride_h, stride_w = d->stride_w, dil_h = d->dil_h, dil_w = d->dil_w; \
    const int32_t pad_h = d->pad_h, pad_w = d->pad_w; \
    const int32_t per_group = out_d / (in_d / f_d); \
    const int32_t in_row = in_w * in_d, w_row = f_w * f_d, w_size = f_h * w_row; \
    const int32_t x_step = dil_w * in_d, y_step = dil_h * in_row; \
    const bool one_run = dil_w == 1 && f_d == in_d; \
    for (int32_t b = 0; b < batches; ++b) { \
        const T_IN *in_b = input + b * in_h * in_row; \
        for (int32_t oy = 0; oy < out_h; ++oy) { \
            int32_t fy0, fy1; \
            const int32_t y0 = conv_window(oy, stride_h, pad_h, dil_h, f_h, in_h, &fy0, &fy1); \
            for (int32_t ox = 0; ox < out_w; ++ox) { \
                int32_t fx0, fx1; \
                const int32_t x0 = conv_window(ox, stride_w, pad_w, dil_w, f_w, in_w, &fx0, &fx1); \
                const int32_t rows = fx0 < fx1 ? fy1 - fy0 : 0; \
                const int32_t run = (fx1 - fx0) * f_d; \
                /* Offsets of the first tap inside the input and the filter. */ \
                const int32_t x_first = (y0 + dil_h * fy0) * in_row + (x0 + dil_w * fx0) * in_d; \
                const int32_t w_first = fy0 * w_row + fx0 * f_d; \
                int32_t first = x_first, w_at = w_first, group_left = per_group; \
                for (int32_t oc = 0; oc < out_d;) { \
                    if (group_left == 0) { \
                        first += f_d; \
                        group_left = per_group; \
                    } \
                    if (PAIRS && one_run && group_left >= 2) { \
                        T_ACC acc0 = 0, acc1 = 0; \
                        for (int32_t r = 0; r < rows; ++r) { \
                            ROW2(acc0, acc1, filter + w_at + r * w_row, filter + w_at + w_size + r * w_row, \
                                in_b + first + r * y_step, run); \
                        } \
                        FINISH(acc0, oc); \
                        ++output; \
                        FINISH(acc1, oc + 1); \
                        ++output; \
                        oc += 2; \
                        w_at += 2 * w_size; \
                        group_left -= 2; \
                        continue; \
                    } \
                    T_ACC acc = 0; \
                    for (int32_t r = 0; r < rows; ++r) { \
                        const T_IN *x = in_b + first + r * y_step; \
                        const T_W *w = filter + w_at + r * w_row; \
                        if (one_run) { \
                            ROW(acc, w, x, run); \
                        } else { \
                            for (int32_t t = 0; t < fx1 - fx0; ++t) { \
                                ROW(acc, w + t * f_d, x + t * x_step, f_d); \
                            } \
                        } \
                    } \
                    FINISH(acc, oc); \
                    ++output; \
                    ++oc; \
                    w_at += w_size; \
                    --group_left; \
                } \
            } \
        } \
    }

static void tflm_conv_2d_float32(const conv_data_t *d, const float *input, const float *filter,
    const float *bias, float *output) {
    const float act_min = d->act_min.f, act_max = d->act_max.f;
#define CONV_ROW(acc, w, x, n) acc = tflm_dot_f32(acc, (w), (x), (n))
#define CONV_ROW2(acc0, acc1, w0, w1, x, n) tflm_dot2_f32(&acc0, &acc1, (w0), (w1), (x), (n))
#define CONV_FINISH(acc, oc) \
    { \
        float bias_value = bias ? bias[oc] : 0.0f; \
        *output = tflm_clampf(acc + bias_value, act_min, act_max); \
    }
    CONV_LOOPS(float, float, float, true, CONV_ROW, CONV_ROW2, CONV_FINISH)
#undef CONV_ROW
#undef CONV_ROW2
#undef CONV_FINISH
}

// int16 with an int32 bias: a 32-bit accumulator and rescaling, no zero
// points (TFLM's reference uses none for int16). No channel pairs for int16:
// such models are rare, the code stays small.
static void tflm_conv_2d_int16_acc32(const conv_data_t *d, const int16_t *input, const int8_t *filter,
    const int32_t *bias, int16_t *output) {
    CONV_QUANT_LOCALS;
    tflm_requant_t rq = tflm_requant_init(mults[0], shifts[0]);
#define CONV_ROW(acc, w, x, n) acc += tflm_dot_s16_s8((w), (x), (n))
#define CONV_ROW2(acc0, acc1, w0, w1, x, n)
#define CONV_FINISH(acc, oc) \
    { \
        uint32_t total = acc + (bias ? (uint32_t)bias[oc] : 0u); \
        if (per_channel) { \
            rq = tflm_requant_init(mults[oc], shifts[oc]); \
        } \
        int32_t v = tflm_requant(&rq, (int32_t)total); \
        *output = (int16_t)tflm_clamp(v, act_min, act_max); \
    }
    CONV_LOOPS(int16_t, int8_t, uint32_t, false, CONV_ROW, CONV_ROW2, CONV_FINISH)
#undef CONV_ROW
#undef CONV_ROW2
#undef CONV_FINISH
}

static void tflm_conv_2d_int16_acc64(const conv_data_t *d, const int16_t *input, const int8_t *filter,
    const void *bias, int16_t *output) {
    CONV_QUANT_LOCALS;
#define CONV_ROW(acc, w, x, n) acc += tflm_dot64_s16_s8((w), (x), (n))
#define CONV_ROW2(acc0, acc1, w0, w1, x, n)
#define CONV_FINISH(acc, oc) \
    { \
        uint64_t total = acc + (bias ? (uint64_t)tflm_ld_i64(bias, (uint32_t)(oc)) : 0u); \
        const int32_t c = per_channel ? (oc) : 0; \
        int32_t v = tflm_mul_by_quantized_mul64((int64_t)total, mults[c], shifts[c]); \
        *output = (int16_t)tflm_clamp(v, act_min, act_max); \
    }
    CONV_LOOPS(int16_t, int8_t, uint64_t, false, CONV_ROW, CONV_ROW2, CONV_FINISH)
#undef CONV_ROW
#undef CONV_ROW2
#undef CONV_FINISH
}

tflm_status_t tflm_conv_2d_prepare(tflm_prepare_t *p) {
    conv_options_t opt = {
        .padding = tflm_prep_opt_u8(p, TFLM_OPT_CONV2D_PADDING, TFLM_PADDING_SAME),
        .activation = tflm_prep_opt_u8(p, TFLM_OPT_CONV2D_FUSED_ACTIVATION_FUNCTION, TFLM_ACT_NONE),
        .stride_h = tflm_prep_opt_i32(p, TFLM_OPT_CONV2D_STRIDE_H, 0),
        .stride_w = tflm_prep_opt_i32(p, TFLM_OPT_CONV2D_STRIDE_W, 0),
        .dil_h = tflm_prep_opt_i32(p, TFLM_OPT_CONV2D_DILATION_H_FACTOR, 1),
        .dil_w = tflm_prep_opt_i32(p, TFLM_OPT_CONV2D_DILATION_W_FACTOR, 1),
        .depth_multiplier = 0,
    };
    return tflm_conv_prepare_common(p, &opt, false);
}

// prepare() gives only the variants of the types this kernel was built for:
// the others' code is left out.
static inline bool conv_2d_has(unsigned type) {
    return tflm_type_enabled(TFLM_TYPES_CONV_2D, type);
}

tflm_status_t tflm_conv_2d_eval(tflm_eval_t *e) {
    const conv_data_t *d = e->data;
    const void *bias = d->has_bias ? e->in[2] : NULL;
    switch (d->kind) {
        case CONV_FLOAT32:
            if (conv_2d_has(TFLM_FLOAT32)) {
                tflm_conv_2d_float32(d, e->in[0], e->in[1], bias, e->out[0]);
            }
            break;
        case CONV_INT8:
            if (conv_2d_has(TFLM_INT8)) {
                tflm_conv_2d_s8_all(d, e->in[0], e->in[1], bias, d->folded ? tflm_conv_starts(d) : NULL, e->out[0]);
            }
            break;
        case CONV_INT16_ACC32:
            if (conv_2d_has(TFLM_INT16)) {
                tflm_conv_2d_int16_acc32(d, e->in[0], e->in[1], bias, e->out[0]);
            }
            break;
        default:
            if (conv_2d_has(TFLM_INT16)) {
                tflm_conv_2d_int16_acc64(d, e->in[0], e->in[1], bias, e->out[0]);
            }
            break;
    }
    return TFLM_OK;
}

// The rows rule of both ops (tflm_conv_overlap); the int8 variant also
// runs backward over an input below its output (tflm_conv_2d_s8_all: bands
// of rows, or a pointwise layer's pixels, last first).
static bool conv_2d_overlap(tflm_prepare_t *p, const void *data, tflm_rows_t *g) {
    const conv_data_t *d = data;
    tflm_conv_overlap(p, data, g);
    g->backward = d->kind == CONV_INT8;
    return true;
}

#if TFLM_PATCH
static bool conv_2d_window(const void *data, tflm_rows_t *g) {
    const conv_data_t *d = data;
    return tflm_conv_geometry(d, d->f_d, g);
}

// int8 by its rows (fast paths included; over an overlapped input band by
// band, which the row rule allows, rather than eval()'s bands: those hold
// every channel's constants, up to 64, on a stack a patch stage already
// runs deep in; tflm_conv_2d_s8_window holds one chunk's), float32 by its
// loops (row after row).
static tflm_status_t conv_2d_run_window(tflm_eval_t *e, const tflm_window_t *w) {
    tflm_conv_window_t c;
    const conv_data_t *d = tflm_conv_window(&c, w);
    const void *bias = d->has_bias ? e->in[2] : NULL;
    if (d->kind == CONV_INT8) {
        const int32_t *starts = d->folded ? tflm_conv_starts(w->data) : NULL;
        tflm_conv_2d_s8_window(d, e->in[0], e->in[1], bias, starts, e->out[0]);
    } else if (conv_2d_has(TFLM_FLOAT32)) {
        tflm_conv_2d_float32(d, e->in[0], e->in[1], bias, e->out[0]);
    }
    return TFLM_OK;
}
#endif // TFLM_PATCH

const tflm_kernel_hooks_t tflm_conv_2d_hooks = {
    .overlap = conv_2d_overlap,
#if TFLM_PATCH
    .window = conv_2d_window,
    .run_window = conv_2d_run_window,
#endif
};

#endif // TFLM_KERNEL_CONV_2D
