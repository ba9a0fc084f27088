"""The host as a target: models run through the module's own engine
(tflm_host._engine), the same C code the firmware runs, without a board or
a MicroPython build. Outputs and arena figures are the device's."""

from __future__ import annotations

import numpy as np

from . import arena
from .batch import BatchResult
from .model import load_model


class HostTarget:
    """`--target host`: needs nothing but this package."""

    name = "host"
    runs_on_host = True


def run_jobs(jobs, planner: str | None):
    """run_batch for the host: each job through one engine interpreter."""
    results = {}
    for job in jobs:
        model = load_model(job.model)
        res = results[job.name] = BatchResult(job.name, [], None)
        try:
            it = arena.interpreter(model, planner, run=True)
        except (ValueError, MemoryError, NotImplementedError, RuntimeError) as e:
            res.error = f"{type(e).__name__} {e}"
            continue
        res.arena = (it.used, it.head, it.tail)
        res.planner = it.planner
        res.buffers = arena.layout_of(model, it).plan_tuples()
        for sample in job.samples:
            for i, x in enumerate(sample):
                it.set_input(i, np.ascontiguousarray(x, model.inputs[i].numpy_dtype).tobytes())
            it.invoke()
            res.runs.append([np.frombuffer(it.output(k), t.numpy_dtype).reshape(t.shape)
                             for k, t in enumerate(model.outputs)])
    return results
