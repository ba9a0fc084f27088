"""Data-movement models (2/2): STRIDED_SLICE, SLICE, TRANSPOSE and GATHER over
every type TFLM's kernel takes, random shapes, indices, masks and axes."""

from __future__ import annotations

import math

import numpy as np

from . import Case, generator, random_data, single_op
from .movement import i32, quant, shape

INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1


# -- STRIDED_SLICE ---------------------------------------------------------------

def _ss_start(begin, stride, masked, size):
    start = (INT_MIN if stride > 0 else INT_MAX) if masked else begin
    if start < 0:
        start += size
    return min(max(start, 0), size) if stride > 0 else min(max(start, -1), size - 1)


def _ss_stop(end, stride, masked, size):
    stop = (INT_MAX if stride > 0 else INT_MIN) if masked else end
    if stop < 0:
        stop += size
    return min(max(stop, 0), size) if stride > 0 else min(max(stop, -1), size - 1)


def _strided_slice(rng, dtype):
    for _ in range(100):
        rank = int(rng.integers(1, 5))
        in_shape = shape(rng, rank, rank, 6)
        begin, end, strides = [], [], []
        begin_mask = end_mask = shrink_mask = 0
        out_shape = []
        ok = True
        for i, d in enumerate(in_shape):
            stride = int(rng.choice([1, 1, 1, 2, 3, -1, -2]))
            b = int(rng.integers(-d - 2, d + 3))
            e = int(rng.integers(-d - 2, d + 3))
            bm, em = rng.integers(0, 4) == 0, rng.integers(0, 4) == 0
            # Shrink an axis only where TFLM's eval writes its one element.
            shrink = stride > 0 and -d <= b < d and rng.integers(0, 4) == 0
            if shrink:
                bm = False
            begin_mask |= int(bm) << i
            end_mask |= int(em) << i
            shrink_mask |= int(shrink) << i
            begin.append(b)
            end.append(e)
            strides.append(stride)
            start = _ss_start(b, stride, bm, d)
            if shrink:
                continue
            stop = _ss_stop(e, stride, em, d)
            n = max(math.ceil((stop - start) / stride), 0)
            if n == 0:
                ok = False  # TFLM's allocator takes no empty tensors
            out_shape.append(n)
        if ok:
            break
    # Masks TFLM ignores, and so must the kernel.
    extra = {}
    if rng.integers(0, 6) == 0:
        extra["EllipsisMask"] = int(rng.integers(0, 1 << rank))
    if rng.integers(0, 6) == 0:
        extra["NewAxisMask"] = int(rng.integers(0, 1 << rank))
    if rng.integers(0, 6) == 0:
        extra["Offset"] = True
    q = quant(rng, dtype)
    inputs = [(in_shape, dtype, None, q), ((rank,), "INT32", i32(begin)), ((rank,), "INT32", i32(end)),
              ((rank,), "INT32", i32(strides))]
    model, _ = single_op("STRIDED_SLICE", inputs, [(tuple(out_shape), dtype, q)], BeginMask=begin_mask,
                         EndMask=end_mask, ShrinkAxisMask=shrink_mask, **extra)
    return Case("", model, dict(dtype=dtype, input=in_shape, begin=begin, end=end, strides=strides,
                                begin_mask=begin_mask, end_mask=end_mask, shrink=shrink_mask, **extra))


for _dt in ["FLOAT32", "INT8", "INT16", "INT32", "BOOL"]:
    generator(f"STRIDED_SLICE/{_dt.lower()}")(lambda rng, dt=_dt: _strided_slice(rng, dt))


# -- SLICE -------------------------------------------------------------------------

def _slice(rng, dtype):
    rank = int(rng.integers(1, 6))
    in_shape = shape(rng, rank, rank, 5)
    begin, size, out_shape = [], [], []
    for d in in_shape:
        b = int(rng.integers(0, d))
        n = int(rng.integers(1, d - b + 1))
        begin.append(b)
        size.append(-1 if n == d - b and rng.integers(0, 2) else n)
        out_shape.append(n)
    itype = "INT64" if rng.integers(0, 2) else "INT32"
    npt = np.int64 if itype == "INT64" else np.int32
    dynamic = bool(rng.integers(0, 3) == 0)
    q = quant(rng, dtype)
    if dynamic:
        inputs = [(in_shape, dtype, None, q), ((rank,), itype), ((rank,), itype)]
    else:
        inputs = [(in_shape, dtype, None, q), ((rank,), itype, np.asarray(begin, npt)),
                  ((rank,), itype, np.asarray(size, npt))]
    model, _ = single_op("SLICE", inputs, [(tuple(out_shape), dtype, q)])
    case = Case("", model, dict(dtype=dtype, input=in_shape, begin=begin, size=size, index_type=itype,
                                dynamic=dynamic))
    if dynamic:
        rs = np.random.default_rng(int(rng.integers(1 << 30)))
        case.inputs = [[random_data(rs, dtype, in_shape), np.asarray(begin, npt), np.asarray(size, npt)]
                       for _ in range(3)]
    return case


for _dt in ["FLOAT32", "INT8", "INT16", "INT32", "BOOL"]:
    generator(f"SLICE/{_dt.lower()}")(lambda rng, dt=_dt: _slice(rng, dt))


# -- TRANSPOSE ---------------------------------------------------------------------

def _transpose(rng, dtype):
    rank = int(rng.integers(1, 6))
    in_shape = shape(rng, rank, rank, 5)
    perm = [int(x) for x in rng.permutation(rank)]
    out_shape = tuple(in_shape[p] for p in perm)
    q = quant(rng, dtype)
    model, _ = single_op("TRANSPOSE", [(in_shape, dtype, None, q), ((rank,), "INT32", i32(perm))],
                         [(out_shape, dtype, q)])
    return Case("", model, dict(dtype=dtype, input=in_shape, perm=perm))


for _dt in ["FLOAT32", "INT8", "INT16"]:
    generator(f"TRANSPOSE/{_dt.lower()}")(lambda rng, dt=_dt: _transpose(rng, dt))


# -- GATHER ------------------------------------------------------------------------

def _gather(rng, dtype):
    rank = int(rng.integers(1, 5))
    in_shape = shape(rng, rank, rank, 4)
    axis = int(rng.integers(0, rank))
    batch_dims = int(rng.integers(0, axis + 1))
    extra = shape(rng, 0, 2, 3)
    idx_shape = tuple(in_shape[:batch_dims]) + extra
    const = bool(rng.integers(0, 2))
    if not idx_shape:
        if const:
            idx_shape = ()
        else:
            idx_shape = (1,)
    out_shape = in_shape[:axis] + idx_shape[batch_dims:] + in_shape[axis + 1:]
    opt_axis = axis - rank if rng.integers(0, 2) else axis
    # The negative form only where it stays negative (-0 would mean 0).
    opt_batch = batch_dims - len(idx_shape) if batch_dims < len(idx_shape) and rng.integers(0, 3) == 0 else batch_dims
    q = quant(rng, dtype)
    idx = rng.integers(0, in_shape[axis], idx_shape).astype(np.int32)
    inputs = [(in_shape, dtype, None, q), (idx_shape, "INT32", idx if const else None)]
    model, _ = single_op("GATHER", inputs, [(out_shape, dtype, q)], Axis=opt_axis, BatchDims=opt_batch)
    case = Case("", model, dict(dtype=dtype, input=in_shape, indices=idx_shape, axis=opt_axis,
                                batch_dims=opt_batch, const=const))
    if not const:
        rs = np.random.default_rng(int(rng.integers(1 << 30)))
        case.inputs = [[random_data(rs, dtype, in_shape), rs.integers(0, in_shape[axis], idx_shape).astype(np.int32)]
                       for _ in range(3)]
    return case


for _dt in ["FLOAT32", "INT8"]:
    generator(f"GATHER/{_dt.lower()}")(lambda rng, dt=_dt: _gather(rng, dt))


# -- a chain of movement ops (intermediate tensors, buffer reuse) ----------------

@generator("MOVEMENT_CHAIN/mixed")
def _chain(rng):
    from tflm_dev.builder import ModelBuilder
    dtype = str(rng.choice(["FLOAT32", "INT8"]))
    a, b, c = (int(x) for x in rng.integers(1, 5, 3))
    q = quant(rng, dtype)
    mb = ModelBuilder()
    sg = mb.subgraph()
    x = sg.tensor((a, b, c), dtype, quant=q)
    r = sg.tensor((a * b, c), dtype, quant=q)
    sg.op("RESHAPE", [x, sg.tensor((2,), "INT32", data=i32([a * b, c]))], [r], NewShape=[a * b, c])
    t = sg.tensor((c, a * b), dtype, quant=q)
    sg.op("TRANSPOSE", [r, sg.tensor((2,), "INT32", data=i32([1, 0]))], [t])
    p = sg.tensor((c + 2, a * b + 1), dtype, quant=q)
    sg.op("PAD", [t, sg.tensor((2, 2), "INT32", data=i32([[1, 1], [0, 1]]))], [p])
    halves = [sg.tensor((c + 2, a * b + 1), dtype, quant=q) for _ in range(1)]
    sg.op("SPLIT", [sg.tensor((), "INT32", data=i32(0)), p], halves, NumSplits=1)
    cat = sg.tensor((2 * (c + 2), a * b + 1), dtype, quant=q)
    sg.op("CONCATENATION", [halves[0], p], [cat], Axis=0)
    e = sg.tensor((1, 2 * (c + 2), a * b + 1), dtype, quant=q)
    sg.op("EXPAND_DIMS", [cat, sg.tensor((), "INT32", data=i32(0))], [e])
    s = sg.tensor((2 * (c + 2), a * b + 1), dtype, quant=q)
    sg.op("SQUEEZE", [e], [s], SqueezeDims=[0])
    rows = int(rng.integers(1, 4))
    g = sg.tensor((rows, a * b + 1), dtype, quant=q)
    sg.op("GATHER", [s, sg.tensor((rows,), "INT32", data=rng.integers(0, 2 * (c + 2), rows).astype(np.int32))], [g],
          Axis=0)
    out = sg.tensor((rows, a * b + 1), "INT32")
    sg.op("CAST", [g], [out])
    sg.inputs, sg.outputs = [x], [out, s]
    return Case("", mb.build(), dict(dtype=dtype, shape=(a, b, c), rows=rows))
