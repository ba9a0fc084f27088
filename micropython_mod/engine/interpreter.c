// The interpreter (see interpreter.h).
//
// Allocation runs the same build code twice. The dry run, in an arena with no
// memory, measures the tail; the real run then writes the records, runs the
// kernels' prepare(), marks lifetimes and plans the head. Tail layout, from
// the top of the arena down: subgraph records and their input/output lists,
// tensor records (model tensors, then scratch buffers), node records and
// their input/output lists, kernel data, variable tensors.
#include "interpreter.h"
#include "ops.h"
#include "schema.h"

typedef struct {
    tflm_interp_t *ip;
    tflm_arena_t *arena;
    bool dry;
    uint32_t n_scratch;   // scratch buffers requested so far
    uint32_t scratch_cap; // records reserved for them (real pass)
} tflm_build_t;

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

static void audit(tflm_interp_t *ip, tflm_audit_kind_t kind, uint32_t used, uint32_t requested, uint32_t count) {
    ip->audit[kind].used += used;
    ip->audit[kind].requested += requested;
    ip->audit[kind].count += count;
}

// Tail allocation of `bytes` rounded up to 4, recorded under `kind` as
// `count` items; TFLM_ARENA_FAIL on failure.
static uint32_t tail_alloc(tflm_build_t *b, uint32_t bytes, tflm_audit_kind_t kind, uint32_t count) {
    uint32_t used = tflm_align_up(bytes, 4);
    uint32_t at = tflm_arena_alloc_tail(b->arena, used, 4);
    if (at != TFLM_ARENA_FAIL) {
        audit(b->ip, kind, used, bytes, count);
    }
    return at;
}

static void *at(tflm_build_t *b, uint32_t offset) {
    return b->dry ? NULL : tflm_arena_ptr(b->arena, offset);
}

// Writes a list of global tensor indices (int16, -1 for omitted) from a
// model index vector after checking each one.
static tflm_status_t write_indices(tflm_build_t *b, uint16_t *out, tflm_fb_vec_t v, uint32_t base,
    uint32_t n_tensors, bool allow_none) {
    tflm_model_t *m = b->ip->model;
    for (uint32_t i = 0; i < v.count; ++i) {
        int32_t t = tflm_model_index(m, v, i);
        if (t == TFLM_NO_TENSOR && allow_none) {
            if (out) {
                out[i] = TFLM_NO_INDEX;
            }
            continue;
        }
        if (t < 0 || (uint32_t)t >= n_tensors) {
            return tflm_error(&b->ip->err, TFLM_ERR_VALUE, "malformed model: tensor index %d out of range (%u tensors)",
                (int)t, (unsigned)n_tensors);
        }
        if (out) {
            out[i] = (uint16_t)(base + (uint32_t)t);
        }
    }
    return TFLM_OK;
}

// Subgraph records and their input/output lists.
static tflm_status_t build_subgraphs(tflm_build_t *b) {
    tflm_interp_t *ip = b->ip;
    tflm_model_t *m = ip->model;
    uint32_t n = m->subgraphs.count;
    uint32_t recs_at = tail_alloc(b, n * (uint32_t)sizeof(tflm_subgraph_rec_t), TFLM_AUDIT_SUBGRAPHS, n);
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
        uint32_t n_io = sg.inputs.count + sg.outputs.count;
        uint32_t io_at = tail_alloc(b, 2 * n_io, TFLM_AUDIT_INDEX_LISTS, 1);
        if (io_at == TFLM_ARENA_FAIL) {
            return out_of_tail(b);
        }
        uint16_t *io = at(b, io_at);
        tflm_status_t st;
        if ((st = write_indices(b, io, sg.inputs, tensors, sg.tensors.count, false))
            || (st = write_indices(b, io ? io + sg.inputs.count : NULL, sg.outputs, tensors, sg.tensors.count, false))) {
            return st;
        }
        tflm_subgraph_rec_t *r = at(b, recs_at + s * (uint32_t)sizeof(tflm_subgraph_rec_t));
        if (r) {
            r->io = io_at;
            r->tensor_base = (uint16_t)tensors;
            r->n_tensors = (uint16_t)sg.tensors.count;
            r->node_base = (uint16_t)nodes;
            r->n_nodes = (uint16_t)sg.operators.count;
            r->n_inputs = (uint16_t)sg.inputs.count;
            r->n_outputs = (uint16_t)sg.outputs.count;
        }
        tensors += sg.tensors.count;
        nodes += sg.operators.count;
    }
    if (tensors >= TFLM_MAX_TENSORS || nodes > TFLM_MAX_OPS) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "model too large: %u tensors and %u operators in all subgraphs",
            (unsigned)tensors, (unsigned)nodes);
    }
    ip->n_model_tensors = tensors;
    ip->n_nodes = nodes;
    return TFLM_OK;
}

// Tensor records: where each model tensor's bytes are.
static tflm_status_t build_tensors(tflm_build_t *b) {
    tflm_interp_t *ip = b->ip;
    tflm_model_t *m = ip->model;
    uint32_t total = ip->n_model_tensors + b->scratch_cap;
    if (total >= TFLM_MAX_TENSORS) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "model too large: %u tensors and scratch buffers", (unsigned)total);
    }
    // One array: model tensors, then the scratch buffers' records. The tail
    // grows down, so the scratch part is allocated first.
    uint32_t scratch_at = tail_alloc(b, b->scratch_cap * (uint32_t)sizeof(tflm_tensor_rec_t),
        TFLM_AUDIT_SCRATCH, b->scratch_cap);
    uint32_t recs_at = tail_alloc(b, ip->n_model_tensors * (uint32_t)sizeof(tflm_tensor_rec_t),
        TFLM_AUDIT_TENSORS, ip->n_model_tensors);
    if (scratch_at == TFLM_ARENA_FAIL || recs_at == TFLM_ARENA_FAIL
        || recs_at + ip->n_model_tensors * (uint32_t)sizeof(tflm_tensor_rec_t) != scratch_at) {
        return out_of_tail(b);
    }
    ip->tensors_at = recs_at;
    if (b->dry) {
        return TFLM_OK;
    }
    tflm_tensor_rec_t *recs = tflm_arena_ptr(b->arena, recs_at);
    memset(recs, 0, total * sizeof(tflm_tensor_rec_t));
    uint32_t g = 0;
    for (uint32_t s = 0; s < ip->n_subgraphs; ++s) {
        tflm_subgraph_t sg;
        if (!tflm_model_subgraph(m, s, &sg)) {
            return tflm_model_check(m, &ip->err);
        }
        for (uint32_t i = 0; i < sg.tensors.count; ++i, ++g) {
            tflm_model_tensor_t t;
            uint32_t elements, bytes, pos, len;
            if (!tflm_model_tensor(m, &sg, i, &t) || !tflm_model_buffer(m, t.buffer, &pos, &len)) {
                return tflm_model_check(m, &ip->err);
            }
            if (!tflm_model_tensor_size(m, &t, &elements, &bytes)) {
                return tflm_error(&ip->err, TFLM_ERR_VALUE, "malformed model: tensor %u has a bad shape", (unsigned)i);
            }
            tflm_tensor_rec_t *r = &recs[g];
            r->type = t.type;
            r->bytes = bytes;
            r->first = TFLM_LIFETIME_UNSET;
            r->last = TFLM_LIFETIME_UNSET;
            if (t.is_variable) {
                r->flags |= TFLM_TENSOR_VARIABLE;
            }
            if (len != 0) {
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
                r->where = TFLM_AT_MODEL;
                r->data = pos;
            } else if (bytes != 0 && !t.is_variable) {
                r->where = TFLM_AT_HEAD;
            }
        }
    }
    return TFLM_OK;
}

static const tflm_kernel_t *node_kernel(tflm_interp_t *ip, const tflm_model_op_t *op, uint32_t *index) {
    (void)ip;
    return tflm_kernel_find(op->builtin, index);
}

// Prefixes the current error message with the node it came from.
tflm_status_t tflm_interp_node_error(tflm_interp_t *ip, uint32_t node, int32_t builtin) {
    char msg[TFLM_ERROR_MSG_LEN];
    memcpy(msg, ip->err.msg, sizeof(msg));
    const char *name = tflm_op_name(builtin);
    tflm_status_t st = ip->err.status;
    tflm_error(&ip->err, st, "operator %u (%s): %s", (unsigned)node, name ? name : "?", msg);
    return st;
}

// Node records, their input/output lists, and the kernels' prepare().
static tflm_status_t build_nodes(tflm_build_t *b) {
    tflm_interp_t *ip = b->ip;
    tflm_model_t *m = ip->model;
    uint32_t recs_at = tail_alloc(b, ip->n_nodes * (uint32_t)sizeof(tflm_node_rec_t), TFLM_AUDIT_NODES, ip->n_nodes);
    if (recs_at == TFLM_ARENA_FAIL) {
        return out_of_tail(b);
    }
    ip->nodes_at = recs_at;
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
            uint32_t io_at = tail_alloc(b, 2 * (n_in + n_out), TFLM_AUDIT_INDEX_LISTS, 1);
            if (io_at == TFLM_ARENA_FAIL) {
                return out_of_tail(b);
            }
            uint16_t *io = at(b, io_at);
            tflm_status_t st;
            if ((st = write_indices(b, io, op.inputs, tensor_base, sg.tensors.count, true))
                || (st = write_indices(b, io ? io + n_in : NULL, op.outputs, tensor_base, sg.tensors.count, false))) {
                return tflm_interp_node_error(ip, node, op.builtin);
            }
            uint32_t kernel_index;
            const tflm_kernel_t *k = node_kernel(ip, &op, &kernel_index);
            if (k == NULL) {
                // Checked before building; reached only if the model changed since.
                tflm_error(&ip->err, TFLM_ERR_NOT_IMPLEMENTED, "no kernel");
                return tflm_interp_node_error(ip, node, op.builtin);
            }
            tflm_prepare_t p;
            memset(&p, 0, sizeof(p));
            p.ip = ip;
            p.model = m;
            p.op = &op;
            p.subgraph = s;
            p.index = i;
            p.node = node;
            p.dry = b->dry;
            p.err = &ip->err;
            st = k->prepare(&p);
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
            uint32_t first_scratch = ip->n_model_tensors + b->n_scratch;
            if (!b->dry) {
                if (b->n_scratch + p.n_scratch > b->scratch_cap) {
                    return tflm_error(&ip->err, TFLM_ERR_RUNTIME, "internal error: scratch requests differ between passes");
                }
                for (uint32_t k2 = 0; k2 < p.n_scratch; ++k2) {
                    tflm_tensor_rec_t *r = tflm_interp_tensor(ip, first_scratch + k2);
                    r->where = p.scratch_bytes[k2] ? TFLM_AT_HEAD : TFLM_AT_NONE;
                    r->bytes = p.scratch_bytes[k2];
                    r->type = TFLM_INT8;
                    r->flags = TFLM_TENSOR_SCRATCH;
                    r->first = TFLM_LIFETIME_UNSET;
                    r->last = TFLM_LIFETIME_UNSET;
                }
                tflm_node_rec_t *nr = tflm_interp_node(ip, node);
                nr->io = io_at;
                nr->data = p.data_at;
                nr->kernel = (uint16_t)kernel_index;
                nr->scratch = (uint16_t)first_scratch;
                nr->n_inputs = (uint8_t)n_in;
                nr->n_outputs = (uint8_t)n_out;
                nr->n_scratch = p.n_scratch;
            }
            b->n_scratch += p.n_scratch;
        }
        tensor_base += sg.tensors.count;
    }
    return TFLM_OK;
}

// Variable tensors live in the tail, 16-byte aligned, zeroed.
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
            if (!t.is_variable || !tflm_model_tensor_size(m, &t, &elements, &bytes) || bytes == 0) {
                continue;
            }
            uint32_t tail_before = b->arena->cursor;
            uint32_t off = tflm_arena_alloc_tail(b->arena, tflm_align_up(bytes, TFLM_ALIGN), TFLM_ALIGN);
            if (off == TFLM_ARENA_FAIL) {
                return out_of_tail(b);
            }
            audit(ip, TFLM_AUDIT_VARIABLES, b->arena->cursor - tail_before, bytes, 1);
            if (!b->dry) {
                tflm_tensor_rec_t *r = tflm_interp_tensor(ip, g);
                r->where = TFLM_AT_TAIL;
                r->data = off;
                // As TFLM resets them: int8 state starts at its zero point.
                int fill = 0;
                if (t.type == TFLM_INT8 && t.zero_point.count > 0) {
                    fill = (int)(uint8_t)(int8_t)tflm_fb_vec_i64(&m->fb, t.zero_point, 0);
                }
                memset(tflm_arena_ptr(b->arena, off), fill, bytes);
            }
        }
    }
    return TFLM_OK;
}

// Resource variables: their records, then each one's buffer (16-byte
// aligned), filled as TFLM fills them.
static tflm_status_t build_resources(tflm_build_t *b) {
    tflm_interp_t *ip = b->ip;
    tflm_model_t *m = ip->model;
    tflm_status_t st = tflm_resource_count(m, &ip->n_resources, &ip->err);
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
        if (!tflm_resource_shape(m, (int32_t)id, &bytes, &fill)) {
            return tflm_model_check(m, &ip->err) ? ip->err.status
                   : tflm_error(&ip->err, TFLM_ERR_VALUE, "malformed model: resource variable %u", (unsigned)id);
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
    audit(ip, TFLM_AUDIT_RESOURCES, b->arena->cursor - tail_before, requested, ip->n_resources);
    return TFLM_OK;
}

// True when some operator of the model uses opcode entry `c`.
static bool opcode_used(tflm_model_t *m, uint32_t c) {
    for (uint32_t s = 0; s < m->subgraphs.count; ++s) {
        tflm_subgraph_t sg;
        if (!tflm_model_subgraph(m, s, &sg)) {
            return false;
        }
        for (uint32_t i = 0; i < sg.operators.count; ++i) {
            uint32_t t = tflm_fb_vec_table(&m->fb, sg.operators, i);
            if (tflm_fb_u32(&m->fb, t, TFLM_OPERATOR_OPCODE_INDEX, 0) == c) {
                return true;
            }
        }
    }
    return false;
}

// Writes the name of opcode entry `c` ("CONV_2D", "CUSTOM:Name", "BUILTIN_300").
static void opcode_name(tflm_model_t *m, uint32_t c, char *name, size_t cap) {
    tflm_fb_vec_t custom = { 0, 0 };
    int32_t code = tflm_model_opcode(m, c, &custom);
    const char *builtin = tflm_op_name(code);
    tflm_error_t e;
    if (code == TFLM_OP_CUSTOM && custom.count) {
        char cname[64];
        uint32_t n = TFLM_MIN(custom.count, (uint32_t)sizeof(cname) - 1);
        memcpy(cname, m->fb.buf + custom.pos, n);
        cname[n] = '\0';
        tflm_error(&e, TFLM_OK, "CUSTOM:%s", cname);
    } else if (builtin) {
        tflm_error(&e, TFLM_OK, "%s", builtin);
    } else {
        tflm_error(&e, TFLM_OK, "BUILTIN_%d", (int)code);
    }
    size_t len = strlen(e.msg);
    len = len < cap ? len : cap - 1;
    memcpy(name, e.msg, len);
    name[len] = '\0';
}

// A used opcode with no kernel in this build.
static bool opcode_missing(tflm_model_t *m, uint32_t c) {
    return tflm_kernel_find(tflm_model_opcode(m, c, NULL), NULL) == NULL && opcode_used(m, c);
}

bool tflm_interp_missing_op(tflm_model_t *m, uint32_t nth, char *name, size_t cap) {
    char other[72];
    for (uint32_t c = 0; c < m->opcodes.count && !m->fb.bad; ++c) {
        if (!opcode_missing(m, c)) {
            continue;
        }
        opcode_name(m, c, name, cap);
        bool seen = false;
        for (uint32_t c2 = 0; c2 < c && !seen; ++c2) {
            if (opcode_missing(m, c2)) {
                opcode_name(m, c2, other, sizeof(other));
                seen = strcmp(name, other) == 0;
            }
        }
        if (!seen && nth-- == 0) {
            return true;
        }
    }
    return false;
}

// Checks that every operator has a kernel; the error names the missing ones.
static tflm_status_t check_ops(tflm_interp_t *ip) {
    tflm_model_t *m = ip->model;
    tflm_error_t *err = &ip->err;
    char name[72];
    for (uint32_t n = 0; tflm_interp_missing_op(m, n, name, sizeof(name)); ++n) {
        if (n == 0) {
            tflm_error(err, TFLM_ERR_NOT_IMPLEMENTED, "model uses ops this firmware does not include: %s", name);
        } else {
            tflm_error_append(err, ", %s", name);
        }
    }
    if (err->status == TFLM_ERR_NOT_IMPLEMENTED) {
        return err->status;
    }
    return tflm_model_check(m, err);
}

// Builds everything that goes into the tail, in one order for the dry and
// the real pass (so the sizes and the prepare() peak they see agree): tensor
// records (with b->scratch_cap scratch records) before the nodes' prepare().
static tflm_status_t build_tail(tflm_build_t *b) {
    tflm_interp_t *ip = b->ip;
    tflm_status_t st;
    if ((st = build_subgraphs(b)) || (st = build_tensors(b)) || (st = build_nodes(b)) || (st = build_variables(b))
        || (st = build_resources(b))) {
        return st;
    }
    uint32_t tail_before = b->arena->cursor;
    if (!tflm_arena_align_tail(b->arena, TFLM_ALIGN)) {
        return out_of_tail(b);
    }
    audit(ip, TFLM_AUDIT_ALIGNMENT, b->arena->cursor - tail_before, 0, 0);
    return TFLM_OK;
}

static void reset_counts(tflm_interp_t *ip) {
    memset(ip->audit, 0, sizeof(ip->audit));
    ip->prepare_peak = 0;
    ip->tail_start = ip->arena->cursor;
}

// Dry runs: the tail bytes, the number of scratch buffers, and (in
// ip->prepare_peak) the most bytes prepare() had in use at once. The first
// run counts the scratch buffers, the second lays the tail out for real.
static tflm_status_t measure_tail(tflm_interp_t *ip, uint32_t *tail, uint32_t *n_scratch) {
    tflm_arena_t *saved = ip->arena;
    tflm_status_t st = TFLM_OK;
    uint32_t cap = 0;
    for (int pass = 0; pass < 2 && st == TFLM_OK; ++pass) {
        tflm_arena_t dry;
        tflm_arena_init_dry(&dry);
        tflm_build_t b = { ip, &dry, true, 0, cap };
        ip->arena = &dry;
        reset_counts(ip);
        st = build_tail(&b);
        cap = b.n_scratch;
        *tail = dry.cursor;
    }
    ip->arena = saved;
    *n_scratch = cap;
    return st;
}

// Arena bytes a model needs on top of what other interpreters already hold.
static uint32_t needed_in(const tflm_arena_t *a, uint32_t tail_before, uint32_t head, uint32_t tail, uint32_t peak) {
    return TFLM_MAX(TFLM_MAX(a->head, head) + tail_before + tail, a->head + tail_before + peak);
}

static bool bytes_overlap(const void *a, uint32_t a_len, const void *b, uint32_t b_len) {
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    return a_len != 0 && b_len != 0 && a0 < b0 + b_len && b0 < a0 + a_len;
}

// A pre-allocated tensor's buffer must be its own: sharing bytes with the
// arena, the model or another such tensor would change results silently.
static tflm_status_t external_overlap(tflm_interp_t *ip, const tflm_external_t *ext, const tflm_tensor_rec_t *self) {
    const char *what = NULL;
    if (bytes_overlap(ext->data, ext->len, ip->arena->base, ip->arena->size)) {
        what = "the arena";
    } else if (bytes_overlap(ext->data, ext->len, ip->model->fb.buf, ip->model->fb.len)) {
        what = "the model";
    }
    for (uint32_t i = 0; i < ip->n_tensors && what == NULL; ++i) {
        const tflm_tensor_rec_t *o = tflm_interp_tensor(ip, i);
        if (o != self && o->where == TFLM_AT_EXTERNAL
            && bytes_overlap(ext->data, ext->len, ip->external[o->data], o->bytes)) {
            const tflm_subgraph_rec_t *sg = tflm_interp_subgraph(ip, 0);
            return tflm_error(&ip->err, TFLM_ERR_VALUE, "buffer for tensor %u overlaps the buffer of tensor %u",
                (unsigned)ext->tensor, (unsigned)(i - sg->tensor_base));
        }
    }
    if (what) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "buffer for tensor %u overlaps %s", (unsigned)ext->tensor, what);
    }
    return TFLM_OK;
}

// A pre-allocated tensor: record ext->tensor's data lives in the user's buffer.
static tflm_status_t use_external(tflm_interp_t *ip, const tflm_external_t *ext) {
    const tflm_subgraph_rec_t *sg = tflm_interp_subgraph(ip, 0);
    if (ext->tensor >= sg->n_tensors) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "tensor %u does not exist (the model has %u tensors)",
            (unsigned)ext->tensor, (unsigned)sg->n_tensors);
    }
    tflm_tensor_rec_t *r = tflm_interp_tensor(ip, sg->tensor_base + ext->tensor);
    uint32_t t = ext->tensor;
    if (r->where != TFLM_AT_HEAD && r->where != TFLM_AT_EXTERNAL) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE,
            "tensor %u is %s: only tensors the arena's head would hold can be pre-allocated", (unsigned)t,
            r->where == TFLM_AT_MODEL ? "a constant" : r->where == TFLM_AT_TAIL ? "a variable" : "empty");
    }
    if (r->flags & TFLM_TENSOR_FIXED) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "tensor %u is placed by the offline plan (at offset %u)",
            (unsigned)t, (unsigned)r->data);
    }
    if (ext->len != r->bytes) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "buffer %s: tensor %u needs %u bytes, the buffer has %u",
            ext->len < r->bytes ? "too small" : "of the wrong size", (unsigned)t, (unsigned)r->bytes, (unsigned)ext->len);
    }
    size_t align = TFLM_MIN(tflm_type_size(r->type), 8u);
    if (align > 1 && (uintptr_t)ext->data % align != 0) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "buffer for tensor %u (%s) is not %u-byte aligned",
            (unsigned)t, tflm_type_name(r->type), (unsigned)align);
    }
    uint32_t slot = r->where == TFLM_AT_EXTERNAL ? r->data : ip->n_external;
    tflm_status_t st = external_overlap(ip, ext, r);
    if (st) {
        return st;
    }
    if (slot >= TFLM_MAX_EXTERNAL) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "at most %u tensors can be pre-allocated", TFLM_MAX_EXTERNAL);
    }
    if (slot == ip->n_external) {
        ip->n_external++;
    }
    ip->external[slot] = ext->data;
    r->where = TFLM_AT_EXTERNAL;
    r->data = slot;
    return TFLM_OK;
}

// Runs the planner over the head records (offline offsets stay where they
// are) and checks the result when a plan gave offsets.
static tflm_status_t plan_head(tflm_interp_t *ip) {
    tflm_status_t st = ip->planner->plan(tflm_interp_tensor(ip, 0), ip->n_tensors, &ip->head_bytes, &ip->err);
    if (st == TFLM_OK && ip->fixed) {
        st = tflm_plan_check(ip);
    }
    if (st != TFLM_OK) {
        return st;
    }
    uint32_t planned = 0, count = 0;
    for (uint32_t i = 0; i < ip->n_tensors; ++i) {
        const tflm_tensor_rec_t *r = tflm_interp_tensor(ip, i);
        if (r->where == TFLM_AT_HEAD) {
            planned += r->bytes;
            count++;
        }
    }
    memset(&ip->audit[TFLM_AUDIT_HEAD], 0, sizeof(ip->audit[TFLM_AUDIT_HEAD]));
    audit(ip, TFLM_AUDIT_HEAD, ip->head_bytes, planned, count);
    return TFLM_OK;
}

// Pre-allocated tensors, the offline plan's offsets, then the head's plan.
static tflm_status_t place_head(tflm_interp_t *ip, const tflm_config_t *cfg) {
    tflm_status_t st;
    for (uint32_t k = 0; k < cfg->n_external; ++k) {
        if ((st = use_external(ip, &cfg->external[k]))) {
            return st;
        }
    }
    #if TFLM_PLANNER_OFFLINE
    if (ip->planner == &tflm_planner_offline) {
        tflm_plan_t from_model;
        const tflm_plan_t *plan = cfg->plan;
        if (plan == NULL) {
            bool found;
            if ((st = tflm_plan_from_model(ip->model, &from_model, &found, &ip->err))) {
                return st;
            }
            if (!found) {
                return tflm_error(&ip->err, TFLM_ERR_VALUE,
                    "the model has no " TFLM_PLAN_METADATA " metadata: give the offline planner a plan");
            }
            plan = &from_model;
        }
        if ((st = tflm_plan_apply(ip, plan))) {
            return st;
        }
        ip->fixed = true;
    }
    #endif
    return plan_head(ip);
}

// Real run in ip->arena: the tail at the bottom of the arena's tail, or in
// the gap the configuration names. With check_head, fails unless the head
// fits too.
static tflm_status_t allocate(tflm_interp_t *ip, const tflm_config_t *cfg, bool check_head) {
    tflm_arena_t *a = ip->arena;
    tflm_status_t st;
    if ((st = check_ops(ip))) {
        return st;
    }
    uint32_t dry_tail, n_scratch;
    if ((st = measure_tail(ip, &dry_tail, &n_scratch))) {
        return st;
    }
    uint32_t peak = ip->prepare_peak;
    bool in_gap = cfg->gap_bytes != 0;
    if (in_gap) {
        // A gap lies inside the tail, above the lowest interpreter's, on
        // 16-byte boundaries; the model's tail must fit it.
        if ((cfg->gap_top | cfg->gap_bytes) % TFLM_ALIGN || cfg->gap_top + cfg->gap_bytes >= a->tail
            || cfg->gap_top + cfg->gap_bytes < cfg->gap_top || dry_tail > cfg->gap_bytes) {
            return tflm_error(&ip->err, TFLM_ERR_VALUE, "no room for %u tail bytes in a gap of %u at %u",
                (unsigned)dry_tail, (unsigned)cfg->gap_bytes, (unsigned)cfg->gap_top);
        }
        tflm_arena_begin_gap(a, cfg->gap_top, cfg->gap_bytes);
    } else if (TFLM_MAX(dry_tail, peak) > a->size - a->tail - a->head) {
        ip->err.needed = 0;
        ip->err.given = a->size;
        return tflm_error(&ip->err, TFLM_ERR_MEMORY, "arena too small: %u bytes cannot hold the model's %u persistent bytes",
            (unsigned)a->size, (unsigned)TFLM_MAX(dry_tail, peak));
    }
    uint32_t tail_before = a->tail;
    uint32_t cursor_before = a->cursor;
    tflm_build_t b = { ip, a, false, 0, n_scratch };
    reset_counts(ip);
    if ((st = build_tail(&b)) == TFLM_OK) {
        ip->n_tensors = ip->n_model_tensors + n_scratch;
        ip->tail_bytes = a->cursor - cursor_before;
        ip->tail_at = a->size - a->cursor;
        if (ip->tail_bytes != dry_tail || b.n_scratch != n_scratch) {
            st = tflm_error(&ip->err, TFLM_ERR_RUNTIME, "internal error: tail is %u bytes, measured %u",
                (unsigned)ip->tail_bytes, (unsigned)dry_tail);
        }
    }
    tflm_arena_end_gap(a);
    if (st == TFLM_OK) {
        st = tflm_lifetimes_mark(ip);
    }
    if (st == TFLM_OK) {
        st = place_head(ip, cfg);
        ip->prepare_peak = peak;
    }
    if (st == TFLM_OK && check_head) {
        // In a gap the tail takes no new bytes; only the head may grow.
        uint32_t needed = in_gap ? TFLM_MAX(a->head, ip->head_bytes) + a->tail
                                 : needed_in(a, tail_before, ip->head_bytes, ip->tail_bytes, peak);
        if (needed > a->size) {
            ip->err.needed = needed;
            ip->err.given = a->size;
            st = tflm_error(&ip->err, TFLM_ERR_MEMORY, "arena too small: needs %u bytes, has %u",
                (unsigned)needed, (unsigned)a->size);
        } else {
            a->head = TFLM_MAX(a->head, ip->head_bytes);
        }
    }
    if (st != TFLM_OK) {
        a->tail = a->cursor = tail_before; // give the tail back so the arena stays usable
        return st;
    }
    return TFLM_OK;
}

const tflm_planner_t *tflm_interp_default_planner(tflm_model_t *model) {
    #if TFLM_PLANNER_OFFLINE
    if (tflm_model_metadata(model, TFLM_PLAN_METADATA) != UINT32_MAX) {
        return &tflm_planner_offline;
    }
    #endif
    #if TFLM_PLANNER_GREEDY
    (void)model;
    return &tflm_planner_greedy;
    #elif TFLM_PLANNER_OFFLINE
    return &tflm_planner_offline;
    #else
    (void)model;
    return NULL;
    #endif
}

// The planner a configuration asks for, or an error when there is none.
static tflm_status_t set_planner(tflm_interp_t *ip, const tflm_config_t *cfg) {
    ip->planner = cfg->planner ? cfg->planner : tflm_interp_default_planner(ip->model);
    if (ip->planner == NULL) {
        return tflm_error(&ip->err, TFLM_ERR_NOT_IMPLEMENTED, "this firmware has no memory planner");
    }
    if (cfg->n_external > TFLM_MAX_EXTERNAL) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "at most %u tensors can be pre-allocated", TFLM_MAX_EXTERNAL);
    }
    return TFLM_OK;
}

tflm_status_t tflm_interp_init(tflm_interp_t *ip, tflm_model_t *model, tflm_arena_t *arena,
    const tflm_config_t *config) {
    memset(ip, 0, sizeof(*ip));
    ip->model = model;
    ip->arena = arena;
    tflm_status_t st = set_planner(ip, config);
    if (st != TFLM_OK) {
        return st;
    }
    if (arena->temp != 0) {
        return tflm_error(&ip->err, TFLM_ERR_RUNTIME, "arena is busy");
    }
    st = allocate(ip, config, true);
    if (st == TFLM_OK) {
        arena->users++;
        ip->ready = true;
    }
    return st;
}

tflm_status_t tflm_interp_set_external(tflm_interp_t *ip, const tflm_external_t *ext) {
    if (!ip->ready) {
        return tflm_error(&ip->err, TFLM_ERR_RUNTIME, "interpreter is not allocated");
    }
    const tflm_subgraph_rec_t *sg = tflm_interp_subgraph(ip, 0);
    tflm_tensor_rec_t *r = ext->tensor < sg->n_tensors ? tflm_interp_tensor(ip, sg->tensor_base + ext->tensor) : NULL;
    tflm_tensor_rec_t saved;
    if (r) {
        saved = *r;
    }
    uint32_t saved_n = ip->n_external;
    tflm_status_t st = use_external(ip, ext);
    if (st == TFLM_OK) {
        st = plan_head(ip);
    }
    tflm_arena_t *a = ip->arena;
    if (st == TFLM_OK) {
        // The arena's head is the largest plan of all its interpreters.
        uint32_t head = a->users == 1 ? ip->head_bytes : TFLM_MAX(a->head, ip->head_bytes);
        if (head + a->tail + a->temp > a->size) {
            ip->err.needed = head + a->tail;
            ip->err.given = a->size;
            st = tflm_error(&ip->err, TFLM_ERR_MEMORY, "arena too small: needs %u bytes, has %u",
                (unsigned)(head + a->tail), (unsigned)a->size);
        } else {
            a->head = head;
        }
    }
    if (st != TFLM_OK && r) {
        // Back to the plan that was in use; it fitted before.
        tflm_error_t err = ip->err;
        *r = saved;
        ip->n_external = saved_n;
        plan_head(ip);
        ip->err = err;
    }
    return st;
}

tflm_status_t tflm_interp_tail_size(tflm_model_t *model, const tflm_config_t *config,
    uint32_t *tail_bytes, uint32_t *work_bytes, tflm_error_t *err) {
    tflm_interp_t ip;
    tflm_arena_t none;
    memset(&ip, 0, sizeof(ip));
    tflm_arena_init_dry(&none);
    ip.model = model;
    ip.arena = &none;
    tflm_status_t st = set_planner(&ip, config);
    if (st == TFLM_OK) {
        st = check_ops(&ip);
    }
    uint32_t tail = 0, n_scratch;
    if (st == TFLM_OK) {
        st = measure_tail(&ip, &tail, &n_scratch);
    }
    *tail_bytes = tail;
    *work_bytes = TFLM_MAX(tail, ip.prepare_peak);
    *err = ip.err;
    return st;
}

uint32_t tflm_interp_needed_in(const tflm_arena_t *a, const tflm_interp_t *measured) {
    return needed_in(a, a->tail, measured->head_bytes, measured->tail_bytes, measured->prepare_peak);
}

tflm_status_t tflm_interp_measure(tflm_model_t *model, const tflm_config_t *config,
    void *work, size_t work_len, tflm_interp_t *out) {
    tflm_arena_t a;
    tflm_arena_init(&a, work, work_len);
    memset(out, 0, sizeof(*out));
    out->model = model;
    out->arena = &a;
    tflm_status_t st = set_planner(out, config);
    if (st == TFLM_OK) {
        st = allocate(out, config, false);
    }
    out->arena = NULL;
    return st;
}

void *tflm_interp_tensor_data(const tflm_interp_t *ip, const tflm_tensor_rec_t *r) {
    switch (r->where) {
        case TFLM_AT_HEAD:
        case TFLM_AT_TAIL:
            return tflm_arena_ptr(ip->arena, r->data);
        case TFLM_AT_MODEL:
            return (void *)(ip->model->fb.buf + r->data);
        case TFLM_AT_EXTERNAL:
            return ip->external[r->data];
        default:
            // No bytes, but a valid address: kernels may pass it to memset()
            // or memcpy() with a length of 0, which NULL would make undefined.
            return ip->arena->base;
    }
}

uint32_t tflm_interp_num_inputs(const tflm_interp_t *ip) {
    return tflm_interp_subgraph(ip, 0)->n_inputs;
}

uint32_t tflm_interp_num_outputs(const tflm_interp_t *ip) {
    return tflm_interp_subgraph(ip, 0)->n_outputs;
}

uint32_t tflm_interp_input(const tflm_interp_t *ip, uint32_t i) {
    const tflm_subgraph_rec_t *s = tflm_interp_subgraph(ip, 0);
    return ((const uint16_t *)tflm_arena_ptr(ip->arena, s->io))[i];
}

uint32_t tflm_interp_output(const tflm_interp_t *ip, uint32_t i) {
    const tflm_subgraph_rec_t *s = tflm_interp_subgraph(ip, 0);
    return ((const uint16_t *)tflm_arena_ptr(ip->arena, s->io))[s->n_inputs + i];
}

char tflm_interp_plan_char(const tflm_interp_t *ip, uint32_t record) {
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    if (tflm_interp_tensor(ip, record)->flags & TFLM_TENSOR_SCRATCH) {
        return '#';
    }
    return record < sizeof(digits) - 1 ? digits[record] : '*';
}

void tflm_interp_memory_plan(const tflm_interp_t *ip, uint32_t width,
    void (*line)(void *ctx, const char *text, size_t len), void *ctx) {
    char text[TFLM_PLAN_MAX_WIDTH + 48];
    width = TFLM_MAX(8u, TFLM_MIN(width, (uint32_t)TFLM_PLAN_MAX_WIDTH));
    // As TFLM's picture: the head spread over the width, at least a byte a column.
    uint32_t span = TFLM_MAX(ip->head_bytes, width);
    int32_t last = -1;
    for (uint32_t i = 0; i < ip->n_tensors; ++i) {
        const tflm_tensor_rec_t *r = tflm_interp_tensor(ip, i);
        if (r->where == TFLM_AT_HEAD) {
            last = TFLM_MAX(last, (int32_t)r->last);
        }
    }
    size_t n = tflm_format(text, sizeof(text), "head %u bytes over %u columns; row n: during operator n-1 (row 0: inputs);",
        (unsigned)ip->head_bytes, (unsigned)width);
    line(ctx, text, n);
    n = tflm_format(text, sizeof(text), "0-9a-zA-Z: tensor 0-61, *: higher tensors, #: scratch buffer, !: overlap");
    line(ctx, text, n);
    for (int32_t scope = 0; scope <= last; ++scope) {
        size_t pre = tflm_format(text, sizeof(text), "%s%d: ", scope < 10 ? "  " : scope < 100 ? " " : "", (int)scope);
        char *row = text + pre;
        memset(row, '.', width);
        uint32_t live = 0;
        for (uint32_t i = 0; i < ip->n_tensors; ++i) {
            const tflm_tensor_rec_t *r = tflm_interp_tensor(ip, i);
            if (r->where != TFLM_AT_HEAD || scope < r->first || scope > r->last) {
                continue;
            }
            uint32_t size = tflm_planned_size(r);
            live += size;
            uint32_t c0 = (uint32_t)((uint64_t)r->data * width / span);
            uint32_t c1 = (uint32_t)((uint64_t)(r->data + size) * width / span);
            char c = tflm_interp_plan_char(ip, i);
            for (uint32_t col = c0; col < c1 && col < width; ++col) {
                row[col] = row[col] == '.' ? c : '!';
            }
        }
        n = pre + width;
        n += tflm_format(text + n, sizeof(text) - n, " %u", (unsigned)live);
        line(ctx, text, n);
    }
}
