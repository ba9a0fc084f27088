// TILE: float32, int8, uint8, int16, int32, int64 and bool tensors of up to
// 6 dimensions, repeated along each dimension as many times as the int32 or
// int64 multiples say, as TensorFlow Lite defines the op (TFLM has no
// kernel: Keras 3's UpSampling2D and RepeatVector convert to it). The bytes
// are copied as they are, quantized ones too, as TF Lite copies them. The
// multiples may be computed: constant ones are checked here once, others at
// each invoke, against the output's shape (the arena is planned for it).
//
// The output is filled from the inside out: each input row lands where its
// indices put it and is repeated along the last dimension; then, from the
// second last dimension outwards, the block already filled below each
// index is repeated along that dimension. Every byte is written once by a
// memcpy of a block that doubles each time.
#include "kernels/kernels.h"

#if TFLM_KERNEL_TILE

#define TILE_MAX_DIMS (6)

typedef struct {
    uint8_t rank;
    uint8_t elem_size;
    uint8_t dynamic;   // multiples read at run time
    uint8_t int64;     // multiples are int64 (else int32)
    int32_t in[TILE_MAX_DIMS];
    int32_t out[TILE_MAX_DIMS];
} tile_data_t;

// Whether each input dimension times its multiple is the output's.
static bool tile_fits(const tile_data_t *d, const uint8_t *multiples) {
    for (uint32_t i = 0; i < d->rank; ++i) {
        int64_t m = d->int64 ? (int64_t)tflm_rd_u64(multiples + 8u * i) : tflm_rd_i32(multiples + 4u * i);
        if (m < 0 || m > INT32_MAX || (int64_t)d->in[i] * m != d->out[i]) {
            return false;
        }
    }
    return true;
}

tflm_status_t tflm_tile_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 2, 2, 1);
    if (st) {
        return st;
    }
    tflm_tinfo_t in, multiples, out;
    if ((st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_input(p, 1, &multiples))
        || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (in.index < 0 || multiples.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input or multiples missing");
    }
    static const uint8_t in_types[] = {TFLM_FLOAT32, TFLM_INT8, TFLM_UINT8, TFLM_INT16, TFLM_INT32, TFLM_INT64, TFLM_BOOL};
    if ((st = tflm_prep_type_in(p, "input", &in, in_types, sizeof(in_types), NULL))) {
        return st;
    }
    if (multiples.type != TFLM_INT32 && multiples.type != TFLM_INT64) {
        return tflm_prep_unsupported_type(p, "multiples", multiples.type);
    }
    if ((st = tflm_prep_same_type(p, &in, &out))) {
        return st;
    }
    if (in.ndims > TILE_MAX_DIMS) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "at most %u dimensions supported", (unsigned)TILE_MAX_DIMS);
    }
    if (out.ndims != in.ndims || multiples.ndims != 1 || multiples.elements != in.ndims) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "multiples must hold one value per dimension of input and output");
    }
    tile_data_t tmp;
    memset(&tmp, 0, sizeof(tmp));
    tmp.rank = (uint8_t)in.ndims;
    tmp.elem_size = (uint8_t)tflm_type_size(in.type);
    tmp.dynamic = !multiples.is_const;
    tmp.int64 = multiples.type == TFLM_INT64;
    memcpy(tmp.in, in.dims, sizeof(int32_t) * in.ndims);
    memcpy(tmp.out, out.dims, sizeof(int32_t) * out.ndims);
    if (!tmp.dynamic && !tile_fits(&tmp, multiples.data)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "multiples do not give the output's shape");
    }
    tile_data_t *d = tflm_prep_alloc(p, sizeof(tile_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    *d = tmp;
    return TFLM_OK;
}

// The block of `bytes` at dst followed by copies of itself: `total` bytes.
static void tile_repeat(uint8_t *dst, size_t bytes, size_t total) {
    for (size_t done = bytes; done < total;) {
        size_t k = TFLM_MIN(done, total - done);
        memcpy(dst + done, dst, k);
        done += k;
    }
}

tflm_status_t tflm_tile_eval(tflm_eval_t *e) {
    const tile_data_t *d = e->data;
    if (d->dynamic && !tile_fits(d, e->in[1])) {
        return tflm_error(e->err, TFLM_ERR_RUNTIME, "multiples do not give the output's shape");
    }
    const int32_t n = d->rank;
    // below[k]: bytes of the output under one index of dimension k - 1.
    size_t below[TILE_MAX_DIMS + 1];
    below[n] = d->elem_size;
    for (int32_t k = n - 1; k >= 0; --k) {
        below[k] = below[k + 1] * (size_t)d->out[k];
    }
    if (below[0] == 0) {
        return TFLM_OK; // nothing to write
    }
    const uint8_t *in = e->in[0];
    uint8_t *out = e->out[0];
    if (n == 0) {
        memcpy(out, in, d->elem_size);
        return TFLM_OK;
    }
    for (int32_t k = n - 1; k >= 0; --k) {
        // The first in[k] entries along k (complete below k), at each index
        // of dimensions 0..k-1 within the input's sizes, repeated along k.
        const size_t block = (size_t)d->in[k] * below[k + 1];
        int32_t idx[TILE_MAX_DIMS] = { 0 };
        size_t at = 0, count = 1;
        for (int32_t t = 0; t < k; ++t) {
            count *= (size_t)d->in[t];
        }
        for (size_t c = 0; c < count; ++c) {
            if (k == n - 1) {
                memcpy(out + at, in + c * block, block); // the input's rows, in order
            }
            tile_repeat(out + at, block, below[k]);
            for (int32_t t = k - 1; t >= 0; --t) {
                if (++idx[t] < d->in[t]) {
                    at += below[t + 1];
                    break;
                }
                at -= (size_t)(d->in[t] - 1) * below[t + 1];
                idx[t] = 0;
            }
        }
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_TILE
