// The tflm module as a dynamic native module (tflm.mpy for stock firmware,
// `make natmod`): its entry point, and what natmod.h maps the binding's
// MicroPython calls onto. The binding's other files are the built-in
// module's, compiled with TFLM_NATMOD=1.
//
// At import: the constant tables' qstr names become the qstrs this load
// numbered (natmod.h), the types get their names, and the module's globals
// are those of the built-in module (modtflm.c).
#include <string.h>

#include "binding/binding.h"

// Nothing in the built-in module's builds (which compile binding/*.c).
#if TFLM_NATMOD

const mp_obj_type_t *tflm_natmod_array_type;
mp_obj_t tflm_natmod_builtins; // (not static: the loader places no static bss)

mp_obj_t tflm_natmod_builtin_obj(qstr q) {
    return mp_load_attr(tflm_natmod_builtins, q);
}

// The qstrs natmod.h uses, named here because tools/mpy_ld.py collects a
// module's qstrs from its .c files only: MP_QSTR_MemoryError MP_QSTR_OSError
// MP_QSTR_float MP_QSTR_memoryview MP_QSTR_open MP_QSTR_repr MP_QSTR_issubclass MP_QSTR_builtins
// MP_QSTR_bytes MP_QSTR_bytearray MP_QSTR_IndexError
// MP_QSTR_NotImplementedError MP_QSTR_RuntimeError MP_QSTR_TypeError MP_QSTR_ValueError MP_QSTR_len
// MP_QSTR_OverflowError

// ---------------------------------------------------------------------------
// The C library the engine calls: the firmware's through mp_fun_table where
// it has them, small loops otherwise (the module links no libc).

void *memset(void *s, int c, size_t n) {
    return mp_fun_table.memset_(s, c, n);
}

void *memmove(void *dest, const void *src, size_t n) {
    return mp_fun_table.memmove_(dest, src, n);
}

void *memcpy(void *dest, const void *src, size_t n) {
    return mp_fun_table.memmove_(dest, src, n);
}

int memcmp(const void *a, const void *b, size_t n) {
    const unsigned char *p = a, *q = b;
    for (size_t i = 0; i < n; ++i) {
        if (p[i] != q[i]) {
            return p[i] < q[i] ? -1 : 1;
        }
    }
    return 0;
}

size_t strlen(const char *s) {
    size_t n = 0;
    while (s[n]) {
        ++n;
    }
    return n;
}

int strcmp(const char *a, const char *b) {
    while (*a && *a == *b) {
        ++a;
        ++b;
    }
    return (unsigned char)*a - (unsigned char)*b;
}

#if defined(__ARM_ARCH_6M__)
// Double and float division for the Cortex-M0 (the engine's quantization arithmetic):
// libgcc's reads a table by absolute address, which a native module cannot
// hold. IEEE 754, correctly rounded to nearest even, by long division.
static double double_of(uint64_t bits) {
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

// The significand with its leading bit at 52 and the exponent it goes with.
static uint64_t double_normalize(uint64_t frac, int *e) {
    if (*e == 0) {
        *e = 1;
        while (!(frac & ((uint64_t)1 << 52))) {
            frac <<= 1;
            --*e;
        }
        return frac;
    }
    return frac | ((uint64_t)1 << 52);
}

double __aeabi_ddiv(double a, double b) {
    uint64_t ua, ub;
    memcpy(&ua, &a, 8);
    memcpy(&ub, &b, 8);
    const uint64_t frac_mask = ((uint64_t)1 << 52) - 1, inf = (uint64_t)0x7ff << 52, quiet = (uint64_t)1 << 51;
    uint64_t sign = (ua ^ ub) & ((uint64_t)1 << 63);
    int ea = (int)(ua >> 52) & 0x7ff, eb = (int)(ub >> 52) & 0x7ff;
    uint64_t ma = ua & frac_mask, mb = ub & frac_mask;
    if (ea == 0x7ff && ma) {
        return double_of(ua | quiet);
    }
    if (eb == 0x7ff && mb) {
        return double_of(ub | quiet);
    }
    if (ea == 0x7ff) {
        return double_of(eb == 0x7ff ? inf | quiet : sign | inf);
    }
    if (eb == 0x7ff) {
        return double_of(sign);
    }
    if (eb == 0 && mb == 0) {
        return double_of(ea == 0 && ma == 0 ? inf | quiet : sign | inf);
    }
    if (ea == 0 && ma == 0) {
        return double_of(sign);
    }
    ma = double_normalize(ma, &ea);
    mb = double_normalize(mb, &eb);
    int e = ea - eb;
    if (ma < mb) {
        ma <<= 1;
        --e;
    }
    // 55 quotient bits: the 53 of the result, a rounding bit and one more.
    uint64_t q = 0, r = ma;
    for (int i = 0; i < 55; ++i) {
        q <<= 1;
        if (r >= mb) {
            r -= mb;
            q |= 1;
        }
        r <<= 1;
    }
    bool sticky = r != 0;
    int be = e + 1023;
    if (be >= 0x7ff) {
        return double_of(sign | inf);
    }
    if (be <= 0) { // subnormal
        int sh = 1 - be;
        if (sh > 56) {
            sticky |= q != 0;
            q = 0;
        } else {
            sticky |= (q & (((uint64_t)1 << sh) - 1)) != 0;
            q >>= sh;
        }
    }
    uint64_t mant = q >> 2;
    bool half = (q >> 1) & 1;
    sticky |= (q & 1) != 0;
    if (half && (sticky || (mant & 1))) {
        ++mant; // may carry into the exponent, up to infinity: as IEEE rounds
    }
    return double_of(sign | (be <= 0 ? mant : ((uint64_t)(be - 1) << 52) + mant));
}

// Float division, from libgcc for the same reason: through doubles, whose
// 53 bits round a quotient of 24-bit floats as float division itself would.
float __aeabi_fdiv(float a, float b) {
    return (float)__aeabi_ddiv(a, b);
}
#endif

// ---------------------------------------------------------------------------
// Strings, printing and exceptions.

void tflm_natmod_vstr_init(vstr_t *vstr, size_t alloc) {
    vstr->alloc = alloc ? alloc : 1;
    vstr->len = 0;
    vstr->buf = m_malloc(vstr->alloc);
    vstr->fixed_buf = false;
}

void tflm_natmod_vstr_add_strn(vstr_t *vstr, const char *str, size_t len) {
    if (vstr->len + len + 1 > vstr->alloc) {
        size_t alloc = vstr->len + len + 1 + 16;
        vstr->buf = m_realloc(vstr->buf, alloc);
        vstr->alloc = alloc;
    }
    memcpy(vstr->buf + vstr->len, str, len);
    vstr->len += len;
}

static void vstr_print_strn(void *data, const char *str, size_t len) {
    tflm_natmod_vstr_add_strn(data, str, len);
}

void tflm_natmod_vstr_init_print(vstr_t *vstr, size_t alloc, mp_print_t *print) {
    tflm_natmod_vstr_init(vstr, alloc);
    print->data = vstr;
    print->print_strn = vstr_print_strn;
}

char *tflm_natmod_vstr_null_terminated_str(vstr_t *vstr) {
    tflm_natmod_vstr_add_strn(vstr, "", 0); // room for the 0 (add_strn keeps one)
    vstr->buf[vstr->len] = '\0';
    return vstr->buf;
}

mp_obj_t tflm_natmod_str_from_vstr(vstr_t *vstr) {
    mp_obj_t s = mp_obj_new_str(vstr->buf, vstr->len);
    m_free(vstr->buf);
    vstr->buf = NULL;
    return s;
}

mp_obj_t tflm_natmod_bytes_from_vstr(vstr_t *vstr) {
    mp_obj_t b = mp_obj_new_bytes((const byte *)vstr->buf, vstr->len);
    m_free(vstr->buf);
    vstr->buf = NULL;
    return b;
}

NORETURN void tflm_natmod_raise_varg(const mp_obj_type_t *type, const char *fmt, ...) {
    vstr_t v;
    mp_print_t pr;
    tflm_natmod_vstr_init_print(&v, 64, &pr);
    va_list ap;
    va_start(ap, fmt);
    mp_vprintf(&pr, fmt, ap);
    va_end(ap);
    mp_obj_t msg = tflm_natmod_str_from_vstr(&v);
    nlr_raise(mp_obj_new_exception_arg1(type, msg));
}

void tflm_natmod_print_repr(const mp_print_t *print, mp_obj_t o) {
    mp_obj_t r = mp_call_function_n_kw(tflm_natmod_builtin_obj(MP_QSTR_repr), 1, 0, &o);
    size_t len;
    const char *s = mp_obj_str_get_data(r, &len);
    print->print_strn(print->data, s, len);
}

bool tflm_natmod_issubclass(mp_obj_t a, mp_obj_t b) {
    mp_obj_t args[2] = { a, b };
    return mp_obj_is_true(mp_call_function_n_kw(tflm_natmod_builtin_obj(MP_QSTR_issubclass), 2, 0, args));
}

// As py/obj.c's mp_obj_len_maybe: a str's or bytes' length, else the
// type's MP_UNARY_OP_LEN (MP_OBJ_NULL where it has none); an exception a
// __len__ raises goes on as it is.
mp_obj_t tflm_natmod_len_maybe(mp_obj_t o) {
    if (mp_obj_is_str_or_bytes(o)) {
        size_t len;
        tflm_natmod_str_get_data(o, &len);
        return MP_OBJ_NEW_SMALL_INT(len);
    }
    const mp_obj_type_t *type = mp_obj_get_type(o);
    return MP_OBJ_TYPE_HAS_SLOT(type, unary_op) ? MP_OBJ_TYPE_GET_SLOT(type, unary_op)(MP_UNARY_OP_LEN, o)
                                                : MP_OBJ_NULL;
}

mp_obj_t tflm_natmod_len(mp_obj_t o) {
    return mp_call_function_n_kw(tflm_natmod_builtin_obj(MP_QSTR_len), 1, 0, &o);
}

mp_int_t tflm_natmod_get_int(mp_obj_t o) {
    // The table's conversion (TypeError for what is no int), then whether
    // it kept the value: equal to o again only if o fits a machine word.
    mp_int_t v = (mp_int_t)mp_fun_table.native_from_obj(o, MP_NATIVE_TYPE_INT);
    if (!mp_obj_is_small_int(o) && !mp_obj_is_true(mp_binary_op(MP_BINARY_OP_EQUAL, o, mp_obj_new_int(v)))) {
        mp_raise_msg_varg(tflm_natmod_builtin(MP_QSTR_OverflowError),
            "overflow converting long int to machine word");
    }
    return v;
}

const void *tflm_natmod_str_get_data(mp_obj_t o, size_t *len) {
    if (!mp_obj_is_str_or_bytes(o)) {
        mp_raise_msg_varg(&mp_type_TypeError, "can't convert '%s' object to %s implicitly", mp_obj_get_type_str(o),
            "str");
    }
    mp_buffer_info_t b;
    mp_get_buffer_raise(o, &b, MP_BUFFER_READ);
    if (len != NULL) {
        *len = b.len;
    }
    return b.buf;
}

const char *tflm_natmod_type_str(mp_obj_t o) {
    return mp_obj_str_get_str(MP_OBJ_NEW_QSTR(mp_obj_get_type(o)->name));
}

// ---------------------------------------------------------------------------
// The heap, which a native module does not see.

bool tflm_in_heap(const void *p) {
    (void)p;
    return true;
}

const uint8_t *tflm_buffer_anchor(const void *p, size_t len) {
    (void)len;
    return p;
}

// ---------------------------------------------------------------------------
// Loading.

// The qstr a constant table names (natmod.h's MP_ROM_QSTR).
static mp_obj_t qstr_of_name(mp_rom_obj_t key) {
    const char *name = (const char *)key + sizeof(TFLM_NATMOD_QSTR_PREFIX) - 1;
    mp_obj_t q = mp_obj_new_str(name, strlen(name));
    if (!mp_obj_is_qstr(q)) {
        mp_raise_msg_varg(&mp_type_RuntimeError, "tflm.mpy: no qstr %s", name);
    }
    return q;
}

// A constant dict's keys, from qstr names to the qstrs: written once, in
// the module's own memory (a native module's code and constants are in RAM).
static void fix_dict(const mp_obj_dict_t *dict) {
    mp_map_t *map = (mp_map_t *)&dict->map;
    for (size_t k = 0; k < map->used; ++k) {
        map->table[k].key = qstr_of_name(map->table[k].key);
    }
}

static void fix_type(const mp_obj_type_t *type, qstr name) {
    mp_obj_type_t *t = (mp_obj_type_t *)type;
    t->name = name;
    if (t->slot_index_locals_dict) {
        fix_dict(MP_OBJ_TYPE_GET_SLOT(t, locals_dict));
    }
}

mp_obj_t mpy_init(mp_obj_fun_bc_t *self, size_t n_args, size_t n_kw, mp_obj_t *args) {
    MP_DYNRUNTIME_INIT_ENTRY

    tflm_natmod_builtins = mp_import_name(MP_QSTR_builtins, mp_const_none, MP_OBJ_NEW_SMALL_INT(0));
    mp_obj_t array_mod = mp_import_name(MP_QSTR_array, mp_const_none, MP_OBJ_NEW_SMALL_INT(0));
    tflm_natmod_array_type = MP_OBJ_TO_PTR(mp_load_attr(array_mod, MP_QSTR_array));

    fix_type(&tflm_model_type, MP_QSTR_Model);
    fix_type(&tflm_tensor_info_type, MP_QSTR_TensorInfo);
    fix_type(&tflm_arena_type, MP_QSTR_Arena);
    fix_type(&tflm_interp_type, MP_QSTR_Interpreter);
    fix_dict(&tflm_module_globals);
    mp_obj_t globals = MP_OBJ_FROM_PTR(self->context->module.globals);
    const mp_map_t *table = &tflm_module_globals.map;
    for (size_t k = 0; k < table->used; ++k) {
        // __name__ is the loader's.
        if (table->table[k].key != MP_OBJ_NEW_QSTR(MP_QSTR___name__)) {
            mp_obj_dict_store(globals, table->table[k].key, table->table[k].value);
        }
    }
    mp_store_global(MP_QSTR_builtin_plan, mp_const_none);

    MP_DYNRUNTIME_INIT_EXIT
}

#endif // TFLM_NATMOD
