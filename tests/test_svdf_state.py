"""What an SVDF's activation state must keep between invokes (the figure
docs/arena.md's "Why not lower" note uses): the oldest step of each filter is
shifted out by the next invoke before the state is read, so overwriting it
after every invoke leaves every output TFLM's; overwriting the next step
changes them (the check can fail). Generated SVDF models (their output is
the SVDF's) and the two keyword_scrambled models (whose softmax outputs
hardly move, so they only show that nothing breaks)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import opgen
from conftest import model_path
from engine_host import tflm_run
from tflm_host.model import load_model
from tflm_host.runner import make_inputs
from tflm_host.reference import reference_outputs

CASES = opgen.cases(4, only="SVDF/")


def _outputs(path, samples, tmp_path, step: int) -> list[bytes]:
    model = load_model(path.read_bytes())
    args = [str(tflm_run()), str(path), "-r", str(len(samples)), "-s", str(step)]
    for k in range(len(model.inputs)):
        f = tmp_path / f"in{k}.bin"
        f.write_bytes(b"".join(np.ascontiguousarray(s[k]).tobytes() for s in samples))
        args += ["-i", str(f)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr[-2000:]
    return [bytes.fromhex(line.split()[2]) for line in proc.stdout.splitlines() if line.startswith("out 0 ")]


def _reference(path, model, samples) -> list[bytes]:
    dtype = model.outputs[0].numpy_dtype
    return [np.asarray(r[0]).astype(dtype).tobytes() for r in reference_outputs(path, samples)]


def _memory(model) -> int:
    sg = model.main
    return min(sg.tensors[op.inputs[2]].shape[-1] for op in sg.operators if op.opcode == "SVDF")


def test_oldest_svdf_step_is_dead_on_generated_models(tmp_path):
    checked = 0
    for i, case in enumerate(CASES):
        path = tmp_path / f"svdf{i}.tflite"
        path.write_bytes(case.model)
        model = load_model(case.model)
        samples = make_inputs(model, "random", seed=i, count=5)
        ref = _reference(path, model, samples)
        assert _outputs(path, samples, tmp_path, 0) == ref, case.describe()
        if _memory(model) >= 3:
            assert _outputs(path, samples, tmp_path, 1) != ref, case.describe()
            checked += 1
    assert checked >= 3


@pytest.mark.parametrize("name", ["keyword_scrambled.tflite", "keyword_scrambled_8bit.tflite"])
def test_oldest_svdf_step_is_dead_on_keyword_scrambled(name, tmp_path):
    path = model_path(name)
    model = load_model(path.read_bytes())
    samples = make_inputs(model, "random", seed=5, count=6)
    assert _outputs(path, samples, tmp_path, 0) == _reference(path, model, samples)


@pytest.mark.parametrize("arch", ["portable", "dsp", "v6m"])
def test_integer_svdf_with_each_cores_loops(arch, tmp_path):
    """The integer SVDF's time sums go through the int8 row dot product, whose
    loops differ per core family (test_speed_paths' builds, ASan/UBSan):
    bit-exact with TFLM over several invokes."""
    from test_speed_paths import arch_binary

    binary = arch_binary(arch)
    for i, case in enumerate(c for c in opgen.cases(6, only="SVDF/int8")):
        path = tmp_path / f"svdf{i}.tflite"
        path.write_bytes(case.model)
        model = load_model(case.model)
        samples = make_inputs(model, "random", seed=100 + i, count=4)
        args = [str(binary), str(path), "-r", str(len(samples))]
        f = tmp_path / "in0.bin"
        f.write_bytes(b"".join(np.ascontiguousarray(s[0]).tobytes() for s in samples))
        proc = subprocess.run(args + ["-i", str(f)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr[-2000:]
        ours = [bytes.fromhex(line.split()[2]) for line in proc.stdout.splitlines() if line.startswith("out 0 ")]
        assert ours == _reference(path, model, samples), (arch, case.describe())
