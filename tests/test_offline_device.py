"""Offline plans and pre-allocated tensors on the device (unix port and QEMU
boards): planned models bit-exact with TFLM and exactly the host's arena,
plans given separately (the shim) as a list, a file or bytes, corrupted
plans rejected with the host validator's message, and tensors living in
buffers of the user's."""

from __future__ import annotations

import ast
import random

import numpy as np
import pytest

from conftest import DEVICE_PRELUDE, MEASURED, TARGETS, get_target, model_files, model_path, run_on
from engine_host import EngineError, run_engine
from tflm_host import arena
from tflm_host.model import load_model
from tflm_host.planning import formats, plan_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import BatchJob, make_inputs, run_batch

RUNNABLE = sorted(n for n, m in MEASURED.items() if m.runnable)
LARGE = {"person_detect.tflite", "vww_96_int8.tflite"}

_plans: dict[str, object] = {}


def planned(name: str):
    if name not in _plans:
        _plans[name] = plan_model(model_path(name).read_bytes())
    return _plans[name]


def samples_for(name: str):
    model = load_model(model_path(name))
    return make_inputs(model, "zeros") + make_inputs(model, "random", seed=21, count=2)


@pytest.mark.parametrize("target", TARGETS)
def test_planned_models_on_device(target):
    """Every shared model with its plan in the metadata: the device picks the
    offline planner, its arena and plan are the host's, outputs are TFLM's."""
    names = [n for n in RUNNABLE if target != "NETDUINO2" or n in LARGE or MEASURED[n].tflm_used < 40000]
    if target == "PYBV11_QEMU":
        # With its plan and three 27 KB inputs it takes 417 KB: more than the pyboard's
        # 384 KiB ROMFS region (it runs on the other boards).
        names.remove("vww_96_int8.tflite")
    jobs = [BatchJob(f"m{i}", planned(n).embedded(), samples_for(n)) for i, n in enumerate(names)]
    results = run_batch(get_target(target), jobs, planner=None)
    for job, name in zip(jobs, names):
        res = results[job.name]
        layout = planned(name).layout
        assert res.error is None, (name, res.error)
        assert res.planner == "offline", name
        assert res.arena == (layout.used, layout.head, layout.tail), name
        assert res.buffers == layout.plan_tuples(), name
        ref = reference_outputs(model_path(name), job.samples)
        for r, (a_run, b_run) in enumerate(zip(res.runs, ref)):
            for k, (a, b) in enumerate(zip(a_run, b_run)):
                assert a.tobytes() == np.asarray(b).astype(a.dtype).reshape(a.shape).tobytes(), (name, r, k)
        assert layout.head <= MEASURED[name].tflm_head


OPEN = DEVICE_PRELUDE


@pytest.mark.parametrize("target", TARGETS)
def test_shim_plan_forms(target):
    """plan= as a list, an array, bytes, a file path: the same arena and plan."""
    name = "vww_96_int8.tflite"
    result = plan_model(model_path(name).read_bytes(), reorder=False)
    layout = result.layout
    offsets = result.plan.tensors + (result.plan.scratch or [])
    code = OPEN + f"""
import array
m = tflm.Model(load({name!r}))
offsets = {offsets!r}
for form in ('list', 'array', 'bytes', 'path', 'view'):
    if form == 'list':
        p = offsets
    elif form == 'array':
        p = array.array('i', offsets)
    elif form == 'bytes':
        p = open(ROOT + '/vww.plan', 'rb').read()
    elif form == 'path':
        p = ROOT + '/vww.plan'
    else:
        p = load('vww.plan')
    it = tflm.Interpreter(m, plan=p)
    print(form, it.planner, it.arena_used_bytes(), it.head_bytes(), repr(it.buffers()).replace(' ', ''))
    it = None
    gc.collect()
print(tflm.arena_size(m, plan=offsets))
"""
    files = model_files(name)
    files["vww.plan"] = result.plan.to_bytes()
    out = run_on(target, code, files).splitlines()
    for line in out[:5]:
        form, planner, used, head, bufs = line.split(" ", 4)
        assert (planner, int(used), int(head)) == ("offline", layout.used, layout.head), line
        assert [tuple(b) for b in ast.literal_eval(bufs)] == layout.plan_tuples()
    assert int(out[5]) == layout.needed
    assert layout.used < arena.plan_layout(load_model(model_path(name)), "tflm").used


# -- corrupted plans ---------------------------------------------------------------

def mutations(name: str, count: int, seed: int) -> list[list[int]]:
    """Plans of the model with one thing changed: moved onto another buffer,
    shifted, unaligned, negative, huge, or with a wrong count."""
    result = plan_model(model_path(name).read_bytes(), reorder=False)
    base = result.plan.tensors + (result.plan.scratch or [])
    placed = [i for i, off in enumerate(base) if off >= 0]
    rng = random.Random(seed)
    out = []
    for k in range(count):
        plan = list(base)
        kind = k % 7
        i = rng.choice(placed)
        if kind == 0:
            plan[i] = plan[rng.choice(placed)]
        elif kind == 1:
            plan[i] += rng.choice([16, -16, 32, 48])
            plan[i] = max(plan[i], 0)
        elif kind == 2:
            plan[i] += rng.choice([1, 2, 3, 6])
        elif kind == 3:
            plan[i] = -rng.randint(2, 100)
        elif kind == 4:
            plan[i] = 0x7FFFFFF0 - 16 * rng.randint(0, 4)
        elif kind == 5:
            plan = plan[:-1] if rng.random() < 0.5 else plan + [0]
        else:
            plan[i] = 0
        out.append(plan)
    return out


def host_verdict(name: str, offsets: list[int]) -> str:
    model = load_model(model_path(name))
    n = sum(len(sg.tensors) for sg in model.subgraphs)
    try:
        plan = formats.OfflinePlan.from_offsets(offsets, n)
        layout = arena.plan_layout(model, "offline", plan=plan)
    except ValueError as e:
        return f"ValueError {e}"
    return f"ok {layout.used}"


CORRUPTED = ["hello_world_float.tflite", "keyword_scrambled.tflite", "pretrainedResnet_quant.tflite",
             "simple_add_model.tflite", "trained_lstm.tflite"]


@pytest.mark.parametrize("target", ["unix", "NETDUINO2"])
def test_corrupted_plans_rejected_as_the_host_predicts(target):
    """Random corruptions: the device accepts exactly the plans the host
    validator accepts (and then uses the predicted arena) and rejects the
    others with the same message; it never crashes."""
    count = 40 if target == "unix" else 12
    cases = [(name, plan) for name in CORRUPTED for plan in mutations(name, count, seed=len(name))]
    chunks = [OPEN]
    for name, plan in cases:
        chunks.append(f"""
m = tflm.Model(load({name!r}))
def f():
    it = tflm.Interpreter(m, plan={plan!r})
    print('ok', it.arena_used_bytes(), end=' ')
    it.invoke()
attempt(f)
m = None
gc.collect()
""")
    out = run_on(target, chunks, model_files(*CORRUPTED)).splitlines()
    assert len(out) == len(cases)
    rejected = 0
    for (name, plan), line in zip(cases, out):
        expect = host_verdict(name, plan)
        if expect.startswith("ok") and int(expect.split()[1]) > 4_000_000:
            # A valid plan with a far offset: the arena is too large for the heap.
            assert line == f"MemoryError memory allocation failed, allocating {int(expect.split()[1]) + 15} bytes"
        elif expect.startswith("ok"):
            assert line == expect + " ok", (name, plan)
        else:
            rejected += 1
            assert line == expect, (name, plan)
    assert rejected > len(cases) // 2


@pytest.mark.parametrize("name", CORRUPTED)
def test_corrupted_plans_on_the_engine(name, tmp_path):
    """Many more corruptions through the engine under ASan/UBSan."""
    model = load_model(model_path(name))
    n = sum(len(sg.tensors) for sg in model.subgraphs)
    samples = make_inputs(model, "random", seed=2)
    ref = reference_outputs(model_path(name), samples)
    for k, offsets in enumerate(mutations(name, 150, seed=k_seed(name))):
        plan_file = tmp_path / "p.plan"
        expect = host_verdict(name, offsets)
        if len(offsets) < n:
            continue  # the file format cannot hold fewer offsets than tensors
        plan_file.write_bytes(formats.OfflinePlan.from_offsets(offsets, n).to_bytes())
        try:
            ours = run_engine(model_path(name), model, samples, tmp_path, planner="offline", plan=plan_file)
        except EngineError as e:
            if expect.startswith("ok"):
                # A valid plan with a far offset: larger than the 4 MiB arena given.
                used = int(expect.split()[1])
                assert used > 1 << 22 and str(e).endswith(f"arena too small: needs {used} bytes, has {1 << 22}")
            else:
                assert expect.startswith("ValueError") and str(e).endswith(expect[len("ValueError "):]), (offsets, e)
            continue
        assert expect == f"ok {ours.head + ours.tail}", offsets
        for a, b in zip(ours.runs[0], ref[0]):
            assert a.tobytes() == np.asarray(b).astype(a.dtype).reshape(a.shape).tobytes()


def k_seed(name: str) -> int:
    return sum(map(ord, name))


@pytest.mark.parametrize("target", ["unix", "MPS2_AN385"])
def test_bad_plan_metadata(target, tmp_path):
    """Plans inside models: truncated, wrong version, wrong count, overlapping."""
    from tflm_host import fbedit

    name = "hello_world_int8.tflite"
    data = model_path(name).read_bytes()
    result = plan_model(data, reorder=False)
    good = formats.metadata_entries(result.plan, 1)[formats.METADATA_NAME]
    n = len(result.plan.tensors)
    variants = {
        "truncated": good[:12 + 4 * (n - 2)],
        "version": (7).to_bytes(4, "little") + good[4:],
        "count": good[:8] + (n - 1).to_bytes(4, "little") + good[12:-4],
        "header": good[:8],
        "overlap": good[:12] + b"".join(
            (0 if off >= 0 else -1).to_bytes(4, "little", signed=True)
            for off in result.plan.tensors),
    }
    files = {f"{k}.tflite": fbedit.edit_model(data, {formats.METADATA_NAME: v}) for k, v in variants.items()}
    code = OPEN + f"""
for k in {list(variants)!r}:
    m = tflm.Model(load(k + '.tflite'))
    attempt(lambda: tflm.Interpreter(m))
"""
    out = run_on(target, code, files).splitlines()
    expected = []
    for k in variants:
        model = load_model(files[f"{k}.tflite"])
        try:
            arena.plan_layout(model)
            expected.append("ok")
        except ValueError as e:
            expected.append(f"ValueError {e}")
    assert out == expected
    assert all(line.startswith("ValueError") for line in out)
    assert f"announces {n} offsets but holds {n - 2}" in out[0]
    assert "has version 7; this runtime reads versions 0 and 1" in out[1]
    assert f"offline plan has {n - 1} tensor offsets, the model has {n} tensors" in out[2]
    assert "metadata has 8 bytes, too few for its header" in out[3]
    assert "share bytes" in out[4] and "while both are alive" in out[4]


# -- pre-allocated tensors ---------------------------------------------------------

@pytest.mark.parametrize("target", ["unix", "NETDUINO2"])
@pytest.mark.parametrize("name", ["person_detect.tflite", "vww_96_int8.tflite"])
def test_preallocated_input_shrinks_the_arena(target, name):
    """The input in a buffer of the user's (a camera frame): the arena
    shrinks by what the host predicts, outputs stay TFLM's, and the input
    and output views point into the user's buffers."""
    model = load_model(model_path(name))
    inp, out = model.main.inputs[0], model.main.outputs[0]
    x = make_inputs(model, "random", seed=4)[0][0]
    base = arena.plan_layout(model)
    with_in = arena.plan_layout(model, preallocated=(inp,))
    both = arena.plan_layout(model, preallocated=(inp, out))
    # Each interpreter in a function of its own: the collector scans the VM's
    # stack conservatively, and a dead slot of module-level code that held
    # the interpreter kept its arena alive (the next one then did not fit
    # the Netduino's 112 KiB heap).
    chunks = [OPEN, f"""
m = tflm.Model(load({name!r}))
frame = bytearray(load('frame.bin'))
result = bytearray({model.main.tensors[out].nbytes})
def first():
    size = tflm.arena_size(m, preallocated={{{inp}: frame}})
    it = tflm.Interpreter(m, preallocated={{{inp}: frame}})
    print(it.arena_used_bytes(), size)
    it.invoke()
    print(bytes(it.output(0)).hex())
    v = it.input(0)
    v[0] = 5
    print(frame[0], len(v))
first()
gc.collect()
""", f"""
def both():
    it = tflm.Interpreter(m, preallocated={{{inp}: frame, {out}: result}})
    frame[0] = {int(x.ravel()[0]) & 0xFF}
    it.invoke()
    print(it.arena_used_bytes(), bytes(result).hex() == bytes(it.output(0)).hex())
both()
gc.collect()
"""]
    # Moving the input out after allocation: the greedy arena and the frame
    # together must fit the board (vww's do not fit the Netduino's 112 KiB heap).
    replan = target != "NETDUINO2" or base.used + x.nbytes < 100_000
    if replan:
        chunks.append(f"""
def replanned():
    it = tflm.Interpreter(m, {base.needed})
    before = it.arena_used_bytes()
    it.set_tensor_buffer({inp}, frame)
    print(before, it.arena_used_bytes())
    it.invoke()
    print(bytes(it.output(0)).hex())
replanned()
""")
    files = model_files(name)
    files["frame.bin"] = x.tobytes()
    lines = run_on(target, chunks, files).splitlines()
    ref = reference_outputs(model_path(name), [[x]])[0][0]
    assert lines[0] == f"{with_in.used} {with_in.needed}"
    assert bytes.fromhex(lines[1]) == ref.tobytes()
    assert lines[2] == f"5 {model.main.tensors[inp].nbytes}"
    assert lines[3] == f"{both.used} True"
    if replan:
        assert lines[4] == f"{base.used} {with_in.used}"
        assert bytes.fromhex(lines[5]) == ref.tobytes()
    # TFLM's greedy plan of vww places its 27 KiB input in the way of the
    # peak; person_detect's input is not alive at its busiest operator. Our
    # greedy plan (overlapped buffers) has it out of the way in both.
    tflm_plan = arena.plan_layout(model, "tflm")
    tflm_with_in = arena.plan_layout(model, "tflm", preallocated=(inp,))
    assert (tflm_with_in.head < tflm_plan.head) == (name == "vww_96_int8.tflite")
    assert with_in.head <= base.head


@pytest.mark.parametrize("target", TARGETS)
def test_preallocated_errors(target):
    name = "hello_world_float.tflite"
    model = load_model(model_path(name))
    inp = model.main.inputs[0]
    const = next(t.index for t in model.main.tensors if t.is_constant)
    planned_model = plan_model(model_path(name).read_bytes(), reorder=False)
    placed = next(i for i, off in enumerate(planned_model.plan.tensors) if off >= 0 and i != inp)
    code = OPEN + f"""
import array
m = tflm.Model(load({name!r}))
pm = tflm.Model(load('planned.tflite'))
good = bytearray(4)
attempt(lambda: tflm.Interpreter(m, preallocated={{{inp}: bytearray(3)}}))
attempt(lambda: tflm.Interpreter(m, preallocated={{{inp}: bytearray(8)}}))
attempt(lambda: tflm.Interpreter(m, preallocated={{{inp}: memoryview(bytearray(5))[1:]}}))
attempt(lambda: tflm.Interpreter(m, preallocated={{{inp}: array.array('h', [0, 0])}}))
attempt(lambda: tflm.Interpreter(m, preallocated={{{inp}: b'1234'}}))
attempt(lambda: tflm.Interpreter(m, preallocated={{{const}: bytearray(4)}}))
attempt(lambda: tflm.Interpreter(m, preallocated={{99: good}}))
attempt(lambda: tflm.Interpreter(pm, preallocated={{{placed}: bytearray({model.main.tensors[placed].nbytes})}}))
attempt(lambda: tflm.Interpreter(m, preallocated=[{inp}]))
it = tflm.Interpreter(m, preallocated={{{inp}: good}})
good.extend(bytearray(1000))
attempt(it.invoke)
"""
    files = model_files(name)
    files["planned.tflite"] = planned_model.embedded()
    out = run_on(target, code, files).splitlines()
    nbytes = model.main.tensors[placed].nbytes
    assert out == [
        f"ValueError buffer too small: tensor {inp} needs 4 bytes, the buffer has 3",
        f"ValueError buffer of the wrong size: tensor {inp} needs 4 bytes, the buffer has 8",
        f"ValueError buffer for tensor {inp} (float32) is not 4-byte aligned",
        f"ValueError buffer for tensor {inp} holds 2-byte items, the tensor is float32",
        f"ValueError buffer for tensor {inp} is read-only",
        f"ValueError tensor {const} is a constant: only tensors the arena's head would hold can be pre-allocated, "
        f"e.g. inputs ({inp}) and outputs ({model.main.outputs[0]}): model.inputs[i].index",
        f"ValueError tensor 99 does not exist (the model has {len(model.main.tensors)} tensors)",
        f"ValueError tensor {placed} is pre-allocated, but the offline plan places it at offset "
        f"{planned_model.plan.tensors[placed]}",
        "TypeError preallocated must be a dict {tensor index: buffer}",
        "RuntimeError a pre-allocated tensor's buffer was resized or moved",
    ], nbytes
