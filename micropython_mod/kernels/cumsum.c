// CUMSUM: float32 and int8 along one axis (an int32 tensor of one value,
// constant or computed), exclusive and reverse, bit-exact with TFLM's
// reference. Float sums accumulate in float along the axis, in the
// direction of the sum. int8 works as TFLM's does: each input minus its
// zero point, shifted left by 20 and halved (the input multiplier is 1/2),
// is added to an int32 accumulator that wraps, and each output is the
// accumulator rescaled by 2 * input scale / (2^20 * output scale). TFLM
// starts that accumulator at the halved, shifted negated input zero point,
// not 0: every int8 sum carries one more -zero_point term (an exclusive
// sum's first output is not the zero point), kept here to stay bit-exact.
#include "kernels/kernels.h"
#include "engine/quant.h"

#if TFLM_KERNEL_CUMSUM

#define CUMSUM_LEFT_SHIFT (20)

typedef struct {
    uint8_t is_int8;
    uint8_t exclusive;
    uint8_t reverse;
    uint8_t ndims;
    int32_t dims[TFLM_MAX_DIMS];
    int32_t in_zp;
    int32_t out_zp;
    int32_t in_mult;   // the input multiplier (1/2) and its shift
    int32_t in_shift;
    int32_t out_mult;
    int32_t out_shift;
} cumsum_data_t;

// Elements before the axis, along it, and after it.
typedef struct {
    uint32_t before, depth, after;
} cumsum_loops_t;

static bool cumsum_loops(const cumsum_data_t *d, int32_t axis, cumsum_loops_t *l) {
    if (axis < 0) {
        axis += d->ndims;
    }
    if (axis < 0 || axis >= d->ndims) {
        return false;
    }
    l->before = 1;
    l->after = 1;
    for (int32_t i = 0; i < axis; ++i) {
        l->before *= (uint32_t)d->dims[i];
    }
    for (int32_t i = axis + 1; i < d->ndims; ++i) {
        l->after *= (uint32_t)d->dims[i];
    }
    l->depth = (uint32_t)d->dims[axis];
    return true;
}

tflm_status_t tflm_cumsum_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, axis, out;
    tflm_status_t st = tflm_prep_axis_io(p, &in, &axis, &out);
    if (st) {
        return st;
    }
    if (axis.elements != 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the axis tensor has %u values, not 1", (unsigned)axis.elements);
    }
    if (in.ndims == 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the input needs at least one dimension");
    }
    if (out.type != in.type || out.ndims != in.ndims || memcmp(out.dims, in.dims, 4u * in.ndims) != 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the output's type or shape differs from the input's");
    }
    bool is_int8 = in.type == TFLM_INT8;
    int32_t in_mult = 0, in_shift = 0, out_mult = 0, out_shift = 0;
    if (is_int8) {
        if (in.n_scales == 0 || out.n_scales == 0) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "quantized input and output need quantization");
        }
        // TFLM's multipliers must be below 1 (it aborts otherwise).
        double twice_in = 2.0 * (double)in.scale;
        double real_out = twice_in / ((double)(1 << CUMSUM_LEFT_SHIFT) * (double)out.scale);
        if (!(real_out > 0.0 && real_out < 1.0)) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "the input and output scales are too far apart");
        }
        if ((st = tflm_prep_multiplier(p, (double)in.scale / twice_in, 0, &in_mult, &in_shift))
            || (st = tflm_prep_multiplier(p, real_out, 0, &out_mult, &out_shift))) {
            return st;
        }
    }
    cumsum_data_t *d = tflm_prep_alloc(p, sizeof(cumsum_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->is_int8 = is_int8;
    d->exclusive = tflm_prep_opt_u8(p, TFLM_OPT_CUMSUM_EXCLUSIVE, 0) != 0;
    d->reverse = tflm_prep_opt_u8(p, TFLM_OPT_CUMSUM_REVERSE, 0) != 0;
    d->ndims = in.ndims;
    memcpy(d->dims, in.dims, sizeof(d->dims));
    d->in_zp = in.zero_point;
    d->out_zp = out.zero_point;
    d->in_mult = in_mult;
    d->in_shift = in_shift;
    d->out_mult = out_mult;
    d->out_shift = out_shift;
    cumsum_loops_t l;
    if (axis.is_const && axis.data != NULL && !cumsum_loops(d, tflm_rd_i32(axis.data), &l)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "axis %d is out of range for %d dimensions",
            (int)tflm_rd_i32(axis.data), (int)in.ndims);
    }
    return TFLM_OK;
}

// Each line along the axis: `depth` values `after` apart, walked from its
// first value or (reverse) its last.
static void cumsum_f32(const cumsum_data_t *d, const cumsum_loops_t *l, const float *in, float *out) {
    const ptrdiff_t step = d->reverse ? -(ptrdiff_t)l->after : (ptrdiff_t)l->after;
    const size_t block = (size_t)l->depth * l->after;
    const size_t first = d->reverse ? block - l->after : 0;
    for (uint32_t b = 0; b < l->before; ++b) {
        for (uint32_t a = 0; a < l->after; ++a) {
            size_t at = (size_t)b * block + first + a;
            float acc = 0.0f;
            for (uint32_t k = 0; k < l->depth; ++k, at += (size_t)step) {
                if (d->exclusive) {
                    out[at] = acc;
                    acc += in[at];
                } else {
                    acc += in[at];
                    out[at] = acc;
                }
            }
        }
    }
}

static void cumsum_s8(const cumsum_data_t *d, const cumsum_loops_t *l, const int8_t *in, int8_t *out) {
    const ptrdiff_t step = d->reverse ? -(ptrdiff_t)l->after : (ptrdiff_t)l->after;
    const size_t block = (size_t)l->depth * l->after;
    const size_t first = d->reverse ? block - l->after : 0;
    const tflm_requant_t rin = tflm_requant_init(d->in_mult, d->in_shift);
    const tflm_requant_t rout = tflm_requant_init(d->out_mult, d->out_shift);
    const int32_t start = tflm_requant(&rin, -d->in_zp * (1 << CUMSUM_LEFT_SHIFT));
    for (uint32_t b = 0; b < l->before; ++b) {
        for (uint32_t a = 0; a < l->after; ++a) {
            size_t at = (size_t)b * block + first + a;
            int32_t acc = start;
            for (uint32_t k = 0; k < l->depth; ++k, at += (size_t)step) {
                int32_t y = tflm_requant(&rin, (in[at] - d->in_zp) * (1 << CUMSUM_LEFT_SHIFT));
                int32_t sum = tflm_wrap_add(acc, y);
                int32_t v = d->exclusive ? acc : sum;
                acc = sum;
                v = tflm_wrap_add(tflm_requant(&rout, v), d->out_zp);
                out[at] = (int8_t)tflm_clamp(v, INT8_MIN, INT8_MAX);
            }
        }
    }
}

tflm_status_t tflm_cumsum_eval(tflm_eval_t *e) {
    const cumsum_data_t *d = e->data;
    int32_t axis = tflm_rd_i32(e->in[1]);
    cumsum_loops_t l;
    if (!cumsum_loops(d, axis, &l)) {
        // TFLM fails the same way.
        return tflm_error(e->err, TFLM_ERR_RUNTIME, "axis %d is out of range for %d dimensions", (int)axis,
            (int)d->ndims);
    }
    if (l.depth == 0 || l.before == 0 || l.after == 0) {
        return TFLM_OK;
    }
    if (d->is_int8) {
        cumsum_s8(d, &l, e->in[0], e->out[0]);
    } else {
        cumsum_f32(d, &l, e->in[0], e->out[0]);
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_CUMSUM
