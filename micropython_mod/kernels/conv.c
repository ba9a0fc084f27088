// CONV_2D: float32, int8 (per-tensor or per-channel int8 weights, int32 bias)
// and int16 activations with int8 weights (int64 or int32 bias), grouped
// filters, strides, dilation, both paddings, bit-exact with TFLM's reference.
// Also holds the prepare() shared with DEPTHWISE_CONV_2D (conv_common.h).
#include "kernels/conv_common.h"
#include "engine/quant.h"
#include "engine/schema.h"

#if TFLM_KERNEL_CONV_2D || TFLM_KERNEL_DEPTHWISE_CONV_2D

static bool conv_fits_u16(int32_t v) {
    return v >= 0 && v <= UINT16_MAX;
}

tflm_status_t tflm_conv_prepare_common(tflm_prepare_t *p, const conv_options_t *opt, bool depthwise) {
    tflm_status_t st = tflm_prep_expect_io(p, 2, 3, 1);
    if (st) {
        return st;
    }
    tflm_tinfo_t in, w, bias, out;
    if ((st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_input(p, 1, &w))
        || (st = tflm_prep_input(p, 2, &bias)) || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (in.index < 0 || w.index < 0 || out.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input, filter or output missing");
    }

    // Types: the combinations TFLM's reference kernels compute.
    uint8_t kind;
    if (in.type != out.type) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%s input with %s output",
            tflm_type_name(in.type), tflm_type_name(out.type));
    }
    if (in.type == TFLM_FLOAT32 && w.type == TFLM_FLOAT32) {
        kind = CONV_FLOAT32;
        if (bias.index >= 0 && bias.type != TFLM_FLOAT32) {
            return tflm_prep_unsupported_type(p, "float32 conv bias", bias.type);
        }
    } else if (in.type == TFLM_INT8 && w.type == TFLM_INT8) {
        kind = CONV_INT8;
        if (bias.index >= 0 && bias.type != TFLM_INT32) {
            return tflm_prep_unsupported_type(p, "int8 conv bias", bias.type);
        }
    } else if (in.type == TFLM_INT16 && w.type == TFLM_INT8) {
        // DEPTHWISE_CONV_2D always sums in 64 bits; CONV_2D in 32 bits with an
        // int32 bias and in 64 bits with an int64 bias or none, as TFLM does.
        if (depthwise) {
            kind = CONV_INT16_ACC64;
            if (bias.index >= 0 && bias.type != TFLM_INT64) {
                return tflm_prep_unsupported_type(p, "int16 depthwise conv bias", bias.type);
            }
        } else if (bias.index >= 0 && bias.type == TFLM_INT32) {
            kind = CONV_INT16_ACC32;
        } else if (bias.index < 0 || bias.type == TFLM_INT64) {
            kind = CONV_INT16_ACC64;
        } else {
            return tflm_prep_unsupported_type(p, "int16 conv bias", bias.type);
        }
    } else {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "%s input with %s filter is not supported",
            tflm_type_name(in.type), tflm_type_name(w.type));
    }

    // Shapes (NHWC input and output; OHWI filter, or 1HWO for depthwise).
    if (in.ndims != 4 || w.ndims != 4 || out.ndims != 4) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input, filter and output need 4 dimensions");
    }
    int32_t batches = in.dims[0], in_h = in.dims[1], in_w = in.dims[2], in_d = in.dims[3];
    int32_t f_h = w.dims[1], f_w = w.dims[2];
    int32_t out_h = out.dims[1], out_w = out.dims[2], out_d = out.dims[3];
    int32_t f_d;
    if (out.dims[0] != batches) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%d input batches, %d output batches", (int)batches, (int)out.dims[0]);
    }
    if (depthwise) {
        f_d = opt->depth_multiplier;
        if (w.dims[3] != out_d || w.dims[0] < 1 || f_d <= 0 || (int64_t)in_d * f_d != out_d) {
            return tflm_error(p->err, TFLM_ERR_VALUE,
                "%d input channels with depth multiplier %d do not give %d output channels (filter %d)",
                (int)in_d, (int)f_d, (int)out_d, (int)w.dims[3]);
        }
    } else {
        f_d = w.dims[3];
        // Grouped filters: each group of out_d / groups filters reads f_d input channels.
        int32_t groups = f_d > 0 ? in_d / f_d : 0;
        if (w.dims[0] != out_d || f_d <= 0 || in_d % f_d != 0 || groups == 0 || out_d % groups != 0) {
            return tflm_error(p->err, TFLM_ERR_VALUE,
                "filter %dx%dx%dx%d does not fit %d input and %d output channels",
                (int)w.dims[0], (int)f_h, (int)f_w, (int)f_d, (int)in_d, (int)out_d);
        }
    }
    if (bias.index >= 0 && bias.elements < (uint32_t)out_d) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%u bias values for %d output channels", (unsigned)bias.elements, (int)out_d);
    }

    // Options.
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
    // Everything eval reads fits 16 bits, so its index arithmetic cannot overflow.
    int64_t eff_h = (int64_t)(f_h - 1) * opt->dil_h + 1, eff_w = (int64_t)(f_w - 1) * opt->dil_w + 1;
    if (!conv_fits_u16(batches) || !conv_fits_u16(in_h) || !conv_fits_u16(in_w) || !conv_fits_u16(in_d)
        || !conv_fits_u16(f_h) || !conv_fits_u16(f_w) || !conv_fits_u16(f_d) || !conv_fits_u16(out_d)
        || !conv_fits_u16(opt->stride_h) || !conv_fits_u16(opt->stride_w) || !conv_fits_u16(opt->dil_h)
        || !conv_fits_u16(opt->dil_w) || f_h < 1 || f_w < 1
        || eff_h > UINT16_MAX || eff_w > UINT16_MAX) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "sizes beyond 65535 are not supported");
    }
    // Output size and padding as TFLM computes them.
    int32_t want_h = tflm_window_out_size(opt->padding, in_h, f_h, opt->stride_h, opt->dil_h);
    int32_t want_w = tflm_window_out_size(opt->padding, in_w, f_w, opt->stride_w, opt->dil_w);
    if (out_h != want_h || out_w != want_w) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output is %dx%d, the window gives %dx%d",
            (int)out_h, (int)out_w, (int)want_h, (int)want_w);
    }
    int32_t offset;
    int32_t pad_h = tflm_window_padding(in_h, f_h, opt->stride_h, opt->dil_h, out_h, &offset);
    int32_t pad_w = tflm_window_padding(in_w, f_w, opt->stride_w, opt->dil_w, out_w, &offset);

    // Quantization: per-tensor or one filter scale per output channel.
    bool quantized = kind != CONV_FLOAT32;
    bool per_channel = quantized && w.n_scales > 1;
    if (quantized) {
        if (in.n_scales == 0 || out.n_scales == 0 || w.n_scales == 0) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "quantized tensors need scales");
        }
        if (per_channel && (w.n_scales != (uint32_t)out_d || w.quantized_dimension < 0
            || w.quantized_dimension > 3 || w.dims[w.quantized_dimension] != out_d)) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "%u filter scales for %d output channels", (unsigned)w.n_scales, (int)out_d);
        }
    }
    uint32_t n_mult = per_channel ? (uint32_t)out_d : 1u;
    uint32_t bytes = (uint32_t)sizeof(conv_data_t) + (quantized ? 5u * n_mult : 0u);
    conv_data_t *d = tflm_prep_alloc(p, bytes);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->kind = kind;
    d->per_channel = per_channel;
    d->has_bias = bias.index >= 0;
    d->batches = (uint16_t)batches;
    d->in_h = (uint16_t)in_h;
    d->in_w = (uint16_t)in_w;
    d->in_d = (uint16_t)in_d;
    d->f_h = (uint16_t)f_h;
    d->f_w = (uint16_t)f_w;
    d->f_d = (uint16_t)f_d;
    d->out_h = (uint16_t)out_h;
    d->out_w = (uint16_t)out_w;
    d->out_d = (uint16_t)out_d;
    d->stride_h = (uint16_t)opt->stride_h;
    d->stride_w = (uint16_t)opt->stride_w;
    d->dil_h = (uint16_t)opt->dil_h;
    d->dil_w = (uint16_t)opt->dil_w;
    d->pad_h = (uint16_t)pad_h;
    d->pad_w = (uint16_t)pad_w;
    if (!quantized) {
        tflm_activation_range_float(opt->activation, &d->act_min.f, &d->act_max.f);
        return TFLM_OK;
    }
    d->input_offset = -in.zero_point;
    d->output_offset = out.zero_point;
    // The 64-bit rescaling handles left shifts up to 7, as TFLM's.
    int32_t max_shift = kind == CONV_INT16_ACC64 ? 7 : 31;
    int32_t *mults = (int32_t *)(d + 1);
    int8_t *shifts = (int8_t *)(mults + n_mult);
    for (uint32_t c = 0; c < n_mult; ++c) {
        double real = (double)in.scale * (double)tflm_prep_scale(p, &w, c) / (double)out.scale;
        int32_t shift;
        if ((st = tflm_prep_multiplier(p, real, max_shift, &mults[c], &shift))) {
            return st;
        }
        shifts[c] = (int8_t)shift;
    }
    bool is8 = kind == CONV_INT8;
    tflm_activation_range_quantized(opt->activation, out.scale, out.zero_point, is8 ? -128 : -32768,
        is8 ? 127 : 32767, &d->act_min.q, &d->act_max.q);
    return TFLM_OK;
}

#endif // TFLM_KERNEL_CONV_2D || TFLM_KERNEL_DEPTHWISE_CONV_2D

#if TFLM_KERNEL_CONV_2D

// Conv2DOptions fields
#define CONV_PADDING (0)
#define CONV_STRIDE_W (1)
#define CONV_STRIDE_H (2)
#define CONV_FUSED_ACTIVATION (3)
#define CONV_DILATION_W (4)
#define CONV_DILATION_H (5)

// The loops of all variants: for each output value, the taps of the window
// that fall inside the input (padding contributes nothing), in TFLM's order.
#define CONV_LOOPS(TAP_BODY, FINISH) \
    const int32_t in_h = d->in_h, in_w = d->in_w, in_d = d->in_d; \
    const int32_t f_h = d->f_h, f_w = d->f_w, f_d = d->f_d, out_d = d->out_d; \
    const int32_t per_group = out_d / (in_d / f_d); \
    for (int32_t b = 0; b < d->batches; ++b) { \
        for (int32_t oy = 0; oy < d->out_h; ++oy) { \
            const int32_t y0 = oy * d->stride_h - d->pad_h; \
            for (int32_t ox = 0; ox < d->out_w; ++ox) { \
                const int32_t x0 = ox * d->stride_w - d->pad_w; \
                for (int32_t oc = 0; oc < out_d; ++oc) { \
                    const int32_t first = (oc / per_group) * f_d; \
                    for (int32_t fy = 0; fy < f_h; ++fy) { \
                        const int32_t iy = y0 + d->dil_h * fy; \
                        if (iy < 0 || iy >= in_h) { \
                            continue; \
                        } \
                        for (int32_t fx = 0; fx < f_w; ++fx) { \
                            const int32_t ix = x0 + d->dil_w * fx; \
                            if (ix < 0 || ix >= in_w) { \
                                continue; \
                            } \
                            const int32_t in_at = ((b * in_h + iy) * in_w + ix) * in_d + first; \
                            const int32_t w_at = ((oc * f_h + fy) * f_w + fx) * f_d; \
                            for (int32_t ic = 0; ic < f_d; ++ic) { \
                                TAP_BODY; \
                            } \
                        } \
                    } \
                    FINISH; \
                    ++output; \
                } \
            } \
        } \
    }

static void tflm_conv_2d_float32(const conv_data_t *d, const float *input, const float *filter,
    const float *bias, float *output) {
    float total = 0.0f;
    CONV_LOOPS(
        total += input[in_at + ic] * filter[w_at + ic],
        {
            float bias_value = bias ? bias[oc] : 0.0f;
            *output = tflm_clampf(total + bias_value, d->act_min.f, d->act_max.f);
            total = 0.0f;
        })
}

static void tflm_conv_2d_int8(const conv_data_t *d, const int8_t *input, const int8_t *filter,
    const int32_t *bias, int8_t *output) {
    const int32_t *mults = conv_multipliers(d);
    const int8_t *shifts = conv_shifts(d);
    const int32_t input_offset = d->input_offset;
    // Sums wrap on overflow as the reference's do on its targets.
    uint32_t acc = 0;
    CONV_LOOPS(
        acc += (uint32_t)(filter[w_at + ic] * (input[in_at + ic] + input_offset)),
        {
            if (bias) {
                acc += (uint32_t)bias[oc];
            }
            int32_t c = d->per_channel ? oc : 0;
            int32_t v = tflm_wrap_add(tflm_mul_by_quantized_mul((int32_t)acc, mults[c], shifts[c]), d->output_offset);
            *output = (int8_t)tflm_clamp(v, d->act_min.q, d->act_max.q);
            acc = 0;
        })
}

// int16 with an int32 bias: a 32-bit accumulator and rescaling, no zero
// points (TFLM's reference uses none for int16).
static void tflm_conv_2d_int16_acc32(const conv_data_t *d, const int16_t *input, const int8_t *filter,
    const int32_t *bias, int16_t *output) {
    const int32_t *mults = conv_multipliers(d);
    const int8_t *shifts = conv_shifts(d);
    uint32_t acc = 0;
    CONV_LOOPS(
        acc += (uint32_t)(filter[w_at + ic] * input[in_at + ic]),
        {
            if (bias) {
                acc += (uint32_t)bias[oc];
            }
            int32_t c = d->per_channel ? oc : 0;
            int32_t v = tflm_mul_by_quantized_mul((int32_t)acc, mults[c], shifts[c]);
            *output = (int16_t)tflm_clamp(v, d->act_min.q, d->act_max.q);
            acc = 0;
        })
}

static void tflm_conv_2d_int16_acc64(const conv_data_t *d, const int16_t *input, const int8_t *filter,
    const int64_t *bias, int16_t *output) {
    const int32_t *mults = conv_multipliers(d);
    const int8_t *shifts = conv_shifts(d);
    uint64_t acc = 0;
    CONV_LOOPS(
        acc += (uint64_t)(int64_t)(filter[w_at + ic] * input[in_at + ic]),
        {
            if (bias) {
                acc += (uint64_t)bias[oc];
            }
            int32_t c = d->per_channel ? oc : 0;
            int32_t v = tflm_mul_by_quantized_mul64((int64_t)acc, mults[c], shifts[c]);
            *output = (int16_t)tflm_clamp(v, d->act_min.q, d->act_max.q);
            acc = 0;
        })
}

tflm_status_t tflm_conv_2d_prepare(tflm_prepare_t *p) {
    conv_options_t opt = {
        .padding = tflm_prep_opt_u8(p, CONV_PADDING, TFLM_PADDING_SAME),
        .activation = tflm_prep_opt_u8(p, CONV_FUSED_ACTIVATION, TFLM_ACT_NONE),
        .stride_h = tflm_prep_opt_i32(p, CONV_STRIDE_H, 0),
        .stride_w = tflm_prep_opt_i32(p, CONV_STRIDE_W, 0),
        .dil_h = tflm_prep_opt_i32(p, CONV_DILATION_H, 1),
        .dil_w = tflm_prep_opt_i32(p, CONV_DILATION_W, 1),
        .depth_multiplier = 0,
    };
    return tflm_conv_prepare_common(p, &opt, false);
}

tflm_status_t tflm_conv_2d_eval(tflm_eval_t *e) {
    const conv_data_t *d = e->data;
    const void *bias = d->has_bias ? e->in[2] : NULL;
    switch (d->kind) {
        case CONV_FLOAT32:
            tflm_conv_2d_float32(d, e->in[0], e->in[1], bias, e->out[0]);
            break;
        case CONV_INT8:
            tflm_conv_2d_int8(d, e->in[0], e->in[1], bias, e->out[0]);
            break;
        case CONV_INT16_ACC32:
            tflm_conv_2d_int16_acc32(d, e->in[0], e->in[1], bias, e->out[0]);
            break;
        default:
            tflm_conv_2d_int16_acc64(d, e->in[0], e->in[1], bias, e->out[0]);
            break;
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_CONV_2D
