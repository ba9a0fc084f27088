"""AVERAGE_POOL_2D and MAX_POOL_2D models: float32, int8, int16; L2_POOL_2D:
float32 (TFLM has no other); SAME and VALID padding, strides, filters (also
larger than the input with SAME), every fused activation, batches."""

from __future__ import annotations

import numpy as np

from . import Case, ErrorCase, act_quant, error_case, generator, random_data, single_op

ACTIVATIONS = ["NONE", "RELU", "RELU_N1_TO_1", "RELU6"]


def _out_size(padding: str, size: int, filt: int, stride: int) -> int:
    if padding == "SAME":
        return (size + stride - 1) // stride
    return (size + stride - filt) // stride


def _pool(rng: np.random.Generator, op: str, dtype: str) -> Case:
    padding = str(rng.choice(["SAME", "VALID"]))
    batches = int(rng.integers(1, 3))
    depth = int(rng.integers(1, 9))
    dims = []
    for _ in range(2):
        size = int(rng.integers(1, 13))
        stride = int(rng.integers(1, 4))
        if padding == "VALID":
            filt = int(rng.integers(1, size + 1))
        else:
            filt = int(rng.integers(1, min(size + 3, 8) + 1))
        dims.append((size, filt, stride, _out_size(padding, size, filt, stride)))
    (h, fh, sh, oh), (w, fw, sw, ow) = dims
    act = str(rng.choice(ACTIVATIONS))
    q = None if dtype == "FLOAT32" else act_quant(rng, dtype)
    in_shape, out_shape = (batches, h, w, depth), (batches, oh, ow, depth)
    model, _ = single_op(op, [(in_shape, dtype, None, q)], [(out_shape, dtype, q)],
                         Padding=padding, StrideH=sh, StrideW=sw, FilterHeight=fh, FilterWidth=fw,
                         FusedActivationFunction=act)
    inputs = None
    if dtype != "FLOAT32" and rng.integers(0, 3) == 0:
        # Values piled at one end: clamping and rounding at the extremes.
        lo, hi = (-128, 127) if dtype == "INT8" else (-32768, 32767)
        edge = lo if rng.integers(0, 2) else hi
        inputs = []
        for _ in range(3):
            x = random_data(rng, dtype, in_shape)
            mask = rng.integers(0, 2, in_shape).astype(bool)
            x[mask] = edge
            inputs.append([x])
    return Case("", model, dict(op=op, dtype=dtype, padding=padding, input=in_shape, filter=(fh, fw),
                                stride=(sh, sw), act=act, quant=q), inputs=inputs)


for _op in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
    for _dtype in ("FLOAT32", "INT8", "INT16"):
        def _gen(rng, op=_op, dtype=_dtype):
            return _pool(rng, op, dtype)
        generator(f"{_op}/{_dtype.lower()}")(_gen)


generator("L2_POOL_2D/float32")(lambda rng: _pool(rng, "L2_POOL_2D", "FLOAT32"))


@error_case("L2_POOL_2D/int8")
def _l2_int8():
    q = ([0.1], [3])
    model, _ = single_op("L2_POOL_2D", [((1, 2, 2, 1), "INT8", None, q)], [((1, 1, 1, 1), "INT8", q)],
                         Padding="VALID", StrideH=1, StrideW=1, FilterHeight=2, FilterWidth=2)
    return ErrorCase("", model, [np.zeros((1, 2, 2, 1), np.int8)], "NotImplementedError input of type int8 is not supported")
