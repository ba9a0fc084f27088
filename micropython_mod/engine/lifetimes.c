// Tensor lifetimes in TFLM's allocation scopes (see interpreter.h).
//
// One scope per subgraph entry and per operator, counted across the
// subgraphs that control-flow operators run, in execution order: the same
// numbering as TFLM's, so the greedy plan equals TFLM's. The walk keeps its
// own frame stack (at most TFLM_MAX_CALL_DEPTH frames, on the C stack) and
// never recurses, so deeply nested subgraphs cannot overflow the stack, and
// every subgraph visit counts towards the scope limit, so nested calls with
// fan-out cannot make it run for long.
#include "build.h"

typedef struct {
    uint16_t subgraph;
    uint16_t node;       // operator of the subgraph being visited
    int16_t start;       // scope of that operator
    uint8_t n_called;    // subgraphs it runs (control flow)
    uint8_t next_call;   // how many of them were entered
    int32_t called[2];
} lt_frame_t;

typedef struct {
    tflm_interp_t *ip;
    tflm_plan_rec_t *recs; // one per arena record: the lifetimes are written here
    int32_t scope;
    uint32_t depth;
    lt_frame_t frames[TFLM_MAX_CALL_DEPTH];
} lt_walk_t;

static tflm_status_t next_scope(lt_walk_t *w) {
    if (++w->scope > INT16_MAX) {
        return tflm_error(&w->ip->err, TFLM_ERR_VALUE,
            "model too large: more than %d allocation scopes (operators and subgraph calls)", INT16_MAX);
    }
    return TFLM_OK;
}

// Constants' records in a prepared model have no lifetimes: they are never
// planned.
static tflm_plan_rec_t *life(lt_walk_t *w, uint32_t rec) {
    return (rec & TFLM_REC_CONST) ? NULL : &w->recs[rec];
}

static void set_created(lt_walk_t *w, uint32_t tensor) {
    tflm_plan_rec_t *r = life(w, tensor);
    if (r) {
        r->first = (int16_t)w->scope;
        r->last = (int16_t)w->scope;
    }
}

static void set_used(lt_walk_t *w, uint32_t tensor) {
    tflm_plan_rec_t *r = life(w, tensor);
    if (r) {
        r->last = (int16_t)w->scope;
    }
}

static void set_written(lt_walk_t *w, uint32_t tensor) {
    tflm_plan_rec_t *r = life(w, tensor);
    if (r) {
        r->flags |= TFLM_PLAN_WRITTEN;
    }
}

// An operator input must hold something defined when the operator runs: a
// constant, model state, a subgraph input, or what an earlier operator wrote.
// Anything else would read stale arena bytes that depend on the plan.
static tflm_status_t check_defined(lt_walk_t *w, uint32_t node, uint32_t tensor) {
    const tflm_plan_rec_t *r = life(w, tensor);
    if (r == NULL || r->where != TFLM_AT_HEAD || (r->flags & TFLM_PLAN_WRITTEN)) {
        return TFLM_OK;
    }
    const tflm_subgraph_rec_t *s = tflm_interp_subgraph(w->ip, w->frames[w->depth - 1].subgraph);
    return tflm_error(&w->ip->err, TFLM_ERR_VALUE,
        "malformed model: operator %u reads tensor %u of subgraph %u before anything writes it "
        "(not a constant, an input or a variable)",
        (unsigned)node, (unsigned)(tflm_interp_tensor_of(w->ip, tensor) - s->tensor_base),
        (unsigned)w->frames[w->depth - 1].subgraph);
}

// What an operator writes or a subgraph takes as input must not be a
// constant's bytes (the model's: flash, an immutable bytes object, a
// prepared model's metadata). The model's reader refused such models at
// load; a buffer changed since is checked here again.
static tflm_status_t check_writable(lt_walk_t *w, uint32_t node, uint32_t tensor) {
    const tflm_tensor_rec_t *r = tflm_interp_tensor(w->ip, tensor);
    if (r->where != TFLM_AT_MODEL || r->bytes == 0) {
        return TFLM_OK;
    }
    uint32_t s = w->frames[w->depth - 1].subgraph;
    uint32_t t = tflm_interp_tensor_of(w->ip, tensor) - tflm_interp_subgraph(w->ip, s)->tensor_base;
    if (node == UINT32_MAX) {
        return tflm_error(&w->ip->err, TFLM_ERR_VALUE, "malformed model: subgraph %u takes tensor %u, a constant, "
            "as input", (unsigned)s, (unsigned)t);
    }
    return tflm_error(&w->ip->err, TFLM_ERR_VALUE, "malformed model: operator %u writes tensor %u of subgraph %u, "
        "a constant", (unsigned)node, (unsigned)t, (unsigned)s);
}

// The subgraphs operator `index` of subgraph `s` runs (control flow).
static tflm_status_t called_subgraphs(lt_walk_t *w, uint32_t s, uint32_t index, lt_frame_t *f) {
    tflm_interp_t *ip = w->ip;
    tflm_model_t *m = ip->model;
    tflm_subgraph_t sg;
    tflm_model_op_t op;
    f->n_called = 0;
    f->next_call = 0;
    if (!tflm_model_subgraph(m, s, &sg) || !tflm_model_op(m, &sg, index, &op)) {
        return tflm_model_check(m, &ip->err);
    }
    int32_t called[2] = { -1, -1 };
    const tflm_kernel_t *k = tflm_kernel_for_opcode(m, op.opcode_index, NULL);
    if (k != NULL && k->hooks != NULL && k->hooks->calls != NULL) {
        tflm_prepare_t p;
        tflm_error_t err;
        memset(&err, 0, sizeof(err));
        tflm_prepare_start(&p, ip, &op, s, index, tflm_interp_subgraph(ip, s)->node_base + index, true, &err);
        k->hooks->calls(&p, called);
    }
    for (int c = 0; c < 2; ++c) {
        if (called[c] == -1) {
            continue;
        }
        if (called[c] < 0 || (uint32_t)called[c] >= ip->n_subgraphs) {
            return tflm_error(&ip->err, TFLM_ERR_VALUE, "malformed model: operator calls subgraph %d of %u",
                (int)called[c], (unsigned)ip->n_subgraphs);
        }
        f->called[f->n_called++] = called[c];
    }
    return tflm_model_check(m, &ip->err);
}

// Enters subgraph s: a new frame, its inputs and outputs created.
static tflm_status_t enter(lt_walk_t *w, uint32_t s) {
    tflm_interp_t *ip = w->ip;
    for (uint32_t d = 0; d < w->depth; ++d) {
        if (w->frames[d].subgraph == s) {
            return tflm_error(&ip->err, TFLM_ERR_VALUE, "malformed model: subgraph %u calls itself", (unsigned)s);
        }
    }
    if (w->depth == TFLM_MAX_CALL_DEPTH) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "model nests subgraph calls more than %u deep (subgraph %u)",
            TFLM_MAX_CALL_DEPTH, (unsigned)s);
    }
    lt_frame_t *f = &w->frames[w->depth++];
    memset(f, 0, sizeof(*f));
    f->subgraph = (uint16_t)s;
    const tflm_subgraph_rec_t *sr = tflm_interp_subgraph(ip, s);
    const uint16_t *sio = tflm_interp_io(ip, sr->io);
    for (uint32_t i = 0; i < (uint32_t)sr->n_inputs + sr->n_outputs; ++i) {
        set_created(w, sio[i]);
    }
    for (uint32_t i = 0; i < sr->n_inputs; ++i) {
        tflm_status_t st = check_writable(w, UINT32_MAX, sio[i]);
        if (st) {
            return st;
        }
        set_written(w, sio[i]);
    }
    return TFLM_OK;
}

// The operator's inputs, outputs and scratch buffers are used until now.
static tflm_status_t finish_node(lt_walk_t *w, const lt_frame_t *f) {
    tflm_interp_t *ip = w->ip;
    const tflm_subgraph_rec_t *sr = tflm_interp_subgraph(ip, f->subgraph);
    uint32_t node = sr->node_base + f->node;
    const tflm_node_rec_t *nr = tflm_interp_node(ip, node);
    const uint16_t *io = tflm_interp_io(ip, nr->io);
    for (uint32_t k = 0; k < nr->n_inputs; ++k) {
        if (io[k] != TFLM_NO_INDEX) {
            set_used(w, io[k]);
        }
    }
    for (uint32_t k = 0; k < nr->n_outputs; ++k) {
        set_used(w, io[nr->n_inputs + k]);
        set_written(w, io[nr->n_inputs + k]);
    }
    for (uint32_t k = 0; k < nr->n_scratch; ++k) {
        tflm_plan_rec_t *r = &w->recs[nr->scratch + k];
        r->first = f->start;
        r->last = (int16_t)w->scope;
    }
    if (tflm_patch_ends(&ip->patch, node)) {
        // A patch-based stage (patch.h) reads its nodes' inputs until its
        // last node has run every patch, in its patch buffer.
        tflm_plan_rec_t *buf = &w->recs[ip->patch.scratch];
        buf->first = f->start;
        buf->last = (int16_t)w->scope;
        for (uint32_t n = sr->node_base + ip->patch.start; n < node; ++n) {
            const tflm_node_rec_t *sn = tflm_interp_node(ip, n);
            const uint16_t *sio = tflm_interp_io(ip, sn->io);
            for (uint32_t k = 0; k < sn->n_inputs; ++k) {
                if (sio[k] != TFLM_NO_INDEX) {
                    set_used(w, sio[k]);
                }
            }
        }
    }
    return TFLM_OK;
}

// Starts the next operator of the top frame: a scope of its own, its
// outputs created, its inputs checked; then the subgraphs it runs.
static tflm_status_t start_node(lt_walk_t *w, lt_frame_t *f) {
    tflm_interp_t *ip = w->ip;
    tflm_status_t st = next_scope(w);
    if (st) {
        return st;
    }
    const tflm_subgraph_rec_t *sr = tflm_interp_subgraph(ip, f->subgraph);
    uint32_t node = sr->node_base + f->node;
    const tflm_node_rec_t *nr = tflm_interp_node(ip, node);
    const uint16_t *io = tflm_interp_io(ip, nr->io);
    for (uint32_t k = 0; k < nr->n_inputs; ++k) {
        if (io[k] != TFLM_NO_INDEX && (st = check_defined(w, node, io[k]))) {
            return st;
        }
    }
    for (uint32_t k = 0; k < nr->n_outputs; ++k) {
        if ((st = check_writable(w, node, io[nr->n_inputs + k]))) {
            return st;
        }
        set_created(w, io[nr->n_inputs + k]);
    }
    f->start = (int16_t)w->scope;
    return called_subgraphs(w, f->subgraph, f->node, f);
}

tflm_status_t tflm_lifetimes_mark(tflm_interp_t *ip, tflm_plan_rec_t *recs) {
    lt_walk_t w;
    w.ip = ip;
    w.recs = recs;
    w.scope = 0;
    w.depth = 0;
    tflm_status_t st = enter(&w, 0);
    bool node_started = false;
    while (st == TFLM_OK && w.depth > 0) {
        lt_frame_t *f = &w.frames[w.depth - 1];
        const tflm_subgraph_rec_t *sr = tflm_interp_subgraph(ip, f->subgraph);
        if (!node_started) {
            if (f->node == sr->n_nodes) {
                // Subgraph done: its outputs are used until here.
                const uint16_t *sio = tflm_interp_io(ip, sr->io);
                for (uint32_t i = 0; i < sr->n_outputs; ++i) {
                    set_used(&w, sio[sr->n_inputs + i]);
                }
                w.depth--;
                node_started = w.depth > 0; // back in the caller's operator
                continue;
            }
            st = start_node(&w, f);
            node_started = true;
        } else if (f->next_call < f->n_called) {
            // A subgraph the operator runs: entering it is a scope too.
            int32_t callee = f->called[f->next_call++];
            if ((st = next_scope(&w)) == TFLM_OK) {
                st = enter(&w, (uint32_t)callee);
            }
            node_started = false;
        } else {
            st = finish_node(&w, f);
            f->node++;
            node_started = false;
        }
    }
    ip->n_scopes = (uint32_t)w.scope + 1;
    return st;
}
