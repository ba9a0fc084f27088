// ELU: float32 (x < 0: expm1(x), else x) and int8 (a 256-entry table built
// in prepare() from the same float function, exp(x) - 1, as TFLM builds
// it), bit-exact with TFLM's reference kernel.
#include "kernels/kernels.h"
#include "engine/fmath.h"

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

// ELU's function as TFLM's table takes it: exp(x) - 1 below zero.
static float elu_f(float x) {
    return x < 0.0f ? tflm_expf(x) - 1.0f : x;
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
        // TFLM's table (converted as x86 converts). An output without
        // quantization (scale 0) gets an infinite inverse, as TFLM's
        // division gives it: each entry NaN or infinite, which x86 converts
        // to INT32_MIN: -128.
        const float inverse = out.scale != 0.0f ? 1.0f / out.scale : tflm_f32_from(0x7f800000u);
        tflm_prep_table_s8(&in, &out, inverse, elu_f, true, d->table);
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
