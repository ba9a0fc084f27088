"""The README's REPL session is what the unix port's REPL answers: its
`>>>` lines are typed into the REPL on a pseudo-terminal and the whole
transcript must equal the README's block. Its board table and figures are
those of the board files and the engine."""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, model_path
from tflm_host.device import build_dir

MARKER = "<!-- repl-session: checked by tests/test_readme.py -->"


def readme_session() -> str:
    text = (ROOT / "README.md").read_text()
    m = re.search(re.escape(MARKER) + r"\n```pycon\n(.*?)\n```", text, re.S)
    assert m, f"README.md has no ```pycon block after {MARKER}"
    return m.group(1)


def repl_transcript(binary: Path, lines: list[str], cwd: Path, timeout: float = 30) -> str:
    """Types each line into the REPL on a pseudo-terminal (as a user would)
    and returns what the terminal shows from the first prompt on."""
    master, slave = os.openpty()
    proc = subprocess.Popen([str(binary)], stdin=slave, stdout=slave, stderr=slave, cwd=cwd,
                            start_new_session=True)
    os.close(slave)
    shown = b""
    try:
        def read_until_prompts(count: int) -> None:
            nonlocal shown
            deadline = time.monotonic() + timeout
            while shown.count(b">>> ") < count:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the REPL did not answer: {shown[-300:]!r}")
                ready, _, _ = select.select([master], [], [], 0.5)
                if ready:
                    shown += os.read(master, 65536)

        read_until_prompts(1)
        for n, line in enumerate(lines):
            os.write(master, line.encode() + b"\r")
            read_until_prompts(n + 2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        os.close(master)
    text = shown[shown.index(b">>> "):].decode().replace("\r", "")
    return text[:text.rindex(">>> ")]


def test_readme_session_is_what_the_repl_answers(tmp_path):
    block = readme_session()
    lines = [line[4:] for line in block.splitlines() if line.startswith(">>> ")]
    assert any("predict" in line for line in lines) and any("memory_plan" in line for line in lines)
    shutil.copy(model_path("hello_world_int8.tflite"), tmp_path)
    got = repl_transcript(build_dir() / "unix" / "micropython", lines, tmp_path)
    assert got.rstrip("\n") == block.rstrip("\n")


def test_readme_board_guide_figures_are_the_engines():
    """The board guide's deploy table and REPL lines show arena figures: they
    are what the engine computes for those models, not typed numbers that go
    stale."""
    from tflm_host import arena
    from tflm_host.model import load_model

    text = (ROOT / "README.md").read_text()
    rows = re.findall(r"^ +(\S+\.tflite) +(\d+) +(\d+) +in place", text, re.M)
    # "Your own model"'s prepared model is run by tests/test_docs.py.
    rows = [row for row in rows if not row[0].endswith("_prepared.tflite")]
    assert {name for name, _, _ in rows} == {"hello_world_int8.tflite", "person_detect.tflite"}
    for name, used, predicted in rows:
        layout = arena.plan_layout(load_model(model_path(name).read_bytes()))
        assert (int(used), int(predicted)) == (layout.used, layout.used), name
    m = re.search(r">>> tflm\.arena_size\(m\)\n +(\d+)\n.*arena_used_bytes\(\)\n +(\d+)", text)
    assert m, "the board guide's REPL lines"
    layout = arena.plan_layout(load_model(model_path("person_detect.tflite").read_bytes()))
    assert (int(m.group(1)), int(m.group(2))) == (layout.needed, layout.used)


def readme_board_section(text: str) -> str:
    from tflm_host import boards

    assert boards.README_TABLE_BEGIN in text and boards.README_TABLE_END in text, "README.md has no board table markers"
    return text.split(boards.README_TABLE_BEGIN, 1)[1].split(boards.README_TABLE_END, 1)[0].strip("\n") + "\n"


def test_readme_board_table_is_the_board_files():
    """The README's board table is what `make boards-report` writes from
    port_boards/ (flash maps, ROMFS regions, QEMU machines), with a row for
    every board there."""
    from tflm_host import boards

    boards_dirs = {p.name for p in (ROOT / "port_boards").iterdir() if p.is_dir() and p.name != "common"}
    assert set(boards.README_BOARDS) == boards_dirs
    assert readme_board_section((ROOT / "README.md").read_text()) == boards.readme_board_table(), \
        "README.md's board table is not port_boards/'s: run make boards-report (python -m tflm_host.boards readme README.md)"


def test_readme_board_table_follows_a_changed_board_file(tmp_path, monkeypatch):
    """A board file that changes (the ESP32's romfs partition grown) changes
    the table the README is held to; one the template needs but the board
    files lack is an error naming it."""
    from tflm_host import boards

    tree = tmp_path / "checkout"
    shutil.copytree(ROOT / "port_boards", tree / "port_boards")
    (tree / "micropython_mod" / "engine").mkdir(parents=True)
    shutil.copy(ROOT / "micropython_mod" / "engine" / "version.h", tree / "micropython_mod" / "engine")
    csv = tree / "port_boards" / "ESP32_GENERIC" / "partitions-tflm-4MiB.csv"
    csv.write_text(csv.read_text().replace("romfs,    data, 0x8f,    0x200000, 0x100000,",
                                           "romfs,    data, 0x8f,    0x200000, 0x180000,"))
    monkeypatch.setenv("TFLM_CHECKOUT", str(tree))
    table = boards.readme_board_table()
    assert "`romfs` partition of 1536 KiB at `0x00200000`" in table
    assert table != readme_board_section((ROOT / "README.md").read_text())
    csv.write_text(csv.read_text().replace("vfs,", "storage,"))
    with pytest.raises(ValueError, match=r"port_boards/ESP32_GENERIC says nothing of 'vfs'"):
        boards.readme_board_table()
