"""TFLM's own interpreter (PyPI tflite-micro) as the reference to compare with."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .model import load_model


def _runtime():
    try:
        from tflite_micro.python.tflite_micro import runtime
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise RuntimeError("the TFLM reference needs the tflite-micro package: "
                           "pip install 'tflm-host[reference]'") from e
    return runtime


def reference_outputs(model_path: Path, samples: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    """Outputs of TFLM's reference kernels, one interpreter for all samples
    (so stateful models see the same sequence as the device)."""
    runtime = _runtime()
    size = Path(model_path).stat().st_size
    interp = runtime.Interpreter.from_file(str(model_path), arena_size=max(10 * size, 1 << 20))
    n_out = len(load_model(Path(model_path)).outputs)
    runs = []
    for sample in samples:
        for i, x in enumerate(sample):
            interp.set_input(np.ascontiguousarray(x), i)
        interp.invoke()
        runs.append([np.array(interp.get_output(k), copy=True) for k in range(n_out)])
    return runs
