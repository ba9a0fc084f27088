// The .tflite model reader (see model.h).
#include "model.h"
#include "ops.h"
#include "schema.h"

// Highest TensorType value the schema defines (FLOAT8_E5M2).
#define TFLM_SCHEMA_MAX_TYPE (22u)

tflm_status_t tflm_model_check(const tflm_model_t *m, tflm_error_t *err) {
    if (m->fb.bad) {
        return tflm_error(err, TFLM_ERR_VALUE, "malformed model: %s (at byte %u)", m->fb.bad, (unsigned)m->fb.bad_pos);
    }
    return TFLM_OK;
}

bool tflm_model_subgraph(tflm_model_t *m, uint32_t index, tflm_subgraph_t *sg) {
    tflm_fb_t *fb = &m->fb;
    memset(sg, 0, sizeof(*sg));
    sg->table = tflm_fb_vec_table(fb, m->subgraphs, index);
    if (sg->table == 0) {
        tflm_fb_fail(fb, m->subgraphs.pos, "missing subgraph");
        return false;
    }
    sg->tensors = tflm_fb_vector(fb, sg->table, TFLM_SUBGRAPH_TENSORS, 4);
    sg->inputs = tflm_fb_vector(fb, sg->table, TFLM_SUBGRAPH_INPUTS, 4);
    sg->outputs = tflm_fb_vector(fb, sg->table, TFLM_SUBGRAPH_OUTPUTS, 4);
    sg->operators = tflm_fb_vector(fb, sg->table, TFLM_SUBGRAPH_OPERATORS, 4);
    return fb->bad == NULL;
}

bool tflm_model_tensor(tflm_model_t *m, const tflm_subgraph_t *sg, uint32_t index, tflm_model_tensor_t *t) {
    tflm_fb_t *fb = &m->fb;
    memset(t, 0, sizeof(*t));
    t->table = tflm_fb_vec_table(fb, sg->tensors, index);
    if (t->table == 0) {
        tflm_fb_fail(fb, sg->tensors.pos, "missing tensor");
        return false;
    }
    t->type = tflm_fb_u8(fb, t->table, TFLM_TENSOR_TYPE, 0);
    t->is_variable = tflm_fb_u8(fb, t->table, TFLM_TENSOR_IS_VARIABLE, 0) != 0;
    t->shape = tflm_fb_vector(fb, t->table, TFLM_TENSOR_SHAPE, 4);
    // Checked on every read, not only at load: readers copy the shape into
    // arrays of TFLM_MAX_DIMS, and the buffer may have changed since.
    if (t->shape.count > TFLM_MAX_DIMS) {
        tflm_fb_fail(fb, t->shape.pos, "tensor has more than 8 dimensions");
        return false;
    }
    t->buffer = tflm_fb_u32(fb, t->table, TFLM_TENSOR_BUFFER, 0);
    t->name = tflm_fb_vector(fb, t->table, TFLM_TENSOR_NAME, 1);
    uint32_t q = tflm_fb_table(fb, t->table, TFLM_TENSOR_QUANTIZATION);
    if (q) {
        t->scale = tflm_fb_vector(fb, q, TFLM_QUANT_SCALE, 4);
        t->zero_point = tflm_fb_vector(fb, q, TFLM_QUANT_ZERO_POINT, 8);
        t->quantized_dimension = tflm_fb_i32(fb, q, TFLM_QUANT_QUANTIZED_DIMENSION, 0);
    }
    return fb->bad == NULL;
}

bool tflm_model_op(tflm_model_t *m, const tflm_subgraph_t *sg, uint32_t index, tflm_model_op_t *op) {
    tflm_fb_t *fb = &m->fb;
    memset(op, 0, sizeof(*op));
    op->table = tflm_fb_vec_table(fb, sg->operators, index);
    if (op->table == 0) {
        tflm_fb_fail(fb, sg->operators.pos, "missing operator");
        return false;
    }
    op->opcode_index = tflm_fb_u32(fb, op->table, TFLM_OPERATOR_OPCODE_INDEX, 0);
    op->inputs = tflm_fb_vector(fb, op->table, TFLM_OPERATOR_INPUTS, 4);
    op->outputs = tflm_fb_vector(fb, op->table, TFLM_OPERATOR_OUTPUTS, 4);
    op->intermediates = tflm_fb_vector(fb, op->table, TFLM_OPERATOR_INTERMEDIATES, 4);
    op->options_type = tflm_fb_u8(fb, op->table, TFLM_OPERATOR_BUILTIN_OPTIONS_TYPE, 0);
    op->options = tflm_fb_table(fb, op->table, TFLM_OPERATOR_BUILTIN_OPTIONS);
    op->custom_options = tflm_fb_vector(fb, op->table, TFLM_OPERATOR_CUSTOM_OPTIONS, 1);
    if (op->opcode_index >= m->opcodes.count) {
        tflm_fb_fail(fb, op->table, "operator code index out of range");
        return false;
    }
    op->builtin = tflm_model_opcode(m, op->opcode_index, NULL);
    return fb->bad == NULL;
}

int32_t tflm_model_opcode(tflm_model_t *m, uint32_t index, tflm_fb_vec_t *custom) {
    tflm_fb_t *fb = &m->fb;
    uint32_t t = tflm_fb_vec_table(fb, m->opcodes, index);
    if (t == 0) {
        return -1;
    }
    // Old models only have the 8-bit code; new ones keep it at most 127 and
    // put the real code in builtin_code, so the larger of the two is right.
    int32_t deprecated = (int8_t)tflm_fb_u8(fb, t, TFLM_OPCODE_DEPRECATED_BUILTIN_CODE, 0);
    int32_t code = tflm_fb_i32(fb, t, TFLM_OPCODE_BUILTIN_CODE, 0);
    if (custom) {
        *custom = tflm_fb_vector(fb, t, TFLM_OPCODE_CUSTOM_CODE, 1);
    }
    return TFLM_MAX(deprecated, code);
}

bool tflm_model_buffer(tflm_model_t *m, uint32_t index, uint32_t *pos, uint32_t *len) {
    tflm_fb_t *fb = &m->fb;
    *pos = 0;
    *len = 0;
    if (index >= m->buffers.count) {
        tflm_fb_fail(fb, m->buffers.pos, "buffer index out of range");
        return false;
    }
    uint32_t b = tflm_fb_vec_table(fb, m->buffers, index);
    if (b == 0) {
        return fb->bad == NULL;
    }
    // Models over 2 GB keep data after the FlatBuffer, addressed by offset/size.
    uint64_t offset = tflm_fb_u64(fb, b, TFLM_BUFFER_OFFSET, 0);
    if (offset > 1) {
        uint64_t size = tflm_fb_u64(fb, b, TFLM_BUFFER_SIZE, 0);
        if (offset + size > fb->len || offset + size < offset) {
            tflm_fb_fail(fb, b, "buffer data outside the model");
            return false;
        }
        *pos = (uint32_t)offset;
        *len = (uint32_t)size;
        return fb->bad == NULL;
    }
    tflm_fb_vec_t data = tflm_fb_vector(fb, b, TFLM_BUFFER_DATA, 1);
    if (data.count) {
        *pos = data.pos;
        *len = data.count;
    }
    return fb->bad == NULL;
}

uint32_t tflm_model_metadata(tflm_model_t *m, const char *name) {
    tflm_fb_t *fb = &m->fb;
    for (uint32_t i = 0; i < m->metadata.count && !fb->bad; ++i) {
        uint32_t md = tflm_fb_vec_table(fb, m->metadata, i);
        if (md && tflm_fb_string_eq(fb, md, TFLM_METADATA_NAME, name)) {
            return tflm_fb_u32(fb, md, TFLM_METADATA_BUFFER, UINT32_MAX);
        }
    }
    return UINT32_MAX;
}

tflm_status_t tflm_model_own_metadata(tflm_model_t *m, const char *name, uint32_t magic, int32_t version,
    uint32_t min_bytes, const uint8_t **data, uint32_t *len, tflm_error_t *err) {
    *data = NULL;
    *len = 0;
    uint32_t buffer = tflm_model_metadata(m, name);
    uint32_t pos = 0;
    if (buffer == UINT32_MAX || !tflm_model_buffer(m, buffer, &pos, len)) {
        return tflm_model_check(m, err);
    }
    const uint8_t *p = m->fb.buf + pos;
    if (*len < min_bytes || *len < 8 || tflm_rd_u32(p) != magic) {
        return tflm_error(err, TFLM_ERR_VALUE, "%s metadata: no header", name);
    }
    int32_t v = tflm_rd_i32(p + 4);
    if (v != version) {
        return tflm_error(err, TFLM_ERR_VALUE, "%s metadata has version %d; this runtime reads %d", name, (int)v,
            (int)version);
    }
    *data = p;
    return TFLM_OK;
}

bool tflm_model_tensor_size(const tflm_model_t *m, const tflm_model_tensor_t *t, uint32_t *elements, uint32_t *bytes) {
    // Zeros are skipped, not multiplied in: a zero would leave the other
    // dimensions unbounded, and kernels fold them into int32 loop extents
    // and strides (the engine's fuzzer, seed 13: an empty SUB output of
    // shape (0, 1019869635, 4) overflowed the broadcast plan's extent).
    uint64_t n = 1;
    bool empty = false;
    for (uint32_t d = 0; d < t->shape.count; ++d) {
        int32_t dim = tflm_fb_vec_i32(&m->fb, t->shape, d);
        if (dim < 0) {
            return false;
        }
        if (dim == 0) {
            empty = true;
            continue;
        }
        n *= (uint64_t)dim;
        if (n > 0x7fffffffu) {
            return false;
        }
    }
    uint64_t b = n * tflm_type_size(t->type);
    if (b > 0x7fffffffu) {
        return false;
    }
    *elements = empty ? 0u : (uint32_t)n;
    *bytes = empty ? 0u : (uint32_t)b;
    return true;
}

void tflm_zero_point_range(unsigned type, int64_t *lo, int64_t *hi) {
    switch (type) {
        case TFLM_INT8:
            *lo = -128;
            *hi = 127;
            break;
        case TFLM_UINT8:
            *lo = 0;
            *hi = 255;
            break;
        case TFLM_INT16:
            *lo = -32768;
            *hi = 32767;
            break;
        default:
            *lo = (int64_t)INT32_MIN + 1;
            *hi = INT32_MAX;
            break;
    }
}

bool tflm_utf8_valid(const uint8_t *s, uint32_t n) {
    uint32_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        uint32_t len;
        uint8_t lo = 0x80, hi = 0xbf; // the second byte's range: no overlong forms, no surrogates
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            len = 2;
        } else if (c >= 0xe0 && c <= 0xef) {
            len = 3;
            lo = c == 0xe0 ? 0xa0 : 0x80;
            hi = c == 0xed ? 0x9f : 0xbf;
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4;
            lo = c == 0xf0 ? 0x90 : 0x80;
            hi = c == 0xf4 ? 0x8f : 0xbf;
        } else {
            return false;
        }
        if (n - i < len || s[i + 1] < lo || s[i + 1] > hi) {
            return false;
        }
        for (uint32_t k = 2; k < len; ++k) {
            if ((s[i + k] & 0xc0) != 0x80) {
                return false;
            }
        }
        i += len;
    }
    return true;
}

// Checks that every entry of an index vector is a tensor index (or -1 where allowed).
static tflm_status_t check_indices(tflm_model_t *m, tflm_fb_vec_t v, uint32_t n_tensors, bool allow_none,
    const char *what, uint32_t sg, uint32_t op, tflm_error_t *err) {
    for (uint32_t i = 0; i < v.count; ++i) {
        int32_t t = tflm_model_index(m, v, i);
        if ((t == TFLM_NO_TENSOR && allow_none) || (t >= 0 && (uint32_t)t < n_tensors)) {
            continue;
        }
        if (op == UINT32_MAX) {
            return tflm_error(err, TFLM_ERR_VALUE, "malformed model: subgraph %u %s %u is tensor %d, but it has %u tensors",
                (unsigned)sg, what, (unsigned)i, (int)t, (unsigned)n_tensors);
        }
        return tflm_error(err, TFLM_ERR_VALUE, "malformed model: subgraph %u operator %u %s %u is tensor %d, but it has %u tensors",
            (unsigned)sg, (unsigned)op, what, (unsigned)i, (int)t, (unsigned)n_tensors);
    }
    return TFLM_OK;
}

static tflm_status_t check_tensor(tflm_model_t *m, const tflm_model_tensor_t *t, uint32_t sg, uint32_t i, tflm_error_t *err) {
    if (t->type > TFLM_SCHEMA_MAX_TYPE) {
        return tflm_error(err, TFLM_ERR_VALUE, "malformed model: tensor %u of subgraph %u has unknown type %u",
            (unsigned)i, (unsigned)sg, (unsigned)t->type);
    }
    uint32_t elements, bytes;
    if (!tflm_model_tensor_size(m, t, &elements, &bytes)) {
        return tflm_error(err, TFLM_ERR_VALUE, "malformed model: tensor %u of subgraph %u has a negative or too large shape",
            (unsigned)i, (unsigned)sg);
    }
    if (t->buffer >= m->buffers.count) {
        return tflm_error(err, TFLM_ERR_VALUE, "malformed model: tensor %u of subgraph %u uses buffer %u, but the model has %u",
            (unsigned)i, (unsigned)sg, (unsigned)t->buffer, (unsigned)m->buffers.count);
    }
    uint32_t pos, len;
    if (!tflm_model_buffer(m, t->buffer, &pos, &len)) {
        return tflm_model_check(m, err);
    }
    if (len != 0 && tflm_type_size(t->type) != 0 && len < bytes) {
        return tflm_error(err, TFLM_ERR_VALUE, "malformed model: tensor %u of subgraph %u needs %u bytes, its buffer holds %u",
            (unsigned)i, (unsigned)sg, (unsigned)bytes, (unsigned)len);
    }
    if (!tflm_utf8_valid(m->fb.buf + t->name.pos, t->name.count)) {
        return tflm_error(err, TFLM_ERR_VALUE, "malformed model: the name of tensor %u of subgraph %u is not UTF-8",
            (unsigned)i, (unsigned)sg);
    }
    int64_t lo, hi;
    tflm_zero_point_range(t->type, &lo, &hi);
    for (uint32_t c = 0; c < t->zero_point.count; ++c) {
        int64_t zp = tflm_fb_vec_i64(&m->fb, t->zero_point, c);
        if (zp < lo || zp > hi) {
            return tflm_error(err, TFLM_ERR_VALUE, "malformed model: tensor %u of subgraph %u has zero point %d%s, "
                "outside %d..%d", (unsigned)i, (unsigned)sg, (int)TFLM_MAX(TFLM_MIN(zp, INT32_MAX), INT32_MIN),
                zp < INT32_MIN || zp > INT32_MAX ? " (clamped)" : "", (int)lo, (int)hi);
        }
    }
    if (t->scale.count > 1) {
        if (t->zero_point.count != 1 && t->zero_point.count != t->scale.count) {
            return tflm_error(err, TFLM_ERR_VALUE, "malformed model: tensor %u of subgraph %u has %u scales and %u zero points",
                (unsigned)i, (unsigned)sg, (unsigned)t->scale.count, (unsigned)t->zero_point.count);
        }
        // The quantized dimension is checked by the kernels that use it: converters
        // copy it onto bias tensors where it does not fit the shape.
    }
    return TFLM_OK;
}

// Tensors something writes (an operator's outputs, a subgraph's inputs)
// must not be constants: their bytes are the model's own (flash, an
// immutable bytes object, a prepared model's metadata). Variables with an
// initial value are not constants: they get bytes of their own in the arena.
static tflm_status_t check_written(tflm_model_t *m, const tflm_subgraph_t *sg, tflm_fb_vec_t v, uint32_t s,
    uint32_t op, tflm_error_t *err) {
    for (uint32_t i = 0; i < v.count; ++i) {
        int32_t index = tflm_model_index(m, v, i);
        tflm_model_tensor_t t;
        uint32_t pos, len;
        if (index < 0 || !tflm_model_tensor(m, sg, (uint32_t)index, &t) || !tflm_model_buffer(m, t.buffer, &pos, &len)) {
            continue; // omitted, or reported by the other checks
        }
        if (len == 0 || t.is_variable) {
            continue;
        }
        if (op == UINT32_MAX) {
            return tflm_error(err, TFLM_ERR_VALUE, "malformed model: input %u of subgraph %u is tensor %d, a constant "
                "(its bytes are the model's buffer %u)", (unsigned)i, (unsigned)s, (int)index, (unsigned)t.buffer);
        }
        return tflm_error(err, TFLM_ERR_VALUE, "malformed model: operator %u of subgraph %u writes tensor %d, a constant "
            "(its bytes are the model's buffer %u)", (unsigned)op, (unsigned)s, (int)index, (unsigned)t.buffer);
    }
    return TFLM_OK;
}

static tflm_status_t check_subgraph(tflm_model_t *m, uint32_t s, tflm_error_t *err) {
    tflm_subgraph_t sg;
    if (!tflm_model_subgraph(m, s, &sg)) {
        return tflm_model_check(m, err);
    }
    uint32_t n = sg.tensors.count;
    if (n > TFLM_MAX_TENSORS || sg.operators.count > TFLM_MAX_OPS) {
        return tflm_error(err, TFLM_ERR_VALUE, "model too large: subgraph %u has %u tensors and %u operators (at most %u each)",
            (unsigned)s, (unsigned)n, (unsigned)sg.operators.count, TFLM_MAX_TENSORS);
    }
    tflm_status_t st;
    if ((st = check_indices(m, sg.inputs, n, false, "input", s, UINT32_MAX, err))
        || (st = check_indices(m, sg.outputs, n, false, "output", s, UINT32_MAX, err))) {
        return st;
    }
    for (uint32_t i = 0; i < n; ++i) {
        tflm_model_tensor_t t;
        if (!tflm_model_tensor(m, &sg, i, &t)) {
            return tflm_model_check(m, err);
        }
        if ((st = check_tensor(m, &t, s, i, err))) {
            return st;
        }
    }
    if ((st = check_written(m, &sg, sg.inputs, s, UINT32_MAX, err))) {
        return st;
    }
    for (uint32_t i = 0; i < sg.operators.count; ++i) {
        tflm_model_op_t op;
        if (!tflm_model_op(m, &sg, i, &op)) {
            if (m->fb.bad) {
                return tflm_model_check(m, err);
            }
        }
        if ((st = check_indices(m, op.inputs, n, true, "input", s, i, err))
            || (st = check_indices(m, op.outputs, n, false, "output", s, i, err))
            || (st = check_indices(m, op.intermediates, n, false, "intermediate", s, i, err))
            || (st = check_written(m, &sg, op.outputs, s, i, err))) {
            return st;
        }
    }
    return TFLM_OK;
}

tflm_status_t tflm_model_init(tflm_model_t *m, const uint8_t *buf, size_t len, tflm_error_t *err) {
    memset(m, 0, sizeof(*m));
    if (len > 0x7fffffffu) {
        return tflm_error(err, TFLM_ERR_VALUE, "model larger than 2 GB");
    }
    tflm_fb_init(&m->fb, buf, (uint32_t)len);
    if (len == 0) {
        return tflm_error(err, TFLM_ERR_VALUE, "empty model buffer");
    }
    if (len < 8 || memcmp(buf + 4, "TFL3", 4) != 0) {
        return tflm_error(err, TFLM_ERR_VALUE, "not a .tflite model (file identifier is not TFL3)");
    }
    tflm_fb_t *fb = &m->fb;
    m->root = tflm_fb_root(fb);
    if (m->root == 0) {
        return tflm_model_check(m, err);
    }
    m->version = tflm_fb_u32(fb, m->root, TFLM_MODEL_VERSION, 0);
    m->opcodes = tflm_fb_vector(fb, m->root, TFLM_MODEL_OPERATOR_CODES, 4);
    m->subgraphs = tflm_fb_vector(fb, m->root, TFLM_MODEL_SUBGRAPHS, 4);
    m->buffers = tflm_fb_vector(fb, m->root, TFLM_MODEL_BUFFERS, 4);
    m->metadata = tflm_fb_vector(fb, m->root, TFLM_MODEL_METADATA, 4);
    tflm_status_t st = tflm_model_check(m, err);
    if (st) {
        return st;
    }
    if (m->version != 3) {
        return tflm_error(err, TFLM_ERR_VALUE, "unsupported model schema version %u (expected 3)", (unsigned)m->version);
    }
    if (m->subgraphs.count == 0) {
        return tflm_error(err, TFLM_ERR_VALUE, "malformed model: no subgraphs");
    }
    for (uint32_t i = 0; i < m->opcodes.count; ++i) {
        tflm_fb_vec_t custom;
        tflm_model_opcode(m, i, &custom);
        if (!fb->bad && !tflm_utf8_valid(buf + custom.pos, custom.count)) {
            return tflm_error(err, TFLM_ERR_VALUE, "malformed model: the custom name of operator code %u is not UTF-8",
                (unsigned)i);
        }
    }
    for (uint32_t i = 0; i < m->buffers.count; ++i) {
        uint32_t pos, blen;
        tflm_model_buffer(m, i, &pos, &blen);
    }
    for (uint32_t i = 0; i < m->metadata.count; ++i) {
        uint32_t md = tflm_fb_vec_table(fb, m->metadata, i);
        tflm_fb_vector(fb, md, TFLM_METADATA_NAME, 1);
        uint32_t b = tflm_fb_u32(fb, md, TFLM_METADATA_BUFFER, 0);
        if (!fb->bad && b >= m->buffers.count) {
            return tflm_error(err, TFLM_ERR_VALUE, "malformed model: metadata %u uses buffer %u, but the model has %u",
                (unsigned)i, (unsigned)b, (unsigned)m->buffers.count);
        }
    }
    if ((st = tflm_model_check(m, err))) {
        return st;
    }
    for (uint32_t s = 0; s < m->subgraphs.count; ++s) {
        if ((st = check_subgraph(m, s, err))) {
            return st;
        }
    }
    return TFLM_OK;
}
