// EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS and LESS_EQUAL with
// broadcasting, bool output, bit-exact with TFLM's reference: float32, int32
// and int64 compare raw values (IEEE: a NaN is unequal to everything), int8
// compares both inputs rescaled as TFLM does ((x - zero point) * 2^8, each
// times its own scale as a multiplier below one), EQUAL and NOT_EQUAL also
// take bools. TFLM's GREATER accepts int16 but never sets up its rescaling
// (every result compares two zeros): refused here.
//
// GREATER and GREATER_EQUAL run as LESS and LESS_EQUAL with the inputs
// swapped (the same for NaNs), so each type has four loops.
#include "kernels/kernels.h"
#include "kernels/broadcast.h"
#include "engine/quant.h"

#if TFLM_KERNEL_EQUAL || TFLM_KERNEL_NOT_EQUAL || TFLM_KERNEL_GREATER || TFLM_KERNEL_GREATER_EQUAL \
    || TFLM_KERNEL_LESS || TFLM_KERNEL_LESS_EQUAL

enum { CMP_EQ, CMP_NE, CMP_LT, CMP_LE };
// How the inputs' values are compared.
enum { CMP_BOOL, CMP_FLOAT32, CMP_INT32, CMP_INT64, CMP_INT8_RAW, CMP_INT8_SCALED };

typedef struct {
    uint8_t kind;
    uint8_t cmp;
    uint8_t swap;       // input 1 is compared as the right-hand side
    uint8_t reserved;
    // int8, in comparison order: zero points and multipliers below one.
    int32_t zero_point[2];
    int32_t multiplier[2];
    int32_t shift[2];
    // then the broadcast plan
} cmp_data_t;

#define CMP_LEFT_SHIFT (8)

// The element operations of each value type, bools as bytes (any non-zero
// byte is true), and a loop per operation.
#define CMP_OPS(T, sfx) \
    static uint8_t eq_##sfx(const void *ctx, T a, T b) { \
        (void)ctx; \
        return a == b; \
    } \
    static uint8_t ne_##sfx(const void *ctx, T a, T b) { \
        (void)ctx; \
        return a != b; \
    } \
    static uint8_t lt_##sfx(const void *ctx, T a, T b) { \
        (void)ctx; \
        return a < b; \
    } \
    static uint8_t le_##sfx(const void *ctx, T a, T b) { \
        (void)ctx; \
        return a <= b; \
    } \
    TFLM_BCAST_WALKER_TO(walk_##sfx, T, uint8_t) \
    static void cmp_##sfx(const int32_t *plan, unsigned cmp, const T *a, const T *b, uint8_t *out) { \
        switch (cmp) { \
            case CMP_EQ: \
                walk_##sfx(plan, a, b, out, eq_##sfx, NULL); \
                break; \
            case CMP_NE: \
                walk_##sfx(plan, a, b, out, ne_##sfx, NULL); \
                break; \
            case CMP_LT: \
                walk_##sfx(plan, a, b, out, lt_##sfx, NULL); \
                break; \
            default: \
                walk_##sfx(plan, a, b, out, le_##sfx, NULL); \
                break; \
        } \
    }

CMP_OPS(float, float32)
CMP_OPS(int32_t, int32)
CMP_OPS(int64_t, int64)
CMP_OPS(int8_t, int8)

// Bools: only EQUAL and NOT_EQUAL take them.
static uint8_t eq_bool(const void *ctx, uint8_t a, uint8_t b) {
    (void)ctx;
    return (a != 0) == (b != 0);
}
static uint8_t ne_bool(const void *ctx, uint8_t a, uint8_t b) {
    (void)ctx;
    return (a != 0) != (b != 0);
}
TFLM_BCAST_WALKER_TO(walk_bool, uint8_t, uint8_t)

// int8 rescaled as TFLM does, each input in 32-bit arithmetic.
typedef struct {
    int32_t zp1, zp2;
    tflm_rescale8_t r1, r2;
} cmp_scale_t;

#define CMP_SCALED(name, expr) \
    static uint8_t name(const void *ctx, int8_t a, int8_t b) { \
        const cmp_scale_t *s = ctx; \
        const int32_t x = tflm_rescale8(&s->r1, a - s->zp1), y = tflm_rescale8(&s->r2, b - s->zp2); \
        return expr; \
    }
CMP_SCALED(eq_scaled, x == y)
CMP_SCALED(ne_scaled, x != y)
CMP_SCALED(lt_scaled, x < y)
CMP_SCALED(le_scaled, x <= y)

static void cmp_int8_scaled(const cmp_data_t *d, const int32_t *plan, const int8_t *a, const int8_t *b, uint8_t *out) {
    // In a local: stores to the bool output could alias the kernel data.
    cmp_scale_t s;
    s.zp1 = d->zero_point[0];
    s.zp2 = d->zero_point[1];
    s.r1 = tflm_rescale8_init(d->multiplier[0], d->shift[0], CMP_LEFT_SHIFT);
    s.r2 = tflm_rescale8_init(d->multiplier[1], d->shift[1], CMP_LEFT_SHIFT);
    switch (d->cmp) {
        case CMP_EQ:
            walk_int8(plan, a, b, out, eq_scaled, &s);
            break;
        case CMP_NE:
            walk_int8(plan, a, b, out, ne_scaled, &s);
            break;
        case CMP_LT:
            walk_int8(plan, a, b, out, lt_scaled, &s);
            break;
        default:
            walk_int8(plan, a, b, out, le_scaled, &s);
            break;
    }
}

// Whether rescaling keeps every pair of int8 values apart (strictly
// increasing over all values less the zero point): then inputs of equal
// quantization compare as their raw values, with no rescaling per element.
static bool rescale_keeps_order(int32_t zero_point, int32_t multiplier, int32_t shift) {
    const tflm_rescale8_t r = tflm_rescale8_init(multiplier, shift, CMP_LEFT_SHIFT);
    int32_t prev = tflm_rescale8(&r, -128 - zero_point);
    for (int32_t x = -127; x <= 127; ++x) {
        const int32_t v = tflm_rescale8(&r, x - zero_point);
        if (v <= prev) {
            return false;
        }
        prev = v;
    }
    return true;
}

static tflm_status_t cmp_int8_params(tflm_prepare_t *p, const tflm_tinfo_t *t, cmp_data_t *d, unsigned k) {
    if (t->n_scales == 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "int8 comparison needs quantized inputs");
    }
    // The 32-bit rescaling holds for zero points an int8 tensor can have.
    if (t->zero_point < -128 || t->zero_point > 127) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "zero point %d is outside the int8 range", (int)t->zero_point);
    }
    d->zero_point[k] = t->zero_point;
    return tflm_prep_multiplier_below_one(p, (double)t->scale, &d->multiplier[k], &d->shift[k]);
}

// `cmp`: the comparison as asked (CMP_EQ, CMP_NE, CMP_LT, CMP_LE), `swap`
// for GREATER and GREATER_EQUAL (input 1 on the right).
static tflm_status_t cmp_prepare(tflm_prepare_t *p, unsigned cmp, bool swap, bool takes_bool) {
    tflm_tinfo_t in1, in2, out;
    tflm_status_t st = tflm_binary_io(p, &in1, &in2, &out);
    if (st) {
        return st;
    }
    uint8_t kind;
    switch (in1.type) {
        case TFLM_BOOL:
            if (!takes_bool) {
                return tflm_prep_unsupported_type(p, "input", in1.type);
            }
            kind = CMP_BOOL;
            break;
        case TFLM_FLOAT32:
            kind = CMP_FLOAT32;
            break;
        case TFLM_INT32:
            kind = CMP_INT32;
            break;
        case TFLM_INT64:
            kind = CMP_INT64;
            break;
        case TFLM_INT8:
            kind = CMP_INT8_SCALED;
            break;
        default:
            return tflm_prep_unsupported_type(p, "input", in1.type);
    }
    if (in2.type != in1.type || out.type != TFLM_BOOL) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "inputs of types %s and %s with output %s: expected equal types and bool",
            tflm_type_name(in1.type), tflm_type_name(in2.type), tflm_type_name(out.type));
    }
    const tflm_tinfo_t *a = swap ? &in2 : &in1, *b = swap ? &in1 : &in2;
    cmp_data_t *d = tflm_bcast_data(p, a, b, &out, (uint32_t)sizeof(cmp_data_t), &st);
    if (d == NULL) {
        return st;
    }
    d->cmp = (uint8_t)cmp;
    d->swap = swap;
    if (kind == CMP_INT8_SCALED) {
        if ((st = cmp_int8_params(p, a, d, 0)) || (st = cmp_int8_params(p, b, d, 1))) {
            return st;
        }
        if (a->scale == b->scale && d->zero_point[0] == d->zero_point[1]
            && rescale_keeps_order(d->zero_point[0], d->multiplier[0], d->shift[0])) {
            kind = CMP_INT8_RAW;
        }
    }
    d->kind = kind;
    return TFLM_OK;
}

static tflm_status_t cmp_eval(tflm_eval_t *e) {
    const cmp_data_t *d = e->data;
    const int32_t *plan = (const int32_t *)(d + 1);
    const void *a = e->in[d->swap], *b = e->in[!d->swap];
    uint8_t *out = e->out[0];
    switch (d->kind) {
        case CMP_BOOL:
            if (d->cmp == CMP_EQ) {
                walk_bool(plan, a, b, out, eq_bool, NULL);
            } else {
                walk_bool(plan, a, b, out, ne_bool, NULL);
            }
            break;
        case CMP_FLOAT32:
            cmp_float32(plan, d->cmp, a, b, out);
            break;
        case CMP_INT32:
            cmp_int32(plan, d->cmp, a, b, out);
            break;
        case CMP_INT64:
            cmp_int64(plan, d->cmp, a, b, out);
            break;
        case CMP_INT8_RAW:
            cmp_int8(plan, d->cmp, a, b, out);
            break;
        default:
            cmp_int8_scaled(d, plan, a, b, out);
            break;
    }
    return TFLM_OK;
}

#endif

#if TFLM_KERNEL_EQUAL
tflm_status_t tflm_equal_prepare(tflm_prepare_t *p) {
    return cmp_prepare(p, CMP_EQ, false, true);
}

tflm_status_t tflm_equal_eval(tflm_eval_t *e) {
    return cmp_eval(e);
}
#endif

#if TFLM_KERNEL_NOT_EQUAL
tflm_status_t tflm_not_equal_prepare(tflm_prepare_t *p) {
    return cmp_prepare(p, CMP_NE, false, true);
}

tflm_status_t tflm_not_equal_eval(tflm_eval_t *e) {
    return cmp_eval(e);
}
#endif

#if TFLM_KERNEL_GREATER
tflm_status_t tflm_greater_prepare(tflm_prepare_t *p) {
    return cmp_prepare(p, CMP_LT, true, false);
}

tflm_status_t tflm_greater_eval(tflm_eval_t *e) {
    return cmp_eval(e);
}
#endif

#if TFLM_KERNEL_GREATER_EQUAL
tflm_status_t tflm_greater_equal_prepare(tflm_prepare_t *p) {
    return cmp_prepare(p, CMP_LE, true, false);
}

tflm_status_t tflm_greater_equal_eval(tflm_eval_t *e) {
    return cmp_eval(e);
}
#endif

#if TFLM_KERNEL_LESS
tflm_status_t tflm_less_prepare(tflm_prepare_t *p) {
    return cmp_prepare(p, CMP_LT, false, false);
}

tflm_status_t tflm_less_eval(tflm_eval_t *e) {
    return cmp_eval(e);
}
#endif

#if TFLM_KERNEL_LESS_EQUAL
tflm_status_t tflm_less_equal_prepare(tflm_prepare_t *p) {
    return cmp_prepare(p, CMP_LE, false, false);
}

tflm_status_t tflm_less_equal_eval(tflm_eval_t *e) {
    return cmp_eval(e);
}
#endif
