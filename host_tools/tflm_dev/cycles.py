"""The cycle estimator (host_tools/cycles, a QEMU TCG plugin) from Python:
the plugin's arguments for a board, its mark lines parsed, bare-metal ELF
files run under it on a QEMU machine or in the RP2040 emulator.

A mark is an instruction address: each time it is about to run, the
estimator writes the counts so far (instructions, cycles nominal / least /
most, per class, events); the difference of two marks is what ran between
them. The RP2040 emulator's runner (pico/bare.cjs) writes the same lines
for its own instruction and cycle counters."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tflm_host import board_info
from tflm_host.device import build_dir, checkout, elf_symbol

# The core each QEMU board's CPU stands for (port_boards/<BOARD>/board.json's
# cycles: the boards the estimator times). MICROBIT's nRF51 is a Cortex-M0;
# the project's Cortex-M0 board stands for the RP2040, so it is timed as the
# RP2040's Cortex-M0+ (single-cycle multiplier).
BOARD_CORES = {b.name: b.cycles.core for b in board_info.boards() if b.cycles and b.cycles.estimator}
CORE_NAMES = {"m0": "Cortex-M0", "m0plus": "Cortex-M0+", "m3": "Cortex-M3", "m4": "Cortex-M4",
              "lx6": "Xtensa LX6"}


@dataclass(frozen=True)
class RealBoard:
    """The real board a QEMU board's figures stand for: its clock, and its
    flash as the estimator models it: the cache in front of it (LINES:BYTES:
    WAYS; the data cache, or "unified") and the cycles a missed line costs,
    the stated figure. `core`: the board's core (for a board the estimator
    does not time, not in BOARD_CORES, the only word of it)."""
    chip: str
    hz: int
    icache: str = ""
    dcache: str = ""
    penalty: int = 0
    note: str = ""
    core: str = ""


# The boards the QEMU boards stand for, and the real boards' own
# (port_boards/<BOARD>/board.json; docs/speed.md states these figures).
REAL_BOARDS = {b.name: RealBoard(b.cycles.chip, b.cycles.clock_hz,
                                 b.cycles.flash_cache.icache if b.cycles.flash_cache else "",
                                 b.cycles.flash_cache.dcache if b.cycles.flash_cache else "",
                                 b.cycles.flash_cache.miss_cycles if b.cycles.flash_cache else 0,
                                 b.cycles.note, b.cycles.core)
               for b in board_info.boards() if b.cycles}


def elf_text_end(elf: Path) -> int:
    """The end of the .text section (code and constants) of a 32-bit ELF."""
    import struct
    data = elf.read_bytes()
    shoff, = struct.unpack_from("<I", data, 0x20)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x2E)
    sections = [struct.unpack_from("<IIIIIIIIII", data, shoff + i * shentsize) for i in range(shnum)]
    names = sections[shstrndx][4]
    for sh in sections:
        name = data[names + sh[0]:data.index(b"\0", names + sh[0])]
        if name == b".text":
            return sh[3] + sh[5]
    raise KeyError(f"no .text in {elf}")


def flash_regions(board: str, elf: Path, romfs: tuple[int, int] | None = None) -> list[tuple[int, int]]:
    """What the real board keeps in flash, in the QEMU board's address map."""
    b = board_info.get(board) if board in board_info.names() else None
    cache = b.cycles.flash_cache if b and b.cycles else None
    regions = []
    for r in cache.regions if cache else ():
        if r == "romfs":  # the firmware's ROMFS region, where the real board has it in flash
            if romfs:
                regions.append(romfs)
        else:  # (base, size), the size "text": up to the end of the firmware's code and constants
            base, size = r
            regions.append((base, elf_text_end(elf) - base if size == "text" else size))
    return regions


def plugin_path() -> Path:
    """The estimator, built by `make cycles-plugin` (part of `make deps`)."""
    path = build_dir() / "cycles" / "libtflm_cycles.so"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: run `make cycles-plugin`")
    return path


def plugin_option(core: str, marks: list[int], out: Path, board: str | None = None,
                  flash: list[tuple[int, int]] | None = None, profile: bool = False) -> str:
    """The value of QEMU's -plugin option; with `flash`, the regions whose
    accesses go through the board's modelled flash cache; with `profile`,
    the blocks' cycles at each mark too (parse_profile)."""
    args = [str(plugin_path()), f"core={core}", f"out={out}"] + [f"mark={m & ~1:#x}" for m in marks]
    if profile:
        args.append("profile=1")
    real = REAL_BOARDS.get(board or "")
    if real and real.icache and flash:
        args += [f"flash={base:#x}:{size:#x}" for base, size in flash]
        args += [f"icache={real.icache}", f"dcache={real.dcache}"]
    return ",".join(args)


@dataclass
class Counts:
    """The counters at a mark (or their difference over an interval)."""
    pc: int = 0
    insns: int = 0
    cycles: int = 0
    min: int = 0
    max: int = 0
    classes: dict[str, tuple[int, int]] = field(default_factory=dict)  # class: (executed, cycles)
    events: dict[str, int] = field(default_factory=dict)

    def __sub__(self, other: "Counts") -> "Counts":
        return Counts(self.pc, self.insns - other.insns, self.cycles - other.cycles, self.min - other.min,
                      self.max - other.max,
                      {k: (v[0] - other.classes.get(k, (0, 0))[0], v[1] - other.classes.get(k, (0, 0))[1])
                       for k, v in self.classes.items()},
                      {k: v - other.events.get(k, 0) for k, v in self.events.items()})

    def div(self, n: int) -> "Counts":
        """Every counter divided by n (a mean over n runs), rounded down."""
        return Counts(self.pc, self.insns // n, self.cycles // n, self.min // n, self.max // n,
                      {k: (v[0] // n, v[1] // n) for k, v in self.classes.items()},
                      {k: v // n for k, v in self.events.items()})

    def __add__(self, other: "Counts") -> "Counts":
        return Counts(self.pc, self.insns + other.insns, self.cycles + other.cycles, self.min + other.min,
                      self.max + other.max,
                      {k: (v[0] + other.classes.get(k, (0, 0))[0], v[1] + other.classes.get(k, (0, 0))[1])
                       for k, v in self.classes.items()},
                      {k: v + other.events.get(k, 0) for k, v in self.events.items()})


_FIELD = re.compile(r"(\S+)=(\S+)")


def parse_marks(text: str) -> list[Counts]:
    """The mark lines of the estimator's (or bare.cjs's) output, in order."""
    marks = []
    for line in text.splitlines():
        if not line.startswith("mark "):
            continue
        kv = dict(_FIELD.findall(line))
        c = Counts(int(kv.pop("pc"), 16), int(kv.pop("insns")), int(kv.pop("cycles")),
                   int(kv.pop("min", 0)), int(kv.pop("max", 0)))
        for k, v in kv.items():
            if k.startswith("n."):
                name = k[2:]
                c.classes[name] = (int(v), int(kv.get("c." + name, 0)))
            elif not k.startswith("c."):
                c.events[k] = int(v)
        marks.append(c)
    return marks


def parse_profile(text: str) -> list[dict[int, int]]:
    """The blocks' lines of the estimator's output with profile=1, per mark:
    entry k maps each translated block's first address to the nominal
    cycles it took between mark k - 1 (or the start) and mark k."""
    spans: list[dict[int, int]] = []
    for line in text.splitlines():
        if line.startswith("mark "):
            spans.append({})
        elif line.startswith("block ") and spans:
            parts = line.split()
            at = int(parts[1], 16)
            spans[-1][at] = spans[-1].get(at, 0) + int(parts[3].split("=", 1)[1])
    return spans


def by_function(elf: Path, blocks: dict[int, int]) -> dict[str, int]:
    """Blocks' cycles (parse_profile) summed per function of `elf` holding
    the block's first address ('?' where none does)."""
    from tflm_host.device import elf_function_finder
    find = elf_function_finder(elf)
    out: dict[str, int] = {}
    for at, cyc in blocks.items():
        f = find(at)
        name = f[0] if f else "?"
        out[name] = out.get(name, 0) + cyc
    return out


def flash_cycles(board: str, c: Counts) -> int:
    """The stated flash figure: missed lines times the board's penalty."""
    real = REAL_BOARDS.get(board)
    if not real or not real.penalty:
        return 0
    return (c.events.get("flash_imiss", 0) + c.events.get("flash_dmiss", 0)) * real.penalty


# -- bare-metal programs ------------------------------------------------------------

def qemu_boards_by_core() -> dict[str, str]:
    """Core -> the first QEMU board (in order) whose CPU is it or is timed as it:
    the machine a bare-metal program for that core runs on."""
    found: dict[str, str] = {}
    for b in board_info.boards():
        if b.cycles and b.cycles.estimator:
            for core in (b.cycles.emulated_core or b.cycles.core, b.cycles.core):
                found.setdefault(core, b.name)
    return found


def _qemu_machine_args(board: str) -> list[str]:
    mk = checkout(f"board {board}") / "port_boards" / board / "mpconfigboard.mk"
    m = re.search(r"^TFLM_QEMU_ARGS\s*=\s*(.*)$", mk.read_text(), re.M)
    return m.group(1).split() if m else []


def run_qemu_elf(elf: Path, core: str, marks: list[int], board: str | None = None, timeout: float = 600,
                 extra: list[str] | None = None) -> tuple[list[Counts], str]:
    """Runs a bare-metal ELF (semihosting output and exit) on the QEMU
    machine of `core` (or of `board`) under the estimator, with `board`'s
    flash model; returns its marks and output."""
    text, output = _qemu_elf(elf, core, marks, board, timeout, extra, False)
    return parse_marks(text), output


def profile_qemu_elf(elf: Path, core: str, marks: list[int], timeout: float = 600
                     ) -> tuple[list[Counts], list[dict[int, int]]]:
    """run_qemu_elf with profile=1: its marks and each span's blocks
    (parse_profile)."""
    text, _ = _qemu_elf(elf, core, marks, None, timeout, None, True)
    return parse_marks(text), parse_profile(text)


def _qemu_elf(elf: Path, core: str, marks: list[int], board: str | None, timeout: float, extra: list[str] | None,
              profile: bool) -> tuple[str, str]:
    """The estimator's output and the program's, for run_qemu_elf."""
    qboard = board if board and board in BOARD_CORES else qemu_boards_by_core()[core]
    machine = board_info.make_setting(qboard, "QEMU_MACHINE")
    with tempfile.TemporaryDirectory(prefix="tflm-cycles-") as tmp:
        out = Path(tmp, "marks.txt")
        plugin = plugin_option(core, marks, out, board, flash_regions(board or "", elf), profile)
        cmd = ["qemu-system-arm", "-machine", machine, *_qemu_machine_args(qboard), "-nographic", "-monitor", "none",
               "-serial", "null", "-semihosting", "-kernel", str(elf), "-plugin", plugin, *(extra or [])]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"QEMU failed on {elf}: {proc.stderr[-2000:]}")
        text = out.read_text() if out.is_file() else ""
    # QEMU writes the semihosting console to its standard error.
    return text, proc.stdout + proc.stderr


def pico_bare_runner() -> Path:
    return Path(__file__).resolve().parent / "pico" / "bare.cjs"


def run_pico_elf(elf: Path, marks: list[int], timeout: float = 600) -> tuple[list[Counts], str]:
    """Runs a bare-metal ELF in the RP2040 emulator (rp2040js): its
    instruction and cycle counters at each mark, and its output."""
    node = shutil.which("node")
    modules = build_dir() / "rp2040js" / "node_modules"
    if not node or not (modules / "rp2040js").is_dir():
        raise FileNotFoundError(f"the RP2040 emulator is not installed in {modules.parent}: run `make deps`")
    cmd = [node, str(pico_bare_runner()), str(elf)] + [f"{m & ~1:#x}" for m in marks]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, NODE_PATH=str(modules)))
    if proc.returncode != 0:
        raise RuntimeError(f"the RP2040 emulator failed on {elf}: {proc.stderr[-2000:]}")
    return parse_marks(proc.stdout), "\n".join(l for l in proc.stdout.splitlines() if not l.startswith("mark "))


def symbols(elf: Path, prefix: str) -> dict[str, int]:
    """The ELF's symbols starting with `prefix` (nm), name: address."""
    proc = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True)
    out = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].startswith(prefix):
            out[parts[2]] = int(parts[0], 16)
    return out


def symbol(elf: Path, name: str) -> int:
    return elf_symbol(elf, name)


# -- the microbenchmarks (tests/cycles) -----------------------------------------------

MICROBENCH_DIR = Path(__file__).resolve().parents[2] / "tests" / "cycles"
# core: (source, compiler flags, FLASH, RAM): each QEMU machine's addresses,
# and the RP2040's for the emulator ("rp2040").
MICROBENCH_BUILDS = {
    "m0": ("bench_v6m.S", "-mcpu=cortex-m0", 0x0, 0x20000000),
    "m0plus": ("bench_v6m.S", "-mcpu=cortex-m0plus", 0x0, 0x20000000),
    "rp2040": ("bench_v6m.S", "-mcpu=cortex-m0plus", 0x10000000, 0x20000000),
    "m3": ("bench_v7m.S", "-mcpu=cortex-m3", 0x0, 0x200000),
    "m4": ("bench_v7m.S", "-mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard", 0x0, 0x20000000),
}


def build_microbench(core: str, out_dir: Path) -> Path:
    source, flags, flash, ram = MICROBENCH_BUILDS[core]
    out_dir.mkdir(parents=True, exist_ok=True)
    elf = out_dir / f"bench_{core}.elf"
    subprocess.run(["arm-none-eabi-gcc", "-mthumb", *flags.split(), "-nostdlib", f"-Wl,--defsym=FLASH={flash:#x}",
                    f"-Wl,--defsym=RAM={ram:#x}", "-T", str(MICROBENCH_DIR / "bench.ld"), "-o", str(elf),
                    str(MICROBENCH_DIR / source)], check=True, capture_output=True, text=True)
    return elf


def run_microbench(core: str, out_dir: Path) -> dict[str, Counts]:
    """Each microbenchmark's counts (c_NAME to e_NAME) on `core`: the
    estimator on QEMU, or the RP2040 emulator for "rp2040"."""
    elf = build_microbench(core, out_dir)
    syms = symbols(elf, "c_") | symbols(elf, "e_")
    if core == "rp2040":
        marks, _ = run_pico_elf(elf, list(syms.values()), timeout=120)
    else:
        marks, _ = run_qemu_elf(elf, core, list(syms.values()), timeout=120)
    at = {m.pc: m for m in marks}
    cases = {}
    for name, start in syms.items():
        if name.startswith("c_"):
            end = syms["e_" + name[2:]]
            if (start & ~1) not in at or (end & ~1) not in at:
                raise RuntimeError(f"{core}: case {name[2:]} did not run to its end")
            cases[name[2:]] = at[end & ~1] - at[start & ~1]
    return cases


# -- the engine, bare metal, on the estimator and on the RP2040 emulator ------------

# The RPI_PICO firmware's flags for the module (port_boards/boards.mk,
# compile-check's cortex-m0plus): the engine at -Os, the kernels at -O2.
ENGINE_FLAGS = ("-mcpu=cortex-m0plus -mthumb -mfloat-abi=soft -std=gnu99 -ffp-contract=off -ffunction-sections "
                "-fdata-sections -DNDEBUG -Wall -Werror").split()
ENGINE_RAM_BYTES = 256 * 1024
# Where each machine holds the program (flash) and its data (RAM).
ENGINE_LAYOUTS = {"microbit": (0x0, 0x20000000), "rp2040": (0x10000000, 0x20000000)}


def _ops_dir(work: Path, ops: tuple[str, ...]) -> Path:
    """The build folder of a kernel selection (all kernels: `work` itself)."""
    return work / ("ops-" + "-".join(sorted(o.lower() for o in ops))) if ops else work


def engine_objects(work: Path, workers: int = 2, ops: tuple[str, ...] = ()) -> list[Path]:
    """The engine, its kernels (all, or `ops`: TFLM_OPS) and the runner
    compiled once for ARMv6-M."""
    from concurrent.futures import ThreadPoolExecutor

    work = _ops_dir(work, ops)
    select = ["-DTFLM_KERNELS_DEFAULT=0"] + [f"-DTFLM_KERNEL_{o}=1" for o in ops] if ops else []

    root = Path(__file__).resolve().parents[2]
    mod = root / "micropython_mod"
    sources = sorted((mod / "engine").glob("*.c")) + sorted((mod / "kernels").glob("*.c"))
    sources.append(MICROBENCH_DIR / "engine_main.c")
    headers = max(p.stat().st_mtime for p in mod.rglob("*.h"))
    jobs, objs = [], []
    for src in sources:
        obj = work / "obj" / f"{src.parent.name}_{src.stem}.o"
        objs.append(obj)
        if not obj.is_file() or obj.stat().st_mtime < max(src.stat().st_mtime, headers):
            opt = "-O2" if src.parent.name == "kernels" else "-Os"
            jobs.append(["arm-none-eabi-gcc", *ENGINE_FLAGS, *select, opt, f"-I{mod}", "-c", str(src), "-o", str(obj)])
    (work / "obj").mkdir(parents=True, exist_ok=True)

    def one(cmd):
        # Written beside, then renamed: test processes may build the same objects at once.
        obj = Path(cmd[-1])
        tmp = obj.with_name(f"{obj.name}.{os.getpid()}.tmp")
        proc = subprocess.run(cmd[:-1] + [str(tmp)], capture_output=True, text=True)
        if proc.returncode:
            raise RuntimeError(f"{' '.join(cmd)}\n{proc.stderr[-3000:]}")
        os.replace(tmp, obj)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        list(pool.map(one, jobs))
    return objs


def engine_elf(model: Path, machine: str, work: Path, workers: int = 2, ops: tuple[str, ...] = ()) -> Path:
    """The engine runner with `model` linked in, for "microbit" or "rp2040"."""
    objs = engine_objects(work, workers, ops)
    work = _ops_dir(work, ops)
    flash, ram = ENGINE_LAYOUTS[machine]
    tag = f"{model.stem}.{os.getpid()}"
    model_obj = work / "models" / f"{tag}.o"
    model_obj.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["arm-none-eabi-objcopy", "-I", "binary", "-O", "elf32-littlearm", "-B", "arm",
                    "--rename-section", ".data=.model,alloc,load,readonly,data,contents",
                    "--set-section-alignment", ".model=16", str(model), str(model_obj)],
                   check=True, capture_output=True)
    elf = work / machine / f"{tag}.elf"
    elf.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["arm-none-eabi-gcc", *ENGINE_FLAGS, "-nostartfiles", "-specs=nano.specs",
                    f"-Wl,--defsym=FLASH={flash:#x}", f"-Wl,--defsym=RAM={ram:#x}",
                    f"-Wl,--defsym=RAM_BYTES={ENGINE_RAM_BYTES:#x}", "-T", str(MICROBENCH_DIR / "engine.ld"),
                    "-Wl,--gc-sections", "-Wl,-e,Reset_Handler", "-o", str(elf), *map(str, objs), str(model_obj),
                    "-lm", "-lc", "-lgcc", "-lnosys"], check=True, capture_output=True, text=True)
    return elf


@dataclass
class EngineCheck:
    """One invoke of a model by the same object code: the estimator's
    Cortex-M0+ figures (QEMU microbit) and the RP2040 emulator's."""
    model: str
    estimator: Counts
    emulator: Counts
    output_qemu: str
    output_pico: str

    @property
    def difference(self) -> float:
        """(estimator - emulator) / emulator, in cycles."""
        return (self.estimator.cycles - self.emulator.cycles) / self.emulator.cycles

    @property
    def explained(self) -> int:
        """Cycles the emulator leaves out by its PUSH/POP rule (LR and PC not
        in N): one per PUSH with LR and per POP with PC."""
        return self.estimator.events.get("push_lr", 0) + self.estimator.events.get("pop_pc", 0)


def engine_check(model: Path, work: Path, workers: int = 2, timeout: float = 1800,
                 ops: tuple[str, ...] = ()) -> EngineCheck:
    results = {}
    for machine in ENGINE_LAYOUTS:
        elf = engine_elf(model, machine, work, workers, ops)
        mark = symbol(elf, "bench_mark")
        if machine == "microbit":
            marks, out = run_qemu_elf(elf, "m0plus", [mark], timeout=timeout)
        else:
            marks, out = run_pico_elf(elf, [mark], timeout=timeout)
        elf.unlink()
        if "error" in out or len(marks) != 2:
            raise RuntimeError(f"{model.name} on {machine}: {out[-500:]}")
        results[machine] = (marks[1] - marks[0], out.strip())
    for obj in _ops_dir(work, ops).glob(f"models/{model.stem}.{os.getpid()}.o"):
        obj.unlink()
    return EngineCheck(model.name, results["microbit"][0], results["rp2040"][0], results["microbit"][1],
                       results["rp2040"][1])
