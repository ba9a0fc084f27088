"""The binding's argument parsing under random calls: a MicroPython script
that calls tflm's functions, constructors and methods (Model, Interpreter,
Arena, TensorInfo) with random argument types and values, positional and by
keyword, on the unix port. Every call must return or raise a Python
exception; a crash, a hang or a sanitizer report ends the process, which the
caller sees.

Python-level attacks on the API are among the values and steps: objects
whose __float__, __int__, __index__, __len__ or __iter__ run code that
grows bytearrays given as arenas or models (MicroPython moves them and frees
the old block), writes the arenas' bytes, calls an interpreter's __del__ or
collects garbage in the middle of a call; bytearrays given as the arena of
several interpreters and slices of arenas in use given as arenas and
buffers; and writes to the arenas' bytes between calls. `make fuzz` runs many calls (FUZZ_API_N);
tests/test_reliability.py::test_api_fuzz_short a short version.

    python tests/api_fuzz.py CALLS SEED [--doc docs/reliability.md]
"""

from __future__ import annotations

import sys
from pathlib import Path

from tflm_dev.marked import report
from tflm_host import device

MODELS = ("hello_world_int8.tflite", "simple_add_model.tflite", "trained_lstm_int8.tflite")

DEVICE_CODE = """
import tflm, gc
CALLS, SEED = {calls}, {seed}
state = SEED * 2654435761 % 4294967296 or 1
def rnd(n):
    global state
    state ^= (state << 13) & 0xffffffff
    state ^= state >> 17
    state ^= (state << 5) & 0xffffffff
    return state % n
DATA = [open(ROOT + '/' + n, 'rb').read() for n in {models}]
models = [tflm.Model(d) for d in DATA]
interps = [tflm.Interpreter(m) for m in models]
arenas = [tflm.Arena(4096)]
# Bytearrays given as they are (never through a memoryview: resizing one
# under a view is MicroPython's own use after free) as arenas and a model,
# which the attacks below grow and shrink.
BAS = [bytearray(4096), bytearray(8192), bytearray(DATA[0])]
models.append(tflm.Model(BAS[2]))
interps += [tflm.Interpreter(models[0], BAS[0]), tflm.Interpreter(models[0], BAS[0]), tflm.Interpreter(models[-1])]
def scribble(it):
    try:
        b = it.arena.buffer
    except Exception:
        return
    for _ in range(1 + rnd(4)):
        i = rnd(len(b)) if len(b) else 0
        if len(b):
            b[i] ^= 1 + rnd(255)
def attack():
    k = rnd(7)
    if k == 0:
        BAS[rnd(len(BAS))].extend(bytes(1 + rnd(64)))
    elif k == 1:
        b = BAS[rnd(len(BAS))]
        if len(b) > 64:
            del b[len(b) - 1 - rnd(64):]
    elif k == 2:
        scribble(interps[rnd(len(interps))])
    elif k == 3:
        interps[rnd(len(interps))].__del__()
    elif k == 4:
        gc.collect()
    elif k == 5:
        BAS[rnd(len(BAS))][rnd(64)] ^= 0xff
    else:
        junk = [bytearray(48) for _ in range(rnd(40))]
class Evil:
    def __init__(self, v, n=1):
        self.v, self.n = v, n
    def __float__(self):
        attack()
        return float(self.v)
    def __int__(self):
        attack()
        return int(self.v)
    def __index__(self):
        attack()
        return int(self.v)
    def __len__(self):
        attack()
        return self.n
    def __iter__(self):
        for i in range(self.n):
            if rnd(4) == 0:
                attack()
            yield self.v
KW = ('arena', 'planner', 'plan', 'preallocated', 'quiet', 'path', 'size', 'count', 'index', 'scratch', 'model',
      'width', 'offset', 'name', 'x')
def value():
    try:
        return make_value()
    except (ValueError, RuntimeError):  # made from a model whose bytearray the attacks changed or moved
        return None
def make_value():
    k = rnd(33)
    if k == 0: return None
    if k == 1: return rnd(2) == 1
    if k == 2: return rnd(8) - 2
    if k == 3: return (-1, 0, 1, 2 ** 31 - 1, -2 ** 31, 2 ** 32 + 5, 2 ** 63, -2 ** 64, 65535, 65536)[rnd(10)]
    if k == 4: return (0.5, -1.0, 1e30, float('nan'), float('inf'))[rnd(5)]
    if k == 5: return ('', 'greedy', 'linear', 'offline', 'x' * 300, 'input', '\\u00e9')[rnd(7)]
    if k == 6: return bytes(rnd(40))
    if k == 7: return bytearray(rnd(300))
    if k == 8: return memoryview(bytearray(64))[rnd(8):]
    if k == 9: return [rnd(4) for _ in range(rnd(4))]
    if k == 10: return tuple(rnd(6) - 1 for _ in range(rnd(3)))
    if k == 11: return {{rnd(4): bytearray(rnd(128))}}
    if k == 12: return {{'a': 1}}
    if k == 13: return DATA[rnd(len(DATA))]
    if k == 14:
        d = bytearray(DATA[rnd(len(DATA))])
        for _ in range(1 + rnd(4)):
            d[rnd(len(d))] = rnd(256)
        return d
    if k == 15: return DATA[rnd(len(DATA))][:rnd(200)]
    if k in (16, 17, 18): return models[rnd(len(models))]
    if k in (19, 20, 21): return interps[rnd(len(interps))]
    if k == 22: return arenas[rnd(len(arenas))]
    if k == 23: return tflm.Arena
    if k == 24: return models[0].tensor(0)
    if k == 25: return b'TFPL' + bytes(rnd(40))
    if k == 26: return object()
    if k == 27: return memoryview(DATA[rnd(len(DATA))])
    if k == 28: return Evil(rnd(3), (1, 2, 9216, 16384)[rnd(4)])
    if k == 29: return [Evil(0.5) if rnd(2) else 0.25 for _ in range((1, 2, 5)[rnd(3)])]
    if k == 30: return BAS[rnd(len(BAS))]
    if k == 31:
        it = interps[rnd(len(interps))]
        b = it.arena.buffer
        mine = any(b is x for x in BAS)  # no view of a bytearray the attacks resize
        return memoryview(b)[rnd(max(1, len(b))):] if rnd(2) and not mine else b
    if k == 32: return {{Evil(rnd(4)): bytearray(rnd(16))}}
    return rnd(4)
def args():
    a = [value() for _ in range(rnd(4))]
    kw = {{}}
    if rnd(3) == 0:
        for _ in range(1 + rnd(2)):
            kw[KW[rnd(len(KW))]] = value()
    return a, kw
def target():
    k = rnd(10)
    if k == 0: return tflm
    if k in (1, 2, 3): return models[rnd(len(models))]
    if k in (4, 5, 6, 7): return interps[rnd(len(interps))]
    if k == 8: return arenas[rnd(len(arenas))]
    try:
        return models[rnd(len(models))].tensor(rnd(3))
    except (ValueError, RuntimeError):  # a model whose bytearray the attacks changed or moved
        return tflm
NAMES = {{}}
def names(obj):
    t = type(obj)
    if t not in NAMES:
        NAMES[t] = [n for n in dir(obj) if not n.startswith('_') or n == '__del__']
    return NAMES[t]
outcomes = {{}}
for i in range(CALLS):
    obj = target()
    ns = names(obj)
    name = ns[rnd(len(ns))]
    a, kw = args()
    if name == 'load':
        # open(1) is stdout's file descriptor; closing it is no binding bug.
        a = [x if not isinstance(x, int) else ROOT + '/' + {models}[x % 3] for x in a]
        if isinstance(kw.get('path'), int):
            kw['path'] = 'missing'
    try:
        f = getattr(obj, name)
        r = f(*a, **kw) if callable(f) else f
        if isinstance(r, tflm.Interpreter) and len(interps) < 8:
            interps.append(r)
        elif isinstance(r, tflm.Model) and len(models) < 6:
            models.append(r)
        elif isinstance(r, tflm.Arena) and len(arenas) < 4:
            arenas.append(r)
        key = 'ok'
    except Exception as e:
        key = type(e).__name__
        if key not in outcomes:
            print('@FIRST', key, name, repr(e)[:200])
    outcomes[key] = outcomes.get(key, 0) + 1
    if i % 97 == 0:
        gc.collect()
    if rnd(50) == 0:
        # The arena's bytes written between calls.
        scribble(interps[rnd(len(interps))])
    if i % 500 == 499:
        # Fresh objects now and then: calls on dropped ones too.
        if len(interps) > 3: interps.pop(rnd(len(interps)))
        if len(models) > 3: models.pop(rnd(len(models)))
for it in interps:
    try:
        it.invoke()
    except Exception:
        pass
print('@API', CALLS, sorted(outcomes.items()))
"""


def run(target: str | device.Target, calls: int, seed: int, models: Path) -> dict[str, int]:
    """The calls on a target (a name, or a Target: tflm.mpy on stock firmware)."""
    code = DEVICE_CODE.format(calls=calls, seed=seed, models=MODELS)
    files = {n: (models / n).read_bytes() for n in MODELS}
    out = (device.target(target) if isinstance(target, str) else target).run([code], files, timeout=3600)
    line = [ln for ln in out.splitlines() if ln.startswith("@API ")]
    if not line:
        raise RuntimeError(f"the API fuzz did not finish:\n{out[-2000:]}")
    pairs = eval(line[0].split(" ", 2)[2], {})  # a list of (name, count) the script printed
    return dict(pairs)


if __name__ == "__main__":
    calls, seed = int(sys.argv[1]), int(sys.argv[2])
    root = Path(__file__).resolve().parents[1]
    outcomes = run("unix", calls, seed, root.parent / "shared" / "models")
    text = (f"Binding API: {calls:,} random calls on the unix port (seed {seed}), every one returned or raised "
            f"a Python exception: " + ", ".join(f"{k} {v:,}" for k, v in sorted(outcomes.items())) + ".\n")
    report(text, Path(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--doc" else None, "api", "fuzz")
