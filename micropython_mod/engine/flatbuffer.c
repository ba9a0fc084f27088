// Checked FlatBuffers reader (see flatbuffer.h).
#include "flatbuffer.h"

void tflm_fb_init(tflm_fb_t *fb, const uint8_t *buf, uint32_t len) {
    fb->buf = buf;
    fb->len = len;
    fb->bad = NULL;
    fb->bad_pos = 0;
}

void tflm_fb_fail(tflm_fb_t *fb, uint32_t pos, const char *why) {
    if (fb->bad == NULL) {
        fb->bad = why;
        fb->bad_pos = pos;
    }
}

// True when [pos, pos + size) lies inside the buffer (64-bit sum: no wrap).
static bool fb_in(const tflm_fb_t *fb, uint64_t pos, uint64_t size) {
    return pos + size <= fb->len;
}

// Follows the uoffset stored at `at`; returns 0 and marks the buffer on error.
static uint32_t fb_deref(tflm_fb_t *fb, uint32_t at) {
    if (!fb_in(fb, at, 4)) {
        tflm_fb_fail(fb, at, "offset outside the buffer");
        return 0;
    }
    uint64_t target = (uint64_t)at + tflm_rd_u32(fb->buf + at);
    if (!fb_in(fb, target, 4) || target == 0) {
        tflm_fb_fail(fb, at, "offset points outside the buffer");
        return 0;
    }
    return (uint32_t)target;
}

// Checks the table at `table` and returns its vtable position (0 on error).
static uint32_t fb_vtable(tflm_fb_t *fb, uint32_t table, uint32_t *table_size) {
    if (fb->bad || table == 0) {
        return 0;
    }
    if (!fb_in(fb, table, 4)) {
        tflm_fb_fail(fb, table, "table outside the buffer");
        return 0;
    }
    int64_t vt = (int64_t)table - (int64_t)tflm_rd_i32(fb->buf + table);
    if (vt < 0 || !fb_in(fb, (uint64_t)vt, 4) || (vt & 1)) {
        tflm_fb_fail(fb, table, "vtable outside the buffer");
        return 0;
    }
    uint32_t v = (uint32_t)vt;
    uint32_t vsize = tflm_rd_u16(fb->buf + v);
    uint32_t tsize = tflm_rd_u16(fb->buf + v + 2);
    if (vsize < 4 || (vsize & 1) || !fb_in(fb, v, vsize) || tsize < 4 || !fb_in(fb, table, tsize)) {
        tflm_fb_fail(fb, table, "bad vtable");
        return 0;
    }
    *table_size = tsize;
    return v;
}

uint32_t tflm_fb_field(tflm_fb_t *fb, uint32_t table, unsigned field, uint32_t size) {
    uint32_t tsize;
    uint32_t v = fb_vtable(fb, table, &tsize);
    if (v == 0) {
        return 0;
    }
    uint32_t vsize = tflm_rd_u16(fb->buf + v);
    uint32_t slot = 4u + 2u * field;
    if (slot + 2u > vsize) {
        return 0; // field newer than the writer: absent
    }
    uint32_t off = tflm_rd_u16(fb->buf + v + slot);
    if (off == 0) {
        return 0;
    }
    if (off + size > tsize) {
        tflm_fb_fail(fb, table, "field outside its table");
        return 0;
    }
    return table + off;
}

uint32_t tflm_fb_root(tflm_fb_t *fb) {
    if (fb->len < 8) {
        tflm_fb_fail(fb, 0, "buffer too short for a model");
        return 0;
    }
    uint32_t root = fb_deref(fb, 0);
    uint32_t tsize;
    if (root && fb_vtable(fb, root, &tsize) == 0) {
        return 0;
    }
    return root;
}

uint8_t tflm_fb_u8(tflm_fb_t *fb, uint32_t table, unsigned field, uint8_t dflt) {
    uint32_t at = tflm_fb_field(fb, table, field, 1);
    return at ? fb->buf[at] : dflt;
}

uint32_t tflm_fb_u32(tflm_fb_t *fb, uint32_t table, unsigned field, uint32_t dflt) {
    uint32_t at = tflm_fb_field(fb, table, field, 4);
    return at ? tflm_rd_u32(fb->buf + at) : dflt;
}

// The other 4-byte scalars are the same bytes, read as their type.
int32_t tflm_fb_i32(tflm_fb_t *fb, uint32_t table, unsigned field, int32_t dflt) {
    return (int32_t)tflm_fb_u32(fb, table, field, (uint32_t)dflt);
}

float tflm_fb_f32(tflm_fb_t *fb, uint32_t table, unsigned field, float dflt) {
    return tflm_f32_from(tflm_fb_u32(fb, table, field, tflm_f32_bits(dflt)));
}

uint64_t tflm_fb_u64(tflm_fb_t *fb, uint32_t table, unsigned field, uint64_t dflt) {
    uint32_t at = tflm_fb_field(fb, table, field, 8);
    return at ? tflm_rd_u64(fb->buf + at) : dflt;
}

uint32_t tflm_fb_table(tflm_fb_t *fb, uint32_t table, unsigned field) {
    uint32_t at = tflm_fb_field(fb, table, field, 4);
    if (at == 0) {
        return 0;
    }
    uint32_t sub = fb_deref(fb, at);
    uint32_t tsize;
    if (sub && fb_vtable(fb, sub, &tsize) == 0) {
        return 0;
    }
    return sub;
}

tflm_fb_vec_t tflm_fb_vector(tflm_fb_t *fb, uint32_t table, unsigned field, uint32_t elem_size) {
    tflm_fb_vec_t vec = { 0, 0 };
    uint32_t at = tflm_fb_field(fb, table, field, 4);
    if (at == 0) {
        return vec;
    }
    uint32_t v = fb_deref(fb, at);
    if (v == 0) {
        return vec;
    }
    uint32_t count = tflm_rd_u32(fb->buf + v);
    if (!fb_in(fb, (uint64_t)v + 4u, (uint64_t)count * elem_size)) {
        tflm_fb_fail(fb, v, "vector runs past the end of the buffer");
        return vec;
    }
    vec.pos = v + 4u;
    vec.count = count;
    return vec;
}

uint32_t tflm_fb_vec_table(tflm_fb_t *fb, tflm_fb_vec_t vec, uint32_t i) {
    if (fb->bad) {
        return 0;
    }
    if (i >= vec.count) {
        tflm_fb_fail(fb, vec.pos, "vector index out of range");
        return 0;
    }
    uint32_t t = fb_deref(fb, vec.pos + 4u * i);
    uint32_t tsize;
    if (t && fb_vtable(fb, t, &tsize) == 0) {
        return 0;
    }
    return t;
}

bool tflm_fb_string_eq(tflm_fb_t *fb, uint32_t table, unsigned field, const char *s) {
    tflm_fb_vec_t str = tflm_fb_vector(fb, table, field, 1);
    size_t n = strlen(s);
    return str.pos != 0 && str.count == n && memcmp(fb->buf + str.pos, s, n) == 0;
}
