"""The tflm module's Python API on every target: model info, tensors as
memoryviews, invoke without heap allocation, exact arena errors, missing ops."""

from __future__ import annotations

import ast
import time

import pytest

from conftest import (UNKNOWN_OPS_MESSAGE, unknown_ops_model, DEVICE_PRELUDE, TARGETS, model_files, model_path,
                      run_each_model, run_on)
from tflm_host import device
from tflm_host.arena import PLANNERS
from tflm_host.model import load_model

OPEN = DEVICE_PRELUDE + "import micropython\n"


@pytest.mark.parametrize("target", TARGETS)
def test_model_info(target):
    names = ["hello_world_int8.tflite", "hello_world_legacy.tflite"]
    lines = run_each_model(target, names, """\
    for t in m.inputs + m.outputs:
        print(repr((t.index, t.name, t.dtype, t.shape, t.scale, t.zero_point)))
    print(repr(m.ops), m.subgraphs, m.size)
""")
    for name in names:
        model = load_model(model_path(name))
        for t in model.inputs + model.outputs:
            index, tname, dtype, shape, scale, zp = ast.literal_eval(lines.pop(0))
            assert (index, tname, dtype, shape, zp) == (t.index, t.name, t.dtype.lower(), t.shape, t.zero_point)
            assert scale == pytest.approx(t.scale, rel=1e-6)  # float32 on the boards
        ops, subgraphs, size = lines.pop(0).rsplit(" ", 2)
        assert ast.literal_eval(ops) == tuple(op.opcode for op in model.main.operators)
        assert (int(subgraphs), int(size)) == (len(model.subgraphs), len(model.raw))


@pytest.mark.parametrize("target", TARGETS)
def test_tensors_invoke_and_heap_lock(target):
    code = OPEN + """
m = tflm.Model(load('hello_world_legacy.tflite'))
it = tflm.Interpreter(m, 4000)
x, y = it.input(0), it.output(0)
print(len(x), len(y), type(x).__name__)
x[0] = 1.5
def locked(n):
    # Locals only: storing globals would itself allocate.
    micropython.heap_lock()
    try:
        for i in range(n):
            it.invoke()
    finally:
        micropython.heap_unlock()
locked(3)
first = y[0]
it.set_input(0, bytes(4))  # 0.0 as raw bytes
it.invoke()
print(first != y[0], it.input(0)[0] == 0.0)
for bad in (lambda: it.input(1), lambda: it.output(-1)):
    try:
        bad()
    except IndexError as e:
        print('IndexError', e)
try:
    it.set_input(0, bytes(5))
except ValueError as e:
    print('ValueError', e)
"""
    out = run_on(target, code, model_files("hello_world_legacy.tflite")).splitlines()
    assert out == [
        "1 1 memoryview",
        "True True",
        "IndexError model has 1 inputs",
        "IndexError model has 1 outputs",
        "ValueError input 0 is float32 [1,1] (4 bytes): got 5 bytes",
    ]


@pytest.mark.parametrize("target", TARGETS)
def test_arena_too_small_is_exact(target):
    """Every arena size below the need raises a MemoryError naming the exact
    need; the need itself works and is what the interpreter then uses."""
    code = OPEN + """
m = tflm.Model(load('hello_world_legacy.tflite'))
need = tflm.arena_size(m)
print('need', need)
for size in list(range(1, need, 7)) + [need - 1]:
    try:
        tflm.Interpreter(m, size)
        print('no error at', size)
    except MemoryError as e:
        if str(e) != 'arena too small: needs %d bytes, has %d' % (need, size & ~15):
            print('bad message at', size, e)
it = tflm.Interpreter(m, need)
print('used', it.arena_used_bytes(), it.head_bytes() + it.tail_bytes())
# A bytearray at any alignment: the runtime aligns inside it.
ba = bytearray(need + 64)
for k in range(16):
    view = memoryview(ba)[k:k + need + 15]
    it2 = tflm.Interpreter(m, view)
    it2.input(0)[0] = 2.0
    it2.invoke()
    it.input(0)[0] = 2.0
    it.invoke()
    if it2.output(0)[0] != it.output(0)[0] or it2.arena_used_bytes() != need:
        print('differs at offset', k)
    it2.__del__()  # the next view overlaps this arena: one tflm.Arena per buffer in use
    it2 = None
print('done')
"""
    out = run_on(target, code, model_files("hello_world_legacy.tflite")).splitlines()
    need = int(out[0].split()[1])
    assert out[1:] == [f"used {need} {need}", "done"]


@pytest.mark.parametrize("target", TARGETS)
def test_exact_size_with_no_arena_argument(target):
    code = OPEN + """
for name in ('hello_world_int8.tflite', 'hello_world_float.tflite'):
    m = tflm.Model(load(name))
    it = tflm.Interpreter(m)
    print(it.arena_used_bytes() == tflm.arena_size(m), it.arena.size == tflm.arena_size(m))
"""
    out = run_on(target, code, model_files("hello_world_int8.tflite", "hello_world_float.tflite"))
    assert out.split() == ["True"] * 4


@pytest.mark.parametrize("target", ["unix", "MPS2_AN385"])
def test_missing_ops_are_named(target):
    code = OPEN + """
m = tflm.Model(load('unknown_ops.tflite'))
try:
    tflm.Interpreter(m, 100)
    print('built')
except NotImplementedError as e:
    print(e)
try:
    tflm.arena_size(m)
except NotImplementedError as e:
    print(e)
"""
    lines = run_on(target, code, {"unknown_ops.tflite": unknown_ops_model()}).splitlines()
    assert lines == [UNKNOWN_OPS_MESSAGE, UNKNOWN_OPS_MESSAGE]


@pytest.mark.parametrize("target", ["unix", "NETDUINO2"])
def test_buffers_changed_under_the_interpreter(target):
    code = OPEN + """
buf = bytearray(open(ROOT + '/hello_world_int8.tflite', 'rb').read())
m = tflm.Model(buf)
it = tflm.Interpreter(m, 1000)
it.invoke()
buf.extend(bytes(64))
try:
    it.invoke()
except RuntimeError as e:
    print('RuntimeError', e)
arena = bytearray(1000)
it = tflm.Interpreter(tflm.Model(open(ROOT + '/hello_world_int8.tflite', 'rb').read()), arena)
arena.extend(bytes(4000))
try:
    it.invoke()
except RuntimeError as e:
    print('RuntimeError', e)
"""
    out = run_on(target, code, model_files("hello_world_int8.tflite")).splitlines()
    assert out == ["RuntimeError model buffer was resized or moved", "RuntimeError arena buffer was resized or moved"]


@pytest.mark.parametrize("target", ["unix", "NETDUINO2"])
def test_views_keep_the_arena_alive(target):
    """A tensor view outlives its interpreter safely: it holds the arena."""
    code = OPEN + """
def make():
    it = tflm.Interpreter(tflm.Model(load('hello_world_int8.tflite')), 2000)
    it.input(0)[0] = 17
    it.invoke()
    return it.output(0), it.output(0)[0]
view, value = make()
for _ in range(5):
    gc.collect()
    junk = [bytearray(64) for _ in range(300)]
print(view[0] == value)
"""
    assert run_on(target, code, model_files("hello_world_int8.tflite")).split() == ["True"]


INT8_IN = "input 0 is int8 [1,1]"
PASS_INT8 = "pass array('b') or bytes of signed values"


@pytest.mark.parametrize("target", TARGETS)
def test_input_buffers_of_another_type_are_refused(target):
    """A buffer whose items are not the input's type is refused with what to
    pass (0-255 pixels in an array('B') are not read as signed bytes); the
    raw bytes must fill the input exactly unless an offset is given; a str
    is no buffer of values."""
    code = DEVICE_PRELUDE + """
from array import array
q = tflm.Interpreter(tflm.Model(load('hello_world_int8.tflite')))
f = tflm.Interpreter(tflm.Model(load('hello_world_float.tflite')))
attempt(lambda: q.predict(array('B', [200])))
attempt(lambda: q.set_input(0, array('B', [200])))
attempt(lambda: q.set_input(0, bytes(10)))
attempt(lambda: q.set_input(0, b''))
attempt(lambda: q.set_input(0, 'abc'))
attempt(lambda: q.set_input(0, array('f', [1.0])))
attempt(lambda: q.set_input(0, 7))
attempt(lambda: q.predict(memoryview(array('h', [1]))))
attempt(lambda: f.set_input(0, array('d', [1.0])))
attempt(lambda: f.set_input(0, array('f', [1.0, 2.0])))
attempt(lambda: f.set_input(0, b'12', 2))
# What is accepted: signed values as an array or as raw bytes, a part at an offset.
q.set_input(0, array('b', [-56])); q.invoke(); a = bytes(q.output(0))
q.set_input(0, bytes([200])); q.invoke(); b = bytes(q.output(0))
q.set_input(0, bytearray(1), 0); q.set_input(0, memoryview(bytes([200]))); v = q.input(0)[0]; q.invoke()
print(a == b == bytes(q.output(0)), v)
f.set_input(0, array('f', [1.5])); f.set_input(0, bytes(2), 2)  # 1.5's high half cleared: 0.0
print(f.input(0)[0], f.predict(array('d', [1.5]))[0] == f.predict([1.5])[0])
"""
    out = run_on(target, code, model_files("hello_world_int8.tflite", "hello_world_float.tflite")).splitlines()
    assert out == [
        f"TypeError {INT8_IN}: {PASS_INT8}, or floats (quantized), not array('B'); for 0-255 pixels subtract 128 (x - 128)",
        f"TypeError {INT8_IN}: {PASS_INT8}, not array('B'); for 0-255 pixels subtract 128 (x - 128)",
        f"ValueError {INT8_IN} (1 bytes): got 10 bytes",
        f"ValueError {INT8_IN} (1 bytes): got 0 bytes",
        f"TypeError {INT8_IN}: {PASS_INT8}, not str",
        f"TypeError {INT8_IN}: {PASS_INT8}, not array('f'); predict() quantizes floats",
        f"TypeError {INT8_IN}: {PASS_INT8}, not int",
        f"TypeError {INT8_IN}: {PASS_INT8}, or floats (quantized), not memoryview('h')",
        "TypeError input 0 is float32 [1,1]: pass array('f') or its raw bytes, not array('d')",
        "ValueError input 0 is float32 [1,1] (4 bytes): got 8 bytes",
        "ok",
        "True -56",
        "0.0 True",
    ]


@pytest.mark.parametrize("target", TARGETS)
def test_model_and_interpreter_arguments_say_what_to_pass(target):
    code = DEVICE_PRELUDE + """
m = tflm.Model(load('hello_world_int8.tflite'))
attempt(lambda: tflm.Model('model.tflite'))
attempt(lambda: tflm.Model(5))
attempt(lambda: tflm.Interpreter(m, 60000.0))
attempt(lambda: tflm.Interpreter(m, b'abc'))
attempt(lambda: tflm.Arena(b'abc'))
attempt(lambda: tflm.Arena(0))
attempt(lambda: tflm.Interpreter(m, 0))
attempt(lambda: tflm.Interpreter(m, -5))
attempt(lambda: tflm.Interpreter(m, planner='foo'))
attempt(lambda: tflm.arena_size(m, planner='foo'))
"""
    out = run_on(target, code, model_files("hello_world_int8.tflite")).splitlines()
    arena = "arena must be a size in bytes (int), a writable buffer (a bytearray, a memoryview of one)"
    planners = ", ".join(repr(p) for p in PLANNERS + ("offline",))
    assert out == [
        "TypeError tflm.Model takes the model's bytes, not a path: use tflm.load('model.tflite')",
        "TypeError tflm.Model takes the model's bytes (bytes, bytearray, memoryview, a ROMFS file), not int: "
        "or use tflm.load(path)",
        f"TypeError {arena}, a tflm.Arena or None (the exact size), not float",
        f"TypeError {arena}, a tflm.Arena or None (the exact size), not bytes (read-only)",
        f"TypeError {arena}, not bytes (read-only)",
        "ValueError arena size must be positive, not 0",
        "ValueError arena size must be positive, not 0",
        "ValueError arena size must be positive, not -5",
        f"ValueError unknown planner 'foo' (planners: {planners})",
        f"ValueError unknown planner 'foo' (planners: {planners})",
    ]



CTRL_C = """
import tflm
m = tflm.load(ROOT + '/person_detect.tflite')
out = bytearray(2)
# The output outside the arena: only the last operator writes it.
it = tflm.Interpreter(m, preallocated={m.outputs[0].index: out})
image = bytes(range(256)) * 36
def run():
    it.set_input(0, image)  # again each time: the plan reuses the input's bytes
    it.invoke()
run()
first = bytes(out)
for attempt in range(4):
    state = 0
    print('go')
    try:
        while True:
            out[:] = b'\\x55\\x55'
            state = 1
            run()
            state = 2
    except KeyboardInterrupt:
        # Stopped between two operators: the last one never ran.
        inside = state == 1 and bytes(out) == b'\\x55\\x55'
        print('stopped', state, inside)
    if inside:
        break
run()
print('again', bytes(out) == first)
"""


def test_ctrl_c_stops_an_invoke_between_operators():
    """Ctrl-C during invoke() (person_detect: about 18 million instructions)
    raises KeyboardInterrupt from inside it, before its last operator, and
    the interpreter then runs the model again with the same answer. (Before,
    the engine looked only at the ends of subgraphs: the whole invoke ran,
    the output was written.) The stm32 port's firmware: its UART sees a
    Ctrl-C while code runs (the qemu port's reads its UART only for input).
    A Ctrl-C that lands past the engine's last check (in the last operator,
    or in Python between two invokes) stops the loop outside invoke(): the
    script says so and the test sends another, four times at most; an
    engine that never stops between operators fails every time."""
    from tflm_host import romfs

    image = romfs.build_image({"person_detect.tflite": model_path("person_detect.tflite").read_bytes()})
    with device.QemuServer("PYBV11_QEMU", image=image, keep_connection=True) as server:
        transport = server.transport
        transport.enter_raw_repl(soft_reset=False)
        device.exec_chunk(transport, "ROOT = '/rom'", 30)
        transport.exec_raw_no_follow(CTRL_C)
        stops = []
        for _ in range(4):
            assert transport.read_until(1, b"go\r\n", timeout=60).endswith(b"go\r\n"), stops
            time.sleep(0.5)
            transport.serial.write(b"\x03")
            stops.append(transport.read_until(1, b"\r\n", timeout=60))
            if stops[-1].endswith(b"stopped 1 True\r\n"):
                break
        out = transport.read_until(1, b"\x04", timeout=60) + transport.read_until(1, b"\x04", timeout=10)
        assert stops[-1].endswith(b"stopped 1 True\r\n"), stops
        assert b"again True\r\n" in out, (stops, out)



@pytest.mark.parametrize("target", TARGETS)
def test_labels_beside_a_loaded_model(target):
    """tflm.load(path) reads the path with .labels for its extension, as
    tflm-host deploy names the file: one str per line; None without one."""
    code = OPEN + """
labels = tflm.load(ROOT + '/hello_world_int8.tflite', quiet=True).labels
print(type(labels).__name__, len(labels), repr(labels[:3]), labels[3] == 'caf\\u00e9')
print(repr(tflm.load(ROOT + '/hello_world_float.tflite', quiet=True).labels))
print(repr(tflm.Model(load('hello_world_int8.tflite')).labels))
try:
    tflm.load(ROOT + '/hello_world_legacy.tflite', quiet=True)
except ValueError as e:
    print(str(e).replace(ROOT, 'ROOT'))
"""
    files = model_files("hello_world_int8.tflite", "hello_world_float.tflite", "hello_world_legacy.tflite")
    files["hello_world_int8.labels"] = "sine\nnot sine\r\n\ncafé".encode()
    files["hello_world_legacy.labels"] = b"yes\n\xff\xfe\n"
    out = run_on(target, code, files).splitlines()
    assert out == ["tuple 4 ('sine', 'not sine', '') True", "None", "None",
                   "ROOT/hello_world_legacy.labels is not UTF-8 text"]
