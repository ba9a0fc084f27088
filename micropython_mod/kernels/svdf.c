// SVDF: float32, and int8 input with int8 feature weights and int16 (or
// int8) time weights and activation state, bit-exact with TFLM's reference.
// The activation state, a variable tensor in the model, is kept by the
// kernel in a smaller form of its own (svdf_ring_t below).
#include "kernels/kernels.h"
#include "kernels/dot.h"
#include "kernels/fold.h"
#include "engine/fmath.h"
#include "engine/quant.h"
#include "engine/schema.h"

#if TFLM_KERNEL_SVDF

// SVDFOptions fields

// Inputs
#define SVDF_INPUT (0)
#define SVDF_WEIGHTS_FEATURE (1)
#define SVDF_WEIGHTS_TIME (2)
#define SVDF_BIAS (3)
#define SVDF_STATE (4)

enum { SVDF_FLOAT32, SVDF_INT16_STATE, SVDF_INT8_STATE };

// The operator's sizes, from its tensors' shapes (svdf_shape).
typedef struct {
    int32_t batches, input_size, filters, units, rank, memory;
} svdf_sizes_t;

typedef struct {
    uint8_t kind;
    uint8_t activation;    // float only: TFLM's integer path has none
    uint8_t flags;         // SVDF_HAS_BIAS, SVDF_FOLDED
    int8_t feature_shift;  // input * feature weights -> state
    svdf_sizes_t size;
    int32_t input_zero_point;
    int32_t state_zero_point;
    int32_t output_zero_point;
    int32_t feature_multiplier;
    int32_t output_multiplier; // state * time weights -> output
    int32_t output_shift;
} svdf_data_t;

#define SVDF_HAS_BIAS (0x01)
// A prepared model's integer SVDF: the data is followed by each filter's
// feature start (the input offset times its feature weights' sum), then
// each unit's start (its bias less the state's zero point times its filters'
// time weights' sum), computed once on the host and read from flash, so the
// loops add no offset per value.
#define SVDF_FOLDED (0x02)

static const int32_t *svdf_starts(const svdf_data_t *d) {
    return (const int32_t *)(d + 1);
}

// The activation state, kept by the kernel (tflm_prep_keep_variable): TFLM's
// variable holds `memory` steps per filter, shifts them all left by one each
// invoke and writes the newest last, so its oldest step is dropped before
// anything reads it. Here each filter keeps memory - 1 steps in a ring,
// oldest at `pos`: an invoke reads them in TFLM's order, oldest first, adds
// the newest step, then writes it over the oldest. Nothing moves.
typedef struct {
    uint32_t pos;   // ring slot of the oldest step, the same for every filter
} svdf_ring_t;      // followed by [batch][filter][memory - 1] steps

static inline uint32_t svdf_ring_bytes(int32_t cells, int32_t memory, uint32_t elem) {
    return (uint32_t)sizeof(svdf_ring_t) + (uint32_t)cells * (uint32_t)(memory - 1) * elem;
}

// As TFLM resets it: an int8 state starts at its zero point (int16 and
// float32 ones, and the ring's position, at 0, as the engine zeroed them).
static void svdf_fill_int8(svdf_ring_t *ring, uint32_t cells, int32_t memory, int32_t zero_point) {
    memset(ring + 1, (int)(uint8_t)(int8_t)zero_point, (size_t)cells * (size_t)(memory - 1));
}

// The position this invoke reads from; the next one starts a slot later.
static inline int32_t svdf_ring_advance(svdf_ring_t *ring, int32_t n_slots) {
    uint32_t pos = ring->pos;
    if (pos >= (uint32_t)n_slots) {
        pos = 0; // memory 1 (no slots); never otherwise
    }
    ring->pos = pos + 1 < (uint32_t)n_slots ? pos + 1 : 0;
    return (int32_t)pos;
}

static float svdf_activation(uint8_t activation, float x) {
    switch (activation) {
        case TFLM_ACT_RELU:
            return 0.0f < x ? x : 0.0f;
        case TFLM_ACT_RELU_N1_TO_1:
            x = 1.0f < x ? 1.0f : x;
            return -1.0f < x ? x : -1.0f;
        case TFLM_ACT_RELU6:
            x = 6.0f < x ? 6.0f : x;
            return 0.0f < x ? x : 0.0f;
        case TFLM_ACT_TANH:
            return tflm_tanhf(x);
        case TFLM_ACT_SIGN_BIT: {
            uint32_t bits;
            memcpy(&bits, &x, sizeof(bits));
            return (bits >> 31) ? 1.0f : 0.0f;
        }
        default:
            return x;
    }
}

static void tflm_svdf_float32(const svdf_data_t *d, const float *input, const float *wfeature,
    const float *wtime, const float *bias, svdf_ring_t *ring, float *scratch, float *output) {
    const int32_t n_batch = d->size.batches, n_input = d->size.input_size, n_filter = d->size.filters;
    const int32_t n_unit = d->size.units, n_rank = d->size.rank, n_memory = d->size.memory, n_slots = n_memory - 1;
    const int32_t pos = svdf_ring_advance(ring, n_slots);
    float *steps = (float *)(ring + 1);
    // Per filter: the feature projection (the newest step), then the time
    // filter over the kept steps oldest first and the newest, summed in
    // TFLM's order; the newest then replaces the oldest.
    for (int32_t b = 0; b < n_batch; ++b) {
        const float *in = input + b * n_input;
        const float *w = wfeature;
        for (int32_t f = 0; f < n_filter; ++f, w += n_input) {
            const float newest = tflm_dot_f32(0.0f, w, in, n_input);
            const float *wt = wtime + f * n_memory;
            float *s = steps + (b * n_filter + f) * n_slots;
            float sum = tflm_dot_f32(0.0f, wt, s + pos, n_slots - pos);
            sum = tflm_dot_f32(sum, wt + n_slots - pos, s, pos);
            scratch[b * n_filter + f] = sum + newest * wt[n_slots];
            if (n_slots > 0) {
                s[pos] = newest;
            }
        }
    }
    // Bias, then the rank filters of each unit summed in order.
    for (int32_t b = 0; b < n_batch; ++b) {
        const float *s = scratch + b * n_filter;
        float *out = output + b * n_unit;
        for (int32_t u = 0; u < n_unit; ++u) {
            float acc = bias ? bias[u] : 0.0f;
            for (int32_t r = 0; r < n_rank; ++r) {
                acc += s[u * n_rank + r];
            }
            out[u] = svdf_activation(d->activation, acc);
        }
    }
}

// The integer variants differ only in the state / time weights type. The
// kernel data is read into locals first: stores to the int8 state or output
// could alias it, and the compiler would reload it in the loops. Each unit's
// sum comes straight from its filters' time sums: TFLM keeps those and the
// unit sums in scratch buffers, but they wrap modulo 2^32 in any order, so
// the output is the same without them.
// A macro, not an always-inline function given the state's type and the
// folding as constants: that form, 1.3-1.5% faster on the Cortex-M3 and M4
// for an int8 state, cost keyword_scrambled_8bit 9.4% more instructions per
// invoke on the Cortex-M0 (and keyword_scrambled 0.2% on the M3; QEMU
// instruction counts).
#define SVDF_INTEGER_BODY(T, T_MIN, T_MAX, TIME_DOT, FOLD) \
    const int32_t n_batch = d->size.batches, n_input = d->size.input_size; \
    const int32_t n_unit = d->size.units, n_rank = d->size.rank, n_memory = d->size.memory, n_slots = n_memory - 1; \
    const int32_t state_zp = d->state_zero_point; \
    /* Folded (a literal 1): offsets 0 in the loops, the starts instead. */ \
    const int32_t x_off = (FOLD) ? 0 : -d->input_zero_point, s_zp = (FOLD) ? 0 : state_zp; \
    const int32_t *f_start = (FOLD) ? svdf_starts(d) : NULL; \
    const int32_t *u_start = (FOLD) ? f_start + n_unit * n_rank : NULL; \
    const tflm_requant_t feature_rq = tflm_requant_init(d->feature_multiplier, d->feature_shift); \
    const tflm_requant_t output_rq = tflm_requant_init(d->output_multiplier, d->output_shift); \
    const int32_t output_zp = d->output_zero_point; \
    const int32_t pos = svdf_ring_advance(ring, n_slots); \
    T *s = (T *)(ring + 1); \
    for (int32_t b = 0; b < n_batch; ++b) { \
        const int8_t *in = input + b * n_input; \
        const int8_t *wf = wfeature; \
        const T *wt = wtime; \
        for (int32_t u = 0; u < n_unit; ++u) { \
            uint32_t acc = (FOLD) ? (uint32_t)u_start[u] : bias ? (uint32_t)bias[u] : 0u; \
            for (int32_t r = 0; r < n_rank; ++r, wf += n_input, wt += n_memory, s += n_slots) { \
                uint32_t dot = tflm_dot_s8_row(wf, in, n_input, x_off) \
                    + ((FOLD) ? (uint32_t)f_start[u * n_rank + r] : 0u); \
                int32_t v = tflm_requant(&feature_rq, (int32_t)dot); \
                /* TFLM clamps first, then adds the zero point, wrapping into T. */ \
                const T newest = (T)tflm_wrap_add(tflm_clamp(v, T_MIN, T_MAX), state_zp); \
                acc += TIME_DOT(wt, s + pos, n_slots - pos, s_zp) + TIME_DOT(wt + n_slots - pos, s, pos, s_zp) \
                    + (uint32_t)wt[n_slots] * (uint32_t)((int32_t)newest - s_zp); \
                if (n_slots > 0) { \
                    s[pos] = newest; \
                } \
            } \
            int32_t v = tflm_requant(&output_rq, (int32_t)acc); \
            output[b * n_unit + u] = (int8_t)tflm_clamp(tflm_wrap_add(v, output_zp), -128, 127); \
        } \
    }

// One filter's time sum: its memory steps times the time weights, the
// state's zero point taken off (wrapping modulo 2^32).
static inline uint32_t svdf_time_dot_s16(const int16_t *w, const int16_t *s, int32_t n, int32_t zp) {
    uint32_t acc = 0;
    if (zp == 0) {
        // The usual int16 state (zero point 0): one register fewer in the loop.
        for (int32_t m = 0; m < n; ++m) {
            acc += (uint32_t)(w[m] * s[m]);
        }
        return acc;
    }
    for (int32_t m = 0; m < n; ++m) {
        acc += (uint32_t)w[m] * (uint32_t)(s[m] - zp);
    }
    return acc;
}

// The int8 state's: the int8 row dot product with the offset -zp.
static inline uint32_t svdf_time_dot_s8(const int8_t *w, const int8_t *s, int32_t n, int32_t zp) {
    return tflm_dot_s8_row(w, s, n, -zp);
}

static void tflm_svdf_int16(const svdf_data_t *d, const int8_t *input, const int8_t *wfeature,
    const int16_t *wtime, const int32_t *bias, svdf_ring_t *ring, int8_t *output) {
    if (d->flags & SVDF_FOLDED) {
        SVDF_INTEGER_BODY(int16_t, -32768, 32767, svdf_time_dot_s16, 1)
    } else {
        SVDF_INTEGER_BODY(int16_t, -32768, 32767, svdf_time_dot_s16, 0)
    }
}

static void tflm_svdf_int8(const svdf_data_t *d, const int8_t *input, const int8_t *wfeature,
    const int8_t *wtime, const int32_t *bias, svdf_ring_t *ring, int8_t *output) {
    if (d->flags & SVDF_FOLDED) {
        SVDF_INTEGER_BODY(int8_t, -128, 127, svdf_time_dot_s8, 1)
    } else {
        SVDF_INTEGER_BODY(int8_t, -128, 127, svdf_time_dot_s8, 0)
    }
}

// The operator's tensors, as prepare() checks them.
typedef struct {
    tflm_tinfo_t in, wf, wt, bias, state, out;
} svdf_tensors_t;

// Reads the tensors: all five inputs listed, as TFLM wants (the bias may be
// an omitted one), the activation state a variable.
static tflm_status_t svdf_read(tflm_prepare_t *p, svdf_tensors_t *t) {
    tflm_status_t st = tflm_prep_expect_io(p, 5, 5, 1);
    if (st || (st = tflm_prep_input(p, SVDF_INPUT, &t->in)) || (st = tflm_prep_input(p, SVDF_WEIGHTS_FEATURE, &t->wf))
        || (st = tflm_prep_input(p, SVDF_WEIGHTS_TIME, &t->wt)) || (st = tflm_prep_input(p, SVDF_BIAS, &t->bias))
        || (st = tflm_prep_input(p, SVDF_STATE, &t->state)) || (st = tflm_prep_output(p, 0, &t->out))) {
        return st;
    }
    if (t->in.index < 0 || t->wf.index < 0 || t->wt.index < 0 || t->state.index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input, weights or activation state missing");
    }
    if (!t->state.is_variable) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the activation state must be a variable tensor");
    }
    return TFLM_OK;
}

// The sizes, from the shapes and the rank option, and *n_cells, batches x
// filters; every buffer is at most a few KB on a microcontroller, so larger
// ones are refused (this keeps the sizes computed from them in range).
static tflm_status_t svdf_shape(tflm_prepare_t *p, const svdf_tensors_t *t, svdf_sizes_t *g, uint32_t *n_cells) {
    const tflm_tinfo_t *in = &t->in, *wf = &t->wf, *wt = &t->wt, *bias = &t->bias, *state = &t->state, *out = &t->out;
    if (in->ndims != 2 || wf->ndims != 2 || wt->ndims != 2 || state->ndims != 2 || out->ndims != 2) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input, weights, state and output need 2 dimensions");
    }
    g->rank = tflm_prep_opt_i32(p, TFLM_OPT_SVDF_RANK, 0);
    g->batches = in->dims[0];
    g->input_size = in->dims[1];
    g->filters = wf->dims[0];
    g->memory = wt->dims[1];
    if (g->memory < 1) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "the time weights need a memory of at least 1");
    }
    if (g->rank <= 0 || g->filters % g->rank != 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "rank %d does not divide %d filters", (int)g->rank, (int)g->filters);
    }
    g->units = g->filters / g->rank;
    if (out->dims[0] != g->batches || out->dims[1] != g->units || wf->dims[1] != g->input_size
        || wt->dims[0] != g->filters || state->dims[0] != g->batches
        || (int64_t)state->dims[1] != (int64_t)g->memory * g->filters
        || (bias->index >= 0 && (bias->ndims < 1 || bias->dims[0] != g->units || bias->elements < (uint32_t)g->units))) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "shapes do not match: input %dx%d, %d filters of rank %d, memory %d",
            (int)g->batches, (int)g->input_size, (int)g->filters, (int)g->rank, (int)g->memory);
    }
    uint64_t cells = (uint64_t)g->batches * (uint64_t)g->filters;
    if (cells > (1u << 28) || cells * (uint64_t)g->memory > (1u << 28)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "SVDF too large");
    }
    *n_cells = (uint32_t)cells;
    return TFLM_OK;
}

// The variant from the types: TFLM's float32 kernel, or its integer one
// with an int16 or int8 state (read with the time weights' type, so they
// must agree), all of whose tensors are quantized.
static tflm_status_t svdf_kind(tflm_prepare_t *p, const svdf_tensors_t *t, uint8_t *kind) {
    const tflm_tinfo_t *in = &t->in, *wf = &t->wf, *wt = &t->wt, *bias = &t->bias, *state = &t->state, *out = &t->out;
    if (in->type == TFLM_FLOAT32) {
        if (wf->type != TFLM_FLOAT32 || wt->type != TFLM_FLOAT32 || state->type != TFLM_FLOAT32
            || out->type != TFLM_FLOAT32 || (bias->index >= 0 && bias->type != TFLM_FLOAT32)) {
            return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "float32 SVDF needs float32 weights, bias, state and output");
        }
        *kind = SVDF_FLOAT32;
        return TFLM_OK;
    }
    if (in->type != TFLM_INT8) {
        return tflm_prep_unsupported_type(p, "input", in->type);
    }
    if (wf->type != TFLM_INT8 || out->type != TFLM_INT8 || (bias->index >= 0 && bias->type != TFLM_INT32)
        || !((wt->type == TFLM_INT16 && state->type == TFLM_INT16) || (wt->type == TFLM_INT8 && state->type == TFLM_INT8))) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED,
            "int8 SVDF needs int8 feature weights and output, int32 bias, and int16 or int8 time weights and state alike");
    }
    if (in->n_scales == 0 || wf->n_scales == 0 || wt->n_scales == 0 || state->n_scales == 0 || out->n_scales == 0
        || (bias->index >= 0 && bias->n_scales == 0)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "int8 SVDF needs quantized tensors");
    }
    *kind = wt->type == TFLM_INT16 ? SVDF_INT16_STATE : SVDF_INT8_STATE;
    return TFLM_OK;
}

// The integer kernel's multipliers and zero points.
static tflm_status_t svdf_quantize(tflm_prepare_t *p, const svdf_tensors_t *t, svdf_data_t *d) {
    const tflm_tinfo_t *in = &t->in, *wf = &t->wf, *wt = &t->wt, *bias = &t->bias, *state = &t->state, *out = &t->out;
    if (bias->index >= 0) {
        // TFLM checks the bias scale against the product it stands for.
        double expect = (double)(state->scale * wt->scale);
        double diff = (double)bias->scale - expect;
        if (!(diff < 1e-5 && diff > -1e-5)) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "bias scale %g does not match state scale x time weights scale",
                (double)bias->scale);
        }
    }
    // Single-precision products, as TFLM computes them.
    double scale_1 = (double)(in->scale * wf->scale / state->scale);
    double scale_2 = (double)(state->scale * wt->scale / out->scale);
    int32_t shift;
    tflm_status_t st = tflm_prep_multiplier(p, scale_1, 31, &d->feature_multiplier, &shift);
    if (st || (st = tflm_prep_multiplier(p, scale_2, 31, &d->output_multiplier, &d->output_shift))) {
        return st;
    }
    d->feature_shift = (int8_t)shift;
    d->input_zero_point = in->zero_point;
    d->state_zero_point = state->zero_point;
    d->output_zero_point = out->zero_point;
    return TFLM_OK;
}

// A prepared model's starting sums (SVDF_FOLDED): each filter's feature
// start, then each unit's.
static void svdf_fold(tflm_prepare_t *p, const svdf_tensors_t *t, const svdf_sizes_t *g, uint8_t kind) {
    const uint8_t *b = t->bias.index >= 0 ? t->bias.data : NULL;
    const int32_t state_zp = t->state.zero_point;
    tflm_fold_starts(p, 0, (const int8_t *)t->wf.data, g->filters, g->input_size, NULL, -t->in.zero_point);
    // A unit's time weights are its filters' rows, one after the other.
    if (kind == SVDF_INT8_STATE) {
        tflm_fold_starts(p, (uint32_t)g->filters, (const int8_t *)t->wt.data, g->units, g->rank * g->memory, b,
            -state_zp);
        return;
    }
    for (int32_t u = 0; u < g->units; ++u) {
        // int16 time weights: the same, with wrapping sums.
        uint32_t sum = 0;
        for (int32_t k = u * g->rank * g->memory; k < (u + 1) * g->rank * g->memory; ++k) {
            sum += (uint32_t)(int32_t)(int16_t)tflm_rd_u16(t->wt.data + 2 * (uint32_t)k);
        }
        uint32_t b0 = b ? tflm_rd_u32(b + 4 * (uint32_t)u) : 0u;
        tflm_prep_put_u32(p, (uint32_t)(g->filters + u), b0 - sum * (uint32_t)state_zp);
    }
}

tflm_status_t tflm_svdf_prepare(tflm_prepare_t *p) {
    svdf_tensors_t t;
    svdf_sizes_t g = { 0, 0, 0, 0, 0, 0 };
    uint32_t cells = 0;
    uint8_t kind = SVDF_FLOAT32;
    tflm_status_t st = svdf_read(p, &t);
    if (st || (st = svdf_shape(p, &t, &g, &cells)) || (st = svdf_kind(p, &t, &kind))) {
        return st;
    }
    // float32: TFLM's scratch buffer of the time filter's sums (the float
    // sums keep its order). The integer kernels need none (see above).
    uint32_t index;
    if (kind == SVDF_FLOAT32 && (st = tflm_prep_scratch(p, cells * 4u, &index))) {
        return st;
    }
    // The state is kept here as a ring of memory - 1 steps per filter, not as
    // the model's variable tensor: no step of it is dropped unread.
    uint32_t elem = kind == SVDF_FLOAT32 ? 4u : kind == SVDF_INT16_STATE ? 2u : 1u;
    svdf_ring_t *ring = tflm_prep_keep_variable(p, SVDF_STATE, svdf_ring_bytes((int32_t)cells, g.memory, elem));
    if (ring == NULL && p->failed) {
        return tflm_prep_status(p);
    }
    // Constant weights and bias in data the model keeps: the offsets fold
    // into starting sums (SVDF_FOLDED).
    bool folded = kind != SVDF_FLOAT32 && t.wf.data != NULL && t.wt.data != NULL
        && (t.bias.index < 0 || t.bias.data != NULL) && tflm_prep_data_in_model(p);
    svdf_data_t *d = folded ? tflm_prep_alloc_streamed(p, sizeof(svdf_data_t), (uint32_t)(g.filters + g.units))
                            : tflm_prep_alloc(p, sizeof(svdf_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    if (kind == SVDF_INT8_STATE) {
        svdf_fill_int8(ring, cells, g.memory, t.state.zero_point);
    }
    d->kind = kind;
    d->activation = tflm_prep_opt_u8(p, TFLM_OPT_SVDF_FUSED_ACTIVATION_FUNCTION, TFLM_ACT_NONE);
    d->flags = t.bias.index >= 0 ? SVDF_HAS_BIAS : 0;
    d->size = g;
    if (kind == SVDF_FLOAT32 || (st = svdf_quantize(p, &t, d)) || !folded) {
        return st;
    }
    d->flags |= SVDF_FOLDED;
    svdf_fold(p, &t, &g, kind);
    return TFLM_OK;
}

tflm_status_t tflm_svdf_eval(tflm_eval_t *e) {
    const svdf_data_t *d = e->data;
    const void *bias = (d->flags & SVDF_HAS_BIAS) ? e->in[SVDF_BIAS] : NULL;
    svdf_ring_t *state = e->in[SVDF_STATE];
    switch (d->kind) {
        case SVDF_FLOAT32:
            tflm_svdf_float32(d, e->in[SVDF_INPUT], e->in[SVDF_WEIGHTS_FEATURE], e->in[SVDF_WEIGHTS_TIME], bias,
                state, e->scratch[0], e->out[0]);
            break;
        case SVDF_INT16_STATE:
            tflm_svdf_int16(d, e->in[SVDF_INPUT], e->in[SVDF_WEIGHTS_FEATURE], e->in[SVDF_WEIGHTS_TIME], bias,
                state, e->out[0]);
            break;
        default:
            tflm_svdf_int8(d, e->in[SVDF_INPUT], e->in[SVDF_WEIGHTS_FEATURE], e->in[SVDF_WEIGHTS_TIME], bias,
                state, e->out[0]);
            break;
    }
    return TFLM_OK;
}

// The engine zeroed the ring (position and steps) just before.
static void svdf_reset(tflm_eval_t *e) {
    const svdf_data_t *d = e->data;
    if (d->kind == SVDF_INT8_STATE) {
        svdf_fill_int8(e->in[SVDF_STATE], (uint32_t)d->size.batches * (uint32_t)d->size.filters, d->size.memory, d->state_zero_point);
    }
}

const tflm_kernel_hooks_t tflm_svdf_hooks = { .reset = svdf_reset };

#endif // TFLM_KERNEL_SVDF
