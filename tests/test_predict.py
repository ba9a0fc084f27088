"""Interpreter.predict(): real values in and out, quantized and dequantized
exactly as TFLM's QUANTIZE and DEQUANTIZE ops do (checked against a numpy
formula and against TFLM running those ops), heap-free after the first call;
and the repr of Model, Interpreter and Arena, built here from the model file
and the host engine's arena figures."""

from __future__ import annotations

import binascii
import tempfile
from pathlib import Path

import numpy as np
import pytest

from conftest import DEVICE_PRELUDE, model_files, model_path, run_each_model, run_on
from opgen import single_op
from tflm_host import arena
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs

# The QEMU board these run on besides the unix port (Cortex-M4F: float32 in hardware).
BOARDS = ["unix", "NETDUINOPLUS2"]
SHAPE = (1, 40)
# (type, scale, zero point): a power-of-two scale makes x / scale exact, so
# the values below hit ties (k + 0.5) on both sides of zero.
QUANTS = [("INT8", 0.25, 3), ("INT8", 0.0137, -20), ("INT16", 0.5, 0), ("INT16", 0.00071, 0)]


def quantize_numpy(x: np.ndarray, scale: float, zp: int, dtype: str) -> np.ndarray:
    """TFLM's AffineQuantize: float32 x / scale, rounded half away from zero,
    to int32 as x86-64 converts (NaN and values out of int32's range become
    INT32_MIN), plus zp (int32, wrapping), clamped to the type."""
    with np.errstate(invalid="ignore", over="ignore"):
        v = (x.astype(np.float32) / np.float32(scale)).astype(np.float64)
        r = np.sign(v) * np.floor(np.abs(v) + 0.5)
        r = np.where((r >= -2.0 ** 31) & (r < 2.0 ** 31), r, -2.0 ** 31).astype(np.int64)
    r = (r + zp + 2 ** 31) % 2 ** 32 - 2 ** 31
    info = np.iinfo(np.int8 if dtype == "INT8" else np.int16)
    return np.clip(r, info.min, info.max)


def dequantize_numpy(q: np.ndarray, scale: float, zp: int) -> np.ndarray:
    return (np.float64(np.float32(scale)) * (q.astype(np.float64) - zp)).astype(np.float32)


def sample_values(scale: float, zp: int) -> np.ndarray:
    k = np.arange(-10, 10, dtype=np.float64)
    ties = ((k + 0.5) * scale).astype(np.float32)  # exact ties when scale is a power of two
    rng = np.random.default_rng(int(scale * 1e5) + zp)
    other = rng.uniform(-40 * scale * 128, 40 * scale * 128, SHAPE[1] - len(ties) - 6).astype(np.float32)
    # Beyond int32 after the division and NaN: what x86 gives (see quantize_numpy).
    extremes = np.array([1e10, -1e10, np.nan, np.inf, 0.0, -0.0], dtype=np.float32)
    return np.concatenate([ties, other, extremes])[:SHAPE[1]]


def _write(tmp: Path, name: str, data: bytes) -> Path:
    path = tmp / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("target", BOARDS)
def test_predict_quantizes_and_dequantizes_as_tflm(target, tmp_path):
    files, cases = {}, []
    for n, (dtype, scale, zp) in enumerate(QUANTS):
        q = ([scale], [zp])
        # On the device: the quantized input goes through a requantize to
        # itself; predict() quantizes, raw=True shows the ints, the floats
        # are their dequantization.
        identity, _ = single_op("QUANTIZE", [(SHAPE, dtype, None, q)], [(SHAPE, dtype, q)])
        # TFLM's own QUANTIZE (float32 -> type) and DEQUANTIZE with the same parameters.
        quantize, _ = single_op("QUANTIZE", [(SHAPE, "FLOAT32")], [(SHAPE, dtype, q)])
        dequantize, _ = single_op("DEQUANTIZE", [(SHAPE, dtype, None, q)], [(SHAPE, "FLOAT32", None)])
        x = sample_values(scale, zp)
        files[f"m{n}.tflite"] = identity
        files[f"x{n}.bin"] = x.tobytes()
        cases.append((dtype, scale, zp, x, _write(tmp_path, f"q{n}.tflite", quantize),
                      _write(tmp_path, f"d{n}.tflite", dequantize), _write(tmp_path, f"i{n}.tflite", identity)))
    code = DEVICE_PRELUDE + """
import array, binascii, struct
for n in range(N):
    it = tflm.Interpreter(tflm.Model(load('m%d.tflite' % n)))
    xa = array.array('f', open(ROOT + '/x%d.bin' % n, 'rb').read())
    xs = struct.unpack('<%df' % len(xa), bytes(xa))  # a tuple of floats
    for x in (xa, xs, list(xs), memoryview(xa)):
        y = it.predict(x)
        print(binascii.hexlify(bytes(it.input(0))).decode(), binascii.hexlify(bytes(it.predict(x, raw=True))).decode(),
              binascii.hexlify(bytes(y)).decode())
""".replace("N", str(len(QUANTS)))
    lines = run_on(target, code, files).splitlines()
    assert len(lines) == 4 * len(QUANTS)
    for n, (dtype, scale, zp, x, quantize, dequantize, identity) in enumerate(cases):
        np_type = np.int8 if dtype == "INT8" else np.int16
        expected_q = quantize_numpy(x, scale, zp, dtype)
        tflm_q = reference_outputs(quantize, [[x.reshape(SHAPE)]])[0][0].ravel()
        assert tflm_q.tolist() == expected_q.tolist(), (dtype, scale, zp)
        tflm_raw = reference_outputs(identity, [[tflm_q.reshape(SHAPE).astype(np_type)]])[0][0]
        tflm_f = reference_outputs(dequantize, [[tflm_raw]])[0][0].ravel()
        assert tflm_f.tobytes() == dequantize_numpy(tflm_raw.ravel(), scale, zp).tobytes()
        for line in lines[4 * n:4 * n + 4]:
            q_in, raw, floats = (binascii.unhexlify(h) for h in line.split())
            assert np.frombuffer(q_in, np_type).tolist() == tflm_q.tolist(), (target, dtype, scale, zp)
            assert raw == tflm_raw.tobytes()
            assert floats == tflm_f.tobytes()


@pytest.mark.parametrize("target", BOARDS)
def test_predict_several_inputs_and_outputs(target):
    qa, qb, qo = ([0.05], [2]), ([0.1], [-7]), ([0.12], [1])
    add, _ = single_op("ADD", [((1, 6), "INT8", None, qa), ((1, 6), "INT8", None, qb)], [((1, 6), "INT8", qo)])
    split, _ = single_op("SPLIT", [((1,), "INT32", np.array([1], np.int32)), ((1, 6), "INT8", None, qo)],
                         [((1, 3), "INT8", qo), ((1, 3), "INT8", qo)], NumSplits=2)
    a = [0.5, -1.25, 3.0, 0.025, -6.0, 9.0]
    b = [1.0, 2.0, -3.5, 0.05, 0.0, -12.7]
    code = DEVICE_PRELUDE + f"""
import array, binascii
# TFLM's plan: the default one writes ADD's output over an input that dies
# at it, and the inputs are read back below.
add = tflm.Interpreter(tflm.Model(load('add.tflite')), planner='tflm')
y = add.predict(({a}, array.array('f', {b})))
print(type(y).__name__, binascii.hexlify(bytes(add.input(0))).decode(), binascii.hexlify(bytes(add.input(1))).decode(),
      binascii.hexlify(bytes(add.output(0))).decode(), binascii.hexlify(bytes(y)).decode())
sp = tflm.Interpreter(tflm.Model(load('split.tflite')))
ys = sp(y)
raw = sp.predict(y, raw=True)
print(type(ys).__name__, len(ys), ' '.join(binascii.hexlify(bytes(v)).decode() for v in ys + raw))
attempt(lambda: add.predict({a}))
attempt(lambda: add.predict(({a},)))
"""
    lines = run_on(target, code, {"add.tflite": add, "split.tflite": split}).splitlines()
    name, qa_hex, qb_hex, out_hex, y_hex = lines[0].split()
    assert name == "array"
    qa_dev = np.frombuffer(binascii.unhexlify(qa_hex), np.int8)
    qb_dev = np.frombuffer(binascii.unhexlify(qb_hex), np.int8)
    assert qa_dev.tolist() == quantize_numpy(np.array(a, np.float32), 0.05, 2, "INT8").tolist()
    assert qb_dev.tolist() == quantize_numpy(np.array(b, np.float32), 0.1, -7, "INT8").tolist()
    with tempfile.TemporaryDirectory() as tmp:
        add_path = _write(Path(tmp), "add.tflite", add)
        split_path = _write(Path(tmp), "split.tflite", split)
        ref = reference_outputs(add_path, [[qa_dev.reshape(1, 6), qb_dev.reshape(1, 6)]])[0][0]
        assert binascii.unhexlify(out_hex) == ref.tobytes()
        y = dequantize_numpy(ref.ravel(), 0.12, 1)
        assert binascii.unhexlify(y_hex) == y.tobytes()
        # The floats go back in through predict(): quantized again, then split.
        q_again = quantize_numpy(y, 0.12, 1, "INT8").astype(np.int8).reshape(1, 6)
        parts = reference_outputs(split_path, [[q_again]])[0]
    name, count, *hexes = lines[1].split()
    assert (name, count) == ("tuple", "2")
    assert [binascii.unhexlify(h) for h in hexes] == \
        [dequantize_numpy(p.ravel(), 0.12, 1).tobytes() for p in parts] + [p.tobytes() for p in parts]
    assert lines[2:] == ["TypeError model has 2 inputs: give a tuple of 2"] * 2


@pytest.mark.parametrize("target", BOARDS)
def test_predict_allocates_nothing_after_the_first_call(target):
    code = DEVICE_PRELUDE + """
import array, micropython
it = tflm.Interpreter(tflm.Model(load('hello_world_int8.tflite')))
xs, xa = [1.5], array.array('f', [1.5])
xm, xb = memoryview(xa), bytes(1)
first = it.predict(xs)
first_raw = it.predict(xs, raw=True)
def locked(n):
    micropython.heap_lock()
    try:
        for i in range(n):
            y = it.predict(xs)
            y = it(xa)
            y = it.predict(xm)
            y = it.predict(xb)
            r = it.predict(xa, raw=True)
    finally:
        micropython.heap_unlock()
    return y, r
def counted(n):
    gc.collect()
    before = gc.mem_alloc()
    for i in range(n):
        y = it.predict(xs)
        r = it(xm, raw=True)
    return gc.mem_alloc() - before
y, r = locked(5)
print(y is first, r is first_raw, counted(50))
"""
    assert run_on(target, code, model_files("hello_world_int8.tflite")).split() == ["True", "True", "0"]


# predict()'s inputs and its errors (test_natmod.py runs the same on tflm.mpy).
PREDICT_SCRIPT = DEVICE_PRELUDE + """
import array
it = tflm.Interpreter(tflm.Model(load('hello_world_float.tflite')))
it.input(0)[0] = 1.25
it.invoke()
direct = it.output(0)[0]
y = it.predict([1.25])
print(y[0] == direct, y[0] == it.predict(array.array('f', [1.25]))[0], it.predict([1.25], raw=True)[0] == direct)
q = tflm.Interpreter(tflm.Model(load('hello_world_int8.tflite')))
attempt(lambda: q.predict([1.0, 2.0]))
attempt(lambda: q.predict([]))
attempt(lambda: q.predict('a'))
attempt(lambda: q.predict(3))
attempt(lambda: q.predict(array.array('h', [1])))
attempt(lambda: q.predict(bytes(2)))
attempt(lambda: q.predict(['a']))
attempt(lambda: q.predict([1.0], raw=True, other=1))
q.predict([[1.0]])
q.predict((array.array('f', [1.0]),))
print('wrapped ok')
# Any other sequence with a length (a ulab ndarray without the buffer protocol, ...).
print(q.predict(range(2, 3))[0] == q.predict([2.0])[0], q.predict(range(2, 3), raw=True)[0] == q.predict([2], raw=True)[0])
# but not one without an order
for x in ({2.0}, frozenset([2.0]), {2.0: 1}):
    attempt(lambda: q.predict(x))
# Untyped bytes are an input's values only where they are bytes: an int16
# input takes array('h') (set_input() copies any bytes raw).
s = tflm.Interpreter(tflm.Model(load('keyword_scrambled.tflite')))
for x in (bytes(192), bytearray(192), memoryview(bytes(192))):
    attempt(lambda: s.predict(x))
s.set_input(0, bytes(192))
print(s.predict(array.array('h', bytes(192)), raw=True)[0] == s.predict([0.0] * 96, raw=True)[0])
"""
PREDICT_FILES = ("hello_world_float.tflite", "hello_world_int8.tflite", "keyword_scrambled.tflite")
PREDICT_LINES = [
    "True True True",
    "ValueError input 0 takes 1 values, got 2",
    "ValueError input 0 takes 1 values, got 0",
    "TypeError input 0 is int8 [1,1]: pass array('b') or bytes of signed values, or floats (quantized), not str",
    "TypeError input 0: expected a sequence, array, memoryview or ndarray of numbers, not int",
    "TypeError input 0 is int8 [1,1]: pass array('b') or bytes of signed values, or floats (quantized), "
    "not array('h')",
    "ValueError input 0 is int8 [1,1] (1 bytes): got 2 bytes",
    # ['a'] is 'a' in a list of one
    "TypeError input 0 is int8 [1,1]: pass array('b') or bytes of signed values, or floats (quantized), not str",
    "TypeError extra keyword arguments given",
    "wrapped ok",
    "True True",
    "TypeError input 0: expected a sequence, array, memoryview or ndarray of numbers, not set (no order)",
    "TypeError input 0: expected a sequence, array, memoryview or ndarray of numbers, not frozenset (no order)",
    "TypeError input 0: expected a sequence, array, memoryview or ndarray of numbers, not dict (no order)",
    "TypeError input 0 is int16 [1,96]: pass array('h'), or floats (quantized), not bytes",
    "TypeError input 0 is int16 [1,96]: pass array('h'), or floats (quantized), not bytearray",
    "TypeError input 0 is int16 [1,96]: pass array('h'), or floats (quantized), not memoryview",
    "True",
]


def test_predict_float_model_and_errors():
    assert run_on("unix", PREDICT_SCRIPT, model_files(*PREDICT_FILES)).splitlines() == PREDICT_LINES


def io_text(tensors) -> str:
    return ", ".join(f"{t.dtype.lower()} " + ("x".join(str(d) for d in t.shape) if t.shape else "scalar")
                     for t in tensors)


@pytest.mark.parametrize("target", BOARDS)
def test_repr_of_model_interpreter_and_arena(target):
    names = ["hello_world_int8.tflite", "kws_ref_model.tflite"]
    lines = run_each_model(target, names, """\
    it = tflm.Interpreter(m)
    print(repr(m))
    print(repr(it))
    print(repr(it.arena))
""", """\
m = tflm.Model(bytes(load(NAMES[0])))  # a copy in RAM
shared = tflm.Arena(20000)
it = tflm.Interpreter(m, shared, planner='linear')
print(repr(m))
print(repr(it))
print(repr(shared))
""")
    where = "RAM" if target == "unix" else "flash"  # unix reads files into RAM; the boards use ROMFS in place
    expected = []
    for name in names + names[:1]:
        model = load_model(model_path(name))
        planner = "linear" if len(expected) == 6 else "greedy"
        layout = arena.plan_layout(model, planner)
        size = layout.needed if len(expected) < 6 else 20000
        expected.append(f"<Model {len(model.raw)} bytes in {'RAM' if len(expected) == 6 else where}, "
                        f"{len(model.main.operators)} ops; inputs {io_text(model.inputs)}; "
                        f"outputs {io_text(model.outputs)}>")
        expected.append(f"Interpreter(planner='{planner}', used={layout.used}, head={layout.head}, "
                        f"tail={layout.tail}, arena_size={size}, prepared_model=False)")
        expected.append(f"Arena(size={size}, used={layout.used}, head={layout.head}, tail={layout.tail}, "
                        f"free={size - layout.used}, interpreters=1, gaps=0)")
    assert lines == expected


def test_dir_lists_every_interpreter_attribute():
    """README: help() and dir() list every attribute of tflm.Interpreter,
    those answered on access (model, arena, planner, stage) too."""
    code = DEVICE_PRELUDE + """
names = dir(tflm.Interpreter)
print(all(n in names for n in ('model', 'arena', 'planner', 'stage', 'predict', 'invoke', 'memory_plan')))
it = tflm.Interpreter(tflm.Model(load('hello_world_int8.tflite')))
print(it.planner, it.stage, type(it.model).__name__, type(it.arena).__name__)
"""
    out = run_on("unix", code, model_files("hello_world_int8.tflite")).splitlines()
    assert out == ["True", "greedy () Model Arena"]
