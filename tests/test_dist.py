"""The release folder `make dist` writes, copied to a clean path and checked
artifact by artifact: its checksums verify and its manifest names exactly
its files, with the project's and MicroPython's versions; each board's
firmware is the file `tflm-host flash` takes for it; the RPI_PICO .uf2
boots in the RP2040 emulator and runs hello_world_int8 bit-exact with TFLM;
each tflm.mpy goes through mpremote's mip from its package.json and runs
hello_world_int8 bit-exact on stock firmware of its architecture. The
wheel and sdist: tests/test_package.py (the same unpacked copy)."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import pytest
from mpremote import mip

from conftest import ROOT, dist_artifacts
from test_natmod import NatmodTarget, check_bit_exact, jobs, stock_target
from tflm_host import __version__, board_info, flash
from tflm_host.device import PicoTarget
from tflm_host.runner import run_batch

MAKEFILE = (ROOT / "Makefile").read_text()
MPY_VERSION = re.search(r"^MPY_VERSION := (\S+)$", MAKEFILE, re.M).group(1)
# The architectures the release folder holds tflm.mpy for (make dist-natmod):
# NATMOD_ARCHS but NATMOD_CHECKOUT_ARCHS.
NATMOD_ARCHS = [a for a in re.search(r"^NATMOD_ARCHS := (.+)$", MAKEFILE, re.M).group(1).split()
                if a not in re.search(r"^NATMOD_CHECKOUT_ARCHS := (.+)$", MAKEFILE, re.M).group(1).split()]
# The architectures with a second build of the core ops (mpy/<ARCH>/core/), and those ops.
CORE_ARCHS = re.search(r"^NATMOD_CORE_ARCHS := (.+)$", MAKEFILE, re.M).group(1).split()
CORE_OPS = re.search(r"^NATMOD_CORE_OPS := ((?:.*\\\n)*.*)$", MAKEFILE, re.M).group(1).replace("\\", " ").split()
# MicroPython 1.25's .mpy format (py/persistentcode.h): version 6.3 (the
# sub-version in the third byte's low bits, the architecture above them:
# the numbers of its MP_NATIVE_ARCH_... list).
MPY_FORMAT = (6, 3)
ARCH_NUMBER = {"x64": 2, "armv6m": 4, "armv7m": 5, "armv7emsp": 7}
# The stock firmware (build/<BOARD>-stock, build/unix-stock) each tflm.mpy
# with every kernel runs on: one whose loader takes the architecture and
# whose heap holds the module. MPS2_AN385 (Cortex-M3: ARMv6-M code runs on
# it, its loader takes armv6m and armv7m, 512 KiB of heap) for armv6m too:
# the whole set is more than MICROBIT's heap and the Pico's (docs/natmod.md).
RUNS_ON = {"x64": "unix", "armv6m": "MPS2_AN385", "armv7m": "MPS2_AN385"}
# armv7emsp: the one stock Cortex-M4F firmware here, NETDUINOPLUS2, has a
# 112 KiB heap; its loader takes the file and runs out of heap placing it.
TOO_BIG_FOR = {"armv7emsp": "NETDUINOPLUS2"}
HELLO = "hello_world_int8.tflite"


def manifest(folder):
    return json.loads((folder / "manifest.json").read_text())


def test_checksums_verify(dist_copy):
    proc = subprocess.run(["sha256sum", "--check", "--strict", "SHA256SUMS"], cwd=dist_copy, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = [line.split("  ", 1)[1] for line in (dist_copy / "SHA256SUMS").read_text().splitlines()]
    files = sorted(str(p.relative_to(dist_copy)) for p in dist_copy.rglob("*") if p.is_file())
    assert sorted(listed) == [f for f in files if f != "SHA256SUMS"]


def test_manifest_lists_exactly_the_files(dist_copy):
    m = manifest(dist_copy)
    assert (m["version"], m["micropython"]) == (__version__, MPY_VERSION)
    assert m["commit"] is None or re.fullmatch(r"[0-9a-f]{40}", m["commit"])
    files = sorted(str(p.relative_to(dist_copy)) for p in dist_copy.rglob("*") if p.is_file())
    assert sorted(a["file"] for a in m["artifacts"]) == [f for f in files if f not in ("manifest.json", "SHA256SUMS")]
    for a in m["artifacts"]:
        data = (dist_copy / a["file"]).read_bytes()
        assert (a["size"], a["sha256"]) == (len(data), hashlib.sha256(data).hexdigest()), a["file"]
        assert a["holds"], a["file"]
    # Every real board that is no other's variant, every architecture, one
    # wheel and one sdist of this version, the examples as they are.
    firmware = dist_artifacts(dist_copy, "firmware")
    assert [a["board"] for a in firmware] == [b.name for b in board_info.boards() if b.real and not b.variant_of]
    for a in firmware:
        board = board_info.get(a["board"])
        assert a["file"] == f"tflm-{__version__}-{board.name}{Path(board.flash.build_output).suffix}"
        assert a["heap_bytes"] > 0 and a["flash_left_bytes"] > 0, a
        if "variant" in a:  # a board variant of this project's (the ESP32's NORADIO from the offline ESP-IDF)
            assert (ROOT / "port_boards" / board.name / f"mpconfigvariant_{a['variant']}.cmake").is_file(), a
    folders = [f"mpy/{arch}" for arch in NATMOD_ARCHS] + [f"mpy/{arch}/core" for arch in CORE_ARCHS]
    assert [a["file"] for a in dist_artifacts(dist_copy, "mpy")] == [f"{f}/tflm.mpy" for f in folders]
    assert [a["file"] for a in dist_artifacts(dist_copy, "mip-package")] == [f"{f}/package.json" for f in folders]
    assert [(a["arch"], a["kernels"]) for a in dist_artifacts(dist_copy, "mpy")] == \
        [(arch, "every") for arch in NATMOD_ARCHS] + [(arch, "core") for arch in CORE_ARCHS]
    (wheel,), (sdist,) = dist_artifacts(dist_copy, "wheel"), dist_artifacts(dist_copy, "sdist")
    assert wheel["file"].startswith(f"tflm_host-{__version__}-") and wheel["file"].endswith(".whl")
    assert sdist["file"] in (f"tflm_host-{__version__}.tar.gz", f"tflm-host-{__version__}.tar.gz")
    examples = dist_artifacts(dist_copy, "example")
    assert {a["file"]: (dist_copy / a["file"]).read_bytes() for a in examples} == \
        {f"examples/{p.name}": p.read_bytes() for p in (ROOT / "examples").iterdir() if p.is_file()}


@pytest.mark.parametrize("board", board_info.release_boards())
def test_firmware_is_what_the_board_takes(dist_copy, board):
    """tflm-host flash checks the file's kind (UF2 blocks, DfuSe, an ESP
    image with its partition table) and plans the board's write of it."""
    (a,) = [a for a in dist_artifacts(dist_copy, "firmware") if a["board"] == board]
    steps, _ = flash.plan(board, firmware=dist_copy / a["file"], dry_run=True)
    assert any(str(dist_copy / a["file"]) in step.text() for step in steps), [step.text() for step in steps]


def test_pico_firmware_runs_hello_world(dist_copy):
    (a,) = [a for a in dist_artifacts(dist_copy, "firmware") if a["board"] == "RPI_PICO"]
    pico = PicoTarget(firmware=dist_copy / a["file"])
    out = pico.run(["import sys, gc, tflm\ngc.collect()\n"
                    "print(sys.implementation._build, '%d.%d.%d' % sys.implementation.version[:3], tflm.version)\n"
                    "print(gc.mem_free() + gc.mem_alloc())\n"]).split("\n")
    assert out[0].split() == ["RPI_PICO", MPY_VERSION, __version__]
    # The heap the manifest gives: the collector's blocks and its tables.
    assert 0.95 * a["heap_bytes"] < int(out[1]) <= a["heap_bytes"]
    todo = jobs([HELLO])
    check_bit_exact(run_batch(pico, todo), todo, "the release's RPI_PICO firmware")


class MemoryTransport:
    """What mpremote's mip writes to a board, kept here: path -> bytes."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.dirs: set[str] = set()

    def fs_exists(self, path: str) -> bool:
        return path in self.dirs or path in self.files

    def fs_mkdir(self, path: str) -> None:
        self.dirs.add(path)

    def fs_writefile(self, path: str, data: bytes, progress_callback=None) -> None:
        self.files[path] = bytes(data)


def mip_install(package: str) -> dict[str, bytes]:
    """`mpremote mip install PACKAGE` (a local package.json) onto a board's /lib."""
    board = MemoryTransport()
    mip._install_json(board, package, mip._PACKAGE_INDEX, "/lib", None, True)
    return board.files


@pytest.mark.parametrize("arch", NATMOD_ARCHS)
def test_mpy_installs_and_runs_on_stock_firmware(dist_copy, arch):
    (a,) = [a for a in dist_artifacts(dist_copy, "mpy") if a["arch"] == arch and a["kernels"] == "every"]
    data = (dist_copy / a["file"]).read_bytes()
    magic, version, features = data[:3]
    assert (magic, version, features & 3, features >> 2) == (ord("M"), *MPY_FORMAT, ARCH_NUMBER[arch])
    assert json.loads((dist_copy / f"mpy/{arch}/package.json").read_text())["version"] == __version__
    installed = mip_install(str(dist_copy / f"mpy/{arch}/package.json"))
    assert installed == {"/lib/tflm.mpy": data}
    if arch in TOO_BIG_FOR:
        out = NatmodTarget(stock_target(TOO_BIG_FOR[arch]), data).run(
            ["try:\n    import tflm\n    print('imported')\nexcept Exception as e:\n    print(type(e).__name__)\n"])
        assert out.split() == ["MemoryError"]
        return
    target = NatmodTarget(stock_target(RUNS_ON[arch]), data)
    out = target.run(["import sys, tflm\nprint('%d.%d.%d' % sys.implementation.version[:3], tflm.version)\n"])
    assert out.split() == [MPY_VERSION, __version__]
    todo = jobs([HELLO])
    check_bit_exact(run_batch(target, todo), todo, f"{RUNS_ON[arch]} with the release's {arch} tflm.mpy")


def test_core_mpy_runs_on_the_stock_pico(dist_copy):
    """The armv6m core build, from its mip package, on the rp2 port's own
    RPI_PICO firmware (littlefs, no ROMFS): the ops it says, and
    hello_world_int8 and kws_ref_model bit-exact with their models read into
    the heap beside it. The heap free at the prompt and the heap the import
    takes are docs/natmod.md's, within 3%."""
    assert CORE_ARCHS == ["armv6m"]
    installed = mip_install(str(dist_copy / "mpy/armv6m/core/package.json"))
    data = (dist_copy / "mpy/armv6m/core/tflm.mpy").read_bytes()
    assert installed == {"/lib/tflm.mpy": data} and data[2] >> 2 == ARCH_NUMBER["armv6m"]
    target = NatmodTarget(stock_target("RPI_PICO"), data)
    out = [line for line in target.run(["import gc\ngc.collect()\nfree = gc.mem_free()\nimport tflm\ngc.collect()\n"
                                        "print(free, free - gc.mem_free())\nprint(' '.join(tflm.ops))\n"])
           .splitlines() if line.strip()]
    assert out[1].split() == sorted(CORE_OPS)
    free, taken = map(int, out[0].split())
    doc = (ROOT / "docs" / "natmod.md").read_text()
    doc_free = int(re.search(r"On the Pico \(([\d,]+)\s+bytes of heap free", doc).group(1).replace(",", ""))
    doc_taken = int(re.search(r"^\| the core ops .*\| ([\d,]+) \(RPI_PICO\) \|$", doc, re.M).group(1).replace(",", ""))
    assert abs(free - doc_free) <= 0.03 * doc_free, f"{free:,} B free, docs/natmod.md says {doc_free:,}"
    assert abs(taken - doc_taken) <= 0.03 * doc_taken, f"import takes {taken:,} B, docs/natmod.md says {doc_taken:,}"
    todo = jobs([HELLO, "kws_ref_model.tflite"])
    check_bit_exact(run_batch(target, todo), todo, "the stock RPI_PICO firmware with the release's core tflm.mpy")


def test_natmod_md_names_the_core_build(dist_copy):
    """docs/natmod.md's core ops are the Makefile's, and its size row the
    release's file within 3%."""
    doc = (ROOT / "docs" / "natmod.md").read_text()
    listed = re.search(r"`NATMOD_CORE_OPS` alone \(([A-Z_0-9, \n]+);", doc).group(1)
    assert sorted(re.findall(r"[A-Z][A-Z_0-9]+", listed)) == sorted(CORE_OPS)
    row = re.search(r"^\| the core ops \(`NATMOD_CORE_OPS`, every type\) \| `armv6m` \| *\| ([\d,]+) \|", doc, re.M)
    documented, built = int(row.group(1).replace(",", "")), (dist_copy / "mpy/armv6m/core/tflm.mpy").stat().st_size
    assert abs(built - documented) <= 0.03 * documented, f"{built:,} B built, docs/natmod.md says {documented:,}"
