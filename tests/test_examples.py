"""The on-device examples (examples/*.py) from a QEMU board's flash: each
loads its model in place, prints its results and arena_used_bytes, and the
host checks the scores against TFLM's."""

from __future__ import annotations

import re

import pytest

from conftest import MODELS
from tflm_host import cli
from tflm_host.model import load_model
from tflm_host import arena
from tflm_host.demo import EXAMPLES, EXTRA_MODELS

CASES = [("hello_world", "MICROBIT"), ("hello_world", "NETDUINOPLUS2"), ("person_detect", "NETDUINOPLUS2"),
         ("person_detect", "MICROBIT"), ("keyword_spotting", "MICROBIT"), ("keyword_spotting", "NETDUINO2"),
         ("keyword_spotting", "NETDUINOPLUS2"), ("micro_speech", "MPS2_AN385")]


@pytest.mark.parametrize("example,board", CASES)
def test_example_on_board(capsys, example, board):
    code = cli.main(["demo", "--board", board, "--example", example, "--models", str(MODELS)])
    captured = capsys.readouterr()
    out = captured.out
    assert code == 0, out + captured.err
    used = re.search(r"^arena_used_bytes: (\d+(?: \+ \d+)*)$", out, re.M).group(1).split(" + ")
    models = [*EXTRA_MODELS.get(example, ()), EXAMPLES[example]]
    assert [int(u) for u in used] == [arena.plan_layout(load_model(MODELS / m)).used for m in models]
    if example == "hello_world":
        assert float(re.search(r"largest error (\d\.\d+)", out).group(1)) < 0.2
    else:
        assert re.search(r"== TFLM's reference kernels on the host give the same outputs for all \d+ "
                         r"(frames|clips)|^== TFLM's reference kernels on the host give the same scores for the "
                         r"synthetic second of audio", out, re.M)
    if example == "keyword_spotting":
        assert re.search(r"^model: /rom/kws_ref_model.tflite - 53936 bytes, 0 of them in RAM", out, re.M)
        assert len(re.findall(r"^clip ", out, re.M)) == 4
