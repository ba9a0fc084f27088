// SELECT_V2: output i is x's value where the bool condition is true, else
// y's, the three inputs broadcast onto the output, in the types TFLM's
// reference takes (float32, int8, int16). Values are copied as they are
// (bit patterns: a NaN keeps its payload), whatever their quantization, as
// TFLM does.
#include "kernels/kernels.h"
#include "kernels/broadcast.h"

#if TFLM_KERNEL_SELECT_V2

typedef struct {
    uint8_t size;       // bytes per element: 1, 2 or 4
    uint8_t reserved[3];
    // then the three-input broadcast plan
} select_data_t;

// The loop for one element size.
#define SELECT_WALKER(name, T) \
    static void name(const int32_t *plan, const uint8_t *cond, const T *x, const T *y, T *out) { \
        tflm_bcast_iter_t it; \
        for (bool more = tflm_bcast3_begin(&it, plan); more; more = tflm_bcast3_next(&it)) { \
            const uint8_t *c = cond + it.at1; \
            const T *a = x + it.at2, *b = y + it.at3; \
            T *o = out + it.out; \
            const int32_t len = it.len, inc1 = it.inc1, inc2 = it.inc2, inc3 = it.inc3; \
            for (int32_t i = 0; i < len; ++i) { \
                o[i] = c[i * inc1] ? a[i * inc2] : b[i * inc3]; \
            } \
        } \
    }

SELECT_WALKER(select_8, uint8_t)
SELECT_WALKER(select_16, uint16_t)
SELECT_WALKER(select_32, uint32_t)

tflm_status_t tflm_select_v2_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t cond, x, y, out;
    tflm_status_t st = tflm_prep_io_3_1(p, &cond, &x, &y, &out);
    if (st) {
        return st;
    }
    if (cond.type != TFLM_BOOL) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "condition of type %s, expected bool", tflm_type_name(cond.type));
    }
    uint8_t size;
    switch (x.type) {
        case TFLM_INT8:
            size = 1;
            break;
        case TFLM_INT16:
            size = 2;
            break;
        case TFLM_FLOAT32:
            size = 4;
            break;
        default:
            return tflm_prep_unsupported_type(p, "input", x.type);
    }
    if ((st = tflm_binary_same_types(p, &x, &y, &out))) {
        return st;
    }
    tflm_bcast_plan_t plan;
    if ((st = tflm_bcast_plan3(p, &cond, &x, &y, &out, &plan))) {
        return st;
    }
    select_data_t *d = tflm_bcast_alloc(p, &plan, (uint32_t)sizeof(select_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->size = size;
    return TFLM_OK;
}

tflm_status_t tflm_select_v2_eval(tflm_eval_t *e) {
    const select_data_t *d = e->data;
    const int32_t *plan = (const int32_t *)(d + 1);
    if (d->size == 1) {
        select_8(plan, e->in[0], e->in[1], e->in[2], e->out[0]);
    } else if (d->size == 2) {
        select_16(plan, e->in[0], e->in[1], e->in[2], e->out[0]);
    } else {
        select_32(plan, e->in[0], e->in[1], e->in[2], e->out[0]);
    }
    return TFLM_OK;
}

#endif
