// QUANTIZE (float32 -> integer) and requantization between integer types,
// bit-exact with TFLM's reference AffineQuantize and Requantize.
#include "kernels/kernels.h"
#include "engine/quant.h"

#if TFLM_KERNEL_QUANTIZE

typedef struct {
    uint8_t in_type;
    uint8_t out_type;
    uint16_t reserved;
    uint32_t count;
    float scale;          // output scale (float input)
    int32_t in_zero_point;
    int32_t out_zero_point;
    int32_t multiplier;   // requantization (integer input)
    int32_t shift;
    int32_t qmin;
    int32_t qmax;
} quantize_data_t;

static int32_t load_int(const void *p, uint8_t type, uint32_t i) {
    switch (type) {
        case TFLM_INT8:
            return ((const int8_t *)p)[i];
        case TFLM_UINT8:
            return ((const uint8_t *)p)[i];
        case TFLM_INT16:
            return ((const int16_t *)p)[i];
        default:
            return ((const int32_t *)p)[i];
    }
}

static void store_int(void *p, uint8_t type, uint32_t i, int32_t v) {
    switch (type) {
        case TFLM_INT8:
            ((int8_t *)p)[i] = (int8_t)v;
            break;
        case TFLM_UINT8:
            ((uint8_t *)p)[i] = (uint8_t)v;
            break;
        case TFLM_INT16:
            ((int16_t *)p)[i] = (int16_t)v;
            break;
        default:
            ((int32_t *)p)[i] = v;
            break;
    }
}

// AffineQuantize: round(x / scale) + zero point, clamped to the output type.
static void tflm_quantize_float32(const quantize_data_t *d, const float *in, void *out) {
    for (uint32_t i = 0; i < d->count; ++i) {
        store_int(out, d->out_type, i, tflm_quantize_one(in[i], d->scale, d->out_zero_point, d->qmin, d->qmax));
    }
}

// Requantize: (x - in zero point) * multiplier + out zero point, clamped.
static void tflm_requantize(const quantize_data_t *d, const void *in, void *out) {
    for (uint32_t i = 0; i < d->count; ++i) {
        int32_t x = tflm_wrap_add(load_int(in, d->in_type, i), -d->in_zero_point);
        int32_t q = tflm_wrap_add(tflm_mul_by_quantized_mul(x, d->multiplier, d->shift), d->out_zero_point);
        store_int(out, d->out_type, i, tflm_clamp(q, d->qmin, d->qmax));
    }
}

tflm_status_t tflm_quantize_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, out;
    tflm_status_t st = tflm_prep_io_1_1(p, &in, &out);
    if (st) {
        return st;
    }
    int32_t qmin, qmax, lo, hi;
    if (!tflm_int_range(out.type, &qmin, &qmax)) {
        return tflm_prep_unsupported_type(p, "output", out.type);
    }
    if (in.type != TFLM_FLOAT32 && !tflm_int_range(in.type, &lo, &hi)) {
        return tflm_prep_unsupported_type(p, "input", in.type);
    }
    if (out.n_scales > 1) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "per-channel quantization of the output is not supported");
    }
    if ((st = tflm_prep_same_elements(p, &in, &out))) {
        return st;
    }
    if (out.n_scales == 0 || (in.type != TFLM_FLOAT32 && in.n_scales == 0)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input and output must be quantized");
    }
    quantize_data_t *d = tflm_prep_alloc(p, sizeof(quantize_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->in_type = in.type;
    d->out_type = out.type;
    d->count = out.elements;
    d->scale = out.scale;
    d->in_zero_point = in.zero_point;
    d->out_zero_point = out.zero_point;
    d->qmin = qmin;
    d->qmax = qmax;
    if (in.type != TFLM_FLOAT32) {
        return tflm_prep_multiplier(p, (double)in.scale / (double)out.scale, 31, &d->multiplier, &d->shift);
    }
    return TFLM_OK;
}

tflm_status_t tflm_quantize_eval(tflm_eval_t *e) {
    const quantize_data_t *d = e->data;
    if (d->in_type == TFLM_FLOAT32) {
        tflm_quantize_float32(d, e->in[0], e->out[0]);
    } else {
        tflm_requantize(d, e->in[0], e->out[0]);
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_QUANTIZE
