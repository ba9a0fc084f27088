"""Malformed models raise ValueError (or another clean exception) on the
device, never crash it, and the runtime works normally afterwards. The
engine's own fuzzer (tests/engine) covers many more mutants under ASan."""

from __future__ import annotations

import struct

import pytest

from conftest import TARGETS, model_files, model_path, run_on

HEADER = """
import tflm
GOOD = open(ROOT + '/hello_world_int8.tflite', 'rb').read()
def run(buf, x=7):
    m = tflm.Model(buf)
    it = tflm.Interpreter(m, 4096)
    it.input(0)[0] = x
    it.invoke()
    return it.output(0)[0]
EXPECTED = run(GOOD)
def outcome(buf):
    try:
        return run(buf)
    except (ValueError, NotImplementedError, MemoryError, RuntimeError) as e:
        return type(e).__name__ + ': ' + str(e)
"""

CHECK_STILL_WORKS = """
print('still works', all(run(GOOD, x) == run(bytes(GOOD), x) for x in (-128, 0, 7, 127)), run(GOOD) == EXPECTED)
"""


def test_simple_cases_unix():
    good = model_path("hello_world_int8.tflite").read_bytes()
    root = struct.unpack_from("<I", good, 0)[0]
    code = HEADER + f"""
print(outcome(b''))
print(outcome(bytearray(GOOD[:4] + b'XXXX' + GOOD[8:])))
print(outcome(b'\\x00' * 64))
bad_root = bytearray(GOOD); bad_root[0:4] = (len(GOOD) + 100).to_bytes(4, 'little')
print(outcome(bad_root))
bad_vtable = bytearray(GOOD); bad_vtable[{root}:{root}+4] = (0x7ffffff0).to_bytes(4, 'little')
print(outcome(bad_vtable))
""" + CHECK_STILL_WORKS
    out = run_on("unix", code, model_files("hello_world_int8.tflite")).splitlines()
    assert out[0] == "ValueError: empty model buffer"
    assert out[1] == "ValueError: not a .tflite model (file identifier is not TFL3)"
    assert out[2] == "ValueError: not a .tflite model (file identifier is not TFL3)"
    assert out[3].startswith("ValueError: malformed model: offset points outside the buffer")
    assert out[4].startswith("ValueError: malformed model: vtable outside the buffer")
    assert out[5] == "still works True True"


@pytest.mark.parametrize("target", TARGETS)
def test_every_truncation(target):
    """Each prefix of the model is rejected with ValueError (or, if the cut
    only removed bytes nothing refers to, runs with the same result)."""
    step = 1 if target == "unix" else 7
    code = HEADER + f"""
mv = memoryview(GOOD)
other = []
for n in range(0, len(GOOD), {step}):
    r = outcome(mv[:n])
    if not (isinstance(r, str) and r.startswith('ValueError')) and r != EXPECTED:
        other.append((n, r))
print('other', other)
""" + CHECK_STILL_WORKS
    out = run_on(target, code, model_files("hello_world_int8.tflite")).splitlines()
    assert out == ["other []", "still works True True"]


@pytest.mark.parametrize("target", TARGETS)
def test_random_corruption(target):
    """Seeded random byte and word corruptions: clean exceptions or a run."""
    count = 1500 if target == "unix" else 250
    code = HEADER + f"""
state = 12345
def rnd():
    global state
    state = (state * 1103515245 + 12345) & 0x7fffffff
    return state
kinds = {{}}
for i in range({count}):
    buf = bytearray(GOOD)
    if i % 2:
        at = rnd() % (len(buf) // 4) * 4
        buf[at:at + 4] = (rnd() * 2 + (i & 1)).to_bytes(4, 'little')
    else:
        for k in range(1 + rnd() % 3):
            buf[rnd() % len(buf)] ^= 1 + rnd() % 255
    r = outcome(buf)
    key = r.split(':')[0] if isinstance(r, str) else 'ran'
    kinds[key] = kinds.get(key, 0) + 1
print(sorted(kinds.items()))
""" + CHECK_STILL_WORKS
    out = run_on(target, code, model_files("hello_world_int8.tflite")).splitlines()
    kinds = dict(eval(out[0]))
    assert sum(kinds.values()) == count
    assert set(kinds) <= {"ran", "ValueError", "NotImplementedError", "MemoryError", "RuntimeError"}
    assert kinds.get("ValueError", 0) > count // 10  # corruption is noticed
    assert out[1] == "still works True True"
