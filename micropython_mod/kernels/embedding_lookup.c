// EMBEDDING_LOOKUP: rows of a table (at least 2-D) picked by a 1-D int32
// lookup, as TFLM's reference: float32 rows to float32, int8 rows to int8
// (bytes copied, quantization as it is), and int8 rows to float32 (the
// hybrid form: each value times the table's scale, whose zero point must be
// 0; TFLM takes the first scale of a per-channel table). A row number
// outside the table fails the invoke, as in TFLM.
#include "kernels/kernels.h"

#if TFLM_KERNEL_EMBEDDING_LOOKUP

typedef struct {
    uint32_t lookups;
    int32_t rows;
    uint32_t columns;     // values per row
    uint8_t hybrid;       // int8 rows, float32 output
    uint8_t esize;
    float scale;
} embedding_data_t;

tflm_status_t tflm_embedding_lookup_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t lookup, value, out;
    tflm_status_t st = tflm_prep_io_2_1(p, &lookup, &value, &out);
    if (st) {
        return st;
    }
    if (lookup.type != TFLM_INT32) {
        return tflm_prep_unsupported_type(p, "lookup", lookup.type);
    }
    if (value.type != TFLM_FLOAT32 && value.type != TFLM_INT8) {
        return tflm_prep_unsupported_type(p, "table", value.type);
    }
    if (out.type != TFLM_FLOAT32 && !(out.type == TFLM_INT8 && value.type == TFLM_INT8)) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "a %s table with a %s output is not supported",
            tflm_type_name(value.type), tflm_type_name(out.type));
    }
    if (lookup.ndims != 1 || value.ndims < 2 || out.ndims < value.ndims) {
        return tflm_error(p->err, TFLM_ERR_VALUE,
            "the lookup must be 1-D, the table at least 2-D and the output of the table's rank or more");
    }
    if (value.dims[0] == 0) {
        // TFLM divides by the row count.
        return tflm_error(p->err, TFLM_ERR_VALUE, "the table has no rows");
    }
    bool hybrid = value.type == TFLM_INT8 && out.type == TFLM_FLOAT32;
    if (hybrid && value.zero_point != 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "an int8 table read as float32 needs zero point 0, not %d",
            (int)value.zero_point);
    }
    uint32_t columns = value.elements / (uint32_t)value.dims[0];
    if ((uint64_t)lookup.elements * columns != out.elements) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the output holds %u values, the lookup gives %u",
            (unsigned)out.elements, (unsigned)TFLM_MIN((uint64_t)lookup.elements * columns, UINT32_MAX));
    }
    embedding_data_t *d = tflm_prep_alloc(p, sizeof(embedding_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->lookups = lookup.elements;
    d->rows = value.dims[0];
    d->columns = columns;
    d->hybrid = hybrid;
    d->esize = (uint8_t)tflm_type_size(value.type);
    d->scale = value.scale;
    return TFLM_OK;
}

tflm_status_t tflm_embedding_lookup_eval(tflm_eval_t *e) {
    const embedding_data_t *d = e->data;
    const int32_t *lookup = e->in[0];
    const uint8_t *table = e->in[1];
    const size_t row_bytes = (size_t)d->columns * d->esize;
    const float scale = d->scale;  // float stores could alias d
    for (uint32_t i = 0; i < d->lookups; ++i) {
        int32_t r = lookup[i];
        if (r < 0 || r >= d->rows) {
            return tflm_error(e->err, TFLM_ERR_RUNTIME, "row %d is out of range [0, %d)", (int)r, (int)d->rows);
        }
        const uint8_t *row = table + (size_t)r * row_bytes;
        if (d->hybrid) {
            const int8_t *q = (const int8_t *)row;
            float *o = (float *)e->out[0] + (size_t)i * d->columns;
            for (uint32_t c = 0; c < d->columns; ++c) {
                o[c] = (float)q[c] * scale;
            }
        } else {
            memcpy((uint8_t *)e->out[0] + (size_t)i * row_bytes, row, row_bytes);
        }
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_EMBEDDING_LOOKUP
