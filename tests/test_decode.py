"""TFLM_DECODE: the tensors opgen/decode.py encodes from the format TFLM
documents come back from TFLM's own DECODE as the values they were made from
(so the encoders, which the generated cases then hold this engine to, are
TFLM's format and not only this engine's reading of it); the tflite_micro
package's compressor inserts the DECODE the generated FULLY_CONNECTED cases
run."""

from __future__ import annotations

import numpy as np
import pytest

import opgen
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs

CASES = [c for c in opgen.cases(6, only="TFLM_DECODE/") if "kind" in c.params]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_tflm_decodes_the_encoders_tensors(case, tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(case.model)
    runs = reference_outputs(path, case.inputs)
    for out, want in zip(runs[0], case.params["expected"]):
        assert np.asarray(out).tobytes() == np.asarray(want).tobytes(), case.describe()


def test_compressor_inserts_decode():
    for case in opgen.cases(3, only="TFLM_DECODE/compressed"):
        model = load_model(case.model)
        ops = [op.opcode for op in model.main.operators]
        assert ops[-1] == "FULLY_CONNECTED" and "CUSTOM:TFLM_DECODE" in ops, ops
