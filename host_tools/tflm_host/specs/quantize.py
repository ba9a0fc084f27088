"""QUANTIZE and DEQUANTIZE (kernels/quantize.c, kernels/dequantize.c)."""

from . import register

register("QUANTIZE", lambda model, sg, op: 36)  # quantize_data_t
register("DEQUANTIZE", lambda model, sg, op: 16)  # dequantize_data_t
