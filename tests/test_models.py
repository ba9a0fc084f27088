"""Every shared model whose ops this runtime has: bit-exact with TFLM on
zeros and random inputs, several invokes in a row (stateful models see the
same sequence), on the unix port, MPS2_AN385 (Cortex-M3), the Cortex-M4F
board (hard float) and the Cortex-M0 board; the largest also on the
Netduino 2 (128 KiB RAM); on the real ESP32 firmware on QEMU's esp32
machine (Xtensa LX6); with TFLM_PICO=all also on the real Pico firmware in
the RP2040 emulator."""

from __future__ import annotations

import pytest

from conftest import MEASURED, TARGETS, get_target, model_path
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import make_inputs, run_model

RUNNABLE = sorted(n for n, m in MEASURED.items() if m.runnable)
LARGE = {"person_detect.tflite", "vww_96_int8.tflite"}
CASES = [(n, t) for n in RUNNABLE for t in ("unix", "MPS2_AN385", "NETDUINOPLUS2", "MICROBIT")] + \
        [(n, "NETDUINO2") for n in RUNNABLE if n in LARGE] + \
        [(n, "RPI_PICO") for n in RUNNABLE if "RPI_PICO" in TARGETS] + \
        [(n, "ESP32_GENERIC") for n in RUNNABLE]


@pytest.mark.parametrize("name,target", CASES, ids=[f"{n}-{t}" for n, t in CASES])
def test_shared_model_bit_exact(name, target):
    path = model_path(name)
    model = load_model(path)
    samples = make_inputs(model, "zeros") + make_inputs(model, "random", seed=11, count=3)
    ours = run_model(path, get_target(target), samples)
    ref = reference_outputs(path, samples)
    for r, (a_run, b_run) in enumerate(zip(ours.runs, ref)):
        for k, (a, b) in enumerate(zip(a_run, b_run)):
            assert a.tobytes() == b.astype(a.dtype).tobytes(), f"{name} on {target}: input set {r}, output {k}"
    # The head is never larger than TFLM's, the tail always smaller.
    assert ours.head_bytes <= MEASURED[name].tflm_head
    assert ours.tail_bytes < MEASURED[name].tflm_tail


def test_every_model_runs():
    """Every shared model, the audio preprocessor's custom signal ops included."""
    not_runnable = sorted(n for n, m in MEASURED.items() if not m.runnable)
    assert not_runnable == [], f"models not running yet: {not_runnable}"
