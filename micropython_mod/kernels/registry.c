// The kernels this build links in, chosen in tflm_config.h.
#include "kernels/kernels.h"
#include "engine/ops.h"

const tflm_kernel_t tflm_kernels[] = {
    #if TFLM_KERNEL_ADD
    { TFLM_OP_ADD, tflm_add_prepare, tflm_add_eval },
    #endif
    #if TFLM_KERNEL_ASSIGN_VARIABLE
    { TFLM_OP_ASSIGN_VARIABLE, tflm_assign_variable_prepare, tflm_assign_variable_eval },
    #endif
    #if TFLM_KERNEL_AVERAGE_POOL_2D
    { TFLM_OP_AVERAGE_POOL_2D, tflm_average_pool_2d_prepare, tflm_average_pool_2d_eval },
    #endif
    #if TFLM_KERNEL_CALL_ONCE
    { TFLM_OP_CALL_ONCE, tflm_call_once_prepare, tflm_call_once_eval },
    #endif
    #if TFLM_KERNEL_CAST
    { TFLM_OP_CAST, tflm_cast_prepare, tflm_cast_eval },
    #endif
    #if TFLM_KERNEL_CONCATENATION
    { TFLM_OP_CONCATENATION, tflm_concatenation_prepare, tflm_concatenation_eval },
    #endif
    #if TFLM_KERNEL_CONV_2D
    { TFLM_OP_CONV_2D, tflm_conv_2d_prepare, tflm_conv_2d_eval },
    #endif
    #if TFLM_KERNEL_DEPTHWISE_CONV_2D
    { TFLM_OP_DEPTHWISE_CONV_2D, tflm_depthwise_conv_2d_prepare, tflm_depthwise_conv_2d_eval },
    #endif
    #if TFLM_KERNEL_DEQUANTIZE
    { TFLM_OP_DEQUANTIZE, tflm_dequantize_prepare, tflm_dequantize_eval },
    #endif
    #if TFLM_KERNEL_DIV
    { TFLM_OP_DIV, tflm_div_prepare, tflm_div_eval },
    #endif
    #if TFLM_KERNEL_EXPAND_DIMS
    { TFLM_OP_EXPAND_DIMS, tflm_expand_dims_prepare, tflm_expand_dims_eval },
    #endif
    #if TFLM_KERNEL_FULLY_CONNECTED
    { TFLM_OP_FULLY_CONNECTED, tflm_fully_connected_prepare, tflm_fully_connected_eval },
    #endif
    #if TFLM_KERNEL_GATHER
    { TFLM_OP_GATHER, tflm_gather_prepare, tflm_gather_eval },
    #endif
    #if TFLM_KERNEL_HARD_SWISH
    { TFLM_OP_HARD_SWISH, tflm_hard_swish_prepare, tflm_hard_swish_eval },
    #endif
    #if TFLM_KERNEL_LEAKY_RELU
    { TFLM_OP_LEAKY_RELU, tflm_leaky_relu_prepare, tflm_leaky_relu_eval },
    #endif
    #if TFLM_KERNEL_LOGISTIC
    { TFLM_OP_LOGISTIC, tflm_logistic_prepare, tflm_logistic_eval },
    #endif
    #if TFLM_KERNEL_MAXIMUM
    { TFLM_OP_MAXIMUM, tflm_maximum_prepare, tflm_maximum_eval },
    #endif
    #if TFLM_KERNEL_MAX_POOL_2D
    { TFLM_OP_MAX_POOL_2D, tflm_max_pool_2d_prepare, tflm_max_pool_2d_eval },
    #endif
    #if TFLM_KERNEL_MEAN
    { TFLM_OP_MEAN, tflm_mean_prepare, tflm_mean_eval },
    #endif
    #if TFLM_KERNEL_MINIMUM
    { TFLM_OP_MINIMUM, tflm_minimum_prepare, tflm_minimum_eval },
    #endif
    #if TFLM_KERNEL_MUL
    { TFLM_OP_MUL, tflm_mul_prepare, tflm_mul_eval },
    #endif
    #if TFLM_KERNEL_PACK
    { TFLM_OP_PACK, tflm_pack_prepare, tflm_pack_eval },
    #endif
    #if TFLM_KERNEL_PAD
    { TFLM_OP_PAD, tflm_pad_prepare, tflm_pad_eval },
    #endif
    #if TFLM_KERNEL_PADV2
    { TFLM_OP_PADV2, tflm_padv2_prepare, tflm_padv2_eval },
    #endif
    #if TFLM_KERNEL_QUANTIZE
    { TFLM_OP_QUANTIZE, tflm_quantize_prepare, tflm_quantize_eval },
    #endif
    #if TFLM_KERNEL_READ_VARIABLE
    { TFLM_OP_READ_VARIABLE, tflm_read_variable_prepare, tflm_read_variable_eval },
    #endif
    #if TFLM_KERNEL_RELU
    { TFLM_OP_RELU, tflm_relu_prepare, tflm_relu_eval },
    #endif
    #if TFLM_KERNEL_RELU6
    { TFLM_OP_RELU6, tflm_relu6_prepare, tflm_relu6_eval },
    #endif
    #if TFLM_KERNEL_RESHAPE
    { TFLM_OP_RESHAPE, tflm_reshape_prepare, tflm_reshape_eval },
    #endif
    #if TFLM_KERNEL_SLICE
    { TFLM_OP_SLICE, tflm_slice_prepare, tflm_slice_eval },
    #endif
    #if TFLM_KERNEL_SOFTMAX
    { TFLM_OP_SOFTMAX, tflm_softmax_prepare, tflm_softmax_eval },
    #endif
    #if TFLM_KERNEL_SPLIT
    { TFLM_OP_SPLIT, tflm_split_prepare, tflm_split_eval },
    #endif
    #if TFLM_KERNEL_SPLIT_V
    { TFLM_OP_SPLIT_V, tflm_split_v_prepare, tflm_split_v_eval },
    #endif
    #if TFLM_KERNEL_SQUEEZE
    { TFLM_OP_SQUEEZE, tflm_squeeze_prepare, tflm_squeeze_eval },
    #endif
    #if TFLM_KERNEL_STRIDED_SLICE
    { TFLM_OP_STRIDED_SLICE, tflm_strided_slice_prepare, tflm_strided_slice_eval },
    #endif
    #if TFLM_KERNEL_SUB
    { TFLM_OP_SUB, tflm_sub_prepare, tflm_sub_eval },
    #endif
    #if TFLM_KERNEL_SUM
    { TFLM_OP_SUM, tflm_sum_prepare, tflm_sum_eval },
    #endif
    #if TFLM_KERNEL_SVDF
    { TFLM_OP_SVDF, tflm_svdf_prepare, tflm_svdf_eval },
    #endif
    #if TFLM_KERNEL_TANH
    { TFLM_OP_TANH, tflm_tanh_prepare, tflm_tanh_eval },
    #endif
    #if TFLM_KERNEL_TRANSPOSE
    { TFLM_OP_TRANSPOSE, tflm_transpose_prepare, tflm_transpose_eval },
    #endif
    #if TFLM_KERNEL_TRANSPOSE_CONV
    { TFLM_OP_TRANSPOSE_CONV, tflm_transpose_conv_prepare, tflm_transpose_conv_eval },
    #endif
    #if TFLM_KERNEL_UNIDIRECTIONAL_SEQUENCE_LSTM
    { TFLM_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, tflm_unidirectional_sequence_lstm_prepare, tflm_unidirectional_sequence_lstm_eval },
    #endif
    #if TFLM_KERNEL_UNPACK
    { TFLM_OP_UNPACK, tflm_unpack_prepare, tflm_unpack_eval },
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
