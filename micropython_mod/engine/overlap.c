// Overlapped in-place placement (see overlap.h): which op writes a record,
// whether the pair is one the kernels allow, and the op's row geometry as
// its kernel gives it (tflm_kernel_hooks_t.overlap, from the node's data
// and its operator), so the same distance comes out in a real allocation,
// in the plan validator and on the host.
#include "overlap.h"
#include "kernel.h"
#include "patch.h"
#include "planner.h"

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

bool tflm_plan_is_output(const tflm_plan_view_t *v, uint32_t x) {
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

// The model's operator behind node n, read as prepare() reads it (`p`,
// with `op` and `err` to hold what it points at).
static bool model_op(const tflm_plan_view_t *v, uint32_t n, tflm_prepare_t *p, tflm_model_op_t *op,
    tflm_error_t *err) {
    for (uint32_t s = 0; s < v->n_subgraphs; ++s) {
        const tflm_subgraph_rec_t *sr = &v->subgraphs[s];
        tflm_subgraph_t sg;
        if (n >= sr->node_base && n < (uint32_t)sr->node_base + sr->n_nodes) {
            memset(p, 0, sizeof(*p));
            memset(err, 0, sizeof(*err));
            p->model = v->model;
            p->op = op;
            p->subgraph = s;
            p->index = n - sr->node_base;
            p->node = n;
            p->dry = true;
            p->err = err;
            return v->model && tflm_model_subgraph(v->model, s, &sg) && tflm_model_op(v->model, &sg, p->index, op);
        }
    }
    return false;
}

uint64_t tflm_overlap_rows_forward(const tflm_overlap_rows_t *g) {
    return tflm_overlap_rows_distance(g);
}

// The pixel rule's distance (overlap.h) for geometry r, px bytes a pixel of
// input and output alike. first(p) is taken at the window's first tap
// clamped to the map (never after the first it reads: the rule only grows).
// Along a row p - first(p) = ox - max(0, ox * stride_w - pad_w) + a term of
// the row, which grows while ox * stride_w <= pad_w and never after: each
// row's largest is at that column.
static uint64_t pixels_distance(const tflm_rows_t *r, uint32_t px) {
    // (Records hold at most 24 bits of bytes: the products of pixel counts
    // below fit 32 bits.)
    const int32_t ox = TFLM_MIN(r->out_w - 1, r->pad_w / r->stride_w);
    const int32_t ix = TFLM_MAX(0, ox * r->stride_w - r->pad_w);
    int32_t most = 0;
    for (int32_t oy = 0; oy < r->out_h; ++oy) {
        const int64_t iy = TFLM_MAX(0, (int64_t)oy * r->stride_h - r->pad_h);
        if (iy >= r->in_h) {
            break;  // this row and the later ones read nothing
        }
        most = TFLM_MAX(most, oy * r->out_w + ox - ((int32_t)iy * r->in_w + ix));
    }
    // A multiple of px and of 16: px times 16 over their greatest common
    // divisor (px's lowest set bit, 16 at most).
    const uint32_t unit = px / TFLM_MIN(px & (0u - px), (uint32_t)TFLM_ALIGN) * TFLM_ALIGN;
    return ((uint32_t)most * px + unit - 1) / unit * unit;
}

// The row geometry of node n (output 0: record y, input 0: record x), as its
// kernel answers; false when it has none, or the tensors' sizes are not
// whole rows. *pixels: the pixel rule's distance when the kernel keeps it,
// else UINT64_MAX.
static bool row_geometry(const tflm_plan_view_t *v, uint32_t n, const tflm_kernel_hooks_t *hooks,
    const tflm_plan_rec_t *ry, const tflm_plan_rec_t *rx, tflm_overlap_rows_t *g, uint64_t *pixels) {
    const tflm_node_rec_t *nr = &v->nodes[n];
    const void *data = (nr->flags & TFLM_NODE_DATA_IN_MODEL) ? (const void *)(v->base + nr->data)
        : v->arena ? (const void *)(v->arena + nr->data) : NULL;
    tflm_prepare_t p;
    tflm_model_op_t op;
    tflm_error_t err;
    tflm_rows_t r;
    memset(&r, 0, sizeof(r));
    if (data == NULL || !model_op(v, n, &p, &op, &err) || !hooks->overlap(&p, data, &r) || v->model->fb.bad
        || r.batches <= 0 || r.in_h <= 0 || r.out_h <= 0 || r.stride_h <= 0) {
        return false;
    }
    uint64_t x_rows = (uint64_t)r.batches * (uint64_t)r.in_h, y_rows = (uint64_t)r.batches * (uint64_t)r.out_h;
    if (rx->bytes % x_rows != 0 || ry->bytes % y_rows != 0) {
        return false;
    }
    g->batches = (uint32_t)r.batches;
    g->in_h = (uint32_t)r.in_h;
    g->out_h = (uint32_t)r.out_h;
    g->row_x = (uint32_t)(rx->bytes / x_rows);
    g->row_y = (uint32_t)(ry->bytes / y_rows);
    g->stride = (uint32_t)r.stride_h;
    g->pad_top = r.pad_h;
    g->band = 1;
    g->reach = r.backward && r.f_h > 0 && r.dil_h > 0 ? (uint32_t)((r.f_h - 1) * r.dil_h + 1) : 0;
    // The pixel rule: one batch, whole pixels of the same bytes on both sides.
    *pixels = UINT64_MAX;
    if (r.pixels && r.batches == 1 && r.in_w > 0 && r.out_w > 0 && r.stride_w > 0 && r.pad_w >= 0
        && g->row_x % (uint32_t)r.in_w == 0 && g->row_y % (uint32_t)r.out_w == 0
        && g->row_x / (uint32_t)r.in_w == g->row_y / (uint32_t)r.out_w && g->row_x / (uint32_t)r.in_w > 0) {
        *pixels = pixels_distance(&r, g->row_x / (uint32_t)r.in_w);
    }
    return true;
}

bool tflm_overlap_distance(const tflm_plan_view_t *v, uint32_t y, uint32_t x, tflm_overlap_t *o) {
    if (y >= v->n_model_tensors || x >= v->n_model_tensors || x == y) {
        return false;
    }
    const tflm_plan_rec_t *ry = &v->recs[y], *rx = &v->recs[x];
    // x must die at the op that writes y: its last scope is y's first.
    if (ry->where != TFLM_AT_HEAD || rx->where != TFLM_AT_HEAD || rx->last != ry->first
        || ry->first == TFLM_LIFETIME_UNSET) {
        return false;
    }
    uint32_t n = producer(v, y);
    if (n == v->n_nodes || tflm_plan_is_output(v, x)) {
        return false;
    }
    const tflm_node_rec_t *nr = &v->nodes[n];
    const uint16_t *io = (const uint16_t *)(v->base + nr->io);
    o->up = TFLM_OVERLAP_NO_UP;
    const tflm_kernel_t *k = tflm_kernel_of_id(nr->kernel);
    if (k == NULL || nr->n_outputs != 1 || (v->patch != NULL && tflm_patch_skips(v->patch, n))) {
        return false;
    }
    if (v->patch != NULL && tflm_patch_ends(v->patch, n)) {
        // A patch-based stage writes its output patch by patch, not in rows,
        // and reads the stage's input only: its own distance (patch.c).
        const tflm_patch_t *pt = v->patch;
        if (pt == NULL || !pt->overlaps || x != pt->input) {
            return false;
        }
        o->below = pt->overlap;
        return true;
    }
    if (k->alias == TFLM_ALIAS_IN_PLACE) {
        // Element-wise: any input of the output's size and element size.
        bool input = false;
        for (uint32_t i = 0; i < nr->n_inputs; ++i) {
            input = input || io[i] == x;
        }
        if (!input || rx->bytes != ry->bytes || tflm_type_size(v->tensors[x].type) != tflm_type_size(v->tensors[y].type)) {
            return false;
        }
        o->below = 0;
        return true;
    }
    if (k->alias == TFLM_ALIAS_VIEW) {
        // RESHAPE-like: a memmove of input 0 when the buffers differ, safe
        // however they overlap.
        if (nr->n_inputs == 0 || io[0] != x || rx->bytes != ry->bytes) {
            return false;
        }
        o->below = 0;
        return true;
    }
    // Row ops: the data input only (not also a filter or a weight, which
    // the rows written over it would change), of the output's element size.
    tflm_overlap_rows_t g;
    if (k->hooks == NULL || k->hooks->overlap == NULL || nr->n_inputs == 0 || io[0] != x
        || tflm_type_size(v->tensors[x].type) != tflm_type_size(v->tensors[y].type)) {
        return false;
    }
    for (uint32_t i = 1; i < nr->n_inputs; ++i) {
        if (io[i] == x) {
            return false;
        }
    }
    uint64_t pixels;
    if (!row_geometry(v, n, k->hooks, ry, rx, &g, &pixels)) {
        return false;
    }
    uint64_t dist = TFLM_MIN(tflm_overlap_rows_distance(&g), pixels);
    if (dist > UINT32_MAX / 2) {
        return false;
    }
    o->below = (uint32_t)dist;
    if (g.reach > 0 && !v->forward_only) {
        uint64_t up = tflm_overlap_rows_distance_up(&g);
        o->up = up > UINT32_MAX / 2 ? TFLM_OVERLAP_NO_UP : (uint32_t)up;
    }
    return true;
}
