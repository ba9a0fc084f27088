// A kernel for tests only (built into tests/engine's binaries, never into
// firmware): CUSTOM op "TflmTest". Its custom options are int32 values
// [n, size_1 .. size_n, temp_bytes]: it asks for n scratch buffers of those
// sizes and for temp_bytes of temporary memory in prepare(). Its output is
// its first input XOR its second (if any), bytewise. eval() fills each
// scratch buffer with its own pattern first and checks them all after, so
// a scratch buffer that shares bytes with another, or with a live tensor,
// shows up as a wrong output or an error.
#include "kernels/kernels.h"

#if TFLM_TEST_KERNELS

typedef struct {
    uint32_t bytes;
    uint32_t n_in;
    uint32_t n_scratch;
    uint32_t scratch_bytes[TFLM_MAX_SCRATCH_PER_OP];
} test_data_t;

tflm_status_t tflm_test_kernel_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 1, 2, 1);
    tflm_tinfo_t a, b, out;
    if (st || (st = tflm_prep_input(p, 0, &a)) || (st = tflm_prep_input(p, 1, &b)) || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if (a.bytes != out.bytes || (b.index >= 0 && b.bytes != out.bytes)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "inputs and output differ in size");
    }
    tflm_fb_vec_t opts = p->op->custom_options;
    const uint8_t *raw = p->model->fb.buf + opts.pos;
    uint32_t n_words = opts.count / 4;
    uint32_t n = n_words ? tflm_rd_u32(raw) : 0;
    if (n_words < n + 2) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "custom options need %u words", (unsigned)(n + 2));
    }
    for (uint32_t k = 0; k < n; ++k) {
        uint32_t index;
        if ((st = tflm_prep_scratch(p, tflm_rd_u32(raw + 4 + 4 * k), &index))) {
            return st;
        }
    }
    uint32_t temp_bytes = tflm_rd_u32(raw + 4 + 4 * n);
    test_data_t *d = tflm_prep_alloc(p, sizeof(test_data_t));
    uint8_t *temp = temp_bytes ? tflm_prep_temp(p, temp_bytes) : NULL;
    if (d == NULL || (temp_bytes && temp == NULL)) {
        return tflm_prep_status(p);
    }
    if (temp) {
        memset(temp, 0x5a, temp_bytes); // use it, so a bad address would show
    }
    d->bytes = out.bytes;
    d->n_in = b.index >= 0 ? 2 : 1;
    d->n_scratch = n;
    for (uint32_t k = 0; k < n; ++k) {
        d->scratch_bytes[k] = tflm_rd_u32(raw + 4 + 4 * k);
    }
    return TFLM_OK;
}

tflm_status_t tflm_test_kernel_eval(tflm_eval_t *e) {
    const test_data_t *d = e->data;
    for (uint32_t k = 0; k < d->n_scratch; ++k) {
        if (((uintptr_t)e->scratch[k] % TFLM_ALIGN) != 0) {
            return tflm_error(e->err, TFLM_ERR_RUNTIME, "scratch buffer %u is not aligned", (unsigned)k);
        }
        memset(e->scratch[k], (int)(0xa0 + k), d->scratch_bytes[k]);
    }
    const uint8_t *a = e->in[0];
    const uint8_t *b = d->n_in > 1 ? e->in[1] : NULL;
    uint8_t *out = e->out[0];
    for (uint32_t i = 0; i < d->bytes; ++i) {
        out[i] = (uint8_t)(a[i] ^ (b ? b[i] : 0));
    }
    for (uint32_t k = 0; k < d->n_scratch; ++k) {
        const uint8_t *s = e->scratch[k];
        for (uint32_t i = 0; i < d->scratch_bytes[k]; ++i) {
            if (s[i] != 0xa0 + k) {
                return tflm_error(e->err, TFLM_ERR_RUNTIME, "scratch buffer %u was overwritten", (unsigned)k);
            }
        }
    }
    return TFLM_OK;
}

#endif // TFLM_TEST_KERNELS
