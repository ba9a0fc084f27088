// ADD and SUB: float32, int32, int8 and int16 with broadcasting, bit-exact
// with TFLM's reference (int8/int16 rescale both inputs to a common scale
// with a left shift of 20 or 15 bits, add or subtract, then rescale to the
// output). They differ in one more place: TFLM clamps SUB's int32 results to
// the fused activation and ADD's to the full range.
#include "kernels/kernels.h"
#include "kernels/broadcast.h"
#include "engine/quant.h"
#include "engine/schema.h"

#if TFLM_KERNEL_ADD || TFLM_KERNEL_SUB

// AddOptions and SubOptions fields

enum { ADD_FLOAT32, ADD_INT32, ADD_INT8, ADD_INT16 };

typedef struct {
    uint8_t kind;
    uint8_t left_shift;
    int8_t in1_shift;
    int8_t in2_shift;
    int8_t out_shift;
    uint8_t subtract;
    uint8_t reserved[2];
    tflm_arith_offsets_t off;
    int32_t in1_multiplier;
    int32_t in2_multiplier;
    int32_t out_multiplier;
    tflm_bound_t act_min, act_max;
    int32_t plan[];         // the broadcast plan (tflm_bcast_alloc)
} add_data_t;

// The rescaling of one quantized ADD or SUB, set up once per eval in a local (stores
// to the output could alias the kernel data, forcing reloads in the loop).
typedef struct {
    int32_t in1_offset, in2_offset, out_offset;
    int32_t left_shift;
    int32_t act_min, act_max;
    tflm_requant_t in1, in2, out;
} add_quant_t;

static inline add_quant_t add_quant_init(const add_data_t *d) {
    add_quant_t q;
    q.in1_offset = d->off.in1;
    q.in2_offset = d->off.in2;
    q.out_offset = d->off.out;
    q.left_shift = d->left_shift;
    q.act_min = d->act_min.i;
    q.act_max = d->act_max.i;
    q.in1 = tflm_requant_init(d->in1_multiplier, d->in1_shift);
    q.in2 = tflm_requant_init(d->in2_multiplier, d->in2_shift);
    q.out = tflm_requant_init(d->out_multiplier, d->out_shift);
    return q;
}

// `subtract` is a constant wherever this is inlined: each loop gets one op.
static inline int32_t add_quantized(const add_quant_t *q, int32_t x, int32_t y, bool subtract) {
    // Shifts wrap as the reference's int32 arithmetic would (never in practice).
    int32_t a = tflm_requant(&q->in1, (int32_t)((uint32_t)(q->in1_offset + x) << q->left_shift));
    int32_t b = tflm_requant(&q->in2, (int32_t)((uint32_t)(q->in2_offset + y) << q->left_shift));
    int32_t raw = subtract ? (int32_t)((uint32_t)a - (uint32_t)b) : tflm_wrap_add(a, b);
    int32_t result = tflm_requant(&q->out, raw);
    return tflm_clamp(tflm_wrap_add(result, q->out_offset), q->act_min, q->act_max);
}

// The element operations (ctx: the activation range, or the rescaling).
static float add_f32(const void *ctx, float a, float b) {
    const float *range = ctx;
    return tflm_clampf(a + b, range[0], range[1]);
}
static float sub_f32(const void *ctx, float a, float b) {
    const float *range = ctx;
    return tflm_clampf(a - b, range[0], range[1]);
}
// TFLM clamps int32 sums to the full range: the fused activation is unused.
static int32_t add_i32(const void *ctx, int32_t a, int32_t b) {
    (void)ctx;
    return tflm_wrap_add(a, b);
}
static int32_t sub_i32(const void *ctx, int32_t a, int32_t b) {
    const int32_t *range = ctx;
    return tflm_clamp((int32_t)((uint32_t)a - (uint32_t)b), range[0], range[1]);
}
static int8_t add_q8(const void *ctx, int8_t a, int8_t b) {
    return (int8_t)add_quantized(ctx, a, b, false);
}
static int8_t sub_q8(const void *ctx, int8_t a, int8_t b) {
    return (int8_t)add_quantized(ctx, a, b, true);
}
static int16_t add_q16(const void *ctx, int16_t a, int16_t b) {
    return (int16_t)add_quantized(ctx, a, b, false);
}
static int16_t sub_q16(const void *ctx, int16_t a, int16_t b) {
    return (int16_t)add_quantized(ctx, a, b, true);
}

// int8 inputs in 32-bit arithmetic: with a left shift of 20 and |x + offset|
// <= 255, the doubling high multiply of (x + offset) << 20 by m = mh * 2^16
// + ml is (x + offset) * mh * 2^5 + ((x + offset) * ml + 2^10) >> 11 exactly
// (no 64-bit product, no saturation case), and the rounding shift's sum
// stays below 2^31. The output's rescaling is the general one.
typedef struct {
    int32_t offset, mh32, ml, right, nudge_pos, nudge_neg;
} add_q8_in_t;

typedef struct {
    add_q8_in_t in1, in2;
    int32_t out_offset, act_min, act_max;
    tflm_requant_t out;
} add_q8_t;

static inline int32_t add_q8_input(const add_q8_in_t *q, int32_t x) {
    const int32_t v = x + q->offset;
    const int32_t high = v * q->mh32 + ((v * q->ml + 1024) >> 11);
    return (high + (high < 0 ? q->nudge_neg : q->nudge_pos)) >> q->right;
}

static inline int32_t add_q8_result(const add_q8_t *q, int32_t raw) {
    return tflm_clamp(tflm_wrap_add(tflm_requant(&q->out, raw), q->out_offset), q->act_min, q->act_max);
}

static int8_t add_q8_fast(const void *ctx, int8_t a, int8_t b) {
    const add_q8_t *q = ctx;
    return (int8_t)add_q8_result(q, add_q8_input(&q->in1, a) + add_q8_input(&q->in2, b));
}
static int8_t sub_q8_fast(const void *ctx, int8_t a, int8_t b) {
    const add_q8_t *q = ctx;
    return (int8_t)add_q8_result(q, add_q8_input(&q->in1, a) - add_q8_input(&q->in2, b));
}

// False when the 32-bit form does not apply (offsets or multipliers out of
// the range TFLM's int8 ADD gives them).
static bool add_q8_in_init(add_q8_in_t *q, int32_t offset, int32_t multiplier, int32_t shift) {
    if (offset < -128 || offset > 128 || multiplier < 0 || shift > 0 || shift < -31) {
        return false;
    }
    q->offset = offset;
    q->mh32 = (multiplier >> 16) << 5;
    q->ml = multiplier & 0xffff;
    q->right = -shift;
    q->nudge_pos = (int32_t)(((uint32_t)1 << q->right) >> 1);
    q->nudge_neg = q->nudge_pos > 0 ? q->nudge_pos - 1 : 0;
    return true;
}

// Each kind's loop, its context in a local: stores to the output could
// alias the kernel data, forcing reloads in the loop.
static void add_eval_float32(const add_data_t *d, const float *in1, const float *in2, float *out) {
    const float range[2] = { d->act_min.f, d->act_max.f };
    if (d->subtract) {
        tflm_bcast_float32(d->plan, in1, in2, out, sub_f32, range);
    } else {
        tflm_bcast_float32(d->plan, in1, in2, out, add_f32, range);
    }
}

static void add_eval_int32(const add_data_t *d, const int32_t *in1, const int32_t *in2, int32_t *out) {
    const int32_t range[2] = { d->act_min.i, d->act_max.i };
    if (d->subtract) {
        tflm_bcast_int32(d->plan, in1, in2, out, sub_i32, range);
    } else {
        tflm_bcast_int32(d->plan, in1, in2, out, add_i32, range);
    }
}

static void add_eval_int8(const add_data_t *d, const int8_t *in1, const int8_t *in2, int8_t *out) {
    add_q8_t f;
    if (d->left_shift == 20 && add_q8_in_init(&f.in1, d->off.in1, d->in1_multiplier, d->in1_shift)
        && add_q8_in_init(&f.in2, d->off.in2, d->in2_multiplier, d->in2_shift)) {
        f.out_offset = d->off.out;
        f.act_min = d->act_min.i;
        f.act_max = d->act_max.i;
        f.out = tflm_requant_init(d->out_multiplier, d->out_shift);
        if (d->subtract) {
            tflm_bcast_int8(d->plan, in1, in2, out, sub_q8_fast, &f);
        } else {
            tflm_bcast_int8(d->plan, in1, in2, out, add_q8_fast, &f);
        }
        return;
    }
    const add_quant_t q = add_quant_init(d);
    if (d->subtract) {
        tflm_bcast_int8(d->plan, in1, in2, out, sub_q8, &q);
    } else {
        tflm_bcast_int8(d->plan, in1, in2, out, add_q8, &q);
    }
}

static void add_eval_int16(const add_data_t *d, const int16_t *in1, const int16_t *in2, int16_t *out) {
    const add_quant_t q = add_quant_init(d);
    if (d->subtract) {
        tflm_bcast_int16(d->plan, in1, in2, out, sub_q16, &q);
    } else {
        tflm_bcast_int16(d->plan, in1, in2, out, add_q16, &q);
    }
}

// A multiplier below one as TFLM's QuantizeMultiplierSmallerThanOneExp makes it.
static tflm_status_t add_multiplier_below_one(tflm_prepare_t *p, double real, int32_t *multiplier, int8_t *shift) {
    int32_t s;
    tflm_status_t st = tflm_prep_multiplier_below_one(p, real, multiplier, &s);
    *shift = (int8_t)s;
    return st;
}

// Output types, in the order of the kinds above.
static const uint8_t add_types[] = { TFLM_FLOAT32, TFLM_INT32, TFLM_INT8, TFLM_INT16 };

static tflm_status_t add_sub_prepare(tflm_prepare_t *p, bool subtract) {
    const char *name = subtract ? "SUB" : "ADD";
    tflm_arith_t a;
    tflm_status_t st = tflm_arith_prepare(p, name, add_types, sizeof(add_types),
        subtract ? TFLM_OPT_SUB_FUSED_ACTIVATION_FUNCTION : TFLM_OPT_ADD_FUSED_ACTIVATION_FUNCTION, &a);
    if (st) {
        return st;
    }
    // TFLM's SUB also refuses a quantized int32 output.
    if (a.kind == ADD_INT32 && (a.in1.n_scales != 0 || a.in2.n_scales != 0 || (subtract && a.out.n_scales != 0))) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "quantized int32 %s is not supported", name);
    }
    add_data_t *d = tflm_bcast_alloc(p, &a.plan, (uint32_t)sizeof(add_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    tflm_arith_store(&a, &d->kind, &d->act_min, &d->act_max, &d->off);
    d->subtract = subtract;
    if (!a.quantized) {
        return TFLM_OK;
    }
    d->left_shift = a.kind == ADD_INT16 ? 15 : 20;
    // In double, as TFLM computes them.
    double twice_max = 2.0 * (double)TFLM_MAX(a.in1.scale, a.in2.scale);
    double out_real = twice_max / ((double)(1 << d->left_shift) * (double)a.out.scale);
    if ((st = add_multiplier_below_one(p, (double)a.in1.scale / twice_max, &d->in1_multiplier, &d->in1_shift))
        || (st = add_multiplier_below_one(p, (double)a.in2.scale / twice_max, &d->in2_multiplier, &d->in2_shift))
        || (st = add_multiplier_below_one(p, out_real, &d->out_multiplier, &d->out_shift))) {
        return st;
    }
    return TFLM_OK;
}

static tflm_status_t add_sub_eval(tflm_eval_t *e) {
    const add_data_t *d = e->data;
    switch (d->kind) {
        case ADD_FLOAT32:
            add_eval_float32(d, e->in[0], e->in[1], e->out[0]);
            break;
        case ADD_INT32:
            add_eval_int32(d, e->in[0], e->in[1], e->out[0]);
            break;
        case ADD_INT8:
            add_eval_int8(d, e->in[0], e->in[1], e->out[0]);
            break;
        default:
            add_eval_int16(d, e->in[0], e->in[1], e->out[0]);
            break;
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_ADD || TFLM_KERNEL_SUB

#if TFLM_KERNEL_ADD
tflm_status_t tflm_add_prepare(tflm_prepare_t *p) {
    return add_sub_prepare(p, false);
}

tflm_status_t tflm_add_eval(tflm_eval_t *e) {
    return add_sub_eval(e);
}

#if TFLM_PATCH
// A stage in bands of rows (kernel.h's span): inputs of the output's shape
// have a plan of one loop (tflm_bcast_plan fuses the dimensions they walk
// alike: n, extent[n], step1[n], step2[n]) whose extent, in a copy of the
// data on the stack, runs any run of elements.
#define ADD_SPAN_PLAN (4)

static bool add_span(const void *data, uint32_t *count) {
    const int32_t *plan = ((const add_data_t *)data)->plan;
    if (plan[0] != 1 || plan[1] < 1 || plan[2] != 1 || plan[3] != 1) {
        return false;
    }
    *count = (uint32_t)plan[1];
    return true;
}

static tflm_status_t add_run_span(tflm_eval_t *e, uint32_t count) {
    union {
        add_data_t d;
        int32_t words[(sizeof(add_data_t) + 4u * ADD_SPAN_PLAN + 3u) / 4u];
    } c;
    memcpy(&c, e->data, sizeof(add_data_t) + 4u * ADD_SPAN_PLAN);
    c.d.plan[1] = (int32_t)count;
    void *node = e->data;
    e->data = &c.d;
    const tflm_status_t st = add_sub_eval(e);
    e->data = node;
    return st;
}
#endif // TFLM_PATCH

const tflm_kernel_hooks_t tflm_add_hooks = {
#if TFLM_PATCH
    .span = add_span,
    .run_span = add_run_span,
#else
    .span = NULL, // (no hook left: an initializer list may not be empty in C99)
#endif
};
#endif

#if TFLM_KERNEL_SUB
tflm_status_t tflm_sub_prepare(tflm_prepare_t *p) {
    return add_sub_prepare(p, true);
}

tflm_status_t tflm_sub_eval(tflm_eval_t *e) {
    return add_sub_eval(e);
}
#endif
