// The `tflm` MicroPython module: a thin layer over the engine.
//
//   model = tflm.load('/rom/model.tflite')  # in place from ROMFS flash, else read into RAM
//   model = tflm.Model(buffer)              # bytes, bytearray, memoryview, ROMFS file
//   interp = tflm.Interpreter(model, arena) # arena: size, buffer, tflm.Arena, or None (exact)
//   interp.input(0)[:] = data; interp.invoke(); interp.output(0)
//   interp.arena_used_bytes(); tflm.arena_size(model)
//   tflm.ops                                # the ops this firmware has kernels for
#include "py/objstr.h"

#include "binding/binding.h"
#include "kernels/arch.h"
#include "engine/version.h"

static const MP_DEFINE_STR_OBJ(tflm_version_obj, TFLM_VERSION);

// tflm.ops: the ops this firmware has kernels for, as models and errors name
// them ("CONV_2D", "CUSTOM:SignalWindow"), made when asked for.
static mp_obj_t tflm_ops(void) {
    mp_obj_tuple_t *t = MP_OBJ_TO_PTR(mp_obj_new_tuple(tflm_kernel_count, NULL));
    for (uint32_t k = 0; k < tflm_kernel_count; ++k) {
        const tflm_kernel_t *kernel = &tflm_kernels[k];
        const char *custom = tflm_kernel_custom(kernel);
        if (custom) {
            vstr_t name;
            vstr_init(&name, 8 + strlen(custom));
            vstr_add_str(&name, "CUSTOM:");
            vstr_add_str(&name, custom);
            t->items[k] = mp_obj_new_str_from_vstr(&name);
        } else {
            const char *name = tflm_op_name(kernel->op);
            t->items[k] = mp_obj_new_str(name, strlen(name));
        }
    }
    return MP_OBJ_FROM_PTR(t);
}

// Module attributes made when read: `ops`.
static mp_obj_t tflm_getattr(mp_obj_t attr) {
    if (attr == MP_OBJ_NEW_QSTR(MP_QSTR_ops)) {
        return tflm_ops();
    }
    return MP_OBJ_NULL; // AttributeError
}
static MP_DEFINE_CONST_FUN_OBJ_1(tflm_getattr_obj, tflm_getattr);

static const mp_rom_map_elem_t tflm_module_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_tflm) },
    { MP_ROM_QSTR(MP_QSTR___version__), MP_ROM_PTR(&tflm_version_obj) },
    { MP_ROM_QSTR(MP_QSTR_version), MP_ROM_PTR(&tflm_version_obj) },
    { MP_ROM_QSTR(MP_QSTR_Model), MP_ROM_PTR(&tflm_model_type) },
    { MP_ROM_QSTR(MP_QSTR_TensorInfo), MP_ROM_PTR(&tflm_tensor_info_type) },
    { MP_ROM_QSTR(MP_QSTR_Arena), MP_ROM_PTR(&tflm_arena_type) },
    { MP_ROM_QSTR(MP_QSTR_Interpreter), MP_ROM_PTR(&tflm_interp_type) },
    { MP_ROM_QSTR(MP_QSTR_arena_size), MP_ROM_PTR(&tflm_arena_size_obj) },
    { MP_ROM_QSTR(MP_QSTR_C_STACK_NEEDED), MP_ROM_INT(TFLM_C_STACK_NEEDED) },
    { MP_ROM_QSTR(MP_QSTR_load), MP_ROM_PTR(&tflm_load_obj) },
    { MP_ROM_QSTR(MP_QSTR___getattr__), MP_ROM_PTR(&tflm_getattr_obj) },
    #ifdef TFLM_BUILTIN_PLAN_HEADER
    { MP_ROM_QSTR(MP_QSTR_builtin_plan), MP_ROM_PTR(&tflm_builtin_plan_obj) },
    #elif !TFLM_NATMOD // (natmod.c sets it)
    { MP_ROM_QSTR(MP_QSTR_builtin_plan), MP_ROM_NONE },
    #endif
};
MP_DEFINE_CONST_DICT(tflm_module_globals, tflm_module_globals_table);

#if !TFLM_NATMOD // (the native module's entry point is natmod.c's)

const mp_obj_module_t tflm_user_cmodule = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&tflm_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR_tflm, tflm_user_cmodule);
#endif
