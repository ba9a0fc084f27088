"""Comparisons (EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL),
logical ops (LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT) and SELECT_V2, in every
type TFLM's kernels take: broadcast shapes of 1 to 6 dims (TFLM's shapes
hold 6), a constant or scalar second input now and then, values that meet
(equal pairs, NaN, infinities, signed zeros, the type's limits) and int8
quantizations that are equal, that differ, and whose rescaling merges
neighbouring values (scales below 1/256)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from . import Case, generator, random_data, single_op
from .elementwise import NP, broadcast_shapes

COMPARISONS = ["EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL"]
MAX_RANK = 6

FLOAT_POOL = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.5, np.inf, -np.inf, np.nan,
                       np.float32(1e-45), 3.4028235e38], np.float32)


def edge_values(rng: np.random.Generator, dtype: str, shape) -> np.ndarray:
    """Values of `dtype` that often meet: a small pool with the type's
    limits (and NaN, infinities, signed zeros for floats), mixed with
    random ones."""
    if dtype == "BOOL":
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype == "FLOAT32":
        pool = FLOAT_POOL
        other = rng.normal(0, 2, shape).astype(np.float32)
    elif dtype == "INT8":
        pool = np.array([-128, 127, 0, -1, 1, 5], np.int8)
        other = random_data(rng, dtype, shape)
    else:
        info = np.iinfo(NP[dtype])
        pool = np.array([info.min, info.max, info.min + 1, 0, -1, 1, 2, 3], NP[dtype])
        other = rng.integers(-4, 5, shape).astype(NP[dtype])
    picked = pool[rng.integers(0, len(pool), shape)]
    return np.where(rng.random(shape) < 0.5, picked, other).astype(NP[dtype])


def int8_quant(rng: np.random.Generator) -> tuple[list[float], list[int]]:
    """A scale below 1 (TFLM's comparisons require it), now and then below
    1/256 so that rescaling merges neighbouring values."""
    scale = float(np.float32(rng.uniform(0.0005, 0.004) if rng.random() < 0.3 else rng.uniform(0.004, 0.99)))
    return [scale], [int(rng.integers(-128, 128))]


def _comparison(rng: np.random.Generator, op: str, dtype: str) -> Case:
    const2 = rng.random() < 0.2
    s1, s2, so = broadcast_shapes(rng, scalar2=const2, max_rank=MAX_RANK)
    q1 = q2 = None
    if dtype == "INT8":
        q1 = int8_quant(rng)
        q2 = q1 if rng.random() < 0.4 else int8_quant(rng)
    data2 = edge_values(rng, dtype, s2) if const2 else None
    model, _ = single_op(op, [(s1, dtype, None, q1), (s2, dtype, data2, q2)], [(so, "BOOL", None)])
    sets = []
    for _ in range(3):
        a = edge_values(rng, dtype, s1)
        if const2:
            sets.append([a])
            continue
        b = edge_values(rng, dtype, s2)
        # Some pairs equal where the shapes line up elementwise.
        if s1 == s2:
            same = rng.random(s1) < 0.3
            b = np.where(same, a, b).astype(a.dtype)
        sets.append([a, b])
    return Case("", model, dict(op=op, dtype=dtype, shapes=(s1, s2, so), quant=(q1, q2), const2=const2),
                inputs=sets)


def _register_comparisons():
    for op in COMPARISONS:
        types = ["FLOAT32", "INT32", "INT64", "INT8"]
        if op in ("EQUAL", "NOT_EQUAL"):
            types.append("BOOL")
        for dt in types:
            def gen(rng, op=op, dt=dt):
                return _comparison(rng, op, dt)
            generator(f"{op}/{dt.lower()}")(gen)


_register_comparisons()


# -- logical ops ----------------------------------------------------------------

def binary_case(rng: np.random.Generator, op: str, dtype: str,
                values: Callable[[np.random.Generator, tuple, bool], np.ndarray]) -> Case:
    """An op of two unquantized inputs of `dtype` and broadcast shapes, the
    second a constant now and then; values(rng, shape, second) makes each
    input's values (second: for the second input)."""
    const2 = rng.random() < 0.2
    s1, s2, so = broadcast_shapes(rng, scalar2=const2, max_rank=MAX_RANK)
    data2 = values(rng, s2, True) if const2 else None
    model, _ = single_op(op, [(s1, dtype, None, None), (s2, dtype, data2, None)], [(so, dtype, None)])
    sets = [[values(rng, s1, False)] + ([] if const2 else [values(rng, s2, True)]) for _ in range(3)]
    return Case("", model, dict(op=op, shapes=(s1, s2, so), const2=const2), inputs=sets)


def _logical(rng: np.random.Generator, op: str) -> Case:
    return binary_case(rng, op, "BOOL", lambda r, shape, second: edge_values(r, "BOOL", shape))


@generator("LOGICAL_AND/bool")
def logical_and(rng):
    return _logical(rng, "LOGICAL_AND")


@generator("LOGICAL_OR/bool")
def logical_or(rng):
    return _logical(rng, "LOGICAL_OR")


@generator("LOGICAL_NOT/bool")
def logical_not(rng):
    _, _, shape = broadcast_shapes(rng, max_rank=MAX_RANK)
    model, _ = single_op("LOGICAL_NOT", [(shape, "BOOL", None, None)], [(shape, "BOOL", None)])
    return Case("", model, dict(shape=shape), inputs=[[edge_values(rng, "BOOL", shape)] for _ in range(3)])


# -- SELECT_V2 --------------------------------------------------------------------

def select_shapes(rng: np.random.Generator, max_elements: int = 300):
    """Condition, x and y shapes that broadcast to the output's (each aligned
    on the last dimension, each dim the output's or 1); now and then all of
    one element with different ranks (TFLM's special case)."""
    if rng.random() < 0.1:
        ranks = rng.integers(0, 3, 3)
        ranks[1] = max(ranks[1], 1)  # x is fed: not a scalar
        return tuple(tuple([1] * int(r)) for r in ranks) + ((1,),)
    while True:
        rank = int(rng.integers(1, MAX_RANK + 1))
        out = [int(d) for d in rng.integers(1, 5, rank)]
        if int(np.prod(out)) <= max_elements:
            break
    shapes = []
    for _ in range(3):
        r = rank if rng.random() < 0.5 else int(rng.integers(0, rank + 1))
        shapes.append(tuple(1 if rng.random() < 0.4 else d for d in out[rank - r:]))
    full = [1] * rank
    for s in shapes:
        for i, d in enumerate(s):
            k = rank - len(s) + i
            full[k] = max(full[k], d)
    used = max(len(s) for s in shapes)
    return shapes[0], shapes[1], shapes[2], tuple(full[rank - used:]) if used else (1,)


def _select(rng: np.random.Generator, dtype: str) -> Case:
    sc, sx, sy, so = select_shapes(rng)
    quant = {"INT8": lambda: ([float(np.float32(rng.uniform(0.01, 0.5)))], [int(rng.integers(-100, 100))]),
             "INT16": lambda: ([float(np.float32(rng.uniform(0.001, 0.05)))], [0])}.get(dtype)
    qx, qy, qo = (quant(), quant(), quant()) if quant else (None, None, None)
    # Scalars cannot be fed to TFLM's Python interpreter: they are constants.
    specs = []
    for shape, dt, q in ((sc, "BOOL", None), (sx, dtype, qx), (sy, dtype, qy)):
        const = len(shape) == 0 or (dt != dtype or shape != sx) and rng.random() < 0.15
        specs.append((shape, dt, edge_values(rng, dt, shape) if const else None, q))
    model, _ = single_op("SELECT_V2", specs, [(so, dtype, qo)])
    sets = [[edge_values(rng, dt, shape) for shape, dt, data, _ in specs if data is None] for _ in range(3)]
    return Case("", model, dict(dtype=dtype, shapes=(sc, sx, sy, so), quant=(qx, qy, qo),
                                consts=[s[2] is not None for s in specs]), inputs=sets)


for _dt in ("FLOAT32", "INT8", "INT16"):
    def _select_gen(rng, dt=_dt):
        return _select(rng, dt)
    generator(f"SELECT_V2/{_dt.lower()}")(_select_gen)
