// The interpreter: builds the runtime records of a model in an arena, plans
// the head and runs the operators.
#ifndef TFLM_ENGINE_INTERPRETER_H
#define TFLM_ENGINE_INTERPRETER_H

#include "arena.h"
#include "kernel.h"
#include "planner.h"
#include "records.h"

typedef struct _tflm_interp_t {
    tflm_model_t *model;
    tflm_arena_t *arena;
    const tflm_planner_t *planner;
    uint32_t n_subgraphs;
    uint32_t n_model_tensors;  // tensors of all subgraphs
    uint32_t n_tensors;        // plus one record per scratch buffer
    uint32_t n_nodes;
    uint32_t subgraphs_at;     // arena offsets of the record arrays
    uint32_t tensors_at;
    uint32_t nodes_at;
    uint32_t head_bytes;       // this interpreter's plan
    uint32_t tail_bytes;       // this interpreter's persistent bytes
    uint32_t tail_at;          // lowest arena offset of its tail
    uint32_t data_bytes;       // audit: kernel data
    uint32_t variable_bytes;   // audit: variable tensors
    bool ready;
    tflm_error_t err;
} tflm_interp_t;

// Builds the interpreter in the arena. On TFLM_ERR_MEMORY, err.needed is the
// exact arena size needed (0 when even the tail did not fit: measure it with
// tflm_interp_measure) and err.given the usable size.
tflm_status_t tflm_interp_init(tflm_interp_t *ip, tflm_model_t *model, tflm_arena_t *arena,
    const tflm_planner_t *planner);

// Tail bytes the model needs, without any memory (a dry run).
tflm_status_t tflm_interp_tail_size(tflm_model_t *model, const tflm_planner_t *planner,
    uint32_t *tail_bytes, tflm_error_t *err);

// Head and tail bytes the model needs, using `work` (at least the tail size
// plus 15 bytes) to build the records; the head need not fit.
tflm_status_t tflm_interp_measure(tflm_model_t *model, const tflm_planner_t *planner,
    void *work, size_t work_len, uint32_t *head_bytes, uint32_t *tail_bytes, tflm_error_t *err);

// Name of the nth distinct op the model uses that this build has no kernel
// for; false when there are fewer than n + 1.
bool tflm_interp_missing_op(tflm_model_t *model, uint32_t nth, char *name, size_t cap);

tflm_status_t tflm_interp_invoke(tflm_interp_t *ip);
tflm_status_t tflm_interp_run_subgraph(tflm_interp_t *ip, uint32_t subgraph);

static inline tflm_tensor_rec_t *tflm_interp_tensor(const tflm_interp_t *ip, uint32_t index) {
    return (tflm_tensor_rec_t *)tflm_arena_ptr(ip->arena, ip->tensors_at) + index;
}
static inline tflm_node_rec_t *tflm_interp_node(const tflm_interp_t *ip, uint32_t index) {
    return (tflm_node_rec_t *)tflm_arena_ptr(ip->arena, ip->nodes_at) + index;
}
static inline tflm_subgraph_rec_t *tflm_interp_subgraph(const tflm_interp_t *ip, uint32_t index) {
    return (tflm_subgraph_rec_t *)tflm_arena_ptr(ip->arena, ip->subgraphs_at) + index;
}
void *tflm_interp_tensor_data(const tflm_interp_t *ip, const tflm_tensor_rec_t *r);

// Inputs and outputs of subgraph 0, as global tensor indices.
uint32_t tflm_interp_num_inputs(const tflm_interp_t *ip);
uint32_t tflm_interp_num_outputs(const tflm_interp_t *ip);
uint32_t tflm_interp_input(const tflm_interp_t *ip, uint32_t i);
uint32_t tflm_interp_output(const tflm_interp_t *ip, uint32_t i);

static inline uint32_t tflm_interp_used_bytes(const tflm_interp_t *ip) {
    return ip->head_bytes + ip->tail_bytes;
}

#endif // TFLM_ENGINE_INTERPRETER_H
