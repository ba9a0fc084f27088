// The binding built as a dynamic native module (tflm.mpy, `make natmod`):
// the MicroPython API the binding uses, mapped onto what a native module
// reaches, which is only mp_fun_table (py/dynruntime.h). Included by
// binding.h when TFLM_NATMOD is 1; natmod.c implements the functions
// declared here and is the module's entry point.
//
// What a native module cannot do, and so the binding does without there
// (binding.h's TFLM_NATMOD):
// - allocate with a finaliser: an interpreter dropped without interp.__del__()
//   keeps its tail in a shared tflm.Arena, and no registry of live
//   interpreters checks that arenas of different tflm.Arena objects do not
//   overlap (the engine's seal still refuses records another wrote over);
// - see the collector's heap: views of tensors hold their interpreter in a
//   word of their own, and a model's bytes count as RAM (Model.ram_bytes);
// - read the C stack's limit or a pending Ctrl-C: neither is checked.
#ifndef TFLM_BINDING_NATMOD_H
#define TFLM_BINDING_NATMOD_H

#include <stdarg.h>

#include "py/dynruntime.h"
#include "py/objarray.h"

// Types the loader links to mp_fun_table's entries (tools/mpy_ld.py) by
// their own names, so constant objects can point at them; dynruntime.h
// reads them from the table instead.
#undef mp_type_type
#undef mp_type_str
#undef mp_type_list
#undef mp_type_dict

// Qstrs are numbered when the module is loaded: constant tables hold the
// qstr's name ("MP_QSTR_invoke"), which tflm_natmod_fix_table() replaces
// by the qstr; types are defined without a name, set by natmod.c.
#define TFLM_NATMOD_QSTR_PREFIX "MP_QSTR_"
#undef MP_ROM_QSTR
#define MP_ROM_QSTR(q) ((mp_rom_obj_t)(#q))
#undef MP_DEFINE_CONST_OBJ_TYPE
#define MP_DEFINE_CONST_OBJ_TYPE(_typename, _name, ...) \
    MP_DEFINE_CONST_OBJ_TYPE_EXPAND(MP_DEFINE_CONST_OBJ_TYPE_NARGS(_typename, 0, __VA_ARGS__, _INV, 12, _INV, 11, \
    _INV, 10, _INV, 9, _INV, 8, _INV, 7, _INV, 6, _INV, 5, _INV, 4, _INV, 3, _INV, 2, _INV, 1, _INV, 0) \
        (mp_obj_type_t, _typename, 0, __VA_ARGS__))
// Argument tables name qstrs too: built when called.
#define TFLM_ARG_TABLE const
#undef MP_ROM_NONE
#define MP_ROM_NONE (mp_const_none)

// Builtin types and functions, looked up by name in the builtins module
// (read at import), never in the caller's globals: a script's own
// `memoryview = 7` or `len = 0` must not become the module's types and
// functions, as dynruntime.h's mp_load_global would make them.
// (Out of line: a call a use, where each error path names a type.)
mp_obj_t tflm_natmod_builtin_obj(qstr q);
#define tflm_natmod_builtin(q) ((mp_obj_type_t *)MP_OBJ_TO_PTR(tflm_natmod_builtin_obj(q)))
#undef mp_type_int
#define mp_type_int (*tflm_natmod_builtin(MP_QSTR_int))
#undef mp_type_bytes
#define mp_type_bytes (*tflm_natmod_builtin(MP_QSTR_bytes))
#undef mp_type_bytearray
#define mp_type_bytearray (*tflm_natmod_builtin(MP_QSTR_bytearray))
#undef mp_type_EOFError
#define mp_type_EOFError (*tflm_natmod_builtin(MP_QSTR_EOFError))
#undef mp_type_IndexError
#define mp_type_IndexError (*tflm_natmod_builtin(MP_QSTR_IndexError))
#undef mp_type_KeyError
#define mp_type_KeyError (*tflm_natmod_builtin(MP_QSTR_KeyError))
#undef mp_type_NotImplementedError
#define mp_type_NotImplementedError (*tflm_natmod_builtin(MP_QSTR_NotImplementedError))
#undef mp_type_RuntimeError
#define mp_type_RuntimeError (*tflm_natmod_builtin(MP_QSTR_RuntimeError))
#undef mp_type_TypeError
#define mp_type_TypeError (*tflm_natmod_builtin(MP_QSTR_TypeError))
#undef mp_type_ValueError
#define mp_type_ValueError (*tflm_natmod_builtin(MP_QSTR_ValueError))
#undef mp_obj_len
#define mp_obj_len(o) tflm_natmod_len(o)
mp_obj_t tflm_natmod_len(mp_obj_t o);
// An int as the firmware's mp_obj_get_int gives it: OverflowError for one
// past a machine word (dynruntime.h's conversion truncates it).
#undef mp_obj_get_int
#define mp_obj_get_int(o) tflm_natmod_get_int(o)
mp_int_t tflm_natmod_get_int(mp_obj_t o);
// A str's (or bytes') characters, as the firmware's functions give them:
// TypeError for anything else (dynruntime.h's take any buffer, whose bytes
// need not end in a NUL).
#undef mp_obj_str_get_str
#define mp_obj_str_get_str(s) ((const char *)tflm_natmod_str_get_data((s), NULL))
#undef mp_obj_str_get_data
#define mp_obj_str_get_data(o, len) ((const char *)tflm_natmod_str_get_data((o), (len)))
const void *tflm_natmod_str_get_data(mp_obj_t o, size_t *len);
#define mp_type_MemoryError (*tflm_natmod_builtin(MP_QSTR_MemoryError))
#define mp_type_OSError (*tflm_natmod_builtin(MP_QSTR_OSError))
#define mp_type_float (*tflm_natmod_builtin(MP_QSTR_float))
#define mp_type_memoryview (*tflm_natmod_builtin(MP_QSTR_memoryview))
#define mp_builtin_open_obj (*tflm_natmod_builtin(MP_QSTR_open))
// array.array, read when the module is imported.
extern const mp_obj_type_t *tflm_natmod_array_type;
#define mp_type_array (*tflm_natmod_array_type)

#undef mp_obj_is_float
#define mp_obj_is_float(o) mp_obj_is_type((o), &mp_type_float)
#undef mp_obj_is_str_or_bytes
#define mp_obj_is_str_or_bytes(o) (mp_obj_is_str(o) || mp_obj_is_type((o), &mp_type_bytes))
#define mp_obj_is_subclass_fast(a, b) tflm_natmod_issubclass((a), (b))
bool tflm_natmod_issubclass(mp_obj_t a, mp_obj_t b);
#define mp_obj_get_type_str(o) tflm_natmod_type_str(o)
const char *tflm_natmod_type_str(mp_obj_t o);
// len(o), or MP_OBJ_NULL when o has none (a TypeError).
#define mp_obj_len_maybe tflm_natmod_len_maybe
mp_obj_t tflm_natmod_len_maybe(mp_obj_t o);
#define mp_obj_memoryview_init tflm_natmod_memoryview_init
static inline void tflm_natmod_memoryview_init(mp_obj_array_t *self, size_t typecode, size_t offset, size_t len,
    void *items) {
    self->base.type = &mp_type_memoryview;
    self->typecode = typecode;
    self->free = offset;
    self->len = len;
    self->items = items;
}
#define mp_obj_list_get(list, n, items) mp_obj_get_array((list), (n), (items))
#define mp_call_function_0(f) mp_call_function_n_kw((f), 0, 0, NULL)
// The table's getiter, given a buffer, fills it and returns NULL, and its
// iternext takes that buffer (py/nativeglue.c): the buffer is the iterator.
static inline mp_obj_t tflm_natmod_getiter(mp_obj_t o, mp_obj_iter_buf_t *buf) {
    mp_obj_t it = mp_fun_table.getiter(o, buf);
    return buf != NULL ? MP_OBJ_FROM_PTR(buf) : it;
}
#define mp_getiter(o, buf) tflm_natmod_getiter((o), (buf))
#define mp_iternext(it) (mp_fun_table.iternext((mp_obj_iter_buf_t *)MP_OBJ_TO_PTR(it)))
#define mp_obj_new_str_from_cstr(s) mp_obj_new_str((s), strlen(s))

// Exceptions: formatted messages, and the nlr calls through the table.
NORETURN void tflm_natmod_raise_varg(const mp_obj_type_t *type, const char *fmt, ...);
#define mp_raise_msg_varg(type, ...) tflm_natmod_raise_varg((type), __VA_ARGS__)
#undef nlr_push
#define nlr_push(buf) (mp_fun_table.nlr_push(buf))
#undef nlr_pop
#define nlr_pop() (mp_fun_table.nlr_pop())
#define nlr_jump(val) (mp_raise_dyn(MP_OBJ_FROM_PTR(val)))

// Printing.
#define mp_print_str(print, s) mp_printf((print), "%s", (s))
#define mp_obj_print_helper(print, o, kind) tflm_natmod_print_repr((print), (o))
void tflm_natmod_print_repr(const mp_print_t *print, mp_obj_t o);

// Growing strings (py/vstr.c's interface, on the module's own code).
#define vstr_init tflm_natmod_vstr_init
#define vstr_init_print tflm_natmod_vstr_init_print
#define vstr_add_strn tflm_natmod_vstr_add_strn
#define vstr_add_str(v, s) tflm_natmod_vstr_add_strn((v), (s), strlen(s))
#define vstr_add_char(v, c) tflm_natmod_vstr_add_strn((v), &(const char){ (char)(c) }, 1)
#define vstr_init_len(v, n) (tflm_natmod_vstr_init((v), (n) + 1), (v)->len = (n))
#define mp_obj_new_bytes_from_vstr tflm_natmod_bytes_from_vstr
#define vstr_null_terminated_str tflm_natmod_vstr_null_terminated_str
#define mp_obj_new_str_from_vstr tflm_natmod_str_from_vstr
void tflm_natmod_vstr_init(vstr_t *vstr, size_t alloc);
void tflm_natmod_vstr_init_print(vstr_t *vstr, size_t alloc, mp_print_t *print);
void tflm_natmod_vstr_add_strn(vstr_t *vstr, const char *str, size_t len);
char *tflm_natmod_vstr_null_terminated_str(vstr_t *vstr);
mp_obj_t tflm_natmod_str_from_vstr(vstr_t *vstr);
mp_obj_t tflm_natmod_bytes_from_vstr(vstr_t *vstr);

// The collector runs by gc.collect() (nothing waits on it here: without
// finalisers no interpreter gives memory back when collected).
#define gc_collect() ((void)0)
#define mp_obj_malloc_with_finaliser(struct_type, obj_type) mp_obj_malloc(struct_type, obj_type)

#endif // TFLM_BINDING_NATMOD_H
