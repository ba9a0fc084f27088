// PRELU: x >= 0 ? x : alpha * x with alpha broadcast onto the input, in
// float32, int8 (int8 alpha) and int16 (int8 alpha), bit-exact with TFLM's
// reference kernels: the quantized forms rescale the two branches with
// their own multipliers (input / output scale, input * alpha / output
// scale). TFLM's float kernel walks 4-D shapes, its quantized one up to 8.
#include "kernels/kernels.h"
#include "kernels/broadcast.h"
#include "engine/fmath.h"
#include "engine/quant.h"

#if TFLM_KERNEL_PRELU

enum { PRELU_FLOAT32, PRELU_INT8, PRELU_INT16 };

typedef struct {
    uint8_t kind;
    int8_t shift_identity;  // input / output scale
    int8_t shift_alpha;     // input * alpha / output scale
    uint8_t reserved;
    int16_t input_offset;   // minus the zero points
    int16_t alpha_offset;
    int16_t output_zero_point;
    int16_t reserved2;
    int32_t multiplier_identity;
    int32_t multiplier_alpha;
    // then the broadcast plan (kernels/broadcast.h)
} prelu_data_t;

// What the quantized branches need, set up once per eval.
typedef struct {
    tflm_requant_t identity;
    tflm_requant_t alpha;
    int32_t input_offset;
    int32_t alpha_offset;
    int32_t output_zero_point;
    int32_t lo;
    int32_t hi;
} prelu_q_t;

TFLM_BCAST_WALKER_FAST(prelu_walk_f32, float)

static inline const int32_t *prelu_plan(const prelu_data_t *d) {
    return (const int32_t *)(d + 1);
}

// x86's results, NaN bits included: a NaN input stays (quieted), a NaN
// alpha too, and -inf * 0 gives the default NaN.
static inline float prelu_f(const void *ctx, float x, float a) {
    (void)ctx;
    if (x >= 0.0f) {
        return x;
    }
    return tflm_nan_x86(x * a, x, a);
}

static inline int32_t prelu_q(const prelu_q_t *q, int32_t x, int32_t a) {
    int32_t v = x + q->input_offset;
    int32_t r = v >= 0 ? tflm_requant(&q->identity, v) : tflm_requant(&q->alpha, v * (a + q->alpha_offset));
    return tflm_clamp(tflm_wrap_add(r, q->output_zero_point), q->lo, q->hi);
}

static inline int8_t prelu_q8(const void *ctx, int8_t x, int8_t a) {
    return (int8_t)prelu_q(ctx, x, a);
}

// int16 input and output with int8 alpha: the walker takes one type, so
// the loop is written out.
static void prelu_int16(const int32_t *plan, const prelu_q_t *q, const int16_t *in, const int8_t *alpha,
    int16_t *out) {
    tflm_bcast_iter_t it;
    for (bool more = tflm_bcast_begin(&it, plan); more; more = tflm_bcast_next(&it)) {
        const int16_t *x = in + it.at1;
        const int8_t *a = alpha + it.at2;
        int16_t *o = out + it.out;
        const int32_t len = it.len, inc1 = it.inc1, inc2 = it.inc2;
        for (int32_t i = 0; i < len; ++i) {
            o[i] = (int16_t)prelu_q(q, x[i * inc1], a[i * inc2]);
        }
    }
}

// The float kernel's 4-D walk takes the inputs' broadcast shape as the
// output's: anything else reads out of bounds there.
static tflm_status_t prelu_float_shapes(tflm_prepare_t *p, const tflm_tinfo_t *in, const tflm_tinfo_t *alpha,
    const tflm_tinfo_t *out) {
    if (in->ndims > 4 || alpha->ndims > 4 || out->ndims > 4) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "float32 PRELU takes at most 4 dimensions");
    }
    uint32_t rank = TFLM_MAX(in->ndims, alpha->ndims);
    bool same = out->ndims == rank;
    for (uint32_t i = 0; same && i < rank; ++i) {
        int32_t d1 = i < in->ndims ? in->dims[in->ndims - 1 - i] : 1;
        int32_t d2 = i < alpha->ndims ? alpha->dims[alpha->ndims - 1 - i] : 1;
        same = out->dims[out->ndims - 1 - i] == TFLM_MAX(d1, d2);
    }
    if (!same) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output shape is not the broadcast of the input and alpha shapes");
    }
    return TFLM_OK;
}

tflm_status_t tflm_prelu_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, alpha, out;
    tflm_status_t st = tflm_binary_io(p, &in, &alpha, &out);
    if (st) {
        return st;
    }
    uint8_t kind;
    switch (in.type) {
        case TFLM_FLOAT32:
            kind = PRELU_FLOAT32;
            break;
        case TFLM_INT8:
            kind = PRELU_INT8;
            break;
        case TFLM_INT16:
            kind = PRELU_INT16;
            break;
        default:
            return tflm_prep_unsupported_type(p, "input", in.type);
    }
    if (out.type != in.type) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output type %s differs from input type %s",
            tflm_type_name(out.type), tflm_type_name(in.type));
    }
    // TFLM reads alpha as float for float input, else as int8.
    const unsigned alpha_type = kind == PRELU_FLOAT32 ? TFLM_FLOAT32 : TFLM_INT8;
    if (alpha.type != alpha_type) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%s PRELU needs %s alpha, not %s", tflm_type_name(in.type),
            tflm_type_name(alpha_type), tflm_type_name(alpha.type));
    }
    tflm_bcast_plan_t plan;
    if ((kind == PRELU_FLOAT32 && (st = prelu_float_shapes(p, &in, &alpha, &out)))
        || (st = tflm_bcast_plan(p, &in, &alpha, &out, &plan))) {
        return st;
    }
    int32_t m_id = 0, s_id = 0, m_alpha = 0, s_alpha = 0;
    if (kind != PRELU_FLOAT32) {
        if (in.n_scales == 0 || alpha.n_scales == 0 || out.n_scales == 0 || !(in.scale > 0.0f)
            || !(alpha.scale > 0.0f) || !(out.scale > 0.0f)) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "quantized PRELU needs positive scales");
        }
        // Both ratios in double, as TFLM computes them.
        double identity = (double)in.scale / (double)out.scale;
        double with_alpha = (double)in.scale * (double)alpha.scale / (double)out.scale;
        if ((st = tflm_prep_multiplier(p, identity, 31, &m_id, &s_id))
            || (st = tflm_prep_multiplier(p, with_alpha, 31, &m_alpha, &s_alpha))) {
            return st;
        }
    }
    prelu_data_t *d = tflm_bcast_alloc(p, &plan, (uint32_t)sizeof(prelu_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    memset(d, 0, sizeof(*d));
    d->kind = kind;
    d->multiplier_identity = m_id;
    d->shift_identity = (int8_t)s_id;
    d->multiplier_alpha = m_alpha;
    d->shift_alpha = (int8_t)s_alpha;
    d->input_offset = (int16_t)-in.zero_point;
    d->alpha_offset = (int16_t)-alpha.zero_point;
    d->output_zero_point = (int16_t)out.zero_point;
    return TFLM_OK;
}

tflm_status_t tflm_prelu_eval(tflm_eval_t *e) {
    const prelu_data_t *d = e->data;
    const int32_t *plan = prelu_plan(d);
    if (d->kind == PRELU_FLOAT32) {
        prelu_walk_f32(plan, e->in[0], e->in[1], e->out[0], prelu_f, NULL);
        return TFLM_OK;
    }
    prelu_q_t q;
    q.identity = tflm_requant_init(d->multiplier_identity, d->shift_identity);
    q.alpha = tflm_requant_init(d->multiplier_alpha, d->shift_alpha);
    q.input_offset = d->input_offset;
    q.alpha_offset = d->alpha_offset;
    q.output_zero_point = d->output_zero_point;
    if (d->kind == PRELU_INT8) {
        q.lo = INT8_MIN;
        q.hi = INT8_MAX;
        tflm_bcast_int8(plan, e->in[0], e->in[1], e->out[0], prelu_q8, &q);
    } else {
        q.lo = INT16_MIN;
        q.hi = INT16_MAX;
        prelu_int16(plan, &q, e->in[0], e->in[1], e->out[0]);
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_PRELU
