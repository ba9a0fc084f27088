// FULLY_CONNECTED: float32, int8 (per-tensor or per-channel weights) and
// int16 activations with int8 weights, bit-exact with TFLM's reference.
#include "kernels/kernels.h"
#include "kernels/dot.h"
#include "kernels/fold.h"
#include "engine/quant.h"
#include "engine/ops.h"
#include "engine/schema.h"

#if TFLM_KERNEL_FULLY_CONNECTED

enum { FC_FLOAT32, FC_INT8, FC_INT16 };

typedef struct {
    uint8_t kind;
    uint8_t per_channel;
    uint8_t has_bias;
    uint8_t folded;        // int8: starts[] below hold bias + input offset * weights' sum
    int32_t batches;
    int32_t output_depth;
    int32_t accum_depth;
    int32_t input_offset;  // -input zero point
    int32_t filter_offset; // -filter zero point
    int32_t output_offset; // output zero point
    int32_t multiplier;    // per-tensor requantization
    int32_t shift;
    int32_t act_min;
    int32_t act_max;
    float fact_min;
    float fact_max;
    // per channel: int32 multipliers[output_depth], then int8
    // shifts[output_depth]; folded: then int32 starts[output_depth] at a
    // multiple of 4
} fc_data_t;

// Four units at a time (dot.h), where the firmware has the room: PYBV11
// builds with 0 (its loops then go in pairs, as on a DSP core before).
#ifndef TFLM_FC_S8_QUAD
#define TFLM_FC_S8_QUAD (1)
#endif
#define FC_S8_QUAD (TFLM_FC_S8_QUAD && (TFLM_KERNEL_ARCH == TFLM_ARCH_THUMB2 || TFLM_KERNEL_ARCH == TFLM_ARCH_DSP))

static const int32_t *fc_multipliers(const fc_data_t *d) {
    return (const int32_t *)(d + 1);
}

static const int8_t *fc_shifts(const fc_data_t *d) {
    return (const int8_t *)(fc_multipliers(d) + d->output_depth);
}

// The bytes before the starting sums.
static uint32_t fc_filled_bytes(bool per_channel, int32_t units) {
    return (uint32_t)sizeof(fc_data_t) + (per_channel ? 5u * (uint32_t)units : 0u);
}

// Each unit's starting sum, the input offset folded in (a prepared model's,
// computed once on the host and read from flash): the loops then multiply
// the input as it is, one addition per value fewer.
static const int32_t *fc_starts(const fc_data_t *d) {
    return (const int32_t *)((const uint8_t *)d + tflm_align_up(fc_filled_bytes(d->per_channel, d->output_depth), 4));
}

// Fields are read into locals before the loops: stores through `output`
// could alias the kernel data and force reloads.
static void tflm_fully_connected_float32(const fc_data_t *d, const float *input, const float *filter,
    const float *bias, float *output) {
    const int32_t batches = d->batches, depth = d->accum_depth, units = d->output_depth;
    const float act_min = d->fact_min, act_max = d->fact_max;
#define FC_F32_OUT(total, u) tflm_clampf((total) + (bias ? bias[u] : 0.0f), act_min, act_max)
    for (int32_t b = 0; b < batches; ++b, input += depth) {
        const float *w = filter;
        int32_t u = 0;
        // Two units at a time share the input's loads; each sum keeps its order.
        for (; u + 2 <= units; u += 2, w += 2 * depth) {
            float t0 = 0.0f, t1 = 0.0f;
            tflm_dot2_f32(&t0, &t1, w, w + depth, input, depth);
            *output++ = FC_F32_OUT(t0, u);
            *output++ = FC_F32_OUT(t1, u + 1);
        }
        for (; u < units; ++u, w += depth) {
            *output++ = FC_F32_OUT(tflm_dot_f32(0.0f, w, input, depth), u);
        }
    }
#undef FC_F32_OUT
}

static void tflm_fully_connected_int8(const fc_data_t *d, const int8_t *input, const int8_t *filter,
    const int32_t *bias, int8_t *output) {
    const int32_t batches = d->batches, depth = d->accum_depth, units = d->output_depth;
    const int32_t input_offset = d->input_offset, filter_offset = d->filter_offset;
    const int32_t output_offset = d->output_offset, act_min = d->act_min, act_max = d->act_max;
    // Per channel, the rescaling is set up for each unit; per tensor, once.
    const bool per_channel = d->per_channel;
    const int32_t *mults = per_channel ? fc_multipliers(d) : NULL;
    const int8_t *shifts = per_channel ? fc_shifts(d) : NULL;
    tflm_requant_t rq = tflm_requant_init(d->multiplier, d->shift);
    // Sums wrap on overflow as the reference's do on its targets.
#define FC_INT8_OUT(acc, u) \
    { \
        uint32_t total = (acc) + (bias ? (uint32_t)bias[u] : 0u); \
        if (per_channel) { \
            rq = tflm_requant_init(mults[u], shifts[u]); \
        } \
        int32_t out = tflm_wrap_add(tflm_requant(&rq, (int32_t)total), output_offset); \
        *output++ = (int8_t)tflm_clamp(out, act_min, act_max); \
    }
    if (d->folded) {
        // Offsets 0: the inlined loops add nothing per value.
        bias = fc_starts(d);
        TFLM_DOT_S8_UNITS_QUAD(input, batches, depth, units, filter, 0, 0, FC_INT8_OUT, FC_S8_QUAD);
    } else {
        TFLM_DOT_S8_UNITS_QUAD(input, batches, depth, units, filter, input_offset, filter_offset, FC_INT8_OUT,
            FC_S8_QUAD);
    }
#undef FC_INT8_OUT
}

static void tflm_fully_connected_int16(const fc_data_t *d, const int16_t *input, const int8_t *filter,
    const void *bias, int16_t *output) {
    const int32_t batches = d->batches, depth = d->accum_depth, units = d->output_depth;
    const int32_t input_offset = d->input_offset, filter_offset = d->filter_offset;
    const int32_t output_offset = d->output_offset, act_min = d->act_min, act_max = d->act_max;
    const int32_t *mults = d->per_channel ? fc_multipliers(d) : &d->multiplier;
    const int8_t *shifts = d->per_channel ? fc_shifts(d) : NULL;
    const int32_t q_step = d->per_channel ? 1 : 0;
    const int32_t tensor_shift = d->shift;
    for (int32_t b = 0; b < batches; ++b, input += depth) {
        const int8_t *w = filter;
        for (int32_t u = 0; u < units; ++u, w += depth) {
            uint64_t acc = 0;
            if (filter_offset == 0 && input_offset == 0) {
                acc = tflm_dot64_s16_s8(w, input, depth);
            } else {
                for (int32_t k = 0; k < depth; ++k) {
                    acc += (uint64_t)(int64_t)((int32_t)(w[k] + filter_offset) * (input[k] + input_offset));
                }
            }
            if (bias) {
                acc += (uint64_t)tflm_ld_i64(bias, (uint32_t)u);
            }
            int32_t shift = q_step ? shifts[u] : tensor_shift;
            int32_t out = tflm_wrap_add(tflm_mul_by_quantized_mul64((int64_t)acc, mults[u * q_step], shift), output_offset);
            *output++ = (int16_t)tflm_clamp(out, act_min, act_max);
        }
    }
}

tflm_status_t tflm_fully_connected_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 2, 3, 1);
    if (st) {
        return st;
    }
    tflm_tinfo_t in, w, bias, out;
    if ((st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_input(p, 1, &w))
        || (st = tflm_prep_input(p, 2, &bias)) || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (in.index < 0 || w.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input or weights missing");
    }
    uint8_t kind;
    uint8_t bias_type;
    if (in.type == TFLM_FLOAT32 && w.type == TFLM_FLOAT32 && out.type == TFLM_FLOAT32) {
        kind = FC_FLOAT32;
        bias_type = TFLM_FLOAT32;
    } else if (in.type == TFLM_INT8 && w.type == TFLM_INT8 && out.type == TFLM_INT8) {
        kind = FC_INT8;
        bias_type = TFLM_INT32;
    } else if (in.type == TFLM_INT16 && w.type == TFLM_INT8 && out.type == TFLM_INT16) {
        kind = FC_INT16;
        bias_type = TFLM_INT64;
    } else {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "%s input with %s weights and %s output is not supported",
            tflm_type_name(in.type), tflm_type_name(w.type), tflm_type_name(out.type));
    }
    if (bias.index >= 0 && bias.type != bias_type) {
        return tflm_prep_unsupported_type(p, "bias", bias.type);
    }
    if (out.ndims == 0 || w.ndims < 2) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "weights need 2 dimensions and the output at least 1");
    }
    // Shapes as TFLM reads them; checked here so eval never reads out of bounds.
    int32_t units = out.dims[out.ndims - 1];
    int32_t depth = w.dims[w.ndims - 1];
    int32_t batches = units ? (int32_t)(out.elements / (uint32_t)units) : 0;
    if (w.dims[w.ndims - 2] != units || (uint64_t)units * (uint64_t)depth > w.elements
        || (uint64_t)batches * (uint64_t)depth > in.elements
        || (bias.index >= 0 && bias.elements < (uint32_t)units)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "shapes do not match: input %u elements, weights %dx%d, output %u elements",
            (unsigned)in.elements, (int)units, (int)depth, (unsigned)out.elements);
    }
    bool per_channel = kind != FC_FLOAT32 && w.n_scales > 1;
    if (per_channel && w.n_scales != (uint32_t)units) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%u weight scales for %d output channels", (unsigned)w.n_scales, (int)units);
    }
    // Symmetric constant weights (TFLM's int8 scheme) in data the model
    // keeps: the input offset goes into each unit's starting sum.
    bool folded = kind == FC_INT8 && w.zero_point == 0 && w.data != NULL && (bias.index < 0 || bias.data != NULL)
        && tflm_prep_data_in_model(p);
    uint32_t bytes = fc_filled_bytes(per_channel, units);
    fc_data_t *d = folded ? tflm_prep_alloc_streamed(p, bytes, (uint32_t)units) : tflm_prep_alloc(p, bytes);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    uint8_t activation = tflm_prep_opt_u8(p, TFLM_OPT_FULLY_CONNECTED_FUSED_ACTIVATION_FUNCTION, TFLM_ACT_NONE);
    d->kind = kind;
    d->per_channel = per_channel;
    d->has_bias = bias.index >= 0;
    d->batches = batches;
    d->output_depth = units;
    d->accum_depth = depth;
    if (kind == FC_FLOAT32) {
        tflm_activation_range_float(activation, &d->fact_min, &d->fact_max);
        return TFLM_OK;
    }
    d->input_offset = -in.zero_point;
    d->filter_offset = -w.zero_point;
    d->output_offset = out.zero_point;
    if (folded) {
        d->folded = 1;
        tflm_fold_starts(p, 0, (const int8_t *)w.data, units, depth, bias.index >= 0 ? bias.data : NULL,
            d->input_offset);
    }
    // The 64-bit rescaling of int16 handles shifts up to 7, as TFLM's.
    int32_t max_shift = kind == FC_INT8 ? 31 : 7;
    if (per_channel) {
        int32_t *mults = (int32_t *)(d + 1);
        if ((st = tflm_prep_channel_multipliers(p, &in, &w, &out, (uint32_t)units, max_shift, mults,
                 (int8_t *)(mults + units)))) {
            return st;
        }
    } else {
        double real = (double)in.scale * (double)w.scale / (double)out.scale;
        if ((st = tflm_prep_multiplier(p, real, max_shift, &d->multiplier, &d->shift))) {
            return st;
        }
    }
    int32_t qmin = kind == FC_INT8 ? -128 : -32768;
    int32_t qmax = kind == FC_INT8 ? 127 : 32767;
    tflm_activation_range_quantized(activation, out.scale, out.zero_point, qmin, qmax, &d->act_min, &d->act_max);
    return TFLM_OK;
}

tflm_status_t tflm_fully_connected_eval(tflm_eval_t *e) {
    const fc_data_t *d = e->data;
    const void *bias = d->has_bias ? e->in[2] : NULL;
    switch (d->kind) {
        case FC_FLOAT32:
            tflm_fully_connected_float32(d, e->in[0], e->in[1], bias, e->out[0]);
            break;
        case FC_INT8:
            tflm_fully_connected_int8(d, e->in[0], e->in[1], bias, e->out[0]);
            break;
        default:
            tflm_fully_connected_int16(d, e->in[0], e->in[1], bias, e->out[0]);
            break;
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_FULLY_CONNECTED
