"""tflm-host flash: the command per board and file type (--dry-run), errors by message,
and the ROMFS addresses against the board files in port_boards/."""

from __future__ import annotations

import argparse
import os
import re
import struct
import subprocess
from pathlib import Path

import pytest

from conftest import STM32F405_SECTORS
from tflm_host import flash, romfs

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *argv):
    parser = argparse.ArgumentParser(prog="tflm-host")
    sub = parser.add_subparsers(dest="command", required=True)
    flash.add_parser(sub)
    args = parser.parse_args(["flash", *map(str, argv)])
    rc = args.func(args)
    out, err = capsys.readouterr()
    return rc, out.splitlines(), err


@pytest.fixture
def tools(tmp_path, monkeypatch):
    """A PATH holding only the fake tools a test puts there."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setattr(flash, "EXTRA_TOOL_DIRS", [])
    monkeypatch.setattr(flash, "find_rp2_drives", lambda: [])

    def add(*names):
        for name in names:
            p = bindir / name
            p.write_text("#!/bin/sh\nexit 0\n")
            p.chmod(0o755)
    return add


@pytest.fixture
def files(tmp_path):
    d = tmp_path / "files"
    d.mkdir()
    esp = bytearray(b"\xe9" + bytes(0x8000))
    esp[0x7000:0x7002] = b"\xaa\x50"  # partition table inside the image
    (d / "firmware.bin").write_bytes(bytes(esp))
    (d / "micropython.bin").write_bytes(b"\xe9" + bytes(100))
    (d / "firmware.uf2").write_bytes(flash.make_uf2(flash.uf2_blocks(b"\x00" * 600, 0x10000000)))
    (d / "firmware.elf").write_bytes(b"\x7fELF" + bytes(60))
    (d / "firmware.dfu").write_bytes(b"DfuSe" + bytes(100))
    (d / "firmware.hex").write_text(":020000040800F2\n:00000001FF\n")
    # The pyboard's split firmware: its reset vector points into firmware1.bin.
    (d / "firmware0.bin").write_bytes(struct.pack("<2I", 0x20020000, flash.STM32_TEXT1 + 0x41) + bytes(92))
    (d / "firmware1.bin").write_bytes(bytes(100))
    (d / "romfs.img").write_bytes(romfs.build_image({"model.tflite": b"\x01" * 1000}))
    (d / "notes.txt").write_text("hello")
    return d


@pytest.fixture
def drive(tmp_path):
    d = tmp_path / "RPI-RP2"
    d.mkdir()
    (d / "INFO_UF2.TXT").write_text("UF2 Bootloader v3.0\nModel: Raspberry Pi RP2\nBoard-ID: RPI-RP2\n")
    return d


# ---------------------------------------------------------------------------
# ESP32


def test_esp32_firmware(capsys, tools, files):
    tools("esptool.py")
    rc, out, err = run(capsys, "ESP32_GENERIC", "--port", "/dev/ttyUSB0", files / "firmware.bin", "--dry-run")
    assert rc == 0, err
    # The whole image brings the project's partition table: the erase a board from another firmware needs.
    assert out == ["firmware.bin holds this project's partition table: on a board that ran another firmware, "
                   "erase its flash once first (esptool.py --chip esp32 --port /dev/ttyUSB0 erase_flash; its "
                   "filesystem goes too)",
                   f"esptool.py --chip esp32 --port /dev/ttyUSB0 --baud 460800 write_flash -z 0x1000 "
                   f"{files / 'firmware.bin'}"]


def test_esp32_app_image_goes_to_the_app_partition(capsys, tools, files):
    tools("esptool")  # esptool 5 names its command esptool
    rc, out, err = run(capsys, "ESP32_GENERIC", "--port", "COM4", files / "micropython.bin", "--dry-run")
    assert rc == 0, err
    assert "application image alone" in out[0]
    assert out[-1] == ("esptool --chip esp32 --port COM4 --baud 460800 write_flash -z 0x10000 "
                       f"{files / 'micropython.bin'}")


def test_esp32_firmware_and_romfs(capsys, tools, files):
    tools("esptool.py")
    rc, out, err = run(capsys, "ESP32_GENERIC", "--port", "/dev/ttyUSB0", files / "firmware.bin",
                       "--romfs", files / "romfs.img", "--baud", "921600", "--dry-run")
    assert rc == 0, err
    assert out[0].startswith("firmware.bin holds this project's partition table")
    assert out[1].startswith("ROMFS region of ESP32_GENERIC: 0x00200000, 1024 KiB "
                             "(port_boards/ESP32_GENERIC/partitions-tflm-4MiB.csv)")
    assert out[2] == (f"esptool.py --chip esp32 --port /dev/ttyUSB0 --baud 921600 write_flash -z "
                      f"0x1000 {files / 'firmware.bin'} 0x200000 {files / 'romfs.img'}")


def test_esp32_romfs_only_without_port(capsys, tools, files):
    tools("esptool.py")
    rc, out, err = run(capsys, "ESP32_GENERIC", "--romfs", files / "romfs.img", "--dry-run")
    assert rc == 0, err
    assert out[-1] == f"esptool.py --chip esp32 --baud 460800 write_flash -z 0x200000 {files / 'romfs.img'}"


def test_esp32_errors(capsys, tools, files):
    rc, _, err = run(capsys, "ESP32_GENERIC", "--port", "/dev/ttyUSB0", files / "firmware.bin")
    assert rc == 2 and "esptool.py not found: install it with `pip install esptool`" in err
    tools("esptool.py")
    rc, _, err = run(capsys, "ESP32_GENERIC", files / "firmware.uf2", "--dry-run")
    assert rc == 2 and "is not firmware for ESP32_GENERIC: it takes .bin" in err
    rc, _, err = run(capsys, "ESP32_GENERIC", files / "firmware0.bin", "--dry-run")
    assert rc == 2 and "(no ESP image header)" in err
    rc, _, err = run(capsys, "ESP32_GENERIC", files / "missing.bin", "--dry-run")
    assert rc == 2 and "firmware not found" in err and "make firmware BOARD=ESP32_GENERIC" in err


# ---------------------------------------------------------------------------
# RP2040


def test_rp2040_uf2_to_the_drive_given_as_port(capsys, tools, files, drive):
    tools("picotool")  # --port wins over picotool
    rc, out, err = run(capsys, "RPI_PICO", "--port", drive, files / "firmware.uf2", "--dry-run")
    assert rc == 0, err
    assert out == [f"cp {files / 'firmware.uf2'} {drive}{os.sep}"]
    assert not (drive / "firmware.uf2").exists()  # dry run


def test_rp2040_uf2_copied_for_real(capsys, tools, files, drive):
    rc, out, err = run(capsys, "RPI_PICO", "--port", drive, files / "firmware.uf2")
    assert rc == 0, err
    assert (drive / "firmware.uf2").read_bytes() == (files / "firmware.uf2").read_bytes()


def test_rp2040_picotool(capsys, tools, files):
    tools("picotool")
    rc, out, err = run(capsys, "RPI_PICO", files / "firmware.uf2", "--dry-run")
    assert rc == 0, err
    assert out == [f"picotool load -x {files / 'firmware.uf2'}"]
    rc, out, err = run(capsys, "RPI_PICO", files / "firmware.elf", "--dry-run")
    assert out == [f"picotool load -x {files / 'firmware.elf'}"]
    rc, out, err = run(capsys, "RPI_PICO", files / "firmware0.bin", "--dry-run")
    assert out == [f"picotool load -x {files / 'firmware0.bin'} -t bin -o 0x10000000"]


def test_rp2040_found_drive(capsys, tools, files, drive, monkeypatch):
    monkeypatch.setattr(flash, "find_rp2_drives", lambda: [drive])
    rc, out, err = run(capsys, "RPI_PICO", files / "firmware.uf2", "--dry-run")
    assert rc == 0, err
    assert out == [f"cp {files / 'firmware.uf2'} {drive}{os.sep}"]


def test_rp2040_romfs_with_picotool(capsys, tools, files):
    tools("picotool")
    rc, out, err = run(capsys, "RPI_PICO", files / "firmware.uf2", "--romfs", files / "romfs.img", "--dry-run")
    assert rc == 0, err
    assert out[0].startswith("ROMFS region of RPI_PICO: 0x10100000, 640 KiB (port_boards/RPI_PICO/mpconfigboard.h)")
    assert out[1:] == [f"picotool load {files / 'romfs.img'} -t bin -o 0x10100000",
                       f"picotool load -x {files / 'firmware.uf2'}"]
    rc, out, err = run(capsys, "RPI_PICO", "--romfs", files / "romfs.img", "--dry-run")
    assert out[1:] == [f"picotool load {files / 'romfs.img'} -t bin -o 0x10100000", "picotool reboot"]


def test_rp2040_romfs_through_the_drive_is_one_uf2(capsys, tools, files, drive):
    rc, out, err = run(capsys, "RPI_PICO", "--port", drive, files / "firmware.uf2", "--romfs", files / "romfs.img")
    assert rc == 0, err
    combined = files / "firmware+romfs.img.uf2"
    assert out[1].startswith(f"write {combined} (firmware.uf2 and romfs.img at 0x10100000 as UF2")
    assert out[2] == f"cp {combined} {drive}{os.sep}"
    blocks = flash.parse_uf2((drive / combined.name).read_bytes())
    image = (files / "romfs.img").read_bytes()
    fw_blocks = flash.parse_uf2((files / "firmware.uf2").read_bytes())
    assert blocks[:len(fw_blocks)] == fw_blocks
    rom = blocks[len(fw_blocks):]
    assert [a for a, _ in rom] == [0x10100000 + 256 * i for i in range(len(rom))]
    assert b"".join(p for _, p in rom)[:len(image)] == image
    raw = (drive / combined.name).read_bytes()
    for i in range(len(blocks)):  # block numbers and count, family id
        n, total, family = struct.unpack_from("<III", raw, 512 * i + 20)
        assert (n, total, family) == (i, len(blocks), flash.RP2040_UF2_FAMILY)


def test_rp2040_errors(capsys, tools, files, drive, tmp_path):
    rc, _, err = run(capsys, "RPI_PICO", files / "firmware.uf2")
    assert rc == 2 and "no RPI-RP2 drive mounted and picotool not found" in err and "BOOTSEL" in err
    rc, _, err = run(capsys, "RPI_PICO", "--port", "/dev/ttyACM0", files / "firmware.uf2", "--dry-run")
    assert rc == 2 and "--port is the mount point of the RPI-RP2 drive" in err
    rc, _, err = run(capsys, "RPI_PICO", "--port", tmp_path, files / "firmware.uf2", "--dry-run")
    assert rc == 2 and "is not an RPI-RP2 drive (no INFO_UF2.TXT)" in err
    rc, _, err = run(capsys, "RPI_PICO", "--port", drive, files / "firmware.elf", "--dry-run")
    assert rc == 2 and "the RPI-RP2 drive takes .uf2 files only" in err
    rc, _, err = run(capsys, "RPI_PICO", "--port", drive, files / "firmware.dfu", "--dry-run")
    assert rc == 2 and "is not firmware for RPI_PICO: it takes .uf2" in err
    rc, _, err = run(capsys, "RPI_PICO", "--port", drive, files / "firmware0.bin", "--tool", "picotool")
    assert rc == 2 and "picotool not found" in err
    (files / "fake.uf2").write_bytes(b"not a uf2" * 100)
    rc, _, err = run(capsys, "RPI_PICO", "--port", drive, files / "fake.uf2", "--dry-run")
    assert rc == 2 and "(no UF2 blocks)" in err


# ---------------------------------------------------------------------------
# STM32 (pyboard v1.1)


def test_stm32_dfu(capsys, tools, files):
    tools("dfu-util", "st-flash")
    rc, out, err = run(capsys, "PYBV11", files / "firmware.dfu", "--dry-run")
    assert rc == 0, err
    assert out == [f"dfu-util -a 0 -D {files / 'firmware.dfu'}"]


def test_stm32_stflash(capsys, tools, files):
    tools("st-flash")
    rc, out, err = run(capsys, "PYBV11", files / "firmware.hex", "--dry-run")
    assert rc == 0, err
    assert out == [f"st-flash --format ihex write {files / 'firmware.hex'}"]
    # firmware1.bin goes to FLASH_TEXT's start (test_pybv11_flash_map_follows_sectors
    # checks STM32_TEXT1 against the board's files).
    text1 = f"0x{flash.STM32_TEXT1:08X}"
    rc, out, err = run(capsys, "PYBV11", files / "firmware0.bin", "--dry-run")
    assert out == [f"st-flash write {files / 'firmware0.bin'} 0x08000000",
                   f"st-flash write {files / 'firmware1.bin'} {text1}"]
    rc, out, err = run(capsys, "PYBV11", files / "firmware1.bin", "--dry-run")
    assert out == [f"st-flash write {files / 'firmware1.bin'} {text1}"]
    tools("dfu-util")
    rc, out, err = run(capsys, "PYBV11", files / "firmware0.bin", "--tool", "dfu-util", "--dry-run")
    assert out == [f"dfu-util -a 0 -s 0x08000000 -D {files / 'firmware0.bin'}",
                   f"dfu-util -a 0 -s {text1} -D {files / 'firmware1.bin'}"]
    (files / "whole.bin").write_bytes(bytes(64))
    rc, out, err = run(capsys, "PYBV11", files / "whole.bin", "--dry-run")
    assert out == [f"st-flash write {files / 'whole.bin'} 0x08000000"]


def test_stm32_romfs(capsys, tools, files):
    tools("st-flash", "dfu-util")
    rc, out, err = run(capsys, "PYBV11", files / "firmware.dfu", "--romfs", files / "romfs.img", "--dry-run")
    assert rc == 0, err
    assert out[0].startswith("ROMFS region of PYBV11: 0x080A0000, 384 KiB (port_boards/PYBV11/tflm_pybv11.ld)")
    assert out[1:] == [f"dfu-util -a 0 -D {files / 'firmware.dfu'}",
                       f"st-flash write {files / 'romfs.img'} 0x080A0000"]
    rc, out, err = run(capsys, "PYBV11", "--romfs", files / "romfs.img", "--tool", "dfu-util", "--dry-run")
    assert out[1:] == [f"dfu-util -a 0 -s 0x080A0000 -D {files / 'romfs.img'}"]


def test_stm32_parts_of_another_flash_map_are_refused(capsys, tools, files):
    """firmware0.bin whose reset vector is not in firmware1.bin where it will
    be written (files built with the old map, text at 0x08020000) would not
    boot: refused before anything is written."""
    tools("st-flash", "dfu-util")
    (files / "firmware0.bin").write_bytes(struct.pack("<2I", 0x20020000, 0x08020161) + bytes(92))
    for given in ("firmware0.bin", "firmware1.bin"):
        rc, out, err = run(capsys, "PYBV11", files / given, "--dry-run")
        assert rc == 2 and out == [], (given, out)
        assert "the firmware starts at 0x08020160, outside firmware1.bin" in err and "another flash map" in err


def test_stm32_errors(capsys, tools, files):
    rc, _, err = run(capsys, "PYBV11", files / "firmware.dfu")
    assert rc == 2 and "dfu-util not found: install it with `apt install dfu-util`" in err
    rc, _, err = run(capsys, "PYBV11", files / "firmware.hex")
    assert rc == 2 and "st-flash not found: install it with `apt install stlink-tools`" in err
    tools("dfu-util", "st-flash")
    rc, _, err = run(capsys, "PYBV11", files / "firmware.uf2", "--dry-run")
    assert rc == 2 and "is not firmware for PYBV11: it takes .dfu (dfu-util), .hex or .bin (st-flash)" in err
    rc, _, err = run(capsys, "PYBV11", files / "firmware.dfu", "--tool", "st-flash", "--dry-run")
    assert rc == 2 and "st-flash cannot write .dfu files" in err
    rc, _, err = run(capsys, "PYBV11", files / "firmware.bin", "--tool", "picotool", "--dry-run")
    assert rc == 2 and "--tool picotool: PYBV11 is written with dfu-util or st-flash" in err
    rc, out, err = run(capsys, "PYBV11", "--port", "/dev/ttyACM0", files / "firmware.dfu", "--dry-run")
    assert rc == 0 and "--port /dev/ttyACM0 is not used" in out[0]


# ---------------------------------------------------------------------------
# Dry runs need no tool


@pytest.mark.parametrize("board, given, expected, missing", [
    ("ESP32_GENERIC", ["firmware.bin", "--port", "/dev/ttyUSB0"],
     "esptool.py --chip esp32 --port /dev/ttyUSB0 --baud 460800 write_flash -z 0x1000 {firmware.bin}", "esptool.py"),
    ("RPI_PICO", ["firmware.uf2"], "picotool load -x {firmware.uf2}", "picotool"),
    ("RPI_PICO", ["--romfs", "romfs.img"], "picotool load {romfs.img} -t bin -o 0x10100000", "picotool"),
    ("PYBV11", ["firmware.dfu"], "dfu-util -a 0 -D {firmware.dfu}", "dfu-util"),
    ("PYBV11", ["firmware.hex"], "st-flash --format ihex write {firmware.hex}", "st-flash"),
    ("PYBV11", ["--romfs", "romfs.img"], "st-flash write {romfs.img} 0x080A0000", "st-flash"),
])
def test_dry_run_without_the_tool_prints_its_command(capsys, tools, files, board, given, expected, missing):
    # `tools`: PATH holds none of the vendors' tools.
    argv = [files / a if a.endswith((".bin", ".uf2", ".dfu", ".hex", ".img")) else a for a in given]
    rc, out, err = run(capsys, board, *argv, "--dry-run")
    assert rc == 0, err
    assert re.sub(r"\{([\w.]+)\}", lambda m: str(files / m.group(1)), expected) in out
    assert any(line.startswith(f"{missing} not found: install") and "dry run" in line for line in out)
    rc, _, err = run(capsys, board, *argv)  # for real, the missing tool is an error
    assert rc == 2 and f"{missing} not found" in err


def test_dry_run_with_the_tool_has_no_note(capsys, tools, files):
    tools("esptool.py")
    rc, out, err = run(capsys, "ESP32_GENERIC", files / "firmware.bin", "--dry-run")
    assert rc == 0 and not any("not found" in line for line in out)


# ---------------------------------------------------------------------------
# ROMFS images and common errors


def test_romfs_errors(capsys, tools, files):
    tools("esptool.py", "st-flash", "picotool")
    rc, _, err = run(capsys, "ESP32_GENERIC", "--romfs", files / "notes.txt", "--dry-run")
    assert rc == 2 and "is not a ROMFS image (build one with `tflm-host romfs DIR -o IMAGE`)" in err
    rc, _, err = run(capsys, "PYBV11", "--romfs", files / "nothing.img", "--dry-run")
    assert rc == 2 and "ROMFS image not found" in err
    big = files / "big.img"
    big.write_bytes(romfs.build_image({"m.tflite": bytes(400 * 1024)}))
    rc, _, err = run(capsys, "PYBV11", "--romfs", big, "--dry-run")
    assert rc == 2 and "PYBV11's ROMFS region holds 393216 (384 KiB" in err
    rc, _, err = run(capsys, "RPI_PICO", "--dry-run")
    assert rc == 2 and "nothing to write: give FIRMWARE, --romfs IMAGE or both" in err


def test_unknown_board_is_refused(capsys):
    with pytest.raises(SystemExit):
        run(capsys, "NETDUINO2", "firmware.elf")


def test_tool_failure_is_reported(capsys, tools, files, tmp_path):
    failing = tmp_path / "bin" / "dfu-util"
    failing.write_text("#!/bin/sh\nexit 3\n")
    failing.chmod(0o755)
    rc, out, err = run(capsys, "PYBV11", files / "firmware.dfu")
    assert rc == 1 and out == [f"dfu-util -a 0 -D {files / 'firmware.dfu'}"]
    assert "dfu-util failed (exit status 3)" in err


@pytest.mark.parametrize("board", sorted(flash.BOARDS))
def test_romfs_regions_match_the_board_files(board):
    assert flash.romfs_region_from_files(board, ROOT / "port_boards") == \
        (flash.BOARDS[board].romfs_addr, flash.BOARDS[board].romfs_size)


def test_esp32_partition_table_is_consistent():
    """Partitions in order, 4 KiB aligned, no overlap, inside 4 MiB; the app keeps 1984 KiB."""
    rows = []
    for line in (ROOT / "port_boards" / "ESP32_GENERIC" / "partitions-tflm-4MiB.csv").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            cells = [c.strip() for c in line.split(",")]
            rows.append((cells[0], int(cells[3], 0), int(cells[4], 0)))
    end = 0x9000
    for name, offset, size in rows:
        assert offset >= end and offset % 0x1000 == 0 and size % 0x1000 == 0, name
        end = offset + size
    assert end <= 4 * 1024 * 1024
    assert dict((n, s) for n, _, s in rows)["factory"] == 0x1F0000
    assert [n for n, _, _ in rows].count("romfs") == 1


def pybv11_regions() -> dict[str, tuple[int, int]]:
    text = (ROOT / "port_boards" / "PYBV11" / "tflm_pybv11.ld").read_text()
    return {m.group(1): (int(m.group(2), 16), int(m.group(3)) * 1024) for m in re.finditer(
        r"(\w+)\s*\([a-z]*\)\s*:\s*ORIGIN\s*=\s*(0x[0-9A-Fa-f]+),\s*LENGTH\s*=\s*(\d+)K", text)}


def test_pybv11_flash_map_follows_sectors():
    """The pyboard's flash map: each region starts and ends on an erase sector
    of the STM32F405, the parts follow one another without overlap over the
    whole 1 MiB, and firmware1.bin's address is FLASH_TEXT's start."""
    bounds = {start for start, _ in STM32F405_SECTORS} | {0x08100000}
    regions = pybv11_regions()
    parts = ("FLASH_START", "FLASH_FS", "FLASH_TEXT", "FLASH_ROMFS")
    end = 0x08000000
    for name in parts:
        start, size = regions[name]
        assert start in bounds and start + size in bounds, name
        assert start == end, name
        end = start + size
    assert end == 0x08100000
    assert regions["FLASH_TEXT"][0] == flash.STM32_TEXT1
    assert regions["FLASH_ROMFS"] == (flash.BOARDS["PYBV11"].romfs_addr, flash.BOARDS["PYBV11"].romfs_size)


def test_pybv11_filesystem_cache_holds_its_largest_sector():
    """The stm32 port's flashbdev.c copies a whole sector of the filesystem
    into its RAM cache before writing, cut to the cache's size: the cache
    (CCM RAM, as the linker script sets it) must hold the largest sector."""
    regions = pybv11_regions()
    start, size = regions["FLASH_FS"]
    largest = max(s for a, s in STM32F405_SECTORS if start <= a < start + size)
    text = (ROOT / "port_boards" / "PYBV11" / "tflm_pybv11.ld").read_text()
    assert "_micropy_hw_internal_flash_storage_ram_cache_start = ORIGIN(CCMRAM);" in text
    assert "_micropy_hw_internal_flash_storage_ram_cache_end = ORIGIN(CCMRAM) + LENGTH(CCMRAM);" in text
    assert regions["CCMRAM"][1] >= largest


@pytest.mark.parametrize("board", ["PYBV11", "PYBV11_QEMU"])
def test_pybv11_make_takes_text1_from_the_linker_script(board, tmp_path):
    """The stm32 port splits the firmware and writes the .dfu at the board
    makefile's TEXT1_ADDR: it is FLASH_TEXT's start, read from the .ld."""
    probe = tmp_path / "probe.mk"
    probe.write_text("include $(BOARD_DIR)/mpconfigboard.mk\nprobe:\n\t@echo $(TEXT1_ADDR)\n")
    out = subprocess.run(["make", "--no-print-directory", "-f", str(probe),
                          f"BOARD_DIR={ROOT / 'port_boards' / board}"],
                         capture_output=True, text=True, check=True).stdout
    assert int(out.strip(), 16) == flash.STM32_TEXT1 == pybv11_regions()["FLASH_TEXT"][0]


def test_cli_runs_flash_once_registered(capsys, tools, files):
    from tflm_host import cli

    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    if "flash" not in commands:
        pytest.skip("cli.py does not register the flash command yet")
    tools("esptool.py")
    assert cli.main(["flash", "ESP32_GENERIC", "--port", "/dev/ttyUSB0", str(files / "firmware.bin"),
                     "--dry-run"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith(f"0x1000 {files / 'firmware.bin'}")
