"""The heap figures the real boards' files record for `tflm-host arena
--board` without a build (TFLM_HEAP_BYTES in port_boards/<BOARD>/
mpconfigboard.h) against the firmware `make test` builds: at most its heap,
and within 2 KiB of it (a figure that drifted further is recorded again)."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT
from tflm_host import boards
from tflm_host.device import build_dir

CHECKED = ("RPI_PICO", "PYBV11", "PYBV11_QEMU")


def recorded(board: str) -> int:
    # PYBV11_QEMU's header includes PYBV11's and redefines it: the last one counts.
    values = re.findall(r"^#define TFLM_HEAP_BYTES \((\d+)\)",
                        (ROOT / "port_boards" / board / "mpconfigboard.h").read_text(), re.M)
    assert values, f"port_boards/{board}/mpconfigboard.h records no TFLM_HEAP_BYTES"
    return int(values[-1])


@pytest.mark.parametrize("board", CHECKED)
def test_recorded_heap_is_a_lower_bound_of_the_built_firmwares(board):
    elf = build_dir("the built firmware") / board / "firmware.elf"
    assert elf.is_file(), f"{elf} is not built (make real-firmware)"
    built = boards.figures(board, elf.parent).heap
    figure = recorded(board)
    assert figure % 1024 == 0, f"{board}: TFLM_HEAP_BYTES {figure} is not whole KiB"
    assert figure <= built < figure + 2048, (
        f"{board}: the firmware's heap is {built:,} B, TFLM_HEAP_BYTES says {figure:,}: record {built // 1024 * 1024}")


def test_esp32_figure_is_the_measured_largest_block():
    doc = (ROOT / "docs" / "boards.md").read_text()
    m = re.search(r"largest free block[^|]*\| ([\d,]+) \|", doc)
    assert m, "docs/boards.md has no largest free block figure"
    assert recorded("ESP32_GENERIC") == int(m.group(1).replace(",", ""))


def test_budget_without_a_build_is_the_recorded_figure(monkeypatch, tmp_path):
    monkeypatch.setenv("TFLM_BUILD", str(tmp_path))
    for board in CHECKED + ("ESP32_GENERIC",):
        b = boards.budget(board)
        assert b.heap == recorded(board) and "TFLM_HEAP_BYTES" in b.heap_source
