"""Builds the tflm_host._engine extension from the module's C engine.

In a checkout the sources are ../micropython_mod (the firmware's own). An
sdist carries a copy of them in engine_src/ (written when the sdist is made),
so a wheel built from it is the same engine. The boards' descriptions,
../port_boards/<BOARD>/board.json, go into the package as
tflm_host/board_data/<BOARD>.json the same way (in the sdist, and in a wheel
built from the checkout), with the heap and ROMFS region the board's files
give; tflm_host.board_info reads those copies where there is no checkout. The project's metadata is in pyproject.toml.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent / "micropython_mod"
SHIPPED = HERE / "engine_src"
BOARDS = HERE.parent / "port_boards"
BOARD_DATA = "tflm_host/board_data"  # the package's copies of the boards' descriptions
# The parts of the module the host builds: no binding (that is MicroPython's).
PARTS = ("engine", "kernels")


def in_checkout() -> bool:
    return HERE.name == "host_tools" and (CHECKOUT / "engine" / "version.h").is_file()


def source_root() -> Path:
    """An sdist's copy when there is one, else the checkout's sources."""
    return SHIPPED if (SHIPPED / "engine").is_dir() or not in_checkout() else CHECKOUT


def version() -> str:
    text = (source_root() / "engine" / "version.h").read_text()
    return re.search(r'#define TFLM_VERSION "([^"]+)"', text).group(1)


def engine_extension() -> Extension:
    root = source_root()
    rel = Path("..") / "micropython_mod" if root == CHECKOUT else Path("engine_src")
    sources = ["tflm_host/_engine.c"]
    for part in PARTS:
        sources += sorted(str(rel / part / p.name) for p in (root / part).glob("*.c"))
    return Extension(
        "tflm_host._engine",
        sources=sources,
        include_dirs=[str(rel)],
        # As the firmware builds it: no fused multiply-add (results round as
        # TFLM's reference kernels do), C99.
        extra_compile_args=["-std=gnu99", "-O2", "-ffp-contract=off"],
    )


def copy_board_data(dest: Path) -> None:
    """port_boards/<BOARD>/board.json -> dest/<BOARD>.json, with the heap and
    ROMFS region the board's files give (tflm_host.boards.files_budget, the
    standard library only): `tflm-host arena --board` reads them where there
    is no checkout."""
    sys.path.insert(0, str(HERE))
    from tflm_host.boards import files_budget

    dest.mkdir(parents=True, exist_ok=True)
    for src in sorted(BOARDS.glob("*/board.json")):
        board = json.loads(src.read_text())
        b = files_budget(src.parent.name, src.parent)
        board["budget"] = {"heap": b.heap, "romfs": b.romfs, "heap_source": b.heap_source}
        (dest / f"{src.parent.name}.json").write_text(json.dumps(board, indent=2) + "\n")


class BuildPyWithBoards(build_py):
    """A wheel built from the checkout carries the boards' descriptions (one
    built from an sdist has them as package data already)."""

    def run(self) -> None:
        super().run()
        # (An editable install reads port_boards/ itself.)
        if in_checkout() and not (HERE / BOARD_DATA).is_dir() and not getattr(self, "editable_mode", False):
            copy_board_data(Path(self.build_lib) / BOARD_DATA)


class SdistWithEngine(sdist):
    """Copies the engine's C sources into the sdist (engine_src/)."""

    def run(self) -> None:
        if not in_checkout():
            super().run()  # an sdist made from an sdist: the copy is there
            return
        if SHIPPED.exists():
            shutil.rmtree(SHIPPED)
        try:
            for part in PARTS:
                shutil.copytree(CHECKOUT / part, SHIPPED / part, ignore=shutil.ignore_patterns("*.o", "*.d"))
            shutil.copy2(CHECKOUT / "tflm_config.h", SHIPPED / "tflm_config.h")
            copy_board_data(HERE / BOARD_DATA)
            # The sdist lists the copies: sources named ../micropython_mod
            # would be written beside the staging folder, outside the sdist.
            self.distribution.ext_modules = [engine_extension()]
            # egg_info would merge its old file list (written by an editable
            # install, naming ../micropython_mod) into the new one.
            for old in HERE.glob("*.egg-info/SOURCES.txt"):
                old.unlink()
            super().run()
        finally:
            # Builds in the checkout take the checkout's sources, never a stale copy.
            shutil.rmtree(SHIPPED)
            shutil.rmtree(HERE / BOARD_DATA, ignore_errors=True)


setup(
    version=version(),
    packages=find_packages(include=["tflm_host", "tflm_host.*"]),
    # The RP2040 emulator's driver and its pinned npm dependency (`make deps` installs it);
    # the boards' descriptions when an sdist carries them.
    package_data={"tflm_host": ["pico/emulator.cjs", "pico/package.json", "pico/package-lock.json",
                                "board_data/*.json"]},
    include_package_data=False,
    ext_modules=[engine_extension()],
    cmdclass={"sdist": SdistWithEngine, "build_py": BuildPyWithBoards},
)
