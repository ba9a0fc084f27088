"""Targets that run MicroPython code with the tflm module: the unix port,
firmware for the project's QEMU boards, and the real Raspberry Pi Pico
firmware on an emulated RP2040 (rp2040js), the boards driven over
MicroPython's raw REPL.

Code is given as a list of chunks. On a board each chunk is one raw-REPL
execution (they share globals), which keeps every compile small enough for a
128 KiB board; files are put in a ROMFS image in the board's flash and show
up under /rom. On unix the chunks run as one script and files sit in a
temporary folder. Either way the code finds its files under the global ROOT.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import romfs

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# The project's QEMU boards (port_boards/<NAME>/mpconfigboard.mk with a QEMU_MACHINE):
# firmware of the qemu port, and PYBV11_QEMU, the stm32 port's pyboard firmware
# changed only where QEMU's STM32F405 falls short (port_boards/PYBV11_QEMU).
QEMU_BOARDS = ("MPS2_AN385", "NETDUINO2", "NETDUINOPLUS2", "MICROBIT", "PYBV11_QEMU")
# Real board firmware on an emulated chip (rp2040js, installed by `make deps`).
PICO_BOARDS = ("RPI_PICO",)
TARGETS = ("unix",) + QEMU_BOARDS + PICO_BOARDS


class DeviceError(RuntimeError):
    """The code raised an exception on the device; the message is its traceback."""


def checkout(what: str) -> Path:
    """The project's checkout, for what only it has: the firmware builds,
    QEMU and emulator runs, board definitions, examples, code generation.
    An installed tflm-host finds it through TFLM_CHECKOUT."""
    root = Path(os.environ.get("TFLM_CHECKOUT", PROJECT_ROOT))
    if (root / "micropython_mod" / "engine" / "version.h").is_file() and (root / "port_boards").is_dir():
        return root
    raise RuntimeError(f"{what} needs the project's checkout (firmware builds, boards, emulators): this "
                       f"tflm-host is installed without one; run it from a clone or set TFLM_CHECKOUT to one")


def build_dir(what: str = "running on a board") -> Path:
    if "TFLM_BUILD" in os.environ:
        return Path(os.environ["TFLM_BUILD"])
    return checkout(what) / "build"


def elf_symbol(path: Path, name: str) -> int:
    """Address of a symbol in a 32-bit little-endian ELF file."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 1:
        raise ValueError(f"{path} is not a 32-bit ELF file")
    shoff, = struct.unpack_from("<I", data, 0x20)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x2E)
    sections = [struct.unpack_from("<IIIIIIIIII", data, shoff + i * shentsize) for i in range(shnum)]
    for sh in sections:
        if sh[1] != 2:  # SHT_SYMTAB
            continue
        strtab = sections[sh[6]]
        for off in range(sh[4], sh[4] + sh[5], 16):
            st_name, st_value = struct.unpack_from("<II", data, off)
            start = strtab[4] + st_name
            end = data.index(b"\0", start)
            if data[start:end] == name.encode():
                return st_value
    raise KeyError(f"{name} not found in {path}")


@dataclass
class Board:
    name: str
    machine: str  # QEMU machine
    firmware: Path
    qemu_args: tuple[str, ...] = ()  # the machine's options (memory sizes)
    heap_size: int = 0  # MicroPython's heap (MICROPY_HEAP_SIZE)

    @property
    def romfs_start(self) -> int:
        return elf_symbol(self.firmware, "_tflm_romfs_start")

    @property
    def romfs_size(self) -> int:
        return elf_symbol(self.firmware, "_tflm_romfs_end") - self.romfs_start


def board(name: str, firmware: Path | None = None) -> Board:
    """A QEMU board as port_boards/ defines it, with its built firmware."""
    mk = checkout(f"board {name}") / "port_boards" / name / "mpconfigboard.mk"
    if not mk.is_file():
        raise ValueError(f"unknown board {name!r} (boards: {', '.join(QEMU_BOARDS)})")
    m = re.search(r"^QEMU_MACHINE\s*=\s*(\S+)", mk.read_text(), re.M)
    if not m:
        raise ValueError(f"{mk} sets no QEMU_MACHINE")
    fw = firmware or build_dir() / name / "firmware.elf"
    if not fw.is_file():
        raise FileNotFoundError(f"{fw} not found: run `make firmware BOARD={name}`")
    text = mk.read_text()
    extra = re.search(r"^TFLM_QEMU_ARGS\s*=\s*(.*)$", text, re.M)
    heap = re.search(r"^MICROPY_HEAP_SIZE\s*=\s*(\d+)", text, re.M)
    # A real board's firmware (PYBV11_QEMU) has its heap between linker symbols.
    heap_size = int(heap.group(1)) if heap else elf_symbol(fw, "_heap_end") - elf_symbol(fw, "_heap_start")
    return Board(name, m.group(1), fw, tuple(extra.group(1).split()) if extra else (), heap_size)


class Target:
    name = ""

    def run(self, chunks: list[str], files: dict[str, bytes] | None = None, timeout: float = 600) -> str:
        raise NotImplementedError


class UnixTarget(Target):
    name = "unix"

    def __init__(self, binary: Path | None = None, heap: str = "16M") -> None:
        self.binary = binary or build_dir() / "unix" / "micropython"
        if not self.binary.is_file():
            raise FileNotFoundError(f"{self.binary} not found: run `make unix`")
        self.heap = heap

    def run(self, chunks: list[str], files: dict[str, bytes] | None = None, timeout: float = 600) -> str:
        with tempfile.TemporaryDirectory(prefix="tflm-") as tmp:
            for rel, data in (files or {}).items():
                path = Path(tmp, rel)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            script = Path(tmp, "_main.py")
            script.write_text(f"ROOT = {tmp!r}\n" + "\n".join(chunks) + "\n")
            proc = subprocess.run([str(self.binary), "-X", f"heapsize={self.heap}", str(script)],
                                  capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise DeviceError((proc.stdout + proc.stderr).strip())
        return proc.stdout


class RawRepl:
    """MicroPython's raw REPL over a byte stream: a file descriptor to read
    (a process's stdout, a socket) and a function that writes."""

    def __init__(self, reader: int, write: Callable[[bytes], None], timeout: float) -> None:
        self.reader = reader
        self._write = write
        self.timeout = timeout
        self.pending = b""

    @classmethod
    def over_process(cls, proc: subprocess.Popen, timeout: float) -> "RawRepl":
        def write(data: bytes) -> None:
            proc.stdin.write(data)
            proc.stdin.flush()

        return cls(proc.stdout.fileno(), write, timeout)

    def read_until(self, token: bytes, timeout: float | None = None, echo=None) -> bytes:
        deadline = time.monotonic() + (timeout or self.timeout)
        fd = self.reader
        shown = 0
        while token not in self.pending:
            if echo is not None:
                # Show complete lines as they arrive.
                end = self.pending.rfind(b"\n") + 1
                if end > shown:
                    echo.write(self.pending[shown:end].decode(errors="replace").replace("\r\n", "\n"))
                    echo.flush()
                    shown = end
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"device did not answer (waiting for {token!r}); got {self.pending[-300:]!r}")
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise DeviceError(f"device exited; output: {self.pending[-500:]!r}")
                self.pending += chunk
        head, _, self.pending = self.pending.partition(token)
        if echo is not None and len(head) > shown:
            echo.write(head[shown:].decode(errors="replace").replace("\r\n", "\n"))
            echo.flush()
        return head

    def write(self, data: bytes) -> None:
        self._write(data)

    def enter(self, wake: bytes = b"") -> None:
        # Bytes sent before the UART is enabled are lost: wait for the prompt.
        # A USB port may have missed the banner: `wake` asks for a new prompt.
        if wake:
            self.write(wake)
        self.read_until(b">>> ", timeout=60)
        self.write(b"\x01")
        self.read_until(b"raw REPL; CTRL-B to exit\r\n>")

    def exec(self, code: str, echo=None) -> str:
        """Runs code; returns its output, raises DeviceError with its traceback.
        With `echo` (a text stream) the output is also written there as it comes."""
        self.write(code.encode() + b"\x04")
        status = self.read_until(b"OK")
        if status.strip():
            raise DeviceError(f"raw REPL refused the code: {status!r}")
        out = self.read_until(b"\x04", echo=echo)
        err = self.read_until(b"\x04")
        self.read_until(b">")
        if err:
            raise DeviceError(err.decode(errors="replace").strip())
        return out.decode(errors="replace").replace("\r\n", "\n")


class QemuTarget(Target):
    def __init__(self, board_name: str, firmware: Path | None = None) -> None:
        self.board = board(board_name, firmware)
        self.name = board_name

    def command(self, image: Path | None) -> list[str]:
        # -icount shift=0: one guest instruction per virtual nanosecond, so
        # timings are repeatable instruction counts.
        cmd = ["qemu-system-arm", "-machine", self.board.machine, *self.board.qemu_args, "-nographic",
               "-monitor", "none", "-serial", "stdio", "-semihosting", "-icount", "shift=0",
               "-kernel", str(self.board.firmware)]
        if image is not None:
            cmd += ["-device", f"loader,file={image},addr={self.board.romfs_start:#x},force-raw=on"]
        return cmd

    def run(self, chunks: list[str], files: dict[str, bytes] | None = None, timeout: float = 600) -> str:
        with tempfile.TemporaryDirectory(prefix="tflm-qemu-") as tmp:
            image = None
            if files:
                data = romfs.build_image(files)
                if len(data) > self.board.romfs_size:
                    raise ValueError(f"ROMFS image of {len(data)} bytes exceeds the {self.board.name} "
                                     f"ROMFS region of {self.board.romfs_size} bytes")
                image = Path(tmp, "romfs.img")
                image.write_bytes(data)
            return run_qemu(self.command(image), chunks, timeout)


class QemuServer:
    """A QEMU board whose serial port is a pseudo-terminal, for tools that
    talk to a device themselves: `mpremote connect <url>`. Use as a context
    manager; QEMU stops on exit."""

    def __init__(self, board_name: str, image: bytes | None = None, firmware: Path | None = None) -> None:
        self.board = board(board_name, firmware)
        self.image = image
        self.url = ""
        self.proc: subprocess.Popen | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None

    def command(self) -> list[str]:
        cmd = ["qemu-system-arm", "-machine", self.board.machine, *self.board.qemu_args, "-nographic",
               "-monitor", "none", "-serial", "pty", "-semihosting", "-kernel", str(self.board.firmware)]
        if self.image is not None:
            assert self._tmp is not None
            path = Path(self._tmp.name, "romfs.img")
            path.write_bytes(self.image)
            cmd += ["-device", f"loader,file={path},addr={self.board.romfs_start:#x},force-raw=on"]
        return cmd

    def __enter__(self) -> "QemuServer":
        self._tmp = tempfile.TemporaryDirectory(prefix="tflm-qemu-")
        log = Path(self._tmp.name, "qemu.log")
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        # QEMU names the terminal: "char device redirected to /dev/pts/N (label serial0)".
        deadline = time.monotonic() + 30
        while True:
            m = re.search(r"(/dev/\S+) \(label", log.read_text(errors="replace"))
            if m:
                self.url = m.group(1)
                return self
            if self.proc.poll() is not None or time.monotonic() > deadline:
                text = log.read_text(errors="replace")
                self.__exit__(None, None, None)
                raise DeviceError(f"QEMU did not start: {text[-500:]}")
            time.sleep(0.05)

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
            self.proc = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


# -- the Raspberry Pi Pico on an emulated RP2040 ---------------------------------

PICO_FLASH_BASE = 0x10000000
PICO_EMULATOR = Path(__file__).resolve().parent / "pico" / "emulator.cjs"
PICO_BOOTROM = "rp2040-bootrom-b1.bin"

# Device code that reads the emulator's counters since boot: a marker written
# to the WATCHDOG's SCRATCH0 makes the emulator latch the count into
# SCRATCH1 and SCRATCH2 (host_tools/tflm_host/pico/emulator.cjs).
PICO_COUNTERS = """
import machine
def _pico_count(kind):
    machine.mem32[0x4005800c] = kind
    return (machine.mem32[0x40058010] & 0xffffffff) | (machine.mem32[0x40058014] & 0xffffffff) << 32
def pico_cycles():
    return _pico_count(1)
def pico_instructions():
    return _pico_count(2)
"""


def emulator_dir() -> Path:
    """rp2040js and the RP2040 bootrom, installed by `make deps`."""
    return build_dir() / "rp2040js"


@dataclass
class PicoBoard:
    """The RPI_PICO firmware as built by `make firmware BOARD=RPI_PICO`."""

    name: str
    firmware: Path  # firmware.uf2
    elf: Path
    romfs_start: int  # flash offset of the ROMFS region
    romfs_size: int

    @property
    def heap_size(self) -> int:
        # The rp2 port's linker script gives the MicroPython heap all RAM above the C heap.
        return elf_symbol(self.elf, "__GcHeapEnd") - elf_symbol(self.elf, "__GcHeapStart")


def pico_board(firmware: Path | None = None) -> PicoBoard:
    from .flash import BOARDS  # the ROMFS region of port_boards/RPI_PICO (tests/test_flash.py checks it)

    uf2 = firmware or build_dir() / "RPI_PICO" / "firmware.uf2"
    if not uf2.is_file():
        raise FileNotFoundError(f"{uf2} not found: run `make firmware BOARD=RPI_PICO`")
    romfs_region = BOARDS["RPI_PICO"]
    return PicoBoard("RPI_PICO", uf2, uf2.with_suffix(".elf"), romfs_region.romfs_addr - PICO_FLASH_BASE,
                     romfs_region.romfs_size)


class PicoServer:
    """The real RPI_PICO firmware on rp2040js, its USB serial port on a TCP
    socket at `url` (socket://127.0.0.1:PORT) for any raw-REPL client:
    `mpremote connect socket://...`. A ROMFS image goes into the emulated
    flash at the board's ROMFS offset (the emulator's flash cannot be
    written by the firmware). Use as a context manager; the emulator stops
    on exit."""

    def __init__(self, image: bytes | None = None, firmware: Path | None = None) -> None:
        self.board = pico_board(firmware)
        self.image = image
        self.url = ""
        self.address: tuple[str, int] = ("", 0)
        self.proc: subprocess.Popen | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None

    def command(self) -> list[str]:
        node = shutil.which("node")
        modules = emulator_dir() / "node_modules"
        bootrom = emulator_dir() / PICO_BOOTROM
        if not node or not (modules / "rp2040js").is_dir() or not bootrom.is_file():
            raise FileNotFoundError(f"the RP2040 emulator is not installed in {emulator_dir()}: run `make deps`")
        cmd = [node, str(PICO_EMULATOR), "--bootrom", str(bootrom), "--firmware", str(self.board.firmware)]
        if self.image is not None:
            if len(self.image) > self.board.romfs_size:
                raise ValueError(f"ROMFS image of {len(self.image)} bytes exceeds the RPI_PICO "
                                 f"ROMFS region of {self.board.romfs_size} bytes")
            assert self._tmp is not None
            path = Path(self._tmp.name, "romfs.img")
            path.write_bytes(self.image)
            cmd += ["--image", f"{path}@{self.board.romfs_start:#x}"]
        return cmd

    def __enter__(self) -> "PicoServer":
        self._tmp = tempfile.TemporaryDirectory(prefix="tflm-pico-")
        try:
            cmd = self.command()
        except Exception:
            self.__exit__(None, None, None)
            raise
        env = dict(os.environ, NODE_PATH=str(emulator_dir() / "node_modules"))
        log = open(Path(self._tmp.name, "emulator.log"), "wb")
        # stdin stays open: the emulator exits when it closes (this process is gone).
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env,
                                     start_new_session=True)
        log.close()
        ready, _, _ = select.select([self.proc.stdout], [], [], 30)
        line = self.proc.stdout.readline().decode(errors="replace") if ready else ""
        m = re.match(r"serial (socket://([\d.]+):(\d+))", line)
        if not m:
            text = Path(self._tmp.name, "emulator.log").read_text(errors="replace")
            self.__exit__(None, None, None)
            raise DeviceError(f"the RP2040 emulator did not start: {line}{text[-500:]}")
        self.url = m.group(1)
        self.address = (m.group(2), int(m.group(3)))
        return self

    def log(self) -> str:
        """What the emulator reported (its errors) so far."""
        return Path(self._tmp.name, "emulator.log").read_text(errors="replace") if self._tmp else ""

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
            for f in (self.proc.stdin, self.proc.stdout):
                if f:
                    f.close()
            self.proc = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


class PicoTarget(Target):
    """The real RPI_PICO firmware (its .uf2) on rp2040js, driven over the
    raw REPL on its emulated USB serial port."""

    def __init__(self, firmware: Path | None = None) -> None:
        self.board = pico_board(firmware)
        self.name = self.board.name

    def run(self, chunks: list[str], files: dict[str, bytes] | None = None, timeout: float = 600,
            echo=None) -> str:
        image = romfs.build_image(files) if files else None
        with PicoServer(image, self.board.firmware) as server:
            with socket.create_connection(server.address, timeout=30) as sock:
                sock.settimeout(None)
                repl = RawRepl(sock.fileno(), sock.sendall, timeout)
                try:
                    # The banner went out before USB was up: ask for a prompt.
                    return run_chunks(repl, chunks, echo, wake=b"\r\n")
                except (TimeoutError, DeviceError) as e:
                    if server.log().strip():
                        raise type(e)(f"{e}\nemulator: {server.log()[-1000:]}") from e
                    raise


def run_qemu(cmd: list[str], chunks: list[str], timeout: float, echo=None) -> str:
    """Boots QEMU, runs each chunk in the raw REPL, and always stops QEMU."""
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        return run_chunks(RawRepl.over_process(proc, timeout), chunks, echo)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        for f in (proc.stdin, proc.stdout):
            if f:
                f.close()


def run_chunks(repl: RawRepl, chunks: list[str], echo=None, wake: bytes = b"") -> str:
    """Enters the raw REPL and runs each chunk, files under ROOT = '/rom'."""
    repl.enter(wake)
    out = [repl.exec("ROOT = '/rom'")]
    for chunk in chunks:
        out.append(repl.exec(chunk, echo))
    return "".join(out)


def target(name: str, firmware: Path | None = None) -> Target:
    if name == "unix":
        return UnixTarget(firmware)
    if name in PICO_BOARDS:
        return PicoTarget(firmware)
    return QemuTarget(name, firmware)
