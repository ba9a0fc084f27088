"""The real boards' firmware as `make test` builds it (make real-firmware):
RPI_PICO (.uf2), PYBV11 (.dfu, .bin) and ESP32_GENERIC (.bin and the whole
flash image) with the module, from the offline SDKs of ../shared/sdk; they
fit their flash maps, their folders hold nothing built for the host, and the
SDK step works offline or says it needs git."""

from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import STM32F405_SECTORS, model_path
from tflm_host import arena, boards, flash, romfs
from tflm_host.flash import BOARDS, RP2040_UF2_FAMILY, STM32_TEXT0, STM32_TEXT1
from tflm_host.model import load_model

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("TFLM_BUILD", ROOT / "build"))
MPY_DIR = BUILD / "micropython-1.25.0"
SDK = ROOT.parent / "shared" / "sdk"
MAKE = ["make", "--no-print-directory", "-C", str(ROOT)]
EM_ARM, EM_X86_64, EM_XTENSA = 40, 62, 94
# The CPU of each built board's objects.
BOARD_MACHINE = {"RPI_PICO": EM_ARM, "PYBV11": EM_ARM, "ESP32_GENERIC": EM_XTENSA}


def elf_machine(path: Path) -> int:
    head = path.read_bytes()[:20]
    assert head[:4] == b"\x7fELF", path
    return struct.unpack_from("<H", head, 18)[0]


@pytest.mark.parametrize("board", boards.BUILT_BOARDS)
def test_firmware_fits_its_flash_map(board):
    f = boards.figures(board, BUILD / board)
    assert f.problems() == []
    assert 300_000 < f.text_used <= f.text.size
    assert f.romfs_used == 0 and f.romfs.start >= f.text.end
    # The heap holds person_detect's arena (the host's prediction) with room
    # for the interpreter objects and the GC's own tables.
    need = arena.plan_layout(load_model(model_path("person_detect.tflite")), "greedy").needed
    assert f.heap * 0.9 > need, (f.heap, need)
    # person_detect with its example script fits the ROMFS region.
    image = romfs.build_image({"person_detect.tflite": model_path("person_detect.tflite").read_bytes(),
                               "person_detect.py": (ROOT / "examples" / "person_detect.py").read_bytes()})
    assert len(image) <= f.romfs.size


def test_pyboard_regions_do_not_overlap():
    regions = boards.linker_regions(ROOT / "port_boards" / "PYBV11" / "tflm_pybv11.ld")
    parts = [regions[n] for n in ("FLASH_START", "FLASH_FS", "FLASH_TEXT", "FLASH_ROMFS")]
    for a, b in zip(parts, parts[1:]):
        assert a.end == b.start
    assert parts[-1].end == regions["FLASH"].end
    assert regions["FLASH_ROMFS"].start == BOARDS["PYBV11"].romfs_addr


def test_pico_uf2_is_the_firmware():
    """firmware.uf2: RP2040 blocks in order that hold exactly firmware.bin at
    the start of flash, all below the ROMFS region."""
    build = BUILD / "RPI_PICO"
    data = (build / "firmware.uf2").read_bytes()
    image = (build / "firmware.bin").read_bytes()
    assert len(data) % 512 == 0
    blocks = [struct.unpack_from("<8I", data, pos) + (data[pos + 32:pos + 508],) for pos in range(0, len(data), 512)]
    got = bytearray()
    for n, (m0, m1, _flags, addr, size, index, count, family, payload) in enumerate(blocks):
        assert (m0, m1, index, count, family) == (0x0A324655, 0x9E5D5157, n, len(blocks), RP2040_UF2_FAMILY)
        assert addr == 0x10000000 + len(got) and size == 256
        got += payload[:size]
    assert got[:len(image)] == image and set(got[len(image):]) <= {0}
    assert 0x10000000 + len(got) <= BOARDS["RPI_PICO"].romfs_addr


def test_esp32_flash_image_is_the_firmware():
    """flash.bin, the whole 4 MiB flash QEMU boots and esptool can write at
    0: the bootloader at 0x1000, the partition table at 0x8000, the app
    (micropython.bin) at the factory partition, the ROMFS partition erased;
    firmware.bin (what tflm-host flash writes at 0x1000) is the same bytes."""
    build = BUILD / "ESP32_GENERIC"
    image = (build / "flash.bin").read_bytes()
    assert len(image) == 4 * 1024 * 1024
    parts = boards.esp32_table((build / "partition_table" / "partition-table.bin").read_bytes())
    for offset, name in ((0x1000, "bootloader/bootloader.bin"), (0x8000, "partition_table/partition-table.bin"),
                         (parts["factory"][0], "micropython.bin")):
        data = (build / name).read_bytes()
        assert image[offset:offset + len(data)] == data, name
    assert image[0x1000] == 0xE9 and image[parts["factory"][0]] == 0xE9  # ESP image headers
    romfs = BOARDS["ESP32_GENERIC"]
    assert parts["romfs"] == (romfs.romfs_addr, romfs.romfs_size)
    assert set(image[romfs.romfs_addr:romfs.romfs_addr + romfs.romfs_size]) == {0xFF}
    firmware = (build / "firmware.bin").read_bytes()
    assert image[0x1000:0x1000 + len(firmware)] == firmware


def test_esp32_objects_do_not_carry_the_checkouts_commit():
    """The offline ESP-IDF is extracted inside the checkout: without its
    version.txt, ESP-IDF's CMake takes IDF_VER from `git describe` there,
    the project's commit, a compile definition of every object, and each
    commit rebuilds the whole folder. Every object carries one IDF_VER, not
    the checkout's commit; built offline, the ESP-IDF's version."""
    build = BUILD / "ESP32_GENERIC"
    (version,) = set(re.findall(r'IDF_VER=\\"([^\\"]*)\\"', (build / "build.ninja").read_text()))
    git = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    head = git.stdout.strip() or "-"  # outside a git checkout: no commit to carry
    assert not head.startswith(version.split("-")[0]), version
    if "offline" in (build / ".tflm-idf").read_text():
        assert version == (BUILD / "esp32-sdk" / "esp-idf" / "version.txt").read_text().strip()


def test_pyboard_dfu_holds_both_parts():
    """firmware.dfu (DfuSe): one target, the vector part at 0x08000000 and the
    text at FLASH_TEXT's start (STM32_TEXT1, where the ELF's .text is), the
    same bytes as firmware0.bin and firmware1.bin."""
    build = BUILD / "PYBV11"
    data = (build / "firmware.dfu").read_bytes()
    assert data[:5] == b"DfuSe"
    size, targets = struct.unpack_from("<IB", data, 6)
    assert size == len(data) - 16 and targets == 1
    assert data[11:17] == b"Target"
    n_elements, = struct.unpack_from("<I", data, 11 + 270)
    pos, elements = 11 + 274, {}
    for _ in range(n_elements):
        addr, length = struct.unpack_from("<II", data, pos)
        elements[addr] = data[pos + 8:pos + 8 + length]
        pos += 8 + length
    assert sorted(elements) == [STM32_TEXT0, STM32_TEXT1]
    assert boards.read_elf(build / "firmware.elf").sections[".text"][0] == STM32_TEXT1
    for addr, part in ((STM32_TEXT0, "firmware0.bin"), (STM32_TEXT1, "firmware1.bin")):
        image = (build / part).read_bytes()
        # dfu.py pads each element to 8 bytes.
        assert elements[addr][:len(image)] == image and set(elements[addr][len(image):]) <= {0}
        assert len(elements[addr]) - len(image) < 8
    # tflm-host flash's check that the parts belong to this flash map passes.
    flash._check_pyboard_parts(build / "firmware0.bin", build / "firmware1.bin")


@pytest.mark.parametrize("board", boards.BUILT_BOARDS)
def test_no_host_objects_in_a_board_folder(board):
    """mpy-cross is the project's own (build/mpy-cross), never built inside a
    board's folder (the ports' `make -C mpy-cross` once inherited BUILD=)."""
    objects = list((BUILD / board).rglob("*.o")) + list((BUILD / board).rglob("*.obj"))  # make, CMake
    assert len(objects) > 200
    assert {elf_machine(o) for o in objects} == {BOARD_MACHINE[board]}
    assert not list((BUILD / board).rglob("mpy-cross"))
    assert elf_machine(BUILD / "mpy-cross" / "mpy-cross") == EM_X86_64


def test_pico_pins_include_the_ports_own():
    """Every pin name of the rp2 port's own RPI_PICO list (GP25 too) is in ours."""
    def names(path: Path) -> set[str]:
        return {line.split(",")[0] for line in path.read_text().splitlines() if line and not line.startswith("#")}

    ours = names(ROOT / "port_boards" / "RPI_PICO" / "pins.csv")
    assert names(MPY_DIR / "ports" / "rp2" / "boards" / "RPI_PICO" / "pins.csv") <= ours
    assert {"GP25", "LED"} <= ours


def test_boards_check_fails_on_an_overflow(tmp_path, monkeypatch):
    """The fit check after linking names the overflow: the same firmware
    against a pyboard text region 100 KiB smaller."""
    ld = tmp_path / "tflm_pybv11.ld"
    text = (ROOT / "port_boards" / "PYBV11" / "tflm_pybv11.ld").read_text()
    m = re.search(r"FLASH_TEXT \(rx\)\s*:\s*ORIGIN = 0x[0-9A-Fa-f]+, LENGTH = (\d+)K", text)
    assert m, "no FLASH_TEXT region"
    small = int(m.group(1)) - 100
    ld.write_text(text[:m.start(1)] + str(small) + text[m.end(1):])
    real = boards.linker_regions
    monkeypatch.setattr(boards, "linker_regions", lambda path: real(ld))
    f = boards.figures("PYBV11", BUILD / "PYBV11")
    assert f.text.size == small * 1024 < f.text_used
    (problem,) = f.problems()
    assert f"takes {f.text_used} bytes of the {small * 1024}-byte FLASH_TEXT region" in problem


def test_pyboard_filesystem_as_linked():
    """The linked PYBV11 firmware's /flash: the linker script's FLASH_FS
    region, below the text; its RAM sector cache (what the port's
    flashbdev.c copies a sector into before writing it, cut to the cache's
    size) holds the region's largest STM32F405 sector, so no write is cut short."""
    sym = boards.read_elf(BUILD / "PYBV11" / "firmware.elf").symbols
    start, end = sym["_micropy_hw_internal_flash_storage_start"], sym["_micropy_hw_internal_flash_storage_end"]
    cache = sym["_micropy_hw_internal_flash_storage_ram_cache_end"] - \
        sym["_micropy_hw_internal_flash_storage_ram_cache_start"]
    fs = boards.linker_regions(ROOT / "port_boards" / "PYBV11" / "tflm_pybv11.ld")["FLASH_FS"]
    assert (start, end) == (fs.start, fs.end)
    assert end <= STM32_TEXT1
    sectors = [(a, s) for a, s in STM32F405_SECTORS if start <= a < end]
    assert sectors[0][0] == start and sum(s for _, s in sectors) == end - start
    largest = max(s for _, s in sectors)
    assert cache >= largest == 16 * 1024


def test_pyboard_factory_files_are_the_boards():
    """A new /flash gets the board's boot.py and main.py
    (port_boards/PYBV11/tflm_factory.c), whose factory_reset_make_files
    replaces the port's weak one: the linked image holds their text and
    neither the port's pybcdc.inf nor its README.txt (3.2 KB of text)."""
    source = (ROOT / "port_boards" / "PYBV11" / "tflm_factory.c").read_text()
    ours = [b"# boot.py: runs at every boot, before main.py", b"# main.py: your program."]
    assert all(line.decode() in source for line in ours)
    image = b"".join((BUILD / "PYBV11" / part).read_bytes() for part in ("firmware0.bin", "firmware1.bin"))
    assert all(image.count(line) == 1 for line in ours)
    for port_text in (b"Windows USB CDC ACM Setup File", b"pybcdc.inf", b"This is a MicroPython board"):
        assert port_text not in image
    sym = boards.read_elf(BUILD / "PYBV11" / "firmware.elf").symbols
    assert "factory_reset_make_files" in sym and "tflm_factory_files" in sym


# ---------------------------------------------------------------------------
# The SDK step (make deps-boards), on MicroPython trees of the test's own


def fake_tree(path: Path) -> Path:
    (path / "py").mkdir(parents=True)
    (path / "py" / "mpconfig.h").write_text("#define MICROPY_VERSION_MINOR (25)\n")
    (path / "lib" / "stm32lib").mkdir(parents=True)  # empty, as in a tree without submodules
    return path


def deps_boards(tree: Path, sdk: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(MAKE + ["deps-boards", "BOARD=PYBV11", f"MPY_DIR={tree}", f"SDK={sdk}",
                                  f"BUILD={tmp_path / 'build'}", "TFLM_NO_APT=1"],
                          capture_output=True, text=True, timeout=300)


def test_sdks_extracted_offline_once(tmp_path):
    tree = fake_tree(tmp_path / "micropython")
    r = deps_boards(tree, SDK, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    for lib, archive in (("stm32lib", "stm32lib-f4.tar.xz"), ("libhydrogen", "libhydrogen.tar.xz"),
                         ("micropython-lib", "micropython-lib.tar.xz")):
        assert f"lib/{lib}: extracted from {SDK}/{archive} (offline copy)" in r.stdout
    assert (tree / "lib" / "stm32lib" / "STM32F4xx_HAL_Driver" / "Src" / "stm32f4xx_hal.c").is_file()
    assert (tree / "lib" / "micropython-lib" / "README.md").is_file()
    again = deps_boards(tree, SDK, tmp_path)
    assert again.returncode == 0 and "extracted" not in again.stdout


def test_without_offline_sdks_a_git_clone_uses_submodules(tmp_path):
    tree = fake_tree(tmp_path / "micropython")
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    r = deps_boards(tree, tmp_path / "no-sdk", tmp_path)
    # No submodule is registered in this tree, so git fails; the step said what it tried.
    assert "lib/stm32lib: no offline copy in" in r.stdout and "git submodule update (network)" in r.stdout
    assert r.returncode != 0 and "has no lib/stm32lib" in r.stderr


def test_pyboard_without_mpy_cross_in_the_tree():
    """`make firmware BOARD=PYBV11` as the README has it, with a MicroPython
    tree that has no mpy-cross built: mpy-cross is built once in the build
    folder and the port uses it. The build folder's own firmware is checked
    (make test's build phase made it, from nothing on a clean clone; a full
    second build here cost five minutes of the suite)."""
    r = subprocess.run(MAKE + ["firmware", "BOARD=PYBV11", f"BUILD={BUILD}", f"MPY_DIR={MPY_DIR}",
                               f"JOBS={os.environ.get('JOBS', '2')}"],
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "PYBV11: firmware " in r.stdout and (BUILD / "PYBV11" / "firmware.dfu").is_file()
    assert elf_machine(BUILD / "mpy-cross" / "mpy-cross") == EM_X86_64
    assert {elf_machine(o) for o in (BUILD / "PYBV11").rglob("*.o")} == {EM_ARM}
    assert not (MPY_DIR / "mpy-cross" / "build").exists()
    # The port was given the build folder's mpy-cross (MicroPython's make
    # would otherwise build and use its own in the tree).
    dry = subprocess.run(MAKE + ["-n", "firmware", "BOARD=PYBV11", f"BUILD={BUILD}", f"MPY_DIR={MPY_DIR}"],
                         capture_output=True, text=True, timeout=600)
    assert f"MICROPY_MPYCROSS={BUILD / 'mpy-cross' / 'mpy-cross'}" in dry.stdout, dry.stdout[-3000:]


def test_fit_check_runs_without_the_engine_extension():
    """`make firmware` runs `python3 -m tflm_host.boards check` from the
    checkout, before (or without) `make venv` builds the engine extension."""
    code = ("import sys; sys.modules['tflm_host._engine'] = None\n"
            "import tflm_host.boards\n"
            "try:\n    import tflm_host._engine\nexcept ImportError:\n    print('no engine, boards imported')\n")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1] / "host_tools"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "no engine, boards imported", out.stderr
