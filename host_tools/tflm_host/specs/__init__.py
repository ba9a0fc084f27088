"""What each device kernel keeps in the arena, mirrored on the host.

For every op the C runtime implements, `data_bytes` is the size of the kernel
data its prepare() allocates in the arena tail, `scratch` the scratch buffers
it requests in the head, and `temp` the temporary memory prepare() uses.
Each module of this package registers the specs of one family of kernels;
tests compare them with the device, kernel by kernel.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable

from ..model import Model, Operator, Subgraph


@dataclass
class KernelSpec:
    data_bytes: Callable[[Model, Subgraph, Operator], int]
    scratch: Callable[[Model, Subgraph, Operator], list[int]] = field(default=lambda m, sg, op: [])
    # Temporary bytes prepare() asks for (tflm_prep_temp), freed after it.
    temp: Callable[[Model, Subgraph, Operator], int] = field(default=lambda m, sg, op: 0)


KERNELS: dict[str, KernelSpec] = {}


def tensor(sg: Subgraph, op: Operator, i: int, output: bool = False):
    """Input i (or output i) of an operator, None when omitted."""
    indices = op.outputs if output else op.inputs
    if i >= len(indices) or indices[i] < 0:
        return None
    return sg.tensors[indices[i]]


def register(op: str, data_bytes, scratch=None, temp=None) -> None:
    spec = KernelSpec(data_bytes)
    if scratch is not None:
        spec.scratch = scratch
    if temp is not None:
        spec.temp = temp
    KERNELS[op] = spec


def missing_ops(model: Model) -> list[str]:
    """Ops of the model the device runtime has no kernel for, in first-use order."""
    seen: list[str] = []
    for sg in model.subgraphs:
        for op in sg.operators:
            if op.opcode not in KERNELS and op.opcode not in seen:
                seen.append(op.opcode)
    return seen


# Every module of this package registers its kernels when imported.
for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")
