"""MEAN and SUM: float32, int8, int16; 1 to 5 dims, one to all axes
(negative and repeated ones too), keep_dims on and off, output quantization
equal to the input's or not, and TFLM's 4D height-and-width mean.
REDUCE_MAX and REDUCE_MIN (float32, int8) and REDUCE_ALL (bool): 1 to 6
dims, NaN, infinities and -0.0, the int8 limits, empty reduced dimensions."""

from __future__ import annotations

import numpy as np

from . import Case, ErrorCase, act_quant, error_case, generator, random_shape, single_op


def _random_axes(rng: np.random.Generator, rank: int) -> list[int]:
    """One to all of the axes, in any order; some spelled negative, the
    first now and then again (both resolve to the same axes)."""
    n_axes = int(rng.integers(1, rank + 1))
    axes = [int(a) for a in rng.choice(rank, n_axes, replace=False)]
    axes = [a - rank if rng.random() < 0.3 else a for a in axes]
    if rng.random() < 0.15:
        axes.append(axes[0])
    return axes


def _reduced_shape(shape: tuple[int, ...], axes: list[int], keep: bool) -> tuple[int, ...]:
    """The output's shape: the reduced axes kept as 1, or left out."""
    resolved = {a % len(shape) for a in axes}
    if keep:
        return tuple(1 if i in resolved else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in resolved)


def _reduce(rng: np.random.Generator, op: str, dtype: str, special: bool = False) -> Case:
    if special:
        # TFLM's 4D mean over height and width (its own float path).
        shape = (int(rng.integers(1, 3)), int(rng.integers(1, 6)), int(rng.integers(1, 6)), int(rng.integers(1, 9)))
        axes = [1, 2] if rng.random() < 0.5 else [2, 1]
        keep = True
    else:
        shape = random_shape(rng, 1, 5, 5, 600)
        axes = _random_axes(rng, len(shape))
        keep = bool(rng.integers(0, 2))
    out_shape = _reduced_shape(shape, axes, keep)
    qin = qout = None
    same = False
    if dtype != "FLOAT32":
        qin = act_quant(rng, dtype, scale_range=(0.01, 0.2))
        same = op == "MEAN" and rng.random() < 0.35
        qout = qin if same else act_quant(rng, dtype, scale_range=(0.01, 0.2))
    axis_data = np.array(axes, dtype=np.int32)
    model, _ = single_op(op, [(shape, dtype, None, qin), ((len(axes),), "INT32", axis_data, None)],
                         [(out_shape, dtype, qout)], KeepDims=keep)
    return Case("", model, dict(dtype=dtype, shape=shape, axes=axes, keep_dims=keep, same_quant=same,
                                quant=(qin, qout)))


for _op in ("MEAN", "SUM"):
    for _dt in ("FLOAT32", "INT8", "INT16"):
        def _gen(rng, op=_op, dt=_dt):
            return _reduce(rng, op, dt)
        generator(f"{_op}/{_dt.lower()}")(_gen)
    for _dt in ("FLOAT32", "INT8"):
        def _gen4(rng, op=_op, dt=_dt):
            return _reduce(rng, op, dt, special=True)
        generator(f"{_op}/{_dt.lower()}_4d_hw")(_gen4)


# -- REDUCE_MAX, REDUCE_MIN (float32, int8), REDUCE_ALL (bool) -------------------

SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 3.4028235e38, -3.4028235e38], np.float32)


def _extreme_values(rng: np.random.Generator, dtype: str, shape) -> np.ndarray:
    """Inputs with NaN, infinities and -0.0 (float), the type's limits (int8),
    mostly True (bool, so that all-True reductions happen)."""
    if dtype == "FLOAT32":
        pick = rng.integers(0, 4, shape)
        return np.where(pick == 0, rng.choice(SPECIAL, shape), rng.normal(0, 10, shape)).astype(np.float32)
    if dtype == "BOOL":
        return rng.random(shape) < 0.85
    pick = rng.integers(0, 3, shape)
    return np.where(pick == 0, rng.choice([-128, 127], shape), rng.integers(-128, 128, shape)).astype(np.int8)


def _reduce_extreme(rng: np.random.Generator, op: str, dtype: str) -> Case:
    shape = random_shape(rng, 1, 6, 4, 400)
    axes = _random_axes(rng, len(shape))
    keep = bool(rng.integers(0, 2))
    out_shape = _reduced_shape(shape, axes, keep)
    q = act_quant(rng, dtype) if dtype == "INT8" else None
    model, _ = single_op(op, [(shape, dtype, None, q), ((len(axes),), "INT32", np.array(axes, np.int32))],
                         [(out_shape, dtype, q)], KeepDims=keep)
    rs = np.random.default_rng(int(rng.integers(1 << 30)))
    inputs = [[_extreme_values(rs, dtype, shape)] for _ in range(3)]
    return Case("", model, dict(dtype=dtype, shape=shape, axes=axes, keep_dims=keep), inputs=inputs)


for _op, _types in (("REDUCE_MAX", ("FLOAT32", "INT8")), ("REDUCE_MIN", ("FLOAT32", "INT8")),
                    ("REDUCE_ALL", ("BOOL",))):
    for _dt in _types:
        generator(f"{_op}/{_dt.lower()}")(lambda rng, op=_op, dt=_dt: _reduce_extreme(rng, op, dt))


def _reduce_edge(rng: np.random.Generator, op: str) -> Case:
    """An empty reduced dimension (every output is the start value), a float
    input of NaN and infinities only (-FLT_MAX out of all NaN or -inf), or
    no axes at all (each value against the start value)."""
    dtype = "BOOL" if op == "REDUCE_ALL" else str(rng.choice(["FLOAT32", "INT8"]))
    q = act_quant(rng, dtype) if dtype == "INT8" else None
    kind = str(rng.choice(["empty", "specials", "no_axes"]))
    if kind == "empty":
        shape, axes = (int(rng.integers(1, 4)), 0, int(rng.integers(1, 4))), [1]
        out_shape = (shape[0], shape[2])
    elif kind == "specials":
        shape, axes = (int(rng.integers(1, 5)), int(rng.integers(1, 5))), [-1]
        out_shape = (shape[0],)
    else:
        shape, axes = (int(rng.integers(1, 5)), int(rng.integers(1, 5))), []
        out_shape = shape
    model, _ = single_op(op, [(shape, dtype, None, q), ((len(axes),), "INT32", np.array(axes, np.int32))],
                         [(out_shape, dtype, q)], KeepDims=False)
    rs = np.random.default_rng(int(rng.integers(1 << 30)))
    if kind != "empty" and dtype == "FLOAT32":
        inputs = [[rs.choice(np.array([np.nan, -np.inf, np.inf], np.float32), shape)] for _ in range(3)]
    else:
        inputs = [[_extreme_values(rs, dtype, shape)] for _ in range(3)]
    return Case("", model, dict(op=op, dtype=dtype, shape=shape, kind=kind), inputs=inputs)


for _op in ("REDUCE_MAX", "REDUCE_MIN", "REDUCE_ALL"):
    generator(f"{_op}/edge")(lambda rng, op=_op: _reduce_edge(rng, op))


# -- what TFLM refuses, and what this engine does not take -------------------------

def _reduce_model(op, dtype, qin=None, qout=None, axes_const=True) -> bytes:
    axes = ((1,), "INT32", np.array([1], np.int32)) if axes_const else ((1,), "INT32")
    model, _ = single_op(op, [((2, 3), dtype, None, qin), axes], [((2,), dtype, qout)], KeepDims=False)
    return model


@error_case("REDUCE_MAX/int8_requantized")
def _max_requant():
    model = _reduce_model("REDUCE_MAX", "INT8", ([0.1], [1]), ([0.1], [2]))
    return ErrorCase("", model, [np.zeros((2, 3), np.int8)],
                     "ValueError the output's quantization differs from the input's")


@error_case("REDUCE_MIN/int16")
def _min_int16():
    model = _reduce_model("REDUCE_MIN", "INT16", ([0.1], [0]), ([0.1], [0]))
    return ErrorCase("", model, [np.zeros((2, 3), np.int16)], "NotImplementedError input of type int16")


@error_case("REDUCE_ALL/float32")
def _all_float():
    return ErrorCase("", _reduce_model("REDUCE_ALL", "FLOAT32"), [np.zeros((2, 3), np.float32)],
                     "NotImplementedError input of type float32")


@error_case("REDUCE_MAX/computed_axes")
def _max_computed_axes():
    return ErrorCase("", _reduce_model("REDUCE_MAX", "FLOAT32", axes_const=False),
                     [np.zeros((2, 3), np.float32), np.array([1], np.int32)],
                     "NotImplementedError axes must be a constant tensor", tflm=False,
                     why="TFLM takes axes computed at run time; this engine plans the loops in prepare(), "
                         "as for MEAN and SUM")


@error_case("MEAN/empty_input_huge_dims")
def _mean_empty_huge():
    # A zero batch would leave the other dimensions unbounded: the reduced
    # ones, merged, overflowed int32 (the engine's fuzzer, seed 8,
    # MEAN_float32_4d_hw_0 case 595). The model reader bounds the product
    # of a tensor's dimensions other than zeros.
    shape = (0, 536870917, 4, 6)
    model, _ = single_op("MEAN", [(shape, "FLOAT32", None, None), ((2,), "INT32", np.array([1, 2], np.int32), None)],
                         [((0, 1, 1, 6), "FLOAT32", None)], KeepDims=True)
    return ErrorCase("", model, [np.zeros(shape, np.float32)],
                     "ValueError malformed model: tensor 0 of subgraph 0 has a negative or too large shape")
