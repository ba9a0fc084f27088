// Patch-based execution of the first stage (see patch.h).
#include "patch.h"
#include "build.h"
#include "ops.h"
#include "kernels/conv_common.h"

tflm_status_t tflm_patch_find(tflm_model_t *m, uint32_t n_nodes, tflm_patch_t *patch, tflm_error_t *err) {
    memset(patch, 0, sizeof(*patch));
    uint32_t buffer = tflm_model_metadata(m, TFLM_PATCH_METADATA);
    if (buffer == UINT32_MAX) {
        return tflm_model_check(m, err);
    }
    uint32_t pos = 0, len = 0;
    if (!tflm_model_buffer(m, buffer, &pos, &len)) {
        return tflm_model_check(m, err);
    }
    const uint8_t *p = m->fb.buf + pos;
    if (len < 4 * TFLM_PATCH_WORDS || tflm_rd_u32(p) != TFLM_PATCH_MAGIC) {
        return tflm_error(err, TFLM_ERR_VALUE, TFLM_PATCH_METADATA " metadata: no header");
    }
    int32_t version = tflm_rd_i32(p + 4);
    if (version != TFLM_PATCH_VERSION) {
        return tflm_error(err, TFLM_ERR_VALUE, TFLM_PATCH_METADATA " metadata has version %d; this runtime reads %d",
            (int)version, TFLM_PATCH_VERSION);
    }
    uint32_t split = tflm_rd_u32(p + 8), gh = tflm_rd_u32(p + 12), gw = tflm_rd_u32(p + 16);
    if (split < 1 || split > TFLM_PATCH_MAX_OPS || split > n_nodes || gh < 1 || gh > TFLM_PATCH_MAX_GRID || gw < 1
        || gw > TFLM_PATCH_MAX_GRID) {
        return tflm_error(err, TFLM_ERR_VALUE,
            TFLM_PATCH_METADATA " metadata: a stage of %u operators (of %u) in %ux%u patches is out of range",
            (unsigned)split, (unsigned)n_nodes, (unsigned)gh, (unsigned)gw);
    }
    patch->split = (uint16_t)split;
    patch->grid_h = (uint16_t)gh;
    patch->grid_w = (uint16_t)gw;
    return TFLM_OK;
}

tflm_status_t tflm_patch_request(tflm_prepare_t *p) {
    for (uint32_t k = 0; k < TFLM_PATCH_SCRATCH; ++k) {
        uint32_t index;
        tflm_status_t st = tflm_prep_scratch(p, 0, &index);
        if (st) {
            return st;
        }
    }
    return TFLM_OK;
}

// Rows [r0, r1) and columns [c0, c1) of a feature map (may reach outside it).
typedef struct {
    int32_t r0, r1, c0, c1;
} patch_rect_t;

static inline int32_t rect_h(const patch_rect_t *r) {
    return r->r1 - r->r0;
}
static inline int32_t rect_w(const patch_rect_t *r) {
    return r->c1 - r->c0;
}

// The part of `r` inside a map of h x w.
static inline patch_rect_t rect_clip(const patch_rect_t *r, int32_t h, int32_t w) {
    patch_rect_t c = { TFLM_MAX(r->r0, 0), TFLM_MIN(r->r1, h), TFLM_MAX(r->c0, 0), TFLM_MIN(r->c1, w) };
    return c;
}

// One stage operator as the stage sees it.
typedef struct {
    const conv_data_t *d;
    bool depthwise;
    const int8_t *filter;
    const int32_t *bias;
} patch_op_t;

static inline uint32_t conv_data_bytes(const conv_data_t *d) {
    return (uint32_t)sizeof(conv_data_t) + 5u * (d->per_channel ? d->out_d : 1u);
}

// Patch (py, px)'s regions: out[j] the part of op j's output it computes,
// win[j] the window of op j's input that needs (reaching outside the map
// where the op pads). The part of win[j] inside the map is out[j - 1].
static void patch_regions(const patch_op_t *ops, uint32_t n, uint32_t gh, uint32_t gw, uint32_t py, uint32_t px,
    patch_rect_t *out, patch_rect_t *win) {
    const conv_data_t *last = ops[n - 1].d;
    patch_rect_t r = {
        (int32_t)(py * last->out_h / gh), (int32_t)((py + 1) * last->out_h / gh),
        (int32_t)(px * last->out_w / gw), (int32_t)((px + 1) * last->out_w / gw),
    };
    for (uint32_t j = n; j-- > 0;) {
        const conv_data_t *d = ops[j].d;
        out[j] = r;
        int32_t eff_h = (d->f_h - 1) * d->dil_h + 1, eff_w = (d->f_w - 1) * d->dil_w + 1;
        patch_rect_t w = {
            r.r0 * d->stride_h - d->pad_h, (r.r1 - 1) * d->stride_h - d->pad_h + eff_h,
            r.c0 * d->stride_w - d->pad_w, (r.c1 - 1) * d->stride_w - d->pad_w + eff_w,
        };
        win[j] = w;
        // What the previous op must compute: the window inside the map.
        r = rect_clip(&w, d->in_h, d->in_w);
    }
}

static const void *node_data(const tflm_interp_t *ip, const tflm_node_rec_t *nr) {
    return (nr->flags & TFLM_NODE_DATA_IN_MODEL) ? (const void *)(ip->model->fb.buf + nr->data)
                                                 : (const void *)tflm_arena_ptr(ip->arena, nr->data);
}

static tflm_status_t bad_stage(tflm_interp_t *ip, uint32_t node, const char *why) {
    return tflm_error(&ip->err, TFLM_ERR_VALUE, TFLM_PATCH_METADATA " metadata: operator %u %s", (unsigned)node, why);
}

// The stage's operators from the records; ValueError unless they form a
// chain of int8 CONV_2D / DEPTHWISE_CONV_2D that patches can run.
static tflm_status_t stage_ops(tflm_interp_t *ip, patch_op_t *ops) {
    uint32_t n = ip->patch.split;
    const tflm_subgraph_rec_t *sg = tflm_interp_subgraph(ip, 0);
    if (n > sg->n_nodes) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, TFLM_PATCH_METADATA " metadata: no %u operators", (unsigned)n);
    }
    for (uint32_t j = 0; j < n; ++j) {
        const tflm_node_rec_t *nr = tflm_interp_node(ip, sg->node_base + j);
        const uint16_t *io = tflm_arena_ptr(ip->arena, nr->io);
        int32_t op = nr->kernel < tflm_kernel_count ? tflm_kernels[nr->kernel].op : -1;
        if ((op != TFLM_OP_CONV_2D && op != TFLM_OP_DEPTHWISE_CONV_2D) || nr->n_outputs != 1 || nr->n_inputs < 2
            || io[0] == TFLM_NO_INDEX || io[1] == TFLM_NO_INDEX) {
            return bad_stage(ip, j, "is not a CONV_2D or DEPTHWISE_CONV_2D a patch can run");
        }
        const conv_data_t *d = node_data(ip, nr);
        if (d->kind != CONV_INT8 || d->batches != 1) {
            return bad_stage(ip, j, "is not an int8 convolution of one batch");
        }
        if (j > 0) {
            const uint16_t *prev = tflm_arena_ptr(ip->arena, tflm_interp_node(ip, sg->node_base + j - 1)->io);
            const conv_data_t *pd = ops[j - 1].d;
            if (io[0] != prev[tflm_interp_node(ip, sg->node_base + j - 1)->n_inputs] || pd->out_h != d->in_h
                || pd->out_w != d->in_w || pd->out_d != d->in_d) {
                return bad_stage(ip, j, "does not read the previous operator's output");
            }
        }
        ops[j].d = d;
        ops[j].depthwise = op == TFLM_OP_DEPTHWISE_CONV_2D;
        ops[j].filter = tflm_interp_tensor_data(ip, tflm_interp_tensor(ip, io[1]));
        ops[j].bias = d->has_bias && nr->n_inputs > 2 && io[2] != TFLM_NO_INDEX
                          ? tflm_interp_tensor_data(ip, tflm_interp_tensor(ip, io[2]))
                          : NULL;
    }
    return TFLM_OK;
}

// Whether tensor t (global) is read or written by any node outside the
// stage or is an input or output of subgraph 0.
static bool used_outside(tflm_interp_t *ip, uint16_t t) {
    const tflm_subgraph_rec_t *sg = tflm_interp_subgraph(ip, 0);
    const uint16_t *sio = tflm_arena_ptr(ip->arena, sg->io);
    for (uint32_t i = 0; i < (uint32_t)sg->n_inputs + sg->n_outputs; ++i) {
        if (sio[i] == t) {
            return true;
        }
    }
    for (uint32_t node = 0; node < ip->n_nodes; ++node) {
        if (node >= sg->node_base && node < sg->node_base + ip->patch.split) {
            continue;
        }
        const tflm_node_rec_t *nr = tflm_interp_node(ip, node);
        const uint16_t *io = tflm_arena_ptr(ip->arena, nr->io);
        for (uint32_t k = 0; k < (uint32_t)nr->n_inputs + nr->n_outputs; ++k) {
            if (io[k] == t) {
                return true;
            }
        }
    }
    return false;
}

tflm_status_t tflm_patch_finish(tflm_interp_t *ip) {
    tflm_patch_t *pt = &ip->patch;
    uint32_t n = pt->split;
    patch_op_t ops[TFLM_PATCH_MAX_OPS];
    tflm_status_t st = stage_ops(ip, ops);
    if (st) {
        return st;
    }
    const tflm_subgraph_rec_t *sg = tflm_interp_subgraph(ip, 0);
    const conv_data_t *last = ops[n - 1].d;
    if (pt->grid_h > last->out_h || pt->grid_w > last->out_w) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, TFLM_PATCH_METADATA " metadata: %ux%u patches over a %ux%u map",
            (unsigned)pt->grid_h, (unsigned)pt->grid_w, (unsigned)last->out_h, (unsigned)last->out_w);
    }
    // Weights are constants, and each op writes a tensor of its own (not the
    // stage's input, not another op's output), so unplanning the
    // intermediate maps leaves everything the patches read or write in place.
    uint16_t input = ((const uint16_t *)tflm_arena_ptr(ip->arena, tflm_interp_node(ip, sg->node_base)->io))[0];
    for (uint32_t j = 0; j < n; ++j) {
        const tflm_node_rec_t *nr = tflm_interp_node(ip, sg->node_base + j);
        const uint16_t *io = tflm_arena_ptr(ip->arena, nr->io);
        for (uint32_t k = 1; k < nr->n_inputs && k < 3; ++k) {
            if (io[k] != TFLM_NO_INDEX && tflm_interp_tensor(ip, io[k])->where != TFLM_AT_MODEL) {
                return bad_stage(ip, j, "has weights that are not constants");
            }
        }
        uint16_t t = io[nr->n_inputs];
        bool reused = t == input;
        for (uint32_t i = 0; i < j && !reused; ++i) {
            const tflm_node_rec_t *ni = tflm_interp_node(ip, sg->node_base + i);
            reused = ((const uint16_t *)tflm_arena_ptr(ip->arena, ni->io))[ni->n_inputs] == t;
        }
        if (reused) {
            return bad_stage(ip, j, "writes a tensor the stage already uses");
        }
    }
    // Intermediate maps are the stage's own: not read elsewhere, planned
    // buffers that the patches replace.
    for (uint32_t j = 0; j + 1 < n; ++j) {
        const tflm_node_rec_t *nr = tflm_interp_node(ip, sg->node_base + j);
        uint16_t t = ((const uint16_t *)tflm_arena_ptr(ip->arena, nr->io))[nr->n_inputs];
        tflm_tensor_rec_t *r = tflm_interp_tensor(ip, t);
        if (r->where != TFLM_AT_HEAD || (r->flags & TFLM_TENSOR_VARIABLE) || used_outside(ip, t)) {
            return bad_stage(ip, j, "has an output used outside the stage");
        }
    }
    // Buffer sizes: op j's input windows go to buffer j % 2.
    uint32_t size[2] = { 0, 0 }, copy = 0;
    uint64_t macs = 0, whole = 0;
    for (uint32_t j = 0; j < n; ++j) {
        const conv_data_t *d = ops[j].d;
        uint64_t per = (uint64_t)d->f_h * d->f_w * (ops[j].depthwise ? 1u : d->f_d) * d->out_d;
        whole += per * d->out_h * d->out_w;
        copy = TFLM_MAX(copy, conv_data_bytes(d));
    }
    for (uint32_t py = 0; py < pt->grid_h; ++py) {
        for (uint32_t px = 0; px < pt->grid_w; ++px) {
            patch_rect_t out[TFLM_PATCH_MAX_OPS], win[TFLM_PATCH_MAX_OPS];
            patch_regions(ops, n, pt->grid_h, pt->grid_w, py, px, out, win);
            for (uint32_t j = 0; j < n; ++j) {
                const conv_data_t *d = ops[j].d;
                patch_rect_t in = rect_clip(&win[j], d->in_h, d->in_w);
                if (rect_h(&out[j]) <= 0 || rect_w(&out[j]) <= 0 || rect_h(&in) <= 0 || rect_w(&in) <= 0) {
                    return bad_stage(ip, j, "has an empty patch");
                }
                uint64_t bytes = (uint64_t)rect_h(&in) * (uint64_t)rect_w(&in) * d->in_d;
                if (bytes > UINT32_MAX / 2) {
                    return bad_stage(ip, j, "has an oversized patch");
                }
                size[j % 2] = TFLM_MAX(size[j % 2], (uint32_t)bytes);
                uint64_t per = (uint64_t)d->f_h * d->f_w * (ops[j].depthwise ? 1u : d->f_d) * d->out_d;
                macs += per * (uint64_t)rect_h(&out[j]) * (uint64_t)rect_w(&out[j]);
            }
        }
    }
    const tflm_node_rec_t *end = tflm_interp_node(ip, sg->node_base + n - 1);
    if (end->n_scratch < TFLM_PATCH_SCRATCH) {
        return tflm_error(&ip->err, TFLM_ERR_RUNTIME, "internal error: the stage has no patch buffers");
    }
    uint32_t bytes[TFLM_PATCH_SCRATCH] = { size[0], size[1], copy };
    for (uint32_t k = 0; k < TFLM_PATCH_SCRATCH; ++k) {
        tflm_tensor_rec_t *r = tflm_interp_tensor(ip, end->scratch + end->n_scratch - TFLM_PATCH_SCRATCH + k);
        r->bytes = bytes[k];
        r->where = bytes[k] ? TFLM_AT_HEAD : TFLM_AT_NONE;
    }
    for (uint32_t j = 0; j + 1 < n; ++j) {
        tflm_node_rec_t *nr = tflm_interp_node(ip, sg->node_base + j);
        nr->flags |= TFLM_NODE_PATCH_SKIP;
        const uint16_t *io = tflm_arena_ptr(ip->arena, nr->io);
        tflm_interp_tensor(ip, io[nr->n_inputs])->where = TFLM_AT_NONE;
    }
    tflm_interp_node(ip, sg->node_base + n - 1)->flags |= TFLM_NODE_PATCH_END;
    pt->macs = macs;
    pt->whole_macs = whole;
    return TFLM_OK;
}

// Copies the part of window `win` inside a map (h x w x c, at `map`) to
// `dst`, rows of that part's width.
static void load_window(const int8_t *map, int32_t h, int32_t w, int32_t c, const patch_rect_t *win, int8_t *dst) {
    patch_rect_t in = rect_clip(win, h, w);
    size_t row = (size_t)rect_w(&in) * (size_t)c;
    for (int32_t r = in.r0; r < in.r1; ++r) {
        memcpy(dst + (size_t)(r - in.r0) * row, map + ((size_t)r * w + in.c0) * c, row);
    }
}

// Runs one op over region `out` of its output. Its input is the part of
// window `win` inside the map, at `src`; the taps outside it are padding,
// which the kernel skips as it does at the map's edges. The output goes to
// `dst`, rows dst_w pixels apart, its first pixel (out's top left) at `dst`.
static void run_region(const patch_op_t *op, conv_data_t *g, const patch_rect_t *out, const patch_rect_t *win,
    const int8_t *src, int8_t *dst, int32_t dst_w) {
    const conv_data_t *d = op->d;
    patch_rect_t in = rect_clip(win, d->in_h, d->in_w);
    memcpy(g, d, conv_data_bytes(d));
    int32_t oh = rect_h(out), ow = rect_w(out);
    g->in_w = (uint16_t)rect_w(&in);
    g->pad_w = (uint16_t)(in.c0 - win->c0);
    g->out_w = (uint16_t)ow;
    tflm_conv_s8_rows_fn rows = NULL;
#if TFLM_KERNEL_CONV_2D
    if (!op->depthwise) {
        rows = tflm_conv_2d_s8_rows;
    }
#endif
#if TFLM_KERNEL_DEPTHWISE_CONV_2D
    if (op->depthwise) {
        rows = tflm_depthwise_conv_2d_s8_rows;
    }
#endif
    if (rows == NULL) {
        return; // unreachable: the stage's nodes were built with these kernels
    }
    if (dst_w == ow) {
        // Contiguous rows: the whole region in one call.
        g->in_h = (uint16_t)rect_h(&in);
        g->pad_h = (uint16_t)(in.r0 - win->r0);
        g->out_h = (uint16_t)oh;
        rows(g, src, op->filter, op->bias, dst, 0, 0, oh);
        return;
    }
    // Row by row, each a one-row output of the input rows its window covers.
    int32_t eff_h = (d->f_h - 1) * d->dil_h + 1;
    size_t in_row = (size_t)rect_w(&in) * d->in_d;
    g->out_h = 1;
    for (int32_t r = 0; r < oh; ++r) {
        int32_t y0 = win->r0 + r * d->stride_h;
        int32_t a = TFLM_MIN(TFLM_MAX(y0, in.r0), in.r1), b = TFLM_MAX(TFLM_MIN(y0 + eff_h, in.r1), a);
        g->in_h = (uint16_t)(b - a);
        g->pad_h = (uint16_t)(a - y0);
        rows(g, src + (size_t)(a - in.r0) * in_row, op->filter, op->bias, dst + (size_t)r * dst_w * d->out_d, 0, 0, 1);
    }
}

tflm_status_t tflm_patch_run(tflm_interp_t *ip, const tflm_eval_t *e) {
    const tflm_patch_t *pt = &ip->patch;
    uint32_t n = pt->split;
    patch_op_t ops[TFLM_PATCH_MAX_OPS];
    tflm_status_t st = stage_ops(ip, ops);
    if (st) {
        return st;
    }
    const tflm_subgraph_rec_t *sg = tflm_interp_subgraph(ip, 0);
    const tflm_node_rec_t *first = tflm_interp_node(ip, sg->node_base);
    const int8_t *input = tflm_interp_tensor_data(ip,
        tflm_interp_tensor(ip, ((const uint16_t *)tflm_arena_ptr(ip->arena, first->io))[0]));
    int8_t *output = e->out[0];
    const tflm_node_rec_t *end = tflm_interp_node(ip, sg->node_base + n - 1);
    void *const *scratch = e->scratch + end->n_scratch - TFLM_PATCH_SCRATCH;
    int8_t *buf[2] = { scratch[0], scratch[1] };
    conv_data_t *g = scratch[2];
    const conv_data_t *last = ops[n - 1].d;
    for (uint32_t py = 0; py < pt->grid_h; ++py) {
        for (uint32_t px = 0; px < pt->grid_w; ++px) {
            patch_rect_t out[TFLM_PATCH_MAX_OPS], win[TFLM_PATCH_MAX_OPS];
            patch_regions(ops, n, pt->grid_h, pt->grid_w, py, px, out, win);
            const conv_data_t *d0 = ops[0].d;
            load_window(input, d0->in_h, d0->in_w, d0->in_d, &win[0], buf[0]);
            for (uint32_t j = 0; j + 1 < n; ++j) {
                // Into the next op's input: its window inside the map is out[j].
                run_region(&ops[j], g, &out[j], &win[j], buf[j % 2], buf[(j + 1) % 2], rect_w(&out[j]));
            }
            int8_t *dst = output + ((size_t)out[n - 1].r0 * last->out_w + (size_t)out[n - 1].c0) * last->out_d;
            run_region(&ops[n - 1], g, &out[n - 1], &win[n - 1], buf[(n - 1) % 2], dst, last->out_w);
        }
    }
    return TFLM_OK;
}
