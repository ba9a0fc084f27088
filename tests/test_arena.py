"""The arena: the host's prediction is the device's arena on every target,
the greedy plan is TFLM's, the audit adds up, arenas are shared, and the
linear planner keeps every intermediate tensor (checked against TFLM's)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import UNKNOWN_OPS_MESSAGE, unknown_ops_model, DEVICE_PRELUDE, MEASURED, TARGETS, model_batches, model_files, model_path, run_on
from tflm_host import arena, cli
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import make_inputs

RUNNABLE = sorted(n for n, m in MEASURED.items() if m.runnable)
# TFLM's reference kernels for these ops request scratch buffers, which add
# to its head; the others' head is the tensors' plan alone.
TFLM_SCRATCH_OPS = {"SVDF", "UNIDIRECTIONAL_SEQUENCE_LSTM"}

OPEN = DEVICE_PRELUDE


def device_figures(target: str, names: list[str], planner: str) -> dict[str, dict]:
    figures = {}
    for batch in model_batches(target, names):
        figures.update(_device_figures(target, batch, planner))
    return figures


def _device_figures(target: str, names: list[str], planner: str) -> dict[str, dict]:
    code = OPEN + """
import gc
def largest():
    # The largest block the heap gives now (bisected; growing the heap
    # where the port can, as the arena's allocation would).
    gc.collect()
    lo, hi = 0, 1 << 20
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            b = bytearray(mid)
            b = None
            lo = mid
        except MemoryError:
            hi = mid - 1
    return lo
for name in NAMES:
    gc.collect()
    m = tflm.Model(load(name))
    # Measured first: arena_size() builds the tail in a heap buffer of its own.
    size = tflm.arena_size(m, planner=PLANNER)
    try:
        it = tflm.Interpreter(m, planner=PLANNER)
    except MemoryError as e:  # more than the board's RAM (linear plans of large models)
        e = str(e)
        print(repr((name, size, e, largest())))
        print('@END')
        m = None
        continue
    a = it.allocations()
    print(repr((name, size, it.arena_used_bytes(), it.head_bytes(),
                it.tail_bytes(), sorted((k, v['used'], v['requested'], v['count']) for k, v in a.items()))))
    print(it.memory_plan(60), end='')
    print('@END')
    it = m = a = None  # the next model's arena may need all the heap
""".replace("NAMES", repr(names)).replace("PLANNER", repr(planner))
    out = run_on(target, code, model_files(*names))
    figures = {}
    for block in out.split("@END\n")[:-1]:
        first, _, plan = block.partition("\n")
        fields = eval(first)
        if len(fields) == 4:
            name, size, error, largest = fields
            figures[name] = {"size": size, "error": error, "largest": largest}
            continue
        name, size, used, head, tail, audit = fields
        figures[name] = {"size": size, "used": used, "head": head, "tail": tail, "audit": audit, "plan": plan}
    return figures


@pytest.mark.parametrize("planner", ["greedy", "linear"])
@pytest.mark.parametrize("target", TARGETS)
def test_host_prediction_is_the_device_arena(target, planner):
    figures = device_figures(target, RUNNABLE, planner)
    assert set(figures) == set(RUNNABLE)
    for name in RUNNABLE:
        layout = arena.plan_layout(load_model(model_path(name)), planner)
        dev = figures[name]
        if "error" in dev:
            # Only an arena larger than the largest block the board's heap
            # gives may fail, and it fails asking for exactly the predicted
            # bytes (+15 to align).
            assert target != "unix" and layout.needed + 15 > dev["largest"], (name, dev)
            assert dev["size"] == layout.needed
            assert dev["error"] == f"memory allocation failed, allocating {layout.needed + 15} bytes", name
            continue
        assert dev["size"] == dev["used"] == layout.used, name
        assert (dev["head"], dev["tail"]) == (layout.head, layout.tail), name
        host_audit = sorted((k, v["used"], v["requested"], v["count"]) for k, v in layout.audit_dict().items())
        assert dev["audit"] == host_audit, name
        assert sum(a[1] for a in dev["audit"]) == dev["used"]  # the audit adds up
        assert dev["plan"] == layout.memory_plan(60), name


@pytest.mark.parametrize("name", RUNNABLE)
def test_greedy_head_is_tflm_head_and_tail_is_smaller(name):
    """The "tflm" planner's head is TFLM's byte for byte (less TFLM's integer
    SVDF scratch buffers, which our kernel does without), the default greedy
    one's (with overlapped buffers) never larger; the tail is smaller: at most
    60% of TFLM's where the model keeps little state, and below TFLM's where
    variable tensors (the same bytes in both) dominate it."""
    m = MEASURED[name]
    model = load_model(model_path(name))
    layout = arena.plan_layout(model, "tflm")
    if any(op.opcode == "SVDF" and model.main.tensors[op.inputs[0]].dtype == "INT8" for op in model.main.operators):
        # TFLM's integer SVDF asks for two scratch buffers, ours for none (its
        # sums wrap modulo 2^32 in any order): the head is the tensors' plan.
        assert layout.head == arena.plan_layout(model, "tflm", kernels=False).head < m.tflm_head
    else:
        assert layout.head == m.tflm_head
    assert arena.plan_layout(model, "greedy").head <= m.tflm_head
    state = layout.audit["variable tensors"].used
    assert layout.tail - state <= 0.6 * (m.tflm_tail - state), (layout.tail, state, m.tflm_tail)


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_lifetimes_and_plan_match_tflm_on_every_model(name):
    """Even for models whose kernels are not here yet: the tensors' greedy
    plan is TFLM's head (unless TFLM's kernels add scratch buffers), and the
    lifetimes give MODELS.md's bound."""
    m = MEASURED[name]
    model = load_model(model_path(name))
    assert arena.bound(model) == m.bound
    if not set(m.ops) & TFLM_SCRATCH_OPS:
        assert arena.plan_layout(model, "tflm", kernels=False).head == m.tflm_head


@pytest.mark.parametrize("target", TARGETS)
def test_two_models_share_one_arena(target):
    """Two different models in one tflm.Arena, run alternately: the head is
    the larger plan, the tails stack, the results are TFLM's."""
    a_name, b_name = "ad01_int8.tflite", "hello_world_legacy.tflite"
    a_model, b_model = load_model(model_path(a_name)), load_model(model_path(b_name))
    a_in = make_inputs(a_model, "random", seed=3, count=3)
    b_in = make_inputs(b_model, "random", seed=4, count=3)
    la, lb = arena.plan_layout(a_model), arena.plan_layout(b_model)
    need = max(la.head, lb.head) + la.tail + lb.tail
    code = OPEN + f"""
import binascii
shared = tflm.Arena({need})
a = tflm.Interpreter(tflm.Model(load({a_name!r})), shared)
b = tflm.Interpreter(tflm.Model(load({b_name!r})), shared)
print(shared.used_bytes(), shared.head_bytes(), shared.tail_bytes())
A = {[x[0].tobytes() for x in a_in]!r}
B = {[x[0].tobytes() for x in b_in]!r}
for k in range(3):
    # The head is shared: read an output before the other model runs.
    a.set_input(0, A[k]); a.invoke(); out_a = bytes(a.output(0))
    b.set_input(0, B[k]); b.invoke(); out_b = bytes(b.output(0))
    print(binascii.hexlify(out_a).decode(), binascii.hexlify(out_b).decode())
try:
    tflm.Interpreter(tflm.Model(load({b_name!r})), tflm.Arena({need - 1}))
except MemoryError:
    pass
small = tflm.Arena({need - 16})
# Kept: a collected interpreter would give its tail back for the next one.
first = tflm.Interpreter(tflm.Model(load({a_name!r})), small)
try:
    tflm.Interpreter(tflm.Model(load({b_name!r})), small)
except MemoryError as e:
    print(e)
"""
    out = run_on(target, code, model_files(a_name, b_name)).splitlines()
    assert out[0] == f"{need} {max(la.head, lb.head)} {la.tail + lb.tail}"
    ref_a = reference_outputs(model_path(a_name), a_in)
    ref_b = reference_outputs(model_path(b_name), b_in)
    for k in range(3):
        ha, hb = out[1 + k].split()
        assert bytes.fromhex(ha) == ref_a[k][0].tobytes()
        assert bytes.fromhex(hb) == ref_b[k][0].tobytes()
    assert out[4] == f"arena too small: needs {need} bytes, has {need - 16}"


@pytest.mark.parametrize("target", ["unix", "NETDUINO2"])
def test_linear_planner_keeps_every_tensor(target):
    """With planner='linear', interp.tensor(i) reads every intermediate after
    invoke(): each equals TFLM's own (kPreserveAllTensors)."""
    from tflite_micro.python.tflite_micro import runtime

    name = "hello_world_legacy.tflite"
    model = load_model(model_path(name))
    x = np.array([[2.5]], np.float32)
    ref = runtime.Interpreter.from_file(str(model_path(name)), arena_size=1 << 16,
                                        intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)
    ref.set_input(x, 0)
    ref.invoke()
    code = OPEN + f"""
import binascii
it = tflm.Interpreter(tflm.Model(load({name!r})), planner='linear')
it.set_input(0, {x.tobytes()!r})
it.invoke()
for i in range({len(model.main.tensors)}):
    print(binascii.hexlify(bytes(it.tensor(i))).decode())
"""
    out = run_on(target, code, model_files(name)).splitlines()
    for t in model.main.tensors:
        expected = np.asarray(ref._interpreter.GetTensor(t.index, 0)["tensor_data"]).astype(t.numpy_dtype).tobytes()
        assert bytes.fromhex(out[t.index]) == expected, f"tensor {t.index} {t.name}"


def test_arena_and_plan_commands(capsys, tmp_path):
    path = model_path("ad01_int8.tflite")
    assert cli.main(["arena", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    layout = arena.plan_layout(load_model(path))
    assert data["arena_used_bytes"] == layout.used == data["head_bytes"] + data["tail_bytes"]
    assert sum(v["used"] for v in data["allocations"].values()) == layout.used
    png = tmp_path / "plan.png"
    assert cli.main(["plan", str(model_path("vww_96_int8.tflite")), "--planner", "tflm", "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "head 73728 bytes, bound 55296 bytes" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10000
    unknown = tmp_path / "unknown_ops.tflite"
    unknown.write_bytes(unknown_ops_model())
    assert cli.main(["arena", str(unknown)]) == 2
    assert UNKNOWN_OPS_MESSAGE in capsys.readouterr().err
