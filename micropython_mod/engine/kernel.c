// Helpers kernels use in prepare() (see kernel.h).
#include "interpreter.h"
#include "quant.h"
#include "ops.h"

// Tensor list[i] of subgraph `s`.
static tflm_status_t tensor_info_in(tflm_prepare_t *p, uint32_t s, tflm_fb_vec_t list, uint32_t i, tflm_tinfo_t *t) {
    tflm_model_t *m = p->model;
    memset(t, 0, sizeof(*t));
    t->index = TFLM_NO_TENSOR;
    if (i >= list.count) {
        return TFLM_OK; // omitted trailing input
    }
    int32_t index = tflm_model_index(m, list, i);
    if (index == TFLM_NO_TENSOR) {
        return TFLM_OK;
    }
    tflm_subgraph_t sg;
    uint32_t pos, len;
    if (!tflm_model_subgraph(m, s, &sg) || index < 0 || (uint32_t)index >= sg.tensors.count
        || !tflm_model_tensor(m, &sg, (uint32_t)index, &t->t) || !tflm_model_buffer(m, t->t.buffer, &pos, &len)) {
        tflm_fb_fail(&m->fb, list.pos, "tensor index out of range");
        return tflm_model_check(m, p->err);
    }
    t->index = index;
    t->type = t->t.type;
    t->is_variable = t->t.is_variable;
    t->ndims = (uint8_t)t->t.shape.count;
    for (uint32_t d = 0; d < t->ndims; ++d) {
        t->dims[d] = tflm_fb_vec_i32(&m->fb, t->t.shape, d);
    }
    if (!tflm_model_tensor_size(m, &t->t, &t->elements, &t->bytes)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "tensor %d has a bad shape", (int)index);
    }
    if (len != 0) {
        if (len < t->bytes) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "tensor %d needs %u bytes, its buffer holds %u",
                (int)index, (unsigned)t->bytes, (unsigned)len);
        }
        t->is_const = true;
        t->data = m->fb.buf + pos;
    }
    t->n_scales = t->t.scale.count;
    t->quantized_dimension = t->t.quantized_dimension;
    if (t->n_scales) {
        t->scale = tflm_fb_vec_f32(&m->fb, t->t.scale, 0);
    }
    // Zero points must fit the tensor's type: kernels rely on it so their
    // arithmetic cannot overflow. Checked at load, and here again (the
    // buffer may have changed since).
    int64_t lo, hi;
    tflm_zero_point_range(t->type, &lo, &hi);
    for (uint32_t c = 0; c < t->t.zero_point.count; ++c) {
        int64_t zp = tflm_fb_vec_i64(&m->fb, t->t.zero_point, c);
        if (zp < lo || zp > hi) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "tensor %d has zero point %d, outside its type's range",
                (int)index, (int)(zp < INT32_MIN ? INT32_MIN : zp > INT32_MAX ? INT32_MAX : zp));
        }
        if (c == 0) {
            t->zero_point = (int32_t)zp;
        }
    }
    return TFLM_OK;
}

static tflm_status_t tensor_info(tflm_prepare_t *p, tflm_fb_vec_t list, uint32_t i, tflm_tinfo_t *t) {
    return tensor_info_in(p, p->subgraph, list, i, t);
}

tflm_status_t tflm_prep_subgraph_counts(tflm_prepare_t *p, uint32_t s, uint32_t *n_in, uint32_t *n_out) {
    tflm_subgraph_t sg;
    *n_in = *n_out = 0;
    if (!tflm_model_subgraph(p->model, s, &sg)) {
        tflm_status_t st = tflm_model_check(p->model, p->err);
        return st ? st : tflm_error(p->err, TFLM_ERR_VALUE, "subgraph %u out of range", (unsigned)s);
    }
    *n_in = sg.inputs.count;
    *n_out = sg.outputs.count;
    return TFLM_OK;
}

tflm_status_t tflm_prep_subgraph_tensor(tflm_prepare_t *p, uint32_t s, bool output, uint32_t i, tflm_tinfo_t *t) {
    tflm_subgraph_t sg;
    memset(t, 0, sizeof(*t));
    t->index = TFLM_NO_TENSOR;
    if (!tflm_model_subgraph(p->model, s, &sg)) {
        tflm_status_t st = tflm_model_check(p->model, p->err);
        return st ? st : tflm_error(p->err, TFLM_ERR_VALUE, "subgraph %u out of range", (unsigned)s);
    }
    tflm_fb_vec_t list = output ? sg.outputs : sg.inputs;
    tflm_status_t st = i < list.count ? tensor_info_in(p, s, list, i, t) : TFLM_OK;
    if (st == TFLM_OK && t->index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "subgraph %u has no %s %u", (unsigned)s,
            output ? "output" : "input", (unsigned)i);
    }
    return st;
}

tflm_status_t tflm_prep_input(tflm_prepare_t *p, uint32_t i, tflm_tinfo_t *t) {
    return tensor_info(p, p->op->inputs, i, t);
}

tflm_status_t tflm_prep_output(tflm_prepare_t *p, uint32_t i, tflm_tinfo_t *t) {
    return tensor_info(p, p->op->outputs, i, t);
}

float tflm_prep_scale(tflm_prepare_t *p, const tflm_tinfo_t *t, uint32_t channel) {
    if (t->n_scales == 0) {
        return 0.0f;
    }
    uint32_t c = t->n_scales == 1 ? 0 : channel;
    return c < t->n_scales ? tflm_fb_vec_f32(&p->model->fb, t->t.scale, c) : 0.0f;
}

int32_t tflm_prep_zero_point(tflm_prepare_t *p, const tflm_tinfo_t *t, uint32_t channel) {
    uint32_t n = t->t.zero_point.count;
    if (n == 0) {
        return 0;
    }
    uint32_t c = n == 1 ? 0 : channel;
    return c < n ? (int32_t)tflm_fb_vec_i64(&p->model->fb, t->t.zero_point, c) : 0;
}

uint8_t tflm_prep_opt_u8(tflm_prepare_t *p, uint32_t field, uint8_t dflt) {
    return tflm_fb_u8(&p->model->fb, tflm_model_options(p->op, field), TFLM_OPT_SLOT(field), dflt);
}

int32_t tflm_prep_opt_i32(tflm_prepare_t *p, uint32_t field, int32_t dflt) {
    return tflm_fb_i32(&p->model->fb, tflm_model_options(p->op, field), TFLM_OPT_SLOT(field), dflt);
}

float tflm_prep_opt_f32(tflm_prepare_t *p, uint32_t field, float dflt) {
    return tflm_fb_f32(&p->model->fb, tflm_model_options(p->op, field), TFLM_OPT_SLOT(field), dflt);
}

tflm_status_t tflm_prep_opt_i32s(tflm_prepare_t *p, uint32_t field, int32_t *values, uint32_t max, uint32_t *count) {
    tflm_fb_t *fb = &p->model->fb;
    uint32_t options = tflm_model_options(p->op, field);
    *count = 0;
    if (options == 0) {
        return TFLM_OK;
    }
    tflm_fb_vec_t v = tflm_fb_vector(fb, options, TFLM_OPT_SLOT(field), 4);
    if (fb->bad) {
        return tflm_model_check(p->model, p->err);
    }
    if (v.count > max) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "option holds %u values, at most %u allowed", (unsigned)v.count, (unsigned)max);
    }
    for (uint32_t i = 0; i < v.count; ++i) {
        values[i] = tflm_fb_vec_i32(fb, v, i);
    }
    *count = v.count;
    return TFLM_OK;
}

int32_t tflm_window_out_size(unsigned padding, int32_t in, int32_t filter, int32_t stride, int32_t dilation) {
    if (stride <= 0 || dilation <= 0 || filter <= 0 || in < 0) {
        return 0;
    }
    int64_t effective = (int64_t)(filter - 1) * dilation + 1;
    int64_t out = padding == TFLM_PADDING_SAME ? ((int64_t)in + stride - 1) / stride
        : ((int64_t)in + stride - effective) / stride;
    return out > 0 && out <= INT32_MAX ? (int32_t)out : 0;
}

int32_t tflm_window_padding(int32_t in, int32_t filter, int32_t stride, int32_t dilation, int32_t out, int32_t *offset) {
    int64_t effective = (int64_t)(filter - 1) * dilation + 1;
    int64_t total = ((int64_t)out - 1) * stride + effective - in;
    total = total > 0 ? total : 0;
    *offset = (int32_t)(total % 2);
    return (int32_t)(total / 2);
}

// A zeroed block of the tail, 4-byte aligned, audited under `kind`; NULL in
// the dry pass and on failure (MemoryError in p->err).
static void *prep_tail_block(tflm_prepare_t *p, uint32_t bytes, tflm_audit_kind_t kind, const char *what,
    uint32_t *at) {
    uint32_t used = tflm_align_up(bytes, 4);
    *at = tflm_arena_alloc_tail(p->ip->arena, used, 4);
    if (*at == TFLM_ARENA_FAIL) {
        p->err->needed = 0;
        p->err->given = p->ip->arena->size;
        tflm_error(p->err, TFLM_ERR_MEMORY, "arena too small for %u bytes of %s", (unsigned)bytes, what);
        p->failed = true;
        return NULL;
    }
    tflm_audit_t *audit = &p->ip->audit[kind];
    audit->used += used;
    audit->requested += bytes;
    audit->count++;
    if (p->dry) {
        return NULL;
    }
    void *d = tflm_arena_ptr(p->ip->arena, *at);
    memset(d, 0, used);
    return d;
}

static void *prep_alloc(tflm_prepare_t *p, uint32_t bytes, uint32_t words, bool state) {
    if (p->data_bytes != 0 || bytes == 0 || words > (UINT32_MAX - 4 - bytes) / 4) {
        // One block per operator keeps the node record to one offset.
        tflm_error(p->err, TFLM_ERR_RUNTIME, "internal error: kernel data allocated twice, empty or too large");
        p->failed = true;
        return NULL;
    }
    uint32_t filled = tflm_align_up(bytes, 4);
    uint32_t used = filled + 4 * words;
    p->streamed_at = filled;
    if (p->prepared_bytes != 0) {
        // A prepared model: the data is computed into temporary memory, to be
        // compared with the model's copy, which is then used in place.
        if (state || used != p->prepared_bytes) {
            tflm_error(p->err, TFLM_ERR_VALUE, "prepared data holds %u bytes, prepare() makes %u%s",
                (unsigned)p->prepared_bytes, (unsigned)used, state ? " of run-time state" : "");
            p->failed = true;
            return NULL;
        }
        p->data_bytes = used;
        p->in_model = true;
        p->verify = tflm_prep_temp(p, filled);
        if (p->verify) {
            memset(p->verify, 0, filled);
        }
        return p->verify;
    }
    p->data_bytes = used;
    p->state = state;
    return prep_tail_block(p, bytes + 4 * words, TFLM_AUDIT_KERNEL_DATA, "kernel data", &p->data_at);
}

void *tflm_prep_alloc(tflm_prepare_t *p, uint32_t bytes) {
    return prep_alloc(p, bytes, 0, false);
}

void *tflm_prep_alloc_state(tflm_prepare_t *p, uint32_t bytes) {
    return prep_alloc(p, bytes, 0, true);
}

bool tflm_prep_data_in_model(const tflm_prepare_t *p) {
    // Exported by the host (tflm_config_t.kernel_data) or already prepared.
    return p->prepared_bytes != 0 || p->ip->kernel_data != NULL;
}

void *tflm_prep_alloc_streamed(tflm_prepare_t *p, uint32_t bytes, uint32_t words) {
    return prep_alloc(p, bytes, words, false);
}

void tflm_prep_put_u32(tflm_prepare_t *p, uint32_t word, uint32_t value) {
    if (p->dry || p->failed || p->data_bytes == 0 || word >= (p->data_bytes - p->streamed_at) / 4) {
        return;
    }
    uint32_t at = p->streamed_at + 4 * word;
    if (p->in_model) {
        // A mismatch fails the build after prepare() (build.c), as a
        // differing filled part does.
        uint32_t have;
        memcpy(&have, p->model->fb.buf + p->prepared_at + at, 4);
        p->streamed_differ |= have != value;
        return;
    }
    memcpy((uint8_t *)tflm_arena_ptr(p->ip->arena, p->data_at) + at, &value, 4);
}

// Whether tensor `index` of the operator's subgraph is used by this
// operator alone, as its input `i` and nowhere else (not a subgraph input or
// output either): then nothing but its kernel reads or writes its bytes.
static bool used_by_input_alone(tflm_prepare_t *p, int32_t index, uint32_t i) {
    tflm_model_t *m = p->model;
    tflm_subgraph_t sg;
    if (!tflm_model_subgraph(m, p->subgraph, &sg)) {
        return false;
    }
    tflm_fb_vec_t lists[2] = { sg.inputs, sg.outputs };
    for (uint32_t l = 0; l < 2; ++l) {
        for (uint32_t k = 0; k < lists[l].count; ++k) {
            if (tflm_model_index(m, lists[l], k) == index) {
                return false;
            }
        }
    }
    for (uint32_t n = 0; n < sg.operators.count; ++n) {
        tflm_model_op_t op;
        if (!tflm_model_op(m, &sg, n, &op)) {
            return false;
        }
        tflm_fb_vec_t io[2] = { op.inputs, op.outputs };
        for (uint32_t l = 0; l < 2; ++l) {
            for (uint32_t k = 0; k < io[l].count; ++k) {
                if (tflm_model_index(m, io[l], k) == index && !(n == p->index && l == 0 && k == i)) {
                    return false;
                }
            }
        }
    }
    return !m->fb.bad;
}

void *tflm_prep_keep_variable(tflm_prepare_t *p, uint32_t i, uint32_t bytes) {
    tflm_tinfo_t t;
    if (p->kept != 0 || bytes == 0 || bytes > TFLM_MAX_TENSOR_BYTES) {
        tflm_error(p->err, TFLM_ERR_RUNTIME, "internal error: variable kept twice, or too large");
        p->failed = true;
        return NULL;
    }
    if (tensor_info(p, p->op->inputs, i, &t) != TFLM_OK) {
        p->failed = true;
        return NULL;
    }
    if (t.index < 0 || !t.is_variable || !used_by_input_alone(p, t.index, i)) {
        tflm_status_t st = tflm_model_check(p->model, p->err);
        if (st == TFLM_OK) {
            tflm_error(p->err, TFLM_ERR_VALUE, "input %u must be a variable tensor that no other operator uses",
                (unsigned)i);
        }
        p->failed = true;
        return NULL;
    }
    p->kept = (uint32_t)t.index + 1;
    p->kept_bytes = bytes;
    // Model state, as the variable tensor it replaces.
    return prep_tail_block(p, bytes, TFLM_AUDIT_VARIABLES, "kept state", &p->kept_at);
}

void *tflm_prep_temp(tflm_prepare_t *p, uint32_t bytes) {
    tflm_arena_t *a = p->ip->arena;
    uint32_t at = tflm_arena_alloc_temp(a, bytes, TFLM_ALIGN);
    if (at == TFLM_ARENA_FAIL) {
        p->err->needed = 0;
        p->err->given = a->size;
        tflm_error(p->err, TFLM_ERR_MEMORY, "arena too small for %u temporary bytes", (unsigned)bytes);
        p->failed = true;
        return NULL;
    }
    // In use now: the head below, this interpreter's tail so far, the temporaries.
    // Rounded as arena sizes are: an arena of this many bytes fits.
    uint32_t in_use = tflm_align_up(a->temp + (a->cursor - p->ip->tail_start), TFLM_ALIGN);
    p->ip->prepare_peak = TFLM_MAX(p->ip->prepare_peak, in_use);
    return p->dry ? NULL : tflm_arena_ptr(a, at);
}

tflm_status_t tflm_prep_scratch(tflm_prepare_t *p, uint32_t bytes, uint32_t *index) {
    if (p->n_scratch >= TFLM_MAX_SCRATCH_PER_OP) {
        return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "more than %u scratch buffers requested",
            TFLM_MAX_SCRATCH_PER_OP);
    }
    if (bytes > TFLM_MAX_TENSOR_BYTES) {
        return tflm_error(p->err, TFLM_ERR_VALUE, TFLM_RECORD_LIMITS, "scratch buffer", (unsigned)p->n_scratch,
            (unsigned)bytes, (unsigned)TFLM_INT8);
    }
    p->scratch_bytes[p->n_scratch] = bytes;
    *index = p->n_scratch++;
    return TFLM_OK;
}

tflm_status_t tflm_prep_multiplier(tflm_prepare_t *p, double real, int32_t max_shift, int32_t *multiplier, int32_t *shift) {
    if (!tflm_quantize_multiplier(real, multiplier, shift) || *shift > max_shift) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "quantization scales give an out-of-range multiplier");
    }
    return TFLM_OK;
}

tflm_status_t tflm_prep_multiplier_below_one(tflm_prepare_t *p, double real, int32_t *multiplier, int32_t *shift) {
    if (!(real > 0.0 && real < 1.0)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "quantization scales give an out-of-range multiplier");
    }
    return tflm_prep_multiplier(p, real, 0, multiplier, shift);
}

tflm_status_t tflm_prep_activation_range(tflm_prepare_t *p, unsigned activation, float scale, int32_t zero_point,
    int32_t qmin, int32_t qmax, int32_t *act_min, int32_t *act_max) {
    if (!tflm_activation_range_quantized(activation, scale, zero_point, qmin, qmax, act_min, act_max)) {
        return tflm_error(p->err, TFLM_ERR_VALUE,
            "the fused activation's bound is beyond int32 at the output's scale");
    }
    return TFLM_OK;
}

tflm_status_t tflm_prep_channel_multipliers(tflm_prepare_t *p, const tflm_tinfo_t *in, const tflm_tinfo_t *w,
    const tflm_tinfo_t *out, uint32_t n, int32_t max_shift, int32_t *multipliers, int8_t *shifts) {
    for (uint32_t c = 0; c < n; ++c) {
        double real = (double)in->scale * (double)tflm_prep_scale(p, w, c) / (double)out->scale;
        int32_t shift;
        tflm_status_t st = tflm_prep_multiplier(p, real, max_shift, &multipliers[c], &shift);
        if (st) {
            return st;
        }
        shifts[c] = (int8_t)shift;
    }
    return TFLM_OK;
}

tflm_status_t tflm_prep_expect_io(tflm_prepare_t *p, uint32_t min_in, uint32_t max_in, uint32_t n_out) {
    uint32_t n_in = tflm_prep_num_inputs(p);
    if (n_in < min_in || n_in > max_in || tflm_prep_num_outputs(p) != n_out) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "has %u inputs and %u outputs, expected %u to %u inputs and %u outputs",
            (unsigned)n_in, (unsigned)tflm_prep_num_outputs(p), (unsigned)min_in, (unsigned)max_in, (unsigned)n_out);
    }
    return TFLM_OK;
}

tflm_status_t tflm_prep_unsupported_type(tflm_prepare_t *p, const char *what, unsigned type) {
    return tflm_error(p->err, TFLM_ERR_NOT_IMPLEMENTED, "%s of type %s is not supported", what, tflm_type_name(type));
}

// Exactly n inputs and one output, all present, read into *in[k] and *out.
static tflm_status_t prep_io(tflm_prepare_t *p, uint32_t n, tflm_tinfo_t *const *in, tflm_tinfo_t *out) {
    tflm_status_t st = tflm_prep_expect_io(p, n, n, 1);
    bool missing = false;
    for (uint32_t k = 0; k < n && st == TFLM_OK; ++k) {
        st = tflm_prep_input(p, k, in[k]);
        missing = missing || in[k]->index < 0;
    }
    if (st || (st = tflm_prep_output(p, 0, out))) {
        return st;
    }
    if (missing || out->index < 0) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "an input or the output is missing");
    }
    return TFLM_OK;
}

tflm_status_t tflm_prep_io_1_1(tflm_prepare_t *p, tflm_tinfo_t *in, tflm_tinfo_t *out) {
    tflm_tinfo_t *const in_[1] = { in };
    return prep_io(p, 1, in_, out);
}

tflm_status_t tflm_prep_io_2_1(tflm_prepare_t *p, tflm_tinfo_t *a, tflm_tinfo_t *b, tflm_tinfo_t *out) {
    tflm_tinfo_t *const in[2] = { a, b };
    return prep_io(p, 2, in, out);
}

tflm_status_t tflm_prep_io_3_1(tflm_prepare_t *p, tflm_tinfo_t *a, tflm_tinfo_t *b, tflm_tinfo_t *c, tflm_tinfo_t *out) {
    tflm_tinfo_t *const in[3] = { a, b, c };
    return prep_io(p, 3, in, out);
}

tflm_status_t tflm_prep_type_in(tflm_prepare_t *p, const char *what, const tflm_tinfo_t *t, const uint8_t *types,
    uint32_t n, uint8_t *kind) {
    for (uint32_t i = 0; i < n; ++i) {
        if (types[i] == t->type) {
            if (kind) {
                *kind = (uint8_t)i;
            }
            return TFLM_OK;
        }
    }
    return tflm_prep_unsupported_type(p, what, t->type);
}

tflm_status_t tflm_prep_same_type(tflm_prepare_t *p, const tflm_tinfo_t *a, const tflm_tinfo_t *b) {
    if (a->type != b->type) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "tensor %d is %s, tensor %d %s: the types must agree",
            (int)a->index, tflm_type_name(a->type), (int)b->index, tflm_type_name(b->type));
    }
    return TFLM_OK;
}

tflm_status_t tflm_prep_same_elements(tflm_prepare_t *p, const tflm_tinfo_t *a, const tflm_tinfo_t *b) {
    if (a->elements != b->elements) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "tensor %d has %u elements, tensor %d %u: the sizes must agree",
            (int)a->index, (unsigned)a->elements, (int)b->index, (unsigned)b->elements);
    }
    return TFLM_OK;
}

tflm_status_t tflm_prep_positive_scales(tflm_prepare_t *p, const tflm_tinfo_t *a, const tflm_tinfo_t *b) {
    if (a->n_scales == 0 || b->n_scales == 0 || !(a->scale > 0.0f) || !(b->scale > 0.0f)) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "quantized input and output need positive scales");
    }
    return TFLM_OK;
}

tflm_status_t tflm_prep_unary(tflm_prepare_t *p, const uint8_t *types, uint32_t n_types, tflm_tinfo_t *in,
    tflm_tinfo_t *out, uint8_t *kind) {
    tflm_status_t st = tflm_prep_io_1_1(p, in, out);
    if (st || (st = tflm_prep_type_in(p, "input", in, types, n_types, kind)) || (st = tflm_prep_same_type(p, in, out))) {
        return st;
    }
    return tflm_prep_same_elements(p, in, out);
}

void tflm_prep_table_s8(const tflm_tinfo_t *in, const tflm_tinfo_t *out, float inverse, float (*f)(float), bool x86,
    int8_t *table) {
    for (int32_t v = -128; v <= 127; ++v) {
        const float x = in->scale * (float)(v - in->zero_point);
        const float q = tflm_roundf(f(x) * inverse) + (float)out->zero_point;
        // x86 converts 2^31 and more (infinity too) to INT32_MIN, which
        // clamps as NaN and the rest below -128 do.
        const bool low = x86 && q >= 2147483648.0f;
        table[(uint8_t)(int8_t)v] = (int8_t)(low ? -128 : q >= 127.0f ? 127 : q > -128.0f ? (int32_t)q : -128);
    }
}

// Whether a kernel's custom name is the model's custom_code.
static bool custom_name_is(const char *name, const uint8_t *custom, uint32_t len) {
    if (name == NULL || custom == NULL) {
        return false;
    }
    size_t n = strlen(name);
    return n == len && memcmp(name, custom, n) == 0;
}

const tflm_kernel_t *tflm_kernel_find(int32_t op, const uint8_t *custom, uint32_t custom_len, uint32_t *index) {
    for (uint32_t i = 0; i < tflm_kernel_count; ++i) {
        if (tflm_kernels[i].op == op
            && (op != TFLM_OP_CUSTOM || custom_name_is(tflm_kernel_custom(&tflm_kernels[i]), custom, custom_len))) {
            if (index) {
                *index = i;
            }
            return &tflm_kernels[i];
        }
    }
    return NULL;
}

uint32_t tflm_kernel_id(uint32_t index) {
    for (uint32_t id = 0; id < tflm_kernel_ids; ++id) {
        if (tflm_kernel_slots[id] == index) {
            return id;
        }
    }
    return TFLM_NO_KERNEL;
}

const tflm_kernel_t *tflm_kernel_for_opcode(tflm_model_t *m, uint32_t opcode_index, uint32_t *index) {
    tflm_fb_vec_t custom = { 0, 0 };
    int32_t op = tflm_model_opcode(m, opcode_index, &custom);
    if (m->fb.bad) {
        return NULL;
    }
    // the accessor checked the name's bytes lie inside the model
    return tflm_kernel_find(op, custom.count ? m->fb.buf + custom.pos : NULL, custom.count, index);
}
