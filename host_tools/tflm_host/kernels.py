"""What each device kernel keeps in the arena, mirrored on the host.

For every op the C runtime implements, `data_bytes` is the size of the kernel
data its prepare() allocates in the arena tail, `scratch` the scratch buffers
it requests in the head, and `temp` the temporary memory prepare() uses. Tests compare these against the device,
kernel by kernel (see tests/test_arena.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .model import Model, Operator, Subgraph


@dataclass
class KernelSpec:
    data_bytes: Callable[[Model, Subgraph, Operator], int]
    scratch: Callable[[Model, Subgraph, Operator], list[int]] = field(default=lambda m, sg, op: [])
    # Temporary bytes prepare() asks for (tflm_prep_temp), freed after it.
    temp: Callable[[Model, Subgraph, Operator], int] = field(default=lambda m, sg, op: 0)


def _tensor(sg: Subgraph, op: Operator, i: int, output: bool = False):
    idx = (op.outputs if output else op.inputs)[i]
    return sg.tensors[idx]


def _fully_connected_data(model: Model, sg: Subgraph, op: Operator) -> int:
    # fc_data_t is 52 bytes; per-channel weights add an int32 multiplier and
    # an int8 shift per output unit.
    inp, weights = _tensor(sg, op, 0), _tensor(sg, op, 1)
    out = _tensor(sg, op, 0, output=True)
    size = 52
    q = weights.quantization
    if inp.dtype != "FLOAT32" and q is not None and q.per_channel:
        size += 5 * out.shape[-1]
    return size


KERNELS: dict[str, KernelSpec] = {
    "FULLY_CONNECTED": KernelSpec(_fully_connected_data),
    "QUANTIZE": KernelSpec(lambda m, sg, op: 36),
    "DEQUANTIZE": KernelSpec(lambda m, sg, op: 16),
}


def missing_ops(model: Model) -> list[str]:
    """Ops of the model the device runtime has no kernel for, in first-use order."""
    seen: list[str] = []
    for sg in model.subgraphs:
        for op in sg.operators:
            if op.opcode not in KERNELS and op.opcode not in seen:
                seen.append(op.opcode)
    return seen
