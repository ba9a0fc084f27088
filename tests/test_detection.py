"""TFLite_Detection_PostProcess beyond the generated cases
(tests/opgen/detection.py): what it refuses and why, an empty decoded box
failing the invoke as in TFLM, and the head: its eleven scratch buffers
planned as TFLM plans them."""

from __future__ import annotations

import numpy as np
import pytest

import opgen
from engine_host import EngineError, run_engine
from opgen.detection import detection_model
from tflm_host import _engine, arena
from tflm_dev.bench import tflm_arena
from tflm_dev.builder import ModelBuilder
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs

ANCHORS = np.array([[0.5, 0.5, 0.2, 0.2], [0.45, 0.5, 0.2, 0.3], [0.2, 0.7, 0.1, 0.1]], np.float32)
OPTIONS = dict(max_detections=2, max_classes_per_detection=1, nms_score_threshold=0.2, nms_iou_threshold=0.5,
               num_classes=2, y_scale=10.0, x_scale=10.0, h_scale=5.0, w_scale=5.0)


def _model(anchors=ANCHORS, rows=2, **changes) -> bytes:
    options = {k: v for k, v in {**OPTIONS, **changes}.items() if v is not None}
    return detection_model(len(anchors), 3, anchors, rows, **options)


def _quantized_model() -> bytes:
    b = ModelBuilder()
    sg = b.subgraph()
    q = ([0.05], [128])
    boxes = sg.tensor((1, 3, 4), "UINT8", quant=q)
    scores = sg.tensor((1, 3, 3), "UINT8", quant=([1 / 256], [0]))
    anc = sg.tensor((3, 4), "FLOAT32", data=ANCHORS)
    outs = [sg.tensor((1, 2, 4), "FLOAT32"), sg.tensor((1, 2), "FLOAT32"), sg.tensor((1, 2), "FLOAT32"),
            sg.tensor((1,), "FLOAT32")]
    from opgen.detection import OP, custom_options
    sg.op(OP, [boxes, scores, anc], outs, custom_options=custom_options(**OPTIONS))
    sg.inputs, sg.outputs = [boxes, scores], outs
    return b.build()


@pytest.mark.parametrize("model, error, message", [
    # TFLM's kernel fails when it runs on other types than float32.
    (_quantized_model, NotImplementedError, "box encodings of type uint8 is not supported"),
    (lambda: _model(max_classes_per_detection=2), NotImplementedError, "writes such detections outside its outputs"),
    (lambda: _model(nms_iou_threshold=0.0), ValueError, "nms_iou_threshold must be in \\(0, 1\\]"),
    (lambda: _model(max_detections=None), ValueError, "custom option 'max_detections' out of range"),
    (lambda: _model(num_classes=4), ValueError, "3 class scores per anchor for 4 classes"),
    (lambda: _model(rows=1), ValueError, "outputs must hold max_detections \\(2\\) boxes"),
    (lambda: _model(use_regular_nms=True, detections_per_class=0), ValueError, "detections_per_class must be positive"),
])
def test_refused(model, error, message):
    with pytest.raises(error, match=message):
        _engine.allocate(_engine.Model(model()))


def test_empty_box_fails_the_invoke(tmp_path):
    """An anchor of height 0 decodes to an empty box: TFLM's invoke fails
    before it writes any output, and so does the engine's."""
    anchors = ANCHORS.copy()
    anchors[2, 2] = 0.0
    path = tmp_path / "m.tflite"
    path.write_bytes(_model(anchors))
    samples = [[np.zeros((1, 3, 4), np.float32), np.full((1, 3, 3), 0.5, np.float32)]]
    with pytest.raises(RuntimeError, match="Interpreter invocation failed"):
        reference_outputs(path, samples)
    with pytest.raises(EngineError, match="decoded box 2 is empty"):
        run_engine(path, load_model(path), samples, tmp_path)


CASES = opgen.cases(3, only="DETECTION_POSTPROCESS")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_head_is_tflms(case, tmp_path):
    """The eleven scratch buffers TFLM asks for, in its order and sizes: the
    tflm planner's head is TFLM's recorded head byte for byte."""
    path = tmp_path / "m.tflite"
    path.write_bytes(case.model)
    assert arena.plan_layout(load_model(case.model), "tflm").head == tflm_arena(path).head
