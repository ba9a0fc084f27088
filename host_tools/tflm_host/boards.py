"""The real boards' firmware, measured from the linked ELF files: firmware
bytes against the flash region they must fit, the MicroPython heap, and the
ROMFS region, which must stay free of firmware; what a board holds for a
model (`tflm-host arena --board`); the README's board table.

  python -m tflm_host.boards check BOARD BUILD_DIR   (make firmware runs it after linking)

`check` needs only the standard library (it runs before `make deps` may have
made the virtual environment). The report of docs/boards.md, which runs the
firmware, is the checkout's (tflm_dev/boards_report.py, make boards-report).
"""

from __future__ import annotations

import argparse
import re
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

from . import board_info
from .device import build_dir, checkout
from .flash import BOARDS

# The real boards `make test` builds (ESP32_GENERIC from the offline ESP-IDF
# of ../shared/sdk/esp32, or your own), and their variants, such as the
# pyboard firmware's for QEMU (port_boards/PYBV11_QEMU): board.json's.
BUILT_BOARDS = tuple(b.name for b in board_info.boards() if b.real and b.make_test and not b.variant_of)
VARIANTS = {b.name: b.variant_of for b in board_info.boards() if b.variant_of}
RP2040_FLASH = (0x10000000, 2 * 1024 * 1024)


@dataclass
class Elf:
    segments: list[tuple[int, int, int]]  # loadable: (load address, bytes in the file, bytes in memory)
    sections: dict[str, tuple[int, int]]  # allocated: name -> (address, size)
    symbols: dict[str, int]


def read_elf(path: Path) -> Elf:
    """Program headers, allocated sections and symbols of a 32-bit little-endian ELF file."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        raise ValueError(f"{path} is not a 32-bit little-endian ELF file")
    phoff, shoff = struct.unpack_from("<II", data, 0x1C)
    phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", data, 0x2A)
    segments = []
    for i in range(phnum):
        p_type, _, _, p_paddr, p_filesz, p_memsz = struct.unpack_from("<IIIIII", data, phoff + i * phentsize)
        if p_type == 1 and p_memsz:  # PT_LOAD
            segments.append((p_paddr, p_filesz, p_memsz))
    headers = [struct.unpack_from("<IIIIIIIIII", data, shoff + i * shentsize) for i in range(shnum)]

    def name_at(table: int, offset: int) -> str:
        start = headers[table][4] + offset
        return data[start:data.index(b"\0", start)].decode()

    sections, symbols = {}, {}
    for sh in headers:
        if sh[2] & 2 and sh[5]:  # SHF_ALLOC, not empty
            sections[name_at(shstrndx, sh[0])] = (sh[3], sh[5])
        if sh[1] == 2:  # SHT_SYMTAB
            for off in range(sh[4], sh[4] + sh[5], 16):
                st_name, st_value = struct.unpack_from("<II", data, off)
                if st_name:
                    symbols[name_at(sh[6], st_name)] = st_value
    return Elf(segments, sections, symbols)


@dataclass
class Region:
    name: str
    start: int
    size: int

    @property
    def end(self) -> int:
        return self.start + self.size

    def bytes_used(self, elf: Elf) -> int:
        """Bytes of the firmware stored in this region (loadable segments, as
        far as they overlap it)."""
        used = 0
        for addr, filesz, _ in elf.segments:
            lo, hi = max(addr, self.start), min(addr + filesz, self.end)
            used += max(0, hi - lo)
        return used

    def bytes_placed(self, elf: Elf) -> int:
        """Bytes of the segments that start in this region, whole: more than
        its size when the firmware overflows it."""
        return sum(filesz for addr, filesz, _ in elf.segments if self.start <= addr < self.end)


@dataclass
class Figures:
    board: str
    firmware: Path
    text: Region  # the region the firmware's code and constants must fit
    text_used: int
    other_used: dict[str, int]  # other firmware regions: bytes used
    romfs: Region
    romfs_used: int  # firmware bytes inside the ROMFS region (must be 0)
    data: int  # initialised RAM (.data, copied from flash)
    bss: int
    heap: int  # the MicroPython heap, where arenas are allocated

    @property
    def text_left(self) -> int:
        return self.text.size - self.text_used

    def problems(self) -> list[str]:
        out = []
        if self.text_used > self.text.size:
            out.append(f"{self.board}: the firmware takes {self.text_used} bytes of the {self.text.size}-byte "
                       f"{self.text.name} region: build with fewer kernels (TFLM_OPS=..., tflm-host ops MODEL)")
        if self.romfs_used:
            out.append(f"{self.board}: {self.romfs_used} bytes of firmware lie in the ROMFS region at "
                       f"{self.romfs.start:#x}")
        return out


def linker_regions(script: Path, writable: bool | None = None) -> dict[str, Region]:
    """The MEMORY regions of a linker script (ORIGIN = 0x..., LENGTH = nK or
    nM); with `writable`, only those whose attributes say so (or not)."""
    regions = {}
    for m in re.finditer(r"^\s*(\w+)\s*\(([a-z]+)\)\s*:\s*ORIGIN\s*=\s*(0x[0-9A-Fa-f]+)\s*,\s*LENGTH\s*=\s*(\d+)([KM])",
                         script.read_text(), re.M):
        if writable is None or ("w" in m.group(2)) == writable:
            unit = 1024 if m.group(5) == "K" else 1024 * 1024
            regions[m.group(1)] = Region(m.group(1), int(m.group(3), 16), int(m.group(4)) * unit)
    return regions


def section_bytes(elf: Elf, prefix: str) -> int:
    return sum(size for name, (_, size) in elf.sections.items() if name.startswith(prefix))


def figures(board: str, build: Path) -> Figures:
    """A built firmware's figures: `build` is its folder (build/<BOARD>)."""
    elf_path = build / ("micropython.elf" if board == "ESP32_GENERIC" else "firmware.elf")
    elf = read_elf(elf_path)
    name, board = board, VARIANTS.get(board, board)  # a variant has its board's flash map
    romfs = Region("ROMFS", BOARDS[board].romfs_addr, BOARDS[board].romfs_size)
    sym = elf.symbols
    if board == "RPI_PICO":
        # The firmware owns the flash below the ROMFS region (port_boards/RPI_PICO/mpconfigboard.h).
        text = Region("firmware", RP2040_FLASH[0], romfs.start - RP2040_FLASH[0])
        other: dict[str, int] = {}
        heap = sym["__GcHeapEnd"] - sym["__GcHeapStart"]
        firmware = build / "firmware.uf2"
    elif board == "PYBV11":
        regions = linker_regions(checkout("the board report") / "port_boards" / "PYBV11" / "tflm_pybv11.ld")
        text = regions["FLASH_TEXT"]
        other = {"FLASH_START": regions["FLASH_START"].bytes_used(elf),
                 "FLASH_FS": regions["FLASH_FS"].bytes_used(elf)}
        heap = sym["_heap_end"] - sym["_heap_start"]
        firmware = build / "firmware.dfu"
    elif board == "ESP32_GENERIC":
        return esp32_figures(build, elf, romfs)
    else:
        raise ValueError(f"no figures for {board} (boards: {', '.join(BUILT_BOARDS + tuple(VARIANTS))})")
    return Figures(name, firmware, text, text.bytes_placed(elf), other, romfs, romfs.bytes_used(elf),
                   section_bytes(elf, ".data"), section_bytes(elf, ".bss"), heap)


# The ESP32's data RAM (SRAM2 and SRAM1 as DRAM): ESP-IDF's heap has all of it
# but the firmware's static data and what the ROM keeps (its data at the
# start of DRAM, the two cores' ROM data in SRAM1: ESP-IDF's esp32 memory
# layout). MicroPython's heap starts in it and grows into it
# (MICROPY_GC_SPLIT_HEAP_AUTO).
ESP32_DRAM = (0x3FFAE000, 0x40000000)
ESP32_ROM_DATA = (0x3FFAE000, 0x3FFAE6E0), (0x3FFE0000, 0x3FFE0440), (0x3FFE3F20, 0x3FFE4350)


def esp32_partitions(csv: Path) -> dict[str, tuple[int, int]]:
    """name -> (offset, size) of a partition table in ESP-IDF's CSV form."""
    parts = {}
    for line in csv.read_text().splitlines():
        cells = [c.strip() for c in line.split("#", 1)[0].split(",")]
        if len(cells) >= 5 and cells[3]:
            parts[cells[0]] = (int(cells[3], 0), int(cells[4], 0))
    return parts


def esp32_table(data: bytes) -> dict[str, tuple[int, int]]:
    """name -> (offset, size) of a built partition table (partition-table.bin:
    32-byte entries with the magic 0xAA50)."""
    parts = {}
    for off in range(0, len(data) - 31, 32):
        magic, _, _, offset, size = struct.unpack_from("<HBBII", data, off)
        if magic != 0x50AA:
            break
        parts[data[off + 12:off + 28].split(b"\0", 1)[0].decode()] = (offset, size)
    return parts


def esp32_figures(build: Path, elf: Elf, romfs: Region) -> Figures:
    """The app image in the factory partition, the bootloader below the
    partition table, the ROMFS partition (the built table must have it where
    tflm-host writes images), and ESP-IDF's DRAM heap."""
    table = esp32_table((build / "partition_table" / "partition-table.bin").read_bytes())
    csv = esp32_partitions(checkout("the board report") / "port_boards" / "ESP32_GENERIC" / "partitions-tflm-4MiB.csv")
    if table != csv:
        raise ValueError(f"{build}: the built partition table {table} is not port_boards' {csv}")
    app = Region("factory app", *table["factory"])
    app_bytes = (build / "micropython.bin").stat().st_size
    boot_bytes = (build / "bootloader" / "bootloader.bin").stat().st_size  # at 0x1000, below the table at 0x8000
    overlap = max(0, min(app.start + app_bytes, romfs.end) - max(app.start, romfs.start))
    if table.get("romfs") != (romfs.start, romfs.size):
        overlap = romfs.size  # images would land elsewhere than the firmware's ROMFS partition
    sym = elf.symbols
    static = sym["_heap_start"] - sym["_data_start"]
    heap = ESP32_DRAM[1] - ESP32_DRAM[0] - static - sum(hi - lo for lo, hi in ESP32_ROM_DATA) \
        - (ESP32_DRAM[1] - sym.get("_heap_end", ESP32_DRAM[1]))
    data = section_bytes(elf, ".dram0.data")
    return Figures("ESP32_GENERIC", build / "firmware.bin", app, app_bytes,
                   {"bootloader": boot_bytes}, romfs, overlap,
                   data, static - data, heap)


def check(board: str, build: Path) -> int:
    f = figures(board, build)
    for problem in f.problems():
        print(problem, file=sys.stderr)
    if f.problems():
        return 1
    extra = "".join(f", {name} {used:,} B" for name, used in f.other_used.items())
    print(f"{board}: firmware {f.text_used:,} B of the {f.text.size // 1024} KiB {f.text.name} region at "
          f"{f.text.start:#010x} ({f.text_left:,} B left{extra}); ROMFS region at {f.romfs.start:#010x} "
          f"({f.romfs.size // 1024} KiB) free; heap {f.heap:,} B")
    return 0


# -- the README's board table -------------------------------------------------------
#
# Its figures (flash maps, ROMFS regions, QEMU machines) come from the board
# files in port_boards/ (board_facts); the words around them are the
# templates below. `make boards-report` writes it into README.md and
# tests/test_readme.py holds the README to it.

README_TABLE_BEGIN = "<!-- generated by make boards-report from port_boards/: begin -->"
README_TABLE_END = "<!-- generated by make boards-report from port_boards/: end -->"

# The unix port's row, then board -> (what it is, with {facts} of
# board_facts, what is checked).
README_UNIX_ROW = "| unix port (x86-64) | `make unix` | built and tested in CI |"
README_BOARDS: dict[str, tuple[str, str]] = {b.name: (b.readme_what, b.readme_status) for b in board_info.boards()}


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n % (1024 * 1024) == 0 else f"{n // 1024} KiB"


def _at(n: int) -> str:
    return f"`{n:#010x}`"


def board_facts(board: str) -> dict[str, str]:
    """What a board's files in port_boards/ say, worded for the README:
    each region of its linker scripts (NAME: its size, NAME_at: its start),
    `flash` and `ram` (the read-only and the writable regions that lie in no
    other, summed), each partition of an ESP32 partition table, each
    MICROPY_HW_..._BYTES of its mpconfigboard.h (lower case), its QEMU
    machine and MCU (mpconfigboard.mk), and for a real board its ROMFS region
    (romfs, romfs_at) where those files do not say it, as `tflm-host flash`
    writes it (flash.BOARDS, which tests/test_flash.py holds to them)."""
    root = checkout("the board table") / "port_boards" / board
    facts: dict[str, str] = {}
    mk = (root / "mpconfigboard.mk").read_text() if (root / "mpconfigboard.mk").is_file() else ""
    for key, var in (("machine", "QEMU_MACHINE"), ("mcu", "TFLM_MCU_NAME")):
        m = re.search(rf"^{var}\s*=\s*(\S+)", mk, re.M)
        if m:
            facts[key] = m.group(1)
    for script in sorted(root.glob("*.ld")):
        for writable, key in ((False, "flash"), (True, "ram")):
            regions = linker_regions(script, writable).values()
            outer = [r for r in regions if not any(o is not r and o.start <= r.start and r.end <= o.end
                                                   for o in regions)]
            if outer:
                facts[key] = _size(sum(r.size for r in outer))
        for r in linker_regions(script).values():
            facts[r.name], facts[f"{r.name}_at"] = _size(r.size), _at(r.start)
    for csv in sorted(root.glob("partitions*.csv")):
        for name, (offset, size) in esp32_partitions(csv).items():
            facts[name], facts[f"{name}_at"] = _size(size), _at(offset)
    header = root / "mpconfigboard.h"
    if header.is_file():
        for m in re.finditer(r"^#define MICROPY_HW_(\w+)_BYTES \((\d+) \* 1024\)", header.read_text(), re.M):
            facts[m.group(1).lower()] = _size(int(m.group(2)) * 1024)
    if board in BOARDS:  # what the files above do not say (the Pico's ROMFS address)
        facts.setdefault("romfs", _size(BOARDS[board].romfs_size))
        facts.setdefault("romfs_at", _at(BOARDS[board].romfs_addr))
    return facts


# -- what a board holds for a model (tflm-host arena --board) --------------------

@dataclass
class Budget:
    board: str
    heap: int  # bytes of MicroPython heap a model in RAM and its arena share
    romfs: int  # bytes of the ROMFS region (models used in place from it)
    heap_source: str  # where the heap figure comes from


def budget(board: str) -> Budget:
    """The heap and ROMFS region of a board: a real board's heap from its
    built firmware (its ELF) when there is one, else files_budget(); an
    installed tflm-host without a checkout takes what files_budget() gave
    when its package was built (board_info's budget)."""
    if board not in board_info.names():
        raise ValueError(f"unknown board {board} (boards: {', '.join(board_info.names())})")
    try:
        root = checkout("a board's figures") / "port_boards" / board
    except RuntimeError:
        shipped = board_info.get(board).budget
        if shipped is None:
            raise
        heap, romfs, source = shipped
        return Budget(board, heap, romfs, f"{source}, when this tflm-host was built")
    if board_info.get(board).real and board != "ESP32_GENERIC":
        build = build_dir("a board's figures") / board
        if (build / "firmware.elf").is_file():
            return Budget(board, figures(board, build).heap, BOARDS[VARIANTS.get(board, board)].romfs_size,
                          "the built firmware (firmware.elf)")
    return files_budget(board, root)


def files_budget(board: str, root: Path) -> Budget:
    """The heap and ROMFS region a board's files give (`root`: its folder of
    port_boards/): a QEMU board's MICROPY_HEAP_SIZE and ROMFS linker region;
    a real board's ROMFS region (flash.BOARDS, checked against its files) and
    the TFLM_HEAP_BYTES its mpconfigboard.h records from `make boards-report`.
    setup.py ships these figures with the package (board_info's budget)."""
    mk = root / "mpconfigboard.mk"
    heap = re.search(r"^MICROPY_HEAP_SIZE\s*=\s*(\d+)", mk.read_text(), re.M) if mk.is_file() else None
    if heap:
        rom = [r for script in sorted(root.glob("*.ld")) for r in linker_regions(script).values() if r.name == "ROMFS"]
        return Budget(board, int(heap.group(1)), rom[0].size, f"MICROPY_HEAP_SIZE in port_boards/{board}")
    m = re.search(r"^#define TFLM_HEAP_BYTES \((\d+)\)", (root / "mpconfigboard.h").read_text(), re.M)
    if not m:
        raise ValueError(f"port_boards/{board}/mpconfigboard.h records no TFLM_HEAP_BYTES")
    return Budget(board, int(m.group(1)), BOARDS[VARIANTS.get(board, board)].romfs_size,
                  f"TFLM_HEAP_BYTES in port_boards/{board}/mpconfigboard.h")


def readme_board_table() -> str:
    """The README's board table, its figures from port_boards/."""
    lines = ["| board | what | status |", "|---|---|---|", README_UNIX_ROW]
    for board, (what, status) in README_BOARDS.items():
        try:
            what = what.format(**board_facts(board))
        except KeyError as e:
            raise ValueError(f"port_boards/{board} says nothing of {e} (its board.json's readme)") from None
        lines.append(f"| `{board}` | {what} | {status} |")
    return "\n".join(lines) + "\n"


def update_section(path: Path, begin: str, end: str, body: str) -> None:
    """Rewrites what lies between a file's `begin` and `end` markers."""
    doc = path.read_text()
    start, stop = doc.find(begin), doc.find(end)
    if start < 0 or stop < start:
        raise ValueError(f"{path} has no {begin} ... {end} section")
    path.write_text(doc[:start + len(begin)] + "\n" + body.rstrip("\n") + "\n" + doc[stop:])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tflm_host.boards", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="fail unless a built firmware fits its flash map")
    c.add_argument("board", choices=BUILT_BOARDS + tuple(VARIANTS))
    c.add_argument("build", type=Path)
    args = p.parse_args(argv)
    return check(args.board, args.build)


if __name__ == "__main__":
    sys.exit(main())
