"""The engine's known slow spot, measured: checking an offline plan follows
alias chains (plan.c, alias_root over alias_parent), each step a scan of all
operators. A chain of L RESHAPE views that an offline plan puts at the same
offset is its worst case. The times of the host's build of the engine
(tflm_host._engine) are written into docs/reliability.md by `make fuzz`.

    python tests/slow_spots.py [--doc docs/reliability.md]
"""

from __future__ import annotations

import argparse
import struct
import sys
import time
from pathlib import Path

import numpy as np

from tflm_host import arena
from tflm_dev.builder import ModelBuilder
from tflm_dev.marked import report
from tflm_host.model import load_model

LENGTHS = (200, 400, 800, 1600)


def view_chain(length: int, offline_plan: bool) -> bytes:
    b = ModelBuilder()
    sg = b.subgraph()
    shape = sg.tensor((2,), "INT32", data=np.array([1, 64], np.int32))
    chain = [sg.tensor((1, 64), "INT8", quant=([0.1], [0]))]
    for _ in range(length):
        t = sg.tensor((1, 64), "INT8", quant=([0.1], [0]))
        sg.op("RESHAPE", [chain[-1], shape], [t])
        chain.append(t)
    sg.inputs, sg.outputs = [chain[0]], [chain[-1]]
    if offline_plan:
        n = length + 2  # the constant shape (-1: not planned), then the chain, all at offset 0
        b.metadata["OfflineMemoryAllocation"] = struct.pack(f"<{3 + n}i", 1, 1, n, -1, *([0] * (n - 1)))
    return b.build()


def seconds(data: bytes) -> float:
    model = load_model(data)
    t0 = time.process_time()  # CPU time: the machine may be busy
    arena.plan_layout(model)
    return time.process_time() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--doc", type=Path)
    args = ap.parse_args()
    rows = "| RESHAPE views in a chain | build with an offline plan (all at offset 0), CPU seconds | build with the greedy planner |\n" \
           "|---|---|---|\n"
    for n in LENGTHS:
        rows += f"| {n} | {seconds(view_chain(n, True)):.3f} s | {seconds(view_chain(n, False)):.3f} s |\n"
    report(rows, args.doc, "slow", "fuzz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
