// tflm.Arena and tflm.Interpreter.
#include <string.h>

#include "py/binary.h"
#include "py/gc.h"
#include "py/objarray.h"
#include "py/objstr.h"

#include "binding/binding.h"
#include "kernels/arch.h"
#include "py/cstack.h"

// Builds the model in a temporary buffer as large as its persistent data
// (freed again) to learn its head, tail and the bytes it needs.
static void measure(tflm_model_t *model, const tflm_config_t *cfg, tflm_interp_t *out) {
    tflm_error_t err;
    tflm_error_clear(&err);
    uint32_t tail_bytes, work_bytes;
    if (tflm_interp_tail_size(model, cfg, &tail_bytes, &work_bytes, &err) != TFLM_OK) {
        tflm_raise_for(model, &err);
    }
    size_t work_len = work_bytes + TFLM_ALIGN;
    uint8_t *work = m_new(uint8_t, work_len);
    tflm_status_t st = tflm_interp_measure(model, cfg, work, work_len, out);
    m_del(uint8_t, work, work_len);
    if (st != TFLM_OK) {
        tflm_raise_for(model, &out->err);
    }
}

// arena_size(model, *, planner=None, plan=None, preallocated=None, stage=None)
static mp_obj_t tflm_arena_size(size_t n_args, const mp_obj_t *pos_args, mp_map_t *kw_args) {
    enum { ARG_model, ARG_planner, ARG_plan, ARG_preallocated, ARG_stage };
    TFLM_ARG_TABLE mp_arg_t allowed_args[] = {
        { MP_QSTR_model, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        { MP_QSTR_planner, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        { MP_QSTR_plan, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        { MP_QSTR_preallocated, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        #if TFLM_STAGE_ARG
        { MP_QSTR_stage, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        #endif
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed_args)];
    mp_arg_parse_all(n_args, pos_args, kw_args, MP_ARRAY_SIZE(allowed_args), allowed_args, args);
    tflm_c_stack_check();
    tflm_model_obj_t *model = tflm_get_model(args[ARG_model].u_obj);
    tflm_build_args_t build;
    tflm_build_args(model, args[ARG_planner].u_obj, args[ARG_plan].u_obj, args[ARG_preallocated].u_obj,
        tflm_stage_arg(args, ARG_stage), &build);
    tflm_build_args_check(model, &build);
    tflm_interp_t measured;
    measure(&model->model, &build.cfg, &measured);
    return mp_obj_new_int_from_uint(tflm_interp_needed_bytes(&measured));
}
MP_DEFINE_CONST_FUN_OBJ_KW(tflm_arena_size_obj, 1, tflm_arena_size);

// ---------------------------------------------------------------------------
// The interpreters built and not yet released, in a list linked through
// their objects with bit 0 of each link set: the collector takes no such
// word for a pointer, so the list keeps nothing alive, and an interpreter
// leaves it in its finaliser (run for every object at a soft reset too,
// before the heap is reused). Interpreter() and set_tensor_buffer() look
// through it for memory that another interpreter writes: one buffer is one
// tflm.Arena, and a pre-allocated tensor cannot be another's arena.
// (0: the list is empty. A native module has no finalisers: nothing would
// take a collected interpreter out, so the list stays empty there.)
uintptr_t tflm_live_interps; // (not static: a native module's BSS is reached through its GOT)

static tflm_interp_obj_t *live_untag(uintptr_t link) {
    return (tflm_interp_obj_t *)(link & ~(uintptr_t)1);
}

static void live_add(tflm_interp_obj_t *self) {
    if (TFLM_NATMOD) {
        return;
    }
    self->next_live = tflm_live_interps;
    tflm_live_interps = (uintptr_t)self | 1;
}

static void live_remove(tflm_interp_obj_t *self) {
    for (uintptr_t *link = &tflm_live_interps; live_untag(*link) != NULL; link = &live_untag(*link)->next_live) {
        if (live_untag(*link) == self) {
            *link = self->next_live;
            return;
        }
    }
}

static bool mem_overlap(const void *a, size_t a_len, const void *b, size_t b_len) {
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    return a_len != 0 && b_len != 0 && a0 < b0 + b_len && b0 < a0 + a_len;
}

// Whether an arena's bytes are still where its interpreters use them (a
// bytearray resized since then was moved and its old block freed: its
// interpreters refuse to run, the block is no longer theirs).
static bool arena_in_place(const tflm_arena_obj_t *a) {
    mp_buffer_info_t bufinfo;
    return mp_get_buffer(a->buffer, &bufinfo, MP_BUFFER_READ) && bufinfo.buf == a->buf && bufinfo.len == a->len;
}

// The arena of a live interpreter whose buffer shares bytes with [buf,
// buf + len), other than `except`; NULL when none does.
static tflm_arena_obj_t *live_arena_over(const void *buf, size_t len, const tflm_arena_obj_t *except) {
    for (tflm_interp_obj_t *it = live_untag(tflm_live_interps); it != NULL; it = live_untag(it->next_live)) {
        if (it->arena != except && mem_overlap(buf, len, it->arena->buf, it->arena->len) && arena_in_place(it->arena)) {
            return it->arena;
        }
    }
    return NULL;
}

// Whether a pre-allocated tensor of a live interpreter (its buffer still
// where it was given) shares bytes with [buf, buf + len).
static bool live_external_over(const void *buf, size_t len) {
    for (tflm_interp_obj_t *it = live_untag(tflm_live_interps); it != NULL; it = live_untag(it->next_live)) {
        for (uint32_t k = 0; k < it->ip.n_external; ++k) {
            mp_buffer_info_t bufinfo;
            if (it->external[k] != MP_OBJ_NULL && mp_get_buffer(it->external[k], &bufinfo, MP_BUFFER_READ)
                && bufinfo.buf == it->ip.external[k] && mem_overlap(buf, len, bufinfo.buf, bufinfo.len)) {
                return true;
            }
        }
    }
    return false;
}

// An arena's bytes must not be what another interpreter writes: another
// tflm.Arena's (each would put its tails at the top, over the other's
// records) or another interpreter's pre-allocated tensor. Interpreters that
// are garbage but not yet collected count until the collector runs: it
// runs once before a refusal.
static void arena_check_alone(tflm_arena_obj_t *self) {
    if (live_arena_over(self->buf, self->len, self) != NULL || live_external_over(self->buf, self->len)) {
        gc_collect();
    }
    if (live_arena_over(self->buf, self->len, self) != NULL) {
        mp_raise_ValueError(MP_ERROR_TEXT("the arena's buffer overlaps the arena of another tflm.Arena in use: "
            "give interpreters that share memory one tflm.Arena"));
    }
    if (live_external_over(self->buf, self->len)) {
        mp_raise_ValueError(MP_ERROR_TEXT("the arena's buffer overlaps a pre-allocated tensor of another interpreter"));
    }
}

// ---------------------------------------------------------------------------
// Arena: the memory one or more interpreters allocate in. Interpreters that
// share one run one after another: the head is sized for the largest plan,
// their tails stack.

// An arena of `size` usable bytes, allocated on the heap with 15 more to align it.
static tflm_arena_obj_t *arena_new_bytes(size_t size) {
    tflm_arena_obj_t *self = mp_obj_malloc(tflm_arena_obj_t, &tflm_arena_type);
    self->len = size + TFLM_ALIGN - 1;
    self->buf = m_new(uint8_t, self->len);
    self->buffer = mp_obj_new_bytearray_by_ref(self->len, self->buf);
    self->anchor = self->buf;
    tflm_arena_init(&self->arena, self->buf, self->len);
    self->arena.size = (uint32_t)size & ~(TFLM_ALIGN - 1);
    // Its bytearray is the arena's alone until Arena.buffer hands it out
    // (or views outlive the layout they were made for: arena_release_tail).
    self->arena.exposed = false;
    return self;
}

static tflm_arena_obj_t *arena_new_size(mp_int_t size) {
    if (size <= 0) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("arena size must be positive, not %ld"), (long)size);
    }
    // Arena offsets are 31-bit: the same layout on every target.
    if ((mp_uint_t)size > TFLM_ARENA_DRY_SIZE) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("arena size %ld is too large (at most %u bytes)"),
            (long)size, (unsigned)TFLM_ARENA_DRY_SIZE);
    }
    return arena_new_bytes((size_t)size);
}

// A buffer's arena: the tflm.Arena interpreters already use for exactly
// these bytes, else a new one (a buffer that overlaps another's is refused
// when an interpreter is built in it).
// `interp`: for Interpreter(), which also takes a tflm.Arena or None.
static tflm_arena_obj_t *arena_new_buffer(mp_obj_t buffer, bool interp) {
    mp_buffer_info_t bufinfo;
    if (!mp_get_buffer(buffer, &bufinfo, MP_BUFFER_RW)) {
        bool readable = mp_get_buffer(buffer, &bufinfo, MP_BUFFER_READ);
        mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("arena must be a size in bytes (int), a writable buffer "
            "(a bytearray, a memoryview of one)%s, not %s%s"), interp ? ", a tflm.Arena or None (the exact size)" : "",
            mp_obj_get_type_str(buffer), readable ? " (read-only)" : "");
    }
    tflm_arena_obj_t *same = live_arena_over(bufinfo.buf, bufinfo.len, NULL);
    if (same != NULL && same->buf == bufinfo.buf && same->len == bufinfo.len) {
        return same;
    }
    tflm_arena_obj_t *self = mp_obj_malloc(tflm_arena_obj_t, &tflm_arena_type);
    self->buffer = buffer;
    self->buf = bufinfo.buf;
    self->len = bufinfo.len;
    self->anchor = tflm_buffer_anchor(bufinfo.buf, bufinfo.len);
    tflm_arena_init(&self->arena, bufinfo.buf, bufinfo.len);
    return self;
}

static mp_obj_t arena_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *args) {
    mp_arg_check_num(n_args, n_kw, 1, 1, false);
    if (mp_obj_is_int(args[0])) {
        return MP_OBJ_FROM_PTR(arena_new_size(mp_obj_get_int(args[0])));
    }
    return MP_OBJ_FROM_PTR(arena_new_buffer(args[0], false));
}

// The arena's bytes must still be where they were (its own bytearray, not
// handed out, cannot have been resized).
static void arena_check(tflm_arena_obj_t *self) {
    if (self->arena.exposed && !tflm_buffer_is(self->buffer, self->buf, self->len, MP_BUFFER_RW)) {
        mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("arena buffer was resized or moved"));
    }
}

static mp_obj_t arena_used_bytes(mp_obj_t self_in) {
    tflm_arena_obj_t *self = MP_OBJ_TO_PTR(self_in);
    return mp_obj_new_int_from_uint(self->arena.head + self->arena.tail);
}
static MP_DEFINE_CONST_FUN_OBJ_1(arena_used_bytes_obj, arena_used_bytes);

static mp_obj_t arena_head_bytes(mp_obj_t self_in) {
    tflm_arena_obj_t *self = MP_OBJ_TO_PTR(self_in);
    return mp_obj_new_int_from_uint(self->arena.head);
}
static MP_DEFINE_CONST_FUN_OBJ_1(arena_head_bytes_obj, arena_head_bytes);

static mp_obj_t arena_tail_bytes(mp_obj_t self_in) {
    tflm_arena_obj_t *self = MP_OBJ_TO_PTR(self_in);
    return mp_obj_new_int_from_uint(self->arena.tail);
}
static MP_DEFINE_CONST_FUN_OBJ_1(arena_tail_bytes_obj, arena_tail_bytes);

static void arena_attr(mp_obj_t self_in, qstr attr, mp_obj_t *dest) {
    tflm_arena_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (dest[0] != MP_OBJ_NULL) {
        return;
    }
    if (attr == MP_QSTR_size) {
        dest[0] = mp_obj_new_int_from_uint(self->arena.size);
    } else if (attr == MP_QSTR_buffer) {
        // From now on anything can write the bytes: the seal is compared.
        self->arena.exposed = true;
        dest[0] = self->buffer;
    } else {
        dest[1] = MP_OBJ_SENTINEL;
    }
}

// Bytes in gaps between the tails of interpreters in use.
static uint32_t arena_gap_bytes(const tflm_arena_obj_t *self) {
    uint32_t gaps = 0;
    for (size_t k = 0; k < self->n_tails; ++k) {
        gaps += self->tails[k].alive ? 0 : self->tails[k].bytes;
    }
    return gaps;
}

static void arena_print(const mp_print_t *print, mp_obj_t self_in, mp_print_kind_t kind) {
    tflm_arena_obj_t *self = MP_OBJ_TO_PTR(self_in);
    const tflm_arena_t *a = &self->arena;
    mp_printf(print, "Arena(size=%u, used=%u, head=%u, tail=%u, free=%u, interpreters=%u, gaps=%u)",
        (unsigned)a->size, (unsigned)(a->head + a->tail), (unsigned)a->head, (unsigned)a->tail,
        (unsigned)tflm_arena_free(a), (unsigned)a->users, (unsigned)arena_gap_bytes(self));
}

// The highest gap (run of gaps) that holds `bytes`: its start, in bytes
// below the arena's top, and its size; false when none does.
static bool arena_find_gap(const tflm_arena_obj_t *self, uint32_t bytes, uint32_t *top, uint32_t *size) {
    uint32_t at = 0;
    for (size_t k = 0; k < self->n_tails; ++k) {
        if (!self->tails[k].alive && self->tails[k].bytes >= bytes) {
            *top = at;
            *size = self->tails[k].bytes;
            return true;
        }
        at += self->tails[k].bytes;
    }
    return false;
}

// Room in the list for the part a new interpreter adds (at most one: its
// tail, or its tail split from a gap), made before it is built. Growing the
// list later, in arena_add_tail, could collect garbage interpreters of this
// arena in the middle of it: their finalisers merge and drop parts of the
// list and lower the arena's tail under the index it holds, and over the
// new interpreter's tail, not listed yet.
static void arena_reserve_tail(tflm_arena_obj_t *self) {
    if (self->n_tails + 1 > self->tails_alloc) {
        size_t more = self->tails_alloc ? 2 * self->tails_alloc : 2;
        self->tails = m_renew(tflm_tail_t, self->tails, self->tails_alloc, more);
        self->tails_alloc = more;
    }
}

// (Allocates nothing: arena_reserve_tail made the room.)
static void arena_insert_tail(tflm_arena_obj_t *self, size_t k, tflm_tail_t t) {
    memmove(&self->tails[k + 1], &self->tails[k], (self->n_tails - k) * sizeof(tflm_tail_t));
    self->tails[k] = t;
    self->n_tails++;
}

// The part of the tail that starts where interpreter ip's tail starts
// (n_tails when none does).
static size_t arena_tail_index(const tflm_arena_obj_t *self, const tflm_interp_t *ip) {
    uint32_t top = self->arena.size - ip->tail_at - ip->tail_bytes, at = 0;
    size_t k = 0;
    while (k < self->n_tails && at < top) {
        at += self->tails[k++].bytes;
    }
    return at == top ? k : self->n_tails;
}

// A new interpreter's tail: at the bottom, or at the top of the gap it was
// built in (the rest of the gap stays one).
static void arena_add_tail(tflm_arena_obj_t *self, const tflm_interp_t *ip) {
    tflm_tail_t t = { ip->tail_bytes, ip->head_bytes, true };
    size_t k = arena_tail_index(self, ip);
    if (k == self->n_tails) {
        arena_insert_tail(self, k, t);
        return;
    }
    tflm_tail_t *gap = &self->tails[k];
    gap->bytes -= t.bytes;
    if (gap->bytes == 0) {
        *gap = t;
    } else {
        arena_insert_tail(self, k, t);
    }
}

// An interpreter is gone (collected): its tail becomes a gap, merged with
// the gaps beside it; gaps at the bottom leave the tail; the head shrinks
// to the largest plan still in use. Called from a finaliser: allocates nothing.
static void arena_release_tail(tflm_arena_obj_t *self, const tflm_interp_t *ip) {
    tflm_arena_t *a = &self->arena;
    size_t k = arena_tail_index(self, ip);
    if (k == self->n_tails || !self->tails[k].alive) {
        return;
    }
    // Its tensors' views outlive it, over bytes the next interpreters' records
    // may take (its tail, a head that shrinks): writes through them are the
    // user's from now on, and the seals are compared.
    a->exposed = true;
    self->tails[k].alive = false;
    a->users--;
    if (k + 1 < self->n_tails && !self->tails[k + 1].alive) {
        self->tails[k].bytes += self->tails[k + 1].bytes;
        memmove(&self->tails[k + 1], &self->tails[k + 2], (self->n_tails - k - 2) * sizeof(tflm_tail_t));
        self->n_tails--;
    }
    if (k > 0 && !self->tails[k - 1].alive) {
        self->tails[k - 1].bytes += self->tails[k].bytes;
        memmove(&self->tails[k], &self->tails[k + 1], (self->n_tails - k - 1) * sizeof(tflm_tail_t));
        self->n_tails--;
    }
    if (self->n_tails > 0 && !self->tails[self->n_tails - 1].alive) {
        a->tail -= self->tails[--self->n_tails].bytes;
        a->cursor = a->tail;
    }
    uint32_t head = 0;
    for (size_t i = 0; i < self->n_tails; ++i) {
        head = self->tails[i].alive ? TFLM_MAX(head, self->tails[i].head) : head;
    }
    a->head = head;
}

// The interpreter's plan changed (set_tensor_buffer).
static void arena_set_head(tflm_arena_obj_t *self, const tflm_interp_t *ip) {
    size_t k = arena_tail_index(self, ip);
    if (k < self->n_tails) {
        // A smaller plan: views of the tensors of the one before may reach
        // bytes the next interpreters' records take (as arena_release_tail).
        self->arena.exposed |= ip->head_bytes < self->tails[k].head;
        self->tails[k].head = ip->head_bytes;
    }
}

// Attributes (answered by arena_attr), for help() and dir() of the class.
TFLM_ATTR_DOC(size, "int: usable bytes");
TFLM_ATTR_DOC(buffer, "the object holding the bytes");

static const mp_rom_map_elem_t arena_locals_table[] = {
    TFLM_ATTR_ENTRY(size),
    TFLM_ATTR_ENTRY(buffer),
    { MP_ROM_QSTR(MP_QSTR_used_bytes), MP_ROM_PTR(&arena_used_bytes_obj) },
    { MP_ROM_QSTR(MP_QSTR_head_bytes), MP_ROM_PTR(&arena_head_bytes_obj) },
    { MP_ROM_QSTR(MP_QSTR_tail_bytes), MP_ROM_PTR(&arena_tail_bytes_obj) },
};
static MP_DEFINE_CONST_DICT(arena_locals, arena_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(
    tflm_arena_type,
    MP_QSTR_Arena,
    MP_TYPE_FLAG_NONE,
    make_new, arena_make_new,
    print, arena_print,
    attr, arena_attr,
    locals_dict, &arena_locals
    );

// ---------------------------------------------------------------------------
// Interpreter


// MemoryError with the exact bytes needed. When the engine could not even
// fit the persistent data, the model is measured in a temporary buffer.
static NORETURN void raise_arena_too_small(tflm_interp_obj_t *self, const tflm_config_t *cfg) {
    tflm_error_t *err = &self->ip.err;
    tflm_arena_t *a = &self->arena->arena;
    uint32_t needed = err->needed;
    if (needed == 0) {
        tflm_interp_t measured;
        tflm_model_obj_t *model = MP_OBJ_TO_PTR(self->model);
        measure(&model->model, cfg, &measured);
        needed = tflm_interp_needed_in(a, &measured);
    }
    #if TFLM_NATMOD
    // Without finalisers, the tails of interpreters dropped without
    // __del__() stay (natmod.h): say so where there are any.
    if (a->users > 0) {
        mp_raise_msg_varg(&mp_type_MemoryError, MP_ERROR_TEXT("arena too small: needs %u bytes, has %u "
            "(%u of them the tails of %u interpreters in it: tflm.mpy frees one's at its __del__())"),
            (unsigned)needed, (unsigned)a->size, (unsigned)a->tail, (unsigned)a->users);
    }
    #endif
    mp_raise_msg_varg(&mp_type_MemoryError, MP_ERROR_TEXT("arena too small: needs %u bytes, has %u"),
        (unsigned)needed, (unsigned)a->size);
}

// Remembers the buffer object behind each pre-allocated tensor's slot.
static void keep_external(tflm_interp_obj_t *self, const tflm_external_t *ext, mp_obj_t obj) {
    const tflm_subgraph_rec_t *sg = tflm_interp_subgraph(&self->ip, 0);
    const tflm_tensor_rec_t *r = tflm_interp_tensor(&self->ip, tflm_interp_rec_of(&self->ip, sg->tensor_base + ext->tensor));
    if (r->where == TFLM_AT_EXTERNAL) {
        self->external[r->data] = obj;
        self->external_anchor[r->data] = tflm_buffer_anchor(ext->data, ext->len);
    }
}

// A pre-allocated tensor's buffer must not be another interpreter's arena
// (the engine checks the interpreter's own arena, model and buffers).
static void external_check_alone(const tflm_external_t *ext, const tflm_arena_obj_t *own) {
    if (live_arena_over(ext->data, ext->len, own) != NULL) {
        gc_collect(); // the other may be garbage not yet collected
    }
    if (live_arena_over(ext->data, ext->len, own) != NULL) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("buffer for tensor %u overlaps the arena of another "
            "interpreter"), (unsigned)ext->tensor);
    }
}

// Builds the interpreter in its arena: in the highest gap between other
// interpreters' tails that holds its tail, else below them. False on an
// error (in self->ip.err).
static bool build_in(tflm_interp_obj_t *self, const tflm_config_t *base_cfg) {
    tflm_arena_obj_t *arena = self->arena;
    tflm_model_t *model = &((tflm_model_obj_t *)MP_OBJ_TO_PTR(self->model))->model;
    tflm_config_t cfg = *base_cfg;
    uint32_t tail, work;
    if (arena_gap_bytes(arena) && tflm_interp_tail_size(model, &cfg, &tail, &work, &self->ip.err) == TFLM_OK
        && arena_find_gap(arena, tail, &cfg.gap_top, &cfg.gap_bytes)
        && tflm_interp_init(&self->ip, model, &arena->arena, &cfg) == TFLM_OK) {
        return true;
    }
    cfg.gap_bytes = 0;
    return tflm_interp_init(&self->ip, model, &arena->arena, &cfg) == TFLM_OK;
}

// Interpreter(model, arena=None, *, planner=None, plan=None, preallocated=None, stage=None)
static mp_obj_t interp_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *all_args) {
    enum { ARG_model, ARG_arena, ARG_planner, ARG_plan, ARG_preallocated, ARG_stage };
    TFLM_ARG_TABLE mp_arg_t allowed_args[] = {
        { MP_QSTR_model, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        { MP_QSTR_arena, MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        { MP_QSTR_planner, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        { MP_QSTR_plan, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        { MP_QSTR_preallocated, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        #if TFLM_STAGE_ARG
        { MP_QSTR_stage, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_rom_obj = MP_ROM_NONE} },
        #endif
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed_args)];
    mp_arg_parse_all_kw_array(n_args, n_kw, all_args, MP_ARRAY_SIZE(allowed_args), allowed_args, args);
    tflm_c_stack_check();

    tflm_model_obj_t *model = tflm_get_model(args[ARG_model].u_obj);
    tflm_build_args_t build;
    tflm_build_args(model, args[ARG_planner].u_obj, args[ARG_plan].u_obj, args[ARG_preallocated].u_obj,
        tflm_stage_arg(args, ARG_stage), &build);
    // The conversions may have run Python code (an index's __int__): the
    // buffers are read where they are now, from here on no Python runs.
    tflm_build_args_check(model, &build);
    mp_obj_t arena_in = args[ARG_arena].u_obj;

    tflm_arena_obj_t *arena;
    if (mp_obj_is_type(arena_in, &tflm_arena_type)) {
        arena = MP_OBJ_TO_PTR(arena_in);
        arena_check(arena);
    } else if (arena_in == mp_const_none) {
        tflm_interp_t measured;
        measure(&model->model, &build.cfg, &measured);
        arena = arena_new_bytes(tflm_interp_needed_bytes(&measured));
    } else if (mp_obj_is_int(arena_in)) {
        arena = arena_new_size(mp_obj_get_int(arena_in));
    } else {
        arena = arena_new_buffer(arena_in, true);
    }
    arena_check_alone(arena);
    for (size_t k = 0; k < build.cfg.n_external; ++k) {
        external_check_alone(&build.external[k], arena);
    }

    // With a finaliser: a collected interpreter gives its tail back to a shared arena.
    tflm_interp_obj_t *self = mp_obj_malloc_with_finaliser(tflm_interp_obj_t, type);
    self->model = MP_OBJ_FROM_PTR(model);
    self->arena = arena;
    self->ip.ready = false;
    for (size_t k = 0; k < TFLM_MAX_EXTERNAL; ++k) {
        self->external[k] = MP_OBJ_NULL;
    }
    self->predicted = MP_OBJ_NULL;
    self->predicted_raw = MP_OBJ_NULL;
    // The last allocation before the tail is listed: from here to
    // arena_add_tail no collection runs, so no finaliser changes the arena
    // (the collection below runs before this one is built in it).
    arena_reserve_tail(arena);
    bool built = build_in(self, &build.cfg);
    if (!built && self->ip.err.status == TFLM_ERR_MEMORY && (arena->arena.users > 0 || self->ip.err.given == 0)) {
        // Interpreters in this arena that are garbage but not yet collected
        // may hold the memory this one needs, and garbage the heap the
        // planners' records need (plan_memory collects nothing; its error
        // names no arena size): collect them, try once more.
        gc_collect();
        built = build_in(self, &build.cfg);
    }
    if (!built) {
        if (self->ip.err.status == TFLM_ERR_MEMORY) {
            raise_arena_too_small(self, &build.cfg);
        }
        tflm_raise_for(&model->model, &self->ip.err);
    }
    arena_add_tail(arena, &self->ip);
    for (size_t k = 0; k < build.cfg.n_external; ++k) {
        keep_external(self, &build.external[k], build.external_obj[k]);
    }
    live_add(self);
    return MP_OBJ_FROM_PTR(self);
}

// __del__, run by the collector: the tail goes back to the arena. Called by
// hand it does the same, and the interpreter refuses every method after it
// (its tail may hold another interpreter's records by then).
static mp_obj_t interp_del(mp_obj_t self_in) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (self->ip.ready) {
        live_remove(self);
        arena_release_tail(self->arena, &self->ip);
        self->ip.ready = false;
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_del_obj, interp_del);

void tflm_c_stack_check(void) {
    #if MICROPY_STACK_CHECK && TFLM_C_STACK_NEEDED && !TFLM_NATMOD
    // Nothing checks the stack below the VM: a native call deeper than what
    // is left would write over the memory under it.
    mp_uint_t used = mp_cstack_usage(), limit = MP_STATE_THREAD(stack_limit);
    if (used + TFLM_C_STACK_NEEDED > limit) {
        mp_raise_msg_varg(&mp_type_RuntimeError,
            MP_ERROR_TEXT("not enough C stack: tflm needs %u bytes, %u are left (call it less deeply)"),
            (unsigned)TFLM_C_STACK_NEEDED, (unsigned)(used < limit ? limit - used : 0));
    }
    #endif
}

void tflm_interp_live(tflm_interp_obj_t *self) {
    if (!self->ip.ready) {
        mp_raise_ValueError(MP_ERROR_TEXT("interpreter was released (its __del__ ran): build a new one"));
    }
}

void tflm_interp_check(tflm_interp_obj_t *self) {
    tflm_interp_check_buffers(self);
    if (tflm_interp_verify(&self->ip) != TFLM_OK) {
        tflm_raise(&self->ip.err);
    }
}

void tflm_interp_check_moved(tflm_interp_obj_t *self) {
    tflm_interp_live(self);
    arena_check(self->arena);
    tflm_model_check_buffer(MP_OBJ_TO_PTR(self->model));
    // Pre-allocated tensors' buffers must still be where they were.
    for (uint32_t k = 0; k < self->ip.n_external; ++k) {
        mp_buffer_info_t bufinfo;
        if (self->external[k] == MP_OBJ_NULL || !mp_get_buffer(self->external[k], &bufinfo, MP_BUFFER_RW)
            || bufinfo.buf != self->ip.external[k]) {
            mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("a pre-allocated tensor's buffer was resized or moved"));
        }
    }
}

char tflm_typecode(uint8_t type) {
    switch (type) {
        case TFLM_FLOAT32:
            return 'f';
        case TFLM_FLOAT64:
            return 'd';
        case TFLM_INT8:
            return 'b';
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
        default: // uint8, bool, and types kept as raw bytes
            return 'B';
    }
}

// A typed memoryview of a tensor's bytes. Its items pointer is the start of
// the heap block the bytes are in (the arena's, the model's, a pre-allocated
// tensor's buffer), with the tensor at an offset, so the view keeps that
// block alive however the buffer was given (a slice of a bytearray too), and
// so do slices of the view. Views of constant tensors are read-only.
mp_obj_t tflm_tensor_view(tflm_interp_obj_t *self, uint32_t rec) {
    const tflm_tensor_rec_t *r = tflm_interp_tensor(&self->ip, rec);
    uint32_t index = tflm_interp_tensor_of(&self->ip, rec);
    if (r->where == TFLM_AT_NONE && r->bytes > 0) {
        // A map inside a patch-based stage: it never exists whole, anywhere.
        mp_raise_msg_varg(&mp_type_ValueError,
            MP_ERROR_TEXT("tensor %u is never whole in the arena: the patch-based first stage computes it patch by "
                "patch"), (unsigned)index);
    }
    if (r->where == TFLM_AT_KEPT) {
        // Its bytes are a kernel's compact form (SVDF's ring), not its shape.
        mp_raise_msg_varg(&mp_type_ValueError,
            MP_ERROR_TEXT("tensor %u is state its operator keeps in a compact form of its own, not in its declared "
                "shape"), (unsigned)index);
    }
    uint8_t *data = tflm_interp_tensor_data(&self->ip, r);
    char typecode = tflm_typecode(r->type);
    size_t item = mp_binary_get_size('@', typecode, NULL);
    bool writable = r->where == TFLM_AT_HEAD || tflm_at_tail(r->where) || r->where == TFLM_AT_EXTERNAL;
    const uint8_t *anchor = r->where == TFLM_AT_MODEL ? ((tflm_model_obj_t *)MP_OBJ_TO_PTR(self->model))->anchor
        : r->where == TFLM_AT_EXTERNAL ? self->external_anchor[r->data] : self->arena->anchor;
    size_t offset = (size_t)((uintptr_t)data - (uintptr_t)anchor);
    mp_obj_array_t *view;
    const bool anchored = offset % item == 0 && offset / item < ((size_t)1 << MP_OBJ_ARRAY_FREE_SIZE_BITS);
    if (!TFLM_NATMOD && anchored) {
        view = mp_obj_malloc(mp_obj_array_t, &mp_type_memoryview);
    } else {
        // The view also holds the interpreter (so its arena and model) in a
        // word of its own after the memoryview (the collector scans all of
        // an object's words): a native module does not know where heap
        // blocks start, so its anchors are the buffers' starts (a block's,
        // but for a buffer given as a slice), which slices of the view still
        // point at; and 8-byte constants that the model aligns to 4 only
        // cannot be reached from an anchor in whole items, so the view
        // points at them.
        view = m_malloc(sizeof(mp_obj_array_t) + sizeof(mp_obj_t));
        view->base.type = &mp_type_memoryview;
        ((mp_obj_t *)(view + 1))[0] = MP_OBJ_FROM_PTR(self);
        if (!anchored) {
            anchor = data;
            offset = 0;
        }
    }
    mp_obj_memoryview_init(view, typecode | (writable ? MP_OBJ_ARRAY_TYPECODE_FLAG_RW : 0),
        offset / item, r->bytes / item, (void *)anchor);
    return MP_OBJ_FROM_PTR(view);
}

// Input or output i's record (i converted, the interpreter checked since).
static uint32_t io_index(tflm_interp_obj_t *self, mp_int_t i, bool output) {
    uint32_t n = output ? tflm_interp_num_outputs(&self->ip) : tflm_interp_num_inputs(&self->ip);
    if (i < 0 || (mp_uint_t)i >= n) {
        mp_raise_msg_varg(&mp_type_IndexError, MP_ERROR_TEXT("model has %u %s"), (unsigned)n,
            output ? "outputs" : "inputs");
    }
    return output ? tflm_interp_output(&self->ip, (uint32_t)i) : tflm_interp_input(&self->ip, (uint32_t)i);
}

static mp_obj_t interp_input(size_t n_args, const mp_obj_t *args) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(args[0]);
    mp_int_t i = n_args > 1 ? mp_obj_get_int(args[1]) : 0;
    tflm_interp_check(self);
    return tflm_tensor_view(self, io_index(self, i, false));
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(interp_input_obj, 1, 2, interp_input);

static mp_obj_t interp_output(size_t n_args, const mp_obj_t *args) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(args[0]);
    mp_int_t i = n_args > 1 ? mp_obj_get_int(args[1]) : 0;
    tflm_interp_check(self);
    return tflm_tensor_view(self, io_index(self, i, true));
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(interp_output_obj, 1, 2, interp_output);

// tensor(i): any tensor of the main subgraph. With the linear planner every
// intermediate result is still there after invoke(); with the greedy one,
// tensors share memory and only inputs' and outputs' bytes are meaningful.
static mp_obj_t interp_tensor(mp_obj_t self_in, mp_obj_t i_in) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    mp_int_t i = mp_obj_get_int(i_in);
    tflm_interp_check(self);
    const tflm_subgraph_rec_t *sg = tflm_interp_subgraph(&self->ip, 0);
    if (i < 0 || i >= sg->n_tensors) {
        mp_raise_msg_varg(&mp_type_IndexError, MP_ERROR_TEXT("model has %u tensors"), (unsigned)sg->n_tensors);
    }
    return tflm_tensor_view(self, tflm_interp_rec_of(&self->ip, sg->tensor_base + (uint32_t)i));
}
static MP_DEFINE_CONST_FUN_OBJ_2(interp_tensor_obj, interp_tensor);

// set_input(i, data, offset=0): copies raw bytes into input i: untyped
// bytes, or items of the input's type (tflm_input_kind). Without an offset
// they fill the input exactly; with one, a part of it.
static mp_obj_t interp_set_input(size_t n_args, const mp_obj_t *args) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(args[0]);
    mp_int_t i = mp_obj_get_int(args[1]);
    mp_int_t offset = n_args > 3 ? mp_obj_get_int(args[3]) : 0;
    tflm_interp_check(self);
    uint32_t rec = io_index(self, i, false);
    mp_buffer_info_t bufinfo;
    if (mp_obj_is_str(args[2]) || !mp_get_buffer(args[2], &bufinfo, MP_BUFFER_READ)) {
        tflm_input_refuse(self, (uint32_t)i, args[2], false);
    }
    tflm_input_kind(self, (uint32_t)i, args[2], &bufinfo, false);
    const tflm_tensor_rec_t *r = tflm_interp_tensor(&self->ip, rec);
    if (n_args <= 3 && bufinfo.len != r->bytes) {
        tflm_input_raise_length(self, (uint32_t)i, bufinfo.len);
    }
    if (offset < 0 || (mp_uint_t)offset > r->bytes || bufinfo.len > r->bytes - (size_t)offset) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%u bytes at offset %ld do not fit input %u's %u bytes"),
            (unsigned)bufinfo.len, (long)offset, (unsigned)i, (unsigned)r->bytes);
    }
    // The data may be a view of the arena itself.
    memmove((uint8_t *)tflm_interp_tensor_data(&self->ip, r) + offset, bufinfo.buf, bufinfo.len);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(interp_set_input_obj, 3, 4, interp_set_input);

// An exception pending (Ctrl-C sets a KeyboardInterrupt from the serial or
// signal handler) stops the invoke between two operators: the engine reads
// the word itself (tflm_interp_t.interrupt_word: a call at every operator
// cost about 20 cycles each on the Cortex-M4).
// (A native module cannot see it: it runs each invoke to its end.)
static bool interp_pending(void) {
    #if TFLM_NATMOD
    return false;
    #else
    return MP_STATE_THREAD(mp_pending_exception) != MP_OBJ_NULL;
    #endif
}

tflm_status_t tflm_interp_obj_run(tflm_interp_obj_t *self, bool verify) {
    #if !TFLM_NATMOD
    _Static_assert(sizeof(mp_obj_t) == sizeof(void *), "the engine reads the word as a pointer");
    // (The running thread's: each thread has its own.)
    self->ip.interrupt_word = (void *const volatile *)&MP_STATE_THREAD(mp_pending_exception);
    #endif
    tflm_status_t st = verify ? tflm_interp_invoke(&self->ip) : tflm_interp_run(&self->ip);
    if (st != TFLM_OK && interp_pending()) {
        // Stopped for it (or failed meanwhile): the pending exception is
        // raised now rather than at the next bytecode.
        mp_handle_pending(true);
    }
    return st;
}

// Runs the model. Allocates nothing on the heap (unless it raises).
static mp_obj_t interp_invoke(mp_obj_t self_in) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    tflm_interp_check_buffers(self);
    tflm_c_stack_check();
    // The engine checks the seal: the records are the build's.
    if (tflm_interp_obj_run(self, true) != TFLM_OK) {
        tflm_raise(&self->ip.err);
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_invoke_obj, interp_invoke);

// reset(): the state the model carries between invokes (variable tensors,
// resource variables, the streaming kernels' buffers...) back to where TFLM's
// reset() puts it. Allocates nothing.
static mp_obj_t interp_reset(mp_obj_t self_in) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    tflm_interp_check_moved(self);
    // The engine checks the seal before it follows the records.
    if (tflm_interp_reset(&self->ip) != TFLM_OK) {
        tflm_raise(&self->ip.err);
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_reset_obj, interp_reset);

// Bytes this interpreter takes from its arena: its head plus its tail.
static mp_obj_t interp_arena_used_bytes(mp_obj_t self_in) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    tflm_interp_live(self);
    return mp_obj_new_int_from_uint(tflm_interp_used_bytes(&self->ip));
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_arena_used_bytes_obj, interp_arena_used_bytes);

static mp_obj_t interp_head_bytes(mp_obj_t self_in) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    tflm_interp_live(self);
    return mp_obj_new_int_from_uint(self->ip.head_bytes);
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_head_bytes_obj, interp_head_bytes);

static mp_obj_t interp_tail_bytes(mp_obj_t self_in) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    tflm_interp_live(self);
    return mp_obj_new_int_from_uint(self->ip.tail_bytes);
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_tail_bytes_obj, interp_tail_bytes);

// allocations(): {category: {'used': bytes, 'requested': bytes, 'count': n}};
// the used bytes add up to arena_used_bytes().
static mp_obj_t interp_allocations(mp_obj_t self_in) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    tflm_interp_live(self);
    mp_obj_t result = mp_obj_new_dict(TFLM_AUDIT_COUNT);
    for (int k = 0; k < TFLM_AUDIT_COUNT; ++k) {
        const tflm_audit_t *a = &self->ip.audit[k];
        mp_obj_t entry = mp_obj_new_dict(3);
        mp_obj_dict_store(entry, MP_OBJ_NEW_QSTR(MP_QSTR_used), mp_obj_new_int_from_uint(a->used));
        mp_obj_dict_store(entry, MP_OBJ_NEW_QSTR(MP_QSTR_requested), mp_obj_new_int_from_uint(a->requested));
        mp_obj_dict_store(entry, MP_OBJ_NEW_QSTR(MP_QSTR_count), mp_obj_new_int_from_uint(a->count));
        mp_obj_dict_store(result, mp_obj_new_str_from_cstr(tflm_audit_names[k]), entry);
    }
    return result;
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_allocations_obj, interp_allocations);

// print_allocations(): the audit as text, in the style of TFLM's recording allocator.
static mp_obj_t interp_print_allocations(mp_obj_t self_in) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    tflm_interp_live(self);
    const tflm_interp_t *ip = &self->ip;
    mp_printf(&mp_plat_print, "[tflm] arena allocation total %u bytes\n", (unsigned)tflm_interp_used_bytes(ip));
    mp_printf(&mp_plat_print, "[tflm] arena allocation head %u bytes\n", (unsigned)ip->head_bytes);
    mp_printf(&mp_plat_print, "[tflm] arena allocation tail %u bytes\n", (unsigned)ip->tail_bytes);
    // Each category: the arena bytes it takes, then what its allocations
    // asked for (the head's buffers share bytes when not alive together).
    for (int k = 0; k < TFLM_AUDIT_COUNT; ++k) {
        const tflm_audit_t *a = &ip->audit[k];
        mp_printf(&mp_plat_print, "[tflm] '%s' takes %u bytes", tflm_audit_names[k], (unsigned)a->used);
        if (k == TFLM_AUDIT_HEAD) {
            mp_printf(&mp_plat_print, " for %u buffers of %u bytes in all (buffers not alive together share bytes)\n",
                (unsigned)a->count, (unsigned)a->requested);
        } else if (k == TFLM_AUDIT_ALIGNMENT) {
            mp_print_str(&mp_plat_print, " (padding to the tail's 16-byte alignment)\n");
        } else {
            mp_printf(&mp_plat_print, " for %u allocation%s of %u bytes in all", (unsigned)a->count,
                a->count == 1 ? "" : "s", (unsigned)a->requested);
            if (a->used > a->requested) {
                mp_printf(&mp_plat_print, " (%u of alignment)", (unsigned)(a->used - a->requested));
            }
            mp_print_str(&mp_plat_print, "\n");
        }
    }
    if (ip->model_data_count) {
        // A prepared model's kernel data, read in place: flash when the model
        // is in ROMFS, the model's own RAM otherwise; never the arena.
        mp_printf(&mp_plat_print, "[tflm] 'kernel data in the model' %u bytes in %s, not in the arena (for %u operators)\n",
            (unsigned)ip->model_data_bytes, tflm_in_heap(ip->model->fb.buf) ? "the model's RAM" : "flash",
            (unsigned)ip->model_data_count);
    }
    if (ip->model_lists_bytes) {
        mp_printf(&mp_plat_print, "[tflm] 'index lists in the model' %u bytes, not in the arena\n",
            (unsigned)ip->model_lists_bytes);
    }
    if (ip->model_records_bytes) {
        mp_printf(&mp_plat_print, "[tflm] 'tensor records in the model' %u bytes, not in the arena (for %u constant tensors)\n",
            (unsigned)ip->model_records_bytes, (unsigned)ip->n_const);
    }
    if (ip->model_nodes_bytes) {
        mp_printf(&mp_plat_print, "[tflm] 'node records in the model' %u bytes, not in the arena (for %u subgraphs "
            "and operators)\n", (unsigned)ip->model_nodes_bytes, (unsigned)(ip->n_subgraphs + ip->n_nodes));
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_print_allocations_obj, interp_print_allocations);

// set_tensor_buffer(index, buffer): tensor `index` of the main subgraph lives
// in `buffer` from now on (a camera frame, a DMA buffer, another RAM bank);
// the head is planned again without it. Get input()/output() views again
// afterwards: other tensors may move.
static mp_obj_t interp_set_tensor_buffer(mp_obj_t self_in, mp_obj_t index_in, mp_obj_t buffer) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    tflm_interp_live(self);
    tflm_c_stack_check();
    tflm_external_t ext;
    mp_obj_t keep;
    tflm_external_arg(MP_OBJ_TO_PTR(self->model), index_in, buffer, &ext, &keep); // may run Python: __int__
    tflm_interp_check(self);
    external_check_alone(&ext, self->arena);
    // The planners' records: the arena keeps no lifetimes, and has no room to spare.
    size_t n = self->ip.n_tensors;
    tflm_plan_rec_t *work = m_new(tflm_plan_rec_t, n);
    tflm_status_t st = tflm_interp_set_external(&self->ip, &ext, work);
    m_del(tflm_plan_rec_t, work, n);
    if (st != TFLM_OK) {
        tflm_raise(&self->ip.err);
    }
    keep_external(self, &ext, keep);
    arena_set_head(self->arena, &self->ip);
    self->predicted_raw = MP_OBJ_NULL; // the outputs' views may point elsewhere now
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_3(interp_set_tensor_buffer_obj, interp_set_tensor_buffer);

// The planners' records with their lifetimes, walked again on the heap (the
// arena keeps none): a diagnostic's, left to the collector.
static tflm_plan_rec_t *plan_records(tflm_interp_obj_t *self) {
    tflm_plan_rec_t *recs = m_new(tflm_plan_rec_t, self->ip.n_tensors);
    if (tflm_interp_plan_records(&self->ip, recs) != TFLM_OK) {
        tflm_raise(&self->ip.err); // the collector takes recs back
    }
    return recs;
}

// buffers(): the head's plan as a list of (kind, index, offset, bytes, first,
// last): kind 'tensor' (index: tensor of all subgraphs in order) or 'scratch'
// (index: scratch buffer in request order), first/last: allocation scopes.
static mp_obj_t interp_buffers(mp_obj_t self_in) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    tflm_interp_check(self);
    tflm_interp_t *ip = &self->ip;
    tflm_plan_rec_t *recs = plan_records(self);
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (uint32_t i = 0; i < ip->n_tensors; ++i) {
        const tflm_plan_rec_t *r = &recs[i];
        if (r->where != TFLM_AT_HEAD) {
            continue;
        }
        bool scratch = i >= ip->map.n_live;
        mp_obj_t items[6] = {
            MP_OBJ_NEW_QSTR(scratch ? MP_QSTR_scratch : MP_QSTR_tensor),
            MP_OBJ_NEW_SMALL_INT(scratch ? i - ip->map.n_live : tflm_interp_tensor_of(ip, i)),
            mp_obj_new_int_from_uint(r->data),
            mp_obj_new_int_from_uint(r->bytes),
            MP_OBJ_NEW_SMALL_INT(r->first),
            MP_OBJ_NEW_SMALL_INT(r->last),
        };
        mp_obj_list_append(list, mp_obj_new_tuple(6, items));
    }
    return list; // recs: garbage for the collector
}
static MP_DEFINE_CONST_FUN_OBJ_1(interp_buffers_obj, interp_buffers);

static void plan_line(void *ctx, const char *text, size_t len) {
    vstr_t *vstr = ctx;
    vstr_add_strn(vstr, text, len);
    vstr_add_char(vstr, '\n');
}

// memory_plan(width=80): the head's plan as text, a line per allocation scope.
static mp_obj_t interp_memory_plan(size_t n_args, const mp_obj_t *args) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(args[0]);
    mp_int_t width = n_args > 1 ? mp_obj_get_int(args[1]) : 80;
    tflm_interp_check(self);
    if (width < 8 || width > TFLM_PLAN_MAX_WIDTH) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("width must be 8 to %d"), TFLM_PLAN_MAX_WIDTH);
    }
    vstr_t vstr;
    vstr_init(&vstr, 128);
    tflm_plan_rec_t *recs = plan_records(self);
    tflm_interp_memory_plan(&self->ip, recs, (uint32_t)width, plan_line, &vstr);
    return mp_obj_new_str_from_vstr(&vstr);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(interp_memory_plan_obj, 1, 2, interp_memory_plan);

static void interp_attr(mp_obj_t self_in, qstr attr, mp_obj_t *dest) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (dest[0] != MP_OBJ_NULL) {
        return;
    }
    // The methods called in loops, answered here rather than after a search
    // of the type's table and its check of what binds (about 130 cycles of
    // a call on the Cortex-M4).
    if (attr == MP_QSTR_invoke || attr == MP_QSTR_predict) {
        dest[0] = attr == MP_QSTR_invoke ? MP_OBJ_FROM_PTR(&interp_invoke_obj)
            : MP_OBJ_FROM_PTR(&tflm_interp_predict_obj);
        dest[1] = self_in;
    } else if (attr == MP_QSTR_model) {
        dest[0] = self->model;
    } else if (attr == MP_QSTR_arena) {
        dest[0] = MP_OBJ_FROM_PTR(self->arena);
    } else if (attr == MP_QSTR_planner) {
        dest[0] = mp_obj_new_str_from_cstr(self->ip.planner->name);
    #if TFLM_STAGE_ARG
    } else if (attr == MP_QSTR_stage) {
        dest[0] = tflm_stage_obj(&self->ip.patch);
    #endif
    } else {
        dest[1] = MP_OBJ_SENTINEL;
    }
}

// repr: the planner, what the interpreter takes from its arena, and whether
// it reads a prepared model's data (tflm-host prepare) in place.
static void interp_print(const mp_print_t *print, mp_obj_t self_in, mp_print_kind_t kind) {
    tflm_interp_obj_t *self = MP_OBJ_TO_PTR(self_in);
    const tflm_interp_t *ip = &self->ip;
    if (!ip->ready) {
        mp_print_str(print, "Interpreter(released)");
        return;
    }
    bool prepared = ip->model_data_count != 0 || ip->lists_in_model || ip->model_records_bytes != 0;
    mp_printf(print, "Interpreter(planner='%s', used=%u, head=%u, tail=%u, arena_size=%u, prepared_model=%s)",
        ip->planner ? ip->planner->name : "none", (unsigned)tflm_interp_used_bytes(ip), (unsigned)ip->head_bytes,
        (unsigned)ip->tail_bytes, (unsigned)self->arena->arena.size, prepared ? "True" : "False");
}

// Attributes (answered by interp_attr), for help() and dir() of the class.
TFLM_ATTR_DOC(model, "tflm.Model (model.inputs[i] describes input(i))");
TFLM_ATTR_DOC(arena, "tflm.Arena");
TFLM_ATTR_DOC(planner, "str: 'greedy', 'linear', 'tflm', 'offline'");
#if TFLM_STAGE_ARG
TFLM_ATTR_DOC(stage, "the patch-based stage, as stage= takes it; (): none");
#endif

static const mp_rom_map_elem_t interp_locals_table[] = {
    TFLM_ATTR_ENTRY(model),
    TFLM_ATTR_ENTRY(arena),
    TFLM_ATTR_ENTRY(planner),
    #if TFLM_STAGE_ARG
    TFLM_ATTR_ENTRY(stage),
    #endif
    { MP_ROM_QSTR(MP_QSTR___del__), MP_ROM_PTR(&interp_del_obj) },
    { MP_ROM_QSTR(MP_QSTR_input), MP_ROM_PTR(&interp_input_obj) },
    { MP_ROM_QSTR(MP_QSTR_output), MP_ROM_PTR(&interp_output_obj) },
    { MP_ROM_QSTR(MP_QSTR_tensor), MP_ROM_PTR(&interp_tensor_obj) },
    { MP_ROM_QSTR(MP_QSTR_set_input), MP_ROM_PTR(&interp_set_input_obj) },
    { MP_ROM_QSTR(MP_QSTR_invoke), MP_ROM_PTR(&interp_invoke_obj) },
    { MP_ROM_QSTR(MP_QSTR_reset), MP_ROM_PTR(&interp_reset_obj) },
    { MP_ROM_QSTR(MP_QSTR_predict), MP_ROM_PTR(&tflm_interp_predict_obj) },
    { MP_ROM_QSTR(MP_QSTR_arena_used_bytes), MP_ROM_PTR(&interp_arena_used_bytes_obj) },
    { MP_ROM_QSTR(MP_QSTR_head_bytes), MP_ROM_PTR(&interp_head_bytes_obj) },
    { MP_ROM_QSTR(MP_QSTR_tail_bytes), MP_ROM_PTR(&interp_tail_bytes_obj) },
    { MP_ROM_QSTR(MP_QSTR_allocations), MP_ROM_PTR(&interp_allocations_obj) },
    { MP_ROM_QSTR(MP_QSTR_print_allocations), MP_ROM_PTR(&interp_print_allocations_obj) },
    { MP_ROM_QSTR(MP_QSTR_memory_plan), MP_ROM_PTR(&interp_memory_plan_obj) },
    { MP_ROM_QSTR(MP_QSTR_buffers), MP_ROM_PTR(&interp_buffers_obj) },
    { MP_ROM_QSTR(MP_QSTR_set_tensor_buffer), MP_ROM_PTR(&interp_set_tensor_buffer_obj) },
};
static MP_DEFINE_CONST_DICT(interp_locals, interp_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(
    tflm_interp_type,
    MP_QSTR_Interpreter,
    MP_TYPE_FLAG_NONE,
    make_new, interp_make_new,
    print, interp_print,
    call, tflm_interp_call,
    attr, interp_attr,
    locals_dict, &interp_locals
    );
