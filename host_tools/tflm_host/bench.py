"""Benchmarks that print figures and write them as Markdown tables for docs/."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import arena
from .device import build_dir, checkout
from .device import target as make_target
from .model import load_model
from .runner import make_inputs, run_model


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
            from .prepare import prepare_model

            data = prepare_model(path.read_bytes())
            with tempfile.TemporaryDirectory() as tmp:
                prepared = Path(tmp) / path.name
                prepared.write_bytes(data)
                r = run_model(prepared, target, make_inputs(model, "zeros"))
            in_model = arena.plan_layout(load_model(data)).model_data
            row["prepared"] = (r.tail_bytes, r.arena_used_bytes, in_model)
        else:
            row["ours_head"] = arena.plan_layout(model, "greedy", kernels=False).head
        rows.append(row)
    return rows


def arena_markdown(rows: list[dict], target_name: str) -> str:
    lines = [
        "| model | TFLM head | TFLM tail | TFLM used | our head | our tail | our used | our tail / TFLM's "
        "| prepared: tail | prepared: used | prepared: used / TFLM's | kernel data in the model | bound |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        t = row["tflm"]
        tflm = [str(t.head), str(t.tail), str(t.used)] if t else ["-", "-", "-"]
        if "ours" in row:
            head, tail, used = row["ours"]
            ours = [str(head), str(tail), str(used), f"{tail / t.tail:.0%}" if t else "-"]
            p_tail, p_used, in_model = row["prepared"]
            ours += [str(p_tail), str(p_used), f"{p_used / t.used:.2f}" if t else "-", str(in_model)]
        else:
            ours = [f"({row['ours_head']})", "-", "-", "no kernels for " + ", ".join(row["missing"]), "-", "-", "-", "-"]
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
        "the tail: `kernel data in the model`, as `print_allocations()` shows it.",
    ]
    return "\n".join(lines + notes) + "\n"


README_START = "<!-- tflm-host bench arena --readme: start -->"
README_END = "<!-- tflm-host bench arena --readme: end -->"
README_MODELS = ("person_detect", "vww_96_int8", "pretrainedResnet_quant", "kws_ref_model", "keyword_scrambled",
                 "simple_add_model", "hello_world_int8")


def readme_table(rows: list[dict], models_dir: Path) -> str:
    """The README's table: TFLM's arena, ours measured, prepared measured, and
    with our offline plan too (the host's prediction, which the tests hold
    to the device's figure)."""
    from .planning import plan_model
    from .prepare import prepare_model

    by_name = {r["model"].removesuffix(".tflite"): r for r in rows}
    lines = ["| model | TFLM arena | ours | ours, prepared (`tflm-host prepare`) "
             "| ours, prepared + offline plan (`tflm-host plan --prepare`) |", "|---|---|---|---|---|"]
    for name in README_MODELS:
        row = by_name.get(name)
        if row is None or "ours" not in row or row["tflm"] is None:
            continue
        result = plan_model((models_dir / (name + ".tflite")).read_bytes(), time_limit=5.0)
        planned = arena.plan_layout(load_model(prepare_model(result.embedded()))).used
        cells = [row["tflm"].used, row["ours"][2], row["prepared"][1], planned]
        lines.append(f"| {name} | " + " | ".join(f"{c:,}" for c in cells) + " |")
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
    """Per model: TFLM's head, our greedy head, our offline plans (plain, and
    with aliases and reordering), the bound, and arena_used_bytes measured on
    the target with each; TFLM's own arena running our planned model."""
    from .planning import plan_model
    from .runner import BatchJob, run_batch

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
        greedy = arena.plan_layout(model, "greedy")
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
        "| model | TFLM head | greedy head | offline head | bound | + aliases, order | used: linear | "
        f"used: greedy | used: offline | used: + aliases, order | TFLM used with our plan | TFLM used |",
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
        "planner, recording allocator). Greedy head: our greedy planner, TFLM's algorithm. Offline head: "
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
    for the greedy planner and the offline plan (host prediction, checked on the target)."""
    from .planning import plan_model

    rows = []
    for path in models:
        model = load_model(path)
        inp, out = model.main.inputs[0], model.main.outputs[0]
        data = path.read_bytes()
        for label, pre in (("nothing", ()), ("input", (inp,)), ("output", (out,)), ("input and output", (inp, out))):
            greedy = arena.plan_layout(model, "greedy", preallocated=pre)
            best = plan_model(data, preallocated=pre)
            ext = sum(model.main.tensors[t].nbytes for t in pre)
            rows.append({"model": path.name, "what": label, "greedy": greedy.used, "offline": best.layout.used,
                         "outside": ext})
    return rows


def prealloc_markdown(rows: list[dict]) -> str:
    lines = ["| model | pre-allocated | bytes outside the arena | arena: greedy | arena: offline plan |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['what']} | {r['outside']} | {r['greedy']} | {r['offline']} |")
    return "\n".join(lines) + "\n"


# -- speed ---------------------------------------------------------------------

OURS_SCRIPT = """
import tflm
m = tflm.Model(open(MODEL, 'rb').read())
it = tflm.Interpreter(m)
for i in range(len(m.inputs)):
    t = it.input(i)
    for k in range(len(t)):
        t[k] = 0
for _ in range(RUNS):
    it.invoke()
"""

TFLM_SCRIPT = """
import numpy as np
from tflite_micro.python.tflite_micro import runtime
it = runtime.Interpreter.from_file(MODEL, arena_size=1 << 22)
for i, d in enumerate(INPUTS):
    it.set_input(np.zeros(d[0], d[1]), i)
for _ in range(RUNS):
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


def host_ours(model_path: Path, runs: int) -> int:
    """x86-64 instructions of one invoke in our unix port."""
    binary = build_dir() / "unix" / "micropython"
    with tempfile.NamedTemporaryFile("w", suffix=".py") as f:
        f.write(f"MODEL = {str(model_path)!r}\nRUNS = {runs}\n" + OURS_SCRIPT)
        f.flush()
        return callgrind_invoke([str(binary), "-X", "heapsize=16M", f.name], "tflm_interp_invoke") // runs


def host_tflm(model_path: Path, runs: int) -> int:
    """x86-64 instructions of one invoke in TFLM's Python interpreter."""
    model = load_model(model_path)
    inputs = [(list(t.shape), str(t.numpy_dtype)) for t in model.inputs]
    with tempfile.NamedTemporaryFile("w", suffix=".py") as f:
        f.write(f"MODEL = {str(model_path)!r}\nRUNS = {runs}\nINPUTS = {inputs!r}\n" + TFLM_SCRIPT)
        f.flush()
        return callgrind_invoke([sys.executable, f.name], "tflite::micro::MicroInterpreter::Invoke()") // runs


def qemu_per_invoke(model_path: Path, board: str, runs: int) -> int:
    """Instructions per invoke on a QEMU board (qemuboard.icount, -icount shift=0)."""
    code = f"""
import tflm, qemuboard
f = open(ROOT + '/model.tflite', 'rb')
m = tflm.Model(memoryview(f))
it = tflm.Interpreter(m)
for i in range(len(m.inputs)):
    t = it.input(i)
    for k in range(len(t)):
        t[k] = 0
it.invoke()
a = qemuboard.icount()
for _ in range({runs}):
    it.invoke()
print('@ICOUNT', (qemuboard.icount() - a) // {runs})
"""
    out = make_target(board).run([code], {"model.tflite": model_path.read_bytes()})
    m = re.search(r"@ICOUNT (\d+)", out)
    if not m:
        raise RuntimeError(out)
    return int(m.group(1))


def speed_rows(models: list[Path], board: str, runs: int, progress=None) -> list[dict]:
    rows = []
    runnable = [p for p in models if not arena.missing_ops(load_model(p))]
    for i, path in enumerate(runnable):
        if progress:
            progress(i, len(runnable), path.name)
        ours, tflm = host_ours(path, runs), host_tflm(path, runs)
        rows.append({"model": path.name, "qemu": qemu_per_invoke(path, board, runs), "host": ours, "tflm": tflm})
    return rows


def speed_markdown(rows: list[dict], board: str) -> str:
    lines = [f"| model | {board} instructions / invoke | host: ours | host: TFLM reference | ours / TFLM |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['qemu']:,} | {r['host']:,} | {r['tflm']:,} | {r['host'] / r['tflm']:.2f} |")
    notes = [
        "",
        f"{board}: instructions counted by QEMU (`-icount shift=0`, `qemuboard.icount()`) around `invoke()`, "
        "inputs all zero. Host: x86-64 instructions inside one invoke, counted by valgrind's callgrind "
        "(`--toggle-collect`) in our unix port (`tflm_interp_invoke`) and in TFLM's Python interpreter "
        "(PyPI `tflite-micro`, reference kernels: `MicroInterpreter::Invoke`). Instructions, not cycles.",
    ]
    return "\n".join(lines + notes) + "\n"


# -- firmware size ------------------------------------------------------------

SIZE_PARTS = ("engine", "kernels", "binding")


def module_size(build: Path) -> dict[str, int]:
    """Text bytes (code and constants) of the tflm module's objects in a firmware build, by part."""
    sizes = {}
    for part in SIZE_PARTS:
        # Objects of sources that still exist (a build folder keeps old ones).
        src = checkout("the size report") / "micropython_mod" / part
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


def planner_sizes(build: Path) -> dict[str, int]:
    """Text bytes of each planner's object file in a firmware build (0: not linked in)."""
    sizes = {}
    for name in PLANNER_OBJECTS:
        obj = build / "micropython_mod" / "engine" / f"{name}.o"
        out = subprocess.run(["arm-none-eabi-size", str(obj)], check=True, capture_output=True, text=True).stdout
        sizes[name] = int(out.strip().splitlines()[-1].split()[0])
    return sizes


def size_markdown(builds: dict[str, Path], board: str) -> str:
    lines = [f"Text bytes of the tflm module in the {board} firmware (Cortex-M3; `-Os`, the kernels at "
             "`TFLM_KERNEL_OPT`, `-O2` by default), from "
             "`arm-none-eabi-size` of its object files (code plus read-only data), and the text of "
             "the whole linked firmware (MicroPython included). "
             "`make size-report` rebuilds this table.", "",
             "| build | " + " | ".join(SIZE_PARTS) + " | module total | firmware text |",
             "|---|" + "---|" * (len(SIZE_PARTS) + 2)]
    for label, build in builds.items():
        s = module_size(build)
        lines.append(f"| {label} | " + " | ".join(f"{s[p]:,}" for p in SIZE_PARTS)
                     + f" | {s['total']:,} | {firmware_text(build):,} |")
    first = next(iter(builds.values()))
    p = planner_sizes(first)
    lines += ["", "The memory planners in the first build (text bytes of their objects): "
              + ", ".join(f"`{n}.c` {v:,}" for n, v in p.items())
              + ". A firmware with `TFLM_PLANNERS=offline` leaves out the greedy and linear planners "
              f"({p['planner_greedy'] + p['planner_linear']:,} bytes); the last row also carries the "
              "plan itself (its words, in flash)."]
    return "\n".join(lines) + "\n"
