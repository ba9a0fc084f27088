"""SOFTMAX models: float32, int8 -> int8, int8 -> int16 and int16 -> int16,
1 to 4 dimensions, random betas and input scales, with the output
quantization TFLM requires."""

from __future__ import annotations

import numpy as np

from . import Case, generators, random_data, single_op


def _shape(rng: np.random.Generator) -> tuple:
    ndims = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 5)) for _ in range(ndims - 1)]
    # The softmax axis: sometimes long, as in classifiers.
    depth = int(rng.integers(1, 12)) if rng.integers(0, 3) else int(rng.integers(12, 300))
    return tuple(shape + [depth])


def _softmax(rng: np.random.Generator, in_type: str, out_type: str) -> Case:
    shape = _shape(rng)
    # Mostly 1; large betas make TFLM cap the int8 multiplier.
    beta = float(np.float32(rng.choice([1.0, 1.0, rng.uniform(0.1, 3.0), rng.uniform(20.0, 300.0)])))
    qin = qout = None
    data = None
    if in_type == "INT8":
        scale = float(np.float32(rng.uniform(0.01, 0.3)))
        qin = ([scale], [int(rng.integers(-100, 100))])
        # TFLM needs beta * scale * 2^26 > 1.
        beta = max(beta, 0.1)
    elif in_type == "INT16":
        scale = float(np.float32(rng.uniform(0.0001, 0.01)))
        qin = ([scale], [0])
    if out_type == "INT8":
        qout = ([1.0 / 256], [-128])
    elif out_type == "INT16":
        qout = ([1.0 / 65536], [-32768]) if in_type == "INT8" else ([1.0 / 32768], [0])
    inputs = None
    if in_type == "INT16":
        # Differences that span the whole exp table and beyond.
        spread = int(rng.choice([200, 3000, 32767]))
        data = [random_data(rng, "INT16", shape, -spread, spread) for _ in range(3)]
        inputs = [[x] for x in data]
    elif in_type == "FLOAT32":
        inputs = [[(rng.normal(0, float(rng.choice([1.0, 5.0, 20.0])), shape)).astype(np.float32)] for _ in range(3)]
    model, _ = single_op("SOFTMAX", [(shape, in_type, None, qin)], [(shape, out_type, qout)], Beta=beta)
    return Case("", model, dict(shape=shape, beta=beta, input=in_type, output=out_type,
                                qin=qin), inputs=inputs)


generators(_softmax, {"SOFTMAX/float32": ("FLOAT32", "FLOAT32"), "SOFTMAX/int8": ("INT8", "INT8"),
                      "SOFTMAX/int8_int16": ("INT8", "INT16"), "SOFTMAX/int16": ("INT16", "INT16")})
