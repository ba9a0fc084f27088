"""RELU, RELU6, LEAKY_RELU (float32, int8, int16) and HARD_SWISH (float32,
int8) models: random shapes, scales and zero points (input and output
quantization differ where TFLM requantizes), alpha values of both signs."""

from __future__ import annotations

import numpy as np

from . import Case, act_quant, generator, generators, single_op


def _shape(rng):
    return tuple(int(d) for d in rng.integers(1, 7, int(rng.integers(1, 5))))


def _float_inputs(rng, shape, spread):
    """Float inputs spread over the interesting range, with exact edge values."""
    sets = []
    for _ in range(3):
        x = (rng.normal(0, spread, shape)).astype(np.float32)
        flat = x.reshape(-1)
        edges = np.array([0.0, -0.0, 6.0, -3.0, 3.0, 1e-30, -1e-30, 5.999999, 6.000001], np.float32)
        k = min(len(edges), flat.size // 2)
        flat[:k] = rng.choice(edges, k)
        sets.append([x])
    return sets


def _quant_pair(rng, dtype, same: bool, scale_range=(0.005, 0.2)):
    qin = act_quant(rng, dtype, scale_range)
    if same:
        return qin, qin
    return qin, act_quant(rng, dtype, scale_range)


def _elementwise(rng, op: str, dtype: str, same_quant: bool, **options) -> Case:
    shape = _shape(rng)
    if dtype == "FLOAT32":
        qin = qout = None
        inputs = _float_inputs(rng, shape, 5.0)
    else:
        qin, qout = _quant_pair(rng, dtype, same_quant)
        inputs = None
    model, _ = single_op(op, [(shape, dtype, None, qin)], [(shape, dtype, qout)], **options)
    return Case("", model, dict(op=op, dtype=dtype, shape=shape, qin=qin, qout=qout, **options), inputs=inputs)


@generator("RELU/float32")
def relu_float32(rng):
    return _elementwise(rng, "RELU", "FLOAT32", False)


@generator("RELU/int8")
def relu_int8(rng):
    return _elementwise(rng, "RELU", "INT8", bool(rng.integers(0, 3) == 0))


@generator("RELU/int16")
def relu_int16(rng):
    return _elementwise(rng, "RELU", "INT16", bool(rng.integers(0, 3) == 0))


# RELU6 does not requantize: TFLM models carry the input's quantization on
# the output.
generators(_elementwise, {"RELU6/float32": ("RELU6", "FLOAT32", True,),
                          "RELU6/int8": ("RELU6", "INT8", True,),
                          "RELU6/int16": ("RELU6", "INT16", True,)})


def _alpha(rng) -> float:
    choice = int(rng.integers(0, 5))
    if choice == 0:
        return float(np.float32(rng.uniform(-1.0, 0.0)))   # negative slope
    if choice == 1:
        return float(np.float32(rng.uniform(1.0, 3.0)))    # steeper than identity
    if choice == 2:
        return float(rng.choice([0.0, 0.1, 0.2, 0.01, 1.0]))
    return float(np.float32(rng.uniform(0.0, 1.0)))


@generator("LEAKY_RELU/float32")
def leaky_relu_float32(rng):
    return _elementwise(rng, "LEAKY_RELU", "FLOAT32", False, Alpha=_alpha(rng))


@generator("LEAKY_RELU/int8")
def leaky_relu_int8(rng):
    return _elementwise(rng, "LEAKY_RELU", "INT8", bool(rng.integers(0, 3) == 0), Alpha=_alpha(rng))


@generator("LEAKY_RELU/int16")
def leaky_relu_int16(rng):
    return _elementwise(rng, "LEAKY_RELU", "INT16", bool(rng.integers(0, 3) == 0), Alpha=_alpha(rng))


@generator("HARD_SWISH/float32")
def hard_swish_float32(rng):
    return _elementwise(rng, "HARD_SWISH", "FLOAT32", False)


@generator("HARD_SWISH/int8")
def hard_swish_int8(rng):
    shape = _shape(rng)
    # Input ranges as in real models (about [-8, 8] up to [-100, 100]); the
    # output scale keeps TFLM's output exponent <= 0.
    in_scale = float(np.float32(rng.uniform(0.03, 0.8)))
    out_scale = float(np.float32(rng.uniform(in_scale / 128 * 1.01, in_scale * 1.5)))
    qin = ([in_scale], [int(rng.integers(-100, 100))])
    qout = ([out_scale], [int(rng.integers(-128, 0))])
    model, _ = single_op("HARD_SWISH", [(shape, "INT8", None, qin)], [(shape, "INT8", qout)])
    return Case("", model, dict(dtype="INT8", shape=shape, qin=qin, qout=qout))
