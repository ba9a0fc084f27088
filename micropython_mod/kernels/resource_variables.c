// VAR_HANDLE, ASSIGN_VARIABLE and READ_VARIABLE: resource variables, the
// state of stateful models. A VAR_HANDLE writes its resource's id into its
// output; ASSIGN_VARIABLE and READ_VARIABLE take that id as input 0 and copy
// into or out of the resource's buffer (see engine/resources.c).
#include "kernels/kernels.h"
#include "engine/interpreter.h"

#if TFLM_KERNEL_VAR_HANDLE || TFLM_KERNEL_ASSIGN_VARIABLE || TFLM_KERNEL_READ_VARIABLE

typedef struct {
    int32_t id;     // VAR_HANDLE: the resource it names
    uint32_t bytes; // ASSIGN/READ: bytes of the value, checked against the resource
} resource_data_t;

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

// Checks the resource id input: one int32 or resource element.
static tflm_status_t check_id_input(tflm_prepare_t *p) {
    tflm_tinfo_t id;
    tflm_status_t st = tflm_prep_input(p, 0, &id);
    if (st) {
        return st;
    }
    if (id.index < 0 || (id.type != TFLM_RESOURCE && id.type != TFLM_INT32) || id.elements != 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input 0 must be one resource id");
    }
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
    int32_t id = tflm_resource_of_var_handle(p->model, p->subgraph, p->index);
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
const tflm_kernel_hooks_t tflm_var_handle_hooks = {
    .build_state = tflm_build_resources,
    .reset_state = tflm_reset_resources,
};

#endif

#if TFLM_KERNEL_ASSIGN_VARIABLE

tflm_status_t tflm_assign_variable_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 2, 2, 0);
    tflm_tinfo_t value;
    if (st || (st = check_id_input(p)) || (st = tflm_prep_input(p, 1, &value))) {
        return st;
    }
    if (value.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "missing value");
    }
    // The resource's buffer is sized by the first assignment; later ones must match.
    int32_t id = tflm_resource_of_tensor(p->model, p->subgraph, tflm_model_index(p->model, p->op->inputs, 0));
    uint32_t bytes;
    uint8_t fill;
    if (id < 0) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "resource ids that do not come from a VAR_HANDLE of the same subgraph");
    }
    if (!tflm_resource_shape(p->model, id, &bytes, &fill) || bytes != value.bytes) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "value of %u bytes for a resource variable of %u", (unsigned)value.bytes, (unsigned)bytes);
    }
    resource_data_t *d = tflm_prep_alloc(p, sizeof(resource_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->id = id;
    d->bytes = value.bytes;
    return TFLM_OK;
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
    tflm_status_t st = tflm_prep_expect_io(p, 1, 1, 1);
    tflm_tinfo_t out;
    if (st || (st = check_id_input(p)) || (st = tflm_prep_output(p, 0, &out))) {
        return st;
    }
    resource_data_t *d = tflm_prep_alloc(p, sizeof(resource_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->id = -1;
    d->bytes = out.bytes;
    return TFLM_OK;
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
