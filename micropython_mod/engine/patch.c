// Patch-based execution of a stage (see patch.h).
#include "patch.h"
#include "build.h"
#include "overlap.h"

tflm_status_t tflm_patch_find(tflm_model_t *m, uint32_t n_nodes, const tflm_schedule_t *given, tflm_patch_t *patch,
    tflm_error_t *err) {
    memset(patch, 0, sizeof(*patch));
    tflm_schedule_t w;
    if (given != NULL) {
        w = *given;
        patch->given = true;
    } else {
        const uint8_t *p;
        uint32_t len;
        tflm_status_t st = tflm_model_own_metadata(m, TFLM_PATCH_METADATA, TFLM_PATCH_MAGIC, TFLM_PATCH_VERSION,
            4 * TFLM_PATCH_WORDS, &p, &len, err);
        if (st || p == NULL) {
            return st;
        }
        w = (tflm_schedule_t){ tflm_rd_u32(p + 8), tflm_rd_u32(p + 12), tflm_rd_u32(p + 16), tflm_rd_u32(p + 20),
            tflm_rd_u32(p + 24) };
    }
    if (given != NULL && w.split == 0) {
        return TFLM_OK; // the caller's: no stage
    }
    #if !TFLM_PATCH
    (void)n_nodes;
    return tflm_error(err, TFLM_ERR_NOT_IMPLEMENTED, "%s, which this build leaves out (TFLM_PATCH=0): build with "
        "what `tflm-host ops` prints for the model", given != NULL ? "stage= asks for a patch-based stage"
        : "the model has a patch-based stage (" TFLM_PATCH_METADATA " metadata)");
    #else
    const char *what = tflm_patch_source(patch);
    const bool bands = w.mode == TFLM_PATCH_MODE_ROWS;
    if (w.mode > TFLM_PATCH_MODE_KEEP || (bands && (w.grid_w != 1 || w.split <= w.start + 1))) {
        return tflm_error(err, TFLM_ERR_VALUE, "%s: mode %u (0: patches; 1: bands of rows: one grid column, two ops "
            "or more; 2: patches keeping halos)", what, (unsigned)w.mode);
    }
    if (w.start >= w.split || w.split - w.start > TFLM_PATCH_MAX_OPS || w.split > n_nodes || w.grid_h < 1
        || w.grid_h > TFLM_PATCH_MAX_GRID || w.grid_w < 1 || w.grid_w > TFLM_PATCH_MAX_GRID) {
        return tflm_error(err, TFLM_ERR_VALUE, "%s: a stage of operators %u to %u (of %u) in %ux%u patches is out of "
            "range", what, (unsigned)w.start, (unsigned)w.split - 1u, (unsigned)n_nodes, (unsigned)w.grid_h,
            (unsigned)w.grid_w);
    }
    patch->start = (uint16_t)w.start;
    patch->split = (uint16_t)w.split;
    patch->grid_h = (uint16_t)w.grid_h;
    patch->grid_w = (uint16_t)w.grid_w;
    patch->mode = (uint8_t)w.mode;
    return TFLM_OK;
    #endif
}

#if TFLM_PATCH

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

// At most this many inputs of a stage operator: the map and its constants
// (a convolution's filter and bias).
#define PATCH_MAX_INPUTS (3)

// One stage operator as the stage sees it: its geometry (whole maps, as its
// kernel's window hook gives it), its kernel data (which its kernel copies
// and gives a patch's geometry for each run) and its inputs.
typedef struct {
    int32_t in_h, in_w, in_d, out_h, out_w, out_d;
    int32_t f_h, f_w, stride_h, stride_w, dil_h, dil_w, pad_h, pad_w;
    uint32_t macs;        // multiply-accumulates (or compares) per output pixel
    uint32_t elem;        // bytes per element of its input and output
    uint8_t n_in;
    // The maps it reads (two for an element-wise node): where each comes
    // from, -1 the stage's input, else the op of the stage that writes it.
    // Patches take chains (each op the one before it); bands any order of
    // ops whose maps come from the stage's input or ops before them.
    uint8_t n_maps;
    int8_t src[2];
    // A reduction of its whole input (the kernel's reduce hook): the last op
    // of a stage in bands of rows, which takes its input's rows in slices,
    // its geometry its map's (rows in, the same rows out).
    bool slices;
    // Element-wise over two maps of its output's shape (the kernel's span
    // hook): in bands of rows, its geometry its maps' (rows in, the same
    // rows out).
    bool span;
    union {
        tflm_status_t (*run_window)(tflm_eval_t *e, const tflm_window_t *w);
        tflm_status_t (*run_slice)(tflm_eval_t *e, void *acc, uint32_t k0, uint32_t k1, bool last);
        tflm_status_t (*run_span)(tflm_eval_t *e, uint32_t count);
    } run;
    const void *data;
    const void *in[PATCH_MAX_INPUTS]; // in[0] (the map) is the patch buffer's
} patch_op_t;

// Patch (py, px)'s regions: out[j] the part of op j's output it computes,
// win[j] the window of op j's input that needs (reaching outside the map
// where the op pads). The part of win[j] inside the map is out[j - 1].
static void patch_regions(const patch_op_t *ops, uint32_t n, uint32_t gh, uint32_t gw, uint32_t py, uint32_t px,
    patch_rect_t *out, patch_rect_t *win) {
    const patch_op_t *last = &ops[n - 1];
    patch_rect_t r = {
        (int32_t)(py * (uint32_t)last->out_h / gh), (int32_t)((py + 1) * (uint32_t)last->out_h / gh),
        (int32_t)(px * (uint32_t)last->out_w / gw), (int32_t)((px + 1) * (uint32_t)last->out_w / gw),
    };
    for (uint32_t j = n; j-- > 0;) {
        const patch_op_t *d = &ops[j];
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

static tflm_status_t bad_stage(tflm_interp_t *ip, uint32_t node, const char *why) {
    return tflm_error(&ip->err, TFLM_ERR_VALUE, "%s: operator %u %s", tflm_patch_source(&ip->patch),
        (unsigned)(ip->patch.start + node), why);
}

// The map a stage op reads, as its writer gives it: rows, columns,
// channels and bytes per element.
typedef struct {
    int32_t h, w, d;
    uint32_t elem;
} patch_map_t;

// An op whose rows are its map's (rows in, the same rows out, 1x1 windows:
// a reduction's slices, an element-wise node's runs) reading `count`
// elements of map `m`; `macs` per pixel. Nothing set (in_d 0) when `m` is
// NULL or not `count` elements.
static void rows_of_map(patch_op_t *o, const patch_map_t *m, uint64_t count, uint32_t macs) {
    if (m == NULL || m->d == 0 || (uint64_t)m->h * (uint64_t)m->w * (uint64_t)m->d != count) {
        return;
    }
    o->in_h = o->out_h = m->h, o->in_w = o->out_w = m->w, o->in_d = o->out_d = m->d;
    o->f_h = o->f_w = o->stride_h = o->stride_w = o->dil_h = o->dil_w = 1;
    o->pad_h = o->pad_w = 0;
    o->macs = macs;
}

// Op j of the stage from its node, `m` the map it reads (NULL when no op
// before it says: op 0); false when the patches cannot run it.
static bool stage_op(tflm_interp_t *ip, const tflm_node_rec_t *nr, const patch_map_t *m, patch_op_t *o) {
    const uint16_t *io = tflm_interp_io(ip, nr->io);
    const tflm_kernel_t *k = tflm_kernel_of_id(nr->kernel);
    memset(o, 0, sizeof(*o));
    if (nr->n_outputs != 1 || nr->n_inputs < 1 || nr->n_inputs > PATCH_MAX_INPUTS || io[0] == TFLM_NO_INDEX
        || k == NULL) {
        return false;
    }
    const tflm_kernel_hooks_t *h = k->hooks;
    tflm_rows_t g;
    uint32_t depth, acc, count;
    o->data = tflm_interp_node_data(ip, nr);
    o->elem = tflm_type_size(tflm_interp_tensor(ip, io[0])->type);
    o->n_in = nr->n_inputs;
    o->n_maps = 1;
    for (uint32_t k2 = 1; k2 < nr->n_inputs; ++k2) {
        o->in[k2] = io[k2] == TFLM_NO_INDEX ? NULL : tflm_interp_tensor_data(ip, tflm_interp_tensor(ip, io[k2]));
    }
    if (h != NULL && h->reduce != NULL && h->run_slice != NULL && h->reduce(o->data, &depth, &acc)) {
        // Its geometry is its map's (stage_ops refuses it where there is
        // none that fits: in_d stays 0).
        o->slices = true;
        o->run.run_slice = h->run_slice;
        if (acc % 4u == 0 && m != NULL) {
            rows_of_map(o, m, depth, acc / 4u * (uint32_t)m->d); // units x the elements of a pixel
        }
        return true;
    }
    if (h != NULL && h->span != NULL && h->run_span != NULL && nr->n_inputs == 2 && io[1] != TFLM_NO_INDEX
        && h->span(o->data, &count)) {
        o->span = true;
        o->n_maps = 2;
        o->run.run_span = h->run_span;
        rows_of_map(o, m, count, 0);
        return true;
    }
    if (h == NULL || h->window == NULL || h->run_window == NULL || !h->window(o->data, &g) || g.batches != 1) {
        return false;
    }
    o->run.run_window = h->run_window;
    o->in_h = g.in_h, o->in_w = g.in_w, o->in_d = g.in_d;
    o->out_h = g.out_h, o->out_w = g.out_w, o->out_d = g.out_d;
    o->f_h = g.f_h, o->f_w = g.f_w, o->stride_h = g.stride_h, o->stride_w = g.stride_w;
    o->dil_h = g.dil_h, o->dil_w = g.dil_w, o->pad_h = g.pad_h, o->pad_w = g.pad_w;
    o->macs = g.macs;
    return true;
}


// Bytes of a reducing op's sums.
static inline uint32_t slice_acc_bytes(const patch_op_t *o) {
    return 4u * (o->macs / (uint32_t)o->in_d);
}

// The stage as its build and its runs see it: `n` operators of subgraph 0,
// node `base` the first.
typedef struct {
    patch_op_t ops[TFLM_PATCH_MAX_OPS];
    uint32_t n;
    uint32_t base;
    const tflm_subgraph_rec_t *sg;
} patch_stage_t;

// Where op j's map `t` (a tensor) comes from: -1 the stage's input
// `input`, else the op before j that writes it (outs[i] its output); -2
// from outside the stage.
static int32_t map_source(uint16_t t, uint16_t input, const uint16_t *outs, uint32_t j) {
    if (t == input) {
        return -1;
    }
    for (uint32_t i = j; i-- > 0;) {
        if (outs[i] == t) {
            return (int32_t)i;
        }
    }
    return -2;
}

// The stage's operators from the records; ValueError unless their kernels
// can run over a patch and their maps come from the stage's input or ops
// before them: in patches, each op the one before it (a chain); in bands of
// rows, any ops before it (residual blocks: an element-wise node of two
// maps).
static tflm_status_t stage_ops(tflm_interp_t *ip, patch_stage_t *stage) {
    const uint32_t n = stage->n = (uint32_t)ip->patch.split - ip->patch.start;
    const tflm_subgraph_rec_t *sg = stage->sg = tflm_interp_subgraph(ip, 0);
    const uint32_t base = stage->base = sg->node_base + ip->patch.start;
    patch_op_t *ops = stage->ops;
    if (ip->patch.split > sg->n_nodes) {
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "%s: no %u operators", tflm_patch_source(&ip->patch),
            (unsigned)ip->patch.split);
    }
    uint16_t outs[TFLM_PATCH_MAX_OPS];
    const uint16_t input = tflm_interp_io(ip, tflm_interp_node(ip, base)->io)[0];
    const bool rows = ip->patch.mode == TFLM_PATCH_MODE_ROWS;
    for (uint32_t j = 0; j < n; ++j) {
        const tflm_node_rec_t *nr = tflm_interp_node(ip, base + j);
        const uint16_t *io = tflm_interp_io(ip, nr->io);
        outs[j] = nr->n_outputs == 1 ? io[nr->n_inputs] : TFLM_NO_INDEX;
        // Map 0's geometry, from the op that writes it (op 0's input: none).
        const int32_t src0 = map_source(io[0], input, outs, j);
        patch_map_t m = { 0, 0, 0, 0 };
        if (src0 >= 0) {
            m = (patch_map_t){ ops[src0].out_h, ops[src0].out_w, ops[src0].out_d, ops[src0].elem };
        } else if (src0 == -1 && j > 0) {
            m = (patch_map_t){ ops[0].in_h, ops[0].in_w, ops[0].in_d, ops[0].elem };
        }
        if (!stage_op(ip, nr, m.elem ? &m : NULL, &ops[j])) {
            return bad_stage(ip, j, "is not an operator of one batch whose kernel can run over a patch");
        }
        patch_op_t *o = &ops[j];
        if (o->slices && (j + 1 < n || !rows || o->in_d == 0)) {
            return bad_stage(ip, j, "reduces its whole input: only the last operator of a stage in bands of rows "
                "after a map of as many elements may");
        }
        if (o->span && (!rows || o->in_d == 0)) {
            return bad_stage(ip, j, "adds two maps element by element: only a stage in bands of rows may hold it, "
                "after an operator that writes a map of its output's shape");
        }
        if (tflm_type_size(tflm_interp_tensor(ip, io[nr->n_inputs])->type) != o->elem || o->elem == 0) {
            return bad_stage(ip, j, "has an output of another element size than its input");
        }
        for (uint32_t k = 0; k < o->n_maps; ++k) {
            const int32_t from = k == 0 ? src0 : map_source(io[k], input, outs, j);
            const patch_op_t *w = from >= 0 ? &ops[from] : &ops[0];
            const bool same = from >= 0 ? w->out_h == o->in_h && w->out_w == o->in_w && w->out_d == o->in_d
                : w->in_h == o->in_h && w->in_w == o->in_w && w->in_d == o->in_d;
            if (from == -2 || (j > 0 && !rows && from != (int32_t)j - 1) || !same || w->elem != o->elem) {
                return bad_stage(ip, j, rows
                    ? "does not read the stage's input or an earlier operator's output"
                    : "does not read the previous operator's output");
            }
            o->src[k] = (int8_t)from;
        }
    }
    return TFLM_OK;
}

// Whether tensor t (global) is read or written by any node outside the
// stage or is an input or output of subgraph 0.
static bool used_outside(tflm_interp_t *ip, uint16_t t) {
    const tflm_subgraph_rec_t *sg = tflm_interp_subgraph(ip, 0);
    const uint16_t *sio = tflm_interp_io(ip, sg->io);
    for (uint32_t i = 0; i < (uint32_t)sg->n_inputs + sg->n_outputs; ++i) {
        if (sio[i] == t) {
            return true;
        }
    }
    for (uint32_t node = 0; node < ip->n_nodes; ++node) {
        if (node >= sg->node_base + ip->patch.start && node < sg->node_base + ip->patch.split) {
            continue;
        }
        const tflm_node_rec_t *nr = tflm_interp_node(ip, node);
        const uint16_t *io = tflm_interp_io(ip, nr->io);
        for (uint32_t k = 0; k < (uint32_t)nr->n_inputs + nr->n_outputs; ++k) {
            if (io[k] == t) {
                return true;
            }
        }
    }
    return false;
}

// Patches keeping their halos (patch.h's keep mode). Rows and columns are
// separable: which rows of each map a patch computes depends on its row of
// patches alone, which columns on its column alone. Along one axis, op j of
// patch p computes outputs [n0, n1): those its reader's window needs that
// no patch before computed (the last op: the patch's own). Its window over
// them is [t0, t1) inside its input map (the rest of it is padding),
// of which [t0, min(f, t1)) an earlier patch computed (f: how far the op
// before computed the map, 0 for op 0's, the stage's input, which is whole)
// and the rest is new.
typedef struct {
    int16_t n0[TFLM_PATCH_MAX_OPS], n1[TFLM_PATCH_MAX_OPS];
    int16_t t0[TFLM_PATCH_MAX_OPS], t1[TFLM_PATCH_MAX_OPS];
    int16_t f[TFLM_PATCH_MAX_OPS];
} keep_axis_t;

// Op o along rows or columns: input and output sizes, the window's reach,
// stride and leading padding.
typedef struct {
    int32_t in, out, eff, stride, pad;
} keep_geom_t;

static TFLM_ALWAYS_INLINE keep_geom_t keep_geom(const patch_op_t *o, bool cols) {
    return cols ? (keep_geom_t){ o->in_w, o->out_w, (o->f_w - 1) * o->dil_w + 1, o->stride_w, o->pad_w }
                : (keep_geom_t){ o->in_h, o->out_h, (o->f_h - 1) * o->dil_h + 1, o->stride_h, o->pad_h };
}

// Patch p of g along an axis, after patch p - 1 (p = 0 first, then each in
// turn): `ends` holds how far each op's output is computed (op j's outputs
// [0, ends[j])), all 0 before patch 0, and is moved past patch p: the last
// op's patch, and before it the end of the windows its reader's outputs
// reach. An op with nothing new (n0 == n1) has the map's computed end as
// its empty window, so nothing is new before it.
static void keep_axis(const patch_op_t *ops, uint32_t n, bool cols, uint32_t g, int32_t p, int16_t *ends,
    keep_axis_t *x) {
    int32_t e = (int32_t)((uint32_t)(p + 1) * (uint32_t)keep_geom(&ops[n - 1], cols).out / g), next_t0 = 0;
    for (uint32_t j = n; j-- > 0;) {
        const keep_geom_t a = keep_geom(&ops[j], cols);
        const int32_t f = j > 0 ? ends[j - 1] : 0;
        int32_t n0 = j + 1 == n ? ends[j] : TFLM_MAX(ends[j], next_t0), n1 = e, t0, t1, w0;
        ends[j] = (int16_t)e;
        // Where the op before it computes to now: its window's end.
        e = e <= 0 ? 0 : TFLM_MIN(TFLM_MAX((e - 1) * a.stride - a.pad + a.eff, 0), a.in);
        if (n0 >= n1) {
            n0 = n1, t0 = t1 = w0 = j > 0 ? e : a.in;
        } else {
            w0 = n0 * a.stride - a.pad;
            t0 = TFLM_MIN(TFLM_MAX(w0, 0), a.in);
            t1 = TFLM_MAX(e, t0);
        }
        x->n0[j] = (int16_t)n0, x->n1[j] = (int16_t)n1, x->t0[j] = (int16_t)t0, x->t1[j] = (int16_t)t1;
        x->f[j] = (int16_t)f;
        next_t0 = t0;
    }
}

// How far below the stage's input (record x) its output (record y) must
// start to lie over it (overlap.h): the patches run in rows of patches, each
// copying its input window (rows from the window's first row inside the map
// on) before it writes its region of the output, row by row. A patch's input
// must be intact when it is copied: the bytes written by the patches before
// it, up to the end of the last one's region, must lie below its first input
// row. False when the tensors are not whole maps of the stage's rows.
// In rows mode, `rows_dist` is the bands' distance (bands()).
static bool stage_overlap(tflm_interp_t *ip, const patch_op_t *ops, uint32_t n, uint16_t x, uint16_t y,
    const uint64_t *rows_dist, uint32_t *d) {
    const tflm_patch_t *pt = &ip->patch;
    const patch_op_t *first = &ops[0], *last = &ops[n - 1];
    uint64_t row_x = (uint64_t)first->in_w * (uint64_t)first->in_d * first->elem;
    uint64_t pixel_y = (uint64_t)last->out_d * last->elem, row_y = (uint64_t)last->out_w * pixel_y;
    if (tflm_interp_tensor(ip, x)->bytes != (uint64_t)first->in_h * row_x
        || tflm_interp_tensor(ip, y)->bytes != (uint64_t)last->out_h * row_y) {
        return false;
    }
    uint64_t written = 0, dist = rows_dist ? *rows_dist : 0;
    const bool keep = pt->mode == TFLM_PATCH_MODE_KEEP;
    int16_t keep_ends[TFLM_PATCH_MAX_OPS] = { 0 };
    for (uint32_t py = 0; py < pt->grid_h && !rows_dist; ++py) {
        int32_t keep_r0 = 0; // keep mode: the first input row op 0 reads in the row of patches
        if (keep) {
            keep_axis_t r;
            keep_axis(ops, n, false, pt->grid_h, (int32_t)py, keep_ends, &r);
            keep_r0 = r.t0[0];
        }
        for (uint32_t px = 0; px < pt->grid_w; ++px) {
            patch_rect_t out[TFLM_PATCH_MAX_OPS], win[TFLM_PATCH_MAX_OPS];
            patch_regions(ops, n, pt->grid_h, pt->grid_w, py, px, out, win);
            uint64_t safe = (uint64_t)(keep ? keep_r0 : rect_clip(&win[0], first->in_h, first->in_w).r0) * row_x;
            dist = written > safe && written - safe > dist ? written - safe : dist;
            // The end of this patch's region: its last row's last pixel.
            written = (uint64_t)(out[n - 1].r1 - 1) * row_y + (uint64_t)out[n - 1].c1 * pixel_y;
        }
    }
    if (dist > UINT32_MAX / 2) {
        return false;
    }
    *d = (uint32_t)dist;
    return true;
}

// Bytes of one map of a patch at most (a stage's sums stay in 32 bits).
#define PATCH_MAX_BYTES (UINT32_MAX / 4 / TFLM_PATCH_MAX_OPS)

// A patch's maps in the patch buffer: in[j] the bytes of op j's input
// window (the part inside the map), op j's output being op j + 1's input.
// Op j's output may start dist[j] bytes or more below its input: the row
// rule (overlap.h) for the op run over the window, rows of the window's
// width, its padding what the window reaches outside the map. The kernels
// keep it as eval() does over overlapped tensors (run_window, kernel.h).
typedef struct {
    uint32_t in[TFLM_PATCH_MAX_OPS];
    uint32_t dist[TFLM_PATCH_MAX_OPS];
} patch_sizes_t;

// tflm_overlap_rows_distance for an op over a patch (one batch, bands of
// one row, `pad` rows of padding on top) without its walk over every
// output row in 64 bits (a run sizes each patch's maps; on the Cortex-M0+
// each step multiplies through a library call). The band of row y ends
// (y + 1) * row_y bytes in, its input starts at row max(0, y * stride -
// pad), and rows from the first that starts past the input read nothing.
// Up to row pad / stride the start stays 0 and the end grows, then both
// grow linearly: the largest gap is at row 0, the last row of the first
// run, the first of the second or the last row that reads input. (32 bits
// suffice: both ends lie within a patch's maps, each at most
// PATCH_MAX_BYTES.)
static uint32_t patch_rows_distance(uint32_t in_h, uint32_t out_h, uint32_t row_x, uint32_t row_y, uint32_t stride,
    uint32_t pad) {
    const uint32_t stop = TFLM_MIN(out_h, (in_h + pad + stride - 1) / stride), flat = pad / stride;
    const uint32_t at[4] = { 0, flat, flat + 1, stop - 1 };
    uint32_t d = 0;
    for (uint32_t i = 0; i < 4; ++i) {
        const uint32_t y = at[i], lo = y * stride > pad ? y * stride - pad : 0;
        if (y < stop && (y + 1) * row_y > lo * row_x + d) {
            d = (y + 1) * row_y - lo * row_x;
        }
    }
    return d;
}

static void patch_sizes(const patch_op_t *ops, uint32_t n, const patch_rect_t *out, const patch_rect_t *win,
    patch_sizes_t *z) {
    for (uint32_t j = 0; j < n; ++j) {
        const patch_op_t *d = &ops[j];
        patch_rect_t in = rect_clip(&win[j], d->in_h, d->in_w);
        uint32_t row_x = (uint32_t)rect_w(&in) * (uint32_t)d->in_d * d->elem;
        z->in[j] = (uint32_t)rect_h(&in) * row_x;
        z->dist[j] = 0;
        if (j + 1 < n) {
            z->dist[j] = patch_rows_distance((uint32_t)rect_h(&in), (uint32_t)rect_h(&out[j]), row_x,
                (uint32_t)rect_w(&out[j]) * (uint32_t)d->out_d * d->elem, (uint32_t)d->stride_h,
                (uint32_t)(in.r0 - win[j].r0)); // at most the output's bytes
        }
    }
}

static inline uint32_t align_down(uint32_t x) {
    return x & ~(TFLM_ALIGN - 1u);
}

// Places a patch's maps in a buffer of `size` bytes, each at a multiple of
// TFLM_ALIGN: at[j] the offset of op j's input. Op j's output lies
// dist[j] bytes or more below its input, or wholly above it. False when no
// placement fits. Forward, lo[j] and hi[j] are the lowest and highest
// offsets op j's input can take with ops 0..j placed: the offsets that
// allow op j + 1's input are a run from 0 up to hi[j] - dist[j] (below) and
// a run from lo[j] + in[j] up to the top (above), so lowest and highest
// follow. Backward, each input takes its highest offset when the next
// input lies far enough below it, else its lowest, under the next input.
static bool patch_place(uint32_t n, const patch_sizes_t *z, uint32_t size, uint32_t *at) {
    uint32_t lo[TFLM_PATCH_MAX_OPS], hi[TFLM_PATCH_MAX_OPS];
    if (n == 0 || z->in[0] > size) {
        return false;
    }
    lo[0] = 0, hi[0] = align_down(size - z->in[0]);
    for (uint32_t j = 1; j < n; ++j) {
        if (z->in[j] > size) {
            return false;
        }
        const uint32_t top = align_down(size - z->in[j]);
        const uint32_t d = z->dist[j - 1];
        const bool below = hi[j - 1] >= d;
        const uint64_t above_from = tflm_align_up(lo[j - 1] + z->in[j - 1], TFLM_ALIGN);
        const bool above = above_from <= top;
        if (!below && !above) {
            return false;
        }
        lo[j] = below ? 0 : (uint32_t)above_from;
        hi[j] = above ? top : TFLM_MIN(top, align_down(hi[j - 1] - d));
    }
    at[n - 1] = hi[n - 1];
    for (uint32_t j = n - 1; j-- > 0;) {
        at[j] = (uint64_t)at[j + 1] + z->dist[j] <= hi[j] ? hi[j] : lo[j];
    }
    return true;
}

// The smallest patch buffer that holds a patch's maps (each map above the
// one before always fits).
static uint32_t patch_smallest(uint32_t n, const patch_sizes_t *z) {
    uint32_t at[TFLM_PATCH_MAX_OPS], lo = 0, hi = 0;
    for (uint32_t j = 0; j < n; ++j) {
        lo = TFLM_MAX(lo, z->in[j]);
        hi += (uint32_t)tflm_align_up(z->in[j], TFLM_ALIGN);
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (patch_place(n, z, mid, at)) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return hi;
}

// The placement a run uses in a buffer of `size` bytes.
static bool patch_at(const tflm_patch_t *pt, uint32_t n, const patch_sizes_t *z, uint32_t size, uint32_t *at) {
#if TFLM_TEST_KERNELS
    if (pt->test_exact) {
        // Each output exactly its distance below its input, op test_op's
        // test_nudge bytes nearer; the last op's input at test_base.
        int64_t a = pt->test_base;
        for (uint32_t j = n; j-- > 0;) {
            if (j + 1 < n) {
                a += (int64_t)z->dist[j] - (j == pt->test_op ? pt->test_nudge : 0);
            }
            if (a < 0 || a + z->in[j] > size) {
                return false;
            }
            at[j] = (uint32_t)a;
        }
        return true;
    }
#else
    (void)pt;
#endif
    return patch_place(n, z, size, at);
}

// Copies of at most this many bytes, both ends word aligned and n a whole
// number of words, go to patch_copy_words; longer ones to patch_copy_down,
// whose loop of eight words costs a frame of nine registers and about 40
// cycles more a call on the Cortex-M4. Tiles of patches keeping their
// halos copy a few pixels a row: person_detect's 12x7 stage makes 6,446
// copies per invoke, 63 bytes on average.
#define PATCH_COPY_WORDS_MAX (128u)

// n bytes (a multiple of 4, both ends word aligned) four words a step:
// dst below src or apart, as patch_copy_down (each word is read before the
// one below it is written).
static TFLM_ALWAYS_INLINE void patch_words(uint8_t *dst, const uint8_t *src, size_t n) {
    uint32_t *d = __builtin_assume_aligned(dst, 4);
    const uint32_t *s = __builtin_assume_aligned(src, 4);
    for (; n >= 16; n -= 16, d += 4, s += 4) {
        const uint32_t w0 = s[0], w1 = s[1], w2 = s[2], w3 = s[3];
        d[0] = w0;
        d[1] = w1;
        d[2] = w2;
        d[3] = w3;
    }
    if (n & 8u) {
        const uint32_t w0 = s[0], w1 = s[1];
        d[0] = w0;
        d[1] = w1;
        d += 2, s += 2;
    }
    if (n & 4u) {
        d[0] = s[0];
    }
}

// patch_words out of line, in the registers a call leaves free and three
// more.
static TFLM_NOINLINE void patch_copy_words(uint8_t *dst, const uint8_t *src, size_t n) {
    patch_words(dst, src, n);
}

// Copies n bytes from src to dst, dst below src or apart from it: eight
// words a step when both are word aligned (the rest as patch_words),
// else a word a step where the core loads and stores words at any address
// (the Cortex-M3 and M4; a word is read before it is written, so forward is
// safe with dst below src). (The ports link MicroPython's memcpy, a word in
// about 8 cycles and unaligned bytes one by one; a band moves the rows
// each buffer keeps, a patch copies its input window's rows.)
static void patch_copy_down(void *dst, const void *src, size_t n) {
    uint8_t *d = dst;
    const uint8_t *s = src;
    if ((((uintptr_t)d | (uintptr_t)s) & 3u) == 0) {
        uint32_t *dw = __builtin_assume_aligned(d, 4);
        const uint32_t *sw = __builtin_assume_aligned(s, 4);
#if defined(__thumb2__)
        // Eight words a step where registers allow (the Cortex-M3 and M4; the
        // M0+ would spill them): half the loop's overhead a byte.
        for (; n >= 32; n -= 32, dw += 8, sw += 8) {
            const uint32_t w0 = sw[0], w1 = sw[1], w2 = sw[2], w3 = sw[3];
            const uint32_t w4 = sw[4], w5 = sw[5], w6 = sw[6], w7 = sw[7];
            dw[0] = w0;
            dw[1] = w1;
            dw[2] = w2;
            dw[3] = w3;
            dw[4] = w4;
            dw[5] = w5;
            dw[6] = w6;
            dw[7] = w7;
        }
#endif
        d = (uint8_t *)dw;
        s = (const uint8_t *)sw;
        patch_words(d, s, n & ~(size_t)3);
        d += n & ~(size_t)3, s += n & ~(size_t)3, n &= 3;
    }
#if !defined(__ARM_FEATURE_UNALIGNED)
    else {
        memmove(d, s, n);
        return;
    }
#endif
    // The words left where unaligned (memmove's call and byte loop cost
    // more than the copy), then at most three bytes.
    for (; n >= 4; n -= 4, d += 4, s += 4) {
#if defined(__ARM_FEATURE_UNALIGNED)
        uint32_t w;
        memcpy(&w, s, 4);
        memcpy(d, &w, 4);
#else
        // (Aligned here: the others went to memmove.)
        *(uint32_t *)__builtin_assume_aligned(d, 4) = *(const uint32_t *)__builtin_assume_aligned(s, 4);
#endif
    }
    if (n >= 2) {
        d[0] = s[0];
        d[1] = s[1];
        d += 2, s += 2, n -= 2;
    }
    if (n) {
        d[0] = s[0];
    }
}

// Whether patch_copy_words takes n bytes between dst and src.
static TFLM_ALWAYS_INLINE bool patch_small(const uint8_t *dst, const uint8_t *src, size_t n) {
    return ((((uintptr_t)dst | (uintptr_t)src | n) & 3u) == 0) && n <= PATCH_COPY_WORDS_MAX;
}

// A row of a patch's input window into the patch buffer (apart): by
// patch_copy_words where patch_small allows, else word by word where words
// load at any address, else by memcpy (which on the Cortex-M0+ copies
// aligned words as patch_copy_down does, without its extra call for
// unaligned bytes).
static TFLM_ALWAYS_INLINE void patch_copy_row(uint8_t *dst, const uint8_t *src, size_t n) {
    if (patch_small(dst, src, n)) {
        patch_copy_words(dst, src, n);
        return;
    }
#if defined(__ARM_FEATURE_UNALIGNED)
    patch_copy_down(dst, src, n);
#else
    memcpy(dst, src, n);
#endif
}

// Runs op `op` over window `w` of its input (at `src`) into `dst`: `e` is
// the stage's, its inputs `ins` and output `outs`.
// Points `e` at op's data and maps: input 0 at `src` (its constants as the
// model has them), output 0 at `dst`. (The data is read only: kernel.h.)
static void op_io(tflm_eval_t *e, void **ins, void **outs, const patch_op_t *op, const uint8_t *src, uint8_t *dst) {
    e->data = (void *)(uintptr_t)op->data;
    ins[0] = (void *)src;
    ins[1] = (void *)op->in[1];
    ins[2] = (void *)op->in[2];
    outs[0] = dst;
    e->n_in = op->n_in;
}

static tflm_status_t run_op(tflm_eval_t *e, void **ins, void **outs, const patch_op_t *op, const tflm_window_t *w,
    const uint8_t *src, uint8_t *dst) {
    op_io(e, ins, outs, op, src, dst);
    return op->run.run_window(e, w);
}

// Runs element-wise op `op` over `count` elements of its maps at `a` and
// `b` into `dst`.
static tflm_status_t run_span(tflm_eval_t *e, void **ins, void **outs, const patch_op_t *op, const uint8_t *a,
    const uint8_t *b, uint8_t *dst, uint32_t count) {
    op_io(e, ins, outs, op, a, dst);
    ins[1] = (void *)b;
    return op->run.run_span(e, count);
}

// Bytes of a row of op d's output.
static inline size_t out_row(const patch_op_t *d) {
    return (size_t)d->out_w * (size_t)d->out_d * d->elem;
}

// Bands of rows (patch.h's rows mode). Op j's output rows [0, done[j])
// are computed; its buffer (j < n - 1) holds rows [kept[j], done[j]) of
// them, row kept[j] at the buffer's start.
// (Rows fit 16 bits: the kernels' geometry holds them so, and a stage's
// records stay small on a stack its kernels run deep in.)
typedef struct {
    int16_t done[TFLM_PATCH_MAX_OPS];
    int16_t kept[TFLM_PATCH_MAX_OPS];
} band_state_t;

// Op j's work in a band: output rows [r0, r1) (none when r0 == r1) from
// input rows [a, b), its windows' first row y0 (a - y0 rows of padding).
typedef struct {
    int16_t r0, r1, a, b, y0;
} band_op_t;

// Band py of gh: the last op's rows of the band that are new, and for each op
// before it the rows of its output its readers' new rows read that are not
// computed yet (an op's readers are the ops after it whose maps it writes).
static void band_step(const patch_op_t *ops, uint32_t n, uint32_t gh, uint32_t py, const band_state_t *s,
    band_op_t *w) {
    const patch_op_t *last = &ops[n - 1];
    // The rows of op j's output its readers' new rows read: [lo[j], hi[j]),
    // none while lo[j] >= hi[j].
    int32_t lo[TFLM_PATCH_MAX_OPS], hi[TFLM_PATCH_MAX_OPS];
    for (uint32_t j = 0; j + 1 < n; ++j) {
        lo[j] = INT32_MAX;
        hi[j] = 0;
    }
    lo[n - 1] = (int32_t)(py * (uint32_t)last->out_h / gh);
    hi[n - 1] = (int32_t)((py + 1) * (uint32_t)last->out_h / gh);
    for (uint32_t j = n; j-- > 0;) {
        const patch_op_t *d = &ops[j];
        band_op_t *b = &w[j];
        const bool read = lo[j] < hi[j];
        const int32_t r0 = TFLM_MAX(read ? lo[j] : 0, s->done[j]), r1 = TFLM_MAX(read ? hi[j] : 0, r0);
        const int32_t y0 = r0 * d->stride_h - d->pad_h;
        const int32_t y1 = (r1 - 1) * d->stride_h - d->pad_h + (d->f_h - 1) * d->dil_h + 1;
        int32_t a = TFLM_MIN(TFLM_MAX(y0, 0), d->in_h), z = TFLM_MAX(TFLM_MIN(y1, d->in_h), a);
        if (r0 == r1) {
            a = z = 0; // nothing new: the ops before have nothing to add for it
        }
        for (uint32_t k = 0; k < d->n_maps && r0 < r1; ++k) {
            const int32_t src = d->src[k];
            if (src >= 0) {
                lo[src] = TFLM_MIN(lo[src], a);
                hi[src] = TFLM_MAX(hi[src], z);
            }
        }
        *b = (band_op_t){ (int16_t)r0, (int16_t)r1, (int16_t)a, (int16_t)z, (int16_t)y0 };
    }
}

// The first row of op j's map that op c (which reads it) reads from now on:
// in band record `b` if it runs in it, else at its next row.
static inline int32_t band_next_read(const patch_op_t *c, const band_op_t *b, int32_t done) {
    if (b->r0 < b->r1) {
        return b->a;
    }
    return TFLM_MIN(TFLM_MAX(done * c->stride_h - c->pad_h, 0), c->in_h);
}

// What the bands need: each op's buffer (j < n - 1), the MACs, the distance
// the stage's output may lie below its input (stage_overlap's rule: the
// output written before a band below the first input row any op reads in it).
typedef struct {
    uint32_t cap[TFLM_PATCH_MAX_OPS];
    uint64_t macs, dist;
    bool empty; // an op's new rows read no row of its input
} band_plan_t;

// The maps a run reads and writes: the stage's input and output, each op's
// buffer in the patch buffer.
typedef struct {
    tflm_eval_t *e;
    void **ins, **outs;
    const uint8_t *input;
    uint8_t *output;
    uint8_t *buf[TFLM_PATCH_MAX_OPS];
    void *acc; // a reducing last op's sums
} band_io_t;

// The last op's slice of its input, elements [k0, k1) at `src`, into the
// sums after the buffers.
static tflm_status_t run_slice(const band_io_t *x, const patch_op_t *op, const uint8_t *src, uint32_t k0,
    uint32_t k1) {
    op_io(x->e, x->ins, x->outs, op, src, x->output);
    return op->run.run_slice(x->e, x->acc, k0, k1, k1 == (uint32_t)op->in_h * (uint32_t)op->in_w
        * (uint32_t)op->in_d);
}

// Walks the bands: sizes them into `plan`, and with `x` runs them. Before
// op j runs in a band, its buffer drops the rows below the first one its
// readers read from then on (never read again: the windows move down),
// moving the rest to the buffer's start.
static tflm_status_t bands(const patch_op_t *ops, uint32_t n, uint32_t gh, band_plan_t *plan, const band_io_t *x) {
    band_state_t s;
    memset(&s, 0, sizeof(s));
    memset(plan, 0, sizeof(*plan));
    const size_t row_in = (size_t)ops[0].in_w * (size_t)ops[0].in_d * ops[0].elem;
    for (uint32_t py = 0; py < gh; ++py) {
        band_op_t w[TFLM_PATCH_MAX_OPS]; // (band_step sets ops 0 .. n - 1: no memset a band)
        band_step(ops, n, gh, py, &s, w);
        // The output written before an op runs in the band lies below every
        // input row it reads there: before the band's for the ops before the
        // last, the band's own too for the last one (which writes the output
        // while it reads, its rows in any order). (The plan's figures are
        // the build's: a run skips them.)
        const uint64_t written = x ? 0 : (uint64_t)s.done[n - 1] * out_row(&ops[n - 1]);
        for (uint32_t j = 0; j < n && !x; ++j) {
            const uint64_t safe = (uint64_t)w[j].a * row_in;
            const uint64_t ahead = j + 1 == n ? (uint64_t)w[j].r1 * out_row(&ops[j]) : written;
            const bool reads_input = ops[j].src[0] < 0 || (ops[j].n_maps > 1 && ops[j].src[1] < 0);
            if (reads_input && w[j].r0 < w[j].r1 && ahead > safe) {
                plan->dist = TFLM_MAX(plan->dist, ahead - safe);
            }
        }
        for (uint32_t j = 0; j < n; ++j) {
            const patch_op_t *d = &ops[j];
            const size_t row = out_row(d);
            // Before op j adds rows to its buffer, the buffer drops those
            // below the rows its readers read from now on (the windows
            // move down), once one of them reads in this band.
            int32_t keep = INT32_MAX;
            bool reads = false;
            for (uint32_t c = j + 1; c < n; ++c) {
                for (uint32_t k = 0; k < ops[c].n_maps; ++k) {
                    if (ops[c].src[k] == (int8_t)j) {
                        keep = TFLM_MIN(keep, band_next_read(&ops[c], &w[c], s.done[c]));
                        reads |= w[c].r0 < w[c].r1;
                    }
                }
            }
            if (reads) {
                if (x && keep < s.done[j]) {
                    patch_copy_down(x->buf[j], x->buf[j] + (size_t)(keep - s.kept[j]) * row,
                        (size_t)(s.done[j] - keep) * row);
                }
                s.kept[j] = (int16_t)keep;
                s.done[j] = TFLM_MAX(s.done[j], (int16_t)keep);
            }
            const band_op_t *b = &w[j];
            if (b->r0 == b->r1) {
                continue;
            }
            if (!x) {
                plan->empty |= b->a == b->b;
                plan->macs += (uint64_t)d->macs * (uint64_t)d->out_w * (uint64_t)(b->r1 - b->r0);
                if (j + 1 < n) {
                    plan->cap[j] = TFLM_MAX(plan->cap[j], (uint32_t)((size_t)(b->r1 - s.kept[j]) * row));
                }
            } else {
                // Its maps: the stage's input in place, or an earlier op's buffer.
                const uint8_t *map[2] = { NULL, NULL };
                for (uint32_t k = 0; k < d->n_maps; ++k) {
                    const int32_t src = d->src[k];
                    map[k] = src < 0 ? x->input + (size_t)b->a * row_in
                                     : x->buf[src] + (size_t)(b->a - s.kept[src]) * out_row(&ops[src]);
                }
                uint8_t *dst = j + 1 == n ? x->output + (size_t)b->r0 * row
                                          : x->buf[j] + (size_t)(b->r0 - s.kept[j]) * row;
                tflm_status_t st;
                if (d->slices) {
                    const uint32_t per_row = (uint32_t)(row / d->elem);
                    st = run_slice(x, d, map[0], (uint32_t)b->r0 * per_row, (uint32_t)b->r1 * per_row);
                } else if (d->span) {
                    st = run_span(x->e, x->ins, x->outs, d, map[0], map[1], dst,
                        (uint32_t)(row / d->elem) * (uint32_t)(b->r1 - b->r0));
                } else {
                    tflm_window_t win = { b->b - b->a, d->in_w, b->a - b->y0, d->pad_w, b->r1 - b->r0, d->out_w,
                        d->data };
                    st = run_op(x->e, x->ins, x->outs, d, &win, map[0], dst);
                }
                if (st) {
                    return st;
                }
            }
            s.done[j] = b->r1;
        }
    }
    return TFLM_OK;
}

// Patch mode's buffer: the smallest that holds every patch's layout; and
// the MACs of the patches. (Apart from tflm_patch_finish: their arrays stay
// off the frame under its other calls.)
static TFLM_NOINLINE tflm_status_t patches_size(tflm_interp_t *ip, const patch_stage_t *s, uint32_t *size,
    uint64_t *macs) {
    const tflm_patch_t *pt = &ip->patch;
    for (uint32_t py = 0; py < pt->grid_h; ++py) {
        for (uint32_t px = 0; px < pt->grid_w; ++px) {
            patch_rect_t out[TFLM_PATCH_MAX_OPS], win[TFLM_PATCH_MAX_OPS];
            patch_regions(s->ops, s->n, pt->grid_h, pt->grid_w, py, px, out, win);
            for (uint32_t j = 0; j < s->n; ++j) {
                const patch_op_t *d = &s->ops[j];
                patch_rect_t in = rect_clip(&win[j], d->in_h, d->in_w);
                if (rect_h(&out[j]) <= 0 || rect_w(&out[j]) <= 0 || rect_h(&in) <= 0 || rect_w(&in) <= 0) {
                    return bad_stage(ip, j, "has an empty patch");
                }
                uint64_t bytes = (uint64_t)rect_h(&in) * (uint64_t)rect_w(&in) * (uint64_t)d->in_d * d->elem;
                if (bytes > PATCH_MAX_BYTES) {
                    return bad_stage(ip, j, "has an oversized patch");
                }
                *macs += (uint64_t)d->macs * (uint64_t)rect_h(&out[j]) * (uint64_t)rect_w(&out[j]);
            }
            patch_sizes_t z;
            patch_sizes(s->ops, s->n, out, win, &z);
            *size = TFLM_MAX(*size, patch_smallest(s->n, &z));
        }
    }
    return TFLM_OK;
}

// Rows mode's buffers (each op's kept and new rows, one after another), the
// MACs and the distance of the stage's output below its input.
static TFLM_NOINLINE tflm_status_t bands_size(tflm_interp_t *ip, const patch_stage_t *s, uint32_t *size,
    uint64_t *macs, uint64_t *dist) {
    for (uint32_t j = 0; j < s->n; ++j) {
        const patch_op_t *d = &s->ops[j];
        if (d->in_h > TFLM_PATCH_MAX_ROWS || d->out_h > TFLM_PATCH_MAX_ROWS
            || (d->f_h - 1) * d->dil_h + 1 > TFLM_PATCH_MAX_ROWS) {
            return bad_stage(ip, j, "has maps or windows too tall for bands of rows");
        }
    }
    band_plan_t plan;
    bands(s->ops, s->n, ip->patch.grid_h, &plan, NULL);
    if (plan.empty) {
        return bad_stage(ip, 0, "has an empty patch");
    }
    uint64_t total = 0;
    for (uint32_t j = 0; j < s->n; ++j) {
        if (total > (uint64_t)UINT16_MAX * TFLM_ALIGN) {
            return bad_stage(ip, j, "needs band buffers of more than 1 MB");
        }
        ip->patch.band_at[j] = (uint16_t)(total / TFLM_ALIGN);
        const patch_op_t *d = &s->ops[j];
        total += j + 1 < s->n ? tflm_align_up(plan.cap[j], TFLM_ALIGN)
            : d->slices ? tflm_align_up(slice_acc_bytes(d), TFLM_ALIGN) : 0;
    }
    *size = (uint32_t)TFLM_MIN(total, (uint64_t)UINT32_MAX);
    *macs = plan.macs;
    *dist = plan.dist;
    return TFLM_OK;
}

// Where keep mode's buffers lie in the patch buffer: map j's row cache
// (kr[j] rows of the whole map, row r at r % kr[j]) and column cache (the
// window's rows of kc[j] columns, column c at c % kc[j]) for j >= 1, the
// tile (an op's window) and the new part of an op's output.
typedef struct {
    uint16_t rc[TFLM_PATCH_MAX_OPS], cc[TFLM_PATCH_MAX_OPS]; // in TFLM_ALIGN units (within 1 MB)
    int16_t kr[TFLM_PATCH_MAX_OPS], kc[TFLM_PATCH_MAX_OPS];
    uint32_t tile, fresh, total;
    uint64_t macs;
    bool empty; // an op has new outputs and an empty window
} keep_layout_t;

static inline uint32_t in_pixel(const patch_op_t *d) {
    return (uint32_t)d->in_d * d->elem;
}

// Walks the rows and the columns of patches (each axis once: they are
// separable) to lay out the buffers; false when they are too big.
static bool keep_layout(const patch_op_t *ops, uint32_t n, uint32_t gh, uint32_t gw, keep_layout_t *k) {
    int32_t tile[2][TFLM_PATCH_MAX_OPS], fresh[2][TFLM_PATCH_MAX_OPS], sum[2][TFLM_PATCH_MAX_OPS];
    memset(k, 0, sizeof(*k));
    memset(tile, 0, sizeof(tile));
    memset(fresh, 0, sizeof(fresh));
    memset(sum, 0, sizeof(sum));
    for (uint32_t ax = 0; ax < 2; ++ax) {
        int16_t *kept = ax ? k->kc : k->kr, ends[TFLM_PATCH_MAX_OPS] = { 0 };
        for (uint32_t p = 0; p < (ax ? gw : gh); ++p) {
            keep_axis_t x;
            keep_axis(ops, n, ax != 0, ax ? gw : gh, (int32_t)p, ends, &x);
            for (uint32_t j = 0; j < n; ++j) {
                const int32_t news = x.n1[j] - x.n0[j];
                if (news == 0) {
                    continue;
                }
                k->empty |= x.t0[j] == x.t1[j];
                tile[ax][j] = TFLM_MAX(tile[ax][j], x.t1[j] - x.t0[j]);
                fresh[ax][j] = TFLM_MAX(fresh[ax][j], news);
                sum[ax][j] += news;
                if (j > 0) {
                    kept[j] = (int16_t)TFLM_MAX(kept[j], TFLM_MIN(x.f[j], x.t1[j]) - x.t0[j]);
                }
            }
        }
    }
    uint64_t at = 0, most_tile = 0, most_fresh = 0;
    for (uint32_t j = 0; j < n; ++j) {
        const patch_op_t *d = &ops[j];
        const uint64_t t = (uint64_t)tile[0][j] * (uint64_t)tile[1][j] * in_pixel(d);
        const uint64_t f = (uint64_t)fresh[0][j] * (uint64_t)fresh[1][j] * d->out_d * d->elem;
        most_tile = TFLM_MAX(most_tile, t);
        most_fresh = TFLM_MAX(most_fresh, f);
        k->macs += (uint64_t)d->macs * (uint64_t)sum[0][j] * (uint64_t)sum[1][j];
        if (j > 0) {
            k->rc[j] = (uint16_t)(at / TFLM_ALIGN);
            at = tflm_align_up(at + (uint64_t)k->kr[j] * (uint64_t)d->in_w * in_pixel(d), TFLM_ALIGN);
            k->cc[j] = (uint16_t)(at / TFLM_ALIGN);
            at = tflm_align_up(at + (uint64_t)tile[0][j] * (uint64_t)k->kc[j] * in_pixel(d), TFLM_ALIGN);
        }
        if (t > PATCH_MAX_BYTES || f > PATCH_MAX_BYTES || at > (uint64_t)UINT16_MAX * TFLM_ALIGN) {
            return false;
        }
    }
    k->tile = (uint32_t)at;
    k->fresh = (uint32_t)tflm_align_up(at + most_tile, TFLM_ALIGN);
    k->total = (uint32_t)(k->fresh + most_fresh);
    return true;
}

// Keep mode's buffer and MACs.
static TFLM_NOINLINE tflm_status_t keep_size(tflm_interp_t *ip, const patch_stage_t *s, uint32_t *size,
    uint64_t *macs) {
    for (uint32_t j = 0; j < s->n; ++j) {
        const patch_op_t *d = &s->ops[j];
        const int32_t most = TFLM_MAX(TFLM_MAX(d->in_h, d->in_w), TFLM_MAX(d->out_h, d->out_w));
        if (most > TFLM_PATCH_MAX_ROWS || (d->f_h - 1) * d->dil_h + 1 > TFLM_PATCH_MAX_ROWS
            || (d->f_w - 1) * d->dil_w + 1 > TFLM_PATCH_MAX_ROWS) {
            return bad_stage(ip, j, "has maps or windows too big for patches keeping their halos");
        }
    }
    keep_layout_t k;
    if (!keep_layout(s->ops, s->n, ip->patch.grid_h, ip->patch.grid_w, &k)) {
        return bad_stage(ip, 0, "has an oversized patch");
    }
    if (k.empty) {
        return bad_stage(ip, 0, "has an empty patch");
    }
    *size = k.total;
    *macs = k.macs;
    return TFLM_OK;
}

tflm_status_t tflm_patch_finish(tflm_interp_t *ip) {
    tflm_patch_t *pt = &ip->patch;
    patch_stage_t s;
    tflm_status_t st = stage_ops(ip, &s);
    if (st) {
        return st;
    }
    const patch_op_t *last = &s.ops[s.n - 1];
    if (pt->grid_h > last->out_h || pt->grid_w > last->out_w) {
        if (pt->mode == TFLM_PATCH_MODE_ROWS) {
            return tflm_error(&ip->err, TFLM_ERR_VALUE, "%s: %u bands over a %ux%u map", tflm_patch_source(pt),
                (unsigned)pt->grid_h, (unsigned)last->out_h, (unsigned)last->out_w);
        }
        return tflm_error(&ip->err, TFLM_ERR_VALUE, "%s: %ux%u patches over a %ux%u map", tflm_patch_source(pt),
            (unsigned)pt->grid_h, (unsigned)pt->grid_w, (unsigned)last->out_h, (unsigned)last->out_w);
    }
    // Weights are constants, and each op writes a tensor of its own (not the
    // stage's input, not another op's output), so unplanning the
    // intermediate maps leaves everything the patches read or write in place.
    uint16_t input = tflm_interp_io(ip, tflm_interp_node(ip, s.base)->io)[0];
    for (uint32_t j = 0; j < s.n; ++j) {
        const tflm_node_rec_t *nr = tflm_interp_node(ip, s.base + j);
        const uint16_t *io = tflm_interp_io(ip, nr->io);
        for (uint32_t k = s.ops[j].n_maps; k < nr->n_inputs; ++k) {
            if (io[k] != TFLM_NO_INDEX && tflm_interp_tensor(ip, io[k])->where != TFLM_AT_MODEL) {
                return bad_stage(ip, j, "has weights that are not constants");
            }
        }
        uint16_t t = io[nr->n_inputs];
        bool reused = t == input;
        for (uint32_t i = 0; i < j && !reused; ++i) {
            const tflm_node_rec_t *ni = tflm_interp_node(ip, s.base + i);
            reused = tflm_interp_io(ip, ni->io)[ni->n_inputs] == t;
        }
        if (reused) {
            return bad_stage(ip, j, "writes a tensor the stage already uses");
        }
    }
    // Intermediate maps are the stage's own: not read elsewhere, planned
    // buffers that the patches replace.
    for (uint32_t j = 0; j + 1 < s.n; ++j) {
        const tflm_node_rec_t *nr = tflm_interp_node(ip, s.base + j);
        uint16_t t = tflm_interp_io(ip, nr->io)[nr->n_inputs];
        const tflm_tensor_rec_t *r = tflm_interp_tensor(ip, t);
        if (r->where != TFLM_AT_HEAD || used_outside(ip, t)) {
            return bad_stage(ip, j, "has an output used outside the stage");
        }
    }
    // The patch buffer: the smallest that holds every patch's layout.
    uint32_t size = 0;
    uint64_t macs = 0, whole = 0;
    for (uint32_t j = 0; j < s.n; ++j) {
        const patch_op_t *d = &s.ops[j];
        whole += (uint64_t)d->macs * (uint64_t)d->out_h * (uint64_t)d->out_w;
    }
    uint64_t dist = 0;
    st = pt->mode == TFLM_PATCH_MODE_ROWS ? bands_size(ip, &s, &size, &macs, &dist)
        : pt->mode == TFLM_PATCH_MODE_KEEP ? keep_size(ip, &s, &size, &macs) : patches_size(ip, &s, &size, &macs);
    if (st) {
        return st;
    }
    const tflm_node_rec_t *end = tflm_interp_node(ip, s.base + s.n - 1);
    if (size > TFLM_MAX_TENSOR_BYTES) {
        return bad_stage(ip, 0, "has an oversized patch");
    }
    *tflm_interp_tensor_mut(ip, pt->scratch) = (tflm_tensor_rec_t){ .bytes = size, .type = TFLM_INT8,
        .where = size ? TFLM_AT_HEAD : TFLM_AT_NONE };
    for (uint32_t j = 0; j + 1 < s.n; ++j) {
        const tflm_node_rec_t *nr = tflm_interp_node(ip, s.base + j);
        const uint16_t *io = tflm_interp_io(ip, nr->io);
        tflm_interp_tensor_mut(ip, io[nr->n_inputs])->where = TFLM_AT_NONE; // in the head: checked above
    }
    pt->input = input;
    pt->overlaps = stage_overlap(ip, s.ops, s.n, input, tflm_interp_io(ip, end->io)[end->n_inputs],
        pt->mode == TFLM_PATCH_MODE_ROWS ? &dist : NULL, &pt->overlap);
    pt->macs = macs;
    pt->whole_macs = whole;
    return TFLM_OK;
}

// Copies the part of window `win` inside a map (h x w x c elements of
// `elem` bytes, at `map`) to `dst`, rows of that part's width.
static void load_window(const uint8_t *map, const patch_op_t *op, const patch_rect_t *win, uint8_t *dst) {
    patch_rect_t in = rect_clip(win, op->in_h, op->in_w);
    size_t pixel = (size_t)op->in_d * op->elem, row = (size_t)rect_w(&in) * pixel;
    if (rect_w(&in) == op->in_w) {
        // Whole rows: one run.
        patch_copy_row(dst, map + (size_t)in.r0 * row, (size_t)rect_h(&in) * row);
        return;
    }
    for (int32_t r = in.r0; r < in.r1; ++r) {
        patch_copy_row(dst + (size_t)(r - in.r0) * row, map + ((size_t)r * (size_t)op->in_w + (size_t)in.c0) * pixel,
            row);
    }
}

// Runs one op over region `out` of its output. Its input is the part of
// window `win` inside the map, at `src`; the taps outside it are padding,
// which the kernel skips as it does at the map's edges. The output goes to
// `dst`, rows dst_w pixels apart, its first pixel (out's top left) at `dst`.
// `e` is the stage's: its data, its inputs `ins` and its output `outs`,
// set here.
static tflm_status_t run_region(tflm_eval_t *e, void **ins, void **outs, const patch_op_t *op,
    const patch_rect_t *out, const patch_rect_t *win, const uint8_t *src, uint8_t *dst, int32_t dst_w) {
    patch_rect_t in = rect_clip(win, op->in_h, op->in_w);
    tflm_window_t w = { rect_h(&in), rect_w(&in), in.r0 - win->r0, in.c0 - win->c0, rect_h(out), rect_w(out),
        op->data };
    if (dst_w == w.out_w) {
        // Contiguous rows: the whole region in one call.
        return run_op(e, ins, outs, op, &w, src, dst);
    }
    // Row by row, each a one-row output of the input rows its window covers.
    int32_t eff_h = (op->f_h - 1) * op->dil_h + 1;
    size_t in_row = (size_t)rect_w(&in) * (size_t)op->in_d * op->elem;
    size_t out_row = (size_t)dst_w * (size_t)op->out_d * op->elem;
    const int32_t oh = w.out_h;
    w.out_h = 1;
    for (int32_t r = 0; r < oh; ++r) {
        int32_t y0 = win->r0 + r * op->stride_h;
        int32_t a = TFLM_MIN(TFLM_MAX(y0, in.r0), in.r1), b = TFLM_MAX(TFLM_MIN(y0 + eff_h, in.r1), a);
        w.in_h = b - a;
        w.pad_h = a - y0;
        tflm_status_t st = run_op(e, ins, outs, op, &w, src + (size_t)(a - in.r0) * in_row, dst + (size_t)r * out_row);
        if (st) {
            return st;
        }
    }
    return TFLM_OK;
}

// Rows mode's run: the ops read the stage's input in place, each op j < n - 1
// writes its buffer, where bands_size laid it out.
static TFLM_NOINLINE tflm_status_t bands_run(tflm_interp_t *ip, const patch_stage_t *s, tflm_eval_t *re,
    void **ins, void **outs, const uint8_t *input, uint8_t *output, uint8_t *buf, uint32_t size) {
    const tflm_patch_t *pt = &ip->patch;
    band_plan_t plan;
    band_io_t x = { re, ins, outs, input, output, { NULL }, NULL };
    for (uint32_t j = 0; j + 1 < s->n; ++j) {
        x.buf[j] = buf + (size_t)pt->band_at[j] * TFLM_ALIGN;
    }
    const patch_op_t *last = &s->ops[s->n - 1];
    x.acc = buf + (size_t)pt->band_at[s->n - 1] * TFLM_ALIGN;
    if ((size_t)pt->band_at[s->n - 1] * TFLM_ALIGN + (last->slices ? slice_acc_bytes(last) : 0) > size) {
        return tflm_error(&ip->err, TFLM_ERR_RUNTIME, "internal error: the bands do not fit their buffer");
    }
    return bands(s->ops, s->n, pt->grid_h, &plan, &x);
}

// Patch mode's run: each op's output over its input where patch_place put
// it in the patch buffer.
static TFLM_NOINLINE tflm_status_t patches_run(tflm_interp_t *ip, const patch_stage_t *s, tflm_eval_t *re,
    void **ins, void **outs, const uint8_t *input, uint8_t *output, uint8_t *buf, uint32_t size) {
    const tflm_patch_t *pt = &ip->patch;
    const patch_op_t *last = &s->ops[s->n - 1];
    const size_t out_pixel = (size_t)last->out_d * last->elem;
    tflm_status_t st = TFLM_OK;
    for (uint32_t py = 0; py < pt->grid_h; ++py) {
        for (uint32_t px = 0; px < pt->grid_w; ++px) {
            patch_rect_t out[TFLM_PATCH_MAX_OPS], win[TFLM_PATCH_MAX_OPS];
            patch_regions(s->ops, s->n, pt->grid_h, pt->grid_w, py, px, out, win);
            patch_sizes_t z;
            uint32_t at[TFLM_PATCH_MAX_OPS];
            patch_sizes(s->ops, s->n, out, win, &z);
            if (!patch_at(pt, s->n, &z, size, at)) {
                return tflm_error(&ip->err, TFLM_ERR_RUNTIME, "internal error: a patch does not fit its buffer");
            }
            load_window(input, &s->ops[0], &win[0], buf + at[0]);
            for (uint32_t j = 0; j + 1 < s->n && st == TFLM_OK; ++j) {
                // Into the next op's input: its window inside the map is out[j].
                st = run_region(re, ins, outs, &s->ops[j], &out[j], &win[j], buf + at[j], buf + at[j + 1],
                    rect_w(&out[j]));
            }
            uint8_t *dst = output
                + ((size_t)out[s->n - 1].r0 * (size_t)last->out_w + (size_t)out[s->n - 1].c0) * out_pixel;
            if (st || (st = run_region(re, ins, outs, last, &out[s->n - 1], &win[s->n - 1], buf + at[s->n - 1], dst,
                           last->out_w))) {
                return st;
            }
        }
    }
    return TFLM_OK;
}

// Copies columns [c0, c1) of a map's pixels (`px` bytes each) between a
// row at `row` (column `at` first) and a ring of `k` columns (column c at
// c % k, `slot` the first's, the caller's division once for all rows):
// into the ring, or out of it. At most two runs: the ring wraps once.
static TFLM_ALWAYS_INLINE void ring_copy(uint8_t *ring, uint8_t *row, int32_t at, int32_t c0, int32_t c1, int32_t k,
    int32_t slot, size_t px, bool into) {
    while (c0 < c1) {
        const int32_t run = TFLM_MIN(c1 - c0, k - slot);
        uint8_t *r = ring + (size_t)slot * px, *m = row + (size_t)(c0 - at) * px;
        patch_copy_row(into ? r : m, into ? m : r, (size_t)run * px);
        c0 += run;
        slot = 0;
    }
}

// Keep mode: op j's window (rows r, columns c of the patch) into the tile:
// what earlier patches computed from the caches, the rest from the new part
// of op j - 1's output at `fresh`; then the caches take what the next row of
// patches and the next patch in the row will share of the new part.
static void keep_tile(const patch_op_t *d, const keep_layout_t *k, uint32_t j, const keep_axis_t *r,
    const keep_axis_t *c, uint8_t *buf, bool last_row, bool last_col) {
    const size_t px = in_pixel(d);
    const int32_t t0r = r->t0[j], t1r = r->t1[j], t0c = c->t0[j], t1c = c->t1[j];
    const int32_t ar = TFLM_MIN(TFLM_MAX(r->f[j], t0r), t1r), ac = TFLM_MIN(TFLM_MAX(c->f[j], t0c), t1c);
    const int32_t kr = k->kr[j], kc = k->kc[j];
    const size_t tile_row = (size_t)(t1c - t0c) * px, fresh_row = (size_t)(t1c - ac) * px;
    uint8_t *tile = buf + k->tile, *rc = buf + (size_t)k->rc[j] * TFLM_ALIGN, *cc = buf + (size_t)k->cc[j] * TFLM_ALIGN;
    const uint8_t *fresh = buf + k->fresh;
    const size_t map_row = (size_t)d->in_w * px;
    // The ring slots of the columns copied out of and into the column cache,
    // and the row cache's row of y (y % kr), kept as y steps.
    const int32_t c_in = TFLM_MAX(ac, t1c - kc);
    const int32_t out_slot = kc > 0 ? t0c % kc : 0, in_slot = kc > 0 ? c_in % kc : 0;
    int32_t ry = kr > 0 ? t0r % kr : 0;
    for (int32_t y = t0r; y < t1r; ++y, ry = ry + 1 == kr ? 0 : ry + 1) {
        uint8_t *row = tile + (size_t)(y - t0r) * tile_row;
        uint8_t *ring = cc + (size_t)(y - t0r) * (size_t)kc * px;
        if (ac > t0c) {
            ring_copy(ring, row, t0c, t0c, ac, kc, out_slot, px, false);
        }
        if (fresh_row == 0) {
            continue;
        }
        uint8_t *rest = row + (size_t)(ac - t0c) * px;
        if (y < ar) {
            patch_copy_row(rest, rc + (size_t)ry * map_row + (size_t)ac * px, fresh_row);
        } else {
            patch_copy_row(rest, fresh + (size_t)(y - ar) * fresh_row, fresh_row);
            if (!last_row && y >= t1r - kr) {
                patch_copy_row(rc + (size_t)ry * map_row + (size_t)ac * px, rest, fresh_row);
            }
        }
        if (!last_col && kc > 0) {
            ring_copy(ring, row, t0c, c_in, t1c, kc, in_slot, px, true);
        }
    }
}

// Keep mode's run: patch by patch, each op over its tile into the new part
// of its output (the last op's into the stage's output).
static TFLM_NOINLINE tflm_status_t keep_run(tflm_interp_t *ip, const patch_stage_t *s, tflm_eval_t *re,
    void **ins, void **outs, const uint8_t *input, uint8_t *output, uint8_t *buf, uint32_t size) {
    const tflm_patch_t *pt = &ip->patch;
    const uint32_t n = s->n;
    const patch_op_t *last = &s->ops[n - 1];
    const size_t out_pixel = (size_t)last->out_d * last->elem;
    keep_layout_t k;
    if (!keep_layout(s->ops, n, pt->grid_h, pt->grid_w, &k) || k.total > size) {
        return tflm_error(&ip->err, TFLM_ERR_RUNTIME, "internal error: the patches do not fit their buffer");
    }
    int16_t row_ends[TFLM_PATCH_MAX_OPS] = { 0 };
    for (uint32_t py = 0; py < pt->grid_h; ++py) {
        keep_axis_t r;
        keep_axis(s->ops, n, false, pt->grid_h, (int32_t)py, row_ends, &r);
        int16_t col_ends[TFLM_PATCH_MAX_OPS] = { 0 };
        for (uint32_t px = 0; px < pt->grid_w; ++px) {
            keep_axis_t c;
            keep_axis(s->ops, n, true, pt->grid_w, (int32_t)px, col_ends, &c);
            for (uint32_t j = 0; j < n; ++j) {
                const patch_op_t *d = &s->ops[j];
                const int32_t oh = r.n1[j] - r.n0[j], ow = c.n1[j] - c.n0[j];
                if (oh == 0 || ow == 0) {
                    continue; // nothing new: its readers' windows are in the caches
                }
                // Its new outputs and their window (reaching outside the map
                // where it pads; inside it, the tile), the last op's into the
                // stage's output (row by row unless its rows are whole).
                const patch_rect_t out = { r.n0[j], r.n1[j], c.n0[j], c.n1[j] };
                const patch_rect_t win = { out.r0 * d->stride_h - d->pad_h, r.t1[j], out.c0 * d->stride_w - d->pad_w,
                    c.t1[j] };
                if (j == 0) {
                    load_window(input, d, &win, buf + k.tile);
                } else {
                    keep_tile(d, &k, j, &r, &c, buf, py + 1 == pt->grid_h, px + 1 == pt->grid_w);
                }
                const bool last_op = j + 1 == n;
                uint8_t *dst = last_op ? output + ((size_t)out.r0 * (size_t)last->out_w + (size_t)out.c0) * out_pixel
                                       : buf + k.fresh;
                tflm_status_t st = run_region(re, ins, outs, d, &out, &win, buf + k.tile, dst,
                    last_op ? last->out_w : rect_w(&out));
                if (st) {
                    return st;
                }
            }
        }
    }
    return TFLM_OK;
}

tflm_status_t tflm_patch_run(tflm_interp_t *ip, const tflm_eval_t *e) {
    const tflm_patch_t *pt = &ip->patch;
    patch_stage_t s;
    tflm_status_t st = stage_ops(ip, &s);
    if (st) {
        return st;
    }
    const tflm_node_rec_t *first = tflm_interp_node(ip, s.base);
    const uint8_t *input = tflm_interp_tensor_data(ip,
        tflm_interp_tensor(ip, tflm_interp_io(ip, first->io)[0]));
    uint8_t *output = e->out[0];
    const tflm_tensor_rec_t *patch = tflm_interp_tensor(ip, pt->scratch);
    uint8_t *buf = tflm_interp_tensor_data(ip, patch);
    const uint32_t size = patch->bytes;
    // Each op runs through its kernel's hooks, given its own data (op_io).
    void *ins[PATCH_MAX_INPUTS], *outs[1];
    tflm_eval_t re = {
        .in = ins, .out = outs, .n_out = 1, .ip = ip, .err = &ip->err, .call = TFLM_EVAL_NO_CALL,
    };
    if (pt->mode == TFLM_PATCH_MODE_ROWS) {
        return bands_run(ip, &s, &re, ins, outs, input, output, buf, size);
    }
    if (pt->mode == TFLM_PATCH_MODE_KEEP) {
        return keep_run(ip, &s, &re, ins, outs, input, output, buf, size);
    }
    return patches_run(ip, &s, &re, ins, outs, input, output, buf, size);
}

#endif // TFLM_PATCH
