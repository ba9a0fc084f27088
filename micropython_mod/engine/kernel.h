// The interface between the interpreter and the kernels.
//
// prepare() runs twice per operator. The first, dry run only measures:
// tflm_prep_alloc() returns NULL and the kernel returns right after it, so
// the bytes it asks for come from the same code that later fills them. The
// second run allocates in the arena tail and fills the kernel's data.
// prepare() reads everything it needs from the model (shapes, quantization,
// options) and stores what eval() needs in its data: eval() never reads the
// model's structure, only tensor bytes.
#ifndef TFLM_ENGINE_KERNEL_H
#define TFLM_ENGINE_KERNEL_H

#include "model.h"

// At most this many scratch buffers per operator, as in TFLM.
#define TFLM_MAX_SCRATCH_PER_OP (12)
// Inputs plus outputs of one operator.
#define TFLM_MAX_NODE_IO (40)

typedef struct _tflm_interp_t tflm_interp_t;
typedef struct _tflm_build_t tflm_build_t; // an interpreter being built (engine/build.c)

// What prepare() learns about one input or output tensor.
typedef struct {
    int32_t index;          // tensor index in its subgraph, -1 when omitted
    uint8_t type;
    uint8_t ndims;
    bool is_const;          // bytes come from the model
    bool is_variable;
    int32_t dims[TFLM_MAX_DIMS];
    uint32_t elements;
    uint32_t bytes;
    uint32_t n_scales;      // 0: not quantized, 1: per tensor, >1: per channel
    float scale;            // first scale (0 when not quantized)
    int32_t zero_point;     // first zero point
    int32_t quantized_dimension;
    const uint8_t *data;    // constant bytes, NULL otherwise
    tflm_model_tensor_t t;  // the model's tensor, for per-channel values
} tflm_tinfo_t;

typedef struct _tflm_prepare_t {
    tflm_interp_t *ip;
    tflm_model_t *model;
    const tflm_model_op_t *op;
    uint32_t subgraph;
    uint32_t index;           // operator index in its subgraph
    uint32_t node;            // global node index
    bool dry;                 // measuring pass
    uint32_t data_at;         // arena offset of the kernel data, 0 when none
    uint32_t data_bytes;
    // Prepared models (engine/prepared.h): the model offset and size of this
    // operator's data computed on the host (0 bytes: none). prepare() then
    // fills temporary memory (`verify`), which the build compares with it.
    uint32_t prepared_at;
    uint32_t prepared_bytes;
    void *verify;
    bool in_model;            // the data is used in place from the model
    uint32_t streamed_at;     // where the data's streamed words start (tflm_prep_alloc_streamed), else its bytes
    bool streamed_differ;     // a streamed word differs from the prepared model's
    bool state;               // the data changes at run time (tflm_prep_alloc_state)
    uint32_t out0_in_data;    // 1 + offset in the data of output 0's bytes, 0: output 0 is planned
    uint32_t kept;            // 1 + index of the variable the kernel keeps itself, 0: none
    uint32_t kept_at;         // arena offset of its bytes (tflm_prep_keep_variable)
    uint32_t kept_bytes;
    bool failed;              // an allocation failed (err says why)
    uint8_t n_scratch;
    uint32_t scratch_bytes[TFLM_MAX_SCRATCH_PER_OP];
    tflm_error_t *err;
} tflm_prepare_t;

typedef struct _tflm_eval_t {
    void *data;               // the kernel's data from prepare()
    void *const *in;          // input pointers, NULL for omitted inputs
    void *const *out;
    void *const *scratch;
    uint32_t n_in;
    uint32_t n_out;
    tflm_interp_t *ip;
    tflm_error_t *err;
    int32_t call;             // subgraph to run next (tflm_eval_call), or TFLM_EVAL_NO_CALL
    bool resumed;             // eval() runs again after the subgraph it asked for
    bool stop;                // set by eval(): the invoke ends after this operator, successfully
                              // (TFLM's kTfLiteAbort: CIRCULAR_BUFFER's invokes between runs)
} tflm_eval_t;

#define TFLM_EVAL_NO_CALL (-1)

// Control flow: eval() asks the interpreter to run a subgraph once it has
// returned; when that subgraph is done, the interpreter runs the same eval()
// again with e->resumed set, so the operator can finish (or ask again).
// Subgraphs never run inside a kernel's eval(): the stack stays flat.
static inline tflm_status_t tflm_eval_call(tflm_eval_t *e, uint32_t subgraph) {
    e->call = (int32_t)subgraph;
    return TFLM_OK;
}

// Control flow, in eval(): the bytes of subgraph `s`'s input k (k below its
// input count) or output k - inputs, and their size; NULL when there is no
// such tensor. A subgraph's tensors hold what its last run left (invoke.c).
void *tflm_eval_subgraph_tensor(const tflm_eval_t *e, uint32_t s, uint32_t k, uint32_t *bytes);

// Whether an op's output 0 may sit on the bytes of an input (the offline
// plan's aliases, engine/plan.h): the kernels were written so that these run
// with their output there. A view (RESHAPE-like) copies nothing when the
// buffers coincide; an in-place op reads element i of each input before it
// writes element i.
typedef enum {
    TFLM_ALIAS_NONE = 0,
    TFLM_ALIAS_VIEW,
    TFLM_ALIAS_IN_PLACE,
} tflm_alias_t;

// How a node walks its maps, for the engine's row-based features: input 0
// and output 0 are batches of rows (NHWC: rows of w x d values), and output
// row y reads input rows from y * stride_h - pad_h on (clamped at 0).
typedef struct {
    int32_t batches;
    int32_t in_h, in_w, in_d;     // input 0: batches of in_h rows of in_w x in_d values
    int32_t out_h, out_w, out_d;  // output 0, the same way
    int32_t f_h, f_w;             // the window over the input, 1 x 1 when there is none
    int32_t stride_h, stride_w;
    int32_t dil_h, dil_w;
    int32_t pad_h, pad_w;         // leading padding (-1: row y reads rows after y only)
    uint32_t macs;                // multiply-accumulates (or compares) per output pixel
    bool backward;                // overlap(): eval() also runs its rows last first over an input
                                  // below its output (engine/overlap.h, the backward rule)
    bool pixels;                  // overlap(): eval() also keeps the pixel rule (engine/overlap.h)
                                  // over an input the row rule would not allow
} tflm_rows_t;

// A patch of a map (engine/patch.h): an input of in_h x in_w whose padding
// (what the windows reach outside the map) is pad_h, pad_w, and an output of
// out_h x out_w. `data` is the node's data as prepare() left it (e->data
// too: a kernel gives a copy of what it needs the patch's geometry, and
// writes nothing of it: it may lie in flash).
typedef struct {
    int32_t in_h, in_w, pad_h, pad_w, out_h, out_w;
    const void *data;
} tflm_window_t;

// What the engine asks a kernel beyond prepare() and eval(), so that the
// engine itself names no op. A kernel with hooks says so in the third column
// of kernels/kernel_table.txt (`hooks`) and defines
// `const tflm_kernel_hooks_t tflm_<op>_hooks` in its file; a hook it has no
// answer for is NULL.
typedef struct {
    // Overlapped placement (engine/overlap.h): whether the node writes
    // output 0 row by row (all of row y before anything of row y + 1), output
    // row y reading input 0's rows from y * stride_h - pad_h on. Fills
    // batches, in_h, out_h, stride_h and pad_h of `g` (the engine takes the
    // rows' bytes from the tensors). `data` is the node's kernel data; `p`
    // reads its operator as prepare() does (tflm_prep_input(),
    // tflm_prep_opt_*(), nothing that allocates). false: the output may not
    // overlap the input.
    bool (*overlap)(tflm_prepare_t *p, const void *data, tflm_rows_t *g);
    // Patch-based stages (engine/patch.h): the node's geometry, from its data
    // alone; false when it cannot run over part of its input map.
    bool (*window)(const void *data, tflm_rows_t *g);
    // Runs the node over a patch of geometry `w`: e->data is its data, read
    // only (the kernel runs a copy given `w`), e->in[0] and e->out[0] the
    // patch's maps, its other inputs as eval() gets them. The output may
    // lie over the input as overlap() allows for the patch's geometry
    // (engine/overlap.h): the kernel keeps its rows in order then, as eval()
    // does over overlapped tensors.
    tflm_status_t (*run_window)(tflm_eval_t *e, const tflm_window_t *w);
    // A stage in bands of rows (engine/patch.h) may end in a node that
    // reduces all of input 0 (FULLY_CONNECTED of one batch): reduce() gives
    // the elements it reads (`depth`) and the bytes of the sums it keeps
    // between slices of them, from its data alone; false when it cannot take
    // its input in slices. run_slice() adds input elements [k0, k1), at
    // e->in[0], to the sums at `acc` (starting them when k0 is 0) and when
    // `last` writes output 0 from them; e->data is its data, as eval() gets it.
    bool (*reduce)(const void *data, uint32_t *depth, uint32_t *acc_bytes);
    tflm_status_t (*run_slice)(tflm_eval_t *e, void *acc, uint32_t k0, uint32_t k1, bool last);
    // A stage in bands of rows may also hold an element-wise node of two
    // maps shaped as its output (the ADD that ends a residual block): span()
    // gives the elements of its output, from its data alone; false when it
    // broadcasts. run_span() runs it over `count` elements, e->in[0] and
    // e->in[1] the inputs' first, e->out[0] the output's; e->data is its
    // data, read only as run_window()'s.
    bool (*span)(const void *data, uint32_t *count);
    tflm_status_t (*run_span)(tflm_eval_t *e, uint32_t count);
    // State the op's operators share across the model, laid out in the tail
    // once per build (dry and real pass alike) after the variable tensors,
    // whether the model uses the op or not: VAR_HANDLE's is the engine's
    // tflm_build_resources() (interpreter.h), so a build without VAR_HANDLE
    // leaves the resource variables' code out.
    tflm_status_t (*build_state)(tflm_build_t *b);
    // Control flow (engine/lifetimes.c): the subgraphs the node's eval() may
    // ask to run (tflm_eval_call()), read from its operator as prepare()
    // reads it (`p` as for overlap); at most two, -1 for none. The engine
    // walks them to mark the lifetimes of their tensors and checks the
    // indices; prepare() has checked them too when a kernel is built.
    void (*calls)(tflm_prepare_t *p, int32_t called[2]);
    // The interpreter's reset (tflm_interp_reset(), TFLM's
    // MicroInterpreter::Reset): puts the run-time state a node keeps back as
    // TFLM's reset leaves it, which for the ops that have one is as
    // prepare() first set it: its data from tflm_prep_alloc_state(), a
    // variable it keeps (tflm_prep_keep_variable(), zeroed by the engine
    // just before). `e` is what eval() gets, without scratch buffers; data
    // from tflm_prep_alloc() stays unchanged. NULL: nothing of the node's
    // changes (CALL_ONCE's flag stays set, as in TFLM).
    void (*reset)(tflm_eval_t *e);
    // The same for the state build_state() laid out (VAR_HANDLE: the
    // resource variables, filled again as the build filled them).
    tflm_status_t (*reset_state)(tflm_interp_t *ip);
} tflm_kernel_hooks_t;

typedef struct _tflm_kernel_t {
    int16_t op;               // builtin operator code (TFLM_OP_CUSTOM for custom ops)
    // A custom op's name (the model's custom_code): 1 + its offset in
    // tflm_known_customs (below; tflm_kernel_custom()), 0 for builtins.
    uint16_t custom;
    // The tensor types it was built for (tflm_config.h TFLM_TYPES_<OP>, bit
    // t: type t): the build refuses a model whose operator reads or writes
    // another of the types the engine names (engine/missing_ops.c).
    uint32_t types : 24;
    uint32_t alias : 8;       // tflm_alias_t: what its output 0 may share with an input
    tflm_status_t (*prepare)(tflm_prepare_t *p);
    tflm_status_t (*eval)(tflm_eval_t *e);
    const tflm_kernel_hooks_t *hooks; // NULL: none
} tflm_kernel_t;

// Whether a kernel built for `types` (its TFLM_TYPES_<OP>) has the code for
// tensors of `type`. Given constants it folds, so a kernel's branch for a
// type left out of the build compiles to nothing:
//
//     if (in->type == TFLM_FLOAT32 && tflm_type_enabled(TFLM_TYPES_CONV_2D, TFLM_FLOAT32)) { ... }
//
// Soundness: a kernel may leave out only code for tensors of its operator
// (inputs and outputs) of a type not enabled; the build has then refused
// every model that has such a tensor there. Its prepare() still refuses a
// branch left out, as for a type it never had.
static inline bool tflm_type_enabled(uint32_t types, unsigned type) {
    return type < 32u && ((types >> type) & 1u) != 0;
}

// The kernels linked into this build (kernels/registry.c, generated from
// kernels/kernel_table.txt).
extern const tflm_kernel_t tflm_kernels[];
extern const uint32_t tflm_kernel_count;
// Kernel ids: each kernel's place in kernels/kernel_table.txt (the engine's
// host tests' kernel last), the same in every build, so records that name a
// kernel by id (node records, which a prepared model keeps in place) hold in
// any build. tflm_kernel_slots[id] is its index in tflm_kernels, or
// TFLM_KERNEL_ABSENT when this build leaves it out.
#define TFLM_KERNEL_ABSENT (0xffu)
extern const uint8_t tflm_kernel_slots[];
extern const uint32_t tflm_kernel_ids;
// The kernel of id `id`, NULL when this build has none.
static inline const tflm_kernel_t *tflm_kernel_of_id(uint32_t id) {
    uint32_t slot = id < tflm_kernel_ids ? tflm_kernel_slots[id] : TFLM_KERNEL_ABSENT;
    return slot == TFLM_KERNEL_ABSENT ? NULL : &tflm_kernels[slot];
}
// The id of tflm_kernels[index].
uint32_t tflm_kernel_id(uint32_t index);
// Every op of the kernel table, linked into this build or not: builtin codes
// as bits; custom ops in one string, each its name then its TFLM_OPS flag,
// both NUL-terminated, then an empty name.
extern const uint8_t tflm_known_builtins[];
extern const char tflm_known_customs[];

// A kernel's custom op name, NULL for a builtin.
static inline const char *tflm_kernel_custom(const tflm_kernel_t *k) {
    return k->custom ? tflm_known_customs + k->custom - 1 : NULL;
}
// The kernel for builtin `op`, or for op CUSTOM the one named `custom`
// (custom_len bytes, not NUL-terminated); NULL when this build has none.
const tflm_kernel_t *tflm_kernel_find(int32_t op, const uint8_t *custom, uint32_t custom_len, uint32_t *index);
// The kernel for the model's operator code entry `opcode_index`.
const tflm_kernel_t *tflm_kernel_for_opcode(tflm_model_t *m, uint32_t opcode_index, uint32_t *index);

// What prepare() returns after tflm_prep_alloc() or tflm_prep_temp() gave
// NULL: OK in the dry pass, the allocation error otherwise.
static inline tflm_status_t tflm_prep_status(const tflm_prepare_t *p) {
    return p->failed ? p->err->status : TFLM_OK;
}

// prepare() helpers.
static inline uint32_t tflm_prep_num_inputs(const tflm_prepare_t *p) {
    return p->op->inputs.count;
}
static inline uint32_t tflm_prep_num_outputs(const tflm_prepare_t *p) {
    return p->op->outputs.count;
}
tflm_status_t tflm_prep_input(tflm_prepare_t *p, uint32_t i, tflm_tinfo_t *t);
tflm_status_t tflm_prep_output(tflm_prepare_t *p, uint32_t i, tflm_tinfo_t *t);
float tflm_prep_scale(tflm_prepare_t *p, const tflm_tinfo_t *t, uint32_t channel);
int32_t tflm_prep_zero_point(tflm_prepare_t *p, const tflm_tinfo_t *t, uint32_t channel);

// Control flow: the input and output counts of subgraph `s`, and its input
// (or output) i as tflm_prep_input() describes an operator's; ValueError for
// a subgraph or tensor that is not there.
tflm_status_t tflm_prep_subgraph_counts(tflm_prepare_t *p, uint32_t s, uint32_t *n_in, uint32_t *n_out);
tflm_status_t tflm_prep_subgraph_tensor(tflm_prepare_t *p, uint32_t s, bool output, uint32_t i, tflm_tinfo_t *t);

// Builtin options of the operator: `field` is a TFLM_OPT_<TABLE>_<FIELD> of
// engine/options.h (generated from the schema); the default when the
// operator's options are absent, of another table, or lack the field.
uint8_t tflm_prep_opt_u8(tflm_prepare_t *p, uint32_t field, uint8_t dflt);
int32_t tflm_prep_opt_i32(tflm_prepare_t *p, uint32_t field, int32_t dflt);
float tflm_prep_opt_f32(tflm_prepare_t *p, uint32_t field, float dflt);
// A vector-of-int32 option: copies at most `max` values, returns the count
// (0 when absent); ValueError when it holds more than `max`.
tflm_status_t tflm_prep_opt_i32s(tflm_prepare_t *p, uint32_t field, int32_t *values, uint32_t max, uint32_t *count);

// Padding as TFLM computes it (schema Padding: 0 SAME, 1 VALID).
#define TFLM_PADDING_SAME (0)
#define TFLM_PADDING_VALID (1)
// Output size of a window op along one dimension; 0 when the window does not fit.
int32_t tflm_window_out_size(unsigned padding, int32_t in, int32_t filter, int32_t stride, int32_t dilation);
// Leading padding (and the odd extra at the end, `offset`) along one dimension.
int32_t tflm_window_padding(int32_t in, int32_t filter, int32_t stride, int32_t dilation, int32_t out, int32_t *offset);

// The kernel's persistent data (once per operator): NULL in the dry pass.
// eval() must not change it: a prepared model keeps it in flash.
void *tflm_prep_alloc(tflm_prepare_t *p, uint32_t bytes);
// Kernel data that eval() changes (run-time state): always in the tail.
void *tflm_prep_alloc_state(tflm_prepare_t *p, uint32_t bytes);
// Whether this operator's tflm_prep_alloc() data will be read from the
// model (a prepared model in a buffer that cannot change, or the host
// exporting one) rather than kept in the arena: a kernel may then store
// more there, such as constants folded from the weights, at no RAM cost.
bool tflm_prep_data_in_model(const tflm_prepare_t *p);
// Data that only a prepared model keeps (tflm_prep_data_in_model): `bytes`
// filled through the pointer returned, then `words` 32-bit words at
// tflm_align_up(bytes, 4), each given once with tflm_prep_put_u32(). A
// prepared model's words are checked one by one as they come, not from a
// copy in temporary memory, so they cost no RAM at all, not even in
// prepare().
void *tflm_prep_alloc_streamed(tflm_prepare_t *p, uint32_t bytes, uint32_t words);
void tflm_prep_put_u32(tflm_prepare_t *p, uint32_t word, uint32_t value);
// Output 0 lives in the kernel's state data, `offset` bytes in, instead of
// the planned head (TFLM gives VAR_HANDLE's output its resource id this way,
// so its head holds no handles). Call after tflm_prep_alloc_state().
static inline void tflm_prep_output_in_data(tflm_prepare_t *p, uint32_t offset) {
    p->out0_in_data = offset + 1;
}
// Variable input `i` kept by the kernel itself, in `bytes` of run-time state
// in the tail instead of the tensor's declared size (SVDF keeps its memory as
// a ring, without the step the next invoke would drop). The tensor gets no
// other bytes: eval() finds these at e->in[i], and since nothing but this
// operator may use the tensor, nothing reads them as the declared shape
// (tensor() refuses). NULL in the dry pass; zeroed. Separate from the
// kernel's data, which a prepared model can still keep in flash.
void *tflm_prep_keep_variable(tflm_prepare_t *p, uint32_t i, uint32_t bytes);
// Temporary memory for the rest of this prepare(): NULL in the dry pass. Ask
// for it right after tflm_prep_alloc(), before using either, so the dry pass
// measures it too and the arena size stays exact.
void *tflm_prep_temp(tflm_prepare_t *p, uint32_t bytes);
// Asks for a scratch buffer in the head, alive during this operator only.
tflm_status_t tflm_prep_scratch(tflm_prepare_t *p, uint32_t bytes, uint32_t *index);

// Fixed-point form of a real scale ratio; ValueError when the model's scales
// put it out of range (max_shift: largest power of two the kernel handles).
tflm_status_t tflm_prep_multiplier(tflm_prepare_t *p, double real, int32_t max_shift, int32_t *multiplier, int32_t *shift);
// The same for a real strictly between 0 and 1 (shift <= 0), as TFLM's
// QuantizeMultiplierSmallerThanOneExp requires (it aborts otherwise).
// A fused activation's clamp range for a quantized output of the type
// [qmin, qmax] (tflm_activation_range_quantized): a ValueError where the
// reference refuses it.
tflm_status_t tflm_prep_activation_range(tflm_prepare_t *p, unsigned activation, float scale, int32_t zero_point,
    int32_t qmin, int32_t qmax, int32_t *act_min, int32_t *act_max);
tflm_status_t tflm_prep_multiplier_below_one(tflm_prepare_t *p, double real, int32_t *multiplier, int32_t *shift);
// Per output channel c < n of a convolution or fully connected layer: the
// fixed-point form of in's scale * w's scale for c / out's scale (w's one
// scale for all when it has one), the shifts as int8 (TFLM's per-channel
// layout).
tflm_status_t tflm_prep_channel_multipliers(tflm_prepare_t *p, const tflm_tinfo_t *in, const tflm_tinfo_t *w,
    const tflm_tinfo_t *out, uint32_t n, int32_t max_shift, int32_t *multipliers, int8_t *shifts);

// Checks the input/output counts.
tflm_status_t tflm_prep_expect_io(tflm_prepare_t *p, uint32_t min_in, uint32_t max_in, uint32_t n_out);
// NotImplementedError naming a tensor type.
tflm_status_t tflm_prep_unsupported_type(tflm_prepare_t *p, const char *what, unsigned type);

// The checks kernels share, each a ValueError (NotImplementedError for a
// type) with the same message whichever kernel fails it. A kernel's
// prepare() is then: the shared checks, the op's own checks, the
// quantization it derives, and its data; keep each part short (a function
// of its own when it is long).
//
// One input and one output (an element-wise op: ABS, LOGISTIC, CAST, ...):
//
//     static const uint8_t types[] = { TFLM_FLOAT32, TFLM_INT8, TFLM_INT16 };
//     tflm_tinfo_t in, out;
//     uint8_t kind = 0; // 0, 1 or 2: the input's type's place in `types`
//     tflm_status_t st = tflm_prep_unary(p, types, sizeof(types), &in, &out, &kind);
//     if (st == TFLM_OK && kind != 0) {
//         st = tflm_prep_positive_scales(p, &in, &out);
//     }
//     if (st) {
//         return st;
//     }
//
// Ops whose output type differs (CAST, QUANTIZE) take the parts:
// tflm_prep_io_1_1(), then tflm_prep_type_in() for each tensor, then
// tflm_prep_same_elements(). Two or three inputs (GATHER_ND, SELECT_V2):
//
//     tflm_tinfo_t params, indices, out;
//     tflm_status_t st = tflm_prep_io_2_1(p, &params, &indices, &out);
//
// (binary arithmetic: tflm_binary_io() and the broadcast plans of
// kernels/broadcast.h).

// Exactly one input and one output, both present; reads them.
tflm_status_t tflm_prep_io_1_1(tflm_prepare_t *p, tflm_tinfo_t *in, tflm_tinfo_t *out);
// The same with two and three inputs.
tflm_status_t tflm_prep_io_2_1(tflm_prepare_t *p, tflm_tinfo_t *a, tflm_tinfo_t *b, tflm_tinfo_t *out);
tflm_status_t tflm_prep_io_3_1(tflm_prepare_t *p, tflm_tinfo_t *a, tflm_tinfo_t *b, tflm_tinfo_t *c, tflm_tinfo_t *out);
// The tensor's type is one of types[0..n) (NotImplementedError naming `what`
// otherwise); *kind: its place in the list (may be NULL).
tflm_status_t tflm_prep_type_in(tflm_prepare_t *p, const char *what, const tflm_tinfo_t *t, const uint8_t *types,
    uint32_t n, uint8_t *kind);
// b has a's type.
tflm_status_t tflm_prep_same_type(tflm_prepare_t *p, const tflm_tinfo_t *a, const tflm_tinfo_t *b);
// b has as many elements as a.
tflm_status_t tflm_prep_same_elements(tflm_prepare_t *p, const tflm_tinfo_t *a, const tflm_tinfo_t *b);
// Both are quantized with a positive scale (every multiplier divides by it).
tflm_status_t tflm_prep_positive_scales(tflm_prepare_t *p, const tflm_tinfo_t *a, const tflm_tinfo_t *b);
// An element-wise op's preamble: tflm_prep_io_1_1(), the input's type one of
// `types` (*kind its place; kind may be NULL), the output of the same type
// and element count.
tflm_status_t tflm_prep_unary(tflm_prepare_t *p, const uint8_t *types, uint32_t n_types, tflm_tinfo_t *in,
    tflm_tinfo_t *out, uint8_t *kind);
// An int8 element-wise function as a table of its 256 outputs (by input
// byte, as uint8), as TensorFlow Lite and TFLM build theirs: each input
// dequantized in float, f of it times `inverse` (the output scale's float
// inverse), rounded half away from zero, plus the output's zero point in
// float. Then clamped in float (TF Lite's: an overflow gives 127, NaN
// -128), or with `x86` converted as x86 converts (NaN and overflow give
// INT32_MIN) and clamped (TFLM's, built on x86).
void tflm_prep_table_s8(const tflm_tinfo_t *in, const tflm_tinfo_t *out, float inverse, float (*f)(float), bool x86,
    int8_t *table);

// An op along an axis tensor (ARG_MAX/ARG_MIN, CUMSUM): two inputs and one
// output, the input float32 or int8, the axis int32.
static inline tflm_status_t tflm_prep_axis_io(tflm_prepare_t *p, tflm_tinfo_t *in, tflm_tinfo_t *axis,
    tflm_tinfo_t *out) {
    tflm_status_t st = tflm_prep_io_2_1(p, in, axis, out);
    if (st) {
        return st;
    }
    if (in->type != TFLM_FLOAT32 && in->type != TFLM_INT8) {
        return tflm_prep_unsupported_type(p, "input", in->type);
    }
    if (axis->type != TFLM_INT32) {
        return tflm_prep_unsupported_type(p, "axis", axis->type);
    }
    return TFLM_OK;
}

#endif // TFLM_ENGINE_KERNEL_H
