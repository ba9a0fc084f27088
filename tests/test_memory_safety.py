"""Memory safety from Python: what gets past tflm.Model()'s checks must still
give a clean exception or a correct result, never a crash, a hang or a read
of freed memory, on the unix port and on the emulated boards.

- a model buffer changed after Model() read it (a bytearray reused, a ROMFS
  region rewritten): targeted and random structure-aware mutations;
- tensor views that outlive the interpreter, the model and the buffers they
  were built from, whatever shape the buffers came in (slices);
- subgraph calls nested deeper than the engine allows, and calls that fan
  out (exponential work), on every board and in the host's prediction;
- operators that read a tensor nothing writes;
- pre-allocated buffers that overlap each other, the arena or the model.
The engine's fuzzer (tests/engine/fuzz_model.c) makes the same kinds of
mutations, after loading too, under ASan and UBSan."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from conftest import DEVICE_PRELUDE, ROOT, TARGETS, int8_add_model, model_files, model_path, run_on
from model_spots import spots
from tflm_dev.builder import ModelBuilder
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs

MAX_CALL_DEPTH = 32  # engine/interpreter.h TFLM_MAX_CALL_DEPTH
DEEP_MESSAGE = f"ValueError model nests subgraph calls more than {MAX_CALL_DEPTH} deep (subgraph {MAX_CALL_DEPTH})"
SCOPES_MESSAGE = "ValueError model too large: more than 32767 allocation scopes (operators and subgraph calls)"


def test_engine_limit_matches_header():
    header = (ROOT / "micropython_mod" / "engine" / "interpreter.h").read_text()
    assert f"#define TFLM_MAX_CALL_DEPTH ({MAX_CALL_DEPTH})" in header
    from tflm_host import arena
    assert arena.MAX_CALL_DEPTH == MAX_CALL_DEPTH


# ---------------------------------------------------------------------------
# Models that attack the build


def call_chain(depth: int, fanout: int = 1) -> bytes:
    """Subgraph 0 calls subgraph 1 with CALL_ONCE, which calls subgraph 2, ...
    `depth` subgraphs in all (fanout calls from each to the next); the last
    one sets a resource variable that subgraph 0 then reads: the output is
    [1, 2, 3, depth] when every level ran."""
    b = ModelBuilder()
    main = b.subgraph("main")
    out = main.tensor((4,), "INT32", name="out")
    handle = main.tensor((), "RESOURCE", name="handle")
    main.op("CALL_ONCE", [], [], InitSubgraphIndex=1)
    main.op("VAR_HANDLE", [], [handle], SharedName="v")
    main.op("READ_VARIABLE", [handle], [out])
    main.outputs = [out]
    for d in range(1, depth):
        sg = b.subgraph(f"level{d}")
        if d + 1 < depth:
            for _ in range(fanout):
                sg.op("CALL_ONCE", [], [], InitSubgraphIndex=d + 1)
        else:
            h = sg.tensor((), "RESOURCE", name="handle")
            value = sg.tensor((4,), "INT32", data=np.array([1, 2, 3, depth], np.int32), name="value")
            sg.op("VAR_HANDLE", [], [h], SharedName="v")
            sg.op("ASSIGN_VARIABLE", [h, value], [])
    return b.build()


def call_tree(depth: int, fanout: int) -> bytes:
    """Subgraph d calls subgraph d + 1 `fanout` times, `depth` subgraphs in
    all, and nothing else: no tensor anywhere, so only counting every
    subgraph visit stops the walk (fanout ** depth visits)."""
    b = ModelBuilder()
    for d in range(depth):
        sg = b.subgraph(f"level{d}")
        for _ in range(fanout if d + 1 < depth else 0):
            sg.op("CALL_ONCE", [], [], InitSubgraphIndex=d + 1)
    return b.build()


def unwritten_read() -> bytes:
    """ADD of the input and a tensor nothing writes (no data, not an input)."""
    return int8_add_model(4, "never_written")


UNWRITTEN_MESSAGE = ("ValueError malformed model: operator 0 reads tensor 1 of subgraph 0 before anything writes it "
                     "(not a constant, an input or a variable)")

CHAINS = {f"chain{n}.tflite": call_chain(n) for n in (2, MAX_CALL_DEPTH, MAX_CALL_DEPTH + 1, 400)}
FANOUT = {"fan8x12.tflite": call_tree(12, 8), "fan2x20.tflite": call_tree(20, 2)}


@pytest.mark.parametrize("target", TARGETS)
def test_deep_and_fanned_out_calls(target):
    """The deepest chain the engine allows runs (the board's stack does not
    grow with the depth), deeper ones are refused with ValueError, calls that
    fan out stop at the scope limit at once, and the board still works."""
    files = dict(CHAINS)
    files.update(FANOUT)
    files["unwritten.tflite"] = unwritten_read()
    files.update(model_files("hello_world_int8.tflite"))
    if target == "unix":
        files["chain16000.tflite"] = call_chain(16000)
    code = DEVICE_PRELUDE + """
def run(name):
    it = tflm.Interpreter(tflm.Model(load(name)))
    it.invoke()
    if len(it.model.outputs):
        print(list(it.output(0)))
for name in NAMES:
    attempt(lambda: run(name))
it = tflm.Interpreter(tflm.Model(load('hello_world_int8.tflite')))
it.input(0)[0] = 42
it.invoke()
print('still works', it.output(0)[0])
""".replace("NAMES", repr([n for n in files if n != "hello_world_int8.tflite"]))
    out = run_on(target, code, files, timeout=300).splitlines()
    expected = ref_chain_output(MAX_CALL_DEPTH)
    assert out[0:2] == [str([1, 2, 3, 2]), "ok"]
    assert out[2:4] == [str(expected), "ok"]
    assert out[4] == DEEP_MESSAGE
    assert out[5] == DEEP_MESSAGE
    assert out[6] == SCOPES_MESSAGE
    assert out[7] == SCOPES_MESSAGE
    assert out[8] == UNWRITTEN_MESSAGE
    rest = out[9:]
    if target == "unix":
        assert rest[0] == DEEP_MESSAGE  # 16,000 deep: once a segfault
        rest = rest[1:]
    hello = reference_outputs(model_path("hello_world_int8.tflite"), [[np.array([[42]], np.int8)]])
    assert rest == [f"still works {int(hello[0][0].ravel()[0])}"]


def reference(model: bytes, samples: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "m.tflite")
        path.write_bytes(model)
        return reference_outputs(path, samples)


def ref_chain_output(depth: int) -> list[int]:
    """TFLM's output for the chain model: every level ran."""
    out = reference(CHAINS[f"chain{depth}.tflite"], [[]])
    return [int(v) for v in out[0][0].ravel()]


@pytest.mark.parametrize("model,message", [
    (call_chain(1000), DEEP_MESSAGE[len("ValueError "):]),
    (call_tree(12, 8), SCOPES_MESSAGE[len("ValueError "):]),
    (unwritten_read(), UNWRITTEN_MESSAGE[len("ValueError "):]),
], ids=["chain1000", "tree12x8", "unwritten_read"])  # short ids: PYTEST_CURRENT_TEST goes to the CLI's environment
def test_host_gives_the_device_verdict(tmp_path, model, message):
    """tflm-host arena and plan refuse these models as the device does (no
    RecursionError on a 1,000-deep chain, no hang on nested fan-out)."""
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    for command in (["arena"], ["plan", "--time-limit", "1"]):
        proc = subprocess.run([sys.executable, "-m", "tflm_host", *command, str(path)], capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip() == f"tflm-host {command[0]}: {message}"


# ---------------------------------------------------------------------------
# The model's bytes changed after Model() read them

def shape_length_spot(data: bytes, tensor: int) -> int:
    return next(s.pos for s in spots(data) if s.what == f"tensor {tensor} shape length")


@pytest.mark.parametrize("target", TARGETS)
def test_dimensions_raised_after_load(target):
    """The input's dimension count raised to 64 and 200 after Model(): once
    a stack overflow in model.inputs and Interpreter(). (This model's input
    shape has room after it for 200 dimensions.)"""
    name = "hello_world_legacy.tflite"
    data = model_path(name).read_bytes()
    index = load_model(data).inputs[0].index
    pos = shape_length_spot(data, index)
    code = DEVICE_PRELUDE + f"""
good = bytes(load('{name}'))
for n in (64, 200):
    for what in ('inputs', 'tensor', 'Interpreter', 'arena_size'):
        ba = bytearray(good)
        m = tflm.Model(ba)
        ba[{pos}:{pos + 4}] = n.to_bytes(4, 'little')
        if what == 'inputs':
            attempt(lambda: m.inputs)
        elif what == 'tensor':
            attempt(lambda: m.tensor({index}))
        elif what == 'Interpreter':
            attempt(lambda: tflm.Interpreter(m))
        else:
            attempt(lambda: tflm.arena_size(m))
it = tflm.Interpreter(tflm.Model(good))
it.input(0)[0] = 1.5
it.invoke()
print('still works', it.output(0)[0])
"""
    out = run_on(target, code, model_files(name)).splitlines()
    message = f"malformed model: tensor has more than 8 dimensions (at byte {pos + 4})"
    for line in out[:8]:
        # Interpreter() names the operator whose tensor it was reading.
        assert line.startswith("ValueError ") and line.endswith(message)
    assert out[8].startswith("still works ")


def after_load_mutants(data: bytes, count: int, seed: int) -> list[tuple[int, int, int, int]]:
    """(position, size, value, when): a word the reader follows set to an edge
    value, before the interpreter is built (when 0) or after (1)."""
    rng = random.Random(seed)
    where = spots(data)
    edges = [0, 1, 2, 7, 8, 9, 64, 200, 255, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE]
    mutants = []
    for i in range(count):
        s = rng.choice(where)
        old = int.from_bytes(data[s.pos:s.pos + s.size], "little")
        value = rng.choice([old + 1, old - 1, old ^ (1 << rng.randrange(8 * s.size))] + edges)
        mutants.append((s.pos, s.size, value % (1 << (8 * s.size)), i % 2))
    return mutants


MUTATE = DEVICE_PRELUDE + """
CLEAN = (ValueError, MemoryError, NotImplementedError, RuntimeError, IndexError)
def exercise(m):
    for t in m.inputs + m.outputs:
        t.shape
    m.ops
    for i in range(N_TENSORS):
        m.tensor(i)
    tflm.arena_size(m)
    it = tflm.Interpreter(m)
    it.invoke()
    it.memory_plan()
    it.buffers()
    for k in range(len(m.outputs)):
        bytes(it.output(k))
def mutant(good, pos, size, value, when):
    ba = bytearray(good)
    m = tflm.Model(ba)
    it = tflm.Interpreter(m) if when else None
    ba[pos:pos + size] = value.to_bytes(size, 'little')
    if it:
        it.invoke()
    exercise(m)
def fuzz(name, mutants):
    good = bytes(load(name))
    seen = {}
    for pos, size, value, when in mutants:
        try:
            mutant(good, pos, size, value, when)
            what = 'ok'
        except CLEAN as e:
            what = type(e).__name__
        seen[what] = seen.get(what, 0) + 1
    gc.collect()
    print(name, sorted(seen.items()))
"""

MUTATED_MODELS = ["hello_world_int8.tflite", "trained_lstm_int8.tflite", "micro_speech_quantized.tflite"]


@pytest.mark.parametrize("target", TARGETS)
def test_random_mutations_after_load(target):
    """Structure-aware mutations made after Model() (and after Interpreter()):
    every one ends in a clean exception or a result, the board stays up."""
    count = 400 if target == "unix" else 25
    chunks = []
    files = model_files(*MUTATED_MODELS)
    files["chain3.tflite"] = call_chain(3)
    names = MUTATED_MODELS + ["chain3.tflite"]
    for k, name in enumerate(names):
        data = files[name]
        n_tensors = len(load_model(data).main.tensors)
        mutants = after_load_mutants(data, count, seed=k)
        chunks.append(f"N_TENSORS = {n_tensors}\nfuzz({name!r}, {mutants!r})\n")
    out = run_on(target, [MUTATE] + chunks, files, timeout=600).splitlines()
    assert [line.split(" ", 1)[0] for line in out] == names
    for line in out:
        seen = dict(eval(line.split(" ", 1)[1]))
        assert sum(seen.values()) == count
        assert set(seen) <= {"ok", "ValueError", "MemoryError", "NotImplementedError", "RuntimeError", "IndexError"}


# ---------------------------------------------------------------------------
# Views outlive what they were made from

VIEWS = DEVICE_PRELUDE + """
GOOD = bytes(load('hello_world_int8.tflite'))
def churn():
    # Collect, then fill the freed blocks with a pattern.
    gc.collect()
    return [bytearray(b'\\x55' * 48) for i in range(250)]
def snapshot(views):
    return [bytes(v) for v in views]

# The arena given as a slice of a bytearray (an interior pointer).
ba = bytearray(4000)
it = tflm.Interpreter(tflm.Model(GOOD), memoryview(ba)[1:])
it.input(0)[0] = 42
it.invoke()
views = [it.input(0), it.output(0), it.output(0)[0:1]]
before = snapshot(views)
del it, ba
junk = churn()
print('arena slice', snapshot(views) == before, before[1])

# A pre-allocated input: a slice of a bytearray.
m = tflm.Model(GOOD)
buf = bytearray(8)
it = tflm.Interpreter(m, preallocated={m.inputs[0].index: memoryview(buf)[3:4]})
it.input(0)[0] = 42
views = [it.input(0), it.input(0)[0:1]]
before = snapshot(views)
del it, m, buf, junk
junk = churn()
print('preallocated slice', snapshot(views) == before)

# The model built from a slice: views of its constants.
mb = bytearray(16 + len(GOOD))
mb[16:] = GOOD
m = tflm.Model(memoryview(mb)[16:])
it = tflm.Interpreter(m)
views = [it.tensor(i) for i in CONSTANTS]
views += [v[1:] for v in views]
before = snapshot(views)
del it, m, mb, junk
junk = churn()
print('model slice', snapshot(views) == before, len(before))
"""


@pytest.mark.parametrize("target", TARGETS)
def test_views_keep_their_memory(target):
    data = model_path("hello_world_int8.tflite").read_bytes()
    consts = [t.index for t in load_model(data).main.tensors if t.is_constant]
    code = VIEWS.replace("CONSTANTS", repr(consts))
    out = run_on(target, code, model_files("hello_world_int8.tflite")).splitlines()
    hello = reference_outputs(model_path("hello_world_int8.tflite"), [[np.array([[42]], np.int8)]])
    assert out[0] == f"arena slice True {bytes(hello[0][0].astype(np.int8).tobytes())!r}"
    assert out[1] == "preallocated slice True"
    assert out[2] == f"model slice True {2 * len(consts)}"


def test_view_of_int64_constant_at_4_mod_8():
    """An int64 bias at 4 modulo 8 cannot be reached from its heap block's
    start in whole items: its view holds the interpreter instead."""
    import opgen

    case = opgen.cases(1, only="TRANSPOSE_CONV/int16_bias64_4_mod_8")[0]
    model = load_model(case.model)
    bias = next(t for t in model.main.tensors if t.dtype == "INT64")
    code = DEVICE_PRELUDE + f"""
data = bytes(load('m.tflite'))
mb = bytearray(data)
it = tflm.Interpreter(tflm.Model(mb))
v = it.tensor({bias.index})
before = list(v)
del it, mb
gc.collect()
junk = [bytearray(b'\\x55' * 48) for i in range(600)]
print(list(v) == before, before)
"""
    out = run_on("unix", code, {"m.tflite": case.model}).splitlines()
    assert out == [f"True {[int(x) for x in np.frombuffer(bias.data, np.int64)]}"]


# ---------------------------------------------------------------------------
# Pre-allocated buffers must be their own


@pytest.mark.parametrize("target", TARGETS)
def test_preallocated_overlaps(target):
    data = model_path("hello_world_int8.tflite").read_bytes()
    model = load_model(data)
    x, y = model.inputs[0].index, model.outputs[0].index
    code = DEVICE_PRELUDE + f"""
mb = bytearray(load('hello_world_int8.tflite'))
m = tflm.Model(mb)
shared = bytearray(8)
arena = bytearray(2000)
attempt(lambda: tflm.Interpreter(m, preallocated={{{x}: memoryview(shared)[0:1], {y}: memoryview(shared)[0:1]}}))
attempt(lambda: tflm.Interpreter(m, arena, preallocated={{{x}: memoryview(arena)[1000:1001]}}))
attempt(lambda: tflm.Interpreter(m, preallocated={{{x}: memoryview(mb)[100:101]}}))
it = tflm.Interpreter(m, preallocated={{{x}: memoryview(shared)[0:1]}})
attempt(lambda: it.set_tensor_buffer({y}, memoryview(shared)[0:1]))
attempt(lambda: tflm.Interpreter(m, preallocated={{{x}: memoryview(shared)[0:1], {y}: memoryview(shared)[1:2]}}))
"""
    out = run_on(target, code, model_files("hello_world_int8.tflite")).splitlines()
    # The dict's order decides which of the two is found second.
    assert out[0] in (f"ValueError buffer for tensor {x} overlaps the buffer of tensor {y}",
                      f"ValueError buffer for tensor {y} overlaps the buffer of tensor {x}")
    assert out[1:] == [
        f"ValueError buffer for tensor {x} overlaps the arena",
        f"ValueError buffer for tensor {x} overlaps the model",
        f"ValueError buffer for tensor {y} overlaps the buffer of tensor {x}",
        "ok",
    ]


# ---------------------------------------------------------------------------
# Host argument checks


@pytest.mark.parametrize("args,message", [
    (["romfs", "DIR", "-o", "OUT", "--align", "0"], "alignment must be a power of two from 4 to 4096, not 0"),
    (["romfs", "DIR", "-o", "OUT", "--align", "3"], "alignment must be a power of two from 4 to 4096, not 3"),
    (["romfs", "DIR", "-o", "OUT", "--align", "-16"], "alignment must be a power of two from 4 to 4096, not -16"),
    (["romfs", "DIR", "-o", "OUT", "--align", "8192"], "alignment must be a power of two from 4 to 4096, not 8192"),
    (["run", "MODEL", "--count", "-1"], "-1 is less than 1"),
    (["run", "MODEL", "--count", "0"], "0 is less than 1"),
    (["plan", "MODEL", "--time-limit", "0"], "0 is not positive"),
    (["plan", "MODEL", "--width", "3"], "3 is less than 8"),
])
def test_cli_rejects_bad_numbers(tmp_path, args, message):
    args = [str(tmp_path / a) if a in ("DIR", "OUT", "MODEL") else a for a in args]
    proc = subprocess.run([sys.executable, "-m", "tflm_host", *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].endswith(message)
    assert "Traceback" not in proc.stderr


# ---------------------------------------------------------------------------
# A shared arena gets the tails of collected interpreters back

ARENA_REUSE = DEVICE_PRELUDE + """
m = tflm.Model(load('hello_world_int8.tflite'))
ref = {}
r = tflm.Interpreter(m)
for x in (7, 9, 42):
    r.input(0)[0] = x
    r.invoke()
    ref[x] = r.output(0)[0]
del r
a = tflm.Arena(SIZE)
def loop(n):
    wrong = 0
    for i in range(n):
        it = tflm.Interpreter(m, a)
        it.input(0)[0] = 42
        it.invoke()
        wrong += it.output(0)[0] != ref[42]
    it = None  # (not left for the collector to find in a register)
    return wrong
# Called one frame down: on ESP32_GENERIC, called from the module, one of
# the loop's interpreters stayed alive through every later collect, most
# likely through the module's frame, which each collect scans (with Xtensa's
# register windows the registers a callee leaves are its caller's: one
# holding an address from loop()'s return that no later call wrote again).
def first():
    print('loop', loop(COUNT))
first()
# The collector is conservative: the loop's last interpreter may still be
# in a register or stack slot a collect scans (MPS2_AN385's first, RPI_PICO's
# second). Collected again, after nested calls of another depth each time
# that overwrite such slots, until the arena has no interpreter (at most 8).
def scrub(n):
    return scrub(n - 1) + 1 if n else 0
for i in range(8):
    gc.collect()
    if 'interpreters=0' in repr(a):
        break
    scrub(i + 2)
print(a)
def gaps():
    keep = [tflm.Interpreter(m, a) for i in range(6)]
    keep[1] = keep[2] = keep[4] = None
    gc.collect()
    print(a)
    more = [tflm.Interpreter(m, a) for i in range(3)]
    print(a)
    good = 0
    for it in more + [keep[0], keep[3], keep[5]]:
        for x in (7, 9):
            it.input(0)[0] = x
            it.invoke()
            good += it.output(0)[0] == ref[x]
    print('good', good)
gaps()
gc.collect()
print(a)
"""


@pytest.mark.parametrize("target", TARGETS)
def test_shared_arena_reuses_tails(target):
    """Interpreters built in a loop in one 20,000-byte arena: once the 49th
    was refused although 47 had been collected. Tails of collected ones
    become gaps that new interpreters take; gaps at the bottom and the head
    of the largest plan still in use go back to the arena."""
    tail = arena_figures("hello_world_int8.tflite")
    code = ARENA_REUSE.replace("SIZE", "20000").replace("COUNT", "300" if target == "unix" else "120")
    out = run_on(target, code, model_files("hello_world_int8.tflite")).splitlines()
    empty = "Arena(size=20000, used=0, head=0, tail=0, free=20000, interpreters=0, gaps=0)"
    head = tail["head"]
    t = tail["tail"]
    assert out[0] == "loop 0"
    assert out[1] == empty
    # Six tails, then the 2nd and 3rd (one gap) and the 5th gone.
    six = 6 * t
    assert out[2] == (f"Arena(size=20000, used={head + six}, head={head}, tail={six}, free={20000 - head - six}, "
                      f"interpreters=3, gaps={3 * t})")
    # Three more: two fill the double gap, one the single gap.
    assert out[3] == (f"Arena(size=20000, used={head + six}, head={head}, tail={six}, free={20000 - head - six}, "
                      "interpreters=6, gaps=0)")
    assert out[4] == "good 12"
    assert out[5] == empty


# Interpreters built in one arena while the collector runs at every few
# hundred bytes allocated (gc.threshold): their finalisers gave tails back
# to the arena while a new interpreter's tail was being built in it (the
# planners' records on the heap) or listed (the list of tails growing). The
# list then lost or double-counted tails: a negative-size memmove on the
# unix port, interpreters over each other's tails and a watchdog reset on
# the ESP32. After each run the arena's live tails must be its
# interpreters', whichever the conservative collector keeps.
ARENA_UNDER_COLLECTIONS = DEVICE_PRELUDE + """
m = tflm.Model(load('hello_world_int8.tflite'))
r = tflm.Interpreter(m)
r.input(0)[0] = 42
r.invoke()
ref = r.output(0)[0]
r = None
wrong = 0
for t in range(16, LAST, STEP):
    a = tflm.Arena(20000)
    gc.collect()
    gc.threshold(t)
    for i in range(COUNT):
        it = tflm.Interpreter(m, a)
        it.input(0)[0] = 42
        it.invoke()
        wrong += it.output(0)[0] != ref
    gc.threshold(-1)
    it = None
    gc.collect()
    print(t, a)
print('wrong', wrong)
"""


@pytest.mark.parametrize("target", TARGETS)
def test_arena_under_collections(target):
    tail = arena_figures("hello_world_int8.tflite")["tail"]
    last, step, count = (4000, 24, 40) if target == "unix" else (2000, 120, 20)
    code = ARENA_UNDER_COLLECTIONS.replace("LAST", str(last)).replace("STEP", str(step)).replace("COUNT", str(count))
    out = run_on(target, code, model_files("hello_world_int8.tflite")).splitlines()
    assert out[-1] == "wrong 0", out[-3:]
    runs = out[:-1]
    assert len(runs) == len(range(16, last, step)), out[-3:]
    for line in runs:
        fields = dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", line))
        assert fields["tail"] - fields["gaps"] == fields["interpreters"] * tail, line
        assert fields["used"] == (fields["head"] + fields["tail"]), line


def arena_figures(name: str) -> dict[str, int]:
    from tflm_host import arena

    layout = arena.plan_layout(load_model(model_path(name)))
    return {"head": layout.head, "tail": layout.tail}


def test_empty_output_under_ubsan(tmp_path):
    """A TRANSPOSE_CONV whose output has no elements once passed NULL to
    memset (undefined behaviour the engine's UBSan build aborts on). TFLM
    refuses zero-sized tensors; the engine runs the model to an empty output."""
    from engine_host import run_engine
    from opgen import single_op

    inputs = [((4,), "INT32", np.array([1, 0, 3, 2], np.int32)),
              ((2, 2, 2, 3), "INT8", np.ones((2, 2, 2, 3), np.int8), ([0.01], [0], 0)),
              ((1, 2, 2, 3), "INT16", None, ([0.02], [0])),
              ((2,), "INT64", np.array([5, -5], np.int64), ([0.0002], [0], 0))]
    data, _ = single_op("TRANSPOSE_CONV", inputs, [((1, 0, 3, 2), "INT16", ([0.05], [0]))], Padding="VALID",
                        StrideH=1, StrideW=1)
    path = tmp_path / "empty.tflite"
    path.write_bytes(data)
    run = run_engine(path, load_model(data), [[np.ones((1, 2, 2, 3), np.int16)]], tmp_path)
    assert [o.size for o in run.runs[0]] == [0]
