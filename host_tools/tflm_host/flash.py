"""`tflm-host flash`: writes firmware, or a ROMFS image of models, to a real board.

Each board has its vendor's tool: esptool for the ESP32, picotool or the
RPI-RP2 USB drive for the RP2040, dfu-util or st-flash for the pyboard. The
command is printed before it runs; `--dry-run` only prints. A ROMFS image
(`tflm-host romfs DIR -o IMAGE`) goes to the board's ROMFS region, whose
address comes from the board's description, port_boards/<BOARD>/board.json
(tests check it against the board's files that set the region).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import board_info


class FlashError(RuntimeError):
    """A problem the user can fix: missing file or tool, wrong file type."""


@dataclass(frozen=True)
class Board:
    name: str
    chip: str
    romfs_addr: int  # the address tools write the ROMFS image to
    romfs_size: int
    romfs_source: str  # the board file that sets the region
    firmware_types: tuple[str, ...]
    build_output: str  # what `make firmware BOARD=...` writes


# The real boards' flash maps (port_boards/<BOARD>/board.json: tflm_host.board_info).
BOARDS = {b.name: Board(b.name, b.chip, b.flash.romfs_addr, b.flash.romfs_size, b.flash.romfs_source,
                        b.flash.firmware_types, b.flash.build_output)
          for b in board_info.boards() if b.flash is not None}

# Tools, how to install them, and the boards they serve.
INSTALL_HINTS = {
    "esptool": "install it with `pip install esptool` (into this virtual environment: .venv/bin/pip install esptool)",
    "picotool": "install Raspberry Pi's picotool (`apt install picotool` where the distribution packages it, "
                "else build it from its source), or copy the .uf2 to the RPI-RP2 drive: hold BOOTSEL while "
                "plugging the board in and pass the drive's mount point with --port",
    "dfu-util": "install it with `apt install dfu-util` (put the board in DFU mode: BOOT0 to 3V3, then reset)",
    "st-flash": "install it with `apt install stlink-tools` (needs an ST-LINK probe on the SWD pins)",
}
TOOLS = {name: board_info.get(name).flash.tools for name in BOARDS}

ESP32_BAUD = 460800
ESP32_BOOTLOADER_OFFSET = 0x1000  # where MicroPython's firmware.bin (bootloader + table + app) starts
ESP32_APP_OFFSET = 0x10000  # the factory app partition (micropython.bin alone)
ESP32_TABLE_IN_IMAGE = 0x8000 - ESP32_BOOTLOADER_OFFSET  # partition table offset inside firmware.bin
RP2040_FLASH_BASE = 0x10000000
RP2040_UF2_FAMILY = 0xE48BFF56
STM32_TEXT0 = 0x08000000
# firmware1.bin of the pyboard's split firmware: the start of FLASH_TEXT in
# port_boards/PYBV11/tflm_pybv11.ld (an installed tflm-host has no
# port_boards/; tests check it against the linker script and the build).
STM32_TEXT1 = 0x08010000

# Searched for tools after PATH: the running interpreter's folder (a .venv's bin).
EXTRA_TOOL_DIRS = [Path(sys.executable).parent]

ROMFS_MAGIC = b"\xd2\xcd\x31"  # an image starts with the ROMFS record kind


@dataclass
class Step:
    """One thing to do: run a command, copy a file, or write a generated file."""

    argv: list[str] | None = None
    copy: tuple[Path, Path] | None = None  # source file, destination folder
    write: tuple[Path, bytes] | None = None
    note: str = field(default="")

    def text(self) -> str:
        if self.argv is not None:
            return shlex.join(self.argv)
        if self.copy is not None:
            return shlex.join(["cp", str(self.copy[0]), str(self.copy[1]) + os.sep])
        assert self.write is not None
        return f"write {self.write[0]} ({self.note})"



def _check_pyboard_parts(first: Path, second: Path) -> None:
    """The pyboard's split firmware starts (the reset vector, word 1 of
    firmware0.bin) in sector 0 or in firmware1.bin where this tool writes
    it: parts built for another flash map would not boot."""
    head = first.read_bytes()[:8]
    if len(head) < 8:
        return
    reset = struct.unpack_from("<I", head, 4)[0] & ~1
    if not (STM32_TEXT0 <= reset < STM32_TEXT0 + 0x4000 or STM32_TEXT1 <= reset < STM32_TEXT1 + second.stat().st_size):
        raise FlashError(f"{first}: the firmware starts at {reset:#010x}, outside {second.name} at {STM32_TEXT1:#010x}: "
                         "these files were built for another flash map; build the firmware again "
                         "(make firmware BOARD=PYBV11)")

def find_tool(names: tuple[str, ...] | list[str]) -> str | None:
    """The first of `names` found on PATH or in EXTRA_TOOL_DIRS, as the name to run it by."""
    for name in names:
        if shutil.which(name):
            return name
        for d in EXTRA_TOOL_DIRS:
            p = Path(d) / name
            if p.is_file() and os.access(p, os.X_OK):
                return str(p)
    return None


# Set by plan() for a dry run: tools not found are named, not refused, and
# their hints collected here (the commands are printed, not run).
_missing: list[str] | None = None


def _need_tool(key: str, names: tuple[str, ...]) -> str:
    tool = find_tool(names)
    if tool is None:
        text = f"{names[0]} not found: {INSTALL_HINTS[key]}"
        if _missing is None:
            raise FlashError(text)
        if text not in _missing:
            _missing.append(text)
        return names[0]
    return tool


def find_rp2_drives() -> list[Path]:
    """Mounted RPI-RP2 drives (an RP2040 in BOOTSEL mode)."""
    found: list[Path] = []
    candidates: list[Path] = []
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) > 1:
                candidates.append(Path(parts[1].replace("\\040", " ")))
    except OSError:
        pass
    for pattern in ("/media/*/RPI-RP2", "/run/media/*/RPI-RP2", "/media/RPI-RP2", "/Volumes/RPI-RP2"):
        candidates.extend(Path("/").glob(pattern.lstrip("/")))
    for c in candidates:
        if c.name == "RPI-RP2" and (c / "INFO_UF2.TXT").is_file() and c not in found:
            found.append(c)
    return found


# ---------------------------------------------------------------------------
# File checks


def _check_file(path: Path, what: str, board: Board) -> bytes:
    if not path.is_file():
        hint = f" (build it with `make firmware BOARD={board.name}`: {board.build_output})" if what == "firmware" else \
            " (build one with `tflm-host romfs DIR -o IMAGE`)"
        raise FlashError(f"{what} not found: {path}{hint}")
    return path.read_bytes()


def _wrong_type(board: Board, path: Path, why: str = "") -> FlashError:
    kinds = board_info.get(board.name).flash.takes
    return FlashError(f"{path} is not firmware for {board.name}{why}: it takes {kinds}")


def _is_uf2(data: bytes) -> bool:
    return len(data) >= 512 and struct.unpack_from("<II", data, 0) == (0x0A324655, 0x9E5D5157)


def _check_romfs(path: Path, board: Board) -> bytes:
    data = _check_file(path, "ROMFS image", board)
    if not data.startswith(ROMFS_MAGIC):
        raise FlashError(f"{path} is not a ROMFS image (build one with `tflm-host romfs DIR -o IMAGE`)")
    if len(data) > board.romfs_size:
        raise FlashError(f"{path} has {len(data)} bytes: {board.name}'s ROMFS region holds {board.romfs_size} "
                         f"({board.romfs_size // 1024} KiB, {board.romfs_source})")
    return data


def uf2_blocks(data: bytes, addr: int, family: int = RP2040_UF2_FAMILY) -> list[tuple[int, bytes]]:
    """(address, 256-byte payload) blocks of a binary written at `addr`."""
    blocks = []
    for off in range(0, len(data), 256):
        chunk = data[off:off + 256]
        blocks.append((addr + off, chunk + b"\xff" * (256 - len(chunk))))
    return blocks


def parse_uf2(data: bytes) -> list[tuple[int, bytes]]:
    """(address, payload) of every block of a UF2 file."""
    blocks = []
    for off in range(0, len(data) - 511, 512):
        m0, m1, _flags, addr, size = struct.unpack_from("<IIIII", data, off)
        if (m0, m1) != (0x0A324655, 0x9E5D5157):
            raise FlashError("bad UF2 block")
        blocks.append((addr, data[off + 32:off + 32 + size]))
    return blocks


def make_uf2(blocks: list[tuple[int, bytes]], family: int = RP2040_UF2_FAMILY) -> bytes:
    """A UF2 file (the RP2040 bootloader's format) holding these blocks."""
    out = bytearray()
    for i, (addr, payload) in enumerate(blocks):
        head = struct.pack("<IIIIIIII", 0x0A324655, 0x9E5D5157, 0x00002000, addr, len(payload),
                           i, len(blocks), family)
        out += head + payload + b"\x00" * (476 - len(payload)) + struct.pack("<I", 0x0AB16F30)
    return bytes(out)


# ---------------------------------------------------------------------------
# Plans: what to run for a board


def _romfs_note(board: Board, size: int) -> str:
    return (f"ROMFS region of {board.name}: 0x{board.romfs_addr:08X}, {board.romfs_size // 1024} KiB "
            f"({board.romfs_source}); image: {size} bytes")


def plan_esp32(board: Board, firmware: Path | None, romfs: Path | None, port: str | None, baud: int,
               tool_choice: str | None) -> tuple[list[Step], list[str]]:
    notes: list[str] = []
    writes: list[tuple[str, Path]] = []
    if firmware is not None:
        if firmware.suffix.lower() not in board.firmware_types:
            raise _wrong_type(board, firmware)
        data = _check_file(firmware, "firmware", board)
        if not data or data[0] != 0xE9:
            raise _wrong_type(board, firmware, " (no ESP image header)")
        if data[ESP32_TABLE_IN_IMAGE:ESP32_TABLE_IN_IMAGE + 2] == b"\xaa\x50":
            notes.append(f"{firmware.name} holds this project's partition table: on a board that ran another "
                         "firmware, erase its flash once first (esptool.py --chip esp32"
                         + (f" --port {port}" if port else "") + " erase_flash; its filesystem goes too)")
            writes.append((f"0x{ESP32_BOOTLOADER_OFFSET:x}", firmware))
        else:
            notes.append(f"{firmware.name} is an application image alone: written to the app partition at "
                         f"0x{ESP32_APP_OFFSET:x} (the board must already have MicroPython's bootloader and "
                         "this project's partition table: flash firmware.bin once)")
            writes.append((f"0x{ESP32_APP_OFFSET:x}", firmware))
    if romfs is not None:
        data = _check_romfs(romfs, board)
        notes.append(_romfs_note(board, len(data)))
        writes.append((f"0x{board.romfs_addr:x}", romfs))
    tool = _need_tool("esptool", ("esptool.py", "esptool"))
    argv = [tool, "--chip", "esp32"]
    if port:
        argv += ["--port", port]
    argv += ["--baud", str(baud), "write_flash", "-z"]
    for offset, path in writes:
        argv += [offset, str(path)]
    return [Step(argv=argv)], notes


def plan_rp2040(board: Board, firmware: Path | None, romfs: Path | None, port: str | None,
                tool_choice: str | None) -> tuple[list[Step], list[str]]:
    notes: list[str] = []
    fw_data = None
    if firmware is not None:
        ext = firmware.suffix.lower()
        if ext not in board.firmware_types:
            raise _wrong_type(board, firmware)
        fw_data = _check_file(firmware, "firmware", board)
        if ext == ".uf2" and not _is_uf2(fw_data):
            raise _wrong_type(board, firmware, " (no UF2 blocks)")
        if ext == ".elf" and not fw_data.startswith(b"\x7fELF"):
            raise _wrong_type(board, firmware, " (no ELF header)")
    romfs_data = None
    if romfs is not None:
        romfs_data = _check_romfs(romfs, board)
        notes.append(_romfs_note(board, len(romfs_data)))

    # The drive: --port as its mount point, else picotool, else a mounted drive.
    drive: Path | None = None
    if port:
        drive = Path(port)
        if not drive.is_dir():
            raise FlashError(f"--port {port}: for RPI_PICO, --port is the mount point of the RPI-RP2 drive "
                             "(hold BOOTSEL while plugging the board in; a board running MicroPython gets "
                             "there with `mpremote connect PORT bootloader`)")
        if not (drive / "INFO_UF2.TXT").is_file():
            raise FlashError(f"{drive} is not an RPI-RP2 drive (no INFO_UF2.TXT)")
    use = tool_choice
    if use is None:
        if drive is not None:
            use = "drive"
        elif find_tool(("picotool",)):
            use = "picotool"
        else:
            drives = find_rp2_drives()
            if drives:
                drive, use = drives[0], "drive"
            elif _missing is not None:
                use = "picotool"  # a dry run: the picotool commands, with the hint
            else:
                raise FlashError("no RPI-RP2 drive mounted and picotool not found: " + INSTALL_HINTS["picotool"])
    if use == "drive" and drive is None:
        drives = find_rp2_drives()
        if not drives:
            raise FlashError("no RPI-RP2 drive mounted: hold BOOTSEL while plugging the board in, "
                             "or pass the drive's mount point with --port")
        drive = drives[0]

    steps: list[Step] = []
    if use == "picotool":
        tool = _need_tool("picotool", ("picotool",))
        if romfs is not None:
            steps.append(Step(argv=[tool, "load", str(romfs), "-t", "bin", "-o", f"0x{board.romfs_addr:08x}"]))
        if firmware is not None:
            argv = [tool, "load", "-x", str(firmware)]
            if firmware.suffix.lower() == ".bin":
                argv += ["-t", "bin", "-o", f"0x{RP2040_FLASH_BASE:08x}"]
            steps.append(Step(argv=argv))
        else:
            steps.append(Step(argv=[tool, "reboot"]))
        return steps, notes

    assert drive is not None
    if firmware is not None and firmware.suffix.lower() != ".uf2":
        raise FlashError(f"{firmware}: the RPI-RP2 drive takes .uf2 files only (use picotool for "
                         f"{firmware.suffix} files)")
    if romfs is None:
        steps.append(Step(copy=(firmware, drive)))
        return steps, notes
    # One UF2 file: the drive reboots the board after the first file it gets.
    blocks = parse_uf2(fw_data) if fw_data is not None else []
    blocks += uf2_blocks(romfs_data, board.romfs_addr)
    out = romfs.with_name(romfs.name + ".uf2") if firmware is None else \
        romfs.with_name(f"{firmware.stem}+{romfs.name}.uf2")
    what = (f"{firmware.name} and " if firmware is not None else "") + \
        f"{romfs.name} at 0x{board.romfs_addr:08X} as UF2 for the RP2040, {len(blocks)} blocks"
    steps.append(Step(write=(out, make_uf2(blocks)), note=what))
    steps.append(Step(copy=(out, drive)))
    return steps, notes


def plan_stm32(board: Board, firmware: Path | None, romfs: Path | None, tool_choice: str | None
               ) -> tuple[list[Step], list[str]]:
    notes: list[str] = []
    steps: list[Step] = []
    if firmware is not None:
        ext = firmware.suffix.lower()
        if ext not in board.firmware_types:
            raise _wrong_type(board, firmware)
        data = _check_file(firmware, "firmware", board)
        if ext == ".dfu":
            if not data.startswith(b"DfuSe"):
                raise _wrong_type(board, firmware, " (no DfuSe header)")
            if tool_choice == "st-flash":
                raise FlashError(f"{firmware}: st-flash cannot write .dfu files; use firmware.hex or the .bin files")
            tool = _need_tool("dfu-util", ("dfu-util",))
            steps.append(Step(argv=[tool, "-a", "0", "-D", str(firmware)]))
        else:
            if ext == ".hex" and not data.startswith(b":"):
                raise _wrong_type(board, firmware, " (no Intel HEX records)")
            parts = [(firmware, STM32_TEXT0)]
            if firmware.name.endswith("firmware1.bin"):
                parts = [(firmware, STM32_TEXT1)]
                first = firmware.with_name(firmware.name[:-len("1.bin")] + "0.bin")
                if first.is_file():
                    _check_pyboard_parts(first, firmware)
            elif firmware.name.endswith("firmware0.bin"):
                second = firmware.with_name(firmware.name[:-len("0.bin")] + "1.bin")
                if second.is_file():
                    _check_pyboard_parts(firmware, second)
                    parts.append((second, STM32_TEXT1))
                else:
                    notes.append(f"{second.name} not found beside {firmware.name}: writing the first part only")
            if tool_choice == "dfu-util":
                if ext == ".hex":
                    raise FlashError(f"{firmware}: dfu-util cannot write .hex files; use firmware.dfu")
                tool = _need_tool("dfu-util", ("dfu-util",))
                for path, addr in parts:
                    steps.append(Step(argv=[tool, "-a", "0", "-s", f"0x{addr:08X}", "-D", str(path)]))
            else:
                tool = _need_tool("st-flash", ("st-flash",))
                if ext == ".hex":
                    steps.append(Step(argv=[tool, "--format", "ihex", "write", str(firmware)]))
                else:
                    for path, addr in parts:
                        steps.append(Step(argv=[tool, "write", str(path), f"0x{addr:08X}"]))
    if romfs is not None:
        data = _check_romfs(romfs, board)
        notes.append(_romfs_note(board, len(data)))
        use = tool_choice
        if use is None:
            use = "st-flash" if find_tool(("st-flash",)) or not find_tool(("dfu-util",)) else "dfu-util"
        if use == "dfu-util":
            tool = _need_tool("dfu-util", ("dfu-util",))
            steps.append(Step(argv=[tool, "-a", "0", "-s", f"0x{board.romfs_addr:08X}", "-D", str(romfs)]))
        else:
            tool = _need_tool("st-flash", ("st-flash",))
            steps.append(Step(argv=[tool, "write", str(romfs), f"0x{board.romfs_addr:08X}"]))
    return steps, notes


def plan(board_name: str, firmware: Path | None = None, romfs: Path | None = None, port: str | None = None,
         baud: int = ESP32_BAUD, tool: str | None = None, dry_run: bool = False) -> tuple[list[Step], list[str]]:
    """The steps that write `firmware` and/or the ROMFS image `romfs` to a board, and notes to print.
    `dry_run`: a tool not found is no error: its commands are planned by its
    name, and a note says how to install it."""
    global _missing
    _missing = [] if dry_run else None
    try:
        steps, notes = _plan(board_name, firmware, romfs, port, baud, tool)
        return steps, notes + [f"{m} (dry run: its commands are shown all the same)" for m in _missing or []]
    finally:
        _missing = None


def _plan(board_name: str, firmware: Path | None, romfs: Path | None, port: str | None, baud: int,
          tool: str | None) -> tuple[list[Step], list[str]]:
    if board_name not in BOARDS:
        raise FlashError(f"unknown board {board_name}: boards are {', '.join(BOARDS)}")
    board = BOARDS[board_name]
    if firmware is None and romfs is None:
        raise FlashError("nothing to write: give FIRMWARE, --romfs IMAGE or both")
    if tool is not None and tool not in TOOLS[board_name]:
        raise FlashError(f"--tool {tool}: {board_name} is written with {' or '.join(TOOLS[board_name])}")
    if board_name == "ESP32_GENERIC":
        return plan_esp32(board, firmware, romfs, port, baud, tool)
    if board_name == "RPI_PICO":
        return plan_rp2040(board, firmware, romfs, port, tool)
    steps, notes = plan_stm32(board, firmware, romfs, tool)
    if port:
        notes.insert(0, f"--port {port} is not used: dfu-util (USB DFU) and st-flash (ST-LINK) "
                        "find the board themselves")
    return steps, notes


def run_steps(steps: list[Step], dry_run: bool) -> int:
    """Runs (or with dry_run prints) each step. The vendors' tools show
    their own progress; a copy to the drive and a written file are timed
    on stderr (progress.py)."""
    from . import progress

    for n, step in enumerate(steps, 1):
        print(step.text(), flush=True)
        if dry_run:
            continue
        if step.argv is not None:
            rc = subprocess.run(step.argv).returncode
            if rc != 0:
                print(f"tflm-host flash: {step.argv[0]} failed (exit status {rc})", file=sys.stderr)
                return 1
        elif step.copy is not None:
            src, dst = step.copy
            with progress.step(f"step {n}/{len(steps)}: copying {src.name} ({src.stat().st_size:,} bytes) "
                               f"to {dst}"):
                shutil.copyfile(src, dst / src.name)
                if hasattr(os, "sync"):
                    os.sync()
        else:
            path, data = step.write
            with progress.step(f"step {n}/{len(steps)}: writing {path.name}"):
                path.write_bytes(data)
    return 0


# ---------------------------------------------------------------------------
# Romfs regions read from the board files (the tests compare them with BOARDS)


def romfs_region_from_files(board_name: str, port_boards: Path) -> tuple[int, int]:
    """(address, size) of a board's ROMFS region, as its files in port_boards/ set it."""
    if board_name == "RPI_PICO":
        text = (port_boards / "RPI_PICO" / "mpconfigboard.h").read_text()

        def define(name: str) -> int:
            m = re.search(rf"#define\s+{name}\s+\(([0-9\s*]+)\)", text)  # e.g. (384 * 1024)
            if not m:
                raise ValueError(f"{name} not set")
            value = 1
            for factor in m.group(1).split("*"):
                value *= int(factor)
            return value

        flash_bytes = 2 * 1024 * 1024  # PICO_BOARD "pico": 2 MiB
        storage, romfs = define("MICROPY_HW_FLASH_STORAGE_BYTES"), define("MICROPY_HW_ROMFS_BYTES")
        return RP2040_FLASH_BASE + flash_bytes - storage - romfs, romfs
    if board_name == "ESP32_GENERIC":
        for line in (port_boards / "ESP32_GENERIC" / "partitions-tflm-4MiB.csv").read_text().splitlines():
            cells = [c.strip() for c in line.split(",")]
            if cells and cells[0] == "romfs":
                return int(cells[3], 0), int(cells[4], 0)
        raise ValueError("no romfs partition")
    if board_name == "PYBV11":
        text = (port_boards / "PYBV11" / "tflm_pybv11.ld").read_text()
        m = re.search(r"FLASH_ROMFS\s*\([a-z]*\)\s*:\s*ORIGIN\s*=\s*(0x[0-9A-Fa-f]+),\s*LENGTH\s*=\s*(\d+)K", text)
        if not m:
            raise ValueError("no FLASH_ROMFS region")
        return int(m.group(1), 16), int(m.group(2)) * 1024
    raise ValueError(board_name)


# ---------------------------------------------------------------------------
# Command line


def cmd_flash(args) -> int:
    try:
        from . import progress

        progress.set_quiet(args.quiet)
        steps, notes = plan(args.board, Path(args.firmware) if args.firmware else None,
                            Path(args.romfs) if args.romfs else None, args.port, args.baud, args.tool,
                            dry_run=args.dry_run)
        for n in notes:
            print(n)
        return run_steps(steps, args.dry_run)
    except (FlashError, OSError) as e:
        print(f"tflm-host flash: {e}", file=sys.stderr)
        return 2


def _baud(text: str) -> int:
    """An argparse type: a baud rate, a whole number above 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value}: a baud rate is above 0")
    return value


def add_parser(sub) -> argparse.ArgumentParser:
    """Registers `flash` on an argparse subparsers object."""
    p = sub.add_parser(
        "flash", help="write firmware and/or a ROMFS image to a real board (esptool, picotool, dfu-util, st-flash)",
        description="Writes FIRMWARE (and/or a ROMFS image) to a real board with its vendor's tool, printing "
                    "each command. ESP32_GENERIC: firmware.bin at 0x1000 with esptool. RPI_PICO: a .uf2 copied "
                    "to the RPI-RP2 drive, or picotool. PYBV11: firmware.dfu with dfu-util, firmware.hex or the "
                    ".bin files with st-flash.")
    p.add_argument("board", choices=sorted(BOARDS))
    p.add_argument("firmware", nargs="?", help="the firmware file (optional with --romfs)")
    p.add_argument("--port", help="serial port (ESP32_GENERIC); mount point of the RPI-RP2 drive (RPI_PICO)")
    p.add_argument("--romfs", metavar="IMAGE",
                   help="also (or only) write this ROMFS image (tflm-host romfs) to the board's ROMFS region")
    p.add_argument("--baud", type=_baud, default=ESP32_BAUD, help="esptool's baud rate (ESP32_GENERIC)")
    p.add_argument("--tool", choices=sorted({t for ts in TOOLS.values() for t in ts}),
                   help="use this tool rather than the one picked (RPI_PICO: picotool or drive; "
                        "PYBV11: dfu-util or st-flash)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the commands, run nothing (the tools need not be installed)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_flash)

    # argparse (before Python 3.13) gives an optional positional nothing when
    # an option comes between it and the one before (BOARD --port P FIRMWARE)
    # and leaves FIRMWARE unrecognized: take it from the leftovers.
    parse_known = p.parse_known_args

    def parse_known_args(args=None, namespace=None):
        ns, extras = parse_known(args, namespace)
        if getattr(ns, "firmware", None) is None:
            for i, a in enumerate(extras):
                if not a.startswith("-"):
                    ns.firmware = extras.pop(i)
                    break
        return ns, extras

    p.parse_known_args = parse_known_args
    return p
