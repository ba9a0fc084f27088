// Int16 logistic and tanh, bit-exact with TFLM's reference_integer_ops.
// Both read one table of sigmoid(i / 24) in unsigned 0.16 format, using
// tanh(x) = 2 * sigmoid(2x) - 1 and the symmetry of both functions.
#include "kernels/kernels.h"

#if TFLM_KERNEL_LOGISTIC || TFLM_KERNEL_TANH || TFLM_KERNEL_UNIDIRECTIONAL_SEQUENCE_LSTM

#include "kernels/activation_int16.h"
#include "engine/fixedpoint.h"
#include "engine/fmath.h"
#include "engine/quant.h"

tflm_status_t tflm_act_int8_params(tflm_prepare_t *p, float in_scale, int ib,
    int32_t *multiplier, int32_t *shift, int32_t *radius) {
    int e;
    double q = tflm_frexp((double)in_scale * (double)(1 << (31 - ib)), &e);
    // Scales below 2^-28 (or not positive) would overflow the radius.
    if (!(in_scale > 0.0f) || e < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input scale out of range");
    }
    *multiplier = (int32_t)tflm_round(q * 2147483648.0);
    *shift = e > 31 ? 31 : e;
    *radius = (int32_t)((((int64_t)1 << ib) - 1) * ((int64_t)1 << (31 - ib)) >> *shift);
    return TFLM_OK;
}

tflm_status_t tflm_act_int16_params(tflm_prepare_t *p, const tflm_tinfo_t *in, const tflm_tinfo_t *out,
    int max_pot_shift, int32_t *multiplier, int32_t *shift) {
    if (in->zero_point != 0 || out->zero_point != 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "int16 needs zero points 0");
    }
    if (!(in->scale > 0.0f)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input scale out of range");
    }
    int log2_in, log2_out;
    bool pot = tflm_fp_checked_log2(in->scale, &log2_in);
    *shift = 12 + log2_in;
    if (pot && *shift >= 0 && *shift <= max_pot_shift) {
        *multiplier = 0;
    } else {
        // The table's input scale is 1/(3 * 4096).
        double m = (double)in->scale * 4096.0 * 3.0;
        *shift = 0;
        while (m <= 32767.0 / 2.0 && *shift <= 30) {
            ++*shift;
            m *= 2.0;
        }
        if (!(m < 2147483648.0)) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "input scale out of range");
        }
        *multiplier = (int32_t)m;
    }
    if (!tflm_fp_checked_log2(out->scale, &log2_out) || log2_out != -15) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "int16 output needs scale 2^-15");
    }
    return TFLM_OK;
}

// The exact values of TFLM's table (not all are round-to-nearest).
static const uint16_t sigmoid_table[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498,
    40149, 40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255,
    46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865,
    52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174,
    56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544, 58800, 59048, 59288,
    59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279, 61441,
    61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886,
    62990, 63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835,
    63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450,
    64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845,
    64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097,
    65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425,
    65429, 65433, 65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465,
    65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508,
    65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516, 65517, 65517, 65518,
    65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524, 65525,
    65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529,
    65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531,
    65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533,
    65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65535,
};

// The input rescaled to steps of 1/(3 * 4096): table entry i is then 512
// steps for logistic, 256 for tanh (whose sigmoid argument is doubled).
static inline int32_t rescale_input(int16_t x, int32_t multiplier, int32_t shift, int32_t round) {
    // Wrapping product as on TFLM's targets (only absurd scales overflow).
    uint32_t prod = (uint32_t)(int32_t)x * (uint32_t)multiplier + (uint32_t)round;
    return (int32_t)prod >> shift;
}

// Power-of-two input scales come with multiplier 0: the 3 of the table's
// 1/(3 * 4096) scale is applied here instead.
static void fix_multiplier(int32_t *multiplier, int32_t *shift, int32_t *round) {
    // TFLM's shifts are 0..31; others would be undefined there.
    *shift = *shift < 0 ? 0 : (*shift > 31 ? 31 : *shift);
    if (*multiplier == 0) {
        *multiplier = (int32_t)(3u << *shift);
        *shift = 0;
    }
    *round = *shift > 0 ? (int32_t)(1u << (*shift - 1)) : 0;
}

void tflm_logistic_int16_apply(int32_t input_multiplier, int32_t input_left_shift, uint32_t n, const int16_t *in, int16_t *out) {
    int32_t round;
    fix_multiplier(&input_multiplier, &input_left_shift, &round);
    for (uint32_t i = 0; i < n; i++) {
        int32_t x = rescale_input(in[i], input_multiplier, input_left_shift, round);
        uint32_t ax = x < 0 ? 0u - (uint32_t)x : (uint32_t)x;
        uint32_t idx = ax >> 9;
        uint32_t r;
        if (idx >= 255) {
            r = 0x7fffu << 10;
        } else {
            uint32_t a = sigmoid_table[idx];
            uint32_t b = sigmoid_table[idx + 1];
            r = (a << 9) + (ax & 0x1ff) * (b - a);
        }
        // sigmoid(-x) = 1 - sigmoid(x); rounds to Q0.15.
        r = x >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1;
        out[i] = (int16_t)(r >> 10);
    }
}

void tflm_tanh_int16_apply(int32_t input_multiplier, int32_t input_left_shift, uint32_t n, const int16_t *in, int16_t *out) {
    int32_t round;
    fix_multiplier(&input_multiplier, &input_left_shift, &round);
    for (uint32_t i = 0; i < n; i++) {
        int32_t x = rescale_input(in[i], input_multiplier, input_left_shift, round);
        uint32_t ax = x < 0 ? 0u - (uint32_t)x : (uint32_t)x;
        uint32_t idx = ax >> 8;
        int32_t r;
        if (idx >= 255) {
            r = 0xffff << 8;
        } else {
            uint32_t a = sigmoid_table[idx];
            uint32_t b = sigmoid_table[idx + 1];
            r = (int32_t)((a << 8) + (ax & 0xff) * (b - a));
        }
        // 2 * sigmoid - 1 in Q0.15, rounded; odd symmetry for negatives.
        r = x >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
        out[i] = (int16_t)(r >> 8);
    }
}

#endif

#if TFLM_KERNEL_LOGISTIC || TFLM_KERNEL_TANH

// Input types, in the order of TFLM_ACT_*.
static const uint8_t act_types[] = { TFLM_FLOAT32, TFLM_INT8, TFLM_INT16 };

tflm_status_t tflm_act_prepare(tflm_prepare_t *p, bool tanh) {
    tflm_tinfo_t in, out;
    uint8_t kind = 0;
    tflm_status_t st = tflm_prep_unary(p, act_types, sizeof(act_types), &in, &out, &kind);
    if (st) {
        return st;
    }
    int32_t multiplier = 0, shift = 0, radius = 0;
    if (kind == TFLM_ACT_INT8) {
        if (!tanh && out.zero_point != -128) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "int8 output needs zero point -128");
        }
        st = tflm_act_int8_params(p, in.scale, TFLM_ACT_INPUT_IB, &multiplier, &shift, &radius);
    } else if (kind == TFLM_ACT_INT16) {
        st = tflm_act_int16_params(p, &in, &out, tanh ? 1 : 0, &multiplier, &shift);
    }
    if (st) {
        return st;
    }
    tflm_act_data_t *d = tflm_prep_alloc(p, sizeof(tflm_act_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->kind = kind;
    d->n = in.elements;
    d->zero_point = in.zero_point;
    d->radius = radius;
    d->multiplier = multiplier;
    d->shift = shift;
    return TFLM_OK;
}

#endif
