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

Operators with side effects (variables, resource variables, control flow)
keep their order relative to each other.
"""

from __future__ import annotations

from ..arena import align, plan_layout
from ..model import Model

STATEFUL_OPS = frozenset({"CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "IF", "WHILE"})
BEAM = 4000


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
    stateful = [k for k, op in enumerate(ops)
                if op.opcode in STATEFUL_OPS or any(t >= 0 and sg.tensors[t].is_variable for t in op.inputs)]
    for a, b in zip(stateful, stateful[1:]):
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
    if n == 0 or len(model.subgraphs) > 1:
        return identity, peak_of(model, identity) if n else 0, n == 0
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
