"""Runs a model with the tflm module on a target and reads back the outputs."""

from __future__ import annotations

import ast
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import romfs
from .batch import BatchJob, BatchResult
from .device import DeviceError, Target
from .host_run import run_jobs
from .model import Model, Tensor, load_model


@dataclass
class RunResult:
    target: str
    runs: list[list[np.ndarray]]  # per input set: the outputs
    arena_used_bytes: int
    head_bytes: int
    tail_bytes: int

    @property
    def outputs(self) -> list[np.ndarray]:
        return self.runs[0]

    def to_json(self) -> dict[str, Any]:
        def encode(outs: list[np.ndarray]) -> list[dict[str, Any]]:
            return [{"dtype": str(o.dtype), "shape": list(o.shape), "data": o.ravel().tolist()} for o in outs]

        result: dict[str, Any] = {
            "target": self.target,
            "outputs": encode(self.outputs),
            "arena_used_bytes": self.arena_used_bytes,
            "head_bytes": self.head_bytes,
            "tail_bytes": self.tail_bytes,
        }
        if len(self.runs) > 1:
            result["runs"] = [encode(r) for r in self.runs]
        return result


def run_model(model_path: Path, target: Target, samples: list[list[np.ndarray]],
              planner: str | None = "greedy", timeout: float = 900) -> RunResult:
    """Runs the input sets through one interpreter on the target. The model
    and the inputs travel as files (in the board's ROMFS flash on QEMU)."""
    job = BatchJob("model", Path(model_path).read_bytes(), samples)
    res = run_batch(target, [job], planner, timeout)["model"]
    if res.error:
        raise DeviceError(res.error)
    used, head, tail = res.arena
    return RunResult(target.name, res.runs, used, head, tail)


def _random_tensor(t: Tensor, rng: np.random.Generator) -> np.ndarray:
    dtype = t.numpy_dtype
    if dtype.kind == "f":
        return rng.normal(0.0, 2.0, t.shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, t.shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, t.shape, dtype=dtype, endpoint=True)


def _npz_values(a: np.ndarray, key: str, dtype: np.dtype) -> np.ndarray:
    """An .npz array as the input's raw values: an integer input takes only
    finite values inside its type's range (numpy's cast would wrap them, or
    warn about NaN, and run something else)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu" and a.dtype.kind in "fciub" and a.size:
        info = np.iinfo(dtype)
        real = a.real if a.dtype.kind == "c" else a
        bad = ~np.isfinite(real) if real.dtype.kind in "fc" else np.zeros(real.shape, bool)
        with np.errstate(invalid="ignore"):
            bad |= (real < info.min) | (real > info.max) | (real != np.round(real) if real.dtype.kind == "f" else False)
        if bad.any():
            i = int(np.flatnonzero(bad.ravel())[0])
            raise ValueError(f"{key} holds {real.ravel()[i].item()!r} at index {i}: input values are {dtype.name} "
                             f"({info.min} to {info.max}), quantized")
    with np.errstate(invalid="ignore", over="ignore"):
        return a.astype(dtype)


def make_inputs(model: Model, spec: str, seed: int = 0, count: int = 1) -> list[list[np.ndarray]]:
    """Input sets: "zeros", "random" (seeded), or an .npz file with arrays
    input_0, input_1, ... (each the input's shape, or a stack of them)."""
    tensors = model.inputs
    if spec == "zeros":
        return [[np.zeros(t.shape, t.numpy_dtype) for t in tensors] for _ in range(count)]
    if spec == "random":
        rng = np.random.default_rng(seed)
        return [[_random_tensor(t, rng) for t in tensors] for _ in range(count)]
    path = Path(spec)
    if path.suffix != ".npz" or not path.is_file():
        raise ValueError(f"--inputs must be zeros, random or an existing .npz file, not {spec!r}")
    not_npz = f"{path} is not an .npz file of arrays input_0, input_1, ... (numpy.savez writes one)"
    try:
        npz = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile):
        raise ValueError(not_npz) from None
    if not isinstance(npz, np.lib.npyio.NpzFile):  # a .npy file's one array
        raise ValueError(not_npz)
    with npz:
        arrays = []
        for i, t in enumerate(tensors):
            key = f"input_{i}"
            if key not in npz:
                raise ValueError(f"{path} has no array {key!r} (it has {', '.join(npz.files)})")
            try:
                stored = npz[key]
            except ValueError:  # an array of Python objects (pickled), which allow_pickle=False refuses
                raise ValueError(f"{path}: {key} holds Python objects; an input takes numbers") from None
            a = _npz_values(stored, key, t.numpy_dtype)
            if tuple(a.shape) == tuple(t.shape):
                a = a[np.newaxis]
            elif tuple(a.shape[1:]) != tuple(t.shape):
                raise ValueError(f"{key} has shape {a.shape}; input {i} needs {t.shape} or (N, *{t.shape})")
            arrays.append(a)
    n = arrays[0].shape[0] if arrays else count
    if any(a.shape[0] != n for a in arrays):
        raise ValueError("all inputs in the .npz file need the same number of samples")
    return [[a[k] for a in arrays] for k in range(n)]


# -- many models in one device session ----------------------------------------

# Device code: _open(path) gives a file's bytes in place (a memoryview of a
# ROMFS file) where the target can, else read into RAM; load(name) a file of
# the run's folder (ROOT). The device suite's code starts with it too.
DEVICE_OPEN = """\
def _open(path):
    f = open(path, 'rb')
    try:
        return memoryview(f)
    except TypeError:
        return f.read()
def load(name):
    return _open(ROOT + '/' + name)
"""

BATCH_SETUP = "import tflm, binascii, gc\n" + DEVICE_OPEN + """\
def _job(name, sizes, count, planner):
    gc.collect()
    try:
        m = tflm.Model(load(name + '.tflite'))
        it = tflm.Interpreter(m, planner=planner)
    except Exception as e:
        print('@ERR', name, type(e).__name__, e)
        return
    print('@ARENA', name, it.arena_used_bytes(), it.head_bytes(), it.tail_bytes(), it.planner)
    print('@BUFS', name, repr(it.buffers()).replace(' ', ''))
    data = load(name + '.in') if sum(sizes) else b''
    off = 0
    for r in range(count):
        for i, n in enumerate(sizes):
            it.set_input(i, data[off:off + n])
            off += n
        it.invoke()
        for k in range(len(m.outputs)):
            print('@OUT', name, k, end=' ')
            out = it.output(k)
            for i in range(0, len(out), 64):
                print(binascii.hexlify(out[i:i + 64]).decode(), end='')
            print()
"""


def _job_files(job: BatchJob) -> dict[str, bytes]:
    files = {job.name + ".tflite": job.model}
    raw = b"".join(np.ascontiguousarray(x).tobytes() for sample in job.samples for x in sample)
    if raw:
        files[job.name + ".in"] = raw
    return files


def _batches(target: Target, jobs: list[BatchJob]) -> list[list[BatchJob]]:
    """Jobs grouped so that each group's files fit the target's ROMFS region."""
    limit = getattr(getattr(target, "board", None), "romfs_size", None)
    if limit is None:
        return [jobs] if jobs else []
    groups: list[list[BatchJob]] = []
    size = 0
    for job in jobs:
        # A file costs its data, alignment padding and its record headers.
        cost = sum(len(d) + 64 for d in _job_files(job).values())
        if cost > limit:
            raise ValueError(f"{job.name}: {cost} bytes do not fit the {target.name} ROMFS region ({limit} bytes)")
        if not groups or size + cost > limit - 256:
            groups.append([])
            size = 0
        groups[-1].append(job)
        size += cost
    for group in groups:
        files = {k: v for job in group for k, v in _job_files(job).items()}
        if len(romfs.build_image(files)) > limit:  # the estimate above is generous; check it
            raise ValueError(f"ROMFS image for {[j.name for j in group]} exceeds {limit} bytes")
    return groups


def run_batch(target: Target, jobs: list[BatchJob], planner: str | None = "greedy",
              timeout: float = 1800) -> dict[str, BatchResult]:
    """Runs many models in as few device sessions as the target's ROMFS
    allows (one on the unix port); inputs travel as files, not REPL text."""
    if getattr(target, "runs_on_host", False):
        return run_jobs(jobs, planner)
    results: dict[str, BatchResult] = {}
    for group in _batches(target, jobs):
        files: dict[str, bytes] = {}
        chunks = [BATCH_SETUP]
        for job in group:
            files.update(_job_files(job))
            sizes = [int(np.asarray(x).nbytes) for x in job.samples[0]] if job.samples else []
            chunks.append(f"_job({job.name!r}, {sizes!r}, {len(job.samples)}, {planner!r})")
        try:
            text = target.run(chunks, files, timeout=timeout)
        except DeviceError as e:
            if "no module named 'tflm'" in str(e):  # a firmware without the module
                raise DeviceError(f"{target.name}: the firmware has no tflm module (stock MicroPython? `tflm-host "
                                  "install` puts tflm.mpy on a board)") from None
            raise
        models = {job.name: load_model(job.model) for job in group}
        for job in group:
            results[job.name] = BatchResult(job.name, [], None)
        for line in text.splitlines():
            if line.startswith("@ERR "):
                _, name, error = line.split(" ", 2)
                results[name].error = error
            elif line.startswith("@ARENA "):
                _, name, used, head, tail, used_planner = line.split()
                results[name].arena = (int(used), int(head), int(tail))
                results[name].planner = used_planner
            elif line.startswith("@BUFS "):
                _, name, text = line.split(" ", 2)
                results[name].buffers = [tuple(b) for b in ast.literal_eval(text)]
            elif line.startswith("@OUT "):
                parts = line.split()
                name, k = parts[1], int(parts[2])
                data = bytes.fromhex(parts[3]) if len(parts) > 3 else b""
                res = results[name]
                if k == 0:
                    res.runs.append([])
                t = models[name].outputs[k]
                res.runs[-1].append(np.frombuffer(data, t.numpy_dtype).reshape(t.shape))
        for job in group:
            res = results[job.name]
            if res.error is None and len(res.runs) != len(job.samples):
                said = text[-2000:] if text.strip() else f"{target.name} printed nothing (no MicroPython with tflm?)"
                raise RuntimeError(f"{job.name}: {len(res.runs)} of {len(job.samples)} runs came back:\n{said}")
    return results
