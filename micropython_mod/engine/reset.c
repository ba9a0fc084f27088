// The interpreter's reset (see interpreter.h): the state a model carries
// between invokes back to where TFLM's MicroInterpreter::Reset() puts it,
// in place.
//
// Contract: nothing is allocated or moved; the records are followed only
// after the seal says they are the build's, and every size written comes
// from them (the model, which may have changed, gives fill bytes only).
// What is state and how it restarts is the build's and the kernels' own
// knowledge: variable tensors (build.c), variables a kernel keeps and its
// run-time data (each kernel's `reset` hook), state shared by an op's
// operators (`reset_state` hooks: VAR_HANDLE's resource variables). The
// engine names no op.
#include <string.h>

#include "build.h"

// Variable tensors as build_variables() left them, and the variables kept
// by their kernel zeroed, as tflm_prep_keep_variable() gave them.
static tflm_status_t reset_variables(tflm_interp_t *ip) {
    tflm_model_t *m = ip->model;
    uint32_t g = 0;
    for (uint32_t s = 0; s < ip->n_subgraphs; ++s) {
        tflm_subgraph_t sg;
        if (!tflm_model_subgraph(m, s, &sg)) {
            return tflm_model_check(m, &ip->err);
        }
        for (uint32_t i = 0; i < sg.tensors.count && g < ip->n_model_tensors; ++i, ++g) {
            tflm_tensor_rec_t *r = tflm_interp_tensor_mut(ip, tflm_interp_rec_of(ip, g));
            if (r == NULL || !tflm_at_variable(r->where) || r->bytes == 0) {
                continue;
            }
            uint8_t fill = 0;
            tflm_model_tensor_t t;
            if (r->where != TFLM_AT_KEPT && tflm_model_tensor(m, &sg, i, &t)) {
                fill = tflm_variable_fill(m, &t);
            }
            memset(tflm_arena_ptr(ip->arena, r->data), fill, r->bytes);
        }
    }
    return tflm_model_check(m, &ip->err);
}

// Each node's run-time state, by its kernel's hook, which sees the node as
// eval() does.
static void reset_nodes(tflm_interp_t *ip) {
    void *ptrs[TFLM_MAX_NODE_IO];
    for (uint32_t n = 0; n < ip->n_nodes; ++n) {
        const tflm_node_rec_t *nr = tflm_interp_node(ip, n);
        const tflm_kernel_t *kernel = tflm_kernel_of_id(nr->kernel);
        const tflm_kernel_hooks_t *h = kernel != NULL ? kernel->hooks : NULL;
        if (h == NULL || h->reset == NULL) {
            continue;
        }
        const uint16_t *io = tflm_interp_io(ip, nr->io);
        uint32_t n_io = (uint32_t)nr->n_inputs + nr->n_outputs;
        for (uint32_t k = 0; k < n_io && k < TFLM_MAX_NODE_IO; ++k) {
            ptrs[k] = io[k] == TFLM_NO_INDEX ? NULL : tflm_interp_tensor_data(ip, tflm_interp_tensor(ip, io[k]));
        }
        tflm_eval_t e = {
            .data = tflm_interp_node_data(ip, nr),
            .in = ptrs,
            .out = ptrs + nr->n_inputs,
            .n_in = nr->n_inputs,
            .n_out = nr->n_outputs,
            .ip = ip,
            .err = &ip->err,
            .call = TFLM_EVAL_NO_CALL,
        };
        h->reset(&e);
    }
}

tflm_status_t tflm_interp_reset(tflm_interp_t *ip) {
    tflm_status_t st = tflm_interp_verify(ip);
    if (st) {
        return st;
    }
    if (ip->tensors_only) {
        return tflm_error(&ip->err, TFLM_ERR_RUNTIME, "interpreter was built without kernels (tensors only)");
    }
    st = reset_variables(ip);
    reset_nodes(ip);
    for (uint32_t k = 0; k < tflm_kernel_count && st == TFLM_OK; ++k) {
        const tflm_kernel_hooks_t *h = tflm_kernels[k].hooks;
        st = h && h->reset_state ? h->reset_state(ip) : TFLM_OK;
    }
    // Kernel state changed (also when a fill could not be read).
    tflm_interp_seal_state(ip);
    return st;
}
