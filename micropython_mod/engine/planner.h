// The memory planner interface: one function that gives every planned buffer
// an offset in the head and returns the head size. Planners work in place on
// the planners' records (tflm_plan_rec_t, in the caller's memory while the
// head is planned: tflm_config_t.plan_memory) and need no memory of their own.
#ifndef TFLM_ENGINE_PLANNER_H
#define TFLM_ENGINE_PLANNER_H

#include "records.h"

struct _tflm_plan_view_t;

typedef struct _tflm_planner_t {
    const char *name;
    // Plans every record with where == TFLM_AT_HEAD. Records flagged
    // TFLM_PLAN_FIXED keep the offset they have. Sizes are rounded up to
    // TFLM_ALIGN. Sets *head_bytes to the end of the highest buffer. `ov`
    // (the records' graph, engine/plan.h) lets a planner overlap an op's
    // output with its dying input as overlap.h allows; NULL: no overlaps.
    tflm_status_t (*plan)(tflm_plan_rec_t *recs, uint32_t count, const struct _tflm_plan_view_t *ov,
        uint32_t *head_bytes, tflm_error_t *err);
} tflm_planner_t;

// First fit by decreasing size, in TFLM's order, also trying overlapped
// placements (overlap.h): the head is TFLM's or smaller (the default).
extern const tflm_planner_t tflm_planner_greedy;
// The same first fit without overlaps: TFLM's head byte for byte.
extern const tflm_planner_t tflm_planner_tflm;
// No reuse: every buffer keeps its bytes, so every tensor can be read after invoke.
extern const tflm_planner_t tflm_planner_linear;
// Offsets from an offline plan (fixed records); the rest placed around them
// by the greedy planner, or an error when it is not linked in.
extern const tflm_planner_t tflm_planner_offline;

// Finds a planner by name, NULL if none is linked in.
const tflm_planner_t *tflm_planner_find(const char *name);
// The i-th planner linked in, NULL past the last (for messages listing them).
const tflm_planner_t *tflm_planner_at(size_t i);

static inline uint32_t tflm_planned_size(const tflm_plan_rec_t *r) {
    return tflm_align_up(r->bytes, TFLM_ALIGN);
}

static inline bool tflm_lifetimes_overlap(const tflm_plan_rec_t *a, const tflm_plan_rec_t *b) {
    return !(a->first > b->last || b->first > a->last);
}

#endif // TFLM_ENGINE_PLANNER_H
