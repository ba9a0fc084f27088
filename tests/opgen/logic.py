"""Comparisons (EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL),
logical ops (LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT) and SELECT_V2, in every
type TFLM's kernels take: broadcast shapes of 1 to 6 dims (TFLM's shapes
hold 6), a constant or scalar second input now and then, values that meet
(equal pairs, NaN, infinities, signed zeros, the type's limits) and int8
quantizations that are equal, that differ, and whose rescaling merges
neighbouring values (scales below 1/256)."""

from __future__ import annotations

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
