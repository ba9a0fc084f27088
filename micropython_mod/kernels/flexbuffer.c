// FlexBuffer map reader (format facts: the root's byte width is the buffer's
// last byte, its packed type the one before, its value before that; a map's
// values vector is preceded by the keys vector's offset, the keys' byte width
// and the entry count, and followed by one packed type byte per value).
#include "kernels/flexbuffer.h"

// FlexBuffer types used here.
enum {
    FLEX_NULL = 0,
    FLEX_INT = 1,
    FLEX_UINT = 2,
    FLEX_FLOAT = 3,
    FLEX_INDIRECT_INT = 6,
    FLEX_INDIRECT_UINT = 7,
    FLEX_INDIRECT_FLOAT = 8,
    FLEX_MAP = 9,
    FLEX_VECTOR_KEY = 14,
    FLEX_BOOL = 26,
};

// Entries a map may have: the signal ops use at most 9.
#define FLEX_MAX_ENTRIES (64)

static tflm_status_t flex_bad(tflm_prepare_t *p, const char *why) {
    return tflm_error(p->err, TFLM_ERR_VALUE, "malformed custom options: %s", why);
}

static bool flex_width_ok(uint32_t w) {
    return w == 1 || w == 2 || w == 4 || w == 8;
}

// Reads an unsigned integer of `width` bytes at `pos`; false when outside.
static bool flex_read(const uint8_t *buf, uint32_t len, uint32_t pos, uint32_t width, uint64_t *v) {
    if (pos > len || width > len - pos) {
        return false;
    }
    uint64_t x = 0;
    for (uint32_t i = 0; i < width; ++i) {
        x |= (uint64_t)buf[pos + i] << (8 * i);
    }
    *v = x;
    return true;
}

// The position `offset` bytes before `pos` (offsets point backwards).
static bool flex_back(uint32_t pos, uint64_t offset, uint32_t *at) {
    if (offset > pos) {
        return false;
    }
    *at = pos - (uint32_t)offset;
    return true;
}

tflm_status_t tflm_flex_map(tflm_prepare_t *p, tflm_flex_map_t *map) {
    tflm_fb_vec_t opts = p->op->custom_options;
    const uint8_t *buf = p->model->fb.buf + opts.pos; // bounds checked by the model reader
    uint32_t len = opts.count;
    memset(map, 0, sizeof(*map));
    map->buf = buf;
    map->len = len;
    if (len < 3) {
        return flex_bad(p, "too short");
    }
    uint32_t root_width = buf[len - 1];
    uint8_t packed = buf[len - 2];
    if (!flex_width_ok(root_width) || root_width > len - 2) {
        return flex_bad(p, "bad root width");
    }
    if ((packed >> 2) != FLEX_MAP) {
        return flex_bad(p, "the root is not a map");
    }
    uint32_t root = len - 2 - root_width;
    uint64_t off, count, keys_off, keys_width, keys_count;
    uint32_t width = 1u << (packed & 3);
    uint32_t values, keys_field, keys;
    if (!flex_read(buf, len, root, root_width, &off) || !flex_back(root, off, &values)
        || values < 3 * width || !flex_read(buf, len, values - width, width, &count)
        || !flex_read(buf, len, values - 2 * width, width, &keys_width)
        || !flex_read(buf, len, values - 3 * width, width, &keys_off)) {
        return flex_bad(p, "map outside the options");
    }
    keys_field = values - 3 * width;
    if (count > FLEX_MAX_ENTRIES || (uint64_t)values + count * width + count > len) {
        return flex_bad(p, "map values outside the options");
    }
    if (!flex_width_ok((uint32_t)keys_width) || !flex_back(keys_field, keys_off, &keys)
        || keys < keys_width || !flex_read(buf, len, keys - (uint32_t)keys_width, (uint32_t)keys_width, &keys_count)
        || keys_count != count || (uint64_t)keys + count * keys_width > len) {
        return flex_bad(p, "map keys outside the options");
    }
    map->values = values;
    map->count = (uint32_t)count;
    map->width = (uint8_t)width;
    map->keys = keys;
    map->keys_width = (uint8_t)keys_width;
    return TFLM_OK;
}

// Whether key i of the map is `key` (a NUL-terminated string in the buffer).
static bool flex_key_is(tflm_prepare_t *p, const tflm_flex_map_t *map, uint32_t i, const char *key, bool *bad) {
    uint32_t elem = map->keys + i * map->keys_width;
    uint64_t off;
    uint32_t at;
    if (!flex_read(map->buf, map->len, elem, map->keys_width, &off) || !flex_back(elem, off, &at)) {
        *bad = true;
        return false;
    }
    (void)p;
    for (uint32_t k = 0;; ++k) {
        if (at + k >= map->len) {
            *bad = true; // no terminating NUL inside the options
            return false;
        }
        uint8_t c = map->buf[at + k];
        if (c != (uint8_t)key[k]) {
            return false;
        }
        if (c == 0) {
            return true;
        }
    }
}

// The index of entry `key`, or map->count when the map has none.
static tflm_status_t flex_find(tflm_prepare_t *p, const tflm_flex_map_t *map, const char *key, uint32_t *index) {
    for (uint32_t i = 0; i < map->count; ++i) {
        bool bad = false;
        bool match = flex_key_is(p, map, i, key, &bad);
        if (bad) {
            return flex_bad(p, "key outside the options");
        }
        if (match) {
            *index = i;
            return TFLM_OK;
        }
    }
    *index = map->count;
    return TFLM_OK;
}

tflm_status_t tflm_flex_value(tflm_prepare_t *p, const tflm_flex_map_t *map, const char *key, tflm_flex_value_t *v) {
    memset(v, 0, sizeof(*v));
    uint32_t i;
    tflm_status_t st = flex_find(p, map, key, &i);
    if (st || i == map->count) {
        return st;
    }
    uint8_t packed = map->buf[map->values + map->count * map->width + i];
    uint32_t type = packed >> 2;
    uint32_t pos = map->values + i * map->width;
    uint32_t width = map->width;
    uint64_t raw;
    if (type == FLEX_NULL) {
        return TFLM_OK;
    }
    if (!flex_read(map->buf, map->len, pos, width, &raw)) {
        return flex_bad(p, "value outside the options");
    }
    if (type == FLEX_INDIRECT_INT || type == FLEX_INDIRECT_UINT || type == FLEX_INDIRECT_FLOAT) {
        // Stored elsewhere, at its own width.
        uint32_t at;
        width = 1u << (packed & 3);
        if (!flex_back(pos, raw, &at) || !flex_read(map->buf, map->len, at, width, &raw)) {
            return flex_bad(p, "value outside the options");
        }
        type = type == FLEX_INDIRECT_INT ? FLEX_INT : type == FLEX_INDIRECT_UINT ? FLEX_UINT : FLEX_FLOAT;
    }
    v->present = true;
    if (type == FLEX_INT) {
        // sign-extend from `width` bytes
        uint64_t sign = (uint64_t)1 << (8 * width - 1);
        v->i = (int64_t)((raw ^ sign) - sign);
    } else if (type == FLEX_UINT || type == FLEX_BOOL) {
        if (raw > (uint64_t)INT64_MAX) {
            return tflm_error(p->err, TFLM_ERR_VALUE, "custom option '%s' out of range", key);
        }
        v->i = (int64_t)raw;
    } else if (type == FLEX_FLOAT && (width == 4 || width == 8)) {
        v->is_float = true;
        if (width == 4) {
            uint32_t bits = (uint32_t)raw;
            float f;
            memcpy(&f, &bits, 4);
            v->f = (double)f;
        } else {
            memcpy(&v->f, &raw, 8);
        }
    } else {
        return tflm_error(p->err, TFLM_ERR_VALUE, "custom option '%s' is not a number", key);
    }
    if (!v->is_float) {
        v->f = (double)v->i;
    }
    return TFLM_OK;
}

tflm_status_t tflm_flex_int(tflm_prepare_t *p, const tflm_flex_map_t *map, const char *key,
    int64_t lo, int64_t hi, int32_t *value) {
    uint32_t i;
    tflm_status_t st = flex_find(p, map, key, &i);
    if (st) {
        return st;
    }
    if (i == map->count) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "custom option '%s' missing", key);
    }
    tflm_flex_value_t v;
    if ((st = tflm_flex_value(p, map, key, &v))) {
        return st;
    }
    if (!v.present || v.is_float) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "custom option '%s' is not an integer", key);
    }
    if (v.i < lo || v.i > hi) {
        return tflm_error(p->err, TFLM_ERR_VALUE, "custom option '%s' is %d, expected %d to %d", key,
            (int)(v.i < INT32_MIN ? INT32_MIN : v.i > INT32_MAX ? INT32_MAX : v.i), (int)lo, (int)hi);
    }
    *value = (int32_t)v.i;
    return TFLM_OK;
}
