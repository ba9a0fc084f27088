// CIRCULAR_BUFFER (custom op of TFLM's strided streaming models): int8
// [1, 1, h, w] in, [1, slots, h, w] out, the output the last `slots` inputs,
// oldest first. The op "runs" every cycles_max invokes: with one output, an
// invoke where it does not ends there, the operators after it left as they
// were (TFLM's kTfLiteAbort; here tflm_eval_t.stop, a successful invoke);
// with a second (bool) output, that output says whether it ran and the
// invoke goes on. TFLM keeps the history in the output tensor itself (its
// bytes before the first `slots` invokes are whatever the arena held); here
// it lives in the kernel's run-time data in the tail (zeros at first), so
// no plan can overwrite it between invokes, and is copied out each invoke.
//
// cycles_max missing or <= 0: TFLM guesses the period from the output shape
// (slots 5, 13 or 25: 1) and from a count of such operators prepared so far
// (the fifth, when [.., 2, 96]: 1), else 2. TFLM counts across every
// interpreter of the process; here the count is of this model's operators
// before this one, in the order TFLM prepares them.
#include "kernels/kernels.h"
#include "kernels/flexbuffer.h"

#if TFLM_KERNEL_CIRCULAR_BUFFER

typedef struct {
    uint32_t bytes;       // slots * depth
    uint32_t depth;       // bytes per slot
    int32_t cycles_max;
    int32_t until_run;    // invokes before it runs again
    uint8_t has_valid;
    uint8_t pad[3];
    int8_t history[];
} circular_buffer_data_t;

static const char CB_NAME[] = "CIRCULAR_BUFFER";

// cycles_max from the options (0 without options, as TFLM reads it).
static tflm_status_t cb_cycles_max(tflm_prepare_t *p, int32_t *cycles) {
    *cycles = 0;
    if (p->op->custom_options.count == 0) {
        return TFLM_OK;
    }
    tflm_flex_map_t opts;
    tflm_status_t st = tflm_flex_map(p, &opts);
    return st ? st : tflm_flex_int(p, &opts, "cycles_max", INT32_MIN, INT32_MAX, cycles);
}

// Output 0's dimensions 1 to 3 of operator `op` (0s where it has fewer).
static void cb_output_dims(tflm_model_t *m, const tflm_subgraph_t *sg, const tflm_model_op_t *op, int32_t dims[3]) {
    tflm_model_tensor_t t;
    dims[0] = dims[1] = dims[2] = 0;
    if (op->outputs.count == 0 || !tflm_model_tensor(m, sg, (uint32_t)tflm_model_index(m, op->outputs, 0), &t)) {
        return;
    }
    for (uint32_t d = 1; d < 4 && d < t.shape.count; ++d) {
        dims[d - 1] = tflm_model_index(m, t.shape, d);
    }
}

// TFLM's guess of the period of a CIRCULAR_BUFFER without cycles_max:
// replays its counter over this model's earlier such operators.
static tflm_status_t cb_guess_cycles(tflm_prepare_t *p, int32_t *cycles) {
    tflm_model_t *m = p->model;
    const tflm_model_op_t *self = p->op;
    uint32_t count = 0;
    tflm_status_t st = TFLM_OK;
    for (uint32_t s = 0; s <= p->subgraph && !st; ++s) {
        tflm_subgraph_t sg;
        if (!tflm_model_subgraph(m, s, &sg)) {
            break;
        }
        uint32_t n = s == p->subgraph ? p->index + 1 : sg.operators.count;
        for (uint32_t i = 0; i < n; ++i) {
            tflm_model_op_t op;
            tflm_fb_vec_t custom = { 0, 0 };
            if (!tflm_model_op(m, &sg, i, &op) || tflm_model_opcode(m, op.opcode_index, &custom) != TFLM_OP_CUSTOM
                || custom.count != sizeof(CB_NAME) - 1 || memcmp(m->fb.buf + custom.pos, CB_NAME, custom.count) != 0) {
                continue;
            }
            int32_t c, dims[3];
            p->op = &op; // its options, read as its own prepare() reads them
            st = cb_cycles_max(p, &c);
            p->op = self;
            if (st) {
                break;
            }
            if (c > 0) {
                continue;
            }
            cb_output_dims(m, &sg, &op, dims);
            ++count;
            bool once = dims[0] == 5 || dims[0] == 13 || dims[0] == 25 || (count == 5 && dims[1] == 2 && dims[2] == 96);
            if (once) {
                count = 0;
            }
            *cycles = once ? 1 : 2;
        }
    }
    return st;
}

tflm_status_t tflm_circular_buffer_prepare(tflm_prepare_t *p) {
    uint32_t n_out = tflm_prep_num_outputs(p);
    tflm_status_t st = tflm_prep_expect_io(p, 1, 1, n_out == 2 ? 2 : 1);
    tflm_tinfo_t in, out, valid;
    int32_t cycles;
    if (st || (st = tflm_prep_input(p, 0, &in)) || (st = tflm_prep_output(p, 0, &out)) || (st = cb_cycles_max(p, &cycles))) {
        return st;
    }
    if (in.index < 0 || in.type != TFLM_INT8 || out.type != TFLM_INT8) {
        return tflm_prep_unsupported_type(p, in.index >= 0 && in.type != TFLM_INT8 ? "input" : "output",
            in.index >= 0 && in.type != TFLM_INT8 ? in.type : out.type);
    }
    if (in.ndims != 4 || out.ndims != 4 || in.dims[0] != out.dims[0] || in.dims[1] != 1 || in.dims[2] != out.dims[2]
        || in.dims[3] != out.dims[3] || out.dims[1] < 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "expects input [b, 1, h, w] and output [b, slots, h, w]");
    }
    if (in.dims[0] != 1) {
        // TFLM shifts the first batch only and leaves the others as they were
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "batch %d (1 only)", (int)in.dims[0]);
    }
    if (n_out == 2) {
        if ((st = tflm_prep_output(p, 1, &valid))) {
            return st;
        }
        if (valid.type != TFLM_BOOL) {
            return tflm_prep_unsupported_type(p, "output valid", valid.type);
        }
        if (valid.elements != 1) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "output valid has %u elements, expected 1", (unsigned)valid.elements);
        }
    }
    if (cycles <= 0 && (st = cb_guess_cycles(p, &cycles))) {
        return st;
    }
    circular_buffer_data_t *d = tflm_prep_alloc_state(p, sizeof(circular_buffer_data_t) + out.elements);
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->bytes = out.elements;
    d->depth = in.elements;
    d->cycles_max = cycles;
    d->until_run = cycles;
    d->has_valid = n_out == 2;
    memset(d->history, 0, out.elements);
    return TFLM_OK;
}

tflm_status_t tflm_circular_buffer_eval(tflm_eval_t *e) {
    circular_buffer_data_t *d = e->data;
    memmove(d->history, d->history + d->depth, d->bytes - d->depth);
    memcpy(d->history + d->bytes - d->depth, e->in[0], d->depth);
    memcpy(e->out[0], d->history, d->bytes);
    bool ran = --d->until_run == 0; // cycles_max >= 1: never below 0
    if (ran) {
        d->until_run = d->cycles_max;
    }
    if (d->has_valid) {
        *(uint8_t *)e->out[1] = ran;
    } else if (!ran) {
        e->stop = true;
    }
    return TFLM_OK;
}

// TFLM's reset restarts the count to the next run; the history stays (in
// TFLM it is the output tensor's bytes, which its reset does not touch).
static void circular_buffer_reset(tflm_eval_t *e) {
    circular_buffer_data_t *d = e->data;
    d->until_run = d->cycles_max;
}

const tflm_kernel_hooks_t tflm_circular_buffer_hooks = { .reset = circular_buffer_reset };

#endif
