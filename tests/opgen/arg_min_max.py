"""ARG_MAX and ARG_MIN: float32 and int8 inputs of 1 to 5 dimensions, every
axis (negative spellings too), the axis constant (scalar, vector, or a
vector whose later values TFLM ignores) or a model input, int32 indices,
and int64 ones (what TensorFlow's converter gives by default), which TFLM
refuses: their reference is TFLM's int32 indices of the same model (the
case's twin). Values with many ties, NaN and infinities (float) and the
type's limits (int8), so the first-index and NaN rules are exercised."""

from __future__ import annotations

import numpy as np

from . import Case, ErrorCase, act_quant, error_case, generator, single_op

SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 3.4028235e38, -3.4028235e38, 1e-45], np.float32)


def values(rng: np.random.Generator, dtype: str, shape) -> np.ndarray:
    """Input values with ties and specials."""
    if dtype == "FLOAT32":
        pick = rng.integers(0, 4, shape)
        ties = rng.integers(-2, 3, shape).astype(np.float32)
        return np.where(pick == 0, rng.choice(SPECIAL, shape),
                        np.where(pick == 1, ties, rng.normal(0, 10, shape))).astype(np.float32)
    pick = rng.integers(0, 3, shape)
    ties = rng.integers(-2, 3, shape)
    limits = rng.choice([-128, 127], shape)
    return np.where(pick == 0, limits, np.where(pick == 1, ties, rng.integers(-128, 128, shape))).astype(np.int8)


def _arg(rng: np.random.Generator, op: str, dtype: str, indices: str = "INT32") -> Case:
    while True:
        rank = int(rng.integers(1, 6))
        shape = tuple(int(d) for d in rng.integers(1, 6, rank))
        if int(np.prod(shape)) <= 400:
            break
    axis = int(rng.integers(0, rank))
    spelled = axis - rank if rng.random() < 0.4 else axis
    out_shape = shape[:axis] + shape[axis + 1:]
    q = act_quant(rng, dtype) if dtype == "INT8" else None
    how = str(rng.choice(["scalar", "vector", "longer", "input"]))
    if how == "scalar":
        axis_t = ((), "INT32", np.array(spelled, np.int32))
    elif how == "vector":
        axis_t = ((1,), "INT32", np.array([spelled], np.int32))
    elif how == "longer":
        # TFLM reads the first value only.
        axis_t = ((2,), "INT32", np.array([spelled, int(rng.integers(-9, 9))], np.int32))
    else:
        axis_t = ((1,), "INT32")
    ins = [(shape, dtype, None, q), axis_t]
    model, _ = single_op(op, ins, [(out_shape, indices, None)], OutputType=indices)
    twin = single_op(op, ins, [(out_shape, "INT32", None)], OutputType="INT32")[0] if indices != "INT32" else None
    rs = np.random.default_rng(int(rng.integers(1 << 30)))
    sets = []
    for _ in range(3):
        x = values(rs, dtype, shape)
        if how == "input":
            # Any axis of the same extent gives as many outputs: TFLM takes it.
            same = [a for a in range(rank) if shape[a] == shape[axis]]
            a = int(rs.choice(same))
            sets.append([x, np.array([a - rank if rs.random() < 0.4 else a], np.int32)])
        else:
            sets.append([x])
    return Case("", model, dict(dtype=dtype, shape=shape, axis=spelled, axis_tensor=how, indices=indices),
                inputs=sets, twin=twin)


for _op in ("ARG_MAX", "ARG_MIN"):
    for _dt in ("FLOAT32", "INT8"):
        generator(f"{_op}/{_dt.lower()}")(lambda rng, op=_op, dt=_dt: _arg(rng, op, dt))
        generator(f"{_op}/{_dt.lower()}_int64")(lambda rng, op=_op, dt=_dt: _arg(rng, op, dt, "INT64"))


# -- what TFLM refuses, and computed axes that do not fit ----------------------

def _model(in_type: str, out_type: str, axis_t, shape=(2, 3), out_shape=(2,)) -> bytes:
    q = ([0.1], [0]) if in_type in ("INT8", "INT16") else None
    model, _ = single_op("ARG_MAX", [(shape, in_type, None, q), axis_t], [(out_shape, out_type, None)])
    return model


@error_case("ARG_MAX/int16_output")
def _int16_out():
    axis = ((1,), "INT32", np.array([1], np.int32))
    return ErrorCase("", _model("FLOAT32", "INT16", axis), [np.zeros((2, 3), np.float32)],
                     "NotImplementedError output of type int16")


@error_case("ARG_MIN/int16_input")
def _int16_in():
    axis = ((1,), "INT32", np.array([1], np.int32))
    model, _ = single_op("ARG_MIN", [((2, 3), "INT16", None, ([0.1], [0])), axis], [((2,), "INT32", None)])
    return ErrorCase("", model, [np.zeros((2, 3), np.int16)], "NotImplementedError input of type int16")


@error_case("ARG_MAX/axis_out_of_range")
def _axis_range():
    return ErrorCase("", _model("FLOAT32", "INT32", ((1,), "INT32")),
                     [np.zeros((2, 3), np.float32), np.array([2], np.int32)],
                     "RuntimeError axis 2 does not fit", tflm=False,
                     why="TFLM reads the extent of dimension 2 of a 2-D shape")


@error_case("ARG_MAX/axis_gives_more_outputs")
def _axis_count():
    return ErrorCase("", _model("INT8", "INT32", ((1,), "INT32")),
                     [np.zeros((2, 3), np.int8), np.array([0], np.int32)],
                     "RuntimeError axis 0 does not fit", tflm=False,
                     why="TFLM writes 3 indices into the 2 of the output")


@error_case("ARG_MAX/constant_axis_out_of_range")
def _const_axis():
    axis = ((), "INT32", np.array(-3, np.int32))
    return ErrorCase("", _model("FLOAT32", "INT32", axis), [np.zeros((2, 3), np.float32)],
                     "ValueError axis -3 does not fit", tflm=False,
                     why="TFLM reads the extent of dimension -1")
