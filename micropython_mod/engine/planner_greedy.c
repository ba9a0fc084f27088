// Greedy planner: buffers in decreasing size order (fixed offsets first), each
// at the lowest offset where it overlaps no placed buffer that is alive at the
// same time. The order and tie-breaks are TFLM's GreedyMemoryPlanner's: equal
// sizes go higher index first. It keeps no lists: the next buffer is found by
// a scan and the lowest free offset by moving past conflicts until none is
// left, which gives the same first fit with no extra memory.
#include "planner.h"

#if TFLM_PLANNER_GREEDY

static bool is_planned(const tflm_tensor_rec_t *r) {
    return r->where == TFLM_AT_HEAD;
}

// Next buffer to place: the lowest-index unplaced fixed one, else the largest
// unplaced one (ties: highest index). Returns count when all are placed.
static uint32_t next_buffer(const tflm_tensor_rec_t *recs, uint32_t count) {
    uint32_t best = count;
    uint32_t best_size = 0;
    for (uint32_t i = 0; i < count; ++i) {
        const tflm_tensor_rec_t *r = &recs[i];
        if (!is_planned(r) || (r->flags & TFLM_TENSOR_PLACED)) {
            continue;
        }
        if (r->flags & TFLM_TENSOR_FIXED) {
            return i;
        }
        uint32_t size = tflm_planned_size(r);
        if (best == count || size >= best_size) {
            best = i;
            best_size = size;
        }
    }
    return best;
}

static uint32_t lowest_free_offset(const tflm_tensor_rec_t *recs, uint32_t count, const tflm_tensor_rec_t *want) {
    uint32_t size = tflm_planned_size(want);
    uint32_t offset = 0;
    bool moved;
    do {
        moved = false;
        for (uint32_t j = 0; j < count; ++j) {
            const tflm_tensor_rec_t *r = &recs[j];
            if (!is_planned(r) || !(r->flags & TFLM_TENSOR_PLACED) || !tflm_lifetimes_overlap(r, want)) {
                continue;
            }
            uint32_t end = r->data + tflm_planned_size(r);
            if (r->data < offset + size && offset < end) {
                offset = end;
                moved = true;
            }
        }
    } while (moved);
    return offset;
}

static tflm_status_t greedy_plan(tflm_tensor_rec_t *recs, uint32_t count, uint32_t *head_bytes, tflm_error_t *err) {
    (void)err;
    uint32_t head = 0;
    for (;;) {
        uint32_t i = next_buffer(recs, count);
        if (i == count) {
            break;
        }
        tflm_tensor_rec_t *r = &recs[i];
        if (!(r->flags & TFLM_TENSOR_FIXED)) {
            r->data = lowest_free_offset(recs, count, r);
        }
        r->flags |= TFLM_TENSOR_PLACED;
        uint32_t end = r->data + tflm_planned_size(r);
        head = TFLM_MAX(head, end);
    }
    for (uint32_t i = 0; i < count; ++i) {
        recs[i].flags &= (uint8_t)~TFLM_TENSOR_PLACED;
    }
    *head_bytes = head;
    return TFLM_OK;
}

const tflm_planner_t tflm_planner_greedy = { "greedy", greedy_plan };

#endif // TFLM_PLANNER_GREEDY
