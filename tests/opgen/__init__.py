"""Random models for testing kernels against TFLM: single ops and small graphs.

Each module of this package registers generators with @generator("FAMILY/variant").
A generator takes a numpy random Generator and returns a Case: the model's
bytes and the parameters it chose (printed when a case fails, to reproduce
it). `cases()` gives a deterministic list of cases over all generators.
"""

from __future__ import annotations

import importlib
import pkgutil
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from tflm_dev.builder import ModelBuilder, SubgraphBuilder
from tflm_dev.builder import single_op as builder_single_op

GENERATORS: dict[str, Callable[[np.random.Generator], "Case"]] = {}
ERROR_CASES: dict[str, Callable[[], "ErrorCase"]] = {}


@dataclass
class Case:
    name: str
    model: bytes
    params: dict[str, Any]
    # Input sets; None: random inputs by type (3 sets).
    inputs: list[list[np.ndarray]] | None = None
    # Runs of one interpreter (stateful models): input sets are used in turn.
    runs: int = 0
    tags: set[str] = field(default_factory=set)
    # The part of a run's outputs that is defined, when TFLM leaves some
    # elements as its arena had them (DETECTION_POSTPROCESS's unused rows,
    # the signal streaming ops' frames before their buffers fill): only that
    # part compares. Called with the outputs and the run's index. None: all.
    defined: Callable[[list[np.ndarray], int], list[np.ndarray]] | None = None
    # The model TFLM runs for the reference when it refuses this one (int64
    # indices: the same op with int32 ones), its outputs cast to the case's
    # types. None: the case's own model.
    twin: bytes | None = None
    # An op TFLM has no kernel for (int8 and int16 EXP, int8 LOG): each input
    # set's outputs from the op's definition in TensorFlow Lite, instead of
    # TFLM's.
    expected: Callable[[list[np.ndarray]], list[np.ndarray]] | None = None

    def describe(self) -> str:
        return f"{self.name} " + ", ".join(f"{k}={v}" for k, v in self.params.items())

    def samples(self) -> list[list[np.ndarray]]:
        """The case's input sets: its own, or random ones seeded by its name."""
        if self.inputs is not None:
            return self.inputs
        from tflm_host.model import load_model
        from tflm_host.runner import make_inputs
        return make_inputs(load_model(self.model), "random", seed=zlib.crc32(self.name.encode()),
                           count=max(3, self.runs))


@dataclass
class ErrorCase:
    """A model the engine must refuse, or whose invoke must fail, with
    `error` ("ExceptionType text": the exception the module raises and
    text its message holds).
    tflm: TFLM refuses it too (checked against the reference); False where
    TFLM's reference would read or write outside a tensor or abort, or where
    it takes what this engine does not, so it is not run there (`why` says
    which)."""
    name: str
    model: bytes
    inputs: list[np.ndarray]
    error: str
    tflm: bool = True
    why: str = ""


def error_case(name: str):
    def wrap(fn):
        if name in ERROR_CASES:
            raise ValueError(f"error case {name} registered twice")
        ERROR_CASES[name] = fn
        return fn
    return wrap


def error_cases() -> list[ErrorCase]:
    out = []
    for name in sorted(ERROR_CASES):
        case = ERROR_CASES[name]()
        case.name = name
        out.append(case)
    return out


def generator(name: str):
    def wrap(fn):
        if name in GENERATORS:
            raise ValueError(f"generator {name} registered twice")
        GENERATORS[name] = fn
        return fn
    return wrap


def generators(fn, variants: dict[str, tuple]) -> None:
    """Registers fn(rng, *args) under each variant's name."""
    for name, args in variants.items():
        generator(name)(lambda rng, args=args: fn(rng, *args))


def cases(per_generator: int = 8, seed: int = 0, only: str | None = None) -> list[Case]:
    """per_generator cases of every generator (or those whose name contains
    one of the comma-separated parts of `only`)."""
    out = []
    parts = [p for p in (only or "").split(",") if p]
    for name in sorted(GENERATORS):
        if parts and not any(p in name for p in parts):
            continue
        for i in range(per_generator):
            rng = np.random.default_rng([seed, zlib.crc32(name.encode()), i])
            case = GENERATORS[name](rng)
            case.name = f"{name}/{i}"
            out.append(case)
    return out


# -- helpers for generators --------------------------------------------------

QRANGE = {"INT8": (-128, 127), "UINT8": (0, 255), "INT16": (-32768, 32767)}


def act_quant(rng: np.random.Generator, dtype: str, scale_range=(0.005, 0.2)) -> tuple[list[float], list[int]]:
    """Per-tensor quantization of an activation: int16 has zero point 0, as TFLM requires."""
    scale = float(np.float32(rng.uniform(*scale_range)))
    if dtype == "INT16":
        return [scale], [0]
    lo, hi = QRANGE[dtype]
    return [scale], [int(rng.integers(lo + 10, hi - 10))]


def int_quant(rng: np.random.Generator, dtype: str) -> tuple[list[float], list[int]] | None:
    """act_quant for an int8 or int16 tensor; None (no quantization) for the other types."""
    return act_quant(rng, dtype) if dtype in ("INT8", "INT16") else None


def random_shape(rng: np.random.Generator, lo: int, hi: int, max_dim: int = 5,
                 max_elements: int = 300) -> tuple[int, ...]:
    """lo to hi dimensions of 1 to max_dim each, drawn again until at most max_elements elements."""
    while True:
        s = tuple(int(d) for d in rng.integers(1, max_dim + 1, int(rng.integers(lo, hi + 1))))
        if int(np.prod(s, dtype=np.int64)) <= max_elements:
            return s


def weight_quant(rng: np.random.Generator, channels: int, per_channel: bool, dim: int = 0,
                 scale_range=(0.002, 0.05)) -> tuple[list[float], list[int], int]:
    """Symmetric weight quantization (zero points 0), per channel on `dim` or per tensor."""
    n = channels if per_channel else 1
    scales = [float(np.float32(s)) for s in rng.uniform(*scale_range, n)]
    return scales, [0] * n, dim


def random_data(rng: np.random.Generator, dtype: str, shape, low=None, high=None) -> np.ndarray:
    dt = {"INT8": np.int8, "UINT8": np.uint8, "INT16": np.int16, "INT32": np.int32, "INT64": np.int64,
          "FLOAT32": np.float32, "BOOL": np.bool_}[dtype]
    if dtype == "FLOAT32":
        return rng.normal(0, 1, shape).astype(np.float32)
    if dtype == "BOOL":
        return rng.integers(0, 2, shape).astype(np.bool_)
    info = np.iinfo(dt)
    lo = info.min if low is None else low
    hi = info.max if high is None else high
    return rng.integers(lo, hi, shape, endpoint=True).astype(dt)


def bias_data(rng: np.random.Generator, dtype: str, n: int) -> np.ndarray:
    """Bias values in a realistic range (int32 for int8 models, int64 for int16)."""
    if dtype == "FLOAT32":
        return rng.normal(0, 1, n).astype(np.float32)
    big = 1 << 12 if dtype == "INT32" else 1 << 16
    return rng.integers(-big, big, n).astype(np.int32 if dtype == "INT32" else np.int64)


def _int64_data_positions(data: bytes) -> list[int]:
    """Where the data of the model's int64 constants starts."""
    import tflite

    m = tflite.Model.GetRootAsModel(data, 0)
    positions = []
    for s in range(m.SubgraphsLength()):
        sg = m.Subgraphs(s)
        for i in range(sg.TensorsLength()):
            t = sg.Tensors(i)
            buf = m.Buffers(t.Buffer())
            if t.Type() == tflite.TensorType.INT64 and buf.DataLength():
                positions.append(buf._tab.Vector(buf._tab.Offset(4)))
    return positions


def build_int64_at_4_mod_8(b: ModelBuilder) -> bytes:
    """The model with its buffers 4-byte aligned, as older converters wrote
    them (the speech-enhancement network's TRANSPOSE_CONV layers among
    others), and every int64 constant at 4 modulo 8: loading them as int64
    is undefined behaviour and faults on some cores. The FlatBuffer is built
    from its end, so the length of the subgraph's name, written before the
    buffers, moves the data until it sits there."""
    sg = b.subgraphs[-1]
    base = sg.name
    for pad in range(16):
        sg.name = base + "_" * pad
        data = b.build(data_alignment=4)
        positions = _int64_data_positions(data)
        if positions and all(p % 8 == 4 for p in positions):
            sg.name = base
            return data
    raise AssertionError("no padding puts the int64 data at 4 modulo 8")


def single_op(op: str, inputs: list[tuple], outputs: list[tuple], int64_at_4_mod_8: bool = False,
              **options) -> tuple[bytes, SubgraphBuilder]:
    """A model of one op (tflm_dev.builder.single_op), built. int64_at_4_mod_8:
    see build_int64_at_4_mod_8."""
    b, sg = builder_single_op(op, inputs, outputs, **options)
    return (build_int64_at_4_mod_8(b) if int64_at_4_mod_8 else b.build()), sg


# Every module of this package registers its generators when imported.
for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")
