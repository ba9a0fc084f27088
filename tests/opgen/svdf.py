"""SVDF models: float32 (all fused activations) and int8
input with int16 or int8 time weights and activation state. Every case runs
several invokes through one interpreter, so the state carries over."""

from __future__ import annotations

import math

import numpy as np

from tflm_dev.builder import ModelBuilder
from . import Case, act_quant, generators, random_data

FLOAT_ACTIVATIONS = ["NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT"]

# An int8 state starts at its zero point, as TFLM fills it (the SVDF kernel's
# ring does too): cases of any memory get a non-zero int8 state zero point,
# so a state read before the kernel wrote it would show.
INT8_STATE_ZERO_POINT_ANY_MEMORY = True


def _f32(x: float) -> float:
    return float(np.float32(x))


def _svdf(rng: np.random.Generator, kind: str) -> Case:
    batches = int(rng.integers(1, 4))
    input_size = int(rng.integers(1, 24))
    rank = int(rng.integers(1, 4))
    units = int(rng.integers(1, 9))
    filters = units * rank
    memory = int(rng.choice([1, 2, 3, 5, 8, 10]))
    # TFLM's SVDF (float too) crashes without a bias, though the schema
    # allows omitting it.
    has_bias = True
    # TFLM's integer SVDF ignores the fused activation.
    act = str(rng.choice(FLOAT_ACTIVATIONS))
    b = ModelBuilder()
    sg = b.subgraph()
    if kind == "FLOAT32":
        x = sg.tensor((batches, input_size), "FLOAT32", name="input")
        wf = sg.tensor((filters, input_size), "FLOAT32", data=random_data(rng, "FLOAT32", (filters, input_size)) * 0.5)
        wt = sg.tensor((filters, memory), "FLOAT32", data=random_data(rng, "FLOAT32", (filters, memory)) * 0.5)
        bias = sg.tensor((units,), "FLOAT32", data=random_data(rng, "FLOAT32", (units,))) if has_bias else -1
        state = sg.tensor((batches, filters * memory), "FLOAT32", name="state", variable=True)
        out = sg.tensor((batches, units), "FLOAT32", name="output")
        params = {}
    else:
        tdtype = "INT16" if kind == "INT16" else "INT8"
        qin = act_quant(rng, "INT8", (0.01, 0.1))
        wf_scale = _f32(rng.uniform(0.002, 0.02))
        wt_scale = _f32(rng.uniform(0.0005, 0.005) if tdtype == "INT16" else rng.uniform(0.005, 0.05))
        # State scale: typical projections land well inside the state's range.
        dot_std = 74.0 * 73.0 * math.sqrt(input_size)
        target = 3000.0 if tdtype == "INT16" else 40.0
        state_scale = _f32(qin[0][0] * wf_scale * dot_std / target * rng.uniform(0.5, 2.0))
        if tdtype == "INT16":
            state_zp = 0
        elif memory == 1 or INT8_STATE_ZERO_POINT_ANY_MEMORY:
            state_zp = int(rng.integers(-60, 60))
        else:
            state_zp = 0
        wt_max = 32767 if tdtype == "INT16" else 127
        acc_std = (wt_max / 2) * target * math.sqrt(rank * memory)
        out_scale = _f32(state_scale * wt_scale * acc_std / 40.0 * rng.uniform(0.5, 2.0))
        out_zp = int(rng.integers(-100, 100))
        bias_scale = _f32(np.float32(state_scale) * np.float32(wt_scale))
        x = sg.tensor((batches, input_size), "INT8", quant=qin, name="input")
        wf = sg.tensor((filters, input_size), "INT8", data=random_data(rng, "INT8", (filters, input_size), -127, 127),
                       quant=([wf_scale], [0]))
        wt = sg.tensor((filters, memory), tdtype, data=random_data(rng, tdtype, (filters, memory), -wt_max, wt_max),
                       quant=([wt_scale], [0]))
        big = int(min(1 << 20, acc_std))
        bias = sg.tensor((units,), "INT32", data=rng.integers(-big, big, units).astype(np.int32),
                         quant=([bias_scale], [0]))
        state = sg.tensor((batches, filters * memory), tdtype, quant=([state_scale], [state_zp]), name="state",
                          variable=True)
        out = sg.tensor((batches, units), "INT8", quant=([out_scale], [out_zp]), name="output")
        params = dict(state_zp=state_zp, state_scale=state_scale, out_scale=out_scale)
    sg.op("SVDF", [x, wf, wt, bias, state], [out], Rank=rank, FusedActivationFunction=act)
    sg.inputs, sg.outputs = [x], [out]
    return Case("", b.build(), dict(kind=kind, batches=batches, input_size=input_size, rank=rank, units=units,
                                    memory=memory, bias=has_bias, act=act, **params), runs=5)


generators(_svdf, {"SVDF/float32": ("FLOAT32",),
                   "SVDF/int8_int16_state": ("INT16",),
                   "SVDF/int8_int8_state": ("INT8",)})
