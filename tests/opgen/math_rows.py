"""LOG_SOFTMAX and L2_NORMALIZATION over the last dimension, float32 and int8.

Float rows are ordinary, or hold one kind of special each: +inf or -inf
(inf - inf, x / inf; the first input set's last row is all -inf), one NaN
payload, huge values (squares overflow), all zeros or tiny values (the L2
norm's epsilon), equal values. (A row
never mixes two NaN payloads: x86 then keeps the one its compiler's
operand order picks.) int8 rows cover input scales from the smallest to
where TFLM caps the multiplier, and depths up to 70."""

from __future__ import annotations

import numpy as np

from . import Case, act_quant, generator, random_data, single_op

_ROW_KINDS = ["normal", "normal", "wide", "inf", "-inf", "nan", "huge", "zeros", "tiny", "equal"]


def _shape(rng: np.random.Generator) -> tuple:
    rank = int(rng.integers(1, 5))
    dims = [int(d) for d in rng.integers(1, 5, rank - 1)] + [int(rng.integers(1, 30))]
    return tuple(dims)


def _float_rows(rng: np.random.Generator, shape: tuple, first: bool) -> np.ndarray:
    depth = shape[-1]
    rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
    x = rng.normal(0, 3, (rows, depth)).astype(np.float32)
    for r in range(rows):
        # The first set gives the specials to its first rows, in turn.
        kind = _ROW_KINDS[3 + r % 7] if first else str(rng.choice(_ROW_KINDS))
        k = int(rng.integers(1, depth + 1))
        pos = rng.choice(depth, k, replace=False)
        if kind == "wide":
            x[r] = rng.normal(0, 50, depth)
        elif kind in ("inf", "-inf"):
            x[r, pos] = np.float32(np.inf if kind == "inf" else -np.inf)
        elif kind == "nan":
            x[r, pos] = np.array([0x7FC00000 if rng.random() < 0.5 else 0xFFC00000], np.uint32).view(np.float32)[0]
        elif kind == "huge":
            x[r, pos] = rng.choice([1e20, -3e19, 2e38, -1e30], k).astype(np.float32)
        elif kind == "zeros":
            x[r] = rng.choice(np.array([0.0, -0.0], np.float32), depth)
        elif kind == "tiny":
            x[r] = rng.choice(np.array([1e-7, -3e-7, 0.0, 1e-40, -5e-8], np.float32), depth)
        elif kind == "equal":
            x[r] = np.float32(rng.normal(0, 10))
    if first and rows > 1:
        # A row of -inf only: LOG_SOFTMAX's sum of exps is 0 there, its log -inf.
        x[rows - 1] = -np.inf
    return x.reshape(shape)


def _float_case(rng: np.random.Generator, op: str) -> Case:
    shape = _shape(rng)
    model, _ = single_op(op, [(shape, "FLOAT32", None, None)], [(shape, "FLOAT32", None)])
    inputs = [[_float_rows(rng, shape, s == 0)] for s in range(3)]
    return Case("", model, dict(shape=shape), inputs=inputs)


@generator("LOG_SOFTMAX/float32")
def log_softmax_float32(rng):
    return _float_case(rng, "LOG_SOFTMAX")


@generator("L2_NORMALIZATION/float32")
def l2_normalization_float32(rng):
    return _float_case(rng, "L2_NORMALIZATION")


def _int8_rows(rng: np.random.Generator, shape: tuple, zero_point: int) -> list[list[np.ndarray]]:
    """Random rows, some constant, some at the zero point, some at the extremes."""
    sets = []
    for _ in range(3):
        x = random_data(rng, "INT8", shape).reshape(-1, shape[-1])
        for r in range(x.shape[0]):
            kind = int(rng.integers(0, 6))
            if kind == 0:
                x[r] = np.int8(rng.integers(-128, 128))
            elif kind == 1:
                x[r] = np.int8(zero_point)
            elif kind == 2:
                x[r] = rng.choice(np.array([-128, 127], np.int8), x.shape[1])
            elif kind == 3:
                x[r, 0] = 127  # one large value: the others' exps vanish
                x[r, 1:] = -128
        sets.append([x.reshape(shape)])
    return sets


@generator("LOG_SOFTMAX/int8")
def log_softmax_int8(rng):
    shape = _shape(rng)
    if rng.random() < 0.3:
        shape = shape[:-1] + (int(rng.integers(40, 71)),)
    # From tiny (few differences reach the exp's range) to beyond the cap.
    scale = float(np.float32(np.exp(rng.uniform(np.log(1e-3), np.log(40.0)))))
    qin = ([scale], [int(rng.integers(-128, 128))])
    model, _ = single_op("LOG_SOFTMAX", [(shape, "INT8", None, qin)], [(shape, "INT8", ([16.0 / 256], [127]))])
    return Case("", model, dict(shape=shape, qin=qin), inputs=_int8_rows(rng, shape, qin[1][0]))


@generator("L2_NORMALIZATION/int8")
def l2_normalization_int8(rng):
    shape = _shape(rng)
    if rng.random() < 0.3:
        shape = shape[:-1] + (int(rng.integers(40, 71)),)
    qin = act_quant(rng, "INT8", (0.005, 0.5))
    # Converters give 1/128 and 0; TFLM reads the output so whatever it says.
    qout = ([1.0 / 128], [0]) if rng.random() < 0.7 else act_quant(rng, "INT8", (0.005, 0.5))
    model, _ = single_op("L2_NORMALIZATION", [(shape, "INT8", None, qin)], [(shape, "INT8", qout)])
    return Case("", model, dict(shape=shape, qin=qin, qout=qout), inputs=_int8_rows(rng, shape, qin[1][0]))
