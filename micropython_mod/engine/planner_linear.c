// Linear planner: buffers one after another in index order, no reuse, as
// TFLM's LinearMemoryPlanner. Every intermediate tensor survives invoke().
#include "planner.h"

#if TFLM_PLANNER_LINEAR

static tflm_status_t linear_plan(tflm_plan_rec_t *recs, uint32_t count, const struct _tflm_plan_view_t *ov,
    uint32_t *head_bytes, tflm_error_t *err) {
    (void)ov;
    (void)err;
    uint32_t next = 0;
    for (uint32_t i = 0; i < count; ++i) {
        tflm_plan_rec_t *r = &recs[i];
        if (r->where != TFLM_AT_HEAD) {
            continue;
        }
        r->data = next;
        next += tflm_planned_size(r);
    }
    *head_bytes = next;
    return TFLM_OK;
}

const tflm_planner_t tflm_planner_linear = { "linear", linear_plan };

#endif // TFLM_PLANNER_LINEAR
