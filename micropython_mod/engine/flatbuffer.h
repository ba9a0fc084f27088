// A checked reader for FlatBuffers data. Every offset, length and vtable is
// checked against the buffer before it is followed. The first problem found
// is kept in `bad` and every later read returns a default, so callers can do a
// run of reads and check once.
#ifndef TFLM_ENGINE_FLATBUFFER_H
#define TFLM_ENGINE_FLATBUFFER_H

#include "common.h"

typedef struct _tflm_fb_t {
    const uint8_t *buf;
    uint32_t len;
    const char *bad; // first problem found, NULL while every read was in bounds
    uint32_t bad_pos; // where it was found
} tflm_fb_t;

// A vector: absolute position of element 0 and element count (0 when absent).
typedef struct {
    uint32_t pos;
    uint32_t count;
} tflm_fb_vec_t;

void tflm_fb_init(tflm_fb_t *fb, const uint8_t *buf, uint32_t len);

// Position of the root table; 0 marks "absent" everywhere (no table can sit at 0).
uint32_t tflm_fb_root(tflm_fb_t *fb);

// Absolute position of a scalar field of `size` bytes, 0 when absent.
uint32_t tflm_fb_field(tflm_fb_t *fb, uint32_t table, unsigned field, uint32_t size);

uint8_t tflm_fb_u8(tflm_fb_t *fb, uint32_t table, unsigned field, uint8_t dflt);
int32_t tflm_fb_i32(tflm_fb_t *fb, uint32_t table, unsigned field, int32_t dflt);
uint32_t tflm_fb_u32(tflm_fb_t *fb, uint32_t table, unsigned field, uint32_t dflt);
uint64_t tflm_fb_u64(tflm_fb_t *fb, uint32_t table, unsigned field, uint64_t dflt);
float tflm_fb_f32(tflm_fb_t *fb, uint32_t table, unsigned field, float dflt);

// Sub-table referenced by a field, 0 when absent.
uint32_t tflm_fb_table(tflm_fb_t *fb, uint32_t table, unsigned field);

// Vector referenced by a field, with elements of elem_size bytes.
tflm_fb_vec_t tflm_fb_vector(tflm_fb_t *fb, uint32_t table, unsigned field, uint32_t elem_size);

// Element i of a vector of tables (i must be < count), 0 on error.
uint32_t tflm_fb_vec_table(tflm_fb_t *fb, tflm_fb_vec_t vec, uint32_t i);

// Elements of already-checked vectors.
static inline int32_t tflm_fb_vec_i32(const tflm_fb_t *fb, tflm_fb_vec_t vec, uint32_t i) {
    return tflm_rd_i32(fb->buf + vec.pos + 4u * i);
}
static inline int64_t tflm_fb_vec_i64(const tflm_fb_t *fb, tflm_fb_vec_t vec, uint32_t i) {
    return (int64_t)tflm_rd_u64(fb->buf + vec.pos + 8u * i);
}
static inline float tflm_fb_vec_f32(const tflm_fb_t *fb, tflm_fb_vec_t vec, uint32_t i) {
    return tflm_rd_f32(fb->buf + vec.pos + 4u * i);
}

// True when the string field equals `s` exactly.
bool tflm_fb_string_eq(tflm_fb_t *fb, uint32_t table, unsigned field, const char *s);

// Marks the buffer as bad (used for semantic errors found by callers).
void tflm_fb_fail(tflm_fb_t *fb, uint32_t pos, const char *why);

#endif // TFLM_ENGINE_FLATBUFFER_H
