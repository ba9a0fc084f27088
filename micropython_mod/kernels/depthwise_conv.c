// DEPTHWISE_CONV_2D: float32, int8 (per-tensor or per-channel int8 weights,
// int32 bias) and int16 activations with int8 weights and int64 bias; depth
// multiplier, strides, dilation, both paddings, bit-exact with TFLM's
// reference. prepare() is shared with CONV_2D (kernels/conv.c).
#include "kernels/conv_common.h"
#include "engine/quant.h"
#include "engine/schema.h"

#if TFLM_KERNEL_DEPTHWISE_CONV_2D

// DepthwiseConv2DOptions fields
#define DW_PADDING (0)
#define DW_STRIDE_W (1)
#define DW_STRIDE_H (2)
#define DW_DEPTH_MULTIPLIER (3)
#define DW_FUSED_ACTIVATION (4)
#define DW_DILATION_W (5)
#define DW_DILATION_H (6)

// For each output value (channel oc = ic * multiplier + m), the taps of its
// window inside the input, in TFLM's order. The filter is [1, f_h, f_w, out_d].
#define DW_LOOPS(TAP_BODY, FINISH) \
    const int32_t in_h = d->in_h, in_w = d->in_w, in_d = d->in_d; \
    const int32_t f_h = d->f_h, f_w = d->f_w, mult = d->f_d, out_d = d->out_d; \
    for (int32_t b = 0; b < d->batches; ++b) { \
        for (int32_t oy = 0; oy < d->out_h; ++oy) { \
            const int32_t y0 = oy * d->stride_h - d->pad_h; \
            for (int32_t ox = 0; ox < d->out_w; ++ox) { \
                const int32_t x0 = ox * d->stride_w - d->pad_w; \
                for (int32_t ic = 0; ic < in_d; ++ic) { \
                    for (int32_t m = 0; m < mult; ++m) { \
                        const int32_t oc = ic * mult + m; \
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
                                const int32_t in_at = ((b * in_h + iy) * in_w + ix) * in_d + ic; \
                                const int32_t w_at = (fy * f_w + fx) * out_d + oc; \
                                TAP_BODY; \
                            } \
                        } \
                        FINISH; \
                        ++output; \
                    } \
                } \
            } \
        } \
    }

static void tflm_depthwise_conv_2d_float32(const conv_data_t *d, const float *input, const float *filter,
    const float *bias, float *output) {
    float total = 0.0f;
    DW_LOOPS(
        total += input[in_at] * filter[w_at],
        {
            float bias_value = bias ? bias[oc] : 0.0f;
            *output = tflm_clampf(total + bias_value, d->act_min.f, d->act_max.f);
            total = 0.0f;
        })
}

static void tflm_depthwise_conv_2d_int8(const conv_data_t *d, const int8_t *input, const int8_t *filter,
    const int32_t *bias, int8_t *output) {
    const int32_t *mults = conv_multipliers(d);
    const int8_t *shifts = conv_shifts(d);
    const int32_t input_offset = d->input_offset;
    // Sums wrap on overflow as the reference's do on its targets.
    uint32_t acc = 0;
    DW_LOOPS(
        acc += (uint32_t)(filter[w_at] * (input[in_at] + input_offset)),
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

// int16: 64-bit accumulator, no zero points (as TFLM's reference).
static void tflm_depthwise_conv_2d_int16(const conv_data_t *d, const int16_t *input, const int8_t *filter,
    const int64_t *bias, int16_t *output) {
    const int32_t *mults = conv_multipliers(d);
    const int8_t *shifts = conv_shifts(d);
    uint64_t acc = 0;
    DW_LOOPS(
        acc += (uint64_t)(int64_t)(filter[w_at] * input[in_at]),
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

tflm_status_t tflm_depthwise_conv_2d_prepare(tflm_prepare_t *p) {
    conv_options_t opt = {
        .padding = tflm_prep_opt_u8(p, DW_PADDING, TFLM_PADDING_SAME),
        .activation = tflm_prep_opt_u8(p, DW_FUSED_ACTIVATION, TFLM_ACT_NONE),
        .stride_h = tflm_prep_opt_i32(p, DW_STRIDE_H, 0),
        .stride_w = tflm_prep_opt_i32(p, DW_STRIDE_W, 0),
        .dil_h = tflm_prep_opt_i32(p, DW_DILATION_H, 1),
        .dil_w = tflm_prep_opt_i32(p, DW_DILATION_W, 1),
        .depth_multiplier = tflm_prep_opt_i32(p, DW_DEPTH_MULTIPLIER, 0),
    };
    return tflm_conv_prepare_common(p, &opt, true);
}

tflm_status_t tflm_depthwise_conv_2d_eval(tflm_eval_t *e) {
    const conv_data_t *d = e->data;
    const void *bias = d->has_bias ? e->in[2] : NULL;
    switch (d->kind) {
        case CONV_FLOAT32:
            tflm_depthwise_conv_2d_float32(d, e->in[0], e->in[1], bias, e->out[0]);
            break;
        case CONV_INT8:
            tflm_depthwise_conv_2d_int8(d, e->in[0], e->in[1], bias, e->out[0]);
            break;
        default:
            tflm_depthwise_conv_2d_int16(d, e->in[0], e->in[1], bias, e->out[0]);
            break;
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_DEPTHWISE_CONV_2D
