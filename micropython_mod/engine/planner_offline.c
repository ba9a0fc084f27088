// Offline planner: the records an offline plan placed keep their offsets
// (TFLM_PLAN_FIXED); the greedy planner fits the others around them. In a
// firmware built without the greedy planner, the plan must place everything.
#include "planner.h"

#if TFLM_PLANNER_OFFLINE

static tflm_status_t offline_plan(tflm_plan_rec_t *recs, uint32_t count, const struct _tflm_plan_view_t *ov,
    uint32_t *head_bytes, tflm_error_t *err) {
    #if TFLM_PLANNER_GREEDY
    return tflm_planner_greedy.plan(recs, count, ov, head_bytes, err);
    #else
    (void)ov;
    uint32_t head = 0;
    for (uint32_t i = 0; i < count; ++i) {
        const tflm_plan_rec_t *r = &recs[i];
        if (r->where != TFLM_AT_HEAD) {
            continue;
        }
        if (!(r->flags & TFLM_PLAN_FIXED)) {
            return tflm_error(err, TFLM_ERR_NOT_IMPLEMENTED,
                "the offline plan leaves %s %u to the greedy planner, which this firmware does not include",
                (r->flags & TFLM_PLAN_SCRATCH) ? "record (a scratch buffer)" : "tensor", (unsigned)i);
        }
        head = TFLM_MAX(head, r->data + tflm_planned_size(r));
    }
    *head_bytes = head;
    return TFLM_OK;
    #endif
}

const tflm_planner_t tflm_planner_offline = { "offline", offline_plan };

#endif // TFLM_PLANNER_OFFLINE
