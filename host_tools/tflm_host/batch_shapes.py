"""The static shapes of a model converted with an unknown batch size.

TensorFlow's converter writes a tensor whose batch it does not know (a -1 in
the tensor's shape_signature) with batch 1 in its static shape. That holds
for a batch of one everywhere except between SPACE_TO_BATCH_ND and
BATCH_TO_SPACE_ND (how the converter writes a dilated convolution it does
not fuse), where the batch is the input's times the block's size: TF Lite
resizes those tensors when it runs them, TFLM runs them at the written
shapes (writing over the wrong number of batches, its outputs there are not
TensorFlow's), and the engine refuses them ("block shape and paddings do not
give the output's shape").

`fixed_batch()` writes the batch each such tensor has when the model's
inputs have their written batch, in place: a shape's element count does not
change, so the model's bytes keep their layout. The engine then checks every
operator against the new shapes as it checks any model.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .fbedit import MODEL_SUBGRAPHS, SUBGRAPH_TENSORS, _Reader
from .model import Model, load_model

TENSOR_SHAPE, TENSOR_SHAPE_SIGNATURE = 0, 7
_BLOCK_OPS = ("SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND")


@dataclass(frozen=True)
class BatchChange:
    subgraph: int
    tensor: int
    name: str
    written: int  # the static shape's batch
    batch: int    # the batch the tensor has


def _unknown_batch(r: _Reader, tensor_table: int) -> bool:
    at, n = r.vector(tensor_table, TENSOR_SHAPE_SIGNATURE)
    return n > 0 and r.i32(at) == -1


def _block_size(model: Model, sg: int, index: int) -> int | None:
    """The product of a constant int32 block shape, None when not constant."""
    t = model.subgraphs[sg].tensors[index] if index >= 0 else None
    if t is None or t.data is None or t.dtype != "INT32" or len(t.data) % 4 or not t.data:
        return None
    size = 1
    for (v,) in struct.iter_unpack("<i", t.data):
        if v < 1:
            return None
        size *= v
    return size


def batch_changes(data: bytes) -> list[BatchChange]:
    """The tensors whose written batch is not the one they have (empty for
    most models: every model without SPACE_TO_BATCH_ND or BATCH_TO_SPACE_ND)."""
    model = load_model(data)
    if not any(op.opcode in _BLOCK_OPS for sg in model.subgraphs for op in sg.operators):
        return []
    r = _Reader(data)
    root = r.deref(0)
    subgraphs_at, n_sg = r.vector(root, MODEL_SUBGRAPHS)
    changes: list[BatchChange] = []
    for s in range(min(n_sg, len(model.subgraphs))):
        sg = model.subgraphs[s]
        tensors_at, n_t = r.vector(r.deref(subgraphs_at + 4 * s), SUBGRAPH_TENSORS)
        unknown = [_unknown_batch(r, r.deref(tensors_at + 4 * i)) for i in range(min(n_t, len(sg.tensors)))]
        if not any(unknown):
            continue
        # Each tensor's batch, followed through the operators in their order
        # (the order they run in): an output of unknown batch has its
        # input's, times the block's size after SPACE_TO_BATCH_ND, divided
        # by it after BATCH_TO_SPACE_ND.
        batch = {t.index: t.shape[0] for t in sg.tensors if t.shape}
        for op in sg.operators:
            ins = [i for i in op.inputs if 0 <= i < len(unknown) and unknown[i] and i in batch]
            if not ins:
                continue
            b = max(batch[i] for i in ins)
            if op.opcode in _BLOCK_OPS:
                size = _block_size(model, s, op.inputs[1]) if len(op.inputs) > 1 else None
                if size is None or op.inputs[0] not in ins:
                    continue
                b = batch[op.inputs[0]]
                if op.opcode == "SPACE_TO_BATCH_ND":
                    b *= size
                elif b % size == 0:
                    b //= size
                else:
                    continue
            for o in op.outputs:
                if 0 <= o < len(unknown) and unknown[o] and o in batch:
                    batch[o] = b
        changes += [BatchChange(s, t.index, t.name, t.shape[0], batch[t.index])
                    for t in sg.tensors if t.shape and batch[t.index] != t.shape[0]]
    return changes


def fixed_batch(data: bytes) -> tuple[bytes, list[BatchChange]]:
    """The model with each tensor's written batch the one it has, and what
    changed (the model as it is when nothing does)."""
    try:
        changes = batch_changes(data)
    except (struct.error, IndexError) as e:
        raise ValueError(f"malformed model: a tensor's shape lies outside the file ({e})") from None
    if not changes:
        return data, []
    subgraphs = load_model(data).subgraphs
    out = bytearray(data)
    write_shapes(out, {(c.subgraph, c.tensor): (c.batch, *subgraphs[c.subgraph].tensors[c.tensor].shape[1:])
                       for c in changes})
    return bytes(out), changes


def write_shapes(out: bytearray, shapes: dict[tuple[int, int], tuple[int, ...]]) -> None:
    """Writes (subgraph, tensor) -> shape into the tensors' shape vectors in
    place, each of the rank written there. A vector several tensors share
    is written only when they all get the same shape (ValueError else)."""
    r = _Reader(out)
    subgraphs_at, n_sg = r.vector(r.deref(0), MODEL_SUBGRAPHS)
    shape_at: dict[tuple[int, int], tuple[int, int]] = {}  # (subgraph, tensor) -> its shape vector (position, rank)
    for s in range(n_sg):
        tensors_at, n_t = r.vector(r.deref(subgraphs_at + 4 * s), SUBGRAPH_TENSORS)
        for i in range(n_t):
            shape_at[(s, i)] = r.vector(r.deref(tensors_at + 4 * i), TENSOR_SHAPE)
    new_at = {shape_at[key][0]: shape for key, shape in shapes.items()}
    for (s, i), (at, rank) in shape_at.items():
        if at in new_at and (shapes.get((s, i)) != new_at[at] or len(new_at[at]) != rank):
            raise ValueError(f"tensor {i} of subgraph {s} shares its shape with another tensor: "
                             "cannot write its shape")
    for at, shape in new_at.items():
        for k, d in enumerate(shape):
            struct.pack_into("<i", out, at + 4 * k, d)
