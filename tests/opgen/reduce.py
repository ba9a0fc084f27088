"""MEAN and SUM: float32, int8, int16; 1 to 5 dims, one to all axes
(negative and repeated ones too), keep_dims on and off, output quantization
equal to the input's or not, and TFLM's 4D height-and-width mean."""

from __future__ import annotations

import numpy as np

from . import Case, act_quant, generator, single_op


def _reduce(rng: np.random.Generator, op: str, dtype: str, special: bool = False) -> Case:
    if special:
        # TFLM's 4D mean over height and width (its own float path).
        shape = (int(rng.integers(1, 3)), int(rng.integers(1, 6)), int(rng.integers(1, 6)), int(rng.integers(1, 9)))
        axes = [1, 2] if rng.random() < 0.5 else [2, 1]
        keep = True
    else:
        while True:
            rank = int(rng.integers(1, 6))
            shape = tuple(int(d) for d in rng.integers(1, 6, rank))
            if int(np.prod(shape)) <= 600:
                break
        n_axes = int(rng.integers(1, rank + 1))
        axes = [int(a) for a in rng.choice(rank, n_axes, replace=False)]
        # Negative spellings and repeats resolve to the same axes.
        axes = [a - rank if rng.random() < 0.3 else a for a in axes]
        if rng.random() < 0.15:
            axes.append(axes[0])
        keep = bool(rng.integers(0, 2))
    rank = len(shape)
    resolved = {a % rank for a in axes}
    out_shape = tuple(1 if i in resolved else d for i, d in enumerate(shape)) if keep else \
        tuple(d for i, d in enumerate(shape) if i not in resolved)
    qin = qout = None
    same = False
    if dtype != "FLOAT32":
        qin = act_quant(rng, dtype, scale_range=(0.01, 0.2))
        same = op == "MEAN" and rng.random() < 0.35
        qout = qin if same else act_quant(rng, dtype, scale_range=(0.01, 0.2))
    axis_data = np.array(axes, dtype=np.int32)
    model, _ = single_op(op, [(shape, dtype, None, qin), ((len(axes),), "INT32", axis_data, None)],
                         [(out_shape, dtype, qout)], KeepDims=keep)
    return Case("", model, dict(dtype=dtype, shape=shape, axes=axes, keep_dims=keep, same_quant=same,
                                quant=(qin, qout)))


for _op in ("MEAN", "SUM"):
    for _dt in ("FLOAT32", "INT8", "INT16"):
        def _gen(rng, op=_op, dt=_dt):
            return _reduce(rng, op, dt)
        generator(f"{_op}/{_dt.lower()}")(_gen)
    for _dt in ("FLOAT32", "INT8"):
        def _gen4(rng, op=_op, dt=_dt):
            return _reduce(rng, op, dt, special=True)
        generator(f"{_op}/{_dt.lower()}_4d_hw")(_gen4)
