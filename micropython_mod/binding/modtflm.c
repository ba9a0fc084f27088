// The `tflm` MicroPython module: a thin layer over the engine.
//
//   model = tflm.Model(buffer)              # bytes, bytearray, memoryview, ROMFS file
//   interp = tflm.Interpreter(model, arena) # arena: size in bytes, buffer, or None (exact size)
//   interp.input(0)[:] = data; interp.invoke(); interp.output(0)
//   interp.arena_used_bytes(); tflm.arena_size(model)
#include <string.h>

#include "py/gc.h"
#include "py/binary.h"
#include "py/objarray.h"
#include "py/objstr.h"
#include "py/runtime.h"

#include "engine/interpreter.h"

#define TFLM_VERSION "0.1.0"

static const MP_DEFINE_STR_OBJ(tflm_version_obj, TFLM_VERSION);

// ---------------------------------------------------------------------------
// Errors

static NORETURN void tflm_raise(const tflm_error_t *err);

// NotImplementedError naming every op the model needs and this build lacks
// (the engine's own message is bounded); other errors as they are.
static NORETURN void tflm_raise_for(tflm_model_t *model, const tflm_error_t *err) {
    char name[72];
    if (err->status == TFLM_ERR_NOT_IMPLEMENTED && tflm_interp_missing_op(model, 0, name, sizeof(name))) {
        vstr_t vstr;
        vstr_init(&vstr, 80);
        vstr_add_str(&vstr, "model uses ops this firmware does not include: ");
        for (uint32_t n = 0; tflm_interp_missing_op(model, n, name, sizeof(name)); ++n) {
            if (n) {
                vstr_add_str(&vstr, ", ");
            }
            vstr_add_str(&vstr, name);
        }
        mp_raise_msg_varg(&mp_type_NotImplementedError, MP_ERROR_TEXT("%s"), vstr_null_terminated_str(&vstr));
    }
    tflm_raise(err);
}

static NORETURN void tflm_raise(const tflm_error_t *err) {
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

static const mp_obj_type_t tflm_tensor_info_type;

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
    switch (attr) {
        case MP_QSTR_index:
            dest[0] = MP_OBJ_NEW_SMALL_INT(self->index);
            break;
        case MP_QSTR_name:
            dest[0] = self->name;
            break;
        case MP_QSTR_dtype:
            dest[0] = mp_obj_new_str(tflm_type_name(self->type), strlen(tflm_type_name(self->type)));
            break;
        case MP_QSTR_shape:
            dest[0] = self->shape;
            break;
        case MP_QSTR_scale:
            dest[0] = self->scale;
            break;
        case MP_QSTR_zero_point:
            dest[0] = mp_obj_new_int(self->zero_point);
            break;
        default:
            break;
    }
}

static MP_DEFINE_CONST_OBJ_TYPE(
    tflm_tensor_info_type,
    MP_QSTR_TensorInfo,
    MP_TYPE_FLAG_NONE,
    print, tensor_info_print,
    attr, tensor_info_attr
    );

// ---------------------------------------------------------------------------
// Model

typedef struct _tflm_model_obj_t {
    mp_obj_base_t base;
    mp_obj_t buffer; // keeps the bytes alive
    tflm_model_t model;
} tflm_model_obj_t;

static const mp_obj_type_t tflm_model_type;

// The model's bytes must not have moved or shrunk since it was read.
static void model_check_buffer(tflm_model_obj_t *self) {
    mp_buffer_info_t bufinfo;
    mp_get_buffer_raise(self->buffer, &bufinfo, MP_BUFFER_READ);
    if (bufinfo.buf != self->model.fb.buf || bufinfo.len != self->model.fb.len) {
        mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("model buffer was resized or moved"));
    }
}

static mp_obj_t model_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *args) {
    mp_arg_check_num(n_args, n_kw, 1, 1, false);
    mp_buffer_info_t bufinfo;
    mp_get_buffer_raise(args[0], &bufinfo, MP_BUFFER_READ);
    tflm_model_obj_t *self = mp_obj_malloc(tflm_model_obj_t, type);
    self->buffer = args[0];
    tflm_error_t err;
    tflm_error_clear(&err);
    if (tflm_model_init(&self->model, bufinfo.buf, bufinfo.len, &err) != TFLM_OK) {
        tflm_raise(&err);
    }
    return MP_OBJ_FROM_PTR(self);
}

static mp_obj_t bytes_or_empty(tflm_model_t *m, tflm_fb_vec_t v) {
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
    info->name = bytes_or_empty(m, t.name);
    mp_obj_t dims[TFLM_MAX_DIMS];
    for (uint32_t d = 0; d < t.shape.count; ++d) {
        dims[d] = mp_obj_new_int(tflm_fb_vec_i32(&m->fb, t.shape, d));
    }
    info->shape = mp_obj_new_tuple(t.shape.count, dims);
    info->scale = mp_obj_new_float(t.scale.count ? tflm_fb_vec_f32(&m->fb, t.scale, 0) : 0.0f);
    info->zero_point = t.zero_point.count ? (int32_t)tflm_fb_vec_i64(&m->fb, t.zero_point, 0) : 0;
    return MP_OBJ_FROM_PTR(info);
}

// Tuple of TensorInfo for subgraph 0's inputs (outputs when `outputs`).
static mp_obj_t model_io(tflm_model_obj_t *self, bool outputs) {
    tflm_model_t *m = &self->model;
    tflm_subgraph_t sg;
    tflm_error_t err;
    model_check_buffer(self);
    if (!tflm_model_subgraph(m, 0, &sg)) {
        tflm_model_check(m, &err);
        tflm_raise(&err);
    }
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
    model_check_buffer(self);
    if (!tflm_model_subgraph(m, 0, &sg)) {
        tflm_model_check(m, &err);
        tflm_raise(&err);
    }
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
            vstr_t vstr;
            vstr_init(&vstr, 8 + custom.count);
            vstr_add_str(&vstr, "CUSTOM:");
            vstr_add_strn(&vstr, (const char *)m->fb.buf + custom.pos, custom.count);
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
    switch (attr) {
        case MP_QSTR_inputs:
            dest[0] = model_io(self, false);
            break;
        case MP_QSTR_outputs:
            dest[0] = model_io(self, true);
            break;
        case MP_QSTR_ops:
            dest[0] = model_ops(self);
            break;
        case MP_QSTR_subgraphs:
            dest[0] = MP_OBJ_NEW_SMALL_INT(self->model.subgraphs.count);
            break;
        case MP_QSTR_size:
            dest[0] = mp_obj_new_int_from_uint(self->model.fb.len);
            break;
        case MP_QSTR_buffer:
            dest[0] = self->buffer;
            break;
        default:
            // Methods live in the locals dict.
            dest[1] = MP_OBJ_SENTINEL;
            break;
    }
}

static mp_obj_t model_tensor(mp_obj_t self_in, mp_obj_t index_in) {
    tflm_model_obj_t *self = MP_OBJ_TO_PTR(self_in);
    model_check_buffer(self);
    mp_int_t index = mp_obj_get_int(index_in);
    if (index < 0) {
        mp_raise_msg(&mp_type_IndexError, MP_ERROR_TEXT("tensor index out of range"));
    }
    return model_tensor_info(self, (uint32_t)index);
}
static MP_DEFINE_CONST_FUN_OBJ_2(model_tensor_obj, model_tensor);

static const mp_rom_map_elem_t model_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_tensor), MP_ROM_PTR(&model_tensor_obj) },
};
static MP_DEFINE_CONST_DICT(model_locals, model_locals_table);

static MP_DEFINE_CONST_OBJ_TYPE(
    tflm_model_type,
    MP_QSTR_Model,
    MP_TYPE_FLAG_NONE,
    make_new, model_make_new,
    attr, model_attr,
    locals_dict, &model_locals
    );

static tflm_model_obj_t *get_model(mp_obj_t obj) {
    if (!mp_obj_is_type(obj, &tflm_model_type)) {
        mp_raise_TypeError(MP_ERROR_TEXT("expected a tflm.Model"));
    }
    tflm_model_obj_t *model = MP_OBJ_TO_PTR(obj);
    model_check_buffer(model);
    return model;
}

static const tflm_planner_t *get_planner(mp_obj_t name_in) {
    const char *name = mp_obj_str_get_str(name_in);
    const tflm_planner_t *planner = tflm_planner_find(name);
    if (planner == NULL) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("unknown planner '%s'"), name);
    }
    return planner;
}

// ---------------------------------------------------------------------------
// Exact arena sizes

// Head and tail bytes the model needs. Builds its records in a temporary
// buffer as large as the tail, which is freed again.
static void measure(tflm_model_t *model, const tflm_planner_t *planner, uint32_t *head, uint32_t *tail) {
    tflm_error_t err;
    tflm_error_clear(&err);
    if (tflm_interp_tail_size(model, planner, tail, &err) != TFLM_OK) {
        tflm_raise_for(model, &err);
    }
    size_t work_len = *tail + TFLM_ALIGN;
    uint8_t *work = m_new(uint8_t, work_len);
    tflm_status_t st = tflm_interp_measure(model, planner, work, work_len, head, tail, &err);
    m_del(uint8_t, work, work_len);
    if (st != TFLM_OK) {
        tflm_raise(&err);
    }
}

static mp_obj_t tflm_arena_size(size_t n_args, const mp_obj_t *pos_args, mp_map_t *kw_args) {
    enum { ARG_model, ARG_planner };
    static const mp_arg_t allowed_args[] = {
        { MP_QSTR_model, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        { MP_QSTR_planner, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_QSTR(MP_QSTR_greedy)} },
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed_args)];
    mp_arg_parse_all(n_args, pos_args, kw_args, MP_ARRAY_SIZE(allowed_args), allowed_args, args);
    tflm_model_obj_t *model = get_model(args[ARG_model].u_obj);
    uint32_t head, tail;
    measure(&model->model, get_planner(args[ARG_planner].u_obj), &head, &tail);
    return mp_obj_new_int_from_uint(head + tail);
}
static MP_DEFINE_CONST_FUN_OBJ_KW(tflm_arena_size_obj, 1, tflm_arena_size);

// ---------------------------------------------------------------------------
// Interpreter

typedef struct _tflm_interp_obj_t {
    mp_obj_base_t base;
    mp_obj_t model;       // tflm.Model
    mp_obj_t arena_obj;   // the object holding the arena bytes
    uint8_t *arena_buf;   // its bytes when built (checked before each invoke)
    size_t arena_len;
    tflm_arena_t arena;
    tflm_interp_t ip;
} tflm_interp_obj_t;

static const mp_obj_type_t tflm_interp_type;

// MemoryError with the exact bytes needed, measured when the engine could
// not even fit the persistent data.
static NORETURN void raise_arena_too_small(tflm_interp_obj_t *self) {
    tflm_error_t *err = &self->ip.err;
    if (err->needed == 0) {
        uint32_t head, tail;
        tflm_model_obj_t *model = MP_OBJ_TO_PTR(self->model);
        measure(&model->model, self->ip.planner, &head, &tail);
        err->needed = TFLM_MAX(head, self->arena.head) + self->arena.tail + tail;
    }
    mp_raise_msg_varg(&mp_type_MemoryError,
        MP_ERROR_TEXT("arena too small: needs %u bytes, has %u"),
        (unsigned)err->needed, (unsigned)self->arena.size);
}

static mp_obj_t interp_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *all_args) {
    enum { ARG_model, ARG_arena, ARG_planner };
    static const mp_arg_t allowed_args[] = {
        { MP_QSTR_model, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        { MP_QSTR_arena, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        { MP_QSTR_planner, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_QSTR(MP_QSTR_greedy)} },
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed_args)];
    mp_arg_parse_all_kw_array(n_args, n_kw, all_args, MP_ARRAY_SIZE(allowed_args), allowed_args, args);

    tflm_model_obj_t *model = get_model(args[ARG_model].u_obj);
    const tflm_planner_t *planner = get_planner(args[ARG_planner].u_obj);
    mp_obj_t arena_in = args[ARG_arena].u_obj;

    tflm_interp_obj_t *self = mp_obj_malloc(tflm_interp_obj_t, type);
    self->model = MP_OBJ_FROM_PTR(model);
    if (arena_in == mp_const_none || mp_obj_is_int(arena_in)) {
        // A size: the arena is a bytearray of that many usable bytes
        // (15 more to align it); None: exactly what the model needs.
        mp_int_t size;
        if (arena_in == mp_const_none) {
            uint32_t head, tail;
            measure(&model->model, planner, &head, &tail);
            size = head + tail;
        } else {
            size = mp_obj_get_int(arena_in);
            if (size < 0) {
                mp_raise_ValueError(MP_ERROR_TEXT("arena size must be positive"));
            }
        }
        self->arena_len = size + TFLM_ALIGN - 1;
        self->arena_buf = m_new(uint8_t, self->arena_len);
        self->arena_obj = mp_obj_new_bytearray_by_ref(self->arena_len, self->arena_buf);
        tflm_arena_init(&self->arena, self->arena_buf, self->arena_len);
        if (self->arena.size > (uint32_t)size) {
            self->arena.size = (uint32_t)size & ~(TFLM_ALIGN - 1);
        }
    } else {
        mp_buffer_info_t bufinfo;
        mp_get_buffer_raise(arena_in, &bufinfo, MP_BUFFER_RW);
        self->arena_obj = arena_in;
        self->arena_buf = bufinfo.buf;
        self->arena_len = bufinfo.len;
        tflm_arena_init(&self->arena, bufinfo.buf, bufinfo.len);
    }
    if (tflm_interp_init(&self->ip, &model->model, &self->arena, planner) != TFLM_OK) {
        if (self->ip.err.status == TFLM_ERR_MEMORY) {
            raise_arena_too_small(self);
        }
        tflm_raise_for(&model->model, &self->ip.err);
    }
    return MP_OBJ_FROM_PTR(self);
}

// The arena must still be where it was when the interpreter was built.
static void interp_check(tflm_interp_obj_t *self) {
    mp_buffer_info_t bufinfo;
    mp_get_buffer_raise(self->arena_obj, &bufinfo, MP_BUFFER_RW);
    if (bufinfo.buf != self->arena_buf || bufinfo.len != self->arena_len) {
        mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("arena buffer was resized or moved"));
    }
    model_check_buffer(MP_OBJ_TO_PTR(self->model));
}

static char typecode_of(uint8_t type) {
    switch (type) {
        case TFLM_FLOAT32:
            return 'f';
        case TFLM_FLOAT64:
            return 'd';
        case TFLM_INT8:
            return 'b';
        case TFLM_UINT8:
        case TFLM_BOOL:
            return 'B';
        case TFLM_INT16:
            return 'h';
        case TFLM_UINT16:
        case TFLM_FLOAT16:
            return 'H';
        case TFLM_INT32:
            return 'i';
        case TFLM_UINT32:
            return 'I';
        case TFLM_INT64:
            return 'q';
        case TFLM_UINT64:
            return 'Q';
        default:
            return 'B';
    }
}

// A typed memoryview of a tensor's bytes. It references the arena's memory
// block, so the arena stays alive as long as the view does.
static mp_obj_t tensor_view(tflm_interp_obj_t *self, uint32_t index, bool writable) {
    const tflm_tensor_rec_t *r = tflm_interp_tensor(&self->ip, index);
    uint8_t *data = tflm_interp_tensor_data(&self->ip, r);
    char typecode = typecode_of(r->type);
    size_t item = mp_binary_get_size('@', typecode, NULL);
    if (data == NULL) {
        return mp_obj_new_memoryview(typecode, 0, self->arena_buf);
    }
    uint8_t *anchor = data;
    if (data >= self->arena_buf && data < self->arena_buf + self->arena_len
        && (size_t)(data - self->arena_buf) % item == 0) {
        anchor = self->arena_buf;
    }
    mp_obj_array_t *view = mp_obj_malloc(mp_obj_array_t, &mp_type_memoryview);
    mp_obj_memoryview_init(view, typecode | (writable ? MP_OBJ_ARRAY_TYPECODE_FLAG_RW : 0),
        (size_t)(data - anchor) / item, r->bytes / item, anchor);
    return MP_OBJ_FROM_PTR(view);
}

static uint32_t io_index(tflm_interp_obj_t *self, mp_obj_t i_in, bool output) {
    mp_int_t i = mp_obj_get_int(i_in);
    uint32_t n = output ? tflm_interp_num_outputs(&self->ip) : tflm_interp_num_inputs(&self->ip);
    if (i < 0 || (mp_uint_t)i >= n) {
        mp_raise_msg_varg(&mp_type_IndexError, MP_ERROR_TEXT("model has %u %s"), (unsigned)n,
            output ? "outputs" : "inputs");
    }
    return output ? tflm_interp_output(&self->ip, (uint32_t)i) : tflm_interp_input(&self->ip, (uint32_t)i);
}

static mp_obj_t interp_input(size_t n_args, const mp_obj_t *args) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(args[0]);
    interp_check(self);
    return tensor_view(self, io_index(self, n_args > 1 ? args[1] : MP_OBJ_NEW_SMALL_INT(0), false), true);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(interp_input_obj, 1, 2, interp_input);

static mp_obj_t interp_output(size_t n_args, const mp_obj_t *args) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(args[0]);
    interp_check(self);
    return tensor_view(self, io_index(self, n_args > 1 ? args[1] : MP_OBJ_NEW_SMALL_INT(0), true), true);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(interp_output_obj, 1, 2, interp_output);

// set_input(i, data, offset=0): copies raw bytes into input i at a byte offset.
static mp_obj_t interp_set_input(size_t n_args, const mp_obj_t *args) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(args[0]);
    interp_check(self);
    const tflm_tensor_rec_t *r = tflm_interp_tensor(&self->ip, io_index(self, args[1], false));
    mp_buffer_info_t bufinfo;
    mp_get_buffer_raise(args[2], &bufinfo, MP_BUFFER_READ);
    mp_int_t offset = n_args > 3 ? mp_obj_get_int(args[3]) : 0;
    if (offset < 0 || (size_t)offset > r->bytes || bufinfo.len > r->bytes - (size_t)offset) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%u bytes at offset %d do not fit the input's %u bytes"),
            (unsigned)bufinfo.len, (int)offset, (unsigned)r->bytes);
    }
    memcpy((uint8_t *)tflm_interp_tensor_data(&self->ip, r) + offset, bufinfo.buf, bufinfo.len);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(interp_set_input_obj, 3, 4, interp_set_input);

// Runs the model. Allocates nothing on the heap (unless it raises).
static mp_obj_t interp_invoke(mp_obj_t self_in) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    interp_check(self);
    if (tflm_interp_invoke(&self->ip) != TFLM_OK) {
        tflm_raise(&self->ip.err);
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_invoke_obj, interp_invoke);

static mp_obj_t interp_arena_used_bytes(mp_obj_t self_in) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    return mp_obj_new_int_from_uint(tflm_interp_used_bytes(&self->ip));
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_arena_used_bytes_obj, interp_arena_used_bytes);

static mp_obj_t interp_head_bytes(mp_obj_t self_in) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    return mp_obj_new_int_from_uint(self->ip.head_bytes);
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_head_bytes_obj, interp_head_bytes);

static mp_obj_t interp_tail_bytes(mp_obj_t self_in) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    return mp_obj_new_int_from_uint(self->ip.tail_bytes);
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_tail_bytes_obj, interp_tail_bytes);

static void interp_attr(mp_obj_t self_in, qstr attr, mp_obj_t *dest) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (dest[0] != MP_OBJ_NULL) {
        return;
    }
    if (attr == MP_QSTR_model) {
        dest[0] = self->model;
    } else if (attr == MP_QSTR_arena) {
        dest[0] = self->arena_obj;
    } else if (attr == MP_QSTR_planner) {
        dest[0] = mp_obj_new_str_from_cstr(self->ip.planner->name);
    } else {
        dest[1] = MP_OBJ_SENTINEL;
    }
}

static const mp_rom_map_elem_t interp_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_input), MP_ROM_PTR(&interp_input_obj) },
    { MP_ROM_QSTR(MP_QSTR_output), MP_ROM_PTR(&interp_output_obj) },
    { MP_ROM_QSTR(MP_QSTR_set_input), MP_ROM_PTR(&interp_set_input_obj) },
    { MP_ROM_QSTR(MP_QSTR_invoke), MP_ROM_PTR(&interp_invoke_obj) },
    { MP_ROM_QSTR(MP_QSTR_arena_used_bytes), MP_ROM_PTR(&interp_arena_used_bytes_obj) },
    { MP_ROM_QSTR(MP_QSTR_head_bytes), MP_ROM_PTR(&interp_head_bytes_obj) },
    { MP_ROM_QSTR(MP_QSTR_tail_bytes), MP_ROM_PTR(&interp_tail_bytes_obj) },
};
static MP_DEFINE_CONST_DICT(interp_locals, interp_locals_table);

static MP_DEFINE_CONST_OBJ_TYPE(
    tflm_interp_type,
    MP_QSTR_Interpreter,
    MP_TYPE_FLAG_NONE,
    make_new, interp_make_new,
    attr, interp_attr,
    locals_dict, &interp_locals
    );

// ---------------------------------------------------------------------------
// Module

static const mp_rom_map_elem_t tflm_module_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_tflm) },
    { MP_ROM_QSTR(MP_QSTR_version), MP_ROM_PTR(&tflm_version_obj) },
    { MP_ROM_QSTR(MP_QSTR_Model), MP_ROM_PTR(&tflm_model_type) },
    { MP_ROM_QSTR(MP_QSTR_Interpreter), MP_ROM_PTR(&tflm_interp_type) },
    { MP_ROM_QSTR(MP_QSTR_TensorInfo), MP_ROM_PTR(&tflm_tensor_info_type) },
    { MP_ROM_QSTR(MP_QSTR_arena_size), MP_ROM_PTR(&tflm_arena_size_obj) },
};
static MP_DEFINE_CONST_DICT(tflm_module_globals, tflm_module_globals_table);

const mp_obj_module_t tflm_user_cmodule = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&tflm_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR_tflm, tflm_user_cmodule);
