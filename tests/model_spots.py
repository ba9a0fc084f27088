"""Where a .tflite model keeps the words its reader follows, for mutations
that hit them: vector lengths, shapes, tensor and buffer indices, types,
names, opcode indices and the scalar fields of operator options (subgraph
indices of control-flow ops among them). The engine's fuzzer has the same map in C
(tests/engine/fuzz_model.c)."""

from __future__ import annotations

from dataclasses import dataclass

import tflite


@dataclass(frozen=True)
class Spot:
    pos: int
    size: int  # 1 or 4 bytes
    what: str


def _field(tab, slot: int) -> int:
    """Absolute position of a table field (vtable slot 4 + 2 * field), 0 when absent."""
    off = tab.Offset(slot)
    return tab.Pos + off if off else 0


def _vector(tab, slot: int) -> tuple[int, int]:
    """(position of element 0, count) of a vector field, (0, 0) when absent."""
    off = tab.Offset(slot)
    if not off:
        return 0, 0
    return tab.Vector(off), tab.VectorLen(off)


def spots(data: bytes) -> list[Spot]:
    model = tflite.Model.GetRootAsModel(data, 0)
    out: list[Spot] = []

    def vec(tab, slot: int, what: str, elements: bool = True) -> None:
        pos, n = _vector(tab, slot)
        if pos:
            out.append(Spot(pos - 4, 4, f"{what} length"))
            if elements:
                out.extend(Spot(pos + 4 * i, 4, f"{what}[{i}]") for i in range(min(n, 16)))

    def field(tab, slot: int, size: int, what: str) -> None:
        pos = _field(tab, slot)
        if pos:
            out.append(Spot(pos, size, what))

    vec(model._tab, 6, "operator codes", elements=False)
    vec(model._tab, 8, "subgraphs", elements=False)
    vec(model._tab, 12, "buffers", elements=False)
    for s in range(model.SubgraphsLength()):
        sg = model.Subgraphs(s)
        for slot, name in ((4, "tensors"), (10, "operators")):
            vec(sg._tab, slot, f"subgraph {s} {name}", elements=False)
        vec(sg._tab, 6, f"subgraph {s} inputs")
        vec(sg._tab, 8, f"subgraph {s} outputs")
        for i in range(sg.TensorsLength()):
            t = sg.Tensors(i)._tab
            vec(t, 4, f"tensor {i} shape")
            field(t, 6, 1, f"tensor {i} type")
            field(t, 8, 4, f"tensor {i} buffer")
            name, length = _vector(t, 10)
            if length:
                out.append(Spot(name, 1, f"tensor {i} name"))
        for i in range(sg.OperatorsLength()):
            op = sg.Operators(i)
            tab = op._tab
            field(tab, 4, 4, f"operator {i} opcode index")
            vec(tab, 6, f"operator {i} inputs")
            vec(tab, 8, f"operator {i} outputs")
            opts = op.BuiltinOptions()  # a table positioned at the options
            if opts is not None:
                for f in range(8):
                    field(opts, 4 + 2 * f, 4, f"operator {i} option {f}")
    return out
