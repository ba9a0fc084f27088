"""The emulated boards from the command line as a user drives them:
`tflm-host qemu BOARD` (a QEMU board or the RPI_PICO firmware in the RP2040
emulator) stopped by SIGTERM with nothing left running, `run`/`compare
--port` on the board it serves, `demo --board RPI_PICO`."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import model_path
from tflm_host import arena, cli, device
from tflm_host.model import load_model


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] if Path(f"/proc/{pid}").exists() else "X"
    return state != "Z"


def start_server(board: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "tflm_host", "qemu", board], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    m = re.search(r"mpremote connect (socket://127\.0\.0\.1:\d+)", line)
    assert m, line + proc.stderr.read() if proc.poll() is not None else line
    return proc, m.group(1)


@pytest.mark.parametrize("board, emulator", [("MPS2_AN385", "qemu-system-arm"), ("RPI_PICO", "node")])
def test_qemu_serves_a_board_and_sigterm_stops_it(board, emulator):
    proc, url = start_server(board)
    try:
        kids = children(proc.pid)
        assert len(kids) == 1 and Path(f"/proc/{kids[0]}/exe").resolve().name.startswith(emulator)
        # The board it serves runs a model sent over its port.
        rc = cli.main(["compare", str(model_path("hello_world_int8.tflite")), "--port", url, "--count", "2"])
        assert rc == 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 128 + signal.SIGTERM
        deadline = time.monotonic() + 5
        while alive(kids[0]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(kids[0]), f"the {emulator} child outlived tflm-host qemu"
    finally:
        proc.kill()
        proc.wait()


def test_run_and_compare_on_a_port(capsys):
    with device.QemuServer("MPS2_AN385") as board:
        assert cli.main(["compare", str(model_path("magic_wand.tflite")), "--port", board.url, "--count", "3"]) == 0
        out = capsys.readouterr().out
        assert f"magic_wand.tflite on {board.url} vs TFLM reference" in out and "result: bit-exact" in out
        # Again on the same board: it was left at its REPL, with nothing of the run mounted.
        assert cli.main(["run", str(model_path("hello_world_int8.tflite")), "--port", board.url]) == 0
        hello = arena.plan_layout(load_model(model_path("hello_world_int8.tflite")))
        assert f"arena_used_bytes {hello.used} (head {hello.head}, tail {hello.tail})" in capsys.readouterr().out
        out = device.run_chunks(board.url, ["import vfs; print([m[1] for m in vfs.mount()])"], 20)
        assert "/tflm-host" not in out


def test_port_errors(capsys):
    model = str(model_path("hello_world_int8.tflite"))
    assert cli.main(["run", model, "--port", "socket://127.0.0.1:1", "--target", "MPS2_AN385"]) == 2
    assert "no --target or --firmware with it" in capsys.readouterr().err
    assert cli.main(["run", model, "--port", "/nonexistent/ttyACM9"]) == 2
    assert "cannot open /nonexistent/ttyACM9" in capsys.readouterr().err


def test_demo_on_the_pico(capsys):
    assert cli.main(["demo", "--board", "RPI_PICO", "--example", "hello_world"]) == 0
    out = capsys.readouterr().out
    assert "== RPI_PICO (RP2040): its firmware" in out and "RP2040 emulator" in out
    # The example loads the model from /rom, in place: the host's prediction.
    assert f"arena_used_bytes: {arena.plan_layout(load_model(model_path('hello_world_int8.tflite'))).used}" in out


@pytest.mark.parametrize("board", ["MPS2_AN385", "NETDUINO2", "NETDUINOPLUS2", "MICROBIT", "PYBV11_QEMU", "RPI_PICO",
                                   "PYBV11", "ESP32_GENERIC"])
def test_arena_board_says_how_person_detect_fits(capsys, board):
    from tflm_host import arena, boards
    from tflm_host.model import load_model

    path = model_path("person_detect.tflite")
    b = boards.budget(board)
    assert b.heap > 0 and b.romfs > 0
    assert cli.main(["arena", str(path), "--board", board, "--json"]) == 0
    data = __import__("json").loads(capsys.readouterr().out)
    assert (data["heap_bytes"], data["romfs_bytes"], data["heap_source"]) == (b.heap, b.romfs, b.heap_source)
    assert data["fits"] == next((w["how"] for w in data["ways"] if w["fits"]), None)
    ways = {w["how"].split(" (")[0]: w for w in data["ways"]}
    needed = arena.plan_layout(load_model(path)).needed
    assert ways["in RAM"]["heap_bytes"] == needed + path.stat().st_size
    assert ways["in RAM"]["fits"] == (needed + path.stat().st_size <= b.heap)
    assert ways["in ROMFS flash, in place"]["heap_bytes"] == needed
    assert ways["in ROMFS flash, in place"]["fits"] == (needed <= b.heap)


def test_arena_board_refuses_the_figures_options(capsys):
    """--board weighs the ways the device builds the model; the options of
    the plain arena figures are refused with it, not ignored."""
    path = str(model_path("kws_ref_model.tflite"))
    assert cli.main(["arena", path, "--board", "MICROBIT", "--planner", "linear", "-v"]) == 2
    assert capsys.readouterr().err == ("tflm-host arena: --board weighs each way the model can go on the board as the "
                                       "device builds it; --planner, -v are for the arena figures without --board\n")


def test_arena_board_tries_patches_when_nothing_else_fits(capsys, monkeypatch):
    from tflm_host import boards

    monkeypatch.setattr(boards, "budget", lambda name: boards.Budget(name, 30000, 1 << 20, "a test"))
    from tflm_host import arena
    from tflm_host.model import load_model
    from tflm_host.prepare import prepare_model

    assert cli.main(["arena", str(model_path("person_detect.tflite")), "--board", "NETDUINO2"]) == 0
    out = capsys.readouterr().out
    prepared = arena.plan_layout(load_model(prepare_model(model_path("person_detect.tflite").read_bytes()))).needed
    assert prepared > 30000
    assert f"does NOT fit: prepared (tflm-host prepare), in ROMFS: {prepared:,} B of heap" in out
    row = re.search(r"^  fits: prepared with patches \(prepare --max-extra-macs 20%\), in ROMFS: ([\d,]+) B", out, re.M)
    assert row and int(row[1].replace(",", "")) <= 30000, out
    assert out.rstrip().endswith("person_detect.tflite fits NETDUINO2 prepared with patches "
                                 "(prepare --max-extra-macs 20%), in ROMFS")
