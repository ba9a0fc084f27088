// RELU, RELU6 and LEAKY_RELU: float32, int8 and int16, bit-exact with TFLM's
// reference kernels.
#include "kernels/kernels.h"
#include "engine/quant.h"
#include "engine/schema.h"

#if TFLM_KERNEL_RELU || TFLM_KERNEL_RELU6 || TFLM_KERNEL_LEAKY_RELU

enum { ACT_FLOAT32, ACT_INT8, ACT_INT16 };

// Input types, in the order of the kinds above.
static const uint8_t act_types[] = { TFLM_FLOAT32, TFLM_INT8, TFLM_INT16 };

// The element-wise input/output pair; gives the kernel kind.
static tflm_status_t act_io(tflm_prepare_t *p, tflm_tinfo_t *in, tflm_tinfo_t *out, uint8_t *kind) {
    return tflm_prep_unary(p, act_types, sizeof(act_types), in, out, kind);
}

#endif

#if TFLM_KERNEL_RELU

typedef struct {
    uint8_t kind;
    int8_t shift;
    int16_t input_offset;
    int16_t output_offset;
    int16_t act_min;
    uint32_t count;
    int32_t multiplier;
} relu_data_t;

static void tflm_relu_float32(const relu_data_t *d, const float *input, float *output) {
    for (uint32_t i = 0; i < d->count; ++i) {
        float v = input[i];
        output[i] = v < 0.0f ? 0.0f : v;
    }
}

// The output range's top is the type's maximum.
static inline int32_t relu_requantize(const relu_data_t *d, int32_t v, int32_t qmax) {
    int32_t out = tflm_wrap_add(tflm_mul_by_quantized_mul(v - d->input_offset, d->multiplier, d->shift), d->output_offset);
    return tflm_clamp(out, d->act_min, qmax);
}

static void tflm_relu_int8(const relu_data_t *d, const int8_t *input, int8_t *output) {
    for (uint32_t i = 0; i < d->count; ++i) {
        output[i] = (int8_t)relu_requantize(d, input[i], 127);
    }
}

static void tflm_relu_int16(const relu_data_t *d, const int16_t *input, int16_t *output) {
    for (uint32_t i = 0; i < d->count; ++i) {
        output[i] = (int16_t)relu_requantize(d, input[i], 32767);
    }
}

tflm_status_t tflm_relu_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, out;
    uint8_t kind;
    tflm_status_t st = act_io(p, &in, &out, &kind);
    if (st) {
        return st;
    }
    int32_t multiplier = 0, shift = 0;
    if (kind != ACT_FLOAT32) {
        if ((st = tflm_prep_positive_scales(p, &in, &out))) {
            return st;
        }
        if (kind == ACT_INT16 && (in.zero_point != 0 || out.zero_point != 0)) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "int16 RELU needs zero points 0");
        }
        if ((st = tflm_prep_multiplier(p, (double)in.scale / (double)out.scale, 31, &multiplier, &shift))) {
            return st;
        }
    }
    relu_data_t *d = tflm_prep_alloc(p, sizeof(relu_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->kind = kind;
    d->count = in.elements;
    d->multiplier = multiplier;
    d->shift = (int8_t)shift;
    d->input_offset = (int16_t)in.zero_point;
    d->output_offset = (int16_t)out.zero_point;
    // max(type minimum, zero point + round(0 / scale)): the zero point fits the type.
    d->act_min = (int16_t)out.zero_point;
    return TFLM_OK;
}

tflm_status_t tflm_relu_eval(tflm_eval_t *e) {
    const relu_data_t *d = e->data;
    switch (d->kind) {
        case ACT_FLOAT32:
            tflm_relu_float32(d, e->in[0], e->out[0]);
            break;
        case ACT_INT8:
            tflm_relu_int8(d, e->in[0], e->out[0]);
            break;
        default:
            tflm_relu_int16(d, e->in[0], e->out[0]);
            break;
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_RELU

#if TFLM_KERNEL_RELU6

typedef struct {
    uint8_t kind;
    uint8_t reserved;
    int16_t lower; // quantized 0 and 6 (on the input's scale)
    int16_t upper;
    uint16_t reserved2;
    uint32_t count;
} relu6_data_t;

static void tflm_relu6_float32(const relu6_data_t *d, const float *input, float *output) {
    for (uint32_t i = 0; i < d->count; ++i) {
        float v = input[i];
        output[i] = v > 6.0f ? 6.0f : (v < 0.0f ? 0.0f : v);
    }
}

static void tflm_relu6_int8(const relu6_data_t *d, const int8_t *input, int8_t *output) {
    for (uint32_t i = 0; i < d->count; ++i) {
        int32_t v = input[i];
        output[i] = (int8_t)(v > d->upper ? d->upper : (v < d->lower ? d->lower : v));
    }
}

static void tflm_relu6_int16(const relu6_data_t *d, const int16_t *input, int16_t *output) {
    for (uint32_t i = 0; i < d->count; ++i) {
        int32_t v = input[i];
        output[i] = (int16_t)(v > d->upper ? d->upper : (v < d->lower ? d->lower : v));
    }
}

tflm_status_t tflm_relu6_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, out;
    uint8_t kind;
    tflm_status_t st = act_io(p, &in, &out, &kind);
    if (st) {
        return st;
    }
    int32_t six = 0;
    if (kind != ACT_FLOAT32) {
        if ((st = tflm_prep_positive_scales(p, &in, &out))) {
            return st;
        }
        // round(6 / scale) + zero point, summed in float and converted as
        // x86 does, then clamped to the type.
        float q = tflm_roundf(6.0f / in.scale) + (float)in.zero_point;
        six = tflm_float_to_int32(q);
        int32_t lo = kind == ACT_INT8 ? -128 : -32768, hi = kind == ACT_INT8 ? 127 : 32767;
        six = tflm_clamp(six, lo, hi);
    }
    relu6_data_t *d = tflm_prep_alloc(p, sizeof(relu6_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->kind = kind;
    d->count = in.elements;
    d->lower = (int16_t)in.zero_point;
    d->upper = (int16_t)six;
    return TFLM_OK;
}

tflm_status_t tflm_relu6_eval(tflm_eval_t *e) {
    const relu6_data_t *d = e->data;
    switch (d->kind) {
        case ACT_FLOAT32:
            tflm_relu6_float32(d, e->in[0], e->out[0]);
            break;
        case ACT_INT8:
            tflm_relu6_int8(d, e->in[0], e->out[0]);
            break;
        default:
            tflm_relu6_int16(d, e->in[0], e->out[0]);
            break;
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_RELU6

#if TFLM_KERNEL_LEAKY_RELU

// LeakyReluOptions fields

typedef struct {
    uint8_t kind;
    int8_t shift_identity;
    int8_t shift_alpha;
    uint8_t alpha_negative;
    int16_t input_offset;
    int16_t output_offset;
    uint32_t count;
    int32_t multiplier_identity;
    union {
        int32_t multiplier_alpha;
        float alpha; // float32 kernel
    } a;
} leaky_relu_data_t;

static void tflm_leaky_relu_float32(const leaky_relu_data_t *d, const float *input, float *output) {
    const float alpha = d->a.alpha;
    for (uint32_t i = 0; i < d->count; ++i) {
        float v = input[i];
        output[i] = v > 0.0f ? v : v * alpha;
    }
}

static inline int32_t leaky_relu_q(const leaky_relu_data_t *d, int32_t v, int32_t qmin, int32_t qmax) {
    int32_t x = v - d->input_offset;
    int32_t out;
    if (x >= 0) {
        out = tflm_mul_by_quantized_mul(x, d->multiplier_identity, d->shift_identity);
    } else {
        out = tflm_mul_by_quantized_mul(x, d->a.multiplier_alpha, d->shift_alpha);
        if (d->alpha_negative) {
            out = (int32_t)(0u - (uint32_t)out);
        }
    }
    return tflm_clamp(tflm_wrap_add(out, d->output_offset), qmin, qmax);
}

static void tflm_leaky_relu_int8(const leaky_relu_data_t *d, const int8_t *input, int8_t *output) {
    for (uint32_t i = 0; i < d->count; ++i) {
        output[i] = (int8_t)leaky_relu_q(d, input[i], -128, 127);
    }
}

static void tflm_leaky_relu_int16(const leaky_relu_data_t *d, const int16_t *input, int16_t *output) {
    for (uint32_t i = 0; i < d->count; ++i) {
        output[i] = (int16_t)leaky_relu_q(d, input[i], -32768, 32767);
    }
}

// A negative alpha: TFLM quantizes the negative ratio (the mantissa keeps its
// sign, and -2^31 is not renormalized), then multiplies by the negated
// multiplier and negates the product. The negation of -2^31 wraps.
static tflm_status_t leaky_relu_multiplier(tflm_prepare_t *p, double real, int32_t *multiplier, int32_t *shift,
    uint8_t *negative) {
    *negative = real < 0.0;
    if (real >= 0.0) {
        return tflm_prep_multiplier(p, real, 31, multiplier, shift);
    }
    if (!(real > -2147483648.0)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "alpha gives an out-of-range multiplier");
    }
    int e;
    double q = tflm_frexp(real, &e);
    int64_t q_fixed = (int64_t)tflm_round(q * 2147483648.0);
    if (e < -31) {
        e = 0;
        q_fixed = 0;
    }
    if (e > 31) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "alpha gives an out-of-range multiplier");
    }
    *multiplier = (int32_t)(uint32_t)(uint64_t)(-q_fixed);
    *shift = e;
    return TFLM_OK;
}

tflm_status_t tflm_leaky_relu_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, out;
    uint8_t kind;
    tflm_status_t st = act_io(p, &in, &out, &kind);
    if (st) {
        return st;
    }
    float alpha = tflm_prep_opt_f32(p, TFLM_OPT_LEAKY_RELU_ALPHA, 0.0f);
    int32_t m_id = 0, s_id = 0, m_alpha = 0, s_alpha = 0;
    uint8_t negative = 0;
    if (kind != ACT_FLOAT32) {
        if ((st = tflm_prep_positive_scales(p, &in, &out))) {
            return st;
        }
        // Both ratios in double, as TFLM computes them.
        double alpha_ratio = (double)in.scale * (double)alpha / (double)out.scale;
        double identity_ratio = (double)in.scale / (double)out.scale;
        if ((st = leaky_relu_multiplier(p, alpha_ratio, &m_alpha, &s_alpha, &negative))
            || (st = tflm_prep_multiplier(p, identity_ratio, 31, &m_id, &s_id))) {
            return st;
        }
    }
    leaky_relu_data_t *d = tflm_prep_alloc(p, sizeof(leaky_relu_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->kind = kind;
    d->count = in.elements;
    if (kind == ACT_FLOAT32) {
        d->a.alpha = alpha;
        return TFLM_OK;
    }
    d->input_offset = (int16_t)in.zero_point;
    d->output_offset = (int16_t)out.zero_point;
    d->multiplier_identity = m_id;
    d->shift_identity = (int8_t)s_id;
    d->a.multiplier_alpha = m_alpha;
    d->shift_alpha = (int8_t)s_alpha;
    d->alpha_negative = negative;
    return TFLM_OK;
}

tflm_status_t tflm_leaky_relu_eval(tflm_eval_t *e) {
    const leaky_relu_data_t *d = e->data;
    switch (d->kind) {
        case ACT_FLOAT32:
            tflm_leaky_relu_float32(d, e->in[0], e->out[0]);
            break;
        case ACT_INT8:
            tflm_leaky_relu_int8(d, e->in[0], e->out[0]);
            break;
        default:
            tflm_leaky_relu_int16(d, e->in[0], e->out[0]);
            break;
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_LEAKY_RELU
