// ADD_N: the element-wise sum of two or more inputs of one shape, float32 or
// int8, bit-exact with TFLM's reference.
//
// float32 adds the inputs in order onto 0.0f (so -0 inputs sum to +0). int8
// rescales as TFLM's ADD does with a left shift of 20 and every input of one
// quantization (required): each input's multiplier is exactly 1/2, so each
// input adds (q - zero point) * 2^19 with no rounding. TFLM's sum also
// starts from one more such term, of a zero value (-zero point * 2^19),
// whatever the inputs: reproduced. The total wraps as the reference's int32
// does past 15 or so inputs, then is rescaled to the output.
#include "kernels/kernels.h"
#include "engine/quant.h"

#if TFLM_KERNEL_ADD_N

typedef struct {
    uint8_t is_int8;
    uint8_t reserved[3];
    uint32_t elements;
    uint32_t inputs;
    int32_t zero_point;
    int32_t out_zero_point;
    int32_t out_multiplier;
    int32_t out_shift;
} add_n_data_t;

#define ADD_N_LEFT_SHIFT (20)

static tflm_status_t add_n_int8_params(tflm_prepare_t *p, const tflm_tinfo_t *first, const tflm_tinfo_t *out,
    add_n_data_t *d) {
    if (first->n_scales == 0 || out->n_scales == 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "int8 ADD_N needs quantized inputs and output");
    }
    // The input multiplier (scale / twice the scale) must be 1/2 exactly:
    // checked as TFLM computes it, which also refuses a zero scale.
    int32_t in_multiplier, in_shift;
    const double twice = 2.0 * (double)first->scale;
    tflm_status_t st;
    if ((st = tflm_prep_multiplier_below_one(p, (double)first->scale / twice, &in_multiplier, &in_shift))
        || (st = tflm_prep_multiplier_below_one(p, twice / ((double)(1 << ADD_N_LEFT_SHIFT) * (double)out->scale),
            &d->out_multiplier, &d->out_shift))) {
        return st;
    }
    if (in_multiplier != (1 << 30) || in_shift != 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "quantization scales give an out-of-range multiplier");
    }
    d->zero_point = first->zero_point;
    d->out_zero_point = out->zero_point;
    return TFLM_OK;
}

tflm_status_t tflm_add_n_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t first, in, out;
    tflm_status_t st;
    if ((st = tflm_prep_expect_io(p, 2, TFLM_MAX_NODE_IO - 1, 1)) || (st = tflm_prep_input(p, 0, &first))
        || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (first.index < 0 || out.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "an input or the output is missing");
    }
    if (out.type != TFLM_FLOAT32 && out.type != TFLM_INT8) {
        return tflm_prep_unsupported_type(p, "output", out.type);
    }
    if (first.type != out.type || first.elements != out.elements) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the output's type or size differs from the inputs'");
    }
    const uint32_t n = tflm_prep_num_inputs(p);
    for (uint32_t i = 1; i < n; ++i) {
        if ((st = tflm_prep_input(p, i, &in))) {
            return st;
        }
        bool same = in.index >= 0 && in.type == first.type && in.ndims == first.ndims
            && memcmp(in.dims, first.dims, first.ndims * sizeof(int32_t)) == 0;
        if (same && first.type == TFLM_INT8) {
            same = in.n_scales != 0 && in.scale == first.scale && in.zero_point == first.zero_point;
        }
        if (!same) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "input %u differs from input 0 in shape, type or quantization",
                (unsigned)i);
        }
    }
    add_n_data_t *d = tflm_prep_alloc(p, (uint32_t)sizeof(add_n_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->is_int8 = out.type == TFLM_INT8;
    d->elements = out.elements;
    d->inputs = n;
    return d->is_int8 ? add_n_int8_params(p, &first, &out, d) : TFLM_OK;
}

static void add_n_float32(const add_n_data_t *d, void *const *in, float *out) {
    const uint32_t n = d->inputs, elements = d->elements;
    for (uint32_t i = 0; i < elements; ++i) {
        float sum = 0.0f;
        for (uint32_t j = 0; j < n; ++j) {
            sum += ((const float *)in[j])[i];
        }
        out[i] = sum;
    }
}

static void add_n_int8(const add_n_data_t *d, void *const *in, int8_t *out) {
    const uint32_t n = d->inputs, elements = d->elements;
    const int32_t zp = d->zero_point, out_zp = d->out_zero_point;
    const tflm_requant_t rq = tflm_requant_init(d->out_multiplier, d->out_shift);
    for (uint32_t i = 0; i < elements; ++i) {
        // The extra zero-value term, then each input, all times 2^19.
        int32_t sum = -zp;
        for (uint32_t j = 0; j < n; ++j) {
            sum += ((const int8_t *)in[j])[i] - zp;
        }
        const int32_t scaled = (int32_t)((uint32_t)sum << (ADD_N_LEFT_SHIFT - 1));
        out[i] = (int8_t)tflm_clamp(tflm_wrap_add(tflm_requant(&rq, scaled), out_zp), INT8_MIN, INT8_MAX);
    }
}

tflm_status_t tflm_add_n_eval(tflm_eval_t *e) {
    const add_n_data_t *d = e->data;
    if (d->is_int8) {
        add_n_int8(d, e->in, e->out[0]);
    } else {
        add_n_float32(d, e->in, e->out[0]);
    }
    return TFLM_OK;
}

#endif
