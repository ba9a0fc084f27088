"""Where TFLM's kernels, and so this engine's, are not TensorFlow's
definition of an op (tflm_host.divergence): `tflm-host inspect` names those
operators. Each claim checked: the engine's outputs equal TFLM's and differ
from TensorFlow's definition (computed here in numpy) exactly where the
note says so, and models without them get no note."""

from __future__ import annotations

import numpy as np
import pytest

from engine_host import run_engine
from tflm_dev.builder import single_op
from tflm_host import cli
from tflm_host.divergence import not_tensorflows
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs

Q_IN, Q_OUT = ([0.05], [-20]), ([0.03], [-128])


def _relu6(q_out) -> bytes:
    return single_op("RELU6", [((1, 64), "INT8", None, Q_IN)], [((1, 64), "INT8", q_out)])[0].build()


def _tensorflows_relu6(x: np.ndarray, q_out) -> np.ndarray:
    """TensorFlow's int8 RELU6: the real value clamped to [0, 6], quantized on the output's scale."""
    real = np.clip((x.astype(np.float64) - Q_IN[1][0]) * Q_IN[0][0], 0.0, 6.0)
    return np.clip(np.round(real / q_out[0][0]) + q_out[1][0], -128, 127).astype(np.int8)


def _run(model: bytes, samples, tmp_path):
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    return run_engine(path, load_model(model), samples, tmp_path).runs, reference_outputs(path, samples)


@pytest.mark.parametrize("differ", [True, False], ids=["rescaled", "same quantization"])
def test_relu6_between_quantizations_is_named(differ, tmp_path):
    q_out = Q_OUT if differ else Q_IN
    model = _relu6(q_out)
    x = np.arange(-128, 128, 4, dtype=np.int8).reshape(1, 64)
    ours, tflm = _run(model, [[x]], tmp_path)
    assert ours[0][0].tobytes() == np.asarray(tflm[0][0]).astype(np.int8).tobytes()
    tensorflows = _tensorflows_relu6(x, q_out)
    notes = not_tensorflows(load_model(model))
    if differ:
        assert (ours[0][0] != tensorflows).any()
        assert notes == ["operator 0 (RELU6): input and output quantization differ (scale 0.05, zero point -20 in; "
                         "0.03, -128 out): TFLM's kernel, and so this one, clamps without rescaling: its outputs "
                         "are not TensorFlow's"]
    else:
        assert ours[0][0].tobytes() == tensorflows.tobytes() and notes == []


def _space_to_batch(zero_point: int, pads: int) -> bytes:
    q = ([0.1], [zero_point])
    inputs = [((1, 4, 4, 1), "INT8", None, q), ((2,), "INT32", np.array([2, 2], np.int32)),
              ((2, 2), "INT32", np.full((2, 2), pads, np.int32))]
    side = (4 + 2 * pads) // 2
    return single_op("SPACE_TO_BATCH_ND", inputs, [((4, side, side, 1), "INT8", q)])[0].build()


@pytest.mark.parametrize("zero_point, pads, named", [(-5, 1, True), (0, 1, False), (-5, 0, False)])
def test_int8_space_to_batch_padding_is_named(zero_point, pads, named, tmp_path, capsys):
    model = _space_to_batch(zero_point, pads)
    x = np.full((1, 4, 4, 1), 7, np.int8)
    ours, _ = _run(model, [[x]], tmp_path)
    padding = ours[0][0] != 7
    # The padding is zero bytes here; TensorFlow's is the zero point.
    assert (ours[0][0][padding] == 0).all() and padding.any() == (pads > 0)
    notes = not_tensorflows(load_model(model))
    assert bool(notes) == named
    path = tmp_path / "s2b.tflite"
    path.write_bytes(model)
    assert cli.main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert ("not TensorFlow's: operator 0 (SPACE_TO_BATCH_ND): int8 padding with zero point -5: TFLM pads with 0 "
            "(a value it never sets, 0 in a fresh arena), and so does this kernel; TensorFlow pads with the zero "
            "point") in out if named else "not TensorFlow's" not in out
