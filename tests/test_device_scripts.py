"""Small on-device scripts with expected output (tests/device/*.py and .exp),
run on the unix port, each QEMU board and the emulated Pico."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import EVERY_TARGET, model_files, run_on

SCRIPTS = sorted(Path(__file__).parent.joinpath("device").glob("*.py"))


@pytest.mark.parametrize("target", EVERY_TARGET)
@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_script(script, target):
    expected = script.with_suffix(".py.exp").read_text()
    out = run_on(target, script.read_text(), model_files("hello_world_int8.tflite"))
    assert out == expected
