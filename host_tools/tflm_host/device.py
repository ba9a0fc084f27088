"""Targets that run MicroPython code with the tflm module: the unix port,
firmware for the project's QEMU boards, and the real Raspberry Pi Pico
firmware on an emulated RP2040 (rp2040js). The boards are driven through
mpremote's serial transport and raw REPL; QEMU's serial port and the
emulated Pico's USB serial port are TCP sockets (socket://127.0.0.1:PORT).

Code is given as a list of chunks. On a board each chunk is one raw-REPL
execution (they share globals), which keeps every compile small enough for a
128 KiB board; files are put in a ROMFS image in the board's flash (loaded
by the emulator at boot, much faster than copying over the serial port)
and show up under /rom. On unix the chunks run as one script and files sit in a
temporary folder. Either way the code finds its files under the global ROOT.
"""

from __future__ import annotations

import atexit
import bisect
import functools
import os
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import board_info, romfs

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# The boards by what runs them (port_boards/<BOARD>/board.json's emulator).
# On QEMU's Arm machines (its mpconfigboard.mk's QEMU_MACHINE): firmware of the
# qemu port, and PYBV11_QEMU, the stm32 port's pyboard firmware changed only
# where QEMU's STM32F405 falls short (port_boards/PYBV11_QEMU).
QEMU_BOARDS = board_info.names(emulator="qemu-arm")
# Real board firmware on an emulated chip (rp2040js, installed by `make deps`).
PICO_BOARDS = board_info.names(emulator="rp2040js")
# The real ESP32_GENERIC firmware (its whole flash image) on Espressif's QEMU
# esp32 machine (qemu-system-xtensa, from ../shared/sdk/esp32).
ESP32_BOARDS = board_info.names(emulator="qemu-esp32")
TARGETS = ("unix",) + QEMU_BOARDS + PICO_BOARDS + ESP32_BOARDS
# The boards `tflm-host qemu` and `demo` emulate with their serial port on a socket.
EMULATED_BOARDS = QEMU_BOARDS + PICO_BOARDS


class DeviceError(RuntimeError):
    """The code raised an exception on the device; the message is its traceback."""


def is_checkout(root: Path) -> bool:
    return (root / "micropython_mod" / "engine" / "version.h").is_file() and (root / "port_boards").is_dir()


def checkout(what: str) -> Path:
    """The project's checkout, for what only it has: the firmware builds,
    QEMU and emulator runs, board definitions, examples, code generation.
    An installed tflm-host finds it through TFLM_CHECKOUT: PROJECT_ROOT is
    a checkout only when this package runs from one (an editable install,
    PYTHONPATH=host_tools), so nothing but this function reads it."""
    root = Path(os.environ.get("TFLM_CHECKOUT", PROJECT_ROOT))
    if is_checkout(root):
        return root
    raise RuntimeError(f"{what} needs the project's checkout (firmware builds, boards, emulators): this "
                       f"tflm-host is installed without one; run it from a clone or set TFLM_CHECKOUT to one")


def build_dir(what: str = "running on a board") -> Path:
    if "TFLM_BUILD" in os.environ:
        return Path(os.environ["TFLM_BUILD"])
    return checkout(what) / "build"


def elf_symbol(path: Path, name: str) -> int:
    """Address of a symbol in a 32-bit little-endian ELF file."""
    st = path.stat()
    return _elf_symbol(path, st.st_mtime_ns, st.st_size, name)


@functools.lru_cache(maxsize=64)
def _elf_symbol(path: Path, mtime_ns: int, size: int, name: str) -> int:
    # Cached by the file's time and size: every board run asks for its ROMFS region.
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


def elf_function_at(path: Path, address: int) -> str:
    """The function of a 32-bit ELF file holding `address`, as 'name+0x12'
    ('0x...' when none does): where a board was stopped."""
    address &= ~1  # Thumb code addresses carry bit 0
    best = elf_function_finder(path)(address)
    return f"{best[0]}+{address - best[1]:#x}" if best else f"{address:#010x}"


def elf_function_finder(path: Path) -> Callable[[int], tuple[str, int] | None]:
    """A lookup of the function of a 32-bit ELF file holding an address
    (Thumb's bit 0 cleared): its (name, address), or None; of functions
    that overlap (libgcc's entry points into one body), the one starting
    last before it. A symbol of size 0 covers its first halfword."""
    funcs = sorted(_elf_functions(path, path.stat().st_mtime_ns), key=lambda f: f[1])
    starts = [f[1] for f in funcs]

    def find(address: int) -> tuple[str, int] | None:
        for i in range(bisect.bisect_right(starts, address) - 1, -1, -1):
            if address < funcs[i][1] + max(funcs[i][2], 2):
                return funcs[i][0], funcs[i][1]
        return None
    return find


@functools.lru_cache(maxsize=8)
def _elf_functions(path: Path, mtime_ns: int) -> list[tuple[str, int, int]]:
    data = path.read_bytes()
    shoff, = struct.unpack_from("<I", data, 0x20)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x2E)
    sections = [struct.unpack_from("<IIIIIIIIII", data, shoff + i * shentsize) for i in range(shnum)]
    out = []
    for sh in sections:
        if sh[1] != 2:  # SHT_SYMTAB
            continue
        strtab = sections[sh[6]]
        for off in range(sh[4], sh[4] + sh[5], 16):
            st_name, st_value, st_size, st_info = struct.unpack_from("<IIIB", data, off)
            if st_info & 0xF == 2:  # STT_FUNC
                start = strtab[4] + st_name
                out.append((data[start:data.index(b"\0", start)].decode(errors="replace"), st_value & ~1, st_size))
    return out


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
    # Device code that binds `_count` to one of the board's own counters, by
    # what it counts (bench speed); a board has figures only of these kinds.
    # `_count()` returns the count's low 30 bits, a small int: a reader of the
    # whole count makes a long int (MicroPython's mpz ints do, whatever the
    # value), so each reading would allocate on the GC heap, at a cost that
    # follows the heap's state and that no reading next to it cancels. Spans
    # of its readings are taken modulo 2^30, `(b - a) & 0x3fffffff`: exact
    # while shorter than 2^30 counts (over a second at the boards' clocks).
    counters: dict[str, str] = {}
    # What times the board's cycles when it counts them itself ("cycles" in
    # counters), and how its counters count, for the reports.
    timing = ""
    counted_by = ""

    def run(self, chunks: list[str], files: dict[str, bytes] | None = None, timeout: float = 600) -> str:
        raise NotImplementedError


class UnixTarget(Target):
    name = "unix"

    def __init__(self, binary: Path | None = None, heap: str = "16M") -> None:
        # TFLM_UNIX_BINARY: another build of the port (make unix-asan's).
        env = os.environ.get("TFLM_UNIX_BINARY")
        self.binary = binary or (Path(env) if env else build_dir() / "unix" / "micropython")
        if not self.binary.is_file():
            if binary is not None or env:  # the caller's path (--firmware, TFLM_UNIX_BINARY)
                raise FileNotFoundError(f"{self.binary} not found" + ("" if binary else " (TFLM_UNIX_BINARY)"))
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


# -- talking to a board: mpremote's serial transport and raw REPL -----------------

class _BufferedPort:
    """A pyserial port that reads all the bytes waiting at once and hands
    them out from memory. mpremote reads a board's output a byte per call,
    each call a select() and a read() on the port: 25-30 us a byte, about
    five times what reading the suite's output took with bulk reads (tests
    print kilobytes of hex). Everything else passes through to the port."""

    def __init__(self, port) -> None:
        object.__setattr__(self, "_port", port)
        object.__setattr__(self, "_buf", b"")
        object.__setattr__(self, "_pos", 0)

    def _fill(self) -> bool:
        port = self._port
        first = port.read(1)  # blocks up to the port's timeout
        if not first:
            return False
        rest = b""
        if port.in_waiting > 0:
            # With no timeout a read takes what is there, at most a buffer
            # (in_waiting says only 0 or 1 for a socket).
            timeout = port.timeout
            port.timeout = 0
            try:
                rest = port.read(1 << 16)
            finally:
                port.timeout = timeout
        object.__setattr__(self, "_buf", self._buf[self._pos:] + first + rest)
        object.__setattr__(self, "_pos", 0)
        return True

    def read(self, size: int = 1) -> bytes:
        while len(self._buf) - self._pos < size and self._fill():
            pass
        out = self._buf[self._pos:self._pos + size]
        object.__setattr__(self, "_pos", self._pos + len(out))
        return out

    def inWaiting(self) -> int:
        buffered = len(self._buf) - self._pos
        return buffered if buffered else self._port.in_waiting

    @property
    def in_waiting(self) -> int:
        return self.inWaiting()

    def close(self) -> None:
        # pyserial's socket port sleeps 0.3 s after closing "for quick
        # reconnects": a QEMU board is stopped or reconnected to through its
        # listening socket (which queues connections), so close the socket alone.
        sock = getattr(self._port, "_socket", None)
        if sock is None:
            self._port.close()
            return
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()
        self._port._socket = None
        self._port.is_open = False

    def __getattr__(self, name: str):
        return getattr(self._port, name)

    def __setattr__(self, name: str, value) -> None:
        setattr(self._port, name, value)


def check_port(port: str) -> None:
    """A serial port given as a device path must exist: say so, with the
    ports this computer has, instead of the serial library's guess ("it may
    be in use by another program")."""
    if "://" in port or os.path.exists(port) or not (port.startswith("/dev/") or port.upper().startswith("COM")):
        return
    try:
        from serial.tools import list_ports

        found = sorted(p.device for p in list_ports.comports())
    except ImportError:
        found = []
    have = f"serial ports here: {', '.join(found)}" if found else "no serial port is here"
    raise DeviceError(f"no device at {port}: is the board plugged in and its USB cable a data cable? ({have})")


def connect(url: str) -> "SerialTransport":
    """mpremote's transport to the board at `url`: a serial device, a
    pseudo-terminal, or socket://host:port (the QEMU boards, the emulated Pico)."""
    # Imported here: the firmware builds import this module with the
    # system's Python, which need not have mpremote.
    from mpremote.transport import TransportError
    from mpremote.transport_serial import SerialTransport

    check_port(url)
    try:
        # A read timeout lets mpremote's waits see their own deadlines on a
        # pseudo-terminal, where it reads without polling first (exec_chunk
        # lengthens it: raw paste's flow control must wait for a busy board).
        transport = SerialTransport(url, timeout=0.5)
    except TransportError as e:
        raise DeviceError(f"cannot open {url}: {e}") from None
    transport.serial = _BufferedPort(transport.serial)
    # mpremote polls a port every 10 ms unless it is a pseudo-terminal, which
    # it reads directly: read this one directly too (its reads wait for data
    # up to the port's timeout), so an answer is taken as it comes.
    transport.is_pty = True
    # The emulators take input at their own pace (QEMU's socket holds it
    # until the board's UART reads it, rp2040js paces its USB FIFO): raw
    # paste's acknowledgement per window only adds round trips (8 KB of code:
    # 1.13 s against 0.87 s on the emulated Pico). mpremote's plain raw REPL.
    transport.use_raw_paste = False
    return transport


def wait_for_prompt(transport: "SerialTransport", timeout: float = 60, listen: float = 0) -> None:
    """Waits for the friendly REPL's prompt: first `listen` seconds for the
    one after the banner (a board booting as this connects); then, as what a
    board printed before anyone listened is lost, a line break asks for a new
    prompt every second until one comes. (Bytes sent while the pyboard's
    firmware sets up its UART can leave it silent for good: QEMU boards are
    listened to first.)"""
    deadline = time.monotonic() + timeout
    if listen and transport.read_until(1, b">>> ", timeout=listen, timeout_overall=listen).endswith(b">>> "):
        return
    while True:
        transport.serial.write(b"\r\n")
        if transport.read_until(1, b">>> ", timeout=1).endswith(b">>> "):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"no REPL prompt from {transport.device_name} in {timeout:.0f} s")


# What a board prints when it crashes, wherever it is in its output: the qemu
# port's fault handler, the stm32 port's (which then resets the chip), a
# fatal error, and a boot banner in the middle of a run (a reset).
CRASH_MARKERS = (b" exception caught:", b"\nHardFault\r\n", b"FATAL ERROR", b'Type "help()" for more information.',
                 b"Guru Meditation Error", b"abort() was called")
# Seconds a board has to show its raw REPL prompt and accept code.
RESPONSE_TIMEOUT = 20
# Seconds of output kept after a crash marker (a fault handler's register dump).
CRASH_GRACE = 0.5


class BoardCrashed(DeviceError):
    """The board faulted or reset while running code; the message holds
    what it printed last."""


class _Output:
    """Collects a chunk's output and, with `echo`, writes it there as it
    comes, line by line; notes the time a crash marker appears in it."""

    def __init__(self, echo=None) -> None:
        self.data = bytearray()
        self.echo = echo
        self.shown = 0
        self.crashed_at = 0.0
        self.crash_pos = 0

    def add(self, byte: bytes) -> None:
        self.data += byte
        if self.echo is not None and byte == b"\n":
            self.echo.write(self.data[self.shown:].decode(errors="replace").replace("\r\n", "\n"))
            self.echo.flush()
            self.shown = len(self.data)
        if not self.crashed_at:
            for marker in CRASH_MARKERS:
                if self.data.endswith(marker):
                    self.crashed_at = time.monotonic()
                    self.crash_pos = len(self.data) - len(marker)

    def text(self) -> str:
        return self.data.decode(errors="replace").replace("\r\n", "\n")

    def tail(self, n: int = 600) -> str:
        return bytes(self.data[-n:]).decode(errors="replace").replace("\r\n", "\n")

    def crash(self) -> str:
        """What the board printed around its crash: a few lines before the
        marker, then the fault handler's dump."""
        start = self.data.rfind(b"\n", 0, max(0, self.crash_pos - 300)) + 1
        return bytes(self.data[start:self.crash_pos + 1500]).decode(errors="replace").replace("\r\n", "\n")


def _follow(transport: "SerialTransport", silent: float, out: _Output, err: _Output) -> None:
    """Reads a raw-REPL execution's output up to its end marker (0x04), then
    its error output up to the second. Raises TimeoutError when the board
    stays silent for `silent` seconds, BoardCrashed soon after it prints a
    crash marker."""
    port = transport.serial
    port.timeout = 0.25  # each read waits at most this long, so the deadlines are seen
    parts = (out, err)
    part = 0
    last = time.monotonic()
    while part < 2:
        byte = port.read(1)
        now = time.monotonic()
        if byte:
            last = now
            if byte == b"\x04":
                part += 1
            else:
                parts[part].add(byte)
        crashed = out if out.crashed_at else err if err.crashed_at else None
        if crashed and now - crashed.crashed_at > CRASH_GRACE:
            raise BoardCrashed(f"{transport.device_name}: the board crashed; it printed:\n{crashed.crash().strip()}")
        if now - last > silent:
            raise TimeoutError(f"{transport.device_name}: silent for {silent:.0f} s; it printed last:\n"
                               f"{(out.tail() + err.tail()).strip() or '(nothing)'}")


def exec_chunk(transport: "SerialTransport", code: str, timeout: float, echo=None) -> str:
    """Runs code in mpremote's raw REPL; returns its output, raises
    DeviceError with its traceback. `timeout`: seconds the board may stay
    silent while it runs; it must show its prompt and accept the code within
    RESPONSE_TIMEOUT seconds. A board that crashes raises BoardCrashed."""
    from mpremote.transport import TransportError

    out, err = _Output(echo), _Output()
    # Each read of the prompt and of "OK" waits up to the port's timeout.
    transport.serial.timeout = RESPONSE_TIMEOUT / 2
    try:
        transport.exec_raw_no_follow(code)
    except TransportError as e:
        raise TimeoutError(f"{transport.device_name}: {e}") from None
    finally:
        transport.serial.timeout = 0.5
    try:
        _follow(transport, timeout, out, err)
    finally:
        transport.serial.timeout = 0.5
    if err.data:
        raise DeviceError(err.text().strip())
    return out.text()


def run_chunks(url: str, chunks: list[str], timeout: float, echo=None, raw_paste: bool = False) -> str:
    """Connects to the board at `url` and runs each chunk (see run_on);
    `raw_paste`: with the raw REPL's flow control (a board that drops
    input it cannot take at once, as the ESP32's UART does)."""
    transport = connect(url)
    transport.use_raw_paste = raw_paste
    try:
        wait_for_prompt(transport)
        return run_on(transport, chunks, timeout, echo)
    finally:
        transport.close()


def run_on(transport: "SerialTransport", chunks: list[str], timeout: float, echo=None) -> str:
    """Enters the raw REPL of a board at its prompt and runs each chunk
    (they share globals), files under ROOT = '/rom'."""
    transport.enter_raw_repl(soft_reset=False)
    out = [exec_chunk(transport, "ROOT = '/rom'", timeout)]
    for chunk in chunks:
        out.append(exec_chunk(transport, chunk, timeout, echo))
    return "".join(out)


# -- emulators as child processes -------------------------------------------------

_children: set[subprocess.Popen] = set()


def _die_with_parent() -> None:
    # Linux: the child gets SIGKILL when this process dies, however it dies
    # (a test run killed by a timeout must not leave an emulator spinning).
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def start_child(cmd: list[str], **kwargs) -> subprocess.Popen:
    """Starts an emulator in a session of its own (a Ctrl-C at the terminal
    reaches this process, which stops it), killed when this process exits or
    is terminated."""
    if not _children:
        _install_cleanup()
    proc = subprocess.Popen(cmd, start_new_session=True,
                            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None, **kwargs)
    _children.add(proc)
    return proc


def stop_child(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    _children.discard(proc)


_cleanup_installed = False


def _install_cleanup() -> None:
    global _cleanup_installed
    if _cleanup_installed:
        return
    _cleanup_installed = True
    atexit.register(lambda: [stop_child(p) for p in list(_children)])
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        def on_term(signum, frame):
            for p in list(_children):
                stop_child(p)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
        signal.signal(signal.SIGTERM, on_term)


class QemuTarget(Target):
    # QEMU's -icount (cycles come from the estimator, a plugin: bench.py, cycles.py).
    counters = {"instructions": "import qemuboard\n_count = qemuboard.icount_low\n"}
    counted_by = "QEMU (`-icount shift=0`, `qemuboard.icount_low()`)"

    def __init__(self, board_name: str, firmware: Path | None = None) -> None:
        self.board = board(board_name, firmware)
        self.name = board_name

    def run(self, chunks: list[str], files: dict[str, bytes] | None = None, timeout: float = 600,
            echo=None, plugin: str | None = None) -> str:
        """`plugin`: a QEMU TCG plugin with its arguments (-plugin's value),
        e.g. the cycle estimator (cycles.py)."""
        image = romfs.build_image(files) if files else None
        with QemuServer(self.name, image, self.board.firmware, keep_connection=True, plugin=plugin) as server:
            return server.run(chunks, timeout, echo)


def romfs_file(image: bytes, board: str, region: int, tmp: tempfile.TemporaryDirectory | None) -> Path:
    """The ROMFS image as a file an emulator loads, checked against the board's region."""
    if len(image) > region:
        raise ValueError(f"ROMFS image of {len(image)} bytes exceeds the {board} ROMFS region of {region} bytes")
    assert tmp is not None
    path = Path(tmp.name, "romfs.img")
    path.write_bytes(image)
    return path


def free_tcp_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class QemuServer:
    """A QEMU board with its serial port on a TCP socket at `url`
    (socket://127.0.0.1:PORT), for mpremote (`mpremote connect <url>`) and
    `run()` here. A ROMFS image goes into the board's ROMFS region; `kernel`
    boots a flash image instead of the firmware. `-icount shift=0` (one
    instruction per virtual nanosecond) makes qemuboard.icount() an
    instruction count. Use as a context manager; QEMU stops on exit.

    QEMU waits for a first connection before it starts the board, which
    this class makes, so nothing the board prints is lost; it waits for
    the board's prompt, then keeps the connection for run()
    (`keep_connection`) or closes it for other clients (what the board
    prints while none is connected is dropped). A socket rather than a
    pseudo-terminal: QEMU notices a client on its pseudo-terminal by
    polling once a second, which stalls the first exchange by up to that."""

    def __init__(self, board_name: str, image: bytes | None = None, firmware: Path | None = None,
                 kernel: Path | None = None, icount: bool = True, keep_connection: bool = False,
                 plugin: str | None = None) -> None:
        self.board = board(board_name, firmware)
        self.plugin = plugin
        self.image = image
        self.kernel = kernel or self.board.firmware
        self.icount = icount
        self.keep_connection = keep_connection
        self.url = ""
        self.transport = None  # mpremote's SerialTransport, with keep_connection
        self.proc: subprocess.Popen | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None

    def command(self, port: int) -> list[str]:
        # The monitor (on a socket of its own) tells where a silent board is stopped.
        cmd = ["qemu-system-arm", "-machine", self.board.machine, *self.board.qemu_args, "-nographic",
               "-monitor", f"unix:{self._monitor_path()},server=on,wait=off",
               "-serial", f"tcp:127.0.0.1:{port},server=on,wait=on,nodelay=on", "-semihosting",
               "-kernel", str(self.kernel)]
        if self.icount:
            cmd += ["-icount", "shift=0"]
        if self.plugin:
            cmd += ["-plugin", self.plugin]
        if self.image is not None:
            path = romfs_file(self.image, self.board.name, self.board.romfs_size, self._tmp)
            cmd += ["-device", f"loader,file={path},addr={self.board.romfs_start:#x},force-raw=on"]
        return cmd

    def __enter__(self) -> "QemuServer":
        self._tmp = tempfile.TemporaryDirectory(prefix="tflm-qemu-")
        try:
            for boot in range(2):
                # A port another process takes between our choice and QEMU's bind: try another.
                for attempt in range(3):
                    if self._start(free_tcp_port()):
                        break
                else:
                    raise DeviceError(f"QEMU did not start: {self.log()[-500:]}")
                # The board boots as this connection opens: its banner and
                # prompt come. Nothing is sent while it boots (a byte that
                # reaches the pyboard's UART as the port sets it up can leave
                # it deaf), however slowly a loaded machine runs it.
                try:
                    wait_for_prompt(self.transport, timeout=60, listen=30)
                    break
                except TimeoutError as e:
                    if boot:
                        raise TimeoutError(f"{self.board.name}: {e}; CPU: {self.where()}") from None
                    # Once more, from power-on.
                    self.transport.close()
                    self.transport = None
                    stop_child(self.proc)
                    self.proc = None
            if not self.keep_connection:
                self.transport.close()
                self.transport = None
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start(self, port: int) -> bool:
        """Starts QEMU listening on `port` and connects to it; False when
        QEMU exits first (the port was taken)."""
        cmd = self.command(port)
        with open(Path(self._tmp.name, "qemu.log"), "wb") as out:
            self.proc = start_child(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        self.url = f"socket://127.0.0.1:{port}"
        # Connect only once QEMU says it listens: connecting in a loop before
        # that can connect a socket to itself (a port of the range outgoing
        # connections take, with no listener yet: TCP's simultaneous open).
        deadline = time.monotonic() + 30
        while "QEMU waiting for connection" not in self.log():
            if self.proc.poll() is not None:
                self.proc = None
                return False
            if time.monotonic() > deadline:
                raise DeviceError(f"QEMU did not listen on port {port}: {self.log()[-500:]}")
            time.sleep(0.005)
        # QEMU starts the board when this first client connects.
        self.transport = connect(self.url)
        return True

    def log(self) -> str:
        """What QEMU printed (its errors) so far."""
        path = Path(self._tmp.name, "qemu.log") if self._tmp else None
        return path.read_text(errors="replace") if path and path.is_file() else ""

    def _monitor_path(self) -> str:
        return str(Path(self._tmp.name, "monitor.sock"))

    def monitor(self, command: str, timeout: float = 5) -> str:
        """The answer of QEMU's monitor to `command` ('info registers')."""
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(timeout)
            sock.connect(self._monitor_path())
            answer = b""
            for send in (None, command):
                if send:
                    sock.sendall(send.encode() + b"\n")
                answer = b""
                while not answer.endswith(b"(qemu) "):
                    more = sock.recv(4096)
                    if not more:
                        break
                    answer += more
        # The monitor echoes the command with terminal edits: keep what follows it.
        text = answer.decode(errors="replace")
        return text.split("\n", 1)[1].rsplit("(qemu)", 1)[0] if "\n" in text else text

    def where(self) -> str:
        """Where the board's CPU is: its PC as a function of the firmware,
        and the exception it is handling, if any (a fault handler's own
        dump, in the board's output, says where the fault was raised)."""
        regs = dict((k, int(v, 16)) for k, v in re.findall(r"\b(R15|XPSR)=([0-9a-fA-F]{8})", self.monitor("info registers")))
        if "R15" not in regs:
            return "(no registers from QEMU's monitor)"
        where = f"pc {regs['R15']:#010x} in {elf_function_at(self.board.firmware, regs['R15'])}"
        exception = regs.get("XPSR", 0) & 0x1FF
        if exception:
            names = {2: "NMI", 3: "HardFault", 4: "MemManage", 5: "BusFault", 6: "UsageFault", 15: "SysTick"}
            where += f", handling exception {exception} ({names.get(exception, 'an interrupt')})"
        return where

    def run(self, chunks: list[str], timeout: float = 600, echo=None) -> str:
        """Runs each chunk in the board's raw REPL (see run_on). A board that
        stops answering or crashes raises with its last output, and where
        QEMU's monitor says its CPU is."""
        try:
            if self.transport is not None:
                return run_on(self.transport, chunks, timeout, echo)
            return run_chunks(self.url, chunks, timeout, echo)
        except (TimeoutError, DeviceError) as e:
            if self.proc is not None and self.proc.poll() is not None:
                raise DeviceError(f"QEMU exited: {self.log()[-500:]}\n{e}") from e
            if isinstance(e, (TimeoutError, BoardCrashed)):
                try:
                    where = self.where()
                except (OSError, ValueError) as m:
                    where = f"(QEMU's monitor did not answer: {m})"
                raise type(e)(f"{self.board.name}: {e}\nCPU: {where}") from e
            raise

    def __exit__(self, *exc) -> None:
        if self.transport is not None:
            try:
                self.transport.close()
            except OSError:
                pass
            self.transport = None
        if self.proc is not None:
            stop_child(self.proc)
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
# SCRATCH1 and SCRATCH2 (host_tools/tflm_host/pico/emulator.cjs). The whole
# count is a long int (it allocates); the _low readers, for timing spans,
# get the count's low 30 bits latched into SCRATCH1 alone: a small int, no
# allocation. The pico_boot_ readers: the counts when the firmware first
# printed the REPL's prompt (boot's end, before any wait for the client).
PICO_COUNTERS = """
import machine
def _pico_count(kind):
    machine.mem32[0x4005800c] = kind
    return (machine.mem32[0x40058010] & 0xffffffff) | (machine.mem32[0x40058014] & 0xffffffff) << 32
def pico_cycles():
    return _pico_count(1)
def pico_instructions():
    return _pico_count(2)
def pico_boot_cycles():
    return _pico_count(5)
def pico_boot_instructions():
    return _pico_count(6)
def pico_cycles_low():
    machine.mem32[0x4005800c] = 3
    return machine.mem32[0x40058010]
def pico_instructions_low():
    machine.mem32[0x4005800c] = 4
    return machine.mem32[0x40058010]
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
    # The ROMFS region of port_boards/RPI_PICO (tests/test_flash.py checks it).
    romfs_region = board_info.get("RPI_PICO").flash
    uf2 = firmware or build_dir() / "RPI_PICO" / "firmware.uf2"
    if not uf2.is_file():
        raise FileNotFoundError(f"{uf2} not found: run `make firmware BOARD=RPI_PICO`")
    return PicoBoard("RPI_PICO", uf2, uf2.with_suffix(".elf"), romfs_region.romfs_addr - PICO_FLASH_BASE,
                     romfs_region.romfs_size)


class PicoServer:
    """The real RPI_PICO firmware on rp2040js, its USB serial port on a TCP
    socket at `url` (socket://127.0.0.1:PORT) for any raw-REPL client:
    `mpremote connect socket://...`. A ROMFS image goes into the emulated
    flash at the board's ROMFS offset (the emulator's flash cannot be
    written by the firmware). Use as a context manager; the emulator stops
    on exit."""

    def __init__(self, image: bytes | None = None, firmware: Path | None = None,
                 flash: dict[int, bytes] | None = None) -> None:
        """`flash`: more images by flash offset (a filesystem's, for firmware
        without ROMFS)."""
        self.board = pico_board(firmware)
        self.image = image
        self.flash = flash or {}
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
            path = romfs_file(self.image, "RPI_PICO", self.board.romfs_size, self._tmp)
            cmd += ["--image", f"{path}@{self.board.romfs_start:#x}"]
        for offset, data in self.flash.items():
            path = Path(self._tmp.name, f"flash-{offset:x}.img")
            path.write_bytes(data)
            cmd += ["--image", f"{path}@{offset:#x}"]
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
        self.proc = start_child(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env)
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
            stop_child(self.proc)
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

    # The emulator's own counters, cycles by its timing model.
    counters = {"instructions": PICO_COUNTERS + "_count = pico_instructions_low\n",
                "cycles": PICO_COUNTERS + "_count = pico_cycles_low\n"}
    timing = "rp2040js"
    counted_by = "the RP2040 emulator rp2040js: instructions, and cycles by its timing model"

    def __init__(self, firmware: Path | None = None) -> None:
        self.board = pico_board(firmware)
        self.name = self.board.name

    def run(self, chunks: list[str], files: dict[str, bytes] | None = None, timeout: float = 600,
            echo=None) -> str:
        image = romfs.build_image(files) if files else None
        with PicoServer(image, self.board.firmware) as server:
            try:
                return run_chunks(server.url, chunks, timeout, echo)
            except (TimeoutError, DeviceError) as e:
                if server.log().strip():
                    raise type(e)(f"{e}\nemulator: {server.log()[-1000:]}") from e
                raise


def romfs_batches(tgt: Target, files: dict[str, bytes], reserve: int = 0) -> list[list[str]]:
    """The names of `files` in groups whose ROMFS image fits the target's
    region with room to spare (one group on a target without a region), in
    order: as few sessions as the board allows. `reserve`: bytes of each
    image taken by files beside every group."""
    limit = getattr(getattr(tgt, "board", None), "romfs_size", 1 << 30) - 32 * 1024 - reserve
    names, batches = list(files), []
    while names:
        batch, size = [], 0
        while names and (not batch or size + len(files[names[0]]) + 512 <= limit):
            batch.append(names.pop(0))
            size += len(files[batch[-1]]) + 512
        batches.append(batch)
    return batches


# -- the ESP32 on Espressif's QEMU esp32 machine ---------------------------------

@dataclass
class Esp32Board:
    """The ESP32_GENERIC firmware as `make firmware BOARD=ESP32_GENERIC`
    builds it: flash.bin, the whole 4 MiB flash (bootloader at 0x1000,
    partition table at 0x8000, app at 0x10000), and the app's ELF file."""

    name: str
    firmware: Path  # flash.bin
    elf: Path
    romfs_start: int  # flash offset of the romfs partition
    romfs_size: int


def esp32_board(firmware: Path | None = None) -> Esp32Board:
    # The romfs partition of port_boards/ESP32_GENERIC (tests/test_flash.py checks it).
    region = board_info.get("ESP32_GENERIC").flash
    image = firmware or build_dir() / "ESP32_GENERIC" / "flash.bin"
    if not image.is_file():
        raise FileNotFoundError(f"{image} not found: run `make firmware BOARD=ESP32_GENERIC`")
    return Esp32Board("ESP32_GENERIC", image, image.with_name("micropython.elf"), region.romfs_addr, region.romfs_size)


def esp32_qemu() -> str:
    """qemu-system-xtensa with Espressif's esp32 machine: the offline build's
    (build/esp32-sdk, extracted by `make firmware BOARD=ESP32_GENERIC`), else
    one on PATH."""
    ours = build_dir() / "esp32-sdk" / "inst" / "bin" / "qemu-system-xtensa"
    found = str(ours) if ours.is_file() else shutil.which("qemu-system-xtensa")
    if not found:
        raise FileNotFoundError(f"no qemu-system-xtensa at {ours} or on PATH: run `make firmware BOARD=ESP32_GENERIC`")
    return found


class Esp32Server(QemuServer):
    """The ESP32_GENERIC firmware on QEMU's esp32 machine (two Xtensa LX6
    cores, the ESP32's ROM), its UART0 (the REPL) on a TCP socket at `url`,
    as for the other QEMU boards (QemuServer: the same start, prompt wait,
    raw REPL, crash and silence handling). The machine boots from a copy of
    flash.bin with the ROMFS image written into the romfs partition, so
    models are used in place from the mapped flash. Without -icount: this
    QEMU's eFuse model completes a read after 100 ms of virtual time, which
    under -icount never comes while the ROM polls for it. Instructions are
    counted by the core itself instead (esp32board.icount(): the LX6's
    debug counter ICOUNT)."""

    def __init__(self, image: bytes | None = None, firmware: Path | None = None,
                 keep_connection: bool = False) -> None:
        self.board = esp32_board(firmware)
        self.image = image
        self.icount = False
        self.keep_connection = keep_connection
        self.url = ""
        self.transport = None
        self.proc: subprocess.Popen | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None

    def _flash_file(self) -> Path:
        """The board's flash for this run: flash.bin with the ROMFS image
        in its partition (QEMU writes the filesystem partition back to it)."""
        assert self._tmp is not None
        flash = bytearray(self.board.firmware.read_bytes())
        if self.image is not None:
            path = romfs_file(self.image, self.board.name, self.board.romfs_size, self._tmp)
            start = self.board.romfs_start
            flash[start:start + path.stat().st_size] = path.read_bytes()
        path = Path(self._tmp.name, "flash.bin")
        path.write_bytes(flash)
        return path

    def command(self, port: int) -> list[str]:
        cmd = [esp32_qemu(), "-machine", "esp32", "-nographic",
               "-monitor", f"unix:{self._monitor_path()},server=on,wait=off",
               "-serial", f"tcp:127.0.0.1:{port},server=on,wait=on,nodelay=on",
               "-drive", f"file={self._flash_file()},if=mtd,format=raw"]
        return cmd

    def _start(self, port: int) -> bool:
        # The esp32 port's UART takes what arrives into a 260-byte buffer and
        # drops the rest: code goes in raw-paste mode, whose windows the
        # board acknowledges as it takes them.
        started = super()._start(port)
        if started:
            self.transport.use_raw_paste = True
        return started

    def run(self, chunks: list[str], timeout: float = 600, echo=None) -> str:
        if self.transport is None:
            return run_chunks(self.url, chunks, timeout, echo, raw_paste=True)
        return super().run(chunks, timeout, echo)

    def where(self) -> str:
        """Where the CPUs are: each core's PC as a function of the app's ELF file."""
        pcs = [int(v, 16) for v in re.findall(r"\bPC=([0-9a-fA-F]{8})", self.monitor("info registers -a"))]
        if not pcs:
            return "(no registers from QEMU's monitor)"
        return ", ".join(f"core {i}: pc {pc:#010x} in {elf_function_at(self.board.elf, pc)}" for i, pc in enumerate(pcs))


class Esp32Target(Target):
    """The real ESP32_GENERIC firmware on QEMU's esp32 machine, driven over
    the raw REPL on its UART."""

    # The LX6's debug counter ICOUNT (port_boards/ESP32_GENERIC/board_icount.c):
    # QEMU has no timing model of this core, so instructions only.
    counters = {"instructions": "import esp32board\n_count = esp32board.icount_low\n"}
    counted_by = ("the LX6's debug counter ICOUNT as Espressif's QEMU implements it (`esp32board.icount_low()`: "
                  "instructions of MicroPython's task, not of interrupt handlers); QEMU has no timing model of the "
                  "LX6 or of its flash cache, so instructions, not cycles")

    def __init__(self, firmware: Path | None = None) -> None:
        self.board = esp32_board(firmware)
        self.name = self.board.name

    def run(self, chunks: list[str], files: dict[str, bytes] | None = None, timeout: float = 600,
            echo=None) -> str:
        image = romfs.build_image(files) if files else None
        with Esp32Server(image, self.board.firmware, keep_connection=True) as server:
            return server.run(chunks, timeout, echo)


# -- a board on a serial port (run --port) ----------------------------------------

# Files for a board on a port: held in its RAM under ROOT by a small
# filesystem object mounted there (any board with MicroPython's VFS, with or
# without a filesystem or ROMFS of its own; nothing on it is written).
# read() hands out the stored bytes themselves: a model takes its size once.
RAM_FILES_SETUP = """
import vfs, binascii, gc
class _RamFile:
    def __init__(self, data):
        self.data = data
    def read(self, n=-1):
        return self.data
    def close(self):
        pass
    def __enter__(self):
        return self
    def __exit__(self, *a):
        pass
class _RamFS:
    def __init__(self):
        self.files = {}
    def mount(self, readonly, mkfs):
        pass
    def umount(self):
        self.files = {}
    def open(self, path, mode):
        name = path.lstrip('/')
        if name not in self.files or 'r' not in mode:
            raise OSError(2)
        return _RamFile(self.files[name])
    def stat(self, path):
        name = path.lstrip('/')
        if name and name not in self.files:
            raise OSError(2)
        return (0x4000 if not name else 0x8000, 0, 0, 0, 0, 0, len(self.files.get(name, b'')), 0, 0, 0)
    def ilistdir(self, path):
        for name in self.files:
            yield (name, 0x8000, 0)
    def chdir(self, path):
        pass
    def getcwd(self):
        return ''
try:
    vfs.umount(ROOT)
except OSError:
    pass
_ramfs = _RamFS()
vfs.mount(_ramfs, ROOT)
def _put(name, size):
    global _buf
    _buf = _ramfs.files[name] = bytearray(size)
def _fill(at, text):
    data = binascii.a2b_base64(text)
    _buf[at:at + len(data)] = data
"""
# Bytes of a file sent per raw-REPL execution.
RAM_FILES_CHUNK = 4096


def ram_file_chunks(files: dict[str, bytes]) -> list[str]:
    """Device code putting `files` into the RAM filesystem of RAM_FILES_SETUP."""
    import base64

    chunks = []
    for name, data in files.items():
        chunks.append(f"_put({name!r}, {len(data)})")
        chunks += [f"_fill({at}, {base64.b64encode(data[at:at + RAM_FILES_CHUNK]).decode()!r})"
                   for at in range(0, len(data), RAM_FILES_CHUNK)]
    return chunks


class PortTarget(Target):
    """A board on a serial port (/dev/ttyACM0, COM3, socket://HOST:PORT),
    through mpremote's transport and raw REPL, as it runs: files are sent
    over the port into its RAM under ROOT (RAM_FILES_SETUP), unmounted when
    the run ends."""

    root = "/tflm-host"

    def __init__(self, url: str) -> None:
        self.url = url
        self.name = url

    def run(self, chunks: list[str], files: dict[str, bytes] | None = None, timeout: float = 600,
            echo=None) -> str:
        from . import progress

        from mpremote.transport import TransportError

        transport = connect(self.url)
        try:
            # From the friendly REPL, a running program or a raw REPL another
            # tool left (Ctrl-C, then Ctrl-A): no reset, the board as it is.
            transport.serial.timeout = RESPONSE_TIMEOUT / 2
            try:
                transport.enter_raw_repl(soft_reset=False)
            except TransportError as e:
                raise TimeoutError(f"{self.url}: no raw REPL: {e}") from None
            exec_chunk(transport, f"ROOT = {self.root!r}", timeout)
            exec_chunk(transport, RAM_FILES_SETUP, timeout)
            sends = ram_file_chunks(files or {})
            with progress.bar(f"sending {sum(map(len, (files or {}).values())):,} bytes to the board", len(sends)) \
                    as tick:
                for n, chunk in enumerate(sends):
                    exec_chunk(transport, chunk, timeout)
                    tick(n + 1)
            try:
                return "".join(exec_chunk(transport, chunk, timeout, echo) for chunk in chunks)
            finally:
                exec_chunk(transport, "vfs.umount(ROOT)\n_ramfs = _buf = None\ngc.collect()", RESPONSE_TIMEOUT)
                transport.exit_raw_repl()
                # Its friendly prompt, before the port closes (an emulator
                # drops what its board had not read yet when it does).
                transport.read_until(1, b">>> ", timeout=RESPONSE_TIMEOUT / 2)
        finally:
            transport.close()


def target(name: str, firmware: Path | None = None) -> Target:
    if name == "unix":
        return UnixTarget(firmware)
    if name in PICO_BOARDS:
        return PicoTarget(firmware)
    if name in ESP32_BOARDS:
        return Esp32Target(firmware)
    return QemuTarget(name, firmware)
