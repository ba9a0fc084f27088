"""`tflm-host prepare --port PORT`: patch-based stages timed on a board.

The model goes to the board once: into its RAM over the port (as `tflm-host
run --port` sends one), or it is already in the board's flash (`--on-board
PATH`, a copy `tflm-host deploy` put there: its arena without a stage must
be the one this model has, as the host predicts it). Each
stage then runs as `tflm.Interpreter(model, stage=...)` builds it, the model
without a stage first: inputs all zero, one invoke to warm up, then `runs`
timed ones, of which the least is the stage's figure, with its
arena_used_bytes and a CRC-32 of its output 0 (every stage must give the
output the model gives without one).

The clock is the board's own: `time.ticks_us()` (microseconds), or on the
QEMU boards, which have no `time` module, `qemuboard.icount_low()`
(instructions: under `-icount shift=0` QEMU runs one a virtual nanosecond).
A stage whose arena the board's heap cannot hold is reported as such and
left out of the choice.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import __version__, patches
from .device import DeviceError, PortTarget

# Device code: the clock, then _stage(model, stage, runs, inputs) per stage.
DEVICE_CODE = """
import tflm, gc, binascii
try:
    import time
    _now = time.ticks_us
    def _span(a, b):
        return time.ticks_diff(b, a)
    print('@CLOCK us')
except ImportError:
    import qemuboard
    _now = qemuboard.icount_low
    def _span(a, b):
        return (b - a) & 0x3fffffff
    print('@CLOCK instructions')
_SIZE = {'int8': 1, 'uint8': 1, 'bool': 1, 'int16': 2, 'float32': 4, 'int32': 4, 'int64': 8}
def _zeros(m):
    out = []
    for t in m.inputs:
        n = _SIZE.get(t.dtype, 1)
        for d in t.shape:
            n *= d
        out.append(bytes(n))
    return out
_ok = True
_used = -1
def _expect(used):
    global _ok
    _ok = _used == used
    if not _ok:
        print('@WRONG', _used)
def _stage(m, stage, runs, x):
    global _used
    if not _ok:
        return
    try:
        it = tflm.Interpreter(m, stage=stage)
    except MemoryError as e:
        print('@T - -', e)
        gc.collect()
        return
    best = 0
    for k in range(runs + 1):
        for i in range(len(x)):
            it.set_input(i, x[i])
        a = _now()
        it.invoke()
        d = _span(a, _now())
        if k == 1 or (k > 1 and d < best):
            best = d
    _used = it.arena_used_bytes()
    print('@T', best, _used, binascii.crc32(bytes(it.output(0))))
    del it
    gc.collect()
"""

@dataclass(frozen=True)
class Timed:
    """A board's figures for the model without a stage, then each point."""
    clock: str                 # "us" or "instructions"
    times: list[int | None]    # None: its arena did not fit the board's heap
    notes: list[str]           # arena figures of the board that are not this tflm-host's


def stage_args(points: list[patches.Schedule]) -> list[tuple]:
    """Each point as tflm.Interpreter's stage= takes it (the model without a
    stage first)."""
    modes = {patches.PATCHES: "patches", patches.ROWS: "bands", patches.KEEP: "kept"}
    return [()] + [(s.start, s.split - 1, *s.grid, modes[s.mode]) for s in points]


def time_stages(port: str, data: bytes, points: list[patches.Schedule], found: patches.Search,
                on_board: str | None = None, runs: int = 3) -> Timed:
    """The model (prepared; stage= replaces its schedule, if any) without a
    stage, then with each of `points`, timed on the board at `port` (a
    serial port, or the socket `tflm-host qemu` prints)."""
    target = PortTarget(port)
    files: dict[str, bytes] = {}
    chunks = [DEVICE_CODE]
    if on_board is None:
        files["model.tflite"] = data
        chunks.append("_m = tflm.load(ROOT + '/model.tflite', quiet=True)")
    else:
        chunks.append(f"_m = tflm.load({on_board!r}, quiet=True)")
    chunks.append("_x = _zeros(_m)")
    args = stage_args(points)
    # A copy on the board must be this model: its arena without a stage, the
    # host's, before any stage is tried.
    chunks += [f"_stage(_m, (), {runs}, _x)"] + ([f"_expect({found.plain_used})"] if on_board is not None else [])
    chunks += [f"_stage(_m, {s!r}, {runs}, _x)" for s in args[1:]]
    try:
        text = target.run(chunks, files)
    except DeviceError as e:
        if "keyword" in str(e) and "stage" in str(e):
            raise RuntimeError(f"the tflm module on the board at {port} takes no stage= argument: tflm.mpy and "
                               f"PYBV11's firmware leave it out, firmware older than this tflm-host ({__version__}) "
                               f"has none; flash this version's firmware (tflm-host flash)") from None
        if "MemoryError" in str(e) and on_board is None:
            raise MemoryError(f"the model ({len(data):,} bytes) does not fit the board's RAM: put it in its flash "
                              f"(tflm-host prepare MODEL -o OUT, then tflm-host deploy OUT --port {port}) and time "
                              f"it there with --on-board /rom/OUT") from None
        raise
    lines = text.splitlines()
    clock = next((ln.split()[1] for ln in lines if ln.startswith("@CLOCK ")), "")
    wrong = next((ln.split()[1] for ln in lines if ln.startswith("@WRONG ")), None)
    if wrong is not None:
        raise ValueError(f"{on_board} on the board is not this model as `tflm-host prepare` writes it (its "
                         f"arena_used_bytes {int(wrong):,}, this one's {found.plain_used:,}), or the board's tflm "
                         f"is not this tflm-host's version {__version__}: deploy the prepared model again")
    rows = [ln.split(maxsplit=3) for ln in lines if ln.startswith("@T ")]
    if len(rows) != len(points) + 1 or not clock:
        raise RuntimeError(f"{port}: no figure for every stage:\n{text[-2000:]}")
    if rows[0][1] == "-":
        raise MemoryError(f"the model without a stage does not fit the board's heap: {rows[0][3]}")
    times = [None if r[1] == "-" else int(r[1]) for r in rows]
    used = [None if r[1] == "-" else int(r[2]) for r in rows]
    changed = [k for k, r in enumerate(rows) if r[1] != "-" and r[3] != rows[0][3]]
    if changed:
        raise RuntimeError(f"{port}: stages {', '.join(repr(args[k]) for k in changed)} change the output")
    expected = [found.plain_used] + [s.used for s in points]
    notes = [f"stage={a!r}: arena_used_bytes {u:,} on the board, {e:,} here (the board's tflm is not this "
             f"tflm-host's version {__version__})" for a, u, e in zip(args, used, expected)
             if u is not None and u != e]
    return Timed(clock, times, notes)
