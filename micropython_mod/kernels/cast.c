// CAST between int8, int16, int32, uint32, float32 and bool, as TFLM's
// reference: integers wrap to narrower integers, floats saturate to integer
// ranges (NaN gives 0), any non-zero value is true.
#include "kernels/kernels.h"

#if TFLM_KERNEL_CAST

typedef struct {
    uint8_t in_type;
    uint8_t out_type;
    uint16_t reserved;
    uint32_t count;
} cast_data_t;

static const uint8_t cast_types[] = { TFLM_INT8, TFLM_INT16, TFLM_INT32, TFLM_UINT32, TFLM_FLOAT32, TFLM_BOOL };

tflm_status_t tflm_cast_prepare(tflm_prepare_t *p) {
    tflm_tinfo_t in, out;
    tflm_status_t st = tflm_prep_io_1_1(p, &in, &out);
    if (st || (st = tflm_prep_type_in(p, "input", &in, cast_types, sizeof(cast_types), NULL))
        || (st = tflm_prep_type_in(p, "output", &out, cast_types, sizeof(cast_types), NULL))
        || (st = tflm_prep_same_elements(p, &in, &out))) {
        return st;
    }
    cast_data_t *d = tflm_prep_alloc(p, sizeof(cast_data_t));
    if (d == NULL) {
        return tflm_prep_status(p);
    }
    d->in_type = in.type;
    d->out_type = out.type;
    d->count = in.elements;
    return TFLM_OK;
}

// A value on its way: integers exactly (int64 holds them all), or a float.
typedef struct {
    bool is_float;
    int64_t i;
    float f;
} cast_value_t;

static cast_value_t cast_load(const uint8_t *p, uint8_t type) {
    cast_value_t v = { false, 0, 0.0f };
    switch (type) {
        case TFLM_INT8:
            v.i = (int8_t)p[0];
            break;
        case TFLM_INT16:
            v.i = (int16_t)tflm_rd_u16(p);
            break;
        case TFLM_INT32:
            v.i = tflm_rd_i32(p);
            break;
        case TFLM_UINT32:
            v.i = tflm_rd_u32(p);
            break;
        case TFLM_BOOL:
            v.i = p[0] != 0;
            break;
        default:
            v.is_float = true;
            v.f = tflm_rd_f32(p);
            break;
    }
    return v;
}

// Float to a signed integer range, saturating; NaN gives 0.
static int64_t cast_saturate(float f, int64_t lo, int64_t hi) {
    if (f != f) {
        return 0;
    }
    if (f >= (float)hi) {
        return hi;
    }
    if (f <= (float)lo) {
        return lo;
    }
    return (int64_t)f;
}

static void cast_store(uint8_t *p, uint8_t type, cast_value_t v) {
    switch (type) {
        case TFLM_INT8: {
            int64_t x = v.is_float ? cast_saturate(v.f, INT8_MIN, INT8_MAX) : v.i;
            p[0] = (uint8_t)x;
            break;
        }
        case TFLM_INT16: {
            uint16_t x = (uint16_t)(v.is_float ? cast_saturate(v.f, INT16_MIN, INT16_MAX) : v.i);
            memcpy(p, &x, 2);
            break;
        }
        case TFLM_INT32: {
            uint32_t x = (uint32_t)(v.is_float ? cast_saturate(v.f, INT32_MIN, INT32_MAX) : v.i);
            memcpy(p, &x, 4);
            break;
        }
        case TFLM_UINT32: {
            uint32_t x = (uint32_t)(v.is_float ? cast_saturate(v.f, 0, UINT32_MAX) : v.i);
            memcpy(p, &x, 4);
            break;
        }
        case TFLM_BOOL:
            p[0] = v.is_float ? v.f != 0.0f : v.i != 0;
            break;
        default: {
            float x = v.is_float ? v.f : (float)v.i;
            memcpy(p, &x, 4);
            break;
        }
    }
}

// Integer to integer (bool among them): the value's low 32 bits decide
// every result, so each pair is a plain loop, written in by the constant
// sizes: `in_size` bytes read (sign-extended; a bool as 0 or 1), the low
// `out_size` bytes stored (a bool out as value != 0).
static TFLM_ALWAYS_INLINE void cast_int_loop(const uint8_t *in, uint8_t *out, uint32_t n, uint32_t in_size,
    bool in_bool, uint32_t out_size, bool out_bool) {
    for (uint32_t i = 0; i < n; ++i, in += in_size, out += out_size) {
        uint32_t v = in_bool ? (uint32_t)(in[0] != 0)
            : in_size == 1 ? (uint32_t)(int32_t)(int8_t)in[0]
            : in_size == 2 ? (uint32_t)(int32_t)(int16_t)tflm_rd_u16(in) : tflm_rd_u32(in);
        if (out_bool) {
            out[0] = v != 0;
        } else if (out_size == 1) {
            out[0] = (uint8_t)v;
        } else if (out_size == 2) {
            uint16_t h = (uint16_t)v;
            memcpy(out, &h, 2);
        } else {
            memcpy(out, &v, 4);
        }
    }
}

// The integer kinds: 0 int8, 1 int16, 2 int32 or uint32, 3 bool; -1 float.
static int cast_int_kind(uint8_t type) {
    switch (type) {
        case TFLM_INT8:
            return 0;
        case TFLM_INT16:
            return 1;
        case TFLM_INT32:
        case TFLM_UINT32:
            return 2;
        case TFLM_BOOL:
            return 3;
        default:
            return -1;
    }
}

static TFLM_ALWAYS_INLINE void cast_int_to(const uint8_t *in, uint8_t *out, uint32_t n, uint32_t in_size,
    bool in_bool, int out_kind) {
    switch (out_kind) {
        case 0:
            cast_int_loop(in, out, n, in_size, in_bool, 1, false);
            break;
        case 1:
            cast_int_loop(in, out, n, in_size, in_bool, 2, false);
            break;
        case 2:
            cast_int_loop(in, out, n, in_size, in_bool, 4, false);
            break;
        default:
            cast_int_loop(in, out, n, in_size, in_bool, 1, true);
            break;
    }
}

tflm_status_t tflm_cast_eval(tflm_eval_t *e) {
    const cast_data_t *d = e->data;
    const uint8_t *in = e->in[0];
    uint8_t *out = e->out[0];
    const int ik = cast_int_kind(d->in_type), ok = cast_int_kind(d->out_type);
    if (ik == ok && ik >= 0 && ik < 3) {
        // Same width (int32 and uint32 too): the bytes as they are.
        if (out != in) {
            memmove(out, in, (size_t)d->count << ik);
        }
        return TFLM_OK;
    }
    switch (ok < 0 ? -1 : ik) {
        case 0:
            cast_int_to(in, out, d->count, 1, false, ok);
            return TFLM_OK;
        case 1:
            cast_int_to(in, out, d->count, 2, false, ok);
            return TFLM_OK;
        case 2:
            cast_int_to(in, out, d->count, 4, false, ok);
            return TFLM_OK;
        case 3:
            cast_int_to(in, out, d->count, 1, true, ok);
            return TFLM_OK;
        default:
            break;
    }
    // Float in or out: value by value.
    const size_t in_size = tflm_type_size(d->in_type), out_size = tflm_type_size(d->out_type);
    for (uint32_t i = 0; i < d->count; ++i) {
        cast_store(out + i * out_size, d->out_type, cast_load(in + i * in_size, d->in_type));
    }
    return TFLM_OK;
}

#endif // TFLM_KERNEL_CAST
