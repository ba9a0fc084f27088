// CALL_ONCE: runs an initialisation subgraph the first time the model is
// invoked (stateful models use it to set their resource variables).
#include "kernels/kernels.h"
#include "engine/ops.h"

#if TFLM_KERNEL_CALL_ONCE


typedef struct {
    int32_t subgraph;
    uint8_t has_run; // the one field kernels change after prepare()
    uint8_t reserved[3];
} call_once_data_t;

tflm_status_t tflm_call_once_prepare(tflm_prepare_t *p) {
    tflm_status_t st = tflm_prep_expect_io(p, 0, 0, 0);
    if (st) {
        return st;
    }
    int32_t sg = p->op->options_type == TFLM_OPTIONS_CALL_ONCE
        ? tflm_prep_opt_i32(p, TFLM_OPT_CALL_ONCE_INIT_SUBGRAPH_INDEX, -1) : -1;
    // The interpreter checks when marking lifetimes that calls form no cycle.
    if (sg <= 0 || (uint32_t)sg >= p->model->subgraphs.count) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "init subgraph %d out of range", (int)sg);
    }
    call_once_data_t *d = tflm_prep_alloc_state(p, sizeof(call_once_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->subgraph = sg;
    return TFLM_OK;
}

tflm_status_t tflm_call_once_eval(tflm_eval_t *e) {
    call_once_data_t *d = e->data;
    if (d->has_run) {
        return TFLM_OK;
    }
    if (!e->resumed) {
        return tflm_eval_call(e, (uint32_t)d->subgraph);
    }
    // Only once the subgraph ran to the end, as in TFLM: after an error
    // the next invoke() tries again.
    d->has_run = 1;
    return TFLM_OK;
}

static void call_once_calls(tflm_prepare_t *p, int32_t called[2]) {
    called[0] = p->op->options_type == TFLM_OPTIONS_CALL_ONCE
        ? tflm_prep_opt_i32(p, TFLM_OPT_CALL_ONCE_INIT_SUBGRAPH_INDEX, -1) : -1;
}

const tflm_kernel_hooks_t tflm_call_once_hooks = { .calls = call_once_calls };

#endif
