"""The host's offline planner: placements checked against brute force, plans
on every shared model no larger than TFLM's (and at the bound where the
search proves it), aliases and reordering below the bound, and every plan
run through the engine (ASan/UBSan) and TFLM bit-exactly, from the model's
metadata and as a separate plan file."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from conftest import MEASURED, model_path
from engine_host import run_engine
import opgen
from tflm_host import arena, fbedit
from tflm_dev.builder import ModelBuilder
from tflm_host.model import load_model
from tflm_host.planning import formats, placement, plan_model
from tflm_host.planning.schedule import best_order, peak_of
from tflm_host.reference import reference_outputs
from tflm_host.runner import make_inputs

RUNNABLE = sorted(n for n, m in MEASURED.items() if m.runnable)


# -- placement ------------------------------------------------------------------

def random_items(seed: int) -> list[placement.Item]:
    """A small random instance: a few buffers over six scopes."""
    rng = random.Random(seed)
    items = []
    for k in range(rng.randint(5, 7)):
        first = rng.randrange(5)
        last = rng.randrange(first, min(5, first + 3))
        items.append(placement.Item(k, 16 * rng.choice([1, 2, 3, 5, 7, 8]), first, last))
    return items


def brute_force(items: list[placement.Item]) -> int:
    """The best first fit over every order: optimal (see placement.py)."""
    best = None
    for order in itertools.permutations(range(len(items))):
        head = placement.place_in_order(items, list(order))
        best = head if best is None else min(best, head)
    return best


def assert_valid(items: list[placement.Item]) -> None:
    for a, b in itertools.combinations(items, 2):
        if a.conflicts(b):
            assert a.offset + a.size <= b.offset or b.offset + b.size <= a.offset, (a, b)


def greedy_start(items: list[placement.Item]) -> placement.Placement:
    """TFLM's greedy order, often above the optimum."""
    order = sorted(range(len(items)), key=lambda i: (-items[i].size, -i))
    head = placement.place_in_order(items, order)
    return placement.Placement(head, [it.offset for it in items], "greedy", False, placement.bound(items))


SEEDS = range(120)


@pytest.mark.parametrize("seed", SEEDS)
def test_exact_search_and_heuristics_find_the_optimum(seed):
    items = random_items(seed)
    optimum = brute_force(items)
    result = placement.exact(items, greedy_start(items), time_limit=30)
    assert result.proven and result.head == optimum
    assert placement.head_of(items) == optimum
    assert_valid(items)
    again = random_items(seed)
    heur = placement.plan(again, time_limit=2)
    assert heur.head == optimum and heur.proven
    assert_valid(again)


def test_the_search_starts_above_the_optimum_often_enough():
    """So the test above exercises the search, not only its start."""
    above = 0
    for seed in SEEDS:
        items = random_items(seed)
        above += greedy_start(items).head > brute_force(items)
    assert above >= 4


# -- shared models ------------------------------------------------------------------

_plans: dict[tuple, object] = {}


def planned(name: str, **options):
    key = (name, tuple(sorted(options.items())))
    if key not in _plans:
        _plans[key] = plan_model(model_path(name).read_bytes(), **options)
    return _plans[key]


@pytest.mark.parametrize("name", RUNNABLE)
def test_plan_beats_tflm(name):
    m = MEASURED[name]
    model = load_model(model_path(name))
    greedy = arena.plan_layout(model, "tflm")
    plain = planned(name, alias=False, reorder=False)
    best = planned(name)
    # Never above TFLM's head, nor above TFLM's greedy one; at the bound when proven.
    assert plain.head <= min(m.tflm_head, greedy.head)
    # With aliases and overlaps, never above our (overlapping) greedy plan
    # either, with overlaps TFLM's kernels also run (the plan goes into the
    # model): the device's own greedy plan may go lower with backward ones.
    assert best.head <= arena.plan_layout(model, "greedy", forward_overlaps=True).head
    assert plain.head >= plain.bound  # no aliases, the model's order: the bound holds
    if plain.proven:
        assert plain.head == plain.bound or plain.method == "exact search"
    assert best.head <= plain.head
    # The plan is the device's: the offline layout checks it as the device does.
    assert best.layout.head == best.head and best.layout.planner == "offline"


def test_vww_reaches_the_bound():
    """The case to beat: TFLM's greedy head is 73,728 B against a bound of 55,296 B."""
    result = planned("vww_96_int8.tflite", alias=False)
    assert MEASURED["vww_96_int8.tflite"].tflm_head == 73728
    assert result.head == MEASURED["vww_96_int8.tflite"].bound == 55296 and result.proven
    # Overlapped buffers (an output over its dying input) go below the bound.
    assert planned("vww_96_int8.tflite").head < 55296


def test_in_place_add_goes_below_the_bound():
    """simple_add: two 16 KiB inputs and their sum; the sum is computed in
    place over an input, so two buffers instead of three."""
    result = planned("simple_add_model.tflite")
    assert result.bound == MEASURED["simple_add_model.tflite"].bound == 49152
    assert result.head == 32768 and result.aliases == 1


def _check_on_engine(data: bytes, embedded: bytes, samples, tmp_path, expect_head: int, plan_file=None,
                     defined=None, twin: bytes | None = None, expected=None):
    """Runs the planned model through the engine and TFLM: outputs equal TFLM's
    on the original model, TFLM gives the same on the planned model (the
    parts TFLM defines: opgen.Case.defined). TFLM runs `twin` instead where
    it refuses the model (opgen.Case.twin), planned on its own; where TFLM
    has no kernel, the outputs are `expected`'s (opgen.Case.expected)."""
    orig, planned_path = tmp_path / "orig.tflite", tmp_path / "planned.tflite"
    planned_path.write_bytes(embedded)
    orig.write_bytes(data if twin is None else twin)
    if expected is not None:
        ref = ref_planned = [expected(sample) for sample in samples]
    elif twin is not None:
        ref = reference_outputs(orig, samples)
        planned_twin = tmp_path / "planned_twin.tflite"
        planned_twin.write_bytes(plan_model(twin, time_limit=1).embedded())
        ref_planned = reference_outputs(planned_twin, samples)
    else:
        ref = reference_outputs(orig, samples)
        ref_planned = reference_outputs(planned_path, samples)
    model = load_model(embedded)
    ours = run_engine(planned_path, model, samples, tmp_path, planner="default" if plan_file is None else "offline",
                      plan=plan_file)
    assert ours.head == expect_head
    layout = arena.plan_layout(model, plan=formats.OfflinePlan.from_bytes(plan_file.read_bytes()) if plan_file else None)
    assert ours.buffers == layout.plan_tuples()
    for r, (a_run, b_run, c_run) in enumerate(zip(ours.runs, ref, ref_planned)):
        if defined is not None:
            a_run, b_run, c_run = defined(list(a_run), r), defined(list(b_run), r), defined(list(c_run), r)
        for k, (a, b, c) in enumerate(zip(a_run, b_run, c_run)):
            b = np.asarray(b).astype(a.dtype).reshape(a.shape)
            assert a.tobytes() == b.tobytes(), f"run {r} output {k}"
            if expected is None:  # (else TFLM runs neither model)
                c = np.asarray(c) if twin is None else np.asarray(c).astype(a.dtype).reshape(a.shape)
                assert c.tobytes() == b.tobytes(), f"TFLM on the planned model: run {r} output {k}"


@pytest.mark.parametrize("name", RUNNABLE)
def test_planned_shared_model_on_engine(name, tmp_path):
    """From the metadata (TFLM's format) and as a separate plan file."""
    data = model_path(name).read_bytes()
    result = planned(name)
    samples = make_inputs(load_model(data), "zeros") + make_inputs(load_model(data), "random", seed=9, count=3)
    _check_on_engine(data, result.embedded(), samples, tmp_path, result.head)
    plan_file = tmp_path / "plan.bin"
    plan_file.write_bytes(result.plan.to_bytes())
    _check_on_engine(data, result.model, samples, tmp_path, result.head, plan_file)


GENERATED = [c for c in opgen.cases(2)]




@pytest.mark.parametrize("case", GENERATED, ids=[c.name for c in GENERATED])
def test_planned_generated_model(case, tmp_path):
    """Every op family with a plan (in-place element-wise ops and views
    included): bit-exact with TFLM, which runs the planned model too."""
    result = plan_model(case.model, time_limit=1)
    try:
        _check_on_engine(case.model, result.embedded(), case.samples(), tmp_path, result.head,
                         defined=case.defined, twin=case.twin, expected=case.expected)
    except AssertionError as e:
        raise AssertionError(f"{case.describe()}\n{e}") from e


def test_aliases_are_used_by_element_wise_ops():
    """The generated suite exercises in-place plans of every in-place op."""
    kinds = arena.kernel_ops()
    IN_PLACE_OPS = {op for op, kind in kinds.items() if kind == "in_place"}
    VIEW_OPS = {op for op, kind in kinds.items() if kind == "view"}
    seen = set()
    for case in GENERATED:
        model = load_model(case.model)
        ops = {op.opcode for op in model.main.operators}
        if ops & (IN_PLACE_OPS | VIEW_OPS) and plan_model(case.model, time_limit=0.5).aliases:
            seen |= ops & (IN_PLACE_OPS | VIEW_OPS)
    assert seen == IN_PLACE_OPS | VIEW_OPS, sorted((IN_PLACE_OPS | VIEW_OPS) - seen)


def _output_read_by_a_later_op() -> bytes:
    """x -> FULLY_CONNECTED -> t -> TANH -> y, outputs y and t: TANH is the
    last reader of t, but t is an output, read after invoke()."""
    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1, 8), "INT8", quant=([0.05], [3]))
    w = sg.tensor((6, 8), "INT8", data=np.arange(48).reshape(6, 8) % 7 - 3, quant=([0.02], [0]))
    t = sg.tensor((1, 6), "INT8", quant=([0.03], [-2]))
    y = sg.tensor((1, 6), "INT8", quant=([1 / 128], [0]))
    sg.op("FULLY_CONNECTED", [x, w, -1], [t])
    sg.op("TANH", [t], [y])
    sg.inputs, sg.outputs = [x], [y, t]
    return b.build()


def test_no_op_is_planned_in_place_over_a_models_output(tmp_path):
    data = _output_read_by_a_later_op()
    result = plan_model(data, time_limit=0.5)
    assert result.aliases == 0
    offsets = result.plan.tensors
    assert offsets[2] != offsets[3]  # t and y: both outputs
    model = load_model(data)
    samples = make_inputs(model, "random", seed=3, count=2)
    _check_on_engine(data, result.embedded(), samples, tmp_path, result.head)
    # The engine refuses a plan that writes y over t, whichever tool wrote it.
    clobbering = formats.OfflinePlan([16, -1, 0, 0], None)
    with pytest.raises(ValueError, match="offline plan: tensor 3 is computed in place over tensor 2, but tensor 2 "
                                         "is an output"):
        arena.plan_layout(model, "offline", plan=clobbering)


# -- execution order ------------------------------------------------------------------

def two_branch_model(width: int = 256, hidden: int = 1024) -> bytes:
    """x -> FC -> h1 -> FC -> o1 and x -> FC -> h2 -> FC -> o2, then o1 + o2,
    stored with both wide layers first: h1 and h2 alive together."""
    rng = np.random.default_rng(5)
    b = ModelBuilder()
    sg = b.subgraph()
    q = ([0.05], [0])
    x = sg.tensor((1, width), "INT8", quant=q)

    def fc(inp, n_in, n_out):
        w = sg.tensor((n_out, n_in), "INT8", data=rng.integers(-20, 20, (n_out, n_in)).astype(np.int8),
                      quant=([0.01], [0]))
        bias = sg.tensor((n_out,), "INT32", data=rng.integers(-100, 100, n_out).astype(np.int32),
                         quant=([0.0005], [0]))
        out = sg.tensor((1, n_out), "INT8", quant=([0.1], [3]))
        return (inp, w, bias), out

    ins_h1, h1 = fc(x, width, hidden)
    ins_h2, h2 = fc(x, width, hidden)
    ins_o1, o1 = fc(h1, hidden, 16)
    ins_o2, o2 = fc(h2, hidden, 16)
    y = sg.tensor((1, 16), "INT8", quant=([0.2], [-2]))
    sg.op("FULLY_CONNECTED", list(ins_h1), [h1])
    sg.op("FULLY_CONNECTED", list(ins_h2), [h2])
    sg.op("FULLY_CONNECTED", list(ins_o1), [o1])
    sg.op("FULLY_CONNECTED", list(ins_o2), [o2])
    sg.op("ADD", [o1, o2], [y])
    sg.inputs, sg.outputs = [x], [y]
    return b.build()


def test_reordering_lowers_the_peak(tmp_path):
    data = two_branch_model()
    model = load_model(data)
    order, peak, proven = best_order(model)
    assert proven and order != [0, 1, 2, 3, 4]
    assert peak < peak_of(model, [0, 1, 2, 3, 4])
    plain = plan_model(data, reorder=False)
    best = plan_model(data)
    assert best.order == order and best.head < plain.head
    # The reordered model computes the same, on the engine and in TFLM.
    reordered = load_model(best.model)
    assert [op.opcode for op in reordered.main.operators] == [model.main.operators[k].opcode for k in order]
    samples = make_inputs(model, "random", seed=3, count=4)
    _check_on_engine(data, best.embedded(), samples, tmp_path, best.head)


def test_model_edits_keep_everything_else():
    data = model_path("person_detect.tflite").read_bytes()
    model = load_model(data)
    n = len(model.main.operators)
    edited = fbedit.edit_model(data, {"x": b"\x01\x02\x03"}, order=list(range(n)))
    again = load_model(edited)
    assert again.metadata["x"] == b"\x01\x02\x03"
    for a, b in zip(model.main.tensors, again.main.tensors):
        assert (a.name, a.shape, a.dtype, a.data, a.quantization) == (b.name, b.shape, b.dtype, b.data, b.quantization)
    assert [(o.opcode, o.inputs, o.outputs, o.options) for o in model.main.operators] == \
        [(o.opcode, o.inputs, o.outputs, o.options) for o in again.main.operators]
    # A second plan replaces the first.
    twice = fbedit.edit_model(edited, {"x": b"\x04"})
    assert load_model(twice).metadata["x"] == b"\x04" and list(load_model(twice).metadata).count("x") == 1
    with pytest.raises(ValueError, match="permutation"):
        fbedit.edit_model(data, order=[0] * n)


def test_fuzzing_planned_models(tmp_path):
    """Mutants of models carrying plans (metadata, scratch metadata,
    aliases): rejected or run, never out of bounds (ASan/UBSan)."""
    import subprocess

    from engine_host import BUILD, tflm_run

    tflm_run()  # builds the engine's binaries
    paths = []
    for name in ("hello_world_float.tflite", "simple_add_model.tflite", "keyword_scrambled.tflite",
                 "trained_lstm_int8.tflite"):
        path = tmp_path / name
        path.write_bytes(planned(name).embedded())
        paths.append(str(path))
    proc = subprocess.run([str(BUILD / "fuzz_model"), "3000", "7", *paths], capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]


def test_shim_of_a_reordered_plan_needs_the_model(capsys, tmp_path):
    from tflm_host import cli

    path = tmp_path / "branches.tflite"
    path.write_bytes(two_branch_model())
    assert cli.main(["plan", str(path), "--shim-out", str(tmp_path / "p.plan")]) == 2
    assert "write that model with -o OUT.tflite" in capsys.readouterr().err
    out_model = tmp_path / "reordered.tflite"
    assert cli.main(["plan", str(path), "--shim-out", str(tmp_path / "p.plan"), "-o", str(out_model)]) == 0
    plan = formats.OfflinePlan.from_bytes((tmp_path / "p.plan").read_bytes())
    layout = arena.plan_layout(load_model(out_model), plan=plan)
    assert layout.head == plan_model(path.read_bytes()).head


def variables_model(n: int = 3, width: int = 256) -> bytes:
    """n resource variables, all read at the top; each value is used by one
    ADD of a chain; then each variable is assigned. Reading each just before
    its ADD keeps one value alive instead of n."""
    b = ModelBuilder()
    main = b.subgraph("main")
    x = main.tensor((1, width), "FLOAT32", name="x")
    handles = [main.tensor((), "RESOURCE", name=f"h{i}") for i in range(n)]
    values = [main.tensor((1, width), "FLOAT32", name=f"v{i}") for i in range(n)]
    for i in range(n):
        main.op("VAR_HANDLE", [], [handles[i]], SharedName=f"var{i}")
    for i in range(n):
        main.op("READ_VARIABLE", [handles[i]], [values[i]])
    acc = x
    for i in range(n):
        y = main.tensor((1, width), "FLOAT32", name=f"y{i}")
        main.op("ADD", [acc, values[i]], [y])
        acc = y
    for i in range(n):
        main.op("ASSIGN_VARIABLE", [handles[i], acc if i == 0 else x], [])
    main.inputs, main.outputs = [x], [acc]
    return b.build()


def test_reordering_reads_variables_just_before_their_use(tmp_path):
    data = variables_model()
    model = load_model(data)
    plain = plan_model(data, reorder=False, time_limit=1)
    best = plan_model(data, time_limit=1)
    assert best.order and best.head <= plain.head * 3 // 4
    # Each READ_VARIABLE runs right before the ADD that uses its value, and
    # still before the ASSIGN_VARIABLE of its variable.
    ops = [model.main.operators[k].opcode for k in best.order]
    for i, k in enumerate(best.order):
        if model.main.operators[k].opcode == "READ_VARIABLE":
            assert ops[i + 1] == "ADD" or ops[i + 1:i + 3] == ["ASSIGN_VARIABLE", "ADD"], ops
    # Several invokes through one interpreter: the state flows as in TFLM.
    samples = make_inputs(model, "random", seed=4, count=4)
    _check_on_engine(data, best.embedded(), samples, tmp_path, best.head)


@pytest.mark.parametrize("case", [variables_model()] + [c.model for c in opgen.cases(2, only="STATEFUL")],
                         ids=["variables"] + [c.name for c in opgen.cases(2, only="STATEFUL")])
def test_greedy_head_is_tflms_with_resource_variables(case, tmp_path):
    """VAR_HANDLE outputs live in the kernel's data, outside the planned head,
    as TFLM's do: the greedy head is TFLM's byte for byte here too."""
    from tflm_dev.bench import tflm_arena

    path = tmp_path / "m.tflite"
    path.write_bytes(case)
    assert arena.plan_layout(load_model(case), "tflm").head == tflm_arena(path).head


FLOW_CASES = opgen.cases(3, only="IF/") + opgen.cases(3, only="WHILE/")


@pytest.mark.parametrize("case", FLOW_CASES, ids=[c.name for c in FLOW_CASES])
def test_greedy_head_is_tflms_with_control_flow(case, tmp_path):
    """TFLM plans the subgraphs IF and WHILE run in one head with the main
    subgraph's tensors, in allocation scopes nested in their operator's (a
    WHILE's cond and body one after the other): the greedy head is TFLM's
    byte for byte, with the kernels' prepare() run or not."""
    from tflm_dev.bench import tflm_arena

    path = tmp_path / "m.tflite"
    path.write_bytes(case.model)
    tflm = tflm_arena(path).head
    model = load_model(case.model)
    assert arena.plan_layout(model, "tflm").head == tflm
    assert arena.plan_layout(model, "tflm", kernels=False).head == tflm
