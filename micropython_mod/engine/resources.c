// Resource variables: the state of models that use VAR_HANDLE,
// ASSIGN_VARIABLE and READ_VARIABLE.
//
// A resource is a (container, shared_name) pair of VAR_HANDLE ops; ids are
// given in the order the ops appear (subgraph by subgraph), as TFLM does.
// A resource's buffer takes the size of the value of the first
// ASSIGN_VARIABLE that writes it and starts filled with that value's zero
// point, as in TFLM. All of this comes from scans of the model (no memory),
// so the dry and the real allocation pass agree; the interpreter keeps the
// records and buffers in the tail.
#include "interpreter.h"
#include "ops.h"
#include "schema.h"


typedef struct {
    uint32_t subgraph;
    uint32_t op;
    tflm_fb_vec_t container;
    tflm_fb_vec_t name;
} tflm_var_handle_t;

// The k-th VAR_HANDLE op of the model, in order; false when there are fewer.
static bool var_handle(tflm_model_t *m, uint32_t k, tflm_var_handle_t *vh) {
    for (uint32_t s = 0; s < m->subgraphs.count; ++s) {
        tflm_subgraph_t sg;
        if (!tflm_model_subgraph(m, s, &sg)) {
            return false;
        }
        for (uint32_t i = 0; i < sg.operators.count; ++i) {
            tflm_model_op_t op;
            if (!tflm_model_op(m, &sg, i, &op)) {
                return false;
            }
            if (op.builtin != TFLM_OP_VAR_HANDLE || k-- != 0) {
                continue;
            }
            vh->subgraph = s;
            vh->op = i;
            vh->container = tflm_fb_vector(&m->fb, tflm_model_options(&op, TFLM_OPT_VAR_HANDLE_CONTAINER),
                TFLM_OPT_SLOT(TFLM_OPT_VAR_HANDLE_CONTAINER), 1);
            vh->name = tflm_fb_vector(&m->fb, tflm_model_options(&op, TFLM_OPT_VAR_HANDLE_SHARED_NAME),
                TFLM_OPT_SLOT(TFLM_OPT_VAR_HANDLE_SHARED_NAME), 1);
            return !m->fb.bad;
        }
    }
    return false;
}

static bool same_names(const tflm_model_t *m, const tflm_var_handle_t *a, const tflm_var_handle_t *b) {
    return a->container.count == b->container.count && a->name.count == b->name.count
           && memcmp(m->fb.buf + a->container.pos, m->fb.buf + b->container.pos, a->container.count) == 0
           && memcmp(m->fb.buf + a->name.pos, m->fb.buf + b->name.pos, a->name.count) == 0;
}

// True when the k-th VAR_HANDLE is the first with its names.
static bool first_of_names(tflm_model_t *m, uint32_t k, const tflm_var_handle_t *vh) {
    for (uint32_t j = 0; j < k; ++j) {
        tflm_var_handle_t other;
        if (var_handle(m, j, &other) && same_names(m, &other, vh)) {
            return false;
        }
    }
    return true;
}

// Resource id of the k-th VAR_HANDLE: how many distinct names come before
// the first op with its names.
static int32_t id_of(tflm_model_t *m, uint32_t k) {
    tflm_var_handle_t target;
    if (!var_handle(m, k, &target)) {
        return -1;
    }
    int32_t distinct = 0;
    for (uint32_t q = 0; q <= k; ++q) {
        tflm_var_handle_t vh;
        if (!var_handle(m, q, &vh)) {
            return -1;
        }
        if (first_of_names(m, q, &vh)) {
            if (same_names(m, &vh, &target)) {
                return distinct;
            }
            distinct++;
        }
    }
    return -1;
}

tflm_status_t tflm_resource_count(tflm_model_t *m, uint32_t *count, tflm_error_t *err) {
    tflm_var_handle_t vh;
    uint32_t n = 0, distinct = 0;
    while (var_handle(m, n, &vh)) {
        if (++n > TFLM_MAX_VAR_HANDLES) {
            return tflm_error(err, TFLM_ERR_NOT_IMPLEMENTED, "more than %u VAR_HANDLE operators", TFLM_MAX_VAR_HANDLES);
        }
        distinct += first_of_names(m, n - 1, &vh);
    }
    *count = distinct;
    return tflm_model_check(m, err);
}

int32_t tflm_resource_of_var_handle(tflm_model_t *m, uint32_t subgraph, uint32_t op) {
    tflm_var_handle_t vh;
    for (uint32_t k = 0; var_handle(m, k, &vh); ++k) {
        if (vh.subgraph == subgraph && vh.op == op) {
            return id_of(m, k);
        }
    }
    return -1;
}

int32_t tflm_resource_of_tensor(tflm_model_t *m, uint32_t subgraph, int32_t tensor) {
    tflm_subgraph_t sg;
    tflm_var_handle_t vh;
    if (tensor < 0 || !tflm_model_subgraph(m, subgraph, &sg)) {
        return -1;
    }
    for (uint32_t k = 0; var_handle(m, k, &vh); ++k) {
        tflm_model_op_t op;
        if (vh.subgraph == subgraph && tflm_model_op(m, &sg, vh.op, &op) && op.outputs.count == 1
            && tflm_model_index(m, op.outputs, 0) == tensor) {
            return id_of(m, k);
        }
    }
    return -1;
}

bool tflm_resource_shape(tflm_model_t *m, int32_t id, uint32_t *bytes, uint8_t *fill) {
    *bytes = 0;
    *fill = 0;
    // The value of the first ASSIGN_VARIABLE that writes the resource.
    for (uint32_t s = 0; s < m->subgraphs.count; ++s) {
        tflm_subgraph_t sg;
        if (!tflm_model_subgraph(m, s, &sg)) {
            return false;
        }
        for (uint32_t i = 0; i < sg.operators.count; ++i) {
            tflm_model_op_t op;
            if (!tflm_model_op(m, &sg, i, &op)) {
                return false;
            }
            if (op.builtin != TFLM_OP_ASSIGN_VARIABLE || op.inputs.count != 2
                || tflm_resource_of_tensor(m, s, tflm_model_index(m, op.inputs, 0)) != id) {
                continue;
            }
            int32_t value = tflm_model_index(m, op.inputs, 1);
            tflm_model_tensor_t t;
            uint32_t elements;
            if (value < 0 || (uint32_t)value >= sg.tensors.count || !tflm_model_tensor(m, &sg, (uint32_t)value, &t)
                || !tflm_model_tensor_size(m, &t, &elements, bytes)) {
                return false;
            }
            // TFLM fills with the value's first zero point, cast to a byte.
            *fill = t.zero_point.count ? (uint8_t)tflm_fb_vec_i64(&m->fb, t.zero_point, 0) : 0;
            return true;
        }
    }
    return true;
}

void *tflm_resource_data(const tflm_interp_t *ip, int32_t id, uint32_t *bytes) {
    if (id < 0 || (uint32_t)id >= ip->n_resources) {
        return NULL;
    }
    const tflm_resource_rec_t *r = (const tflm_resource_rec_t *)tflm_arena_ptr(ip->arena, ip->resources_at) + id;
    if (r->bytes == 0) {
        return NULL;
    }
    *bytes = r->bytes;
    return tflm_arena_ptr(ip->arena, r->data);
}
