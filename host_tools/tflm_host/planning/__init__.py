"""Offline memory plans computed on the host (`tflm-host plan`).

The plan places every buffer of the arena's head: the model's tensors and
the kernels' scratch buffers, with the sizes and lifetimes the device gives
them (the module's engine computes them, arena.py). The engine also checks
the result, as the device checks every plan before it uses it. On top of a placement that reaches the
bound (the most bytes alive at one operator) wherever the search can, two
exact changes can go below it: aliases (views and in-place element-wise
ops share their input's bytes, aliasing.py) and an execution order with a
lower peak (schedule.py; the model is written with its operators in that
order, which TFLM and the device both run as given). With aliases, the
engine's greedy plan with overlapped buffers (an op's output over the input
that dies there, engine/overlap.h) is a candidate too: the lower head wins.
Its overlaps are the ones TFLM's kernels also run (outputs below their
inputs) unless the plan is for this runtime only (`backward`): then also
outputs above their inputs where its kernels run backward.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import fbedit
from ..arena import Layout, plan_layout
from ..model import Model, load_model
from . import placement
from .aliasing import alias_groups, groups_of
from .formats import OfflinePlan, metadata_entries
from .schedule import best_order


@dataclass
class PlanResult:
    model: bytes  # the model the plan is for: reordered when `order` is set
    order: list[int] | None  # the main subgraph's operators in their new order, None: unchanged
    plan: OfflinePlan
    layout: Layout  # the device's arena with this plan
    head: int
    bound: int  # most bytes alive at one operator in this order, without aliases (scratch included)
    method: str
    proven: bool  # no placement of these buffers in this order, with these aliases, is smaller
    aliases: int  # tensors sharing an input's bytes

    def embedded(self) -> bytes:
        """The model with the plan in its metadata."""
        m = load_model(self.model)
        return fbedit.edit_model(self.model, metadata_entries(self.plan, len(m.subgraphs)))


def _place(model: Model, alias: bool, time_limit: float, preallocated) -> tuple[OfflinePlan, placement.Placement, int, int]:
    layout = plan_layout(model, "greedy", preallocated=preallocated)
    source = alias_groups(layout) if alias else {}
    recs = layout.records
    groups = groups_of(layout, source)
    items = [placement.Item(g[0], max(recs[i].size for i in g), min(recs[i].first for i in g),
                            max(recs[i].last for i in g)) for g in groups]
    result = placement.plan(items, time_limit=time_limit)
    offsets = [-1] * len(recs)
    for g, it in zip(groups, items):
        for i in g:
            offsets[i] = it.offset
    n = layout.n_tensors
    scratch = offsets[n:] if len(recs) > n else None
    no_alias = placement.bound([placement.Item(r.index, r.size, r.first, r.last) for r in layout.buffers])
    return OfflinePlan(offsets[:n], scratch), result, no_alias, len(source)


def _overlapped(model: Model, data: bytes, order: list[int] | None, no_alias: int, n_alias: int,
                preallocated, backward: bool) -> PlanResult:
    """The engine's greedy plan, which overlaps an op's output with its dying
    input where the kernel allows it, as an offline plan (checked again):
    outputs below their inputs only, as TFLM's kernels run them too, unless
    `backward` (the device's own greedy planner also puts outputs above
    inputs where its kernels run backward)."""
    greedy = plan_layout(model, "greedy", preallocated=preallocated, forward_overlaps=not backward)
    offsets = [r.offset if r.planned else -1 for r in greedy.records]
    n = greedy.n_tensors
    plan = OfflinePlan(offsets[:n], offsets[n:] if len(offsets) > n else None)
    layout = plan_layout(model, "offline", plan=plan, preallocated=preallocated)
    if layout.head != greedy.head:
        raise RuntimeError(f"internal error: greedy head {greedy.head}, as a plan {layout.head}")
    return PlanResult(data, order, plan, layout, layout.head, no_alias, "greedy with overlaps", False, n_alias)


def plan_model(data: bytes, *, alias: bool = True, reorder: bool = True, time_limit: float = 5.0,
               preallocated: tuple[int, ...] = (), backward: bool = False) -> PlanResult:
    """The best plan found for the model (and, with `reorder`, for the best
    execution order found); the result is checked as the device checks it.
    It runs on TFLM's kernels too, unless `backward`: a plan for this
    runtime only, whose int8 convolutions may write their output above
    their input (engine/overlap.h, the backward rule)."""
    model = load_model(data)
    candidates: list[tuple[bytes, list[int] | None]] = [(data, None)]
    # Only the main subgraph is reordered; the order's head is measured, not estimated.
    if reorder:
        order, _, _ = best_order(model)
        if order != list(range(len(order))):
            candidates.append((fbedit.edit_model(data, order=order), order))
    best: PlanResult | None = None
    for cand, order in candidates:
        m = load_model(cand)
        plan, placed, no_alias, n_alias = _place(m, alias, time_limit, preallocated)
        layout = plan_layout(m, "offline", plan=plan, preallocated=preallocated)
        if layout.head != placed.head:
            raise RuntimeError(f"internal error: plan head {placed.head}, device head {layout.head}")
        result = PlanResult(cand, order, plan, layout, layout.head, no_alias, placed.method, placed.proven, n_alias)
        if best is None or result.head < best.head:
            best = result
        if alias:
            overlapped = _overlapped(m, cand, order, no_alias, n_alias, preallocated, backward)
            if overlapped.head < best.head:
                best = overlapped
    assert best is not None
    return best


__all__ = ["PlanResult", "plan_model", "OfflinePlan"]
