// A bounds-checked reader for the FlexBuffer maps in custom operators'
// options (TFLM's signal ops keep their parameters there). Every offset is
// checked against the options' bytes; a malformed map is a ValueError.
#ifndef TFLM_KERNELS_FLEXBUFFER_H
#define TFLM_KERNELS_FLEXBUFFER_H

#include "engine/kernel.h"

typedef struct {
    const uint8_t *buf;   // the options' bytes (in the model)
    uint32_t len;
    uint32_t values;      // offset of the values vector
    uint32_t count;       // entries
    uint8_t width;        // bytes per value
    uint32_t keys;        // offset of the keys vector
    uint8_t keys_width;   // bytes per key offset
} tflm_flex_map_t;

// The root map of the operator's custom options.
tflm_status_t tflm_flex_map(tflm_prepare_t *p, tflm_flex_map_t *map);
// An integer (or bool) entry of the map; ValueError when missing, of another
// type or outside [lo, hi].
tflm_status_t tflm_flex_int(tflm_prepare_t *p, const tflm_flex_map_t *map, const char *key,
    int64_t lo, int64_t hi, int32_t *value);

// Any number in the map: an integer or bool (also given as a double), or a
// float (32 or 64 bits, as a double). `present` false when the key is
// missing or null, which TFLM reads as 0; ValueError for other types.
typedef struct {
    bool present;
    bool is_float;
    int64_t i;
    double f;
} tflm_flex_value_t;
tflm_status_t tflm_flex_value(tflm_prepare_t *p, const tflm_flex_map_t *map, const char *key, tflm_flex_value_t *v);

#endif // TFLM_KERNELS_FLEXBUFFER_H
