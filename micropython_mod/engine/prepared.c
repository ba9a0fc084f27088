// Prepared models (see prepared.h).
#include "prepared.h"
#include "interpreter.h"

// The map, then the constants' records at a multiple of 8, fill the rest.
static uint64_t consts_at(uint32_t recs, uint32_t n_tensors) {
    return ((uint64_t)recs + 2 * (uint64_t)n_tensors + 7) & ~(uint64_t)7;
}

static bool consts_fill(uint32_t recs, uint32_t n_const, uint32_t n_tensors, uint32_t len) {
    return recs % 4 == 0 && recs <= len && n_const <= n_tensors && n_const < TFLM_MAX_RECORDS
           && consts_at(recs, n_tensors) + (uint64_t)n_const * sizeof(tflm_tensor_rec_t) == len;
}

// Where the constants' records end: at the subgraph and node records when
// the header gives them (nodes, at a multiple of 8, filling the rest for
// n_records records), else at the end; 0 when they are out of place.
static uint32_t consts_end(uint32_t nodes, uint32_t n_records, uint32_t len) {
    if (nodes == 0) {
        return len;
    }
    bool fill = nodes % 8 == 0 && nodes <= len && (uint64_t)(len - nodes) == (uint64_t)n_records * 16u;
    return fill ? nodes : 0;
}

tflm_status_t tflm_prepared_find(tflm_model_t *m, uint32_t n_subgraphs, uint32_t n_nodes, uint32_t n_tensors,
    tflm_prepared_t *pd, tflm_error_t *err) {
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
    uint32_t nodes = tflm_rd_u32(p + 24), end = consts_end(nodes, n_subgraphs + n_nodes, len);
    if (end == 0) {
        return tflm_error(err, TFLM_ERR_VALUE,
            TFLM_PREPARED_METADATA " metadata: %u subgraph and node records at %u do not fill its %u bytes",
            (unsigned)(n_subgraphs + n_nodes), (unsigned)nodes, (unsigned)len);
    }
    if (lists < 4 * TFLM_PREPARED_HEADER_WORDS + 8 * n || lists % 4 != 0 || lists > len) {
        return tflm_error(err, TFLM_ERR_VALUE, TFLM_PREPARED_METADATA " metadata: index lists at %u are out of place",
            (unsigned)lists);
    }
    uint64_t consts = consts_at(recs, n_tensors);
    if (recs < lists || !consts_fill(recs, n_const, n_tensors, end)) {
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
    pd->nodes_at = nodes ? pd->pos + nodes : 0;
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

// The layout both functions below follow: offsets from the buffer's start.
typedef struct {
    uint64_t table_end; // the header and the per-operator table
    uint64_t lists;
    uint64_t map;
    uint64_t consts;
    uint64_t records;   // the subgraph and node records, when given
    uint64_t end;
} prepared_layout_t;

static uint64_t align_up64(uint64_t n, uint64_t a) {
    return (n + a - 1) & ~(a - 1);
}

static bool has_data(const tflm_prepared_parts_t *parts, uint32_t k) {
    return parts->data[k] != NULL && parts->data_bytes[k] != 0;
}

static void layout(const tflm_prepared_parts_t *parts, prepared_layout_t *l) {
    l->table_end = 4 * (uint64_t)TFLM_PREPARED_HEADER_WORDS + 8 * (uint64_t)parts->n_nodes;
    uint64_t end = align_up64(l->table_end, TFLM_PREPARED_ALIGN);
    for (uint32_t k = 0; k < parts->n_nodes; ++k) {
        if (has_data(parts, k)) {
            end = align_up64(end, TFLM_PREPARED_ALIGN) + parts->data_bytes[k];
        }
    }
    l->lists = align_up64(end, 4);
    l->map = l->lists + parts->lists_bytes;
    l->consts = align_up64(l->map + parts->map_bytes, 8);
    l->records = l->consts + parts->consts_bytes; // a multiple of 8: whole records after a multiple of 8
    l->end = l->records + parts->records_bytes;
}

// Bytes of the index list of a record with n entries (tflm_prepared_put_list).
static uint32_t list_bytes(uint32_t n) {
    return 2 * (n + (n & 1u));
}

// The lists the records' entry counts call for: all of `lists_bytes`.
static bool records_match_lists(const tflm_prepared_parts_t *parts) {
    if (parts->records_bytes % 16 != 0 || parts->records_bytes / 16 < parts->n_nodes) {
        return false;
    }
    uint32_t n_sub = parts->records_bytes / 16 - parts->n_nodes;
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < n_sub + parts->n_nodes; ++i) {
        const uint8_t *r = parts->records + 16 * (size_t)i;
        uint32_t n = i < n_sub ? (uint32_t)tflm_rd_u16(r + offsetof(tflm_subgraph_rec_t, n_inputs))
                                     + tflm_rd_u16(r + offsetof(tflm_subgraph_rec_t, n_outputs))
                               : (uint32_t)r[offsetof(tflm_node_rec_t, n_inputs)] + r[offsetof(tflm_node_rec_t, n_outputs)];
        bytes += list_bytes(n);
    }
    return bytes == parts->lists_bytes;
}

uint32_t tflm_prepared_size(const tflm_prepared_parts_t *parts) {
    prepared_layout_t l;
    layout(parts, &l);
    if (l.end > INT32_MAX || parts->lists_bytes % 4 != 0 || parts->map_bytes % 2 != 0
        || parts->consts_bytes % sizeof(tflm_tensor_rec_t) != 0
        || (parts->records_bytes != 0 && !records_match_lists(parts))) {
        return 0;
    }
    return (uint32_t)l.end;
}

static void put_u32(uint8_t *p, uint32_t v) {
    memcpy(p, &v, sizeof(v)); // all targets are little-endian (common.h)
}

// The subgraph and node records with the offsets of this layout: each
// record's list in order (the subgraphs' then the nodes'), a node's data
// where the per-operator table, already written, puts it (none: 0).
static void write_records(const tflm_prepared_parts_t *parts, const prepared_layout_t *l, uint8_t *out) {
    uint8_t *recs = out + l->records;
    memcpy(recs, parts->records, parts->records_bytes);
    uint32_t n_sub = parts->records_bytes / 16 - parts->n_nodes;
    uint64_t list = l->lists;
    for (uint32_t i = 0; i < n_sub; ++i) {
        tflm_subgraph_rec_t r;
        memcpy(&r, recs + 16 * (size_t)i, sizeof(r));
        r.io = (uint32_t)list;
        list += list_bytes((uint32_t)r.n_inputs + r.n_outputs);
        memcpy(recs + 16 * (size_t)i, &r, sizeof(r));
    }
    for (uint32_t k = 0; k < parts->n_nodes; ++k) {
        tflm_node_rec_t r;
        uint8_t *at = recs + 16 * (size_t)(n_sub + k);
        memcpy(&r, at, sizeof(r));
        r.io = (uint32_t)list;
        list += list_bytes((uint32_t)r.n_inputs + r.n_outputs);
        const uint8_t *entry = out + 4 * TFLM_PREPARED_HEADER_WORDS + 8 * (size_t)k;
        r.data = tflm_rd_u32(entry);
        r.flags = tflm_rd_u32(entry + 4) ? TFLM_NODE_DATA_IN_MODEL : 0;
        memcpy(at, &r, sizeof(r));
    }
}

void tflm_prepared_write(const tflm_prepared_parts_t *parts, uint8_t *out) {
    prepared_layout_t l;
    layout(parts, &l);
    memset(out, 0, (size_t)l.end);
    const uint32_t header[TFLM_PREPARED_HEADER_WORDS] = { TFLM_PREPARED_MAGIC, TFLM_PREPARED_VERSION, parts->n_nodes,
        (uint32_t)l.lists, (uint32_t)l.map, parts->consts_bytes / (uint32_t)sizeof(tflm_tensor_rec_t),
        parts->records_bytes ? (uint32_t)l.records : 0 };
    for (uint32_t i = 0; i < TFLM_PREPARED_HEADER_WORDS; ++i) {
        put_u32(out + 4 * i, header[i]);
    }
    uint64_t at = align_up64(l.table_end, TFLM_PREPARED_ALIGN);
    for (uint32_t k = 0; k < parts->n_nodes; ++k) {
        uint8_t *entry = out + 4 * TFLM_PREPARED_HEADER_WORDS + 8 * (size_t)k;
        if (has_data(parts, k)) {
            at = align_up64(at, TFLM_PREPARED_ALIGN);
            put_u32(entry, (uint32_t)at);
            put_u32(entry + 4, parts->data_bytes[k]);
            memcpy(out + at, parts->data[k], parts->data_bytes[k]);
            at += parts->data_bytes[k];
        }
    }
    if (parts->lists_bytes) {
        memcpy(out + l.lists, parts->lists, parts->lists_bytes);
    }
    if (parts->map_bytes) {
        memcpy(out + l.map, parts->map, parts->map_bytes);
    }
    if (parts->consts_bytes) {
        memcpy(out + l.consts, parts->consts, parts->consts_bytes);
    }
    if (parts->records_bytes) {
        write_records(parts, &l, out);
    }
}

uint32_t tflm_prepared_put_list(uint8_t *out, const uint16_t *list, uint32_t n) {
    uint32_t bytes = list_bytes(n);
    if (out != NULL) {
        memset(out, 0, bytes);
        for (uint32_t i = 0; i < n; ++i) {
            out[2 * i] = (uint8_t)(list[i] & 0xffu);
            out[2 * i + 1] = (uint8_t)(list[i] >> 8);
        }
    }
    return bytes;
}

bool tflm_prepared_shift_consts(uint8_t *p, uint32_t len, uint32_t n_tensors, uint32_t shift) {
    if (len < 4 * TFLM_PREPARED_HEADER_WORDS || tflm_rd_u32(p) != TFLM_PREPARED_MAGIC
        || tflm_rd_u32(p + 4) != TFLM_PREPARED_VERSION) {
        return false;
    }
    uint32_t recs = tflm_rd_u32(p + 16), n_const = tflm_rd_u32(p + 20), nodes = tflm_rd_u32(p + 24);
    // The subgraph and node records hold offsets within the buffer: they stay.
    uint32_t end = nodes == 0 ? len : nodes;
    if (end > len || !consts_fill(recs, n_const, n_tensors, end)) {
        return false;
    }
    uint8_t *rec = p + consts_at(recs, n_tensors);
    for (uint32_t k = 0; k < n_const; ++k, rec += sizeof(tflm_tensor_rec_t)) {
        put_u32(rec + offsetof(tflm_tensor_rec_t, data), tflm_rd_u32(rec + offsetof(tflm_tensor_rec_t, data)) + shift);
    }
    return true;
}

uint32_t tflm_prepared_records(const tflm_interp_t *measured, void *work, size_t work_len, uint8_t *out) {
    if (measured->stateful || measured->model_nodes != NULL) {
        return 0;
    }
    tflm_arena_t a; // the arena tflm_interp_measure() made of `work`
    tflm_arena_init(&a, work, work_len);
    uint32_t sub_bytes = measured->n_subgraphs * (uint32_t)sizeof(tflm_subgraph_rec_t);
    uint32_t node_bytes = measured->n_nodes * (uint32_t)sizeof(tflm_node_rec_t);
    if (out != NULL) {
        memcpy(out, tflm_arena_ptr(&a, measured->subgraphs_at), sub_bytes);
        memcpy(out + sub_bytes, tflm_arena_ptr(&a, measured->nodes_at), node_bytes);
    }
    return sub_bytes + node_bytes;
}
