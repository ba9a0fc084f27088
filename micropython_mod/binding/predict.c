// Interpreter.predict(x, *, raw=False) and interp(x): real values in, real
// values out. Inputs are quantized with their scale and zero point as TFLM's
// QUANTIZE op does (engine/quant.h), outputs dequantized as its DEQUANTIZE
// does, into float arrays made on the first call and reused after it: a call
// allocates nothing once the first has run.
//
// Turning the caller's values into numbers may run Python code (an
// iterator, __len__, __float__ of the caller's own types) that resizes or
// writes any buffer, the arena's included. Each input is written through
// what the checked records said when its conversion started, and after any
// value that ran (or may have run) Python code the buffers are checked
// again before the next store; before invoke() everything is checked again
// (the records' seal too), so a store never lands outside the buffer it
// was aimed at and invoke() never follows a changed record.
#include <string.h>

#include "py/binary.h"
#include "py/objarray.h"
#include "py/objtuple.h"

#include "binding/binding.h"
#include "engine/quant.h"

// What predict() needs to know about one input or output tensor, copied
// from its record (which is in the arena, where Python code can write).
typedef struct {
    uint8_t type;
    uint32_t bytes;
    uint8_t *data;
    uint32_t count;      // elements
    float scale;         // 1 for a tensor without quantization
    int32_t zero_point;
    int32_t qmin, qmax;  // range of an integer type
} io_tensor_t;

static io_tensor_t io_tensor(tflm_interp_obj_t *self, uint32_t i, bool output) {
    tflm_interp_t *ip = &self->ip;
    uint32_t index = output ? tflm_interp_output(ip, i) : tflm_interp_input(ip, i);
    io_tensor_t t;
    const tflm_tensor_rec_t *rec = tflm_interp_tensor(ip, index);
    t.type = rec->type;
    t.bytes = rec->bytes;
    t.data = tflm_interp_tensor_data(ip, rec);
    if (t.type != TFLM_FLOAT32 && !tflm_int_range(t.type, &t.qmin, &t.qmax)) {
        mp_raise_msg_varg(&mp_type_TypeError,
            MP_ERROR_TEXT("%s %u is %s: predict() takes float32, int8, uint8, int16 and int32 tensors; use %s()"),
            output ? "output" : "input", (unsigned)i, tflm_type_name(t.type), output ? "output" : "input");
    }
    t.count = t.bytes / mp_binary_get_size('@', tflm_typecode(t.type), NULL);
    // Scale and zero point from the model (subgraph 0's tensors come first).
    tflm_model_t *m = ip->model;
    tflm_subgraph_t sg;
    tflm_model_tensor_t mt;
    const tflm_subgraph_rec_t *sgr = tflm_interp_subgraph(ip, 0);
    t.scale = 1.0f;
    t.zero_point = 0;
    if (tflm_model_subgraph(m, 0, &sg) && tflm_model_tensor(m, &sg, tflm_interp_tensor_of(ip, index) - sgr->tensor_base, &mt)
        && mt.scale.count > 0 && tflm_fb_vec_f32(&m->fb, mt.scale, 0) != 0.0f) {
        t.scale = tflm_fb_vec_f32(&m->fb, mt.scale, 0);
        t.zero_point = mt.zero_point.count ? (int32_t)tflm_fb_vec_i64(&m->fb, mt.zero_point, 0) : 0;
    }
    return t;
}

// ---------------------------------------------------------------------------
// What a buffer given for an input holds (predict() and set_input()).
//
// bytes, bytearray, memoryviews of them and ROMFS files are untyped: the
// tensor's own bytes, copied as they are. An array, or a memoryview with an
// item type, says what its values are: they must be the tensor's type (or
// floats, which predict() quantizes). So array('B') of 0-255 pixels is
// refused by an int8 input instead of being read as signed bytes.

bool tflm_untyped_bytes(mp_obj_t x, const mp_buffer_info_t *b) {
    #if MICROPY_PY_ARRAY
    if (mp_obj_is_type(x, &mp_type_array)) {
        return false;
    }
    #endif
    return b->typecode == 'B' || b->typecode == BYTEARRAY_TYPECODE;
}

// Input i described: "input 0 is int8 [1,96,96,1]".
static void describe_input(tflm_interp_obj_t *self, uint32_t i, mp_print_t *pr) {
    tflm_interp_t *ip = &self->ip;
    uint32_t rec = tflm_interp_input(ip, i);
    const tflm_tensor_rec_t *r = tflm_interp_tensor(ip, rec);
    mp_printf(pr, "input %u is %s [", (unsigned)i, tflm_type_name(r->type));
    tflm_model_t *m = ip->model;
    tflm_subgraph_t sg;
    tflm_model_tensor_t mt;
    const tflm_subgraph_rec_t *sgr = tflm_interp_subgraph(ip, 0);
    if (tflm_model_subgraph(m, 0, &sg) && tflm_model_tensor(m, &sg, tflm_interp_tensor_of(ip, rec) - sgr->tensor_base, &mt)) {
        for (uint32_t d = 0; d < mt.shape.count; ++d) {
            mp_printf(pr, d ? ",%d" : "%d", (int)tflm_fb_vec_i32(&m->fb, mt.shape, d));
        }
    }
    mp_print_str(pr, "]");
}

static NORETURN void raise_vstr(const mp_obj_type_t *type, vstr_t *v) {
    mp_raise_msg_varg(type, MP_ERROR_TEXT("%s"), vstr_null_terminated_str(v));
}

void tflm_input_raise_length(tflm_interp_obj_t *self, uint32_t i, size_t got) {
    vstr_t v;
    mp_print_t pr;
    vstr_init_print(&v, 64, &pr);
    describe_input(self, i, &pr);
    mp_printf(&pr, " (%u bytes): got %u bytes", (unsigned)tflm_interp_tensor(&self->ip, tflm_interp_input(&self->ip, i))->bytes,
        (unsigned)got);
    raise_vstr(&mp_type_ValueError, &v);
}

void tflm_input_refuse(tflm_interp_obj_t *self, uint32_t i, mp_obj_t x, bool reals) {
    vstr_t v;
    mp_print_t pr;
    vstr_init_print(&v, 96, &pr);
    describe_input(self, i, &pr);
    uint8_t type = tflm_interp_tensor(&self->ip, tflm_interp_input(&self->ip, i))->type;
    char own = tflm_typecode(type);
    mp_buffer_info_t b;
    bool typed = !mp_obj_is_str(x) && mp_get_buffer(x, &b, MP_BUFFER_READ) && !tflm_untyped_bytes(x, &b);
    if (type == TFLM_INT8) {
        mp_print_str(&pr, ": pass array('b') or bytes of signed values");
    } else if (own == 'B') {
        mp_printf(&pr, ": pass array('B') or bytes");
    } else {
        mp_printf(&pr, ": pass array('%c')%s", own, reals ? "" : " or its raw bytes");
    }
    if (reals && type != TFLM_FLOAT32) {
        mp_print_str(&pr, ", or floats (quantized)");
    }
    if (typed) {
        mp_printf(&pr, ", not %s('%c')", mp_obj_get_type_str(x), b.typecode);
    } else {
        mp_printf(&pr, ", not %s", mp_obj_get_type_str(x));
    }
    if (type == TFLM_INT8 && typed && b.typecode == 'B') {
        mp_print_str(&pr, "; for 0-255 pixels subtract 128 (x - 128)");
    } else if (!reals && typed && (b.typecode == 'f' || b.typecode == 'd') && type != TFLM_FLOAT32) {
        mp_print_str(&pr, "; predict() quantizes floats");
    }
    raise_vstr(&mp_type_TypeError, &v);
}

tflm_input_kind_t tflm_input_kind(tflm_interp_obj_t *self, uint32_t i, mp_obj_t x, const mp_buffer_info_t *b, bool reals) {
    if (tflm_untyped_bytes(x, b)) {
        return TFLM_INPUT_RAW;
    }
    char own = tflm_typecode(tflm_interp_tensor(&self->ip, tflm_interp_input(&self->ip, i))->type);
    char tc = (char)b->typecode;
    if (tc == own) {
        return TFLM_INPUT_RAW;
    }
    if (reals && (tc == 'f' || tc == 'd')) {
        return TFLM_INPUT_REAL;
    }
    tflm_input_refuse(self, i, x, reals);
}

// Stores real value v into element k of input t.
static inline void store_real(const io_tensor_t *t, uint32_t k, float v) {
    if (t->type == TFLM_FLOAT32) {
        memcpy(t->data + 4 * k, &v, 4);
        return;
    }
    int32_t q = tflm_quantize_one(v, t->scale, t->zero_point, t->qmin, t->qmax);
    switch (t->type) {
        case TFLM_INT8:
            ((int8_t *)t->data)[k] = (int8_t)q;
            break;
        case TFLM_UINT8:
            t->data[k] = (uint8_t)q;
            break;
        case TFLM_INT16:
            ((int16_t *)t->data)[k] = (int16_t)q;
            break;
        default:
            ((int32_t *)t->data)[k] = q;
            break;
    }
}

static NORETURN void raise_length(uint32_t i, const io_tensor_t *t, size_t got) {
    mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("input %u takes %u values, got %u"), (unsigned)i,
        (unsigned)t->count, (unsigned)got);
}

// Whether converting `item` to a float can run Python code: anything but
// the built-in numbers (whose conversion reads them).
static bool runs_python(mp_obj_t item) {
    return !mp_obj_is_int(item) && !mp_obj_is_float(item) && !mp_obj_is_bool(item);
}

// A value of a sequence converted to a float, with the buffers checked
// again when that may have run Python code.
static float real_value(tflm_interp_obj_t *self, mp_obj_t item, bool *ran) {
    float v = (float)mp_obj_get_float(item);
    if (runs_python(item)) {
        *ran = true;
        tflm_interp_check_moved(self);
    }
    return v;
}

// Input i from x: a buffer of float32/float64 values or of the input's own
// type (copied raw; bytes and bytearray for 8-bit inputs), or a sequence of
// numbers (real values). Sets *ran when Python code ran (or may have).
static void set_input(tflm_interp_obj_t *self, uint32_t i, mp_obj_t x, bool *ran) {
    io_tensor_t t = io_tensor(self, i, false);
    mp_buffer_info_t bufinfo;
    if (mp_obj_is_str(x)) {
        tflm_input_refuse(self, i, x, true);
    }
    if (mp_get_buffer(x, &bufinfo, MP_BUFFER_READ)) {
        // Untyped bytes are the tensor's own only when its items are bytes.
        tflm_input_kind_t kind = tflm_input_kind(self, i, x, &bufinfo, true);
        if (kind == TFLM_INPUT_RAW && tflm_untyped_bytes(x, &bufinfo) && t.bytes != t.count) {
            tflm_input_refuse(self, i, x, true);
        }
        if (kind == TFLM_INPUT_RAW) {
            if (bufinfo.len != t.bytes) {
                tflm_input_raise_length(self, i, bufinfo.len);
            }
            memmove(t.data, bufinfo.buf, bufinfo.len); // x may be a view of the arena
            return;
        }
        char tc = (char)bufinfo.typecode;
        size_t item = tc == 'f' ? 4 : 8;
        if (bufinfo.len / item != t.count) {
            raise_length(i, &t, bufinfo.len / item);
        }
        const uint8_t *p = bufinfo.buf;
        for (uint32_t k = 0; k < t.count; ++k, p += item) {
            float v;
            if (tc == 'f') {
                memcpy(&v, p, 4);
            } else {
                double d;
                memcpy(&d, p, 8);
                v = (float)d;
            }
            store_real(&t, k, v);
        }
        return;
    }
    if (mp_obj_is_type(x, &mp_type_list) || mp_obj_is_type(x, &mp_type_tuple)) {
        size_t len;
        mp_obj_t *items;
        mp_obj_get_array(x, &len, &items);
        if (len != t.count) {
            raise_length(i, &t, len);
        }
        for (uint32_t k = 0; k < t.count; ++k) {
            // The list again each time: Python code may have changed it.
            mp_obj_get_array(x, &len, &items);
            if (k >= len) {
                raise_length(i, &t, len);
            }
            store_real(&t, k, real_value(self, items[k], ran));
        }
        return;
    }
    // A set or a dict has a length and an iterator, but no order that a
    // tensor's values could follow (a dict iterates its keys): refused
    // rather than read in hash order.
    const qstr kind = mp_obj_get_type(x)->name;
    if (kind == MP_QSTR_set || kind == MP_QSTR_frozenset || kind == MP_QSTR_dict) {
        mp_raise_msg_varg(&mp_type_TypeError,
            MP_ERROR_TEXT("input %u: expected a sequence, array, memoryview or ndarray of numbers, not %s (no order)"),
            (unsigned)i, mp_obj_get_type_str(x));
    }
    // Any other sequence (a ulab ndarray without the buffer protocol, a
    // generator, the caller's own type): its length and iterator may run
    // Python code.
    *ran = true;
    mp_obj_t len_in = mp_obj_len_maybe(x);
    if (len_in == MP_OBJ_NULL) {
        mp_raise_msg_varg(&mp_type_TypeError,
            MP_ERROR_TEXT("input %u: expected a sequence, array, memoryview or ndarray of numbers, not %s"),
            (unsigned)i, mp_obj_get_type_str(x));
    }
    mp_int_t len = mp_obj_get_int(len_in); // a __len__ may return anything
    if (len < 0 || (mp_uint_t)len != t.count) {
        raise_length(i, &t, (size_t)len);
    }
    mp_obj_iter_buf_t iter_buf;
    mp_obj_t iter = mp_getiter(x, &iter_buf);
    for (uint32_t k = 0; k < t.count; ++k) {
        mp_obj_t item = mp_iternext(iter);
        if (item == MP_OBJ_STOP_ITERATION) {
            raise_length(i, &t, k);
        }
        float v = (float)mp_obj_get_float(item);
        tflm_interp_check_moved(self);
        store_real(&t, k, v);
    }
}

// A float array of n items (made once per output).
static mp_obj_t new_float_array(uint32_t n) {
    mp_obj_array_t *a = m_new_obj(mp_obj_array_t);
    a->base.type = &mp_type_array;
    a->typecode = 'f';
    a->free = 0;
    a->len = n;
    a->items = m_new(float, n);
    return MP_OBJ_FROM_PTR(a);
}

// Output o dequantized into array a.
static void get_output(tflm_interp_obj_t *self, uint32_t o, mp_obj_t a_in) {
    io_tensor_t t = io_tensor(self, o, true);
    mp_obj_array_t *a = MP_OBJ_TO_PTR(a_in);
    float *out = a->items;
    for (uint32_t k = 0; k < t.count; ++k) {
        switch (t.type) {
            case TFLM_FLOAT32:
                memcpy(&out[k], t.data + 4 * k, 4);
                break;
            case TFLM_INT8:
                out[k] = tflm_dequantize_one(((const int8_t *)t.data)[k], t.scale, t.zero_point);
                break;
            case TFLM_UINT8:
                out[k] = tflm_dequantize_one(t.data[k], t.scale, t.zero_point);
                break;
            case TFLM_INT16:
                out[k] = tflm_dequantize_one(((const int16_t *)t.data)[k], t.scale, t.zero_point);
                break;
            default:
                out[k] = tflm_dequantize_one(((const int32_t *)t.data)[k], t.scale, t.zero_point);
                break;
        }
    }
}

// The cached result: one object, or a tuple of one per output.
static mp_obj_t result_for(tflm_interp_obj_t *self, bool raw) {
    tflm_interp_t *ip = &self->ip;
    uint32_t n = tflm_interp_num_outputs(ip);
    mp_obj_t *cache = raw ? &self->predicted_raw : &self->predicted;
    if (*cache == MP_OBJ_NULL) {
        mp_obj_t made = n == 1 ? MP_OBJ_NULL : mp_obj_new_tuple(n, NULL);
        for (uint32_t o = 0; o < n; ++o) {
            mp_obj_t item = raw ? tflm_tensor_view(self, tflm_interp_output(ip, o))
                : new_float_array(io_tensor(self, o, true).count);
            if (n == 1) {
                made = item;
            } else {
                ((mp_obj_tuple_t *)MP_OBJ_TO_PTR(made))->items[o] = item;
            }
        }
        *cache = made;
    }
    return *cache;
}

static mp_obj_t predict(tflm_interp_obj_t *self, mp_obj_t x, bool raw) {
    tflm_interp_check(self);
    tflm_interp_t *ip = &self->ip;
    uint32_t n = tflm_interp_num_inputs(ip);
    if (tflm_interp_num_outputs(ip) == 0) {
        mp_raise_ValueError(MP_ERROR_TEXT("model has no outputs"));
    }
    // The result objects first (made on the first call): from the checked
    // records, before any of the caller's code runs.
    mp_obj_t result = result_for(self, raw);
    // One input: x itself, or x in a list or tuple of one (as OpenMV's ml takes it).
    bool ran = false;
    size_t len = 0;
    mp_obj_t *items = NULL;
    bool seq = mp_obj_is_type(x, &mp_type_list) || mp_obj_is_type(x, &mp_type_tuple);
    if (seq) {
        mp_obj_get_array(x, &len, &items);
    }
    if (n == 1) {
        if (seq && len == 1 && !mp_obj_is_int(items[0]) && !mp_obj_is_float(items[0])) {
            x = items[0];
        }
        set_input(self, 0, x, &ran);
    } else {
        if (!seq || len != n) {
            mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("model has %u inputs: give a tuple of %u"),
                (unsigned)n, (unsigned)n);
        }
        for (uint32_t i = 0; i < n; ++i) {
            if (ran) {
                // The next input's record is read again: checked first.
                tflm_interp_check(self);
            }
            mp_obj_get_array(x, &len, &items); // a list may have changed
            if (len != n) {
                mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("model has %u inputs: give a tuple of %u"),
                    (unsigned)n, (unsigned)n);
            }
            set_input(self, i, items[i], &ran);
        }
    }
    tflm_c_stack_check();
    if (ran) {
        tflm_interp_check(self);
    }
    if (tflm_interp_obj_run(self, false) != TFLM_OK) {
        tflm_raise(&ip->err);
    }
    if (!raw) {
        uint32_t n_out = tflm_interp_num_outputs(ip);
        for (uint32_t o = 0; o < n_out; ++o) {
            get_output(self, o, n_out == 1 ? result : ((mp_obj_tuple_t *)MP_OBJ_TO_PTR(result))->items[o]);
        }
    }
    return result;
}

// predict()'s and __call__'s arguments (a table in each: TFLM_ARG_TABLE).
#define PREDICT_ARGS \
    TFLM_ARG_TABLE mp_arg_t predict_args[] = { \
        { MP_QSTR_x, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} }, \
        { MP_QSTR_raw, MP_ARG_KW_ONLY | MP_ARG_BOOL, {.u_bool = false} }, \
    }

// predict(x, *, raw=False)
static mp_obj_t interp_predict(size_t n_args, const mp_obj_t *pos_args, mp_map_t *kw_args) {
    PREDICT_ARGS;
    mp_arg_val_t args[MP_ARRAY_SIZE(predict_args)];
    mp_arg_parse_all(n_args - 1, pos_args + 1, kw_args, MP_ARRAY_SIZE(predict_args), predict_args, args);
    return predict(MP_OBJ_TO_PTR(pos_args[0]), args[0].u_obj, args[1].u_bool);
}
MP_DEFINE_CONST_FUN_OBJ_KW(tflm_interp_predict_obj, 2, interp_predict);

// interp(x, *, raw=False): the same.
mp_obj_t tflm_interp_call(mp_obj_t self_in, size_t n_args, size_t n_kw, const mp_obj_t *all_args) {
    PREDICT_ARGS;
    mp_arg_val_t args[MP_ARRAY_SIZE(predict_args)];
    mp_arg_parse_all_kw_array(n_args, n_kw, all_args, MP_ARRAY_SIZE(predict_args), predict_args, args);
    return predict(MP_OBJ_TO_PTR(self_in), args[0].u_obj, args[1].u_bool);
}
