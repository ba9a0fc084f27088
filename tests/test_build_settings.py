"""The module's C builds with the settings a build may ask for, warnings as
errors as MicroPython's ports build it:

- the optimization levels other than the default -O2 (TFLM_KERNEL_OPT: -Os
  with `TFLM_KERNEL_OPT=` on most ports, -Og with the stm32 port's
  DEBUG=1, -O3, and -O1 on the Cortex-M4) for every Arm core family,
  position-independent too for tflm.mpy's, with the flags the build files add at that level
  (kernels/arch.h's TFLM_KERNEL_O2=0 unless the level is -O2). The inline
  assembly's operands are register-allocated by GCC, and what it can place
  depends on the level: a block that fits at -O2 can fail at -Os
  ("impossible constraints"). Every source for the Cortex-M4 (PYBV11,
  NETDUINOPLUS2): GCC's warnings differ by level too; for the other cores
  the sources that hold assembly, themselves or through the kernels'
  headers;
- every op alone (`TFLM_OPS="OP"`, as `tflm-host ops` prints it for a model
  of that one op): the sources that name the op's flag, where helpers
  shared by several ops are left unused when only one is built in.

The other tests build the default settings."""

from __future__ import annotations

import functools
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import ROOT
from tflm_host.schema import flag_name

MOD = ROOT / "micropython_mod"
CPUS = {"cortex-m0": ["-mcpu=cortex-m0"], "cortex-m3": ["-mcpu=cortex-m3"],
        "cortex-m4": ["-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
        "cortex-m7": ["-mcpu=cortex-m7", "-mfloat-abi=hard", "-mfpu=fpv5-d16"]}
# -O2 is what every firmware and tflm.mpy here builds (the other tests;
# make compile-check for the Cortex-M7 too). -O1 on the Cortex-M4 alone,
# where every source is compiled; position-independent code for the cores
# tflm.mpy is built for (armv6m, armv7m, armv7emsp).
LEVELS = {"cortex-m0": ["-Os", "-Og", "-O3"], "cortex-m3": ["-Os", "-Og", "-O3"],
          "cortex-m4": ["-Os", "-Og", "-O1", "-O3"], "cortex-m7": ["-Os", "-Og", "-O3"]}
NATMOD_CPUS = ("cortex-m0", "cortex-m3", "cortex-m4")
CC = "arm-none-eabi-gcc"
# MicroPython's stm32 port's warnings (its Makefile) beside -Wall -Werror.
PORT_WARNINGS = ["-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror", "-Wdouble-promotion", "-Wfloat-conversion",
                 "-Wpointer-arith"]


def opt_defs_line() -> str:
    """micropython.mk's TFLM_KERNEL_OPT_DEFS line, which natmod.mk repeats
    (and micropython.cmake says in CMake: the last -O level, if not -O2,
    adds -DTFLM_KERNEL_O2=0)."""
    lines = [re.search(r"^TFLM_KERNEL_OPT_DEFS :=.*$", (MOD / f).read_text(), re.M) for f in ("micropython.mk", "natmod.mk")]
    assert all(lines), "TFLM_KERNEL_OPT_DEFS in micropython.mk and natmod.mk"
    assert lines[0].group(0) == lines[1].group(0), "natmod.mk's TFLM_KERNEL_OPT_DEFS differs from micropython.mk's"
    return lines[0].group(0)


@functools.cache
def level_flags(level: str) -> tuple[str, ...]:
    """The kernels' flags with TFLM_KERNEL_OPT=level: the level and what
    the build files' line adds, evaluated by make."""
    makefile = f"{opt_defs_line()}\nall:\n\t@echo $(TFLM_KERNEL_OPT_DEFS)\n"
    proc = subprocess.run(["make", "-s", "-f", "-", f"TFLM_KERNEL_OPT={level}"], input=makefile, capture_output=True,
                          text=True, check=True)
    return (level, *proc.stdout.split())


def test_opt_defs():
    """The build files' line: TFLM_KERNEL_O2=0 unless the last level is -O2."""
    assert level_flags("-O2") == ("-O2",)
    assert level_flags("-O3 -O2") == ("-O3 -O2",)
    for level in ("-Os", "-Og", "-O1", "-O3", "-O2 -O3", "", "-g"):
        assert level_flags(level) == (level, "-DTFLM_KERNEL_O2=0"), level


def natmod_armv7emsp() -> tuple[set[str], list[str]]:
    """natmod.mk's flags for the armv7emsp kernels (position-independent
    Cortex-M4 code), and the kernels it leaves them out of."""
    text = (MOD / "natmod.mk").read_text()
    found = re.search(r"^ifeq \(\$\(ARCH\),armv7emsp\)\n\$\(filter-out ([^,]+),.*\n\s*CFLAGS \+= (.+)\nendif",
                      text, re.M)
    assert found, "natmod.mk's armv7emsp kernel flags"
    return {Path(p).stem for p in found.group(1).split()}, found.group(2).split()


NATMOD_ARMV7EMSP = natmod_armv7emsp()


def sources_with_asm() -> list[Path]:
    """The kernel sources (and the engine's) that hold __asm__, themselves
    or through the headers they include from micropython_mod."""
    memo: dict[Path, bool] = {}

    def has_asm(path: Path) -> bool:
        if path not in memo:
            memo[path] = False
            text = path.read_text()
            memo[path] = "__asm__" in text or any(
                has_asm(MOD / inc) for inc in re.findall(r'^#include "([^"]+)"', text, re.M) if (MOD / inc).is_file())
        return memo[path]

    found = [p for p in sorted([*MOD.glob("kernels/*.c"), *MOD.glob("engine/*.c")]) if has_asm(p)]
    assert {"conv_s8.c", "depthwise_conv_s8.c", "fully_connected.c", "mm_s8.c"} <= {p.name for p in found}
    return found


@pytest.mark.parametrize("cpu", sorted(CPUS))
def test_kernels_compile_at_every_level(cpu, tmp_path):
    # The Cortex-M4 (PYBV11, NETDUINOPLUS2) every source, as the firmware
    # builds them: GCC's warnings differ by level too (-O3's "may be used
    # uninitialized").
    every = sorted([*MOD.glob("kernels/*.c"), *MOD.glob("engine/*.c")]) if cpu == "cortex-m4" else sources_with_asm()
    pics = ([], ["-fpic"]) if cpu in NATMOD_CPUS else ([],)
    jobs = [(level, pic, src) for level in LEVELS[cpu] for pic in pics for src in (sources_with_asm() if pic else every)]

    def compile_one(job) -> str | None:
        level, pic, src = job
        out = tmp_path / f"{src.stem}{level}{''.join(pic)}.o"
        natmod = NATMOD_ARMV7EMSP[1] if pic and cpu == "cortex-m4" and \
            src.stem not in NATMOD_ARMV7EMSP[0] else []
        cmd = [CC, "-std=c99", *PORT_WARNINGS, "-mthumb", *CPUS[cpu], *level_flags(level), *pic, *natmod,
               f"-I{MOD}", "-c", str(src), "-o", str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if proc.returncode == 0:
            return None
        errors = [line for line in proc.stderr.splitlines() if "error" in line]
        return f"{src.name} {level} {' '.join(pic)}: {'; '.join(errors[:3])}"

    with ThreadPoolExecutor(2) as pool:
        failures = [f for f in pool.map(compile_one, jobs) if f]
    assert not failures, f"{cpu}:\n" + "\n".join(failures)


KERNEL_TABLE = MOD / "kernels" / "kernel_table.txt"


def op_flag(op: str) -> str:
    return "TFLM_KERNEL_" + flag_name(op)


def test_each_op_alone_compiles(tmp_path):
    ops = [line.split()[0] for line in KERNEL_TABLE.read_text().splitlines() if line and not line.startswith("#")]
    sources = sorted([*MOD.glob("kernels/*.c"), *MOD.glob("engine/*.c")])
    texts = {src: src.read_text() for src in sources}
    jobs = [(op, src) for op in ops for src in sources if re.search(rf"\b{op_flag(op)}\b", texts[src])]
    assert len({op for op, _ in jobs}) == len(ops), "an op whose flag no source names"

    def compile_one(job) -> str | None:
        op, src = job
        cmd = [CC, "-std=c99", "-O2", "-mthumb", *CPUS["cortex-m4"], *PORT_WARNINGS, "-DTFLM_KERNELS_DEFAULT=0",
               f"-D{op_flag(op)}=1", f"-I{MOD}", "-c", str(src), "-o", str(tmp_path / f"{src.stem}-{op_flag(op)}.o")]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if proc.returncode == 0:
            return None
        return f"{op} alone, {src.name}: {'; '.join(line for line in proc.stderr.splitlines() if 'error' in line)}"

    with ThreadPoolExecutor(2) as pool:
        failures = [f for f in pool.map(compile_one, jobs) if f]
    assert not failures, "\n".join(failures)
