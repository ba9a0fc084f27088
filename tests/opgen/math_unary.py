"""Element-wise functions of one tensor: ABS, NEG, CEIL, FLOOR, ROUND, SQRT,
RSQRT, SQUARE, EXP, LOG, SIN, COS in float32 (every one), ABS in int8 and
int16 (quantized, and int16 without quantization), RSQRT in int8 and int16,
EXP in int8 and int16, LOG in int8 (against TensorFlow Lite's tables: TFLM
has no quantized EXP or LOG).

Float inputs mix ordinary values with each function's hard ones: NaNs of
both signs (quiet and signalling, with payloads), infinities, signed zeros,
subnormals, the largest floats, halves (ROUND), negatives (SQRT, LOG),
arguments where sin and cos switch to their large reduction, exp's overflow
and underflow edges. The first input set always holds the specials, so each
board's single case per generator runs them too."""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np

from . import Case, act_quant, generator, generators, random_data, single_op

FLOAT_OPS = ["ABS", "NEG", "CEIL", "FLOOR", "ROUND", "SQRT", "RSQRT", "SQUARE", "EXP", "LOG", "SIN", "COS"]

# Bit patterns every float case gets: NaNs (quiet, signalling, with payloads,
# both signs), infinities, zeros, the smallest and largest subnormals and
# normals, the largest float.
SPECIAL_BITS = [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFA00005, 0x7FC12345, 0x7F800000, 0xFF800000,
                0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000,
                0x80800000, 0x7F7FFFFF, 0xFF7FFFFF]


def _shape(rng: np.random.Generator) -> tuple:
    return tuple(int(d) for d in rng.integers(1, 7, int(rng.integers(1, 5))))


def _specials(op: str) -> np.ndarray:
    """The op's own hard values, beyond SPECIAL_BITS."""
    common = [0.5, -0.5, 1.0, -1.0, 2.0, 1e-30, -1e-30]
    own = {
        "ROUND": [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.3, 0.49999997, 8388607.5, -8388607.5, 8388608.0,
                  4194303.5, 1e10, -0.0],
        "CEIL": [-0.3, 0.3, 8388607.5, -8388607.5, 1.0000001, -1.0000001, 16777215.0],
        "FLOOR": [-0.3, 0.3, 8388607.5, -8388607.5, 1.0000001, -1.0000001, 16777215.0],
        "SQRT": [-1.0, -1e-30, 4.0, 2.0, 1e38, 3e-39],
        "RSQRT": [-1.0, -1e-30, 4.0, 2.0, 1e38, 3e-39],
        "SQUARE": [1.9e19, 1.85e19, 1e-23, -3e-23, 2.0**64],
        "EXP": [88.72283, 88.72284, 89.0, -87.33654, -103.97207, -103.97208, -104.0, -150.0, 1e-8, -1e-8,
                0.6931472, 20.0],
        "LOG": [-1.0, -1e-30, 1.0000001, 0.99999994, 2.7182817, 0.7, 1.4, 1e38, 1e-40],
        "SIN": [0.7853982, 0.75, 0.7499999, 119.99999, 120.0, 1.5707964, 3.1415927, 1e5, -1e5, 1e20, 3e38,
                2.4414062e-4, 2.4414060e-4, 205887.42, 102943.71],
        "COS": [0.7853982, 0.75, 0.7499999, 119.99999, 120.0, 1.5707964, 3.1415927, 1e5, -1e5, 1e20, 3e38,
                2.4414062e-4, 2.4414060e-4, 205887.42, 102943.71],
    }
    return np.array(common + own.get(op, []), np.float32)


def _float_values(rng: np.random.Generator, op: str, n: int) -> np.ndarray:
    """n values at the scales where the op is interesting."""
    kind = rng.integers(0, 4, n)
    normal = rng.normal(0, 1, n)
    spread = {"SIN": 400.0, "COS": 400.0, "EXP": 40.0, "ROUND": 8.0, "CEIL": 8.0, "FLOOR": 8.0}.get(op, 3.0)
    wide = np.exp(rng.uniform(-40, 40, n)) * rng.choice([-1.0, 1.0], n)
    halves = np.round(rng.normal(0, 6, n)) + 0.5
    x = np.where(kind == 0, normal, np.where(kind == 1, normal * spread, np.where(kind == 2, wide, halves)))
    if op in ("SQRT", "LOG", "RSQRT"):
        # Mostly positive: the negatives are among the specials.
        x = np.where(rng.random(n) < 0.85, np.abs(x), x)
    return x.astype(np.float32)


def float_inputs(rng: np.random.Generator, op: str, shape: tuple) -> list[list[np.ndarray]]:
    """Three input sets; the first starts with the specials (as many as fit)."""
    n = int(np.prod(shape))
    special = np.concatenate([np.array(SPECIAL_BITS, np.uint32).view(np.float32), _specials(op)])
    sets = []
    for s in range(3):
        x = _float_values(rng, op, n)
        if s == 0:
            k = min(n, len(special))
            x[:k] = special[:k] if k == len(special) else rng.choice(special, k, replace=False)
        else:
            pick = rng.random(n) < 0.2
            x[pick] = rng.choice(special, int(pick.sum()))
        sets.append([x.reshape(shape)])
    return sets


def _float_case(rng: np.random.Generator, op: str) -> Case:
    # Big enough for the specials to fit in the first set now and then.
    shape = _shape(rng) if rng.random() < 0.6 else (int(rng.integers(1, 3)), int(rng.integers(18, 40)))
    model, _ = single_op(op, [(shape, "FLOAT32", None, None)], [(shape, "FLOAT32", None)])
    return Case("", model, dict(op=op, shape=shape), inputs=float_inputs(rng, op, shape))


for _op in FLOAT_OPS:
    generator(f"{_op}/float32")(lambda rng, op=_op: _float_case(rng, op))


def _quant_pair(rng: np.random.Generator, dtype: str, same: bool):
    qin = act_quant(rng, dtype, (0.002, 0.3))
    return (qin, qin) if same else (qin, act_quant(rng, dtype, (0.002, 0.3)))


def _int_inputs(rng, dtype: str, shape: tuple, low=None) -> list[list[np.ndarray]]:
    """Random values with the type's (or `low`'s) extremes among them."""
    sets = []
    info = np.iinfo(np.int8 if dtype == "INT8" else np.int16)
    lo = info.min if low is None else low
    for _ in range(3):
        x = random_data(rng, dtype, shape, low=lo).reshape(-1)
        x[: min(x.size, 3)] = np.array([lo, info.max, lo + 1], x.dtype)[: min(x.size, 3)]
        sets.append([x.reshape(shape)])
    return sets


def _abs_case(rng: np.random.Generator, dtype: str, quantized: bool) -> Case:
    shape = _shape(rng)
    qin = qout = None
    if quantized:
        qin, qout = _quant_pair(rng, dtype, bool(rng.integers(0, 3) == 0))
    model, _ = single_op("ABS", [(shape, dtype, None, qin)], [(shape, dtype, qout)])
    return Case("", model, dict(dtype=dtype, shape=shape, qin=qin, qout=qout),
                inputs=_int_inputs(rng, dtype, shape))


generators(_abs_case, {"ABS/int8": ("INT8", True,), "ABS/int16": ("INT16", True,), "ABS/int16_raw": ("INT16", False,)})


def _rsqrt_case(rng: np.random.Generator, dtype: str) -> Case:
    """Inputs at or above the zero point (TFLM fails on the others)."""
    shape = _shape(rng)
    qin = act_quant(rng, dtype, (0.0005, 0.2) if dtype == "INT8" else (1e-5, 0.01))
    qout = act_quant(rng, dtype, (0.005, 0.5) if dtype == "INT8" else (1e-4, 0.05))
    model, _ = single_op("RSQRT", [(shape, dtype, None, qin)], [(shape, dtype, qout)])
    return Case("", model, dict(dtype=dtype, shape=shape, qin=qin, qout=qout),
                inputs=_int_inputs(rng, dtype, shape, low=qin[1][0]))


@generator("RSQRT/int8")
def rsqrt_int8(rng):
    return _rsqrt_case(rng, "INT8")


@generator("RSQRT/int16")
def rsqrt_int16(rng):
    return _rsqrt_case(rng, "INT16")


# -- int8 EXP and LOG: TensorFlow Lite's tables (TFLM has neither) -----------

_LIBM = None


def _glibc(name: str, x: np.float32) -> np.float32:
    """A float function of the C library TensorFlow Lite's Linux build calls."""
    global _LIBM
    if _LIBM is None:
        _LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
        for f in ("expf", "logf"):
            getattr(_LIBM, f).restype, getattr(_LIBM, f).argtypes = ctypes.c_float, [ctypes.c_float]
    return np.float32(getattr(_LIBM, name)(float(x)))


def glibc_expf(x: np.float32) -> np.float32:
    return _glibc("expf", x)


def glibc_logf(x: np.float32) -> np.float32:
    return _glibc("logf", x)


def _round_half_away(x: np.float32) -> np.float32:
    """std::round in float32 (infinities and NaN as they are)."""
    x = np.float32(x)
    if not np.isfinite(x):
        return x
    a = np.floor(np.abs(x))
    return np.float32(np.copysign(a + np.float32(np.abs(x) - a >= np.float32(0.5)), x))


def tflite_exp_table(qin, qout, fn=glibc_expf) -> np.ndarray:
    """TF Lite's int8 EXP (or, with glibc_logf, LOG) outputs for inputs
    -128..127 (its LUT, as its int8 kernels fill it): the input dequantized
    in float32, the function, times the float32 inverse of the output scale,
    rounded half away from zero, plus the zero point, clamped (NaN: -128)."""
    si, zi = np.float32(qin[0][0]), qin[1][0]
    inverse, zo = np.float32(1) / np.float32(qout[0][0]), np.float32(qout[1][0])
    out = []
    with np.errstate(all="ignore"):  # expf's overflow, infinity times the inverse, logf's NaN
        for v in range(-128, 128):
            t = np.float32(fn(np.float32(si * np.float32(v - zi))) * inverse)
            q = float(np.float32(_round_half_away(t) + zo))
            out.append(127 if q >= 127 else int(q) if q > -128 else -128)
    return np.array(out, np.int8)


def _table_int8_case(rng, op: str, in_scales: tuple, out_scales: tuple, fn) -> Case:
    """A case of an int8 op TF Lite computes through a table (tflite_exp_table
    with `fn`): every int8 value in the first input set when it fits."""
    shape = _shape(rng) if rng.random() < 0.7 else (256,)
    qin = act_quant(rng, "INT8", in_scales)
    qout = act_quant(rng, "INT8", out_scales)
    model, _ = single_op(op, [(shape, "INT8", None, qin)], [(shape, "INT8", qout)])
    sets = _int_inputs(rng, "INT8", shape)
    if int(np.prod(shape)) == 256:
        sets[0] = [np.arange(-128, 128, dtype=np.int8).reshape(shape)]
    table = tflite_exp_table(qin, qout, fn)
    return Case("", model, dict(shape=shape, qin=qin, qout=qout), inputs=sets,
                expected=lambda sample: [table[sample[0].astype(np.int32) + 128]])


@generator("EXP/int8")
def exp_int8(rng):
    """Input scales from a few steps per unit to ones where expf overflows
    (over 88.7), output scales from fine (most values clamp at 127) to
    coarse."""
    return _table_int8_case(rng, "EXP", (0.005, 0.5), (0.001, 4.0), glibc_expf)


@generator("LOG/int8")
def log_int8(rng):
    """Zero points anywhere (inputs at or below them give log of zero or
    of a negative value: -128), input scales from fine to coarse, output
    scales from fine (values clamp) to coarse."""
    return _table_int8_case(rng, "LOG", (0.001, 2.0), (0.002, 0.5), glibc_logf)


# -- int16 EXP: TensorFlow Lite's interpolated table -------------------------

def _anchor16(v: np.float32) -> int:
    """A table entry: clamped in float; NaN as x86 converts it to int16, 0."""
    return 0 if np.isnan(v) else int(min(max(v, np.float32(-32768)), np.float32(32767)))


def tflite_exp_table16(qin, qout) -> np.ndarray:
    """TF Lite's int16 EXP table (zero points 0): 513 anchors over the input's
    range, 512 segments, anchor i the value at segment i's start less half
    the error interpolation makes at its midpoint, the last the value at the
    range's end; each step in float32, rounded half away from zero."""
    f, rnd = np.float32, _round_half_away
    si, so = f(qin[0][0]), f(qout[0][0])
    lo, hi = f(si * f(-32768)), f(si * f(32767))
    step = f(f(hi - lo) / f(512))
    half, inverse = f(step / f(2)), f(f(65536) / f(f(so * f(32767)) - f(so * f(-32768))))
    lut = []
    with np.errstate(all="ignore"):
        for i in range(512):
            x = f(lo + f(f(i) * step))
            at, mid, nxt = glibc_expf(x), glibc_expf(f(x + half)), glibc_expf(f(lo + f(f(i + 1) * step)))
            sample = rnd(f(at * inverse))
            interp = rnd(f(f(f(nxt * inverse) + sample) / f(2)))
            bias = rnd(f(f(interp - rnd(f(mid * inverse))) / f(2)))
            lut.append(_anchor16(f(sample - bias)))
        lut.append(_anchor16(rnd(f(glibc_expf(hi) * inverse))))
    return np.array(lut, np.int32)


def tflite_lookup16(x: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """TF Lite's int16 lookup: between the anchors of each value's segment
    (its top 9 bits), the slope and the result wrapped to 16 bits."""
    u = x.astype(np.int32) + 32768
    k, offset = u >> 7, u & 0x7F
    slope = (lut[k + 1] - lut[k]).astype(np.int16).astype(np.int32)
    return (lut[k] + ((slope * offset + 64) >> 7)).astype(np.int16)


@generator("EXP/int16")
def exp_int16(rng):
    """Input scales from ranges of a few units to ones where expf overflows
    (over 88.7) and output scales from fine (the top of the range wraps in
    TF Lite's interpolation) to coarse, zero points 0 (TF Lite's int16 EXP
    requires them); every segment of the table in the first input set when
    it fits."""
    sweep = rng.random() < 0.3
    shape = (2, 512) if sweep else _shape(rng)
    qin = ([float(np.float32(10 ** rng.uniform(-5, -2.4)))], [0])
    qout = ([float(np.float32(10 ** rng.uniform(-5, -1)))], [0])
    model, _ = single_op("EXP", [(shape, "INT16", None, qin)], [(shape, "INT16", qout)])
    sets = _int_inputs(rng, "INT16", shape)
    if sweep:
        starts = np.arange(-32768, 32768, 128, dtype=np.int32)
        offsets = np.stack([rng.integers(0, 128, 512), np.where(np.arange(512) % 2, 127, 0)])
        sets[0] = [(starts + offsets).astype(np.int16)]
    table = tflite_exp_table16(qin, qout)
    return Case("", model, dict(shape=shape, qin=qin, qout=qout), inputs=sets,
                expected=lambda sample: [tflite_lookup16(sample[0], table)])
