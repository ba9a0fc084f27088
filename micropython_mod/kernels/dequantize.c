// DEQUANTIZE: integer -> float32, (float)(scale * (x - zero point)) computed
// in double as TFLM's reference does.
#include "engine/quant.h"
#include "kernels/kernels.h"

#if TFLM_KERNEL_DEQUANTIZE

typedef struct {
    uint8_t in_type;
    uint8_t reserved[3];
    uint32_t count;
    float scale;
    int32_t zero_point;
} dequantize_data_t;

static void tflm_dequantize_int8(const dequantize_data_t *d, const int8_t *in, float *out) {
    for (uint32_t i = 0; i < d->count; ++i) {
        out[i] = tflm_dequantize_one(in[i], d->scale, d->zero_point);
    }
}

static void tflm_dequantize_uint8(const dequantize_data_t *d, const uint8_t *in, float *out) {
    for (uint32_t i = 0; i < d->count; ++i) {
        out[i] = tflm_dequantize_one(in[i], d->scale, d->zero_point);
    }
}

static void tflm_dequantize_int16(const dequantize_data_t *d, const int16_t *in, float *out) {
    for (uint32_t i = 0; i < d->count; ++i) {
        out[i] = tflm_dequantize_one(in[i], d->scale, d->zero_point);
    }
}

static const uint8_t dequantize_in_types[] = { TFLM_INT8, TFLM_UINT8, TFLM_INT16 };
static const uint8_t dequantize_out_types[] = { TFLM_FLOAT32 };

tflm_status_t tflm_dequantize_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, out;
    tflm_status_t st = tflm_prep_io_1_1(p, &in, &out);
    if (st || (st = tflm_prep_type_in(p, "input", &in, dequantize_in_types, sizeof(dequantize_in_types), NULL))
        || (st = tflm_prep_type_in(p, "output", &out, dequantize_out_types, sizeof(dequantize_out_types), NULL))
        || (st = tflm_prep_same_elements(p, &in, &out))) {
        return st;
    }
    if (in.n_scales > 1) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "per-channel dequantization is not supported");
    }
    if (in.n_scales == 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input must be quantized");
    }
    dequantize_data_t *d = tflm_prep_alloc(p, sizeof(dequantize_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->in_type = in.type;
    d->count = in.elements;
    d->scale = in.scale;
    d->zero_point = in.zero_point;
    return TFLM_OK;
}

tflm_status_t tflm_dequantize_eval(tflm_eval_t *e) {
    const dequantize_data_t *d = e->data;
    switch (d->in_type) {
        case TFLM_INT8:
            tflm_dequantize_int8(d, e->in[0], e->out[0]);
            break;
        case TFLM_UINT8:
            tflm_dequantize_uint8(d, e->in[0], e->out[0]);
            break;
        default:
            tflm_dequantize_int16(d, e->in[0], e->out[0]);
            break;
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_DEQUANTIZE
