// Offline memory plans (see plan.h).
#include "plan.h"
#include "arena.h"
#include "kernel.h"
#include "ops.h"
#include "overlap.h"
#include "planner.h"

// Offsets beyond this cannot be in any arena (tflm_arena_t sizes are 31-bit).
#define PLAN_MAX_END (TFLM_ARENA_DRY_SIZE)

// TFLM's metadata: version, subgraph count (both ignored by TFLM), tensor
// count, offsets. Ours for scratch buffers: version, count, offsets.
static tflm_status_t metadata_words(tflm_model_t *m, const char *name, uint32_t header, uint32_t count_word,
    const uint8_t **words, uint32_t *count, bool *found, tflm_error_t *err) {
    *found = false;
    uint32_t buffer = tflm_model_metadata(m, name);
    if (buffer == UINT32_MAX) {
        return tflm_model_check(m, err);
    }
    uint32_t pos = 0, len = 0;
    if (!tflm_model_buffer(m, buffer, &pos, &len)) {
        return tflm_model_check(m, err);
    }
    if (len < 4 * header) {
        return tflm_error(err, TFLM_ERR_VALUE, "%s metadata has %u bytes, too few for its header", name, (unsigned)len);
    }
    const uint8_t *p = m->fb.buf + pos;
    int32_t version = tflm_rd_i32(p);
    uint32_t n = tflm_rd_u32(p + 4 * count_word);
    if (version < 0 || version > TFLM_PLAN_VERSION) {
        return tflm_error(err, TFLM_ERR_VALUE, "%s metadata has version %d; this runtime reads versions 0 and 1",
            name, (int)version);
    }
    if (n > (len - 4 * header) / 4) {
        return tflm_error(err, TFLM_ERR_VALUE, "%s metadata announces %u offsets but holds %u",
            name, (unsigned)n, (unsigned)((len - 4 * header) / 4));
    }
    *words = p + 4 * header;
    *count = n;
    *found = true;
    return TFLM_OK;
}

tflm_status_t tflm_plan_from_model(tflm_model_t *m, tflm_plan_t *plan, bool *found, tflm_error_t *err) {
    memset(plan, 0, sizeof(*plan));
    tflm_status_t st = metadata_words(m, TFLM_PLAN_METADATA, 3, 2, &plan->tensors, &plan->n_tensors, found, err);
    if (st != TFLM_OK || !*found) {
        return st;
    }
    bool scratch;
    st = metadata_words(m, TFLM_PLAN_SCRATCH_METADATA, 2, 1, &plan->scratch, &plan->n_scratch, &scratch, err);
    if (!scratch) {
        plan->scratch = NULL;
    }
    return st;
}

tflm_status_t tflm_plan_from_words(const uint8_t *buf, size_t len, tflm_plan_t *plan, tflm_error_t *err) {
    memset(plan, 0, sizeof(*plan));
    if (len < 16 || tflm_rd_u32(buf) != TFLM_PLAN_MAGIC) {
        return tflm_error(err, TFLM_ERR_VALUE, "not a memory plan (it must start with \"TFPL\")");
    }
    int32_t version = tflm_rd_i32(buf + 4);
    if (version != TFLM_PLAN_VERSION) {
        return tflm_error(err, TFLM_ERR_VALUE, "memory plan version %d; this runtime reads version %d",
            (int)version, TFLM_PLAN_VERSION);
    }
    uint32_t n_tensors = tflm_rd_u32(buf + 8);
    int32_t n_scratch = tflm_rd_i32(buf + 12);
    uint64_t words = (uint64_t)n_tensors + (n_scratch > 0 ? (uint32_t)n_scratch : 0u);
    if (n_scratch < -1 || words > (len - 16) / 4) {
        return tflm_error(err, TFLM_ERR_VALUE, "memory plan is truncated: %u bytes", (unsigned)len);
    }
    plan->tensors = buf + 16;
    plan->n_tensors = n_tensors;
    if (n_scratch >= 0) {
        plan->scratch = buf + 16 + 4 * n_tensors;
        plan->n_scratch = (uint32_t)n_scratch;
    }
    return TFLM_OK;
}

// The model tensor record i stands for, in messages.
static uint32_t tensor_number(const tflm_plan_view_t *v, uint32_t i) {
    return tflm_rec_tensor(&v->map, i);
}

// Describes record i for an error message: "tensor 12" or "scratch buffer 1".
static const char *rec_kind(const tflm_plan_view_t *v, uint32_t i, uint32_t *number) {
    if (i >= v->n_model_tensors) {
        *number = i - v->n_model_tensors;
        return "scratch buffer";
    }
    *number = tensor_number(v, i);
    return "tensor";
}

// Offsets of `count` model tensors (tensors) or scratch buffers from the
// plan's words: each one's record is the map's, or the first + k-th.
static tflm_status_t apply_offsets(tflm_plan_view_t *v, const uint8_t *words, uint32_t count, bool tensors) {
    for (uint32_t k = 0; k < count; ++k) {
        int32_t off = tflm_rd_i32(words + 4 * k);
        uint32_t rec = tensors ? tflm_rec_of(&v->map, k) : v->n_model_tensors + k;
        const char *kind = tensors ? "tensor" : "scratch buffer";
        uint32_t n = k;
        if (off == TFLM_PLAN_ONLINE) {
            continue;
        }
        if (off < 0) {
            return tflm_error(v->err, TFLM_ERR_VALUE, "offline plan: %s %u has offset %d", kind, (unsigned)n, (int)off);
        }
        if (rec >= v->n_recs) {
            continue; // a constant's record, in the model
        }
        tflm_plan_rec_t *r = &v->recs[rec];
        if (r->where == TFLM_AT_EXTERNAL) {
            return tflm_error(v->err, TFLM_ERR_VALUE,
                "tensor %u is pre-allocated, but the offline plan places it at offset %d", (unsigned)n, (int)off);
        }
        // Offsets of tensors that need no arena memory (constants, variables,
        // empty tensors) are ignored, as TFLM ignores them.
        if (r->where != TFLM_AT_HEAD) {
            continue;
        }
        r->data = (uint32_t)off;
        r->flags |= TFLM_PLAN_FIXED;
    }
    return TFLM_OK;
}

tflm_status_t tflm_plan_apply(tflm_plan_view_t *v, const tflm_plan_t *plan) {
    uint32_t n_scratch = v->n_recs - v->n_model_tensors;
    if (plan->n_tensors != v->map.n_model) {
        return tflm_error(v->err, TFLM_ERR_VALUE, "offline plan has %u tensor offsets, the model has %u tensors",
            (unsigned)plan->n_tensors, (unsigned)v->map.n_model);
    }
    if (plan->scratch && plan->n_scratch != n_scratch) {
        return tflm_error(v->err, TFLM_ERR_VALUE,
            "offline plan has %u scratch buffer offsets, the kernels ask for %u scratch buffers",
            (unsigned)plan->n_scratch, (unsigned)n_scratch);
    }
    tflm_status_t st = apply_offsets(v, plan->tensors, plan->n_tensors, true);
    if (st == TFLM_OK && plan->scratch) {
        st = apply_offsets(v, plan->scratch, plan->n_scratch, false);
    }
    return st;
}

// -- checking a planned head -------------------------------------------------

// Index lists hold constants' records too (in the model, never in the head).
static bool in_head(const tflm_plan_view_t *v, uint32_t i) {
    return i < v->n_recs && v->recs[i].where == TFLM_AT_HEAD;
}

// The alias source of record y: the input whose bytes the operator producing
// y (as its output 0) writes y over, with the kind of alias. Records at
// different offsets or of different sizes are no alias.
static tflm_alias_t alias_parent(const tflm_plan_view_t *v, uint32_t y, uint32_t *x) {
    const tflm_plan_rec_t *ry = &v->recs[y];
    if (y >= v->n_model_tensors || ry->where != TFLM_AT_HEAD) {
        return TFLM_ALIAS_NONE;
    }
    for (uint32_t n = 0; n < v->n_nodes; ++n) {
        const tflm_node_rec_t *nr = &v->nodes[n];
        const uint16_t *io = (const uint16_t *)(v->base + nr->io);
        if (nr->n_outputs == 0 || io[nr->n_inputs] != y) {
            continue;
        }
        const tflm_kernel_t *kernel = tflm_kernel_of_id(nr->kernel);
        tflm_alias_t kind = kernel == NULL ? TFLM_ALIAS_NONE : (tflm_alias_t)kernel->alias;
        uint32_t n_in = kind == TFLM_ALIAS_VIEW ? TFLM_MIN(1u, nr->n_inputs) : kind == TFLM_ALIAS_NONE ? 0 : nr->n_inputs;
        for (uint32_t k = 0; k < n_in; ++k) {
            if (io[k] == TFLM_NO_INDEX || io[k] == y || !in_head(v, io[k])) {
                continue;
            }
            const tflm_plan_rec_t *rx = &v->recs[io[k]];
            if (rx->data == ry->data && rx->bytes == ry->bytes && tflm_type_size(v->tensors[io[k]].type) == tflm_type_size(v->tensors[y].type)) {
                *x = io[k];
                return kind;
            }
        }
        return TFLM_ALIAS_NONE;
    }
    return TFLM_ALIAS_NONE;
}

// Follows alias sources up from record i: through views only (the records
// holding the same values), or through every alias (the records sharing
// the same bytes by design).
static uint32_t alias_root(const tflm_plan_view_t *v, uint32_t i, bool views_only) {
    for (uint32_t steps = 0; steps < v->n_model_tensors; ++steps) {
        uint32_t x;
        tflm_alias_t kind = alias_parent(v, i, &x);
        if (kind == TFLM_ALIAS_NONE || (views_only && kind != TFLM_ALIAS_VIEW)) {
            break;
        }
        i = x;
    }
    return i;
}

static tflm_status_t check_placement(tflm_plan_view_t *v, uint32_t i) {
    const tflm_plan_rec_t *r = &v->recs[i];
    uint32_t n;
    const char *kind = rec_kind(v, i, &n);
    // Scratch buffers hold any type; tensors need their element alignment.
    uint32_t align = i >= v->n_model_tensors ? TFLM_ALIGN : (uint32_t)TFLM_MIN(tflm_type_size(v->tensors[i].type), 8u);
    if (align > 1 && r->data % align != 0) {
        return tflm_error(v->err, TFLM_ERR_VALUE, "offline plan: %s %u at offset %u is not %u-byte aligned",
            kind, (unsigned)n, (unsigned)r->data, (unsigned)align);
    }
    if (r->data > PLAN_MAX_END - tflm_planned_size(r)) {
        return tflm_error(v->err, TFLM_ERR_VALUE, "offline plan: %s %u at offset %u is beyond any arena",
            kind, (unsigned)n, (unsigned)r->data);
    }
    return TFLM_OK;
}

// Records i and j share bytes while both are alive: fine only when they are
// the same bytes by alias.
static tflm_status_t check_pair(tflm_plan_view_t *v, uint32_t i, uint32_t j) {
    const tflm_plan_rec_t *a = &v->recs[i], *b = &v->recs[j];
    if (a->data == b->data && tflm_planned_size(a) == tflm_planned_size(b)
        && alias_root(v, i, false) == alias_root(v, j, false)) {
        return TFLM_OK;
    }
    uint32_t ni, nj;
    const char *ki = rec_kind(v, i, &ni), *kj = rec_kind(v, j, &nj);
    uint32_t lo = TFLM_MAX(a->data, b->data);
    uint32_t hi = TFLM_MIN(a->data + tflm_planned_size(a), b->data + tflm_planned_size(b));
    // An op's output over the input that dies there: as far as its kernel allows.
    for (int k = 0; k < 2; ++k) {
        uint32_t y = k ? j : i, x = k ? i : j;
        tflm_overlap_t o;
        if (tflm_overlap_distance(v, y, x, &o)) {
            const tflm_plan_rec_t *ry = &v->recs[y], *rx = &v->recs[x];
            if (tflm_overlap_ok(ry, rx, &o)) {
                return TFLM_OK;
            }
            if (o.up != TFLM_OVERLAP_NO_UP) {
                // Both ways, in fewer words (messages hold 200 bytes).
                return tflm_error(v->err, TFLM_ERR_VALUE,
                    "offline plan: tensor %u overlaps tensor %u (the input that dies at the operator writing it) "
                    "unsafely: it may start at offset %d or lower, or %u or higher, not at %u",
                    (unsigned)tensor_number(v, y), (unsigned)tensor_number(v, x),
                    (int)((int64_t)rx->data - o.below), (unsigned)(rx->data + o.up), (unsigned)ry->data);
            }
            return tflm_error(v->err, TFLM_ERR_VALUE,
                "offline plan: tensor %u overlaps tensor %u, the input that dies at the operator writing it, "
                "unsafely: it must start %u bytes or more below it (at offset %d or lower), it starts at %u",
                (unsigned)tensor_number(v, y), (unsigned)tensor_number(v, x), (unsigned)o.below,
                (int)((int64_t)rx->data - o.below), (unsigned)ry->data);
        }
    }
    return tflm_error(v->err, TFLM_ERR_VALUE,
        "offline plan: %s %u and %s %u share bytes %u-%u while both are alive (scope %d)",
        ki, (unsigned)ni, kj, (unsigned)nj, (unsigned)lo, (unsigned)(hi - 1), (int)TFLM_MAX(a->first, b->first));
}

// An output computed in place over input x overwrites x's values: no record
// holding them (x and its views) may be read after that operator, nor be a
// subgraph's output (read after the subgraph's last operator).
static tflm_status_t check_in_place(tflm_plan_view_t *v, uint32_t y, uint32_t x) {
    const tflm_plan_rec_t *ry = &v->recs[y];
    const tflm_plan_rec_t *rx = &v->recs[x];
    uint32_t values = alias_root(v, x, true);
    for (uint32_t m = 0; m < v->n_model_tensors; ++m) {
        const tflm_plan_rec_t *rm = &v->recs[m];
        if (m == y || rm->where != TFLM_AT_HEAD || rm->data != rx->data || alias_root(v, m, true) != values) {
            continue;
        }
        if (rm->last > ry->first) {
            return tflm_error(v->err, TFLM_ERR_VALUE,
                "offline plan: tensor %u is computed in place over tensor %u, but tensor %u is read after that (scope %d)",
                (unsigned)tensor_number(v, y), (unsigned)tensor_number(v, x), (unsigned)tensor_number(v, m),
                (int)rm->last);
        }
        if (tflm_plan_is_output(v, m)) {
            return tflm_error(v->err, TFLM_ERR_VALUE,
                "offline plan: tensor %u is computed in place over tensor %u, but tensor %u is an output",
                (unsigned)tensor_number(v, y), (unsigned)tensor_number(v, x), (unsigned)tensor_number(v, m));
        }
    }
    return TFLM_OK;
}

tflm_status_t tflm_plan_check(tflm_plan_view_t *v) {
    tflm_status_t st;
    for (uint32_t i = 0; i < v->n_recs; ++i) {
        if (in_head(v, i) && (st = check_placement(v, i))) {
            return st;
        }
    }
    for (uint32_t i = 0; i < v->n_recs; ++i) {
        if (!in_head(v, i)) {
            continue;
        }
        const tflm_plan_rec_t *a = &v->recs[i];
        for (uint32_t j = i + 1; j < v->n_recs; ++j) {
            const tflm_plan_rec_t *b = &v->recs[j];
            if (b->where != TFLM_AT_HEAD || !tflm_lifetimes_overlap(a, b)
                || a->data >= b->data + tflm_planned_size(b) || b->data >= a->data + tflm_planned_size(a)) {
                continue;
            }
            if ((st = check_pair(v, i, j))) {
                return st;
            }
        }
    }
    for (uint32_t y = 0; y < v->n_model_tensors; ++y) {
        uint32_t x;
        if (alias_parent(v, y, &x) == TFLM_ALIAS_IN_PLACE && (st = check_in_place(v, y, x))) {
            return st;
        }
    }
    return TFLM_OK;
}
