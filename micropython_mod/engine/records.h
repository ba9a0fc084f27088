// Persistent records the interpreter keeps in the arena tail. They hold
// fixed-width integers and offsets only, no pointers, so their sizes (and the
// arena size a model needs) are the same on 32- and 64-bit targets.
#ifndef TFLM_ENGINE_RECORDS_H
#define TFLM_ENGINE_RECORDS_H

#include "common.h"

// Where a tensor's bytes live (3 bits of the record). The tail's kinds come
// last, so one comparison tells a tail offset.
enum {
    TFLM_AT_NONE = 0,     // no data (omitted or zero-sized)
    TFLM_AT_HEAD = 1,     // planned buffer: `data` is an arena offset in the head
    TFLM_AT_MODEL = 3,    // constant: `data` is an offset into the model buffer
    TFLM_AT_EXTERNAL = 4, // a buffer outside the arena given by the user
    TFLM_AT_TAIL = 5,     // a variable tensor's buffer in the tail: arena offset
    // A variable its one operator keeps in a compact form of its own
    // (tflm_prep_keep_variable), in the tail: `bytes` are that form, not the
    // declared shape.
    TFLM_AT_KEPT = 6,
    // An output that lives in its kernel's state data (tflm_prep_output_in_data),
    // in the tail: not a variable.
    TFLM_AT_STATE = 7,
};

// Bytes in the tail (an arena offset), written by the model: TFLM_AT_TAIL,
// TFLM_AT_KEPT and TFLM_AT_STATE.
static inline bool tflm_at_tail(uint32_t where) {
    return where >= TFLM_AT_TAIL;
}

// A variable tensor's record once the interpreter is built (or while it is
// built: a variable's record is TFLM_AT_TAIL from the start).
static inline bool tflm_at_variable(uint32_t where) {
    return where - TFLM_AT_TAIL <= TFLM_AT_KEPT - TFLM_AT_TAIL;
}

// The largest tensor a record holds (its 24-bit `bytes`).
#define TFLM_MAX_TENSOR_BYTES (0xffffffu)
// The ValueError for a buffer a record cannot hold: what, its index, bytes
// and type (one text, so the firmware keeps one copy).
#define TFLM_RECORD_LIMITS "%s %u: %u bytes (type %u), over 16 MiB"

// An omitted input in an index list.
#define TFLM_NO_INDEX (0xffffu)
// Record indices (index lists, node records) are below TFLM_MAX_RECORDS:
// without a records map (below) record i is the arena's record i. A prepared
// model used in place keeps its constant tensors' records in the model, and
// their indices are TFLM_REC_CONST plus the constant's number.
#define TFLM_MAX_RECORDS (0x7fffu)
#define TFLM_REC_CONST (0x8000u)
// A node built without a kernel (tflm_config_t.tensors_only).
#define TFLM_NO_KERNEL (0xffffu)

// Lifetime of a buffer that is never used (TFLM plans it too, at "-1").
#define TFLM_LIFETIME_UNSET (-1)

// A tensor's (or a scratch buffer's) record: 8 bytes. The second word holds
// bits 0-23 `bytes`, 24-28 `type`, 29-31 `where`: GCC lays unsigned int
// bit-fields out from the low bit on every little-endian target this builds
// for (x86-64, Arm, Xtensa, RISC-V), so a prepared model's constants' records
// read the same everywhere (tests/engine/test_engine.c pins the bytes).
// Lifetimes and the planners' marks are not kept: the planners work on
// tflm_plan_rec_t, in the caller's memory while the head is planned
// (tflm_config_t.plan_memory).
typedef struct {
    uint32_t data;          // see TFLM_AT_*
    unsigned int bytes : 24; // exact size, at most TFLM_MAX_TENSOR_BYTES
    unsigned int type : 5;  // tflm_type_t
    unsigned int where : 3; // TFLM_AT_*
} tflm_tensor_rec_t;

// What the planners see of a record (planner.h, plan.h): the record's place
// and size with its lifetime and marks, one per record, in the same order.
typedef struct {
    uint32_t data;  // see TFLM_AT_*
    uint32_t bytes;
    int16_t first;  // first allocation scope that uses the buffer
    int16_t last;   // last allocation scope that uses it
    uint8_t where;  // TFLM_AT_*
    uint8_t flags;  // TFLM_PLAN_*
    uint16_t reserved;
} tflm_plan_rec_t;

// tflm_plan_rec_t.flags
#define TFLM_PLAN_FIXED (0x01)   // offset fixed before planning (offline plan)
#define TFLM_PLAN_PLACED (0x02)  // planner's mark while it works
#define TFLM_PLAN_WRITTEN (0x04) // the lifetimes' walk saw something write it (left set)
#define TFLM_PLAN_SCRATCH (0x08) // a kernel's scratch buffer, not a model tensor

typedef struct {
    uint32_t io;        // offset of uint16 record indices (inputs, outputs), 0xffff: omitted
    uint32_t data;      // arena offset of the kernel's data
    uint16_t kernel;    // kernel id (engine/kernel.h: the same in every build)
    uint16_t scratch;   // record index of the node's first scratch buffer
    uint8_t n_inputs;
    uint8_t n_outputs;
    uint8_t n_scratch;
    uint8_t flags;      // TFLM_NODE_*
} tflm_node_rec_t;

// tflm_node_rec_t.flags: `data` is an offset into a prepared model's data
// (its kernel data, used in place: from the interpreter's lists_base), not
// into the arena.
#define TFLM_NODE_DATA_IN_MODEL (0x01)

typedef struct {
    uint32_t io;        // offset of uint16 record indices: inputs, then outputs
    uint16_t tensor_base; // model tensor index (all subgraphs) of its first tensor
    uint16_t n_tensors;
    uint16_t node_base;   // index of its first node record
    uint16_t n_nodes;
    uint16_t n_inputs;
    uint16_t n_outputs;
} tflm_subgraph_rec_t;

// Which record holds each model tensor. Without rec_of, record i is model
// tensor i (all subgraphs' tensors in order), then the scratch buffers'.
// With it (a prepared model's, prepared.h), the n_live model tensors that
// are not constants have records 0..n_live-1 in the arena in tensor order,
// the scratch buffers' follow, and constants are TFLM_REC_CONST + k.
typedef struct {
    const uint16_t *rec_of; // record of each model tensor, NULL: the same index
    uint32_t n_model;       // model tensors of all subgraphs
    uint32_t n_live;        // model tensors with records in the arena
} tflm_rec_map_t;

static inline uint32_t tflm_rec_of(const tflm_rec_map_t *m, uint32_t tensor) {
    return m->rec_of ? m->rec_of[tensor] : tensor;
}

// The model tensor record `rec` stands for, or n_model plus the number of a
// scratch buffer's record. For messages and the API, not for eval().
static inline uint32_t tflm_rec_tensor(const tflm_rec_map_t *m, uint32_t rec) {
    if (m->rec_of == NULL) {
        return rec;
    }
    if (rec >= m->n_live && !(rec & TFLM_REC_CONST)) {
        return m->n_model + (rec - m->n_live);
    }
    for (uint32_t t = 0; t < m->n_model; ++t) {
        if (m->rec_of[t] == rec) {
            return t;
        }
    }
    return rec;
}

// A resource variable (see resources.c).
typedef struct {
    uint32_t data;  // arena offset of its buffer
    uint32_t bytes; // 0 when nothing assigns it
} tflm_resource_rec_t;

typedef char tflm_tensor_rec_is_8_bytes[sizeof(tflm_tensor_rec_t) == 8 ? 1 : -1];
typedef char tflm_plan_rec_is_16_bytes[sizeof(tflm_plan_rec_t) == 16 ? 1 : -1];
typedef char tflm_node_rec_is_16_bytes[sizeof(tflm_node_rec_t) == 16 ? 1 : -1];
typedef char tflm_subgraph_rec_is_16_bytes[sizeof(tflm_subgraph_rec_t) == 16 ? 1 : -1];

#endif // TFLM_ENGINE_RECORDS_H
