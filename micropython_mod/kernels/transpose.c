// TRANSPOSE: float32, int8 and int16 tensors of 1 to 5 dimensions with a
// constant int32 permutation, as TFLM's reference.
#include "kernels/kernels.h"

#if TFLM_KERNEL_TRANSPOSE

#define TRANSPOSE_DIMS (5)

typedef struct {
    uint8_t elem_size;
    uint8_t reserved[3];
    int32_t out_dims[TRANSPOSE_DIMS]; // padded to 5-D at the front
    uint32_t stride[TRANSPOSE_DIMS];  // input elements per step along each output dimension
} transpose_data_t;

tflm_status_t tflm_transpose_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, perm, out;
    tflm_status_t st = tflm_prep_io_2_1(p, &in, &perm, &out);
    if (st) {
        return st;
    }
    if (in.ndims < 1 || in.ndims > TRANSPOSE_DIMS) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "only 1D-5D inputs are supported");
    }
    if ((st = tflm_prep_same_type(p, &in, &out))) {
        return st;
    }
    if (in.type != TFLM_FLOAT32 && in.type != TFLM_INT8 && in.type != TFLM_INT16) {
        return tflm_prep_unsupported_type(p, "input", in.type);
    }
    if (!perm.is_const) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "non-constant permutation is not supported");
    }
    if (perm.type != TFLM_INT32) {
        return tflm_prep_unsupported_type(p, "permutation", perm.type);
    }
    const uint32_t dims = in.ndims;
    if (perm.ndims != 1 || perm.dims[0] != (int32_t)dims || out.ndims != dims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "permutation must hold one value per input dimension");
    }
    uint32_t in_stride[TRANSPOSE_DIMS];
    in_stride[dims - 1] = 1;
    for (int32_t i = (int32_t)dims - 2; i >= 0; --i) {
        in_stride[i] = in_stride[i + 1] * (uint32_t)in.dims[i + 1];
    }
    const uint32_t pad = TRANSPOSE_DIMS - dims;
    int32_t out_dims[TRANSPOSE_DIMS];
    uint32_t stride[TRANSPOSE_DIMS];
    bool used[TRANSPOSE_DIMS] = { false };
    for (uint32_t k = 0; k < pad; ++k) {
        out_dims[k] = 1;
        stride[k] = 0;
    }
    for (uint32_t i = 0; i < dims; ++i) {
        int32_t axis = tflm_rd_i32(perm.data + 4u * i);
        if (axis < 0 || axis >= (int32_t)dims || used[axis]) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "permutation is out of bounds or repeats an axis");
        }
        used[axis] = true;
        if (out.dims[i] != in.dims[axis]) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "output dimension %u is %d, expected %d",
                (unsigned)i, (int)out.dims[i], (int)in.dims[axis]);
        }
        // An empty tensor copies nothing.
        out_dims[pad + i] = in.elements ? out.dims[i] : 0;
        stride[pad + i] = in_stride[axis];
    }
    transpose_data_t *d = tflm_prep_alloc(p, sizeof(transpose_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->elem_size = (uint8_t)tflm_type_size(in.type);
    memcpy(d->out_dims, out_dims, sizeof(out_dims));
    memcpy(d->stride, stride, sizeof(stride));
    return TFLM_OK;
}

tflm_status_t tflm_transpose_eval(tflm_eval_t *e) {
    const transpose_data_t *d = e->data;
    const size_t es = d->elem_size;
    const uint8_t *in = e->in[0];
    uint8_t *out = e->out[0];
    const int32_t *n = d->out_dims;
    const uint32_t *s = d->stride;
    for (int32_t i0 = 0; i0 < n[0]; ++i0) {
        for (int32_t i1 = 0; i1 < n[1]; ++i1) {
            for (int32_t i2 = 0; i2 < n[2]; ++i2) {
                for (int32_t i3 = 0; i3 < n[3]; ++i3) {
                    size_t at = (size_t)i0 * s[0] + (size_t)i1 * s[1] + (size_t)i2 * s[2] + (size_t)i3 * s[3];
                    for (int32_t i4 = 0; i4 < n[4]; ++i4) {
                        memcpy(out, in + at * es, es);
                        out += es;
                        at += s[4];
                    }
                }
            }
        }
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_TRANSPOSE
