// Greedy planner: buffers in decreasing size order (fixed offsets first), each
// at the lowest offset where it overlaps no placed buffer that is alive at the
// same time. The order and tie-breaks are TFLM's GreedyMemoryPlanner's: equal
// sizes go higher index first. It keeps no lists: the next buffer is found by
// a scan and the lowest free offset by moving past conflicts until none is
// left, which gives the same first fit with no extra memory.
//
// With overlaps (overlap.h), an op's output and the input that dies at that
// op may share bytes as far as the kernel allows (the output at least d
// below the input, or for a kernel that also runs backward, e above it),
// and the plan is made four ways: without overlaps (TFLM's), with them,
// and with them in pairs: an input that dies into an output not placed yet
// leaves d bytes below itself, and that output is placed right after it,
// before larger buffers take the room; the last way pairs an output with
// the input below it too (e bytes), so that chains zigzag: a depthwise
// layer's output below its input, the next pointwise layer's above its own.
// The lowest head wins (ties: the earlier way), so the head is never above
// TFLM's.
#include "planner.h"
#include "overlap.h"

#if TFLM_PLANNER_GREEDY

enum { GREEDY_PLAIN, GREEDY_OVERLAP, GREEDY_OVERLAP_PAIR, GREEDY_OVERLAP_ZIGZAG, GREEDY_WAYS };

static bool is_planned(const tflm_plan_rec_t *r) {
    return r->where == TFLM_AT_HEAD;
}

// Next buffer to place: the lowest-index unplaced fixed one, else the largest
// unplaced one (ties: highest index). Returns count when all are placed.
static uint32_t next_buffer(const tflm_plan_rec_t *recs, uint32_t count) {
    uint32_t best = count;
    uint32_t best_size = 0;
    for (uint32_t i = 0; i < count; ++i) {
        const tflm_plan_rec_t *r = &recs[i];
        if (!is_planned(r) || (r->flags & TFLM_PLAN_PLACED)) {
            continue;
        }
        if (r->flags & TFLM_PLAN_FIXED) {
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

// The lowest offset >= `offset` at which buffer `w` does not clash with
// placed buffer `j` (which shares bytes with w at `offset`): past j's end,
// or, for an overlap pair, the position the rule allows.
static uint32_t move_past(const tflm_plan_rec_t *recs, const tflm_plan_view_t *ov, uint32_t w, uint32_t j,
    uint32_t offset) {
    const tflm_plan_rec_t *r = &recs[j];
    uint32_t end = r->data + tflm_planned_size(r);
    tflm_overlap_t o;
    if (ov && tflm_overlap_distance(ov, w, j, &o)) {
        // w is the output: fine at or below j's offset - below, or from
        // j's offset + up.
        if ((uint64_t)offset + o.below <= r->data) {
            return offset;
        }
        if (o.up == TFLM_OVERLAP_NO_UP) {
            return end;
        }
        uint32_t from = tflm_align_up(r->data + o.up, TFLM_ALIGN);
        return offset >= from ? offset : TFLM_MIN(from, end);
    }
    if (ov && tflm_overlap_distance(ov, j, w, &o)) {
        // w is the dying input: fine at or below j's offset - up, or from
        // j's offset + below.
        if (o.up != TFLM_OVERLAP_NO_UP && (uint64_t)offset + o.up <= r->data) {
            return offset;
        }
        uint32_t from = tflm_align_up(r->data + o.below, TFLM_ALIGN);
        return offset >= from ? offset : TFLM_MIN(from, end);
    }
    return end;
}

static uint32_t lowest_free_offset(const tflm_plan_rec_t *recs, uint32_t count, const tflm_plan_view_t *ov,
    uint32_t w, uint32_t offset) {
    const tflm_plan_rec_t *want = &recs[w];
    uint32_t size = tflm_planned_size(want);
    bool moved;
    do {
        moved = false;
        for (uint32_t j = 0; j < count; ++j) {
            const tflm_plan_rec_t *r = &recs[j];
            if (!is_planned(r) || !(r->flags & TFLM_PLAN_PLACED) || !tflm_lifetimes_overlap(r, want)) {
                continue;
            }
            uint32_t end = r->data + tflm_planned_size(r);
            if (r->data < offset + size && offset < end) {
                uint32_t next = move_past(recs, ov, w, j, offset);
                moved = moved || next != offset;
                offset = next;
            }
        }
    } while (moved);
    return offset;
}

// Where the search for buffer x starts: d bytes up when an output not yet
// placed may sit d below it (x the input dying into it), so that output
// finds room there; with `zigzag`, also e bytes up when an input not yet
// placed may sit e below it (x the output of a kernel that runs backward).
// *partner: that buffer, count when none.
static uint32_t lift(const tflm_plan_rec_t *recs, uint32_t count, const tflm_plan_view_t *ov, uint32_t x,
    bool zigzag, uint32_t *partner) {
    uint32_t lowest = 0;
    tflm_overlap_t o;
    *partner = count;
    for (uint32_t y = 0; y < count; ++y) {
        if (!is_planned(&recs[y]) || (recs[y].flags & (TFLM_PLAN_PLACED | TFLM_PLAN_FIXED))) {
            continue;
        }
        if (recs[y].first == recs[x].last && tflm_overlap_distance(ov, y, x, &o)
            && tflm_align_up(o.below, TFLM_ALIGN) >= lowest) {
            lowest = tflm_align_up(o.below, TFLM_ALIGN);
            *partner = y;
        }
        if (zigzag && recs[y].last == recs[x].first && tflm_overlap_distance(ov, x, y, &o)
            && o.up != TFLM_OVERLAP_NO_UP && tflm_align_up(o.up, TFLM_ALIGN) >= lowest) {
            lowest = tflm_align_up(o.up, TFLM_ALIGN);
            *partner = y;
        }
    }
    return lowest;
}

static uint32_t place(tflm_plan_rec_t *recs, uint32_t count, const tflm_plan_view_t *pairs, uint32_t i,
    uint32_t from) {
    tflm_plan_rec_t *r = &recs[i];
    if (!(r->flags & TFLM_PLAN_FIXED)) {
        r->data = lowest_free_offset(recs, count, pairs, i, from);
    }
    r->flags |= TFLM_PLAN_PLACED;
    return r->data + tflm_planned_size(r);
}

static uint32_t greedy_run(tflm_plan_rec_t *recs, uint32_t count, const tflm_plan_view_t *ov, int way) {
    uint32_t head = 0;
    const tflm_plan_view_t *pairs = way == GREEDY_PLAIN ? NULL : ov;
    for (;;) {
        uint32_t i = next_buffer(recs, count);
        if (i == count) {
            break;
        }
        uint32_t partner = count;
        uint32_t from = way >= GREEDY_OVERLAP_PAIR && !(recs[i].flags & TFLM_PLAN_FIXED)
            ? lift(recs, count, ov, i, way == GREEDY_OVERLAP_ZIGZAG, &partner) : 0;
        uint32_t end = place(recs, count, pairs, i, from);
        head = TFLM_MAX(head, end);
        if (partner != count) {
            // The output the input made room for takes it at once.
            end = place(recs, count, pairs, partner, 0);
            head = TFLM_MAX(head, end);
        }
    }
    for (uint32_t i = 0; i < count; ++i) {
        recs[i].flags &= (uint8_t)~TFLM_PLAN_PLACED;
    }
    return head;
}

// Record i shares bytes with a live buffer (only an overlap pair can).
static bool shares_bytes(const tflm_plan_rec_t *recs, uint32_t count, uint32_t i) {
    const tflm_plan_rec_t *a = &recs[i];
    for (uint32_t j = 0; j < count; ++j) {
        const tflm_plan_rec_t *b = &recs[j];
        if (j != i && is_planned(b) && tflm_lifetimes_overlap(a, b) && a->data < b->data + tflm_planned_size(b)
            && b->data < a->data + tflm_planned_size(a)) {
            return true;
        }
    }
    return false;
}

// Overlaps cost time (the int8 convolutions then go row by row): every
// output or input that has room of its own below the head moves there, so
// only the overlaps the head needs stay.
static void keep_needed_overlaps(tflm_plan_rec_t *recs, uint32_t count, uint32_t head) {
    for (uint32_t i = 0; i < count; ++i) {
        tflm_plan_rec_t *r = &recs[i];
        if (!is_planned(r) || (r->flags & TFLM_PLAN_FIXED) || !shares_bytes(recs, count, i)) {
            continue;
        }
        for (uint32_t j = 0; j < count; ++j) {
            recs[j].flags |= j != i ? TFLM_PLAN_PLACED : 0;
        }
        uint32_t at = lowest_free_offset(recs, count, NULL, i, 0);
        if (at + tflm_planned_size(r) <= head) {
            r->data = at;
        }
        for (uint32_t j = 0; j < count; ++j) {
            recs[j].flags &= (uint8_t)~TFLM_PLAN_PLACED;
        }
    }
}

static tflm_status_t greedy_plan(tflm_plan_rec_t *recs, uint32_t count, const tflm_plan_view_t *ov,
    uint32_t *head_bytes, tflm_error_t *err) {
    (void)err;
    int best = GREEDY_PLAIN, last = GREEDY_PLAIN;
    uint32_t head = greedy_run(recs, count, ov, GREEDY_PLAIN);
    for (int way = GREEDY_OVERLAP; ov && way < GREEDY_WAYS; ++way) {
        uint32_t h = greedy_run(recs, count, ov, way);
        last = way;
        if (h < head) {
            head = h;
            best = way;
        }
    }
    if (best != last) {
        greedy_run(recs, count, ov, best);
    }
    if (best != GREEDY_PLAIN) {
        keep_needed_overlaps(recs, count, head);
    }
    *head_bytes = head;
    return TFLM_OK;
}

static tflm_status_t tflm_plan(tflm_plan_rec_t *recs, uint32_t count, const tflm_plan_view_t *ov,
    uint32_t *head_bytes, tflm_error_t *err) {
    (void)ov;
    return greedy_plan(recs, count, NULL, head_bytes, err);
}

const tflm_planner_t tflm_planner_greedy = { "greedy", greedy_plan };
const tflm_planner_t tflm_planner_tflm = { "tflm", tflm_plan };

#endif // TFLM_PLANNER_GREEDY
