"""SVDF's activation state, kept by the kernel as a ring (kernels/svdf.c):
TFLM's variable holds `memory` steps per filter and drops the oldest each
invoke before reading it, so ours keeps memory - 1 steps per filter and a
position, and the model's variable tensor gets no bytes of its own. The tail
holds exactly what the model's shapes say that needs; outputs stay TFLM's
over many invokes (the ring wraps several times) on the host engine
(ASan/UBSan), the unix port and a QEMU board; tensor() of the state refuses
to give a view of a shape its bytes do not have."""

from __future__ import annotations

import numpy as np
import pytest

import opgen
from conftest import DEVICE_PRELUDE, get_target, model_path, run_on
from engine_host import run_engine
from tflm_host import _engine, arena
from tflm_dev.builder import ModelBuilder
from tflm_host.model import load_model
from tflm_host.prepare import prepare_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import BatchJob, make_inputs, run_batch

CASES = opgen.cases(8, only="SVDF/")
KWS = ["keyword_scrambled.tflite", "keyword_scrambled_8bit.tflite"]
TYPE_BYTES = {"FLOAT32": 4, "INT16": 2, "INT8": 1}


def _svdfs(model) -> list[tuple[int, int, int, int, int]]:
    """Per SVDF of the main subgraph: (state tensor, batches, filters, memory, state element bytes)."""
    sg = model.main
    out = []
    for op in sg.operators:
        if op.opcode == "SVDF":
            state, wt = sg.tensors[op.inputs[4]], sg.tensors[op.inputs[2]]
            out.append((op.inputs[4], state.shape[0], wt.shape[0], wt.shape[1], TYPE_BYTES[state.dtype]))
    return out


def _compact_bytes(model) -> list[int]:
    """What each SVDF's state needs from the model's shapes: memory - 1 steps
    per filter per batch, and a 4-byte ring position."""
    return [4 + batches * filters * (memory - 1) * elem for _, batches, filters, memory, elem in _svdfs(model)]


def _invokes(model) -> int:
    # Enough invokes for the smallest ring to wrap several times.
    return 3 * max(memory for *_, memory, _ in _svdfs(model)) + 3


def _samples(model, seed: int, count: int) -> list[list[np.ndarray]]:
    return make_inputs(model, "random", seed=seed, count=count)


def _same(ours: list[list[np.ndarray]], ref) -> bool:
    return len(ours) == len(ref) and all(
        a.tobytes() == np.asarray(b).astype(a.dtype).reshape(a.shape).tobytes()
        for a_run, b_run in zip(ours, ref) for a, b in zip(a_run, b_run))


def test_generated_cases_cover_the_ring_edges():
    kinds = {c.params["kind"] for c in CASES}
    memories = {c.params["memory"] for c in CASES}
    assert kinds == {"FLOAT32", "INT16", "INT8"}
    assert {1, 2} <= memories and max(memories) >= 8
    assert any(c.params["batches"] > 1 for c in CASES) and any(c.params["rank"] > 1 for c in CASES)
    assert any(c.params["kind"] == "INT8" and c.params["state_zp"] != 0 and c.params["memory"] > 1 for c in CASES)


def test_state_bytes_are_what_the_shapes_need():
    """The tail's model state is the compact ring of every SVDF, computed here
    from the model's tensor shapes, and the state tensor's record says so."""
    models = [load_model(c.model) for c in CASES] + [load_model(model_path(n)) for n in KWS]
    for model in models:
        need = _compact_bytes(model)
        layout = arena.plan_layout(model)
        state = layout.audit["variable tensors"]
        assert (state.requested, state.count) == (sum(need), len(need))
        assert state.used == sum((n + 3) // 4 * 4 for n in need)
        records = layout.picture.records()
        for (tensor, *_), n in zip(_svdfs(model), need):
            assert records[tensor][0] == "tail" and records[tensor][2] == n


def test_keyword_scrambled_state_is_smaller_than_declared():
    """keyword_scrambled's 7 SVDFs: each filter's oldest step (704 B of int16) is no longer kept."""
    model = load_model(model_path("keyword_scrambled.tflite"))
    declared = sum(model.main.tensors[t].nbytes for t, *_ in _svdfs(model))
    dropped = sum(batches * filters * elem for _, batches, filters, _, elem in _svdfs(model))
    assert (declared, dropped) == (10240, 704)
    assert arena.plan_layout(model).audit["variable tensors"].requested == declared - dropped + 4 * 7


def test_generated_svdf_bit_exact_over_many_invokes_on_the_host_engine(tmp_path):
    for i, case in enumerate(CASES):
        path = tmp_path / f"svdf{i}.tflite"
        path.write_bytes(case.model)
        model = load_model(case.model)
        samples = _samples(model, i, _invokes(model))
        ours = run_engine(path, model, samples, tmp_path)
        assert _same(ours.runs, reference_outputs(path, samples)), case.describe()


@pytest.mark.parametrize("target", ["unix", "NETDUINOPLUS2"])
def test_generated_svdf_bit_exact_over_many_invokes_on_targets(target, tmp_path):
    jobs, refs = [], {}
    for i, case in enumerate(CASES):
        path = tmp_path / f"svdf{i}.tflite"
        path.write_bytes(case.model)
        model = load_model(case.model)
        samples = _samples(model, i, _invokes(model))
        jobs.append(BatchJob(f"svdf{i}", case.model, samples))
        refs[f"svdf{i}"] = (case, reference_outputs(path, samples))
        # Prepared: an integer SVDF's offsets folded into starting sums in flash.
        data = prepare_model(case.model)
        jobs.append(BatchJob(f"svdf{i}p", data, samples))
        refs[f"svdf{i}p"] = (case, refs[f"svdf{i}"][1])
    results = run_batch(get_target(target), jobs)
    for key, (case, ref) in refs.items():
        assert results[key].error is None, (key, results[key].error)
        assert _same(results[key].runs, ref), (target, case.describe())
        model = load_model(prepare_model(case.model) if key.endswith("p") else case.model)
        assert results[key].arena[0] == arena.plan_layout(model).used, case.describe()


@pytest.mark.parametrize("target", ["engine", "unix", "NETDUINOPLUS2"])
def test_keyword_scrambled_bit_exact_over_many_invokes(target, tmp_path):
    """40 invokes: the rings of memory 8 wrap five times, those of memory 32 once."""
    jobs, refs = [], {}
    for name in KWS:
        path = model_path(name)
        model = load_model(path)
        samples = _samples(model, 7, 40)
        refs[name] = reference_outputs(path, samples)
        if target == "engine":
            assert _same(run_engine(path, model, samples, tmp_path).runs, refs[name]), name
        else:
            jobs.append(BatchJob(name.removesuffix(".tflite"), path.read_bytes(), samples))
    if jobs:
        results = run_batch(get_target(target), jobs)
        for name in KWS:
            res = results[name.removesuffix(".tflite")]
            assert res.error is None and _same(res.runs, refs[name]), (target, name)


@pytest.mark.parametrize("arch", ["portable", "dsp", "v6m"])
def test_integer_svdf_with_each_cores_loops(arch, tmp_path):
    """The integer SVDF's time sums go through the int8 row dot product, whose
    loops differ per core family (test_speed_paths' builds, ASan/UBSan), in
    two segments around the ring's position: bit-exact with TFLM over many
    invokes."""
    import subprocess

    from test_speed_paths import arch_binary

    binary = arch_binary(arch)
    for i, case in enumerate(opgen.cases(6, only="SVDF/int8")):
        path = tmp_path / f"svdf{i}.tflite"
        path.write_bytes(case.model)
        model = load_model(case.model)
        samples = _samples(model, 100 + i, _invokes(model))
        f = tmp_path / "in0.bin"
        f.write_bytes(b"".join(np.ascontiguousarray(s[0]).tobytes() for s in samples))
        proc = subprocess.run([str(binary), str(path), "-r", str(len(samples)), "-i", str(f)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr[-2000:]
        ours = [bytes.fromhex(line.split()[2]) for line in proc.stdout.splitlines() if line.startswith("out 0 ")]
        dtype = model.outputs[0].numpy_dtype
        ref = [np.asarray(r[0]).astype(dtype).tobytes() for r in reference_outputs(path, samples)]
        assert ours == ref, (arch, case.describe())


def test_state_tensor_is_not_a_view():
    """tensor() of an SVDF's state is a ValueError (its bytes are the ring,
    not the declared shape); the output next to it is a view."""
    name = "keyword_scrambled.tflite"
    model = load_model(model_path(name))
    state = _svdfs(model)[0][0]
    out = model.main.operators[0].outputs[0]
    code = DEVICE_PRELUDE + f"""
it = tflm.Interpreter(tflm.Model(load('m.tflite')))
attempt(lambda: it.tensor({state}))
print(len(it.tensor({out})))
"""
    lines = run_on("unix", code, {"m.tflite": model_path(name).read_bytes()}).splitlines()
    assert lines[0] == (f"ValueError tensor {state} is state its operator keeps in a compact form of its own, "
                        "not in its declared shape")
    assert int(lines[1]) == model.main.tensors[out].elements


def _shared_state_model(also_output: bool) -> bytes:
    """Two float SVDFs; the second reads the first's state too (a model
    TFLM would run), or the state is also the model's output."""
    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1, 4), "FLOAT32", name="input")
    wf = sg.tensor((3, 4), "FLOAT32", data=np.ones((3, 4), np.float32))
    wt = sg.tensor((3, 2), "FLOAT32", data=np.ones((3, 2), np.float32))
    bias = sg.tensor((3,), "FLOAT32", data=np.zeros(3, np.float32))
    state = sg.tensor((1, 6), "FLOAT32", name="state", variable=True)
    y = sg.tensor((1, 3), "FLOAT32", name="y")
    sg.op("SVDF", [x, wf, wt, bias, state], [y], Rank=1)
    if also_output:
        sg.inputs, sg.outputs = [x], [y, state]
    else:
        z = sg.tensor((1, 3), "FLOAT32", name="z")
        sg.op("SVDF", [x, wf, wt, bias, state], [z], Rank=1)
        sg.inputs, sg.outputs = [x], [y, z]
    return b.build()


@pytest.mark.parametrize("also_output", [False, True])
def test_state_used_elsewhere_is_refused(also_output):
    """A state that anything else uses could not be a ring only its SVDF
    reads: a clear ValueError when allocating, not wrong outputs."""
    with pytest.raises(ValueError, match="must be a variable tensor that no other operator uses"):
        _engine.allocate(_engine.Model(_shared_state_model(also_output)))
