"""Every shared model whose ops this runtime has: bit-exact with TFLM on
zeros and random inputs, several invokes in a row (stateful models see the
same sequence), on the unix port (built by GCC, and by clang), MPS2_AN385 (Cortex-M3), the Cortex-M4F
board (hard float) and the Cortex-M0 board; the largest also on the
Netduino 2 (128 KiB RAM); on the real ESP32 firmware on QEMU's esp32
machine (Xtensa LX6); with TFLM_PICO=all also on the real Pico firmware in
the RP2040 emulator."""

from __future__ import annotations

import functools
import re

import pytest

from conftest import MEASURED, TARGETS, get_target, model_path
from tflm_host import device
from tflm_host.device import DeviceError
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import BatchJob, RunResult, make_inputs, run_batch, run_model

RUNNABLE = sorted(n for n, m in MEASURED.items() if m.runnable)
LARGE = {"person_detect.tflite", "vww_96_int8.tflite"}
ESP32 = "ESP32_GENERIC"
CLANG = "unix-clang"  # the unix port built by clang, macOS's compiler (make unix-clang)
CASES = [(n, t) for n in RUNNABLE for t in ("unix", CLANG, "MPS2_AN385", "NETDUINOPLUS2", "MICROBIT")] + \
        [(n, "NETDUINO2") for n in RUNNABLE if n in LARGE] + \
        [(n, "RPI_PICO") for n in RUNNABLE if "RPI_PICO" in TARGETS]
# On the ESP32 (whose every run boots the firmware on QEMU) the models go in
# as few runs as its ROMFS partition allows, on one test process.
ESP32_CASES = [(n, ESP32) for n in RUNNABLE]


def samples_for(model) -> list:
    return make_inputs(model, "zeros") + make_inputs(model, "random", seed=11, count=3)


@functools.lru_cache(maxsize=1)
def esp32_results() -> dict:
    jobs = [BatchJob(re.sub(r"\W", "_", n), model_path(n).read_bytes(), samples_for(load_model(model_path(n))))
            for n in RUNNABLE]
    return {n: r for n, r in zip(RUNNABLE, run_batch(get_target(ESP32), jobs).values())}


def run_case(path, target: str, samples) -> RunResult:
    if target == CLANG:
        return run_model(path, device.UnixTarget(device.build_dir() / "unix-clang" / "micropython"), samples)
    if target != ESP32:
        return run_model(path, get_target(target), samples)
    res = esp32_results()[path.name]
    if res.error:
        raise DeviceError(res.error)
    return RunResult(target, res.runs, *res.arena)


@pytest.mark.parametrize("name,target", CASES + [pytest.param(*c, marks=pytest.mark.xdist_group("esp32_models"))
                                                 for c in ESP32_CASES],
                         ids=[f"{n}-{t}" for n, t in CASES + ESP32_CASES])
def test_shared_model_bit_exact(name, target):
    path = model_path(name)
    model = load_model(path)
    samples = samples_for(model)
    ours = run_case(path, target, samples)
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
