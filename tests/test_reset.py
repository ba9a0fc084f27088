"""Interpreter.reset() against TFLM's reset(): stateful models (LSTM, SVDF,
resource variables with CALL_ONCE, the signal library's streaming ops,
CIRCULAR_BUFFER, TFLM's audio preprocessor) run one sequence of invokes and
resets, here and through TFLM's Python interpreter, outputs bit-exact at
every step. Each generated model is the first of its generator's cases whose
TFLM outputs after a reset differ from those of the same sequence without
the resets, so a reset that did nothing fails; so do the shared models but
keyword_scrambled, whose outputs do not show its state. Through the engine
(the host extension) for all of them, then on the unix port and a QEMU board."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from conftest import DEVICE_PRELUDE, model_files, model_path, run_on
import opgen
from tflm_host import arena
from tflm_host.model import load_model
from tflm_host.runner import make_inputs

RESET = -1
# Input set indices, RESET between them.
SEQUENCE = [0, 1, 2, RESET, 0, 1, 3, RESET, RESET, 2, 0]
SHARED = ["trained_lstm.tflite", "trained_lstm_int8.tflite", "keyword_scrambled.tflite",
          "audio_preprocessor_int8.tflite"]
# Its outputs do not change with its inputs (scrambled weights), so not with
# its state either: compared, but it cannot show that the state was reset.
HIDDEN_STATE = {"keyword_scrambled.tflite"}
GENERATORS = ["STATEFUL/delay_line_init", "STATEFUL/delay_line_zero_point", "CIRCULAR_BUFFER/int8",
              "SIGNAL/framer", "SIGNAL/delay", "SIGNAL/stacker", "SIGNAL/overlap_add_int16",
              "SIGNAL/overlap_add_float32", "SIGNAL/spectral_subtraction", "SIGNAL/pipeline_int16",
              "SVDF/float32", "SVDF/int8_int16_state", "SVDF/int8_int8_state",
              "UNIDIRECTIONAL_SEQUENCE_LSTM/float32", "UNIDIRECTIONAL_SEQUENCE_LSTM/int8_hidden_zero_point"]
DEVICE_TARGETS = ["unix", "NETDUINOPLUS2"]


class Stateful:
    def __init__(self, name: str, model: bytes, inputs: list[list[np.ndarray]], defined=None) -> None:
        self.name, self.model, self.inputs, self.defined = name, model, inputs, defined
        self.info = load_model(model)

    def file(self) -> str:
        return self.name.replace("/", "_") + ("" if self.name.endswith(".tflite") else ".tflite")

    def compared(self, outputs: list[np.ndarray], run: int) -> list[bytes]:
        """The defined part of a run's outputs, as bytes (NaNs compare by their bits)."""
        outs = self.defined(outputs, run) if self.defined else outputs
        return [np.ascontiguousarray(o).tobytes() for o in outs]


def tflm_sequence(case: Stateful, sequence: list[int]) -> list[list[np.ndarray]]:
    from tflite_micro.python.tflite_micro import runtime
    it = runtime.Interpreter.from_bytes(case.model, arena_size=1 << 22)
    runs = []
    for step in sequence:
        if step == RESET:
            it.reset()
            continue
        for k, x in enumerate(case.inputs[step]):
            it.set_input(np.ascontiguousarray(x), k)
        it.invoke()
        runs.append([np.array(it.get_output(k), copy=True) for k in range(len(case.info.outputs))])
    return runs


def engine_sequence(case: Stateful) -> list[list[np.ndarray]]:
    it = arena.interpreter(case.info, None, run=True)
    runs = []
    for step in SEQUENCE:
        if step == RESET:
            it.reset()
            continue
        for k, x in enumerate(case.inputs[step]):
            it.set_input(k, np.ascontiguousarray(x, case.info.inputs[k].numpy_dtype).tobytes())
        it.invoke()
        runs.append([np.frombuffer(it.output(k), t.numpy_dtype).reshape(t.shape)
                     for k, t in enumerate(case.info.outputs)])
    return runs


def reset_shows(case: Stateful) -> bool:
    """Whether TFLM's outputs with the resets differ from those without."""
    with_reset = tflm_sequence(case, SEQUENCE)
    without = tflm_sequence(case, [s for s in SEQUENCE if s != RESET])
    return any(case.compared(a, r) != case.compared(b, r) for r, (a, b) in enumerate(zip(with_reset, without)))


def generated(name: str) -> Stateful:
    """The generator's first case (of 12) whose state a reset shows."""
    for i in range(12):
        case = opgen.GENERATORS[name](np.random.default_rng([zlib.crc32(name.encode()), i]))
        inputs = case.inputs
        if inputs is None or len(inputs) < 4:
            inputs = make_inputs(load_model(case.model), "random", seed=i, count=4)
        s = Stateful(f"{name}/{i}", case.model, inputs, case.defined)
        if reset_shows(s):
            return s
    raise AssertionError(f"no case of {name} shows its state across a reset")


def shared(name: str) -> Stateful:
    data = model_path(name).read_bytes()
    return Stateful(name, data, make_inputs(load_model(data), "random", seed=1, count=4))


_cases: dict[str, Stateful] = {}


def case_of(name: str) -> Stateful:
    if name not in _cases:
        _cases[name] = shared(name) if name.endswith(".tflite") else generated(name)
    return _cases[name]


def assert_same(case: Stateful, ours: list[list[np.ndarray]], where: str) -> None:
    ref = tflm_sequence(case, SEQUENCE)
    assert len(ours) == len(ref)
    for run, (a, b) in enumerate(zip(ours, ref)):
        assert case.compared(a, run) == case.compared(b, run), f"{case.name} on {where}: invoke {run} differs"


@pytest.mark.parametrize("name", SHARED + GENERATORS)
def test_reset_matches_tflm_in_the_engine(name):
    case = case_of(name)
    if name in SHARED and name not in HIDDEN_STATE:
        assert reset_shows(case)
    assert_same(case, engine_sequence(case), "the engine")


# One chunk per model (the boards' heaps hold one model's inputs at a time).
DEVICE_CODE = """
import binascii
it = tflm.Interpreter(tflm.Model(load(NAME)))
inputs = [[binascii.unhexlify(x) for x in xs] for xs in INPUTS]
for step in SEQUENCE:
    if step < 0:
        it.reset()
        continue
    for k, x in enumerate(inputs[step]):
        it.set_input(k, x)
    it.invoke()
    print(' '.join(binascii.hexlify(bytes(it.output(k))).decode() for k in range(N_OUT)))
del it, inputs
gc.collect()
"""


@pytest.mark.parametrize("target", DEVICE_TARGETS)
def test_reset_matches_tflm_on_device(target):
    names = SHARED + ["STATEFUL/delay_line_init", "CIRCULAR_BUFFER/int8", "SIGNAL/framer", "SIGNAL/stacker",
                      "SIGNAL/overlap_add_float32", "SVDF/int8_int8_state"]
    cases = [case_of(n) for n in names]
    chunks = [DEVICE_PRELUDE]
    for c in cases:
        inputs = [[np.ascontiguousarray(x, t.numpy_dtype).tobytes().hex() for x, t in zip(xs, c.info.inputs)]
                  for xs in c.inputs[:max(SEQUENCE) + 1]]
        chunks.append(DEVICE_CODE.replace("NAME", repr(c.file())).replace("INPUTS", repr(inputs))
                      .replace("SEQUENCE", repr(SEQUENCE)).replace("N_OUT", str(len(c.info.outputs))))
    files = {c.file(): c.model for c in cases}
    lines = run_on(target, chunks, files).splitlines()
    for c in cases:
        ours = []
        for _ in range(sum(s != RESET for s in SEQUENCE)):
            words = lines.pop(0).split(" ")
            ours.append([np.frombuffer(bytes.fromhex(w), t.numpy_dtype).reshape(t.shape)
                         for w, t in zip(words, c.info.outputs)])
        assert_same(c, ours, target)


@pytest.mark.parametrize("target", ["unix"])
def test_reset_of_a_stateless_model_and_a_released_one(target):
    code = DEVICE_PRELUDE + """
it = tflm.Interpreter(tflm.Model(load('hello_world_int8.tflite')))
first = it.predict([1.5])[0]
it.reset()
print(it.predict([1.5])[0] == first)
it.__del__()
attempt(it.reset)
"""
    out = run_on(target, code, model_files("hello_world_int8.tflite")).splitlines()
    assert out == ["True", "ValueError interpreter was released (its __del__ ran): build a new one"]
