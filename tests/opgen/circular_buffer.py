"""CIRCULAR_BUFFER, TFLM's custom op of its strided streaming models: int8
[1, 1, h, w] in, the last `slots` inputs out, running every cycles_max
invokes. With one output an invoke where it does not run ends there (the op
after it, a RESHAPE to a second model output, is then not compared: TFLM
leaves its output as it was); with a bool second output that output says
whether it ran. Slots not yet filled hold what TFLM's arena held: not
compared either. cycles_max absent or 0 makes TFLM guess the period from the
output shape (slots 5, 13, 25: every invoke; others: every second); its
guess from a count of such ops across the process is in
tests/test_circular_buffer.py, where a fresh process holds the count."""

from __future__ import annotations

import numpy as np
from flatbuffers import flexbuffers

from tflm_dev.builder import ModelBuilder

from . import Case, ErrorCase, error_case, generator, single_op

RUNS = 9


def _opts(cycles) -> bytes | None:
    return None if cycles is None else bytes(flexbuffers.Dumps({"cycles_max": cycles}))


def cb_model(slots: int, h: int, w: int, cycles, valid: bool, after: bool) -> bytes:
    """CIRCULAR_BUFFER, with the bool output or not, optionally followed by a
    RESHAPE of its output to a second model output."""
    q = ([0.05], [3])
    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1, 1, h, w), "INT8", quant=q)
    y = sg.tensor((1, slots, h, w), "INT8", quant=q)
    outs = [y]
    if valid:
        outs.append(sg.tensor((), "BOOL"))
    sg.op("CUSTOM:CIRCULAR_BUFFER", [x], outs, custom_options=_opts(cycles))
    sg.inputs, sg.outputs = [x], list(outs)
    if after:
        shape = sg.tensor((2,), "INT32", data=np.array([slots, h * w], np.int32))
        z = sg.tensor((slots, h * w), "INT8", quant=q)
        sg.op("RESHAPE", [y, shape], [z])
        sg.outputs.append(z)
    return b.build()


def _period(cycles, slots: int) -> int:
    if cycles is not None and cycles > 0:
        return cycles
    return 1 if slots in (5, 13, 25) else 2


@generator("CIRCULAR_BUFFER/int8")
def circular_buffer(rng):
    slots = int(rng.choice([1, 2, 3, 4, 5, 6]))
    h, w = int(rng.integers(1, 4)), int(rng.integers(1, 9))
    cycles = rng.choice([None, 0, -1, 1, 2, 3], p=[0.15, 0.1, 0.05, 0.2, 0.3, 0.2])
    cycles = None if cycles is None else int(cycles)
    valid = bool(rng.integers(0, 2))
    after = not valid and bool(rng.integers(0, 2))
    period = _period(cycles, slots)
    model = cb_model(slots, h, w, cycles, valid, after)
    inputs = [[rng.integers(-128, 128, (1, 1, h, w)).astype(np.int8)] for _ in range(RUNS)]

    def defined(outputs: list[np.ndarray], run: int) -> list[np.ndarray]:
        filled = min(run + 1, slots)
        out = [np.asarray(outputs[0])[:, slots - filled:]] + [np.asarray(o) for o in outputs[1:]]
        if after:
            ran = (run + 1) % period == 0
            out[-1] = out[-1][slots - filled:] if ran else np.zeros(0, np.int8)
        return out

    return Case("", model, dict(slots=slots, h=h, w=w, cycles=cycles, period=period, valid=valid, after=after),
                inputs=inputs, runs=RUNS, defined=defined)


# -- refused models ------------------------------------------------------------

@error_case("CIRCULAR_BUFFER/float32")
def _cb_float():
    model, _ = single_op("CUSTOM:CIRCULAR_BUFFER", [((1, 1, 1, 4), "FLOAT32")], [((1, 3, 1, 4), "FLOAT32", None)],
                         custom_options=_opts(1))
    return ErrorCase("", model, [np.zeros((1, 1, 1, 4), np.float32)], "NotImplementedError input of type float32")


@error_case("CIRCULAR_BUFFER/input_two_slots")
def _cb_two_slots():
    q = ([0.05], [0])
    model, _ = single_op("CUSTOM:CIRCULAR_BUFFER", [((1, 2, 1, 4), "INT8", None, q)], [((1, 3, 1, 4), "INT8", q)],
                         custom_options=_opts(1))
    return ErrorCase("", model, [np.zeros((1, 2, 1, 4), np.int8)],
                     "ValueError expects input [b, 1, h, w] and output [b, slots, h, w]")


@error_case("CIRCULAR_BUFFER/valid_not_bool")
def _cb_valid():
    q = ([0.05], [0])
    model, _ = single_op("CUSTOM:CIRCULAR_BUFFER", [((1, 1, 1, 4), "INT8", None, q)],
                         [((1, 3, 1, 4), "INT8", q), ((1,), "INT32", None)], custom_options=_opts(2))
    return ErrorCase("", model, [np.zeros((1, 1, 1, 4), np.int8)], "NotImplementedError output valid of type int32")


@error_case("CIRCULAR_BUFFER/batch_2")
def _cb_batch():
    q = ([0.05], [0])
    model, _ = single_op("CUSTOM:CIRCULAR_BUFFER", [((2, 1, 1, 4), "INT8", None, q)], [((2, 3, 1, 4), "INT8", q)],
                         custom_options=_opts(1))
    return ErrorCase("", model, [np.zeros((2, 1, 1, 4), np.int8)], "NotImplementedError batch 2",
                     tflm=False, why="TFLM takes it and shifts the first batch only, the rest of its output unwritten")
