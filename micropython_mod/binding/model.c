// tflm.Model and tflm.TensorInfo: a .tflite model read in place.
#include <string.h>

#include "py/binary.h"
#include "py/builtin.h"
#include "py/gc.h"
#include "py/mpstate.h"
#include "py/objarray.h"
#include "py/objstr.h"

#include "binding/binding.h"

// ---------------------------------------------------------------------------
// Errors

// NotImplementedError naming every op the model needs and this build lacks,
// left out of it or with no kernel at all (the engine's own message is
// bounded); other errors as they are.
NORETURN void tflm_raise_for(tflm_model_t *model, const tflm_error_t *err) {
    size_t n = err->status == TFLM_ERR_NOT_IMPLEMENTED ? tflm_interp_missing_ops_message(model, NULL, 0) : 0;
    if (n) {
        vstr_t vstr;
        vstr_init(&vstr, n + 1);
        tflm_interp_missing_ops_message(model, vstr.buf, n + 1);
        vstr.len = n;
        mp_raise_msg_varg(&mp_type_NotImplementedError, MP_ERROR_TEXT("%s"), vstr_null_terminated_str(&vstr));
    }
    tflm_raise(err);
}

NORETURN void tflm_raise(const tflm_error_t *err) {
    const mp_obj_type_t *type;
    switch (err->status) {
        case TFLM_ERR_VALUE:
            type = &mp_type_ValueError;
            break;
        case TFLM_ERR_MEMORY:
            type = &mp_type_MemoryError;
            break;
        case TFLM_ERR_NOT_IMPLEMENTED:
            type = &mp_type_NotImplementedError;
            break;
        default:
            type = &mp_type_RuntimeError;
            break;
    }
    mp_raise_msg_varg(type, MP_ERROR_TEXT("%s"), err->msg);
}

// ---------------------------------------------------------------------------
// TensorInfo: what a model says about one tensor.

typedef struct _tflm_tensor_info_obj_t {
    mp_obj_base_t base;
    mp_obj_t name;
    mp_obj_t shape;
    mp_obj_t scale;
    uint16_t index;
    uint8_t type;
    int32_t zero_point;
} tflm_tensor_info_obj_t;

static void tensor_info_print(const mp_print_t *print, mp_obj_t self_in, mp_print_kind_t kind) {
    tflm_tensor_info_obj_t *self = MP_OBJ_TO_PTR(self_in);
    mp_printf(print, "TensorInfo(index=%u, name=", self->index);
    mp_obj_print_helper(print, self->name, PRINT_REPR);
    mp_printf(print, ", dtype='%s', shape=", tflm_type_name(self->type));
    mp_obj_print_helper(print, self->shape, PRINT_REPR);
    mp_print_str(print, ", scale=");
    mp_obj_print_helper(print, self->scale, PRINT_REPR);
    mp_printf(print, ", zero_point=%d)", (int)self->zero_point);
}

static void tensor_info_attr(mp_obj_t self_in, qstr attr, mp_obj_t *dest) {
    if (dest[0] != MP_OBJ_NULL) {
        return; // read-only
    }
    tflm_tensor_info_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (attr == MP_QSTR_index) {
        dest[0] = MP_OBJ_NEW_SMALL_INT(self->index);
    } else if (attr == MP_QSTR_name) {
        dest[0] = self->name;
    } else if (attr == MP_QSTR_dtype) {
        dest[0] = mp_obj_new_str(tflm_type_name(self->type), strlen(tflm_type_name(self->type)));
    } else if (attr == MP_QSTR_shape) {
        dest[0] = self->shape;
    } else if (attr == MP_QSTR_scale) {
        dest[0] = self->scale;
    } else if (attr == MP_QSTR_zero_point) {
        dest[0] = mp_obj_new_int(self->zero_point);
    }
}

// The attributes, for help() and dir() of the class.
TFLM_ATTR_DOC(index, "int: the tensor's index in the main subgraph");
TFLM_ATTR_DOC(name, "str");
TFLM_ATTR_DOC(dtype, "str: 'int8', 'float32', ...");
TFLM_ATTR_DOC(shape, "tuple of int");
TFLM_ATTR_DOC(scale, "float (0.0: not quantized)");
TFLM_ATTR_DOC(zero_point, "int");
static const mp_rom_map_elem_t tensor_info_locals_table[] = {
    TFLM_ATTR_ENTRY(index),
    TFLM_ATTR_ENTRY(name),
    TFLM_ATTR_ENTRY(dtype),
    TFLM_ATTR_ENTRY(shape),
    TFLM_ATTR_ENTRY(scale),
    TFLM_ATTR_ENTRY(zero_point),
};
static MP_DEFINE_CONST_DICT(tensor_info_locals, tensor_info_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(
    tflm_tensor_info_type,
    MP_QSTR_TensorInfo,
    MP_TYPE_FLAG_NONE,
    print, tensor_info_print,
    attr, tensor_info_attr,
    locals_dict, &tensor_info_locals
    );

// ---------------------------------------------------------------------------
// Model

bool tflm_buffer_is(mp_obj_t obj, const void *buf, size_t len, mp_uint_t flags) {
    #if !TFLM_NATMOD
    // Read from the object as mp_get_buffer() would, without its calls
    // (they cost an invoke() of a small model more than its seal): bytes,
    // bytearrays and memoryviews of bytes, as arenas and models mostly are.
    if (!(flags & MP_BUFFER_WRITE) && mp_obj_is_exact_type(obj, &mp_type_bytes)) {
        const mp_obj_str_t *b = MP_OBJ_TO_PTR(obj);
        return b->data == buf && b->len == len;
    }
    if (mp_obj_is_exact_type(obj, &mp_type_bytearray)) {
        const mp_obj_array_t *a = MP_OBJ_TO_PTR(obj);
        return a->items == buf && a->len == len;
    }
    #if MICROPY_PY_BUILTINS_MEMORYVIEW
    if (mp_obj_is_exact_type(obj, &mp_type_memoryview)) {
        const mp_obj_array_t *a = MP_OBJ_TO_PTR(obj);
        const size_t code = a->typecode & ~(size_t)MP_OBJ_ARRAY_TYPECODE_FLAG_RW;
        const bool writable = (a->typecode & MP_OBJ_ARRAY_TYPECODE_FLAG_RW) != 0;
        if ((code == BYTEARRAY_TYPECODE || code == 'B' || code == 'b') && (writable || !(flags & MP_BUFFER_WRITE))) {
            // Its offset (`free`) counts items, here bytes.
            return (const uint8_t *)a->items + a->free == buf && a->len == len;
        }
    }
    #endif
    #endif
    mp_buffer_info_t bufinfo;
    mp_get_buffer_raise(obj, &bufinfo, flags);
    return bufinfo.buf == buf && bufinfo.len == len;
}

// The model's bytes must not have moved or shrunk since it was read.
void tflm_model_check_buffer(tflm_model_obj_t *self) {
    if (!self->fixed && !tflm_buffer_is(self->buffer, self->model.fb.buf, self->model.fb.len, MP_BUFFER_READ)) {
        mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("model buffer was resized or moved"));
    }
}

#if !TFLM_NATMOD
// (The native module sees no heap: natmod.c.)
bool tflm_in_heap(const void *p) {
    uintptr_t a = (uintptr_t)p;
    for (const mp_state_mem_area_t *area = &MP_STATE_MEM(area); area != NULL;) {
        if (a >= (uintptr_t)area->gc_pool_start && a < (uintptr_t)area->gc_pool_end) {
            return true;
        }
        #if MICROPY_GC_SPLIT_HEAP
        area = area->next;
        #else
        area = NULL;
        #endif
    }
    return false;
}

// The start of the heap block p lies in, NULL when p is in no allocated block.
static const uint8_t *heap_anchor(const void *p) {
    // Back block by block to the head of the allocation p lies in: the
    // collector's own table, through gc_nbytes() (0 for a block that is not
    // the start of one).
    const uintptr_t block = MICROPY_BYTES_PER_GC_BLOCK;
    for (uintptr_t q = (uintptr_t)p & ~(block - 1); tflm_in_heap((const void *)q); q -= block) {
        size_t n = gc_nbytes((const void *)q);
        if (n != 0) {
            return q + n > (uintptr_t)p ? (const uint8_t *)q : NULL;
        }
    }
    return NULL;
}

const uint8_t *tflm_buffer_anchor(const void *p, size_t len) {
    if (len == 0 || !tflm_in_heap(p)) {
        return p;
    }
    const uint8_t *anchor = heap_anchor(p);
    if (anchor == NULL) {
        mp_raise_ValueError(MP_ERROR_TEXT("buffer is in no allocated heap block"));
    }
    return anchor;
}
#endif

static mp_obj_t model_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *args) {
    mp_arg_check_num(n_args, n_kw, 1, 1, false);
    mp_buffer_info_t bufinfo;
    // A str has the buffer protocol, but it is a path here, not a model.
    if (mp_obj_is_str(args[0])) {
        mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("tflm.Model takes the model's bytes, not a path: "
            "use tflm.load('%s')"), mp_obj_str_get_str(args[0]));
    }
    if (!mp_get_buffer(args[0], &bufinfo, MP_BUFFER_READ)) {
        mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("tflm.Model takes the model's bytes (bytes, bytearray, "
            "memoryview, a ROMFS file), not %s: or use tflm.load(path)"), mp_obj_get_type_str(args[0]));
    }
    tflm_model_obj_t *self = mp_obj_malloc(tflm_model_obj_t, type);
    self->buffer = args[0];
    self->labels = mp_const_none;
    tflm_error_t err;
    tflm_error_clear(&err);
    if (tflm_model_init(&self->model, bufinfo.buf, bufinfo.len, &err) != TFLM_OK) {
        tflm_raise(&err);
    }
    // bytes and ROMFS files cannot be written; a bytearray can, so a
    // prepared model's kernel data is used in place only from the former.
    mp_buffer_info_t writable;
    self->model.immutable = !mp_get_buffer(args[0], &writable, MP_BUFFER_WRITE);
    // A read-only view can still see its bytes change (a ROMFS region
    // rewritten with vfs.rom_ioctl, a VfsRom over a bytearray): what is used
    // in place from it is checked before each invoke. A bytes object cannot
    // change.
    self->model.rewritable = self->model.immutable && !mp_obj_is_str_or_bytes(args[0]);
    self->anchor = tflm_buffer_anchor(bufinfo.buf, bufinfo.len);
    // Neither a bytes object nor a memoryview ever gives another pointer or
    // length than at first (a bytearray or an array can be resized, and
    // moves): the check, which compares those, cannot fail for them. (A
    // bytearray resized under a memoryview frees the bytes the view still
    // points at: MicroPython's own hazard, docs/reliability.md.)
    self->fixed = false;
    #if !TFLM_NATMOD
    self->fixed = mp_obj_is_exact_type(args[0], &mp_type_bytes) || mp_obj_is_exact_type(args[0], &mp_type_memoryview);
    #endif
    return MP_OBJ_FROM_PTR(self);
}

// True when the model's bytes are in MicroPython's heap (RAM the model
// takes), false when they are used in place (flash, static memory).
static bool model_in_heap(const tflm_model_obj_t *self) {
    return tflm_in_heap(self->model.fb.buf);
}

// The labels file of a model file: its path with the extension (.tflite)
// replaced by .labels, as tflm-host deploy names it in ROMFS.
static mp_obj_t labels_path(mp_obj_t path) {
    size_t len;
    const char *p = mp_obj_str_get_data(path, &len);
    size_t stem = len;
    for (size_t i = len; i > 0 && p[i - 1] != '/'; --i) {
        if (p[i - 1] == '.') {
            stem = i - 1;
            break;
        }
    }
    vstr_t vstr;
    vstr_init(&vstr, stem + 8);
    vstr_add_strn(&vstr, p, stem);
    vstr_add_str(&vstr, ".labels");
    return mp_obj_new_str_from_vstr(&vstr);
}

// The lines of a UTF-8 labels file as a tuple of str (a last line without
// its newline counts, "\r\n" ends a line too); None when there is no such
// file; ValueError when it is not UTF-8.
static mp_obj_t read_labels(mp_obj_t path) {
    mp_obj_t open_args[2] = { labels_path(path), MP_OBJ_NEW_QSTR(MP_QSTR_rb) };
    mp_obj_t data;
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t f = mp_call_function_n_kw(MP_OBJ_FROM_PTR(&mp_builtin_open_obj), 2, 0, open_args);
        data = mp_call_function_0(mp_load_attr(f, MP_QSTR_read));
        mp_call_function_0(mp_load_attr(f, MP_QSTR_close));
        nlr_pop();
    } else if (mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(((mp_obj_base_t *)nlr.ret_val)->type),
        MP_OBJ_FROM_PTR(&mp_type_OSError))) {
        return mp_const_none; // no labels file
    } else {
        nlr_jump(nlr.ret_val);
    }
    mp_buffer_info_t b;
    mp_get_buffer_raise(data, &b, MP_BUFFER_READ);
    const char *text = b.buf;
    if (!tflm_utf8_valid((const uint8_t *)text, b.len)) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s is not UTF-8 text"), mp_obj_str_get_str(open_args[0]));
    }
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (size_t at = 0; at < b.len;) {
        size_t end = at;
        while (end < b.len && text[end] != '\n') {
            ++end;
        }
        size_t n = end - at;
        if (n > 0 && text[at + n - 1] == '\r') {
            --n;
        }
        mp_obj_list_append(list, mp_obj_new_str(text + at, n));
        at = end + 1;
    }
    size_t n;
    mp_obj_t *items;
    mp_obj_list_get(list, &n, &items);
    return mp_obj_new_tuple(n, items);
}

// tflm.load(path, *, quiet=False): the model in a file. A ROMFS file is used
// in place (its bytes stay in flash, no copy in RAM); any other file is read
// into RAM once, and unless quiet a line says how many bytes that took.
static mp_obj_t tflm_load(size_t n_args, const mp_obj_t *pos_args, mp_map_t *kw_args) {
    enum { ARG_path, ARG_quiet };
    TFLM_ARG_TABLE mp_arg_t allowed_args[] = {
        { MP_QSTR_path, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        { MP_QSTR_quiet, MP_ARG_KW_ONLY | MP_ARG_BOOL, {.u_bool = false} },
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed_args)];
    mp_arg_parse_all(n_args, pos_args, kw_args, MP_ARRAY_SIZE(allowed_args), allowed_args, args);
    mp_obj_t open_args[2] = { args[ARG_path].u_obj, MP_OBJ_NEW_QSTR(MP_QSTR_rb) };
    mp_obj_t f = mp_call_function_n_kw(MP_OBJ_FROM_PTR(&mp_builtin_open_obj), 2, 0, open_args);
    mp_buffer_info_t bufinfo;
    mp_obj_t buffer = f;
    // Files with the buffer protocol (ROMFS) are memory-mapped.
    if (!mp_get_buffer(f, &bufinfo, MP_BUFFER_READ)) {
        nlr_buf_t nlr;
        if (nlr_push(&nlr) == 0) {
            buffer = mp_call_function_0(mp_load_attr(f, MP_QSTR_read));
            nlr_pop();
        } else {
            // No heap for the model's bytes: say where a model needs none.
            mp_call_function_0(mp_load_attr(f, MP_QSTR_close));
            if (mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(((mp_obj_base_t *)nlr.ret_val)->type),
                MP_OBJ_FROM_PTR(&mp_type_MemoryError))) {
                mp_raise_msg_varg(&mp_type_MemoryError, MP_ERROR_TEXT("tflm.load: no RAM to read %s into: a model in "
                    "ROMFS (tflm-host deploy) is used in place from flash, without RAM"),
                    mp_obj_str_get_str(args[ARG_path].u_obj));
            }
            nlr_jump(nlr.ret_val);
        }
        mp_call_function_0(mp_load_attr(f, MP_QSTR_close));
    }
    mp_obj_t model = MP_OBJ_TYPE_GET_SLOT(&tflm_model_type, make_new)(&tflm_model_type, 1, 0, &buffer);
    ((tflm_model_obj_t *)MP_OBJ_TO_PTR(model))->labels = read_labels(args[ARG_path].u_obj);
    // Said once the bytes are a model (a file that is none says only that).
    if (buffer != f && !args[ARG_quiet].u_bool) {
        mp_get_buffer_raise(buffer, &bufinfo, MP_BUFFER_READ);
        mp_printf(&mp_plat_print, "tflm.load: %s is not in ROMFS: read into %u bytes of RAM\n",
            mp_obj_str_get_str(args[ARG_path].u_obj), (unsigned)bufinfo.len);
    }
    return model;
}
MP_DEFINE_CONST_FUN_OBJ_KW(tflm_load_obj, 1, tflm_load);

// A name from the model as a str; ValueError when it is not UTF-8 (checked
// at load, and here again: the buffer may have changed since).
static mp_obj_t model_string(tflm_model_t *m, tflm_fb_vec_t v, const char *what) {
    if (!tflm_utf8_valid(m->fb.buf + v.pos, v.count)) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("malformed model: %s is not UTF-8"), what);
    }
    return mp_obj_new_str((const char *)m->fb.buf + v.pos, v.count);
}

// TensorInfo of tensor `index` of subgraph 0.
static mp_obj_t model_tensor_info(tflm_model_obj_t *self, uint32_t index) {
    tflm_model_t *m = &self->model;
    tflm_subgraph_t sg;
    tflm_model_tensor_t t;
    tflm_error_t err;
    if (!tflm_model_subgraph(m, 0, &sg) || index >= sg.tensors.count || !tflm_model_tensor(m, &sg, index, &t)) {
        if (tflm_model_check(m, &err) == TFLM_OK) {
            mp_raise_msg(&mp_type_IndexError, MP_ERROR_TEXT("tensor index out of range"));
        }
        tflm_raise(&err);
    }
    tflm_tensor_info_obj_t *info = mp_obj_malloc(tflm_tensor_info_obj_t, &tflm_tensor_info_type);
    info->index = (uint16_t)index;
    info->type = t.type;
    info->name = model_string(m, t.name, "a tensor name");
    mp_obj_t dims[TFLM_MAX_DIMS];
    for (uint32_t d = 0; d < t.shape.count; ++d) {
        dims[d] = mp_obj_new_int(tflm_fb_vec_i32(&m->fb, t.shape, d));
    }
    info->shape = mp_obj_new_tuple(t.shape.count, dims);
    info->scale = mp_obj_new_float((mp_float_t)(t.scale.count ? tflm_fb_vec_f32(&m->fb, t.scale, 0) : 0.0f));
    info->zero_point = t.zero_point.count ? (int32_t)tflm_fb_vec_i64(&m->fb, t.zero_point, 0) : 0;
    return MP_OBJ_FROM_PTR(info);
}

// Subgraph 0 of a checked buffer; the model's error when it is malformed.
static void model_subgraph0(tflm_model_obj_t *self, tflm_subgraph_t *sg) {
    tflm_error_t err;
    tflm_model_check_buffer(self);
    if (!tflm_model_subgraph(&self->model, 0, sg)) {
        tflm_model_check(&self->model, &err);
        tflm_raise(&err);
    }
}

// Tuple of TensorInfo for subgraph 0's inputs (outputs when `outputs`).
static mp_obj_t model_io(tflm_model_obj_t *self, bool outputs) {
    tflm_model_t *m = &self->model;
    tflm_subgraph_t sg;
    model_subgraph0(self, &sg);
    tflm_fb_vec_t v = outputs ? sg.outputs : sg.inputs;
    mp_obj_t tuple = mp_obj_new_tuple(v.count, NULL);
    for (uint32_t i = 0; i < v.count; ++i) {
        int32_t index = tflm_model_index(m, v, i);
        ((mp_obj_tuple_t *)MP_OBJ_TO_PTR(tuple))->items[i] = model_tensor_info(self, (uint32_t)index);
    }
    return tuple;
}

// Names of subgraph 0's operators, in execution order.
static mp_obj_t model_ops(tflm_model_obj_t *self) {
    tflm_model_t *m = &self->model;
    tflm_subgraph_t sg;
    tflm_error_t err;
    model_subgraph0(self, &sg);
    mp_obj_t tuple = mp_obj_new_tuple(sg.operators.count, NULL);
    for (uint32_t i = 0; i < sg.operators.count; ++i) {
        tflm_model_op_t op;
        mp_obj_t name;
        tflm_fb_vec_t custom = { 0, 0 };
        if (!tflm_model_op(m, &sg, i, &op)) {
            tflm_model_check(m, &err);
            tflm_raise(&err);
        }
        tflm_model_opcode(m, op.opcode_index, &custom);
        const char *builtin = tflm_op_name(op.builtin);
        if (custom.count) {
            mp_obj_t custom_name = model_string(m, custom, "a custom op name");
            vstr_t vstr;
            vstr_init(&vstr, 8 + custom.count);
            vstr_add_str(&vstr, "CUSTOM:");
            vstr_add_str(&vstr, mp_obj_str_get_str(custom_name));
            name = mp_obj_new_str_from_vstr(&vstr);
        } else if (builtin) {
            name = mp_obj_new_str(builtin, strlen(builtin));
        } else {
            name = mp_obj_new_str_from_cstr("BUILTIN");
        }
        ((mp_obj_tuple_t *)MP_OBJ_TO_PTR(tuple))->items[i] = name;
    }
    return tuple;
}

static void model_attr(mp_obj_t self_in, qstr attr, mp_obj_t *dest) {
    tflm_model_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (dest[0] != MP_OBJ_NULL) {
        return;
    }
    // An if chain, not a switch: the native module's qstrs are not constants.
    if (attr == MP_QSTR_inputs) {
        dest[0] = model_io(self, false);
    } else if (attr == MP_QSTR_outputs) {
        dest[0] = model_io(self, true);
    } else if (attr == MP_QSTR_ops) {
        dest[0] = model_ops(self);
    } else if (attr == MP_QSTR_subgraphs) {
        dest[0] = MP_OBJ_NEW_SMALL_INT(self->model.subgraphs.count);
    } else if (attr == MP_QSTR_size) {
        dest[0] = mp_obj_new_int_from_uint(self->model.fb.len);
    } else if (attr == MP_QSTR_buffer) {
        dest[0] = self->buffer;
    } else if (attr == MP_QSTR_labels) {
        dest[0] = self->labels;
    } else if (attr == MP_QSTR_ram_bytes) {
        dest[0] = mp_obj_new_int_from_uint(model_in_heap(self) ? self->model.fb.len : 0);
    } else {
        // Methods live in the locals dict.
        dest[1] = MP_OBJ_SENTINEL;
    }
}

static mp_obj_t model_tensor(mp_obj_t self_in, mp_obj_t index_in) {
    tflm_model_obj_t *self = MP_OBJ_TO_PTR(self_in);
    mp_int_t index = mp_obj_get_int(index_in);
    tflm_model_check_buffer(self);
    if (index < 0 || (mp_uint_t)index > UINT32_MAX) {
        mp_raise_msg(&mp_type_IndexError, MP_ERROR_TEXT("tensor index out of range"));
    }
    return model_tensor_info(self, (uint32_t)index);
}
static MP_DEFINE_CONST_FUN_OBJ_2(model_tensor_obj, model_tensor);

// "int8 1x96x96x1" for each of subgraph 0's inputs (outputs), comma-separated.
static void print_io(const mp_print_t *print, tflm_model_t *m, tflm_subgraph_t *sg, tflm_fb_vec_t v) {
    for (uint32_t i = 0; i < v.count; ++i) {
        tflm_model_tensor_t t;
        int32_t index = tflm_model_index(m, v, i);
        if (index < 0 || !tflm_model_tensor(m, sg, (uint32_t)index, &t)) {
            mp_print_str(print, i ? ", ?" : "?");
            continue;
        }
        mp_printf(print, "%s%s ", i ? ", " : "", tflm_type_name(t.type));
        if (t.shape.count == 0) {
            mp_print_str(print, "scalar");
        }
        for (uint32_t d = 0; d < t.shape.count; ++d) {
            mp_printf(print, d ? "x%d" : "%d", (int)tflm_fb_vec_i32(&m->fb, t.shape, d));
        }
    }
}

// repr: size and where the bytes are, ops, inputs and outputs.
static void model_print(const mp_print_t *print, mp_obj_t self_in, mp_print_kind_t kind) {
    tflm_model_obj_t *self = MP_OBJ_TO_PTR(self_in);
    tflm_model_t *m = &self->model;
    tflm_model_check_buffer(self);
    tflm_subgraph_t sg;
    if (!tflm_model_subgraph(m, 0, &sg)) {
        mp_printf(print, "<Model %u bytes, malformed>", (unsigned)m->fb.len);
        return;
    }
    mp_printf(print, "<Model %u bytes in %s, %u ops", (unsigned)m->fb.len, model_in_heap(self) ? "RAM" : "flash",
        (unsigned)sg.operators.count);
    if (m->subgraphs.count > 1) {
        mp_printf(print, " (subgraph 0 of %u)", (unsigned)m->subgraphs.count);
    }
    mp_print_str(print, "; inputs ");
    print_io(print, m, &sg, sg.inputs);
    mp_print_str(print, "; outputs ");
    print_io(print, m, &sg, sg.outputs);
    mp_print_str(print, ">");
}

// Attributes (answered by model_attr), for help() and dir() of the class.
TFLM_ATTR_DOC(inputs, "tuple of TensorInfo");
TFLM_ATTR_DOC(outputs, "tuple of TensorInfo");
TFLM_ATTR_DOC(ops, "tuple of str: operator names in execution order");
TFLM_ATTR_DOC(subgraphs, "int");
TFLM_ATTR_DOC(size, "int: the model's bytes");
TFLM_ATTR_DOC(buffer, "the object holding the bytes");
TFLM_ATTR_DOC(ram_bytes, "int: bytes on the heap (0: used in place)");
TFLM_ATTR_DOC(labels, "tuple of str from MODEL.labels (tflm.load), or None");

static const mp_rom_map_elem_t model_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_tensor), MP_ROM_PTR(&model_tensor_obj) },
    TFLM_ATTR_ENTRY(inputs),
    TFLM_ATTR_ENTRY(outputs),
    TFLM_ATTR_ENTRY(ops),
    TFLM_ATTR_ENTRY(subgraphs),
    TFLM_ATTR_ENTRY(size),
    TFLM_ATTR_ENTRY(buffer),
    TFLM_ATTR_ENTRY(ram_bytes),
    TFLM_ATTR_ENTRY(labels),
};
static MP_DEFINE_CONST_DICT(model_locals, model_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(
    tflm_model_type,
    MP_QSTR_Model,
    MP_TYPE_FLAG_NONE,
    make_new, model_make_new,
    print, model_print,
    attr, model_attr,
    locals_dict, &model_locals
    );

tflm_model_obj_t *tflm_get_model(mp_obj_t obj) {
    if (!mp_obj_is_type(obj, &tflm_model_type)) {
        mp_raise_TypeError(MP_ERROR_TEXT("expected a tflm.Model"));
    }
    tflm_model_obj_t *model = MP_OBJ_TO_PTR(obj);
    tflm_model_check_buffer(model);
    return model;
}
