"""Attacks on what the module does beyond reading a model: prepared models,
ROMFS images, predict(), shared arenas, set_tensor_buffer() and the arena's
own bytes (docs/reliability.md, "Threat model"). Each once ended in a
segmentation fault on the unix port (a HardFault on a board) or in silent
corruption; each now gives a clean exception and leaves every interpreter
usable or refusing with an exception, on the unix port and the boards.

1. a model whose operator writes a constant (in a prepared model: pointed
   at the prepared data, its record patched to match);
2. a ROMFS image in a bytearray rewritten after Interpreter();
3. predict() with values whose conversion runs Python code that moves or
   writes the buffers;
4. Interpreter.__del__() called by hand in a shared arena;
5. SignalFilterBank with fewer outputs than channels;
6. one bytearray given as the arena of two interpreters;
7. set_tensor_buffer() with a slice of another interpreter's arena;
8. an arena over the model's own bytes;
9. the arena's bytes written between calls (Arena.buffer)."""

from __future__ import annotations

import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
import tflite

from conftest import MODELS, DEVICE_PRELUDE, EVERY_TARGET, TARGETS, int8_add_model, model_files, model_path, \
    run_on
from model_spots import spots
from tflm_host import prepare, romfs
from tflm_dev.builder import ModelBuilder
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs

HELLO = "hello_world_int8.tflite"


def reference(model: bytes, samples: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "m.tflite")
        path.write_bytes(model)
        return reference_outputs(path, samples)


def hello_ref(x: int) -> int:
    out = reference_outputs(model_path(HELLO), [[np.array([[x]], np.int8)]])
    return int(out[0][0].ravel()[0])


# ---------------------------------------------------------------------------
# 1. Operators writing constants

N = 128  # the constant covers the prepared data's index lists and records


def constant_output_model(n: int = N) -> bytes:
    """ADD(x, k) -> y where y is a constant (its buffer holds data)."""
    b = ModelBuilder()
    sg = b.subgraph()
    q = ([0.1], [0])
    x = sg.tensor((1, n), "INT8", quant=q, name="x")
    k = sg.tensor((1, n), "INT8", quant=q, data=np.arange(n, dtype=np.int8), name="k")
    y = sg.tensor((1, n), "INT8", quant=q, data=np.zeros(n, np.int8), name="y_constant")
    sg.op("ADD", [x, k], [y])
    sg.inputs, sg.outputs = [x], [y]
    return b.build()


def constant_input_model() -> bytes:
    """A subgraph input that is a constant: set_input() would write the model."""
    b = ModelBuilder()
    sg = b.subgraph()
    q = ([0.1], [0])
    x = sg.tensor((1, 4), "INT8", quant=q, data=np.arange(4, dtype=np.int8), name="x_constant")
    y = sg.tensor((1, 4), "INT8", quant=q, name="y")
    sg.op("ADD", [x, x], [y])
    sg.inputs, sg.outputs = [x], [y]
    return b.build()


def _metadata_buffer(data: bytes, name: str) -> tuple[int, int, int]:
    """(buffer index, model offset, bytes) of a metadata entry."""
    m = tflite.Model.GetRootAsModel(data, 0)
    for i in range(m.MetadataLength()):
        if m.Metadata(i).Name().decode() == name:
            index = m.Metadata(i).Buffer()
            tab = m.Buffers(index)._tab
            off = tab.Offset(4)
            return index, tab.Vector(off), tab.VectorLen(off)
    raise KeyError(name)


def _buffer_pos(data: bytes, index: int) -> int:
    tab = tflite.Model.GetRootAsModel(data, 0).Buffers(index)._tab
    return tab.Vector(tab.Offset(4))


def _record(data_at: int, nbytes: int) -> bytes:
    """A constant int8 tensor's record as the engine derives it (engine/records.h)."""
    return struct.pack("<IIhhBBBB", data_at, nbytes, -1, -1, 9, 3, 0, 0)


def constant_output_prepared() -> bytes:
    """The prepared model of point 1: the constant output's buffer is the
    TflmPreparedData metadata, and the prepared data's records and lists
    say so too, so every check of the prepared data passes; invoke() then
    wrote the ADD's sums over the index lists and records it follows next.
    (Made by hand: the engine refuses to prepare such a model.)"""
    base = constant_output_model()
    # The ADD's kernel data, from the same model with an ordinary output.
    blobs, _, _, _, _ = prepare.kernel_data(int8_add_model(N, "k", np.arange(N, dtype=np.int8)))
    # x is record 0, k and y the constants 0x8000 and 0x8001.
    lists = struct.pack("<2H", 0, 0x8001) + struct.pack("<4H", 0, 0x8000, 0x8001, 0)
    records_map = struct.pack("<3H", 0, 0x8000, 0x8001)
    blob = prepare.prepared_metadata(blobs, lists, records_map, _record(0, N) * 2)
    from tflm_host import fbedit
    data = bytearray(fbedit.edit_model(base, metadata={prepare.METADATA_NAME: blob}))
    index, pos, length = _metadata_buffer(bytes(data), prepare.METADATA_NAME)
    assert length >= N
    spot = next(s.pos for s in spots(bytes(data)) if s.what == "tensor 2 buffer")
    struct.pack_into("<I", data, spot, index)
    _, _, _, _, recs_at, _, _ = struct.unpack_from("<7I", data, pos)
    consts_at = pos + (recs_at + 2 * 3 + 7) // 8 * 8
    k_pos = _buffer_pos(bytes(data), tflite.Model.GetRootAsModel(bytes(data), 0).Subgraphs(0).Tensors(1).Buffer())
    data[consts_at:consts_at + 32] = _record(k_pos, N) + _record(pos, N)
    return bytes(data)


@pytest.mark.parametrize("target", TARGETS)
def test_models_writing_constants_are_refused(target):
    files = {"const_out.tflite": constant_output_model(), "const_out_prepared.tflite": constant_output_prepared(),
             "const_in.tflite": constant_input_model()}
    files.update(model_files(HELLO))
    code = DEVICE_PRELUDE + f"""
for name in ('const_out.tflite', 'const_out_prepared.tflite', 'const_in.tflite'):
    attempt(lambda: tflm.Model(load(name)))
it = tflm.Interpreter(tflm.Model(load('{HELLO}')))
it.input(0)[0] = 42
it.invoke()
print('still works', it.output(0)[0])
"""
    out = run_on(target, code, files).splitlines()
    assert out == [
        "ValueError malformed model: operator 0 of subgraph 0 writes tensor 2, a constant (its bytes are the "
        "model's buffer 2)",
        "ValueError malformed model: operator 0 of subgraph 0 writes tensor 2, a constant (its bytes are the "
        "model's buffer 3)",
        "ValueError malformed model: input 0 of subgraph 0 is tensor 0, a constant (its bytes are the model's "
        "buffer 1)",
        f"still works {hello_ref(42)}",
    ]


def test_host_refuses_constant_outputs(tmp_path):
    """tflm-host run --target host on the crafted prepared model: once a
    segmentation fault with no message; one line and status 2."""
    path = tmp_path / "crafted.tflite"
    path.write_bytes(constant_output_prepared())
    for command in (["run", str(path), "--target", "host"], ["arena", str(path)], ["inspect", str(path)]):
        proc = subprocess.run([sys.executable, "-m", "tflm_host", *command], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 2, (command, proc.stdout, proc.stderr)
        assert proc.stderr.strip() == (f"tflm-host {command[0]}: crafted.tflite: malformed model: operator 0 of "
                                       "subgraph 0 writes tensor 2, a constant (its bytes are the model's buffer 3)")


@pytest.mark.parametrize("target", TARGETS)
def test_constant_output_made_after_load(target):
    """The model's bytes changed after Model() so that the ADD writes a
    constant: the build refuses it (the reader's check is not trusted)."""
    data = int8_add_model(N, "k", np.arange(N, dtype=np.int8))
    spot = next(s.pos for s in spots(data) if s.what == "operator 0 outputs[0]")
    code = DEVICE_PRELUDE + f"""
ba = bytearray(load('m.tflite'))
m = tflm.Model(ba)
ba[{spot}:{spot + 4}] = (1).to_bytes(4, 'little')  # the ADD now writes k
attempt(lambda: tflm.Interpreter(m))
attempt(lambda: tflm.arena_size(m))
"""
    out = run_on(target, code, {"m.tflite": data}).splitlines()
    assert out == ["ValueError malformed model: operator 0 writes tensor 1 of subgraph 0, a constant"] * 2


# ---------------------------------------------------------------------------
# 2. A ROMFS image in a bytearray, rewritten after Interpreter()

def romfs_with_prepared_hello() -> tuple[bytes, int, int]:
    """The image, and where the prepared data sits in it (offset, bytes)."""
    data = prepare.prepare_model(model_path(HELLO).read_bytes())
    image = romfs.build_image({"m.tflite": data})
    offset, _ = romfs.list_image(image)["m.tflite"]
    _, pos, length = _metadata_buffer(data, prepare.METADATA_NAME)
    return image, offset + pos, length


@pytest.mark.parametrize("target", TARGETS)
def test_romfs_in_a_bytearray_rewritten(target):
    """vfs.VfsRom over a bytearray: the file is a read-only view, but its
    bytes change with the bytearray. The prepared data read in place is
    checked before each invoke: a ValueError while it differs, the right
    output again once it is restored."""
    image, at, length = romfs_with_prepared_hello()
    code = DEVICE_PRELUDE + f"""
import vfs
img = bytearray(load('rom.img'))
vfs.mount(vfs.VfsRom(img), '/attack')
m = tflm.Model(memoryview(open('/attack/m.tflite', 'rb')))
it = tflm.Interpreter(m)
def run(x):
    it.input(0)[0] = x
    it.invoke()
    print('out', it.output(0)[0])
run(42)
saved = bytes(img[{at}:{at + length}])
for i in range({at + 24}, {at + length}):
    img[i] = 0x7f
attempt(lambda: run(42))
attempt(lambda: it.predict([1.0]))
img[{at}:{at + length}] = saved
run(42)
vfs.umount('/attack')
"""
    out = run_on(target, code, {"rom.img": image}).splitlines()
    changed = ("ValueError the prepared data this interpreter reads in place from the model changed since it was "
               "built (a rewritten buffer or ROMFS region: build it again)")
    assert out == [f"out {hello_ref(42)}", changed, changed, f"out {hello_ref(42)}"]


# ---------------------------------------------------------------------------
# 3. predict() with values whose conversion runs Python code

PREDICT_CALLBACKS = DEVICE_PRELUDE + """
m = tflm.Model(load('hello_world_int8.tflite'))
def fresh():
    ba = bytearray(tflm.arena_size(m) + 16)
    return ba, tflm.Interpreter(m, ba)
def churn():
    return [bytearray(64) for _ in range(300)]

class GrowingIter:
    # __iter__ grows the arena's bytearray: MicroPython moves it and frees the old block.
    def __init__(self, ba): self.ba = ba
    def __len__(self): return 1
    def __iter__(self):
        self.ba.extend(bytes(4096))
        junk = churn()
        yield 1.5
class GrowingLen:
    def __init__(self, ba): self.ba = ba
    def __len__(self):
        self.ba.extend(bytes(4096))
        return 1
    def __iter__(self):
        yield 1.5
class GrowingFloat:
    def __init__(self, ba): self.ba = ba
    def __float__(self):
        self.ba.extend(bytes(4096))
        churn()
        return 1.5
class Scribble:
    # Writes the arena's records (the top of the buffer) while predict() runs.
    def __init__(self, ba): self.ba = ba
    def __float__(self):
        for i in range(len(self.ba) - 256, len(self.ba)):
            self.ba[i] = 0xa5
        return 1.5

ba, it = fresh()
attempt(lambda: it.predict(GrowingIter(ba)))
ba, it = fresh()
attempt(lambda: it.predict(GrowingLen(ba)))
ba, it = fresh()
attempt(lambda: it.predict([[GrowingFloat(ba)]]))
ba, it = fresh()
attempt(lambda: it.predict([(GrowingFloat(ba),)]))
ba, it = fresh()
attempt(lambda: it.predict([[Scribble(ba)]]))
attempt(lambda: it.predict([1.5]))

# A pre-allocated input grown by the conversion.
buf = bytearray(1)
it = tflm.Interpreter(m, preallocated={m.inputs[0].index: buf})
attempt(lambda: it.predict([[GrowingFloat(buf)]]))

# The model's own bytearray grown by the conversion.
mb = bytearray(load('hello_world_int8.tflite'))
m2 = tflm.Model(mb)
it = tflm.Interpreter(m2)
attempt(lambda: it.predict([[GrowingFloat(mb)]]))

# A list emptied while its items are converted (its items move).
m3 = tflm.Model(load('two_inputs.tflite'))
class Clear:
    def __init__(self, lst): self.lst = lst
    def __float__(self):
        del self.lst[:]
        churn()
        return 1.5
lst = [0.0] * 64
lst[0] = Clear(lst)
it3 = tflm.Interpreter(m3)
attempt(lambda: it3.predict((lst, bytes(64))))

# Two inputs: the second's conversion grows the arena after the first was written.
ba3 = bytearray(tflm.arena_size(m3) + 16)
it3 = tflm.Interpreter(m3, ba3)
class Grow3:
    def __len__(self): return 64
    def __iter__(self):
        ba3.extend(bytes(1024))
        for i in range(64):
            yield 0.0
attempt(lambda: it3.predict((bytes(64), Grow3())))

# The interpreter that saw none of it still works.
it = tflm.Interpreter(m)
print('still works', it.predict([1.5])[0] == it.predict(GrowingLen(bytearray(1)))[0])
"""


def two_inputs_model() -> bytes:
    return int8_add_model(64, "z", second_is_input=True)


@pytest.mark.parametrize("target", TARGETS)
def test_predict_callbacks_that_move_buffers(target):
    files = model_files(HELLO)
    files["two_inputs.tflite"] = two_inputs_model()
    out = run_on(target, PREDICT_CALLBACKS, files).splitlines()
    moved = "RuntimeError arena buffer was resized or moved"
    overwritten = ("ValueError this interpreter's records in the arena were overwritten since it was built (the "
                   "arena's bytes are the interpreter's alone: build it again)")
    assert out == [
        moved, moved, moved, moved,
        overwritten, overwritten,
        "RuntimeError a pre-allocated tensor's buffer was resized or moved",
        "RuntimeError model buffer was resized or moved",
        "ValueError input 0 takes 64 values, got 0",
        moved,
        "still works True",
    ]


# ---------------------------------------------------------------------------
# 4. __del__ called by hand

@pytest.mark.parametrize("target", EVERY_TARGET)
def test_del_by_hand_in_a_shared_arena(target):
    """The tail goes back to the arena and the next interpreter takes it:
    the first refuses every method after its __del__, the second works."""
    code = DEVICE_PRELUDE + f"""
m = tflm.Model(load('{HELLO}'))
m2 = tflm.Model(load('trained_lstm_int8.tflite'))
a = tflm.Arena(tflm.arena_size(m2) + 2048)
it1 = tflm.Interpreter(m, a)
it1.__del__()
it1.__del__()
it2 = tflm.Interpreter(m2, a)
for f in (lambda: it1.tensor(2), lambda: it1.input(0), lambda: it1.output(0), it1.invoke,
          lambda: it1.predict([1.0]), lambda: it1.set_input(0, b'1'), it1.buffers, it1.memory_plan,
          it1.allocations, it1.print_allocations, it1.arena_used_bytes, it1.head_bytes, it1.tail_bytes,
          lambda: it1.set_tensor_buffer(0, bytearray(1)), lambda: it1([1.0])):
    attempt(f)
it2.invoke()
print(a)
it3 = tflm.Interpreter(m, a)
it3.input(0)[0] = 42
it3.invoke()
print('works', it3.output(0)[0])
"""
    out = run_on(target, code, model_files(HELLO, "trained_lstm_int8.tflite")).splitlines()
    released = "ValueError interpreter was released (its __del__ ran): build a new one"
    assert out[:15] == [released] * 15
    assert out[15].startswith("Arena(") and "interpreters=1" in out[15]
    assert out[16] == f"works {hello_ref(42)}"


# ---------------------------------------------------------------------------
# 5. SignalFilterBank with fewer outputs than channels

def filter_bank(channels: int, outputs: int) -> bytes:
    from opgen import single_op
    from opgen.signal import _opts

    widths = np.array([3] * (channels + 1))
    freq = np.array([2 * i for i in range(channels + 1)])
    starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
    n_w = int(widths.sum())
    rng = np.random.default_rng(5)
    w = rng.integers(-4096, 4097, n_w).astype(np.int16)
    uw = rng.integers(-4096, 4097, n_w).astype(np.int16)
    model, _ = single_op("CUSTOM:SignalFilterBank",
                         [((40,), "UINT32"), ((n_w,), "INT16", w), ((n_w,), "INT16", uw),
                          ((channels + 1,), "INT16", freq.astype(np.int16)),
                          ((channels + 1,), "INT16", starts.astype(np.int16)),
                          ((channels + 1,), "INT16", widths.astype(np.int16))],
                         [((outputs,), "UINT64", None)], custom_options=_opts(num_channels=channels))
    return model


@pytest.mark.parametrize("target", TARGETS)
def test_filter_bank_with_fewer_outputs_than_channels(target):
    """eval() once indexed the channel tables by the output's count, not the
    channels': a zero input gave a non-zero output, and reads went past the
    input. The first channels, bit-exact with TFLM."""
    rng = np.random.default_rng(3)
    samples = [np.zeros(40, np.uint32), rng.integers(0, 2 ** 32, 40, dtype=np.uint64).astype(np.uint32)]
    files, expected = {}, []
    for outputs in (6, 3, 1):
        model = filter_bank(6, outputs)
        files[f"fb{outputs}.tflite"] = model
        ref = reference(model, [[s] for s in samples])
        expected += [[int(v) for v in r[0].ravel()] for r in ref]
    code = DEVICE_PRELUDE + """
import struct
for n in (6, 3, 1):
    it = tflm.Interpreter(tflm.Model(load('fb%d.tflite' % n)))
    for s in SAMPLES:
        it.set_input(0, s)
        it.invoke()
        print(list(struct.unpack('<%dQ' % n, bytes(it.output(0)))))
""".replace("SAMPLES", repr([s.tobytes() for s in samples]))
    out = run_on(target, code, files).splitlines()
    assert out == [str(e) for e in expected]
    assert expected[2] == [0, 0, 0]


# ---------------------------------------------------------------------------
# 6-8. Buffers shared between arenas, pre-allocated tensors and the model

@pytest.mark.parametrize("target", EVERY_TARGET)
def test_one_buffer_one_arena(target):
    """The same bytearray given to two interpreters is one tflm.Arena (both
    tails once went to its top, the second over the first's records); a
    buffer overlapping another arena in use is refused."""
    code = DEVICE_PRELUDE + f"""
m = tflm.Model(load('{HELLO}'))
m2 = tflm.Model(load('trained_lstm_int8.tflite'))
ba = bytearray(tflm.arena_size(m2) + 2048)
it1 = tflm.Interpreter(m, ba)
it2 = tflm.Interpreter(m2, ba)
print('same arena', it1.arena is it2.arena, tflm.Arena(ba) is it1.arena)
it2.invoke()
it1.input(0)[0] = 42
it1.invoke()
print('works', it1.output(0)[0])
attempt(lambda: tflm.Interpreter(m, memoryview(ba)[16:]))
attempt(lambda: tflm.Interpreter(m, tflm.Arena(memoryview(ba)[:1024])))
"""
    out = run_on(target, code, model_files(HELLO, "trained_lstm_int8.tflite")).splitlines()
    overlap = ("ValueError the arena's buffer overlaps the arena of another tflm.Arena in use: give interpreters "
               "that share memory one tflm.Arena")
    assert out == ["same arena True True", f"works {hello_ref(42)}", overlap, overlap]


@pytest.mark.parametrize("target", EVERY_TARGET)
def test_buffers_of_other_interpreters(target):
    """A pre-allocated tensor in another interpreter's arena (its output
    once landed on the other's records), an arena over another's
    pre-allocated tensor, an arena over the model's own bytes (invoke()
    once wrote over the weights): refused."""
    model = load_model(model_path(HELLO).read_bytes())
    x, y = model.inputs[0].index, model.outputs[0].index
    code = DEVICE_PRELUDE + f"""
mb = bytearray(load('{HELLO}'))
m = tflm.Model(mb)
it1 = tflm.Interpreter(m)
it2 = tflm.Interpreter(m)
top = len(it1.arena.buffer)
attempt(lambda: it2.set_tensor_buffer({y}, memoryview(it1.arena.buffer)[top - 300:top - 299]))
attempt(lambda: tflm.Interpreter(m, preallocated={{{x}: memoryview(it1.arena.buffer)[0:1]}}))
out = bytearray(4096)
it3 = tflm.Interpreter(m, preallocated={{{y}: memoryview(out)[100:101]}})
attempt(lambda: tflm.Interpreter(m, memoryview(out)[16:]))
attempt(lambda: tflm.Interpreter(m, memoryview(mb)[len(mb) // 2:]))
for it in (it1, it2, it3):
    it.input(0)[0] = 42
    it.invoke()
    print('works', it.output(0)[0])
"""
    out = run_on(target, code, model_files(HELLO)).splitlines()
    assert out == [
        f"ValueError buffer for tensor {y} overlaps the arena of another interpreter",
        f"ValueError buffer for tensor {x} overlaps the arena of another interpreter",
        "ValueError the arena's buffer overlaps a pre-allocated tensor of another interpreter",
        "ValueError the arena overlaps the model's bytes",
    ] + [f"works {hello_ref(42)}"] * 3


# ---------------------------------------------------------------------------
# 9. The arena's bytes written between calls

@pytest.mark.parametrize("target", EVERY_TARGET)
def test_arena_bytes_written_between_calls(target):
    """Writing the tail (records, kernel data) through Arena.buffer: every
    method that follows them refuses until the bytes are back; the head
    (activations) and variable tensors (through tensor()) may be written."""
    lstm = load_model(model_path("trained_lstm_int8.tflite").read_bytes())
    variables = [t.index for t in lstm.main.tensors if t.is_variable]
    code = DEVICE_PRELUDE + f"""
m = tflm.Model(load('{HELLO}'))
it = tflm.Interpreter(m)
buf = it.arena.buffer
top = it.arena.size  # the module aligns its own arenas: the usable bytes start the buffer
saved = bytes(buf)
def run():
    it.input(0)[0] = 42
    it.invoke()
    return it.output(0)[0]
first = run()
for k in (1, 17, 64, 200):
    buf[top - k] ^= 0x5a
    for f in (run, lambda: it.tensor(0), lambda: it.input(0), lambda: it.predict([1.0]), it.buffers,
              it.memory_plan, lambda: it.set_input(0, b'1'), lambda: it.set_tensor_buffer(0, bytearray(1))):
        attempt(f)
    buf[top - k] ^= 0x5a
    print('restored', run() == first)
# The head holds activations: any bytes there are values.
for i in range(it.head_bytes()):
    buf[i] = 0xff
print('head written', run() == first)
# Variable tensors are the user's to write (state reset), through tensor().
m2 = tflm.Model(load('trained_lstm_int8.tflite'))
it2 = tflm.Interpreter(m2)
for v in {variables}:
    t = it2.tensor(v)
    for i in range(len(t)):
        t[i] = 3
it2.invoke()
print('variables written', len(bytes(it2.output(0))))
"""
    out = run_on(target, code, model_files(HELLO, "trained_lstm_int8.tflite")).splitlines()
    overwritten = ("ValueError this interpreter's records in the arena were overwritten since it was built (the "
                   "arena's bytes are the interpreter's alone: build it again)")
    for k in range(4):
        block = out[9 * k:9 * k + 9]
        assert block == [overwritten] * 8 + ["restored True"], (k, block)
    assert out[36:] == ["head written True", "variables written 10"]


@pytest.mark.parametrize("target", EVERY_TARGET)
def test_own_arena_handed_out_after_invokes(target):
    """An arena the module allocated is compared with its seal only once
    Arena.buffer has handed it out (no other code can write it before). The
    seal taken at the build, and again after each invoke of a model whose
    kernels keep state in the tail (audio_preprocessor_int8's spectral
    subtraction), is right then, and a byte written after it is refused."""
    code = DEVICE_PRELUDE + f"""
for name in ('{HELLO}', 'audio_preprocessor_int8.tflite'):
    m = tflm.Model(load(name))
    it = tflm.Interpreter(m)
    fresh = tflm.Interpreter(m, tflm.Arena(tflm.arena_size(m) + 16))
    for k in range(3):
        it.invoke()
        fresh.invoke()
    buf = it.arena.buffer
    top = it.arena.size
    it.invoke()
    fresh.invoke()
    print('handed out', bytes(it.output(0)) == bytes(fresh.output(0)))
    buf[top - 1] ^= 0x5a
    attempt(it.invoke)
    buf[top - 1] ^= 0x5a
    it.invoke()
    fresh.invoke()
    print('restored', bytes(it.output(0)) == bytes(fresh.output(0)))
"""
    out = run_on(target, code, model_files(HELLO, "audio_preprocessor_int8.tflite")).splitlines()
    overwritten = ("ValueError this interpreter's records in the arena were overwritten since it was built (the "
                   "arena's bytes are the interpreter's alone: build it again)")
    assert out == ["handed out True", overwritten, "restored True"] * 2


@pytest.mark.parametrize("target", EVERY_TARGET)
def test_views_of_a_released_interpreter(target):
    """Views of an interpreter's tensors outlive it: after its __del__ the
    next interpreters built in the arena (here the module's own, never
    handed out) take bytes the views still reach. Written through them, the
    records of those interpreters are refused (the arena is exposed from
    the release on), not followed: once a crash and wrong outputs."""
    lstm = load_model(model_path("trained_lstm_int8.tflite").read_bytes())
    variables = [t.index for t in lstm.main.tensors if t.is_variable]
    code = DEVICE_PRELUDE + f"""
a = tflm.Arena(4096)
it1 = tflm.Interpreter(tflm.Model(load('trained_lstm_int8.tflite')), a)
views = [it1.tensor(v) for v in {variables}]
it1.__del__()
m = tflm.Model(load('{HELLO}'))
its = [tflm.Interpreter(m, a), tflm.Interpreter(m, a)]
for v in views:
    for i in range(len(v)):
        v[i] = 127
for it in its:
    try:
        it.input(0)[0] = 42
        it.invoke()
        print('works', it.output(0)[0])
    except ValueError as e:
        print('ValueError', e)
"""
    out = run_on(target, code, model_files(HELLO, "trained_lstm_int8.tflite")).splitlines()
    overwritten = ("ValueError this interpreter's records in the arena were overwritten since it was built (the "
                   "arena's bytes are the interpreter's alone: build it again)")
    assert len(out) == 2 and all(line in (overwritten, f"works {hello_ref(42)}") for line in out), out
    assert overwritten in out, out  # the views reached records (else the case tests nothing)


def test_seals_right_when_exposed_every_model():
    """The seal left uncompared in the module's own arena is only sound if
    every seal taken meanwhile is right: for every shared model and models
    with control flow (WHILE, IF: kernel state in the tail), three
    invokes, reset(), an invoke, then Arena.buffer handed out and one more
    invoke, which compares the seal."""
    from test_control_flow import _count_model, _if_model

    files = model_files(*sorted(p.name for p in MODELS.glob("*.tflite")))
    files["while.tflite"] = _count_model(5, outer=2)
    files["if.tflite"] = _if_model()
    code = DEVICE_PRELUDE + f"""
for name in {sorted(files)}:
    it = tflm.Interpreter(tflm.Model(load(name)))
    for k in range(3):
        it.invoke()
    it.reset()
    it.invoke()
    buf = it.arena.buffer
    attempt(it.invoke)
"""
    assert run_on("unix", code, files).splitlines() == ["ok"] * len(files)


# ---------------------------------------------------------------------------
# Smaller items

@pytest.mark.parametrize("target", TARGETS)
def test_model_tensor_index_not_truncated(target):
    code = DEVICE_PRELUDE + f"""
m = tflm.Model(load('{HELLO}'))
for i in (2 ** 32, 2 ** 32 + 1, 2 ** 31, 10):
    attempt(lambda: m.tensor(i))
"""
    out = run_on(target, code, model_files(HELLO)).splitlines()
    if target == "unix":
        assert out == ["IndexError tensor index out of range"] * 4
    else:
        assert out[:2] == ["OverflowError overflow converting long int to machine word"] * 2
        assert out[2:] == ["OverflowError overflow converting long int to machine word",
                           "IndexError tensor index out of range"]


def test_run_count_is_bounded(tmp_path):
    """--count 100000000 once made input sets until memory ran out, with no
    progress and no way out but a signal: refused in one line."""
    proc = subprocess.run([sys.executable, "-m", "tflm_host", "run", str(model_path(HELLO)), "--target", "host",
                           "--count", "100000000"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == ("tflm-host run: error: argument --count: 100000000 is more "
                                                    "than 10000")


def test_interrupt_is_one_line(monkeypatch, capsys):
    """Ctrl-C during a run: one line and the shell's status for SIGINT, no traceback."""
    from tflm_host import cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run_model", interrupted)
    assert cli.main(["run", str(model_path(HELLO)), "--target", "host"]) == 130
    assert capsys.readouterr().err == "tflm-host run: interrupted\n"


@pytest.mark.parametrize("values,message", [
    ([[np.nan]], "input_0 holds nan at index 0"),
    ([[300.0]], "input_0 holds 300.0 at index 0"),
    ([[1.5]], "input_0 holds 1.5 at index 0"),
    ([[-129]], "input_0 holds -129 at index 0"),
])
def test_npz_values_an_int8_input_cannot_take(tmp_path, values, message):
    """NaN (and values outside int8) in an .npz once printed numpy's
    RuntimeWarning and ran whatever the cast made of them."""
    path = tmp_path / "in.npz"
    np.savez(path, input_0=np.array(values))
    proc = subprocess.run([sys.executable, "-W", "error", "-m", "tflm_host", "run", str(model_path(HELLO)),
                           "--target", "host", "--inputs", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == f"tflm-host run: {message}: input values are int8 (-128 to 127), quantized\n"


def test_npz_nan_for_a_float_input(tmp_path):
    """A float model takes NaN as TFLM does: no warning, the run goes on."""
    path = tmp_path / "in.npz"
    np.savez(path, input_0=np.array([[np.nan]], np.float32))
    proc = subprocess.run([sys.executable, "-W", "error", "-m", "tflm_host", "run",
                           str(model_path("hello_world_float.tflite")), "--target", "host", "--inputs", str(path),
                           "--json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == ""
