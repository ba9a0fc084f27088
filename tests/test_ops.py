"""Generated models, op by op, through the engine (host build with ASan and
UBSan) and through TFLM: outputs bit-exact, arena exactly as the host
predicts. Set TFLM_OPGEN_CASES to run more cases per generator.

A failing case prints its parameters, and its model is kept in
build/failed-cases/ to reproduce it (tflm-host inspect / compare)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from engine_host import run_engine
from tflm_host import arena, opgen
from tflm_host.device import build_dir
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import make_inputs

PER_GENERATOR = int(os.environ.get("TFLM_OPGEN_CASES", "12"))
CASES = opgen.cases(PER_GENERATOR)
FAILED = build_dir() / "failed-cases"


def check_case(case: opgen.Case, tmp_path) -> None:
    path = tmp_path / "model.tflite"
    path.write_bytes(case.model)
    model = load_model(path)
    if case.inputs is not None:
        samples = case.inputs
    else:
        seed = abs(hash(case.name)) % (1 << 31)
        samples = make_inputs(model, "random", seed=seed, count=max(3, case.runs))
    try:
        ref = reference_outputs(path, samples)
        ours = run_engine(path, model, samples, tmp_path)
        layout = arena.plan_layout(model)
        assert (ours.head, ours.tail, ours.needed) == (layout.head, layout.tail, layout.needed), \
            f"arena {ours.head}/{ours.tail}/{ours.needed}, host predicts {layout.head}/{layout.tail}/{layout.needed}"
        for r, (a_run, b_run) in enumerate(zip(ours.runs, ref)):
            for k, (a, b) in enumerate(zip(a_run, b_run)):
                b = np.asarray(b).astype(a.dtype, copy=False).reshape(a.shape)
                if a.tobytes() != b.tobytes():
                    bad = [i for i in range(a.size) if a.ravel()[i:i + 1].tobytes() != b.ravel()[i:i + 1].tobytes()]
                    i = bad[0]
                    raise AssertionError(f"run {r} output {k}: {len(bad)} of {a.size} values differ; first at "
                                         f"{i}: ours {a.ravel()[i]!r}, TFLM {b.ravel()[i]!r}")
        assert len(ours.runs) == len(ref)
    except Exception as e:
        FAILED.mkdir(parents=True, exist_ok=True)
        keep = FAILED / (case.name.replace("/", "_") + ".tflite")
        keep.write_bytes(case.model)
        raise AssertionError(f"{case.describe()}\n(model kept in {keep})\n{e}") from e


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_generated(case, tmp_path):
    check_case(case, tmp_path)
