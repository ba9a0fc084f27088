"""An execution order for the main subgraph that lowers its peak.

With branches (a ResNet block's shortcut, say) several orders compute the
same results, and the bytes alive at the busiest operator depend on the
order. This searches the orders by dynamic programming over the sets of
operators already run (for the graphs of small models there are few), and
keeps, for each set, the order reaching it with the lowest peak so far.
Bytes alive at an operator are counted as TFLM's allocation scopes count
them: tensors produced and still to be read, the operator's own inputs and
outputs, and its scratch buffers. Wide graphs fall back to a beam of the
best sets.

Operators with side effects keep their order where it matters: control
flow (CALL_ONCE, IF, WHILE) relative to every stateful operator; operators
on variable tensors among themselves; resource variables per resource: a
READ_VARIABLE stays between the ASSIGN_VARIABLEs of its resource around it
but moves freely otherwise, so a variable can be read just before its value
is used rather than long before.
"""

from __future__ import annotations

from ..arena import align, plan_layout
from ..model import Model

CONTROL_FLOW_OPS = frozenset({"CALL_ONCE", "IF", "WHILE"})
BEAM = 4000


def _state_order(model: Model) -> list[tuple[int, int]]:
    """Pairs (a, b), a before b in the model, of operators whose order
    changes what they compute."""
    sg = model.main
    ops = sg.operators
    handle_of = {t: op for op in ops if op.opcode == "VAR_HANDLE" for t in op.outputs}

    def resource(op) -> object:
        h = handle_of.get(op.inputs[0]) if op.inputs else None
        # None: a handle from elsewhere, which may name any resource.
        return None if h is None else (h.options.get("Container"), h.options.get("SharedName"))

    kinds = []  # (kind, resource) per operator
    for op in ops:
        if op.opcode in CONTROL_FLOW_OPS:
            kinds.append(("flow", None))
        elif op.opcode == "ASSIGN_VARIABLE":
            kinds.append(("write", resource(op)))
        elif op.opcode == "READ_VARIABLE":
            kinds.append(("read", resource(op)))
        elif any(t >= 0 and sg.tensors[t].is_variable for t in op.inputs):
            kinds.append(("variable", None))
        else:
            kinds.append((None, None))
    pairs = []
    for b, (kb, rb) in enumerate(kinds):
        for a in range(b):
            ka, ra = kinds[a]
            if ka is None or kb is None:
                continue
            if "flow" in (ka, kb) or (ka == kb == "variable"):
                pairs.append((a, b))
            elif {ka, kb} <= {"read", "write"} and "write" in (ka, kb) and (ra is None or rb is None or ra == rb):
                pairs.append((a, b))
    return pairs


def _graph(model: Model):
    sg = model.main
    ops = sg.operators
    n = len(ops)
    producer = {}
    for k, op in enumerate(ops):
        for t in op.outputs:
            producer[t] = k
    size = {}
    for t in sg.tensors:
        planned = not t.is_constant and not t.is_variable and t.nbytes > 0
        size[t.index] = align(t.nbytes, 16) if planned else 0
    preds = [0] * n
    for k, op in enumerate(ops):
        for t in op.inputs:
            if t >= 0 and t in producer and producer[t] != k:
                preds[k] |= 1 << producer[t]
    for a, b in _state_order(model):
        preds[b] |= 1 << a
    consumers: dict[int, int] = {}
    for k, op in enumerate(ops):
        for t in op.inputs:
            if t >= 0:
                consumers[t] = consumers.get(t, 0) | (1 << k)
    # The kernels' scratch buffers per operator, as the engine asks for them.
    scratch = [0] * n
    for r in plan_layout(model, "linear").records[sum(len(s.tensors) for s in model.subgraphs):]:
        scratch[r.node] += r.size
    return ops, producer, size, preds, consumers, scratch


def peak_of(model: Model, order: list[int]) -> int:
    """The most bytes alive at one operator when the main subgraph runs in `order`."""
    ops, producer, size, _, consumers, scratch = _graph(model)
    done = 0
    best = 0
    for o in order:
        best = max(best, _live(model, ops, producer, size, consumers, scratch, done, o))
        done |= 1 << o
    return best


def _live(model, ops, producer, size, consumers, scratch, done: int, o: int) -> int:
    sg = model.main
    outputs = set(sg.outputs)
    ran = done | (1 << o)
    live = scratch[o]
    for t, b in size.items():
        if not b:
            continue
        p = producer.get(t)
        if p is None:
            if t not in sg.inputs:
                continue
        elif not ran >> p & 1:
            continue
        if t in outputs or p == o or consumers.get(t, 0) & ~done:
            live += b
    return live


def best_order(model: Model) -> tuple[list[int], int, bool]:
    """(order, its peak, proven): the order of the main subgraph's operators
    with the lowest peak found; proven when the search covered every order."""
    ops, producer, size, preds, consumers, scratch = _graph(model)
    n = len(ops)
    identity = list(range(n))
    if n == 0:
        return identity, 0, True
    # states: set of operators run -> (peak so far, order)
    states: dict[int, tuple[int, list[int]]] = {0: (0, [])}
    proven = True
    for _ in range(n):
        nxt: dict[int, tuple[int, list[int]]] = {}
        for done, (peak, order) in states.items():
            for o in range(n):
                if done >> o & 1 or preds[o] & ~done:
                    continue
                p = max(peak, _live(model, ops, producer, size, consumers, scratch, done, o))
                key = done | (1 << o)
                if key not in nxt or p < nxt[key][0]:
                    nxt[key] = (p, order + [o])
        if len(nxt) > BEAM:
            proven = False
            nxt = dict(sorted(nxt.items(), key=lambda kv: (kv[1][0], kv[1][1]))[:BEAM])
        states = nxt
    peak, order = states[(1 << n) - 1]
    original = peak_of(model, identity)
    if original <= peak:
        return identity, original, proven
    return order, peak, proven
