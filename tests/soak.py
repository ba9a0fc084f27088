"""`make soak`: many invokes and many interpreters on one target, checking
that outputs and the free heap stay as they were.

- stateless (hello_world_int8): the same input every invoke; every output
  must equal the first one's;
- stateful (an accumulator in a resource variable: VAR_HANDLE, READ_VARIABLE,
  ADD, ASSIGN_VARIABLE, initialised by CALL_ONCE): the input changes every
  invoke; a checksum of all outputs and samples of them must equal TFLM's
  for the same sequence (computed on the host by the tflite-micro package);
- during both, `gc.mem_free()` after `gc.collect()` every SAMPLE_EVERY
  invokes must stay at its value after the first;
- INTERPRETERS interpreters created, invoked and dropped one after another:
  `gc.mem_free()` after `gc.collect()` the same after each tenth of them.

    python tests/soak.py --target NETDUINO2 --invokes 100000 --interpreters 500 [--doc docs/reliability.md]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tflm_host import device
from tflm_host.runner import DEVICE_OPEN
from tflm_dev.builder import ModelBuilder
from tflm_dev.marked import read_marked, write_marked

ROOT = Path(__file__).resolve().parents[1]
STATELESS = "hello_world_int8.tflite"
# The stateful model's input at invoke k, element j (the device computes the same).
INPUT_FORMULA = "((k * 31 + j * 7) % 201) - 100"
WIDTH = 4
MODULUS = 1000003  # the checksum: h = (h * 31 + sum((j + 1) * out[j])) % MODULUS


def accumulator_model() -> bytes:
    """out = state = state + x, the state a resource variable that starts at
    an initial value (set once by an init subgraph through CALL_ONCE)."""
    b = ModelBuilder()
    main = b.subgraph("main")
    x = main.tensor((1, WIDTH), "INT32", name="x")
    handle = main.tensor((), "RESOURCE", name="state_handle")
    prev = main.tensor((1, WIDTH), "INT32", name="previous")
    out = main.tensor((1, WIDTH), "INT32", name="sum")
    main.op("CALL_ONCE", [], [], InitSubgraphIndex=1)
    main.op("VAR_HANDLE", [], [handle], SharedName="state")
    main.op("READ_VARIABLE", [handle], [prev])
    main.op("ADD", [prev, x], [out])
    main.op("ASSIGN_VARIABLE", [handle, out], [])
    main.inputs, main.outputs = [x], [out]
    init = b.subgraph("init")
    h2 = init.tensor((), "RESOURCE", name="state_handle")
    value = init.tensor((1, WIDTH), "INT32", data=np.array([[5, -7, 11, 1000]], np.int32), name="initial")
    init.op("VAR_HANDLE", [], [h2], SharedName="state")
    init.op("ASSIGN_VARIABLE", [h2, value], [])
    return b.build()


def sample_points(invokes: int) -> list[int]:
    points = {0, 1, 2, invokes - 1}
    k = 10
    while k < invokes:
        points.add(k - 1)
        k *= 10
    return sorted(p for p in points if 0 <= p < invokes)


def tflm_sequence(model: bytes, invokes: int) -> tuple[int, dict[int, list[int]]]:
    """TFLM's checksum and samples for the stateful model's input sequence."""
    from tflite_micro.python.tflite_micro import runtime

    with tempfile.NamedTemporaryFile(suffix=".tflite") as f:
        f.write(model)
        f.flush()
        interp = runtime.Interpreter.from_file(f.name, arena_size=1 << 16)
    points = set(sample_points(invokes))
    j = np.arange(WIDTH)
    weights = j + 1
    h, samples = 0, {}
    for k in range(invokes):
        x = (((k * 31 + j * 7) % 201) - 100).astype(np.int32).reshape(1, WIDTH)
        interp.set_input(x, 0)
        interp.invoke()
        out = np.array(interp.get_output(0)).reshape(-1)
        h = (h * 31 + int((weights * out.astype(np.int64)).sum())) % MODULUS
        if k in points:
            samples[k] = [int(v) for v in out]
    return h, samples


# After DEVICE_OPEN (load(name)): the phases, filled in by soak().
DEVICE_CODE = """
INVOKES, INTERPRETERS, EVERY = {invokes}, {interpreters}, {every}
POINTS = {points}
def sample_heap(heap, k, free0):
    # Every EVERY invokes: the free heap after a collection, against free0.
    if k % EVERY == 0:
        gc.collect()
        heap[k // EVERY - 1] = gc.mem_free() - free0
# Each phase in a function: its variables are locals, so nothing but the
# runtime can take heap while it runs (a new global could grow the module's
# dictionary); heap[] is filled in place for the same reason.
def stateless():
    # One input, every output equal to the first.
    heap = [None] * 10
    m = tflm.Model(load('{stateless}'))
    it = tflm.Interpreter(m)
    x = it.input(0)
    nx = len(x)
    for i in range(nx):
        x[i] = 32
    it.invoke()
    y = it.output(0)
    first = list(y)
    n = len(y)
    bad = 0
    gc.collect()
    free0 = gc.mem_free()
    for k in range(1, INVOKES):
        # The input again: its bytes may hold other tensors once it has been read.
        for i in range(nx):
            x[i] = 32
        it.invoke()
        for i in range(n):
            if y[i] != first[i]:
                bad += 1
                break
        sample_heap(heap, k, free0)
    print('@STATELESS', INVOKES, bad, heap)
def stateful():
    # The accumulator; a checksum of all outputs, samples.
    heap = [None] * 10
    m = tflm.Model(load('accumulator.tflite'))
    it = tflm.Interpreter(m)
    x, y = it.input(0), it.output(0)
    h = 0
    free0 = 0
    for k in range(INVOKES):
        for j in range({width}):
            x[j] = {formula}
        it.invoke()
        h = (h * 31 + y[0] + 2 * y[1] + 3 * y[2] + 4 * y[3]) % {modulus}
        if k in POINTS:
            print('@SAMPLE', k, y[0], y[1], y[2], y[3])
        if k == 0:
            gc.collect()
            free0 = gc.mem_free()
        else:
            sample_heap(heap, k, free0)
    print('@STATEFUL', INVOKES, h, heap)
def interpreters():
    # Interpreters created, invoked and dropped.
    heap = [None] * 10
    m = tflm.Model(load('{stateless}'))
    free0 = None
    step = max(1, INTERPRETERS // 10)
    for i in range(INTERPRETERS):
        it = tflm.Interpreter(m)
        it.invoke()
        it = None
        if i == 0 or (i + 1) % step == 0:
            gc.collect()
            if free0 is None:
                free0 = gc.mem_free()
            else:
                heap[(i + 1) // step - 1] = gc.mem_free() - free0
    print('@INTERPRETERS', INTERPRETERS, heap)
stateless()
stateful()
interpreters()
"""


@dataclass
class SoakResult:
    target: str
    invokes: int
    interpreters: int
    stateless_mismatches: int
    stateless_heap: list[int]
    stateful_checksum: int
    tflm_checksum: int
    stateful_samples: dict[int, list[int]]
    tflm_samples: dict[int, list[int]]
    stateful_heap: list[int]
    interpreter_heap: list[int]
    elapsed: float

    @property
    def problems(self) -> list[str]:
        out = []
        if self.stateless_mismatches:
            out.append(f"stateless: {self.stateless_mismatches} invokes gave another output than the first")
        if self.stateful_checksum != self.tflm_checksum or self.stateful_samples != self.tflm_samples:
            out.append(f"stateful: checksum {self.stateful_checksum}, TFLM's {self.tflm_checksum}; samples "
                       f"{self.stateful_samples}, TFLM's {self.tflm_samples}")
        for what, heap in (("stateless", self.stateless_heap), ("stateful", self.stateful_heap),
                           ("interpreters", self.interpreter_heap)):
            if any(heap) or not heap:
                out.append(f"{what}: free heap changed by {heap} bytes")
        return out


def soak(target: str, invokes: int, interpreters: int, models: Path) -> SoakResult:
    every = max(1, invokes // 10)  # heap[] on the device holds ten
    stateful = accumulator_model()
    code = "import tflm, gc\n" + DEVICE_OPEN + DEVICE_CODE.format(
        invokes=invokes, interpreters=interpreters, every=every, stateless=STATELESS, points=sample_points(invokes),
        width=WIDTH, formula=INPUT_FORMULA, modulus=MODULUS)
    files = {STATELESS: (models / STATELESS).read_bytes(), "accumulator.tflite": stateful}
    t0 = time.monotonic()
    out = device.target(target).run([code], files, timeout=6 * 3600)
    elapsed = time.monotonic() - t0
    want_h, want_samples = tflm_sequence(stateful, invokes)

    def line(tag: str) -> list[str]:
        m = re.search(rf"^@{tag} (.*)$", out, re.M)
        if not m:
            raise RuntimeError(f"no @{tag} line in the device's output:\n{out}")
        return m.group(1).split(" ", 2)

    def ints(text: str) -> list[int]:
        return [int(v) for v in re.findall(r"-?\d+", text)]

    sl = line("STATELESS")
    sf = line("STATEFUL")
    ip = out and re.search(r"^@INTERPRETERS (\d+) (.*)$", out, re.M)
    samples = {int(m.group(1)): ints(m.group(2)) for m in re.finditer(r"^@SAMPLE (\d+) (.*)$", out, re.M)}
    return SoakResult(target, invokes, interpreters, int(sl[1]), ints(sl[2]), int(sf[1]), want_h, samples,
                      want_samples, ints(sf[2]), ints(ip.group(2)) if ip else [], elapsed)


def main() -> int:
    ap = argparse.ArgumentParser(description="many invokes and interpreters on one target")
    ap.add_argument("--target", default="NETDUINO2", choices=device.TARGETS)
    ap.add_argument("--invokes", type=int, default=100_000)
    ap.add_argument("--interpreters", type=int, default=500)
    ap.add_argument("--models", type=Path, default=ROOT.parent / "shared" / "models")
    ap.add_argument("--doc", type=Path, help="write the figures into this Markdown file's soak section")
    args = ap.parse_args()
    r = soak(args.target, args.invokes, args.interpreters, args.models)
    problems = r.problems
    row = (f"| {r.target} | {r.invokes:,} | {r.stateless_mismatches} | "
           f"{'equal' if r.stateful_checksum == r.tflm_checksum and r.stateful_samples == r.tflm_samples else 'DIFFERENT'}"
           f" (checksum {r.stateful_checksum}, {len(r.stateful_samples)} samples) | {r.stateless_heap} | {r.stateful_heap} | "
           f"{r.interpreters} | {r.interpreter_heap} | {r.elapsed:.0f} s |\n")
    print(row + ("\n".join(problems) if problems else "no problems"))
    if args.doc:
        section = read_marked(args.doc, "soak", "soak")
        rows = re.findall(r"^\| (?!target|---)(\S+) \|.*$", section, re.M)
        old = {m.group(1): m.group(0) + "\n" for m in re.finditer(r"^\| (\S+) \|.*$", section, re.M)
               if m.group(1) in rows and m.group(1) != r.target}
        table = ("| target | invokes of each model | stateless outputs unlike the first | stateful outputs vs TFLM "
                 "| free heap change, stateless, every tenth (bytes) | the same, stateful | interpreters created "
                 "and dropped | free heap change every tenth (bytes) | elapsed |\n"
                 "|---|---|---|---|---|---|---|---|---|\n" + "".join(old.values()) + row)
        write_marked(args.doc, "soak", "soak", table)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
