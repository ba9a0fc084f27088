"""Benchmarks that print figures and write them as Markdown tables for docs/."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from tflm_host import _engine, arena, board_info, patches
from tflm_host.device import board as device_board
from tflm_host.device import PICO_BOARDS, build_dir, elf_symbol, romfs_batches
from tflm_host.device import target as make_target
from tflm_host.model import load_model
from tflm_host.patches import model_macs
from tflm_host.planning import plan_model
from tflm_host.prepare import prepare_model
from tflm_host.runner import BatchJob, make_inputs, run_batch, run_model

from . import cycles
from .builder import ModelBuilder

PROJECT_ROOT = Path(__file__).resolve().parents[2]  # tflm_dev is the checkout's own


@dataclass
class TflmArena:
    head: int
    tail: int
    used: int


def tflm_arena(model_path: Path) -> TflmArena | None:
    """TFLM's own head/tail/used for a model, from its recording allocator
    (printed by the C++ code on file descriptor 2, so it is captured there)."""
    from tflite_micro.python.tflite_micro import runtime

    size = model_path.stat().st_size
    with tempfile.TemporaryFile() as log:
        saved = os.dup(2)
        os.dup2(log.fileno(), 2)
        try:
            interp = runtime.Interpreter.from_file(str(model_path), arena_size=max(10 * size, 1 << 20))
            interp.print_allocations()
        except Exception:
            return None
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        log.seek(0)
        text = log.read().decode(errors="replace")
    figures = {k: int(v) for k, v in re.findall(r"Arena allocation (total|head|tail) (\d+) bytes", text)}
    if len(figures) != 3:
        return None
    return TflmArena(figures["head"], figures["tail"], figures["total"])


def _model_row(path: Path) -> tuple[dict, object]:
    """What every table starts a model's row with: TFLM's arena, the bound,
    the ops this runtime lacks."""
    model = load_model(path)
    return {"model": path.name, "tflm": tflm_arena(path), "bound": arena.bound(model),
            "missing": arena.missing_ops(model)}, model


def arena_rows(models: list[Path], target_name: str, progress=None) -> list[dict]:
    """Per model: TFLM's arena, ours measured on the target (or the head of
    the tensors' plan when our kernels are not all there yet), the bound."""
    rows = []
    target = make_target(target_name)
    for i, path in enumerate(models):
        if progress:
            progress(i, len(models), path.name)
        row, model = _model_row(path)
        if not row["missing"]:
            r = run_model(path, target, make_inputs(model, "zeros"))
            row["ours"] = (r.head_bytes, r.tail_bytes, r.arena_used_bytes)
            # Prepared (tflm-host prepare): the kernels' data read from the model.
            data = prepare_model(path.read_bytes())
            with tempfile.TemporaryDirectory() as tmp:
                prepared = Path(tmp) / path.name
                prepared.write_bytes(data)
                r = run_model(prepared, target, make_inputs(model, "zeros"))
            layout = arena.plan_layout(load_model(data))
            in_model = layout.model_data
            row["prepared"] = (r.tail_bytes, r.arena_used_bytes, in_model)
            row["prepared_audit"] = {k: v["used"] for k, v in layout.audit_dict().items()}
            row["head"] = layout.head
            row["svdf_dropped"] = svdf_dropped_bytes(model)
            row["floor"] = operator_floor(model)
            # With a patch-based stage within PATCH_BOUND extra MACs, and with
            # one of no extra MACs (bands of rows or patches keeping their halos), when one lowers the arena.
            for key, bound in (("patched", PATCH_BOUND), ("banded", 0.0)):
                row[key] = None
                staged = prepare_model(path.read_bytes(), max_extra_macs=bound)
                if _patch_of(staged)[0]:
                    with tempfile.TemporaryDirectory() as tmp:
                        pp = Path(tmp) / path.name
                        pp.write_bytes(staged)
                        r = run_model(pp, target, make_inputs(model, "zeros"))
                    row[key] = (r.arena_used_bytes, _patch_of(staged))
        else:
            row["ours_head"] = arena.plan_layout(model, "greedy", kernels=False).head
        rows.append(row)
    return rows


# The issue's goal for every shared model: at most this share of TFLM's arena
# (issue 28), except where what the model must hold makes it impossible.
GOAL = 0.50


def operator_floor(model) -> tuple[int, int, str, str]:
    """(bytes, operator, op name, what): the most bytes one operator of the
    main subgraph must hold at once whatever the plan, the order or the
    overlaps: all its distinct activation inputs while it reads them, or
    all its outputs once it has written them (constants are in the model,
    variables in the tail). No head of whole tensors is smaller."""
    sg = model.main

    def activations(indices) -> int:
        ts = [sg.tensors[i] for i in dict.fromkeys(indices) if i >= 0]
        return sum(t.nbytes for t in ts if not t.is_constant and not t.is_variable)

    best = (0, -1, "", "")
    for k, op in enumerate(sg.operators):
        for what, n in (("its inputs", activations(op.inputs)), ("its outputs", activations(op.outputs))):
            if n > best[0]:
                best = (n, k, op.opcode, what)
    return best


def svdf_dropped_bytes(model) -> int:
    """Bytes of the SVDF state variables' declared size that the kernel does
    not keep: each filter's oldest step, which TFLM keeps and drops unread at
    the next invoke (kernels/svdf.c keeps memory - 1 steps in a ring)."""
    sg = model.main
    dropped = 0
    for op in sg.operators:
        if op.opcode == "SVDF" and len(op.inputs) > 4 and op.inputs[4] >= 0 and op.inputs[2] >= 0:
            memory = sg.tensors[op.inputs[2]].shape[-1]
            dropped += sg.tensors[op.inputs[4]].nbytes // max(memory, 1)
    return dropped


def why_not_lower(row: dict) -> str | None:
    """For a model still above GOAL x TFLM's arena: what its arena holds and
    the floor of what it must hold (generated from the measured audit)."""
    t = row.get("tflm")
    if not t or "prepared" not in row:
        return None
    used = min([row["prepared"][1]] + [row[k][0] for k in ("patched", "banded") if row.get(k)])
    target = int(GOAL * t.used)
    if used <= target:
        return None
    audit = row["prepared_audit"]
    state = audit.get("variable tensors", 0)
    records = row["prepared"][0] - state - audit.get("kernel data", 0) - audit.get("resource variables", 0)
    head, dropped = row["head"], row["svdf_dropped"]
    text = (f"- **{row['model']}**: {used:,} B against {target:,} B ({GOAL:.2f} x TFLM's {t.used:,}). "
            f"Head {head:,} B, tail {row['prepared'][0]:,} B: model state kept between invokes "
            f"{state:,} B, records {records:,} B.")
    if dropped:
        text += (f" The SVDF state is already compact: each SVDF keeps memory - 1 steps per filter in a ring, "
                 f"not the {dropped:,} B of oldest steps its variables declare too (TFLM keeps them and drops "
                 "them unread at the next invoke).")
        floor = state + head
        if floor > target:
            text += (f" Even with no records at all, state and head alone take {floor:,} B > {target:,} B: "
                     "not reachable without changing the model (its state type).")
        else:
            text += (f" The {used - target:,} B above {target:,} B would have to come out of the {records:,} B "
                     "of records (one per activation, variable and scratch buffer: a prepared model "
                     "already reads its kernels' data, its index lists and its constant tensors', subgraph and "
                     "node records from the model).")
        return text
    floor, k, op, what = row["floor"]
    if floor + state > target:
        text += (f" Operator {k} ({op}) must hold {floor:,} B at once with whole tensors, whatever the plan, "
                 f"order or overlaps ({what})" + (f", and the state stays: {floor + state:,} B" if state else "")
                 + f", {(floor + state) / t.used:.2f} x TFLM's: {GOAL:.2f} x is out of reach unless a patch stage "
                 "runs through that operator (a stage runs convolutions and pools; in bands of rows also the ADD "
                 "that ends a residual block, of maps the stage makes, and a fully connected layer at its end).")
    else:
        text += (f" No operator must hold more than {floor:,} B at once (operator {k}, {op}, {what}): the other "
                 f"{head - floor:,} B of the head are maps that live across operators, which a patch stage, "
                 "overlaps or another order would have to remove.")
    return text


# The MAC overhead the arena tables allow a patch-based stage (tflm-host prepare --max-extra-macs).
PATCH_BOUND = 0.2


def _patch_of(data: bytes) -> tuple[int, int, int, float, int, int]:
    """A model's patch-based stage: (the operator after it (0: none), grid rows, grid columns, extra MACs / the
    model's, its first operator, its mode: patches.PATCHES, ROWS or KEEP)."""
    ip = _engine.allocate(_engine.Model(data))
    split, gh, gw = ip.patch
    return (split, gh, gw, (ip.patch_macs - ip.patch_whole_macs) / max(model_macs(load_model(data)), 1),
            ip.patch_start, ip.patch_mode)


def patch_cell(row: dict, key: str = "patched") -> str:
    if not row.get(key):
        return "-"
    used, (split, gh, gw, extra, start, mode) = row[key]
    return f"{used} (ops {start}-{split - 1}, {patches.layout_text(gh, gw, mode)}, {extra:+.1%} MACs)"


def arena_markdown(rows: list[dict], target_name: str) -> str:
    lines = [
        "| model | TFLM head | TFLM tail | TFLM used | our head | our tail | our used | our tail / TFLM's "
        "| prepared: tail | prepared: used | prepared: used / TFLM's | kernel data in the model "
        "| prepared + patches: used | prepared, no extra MAC: used | bound |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        t = row["tflm"]
        tflm = [str(t.head), str(t.tail), str(t.used)] if t else ["-", "-", "-"]
        if "ours" in row:
            head, tail, used = row["ours"]
            ours = [str(head), str(tail), str(used), f"{tail / t.tail:.0%}" if t else "-"]
            p_tail, p_used, in_model = row["prepared"]
            ours += [str(p_tail), str(p_used), f"{p_used / t.used:.2f}" if t else "-", str(in_model), patch_cell(row),
                     patch_cell(row, "banded")]
        else:
            ours = [f"({row['ours_head']})", "-", "-", "no kernels for " + ", ".join(row["missing"])] + ["-"] * 6
        lines.append(f"| {row['model']} | " + " | ".join(tflm + ours + [str(row["bound"])]) + " |")
    notes = [
        "",
        f"Ours: measured with `tflm-host run` on `{target_name}` (the same bytes on every target: the "
        "arena layout has no pointers). TFLM: its Python interpreter's recording allocator "
        "(PyPI `tflite-micro`, x86-64). In parentheses: the head of our plan of the model's "
        "tensors, for models with ops this runtime has no kernels for (custom ops). Bound: the most "
        "bytes live at one operator in the model's order (each tensor rounded to 16 bytes). Prepared: "
        "the model after `tflm-host prepare`, measured the same way; its kernels' data (multipliers, "
        "shifts, geometry, tables) is read in place from the model (flash, from ROMFS) instead of "
        "the tail: `kernel data in the model`, as `print_allocations()` shows it; so are its index "
        "lists, its constant tensors' records and (when no kernel keeps run-time state) its subgraph and node "
        "records. Prepared + patches: "
        f"`tflm-host prepare --max-extra-macs {PATCH_BOUND:.0%}`, measured the same way, where a patch-based "
        "stage lowers the arena: the operators it runs patch by patch, the grid, and the MACs the "
        "halos add to the model's ('kept': patches keeping their halos, which add none). Prepared, no extra "
        "MAC: `tflm-host prepare --max-extra-macs 0`, the same way: a stage that computes no MAC twice (fewer "
        "where a stride skips rows no window reads), in bands of whole rows that keep the rows the next band "
        "shares ('N bands') or in patches keeping their halos ('GxG kept').",
    ]
    why = [w for w in (why_not_lower(row) for row in rows) if w]
    if why:
        notes += ["", f"## Why not lower: models above {GOAL:.2f} x TFLM's arena", ""] + why
    return "\n".join(lines + notes) + "\n"


README_START = "<!-- tflm-host bench arena --readme: start -->"
README_END = "<!-- tflm-host bench arena --readme: end -->"
README_MODELS = ("person_detect", "vww_96_int8", "pretrainedResnet_quant", "kws_ref_model", "keyword_scrambled",
                 "simple_add_model", "hello_world_int8", "audio_preprocessor_int8")


def readme_table(rows: list[dict], models_dir: Path) -> str:
    """The README's table: TFLM's arena, ours measured, prepared measured, and
    with our offline plan too (the host's prediction, which the tests hold
    to the device's figure)."""
    by_name = {r["model"].removesuffix(".tflite"): r for r in rows}
    lines = ["| model | TFLM arena | ours | ours, prepared (`tflm-host prepare`) "
             "| ours, prepared + offline plan (`tflm-host plan --prepare --backward`) "
             f"| ours, prepared + patches (`--max-extra-macs {PATCH_BOUND:.0%}`) "
             "| ours, prepared, no extra MAC (`--max-extra-macs 0`) |", "|---|---|---|---|---|---|---|"]
    for name in README_MODELS:
        row = by_name.get(name)
        if row is None or "ours" not in row or row["tflm"] is None:
            continue
        result = plan_model((models_dir / (name + ".tflite")).read_bytes(), time_limit=5.0, backward=True)
        planned = arena.plan_layout(load_model(prepare_model(result.embedded()))).used
        cells = [row["tflm"].used, row["ours"][2], row["prepared"][1], planned]
        patched = f"{row['patched'][0]:,} (+{row['patched'][1][3]:.0%} MACs)" if row.get("patched") else "-"
        banded = f"{row['banded'][0]:,}" if row.get("banded") else "-"
        lines.append(f"| {name} | " + " | ".join(f"{c:,}" for c in cells) + f" | {patched} | {banded} |")
    return "\n".join(lines) + "\n"


def write_readme_table(readme: Path, table: str) -> None:
    text = readme.read_text()
    start, end = text.index(README_START) + len(README_START), text.index(README_END)
    readme.write_text(text[:start] + "\n" + table + text[end:])


def progress_bar(i: int, n: int, label: str) -> None:
    width = 30
    done = width * i // max(n, 1)
    print(f"\r[{'#' * done}{'.' * (width - done)}] {i}/{n} {label:40.40s}", end="", file=sys.stderr, flush=True)
    if i + 1 == n:
        print(file=sys.stderr)


# -- offline plans ---------------------------------------------------------------

def plan_rows(models: list[Path], target_name: str, progress=None) -> list[dict]:
    """Per model: TFLM's head, our `tflm` planner's head, our offline plans (plain, and
    with aliases and reordering), the bound, and arena_used_bytes measured on
    the target with each; TFLM's own arena running our planned model."""
    rows, jobs = [], []
    target = make_target(target_name)
    for i, path in enumerate(models):
        if progress:
            progress(i, len(models), path.name)
        row, model = _model_row(path)
        rows.append(row)
        if row["missing"]:
            continue
        data = path.read_bytes()
        greedy = arena.plan_layout(model, "tflm")
        plain = plan_model(data, alias=False, reorder=False)
        best = plan_model(data)
        row.update(greedy=greedy, plain=plain, best=best)
        with tempfile.TemporaryDirectory() as tmp:
            planned = Path(tmp, path.name)
            planned.write_bytes(best.embedded())
            row["tflm_planned"] = tflm_arena(planned)
        zeros = make_inputs(model, "zeros")
        k = len(jobs)
        jobs += [BatchJob(f"g{k}", data, zeros), BatchJob(f"p{k}", plain.embedded(), zeros),
                 BatchJob(f"b{k}", best.embedded(), zeros)]
        row["jobs"] = (f"g{k}", f"p{k}", f"b{k}")
    results = run_batch(target, jobs, planner=None)
    linear = run_batch(target, [j for j in jobs if j.name.startswith("g")], planner="linear")
    for row in rows:
        if "jobs" in row:
            row["device"] = [results[j].arena[0] if results[j].arena else None for j in row["jobs"]]
            lin = linear[row["jobs"][0]]
            row["device"].insert(0, lin.arena[0] if lin.arena else None)
    return rows


def plan_markdown(rows: list[dict], target_name: str) -> str:
    lines = [
        "| model | TFLM head | head: `tflm` planner | offline head | bound | + aliases, order | used: linear | "
        "used: greedy | used: offline | used: + aliases, order | TFLM used with our plan | TFLM used |",
        "|---|" + "---|" * 11,
    ]
    for row in rows:
        t = row["tflm"]
        cells = [row["model"], str(t.head) if t else "-"]
        if row["missing"]:
            cells += ["-", "-", str(row["bound"]), "-", "-", "-", "-", "-", "-", str(t.used) if t else "-"]
        else:
            plain, best = row["plain"], row["best"]
            proof = "" if plain.proven else " (not proven optimal)"
            extra = []
            if best.aliases:
                extra.append(f"{best.aliases} alias{'es' if best.aliases != 1 else ''}")
            if best.order:
                extra.append("reordered")
            tp = row["tflm_planned"]
            cells += [str(row["greedy"].head), f"{plain.head}{proof}", str(row["bound"]),
                      f"{best.head}" + (f" ({', '.join(extra)})" if extra else ""),
                      *(str(u) if u is not None else "-" for u in row["device"]), str(tp.used) if tp else "-",
                      str(t.used) if t else "-"]
        lines.append("| " + " | ".join(cells) + " |")
    notes = [
        "",
        "Heads and arenas in bytes. TFLM: PyPI `tflite-micro`'s interpreter (reference kernels, greedy "
        "planner, recording allocator). Head, `tflm` planner: our first fit without overlapped buffers "
        "(`planner='tflm'`), TFLM's algorithm (the default `greedy` planner's heads, lower where an "
        "operator's output may overlap its input, are in arena.md). Offline head: "
        "`tflm-host plan --no-alias --no-reorder`. Bound: the most bytes alive at one operator in the "
        "model's order, scratch buffers not included (MODELS.md's `bound`); the offline plans include the "
        "kernels' scratch buffers (SVDF, LSTM). + aliases, order: `tflm-host plan` (views and in-place "
        f"element-wise ops share bytes; operators reordered where that lowers the peak). Used: "
        f"arena_used_bytes measured with `tflm.Interpreter(model)` on `{target_name}` (the same bytes on "
        "every target) for the model as it is (linear and greedy planners) and with each plan in its "
        "metadata (offline planner, chosen by the device). TFLM used with our "
        "plan: TFLM's own interpreter running the model with our plan in its metadata.",
    ]
    return "\n".join(lines + notes) + "\n"


def prealloc_rows(models: list[Path], target_name: str) -> list[dict]:
    """arena_used_bytes with the input, the output or both pre-allocated,
    for the `tflm` planner (TFLM's first fit) and the offline plan (host prediction, checked on the target)."""
    rows = []
    for path in models:
        model = load_model(path)
        inp, out = model.main.inputs[0], model.main.outputs[0]
        data = path.read_bytes()
        for label, pre in (("nothing", ()), ("input", (inp,)), ("output", (out,)), ("input and output", (inp, out))):
            greedy = arena.plan_layout(model, "tflm", preallocated=pre)
            best = plan_model(data, preallocated=pre)
            ext = sum(model.main.tensors[t].nbytes for t in pre)
            rows.append({"model": path.name, "what": label, "greedy": greedy.used, "offline": best.layout.used,
                         "outside": ext})
    return rows


def prealloc_markdown(rows: list[dict]) -> str:
    lines = ["| model | pre-allocated | bytes outside the arena | arena: `tflm` planner | arena: offline plan |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['what']} | {r['outside']} | {r['greedy']} | {r['offline']} |")
    return "\n".join(lines) + "\n"


# -- speed ---------------------------------------------------------------------

OURS_SCRIPT = """
import tflm
m = tflm.Model(open(MODEL, 'rb').read())
it = tflm.Interpreter(m, planner=PLANNER)
data = [open(f, 'rb').read() for f in INPUT_FILES]
for i in range(len(m.inputs)):
    t = it.input(i)
    for k in range(len(t)):
        t[k] = 0
for _ in range(RUNS):
    # Given inputs are set before every invoke (the plan may put the output
    # on them), outside the instructions counted.
    for i, x in enumerate(data):
        it.set_input(i, x)
    it.invoke()
"""

TFLM_SCRIPT = """
import numpy as np
from tflite_micro.python.tflite_micro import runtime
it = runtime.Interpreter.from_file(MODEL, arena_size=1 << 22)
data = [np.fromfile(f, d[1]).reshape(d[0]) for f, d in zip(INPUT_FILES, INPUTS)]
for i, d in enumerate(INPUTS):
    it.set_input(np.zeros(d[0], d[1]), i)
for _ in range(RUNS):
    for i, x in enumerate(data):
        it.set_input(x, i)
    it.invoke()
"""


def callgrind_invoke(cmd: list[str], function: str) -> int:
    """Instructions executed inside `function` (and what it calls) in a
    process, counted by valgrind's callgrind."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           f"--toggle-collect={function}"] + cmd,
                          capture_output=True, text=True, env=dict(os.environ, PYTHONHASHSEED="0"))
    m = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode != 0 or not m:
        raise RuntimeError(f"valgrind failed on {cmd}:\n{proc.stderr[-2000:]}")
    return int(m.group(1))


def host_ours(model_path: Path, runs: int, planner: str = "greedy", inputs: list[Path] = ()) -> int:
    """x86-64 instructions of one invoke in our unix port; inputs: files of
    the inputs' raw bytes (else all zero)."""
    binary = build_dir() / "unix" / "micropython"
    with tempfile.NamedTemporaryFile("w", suffix=".py") as f:
        f.write(f"MODEL = {str(model_path)!r}\nRUNS = {runs}\nPLANNER = {planner!r}\n"
                f"INPUT_FILES = {[str(p) for p in inputs]!r}\n" + OURS_SCRIPT)
        f.flush()
        return callgrind_invoke([str(binary), "-X", "heapsize=16M", f.name], "tflm_interp_invoke") // runs


def host_tflm(model_path: Path, runs: int, inputs: list[Path] = ()) -> int:
    """x86-64 instructions of one invoke in TFLM's Python interpreter;
    inputs: files of the inputs' raw bytes (else all zero)."""
    model = load_model(model_path)
    types = [(list(t.shape), str(t.numpy_dtype)) for t in model.inputs]
    with tempfile.NamedTemporaryFile("w", suffix=".py") as f:
        f.write(f"MODEL = {str(model_path)!r}\nRUNS = {runs}\nINPUTS = {types!r}\n"
                f"INPUT_FILES = {[str(p) for p in inputs]!r}\n" + TFLM_SCRIPT)
        f.flush()
        return callgrind_invoke([sys.executable, f.name], "tflite::micro::MicroInterpreter::Invoke()") // runs


def runnable_models(models: list[Path]) -> list[Path]:
    """The models every op of which has a kernel here."""
    return [p for p in models if not arena.missing_ops(load_model(p))]


def runnable(models: list[Path], progress=None, label=lambda path: path.name):
    """The runnable models one by one, each shown on the progress line."""
    todo = runnable_models(models)
    for i, path in enumerate(todo):
        if progress:
            progress(i, len(todo), label(path))
        yield path


def qemu_per_invoke(model_path: Path, board: str, runs: int, planner: str = "greedy") -> int:
    """Instructions per invoke on a QEMU board (qemuboard.icount_low, -icount
    shift=0), each invoke timed as SPEED_DEVICE_CODE times it."""
    code = f"""
import tflm, qemuboard
_count = qemuboard.icount_low
f = open(ROOT + '/model.tflite', 'rb')
m = tflm.Model(memoryview(f))
it = tflm.Interpreter(m, planner={planner!r})
for i in range(len(m.inputs)):
    t = it.input(i)
    for k in range(len(t)):
        t[k] = 0
it.invoke()
total = 0
for _ in range({runs}):
    c = _count()
    d = _count()
    a = _count()
    it.invoke()
    total += ((_count() - a) & 0x3fffffff) - ((d - c) & 0x3fffffff)
print('@ICOUNT', total // {runs})
"""
    out = make_target(board).run([code], {"model.tflite": model_path.read_bytes()})
    m = re.search(r"@ICOUNT (\d+)", out)
    if not m:
        raise RuntimeError(out)
    return int(m.group(1))


def speed_rows(models: list[Path], board: str, runs: int, progress=None) -> list[dict]:
    rows = []
    for path in runnable(models, progress):
        ours, tflm = host_ours(path, runs), host_tflm(path, runs)
        # The same kernels over TFLM's plan: what overlapped buffers cost
        # (the int8 convolutions' order over an overlapped input).
        plain = host_ours(path, runs, "tflm")
        rows.append({"model": path.name, "qemu": qemu_per_invoke(path, board, runs), "host": ours, "tflm": tflm,
                     "qemu_plain": qemu_per_invoke(path, board, runs, "tflm"), "host_plain": plain})
    return rows


def _markdown_table(columns: list[str], body: list[str], notes: list[str]) -> str:
    """A Markdown table of these columns and body rows, then the notes' lines."""
    head = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return "\n".join(head + body + notes) + "\n"


def speed_markdown(rows: list[dict], board: str) -> str:
    columns = ["model", f"{board} instructions / invoke", f"{board}, TFLM's plan", "host: ours",
               "host: ours, TFLM's plan", "host: TFLM reference", "ours / TFLM"]
    body = [f"| {r['model']} | {r['qemu']:,} | {r['qemu_plain']:,} | {r['host']:,} | {r['host_plain']:,} "
            f"| {r['tflm']:,} | {r['host'] / r['tflm']:.2f} |" for r in rows]
    notes = [
        "",
        f"{board}: instructions counted by QEMU (`-icount shift=0`, `qemuboard.icount_low()`) around `invoke()`, "
        "inputs all zero. Host: x86-64 instructions inside one invoke, counted by valgrind's callgrind "
        "(`--toggle-collect`) in our unix port (`tflm_interp_invoke`) and in TFLM's Python interpreter "
        "(PyPI `tflite-micro`, reference kernels: `MicroInterpreter::Invoke`). Instructions, not cycles. "
        "Ours with the default greedy plan, whose buffers overlap where the kernels allow (docs/planning.md), "
        "and with TFLM's plan (`planner='tflm'`, no overlaps): the difference is what overlapping costs "
        "(over an overlapped input the int8 convolutions take the order the plan's distance makes safe: "
        "docs/planning.md).",
    ]
    return _markdown_table(columns, body, notes)


def staged_models(models: list[Path], progress=None):
    """Each model that a patch-based stage makes smaller: (its path, it
    prepared, it prepared with the stage PATCH_BOUND chooses, _patch_of's
    account of that stage)."""
    for path in runnable(models, progress):
        plain = prepare_model(path.read_bytes())
        patched = prepare_model(path.read_bytes(), max_extra_macs=PATCH_BOUND)
        stage = _patch_of(patched)
        if stage[0]:
            yield path, plain, patched, stage


def patch_speed_rows(models: list[Path], board: str, runs: int, progress=None) -> list[dict]:
    """Per model that a patch-based stage makes smaller: instructions
    per invoke prepared, and prepared with the stage (PATCH_BOUND)."""
    rows = []
    for path, plain, patched, stage in staged_models(models, progress):
        row = {"model": path.name, "stage": stage}
        with tempfile.TemporaryDirectory() as tmp:
            for key, data in (("plain", plain), ("patched", patched)):
                f = Path(tmp) / path.name
                f.write_bytes(data)
                row[key] = (qemu_per_invoke(f, board, runs), host_ours(f, runs),
                            arena.plan_layout(load_model(data)).used)
        rows.append(row)
    return rows


def patch_speed_markdown(rows: list[dict], board: str) -> str:
    columns = ["model", "stage", "arena: prepared", "arena: + patches", f"{board}: prepared", f"{board}: + patches",
               "host: prepared", "host: + patches", "MACs added"]
    body = []
    for r in rows:
        split, gh, gw, extra, start, mode = r["stage"]
        (q0, h0, u0), (q1, h1, u1) = r["plain"], r["patched"]
        stage = f"ops {start}-{split - 1}, {patches.layout_text(gh, gw, mode)}"
        body.append(f"| {r['model']} | {stage} | {u0:,} | {u1:,} | {q0:,} | {q1:,} "
                    f"({q1 / q0 - 1:+.1%}) | {h0:,} | {h1:,} ({h1 / h0 - 1:+.1%}) | {extra:+.1%} |")
    notes = [
        "",
        f"Instructions per invoke of the prepared model (`tflm-host prepare`) and of the same model with a "
        f"patch-based stage (`tflm-host prepare --max-extra-macs {PATCH_BOUND:.0%}`), measured as in "
        f"speed.md: {board} counted by QEMU (`-icount shift=0`), inputs all zero; host: x86-64 instructions "
        "inside `tflm_interp_invoke` in our unix port (callgrind). Arena: arena_used_bytes (the host's "
        "prediction, which the tests hold to the device's). MACs added: the halos' recomputation, as a "
        "share of the model's convolution and fully connected MACs.",
    ]
    return _markdown_table(columns, body, notes)


# -- firmware size ------------------------------------------------------------

SIZE_PARTS = ("engine", "kernels", "binding")


def module_size(build: Path) -> dict[str, int]:
    """Text bytes (code and constants) of the tflm module's objects in a firmware build, by part."""
    sizes = {}
    for part in SIZE_PARTS:
        # Objects of sources that still exist (a build folder keeps old ones).
        src = PROJECT_ROOT / "micropython_mod" / part
        objs = sorted(o for o in (build / "micropython_mod" / part).glob("*.o") if (src / f"{o.stem}.c").exists())
        if not objs:
            raise FileNotFoundError(f"no objects in {build / 'micropython_mod' / part}: build the firmware first")
        out = subprocess.run(["arm-none-eabi-size", "-t", *map(str, objs)], check=True,
                             capture_output=True, text=True).stdout
        sizes[part] = int(out.strip().splitlines()[-1].split()[0])
    sizes["total"] = sum(sizes[p] for p in SIZE_PARTS)
    return sizes


def firmware_text(build: Path) -> int:
    """Text bytes (code and read-only data) of a whole linked firmware."""
    elf = build / "firmware.elf"
    out = subprocess.run(["arm-none-eabi-size", str(elf)], check=True, capture_output=True, text=True).stdout
    return int(out.strip().splitlines()[-1].split()[0])


PLANNER_OBJECTS = ("planner_greedy", "planner_linear", "planner_offline", "plan")


def engine_object_sizes(build: Path, names: tuple[str, ...]) -> dict[str, int]:
    """Text bytes of each of these engine objects in a firmware build (0: not linked in)."""
    sizes = {}
    for name in names:
        obj = build / "micropython_mod" / "engine" / f"{name}.o"
        out = subprocess.run(["arm-none-eabi-size", str(obj)], check=True, capture_output=True, text=True).stdout
        sizes[name] = int(out.strip().splitlines()[-1].split()[0])
    return sizes


def size_markdown(builds: dict[str, Path], board: str) -> str:
    lines = [f"Text bytes of the tflm module in the {board} firmware (Cortex-M3; `-Os`, the kernels at "
             "`TFLM_KERNEL_OPT`, `-O2` by default), from "
             "`arm-none-eabi-size` of its object files (code plus read-only data), and the text of "
             "the whole linked firmware (MicroPython included). A build with `TFLM_TYPES` has each "
             "kernel built for the tensor types its model's operators use (`tflm-host ops` prints the "
             "setting), the code of the others left out. "
             "`make size-report` rebuilds this table.", "",
             "| build | " + " | ".join(SIZE_PARTS) + " | module total | firmware text |",
             "|---|" + "---|" * (len(SIZE_PARTS) + 2)]
    for label, build in builds.items():
        s = module_size(build)
        lines.append(f"| {label} | " + " | ".join(f"{s[p]:,}" for p in SIZE_PARTS)
                     + f" | {s['total']:,} | {firmware_text(build):,} |")
    first = next(iter(builds.values()))
    p = engine_object_sizes(first, PLANNER_OBJECTS)
    lines += ["", "The memory planners in the first build (text bytes of their objects): "
              + ", ".join(f"`{n}.c` {v:,}" for n, v in p.items())
              + ". A firmware with `TFLM_PLANNERS=offline` leaves out the greedy and linear planners "
              f"({p['planner_greedy'] + p['planner_linear']:,} bytes); the last row also carries the "
              "plan itself (its words, in flash). A firmware with `TFLM_PATCH=0` (which `tflm-host ops` prints "
              "for models without a patch-based stage) leaves out `patch.c` "
              f"({engine_object_sizes(first, ('patch',))['patch']:,} bytes) and the kernels' window, slice and span hooks.",
              "",
              "The module as a native `.mpy` for stock firmware (`tflm.mpy`) has its code loaded into RAM instead of "
              "flash: [natmod.md](natmod.md) gives its size and the heap it takes on each architecture, with every "
              "kernel and with a model's."]
    return "\n".join(lines) + "\n"


# -- speed against CMSIS-NN ------------------------------------------------------
#
# `bench speed --vs cmsis-nn`: Arm's CMSIS-NN (the kernels TFLM links on
# Cortex-M), called as TFLM's CMSIS-NN port calls it, on the same emulated
# cores as our firmware, model by model and layer by layer, in one run. The
# anchor folder (../shared/anchors/cmsis-nn) holds CMSIS-NN's source tarball
# and a bare-metal harness (harness/: startup, main, layers.h); both are built
# here, in the build folder, and never linked into the module: a yardstick.
# The layers' parameters (multipliers, padding, activation ranges, softmax
# scaling) are computed below as TFLM's Prepare computes them.

ANCHOR_DIR = PROJECT_ROOT.parent / "shared" / "anchors" / "cmsis-nn"
# The models the harness runs (chains of int8 CONV, DEPTHWISE, pools,
# RESHAPE, FC and SOFTMAX).
CMSIS_MODELS = ("person_detect.tflite", "vww_96_int8.tflite", "kws_ref_model.tflite")


# Our QEMU boards and the harness built for the same core and machine
# (port_boards/<BOARD>/board.json's cmsis_nn).
CMSIS_CORES = {b.name: b.cmsis_nn for b in board_info.boards() if b.cmsis_nn}


def _round_half_away(x: float) -> int:
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def tflm_multiplier(real: float) -> tuple[int, int]:
    """TFLM's QuantizeMultiplier: real = q * 2^shift, q a Q31 integer."""
    if real == 0.0:
        return 0, 0
    frac, shift = math.frexp(real)
    q = _round_half_away(frac * (1 << 31))
    if q == 1 << 31:
        q //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return q, shift


def _act_range(act: str, scale: float, zp: int) -> tuple[int, int]:
    """CalculateActivationRangeQuantized for int8 (float32 division, as TFLM)."""
    def q(v: float) -> int:
        return zp + _round_half_away(float(np.float32(v) / np.float32(scale)))
    lo, hi = -128, 127
    return {"NONE": (lo, hi), "RELU": (max(lo, q(0.0)), hi), "RELU6": (max(lo, q(0.0)), min(hi, q(6.0))),
            "RELU_N1_TO_1": (max(lo, q(-1.0)), min(hi, q(1.0)))}[act]


def _same_pad(stride: int, dil: int, size: int, k: int, out: int) -> int:
    return max((out - 1) * stride + (k - 1) * dil + 1 - size, 0) // 2


def _c_array(ctype: str, name: str, values) -> str:
    vals = [str(int(v)) for v in values]
    rows = ",\n  ".join(", ".join(vals[i:i + 24]) for i in range(0, len(vals), 24))
    return f"static const {ctype} {name}[{len(vals)}] __attribute__((aligned(4))) = {{\n  {rows}\n}};\n"


def cmsis_layers_source(model) -> tuple[str, list[str]]:
    """The harness's C description of a model's layers (harness/layers.h):
    weights, biases and the parameters TFLM's CMSIS-NN port hands to
    CMSIS-NN. Returns the source and a short name per layer."""
    sg = model.main
    T = sg.tensors
    arrays, layers, names = ['#include "layers.h"\n'], [], []
    biggest = 0
    previous = sg.inputs[0]
    for op in sg.operators:
        x, y = T[op.inputs[0]], T[op.outputs[0]]
        if op.inputs[0] != previous or x.dtype != "INT8":
            raise ValueError(f"{op.opcode} {op.index}: the harness runs chains of int8 layers only")
        previous = op.outputs[0]
        biggest = max(biggest, x.nbytes, y.nbytes)
        o, tag = op.options, f"L{op.index}"
        common = f".in_bytes = {x.nbytes}, .out_bytes = {y.nbytes}"
        if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            w = T[op.inputs[1]]
            b = T[op.inputs[2]] if len(op.inputs) > 2 and op.inputs[2] >= 0 else None
            n, ih, iw, ic = x.shape
            _, oh, ow, oc = y.shape
            dw = op.opcode == "DEPTHWISE_CONV_2D"
            fh, fw = w.shape[1], w.shape[2]
            sh, sw = o["StrideH"], o["StrideW"]
            dh, dwl = o.get("DilationHFactor", 1), o.get("DilationWFactor", 1)
            ph, pw = (_same_pad(sh, dh, ih, fh, oh), _same_pad(sw, dwl, iw, fw, ow)) if o["Padding"] == "SAME" else (0, 0)
            lo, hi = _act_range(o["FusedActivationFunction"], y.scale, y.zero_point)
            scales = w.quantization.scales
            mq = [tflm_multiplier(float(x.scale) * float(scales[c if len(scales) > 1 else 0]) / float(y.scale))
                  for c in range(oc)]
            arrays.append(_c_array("int8_t", f"{tag}_w", np.frombuffer(w.data, np.int8)))
            if b is not None:
                arrays.append(_c_array("int32_t", f"{tag}_b", np.frombuffer(b.data, np.int32)))
            arrays.append(_c_array("int32_t", f"{tag}_m", [m for m, _ in mq]))
            arrays.append(_c_array("int32_t", f"{tag}_s", [s for _, s in mq]))
            name = (f"{'dwconv' if dw else 'conv'} {fh}x{fw} s{sh} {ih}x{iw}x{ic}->{oh}x{ow}x{oc}"
                    + (f" mult{oc // ic}" if dw and oc != ic else ""))
            layers.append(
                f"{{ .kind = {'L_DWCONV' if dw else 'L_CONV'}, .name = \"{name}\", {common},"
                f" .in = {{{n}, {ih}, {iw}, {ic}}}, .filter = {{{1 if dw else w.shape[0]}, {fh}, {fw}, {oc if dw else ic}}},"
                f" .out = {{{n}, {oh}, {ow}, {oc}}}, .stride = {{{sw}, {sh}}}, .padding = {{{pw}, {ph}}},"
                f" .dilation = {{{dwl}, {dh}}}, .input_offset = {-x.zero_point}, .output_offset = {y.zero_point},"
                f" .act_min = {lo}, .act_max = {hi}, .ch_mult = {oc // ic if dw else 0}, .w = {tag}_w,"
                f" .b = {tag + '_b' if b is not None else 'NULL'}, .mult = {tag}_m, .shift = {tag}_s }}")
        elif op.opcode in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
            n, ih, iw, ic = x.shape
            _, oh, ow, oc = y.shape
            fh, fw, sh, sw = o["FilterHeight"], o["FilterWidth"], o["StrideH"], o["StrideW"]
            ph, pw = (_same_pad(sh, 1, ih, fh, oh), _same_pad(sw, 1, iw, fw, ow)) if o["Padding"] == "SAME" else (0, 0)
            lo, hi = _act_range(o["FusedActivationFunction"], y.scale, y.zero_point)
            kind = "AVGPOOL" if op.opcode == "AVERAGE_POOL_2D" else "MAXPOOL"
            name = f"{kind.lower()} {fh}x{fw} s{sh} {ih}x{iw}x{ic}->{oh}x{ow}x{oc}"
            layers.append(
                f"{{ .kind = L_{kind}, .name = \"{name}\", {common}, .in = {{{n}, {ih}, {iw}, {ic}}},"
                f" .filter = {{1, {fh}, {fw}, 1}}, .out = {{{n}, {oh}, {ow}, {oc}}}, .stride = {{{sw}, {sh}}},"
                f" .padding = {{{pw}, {ph}}}, .act_min = {lo}, .act_max = {hi} }}")
        elif op.opcode == "RESHAPE":
            name = "reshape (a copy)"
            layers.append(f"{{ .kind = L_RESHAPE, .name = \"{name}\", {common} }}")
        elif op.opcode == "FULLY_CONNECTED":
            w = T[op.inputs[1]]
            b = T[op.inputs[2]] if len(op.inputs) > 2 and op.inputs[2] >= 0 else None
            units, depth = w.shape
            batches = y.elements // units
            if len(w.quantization.scales) != 1:
                raise ValueError(f"FULLY_CONNECTED {op.index}: the harness runs per-tensor weights only")
            m, s = tflm_multiplier(float(x.scale) * float(w.scale) / float(y.scale))
            lo, hi = _act_range(o["FusedActivationFunction"], y.scale, y.zero_point)
            arrays.append(_c_array("int8_t", f"{tag}_w", np.frombuffer(w.data, np.int8)))
            if b is not None:
                arrays.append(_c_array("int32_t", f"{tag}_b", np.frombuffer(b.data, np.int32)))
            name = f"fully_connected {depth}->{units}"
            layers.append(
                f"{{ .kind = L_FC, .name = \"{name}\", {common}, .in = {{{batches}, 1, 1, {depth}}},"
                f" .filter = {{{depth}, 1, 1, {units}}}, .out = {{{batches}, 1, 1, {units}}},"
                f" .input_offset = {-x.zero_point}, .output_offset = {y.zero_point}, .filter_offset = {-w.zero_point},"
                f" .act_min = {lo}, .act_max = {hi}, .w = {tag}_w, .b = {tag + '_b' if b is not None else 'NULL'},"
                f" .fc_mult = {m}, .fc_shift = {s} }}")
        elif op.opcode == "SOFTMAX":
            # PreprocessSoftmaxScaling with 5 integer bits, and the input radius.
            bits = 5
            real = min(o["Beta"] * float(x.scale) * (1 << (31 - bits)), (1 << 31) - 1.0)
            m, s = tflm_multiplier(real)
            radius = math.floor(((1 << bits) - 1) * (1 << (31 - bits)) / (1 << s))
            depth = x.shape[-1]
            name = f"softmax {x.elements // depth}x{depth}"
            layers.append(
                f"{{ .kind = L_SOFTMAX, .name = \"{name}\", {common}, .in = {{{x.elements // depth}, 1, 1, {depth}}},"
                f" .sm_mult = {m}, .sm_shift = {s}, .sm_diff_min = {-radius} }}")
        else:
            raise ValueError(f"{op.opcode}: not in the harness")
        names.append(name)
    arrays.append("const layer_t model_layers[] = {\n  " + ",\n  ".join(layers) + "\n};\n")
    arrays.append(f"const int model_n_layers = {len(layers)};\n")
    arrays.append(f"int8_t act_a[{biggest}] __attribute__((aligned(4)));\n")
    arrays.append(f"int8_t act_b[{biggest}] __attribute__((aligned(4)));\n")
    arrays.append(f"const int act_bytes = {biggest};\n")
    arrays.append(f"const char model_name[] = \"{model.description or 'model'}\";\n")
    return "".join(arrays), names


def _cmsis_sources(anchor: Path, work: Path) -> Path:
    """CMSIS-NN's source tree, extracted once into the build folder."""
    tarballs = sorted(anchor.glob("CMSIS-NN-*.tar.xz"))
    if not tarballs:
        raise FileNotFoundError(f"no CMSIS-NN-*.tar.xz in {anchor}")
    src = work / tarballs[-1].name[:-len(".tar.xz")]
    if not (src / "CMSIS-NN" / "Include" / "arm_nnfunctions.h").is_file():
        src.mkdir(parents=True, exist_ok=True)
        subprocess.run(["tar", "-xJf", str(tarballs[-1]), "-C", str(src)], check=True)
    return src / "CMSIS-NN"


def _compile_all(jobs: list[tuple[list[str], Path]], workers: int) -> None:
    """Runs compiler commands whose output is missing or older than its input."""
    from concurrent.futures import ThreadPoolExecutor

    def one(job):
        cmd, out = job
        out.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode:
            raise RuntimeError(f"{' '.join(cmd)}\n{proc.stderr[-3000:]}")

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        list(pool.map(one, jobs))


def cmsis_library(board: str, anchor: Path, work: Path, opt: str = "-O2", workers: int = 2) -> tuple[Path, str]:
    """CMSIS-NN and the harness's objects for one core, built once; returns
    the library and the compiler flags."""
    core = CMSIS_CORES[board]
    nn = _cmsis_sources(anchor, work)
    out = work / f"{board}{opt}"
    flags = (f"-mthumb {core.cpu} {opt} -ffunction-sections -fdata-sections -Wall -Wno-unused-function "
             f"-I{nn / 'Include'} -I{anchor / 'harness'} -DCPU_HZ={core.hz}").split()
    sources = sorted(p for p in (nn / "Source").rglob("*.c")
                     if not re.search(r"_(f16|f32|flt)\.c$", p.name) and "Bindings" not in p.parts)
    jobs = []
    for src in sources:
        obj = out / "nn" / src.relative_to(nn / "Source").with_suffix(".o")
        if not obj.is_file() or obj.stat().st_mtime < src.stat().st_mtime:
            jobs.append((["arm-none-eabi-gcc", *flags, "-c", str(src), "-o", str(obj)], obj))
    for name in ("startup", "main"):
        src, obj = anchor / "harness" / f"{name}.c", out / f"{name}.o"
        if not obj.is_file() or obj.stat().st_mtime < src.stat().st_mtime:
            jobs.append((["arm-none-eabi-gcc", *flags, "-c", str(src), "-o", str(obj)], obj))
    _compile_all(jobs, workers)
    lib = out / "libcmsisnn.a"
    objs = sorted(str(p) for p in (out / "nn").rglob("*.o"))
    if jobs or not lib.is_file():
        lib.unlink(missing_ok=True)
        subprocess.run(["arm-none-eabi-ar", "rcs", str(lib), *objs], check=True)
    return lib, " ".join(flags)


def cmsis_elf(board: str, model_path: Path, anchor: Path, work: Path, workers: int = 2,
              opt: str = "-O2") -> tuple[Path, list[str]]:
    """The harness running one model's layers with CMSIS-NN for a board's core."""
    lib, flags = cmsis_library(board, anchor, work, opt=opt, workers=workers)
    out = lib.parent
    source, names = cmsis_layers_source(load_model(model_path))
    c = out / f"model_{model_path.stem}.c"
    if not c.is_file() or c.read_text() != source:
        c.write_text(source)
    obj, elf = c.with_suffix(".o"), out / f"{model_path.stem}.elf"
    subprocess.run(["arm-none-eabi-gcc", *flags.split(), "-c", str(c), "-o", str(obj)], check=True)
    core = CMSIS_CORES[board]
    subprocess.run(["arm-none-eabi-gcc", "-mthumb", *core.cpu.split(), "-nostartfiles", "-specs=nano.specs",
                    "-T", str(anchor / "harness" / core.ld), "-Wl,--gc-sections", "-o", str(elf), str(obj),
                    str(out / "startup.o"), str(out / "main.o"), str(lib), "-lc", "-lgcc"], check=True)
    return elf, names


@dataclass
class CmsisRun:
    layers: list[int]   # instructions per layer
    chain: int          # all layers back to back, once
    output: list[int]   # the last layer's first output values (all-zero input)


def run_cmsis(board: str, elf: Path) -> CmsisRun:
    """Runs the harness on the board's QEMU machine (-icount shift=0)."""
    b = device_board(board)
    proc = subprocess.run(["qemu-system-arm", "-machine", b.machine, *b.qemu_args, "-nographic", "-monitor", "none",
                           "-serial", "null", "-semihosting", "-icount", "shift=0", "-kernel", str(elf)],
                          capture_output=True, text=True, timeout=1800)
    text = proc.stdout + proc.stderr
    layers = [int(n) for n in re.findall(r"^layer \d+ .*? : (\d+)", text, re.M)]
    chain = re.search(r"^total_chain (\d+)", text, re.M)
    check = re.search(r"^loop_2000000 (\d+)", text, re.M)
    if "STATUS" in text or not chain or not check or abs(int(check.group(1)) - 2_000_000) > 100:
        raise RuntimeError(f"CMSIS-NN harness failed on {board}:\n{text[-2000:]}")
    out = re.search(r"^output(.*)$", text, re.M)
    return CmsisRun(layers, int(chain.group(1)), [int(v) for v in out.group(1).split()] if out else [])


def one_op_model(model, op) -> bytes:
    """A model of one operator of `model`: the same tensors, constants,
    quantization and options; its first input is the model's input."""
    T = model.main.tensors
    b = ModelBuilder(f"{op.opcode} {op.index}")
    sg = b.subgraph()
    index = {}
    for ti in list(op.inputs) + list(op.outputs):
        if ti < 0 or ti in index:
            continue
        t = T[ti]
        q = None
        if t.quantization is not None and t.quantization.scales:
            q = (t.quantization.scales, t.quantization.zero_points, t.quantization.dimension)
        index[ti] = sg.tensor(t.shape, t.dtype, data=t.data, quant=q, name=t.name, variable=t.is_variable)
    options = {k: v for k, v in op.options.items() if not k.endswith("AsNumpy")}
    if op.opcode == "RESHAPE" and "NewShapeAsNumpy" in op.options:
        options["NewShape"] = list(op.options["NewShapeAsNumpy"])
    sg.op(op.opcode, [index[i] if i >= 0 else -1 for i in op.inputs], [index[i] for i in op.outputs], **options)
    sg.inputs = [index[i] for i in op.inputs if i >= 0 and not T[i].is_constant]
    sg.outputs = [index[o] for o in op.outputs]
    return b.build()


def model_and_op_files(path: Path, model, runs: int) -> tuple[dict[str, bytes], dict[str, int], list[str]]:
    """The files of a per-layer measurement: the model (model.tflite) and
    each of its operators as a model of its own (opNN.tflite); how many
    invokes each is measured over (an operator's two at least); the
    operators' file names in order."""
    ops = [f"op{op.index:02d}.tflite" for op in model.main.operators]
    files = {"model.tflite": path.read_bytes()}
    files.update((name, one_op_model(model, op)) for name, op in zip(ops, model.main.operators))
    counts = {n: runs if n == "model.tflite" else max(runs, 2) for n in files}
    return files, counts, ops


# Device code: instructions of invoke() for each model file, its inputs set
# before every run (the arena may reuse their bytes): all zero, or the bytes
# of the files named; the counter's own cost is measured next to each run
# and taken off. `_count()` reads the count's low 30 bits, a small int
# (device.Target.counters): no reading allocates, so the pair costs what
# the readings around invoke() do; spans are taken modulo 2^30.
SPEED_DEVICE_CODE = """
import gc, tflm
ZERO = bytes(512)
_SIZE = {'int8': 1, 'uint8': 1, 'bool': 1, 'int16': 2, 'float32': 4, 'int32': 4, 'int64': 8}
def _zero(it, m):
    for i in range(len(m.inputs)):
        n = len(it.input(i)) * _SIZE.get(m.inputs[i].dtype, 1)
        for off in range(0, n, 512):
            it.set_input(i, ZERO[:min(512, n - off)], off)
def _file(name):
    f = open(ROOT + '/' + name, 'rb')
    try:
        return f, memoryview(f)
    except TypeError:
        return f, f.read()
def _fill(it, m, data):
    if not data:
        _zero(it, m)
    for i, x in enumerate(data):
        it.set_input(i, x)
def _measure(name, runs, inputs=()):
    f, buf = _file(name)
    files = [_file(n) for n in inputs]
    data = [x for _, x in files]
    m = tflm.Model(buf)
    it = tflm.Interpreter(m)
    _fill(it, m, data)
    it.invoke()
    total = 0
    for _ in range(runs):
        _fill(it, m, data)
        c = _count()
        d = _count()
        a = _count()
        it.invoke()
        total += ((_count() - a) & 0x3fffffff) - ((d - c) & 0x3fffffff)
    y = it.output(0)
    print('@RUN', name, total // runs, ' '.join(str(y[k]) for k in range(min(16, len(y)))))
    del it, m, buf, data
    f.close()
    for g, _ in files:
        g.close()
    gc.collect()
"""

def _counter_code(tgt, counter: str = "instructions") -> str:
    """The device code that binds `_count` to one of the target's own
    counters (device.Target.counters)."""
    try:
        return tgt.counters[counter]
    except KeyError:
        raise ValueError(f"{tgt.name} counts no {counter} (it counts: {', '.join(tgt.counters) or 'nothing'})") from None


def _number(text: str) -> int | float:
    """An output value as the device printed it: an integer, or a float for a float model."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def measure_ours(board: str, files: dict[str, bytes], runs: dict[str, int], firmware: Path | None = None,
                 timeout: float = 3600, counter: str = "instructions",
                 inputs: dict[str, list[bytes]] | None = None) -> dict[str, tuple[int, list]]:
    """Instructions per invoke of each model file on a board (and the first
    output values), in as few sessions as the board's ROMFS allows; on the
    emulated Pico, counter="cycles" counts the RP2040 emulator's cycles.
    inputs: raw bytes of a model's inputs (else all zero)."""
    tgt = make_target(board, firmware)
    inputs = inputs or {}
    names = {n: [f"{n}.in{i}" for i in range(len(inputs.get(n, ())))] for n in files}
    # A model travels with its inputs' files: batches are sized with them.
    sized = {n: files[n] + b"".join(inputs.get(n, ())) for n in files}
    results: dict[str, tuple[int, list]] = {}
    for batch in romfs_batches(tgt, sized):
        chunks = [_counter_code(tgt, counter), SPEED_DEVICE_CODE] + [
            f"_measure({n!r}, {runs[n]}, {names[n]!r})" for n in batch]
        shipped = {n: files[n] for n in batch}
        for n in batch:
            shipped.update(zip(names[n], inputs.get(n, ())))
        text = tgt.run(chunks, shipped, timeout=timeout)
        for line in text.splitlines():
            if line.startswith("@RUN "):
                parts = line.split()
                results[parts[1]] = (int(parts[2]), [_number(v) for v in parts[3:]])
        missing = [n for n in batch if n not in results]
        if missing:
            raise RuntimeError(f"{board}: no figure for {missing}:\n{text[-2000:]}")
    return results


def layer_kind(model, op) -> str:
    """The layer types of the tables."""
    T = model.main.tensors
    if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        w, x = T[op.inputs[1]], T[op.inputs[0]]
        fh, fw = w.shape[1], w.shape[2]
        if op.index == 0:
            return "first layer"
        if op.opcode == "DEPTHWISE_CONV_2D":
            return f"depthwise {fh}x{fw} s{op.options['StrideH']}"
        if fh == fw == 1 and x.shape[1] * x.shape[2] > 1:
            return "conv 1x1 (pointwise)"
    return "tail (pool, last conv/FC, reshape, softmax)"


@dataclass
class VsRow:
    model: str
    board: str
    names: list[str]
    kinds: list[str]
    cmsis: CmsisRun
    ours_whole: int
    ours_layers: list[int]
    same_output: bool
    baseline_whole: int | None = None
    baseline_layers: list[int] | None = None


def speed_vs_cmsis_rows(models: list[Path], boards: list[str], runs: int, anchor: Path = ANCHOR_DIR,
                        baseline: Path | None = None, workers: int = 2, progress=None) -> list[VsRow]:
    """CMSIS-NN's instructions and ours, whole model and layer by layer, on
    each board; with `baseline` (a build folder holding <BOARD>/firmware.elf
    of another version), that version's figures too."""
    work = build_dir() / "cmsis-nn"
    rows = []
    steps = [(b, m) for m in models for b in boards]
    for i, (board, path) in enumerate(steps):
        if progress:
            progress(i, len(steps), f"{path.stem} on {board}")
        model = load_model(path)
        elf, names = cmsis_elf(board, path, anchor, work, workers)
        cm = run_cmsis(board, elf)
        files, counts, ops = model_and_op_files(path, model, runs)
        ours = measure_ours(board, files, counts)
        row = VsRow(path.name, board, names, [layer_kind(model, op) for op in model.main.operators], cm,
                    ours["model.tflite"][0], [ours[n][0] for n in ops],
                    ours["model.tflite"][1][:len(cm.output)] == cm.output[:16])
        if baseline is not None:
            fw = baseline / board / "firmware.elf"
            base = measure_ours(board, files, counts, firmware=fw)
            row.baseline_whole = base["model.tflite"][0]
            row.baseline_layers = [base[n][0] for n in ops]
        rows.append(row)
    return rows


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b else "-"


def speed_vs_cmsis_markdown(rows: list[VsRow]) -> str:
    base = any(r.baseline_whole is not None for r in rows)
    lines = ["| model | board (core) | CMSIS-NN | ours | ours / CMSIS-NN |"
             + (" ours before | before / CMSIS-NN |" if base else "") + " same output |",
             "|---|---|---|---|---|" + ("---|---|" if base else "") + "---|"]
    for r in rows:
        cells = [r.model, f"{r.board} ({CMSIS_CORES[r.board].core})", f"{r.cmsis.chain:,}", f"{r.ours_whole:,}",
                 _ratio(r.ours_whole, r.cmsis.chain)]
        if base:
            cells += [f"{r.baseline_whole:,}", _ratio(r.baseline_whole, r.cmsis.chain)]
        cells.append("yes" if r.same_output else "NO")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "### By layer type", "",
              "| model | board | layer type | layers | CMSIS-NN | ours | ours / CMSIS-NN |"
              + (" before | before / CMSIS-NN |" if base else ""),
              "|---|---|---|---|---|---|---|" + ("---|---|" if base else "")]
    for r in rows:
        kinds: dict[str, list[int]] = {}
        for k, (kind, c, o) in enumerate(zip(r.kinds, r.cmsis.layers, r.ours_layers)):
            agg = kinds.setdefault(kind, [0, 0, 0, 0])
            agg[0] += 1
            agg[1] += c
            agg[2] += o
            agg[3] += r.baseline_layers[k] if r.baseline_layers else 0
        for kind, (n, c, o, b) in kinds.items():
            cells = [r.model, r.board, kind, str(n), f"{c:,}", f"{o:,}", _ratio(o, c)]
            if base:
                cells += [f"{b:,}", _ratio(b, c)]
            lines.append("| " + " | ".join(cells) + " |")
    for r in rows:
        lines += ["", f"### {r.model} on {r.board} ({CMSIS_CORES[r.board].core}), layer by layer", "",
                  "| # | layer | CMSIS-NN | ours | ours / CMSIS-NN |" + (" before |" if base else ""),
                  "|---|---|---|---|---|" + ("---|" if base else "")]
        for k, (name, c, o) in enumerate(zip(r.names, r.cmsis.layers, r.ours_layers)):
            cells = [str(k), name, f"{c:,}", f"{o:,}", _ratio(o, c)]
            if base:
                cells.append(f"{r.baseline_layers[k]:,}")
            lines.append("| " + " | ".join(cells) + " |")
        lines.append(f"| | sum of layers / whole model | {sum(r.cmsis.layers):,} / {r.cmsis.chain:,} | "
                     f"{sum(r.ours_layers):,} / {r.ours_whole:,} | |" + (" |" if base else ""))
    lines += ["", "Instructions per invoke counted by QEMU (`-icount shift=0`) on the same machine for both. "
              "CMSIS-NN: Arm's kernels (the anchor's tarball, `-O2`), called as TFLM's CMSIS-NN port calls "
              "them, by the anchor's bare-metal harness, all layers back to back from an all-zero input; "
              "kernels only, no interpreter. Ours: `invoke()` of the whole model from the board's flash "
              "(ROMFS), inputs all zero, the counter's own cost taken off; a layer is a model of that one "
              "operator (the same tensors, weights and options), so it includes invoke()'s call from "
              "Python and its dispatch. Same output: our model's first output values equal CMSIS-NN's."]
    return "\n".join(lines) + "\n"


def _board_rows(models: list[Path], boards: list[str], runs: int, measure, progress=None,
                baseline: Path | None = None) -> list[dict]:
    """Each runnable model on each board by measure(board, files, counts[,
    firmware=...]): "ours" plain, "prepared" (tflm-host prepare) and, with
    `baseline`, "before" (another version's firmware: <baseline>/<BOARD>/firmware.elf)."""
    todo = runnable_models(models)
    rows = []
    for i, board in enumerate(boards):
        if progress:
            progress(i, len(boards), board)
        files = {p.name: p.read_bytes() for p in todo}
        counts = {n: runs for n in files}
        ours = measure(board, files, counts)
        base = measure(board, files, counts, firmware=baseline / board / "firmware.elf") if baseline else {}
        prepared = measure(board, {n: prepare_model(d) for n, d in files.items()}, counts)
        for p in todo:
            rows.append({"model": p.name, "board": board, "ours": ours[p.name][0],
                         "before": base[p.name][0] if base else None, "prepared": prepared[p.name][0]})
    return rows


def _by_model(rows: list[dict]) -> dict[str, dict[str, dict]]:
    """Model -> board -> its row, in the rows' order."""
    by_model: dict[str, dict[str, dict]] = {}
    for r in rows:
        by_model.setdefault(r["model"], {})[r["board"]] = r
    return by_model


def speed_boards_rows(models: list[Path], boards: list[str], runs: int, baseline: Path | None = None,
                      progress=None) -> list[dict]:
    """Every runnable model's instructions per invoke on each board, and with
    `baseline` those of another version's firmware, and the same models
    prepared (tflm-host prepare)."""
    return _board_rows(models, boards, runs, measure_ours, progress, baseline)


def _prepared_markdown(rows: list[dict], boards: list[str], heads: dict[str, str],
                       figures: Callable[[dict, str], tuple[int, int]]) -> str:
    """Plain against prepared models per board: its column `heads[board]`,
    figures(row, board) the plain and the prepared figure."""
    lines = ["| model |" + "".join(f" {heads[b]} | {b}, prepared | prepared / plain |" for b in boards),
             "|---|" + "---|" * (3 * len(boards))]
    for model, per in _by_model(rows).items():
        cells = [model]
        for b in boards:
            r = per.get(b)
            if r is None:
                cells += ["-"] * 3
                continue
            plain, prep = figures(r, b)
            cells += [f"{plain:,}", f"{prep:,}", _ratio(prep, plain)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def speed_prepared_markdown(rows: list[dict], boards: list[str]) -> str:
    """Plain against prepared (tflm-host prepare) models, from speed_boards_rows."""
    return _prepared_markdown(rows, boards, {b: b for b in boards}, lambda r, b: (r["ours"], r["prepared"]))


def speed_boards_markdown(rows: list[dict], boards: list[str]) -> str:
    base = any(r["before"] is not None for r in rows)
    by_model = _by_model(rows)
    head = "| model |" + "".join(f" {b} |" + (" before | after / before |" if base else "") for b in boards)
    lines = [head, "|---|" + "---|" * (len(boards) * (3 if base else 1))]
    for model, per in by_model.items():
        cells = [model]
        for b in boards:
            r = per.get(b)
            if r is None:
                cells += ["-"] * (3 if base else 1)
                continue
            cells.append(f"{r['ours']:,}")
            if base:
                cells += [f"{r['before']:,}", _ratio(r["ours"], r["before"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def pico_speed_rows(models: list[Path], runs: int, anchor: Path = ANCHOR_DIR, workers: int = 2,
                    progress=None) -> list[dict]:
    """The real RPI_PICO firmware in the RP2040 emulator (instructions and
    cycles per invoke) next to CMSIS-NN's Cortex-M0 instructions (the harness
    on QEMU's microbit) for the models the harness runs."""
    vs = [m for m in models if m.name in CMSIS_MODELS]
    work = build_dir() / "cmsis-nn"
    rows = []
    files = {p.name: p.read_bytes() for p in vs}
    counts = {n: runs for n in files}
    if progress:
        progress(0, len(vs) + 2, "RPI_PICO instructions")
    instructions = measure_ours("RPI_PICO", files, counts)
    if progress:
        progress(1, len(vs) + 2, "RPI_PICO cycles")
    pico_cycles = measure_ours("RPI_PICO", files, counts, counter="cycles")
    for i, path in enumerate(vs):
        if progress:
            progress(i + 2, len(vs) + 2, f"CMSIS-NN {path.stem} on the Cortex-M0")
        elf, _ = cmsis_elf("MICROBIT", path, anchor, work, workers)
        cm = run_cmsis("MICROBIT", elf)
        rows.append({"model": path.name, "cmsis": cm.chain, "ours": instructions[path.name][0],
                     "cycles": pico_cycles[path.name][0],
                     "same_output": instructions[path.name][1][:len(cm.output)] == cm.output[:16]})
    return rows


def pico_speed_markdown(rows: list[dict]) -> str:
    lines = ["| model | CMSIS-NN, Cortex-M0 (QEMU microbit): instructions | ours, RPI_PICO firmware (RP2040 "
             "emulator): instructions | ours / CMSIS-NN | ours, RPI_PICO: cycles | same output |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['cmsis']:,} | {r['ours']:,} | {_ratio(r['ours'], r['cmsis'])} | "
                     f"{r['cycles']:,} | {'yes' if r['same_output'] else 'no'} |")
    lines += ["", "Ours: `invoke()` of the whole model on the real RPI_PICO firmware (Cortex-M0+, `-O2` kernels) "
              "running in rp2040js, from the board's flash, inputs all zero, the counter's own cost taken off; "
              "the emulator counts the instructions it executes and the core's cycles as its timing model "
              "gives them. CMSIS-NN: Arm's kernels run by the anchor's harness for the Cortex-M0 (Armv6-M, the "
              "RP2040's instruction set) on QEMU's microbit (`-icount shift=0`), kernels only, no "
              "interpreter; instructions (QEMU counts no cycles). Same output: our first output values equal "
              "CMSIS-NN's."]
    return "\n".join(lines) + "\n"


# The board on which speed_report measures what the memory techniques cost.
MEMORY_COST_BOARD = "MPS2_AN385"


def speed_report(models: list[Path], boards: list[str], runs: int, anchor: Path, baseline: Path | None,
                 workers: int, progress=None, baseline_label: str = "the baseline build folder's") -> str:
    """The side-by-side report: CMSIS-NN against ours on the models the
    harness runs, then every shared model on every board."""
    vs = [m for m in models if m.name in CMSIS_MODELS]
    cm_boards = [b for b in boards if b in CMSIS_CORES]
    pico = [b for b in boards if b == "RPI_PICO"]
    boards = [b for b in boards if b not in pico]
    text = "## Against CMSIS-NN\n\n" + speed_vs_cmsis_markdown(
        speed_vs_cmsis_rows(vs, cm_boards, runs, anchor, baseline, workers, progress))
    if pico:
        text += ("\n## The real Pico firmware in the RP2040 emulator, against CMSIS-NN on the Cortex-M0\n\n"
                 + pico_speed_markdown(pico_speed_rows(models, runs, anchor, workers, progress)))
    if MEMORY_COST_BOARD in boards:
        # What the arena techniques of docs/arena.md cost in instructions.
        text += (f"\n## What overlapped buffers cost ({MEMORY_COST_BOARD} and the host)\n\n"
                 + speed_markdown(speed_rows(vs, MEMORY_COST_BOARD, runs, progress), MEMORY_COST_BOARD)
                 + f"\n## What patch-based stages cost ({MEMORY_COST_BOARD} and the host)\n\n"
                 + patch_speed_markdown(patch_speed_rows(vs, MEMORY_COST_BOARD, runs, progress),
                                        MEMORY_COST_BOARD))
    rows = speed_boards_rows(models, boards, runs, baseline, progress)
    text += ("\n## Every shared model, every board\n\n" + speed_boards_markdown(rows, boards)
             + "\nInstructions per invoke (QEMU `-icount shift=0`), inputs all zero." + (f" Before: {baseline_label} firmware." if baseline else "") + "\n")
    text += ("\n## Prepared models, every board\n\n" + speed_prepared_markdown(rows, boards)
             + "\nThe same models after `tflm-host prepare`, measured the same way with the same firmware. A prepared "
             "model's kernel data is read from the model (flash), so it may hold what costs RAM otherwise: the int8 "
             "fully connected, LSTM and SVDF operators' starting sums with the input offset folded in, which saves "
             "an addition per multiply-accumulate.\n")
    return text


# -- speed in cycles (bench speed --cycles) ----------------------------------------
#
# The cycle estimator (host_tools/cycles, cycles.py) times the same runs:
# our firmware on the QEMU boards with a mark at qemuboard.icount_low() (each
# _count() of SPEED_DEVICE_CODE is one), CMSIS-NN's harness with a mark at
# its ticks(); the RPI_PICO firmware's cycles come from the RP2040
# emulator's own timing model.

# The layer-by-layer runs' counts are means over the runs; the cost of the
# counter's call comes off as it does for instructions.
def measure_ours_cycles(board: str, files: dict[str, bytes], runs: dict[str, int], firmware: Path | None = None,
                        timeout: float = 3600, beside: dict[str, bytes] | None = None
                        ) -> dict[str, tuple["cycles.Counts", list, int]]:
    """Per model file: its counts per invoke under the estimator (mean over
    the runs), its first output values, and the device's own instruction
    figure (qemuboard.icount_low) for the same runs. `beside`: files put
    into every run's ROMFS too, not measured (tflm.mpy on stock firmware)."""
    beside = beside or {}
    tgt = make_target(board, firmware)
    fw = tgt.board.firmware
    # The C function of the reader `_count` is bound to (QemuTarget.counters).
    mark = elf_symbol(fw, "qemuboard_icount_low")
    core = cycles.BOARD_CORES[board]
    regions = cycles.flash_regions(board, fw, (tgt.board.romfs_start, tgt.board.romfs_size))
    results = {}
    for batch in romfs_batches(tgt, files, sum(len(d) + 512 for d in beside.values())):
        chunks = [_counter_code(tgt), SPEED_DEVICE_CODE] + [f"_measure({n!r}, {runs[n]})" for n in batch]
        with tempfile.TemporaryDirectory(prefix="tflm-cycles-") as tmp:
            out = Path(tmp, "marks.txt")
            text = tgt.run(chunks, {**{n: files[n] for n in batch}, **beside}, timeout=timeout,
                           plugin=cycles.plugin_option(core, [mark], out, board, regions))
            marks = cycles.parse_marks(out.read_text() if out.is_file() else "")
        device = {}
        for line in text.splitlines():
            if line.startswith("@RUN "):
                parts = line.split()
                device[parts[1]] = (int(parts[2]), [_number(v) for v in parts[3:]])
        i = 0
        for n in batch:
            if n not in device or i + 4 * runs[n] > len(marks):
                raise RuntimeError(f"{board}: no figure for {n}:\n{text[-2000:]}")
            total = None
            for _ in range(runs[n]):
                c, d, a, e = marks[i:i + 4]
                i += 4
                one = (e - a) - (d - c)
                total = one if total is None else total + one
            results[n] = (total.div(runs[n]), device[n][1], device[n][0])
        if i != len(marks):
            raise RuntimeError(f"{board}: {len(marks)} marks for {i} counter calls")
    return results


# -- where an invoke's cycles go (bench profile) ------------------------------------

@dataclass
class Profile:
    """One invoke of a model under the estimator, by function."""
    name: str
    total: "cycles.Counts"        # the invoke's counts, as bench speed --cycles takes them (one run)
    span: "cycles.Counts"         # from the counter's reading before invoke() to the one after
    functions: dict[str, int]     # nominal cycles per function of the firmware, over the span


def profile_ours(board: str, paths: list[Path], firmware: Path | None = None, timeout: float = 3600,
                 progress=None) -> list[Profile]:
    """Each model's second invoke (inputs all zero) on a QEMU Arm board
    under the estimator with profile=1, a model a run: its counts between
    the marks around invoke(), and the cycles of the blocks that ran between
    them summed per function (they add up to the marks' difference: the
    invoke and the counter's call)."""
    tgt = make_target(board, firmware)
    fw = tgt.board.firmware
    mark = elf_symbol(fw, "qemuboard_icount_low")
    core = cycles.BOARD_CORES[board]
    regions = cycles.flash_regions(board, fw, (tgt.board.romfs_start, tgt.board.romfs_size))
    out = []
    for k, path in enumerate(paths):
        if progress:
            progress(k, len(paths), path.name)
        chunks = [_counter_code(tgt), SPEED_DEVICE_CODE, f"_measure({path.name!r}, 1)"]
        with tempfile.TemporaryDirectory(prefix="tflm-profile-") as tmp:
            log = Path(tmp, "marks.txt")
            text = tgt.run(chunks, {path.name: path.read_bytes()}, timeout=timeout,
                           plugin=cycles.plugin_option(core, [mark], log, board, regions, profile=True))
            raw = log.read_text() if log.is_file() else ""
        marks, spans = cycles.parse_marks(raw), cycles.parse_profile(raw)
        if "@RUN " not in text or len(marks) != 4 or len(spans) != 4:
            raise RuntimeError(f"{board}: no profile of {path.name}:\n{text[-2000:]}")
        c, d, a, e = marks
        # spans[3]: what ran from mark a (the reading before invoke()) to mark e (the one after).
        out.append(Profile(path.name, (e - a) - (d - c), e - a, cycles.by_function(fw, spans[3])))
    if progress:
        progress(len(paths), len(paths), "")
    return out


def profile_markdown(rows: list[Profile], board: str, top: int = 30) -> str:
    """The functions that took the most cycles in any of the models, a
    column per model, then the rest and the sums."""
    names = sorted({f for r in rows for f in r.functions},
                   key=lambda f: (-max(r.functions.get(f, 0) for r in rows), f))
    shown = names[:top]
    columns = ["function"] + [r.name for r in rows]
    body = ["| " + " | ".join([f"`{f}`"] + [f"{r.functions.get(f, 0):,}" for r in rows]) + " |" for f in shown]
    body.append("| (the rest) | " + " | ".join(f"{sum(v for f, v in r.functions.items() if f not in shown):,}"
                                             for r in rows) + " |")
    body.append("| **sum** | " + " | ".join(f"{sum(r.functions.values()):,}" for r in rows) + " |")
    body.append("| invoke(), as bench speed --cycles | " + " | ".join(f"{r.total.cycles:,}" for r in rows) + " |")
    core = cycles.CORE_NAMES[cycles.BOARD_CORES[board]]
    notes = [f"{board} ({core}): nominal cycles of one invoke (the second, inputs all zero) by function of the "
             "firmware, the cycle estimator's blocks summed by the function holding their first instruction "
             "(inlined code counts as its caller's). The sum holds the counter's call too, which bench speed "
             "--cycles takes off."]
    return _markdown_table(columns, body, notes)


# bench profile --patches's section of docs/speed.md
PROFILE_START = "<!-- tflm-host bench profile --patches: start -->"
PROFILE_END = "<!-- tflm-host bench profile --patches: end -->"


def stage_profile_rows(models: list[Path], board: str, progress=None) -> list[tuple[str, tuple, Profile, Profile]]:
    """Per model that a patch-based stage makes smaller: profiles of its
    invoke prepared without a stage and with the one --max-extra-macs
    PATCH_BOUND chooses."""
    rows = []
    for path, plain, patched, stage in staged_models(models, progress):
        with tempfile.TemporaryDirectory() as tmp:
            files = []
            for key, data in (("without", plain), ("with", patched)):
                f = Path(tmp, key) / path.name
                f.parent.mkdir()
                f.write_bytes(data)
                files.append(f)
            without, with_stage = profile_ours(board, files)
        rows.append((path.name, stage, without, with_stage))
    return rows


def stage_profile_markdown(rows: list[tuple[str, tuple, Profile, Profile]], board: str, top: int | None = None) -> str:
    """Per model, the functions whose cycles the stage changes the most."""
    core = cycles.CORE_NAMES[cycles.BOARD_CORES[board]]
    parts = []
    for name, stage, without, with_stage in rows:
        split, gh, gw, extra, start, mode = stage
        a, b = without.functions, with_stage.functions
        names = sorted(set(a) | set(b), key=lambda f: (-abs(b.get(f, 0) - a.get(f, 0)), f))
        shown = names[:top or 12]
        body = [f"| `{f}` | {a.get(f, 0):,} | {b.get(f, 0):,} | {b.get(f, 0) - a.get(f, 0):+,} |" for f in shown]
        rest_a = sum(v for f, v in a.items() if f not in shown)
        rest_b = sum(v for f, v in b.items() if f not in shown)
        body.append(f"| (the rest) | {rest_a:,} | {rest_b:,} | {rest_b - rest_a:+,} |")
        ta, tb = without.total.cycles, with_stage.total.cycles
        body.append(f"| invoke() | {ta:,} | {tb:,} | {tb - ta:+,} ({(tb - ta) / ta:+.2%}) |")
        parts.append(f"### {name}: ops {start}-{split - 1}, {patches.layout_text(gh, gw, mode)} ({extra:.2%} extra "
                     f"MACs), {board} ({core})\n\n"
                     + _markdown_table(["function", "without a stage", "with the stage", "difference"], body, []))
    note = (f"The functions whose cycles a model's patch-based stage (the one `prepare --max-extra-macs 20%` "
            f"chooses) changes the most, on {board}: nominal cycles of one invoke (the second, inputs all zero) "
            "by function of the firmware, the cycle estimator's blocks summed by the function holding their "
            "first instruction (inlined code counts as its caller's; a call's branch as the function called). "
            "The functions' rows add up to the span between the counter's readings around invoke(), whose "
            "own call the invoke() row leaves out, as bench speed --cycles does. A stage runs each of its "
            "operators' kernels once per patch, over maps a few pixels wide where kernels take other paths "
            "than over the whole map, and copies what its patches read: their windows (`patch_copy_down`), "
            "the halos patches keep (`keep_run` and `patch_copy_words` in a stage keeping them). Each kernel "
            "gives a copy of its operator's header a patch's geometry on the stack (`run_region` calls it).\n")
    return note + "\n" + "\n".join(parts)


def write_profile(doc: Path, table: str, boards: list[str], only: list[str] | None) -> None:
    """Puts bench profile --patches's section into docs/speed.md."""
    opts = f" --only {' '.join(only)}" if only else ""
    write_section(doc, PROFILE_START, PROFILE_END, "Where a patch-based stage's cycles go",
                  f"tflm-host bench profile --patches --boards {' '.join(boards)}{opts} --out FILE", table)


@dataclass
class CmsisCycles:
    opt: str
    run: CmsisRun             # its own instruction figures and output
    layers: list              # cycles.Counts per layer
    chain: "cycles.Counts"    # all layers back to back, once


def run_cmsis_cycles(board: str, elf: Path, opt: str) -> CmsisCycles:
    """The harness on the board's QEMU machine under the estimator, with a
    mark at ticks(): its calls are, in order, 1002 (the call's cost), 2 (the
    check loop), per layer 2 and 2 more when the layer is repeated, then 2
    for the chain."""
    core = cycles.BOARD_CORES[board]
    marks, text = cycles.run_qemu_elf(elf, core, [cycles.symbol(elf, "ticks")], board=board, timeout=3600,
                                      extra=["-icount", "shift=0"])
    layer_lines = re.findall(r"^layer \d+ .*? : (\d+)(?: reps (\d+))?", text, re.M)
    chain = re.search(r"^total_chain (\d+)", text, re.M)
    if "STATUS" in text or not chain or not layer_lines:
        raise RuntimeError(f"CMSIS-NN harness failed on {board}:\n{text[-2000:]}")
    out = re.search(r"^output(.*)$", text, re.M)
    run = CmsisRun([int(n) for n, _ in layer_lines], int(chain.group(1)),
                   [int(v) for v in out.group(1).split()] if out else [])
    i = 1002 + 2
    layers = []
    for _, reps in layer_lines:
        if reps:
            layers.append((marks[i + 3] - marks[i + 2]).div(int(reps)))
            i += 4
        else:
            layers.append(marks[i + 1] - marks[i])
            i += 2
    if i + 2 != len(marks):
        raise RuntimeError(f"CMSIS-NN harness on {board}: {len(marks)} ticks() calls, expected {i + 2}")
    return CmsisCycles(opt, run, layers, marks[i + 1] - marks[i])


CMSIS_OPTS = ("-O2", "-O3", "-Os")


def cmsis_best(board: str, path: Path, anchor: Path, work: Path, workers: int = 2) -> tuple[CmsisCycles, dict]:
    """CMSIS-NN built at each optimisation level; the one with the fewest
    cycles for the whole chain, and every level's cycles."""
    runs = {}
    for opt in CMSIS_OPTS:
        elf, names = cmsis_elf(board, path, anchor, work, workers, opt)
        runs[opt] = run_cmsis_cycles(board, elf, opt)
    best = min(runs.values(), key=lambda r: r.chain.cycles)
    return best, {o: r.chain.cycles for o, r in runs.items()}


@dataclass
class CyclesRow:
    model: str
    board: str
    names: list[str]
    kinds: list[str]
    ours: "cycles.Counts"
    ours_layers: list
    ours_device_insns: int
    cmsis: CmsisCycles | None  # None: a model the harness does not run, or no CMSIS-NN build for the core
    cmsis_opts: dict
    same_output: bool
    # What timed ours: "estimator", the emulator that counts the board's own
    # cycles (device.Target.timing), or "" (instructions only: cycles are 0).
    timing: str = "estimator"
    layer_macs: list[int] = field(default_factory=list)


# A board whose core has no CMSIS-NN build of its own: the QEMU board whose
# build runs the same instruction set (the RP2040's Cortex-M0+ is MICROBIT's).
CMSIS_STAND_IN = {b.name: b.cmsis_nn_stand_in for b in board_info.boards() if b.cmsis_nn_stand_in}


def cmsis_board(board: str) -> str | None:
    """The QEMU board whose CMSIS-NN figures stand next to a board's, or None
    (no CMSIS-NN for its core: the ESP32's Xtensa)."""
    return board if board in CMSIS_CORES else CMSIS_STAND_IN.get(board)


def board_timing(board: str) -> str:
    """What gives a board's cycles: "estimator" (the QEMU Arm boards,
    cycles.BOARD_CORES), the emulator of a board that counts them itself, or
    "" when nothing does."""
    return "estimator" if board in cycles.BOARD_CORES else make_target(board).timing


def measure_counts(board: str, files: dict[str, bytes], runs: dict[str, int]) -> dict[str, tuple]:
    """Per model file on any board: its counts per invoke (cycles.Counts;
    cycles 0 where nothing times the board), its first output values, and
    the instructions by the device's own counter."""
    if board_timing(board) == "estimator":
        return measure_ours_cycles(board, files, runs)
    insns = measure_ours(board, files, runs)
    cyc = measure_ours(board, files, runs, counter="cycles") if board_timing(board) else {}
    out = {}
    for n, (i, values) in insns.items():
        c = cyc[n][0] if cyc else 0
        out[n] = (cycles.Counts(insns=i, cycles=c, min=c, max=c), values, i)
    return out


def check_timed(board: str) -> None:
    """ValueError unless something counts the board's cycles."""
    timed = sorted(cycles.BOARD_CORES) + sorted(PICO_BOARDS)
    if board not in timed:
        raise ValueError(f"nothing counts {board}'s cycles: boards whose cycles are counted: {', '.join(timed)}")


def front_files(data: bytes, points: list[patches.Schedule]) -> dict[str, bytes]:
    """The model (prepared) without a stage, then with each stage and grid of
    `points` (the trade-off curve, found.front(), or found.fast_front()), as
    files to measure."""
    base = patches.without_schedule(data)
    files = {"stage00.tflite": base}
    for k, s in enumerate(points, 1):
        files[f"stage{k:02d}.tflite"] = patches.with_schedule(base, s.split, *s.grid, s.start, s.mode)
    return files


def front_cycles(board: str, data: bytes, points: list[patches.Schedule]) -> list[int]:
    """Cycles per invoke (inputs all zero) of the model without a stage, then
    of each of `points` (front_files), on a board whose cycles something
    counts. Every point must give the output the model gives without one."""
    check_timed(board)
    files = front_files(data, points)
    counts = measure_counts(board, files, {n: 1 for n in files})
    plain = counts["stage00.tflite"][1]
    wrong = [n for n in files if counts[n][1] != plain]
    if wrong:
        raise RuntimeError(f"{board}: the patch-based stages of {', '.join(wrong)} change the output")
    return [counts[n][0].cycles for n in files]


def stage_front_rows(models: list[Path], boards: list[str], progress=None) -> list[dict]:
    """Per model that a patch-based stage makes smaller: the trade-off curve
    (prepare --explain), the point --max-extra-macs PATCH_BOUND chooses, and
    each point's cycles on each board the estimator times."""
    timed = [b for b in boards if board_timing(b) == "estimator"]
    rows = []
    for path in runnable(models, progress):
        data = prepare_model(path.read_bytes())
        found = patches.search(data)
        if not found.front():
            continue
        fast = found.fast_front(PATCH_BOUND)
        rows.append({"model": path.name, "found": found, "chosen": found.best(PATCH_BOUND),
                     "cycles": {b: front_cycles(b, data, found.front()) for b in timed},
                     "fast": fast, "fast_cycles": {b: front_cycles(b, data, fast) for b in timed}})
    return rows


# The bounds on cycles stage_front_markdown shows prepare --max-slowdown's choice for.
SLOWDOWNS = (0.0, 0.05, 0.10, 0.20)


def slowdown_lines(row: dict) -> list[str]:
    """A model's table of what `prepare --max-extra-macs PATCH_BOUND
    --max-slowdown S --cycles BOARD` chooses for each S of SLOWDOWNS on each
    board (the fast front's points timed there)."""
    boards = list(row["fast_cycles"])
    lines = ["| `--max-slowdown` |" + "".join(f" {b} ({_core_of(b)}) |" for b in boards),
             "|---|" + "---|" * len(boards)]
    for bound in SLOWDOWNS:
        cells = []
        for b in boards:
            c = row["fast_cycles"][b]
            s = patches.within_slowdown(row["fast"], c, bound)
            cells.append("no stage" if s is None else
                         f"{s.used:,} B: ops {s.ops}, {s.layout}, {c[1 + row['fast'].index(s)] / c[0] - 1:+.2%}")
        lines.append(f"| {bound:.0%} | " + " | ".join(cells) + " |")
    return lines


def stage_front_markdown(rows: list[dict]) -> str:
    text = ""
    for r in rows:
        found, boards = r["found"], list(r["cycles"])
        front = found.front()
        lines = ["| arena_used_bytes | extra MACs | stage, grid |"
                 + "".join(f" {b} ({_core_of(b)}): cycles | slower |" for b in boards),
                 "|---|---|---|" + "---|---|" * len(boards)]
        within = 0
        for k, s in enumerate([None] + front):
            mark = " (chosen)" if s is not None and s == r["chosen"] else ""
            cells = [f"{found.plain_used:,}", "0", "-"] if s is None else \
                [f"{s.used:,}", f"{s.extra_macs:,} ({s.overhead:.2%})", f"ops {s.ops}, {s.layout}{mark}"]
            slower = []
            for b in boards:
                c = r["cycles"][b]
                slower.append(c[k] / c[0] - 1)
                cells += [f"{c[k]:,}", "-" if s is None else f"{slower[-1]:+.2%}"]
            # (A stage that saves MACs need only not be slower.)
            if s is not None and max(slower) <= max(s.overhead, 0.0):
                within += 1
            lines.append("| " + " | ".join(cells) + " |")
        text += (f"\n### {r['model']}\n\n" + "\n".join(lines) + "\n\n"
                 f"Stages slower on no board by more than the share of MACs they add: {within} of {len(front)}.\n\n"
                 f"With a bound on cycles too (`--max-extra-macs {PATCH_BOUND:.0%} --max-slowdown S --cycles BOARD`; "
                 f"{len(r['fast'])} stages and grids timed on each board):\n\n" + "\n".join(slowdown_lines(r)) + "\n")
    return text + (
        "\nEach point of `tflm-host prepare --explain`'s curve (no other stage and grid has both a smaller arena "
        "and fewer extra MACs), timed by the cycle estimator: cycles per invoke of the prepared model with that "
        "stage, inputs all zero, measured as above (`tflm-host prepare MODEL -o OUT --explain --cycles BOARD` "
        "prints one board's). Chosen: what `--max-extra-macs "
        f"{PATCH_BOUND:.0%}` picks. Extra MACs: the halos' recomputation, as a share of the model's "
        "convolution and fully connected MACs. The halos are recomputed in the stage's layers, which take more "
        "cycles per MAC than the model's average (the first convolution and the depthwise layers), so a stage "
        "costs a larger share of cycles than of MACs. A stage in bands of rows ('N bands') or in patches keeping "
        "their halos ('GxG kept') recomputes nothing: what it costs is each operator's kernel run again in every "
        "band or patch, over maps a few pixels wide in fine grids, and the copies of the halos kept. Every point's "
        "output equals the model's without a stage. With a bound on cycles: the smallest arena, among the stages "
        "and grids within the MAC bound that no other beats on arena, extra MACs and kernel runs together (each "
        "timed on the board, as `prepare --max-slowdown` times them), whose invoke is at most S slower than the "
        "model's without a stage, with how much slower it is.\n")


def speed_cycles_rows(models: list[Path], boards: list[str], runs: int, anchor: Path = ANCHOR_DIR,
                      workers: int = 2, progress=None) -> list[CyclesRow]:
    """Ours and CMSIS-NN's instructions and cycles, whole model and layer by
    layer, on each board: the QEMU Arm boards timed by the estimator, a
    board that counts its own cycles by its emulator (RPI_PICO), one without
    a timing model in instructions (ESP32_GENERIC); CMSIS-NN's figures from
    the board's core or its stand-in (CMSIS_STAND_IN), none for a core
    without a CMSIS-NN build."""
    work = build_dir() / "cmsis-nn"
    rows = []
    steps = [(b, m) for m in models for b in boards]
    cmsis_runs: dict[tuple[str, str], tuple] = {}
    for i, (board, path) in enumerate(steps):
        if progress:
            progress(i, len(steps), f"{path.stem} on {board}")
        timing = board_timing(board)
        model = load_model(path)
        kinds = [layer_kind(model, op) for op in model.main.operators]
        try:
            names = cmsis_layers_source(model)[1]
        except ValueError:
            names = None  # not a chain the harness runs: ours alone, the whole model
        if names is None:
            whole = measure_counts(board, {path.name: path.read_bytes()}, {path.name: runs})[path.name]
            rows.append(CyclesRow(path.name, board, [], [], whole[0], [], whole[2], None, {}, False, timing))
            continue
        cm_board = cmsis_board(board)
        if cm_board and (cm_board, path.name) not in cmsis_runs:
            cmsis_runs[cm_board, path.name] = cmsis_best(cm_board, path, anchor, work, workers)
        cm, opts = cmsis_runs[cm_board, path.name] if cm_board else (None, {})
        files, counts, ops = model_and_op_files(path, model, runs)
        ours = measure_counts(board, files, counts)
        whole = ours["model.tflite"]
        same = bool(cm) and whole[1][:len(cm.run.output)] == cm.run.output[:16]
        rows.append(CyclesRow(path.name, board, names, kinds, whole[0], [ours[n][0] for n in ops], whole[2], cm, opts,
                              same, timing, [model_macs(load_model(files[n])) for n in ops]))
    return rows


def _ms(cycles_: int, hz: int) -> str:
    return f"{cycles_ * 1000 / hz:.1f}"


def _core_of(board: str) -> str:
    return cycles.CORE_NAMES[cycles.BOARD_CORES.get(board) or cycles.REAL_BOARDS[board].core]


def speed_cycles_json(rows: list[CyclesRow]) -> list[dict]:
    """One object per model and board (bench speed --cycles --json); cycles
    are null where nothing times the board."""
    out = []
    for r in rows:
        real = cycles.REAL_BOARDS[r.board]
        timed = bool(r.timing)
        cm = r.cmsis.chain if r.cmsis else None
        cm_layers = r.cmsis.layers if cm else [None] * len(r.ours_layers)
        out.append({
            "model": r.model, "board": r.board, "core": _core_of(r.board), "real_board": real.chip,
            "clock_hz": real.hz, "timing": r.timing or None,
            "instructions": r.ours.insns, "cycles": r.ours.cycles if timed else None,
            "cycles_min": r.ours.min if timed else None, "cycles_max": r.ours.max if timed else None,
            "ms": r.ours.cycles * 1000 / real.hz if timed else None,
            "flash_wait_cycles": cycles.flash_cycles(r.board, r.ours) if r.timing == "estimator" else None,
            "cmsis_nn_opt": r.cmsis.opt if cm else None, "cmsis_nn_instructions": cm.insns if cm else None,
            "cmsis_nn_cycles": cm.cycles if cm else None, "cmsis_nn_cycles_min": cm.min if cm else None,
            "cmsis_nn_cycles_max": cm.max if cm else None,
            "cmsis_nn_ms": cm.cycles * 1000 / real.hz if cm else None,
            "cmsis_nn_flash_wait_cycles": cycles.flash_cycles(cmsis_board(r.board), cm) if cm else None,
            "cmsis_nn_cycles_by_opt": r.cmsis_opts, "same_output": r.same_output if cm else None,
            "classes": {k: {"instructions": v[0], "cycles": v[1]} for k, v in r.ours.classes.items()},
            "cmsis_nn_classes": {k: {"instructions": v[0], "cycles": v[1]} for k, v in cm.classes.items()} if cm else None,
            "layers": [{"name": n, "kind": k, "macs": m, "instructions": o.insns, "cycles": o.cycles if timed else None,
                        "cmsis_nn_instructions": c.insns if c else None, "cmsis_nn_cycles": c.cycles if c else None}
                       for n, k, m, o, c in zip(r.names, r.kinds, r.layer_macs, r.ours_layers, cm_layers)],
        })
    return out


_CLASS_COLUMNS = ("alu", "mul", "mull", "dsp", "load", "store", "multi", "branch", "fp", "sys")


def _class_share(c, k: str) -> str:
    n, cyc = c.classes.get(k, (0, 0))
    return f"{100 * cyc / c.cycles:.0f}%" if c.cycles and cyc else "-"


def _stalls(c) -> str:
    n = c.events.get("interlock", 0)
    return f"{n:,} ({100 * n / c.cycles:.1f}%)" if c.cycles else "-"


def _vs_lines(rows: list[CyclesRow]) -> list[str]:
    """The table of whole models, ours against CMSIS-NN."""
    lines = ["| model | board (core) | real board, clock | CMSIS-NN: instructions | CMSIS-NN: cycles (best level) | "
             "ours: instructions | ours: cycles | ours / CMSIS-NN, cycles | ours / CMSIS-NN, instructions | "
             "ms, CMSIS-NN / ours | flash wait cycles, CMSIS-NN / ours | same output |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        real = cycles.REAL_BOARDS[r.board]
        cm = r.cmsis.chain if r.cmsis else None
        ours_cycles = "-" if not r.timing else f"{r.ours.cycles:,}" + (
            f" ({r.timing})" if r.timing != "estimator" else "")
        flash = ((f"{cycles.flash_cycles(cmsis_board(r.board), cm):,}" if cm else "-") + " / "
                 + (f"{cycles.flash_cycles(r.board, r.ours):,}" if r.timing == "estimator" else "-"))
        lines.append(
            f"| {r.model} | {r.board} ({_core_of(r.board)}) | {real.chip}, {real.hz // 1_000_000} MHz | "
            + (f"{cm.insns:,} | {cm.cycles:,} ({r.cmsis.opt}) | " if cm else "- | - | ")
            + f"{r.ours.insns:,} | {ours_cycles} | "
            + (f"{_ratio(r.ours.cycles, cm.cycles) if r.timing else '-'} | {_ratio(r.ours.insns, cm.insns)} | "
               if cm else "- | - | ")
            + (f"{_ms(cm.cycles, real.hz)}" if cm else "-")
            + f" / {_ms(r.ours.cycles, real.hz) if r.timing else '-'} | {flash} | "
            + ("-" if not cm else "yes" if r.same_output else "NO") + " |")
    return lines


def speed_cycles_markdown(rows: list[CyclesRow]) -> str:
    lines = _vs_lines(rows)
    lines += ["", "Cycles per invoke: the estimator's nominal figure (see *The cycle estimator* below) on the QEMU "
              "Arm boards" + _own_counters_note(rows) + ". CMSIS-NN: Arm's kernels built at -O2, -O3 and -Os, the "
              "level with the fewest cycles shown, run by the anchor's bare-metal harness, all layers back to "
              "back from an all-zero input: kernels only, no interpreter. Ours: `invoke()` of the whole model "
              "from the board's flash (ROMFS), inputs all zero, the counter's own cost taken off. Milliseconds at "
              "the real board's clock, flash wait states apart (their own column: upper bounds, see below). "
              "Same output: our model's first output values equal CMSIS-NN's.",
              "", "### The least and most cycles (the TRM's ranges)", "",
              "| model | board | CMSIS-NN: least - most | ours: least - most |", "|---|---|---|---|"]
    for r in rows:
        if r.timing != "estimator":
            continue
        cm = f"{r.cmsis.chain.min:,} - {r.cmsis.chain.max:,}" if r.cmsis else "-"
        lines.append(f"| {r.model} | {r.board} | {cm} | {r.ours.min:,} - {r.ours.max:,} |")
    lines += ["", "### Where the cycles go", "",
              "| model | board | kernels | " + " | ".join(_CLASS_COLUMNS) + " | stalls |",
              "|---|---|---|" + "---|" * (len(_CLASS_COLUMNS) + 1)]
    for r in rows:
        if r.timing != "estimator" or not r.cmsis:
            continue
        for who, c in (("CMSIS-NN", r.cmsis.chain), ("ours", r.ours)):
            lines.append(f"| {r.model} | {r.board} | {who} | " + " | ".join(_class_share(c, k) for k in _CLASS_COLUMNS)
                         + f" | {_stalls(c)} |")
    lines += ["", "Shares of the nominal cycles by instruction class (mul: MUL, MLA, MLS; mull: the 64-bit "
              "multiplies, at their worst on the M3; dsp: the M4's DSP instructions; multi: LDM, STM, PUSH, POP, "
              "LDRD, STRD). Stalls: loads and stores that waited for an address computed by the instruction "
              "before them, and their share of the cycles."]
    lines += ["", "### By layer type, in cycles", "",
              "| model | board | layer type | layers | CMSIS-NN: cycles | ours: cycles | ours / CMSIS-NN, cycles | "
              "ours / CMSIS-NN, instructions |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.timing != "estimator" or not r.cmsis:
            continue
        kinds: dict[str, list[int]] = {}
        for kind, c, o in zip(r.kinds, r.cmsis.layers, r.ours_layers):
            agg = kinds.setdefault(kind, [0, 0, 0, 0, 0])
            agg[0] += 1
            agg[1] += c.cycles
            agg[2] += o.cycles
            agg[3] += c.insns
            agg[4] += o.insns
        for kind, (n, c, o, ci, oi) in kinds.items():
            lines.append(f"| {r.model} | {r.board} | {kind} | {n} | {c:,} | {o:,} | {_ratio(o, c)} | {_ratio(oi, ci)} |")
    for r in rows:
        if r.timing != "estimator" or not r.cmsis:
            continue
        lines += ["", f"### {r.model} on {r.board} ({_core_of(r.board)}), layer by layer", "",
                  "| # | layer | CMSIS-NN: instructions | CMSIS-NN: cycles | ours: instructions | ours: cycles | "
                  "ours / CMSIS-NN, cycles |", "|---|---|---|---|---|---|---|"]
        for k, (name, c, o) in enumerate(zip(r.names, r.cmsis.layers, r.ours_layers)):
            lines.append(f"| {k} | {name} | {c.insns:,} | {c.cycles:,} | {o.insns:,} | {o.cycles:,} | "
                         f"{_ratio(o.cycles, c.cycles)} |")
        lines.append(f"| | sum of layers / whole model | {sum(c.insns for c in r.cmsis.layers):,} / "
                     f"{r.cmsis.chain.insns:,} | {sum(c.cycles for c in r.cmsis.layers):,} / {r.cmsis.chain.cycles:,} | "
                     f"{sum(o.insns for o in r.ours_layers):,} / {r.ours.insns:,} | "
                     f"{sum(o.cycles for o in r.ours_layers):,} / {r.ours.cycles:,} | |")
    lines += ["", "A layer of ours is a model of that one operator (the same tensors, weights and options), so it "
              "includes invoke()'s call from Python and its dispatch.", "", "### By layer type, every board: "
              "instructions per multiply-accumulate", "", layers_per_mac_markdown(rows)]
    return "\n".join(lines) + "\n"


def _own_counters_note(rows: list, cmsis: bool = True) -> str:
    """How the boards the estimator does not time were counted (device.Target.counted_by),
    and (`cmsis`) whose CMSIS-NN figures stand next to theirs."""
    boards = list(dict.fromkeys(r.board if isinstance(r, CyclesRow) else r["board"] for r in rows))
    notes = []
    for b in boards:
        if board_timing(b) == "estimator":
            continue
        stand_in = cmsis_board(b)
        if not cmsis:
            against = ""
        elif stand_in:
            against = f", next to CMSIS-NN's on {stand_in} ({_core_of(stand_in)})"
        else:
            against = f", with no CMSIS-NN figure (CMSIS-NN has no kernels for the {_core_of(b)})"
        notes.append(f"; on {b} the real firmware's figures by {make_target(b).counted_by}{against}")
    return "".join(notes)


def layers_per_mac_markdown(rows: list[CyclesRow]) -> str:
    """Our instructions per multiply-accumulate by model and layer type, one
    column per board: the layer types where a core does worse than the
    others (the boards' instructions differ, so per MAC is the common unit)."""
    boards = list(dict.fromkeys(r.board for r in rows if r.ours_layers))
    table: dict[tuple[str, str], dict] = {}
    for r in rows:
        for kind, macs, o in zip(r.kinds, r.layer_macs, r.ours_layers):
            cell = table.setdefault((r.model, kind), {"layers": {}, "macs": {}, "insns": {}})
            cell["layers"][r.board] = cell["layers"].get(r.board, 0) + 1
            cell["macs"][r.board] = cell["macs"].get(r.board, 0) + macs
            cell["insns"][r.board] = cell["insns"].get(r.board, 0) + o.insns
    lines = ["| model | layer type | layers | MACs |" + "".join(f" {b} ({_core_of(b)}) |" for b in boards),
             "|---|---|---|---|" + "---|" * len(boards)]
    for (model, kind), cell in table.items():
        first = boards[0] if boards[0] in cell["macs"] else next(iter(cell["macs"]))
        macs = cell["macs"][first]
        cells = [model, kind, str(cell["layers"][first]), f"{macs:,}"]
        for b in boards:
            insns = cell["insns"].get(b)
            cells.append("-" if insns is None else f"{insns / macs:.1f}" if macs else f"{insns:,} instructions")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Instructions of ours per multiply-accumulate (convolutions and fully connected layers; a type "
              "without MACs: its instructions), the layers of each type summed, every layer a model of its own "
              "as above; counted as in the first table."]
    return "\n".join(lines) + "\n"


def estimator_check_rows(models: list[Path], workers: int = 2, progress=None) -> list:
    """The estimator's Cortex-M0+ cycles against the RP2040 emulator's for
    one invoke of each model by the same bare-metal object code
    (cycles.engine_check); a model that does not run there is left out."""
    work = build_dir() / "cycles" / "engine"
    rows = []
    for path in runnable(models, progress, lambda path: f"{path.stem}: estimator and rp2040js"):
        try:
            rows.append(cycles.engine_check(path, work, workers))
        except RuntimeError as e:
            rows.append((path.name, str(e).splitlines()[-1][:120] if str(e) else "failed"))
    return rows


def estimator_check_markdown(rows: list) -> str:
    lines = ["| model | instructions (estimator / rp2040js) | cycles: estimator (Cortex-M0+) | cycles: rp2040js | "
             "estimator / rp2040js - 1 | PUSH with LR + POP with PC | difference less those | same output |",
             "|---|---|---|---|---|---|---|---|"]
    worst = 0.0
    for r in rows:
        if isinstance(r, tuple):
            lines.append(f"| {r[0]} | did not run bare metal: {r[1]} | | | | | | |")
            continue
        e, p = r.estimator, r.emulator
        worst = max(worst, abs(r.difference))
        lines.append(f"| {r.model} | {e.insns:,} / {p.insns:,} | {e.cycles:,} | {p.cycles:,} | "
                     f"{r.difference * 100:+.2f}% | {r.explained:,} | {e.cycles - p.cycles - r.explained:,} | "
                     f"{'yes' if r.output_qemu == r.output_pico else 'NO'} |")
    lines += ["", f"Largest difference: {worst * 100:.2f}%. One invoke (after a first one) of each shared model by the "
              "engine alone, bare metal (tests/cycles/engine_main.c): the same object files (ARMv6-M, the RPI_PICO "
              "firmware's flags: engine -Os, kernels -O2), linked once for QEMU's microbit (the estimator, "
              "Cortex-M0+ table) and once for the RP2040 (rp2040js), the model in flash, data in SRAM; only "
              "addresses differ, so both run the same instructions (the counts above). rp2040js's timing counts "
              "N of PUSH and POP without LR and PC, where the TRM counts them: one cycle per PUSH with LR and per "
              "POP with PC, which is the whole difference (the last column but one)."]
    return "\n".join(lines) + "\n"


def estimator_markdown() -> str:
    """How the estimator counts (docs/speed.md)."""
    boards = "\n".join(f"- {b} ({cycles.REAL_BOARDS[b].chip}): {cycles.REAL_BOARDS[b].note}."
                       for b in dict.fromkeys(b for _, b in sorted(cycles.qemu_boards_by_core().items())))
    return f"""The cycle counts come from a QEMU TCG plugin of the project's (host_tools/cycles, built by `make
cycles-plugin`, part of `make deps`, against the plugin header of the installed QEMU's own Debian source
package). As QEMU translates a block, the plugin decodes each Thumb instruction and gives it the cycles of
its core's Technical Reference Manual; as blocks run it adds what depends on execution. Marks at instruction
addresses (`qemuboard.icount_low()` in our firmware, `ticks()` in CMSIS-NN's harness) print its counters.

Sources: Cortex-M0 TRM (DDI 0432C) and Cortex-M0+ TRM (DDI 0484C), table 3-1 (the M0+ with the single-cycle
multiplier, as on the RP2040); Cortex-M3 TRM r2p1 (100165_0201), table 3-1 and 3.3.2 *Load/store timings*;
Cortex-M4 TRM (DDI 0439D), tables 3-1, 3-2 (DSP) and 7-1 (FPU) and 3.3.2. MICROBIT is timed as a Cortex-M0+
(the RP2040's core; the plugin also has the Cortex-M0 table), MPS2_AN385 as a Cortex-M3, NETDUINOPLUS2 as a
Cortex-M4F.

How the TRMs' prose and ranges are read (the nominal figure; *least* and *most* take the ends of every range):
- N of LDM, STM, PUSH and POP counts LR and PC. Taken branches on the M0/M0+ cost the table's figure; on the
  M3/M4 1+P, the refill P taken from the target: 1, or 2 for a 32-bit target across a word boundary, and 3 when
  the PC comes from memory (LDR PC, POP/LDM with PC, TBB/TBH: "three cycles for the pipeline reload");
  least 1, most 3. Whether a branch was taken comes from the next block's address.
- M3/M4 loads: 2 cycles, 1 when right behind a single load whose result is not in the address ("LDR [any] are
  pipelined when possible"); a store with an immediate offset 1 ("always one cycle"), with a register offset
  2 (1 behind a load); nothing pipelines after a store; a load or store whose address is the previous
  instruction's data-processing result waits one cycle; unaligned accesses add 1 or 2 (from the address);
  the PC-relative load's possible extra cycle only in *most*.
- IT costs 0 behind a 16-bit instruction (folded), else 1. A conditional load or store in an IT block costs 1
  when its condition fails (the plugin sees whether it accessed memory); other conditional instructions are
  counted as executed (least: 1).
- Operand-dependent instructions (QEMU 7.2's plugin interface reads no register): the M3's SMULL/UMULL (3 to 5)
  and SMLAL/UMLAL (4 to 7), SDIV/UDIV (2 to 12) at their worst in the nominal figure, their best in *least*.
- M4 FPU: a result read by the next instruction costs one more cycle (a multiply-accumulate's addend
  excepted); VDIV/VSQRT 14.

Checks (tests/test_cycles.py, in `make test`): hand-counted microbenchmarks (tests/cycles/*.S, 20 ARMv6-M and
42 ARMv7-M cases, the TRM's own examples of 3.3.2 among them) give exactly the TRM's figures on the Cortex-M0,
M0+, M3 and M4; the RP2040 emulator gives the same on the ARMv6-M cases but for its PUSH/POP rule; and on whole
models (below) it runs the same instructions as the estimator and differs only by that rule.

Not modelled: wait states (apart, below), bus contention (DMA, a second core), the write buffer's stalls,
exception entry and return (an interrupt's handler is counted as instructions), branch speculation beyond the
refill rule, the M4's FP out-of-order completion of VDIV/VSQRT, the RP2040's single-cycle I/O port and its
peripheral bridge's wait states (rp2040js has them), and operand values (the bounds above).

Flash wait states, a separate figure: the plugin sends instruction fetches and data reads in what the real
board keeps in flash through a model of its cache and counts the lines missed; the figure is the misses times
the cycles a miss costs:
{boards}
"""


def speed_boards_cycles_rows(models: list[Path], boards: list[str], runs: int, progress=None) -> list[dict]:
    """Every runnable model's instructions and cycles per invoke on each
    board, plain and prepared (tflm-host prepare): the estimator on the QEMU
    Arm boards, the board's own counters elsewhere (cycles 0 where nothing
    times it: "timing" is "")."""
    rows = _board_rows(models, boards, runs, measure_counts, progress)
    for r in rows:
        r["timing"] = board_timing(r["board"])
    return rows


def _timed(rows: list[dict]) -> dict[str, bool]:
    """Board -> whether anything counts its cycles."""
    return {r["board"]: bool(r["timing"]) for r in rows}


def speed_boards_cycles_markdown(rows: list[dict], boards: list[str], key: str = "ours") -> str:
    timed = _timed(rows)
    by_model = _by_model(rows)
    lines = ["| model |" + "".join(f" {b}: instructions | {b}: cycles |" for b in boards),
             "|---|" + "---|---|" * len(boards)]
    for model, per in by_model.items():
        cells = [model]
        for b in boards:
            c = per.get(b, {}).get(key)
            cells += ["-", "-"] if c is None else [f"{c.insns:,}", f"{c.cycles:,}" if timed[b] else "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def natmod_boards(boards: list[str]) -> list[tuple[board_info.Board, Path]]:
    """Those of `boards` timed by the estimator whose board.json has a
    natmod build, each with its stock firmware; FileNotFoundError unless
    that is built."""
    found = []
    for b in board_info.boards():
        if b.name in boards and b.natmod_arch and board_timing(b.name) == "estimator":
            firmware = build_dir() / f"{b.name}-stock" / "firmware.elf"
            if not firmware.is_file():
                raise FileNotFoundError(f"{firmware} missing: run `make natmod-stock`")
            found.append((b, firmware))
    return found


def _kernel_set(ops: str, types: str) -> dict[str, set[str]]:
    """TFLM_OPS and TFLM_TYPES as op -> its types (empty: every type)."""
    from tflm_host.cli import parse_types
    out = {op: set() for op in ops.split()}
    for op, kinds in parse_types(types):
        out.setdefault(op, set()).update(kinds)
    return out


def _holds(build: dict[str, set[str]], model: dict[str, set[str]]) -> bool:
    return all(op in build and (not build[op] or kinds <= build[op]) for op, kinds in model.items())


def natmod_speed_rows(models: list[Path], boards: list[str], every: list[dict], runs: int,
                      progress=None) -> list[dict]:
    """tflm.mpy (make natmod) on the stock firmware (make natmod-stock) of
    each of natmod_boards(boards), against the built-in module's figures in
    `every` (speed_boards_cycles_rows): the build tests/test_natmod.py loads
    there (every kernel, or its models' kernels only, as `tflm-host ops
    --natmod` builds them) with every runnable model whose kernels it has."""
    from tflm_host import install
    from tflm_host.cli import natmod_kernels
    builtin = _by_model(every)
    runnable = runnable_models(models)
    todo = natmod_boards(boards)
    rows = []
    for i, (b, firmware) in enumerate(todo):
        if progress:
            progress(i, len(todo), f"{b.name}, tflm.mpy")
        paths = runnable
        settings = None
        if b.natmod_models:
            settings = natmod_kernels([p for p in runnable if p.name in b.natmod_models])
            held = _kernel_set(settings["TFLM_OPS"], settings["TFLM_TYPES"])

            def held_by_build(p: Path) -> bool:
                own = natmod_kernels([p])
                return (_holds(held, _kernel_set(own["TFLM_OPS"], own["TFLM_TYPES"]))
                        and not (settings["TFLM_PATCH"] == "0" and own["TFLM_PATCH"] != "0"))

            paths = [p for p in runnable if held_by_build(p)]
        mpy, size = install.make_natmod(b.natmod_arch, settings)
        files = {p.name: p.read_bytes() for p in paths}
        counts = measure_ours_cycles(b.name, files, {n: runs for n in files}, firmware=firmware,
                                     beside={"tflm.mpy": mpy.read_bytes()})
        for p in paths:
            rows.append({"model": p.name, "board": b.name, "arch": b.natmod_arch, "size": size,
                         "kernels": "its models'" if b.natmod_models else "every", "natmod": counts[p.name][0],
                         "builtin": builtin.get(p.name, {}).get(b.name, {}).get("ours")})
    return rows


def natmod_speed_markdown(rows: list[dict]) -> str:
    lines = ["| model | board (core) | tflm.mpy: ARCH, kernels, bytes | built-in module: cycles | tflm.mpy: cycles "
             "| tflm.mpy / built-in |", "|---|---|---|---|---|---|"]
    for r in rows:
        mine, theirs = r["natmod"].cycles, r["builtin"].cycles if r["builtin"] else 0
        core = cycles.CORE_NAMES[cycles.BOARD_CORES[r["board"]]]
        lines.append(f"| {r['model']} | {r['board']} ({core}) | `{r['arch']}`, {r['kernels']}, {r['size']:,} "
                     f"| {f'{theirs:,}' if theirs else '-'} | {mine:,} | {_ratio(mine, theirs)} |")
    return "\n".join(lines) + "\n"


def speed_prepared_cycles_markdown(rows: list[dict], boards: list[str]) -> str:
    """Plain against prepared, in cycles (in instructions on a board nothing times)."""
    timed = _timed(rows)
    heads = {b: f"{b}: {'cycles' if timed.get(b) else 'instructions'}" for b in boards}
    return _prepared_markdown(rows, boards, heads, lambda r, b: (r["ours"].cycles, r["prepared"].cycles) if timed[b]
                              else (r["ours"].insns, r["prepared"].insns))


def untuned_models(models: list[Path]) -> list[Path]:
    """The shared models besides CMSIS_MODELS that the harness runs (chains
    of int8 layers): none of the kernels' paths was tuned on them."""
    out = []
    for m in models:
        if m.name in CMSIS_MODELS:
            continue
        try:
            cmsis_layers_source(load_model(m))
        except ValueError:
            continue
        out.append(m)
    return out


def untuned_markdown(rows: list[CyclesRow]) -> str:
    lines = _vs_lines(rows)
    lines += ["", "| model | board | layer | CMSIS-NN: cycles | ours: cycles | ours / CMSIS-NN, cycles |",
              "|---|---|---|---|---|---|"]
    for r in rows:
        if r.timing != "estimator" or not r.cmsis:
            continue
        for name, c, o in zip(r.names, r.cmsis.layers, r.ours_layers):
            lines.append(f"| {r.model} | {r.board} | {name} | {c.cycles:,} | {o.cycles:,} | {_ratio(o.cycles, c.cycles)} |")
    return "\n".join(lines) + "\n"


def speed_cycles_report(models: list[Path], boards: list[str], runs: int, anchor: Path, workers: int,
                        progress=None, rows: list[CyclesRow] | None = None) -> str:
    """docs/speed.md: cycles first (ours and CMSIS-NN's, the estimator and
    its check against the RP2040 emulator, every model on every board), then
    what the memory techniques cost in instructions."""
    vs = [m for m in models if m.name in CMSIS_MODELS]
    natmod_boards(boards)  # before hours of runs: their stock firmware is there
    if rows is None:
        rows = speed_cycles_rows(vs, boards, runs, anchor, workers, progress)
    text = "## Against CMSIS-NN, in cycles\n\n" + speed_cycles_markdown(rows)
    untuned = untuned_models(models)
    if untuned:
        text += ("\n## Against CMSIS-NN, the models nobody tuned for\n\n"
                 "Every other shared model the harness runs (a chain of int8 layers), measured as above; no "
                 "kernel path was tuned on these.\n\n"
                 + untuned_markdown(speed_cycles_rows(untuned, boards, runs, anchor, workers, progress)))
    text += "\n## The cycle estimator\n\n" + estimator_markdown()
    text += ("\n### Against the RP2040 emulator, every shared model\n\n"
             + estimator_check_markdown(estimator_check_rows(models, workers, progress)))
    every = speed_boards_cycles_rows(models, boards, runs, progress)
    text += ("\n## Every shared model, every board\n\n" + speed_boards_cycles_markdown(every, boards)
             + "\nPer invoke, inputs all zero: on the QEMU Arm boards counted by the estimator (instructions "
             "exactly, cycles nominal)" + _own_counters_note(every, cmsis=False) + ".\n")
    natmod = natmod_speed_rows(models, boards, every, runs, progress)
    if natmod:
        text += ("\n## tflm.mpy on stock firmware\n\n" + natmod_speed_markdown(natmod)
                 + "\nThe module for stock firmware (docs/natmod.md) on each board's MicroPython 1.25.0 firmware "
                 "without the built-in module (`make natmod-stock`), measured as above with tflm.mpy beside the "
                 "models in ROMFS; the build tests/test_natmod.py loads on that board (every kernel, or the models' "
                 "kernels only as `tflm-host ops --natmod` builds them, for a small heap: then every model whose "
                 "kernels it has). Its code runs from RAM and is position-independent; the kernels that hold the "
                 "loops of most models are built at -O2, the rest at -Os (micropython_mod/natmod.mk).\n")
    text += ("\n## Prepared models, every board\n\n" + speed_prepared_cycles_markdown(every, boards)
             + "\nThe same models after `tflm-host prepare`, measured the same way with the same firmware. A prepared "
             "model's kernel data is read from the model (flash), so it may hold what costs RAM otherwise: the int8 "
             "fully connected, LSTM and SVDF operators' starting sums with the input offset folded in, which saves "
             "an addition per multiply-accumulate.\n")
    if MEMORY_COST_BOARD in boards:
        text += (f"\n## What overlapped buffers cost ({MEMORY_COST_BOARD} and the host), in instructions\n\n"
                 + speed_markdown(speed_rows(vs, MEMORY_COST_BOARD, runs, progress), MEMORY_COST_BOARD))
    text += ("\n## What patch-based stages cost, in cycles\n"
             + stage_front_markdown(stage_front_rows(models, boards, progress)))
    return text


# -- the shape sweep (bench sweep) -------------------------------------------------
#
# Single-layer int8 models over the shape space of the convolutions: channels
# 8 to 1,024, kernels 1x1 to 5x5, strides 1 and 2, depthwise multipliers;
# ours against CMSIS-NN (its best optimisation level) in cycles, per shape and
# board. Weights are seeded random int8, per-channel scales; the input is all
# zero as in the other tables.

SWEEP_START = "<!-- tflm-host bench sweep: start -->"
SWEEP_END = "<!-- tflm-host bench sweep: end -->"
# bench speed --ops's section (opbench.py)
OPS_START = "<!-- tflm-host bench speed --ops: start -->"
OPS_END = "<!-- tflm-host bench speed --ops: end -->"

# (kind, spatial size, input channels, output channels or multiplier, kernel, stride); a fully
# connected layer's "size" is its rows (batches). The last rows are shapes no path was tuned on:
# a window too large to gather, channel counts off the blocks' multiples, a 7x7 one-channel
# first layer, a 5x5 stride-2 depthwise layer, and fully connected layers.
SWEEP_SHAPES = [
    ("conv", 16, 8, 8, 1, 1), ("conv", 16, 16, 32, 1, 1), ("conv", 8, 32, 64, 1, 1), ("conv", 8, 64, 64, 1, 1),
    ("conv", 4, 128, 128, 1, 1), ("conv", 4, 256, 256, 1, 1), ("conv", 2, 512, 512, 1, 1), ("conv", 2, 1024, 64, 1, 1),
    ("conv", 16, 8, 16, 3, 1), ("conv", 16, 8, 16, 3, 2), ("conv", 8, 32, 32, 3, 1), ("conv", 8, 16, 16, 5, 1),
    ("conv", 8, 16, 16, 5, 2), ("conv", 16, 3, 8, 3, 2),
    ("dw", 16, 8, 1, 3, 1), ("dw", 16, 8, 1, 3, 2), ("dw", 8, 64, 1, 3, 1), ("dw", 8, 64, 1, 5, 1),
    ("dw", 4, 256, 1, 3, 1), ("dw", 4, 384, 1, 3, 1), ("dw", 4, 384, 1, 3, 2), ("dw", 8, 32, 1, 1, 1),
    ("dw", 16, 1, 8, 3, 2), ("dw", 8, 8, 2, 3, 1), ("dw", 8, 16, 4, 5, 1),
    ("conv", 16, 32, 64, 3, 2), ("conv", 8, 10, 30, 1, 1), ("conv", 16, 3, 16, 3, 1), ("conv", 32, 1, 8, 7, 2),
    ("dw", 8, 72, 1, 5, 2),
    ("fc", 1, 8, 128, 1, 1), ("fc", 1, 128, 8, 1, 1), ("fc", 1, 256, 256, 1, 1), ("fc", 1, 1024, 10, 1, 1),
    ("fc", 4, 64, 64, 1, 1),
]


def sweep_model(kind: str, size: int, cin: int, cout: int, k: int, stride: int, seed: int = 0) -> tuple[bytes, int]:
    """A one-layer model of the sweep and its multiply-accumulates."""
    rng = np.random.default_rng(seed)
    if kind == "fc":
        return _sweep_fc_model(size, cin, cout, rng), size * cin * cout
    out_c = cout if kind == "conv" else cin * cout
    osz = (size + stride - 1) // stride  # SAME padding
    b = ModelBuilder(f"sweep {kind} {size}x{size}x{cin} k{k} s{stride}")
    sg = b.subgraph()
    x = sg.tensor((1, size, size, cin), "INT8", quant=([0.02], [-3]))
    wshape = (out_c, k, k, cin) if kind == "conv" else (1, k, k, out_c)
    w = sg.tensor(wshape, "INT8", data=rng.integers(-127, 128, wshape, dtype=np.int8),
                  quant=(list(rng.uniform(0.002, 0.01, out_c)), [0] * out_c, 0 if kind == "conv" else 3))
    bias = sg.tensor((out_c,), "INT32", data=rng.integers(-2000, 2000, out_c, dtype=np.int32),
                     quant=([0.0001] * out_c, [0] * out_c, 0))
    y = sg.tensor((1, osz, osz, out_c), "INT8", quant=([0.05], [5]))
    if kind == "conv":
        sg.op("CONV_2D", [x, w, bias], [y], Padding="SAME", StrideH=stride, StrideW=stride,
              FusedActivationFunction="NONE")
        macs = osz * osz * out_c * k * k * cin
    else:
        sg.op("DEPTHWISE_CONV_2D", [x, w, bias], [y], Padding="SAME", StrideH=stride, StrideW=stride,
              DepthMultiplier=cout, FusedActivationFunction="NONE")
        macs = osz * osz * out_c * k * k
    sg.inputs, sg.outputs = [x], [y]
    return b.build(), macs


def _sweep_fc_model(rows: int, cin: int, cout: int, rng) -> bytes:
    """A fully connected layer of the sweep: per-tensor weights (as TF's converter emits them)."""
    b = ModelBuilder(f"sweep fc {rows}x{cin}->{cout}")
    sg = b.subgraph()
    x = sg.tensor((rows, cin), "INT8", quant=([0.02], [-3]))
    w = sg.tensor((cout, cin), "INT8", data=rng.integers(-127, 128, (cout, cin), dtype=np.int8), quant=([0.005], [0]))
    bias = sg.tensor((cout,), "INT32", data=rng.integers(-2000, 2000, cout, dtype=np.int32), quant=([0.0001], [0]))
    y = sg.tensor((rows, cout), "INT8", quant=([0.05], [5]))
    sg.op("FULLY_CONNECTED", [x, w, bias], [y], FusedActivationFunction="NONE")
    sg.inputs, sg.outputs = [x], [y]
    return b.build()


def sweep_name(shape) -> str:
    kind, size, cin, cout, k, stride = shape
    if kind == "fc":
        return f"fully_connected {cin}->{cout}" + (f" x{size} rows" if size > 1 else "")
    if kind == "conv":
        return f"conv {k}x{k} s{stride} {size}x{size}x{cin}->{cout}"
    return f"dwconv {k}x{k} s{stride} {size}x{size}x{cin}" + (f" mult{cout}" if cout > 1 else "")


# The sweep's row of invoke()'s own cost (sweep_markdown puts it in the note under the table).
SWEEP_FIXED = "invoke() alone"


def _sweep_reshape_model() -> bytes:
    """A one-op model that moves 16 bytes: what invoke() costs before any
    kernel's work (the CMSIS-NN harness runs it as a memcpy)."""
    b = ModelBuilder("sweep reshape 1x16->16")
    sg = b.subgraph()
    x = sg.tensor((1, 16), "INT8", quant=([0.02], [-3]))
    y = sg.tensor((16,), "INT8", quant=([0.02], [-3]))
    sg.op("RESHAPE", [x], [y], NewShape=[16])
    sg.inputs, sg.outputs = [x], [y]
    return b.build()


def sweep_rows(boards: list[str], anchor: Path = ANCHOR_DIR, workers: int = 2, progress=None) -> list[dict]:
    work = build_dir() / "sweep"
    work.mkdir(parents=True, exist_ok=True)
    models, macs = {}, {}
    for i, shape in enumerate(SWEEP_SHAPES):
        name = f"s{i:02d}.tflite"
        data, macs[name] = sweep_model(*shape, seed=i)
        (work / name).write_bytes(data)
        models[name] = data
    rows = {name: {"shape": sweep_name(shape), "macs": macs[name]}
            for name, shape in zip(models, SWEEP_SHAPES)}
    models["fixed.tflite"] = _sweep_reshape_model()
    (work / "fixed.tflite").write_bytes(models["fixed.tflite"])
    rows["fixed.tflite"] = {"shape": SWEEP_FIXED, "macs": 0}
    for board in boards:
        ours = measure_counts(board, models, {n: 1 for n in models})
        timed = bool(board_timing(board))
        for n in models:
            rows[n][board] = ours[n][0].cycles if timed else ours[n][0].insns
            rows[n][f"unit {board}"] = "cycles" if timed else "instructions"
    # CMSIS-NN where the board's core has it (its own build or its stand-in's).
    steps = [(b, n) for b in boards if cmsis_board(b) for n in models]
    cm_work = build_dir() / "cmsis-nn"
    done: dict[tuple[str, str], int] = {}
    for i, (board, n) in enumerate(steps):
        if progress:
            progress(i, len(steps), f"CMSIS-NN {rows[n]['shape']} on {board}")
        key = (cmsis_board(board), n)
        if key not in done:
            best, _ = cmsis_best(key[0], work / n, anchor, cm_work, workers)
            done[key] = best.chain.cycles
        rows[n][f"cmsis {board}"] = done[key]
    return list(rows.values())


def sweep_markdown(rows: list[dict], boards: list[str]) -> str:
    """Per board: ours and CMSIS-NN's cycles and their ratio; on a board
    whose core has no CMSIS-NN, ours alone (in instructions where nothing
    times it) and per MAC."""
    fixed = [r for r in rows if r["shape"] == SWEEP_FIXED]
    rows = [r for r in rows if r["shape"] != SWEEP_FIXED]
    with_cmsis = {b: f"cmsis {b}" in rows[0] for b in boards} if rows else {}
    head, rule = "| layer | MACs |", "|---|---|"
    for b in boards:
        if with_cmsis[b]:
            head += f" {b}: ours | CMSIS-NN | ours / CMSIS-NN |"
            rule += "---|---|---|"
        else:
            head += f" {b}: ours, {rows[0]['unit ' + b]} | per MAC |"
            rule += "---|---|"
    lines = [head, rule]
    for r in rows:
        cells = [r["shape"], f"{r['macs']:,}"]
        for b in boards:
            if with_cmsis[b]:
                cells += [f"{r[b]:,}", f"{r['cmsis ' + b]:,}", _ratio(r[b], r["cmsis " + b])]
            else:
                cells += [f"{r[b]:,}", f"{r[b] / r['macs']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    untimed = [b for b in boards if rows and rows[0]["unit " + b] != "cycles"]
    lines += ["", "Cycles per invoke of single-layer int8 models (seeded random weights, per-channel scales, SAME "
              "padding, an all-zero input; fully connected layers per-tensor), ours (`invoke()` of the one-layer "
              "model, so invoke()'s dispatch included) and CMSIS-NN's (the anchor's harness, the best of -O2, -O3 and -Os), both timed by the "
              "cycle estimator as above (MICROBIT as the Cortex-M0+)"
              + "".join(f"; {b}: instructions, as above (nothing times its {_core_of(b)}; no CMSIS-NN for it)"
                        for b in untimed) + "."]
    if fixed:
        f = fixed[0]
        costs = ", ".join(f"{b} {f[b]:,}" + (f" (CMSIS-NN's harness: {f['cmsis ' + b]:,} for its memcpy)"
                                             if with_cmsis.get(b) else f" {f['unit ' + b]}") for b in boards)
        lines += ["", "What ours counts besides the layer, measured the same way on a one-op RESHAPE model of 16 "
                  "values (the method call from Python, the checks of the arena, model and records, the seal, the "
                  f"dispatch): {costs}. A layer of a few thousand MACs or fewer is mostly this."]
    return "\n".join(lines) + "\n"


def write_section(doc: Path, start: str, end: str, title: str, command: str, table: str) -> None:
    """Puts a section that one command writes into `doc`, between its
    markers (replacing the one there, else at the end)."""
    section = (f"{start}\n## {title}\n\nWritten by `{command}` (into FILE, between these markers).\n\n"
               f"{table}{end}\n")
    text = doc.read_text() if doc.is_file() else ""
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + section + rest.split(end, 1)[1].lstrip("\n")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    doc.write_text(text)


def write_sweep(doc: Path, table: str, boards: list[str]) -> None:
    """Puts the sweep's section into docs/speed.md, between its markers."""
    write_section(doc, SWEEP_START, SWEEP_END, "The shape sweep, in cycles",
                  f"tflm-host bench sweep --boards {' '.join(boards)} --out FILE", table)


def keep_sweep(doc: Path, new_text: str) -> str:
    """A regenerated speed.md (speed-reference.md) keeps the sections other
    commands write between their markers: the sweep's, the ops' table, the
    stages' profiles."""
    old = doc.read_text() if doc.is_file() else ""
    for start, end in ((SWEEP_START, SWEEP_END), (OPS_START, OPS_END), (PROFILE_START, PROFILE_END)):
        if start in old and end in old:
            section = start + old.split(start, 1)[1].split(end, 1)[0] + end + "\n"
            new_text = new_text.rstrip("\n") + "\n\n" + section
    return new_text
