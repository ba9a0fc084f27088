"""`tflm-host install --port PORT`: tflm.mpy onto a board running stock
MicroPython, for the architecture it reports (sys.implementation._mpy),
checked against the file's own .mpy header before anything is copied.

The numbers below are py/persistentcode.h's (MicroPython 1.25.0): .mpy
version 6, native sub-version 3, MP_NATIVE_ARCH_* from X86 = 1 to RV32IMC
= 11; a board's _mpy is MPY_FILE_HEADER_INT, version | (sub-version | arch
<< 2) << 8, and a .mpy file's third byte is sub-version | arch << 2; a Thumb
board loads native code from armv6m up to its own architecture.

End to end on MPS2_AN385's stock firmware (build/MPS2_AN385-stock, no tflm
module, no writable filesystem): a filesystem object written in Python,
holding files in RAM, is mounted at /lib over the same running QEMU, as a
board's flash filesystem would be; then the CLI installs there, and
hello_world_int8 runs on the installed module: TFLM's outputs, the built-in
module's arena figures."""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from conftest import ROOT, model_path
from tflm_host import __version__, cli, install
from tflm_host.device import PortTarget, QemuServer, UnixTarget
from tflm_host.install import MpyFormat, board_format, check_file, file_format, pick_arch
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import BatchJob, make_inputs, run_batch

BUILD = Path(os.environ.get("TFLM_BUILD", ROOT / "build"))

# py/persistentcode.h
MPY_VERSION, MPY_SUB_VERSION = 6, 3
X86, X64, ARMV6, ARMV6M, ARMV7M, ARMV7EM, ARMV7EMSP, ARMV7EMDP, XTENSA, XTENSAWIN, RV32IMC = range(1, 12)


def sys_mpy(arch: int, version: int = MPY_VERSION, sub: int = MPY_SUB_VERSION) -> int:
    """MPY_FILE_HEADER_INT of a firmware whose MPY_FEATURE_ARCH is `arch`."""
    return version | (sub | arch << 2) << 8


def header(arch: int, version: int = MPY_VERSION, sub: int = MPY_SUB_VERSION) -> bytes:
    """The first bytes of a .mpy file (mpy_ld writes 'M', version, features, small-int bits)."""
    return bytes([ord("M"), version, sub | arch << 2, 31]) + b"\x00" * 8


def test_board_mpy_values_decode():
    # RP2040 (armv6m), pyboard (armv7emsp), Cortex-M7 with double-precision FPU, ESP32-S3 (xtensawin), unix x64
    assert sys_mpy(ARMV6M) == 0x1306 and sys_mpy(ARMV7EMSP) == 0x1F06
    for arch, name in [(ARMV6M, "armv6m"), (ARMV7M, "armv7m"), (ARMV7EM, "armv7em"), (ARMV7EMSP, "armv7emsp"),
                       (ARMV7EMDP, "armv7emdp"), (XTENSAWIN, "xtensawin"), (RV32IMC, "rv32imc"), (X64, "x64")]:
        fmt = board_format(sys_mpy(arch))
        assert fmt == MpyFormat(MPY_VERSION, MPY_SUB_VERSION, arch)
        assert fmt.arch_name == name
    assert board_format(MPY_VERSION) == MpyFormat(MPY_VERSION, 0, 0)  # no native emitter: arch NONE


def test_the_stock_unix_port_reports_x64():
    binary = BUILD / "unix-stock" / "micropython"
    assert binary.is_file(), f"{binary} missing: run `make natmod-stock`"
    out = subprocess.run([str(binary), "-c", "import sys; print(sys.implementation._mpy)"], capture_output=True,
                         text=True, timeout=30, check=True).stdout
    assert board_format(int(out)) == MpyFormat(MPY_VERSION, MPY_SUB_VERSION, X64)


def test_built_mpy_headers_decode():
    for arch, number in [("x64", X64), ("armv7m", ARMV7M)]:
        path = BUILD / "natmod" / arch / "tflm.mpy"
        assert path.is_file(), f"{path} missing: run `make natmod-stock`"
        assert file_format(path.read_bytes()) == MpyFormat(MPY_VERSION, MPY_SUB_VERSION, number)
        assert path.read_bytes()[2] == MPY_SUB_VERSION | number << 2


@pytest.mark.parametrize("board, file, loads", [
    (ARMV7M, ARMV6M, True), (ARMV7EM, ARMV7M, True), (ARMV7EMSP, ARMV6M, True), (ARMV7EMDP, ARMV7EMSP, True),
    (ARMV6M, ARMV7M, False), (ARMV7EM, ARMV7EMSP, False), (ARMV7EMSP, ARMV7EMDP, False), (X64, ARMV7M, False),
    (ARMV7M, X64, False), (XTENSAWIN, XTENSA, False), (RV32IMC, RV32IMC, True), (X64, X64, True),
    (ARMV6, ARMV6M, False), (0, ARMV6M, False)])
def test_which_native_code_a_board_loads(board, file, loads):
    assert board_format(sys_mpy(board)).loads(file) is loads


@pytest.mark.parametrize("board, arch", [(ARMV6M, "armv6m"), (ARMV7M, "armv7m"), (ARMV7EM, "armv7m"),
                                         (ARMV7EMSP, "armv7emsp"), (ARMV7EMDP, "armv7emsp"), (X64, "x64"),
                                         (XTENSAWIN, "xtensawin")])
def test_pick_arch_from_the_makefiles_list(board, arch):
    archs = install.checkout_archs(ROOT)
    assert set(archs) >= {"x64", "armv6m", "armv7m", "armv7emsp", "xtensawin"}
    assert pick_arch(board_format(sys_mpy(board)), archs, "make natmod") == arch


def test_a_board_without_a_build_is_refused():
    with pytest.raises(NotImplementedError, match=r"^the board runs xtensawin code and make natmod has no tflm.mpy "
                                                  r"it loads \(architectures: x64, armv6m, armv7m, armv7emsp\)$"):
        pick_arch(board_format(sys_mpy(XTENSAWIN)), ["armv7m", "x64", "armv6m", "armv7emsp"], "make natmod")
    with pytest.raises(NotImplementedError, match="loads no native code"):
        pick_arch(board_format(MPY_VERSION), ["armv6m"], "make natmod")


def test_a_release_folder_gives_the_boards_architecture(tmp_path):
    for arch in ("x64", "armv6m", "armv7m"):
        (tmp_path / "mpy" / arch).mkdir(parents=True)
        (tmp_path / "mpy" / arch / "tflm.mpy").write_bytes(header(install.ARCH_NUMBERS[arch]))
        (tmp_path / "mpy" / arch / "package.json").write_text('{"urls": [["tflm.mpy", "tflm.mpy"]]}')
    source = install.Source(dist=tmp_path)
    assert source.file_for(board_format(sys_mpy(ARMV7EMSP))) == tmp_path / "mpy" / "armv7m" / "tflm.mpy"
    assert source.file_for(board_format(sys_mpy(ARMV6M))) == tmp_path / "mpy" / "armv6m" / "tflm.mpy"
    with pytest.raises(NotImplementedError, match=rf"the board runs rv32imc code and the release folder {tmp_path} "
                                                  r"has no tflm.mpy it loads \(architectures: x64, armv6m, armv7m\)"):
        source.file_for(board_format(sys_mpy(RV32IMC)))
    with pytest.raises(ValueError, match="is not a release folder"):
        install.Source(dist=tmp_path / "mpy").file_for(board_format(sys_mpy(ARMV6M)))


def test_a_small_heap_gets_the_release_folders_core_build(tmp_path, capsys):
    full, core = tmp_path / "mpy" / "armv6m" / "tflm.mpy", tmp_path / "mpy" / "armv6m" / "core" / "tflm.mpy"
    core.parent.mkdir(parents=True)
    full.write_bytes(header(ARMV6M) + bytes(200_000))
    core.write_bytes(header(ARMV6M) + bytes(100_000))
    source, board = install.Source(dist=tmp_path), board_format(sys_mpy(ARMV6M))
    # A stock Pico's heap (241,552 bytes free at its prompt) holds every
    # kernel's 200 KB with less than 64 KB left: the core build.
    assert source.file_for(board, 241_552) == core
    assert "bytes of heap free" in capsys.readouterr().out
    assert source.file_for(board, full.stat().st_size + 64 * 1024) == full
    assert source.file_for(board, None) == full  # a board that does not say
    core.unlink()
    assert source.file_for(board, 100_000) == full  # no core build: the board's loader says MemoryError


def test_mismatched_files_are_refused():
    board = board_format(sys_mpy(ARMV6M))
    assert check_file(header(ARMV6M), board) == MpyFormat(MPY_VERSION, MPY_SUB_VERSION, ARMV6M)
    cases = [
        (header(ARMV7M), r"^tflm.mpy is native code for armv7m; the board runs armv6m code: it would not import$"),
        (header(X64), "native code for x64; the board runs armv6m code"),
        (header(ARMV6M, version=5), "is a version 5 .mpy file; the board loads version 6"),
        (header(ARMV6M, sub=2), r"uses native ABI 6.2; the board's firmware loads 6.3"),
        (header(0), "holds no native code"),
        (b"\x7fELF" + b"\x00" * 12, "is not a .mpy file"),
        (b"M", "is not a .mpy file"),
    ]
    for data, message in cases:
        with pytest.raises(ValueError, match=message):
            check_file(data, board)
    with pytest.raises(ValueError, match=r"native code for armv7emsp; the board runs armv7em code \(and armv6m, "
                                         r"armv7m code\)"):
        check_file(header(ARMV7EMSP), board_format(sys_mpy(ARMV7EM)))
    with pytest.raises(ValueError, match="the board's firmware loads no native code"):
        check_file(header(ARMV6M), board_format(MPY_VERSION))


# A filesystem object in Python holding its files in RAM, mounted at MOUNT
# with room for CAPACITY bytes: one buffer taken when it is mounted, each
# file a stretch of it written from the end of the last one (a file, once
# removed, is room again only when it was the last), so the copy leaves no
# blocks about the heap; its files are io.IOBase streams, which MicroPython's
# import reads through readinto().
RAM_FS = """
import io, vfs, sys
class RamFile(io.IOBase):
    def __init__(self, fs, extent):
        self.fs, self.extent, self.pos = fs, extent, 0
    def readinto(self, buf):
        start, length = self.extent
        n = min(len(buf), length - self.pos)
        buf[:n] = memoryview(self.fs.store)[start + self.pos:start + self.pos + n]
        self.pos += n
        return n
    def write(self, buf):
        start, length = self.extent
        end = start + length + len(buf)
        if end > len(self.fs.store):
            raise OSError(28)
        self.fs.store[start + length:end] = buf
        self.extent[1] += len(buf)
        self.fs.top = end
        return len(buf)
    def ioctl(self, req, arg):
        return 0 if req == 4 else -1
    def close(self):
        pass
class RamFS:
    def __init__(self, capacity):
        self.store, self.top, self.files, self.dirs = bytearray(capacity), 0, {}, {''}
    def mount(self, readonly, mkfs):
        pass
    def umount(self):
        pass
    def open(self, path, mode):
        name = path.strip('/')
        if 'w' in mode:
            if name in self.files:
                self.remove(name)
            self.files[name] = [self.top, 0]
        elif name not in self.files:
            raise OSError(2)
        return RamFile(self, self.files[name])
    def stat(self, path):
        name = path.strip('/')
        if name in self.dirs:
            return (0x4000, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        if name in self.files:
            return (0x8000, 0, 0, 0, 0, 0, self.files[name][1], 0, 0, 0)
        raise OSError(2)
    def statvfs(self, path):
        free = len(self.store) - self.top
        return (1, 1, len(self.store), free, free, 0, 0, 0, 0, 255)
    def ilistdir(self, path):
        for name in self.files:
            yield (name, 0x8000, 0)
    def mkdir(self, path):
        self.dirs.add(path.strip('/'))
    def remove(self, path):
        start, length = self.files.pop(path.strip('/'))
        if start + length == self.top:
            self.top = start
    def chdir(self, path):
        pass
    def getcwd(self):
        return ''
vfs.mount(RamFS(CAPACITY), MOUNT)
"""


def on_board(url: str, *chunks: str) -> str:
    """Runs the chunks in the board's raw REPL, entered and left without a
    reset (what is mounted stays), as install does."""
    board = install.Board(url)
    try:
        return "".join(board.run(chunk, 30) for chunk in chunks)
    finally:
        board.close()


def board_listing(url: str, folder: str) -> list[str]:
    return on_board(url, f"import os\nprint(sorted(os.listdir({folder!r})))").split()


def test_install_on_stock_firmware(capsys):
    firmware = BUILD / "MPS2_AN385-stock" / "firmware.elf"
    assert firmware.is_file(), f"{firmware} missing: run `make natmod-stock`"
    hello = model_path("hello_world_int8.tflite")
    with QemuServer("MPS2_AN385", firmware=firmware, icount=False) as board:
        # /lib as a board's flash filesystem has it, on sys.path as on the
        # rp2 and stm32 ports; /small, a filesystem too small for the module.
        # /tiny: one that does not say how full it is (no statvfs), the copy finds out.
        on_board(board.url, RAM_FS.replace("CAPACITY", "120000").replace("MOUNT", "'/lib'"),
                 "sys.path.append('/lib')", RAM_FS.replace("CAPACITY", "20000").replace("MOUNT", "'/small'"),
                 "class Mute(RamFS):\n    def statvfs(self, path):\n        raise OSError(95)\n"
                 "vfs.mount(Mute(6000), '/tiny')")

        # Refused before a byte is sent: a file for another architecture, one
        # bigger than the folder's free space; and refused as the space runs out.
        x64 = BUILD / "natmod" / "x64" / "tflm.mpy"
        assert cli.main(["install", "--port", board.url, "--mpy", str(x64)]) == 2
        err = capsys.readouterr().err
        assert f"tflm-host install: {x64} is native code for x64; the board runs armv7em code (and armv6m, armv7m " \
               "code): it would not import" in err, err
        armv7m = BUILD / "natmod" / "armv7m" / "tflm.mpy"
        assert cli.main(["install", "--port", board.url, "--mpy", str(armv7m), "--target", "/small"]) == 2
        err = capsys.readouterr().err
        assert f"no space left on the board for /small/tflm.mpy: it needs {armv7m.stat().st_size:,} bytes, " \
               "/small has 20,000 free" in err, err
        assert cli.main(["install", "--port", board.url, "--mpy", str(armv7m), "--target", "/tiny"]) == 2
        err = capsys.readouterr().err
        assert f"no space left on the board for /tiny/tflm.mpy: it needs {armv7m.stat().st_size:,} bytes\n" in err, err
        assert board_listing(board.url, "/lib") == board_listing(board.url, "/small") == ["[]"]
        assert board_listing(board.url, "/tiny") == ["[]"]  # the part written is removed

        # Writing without binascii (bytes literals), and the three ways of checking a copy.
        data = bytes(range(256)) * 9 + b"'\"\\"
        ticks: list[int] = []
        link = install.Board(board.url)
        try:
            link.write("/small/x.bin", data, False, ticks.append)
            assert ticks == list(range(install.CHUNK_LITERAL, len(data), install.CHUNK_LITERAL)) + [len(data)]
            assert link.digest("/small/x.bin", install.BoardInfo(None, [], True, True, True)) == \
                ("sha256", hashlib.sha256(data).hexdigest())
            assert link.digest("/small/x.bin", install.BoardInfo(None, [], False, True, True)) == \
                ("crc32", f"{zlib.crc32(data):08x}")
            assert link.digest("/small/x.bin", install.BoardInfo(None, [], False, False, False)) == \
                ("bytes", data.hex())
            link.run("import os\nos.remove('/small/x.bin')")
        finally:
            link.close()

        # The CLI as a user runs it: the module with hello_world_int8's kernel,
        # for the architecture the board reports (make finds it built by `make natmod-stock`).
        (BUILD / "natmod").mkdir(parents=True, exist_ok=True)
        with open(BUILD / "natmod" / ".test.lock", "w") as lock:  # test_natmod's: one make at a time
            fcntl.flock(lock, fcntl.LOCK_EX)
            proc = subprocess.run([sys.executable, "-m", "tflm_host", "install", "--port", board.url,
                                   "--model", str(hello)], capture_output=True, text=True, timeout=600,
                                  env=dict(os.environ, TFLM_BUILD=str(BUILD)))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        lines = proc.stdout.splitlines()
        assert lines[0] == "board: .mpy version 6.3, native code armv7em"
        copied = re.fullmatch(r"(\S+/natmod/armv7m-cfg-\w+/tflm.mpy) \(([\d,]+) bytes, armv7m\) -> /lib/tflm.mpy",
                              lines[1])
        assert copied, lines[1]
        mpy = Path(copied.group(1)).read_bytes()
        assert len(mpy) == int(copied.group(2).replace(",", ""))
        assert lines[2] == "copied and checked (sha256)"
        version = __version__  # the engine's number, tflm.version on a board
        assert re.fullmatch(rf"import tflm: version {re.escape(version)}, armv7m code, [\d,]+ bytes of heap", lines[3])
        assert board_listing(board.url, "/lib") == ["['tflm.mpy']"]

        # hello_world_int8 on the installed module: TFLM's outputs, the built-in module's arena figures.
        model = load_model(hello)
        jobs = [BatchJob("hello_world_int8", hello.read_bytes(),
                         make_inputs(model, "zeros") + make_inputs(model, "random", seed=3, count=2))]
        ours = run_batch(PortTarget(board.url), jobs)["hello_world_int8"]
        assert ours.error is None, ours.error
        ref = reference_outputs(hello, jobs[0].samples)
        assert len(ours.runs) == len(ref) == 3
        for a_run, b_run in zip(ours.runs, ref):
            for a, b in zip(a_run, b_run):
                assert a.tobytes() == b.astype(a.dtype).tobytes()
        builtin = run_batch(UnixTarget(), jobs)["hello_world_int8"]
        assert ours.arena == builtin.arena and ours.buffers == builtin.buffers
        assert on_board(board.url, "import tflm\nprint(tflm.__file__, tflm.version)").split() == \
            ["/lib/tflm.mpy", version]


def test_the_checkouts_build_for_the_board(tmp_path, monkeypatch):
    board = board_format(sys_mpy(ARMV7EM))  # MPS2_AN385's stock firmware reports this
    assert install.Source().file_for(board) == BUILD / "natmod" / "armv7m" / "tflm.mpy"
    monkeypatch.setenv("TFLM_BUILD", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=rf"^{tmp_path}/natmod/armv6m/tflm.mpy not found: run `make natmod "
                                                r"ARCH=armv6m` or give --build$"):
        install.Source().file_for(board_format(sys_mpy(ARMV6M)))
