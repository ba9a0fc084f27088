"""Shared fixtures: the shared models, their measured TFLM figures, targets."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tflm_dev.builder import ModelBuilder
from tflm_host import arena, device
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import DEVICE_OPEN, BatchJob, run_batch

ROOT = Path(__file__).resolve().parents[1]
MODELS = Path(os.environ.get("TFLM_MODELS", ROOT.parent / "shared" / "models"))
# The STM32F405's (the pyboard's) flash erase sectors as (start, size):
# 0-3 of 16 KiB, 4 of 64 KiB, 5-11 of 128 KiB (reference manual RM0090).
STM32F405_SECTORS = [(0x08000000 + 0x4000 * i, 0x4000) for i in range(4)] + [(0x08010000, 0x10000)] + \
    [(0x08020000 + 0x20000 * i, 0x20000) for i in range(7)]
# The device suite's targets. The emulated Pico runs the real RPI_PICO
# firmware about 20 times slower than QEMU runs its boards: `make test` runs
# on it what EVERY_TARGET marks (the hello_world models, the CLI, the device
# scripts, tests/test_pico.py), and everything with TFLM_PICO=all
# (`make test-pico`). The real ESP32_GENERIC firmware on QEMU's esp32
# machine likewise (each run boots the whole firmware from its flash image):
# EVERY_TARGET, the shared models (tests/test_models.py) and
# tests/test_esp32.py in `make test`, everything with TFLM_ESP32=all
# (`make test-esp32`).
EVERY_TARGET = device.TARGETS
SELECTED_ONLY = (() if os.environ.get("TFLM_PICO") == "all" else device.PICO_BOARDS) + \
    (() if os.environ.get("TFLM_ESP32") == "all" else device.ESP32_BOARDS)
TARGETS = tuple(t for t in EVERY_TARGET if t not in SELECTED_ONLY)
# Ops the runtime implements, as its engine lists them.
SUPPORTED_OPS = set(arena.kernel_ops())


@dataclass
class MeasuredModel:
    """A row of MODELS.md: what TFLM measured for a shared model."""

    name: str
    ops: dict[str, int]
    tflm_head: int
    tflm_tail: int
    tflm_used: int
    bound: int
    no_reuse: int

    @property
    def path(self) -> Path:
        return MODELS / self.name

    @property
    def runnable(self) -> bool:
        return set(self.ops) <= SUPPORTED_OPS


def read_models_table() -> dict[str, MeasuredModel]:
    text = (MODELS / "MODELS.md").read_text()
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 8 or not cells[0].endswith(".tflite") or not cells[1].isdigit():
            continue
        ops = {}
        for item in cells[2].split(", "):
            name, count = item.rsplit("×", 1)
            ops[name] = int(count)
        rows[cells[0]] = MeasuredModel(cells[0], ops, *(int(c) for c in cells[3:8]))
    return rows


MEASURED = read_models_table()


@pytest.fixture(scope="session")
def measured() -> dict[str, MeasuredModel]:
    return MEASURED


def model_path(name: str) -> Path:
    path = MODELS / name
    assert path.is_file(), f"{path} missing: the shared models must sit in ../shared/models"
    return path


_targets: dict[str, device.Target] = {}


def get_target(name: str) -> device.Target:
    if name not in _targets:
        _targets[name] = device.target(name)
    return _targets[name]


def run_on(target: str, code: str, files: dict[str, bytes] | None = None, timeout: float = 600) -> str:
    """Runs device code (a chunk, or a list of chunks) and returns its output."""
    chunks = [code] if isinstance(code, str) else code
    return get_target(target).run(chunks, files or {}, timeout=timeout)


# The release folder `make dist` writes (its DIST default); make test builds it.
DIST = device.build_dir() / "dist"


@pytest.fixture(scope="module")
def dist_copy(tmp_path_factory) -> Path:
    """The release folder copied to a clean path, away from the checkout and
    its build: what a user unpacks."""
    assert (DIST / "manifest.json").is_file(), f"{DIST} holds no release: run `make dist`"
    dest = tmp_path_factory.mktemp("unpacked") / "tflm-release"
    shutil.copytree(DIST, dest)
    return dest


def dist_artifacts(folder: Path, kind: str) -> list[dict]:
    """The manifest's records of one kind (firmware, mpy, mip-package, wheel, sdist, example)."""
    return [a for a in json.loads((folder / "manifest.json").read_text())["artifacts"] if a["kind"] == kind]


def model_files(*names: str) -> dict[str, bytes]:
    return {n: model_path(n).read_bytes() for n in names}


def run_as_predicted(target: str, jobs: list[BatchJob]) -> dict[str, list[list[np.ndarray]]]:
    """Runs the jobs' models as they are (planner=None: a prepared or planned
    model's own plan) on the target: each runs, with the arena (used, head,
    tail) the host predicts for it. Its outputs, by job name."""
    results = run_batch(get_target(target), jobs, planner=None)
    assert set(results) == {job.name for job in jobs}
    for job in jobs:
        res = results[job.name]
        assert res.error is None, (job.name, res.error)
        layout = arena.plan_layout(load_model(job.model))
        assert res.arena == (layout.used, layout.head, layout.tail), job.name
    return {name: res.runs for name, res in results.items()}


# Device code the tests start with: load(name) opens a file of the test
# (in place from ROMFS on the boards), attempt(f) prints what f raises.
DEVICE_PRELUDE = "\nimport tflm, gc\n" + DEVICE_OPEN + """\
def attempt(f):
    try:
        f()
        print('ok')
    except Exception as e:
        print(type(e).__name__, e)
"""


def model_firmware(name: str, *settings: str, board: str = "NETDUINO2") -> device.QemuTarget:
    """`make firmware` for the QEMU board with the model's kernels only, for
    its tensor types (TFLM_OPS and TFLM_TYPES as `tflm-host ops` prints
    them), and make's `settings` (VAR=value): the board running it."""
    from tflm_host import cli

    model = load_model(model_path(name))
    ops = sorted({op.opcode for op in model.main.operators} & SUPPORTED_OPS)
    args = ["make", "-s", "--no-print-directory", "-C", str(ROOT), f"BUILD={device.build_dir()}", f"BOARD={board}",
            f"TFLM_OPS={' '.join(ops)}", f"TFLM_TYPES={cli.kernel_types([model])}", *settings]
    built = subprocess.run(args + ["firmware"], capture_output=True, text=True)
    assert built.returncode == 0, (built.stdout + built.stderr)[-3000:]
    fw_dir = subprocess.run(args + ["fw-dir"], check=True, capture_output=True, text=True).stdout.strip()
    return device.QemuTarget(board, firmware=Path(fw_dir) / "firmware.elf")


def invoke_inputs(model, samples) -> tuple[str, dict[str, bytes]]:
    """Device code that runs interpreter `it` on each sample's first input
    (read from x.bin) and prints output 0 in hex, and the x.bin it reads."""
    n = model.inputs[0].nbytes
    code = f"""
x = open(ROOT + '/x.bin', 'rb').read()
for k in range({len(samples)}):
    it.set_input(0, x[k * {n}:(k + 1) * {n}])
    it.invoke()
    print(bytes(it.output(0)).hex())
"""
    return code, {"x.bin": b"".join(s[0].tobytes() for s in samples)}


def run_each_model(target: str, names: list[str], body: str, after: str = "") -> list[str]:
    """On the target, for each model of `names`: `m = tflm.Model(load(name))`
    and `body` (device code indented by four spaces); then `after`, where
    NAMES stands for the list of names. The output's lines."""
    code = DEVICE_PRELUDE + "for name in NAMES:\n    m = tflm.Model(load(name))\n" + body + after
    return run_on(target, code.replace("NAMES", repr(names)), model_files(*names)).splitlines()


def check_romfs_at_rom(target: str) -> None:
    """A ROMFS image of a file and a folder is mounted at /rom on the board, its files read back."""
    files = {"a.txt": b"hello from flash\n", "sub/b.bin": bytes(range(256)) * 4}
    out = run_on(target, """
import os
print(sorted(os.listdir('/rom')), sorted(os.listdir('/rom/sub')))
print(open('/rom/a.txt').read(), end='')
print(sum(open('/rom/sub/b.bin', 'rb').read()))
""", files)
    assert out == f"['a.txt', 'sub'] ['b.bin']\nhello from flash\n{sum(range(256)) * 4}\n"


def check_person_detect_in_place(target: str, start: str, stop: str, chunks: tuple[str, ...] = ()) -> str:
    """person_detect from /rom on the board: used in place from flash (no
    copy in RAM), with the arena the host predicts, bit-exact with TFLM.
    `start` and `stop` (device code after `chunks`) read the board's counters
    around invoke(); stop prints them on a line @COUNT. The board's output."""
    path = model_path("person_detect.tflite")
    model = load_model(path)
    layout = arena.plan_layout(model, "greedy")
    frame = np.random.default_rng(3).integers(-128, 128, model.inputs[0].shape, dtype=np.int8)
    out = run_on(target, [*chunks, f"""
import tflm, binascii
m = tflm.load('/rom/person_detect.tflite')
print('@MODEL', m.ram_bytes, tflm.arena_size(m))
it = tflm.Interpreter(m)
it.set_input(0, open('/rom/frame.bin', 'rb').read())
{start}
it.invoke()
{stop}
print('@ARENA', it.arena_used_bytes(), it.head_bytes(), it.tail_bytes())
print('@OUT', binascii.hexlify(it.output(0)).decode())
"""], {"person_detect.tflite": path.read_bytes(), "frame.bin": frame.tobytes()})
    ram, size = map(int, re.search(r"@MODEL (\d+) (\d+)", out).groups())
    assert ram == 0, "the model was copied to RAM instead of used in place from flash"
    assert size == layout.needed
    used, head, tail = map(int, re.search(r"@ARENA (\d+) (\d+) (\d+)", out).groups())
    assert (used, head, tail) == (layout.used, layout.head, layout.tail)
    ours = np.frombuffer(bytes.fromhex(re.search(r"@OUT (\w+)", out).group(1)), np.int8)
    (expected,) = reference_outputs(path, [[frame]])
    assert ours.tobytes() == expected[0].tobytes(), (ours, expected[0])
    return out


# Device code for check_low_counter: LOW and FULL name a board's readers of
# the same counter, the count's low 30 bits and the whole count.
LOW_COUNTER_CODE = """
import gc, micropython
M = 0x3fffffff
def _gaps(f, n, lock):
    g = [0] * n
    i = 0
    if lock:
        micropython.heap_lock()
    try:
        while i < n:
            c = f()
            d = f()
            g[i] = (d - c) & M
            i += 1
    finally:
        if lock:
            micropython.heap_unlock()
    return g
def _locked(f):
    micropython.heap_lock()
    try:
        return f()
    except MemoryError:
        return -1
    finally:
        micropython.heap_unlock()
def _work(n):
    s = 0
    for i in range(n):
        s += i
    return s
def _bracket(n):
    x1 = FULL(); y1 = LOW(); z1 = FULL()
    _work(n)
    x2 = FULL(); y2 = LOW(); z2 = FULL()
    return (y1 - x1) & M, z1 - x1, (y2 - y1) & M, x2 - z1, z2 - x1
gc.collect()
print('@CALM', *_gaps(LOW, 16, True))
print('@FULLCALM', *_gaps(FULL, 16, False))
_keep = [bytearray(k % 7 * 8 + 1) for k in range(300)]
for k in range(0, 300, 2):
    _keep[k] = None
print('@BUSY', *_gaps(LOW, 16, True))
print('@FULLBUSY', *_gaps(FULL, 16, False))
del _keep
gc.collect()
print('@LOW', *[_locked(LOW) for _ in range(4)])
print('@FULL', _locked(FULL))
print('@BRACKET', *_bracket(3000))
"""


def check_low_counter(target: str, chunks: list[str], low: str, full: str, spread: int) -> dict[str, list[int]]:
    """A board's low-bits counter reader `low` (device code after `chunks`)
    against `full`, its reader of the whole count: its readings are small
    ints below 2^30 (with the heap locked they raise no MemoryError, where
    the whole count's does); two readings in a row are fewer counts apart
    than two of the whole count's, and the same to within `spread` (the
    counter's resolution) whatever the heap's state (calm, then
    fragmented); and a span of its readings, modulo 2^30, lies within the
    span of the whole count's readings around them. The parsed lines, by
    tag."""
    out = run_on(target, [*chunks, f"LOW, FULL = {low}, {full}\n" + LOW_COUNTER_CODE])
    got = {m.group(1): m.group(2).split() for m in re.finditer(r"^@(\w+) ?(.*)$", out, re.M)}
    readings = [int(x) for x in got["LOW"]]
    assert all(0 <= x < 1 << 30 for x in readings), readings
    # The lock catches an allocation: the whole count's reader makes a long
    # int (MicroPython's mpz ints do, whatever the value), so it fails under it.
    assert got["FULL"] == ["-1"], got["FULL"]
    gaps = [int(x) for x in got["CALM"] + got["BUSY"]]
    full_gaps = [int(x) for x in got["FULLCALM"] + got["FULLBUSY"]]
    assert 0 < min(gaps) and max(gaps) - min(gaps) <= spread and max(gaps) < min(full_gaps), (gaps, full_gaps)
    low_in, width1, span, inner, outer = (int(x) for x in got["BRACKET"])
    # The low reading lies between the whole count's readings around it,
    # and its span within theirs.
    assert 0 <= low_in <= width1 and 0 < inner <= span <= outer < inner + 50000, got["BRACKET"]
    return {k: [int(x) if x.lstrip("-").isdigit() else x for x in v] for k, v in got.items()}


def pytest_report_header(config):
    return f"shared models: {MODELS} ({len(MEASURED)} measured)"


def pytest_collection_modifyitems(config, items):
    """The xdist groups first: each runs in one process from start to end
    (a build, then its tests), so started last it would leave the other
    processes idle at the end of the run (make test's pytest-xdist)."""
    items.sort(key=lambda item: item.get_closest_marker("xdist_group") is None)


def ops_regex(ops: list[str]) -> str:
    return ", ".join(re.escape(o) for o in ops)


def model_batches(target: str, names: list[str]) -> list[list[str]]:
    """The models split into runs whose ROMFS image fits the target's ROMFS
    region (one run on the unix port), in the given order."""
    if target == "unix":
        return [list(names)] if names else []
    from tflm_host import romfs

    limit = get_target(target).board.romfs_size
    batches: list[list[str]] = []
    for name in names:
        if batches and len(romfs.build_image(model_files(*batches[-1], name))) <= limit:
            batches[-1].append(name)
        else:
            if len(romfs.build_image(model_files(name))) > limit:
                raise ValueError(f"{name} alone does not fit the {target} ROMFS region ({limit} bytes)")
            batches.append([name])
    return batches


# A model with ops no build has: a custom op and a builtin one TFLM has no
# kernel for either (the shared models all run now), for the missing-op
# messages.
UNKNOWN_OPS = ["CUSTOM:SignalFoo", "SKIP_GRAM"]
UNKNOWN_OPS_MESSAGE = "model uses ops no kernel of tflm implements: " + ", ".join(UNKNOWN_OPS)


def unknown_ops_model() -> bytes:
    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((4,), "FLOAT32")
    y = sg.tensor((4,), "FLOAT32")
    z = sg.tensor((4,), "FLOAT32")
    sg.op("CUSTOM:SignalFoo", [x], [y], custom_options=b"")
    sg.op("SKIP_GRAM", [y], [z])
    sg.inputs, sg.outputs = [x], [z]
    return b.build()


def int8_add_model(n: int, second: str, data: np.ndarray | None = None, second_is_input: bool = False) -> bytes:
    """ADD(x, `second`) -> y of int8 (1, n) tensors, scale 0.1: the second
    operand a constant of `data`, the model's second input, or (neither) a
    tensor nothing writes."""
    b = ModelBuilder()
    sg = b.subgraph()
    q = ([0.1], [0])
    x = sg.tensor((1, n), "INT8", quant=q, name="x")
    k = sg.tensor((1, n), "INT8", quant=q, data=data, name=second)
    y = sg.tensor((1, n), "INT8", quant=q, name="y")
    sg.op("ADD", [x, k], [y])
    sg.inputs, sg.outputs = [x, k] if second_is_input else [x], [y]
    return b.build()
