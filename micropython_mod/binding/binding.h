// Shared parts of the tflm MicroPython binding (one file per area:
// model.c, interpreter.c, modtflm.c).
#ifndef TFLM_BINDING_BINDING_H
#define TFLM_BINDING_BINDING_H

#include "py/obj.h"
#include "py/objstr.h"
#include "py/runtime.h"

#include "engine/interpreter.h"

// TFLM_NATMOD=1: built as a dynamic native module (tflm.mpy): natmod.h maps
// the API onto mp_fun_table and says what that build does without.
#ifndef TFLM_NATMOD
#define TFLM_NATMOD 0
#endif
#if TFLM_NATMOD
#include "binding/natmod.h"
#endif

// Tables of mp_arg_t: in flash for the built-in module, on the stack in the
// native module (its qstrs are numbered when it is loaded).
#ifndef TFLM_ARG_TABLE
#define TFLM_ARG_TABLE static const
#endif

typedef struct _tflm_model_obj_t {
    mp_obj_base_t base;
    mp_obj_t buffer;        // keeps the bytes alive
    const uint8_t *anchor;  // tflm_buffer_anchor() of the bytes, for views into them
    mp_obj_t labels;        // tuple of str from the .labels file beside a loaded model, or None
    bool fixed;             // buffer is a bytes or memoryview object: its pointer cannot change
    tflm_model_t model;
} tflm_model_obj_t;

// MicroPython's collector keeps a heap block alive only through pointers to
// its start. A buffer given as a slice (memoryview(ba)[1:]) starts inside
// its block, so views of tensors must point at the block's start and reach
// their bytes by an offset. Returns that start for a pointer into the heap,
// the pointer itself for memory outside it (flash, static data); ValueError
// for a heap pointer in no allocated block.
const uint8_t *tflm_buffer_anchor(const void *p, size_t len);
// Whether buffer object obj gives `len` bytes at `buf` (mp_get_buffer() with
// `flags`, raising as it does when it gives none): the checks that the
// buffers an interpreter uses were not moved or resized.
bool tflm_buffer_is(mp_obj_t obj, const void *buf, size_t len, mp_uint_t flags);
// True when p is in MicroPython's heap.
bool tflm_in_heap(const void *p);

extern const mp_obj_type_t tflm_model_type;
extern const mp_obj_type_t tflm_tensor_info_type;
extern const mp_obj_type_t tflm_arena_type;
extern const mp_obj_type_t tflm_interp_type;
MP_DECLARE_CONST_FUN_OBJ_KW(tflm_arena_size_obj);
MP_DECLARE_CONST_FUN_OBJ_KW(tflm_load_obj);
// The module's globals (modtflm.c), which the native module copies in.
extern const mp_obj_dict_t tflm_module_globals;

// An attribute's entry in a type's locals dict, for help() and dir() of the
// class (instances answer the attribute through the type's attr slot
// first): its name and a str saying what it holds, in flash.
#define TFLM_ATTR_DOC(name, text) \
    static const mp_obj_str_t tflm_doc_##name = {{&mp_type_str}, 0, sizeof(text) - 1, (const byte *)text}
#define TFLM_ATTR_ENTRY(name) { MP_ROM_QSTR(MP_QSTR_##name), MP_ROM_PTR(&tflm_doc_##name) }

// Raises the exception an engine error stands for.
NORETURN void tflm_raise(const tflm_error_t *err);
// As tflm_raise, but a NotImplementedError names every op the model needs
// and this build lacks (the engine's own message is bounded).
NORETURN void tflm_raise_for(tflm_model_t *model, const tflm_error_t *err);

// Interpreter() and arena_size() arguments besides the model (plan.c).
typedef struct {
    tflm_config_t cfg;
    tflm_plan_t plan;
    tflm_external_t external[TFLM_MAX_EXTERNAL];
    mp_obj_t external_obj[TFLM_MAX_EXTERNAL]; // the buffers given for them
    mp_obj_t plan_obj;                        // keeps the plan's bytes alive
    const void *plan_buf;                     // where they were read
    size_t plan_len;
    tflm_schedule_t stage;                    // cfg.stage's, when given
} tflm_build_args_t;

void tflm_build_args(tflm_model_obj_t *model, mp_obj_t planner, mp_obj_t plan, mp_obj_t preallocated,
    mp_obj_t stage, tflm_build_args_t *out);
// Interpreter()'s and arena_size()'s stage= and interp.stage: in the
// firmware's module, not in tflm.mpy, whose code takes heap (a stock Pico's
// holds kws_ref_model beside the core build only without them).
#ifndef TFLM_STAGE_ARG
#define TFLM_STAGE_ARG (!TFLM_NATMOD)
#endif
// stage='s value among the parsed arguments (at `at`, the last), None
// where the module has no stage=.
static inline mp_obj_t tflm_stage_arg(const mp_arg_val_t *args, size_t at) {
    #if TFLM_STAGE_ARG
    return args[at].u_obj;
    #else
    (void)args, (void)at;
    return mp_const_none;
    #endif
}
// An interpreter's patch-based stage as stage= takes it ((): none).
mp_obj_t tflm_stage_obj(const tflm_patch_t *pt);
// After the arguments' conversions (which may run Python code: __int__ of
// an index or an offset): the model's and the pre-allocated buffers must
// still be where they were read.
void tflm_build_args_check(tflm_model_obj_t *model, const tflm_build_args_t *args);
// One pre-allocated tensor: index and buffer, checked against the model.
void tflm_external_arg(tflm_model_obj_t *model, mp_obj_t index, mp_obj_t buffer, tflm_external_t *ext, mp_obj_t *keep);

#ifdef TFLM_BUILTIN_PLAN_HEADER
extern const mp_obj_str_t tflm_builtin_plan_obj;
#endif

// The tflm.Model in obj, checked to still have its bytes where it read them.
tflm_model_obj_t *tflm_get_model(mp_obj_t obj);
void tflm_model_check_buffer(tflm_model_obj_t *self);

// tflm.Arena (interpreter.c).
// The arena's tail, from its top down: the tails of the interpreters built
// in it, and gaps that interpreters which are gone left between them.
// Gaps at the bottom go back to the arena at once; the others take the
// tails of new interpreters that fit them.
typedef struct {
    uint32_t bytes;
    uint32_t head;  // the interpreter's plan (the arena's head is the largest)
    bool alive;     // false: a gap
} tflm_tail_t;

typedef struct _tflm_arena_obj_t {
    mp_obj_base_t base;
    mp_obj_t buffer;        // the object holding the bytes
    uint8_t *buf;           // its bytes when given (checked before each invoke)
    size_t len;
    const uint8_t *anchor;  // tflm_buffer_anchor() of buf, for views into the arena
    tflm_tail_t *tails;     // the tail's parts, from the top down
    size_t n_tails;
    size_t tails_alloc;
    tflm_arena_t arena;
} tflm_arena_obj_t;


// tflm.Interpreter (interpreter.c; predict() in predict.c).
typedef struct _tflm_interp_obj_t {
    mp_obj_base_t base;
    mp_obj_t model;          // tflm.Model
    tflm_arena_obj_t *arena; // tflm.Arena, possibly shared
    mp_obj_t external[TFLM_MAX_EXTERNAL]; // buffers of pre-allocated tensors, by slot
    const uint8_t *external_anchor[TFLM_MAX_EXTERNAL]; // tflm_buffer_anchor() of each
    mp_obj_t predicted;      // predict()'s floats: array('f') per output (a tuple of them for several), reused
    mp_obj_t predicted_raw;  // predict(raw=True): the outputs' views (a tuple for several), reused
    // The next live interpreter (interpreter.c: the list of built ones),
    // with bit 0 set: not a pointer to the collector.
    uintptr_t next_live;
    tflm_interp_t ip;
} tflm_interp_obj_t;

// ValueError once the interpreter was released (its __del__ ran, called by
// the collector or by hand): every method refuses it.
void tflm_interp_live(tflm_interp_obj_t *self);
// The interpreter's buffers (arena, model, pre-allocated tensors) must still
// be where they were, and its records in the arena as its build wrote them
// (the engine's seal): before anything follows them. Call it after every
// conversion of a Python argument, which may run Python code.
void tflm_interp_check(tflm_interp_obj_t *self);
// The buffers only (the engine checks the seal itself in invoke()):
// tflm_interp_check_moved() checks each; tflm_interp_check_buffers() first
// tests for the usual case, inline (for invoke() and the methods'
// tflm_interp_check(): without the calls, about 40 cycles less an invoke
// on the Cortex-M4): a live interpreter in an arena and on a
// model whose bytes cannot have moved, without pre-allocated tensors.
void tflm_interp_check_moved(tflm_interp_obj_t *self);
static inline void tflm_interp_check_buffers(tflm_interp_obj_t *self) {
    const tflm_model_obj_t *model = MP_OBJ_TO_PTR(self->model);
    if (!self->ip.ready || self->arena->arena.exposed || !model->fixed || self->ip.n_external != 0) {
        tflm_interp_check_moved(self);
    }
}
// RuntimeError unless the C stack left holds what building or running an
// interpreter takes (TFLM_C_STACK_NEEDED, kernels/arch.h).
void tflm_c_stack_check(void);
// A typed memoryview of record `rec`'s tensor (tflm_interp_rec_of) that keeps its memory alive.
mp_obj_t tflm_tensor_view(tflm_interp_obj_t *self, uint32_t rec);
// The array typecode of a tensor type ('b' int8, 'f' float32, ...).
char tflm_typecode(uint8_t type);
// How a buffer given for input i is taken (predict.c): its bytes as they
// are (untyped bytes, or items of the tensor's type), or real values to
// quantize (floats, when `reals`: predict()); anything else is a TypeError
// saying what to pass.
typedef enum { TFLM_INPUT_RAW, TFLM_INPUT_REAL } tflm_input_kind_t;
tflm_input_kind_t tflm_input_kind(tflm_interp_obj_t *self, uint32_t i, mp_obj_t x, const mp_buffer_info_t *b, bool reals);
// bytes, bytearray, memoryviews of them, files: no item type of their own.
bool tflm_untyped_bytes(mp_obj_t x, const mp_buffer_info_t *b);
NORETURN void tflm_input_refuse(tflm_interp_obj_t *self, uint32_t i, mp_obj_t x, bool reals);
// ValueError: input i's type, shape and bytes against the `got` given.
NORETURN void tflm_input_raise_length(tflm_interp_obj_t *self, uint32_t i, size_t got);
// Runs the interpreter (tflm_interp_invoke, or tflm_interp_run when the
// caller verified it), stopping between operators when an exception is
// pending (Ctrl-C) and raising it then.
tflm_status_t tflm_interp_obj_run(tflm_interp_obj_t *self, bool verify);
MP_DECLARE_CONST_FUN_OBJ_KW(tflm_interp_predict_obj);
mp_obj_t tflm_interp_call(mp_obj_t self_in, size_t n_args, size_t n_kw, const mp_obj_t *args);

#endif // TFLM_BINDING_BINDING_H
