"""The real RPI_PICO firmware (build/RPI_PICO/firmware.uf2) in the RP2040
emulator: it boots as the board, finds its ROMFS region where the host put
the image, runs person_detect in place from flash with the arena the host
predicts, bit-exact with TFLM, and the emulator counts cycles per invoke.
The hello_world models, the CLI and the device scripts run on it too
(EVERY_TARGET in conftest.py); TFLM_PICO=all runs the whole device suite."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from conftest import check_person_detect_in_place, check_romfs_at_rom, run_on
from tflm_host import device
from tflm_host.flash import BOARDS


def test_boots_as_the_board():
    out = run_on("RPI_PICO", """
import sys, os, machine, vfs, uctypes
print(sys.implementation._build, os.uname().machine)
print(machine.freq())
print(vfs.rom_ioctl(1))
rom = memoryview(vfs.rom_ioctl(2, 0))
print(len(rom), hex(uctypes.addressof(rom)))
print(str(machine.Pin('GP25')) == str(machine.Pin('LED')), machine.Pin('GP25'))
""")
    lines = out.split("\n")
    assert lines[0] == "RPI_PICO Raspberry Pi Pico with tflm with RP2040"
    assert lines[1] == "125000000"
    # One ROMFS segment, where port_boards/RPI_PICO puts it and the host writes images.
    romfs = BOARDS["RPI_PICO"]
    assert lines[2] == "1"
    assert lines[3] == f"{romfs.romfs_size} {romfs.romfs_addr:#x}"
    assert lines[4].startswith("True Pin(GPIO25")


def test_romfs_image_mounted_at_rom():
    check_romfs_at_rom("RPI_PICO")


def test_person_detect_in_place_from_flash():
    out = check_person_detect_in_place("RPI_PICO", "c, i = pico_cycles(), pico_instructions()",
                                       "c, i = pico_cycles() - c, pico_instructions() - i\nprint('@COUNT', c, i)",
                                       (device.PICO_COUNTERS,))
    # The emulator's counters: a Cortex-M0+ instruction takes one cycle or more.
    cycles, instructions = map(int, re.search(r"@COUNT (\d+) (\d+)", out).groups())
    assert 0 < instructions <= cycles < 3 * instructions


def test_serial_port_for_any_raw_repl_client():
    """PicoServer puts the board's USB serial port on a TCP socket: a raw-REPL
    client (mpremote's transport, as the device suite uses it) gets a prompt
    and runs code longer than the emulated USB host's 512-byte FIFO."""
    with device.PicoServer() as pico:
        assert pico.url == f"socket://{pico.address[0]}:{pico.address[1]}"
        code = "x = [" + ", ".join(str(k) for k in range(600)) + "]\nprint(sum(x), len(x))"
        assert len(code) > 2000
        assert device.run_chunks(pico.url, [code], timeout=60) == f"{sum(range(600))} 600\n"


def test_mpremote_connects_to_the_emulated_pico():
    """mpremote (a raw-REPL client with raw-paste flow control) drives the
    emulated board through the socket, one connection after another."""
    mpremote = Path(sys.executable).parent / "mpremote"
    with device.PicoServer() as pico:
        for code, expected in (("import sys; print(sys.implementation._build)", "RPI_PICO"),
                               ("import tflm; print(tflm.arena_size is not None)", "True")):
            r = subprocess.run([str(mpremote), "connect", pico.url, "exec", code], capture_output=True,
                               text=True, timeout=120)
            assert r.returncode == 0 and r.stdout.strip() == expected, r.stdout + r.stderr


def test_low_counters_allocate_nothing():
    """The readers bench speed times invoke() with (PicoTarget.counters): a
    write of 3 (cycles) or 4 (instructions) makes the emulator latch the
    count's low 30 bits into one SCRATCH register, a small int to read, so
    a reading allocates nothing (with the heap locked it still reads, where
    the whole count's reader fails); two readings in a row are the same
    count apart every time, on a calm heap and on a fragmented one; their
    spans are the whole count's."""
    from conftest import check_low_counter

    assert device.PicoTarget.counters == {"instructions": device.PICO_COUNTERS + "_count = pico_instructions_low\n",
                                          "cycles": device.PICO_COUNTERS + "_count = pico_cycles_low\n"}
    for kind in ("cycles", "instructions"):
        check_low_counter("RPI_PICO", [device.PICO_COUNTERS], f"pico_{kind}_low", f"pico_{kind}", 0)
