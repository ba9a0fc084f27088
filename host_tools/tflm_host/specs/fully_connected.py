"""FULLY_CONNECTED (kernels/fully_connected.c)."""

from . import register, tensor


def _data(model, sg, op) -> int:
    # fc_data_t is 52 bytes; per-channel weights add an int32 multiplier and
    # an int8 shift per output unit.
    inp, weights, out = tensor(sg, op, 0), tensor(sg, op, 1), tensor(sg, op, 0, output=True)
    size = 52
    q = weights.quantization
    if inp.dtype != "FLOAT32" and q is not None and q.per_channel:
        size += 5 * out.shape[-1]
    return size


register("FULLY_CONNECTED", _data)
