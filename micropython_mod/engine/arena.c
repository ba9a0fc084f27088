// The tensor arena (see arena.h).
#include "arena.h"

void tflm_arena_init(tflm_arena_t *a, void *buf, size_t len) {
    memset(a, 0, sizeof(*a));
    uintptr_t p = (uintptr_t)buf;
    uintptr_t aligned = (p + (TFLM_ALIGN - 1)) & ~(uintptr_t)(TFLM_ALIGN - 1);
    a->align_loss = (uint32_t)(aligned - p);
    a->exposed = true;
    if (buf == NULL || len <= a->align_loss) {
        a->base = (uint8_t *)aligned;
        a->size = 0;
        return;
    }
    size_t usable = len - a->align_loss;
    if (usable > TFLM_ARENA_DRY_SIZE) {
        usable = TFLM_ARENA_DRY_SIZE;
    }
    a->base = (uint8_t *)aligned;
    a->size = (uint32_t)usable & ~(TFLM_ALIGN - 1);
}

void tflm_arena_init_dry(tflm_arena_t *a) {
    memset(a, 0, sizeof(*a));
    a->size = TFLM_ARENA_DRY_SIZE;
    a->exposed = true;
}

uint32_t tflm_arena_alloc_tail(tflm_arena_t *a, uint32_t bytes, uint32_t align) {
    uint32_t top = a->size - a->cursor;
    uint32_t floor = a->gap_floor ? a->gap_floor : a->head + a->temp;
    if (bytes > top) {
        return TFLM_ARENA_FAIL;
    }
    // size is a multiple of 16, so this alignment does not depend on it.
    uint32_t at = (top - bytes) & ~(align - 1);
    if (at < floor) {
        return TFLM_ARENA_FAIL;
    }
    a->cursor = a->size - at;
    if (!a->gap_floor) {
        a->tail = a->cursor;
    }
    return at;
}

void tflm_arena_begin_gap(tflm_arena_t *a, uint32_t top, uint32_t bytes) {
    a->cursor = top;
    a->gap_floor = a->size - top - bytes;
}

void tflm_arena_end_gap(tflm_arena_t *a) {
    a->cursor = a->tail;
    a->gap_floor = 0;
}

bool tflm_arena_align_tail(tflm_arena_t *a, uint32_t align) {
    return tflm_arena_alloc_tail(a, 0, align) != TFLM_ARENA_FAIL;
}

uint32_t tflm_arena_alloc_temp(tflm_arena_t *a, uint32_t bytes, uint32_t align) {
    uint32_t at = tflm_align_up(a->head + a->temp, align);
    if (at < a->head || (uint64_t)at + bytes > (uint64_t)a->size - a->tail) {
        return TFLM_ARENA_FAIL;
    }
    a->temp = at + bytes - a->head;
    return at;
}

void tflm_arena_reset_temp(tflm_arena_t *a) {
    a->temp = 0;
}
