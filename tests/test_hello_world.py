"""The hello_world models, bit-exact with TFLM on every target, with TFLM's
head and at most half its tail."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import EVERY_TARGET, get_target, model_path
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import make_inputs, run_model

HELLO = ["hello_world_int8.tflite", "hello_world_float.tflite", "hello_world_legacy.tflite"]


def samples_for(name: str) -> list[list[np.ndarray]]:
    """At least 100 input sets: random ones plus the whole useful input range."""
    model = load_model(model_path(name))
    samples = make_inputs(model, "random", seed=7, count=100)
    t = model.inputs[0]
    if t.dtype == "INT8":
        samples += [[np.full(t.shape, v, np.int8)] for v in range(-128, 128)]
    else:
        samples += [[np.full(t.shape, x, np.float32)] for x in np.linspace(-1.0, 7.5, 60, dtype=np.float32)]
        samples += [[np.full(t.shape, x, np.float32)] for x in (0.0, -0.0, 1e-30, -1e30, 3.4e38)]
    return samples


@pytest.mark.parametrize("target", EVERY_TARGET)
@pytest.mark.parametrize("name", HELLO)
def test_bit_exact_with_tflm(name, target, measured):
    samples = samples_for(name)
    assert len(samples) >= 100
    result = run_model(model_path(name), get_target(target), samples)
    expected = reference_outputs(model_path(name), samples)
    for r, (ours, ref) in enumerate(zip(result.runs, expected)):
        assert len(ours) == len(ref)
        for k, (a, b) in enumerate(zip(ours, ref)):
            assert a.dtype == b.dtype and a.shape == b.shape
            assert a.tobytes() == b.tobytes(), f"{name} on {target}, input set {r}, output {k}: {a} != {b}"
    m = measured[name]
    # The greedy planner reproduces TFLM's head; the records are compact.
    assert result.head_bytes == m.tflm_head
    assert result.tail_bytes <= m.tflm_tail // 2
    assert result.arena_used_bytes == result.head_bytes + result.tail_bytes


@pytest.mark.parametrize("name", HELLO)
def test_same_arena_on_every_target(name):
    """The arena layout does not depend on the pointer size."""
    figures = set()
    for target in EVERY_TARGET:
        r = run_model(model_path(name), get_target(target), make_inputs(load_model(model_path(name)), "zeros"))
        figures.add((r.arena_used_bytes, r.head_bytes, r.tail_bytes))
    assert len(figures) == 1, figures
