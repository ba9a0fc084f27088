"""`make demo`: a real model in the flash of an emulated STM32, run from MicroPython.

Builds a flash image the way a board is flashed (firmware, then a ROMFS image
with the model and the example script at the board's ROMFS address), boots
it in QEMU and runs examples/hello_world.py from /rom, streaming its output.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from . import device, romfs

MODEL = "hello_world_int8.tflite"
EXAMPLE = "hello_world.py"

BOARD_TEXT = {
    "NETDUINO2": "Netduino 2: STM32F205 (Cortex-M3, 120 MHz class), 1 MiB flash, 128 KiB RAM",
    "MPS2_AN385": "Arm MPS2 AN385: Cortex-M3, 4 MiB RAM",
}


def flash_image(board: device.Board, image: bytes, out: Path) -> Path:
    """Firmware as raw flash bytes from address 0, then the ROMFS image at its region."""
    fw = out.with_suffix(".fw.bin")
    subprocess.run(["arm-none-eabi-objcopy", "-O", "binary", str(board.firmware), str(fw)], check=True)
    data = fw.read_bytes()
    fw.unlink()
    if len(data) > board.romfs_start:
        raise RuntimeError(f"firmware ({len(data)} bytes) overlaps the ROMFS region at {board.romfs_start:#x}")
    if len(image) > board.romfs_size:
        raise RuntimeError(f"ROMFS image ({len(image)} bytes) exceeds its region ({board.romfs_size} bytes)")
    out.write_bytes(data + b"\xff" * (board.romfs_start - len(data)) + image)
    return out


def run_demo(board_name: str, models: Path) -> int:
    board = device.board(board_name)
    model_path = models / MODEL
    if not model_path.is_file():
        print(f"demo: {model_path} not found (set MODELS=...)", file=sys.stderr)
        return 2
    files = {
        MODEL: model_path.read_bytes(),
        EXAMPLE: (device.PROJECT_ROOT / "examples" / EXAMPLE).read_bytes(),
    }
    image = romfs.build_image(files)
    flash = flash_image(board, image, device.build_dir() / board_name / "flash-demo.bin")
    print(f"== {BOARD_TEXT.get(board_name, board_name)}, emulated by QEMU ({board.machine})")
    print(f"== flash image {flash.relative_to(device.PROJECT_ROOT)}: firmware, then ROMFS at "
          f"{board.romfs_start:#x} holding {', '.join(files)} ({len(image)} bytes)")
    print(f"== running /rom/{EXAMPLE} on the device")
    print()
    cmd = ["qemu-system-arm", "-machine", board.machine, "-nographic", "-monitor", "none", "-serial", "stdio",
           "-semihosting", "-icount", "shift=0", "-kernel", str(flash)]
    device.run_qemu(cmd, [f"import {Path(EXAMPLE).stem}"], timeout=300, echo=sys.stdout)
    return 0
