"""Fused activations whose bound lands at the edge of int32 at the output's
scale: RELU_N1_TO_1 at scale 2^-31 and RELU6 at 6 * 2^-31 put round(bound /
scale) at exactly 2^31, which TFLM's check lets through and converts as
x86-64 does (INT32_MIN, the zero point added with wrapping), so the bounds
cross and every output is the upper bound in the output's type; a smaller
scale puts the bound past int32, which TFLM refuses (and its pooling
kernels ignore, clamping to what their data held)."""

from __future__ import annotations

import numpy as np

from . import Case, ErrorCase, bias_data, error_case, generator, random_data, single_op

# The scales whose bound is exactly 2^31, as float32 (what the model holds).
EDGE = {"RELU_N1_TO_1": float(np.float32(2.0 ** -31)), "RELU6": float(np.float32(6 * 2.0 ** -31))}


def _edge_quant(rng: np.random.Generator, dtype: str, act: str) -> tuple[list[float], list[int]]:
    zp = 0 if dtype == "INT16" else int(rng.integers(-128, 128))
    return [EDGE[act]], [zp]


def _small_in(rng: np.random.Generator, dtype: str) -> tuple[list[float], list[int]]:
    """An input scale that keeps the layer's multiplier in range."""
    zp = 0 if dtype == "INT16" else int(rng.integers(-20, 20))
    return [float(np.float32(rng.uniform(0.5e-6, 2e-6)))], [zp]


def _edge(rng: np.random.Generator, dtype: str) -> Case:
    op = str(rng.choice(["FULLY_CONNECTED", "CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "MUL"]))
    act = str(rng.choice(sorted(EDGE)))
    qout = _edge_quant(rng, dtype, act)
    qin = _small_in(rng, dtype)
    btype = "INT32" if dtype == "INT8" else "INT64"
    if op in ("ADD", "MUL"):
        shape = (1, int(rng.integers(1, 4)), int(rng.integers(1, 5)))
        qin2 = _small_in(rng, dtype)
        if op == "MUL":  # its multiplier in1 * in2 / out: both inputs near 1
            qin, qin2 = ([float(np.float32(0.03))], qin[1]), ([float(np.float32(0.02))], qin2[1])
        model, _ = single_op(op, [(shape, dtype, None, qin), (shape, dtype, None, qin2)], [(shape, dtype, qout)],
                             FusedActivationFunction=act)
        return Case("", model, dict(op=op, dtype=dtype, act=act, out_zp=qout[1][0], shape=shape))
    units = int(rng.integers(1, 6))
    qw = ([float(np.float32(rng.uniform(1e-4, 1e-3)))], [0])
    qb = ([qin[0][0] * qw[0][0]], [0])
    if op == "FULLY_CONNECTED":
        depth = int(rng.integers(1, 8))
        w = random_data(rng, "INT8", (units, depth), -127, 127)
        model, _ = single_op(op, [((2, depth), dtype, None, qin), ((units, depth), "INT8", w, qw),
                                  ((units,), btype, bias_data(rng, btype, units), qb)],
                             [((2, units), dtype, qout)], FusedActivationFunction=act)
    else:
        h, w_ = int(rng.integers(2, 6)), int(rng.integers(2, 6))
        in_d = units if op == "DEPTHWISE_CONV_2D" else int(rng.integers(1, 4))
        fshape = (1, 3, 3, units) if op == "DEPTHWISE_CONV_2D" else (units, 3, 3, in_d)
        w = random_data(rng, "INT8", fshape, -127, 127)
        options = dict(Padding="SAME", StrideH=1, StrideW=1, DilationHFactor=1, DilationWFactor=1,
                       FusedActivationFunction=act)
        if op == "DEPTHWISE_CONV_2D":
            options["DepthMultiplier"] = 1
        model, _ = single_op(op, [((1, h, w_, in_d), dtype, None, qin), (fshape, "INT8", w, qw),
                                  ((units,), btype, bias_data(rng, btype, units), qb)],
                             [((1, h, w_, units), dtype, qout)], **options)
    return Case("", model, dict(op=op, dtype=dtype, act=act, out_zp=qout[1][0], units=units))


@generator("ACTIVATION_BOUND/int8")
def edge_int8(rng):
    return _edge(rng, "INT8")


@generator("ACTIVATION_BOUND/int16")
def edge_int16(rng):
    return _edge(rng, "INT16")


# -- a bound past int32 ---------------------------------------------------------

MESSAGE = "ValueError the fused activation's bound is beyond int32 at the output's scale"


@error_case("ACTIVATION_BOUND/fully_connected_past_int32")
def _fc_past():
    qin, qout = ([1e-6], [0]), ([1e-12], [0])
    w = np.ones((2, 3), np.int8)
    model, _ = single_op("FULLY_CONNECTED", [((1, 3), "INT8", None, qin), ((2, 3), "INT8", w, ([1e-6], [0]))],
                         [((1, 2), "INT8", qout)], FusedActivationFunction="RELU6")
    return ErrorCase("", model, [np.zeros((1, 3), np.int8)], MESSAGE)


@error_case("ACTIVATION_BOUND/max_pool_past_int32")
def _pool_past():
    q = ([1e-12], [0])
    model, _ = single_op("MAX_POOL_2D", [((1, 4, 4, 2), "INT8", None, q)], [((1, 2, 2, 2), "INT8", q)],
                         Padding="VALID", StrideH=2, StrideW=2, FilterHeight=2, FilterWidth=2,
                         FusedActivationFunction="RELU6")
    return ErrorCase("", model, [np.zeros((1, 4, 4, 2), np.int8)], MESSAGE, tflm=False,
                     why="TFLM's pooling ignores the failed range and clamps to what its data held")
