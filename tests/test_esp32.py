"""The real ESP32_GENERIC firmware (build/ESP32_GENERIC/flash.bin, the whole
flash) on QEMU's esp32 machine: it boots as the board, finds its romfs
partition memory-mapped where the host put the image, runs person_detect
in place from flash with the arena the host predicts, bit-exact with TFLM,
and the core counts its instructions (esp32board.icount(): the LX6's debug
counter, which QEMU implements). The hello_world models, the CLI, the
device scripts and every shared model run on it too (EVERY_TARGET in
conftest.py, tests/test_models.py); TFLM_ESP32=all runs the whole device
suite."""

from __future__ import annotations

import hashlib
import re

import pytest

from conftest import check_person_detect_in_place, check_romfs_at_rom, model_path, run_on
from tflm_host import arena, cli, device, romfs
from tflm_host.flash import BOARDS
from tflm_host.model import load_model

# The ESP32's data bus view of the flash (DROM: the MMU maps flash pages
# there for reading).
DROM = (0x3F400000, 0x3F800000)


def test_boots_as_the_board():
    out = run_on("ESP32_GENERIC", """
import sys, os, vfs, uctypes, network
print(sys.implementation._build)
print(os.uname().machine)
print(vfs.rom_ioctl(1))
rom = memoryview(vfs.rom_ioctl(2, 0))
print(len(rom), hex(uctypes.addressof(rom)))
print(hasattr(network, 'WLAN'))
""")
    build, machine, segments, rom, wlan = out.strip().split("\n")
    # The offline build is the NORADIO variant (no Wi-Fi); one with your own ESP-IDF the full board.
    assert build in ("ESP32_GENERIC", "ESP32_GENERIC-NORADIO")
    assert wlan == str(build == "ESP32_GENERIC")
    assert machine.startswith("Generic ESP32 module with tflm") and machine.endswith("with ESP32")
    # One ROMFS segment: the whole romfs partition, mapped into the data bus.
    assert segments == "1"
    size, addr = rom.split()
    assert int(size) == BOARDS["ESP32_GENERIC"].romfs_size
    assert DROM[0] <= int(addr, 16) < DROM[1]


def test_romfs_image_mounted_at_rom():
    check_romfs_at_rom("ESP32_GENERIC")


def test_person_detect_in_place_from_flash():
    out = check_person_detect_in_place("ESP32_GENERIC", "import esp32board\nc = esp32board.icount()",
                                       "print('@COUNT', esp32board.icount() - c)")
    # person_detect is 7.5 million multiply-accumulates; each takes instructions.
    instructions = int(re.search(r"@COUNT (\d+)", out).group(1))
    assert 7_500_000 < instructions < 500_000_000


def test_instruction_counter():
    """esp32board.icount() counts the instructions the core executes: a
    loop of a known length takes the same count each time, to a few
    instructions (the instruction an interrupt arrives at; the handlers
    themselves are not counted), twice the loop about twice the count, and
    two readings in a row are a small, fixed count apart."""
    code = """
import esp32board
def f(n):
    for i in range(n):
        pass
def count(n):
    c = esp32board.icount()
    f(n)
    return esp32board.icount() - c
def gap():
    c = esp32board.icount()
    d = esp32board.icount()
    e = esp32board.icount()
    return d - c, e - d
print(count(1000), count(2000), count(1000), count(1000))
print(*gap(), *gap())
"""
    lines = run_on("ESP32_GENERIC", code).split("\n")
    a, b, c, d = (int(x) for x in lines[0].split())
    assert abs(c - d) < 50 and abs(a - c) < 500, (a, c, d)
    assert 1.9 < b / a < 2.1, (a, b)
    assert 20 * 1000 < a < 2000 * 1000, a  # tens to hundreds of instructions per iteration
    gaps = [int(x) for x in lines[1].split()]
    assert 0 < min(gaps) and max(gaps) - min(gaps) < 50 and max(gaps) < 2000, gaps


def test_low_counter_allocates_nothing():
    """esp32board.icount_low(), which bench speed times invoke() with: the
    same total's low 30 bits, a small int, so a reading allocates nothing
    (with the heap locked it still reads, where icount() fails: its long
    int); two readings in a row are the same count apart, to the few
    instructions an interrupt's arrival moves, on a calm heap and on a
    fragmented one; its spans are icount()'s."""
    from conftest import check_low_counter

    assert device.Esp32Target.counters == {"instructions": "import esp32board\n_count = esp32board.icount_low\n"}
    check_low_counter("ESP32_GENERIC", ["import esp32board"], "esp32board.icount_low", "esp32board.icount", 10)


def test_serial_port_for_any_raw_repl_client():
    """Esp32Server puts UART0 on a TCP socket: a raw-REPL client gets a
    prompt and runs code longer than the port's 260-byte input buffer, in
    raw-paste mode (the board's flow control), as mpremote sends it."""
    with device.Esp32Server() as esp:
        assert esp.url.startswith("socket://127.0.0.1:")
        code = "x = [" + ", ".join(str(k) for k in range(600)) + "]\nprint(sum(x), len(x))"
        assert device.run_chunks(esp.url, [code], timeout=60, raw_paste=True) == f"{sum(range(600))} 600\n"


def test_deploy_writes_the_romfs_partition(capsys):
    """`tflm-host deploy` over the board's UART, as an ESP32 owner runs it
    after flashing: the image goes into the romfs partition through
    esp32.Partition (the port's vfs.rom_ioctl cannot write it), in raw-paste
    mode; after the soft reset the models run from /rom in place with the
    arena the host predicts, and the mapped partition holds the host's
    image (98 KB: past the first 64 KiB page of the flash mapping, which
    QEMU's cache serves stale until a reset)."""
    names = ("hello_world_int8.tflite", "pretrainedResnet_quant.tflite")
    with device.Esp32Server() as esp:
        code = cli.main(["deploy", *(str(model_path(n)) for n in names), "--port", esp.url])
        out, err = capsys.readouterr()
        assert code == 0, out + err
        assert "esp32.Partition 'romfs' writeblocks" in out
        for name in names:
            used = arena.plan_layout(load_model(model_path(name)), "greedy").used
            assert re.search(rf"^{re.escape(name)} +{used} +{used}  in place \(flash\)$", out, re.M), out
        image = romfs.build_image({n: model_path(n).read_bytes() for n in names})
        check = device.run_chunks(esp.url, [f"""
import vfs, hashlib, binascii
m, h = memoryview(vfs.rom_ioctl(2, 0)), hashlib.sha256()
for i in range(0, {len(image)}, 4096):
    h.update(bytes(m[i:min(i + 4096, {len(image)})]))
print(binascii.hexlify(h.digest()).decode())
"""], timeout=60, raw_paste=True)
    assert check.strip() == hashlib.sha256(image).hexdigest()


def test_speed_tables_count_instructions_not_cycles():
    """bench speed puts the ESP32 next to the other boards through its
    target's own counter: instructions by ICOUNT, no cycles (QEMU has no
    timing model of the LX6), so its cycle cells are '-', its prepared
    column is in instructions, and asking it for cycles is an error."""
    from tflm_dev import bench

    tgt = device.target("ESP32_GENERIC")
    assert "esp32board.icount" in bench._counter_code(tgt)
    with pytest.raises(ValueError, match="ESP32_GENERIC counts no cycles"):
        bench._counter_code(tgt, "cycles")
    assert bench.board_timing("ESP32_GENERIC") == "" and bench.board_timing("MICROBIT") == "estimator"
    assert bench.cmsis_board("ESP32_GENERIC") is None and bench.cmsis_board("RPI_PICO") == "MICROBIT"
    path = model_path("hello_world_int8.tflite")
    rows = bench.speed_boards_cycles_rows([path], ["ESP32_GENERIC"], 2)
    (row,) = rows
    assert row["timing"] == "" and row["ours"].cycles == 0
    # hello_world is three fully connected layers: thousands of instructions, not millions.
    assert 1_000 < row["ours"].insns < 100_000 and 1_000 < row["prepared"].insns < 100_000
    table = bench.speed_boards_cycles_markdown(rows, ["ESP32_GENERIC"])
    assert f"| hello_world_int8.tflite | {row['ours'].insns:,} | - |" in table
    prepared = bench.speed_prepared_cycles_markdown(rows, ["ESP32_GENERIC"])
    assert "ESP32_GENERIC: instructions | ESP32_GENERIC, prepared |" in prepared
