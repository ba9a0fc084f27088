"""RELU, RELU6, LEAKY_RELU (kernels/activations.c) and HARD_SWISH
(kernels/hard_swish.c)."""

from . import register

# Each kernel keeps one fixed-size struct, whatever the type.
register("RELU", lambda m, sg, op: 16)        # relu_data_t
register("RELU6", lambda m, sg, op: 12)       # relu6_data_t
register("LEAKY_RELU", lambda m, sg, op: 20)  # leaky_relu_data_t
register("HARD_SWISH", lambda m, sg, op: 16)  # hard_swish_data_t
