// L2_NORMALIZATION over the last dimension (at most 4 dimensions, no fused
// activation): float32 (x / max(sqrt(sum x^2), 1e-6) in float) and int8
// (TFLM's fixed-point inverse square root of the sum of squared
// differences from the input zero point; the output is read as scale
// 1/128, zero point 0, whatever the model says, as TFLM does), bit-exact
// with TFLM's reference kernels.
#include "kernels/kernels.h"
#include "engine/fixedpoint.h"
#include "engine/fmath.h"
#include "engine/quant.h"
#include "engine/schema.h"

#if TFLM_KERNEL_L2_NORMALIZATION

// The int8 output has 7 fractional bits.
#define L2N_OUT_SHIFT (7)

typedef struct {
    uint8_t int8;       // else float32
    uint8_t reserved[3];
    int32_t outer;      // rows
    int32_t depth;      // last dimension
    int32_t zero_point; // int8 input
} l2_norm_data_t;

static void l2_norm_float32(const l2_norm_data_t *d, const float *in, float *out) {
    const int32_t outer = d->outer, depth = d->depth;
    for (int32_t i = 0; i < outer; ++i) {
        const float *x = in + i * depth;
        float *y = out + i * depth;
        float sum = 0.0f;
        for (int32_t c = 0; c < depth; ++c) {
            float sq = tflm_nan_x86(x[c] * x[c], x[c], x[c]);
            sum = tflm_nan_x86(sum + sq, sum, sq);
        }
        float norm = tflm_sqrtf(sum);
        norm = norm < 1e-6f ? 1e-6f : norm; // std::max: a NaN norm stays
        for (int32_t c = 0; c < depth; ++c) {
            y[c] = tflm_nan_x86(x[c] / norm, x[c], norm);
        }
    }
}

static void l2_norm_int8(const l2_norm_data_t *d, const int8_t *in, int8_t *out) {
    const int32_t outer = d->outer, depth = d->depth, zp = d->zero_point;
    for (int32_t i = 0; i < outer; ++i) {
        const int8_t *x = in + i * depth;
        int8_t *y = out + i * depth;
        uint32_t acc = 0; // wraps past 33,025 elements, as TFLM's int32 sum does
        for (int32_t c = 0; c < depth; ++c) {
            int32_t v = x[c] - zp;
            acc += (uint32_t)(v * v);
        }
        int32_t multiplier, shift;
        tflm_fp_inv_sqrt((int32_t)acc, &multiplier, &shift);
        const tflm_requant_t rq = tflm_requant_init(multiplier, shift + L2N_OUT_SHIFT);
        for (int32_t c = 0; c < depth; ++c) {
            y[c] = (int8_t)tflm_clamp(tflm_requant(&rq, x[c] - zp), INT8_MIN, INT8_MAX);
        }
    }
}

tflm_status_t tflm_l2_normalization_prepare(tflm_prepare_t *p) {
    static const uint8_t types[] = {TFLM_FLOAT32, TFLM_INT8};
    tflm_tinfo_t in, out;
    tflm_status_t st = tflm_prep_unary(p, types, sizeof(types), &in, &out, NULL);
    if (st) {
        return st;
    }
    if (in.ndims < 1 || in.ndims > 4) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input needs 1 to 4 dimensions, has %u", (unsigned)in.ndims);
    }
    if (out.elements != in.elements || out.ndims < 1 || out.dims[out.ndims - 1] != in.dims[in.ndims - 1]) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output shape does not match the input's");
    }
    if (tflm_prep_opt_u8(p, TFLM_OPT_L2NORM_FUSED_ACTIVATION_FUNCTION, TFLM_ACT_NONE) != TFLM_ACT_NONE) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "fused activation is not supported");
    }
    l2_norm_data_t *d = tflm_prep_alloc(p, sizeof(l2_norm_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    memset(d, 0, sizeof(*d));
    d->int8 = in.type == TFLM_INT8;
    d->depth = in.dims[in.ndims - 1];
    d->outer = d->depth > 0 ? (int32_t)(in.elements / (uint32_t)d->depth) : 0;
    d->zero_point = d->int8 ? in.zero_point : 0;
    return TFLM_OK;
}

tflm_status_t tflm_l2_normalization_eval(tflm_eval_t *e) {
    const l2_norm_data_t *d = e->data;
    if (d->int8) {
        l2_norm_int8(d, e->in[0], e->out[0]);
    } else {
        l2_norm_float32(d, e->in[0], e->out[0]);
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_L2_NORMALIZATION
