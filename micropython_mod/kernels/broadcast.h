// Broadcasting of two inputs (or three: SELECT_V2) onto an output, shared by
// the elementwise kernels (ADD, SUB, MUL, DIV, MINIMUM, MAXIMUM, the
// comparisons and logical ops, FLOOR_DIV, FLOOR_MOD, SQUARED_DIFFERENCE,
// SELECT_V2, PRELU) and BROADCAST_TO (its input on both sides).
//
// prepare() plans the loops: shapes are aligned on their last dimension,
// dimensions of extent 1 dropped and neighbours that walk every input alike
// fused, as TFLM's BroadcastBinaryOpSimple does. The plan is stored in the
// kernel data as int32 n, extent[n], step1[n], step2[n] (and step3[n] for
// three inputs), innermost first; the steps are element strides of the
// inputs, 0 where they broadcast. eval() walks it row by row: the innermost
// loop is left to the kernel.
#ifndef TFLM_KERNELS_BROADCAST_H
#define TFLM_KERNELS_BROADCAST_H

#include "engine/kernel.h"
#include "engine/schema.h"

typedef struct {
    int32_t n;
    int32_t extent[TFLM_MAX_DIMS];
    int32_t step1[TFLM_MAX_DIMS];
    int32_t step2[TFLM_MAX_DIMS];
    int32_t step3[TFLM_MAX_DIMS];  // the third input's, for three-input plans
    int32_t inputs;                // 2 or 3
} tflm_bcast_plan_t;

// The two inputs and the output of a binary element-wise op: ValueError
// unless all three are there.
tflm_status_t tflm_binary_io(tflm_prepare_t *p, tflm_tinfo_t *in1, tflm_tinfo_t *in2, tflm_tinfo_t *out);
// ValueError unless both inputs have the output's type.
tflm_status_t tflm_binary_same_types(tflm_prepare_t *p, const tflm_tinfo_t *in1, const tflm_tinfo_t *in2,
    const tflm_tinfo_t *out);

// A fused activation's range in a kernel's data: float or integer.
typedef union {
    int32_t i;
    float f;
} tflm_bound_t;

// ADD, SUB, MUL and DIV share their first checks: two inputs and an output
// of one type among `types` (`kind`: its index there, the output's type
// deciding), quantized ones (int8, int16) with scales, a fused activation
// (option `activation_field`) these kernels take, and the broadcast plan.
typedef struct {
    tflm_tinfo_t in1, in2, out;
    uint8_t kind;
    uint8_t activation;
    bool quantized;
    tflm_bcast_plan_t plan;
} tflm_arith_t;

tflm_status_t tflm_arith_prepare(tflm_prepare_t *p, const char *name, const uint8_t *types, uint32_t n_types,
    uint32_t activation_field, tflm_arith_t *a);
// Zero point offsets of a quantized op: added to the inputs (their zero
// points negated) and to the output.
typedef struct {
    int32_t in1;
    int32_t in2;
    int32_t out;
} tflm_arith_offsets_t;

// MUL's and DIV's data: one rescaling of the output.
typedef struct {
    uint8_t kind;
    int8_t shift;
    uint8_t reserved[2];
    tflm_arith_offsets_t off;
    int32_t multiplier;
    tflm_bound_t act_min, act_max;
    int32_t plan[];         // the broadcast plan (tflm_bcast_alloc)
} tflm_arith_data_t;

// What ADD, SUB, MUL and DIV keep alike in their data: the kind, the
// activation's range for the output's type (float32, int32, or the quantized
// type's range in the output's scale) and, quantized, the offsets. The data
// starts zeroed: float and int32 ones keep offsets of 0.
void tflm_arith_store(const tflm_arith_t *a, uint8_t *kind, tflm_bound_t *act_min, tflm_bound_t *act_max,
    tflm_arith_offsets_t *offsets);
// MUL's and DIV's data, those fields set; NULL: tflm_prep_status(p) says why.
tflm_arith_data_t *tflm_arith_alloc(tflm_prepare_t *p, const tflm_arith_t *a);

// Checks that each input dimension is 1 or the output's (shapes aligned on
// the last dimension) and plans the loops. ValueError otherwise.
tflm_status_t tflm_bcast_plan(tflm_prepare_t *p, const tflm_tinfo_t *a, const tflm_tinfo_t *b,
    const tflm_tinfo_t *out, tflm_bcast_plan_t *plan);

// The same for three inputs (SELECT_V2's condition, x and y).
tflm_status_t tflm_bcast_plan3(tflm_prepare_t *p, const tflm_tinfo_t *a, const tflm_tinfo_t *b,
    const tflm_tinfo_t *c, const tflm_tinfo_t *out, tflm_bcast_plan_t *plan);

// Bytes the stored plan takes in the kernel data (a multiple of 4).
static inline uint32_t tflm_bcast_bytes(const tflm_bcast_plan_t *plan) {
    return 4u + 4u * (1u + (uint32_t)plan->inputs) * (uint32_t)plan->n;
}

void tflm_bcast_store(const tflm_bcast_plan_t *plan, int32_t *dst);

// A broadcasting kernel's data: `header` bytes (a multiple of 4) for the
// kernel's own fields, `plan` stored right after them. NULL:
// tflm_prep_status(p) says why.
void *tflm_bcast_alloc(tflm_prepare_t *p, const tflm_bcast_plan_t *plan, uint32_t header);
// The same for a two-input kernel after planning `a` and `b` onto `out`
// (tflm_bcast_plan). NULL with *st set on an error.
void *tflm_bcast_data(tflm_prepare_t *p, const tflm_tinfo_t *a, const tflm_tinfo_t *b, const tflm_tinfo_t *out,
    uint32_t header, tflm_status_t *st);
// The prepare() of a broadcasting element-wise op whose inputs have the
// output's type (FLOOR_DIV, LOGICAL_OR, MAXIMUM, SQUARED_DIFFERENCE, ...):
// io[] in1, in2, out (tflm_binary_io), the output's type one of
// types[0..n_types) (*kind its place; kind may be NULL), both inputs of it,
// then the data as tflm_bcast_data makes it. NULL with *st set on an error.
void *tflm_binary_data(tflm_prepare_t *p, const uint8_t *types, uint32_t n_types, uint32_t header,
    tflm_tinfo_t io[3], uint8_t *kind, tflm_status_t *st);

// Walks a stored plan: the kernel handles `len` elements of each row, input 1
// at `at1` stepping by `inc1`, input 2 at `at2` by `inc2` (input 3 at `at3`
// by `inc3` in a three-input plan), output at `out` contiguously, then calls
// tflm_bcast_next() (tflm_bcast3_next()) for the next row.
typedef struct {
    const int32_t *plan;
    int32_t n;
    int32_t len;
    int32_t inc1;
    int32_t inc2;
    int32_t inc3;
    uint32_t at1;
    uint32_t at2;
    uint32_t at3;
    uint32_t out;
    int32_t idx[TFLM_MAX_DIMS];
} tflm_bcast_iter_t;

// False when the output is empty (nothing to do).
bool tflm_bcast_begin(tflm_bcast_iter_t *it, const int32_t *plan);
bool tflm_bcast_next(tflm_bcast_iter_t *it);
// The next block of rows: the rows along the plan's second dimension
// (extent[1], steps step1[1] and step2[1]) are the caller's to walk.
bool tflm_bcast_next_block(tflm_bcast_iter_t *it);
bool tflm_bcast3_begin(tflm_bcast_iter_t *it, const int32_t *plan);
bool tflm_bcast3_next(tflm_bcast_iter_t *it);

// The element-wise loop of a binary kernel over a stored plan, one walker
// per element type: output value i is op(ctx, a, b) of the inputs' values.
// Walkers and ops are inlined (op is a static function given as a
// constant), so each call compiles to the loop with the op written in. The
// row's fields are read into locals: stores to the output could alias `it`.
// TFLM_BCAST_WALKER_TO gives another output type (the comparisons' bools).
#define TFLM_BCAST_WALKER(name, T) TFLM_BCAST_WALKER_TO(name, T, T)
#define TFLM_BCAST_WALKER_TO(name, T, R) \
    static TFLM_ALWAYS_INLINE void name(const int32_t *plan, const T *in1, const T *in2, R *out, \
        R (*op)(const void *ctx, T a, T b), const void *ctx) { \
        tflm_bcast_iter_t it; \
        for (bool more = tflm_bcast_begin(&it, plan); more; more = tflm_bcast_next(&it)) { \
            const T *x = in1 + it.at1, *y = in2 + it.at2; \
            R *o = out + it.out; \
            const int32_t len = it.len, inc1 = it.inc1, inc2 = it.inc2; \
            for (int32_t i = 0; i < len; ++i) { \
                o[i] = op(ctx, x[i * inc1], y[i * inc2]); \
            } \
        } \
    }

// The same with the rows' common forms written out: both inputs contiguous,
// or the second a single value (a per-row operand), so the loop steps
// pointers instead of multiplying indices; and the rows along
// the plan's second dimension walked here, tflm_bcast_next_block() called
// once per block of them. For the kernels that time matters most in; the
// others keep the smaller walker.
#define TFLM_BCAST_WALKER_FAST(name, T) \
    static TFLM_ALWAYS_INLINE void name##_row(const T *x, const T *y, T *o, int32_t len, int32_t inc1, \
        int32_t inc2, T (*op)(const void *ctx, T a, T b), const void *ctx) { \
        if (inc1 == 1 && inc2 == 1) { \
            int32_t i = 0; \
            for (; i + 2 <= len; i += 2) { /* two at a time: half the loop's steps */ \
                o[i] = op(ctx, x[i], y[i]); \
                o[i + 1] = op(ctx, x[i + 1], y[i + 1]); \
            } \
            if (i < len) { \
                o[i] = op(ctx, x[i], y[i]); \
            } \
        } else if (inc1 == 1 && inc2 == 0) { \
            const T b = *y; \
            for (int32_t i = 0; i < len; ++i) { \
                o[i] = op(ctx, x[i], b); \
            } \
        } else { \
            for (int32_t i = 0; i < len; ++i) { \
                o[i] = op(ctx, x[i * inc1], y[i * inc2]); \
            } \
        } \
    } \
    static TFLM_ALWAYS_INLINE void name(const int32_t *plan, const T *in1, const T *in2, T *out, \
        T (*op)(const void *ctx, T a, T b), const void *ctx) { \
        const int32_t n = plan[0]; \
        const int32_t rows = n > 1 ? plan[2] : 1, step1 = n > 1 ? plan[2 + n] : 0, \
            step2 = n > 1 ? plan[2 + 2 * n] : 0; \
        tflm_bcast_iter_t it; \
        for (bool more = tflm_bcast_begin(&it, plan); more; more = tflm_bcast_next_block(&it)) { \
            const T *x = in1 + it.at1, *y = in2 + it.at2; \
            T *o = out + it.out; \
            const int32_t len = it.len, inc1 = it.inc1, inc2 = it.inc2; \
            for (int32_t r = 0; r < rows; ++r, x += step1, y += step2, o += len) { \
                name##_row(x, y, o, len, inc1, inc2, op, ctx); \
            } \
        } \
    }

TFLM_BCAST_WALKER(tflm_bcast_float32, float)
TFLM_BCAST_WALKER(tflm_bcast_int8, int8_t)
TFLM_BCAST_WALKER(tflm_bcast_int16, int16_t)
TFLM_BCAST_WALKER(tflm_bcast_int32, int32_t)
TFLM_BCAST_WALKER(tflm_bcast_int64, int64_t)

// Clamp range of a fused activation for an int32 output, as TFLM's
// CalculateActivationRange<int32_t> gives it.
static inline void tflm_activation_range_int32(unsigned activation, int32_t *act_min, int32_t *act_max) {
    *act_min = INT32_MIN;
    *act_max = INT32_MAX;
    if (activation == TFLM_ACT_RELU) {
        *act_min = 0;
    } else if (activation == TFLM_ACT_RELU6) {
        *act_min = 0;
        *act_max = 6;
    } else if (activation == TFLM_ACT_RELU_N1_TO_1) {
        *act_min = -1;
        *act_max = 1;
    }
}

#endif // TFLM_KERNELS_BROADCAST_H
