"""The harness that drives the boards: a board that crashes or stops
answering fails its test quickly, with what it printed last and where its
CPU is, and its emulator is killed, never waited on."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Iterator

import pytest

from tflm_host import device

# A load from an address no memory answers: a BusFault, escalated to HardFault.
FAULT = "import machine\nprint('before')\nmachine.mem32[0xfffffff0]\n"


@pytest.mark.parametrize("board", ["MPS2_AN385", "NETDUINOPLUS2", "PYBV11_QEMU"])
def test_a_faulting_board_fails_at_once_with_its_registers(board):
    start = time.monotonic()
    with pytest.raises(device.BoardCrashed) as e:
        with device.QemuServer(board, keep_connection=True) as server:
            server.run([FAULT], timeout=300)
    message = str(e.value)
    assert time.monotonic() - start < 30  # not the 300 s the board may stay silent
    assert "before" in message and "HardFault" in message
    # The board's own dump gives the faulting instruction (the qemu port's
    # R15, the stm32 port's PC), QEMU's monitor the handler it stopped in.
    assert re.search(r"(R15:|PC) +[0-9A-Fa-f]{8}", message), message
    assert "handling exception 3 (HardFault)" in message, message


@pytest.mark.parametrize("board", device.QEMU_BOARDS)
def test_input_sent_to_a_busy_board_waits_for_it(board):
    """More bytes than a UART's receive buffer holds (the pyboard's: 260)
    arrive while the board runs code that reads none; it then reads all of
    them. (QEMU 7.2's STM32 USART kept the pyboard firmware's interrupt
    raised once that buffer was full: the board hung in its UART handler,
    the stall board_qemu.c now prevents.)"""
    sent = 1000
    with device.QemuServer(board, keep_connection=True) as server:
        transport = server.transport
        transport.enter_raw_repl(soft_reset=False)
        transport.exec_raw_no_follow(
            "import sys\n"
            "for i in range(1000000):\n"
            "    pass\n"
            f"s = sys.stdin.read({sent})\n"
            "print('read', len(s), s.count('#'))\n")
        transport.serial.write(b"#" * sent)
        out = transport.read_until(1, b"\x04", timeout=30) + transport.read_until(1, b"\x04", timeout=5)
        assert out.endswith(b"\x04"), (out, server.where())
        assert f"read {sent} {sent}".encode() in out, out


def test_a_silent_board_times_out_with_its_pc_and_is_killed():
    server = device.QemuServer("NETDUINO2", keep_connection=True)
    with pytest.raises(TimeoutError) as e:
        with server:
            proc = server.proc
            # From the booted board on: its boot takes longer on a loaded
            # machine (33 s once, beside the rest of make test).
            start = time.monotonic()
            server.run(["print('spinning')\nwhile True:\n    pass\n"], timeout=3)
    assert time.monotonic() - start < 20
    message = str(e.value)
    assert "silent for 3 s" in message and "spinning" in message
    # QEMU's monitor names the function the CPU was in: the bytecode loop.
    assert "CPU: pc 0x" in message and " in mp_" in message, message
    assert proc.poll() is not None  # the emulator is gone


@contextlib.contextmanager
def emulator_starter(tmp_path: Path) -> Iterator[tuple[subprocess.Popen, int]]:
    """A Python process that starts an MPS2_AN385 emulator, then sleeps:
    the process and the emulator's pid. The process is killed at the end."""
    script = tmp_path / "start.py"
    script.write_text(textwrap.dedent("""
        import sys, time
        from tflm_host import device
        server = device.QemuServer("MPS2_AN385", keep_connection=True).__enter__()
        print(server.proc.pid, flush=True)
        time.sleep(600)
    """))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        yield proc, int(proc.stdout.readline())
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def test_an_emulator_dies_with_the_process_that_started_it(tmp_path):
    """A test run killed from outside (SIGKILL: nothing of ours runs) leaves
    no emulator spinning."""
    with emulator_starter(tmp_path) as (proc, qemu):
        os.kill(qemu, 0)  # running
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(qemu, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            os.kill(qemu, signal.SIGKILL)
            pytest.fail("QEMU outlived the process that started it")


def test_sigterm_stops_the_emulators_first(tmp_path):
    with emulator_starter(tmp_path) as (proc, qemu):
        proc.terminate()
        assert proc.wait(timeout=10) == -signal.SIGTERM
        with pytest.raises(ProcessLookupError):
            os.kill(qemu, 0)
