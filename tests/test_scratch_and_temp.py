"""Scratch buffers (planned in the head, alive for one operator) and
temporary memory in prepare(), through the engine's test kernel (built only
into tests/engine's host binaries): outputs stay right, the host predicts
head, tail and needed bytes exactly, and the needed size is exact."""

from __future__ import annotations

import random
import struct
import subprocess

import numpy as np
import pytest

from conftest import ROOT
from engine_host import tflm_run as engine_binary
from tflm_host import arena
from tflm_host.builder import ModelBuilder
from tflm_host.specs import KERNELS, KernelSpec
from tflm_host.model import load_model

TEST_OP = "CUSTOM:TflmTest"
TEST_DATA_BYTES = 60  # test_data_t in tests/engine/test_kernel.c


def _words(op):
    n = struct.unpack_from("<I", op.custom_options, 0)[0]
    return list(struct.unpack_from(f"<{n + 2}I", op.custom_options, 0))


TEST_SPEC = KernelSpec(
    data_bytes=lambda m, sg, op: TEST_DATA_BYTES,
    scratch=lambda m, sg, op: _words(op)[1:-1],
    temp=lambda m, sg, op: _words(op)[-1],
)


@pytest.fixture(scope="module")
def tflm_run():
    return engine_binary()


@pytest.fixture
def test_kernel(monkeypatch):
    monkeypatch.setitem(KERNELS, TEST_OP, TEST_SPEC)


def chain_model(rng: random.Random, n_ops: int, size: int, max_scratch: int = 12) -> tuple[bytes, list]:
    """A chain of test ops; some also take an earlier tensor (a skip)."""
    b = ModelBuilder()
    sg = b.subgraph()
    tensors = [sg.tensor((size,), "INT8")]
    plan = []
    for k in range(n_ops):
        out = sg.tensor((size,), "INT8")
        skip = rng.choice(tensors[:-1]) if len(tensors) > 1 and rng.random() < 0.5 else None
        scratch = [rng.randint(1, 700) for _ in range(rng.randint(0, max_scratch))]
        temp = rng.choice([0, 0, rng.randint(1, 3000)])
        words = [len(scratch)] + scratch + [temp]
        inputs = [tensors[-1]] + ([skip] if skip is not None else [])
        sg.op(TEST_OP, inputs, [out], custom_options=struct.pack(f"<{len(words)}I", *words))
        plan.append((inputs, out))
        tensors.append(out)
    sg.inputs, sg.outputs = [tensors[0]], [tensors[-1]]
    return b.build(), plan


def run(tflm_run, model_path, input_path, arena_bytes=1 << 20, planner="greedy"):
    proc = subprocess.run([str(tflm_run), str(model_path), "-a", str(arena_bytes), "-p", planner,
                           "-i", str(input_path)], capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr
    # The plan lines ("buf ...") are checked elsewhere.
    return "".join(line for line in proc.stdout.splitlines(keepends=True) if not line.startswith("buf "))


@pytest.mark.parametrize("seed", range(25))
def test_scratch_and_temp_chains(seed, tflm_run, test_kernel, tmp_path):
    rng = random.Random(seed)
    size = rng.choice([16, 48, 100, 1000])
    data, plan = chain_model(rng, rng.randint(1, 6), size)
    model_path = tmp_path / "m.tflite"
    model_path.write_bytes(data)
    x = np.frombuffer(rng.randbytes(size), np.uint8)
    input_path = tmp_path / "in.bin"
    input_path.write_bytes(x.tobytes())
    values = {plan[0][0][0]: x}
    for inputs, out in plan:
        values[out] = values[inputs[0]] ^ (values[inputs[1]] if len(inputs) > 1 else 0)
    expected = values[plan[-1][1]].tobytes().hex()
    model = load_model(model_path)
    for planner in ("greedy", "linear"):
        layout = arena.plan_layout(model, planner)
        out = run(tflm_run, model_path, input_path, planner=planner).splitlines()
        assert out[0] == f"head {layout.head} tail {layout.tail} needed {layout.needed}"
        assert out[1] == f"out 0 {expected}"
        # Exact: the needed bytes work, 16 fewer fail and name the need.
        assert run(tflm_run, model_path, input_path, layout.needed, planner).splitlines()[1] == f"out 0 {expected}"
        short = run(tflm_run, model_path, input_path, layout.needed - 16, planner)
        assert short.startswith(f"error 2 needed {layout.needed} ") or \
            short.startswith("error 2 needed 0 "), short  # 0: the tail itself did not fit


def test_temp_can_set_the_arena_size(tflm_run, test_kernel, tmp_path):
    """A kernel whose temporary memory exceeds the final arena: arena_size
    (needed) is above head + tail, and exact."""
    b = ModelBuilder()
    sg = b.subgraph()
    x, y = sg.tensor((16,), "INT8"), sg.tensor((16,), "INT8")
    sg.op(TEST_OP, [x], [y], custom_options=struct.pack("<2I", 0, 5000))
    sg.inputs, sg.outputs = [x], [y]
    path = tmp_path / "m.tflite"
    path.write_bytes(b.build())
    (tmp_path / "in.bin").write_bytes(bytes(16))
    layout = arena.plan_layout(load_model(path))
    assert layout.needed > layout.used
    out = run(tflm_run, path, tmp_path / "in.bin").splitlines()
    assert out[0] == f"head {layout.head} tail {layout.tail} needed {layout.needed}"
    assert run(tflm_run, path, tmp_path / "in.bin", layout.needed).splitlines()[1] == "out 0 " + "00" * 16
    assert run(tflm_run, path, tmp_path / "in.bin", layout.needed - 16).startswith("error 2 needed 0 ")


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
