"""Scratch buffers (planned in the head, alive for one operator) and
temporary memory in prepare(), through the engine's test kernel (built only
into tests/engine's host binaries): outputs stay right, scratch buffers are
planned as the linear planner lays them (their sizes, rounded to 16, after
the tensors'), and the needed size is exact: an arena of it works, 16 bytes
less fails naming it."""

from __future__ import annotations

import random
import struct
import subprocess

import numpy as np
import pytest

from engine_host import tflm_run as engine_binary
from tflm_dev.builder import ModelBuilder

TEST_OP = "CUSTOM:TflmTest"


def align16(n: int) -> int:
    return (n + 15) // 16 * 16


@pytest.fixture(scope="module")
def tflm_run():
    return engine_binary()


def chain_model(rng: random.Random, n_ops: int, size: int, max_scratch: int = 12) -> tuple[bytes, list, list]:
    """A chain of test ops; some also take an earlier tensor (a skip)."""
    b = ModelBuilder()
    sg = b.subgraph()
    tensors = [sg.tensor((size,), "INT8")]
    plan = []
    scratches = []
    for k in range(n_ops):
        out = sg.tensor((size,), "INT8")
        skip = rng.choice(tensors[:-1]) if len(tensors) > 1 and rng.random() < 0.5 else None
        scratch = [rng.randint(1, 700) for _ in range(rng.randint(0, max_scratch))]
        scratches += scratch
        temp = rng.choice([0, 0, rng.randint(1, 3000)])
        words = [len(scratch)] + scratch + [temp]
        inputs = [tensors[-1]] + ([skip] if skip is not None else [])
        sg.op(TEST_OP, inputs, [out], custom_options=struct.pack(f"<{len(words)}I", *words))
        plan.append((inputs, out))
        tensors.append(out)
    sg.inputs, sg.outputs = [tensors[0]], [tensors[-1]]
    return b.build(), plan, scratches


def figures(out: str) -> tuple[int, int, int]:
    head, tail, needed = (int(x) for x in out.split()[1::2])
    return head, tail, needed


def run(tflm_run, model_path, input_path, arena_bytes=1 << 20, planner="greedy"):
    proc = subprocess.run([str(tflm_run), str(model_path), "-a", str(arena_bytes), "-p", planner,
                           "-i", str(input_path)], capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr
    # The plan lines ("buf ...") are checked elsewhere.
    return "".join(line for line in proc.stdout.splitlines(keepends=True) if not line.startswith("buf "))


@pytest.mark.parametrize("seed", range(25))
def test_scratch_and_temp_chains(seed, tflm_run, tmp_path):
    rng = random.Random(seed)
    size = rng.choice([16, 48, 100, 1000])
    n_ops = rng.randint(1, 6)
    data, plan, scratches = chain_model(rng, n_ops, size)
    model_path = tmp_path / "m.tflite"
    model_path.write_bytes(data)
    x = np.frombuffer(rng.randbytes(size), np.uint8)
    input_path = tmp_path / "in.bin"
    input_path.write_bytes(x.tobytes())
    values = {plan[0][0][0]: x}
    for inputs, out in plan:
        values[out] = values[inputs[0]] ^ (values[inputs[1]] if len(inputs) > 1 else 0)
    expected = values[plan[-1][1]].tobytes().hex()
    for planner in ("greedy", "linear"):
        out = run(tflm_run, model_path, input_path, planner=planner).splitlines()
        head, tail, needed = figures(out[0])
        assert out[1] == f"out 0 {expected}"
        if planner == "linear":
            # Every tensor and every scratch buffer in a place of its own.
            assert head == (n_ops + 1) * align16(size) + sum(align16(b) for b in scratches)
        assert needed >= head + tail
        # Exact: the needed bytes work, 16 fewer fail and name the need.
        assert run(tflm_run, model_path, input_path, needed, planner).splitlines()[1] == f"out 0 {expected}"
        short = run(tflm_run, model_path, input_path, needed - 16, planner)
        assert short.startswith(f"error 2 needed {needed} ") or \
            short.startswith("error 2 needed 0 "), short  # 0: the tail itself did not fit


def test_temp_can_set_the_arena_size(tflm_run, tmp_path):
    """A kernel whose temporary memory exceeds the final arena: the needed
    size (arena_size) is above head + tail, and exact."""
    b = ModelBuilder()
    sg = b.subgraph()
    x, y = sg.tensor((16,), "INT8"), sg.tensor((16,), "INT8")
    sg.op(TEST_OP, [x], [y], custom_options=struct.pack("<2I", 0, 5000))
    sg.inputs, sg.outputs = [x], [y]
    path = tmp_path / "m.tflite"
    path.write_bytes(b.build())
    (tmp_path / "in.bin").write_bytes(bytes(16))
    out = run(tflm_run, path, tmp_path / "in.bin").splitlines()
    head, tail, needed = figures(out[0])
    assert needed > head + tail and needed >= 5000
    assert run(tflm_run, path, tmp_path / "in.bin", needed).splitlines()[1] == "out 0 " + "00" * 16
    assert run(tflm_run, path, tmp_path / "in.bin", needed - 16).startswith("error 2 needed 0 ")


def test_too_many_scratch_buffers(tflm_run, tmp_path):
    b = ModelBuilder()
    sg = b.subgraph()
    x, y = sg.tensor((16,), "INT8"), sg.tensor((16,), "INT8")
    words = [13] + [32] * 13 + [0]
    sg.op(TEST_OP, [x], [y], custom_options=struct.pack(f"<{len(words)}I", *words))
    sg.inputs, sg.outputs = [x], [y]
    path = tmp_path / "m.tflite"
    path.write_bytes(b.build())
    (tmp_path / "in.bin").write_bytes(bytes(16))
    out = run(tflm_run, path, tmp_path / "in.bin")
    assert out.startswith("error 3 ") and "operator 0 (CUSTOM): more than 12 scratch buffers requested" in out


@pytest.mark.parametrize("what", ["tensor", "scratch buffer"])
def test_buffers_a_record_cannot_hold(what, tflm_run, tmp_path):
    """A tensor record holds 24-bit sizes: a tensor or a scratch buffer of
    16 MiB or more is a ValueError when the model is loaded, never a wrong
    size (the record's layout is pinned in tests/engine/test_engine.c)."""
    big = 1 << 24
    b = ModelBuilder()
    sg = b.subgraph()
    shape = (big,) if what == "tensor" else (16,)
    x, y = sg.tensor(shape, "INT8"), sg.tensor(shape, "INT8")
    words = [0, 0] if what == "tensor" else [1, big, 0]
    sg.op(TEST_OP, [x], [y], custom_options=struct.pack(f"<{len(words)}I", *words))
    sg.inputs, sg.outputs = [x], [y]
    path = tmp_path / "m.tflite"
    path.write_bytes(b.build())
    (tmp_path / "in.bin").write_bytes(bytes(16))
    out = run(tflm_run, path, tmp_path / "in.bin")
    assert out.startswith("error 1 ") and f"{what} 0: {big} bytes (type 9), over 16 MiB" in out, out
