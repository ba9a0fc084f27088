"""Placing buffers with fixed lifetimes in the head: heuristics and an exact search.

The problem: each item has a size (a multiple of 16) and a lifetime, an
inclusive range of allocation scopes; give every item an offset so that no
two items alive at the same scope share bytes, with the highest end (the
head) as low as possible. Items alive at one scope must all fit, so the head
is at least the most bytes alive at one scope (the bound); fragmentation can
make the best placement higher.

Every placement here is "first fit in some order": items are put, one after
another, at the lowest offset free of the items already placed and alive at
the same time. Some order reaches an optimal placement (sort any optimal
placement by offset and first-fit it in that order: no item ends higher, and
repeating this settles on a placement where the offsets rise along the
order), so the exact search only walks such orders.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass


@dataclass
class Item:
    """A buffer to place: one tensor or scratch buffer, or several tensors
    that share their bytes (an alias group)."""

    key: int  # the lowest record index among its members
    size: int
    first: int
    last: int
    offset: int = -1
    fixed: bool = False  # placed before planning (kept where it is)

    def conflicts(self, other: "Item") -> bool:
        return not (self.first > other.last or other.first > self.last)


def bound(items: list[Item]) -> int:
    """The most bytes alive at one scope: no placement has a smaller head."""
    events: dict[int, int] = {}
    for it in items:
        events[it.first] = events.get(it.first, 0) + it.size
        events[it.last + 1] = events.get(it.last + 1, 0) - it.size
    live = best = 0
    for scope in sorted(events):
        live += events[scope]
        best = max(best, live)
    return best


def head_of(items: list[Item]) -> int:
    return max((it.offset + it.size for it in items), default=0)


class _Conflicts:
    """For each item, the items alive at some common scope."""

    def __init__(self, items: list[Item]) -> None:
        self.of = [[j for j, b in enumerate(items) if j != i and a.conflicts(b)] for i, a in enumerate(items)]


def _lowest_fit(size: int, busy: list[tuple[int, int]], fit: str = "first") -> int:
    """Lowest offset (or, with fit="best", the start of the smallest gap that
    holds `size`, else the top) free of the busy (offset, end) ranges."""
    busy = sorted(busy)
    offset = 0
    best_gap, best_at = None, None
    for start, end in busy:
        if start - offset >= size:
            if fit == "first":
                return offset
            gap = start - offset
            if best_gap is None or gap < best_gap:
                best_gap, best_at = gap, offset
        offset = max(offset, end)
    if best_at is not None:
        return best_at
    return offset


def place_in_order(items: list[Item], order: list[int], fit: str = "first",
                   conflicts: _Conflicts | None = None) -> int:
    """Places the items in `order` (fixed items keep their offsets and come
    first); returns the head."""
    conflicts = conflicts or _Conflicts(items)
    placed = [it.fixed for it in items]
    for i in order:
        it = items[i]
        if it.fixed:
            continue
        busy = [(items[j].offset, items[j].offset + items[j].size) for j in conflicts.of[i] if placed[j]]
        it.offset = _lowest_fit(it.size, busy, fit)
        placed[i] = True
    return head_of(items)


# -- orders the heuristics try -------------------------------------------------

def _orders(items: list[Item], conflicts: _Conflicts) -> dict[str, list[int]]:
    n = range(len(items))
    degree = [sum(items[j].size for j in conflicts.of[i]) for i in n]
    return {
        "size": sorted(n, key=lambda i: (-items[i].size, -items[i].key)),  # TFLM's greedy
        "size, longest first": sorted(n, key=lambda i: (-items[i].size, items[i].first - items[i].last, i)),
        "area": sorted(n, key=lambda i: (-items[i].size * (items[i].last - items[i].first + 1), i)),
        "lifetime": sorted(n, key=lambda i: (items[i].first - items[i].last, -items[i].size, i)),
        "start": sorted(n, key=lambda i: (items[i].first, -items[i].size, i)),
        "conflict weight": sorted(n, key=lambda i: (-(degree[i] + items[i].size), -items[i].size, i)),
    }


@dataclass
class Placement:
    head: int
    offsets: list[int]  # per item
    method: str
    proven: bool  # no placement has a smaller head
    bound: int


def _snapshot(items: list[Item]) -> list[int]:
    return [it.offset for it in items]


def _restore(items: list[Item], offsets: list[int]) -> None:
    for it, off in zip(items, offsets):
        it.offset = off


def heuristic(items: list[Item], time_limit: float = 1.0, seed: int = 0) -> Placement:
    """The best of first fit and best fit over several orders, then
    conflict-driven improvement ("squeaky wheel"): the items that end highest
    move to the front of the order, until the bound is reached or time runs out."""
    lb = bound(items)
    conflicts = _Conflicts(items)
    best: Placement | None = None
    best_order: list[int] = []
    for name, order in _orders(items, conflicts).items():
        for fit in ("first", "best"):
            head = place_in_order(items, order, fit, conflicts)
            if best is None or head < best.head:
                best = Placement(head, _snapshot(items), f"{fit} fit by {name}", head == lb, lb)
                best_order = list(order)
            if best.head == lb:
                return best
    assert best is not None
    # Squeaky wheel: move the items above the bound forward, with a little noise.
    rng = random.Random(seed)
    deadline = time.monotonic() + time_limit
    order = list(best_order)
    rounds = 0
    while time.monotonic() < deadline and best.head > lb:
        rounds += 1
        place_in_order(items, order, "first", conflicts)
        ends = {i: items[i].offset + items[i].size for i in range(len(items))}
        top = head_of(items)
        pos = {i: k for k, i in enumerate(order)}
        # Priority: the higher an item ends, the earlier it goes.
        prio = {i: pos[i] - (len(order) * (ends[i] - lb) / max(top, 1) if ends[i] > lb else 0)
                + rng.random() * 2 for i in order}
        order.sort(key=prio.__getitem__)
        head = place_in_order(items, order, "first", conflicts)
        if head < best.head:
            best = Placement(head, _snapshot(items), f"conflict-driven ({rounds} rounds)", head == lb, lb)
        if rounds % 50 == 0:
            order = list(best_order)
            rng.shuffle(order[: max(2, len(order) // 4)])
    _restore(items, best.offsets)
    return best


def exact(items: list[Item], upper: Placement, time_limit: float = 5.0) -> Placement:
    """Branch and bound over first-fit orders whose offsets never go down
    (some such order is optimal). Returns a placement with proven=True when
    the search finished, else the best found so far."""
    lb = bound(items)
    if upper.head <= lb or not items:
        return Placement(upper.head, upper.offsets, upper.method, True, lb)
    conflicts = _Conflicts(items)
    n = len(items)
    best_head = upper.head
    best_offsets = list(upper.offsets)
    offsets = [-1] * n
    fixed = [i for i in range(n) if items[i].fixed]
    for i in fixed:
        offsets[i] = items[i].offset
    # Items that cannot be told apart (size and lifetime) are placed in index order.
    twin_of = {}
    seen: dict[tuple[int, int, int], int] = {}
    for i in range(n):
        k = (items[i].size, items[i].first, items[i].last)
        twin_of[i] = seen.get(k, -1)
        seen[k] = i
    deadline = time.monotonic() + time_limit
    timed_out = False
    nodes = 0

    def fit(i: int) -> int:
        busy = [(offsets[j], offsets[j] + items[j].size) for j in conflicts.of[i] if offsets[j] >= 0]
        return _lowest_fit(items[i].size, busy)

    def search(last_offset: int, last_index: int, top: int, left: int) -> None:
        nonlocal best_head, best_offsets, timed_out, nodes
        if left == 0:
            if top < best_head:
                best_head, best_offsets = top, list(offsets)
            return
        nodes += 1
        if nodes % 512 == 0 and time.monotonic() > deadline:
            timed_out = True
            return
        candidates = []
        bound_here = top
        for i in range(n):
            if offsets[i] >= 0:
                continue
            at = fit(i)
            # First-fit offsets only rise as more items are placed.
            bound_here = max(bound_here, at + items[i].size)
            if bound_here >= best_head:
                return
            t = twin_of[i]
            if t >= 0 and offsets[t] < 0:
                continue
            if at > last_offset or (at == last_offset and i > last_index):
                candidates.append((at + items[i].size, at, i))
        for end, at, i in sorted(candidates):
            if max(top, end) >= best_head:
                break
            offsets[i] = at
            search(at, i, max(top, end), left - 1)
            offsets[i] = -1
            if timed_out or best_head <= lb:
                return

    search(-1, -1, max((offsets[i] + items[i].size for i in fixed), default=0), n - len(fixed))
    for i, off in enumerate(best_offsets):
        items[i].offset = off
    improved = best_head < upper.head
    method = "exact search" if improved else upper.method
    return Placement(best_head, best_offsets, method, not timed_out or best_head <= lb, lb)


def plan(items: list[Item], time_limit: float = 5.0, exact_limit: int = 200) -> Placement:
    """Heuristics first; the exact search when they stop above the bound and
    the model is small enough to hope for a proof."""
    best = heuristic(items, time_limit=min(1.0, time_limit / 4))
    if not best.proven and len(items) <= exact_limit:
        best = exact(items, best, time_limit=time_limit)
    _restore(items, best.offsets)
    return best
