// Prepared models (see prepared.h).
#include "prepared.h"

tflm_status_t tflm_prepared_find(tflm_model_t *m, uint32_t n_nodes, uint32_t n_tensors, tflm_prepared_t *pd,
    tflm_error_t *err) {
    memset(pd, 0, sizeof(*pd));
    const uint8_t *p;
    uint32_t len;
    tflm_status_t st = tflm_model_own_metadata(m, TFLM_PREPARED_METADATA, TFLM_PREPARED_MAGIC, TFLM_PREPARED_VERSION,
        4 * TFLM_PREPARED_HEADER_WORDS, &p, &len, err);
    if (st || p == NULL) {
        return st;
    }
    uint32_t n = tflm_rd_u32(p + 8);
    if (n != n_nodes) {
        return tflm_error(err, TFLM_ERR_VALUE, TFLM_PREPARED_METADATA " metadata describes %u operators, the model has %u",
            (unsigned)n, (unsigned)n_nodes);
    }
    if ((uint64_t)4 * TFLM_PREPARED_HEADER_WORDS + (uint64_t)8 * n > len) {
        return tflm_error(err, TFLM_ERR_VALUE, TFLM_PREPARED_METADATA " metadata: %u bytes cannot hold %u entries",
            (unsigned)len, (unsigned)n);
    }
    if ((uintptr_t)p % TFLM_PREPARED_ALIGN != 0) {
        return tflm_error(err, TFLM_ERR_VALUE,
            "prepared data is not %u-byte aligned in memory; load the model into an aligned buffer",
            TFLM_PREPARED_ALIGN);
    }
    uint32_t lists = tflm_rd_u32(p + 12), recs = tflm_rd_u32(p + 16), n_const = tflm_rd_u32(p + 20);
    if (lists < 4 * TFLM_PREPARED_HEADER_WORDS + 8 * n || lists % 4 != 0 || lists > len) {
        return tflm_error(err, TFLM_ERR_VALUE, TFLM_PREPARED_METADATA " metadata: index lists at %u are out of place",
            (unsigned)lists);
    }
    // The map, then the constants' records at a multiple of 8, fill the rest.
    uint64_t consts = ((uint64_t)recs + 2 * (uint64_t)n_tensors + 7) & ~(uint64_t)7;
    if (recs < lists || recs % 4 != 0 || recs > len || n_const > n_tensors || n_const >= TFLM_MAX_RECORDS
        || consts + (uint64_t)n_const * sizeof(tflm_tensor_rec_t) != len) {
        return tflm_error(err, TFLM_ERR_VALUE,
            TFLM_PREPARED_METADATA " metadata: records of %u constants at %u do not fill its %u bytes",
            (unsigned)n_const, (unsigned)recs, (unsigned)len);
    }
    pd->pos = (uint32_t)(p - m->fb.buf);
    pd->len = len;
    pd->n_nodes = n;
    pd->lists_at = pd->pos + lists;
    pd->lists_end = pd->pos + recs;
    pd->recs_at = pd->pos + recs;
    pd->consts_at = pd->pos + (uint32_t)consts;
    pd->n_const = n_const;
    return TFLM_OK;
}

tflm_status_t tflm_prepared_entry(tflm_model_t *m, const tflm_prepared_t *pd, uint32_t node, uint32_t *at,
    uint32_t *bytes, tflm_error_t *err) {
    *at = 0;
    *bytes = 0;
    uint32_t pos = 0, len = 0;
    // The buffer's place is read again: the model's bytes may have changed.
    uint32_t buffer = tflm_model_metadata(m, TFLM_PREPARED_METADATA);
    if (buffer == UINT32_MAX || !tflm_model_buffer(m, buffer, &pos, &len) || pos != pd->pos || len != pd->len
        || node >= pd->n_nodes) {
        tflm_status_t st = tflm_model_check(m, err);
        return st ? st : tflm_error(err, TFLM_ERR_VALUE, TFLM_PREPARED_METADATA " metadata changed");
    }
    const uint8_t *e = m->fb.buf + pos + 4 * TFLM_PREPARED_HEADER_WORDS + 8 * node;
    uint32_t off = tflm_rd_u32(e), n = tflm_rd_u32(e + 4);
    if (n == 0) {
        return TFLM_OK;
    }
    uint32_t table_end = 4 * TFLM_PREPARED_HEADER_WORDS + 8 * pd->n_nodes;
    if (off < table_end || off % TFLM_PREPARED_ALIGN != 0 || n % 4 != 0 || off > len || n > len - off) {
        return tflm_error(err, TFLM_ERR_VALUE, TFLM_PREPARED_METADATA " metadata: operator %u's %u bytes at %u are out of place",
            (unsigned)node, (unsigned)n, (unsigned)off);
    }
    *at = pos + off;
    *bytes = n;
    return TFLM_OK;
}
