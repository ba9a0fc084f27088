"""Progress of the CLI's long steps (progress.py): on stderr, when stderr is
a terminal or TFLM_PROGRESS=1, never with --quiet or TFLM_PROGRESS=0, and
never on stdout (the commands' output stays as it was)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from conftest import model_path
from tflm_host import cli, progress

BAR = re.compile(r"searching patch-based stages \(stages tried\) \[#*\.*\] (\d+)/(\d+) \d+ s")


def prepare(capsys, tmp_path, *extra: str) -> tuple[int, str, str]:
    rc = cli.main(["prepare", str(model_path("test_conv_model.tflite")), "-o", str(tmp_path / "out.tflite"),
                   "--max-extra-macs", "20%", *extra])
    out, err = capsys.readouterr()
    return rc, out, err


def test_prepare_stage_search_shows_a_bar(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("TFLM_PROGRESS", "1")
    monkeypatch.setattr(progress, "SHOW_AFTER", 0)
    monkeypatch.setattr(progress, "TICK", 0)
    rc, out, err = prepare(capsys, tmp_path)
    assert rc == 0 and "patch-based stage: operators 1-3" in out
    bars = [BAR.fullmatch(part) for part in err.strip("\n").split("\r") if part]
    assert bars and all(bars), err
    counts = [(int(m[1]), int(m[2])) for m in bars]
    total = counts[0][1]
    assert total > 1 and counts[-1] == (total, total) and counts == sorted(counts)
    assert err.endswith("\n") and "searching" not in out


def test_no_progress_when_quiet_or_not_a_terminal(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "SHOW_AFTER", 0)
    monkeypatch.setenv("TFLM_PROGRESS", "1")
    assert prepare(capsys, tmp_path, "--quiet")[2] == ""
    monkeypatch.setenv("TFLM_PROGRESS", "0")
    assert prepare(capsys, tmp_path)[2] == ""
    monkeypatch.delenv("TFLM_PROGRESS")
    assert prepare(capsys, tmp_path)[2] == ""  # pytest's stderr is no terminal


def test_a_timed_step(capsys, monkeypatch):
    monkeypatch.setenv("TFLM_PROGRESS", "1")
    monkeypatch.setattr(progress, "SHOW_AFTER", 0.2)
    monkeypatch.setattr(progress, "TICK", 0.05)
    with progress.step("a short step"):
        pass
    assert capsys.readouterr().err == ""  # under SHOW_AFTER: nothing
    with progress.step("writing flash"):
        time.sleep(0.5)
    err = capsys.readouterr().err
    assert re.search(r"\rwriting flash \.\.\. 0 s", err) and re.search(r"\rwriting flash: done in 0\.[5-9] s\n$", err)
    with pytest.raises(KeyError):
        with progress.step("failing"):
            time.sleep(0.3)
            raise KeyError
    assert capsys.readouterr().err.endswith("failing: stopped in 0.3 s\n")


def test_progress_on_a_terminal_without_the_variable(tmp_path):
    """A real terminal (a pseudo-terminal as stderr): the bar is drawn."""
    import pty

    env = dict(os.environ)
    env.pop("TFLM_PROGRESS", None)
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "tflm_host", "prepare", str(model_path("person_detect.tflite")),
                             "-o", str(tmp_path / "p.tflite"), "--max-extra-macs", "20%"],
                            stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal's other end closed
            break
        if not chunk:
            break
        seen += chunk
    out = proc.stdout.read().decode()
    assert proc.wait(timeout=120) == 0 and "patch-based stage" in out
    assert BAR.search(seen.decode()), seen[-500:]
    os.close(master)
