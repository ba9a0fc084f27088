"""SPACE_TO_BATCH_ND with padding. TFLM fills the padding with a pad value
it never sets (a field of its kernel data, left as the arena held it: 0 in a
fresh arena, other bytes once the process has run other interpreters), so
its padded values are not reproducible and the generated cases
(tests/opgen/spatial.py) compare the other values only. Here the engine's
output must be TensorFlow's rearrangement with zero bytes as padding, for
every type and whatever the int8 zero point (what TFLM gives in a fresh
arena), and TFLM's must equal it everywhere but the padding."""

from __future__ import annotations

import numpy as np
import pytest

from opgen import act_quant, random_data, single_op
from opgen.spatial import space_to_batch
from engine_host import run_engine
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs


CASES = [
    ("FLOAT32", (1, 4, 4, 2), [2, 2], [[1, 1], [0, 2]], False),
    ("FLOAT32", (2, 5, 3), [3], [[1, 0]], True),
    ("INT8", (1, 3, 3, 3), [2, 3], [[1, 0], [0, 0]], False),
    ("INT8", (2, 2, 1, 1), [2, 2], [[1, 1], [2, 1]], True),
    ("INT8", (1, 4, 2), [2], [[0, 2]], False),
]


@pytest.mark.parametrize("dtype, shape, block, pads, computed", CASES)
def test_padding(dtype, shape, block, pads, computed, tmp_path):
    rng = np.random.default_rng(len(shape) * 7 + sum(block))
    q = act_quant(rng, dtype) if dtype == "INT8" else None
    if q is not None:
        q = (q[0], [40])  # a zero point TFLM's padding ignores
    x = random_data(rng, dtype, shape)
    expected = space_to_batch(x, block, pads)
    real = space_to_batch(np.ones(shape, np.int8), block, pads) != 0
    spatial = len(block)
    b = np.asarray(block, np.int32)
    p = np.asarray(pads, np.int32)
    model, _ = single_op("SPACE_TO_BATCH_ND", [(shape, dtype, None, q), ((spatial,), "INT32", None if computed else b),
                                              ((spatial, 2), "INT32", None if computed else p)],
                         [(expected.shape, dtype, q)])
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    samples = [[x, b, p] if computed else [x]]
    ours = run_engine(path, load_model(model), samples, tmp_path).runs[0][0]
    assert ours.tobytes() == expected.tobytes()
    assert not real.all(), "the case has padding"
    tflm = np.asarray(reference_outputs(path, samples)[0][0]).reshape(expected.shape)
    assert tflm[real].tobytes() == expected[real].tobytes()
