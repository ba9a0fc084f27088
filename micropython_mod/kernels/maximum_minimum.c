// MINIMUM and MAXIMUM: float32, int8, int16, int32 and int64 with
// broadcasting, as TFLM's reference: raw values are compared, quantization
// is ignored, and a NaN on either side gives the second input's value.
#include "kernels/kernels.h"
#include "kernels/broadcast.h"

#if TFLM_KERNEL_MINIMUM || TFLM_KERNEL_MAXIMUM

typedef struct {
    uint8_t type;
    uint8_t is_max;
    uint8_t reserved[2];
    // then the broadcast plan
} minmax_data_t;

// Per type: the element operations (raw values compared; a NaN gives the
// second) and the loop, one per operation.
#define MINMAX_OPS(T, suffix) \
    static T max_##suffix(const void *ctx, T a, T b) { \
        (void)ctx; \
        return a > b ? a : b; \
    } \
    static T min_##suffix(const void *ctx, T a, T b) { \
        (void)ctx; \
        return a < b ? a : b; \
    } \
    static void minmax_##suffix(const int32_t *plan, bool is_max, const T *in1, const T *in2, T *out) { \
        if (is_max) { \
            tflm_bcast_##suffix(plan, in1, in2, out, max_##suffix, NULL); \
        } else { \
            tflm_bcast_##suffix(plan, in1, in2, out, min_##suffix, NULL); \
        } \
    }

MINMAX_OPS(float, float32)
MINMAX_OPS(int8_t, int8)
MINMAX_OPS(int16_t, int16)
MINMAX_OPS(int32_t, int32)
MINMAX_OPS(int64_t, int64)

static tflm_status_t minmax_prepare(tflm_prepare_t *p, bool is_max) {
    static const uint8_t types[] = {TFLM_FLOAT32, TFLM_INT8, TFLM_INT16, TFLM_INT32, TFLM_INT64};
    tflm_tinfo_t io[3];
    tflm_status_t st;
    minmax_data_t *d = tflm_binary_data(p, types, sizeof(types), (uint32_t)sizeof(minmax_data_t), io, NULL, &st);
    if (d != NULL) {
        d->type = io[2].type;
        d->is_max = is_max;
    }
    return st;
}

static tflm_status_t minmax_eval(tflm_eval_t *e) {
    const minmax_data_t *d = e->data;
    const int32_t *plan = (const int32_t *)(d + 1);
    switch (d->type) {
        case TFLM_FLOAT32:
            minmax_float32(plan, d->is_max, e->in[0], e->in[1], e->out[0]);
            break;
        case TFLM_INT8:
            minmax_int8(plan, d->is_max, e->in[0], e->in[1], e->out[0]);
            break;
        case TFLM_INT16:
            minmax_int16(plan, d->is_max, e->in[0], e->in[1], e->out[0]);
            break;
        case TFLM_INT32:
            minmax_int32(plan, d->is_max, e->in[0], e->in[1], e->out[0]);
            break;
        default:
            minmax_int64(plan, d->is_max, e->in[0], e->in[1], e->out[0]);
            break;
    }
    return TFLM_OK;
}

#endif

#if TFLM_KERNEL_MINIMUM
tflm_status_t tflm_minimum_prepare(tflm_prepare_t *p) {
    return minmax_prepare(p, false);
}

tflm_status_t tflm_minimum_eval(tflm_eval_t *e) {
    return minmax_eval(e);
}
#endif

#if TFLM_KERNEL_MAXIMUM
tflm_status_t tflm_maximum_prepare(tflm_prepare_t *p) {
    return minmax_prepare(p, true);
}

tflm_status_t tflm_maximum_eval(tflm_eval_t *e) {
    return minmax_eval(e);
}
#endif
