// Between the parts of building an interpreter (engine-internal; the API is
// interpreter.h): interpreter.c runs them in order.
#ifndef TFLM_ENGINE_BUILD_H
#define TFLM_ENGINE_BUILD_H

#include "interpreter.h"

// Checks that every operator has a kernel; the error names the missing ones
// (missing_ops.c).
tflm_status_t tflm_build_check_ops(tflm_interp_t *ip);

// Clears the audit and the prepare() peak, and notes where this
// interpreter's tail starts (build.c).
void tflm_build_reset_counts(tflm_interp_t *ip);

// Dry runs: the tail's bytes, its scratch buffers, and (in ip->prepare_peak)
// the most bytes prepare() had in use at once (build.c).
tflm_status_t tflm_build_measure(tflm_interp_t *ip, uint32_t *tail, uint32_t *n_scratch);

// The real run in ip->arena, with records for scratch_cap scratch buffers;
// *n_scratch: the buffers the kernels asked for (build.c).
tflm_status_t tflm_build_tail(tflm_interp_t *ip, uint32_t scratch_cap, uint32_t *n_scratch);

// Marks every record's lifetime in TFLM's allocation scopes, in recs (one
// per arena record, filled by tflm_interp_plan_records), and checks that
// operators read only defined tensors (lifetimes.c).
tflm_status_t tflm_lifetimes_mark(tflm_interp_t *ip, tflm_plan_rec_t *recs);

// A prepare() context for operator `index` of subgraph s (global node
// `node`), all else zeroed (build.c; lifetimes.c asks hooks with one too).
void tflm_prepare_start(tflm_prepare_t *p, tflm_interp_t *ip, const tflm_model_op_t *op, uint32_t s, uint32_t index,
    uint32_t node, bool dry, tflm_error_t *err);

// Prefixes the error message with the operator it came from (build.c).
tflm_status_t tflm_interp_node_error(tflm_interp_t *ip, uint32_t node, int32_t builtin);

// The byte a variable tensor starts filled with, as TFLM resets it: an
// int8 one's zero point, 0 otherwise (build.c, reset.c).
static inline uint8_t tflm_variable_fill(const tflm_model_t *m, const tflm_model_tensor_t *t) {
    return t->type == TFLM_INT8 && t->zero_point.count > 0 ? (uint8_t)(int8_t)tflm_fb_vec_i64(&m->fb, t->zero_point, 0) : 0;
}

static inline void tflm_interp_audit(tflm_interp_t *ip, tflm_audit_kind_t kind, uint32_t used, uint32_t requested,
    uint32_t count) {
    ip->audit[kind].used += used;
    ip->audit[kind].requested += requested;
    ip->audit[kind].count += count;
}

#endif // TFLM_ENGINE_BUILD_H
