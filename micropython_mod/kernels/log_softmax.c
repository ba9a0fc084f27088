// LOG_SOFTMAX over the last dimension: float32 (x - max - log(sum(exp(x -
// max))) in float, with the host libm's exp and log, engine/fmath*.c) and
// int8 (TFLM's fixed point: differences scaled into Q5.26, exps summed in
// Q12.19, their log in Q5.26; output scale 16/256, zero point 127),
// bit-exact with TFLM's reference kernels.
#include "kernels/kernels.h"
#include "engine/fixedpoint.h"
#include "engine/fmath.h"
#include "engine/quant.h"

#if TFLM_KERNEL_LOG_SOFTMAX

// Integer bits of the scaled differences, of the sum of exps and of the output.
#define LSM_DIFF_IB (5)
#define LSM_ACCUM_IB (12)
#define LSM_OUT_IB (4)

typedef struct {
    uint8_t int8;            // else float32
    uint8_t reserved[3];
    int32_t outer;           // rows
    int32_t depth;           // last dimension
    int32_t multiplier;      // int8: input scale into Q5.26 (a left shift and a Q31 multiplier)
    int32_t shift;
    int32_t reverse_multiplier; // Q5.26 back to input steps (a right shift)
    int32_t reverse_shift;
    int32_t diff_min;        // differences below it give exp() = 0
} log_softmax_data_t;

// A row whose values are finite or -inf, not NaN, not all -inf, and whose
// max is finite: no NaN can arise (x - max is at most 0, its exp at most 1,
// their sum at least the max's exp(0) = 1, its log finite), so the checks
// for one are left out.
static void log_softmax_row_plain(const float *x, float *y, int32_t depth, float max) {
    float sum = 0.0f;
    for (int32_t c = 0; c < depth; ++c) {
        sum += tflm_expf(x[c] - max);
    }
    const float log_sum = tflm_logf(sum);
    for (int32_t c = 0; c < depth; ++c) {
        y[c] = (x[c] - max) - log_sum;
    }
}

// Any other row: NaN bits as x86 makes them (an infinite max gives inf - inf).
static void log_softmax_row_nan(const float *x, float *y, int32_t depth, float max) {
    float sum = 0.0f;
    for (int32_t c = 0; c < depth; ++c) {
        float diff = tflm_nan_x86(x[c] - max, x[c], max);
        float e = tflm_isnanf(diff) ? diff : tflm_expf(diff);
        sum = tflm_nan_x86(sum + e, sum, e);
    }
    const float log_sum = tflm_logf(sum);
    for (int32_t c = 0; c < depth; ++c) {
        float diff = tflm_nan_x86(x[c] - max, x[c], max);
        y[c] = tflm_nan_x86(diff - log_sum, diff, log_sum);
    }
}

static void log_softmax_float32(const log_softmax_data_t *d, const float *in, float *out) {
    const int32_t outer = d->outer, depth = d->depth;
    for (int32_t i = 0; i < outer; ++i) {
        const float *x = in + i * depth;
        float *y = out + i * depth;
        float max = -3.40282347e+38f;
        bool nan = false, all_minus_inf = true;
        for (int32_t c = 0; c < depth; ++c) {
            max = max < x[c] ? x[c] : max; // std::max: NaN never becomes the max
            uint32_t u;
            memcpy(&u, &x[c], sizeof(u));
            nan |= tflm_isnan_bits(u);
            all_minus_inf &= u == 0xff800000u;
        }
        uint32_t max_bits;
        memcpy(&max_bits, &max, sizeof(max_bits));
        // From -FLT_MAX up, max is finite unless a value is +inf; it is a
        // value of the row unless they are all -inf (then log(0) - -inf).
        if (!nan && !all_minus_inf && max_bits != 0x7f800000u) {
            log_softmax_row_plain(x, y, depth, max);
        } else {
            log_softmax_row_nan(x, y, depth, max);
        }
    }
}

// The kernel data is read into locals: int8 stores could alias it.
static void log_softmax_int8(const log_softmax_data_t *d, const int8_t *in, int8_t *out) {
    const int32_t outer = d->outer, depth = d->depth, diff_min = d->diff_min;
    const tflm_requant_t scale = tflm_requant_init(d->multiplier, d->shift);
    const tflm_requant_t reverse = tflm_requant_init(d->reverse_multiplier, d->reverse_shift);
    for (int32_t i = 0; i < outer; ++i) {
        const int8_t *x = in + i * depth;
        int8_t *y = out + i * depth;
        int32_t max = INT8_MIN;
        for (int32_t c = 0; c < depth; ++c) {
            max = x[c] > max ? x[c] : max;
        }
        int32_t sum = 0; // Q12
        for (int32_t c = 0; c < depth; ++c) {
            int32_t diff = x[c] - max;
            if (diff >= diff_min) {
                int32_t e = tflm_fp_exp_on_negative_values(tflm_requant(&scale, diff), LSM_DIFF_IB);
                sum = tflm_wrap_add(sum, tflm_fp_rescale(e, 0, LSM_ACCUM_IB));
            }
        }
        const int32_t log_sum = tflm_fp_log_x_ge_1(sum, LSM_ACCUM_IB, LSM_DIFF_IB); // Q5
        // The smallest difference whose scaled value minus log_sum still fits.
        int32_t limit = tflm_requant(&reverse, tflm_wrap_add(log_sum, INT32_MIN));
        limit = limit > diff_min - 1 ? limit : diff_min - 1;
        for (int32_t c = 0; c < depth; ++c) {
            int32_t diff = x[c] - max;
            int32_t v = INT8_MIN;
            if (diff > limit) {
                int32_t scaled = tflm_requant(&scale, diff);
                int32_t r = tflm_rounding_divide_by_pot((int32_t)((uint32_t)scaled - (uint32_t)log_sum),
                    31 - LSM_DIFF_IB - LSM_OUT_IB);
                v = tflm_clamp(r + INT8_MAX, INT8_MIN, INT8_MAX);
            }
            y[c] = (int8_t)v;
        }
    }
}

// TFLM's PreprocessLogSoftmaxScalingExp for beta 1: the input scale into
// Q5.26 (capped, and more than 1 or TFLM aborts), the reverse scaling, and
// the largest difference the scaling takes (CalculateInputRadius).
static tflm_status_t log_softmax_int8_params(tflm_prepare_t *p, float scale, log_softmax_data_t *d) {
    double real = (double)scale * (double)(1 << (31 - LSM_DIFF_IB));
    real = real < 2147483647.0 ? real : 2147483647.0;
    if (!(real > 1.0)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input scale is too small");
    }
    tflm_status_t st = tflm_prep_multiplier(p, real, 31, &d->multiplier, &d->shift);
    if (st) {
        return st;
    }
    // 2^(31 - shift) / multiplier lies in (2^-shift, 2^(1 - shift)], below 1 for shift >= 1.
    double reverse = (double)((int64_t)1 << (31 - d->shift)) / (double)d->multiplier;
    if ((st = tflm_prep_multiplier(p, reverse, 0, &d->reverse_multiplier, &d->reverse_shift))) {
        return st;
    }
    d->diff_min = -(int32_t)((((int64_t)1 << LSM_DIFF_IB) - 1) * ((int64_t)1 << (31 - LSM_DIFF_IB)) >> d->shift);
    return TFLM_OK;
}

tflm_status_t tflm_log_softmax_prepare(tflm_prepare_t *p) {
    static const uint8_t types[] = {TFLM_FLOAT32, TFLM_INT8};
    tflm_tinfo_t in, out;
    tflm_status_t st = tflm_prep_unary(p, types, sizeof(types), &in, &out, NULL);
    if (st) {
        return st;
    }
    if (in.ndims < 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input needs at least 1 dimension");
    }
    if (out.ndims != in.ndims || memcmp(out.dims, in.dims, in.ndims * sizeof(in.dims[0])) != 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output shape differs from the input's");
    }
    log_softmax_data_t q;
    memset(&q, 0, sizeof(q));
    q.int8 = in.type == TFLM_INT8;
    q.depth = in.dims[in.ndims - 1];
    q.outer = q.depth > 0 ? (int32_t)(in.elements / (uint32_t)q.depth) : 0;
    if (q.int8) {
        // TFLM's fixed output quantization, compared exactly.
        if (out.n_scales == 0 || out.scale != 16.0f / 256.0f || out.zero_point != 127) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "int8 output needs scale 16/256 and zero point 127");
        }
        if (in.n_scales == 0 || !(in.scale > 0.0f)) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "int8 input needs a positive scale");
        }
        if ((st = log_softmax_int8_params(p, in.scale, &q))) {
            return st;
        }
    }
    log_softmax_data_t *d = tflm_prep_alloc(p, sizeof(log_softmax_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    *d = q;
    return TFLM_OK;
}

tflm_status_t tflm_log_softmax_eval(tflm_eval_t *e) {
    const log_softmax_data_t *d = e->data;
    if (d->int8) {
        log_softmax_int8(d, e->in[0], e->out[0]);
    } else {
        log_softmax_float32(d, e->in[0], e->out[0]);
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_LOG_SOFTMAX
