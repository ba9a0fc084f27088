"""Edits a .tflite model without rebuilding it: metadata entries and the
order of the main subgraph's operators.

Everything else stays byte for byte. FlatBuffers offsets point forward and
are relative, so the model's bytes can move as a block: new metadata goes in
a new root table, new `buffers` and `metadata` vectors and their entries,
all placed in front of the old bytes (which move by a multiple of 16, keeping
every alignment). The old root table stays behind, unreferenced. Operators
are reordered by rewriting the operator vector's offsets in place.
"""

from __future__ import annotations

import struct

from . import _engine, schema

# Field numbers (vtable slots) of the tables this module touches.
MODEL_FIELDS = 8  # version, operator_codes, subgraphs, description, buffers, metadata_buffer, metadata, signature_defs
MODEL_VERSION, MODEL_SUBGRAPHS, MODEL_BUFFERS, MODEL_METADATA = 0, 2, 4, 6
SUBGRAPH_TENSORS, SUBGRAPH_OPERATORS = 0, 3
METADATA_NAME, METADATA_BUFFER = 0, 1
BUFFER_DATA, BUFFER_OFFSET = 0, 1


class _Reader:
    def __init__(self, data: bytes | bytearray) -> None:
        self.b = data

    def u16(self, p: int) -> int:
        return struct.unpack_from("<H", self.b, p)[0]

    def u32(self, p: int) -> int:
        return struct.unpack_from("<I", self.b, p)[0]

    def i32(self, p: int) -> int:
        return struct.unpack_from("<i", self.b, p)[0]

    def u64(self, p: int) -> int:
        return struct.unpack_from("<Q", self.b, p)[0]

    def field(self, table: int, n: int) -> int:
        """Absolute position of field n of a table, 0 when absent."""
        vt = table - self.i32(table)
        if 4 + 2 * n >= self.u16(vt):
            return 0
        off = self.u16(vt + 4 + 2 * n)
        return table + off if off else 0

    def n_fields(self, table: int) -> int:
        vt = table - self.i32(table)
        return (self.u16(vt) - 4) // 2

    def deref(self, p: int) -> int:
        return p + self.u32(p)

    def vector(self, table: int, n: int) -> tuple[int, int]:
        """(position of element 0, count) of a vector field; (0, 0) when absent."""
        p = self.field(table, n)
        if not p:
            return 0, 0
        v = self.deref(p)
        return v + 4, self.u32(v)

    def string(self, table: int, n: int) -> bytes | None:
        p = self.field(table, n)
        if not p:
            return None
        s = self.deref(p)
        return bytes(self.b[s + 4:s + 4 + self.u32(s)])


def _check(data: bytes) -> None:
    if len(data) < 8 or data[4:8] != schema.FILE_IDENTIFIER:
        raise ValueError("not a .tflite model (file identifier is not TFL3)")


class _Writer:
    """Builds the bytes placed in front of the old model: positions are
    absolute positions in the new file."""

    def __init__(self) -> None:
        self.out = bytearray()

    def pad(self, align: int) -> None:
        while len(self.out) % align:
            self.out.append(0)

    def at(self) -> int:
        return len(self.out)

    def put(self, fmt: str, *values) -> int:
        p = len(self.out)
        self.out += struct.pack("<" + fmt, *values)
        return p

    def set_u32(self, p: int, value: int) -> None:
        struct.pack_into("<I", self.out, p, value)

    def table(self, fields: list[tuple[str, object] | None]) -> tuple[int, dict[int, int]]:
        """A table of 4-byte fields with its vtable right before it. fields[n]
        is (format "I", "i" or "O" for an offset, value) or None; offsets are
        written as 0 and patched later. Returns the table position and each
        field's position."""
        present = [(n, f) for n, f in enumerate(fields) if f is not None]
        if any(f[0] not in ("I", "i", "O") for _, f in present):
            raise ValueError("only 4-byte fields")
        layout = {n: 4 + 4 * k for k, (n, _) in enumerate(present)}
        size = 4 + 4 * len(present)
        self.pad(4)
        vt = self.put("HH", 4 + 2 * len(fields), size)
        for n in range(len(fields)):
            self.put("H", layout.get(n, 0))
        self.pad(4)
        table = self.put("i", 0)
        struct.pack_into("<i", self.out, table, table - vt)
        self.out += bytes(size - 4)
        positions = {}
        for n, (fmt, value) in present:
            p = table + layout[n]
            positions[n] = p
            if fmt != "O":
                struct.pack_into("<" + fmt, self.out, p, value)
        return table, positions


def _metadata_now(r: _Reader, root: int) -> dict[str, bytes | None]:
    """The model's metadata entries: name -> their buffer's bytes (None for
    a buffer this reader does not read: out of range, or at an offset)."""
    buffers_at, n_buffers = r.vector(root, MODEL_BUFFERS)
    meta_at, n_meta = r.vector(root, MODEL_METADATA)
    out: dict[str, bytes | None] = {}
    for i in range(n_meta):
        t = r.deref(meta_at + 4 * i)
        name = (r.string(t, METADATA_NAME) or b"").decode("utf-8", "replace")
        p = r.field(t, METADATA_BUFFER)
        index = r.u32(p) if p else 0
        if index >= n_buffers or r.field(r.deref(buffers_at + 4 * index), BUFFER_OFFSET):
            out[name] = None
            continue
        at, n = r.vector(r.deref(buffers_at + 4 * index), BUFFER_DATA)
        out[name] = bytes(r.b[at:at + n])
    return out


def edit_model(data: bytes, metadata: dict[str, bytes] | None = None, remove: tuple[str, ...] = (),
               order: list[int] | None = None, buffers: dict[int, bytes] | None = None) -> bytes:
    """The model with metadata entries added (replacing entries of the same
    names, and those named in `remove`), the main subgraph's operators in
    `order` (a permutation of their indices), and the buffers of the indices
    in `buffers` holding those bytes (new buffer tables: the old ones stay
    behind, unreferenced)."""
    _check(data)
    old = bytearray(data)
    r = _Reader(old)
    root = r.deref(0)
    if order is not None:
        _reorder(r, root, order)
    if not metadata and not remove and not buffers:
        return bytes(old)
    metadata = metadata or {}
    buffers = buffers or {}
    if order is None and not buffers:
        # An edit appends to the file: one that would change nothing (the
        # entries there already, none of those to remove) leaves it as it is.
        now = _metadata_now(r, root)
        if all(now.get(k) == v for k, v in metadata.items()) and not any(k in now for k in remove):
            return bytes(data)
    if r.n_fields(root) > MODEL_FIELDS and any(r.field(root, n) for n in range(MODEL_FIELDS, r.n_fields(root))):
        raise ValueError("the model's root table has fields this tool does not know")

    buffers_at, n_buffers = r.vector(root, MODEL_BUFFERS)
    if any(not 0 < i < n_buffers for i in buffers):
        raise ValueError(f"buffers to write must be among buffers 1 to {n_buffers - 1}")
    meta_at, n_meta = r.vector(root, MODEL_METADATA)
    keep_meta = []
    for i in range(n_meta):
        t = r.deref(meta_at + 4 * i)
        name = (r.string(t, METADATA_NAME) or b"").decode("utf-8", "replace")
        if name not in metadata and name not in remove:
            keep_meta.append(t)

    # Lay out the prefix twice: first to learn its size, then for real.
    size = 0
    for _ in range(2):
        w = _Writer()
        # Where the old bytes start in the new file (a large guess at first:
        # the sizes do not depend on it).
        shift = size or (1 << 24)
        w.put("I", 0)
        w.out += schema.FILE_IDENTIFIER
        fields: list = [None] * MODEL_FIELDS
        for n in range(MODEL_FIELDS):
            p = r.field(root, n)
            if n == MODEL_VERSION:
                fields[n] = ("I", r.u32(p) if p else 0)
            elif n in (MODEL_BUFFERS, MODEL_METADATA) or p:
                fields[n] = ("O", None)
        model_table, model_fields = w.table(fields)
        w.set_u32(0, model_table)
        for n in range(MODEL_FIELDS):
            p = r.field(root, n)
            if n not in (MODEL_VERSION, MODEL_BUFFERS, MODEL_METADATA) and p:
                target = r.deref(p) + shift
                w.set_u32(model_fields[n], target - model_fields[n])
        # New buffers vector: the old buffers, then one per new metadata entry.
        w.pad(4)
        buffers_vec = w.put("I", n_buffers + len(metadata))
        w.set_u32(model_fields[MODEL_BUFFERS], buffers_vec - model_fields[MODEL_BUFFERS])
        slots = [w.put("I", 0) for _ in range(n_buffers + len(metadata))]
        pending = []  # (field position, what it points to, its alignment)
        for i in range(n_buffers):
            if i in buffers:
                buf_table, buf_fields = w.table([("O", None)])
                w.set_u32(slots[i], buf_table - slots[i])
                pending.append((buf_fields[BUFFER_DATA], buffers[i], 16))
            else:
                w.set_u32(slots[i], r.deref(buffers_at + 4 * i) + shift - slots[i])
        meta_vec = w.put("I", len(keep_meta) + len(metadata))
        w.set_u32(model_fields[MODEL_METADATA], meta_vec - model_fields[MODEL_METADATA])
        meta_slots = [w.put("I", 0) for _ in range(len(keep_meta) + len(metadata))]
        for i, t in enumerate(keep_meta):
            w.set_u32(meta_slots[i], t + shift - meta_slots[i])
        for k, (name, blob) in enumerate(metadata.items()):
            buf_table, buf_fields = w.table([("O", None)])
            w.set_u32(slots[n_buffers + k], buf_table - slots[n_buffers + k])
            md_table, md_fields = w.table([("O", None), ("I", n_buffers + k)])
            slot = meta_slots[len(keep_meta) + k]
            w.set_u32(slot, md_table - slot)
            pending.append((md_fields[METADATA_NAME], name.encode(), 4))
            pending.append((buf_fields[BUFFER_DATA], blob, 16))
        for field_at, blob, align in pending:
            # A vector: its length, then the bytes at `align`.
            while (w.at() + 4) % align:
                w.out.append(0)
            vec = w.put("I", len(blob))
            w.out += blob
            if align == 4:
                w.out.append(0)  # strings end in NUL
            w.set_u32(field_at, vec - field_at)
        w.pad(16)
        if w.at() == size:
            break
        size = w.at()
    _shift_external_buffers(r, root, old, size)
    out = bytearray(w.out) + old
    _shift_prepared_records(out, size)
    return bytes(out)


def _shift_external_buffers(r: _Reader, root: int, old: bytearray, shift: int) -> None:
    """Buffers of models over 2 GB address their data from the start of the
    file: those offsets move with the old bytes."""
    buffers_at, n = r.vector(root, MODEL_BUFFERS)
    for i in range(n):
        t = r.deref(buffers_at + 4 * i)
        p = r.field(t, BUFFER_OFFSET)
        if p and r.u64(p) > 1:
            struct.pack_into("<Q", old, p, r.u64(p) + shift)


def _shift_prepared_records(out: bytearray, shift: int) -> None:
    """A prepared model's constant tensors' records (engine/prepared.h) hold
    their data's positions in the model: those move with the old bytes (its
    data was computed for the model before this edit, whether it is new or
    kept). The engine moves them (it owns the format); data not laid out as
    its own is left as it is (the device refuses it)."""
    r = _Reader(out)
    root = r.deref(0)
    buffers_at, n_buffers = r.vector(root, MODEL_BUFFERS)
    meta_at, n_meta = r.vector(root, MODEL_METADATA)
    subgraphs_at, n_subgraphs = r.vector(root, MODEL_SUBGRAPHS)
    n_tensors = sum(r.vector(r.deref(subgraphs_at + 4 * s), SUBGRAPH_TENSORS)[1] for s in range(n_subgraphs))
    for i in range(n_meta):
        t = r.deref(meta_at + 4 * i)
        if r.string(t, METADATA_NAME) != _engine.PREPARED_METADATA.encode():
            continue
        p = r.field(t, METADATA_BUFFER)
        index = r.u32(p) if p else n_buffers
        if index >= n_buffers:
            continue
        pos, length = r.vector(r.deref(buffers_at + 4 * index), BUFFER_DATA)
        _engine.prepared_shift_consts(memoryview(out)[pos:pos + length], n_tensors, shift & 0xFFFFFFFF)


def _reorder(r: _Reader, root: int, order: list[int]) -> None:
    subgraphs_at, n_sg = r.vector(root, MODEL_SUBGRAPHS)
    if not n_sg:
        raise ValueError("the model has no subgraph")
    sg = r.deref(subgraphs_at)
    ops_at, n_ops = r.vector(sg, SUBGRAPH_OPERATORS)
    if sorted(order) != list(range(n_ops)):
        raise ValueError(f"order must be a permutation of the {n_ops} operators")
    tables = [r.deref(ops_at + 4 * i) for i in range(n_ops)]
    for i, k in enumerate(order):
        slot = ops_at + 4 * i
        if tables[k] <= slot:
            raise ValueError("operator tables sit before their vector: cannot reorder this model in place")
        struct.pack_into("<I", r.b, slot, tables[k] - slot)
