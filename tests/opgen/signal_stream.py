"""TFLM's signal streaming ops, which keep samples between invokes:
SignalFramer, SignalDelay, SignalStacker and SignalOverlapAdd. Each case runs
one interpreter over several input sets, so the state carried from invoke
to invoke is compared with TFLM's. Frames TFLM leaves unwritten (before a
framer's or stacker's buffer fills) are not compared."""

from __future__ import annotations

import numpy as np
from flatbuffers import flexbuffers

from . import Case, ErrorCase, error_case, generator, single_op

RUNS = 5


def _opts(**values) -> bytes:
    return bytes(flexbuffers.Dumps(values))


def _int16(rng, shape) -> np.ndarray:
    """Full-range samples with the limits in."""
    x = rng.integers(-32768, 32768, shape)
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, max(1, flat.size // 8))] = rng.choice([-32768, 32767, 0, -1])
    return x.astype(np.int16)


def _lead(rng) -> tuple[int, ...]:
    """Leading dimensions of the rows: none, one, or two."""
    return tuple(int(d) for d in rng.integers(1, 4, int(rng.integers(0, 3))))


@generator("SIGNAL/framer")
def framer(rng):
    step = int(rng.integers(1, 9))
    prefill = bool(rng.integers(0, 2))
    # frame sizes below, at and above the step, not always whole steps
    size = int(rng.integers(step if prefill else 1, 3 * step + 3))
    frames = int(rng.integers(1, 4))
    lead = _lead(rng)
    model, _ = single_op("CUSTOM:SignalFramer", [(lead + (frames * step,), "INT16")],
                         [(lead + (frames, size), "INT16", None), ((), "BOOL", None)],
                         custom_options=_opts(frame_size=size, frame_step=step, prefill=prefill))
    inputs = [[_int16(rng, lead + (frames * step,))] for _ in range(RUNS)]

    def defined(outputs: list[np.ndarray], run: int) -> list[np.ndarray]:
        # frame g of the stream comes once (g + 1) steps fill a frame
        ok = [prefill or (run * frames + f + 1) * step >= size for f in range(frames)]
        return [np.asarray(outputs[0])[..., ok, :], np.asarray(outputs[1])]

    return Case("", model, dict(size=size, step=step, prefill=prefill, frames=frames, lead=lead),
                inputs=inputs, runs=RUNS, defined=defined)


@generator("SIGNAL/delay")
def delay(rng):
    n = int(rng.integers(1, 12))
    lead = _lead(rng)
    # no delay, shorter than a frame, several frames
    d = int(rng.choice([0, int(rng.integers(1, n + 1)), int(rng.integers(n, 3 * n + 2))]))
    model, _ = single_op("CUSTOM:SignalDelay", [(lead + (n,), "INT16")], [(lead + (n,), "INT16", None)],
                         custom_options=_opts(delay_length=d))
    inputs = [[_int16(rng, lead + (n,))] for _ in range(RUNS)]
    return Case("", model, dict(n=n, delay=d, lead=lead), inputs=inputs, runs=RUNS)


@generator("SIGNAL/stacker")
def stacker(rng):
    channels = int(rng.integers(1, 9))
    left, right = int(rng.integers(0, 4)), int(rng.integers(0, 3))
    step = int(rng.integers(1, left + right + 2))
    total = channels * (left + right + 1)
    extra = int(rng.integers(0, 3))  # the kernel reads the first num_channels values only
    model, _ = single_op("CUSTOM:SignalStacker", [((channels + extra,), "INT16")],
                         [((total,), "INT16", None), ((), "BOOL", None)],
                         custom_options=_opts(num_channels=channels, stacker_left_context=left,
                                              stacker_right_context=right, stacker_step=step))
    inputs = [[_int16(rng, (channels + extra,))] for _ in range(RUNS + 2)]

    def defined(outputs: list[np.ndarray], run: int) -> list[np.ndarray]:
        valid = bool(np.asarray(outputs[1]).reshape(-1)[0])
        return [np.asarray(outputs[0]) if valid else np.zeros(0, np.int16), np.asarray(outputs[1])]

    return Case("", model, dict(channels=channels, left=left, right=right, step=step),
                inputs=inputs, runs=RUNS + 2, defined=defined)


def _overlap_add(rng, dtype: str):
    size = int(rng.integers(1, 10))
    step = int(rng.integers(1, size + 1))
    frames = int(rng.integers(1, 4))
    lead = _lead(rng)
    model, _ = single_op("CUSTOM:SignalOverlapAdd", [(lead + (frames, size), dtype)],
                         [(lead + (frames * step,), dtype, None)],
                         custom_options=_opts(T=7 if dtype == "INT16" else 0, frame_step=step))
    shape = lead + (frames, size)
    if dtype == "INT16":
        inputs = [[_int16(rng, shape)] for _ in range(RUNS)]
    else:
        inputs = []
        for k in range(RUNS):
            x = rng.normal(0, 10, shape).astype(np.float32)
            flat = x.reshape(-1)
            if k >= 2:  # sums that overflow to infinity, infinities of both signs, NaN, signed zeros
                flat[rng.integers(0, flat.size, max(1, flat.size // 4))] = rng.choice(
                    [3e38, -3e38, np.inf, -np.inf, np.nan, -0.0, 1e-45], max(1, flat.size // 4)).astype(np.float32)
            inputs.append([x])
    return Case("", model, dict(size=size, step=step, frames=frames, lead=lead), inputs=inputs, runs=RUNS)


@generator("SIGNAL/overlap_add_int16")
def overlap_add_int16(rng):
    return _overlap_add(rng, "INT16")


@generator("SIGNAL/overlap_add_float32")
def overlap_add_float32(rng):
    return _overlap_add(rng, "FLOAT32")


# -- refused models ------------------------------------------------------------

@error_case("SIGNAL/framer_rows_not_steps")
def _framer_rows():
    model, _ = single_op("CUSTOM:SignalFramer", [((7,), "INT16")], [((2, 4), "INT16", None), ((), "BOOL", None)],
                         custom_options=_opts(frame_size=4, frame_step=3, prefill=False))
    return ErrorCase("", model, [np.zeros(7, np.int16)], "ValueError input rows of 7 samples are not whole steps of 3")


@error_case("SIGNAL/framer_valid_not_bool")
def _framer_valid():
    model, _ = single_op("CUSTOM:SignalFramer", [((6,), "INT16")], [((2, 4), "INT16", None), ((), "INT8", None)],
                         custom_options=_opts(frame_size=4, frame_step=3, prefill=False))
    return ErrorCase("", model, [np.zeros(6, np.int16)], "NotImplementedError output valid of type int8")


@error_case("SIGNAL/framer_prefill_step_above_size")
def _framer_prefill():
    model, _ = single_op("CUSTOM:SignalFramer", [((6,), "INT16")], [((2, 2), "INT16", None), ((), "BOOL", None)],
                         custom_options=_opts(frame_size=2, frame_step=3, prefill=True))
    return ErrorCase("", model, [np.zeros(6, np.int16)], "ValueError prefill with frame_step 3 above frame_size 2",
                     tflm=False, why="TFLM prefills a negative count of zeros (writes far outside its state)")


@error_case("SIGNAL/delay_float32")
def _delay_float():
    model, _ = single_op("CUSTOM:SignalDelay", [((4,), "FLOAT32")], [((4,), "FLOAT32", None)],
                         custom_options=_opts(delay_length=2))
    return ErrorCase("", model, [np.zeros(4, np.float32)], "NotImplementedError input of type float32")


@error_case("SIGNAL/delay_negative")
def _delay_negative():
    model, _ = single_op("CUSTOM:SignalDelay", [((4,), "INT16")], [((4,), "INT16", None)],
                         custom_options=_opts(delay_length=-1))
    return ErrorCase("", model, [np.zeros(4, np.int16)], "ValueError custom option 'delay_length' is -1",
                     tflm=False, why="TFLM writes a negative count of zeros into its state")


@error_case("SIGNAL/stacker_input_2d")
def _stacker_2d():
    model, _ = single_op("CUSTOM:SignalStacker", [((1, 2), "INT16")], [((6,), "INT16", None), ((), "BOOL", None)],
                         custom_options=_opts(num_channels=2, stacker_left_context=1, stacker_right_context=1,
                                              stacker_step=1))
    return ErrorCase("", model, [np.zeros((1, 2), np.int16)], "ValueError input has 2 dimensions, expected 1")


@error_case("SIGNAL/stacker_step_above_frames")
def _stacker_step():
    model, _ = single_op("CUSTOM:SignalStacker", [((2,), "INT16")], [((4,), "INT16", None), ((), "BOOL", None)],
                         custom_options=_opts(num_channels=2, stacker_left_context=1, stacker_right_context=0,
                                              stacker_step=3))
    return ErrorCase("", model, [np.zeros(2, np.int16)], "ValueError stacker_step 3 above the 2 frames stacked",
                     tflm=False, why="TFLM drops more values than its buffer holds")


@error_case("SIGNAL/overlap_add_type_mismatch")
def _overlap_add_mismatch():
    model, _ = single_op("CUSTOM:SignalOverlapAdd", [((2, 4), "FLOAT32")], [((4,), "FLOAT32", None)],
                         custom_options=_opts(T=7, frame_step=2))
    return ErrorCase("", model, [np.zeros((2, 4), np.float32)], "NotImplementedError input of type float32")


@error_case("SIGNAL/overlap_add_int32")
def _overlap_add_int32():
    model, _ = single_op("CUSTOM:SignalOverlapAdd", [((2, 4), "INT32")], [((4,), "INT32", None)],
                         custom_options=_opts(T=2, frame_step=2))
    return ErrorCase("", model, [np.zeros((2, 4), np.int32)], "NotImplementedError SignalOverlapAdd of type int32",
                     tflm=False, why="TFLM's init returns no data for other types and its prepare reads through it")


@error_case("SIGNAL/overlap_add_step_above_size")
def _overlap_add_step():
    model, _ = single_op("CUSTOM:SignalOverlapAdd", [((2, 3), "INT16")], [((8,), "INT16", None)],
                         custom_options=_opts(T=7, frame_step=4))
    return ErrorCase("", model, [np.zeros((2, 3), np.int16)], "ValueError frame_step 4 above frame_size 3",
                     tflm=False, why="TFLM moves a negative count of values")
