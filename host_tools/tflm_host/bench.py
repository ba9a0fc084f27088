"""Benchmarks that print figures and write them as Markdown tables for docs/."""

from __future__ import annotations

import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import arena
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


def arena_rows(models: list[Path], target_name: str, progress=None) -> list[dict]:
    """Per model: TFLM's arena, ours measured on the target (or the head of
    the tensors' plan when our kernels are not all there yet), the bound."""
    rows = []
    target = make_target(target_name)
    for i, path in enumerate(models):
        if progress:
            progress(i, len(models), path.name)
        model = load_model(path)
        row = {"model": path.name, "tflm": tflm_arena(path), "bound": arena.bound(model),
               "missing": arena.missing_ops(model)}
        if not row["missing"]:
            r = run_model(path, target, make_inputs(model, "zeros"))
            row["ours"] = (r.head_bytes, r.tail_bytes, r.arena_used_bytes)
        else:
            row["ours_head"] = arena.plan_layout(model, "greedy", kernels=False).head
        rows.append(row)
    return rows


def arena_markdown(rows: list[dict], target_name: str) -> str:
    lines = [
        "| model | TFLM head | TFLM tail | TFLM used | our head | our tail | our used | our tail / TFLM's | bound |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        t = row["tflm"]
        tflm = [str(t.head), str(t.tail), str(t.used)] if t else ["-", "-", "-"]
        if "ours" in row:
            head, tail, used = row["ours"]
            ours = [str(head), str(tail), str(used), f"{tail / t.tail:.0%}" if t else "-"]
        else:
            ours = [f"({row['ours_head']})", "-", "-", "not yet: " + ", ".join(row["missing"])]
        lines.append(f"| {row['model']} | " + " | ".join(tflm + ours + [str(row["bound"])]) + " |")
    notes = [
        "",
        f"Ours: measured with `tflm-host run` on `{target_name}` (the same bytes on every target: the "
        "arena layout has no pointers). TFLM: its Python interpreter's recording allocator "
        "(PyPI `tflite-micro`, x86-64). In parentheses: the head of our plan of the model's "
        "tensors, for models whose kernels are not all in this build yet. Bound: the most "
        "bytes live at one operator in the model's order (each tensor rounded to 16 bytes).",
    ]
    return "\n".join(lines + notes) + "\n"


def progress_bar(i: int, n: int, label: str) -> None:
    width = 30
    done = width * i // max(n, 1)
    print(f"\r[{'#' * done}{'.' * (width - done)}] {i}/{n} {label:40.40s}", end="", file=sys.stderr, flush=True)
    if i + 1 == n:
        print(file=sys.stderr)
