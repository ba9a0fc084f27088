"""TRANSPOSE_CONV (kernels/transpose_conv.c)."""

import math

from . import register, tensor


def _data(model, sg, op) -> int:
    # tconv_data_t is 80 bytes; quantized kernels add an int32 multiplier and
    # an int8 shift per output channel.
    inp, weights = tensor(sg, op, 2), tensor(sg, op, 1)
    size = 80
    if inp.dtype != "FLOAT32":
        size += 5 * weights.shape[0]
    return (size + 3) & ~3


def _scratch(model, sg, op) -> list[int]:
    # As TFLM: int32 (int8) or int64 (int16) accumulators for the whole
    # output, then for an int16 bias its widened int64 copy.
    inp, bias, out = tensor(sg, op, 2), tensor(sg, op, 3), tensor(sg, op, 0, output=True)
    if inp.dtype == "FLOAT32":
        return []
    elements = math.prod(out.shape)
    sizes = [elements * (4 if inp.dtype == "INT8" else 8)]
    if inp.dtype == "INT16" and bias is not None and bias.dtype == "INT16":
        sizes.append(math.prod(bias.shape) * 8)
    return sizes


register("TRANSPOSE_CONV", _data, scratch=_scratch)
