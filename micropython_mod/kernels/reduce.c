// Reductions over constant axes, bit-exact with TFLM's reference: MEAN and
// SUM (float32, int8, int16), REDUCE_MAX and REDUCE_MIN (float32, int8 with
// the output quantized as the input) and REDUCE_ALL (bool). Each output
// takes its inputs in the order TFLM's reduce loop visits them, so no
// scratch buffer is needed. Like TFLM, max and min start from the type's
// lowest or highest value and keep it unless an input is strictly greater
// or less: NaN inputs are skipped, and an output whose inputs are all NaN
// or -inf (max) is -FLT_MAX; an empty reduction gives that start value.
#include "kernels/kernels.h"
#include "engine/quant.h"

#include <float.h>
#include <string.h>

#if TFLM_KERNEL_MEAN || TFLM_KERNEL_SUM || TFLM_KERNEL_REDUCE_MAX || TFLM_KERNEL_REDUCE_MIN \
    || TFLM_KERNEL_REDUCE_ALL

typedef enum {
    RED_OP_MEAN,
    RED_OP_SUM,
    RED_OP_MAX,
    RED_OP_MIN,
    RED_OP_ALL,
} red_op_t;

enum {
    RED_FLOAT_SUM,
    RED_FLOAT_MEAN,
    RED_INT8,        // sum or mean rescaled to the output quantization
    RED_INT16,
    RED_FLOAT_MAX,
    RED_FLOAT_MIN,
    RED_INT8_MAX,
    RED_INT8_MIN,
    RED_BOOL_ALL,
    RED_EMPTY,       // the input is empty: every output is `init`
};

typedef struct {
    uint8_t kind;
    uint8_t n_kept;
    uint8_t n_red;
    int8_t shift;
    int32_t count;      // inputs per output
    int32_t multiplier;
    int32_t zp_sum;     // input zero point times count, wrapped to 32 bits
    int32_t out_zp;
    uint32_t outputs;   // output values
    uint32_t init;      // RED_EMPTY: the value's bits (esize bytes)
    uint8_t esize;
    // then int32 kept extents and strides, reduced extents and strides
    // (outermost first)
} red_data_t;

// Next position of an index over n dims (outermost first): moves *off along
// the strides, false after the last position.
static inline bool red_step(int32_t n, const int32_t *extent, const int32_t *stride, int32_t *idx, uint32_t *off) {
    for (int32_t k = n - 1; k >= 0; --k) {
        *off += (uint32_t)stride[k];
        if (++idx[k] < extent[k]) {
            return true;
        }
        *off -= (uint32_t)stride[k] * (uint32_t)extent[k];
        idx[k] = 0;
    }
    return false;
}

typedef struct {
    const int32_t *kext, *kstr, *rext, *rstr;
} red_loops_t;

static red_loops_t red_loops(const red_data_t *d) {
    red_loops_t l;
    l.kext = (const int32_t *)(d + 1);
    l.kstr = l.kext + d->n_kept;
    l.rext = l.kstr + d->n_kept;
    l.rstr = l.rext + d->n_red;
    return l;
}

// The innermost reduced loop, run as a plain strided loop by the kernels
// below; the loops outside it go through red_step().
typedef struct {
    int32_t n_outer;  // reduced loops outside the innermost one
    int32_t len;      // its extent (1 when nothing is reduced)
    int32_t step;     // its stride
} red_inner_t;

static red_inner_t red_inner(const red_data_t *d, const red_loops_t *l) {
    red_inner_t r = { 0, 1, 0 };
    if (d->n_red > 0) {
        r.n_outer = d->n_red - 1;
        r.len = l->rext[r.n_outer];
        r.step = l->rstr[r.n_outer];
    }
    return r;
}

// Each output's inputs summed in TFLM's order (row-major), then divided by
// their count for MEAN.
static void tflm_reduce_float32(const red_data_t *d, const float *in, float *out) {
    red_loops_t l = red_loops(d);
    const red_inner_t r = red_inner(d, &l);
    const bool mean = d->kind == RED_FLOAT_MEAN;
    const float count = (float)d->count;
    int32_t kidx[TFLM_MAX_DIMS] = { 0 };
    uint32_t base = 0;
    do {
        int32_t ridx[TFLM_MAX_DIMS] = { 0 };
        uint32_t off = base;
        float sum = 0.0f;
        do {
            const float *x = in + off;
            for (int32_t i = 0; i < r.len; ++i, x += r.step) {
                sum += *x;
            }
        } while (red_step(r.n_outer, l.rext, l.rstr, ridx, &off));
        *out++ = mean ? sum / count : sum;
    } while (red_step(d->n_kept, l.kext, l.kstr, kidx, &base));
}

// Wrapped int32 sums of int8 or int16 inputs, rescaled to the output.
#define RED_INT_LOOP(name, T, lo, hi) \
    static void name(const red_data_t *d, const T *in, T *out) { \
        red_loops_t l = red_loops(d); \
        const red_inner_t r = red_inner(d, &l); \
        const int32_t zp_sum = d->zp_sum, multiplier = d->multiplier, shift = d->shift, out_zp = d->out_zp; \
        int32_t kidx[TFLM_MAX_DIMS] = { 0 }; \
        uint32_t base = 0; \
        do { \
            int32_t ridx[TFLM_MAX_DIMS] = { 0 }; \
            uint32_t off = base, sum = 0; \
            do { \
                const T *x = in + off; \
                for (int32_t i = 0; i < r.len; ++i, x += r.step) { \
                    sum += (uint32_t)(int32_t)*x; \
                } \
            } while (red_step(r.n_outer, l.rext, l.rstr, ridx, &off)); \
            int32_t v = tflm_mul_by_quantized_mul((int32_t)(sum - (uint32_t)zp_sum), multiplier, shift); \
            *out++ = (T)tflm_clamp(tflm_wrap_add(v, out_zp), lo, hi); \
        } while (red_step(d->n_kept, l.kext, l.kstr, kidx, &base)); \
    }

RED_INT_LOOP(tflm_reduce_int8, int8_t, -128, 127)
RED_INT_LOOP(tflm_reduce_int16, int16_t, -32768, 32767)

// Max, min and all, inlined with a constant op: each call is the loop with
// its comparison written in.
static TFLM_ALWAYS_INLINE void red_minmax_f32(const red_data_t *d, const float *in, float *out, bool is_max) {
    red_loops_t l = red_loops(d);
    const red_inner_t r = red_inner(d, &l);
    const int32_t n_outer = r.n_outer, len = r.len, step = r.step;
    int32_t kidx[TFLM_MAX_DIMS] = { 0 };
    uint32_t base = 0;
    do {
        int32_t ridx[TFLM_MAX_DIMS] = { 0 };
        uint32_t off = base;
        float acc = is_max ? -FLT_MAX : FLT_MAX;
        do {
            const float *x = in + off;
            for (int32_t i = 0; i < len; ++i, x += step) {
                if (is_max ? *x > acc : *x < acc) {
                    acc = *x;
                }
            }
        } while (red_step(n_outer, l.rext, l.rstr, ridx, &off));
        *out++ = acc;
    } while (red_step(d->n_kept, l.kext, l.kstr, kidx, &base));
}

// int8 max/min and bool all (bytes 0 or 1) alike.
static TFLM_ALWAYS_INLINE void red_bytes(const red_data_t *d, const int8_t *in, int8_t *out, int op) {
    red_loops_t l = red_loops(d);
    const red_inner_t r = red_inner(d, &l);
    const int32_t n_outer = r.n_outer, len = r.len, step = r.step;
    int32_t kidx[TFLM_MAX_DIMS] = { 0 };
    uint32_t base = 0;
    do {
        int32_t ridx[TFLM_MAX_DIMS] = { 0 };
        uint32_t off = base;
        int32_t acc = op == RED_INT8_MAX ? INT8_MIN : (op == RED_INT8_MIN ? INT8_MAX : 1);
        do {
            const int8_t *x = in + off;
            for (int32_t i = 0; i < len; ++i, x += step) {
                if (op == RED_INT8_MAX) {
                    acc = *x > acc ? *x : acc;
                } else if (op == RED_INT8_MIN) {
                    acc = *x < acc ? *x : acc;
                } else {
                    acc &= *x != 0;
                }
            }
        } while (red_step(n_outer, l.rext, l.rstr, ridx, &off));
        *out++ = (int8_t)acc;
    } while (red_step(d->n_kept, l.kext, l.kstr, kidx, &base));
}

// The types each op takes, as TFLM's kernels do.
static bool red_type_ok(red_op_t op, unsigned type) {
    switch (op) {
        case RED_OP_MEAN:
        case RED_OP_SUM:
            return type == TFLM_FLOAT32 || type == TFLM_INT8 || type == TFLM_INT16;
        case RED_OP_MAX:
        case RED_OP_MIN:
            return type == TFLM_FLOAT32 || type == TFLM_INT8;
        default:
            return type == TFLM_BOOL;
    }
}

// What an empty input gives: MEAN and SUM zeros, the others their start value.
static uint32_t red_init_bits(red_op_t op, unsigned type) {
    if (op == RED_OP_ALL) {
        return 1;
    }
    if (op == RED_OP_MAX || op == RED_OP_MIN) {
        float f = op == RED_OP_MAX ? -FLT_MAX : FLT_MAX;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        return type == TFLM_FLOAT32 ? bits : (uint32_t)(uint8_t)(op == RED_OP_MAX ? INT8_MIN : INT8_MAX);
    }
    return 0;
}

static uint8_t red_kind(red_op_t op, unsigned type) {
    bool f = type == TFLM_FLOAT32;
    switch (op) {
        case RED_OP_MEAN:
            return f ? RED_FLOAT_MEAN : (type == TFLM_INT8 ? RED_INT8 : RED_INT16);
        case RED_OP_SUM:
            return f ? RED_FLOAT_SUM : (type == TFLM_INT8 ? RED_INT8 : RED_INT16);
        case RED_OP_MAX:
            return f ? RED_FLOAT_MAX : RED_INT8_MAX;
        case RED_OP_MIN:
            return f ? RED_FLOAT_MIN : RED_INT8_MIN;
        default:
            return RED_BOOL_ALL;
    }
}

static tflm_status_t reduce_prepare(tflm_prepare_t *p, red_op_t op) {
    tflm_tinfo_t in, axis, out;
    tflm_status_t st = tflm_prep_io_2_1(p, &in, &axis, &out);
    if (st) {
        return st;
    }
    if (!red_type_ok(op, in.type)) {
        return tflm_prep_unsupported_type(p, "input", in.type);
    }
    if (out.type != in.type) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output type %s differs from the input's %s",
            tflm_type_name(out.type), tflm_type_name(in.type));
    }
    if (axis.type != TFLM_INT32) {
        return tflm_prep_unsupported_type(p, "axis", axis.type);
    }
    // No axes (an empty vector, which has no data) reduce nothing.
    if (axis.elements > 0 && (!axis.is_const || axis.data == NULL)) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "axes must be a constant tensor");
    }
    bool mean = op == RED_OP_MEAN;
    bool rescaled = (op == RED_OP_MEAN || op == RED_OP_SUM) && in.type != TFLM_FLOAT32;
    if (rescaled && (in.n_scales == 0 || out.n_scales == 0)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "quantized input and output need quantization");
    }
    if ((op == RED_OP_MAX || op == RED_OP_MIN) && in.type == TFLM_INT8
        && (in.scale != out.scale || in.zero_point != out.zero_point)) {
        // TFLM compares values as they are, and fails at invoke otherwise.
        return tflm_error(p->err, TFLM_ERR_VALUE, "the output's quantization differs from the input's");
    }
    // Axes as TFLM resolves them: negative ones count from the end,
    // duplicates are dropped; a scalar input has none.
    bool reduced[TFLM_MAX_DIMS] = { false };
    int32_t nd = in.ndims;
    for (uint32_t i = 0; nd > 0 && i < axis.elements; ++i) {
        int32_t a;
        memcpy(&a, axis.data + 4u * i, 4);
        int32_t r = a < 0 ? a + nd : a;
        if (r < 0 || r >= nd) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "axis %d is out of range for %d dimensions", (int)a, (int)nd);
        }
        reduced[r] = true;
    }
    // Fold the dimensions into kept and reduced loops, outermost first.
    int32_t kext[TFLM_MAX_DIMS], kstr[TFLM_MAX_DIMS], rext[TFLM_MAX_DIMS], rstr[TFLM_MAX_DIMS];
    uint32_t n_kept = 0, n_red = 0, outputs = 1, count = 1, stride = 1;
    int last = -1; // class of the loop just added (0 kept, 1 reduced), walking inwards
    int32_t strides[TFLM_MAX_DIMS];
    for (int32_t i = nd - 1; i >= 0; --i) {
        strides[i] = (int32_t)stride;
        stride *= (uint32_t)in.dims[i];
    }
    for (int32_t i = 0; i < nd; ++i) {
        int32_t e = in.dims[i];
        if (reduced[i]) {
            count *= (uint32_t)e;
        } else {
            outputs *= (uint32_t)e;
        }
        if (e == 1) {
            continue;
        }
        int cls = reduced[i] ? 1 : 0;
        int32_t *ext = cls ? rext : kext, *str = cls ? rstr : kstr;
        uint32_t *n = cls ? &n_red : &n_kept;
        if (last == cls) {
            // Adjacent dims of one class are contiguous in row-major order.
            // (Their product fits int32, an empty input's too:
            // tflm_model_tensor_size.)
            ext[*n - 1] *= e;
            str[*n - 1] = strides[i];
        } else {
            ext[*n] = e;
            str[*n] = strides[i];
            ++*n;
        }
        last = cls;
    }
    if (out.elements != outputs) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output has %u elements, the reduction gives %u",
            (unsigned)out.elements, (unsigned)outputs);
    }
    uint8_t kind = in.elements == 0 ? RED_EMPTY : red_kind(op, in.type);
    int32_t multiplier = 0, shift = 0;
    if (kind == RED_INT8 || kind == RED_INT16) {
        // Also when the quantization does not change: TFLM rescales (rounds) then too.
        double real = (double)in.scale / (double)out.scale;
        if ((st = tflm_prep_multiplier(p, real, 31, &multiplier, &shift))) {
            return st;
        }
        if (mean) {
            // Fold 1/count into the multiplier as TFLM does, keeping the
            // shift within what its rounding handles.
            int32_t lg = 0;
            while (((uint64_t)count >> (lg + 1)) != 0) {
                ++lg;
            }
            lg = TFLM_MIN(lg, 32);
            lg = TFLM_MIN(lg, 31 + shift);
            multiplier = (int32_t)(((int64_t)multiplier << lg) / (int64_t)count);
            shift -= lg;
        }
    }
    red_data_t *d = tflm_prep_alloc(p, (uint32_t)sizeof(red_data_t) + 8u * (n_kept + n_red));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->kind = kind;
    d->n_kept = (uint8_t)n_kept;
    d->n_red = (uint8_t)n_red;
    d->shift = (int8_t)shift;
    d->count = (int32_t)count;
    d->multiplier = multiplier;
    d->zp_sum = (int32_t)(uint32_t)((uint64_t)(int64_t)in.zero_point * (uint64_t)count);
    d->out_zp = out.zero_point;
    d->outputs = outputs;
    d->init = red_init_bits(op, in.type);
    d->esize = (uint8_t)tflm_type_size(in.type);
    int32_t *loops = (int32_t *)(d + 1);
    memcpy(loops, kext, 4u * n_kept);
    memcpy(loops + n_kept, kstr, 4u * n_kept);
    memcpy(loops + 2 * n_kept, rext, 4u * n_red);
    memcpy(loops + 2 * n_kept + n_red, rstr, 4u * n_red);
    return TFLM_OK;
}

static tflm_status_t reduce_eval(tflm_eval_t *e) {
    const red_data_t *d = e->data;
    switch (d->kind) {
        case RED_FLOAT_SUM:
        case RED_FLOAT_MEAN:
            tflm_reduce_float32(d, e->in[0], e->out[0]);
            break;
        case RED_INT8:
            tflm_reduce_int8(d, e->in[0], e->out[0]);
            break;
        case RED_INT16:
            tflm_reduce_int16(d, e->in[0], e->out[0]);
            break;
        case RED_FLOAT_MAX:
            red_minmax_f32(d, e->in[0], e->out[0], true);
            break;
        case RED_FLOAT_MIN:
            red_minmax_f32(d, e->in[0], e->out[0], false);
            break;
        case RED_INT8_MAX:
            red_bytes(d, e->in[0], e->out[0], RED_INT8_MAX);
            break;
        case RED_INT8_MIN:
            red_bytes(d, e->in[0], e->out[0], RED_INT8_MIN);
            break;
        case RED_BOOL_ALL:
            red_bytes(d, e->in[0], e->out[0], RED_BOOL_ALL);
            break;
        default: {
            uint8_t *o = e->out[0];
            for (uint32_t i = 0; i < d->outputs; ++i, o += d->esize) {
                memcpy(o, &d->init, d->esize);  // little-endian: the low bytes
            }
            break;
        }
    }
    return TFLM_OK;
}

#endif

#if TFLM_KERNEL_MEAN
tflm_status_t tflm_mean_prepare(tflm_prepare_t *p) {
    return reduce_prepare(p, RED_OP_MEAN);
}

tflm_status_t tflm_mean_eval(tflm_eval_t *e) {
    return reduce_eval(e);
}
#endif

#if TFLM_KERNEL_SUM
tflm_status_t tflm_sum_prepare(tflm_prepare_t *p) {
    return reduce_prepare(p, RED_OP_SUM);
}

tflm_status_t tflm_sum_eval(tflm_eval_t *e) {
    return reduce_eval(e);
}
#endif

#if TFLM_KERNEL_REDUCE_MAX
tflm_status_t tflm_reduce_max_prepare(tflm_prepare_t *p) {
    return reduce_prepare(p, RED_OP_MAX);
}

tflm_status_t tflm_reduce_max_eval(tflm_eval_t *e) {
    return reduce_eval(e);
}
#endif

#if TFLM_KERNEL_REDUCE_MIN
tflm_status_t tflm_reduce_min_prepare(tflm_prepare_t *p) {
    return reduce_prepare(p, RED_OP_MIN);
}

tflm_status_t tflm_reduce_min_eval(tflm_eval_t *e) {
    return reduce_eval(e);
}
#endif

#if TFLM_KERNEL_REDUCE_ALL
tflm_status_t tflm_reduce_all_prepare(tflm_prepare_t *p) {
    return reduce_prepare(p, RED_OP_ALL);
}

tflm_status_t tflm_reduce_all_eval(tflm_eval_t *e) {
    return reduce_eval(e);
}
#endif
