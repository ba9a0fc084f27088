// CONCATENATION: float32, int8, int16, int32, int64 and bool, as TFLM's
// reference: a plain copy, so int8 inputs must share the output's
// quantization and only no fused activation is accepted.
#include "kernels/kernels.h"
#include "engine/schema.h"

#if TFLM_KERNEL_CONCATENATION

// ConcatenationOptions fields
// TFLM's limits.
#define CONCAT_MAX_INPUTS (10)
#define CONCAT_MAX_DIMS (6)

typedef struct {
    uint32_t outer;
    uint32_t count;
    // then uint32 bytes[count]: bytes each input gives per outer step
} concat_data_t;

tflm_status_t tflm_concatenation_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 1, CONCAT_MAX_INPUTS, 1);
    if (st) {
        return st;
    }
    uint32_t n = tflm_prep_num_inputs(p);
    tflm_tinfo_t out, in;
    if ((st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (tflm_prep_opt_u8(p, TFLM_OPT_CONCATENATION_FUSED_ACTIVATION_FUNCTION, TFLM_ACT_NONE) != TFLM_ACT_NONE) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "fused activation is not supported");
    }
    static const uint8_t out_types[] = {TFLM_FLOAT32, TFLM_INT8, TFLM_INT16, TFLM_INT32, TFLM_INT64, TFLM_BOOL};
    if ((st = tflm_prep_type_in(p, "output", &out, out_types, sizeof(out_types), NULL))) {
        return st;
    }
    if (out.ndims > CONCAT_MAX_DIMS) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "at most %u dimensions supported", (unsigned)CONCAT_MAX_DIMS);
    }
    int32_t axis = tflm_prep_opt_i32(p, TFLM_OPT_CONCATENATION_AXIS, 0);
    if (axis < 0) {
        axis += (int32_t)out.ndims;
    }
    if (axis < 0 || axis >= (int32_t)out.ndims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "axis %d out of range for %u dimensions",
            (int)tflm_prep_opt_i32(p, TFLM_OPT_CONCATENATION_AXIS, 0), (unsigned)out.ndims);
    }
    uint32_t es = (uint32_t)tflm_type_size(out.type);
    uint32_t outer = 1, inner = 1;
    for (int32_t i = 0; i < axis; ++i) {
        outer *= (uint32_t)out.dims[i];
    }
    for (int32_t i = axis + 1; i < (int32_t)out.ndims; ++i) {
        inner *= (uint32_t)out.dims[i];
    }
    // Checks every input (the dry pass too), so the real pass cannot fail
    // halfway through the loop below.
    int64_t total = 0;
    for (uint32_t k = 0; k < n; ++k) {
        if ((st = tflm_prep_input(p, k, &in))) {
            return st;
        }
        if (in.index < 0 || in.type != out.type) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "input %u is missing or not %s", (unsigned)k, tflm_type_name(out.type));
        }
        if (in.ndims != out.ndims) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "input %u has %u dimensions, output %u",
                (unsigned)k, (unsigned)in.ndims, (unsigned)out.ndims);
        }
        for (int32_t i = 0; i < (int32_t)out.ndims; ++i) {
            if (i != axis && in.dims[i] != out.dims[i]) {
                return tflm_error(p->err, TFLM_ERR_VALUE, "input %u does not match the output's shape", (unsigned)k);
            }
        }
        total += in.dims[axis];
        // TFLM requires int8 inputs quantized as the output (it copies bytes).
        if (out.type == TFLM_INT8 && (tflm_prep_scale(p, &in, 0) != tflm_prep_scale(p, &out, 0)
                                      || tflm_prep_zero_point(p, &in, 0) != tflm_prep_zero_point(p, &out, 0))) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "int8 input %u is not quantized as the output", (unsigned)k);
        }
    }
    if (total != out.dims[axis]) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "inputs add up to %d along axis %d, output has %d",
            (int)total, (int)axis, (int)out.dims[axis]);
    }
    concat_data_t *d = tflm_prep_alloc(p, (uint32_t)sizeof(concat_data_t) + 4u * n);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    // Nothing to copy into an empty output (its other dimensions may be anything).
    d->outer = out.elements ? outer : 0;
    d->count = n;
    uint32_t *bytes = (uint32_t *)(d + 1);
    for (uint32_t k = 0; k < n; ++k) {
        if ((st = tflm_prep_input(p, k, &in))) {
            return st;
        }
        bytes[k] = (uint32_t)in.dims[axis] * inner * es;
    }
    return TFLM_OK;
}

tflm_status_t tflm_concatenation_eval(tflm_eval_t *e) {
    const concat_data_t *d = e->data;
    const uint32_t *bytes = (const uint32_t *)(d + 1);
    uint8_t *out = e->out[0];
    for (uint32_t k = 0; k < d->outer; ++k) {
        for (uint32_t i = 0; i < d->count; ++i) {
            if (bytes[i]) {
                memcpy(out, (const uint8_t *)e->in[i] + (size_t)k * bytes[i], bytes[i]);
                out += bytes[i];
            }
        }
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_CONCATENATION
