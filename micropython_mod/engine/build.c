// Building an interpreter's tail (see build.h): the records, the kernels'
// prepare() and their data, variable tensors and resource variables.
//
// The same code runs twice. The dry run, in an arena with no memory,
// measures the tail; the real run then writes the records and runs the
// kernels' prepare() for real. Tail layout, from the top of the arena down:
// (for the host's export of a prepared model: the records map and the
// constants' records,) subgraph records and their input/output lists,
// tensor records (model tensors, then scratch buffers), node records and
// their input/output lists, kernel data, variable tensors, resource
// variables.
#include "build.h"
#include "ops.h"
#include "patch.h"
#include "prepared.h"
#include "schema.h"

// At most this many variable tensors kept by kernels (SVDF states) per model.
#define TFLM_MAX_KEPT (64)

struct _tflm_build_t {
    tflm_interp_t *ip;
    tflm_arena_t *arena;
    bool dry;
    uint32_t n_scratch;   // scratch buffers requested so far
    uint32_t scratch_cap; // records reserved for them (real pass)
    // Variable tensors their operator keeps (tflm_prep_keep_variable), which
    // build_variables skips: a list, since the dry pass has no records.
    uint16_t kept[TFLM_MAX_KEPT];
    uint32_t n_kept;
    // A prepared model used in place (prepared.h): its kernel data, and its
    // index lists, the next of which is at lists_next.
    tflm_prepared_t pd;
    uint32_t lists_next;
    // The records map (records.h) is made here for the host's export of a
    // prepared model, instead of being a prepared model's.
    bool export_map;
    uint32_t n_const; // constants mapped so far
};

static tflm_status_t out_of_tail(tflm_build_t *b) {
    tflm_error_t *err = &b->ip->err;
    err->needed = 0;
    err->given = b->arena->size;
    return tflm_error(err, TFLM_ERR_MEMORY, "arena too small: %u bytes cannot hold the model's persistent data",
        (unsigned)b->arena->size);
}

const char *const tflm_audit_names[TFLM_AUDIT_COUNT] = {
    "head", "subgraph records", "tensor records", "scratch records", "node records",
    "index lists", "kernel data", "variable tensors", "resource variables", "alignment",
};

// Tail allocation of `bytes` rounded up to 4, recorded under `kind` as
// `count` items; TFLM_ARENA_FAIL on failure.
static uint32_t tail_alloc(tflm_build_t *b, uint32_t bytes, tflm_audit_kind_t kind, uint32_t count) {
    uint32_t used = tflm_align_up(bytes, 4);
    uint32_t at = tflm_arena_alloc_tail(b->arena, used, 4);
    if (at != TFLM_ARENA_FAIL) {
        tflm_interp_audit(b->ip, kind, used, bytes, count);
    }
    return at;
}

static void *at(tflm_build_t *b, uint32_t offset) {
    return b->dry ? NULL : tflm_arena_ptr(b->arena, offset);
}

// Room for an index list of n entries: in the tail, or the next list of a
// prepared model's (which the build then checks instead of writing). An
// offset from tflm_interp_lists_base(), TFLM_ARENA_FAIL with err set.
static uint32_t list_alloc(tflm_build_t *b, uint32_t n) {
    if (!b->ip->lists_in_model) {
        uint32_t at = tail_alloc(b, 2 * n, TFLM_AUDIT_INDEX_LISTS, 1);
        if (at == TFLM_ARENA_FAIL) {
            out_of_tail(b);
        }
        return at;
    }
    uint32_t at = b->lists_next, bytes = tflm_align_up(2 * n, 4);
    if (bytes > b->pd.lists_end - b->pd.pos - at) {
        tflm_error(&b->ip->err, TFLM_ERR_VALUE, TFLM_PREPARED_METADATA " metadata: the index lists end early");
        return TFLM_ARENA_FAIL;
    }
    b->lists_next += bytes;
    b->ip->model_lists_bytes += bytes;
    return at;
}

// The list at `at` (list_alloc) to write, NULL when it is not written: in
// the dry pass, or when it is a prepared model's.
static uint16_t *list_out(tflm_build_t *b, uint32_t list) {
    return b->ip->lists_in_model ? NULL : at(b, list);
}

// Writes `n` entries of a list of global tensor indices (0xffff for
// omitted), starting at entry `from`, from a model index vector after
// checking each one; for a prepared model, requires its list to hold them.
static tflm_status_t write_indices(tflm_build_t *b, uint32_t list, uint32_t from, tflm_fb_vec_t v, uint32_t base,
    uint32_t n_tensors, bool allow_none) {
    tflm_interp_t *ip = b->ip;
    tflm_model_t *m = ip->model;
    uint16_t *out = list_out(b, list);
    for (uint32_t i = 0; i < v.count; ++i) {
        int32_t t = tflm_model_index(m, v, i);
        uint16_t value = TFLM_NO_INDEX;
        if (t != TFLM_NO_TENSOR || !allow_none) {
            if (t < 0 || (uint32_t)t >= n_tensors) {
                return tflm_error(&ip->err, TFLM_ERR_VALUE,
                    "malformed model: tensor index %d out of range (%u tensors)", (int)t, (unsigned)n_tensors);
            }
            value = (uint16_t)tflm_interp_rec_of(ip, base + (uint32_t)t);
        }
        if (out) {
            out[from + i] = value;
        } else if (ip->lists_in_model && tflm_rd_u16(ip->lists_base + list + 2 * (from + i)) != value) {
            return tflm_error(&ip->err, TFLM_ERR_VALUE, TFLM_PREPARED_METADATA
                " metadata: index lists differ from the model's (a changed model: prepare it again)");
        }
    }
    return TFLM_OK;
}

// Both lists of a subgraph or an operator, and the host's export of them.
static tflm_status_t write_io(tflm_build_t *b, uint32_t list, tflm_fb_vec_t in, tflm_fb_vec_t out, uint32_t base,
    uint32_t n_tensors, bool allow_none) {
    tflm_status_t st;
    if ((st = write_indices(b, list, 0, in, base, n_tensors, allow_none))
        || (st = write_indices(b, list, in.count, out, base, n_tensors, false))) {
        return st;
    }
    tflm_interp_t *ip = b->ip;
    if (!b->dry && ip->index_list && !ip->lists_in_model) {
        ip->index_list(ip->kernel_data_ctx, at(b, list), in.count + out.count);
    }
    return TFLM_OK;
}

// A subgraph's or node's record the build derived (`r`, `bytes`): into the
// arena at `out`, or, a prepared model's (`model` not NULL), required equal
// to the one the model holds.
static tflm_status_t put_record(tflm_build_t *b, const void *model, void *out, const void *r, size_t bytes) {
    if (model == NULL) {
        memcpy(out, r, bytes);
        return TFLM_OK;
    }
    if (memcmp(model, r, bytes) != 0) {
        return tflm_error(&b->ip->err, TFLM_ERR_VALUE,
            TFLM_PREPARED_METADATA " metadata: subgraph or node records differ from the model's (prepare it again)");
    }
    return TFLM_OK;
}

// Subgraph records and their input/output lists.
static tflm_status_t build_subgraphs(tflm_build_t *b) {
    tflm_interp_t *ip = b->ip;
    tflm_model_t *m = ip->model;
    uint32_t n = m->subgraphs.count;
    // A prepared model's records are the model's, checked below.
    uint32_t recs_at = ip->model_subgraphs ? tflm_arena_alloc_tail(b->arena, 0, 4)
                                           : tail_alloc(b, n * (uint32_t)sizeof(tflm_subgraph_rec_t), TFLM_AUDIT_SUBGRAPHS, n);
    if (recs_at == TFLM_ARENA_FAIL) {
        return out_of_tail(b);
    }
    ip->subgraphs_at = recs_at;
    ip->n_subgraphs = n;
    uint32_t tensors = 0, nodes = 0;
    for (uint32_t s = 0; s < n; ++s) {
        tflm_subgraph_t sg;
        if (!tflm_model_subgraph(m, s, &sg)) {
            return tflm_model_check(m, &ip->err);
        }
        uint32_t io_at = list_alloc(b, sg.inputs.count + sg.outputs.count);
        if (io_at == TFLM_ARENA_FAIL) {
            return ip->err.status;
        }
        tflm_status_t st = write_io(b, io_at, sg.inputs, sg.outputs, tensors, sg.tensors.count, false);
        if (st) {
            return st;
        }
        if (!b->dry) {
            tflm_subgraph_rec_t r = {
                .io = io_at, .tensor_base = (uint16_t)tensors, .n_tensors = (uint16_t)sg.tensors.count,
                .node_base = (uint16_t)nodes, .n_nodes = (uint16_t)sg.operators.count,
                .n_inputs = (uint16_t)sg.inputs.count, .n_outputs = (uint16_t)sg.outputs.count,
            };
            if ((st = put_record(b, ip->model_subgraphs ? (const void *)(ip->model_subgraphs + s) : NULL,
                     at(b, recs_at + s * (uint32_t)sizeof(r)), &r, sizeof(r)))) {
                return st;
            }
        }
        tensors += sg.tensors.count;
        nodes += sg.operators.count;
    }
    // find_prepared() checked the counts against the limits.
    ip->n_model_tensors = tensors;
    ip->n_nodes = nodes;
    return TFLM_OK;
}

// Tensor i of subgraph sg as a record: a constant's bytes in the model, a
// planned tensor in the head (variables get their bytes later).
static tflm_status_t tensor_record(tflm_build_t *b, const tflm_subgraph_t *sg, uint32_t i, tflm_tensor_rec_t *r) {
    tflm_interp_t *ip = b->ip;
    tflm_model_t *m = ip->model;
    tflm_model_tensor_t t;
    uint32_t elements, bytes, pos, len;
    if (!tflm_model_tensor(m, sg, i, &t) || !tflm_model_buffer(m, t.buffer, &pos, &len)) {
        return tflm_model_check(m, &ip->err);
    }
    if (!tflm_model_tensor_size(m, &t, &elements, &bytes)) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "malformed model: tensor %u has a bad shape", (unsigned)i);
    }
    // Bytes of 24 bits at most, a type of 5 (type << 19 has a bit from 24 up for 32 and more).
    if ((bytes | (uint32_t)t.type << 19) > TFLM_MAX_TENSOR_BYTES) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, TFLM_RECORD_LIMITS, "tensor", (unsigned)i, (unsigned)bytes,
            (unsigned)t.type);
    }
    // A variable's buffer is in the tail (build_variables; or its kernel keeps it).
    uint32_t where = t.is_variable ? TFLM_AT_TAIL : bytes != 0 ? TFLM_AT_HEAD : TFLM_AT_NONE, data = 0;
    if (len != 0 && !t.is_variable) {
        size_t align = TFLM_MIN(tflm_type_size(t.type), 4u);
        if (len < bytes) {
            return tflm_error(&ip->err, TFLM_ERR_VALUE, "malformed model: tensor %u needs %u bytes, its buffer holds %u",
                (unsigned)i, (unsigned)bytes, (unsigned)len);
        }
        if (align > 1 && ((uintptr_t)(m->fb.buf + pos) % align) != 0) {
            return tflm_error(&ip->err, TFLM_ERR_VALUE,
                "tensor %u data is not %u-byte aligned in memory; load the model into an aligned buffer",
                (unsigned)i, (unsigned)align);
        }
        where = TFLM_AT_MODEL;
        data = pos;
    }
    // One store of each word (no padding: records are compared whole).
    *r = (tflm_tensor_rec_t){ .data = data, .bytes = bytes, .type = t.type, .where = where };
    return TFLM_OK;
}

// A record that never changes once derived: a constant's.
static bool is_constant(const tflm_tensor_rec_t *r) {
    return r->where == TFLM_AT_MODEL;
}

// Calls fn for each model tensor of all subgraphs in order, with its record.
static tflm_status_t each_tensor(tflm_build_t *b, tflm_status_t (*fn)(tflm_build_t *, uint32_t, tflm_tensor_rec_t *)) {
    tflm_model_t *m = b->ip->model;
    uint32_t g = 0;
    for (uint32_t s = 0; s < m->subgraphs.count; ++s) {
        tflm_subgraph_t sg;
        if (!tflm_model_subgraph(m, s, &sg)) {
            return tflm_model_check(m, &b->ip->err);
        }
        for (uint32_t i = 0; i < sg.tensors.count; ++i, ++g) {
            tflm_tensor_rec_t r;
            tflm_status_t st = tensor_record(b, &sg, i, &r);
            if (st || (st = fn(b, g, &r))) {
                return st;
            }
        }
    }
    return TFLM_OK;
}

static tflm_status_t count_constant(tflm_build_t *b, uint32_t g, tflm_tensor_rec_t *r) {
    (void)g;
    b->ip->n_const += is_constant(r);
    return TFLM_OK;
}

static tflm_status_t records_differ(tflm_build_t *b) {
    return tflm_error(&b->ip->err, TFLM_ERR_VALUE,
        TFLM_PREPARED_METADATA " metadata: tensor records differ from the model's (prepare it again)");
}

// Tensor g's place in the map: the next constant's or the next live record.
static tflm_status_t map_tensor(tflm_build_t *b, uint32_t g, tflm_tensor_rec_t *r) {
    tflm_interp_t *ip = b->ip;
    bool constant = is_constant(r);
    uint32_t *count = constant ? &b->n_const : &ip->map.n_live;
    if (constant ? *count >= ip->n_const : *count >= TFLM_MAX_RECORDS) {
        return records_differ(b);
    }
    uint16_t rec = (uint16_t)(constant ? TFLM_REC_CONST + *count : *count);
    if (b->export_map) {
        if (!b->dry) {
            ((uint16_t *)ip->map.rec_of)[g] = rec;
            if (constant) {
                ((tflm_tensor_rec_t *)ip->consts)[*count] = *r;
            }
        }
    } else if (ip->map.rec_of[g] != rec || (constant && memcmp(&ip->consts[*count], r, sizeof(*r)) != 0)) {
        return records_differ(b);
    }
    (*count)++;
    return TFLM_OK;
}

// With a records map (a prepared model's, or the host's export of one):
// each model tensor's record index and the constants' records, derived from
// the model, and written into the tail for the export, else required equal
// to the prepared model's. Sets ip->map.n_live.
static tflm_status_t records_map(tflm_build_t *b) {
    tflm_interp_t *ip = b->ip;
    tflm_status_t st;
    if (ip->map.rec_of == NULL && !b->export_map) {
        ip->map.n_live = ip->map.n_model;
        return TFLM_OK;
    }
    if (b->export_map) {
        ip->n_const = 0;
        if ((st = each_tensor(b, count_constant))) {
            return st;
        }
        if (ip->n_const >= TFLM_MAX_RECORDS) {
            return tflm_error(&ip->err, TFLM_ERR_VALUE, "model too large: %u constant tensors", (unsigned)ip->n_const);
        }
        uint32_t map_at = tail_alloc(b, 2 * ip->map.n_model, TFLM_AUDIT_TENSORS, 0);
        uint32_t consts_at = tail_alloc(b, ip->n_const * (uint32_t)sizeof(tflm_tensor_rec_t), TFLM_AUDIT_TENSORS, 0);
        if (map_at == TFLM_ARENA_FAIL || consts_at == TFLM_ARENA_FAIL) {
            return out_of_tail(b);
        }
        ip->map.rec_of = at(b, map_at);
        ip->consts = at(b, consts_at);
    }
    ip->map.n_live = 0;
    b->n_const = 0;
    if ((st = each_tensor(b, map_tensor))) {
        return st;
    }
    return b->n_const == ip->n_const ? TFLM_OK : records_differ(b);
}

// Tensor g's record into the arena (a constant's with a records map stays
// in the model).
static tflm_status_t put_tensor(tflm_build_t *b, uint32_t g, tflm_tensor_rec_t *r) {
    tflm_interp_t *ip = b->ip;
    uint32_t rec = tflm_interp_rec_of(ip, g);
    if (rec & TFLM_REC_CONST) {
        return TFLM_OK;
    }
    if (rec >= ip->map.n_live) {
        return tflm_error(&ip->err, TFLM_ERR_RUNTIME, "internal error: record %u of %u", (unsigned)rec,
            (unsigned)ip->map.n_live);
    }
    *tflm_interp_tensor_mut(ip, rec) = *r;
    return TFLM_OK;
}

// Tensor records in the arena: where each model tensor's bytes are (but a
// constant's, with a records map).
static tflm_status_t build_tensors(tflm_build_t *b) {
    tflm_interp_t *ip = b->ip;
    uint32_t n_live = ip->map.n_live;
    uint32_t total = n_live + b->scratch_cap;
    if (total >= TFLM_MAX_RECORDS) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "model too large: %u tensors and scratch buffers", (unsigned)total);
    }
    // One array: model tensors, then the scratch buffers' records. The tail
    // grows down, so the scratch part is allocated first.
    uint32_t scratch_at = tail_alloc(b, b->scratch_cap * (uint32_t)sizeof(tflm_tensor_rec_t),
        TFLM_AUDIT_SCRATCH, b->scratch_cap);
    uint32_t recs_at = tail_alloc(b, n_live * (uint32_t)sizeof(tflm_tensor_rec_t), TFLM_AUDIT_TENSORS, n_live);
    if (scratch_at == TFLM_ARENA_FAIL || recs_at == TFLM_ARENA_FAIL
        || recs_at + n_live * (uint32_t)sizeof(tflm_tensor_rec_t) != scratch_at) {
        return out_of_tail(b);
    }
    ip->tensors_at = recs_at;
    if (b->dry) {
        return TFLM_OK;
    }
    memset(tflm_arena_ptr(b->arena, recs_at), 0, total * sizeof(tflm_tensor_rec_t));
    return each_tensor(b, put_tensor);
}

// Prefixes the current error message with the node it came from.
void tflm_prepare_start(tflm_prepare_t *p, tflm_interp_t *ip, const tflm_model_op_t *op, uint32_t s, uint32_t index,
    uint32_t node, bool dry, tflm_error_t *err) {
    memset(p, 0, sizeof(*p));
    p->ip = ip;
    p->model = ip->model;
    p->op = op;
    p->subgraph = s;
    p->index = index;
    p->node = node;
    p->dry = dry;
    p->err = err;
}

tflm_status_t tflm_interp_node_error(tflm_interp_t *ip, uint32_t node, int32_t builtin) {
    char msg[TFLM_ERROR_MSG_LEN];
    memcpy(msg, ip->err.msg, sizeof(msg));
    const char *name = tflm_op_name(builtin);
    tflm_status_t st = ip->err.status;
    tflm_error(&ip->err, st, "operator %u (%s): %s", (unsigned)node, name ? name : "?", msg);
    return st;
}

// After a kernel's prepare() in the real pass: a prepared model's data must
// be exactly what prepare() computed (anything else could mislead eval());
// the host's export gets the bytes.
static tflm_status_t kernel_data_done(tflm_build_t *b, const tflm_prepare_t *p) {
    tflm_interp_t *ip = b->ip;
    if (p->prepared_bytes != 0 && !p->in_model) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "prepared data for an operator that keeps none");
    }
    if (p->in_model && (p->streamed_differ || memcmp(p->verify, ip->model->fb.buf + p->prepared_at, p->streamed_at) != 0)) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE,
            "prepared data differs from what prepare() computes (a changed model, or another engine version: prepare it again)");
    }
    if (ip->kernel_data && p->data_bytes != 0) {
        ip->kernel_data(ip->kernel_data_ctx, p->node, tflm_arena_ptr(b->arena, p->data_at), p->data_bytes,
            p->state);
    }
    return TFLM_OK;
}

// Output 0 in the kernel's state data (tflm_prep_output_in_data): state is
// RAM in the tail, so whatever else writes the tensor stays in its bytes.
static tflm_status_t output_in_data(tflm_build_t *b, const tflm_prepare_t *p, uint16_t tensor) {
    tflm_interp_t *ip = b->ip;
    uint32_t offset = p->out0_in_data - 1;
    tflm_tensor_rec_t *r = tensor == TFLM_NO_INDEX ? NULL : tflm_interp_tensor_mut(ip, tensor);
    if (!p->state || r == NULL || offset > p->data_bytes || r->bytes > p->data_bytes - offset
        || (r->where != TFLM_AT_HEAD && r->where != TFLM_AT_NONE)) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "output cannot live in the kernel's data");
    }
    r->where = TFLM_AT_STATE;
    r->data = p->data_at + offset;
    return TFLM_OK;
}

// A variable tensor kept by its operator's kernel (tflm_prep_keep_variable):
// listed for build_variables; its record points at the kernel's bytes, with
// their size, so nothing reads past them.
static tflm_status_t kept_variable(tflm_build_t *b, const tflm_prepare_t *p, uint16_t tensor) {
    tflm_interp_t *ip = b->ip;
    if (p->kept_at == TFLM_ARENA_FAIL) {
        return out_of_tail(b);
    }
    if (b->n_kept == TFLM_MAX_KEPT) {
        return tflm_error(&ip->err, TFLM_ERR_NOT_IMPLEMENTED, "more than %u variable tensors kept by kernels",
            TFLM_MAX_KEPT);
    }
    b->kept[b->n_kept++] = tensor;
    if (!b->dry) {
        tflm_tensor_rec_t *r = tflm_interp_tensor_mut(ip, tensor);
        if (r == NULL) {
            return tflm_error(&ip->err, TFLM_ERR_VALUE, "a constant cannot be kept as a variable");
        }
        *r = (tflm_tensor_rec_t){ .data = p->kept_at, .bytes = p->kept_bytes, .type = r->type, .where = TFLM_AT_KEPT };
    }
    return TFLM_OK;
}

static bool is_kept(const tflm_build_t *b, uint32_t tensor) {
    for (uint32_t k = 0; k < b->n_kept; ++k) {
        if (b->kept[k] == tensor) {
            return true;
        }
    }
    return false;
}

// Operators of subgraph 0 (0 when the model has none: the checks fail later).
static uint32_t subgraph0_ops(tflm_model_t *m) {
    tflm_subgraph_t sg;
    return tflm_model_subgraph(m, 0, &sg) ? sg.operators.count : 0;
}

// A scratch buffer's record, of `bytes` planned in the head (none when 0).
static void scratch_record(tflm_interp_t *ip, uint32_t rec, uint32_t bytes) {
    tflm_tensor_rec_t *r = tflm_interp_tensor_mut(ip, rec);
    *r = (tflm_tensor_rec_t){ .bytes = bytes, .type = TFLM_INT8, .where = bytes ? TFLM_AT_HEAD : TFLM_AT_NONE };
}

// Node records, their input/output lists, and the kernels' prepare().
static tflm_status_t build_nodes(tflm_build_t *b) {
    tflm_interp_t *ip = b->ip;
    tflm_model_t *m = ip->model;
    uint32_t recs_at = ip->model_nodes ? tflm_arena_alloc_tail(b->arena, 0, 4)
                                       : tail_alloc(b, ip->n_nodes * (uint32_t)sizeof(tflm_node_rec_t), TFLM_AUDIT_NODES, ip->n_nodes);
    if (recs_at == TFLM_ARENA_FAIL) {
        return out_of_tail(b);
    }
    ip->nodes_at = recs_at;
    const tflm_prepared_t *pd = &b->pd;
    // A patch-based first stage runs with kernels only; an offline plan
    // places the maps the stage never materialises, so it cannot have one.
    memset(&ip->patch, 0, sizeof(ip->patch));
    if (!ip->tensors_only) {
        tflm_status_t st = tflm_patch_find(m, subgraph0_ops(m), ip->stage_given ? &ip->stage : NULL, &ip->patch,
            &ip->err);
        #if TFLM_PLANNER_OFFLINE
        if (st == TFLM_OK && ip->patch.split && ip->planner == &tflm_planner_offline) {
            st = tflm_error(&ip->err, TFLM_ERR_VALUE, "%s with an offline plan: stages run with the online planners",
                tflm_patch_source(&ip->patch));
        }
        #endif
        if (st) {
            return st;
        }
    }
    uint32_t node = 0, tensor_base = 0;
    for (uint32_t s = 0; s < ip->n_subgraphs; ++s) {
        tflm_subgraph_t sg;
        if (!tflm_model_subgraph(m, s, &sg)) {
            return tflm_model_check(m, &ip->err);
        }
        for (uint32_t i = 0; i < sg.operators.count; ++i, ++node) {
            tflm_model_op_t op;
            if (!tflm_model_op(m, &sg, i, &op)) {
                return tflm_model_check(m, &ip->err);
            }
            uint32_t n_in = op.inputs.count, n_out = op.outputs.count;
            if (n_in + n_out > TFLM_MAX_NODE_IO) {
                tflm_error(&ip->err, TFLM_ERR_NOT_IMPLEMENTED, "%u inputs and outputs (at most %u)",
                    (unsigned)(n_in + n_out), TFLM_MAX_NODE_IO);
                return tflm_interp_node_error(ip, node, op.builtin);
            }
            uint32_t io_at = list_alloc(b, n_in + n_out);
            if (io_at == TFLM_ARENA_FAIL) {
                return ip->err.status;
            }
            tflm_status_t st = write_io(b, io_at, op.inputs, op.outputs, tensor_base, sg.tensors.count, true);
            if (st) {
                return tflm_interp_node_error(ip, node, op.builtin);
            }
            tflm_prepare_t p;
            tflm_prepare_start(&p, ip, &op, s, i, node, b->dry, &ip->err);
            if (pd->pos && (st = tflm_prepared_entry(m, pd, node, &p.prepared_at, &p.prepared_bytes, &ip->err))) {
                return tflm_interp_node_error(ip, node, op.builtin);
            }
            uint32_t kernel_index = TFLM_NO_KERNEL;
            if (!ip->tensors_only) {
                const tflm_kernel_t *k = tflm_kernel_for_opcode(m, op.opcode_index, &kernel_index);
                if (k == NULL) {
                    // Checked before building; reached only if the model changed since.
                    tflm_error(&ip->err, TFLM_ERR_NOT_IMPLEMENTED, "no kernel");
                    return tflm_interp_node_error(ip, node, op.builtin);
                }
                st = k->prepare(&p);
                if (st == TFLM_OK && !b->dry) {
                    st = kernel_data_done(b, &p);
                }
            }
            // Temporary allocations live for one prepare() only.
            tflm_arena_reset_temp(b->arena);
            if (st != TFLM_OK) {
                return tflm_interp_node_error(ip, node, op.builtin);
            }
            if (m->fb.bad) {
                return tflm_model_check(m, &ip->err);
            }
            if (p.data_at == TFLM_ARENA_FAIL) {
                return out_of_tail(b);
            }
            if (p.kept && (st = kept_variable(b, &p, (uint16_t)tflm_interp_rec_of(ip, tensor_base + p.kept - 1)))) {
                return st == TFLM_ERR_MEMORY ? st : tflm_interp_node_error(ip, node, op.builtin);
            }
            uint32_t first_scratch = ip->map.n_live + b->n_scratch;
            if (!b->dry) {
                if (b->n_scratch + p.n_scratch > b->scratch_cap) {
                    return tflm_error(&ip->err, TFLM_ERR_RUNTIME, "internal error: scratch requests differ between passes");
                }
                for (uint32_t k2 = 0; k2 < p.n_scratch; ++k2) {
                    scratch_record(ip, first_scratch + k2, p.scratch_bytes[k2]);
                }
                if (p.out0_in_data && (st = output_in_data(b, &p, n_out ? tflm_interp_io(ip, io_at)[n_in] : TFLM_NO_INDEX))) {
                    return tflm_interp_node_error(ip, node, op.builtin);
                }
                // Data in the model: its offset from the prepared data's
                // start (the lists' base); none: 0.
                tflm_node_rec_t nr = {
                    .io = io_at,
                    .data = p.in_model ? p.prepared_at - b->pd.pos : p.data_bytes ? p.data_at : 0,
                    .kernel = (uint16_t)(kernel_index == TFLM_NO_KERNEL ? TFLM_NO_KERNEL : tflm_kernel_id(kernel_index)),
                    .scratch = (uint16_t)first_scratch,
                    .n_inputs = (uint8_t)n_in,
                    .n_outputs = (uint8_t)n_out,
                    .n_scratch = p.n_scratch,
                    .flags = p.in_model ? TFLM_NODE_DATA_IN_MODEL : 0,
                };
                if ((st = put_record(b, ip->model_nodes ? (const void *)(ip->model_nodes + node) : NULL,
                         at(b, recs_at + node * (uint32_t)sizeof(nr)), &nr, sizeof(nr)))) {
                    return st;
                }
            }
            b->n_scratch += p.n_scratch;
            ip->stateful |= p.state;
            if (p.in_model) {
                ip->model_data_bytes += p.data_bytes;
                ip->model_data_count++;
            }
        }
        tensor_base += sg.tensors.count;
    }
    // The patch-based stage's buffer (sized by tflm_patch_finish) after
    // every node's, so no node record depends on the schedule.
    if (TFLM_PATCH && ip->patch.split) {
        ip->patch.scratch = (uint16_t)(ip->map.n_live + b->n_scratch);
        if (!b->dry) {
            if (b->n_scratch + 1 > b->scratch_cap) {
                return tflm_error(&ip->err, TFLM_ERR_RUNTIME, "internal error: scratch requests differ between passes");
            }
            scratch_record(ip, ip->patch.scratch, 0);
        }
        b->n_scratch += 1;
    }
    return TFLM_OK;
}

// Variable tensors live in the tail, 16-byte aligned, zeroed (but those
// their operator keeps itself).
static tflm_status_t build_variables(tflm_build_t *b) {
    tflm_interp_t *ip = b->ip;
    tflm_model_t *m = ip->model;
    uint32_t g = 0;
    for (uint32_t s = 0; s < ip->n_subgraphs; ++s) {
        tflm_subgraph_t sg;
        if (!tflm_model_subgraph(m, s, &sg)) {
            return tflm_model_check(m, &ip->err);
        }
        for (uint32_t i = 0; i < sg.tensors.count; ++i, ++g) {
            tflm_model_tensor_t t;
            uint32_t elements, bytes;
            if (!tflm_model_tensor(m, &sg, i, &t)) {
                return tflm_model_check(m, &ip->err);
            }
            uint32_t rec = tflm_interp_rec_of(ip, g);
            if (!t.is_variable || !tflm_model_tensor_size(m, &t, &elements, &bytes) || bytes == 0 || is_kept(b, rec)) {
                continue;
            }
            uint32_t tail_before = b->arena->cursor;
            uint32_t off = tflm_arena_alloc_tail(b->arena, tflm_align_up(bytes, TFLM_ALIGN), TFLM_ALIGN);
            if (off == TFLM_ARENA_FAIL) {
                return out_of_tail(b);
            }
            tflm_interp_audit(ip, TFLM_AUDIT_VARIABLES, b->arena->cursor - tail_before, bytes, 1);
            if (!b->dry) {
                tflm_tensor_rec_t *r = tflm_interp_tensor_mut(ip, rec);
                if (r == NULL) {
                    return records_differ(b); // a variable is never a constant
                }
                r->data = off; // TFLM_AT_TAIL since tensor_record()
                // As TFLM resets them: int8 state starts at its zero point.
                memset(tflm_arena_ptr(b->arena, off), tflm_variable_fill(m, &t), bytes);
            }
        }
    }
    return TFLM_OK;
}

// Resource variables: their records, then each one's buffer (16-byte
// aligned), as the op that defines them counts and shapes them (VAR_HANDLE's
// build_state hook).
tflm_status_t tflm_build_resources(tflm_build_t *b, tflm_resource_count_fn count, tflm_resource_shape_fn shape) {
    tflm_interp_t *ip = b->ip;
    tflm_model_t *m = ip->model;
    tflm_status_t st = count(m, &ip->n_resources, &ip->err);
    if (st) {
        return st;
    }
    uint32_t tail_before = b->arena->cursor;
    uint32_t recs_at = tflm_arena_alloc_tail(b->arena, ip->n_resources * (uint32_t)sizeof(tflm_resource_rec_t), 4);
    if (recs_at == TFLM_ARENA_FAIL) {
        return out_of_tail(b);
    }
    ip->resources_at = recs_at;
    uint32_t requested = ip->n_resources * (uint32_t)sizeof(tflm_resource_rec_t);
    for (uint32_t id = 0; id < ip->n_resources; ++id) {
        uint32_t bytes;
        uint8_t fill;
        if ((st = tflm_resource_shape(ip, shape, id, &bytes, &fill))) {
            return st;
        }
        uint32_t off = bytes ? tflm_arena_alloc_tail(b->arena, tflm_align_up(bytes, TFLM_ALIGN), TFLM_ALIGN) : 0;
        if (off == TFLM_ARENA_FAIL) {
            return out_of_tail(b);
        }
        requested += bytes;
        if (!b->dry) {
            tflm_resource_rec_t *r = (tflm_resource_rec_t *)tflm_arena_ptr(b->arena, recs_at) + id;
            r->data = off;
            r->bytes = bytes;
            if (bytes) {
                memset(tflm_arena_ptr(b->arena, off), fill, bytes);
            }
        }
    }
    tflm_interp_audit(ip, TFLM_AUDIT_RESOURCES, b->arena->cursor - tail_before, requested, ip->n_resources);
    return TFLM_OK;
}

// The state kernels' ops share across the model (their build_state hooks:
// the resource variables), each once.
static tflm_status_t build_state(tflm_build_t *b) {
    for (uint32_t k = 0; k < tflm_kernel_count; ++k) {
        const tflm_kernel_hooks_t *h = tflm_kernels[k].hooks;
        tflm_status_t st = h && h->build_state ? h->build_state(b) : TFLM_OK;
        if (st) {
            return st;
        }
    }
    return TFLM_OK;
}

// A prepared model's data is used in place only from a buffer whose bytes
// cannot change, and not while the host exports it anew (which makes the
// records map itself).
static tflm_status_t find_prepared(tflm_build_t *b) {
    tflm_interp_t *ip = b->ip;
    tflm_model_t *m = ip->model;
    memset(&b->pd, 0, sizeof(b->pd));
    ip->lists_in_model = false;
    ip->lists_base = b->arena->base;
    memset(&ip->map, 0, sizeof(ip->map));
    ip->consts = NULL;
    ip->n_const = 0;
    ip->model_subgraphs = NULL;
    ip->model_nodes = NULL;
    uint32_t n_nodes = 0, n_tensors = 0;
    for (uint32_t s = 0; s < m->subgraphs.count; ++s) {
        tflm_subgraph_t sg;
        if (!tflm_model_subgraph(m, s, &sg)) {
            return tflm_model_check(m, &ip->err);
        }
        n_nodes += sg.operators.count;
        n_tensors += sg.tensors.count;
    }
    // Record indices are 15 bits (records.h).
    if (n_tensors >= TFLM_MAX_RECORDS || n_nodes > TFLM_MAX_OPS) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "model too large: %u tensors and %u operators in all subgraphs",
            (unsigned)n_tensors, (unsigned)n_nodes);
    }
    ip->map.n_model = n_tensors;
    b->export_map = ip->kernel_data != NULL && !ip->tensors_only;
    if (!m->immutable || ip->kernel_data != NULL || ip->tensors_only) {
        return TFLM_OK;
    }
    tflm_status_t st = tflm_prepared_find(m, m->subgraphs.count, n_nodes, n_tensors, &b->pd, &ip->err);
    if (st || b->pd.pos == 0) {
        return st;
    }
    // The lists' and the records' offsets are from the prepared data's start.
    ip->lists_in_model = true;
    ip->lists_base = m->fb.buf + b->pd.pos;
    b->lists_next = b->pd.lists_at - b->pd.pos;
    ip->map.rec_of = (const uint16_t *)(m->fb.buf + b->pd.recs_at);
    ip->consts = (const tflm_tensor_rec_t *)(m->fb.buf + b->pd.consts_at);
    ip->n_const = b->pd.n_const;
    ip->model_records_bytes = b->pd.n_const * (uint32_t)sizeof(tflm_tensor_rec_t);
    if (b->pd.nodes_at) {
        ip->model_subgraphs = (const tflm_subgraph_rec_t *)(const void *)(m->fb.buf + b->pd.nodes_at);
        ip->model_nodes = (const tflm_node_rec_t *)(const void *)(ip->model_subgraphs + m->subgraphs.count);
        ip->model_nodes_bytes = m->subgraphs.count * (uint32_t)sizeof(tflm_subgraph_rec_t)
                                + n_nodes * (uint32_t)sizeof(tflm_node_rec_t);
    }
    if (m->rewritable) {
        // Read in place from bytes that can still change: sealed (seal.c).
        ip->sealed_model_at = b->pd.pos;
        ip->sealed_model_bytes = b->pd.len;
    }
    return TFLM_OK;
}

// Builds everything that goes into the tail, in one order for the dry and
// the real pass (so the sizes and the prepare() peak they see agree): tensor
// records (with b->scratch_cap scratch records) before the nodes' prepare().
static tflm_status_t build_tail(tflm_build_t *b) {
    tflm_interp_t *ip = b->ip;
    tflm_status_t st;
    if ((st = find_prepared(b)) || (st = records_map(b)) || (st = build_subgraphs(b)) || (st = build_tensors(b))
        || (st = build_nodes(b)) || (st = build_variables(b)) || (st = build_state(b))) {
        return st;
    }
    if (ip->lists_in_model && b->lists_next != b->pd.lists_end - b->pd.pos) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, TFLM_PREPARED_METADATA " metadata: %u bytes after the index lists",
            (unsigned)(b->pd.lists_end - b->pd.pos - b->lists_next));
    }
    if (TFLM_PATCH && !b->dry && ip->patch.split && (st = tflm_patch_finish(ip))) {
        return st;
    }
    uint32_t tail_before = b->arena->cursor;
    if (!tflm_arena_align_tail(b->arena, TFLM_ALIGN)) {
        return out_of_tail(b);
    }
    tflm_interp_audit(ip, TFLM_AUDIT_ALIGNMENT, b->arena->cursor - tail_before, 0, 0);
    return TFLM_OK;
}

void tflm_build_reset_counts(tflm_interp_t *ip) {
    memset(ip->audit, 0, sizeof(ip->audit));
    ip->prepare_peak = 0;
    ip->model_data_bytes = 0;
    ip->model_data_count = 0;
    ip->model_lists_bytes = 0;
    ip->model_records_bytes = 0;
    ip->model_nodes_bytes = 0;
    ip->stateful = false;
    ip->sealed_model_at = 0;
    ip->sealed_model_bytes = 0;
    ip->tail_start = ip->arena->cursor;
}

// Dry runs: the tail bytes, the number of scratch buffers, and (in
// ip->prepare_peak) the most bytes prepare() had in use at once. The first
// run counts the scratch buffers, the second lays the tail out for real.
tflm_status_t tflm_build_measure(tflm_interp_t *ip, uint32_t *tail, uint32_t *n_scratch) {
    tflm_arena_t *saved = ip->arena;
    tflm_status_t st = TFLM_OK;
    uint32_t cap = 0;
    for (int pass = 0; pass < 2 && st == TFLM_OK; ++pass) {
        tflm_arena_t dry;
        tflm_arena_init_dry(&dry);
        tflm_build_t b = { .ip = ip, .arena = &dry, .dry = true, .scratch_cap = cap };
        ip->arena = &dry;
        tflm_build_reset_counts(ip);
        st = build_tail(&b);
        cap = b.n_scratch;
        *tail = dry.cursor;
    }
    ip->arena = saved;
    *n_scratch = cap;
    return st;
}


tflm_status_t tflm_build_tail(tflm_interp_t *ip, uint32_t scratch_cap, uint32_t *n_scratch) {
    tflm_build_t b = { .ip = ip, .arena = ip->arena, .scratch_cap = scratch_cap };
    tflm_status_t st = build_tail(&b);
    *n_scratch = b.n_scratch;
    return st;
}
