"""TFLite_Detection_PostProcess (SSD detectors' custom op): random anchors
(clustered, so boxes overlap), box encodings and class scores, in both
non-max suppressions (class-agnostic "fast" and per-class "regular"), with
and without a background class, box encodings wider than 4 values, scores
in few levels (ties within and across classes, whose order TFLM fixes), NaN
and infinite scores, an input set with nothing above the threshold, more
detections allowed than candidates, outputs with more rows than TFLM
writes. TFLM leaves the rows it does not write as the arena had them (fast:
past the count; both: past max_detections), so only written rows compare."""

from __future__ import annotations

import numpy as np
from flatbuffers import flexbuffers

from tflm_dev.builder import ModelBuilder
from . import Case, generator

OP = "CUSTOM:TFLite_Detection_PostProcess"


def custom_options(**options) -> bytes:
    """A FlexBuffer map, as the converter writes the op's options (ints,
    floats, a bool)."""
    fbb = flexbuffers.Builder()
    with fbb.Map():
        for key, value in options.items():
            if isinstance(value, bool):
                fbb.Bool(key, value)
            elif isinstance(value, int):
                fbb.Int(key, value)
            else:
                fbb.Float(key, float(value))
    return bytes(fbb.Finish())


def detection_model(n: int, classes_bg: int, anchors: np.ndarray, rows: int, stride: int = 4,
                    **options) -> bytes:
    b = ModelBuilder()
    sg = b.subgraph()
    boxes = sg.tensor((1, n, stride), "FLOAT32", name="box_encodings")
    scores = sg.tensor((1, n, classes_bg), "FLOAT32", name="class_predictions")
    anc = sg.tensor(anchors.shape, "FLOAT32", data=anchors.astype(np.float32), name="anchors")
    outs = [sg.tensor((1, rows, 4), "FLOAT32", name="detection_boxes"),
            sg.tensor((1, rows), "FLOAT32", name="detection_classes"),
            sg.tensor((1, rows), "FLOAT32", name="detection_scores"),
            sg.tensor((1,), "FLOAT32", name="num_detections")]
    sg.op(OP, [boxes, scores, anc], outs, custom_options=custom_options(**options))
    sg.inputs, sg.outputs = [boxes, scores], outs
    return b.build()


def _anchors(rng, n: int) -> np.ndarray:
    """y, x, h, w: centres jittered around a few points, so boxes overlap."""
    centres = rng.uniform(0.2, 0.8, (int(rng.integers(1, 4)), 2))
    pick = centres[rng.integers(len(centres), size=n)] + rng.normal(0, 0.05, (n, 2))
    sizes = rng.uniform(0.1, 0.5, (n, 2))
    return np.concatenate([pick, sizes], axis=1).astype(np.float32)


def _scores(rng, n: int, classes_bg: int, threshold: float, levels: bool, special: bool) -> np.ndarray:
    s = rng.uniform(0, 1, (1, n, classes_bg))
    if levels:
        s = np.round(s * 6) / 6  # ties
    s = s.astype(np.float32)
    if special:
        flat = s.reshape(-1)
        k = rng.integers(flat.size, size=3)
        flat[k] = np.array([np.nan, np.inf, threshold], np.float32)
    return s


def _case(rng, regular: bool) -> Case:
    n = int(rng.integers(2, 40))
    classes = int(rng.integers(1, 7))
    background = bool(rng.random() < 0.5)
    classes_bg = classes + background
    max_det = int(rng.integers(1, 12)) if rng.random() < 0.7 else n + int(rng.integers(1, 5))
    rows = max_det + (int(rng.integers(1, 4)) if rng.random() < 0.25 else 0)
    stride = 4 if rng.random() < 0.7 else 6
    threshold = float(np.float32(rng.choice([0.0, rng.uniform(0.2, 0.8)])))
    iou = float(np.float32(rng.choice([1.0, rng.uniform(0.1, 0.9)])))
    scale = [10.0, 10.0, 5.0, 5.0] if rng.random() < 0.5 else [float(np.float32(v)) for v in rng.uniform(1, 12, 4)]
    options = dict(max_detections=max_det, max_classes_per_detection=1, nms_score_threshold=threshold,
                   nms_iou_threshold=iou, num_classes=classes, y_scale=scale[0], x_scale=scale[1],
                   h_scale=scale[2], w_scale=scale[3], use_regular_nms=regular)
    if regular and rng.random() < 0.6:
        options["detections_per_class"] = int(rng.integers(1, n + 3))
    anchors = _anchors(rng, n)
    model = detection_model(n, classes_bg, anchors, rows, stride, **options)
    levels = bool(rng.random() < 0.6)
    inputs = []
    for k in range(3):
        enc = rng.normal(0, 0.6, (1, n, stride)).astype(np.float32)
        if k == 1:
            # Nothing at or above the threshold.
            sc = np.full((1, n, classes_bg), np.float32(threshold) - np.float32(0.5), np.float32)
            sc[0, :, 0] = np.nextafter(np.float32(threshold), np.float32(-1))
        else:
            sc = _scores(rng, n, classes_bg, threshold, levels or k == 2, special=k == 2)
        inputs.append([enc, sc])

    def defined(outputs: list[np.ndarray], run: int) -> list[np.ndarray]:
        count = int(np.asarray(outputs[3]).reshape(-1)[0]) if not regular else max_det
        return [np.asarray(outputs[0])[:, :count], np.asarray(outputs[1])[:, :count],
                np.asarray(outputs[2])[:, :count], np.asarray(outputs[3])]

    params = dict(n=n, classes=classes, background=background, max_det=max_det, rows=rows, stride=stride,
                  threshold=threshold, iou=iou, scale=scale, per_class=options.get("detections_per_class"),
                  ties=levels)
    return Case("", model, params, inputs=inputs, defined=defined)


@generator("DETECTION_POSTPROCESS/fast")
def fast(rng):
    return _case(rng, False)


@generator("DETECTION_POSTPROCESS/regular")
def regular(rng):
    return _case(rng, True)
