"""TFLM's signal library FFTs in every type TFLM has them: SignalRfft int32
and float32 (int16 is SIGNAL/rfft in signal.py) and SignalIrfft int16, int32
and float32, over every power-of-two length from 4 to 512, with sparse and
real-only spectra (where the twiddles' last bits show: cos(pi/2) is not 0 in
KISS FFT's double arithmetic) and values at the types' limits."""

from __future__ import annotations

import numpy as np
from flatbuffers import flexbuffers

from . import Case, ErrorCase, error_case, generator, generators, single_op

TYPE_CODE = {"INT16": 7, "INT32": 2, "FLOAT32": 0}
NUMPY = {"INT16": np.int16, "INT32": np.int32, "FLOAT32": np.float32}


def _opts(**values) -> bytes:
    return bytes(flexbuffers.Dumps(values))


def _values(rng, dtype: str, shape, kind: str) -> np.ndarray:
    """Random values: full range, small, sparse (mostly zeros) or real-only
    (every odd value, an imaginary part of a spectrum, zero)."""
    if dtype == "FLOAT32":
        scale = float(rng.choice([1.0, 1e3, 1e-3, 1e30]))
        x = (rng.normal(0, 1, shape) * scale).astype(np.float32)
    else:
        top = int(np.iinfo(NUMPY[dtype]).max)
        scale = top if kind == "full" else int(rng.choice([300, top // 64, top]))
        x = rng.integers(-scale - (scale == top), scale + 1, shape).astype(NUMPY[dtype])
    flat = x.reshape(-1)
    if kind == "sparse":
        flat[rng.random(flat.size) < 0.85] = 0
    elif kind == "real":
        flat[1::2] = 0
    return x


def _rfft(rng, dtype: str):
    length = int(2 ** rng.integers(2, 10))
    rows = int(rng.integers(1, 3))
    samples = int(rng.integers(max(1, length // 2), length + 1))
    model, _ = single_op("CUSTOM:SignalRfft", [((rows, samples), dtype)], [((rows, length + 2), dtype, None)],
                         custom_options=_opts(T=TYPE_CODE[dtype], fft_length=length))
    kinds = ["full", "small", "sparse"]
    inputs = [[_values(rng, dtype, (rows, samples), k)] for k in kinds]
    return Case("", model, dict(fft_length=length, rows=rows, samples=samples), inputs=inputs)


@generator("SIGNAL/rfft_int32")
def rfft_int32(rng):
    return _rfft(rng, "INT32")


@generator("SIGNAL/rfft_float32")
def rfft_float32(rng):
    return _rfft(rng, "FLOAT32")


def _irfft(rng, dtype: str):
    length = int(2 ** rng.integers(2, 10))
    bins = length // 2 + 1 + int(rng.choice([0, 0, 1, 3]))  # more bins than the FFT reads
    lead = tuple(int(d) for d in rng.integers(1, 3, int(rng.integers(0, 2))))
    model, _ = single_op("CUSTOM:SignalIrfft", [(lead + (2 * bins,), dtype)], [(lead + (length,), dtype, None)],
                         custom_options=_opts(T=TYPE_CODE[dtype], fft_length=length))
    inputs = [[_values(rng, dtype, lead + (2 * bins,), k)] for k in ["full", "small", "sparse", "real"]]
    return Case("", model, dict(fft_length=length, bins=bins, lead=lead), inputs=inputs)


generators(_irfft, {"SIGNAL/irfft_int16": ("INT16",),
                    "SIGNAL/irfft_int32": ("INT32",),
                    "SIGNAL/irfft_float32": ("FLOAT32",)})


# -- refused models ------------------------------------------------------------

@error_case("SIGNAL/irfft_type_mismatch")
def _irfft_mismatch():
    model, _ = single_op("CUSTOM:SignalIrfft", [((10,), "INT16")], [((8,), "INT16", None)],
                         custom_options=_opts(T=2, fft_length=8))
    return ErrorCase("", model, [np.zeros(10, np.int16)], "NotImplementedError SignalIrfft of type int16")


@error_case("SIGNAL/irfft_too_few_bins")
def _irfft_bins():
    model, _ = single_op("CUSTOM:SignalIrfft", [((8,), "INT16")], [((8,), "INT16", None)],
                         custom_options=_opts(T=7, fft_length=8))
    return ErrorCase("", model, [np.zeros(8, np.int16)], "ValueError input rows must hold at least 5 complex bins",
                     tflm=False, why="TFLM reads the fifth bin past the input")


@error_case("SIGNAL/irfft_length_not_power_of_two")
def _irfft_length():
    model, _ = single_op("CUSTOM:SignalIrfft", [((14,), "FLOAT32")], [((12,), "FLOAT32", None)],
                         custom_options=_opts(T=0, fft_length=12))
    return ErrorCase("", model, [np.zeros(14, np.float32)], "NotImplementedError fft_length 12",
                     tflm=False, why="TFLM takes it (KISS FFT's radix-3 stages); this module has powers of two only")


@error_case("SIGNAL/rfft_int8")
def _rfft_int8():
    model, _ = single_op("CUSTOM:SignalRfft", [((8,), "INT8")], [((10,), "INT8", None)],
                         custom_options=_opts(T=9, fft_length=8))
    return ErrorCase("", model, [np.zeros(8, np.int8)], "NotImplementedError SignalRfft of type int8",
                     tflm=False, why="TFLM's init returns no data for int8 and its prepare reads through it")


# -- resynthesis pipelines: the signal ops chained ------------------------------

def _signal(rng, n: int, runs: int) -> np.ndarray:
    """A tone under noise, `runs` blocks of n samples, in int16's range."""
    t = np.arange(n * runs)
    x = 9000 * np.sin(2 * np.pi * t * float(rng.uniform(0.01, 0.2))) + rng.normal(0, 2500, n * runs)
    return np.clip(np.round(x), -32768, 32767).astype(np.int16).reshape(runs, n)


@generator("SIGNAL/pipeline_int16")
def pipeline_int16(rng):
    """A streaming noise suppressor as TFLM's signal library builds one:
    SignalFramer (prefilled) -> SignalWindow -> SignalRfft -> int16 MUL by a
    per-bin gain mask (the suppression, a constant: gains 0 to 1, scaled so
    the FFTs' 1/N each way is made up) -> SignalIrfft -> SignalWindow
    (synthesis) -> SignalOverlapAdd, and beside it the input through
    SignalDelay by the frame's latency. One interpreter over 8 blocks."""
    from tflm_dev.builder import ModelBuilder

    n = int(rng.choice([16, 32, 64, 128]))
    hop = n // int(rng.choice([2, 4]))
    bins = n // 2 + 1
    shift = 14
    window = np.round(16384 * np.sin(np.pi * (np.arange(n) + 0.5) / n) ** 2).astype(np.int16)
    gain = rng.integers(0, 513, bins)
    gain[rng.random(bins) < 0.3] = 0  # bins suppressed
    gains = np.repeat(gain, 2).astype(np.int16)  # real and imaginary parts alike
    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1, hop), "INT16")
    frames = sg.tensor((1, 1, n), "INT16")
    valid = sg.tensor((), "BOOL")
    sg.op("CUSTOM:SignalFramer", [x], [frames, valid], custom_options=_opts(frame_size=n, frame_step=hop, prefill=True))
    w = sg.tensor((n,), "INT16", data=window)
    windowed = sg.tensor((1, 1, n), "INT16")
    sg.op("CUSTOM:SignalWindow", [frames, w], [windowed], custom_options=_opts(shift=shift))
    spectrum = sg.tensor((1, 1, n + 2), "INT16", quant=([1.0], [0]))
    sg.op("CUSTOM:SignalRfft", [windowed], [spectrum], custom_options=_opts(T=7, fft_length=n))
    g = sg.tensor((n + 2,), "INT16", data=gains, quant=([2.0 ** -9], [0]))
    masked = sg.tensor((1, 1, n + 2), "INT16", quant=([1.0 / n], [0]))
    sg.op("MUL", [spectrum, g], [masked])
    frame_out = sg.tensor((1, 1, n), "INT16")
    sg.op("CUSTOM:SignalIrfft", [masked], [frame_out], custom_options=_opts(T=7, fft_length=n))
    synth = sg.tensor((1, 1, n), "INT16")
    sg.op("CUSTOM:SignalWindow", [frame_out, w], [synth], custom_options=_opts(shift=shift))
    y = sg.tensor((1, hop), "INT16")
    sg.op("CUSTOM:SignalOverlapAdd", [synth], [y], custom_options=_opts(T=7, frame_step=hop))
    dry = sg.tensor((1, hop), "INT16")
    sg.op("CUSTOM:SignalDelay", [x], [dry], custom_options=_opts(delay_length=n - hop))
    sg.inputs, sg.outputs = [x], [y, dry, valid]
    runs = 8
    inputs = [[blk.reshape(1, hop)] for blk in _signal(rng, hop, runs)]
    return Case("", b.build(), dict(n=n, hop=hop, suppressed=int((gain == 0).sum())), inputs=inputs, runs=runs)


@generator("SIGNAL/pipeline_float32")
def pipeline_float32(rng):
    """The float32 resynthesis: frames -> SignalRfft -> MUL by a gain mask ->
    SignalIrfft -> SignalOverlapAdd, several frames per invoke, the overlap
    carried across 6 invokes."""
    from tflm_dev.builder import ModelBuilder

    n = int(rng.choice([8, 16, 64, 128]))
    hop = n // int(rng.choice([2, 4]))
    count = int(rng.integers(1, 4))
    gains = np.repeat(rng.uniform(0, 1, n // 2 + 1), 2).astype(np.float32)
    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1, count, n), "FLOAT32")
    spectrum = sg.tensor((1, count, n + 2), "FLOAT32")
    sg.op("CUSTOM:SignalRfft", [x], [spectrum], custom_options=_opts(T=0, fft_length=n))
    g = sg.tensor((n + 2,), "FLOAT32", data=gains)
    masked = sg.tensor((1, count, n + 2), "FLOAT32")
    sg.op("MUL", [spectrum, g], [masked])
    frames = sg.tensor((1, count, n), "FLOAT32")
    sg.op("CUSTOM:SignalIrfft", [masked], [frames], custom_options=_opts(T=0, fft_length=n))
    y = sg.tensor((1, count * hop), "FLOAT32")
    sg.op("CUSTOM:SignalOverlapAdd", [frames], [y], custom_options=_opts(T=0, frame_step=hop))
    sg.inputs, sg.outputs = [x], [y]
    runs = 6
    inputs = [[(rng.normal(0, 1, (1, count, n)) * 100).astype(np.float32)] for _ in range(runs)]
    return Case("", b.build(), dict(n=n, hop=hop, count=count), inputs=inputs, runs=runs)
