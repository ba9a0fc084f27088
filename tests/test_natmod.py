"""tflm.mpy, the module as a dynamic native module (`make natmod`), on stock
MicroPython 1.25.0 firmware that has no tflm module: the unix port
(build/unix-stock), MPS2_AN385 (Cortex-M3, build/MPS2_AN385-stock), MICROBIT
(Cortex-M0, the RP2040's ISA, with a tflm.mpy of its models' kernels),
NETDUINOPLUS2 (Cortex-M4F, the pyboard's MCU, hard-float ABI: hello_world's
kernel, for its 111 KB heap), the QEMU boards finding tflm.mpy in their ROMFS,
and the rp2 port's own RPI_PICO firmware in the RP2040 emulator, finding it
and the models in its littlefs filesystem, as `mpremote cp` leaves them. Outputs
are TFLM's, bit for bit, and the arena figures the built-in module's; the API
answers as the built-in module does. `make natmod-stock` builds what these
tests load."""

from __future__ import annotations

import fcntl
import functools
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import littlefs
import pytest

import api_fuzz
from conftest import MODELS as MODELS_FOLDER
from conftest import DEVICE_PRELUDE, model_files, model_path
from test_predict import PREDICT_FILES, PREDICT_LINES, PREDICT_SCRIPT
from tflm_host import board_info, device, patches
from tflm_host.device import PicoServer, QemuTarget, Target, UnixTarget, run_chunks
from tflm_host.model import load_model
from tflm_host.prepare import prepare_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import BatchJob, make_inputs, run_batch

BUILD = Path(os.environ.get("TFLM_BUILD", Path(__file__).resolve().parents[1] / "build"))
MODELS = ["hello_world_int8.tflite", "kws_ref_model.tflite", "person_detect.tflite"]


# Each target's tflm.mpy: its architecture and, for a build with only some
# models' kernels (as `tflm-host ops MODELS --natmod ARCH` builds it), those
# models (None: every kernel, make natmod ARCH=...; the target runs MODELS):
# the natmod entries of port_boards/<BOARD>/board.json, which `make
# natmod-stock` builds from too.
NATMOD = {"unix": ("x64", None)} | {b.name: (b.natmod_arch, b.natmod_models)
                                    for b in board_info.boards() if b.natmod_arch}


def target_models(target: str) -> list[str]:
    return list(NATMOD[target][1] or MODELS)


@functools.cache
def natmod_path(arch: str, models: tuple[str, ...] | None) -> Path:
    if models is None:
        path = BUILD / "natmod" / arch / "tflm.mpy"
        assert path.is_file(), f"{path} missing: run `make natmod-stock`"
        return path
    # make natmod-stock ran the same command: make finds it up to date (one
    # process at a time, should it not).
    (BUILD / "natmod").mkdir(parents=True, exist_ok=True)
    with open(BUILD / "natmod" / ".test.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = subprocess.run([sys.executable, "-m", "tflm_host", "ops", "--natmod", arch,
                               *(str(model_path(m)) for m in models)], capture_output=True, text=True, timeout=900,
                              env=dict(os.environ, TFLM_BUILD=str(BUILD)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = re.search(rf"^# tflm.mpy for {arch} with these kernels \(([\d,]+) bytes\): (\S+)$", proc.stdout, re.M)
    assert found, proc.stdout
    path = Path(found.group(2))
    assert path.is_file() and path.stat().st_size == int(found.group(1).replace(",", ""))
    return path


def natmod_file(target: str) -> bytes:
    arch, models = NATMOD[target]
    return natmod_path(arch, models).read_bytes()


class NatmodTarget(Target):
    """A stock firmware target whose every run has tflm.mpy beside the test's
    files (the script's folder on unix, ROMFS on a board: both on sys.path)."""

    def __init__(self, inner: Target, mpy: bytes) -> None:
        self.inner, self.mpy, self.name = inner, mpy, inner.name
        if hasattr(inner, "board"):
            # The ROMFS region run_batch fills: what tflm.mpy leaves of it
            # (its data, alignment and record headers).
            self.board = types.SimpleNamespace(name=inner.board.name,
                                               romfs_size=inner.board.romfs_size - len(mpy) - 1024)

    def run(self, chunks: list[str], files: dict[str, bytes] | None = None, timeout: float = 600) -> str:
        return self.inner.run(chunks, {**(files or {}), "tflm.mpy": self.mpy}, timeout=timeout)


def c_number(text: str, name: str) -> int:
    """The value of `#define NAME (expression)` or `NAME = (expression)` in
    C, CMake or linker text: digits, * and parentheses only."""
    found = re.search(rf"\b{name}\s*=?\s*(\([\d\s*()]+\)|\d+)", text)
    assert found, f"no {name}"
    value = 1
    for factor in re.findall(r"\d+", found.group(1)):
        value *= int(factor)
    return value


class StockPicoTarget(Target):
    """The rp2 port's own RPI_PICO firmware (build/RPI_PICO-stock, no ROMFS)
    on rp2040js. A run's files go into a littlefs image at the place in flash
    where the firmware mounts its filesystem as / (the last
    MICROPY_HW_FLASH_STORAGE_BYTES of the flash; the emulated flash cannot be
    written by the firmware, so the image is made here, as the boot script's
    VfsLfs2(progsize=256) reads it): tflm.mpy is imported from there and the
    models read into RAM, as on a board after `mpremote cp`."""

    def __init__(self) -> None:
        self.name = "RPI_PICO"
        self.firmware = BUILD / "RPI_PICO-stock" / "firmware.uf2"
        assert self.firmware.is_file(), f"{self.firmware} missing: run `make natmod-stock`"
        # The board definition it was built with, and the flash its link used.
        board_dir = re.search(r"^MICROPY_BOARD_DIR:\w+=(.+)$",
                              (self.firmware.parent / "CMakeCache.txt").read_text(), re.M).group(1)
        storage = c_number(Path(board_dir, "mpconfigboard.h").read_text(), "MICROPY_HW_FLASH_STORAGE_BYTES")
        flash = c_number((self.firmware.parent / "pico_flash_region.ld").read_text(), "LENGTH")
        self.fs_offset, self.fs_blocks = flash - storage, storage // 4096

    def filesystem(self, files: dict[str, bytes]) -> bytes:
        fs = littlefs.LittleFS(block_size=4096, block_count=self.fs_blocks, read_size=32, prog_size=256,
                               lookahead_size=32, disk_version=0x00020001)
        for name, data in files.items():
            with fs.open(name, "wb") as f:
                f.write(data)
        return bytes(fs.context.buffer)

    def run(self, chunks: list[str], files: dict[str, bytes] | None = None, timeout: float = 600) -> str:
        image = self.filesystem(files or {})
        with PicoServer(firmware=self.firmware, flash={self.fs_offset: image}) as server:
            return run_chunks(server.url, ["ROOT = ''"] + chunks, timeout)


def stock_target(name: str) -> Target:
    if name == "unix":
        binary = BUILD / "unix-stock" / "micropython"
        assert binary.is_file(), f"{binary} missing: run `make natmod-stock`"
        return UnixTarget(binary)
    if board_info.get(name).port == "rp2":
        return StockPicoTarget()
    firmware = BUILD / f"{name}-stock" / "firmware.elf"
    assert firmware.is_file(), f"{firmware} missing: run `make natmod-stock`"
    return QemuTarget(name, firmware)


def jobs(names: list[str]) -> list[BatchJob]:
    out = []
    for name in names:
        model = load_model(model_path(name))
        samples = make_inputs(model, "zeros") + make_inputs(model, "random", seed=5, count=1)
        out.append(BatchJob(name.removesuffix(".tflite"), model_path(name).read_bytes(), samples))
    return out


@pytest.mark.parametrize("target", list(NATMOD))
def test_stock_firmware_has_no_tflm(target):
    out = stock_target(target).run(["try:\n    import tflm\n    print('found')\nexcept ImportError:\n    print('none')"])
    assert out.split() == ["none"]


def check_bit_exact(results: dict, todo: list[BatchJob], where: str) -> None:
    """run_batch's results of `todo` on a target: every output TFLM's, bit for bit."""
    for job in todo:
        res = results[job.name]
        assert res.error is None, f"{job.name} on {where}: {res.error}"
        ref = reference_outputs(model_path(job.name + ".tflite"), job.samples)
        assert len(res.runs) == len(ref)
        for r, (a_run, b_run) in enumerate(zip(res.runs, ref)):
            for k, (a, b) in enumerate(zip(a_run, b_run)):
                assert a.tobytes() == b.astype(a.dtype).tobytes(), f"{job.name} on {where}: input set {r}, output {k}"


@pytest.mark.parametrize("target", list(NATMOD))
def test_natmod_models_bit_exact(target):
    todo = jobs(target_models(target))
    ours = run_batch(NatmodTarget(stock_target(target), natmod_file(target)), todo)
    builtin = run_batch(UnixTarget(), todo)
    check_bit_exact(ours, todo, target)
    for job in todo:
        res = ours[job.name]
        # used, head, tail and the head's plan: the built-in module's.
        assert res.arena == builtin[job.name].arena, job.name
        assert res.buffers == builtin[job.name].buffers, job.name


# Device code through much of the API; its output must be the built-in
# module's, word for word.
API_SCRIPT = DEVICE_PRELUDE + """
print(tflm.version, len(tflm.ops), tflm.ops[:3], tflm.builtin_plan, tflm.C_STACK_NEEDED > 0)
m = tflm.load(ROOT + '/hello_world_int8.tflite', quiet=True)
print(m, m.inputs, m.outputs, m.ops, m.subgraphs, m.size, m.labels, m.tensor(1))
print(tflm.arena_size(m), tflm.arena_size(m, planner='linear'))
it = tflm.Interpreter(m)
print(it, it.arena_used_bytes(), it.head_bytes(), it.tail_bytes(), it.planner)
print(it.predict([0.5]), it([1.5], raw=True), list(it.output(0)))
it.set_input(0, bytes([7]))
it.invoke()
print(bytes(it.output(0)), it.allocations())
print(it.memory_plan(40))
print(it.buffers())
it.print_allocations()
it.reset()
a = tflm.Arena(4096)
i1 = tflm.Interpreter(m, a)
i2 = tflm.Interpreter(m, a)
print(a, i1.arena_used_bytes(), a.used_bytes(), a.head_bytes(), a.tail_bytes())
i2.__del__()
print(a)
attempt(lambda: i2.invoke())
buf = bytearray(2048)
i3 = tflm.Interpreter(m, buf, planner='greedy')
print(i3.arena.size, i3.arena_used_bytes())
out = bytearray(1)
i4 = tflm.Interpreter(m, preallocated={m.outputs[0].index: out})
i4.predict([0.25])
print(out, i4.arena_used_bytes())
attempt(lambda: tflm.Model('x'))
attempt(lambda: tflm.Model(3))
attempt(lambda: tflm.Interpreter(m, 10))
attempt(lambda: tflm.Interpreter(m, planner='nope'))
attempt(lambda: it.input(3))
attempt(lambda: it.set_input(0, b'12'))
attempt(lambda: it.predict(['a']))
attempt(lambda: tflm.Model(b'not a model at all'))
k = tflm.Model(load('kws_ref_model.tflite'))
ik = tflm.Interpreter(k)
print(k, ik, ik.arena_used_bytes())
"""


def test_natmod_api_as_builtin():
    files = model_files("hello_world_int8.tflite", "kws_ref_model.tflite")
    ours = NatmodTarget(stock_target("unix"), natmod_file("unix")).run([API_SCRIPT], files)
    builtin = UnixTarget().run([API_SCRIPT], files)
    assert ours.splitlines() == builtin.splitlines()


def test_natmod_shared_arena_frees_tails_at_del():
    """tflm.mpy has no finalisers: interpreters dropped in a loop keep their
    tails in a shared tflm.Arena until it runs out, and the MemoryError says
    why; interp.__del__() frees each (README, docs/natmod.md)."""
    code = DEVICE_PRELUDE + """
m = tflm.Model(load('hello_world_int8.tflite'))
a = tflm.Arena(1000)
try:
    for n in range(300):
        it = tflm.Interpreter(m, a)
        it.predict([1.0])
except MemoryError as e:
    print(n, e)
b = tflm.Arena(1000)
for n in range(300):
    it = tflm.Interpreter(m, b)
    it.predict([1.0])
    it.__del__()
print(b)
"""
    out = NatmodTarget(stock_target("unix"), natmod_file("unix")).run([code], model_files("hello_world_int8.tflite"))
    assert out.splitlines() == [
        "2 arena too small: needs 1040 bytes, has 992 (672 of them the tails of 2 interpreters in it: "
        "tflm.mpy frees one's at its __del__())",
        "Arena(size=992, used=0, head=0, tail=0, free=992, interpreters=0, gaps=0)"]


def test_natmod_api_fuzz_short():
    """tests/api_fuzz.py's random calls on tflm.mpy (whose calls into
    MicroPython go through natmod.h's shims): every one returns or raises a
    Python exception. `make fuzz` runs many more."""
    outcomes = api_fuzz.run(NatmodTarget(stock_target("unix"), natmod_file("unix")), 4000, 1, MODELS_FOLDER)
    assert sum(outcomes.values()) == 4000
    assert outcomes["ok"] > 500 and outcomes["TypeError"] > 500 and outcomes["ValueError"] > 0


def test_natmod_has_no_stage_argument():
    """docs/natmod.md: tflm.mpy leaves out stage= and interp.stage (their code
    takes heap the stock Pico needs)."""
    code = DEVICE_PRELUDE + """
m = tflm.Model(load('hello_world_int8.tflite'))
attempt(lambda: tflm.Interpreter(m, stage=()))
attempt(lambda: tflm.arena_size(m, stage=()))
print(hasattr(tflm.Interpreter(m), 'stage'))
"""
    out = NatmodTarget(stock_target("unix"), natmod_file("unix")).run([code], model_files("hello_world_int8.tflite"))
    assert out.splitlines() == ["TypeError extra keyword arguments given"] * 2 + ["False"]


# What natmod.h's shims must do as the firmware's functions do (each line
# once crashed tflm.mpy or differed from the built-in module): builtins
# looked up as builtins, not in the caller's globals; ints past a machine
# word; str arguments that are other buffers; a __len__ that raises; a
# slice of a tensor view outliving its interpreter.
SHIM_SCRIPT = DEVICE_PRELUDE + """
import array, gc
m = tflm.Model(load('hello_world_int8.tflite'))
memoryview = 7
print(len(tflm.Interpreter(m).input()))
del memoryview
MemoryError = ZeroDivisionError
attempt(lambda: tflm.Interpreter(m, 16))
del MemoryError
float = int
print(tflm.Interpreter(m).predict([0.5])[0] == tflm.Interpreter(m).predict(array.array('f', [0.5]))[0])
del float
it = tflm.Interpreter(m)
len = 0
print(tflm.Interpreter(m, plan=[-1] * 10).planner)
del len
for big in (2 ** 64, -2 ** 64):
    attempt(lambda: it.input(big))
    attempt(lambda: tflm.Interpreter(m, big + 4000))
    attempt(lambda: it.set_input(0, b'', big))
for p in (bytearray(b'linear'), memoryview(b'linearZZZZ')[:6], array.array('i', [-1] * 4), 5):
    attempt(lambda: tflm.Interpreter(m, planner=p))
class L:
    def __len__(self):
        raise TypeError('len boom')
    def __iter__(self):
        return iter([0.5])
attempt(lambda: it.predict(L()))
def sliced():
    f = tflm.Interpreter(tflm.Model(load('hello_world_float.tflite')))
    f.predict([1.0])
    return f.output()[0:]
v = sliced()
gc.collect()
first = v[0]
junk = [[i, i] for i in range(300)]
print(v[0] == first, len(repr(junk)))
"""


def test_natmod_shims_as_builtin():
    files = model_files("hello_world_int8.tflite", "hello_world_float.tflite")
    ours = NatmodTarget(stock_target("unix"), natmod_file("unix")).run([SHIM_SCRIPT], files)
    builtin = UnixTarget().run([SHIM_SCRIPT], files)
    assert ours.splitlines() == builtin.splitlines()
    assert len(builtin.splitlines()) == 16 and "OverflowError" in builtin and "TypeError len boom" in builtin


def test_natmod_predict_inputs_as_builtin():
    """predict()'s inputs on tflm.mpy as on the built-in module
    (test_predict.py): sequences of every kind, those refused, untyped
    bytes. (The table's iterator of a range once crashed tflm.mpy.)"""
    ours = NatmodTarget(stock_target("unix"), natmod_file("unix")).run([PREDICT_SCRIPT], model_files(*PREDICT_FILES))
    assert ours.splitlines() == PREDICT_LINES


# docs/natmod.md's table: (its row's build, ARCH) -> that build's (ARCH, models), as NATMOD gives them.
# ESP32 (xtensawin): the build of hello_world_int8's and micro_speech_quantized's kernels
# (test_natmod_on_esp32).
ESP32_MODELS = ("hello_world_int8.tflite", "micro_speech_quantized.tflite")

DOC_ROWS = {("every kernel", "x64"): NATMOD["unix"], ("every kernel", "armv7m"): NATMOD["MPS2_AN385"],
            ("hello_world, kws_ref_model and person_detect's ops and types", "armv6m"): NATMOD["MICROBIT"],
            ("hello_world_int8's op (FULLY_CONNECTED, int8 and int32)", "armv7emsp"): NATMOD["NETDUINOPLUS2"],
            ("hello_world_int8 and micro_speech_quantized's ops and types", "xtensawin"): ("xtensawin", ESP32_MODELS)}


def test_natmod_md_sizes_are_the_builds():
    """The .mpy sizes docs/natmod.md gives for the builds make test makes,
    within 3% (a module that grew or shrank more: measure the table again)."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "natmod.md").read_text()
    rows = {(m.group(1), m.group(2)): int(m.group(3).replace(",", ""))
            for m in re.finditer(r"^\| (.+?) \| `(\w+)` \|\s*[\d,]*\s*\|\s*([\d,]+)\s*\|", doc, re.M)}
    for key, (arch, models) in DOC_ROWS.items():
        assert key in rows, f"docs/natmod.md has no row {key}"
        built = len(natmod_path(arch, models).read_bytes())
        assert abs(built - rows[key]) <= 0.03 * rows[key], f"{key}: {built:,} B built, docs/natmod.md says {rows[key]:,}"


class ShadowTarget(NatmodTarget):
    """The ESP32_GENERIC firmware on QEMU with tflm.mpy in its ROMFS as
    tflm_mpy.mpy, which each run imports first and enters in sys.modules as
    tflm: the device code's `import tflm` then finds the native module, not
    the firmware's built-in one (MicroPython looks in sys.modules first). No
    stock ESP32 firmware is built here; this one is the same port of
    MicroPython 1.25.0, which loads native code alike."""

    SHADOW = "import sys, tflm_mpy\nsys.modules['tflm'] = tflm_mpy"

    def __init__(self, mpy: bytes) -> None:
        super().__init__(device.target("ESP32_GENERIC"), mpy)

    def run(self, chunks: list[str], files: dict[str, bytes] | None = None, timeout: float = 600) -> str:
        return self.inner.run([self.SHADOW] + chunks, {**(files or {}), "tflm_mpy.mpy": self.mpy}, timeout=timeout)


def test_natmod_on_esp32():
    """tflm.mpy for xtensawin (its objects' sections renamed per file for
    mpy_ld: natmod.mk) on the ESP32's LX6, with the kernels of
    hello_world_int8 and micro_speech_quantized and, as `tflm-host ops` sets
    it for models without a patch-based stage, without stages
    (TFLM_PATCH=0): a build small enough for the executable RAM
    (docs/natmod.md). TFLM's outputs, the built-in module's arena figures;
    the module that ran is the native one; and micro_speech_quantized with
    a stage (prepare --max-extra-macs 0: its depthwise and fully connected
    layers in bands) is refused by that build with NotImplementedError
    naming the setting."""
    target = ShadowTarget(natmod_path("xtensawin", ESP32_MODELS).read_bytes())
    staged = prepare_model(model_path("micro_speech_quantized.tflite").read_bytes(), max_extra_macs=0.0)
    assert patches.METADATA_NAME in load_model(staged).metadata
    out = target.run([DEVICE_PRELUDE + "print(tflm.__name__, tflm.ops)\n"
                      "attempt(lambda: tflm.Interpreter(tflm.Model(load('staged.tflite'))))"],
                     {"staged.tflite": staged}).splitlines()
    assert out == ["tflm_mpy ('DEPTHWISE_CONV_2D', 'FULLY_CONNECTED', 'RESHAPE', 'SOFTMAX')",
                   f"NotImplementedError the model has a patch-based stage ({patches.METADATA_NAME} metadata), which "
                   "this build leaves out (TFLM_PATCH=0): build with what `tflm-host ops` prints for the model"]
    todo = jobs(list(ESP32_MODELS))
    ours = run_batch(target, todo)
    builtin = run_batch(UnixTarget(), todo)
    check_bit_exact(ours, todo, "ESP32_GENERIC (xtensawin tflm.mpy)")
    for job in todo:
        assert ours[job.name].arena == builtin[job.name].arena, job.name
