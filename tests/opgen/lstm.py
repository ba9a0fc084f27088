"""UNIDIRECTIONAL_SEQUENCE_LSTM models: float32, int8 activations with int8
weights and int16 activations with int8 weights (int16 cell state), batch or
time major, with and without cell clipping. Quantized like the converter does
it (see trained_lstm_int8.tflite): symmetric per-tensor weights, biases at
input x weight scale, a power-of-two cell state scale, the hidden state at
about 1/128 (int8) or 1/32768 (int16). Each case runs 2-3 invokes through one
interpreter, so the state carried in the variable tensors is checked too."""

from __future__ import annotations

import numpy as np

from tflm_dev.builder import ModelBuilder
from . import Case, generator, random_data

BIAS_TYPE = {"FLOAT32": "FLOAT32", "INT8": "INT32", "INT16": "INT64"}


def _lstm(rng: np.random.Generator, dtype: str, hidden_zp: bool = False, **fixed) -> Case:
    """`fixed` sets batches, steps, n_input, n_state or time_major."""
    batches = int(rng.integers(1, 4))
    steps = int(rng.integers(1, 6))
    # Mostly tiny; now and then the size of a real model's (28 inputs, 20 units).
    big = rng.integers(0, 4) == 0
    n_input = int(rng.integers(1, 33 if big else 9))
    n_state = int(rng.integers(1, 25 if big else 9))
    time_major = bool(rng.integers(0, 2))
    batches, steps = fixed.get("batches", batches), fixed.get("steps", steps)
    n_input, n_state = fixed.get("n_input", n_input), fixed.get("n_state", n_state)
    time_major = fixed.get("time_major", time_major)
    cell_clip = float(np.float32(rng.uniform(0.3, 10.0))) if rng.integers(0, 3) == 0 else 0.0
    runs = int(rng.integers(2, 4))
    quantized = dtype != "FLOAT32"
    btype = BIAS_TYPE[dtype]
    in_shape = (steps, batches, n_input) if time_major else (batches, steps, n_input)
    out_shape = in_shape[:2] + (n_state,)

    if dtype == "INT8":
        qin = ([float(np.float32(rng.uniform(0.002, 0.05)))], [int(rng.integers(-128, 128))])
        # Hidden state: tanh * sigmoid is in (-1, 1), zero point 0 as the
        # converter makes it; TFLM starts an int8 state at its zero point.
        hzp = int(rng.choice([-1, 1]) * rng.integers(1, 21)) if hidden_zp else 0
        qhidden = ([float(np.float32(rng.uniform(1 / 160, 1 / 100)))], [hzp])
    elif dtype == "INT16":
        qin = ([float(np.float32(rng.uniform(2e-5, 2e-4)))], [0])
        qhidden = ([float(np.float32(rng.uniform(1 / 40000, 1 / 30000)))], [0])
    else:
        qin = qhidden = None
    if quantized:
        # Power of two as the converter makes it; now and then not.
        power = int(rng.choice([-15, -14, -13, -12, -11, -11, -10, -9]))
        cell_scale = 2.0 ** power
        if rng.integers(0, 5) == 0:
            cell_scale *= float(rng.uniform(0.8, 1.3))
        qcell = ([float(np.float32(cell_scale))], [0])
    else:
        qcell = None

    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor(in_shape, dtype, quant=qin, name="input")
    inputs = [x] + [-1] * 23

    def weights(shape):
        if not quantized:
            return sg.tensor(shape, "FLOAT32", data=rng.normal(0, 0.5, shape).astype(np.float32))
        scale = float(np.float32(rng.uniform(0.003, 0.02)))
        return sg.tensor(shape, "INT8", data=random_data(rng, "INT8", shape, -127, 127), quant=([scale], [0]))

    for g in range(4):
        inputs[1 + g] = weights((n_state, n_input))
        inputs[5 + g] = weights((n_state, n_state))
    for g in range(4):
        if not quantized:
            inputs[12 + g] = sg.tensor((n_state,), "FLOAT32", data=rng.normal(0, 0.5, n_state).astype(np.float32))
            continue
        w_scale = sg.tensors[inputs[1 + g]].quant[0][0]
        bscale = qin[0][0] * w_scale
        # Gate biases of a few tenths to about 1 (the forget gate's is near 1).
        real = rng.normal(1.0 if g == 1 else 0.0, 0.5, n_state)
        values = np.clip(np.round(real / bscale), -(1 << 24), 1 << 24)
        inputs[12 + g] = sg.tensor((n_state,), btype, data=values.astype(np.int32 if btype == "INT32" else np.int64),
                                   quant=([float(np.float32(bscale))], [0]))
    inputs[18] = sg.tensor((batches, n_state), dtype, quant=qhidden, name="hidden_state", variable=True)
    inputs[19] = sg.tensor((batches, n_state), "FLOAT32" if not quantized else "INT16", quant=qcell,
                           name="cell_state", variable=True)
    y = sg.tensor(out_shape, dtype, quant=qhidden, name="output")
    sg.op("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y], FusedActivationFunction="TANH", CellClip=cell_clip,
          ProjClip=0.0, TimeMajor=time_major)
    sg.inputs, sg.outputs = [x], [y]
    params = dict(dtype=dtype, batches=batches, steps=steps, n_input=n_input, n_state=n_state,
                  time_major=time_major, cell_clip=cell_clip, runs=runs)
    if quantized:
        params.update(input_q=qin, hidden_q=qhidden, cell_scale=qcell[0][0])
    return Case("", b.build(), params, runs=runs)


@generator("UNIDIRECTIONAL_SEQUENCE_LSTM/float32")
def lstm_float32(rng):
    return _lstm(rng, "FLOAT32")


@generator("UNIDIRECTIONAL_SEQUENCE_LSTM/int8")
def lstm_int8(rng):
    return _lstm(rng, "INT8")


@generator("UNIDIRECTIONAL_SEQUENCE_LSTM/int8_hidden_zero_point")
def lstm_int8_hidden_zp(rng):
    return _lstm(rng, "INT8", hidden_zp=True)


@generator("UNIDIRECTIONAL_SEQUENCE_LSTM/int16")
def lstm_int16(rng):
    return _lstm(rng, "INT16")
