"""Data-movement models (1/2): RESHAPE, SQUEEZE, EXPAND_DIMS, CONCATENATION,
PAD, PADV2, SPLIT, SPLIT_V, PACK, UNPACK and CAST, over every type TFLM's
kernel takes for each, random shapes and axes (negative too)."""

from __future__ import annotations

import numpy as np

from . import Case, act_quant, generator, random_data, single_op

ALL = ["FLOAT32", "INT8", "INT16", "INT32", "INT64", "BOOL", "UINT8"]
NP = {"FLOAT32": np.float32, "INT8": np.int8, "INT16": np.int16, "INT32": np.int32, "INT64": np.int64,
      "BOOL": np.bool_, "UINT8": np.uint8, "UINT32": np.uint32}


def quant(rng, dtype):
    """Per-tensor quantization for int8/int16 tensors (movement ops copy it through)."""
    return act_quant(rng, dtype) if dtype in ("INT8", "INT16") else None


def shape(rng, lo=1, hi=4, max_dim=5):
    return tuple(int(d) for d in rng.integers(1, max_dim + 1, int(rng.integers(lo, hi + 1))))


def i32(values):
    return np.asarray(values, np.int32)


# -- RESHAPE, SQUEEZE, EXPAND_DIMS ---------------------------------------------

def _reshape(rng, dtype):
    in_shape = shape(rng, 1, 5)  # 0-D model inputs cannot be fed to TFLM's Python runtime
    n = int(np.prod(in_shape, dtype=np.int64))
    # A random factorisation of the element count.
    out_shape = []
    rest = n
    for _ in range(int(rng.integers(0, 4))):
        divs = [d for d in range(1, rest + 1) if rest % d == 0]
        d = int(rng.choice(divs))
        out_shape.append(d)
        rest //= d
    out_shape.append(rest)
    rng.shuffle(out_shape)
    out_shape = tuple(out_shape)
    q = quant(rng, dtype)
    how = str(rng.choice(["const", "option", "none", "input"]))
    inputs = [(in_shape, dtype, None, q)]
    opts = {}
    if how == "const":
        shape_vals = list(out_shape)
        if len(shape_vals) and rng.integers(0, 2):
            shape_vals[int(rng.integers(0, len(shape_vals)))] = -1
        inputs.append(((len(shape_vals),), "INT32", i32(shape_vals)))
    elif how == "option":
        opts["NewShape"] = list(out_shape)
    elif how == "input":
        # A computed shape input: TFLM does not read it, the output tensor decides.
        inputs.append(((len(out_shape),), "INT32"))
    model, _ = single_op("RESHAPE", inputs, [(out_shape, dtype, q)], **opts)
    case = Case("", model, dict(dtype=dtype, input=in_shape, output=out_shape, shape=how))
    if how == "input":
        rs = np.random.default_rng(int(rng.integers(1 << 30)))
        case.inputs = [[random_data(rs, dtype, in_shape), i32(out_shape)] for _ in range(3)]
    return case


def _squeeze(rng, dtype):
    base = list(shape(rng, 0, 4))
    ones = int(rng.integers(1, 4))
    for _ in range(ones):
        base.insert(int(rng.integers(0, len(base) + 1)), 1)
    in_shape = tuple(base)
    ones_at = [i for i, d in enumerate(in_shape) if d == 1]
    if rng.integers(0, 2):
        dims = []  # all size-1 dimensions
        squeezed = ones_at
    else:
        squeezed = sorted(int(i) for i in rng.choice(ones_at, int(rng.integers(1, len(ones_at) + 1)), replace=False))
        dims = [i - len(in_shape) if rng.integers(0, 2) else i for i in squeezed]
    out_shape = tuple(d for i, d in enumerate(in_shape) if i not in squeezed)
    q = quant(rng, dtype)
    opts = {"SqueezeDims": dims} if dims else {}
    model, _ = single_op("SQUEEZE", [(in_shape, dtype, None, q)], [(out_shape, dtype, q)], **opts)
    return Case("", model, dict(dtype=dtype, input=in_shape, dims=dims, output=out_shape))


def _expand_dims(rng, dtype):
    in_shape = shape(rng, 1, 4)
    axis = int(rng.integers(-len(in_shape) - 1, len(in_shape) + 1))
    pos = axis if axis >= 0 else axis + len(in_shape) + 1
    out_shape = in_shape[:pos] + (1,) + in_shape[pos:]
    q = quant(rng, dtype)
    axis_shape = () if rng.integers(0, 2) else (1,)
    model, _ = single_op("EXPAND_DIMS", [(in_shape, dtype, None, q), (axis_shape, "INT32", i32(axis).reshape(axis_shape))],
                         [(out_shape, dtype, q)])
    return Case("", model, dict(dtype=dtype, input=in_shape, axis=axis))


for _dt in ALL:
    generator(f"RESHAPE/{_dt.lower()}")(lambda rng, dt=_dt: _reshape(rng, dt))
    generator(f"SQUEEZE/{_dt.lower()}")(lambda rng, dt=_dt: _squeeze(rng, dt))
for _dt in ["FLOAT32", "INT8", "INT16"]:
    generator(f"EXPAND_DIMS/{_dt.lower()}")(lambda rng, dt=_dt: _expand_dims(rng, dt))


# -- CONCATENATION ---------------------------------------------------------------

def _concat(rng, dtype):
    rank = int(rng.integers(1, 7))
    base = list(shape(rng, rank, rank, 4))
    axis = int(rng.integers(0, rank))
    n = int(rng.integers(1, 11))
    q = quant(rng, dtype)  # int8 inputs must share the output's quantization
    inputs, sizes = [], []
    for _ in range(n):
        s = list(base)
        s[axis] = int(rng.integers(1, 4))
        sizes.append(s[axis])
        const = bool(rng.integers(0, 4) == 0)
        data = random_data(rng, dtype, tuple(s)) if const else None
        inputs.append((tuple(s), dtype, data, q if dtype != "INT16" else quant(rng, dtype)))
    if all(spec[2] is not None for spec in inputs):
        inputs[0] = inputs[0][:2] + (None,) + inputs[0][3:]
    out = list(base)
    out[axis] = sum(sizes)
    opt_axis = axis - rank if rng.integers(0, 2) else axis
    model, _ = single_op("CONCATENATION", inputs, [(tuple(out), dtype, q)], Axis=opt_axis,
                         FusedActivationFunction="NONE")
    return Case("", model, dict(dtype=dtype, inputs=[s[0] for s in inputs], axis=opt_axis))


for _dt in ["FLOAT32", "INT8", "INT16", "INT32", "INT64", "BOOL"]:
    generator(f"CONCATENATION/{_dt.lower()}")(lambda rng, dt=_dt: _concat(rng, dt))


# -- PAD, PADV2 --------------------------------------------------------------------

def _pad(rng, dtype, v2):
    in_shape = shape(rng, 1, 5, 4)
    pads = []
    for d in in_shape:
        lo, hi = int(rng.integers(0, 3)), int(rng.integers(0, 3))
        # Now and then a negative padding, which crops.
        if rng.integers(0, 8) == 0 and d > 1:
            lo = -int(rng.integers(1, d))
        elif rng.integers(0, 8) == 0 and d + lo > 1:
            hi = -int(rng.integers(1, d + lo))
        pads.append([lo, hi])
    out_shape = tuple(d + lo + hi for d, (lo, hi) in zip(in_shape, pads))
    q = quant(rng, dtype)
    inputs = [(in_shape, dtype, None, q), ((len(in_shape), 2), "INT32", i32(pads))]
    value = None
    if v2 or rng.integers(0, 3) == 0:
        kind = str(rng.choice(["const", "input"]))
        vshape = () if kind == "const" and rng.integers(0, 2) else (1,)
        if kind == "const":
            value = random_data(rng, dtype, vshape)
            inputs.append((vshape, dtype, value, q))
        else:
            inputs.append((vshape, dtype, None, q))
    model, _ = single_op("PADV2" if v2 else "PAD", inputs, [(out_shape, dtype, q)])
    return Case("", model, dict(dtype=dtype, input=in_shape, paddings=pads,
                                value=None if len(inputs) < 3 else ("const" if value is not None else "input")))


for _dt in ["FLOAT32", "INT8", "INT16", "INT32"]:
    generator(f"PAD/{_dt.lower()}")(lambda rng, dt=_dt: _pad(rng, dt, False))
    generator(f"PADV2/{_dt.lower()}")(lambda rng, dt=_dt: _pad(rng, dt, True))


# -- SPLIT, SPLIT_V ------------------------------------------------------------------

def _split(rng, dtype, v):
    rank = int(rng.integers(1, 6))
    base = list(shape(rng, rank, rank, 4))
    axis = int(rng.integers(0, rank))
    n = int(rng.integers(1, 5))
    if v:
        # TFLM's allocator takes no empty tensors.
        sizes = [int(x) for x in rng.integers(1, 4, n)]
    else:
        sizes = [int(rng.integers(1, 4))] * n
    in_shape = list(base)
    in_shape[axis] = sum(sizes)
    outs = []
    for s in sizes:
        o = list(base)
        o[axis] = s
        outs.append(tuple(o))
    q = quant(rng, dtype)
    opt_axis = axis - rank if rng.integers(0, 2) else axis
    axis_type = "INT64" if rng.integers(0, 4) == 0 else "INT32"
    axis_shape = () if rng.integers(0, 2) else (1,)
    axis_t = (axis_shape, axis_type, np.asarray(opt_axis, NP[axis_type]).reshape(axis_shape))
    data = (tuple(in_shape), dtype, None, q)
    if v:
        split_sizes = list(sizes)
        if rng.integers(0, 2):
            split_sizes[int(rng.integers(0, n))] = -1
        inputs = [data, ((n,), "INT32", i32(split_sizes)), axis_t]
        model, _ = single_op("SPLIT_V", inputs, [(o, dtype, q) for o in outs], NumSplits=n)
    else:
        model, _ = single_op("SPLIT", [axis_t, data], [(o, dtype, q) for o in outs], NumSplits=n)
    return Case("", model, dict(dtype=dtype, input=tuple(in_shape), axis=opt_axis, sizes=sizes, axis_type=axis_type))


for _dt in ["FLOAT32", "INT8", "INT16", "INT32"]:
    generator(f"SPLIT/{_dt.lower()}")(lambda rng, dt=_dt: _split(rng, dt, False))
    generator(f"SPLIT_V/{_dt.lower()}")(lambda rng, dt=_dt: _split(rng, dt, True))


# -- PACK, UNPACK ------------------------------------------------------------------

def _pack(rng, dtype, unpack):
    piece = shape(rng, 1, 4, 4)
    n = int(rng.integers(1, 5))
    rank = len(piece) + 1
    axis = int(rng.integers(0, rank))
    whole = piece[:axis] + (n,) + piece[axis:]
    opt_axis = axis - rank if rng.integers(0, 2) else axis
    q = quant(rng, dtype)
    if unpack:
        model, _ = single_op("UNPACK", [(whole, dtype, None, q)], [(piece, dtype, q)] * n, Num=n, Axis=opt_axis)
    else:
        inputs = []
        for k in range(n):
            const = k > 0 and rng.integers(0, 4) == 0
            inputs.append((piece, dtype, random_data(rng, dtype, piece) if const else None, q))
        model, _ = single_op("PACK", inputs, [(whole, dtype, q)], ValuesCount=n, Axis=opt_axis)
    return Case("", model, dict(dtype=dtype, piece=piece, count=n, axis=opt_axis))


for _dt in ["FLOAT32", "INT8", "INT16", "INT32", "INT64"]:
    generator(f"PACK/{_dt.lower()}")(lambda rng, dt=_dt: _pack(rng, dt, False))
for _dt in ["FLOAT32", "INT8", "INT16", "INT32"]:
    generator(f"UNPACK/{_dt.lower()}")(lambda rng, dt=_dt: _pack(rng, dt, True))


# -- CAST ----------------------------------------------------------------------------

CAST_TYPES = ["INT8", "INT16", "INT32", "UINT32", "FLOAT32", "BOOL"]


def _cast_values(rng, dtype, n):
    if dtype == "FLOAT32":
        # Small and huge values, fractions, both signs, the specials.
        special = np.array([0.0, -0.0, 0.5, -0.5, 1.999, -1.999, 127.5, -128.5, 255.9, 32767.5, -32768.9,
                            2147483520.0, 2147483648.0, -2147483904.0, 4294967040.0, 5e9, -5e9, 1e30, -1e30,
                            np.inf, -np.inf, np.nan], np.float32)
        pick = rng.integers(0, 3, n)
        values = np.where(pick == 0, rng.choice(special, n),
                          np.where(pick == 1, rng.normal(0, 100, n), rng.normal(0, 1e6, n))).astype(np.float32)
        return values
    if dtype == "UINT32":
        big = rng.integers(0, 1 << 32, n, dtype=np.uint64)
        return np.where(rng.integers(0, 2, n) == 0, big, big % 300).astype(np.uint32)
    values = random_data(rng, dtype, (n,))
    if dtype in ("INT16", "INT32"):
        # Mix in small values so narrowing casts see both in-range and wrapping ones.
        small = rng.integers(-300, 300, n)
        values = np.where(rng.integers(0, 2, n) == 0, values, small).astype(values.dtype)
    return values


def _cast(rng, src):
    dst = str(rng.choice(CAST_TYPES))
    s = shape(rng, 1, 4)
    n = int(np.prod(s, dtype=np.int64))
    model, _ = single_op("CAST", [(s, src)], [(s, dst, None)])
    case = Case("", model, dict(src=src, dst=dst, shape=s))
    rs = np.random.default_rng(int(rng.integers(1 << 30)))
    case.inputs = [[_cast_values(rs, src, n).reshape(s)] for _ in range(3)]
    return case


for _dt in CAST_TYPES:
    generator(f"CAST/{_dt.lower()}")(lambda rng, dt=_dt: _cast(rng, dt))
