// REVERSE_V2: float32, int8, uint8, int16, int32, int64 and bool tensors of
// up to 6 dimensions, reversed along int32 axes (negative ones count from
// the end) that must be adjacent once sorted, as TFLM's reference. TFLM
// reads the axes at run time, so they may be computed: constant ones are
// checked here once, others at each invoke.
//
// Adjacent axes reversed together are one reversed middle dimension: the
// tensor is outer x middle x inner, and each inner block (a copy) lands at
// the mirrored middle position.
#include "kernels/kernels.h"

#if TFLM_KERNEL_REVERSE_V2

#define REVERSE_MAX_DIMS (6)

typedef struct {
    uint8_t rank;
    uint8_t elem_size;
    uint8_t dynamic;    // axes read at run time
    uint8_t n_axes;
    int32_t dims[REVERSE_MAX_DIMS];
    uint32_t outer, middle, inner;  // resolved when not dynamic
} reverse_data_t;

// outer, middle and inner element counts from the axes; an error unless
// they are adjacent dimensions (at run time, always a RuntimeError).
static tflm_status_t reverse_resolve(const reverse_data_t *d, const uint8_t *axes, tflm_error_t *err, bool running,
    uint32_t *outer, uint32_t *middle, uint32_t *inner) {
    const tflm_status_t bad_value = running ? TFLM_ERR_RUNTIME : TFLM_ERR_VALUE;
    const tflm_status_t unsupported = running ? TFLM_ERR_RUNTIME : TFLM_ERR_NOT_IMPLEMENTED;
    const int32_t rank = d->rank;
    bool seen[REVERSE_MAX_DIMS] = { false };
    int32_t lo = rank, hi = -1;
    for (uint32_t i = 0; i < d->n_axes; ++i) {
        int32_t a = tflm_rd_i32(axes + 4u * i);
        if (a < -rank || a >= rank) {
            return tflm_error(err, bad_value, "axis %d is out of range for %d dimensions", (int)a, (int)rank);
        }
        a = a < 0 ? a + rank : a;
        if (seen[a]) {
            // TFLM's sorted axes are then not adjacent.
            return tflm_error(err, unsupported, "axes that repeat or are not adjacent are not supported");
        }
        seen[a] = true;
        lo = TFLM_MIN(lo, a);
        hi = TFLM_MAX(hi, a);
    }
    if (hi - lo + 1 != (int32_t)d->n_axes) {
        return tflm_error(err, unsupported, "axes that repeat or are not adjacent are not supported");
    }
    uint32_t o = 1, m = 1, n = 1;
    for (int32_t i = 0; i < rank; ++i) {
        uint32_t *part = i < lo ? &o : i <= hi ? &m : &n;
        *part *= (uint32_t)d->dims[i];
    }
    *outer = o;
    *middle = m;
    *inner = n;
    return TFLM_OK;
}

tflm_status_t tflm_reverse_v2_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 2, 2, 1);
    if (st) {
        return st;
    }
    tflm_tinfo_t in, axes, out;
    if ((st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_input(p, 1, &axes))
        || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (in.index < 0 || axes.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input or axes missing");
    }
    static const uint8_t in_types[] = {TFLM_FLOAT32, TFLM_INT8, TFLM_UINT8, TFLM_INT16, TFLM_INT32, TFLM_INT64, TFLM_BOOL};
    if ((st = tflm_prep_type_in(p, "input", &in, in_types, sizeof(in_types), NULL))) {
        return st;
    }
    if (axes.type != TFLM_INT32) {
        return tflm_prep_unsupported_type(p, "axis", axes.type);
    }
    if ((st = tflm_prep_same_type(p, &in, &out))) {
        return st;
    }
    if (in.ndims > REVERSE_MAX_DIMS) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "at most %u dimensions supported", (unsigned)REVERSE_MAX_DIMS);
    }
    // No axis at all is undefined in TFLM (it reads before its list).
    if (axes.ndims != 1 || axes.elements < 1 || axes.elements > in.ndims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "axes must list 1 to %u dimensions", (unsigned)in.ndims);
    }
    bool same = out.ndims == in.ndims;
    for (uint32_t i = 0; same && i < in.ndims; ++i) {
        same = out.dims[i] == in.dims[i];
    }
    if (!same) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output shape differs from the input's");
    }
    reverse_data_t tmp;
    memset(&tmp, 0, sizeof(tmp));
    tmp.rank = (uint8_t)in.ndims;
    tmp.elem_size = (uint8_t)tflm_type_size(in.type);
    tmp.dynamic = !axes.is_const;
    tmp.n_axes = (uint8_t)axes.elements;
    memcpy(tmp.dims, in.dims, sizeof(int32_t) * in.ndims);
    if (!tmp.dynamic && (st = reverse_resolve(&tmp, axes.data, p->err, false, &tmp.outer, &tmp.middle, &tmp.inner))) {
        return st;
    }
    reverse_data_t *d = tflm_prep_alloc(p, sizeof(reverse_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    *d = tmp;
    return TFLM_OK;
}

// n values of `es` bytes in reverse order (the innermost axis reversed).
static void reverse_values(uint8_t *dst, const uint8_t *src, uint32_t n, uint32_t es) {
    src += (size_t)n * es;
    switch (es) {
        case 1:
            for (uint32_t i = 0; i < n; ++i) {
                *dst++ = *--src;
            }
            break;
        case 2:
            for (uint32_t i = 0; i < n; ++i, dst += 2) {
                src -= 2;
                memcpy(dst, src, 2);
            }
            break;
        case 4:
            for (uint32_t i = 0; i < n; ++i, dst += 4) {
                src -= 4;
                memcpy(dst, src, 4);
            }
            break;
        default:
            for (uint32_t i = 0; i < n; ++i, dst += es) {
                src -= es;
                memcpy(dst, src, es);
            }
            break;
    }
}

tflm_status_t tflm_reverse_v2_eval(tflm_eval_t *e) {
    const reverse_data_t *d = e->data;
    uint32_t outer = d->outer, middle = d->middle, inner = d->inner;
    tflm_status_t st;
    if (d->dynamic && (st = reverse_resolve(d, e->in[1], e->err, true, &outer, &middle, &inner))) {
        return st;
    }
    const uint32_t es = d->elem_size;
    const size_t block = (size_t)inner * es, span = (size_t)middle * block;
    const uint8_t *in = e->in[0];
    uint8_t *out = e->out[0];
    for (uint32_t o = 0; o < outer; ++o, in += span, out += span) {
        if (inner == 1) {
            reverse_values(out, in, middle, es);
            continue;
        }
        const uint8_t *src = in;
        uint8_t *dst = out + span;
        for (uint32_t m = 0; m < middle; ++m, src += block) {
            dst -= block;
            memcpy(dst, src, block);
        }
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_REVERSE_V2
