// FLOOR_DIV and FLOOR_MOD: float32 with broadcasting (the only type TFLM's
// kernels take), bit-exact with TFLM's reference on x86-64, NaNs included.
//
// FLOOR_DIV is floor(x / y) computed in double, then rounded to float, as
// TFLM does; like TFLM it fails at eval time when any value of y is zero
// (RuntimeError). FLOOR_MOD is fmod(x, y), plus y where the remainder is
// non-zero and its sign differs from y's; y zero gives NaN. The NaNs are
// the x86 ones (tflm_x86_nan, tflm_fmodf), whatever the target's.
#include "kernels/kernels.h"
#include "kernels/broadcast.h"
#include "engine/fmath.h"

#if TFLM_KERNEL_FLOOR_DIV || TFLM_KERNEL_FLOOR_MOD

typedef struct {
    uint8_t is_mod;
    uint8_t reserved[3];
    uint32_t divisors;  // elements of y, checked for zeros (FLOOR_DIV)
    // then the broadcast plan
} floor_data_t;

static float floor_div_f32(const void *ctx, float x, float y) {
    (void)ctx;
    const uint32_t ux = tflm_f32_bits(x), uy = tflm_f32_bits(y);
    // NaN operands, and inf / inf.
    if (tflm_isnan_bits(ux) || tflm_isnan_bits(uy)
        || ((ux & 0x7fffffffu) == 0x7f800000u && (uy & 0x7fffffffu) == 0x7f800000u)) {
        return tflm_x86_nan(x, y);
    }
    return (float)tflm_floor((double)x / (double)y);
}

static float floor_mod_f32(const void *ctx, float x, float y) {
    (void)ctx;
    const float r = tflm_fmodf(x, y);
    if (tflm_isnan_bits(tflm_f32_bits(r)) || r == 0.0f || (y < 0.0f) == (r < 0.0f)) {
        return r;
    }
    return r + y;
}

TFLM_BCAST_WALKER(walk_floor, float)

static const uint8_t floor_types[] = { TFLM_FLOAT32 };

static tflm_status_t floor_prepare(tflm_prepare_t *p, bool is_mod) {
    tflm_tinfo_t io[3];
    tflm_status_t st;
    floor_data_t *d = tflm_binary_data(p, floor_types, sizeof(floor_types), (uint32_t)sizeof(floor_data_t), io, NULL,
        &st);
    if (d == NULL) {
        return st;
    }
    d->is_mod = is_mod;
    d->divisors = io[1].elements;
    return TFLM_OK;
}

static tflm_status_t floor_eval(tflm_eval_t *e) {
    const floor_data_t *d = e->data;
    const int32_t *plan = (const int32_t *)(d + 1);
    const float *y = e->in[1];
    if (d->is_mod) {
        walk_floor(plan, e->in[0], y, e->out[0], floor_mod_f32, NULL);
        return TFLM_OK;
    }
    // Every divisor, broadcast or not, as TFLM checks them (-0 too).
    for (uint32_t i = 0; i < d->divisors; ++i) {
        if ((tflm_f32_bits(y[i]) & 0x7fffffffu) == 0) {
            return tflm_error(e->err, TFLM_ERR_RUNTIME, "division by zero");
        }
    }
    walk_floor(plan, e->in[0], y, e->out[0], floor_div_f32, NULL);
    return TFLM_OK;
}

#endif

#if TFLM_KERNEL_FLOOR_DIV
tflm_status_t tflm_floor_div_prepare(tflm_prepare_t *p) {
    return floor_prepare(p, false);
}

tflm_status_t tflm_floor_div_eval(tflm_eval_t *e) {
    return floor_eval(e);
}
#endif

#if TFLM_KERNEL_FLOOR_MOD
tflm_status_t tflm_floor_mod_prepare(tflm_prepare_t *p) {
    return floor_prepare(p, true);
}

tflm_status_t tflm_floor_mod_eval(tflm_eval_t *e) {
    return floor_eval(e);
}
#endif
