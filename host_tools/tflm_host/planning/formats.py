"""Offline plans as bytes: model metadata, the separate plan file, a C header.

- `OfflineMemoryAllocation` metadata (TFLM's format): int32 words version,
  subgraph count, n, then one head offset per tensor of all subgraphs in
  order, -1 for tensors the device plans itself. TFLM requires n to be the
  tensor count and ignores the version and subgraph count.
- `OfflineScratchAllocation` metadata (ours; TFLM ignores it and plans its
  own scratch buffers): version, n, one offset per scratch buffer the
  kernels request, in request order.
- The separate plan (`--shim-out`, the planner shim): words "TFPL",
  version, tensor count, scratch count (-1: scratch planned on the device),
  tensor offsets, scratch offsets. `--c-header` writes the same words as a
  C array for a firmware build.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from ..model import Model, read_bytes

METADATA_NAME = "OfflineMemoryAllocation"
SCRATCH_METADATA_NAME = "OfflineScratchAllocation"
MAGIC = 0x4C504654  # "TFPL"
VERSION = 1
ONLINE = -1


@dataclass
class OfflinePlan:
    tensors: list[int]  # offset per tensor of all subgraphs, -1: planned on the device
    scratch: list[int] | None = None  # offset per scratch buffer, None: planned on the device

    def words(self) -> list[int]:
        """The separate plan format."""
        scratch = self.scratch if self.scratch is not None else []
        count = len(self.scratch) if self.scratch is not None else -1
        return [MAGIC, VERSION, len(self.tensors), count] + list(self.tensors) + list(scratch)

    def to_bytes(self) -> bytes:
        w = self.words()
        return struct.pack("<I", w[0]) + struct.pack(f"<{len(w) - 1}i", *w[1:])

    @classmethod
    def from_bytes(cls, data: bytes) -> "OfflinePlan":
        if len(data) < 16 or struct.unpack_from("<I", data)[0] != MAGIC:
            raise ValueError('not a memory plan (it must start with "TFPL")')
        version, n, count = struct.unpack_from("<3i", data, 4)
        if version != VERSION:
            raise ValueError(f"memory plan version {version}; this tool reads version {VERSION}")
        words = n + max(count, 0)
        if count < -1 or n < 0 or len(data) < 16 + 4 * words:
            raise ValueError(f"memory plan is truncated: {len(data)} bytes")
        offsets = list(struct.unpack_from(f"<{words}i", data, 16))
        return cls(offsets[:n], offsets[n:] if count >= 0 else None)

    @classmethod
    def from_offsets(cls, offsets: list[int], n_tensors: int) -> "OfflinePlan":
        """A flat list as the device takes it: one offset per tensor,
        optionally followed by one per scratch buffer."""
        if len(offsets) < n_tensors:
            raise ValueError(f"plan has {len(offsets)} offsets, the model has {n_tensors} tensors")
        rest = list(offsets[n_tensors:])
        return cls(list(offsets[:n_tensors]), rest if len(offsets) > n_tensors else None)


def metadata_entries(plan: OfflinePlan, n_subgraphs: int) -> dict[str, bytes]:
    entries = {METADATA_NAME: struct.pack(f"<{3 + len(plan.tensors)}i", VERSION, n_subgraphs, len(plan.tensors),
                                          *plan.tensors)}
    if plan.scratch is not None:
        entries[SCRATCH_METADATA_NAME] = struct.pack(f"<{2 + len(plan.scratch)}i", VERSION, len(plan.scratch),
                                                     *plan.scratch)
    return entries


def _words(data: bytes, name: str, header: int, count_word: int) -> list[int]:
    if len(data) < 4 * header:
        raise ValueError(f"{name} metadata has {len(data)} bytes, too few for its header")
    version = struct.unpack_from("<i", data)[0]
    n = struct.unpack_from("<I", data, 4 * count_word)[0]
    if not 0 <= version <= VERSION:
        raise ValueError(f"{name} metadata has version {version}; this runtime reads versions 0 and 1")
    have = (len(data) - 4 * header) // 4
    if n > have:
        raise ValueError(f"{name} metadata announces {n} offsets but holds {have}")
    return list(struct.unpack_from(f"<{n}i", data, 4 * header))


def plan_from_model(model: Model) -> OfflinePlan | None:
    """The plan in a model's metadata, None when it has none."""
    if METADATA_NAME not in model.metadata:
        return None
    tensors = _words(model.metadata[METADATA_NAME], METADATA_NAME, 3, 2)
    scratch = None
    if SCRATCH_METADATA_NAME in model.metadata:
        scratch = _words(model.metadata[SCRATCH_METADATA_NAME], SCRATCH_METADATA_NAME, 2, 1)
    return OfflinePlan(tensors, scratch)


def c_header(plan: OfflinePlan, model_name: str, head: int) -> str:
    words = plan.words()
    body = []
    for k in range(0, len(words), 8):
        body.append("    " + ", ".join(str(w) if k + j else "0x4c504654" for j, w in enumerate(words[k:k + 8])) + ",")
    guard = "TFLM_BUILTIN_PLAN_H"
    return "\n".join([
        f"// Offline memory plan for {model_name}, written by tflm-host plan --c-header.",
        f"// Head: {head} bytes. Build it into a firmware with `make firmware BOARD=... PLAN=<this file>`",
        "// and use it with tflm.Interpreter(model, plan=tflm.builtin_plan).",
        f"#ifndef {guard}",
        f"#define {guard}",
        "#include <stdint.h>",
        f"static const int32_t tflm_builtin_plan_words[{len(words)}] = {{",
        *body,
        "};",
        f"#endif // {guard}",
        "",
    ])


def read_plan_file(path: str | Path, n_tensors: int | None = None) -> OfflinePlan:
    """A plan file written by --shim-out (or, with n_tensors, a text file of
    offsets separated by commas or white space)."""
    data = read_bytes(path)
    try:
        if data[:4] == struct.pack("<I", MAGIC):
            return OfflinePlan.from_bytes(data)
        if n_tensors is None:
            raise ValueError("not a plan file")
        try:
            offsets = [int(x) for x in data.decode().replace(",", " ").split()]
        except (UnicodeDecodeError, ValueError):
            raise ValueError('neither a plan file (starting "TFPL") nor whole numbers separated by commas '
                             'or white space') from None
        return OfflinePlan.from_offsets(offsets, n_tensors)
    except ValueError as e:
        raise ValueError(f"{Path(path).name}: {e}") from None
