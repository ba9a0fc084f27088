"""ELU (float32, int8) and PRELU (float32; int8 and int16 with int8 alpha).

ELU's float inputs hold NaNs, infinities, zeros and large negatives (where
expm1 saturates at -1); its int8 cases cover scales and zero points of
input and output (TFLM's table). PRELU broadcasts alpha the ways converters
emit it (per channel, per position, one value) and others, as a constant
or an input; float inputs hold NaNs and infinities (alpha: zeros, negatives,
never NaN: with two different NaNs x86's result depends on the compiler's
operand order)."""

from __future__ import annotations

import numpy as np

from . import Case, act_quant, generator, random_data, single_op
from .math_unary import SPECIAL_BITS


def _shape(rng: np.random.Generator, max_rank: int = 4) -> tuple:
    return tuple(int(d) for d in rng.integers(1, 7, int(rng.integers(1, max_rank + 1))))


def _with_specials(rng: np.random.Generator, x: np.ndarray, specials: np.ndarray, first: bool) -> np.ndarray:
    """x with specials in place: all that fit at the start (first set), else a random fifth."""
    flat = x.reshape(-1).copy()
    if first:
        k = min(flat.size, specials.size)
        flat[:k] = specials[:k] if k == specials.size else rng.choice(specials, k, replace=False)
    else:
        pick = rng.random(flat.size) < 0.2
        flat[pick] = rng.choice(specials, int(pick.sum()))
    return flat.reshape(x.shape)


ELU_SPECIALS = np.concatenate([np.array(SPECIAL_BITS, np.uint32).view(np.float32),
                               np.array([-1e-8, -0.5, -1.0, -10.0, -17.0, -17.3, -88.0, -104.0, -1e30, 1e30,
                                         0.3, -0.3465736, -0.3465735, -1.0397208, -1.0397207, -1e-30],
                                        np.float32)])


@generator("ELU/float32")
def elu_float32(rng):
    shape = _shape(rng) if rng.random() < 0.6 else (int(rng.integers(1, 3)), int(rng.integers(18, 40)))
    inputs = [[_with_specials(rng, (rng.normal(0, 1, shape) * rng.choice([1.0, 4.0, 20.0])).astype(np.float32),
                              ELU_SPECIALS, s == 0)] for s in range(3)]
    model, _ = single_op("ELU", [(shape, "FLOAT32", None, None)], [(shape, "FLOAT32", None)])
    return Case("", model, dict(shape=shape), inputs=inputs)


@generator("ELU/int8")
def elu_int8(rng):
    shape = _shape(rng)
    qin = act_quant(rng, "INT8", (0.005, 0.3))
    qout = act_quant(rng, "INT8", (0.005, 0.1)) if rng.random() < 0.7 else qin
    model, _ = single_op("ELU", [(shape, "INT8", None, qin)], [(shape, "INT8", qout)])
    return Case("", model, dict(shape=shape, qin=qin, qout=qout))


def _alpha_shape(rng: np.random.Generator, shape: tuple) -> tuple:
    """Per channel, per position, a single value, or any broadcast."""
    kind = int(rng.integers(0, 5))
    if kind == 0:
        return shape[-1:]
    if kind == 1:
        return (1,) * (len(shape) - 1) + shape[-1:]
    if kind == 2:
        return shape[1:] if len(shape) > 1 else shape
    if kind == 3:
        return (1,)
    return tuple(1 if rng.random() < 0.5 else d for d in shape[len(shape) - int(rng.integers(1, len(shape) + 1)):])


PRELU_SPECIALS = np.concatenate([np.array(SPECIAL_BITS, np.uint32).view(np.float32),
                                 np.array([-1e30, 1e30, -3.0, 0.5], np.float32)])


@generator("PRELU/float32")
def prelu_float32(rng):
    shape = _shape(rng)
    a_shape = _alpha_shape(rng, shape)
    alpha = rng.normal(0.2, 0.5, a_shape).astype(np.float32)
    alpha.reshape(-1)[rng.random(alpha.size) < 0.2] = 0.0  # -inf * 0 is NaN
    if rng.random() < 0.2:
        alpha.reshape(-1)[0] = np.float32(np.inf)
    const = rng.random() < 0.75
    model, _ = single_op("PRELU", [(shape, "FLOAT32", None, None), (a_shape, "FLOAT32", alpha if const else None, None)],
                         [(shape, "FLOAT32", None)])
    inputs = []
    for s in range(3):
        x = _with_specials(rng, rng.normal(0, 3, shape).astype(np.float32), PRELU_SPECIALS, s == 0)
        inputs.append([x] if const else [x, alpha])
    return Case("", model, dict(shape=shape, alpha_shape=a_shape, const_alpha=const), inputs=inputs)


def _prelu_quantized(rng: np.random.Generator, dtype: str) -> Case:
    shape = _shape(rng, 5)
    a_shape = _alpha_shape(rng, shape)
    qin = act_quant(rng, dtype, (0.005, 0.2) if dtype == "INT8" else (1e-4, 0.005))
    qout = act_quant(rng, dtype, (0.005, 0.2) if dtype == "INT8" else (1e-4, 0.005))
    # Alpha as converters quantize it (symmetric) or with a zero point.
    if rng.random() < 0.5:
        qa = ([float(np.float32(rng.uniform(0.001, 0.02)))], [0])
    else:
        qa = act_quant(rng, "INT8", (0.001, 0.02))
    alpha = random_data(rng, "INT8", a_shape)
    const = rng.random() < 0.75
    model, _ = single_op("PRELU", [(shape, dtype, None, qin), (a_shape, "INT8", alpha if const else None, qa)],
                         [(shape, dtype, qout)])
    inputs = []
    for _ in range(3):
        x = random_data(rng, dtype, shape).reshape(-1)
        lo, hi = (-128, 127) if dtype == "INT8" else (-32768, 32767)
        x[: min(x.size, 3)] = np.array([lo, hi, qin[1][0]], x.dtype)[: min(x.size, 3)]
        x = x.reshape(shape)
        inputs.append([x] if const else [x, alpha])
    return Case("", model, dict(dtype=dtype, shape=shape, alpha_shape=a_shape, qin=qin, qa=qa, qout=qout,
                                const_alpha=const), inputs=inputs)


@generator("PRELU/int8")
def prelu_int8(rng):
    return _prelu_quantized(rng, "INT8")


@generator("PRELU/int16")
def prelu_int16(rng):
    return _prelu_quantized(rng, "INT16")
