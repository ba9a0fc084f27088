// Checks shared by the kernels of TFLM's signal library (signal.c,
// signal_stream.c, signal_rfft.c, signal_irfft.c): a tensor's type and rank,
// element counts. Each returns TFLM_OK or sets the error.
#ifndef TFLM_KERNELS_SIGNAL_COMMON_H
#define TFLM_KERNELS_SIGNAL_COMMON_H

#include "engine/kernel.h"

// Checks one tensor's type and, with ndims >= 0, its number of dimensions.
static inline tflm_status_t signal_expect(tflm_prepare_t *p, const tflm_tinfo_t *t, const char *what, unsigned type, int ndims) {
    if (t->index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%s missing", what);
    }
    if (t->type != type) {
        return tflm_prep_unsupported_type(p, what, t->type);
    }
    if (ndims >= 0 && t->ndims != ndims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%s has %u dimensions, expected %d", what, (unsigned)t->ndims, ndims);
    }
    return TFLM_OK;
}

static inline tflm_status_t signal_one_value(tflm_prepare_t *p, const tflm_tinfo_t *t, const char *what) {
    if (t->elements != 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%s has %u elements, expected 1", what, (unsigned)t->elements);
    }
    return TFLM_OK;
}

static inline tflm_status_t signal_same_count(tflm_prepare_t *p, const tflm_tinfo_t *a, const tflm_tinfo_t *b, const char *what) {
    if (a->elements != b->elements) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%s has %u elements, expected %u", what,
            (unsigned)b->elements, (unsigned)a->elements);
    }
    return TFLM_OK;
}

#endif // TFLM_KERNELS_SIGNAL_COMMON_H
