"""The shapes a converter leaves unknown, and the shape arithmetic it writes
for them.

A Keras model converted with an unknown batch size (keras.Input's default)
comes out of TensorFlow's converter with a -1 in the shape_signature of every
tensor whose size depends on the batch, and 1 in its static shape there. A
Dense layer on a 3-D input, a Reshape or an UpSampling2D then becomes a
RESHAPE whose new shape is computed while the model runs, from SHAPE of a
tensor through GATHER, STRIDED_SLICE, REDUCE_PROD, PACK or CONCATENATION: TF
Lite resizes the tensors as it runs them. TFLM and this engine run the
static shapes, so the RESHAPE's output has the wrong size (refused: "input
has 48 elements, output 1"), and REDUCE_PROD has no kernel in either.

`fold_shapes()` follows every tensor's shape from the model's inputs (their
static shapes, batch included) through the operators, and the values of the
small integer tensors computed from shapes and constants, then, in place:
- writes the shape each tensor has where its static shape says otherwise,
  only at the dimensions its shape_signature leaves unknown (any other
  difference leaves the model as it is: the engine's checks then say what
  is wrong);
- makes a RESHAPE's computed shape input a constant holding the new shape
  (its tensor's buffer, empty and its own as the converter writes it, gets
  the bytes: TF Lite runs the model as TFLM and the engine do), or drops the
  input where that buffer is shared (TFLM and the engine take the output's
  shape from the output tensor, which now holds it; TF Lite then refuses
  the model);
- removes the operators whose only use was computing such shapes.

It also undoes TF's float16 quantization, which stores weights as float16
constants behind DEQUANTIZE (neither TFLM nor the engine has float16): each
DEQUANTIZE's float32 output becomes a constant (the conversion is exact)
and the DEQUANTIZE goes.

The bytes keep their layout: a shape's rank does not change, an operator's
input vector only gets shorter, and the subgraph's operator vector keeps the
operators that remain in their order (fbedit.py explains why that works in
place); new buffer tables for the tensors made constant go in front of
the old bytes (fbedit.edit_model).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from . import _engine, batch_shapes
from .fbedit import (METADATA_BUFFER, MODEL_METADATA, MODEL_SUBGRAPHS, SUBGRAPH_OPERATORS, SUBGRAPH_TENSORS, _Reader,
                     edit_model)
from .batch_shapes import TENSOR_SHAPE_SIGNATURE
from .model import Operator, Subgraph, load_model

OPERATOR_INPUTS = 1
# Values followed: integer tensors of at most this many elements (shapes,
# axes, sizes), which is what shape arithmetic computes on.
VALUE_MAX_ELEMENTS = 64
_INT_TYPES = ("INT32", "INT64")
# Operators computed here when their inputs' values are known; removed when
# nothing but shape arithmetic and RESHAPE's shape input reads what they give.
VALUE_OPS = frozenset(("SHAPE", "GATHER", "STRIDED_SLICE", "SLICE", "CONCATENATION", "PACK", "UNPACK",
                       "REDUCE_PROD", "SUM", "REDUCE_MAX", "REDUCE_MIN", "CAST", "ADD", "SUB", "MUL",
                       "FLOOR_DIV", "MAXIMUM", "MINIMUM", "NEG", "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "FILL"))
_CONTROL_FLOW = ("IF", "WHILE", "CALL_ONCE")


class ShapeError(ValueError):
    """A shape this module cannot follow (the model is left as it is)."""


# What following a malformed model's shapes and values can raise (numpy's
# errors on them included): that subgraph is left as it is.
_NOT_FOLLOWED = (ValueError, IndexError, KeyError, TypeError, OverflowError, ZeroDivisionError)


@dataclass
class Folded:
    """What fold_shapes() changed: (subgraph, tensor) -> (written shape, the
    shape it has), the operators removed per subgraph, the buffers that now
    hold a RESHAPE's new shape (buffer index -> its bytes: the computed
    shape tensor, an empty buffer of its own, made constant), and the
    RESHAPEs whose shape input was dropped instead (its tensor shares its
    buffer); `left` says why a subgraph was left as it is (empty when none
    was)."""
    shapes: dict[tuple[int, int], tuple[tuple[int, ...], tuple[int, ...]]] = field(default_factory=dict)
    removed: dict[int, list[int]] = field(default_factory=dict)
    constants: dict[int, bytes] = field(default_factory=dict)
    reshapes: dict[int, list[int]] = field(default_factory=dict)
    left: list[str] = field(default_factory=list)
    dequantized: int = 0  # float16 constants made float32 (their DEQUANTIZE among `removed`)

    def __bool__(self) -> bool:
        return bool(self.shapes or any(self.removed.values()) or self.constants or any(self.reshapes.values()))

    @property
    def n_removed(self) -> int:
        """Shape-arithmetic operators removed."""
        return sum(len(v) for v in self.removed.values()) - self.dequantized

    def summary(self) -> str:
        """What changed in the shapes ('' when nothing)."""
        return ", ".join(([f"{len(self.shapes)} tensor shape(s) written"] if self.shapes else [])
                         + ([f"{self.n_removed} shape-arithmetic operator(s) removed"] if self.n_removed else []))


# --- shapes -----------------------------------------------------------------

Shape = tuple[int, ...]


def _axis(axis: int, rank: int) -> int:
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < max(rank, 1):
        raise ShapeError(f"axis {axis} outside a shape of rank {rank}")
    return a


def _scalar(v: np.ndarray | None, what: str) -> int:
    if v is None or v.size != 1:
        raise ShapeError(f"{what} is not a known single value")
    return int(v.reshape(-1)[0])


def _vector(v: np.ndarray | None, what: str) -> list[int]:
    if v is None:
        raise ShapeError(f"{what} is not known")
    return [int(x) for x in v.reshape(-1)]


def _window(size: int, k: int, stride: int, dilation: int, padding: str) -> int:
    if stride < 1 or dilation < 1:
        raise ShapeError("stride or dilation below 1")
    if padding == "SAME":
        return (size + stride - 1) // stride
    return (size + stride - ((k - 1) * dilation + 1)) // stride


def _reshaped(elements: int, dims: list[int]) -> Shape:
    known = 1
    for d in dims:
        if d != -1:
            known *= d
    if dims.count(-1) > 1 or any(d < -1 for d in dims):
        raise ShapeError(f"new shape {dims}")
    if -1 in dims:
        if known == 0 or elements % known:
            raise ShapeError(f"new shape {dims} does not divide {elements} elements")
        dims = [elements // known if d == -1 else d for d in dims]
    return tuple(dims)


def _strided_key(op: Operator, begin: list[int], end: list[int], strides: list[int]) -> tuple:
    """STRIDED_SLICE as a numpy index, as the kernel runs it: begin, end
    and shrink-axis masks (TFLM's kernel, and so the engine's, ignores the
    ellipsis and new-axis masks and the offset option)."""
    o = op.options
    key: list[Any] = []
    for i in range(len(begin)):
        bit = 1 << i
        if o.get("ShrinkAxisMask", 0) & bit:
            key.append(begin[i])
        else:
            b = None if o.get("BeginMask", 0) & bit else begin[i]
            e = None if o.get("EndMask", 0) & bit else end[i]
            if strides[i] == 0:
                raise ShapeError("a stride of 0")
            key.append(slice(b, e, strides[i]))
    return tuple(key)


class _Graph:
    """Shapes and values of one subgraph's tensors, followed op by op."""

    def __init__(self, sg: Subgraph, signature: list[list[int] | None]) -> None:
        self.sg = sg
        self.signature = signature
        # Written shapes until an operator gives its outputs theirs (the
        # inputs', constants', variables' and any tensor's no operator writes).
        self.shape: dict[int, Shape] = {t.index: tuple(t.shape) for t in sg.tensors}
        self.value: dict[int, np.ndarray] = {}
        for t in sg.tensors:
            if t.is_constant and t.dtype in _INT_TYPES and t.elements <= VALUE_MAX_ELEMENTS:
                v = np.frombuffer(t.data, dtype=t.numpy_dtype)
                if v.size == t.elements:
                    self.value[t.index] = v.reshape(t.shape)

    def s(self, op: Operator, k: int) -> Shape:
        if k >= len(op.inputs) or op.inputs[k] < 0 or op.inputs[k] not in self.shape:
            raise ShapeError(f"input {k} of operator {op.index} has no known shape")
        return self.shape[op.inputs[k]]

    def v(self, op: Operator, k: int) -> np.ndarray | None:
        return self.value.get(op.inputs[k]) if k < len(op.inputs) and op.inputs[k] >= 0 else None


def _same(g: _Graph, op: Operator) -> list[Shape]:
    return [g.s(op, 0)]


def _broadcast(g: _Graph, op: Operator) -> list[Shape]:
    try:
        return [tuple(np.broadcast_shapes(*(g.s(op, k) for k in range(len(op.inputs)))))]
    except ValueError as e:
        raise ShapeError(str(e)) from None


def _fully_connected(g: _Graph, op: Operator) -> list[Shape]:
    x, w = g.s(op, 0), g.s(op, 1)
    if len(w) != 2 or w[1] == 0:
        raise ShapeError("weights are not 2-D")
    if op.options.get("KeepNumDims"):
        return [x[:-1] + (w[0],)]
    n = int(np.prod(x, dtype=np.int64))
    if n % w[1]:
        raise ShapeError("input size is not a multiple of the weights' depth")
    return [(n // w[1], w[0])]


def _conv(g: _Graph, op: Operator) -> list[Shape]:
    x, f = g.s(op, 0), g.s(op, 1)
    o = op.options
    if len(x) != 4 or len(f) != 4:
        raise ShapeError("not 4-D")
    h = _window(x[1], f[1], o.get("StrideH", 1), o.get("DilationHFactor", 1), o.get("Padding"))
    w = _window(x[2], f[2], o.get("StrideW", 1), o.get("DilationWFactor", 1), o.get("Padding"))
    return [(x[0], h, w, f[3] if op.opcode == "DEPTHWISE_CONV_2D" else f[0])]


def _pool(g: _Graph, op: Operator) -> list[Shape]:
    x, o = g.s(op, 0), op.options
    if len(x) != 4:
        raise ShapeError("not 4-D")
    h = _window(x[1], o.get("FilterHeight", 1), o.get("StrideH", 1), 1, o.get("Padding"))
    w = _window(x[2], o.get("FilterWidth", 1), o.get("StrideW", 1), 1, o.get("Padding"))
    return [(x[0], h, w, x[3])]


def _reshape(g: _Graph, op: Operator) -> list[Shape]:
    x = g.s(op, 0)
    n = int(np.prod(x, dtype=np.int64))
    v = g.v(op, 1)
    if v is not None:
        return [_reshaped(n, _vector(v, "the new shape"))]
    if len(op.inputs) > 1 and op.inputs[1] >= 0:
        raise ShapeError("the new shape is computed from values not known here")
    dims = op.options.get("NewShapeAsNumpy")
    if not isinstance(dims, list):
        raise ShapeError("no new shape")
    return [_reshaped(n, [int(d) for d in dims])]


def _squeeze(g: _Graph, op: Operator) -> list[Shape]:
    x = g.s(op, 0)
    dims = op.options.get("SqueezeDimsAsNumpy")
    dims = dims if isinstance(dims, list) else []
    axes = {_axis(a, len(x)) for a in dims} if dims else {i for i, d in enumerate(x) if d == 1}
    return [tuple(d for i, d in enumerate(x) if i not in axes)]


def _expand_dims(g: _Graph, op: Operator) -> list[Shape]:
    x = g.s(op, 0)
    a = _scalar(g.v(op, 1), "the axis")
    a = _axis(a, len(x) + 1)
    return [x[:a] + (1,) + x[a:]]


def _concatenation(g: _Graph, op: Operator) -> list[Shape]:
    shapes = [g.s(op, k) for k in range(len(op.inputs))]
    a = _axis(op.options.get("Axis", 0), len(shapes[0]))
    return [shapes[0][:a] + (sum(s[a] for s in shapes),) + shapes[0][a + 1:]]


def _pack(g: _Graph, op: Operator) -> list[Shape]:
    x = g.s(op, 0)
    a = _axis(op.options.get("Axis", 0), len(x) + 1)
    return [x[:a] + (len(op.inputs),) + x[a:]]


def _unpack(g: _Graph, op: Operator) -> list[Shape]:
    x = g.s(op, 0)
    a = _axis(op.options.get("Axis", 0), len(x))
    return [x[:a] + x[a + 1:]] * len(op.outputs)


def _split(g: _Graph, op: Operator) -> list[Shape]:
    a_in, x_in = (0, 1) if op.opcode == "SPLIT" else (2, 0)
    x = g.s(op, x_in)
    a = _axis(_scalar(g.v(op, a_in), "the axis"), len(x))
    if op.opcode == "SPLIT":
        n = len(op.outputs)
        if not n or x[a] % n:
            raise ShapeError("the axis does not split evenly")
        sizes = [x[a] // n] * n
    else:
        sizes = _vector(g.v(op, 1), "the sizes")
        if sizes.count(-1) == 1:
            sizes[sizes.index(-1)] = x[a] - (sum(sizes) + 1)
    return [x[:a] + (s,) + x[a + 1:] for s in sizes]


def _reduce(g: _Graph, op: Operator) -> list[Shape]:
    x = g.s(op, 0)
    axes = {_axis(a, len(x)) for a in _vector(g.v(op, 1), "the axes")}
    if op.options.get("KeepDims"):
        return [tuple(1 if i in axes else d for i, d in enumerate(x))]
    return [tuple(d for i, d in enumerate(x) if i not in axes)]


def _arg(g: _Graph, op: Operator) -> list[Shape]:
    x = g.s(op, 0)
    a = _axis(_scalar(g.v(op, 1), "the axis"), len(x))
    return [x[:a] + x[a + 1:]]


def _transpose(g: _Graph, op: Operator) -> list[Shape]:
    x = g.s(op, 0)
    perm = _vector(g.v(op, 1), "the permutation")
    if sorted(_axis(p, len(x)) for p in perm) != list(range(len(x))):
        raise ShapeError(f"permutation {perm}")
    return [tuple(x[_axis(p, len(x))] for p in perm)]


def _strided_slice(g: _Graph, op: Operator) -> list[Shape]:
    key = _strided_key(op, _vector(g.v(op, 1), "begin"), _vector(g.v(op, 2), "end"),
                       _vector(g.v(op, 3), "strides") if len(op.inputs) > 3 else [1] * len(_vector(g.v(op, 1), "")))
    return [np.broadcast_to(np.int8(0), g.s(op, 0))[key].shape]


def _slice(g: _Graph, op: Operator) -> list[Shape]:
    x = g.s(op, 0)
    begin, size = _vector(g.v(op, 1), "begin"), _vector(g.v(op, 2), "size")
    if len(begin) != len(x) or len(size) != len(x):
        raise ShapeError("begin and size do not match the rank")
    return [tuple(x[i] - begin[i] if size[i] == -1 else size[i] for i in range(len(x)))]


def _gather(g: _Graph, op: Operator) -> list[Shape]:
    x, idx = g.s(op, 0), g.s(op, 1)
    a = _axis(op.options.get("Axis", 0), len(x))
    b = op.options.get("BatchDims", 0)
    b = b + len(idx) if b < 0 else b
    return [x[:a] + idx[b:] + x[a + 1:]]


def _tile(g: _Graph, op: Operator) -> list[Shape]:
    x, m = g.s(op, 0), _vector(g.v(op, 1), "the multiples")
    if len(m) != len(x):
        raise ShapeError("multiples do not match the rank")
    return [tuple(d * k for d, k in zip(x, m))]


def _from_value(k: int) -> Callable[[_Graph, Operator], list[Shape]]:
    def rule(g: _Graph, op: Operator) -> list[Shape]:
        return [tuple(_vector(g.v(op, k), "the shape"))]
    return rule


def _pad(g: _Graph, op: Operator) -> list[Shape]:
    x = g.s(op, 0)
    p = _vector(g.v(op, 1), "the paddings")
    if len(p) != 2 * len(x):
        raise ShapeError("paddings do not match the rank")
    return [tuple(d + p[2 * i] + p[2 * i + 1] for i, d in enumerate(x))]


def _shape(g: _Graph, op: Operator) -> list[Shape]:
    return [(len(g.s(op, 0)),)]


def _resize(g: _Graph, op: Operator) -> list[Shape]:
    x, size = g.s(op, 0), _vector(g.v(op, 1), "the size")
    if len(x) != 4 or len(size) != 2:
        raise ShapeError("not 4-D")
    return [(x[0], size[0], size[1], x[3])]


def _space_depth(g: _Graph, op: Operator) -> list[Shape]:
    x, b = g.s(op, 0), op.options.get("BlockSize", 1)
    if len(x) != 4 or b < 1:
        raise ShapeError("not 4-D")
    if op.opcode == "SPACE_TO_DEPTH":
        return [(x[0], x[1] // b, x[2] // b, x[3] * b * b)]
    return [(x[0], x[1] * b, x[2] * b, x[3] // (b * b))]


def _space_batch(g: _Graph, op: Operator) -> list[Shape]:
    x = g.s(op, 0)
    block = _vector(g.v(op, 1), "the block shape")
    pads = _vector(g.v(op, 2), "the paddings")
    m = len(block)
    if len(pads) != 2 * m or len(x) < m + 1 or any(b < 1 for b in block):
        raise ShapeError("block shape and paddings do not match")
    size = int(np.prod(block))
    if op.opcode == "SPACE_TO_BATCH_ND":
        mid = tuple((x[1 + i] + pads[2 * i] + pads[2 * i + 1]) // block[i] for i in range(m))
        return [(x[0] * size,) + mid + x[1 + m:]]
    mid = tuple(x[1 + i] * block[i] - pads[2 * i] - pads[2 * i + 1] for i in range(m))
    return [(x[0] // size,) + mid + x[1 + m:]]


def _batch_matmul(g: _Graph, op: Operator) -> list[Shape]:
    x, y = g.s(op, 0), g.s(op, 1)
    if len(x) < 2 or len(y) < 2:
        raise ShapeError("rank below 2")
    m = x[-1] if op.options.get("AdjX") else x[-2]
    n = y[-2] if op.options.get("AdjY") else y[-1]
    try:
        batch = tuple(np.broadcast_shapes(x[:-2], y[:-2]))
    except ValueError as e:
        raise ShapeError(str(e)) from None
    return [batch + (m, n)]


def _embedding_lookup(g: _Graph, op: Operator) -> list[Shape]:
    return [g.s(op, 0) + g.s(op, 1)[1:]]


def _select(g: _Graph, op: Operator) -> list[Shape]:
    return [g.s(op, 1)]


_RULES: dict[str, Callable[[_Graph, Operator], list[Shape]]] = {
    **{name: _same for name in (
        "ABS", "CEIL", "COS", "ELU", "EXP", "FLOOR", "GELU", "HARD_SWISH", "L2_NORMALIZATION", "LEAKY_RELU",
        "LOG", "LOGISTIC", "LOG_SOFTMAX", "NEG", "RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", "ROUND",
        "RSQRT", "SIN", "SOFTMAX", "SQRT", "SQUARE", "TANH", "QUANTIZE", "DEQUANTIZE", "CAST", "ZEROS_LIKE",
        "LOGICAL_NOT", "CUMSUM", "REVERSE_V2", "ADD_N", "SIGN")},
    **{name: _broadcast for name in (
        "ADD", "SUB", "MUL", "DIV", "FLOOR_DIV", "FLOOR_MOD", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE",
        "POW", "EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL", "LOGICAL_AND",
        "LOGICAL_OR", "PRELU", "SELECT_V2")},
    "FULLY_CONNECTED": _fully_connected,
    "CONV_2D": _conv, "DEPTHWISE_CONV_2D": _conv,
    "AVERAGE_POOL_2D": _pool, "MAX_POOL_2D": _pool, "L2_POOL_2D": _pool,
    "RESHAPE": _reshape, "SQUEEZE": _squeeze, "EXPAND_DIMS": _expand_dims,
    "CONCATENATION": _concatenation, "PACK": _pack, "UNPACK": _unpack,
    "SPLIT": _split, "SPLIT_V": _split,
    "MEAN": _reduce, "SUM": _reduce, "REDUCE_MAX": _reduce, "REDUCE_MIN": _reduce, "REDUCE_PROD": _reduce,
    "REDUCE_ANY": _reduce, "REDUCE_ALL": _reduce,
    "ARG_MAX": _arg, "ARG_MIN": _arg,
    "TRANSPOSE": _transpose, "STRIDED_SLICE": _strided_slice, "SLICE": _slice, "GATHER": _gather,
    "TILE": _tile, "BROADCAST_TO": _from_value(1), "FILL": _from_value(0), "TRANSPOSE_CONV": _from_value(0),
    "PAD": _pad, "PADV2": _pad, "MIRROR_PAD": _pad, "SHAPE": _shape,
    "RESIZE_BILINEAR": _resize, "RESIZE_NEAREST_NEIGHBOR": _resize,
    "SPACE_TO_DEPTH": _space_depth, "DEPTH_TO_SPACE": _space_depth,
    "SPACE_TO_BATCH_ND": _space_batch, "BATCH_TO_SPACE_ND": _space_batch,
    "BATCH_MATMUL": _batch_matmul, "EMBEDDING_LOOKUP": _embedding_lookup, "SELECT": _select,
}


# --- values -----------------------------------------------------------------

def _values(g: _Graph, op: Operator) -> list[np.ndarray] | None:
    """The values of a shape-arithmetic operator's outputs, None when its
    inputs' values are not all known (SHAPE needs only its input's shape)."""
    name = op.opcode
    if name == "SHAPE":
        return [np.array(g.s(op, 0), dtype=np.int64)]
    ins = [g.v(op, k) for k in range(len(op.inputs))]
    need = ins[:1] if name in ("RESHAPE", "SQUEEZE", "EXPAND_DIMS") else ins
    if not ins or any(v is None for v in need):
        return None
    x = ins[0]
    o = op.options
    if o.get("FusedActivationFunction", "NONE") != "NONE":
        return None  # (shape arithmetic has none)
    if name in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "FLOOR_DIV"):
        a, b = (v.astype(np.int64) for v in ins[:2])
        if name == "FLOOR_DIV" and (b == 0).any():
            return None
        f = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply, "MAXIMUM": np.maximum,
             "MINIMUM": np.minimum, "FLOOR_DIV": np.floor_divide}[name]
        return [f(a, b)]
    if name == "NEG":
        return [-x.astype(np.int64)]
    if name == "CAST":
        return [x]
    if name in ("RESHAPE", "SQUEEZE", "EXPAND_DIMS"):
        return [x]  # reshaped to the output's shape by the caller
    if name == "GATHER":
        if o.get("BatchDims", 0) or (ins[1] < 0).any():
            return None  # (the kernels refuse negative indices)
        return [np.take(x, ins[1].astype(np.int64), axis=_axis(o.get("Axis", 0), x.ndim))]
    if name == "STRIDED_SLICE":
        strides = _vector(ins[3], "strides") if len(ins) > 3 else [1] * ins[1].size
        return [x[_strided_key(op, _vector(ins[1], "begin"), _vector(ins[2], "end"), strides)]]
    if name == "SLICE":
        begin, size = _vector(ins[1], "begin"), _vector(ins[2], "size")
        return [x[tuple(slice(b, None if s == -1 else b + s) for b, s in zip(begin, size))]]
    if name == "CONCATENATION":
        return [np.concatenate([v.astype(np.int64) for v in ins], axis=_axis(o.get("Axis", 0), x.ndim))]
    if name == "PACK":
        return [np.stack([v.astype(np.int64) for v in ins], axis=_axis(o.get("Axis", 0), x.ndim + 1))]
    if name == "UNPACK":
        a = _axis(o.get("Axis", 0), x.ndim)
        return [np.take(x, i, axis=a) for i in range(x.shape[a])]
    if name in ("REDUCE_PROD", "SUM", "REDUCE_MAX", "REDUCE_MIN"):
        axes = tuple(_axis(a, x.ndim) for a in _vector(ins[1], "axes"))
        f = {"REDUCE_PROD": np.prod, "SUM": np.sum, "REDUCE_MAX": np.max, "REDUCE_MIN": np.min}[name]
        if name in ("REDUCE_MAX", "REDUCE_MIN") and any(x.shape[a] == 0 for a in axes):
            return None
        return [f(x.astype(np.int64), axis=axes, keepdims=bool(o.get("KeepDims")))]
    if name == "FILL":
        dims = _vector(ins[0], "dims")
        if any(d < 0 for d in dims) or int(np.prod(dims, dtype=np.int64)) > VALUE_MAX_ELEMENTS or not ins[1].size:
            return None
        return [np.full(tuple(dims), ins[1].reshape(-1)[0])]
    return None


# --- one subgraph -----------------------------------------------------------

def _follow(sg: Subgraph, signature: list[list[int] | None]) -> tuple[_Graph, dict[int, Shape]]:
    """Every tensor's shape and the known values; raises ShapeError when a
    shape cannot be followed. Returns the tensors whose shape is not the
    written one."""
    g = _Graph(sg, signature)
    for op in sg.operators:
        if op.opcode in _CONTROL_FLOW or op.opcode.startswith("CUSTOM:"):
            rule = None
        else:
            rule = _RULES.get(op.opcode)
        outs = [o for o in op.outputs if o >= 0]
        # Without a rule (or one that cannot say), the written shapes stand
        # while the inputs' shapes are the written ones too: the converter's
        # and TF Lite's static shapes then agree.
        as_written = all(g.shape.get(i) == tuple(sg.tensors[i].shape) for i in op.inputs if i >= 0)
        try:
            if rule is None:
                raise ShapeError(f"operator {op.index} ({op.opcode}): no rule gives its outputs' shapes")
            shapes = rule(g, op)
        except _NOT_FOLLOWED:
            if not as_written:
                raise
            for o in outs:
                g.shape[o] = tuple(sg.tensors[o].shape)
            continue
        if len(shapes) != len(outs):
            raise ShapeError(f"operator {op.index} ({op.opcode}): {len(outs)} outputs, {len(shapes)} shapes")
        for o, s in zip(outs, shapes):
            if any(d < 0 for d in s):
                raise ShapeError(f"operator {op.index} ({op.opcode}): shape {list(s)} of tensor {o}")
            s = tuple(int(d) for d in s)
            written = tuple(sg.tensors[o].shape)
            # A written shape with more leading ones is the same shape (the
            # kernels take it; TF's converter does not write it).
            extra = len(written) - len(s)
            g.shape[o] = written if extra > 0 and written == (1,) * extra + s else s
        try:
            values = _values(g, op) if op.opcode in VALUE_OPS else None
        except _NOT_FOLLOWED:
            values = None
        if values is not None and len(values) == len(outs):
            for o, v in zip(outs, values):
                t = sg.tensors[o]
                if t.dtype in _INT_TYPES and v.size == int(np.prod(g.shape[o], dtype=np.int64)) \
                        and v.size <= VALUE_MAX_ELEMENTS:
                    g.value[o] = np.asarray(v, dtype=t.numpy_dtype).reshape(g.shape[o])
    changed: dict[int, Shape] = {}
    for t in sg.tensors:
        s = g.shape.get(t.index)
        if s is None or s == tuple(t.shape):
            continue
        sig = signature[t.index]
        if len(s) != len(t.shape) or sig is None or len(sig) != len(s) \
                or any(a != b and k != -1 for a, b, k in zip(s, t.shape, sig)):
            raise ShapeError(f"tensor {t.index} ({t.name}) has shape {list(s)} here, "
                             f"{list(t.shape)} as written, where its signature {sig} knows it")
        changed[t.index] = s
    return g, changed


def _removable(sg: Subgraph, g: _Graph) -> tuple[list[int], list[int]]:
    """The shape-arithmetic operators nothing else needs, and the RESHAPEs
    whose shape input they compute (dropped with them)."""
    readers: dict[int, list[tuple[Operator, int]]] = {}
    for op in sg.operators:
        for k, i in enumerate(op.inputs):
            if i >= 0:
                readers.setdefault(i, []).append((op, k))
    outputs = set(sg.outputs)
    cand = {op.index for op in sg.operators
            if op.opcode in VALUE_OPS and op.outputs and all(o >= 0 and o in g.value and o not in outputs
                                                             for o in op.outputs)}

    def strippable(op: Operator) -> bool:
        # A RESHAPE reads its computed shape at input 1 and nothing else from
        # the candidates, and its output's shape is followed (so written).
        return op.opcode == "RESHAPE" and op.index not in cand and len(op.inputs) == 2 \
            and op.outputs[0] in g.shape

    changed = True
    while changed:
        changed = False
        for op in sg.operators:
            if op.index not in cand:
                continue
            for o in op.outputs:
                for r, k in readers.get(o, []):
                    if r.index in cand or (k == 1 and strippable(r)):
                        continue
                    cand.discard(op.index)
                    changed = True
                    break
                if op.index not in cand:
                    break
    reshapes = [op.index for op in sg.operators if strippable(op) and op.inputs[1] in
                {o for c in cand for o in sg.operators[c].outputs}]
    # Nothing gained when no RESHAPE drops its input (the candidates feed nothing).
    if not reshapes:
        return [], []
    return sorted(cand), reshapes


# --- the model --------------------------------------------------------------

def fold_plan(data: bytes) -> Folded:
    """What fold_shapes() would change (nothing for a model whose tensors'
    signatures are all known)."""
    model = load_model(data)
    r = _Reader(data)
    subgraphs_at, n_sg = r.vector(r.deref(0), MODEL_SUBGRAPHS)
    plan = Folded()
    own = _own_buffers(model, r)
    for s, sg in enumerate(model.subgraphs[:n_sg]):
        _float16_constants(sg, s, own, plan)
    # A subgraph called by another has its caller's shapes: such models are
    # left as they are.
    if any(op.opcode in _CONTROL_FLOW for sg in model.subgraphs for op in sg.operators):
        plan.left.append("the model: control flow")
        return plan
    for s, sg in enumerate(model.subgraphs[:n_sg]):
        tensors_at, n_t = r.vector(r.deref(subgraphs_at + 4 * s), SUBGRAPH_TENSORS)
        signature: list[list[int] | None] = []
        for i in range(min(n_t, len(sg.tensors))):
            at, n = r.vector(r.deref(tensors_at + 4 * i), TENSOR_SHAPE_SIGNATURE)
            signature.append([r.i32(at + 4 * k) for k in range(n)] if n else None)
        if len(signature) != len(sg.tensors) or not any(sig and -1 in sig for sig in signature):
            continue
        try:
            g, changed = _follow(sg, signature)
        except _NOT_FOLLOWED as e:
            plan.left.append(f"subgraph {s}: {e}")
            continue
        for i, shape in changed.items():
            plan.shapes[(s, i)] = (tuple(sg.tensors[i].shape), shape)
        removed, reshapes = _removable(sg, g)
        plan.removed[s] = sorted(set(plan.removed.get(s, [])) | set(removed))
        # The new shape becomes the RESHAPE's constant input where its tensor
        # has an empty buffer of its own (TF's converter gives every tensor
        # one): TF Lite, which reads it, runs the model too. Else the input
        # goes (TFLM and the engine take the output's shape).
        plan.reshapes[s] = []
        for k in reshapes:
            op = sg.operators[k]
            t = sg.tensors[op.inputs[1]]
            out_shape = g.shape[op.outputs[0]]
            if own.get(t.buffer) == (s, t.index) and t.data is None and t.elements == len(out_shape):
                plan.constants[t.buffer] = np.asarray(out_shape, dtype=t.numpy_dtype).tobytes()
            else:
                plan.reshapes[s].append(k)
    return plan


def _float16_constants(sg: Subgraph, s: int, own: dict[int, tuple[int, int]], plan: Folded) -> None:
    """TF's float16 quantization: each DEQUANTIZE of a constant float16
    tensor (which neither TFLM nor the engine takes) becomes its float32
    output made constant (the conversion is exact), where that output has an
    empty buffer of its own."""
    outputs = set(sg.outputs)
    for op in sg.operators:
        if op.opcode != "DEQUANTIZE" or len(op.inputs) != 1 or len(op.outputs) != 1 \
                or not all(0 <= i < len(sg.tensors) for i in (*op.inputs, *op.outputs)):
            continue
        x, y = sg.tensors[op.inputs[0]], sg.tensors[op.outputs[0]]
        if x.dtype != "FLOAT16" or x.data is None or len(x.data) != 2 * x.elements or y.dtype != "FLOAT32" \
                or y.elements != x.elements or y.index in outputs or y.data is not None \
                or own.get(y.buffer) != (s, y.index):
            continue
        plan.constants[y.buffer] = np.frombuffer(x.data, "<f2").astype("<f4").tobytes()
        plan.removed.setdefault(s, []).append(op.index)
        plan.dequantized += 1


def _own_buffers(model, r: _Reader) -> dict[int, tuple[int, int]]:
    """Buffer index -> (subgraph, tensor) of the buffers one tensor alone
    uses (not buffer 0, not a metadata entry's)."""
    users: dict[int, list[tuple[int, int]]] = {}
    for s, sg in enumerate(model.subgraphs):
        for t in sg.tensors:
            users.setdefault(t.buffer, []).append((s, t.index))
    meta_at, n_meta = r.vector(r.deref(0), MODEL_METADATA)
    for i in range(n_meta):
        p = r.field(r.deref(meta_at + 4 * i), METADATA_BUFFER)
        users.setdefault(r.u32(p) if p else 0, []).append((-1, -1))
    return {b: u[0] for b, u in users.items() if b > 0 and len(u) == 1 and b < model.buffer_count}


def fold_shapes(data: bytes) -> tuple[bytes, Folded]:
    """The model with the shapes its tensors have written and its
    shape arithmetic folded (see the module's text), and what changed (the
    model as it is when nothing does)."""
    try:
        plan = fold_plan(data)
    except (struct.error, IndexError) as e:
        raise ValueError(f"malformed model: {e}") from None
    if not plan:
        return data, plan
    # Prepared data and a patch schedule follow the operators and their
    # shapes: they go (prepare writes them again).
    following = (_engine.PREPARED_METADATA, _engine.PATCH_METADATA)
    if any(name in load_model(data).metadata for name in following):
        data = edit_model(data, remove=following)
        plan = fold_plan(data)
    out = bytearray(data)
    batch_shapes.write_shapes(out, {key: shape for key, (_, shape) in plan.shapes.items()})
    r = _Reader(out)
    subgraphs_at, n_sg = r.vector(r.deref(0), MODEL_SUBGRAPHS)
    inputs_at: dict[tuple[int, int], int] = {}
    for s in range(n_sg):
        ops_at, n_ops = r.vector(r.deref(subgraphs_at + 4 * s), SUBGRAPH_OPERATORS)
        for i in range(n_ops):
            inputs_at[(s, i)] = r.vector(r.deref(ops_at + 4 * i), OPERATOR_INPUTS)[0]
    # An input vector several operators share is shortened only when every
    # one of them drops the same input.
    stripped = {inputs_at[(s, i)] for s, ops in plan.reshapes.items() for i in ops}
    for key, at in inputs_at.items():
        if at in stripped and key[1] not in plan.reshapes.get(key[0], []):
            raise ValueError(f"operator {key[1]} of subgraph {key[0]} shares its inputs with a RESHAPE: "
                             "cannot drop the RESHAPE's shape input")
    for at in stripped:
        struct.pack_into("<I", out, at - 4, 1)
    for s, removed in plan.removed.items():
        if not removed:
            continue
        ops_at, n_ops = r.vector(r.deref(subgraphs_at + 4 * s), SUBGRAPH_OPERATORS)
        gone = set(removed)
        tables = [r.deref(ops_at + 4 * i) for i in range(n_ops)]
        kept = [t for i, t in enumerate(tables) if i not in gone]
        # Each kept operator's table moves to an earlier slot: its offset
        # stays positive (tables follow their vector).
        for i, t in enumerate(kept):
            slot = ops_at + 4 * i
            struct.pack_into("<I", out, slot, t - slot)
        struct.pack_into("<I", out, ops_at - 4, len(kept))
    if plan.constants:
        return edit_model(bytes(out), buffers=plan.constants), plan
    return bytes(out), plan


def fixed_shapes(data: bytes) -> tuple[bytes, list[batch_shapes.BatchChange], Folded]:
    """What prepare does first: the batch (batch_shapes.fixed_batch), then
    the other sizes and the shape arithmetic, and the float16 constants
    (fold_shapes); with what each changed."""
    fixed, changes = batch_shapes.fixed_batch(data)
    out, plan = fold_shapes(fixed)
    return out, changes, plan


def prepare_note(data: bytes) -> str:
    """What `tflm-host prepare` writes in a model converted with an unknown
    batch size or with float16 weights ('' when nothing): `inspect`, `deploy`
    and the commands' errors say it."""
    try:
        _, changes, plan = fixed_shapes(data)
    except ValueError:
        return ""  # (what is wrong with the model is the engine's to say)
    notes = []
    shapes = prepare_writes(changes, plan)
    if shapes:
        notes.append(f"converted with an unknown batch size: tflm-host prepare {shapes}")
    if plan.dequantized:
        notes.append(f"float16 weights: tflm-host prepare makes {plan.dequantized} float16 constant(s) float32 "
                     "(neither TFLM nor this engine has float16 kernels)")
    return "; ".join(notes)


def prepare_writes(changes: list[batch_shapes.BatchChange], plan: Folded) -> str:
    """What prepare writes in a model converted with an unknown batch size,
    from batch_shapes.fixed_batch()'s changes and the fold's ("writes 2
    tensor shape(s), removes 7 shape-arithmetic operator(s)"; '' when
    nothing)."""
    what = [f"the batch of {len(changes)} tensor(s)"] if changes else []
    what += [f"{len(plan.shapes)} tensor shape(s)"] if plan.shapes else []
    return ", ".join(([f"writes {' and '.join(what)}"] if what else [])
                     + ([f"removes {plan.n_removed} shape-arithmetic operator(s)"] if plan.n_removed else []))
