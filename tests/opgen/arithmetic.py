"""FLOOR_DIV, FLOOR_MOD (float32, TFLM's only type), SQUARED_DIFFERENCE
(float32, int32, int8, int16) and ADD_N (float32, int8): broadcast shapes of
1 to 6 dims, a constant or scalar second input now and then, NaN (with
payloads and signs), infinities, signed zeros, subnormals and huge values,
int32 squares that wrap, int8/int16 scales and zero points over TFLM's
ranges, and ADD_N sums of up to 20 inputs (past the reference's int32
range)."""

from __future__ import annotations

import numpy as np

from . import Case, generator, random_data, single_op
from .elementwise import broadcast_shapes
from .logic import MAX_RANK, binary_case

# Quiet and signalling NaNs of both signs with payloads, infinities, signed
# zeros, subnormals, huge and ordinary values.
FLOAT_SPECIAL = np.array([0x7fc00001, 0xffc00002, 0x7f800003, 0x7f800000, 0xff800000, 0x00000000, 0x80000000,
                          0x00000001, 0x80000005, 0x7f7fffff, 0xff7fffff, 0x3f800000, 0xc0400000, 0x4b800001],
                         np.uint32).view(np.float32)


def float_values(rng: np.random.Generator, shape, special: float = 0.25, zero: bool = True) -> np.ndarray:
    """Mostly ordinary values (multiples of 0.5 now and then, so that
    quotients land on integers), some special ones; no zeros unless `zero`."""
    v = rng.normal(0, 4, shape).astype(np.float32)
    halves = (rng.integers(-12, 13, shape) * 0.5).astype(np.float32)
    v = np.where(rng.random(shape) < 0.3, halves, v)
    v = np.where(rng.random(shape) < special, FLOAT_SPECIAL[rng.integers(0, len(FLOAT_SPECIAL), shape)], v)
    if not zero:
        v = np.where((v.view(np.uint32) & 0x7fffffff) == 0, np.float32(1.5), v)
    return v.astype(np.float32)


def _floor(rng: np.random.Generator, op: str) -> Case:
    # FLOOR_DIV fails on any zero divisor (tested apart); FLOOR_MOD gives NaN.
    zero = op == "FLOOR_MOD"
    return binary_case(rng, op, "FLOAT32", lambda r, shape, second: float_values(r, shape, zero=zero or not second))


@generator("FLOOR_DIV/float32")
def floor_div(rng):
    return _floor(rng, "FLOOR_DIV")


@generator("FLOOR_MOD/float32")
def floor_mod(rng):
    return _floor(rng, "FLOOR_MOD")


# -- SQUARED_DIFFERENCE -----------------------------------------------------------

def _sqd_quant(rng: np.random.Generator, dtype: str):
    """Input and output quantizations: the output's scale near the squares'."""
    if dtype == "INT8":
        s1, s2 = (float(np.float32(rng.uniform(0.005, 0.2))) for _ in range(2))
        zps = [int(rng.integers(-128, 128)) for _ in range(3)]
        so = float(np.float32(max(s1, s2) ** 2 * rng.uniform(20, 3000)))
    else:
        s1, s2 = (float(np.float32(rng.uniform(0.0002, 0.01))) for _ in range(2))
        zps = [0, 0, 0]
        so = float(np.float32(max(s1, s2) ** 2 * rng.uniform(500, 200000)))
    return ([s1], [zps[0]]), ([s2], [zps[1]]), ([so], [zps[2]])


def sqd_values(rng: np.random.Generator, dtype: str, shape) -> np.ndarray:
    if dtype == "FLOAT32":
        return float_values(rng, shape)
    if dtype == "INT32":
        # Small differences, and large ones whose squares wrap.
        big = rng.integers(-2**31, 2**31, shape, dtype=np.int64)
        small = rng.integers(-50000, 50000, shape)
        return np.where(rng.random(shape) < 0.4, big, small).astype(np.int32)
    return random_data(rng, dtype, shape)


def _sqd(rng: np.random.Generator, dtype: str) -> Case:
    const2 = rng.random() < 0.2
    s1, s2, so = broadcast_shapes(rng, scalar2=const2, max_rank=MAX_RANK)
    q1 = q2 = qo = None
    if dtype in ("INT8", "INT16"):
        q1, q2, qo = _sqd_quant(rng, dtype)
    data2 = sqd_values(rng, dtype, s2) if const2 else None
    model, _ = single_op("SQUARED_DIFFERENCE", [(s1, dtype, None, q1), (s2, dtype, data2, q2)], [(so, dtype, qo)])
    sets = [[sqd_values(rng, dtype, s1)] + ([] if const2 else [sqd_values(rng, dtype, s2)]) for _ in range(3)]
    return Case("", model, dict(dtype=dtype, shapes=(s1, s2, so), quant=(q1, q2, qo), const2=const2), inputs=sets)


for _dt in ("FLOAT32", "INT32", "INT8", "INT16"):
    def _sqd_gen(rng, dt=_dt):
        return _sqd(rng, dt)
    generator(f"SQUARED_DIFFERENCE/{_dt.lower()}")(_sqd_gen)


# -- ADD_N ------------------------------------------------------------------------

def _add_n(rng: np.random.Generator, dtype: str) -> Case:
    many = rng.random() < 0.25
    n = int(rng.integers(16, 21)) if many else int(rng.integers(2, 6))
    _, _, shape = broadcast_shapes(rng, max_elements=40 if many else 300, max_rank=MAX_RANK)
    q = qo = None
    if dtype == "INT8":
        # Many inputs: a zero point at one end, values at the other (below).
        zp = int(rng.choice([-128, 127])) if many else int(rng.integers(-128, 128))
        q = ([float(np.float32(rng.uniform(0.01, 0.3)))], [zp])
        qo = ([float(np.float32(q[0][0] * rng.uniform(0.5, 8)))], [int(rng.integers(-128, 128))])

    def values():
        if dtype == "FLOAT32":
            return float_values(rng, shape, special=0.1)
        if many and rng.random() < 0.7:
            # 17 or more terms of 255 * 2^19: the reference's int32 sum wraps.
            return np.full(shape, 127 if q[1][0] < 0 else -128, np.int8)
        return random_data(rng, dtype, shape)

    # At most 8 fed inputs (the engine's test runner takes 16): the rest constants.
    const = [i >= 8 or rng.random() < 0.2 for i in range(n)]
    const[0] = False
    specs = [(shape, dtype, values() if c else None, q) for c in const]
    model, _ = single_op("ADD_N", specs, [(shape, dtype, qo)])
    sets = [[values() for c in const if not c] for _ in range(3)]
    return Case("", model, dict(dtype=dtype, inputs=n, shape=shape, quant=(q, qo), consts=const), inputs=sets)


@generator("ADD_N/float32")
def add_n_float32(rng):
    return _add_n(rng, "FLOAT32")


@generator("ADD_N/int8")
def add_n_int8(rng):
    return _add_n(rng, "INT8")
