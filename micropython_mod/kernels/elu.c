// ELU: float32 (x < 0: expm1(x), else x) and int8 (a 256-entry table built
// in prepare() from the same float function, exp(x) - 1, as TFLM builds
// it), bit-exact with TFLM's reference kernel.
#include "kernels/kernels.h"
#include "engine/fmath.h"
#include "engine/quant.h"

#if TFLM_KERNEL_ELU

typedef struct {
    uint8_t int8;       // else float32
    uint8_t reserved[3];
    uint32_t count;
    int8_t table[256];  // int8: output by input byte (as uint8)
} elu_data_t;

static void elu_float32(uint32_t n, const float *in, float *out) {
    for (uint32_t i = 0; i < n; ++i) {
        float x = in[i];
        out[i] = x < 0.0f ? tflm_expm1f(x) : x; // NaN passes as it is
    }
}

static void elu_int8(const elu_data_t *d, const int8_t *in, int8_t *out) {
    const int8_t *table = d->table;
    for (uint32_t i = 0; i < d->count; ++i) {
        out[i] = table[(uint8_t)in[i]];
    }
}

// TFLM's table: each input dequantized in float, exp(x) - 1 below zero,
// scaled by 1/output scale, rounded half away from zero, plus the zero point
// (in float), converted as x86 converts, clamped. An input without
// quantization has scale 0 and gives NaN there, as in TFLM: -128.
static void elu_table(const tflm_tinfo_t *in, const tflm_tinfo_t *out, int8_t *table) {
    const uint32_t inf_bits = 0x7f800000u;
    float inverse = 0.0f;
    if (out->scale != 0.0f) {
        inverse = 1.0f / out->scale;
    } else {
        memcpy(&inverse, &inf_bits, sizeof(inverse));
    }
    for (int32_t v = -128; v <= 127; ++v) {
        float x = in->scale * (float)(v - in->zero_point);
        float y = x < 0.0f ? tflm_expf(x) - 1.0f : x;
        float q = tflm_roundf(y * inverse) + (float)out->zero_point;
        table[(uint8_t)(int8_t)v] = (int8_t)tflm_clamp(tflm_float_to_int32(q), -128, 127);
    }
}

tflm_status_t tflm_elu_prepare(tflm_prepare_t *p) {
    static const uint8_t types[] = {TFLM_FLOAT32, TFLM_INT8};
    tflm_tinfo_t in, out;
    tflm_status_t st = tflm_prep_unary(p, types, sizeof(types), &in, &out, NULL);
    if (st) {
        return st;
    }
    const bool int8 = in.type == TFLM_INT8;
    // The float kernel needs no table.
    uint32_t bytes = int8 ? (uint32_t)sizeof(elu_data_t) : (uint32_t)offsetof(elu_data_t, table);
    elu_data_t *d = tflm_prep_alloc(p, bytes);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    memset(d, 0, bytes);
    d->int8 = int8;
    d->count = in.elements;
    if (int8) {
        elu_table(&in, &out, d->table);
    }
    return TFLM_OK;
}

tflm_status_t tflm_elu_eval(tflm_eval_t *e) {
    const elu_data_t *d = e->data;
    if (d->int8) {
        elu_int8(d, e->in[0], e->out[0]);
    } else {
        elu_float32(d->count, e->in[0], e->out[0]);
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_ELU
