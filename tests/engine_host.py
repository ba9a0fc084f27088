"""The engine built for the host (tests/engine, with ASan/UBSan), driven
through its tflm_run binary: fast, and any out-of-bounds access fails."""

from __future__ import annotations

import fcntl
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from conftest import ROOT
from tflm_host.device import build_dir
from tflm_host.model import Model

BUILD = build_dir() / "engine"
_built = False
# Without LeakSanitizer's scan at exit, half of a short run's time: the
# engine allocates nothing (its callers' buffers only), and make
# test-engine's unit tests and fuzzers run with it.
RUN_ENV = {**os.environ, "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "detect_leaks=0")}


class EngineError(RuntimeError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class EngineRun:
    head: int
    tail: int
    needed: int
    runs: list[list[np.ndarray]]
    # The head's plan: (kind, index, offset, bytes, first, last) per buffer.
    buffers: list[tuple] = field(default_factory=list)


def make_engine(build: Path, *make_args: str, target: str = "binaries") -> None:
    """Builds the engine's host programs into `build`, one process at a time
    (pytest-xdist's workers would otherwise compile the same objects at once)."""
    build.mkdir(parents=True, exist_ok=True)
    with open(build / ".make.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(["make", "-s", "-C", str(ROOT / "tests" / "engine"), f"BUILD={build}", *make_args, target],
                       check=True)


def tflm_run() -> Path:
    global _built
    if not _built:
        make_engine(BUILD)
        _built = True
    return BUILD / "tflm_run"


def run_engine(model_path: Path, model: Model, samples: list[list[np.ndarray]], tmp: Path,
               arena: int = 1 << 22, planner: str = "greedy", plan: Path | None = None,
               preallocated: tuple[int, ...] = ()) -> EngineRun:
    """Runs every input set through one interpreter, in order. planner
    "default" lets the engine choose; `plan` is a plan file (the shim);
    `preallocated` tensors get buffers of their own outside the arena."""
    args = [str(tflm_run()), str(model_path), "-a", str(arena), "-p", planner, "-r", str(len(samples))]
    if plan is not None:
        args += ["-P", str(plan)]
    for t in preallocated:
        args += ["-e", str(t)]
    for k in range(len(model.inputs)):
        path = tmp / f"input_{k}.bin"
        path.write_bytes(b"".join(np.ascontiguousarray(s[k]).tobytes() for s in samples))
        args += ["-i", str(path)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600, env=RUN_ENV)
    if proc.returncode not in (0, 1) or proc.stderr.strip():
        raise AssertionError(f"tflm_run crashed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    lines = proc.stdout.splitlines()
    if lines and lines[0].startswith("error"):
        status = int(lines[0].split()[1])
        raise EngineError(status, lines[0])
    _, head, _, tail, _, needed = lines[0].split()
    runs: list[list[np.ndarray]] = []
    buffers = []
    outputs = model.outputs
    for line in lines[1:]:
        if line.startswith("error"):
            raise EngineError(int(line.split()[1]), line)
        if line.startswith("buf "):
            _, kind, *nums = line.split()
            buffers.append((kind, *(int(x) for x in nums)))
            continue
        _, k, *rest = line.split()
        k = int(k)
        if k == 0:
            runs.append([])
        t = outputs[k]
        data = bytes.fromhex(rest[0]) if rest else b""
        runs[-1].append(np.frombuffer(data, t.numpy_dtype).reshape(t.shape))
    return EngineRun(int(head), int(tail), int(needed), runs, buffers)
