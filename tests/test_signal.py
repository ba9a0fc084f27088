"""TFLM's audio front end (signal library custom ops): the shared
audio_preprocessor_int8 model bit-exact with TFLM over a sequence of 30 ms
windows through one interpreter (its noise estimate is state carried across
invokes), on the host engine, the unix port and an emulated board; the
custom options read with every offset checked; the host's figures."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from conftest import MEASURED, ROOT, get_target, model_path, run_on
from tflm_host import arena, cli
from tflm_host.model import load_model
from tflm_host.demo import demo_speech
from tflm_host.reference import reference_outputs
from tflm_host.runner import run_model

NAME = "audio_preprocessor_int8.tflite"
RATE = 16000


def windows() -> list[list[np.ndarray]]:
    """30 ms windows (480 samples) of a 1 kHz tone, a chirp, silence, quiet
    and loud noise, in an order that makes the noise estimate rise and fall."""
    rng = np.random.default_rng(14)
    t = np.arange(480) / RATE
    out = []
    for k in range(4):
        out.append((6000 * np.sin(2 * np.pi * 1000 * (t + k * 0.02))).astype(np.int16))
    out.append(np.zeros(480, np.int16))
    out.append(rng.integers(-200, 201, 480).astype(np.int16))
    out.append((12000 * np.sin(2 * np.pi * (300 + 6000 * t) * t)).astype(np.int16))
    out += [rng.integers(-32768, 32768, 480).astype(np.int16) for _ in range(3)]
    out.append(np.full(480, -32768, np.int16))
    for k in range(3):
        out.append((3000 * np.sin(2 * np.pi * 440 * (t + k * 0.02))).astype(np.int16))
    return [[w.reshape(1, 480)] for w in out]


@pytest.fixture(scope="module")
def reference():
    return reference_outputs(model_path(NAME), windows())


def check_runs(runs, ref):
    assert len(runs) == len(ref)
    for r, (a, b) in enumerate(zip(runs, ref)):
        assert np.asarray(a[0]).tobytes() == np.asarray(b[0]).astype(np.int8).tobytes(), f"window {r}"
    # the windows are not all alike: the comparison has something to compare
    assert len({np.asarray(b[0]).tobytes() for b in ref}) > 8


def test_preprocessor_host_engine(reference):
    model = load_model(model_path(NAME))
    it = arena.interpreter(model, None, run=True)
    runs = []
    for (x,) in windows():
        it.set_input(0, x.tobytes())
        it.invoke()
        runs.append([np.frombuffer(it.output(0), np.int8).copy()])
    check_runs(runs, reference)


@pytest.mark.parametrize("target", ["unix", "NETDUINOPLUS2"])
def test_preprocessor_on_device(target, reference):
    res = run_model(model_path(NAME), get_target(target), windows(), planner=None)
    check_runs(res.runs, reference)
    layout = arena.plan_layout(load_model(model_path(NAME)))
    assert (res.arena_used_bytes, res.head_bytes, res.tail_bytes) == (layout.used, layout.head, layout.tail)


def test_preprocessor_arena_figures(capsys):
    """tflm-host arena gives the engine's figures; the head is TFLM's measured
    one (the same greedy plan), the tail smaller."""
    model = load_model(model_path(NAME))
    layout = arena.plan_layout(model)
    assert cli.main(["arena", str(model_path(NAME)), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["arena_used_bytes"] == layout.used == data["head_bytes"] + data["tail_bytes"]
    assert layout.head == MEASURED[NAME].tflm_head
    assert layout.tail < MEASURED[NAME].tflm_tail
    # the offline planner plans it, the RFFT's scratch buffer included
    assert cli.main(["plan", str(model_path(NAME)), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["head"] <= layout.head


def test_ops_prints_the_signal_flags(capsys):
    assert cli.main(["ops", str(model_path(NAME))]) == 0
    out = capsys.readouterr().out
    flags = out.split('TFLM_OPS="', 1)[1].split('"', 1)[0].split()
    assert "SIGNAL_WINDOW" in flags and "SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION" in flags and "SIGNAL_PCAN" in flags
    assert "-DTFLM_KERNEL_SIGNAL_FFT_AUTO_SCALE=1" in out


def _window_options_offset(raw: bytes) -> tuple[int, int]:
    """Where the SignalWindow operator's custom options sit in the model."""
    opts = load_model(raw).main.operators[0].custom_options
    at = raw.find(opts)
    assert at > 0 and raw.find(opts, at + 1) < 0
    return at, len(opts)


def test_corrupted_options_are_value_errors():
    """Every byte of the options changed to several values: a ValueError
    naming the options, or a model that still builds, never a crash (the
    engine's fuzzer runs the same under ASan)."""
    raw = model_path(NAME).read_bytes()
    at, n = _window_options_offset(raw)
    errors = 0
    for i in range(n):
        for v in (0x00, 0x7F, 0xFF, raw[at + i] ^ 0x04):
            bad = bytearray(raw)
            bad[at + i] = v
            try:
                arena.interpreter(load_model(bytes(bad)), None, run=True)
            except ValueError as e:
                errors += 1
                assert "custom option" in str(e), str(e)
    assert errors > n  # most changes break the map


# -- the pipeline example: 1 s of audio -> 49 x 40 features -> keyword scores

EXAMPLE = ROOT / "examples" / "micro_speech.py"
KEYWORD_MODEL = "micro_speech_quantized.tflite"


def synthetic_wav() -> tuple[bytes, np.ndarray]:
    """The demo's second of synthetic audio (a WAV and its samples)."""
    return demo_speech()


def tflm_pipeline(pcm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same pipeline in TFLM: one preprocessor interpreter over the
    windows (its state carried), then the keyword model."""
    n = (len(pcm) - 480) // 320 + 1
    windows_ = [[pcm[320 * w:320 * w + 480].astype(np.int16).reshape(1, 480)] for w in range(n)]
    feats = np.stack([np.asarray(r[0]).astype(np.int8) for r in reference_outputs(model_path(NAME), windows_)])
    scores = reference_outputs(model_path(KEYWORD_MODEL), [[feats.reshape(1, -1)]])[0][0]
    return feats, np.asarray(scores).astype(np.int8).ravel()


def test_speech_pipeline_example_on_board():
    wav, pcm = synthetic_wav()
    feats, scores = tflm_pipeline(pcm)
    assert feats.shape == (49, 40)
    files = {"speech.wav": wav, NAME: model_path(NAME).read_bytes(),
             KEYWORD_MODEL: model_path(KEYWORD_MODEL).read_bytes()}
    out = run_on("NETDUINOPLUS2", EXAMPLE.read_text(), files)
    rows = re.findall(r"^features +(\d+) ([0-9a-f]{80})$", out, re.M)
    assert [int(i) for i, _ in rows] == list(range(49)), out
    device_feats = np.stack([np.frombuffer(bytes.fromhex(h), np.int8) for _, h in rows])
    assert device_feats.tobytes() == feats.tobytes()
    assert len({r.tobytes() for r in feats}) > 10  # silence and sound differ
    raw = re.search(r"^scores raw: (.*)$", out, re.M).group(1).split()
    assert [int(v) for v in raw] == scores.tolist()
    used = re.search(r"^arena_used_bytes: (\d+) \+ (\d+)$", out, re.M)
    assert (int(used.group(1)), int(used.group(2))) == (
        arena.plan_layout(load_model(model_path(NAME))).used,
        arena.plan_layout(load_model(model_path(KEYWORD_MODEL))).used)
