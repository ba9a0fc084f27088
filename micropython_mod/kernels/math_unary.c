// ABS, NEG, CEIL, FLOOR, ROUND, SQRT, RSQRT, SQUARE, EXP, LOG, SIN and COS:
// functions of one tensor, element by element, bit-exact with TFLM's
// reference kernels. All take float32, with the results TFLM's host gives
// (its libm's, engine/fmath*.c; NaN bits as x86 makes them); ABS also takes
// int8 and int16 (quantized, or int16 without quantization), RSQRT int8 and
// int16 (quantized: TFLM's fixed-point inverse square root). EXP also takes
// int8 and int16, LOG int8, which TFLM refuses: TensorFlow Lite's tables
// (int8: tflm_prep_table_s8; int16: mu_exp_table16), what a converted
// model's quantized EXP and LOG are meant to give. Other types are refused
// in prepare(), as TFLM refuses them in prepare() or eval().
#include "kernels/kernels.h"
#include "engine/fixedpoint.h"
#include "engine/fmath.h"
#include "engine/quant.h"

#if TFLM_KERNEL_ABS || TFLM_KERNEL_NEG || TFLM_KERNEL_CEIL || TFLM_KERNEL_FLOOR || TFLM_KERNEL_ROUND \
    || TFLM_KERNEL_SQRT || TFLM_KERNEL_RSQRT || TFLM_KERNEL_SQUARE || TFLM_KERNEL_EXP || TFLM_KERNEL_LOG \
    || TFLM_KERNEL_SIN || TFLM_KERNEL_COS

enum { MU_ABS, MU_NEG, MU_CEIL, MU_FLOOR, MU_ROUND, MU_SQRT, MU_RSQRT, MU_SQUARE, MU_EXP, MU_LOG, MU_SIN, MU_COS };
enum { MU_FLOAT32, MU_INT8, MU_INT16, MU_INT16_RAW };

// RSQRT's fixed-point result carries this many extra bits between its two
// rescalings (TFLM's kShift).
#define MU_RSQRT_SHIFT (20)

typedef struct {
    uint8_t op;
    uint8_t kind;
    uint8_t rescale;    // ABS: input and output scales differ
    int8_t shift;
    int16_t in_zp;
    int16_t out_zp;
    uint32_t count;
    int32_t multiplier;
    // EXP and LOG: int8, 256 outputs by input byte (as uint8, through an
    // int8_t pointer); EXP int16, MU_TABLE16 anchors (mu_exp_table16).
    int16_t table[];
} math_unary_data_t;

// -- float32 ---------------------------------------------------------------

static inline float mu_abs(float x) {
    return tflm_f32_from(tflm_f32_bits(x) & 0x7fffffffu);
}

static inline float mu_neg(float x) {
    return tflm_f32_from(tflm_f32_bits(x) ^ 0x80000000u);
}

// floor (up false) or ceil (up true) as TFLM's host computes them (its
// compiler's inline sequence): x itself from 2^23 up, for infinities and
// NaN (not even quieted); else the integer below (above), with x's sign.
static inline float mu_floor_ceil(float x, bool up) {
    uint32_t u = tflm_f32_bits(x);
    uint32_t e = (u >> 23) & 0xffu;
    if (e >= 150u) {
        return x;
    }
    const uint32_t sign = u & 0x80000000u;
    // Whether the magnitude grows: floor of a negative, ceil of a positive.
    const bool grow = up ? sign == 0 : sign != 0;
    if (e < 127u) { // |x| < 1: zero or one, signed as x
        if ((u & 0x7fffffffu) == 0) {
            return x;
        }
        return tflm_f32_from(sign | (grow ? 0x3f800000u : 0u));
    }
    uint32_t frac = 0x7fffffu >> (e - 127u);
    if ((u & frac) == 0) {
        return x;
    }
    u &= ~frac;
    return tflm_f32_from(grow ? u + frac + 1u : u); // a carry moves into the exponent
}

// TFLM's round half to even: floor, then the difference compared with 1/2
// (so -0.3 rounds to +0, not -0).
static inline float mu_round(float x) {
    if (tflm_isnanf(x)) {
        return tflm_nan_quiet(x);
    }
    float f = mu_floor_ceil(x, false);
    float diff = x - f; // exact; NaN for infinities, which then stay
    if (diff < 0.5f || (diff == 0.5f && ((int32_t)f & 1) == 0)) {
        return f;
    }
    return f + 1.0f;
}

static inline float mu_rsqrt(float x) {
    float r = tflm_sqrtf(x);
    if (tflm_isnanf(r)) {
        return r;
    }
    if (r == 0.0f) {
        return tflm_f32_from((tflm_f32_bits(r) & 0x80000000u) | 0x7f800000u); // 1 / +-0
    }
    return 1.0f / r;
}

static inline float mu_square(float x) {
    return tflm_isnanf(x) ? tflm_nan_quiet(x) : x * x;
}

static inline float mu_exp(float x) {
    return tflm_isnanf(x) ? tflm_nan_quiet(x) : tflm_expf(x);
}

static TFLM_ALWAYS_INLINE void mu_map(uint32_t n, const float *in, float *out, float (*f)(float)) {
    for (uint32_t i = 0; i < n; ++i) {
        out[i] = f(in[i]);
    }
}

static float mu_floor(float x) {
    return mu_floor_ceil(x, false);
}

static float mu_ceil(float x) {
    return mu_floor_ceil(x, true);
}

static void mu_float32(uint8_t op, uint32_t n, const float *in, float *out) {
    switch (op) {
        case MU_ABS:
            mu_map(n, in, out, mu_abs);
            break;
        case MU_NEG:
            mu_map(n, in, out, mu_neg);
            break;
        case MU_CEIL:
            mu_map(n, in, out, mu_ceil);
            break;
        case MU_FLOOR:
            mu_map(n, in, out, mu_floor);
            break;
        case MU_ROUND:
            mu_map(n, in, out, mu_round);
            break;
        case MU_SQRT:
            mu_map(n, in, out, tflm_sqrtf);
            break;
        case MU_RSQRT:
            mu_map(n, in, out, mu_rsqrt);
            break;
        case MU_SQUARE:
            mu_map(n, in, out, mu_square);
            break;
        case MU_EXP:
            mu_map(n, in, out, mu_exp);
            break;
        case MU_LOG:
            mu_map(n, in, out, tflm_logf);
            break;
        case MU_SIN:
            mu_map(n, in, out, tflm_sinf);
            break;
        default:
            mu_map(n, in, out, tflm_cosf);
            break;
    }
}

// -- quantized ABS and RSQRT -----------------------------------------------

// Reads element i of an int8 or int16 tensor.
static inline int32_t mu_load(const void *p, uint32_t i, bool wide) {
    return wide ? ((const int16_t *)p)[i] : ((const int8_t *)p)[i];
}

static inline void mu_store(void *p, uint32_t i, bool wide, int32_t v) {
    if (wide) {
        ((int16_t *)p)[i] = (int16_t)v;
    } else {
        ((int8_t *)p)[i] = (int8_t)v;
    }
}

static void mu_abs_q(const math_unary_data_t *d, const void *in, void *out) {
    const bool wide = d->kind != MU_INT8;
    const int32_t lo = wide ? INT16_MIN : INT8_MIN, hi = wide ? INT16_MAX : INT8_MAX;
    const int32_t in_zp = d->in_zp, out_zp = d->out_zp, n = (int32_t)d->count;
    const tflm_requant_t rq = tflm_requant_init(d->multiplier, d->shift);
    if (d->kind == MU_INT16_RAW) { // std::abs, then back to int16: -32768 stays
        for (int32_t i = 0; i < n; ++i) {
            int32_t v = ((const int16_t *)in)[i];
            ((int16_t *)out)[i] = (int16_t)(v == INT16_MIN ? INT16_MIN : (v < 0 ? -v : v));
        }
        return;
    }
    for (int32_t i = 0; i < n; ++i) {
        int32_t v = mu_load(in, (uint32_t)i, wide) - in_zp;
        v = v < 0 ? -v : v;
        v = d->rescale ? tflm_requant(&rq, v) : v;
        mu_store(out, (uint32_t)i, wide, tflm_clamp(tflm_wrap_add(v, out_zp), lo, hi));
    }
}

// TFLM checks each value before it writes its result: the values before the
// first negative one are written.
static tflm_status_t mu_rsqrt_q(const math_unary_data_t *d, const void *in, void *out, tflm_error_t *err) {
    const bool wide = d->kind != MU_INT8;
    const int32_t lo = wide ? INT16_MIN : INT8_MIN, hi = wide ? INT16_MAX : INT8_MAX;
    const tflm_requant_t rq = tflm_requant_init(d->multiplier, d->shift - MU_RSQRT_SHIFT);
    for (uint32_t i = 0; i < d->count; ++i) {
        int32_t v = mu_load(in, i, wide) - d->in_zp;
        if (v < 0) {
            return tflm_error(err, TFLM_ERR_RUNTIME, "RSQRT of a negative value (element %u)", (unsigned)i);
        }
        int32_t r = hi; // 0: the largest value
        if (v > 0) {
            int32_t m, s;
            tflm_fp_inv_sqrt(v, &m, &s);
            int32_t root = tflm_mul_by_quantized_mul(1, m, s + MU_RSQRT_SHIFT);
            r = tflm_clamp(tflm_wrap_add(tflm_requant(&rq, root), d->out_zp), lo, hi);
        }
        mu_store(out, i, wide, r);
    }
    return TFLM_OK;
}

static inline bool mu_finite(float x) {
    return (tflm_f32_bits(x) & 0x7f800000u) != 0x7f800000u;
}

static void mu_lookup(const math_unary_data_t *d, const int8_t *in, int8_t *out) {
    const int8_t *table = (const int8_t *)d->table;
    for (uint32_t i = 0; i < d->count; ++i) {
        out[i] = table[(uint8_t)in[i]];
    }
}

// Whether this build's EXP takes int16 (TFLM_TYPES: a board short of flash
// leaves its table and lookup out).
#define MU_EXP16 (TFLM_KERNEL_EXP && ((TFLM_TYPES_EXP) & TFLM_T_INT16) != 0)

// Anchors of int16 EXP's table.
#define MU_TABLE16 (513)

#if MU_EXP16
static inline float mu_half(float x) {
    return tflm_roundf(x / 2.0f);
}

// A table entry: clamped in float; NaN (infinity times 0, or less itself)
// as x86 converts it to int16: 0.
static int16_t mu_anchor16(float v) {
    if (v != v) {
        return 0;
    }
    return (int16_t)(v >= 32767.0f ? 32767 : v > -32768.0f ? (int32_t)v : -32768);
}

// int16 EXP's table, as TensorFlow Lite's int16 kernels fill theirs (zero
// points 0): the input's range in 512 segments, anchor i the value at the
// start of segment i less half the error interpolating would make at its
// midpoint, anchor 512 the value at the range's end; every step in float,
// rounded half away from zero.
static void mu_exp_table16(float in_scale, float inverse, int16_t *lut) {
    const float lo = in_scale * -32768.0f, hi = in_scale * 32767.0f;
    const float step = (hi - lo) / 512.0f, half = step / 2.0f;
    // Segment i's end is segment i + 1's start, the same float.
    float x = lo, at = tflm_expf(x);
    for (int32_t i = 0; i < MU_TABLE16 - 1; ++i) {
        const float mid = tflm_expf(x + half);
        x = lo + (float)(i + 1) * step;
        const float next = tflm_expf(x);
        const float sample = tflm_roundf(at * inverse);
        const float bias = mu_half(mu_half(next * inverse + sample) - tflm_roundf(mid * inverse));
        lut[i] = mu_anchor16(sample - bias);
        at = next;
    }
    lut[MU_TABLE16 - 1] = mu_anchor16(tflm_roundf(tflm_expf(hi) * inverse));
}

// 16 bits of x as a signed value (the kernels' int16 arithmetic wraps).
static inline int32_t mu_wrap16(int32_t x) {
    const int32_t low = (int32_t)((uint32_t)x & 0xffffu);
    return low >= 0x8000 ? low - 0x10000 : low;
}

// Each value between the anchors of its segment (its top 9 bits), the
// slope in 16 bits and the sum wrapped to 16 bits as TF Lite's are.
static void mu_lookup16(const math_unary_data_t *d, const int16_t *in, int16_t *out) {
    const int16_t *lut = d->table;
    for (uint32_t i = 0; i < d->count; ++i) {
        const int32_t u = (int32_t)in[i] + 32768;  // 0 .. 65535
        const int32_t k = u >> 7, offset = u & 0x7f;
        const int32_t slope = mu_wrap16(lut[k + 1] - lut[k]);
        // (slope * offset + 64) >> 7, floored, without shifting a negative value.
        const int32_t delta = ((slope * offset + 64 + (1 << 22)) >> 7) - (1 << 15);
        out[i] = (int16_t)mu_wrap16(lut[k] + delta);
    }
}
#endif

// -- prepare and eval -------------------------------------------------------

// The types each op takes (bits of tflm_type_t).
static uint32_t mu_types(uint8_t op) {
    switch (op) {
        case MU_ABS:
        case MU_RSQRT:
            return (1u << TFLM_FLOAT32) | (1u << TFLM_INT8) | (1u << TFLM_INT16);
        case MU_EXP:
            return (1u << TFLM_FLOAT32) | (1u << TFLM_INT8) | (MU_EXP16 ? 1u << TFLM_INT16 : 0u);
        case MU_LOG:
            return (1u << TFLM_FLOAT32) | (1u << TFLM_INT8);
        default:
            return 1u << TFLM_FLOAT32;
    }
}

static tflm_status_t mu_quantized(tflm_prepare_t *p, uint8_t op, const tflm_tinfo_t *in, const tflm_tinfo_t *out,
    math_unary_data_t *d) {
    if (in->n_scales == 0 || out->n_scales == 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%s input and output need quantization",
            tflm_type_name(in->type));
    }
    if (!(in->scale > 0.0f) || !(out->scale > 0.0f)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "quantized input and output need positive scales");
    }
    if (in->type == TFLM_INT16 && (in->zero_point != 0 || out->zero_point != 0)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "int16 needs zero points 0");
    }
    d->in_zp = (int16_t)in->zero_point;
    d->out_zp = (int16_t)out->zero_point;
    int32_t multiplier = 0, shift = 0;
    tflm_status_t st = TFLM_OK;
    if (op == MU_ABS) {
        // Scales compared as floats, the ratio taken in double, as TFLM does.
        d->rescale = in->scale != out->scale;
        if (d->rescale) {
            st = tflm_prep_multiplier(p, (double)in->scale / (double)out->scale, 31, &multiplier, &shift);
        }
    } else if (op == MU_RSQRT) {
        double real = 1.0 / (tflm_sqrt((double)in->scale) * (double)out->scale);
        st = tflm_prep_multiplier(p, real, 31, &multiplier, &shift);
        // The second rescaling shifts by shift - 20: it must stay a valid shift.
        if (!st && shift - MU_RSQRT_SHIFT < -31) {
            st = tflm_error(p->err, TFLM_ERR_VALUE, "quantization scales give an out-of-range multiplier");
        }
    }
    d->multiplier = multiplier;
    d->shift = (int8_t)shift;
    return st;
}

static tflm_status_t mu_prepare(tflm_prepare_t *p, uint8_t op) {
    tflm_status_t st = tflm_prep_expect_io(p, 1, 1, 1);
    tflm_tinfo_t in, out;
    if (st || (st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (in.index < 0 || out.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input or output missing");
    }
    if (in.type >= 32u || !(mu_types(op) & (1u << in.type))) {
        return tflm_prep_unsupported_type(p, "input", in.type);
    }
    if (out.type != in.type) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output type %s differs from input type %s",
            tflm_type_name(out.type), tflm_type_name(in.type));
    }
    if (out.elements != in.elements) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input has %u elements, output %u",
            (unsigned)in.elements, (unsigned)out.elements);
    }
    // TFLM's EXP also wants the shapes equal.
    if (op == MU_EXP && (out.ndims != in.ndims || memcmp(out.dims, in.dims, in.ndims * sizeof(in.dims[0])) != 0)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output shape differs from the input's");
    }
    math_unary_data_t q;
    memset(&q, 0, sizeof(q));
    q.op = op;
    q.count = in.elements;
    q.kind = in.type == TFLM_INT8 ? MU_INT8 : in.type == TFLM_INT16 ? MU_INT16 : MU_FLOAT32;
    if (q.kind == MU_INT16 && in.n_scales == 0) {
        // TFLM's ABS takes int16 without quantization as plain integers;
        // its RSQRT would run with a multiplier it never set.
        if (op != MU_ABS) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "int16 %s needs quantization", op == MU_EXP ? "EXP" : "RSQRT");
        }
        q.kind = MU_INT16_RAW;
    } else if (q.kind != MU_FLOAT32 && (st = mu_quantized(p, op, &in, &out, &q))) {
        return st;
    }
    // Quantized EXP and LOG: TensorFlow Lite's tables (glibc's expf and
    // logf, engine/fmath_expf.c and fmath_log.c). The inverse of the
    // output's scale (int16: of its range over 65536 steps) must be a float
    // and the scales finite (LOG's NaN, of inputs at or below the zero
    // point, gives -128).
    // (Without MU_EXP16, int16 EXP was refused above: mu_types.)
    const bool wide = MU_EXP16 && q.kind == MU_INT16;
    const bool table = (op == MU_EXP || op == MU_LOG) && (q.kind == MU_INT8 || wide);
    float inverse = 0.0f;
    if (table) {
        if (!(mu_finite(in.scale) && mu_finite(out.scale))) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "%s needs finite scales", op == MU_LOG ? "LOG" : "EXP");
        }
        inverse = wide ? 65536.0f / (out.scale * 32767.0f - out.scale * -32768.0f) : 1.0f / out.scale;
        if (!mu_finite(inverse)) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "the output scale is too small for its inverse to be a float");
        }
    }
    const uint32_t table_bytes = !table ? 0u : wide ? MU_TABLE16 * 2u : 256u;
    math_unary_data_t *d = tflm_prep_alloc(p, sizeof(math_unary_data_t) + table_bytes);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    *d = q;
    if (table && !wide) {
        tflm_prep_table_s8(&in, &out, inverse, op == MU_LOG ? tflm_logf : tflm_expf, false, (int8_t *)d->table);
    }
#if MU_EXP16
    if (table && wide) {
        mu_exp_table16(in.scale, inverse, d->table);
    }
#endif
    return TFLM_OK;
}

static tflm_status_t mu_eval(tflm_eval_t *e) {
    const math_unary_data_t *d = e->data;
    if (d->kind == MU_FLOAT32) {
        mu_float32(d->op, d->count, e->in[0], e->out[0]);
        return TFLM_OK;
    }
    if (d->op == MU_RSQRT) {
        return mu_rsqrt_q(d, e->in[0], e->out[0], e->err);
    }
    if (d->op == MU_EXP || d->op == MU_LOG) {
#if MU_EXP16
        if (d->kind == MU_INT16) {
            mu_lookup16(d, e->in[0], e->out[0]);
            return TFLM_OK;
        }
#endif
        mu_lookup(d, e->in[0], e->out[0]);
        return TFLM_OK;
    }
    mu_abs_q(d, e->in[0], e->out[0]);
    return TFLM_OK;
}

#endif

// One prepare/eval pair per op, each compiled with its kernel only.

#if TFLM_KERNEL_ABS
tflm_status_t tflm_abs_prepare(tflm_prepare_t *p) {
    return mu_prepare(p, MU_ABS);
}

tflm_status_t tflm_abs_eval(tflm_eval_t *e) {
    return mu_eval(e);
}
#endif

#if TFLM_KERNEL_NEG
tflm_status_t tflm_neg_prepare(tflm_prepare_t *p) {
    return mu_prepare(p, MU_NEG);
}

tflm_status_t tflm_neg_eval(tflm_eval_t *e) {
    return mu_eval(e);
}
#endif

#if TFLM_KERNEL_CEIL
tflm_status_t tflm_ceil_prepare(tflm_prepare_t *p) {
    return mu_prepare(p, MU_CEIL);
}

tflm_status_t tflm_ceil_eval(tflm_eval_t *e) {
    return mu_eval(e);
}
#endif

#if TFLM_KERNEL_FLOOR
tflm_status_t tflm_floor_prepare(tflm_prepare_t *p) {
    return mu_prepare(p, MU_FLOOR);
}

tflm_status_t tflm_floor_eval(tflm_eval_t *e) {
    return mu_eval(e);
}
#endif

#if TFLM_KERNEL_ROUND
tflm_status_t tflm_round_prepare(tflm_prepare_t *p) {
    return mu_prepare(p, MU_ROUND);
}

tflm_status_t tflm_round_eval(tflm_eval_t *e) {
    return mu_eval(e);
}
#endif

#if TFLM_KERNEL_SQRT
tflm_status_t tflm_sqrt_prepare(tflm_prepare_t *p) {
    return mu_prepare(p, MU_SQRT);
}

tflm_status_t tflm_sqrt_eval(tflm_eval_t *e) {
    return mu_eval(e);
}
#endif

#if TFLM_KERNEL_RSQRT
tflm_status_t tflm_rsqrt_prepare(tflm_prepare_t *p) {
    return mu_prepare(p, MU_RSQRT);
}

tflm_status_t tflm_rsqrt_eval(tflm_eval_t *e) {
    return mu_eval(e);
}
#endif

#if TFLM_KERNEL_SQUARE
tflm_status_t tflm_square_prepare(tflm_prepare_t *p) {
    return mu_prepare(p, MU_SQUARE);
}

tflm_status_t tflm_square_eval(tflm_eval_t *e) {
    return mu_eval(e);
}
#endif

#if TFLM_KERNEL_EXP
tflm_status_t tflm_exp_prepare(tflm_prepare_t *p) {
    return mu_prepare(p, MU_EXP);
}

tflm_status_t tflm_exp_eval(tflm_eval_t *e) {
    return mu_eval(e);
}
#endif

#if TFLM_KERNEL_LOG
tflm_status_t tflm_log_prepare(tflm_prepare_t *p) {
    return mu_prepare(p, MU_LOG);
}

tflm_status_t tflm_log_eval(tflm_eval_t *e) {
    return mu_eval(e);
}
#endif

#if TFLM_KERNEL_SIN
tflm_status_t tflm_sin_prepare(tflm_prepare_t *p) {
    return mu_prepare(p, MU_SIN);
}

tflm_status_t tflm_sin_eval(tflm_eval_t *e) {
    return mu_eval(e);
}
#endif

#if TFLM_KERNEL_COS
tflm_status_t tflm_cos_prepare(tflm_prepare_t *p) {
    return mu_prepare(p, MU_COS);
}

tflm_status_t tflm_cos_eval(tflm_eval_t *e) {
    return mu_eval(e);
}
#endif
