"""The project's boards, one description each: port_boards/<BOARD>/board.json.

Every list of boards and every per-board fact the host tools and the
Makefile use comes from these files (tests/test_board_info.py holds them to
it); what a board's build reads itself (mpconfigboard.mk's QEMU_MACHINE and
MICROPY_HEAP_SIZE, linker regions, mpconfigboard.h) stays in the board's
own files. A board.json holds:

  order        int: its place in every list (the README's table, `make help`, CLI choices)
  port         MicroPython port: "qemu", "rp2", "stm32" or "esp32"
  emulator     what runs its firmware here: "qemu-arm" (QEMU's Arm machine of its
               mpconfigboard.mk), "rp2040js", "qemu-esp32" (Espressif's QEMU), or null
  make_test    bool: `make test` builds its firmware
  variant_of   the board whose firmware this one changes (its flash map is that board's)
  chip         a real board's chip
  cycles       how speed figures are stated: core (the cycle estimator's core model, or
               the core of a board timed otherwise), estimator (bool: timed by the QEMU
               plugin), emulated_core (the QEMU machine's own core, where it differs),
               chip and clock_hz (the real board a QEMU board's figures stand for, else
               the board's own chip), flash_cache (icache, dcache, miss_cycles, and
               regions: what the real board keeps in flash, in the QEMU board's map), note
  cmsis_nn     CMSIS-NN's harness for the board's core: core (its name in tables),
               cflags, ld (the harness's linker script)
  cmsis_nn_stand_in  the board whose CMSIS-NN build runs the same instruction set
  stack_core   the core whose C stack use this board's figures stand for (docs/boards.md)
  flash        a real board's ROMFS region and how `tflm-host flash` writes it:
               romfs_addr, romfs_size, romfs_source (the board file that sets the
               region), firmware_types, build_output (in build/<BOARD>), tools, takes
  demo         the line `tflm-host demo` introduces the board with
  readme       what and status: the README's board table, {facts} from the board's files
  natmod       the stock firmware `make test` loads tflm.mpy on (a board of the qemu
               port, or rp2's RPI_PICO: MicroPython's own board definition): arch
               (the .mpy's, `make natmod ARCH=`), models (the shared models it is
               built for and tested with, `tflm-host ops --natmod`; absent: every
               kernel)
  budget       only in the copies a package carries (setup.py writes it from the
               board's files, never typed into port_boards/): heap, romfs (bytes)
               and heap_source, what `tflm-host arena --board` reads there
               without a checkout (tflm_host.boards.files_budget)

Standard library only: the Makefile reads the boards through
`python3 -m tflm_host.board_info make-vars` before any virtual environment
exists. In a checkout the files are read from port_boards/; an installed
tflm-host reads the copies its wheel carries (tflm_host/board_data/, copied
by setup.py when the package is built).
"""

from __future__ import annotations

import functools
import json
import sys
from dataclasses import dataclass
from pathlib import Path

PORTS = ("qemu", "rp2", "stm32", "esp32")
EMULATORS = ("qemu-arm", "rp2040js", "qemu-esp32")
# The ports whose stock firmware `make firmware-stock` builds (natmod entries).
STOCK_PORTS = ("qemu", "rp2")
SHIPPED = Path(__file__).resolve().parent / "board_data"
CHECKOUT = Path(__file__).resolve().parents[2] / "port_boards"


class BoardFileError(ValueError):
    """A board.json that does not follow the schema above."""


@dataclass(frozen=True)
class FlashCache:
    icache: str  # LINES:BYTES:WAYS, as the estimator models it
    dcache: str  # the same, or "unified"
    miss_cycles: int  # what a missed line costs, the stated figure
    # What the real board keeps in flash, in the QEMU board's address map:
    # (base, size) with size an int or "text" (to the end of the firmware's
    # .text), or "romfs" (the firmware's ROMFS region).
    regions: tuple[tuple[int, int | str] | str, ...] = ()


@dataclass(frozen=True)
class Cycles:
    core: str
    estimator: bool = False
    emulated_core: str = ""
    chip: str = ""
    clock_hz: int = 0
    flash_cache: FlashCache | None = None
    note: str = ""


@dataclass(frozen=True)
class CmsisCore:
    """CMSIS-NN's harness built for a QEMU board's core and machine."""
    board: str
    core: str  # what the tables call it
    cpu: str  # compiler flags for the core
    ld: str  # the harness's linker script

    @property
    def hz(self) -> int:
        """SysTick's clock on that QEMU machine (TFLM_CPU_HZ of its mpconfigboard.mk)."""
        return int(make_setting(self.board, "TFLM_CPU_HZ"))


@dataclass(frozen=True)
class Flash:
    romfs_addr: int  # the address tools write the ROMFS image to
    romfs_size: int
    romfs_source: str  # the board file that sets the region
    firmware_types: tuple[str, ...]
    build_output: str  # what `make firmware BOARD=...` writes, in build/<BOARD>
    tools: tuple[str, ...]
    takes: str  # the firmware files it takes, for messages


@dataclass(frozen=True)
class Board:
    name: str
    order: int
    port: str
    emulator: str | None
    make_test: bool
    variant_of: str | None = None
    chip: str = ""
    cycles: Cycles | None = None
    cmsis_nn: CmsisCore | None = None
    cmsis_nn_stand_in: str | None = None
    stack_core: str = ""
    flash: Flash | None = None
    demo: str = ""
    readme_what: str = ""
    readme_status: str = ""
    natmod_arch: str = ""
    natmod_models: tuple[str, ...] | None = None  # None: the whole module
    budget: tuple[int, int, str] | None = None  # a package's copy: (heap, romfs, heap_source)

    @property
    def real(self) -> bool:
        """Firmware of a real board's port (not the qemu port's)."""
        return self.port != "qemu"


def _take(d: dict, where: str, required: tuple[str, ...], optional: tuple[str, ...]) -> dict:
    if not isinstance(d, dict):
        raise BoardFileError(f"{where}: an object expected")
    missing = [k for k in required if k not in d]
    unknown = [k for k in d if k not in required + optional]
    if missing or unknown:
        raise BoardFileError(f"{where}: " + "; ".join(
            ([f"missing {', '.join(missing)}"] if missing else []) + ([f"unknown {', '.join(unknown)}"] if unknown else [])))
    return d


def _int(v: object, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise BoardFileError(f"{where}: a number expected")
    try:
        return v if isinstance(v, int) else int(v, 0)
    except ValueError:
        raise BoardFileError(f"{where}: {v!r} is not a number") from None


def _region(r: object, where: str) -> tuple[int, int | str] | str:
    if r == "romfs":
        return r
    if not isinstance(r, list) or len(r) != 2:
        raise BoardFileError(f"{where}: [base, size] or \"romfs\" expected, not {r!r}")
    return _int(r[0], where), r[1] if r[1] == "text" else _int(r[1], where)


def parse(name: str, d: dict, where: str = "") -> Board:
    """A board from its board.json's object (checked against the schema)."""
    where = where or f"port_boards/{name}/board.json"
    _take(d, where, ("order", "port", "emulator", "make_test"),
          ("variant_of", "chip", "cycles", "cmsis_nn", "cmsis_nn_stand_in", "stack_core", "flash", "demo", "readme",
           "natmod", "budget"))
    if d["port"] not in PORTS:
        raise BoardFileError(f"{where}: port {d['port']!r} is none of {', '.join(PORTS)}")
    if d["emulator"] is not None and d["emulator"] not in EMULATORS:
        raise BoardFileError(f"{where}: emulator {d['emulator']!r} is none of {', '.join(EMULATORS)} (or null)")
    cycles = None
    if "cycles" in d:
        c = _take(d["cycles"], f"{where}: cycles", ("core",),
                  ("estimator", "emulated_core", "chip", "clock_hz", "flash_cache", "note"))
        cache = None
        if "flash_cache" in c:
            fc = _take(c["flash_cache"], f"{where}: cycles.flash_cache", ("icache", "dcache", "miss_cycles", "regions"), ())
            cache = FlashCache(fc["icache"], fc["dcache"], _int(fc["miss_cycles"], f"{where}: miss_cycles"),
                               tuple(_region(r, f"{where}: cycles.flash_cache.regions") for r in fc["regions"]))
        cycles = Cycles(c["core"], bool(c.get("estimator", False)), c.get("emulated_core", ""),
                        c.get("chip") or d.get("chip", ""), _int(c.get("clock_hz", 0), f"{where}: clock_hz"),
                        cache, c.get("note", ""))
    cmsis = None
    if "cmsis_nn" in d:
        c = _take(d["cmsis_nn"], f"{where}: cmsis_nn", ("core", "cflags", "ld"), ())
        cmsis = CmsisCore(name, c["core"], c["cflags"], c["ld"])
    flash = None
    if "flash" in d:
        f = _take(d["flash"], f"{where}: flash", ("romfs_addr", "romfs_size", "romfs_source", "firmware_types",
                                                  "build_output", "tools", "takes"), ())
        flash = Flash(_int(f["romfs_addr"], f"{where}: romfs_addr"), _int(f["romfs_size"], f"{where}: romfs_size"),
                      f"port_boards/{name}/{f['romfs_source']}", tuple(f["firmware_types"]),
                      f"build/{name}/{f['build_output']}", tuple(f["tools"]), f["takes"])
    readme = _take(d.get("readme", {"what": "", "status": ""}), f"{where}: readme", ("what", "status"), ())
    natmod = _take(d.get("natmod", {"arch": ""}), f"{where}: natmod", ("arch",), ("models",))
    if natmod["arch"] and d["port"] not in STOCK_PORTS:
        raise BoardFileError(f"{where}: natmod: stock firmware is built for the {' and '.join(STOCK_PORTS)} "
                             "ports' boards only")
    models = natmod.get("models")
    if models is not None and (not isinstance(models, list) or not models
                               or not all(isinstance(m, str) and m.endswith(".tflite") for m in models)):
        raise BoardFileError(f"{where}: natmod.models: a list of .tflite file names expected")
    budget = None
    if "budget" in d:
        b = _take(d["budget"], f"{where}: budget", ("heap", "romfs", "heap_source"), ())
        budget = (_int(b["heap"], f"{where}: budget.heap"), _int(b["romfs"], f"{where}: budget.romfs"),
                  str(b["heap_source"]))
    return Board(name, _int(d["order"], f"{where}: order"), d["port"], d["emulator"], bool(d["make_test"]),
                 d.get("variant_of"), d.get("chip", ""), cycles, cmsis, d.get("cmsis_nn_stand_in"),
                 d.get("stack_core", ""), flash, d.get("demo", ""), readme["what"], readme["status"],
                 natmod["arch"], tuple(models) if models is not None else None, budget)


def board_files() -> dict[str, Path]:
    """Board name -> its board.json: port_boards/ in a checkout, else the
    copies an installed wheel carries (in a checkout, setup.py writes those
    while it builds a package: a reader there must not see them half written)."""
    found = {p.parent.name: p for p in sorted(CHECKOUT.glob("*/board.json"))}
    return found or {p.stem: p for p in sorted(SHIPPED.glob("*.json"))}


@functools.lru_cache(maxsize=1)
def boards() -> tuple[Board, ...]:
    """Every board, in order."""
    found = []
    for name, path in board_files().items():
        try:
            d = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise BoardFileError(f"{path}: {e}") from None
        if "budget" in d and path.is_relative_to(CHECKOUT):
            raise BoardFileError(f"{path}: budget is written into a package's copies (setup.py), not here")
        found.append(parse(name, d))
    if not found:
        raise BoardFileError(f"no board descriptions in {SHIPPED} or {CHECKOUT}")
    found.sort(key=lambda b: b.order)
    names = {b.name for b in found}
    for b in found:
        for other in (b.variant_of, b.cmsis_nn_stand_in):
            if other is not None and other not in names:
                raise BoardFileError(f"port_boards/{b.name}/board.json names {other}, which is no board")
    orders = [b.order for b in found]
    if len(set(orders)) != len(orders):
        raise BoardFileError("two boards have the same order")
    return tuple(found)


def get(name: str) -> Board:
    for b in boards():
        if b.name == name:
            return b
    raise KeyError(f"unknown board {name} (boards: {', '.join(names())})")


def names(**match: object) -> tuple[str, ...]:
    """The boards whose fields equal `match`, in order: names(port="qemu")."""
    return tuple(b.name for b in boards() if all(getattr(b, k) == v for k, v in match.items()))


def release_boards() -> tuple[str, ...]:
    """The boards whose firmware `make dist` ships: the real boards that are
    no other board's variant (a variant such as PYBV11_QEMU serves the tests)."""
    return tuple(b.name for b in boards() if b.real and not b.variant_of)


def make_setting(name: str, var: str) -> str:
    """`VAR = value` of a board's mpconfigboard.mk in the project's checkout (what its build reads)."""
    import re

    from .device import checkout

    mk = checkout(f"board {name}") / "port_boards" / name / "mpconfigboard.mk"
    m = re.search(rf"^{var}\s*=\s*(.*?)\s*$", mk.read_text(), re.M) if mk.is_file() else None
    if not m:
        raise ValueError(f"{mk} sets no {var}")
    return m.group(1)


# -- for the Makefile ----------------------------------------------------------------


def make_vars() -> dict[str, list[str]]:
    """The Makefile's board variables: QEMU_BOARDS (the qemu port's), REAL_BOARDS
    (the other ports'), TESTED_REAL_BOARDS (those `make test` builds),
    RELEASE_BOARDS (those `make dist` ships), REAL_PORT_<BOARD>, NATMOD_BOARDS
    (stock firmware with tflm.mpy in `make test`), NATMOD_ARCH_<BOARD> and
    NATMOD_MODELS_<BOARD> (empty: the whole module)."""
    out = {"QEMU_BOARDS": [b.name for b in boards() if not b.real],
           "REAL_BOARDS": [b.name for b in boards() if b.real],
           "TESTED_REAL_BOARDS": [b.name for b in boards() if b.real and b.make_test],
           "RELEASE_BOARDS": list(release_boards()),
           "NATMOD_BOARDS": [b.name for b in boards() if b.natmod_arch]}
    for b in boards():
        if b.real:
            out[f"REAL_PORT_{b.name}"] = [b.port]
        if b.natmod_arch:
            out[f"NATMOD_ARCH_{b.name}"] = [b.natmod_arch]
            out[f"NATMOD_MODELS_{b.name}"] = list(b.natmod_models or ())
    return out


def main(argv: list[str]) -> int:
    if argv[:1] != ["make-vars"] or len(argv) != 1:
        print("usage: python3 -m tflm_host.board_info make-vars", file=sys.stderr)
        return 2
    try:
        # One word per variable (make's $(shell) joins lines): NAME=v1,v2.
        print(" ".join(f"{k}={','.join(v)}" for k, v in make_vars().items()))
    except BoardFileError as e:
        print(f"tflm_host.board_info: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
