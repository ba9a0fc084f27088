// SQUARED_DIFFERENCE: (x - y)^2 with broadcasting in float32, int32, int8 and
// int16, bit-exact with TFLM's reference.
//
// int32 wraps as the reference does on two's complement targets. int8 and
// int16 rescale both inputs to twice the larger input scale (after a left
// shift of 7 bits for int8, none for int16), square the difference and
// rescale that to the output (a multiplier that may exceed one); TFLM
// requires int8 zero points in the int8 range and int16 ones at 0. float32
// NaNs are the x86 ones (inf - inf gives 0xffc00000), whatever the target's.
#include "kernels/kernels.h"
#include "kernels/broadcast.h"
#include "engine/fmath.h"
#include "engine/quant.h"

#if TFLM_KERNEL_SQUARED_DIFFERENCE

enum { SQD_FLOAT32, SQD_INT32, SQD_INT8, SQD_INT16 };

typedef struct {
    uint8_t kind;
    uint8_t reserved[3];
    int32_t zero_point[2];
    int32_t multiplier[2];
    int32_t shift[2];
    int32_t out_multiplier;
    int32_t out_shift;
    int32_t out_zero_point;
    // then the broadcast plan
} sqd_data_t;

#define SQD_INT8_LEFT_SHIFT (7)

// A NaN square is the difference's NaN: x86's for x - y.
static float sqd_f32(const void *ctx, float x, float y) {
    (void)ctx;
    const float d = x - y;
    return tflm_nan_x86(d * d, x, y);
}

static int32_t sqd_i32(const void *ctx, int32_t x, int32_t y) {
    (void)ctx;
    const uint32_t d = (uint32_t)x - (uint32_t)y;
    return (int32_t)(d * d);
}

// The rescaling, in a local per eval (stores to the output could alias the
// kernel data).
typedef struct {
    int32_t zp1, zp2, out_zero_point, qmin, qmax;
    tflm_rescale8_t r1, r2;   // int8 inputs
    tflm_requant_t q1, q2;    // int16 inputs
    tflm_requant_t out;
} sqd_quant_t;

static inline int32_t sqd_result(const sqd_quant_t *q, int32_t a, int32_t b) {
    const int32_t diff = a - b; // |diff| <= 2^15: its square fits
    const int32_t v = tflm_wrap_add(tflm_requant(&q->out, diff * diff), q->out_zero_point);
    return tflm_clamp(v, q->qmin, q->qmax);
}

static int8_t sqd_q8(const void *ctx, int8_t x, int8_t y) {
    const sqd_quant_t *q = ctx;
    return (int8_t)sqd_result(q, tflm_rescale8(&q->r1, x - q->zp1), tflm_rescale8(&q->r2, y - q->zp2));
}

static int16_t sqd_q16(const void *ctx, int16_t x, int16_t y) {
    const sqd_quant_t *q = ctx;
    return (int16_t)sqd_result(q, tflm_requant(&q->q1, x), tflm_requant(&q->q2, y));
}

TFLM_BCAST_WALKER_FAST(walk_f32, float)
TFLM_BCAST_WALKER(walk_i32, int32_t)
TFLM_BCAST_WALKER(walk_i8, int8_t)
TFLM_BCAST_WALKER(walk_i16, int16_t)

static tflm_status_t sqd_quant_params(tflm_prepare_t *p, const tflm_tinfo_t *in1, const tflm_tinfo_t *in2,
    const tflm_tinfo_t *out, sqd_data_t *d) {
    const tflm_tinfo_t *t[3] = { in1, in2, out };
    for (int k = 0; k < 3; ++k) {
        if (t[k]->n_scales == 0) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "quantized SQUARED_DIFFERENCE needs quantized inputs and output");
        }
        const int32_t zp = t[k]->zero_point;
        if (d->kind == SQD_INT8 ? (zp < -128 || zp > 127) : zp != 0) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "zero point %d: %s", (int)zp,
                d->kind == SQD_INT8 ? "outside the int8 range" : "int16 needs 0");
        }
    }
    d->zero_point[0] = in1->zero_point;
    d->zero_point[1] = in2->zero_point;
    d->out_zero_point = out->zero_point;
    const int32_t left_shift = d->kind == SQD_INT8 ? SQD_INT8_LEFT_SHIFT : 0;
    // In double, as TFLM computes them (2^(2 L) times the output scale in float).
    const double twice_max = 2.0 * (double)TFLM_MAX(in1->scale, in2->scale);
    const double out_real = twice_max * twice_max / (double)((float)(1 << (2 * left_shift)) * out->scale);
    tflm_status_t st;
    if ((st = tflm_prep_multiplier_below_one(p, (double)in1->scale / twice_max, &d->multiplier[0], &d->shift[0]))
        || (st = tflm_prep_multiplier_below_one(p, (double)in2->scale / twice_max, &d->multiplier[1], &d->shift[1]))
        || (st = tflm_prep_multiplier(p, out_real, 30, &d->out_multiplier, &d->out_shift))) {
        return st;
    }
    return TFLM_OK;
}

tflm_status_t tflm_squared_difference_prepare(tflm_prepare_t *p) {
    // In the order of SQD_*.
    static const uint8_t types[] = {TFLM_FLOAT32, TFLM_INT32, TFLM_INT8, TFLM_INT16};
    tflm_tinfo_t io[3];
    uint8_t kind = 0;
    tflm_status_t st;
    sqd_data_t *d = tflm_binary_data(p, types, sizeof(types), (uint32_t)sizeof(sqd_data_t), io, &kind, &st);
    if (d == NULL) {
        return st;
    }
    d->kind = kind;
    if (kind == SQD_INT8 || kind == SQD_INT16) {
        return sqd_quant_params(p, &io[0], &io[1], &io[2], d);
    }
    return TFLM_OK;
}

tflm_status_t tflm_squared_difference_eval(tflm_eval_t *e) {
    const sqd_data_t *d = e->data;
    const int32_t *plan = (const int32_t *)(d + 1);
    if (d->kind == SQD_FLOAT32) {
        walk_f32(plan, e->in[0], e->in[1], e->out[0], sqd_f32, NULL);
        return TFLM_OK;
    }
    if (d->kind == SQD_INT32) {
        walk_i32(plan, e->in[0], e->in[1], e->out[0], sqd_i32, NULL);
        return TFLM_OK;
    }
    sqd_quant_t q;
    q.zp1 = d->zero_point[0];
    q.zp2 = d->zero_point[1];
    q.out_zero_point = d->out_zero_point;
    q.out = tflm_requant_init(d->out_multiplier, d->out_shift);
    if (d->kind == SQD_INT8) {
        q.qmin = INT8_MIN;
        q.qmax = INT8_MAX;
        q.r1 = tflm_rescale8_init(d->multiplier[0], d->shift[0], SQD_INT8_LEFT_SHIFT);
        q.r2 = tflm_rescale8_init(d->multiplier[1], d->shift[1], SQD_INT8_LEFT_SHIFT);
        walk_i8(plan, e->in[0], e->in[1], e->out[0], sqd_q8, &q);
    } else {
        q.qmin = INT16_MIN;
        q.qmax = INT16_MAX;
        q.q1 = tflm_requant_init(d->multiplier[0], d->shift[0]);
        q.q2 = tflm_requant_init(d->multiplier[1], d->shift[1]);
        walk_i16(plan, e->in[0], e->in[1], e->out[0], sqd_q16, &q);
    }
    return TFLM_OK;
}

#endif
