// UNIDIRECTIONAL_SEQUENCE_LSTM: float32, int8 activations with int8 weights
// and int16 activations with int8 weights (int16 cell state), bit-exact with
// TFLM's reference. As in TFLM, only the standard LSTM (no CIFG, peephole,
// projection or layer norm) is supported. Hidden and cell state live in
// variable tensors (inputs 18 and 19) and carry over between invokes.
#include <float.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/activation_int16.h"
#include "kernels/dot.h"
#include "kernels/fold.h"
#include "engine/fmath.h"
#include "engine/quant.h"
#include "engine/schema.h"

#if TFLM_KERNEL_UNIDIRECTIONAL_SEQUENCE_LSTM

// UnidirectionalSequenceLSTMOptions fields

// Inputs (TFLM's lstm_shared.h numbering)
#define LSTM_INPUT (0)
#define LSTM_INPUT_WEIGHTS (1)      // 1..4: input, forget, cell, output gates
#define LSTM_RECURRENT_WEIGHTS (5)  // 5..8
#define LSTM_PEEPHOLE (9)           // 9..11
#define LSTM_BIAS (12)              // 12..15
#define LSTM_PROJECTION (16)        // 16..17
#define LSTM_HIDDEN_STATE (18)
#define LSTM_CELL_STATE (19)
#define LSTM_LAYER_NORM (20)        // 20..23
#define LSTM_NUM_INPUTS (24)

// Gates, in the order of their tensors.
#define GATE_INPUT (0)
#define GATE_FORGET (1)
#define GATE_CELL (2)
#define GATE_OUTPUT (3)

// Multipliers: input FC of each gate, recurrent FC of each gate, then the
// three element-wise products.
#define MUL_RECURRENT (4)
#define MUL_FORGET_CELL (8)
#define MUL_INPUT_CELL (9)
#define MUL_HIDDEN (10)
#define LSTM_N_MULT (11)

// Scales of the gate activations' inputs (Q3.12) and outputs (Q0.15).
#define LSTM_GATE_INPUT_SCALE (0.000244140625f)
#define LSTM_GATE_OUTPUT_SCALE (0.000030517578125f)

#define ACT_TANH (4)

enum { LSTM_FLOAT32, LSTM_INT8, LSTM_INT16 };

typedef struct {
    uint8_t kind;
    uint8_t time_major;
    int8_t tanh_shift;       // cell state -> int16 tanh input, as TFLM derives it
    uint8_t tanh_multiplier; // 0 (power-of-two case) or 3
    int32_t batches;
    int32_t steps;
    int32_t n_input;
    int32_t n_state;
    float cell_clip;         // clips the cell state when > 0
    int16_t quantized_clip;
    uint8_t folded;          // int8: starting sums follow (lstm_starts)
    uint8_t reserved;
    int32_t input_offset;    // -input zero point
    int32_t hidden_offset;   // -hidden state zero point
    int32_t hidden_zp;
    int32_t multiplier[LSTM_N_MULT];
    int8_t shift[LSTM_N_MULT];
    int8_t weight_zp[8];     // input weights 0..3, recurrent weights 4..7
} lstm_data_t;

// A prepared model's int8 gate FCs start from sums with the offsets folded
// in, computed once on the host and read from flash: n_state per FC, input
// FCs 0..3 (their bias plus the input offset times each unit's weights'
// sum), then recurrent FCs 4..7 (the hidden state's offset times theirs).
// The loops then add nothing per value.
static const int32_t *lstm_starts(const lstm_data_t *d) {
    return (const int32_t *)(d + 1);
}

// Tensors of one invoke; the gates index weights and biases by GATE_*.
typedef struct {
    const void *input;
    const void *weights[4];
    const void *recurrent[4];
    const void *bias[4];
    void *hidden;
    void *cell;
    void *output;
    void *scratch[4];
} lstm_io_t;

// -- float32 -----------------------------------------------------------------

// out[r][u] = sum_k x[r][k] * w[u][k] (+ bias), rounded in the reference's
// order; two units at a time share the input's loads.
static void lstm_fc_float32(const float *x, int32_t rows, int32_t depth, int32_t units, const float *w,
    const float *bias, float *out) {
#define LSTM_F32_OUT(total, u) tflm_clampf((total) + (bias ? bias[u] : 0.0f), -FLT_MAX, FLT_MAX)
    for (int32_t r = 0; r < rows; ++r, x += depth) {
        const float *wu = w;
        int32_t u = 0;
        for (; u + 2 <= units; u += 2, wu += 2 * depth) {
            float t0 = 0.0f, t1 = 0.0f;
            tflm_dot2_f32(&t0, &t1, wu, wu + depth, x, depth);
            *out++ = LSTM_F32_OUT(t0, u);
            *out++ = LSTM_F32_OUT(t1, u + 1);
        }
        for (; u < units; ++u, wu += depth) {
            *out++ = LSTM_F32_OUT(tflm_dot_f32(0.0f, wu, x, depth), u);
        }
    }
#undef LSTM_F32_OUT
}

// TFLM's reference float logistic, with its cutoffs.
static float lstm_sigmoidf(float x) {
    if (x > 16.619047164916992188f) {
        return 1.0f;
    }
    if (x < -9.0f) {
        return tflm_expf(x);
    }
    return 1.0f / (1.0f + tflm_expf(-x));
}

static void lstm_gate_float32(const lstm_data_t *d, const lstm_io_t *io, int gate, int32_t rows,
    const float *x, const float *h, float *out) {
    float *tmp = io->scratch[3];
    int32_t n = rows * d->n_state;
    lstm_fc_float32(x, rows, d->n_input, d->n_state, io->weights[gate], io->bias[gate], out);
    lstm_fc_float32(h, rows, d->n_state, d->n_state, io->recurrent[gate], NULL, tmp);
    for (int32_t i = 0; i < n; ++i) {
        out[i] = out[i] + tmp[i];
    }
    if (gate == GATE_CELL) {
        for (int32_t i = 0; i < n; ++i) {
            out[i] = tflm_tanhf(out[i]);
        }
    } else {
        for (int32_t i = 0; i < n; ++i) {
            out[i] = lstm_sigmoidf(out[i]);
        }
    }
}

static void lstm_step_float32(const lstm_data_t *d, const lstm_io_t *io, int32_t rows, const float *x,
    float *h, float *c, float *y) {
    float *forget = io->scratch[0], *in_gate = io->scratch[1], *cell_gate = io->scratch[2];
    int32_t n = rows * d->n_state;
    lstm_gate_float32(d, io, GATE_FORGET, rows, x, h, forget);
    lstm_gate_float32(d, io, GATE_INPUT, rows, x, h, in_gate);
    lstm_gate_float32(d, io, GATE_CELL, rows, x, h, cell_gate);
    for (int32_t i = 0; i < n; ++i) {
        c[i] = tflm_clampf(forget[i] * c[i], -FLT_MAX, FLT_MAX);
    }
    for (int32_t i = 0; i < n; ++i) {
        in_gate[i] = tflm_clampf(in_gate[i] * cell_gate[i], -FLT_MAX, FLT_MAX);
    }
    for (int32_t i = 0; i < n; ++i) {
        c[i] = c[i] + in_gate[i];
    }
    if (d->cell_clip > 0.0f) {
        // Same comparisons as std::max(std::min(clip, v), -clip).
        float clip = d->cell_clip;
        for (int32_t i = 0; i < n; ++i) {
            float v = c[i] < clip ? c[i] : clip;
            c[i] = v < -clip ? -clip : v;
        }
    }
    float *out_gate = in_gate;
    lstm_gate_float32(d, io, GATE_OUTPUT, rows, x, h, out_gate);
    float *cell_tanh = forget;
    for (int32_t i = 0; i < n; ++i) {
        cell_tanh[i] = tflm_tanhf(c[i]);
    }
    for (int32_t i = 0; i < n; ++i) {
        h[i] = tflm_clampf(cell_tanh[i] * out_gate[i], -FLT_MAX, FLT_MAX);
    }
    memcpy(y, h, (size_t)n * sizeof(float));
}

// -- int8 / int16 activations, int16 cell state -------------------------------

// Gate FC of int8 values into the Q3.12 gate input (int32 sums wrap as the
// reference's do on its targets).
static TFLM_ALWAYS_INLINE void lstm_fc_int8(const int8_t *x, int32_t rows, int32_t depth, int32_t units, const int8_t *w,
    int32_t x_offset, int32_t w_offset, const int32_t *bias, int32_t mult, int32_t shift, int16_t *out) {
    const tflm_requant_t rq = tflm_requant_init(mult, shift);
#define LSTM_INT8_OUT(acc, u) \
    *out++ = (int16_t)tflm_clamp(tflm_requant(&rq, (int32_t)((acc) + (bias ? (uint32_t)bias[u] : 0u))), -32768, 32767)
    TFLM_DOT_S8_UNITS(x, rows, depth, units, w, x_offset, w_offset, LSTM_INT8_OUT);
#undef LSTM_INT8_OUT
}

// The same for int16 values, with 64-bit sums and bias.
static void lstm_fc_int16(const int16_t *x, int32_t rows, int32_t depth, int32_t units, const int8_t *w,
    int32_t x_offset, int32_t w_offset, const void *bias, int32_t mult, int32_t shift, int16_t *out) {
    for (int32_t r = 0; r < rows; ++r, x += depth) {
        const int8_t *wu = w;
        for (int32_t u = 0; u < units; ++u, wu += depth) {
            uint64_t acc = 0;
            if (x_offset == 0 && w_offset == 0) {
                acc = tflm_dot64_s16_s8(wu, x, depth);
            } else {
                for (int32_t k = 0; k < depth; ++k) {
                    acc += (uint64_t)(int64_t)((wu[k] + w_offset) * (x[k] + x_offset));
                }
            }
            if (bias) {
                acc += (uint64_t)tflm_ld_i64(bias, (uint32_t)u);
            }
            int32_t v = tflm_mul_by_quantized_mul64((int64_t)acc, mult, shift);
            *out++ = (int16_t)tflm_clamp(v, -32768, 32767);
        }
    }
}

static void lstm_fc_quantized(const lstm_data_t *d, int index, const void *x, int32_t rows, int32_t depth,
    int32_t x_offset, const int8_t *w, const void *bias, int16_t *out) {
    if (d->kind == LSTM_INT8 && d->folded) {
        lstm_fc_int8(x, rows, depth, d->n_state, w, 0, 0, lstm_starts(d) + index * d->n_state, d->multiplier[index],
            d->shift[index], out);
    } else if (d->kind == LSTM_INT8) {
        lstm_fc_int8(x, rows, depth, d->n_state, w, x_offset, -d->weight_zp[index], bias,
            d->multiplier[index], d->shift[index], out);
    } else {
        lstm_fc_int16(x, rows, depth, d->n_state, w, x_offset, -d->weight_zp[index], bias,
            d->multiplier[index], d->shift[index], out);
    }
}

static void lstm_add_sat(const int16_t *a, const int16_t *b, int32_t n, int16_t *out) {
    for (int32_t i = 0; i < n; ++i) {
        out[i] = (int16_t)tflm_clamp((int32_t)a[i] + b[i], -32768, 32767);
    }
}

// Element-wise product of symmetric int16 values, rescaled.
static void lstm_mul_int16(const lstm_data_t *d, int index, const int16_t *a, const int16_t *b, int32_t n,
    int16_t *out) {
    const int32_t mult = d->multiplier[index], shift = d->shift[index];
    for (int32_t i = 0; i < n; ++i) {
        int32_t v = tflm_mul_by_quantized_mul((int32_t)a[i] * b[i], mult, shift);
        out[i] = (int16_t)tflm_clamp(v, -32768, 32767);
    }
}

static void lstm_gate_quantized(const lstm_data_t *d, const lstm_io_t *io, int gate, int32_t rows,
    const void *x, const void *h, int16_t *out) {
    int16_t *tmp = io->scratch[3];
    int32_t n = rows * d->n_state;
    lstm_fc_quantized(d, gate, x, rows, d->n_input, d->input_offset, io->weights[gate], io->bias[gate], out);
    lstm_fc_quantized(d, MUL_RECURRENT + gate, h, rows, d->n_state, d->hidden_offset, io->recurrent[gate],
        NULL, tmp);
    lstm_add_sat(out, tmp, n, out);
    if (gate == GATE_CELL) {
        // Q3.12 input: TFLM's tanh with its power-of-two defaults.
        tflm_tanh_int16_apply(0, 0, (uint32_t)n, out, out);
    } else {
        tflm_logistic_int16_apply(0, 0, (uint32_t)n, out, out);
    }
}

static void lstm_step_quantized(const lstm_data_t *d, const lstm_io_t *io, int32_t rows, const void *x,
    void *h, int16_t *c, void *y) {
    int16_t *forget = io->scratch[0], *in_gate = io->scratch[1], *cell_gate = io->scratch[2];
    int32_t n = rows * d->n_state;
    lstm_gate_quantized(d, io, GATE_FORGET, rows, x, h, forget);
    lstm_gate_quantized(d, io, GATE_INPUT, rows, x, h, in_gate);
    lstm_gate_quantized(d, io, GATE_CELL, rows, x, h, cell_gate);
    lstm_mul_int16(d, MUL_FORGET_CELL, forget, c, n, c);
    lstm_mul_int16(d, MUL_INPUT_CELL, in_gate, cell_gate, n, in_gate);
    lstm_add_sat(c, in_gate, n, c);
    if (d->cell_clip > 0.0f) {
        int16_t clip = d->quantized_clip;
        for (int32_t i = 0; i < n; ++i) {
            int16_t v = c[i] < clip ? c[i] : clip;
            c[i] = v < -clip ? (int16_t)-clip : v;
        }
    }
    int16_t *out_gate = in_gate;
    lstm_gate_quantized(d, io, GATE_OUTPUT, rows, x, h, out_gate);
    int16_t *cell_tanh = forget;
    tflm_tanh_int16_apply(d->tanh_multiplier, d->tanh_shift, (uint32_t)n, c, cell_tanh);
    // tanh(cell) * output gate -> hidden state, with its zero point.
    const bool is8 = d->kind == LSTM_INT8;
    const int32_t lo = is8 ? -128 : -32768, hi = is8 ? 127 : 32767;
    const int32_t mult = d->multiplier[MUL_HIDDEN], shift = d->shift[MUL_HIDDEN], zp = d->hidden_zp;
    for (int32_t i = 0; i < n; ++i) {
        int32_t v = tflm_mul_by_quantized_mul((int32_t)cell_tanh[i] * out_gate[i], mult, shift);
        v = tflm_clamp(tflm_wrap_add(v, zp), lo, hi);
        if (is8) {
            ((int8_t *)h)[i] = (int8_t)v;
        } else {
            ((int16_t *)h)[i] = (int16_t)v;
        }
    }
    size_t size = d->kind == LSTM_INT8 ? 1 : 2;
    memcpy(y, h, (size_t)n * size);
}

// -- prepare -----------------------------------------------------------------

// What prepare() needs of each of the 24 inputs, kept small: a full
// tflm_tinfo_t each took 3 KB of C stack while the interpreter was built.
typedef struct {
    int32_t index;
    uint8_t type;
    uint8_t ndims;
    bool is_variable;
    int32_t dims[3];     // the first three (the checks reject more)
    uint32_t elements;
    uint32_t n_scales;
    float scale;
    int32_t zero_point;
    const uint8_t *data;
} lstm_tensor_t;

static tflm_status_t lstm_tensor(tflm_prepare_t *p, uint32_t i, lstm_tensor_t *o) {
    tflm_tinfo_t t;
    tflm_status_t st = tflm_prep_input(p, i, &t);
    o->index = t.index;
    o->type = t.type;
    o->ndims = t.ndims;
    o->is_variable = t.is_variable;
    for (int k = 0; k < 3; ++k) {
        o->dims[k] = k < t.ndims ? t.dims[k] : 0;
    }
    o->elements = t.elements;
    o->n_scales = t.n_scales;
    o->scale = t.scale;
    o->zero_point = t.zero_point;
    o->data = t.data;
    return st;
}

// round(log2(scale)) as TFLM's CheckedLog2 gives it, without libm.
static int32_t lstm_rounded_log2(float scale) {
    int e;
    double m = tflm_frexp((double)scale, &e); // scale = m * 2^e, m in [0.5, 1)
    return m >= 0.70710678118654752 ? e : e - 1;
}

static tflm_status_t lstm_quantized_params(tflm_prepare_t *p, lstm_data_t *d, const lstm_tensor_t *t) {
    const lstm_tensor_t *in = &t[LSTM_INPUT], *hidden = &t[LSTM_HIDDEN_STATE], *cell = &t[LSTM_CELL_STATE];
    tflm_status_t st;
    d->input_offset = -in->zero_point;
    d->hidden_offset = -hidden->zero_point;
    d->hidden_zp = hidden->zero_point;
    // The 64-bit rescaling of int16 sums takes shifts up to 14 without UB.
    int32_t fc_max_shift = d->kind == LSTM_INT8 ? 31 : 14;
    for (int g = 0; g < 4; ++g) {
        const lstm_tensor_t *w = &t[LSTM_INPUT_WEIGHTS + g], *r = &t[LSTM_RECURRENT_WEIGHTS + g];
        int32_t shift;
        double real = (double)in->scale * (double)w->scale / (double)LSTM_GATE_INPUT_SCALE;
        if ((st = tflm_prep_multiplier(p, real, fc_max_shift, &d->multiplier[g], &shift))) {
            return st;
        }
        d->shift[g] = (int8_t)shift;
        real = (double)hidden->scale * (double)r->scale / (double)LSTM_GATE_INPUT_SCALE;
        if ((st = tflm_prep_multiplier(p, real, fc_max_shift, &d->multiplier[MUL_RECURRENT + g], &shift))) {
            return st;
        }
        d->shift[MUL_RECURRENT + g] = (int8_t)shift;
        d->weight_zp[g] = (int8_t)w->zero_point;
        d->weight_zp[MUL_RECURRENT + g] = (int8_t)r->zero_point;
    }
    const double gate_out = (double)LSTM_GATE_OUTPUT_SCALE;
    const double reals[3] = {
        gate_out * (double)cell->scale / (double)cell->scale,
        gate_out * gate_out / (double)cell->scale,
        gate_out * gate_out / (double)hidden->scale,
    };
    for (int i = 0; i < 3; ++i) {
        int32_t shift;
        if ((st = tflm_prep_multiplier(p, reals[i], 31, &d->multiplier[MUL_FORGET_CELL + i], &shift))) {
            return st;
        }
        d->shift[MUL_FORGET_CELL + i] = (int8_t)shift;
    }
    // Cell state -> tanh input: TFLM shifts by the power of two of the cell
    // scale (rounded) and the table's factor 3.
    int32_t power = lstm_rounded_log2(cell->scale);
    int32_t shift = 15 + power - 3;
    if (shift < 0) {
        shift = -shift;
        d->tanh_multiplier = 3;
    } else {
        d->tanh_multiplier = 0;
    }
    // Beyond these the reference's shifts overflow: no trained model has such scales.
    if ((d->tanh_multiplier == 0 && shift > 14) || shift > 31) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "cell state scale %g is out of range", (double)cell->scale);
    }
    d->tanh_shift = (int8_t)shift;
    if (d->cell_clip > 0.0f) {
        double q = (double)d->cell_clip / (double)cell->scale;
        q = q < -32768.0 ? -32768.0 : q;
        q = q > 32767.0 ? 32767.0 : q;
        d->quantized_clip = (int16_t)q;
    }
    return TFLM_OK;
}

static bool lstm_is_2d(const lstm_tensor_t *t, int32_t d0, int32_t d1) {
    return t->ndims == 2 && t->dims[0] == d0 && t->dims[1] == d1;
}

// The sizes, from the shapes.
typedef struct {
    int32_t batches, steps, n_input, n_state;
    bool time_major;
} lstm_shape_t;

// Reads the 24 inputs and the output, and checks which are there: the LSTM
// variants TFLM's kernel rejects are refused, the standard one's tensors
// must all be present, its hidden and cell states variables.
static tflm_status_t lstm_read(tflm_prepare_t *p, lstm_tensor_t *t, tflm_tinfo_t *out) {
    tflm_status_t st = tflm_prep_expect_io(p, LSTM_NUM_INPUTS, LSTM_NUM_INPUTS, 1);
    for (uint32_t i = 0; i < LSTM_NUM_INPUTS && st == TFLM_OK; ++i) {
        st = lstm_tensor(p, i, &t[i]);
    }
    if (st || (st = tflm_prep_output(p, 0, out))) {
        return st;
    }
    static const struct {
        uint8_t first, count;
        const char *name;
    } variants[] = {
        { LSTM_INPUT_WEIGHTS, 1, "CIFG (no input gate)" },
        { LSTM_PEEPHOLE, 3, "peephole connections" },
        { LSTM_PROJECTION, 2, "projection" },
        { LSTM_LAYER_NORM, 4, "layer normalization" },
    };
    for (unsigned v = 0; v < sizeof(variants) / sizeof(variants[0]); ++v) {
        bool want = variants[v].first == LSTM_INPUT_WEIGHTS;
        for (unsigned i = variants[v].first; i < variants[v].first + variants[v].count; ++i) {
            if ((t[i].index >= 0) != want) {
                return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "LSTM with %s is not supported", variants[v].name);
            }
        }
    }
    if (t[LSTM_INPUT].index < 0 || out->index < 0 || t[LSTM_HIDDEN_STATE].index < 0 || t[LSTM_CELL_STATE].index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input, output or state tensor missing");
    }
    for (unsigned i = LSTM_INPUT_WEIGHTS; i < LSTM_RECURRENT_WEIGHTS + 4; ++i) {
        if (t[i].index < 0) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "weights missing");
        }
    }
    for (unsigned g = 0; g < 4; ++g) {
        if (t[LSTM_BIAS + g].index < 0) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "gate bias missing");
        }
    }
    if (!t[LSTM_HIDDEN_STATE].is_variable || !t[LSTM_CELL_STATE].is_variable) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "hidden and cell state must be variable tensors");
    }
    return TFLM_OK;
}

// The variant from the types: TFLM's float32, 8x8->16 and 16x8->16 kernels.
static tflm_status_t lstm_kind(tflm_prepare_t *p, const lstm_tensor_t *t, const tflm_tinfo_t *out, uint8_t *kind) {
    const lstm_tensor_t *in = &t[LSTM_INPUT];
    uint8_t wtype, btype, ctype;
    if (in->type == TFLM_FLOAT32) {
        *kind = LSTM_FLOAT32;
        wtype = btype = ctype = TFLM_FLOAT32;
    } else if (in->type == TFLM_INT8) {
        *kind = LSTM_INT8;
        wtype = TFLM_INT8;
        btype = TFLM_INT32;
        ctype = TFLM_INT16;
    } else if (in->type == TFLM_INT16) {
        *kind = LSTM_INT16;
        wtype = TFLM_INT8;
        btype = TFLM_INT64;
        ctype = TFLM_INT16;
    } else {
        return tflm_prep_unsupported_type(p, "input", in->type);
    }
    if (t[LSTM_HIDDEN_STATE].type != in->type || out->type != in->type) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "hidden state and output must have the input's type");
    }
    if (t[LSTM_CELL_STATE].type != ctype) {
        return tflm_prep_unsupported_type(p, "cell state", t[LSTM_CELL_STATE].type);
    }
    for (unsigned i = LSTM_INPUT_WEIGHTS; i < LSTM_RECURRENT_WEIGHTS + 4; ++i) {
        if (t[i].type != wtype) {
            return tflm_prep_unsupported_type(p, "weights", t[i].type);
        }
    }
    for (unsigned g = 0; g < 4; ++g) {
        if (t[LSTM_BIAS + g].type != btype) {
            return tflm_prep_unsupported_type(p, "bias", t[LSTM_BIAS + g].type);
        }
    }
    return TFLM_OK;
}

// The sizes, checked as TFLM's ValidateTensorSize does.
static tflm_status_t lstm_shape(tflm_prepare_t *p, const lstm_tensor_t *t, const tflm_tinfo_t *out, lstm_shape_t *g) {
    const lstm_tensor_t *in = &t[LSTM_INPUT], *hidden = &t[LSTM_HIDDEN_STATE], *cell = &t[LSTM_CELL_STATE];
    g->time_major = tflm_prep_opt_u8(p, TFLM_OPT_UNIDIRECTIONAL_SEQUENCE_LSTM_TIME_MAJOR, 0) != 0;
    if (in->ndims != 3 || hidden->ndims != 2) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "input needs 3 dimensions and the hidden state 2");
    }
    g->batches = g->time_major ? in->dims[1] : in->dims[0];
    g->steps = g->time_major ? in->dims[0] : in->dims[1];
    g->n_input = in->dims[2];
    g->n_state = hidden->dims[1];
    bool ok = out->ndims == 3 && out->dims[0] == in->dims[0] && out->dims[1] == in->dims[1] && out->dims[2] == g->n_state
        && (uint64_t)hidden->elements == (uint64_t)g->batches * (uint64_t)g->n_state
        && (uint64_t)cell->elements == (uint64_t)g->batches * (uint64_t)g->n_state;
    for (unsigned k = 0; k < 4; ++k) {
        ok = ok && lstm_is_2d(&t[LSTM_INPUT_WEIGHTS + k], g->n_state, g->n_input)
            && lstm_is_2d(&t[LSTM_RECURRENT_WEIGHTS + k], g->n_state, g->n_state)
            && t[LSTM_BIAS + k].ndims == 1 && t[LSTM_BIAS + k].dims[0] == g->n_state;
    }
    if (!ok) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "tensor shapes do not match the LSTM's (batch %d, steps %d, input %d, state %d)",
            (int)g->batches, (int)g->steps, (int)g->n_input, (int)g->n_state);
    }
    return TFLM_OK;
}

// The quantized variants' tensors have one positive scale each.
static tflm_status_t lstm_check_scales(tflm_prepare_t *p, const lstm_tensor_t *t) {
    const unsigned quantized[] = { LSTM_INPUT, LSTM_HIDDEN_STATE, LSTM_CELL_STATE, 1, 2, 3, 4, 5, 6, 7, 8 };
    for (unsigned i = 0; i < sizeof(quantized) / sizeof(quantized[0]); ++i) {
        const lstm_tensor_t *q = &t[quantized[i]];
        if (q->n_scales == 0 || !(q->scale > 0.0f)) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "LSTM tensor %u is not quantized", quantized[i]);
        }
        if (q->n_scales > 1) {
            return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "per-channel LSTM weights are not supported");
        }
    }
    return TFLM_OK;
}

// Gate outputs in scratch buffers, as TFLM asks: batch x state cells each,
// whatever the layout.
static tflm_status_t lstm_scratch(tflm_prepare_t *p, uint8_t kind, const lstm_shape_t *g) {
    uint32_t cell_size = kind == LSTM_FLOAT32 ? 4u : 2u;
    uint64_t buffer = (uint64_t)g->batches * (uint64_t)g->n_state * cell_size;
    if (buffer > 0x7fffffffu) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "LSTM state too large");
    }
    for (int i = 0; i < 4; ++i) {
        uint32_t index;
        tflm_status_t st = tflm_prep_scratch(p, (uint32_t)buffer, &index);
        if (st) {
            return st;
        }
    }
    return TFLM_OK;
}

tflm_status_t tflm_unidirectional_sequence_lstm_prepare(tflm_prepare_t *p) {
    lstm_tensor_t t[LSTM_NUM_INPUTS];
    tflm_tinfo_t out;
    lstm_shape_t g = { 0, 0, 0, 0, false };
    uint8_t kind = LSTM_FLOAT32;
    tflm_status_t st = lstm_read(p, t, &out);
    if (st || (st = lstm_kind(p, t, &out, &kind)) || (st = lstm_shape(p, t, &out, &g))) {
        return st;
    }
    uint8_t activation = tflm_prep_opt_u8(p, TFLM_OPT_UNIDIRECTIONAL_SEQUENCE_LSTM_FUSED_ACTIVATION_FUNCTION, TFLM_ACT_NONE);
    if (activation != ACT_TANH) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "LSTM cell activation %u is not supported (only TANH)",
            (unsigned)activation);
    }
    if ((kind != LSTM_FLOAT32 && (st = lstm_check_scales(p, t))) || (st = lstm_scratch(p, kind, &g))) {
        return st;
    }
    // Symmetric constant weights and constant biases in data the model keeps:
    // the offsets go into the starting sums.
    bool folded = kind == LSTM_INT8 && tflm_prep_data_in_model(p);
    for (unsigned i = LSTM_INPUT_WEIGHTS; folded && i < LSTM_RECURRENT_WEIGHTS + 4; ++i) {
        folded = t[i].data != NULL && t[i].zero_point == 0;
    }
    for (unsigned k = 0; folded && k < 4; ++k) {
        folded = t[LSTM_BIAS + k].data != NULL;
    }
    lstm_data_t *d = folded ? tflm_prep_alloc_streamed(p, sizeof(lstm_data_t), 8u * (uint32_t)g.n_state)
                            : tflm_prep_alloc(p, sizeof(lstm_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    memset(d, 0, sizeof(*d));
    d->kind = kind;
    d->time_major = g.time_major;
    d->batches = g.batches;
    d->steps = g.steps;
    d->n_input = g.n_input;
    d->n_state = g.n_state;
    d->cell_clip = tflm_prep_opt_f32(p, TFLM_OPT_UNIDIRECTIONAL_SEQUENCE_LSTM_CELL_CLIP, 0.0f);
    if (kind == LSTM_FLOAT32 || (st = lstm_quantized_params(p, d, t)) || !folded) {
        return st;
    }
    d->folded = 1;
    for (uint32_t k = 0; k < 4; ++k) {
        // Input FCs, then recurrent ones (no bias: the input FC has it).
        tflm_fold_starts(p, k * (uint32_t)g.n_state, (const int8_t *)t[LSTM_INPUT_WEIGHTS + k].data, g.n_state,
            g.n_input, t[LSTM_BIAS + k].data, d->input_offset);
        tflm_fold_starts(p, (MUL_RECURRENT + k) * (uint32_t)g.n_state, (const int8_t *)t[LSTM_RECURRENT_WEIGHTS + k].data,
            g.n_state, g.n_state, NULL, d->hidden_offset);
    }
    return TFLM_OK;
}

tflm_status_t tflm_unidirectional_sequence_lstm_eval(tflm_eval_t *e) {
    const lstm_data_t *d = e->data;
    lstm_io_t io;
    io.input = e->in[LSTM_INPUT];
    for (int g = 0; g < 4; ++g) {
        io.weights[g] = e->in[LSTM_INPUT_WEIGHTS + g];
        io.recurrent[g] = e->in[LSTM_RECURRENT_WEIGHTS + g];
        io.bias[g] = e->in[LSTM_BIAS + g];
    }
    io.hidden = e->in[LSTM_HIDDEN_STATE];
    io.cell = e->in[LSTM_CELL_STATE];
    io.output = e->out[0];
    for (int i = 0; i < 4; ++i) {
        io.scratch[i] = e->scratch[i];
    }
    // Time major: all batches advance together. Batch major: one batch at a
    // time, each through all its steps with its own slice of the state.
    int32_t rows = d->time_major ? d->batches : 1;
    int32_t outer = d->time_major ? 1 : d->batches;
    size_t act = d->kind == LSTM_FLOAT32 ? 4 : d->kind == LSTM_INT8 ? 1 : 2;
    size_t cell = d->kind == LSTM_FLOAT32 ? 4 : 2;
    for (int32_t b = 0; b < outer; ++b) {
        uint8_t *h = (uint8_t *)io.hidden + (size_t)b * (size_t)d->n_state * act;
        uint8_t *c = (uint8_t *)io.cell + (size_t)b * (size_t)d->n_state * cell;
        for (int32_t s = 0; s < d->steps; ++s) {
            size_t at = (size_t)(b * d->steps + s) * (size_t)rows;
            const uint8_t *x = (const uint8_t *)io.input + at * (size_t)d->n_input * act;
            uint8_t *y = (uint8_t *)io.output + at * (size_t)d->n_state * act;
            if (d->kind == LSTM_FLOAT32) {
                lstm_step_float32(d, &io, rows, (const float *)x, (float *)h, (float *)c, (float *)y);
            } else {
                lstm_step_quantized(d, &io, rows, x, h, (int16_t *)c, y);
            }
        }
    }
    return TFLM_OK;
}

// The engine's hooks (engine/kernel.h): eval() goes through units of its
// input in memory order (batch major: one step of one batch; time major: one
// step of all batches) and writes a unit's output after its last read of the
// unit's input, so as rows, output unit u reads input units after u only.
static bool lstm_overlap(tflm_prepare_t *p, const void *data, tflm_rows_t *g) {
    (void)p;
    const lstm_data_t *d = data;
    int64_t units = d->time_major ? d->steps : (int64_t)d->batches * d->steps;
    memset(g, 0, sizeof(*g));
    g->batches = 1;
    g->in_h = g->out_h = units <= INT32_MAX ? (int32_t)units : 0;
    g->stride_h = 1;
    g->pad_h = -1;
    return true;
}

const tflm_kernel_hooks_t tflm_unidirectional_sequence_lstm_hooks = { .overlap = lstm_overlap };

#endif // TFLM_KERNEL_UNIDIRECTIONAL_SEQUENCE_LSTM
