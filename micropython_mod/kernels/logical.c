// LOGICAL_AND and LOGICAL_OR (bools with broadcasting) and LOGICAL_NOT, as
// TFLM's reference computes them. Bools are bytes; any non-zero byte reads
// as true, results are 0 or 1. TFLM's AND and OR do not check their types
// (other types are read as bools, which C++ leaves undefined): refused here.
#include "kernels/kernels.h"
#include "kernels/broadcast.h"

#if TFLM_KERNEL_LOGICAL_AND || TFLM_KERNEL_LOGICAL_OR

typedef struct {
    uint8_t is_or;
    uint8_t reserved[3];
    // then the broadcast plan
} logical_data_t;

static uint8_t and_bool(const void *ctx, uint8_t a, uint8_t b) {
    (void)ctx;
    return (a != 0) & (b != 0);
}
static uint8_t or_bool(const void *ctx, uint8_t a, uint8_t b) {
    (void)ctx;
    return (a | b) != 0;
}
TFLM_BCAST_WALKER_TO(walk_logical, uint8_t, uint8_t)

static const uint8_t logical_types[] = { TFLM_BOOL };

static tflm_status_t logical_prepare(tflm_prepare_t *p, bool is_or) {
    tflm_tinfo_t io[3];
    tflm_status_t st;
    logical_data_t *d = tflm_binary_data(p, logical_types, sizeof(logical_types), (uint32_t)sizeof(logical_data_t), io,
        NULL, &st);
    if (d != NULL) {
        d->is_or = is_or;
    }
    return st;
}

static tflm_status_t logical_eval(tflm_eval_t *e) {
    const logical_data_t *d = e->data;
    const int32_t *plan = (const int32_t *)(d + 1);
    if (d->is_or) {
        walk_logical(plan, e->in[0], e->in[1], e->out[0], or_bool, NULL);
    } else {
        walk_logical(plan, e->in[0], e->in[1], e->out[0], and_bool, NULL);
    }
    return TFLM_OK;
}

#endif

#if TFLM_KERNEL_LOGICAL_AND
tflm_status_t tflm_logical_and_prepare(tflm_prepare_t *p) {
    return logical_prepare(p, false);
}

tflm_status_t tflm_logical_and_eval(tflm_eval_t *e) {
    return logical_eval(e);
}
#endif

#if TFLM_KERNEL_LOGICAL_OR
tflm_status_t tflm_logical_or_prepare(tflm_prepare_t *p) {
    return logical_prepare(p, true);
}

tflm_status_t tflm_logical_or_eval(tflm_eval_t *e) {
    return logical_eval(e);
}
#endif

#if TFLM_KERNEL_LOGICAL_NOT
// The element count, all the kernel keeps.
typedef struct {
    uint32_t elements;
} logical_not_data_t;

static const uint8_t logical_not_types[] = { TFLM_BOOL };

tflm_status_t tflm_logical_not_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, out;
    tflm_status_t st = tflm_prep_unary(p, logical_not_types, sizeof(logical_not_types), &in, &out, NULL);
    if (st) {
        return st;
    }
    logical_not_data_t *d = tflm_prep_alloc(p, (uint32_t)sizeof(logical_not_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->elements = out.elements;
    return TFLM_OK;
}

tflm_status_t tflm_logical_not_eval(tflm_eval_t *e) {
    const logical_not_data_t *d = e->data;
    const uint8_t *in = e->in[0];
    uint8_t *out = e->out[0];
    const uint32_t n = d->elements;
    for (uint32_t i = 0; i < n; ++i) {
        out[i] = in[i] == 0;
    }
    return TFLM_OK;
}
#endif
