"""Every shared model whose ops this runtime has, through the host engine
(ASan/UBSan): bit-exact with TFLM on zeros and random inputs, one
interpreter for all input sets, and an arena no larger than TFLM's."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import MEASURED, model_path
from engine_host import run_engine
from tflm_host import arena
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import make_inputs

RUNNABLE = sorted(n for n, m in MEASURED.items() if m.runnable)


@pytest.mark.parametrize("name", RUNNABLE)
def test_engine_bit_exact(name, tmp_path):
    path = model_path(name)
    model = load_model(path)
    samples = make_inputs(model, "zeros") + make_inputs(model, "random", seed=5, count=3)
    ours = run_engine(path, model, samples, tmp_path)
    ref = reference_outputs(path, samples)
    assert len(ours.runs) == len(ref)
    for r, (a_run, b_run) in enumerate(zip(ours.runs, ref)):
        for k, (a, b) in enumerate(zip(a_run, b_run)):
            b = np.asarray(b).astype(a.dtype, copy=False).reshape(a.shape)
            assert a.tobytes() == b.tobytes(), \
                f"{name}: input set {r}, output {k}: ours {a.ravel()[:8]}, TFLM {b.ravel()[:8]}"
    layout = arena.plan_layout(model)
    assert (ours.head, ours.tail, ours.needed) == (layout.head, layout.tail, layout.needed)
    assert ours.head <= MEASURED[name].tflm_head
    assert ours.head + ours.tail < MEASURED[name].tflm_used
