// Overlapped in-place placement (see overlap.h): which op writes a record,
// whether the pair is one the kernels allow, and the op's row geometry read
// from the model (shapes and options), so the same distance comes out in a
// dry run, in a real allocation and in the plan validator.
#include "overlap.h"
#include "kernel.h"
#include "ops.h"
#include "planner.h"

// Builtin option fields (schema.fbs): Conv2DOptions, DepthwiseConv2DOptions, Pool2DOptions.

// The node that writes record y as its output 0, or n_nodes.
static uint32_t producer(const tflm_plan_view_t *v, uint32_t y) {
    for (uint32_t n = 0; n < v->n_nodes; ++n) {
        const tflm_node_rec_t *nr = &v->nodes[n];
        const uint16_t *io = (const uint16_t *)(v->base + nr->io);
        if (nr->n_outputs > 0 && io[nr->n_inputs] == y) {
            return n;
        }
    }
    return v->n_nodes;
}

// Record x is an output of some subgraph: it lives on after its last reader.
static bool is_subgraph_output(const tflm_plan_view_t *v, uint32_t x) {
    for (uint32_t s = 0; s < v->n_subgraphs; ++s) {
        const tflm_subgraph_rec_t *sr = &v->subgraphs[s];
        const uint16_t *sio = (const uint16_t *)(v->base + sr->io);
        for (uint32_t k = 0; k < sr->n_outputs; ++k) {
            if (sio[sr->n_inputs + k] == x) {
                return true;
            }
        }
    }
    return false;
}

typedef struct {
    tflm_model_t *m;
    tflm_subgraph_t sg;
    tflm_model_op_t op;
    uint32_t tensor_base;
} ov_op_t;

// The model's operator behind node n.
static bool model_op(const tflm_plan_view_t *v, uint32_t n, ov_op_t *o) {
    for (uint32_t s = 0; s < v->n_subgraphs; ++s) {
        const tflm_subgraph_rec_t *sr = &v->subgraphs[s];
        if (n >= sr->node_base && n < (uint32_t)sr->node_base + sr->n_nodes) {
            o->m = v->model;
            o->tensor_base = sr->tensor_base;
            return v->model && tflm_model_subgraph(v->model, s, &o->sg)
                && tflm_model_op(v->model, &o->sg, n - sr->node_base, &o->op);
        }
    }
    return false;
}

// Dimension i of a tensor of `rank` dimensions (the op's input k or output
// 0), 0 otherwise.
static int32_t dim_of(ov_op_t *o, bool output, uint32_t k, uint32_t i, uint32_t rank) {
    tflm_fb_vec_t list = output ? o->op.outputs : o->op.inputs;
    tflm_model_tensor_t t;
    if (k >= list.count) {
        return 0;
    }
    int32_t index = tflm_model_index(o->m, list, k);
    if (index < 0 || (uint32_t)index >= o->sg.tensors.count || !tflm_model_tensor(o->m, &o->sg, (uint32_t)index, &t)
        || t.shape.count != rank) {
        return 0;
    }
    int32_t dim = tflm_fb_vec_i32(&o->m->fb, t.shape, i);
    return dim > 0 ? dim : 0;
}

static int32_t dim4(ov_op_t *o, bool output, uint32_t k, uint32_t i) {
    return dim_of(o, output, k, i, 4);
}

// PAD's leading padding along dimension 1 when only rows, columns and
// channels are padded (int32 paddings, none negative); -1 otherwise.
static int32_t pad_top(ov_op_t *o) {
    tflm_model_tensor_t t;
    int32_t index = o->op.inputs.count >= 2 ? tflm_model_index(o->m, o->op.inputs, 1) : -1;
    uint32_t pos, len;
    if (index < 0 || (uint32_t)index >= o->sg.tensors.count || !tflm_model_tensor(o->m, &o->sg, (uint32_t)index, &t)
        || t.type != TFLM_INT32 || !tflm_model_buffer(o->m, t.buffer, &pos, &len) || len != 32) {
        return -1;
    }
    const uint8_t *p = o->m->fb.buf + pos;
    for (uint32_t i = 0; i < 8; ++i) {
        if (tflm_rd_i32(p + 4 * i) < 0 || (i < 2 && tflm_rd_i32(p + 4 * i) != 0)) {
            return -1;
        }
    }
    return tflm_rd_i32(p + 8);
}

// UNIDIRECTIONAL_SEQUENCE_LSTM as rows: its kernel goes through units of
// the input in memory order (batch major: each batch's steps, one row each;
// time major: each step, all batches at once) and copies a unit's output
// only after its last read of that unit's input, so output unit u may cover
// input units up to u: first input row lo(u) = u + 1 (stride 1, pad_top -1).
static bool sequence_geometry(ov_op_t *o, const tflm_tensor_rec_t *ry, const tflm_tensor_rec_t *rx,
    tflm_overlap_rows_t *g) {
    int32_t d0 = dim_of(o, false, 0, 0, 3), d1 = dim_of(o, false, 0, 1, 3);
    bool time_major = tflm_model_opt_u8(o->m, &o->op, TFLM_OPT_UNIDIRECTIONAL_SEQUENCE_LSTM_TIME_MAJOR, 0) != 0;
    if (d0 <= 0 || d1 <= 0 || dim_of(o, true, 0, 0, 3) != d0 || dim_of(o, true, 0, 1, 3) != d1 || o->m->fb.bad) {
        return false;
    }
    uint32_t units = time_major ? (uint32_t)d0 : (uint32_t)d0 * (uint32_t)d1;
    if (rx->bytes % units != 0 || ry->bytes % units != 0) {
        return false;
    }
    g->batches = 1;
    g->in_h = g->out_h = units;
    g->row_x = rx->bytes / units;
    g->row_y = ry->bytes / units;
    g->stride = 1;
    g->pad_top = -1;
    g->band = 1;
    return true;
}

// The row geometry of node n (output 0: record y, input 0: record x); false
// when its op has no row rule or its tensors are not the plain NHWC case.
static bool row_geometry(const tflm_plan_view_t *v, uint32_t n, const tflm_tensor_rec_t *ry,
    const tflm_tensor_rec_t *rx, tflm_overlap_rows_t *g) {
    ov_op_t o;
    if (!model_op(v, n, &o)) {
        return false;
    }
    int32_t op = o.op.builtin;
    if (op == TFLM_OP_UNIDIRECTIONAL_SEQUENCE_LSTM) {
        return sequence_geometry(&o, ry, rx, g);
    }
    int32_t in_h = dim4(&o, false, 0, 1), out_h = dim4(&o, true, 0, 1);
    int32_t batches = dim4(&o, false, 0, 0);
    int32_t filter_h = 1, stride = 1, dilation = 1, top;
    if (op == TFLM_OP_CONV_2D || op == TFLM_OP_DEPTHWISE_CONV_2D) {
        filter_h = dim4(&o, false, 1, 1);
        bool conv = op == TFLM_OP_CONV_2D;
        stride = tflm_model_opt_i32(o.m, &o.op, conv ? TFLM_OPT_CONV2D_STRIDE_H : TFLM_OPT_DEPTHWISE_CONV2D_STRIDE_H, 0);
        dilation = tflm_model_opt_i32(o.m, &o.op,
            conv ? TFLM_OPT_CONV2D_DILATION_H_FACTOR : TFLM_OPT_DEPTHWISE_CONV2D_DILATION_H_FACTOR, 1);
    } else if (op == TFLM_OP_AVERAGE_POOL_2D || op == TFLM_OP_MAX_POOL_2D) {
        stride = tflm_model_opt_i32(o.m, &o.op, TFLM_OPT_POOL2D_STRIDE_H, 0);
        filter_h = tflm_model_opt_i32(o.m, &o.op, TFLM_OPT_POOL2D_FILTER_HEIGHT, 0);
    } else if (op != TFLM_OP_PAD && op != TFLM_OP_PADV2) {
        return false;
    }
    if (in_h <= 0 || out_h <= 0 || batches <= 0 || batches != dim4(&o, true, 0, 0) || filter_h <= 0 || stride <= 0
        || dilation <= 0 || o.m->fb.bad) {
        return false;
    }
    if (op == TFLM_OP_PAD || op == TFLM_OP_PADV2) {
        top = pad_top(&o);
        if (top < 0) {
            return false;
        }
    } else {
        int32_t odd;
        top = tflm_window_padding(in_h, filter_h, stride, dilation, out_h, &odd);
    }
    uint32_t x_rows = (uint32_t)batches * (uint32_t)in_h, y_rows = (uint32_t)batches * (uint32_t)out_h;
    if (rx->bytes % x_rows != 0 || ry->bytes % y_rows != 0) {
        return false;
    }
    g->batches = (uint32_t)batches;
    g->in_h = (uint32_t)in_h;
    g->out_h = (uint32_t)out_h;
    g->row_x = rx->bytes / x_rows;
    g->row_y = ry->bytes / y_rows;
    g->stride = (uint32_t)stride;
    g->pad_top = top;
    g->band = 1;
    return true;
}

bool tflm_overlap_distance(const tflm_plan_view_t *v, uint32_t y, uint32_t x, uint32_t *d) {
    if (y >= v->n_model_tensors || x >= v->n_model_tensors || x == y) {
        return false;
    }
    const tflm_tensor_rec_t *ry = &v->recs[y], *rx = &v->recs[x];
    // x must die at the op that writes y: its last scope is y's first.
    if (ry->where != TFLM_AT_HEAD || rx->where != TFLM_AT_HEAD || rx->last != ry->first
        || ry->first == TFLM_LIFETIME_UNSET || (rx->flags & TFLM_TENSOR_VARIABLE)) {
        return false;
    }
    uint32_t n = producer(v, y);
    if (n == v->n_nodes || is_subgraph_output(v, x)) {
        return false;
    }
    const tflm_node_rec_t *nr = &v->nodes[n];
    const uint16_t *io = (const uint16_t *)(v->base + nr->io);
    // A patch-based stage writes its output patch by patch, not in rows.
    if (nr->kernel == TFLM_NO_KERNEL || nr->n_outputs != 1
        || (nr->flags & (TFLM_NODE_PATCH_SKIP | TFLM_NODE_PATCH_END))) {
        return false;
    }
    const tflm_kernel_t *k = &tflm_kernels[nr->kernel];
    if (k->alias == TFLM_ALIAS_IN_PLACE) {
        // Element-wise: any input of the output's size and element size.
        bool input = false;
        for (uint32_t i = 0; i < nr->n_inputs; ++i) {
            input = input || io[i] == x;
        }
        if (!input || rx->bytes != ry->bytes || tflm_type_size(rx->type) != tflm_type_size(ry->type)) {
            return false;
        }
        *d = 0;
        return true;
    }
    if (k->alias == TFLM_ALIAS_VIEW) {
        // RESHAPE-like: a memmove of input 0 when the buffers differ, safe
        // however they overlap.
        if (nr->n_inputs == 0 || io[0] != x || rx->bytes != ry->bytes) {
            return false;
        }
        *d = 0;
        return true;
    }
    // Row ops: the data input only (not also a filter or a weight, which
    // the rows written over it would change), of the output's element size.
    tflm_overlap_rows_t g;
    if (k->custom != NULL || nr->n_inputs == 0 || io[0] != x || tflm_type_size(rx->type) != tflm_type_size(ry->type)) {
        return false;
    }
    for (uint32_t i = 1; i < nr->n_inputs; ++i) {
        if (io[i] == x) {
            return false;
        }
    }
    if (!row_geometry(v, n, ry, rx, &g)) {
        return false;
    }
    uint64_t dist = tflm_overlap_rows_distance(&g);
    if (dist > UINT32_MAX / 2) {
        return false;
    }
    *d = (uint32_t)dist;
    return true;
}
