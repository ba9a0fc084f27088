// Kernel entry points, one prepare/eval pair per op.
#ifndef TFLM_KERNELS_KERNELS_H
#define TFLM_KERNELS_KERNELS_H

#include "engine/kernel.h"

tflm_status_t tflm_fully_connected_prepare(tflm_prepare_t *p);
tflm_status_t tflm_fully_connected_eval(tflm_eval_t *e);

tflm_status_t tflm_quantize_prepare(tflm_prepare_t *p);
tflm_status_t tflm_quantize_eval(tflm_eval_t *e);

tflm_status_t tflm_var_handle_prepare(tflm_prepare_t *p);
tflm_status_t tflm_var_handle_eval(tflm_eval_t *e);
tflm_status_t tflm_assign_variable_prepare(tflm_prepare_t *p);
tflm_status_t tflm_assign_variable_eval(tflm_eval_t *e);
tflm_status_t tflm_read_variable_prepare(tflm_prepare_t *p);
tflm_status_t tflm_read_variable_eval(tflm_eval_t *e);
tflm_status_t tflm_call_once_prepare(tflm_prepare_t *p);
tflm_status_t tflm_call_once_eval(tflm_eval_t *e);

tflm_status_t tflm_dequantize_prepare(tflm_prepare_t *p);
tflm_status_t tflm_dequantize_eval(tflm_eval_t *e);

#if TFLM_TEST_KERNELS
tflm_status_t tflm_test_kernel_prepare(tflm_prepare_t *p);
tflm_status_t tflm_test_kernel_eval(tflm_eval_t *e);
#endif

// What prepare() returns after tflm_prep_alloc() or tflm_prep_temp() gave
// NULL: OK in the dry pass, the allocation error otherwise.
static inline tflm_status_t tflm_prep_status(const tflm_prepare_t *p) {
    return p->failed ? p->err->status : TFLM_OK;
}

#endif // TFLM_KERNELS_KERNELS_H
