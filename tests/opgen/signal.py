"""TFLM's signal (audio front end) custom ops, one op per model, options as
FlexBuffer maps as TFLM's signal Python package writes them."""

from __future__ import annotations

import numpy as np
from flatbuffers import flexbuffers

from . import Case, generator, single_op


def _opts(**values) -> bytes:
    return bytes(flexbuffers.Dumps(values))


@generator("SIGNAL/rfft")
def rfft(rng):
    # every power of two from 4 to 512: radix-4 stages with and without a final radix 2
    length = int(2 ** rng.integers(2, 10))
    rows = int(rng.integers(1, 3))
    samples = int(rng.integers(max(1, length // 2), length + 1))
    model, _ = single_op("CUSTOM:SignalRfft", [((rows, samples), "INT16")],
                         [((rows, length + 2), "INT16", None)],
                         custom_options=_opts(T=7, fft_length=length))
    scale = int(rng.choice([300, 4000, 32767]))
    inputs = [[rng.integers(-scale, scale + 1, (rows, samples)).astype(np.int16)] for _ in range(3)]
    return Case("", model, dict(fft_length=length, rows=rows, samples=samples, scale=scale), inputs=inputs)


@generator("SIGNAL/window")
def window(rng):
    n = int(rng.integers(1, 64))
    rows = int(rng.integers(1, 4))
    weights = rng.integers(-32768, 32768, n).astype(np.int16)
    shift = int(rng.integers(0, 16))
    model, _ = single_op("CUSTOM:SignalWindow", [((rows, n), "INT16"), ((n,), "INT16", weights)],
                         [((rows, n), "INT16", None)], custom_options=_opts(shift=shift))
    return Case("", model, dict(n=n, rows=rows, shift=shift))


@generator("SIGNAL/fft_auto_scale")
def fft_auto_scale(rng):
    n = int(rng.integers(1, 100))
    model, _ = single_op("CUSTOM:SignalFftAutoScale", [((n,), "INT16")],
                         [((n,), "INT16", None), ((), "INT32", None)], custom_options=_opts())
    peak = [0, 1, 200, 16384, 32767, 32768]
    inputs = []
    for p in rng.choice(peak, 3):
        x = rng.integers(-int(p), int(p) + 1, n) if p else np.zeros(n)
        inputs.append([x.clip(-32768, 32767).astype(np.int16)])
    return Case("", model, dict(n=n), inputs=inputs)


@generator("SIGNAL/filter_bank_log")
def filter_bank_log(rng):
    n = int(rng.integers(1, 50))
    bits = int(rng.integers(0, 8))
    scale = int(rng.choice([1, 64, 1000, 30000]))
    model, _ = single_op("CUSTOM:SignalFilterBankLog", [((n,), "UINT32")], [((n,), "INT16", None)],
                         custom_options=_opts(input_correction_bits=bits, output_scale=scale))
    inputs = [[(rng.integers(0, 2 ** 32, n, dtype=np.uint64) >> int(rng.integers(0, 32))).astype(np.uint32)]
              for _ in range(3)]
    return Case("", model, dict(n=n, bits=bits, scale=scale), inputs=inputs)


@generator("SIGNAL/square_root")
def square_root(rng):
    n = int(rng.integers(1, 50))
    shift = int(rng.integers(0, 16))  # a constant: a 0-d input cannot be fed to TFLM's interpreter
    model, _ = single_op("CUSTOM:SignalFilterBankSquareRoot",
                         [((n,), "UINT64"), ((), "INT32", np.array(shift, np.int32))],
                         [((n,), "UINT32", None)], custom_options=_opts())
    inputs = [[(rng.integers(0, 2 ** 63, n, dtype=np.uint64) >> np.uint64(rng.integers(0, 63))).astype(np.uint64)]
              for _ in range(3)]
    return Case("", model, dict(n=n, shift=shift), inputs=inputs)


@generator("SIGNAL/energy")
def energy(rng):
    bins = int(rng.integers(1, 80))
    model, _ = single_op("CUSTOM:SignalEnergy", [((2 * bins,), "INT16")], [((bins,), "UINT32", None)],
                         custom_options=_opts(end_index=bins, start_index=0))
    inputs = [[rng.integers(-32768, 32768, 2 * bins).astype(np.int16)] for _ in range(3)]
    return Case("", model, dict(bins=bins), inputs=inputs)


@generator("SIGNAL/filter_bank")
def filter_bank(rng):
    """Random channel tables that stay inside the input and the weights; a
    third of the cases with an output shorter than num_channels (the first
    channels, as TFLM computes them)."""
    channels = int(rng.integers(1, 24))
    outputs = channels if rng.integers(0, 3) else int(rng.integers(1, channels + 1))
    n_in = int(rng.integers(12, 200))  # at least the widest channel (11 bins)
    widths = rng.integers(0, 12, channels + 1)
    freq = np.array([rng.integers(0, n_in - w + 1) for w in widths])
    weight_starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
    n_w = max(1, int(widths.sum()))
    weights = rng.integers(-4096, 4097, n_w).astype(np.int16)
    unweights = rng.integers(-4096, 4097, n_w).astype(np.int16)
    i16 = np.int16
    model, _ = single_op("CUSTOM:SignalFilterBank",
                         [((n_in,), "UINT32"), ((n_w,), "INT16", weights), ((n_w,), "INT16", unweights),
                          ((channels + 1,), "INT16", freq.astype(i16)),
                          ((channels + 1,), "INT16", weight_starts.astype(i16)),
                          ((channels + 1,), "INT16", widths.astype(i16))],
                         [((outputs,), "UINT64", None)], custom_options=_opts(num_channels=channels))
    inputs = [[rng.integers(0, 2 ** 32, n_in, dtype=np.uint64).astype(np.uint32)] for _ in range(3)]
    inputs.append([np.zeros(n_in, np.uint32)])
    return Case("", model, dict(channels=channels, outputs=outputs, n_in=n_in), inputs=inputs)


@generator("SIGNAL/spectral_subtraction")
def spectral_subtraction(rng):
    """Stateful: one interpreter over 6 input sets, the noise estimate carried."""
    n = int(rng.integers(1, 50))
    bits = 14
    smoothing = int(rng.integers(0, 1 << bits))
    alternate = int(rng.integers(0, 1 << bits))
    opts = dict(alternate_one_minus_smoothing=(1 << bits) - alternate, alternate_smoothing=alternate,
                clamping=bool(rng.integers(0, 2)), min_signal_remaining=int(rng.integers(0, 1 << bits)),
                num_channels=n, one_minus_smoothing=(1 << bits) - smoothing, smoothing=smoothing,
                smoothing_bits=int(rng.integers(0, 12)), spectral_subtraction_bits=bits)
    model, _ = single_op("CUSTOM:SignalFilterBankSpectralSubtraction", [((n,), "UINT32")],
                         [((n,), "UINT32", None), ((n,), "UINT32", None)], custom_options=_opts(**opts))
    inputs = [[rng.integers(0, 1 << int(rng.integers(4, 20)), n).astype(np.uint32)] for _ in range(6)]
    return Case("", model, opts, inputs=inputs, runs=6)


@generator("SIGNAL/pcan")
def pcan(rng):
    n = int(rng.integers(1, 50))
    lut = rng.integers(-32768, 32768, 125).astype(np.int16)
    shift = int(rng.integers(0, 20))
    model, _ = single_op("CUSTOM:SignalPCAN", [((n,), "UINT32"), ((n,), "UINT32"), ((125,), "INT16", lut)],
                         [((n,), "UINT32", None)], custom_options=_opts(snr_shift=shift))
    inputs = []
    for _ in range(3):
        x = rng.integers(0, 2 ** 32, n, dtype=np.uint64) >> np.uint64(rng.integers(0, 32))
        noise = rng.integers(0, 2 ** 32, n, dtype=np.uint64) >> np.uint64(rng.integers(0, 32))
        inputs.append([x.astype(np.uint32), noise.astype(np.uint32)])
    return Case("", model, dict(n=n, shift=shift), inputs=inputs)
