// MEAN and SUM over constant axes: float32, int8 and int16, bit-exact with
// TFLM's reference. Each output sums its inputs in the order TFLM's reduce
// loop visits them, so no scratch sum buffer is needed.
#include "kernels/kernels.h"
#include "engine/quant.h"

#include <string.h>

#if TFLM_KERNEL_MEAN || TFLM_KERNEL_SUM

enum {
    RED_FLOAT_SUM,
    RED_FLOAT_MEAN,
    RED_INT8,        // sum or mean rescaled to the output quantization
    RED_INT16,
    RED_EMPTY,       // the reduced axes are empty: zeros
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
    uint32_t outputs;   // output bytes for RED_EMPTY
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

static void tflm_reduce_float32(const red_data_t *d, const float *in, float *out) {
    red_loops_t l = red_loops(d);
    int32_t kidx[TFLM_MAX_DIMS] = { 0 };
    uint32_t base = 0, o = 0;
    do {
        int32_t ridx[TFLM_MAX_DIMS] = { 0 };
        uint32_t off = base;
        float sum = 0.0f;
        do {
            sum += in[off];
        } while (red_step(d->n_red, l.rext, l.rstr, ridx, &off));
        out[o++] = d->kind == RED_FLOAT_MEAN ? sum / (float)d->count : sum;
    } while (red_step(d->n_kept, l.kext, l.kstr, kidx, &base));
}

// Wrapped int32 sums of int8 or int16 inputs, rescaled to the output.
#define RED_INT_LOOP(name, T, lo, hi) \
    static void name(const red_data_t *d, const T *in, T *out) { \
        red_loops_t l = red_loops(d); \
        int32_t kidx[TFLM_MAX_DIMS] = { 0 }; \
        uint32_t base = 0, o = 0; \
        do { \
            int32_t ridx[TFLM_MAX_DIMS] = { 0 }; \
            uint32_t off = base, sum = 0; \
            do { \
                sum += (uint32_t)(int32_t)in[off]; \
            } while (red_step(d->n_red, l.rext, l.rstr, ridx, &off)); \
            int32_t r = tflm_mul_by_quantized_mul((int32_t)(sum - (uint32_t)d->zp_sum), d->multiplier, d->shift); \
            out[o++] = (T)tflm_clamp(tflm_wrap_add(r, d->out_zp), lo, hi); \
        } while (red_step(d->n_kept, l.kext, l.kstr, kidx, &base)); \
    }

RED_INT_LOOP(tflm_reduce_int8, int8_t, -128, 127)
RED_INT_LOOP(tflm_reduce_int16, int16_t, -32768, 32767)

static tflm_status_t reduce_prepare(tflm_prepare_t *p, bool mean) {
    tflm_status_t st = tflm_prep_expect_io(p, 2, 2, 1);
    if (st) {
        return st;
    }
    tflm_tinfo_t in, axis, out;
    if ((st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_input(p, 1, &axis))
        || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (in.index < 0 || axis.index < 0 || out.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "an input or the output is missing");
    }
    if (in.type != TFLM_FLOAT32 && in.type != TFLM_INT8 && in.type != TFLM_INT16) {
        return tflm_prep_unsupported_type(p, "input", in.type);
    }
    if (out.type != in.type) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output type %s differs from the input's %s",
            tflm_type_name(out.type), tflm_type_name(in.type));
    }
    if (axis.type != TFLM_INT32) {
        return tflm_prep_unsupported_type(p, "axis", axis.type);
    }
    if (!axis.is_const || axis.data == NULL) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "axes must be a constant tensor");
    }
    bool quantized = in.type != TFLM_FLOAT32;
    if (quantized && (in.n_scales == 0 || out.n_scales == 0)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "quantized input and output need quantization");
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
    uint8_t kind;
    int32_t multiplier = 0, shift = 0;
    if (in.elements == 0) {
        kind = RED_EMPTY;
    } else if (!quantized) {
        kind = mean ? RED_FLOAT_MEAN : RED_FLOAT_SUM;
    } else {
        // Also when the quantization does not change: TFLM rescales (rounds) then too.
        kind = in.type == TFLM_INT8 ? RED_INT8 : RED_INT16;
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
    // Empty reductions just clear the output's bytes.
    d->outputs = kind == RED_EMPTY ? out.bytes : outputs;
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
        default:
            memset(e->out[0], 0, d->outputs);
            break;
    }
    return TFLM_OK;
}

#endif

#if TFLM_KERNEL_MEAN
tflm_status_t tflm_mean_prepare(tflm_prepare_t *p) {
    return reduce_prepare(p, true);
}

tflm_status_t tflm_mean_eval(tflm_eval_t *e) {
    return reduce_eval(e);
}
#endif

#if TFLM_KERNEL_SUM
tflm_status_t tflm_sum_prepare(tflm_prepare_t *p) {
    return reduce_prepare(p, false);
}

tflm_status_t tflm_sum_eval(tflm_eval_t *e) {
    return reduce_eval(e);
}
#endif
