// The interpreter: builds the runtime records of a model in an arena, plans
// the head and runs the operators.
#ifndef TFLM_ENGINE_INTERPRETER_H
#define TFLM_ENGINE_INTERPRETER_H

#include "arena.h"
#include "kernel.h"
#include "patch.h"
#include "plan.h"
#include "planner.h"
#include "records.h"

// Tensors that live in buffers of the user's (pre-allocated, outside the arena).
#define TFLM_MAX_EXTERNAL (8)
// Subgraphs nested in calls (CALL_ONCE, IF, WHILE), subgraph 0 included: a
// deeper model is refused when the interpreter is built. Neither the build
// nor invoke() recurses, so this bounds their frame arrays (a few bytes a
// level), not the stack a board needs; it is the same on every target.
#define TFLM_MAX_CALL_DEPTH (32)
// Ranges of the tail that may change between calls (variable tensors,
// outputs kept in kernel state, resource variables) the interpreter keeps
// for its seal (seal.c); a model with more has them searched at each check.
// One (8 bytes, the count in padding): most models have none, many stateful
// ones a single run of them (an LSTM's two states are two), and a binding's
// interpreter object keeps the size it had without them (on a 32-bit target
// 42 blocks of MicroPython's heap).
#define TFLM_SEAL_SKIPS (1)

typedef struct {
    uint32_t tensor; // tensor index in subgraph 0
    void *data;
    uint32_t len;    // bytes available at data
} tflm_external_t;

// How to build an interpreter.
typedef struct {
    const tflm_planner_t *planner;    // NULL: tflm_interp_default_planner()
    const tflm_plan_t *plan;          // offsets for the offline planner; NULL: the model's metadata
    const tflm_external_t *external;  // pre-allocated tensors
    uint32_t n_external;
    // A gap between other interpreters' tails in a shared arena (left by
    // interpreters that are gone) to build the tail in: it starts gap_top
    // bytes below the arena's top and holds gap_bytes. 0 bytes: no gap, the
    // tail goes below all the others.
    uint32_t gap_top;
    uint32_t gap_bytes;
    // The records and lifetimes of the tensors only: no kernel's prepare()
    // runs (no kernel data, no scratch buffers), so ops this build has no
    // kernel for are allowed; such an interpreter cannot invoke(). The
    // host plans any model this way.
    bool tensors_only;
    // Called for each operator's kernel data once prepare() has filled it
    // (`state`: data eval() changes). The host exports prepared models this
    // way; with it set, data a model already carries is ignored.
    void (*kernel_data)(void *ctx, uint32_t node, const void *data, uint32_t bytes, bool state);
    // With kernel_data: called for each index list, in the prepared data's order.
    void (*index_list)(void *ctx, const uint16_t *list, uint32_t n);
    void *kernel_data_ctx;
    // Memory for the planners' records (tflm_plan_rec_t, one per record)
    // while the head is planned, outside the arena, so that the arena holds
    // only what it keeps: plan_memory(NULL, bytes) gives it (NULL: none, a
    // MemoryError), plan_memory(p, bytes) takes it back. Required (the
    // binding's heap; malloc on a host).
    void *(*plan_memory)(void *old, uint32_t bytes);
    // Overlapped buffers only as TFLM's kernels also run them: an output
    // below its input (engine/overlap.h's forward rule), none above. For
    // plans written into a model, which TFLM may run too (tflm-host plan).
    bool forward_overlaps;
    // A patch-based stage instead of the model's schedule (NULL: the
    // model's; split 0: none), copied at init: tflm.Interpreter's stage=.
    const tflm_schedule_t *stage;
} tflm_config_t;

// Audit categories: what the arena holds, by kind. Their `used` bytes add up
// to head + tail (arena_used_bytes).
typedef enum {
    TFLM_AUDIT_HEAD,            // planned tensors and scratch buffers (shared by reuse)
    TFLM_AUDIT_SUBGRAPHS,       // subgraph records
    TFLM_AUDIT_TENSORS,         // tensor records
    TFLM_AUDIT_SCRATCH,         // scratch buffer records
    TFLM_AUDIT_NODES,           // node records
    TFLM_AUDIT_INDEX_LISTS,     // input/output index lists
    TFLM_AUDIT_KERNEL_DATA,     // kernels' data from prepare()
    TFLM_AUDIT_VARIABLES,       // variable tensors (model state)
    TFLM_AUDIT_RESOURCES,       // resource variables: records and buffers
    TFLM_AUDIT_ALIGNMENT,       // padding that aligns the tail to 16 bytes
    TFLM_AUDIT_COUNT,
} tflm_audit_kind_t;

typedef struct {
    uint32_t used;      // bytes taken, with alignment
    uint32_t requested; // bytes asked for
    uint32_t count;     // allocations
} tflm_audit_t;

extern const char *const tflm_audit_names[TFLM_AUDIT_COUNT];

// (tflm_interp_t: kernel.h names it, for the kernels.)
struct _tflm_interp_t {
    tflm_model_t *model;
    tflm_arena_t *arena;
    const tflm_planner_t *planner;
    uint32_t n_subgraphs;
    uint32_t n_model_tensors;  // tensors of all subgraphs
    uint32_t n_tensors;        // records in the arena: map.n_live, then one per scratch buffer
    // Records of model tensors (records.h): map.rec_of and consts (the
    // constants' records) are a prepared model's, used in place, or NULL.
    tflm_rec_map_t map;
    const tflm_tensor_rec_t *consts;
    uint32_t n_const;
    // A prepared model's subgraph and node records, used in place (NULL:
    // in the arena, at subgraphs_at and nodes_at).
    const tflm_subgraph_rec_t *model_subgraphs;
    const tflm_node_rec_t *model_nodes;
    uint32_t n_nodes;
    uint32_t subgraphs_at;     // arena offsets of the record arrays
    uint32_t tensors_at;
    uint32_t nodes_at;
    uint32_t resources_at;
    uint32_t n_resources;
    uint32_t head_bytes;       // this interpreter's plan
    uint32_t tail_bytes;       // this interpreter's persistent bytes
    uint32_t tail_at;          // lowest arena offset of its tail
    uint32_t tail_start;       // arena tail bytes before this interpreter's
    uint32_t prepare_peak;     // its bytes in use at the busiest moment of prepare()
    uint32_t n_scopes;         // allocation scopes of its lifetimes (rows of the plan picture)
    uint32_t model_data_bytes; // kernel data used in place from a prepared model (not in the arena)
    uint32_t model_data_count;
    uint32_t model_lists_bytes; // index lists used in place from a prepared model (not in the arena)
    uint32_t model_records_bytes; // constants' tensor records used in place from a prepared model
    uint32_t model_nodes_bytes;   // subgraph and node records used in place from a prepared model
    tflm_patch_t patch;        // the patch-based stage (patch.h), split 0: none
    void (*kernel_data)(void *ctx, uint32_t node, const void *data, uint32_t bytes, bool state);
    void (*index_list)(void *ctx, const uint16_t *list, uint32_t n);
    void *kernel_data_ctx;
    tflm_audit_t audit[TFLM_AUDIT_COUNT];
    void *external[TFLM_MAX_EXTERNAL]; // data of pre-allocated tensors (TFLM_AT_EXTERNAL records)
    uint32_t n_external;
    // Where the records' index lists (their `io` offsets) start: the arena,
    // or a prepared model's data (lists_in_model; also the base of a node's
    // data in the model, TFLM_NODE_DATA_IN_MODEL). After
    // tflm_interp_measure(), valid only as long as its work buffer.
    const uint8_t *lists_base;
    bool lists_in_model;
    uint8_t n_seal_skips;      // the seal's (below; here, where it takes no room)
    bool forward_overlaps;     // tflm_config_t.forward_overlaps (here too)
    // The seal (seal.c): checksums of what the build wrote into the tail
    // and invoke() follows, and of a prepared model's data read in place
    // from a rewritable buffer (model offset and bytes; 0 bytes: none).
    uint32_t seal_tail;
    uint32_t seal_model;
    uint32_t sealed_model_at;
    uint32_t sealed_model_bytes;
    // The ranges of the tail the chain skips ([lo, hi) arena offsets, in
    // order, adjacent ones joined), found from the records when the seal is
    // taken; n_seal_skips of them, or TFLM_SEAL_SKIPS + 1 when there are
    // more (then each check searches them).
    uint32_t seal_skip[TFLM_SEAL_SKIPS][2];
    bool stateful;             // kernel data that eval() changes (sealed again after each invoke)
    bool fixed;                // some head offsets came from an offline plan
    bool tensors_only;         // built without kernels (tflm_config_t.tensors_only)
    bool stage_given;          // tflm_config_t.stage was given: `stage` is the stage
    tflm_schedule_t stage;
    bool ready;
    // Asked before each operator and at each return from a subgraph (every
    // pass of a WHILE loop), where invoke() is between operators: true stops
    // the invoke with a RuntimeError ("invoke interrupted"), and the next
    // invoke starts afresh. A host's Ctrl-C stops a long invoke through it;
    // a loop whose condition never turns false runs forever otherwise, as in
    // TFLM. NULL: never asked. Set after tflm_interp_init().
    bool (*interrupt)(void *ctx);
    void *interrupt_ctx;
    // Read at the same points, as the callback is asked: a word not NULL
    // stops the invoke the same way (a binding's pending exception, without
    // a call at every operator). NULL: none.
    void *const volatile *interrupt_word;
    tflm_error_t err;
};

// Builds the interpreter in the arena. On TFLM_ERR_MEMORY, err.needed is the
// exact arena size needed (0 when even the tail did not fit: measure it with
// tflm_interp_measure) and err.given the usable size.
tflm_status_t tflm_interp_init(tflm_interp_t *ip, tflm_model_t *model, tflm_arena_t *arena,
    const tflm_config_t *config);

// The planner used when none is given: the offline planner for a model with
// an offline plan in its metadata, else the greedy one (NULL if neither is
// linked in).
const tflm_planner_t *tflm_interp_default_planner(tflm_model_t *model);

// The tail bytes a model takes, and the bytes tflm_interp_measure needs as
// work space (a dry run, no memory).
tflm_status_t tflm_interp_tail_size(tflm_model_t *model, const tflm_config_t *config,
    uint32_t *tail_bytes, uint32_t *work_bytes, tflm_error_t *err);

// Builds the model in `work` (at least the tail size plus 15 bytes) without
// needing the head to fit, to learn its head, tail and needed bytes.
tflm_status_t tflm_interp_measure(tflm_model_t *model, const tflm_config_t *config,
    void *work, size_t work_len, tflm_interp_t *out);

// Moves tensor `tensor` of subgraph 0 into a buffer of the user's after
// allocation and plans the head again without it (it may shrink).
// ValueError for a tensor that cannot move there, MemoryError when the new
// plan does not fit (the interpreter is then unchanged). `work`: the plan
// records (tflm_interp_plan_records), ip->n_tensors of them, the caller's
// memory (the arena may have none to spare). With an offline plan every
// other buffer keeps its offset.
tflm_status_t tflm_interp_set_external(tflm_interp_t *ip, const tflm_external_t *ext, tflm_plan_rec_t *work);

// The planners' view of the records, one per arena record (ip->n_tensors):
// where, offset and bytes, a scratch buffer's mark, and the lifetimes,
// walked again (the arena keeps none). After the build, an offline plan's
// buffers are all marked fixed. For the build, set_external, the plan
// picture and the reports.
tflm_status_t tflm_interp_plan_records(tflm_interp_t *ip, tflm_plan_rec_t *out);

// Name of the nth distinct op the model uses that this build has no kernel
// for; false when there are fewer than n + 1.
bool tflm_interp_missing_op(tflm_model_t *model, uint32_t nth, char *name, size_t cap);
// The NotImplementedError's message for a model that uses such ops: those
// this project has kernels for but the build left out (TFLM_OPS), with the
// setting that builds them in, and those no kernel implements. Writes at
// most cap bytes (NUL included); returns the whole message's length, 0
// when the build has every op the model uses.
size_t tflm_interp_missing_ops_message(tflm_model_t *model, char *buf, size_t cap);

// Bytes arena `a` needs in all to also hold a model measured with tflm_interp_measure.
uint32_t tflm_interp_needed_in(const tflm_arena_t *a, const tflm_interp_t *measured);

// Runs the model (invoke.c), once tflm_interp_verify() passed. Allocates
// nothing; its stack use does not depend on the model.
tflm_status_t tflm_interp_invoke(tflm_interp_t *ip);
// The same for a caller that has just run tflm_interp_verify() itself, with
// nothing since that could have written the arena or the model.
tflm_status_t tflm_interp_run(tflm_interp_t *ip);

// Puts every piece of state the model carries from one invoke to the next
// back as TFLM's MicroInterpreter::Reset() does (reset.c), in place,
// allocating nothing: variable tensors zeroed (int8 ones at their zero
// point, as built), the variables kernels keep themselves zeroed, each
// kernel's run-time state reset by its `reset` hook, resource variables
// filled again as built. CALL_ONCE does not run its subgraph again, as in
// TFLM. Checks the seal first (tflm_interp_verify) and takes it again.
tflm_status_t tflm_interp_reset(tflm_interp_t *ip);

// The seal (seal.c). The arena's bytes are the user's (a buffer they gave,
// Arena.buffer): everything the tail holds that invoke() and the API turn
// into pointers is checked to be what the build wrote before it is
// followed (where anything given out can write the arena:
// tflm_arena_t.exposed). tflm_interp_seal() takes the checksums (end of
// the build and of set_external), tflm_interp_verify() compares them:
// RuntimeError when the interpreter is not allocated, ValueError when its
// records (or a prepared model's data read in place from a rewritable
// buffer) changed.
void tflm_interp_seal(tflm_interp_t *ip);
// The seal's chain over n words (4-byte aligned) from h (its tests call it).
uint32_t tflm_seal_words(uint32_t h, const uint8_t *p, uint32_t n);
tflm_status_t tflm_interp_compare_seals(tflm_interp_t *ip);
static inline tflm_status_t tflm_interp_verify(tflm_interp_t *ip) {
    // Nothing to compare, without a call (invoke()'s usual case): a built
    // interpreter in an arena nothing given out can write, reading no
    // prepared data in place from a rewritable buffer.
    if (ip->ready && !ip->arena->exposed && ip->sealed_model_bytes == 0) {
        return TFLM_OK;
    }
    return tflm_interp_compare_seals(ip);
}
// After an invoke: the tail's checksum again when kernels keep state in it.
void tflm_interp_seal_tail(tflm_interp_t *ip);
static inline void tflm_interp_seal_state(tflm_interp_t *ip) {
    if (ip->stateful) {
        tflm_interp_seal_tail(ip);
    }
}

// Record `rec` (an index list's entry, not a model tensor's index: see
// tflm_interp_rec_of): in the arena, or a constant's in a prepared model.
static inline const tflm_tensor_rec_t *tflm_interp_tensor(const tflm_interp_t *ip, uint32_t rec) {
    if (rec & TFLM_REC_CONST) {
        return ip->consts + (rec - TFLM_REC_CONST);
    }
    return (const tflm_tensor_rec_t *)tflm_arena_ptr(ip->arena, ip->tensors_at) + rec;
}
// A record the build may change: one in the arena, NULL for a constant's.
static inline tflm_tensor_rec_t *tflm_interp_tensor_mut(const tflm_interp_t *ip, uint32_t rec) {
    return (rec & TFLM_REC_CONST) ? NULL : (tflm_tensor_rec_t *)tflm_arena_ptr(ip->arena, ip->tensors_at) + rec;
}
// The record of model tensor `tensor` (all subgraphs' tensors in order).
static inline uint32_t tflm_interp_rec_of(const tflm_interp_t *ip, uint32_t tensor) {
    return tflm_rec_of(&ip->map, tensor);
}
// The model tensor a record stands for (tflm_rec_tensor).
static inline uint32_t tflm_interp_tensor_of(const tflm_interp_t *ip, uint32_t rec) {
    return tflm_rec_tensor(&ip->map, rec);
}
static inline const tflm_node_rec_t *tflm_interp_node(const tflm_interp_t *ip, uint32_t index) {
    return (ip->model_nodes ? ip->model_nodes : (const tflm_node_rec_t *)tflm_arena_ptr(ip->arena, ip->nodes_at)) + index;
}
static inline const tflm_subgraph_rec_t *tflm_interp_subgraph(const tflm_interp_t *ip, uint32_t index) {
    return (ip->model_subgraphs ? ip->model_subgraphs
                                : (const tflm_subgraph_rec_t *)tflm_arena_ptr(ip->arena, ip->subgraphs_at)) + index;
}
void *tflm_interp_tensor_data(const tflm_interp_t *ip, const tflm_tensor_rec_t *r);
// A node's kernel data: in the arena, or read in place from a prepared model
// (kernels never change data from tflm_prep_alloc(), so it may be in flash).
static inline void *tflm_interp_node_data(const tflm_interp_t *ip, const tflm_node_rec_t *nr) {
    return (nr->flags & TFLM_NODE_DATA_IN_MODEL) ? (void *)(uintptr_t)(ip->lists_base + nr->data)
                                                 : tflm_arena_ptr(ip->arena, nr->data);
}
// A node's or subgraph's index list: inputs, then outputs.
static inline const uint16_t *tflm_interp_io(const tflm_interp_t *ip, uint32_t io) {
    return (const uint16_t *)(ip->lists_base + io);
}

// Inputs and outputs of subgraph 0, as global tensor indices.
uint32_t tflm_interp_num_inputs(const tflm_interp_t *ip);
uint32_t tflm_interp_num_outputs(const tflm_interp_t *ip);
uint32_t tflm_interp_input(const tflm_interp_t *ip, uint32_t i);
uint32_t tflm_interp_output(const tflm_interp_t *ip, uint32_t i);

static inline uint32_t tflm_interp_used_bytes(const tflm_interp_t *ip) {
    return ip->head_bytes + ip->tail_bytes;
}

// The smallest arena that allocates the model alone: head + tail, or more if
// a kernel needs temporary memory in prepare() beyond that.
static inline uint32_t tflm_interp_needed_bytes(const tflm_interp_t *ip) {
    return TFLM_MAX(ip->head_bytes + ip->tail_bytes, ip->prepare_peak);
}

#define TFLM_PLAN_MAX_WIDTH (200)


// Resource variables (resources.c). The op that defines them answers how
// many a model has and, for each id, its buffer's bytes and the byte it
// starts filled with (false: the model is malformed).
typedef tflm_status_t (*tflm_resource_count_fn)(tflm_model_t *m, uint32_t *count, tflm_error_t *err);
typedef bool (*tflm_resource_shape_fn)(tflm_model_t *m, int32_t id, uint32_t *bytes, uint8_t *fill);
// Resource `id`'s bytes and fill as `shape` gives them; a ValueError (or the
// model's own error) when the model is malformed there.
tflm_status_t tflm_resource_shape(tflm_interp_t *ip, tflm_resource_shape_fn shape, uint32_t id, uint32_t *bytes,
    uint8_t *fill);
// A resource's buffer at eval time, NULL for an unknown or never assigned id.
void *tflm_resource_data(const tflm_interp_t *ip, int32_t id, uint32_t *bytes);
// The resource variables' records and buffers in the tail (build.c), from
// VAR_HANDLE's build_state hook (engine/kernel.h), so only a build with it
// has them.
tflm_status_t tflm_build_resources(tflm_build_t *b, tflm_resource_count_fn count, tflm_resource_shape_fn shape);
// Their buffers filled again as tflm_build_resources() filled them (VAR_HANDLE's reset_state hook).
tflm_status_t tflm_reset_resources(tflm_interp_t *ip, tflm_resource_shape_fn shape);

// The records as the plan code sees them (plan.h, overlap.h), with `recs`
// from tflm_interp_plan_records.
tflm_plan_view_t tflm_interp_plan_view(const tflm_interp_t *ip, tflm_plan_rec_t *recs);

// The plan as text: one line per allocation scope, arena offsets across
// `width` columns, one character per tensor, then one line per overlapped
// pair (an output written over the input that dies at its operator). Calls
// `line` for each line. `recs`: from tflm_interp_plan_records.
void tflm_interp_memory_plan(const tflm_interp_t *ip, const tflm_plan_rec_t *recs, uint32_t width,
    void (*line)(void *ctx, const char *text, size_t len), void *ctx);

// Character that stands for a record in the plan picture.
char tflm_interp_plan_char(const tflm_interp_t *ip, uint32_t record);

#endif // TFLM_ENGINE_INTERPRETER_H
