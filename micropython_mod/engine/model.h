// The .tflite model reader. It reads the FlatBuffer in place (RAM or flash),
// checks the whole structure once in tflm_model_init and keeps checking on
// every later read, so a buffer changed after loading can give wrong
// answers but never an out-of-bounds access.
#ifndef TFLM_ENGINE_MODEL_H
#define TFLM_ENGINE_MODEL_H

#include "flatbuffer.h"
#include "options.h"

// Engine limits: tensor and operator indices are stored in 16 bits.
#define TFLM_MAX_TENSORS (65535u)
#define TFLM_MAX_OPS (65535u)
#define TFLM_MAX_DIMS (8u)
#define TFLM_NO_TENSOR (-1)

typedef struct _tflm_model_t {
    tflm_fb_t fb;
    uint32_t root;
    tflm_fb_vec_t opcodes;
    tflm_fb_vec_t subgraphs;
    tflm_fb_vec_t buffers;
    tflm_fb_vec_t metadata;
    uint32_t version;
    // Set by the buffer's owner when its bytes cannot change while the model
    // is in use (bytes, flash): only then is a prepared model's kernel data
    // used in place. A writable buffer's data could change under eval().
    bool immutable;
    // With immutable: bytes that cannot be written through the buffer but
    // can still change (a ROMFS region vfs.rom_ioctl rewrites, a read-only
    // view of a bytearray). What a prepared model keeps in place is then
    // checked before each invoke (the interpreter's seal, seal.c); a bytes
    // object cannot change and needs no check.
    bool rewritable;
} tflm_model_t;

typedef struct {
    uint32_t table;
    tflm_fb_vec_t tensors;
    tflm_fb_vec_t inputs;
    tflm_fb_vec_t outputs;
    tflm_fb_vec_t operators;
} tflm_subgraph_t;

typedef struct {
    uint32_t table;
    uint8_t type;
    bool is_variable;
    tflm_fb_vec_t shape;      // int32 dims
    uint32_t buffer;          // index into the model's buffers
    tflm_fb_vec_t scale;      // float32, empty when not quantized
    tflm_fb_vec_t zero_point; // int64
    int32_t quantized_dimension;
    tflm_fb_vec_t name;       // bytes, not NUL-terminated
} tflm_model_tensor_t;

typedef struct {
    uint32_t table;
    uint32_t opcode_index;
    int32_t builtin;          // builtin operator code
    tflm_fb_vec_t inputs;     // int32 tensor indices, -1 for an omitted input
    tflm_fb_vec_t outputs;
    tflm_fb_vec_t intermediates;
    uint8_t options_type;     // BuiltinOptions union type
    uint32_t options;         // options table, 0 when absent
    tflm_fb_vec_t custom_options;
} tflm_model_op_t;

// The options table to read `field` (engine/options.h: TFLM_OPT_<TABLE>_<FIELD>)
// from: the operator's, or 0 (every read gives its default) when the operator
// carries another table, as TFLM reads a mismatched union.
static inline uint32_t tflm_model_options(const tflm_model_op_t *op, uint32_t field) {
    return op->options_type == TFLM_OPT_TYPE(field) ? op->options : 0;
}
static inline int32_t tflm_model_opt_i32(tflm_model_t *m, const tflm_model_op_t *op, uint32_t field, int32_t dflt) {
    return tflm_fb_i32(&m->fb, tflm_model_options(op, field), TFLM_OPT_SLOT(field), dflt);
}
static inline uint8_t tflm_model_opt_u8(tflm_model_t *m, const tflm_model_op_t *op, uint32_t field, uint8_t dflt) {
    return tflm_fb_u8(&m->fb, tflm_model_options(op, field), TFLM_OPT_SLOT(field), dflt);
}

// Reads and checks the model; on failure returns TFLM_ERR_VALUE with a reason.
tflm_status_t tflm_model_init(tflm_model_t *m, const uint8_t *buf, size_t len, tflm_error_t *err);

// Converts a read failure into a ValueError; returns TFLM_OK if all reads were good.
tflm_status_t tflm_model_check(const tflm_model_t *m, tflm_error_t *err);

bool tflm_model_subgraph(tflm_model_t *m, uint32_t index, tflm_subgraph_t *sg);
bool tflm_model_tensor(tflm_model_t *m, const tflm_subgraph_t *sg, uint32_t index, tflm_model_tensor_t *t);
bool tflm_model_op(tflm_model_t *m, const tflm_subgraph_t *sg, uint32_t index, tflm_model_op_t *op);

// Builtin code of an operator code entry; sets *custom to the custom name (CUSTOM ops).
int32_t tflm_model_opcode(tflm_model_t *m, uint32_t index, tflm_fb_vec_t *custom);

// Position and length of a buffer's data inside the model, both 0 when empty.
bool tflm_model_buffer(tflm_model_t *m, uint32_t index, uint32_t *pos, uint32_t *len);

// Buffer index of the metadata entry called `name`, or UINT32_MAX.
uint32_t tflm_model_metadata(tflm_model_t *m, const char *name);

// This runtime's own metadata entries (prepared data, patch schedule) begin
// with a magic word and a version: *data and *len are the entry `name` once
// both match and it holds `min_bytes`, *data NULL when the model has none.
tflm_status_t tflm_model_own_metadata(tflm_model_t *m, const char *name, uint32_t magic, int32_t version,
    uint32_t min_bytes, const uint8_t **data, uint32_t *len, tflm_error_t *err);

// The zero points a tensor of `type` may have: its values' range (int32
// without INT32_MIN, which kernels negate); the int32 range for other types.
void tflm_zero_point_range(unsigned type, int64_t *lo, int64_t *hi);

// True when `n` bytes at `s` are valid UTF-8 (FlatBuffers strings must be).
bool tflm_utf8_valid(const uint8_t *s, uint32_t n);

// Element count and byte size of a tensor; false when a dimension is
// negative or those other than zeros multiply past INT32_MAX elements or
// bytes (so any product of a tensor's dimensions fits int32).
bool tflm_model_tensor_size(const tflm_model_t *m, const tflm_model_tensor_t *t, uint32_t *elements, uint32_t *bytes);

// Tensor index i of a checked int32 index vector.
static inline int32_t tflm_model_index(const tflm_model_t *m, tflm_fb_vec_t v, uint32_t i) {
    return tflm_fb_vec_i32(&m->fb, v, i);
}

// Name of a builtin op ("FULLY_CONNECTED"), or NULL when unknown.
const char *tflm_op_name(int32_t builtin);

#endif // TFLM_ENGINE_MODEL_H
