"""Inputs that once got past the module's checks, found by attacking it
(fuzzing held-out mutants of real models and misusing the API): each gives a
clean exception naming the problem, on the unix port and the boards, and
the host tools give the device's verdict."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import DEVICE_PRELUDE, TARGETS, model_files, model_path, run_on
from model_spots import spots
from tflm_dev.builder import ModelBuilder

HELLO = "hello_world_int8.tflite"


def spot(data: bytes, what: str) -> int:
    return next(s.pos for s in spots(data) if s.what == what)


def quantize_with_zero_point(zp: int) -> bytes:
    """A QUANTIZE from int16 to int32 whose output zero point is `zp`."""
    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1, 4), "INT16", quant=([0.5], [0]))
    y = sg.tensor((1, 4), "INT32", quant=([0.25], [zp]))
    sg.op("QUANTIZE", [x], [y])
    sg.inputs, sg.outputs = [x], [y]
    return b.build()


@pytest.mark.parametrize("target", TARGETS)
def test_bad_names_and_zero_points(target):
    """A name that is not UTF-8 (once a UnicodeError) and a zero point of
    INT32_MIN (which kernels negate: undefined behaviour) are ValueErrors at
    load; a name corrupted after load is a ValueError when read."""
    data = model_path(HELLO).read_bytes()
    name = spot(data, "tensor 0 name")
    bad_name = bytearray(data)
    bad_name[name] = 0xFF
    files = {"bad_name.tflite": bytes(bad_name), "zp_min.tflite": quantize_with_zero_point(-2**31),
             "zp_ok.tflite": quantize_with_zero_point(-2**31 + 1)}
    files.update(model_files(HELLO))
    code = DEVICE_PRELUDE + f"""
attempt(lambda: tflm.Model(load('bad_name.tflite')))
attempt(lambda: tflm.Model(load('zp_min.tflite')))
attempt(lambda: tflm.Interpreter(tflm.Model(load('zp_ok.tflite'))))
ba = bytearray(load('{HELLO}'))
m = tflm.Model(ba)
ba[{name}] = 0xff
attempt(lambda: m.tensor(0).name)
"""
    out = run_on(target, code, files).splitlines()
    assert out == [
        "ValueError malformed model: the name of tensor 0 of subgraph 0 is not UTF-8",
        "ValueError malformed model: tensor 1 of subgraph 0 has zero point -2147483648, outside -2147483647..2147483647",
        "ok",
        "ValueError malformed model: a tensor name is not UTF-8",
    ]


def test_host_refuses_them_too(tmp_path):
    path = tmp_path / "zp.tflite"
    path.write_bytes(quantize_with_zero_point(-2**31))
    proc = subprocess.run([sys.executable, "-m", "tflm_host", "arena", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("tflm-host arena: zp.tflite: malformed model: tensor 1 of subgraph 0 has zero point "
                                   "-2147483648, outside -2147483647..2147483647")


@pytest.mark.parametrize("target", TARGETS)
def test_huge_sizes_and_offsets(target):
    """Interpreter(model, 2**32 + 4096) once allocated 4,111 bytes on a
    64-bit port (the size was truncated); set_input's offset 2**31 was
    reported as -2147483648. Huge numbers are refused naming them (a 32-bit
    board cannot even hold them: OverflowError)."""
    code = DEVICE_PRELUDE + f"""
m = tflm.Model(load('{HELLO}'))
attempt(lambda: tflm.Interpreter(m, 2**32 + 4096))
attempt(lambda: tflm.Arena(2**31))
it = tflm.Interpreter(m)
attempt(lambda: it.set_input(0, b'1', 2**31))
attempt(lambda: it.set_input(0, b'1', 1))
"""
    out = run_on(target, code, model_files(HELLO)).splitlines()
    if target == "unix":
        assert out == [
            "ValueError arena size 4294971392 is too large (at most 2147483632 bytes)",
            "ValueError arena size 2147483648 is too large (at most 2147483632 bytes)",
            "ValueError 1 bytes at offset 2147483648 do not fit input 0's 1 bytes",
            "ValueError 1 bytes at offset 1 do not fit input 0's 1 bytes",
        ]
    else:
        assert out[:3] == ["OverflowError overflow converting long int to machine word"] * 3
        assert out[3] == "ValueError 1 bytes at offset 1 do not fit input 0's 1 bytes"


@pytest.mark.parametrize("target", TARGETS)
def test_every_entry_point_checks_the_arena_buffer(target):
    """buffers() and memory_plan() read the arena's records: once they did so
    after the user's bytearray was resized (a read after free)."""
    code = DEVICE_PRELUDE + f"""
ba = bytearray(2000)
it = tflm.Interpreter(tflm.Model(load('{HELLO}')), ba)
ba.extend(bytes(3000))
for f in (it.buffers, it.memory_plan, it.invoke, lambda: it.input(0), lambda: it.tensor(0)):
    attempt(f)
"""
    out = run_on(target, code, model_files(HELLO)).splitlines()
    assert out == ["RuntimeError arena buffer was resized or moved"] * 5


def test_version_is_one_number():
    """tflm.__version__ on the device is the host tools' version."""
    from tflm_host import __version__

    out = run_on("unix", "import tflm\nprint(tflm.__version__, tflm.version)\n").split()
    assert out == [__version__, __version__]
    proc = subprocess.run([sys.executable, "-m", "tflm_host", "--version"], capture_output=True, text=True)
    assert proc.stdout.strip() == __version__
