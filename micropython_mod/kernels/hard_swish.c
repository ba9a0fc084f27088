// HARD_SWISH: float32 and int8, bit-exact with TFLM's reference, including
// its 16-bit fixed-point arithmetic for int8.
#include "kernels/kernels.h"
#include "engine/quant.h"

#if TFLM_KERNEL_HARD_SWISH

enum { HS_FLOAT32, HS_INT8 };

typedef struct {
    uint8_t kind;
    int8_t reluish_exponent;
    int8_t output_exponent;   // <= 0
    uint8_t reserved;
    int16_t reluish_multiplier;
    int16_t output_multiplier;
    int16_t input_zero_point;
    int16_t output_zero_point;
    uint32_t count;
} hard_swish_data_t;

static void tflm_hard_swish_float32(const hard_swish_data_t *d, const float *input, float *output) {
    for (uint32_t i = 0; i < d->count; ++i) {
        float x = input[i];
        // std::min(6, std::max(0, x + 3)) with their comparisons (NaN -> 0).
        float r = x + 3.0f;
        r = 0.0f < r ? r : 0.0f;
        r = r < 6.0f ? r : 6.0f;
        output[i] = x * r / 6.0f;
    }
}

// 16-bit fixed-point helpers with gemmlowp's rounding.
static inline int16_t hs_srdhm16(int16_t a, int16_t b) {
    if (a == b && a == INT16_MIN) {
        return INT16_MAX;
    }
    int32_t ab = (int32_t)a * (int32_t)b;
    int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
    return (int16_t)((ab + nudge) / (1 << 15));
}

// Rounds toward zero instead (the reference's SaturatingDoublingHighMul).
static inline int16_t hs_sdhm16(int16_t a, int16_t b) {
    if (a == b && a == INT16_MIN) {
        return INT16_MAX;
    }
    return (int16_t)(((int32_t)a * (int32_t)b) / (1 << 15));
}

// Rounding right shift done in int16 arithmetic, as the reference's template
// does for int16 (the mask is truncated to 16 bits for large exponents).
static inline int16_t hs_rdbpot16(int16_t x, int32_t exponent) {
    int16_t mask = (int16_t)(((int64_t)1 << exponent) - 1);
    int16_t remainder = (int16_t)(x & mask);
    int16_t threshold = (int16_t)((mask >> 1) + (x < 0 ? 1 : 0));
    return (int16_t)((x >> exponent) + (remainder > threshold ? 1 : 0));
}

static inline int16_t hs_sat_left_shift16(int16_t x, int32_t amount) {
    int64_t r = (int64_t)x * ((int64_t)1 << amount);
    return (int16_t)(r > INT16_MAX ? INT16_MAX : (r < INT16_MIN ? INT16_MIN : r));
}

static void tflm_hard_swish_int8(const hard_swish_data_t *d, const int8_t *input, int8_t *output) {
    const int32_t rexp = d->reluish_exponent;
    for (uint32_t i = 0; i < d->count; ++i) {
        int16_t x = (int16_t)(input[i] - d->input_zero_point);
        int16_t hires = (int16_t)(x * (1 << 7));
        int16_t preshift_out = hs_srdhm16(hires, d->output_multiplier);
        // The input rescaled so that 3.0 maps to 32768, saturating: the last
        // bit of a left shift is applied after the multiply so that only it
        // can saturate.
        int16_t reluish = hires;
        if (rexp > 0) {
            reluish = hs_sat_left_shift16(reluish, rexp - 1);
        }
        reluish = hs_srdhm16(reluish, d->reluish_multiplier);
        if (rexp > 0) {
            reluish = hs_sat_left_shift16(reluish, 1);
        } else if (rexp < 0) {
            reluish = hs_rdbpot16(reluish, -rexp);
        }
        // [-1, 1] -> [0, 1]
        reluish = (int16_t)((reluish + (1 << 15)) >> 1);
        int16_t pre = hs_sdhm16(reluish, preshift_out);
        int16_t out = hs_rdbpot16(pre, -d->output_exponent);
        out = (int16_t)(out + d->output_zero_point);
        output[i] = (int8_t)(out > 127 ? 127 : (out < -128 ? -128 : out));
    }
}

// TFLM's rounding of a Q31 multiplier to Q15.
static int16_t hs_q15(int32_t m) {
    if (m >= INT32_MAX - (1 << 15)) {
        return INT16_MAX;
    }
    return (int16_t)((m + (1 << 15)) >> 16);
}

// Input types, in the order of the kinds above.
static const uint8_t hs_types[] = { TFLM_FLOAT32, TFLM_INT8 };

tflm_status_t tflm_hard_swish_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, out;
    uint8_t kind = 0;
    tflm_status_t st = tflm_prep_unary(p, hs_types, sizeof(hs_types), &in, &out, &kind);
    if (st) {
        return st;
    }
    int32_t out_m = 0, out_e = 0, rel_m = 0, rel_e = 0;
    if (kind == HS_INT8) {
        if ((st = tflm_prep_positive_scales(p, &in, &out))) {
            return st;
        }
        // Float arithmetic first, as TFLM computes these ratios.
        float hires_scale = (1.0f / 128.0f) * in.scale;
        float reluish_scale = 3.0f / 32768.0f;
        if ((st = tflm_prep_multiplier(p, (double)(hires_scale / out.scale), 31, &out_m, &out_e))
            || (st = tflm_prep_multiplier(p, (double)(hires_scale / reluish_scale), 31, &rel_m, &rel_e))) {
            return st;
        }
        if (out_e > 0) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "output scale too small for the input scale");
        }
    }
    hard_swish_data_t *d = tflm_prep_alloc(p, sizeof(hard_swish_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->kind = kind;
    d->count = in.elements;
    if (kind == HS_INT8) {
        d->input_zero_point = (int16_t)in.zero_point;
        d->output_zero_point = (int16_t)out.zero_point;
        d->output_multiplier = hs_q15(out_m);
        d->output_exponent = (int8_t)out_e;
        d->reluish_multiplier = hs_q15(rel_m);
        d->reluish_exponent = (int8_t)rel_e;
    }
    return TFLM_OK;
}

tflm_status_t tflm_hard_swish_eval(tflm_eval_t *e) {
    const hard_swish_data_t *d = e->data;
    if (d->kind == HS_FLOAT32) {
        tflm_hard_swish_float32(d, e->in[0], e->out[0]);
    } else {
        tflm_hard_swish_int8(d, e->in[0], e->out[0]);
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_HARD_SWISH
