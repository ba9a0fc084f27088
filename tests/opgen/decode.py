"""TFLM_DECODE, TFLM's run-time decompression of constant tensors, in its
three decode types, each tensor encoded here from the format TFLM documents
(tflite_micro's compression package and its kernels' sources): LUT (indices
of 1 to 7 bits into value tables, per tensor or per channel along the first
or the last axis), pruning (a bit mask and the kept values, zero points per
channel) and Huffman (codewords in 32-bit words, 16- or 32-bit lookup
tables, linked subtables). Each model decodes constants only (a DECODE with
one to three outputs); the tensors the encoders started from are in
Case.params["expected"], which tests/test_decode.py compares with TFLM's
output, so the encoders are checked against TFLM and not only against this
engine. One more generator runs the tflite_micro package's own compressor on
a FULLY_CONNECTED model (DECODE inserted before it, weights and bias)."""

from __future__ import annotations

import contextlib
import heapq
import importlib
import io
import warnings

import numpy as np

from tflm_dev.builder import ModelBuilder

from . import Case, ErrorCase, error_case, generator

NUMPY = {"BOOL": np.bool_, "INT8": np.int8, "INT16": np.int16, "INT32": np.int32, "INT64": np.int64,
         "FLOAT32": np.float32}
RUNS = 2


def dcm(kind: int, b5: int = 0, b6: int = 0) -> bytes:
    """The 16-byte header: type, version 1, type version 1, two parameters."""
    return bytes([kind, 1, 0, 0, 1, b5, b6]) + bytes(9)


def pack_bits(values, width: int) -> bytes:
    """Values of `width` bits, most significant bit first, zero-padded."""
    bits = "".join(format(int(v), f"0{width}b") for v in values)
    bits += "0" * (-len(bits) % 8)
    return bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))


def decode_model(items: list[tuple[bytes, bytes, tuple, str, tuple | None]]) -> bytes:
    """One TFLM_DECODE of (encoded, ancillary, shape, type, quant) items, its
    outputs the model's outputs."""
    b = ModelBuilder()
    sg = b.subgraph()
    ins, outs = [], []
    for enc, anc, shape, dtype, quant in items:
        ins.append(sg.tensor((len(enc),), "UINT8", data=np.frombuffer(enc, np.uint8)))
        ins.append(sg.tensor((len(anc),), "UINT8", data=np.frombuffer(anc, np.uint8)))
        outs.append(sg.tensor(shape, dtype, quant=quant))
    sg.op("CUSTOM:TFLM_DECODE", ins, outs)
    sg.inputs, sg.outputs = [], outs
    return b.build()


def _values(rng, dtype: str, n: int) -> np.ndarray:
    if dtype == "BOOL":
        return rng.integers(0, 2, n).astype(np.bool_)
    if dtype == "FLOAT32":
        v = rng.normal(0, 10, n).astype(np.float32)
        v[: min(n, 3)] = np.array([np.inf, -0.0, np.nan], np.float32)[: min(n, 3)]  # bit patterns copied as they are
        return v
    info = np.iinfo(NUMPY[dtype])
    return rng.integers(info.min, int(info.max) + 1, n, dtype=np.int64).astype(NUMPY[dtype])


def _channels(rng, shape: tuple) -> tuple[int, int | None, tuple | None]:
    """Channels as TFLM reads them from the output's quantization: none, the
    first axis or the last (when it is the quantized dimension)."""
    mode = rng.choice(["tensor", "first", "last"])
    if mode == "tensor" or len(shape) == 0:
        return 1, None, None
    axis = 0 if mode == "first" else len(shape) - 1
    c = shape[axis]
    if c == 1 and axis != 0:
        return 1, None, None  # TFLM refuses a single channel on another axis than the first
    return c, axis, ([0.05] * c, [0] * c, axis)


def _channel_of(shape: tuple, axis: int | None, c: int) -> np.ndarray:
    """Channel of each element in order."""
    n = int(np.prod(shape))
    if axis is None or c == 1:
        return np.zeros(n, np.int64)
    if axis == len(shape) - 1 and c > 1:
        return np.arange(n) % c
    return np.arange(n) // (n // c)


def lut_item(rng, dtype: str, shape: tuple):
    n = int(np.prod(shape))
    width = int(rng.integers(1, 8))
    c, axis, quant = _channels(rng, shape)
    if dtype not in ("INT8", "INT16", "INT32", "INT64") and quant is not None:
        quant = None  # quantized bool / float outputs: not what a converter writes
        c, axis = 1, None
    ch = _channel_of(shape, axis, c)
    tables = [_values(rng, dtype, 1 << width) for _ in range(c)]
    # a stride of the table's size, or larger (unused entries between channels)
    stride = min(255, (1 << width) + int(rng.choice([0, 0, 3])))
    idx = rng.integers(0, 1 << width, n)
    table_bytes = b"".join(np.concatenate([t, np.zeros(stride - len(t), t.dtype)]).tobytes() for t in tables)
    expected = np.array([tables[ch[i]][idx[i]] for i in range(n)], NUMPY[dtype]).reshape(shape)
    return (pack_bits(idx, width), dcm(0, width, stride) + table_bytes, shape, dtype, quant), expected


def prune_item(rng, dtype: str, shape: tuple):
    n = int(np.prod(shape))
    c, axis, quant = _channels(rng, shape)
    zps = [0] * c
    if dtype == "INT8":
        if quant is None and rng.integers(0, 2):
            quant = ([0.05], [0], 0)
        if quant is not None and rng.integers(0, 4):
            zps = [int(z) for z in rng.integers(-128, 128, len(quant[0]))]
            quant = (quant[0], zps, quant[2])
    elif dtype in ("BOOL", "FLOAT32"):
        c, axis, quant, zps = 1, None, None, [0]
    ch = _channel_of(shape, axis, c)
    keep = rng.random(n) < float(rng.choice([0.1, 0.5, 0.9]))
    vals = _values(rng, dtype, n)
    zero = np.array([zps[ch[i]] for i in range(n)]).astype(NUMPY[dtype])
    expected = np.where(keep, vals, zero).astype(NUMPY[dtype])
    return (pack_bits(keep.astype(int), 1), dcm(2) + vals[keep].tobytes(), shape, dtype, quant), expected.reshape(shape)


def huffman_codes(rng, symbols: int) -> dict[int, str]:
    """A Huffman code for random weights of `symbols` symbols."""
    weights = rng.integers(1, 1000, symbols) ** 2
    heap = [(int(w), i, (i,)) for i, w in enumerate(weights)]
    heapq.heapify(heap)
    codes = {i: "" for i in range(symbols)}
    if symbols == 1:
        return {0: "0"}
    tie = symbols
    while len(heap) > 1:
        w1, _, a = heapq.heappop(heap)
        w2, _, b = heapq.heappop(heap)
        for s in a:
            codes[s] = "0" + codes[s]
        for s in b:
            codes[s] = "1" + codes[s]
        heapq.heappush(heap, (w1 + w2, tie, a + b))
        tie += 1
    return codes


def huffman_tables(codes: dict[int, str], values: np.ndarray, first: int, step: int, wide: bool) -> list[int]:
    """Lookup tables: `first` bits index the root; a longer code's entry links
    to a subtable indexed by up to `step` more bits, placed after the tables
    so far (a link's value: from the link's entry to its subtable)."""
    found, shift = (1 << 31, 27) if wide else (1 << 15, 11)
    mask = (1 << 8 * values.itemsize) - 1 if values.itemsize < 4 else 0xFFFF
    table: list[int] = []

    def build(prefix: str, bits: int) -> int:
        base = len(table)
        table.extend([0] * (1 << bits))
        for i in range(1 << bits):
            path = prefix + format(i, f"0{bits}b")
            done = [s for s, c in codes.items() if path.startswith(c)]
            longer = [c for c in codes.values() if c.startswith(path) and len(c) > len(path)]
            if done:
                s = done[0]
                used = len(codes[s]) - len(prefix)
                table[base + i] = found | (used << shift) | (int(values[s]) & mask)
            elif longer:
                more = min(step, max(len(c) for c in longer) - len(path))
                sub = build(path, more)
                table[base + i] = ((more - 1) << shift) | (sub - (base + i))
            else:
                table[base + i] = found  # no code reaches it
        return base

    build("", first)
    return table


def huffman_item(rng, dtype: str, shape: tuple, wide: bool):
    n = int(np.prod(shape))
    symbols = int(rng.integers(1, 24))
    values = _values(rng, dtype, symbols)
    codes = huffman_codes(rng, symbols)
    longest = max(len(c) for c in codes.values())
    first = int(rng.integers(1, min(longest, 6) + 1))
    table = huffman_tables(codes, values, first, int(rng.integers(1, 5)), wide)
    stream = rng.integers(0, symbols, n)
    bits = "".join(codes[int(s)] for s in stream)
    # padded past the last codeword (TFLM's root lookup reads `first` bits) to whole words
    bits += "".join(rng.choice(["0", "1"], -(len(bits) + 16) % 32 + 16 + 32 * int(rng.integers(0, 2))))
    enc = bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))
    entries = np.array(table, np.uint32 if wide else np.uint16).tobytes()
    anc = dcm(1, ((first - 1) << 4) | int(wide)) + entries
    return (enc, anc, shape, dtype, None), values[stream].reshape(shape)


def _shape(rng) -> tuple:
    return tuple(int(d) for d in rng.integers(1, 7, int(rng.integers(1, 4))))


def _case(items_expected, kind: str) -> Case:
    items = [i for i, _ in items_expected]
    model = decode_model(items)
    params = dict(kind=kind, types=[i[3] for i in items], shapes=[i[2] for i in items],
                  expected=[e for _, e in items_expected])
    return Case("", model, params, inputs=[[] for _ in range(RUNS)], runs=RUNS)


@generator("TFLM_DECODE/lut")
def lut(rng):
    types = ["BOOL", "INT8", "INT16", "INT32", "INT64", "FLOAT32"]
    return _case([lut_item(rng, str(rng.choice(types)), _shape(rng)) for _ in range(int(rng.integers(1, 4)))], "lut")


@generator("TFLM_DECODE/prune")
def prune(rng):
    types = ["BOOL", "INT8", "INT8", "INT16", "INT32", "INT64", "FLOAT32"]
    return _case([prune_item(rng, str(rng.choice(types)), _shape(rng)) for _ in range(int(rng.integers(1, 4)))],
                 "prune")


@generator("TFLM_DECODE/huffman")
def huffman(rng):
    items = []
    for _ in range(int(rng.integers(1, 3))):
        wide = bool(rng.integers(0, 2))
        dtype = str(rng.choice(["INT8", "INT16"])) if wide else "INT8"
        items.append(huffman_item(rng, dtype, _shape(rng), wide))
    return _case(items, "huffman")


# -- the tflite_micro package's compressor on a FULLY_CONNECTED model ----------

def _compress(model: bytes, tensors: list[int], width: int, per_channel: bool) -> bytes:
    compress = importlib.import_module("tflite_micro.tensorflow.lite.micro.compression.compress")
    spec = importlib.import_module("tflite_micro.tensorflow.lite.micro.compression.spec")
    mode = spec.PerChannel(axis=0) if per_channel else spec.PerTensor()
    specs = [spec.Tensor(subgraph=0, tensor=t, compression=[spec.LookUpTableCompression(index_bitwidth=width,
                                                                                         mode=mode)])
             for t in tensors]
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        return bytes(compress.compress(model, specs))


@generator("TFLM_DECODE/compressed_fully_connected")
def compressed_fc(rng):
    """FULLY_CONNECTED int8 (per-channel weights) or float32 whose weights
    (and bias) hold few distinct values, compressed by tflite_micro's
    compressor: LUT tables per channel for int8, per tensor for float."""
    units, depth = int(rng.integers(1, 9)), int(rng.integers(1, 40))
    width = int(rng.integers(1, 5))
    int8 = bool(rng.integers(0, 2))
    b = ModelBuilder()
    sg = b.subgraph()
    if int8:
        levels = rng.integers(-127, 128, (units, 1 << width))
        w = np.take_along_axis(levels, rng.integers(0, 1 << width, (units, depth)), 1).astype(np.int8)
        scales = [float(np.float32(s)) for s in rng.uniform(0.002, 0.02, units)]
        x = sg.tensor((1, depth), "INT8", quant=([0.05], [3]))
        wt = sg.tensor((units, depth), "INT8", data=w, quant=(scales, [0] * units, 0))
        bias = sg.tensor((units,), "INT32", data=rng.integers(-2000, 2000, units).astype(np.int32),
                         quant=([0.05 * s for s in scales], [0] * units, 0))
        y = sg.tensor((1, units), "INT8", quant=([0.1], [-5]))
    else:
        w = rng.choice(rng.normal(0, 1, 1 << width).astype(np.float32), (units, depth))
        x = sg.tensor((1, depth), "FLOAT32")
        wt = sg.tensor((units, depth), "FLOAT32", data=w)
        bias = sg.tensor((units,), "FLOAT32", data=rng.normal(0, 1, units).astype(np.float32))
        y = sg.tensor((1, units), "FLOAT32")
    sg.op("FULLY_CONNECTED", [x, wt, bias], [y])
    sg.inputs, sg.outputs = [x], [y]
    # int8: weights and bias per channel (a bias value per channel); float: the weights
    compressed = _compress(b.build(), [wt, bias] if int8 else [wt], width, int8)
    return Case("", compressed, dict(units=units, depth=depth, width=width, int8=int8))


# -- refused models ------------------------------------------------------------

@error_case("TFLM_DECODE/lut_indices_past_the_data")
def _lut_short():
    model = decode_model([(bytes([0x1B, 0xE4]), dcm(0, 2, 4) + bytes([1, 2, 3, 4]), (1, 64), "INT8", None)])
    return ErrorCase("", model, [], "ValueError decode of output 0: encoded data shorter than the indices",
                     tflm=False, why="TFLM decodes 64 indices from 2 bytes, reading past them")


@error_case("TFLM_DECODE/lut_table_past_the_data")
def _lut_stride():
    model = decode_model([(bytes([0x7F, 0x5A, 0x7F, 0x5A, 0x7F, 0x5A, 0x7F]), dcm(0, 7, 255) + bytes(range(8)),
                           (1, 8), "INT8", ([1.0] * 8, [0] * 8, 0))])
    return ErrorCase("", model, [], "ValueError decode of output 0: its encoded data reads outside",
                     tflm=False, why="TFLM reads value tables 255 entries apart, past the ancillary data")


@error_case("TFLM_DECODE/version_2")
def _version():
    anc = bytearray(dcm(0, 2, 4) + bytes(4))
    anc[1] = 2
    model = decode_model([(bytes([0x1B]), bytes(anc), (4,), "INT8", None)])
    return ErrorCase("", model, [], "ValueError decode of output 0: version is not 1")


@error_case("TFLM_DECODE/custom_type")
def _custom():
    model = decode_model([(bytes([0x1B]), dcm(200) + bytes(4), (4,), "INT8", None)])
    return ErrorCase("", model, [], "NotImplementedError decode of output 0: decode type 200")


@error_case("TFLM_DECODE/huffman_16_bit_int16")
def _huffman_16():
    model = decode_model([(bytes(4), dcm(1, 0x00) + bytes(8), (4,), "INT16", None)])
    return ErrorCase("", model, [], "NotImplementedError decode output of type int16")


@error_case("TFLM_DECODE/huffman_past_the_codewords")
def _huffman_short():
    # every root entry a symbol using 1 bit: 40 symbols need 40 bits, one word holds 32
    table = np.array([0x8000 | (1 << 11) | 7] * 2, np.uint16).tobytes()
    model = decode_model([(bytes(4), dcm(1, 0x00) + table, (40,), "INT8", None)])
    return ErrorCase("", model, [], "ValueError decode of output 0: its encoded data reads outside",
                     tflm=False, why="TFLM reads the codewords' next word past the data")


@error_case("TFLM_DECODE/not_constant")
def _not_constant():
    b = ModelBuilder()
    sg = b.subgraph()
    e = sg.tensor((1,), "UINT8")
    a = sg.tensor((20,), "UINT8", data=np.frombuffer(dcm(0, 2, 4) + bytes(4), np.uint8))
    y = sg.tensor((4,), "INT8")
    sg.op("CUSTOM:TFLM_DECODE", [e, a], [y])
    sg.inputs, sg.outputs = [e], [y]
    return ErrorCase("", b.build(), [np.array([0x1B], np.uint8)],
                     "ValueError decode of output 0: encoded and ancillary data must be constants")


@error_case("TFLM_DECODE/lut_middle_axis")
def _middle_axis():
    model = decode_model([(bytes(3), dcm(0, 2, 4) + bytes(12), (2, 3, 2), "INT8", ([0.1] * 3, [0] * 3, 1))])
    return ErrorCase("", model, [], "NotImplementedError decode of output 0: quantized dimension 1")
