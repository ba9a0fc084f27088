"""Models converted with an unknown batch size. TensorFlow's converter
writes a Keras model's dilated convolution, when the batch is left unknown
(keras.Input's default), as SPACE_TO_BATCH_ND, the convolution and
BATCH_TO_SPACE_ND, and writes batch 1 in every static shape with a -1 in the
shape_signature: between the two ops the batch is the block's size, so the
file's shapes are not the tensors'. TFLM runs the shapes as written (not
TensorFlow's outputs); the engine refuses the model naming `tflm-host
prepare`, which writes each tensor's batch (tflm_host.batch_shapes). The
prepared model must then run bit-exact with TFLM's reference on it and give
what the dilated convolution the three ops stand for gives (TFLM's outputs
for a model of that one op, same inputs)."""

from __future__ import annotations

import numpy as np
import pytest

from engine_host import run_engine
from opgen import bias_data, random_data, weight_quant
from tflm_dev.builder import ModelBuilder
from tflm_host import _engine, cli
from tflm_host.batch_shapes import batch_changes, fixed_batch
from tflm_host.model import load_model
from tflm_host.prepare import prepare_model
from tflm_host.reference import reference_outputs

H, W, C, K = 10, 8, 3, 3  # input rows, columns, channels; a 3x3 depthwise filter at dilation 2


def _model(dtype: str, padded: bool, dilated: bool, seed: int = 5) -> bytes:
    """SPACE_TO_BATCH_ND (block 2x2), a 3x3 DEPTHWISE_CONV_2D and
    BATCH_TO_SPACE_ND as the converter writes them at an unknown batch
    (padded: its SAME padding, as paddings of 2 around), or (dilated) the
    one DEPTHWISE_CONV_2D at dilation 2 they stand for. Zero points are 0:
    the int8 padding is then the zero point too."""
    rng = np.random.default_rng(seed)
    q_in = ([0.05], [0]) if dtype == "INT8" else None
    q_out = ([0.08], [0]) if dtype == "INT8" else None
    qw = weight_quant(rng, C, True, dim=3) if dtype == "INT8" else None
    weights = random_data(rng, dtype, (1, K, K, C))
    bias_type = "INT32" if dtype == "INT8" else "FLOAT32"
    qb = ([q_in[0][0] * s for s in qw[0]], [0] * C, 0) if dtype == "INT8" else None
    pad = 2 if padded else 0
    out_h, out_w = (H, W) if padded else (H - 2 * (K - 1), W - 2 * (K - 1))
    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1, H, W, C), dtype, quant=q_in, signature=(-1, H, W, C))
    f = sg.tensor((1, K, K, C), dtype, weights, qw)
    bias = sg.tensor((C,), bias_type, bias_data(rng, bias_type, C), qb)
    y = sg.tensor((1, out_h, out_w, C), dtype, quant=q_out, signature=(-1, out_h, out_w, C))
    options = dict(StrideH=1, StrideW=1, DepthMultiplier=1, FusedActivationFunction="NONE")
    if dilated:
        sg.op("DEPTHWISE_CONV_2D", [x, f, bias], [y], Padding="SAME" if padded else "VALID",
              DilationHFactor=2, DilationWFactor=2, **options)
    else:
        block = sg.tensor((2,), "INT32", np.array([2, 2], np.int32))
        pads = sg.tensor((2, 2), "INT32", np.full((2, 2), pad, np.int32))
        crops = sg.tensor((2, 2), "INT32", np.zeros((2, 2), np.int32))
        sh, sw = (H + 2 * pad) // 2, (W + 2 * pad) // 2
        dh, dw = sh - K + 1, sw - K + 1
        # Batch 1 where the batch is 4: what the converter writes.
        s = sg.tensor((1, sh, sw, C), dtype, quant=q_in, signature=(-1, sh, sw, C), name="space_to_batch")
        d = sg.tensor((1, dh, dw, C), dtype, quant=q_out, signature=(-1, dh, dw, C), name="depthwise")
        sg.op("SPACE_TO_BATCH_ND", [x, block, pads], [s])
        sg.op("DEPTHWISE_CONV_2D", [s, f, bias], [d], Padding="VALID", DilationHFactor=1, DilationWFactor=1,
              **options)
        sg.op("BATCH_TO_SPACE_ND", [d, block, crops], [y])
    sg.inputs, sg.outputs = [x], [y]
    return b.build()


CASES = [(dtype, padded) for dtype in ("FLOAT32", "INT8") for padded in (False, True)]


@pytest.mark.parametrize("dtype, padded", CASES)
def test_prepare_writes_the_batch_and_the_model_runs_as_its_dilated_convolution(dtype, padded, tmp_path):
    model = _model(dtype, padded, dilated=False)
    with pytest.raises(ValueError, match=r"operator 0 \(SPACE_TO_BATCH_ND\): block shape and paddings do not give "
                                         r"the output's shape: batch 1, not 4 \(converted with an unknown batch "
                                         r"size\? tflm-host prepare writes the batch\)"):
        _engine.allocate(_engine.Model(model))
    changes = batch_changes(model)
    assert [(c.name, c.written, c.batch) for c in changes] == [("space_to_batch", 1, 4), ("depthwise", 1, 4)]
    fixed, _ = fixed_batch(model)
    assert len(fixed) == len(model) and fixed_batch(fixed) == (fixed, [])
    shapes = {t.name: t.shape for t in load_model(fixed).main.tensors}
    assert shapes == {t.name: (4, *t.shape[1:]) if t.name in ("space_to_batch", "depthwise") else t.shape
                      for t in load_model(model).main.tensors}

    prepared = prepare_model(model)
    path, dilated = tmp_path / "prepared.tflite", tmp_path / "dilated.tflite"
    path.write_bytes(prepared)
    dilated.write_bytes(_model(dtype, padded, dilated=True))
    rng = np.random.default_rng(11)
    samples = [[random_data(rng, dtype, (1, H, W, C))] for _ in range(3)]
    ours = run_engine(path, load_model(prepared), samples, tmp_path).runs
    tflm = reference_outputs(path, samples)
    expected = reference_outputs(dilated, samples)
    for run, theirs, want in zip(ours, tflm, expected):
        assert run[0].tobytes() == np.asarray(want[0]).astype(run[0].dtype).tobytes()
        assert run[0].tobytes() == np.asarray(theirs[0]).astype(run[0].dtype).tobytes()


def test_cli_prepare_says_what_it_wrote(tmp_path, capsys):
    src, out = tmp_path / "dilated_unknown_batch.tflite", tmp_path / "out.tflite"
    src.write_bytes(_model("INT8", True, dilated=False))
    assert cli.main(["inspect", str(src)]) == 0
    assert "tflm-host prepare writes the batch" in capsys.readouterr().out
    assert cli.main(["prepare", str(src), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "converted with an unknown batch size" in err and "(tensor 7 1 -> 4, 8 1 -> 4)" in err
    _engine.allocate(_engine.Model(out.read_bytes()))


def test_models_without_the_block_ops_are_left_as_they_are():
    model = _model("FLOAT32", False, dilated=True)
    assert fixed_batch(model) == (model, [])


def test_a_block_the_batch_does_not_divide_is_left_to_the_engine():
    # BATCH_TO_SPACE_ND whose input's batch (written 1, not made 4 by a
    # SPACE_TO_BATCH_ND) the block does not divide: nothing is written, and
    # the engine refuses the model as before.
    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1, 2, 2, 1), "FLOAT32", signature=(-1, 2, 2, 1))
    block = sg.tensor((2,), "INT32", np.array([2, 2], np.int32))
    crops = sg.tensor((2, 2), "INT32", np.zeros((2, 2), np.int32))
    y = sg.tensor((1, 4, 4, 1), "FLOAT32", signature=(-1, 4, 4, 1))
    sg.op("BATCH_TO_SPACE_ND", [x, block, crops], [y])
    sg.inputs, sg.outputs = [x], [y]
    model = b.build()
    assert fixed_batch(model) == (model, [])
    with pytest.raises(ValueError, match="block shape and crops do not give the output's shape: batch 1, not 4"):
        _engine.allocate(_engine.Model(model))
