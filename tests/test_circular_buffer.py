"""CIRCULAR_BUFFER's period when its options give none: TFLM guesses it from
the output shape and from a count of such operators it has prepared, a
count kept across every interpreter of the process. In a fresh process
TFLM's count starts at the model's first operator, as this engine's does;
the generated cases (opgen/circular_buffer.py) cover the rest."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from engine_host import run_engine
from tflm_dev.builder import ModelBuilder
from tflm_host.model import load_model

# (slots, h, w) of ten operators without cycles_max, and the period TFLM's
# rule gives each: it counts them; slots 5, 13 or 25 run every invoke and
# reset the count; so does [.., 2, 96] when the count is 5; others run every
# second invoke. Counts: 1 2 (3, reset) 1 2 3 4 (5, reset) 1 2.
SHAPES = [(4, 1, 8), (3, 2, 96), (5, 1, 4), (2, 1, 8), (3, 1, 8), (3, 2, 96), (3, 1, 2), (3, 2, 96), (3, 2, 96),
          (4, 1, 3)]
PERIODS = [2, 2, 1, 2, 2, 2, 2, 1, 2, 2]
RUNS = 6


def model() -> bytes:
    b = ModelBuilder()
    sg = b.subgraph()
    q = ([0.1], [0])
    ins, outs = [], []
    for slots, h, w in SHAPES:
        x = sg.tensor((1, 1, h, w), "INT8", quant=q)
        y = sg.tensor((1, slots, h, w), "INT8", quant=q)
        v = sg.tensor((), "BOOL")
        sg.op("CUSTOM:CIRCULAR_BUFFER", [x], [y, v])
        ins.append(x)
        outs += [y, v]
    sg.inputs, sg.outputs = ins, outs
    return b.build()


TFLM_SCRIPT = """
import json, sys
import numpy as np
from tflite_micro.python.tflite_micro import runtime
it = runtime.Interpreter.from_file(sys.argv[1], arena_size=1 << 20)
shapes = json.loads(sys.argv[2])
flags = []
for r in range(int(sys.argv[3])):
    for i, (slots, h, w) in enumerate(shapes):
        it.set_input(np.full((1, 1, h, w), r + 1, np.int8), i)
    it.invoke()
    flags.append([bool(it.get_output(2 * i + 1).reshape(-1)[0]) for i in range(len(shapes))])
print(json.dumps(flags))
"""


def test_period_guess_counts_the_models_operators(tmp_path):
    path = tmp_path / "cb.tflite"
    path.write_bytes(model())
    # TFLM in a process of its own: its count starts at zero there
    proc = subprocess.run([sys.executable, "-c", TFLM_SCRIPT, str(path), json.dumps(SHAPES), str(RUNS)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    tflm_flags = json.loads(proc.stdout)
    samples = [[np.full((1, 1, h, w), r + 1, np.int8) for slots, h, w in SHAPES] for r in range(RUNS)]
    ours = run_engine(path, load_model(path), samples, tmp_path)
    our_flags = [[bool(np.asarray(run[2 * i + 1]).reshape(-1)[0]) for i in range(len(SHAPES))] for run in ours.runs]
    assert our_flags == tflm_flags
    expected = [[(r + 1) % p == 0 for p in PERIODS] for r in range(RUNS)]
    assert our_flags == expected
    # each history: the last `slots` inputs, once filled
    for r, run in enumerate(ours.runs):
        for i, (slots, h, w) in enumerate(SHAPES):
            if r + 1 >= slots:
                want = np.concatenate([np.full((1, 1, h, w), k + 1, np.int8) for k in range(r + 1 - slots, r + 1)], 1)
                assert np.asarray(run[2 * i]).tobytes() == want.tobytes()
