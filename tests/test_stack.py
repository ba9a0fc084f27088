"""The C stack the module needs. invoke() and Interpreter() run in
MicroPython's C stack, which nothing checks below the VM: on the Pico it is
8 KiB (the linker's __StackTop - __StackBottom), shared with the Python calls
above them. Measured on the QEMU boards whose cores stand for the real
boards' (qemuboard.stack_paint/stack_used), every model this build runs,
including the patch-based stages, must leave MicroPython at least
boards_report.STACK_LEFT_FOR_PYTHON bytes of the smallest real board's C stack."""

from __future__ import annotations

import re

import pytest

from conftest import MODELS
from tflm_dev import boards_report
from tflm_host import boards
from tflm_host.device import build_dir


@pytest.fixture(scope="module")
def budget() -> int:
    stacks = [boards_report.c_stack(boards.read_elf(build_dir() / b / "firmware.elf")) for b in ("RPI_PICO", "PYBV11")]
    assert min(stacks) >= 8192  # the Pico's 8 KiB, the pyboard's more
    return min(stacks) - boards_report.STACK_LEFT_FOR_PYTHON


@pytest.fixture(scope="module")
def files() -> dict[str, bytes]:
    return boards_report.stack_files(MODELS)


@pytest.mark.parametrize("board", list(boards_report.STACK_CORES))
def test_interpreter_and_invoke_leave_python_its_stack(board, budget, files):
    use = boards_report.stack_use(board, files)
    assert set(use) == set(files)
    over = {n: u for n, u in use.items() if max(u) > budget}
    assert not over, f"{board}: C stack above {budget} B: {over}"
    # The measurement sees the kernels' frames: an int8 convolution keeps its
    # blocks' constants on the stack (more than 1 KiB), a tiny fully
    # connected model does not.
    assert use["person_detect.tflite"][1] > use["hello_world_int8.tflite"][1] + 1024, use


DEEP = """
import tflm
m = tflm.Model(open(ROOT + '/m.tflite', 'rb').read())
it = tflm.Interpreter(m)
print('@NEED', tflm.C_STACK_NEEDED)
def deeper(n, call):
    try:
        call()
    except RuntimeError as e:
        return n, str(e)
    return deeper(n + 1, call)
for what, call in (('invoke', it.invoke), ('Interpreter', lambda: tflm.Interpreter(m)),
                   ('predict', lambda: it.predict(bytes(len(it.input(0))))),
                   ('arena_size', lambda: tflm.arena_size(m))):
    try:
        print('@DEEP', what, deeper(0, call))
    except RecursionError:
        print('@DEEP', what, 'RecursionError')
print('@ALIVE', it.invoke())
"""


@pytest.mark.parametrize("board", list(boards_report.STACK_CORES))
def test_calls_too_deep_for_the_stack_raise(board, files):
    """Called deeper and deeper, invoke(), Interpreter(), predict() and
    arena_size() raise
    a RuntimeError naming the bytes while MicroPython still has the stack
    they need (the measured figures stay within it), and the interpreter
    works afterwards; no overflow into the memory below the stack."""
    from tflm_host.device import target as make_target
    out = make_target(board).run([DEEP], {"m.tflite": files["hello_world_int8.tflite"]})
    need = int(re.search(r"@NEED (\d+)", out).group(1))
    assert need > 0, out
    for what in ("invoke", "Interpreter", "predict", "arena_size"):
        m = re.search(rf"@DEEP {what} \((\d+), '(.*)'\)", out)
        assert m and int(m.group(1)) > 5, out[-1500:]
        assert m.group(2).startswith(f"not enough C stack: tflm needs {need} bytes"), m.group(2)
    assert "@ALIVE None" in out, out[-1500:]
    use = boards_report.stack_use(board, {n: files[n] for n in ("trained_lstm.tflite", "person_detect_patches.tflite",
                                                         "vww_96_int8.tflite", "vww_96_int8_no_extra_mac.tflite")})
    assert max(max(u) for u in use.values()) <= need, use
