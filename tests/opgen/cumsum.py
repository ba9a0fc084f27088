"""CUMSUM: float32 and int8, 1 to 5 dims, every axis (negative too), the axis
constant (scalar or vector) or a model input, exclusive and reverse; float
NaN, inf and sums that overflow to inf. int8
with random scales and zero points (TFLM's extra -zero_point term shows),
and long lines of extreme values whose int32 accumulator wraps as TFLM's."""

from __future__ import annotations

import numpy as np

from . import Case, ErrorCase, act_quant, error_case, generator, single_op


def _values(rng: np.random.Generator, dtype: str, shape, extreme: bool) -> np.ndarray:
    if dtype == "FLOAT32":
        x = rng.normal(0, 10, shape).astype(np.float32)
        if not extreme:
            # One sign of infinity only: inf + -inf makes a NaN whose sign
            # bit differs between x86 and Arm (both as TFLM there); input
            # NaNs pass through sums alike everywhere.
            special = np.array([np.nan, np.inf, 3e38], np.float32)
            mask = rng.random(shape) < 0.05
            x[mask] = rng.choice(special, int(mask.sum()))
        return x
    if extreme:
        # One sign per set, at the limits: the scaled sums pass 2^31.
        return np.full(shape, rng.choice([-128, 127]), np.int8)
    return rng.integers(-128, 128, shape).astype(np.int8)


def _cumsum(rng: np.random.Generator, dtype: str, long: bool = False) -> Case:
    if long:
        shape = (int(rng.integers(1, 3)), int(rng.integers(20, 80)))
        rank = 2
    else:
        while True:
            rank = int(rng.integers(1, 6))
            shape = tuple(int(d) for d in rng.integers(1, 6, rank))
            if int(np.prod(shape)) <= 400:
                break
    axis = rank - 1 if long else int(rng.integers(0, rank))
    spelled = axis - rank if rng.random() < 0.4 else axis
    exclusive, reverse = bool(rng.integers(0, 2)), bool(rng.integers(0, 2))
    qin = qout = None
    if dtype == "INT8":
        qin = act_quant(rng, dtype, scale_range=(0.01, 0.2))
        qout = act_quant(rng, dtype, scale_range=(0.05, 2.0) if long else (0.01, 0.5))
    how = str(rng.choice(["scalar", "vector", "input"]))
    if how == "scalar":
        axis_t = ((), "INT32", np.array(spelled, np.int32))
    elif how == "vector":
        axis_t = ((1,), "INT32", np.array([spelled], np.int32))
    else:
        axis_t = ((1,), "INT32")
    model, _ = single_op("CUMSUM", [(shape, dtype, None, qin), axis_t], [(shape, dtype, qout)],
                         Exclusive=exclusive, Reverse=reverse)
    rs = np.random.default_rng(int(rng.integers(1 << 30)))
    inputs = []
    for _ in range(3):
        x = _values(rs, dtype, shape, long)
        inputs.append([x, np.array([spelled], np.int32)] if how == "input" else [x])
    return Case("", model, dict(dtype=dtype, shape=shape, axis=spelled, axis_tensor=how, exclusive=exclusive,
                                reverse=reverse, quant=(qin, qout)), inputs=inputs)


for _dt in ("FLOAT32", "INT8"):
    generator(f"CUMSUM/{_dt.lower()}")(lambda rng, dt=_dt: _cumsum(rng, dt))
generator("CUMSUM/int8_long")(lambda rng: _cumsum(rng, "INT8", long=True))
generator("CUMSUM/float32_long")(lambda rng: _cumsum(rng, "FLOAT32", long=True))


@error_case("CUMSUM/axis_out_of_range")
def _axis_range():
    model, _ = single_op("CUMSUM", [((2, 3), "FLOAT32"), ((1,), "INT32")], [((2, 3), "FLOAT32", None)])
    return ErrorCase("", model, [np.zeros((2, 3), np.float32), np.array([-3], np.int32)],
                     "RuntimeError axis -3 is out of range")


@error_case("CUMSUM/int16")
def _int16():
    q = ([0.1], [0])
    model, _ = single_op("CUMSUM", [((2, 3), "INT16", None, q), ((), "INT32", np.array(1, np.int32))],
                         [((2, 3), "INT16", q)])
    return ErrorCase("", model, [np.zeros((2, 3), np.int16)], "NotImplementedError input of type int16")
