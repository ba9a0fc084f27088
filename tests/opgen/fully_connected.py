"""FULLY_CONNECTED models: float32, int8 (per-tensor and per-channel
weights), int16 activations with int8 weights; with and without bias, all
fused activations, batches, keep_num_dims."""

from __future__ import annotations

import numpy as np

from . import Case, act_quant, bias_data, generator, generators, random_data, single_op, weight_quant

ACTIVATIONS = ["NONE", "RELU", "RELU_N1_TO_1", "RELU6"]


def _fc(rng: np.random.Generator, dtype: str, int64_at_4_mod_8: bool = False) -> Case:
    batches = int(rng.integers(1, 4))
    depth = int(rng.integers(1, 40))
    units = int(rng.integers(1, 20))
    keep = bool(rng.integers(0, 2)) and batches > 1
    act = str(rng.choice(ACTIVATIONS))
    has_bias = int64_at_4_mod_8 or bool(rng.integers(0, 4))  # mostly with bias
    per_channel = dtype != "FLOAT32" and bool(rng.integers(0, 2))
    wtype = "FLOAT32" if dtype == "FLOAT32" else "INT8"
    btype = {"FLOAT32": "FLOAT32", "INT8": "INT32", "INT16": "INT64"}[dtype]
    in_shape = (batches, depth)
    out_shape = (batches, units)
    if dtype == "FLOAT32":
        qin = qw = qb = qout = None
    else:
        qin, qout = act_quant(rng, dtype), act_quant(rng, dtype)
        qw = weight_quant(rng, units, per_channel, 0)
        qb = ([qin[0][0] * s for s in qw[0]], [0] * len(qw[0]), 0)
    weights = random_data(rng, wtype, (units, depth), -127, 127) if wtype == "INT8" else random_data(rng, wtype, (units, depth))
    inputs = [(in_shape, dtype, None, qin), ((units, depth), wtype, weights, qw),
              ((units,), btype, bias_data(rng, btype, units), qb) if has_bias else None]
    model, _ = single_op("FULLY_CONNECTED", inputs, [(out_shape, dtype, qout)], int64_at_4_mod_8=int64_at_4_mod_8,
                         FusedActivationFunction=act, KeepNumDims=keep)
    return Case("", model, dict(dtype=dtype, batches=batches, depth=depth, units=units, act=act,
                                bias=has_bias, per_channel=per_channel, keep_num_dims=keep))


generators(_fc, {"FULLY_CONNECTED/float32": ("FLOAT32",),
                 "FULLY_CONNECTED/int8": ("INT8",),
                 "FULLY_CONNECTED/int16": ("INT16",)})


@generator("FULLY_CONNECTED/int16_bias64_4_mod_8")
def fc_int16_bias64_misaligned(rng):
    """int64 bias at 4 modulo 8, as older converters wrote it."""
    return _fc(rng, "INT16", int64_at_4_mod_8=True)


@generator("FULLY_CONNECTED/int16_bias_near_int64_ends")
def fc_int16_huge_bias(rng):
    """int64 biases at int64's ends, zero inputs, and multipliers near
    2^-20 (per channel, so that some reduced multipliers are odd): the
    64-bit requantization's product lands next to 2^63 and its rounding
    (2^33) passes it, wrapping as on the reference's targets."""
    units = 8
    in_scale = float(np.float32(2.0 ** -10))
    qin, qout = ([in_scale], [0]), ([1.0], [0])
    scales = [float(np.float32(2.0 ** -10 * (1 + k / 16 + float(rng.uniform(0, 1 / 32))))) for k in range(units)]
    qw = (scales, [0] * units, 0)
    qb = ([in_scale * s for s in scales], [0] * units, 0)
    ends = np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min], np.int64)
    bias = (ends[rng.integers(0, 2, units)] + rng.integers(-3, 4, units) * np.int64(1)).astype(np.int64)
    weights = random_data(rng, "INT8", (units, 2), -127, 127)
    model, _ = single_op("FULLY_CONNECTED", [((1, 2), "INT16", None, qin), ((units, 2), "INT8", weights, qw),
                                             ((units,), "INT64", bias, qb)], [((1, units), "INT16", qout)])
    return Case("", model, dict(bias=bias.tolist()), inputs=[[np.zeros((1, 2), np.int16)]])
