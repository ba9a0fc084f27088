"""CONV_2D and DEPTHWISE_CONV_2D (kernels/conv.c, kernels/depthwise_conv.c)."""

from . import register, tensor

# conv_data_t (kernels/conv_common.h)
_STRUCT_BYTES = 52


def _data(model, sg, op) -> int:
    # Quantized kernels add an int32 multiplier and an int8 shift per output
    # channel (per-channel filters) or one pair (per-tensor).
    inp, out = tensor(sg, op, 0), tensor(sg, op, 0, output=True)
    filt = tensor(sg, op, 1)
    if inp.dtype == "FLOAT32":
        return _STRUCT_BYTES
    q = filt.quantization
    n = out.shape[-1] if q is not None and q.per_channel else 1
    return _STRUCT_BYTES + 5 * n


register("CONV_2D", _data)
register("DEPTHWISE_CONV_2D", _data)
