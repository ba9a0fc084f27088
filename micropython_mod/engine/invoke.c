// Running a model (see interpreter.h).
//
// Operators run in order from the node records; nothing here reads the
// model's structure. Control-flow operators do not call back into the
// interpreter: their eval() asks for a subgraph (tflm_eval_call), which runs
// in a frame of this loop's own, and then their eval() runs again to finish.
// So the stack invoke() needs does not grow with the nesting of subgraphs,
// whose depth the build bounded by TFLM_MAX_CALL_DEPTH. The records are in
// the arena, which the user can write: nothing is followed before the seal
// (seal.c) says they are what the build wrote, in an arena that anything
// given out can reach (tflm_arena_t.exposed).
#include "build.h"

typedef struct {
    uint16_t subgraph;
    uint16_t node; // operator of the subgraph running
} invoke_frame_t;

// Whether a model of one subgraph without a stage takes run_nodes' loop
// without frames (0: the frames' loop runs every model; PYBV11, short of
// flash: 490 B less there).
#ifndef TFLM_INVOKE_FLAT
#define TFLM_INVOKE_FLAT (1)
#endif

// The top bit of an address (run_nodes' bases).
#define BASE_FLIP ((uintptr_t)1 << (sizeof(uintptr_t) * 8 - 1))

// Where each kind of record's `data` counts from, as
// tflm_interp_tensor_data() reads it: the planned buffers, the tail's and
// the constants without its call (an operator takes four to six records,
// and on a small model those calls cost as much as its arithmetic); 0 for
// the kinds left to it. Kept with their top bit flipped: run_nodes' frame
// outlives the call as stale stack bytes, and a garbage collector that
// scans stacks conservatively (MicroPython's) takes a word equal to the
// start of a heap block for a reference: a plain copy of the arena's start
// kept an arena that was dropped alive. With them the records, looked up
// once rather than through the interpreter at every input (kernels' stores
// could alias it): the arena's, and the constants' of a prepared model
// (index TFLM_REC_CONST + k; without consts the build wrote no such index).
typedef struct {
    uintptr_t bases[8];
    const tflm_tensor_rec_t *recs, *consts;
} invoke_recs_t;

// Node nr's inputs, outputs and scratch buffers into ptrs, and the fields
// of e that change from node to node.
static TFLM_ALWAYS_INLINE void invoke_node(const tflm_interp_t *ip, const invoke_recs_t *x,
    const tflm_node_rec_t *nr, void **ptrs, tflm_eval_t *e, bool resumed) {
    const uint16_t *io = tflm_interp_io(ip, nr->io);
    const uint32_t n_io = (uint32_t)nr->n_inputs + nr->n_outputs;
    const uintptr_t *bases = x->bases;
    const tflm_tensor_rec_t *recs = x->recs, *consts = x->consts;
    // Two loops: the one without constants has fewer values live.
    if (consts == NULL) {
        for (uint32_t k = 0; k < n_io; ++k) {
            const uint32_t r = io[k];
            void *p = NULL;
            if (r != TFLM_NO_INDEX) {
                const tflm_tensor_rec_t *t = recs + r;
                p = bases[t->where] ? (void *)((bases[t->where] ^ BASE_FLIP) + t->data)
                                    : tflm_interp_tensor_data(ip, t);
            }
            ptrs[k] = p;
        }
    } else {
        for (uint32_t k = 0; k < n_io; ++k) {
            const uint32_t r = io[k];
            void *p = NULL;
            if (r != TFLM_NO_INDEX) {
                const tflm_tensor_rec_t *t = (r & TFLM_REC_CONST) ? consts + (r - TFLM_REC_CONST) : recs + r;
                p = bases[t->where] ? (void *)((bases[t->where] ^ BASE_FLIP) + t->data)
                                    : tflm_interp_tensor_data(ip, t);
            }
            ptrs[k] = p;
        }
    }
    for (uint32_t k = 0; k < nr->n_scratch; ++k) {
        ptrs[n_io + k] = tflm_interp_tensor_data(ip, recs + nr->scratch + k);
    }
    e->data = tflm_interp_node_data(ip, nr);
    e->out = ptrs + nr->n_inputs;
    e->scratch = ptrs + n_io;
    e->n_in = nr->n_inputs;
    e->n_out = nr->n_outputs;
    e->call = TFLM_EVAL_NO_CALL;
    e->resumed = resumed;
    e->stop = false;
}

// Between operators (and at each return from a subgraph: every pass of a
// WHILE loop) no operator is half run: an interrupt stops the invoke there,
// as an operator error would. Control-flow kernels start afresh at the next
// invoke() (e->resumed false).
static TFLM_ALWAYS_INLINE bool invoke_interrupted(tflm_interp_t *ip) {
    return (ip->interrupt_word != NULL && *ip->interrupt_word != NULL)
        || (ip->interrupt != NULL && ip->interrupt(ip->interrupt_ctx));
}

// The nodes, in order (the seal checked, where it is compared).
static tflm_status_t run_nodes(tflm_interp_t *ip) {
    invoke_frame_t frames[TFLM_MAX_CALL_DEPTH];
    void *ptrs[TFLM_MAX_NODE_IO + TFLM_MAX_SCRATCH_PER_OP];
    invoke_recs_t x;
    x.recs = tflm_interp_tensor(ip, 0);
    x.consts = ip->consts;
    // (Assigned one by one: an initializer's zeroes cost a memset() call.)
    const uintptr_t arena = (uintptr_t)ip->arena->base ^ BASE_FLIP;
    x.bases[TFLM_AT_NONE] = 0;
    x.bases[TFLM_AT_HEAD] = arena;
    x.bases[2] = 0;
    x.bases[TFLM_AT_MODEL] = (uintptr_t)ip->model->fb.buf ^ BASE_FLIP;
    x.bases[TFLM_AT_EXTERNAL] = 0;
    x.bases[TFLM_AT_TAIL] = x.bases[TFLM_AT_KEPT] = x.bases[TFLM_AT_STATE] = arena;
    // The subgraph and node records (the arena's or a prepared model's),
    // and the patch-based stage's extent: subgraph 0's nodes start to split - 1.
    const tflm_subgraph_rec_t *subgraphs = tflm_interp_subgraph(ip, 0);
    const tflm_node_rec_t *nodes = tflm_interp_node(ip, 0);
    const uint32_t start = ip->patch.start, split = TFLM_PATCH ? ip->patch.split : 0u;
    // The operators' view of their node: the fields no node changes set once.
    tflm_eval_t e;
    e.in = ptrs;
    e.ip = ip;
    e.err = &ip->err;
    if (TFLM_INVOKE_FLAT && ip->n_subgraphs == 1 && split == 0) {
        // One subgraph, no stage: its nodes in a loop of their own, without
        // the frames (no kernel can call a subgraph; on the Cortex-M4 the
        // frames cost about 40 cycles a node).
        const uint32_t base = subgraphs->node_base, end = base + subgraphs->n_nodes;
        for (uint32_t node = base; node < end; ++node) {
            if (invoke_interrupted(ip)) {
                return tflm_error(&ip->err, TFLM_ERR_RUNTIME, "invoke interrupted");
            }
            const tflm_node_rec_t *nr = nodes + node;
            invoke_node(ip, &x, nr, ptrs, &e, false);
            const tflm_kernel_t *k = &tflm_kernels[tflm_kernel_slots[nr->kernel]]; // the build's id: never absent
            if (k->eval(&e) != TFLM_OK) {
                return tflm_interp_node_error(ip, node, k->op);
            }
            if (e.stop) {
                return TFLM_OK; // the operators after it keep what they last wrote
            }
            if (e.call != TFLM_EVAL_NO_CALL) {
                tflm_error(&ip->err, TFLM_ERR_RUNTIME, "internal error: call to subgraph %d at depth %u",
                    (int)e.call, 1u);
                return tflm_interp_node_error(ip, node, k->op);
            }
        }
        // (As the frames' loop asks at the return from subgraph 0.)
        return invoke_interrupted(ip) ? tflm_error(&ip->err, TFLM_ERR_RUNTIME, "invoke interrupted") : TFLM_OK;
    }
    uint32_t depth = 1;
    bool resumed = false;
    frames[0].subgraph = 0;
    frames[0].node = 0;
    while (depth > 0) {
        invoke_frame_t *f = &frames[depth - 1];
        const tflm_subgraph_rec_t *s = subgraphs + f->subgraph;
        if (invoke_interrupted(ip)) {
            return tflm_error(&ip->err, TFLM_ERR_RUNTIME, "invoke interrupted");
        }
        if (f->node == s->n_nodes) {
            // Back to the operator that ran this subgraph.
            depth--;
            resumed = true;
            continue;
        }
        uint32_t node = s->node_base + f->node;
        const tflm_node_rec_t *nr = nodes + node;
        const bool stage = node < split && node >= start; // tflm_patch_skips() or tflm_patch_ends()
        if (stage && node + 1 < split) {
            f->node++; // run by the patch-based stage at its last node
            continue;
        }
        invoke_node(ip, &x, nr, ptrs, &e, resumed);
        resumed = false;
        const tflm_kernel_t *k = &tflm_kernels[tflm_kernel_slots[nr->kernel]]; // the build's id: never absent
        tflm_status_t st = stage ? tflm_patch_run(ip, &e) : k->eval(&e);
        if (st != TFLM_OK) {
            return tflm_interp_node_error(ip, node, k->op);
        }
        if (e.stop) {
            return TFLM_OK; // the operators after it keep what they last wrote
        }
        if (e.call == TFLM_EVAL_NO_CALL) {
            f->node++;
            continue;
        }
        // The build checked the calls' targets and depth; a changed kernel
        // state must not take this loop past its frames.
        if (depth == TFLM_MAX_CALL_DEPTH || (uint32_t)e.call >= ip->n_subgraphs) {
            tflm_error(&ip->err, TFLM_ERR_RUNTIME, "internal error: call to subgraph %d at depth %u",
                (int)e.call, (unsigned)depth);
            return tflm_interp_node_error(ip, node, k->op);
        }
        frames[depth].subgraph = (uint16_t)e.call;
        frames[depth].node = 0;
        depth++;
    }
    return TFLM_OK;
}

void *tflm_eval_subgraph_tensor(const tflm_eval_t *e, uint32_t s, uint32_t k, uint32_t *bytes) {
    const tflm_interp_t *ip = e->ip;
    *bytes = 0;
    if (s >= ip->n_subgraphs) {
        return NULL;
    }
    const tflm_subgraph_rec_t *sr = tflm_interp_subgraph(ip, s);
    if (k >= (uint32_t)sr->n_inputs + sr->n_outputs) {
        return NULL;
    }
    uint32_t rec = tflm_interp_io(ip, sr->io)[k];
    if (rec == TFLM_NO_INDEX) {
        return NULL;
    }
    const tflm_tensor_rec_t *r = tflm_interp_tensor(ip, rec);
    *bytes = r->bytes;
    return tflm_interp_tensor_data(ip, r);
}

tflm_status_t tflm_interp_run(tflm_interp_t *ip) {
    if (!ip->ready) {
        return tflm_error(&ip->err, TFLM_ERR_RUNTIME, "interpreter is not allocated");
    }
    if (ip->tensors_only) {
        return tflm_error(&ip->err, TFLM_ERR_RUNTIME, "interpreter was built without kernels (tensors only)");
    }
    tflm_status_t st = run_nodes(ip);
    // Kernel state changed (also when a kernel failed half way).
    tflm_interp_seal_state(ip);
    return st;
}

tflm_status_t tflm_interp_invoke(tflm_interp_t *ip) {
    tflm_status_t st = tflm_interp_verify(ip);
    return st ? st : tflm_interp_run(ip);
}
