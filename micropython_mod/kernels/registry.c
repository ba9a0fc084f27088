// The kernels this build links in, chosen in tflm_config.h.
#include "kernels/kernels.h"
#include "engine/ops.h"

const tflm_kernel_t tflm_kernels[] = {
    #if TFLM_KERNEL_ASSIGN_VARIABLE
    { TFLM_OP_ASSIGN_VARIABLE, tflm_assign_variable_prepare, tflm_assign_variable_eval },
    #endif
    #if TFLM_KERNEL_CALL_ONCE
    { TFLM_OP_CALL_ONCE, tflm_call_once_prepare, tflm_call_once_eval },
    #endif
    #if TFLM_KERNEL_DEQUANTIZE
    { TFLM_OP_DEQUANTIZE, tflm_dequantize_prepare, tflm_dequantize_eval },
    #endif
    #if TFLM_KERNEL_FULLY_CONNECTED
    { TFLM_OP_FULLY_CONNECTED, tflm_fully_connected_prepare, tflm_fully_connected_eval },
    #endif
    #if TFLM_KERNEL_QUANTIZE
    { TFLM_OP_QUANTIZE, tflm_quantize_prepare, tflm_quantize_eval },
    #endif
    #if TFLM_KERNEL_READ_VARIABLE
    { TFLM_OP_READ_VARIABLE, tflm_read_variable_prepare, tflm_read_variable_eval },
    #endif
    #if TFLM_KERNEL_VAR_HANDLE
    { TFLM_OP_VAR_HANDLE, tflm_var_handle_prepare, tflm_var_handle_eval },
    #endif
    #if TFLM_TEST_KERNELS
    // Host test builds only (tests/engine/test_kernel.c).
    { TFLM_OP_CUSTOM, tflm_test_kernel_prepare, tflm_test_kernel_eval },
    #endif
    { -1, NULL, NULL },
};

const uint32_t tflm_kernel_count = sizeof(tflm_kernels) / sizeof(tflm_kernels[0]) - 1;

const tflm_kernel_t *tflm_kernel_find(int32_t op, uint32_t *index) {
    for (uint32_t i = 0; i < tflm_kernel_count; ++i) {
        if (tflm_kernels[i].op == op) {
            if (index) {
                *index = i;
            }
            return &tflm_kernels[i];
        }
    }
    return NULL;
}
