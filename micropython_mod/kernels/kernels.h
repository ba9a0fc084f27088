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

tflm_status_t tflm_add_prepare(tflm_prepare_t *p);
tflm_status_t tflm_add_eval(tflm_eval_t *e);

tflm_status_t tflm_average_pool_2d_prepare(tflm_prepare_t *p);
tflm_status_t tflm_average_pool_2d_eval(tflm_eval_t *e);

tflm_status_t tflm_cast_prepare(tflm_prepare_t *p);
tflm_status_t tflm_cast_eval(tflm_eval_t *e);

tflm_status_t tflm_concatenation_prepare(tflm_prepare_t *p);
tflm_status_t tflm_concatenation_eval(tflm_eval_t *e);

tflm_status_t tflm_conv_2d_prepare(tflm_prepare_t *p);
tflm_status_t tflm_conv_2d_eval(tflm_eval_t *e);

tflm_status_t tflm_depthwise_conv_2d_prepare(tflm_prepare_t *p);
tflm_status_t tflm_depthwise_conv_2d_eval(tflm_eval_t *e);

tflm_status_t tflm_div_prepare(tflm_prepare_t *p);
tflm_status_t tflm_div_eval(tflm_eval_t *e);

tflm_status_t tflm_expand_dims_prepare(tflm_prepare_t *p);
tflm_status_t tflm_expand_dims_eval(tflm_eval_t *e);

tflm_status_t tflm_gather_prepare(tflm_prepare_t *p);
tflm_status_t tflm_gather_eval(tflm_eval_t *e);

tflm_status_t tflm_hard_swish_prepare(tflm_prepare_t *p);
tflm_status_t tflm_hard_swish_eval(tflm_eval_t *e);

tflm_status_t tflm_leaky_relu_prepare(tflm_prepare_t *p);
tflm_status_t tflm_leaky_relu_eval(tflm_eval_t *e);

tflm_status_t tflm_logistic_prepare(tflm_prepare_t *p);
tflm_status_t tflm_logistic_eval(tflm_eval_t *e);

tflm_status_t tflm_maximum_prepare(tflm_prepare_t *p);
tflm_status_t tflm_maximum_eval(tflm_eval_t *e);

tflm_status_t tflm_max_pool_2d_prepare(tflm_prepare_t *p);
tflm_status_t tflm_max_pool_2d_eval(tflm_eval_t *e);

tflm_status_t tflm_mean_prepare(tflm_prepare_t *p);
tflm_status_t tflm_mean_eval(tflm_eval_t *e);

tflm_status_t tflm_minimum_prepare(tflm_prepare_t *p);
tflm_status_t tflm_minimum_eval(tflm_eval_t *e);

tflm_status_t tflm_mul_prepare(tflm_prepare_t *p);
tflm_status_t tflm_mul_eval(tflm_eval_t *e);

tflm_status_t tflm_pack_prepare(tflm_prepare_t *p);
tflm_status_t tflm_pack_eval(tflm_eval_t *e);

tflm_status_t tflm_pad_prepare(tflm_prepare_t *p);
tflm_status_t tflm_pad_eval(tflm_eval_t *e);

tflm_status_t tflm_padv2_prepare(tflm_prepare_t *p);
tflm_status_t tflm_padv2_eval(tflm_eval_t *e);

tflm_status_t tflm_relu_prepare(tflm_prepare_t *p);
tflm_status_t tflm_relu_eval(tflm_eval_t *e);

tflm_status_t tflm_relu6_prepare(tflm_prepare_t *p);
tflm_status_t tflm_relu6_eval(tflm_eval_t *e);

tflm_status_t tflm_reshape_prepare(tflm_prepare_t *p);
tflm_status_t tflm_reshape_eval(tflm_eval_t *e);

tflm_status_t tflm_slice_prepare(tflm_prepare_t *p);
tflm_status_t tflm_slice_eval(tflm_eval_t *e);

tflm_status_t tflm_softmax_prepare(tflm_prepare_t *p);
tflm_status_t tflm_softmax_eval(tflm_eval_t *e);

tflm_status_t tflm_split_prepare(tflm_prepare_t *p);
tflm_status_t tflm_split_eval(tflm_eval_t *e);

tflm_status_t tflm_split_v_prepare(tflm_prepare_t *p);
tflm_status_t tflm_split_v_eval(tflm_eval_t *e);

tflm_status_t tflm_squeeze_prepare(tflm_prepare_t *p);
tflm_status_t tflm_squeeze_eval(tflm_eval_t *e);

tflm_status_t tflm_strided_slice_prepare(tflm_prepare_t *p);
tflm_status_t tflm_strided_slice_eval(tflm_eval_t *e);

tflm_status_t tflm_sub_prepare(tflm_prepare_t *p);
tflm_status_t tflm_sub_eval(tflm_eval_t *e);

tflm_status_t tflm_sum_prepare(tflm_prepare_t *p);
tflm_status_t tflm_sum_eval(tflm_eval_t *e);

tflm_status_t tflm_svdf_prepare(tflm_prepare_t *p);
tflm_status_t tflm_svdf_eval(tflm_eval_t *e);

tflm_status_t tflm_tanh_prepare(tflm_prepare_t *p);
tflm_status_t tflm_tanh_eval(tflm_eval_t *e);

tflm_status_t tflm_transpose_prepare(tflm_prepare_t *p);
tflm_status_t tflm_transpose_eval(tflm_eval_t *e);

tflm_status_t tflm_transpose_conv_prepare(tflm_prepare_t *p);
tflm_status_t tflm_transpose_conv_eval(tflm_eval_t *e);

tflm_status_t tflm_unidirectional_sequence_lstm_prepare(tflm_prepare_t *p);
tflm_status_t tflm_unidirectional_sequence_lstm_eval(tflm_eval_t *e);

tflm_status_t tflm_unpack_prepare(tflm_prepare_t *p);
tflm_status_t tflm_unpack_eval(tflm_eval_t *e);

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
