// TRANSPOSE_CONV: float32, int8 (per-tensor or per-channel weights, int32
// bias) and int16 activations with int8 weights (int64 or int16 bias),
// bit-exact with TFLM's reference. Like TFLM it scatters every input value
// into the outputs it touches, accumulating in a scratch buffer (the output
// itself for float32), so float sums round in the reference's order.
#include "kernels/kernels.h"
#include "engine/quant.h"
#include "engine/schema.h"

#if TFLM_KERNEL_TRANSPOSE_CONV

// TransposeConvOptions fields

// Inputs: TFLM takes the output shape from the output tensor and ignores input 0.
#define TCONV_OUTPUT_SHAPE (0)
#define TCONV_FILTER (1)
#define TCONV_INPUT (2)
#define TCONV_BIAS (3)

enum { TCONV_FLOAT32, TCONV_INT8, TCONV_INT16 };

typedef struct {
    uint8_t kind;
    uint8_t has_bias;
    uint8_t bias16;       // int16 bias for int16 activations (widened in eval)
    uint8_t reserved;
    int32_t batches;
    int32_t in_h, in_w, in_c;
    int32_t filter_h, filter_w;
    int32_t out_h, out_w, out_c;
    int32_t stride_h, stride_w;
    int32_t pad_h, pad_w;
    int32_t input_offset;  // -input zero point (int8)
    int32_t output_offset; // output zero point (int8)
    int32_t act_min;
    int32_t act_max;
    float fact_min;
    float fact_max;
    // quantized: int32 multipliers[out_c], then int8 shifts[out_c]
} tconv_data_t;

static const int32_t *tconv_multipliers(const tconv_data_t *d) {
    return (const int32_t *)(d + 1);
}

static const int8_t *tconv_shifts(const tconv_data_t *d) {
    return (const int8_t *)(tconv_multipliers(d) + d->out_c);
}

// Calls BODY(acc_index, in_index, filter_index) for every input value and
// filter tap that lands inside the output, in the reference's loop order.
#define TCONV_SCATTER(d, BODY) \
    for (int32_t b = 0; b < (d)->batches; ++b) { \
        for (int32_t iy = 0; iy < (d)->in_h; ++iy) { \
            for (int32_t ix = 0; ix < (d)->in_w; ++ix) { \
                for (int32_t ic = 0; ic < (d)->in_c; ++ic) { \
                    const int32_t x0 = ix * (d)->stride_w - (d)->pad_w; \
                    const int32_t y0 = iy * (d)->stride_h - (d)->pad_h; \
                    const int32_t in_index = ((b * (d)->in_h + iy) * (d)->in_w + ix) * (d)->in_c + ic; \
                    for (int32_t fy = 0; fy < (d)->filter_h; ++fy) { \
                        const int32_t oy = y0 + fy; \
                        if (oy < 0 || oy >= (d)->out_h) { \
                            continue; \
                        } \
                        for (int32_t fx = 0; fx < (d)->filter_w; ++fx) { \
                            const int32_t ox = x0 + fx; \
                            if (ox < 0 || ox >= (d)->out_w) { \
                                continue; \
                            } \
                            const int32_t out_base = ((b * (d)->out_h + oy) * (d)->out_w + ox) * (d)->out_c; \
                            for (int32_t oc = 0; oc < (d)->out_c; ++oc) { \
                                const int32_t f_index = ((oc * (d)->filter_h + fy) * (d)->filter_w + fx) * (d)->in_c + ic; \
                                BODY(out_base + oc, in_index, f_index) \
                            } \
                        } \
                    } \
                } \
            } \
        } \
    }

static int32_t tconv_out_elements(const tconv_data_t *d) {
    return d->batches * d->out_h * d->out_w * d->out_c;
}

static void tflm_transpose_conv_float32(const tconv_data_t *d, const float *input, const float *filter,
    const float *bias, float *output) {
    const int32_t n = tconv_out_elements(d);
    for (int32_t i = 0; i < n; ++i) {
        output[i] = 0.0f;
    }
    #define TCONV_ACC_F32(o, i, f) output[o] += input[i] * filter[f];
    TCONV_SCATTER(d, TCONV_ACC_F32)
    #undef TCONV_ACC_F32
    for (int32_t i = 0; i < n; ++i) {
        float acc = output[i];
        if (bias) {
            acc += bias[i % d->out_c];
        }
        output[i] = tflm_clampf(acc, d->fact_min, d->fact_max);
    }
}

static void tflm_transpose_conv_int8(const tconv_data_t *d, const int8_t *input, const int8_t *filter,
    const int32_t *bias, int8_t *output, uint32_t *acc) {
    const int32_t n = tconv_out_elements(d);
    const int32_t *mults = tconv_multipliers(d);
    const int8_t *shifts = tconv_shifts(d);
    memset(acc, 0, (size_t)n * sizeof(*acc));
    // Sums wrap on overflow as the reference's do on its targets. The filter
    // zero point is not applied, as in TFLM.
    #define TCONV_ACC_I8(o, i, f) acc[o] += (uint32_t)((input[i] + d->input_offset) * filter[f]);
    TCONV_SCATTER(d, TCONV_ACC_I8)
    #undef TCONV_ACC_I8
    for (int32_t i = 0; i < n; ++i) {
        int32_t c = i % d->out_c;
        uint32_t total = acc[i];
        if (bias) {
            total += (uint32_t)bias[c];
        }
        int32_t out = tflm_mul_by_quantized_mul((int32_t)total, mults[c], shifts[c]);
        out = tflm_wrap_add(out, d->output_offset);
        output[i] = (int8_t)tflm_clamp(out, d->act_min, d->act_max);
    }
}

static void tflm_transpose_conv_int16(const tconv_data_t *d, const int16_t *input, const int8_t *filter,
    const void *bias, int16_t *output, uint64_t *acc) {
    const int32_t n = tconv_out_elements(d);
    const int32_t *mults = tconv_multipliers(d);
    const int8_t *shifts = tconv_shifts(d);
    memset(acc, 0, (size_t)n * sizeof(*acc));
    // int16 zero points are 0: TFLM applies no input or output offset here.
    #define TCONV_ACC_I16(o, i, f) acc[o] += (uint64_t)(int64_t)((int32_t)input[i] * filter[f]);
    TCONV_SCATTER(d, TCONV_ACC_I16)
    #undef TCONV_ACC_I16
    for (int32_t i = 0; i < n; ++i) {
        int32_t c = i % d->out_c;
        uint64_t total = acc[i];
        if (bias) {
            total += d->bias16 ? (uint64_t)(int64_t)((const int16_t *)bias)[c] : (uint64_t)tflm_ld_i64(bias, (uint32_t)c);
        }
        int32_t out = tflm_mul_by_quantized_mul64((int64_t)total, mults[c], shifts[c]);
        output[i] = (int16_t)tflm_clamp(out, d->act_min, d->act_max);
    }
}

// TFLM's padding for a transposed window: computed from the output size as
// for a forward conv over it, with C's truncating division.
static int32_t tconv_padding(unsigned padding, int32_t out, int32_t filter, int32_t stride) {
    int64_t n = padding == TFLM_PADDING_SAME ? ((int64_t)out + stride - 1) / stride
        : ((int64_t)out + stride - filter) / stride;
    int64_t total = (n - 1) * stride + filter - out;
    return total > 0 ? (int32_t)(total / 2) : 0;
}

tflm_status_t tflm_transpose_conv_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 3, 4, 1);
    if (st) {
        return st;
    }
    tflm_tinfo_t filter, in, bias, out;
    if ((st = tflm_prep_input(p, TCONV_FILTER, &filter)) || (st = tflm_prep_input(p, TCONV_INPUT, &in))
        || (st = tflm_prep_input(p, TCONV_BIAS, &bias)) || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (in.index < 0 || filter.index < 0 || out.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input, filter or output missing");
    }
    uint8_t kind;
    bool bias16 = false;
    if (in.type == TFLM_FLOAT32 && filter.type == TFLM_FLOAT32 && out.type == TFLM_FLOAT32) {
        kind = TCONV_FLOAT32;
        if (bias.index >= 0 && bias.type != TFLM_FLOAT32) {
            return tflm_prep_unsupported_type(p, "bias", bias.type);
        }
    } else if (in.type == TFLM_INT8 && filter.type == TFLM_INT8 && out.type == TFLM_INT8) {
        kind = TCONV_INT8;
        if (bias.index >= 0 && bias.type != TFLM_INT32) {
            return tflm_prep_unsupported_type(p, "bias", bias.type);
        }
    } else if (in.type == TFLM_INT16 && filter.type == TFLM_INT8 && out.type == TFLM_INT16) {
        kind = TCONV_INT16;
        if (bias.index >= 0 && bias.type != TFLM_INT64 && bias.type != TFLM_INT16) {
            return tflm_prep_unsupported_type(p, "bias", bias.type);
        }
        bias16 = bias.index >= 0 && bias.type == TFLM_INT16;
    } else {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "%s input with %s filter and %s output is not supported",
            tflm_type_name(in.type), tflm_type_name(filter.type), tflm_type_name(out.type));
    }
    if (in.ndims != 4 || filter.ndims != 4 || out.ndims != 4) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input, filter and output need 4 dimensions");
    }
    int32_t out_c = filter.dims[0];
    if (in.dims[0] != out.dims[0] || in.dims[3] != filter.dims[3] || out.dims[3] != out_c
        || (bias.index >= 0 && bias.elements != (uint32_t)out_c)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "shapes do not match: input %dx%dx%dx%d, filter %dx%dx%dx%d, output %dx%dx%dx%d",
            (int)in.dims[0], (int)in.dims[1], (int)in.dims[2], (int)in.dims[3],
            (int)filter.dims[0], (int)filter.dims[1], (int)filter.dims[2], (int)filter.dims[3],
            (int)out.dims[0], (int)out.dims[1], (int)out.dims[2], (int)out.dims[3]);
    }
    uint8_t padding = tflm_prep_opt_u8(p, TFLM_OPT_TRANSPOSE_CONV_PADDING, TFLM_PADDING_SAME);
    int32_t stride_w = tflm_prep_opt_i32(p, TFLM_OPT_TRANSPOSE_CONV_STRIDE_W, 0);
    int32_t stride_h = tflm_prep_opt_i32(p, TFLM_OPT_TRANSPOSE_CONV_STRIDE_H, 0);
    if (padding > TFLM_PADDING_VALID) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "padding %u is not supported", (unsigned)padding);
    }
    if (stride_w <= 0 || stride_h <= 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "strides must be positive, not %d x %d", (int)stride_h, (int)stride_w);
    }
    // Index arithmetic in eval stays in int32: input positions times the
    // stride, plus the padding, must not overflow.
    if ((int64_t)in.dims[1] * stride_h > INT32_MAX / 2 || (int64_t)in.dims[2] * stride_w > INT32_MAX / 2
        || out.elements > INT32_MAX / 8 || filter.elements > INT32_MAX / 2) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "transpose convolution too large");
    }
    bool quantized = kind != TCONV_FLOAT32;
    if (quantized) {
        if (in.n_scales == 0 || out.n_scales == 0 || filter.n_scales == 0) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "quantized transpose convolution needs quantized tensors");
        }
        if (filter.n_scales != 1 && (filter.n_scales != (uint32_t)out_c || filter.quantized_dimension != 0)) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "%u filter scales for %d output channels",
                (unsigned)filter.n_scales, (int)out_c);
        }
        if (filter.t.zero_point.count != filter.n_scales) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "filter has %u scales and %u zero points",
                (unsigned)filter.n_scales, (unsigned)filter.t.zero_point.count);
        }
    }
    // TFLM's scratch buffers: the accumulators, then the widened int16 bias.
    uint32_t index;
    if (kind != TCONV_FLOAT32 && (st = tflm_prep_scratch(p, out.elements * (kind == TCONV_INT8 ? 4u : 8u), &index))) {
        return st;
    }
    if (bias16 && (st = tflm_prep_scratch(p, bias.elements * 8u, &index))) {
        return st;
    }
    uint32_t bytes = (uint32_t)sizeof(tconv_data_t) + (quantized ? 5u * (uint32_t)out_c : 0u);
    tconv_data_t *d = tflm_prep_alloc(p, bytes);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->kind = kind;
    d->has_bias = bias.index >= 0;
    d->bias16 = bias16;
    d->batches = in.dims[0];
    d->in_h = in.dims[1];
    d->in_w = in.dims[2];
    d->in_c = in.dims[3];
    d->filter_h = filter.dims[1];
    d->filter_w = filter.dims[2];
    d->out_h = out.dims[1];
    d->out_w = out.dims[2];
    d->out_c = out_c;
    d->stride_h = stride_h;
    d->stride_w = stride_w;
    d->pad_h = tconv_padding(padding, d->out_h, d->filter_h, stride_h);
    d->pad_w = tconv_padding(padding, d->out_w, d->filter_w, stride_w);
    uint8_t activation = tflm_prep_opt_u8(p, TFLM_OPT_TRANSPOSE_CONV_FUSED_ACTIVATION_FUNCTION, TFLM_ACT_NONE);
    if (kind == TCONV_FLOAT32) {
        tflm_activation_range_float(activation, &d->fact_min, &d->fact_max);
        return TFLM_OK;
    }
    d->input_offset = -in.zero_point;
    d->output_offset = out.zero_point;
    int32_t qmin = kind == TCONV_INT8 ? -128 : -32768;
    int32_t qmax = kind == TCONV_INT8 ? 127 : 32767;
    st = tflm_prep_activation_range(p, activation, out.scale, out.zero_point, qmin, qmax, &d->act_min,
        &d->act_max);
    if (st) {
        return st;
    }
    // The 64-bit rescaling of int16 handles shifts up to 7, as TFLM's.
    int32_t max_shift = kind == TCONV_INT8 ? 31 : 7;
    int32_t *mults = (int32_t *)(d + 1);
    return tflm_prep_channel_multipliers(p, &in, &filter, &out, (uint32_t)out_c, max_shift, mults,
        (int8_t *)(mults + out_c));
}

tflm_status_t tflm_transpose_conv_eval(tflm_eval_t *e) {
    const tconv_data_t *d = e->data;
    const void *bias = d->has_bias ? e->in[TCONV_BIAS] : NULL;
    switch (d->kind) {
        case TCONV_FLOAT32:
            tflm_transpose_conv_float32(d, e->in[TCONV_INPUT], e->in[TCONV_FILTER], bias, e->out[0]);
            break;
        case TCONV_INT8:
            tflm_transpose_conv_int8(d, e->in[TCONV_INPUT], e->in[TCONV_FILTER], bias, e->out[0], e->scratch[0]);
            break;
        default:
            tflm_transpose_conv_int16(d, e->in[TCONV_INPUT], e->in[TCONV_FILTER], bias, e->out[0], e->scratch[0]);
            break;
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_TRANSPOSE_CONV
