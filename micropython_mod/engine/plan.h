// Offline memory plans: head offsets of tensors (and scratch buffers)
// computed on a host, read from the model's OfflineMemoryAllocation metadata
// or given separately (TFLM's planner shim). Nothing in a plan is trusted:
// tflm_plan_check() validates the whole head layout before the interpreter
// uses it.
//
// Two tensors may share bytes while both are alive only as an alias the
// kernels support: the output of RESHAPE, SQUEEZE or EXPAND_DIMS at its
// input's offset (a view: the bytes are not copied), or the output of an
// element-wise op at the offset of an input of the same size that is not read
// again after it (computed in place), or an op's output overlapping the
// input that dies at that op, as far as its kernel allows (overlap.h).
#ifndef TFLM_ENGINE_PLAN_H
#define TFLM_ENGINE_PLAN_H

#include "model.h"
#include "records.h"

// Metadata names: TFLM's (tensors), and ours for scratch buffers, which
// TFLM always plans online and ignores in the model.
#define TFLM_PLAN_METADATA "OfflineMemoryAllocation"
#define TFLM_PLAN_SCRATCH_METADATA "OfflineScratchAllocation"
// First word of a plan given separately ("TFPL"), then the version.
#define TFLM_PLAN_MAGIC (0x4c504654u)
#define TFLM_PLAN_VERSION (1)
// Offset of a buffer the device plans itself.
#define TFLM_PLAN_ONLINE (-1)

typedef struct {
    const uint8_t *tensors;  // little-endian int32 offsets, one per model tensor of all subgraphs
    uint32_t n_tensors;
    const uint8_t *scratch;  // one per scratch buffer, NULL: planned online
    uint32_t n_scratch;
} tflm_plan_t;

// The plan in the model's metadata; *found is false when there is none.
tflm_status_t tflm_plan_from_model(tflm_model_t *m, tflm_plan_t *plan, bool *found, tflm_error_t *err);

// A plan in the separate format (`tflm-host plan --shim-out`, or a C array
// from `--c-header`): words "TFPL", version, tensor count, scratch count (-1:
// scratch planned online), then the offsets. `buf` must stay valid while
// the interpreter allocates.
tflm_status_t tflm_plan_from_words(const uint8_t *buf, size_t len, tflm_plan_t *plan, tflm_error_t *err);

// What the plan code sees of an interpreter: the records the planners see
// (planner.h) and the node records, for aliases; not the interpreter.
typedef struct _tflm_plan_view_t {
    tflm_plan_rec_t *recs;         // the planners' records: model tensors', then scratch buffers'
    const tflm_tensor_rec_t *tensors; // the arena's records, in the same order (their types)
    uint32_t n_model_tensors;      // records of model tensors in recs (map.n_live)
    uint32_t n_recs;
    const tflm_node_rec_t *nodes;
    uint32_t n_nodes;
    const uint8_t *base;           // node index lists are offsets from it (the interpreter's lists_base)
    tflm_error_t *err;
    // For overlapped placement (overlap.h): the operators, and which nodes
    // belong to which subgraph.
    tflm_model_t *model;
    const tflm_subgraph_rec_t *subgraphs;
    uint32_t n_subgraphs;
    // Which record each model tensor has (index lists hold records; plans
    // and messages number model tensors).
    tflm_rec_map_t map;
    // The arena's first byte, for the kernels' data (NULL: not at hand).
    const uint8_t *arena;
    // The patch-based first stage (patch.h; NULL: none at hand).
    const struct _tflm_patch_t *patch;
    // Overlaps by the forward rule only (tflm_config_t.forward_overlaps).
    bool forward_only;
} tflm_plan_view_t;

// Gives the head records the plan's offsets and marks them fixed. ValueError
// when the counts do not match the model, or a pre-allocated tensor is placed.
tflm_status_t tflm_plan_apply(tflm_plan_view_t *v, const tflm_plan_t *plan);

// Checks a planned head: offsets aligned and in range, and no two buffers
// that are alive at the same time sharing bytes unless as a supported alias.
// ValueError naming the first conflicting buffers.
tflm_status_t tflm_plan_check(tflm_plan_view_t *v);

#endif // TFLM_ENGINE_PLAN_H
