// VAR_HANDLE, ASSIGN_VARIABLE and READ_VARIABLE: resource variables, the
// state of stateful models. A VAR_HANDLE writes its resource's id into its
// output; ASSIGN_VARIABLE and READ_VARIABLE take that id as input 0 and copy
// into or out of the resource's buffer (the records: engine/resources.c).
#include "kernels/kernels.h"
#include "engine/interpreter.h"
#include "engine/ops.h"
#include "engine/schema.h"

#if TFLM_KERNEL_VAR_HANDLE || TFLM_KERNEL_ASSIGN_VARIABLE

// Which resources a model has: a resource is a (container, shared_name)
// pair of VAR_HANDLE ops; ids are given in the order the ops appear
// (subgraph by subgraph), as TFLM does. A resource's buffer takes the size
// of the value of the first ASSIGN_VARIABLE that writes it and starts
// filled with that value's zero point, as in TFLM. All of this comes from
// scans of the model (no memory), so the dry and the real allocation pass
// agree; the engine keeps the records and buffers in the tail
// (engine/resources.c).
#define MAX_VAR_HANDLES (32)

typedef struct {
    uint32_t subgraph;
    uint32_t op;
    tflm_fb_vec_t container;
    tflm_fb_vec_t name;
} tflm_var_handle_t;

// The model's operators with builtin `code`, in order (subgraph by
// subgraph), from a zeroed walk: false at the end, and with `bad` set where
// the model is malformed.
typedef struct {
    uint32_t s, i;          // the next operator to read
    uint32_t at;            // the one found: operator `at` of subgraph s
    tflm_subgraph_t sg;
    tflm_model_op_t op;
    bool bad;
} var_op_walk_t;

static bool var_next_op(tflm_model_t *m, var_op_walk_t *w, int32_t code) {
    for (; w->s < m->subgraphs.count; ++w->s, w->i = 0) {
        if (!tflm_model_subgraph(m, w->s, &w->sg)) {
            w->bad = true;
            return false;
        }
        while (w->i < w->sg.operators.count) {
            w->at = w->i++;
            if (!tflm_model_op(m, &w->sg, w->at, &w->op)) {
                w->bad = true;
                return false;
            }
            if (w->op.builtin == code) {
                return true;
            }
        }
    }
    return false;
}

// The k-th VAR_HANDLE op of the model, in order; false when there are fewer.
static bool var_handle(tflm_model_t *m, uint32_t k, tflm_var_handle_t *vh) {
    var_op_walk_t w = { 0 };
    while (var_next_op(m, &w, TFLM_OP_VAR_HANDLE)) {
        if (k-- != 0) {
            continue;
        }
        vh->subgraph = w.s;
        vh->op = w.at;
        vh->container = tflm_fb_vector(&m->fb, tflm_model_options(&w.op, TFLM_OPT_VAR_HANDLE_CONTAINER),
            TFLM_OPT_SLOT(TFLM_OPT_VAR_HANDLE_CONTAINER), 1);
        vh->name = tflm_fb_vector(&m->fb, tflm_model_options(&w.op, TFLM_OPT_VAR_HANDLE_SHARED_NAME),
            TFLM_OPT_SLOT(TFLM_OPT_VAR_HANDLE_SHARED_NAME), 1);
        return !m->fb.bad;
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

#if TFLM_KERNEL_VAR_HANDLE
static tflm_status_t resource_count(tflm_model_t *m, uint32_t *count, tflm_error_t *err) {
    tflm_var_handle_t vh;
    uint32_t n = 0, distinct = 0;
    while (var_handle(m, n, &vh)) {
        if (++n > MAX_VAR_HANDLES) {
            return tflm_error(err, TFLM_ERR_NOT_IMPLEMENTED, "more than %u VAR_HANDLE operators", MAX_VAR_HANDLES);
        }
        distinct += first_of_names(m, n - 1, &vh);
    }
    *count = distinct;
    return tflm_model_check(m, err);
}

static int32_t resource_of_var_handle(tflm_model_t *m, uint32_t subgraph, uint32_t op) {
    tflm_var_handle_t vh;
    for (uint32_t k = 0; var_handle(m, k, &vh); ++k) {
        if (vh.subgraph == subgraph && vh.op == op) {
            return id_of(m, k);
        }
    }
    return -1;
}

#endif

static int32_t resource_of_tensor(tflm_model_t *m, uint32_t subgraph, int32_t tensor) {
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

static bool resource_shape(tflm_model_t *m, int32_t id, uint32_t *bytes, uint8_t *fill) {
    *bytes = 0;
    *fill = 0;
    // The value of the first ASSIGN_VARIABLE that writes the resource.
    var_op_walk_t w = { 0 };
    while (var_next_op(m, &w, TFLM_OP_ASSIGN_VARIABLE)) {
        if (w.op.inputs.count != 2 || resource_of_tensor(m, w.s, tflm_model_index(m, w.op.inputs, 0)) != id) {
            continue;
        }
        int32_t value = tflm_model_index(m, w.op.inputs, 1);
        tflm_model_tensor_t t;
        uint32_t elements;
        if (value < 0 || (uint32_t)value >= w.sg.tensors.count || !tflm_model_tensor(m, &w.sg, (uint32_t)value, &t)
            || !tflm_model_tensor_size(m, &t, &elements, bytes)) {
            return false;
        }
        // TFLM fills with the value's first zero point, cast to a byte.
        *fill = t.zero_point.count ? (uint8_t)tflm_fb_vec_i64(&m->fb, t.zero_point, 0) : 0;
        return true;
    }
    return !w.bad;
}

#endif

#if TFLM_KERNEL_VAR_HANDLE || TFLM_KERNEL_ASSIGN_VARIABLE || TFLM_KERNEL_READ_VARIABLE

typedef struct {
    int32_t id;     // VAR_HANDLE: the resource it names
    uint32_t bytes; // ASSIGN/READ: bytes of the value, checked against the resource
} resource_data_t;

#endif

#if TFLM_KERNEL_ASSIGN_VARIABLE || TFLM_KERNEL_READ_VARIABLE

// The resource id held in an input tensor, checked (ids come from tensors,
// which a model could wire to anything).
static void *resource_at(tflm_eval_t *e, uint32_t bytes) {
    int32_t id;
    memcpy(&id, e->in[0], sizeof(id));
    uint32_t have = 0;
    void *data = tflm_resource_data(e->ip, id, &have);
    if (data == NULL || have != bytes) {
        tflm_error(e->err, TFLM_ERR_RUNTIME, "no resource variable %d of %u bytes", (int)id, (unsigned)bytes);
        return NULL;
    }
    return data;
}

// ASSIGN_VARIABLE's (`assign`) and READ_VARIABLE's tensors: the resource id
// input, one int32 or resource element, and *t the value: input 1, or output 0.
static tflm_status_t resource_io(tflm_prepare_t *p, bool assign, tflm_tinfo_t *t) {
    tflm_tinfo_t id;
    tflm_status_t st = assign ? tflm_prep_expect_io(p, 2, 2, 0) : tflm_prep_expect_io(p, 1, 1, 1);
    if (st || (st = tflm_prep_input(p, 0, &id))) {
        return st;
    }
    if (id.index < 0 || (id.type != TFLM_RESOURCE && id.type != TFLM_INT32) || id.elements != 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input 0 must be one resource id");
    }
    return assign ? tflm_prep_input(p, 1, t) : tflm_prep_output(p, 0, t);
}

// ASSIGN_VARIABLE's and READ_VARIABLE's data: the resource and its bytes.
static tflm_status_t resource_data(tflm_prepare_t *p, int32_t id, uint32_t bytes) {
    resource_data_t *d = tflm_prep_alloc(p, sizeof(resource_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->id = id;
    d->bytes = bytes;
    return TFLM_OK;
}

#endif

#if TFLM_KERNEL_VAR_HANDLE

typedef struct {
    int32_t out; // the output tensor's bytes
    int32_t id;  // the resource it names
} var_handle_data_t;

tflm_status_t tflm_var_handle_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 0, 0, 1);
    tflm_tinfo_t out;
    if (st || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    if ((out.type != TFLM_RESOURCE && out.type != TFLM_INT32) || out.elements != 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "output must be one resource id");
    }
    int32_t id = resource_of_var_handle(p->model, p->subgraph, p->index);
    if (id < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "bad resource variable");
    }
    // The output lives in this data, outside the planned head, as TFLM's
    // does; state, since an operator writing the tensor writes here.
    var_handle_data_t *d = tflm_prep_alloc_state(p, sizeof(var_handle_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->id = id;
    tflm_prep_output_in_data(p, offsetof(var_handle_data_t, out));
    return TFLM_OK;
}

tflm_status_t tflm_var_handle_eval(tflm_eval_t *e) {
    const var_handle_data_t *d = e->data;
    memcpy(e->out[0], &d->id, sizeof(d->id));
    return TFLM_OK;
}

// The resources themselves are the engine's, built with the tail; only a
// build with VAR_HANDLE (which every model with resources uses) has them.
static tflm_status_t var_handle_build_state(tflm_build_t *b) {
    return tflm_build_resources(b, resource_count, resource_shape);
}

static tflm_status_t var_handle_reset_state(tflm_interp_t *ip) {
    return tflm_reset_resources(ip, resource_shape);
}

const tflm_kernel_hooks_t tflm_var_handle_hooks = {
    .build_state = var_handle_build_state,
    .reset_state = var_handle_reset_state,
};

#endif

#if TFLM_KERNEL_ASSIGN_VARIABLE

tflm_status_t tflm_assign_variable_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t value;
    tflm_status_t st = resource_io(p, true, &value);
    if (st) {
        return st;
    }
    if (value.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "missing value");
    }
    // The resource's buffer is sized by the first assignment; later ones must match.
    int32_t id = resource_of_tensor(p->model, p->subgraph, tflm_model_index(p->model, p->op->inputs, 0));
    uint32_t bytes;
    uint8_t fill;
    if (id < 0) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "resource ids that do not come from a VAR_HANDLE of the same subgraph");
    }
    if (!resource_shape(p->model, id, &bytes, &fill) || bytes != value.bytes) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "value of %u bytes for a resource variable of %u", (unsigned)value.bytes, (unsigned)bytes);
    }
    return resource_data(p, id, value.bytes);
}

tflm_status_t tflm_assign_variable_eval(tflm_eval_t *e) {
    const resource_data_t *d = e->data;
    void *dst = resource_at(e, d->bytes);
    if (dst == NULL) {
        return TFLM_ERR_RUNTIME;
    }
    memcpy(dst, e->in[1], d->bytes);
    return TFLM_OK;
}

#endif

#if TFLM_KERNEL_READ_VARIABLE

tflm_status_t tflm_read_variable_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t out;
    tflm_status_t st = resource_io(p, false, &out);
    return st ? st : resource_data(p, -1, out.bytes);
}

tflm_status_t tflm_read_variable_eval(tflm_eval_t *e) {
    const resource_data_t *d = e->data;
    const void *src = resource_at(e, d->bytes);
    if (src == NULL) {
        return TFLM_ERR_RUNTIME;
    }
    memcpy(e->out[0], src, d->bytes);
    return TFLM_OK;
}

#endif
