"""A .tflite model read into plain Python objects."""

from __future__ import annotations

import inspect
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import flatbuffers
import numpy as np
import tflite

from . import _engine, schema

_OPTIONS_NAMES = {v: k for k, v in vars(tflite.BuiltinOptions).items() if not k.startswith("_")}
_ACTIVATIONS = {v: k for k, v in vars(tflite.ActivationFunctionType).items() if not k.startswith("_")}
_PADDINGS = {v: k for k, v in vars(tflite.Padding).items() if not k.startswith("_")}


@dataclass
class Quantization:
    scales: list[float]
    zero_points: list[int]
    dimension: int = 0

    @property
    def per_channel(self) -> bool:
        return len(self.scales) > 1


@dataclass
class Tensor:
    index: int
    name: str
    dtype: str  # schema name: "INT8", "FLOAT32", ...
    shape: tuple[int, ...]
    buffer: int
    data: bytes | None  # constant bytes, None for activations
    quantization: Quantization | None
    is_variable: bool = False

    @property
    def elements(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def nbytes(self) -> int:
        return self.elements * schema.TYPE_SIZES[self.dtype]

    @property
    def is_constant(self) -> bool:
        return self.data is not None

    @property
    def numpy_dtype(self) -> np.dtype:
        return np.dtype(schema.NUMPY_DTYPES[self.dtype])

    @property
    def scale(self) -> float:
        return self.quantization.scales[0] if self.quantization and self.quantization.scales else 0.0

    @property
    def zero_point(self) -> int:
        return self.quantization.zero_points[0] if self.quantization and self.quantization.zero_points else 0


@dataclass
class Operator:
    index: int
    opcode: str  # "CONV_2D", "CUSTOM:Name"
    builtin: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    intermediates: tuple[int, ...]
    options_type: str | None
    options: dict[str, Any] = field(default_factory=dict)
    custom_options: bytes = b""


@dataclass
class Subgraph:
    index: int
    name: str
    tensors: list[Tensor]
    operators: list[Operator]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


@dataclass
class Model:
    version: int
    description: str
    subgraphs: list[Subgraph]
    metadata: dict[str, bytes]
    buffer_count: int
    raw: bytes

    @property
    def main(self) -> Subgraph:
        return self.subgraphs[0]

    @property
    def inputs(self) -> list[Tensor]:
        return [self.main.tensors[i] for i in self.main.inputs]

    @property
    def outputs(self) -> list[Tensor]:
        return [self.main.tensors[i] for i in self.main.outputs]

    def op_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for sg in self.subgraphs:
            for op in sg.operators:
                counts[op.opcode] = counts.get(op.opcode, 0) + 1
        return counts


def _decode(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def _options(op: Any) -> tuple[str | None, dict[str, Any]]:
    """The builtin options of an operator as a dict of field name -> value."""
    name = _OPTIONS_NAMES.get(op.BuiltinOptionsType())
    table = op.BuiltinOptions()
    if not name or name == "NONE" or table is None:
        return None, {}
    cls = getattr(tflite, name, None)
    if cls is None:
        return name, {}
    obj = cls()
    obj.Init(table.Bytes, table.Pos)
    values: dict[str, Any] = {}
    for attr, method in inspect.getmembers(obj, inspect.ismethod):
        if attr[0].islower() or attr == "Init" or attr.startswith("GetRootAs") or attr.endswith(
                ("IsNone", "Length", "BufferHasIdentifier")):
            continue
        params = [p for p in inspect.signature(method).parameters.values() if p.default is p.empty]
        if params:
            continue
        value = _decode(method())
        if attr == "FusedActivationFunction":
            value = _ACTIVATIONS.get(value, value)
        elif attr == "Padding":
            value = _PADDINGS.get(value, value)
        values[attr] = value
    return name, values


def _buffer_data(model: Any, raw: bytes, index: int) -> bytes | None:
    if index <= 0 or index >= model.BuffersLength():
        return None
    buf = model.Buffers(index)
    offset = buf.Offset()
    if offset > 1:
        size = buf.Size()
        return raw[offset:offset + size] if size else None
    if buf.DataLength() == 0:
        return None
    return buf.DataAsNumpy().tobytes()


# What the flatbuffers reader raises on offsets, lengths and values that do
# not fit the file: the model is malformed.
_READ_ERRORS = (struct.error, TypeError, IndexError, KeyError, OverflowError, ValueError, UnicodeDecodeError,
                AttributeError, MemoryError)


def read_bytes(source: str | Path) -> bytes:
    """A model file's bytes; ValueError naming what is wrong with the path
    (a folder, an unreadable or empty file) rather than an OSError."""
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"{path} not found")
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a .tflite file")
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e.strerror or e}") from None
    if not raw:
        raise ValueError(f"{path} is empty")
    return raw


def load_model(source: str | Path | bytes) -> Model:
    """Reads a .tflite file (or its bytes). A malformed model raises
    ValueError: the engine's verdict first (the device's own reader, naming
    the offset, table and field), then anything the Python reader meets."""
    raw = source if isinstance(source, bytes) else read_bytes(source)
    # Several models on one command line: the message names the file.
    name = "" if isinstance(source, bytes) else f"{Path(source).name}: "
    if len(raw) < 8 or raw[4:8] != schema.FILE_IDENTIFIER:
        raise ValueError(f"{name}not a .tflite model (file identifier is not TFL3)")
    try:
        engine_model = _engine.Model(raw)  # the device's verdict, with its words
    except ValueError as e:
        raise ValueError(f"{name}{e}") from None
    where = ["the model's root table"]
    try:
        model = _read(raw, where)
    except _READ_ERRORS as e:
        raise ValueError(f"{name}malformed model: {where[0]}: {_read_error_text(e)}") from None
    model._engine_model = engine_model  # type: ignore[attr-defined]  # arena.engine_model() reuses it
    return model


def _read_error_text(e: BaseException) -> str:
    text = str(e)
    if isinstance(e, struct.error) and "requires a buffer of at least" in text:
        return "an offset or length points past the end of the file (" + text.split(" (")[-1].rstrip(")") + ")"
    if isinstance(e, ValueError) and text:
        return text
    return f"{text} ({type(e).__name__})" if text else type(e).__name__


def _index(what: str, value: int, count: int) -> int:
    if not 0 <= value < count:
        raise ValueError(f"{what} {value} is out of range ({count})")
    return value


def _builtin_code(oc: "tflite.OperatorCode") -> int:
    """The operator code as TFLM reads it: the larger of builtin_code and
    deprecated_builtin_code. (The tflite package's BuiltinCode() gives
    deprecated_builtin_code for codes below 127, which TFLM's own
    compressor leaves 0 for its CUSTOM TFLM_DECODE: that would read ADD.)"""
    at = oc._tab.Offset(10)  # builtin_code, field 3
    code = oc._tab.Get(flatbuffers.number_types.Int32Flags, at + oc._tab.Pos) if at else 0
    return max(code, oc.DeprecatedBuiltinCode())


def _read(raw: bytes, where: list[str]) -> Model:
    fb = tflite.Model.GetRootAs(raw, 0)
    opcodes = []
    for i in range(fb.OperatorCodesLength()):
        where[0] = f"operator code {i}"
        oc = fb.OperatorCodes(i)
        code = _builtin_code(oc)
        custom = oc.CustomCode()
        opcodes.append((code, schema.op_name(code, custom.decode() if custom else None)))
    subgraphs = []
    for s in range(fb.SubgraphsLength()):
        where[0] = f"subgraph {s}"
        sg = fb.Subgraphs(s)
        tensors = []
        for t in range(sg.TensorsLength()):
            where[0] = f"subgraph {s} tensor {t}"
            ft = sg.Tensors(t)
            q = ft.Quantization()
            quant = None
            if q is not None and q.ScaleLength() > 0:
                quant = Quantization(
                    scales=[float(x) for x in q.ScaleAsNumpy()],
                    zero_points=[int(x) for x in q.ZeroPointAsNumpy()] if q.ZeroPointLength() else [0],
                    dimension=q.QuantizedDimension(),
                )
            shape = tuple(int(x) for x in ft.ShapeAsNumpy()) if ft.ShapeLength() else ()
            tensors.append(Tensor(
                index=t,
                name=(ft.Name() or b"").decode("utf-8", "replace"),
                dtype=schema.TENSOR_TYPES[_index("type", ft.Type(), len(schema.TENSOR_TYPES))],
                shape=shape,
                buffer=ft.Buffer(),
                data=_buffer_data(fb, raw, ft.Buffer()),
                quantization=quant,
                is_variable=ft.IsVariable(),
            ))
        operators = []
        for o in range(sg.OperatorsLength()):
            where[0] = f"subgraph {s} operator {o}"
            op = sg.Operators(o)
            code, name = opcodes[_index("opcode index", op.OpcodeIndex(), len(opcodes))]
            options_type, options = _options(op)
            operators.append(Operator(
                index=o,
                opcode=name,
                builtin=code,
                inputs=tuple(int(x) for x in op.InputsAsNumpy()) if op.InputsLength() else (),
                outputs=tuple(int(x) for x in op.OutputsAsNumpy()) if op.OutputsLength() else (),
                intermediates=tuple(int(x) for x in op.IntermediatesAsNumpy()) if op.IntermediatesLength() else (),
                options_type=options_type,
                options=options,
                custom_options=op.CustomOptionsAsNumpy().tobytes() if op.CustomOptionsLength() else b"",
            ))
        where[0] = f"subgraph {s}"
        subgraphs.append(Subgraph(
            index=s,
            name=(sg.Name() or b"").decode("utf-8", "replace"),
            tensors=tensors,
            operators=operators,
            inputs=tuple(int(x) for x in sg.InputsAsNumpy()) if sg.InputsLength() else (),
            outputs=tuple(int(x) for x in sg.OutputsAsNumpy()) if sg.OutputsLength() else (),
        ))
    metadata = {}
    for i in range(fb.MetadataLength()):
        where[0] = f"metadata {i}"
        md = fb.Metadata(i)
        data = _buffer_data(fb, raw, md.Buffer())
        metadata[(md.Name() or b"").decode("utf-8", "replace")] = data or b""
    where[0] = "the model's root table"
    return Model(
        version=fb.Version(),
        description=(fb.Description() or b"").decode("utf-8", "replace"),
        subgraphs=subgraphs,
        metadata=metadata,
        buffer_count=fb.BuffersLength(),
        raw=raw,
    )
