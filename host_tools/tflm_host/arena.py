"""The device's arena, predicted on the host: lifetimes, plans and sizes.

This mirrors micropython_mod/engine: the same records (16 bytes per
subgraph, tensor and node; uint16 index lists), the same kernel data
(kernels.py), TFLM's allocation scopes for lifetimes, and the same planners.
Because the device lays the arena out with 32-bit offsets only, the result is
the device's arena_used_bytes on every target.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .specs import KERNELS, missing_ops
from .model import Model

ALIGN = 16
RECORD = 16
UNSET = -1


def align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


@dataclass
class Buffer:
    """A buffer the planner places in the head: a model tensor or a scratch buffer."""

    index: int  # global record index (tensors of all subgraphs, then scratch buffers)
    bytes: int
    first: int = UNSET
    last: int = UNSET
    offset: int = -1
    subgraph: int = 0
    tensor: int = -1  # index in its subgraph, -1 for scratch buffers
    node: int = -1  # the operator a scratch buffer belongs to
    fixed: bool = False  # offset given before planning (offline plans)
    external: bool = False  # pre-allocated outside the arena
    dtype_size: int = 1  # bytes per element (alignment)

    @property
    def size(self) -> int:
        return align(self.bytes, ALIGN)

    def overlaps(self, other: Buffer) -> bool:
        return not (self.first > other.last or other.first > self.last)


AUDIT_NAMES = ("head", "subgraph records", "tensor records", "scratch records", "node records",
               "index lists", "kernel data", "variable tensors", "resource variables", "alignment")
RESOURCE_RECORD = 8


@dataclass
class Audit:
    used: int = 0
    requested: int = 0
    count: int = 0

    def add(self, used: int, requested: int, count: int = 1) -> None:
        self.used += used
        self.requested += requested
        self.count += count


@dataclass
class Node:
    """An operator as the planner sees it: global record indices."""

    index: int  # global node index
    opcode: str
    inputs: list[int]  # record indices, -1 for omitted inputs
    outputs: list[int]
    scope: int  # the allocation scope it runs in


@dataclass
class Layout:
    records: list[Buffer]  # every tensor record: model tensors, then scratch buffers
    head: int
    tail: int
    scopes: int  # number of allocation scopes (rows of a plan picture)
    audit: dict[str, Audit] = field(default_factory=dict)
    prepare_peak: int = 0  # bytes in use at the busiest moment of prepare()
    nodes: list[Node] = field(default_factory=list)
    planner: str = "greedy"
    n_tensors: int = 0  # model tensor records (the scratch buffers' records follow)

    @property
    def used(self) -> int:
        return self.head + self.tail

    @property
    def needed(self) -> int:
        """The smallest arena that allocates (tflm.arena_size): head + tail,
        or more if a kernel's temporary memory in prepare() needs it."""
        return max(self.used, self.prepare_peak)

    @property
    def buffers(self) -> list[Buffer]:
        """The buffers planned in the head."""
        return [b for b in self.records if b.planned]  # type: ignore[attr-defined]

    def plan_tuples(self) -> list[tuple]:
        """The head's plan as the device's interp.buffers() lists it."""
        out = []
        for b in self.buffers:
            scratch = b.tensor < 0
            out.append(("scratch" if scratch else "tensor", b.index - self.n_tensors if scratch else b.index,
                        b.offset, b.bytes, b.first, b.last))
        return out

    def audit_dict(self) -> dict[str, dict[str, int]]:
        return {k: {"used": a.used, "requested": a.requested, "count": a.count} for k, a in self.audit.items()}

    def memory_plan(self, width: int = 80) -> str:
        """The plan as text, exactly as the device's interp.memory_plan() prints it."""
        width = max(8, min(width, 200))
        span = max(self.head, width)
        planned = self.buffers
        last = max((b.last for b in planned), default=-1)
        lines = [f"head {self.head} bytes over {width} columns; row n: during operator n-1 (row 0: inputs);",
                 "0-9a-zA-Z: tensor 0-61, *: higher tensors, #: scratch buffer, !: overlap"]
        for scope in range(0, last + 1):
            row = ["."] * width
            live = 0
            for b in planned:
                if not b.first <= scope <= b.last:
                    continue
                live += b.size
                c = plan_char(b)
                for col in range(b.offset * width // span, min((b.offset + b.size) * width // span, width)):
                    row[col] = c if row[col] == "." else "!"
            lines.append(f"{scope:3d}: {''.join(row)} {live}")
        return "\n".join(lines) + "\n"


_PLAN_CHARS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def plan_char(b: Buffer) -> str:
    if b.tensor < 0:
        return "#"
    return _PLAN_CHARS[b.index] if b.index < len(_PLAN_CHARS) else "*"


class UnsupportedModel(NotImplementedError):
    pass


def _control_flow_subgraphs(op) -> list[int]:
    o = op.options
    if op.opcode == "CALL_ONCE":
        return [o.get("InitSubgraphIndex", -1)]
    if op.opcode == "IF":
        return [o.get("ThenSubgraphIndex", -1), o.get("ElseSubgraphIndex", -1)]
    if op.opcode == "WHILE":
        return [o.get("CondSubgraphIndex", -1), o.get("BodySubgraphIndex", -1)]
    return []


def records(model: Model) -> tuple[list[Buffer], list[list[int]], dict[tuple[int, int], int]]:
    """Record list of all model tensors, with the global index base per subgraph."""
    from . import schema

    recs = []
    bases = {}
    g = 0
    for sg in model.subgraphs:
        for t in sg.tensors:
            bases[(sg.index, t.index)] = g
            planned = not t.is_constant and not t.is_variable and t.nbytes > 0
            recs.append(Buffer(g, t.nbytes if planned else 0, subgraph=sg.index, tensor=t.index,
                               dtype_size=schema.TYPE_SIZES.get(t.dtype, 1)))
            recs[-1].planned = planned  # type: ignore[attr-defined]
            g += 1
    return recs, [], bases


def default_planner(model: Model) -> str:
    """The device's choice when none is given: the offline planner for a
    model with a plan in its metadata, else the greedy one."""
    from .planning.formats import METADATA_NAME

    return "offline" if METADATA_NAME in model.metadata else "greedy"


def plan_layout(model: Model, planner: str | None = None, scratch: dict[int, list[int]] | None = None,
                kernels: bool = True, plan=None, preallocated=()) -> Layout:
    """Lifetimes, plan and sizes of the model's arena, as the device computes
    them. With kernels=False, ops the device lacks are allowed and planned
    with no kernel data or scratch buffers (the head of the tensors alone).
    planner None picks as the device does; "offline" uses `plan` (an
    OfflinePlan, the shim) or the model's metadata, and checks the result as
    the device does (ValueError with the device's message). `preallocated`:
    tensors of the main subgraph that live outside the arena."""
    from .planning import formats, validate

    missing = missing_ops(model)
    if missing and kernels:
        raise UnsupportedModel("model uses ops this firmware does not include: " + ", ".join(missing))
    if planner is None:
        planner = "offline" if plan is not None else default_planner(model)
    if planner not in PLANNERS and planner != "offline":
        raise ValueError(f"unknown planner {planner!r} (planners: {', '.join(list(PLANNERS) + ['offline'])})")
    recs, _, base = records(model)
    # Kernel data, scratch requests and temporary memory, per node in execution order.
    data, temps = [], []
    scratch_sizes: list[tuple[int, int]] = []  # (global node, bytes)
    node = 0
    node_base = {}
    for sg in model.subgraphs:
        node_base[sg.index] = node
        for op in sg.operators:
            spec = KERNELS.get(op.opcode) if kernels else None
            data.append(spec.data_bytes(model, sg, op) if spec else 0)
            temps.append(spec.temp(model, sg, op) if spec else 0)
            for b in (scratch or {}).get(node, spec.scratch(model, sg, op) if spec else []):
                scratch_sizes.append((node, b))
            node += 1
    scratch_bufs = []
    for k, (n, b) in enumerate(scratch_sizes):
        buf = Buffer(len(recs) + k, b, node=n)
        buf.planned = b > 0  # type: ignore[attr-defined]
        scratch_bufs.append(buf)
    all_recs = recs + scratch_bufs
    scopes, nodes = _mark_lifetimes(model, all_recs, base, node_base, scratch_sizes)
    validate.use_external(model, all_recs, base, preallocated)
    if planner == "offline":
        if plan is None:
            plan = formats.plan_from_model(model)
            if plan is None:
                raise ValueError(f"the model has no {formats.METADATA_NAME} metadata: give the offline planner a plan")
        validate.apply_plan(all_recs, len(recs), plan)
    planned = [r for r in all_recs if r.planned]  # type: ignore[attr-defined]
    head = PLANNERS["greedy" if planner == "offline" else planner](planned)
    layout = Layout(all_recs, head, 0, scopes, {}, 0, nodes, planner, len(recs))
    if planner == "offline":
        validate.check(layout)
    audit = {name: Audit() for name in AUDIT_NAMES}
    audit["head"].add(head, sum(b.bytes for b in planned), len(planned))
    layout.tail = _tail_bytes(model, data, len(scratch_sizes), audit)
    layout.audit = audit
    layout.prepare_peak = _prepare_peak(model, data, temps, len(scratch_sizes))
    return layout


def _prepare_peak(model: Model, data: list[int], temps: list[int], n_scratch: int) -> int:
    """The most bytes in use during prepare(): a node's temporary memory on
    top of the tail built so far (records, then each node's index list and
    kernel data, in execution order)."""
    n_tensors = sum(len(sg.tensors) for sg in model.subgraphs)
    tail = RECORD * (len(model.subgraphs) + n_tensors + n_scratch + sum(len(sg.operators) for sg in model.subgraphs))
    tail += sum(align(2 * (len(sg.inputs) + len(sg.outputs)), 4) for sg in model.subgraphs)
    peak, node = 0, 0
    for sg in model.subgraphs:
        for op in sg.operators:
            tail += align(2 * (len(op.inputs) + len(op.outputs)), 4) + align(data[node], 4)
            if temps[node]:
                peak = max(peak, align(tail + temps[node], ALIGN))
            node += 1
    return peak


# As the engine's (interpreter.h): subgraphs nested in calls, subgraph 0 included.
MAX_CALL_DEPTH = 32
MAX_SCOPES = 32767


def _mark_lifetimes(model, recs, base, node_base, scratch_sizes) -> tuple[int, list[Node]]:
    """TFLM's allocation scopes: sets each record's first and last scope;
    returns the scope count and the operators in execution order. Walks the
    calls with a stack of its own and gives the engine's verdicts (lifetimes.c):
    calls nested too deep or in a cycle, too many scopes, and operators that
    read a tensor nothing has written."""
    scope = 0
    nodes: dict[int, Node] = {}
    written: set[int] = set()
    scratch_of: dict[int, list[int]] = {}
    for k, (owner, _) in enumerate(scratch_sizes):
        scratch_of.setdefault(owner, []).append(len(recs) - len(scratch_sizes) + k)

    def next_scope() -> None:
        nonlocal scope
        scope += 1
        if scope > MAX_SCOPES:
            raise ValueError(f"model too large: more than {MAX_SCOPES} allocation scopes (operators and subgraph calls)")

    def enter(stack: list[list], s: int) -> None:
        if any(f[0] == s for f in stack):
            raise ValueError(f"malformed model: subgraph {s} calls itself")
        if len(stack) == MAX_CALL_DEPTH:
            raise ValueError(f"model nests subgraph calls more than {MAX_CALL_DEPTH} deep (subgraph {s})")
        sg = model.subgraphs[s]
        for t in list(sg.inputs) + list(sg.outputs):
            recs[base[(s, t)]].first = recs[base[(s, t)]].last = scope
        written.update(base[(s, t)] for t in sg.inputs)
        # subgraph, next operator, its first scope, subgraphs it calls still to enter
        stack.append([s, 0, 0, None])

    stack: list[list] = []
    enter(stack, 0)
    while stack:
        f = stack[-1]
        s, n, _, calls = f
        sg = model.subgraphs[s]
        g = node_base[s] + n
        if calls is None:
            if n == len(sg.operators):
                for t in sg.outputs:
                    recs[base[(s, t)]].last = scope
                stack.pop()
                continue
            op = sg.operators[n]
            next_scope()
            ins = [base[(s, t)] if t >= 0 else -1 for t in op.inputs]
            outs = [base[(s, t)] for t in op.outputs]
            nodes[g] = Node(g, op.opcode, ins, outs, scope)
            for i, t in zip(ins, op.inputs):
                if i >= 0 and recs[i].planned and i not in written:  # type: ignore[attr-defined]
                    raise ValueError(f"malformed model: operator {g} reads tensor {t} of subgraph {s} before "
                                     "anything writes it (not a constant, an input or a variable)")
            for o in outs:
                recs[o].first = recs[o].last = scope
            f[2] = scope
            f[3] = []
            for called in _control_flow_subgraphs(op):
                if called != -1:
                    if not 0 <= called < len(model.subgraphs):
                        raise ValueError(f"malformed model: operator calls subgraph {called} of {len(model.subgraphs)}")
                    f[3].append(called)
        elif calls:
            next_scope()
            enter(stack, calls.pop(0))
        else:
            node = nodes[g]
            for i in node.inputs + node.outputs:
                if i >= 0:
                    recs[i].last = scope
            written.update(node.outputs)
            for r in scratch_of.get(g, []):
                recs[r].first, recs[r].last = f[2], scope
            f[1], f[3] = n + 1, None
    return scope + 1, [nodes[g] for g in sorted(nodes)]


def greedy(buffers: list[Buffer]) -> int:
    """TFLM's greedy first fit: fixed buffers first, then by size descending
    (equal sizes: higher index first), each at the lowest offset free during
    its lifetime."""
    order = [b for b in buffers if b.fixed] + sorted(
        (b for b in buffers if not b.fixed), key=lambda b: (-b.size, -b.index))
    placed: list[Buffer] = []
    head = 0
    for b in order:
        if not b.fixed:
            live = sorted((p for p in placed if p.overlaps(b)), key=lambda p: p.offset)
            offset = 0
            for p in live:
                if p.offset >= offset + b.size:
                    break
                offset = max(offset, p.offset + p.size)
            b.offset = offset
        placed.append(b)
        head = max(head, b.offset + b.size)
    return head


def linear(buffers: list[Buffer]) -> int:
    offset = 0
    for b in buffers:
        b.offset = offset
        offset += b.size
    return offset


PLANNERS = {"greedy": greedy, "linear": linear}


def _tail_bytes(model: Model, data: list[int], n_scratch: int, audit: dict[str, Audit]) -> int:
    """The tail as the device's arena allocator lays it out: pieces rounded
    to 4 bytes, then 16-byte aligned variable tensors, then the tail aligned
    to 16. Fills the audit's tail categories."""
    n_tensors = sum(len(sg.tensors) for sg in model.subgraphs)
    n_nodes = sum(len(sg.operators) for sg in model.subgraphs)
    audit["subgraph records"].add(RECORD * len(model.subgraphs), RECORD * len(model.subgraphs), len(model.subgraphs))
    audit["tensor records"].add(RECORD * n_tensors, RECORD * n_tensors, n_tensors)
    audit["scratch records"].add(RECORD * n_scratch, RECORD * n_scratch, n_scratch)
    audit["node records"].add(RECORD * n_nodes, RECORD * n_nodes, n_nodes)
    for sg in model.subgraphs:
        lists = [len(sg.inputs) + len(sg.outputs)] + [len(op.inputs) + len(op.outputs) for op in sg.operators]
        for n in lists:
            audit["index lists"].add(align(2 * n, 4), 2 * n)
    for d in data:
        if d:
            audit["kernel data"].add(align(d, 4), d)
    tail = sum(audit[k].used for k in AUDIT_NAMES[1:7])
    for sg in model.subgraphs:
        for t in sg.tensors:
            if t.is_variable and t.nbytes:
                new = align(tail + align(t.nbytes, ALIGN), ALIGN)
                audit["variable tensors"].add(new - tail, t.nbytes)
                tail = new
    sizes = resource_sizes(model)
    start = tail
    tail += RESOURCE_RECORD * len(sizes)
    for b in sizes:
        if b:
            tail = align(tail + align(b, ALIGN), ALIGN)
    audit["resource variables"].add(tail - start, RESOURCE_RECORD * len(sizes) + sum(sizes), len(sizes))
    final = align(tail, ALIGN)
    audit["alignment"].add(final - tail, 0, 0)
    return final


def resource_sizes(model: Model) -> list[int]:
    """Bytes of each resource variable, by id: resources are the distinct
    (container, shared_name) pairs of VAR_HANDLE ops in model order; each is
    sized by the value of the first ASSIGN_VARIABLE writing it."""
    names: list[tuple] = []
    handles: dict[tuple[int, int], int] = {}  # (subgraph, output tensor) -> id
    for sg in model.subgraphs:
        for op in sg.operators:
            if op.opcode == "VAR_HANDLE":
                key = (op.options.get("Container") or "", op.options.get("SharedName") or "")
                if key not in names:
                    names.append(key)
                if len(op.outputs) == 1:
                    handles[(sg.index, op.outputs[0])] = names.index(key)
    sizes: list[int | None] = [None] * len(names)
    for sg in model.subgraphs:
        for op in sg.operators:
            if op.opcode == "ASSIGN_VARIABLE" and len(op.inputs) == 2:
                rid = handles.get((sg.index, op.inputs[0]))
                if rid is not None and sizes[rid] is None:
                    sizes[rid] = sg.tensors[op.inputs[1]].nbytes
    return [s or 0 for s in sizes]


def bound(model: Model) -> int:
    """The most bytes live at one operator in the model's own order, each
    tensor rounded to 16 bytes: no fixed-order plan of these tensors is smaller."""
    recs, _, base = records(model)
    node_base = {}
    n = 0
    for sg in model.subgraphs:
        node_base[sg.index] = n
        n += len(sg.operators)
    scopes, _ = _mark_lifetimes(model, recs, base, node_base, [])
    planned = [r for r in recs if r.planned]  # type: ignore[attr-defined]
    return max((sum(b.size for b in planned if b.first <= s <= b.last) for s in range(scopes)), default=0)


__all__ = ["Buffer", "Layout", "Node", "UnsupportedModel", "plan_layout", "bound", "missing_ops", "PLANNERS",
           "default_planner"]
