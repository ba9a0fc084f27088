"""`tflm-host install --port PORT`: tflm.mpy, the module as a native .mpy
file (docs/natmod.md), onto a board running stock MicroPython, for the
architecture the board reports.

The board says what native code it loads in sys.implementation._mpy: the
.mpy version in the low byte, the native ABI's sub-version in bits 8-9 and
its architecture (py/persistentcode.h's MP_NATIVE_ARCH_* number) from bit 10.
A .mpy file says the same of itself in its header: 'M', the version, then a
byte with the sub-version in its low 2 bits and the architecture above them.
The file is chosen for the board (given with --mpy, from a release folder's
mpy/<ARCH>/tflm.mpy, or this checkout's build/natmod/<ARCH>/tflm.mpy, built
on request), checked against what the board loads before a byte is sent,
copied over mpremote's transport into the board's lib folder, checked there
(size and hash) and imported afresh to show it loads.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import os
import re
import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import device, progress

# py/persistentcode.h's MP_NATIVE_ARCH_* numbers, by the names mpy_ld.py and
# `make natmod ARCH=...` give them (0: no native code).
ARCH_NAMES = {1: "x86", 2: "x64", 3: "armv6", 4: "armv6m", 5: "armv7m", 6: "armv7em", 7: "armv7emsp",
              8: "armv7emdp", 9: "xtensa", 10: "xtensawin", 11: "rv32imc"}
ARCH_NUMBERS = {name: number for number, name in ARCH_NAMES.items()}
# A Thumb board (armv6m to armv7emdp) loads native code of any architecture
# from armv6m up to its own (the loader's MPY_FEATURE_ARCH_TEST): ARMv7-M
# runs ARMv6-M code, a single-precision FPU's code runs on a double-precision
# one. Any other board loads its own architecture only.
THUMB_FIRST, THUMB_LAST = ARCH_NUMBERS["armv6m"], ARCH_NUMBERS["armv7emdp"]
MPY_VERSION = 6
MODULE = "tflm.mpy"
# Bytes of the file per raw-REPL execution: as base64 text with binascii,
# as a bytes literal (up to 4 characters a byte) without.
CHUNK_BASE64 = 4096
CHUNK_LITERAL = 512
# errno ENOSPC, as MicroPython's OSError carries it.
ENOSPC = 28


@dataclass(frozen=True)
class MpyFormat:
    """What a board loads, or what a .mpy file is: version, native
    sub-version, native architecture (MP_NATIVE_ARCH_* number)."""

    version: int
    sub_version: int
    arch: int

    @property
    def arch_name(self) -> str:
        return ARCH_NAMES.get(self.arch, f"architecture {self.arch}") if self.arch else "no native code"

    def loads(self, arch: int) -> bool:
        """Whether a board of this format loads native code of `arch`."""
        if THUMB_FIRST <= self.arch <= THUMB_LAST:
            return THUMB_FIRST <= arch <= self.arch
        return arch == self.arch != 0


def board_format(value: int) -> MpyFormat:
    """sys.implementation._mpy of a board, decoded."""
    return MpyFormat(value & 0xFF, (value >> 8) & 3, value >> 10)


def file_format(data: bytes, what: str = MODULE) -> MpyFormat:
    """The header of a .mpy file, decoded; ValueError when it has none."""
    if len(data) < 4 or data[0] != ord("M"):
        raise ValueError(f"{what} is not a .mpy file (it does not start with 'M')")
    return MpyFormat(data[1], data[2] & 3, data[2] >> 2)


def check_file(data: bytes, board: MpyFormat, what: str = MODULE) -> MpyFormat:
    """The file's format if the board loads it; ValueError naming the
    difference otherwise (the board's loader would refuse it on import)."""
    mpy = file_format(data, what)
    if mpy.version != board.version:
        raise ValueError(f"{what} is a version {mpy.version} .mpy file; the board loads version {board.version} "
                         f"(another MicroPython release: tflm.mpy is built for MicroPython 1.25, .mpy version "
                         f"{MPY_VERSION})")
    if not mpy.arch:
        raise ValueError(f"{what} holds no native code: it is not the tflm module (make natmod builds that)")
    if not board.arch:
        raise ValueError(f"the board's firmware loads no native code (sys.implementation._mpy names no "
                         f"architecture): {what} cannot be imported there")
    if not board.loads(mpy.arch):
        raise ValueError(f"{what} is native code for {mpy.arch_name}; the board runs {board.arch_name} code"
                         f"{_thumb_note(board)}: it would not import")
    if mpy.sub_version != board.sub_version:
        raise ValueError(f"{what} uses native ABI {mpy.version}.{mpy.sub_version}; the board's firmware loads "
                         f"{board.version}.{board.sub_version} (another MicroPython release)")
    return mpy


def _thumb_note(board: MpyFormat) -> str:
    if THUMB_FIRST <= board.arch <= THUMB_LAST:
        return f" (and {', '.join(ARCH_NAMES[a] for a in range(THUMB_FIRST, board.arch))} code)" \
            if board.arch > THUMB_FIRST else ""
    return ""


def pick_arch(board: MpyFormat, available: list[str], where: str) -> str:
    """Of the architectures `where` has builds for, the one for this board:
    its own, else the newest of those it loads (ARMv7-M code on an ARMv7E-M
    board without FPU, single-precision code on a double-precision FPU).
    NotImplementedError when none runs there."""
    if not board.arch:
        raise NotImplementedError("the board's firmware loads no native code (sys.implementation._mpy names no "
                                  "architecture; MicroPython's native emitter is not built in): use the firmware "
                                  "with the module built in (make firmware BOARD=...)")
    usable = sorted((ARCH_NUMBERS[a] for a in available if a in ARCH_NUMBERS and board.loads(ARCH_NUMBERS[a])),
                    reverse=True)
    if not usable:
        have = ", ".join(sorted(available, key=lambda a: ARCH_NUMBERS.get(a, 99))) or "none"
        raise NotImplementedError(f"the board runs {board.arch_name} code and {where} has no tflm.mpy it loads "
                                  f"(architectures: {have})")
    return ARCH_NAMES[usable[0]]


def checkout_archs(root: Path) -> list[str]:
    """The architectures `make natmod` builds (the Makefile's NATMOD_ARCHS)."""
    found = re.search(r"^NATMOD_ARCHS\s*:?=\s*(.*)$", (root / "Makefile").read_text(), re.M)
    if not found:
        raise RuntimeError(f"{root / 'Makefile'} sets no NATMOD_ARCHS")
    return found.group(1).split()


def dist_archs(dist: Path) -> list[str]:
    """The architectures a release folder has tflm.mpy for (mpy/<ARCH>/tflm.mpy)."""
    folder = dist / "mpy"
    if not folder.is_dir():
        raise ValueError(f"{dist} is not a release folder: it has no mpy/<ARCH>/{MODULE}")
    return sorted(p.name for p in folder.iterdir() if (p / MODULE).is_file())


# Heap a model and its arena need beside the module, at least: a release
# folder's build with every kernel is taken when the board's free heap holds
# it and this much more, else its core build (mpy/<ARCH>/core/).
ROOM_FOR_A_MODEL = 64 * 1024


def dist_file(dist: Path, arch: str, heap_free: int | None) -> Path:
    """A release folder's tflm.mpy for `arch`: with every kernel, or its
    core ops only when the board's heap would not hold every kernel with
    ROOM_FOR_A_MODEL to spare (and the folder has a core build)."""
    full, core = dist / "mpy" / arch / MODULE, dist / "mpy" / arch / "core" / MODULE
    if heap_free is not None and core.is_file() and full.stat().st_size + ROOM_FOR_A_MODEL > heap_free:
        print(f"the board has {heap_free:,} bytes of heap free: {core} (the core ops), as every kernel's "
              f"{full.stat().st_size:,} bytes would leave less than {ROOM_FOR_A_MODEL:,} for a model")
        return core
    return full


def make_natmod(arch: str, settings: dict[str, str] | None = None) -> tuple[Path, int]:
    """`make natmod ARCH=...` in the checkout with these make settings
    (TFLM_OPS, TFLM_TYPES, TFLM_PATCH: cli.build_settings; none: every
    kernel and type): where tflm.mpy is and its size, as make says last
    ("natmod: PATH (N bytes)"). On failure make's output goes to stderr and
    RuntimeError says so."""
    root = device.checkout("make natmod")
    cmd = ["make", "--no-print-directory", "-C", str(root), "natmod", f"ARCH={arch}"]
    cmd += [f"{k}={v}" for k, v in {"TFLM_OPS": "", "TFLM_TYPES": "", "TFLM_PATCH": "", **(settings or {})}.items()]
    if "TFLM_BUILD" in os.environ:
        cmd.append(f"BUILD={os.environ['TFLM_BUILD']}")
    with progress.step(f"make natmod ARCH={arch}"):
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    built = re.findall(r"^natmod: (\S+) \((\d+) bytes\)$", proc.stdout, re.M)
    if proc.returncode or not built:
        print(proc.stdout[-3000:], file=sys.stderr, end="")
        raise RuntimeError(f"make natmod ARCH={arch} failed (exit {proc.returncode})")
    return Path(built[-1][0]), int(built[-1][1])


@dataclass
class Source:
    """Where tflm.mpy comes from: --mpy FILE, --dist DIR, or the checkout's
    build (built first with `build`, or for `models`' kernels only)."""

    mpy: Path | None = None
    dist: Path | None = None
    build: bool = False
    models: tuple[Path, ...] = ()
    kernels: Callable[[list[Path]], dict[str, str]] | None = None  # models -> make settings (cli.natmod_kernels)

    def file_for(self, board: MpyFormat, heap_free: int | None = None) -> Path:
        """`heap_free`: the board's free heap, which picks a release
        folder's core build when every kernel's would not leave room for a
        model (dist_file)."""
        if self.mpy is not None:
            return self.mpy
        if self.dist is not None:
            arch = pick_arch(board, dist_archs(self.dist), f"the release folder {self.dist}")
            return dist_file(self.dist, arch, heap_free)
        root = device.checkout("install without --mpy or --dist")
        arch = pick_arch(board, checkout_archs(root), "make natmod")
        if self.models:
            path, _ = make_natmod(arch, self.kernels(list(self.models)))
            return path
        path = device.build_dir("install") / "natmod" / arch / MODULE
        if self.build:
            path, _ = make_natmod(arch)
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found: run `make natmod ARCH={arch}` or give --build")
        return path


# Device code: what the board loads, its folders, how it can hash a file.
BOARD_INFO = """
import sys
try:
    import hashlib
    sha = hasattr(hashlib, 'sha256')
except ImportError:
    sha = False
try:
    import binascii
    b64, crc = hasattr(binascii, 'a2b_base64'), hasattr(binascii, 'crc32')
except ImportError:
    b64 = crc = False
import gc
gc.collect()
return (getattr(sys.implementation, '_mpy', None), list(sys.path), sha, b64, crc,
        gc.mem_free() if hasattr(gc, 'mem_free') else None)
"""


@dataclass
class BoardInfo:
    mpy: MpyFormat | None
    path: list[str]
    sha256: bool
    base64: bool
    crc32: bool
    heap_free: int | None = None


def lib_folder(path: list[str]) -> str | None:
    """The folder mip installs into: sys.path's first entry ending in /lib,
    not under /rom (read-only)."""
    return next((p for p in path if p.endswith("/lib") and not p.startswith("/rom")), None)


class Board:
    """The board at a port, in its raw REPL (entered without a reset: a
    filesystem mounted at run time stays). Its code runs in functions, or
    in globals named _tflm_* that it deletes: the REPL's globals are left
    as they were."""

    def __init__(self, port: str) -> None:
        from mpremote.transport import TransportError

        self.port = port
        self.transport = device.connect(port)
        # The raw REPL's flow control: a real board's UART may drop what it
        # cannot take at once, and it spares plain raw mode's pauses.
        self.transport.use_raw_paste = True
        self.transport.serial.timeout = device.RESPONSE_TIMEOUT / 2
        try:
            self.transport.enter_raw_repl(soft_reset=False)
        except TransportError as e:
            self.transport.close()
            raise TimeoutError(f"{port}: no raw REPL: {e}") from None

    def run(self, code: str, timeout: float = 60) -> str:
        return device.exec_chunk(self.transport, code, timeout)

    def call(self, body: str, timeout: float = 60):
        """The value a function of this body returns on the board (a Python literal)."""
        code = "def _tflm_do():\n" + "".join(f"    {line}\n" for line in body.strip("\n").splitlines()) + \
            "try:\n    print(repr(_tflm_do()))\nfinally:\n    del _tflm_do\n"
        out = self.run(code, timeout).strip().splitlines()
        try:
            return ast.literal_eval(out[-1])
        except (IndexError, ValueError, SyntaxError):
            raise RuntimeError(f"unexpected answer from the board: {' '.join(out)[-300:]!r}") from None

    def close(self) -> None:
        """Back to the friendly REPL, its prompt read before the port closes
        (an emulator drops what its board had not read yet)."""
        try:
            self.transport.exit_raw_repl()
            self.transport.read_until(1, b">>> ", timeout=device.RESPONSE_TIMEOUT / 2)
        except Exception:  # a board that stopped answering: the error that stopped it is the one to see
            pass
        finally:
            self.transport.close()

    def info(self) -> BoardInfo:
        mpy, path, sha, b64, crc, heap = self.call(BOARD_INFO)
        return BoardInfo(board_format(mpy) if isinstance(mpy, int) else None, path, sha, b64, crc, heap)

    def makedirs(self, folder: str) -> None:
        """The folder and its parents, where missing."""
        self.call(f"""
import os
p = ''
for d in {folder!r}.strip('/').split('/'):
    p += '/' + d
    try:
        os.stat(p)
    except OSError:
        os.mkdir(p)
""")

    def free_bytes(self, folder: str, name: str) -> int | None:
        """Bytes free in the folder's filesystem, counting those of a file
        `name` there that the copy replaces; None when it does not say."""
        return self.call(f"""
import os
try:
    s = os.statvfs({folder!r})
except (AttributeError, OSError):
    return None
try:
    old = os.stat({folder + '/' + name!r})[6]
except OSError:
    old = 0
return s[0] * s[4] + old
""")

    def write(self, dest: str, data: bytes, base64_ok: bool, tick: Callable[[int], None]) -> None:
        """Writes the file in chunks, one raw-REPL execution each; a
        failure removes what was written (never half a module on a board)."""
        step = CHUNK_BASE64 if base64_ok else CHUNK_LITERAL
        decode = "__import__('binascii').a2b_base64" if base64_ok else "bytes"
        self.run(f"_tflm_f = open({dest!r}, 'wb')\n_tflm_w = lambda b: _tflm_f.write({decode}(b))")
        try:
            for at in range(0, len(data), step):
                part = data[at:at + step]
                self.run(f"_tflm_w({base64.b64encode(part).decode()!r})" if base64_ok else f"_tflm_w({part!r})")
                tick(at + len(part))
            self.run("_tflm_f.close()\ndel _tflm_f, _tflm_w")
        except device.DeviceError as e:
            try:
                self.run(f"try:\n    _tflm_f.close()\nexcept Exception:\n    pass\ndel _tflm_f, _tflm_w\n"
                         f"__import__('os').remove({dest!r})")
            except device.DeviceError:
                pass
            if _errno(str(e)) == ENOSPC:
                raise NoSpace(f"no space left on the board for {dest}: it needs {len(data):,} bytes") from None
            raise

    def digest(self, dest: str, info: BoardInfo) -> tuple[str, str]:
        """(how, value) of the file on the board: its sha256 with hashlib,
        its CRC-32 with binascii, else its bytes' hex read back."""
        if info.sha256:
            how, setup = "sha256", "import hashlib, binascii\nh = hashlib.sha256()\nadd = h.update\n"
            end = "return binascii.hexlify(h.digest()).decode()"
        elif info.crc32:
            how, setup = "crc32", "import binascii\nc = [0]\ndef add(b):\n    c[0] = binascii.crc32(b, c[0])\n"
            end = "return '%08x' % (c[0] & 0xffffffff)"
        else:
            how, setup = "bytes", "r = []\nadd = r.append\n"
            end = "return ''.join('%02x' % x for b in r for x in b)"
        return how, self.call(setup + f"""
b = bytearray(1024)
f = open({dest!r}, 'rb')
try:
    while True:
        n = f.readinto(b)
        if not n:
            break
        add(bytes(b[:n]))
finally:
    f.close()
{end}
""", timeout=120)

    def size(self, path: str) -> int:
        return self.call(f"return __import__('os').stat({path!r})[6]")

    def import_check(self, folder: str) -> tuple[str | None, str, int, str | None]:
        """tflm imported afresh (from `folder`, put on sys.path for the
        check when it is not there) and left imported: (version, where it
        was found, heap its code took, error)."""
        return self.call(IMPORT_CHECK.replace("FOLDER", repr(folder)), timeout=120)


# Device code: tflm imported afresh, and left in sys.modules: MicroPython
# keeps a native module's code until a reset even when the module is dropped
# (py/persistentcode.c tracks it), so a later `import tflm` that did not
# find it there would load a second copy.
IMPORT_CHECK = """
import sys, gc
added = FOLDER not in sys.path
if added:
    sys.path.append(FOLDER)
sys.modules.pop('tflm', None)
gc.collect()
free = gc.mem_free() if hasattr(gc, 'mem_free') else -1
try:
    import tflm
    gc.collect()
    out = (tflm.version, getattr(tflm, '__file__', ''), free - gc.mem_free() if free >= 0 else -1, None)
except Exception as e:
    out = (None, '', -1, type(e).__name__ + ': ' + str(e))
tflm = None
if added:
    sys.path.remove(FOLDER)
gc.collect()
return out
"""


class NoSpace(RuntimeError):
    """The board's filesystem has no room for the file."""


def _errno(text: str) -> int | None:
    found = re.search(r"OSError: (?:\[Errno )?(\d+)", text)
    return int(found.group(1)) if found else None


def host_digest(data: bytes, how: str) -> str:
    if how == "sha256":
        return hashlib.sha256(data).hexdigest()
    if how == "crc32":
        return f"{zlib.crc32(data):08x}"
    return data.hex()


def install(port: str, source: Source, target: str | None = None) -> int:
    """tflm.mpy onto the board at `port`, checked there; prints each step."""
    board = Board(port)
    try:
        info = board.info()
        if info.mpy is None:
            raise NotImplementedError("the board's firmware loads no .mpy files (sys.implementation has no _mpy): "
                                      "use the firmware with the module built in (make firmware BOARD=...)")
        print(f"board: .mpy version {info.mpy.version}.{info.mpy.sub_version}, native code {info.mpy.arch_name}")
        path = source.file_for(info.mpy, info.heap_free)
        data = path.read_bytes()
        mpy = check_file(data, info.mpy, str(path))
        folder = (target or lib_folder(info.path) or "").rstrip("/")
        if not folder:
            raise ValueError(f"the board's sys.path {info.path!r} has no lib folder outside /rom to install into: "
                             f"give --target DIR")
        dest = f"{folder}/{MODULE}"
        print(f"{path} ({len(data):,} bytes, {mpy.arch_name}) -> {dest}")
        board.makedirs(folder)
        free = board.free_bytes(folder, MODULE)
        if free is not None and free < len(data):
            raise NoSpace(f"no space left on the board for {dest}: it needs {len(data):,} bytes, "
                          f"{folder} has {free:,} free")
        with progress.bar(f"copying {MODULE} ({len(data):,} bytes)", len(data)) as tick:
            board.write(dest, data, info.base64, tick)
        size = board.size(dest)
        if size != len(data):
            raise RuntimeError(f"{dest} on the board has {size:,} bytes, not {len(data):,}")
        with progress.step(f"checking {dest} on the board"):
            how, value = board.digest(dest, info)
        if value != host_digest(data, how):
            raise RuntimeError(f"{dest} on the board differs from {path} (its {how} is {value[:64]})")
        print(f"copied and checked ({how if how != 'bytes' else 'read back'})")
        version, found, heap, error = board.import_check(folder)
        if error and error.startswith("MemoryError"):
            raise MemoryError(f"import tflm on the board failed: {error}: its code ({len(data):,} bytes) is loaded "
                              f"into RAM in one block (the heap; on the ESP32 executable RAM, which the heap "
                              f"grows into too); {dest} stays: a reset frees the heap, and --model "
                              f"MODEL... installs a tflm.mpy with only those models' kernels")
        if error:
            raise RuntimeError(f"import tflm on the board failed: {error}")
        if found.rstrip("/") != dest:
            raise RuntimeError(f"import tflm on the board finds {found or 'a built-in module'}, not {dest}: "
                               f"remove it, or install into a folder earlier on sys.path (--target)")
        if folder not in info.path:
            print(f"note: {folder} is not on the board's sys.path: import tflm there needs "
                  f"sys.path.append({folder!r})")
        taken = f", {heap:,} bytes of heap" if heap > 0 else ""
        print(f"import tflm: version {version}, {mpy.arch_name} code{taken}")
    finally:
        board.close()
    return 0
