"""TFLM's own interpreter (PyPI tflite-micro) as the reference to compare with."""

from __future__ import annotations

from pathlib import Path

import tempfile

import numpy as np

from . import fbedit
from .model import load_model
from .planning.formats import METADATA_NAME


def _runtime():
    try:
        from tflite_micro.python.tflite_micro import runtime
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise RuntimeError("the TFLM reference needs the tflite-micro package: "
                           "pip install 'tflm-host[reference]'") from e
    return runtime


def reference_outputs(model_path: Path, samples: list[list[np.ndarray]],
                      offline_plan: bool = True) -> list[list[np.ndarray]]:
    """Outputs of TFLM's reference kernels, one interpreter for all samples
    (so stateful models see the same sequence as the device). With
    `offline_plan` False TFLM plans the arena itself, the model's offline
    plan left out: a plan for this runtime only (`tflm-host plan
    --backward`) is not one TFLM's kernels run right."""
    runtime = _runtime()
    data = Path(model_path).read_bytes()
    if not offline_plan:
        with tempfile.TemporaryDirectory(prefix="tflm-ref-") as tmp:
            plain = Path(tmp, Path(model_path).name)
            plain.write_bytes(fbedit.edit_model(data, remove=(METADATA_NAME,)))
            return reference_outputs(plain, samples)
    # An arena above 32 MiB is a mapping of its own (glibc's malloc maps
    # every request that large), so it starts zeroed: a TFLM kernel that
    # reads kernel data it never sets (SPACE_TO_BATCH_ND's pad value) sees
    # what it sees in a board's fresh arena, whatever this process ran
    # before. Pages never touched cost nothing.
    interp = runtime.Interpreter.from_file(str(model_path), arena_size=max(10 * len(data), 64 << 20))
    n_out = len(load_model(Path(model_path)).outputs)
    runs = []
    for sample in samples:
        for i, x in enumerate(sample):
            interp.set_input(np.ascontiguousarray(x), i)
        interp.invoke()
        runs.append([np.array(interp.get_output(k), copy=True) for k in range(n_out)])
    return runs
