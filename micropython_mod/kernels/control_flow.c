// IF and WHILE: operators that run subgraphs, as TFLM's do.
//
// Neither runs a subgraph itself: eval() copies tensors, asks the
// interpreter for a subgraph (tflm_eval_call) and returns; once that
// subgraph has run, the interpreter calls eval() again (e->resumed) to go on.
// A WHILE loop is that exchange again and again, so no iteration takes any
// stack, and between two iterations invoke() is back in its own loop.
//
// Tensors move by copying their bytes, in TFLM's order (so a plan whose
// buffers share bytes gives the same results):
// - IF: the operator's inputs after the condition to the chosen branch's
//   inputs; the branch runs; its outputs to the operator's outputs.
// - WHILE: the inputs to the cond subgraph's inputs and to the operator's
//   outputs; cond runs; while its output 0 is true: the outputs to the body's
//   inputs, the body runs, its outputs to the operator's outputs, those to
//   cond's inputs, cond runs again.
// As in TFLM only byte sizes must agree, not types (the bytes are copied as
// they are). TFLM checks the sizes when it copies, the else branch's only
// when it is taken; prepare() checks every pair, so eval() cannot fail.
#include "kernels/kernels.h"
#include "engine/ops.h"

#if TFLM_KERNEL_IF || TFLM_KERNEL_WHILE

typedef struct {
    int32_t subgraph[2]; // IF: then, else; WHILE: cond, body
    uint8_t n_in;        // the operator's inputs (IF: the condition included)
    uint8_t n_out;
    uint8_t phase;       // the one field eval() changes: which subgraph runs
    uint8_t reserved;
} flow_data_t;

// Checks the subgraph index an option names (the interpreter checks when it
// marks lifetimes that calls form no cycle) and gives its input and output counts.
static tflm_status_t called_subgraph(tflm_prepare_t *p, int32_t sg, const char *what, uint32_t *n_in,
    uint32_t *n_out) {
    if (sg <= 0 || (uint32_t)sg >= p->model->subgraphs.count) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%s subgraph %d out of range", what, (int)sg);
    }
    return tflm_prep_subgraph_counts(p, (uint32_t)sg, n_in, n_out);
}

// The operator's tensor (input or output `k`) and subgraph `sg`'s (input or
// output `i`) between which bytes are copied must have the same size; the one
// written must not be a constant (its bytes are the model's).
static tflm_status_t check_pair(tflm_prepare_t *p, bool op_output, uint32_t k, uint32_t sg, bool sg_output,
    uint32_t i, const char *what) {
    tflm_tinfo_t a, b;
    tflm_status_t st;
    if ((st = op_output ? tflm_prep_output(p, k, &a) : tflm_prep_input(p, k, &a))
        || (st = tflm_prep_subgraph_tensor(p, sg, sg_output, i, &b))) {
        return st;
    }
    if (a.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%s %u missing", op_output ? "output" : "input", (unsigned)k);
    }
    if (a.bytes != b.bytes) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%s %u has %u bytes, %s subgraph %u's %s %u has %u",
            op_output ? "output" : "input", (unsigned)k, (unsigned)a.bytes, what, (unsigned)sg,
            sg_output ? "output" : "input", (unsigned)i, (unsigned)b.bytes);
    }
    if ((op_output && a.is_const) || (!sg_output && b.is_const)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%s subgraph %u: a constant tensor cannot receive a copy", what,
            (unsigned)sg);
    }
    return TFLM_OK;
}

static flow_data_t *alloc_data(tflm_prepare_t *p, int32_t first, int32_t second) {
    flow_data_t *d = tflm_prep_alloc_state(p, sizeof(flow_data_t));
    if (d != NULL) {
        d->subgraph[0] = first;
        d->subgraph[1] = second;
        d->n_in = (uint8_t)tflm_prep_num_inputs(p);
        d->n_out = (uint8_t)tflm_prep_num_outputs(p);
    }
    return d;
}

// Copies n tensors between the operator's (node[0..n-1]) and subgraph sg's
// inputs or outputs from its k-th on (tflm_eval_subgraph_tensor numbering).
static tflm_status_t copy_tensors(tflm_eval_t *e, void *const *node, uint32_t sg, uint32_t k, uint32_t n,
    bool to_subgraph) {
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t bytes;
        void *t = tflm_eval_subgraph_tensor(e, sg, k + i, &bytes);
        if (t == NULL || node[i] == NULL) {
            return tflm_error(e->err, TFLM_ERR_RUNTIME, "internal error: subgraph %u tensor %u",
                (unsigned)sg, (unsigned)(k + i));
        }
        // memmove: a pass-through subgraph's output is its input.
        if (to_subgraph) {
            memmove(t, node[i], bytes);
        } else {
            memmove(node[i], t, bytes);
        }
    }
    return TFLM_OK;
}

#if TFLM_KERNEL_WHILE
// Byte-for-byte copies of the operator's inputs to its outputs.
static void copy_inputs_to_outputs(tflm_eval_t *e, const flow_data_t *d) {
    for (uint32_t i = 0; i < d->n_out; ++i) {
        uint32_t bytes;
        // The body's input i has the size prepare() checked for both.
        if (tflm_eval_subgraph_tensor(e, (uint32_t)d->subgraph[1], i, &bytes) != NULL) {
            memmove(e->out[i], e->in[i], bytes);
        }
    }
}
#endif

#endif

#if TFLM_KERNEL_IF

tflm_status_t tflm_if_prepare(tflm_prepare_t *p) {
    uint32_t n_in = tflm_prep_num_inputs(p), n_out = tflm_prep_num_outputs(p);
    if (n_in == 0 || n_in > UINT8_MAX || n_out > UINT8_MAX) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "has %u inputs and %u outputs: needs a condition",
            (unsigned)n_in, (unsigned)n_out);
    }
    tflm_tinfo_t cond;
    tflm_status_t st = tflm_prep_input(p, 0, &cond);
    if (st) {
        return st;
    }
    if (cond.index < 0 || cond.type != TFLM_BOOL || cond.elements != 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the condition (input 0) must be one bool");
    }
    int32_t branch[2] = {
        tflm_prep_opt_i32(p, TFLM_OPT_IF_THEN_SUBGRAPH_INDEX, -1),
        tflm_prep_opt_i32(p, TFLM_OPT_IF_ELSE_SUBGRAPH_INDEX, -1),
    };
    static const char *const names[2] = { "then", "else" };
    for (int b = 0; b < 2; ++b) {
        uint32_t s_in, s_out;
        if ((st = called_subgraph(p, branch[b], names[b], &s_in, &s_out))) {
            return st;
        }
        if (s_in != n_in - 1 || s_out != n_out) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "%u inputs after the condition and %u outputs, "
                "the %s subgraph has %u and %u", (unsigned)(n_in - 1), (unsigned)n_out, names[b],
                (unsigned)s_in, (unsigned)s_out);
        }
        for (uint32_t i = 0; i < s_in; ++i) {
            if ((st = check_pair(p, false, i + 1, (uint32_t)branch[b], false, i, names[b]))) {
                return st;
            }
        }
        for (uint32_t i = 0; i < s_out; ++i) {
            if ((st = check_pair(p, true, i, (uint32_t)branch[b], true, i, names[b]))) {
                return st;
            }
        }
    }
    return alloc_data(p, branch[0], branch[1]) ? TFLM_OK : tflm_prep_status(p);
}

tflm_status_t tflm_if_eval(tflm_eval_t *e) {
    flow_data_t *d = e->data;
    uint32_t n_args = (uint32_t)d->n_in - 1;
    if (!e->resumed) {
        const uint8_t *cond = e->in[0];
        d->phase = cond[0] ? 0 : 1;
        uint32_t sg = (uint32_t)d->subgraph[d->phase];
        tflm_status_t st = copy_tensors(e, e->in + 1, sg, 0, n_args, true);
        return st ? st : tflm_eval_call(e, sg);
    }
    return copy_tensors(e, e->out, (uint32_t)d->subgraph[d->phase & 1], n_args, d->n_out, false);
}

static void if_calls(tflm_prepare_t *p, int32_t called[2]) {
    called[0] = tflm_prep_opt_i32(p, TFLM_OPT_IF_THEN_SUBGRAPH_INDEX, -1);
    called[1] = tflm_prep_opt_i32(p, TFLM_OPT_IF_ELSE_SUBGRAPH_INDEX, -1);
}

const tflm_kernel_hooks_t tflm_if_hooks = { .calls = if_calls };

#endif

#if TFLM_KERNEL_WHILE

enum { WHILE_COND = 0, WHILE_BODY = 1 };

tflm_status_t tflm_while_prepare(tflm_prepare_t *p) {
    uint32_t n = tflm_prep_num_inputs(p);
    if (n != tflm_prep_num_outputs(p) || n > UINT8_MAX) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "has %u inputs and %u outputs: needs as many of each",
            (unsigned)n, (unsigned)tflm_prep_num_outputs(p));
    }
    int32_t cond = tflm_prep_opt_i32(p, TFLM_OPT_WHILE_COND_SUBGRAPH_INDEX, -1);
    int32_t body = tflm_prep_opt_i32(p, TFLM_OPT_WHILE_BODY_SUBGRAPH_INDEX, -1);
    uint32_t c_in, c_out, b_in, b_out;
    tflm_status_t st;
    if ((st = called_subgraph(p, cond, "cond", &c_in, &c_out)) || (st = called_subgraph(p, body, "body", &b_in, &b_out))) {
        return st;
    }
    if (c_in != n || b_in != n || b_out != n || c_out == 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "%u inputs and outputs, the cond subgraph has %u inputs and %u "
            "outputs, the body %u and %u", (unsigned)n, (unsigned)c_in, (unsigned)c_out, (unsigned)b_in,
            (unsigned)b_out);
    }
    // The condition: cond's output 0, a bool, of which TFLM reads the first.
    tflm_tinfo_t flag;
    if ((st = tflm_prep_subgraph_tensor(p, (uint32_t)cond, true, 0, &flag))) {
        return st;
    }
    if (flag.type != TFLM_BOOL || flag.elements == 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the cond subgraph's output 0 must be a bool");
    }
    for (uint32_t i = 0; i < n; ++i) {
        if ((st = check_pair(p, false, i, (uint32_t)cond, false, i, "cond"))
            || (st = check_pair(p, false, i, (uint32_t)body, false, i, "body"))
            || (st = check_pair(p, true, i, (uint32_t)cond, false, i, "cond"))
            || (st = check_pair(p, true, i, (uint32_t)body, true, i, "body"))) {
            return st;
        }
    }
    return alloc_data(p, cond, body) ? TFLM_OK : tflm_prep_status(p);
}

tflm_status_t tflm_while_eval(tflm_eval_t *e) {
    flow_data_t *d = e->data;
    uint32_t cond = (uint32_t)d->subgraph[0], body = (uint32_t)d->subgraph[1], n = d->n_out;
    tflm_status_t st;
    if (!e->resumed) {
        // A fresh start, also after an invoke() that stopped inside the loop.
        if ((st = copy_tensors(e, e->in, cond, 0, n, true))) {
            return st;
        }
        copy_inputs_to_outputs(e, d);
        d->phase = WHILE_COND;
        return tflm_eval_call(e, cond);
    }
    if (d->phase == WHILE_COND) {
        uint32_t bytes;
        const uint8_t *flag = tflm_eval_subgraph_tensor(e, cond, n, &bytes);
        if (flag == NULL || bytes == 0) {
            return tflm_error(e->err, TFLM_ERR_RUNTIME, "internal error: no condition");
        }
        if (!flag[0]) {
            return TFLM_OK; // the loop is done: the outputs hold the last values
        }
        if ((st = copy_tensors(e, e->out, body, 0, n, true))) {
            return st;
        }
        d->phase = WHILE_BODY;
        return tflm_eval_call(e, body);
    }
    if ((st = copy_tensors(e, e->out, body, n, n, false)) || (st = copy_tensors(e, e->out, cond, 0, n, true))) {
        return st;
    }
    d->phase = WHILE_COND;
    return tflm_eval_call(e, cond);
}

static void while_calls(tflm_prepare_t *p, int32_t called[2]) {
    called[0] = tflm_prep_opt_i32(p, TFLM_OPT_WHILE_COND_SUBGRAPH_INDEX, -1);
    called[1] = tflm_prep_opt_i32(p, TFLM_OPT_WHILE_BODY_SUBGRAPH_INDEX, -1);
}

const tflm_kernel_hooks_t tflm_while_hooks = { .calls = while_calls };

#endif
