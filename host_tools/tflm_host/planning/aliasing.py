"""Which tensors can share bytes while alive: views and in-place ops.

A view op (RESHAPE, SQUEEZE, EXPAND_DIMS) whose output sits on its input's
bytes copies nothing. An element-wise op can write its output over an input
of the same size when no tensor holding that input's values (the input and
its views) is read after the op or is a subgraph's output (read after the
subgraph's last op: by the caller, or after invoke()). Tensors chained this way form an alias
group that the placement treats as one buffer alive from the group's first
scope to its last. Which ops may alias comes from the engine (its kernel
table), and the engine checks every plan that uses these aliases.
"""

from __future__ import annotations

from ..arena import kernel_ops


def alias_groups(layout) -> dict[int, int]:
    """Record -> the record it aliases (its source), for every alias chosen,
    in execution order. In-place outputs take the first input that qualifies."""
    recs = layout.records
    source: dict[int, int] = {}
    view_root: dict[int, int] = {}

    def vroot(i: int) -> int:
        return view_root.get(i, i)

    kinds = kernel_ops()
    for node in layout.nodes:
        kind = kinds.get(node.opcode, "none")
        if kind == "none" or not node.outputs:
            continue
        y = node.outputs[0]
        ry = recs[y]
        if y >= layout.n_tensors or not ry.planned or y in source:
            continue
        candidates = node.inputs[:1] if kind == "view" else node.inputs
        for x in candidates:
            if x < 0 or x == y or not recs[x].planned:
                continue
            rx = recs[x]
            if rx.bytes != ry.bytes or rx.dtype_size != ry.dtype_size:
                continue
            if kind == "in_place":
                values = vroot(x)
                holders = [m for m in range(layout.n_tensors) if recs[m].planned and vroot(m) == values]
                if any(recs[m].last > ry.first or m in layout.outputs for m in holders if m != y):
                    continue
            source[y] = x
            if kind == "view":
                view_root[y] = vroot(x)
            break
    return source


def groups_of(layout, source: dict[int, int]) -> list[list[int]]:
    """The planned records grouped by shared bytes (singletons included), each
    group in index order, groups by their lowest index."""
    def root(i: int) -> int:
        while i in source:
            i = source[i]
        return i

    groups: dict[int, list[int]] = {}
    for r in layout.records:
        if r.planned:
            groups.setdefault(root(r.index), []).append(r.index)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: g[0])
