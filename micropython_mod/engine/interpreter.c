// The interpreter (see interpreter.h): allocation in an arena, in order:
// the missing-op check (missing_ops.c), the tail measured and then built
// (build.c), pre-allocated tensors, lifetimes (lifetimes.c) and an offline
// plan's offsets, the head planned (planner_*.c) and checked (plan.c).
// Running is invoke.c; the plan picture plan_picture.c.
#include "build.h"
#include "ops.h"

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
                (unsigned)ext->tensor, (unsigned)(tflm_interp_tensor_of(ip, i) - sg->tensor_base));
        }
    }
    if (what) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "buffer for tensor %u overlaps %s", (unsigned)ext->tensor, what);
    }
    return TFLM_OK;
}

// Subgraph 0's inputs (or outputs) as tensor indices, "88" or "1, 2, 5"
// (the first four, then "..."), NUL-terminated in buf (at least 48 bytes):
// for the messages of tensors that cannot be pre-allocated.
static void io_tensors(const tflm_interp_t *ip, bool outputs, char *buf) {
    const tflm_subgraph_rec_t *sg = tflm_interp_subgraph(ip, 0);
    const uint16_t *io = tflm_interp_io(ip, sg->io) + (outputs ? sg->n_inputs : 0);
    uint32_t n = outputs ? sg->n_outputs : sg->n_inputs, len = 0;
    for (uint32_t k = 0; k < n && k < 4; ++k) {
        char digits[10];
        uint32_t v = io[k] == TFLM_NO_INDEX ? 0 : tflm_interp_tensor_of(ip, io[k]) - sg->tensor_base, nd = 0;
        do {
            digits[nd++] = (char)('0' + v % 10);
            v /= 10;
        } while (v && nd < sizeof(digits));
        if (k) {
            buf[len++] = ',';
            buf[len++] = ' ';
        }
        while (nd) {
            buf[len++] = digits[--nd];
        }
    }
    if (n > 4) {
        memcpy(buf + len, ", ...", 5);
        len += 5;
    }
    buf[len] = '\0';
}

// A pre-allocated tensor: record ext->tensor's data lives in the user's buffer.
static tflm_status_t use_external(tflm_interp_t *ip, const tflm_external_t *ext) {
    const tflm_subgraph_rec_t *sg = tflm_interp_subgraph(ip, 0);
    if (ext->tensor >= sg->n_tensors) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "tensor %u does not exist (the model has %u tensors)",
            (unsigned)ext->tensor, (unsigned)sg->n_tensors);
    }
    tflm_tensor_rec_t *r = tflm_interp_tensor_mut(ip, tflm_interp_rec_of(ip, sg->tensor_base + ext->tensor));
    uint32_t t = ext->tensor;
    uint32_t where = r ? r->where : TFLM_AT_MODEL;
    if (where != TFLM_AT_HEAD && where != TFLM_AT_EXTERNAL) {
        char ins[48], outs[48];
        io_tensors(ip, false, ins);
        io_tensors(ip, true, outs);
        return tflm_error(&ip->err, TFLM_ERR_VALUE,
            "tensor %u is %s: only tensors the arena's head would hold can be pre-allocated, e.g. inputs (%s) "
            "and outputs (%s): model.inputs[i].index", (unsigned)t,
            where == TFLM_AT_MODEL ? "a constant" : tflm_at_tail(where) ? "a variable" : "empty", ins, outs);
    }
    uint32_t bytes = r->bytes, type = r->type;
    if (ext->len != bytes) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "buffer %s: tensor %u needs %u bytes, the buffer has %u",
            ext->len < bytes ? "too small" : "of the wrong size", (unsigned)t, (unsigned)bytes, (unsigned)ext->len);
    }
    size_t align = TFLM_MIN(tflm_type_size(type), 8u);
    if (align > 1 && (uintptr_t)ext->data % align != 0) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "buffer for tensor %u (%s) is not %u-byte aligned",
            (unsigned)t, tflm_type_name(type), (unsigned)align);
    }
    uint32_t slot = where == TFLM_AT_EXTERNAL ? r->data : ip->n_external;
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

// The interpreter's records as the plan code sees them.
tflm_plan_view_t tflm_interp_plan_view(const tflm_interp_t *ip, tflm_plan_rec_t *recs) {
    tflm_plan_view_t v = {
        recs, tflm_interp_tensor(ip, 0), ip->map.n_live, ip->n_tensors, tflm_interp_node(ip, 0), ip->n_nodes,
        ip->lists_base, (tflm_error_t *)&ip->err, ip->model, tflm_interp_subgraph(ip, 0), ip->n_subgraphs, ip->map,
        ip->arena ? ip->arena->base : NULL, &ip->patch, ip->forward_overlaps,
    };
    return v;
}

tflm_status_t tflm_interp_plan_records(tflm_interp_t *ip, tflm_plan_rec_t *out) {
    const tflm_tensor_rec_t *t = tflm_interp_tensor(ip, 0);
    for (uint32_t i = 0; i < ip->n_tensors; ++i) {
        const tflm_tensor_rec_t *r = &t[i];
        out[i].data = r->data;
        out[i].bytes = r->bytes;
        out[i].where = (uint8_t)r->where;
        out[i].first = TFLM_LIFETIME_UNSET;
        out[i].last = TFLM_LIFETIME_UNSET;
        out[i].flags = (uint8_t)((i >= ip->map.n_live ? TFLM_PLAN_SCRATCH : 0)
            | (ip->fixed && r->where == TFLM_AT_HEAD ? TFLM_PLAN_FIXED : 0));
    }
    return tflm_lifetimes_mark(ip, out);
}

// Runs the planner over the head records (offline offsets stay where they
// are) and checks the result when a plan gave offsets; the offsets go back
// into the arena's records.
static tflm_status_t plan_head(tflm_interp_t *ip, tflm_plan_rec_t *recs) {
    tflm_plan_view_t view = tflm_interp_plan_view(ip, recs);
    tflm_status_t st = ip->planner->plan(view.recs, ip->n_tensors, &view, &ip->head_bytes, &ip->err);
    if (st == TFLM_OK && ip->fixed) {
        st = tflm_plan_check(&view);
    }
    if (st != TFLM_OK) {
        return st;
    }
    tflm_tensor_rec_t *t = tflm_interp_tensor_mut(ip, 0);
    for (uint32_t i = 0; i < ip->n_tensors; ++i) {
        if (recs[i].where == TFLM_AT_HEAD) {
            t[i].data = recs[i].data;
        }
    }
    // Arenas come in whole TFLM_ALIGN units: an offline plan's highest buffer
    // may end between them (an int8 tensor at an odd offset).
    ip->head_bytes = tflm_align_up(ip->head_bytes, TFLM_ALIGN);
    uint32_t planned = 0, count = 0;
    for (uint32_t i = 0; i < ip->n_tensors; ++i) {
        const tflm_tensor_rec_t *r = tflm_interp_tensor(ip, i);
        if (r->where == TFLM_AT_HEAD) {
            planned += r->bytes;
            count++;
        }
    }
    memset(&ip->audit[TFLM_AUDIT_HEAD], 0, sizeof(ip->audit[TFLM_AUDIT_HEAD]));
    tflm_interp_audit(ip, TFLM_AUDIT_HEAD, ip->head_bytes, planned, count);
    return TFLM_OK;
}

// The offline plan's offsets, then the head's plan (the pre-allocated
// tensors are out of the head already).
static tflm_status_t place_head(tflm_interp_t *ip, const tflm_config_t *cfg, tflm_plan_rec_t *recs) {
    #if TFLM_PLANNER_OFFLINE
    if (ip->planner == &tflm_planner_offline) {
        tflm_status_t st;
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
        tflm_plan_view_t view = tflm_interp_plan_view(ip, recs);
        if ((st = tflm_plan_apply(&view, plan))) {
            return st;
        }
        ip->fixed = true;
    }
    #else
    (void)cfg;
    #endif
    return plan_head(ip, recs);
}

// Real run in ip->arena: the tail at the bottom of the arena's tail, or in
// the gap the configuration names. With check_head, fails unless the head
// fits too.
static tflm_status_t allocate(tflm_interp_t *ip, const tflm_config_t *cfg, bool check_head) {
    tflm_arena_t *a = ip->arena;
    tflm_status_t st;
    if ((st = tflm_build_check_ops(ip))) {
        return st;
    }
    uint32_t dry_tail, n_scratch;
    if ((st = tflm_build_measure(ip, &dry_tail, &n_scratch))) {
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
    uint32_t built_scratch;
    tflm_build_reset_counts(ip);
    if ((st = tflm_build_tail(ip, n_scratch, &built_scratch)) == TFLM_OK) {
        ip->n_tensors = ip->map.n_live + n_scratch;
        ip->tail_bytes = a->cursor - cursor_before;
        ip->tail_at = a->size - a->cursor;
        if (ip->tail_bytes != dry_tail || built_scratch != n_scratch) {
            st = tflm_error(&ip->err, TFLM_ERR_RUNTIME, "internal error: tail is %u bytes, measured %u",
                (unsigned)ip->tail_bytes, (unsigned)dry_tail);
        }
    }
    tflm_arena_end_gap(a);
    // The planners' records, in the caller's memory while the head is
    // planned: the arena holds only what it keeps. One spare: never 0 bytes.
    uint32_t plan_bytes = (ip->n_tensors + 1) * (uint32_t)sizeof(tflm_plan_rec_t);
    tflm_plan_rec_t *recs = st == TFLM_OK && cfg->plan_memory ? cfg->plan_memory(NULL, plan_bytes) : NULL;
    if (st == TFLM_OK && recs == NULL) {
        st = tflm_error(&ip->err, TFLM_ERR_MEMORY, "no heap for planning (%u bytes)", (unsigned)plan_bytes);
    }
    if (st == TFLM_OK) {
        for (uint32_t k = 0; k < cfg->n_external && st == TFLM_OK; ++k) {
            st = use_external(ip, &cfg->external[k]);
        }
        if (st == TFLM_OK) {
            st = tflm_interp_plan_records(ip, recs);
        }
        if (st == TFLM_OK) {
            st = place_head(ip, cfg, recs);
        }
        ip->prepare_peak = peak;
    }
    if (recs) {
        cfg->plan_memory(recs, plan_bytes);
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
    ip->tensors_only = cfg->tensors_only;
    ip->forward_overlaps = cfg->forward_overlaps;
    ip->stage_given = cfg->stage != NULL;
    if (cfg->stage != NULL) {
        ip->stage = *cfg->stage;
    }
    ip->kernel_data = cfg->kernel_data;
    ip->index_list = cfg->index_list;
    ip->kernel_data_ctx = cfg->kernel_data_ctx;
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
    if (bytes_overlap(arena->base, arena->size, model->fb.buf, model->fb.len)) {
        // invoke() would write over the weights the model reads.
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "the arena overlaps the model's bytes");
    }
    st = allocate(ip, config, true);
    if (st == TFLM_OK) {
        arena->users++;
        ip->ready = true;
        tflm_interp_seal(ip);
    }
    return st;
}

tflm_status_t tflm_interp_set_external(tflm_interp_t *ip, const tflm_external_t *ext, tflm_plan_rec_t *work) {
    tflm_status_t st = tflm_interp_verify(ip);
    if (st) {
        return st;
    }
    const tflm_subgraph_rec_t *sg = tflm_interp_subgraph(ip, 0);
    tflm_tensor_rec_t *r = ext->tensor < sg->n_tensors
        ? tflm_interp_tensor_mut(ip, tflm_interp_rec_of(ip, sg->tensor_base + ext->tensor)) : NULL;
    tflm_tensor_rec_t saved;
    if (r) {
        saved = *r;
    }
    uint32_t saved_n = ip->n_external;
    st = use_external(ip, ext);
    if (st == TFLM_OK) {
        st = tflm_interp_plan_records(ip, work);
    }
    if (st == TFLM_OK) {
        st = plan_head(ip, work);
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
        if (tflm_interp_plan_records(ip, work) == TFLM_OK) {
            plan_head(ip, work);
        }
        ip->err = err;
    }
    tflm_interp_seal(ip); // the records as they are now
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
        st = tflm_build_check_ops(&ip);
    }
    uint32_t tail = 0, n_scratch;
    if (st == TFLM_OK) {
        st = tflm_build_measure(&ip, &tail, &n_scratch);
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
        case TFLM_AT_KEPT:
        case TFLM_AT_STATE:
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
    return tflm_interp_io(ip, s->io)[i];
}

uint32_t tflm_interp_output(const tflm_interp_t *ip, uint32_t i) {
    const tflm_subgraph_rec_t *s = tflm_interp_subgraph(ip, 0);
    return tflm_interp_io(ip, s->io)[s->n_inputs + i];
}

