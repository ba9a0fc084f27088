// SOFTMAX: float32, int8 -> int8, int8 -> int16 (gemmlowp fixed point) and
// int16 -> int16 (lookup tables built in prepare), bit-exact with TFLM's
// reference kernels.
#include "kernels/kernels.h"
#include "engine/fmath.h"
#include "engine/quant.h"
#include "kernels/softmax_s8.h"

#if TFLM_KERNEL_SOFTMAX

// SoftmaxOptions fields

enum { SM_FLOAT32, SM_INT8, SM_INT8_INT16, SM_INT16 };

// Whether the kernel was built for tensors of `type`: prepare() gives only
// the kinds of those types, the others' code is left out.
static inline bool sm_has(unsigned type) {
    return tflm_type_enabled(TFLM_TYPES_SOFTMAX, type);
}

// Integer bits of the scaled input differences and of the sum of exps (int8;
// kernels/softmax_s8.h has them folded in).
#define SM_DIFF_IB (5)
#define SM_ACCUM_IB (12)
// Entries of each int16 table: 512 steps and the end point.
#define SM_LUT_SIZE (513)

typedef struct {
    uint8_t kind;
    int32_t outer;      // rows
    int32_t depth;      // last dimension
    int32_t multiplier; // input scale * beta, fixed point
    int32_t shift;
    int32_t diff_min;   // int8: differences below it give exp() = 0
    float beta;
    // int16: int16 exp_lut[513], then int16 one_over_one_plus_x_lut[513]
} softmax_data_t;

static const int16_t *sm_luts(const softmax_data_t *d) {
    return (const int16_t *)(d + 1);
}

static void tflm_softmax_float32(const softmax_data_t *d, const float *in, float *out) {
    const int32_t outer = d->outer, depth = d->depth;
    const float beta = d->beta;
    for (int32_t i = 0; i < outer; ++i) {
        const float *x = in + i * depth;
        float *y = out + i * depth;
        float max = -3.40282347e+38f;
        for (int32_t c = 0; c < depth; ++c) {
            max = max < x[c] ? x[c] : max;
        }
        float sum = 0.0f;
        for (int32_t c = 0; c < depth; ++c) {
            float e = tflm_expf((x[c] - max) * beta);
            y[c] = e;
            sum += e;
        }
        for (int32_t c = 0; c < depth; ++c) {
            y[c] = y[c] / sum;
        }
    }
}

// exp(beta * scale * diff) in Q0 for diff >= diff_min (diff <= 0). One copy
// for both passes (a call costs a few cycles of the 60 to 100 it takes).
__attribute__((noinline)) static int32_t sm_exp_int8(int32_t diff, int32_t multiplier, int32_t shift) {
    // The multiplier's shift is 0..31 here and |diff| << shift stays under
    // 2^31 (diff_min): a shift, then a Q31 multiply that cannot saturate.
    return tflm_sm_exp_q5(tflm_sm_mul((int32_t)((uint32_t)diff << shift), multiplier));
}

// Exps of a row's first values kept on the stack between its two passes
// (the classes of a model's last layer fit; the rest are computed again).
#define SM_KEPT (32)

// int8 input, int8 (out_bits 8) or int16 (out_bits 16) output. The kernel
// data is read into locals: int8 stores could alias it.
static void tflm_softmax_int8(const softmax_data_t *d, const int8_t *in, void *out, int out_bits) {
    const int32_t outer = d->outer, depth = d->depth, diff_min = d->diff_min;
    const int32_t multiplier = d->multiplier, shift = d->shift;
    const int32_t out_min = out_bits == 8 ? -128 : -32768;
    const int32_t out_max = out_bits == 8 ? 127 : 32767;
    int32_t kept[SM_KEPT];
    for (int32_t i = 0; i < outer; ++i) {
        const int8_t *x = in + i * depth;
        int32_t max = -128;
        for (int32_t c = 0; c < depth; ++c) {
            max = x[c] > max ? x[c] : max;
        }
        // A difference below diff_min counts as an exp of 0: it adds 0 to
        // the sum and gives out_min, as the reference's skipped value does.
        uint32_t sum = 0;
        for (int32_t c = 0; c < depth; ++c) {
            int32_t diff = x[c] - max;
            int32_t e = 0;
            if (diff == 0) {
                e = INT32_MAX;
            } else if (diff >= diff_min) {
                e = sm_exp_int8(diff, multiplier, shift);
            }
            if (c < SM_KEPT) {
                kept[c] = e;
            }
            // e from Q0 to Q12, rounded (e >= 0: the add cannot carry out of
            // 32 bits); the sum wraps as the reference's does.
            sum += ((uint32_t)e + (1u << (SM_ACCUM_IB - 1))) >> SM_ACCUM_IB;
        }
        int bits_over_unit;
        int32_t scale = tflm_sm_reciprocal_q12((int32_t)sum, &bits_over_unit);
        int exponent = bits_over_unit + 31 - out_bits;
        // Only a sum that wrapped (depth over 4095) leaves 0..31; TFLM aborts there.
        exponent = exponent < 0 ? 0 : (exponent > 31 ? 31 : exponent);
        for (int32_t c = 0; c < depth; ++c) {
            int32_t e;
            if (c < SM_KEPT) {
                e = kept[c];
            } else {
                int32_t diff = x[c] - max;
                e = diff == 0 ? INT32_MAX : (diff >= diff_min ? sm_exp_int8(diff, multiplier, shift) : 0);
            }
            int32_t unsat = tflm_rounding_divide_by_pot(tflm_sm_mul(scale, e), exponent);
            int32_t v = tflm_clamp(unsat + out_min, out_min, out_max);
            if (out_bits == 8) {
                ((int8_t *)out)[i * depth + c] = (int8_t)v;
            } else {
                ((int16_t *)out)[i * depth + c] = (int16_t)v;
            }
        }
    }
}

// TFLM's interpolating lookup in a 513-entry table over the int16 range.
static int16_t sm_lut_lookup(int16_t value, const int16_t *lut) {
    uint32_t index = (uint32_t)(256 + (value >> 7));
    int32_t offset = value & 0x7f;
    int16_t slope = (int16_t)(lut[index + 1] - lut[index]);
    int32_t delta = (slope * offset + 64) >> 7;
    return (int16_t)(lut[index] + delta);
}

static void tflm_softmax_int16(const softmax_data_t *d, const int16_t *in, int16_t *out) {
    const int32_t outer = d->outer, depth = d->depth, multiplier = d->multiplier, shift = d->shift;
    const int16_t *exp_lut = sm_luts(d);
    const int16_t *recip_lut = exp_lut + SM_LUT_SIZE;
    for (int32_t i = 0; i < outer; ++i) {
        const int16_t *x = in + i * depth;
        int16_t *y = out + i * depth;
        int32_t max = -32768;
        for (int32_t c = 0; c < depth; ++c) {
            max = x[c] > max ? x[c] : max;
        }
        // exp(x - max) in Q0.15, kept in the output row until rescaled.
        int32_t sum = 0;
        for (int32_t c = 0; c < depth; ++c) {
            int32_t scaled = tflm_mul_by_quantized_mul(x[c] - max, multiplier, shift);
            int32_t centered = tflm_clamp(tflm_wrap_add(scaled, 32767), -32768, 32767);
            y[c] = sm_lut_lookup((int16_t)centered, exp_lut);
            sum = tflm_wrap_add(sum, y[c]);
        }
        // 1 / sum from the 1 / (1 + x) table, with sum normalized into [1, 2).
        int headroom_plus_one = sum ? __builtin_clz((uint32_t)sum) : 32;
        // Keeps the shifts defined for sums TFLM itself cannot handle.
        headroom_plus_one = headroom_plus_one < 1 ? 1 : (headroom_plus_one > 30 ? 30 : headroom_plus_one);
        int32_t shifted_sum = (int32_t)(((int64_t)((uint64_t)(int64_t)sum << (headroom_plus_one - 1)) + (1 << 13)) >> 14);
        int32_t centered_sum = tflm_clamp(shifted_sum - ((1 << 15) + (1 << 16)), -32768, 32767);
        int32_t reciprocal = sm_lut_lookup((int16_t)centered_sum, recip_lut);
        int right_shift = 31 - headroom_plus_one;
        int64_t round = (int64_t)1 << (right_shift - 1);
        for (int32_t c = 0; c < depth; ++c) {
            int32_t r = (int32_t)(((int64_t)y[c] * reciprocal + round) >> right_shift);
            y[c] = (int16_t)tflm_clamp(r, 0, 32767);
        }
    }
}

// TFLM's LUTPopulate for int16 tables, in float as TFLM computes it.
static float sm_exp(float x) {
    return tflm_expf(x);
}

static float sm_one_over_one_plus(float x) {
    return 1.0f / (1.0f + x);
}

static void sm_fill_lut(float input_scale, int32_t input_zero_point, float output_scale, float (*f)(float), int16_t *lut) {
    const float input_min = input_scale * (float)(-32768 - input_zero_point);
    const float input_max = input_scale * (float)(32767 - input_zero_point);
    const float output_min = output_scale * -32768.0f;
    const float output_max = output_scale * 32767.0f;
    const float step = (input_max - input_min) / 512.0f;
    const float half_step = step / 2.0f;
    const float inv = 65536.0f / (output_max - output_min);
    for (int i = 0; i < 512; ++i) {
        float val = f(input_min + (float)i * step);
        float val_mid = f(input_min + (float)i * step + half_step);
        float val_next = f(input_min + (float)(i + 1) * step);
        float sample = tflm_roundf(val * inv);
        float mid_interp = tflm_roundf((val_next * inv + tflm_roundf(val * inv)) / 2.0f);
        float mid = tflm_roundf(val_mid * inv);
        // Halves the interpolation error at the middle of each step.
        float bias = tflm_roundf((mid_interp - mid) / 2.0f);
        lut[i] = (int16_t)tflm_clampf(sample - bias, -32768.0f, 32767.0f);
    }
    lut[512] = (int16_t)tflm_clampf(tflm_roundf(f(input_max) * inv), -32768.0f, 32767.0f);
}

static bool sm_near(float a, float b, float eps) {
    float delta = a > b ? a - b : b - a;
    return !(delta > eps);
}

tflm_status_t tflm_softmax_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, out;
    tflm_status_t st = tflm_prep_io_1_1(p, &in, &out);
    if (st) {
        return st;
    }
    uint8_t kind;
    if (in.type == TFLM_FLOAT32 && out.type == TFLM_FLOAT32 && sm_has(TFLM_FLOAT32)) {
        kind = SM_FLOAT32;
    } else if (in.type == TFLM_INT8 && out.type == TFLM_INT8 && sm_has(TFLM_INT8)) {
        kind = SM_INT8;
    } else if (in.type == TFLM_INT8 && out.type == TFLM_INT16 && sm_has(TFLM_INT8) && sm_has(TFLM_INT16)) {
        kind = SM_INT8_INT16;
    } else if (in.type == TFLM_INT16 && out.type == TFLM_INT16 && sm_has(TFLM_INT16)) {
        kind = SM_INT16;
    } else {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "%s input with %s output is not supported",
            tflm_type_name(in.type), tflm_type_name(out.type));
    }
    if (in.ndims < 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input needs at least 1 dimension");
    }
    if ((st = tflm_prep_same_elements(p, &in, &out))) {
        return st;
    }
    // Output quantization TFLM requires.
    switch (kind) {
        case SM_INT8:
            if (out.zero_point != -128 || out.scale != 1.0f / 256.0f) {
                return tflm_error(p->err, TFLM_ERR_VALUE, "int8 output needs scale 1/256 and zero point -128");
            }
            break;
        case SM_INT8_INT16:
            if (out.zero_point != -32768 || !sm_near(out.scale, 1.0f / 65536.0f, 0.001f / 65536.0f)) {
                return tflm_error(p->err, TFLM_ERR_VALUE, "int16 output needs scale 1/65536 and zero point -32768");
            }
            break;
        case SM_INT16:
            if (in.zero_point != 0 || out.zero_point != 0 || !sm_near(out.scale, 1.0f / 32768.0f, 0.001f / 32768.0f)) {
                return tflm_error(p->err, TFLM_ERR_VALUE, "int16 needs zero points 0 and output scale 1/32768");
            }
            break;
        default:
            break;
    }
    float beta = tflm_prep_opt_f32(p, TFLM_OPT_SOFTMAX_BETA, 0.0f);
    int32_t multiplier = 0, shift = 0, diff_min = 0;
    if (kind == SM_INT8 || kind == SM_INT8_INT16) {
        // Differences scaled into Q5.26, the multiplier capped as TFLM does.
        double real = (double)beta * (double)in.scale * (double)(1 << (31 - SM_DIFF_IB));
        real = real < 2147483647.0 ? real : 2147483647.0;
        if (!(real > 1.0)) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "beta times input scale is too small");
        }
        if ((st = tflm_prep_multiplier(p, real, 31, &multiplier, &shift))) {
            return st;
        }
        // Largest difference magnitude whose scaled value fits in Q5.26.
        diff_min = -(int32_t)((((int64_t)1 << SM_DIFF_IB) - 1) * ((int64_t)1 << (31 - SM_DIFF_IB)) >> shift);
    } else if (kind == SM_INT16) {
        // Differences scaled so that [-65535, 0] is [-10, 0].
        double real = (double)in.scale * (double)beta / (10.0 / 65535.0);
        if ((st = tflm_prep_multiplier(p, real, 31, &multiplier, &shift))) {
            return st;
        }
    }
    int32_t depth = in.dims[in.ndims - 1];
    uint32_t bytes = (uint32_t)sizeof(softmax_data_t) + (kind == SM_INT16 ? 2u * SM_LUT_SIZE * sizeof(int16_t) : 0u);
    softmax_data_t *d = tflm_prep_alloc(p, bytes);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->kind = kind;
    d->depth = depth;
    d->outer = depth > 0 ? (int32_t)(in.elements / (uint32_t)depth) : 0;
    d->multiplier = multiplier;
    d->shift = shift;
    d->diff_min = diff_min;
    d->beta = beta;
    if (kind == SM_INT16 && sm_has(TFLM_INT16)) {
        int16_t *luts = (int16_t *)(d + 1);
        const float range = 65535.0f;
        sm_fill_lut(10.0f / range, 32767, 2.0f / range, sm_exp, luts);
        sm_fill_lut(1.0f / range, -32768, 2.0f / range, sm_one_over_one_plus, luts + SM_LUT_SIZE);
    }
    return TFLM_OK;
}

tflm_status_t tflm_softmax_eval(tflm_eval_t *e) {
    const softmax_data_t *d = e->data;
    switch (d->kind) {
        case SM_FLOAT32:
            if (sm_has(TFLM_FLOAT32)) {
                tflm_softmax_float32(d, e->in[0], e->out[0]);
            }
            break;
        case SM_INT8:
            if (sm_has(TFLM_INT8)) {
                tflm_softmax_int8(d, e->in[0], e->out[0], 8);
            }
            break;
        case SM_INT8_INT16:
            if (sm_has(TFLM_INT8) && sm_has(TFLM_INT16)) {
                tflm_softmax_int8(d, e->in[0], e->out[0], 16);
            }
            break;
        default:
            if (sm_has(TFLM_INT16)) {
                tflm_softmax_int16(d, e->in[0], e->out[0]);
            }
            break;
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_SOFTMAX
