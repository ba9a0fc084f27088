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

import numpy as np

from conftest import model_path, run_on
from tflm_host import arena, device
from tflm_host.flash import BOARDS
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs


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
    files = {"a.txt": b"hello from flash\n", "sub/b.bin": bytes(range(256)) * 4}
    out = run_on("RPI_PICO", """
import os
print(sorted(os.listdir('/rom')), sorted(os.listdir('/rom/sub')))
print(open('/rom/a.txt').read(), end='')
print(sum(open('/rom/sub/b.bin', 'rb').read()))
""", files)
    assert out == f"['a.txt', 'sub'] ['b.bin']\nhello from flash\n{sum(range(256)) * 4}\n"


def test_person_detect_in_place_from_flash():
    path = model_path("person_detect.tflite")
    model = load_model(path)
    layout = arena.plan_layout(model, "greedy")
    frame = np.random.default_rng(3).integers(-128, 128, model.inputs[0].shape, dtype=np.int8)
    out = run_on("RPI_PICO", [device.PICO_COUNTERS, """
import tflm, binascii
m = tflm.load('/rom/person_detect.tflite')
print('@MODEL', m.ram_bytes, tflm.arena_size(m))
it = tflm.Interpreter(m)
it.set_input(0, open('/rom/frame.bin', 'rb').read())
c, i = pico_cycles(), pico_instructions()
it.invoke()
c, i = pico_cycles() - c, pico_instructions() - i
print('@COUNT', c, i)
print('@ARENA', it.arena_used_bytes(), it.head_bytes(), it.tail_bytes())
print('@OUT', binascii.hexlify(it.output(0)).decode())
"""], {"person_detect.tflite": path.read_bytes(), "frame.bin": frame.tobytes()})
    ram, size = map(int, re.search(r"@MODEL (\d+) (\d+)", out).groups())
    assert ram == 0, "the model was copied to RAM instead of used in place from flash"
    assert size == layout.needed
    used, head, tail = map(int, re.search(r"@ARENA (\d+) (\d+) (\d+)", out).groups())
    assert (used, head, tail) == (layout.used, layout.head, layout.tail)
    ours = np.frombuffer(bytes.fromhex(re.search(r"@OUT (\w+)", out).group(1)), np.int8)
    (expected,) = reference_outputs(path, [[frame]])
    assert ours.tobytes() == expected[0].tobytes(), (ours, expected[0])
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
