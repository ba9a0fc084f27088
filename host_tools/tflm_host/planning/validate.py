"""The device's checks of offline plans and pre-allocated tensors, mirrored.

Same rules and same messages as micropython_mod/engine/plan.c and
interpreter.c, so the host rejects exactly the plans the device rejects.
Aliases: records may share bytes while both are alive only as the output of
a view op at its input's offset, or of an element-wise op at the offset of
an input of the same size whose values are not read after that op.
"""

from __future__ import annotations

from ..model import Model
from .formats import ONLINE, OfflinePlan

ALIGN = 16
MAX_END = 0x7FFFFFF0

VIEW_OPS = frozenset({"RESHAPE", "SQUEEZE", "EXPAND_DIMS"})
IN_PLACE_OPS = frozenset({"ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "RELU", "RELU6", "LEAKY_RELU",
                          "HARD_SWISH", "LOGISTIC", "TANH"})


def alias_kind(opcode: str) -> str | None:
    if opcode in VIEW_OPS:
        return "view"
    if opcode in IN_PLACE_OPS:
        return "in-place"
    return None


def _kind(layout_or_n, i: int) -> str:
    n = layout_or_n if isinstance(layout_or_n, int) else layout_or_n.n_tensors
    return f"scratch buffer {i - n}" if i >= n else f"tensor {i}"


def use_external(model: Model, recs, base, preallocated) -> None:
    """Marks pre-allocated tensors (indices in the main subgraph) as living
    outside the arena; errors as the device gives them."""
    tensors = model.main.tensors
    for t in preallocated:
        if not 0 <= t < len(tensors):
            raise ValueError(f"tensor {t} does not exist (the model has {len(tensors)} tensors)")
        r = recs[base[(0, t)]]
        if not r.planned and not r.external:
            what = "a constant" if tensors[t].is_constant else "a variable" if tensors[t].is_variable else "empty"
            raise ValueError(f"tensor {t} is {what}: only tensors the arena's head would hold can be pre-allocated")
        r.planned = False
        r.external = True


def apply_plan(recs, n_tensors: int, plan: OfflinePlan) -> None:
    n_scratch = len(recs) - n_tensors
    if len(plan.tensors) != n_tensors:
        raise ValueError(f"offline plan has {len(plan.tensors)} tensor offsets, the model has {n_tensors} tensors")
    if plan.scratch is not None and len(plan.scratch) != n_scratch:
        raise ValueError(f"offline plan has {len(plan.scratch)} scratch buffer offsets, "
                         f"the kernels ask for {n_scratch} scratch buffers")
    offsets = list(plan.tensors) + (list(plan.scratch) if plan.scratch is not None else [])
    for i, off in enumerate(offsets):
        if off == ONLINE:
            continue
        if off < 0:
            raise ValueError(f"offline plan: {_kind(n_tensors, i)} has offset {off}")
        r = recs[i]
        if r.external:
            raise ValueError(f"tensor {i} is pre-allocated, but the offline plan places it at offset {off}")
        if not r.planned:
            continue  # constants, variables, empty tensors: ignored, as TFLM does
        r.offset = off
        r.fixed = True


class _Aliases:
    """Alias sources of the layout's records (the device's alias_parent)."""

    def __init__(self, layout) -> None:
        self.layout = layout
        self.producer = {}
        for node in layout.nodes:
            if node.outputs:
                self.producer.setdefault(node.outputs[0], node)

    def parent(self, y: int) -> tuple[str | None, int]:
        recs = self.layout.records
        ry = recs[y]
        if y >= self.layout.n_tensors or not ry.planned:
            return None, -1
        node = self.producer.get(y)
        if node is None:
            return None, -1
        kind = alias_kind(node.opcode)
        candidates = node.inputs[:1] if kind == "view" else node.inputs if kind else []
        for x in candidates:
            if x < 0 or x == y or not recs[x].planned:
                continue
            rx = recs[x]
            if rx.offset == ry.offset and rx.bytes == ry.bytes and rx.dtype_size == ry.dtype_size:
                return kind, x
        return None, -1

    def root(self, i: int, views_only: bool) -> int:
        for _ in range(self.layout.n_tensors):
            kind, x = self.parent(i)
            if kind is None or (views_only and kind != "view"):
                break
            i = x
        return i


def check(layout) -> None:
    """Raises ValueError with the device's message for the first problem."""
    recs = layout.records
    head = [r for r in recs if r.planned]
    for r in head:
        align = ALIGN if r.index >= layout.n_tensors else min(r.dtype_size, 8)
        if align > 1 and r.offset % align:
            raise ValueError(f"offline plan: {_kind(layout, r.index)} at offset {r.offset} is not {align}-byte aligned")
        if r.offset > MAX_END - r.size:
            raise ValueError(f"offline plan: {_kind(layout, r.index)} at offset {r.offset} is beyond any arena")
    aliases = _Aliases(layout)
    for k, a in enumerate(head):
        for b in head[k + 1:]:
            if not a.overlaps(b) or a.offset >= b.offset + b.size or b.offset >= a.offset + a.size:
                continue
            if a.offset == b.offset and a.size == b.size and \
                    aliases.root(a.index, False) == aliases.root(b.index, False):
                continue
            lo, hi = max(a.offset, b.offset), min(a.offset + a.size, b.offset + b.size)
            raise ValueError(f"offline plan: {_kind(layout, a.index)} and {_kind(layout, b.index)} share bytes "
                             f"{lo}-{hi - 1} while both are alive (scope {max(a.first, b.first)})")
    for y in range(layout.n_tensors):
        kind, x = aliases.parent(y)
        if kind != "in-place":
            continue
        values = aliases.root(x, True)
        for m in range(layout.n_tensors):
            rm = recs[m]
            if m == y or not rm.planned or rm.offset != recs[x].offset or rm.last <= recs[y].first:
                continue
            if aliases.root(m, True) == values:
                raise ValueError(f"offline plan: tensor {y} is computed in place over tensor {x}, "
                                 f"but tensor {m} is read after that (scope {rm.last})")
