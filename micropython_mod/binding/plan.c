// What Interpreter() and arena_size() take besides the model: the planner,
// an offline plan given separately (the planner shim) and pre-allocated
// tensors. Turns Python objects into the engine's tflm_config_t.
#include "py/binary.h"
#include "py/builtin.h"
#include "py/objstr.h"

#include "binding/binding.h"

#ifdef TFLM_BUILTIN_PLAN_HEADER
// A plan compiled into the firmware (`make firmware PLAN=plan.h`, written by
// `tflm-host plan --c-header`): it defines tflm_builtin_plan_words[].
#include TFLM_BUILTIN_PLAN_HEADER
const mp_obj_str_t tflm_builtin_plan_obj = {
    {&mp_type_bytes}, 0, sizeof(tflm_builtin_plan_words), (const byte *)tflm_builtin_plan_words
};
#endif

#if TFLM_PLANNER_OFFLINE
// plan=: the offline planner's (a build without it refuses the argument).
static uint32_t model_tensor_count(tflm_model_t *m) {
    uint32_t n = 0;
    for (uint32_t s = 0; s < m->subgraphs.count; ++s) {
        tflm_subgraph_t sg;
        if (tflm_model_subgraph(m, s, &sg)) {
            n += sg.tensors.count;
        }
    }
    return n;
}

// A file's bytes, read with the built-in open().
static mp_obj_t read_file(mp_obj_t path) {
    mp_obj_t args[2] = { path, MP_OBJ_NEW_QSTR(MP_QSTR_rb) };
    mp_obj_t f = mp_call_function_n_kw(MP_OBJ_FROM_PTR(&mp_builtin_open_obj), 2, 0, args);
    mp_obj_t data = mp_call_function_0(mp_load_attr(f, MP_QSTR_read));
    mp_call_function_0(mp_load_attr(f, MP_QSTR_close));
    return data;
}

// Offsets as Python ints (a list, tuple or array('i')): one per model
// tensor, optionally followed by one per scratch buffer. Written out in the
// plan format so the engine reads one kind of plan.
static mp_obj_t words_from_offsets(tflm_model_t *m, size_t n, mp_obj_t seq, const int32_t *raw) {
    uint32_t tensors = model_tensor_count(m);
    if (n < tensors) {
        mp_raise_msg_varg(&mp_type_ValueError,
            MP_ERROR_TEXT("plan has %u offsets, the model has %u tensors"), (unsigned)n, (unsigned)tensors);
    }
    size_t len = 16 + 4 * n;
    vstr_t vstr;
    vstr_init_len(&vstr, len);
    byte *words = (byte *)vstr.buf;
    int32_t head[4] = { (int32_t)TFLM_PLAN_MAGIC, TFLM_PLAN_VERSION, (int32_t)tensors,
                        n == tensors ? -1 : (int32_t)(n - tensors) };
    memcpy(words, head, sizeof(head));
    for (size_t i = 0; i < n; ++i) {
        int32_t v;
        if (raw) {
            memcpy(&v, raw + i, 4);
        } else {
            mp_int_t x = mp_obj_get_int(mp_obj_subscr(seq, MP_OBJ_NEW_SMALL_INT(i), MP_OBJ_SENTINEL));
            if (x < INT32_MIN || x > INT32_MAX) {
                mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("plan offset %d is out of range"), (int)x);
            }
            v = (int32_t)x;
        }
        memcpy(words + 16 + 4 * i, &v, 4);
    }
    return mp_obj_new_bytes_from_vstr(&vstr);
}

static void parse_plan(tflm_model_t *m, mp_obj_t plan_in, tflm_build_args_t *out) {
    tflm_error_t err;
    tflm_error_clear(&err);
    if (mp_obj_is_str(plan_in)) {
        plan_in = read_file(plan_in);
    }
    if (mp_obj_is_type(plan_in, &mp_type_list) || mp_obj_is_type(plan_in, &mp_type_tuple)) {
        size_t n = mp_obj_get_int(mp_obj_len(plan_in));
        plan_in = words_from_offsets(m, n, plan_in, NULL);
    } else {
        mp_buffer_info_t bufinfo;
        mp_get_buffer_raise(plan_in, &bufinfo, MP_BUFFER_READ);
        char tc = (char)(bufinfo.typecode & 0x7f);
        if ((tc == 'i' || tc == 'l') && mp_binary_get_size('@', tc, NULL) == 4) {
            plan_in = words_from_offsets(m, bufinfo.len / 4, MP_OBJ_NULL, bufinfo.buf);
        }
    }
    mp_buffer_info_t words;
    mp_get_buffer_raise(plan_in, &words, MP_BUFFER_READ);
    if (tflm_plan_from_words(words.buf, words.len, &out->plan, &err) != TFLM_OK) {
        tflm_raise(&err);
    }
    out->plan_obj = plan_in;
    out->plan_buf = words.buf;
    out->plan_len = words.len;
    out->cfg.plan = &out->plan;
}
#endif

void tflm_external_arg(tflm_model_obj_t *model, mp_obj_t index_in, mp_obj_t buffer, tflm_external_t *ext,
    mp_obj_t *keep) {
    mp_int_t index = mp_obj_get_int(index_in); // may run Python code (__int__): the model is checked after it
    tflm_model_check_buffer(model);
    tflm_model_t *m = &model->model;
    mp_buffer_info_t bufinfo;
    mp_get_buffer_raise(buffer, &bufinfo, MP_BUFFER_READ);
    if (!mp_get_buffer(buffer, &bufinfo, MP_BUFFER_RW)) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("buffer for tensor %d is read-only"), (int)index);
    }
    tflm_subgraph_t sg;
    tflm_model_tensor_t t;
    if (!tflm_model_subgraph(m, 0, &sg)) {
        mp_raise_ValueError(MP_ERROR_TEXT("malformed model"));
    }
    if (index < 0 || (mp_uint_t)index >= sg.tensors.count || !tflm_model_tensor(m, &sg, (uint32_t)index, &t)) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("tensor %d does not exist (the model has %u tensors)"),
            (int)index, (unsigned)sg.tensors.count);
    }
    // A typed buffer must hold the tensor's element type (bytes are raw).
    size_t item = mp_binary_get_size('@', bufinfo.typecode & 0x7f, NULL);
    if (item > 1 && item != tflm_type_size(t.type)) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("buffer for tensor %d holds %u-byte items, the tensor is %s"),
            (int)index, (unsigned)item, tflm_type_name(t.type));
    }
    ext->tensor = (uint32_t)index;
    ext->data = bufinfo.buf;
    ext->len = (uint32_t)bufinfo.len;
    *keep = buffer;
}

// The planners' records while a head is planned, on the heap (outside any
// invoke): the arena holds only what it keeps (tflm_config_t.plan_memory).
// NULL when the heap has no room; nothing here raises. No collection runs
// for them: it would run finalisers of garbage interpreters, which give
// their tails back to their arena, while the engine is building a tail in
// that arena (Interpreter() collects and builds again when this fails).
static void *plan_memory(void *old, uint32_t bytes) {
    if (old) {
        m_del(uint8_t, old, bytes);
        return NULL;
    }
    #if TFLM_NATMOD
    // (A native module's objects have no finalisers: natmod.c.)
    return m_realloc_maybe(NULL, bytes, true);
    #else
    const uint16_t automatic = MP_STATE_MEM(gc_auto_collect_enabled);
    MP_STATE_MEM(gc_auto_collect_enabled) = 0;
    void *p = m_malloc_maybe(bytes);
    MP_STATE_MEM(gc_auto_collect_enabled) = automatic;
    return p;
    #endif
}

#if TFLM_STAGE_ARG
// stage=: (first op, last op, grid rows, grid columns, mode) instead of the
// model's schedule, () for none; the engine checks it as it checks the
// model's (tflm_patch_find, patch.c). One message for every bad form: the
// native module's code takes heap (a stock Pico's holds kws_ref_model beside
// the core build only just).
static const char *const stage_modes[] = { "patches", "bands", "kept" };

static void parse_stage(mp_obj_t in, tflm_schedule_t *out) {
    size_t n = 0;
    mp_obj_t *items = NULL;
    if (mp_obj_is_type(in, &mp_type_tuple)) {
        mp_obj_get_array(in, &n, &items);
    }
    memset(out, 0, sizeof(*out));
    uint32_t v[5] = { 0 };
    bool ok = mp_obj_is_type(in, &mp_type_tuple) && (n == 0 || (n == 5 && mp_obj_is_str(items[4])));
    for (size_t k = 0; ok && k < n; ++k) {
        if (k < 4) {
            mp_int_t x = mp_obj_get_int(items[k]);
            ok = x >= 0 && x <= 0xffff;
            v[k] = (uint32_t)x;
            continue;
        }
        const char *mode = mp_obj_str_get_str(items[4]);
        while (v[4] < MP_ARRAY_SIZE(stage_modes) && strcmp(mode, stage_modes[v[4]]) != 0) {
            ++v[4];
        }
        ok = v[4] < MP_ARRAY_SIZE(stage_modes);
    }
    if (!ok) {
        mp_raise_ValueError(MP_ERROR_TEXT("stage must be () or (first op, last op, grid rows, grid columns, "
            "'patches'|'bands'|'kept')"));
    }
    if (n != 0) {
        // (The modes' order is the schedule's: TFLM_PATCH_MODE_PATCHES, _ROWS, _KEEP.)
        *out = (tflm_schedule_t){ .split = v[1] + 1, .grid_h = v[2], .grid_w = v[3], .start = v[0], .mode = v[4] };
    }
}

mp_obj_t tflm_stage_obj(const tflm_patch_t *pt) {
    if (pt->split == 0) {
        return mp_const_empty_tuple;
    }
    mp_obj_t items[5] = {
        MP_OBJ_NEW_SMALL_INT(pt->start), MP_OBJ_NEW_SMALL_INT(pt->split - 1), MP_OBJ_NEW_SMALL_INT(pt->grid_h),
        MP_OBJ_NEW_SMALL_INT(pt->grid_w), mp_obj_new_str_from_cstr(stage_modes[pt->mode]),
    };
    return mp_obj_new_tuple(5, items);
}

#endif

void tflm_build_args(tflm_model_obj_t *model, mp_obj_t planner_in, mp_obj_t plan_in, mp_obj_t prealloc_in,
    mp_obj_t stage_in, tflm_build_args_t *out) {
    memset(out, 0, sizeof(*out));
    out->cfg.plan_memory = plan_memory;
    if (planner_in != mp_const_none) {
        const char *name = mp_obj_str_get_str(planner_in);
        out->cfg.planner = tflm_planner_find(name);
        if (out->cfg.planner == NULL) {
            // The names from the engine's own list of the planners linked in.
            vstr_t v;
            mp_print_t pr;
            vstr_init_print(&v, 64, &pr);
            mp_printf(&pr, "unknown planner '%s' (planners:", name);
            for (size_t k = 0; tflm_planner_at(k) != NULL; ++k) {
                mp_printf(&pr, "%s '%s'", k ? "," : "", tflm_planner_at(k)->name);
            }
            mp_print_str(&pr, ")");
            mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s"), vstr_null_terminated_str(&v));
        }
    }
    if (plan_in != mp_const_none) {
        #if TFLM_PLANNER_OFFLINE
        if (out->cfg.planner && out->cfg.planner != &tflm_planner_offline) {
            mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("a plan is for the offline planner, not '%s'"),
                out->cfg.planner->name);
        }
        out->cfg.planner = &tflm_planner_offline;
        parse_plan(&model->model, plan_in, out);
        #else
        mp_raise_msg(&mp_type_NotImplementedError, MP_ERROR_TEXT("this firmware has no offline planner"));
        #endif
    }
    if (prealloc_in != mp_const_none) {
        if (!mp_obj_is_type(prealloc_in, &mp_type_dict)) {
            mp_raise_TypeError(MP_ERROR_TEXT("preallocated must be a dict {tensor index: buffer}"));
        }
        mp_map_t *map = mp_obj_dict_get_map(prealloc_in);
        for (size_t i = 0; i < map->alloc; ++i) {
            if (!mp_map_slot_is_filled(map, i)) {
                continue;
            }
            if (out->cfg.n_external == TFLM_MAX_EXTERNAL) {
                mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("at most %u tensors can be pre-allocated"),
                    TFLM_MAX_EXTERNAL);
            }
            uint32_t k = out->cfg.n_external++;
            tflm_external_arg(model, map->table[i].key, map->table[i].value, &out->external[k], &out->external_obj[k]);
        }
        out->cfg.external = out->external;
    }
    #if TFLM_STAGE_ARG
    if (stage_in != mp_const_none) {
        parse_stage(stage_in, &out->stage);
        out->cfg.stage = &out->stage;
    }
    #else
    (void)stage_in;
    #endif
}

void tflm_build_args_check(tflm_model_obj_t *model, const tflm_build_args_t *args) {
    tflm_model_check_buffer(model);
    for (size_t k = 0; k < args->cfg.n_external; ++k) {
        mp_buffer_info_t bufinfo;
        if (!mp_get_buffer(args->external_obj[k], &bufinfo, MP_BUFFER_RW) || bufinfo.buf != args->external[k].data
            || bufinfo.len != args->external[k].len) {
            mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("a pre-allocated tensor's buffer was resized or moved"));
        }
    }
    if (args->plan_obj != MP_OBJ_NULL) {
        mp_buffer_info_t bufinfo;
        if (!mp_get_buffer(args->plan_obj, &bufinfo, MP_BUFFER_READ) || bufinfo.buf != args->plan_buf
            || bufinfo.len != args->plan_len) {
            mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("the plan's buffer was resized or moved"));
        }
    }
}
