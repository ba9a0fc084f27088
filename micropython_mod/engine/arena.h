// The tensor arena: one buffer, 16-byte aligned, in three sections.
//
//   base                                                        base + size
//   | HEAD: planned tensors | TEMPORARY -> ... free ... | <- TAIL: records |
//
// The head holds tensors and scratch buffers whose lifetimes the planner
// overlaps; the tail grows down from the top and holds persistent data
// (tensor, node and subgraph records, kernel data, variable tensors).
// Everything in the arena is addressed by 32-bit offsets from `base`, never by
// pointers, so the layout and its size are the same on every target.
#ifndef TFLM_ENGINE_ARENA_H
#define TFLM_ENGINE_ARENA_H

#include "common.h"

#define TFLM_ARENA_FAIL (UINT32_MAX)

// A dry arena has no memory: it only counts, so allocation code can be run
// once to learn the sizes it needs.
#define TFLM_ARENA_DRY_SIZE (0x7ffffff0u)

typedef struct _tflm_arena_t {
    uint8_t *base;       // 16-byte aligned start, NULL for a dry arena
    uint32_t size;       // usable bytes from base, a multiple of 16
    uint32_t align_loss; // bytes skipped at the start of the given buffer to align it
    uint32_t head;       // head bytes: the largest plan of the interpreters sharing it
    uint32_t tail;       // tail bytes: from the top down to the lowest persistent data
    uint32_t temp;       // temporary bytes in use right above the head
    uint32_t users;      // interpreters allocated in this arena
    // Where tail allocations go, in bytes from the top: the bottom of the
    // tail (cursor == tail), or, while an interpreter is built into a gap
    // left between other interpreters' tails, a point inside that gap,
    // whose lowest offset is gap_floor (0: no gap).
    uint32_t cursor;
    uint32_t gap_floor;
    // Whether anything given out can write these bytes' records: a buffer
    // the user gave or was given (tflm_arena_init sets it). Only then does
    // invoke() compare the seal of the records in it (seal.c); a binding
    // clears it for a buffer of its own that it has not handed out, and sets
    // it again when views it gave may reach records (an interpreter gone).
    bool exposed;
} tflm_arena_t;

// Uses buf[0:len]: aligns the start to 16 bytes and the usable size down to 16.
void tflm_arena_init(tflm_arena_t *a, void *buf, size_t len);
void tflm_arena_init_dry(tflm_arena_t *a);

static inline bool tflm_arena_is_dry(const tflm_arena_t *a) {
    return a->base == NULL;
}

// Allocates `bytes` below the cursor (the bottom of the tail); returns its
// offset or TFLM_ARENA_FAIL when it would run into the head and temporary
// sections (or out of the gap it is building in).
uint32_t tflm_arena_alloc_tail(tflm_arena_t *a, uint32_t bytes, uint32_t align);

// Tail allocations go into the gap of `bytes` that starts `top` bytes below
// the arena's top, inside the tail, until tflm_arena_end_gap().
void tflm_arena_begin_gap(tflm_arena_t *a, uint32_t top, uint32_t bytes);
void tflm_arena_end_gap(tflm_arena_t *a);

// Pads the tail so its lowest byte is aligned to `align`.
bool tflm_arena_align_tail(tflm_arena_t *a, uint32_t align);

// Temporary allocations sit right above the head; reset them all at once.
uint32_t tflm_arena_alloc_temp(tflm_arena_t *a, uint32_t bytes, uint32_t align);
void tflm_arena_reset_temp(tflm_arena_t *a);

static inline void *tflm_arena_ptr(const tflm_arena_t *a, uint32_t offset) {
    return a->base + offset;
}

// Bytes available between the head (plus temporaries) and the tail.
static inline uint32_t tflm_arena_free(const tflm_arena_t *a) {
    return a->size - a->tail - a->head - a->temp;
}

#endif // TFLM_ENGINE_ARENA_H
