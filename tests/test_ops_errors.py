"""Models the kernels must refuse, or whose invoke must fail (opgen's error
cases: an index outside a tensor, a computed axis that does not fit, a type
TFLM does not take): the engine under ASan/UBSan gives the expected status
and message without touching memory outside a tensor, TFLM's reference
fails on them too where it can run them, and the unix port and the Cortex-M0
board raise the expected exception."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from conftest import run_on
from engine_host import EngineError, run_engine
import opgen
from tflm_host.model import load_model
from tflm_host.runner import DEVICE_OPEN
from tflm_host.reference import reference_outputs

CASES = opgen.error_cases()
STATUS = {"ValueError": 1, "MemoryError": 2, "NotImplementedError": 3, "RuntimeError": 4}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_error_case(case, tmp_path):
    path = tmp_path / "model.tflite"
    path.write_bytes(case.model)
    kind, _, message = case.error.partition(" ")
    if case.tflm:
        with pytest.raises(RuntimeError):
            reference_outputs(path, [case.inputs])
    try:
        model = load_model(path)
    except ValueError:
        # The host's reader asks the engine first, so a model the engine
        # refuses to load stops here: the ASan/UBSan engine's verdict below
        # (run_engine needs only the inputs' count then).
        model = SimpleNamespace(inputs=case.inputs, outputs=[])
    with pytest.raises(EngineError) as err:
        run_engine(path, model, [case.inputs], tmp_path)
    assert err.value.status == STATUS[kind], str(err.value)
    assert message in str(err.value)


DEVICE_CODE = "\nimport tflm\n" + DEVICE_OPEN + """\
def _err(name, sizes):
    try:
        it = tflm.Interpreter(tflm.Model(load(name + '.tflite')))
        data = load(name + '.in') if sum(sizes) else b''
        off = 0
        for i, n in enumerate(sizes):
            it.set_input(i, data[off:off + n])
            off += n
        it.invoke()
        print('@OK', name)
    except Exception as e:
        print('@ERR', name, type(e).__name__, e)
"""


@pytest.mark.parametrize("target", ["unix", "MICROBIT"])
def test_error_cases_on_device(target):
    files, calls = {}, []
    for i, case in enumerate(CASES):
        files[f"e{i}.tflite"] = case.model
        raw = b"".join(np.ascontiguousarray(x).tobytes() for x in case.inputs)
        if raw:
            files[f"e{i}.in"] = raw
        calls.append(f"_err('e{i}', {[int(np.asarray(x).nbytes) for x in case.inputs]!r})")
    out = run_on(target, [DEVICE_CODE] + calls, files)
    got = {}
    for line in out.splitlines():
        if line.startswith("@"):
            _, name, *rest = line.split(" ", 2)
            got[name] = rest[0] if rest else "ok"
    bad = []
    for i, case in enumerate(CASES):
        kind, _, message = case.error.partition(" ")
        seen = got.get(f"e{i}") or ""
        if not (seen.startswith(kind + " ") and message in seen):
            bad.append(f"{case.name}: {seen!r}, expected {case.error!r}")
    assert not bad, "\n".join(bad)
