// Shared parts of the tflm MicroPython binding (one file per area:
// model.c, interpreter.c, modtflm.c).
#ifndef TFLM_BINDING_BINDING_H
#define TFLM_BINDING_BINDING_H

#include "py/runtime.h"

#include "engine/interpreter.h"

typedef struct _tflm_model_obj_t {
    mp_obj_base_t base;
    mp_obj_t buffer; // keeps the bytes alive
    tflm_model_t model;
} tflm_model_obj_t;

extern const mp_obj_type_t tflm_model_type;
extern const mp_obj_type_t tflm_tensor_info_type;
extern const mp_obj_type_t tflm_arena_type;
extern const mp_obj_type_t tflm_interp_type;
MP_DECLARE_CONST_FUN_OBJ_KW(tflm_arena_size_obj);

// Raises the exception an engine error stands for.
NORETURN void tflm_raise(const tflm_error_t *err);
// As tflm_raise, but a NotImplementedError names every op the model needs
// and this build lacks (the engine's own message is bounded).
NORETURN void tflm_raise_for(tflm_model_t *model, const tflm_error_t *err);

// The tflm.Model in obj, checked to still have its bytes where it read them.
tflm_model_obj_t *tflm_get_model(mp_obj_t obj);
void tflm_model_check_buffer(tflm_model_obj_t *self);

#endif // TFLM_BINDING_BINDING_H
