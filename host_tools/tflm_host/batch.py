"""A batch of model runs, as runner.run_batch takes and gives them on any
target (a board's REPL, or the host's engine in host_run)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class BatchJob:
    """One model and its input sets, run through one interpreter in order."""

    name: str  # a short identifier: letters, digits and underscores
    model: bytes
    samples: list[list[np.ndarray]]


@dataclass
class BatchResult:
    name: str
    runs: list[list[np.ndarray]]
    arena: tuple[int, int, int] | None  # used, head, tail
    error: str | None = None  # "ExceptionType message" when the model did not load
    planner: str = ""
    buffers: list[tuple] | None = None  # the head's plan (interp.buffers())
