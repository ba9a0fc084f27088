"""LOGISTIC and TANH models: float32, int8 and int16, 1 to 4 dimensions,
random input scales and zero points, with the output quantization TFLM
requires (int16: power-of-two scales and non-power-of-two input scales)."""

from __future__ import annotations

import numpy as np

from . import Case, generators, random_data, single_op


def _shape(rng: np.random.Generator) -> tuple:
    return tuple(int(rng.integers(1, 7)) for _ in range(int(rng.integers(1, 5))))


def _act(rng: np.random.Generator, op: str, dtype: str) -> Case:
    shape = _shape(rng)
    qin = qout = None
    inputs = None
    if dtype == "INT8":
        scale = float(np.float32(rng.choice([rng.uniform(0.002, 0.1), rng.uniform(0.1, 0.5)])))
        qin = ([scale], [int(rng.integers(-120, 120))])
        qout = ([1.0 / 256], [-128]) if op == "LOGISTIC" else ([1.0 / 128], [0])
    elif dtype == "INT16":
        kind = str(rng.choice(["pot", "pot", "any"]))
        if kind == "pot":
            # 2^-12 is TFLM's multiplier-free case (tanh also 2^-11); others rescale.
            scale = float(2.0 ** -int(rng.choice([10, 11, 12, 12, 13, 15])))
        else:
            scale = float(np.float32(rng.uniform(0.00002, 0.002)))
        qin = ([scale], [0])
        qout = ([1.0 / 32768], [0])
        inputs = [[random_data(rng, "INT16", shape)] for _ in range(3)]
    else:
        inputs = [[rng.normal(0, float(rng.choice([1.0, 4.0, 12.0])), shape).astype(np.float32)] for _ in range(3)]
    model, _ = single_op(op, [(shape, dtype, None, qin)], [(shape, dtype, qout)])
    return Case("", model, dict(shape=shape, dtype=dtype, qin=qin), inputs=inputs)


generators(_act, {f"{op}/{dtype.lower()}": (op, dtype)
                  for op in ("LOGISTIC", "TANH") for dtype in ("FLOAT32", "INT8", "INT16")})
