"""Prepared models: the kernels' data in the model, read in place on the device.

What each kernel's prepare() computes from the model's constants (per-channel
multipliers and shifts, geometry, lookup tables) is computed here by the
engine's own prepare() code (tflm_host._engine, the device's C sources) and
written into the model as one metadata buffer (format: engine/prepared.h).
The device then reads that data from the model's buffer, in flash when the
model is in ROMFS, instead of keeping it in the arena's tail; it runs every
prepare() into temporary memory and refuses data that differs. TFLM ignores
the metadata and runs the model as before.
"""

from __future__ import annotations

from . import _engine, fbedit, patches, shape_fold
from .model import load_model
from .patches import METADATA_NAME as PATCH_METADATA

METADATA_NAME: str = _engine.PREPARED_METADATA


def prepared_metadata(blobs: list[bytes | None], lists: bytes, records_map: bytes, constants: bytes,
                      records: bytes = b"") -> bytes:
    """The metadata buffer for each operator's kernel data (None: kept in the
    tail), the interpreter's index lists, its records map, the constant
    tensors' records and the subgraph and node records (empty: kept in the
    tail), laid out by the engine's own writer (engine/prepared.c, which the
    device's reader checks)."""
    return _engine.prepared_metadata(blobs, lists, records_map, constants, records)


def kernel_data(data: bytes) -> tuple[list[bytes | None], bytes, bytes, bytes, bytes]:
    """Each operator's kernel data as the device's prepare() computes it, and
    the index lists, records map, constants' records and subgraph and node
    records (empty when a kernel keeps run-time state: they stay in the
    tail) as the device's build lays them out."""
    return _engine.kernel_data(_engine.Model(data))


def prepare_model(data: bytes, max_extra_macs: float | None = None, progress=None) -> bytes:
    """The model with its kernel data in its metadata (replacing any there),
    checked by the engine as the device checks it. With max_extra_macs (a
    fraction of the model's MACs), also the patch-based first stage with the
    smallest arena within that bound (patches.py), when one lowers it;
    `progress(done, total)` follows that search."""
    return prepare_searched(data, max_extra_macs, progress, search=max_extra_macs is not None)[0]


def prepare_searched(data: bytes, max_extra_macs: float | None, progress=None,
                     search: bool = False) -> tuple[bytes, patches.Search | None]:
    """prepare_model(), with the patch search's measurements (None unless
    `search`); without a bound the search only measures, and the model's
    stage (or none) is left as it is."""
    # The batch TF's converter leaves at 1 where it is not (batch_shapes.py),
    # then the shapes it leaves unknown and the arithmetic computing them
    # (shape_fold.py), are the first things prepared.
    data = shape_fold.fixed_shapes(data)[0]
    # (A model prepared the same already comes back as it is: fbedit.)
    out = fbedit.edit_model(data, metadata={METADATA_NAME: prepared_metadata(*kernel_data(data))})
    found = None
    if search:
        found = patches.search(out, progress)
        if max_extra_macs is not None:  # else the search measures, and the model keeps its stage (or none)
            best = found.best(max_extra_macs)
            out = patches.without_schedule(out) if best is None else \
                patches.with_schedule(out, best.split, *best.grid, best.start, best.mode)
    _engine.allocate(_engine.Model(out))
    return out, found


def is_prepared(data: bytes) -> bool:
    return METADATA_NAME in load_model(data).metadata


def unprepared(data: bytes) -> bytes:
    """The model without prepared data (nor a patch schedule: both follow the operator order)."""
    return fbedit.edit_model(data, remove=(METADATA_NAME, PATCH_METADATA))
