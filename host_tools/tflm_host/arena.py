"""The device's arena on the host: lifetimes, plans and sizes, from the
module's own C engine (tflm_host._engine, built from micropython_mod/engine
and kernels). Nothing here describes the arena's layout: the engine builds
the model as the device does and these classes show what it built, so the
figures are the device's arena_used_bytes on every target.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import _engine, schema
from .model import Model

ALIGN = _engine.ALIGN
MAX_CALL_DEPTH = _engine.MAX_CALL_DEPTH
# The engine's planners a user names (the offline planner takes a plan).
PLANNERS = ("greedy", "tflm", "linear")


def align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


@dataclass
class Buffer:
    """A record of the arena: a model tensor or a kernel's scratch buffer."""

    index: int  # record index (tensors of all subgraphs, then scratch buffers)
    bytes: int
    first: int = -1  # allocation scopes of its lifetime
    last: int = -1
    offset: int = -1  # in the head, -1 when it is not there
    subgraph: int = 0
    tensor: int = -1  # index in its subgraph, -1 for scratch buffers
    node: int = -1  # the operator a scratch buffer belongs to
    fixed: bool = False  # offset given before planning (offline plans)
    external: bool = False  # pre-allocated outside the arena
    dtype_size: int = 1  # bytes per element (alignment)
    planned: bool = False  # lives in the head

    @property
    def size(self) -> int:
        return align(self.bytes, ALIGN)

    def overlaps(self, other: Buffer) -> bool:
        return not (self.first > other.last or other.first > self.last)


@dataclass
class Audit:
    used: int = 0
    requested: int = 0
    count: int = 0


@dataclass
class Node:
    """An operator as the planner sees it: record indices."""

    index: int  # operator of all subgraphs, in order
    opcode: str
    inputs: list[int]  # record indices, -1 for omitted inputs
    outputs: list[int]


@dataclass
class Layout:
    records: list[Buffer]  # model tensors, then scratch buffers
    head: int
    tail: int
    scopes: int  # allocation scopes (rows of a plan picture)
    audit: dict[str, Audit] = field(default_factory=dict)
    prepare_peak: int = 0  # bytes in use at the busiest moment of prepare()
    nodes: list[Node] = field(default_factory=list)
    planner: str = "greedy"
    n_tensors: int = 0  # model tensor records (the scratch buffers' records follow)
    picture: object = None  # the engine's interpreter, for its plan picture
    model_data: int = 0  # a prepared model's kernel data, read in place from the model (not in the arena)
    model_lists: int = 0  # a prepared model's index lists, read in place too
    model_records: int = 0  # a prepared model's constant tensors' records, read in place too
    model_nodes: int = 0  # a prepared model's subgraph and node records, read in place too
    outputs: frozenset[int] = frozenset()  # records that are some subgraph's outputs (read after its last op)

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
        return [b for b in self.records if b.planned]

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
        """The plan as text, from the engine: as interp.memory_plan() prints it."""
        return self.picture.memory_plan(width)


class UnsupportedModel(NotImplementedError):
    pass


def engine_model(model: Model) -> _engine.Model:
    """The engine's reading of the model (ValueError when it is malformed), once per Model."""
    em = getattr(model, "_engine_model", None)
    if em is None:
        em = _engine.Model(model.raw)
        model._engine_model = em  # type: ignore[attr-defined]
    return em


def missing_ops(model: Model) -> list[str]:
    """The ops the model uses that the module has no kernel for."""
    return engine_model(model).missing_ops()


def missing_ops_message(model: Model) -> str | None:
    """What the module says of a model whose ops it lacks (as a firmware
    with every kernel does: ops no kernel implements), or None."""
    return engine_model(model).missing_ops_message()


def kernel_ops() -> dict[str, str]:
    """The ops the module has kernels for, with what their output 0 may
    share with an input ("none", "view", "in_place")."""
    return {f"CUSTOM:{custom}" if custom else schema.BUILTIN_OPS[code]: alias
            for code, custom, alias in _engine.kernels()}


def type_names() -> tuple[str, ...]:
    """The tensor types the engine names ("float32", ...), by type code: those
    a kernel's TFLM_TYPES selects from."""
    return tuple(_engine.type_names())


def interpreter(model: Model, planner: str | None = None, plan=None, preallocated=(), kernels: bool = True,
                run: bool = False, arena: int | None = None, forward_overlaps: bool = False):
    """The engine's interpreter for the model, built as tflm.Interpreter builds
    it: measured (records and plan, no memory behind the head), or with
    `run` in an arena of exactly the bytes it needs (of `arena` bytes when
    given), to set inputs, invoke and read outputs. `forward_overlaps`: the
    planner overlaps buffers only as TFLM's kernels also run them (an
    output below its input), for plans written into a model."""
    if planner is not None and planner not in PLANNERS and planner != "offline":
        raise ValueError(f"unknown planner {planner!r} (planners: {', '.join(PLANNERS + ('offline',))})")
    words = plan.to_bytes() if plan is not None else None
    try:
        return _engine.allocate(engine_model(model), planner=planner, plan=words, preallocated=tuple(preallocated),
                                tensors_only=not kernels, run=run, arena=arena,
                                forward_overlaps=forward_overlaps)
    except NotImplementedError as e:
        raise UnsupportedModel(str(e)) from None


def plan_layout(model: Model, planner: str | None = None, kernels: bool = True, plan=None,
                preallocated=(), forward_overlaps: bool = False) -> Layout:
    """Lifetimes, plan and sizes of the model's arena, as the device has them.
    planner None picks as the device does; "offline" uses `plan` (an
    OfflinePlan, the shim) or the model's metadata, and is checked as the
    device checks it (ValueError with the device's message). With
    kernels=False, no kernel's prepare() runs: ops the module lacks are
    allowed, and the head holds the tensors alone. `preallocated`: tensors
    of the main subgraph that live outside the arena. `forward_overlaps`:
    see interpreter()."""
    it = interpreter(model, planner, plan, preallocated, kernels, forward_overlaps=forward_overlaps)
    return layout_of(model, it)


def _dtype_size(dtype: int) -> int:
    name = schema.TENSOR_TYPES[dtype] if dtype < len(schema.TENSOR_TYPES) else ""
    return schema.TYPE_SIZES.get(name, 1)


def layout_of(model: Model, it) -> Layout:
    """The Layout of an engine interpreter."""
    n_tensors = it.n_model_tensors
    owner = [(s, k) for s, (_, count, _, _, _, _) in enumerate(it.subgraphs()) for k in range(count)]
    records = []
    for i, (where, offset, nbytes, first, last, dtype, fixed) in enumerate(it.records()):
        subgraph, tensor = owner[i] if i < n_tensors else (0, -1)
        records.append(Buffer(i, nbytes, first, last, offset if where == "head" else -1, subgraph, tensor,
                              fixed=fixed, external=where == "external", dtype_size=_dtype_size(dtype),
                              planned=where == "head"))
    ops = [op.opcode for sg in model.subgraphs for op in sg.operators]
    nodes = []
    for n, (_, inputs, outputs, first_scratch, n_scratch) in enumerate(it.nodes()):
        nodes.append(Node(n, ops[n], list(inputs), list(outputs)))
        for r in range(first_scratch, first_scratch + n_scratch):
            records[r].node = n
    # The patch-based stage's buffers follow every node's: its last node's.
    split = it.patch[0]
    for r in records[n_tensors:]:
        if r.node < 0 and split:
            r.node = split - 1
    audit = {name: Audit(*v) for name, v in it.audit().items()}
    outputs = frozenset(r for sg in it.subgraphs() for r in sg[5] if r >= 0)
    return Layout(records, it.head, it.tail, it.scopes, audit, it.prepare_peak, nodes, it.planner, n_tensors, it,
                  it.model_data, it.model_lists, it.model_records, it.model_nodes, outputs)


def bound(model: Model) -> int:
    """The most bytes live at one operator in the model's own order, each
    tensor rounded to 16 bytes: no fixed-order plan of these tensors is smaller."""
    layout = plan_layout(model, "linear", kernels=False)
    planned = layout.buffers
    return max((sum(b.size for b in planned if b.first <= s <= b.last) for s in range(layout.scopes)), default=0)


__all__ = ["Buffer", "Layout", "Node", "UnsupportedModel", "plan_layout", "layout_of", "interpreter", "bound",
           "missing_ops", "missing_ops_message", "kernel_ops", "PLANNERS", "MAX_CALL_DEPTH"]
