"""The one-op models of `tflm-host bench speed --ops` (tflm_host/opbench.py):
each runs bit-exact with TFLM on its own inputs through the engine (host
build with ASan and UBSan), so the table times the same work on both sides;
and the table goes into its own section of the doc, which a regenerated
main table keeps."""

from __future__ import annotations

import numpy as np
import pytest

from engine_host import run_engine
from tflm_dev import bench, opbench
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs

CASES = opbench.op_cases()


def test_cases_cover_the_ops():
    ops = {c.op for c in CASES}
    assert ops == {"RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "BATCH_MATMUL", "MEAN", "SUM", "REDUCE_MAX",
                   "REDUCE_MIN", "REDUCE_ALL", "EXP", "LOG_SOFTMAX", "SQUARED_DIFFERENCE", "PRELU"}
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_is_bit_exact(case, tmp_path):
    path = tmp_path / "model.tflite"
    path.write_bytes(case.model)
    model = load_model(path)
    assert [tuple(t.shape) for t in model.inputs] == [x.shape for x in case.inputs]
    ours = run_engine(path, model, [case.inputs], tmp_path)
    ref = reference_outputs(path, [case.inputs])
    for a, b in zip(ours.runs[0], ref[0]):
        b = np.asarray(b).astype(a.dtype, copy=False).reshape(a.shape)
        assert a.tobytes() == b.tobytes(), f"{case.name}: {int(np.sum(a != b))} of {a.size} values differ"


def test_section_in_the_doc(tmp_path):
    doc = tmp_path / "speed-reference.md"
    doc.write_text("# Speed\n\n| model |\n")
    opbench.write_ops_section(doc, "| op | first |\n", "tflm-host bench speed --ops --out FILE")
    first = doc.read_text()
    assert first.startswith("# Speed\n\n| model |\n") and "| op | first |" in first
    opbench.write_ops_section(doc, "| op | second |\n", "tflm-host bench speed --ops --out FILE")
    second = doc.read_text()
    assert "first" not in second and "| op | second |" in second
    assert second.count(opbench.OPS_START) == 1 and second.count(opbench.OPS_END) == 1
    # `bench speed --out` rewrites the main table and keeps the section.
    kept = bench.keep_sweep(doc, "# Speed\n\n| model | new |\n")
    assert kept.startswith("# Speed\n\n| model | new |\n") and "| op | second |" in kept
