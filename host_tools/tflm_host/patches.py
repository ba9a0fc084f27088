"""Patch-based stages: the schedule `tflm-host prepare --max-extra-macs` chooses.

The engine runs operators `start` to `split` - 1 of the main subgraph (a
chain of CONV_2D / DEPTHWISE_CONV_2D, int8 or float32, and pools: the first
ones, or those after an operator such as the QUANTIZE of a float input)
patch by patch over a grid of the stage's output (engine/patch.h), so their
big feature maps are never whole in the arena. Each patch recomputes its
halo, which costs multiply-accumulates (patch mode); or the patches keep
what the next patches share of each map, its rows over the map's width and
its columns over a window's height (keep mode: no extra MACs, a few rows of
each map more than small patches); or the stage runs in bands of whole rows
that keep the rows the next band shares (rows mode: line buffers, no extra
MACs). This module tries every stage (each run of such operators, from its
first) with every grid in each mode and every number of bands, measures each
candidate's arena exactly with the engine (the device's own build), and
keeps the smallest arena whose extra MACs stay within the user's bound.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction
from dataclasses import dataclass
from typing import Callable

from . import _engine, fbedit
from .model import Model, load_model

METADATA_NAME: str = _engine.PATCH_METADATA
# Ops a stage may hold (an ADD of two maps shaped as its output only in bands
# of rows: the residual blocks' ends).
STAGE_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "AVERAGE_POOL_2D", "ADD")
# Ops that may end a stage in bands of rows, reducing all of their input (int8, one batch).
STAGE_END_OPS = ("FULLY_CONNECTED",)
# Grids tried: every grid up to 16x16 (maps need not be square: kws_ref_model's
# is 25x5, and its best grid is a column of bands).
GRIDS = [(gh, gw) for gh in range(1, 17) for gw in range(1, 17) if gh * gw > 1]
# Bands tried in rows mode: every count the engine takes (one band: every map whole).
BANDS = range(2, _engine.PATCH_MAX_GRID + 1)
# The schedule's modes (engine/patch.h).
PATCHES: int = _engine.PATCH_MODE_PATCHES
ROWS: int = _engine.PATCH_MODE_ROWS
KEEP: int = _engine.PATCH_MODE_KEEP


@dataclass(frozen=True)
class Schedule:
    split: int          # the operator after the stage
    grid: tuple[int, int]  # patches along rows, columns
    used: int           # arena_used_bytes with it
    needed: int         # tflm.arena_size with it
    extra_macs: int     # MACs the halos add
    model_macs: int     # MACs of the whole model run without patches
    start: int = 0      # the stage's first operator
    mode: int = PATCHES  # ROWS: bands of rows keeping their halos (grid: bands x 1); KEEP: patches keeping them

    @property
    def ops(self) -> str:
        """The stage's operators, as `prepare --explain` and the docs name them."""
        return f"{self.start}-{self.split - 1}"

    @property
    def layout(self) -> str:
        return layout_text(*self.grid, self.mode)

    @property
    def overhead(self) -> float:
        return self.extra_macs / self.model_macs if self.model_macs else 0.0

    @property
    def runs(self) -> int:
        """Kernel runs the stage makes per invoke, at most: each of its
        operators once per patch (or band)."""
        return self.grid[0] * self.grid[1] * (self.split - self.start)


def layout_text(grid_h: int, grid_w: int, mode: int) -> str:
    """A stage's grid as `prepare --explain`, `arena` and the docs name it:
    '4x3' (patches that recompute their halos), '6x6 kept' (patches keeping
    them) or '24 bands' (rows mode)."""
    if mode == ROWS:
        return f"{grid_h} bands"
    return f"{grid_h}x{grid_w}" + (" kept" if mode == KEEP else "")


def schedule_metadata(split: int, grid_h: int, grid_w: int, start: int = 0, mode: int = PATCHES) -> bytes:
    """The schedule's words (engine/patch.h); `mode` PATCHES, ROWS or KEEP."""
    return struct.pack("<7I", _engine.PATCH_MAGIC, _engine.PATCH_VERSION, split, grid_h, grid_w, start, int(mode))


def model_macs(model: Model) -> int:
    """Multiply-accumulates of one invoke, counted over the ops that do most
    of them (convolutions and fully connected layers)."""
    sg = model.main
    total = 0
    for op in sg.operators:
        if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED") and len(op.inputs) > 1:
            out = sg.tensors[op.outputs[0]]
            w = sg.tensors[op.inputs[1]]
            if op.opcode == "CONV_2D":
                per = w.shape[1] * w.shape[2] * w.shape[3]
            elif op.opcode == "DEPTHWISE_CONV_2D":
                per = w.shape[1] * w.shape[2]
            else:
                per = w.shape[-1]
            total += out.elements * per
    return total


def _stage_candidates(model: Model) -> list[tuple[int, int]]:
    """Where stages may lie: (first operator, operators) of each run of
    operators that could form one (convolutions and pools; in bands of rows
    also the ADDs of residual blocks, and a FULLY_CONNECTED that ends the
    stage; the engine refuses what it cannot run), at most PATCH_MAX_OPS of
    them from its first."""
    sg = model.main
    runs: list[tuple[int, int]] = []
    previous = False  # whether operator k - 1 could be in a stage, not at its end
    for k, op in enumerate(sg.operators):
        int8_or_float = sg.tensors[op.inputs[0]].dtype in ("INT8", "FLOAT32")
        could = op.opcode in STAGE_OPS and int8_or_float
        ends = op.opcode in STAGE_END_OPS and int8_or_float
        if (could or ends) and previous:
            start, n = runs[-1]
            runs[-1] = (start, min(n + 1, _engine.PATCH_MAX_OPS))
        elif could:
            runs.append((k, 1))
        previous = could
    return runs


def with_schedule(data: bytes, split: int, grid_h: int, grid_w: int, start: int = 0, mode: int = PATCHES) -> bytes:
    return fbedit.edit_model(data, metadata={METADATA_NAME: schedule_metadata(split, grid_h, grid_w, start, mode)})


def without_schedule(data: bytes) -> bytes:
    return fbedit.edit_model(data, remove=(METADATA_NAME,))


# Values no schedule has, marking where a template's schedule lies.
_MARK = (0xFFFFFFF1, 0xFFFFFFF2, 0xFFFFFFF3, 0xFFFFFFF4, 0xFFFFFFF5)


class Scheduler:
    """The model with each schedule, as with_schedule() writes it, without
    editing the flatbuffer again for each: the schedule's fixed-size record
    is written once, with marker values, and each schedule overwrites its
    five words (the search tries thousands)."""

    def __init__(self, data: bytes) -> None:
        self.template = with_schedule(data, *_MARK)
        mark = struct.pack("<2I", _engine.PATCH_MAGIC, _engine.PATCH_VERSION) + struct.pack("<5I", *_MARK)
        at = self.template.find(mark)
        # The five words past the magic and version words; -1: the marker is not unique.
        self.at = at + 8 if at >= 0 and self.template.find(mark, at + 1) < 0 else -1
        self._out = bytearray(self.template)

    def __call__(self, split: int, grid_h: int, grid_w: int, start: int = 0, mode: int = PATCHES) -> bytes:
        return bytes(self.buffer(split, grid_h, grid_w, start, mode))

    def buffer(self, split: int, grid_h: int, grid_w: int, start: int = 0,
               mode: int = PATCHES) -> bytes | bytearray:
        """The model with this schedule, in a buffer of the Scheduler's that
        the next call rewrites (the engine's Model copies what it is given)."""
        if self.at < 0:  # the marker is not unique: edit the model
            return with_schedule(self.template, split, grid_h, grid_w, start, mode)
        struct.pack_into("<5I", self._out, self.at, split, grid_h, grid_w, start, int(mode))
        return self._out


@dataclass(frozen=True)
class Search:
    """Every stage and grid the engine accepts for a model, measured."""
    candidates: list[Schedule]
    plain_used: int     # arena_used_bytes without a stage
    model_macs: int

    def front(self) -> list[Schedule]:
        """The trade-off curve: the candidates that lower the arena and that
        no other beats on both arena and extra MACs, by increasing extra
        MACs (so by decreasing arena)."""
        out: list[Schedule] = []
        for s in sorted(self.candidates, key=lambda c: (c.extra_macs, c.used, c.start, c.split, c.mode, c.grid)):
            if s.used < (out[-1].used if out else self.plain_used):
                out.append(s)
        return out

    def fast_front(self, max_extra: float | None = None) -> list[Schedule]:
        """The candidates that lower the arena (and whose extra MACs are at
        most `max_extra` of the model's, when given) that no other of them
        beats on arena, extra MACs and kernel runs together, by decreasing
        arena: the points a bound on cycles chooses from (prepare
        --max-slowdown times them), as a stage's cycles grow with its extra
        MACs and with the runs of its kernels over small patches. Of points
        equal on all three, the first the search tried."""
        pool = [c for c in self.candidates if c.used < self.plain_used
                and (max_extra is None or c.extra_macs <= max_extra * self.model_macs)]
        out: list[Schedule] = []
        for c in sorted(pool, key=lambda c: (c.used, c.extra_macs, c.runs)):
            if not any(o.extra_macs <= c.extra_macs and o.runs <= c.runs for o in out):
                out.append(c)
        return out[::-1]

    def best(self, max_extra: float) -> Schedule | None:
        """The smallest arena whose extra MACs are at most `max_extra` (a
        fraction) of the model's (ties: fewer extra MACs), None when no stage
        within it lowers the arena."""
        within = [s for s in self.front() if s.extra_macs <= max_extra * self.model_macs]
        return within[-1] if within else None


def search(data: bytes, progress: Callable[[int, int], None] | None = None) -> Search:
    """Tries every stage (each run of operators that could form one, from its
    first, at every length) and grid on the model (its schedule, if any,
    replaced), measuring each with the engine; `progress(done, total)` is
    told after each stage tried."""
    base = without_schedule(data)
    model = load_model(base)
    total = model_macs(model)
    plain = _engine.allocate(_engine.Model(base))
    scheduled = Scheduler(base)
    found: list[Schedule] = []
    stages = [(start, start + n) for start, most in _stage_candidates(model) for n in range(2, most + 1)]
    for k, (start, split) in enumerate(stages):
        if progress:
            progress(k, len(stages))
        tries = [(g, mode) for mode in (PATCHES, KEEP) for g in GRIDS] + [((b, 1), ROWS) for b in BANDS]
        for (gh, gw), mode in tries:
            try:
                ip = _engine.allocate(_engine.Model(scheduled.buffer(split, gh, gw, start, mode)))
            except ValueError:
                if mode == ROWS:
                    break  # more bands than the stage's output has rows
                continue  # the engine refuses this stage or grid (a map smaller than the grid, ...)
            found.append(Schedule(split, (gh, gw), ip.used, ip.needed, ip.patch_macs - ip.patch_whole_macs, total,
                                  start, mode))
    if progress:
        progress(len(stages), len(stages))
    return Search(found, plain.used, total)


def choose(data: bytes, max_extra: float,
           progress: Callable[[int, int], None] | None = None) -> tuple[Schedule | None, int]:
    """The schedule with the smallest arena whose extra MACs are at most
    `max_extra` (a fraction) of the model's, or None when no stage lowers
    the arena; with the arena used without patches."""
    found = search(data, progress)
    return found.best(max_extra), found.plain_used


def within_slowdown(points: list[Schedule], cycles: list[int | None], max_slowdown: float) -> Schedule | None:
    """Of `points` timed as `cycles` (the model without a stage first, then
    each point's; None for a point the board had no room for), the smallest
    arena at most `max_slowdown` (a fraction) slower than the model without
    a stage (ties: fewer extra MACs, then fewer kernel runs), None when none
    is."""
    if len(cycles) != len(points) + 1:
        raise ValueError(f"{len(cycles)} cycle counts for {len(points)} points and the model without a stage")
    # Exactly, in integers: 13% of 100 cycles admits 113 (the float 1.13 * 100 does not).
    bound = Fraction(max_slowdown).limit_denominator(10**9)
    ok = [p for p, c in zip(points, cycles[1:])
          if c is not None and c * bound.denominator <= cycles[0] * (bound.denominator + bound.numerator)]
    return min(ok, key=lambda p: (p.used, p.extra_macs, p.runs)) if ok else None


def percent_up(fraction: float) -> str:
    """A fraction as a percentage rounded up to 0.01%: given back to
    --max-extra-macs, it admits the schedule it describes."""
    return f"{math.ceil(round(fraction * 1e4, 6)) / 100:.2f}%"


def front_table(found: Search, chosen: Schedule | None, cycles: list[int | None] | None = None,
                board: str = "", points: list[Schedule] | None = None, unit: str = "cycles") -> list[str]:
    """The trade-off curve as a text table (prepare --explain): the arena
    with no stage, then each point of the front; '*' marks `chosen`. With
    `points` (found.fast_front()'s), those rows instead, and a column of
    each one's kernel runs. With `cycles` (per invoke on `board`, in `unit`,
    the row without a stage first, then each point's; None: no room on the
    board), two more columns: the figure, and how much slower each point is
    than the model without a stage."""
    head = ("", "arena_used_bytes", "extra MACs", "% of model", "stage ops", "grid")
    rows = [("", str(found.plain_used), "0", "0.00%", "-", "-")]
    for s in found.front() if points is None else points:
        rows.append(("*" if s == chosen else "", str(s.used), str(s.extra_macs), percent_up(s.overhead),
                     s.ops, s.layout))
    right = {1, 2, 3}
    if points is not None:
        head += ("kernel runs",)
        rows = [rows[0] + ("-",)] + [r + (str(s.runs),) for r, s in zip(rows[1:], points)]
        right |= {len(head) - 1}
    if cycles is not None:
        if len(cycles) != len(rows):
            raise ValueError(f"{len(cycles)} cycle counts for {len(rows)} rows")
        head += (f"{unit} on {board}", "slower")
        rows = [r + (("no room", "-") if c is None else (f"{c:,}", f"{100 * (c / cycles[0] - 1):+.2f}%" if k else "-"))
                for k, (r, c) in enumerate(zip(rows, cycles))]
        right |= {len(head) - 2, len(head) - 1}
    rows.insert(0, head)
    widths = [max(len(r[k]) for r in rows) for k in range(len(head))]
    return ["  ".join(c.rjust(w) if k in right else c.ljust(w) for k, (c, w) in enumerate(zip(r, widths))).rstrip()
            for r in rows]


def parse_fraction(text: str, option: str = "--max-extra-macs") -> float:
    """'20%' or '0.2' -> 0.2 (`option` names the argument in the error)."""
    t = text.strip()
    try:
        value = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 10:
        raise ValueError(f"{option} {text}: expected a fraction from 0 to 1000% (10), such as 20% or 0.2")
    return value
