"""What the comparison, logical, select, floor and sum kernels refuse, and
that TFLM refuses the same (its interpreter fails, or aborts on a failed
check), or leaves the result undefined where this module refuses: the
engine's error type and message, and TFLM's outcome (in a child process
where TFLM aborts: that would end this one)."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

from opgen import single_op
from tflm_host import arena
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs

CHILD = """
import pickle, sys
from tflm_host.reference import reference_outputs
path, samples = sys.argv[1], pickle.load(open(sys.argv[2], 'rb'))
try:
    out = reference_outputs(path, samples)
except RuntimeError as e:
    print('error', e)
else:
    pickle.dump(out, open(sys.argv[2] + '.out', 'wb'))
    print('ok')
"""


def tflm_outcome(model: bytes, samples, tmp_path, child: bool = False) -> tuple[str, object]:
    """("ok", outputs), ("error", message) or, in a fresh child process
    (which survives TFLM's aborts), ("abort", return code)."""
    path, data = tmp_path / "m.tflite", tmp_path / "samples.pkl"
    path.write_bytes(model)
    if not child:
        try:
            return "ok", reference_outputs(path, samples)
        except RuntimeError as e:
            return "error", str(e)
    data.write_bytes(pickle.dumps(samples))
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path), str(data)], capture_output=True, text=True,
                          timeout=120)
    if proc.returncode < 0:
        return "abort", proc.returncode
    assert proc.returncode == 0, proc.stderr[-2000:]
    kind, _, rest = proc.stdout.strip().splitlines()[-1].partition(" ")
    if kind == "ok":
        return "ok", pickle.loads((tmp_path / "samples.pkl.out").read_bytes())
    return kind, rest


def ours(model: bytes, samples=None):
    """Builds the engine's interpreter and runs the samples; returns the outputs."""
    m = load_model(model)
    it = arena.interpreter(m, None, run=True)
    runs = []
    for sample in samples or []:
        for i, x in enumerate(sample):
            it.set_input(i, np.ascontiguousarray(x, m.inputs[i].numpy_dtype).tobytes())
        it.invoke()
        runs.append([np.frombuffer(it.output(k), t.numpy_dtype).reshape(t.shape) for k, t in enumerate(m.outputs)])
    return runs


def binary(op: str, dtype: str, out_dtype: str, q1=None, q2=None, qo=None, shape=(4,)) -> bytes:
    model, _ = single_op(op, [(shape, dtype, None, q1), (shape, dtype, None, q2)], [(shape, out_dtype, qo)])
    return model


def values(dtype: str, shape=(4,)):
    return (np.arange(int(np.prod(shape))) % 3).reshape(shape).astype(
        {"BOOL": np.bool_, "FLOAT32": np.float32}.get(dtype, np.dtype(dtype.lower())))


Q = ([0.5], [0])

# Types TFLM's kernels fail on at invoke: refused in prepare here.
UNSUPPORTED = [
    ("EQUAL", "UINT8", "BOOL", Q, "input of type uint8 is not supported"),
    ("NOT_EQUAL", "INT16", "BOOL", Q, "input of type int16 is not supported"),
    ("LESS", "BOOL", "BOOL", None, "input of type bool is not supported"),
    ("GREATER_EQUAL", "INT16", "BOOL", Q, "input of type int16 is not supported"),
    ("SELECT_V2", "INT32", "INT32", None, "input of type int32 is not supported"),
    ("FLOOR_DIV", "INT32", "INT32", None, "output of type int32 is not supported"),
    ("FLOOR_MOD", "INT32", "INT32", None, "output of type int32 is not supported"),
    ("SQUARED_DIFFERENCE", "INT64", "INT64", None, "output of type int64 is not supported"),
    ("LOGICAL_NOT", "INT8", "INT8", None, "input of type int8 is not supported"),
]


@pytest.mark.parametrize("op,dtype,out_dtype,q,message", UNSUPPORTED, ids=[u[0] + "/" + u[1] for u in UNSUPPORTED])
def test_unsupported_types(op, dtype, out_dtype, q, message, tmp_path):
    if op == "SELECT_V2":
        model, _ = single_op(op, [((4,), "BOOL", None, None), ((4,), dtype, None, q), ((4,), dtype, None, q)],
                             [((4,), out_dtype, q)])
        samples = [[values("BOOL"), values(dtype), values(dtype)]]
    elif op == "LOGICAL_NOT":
        model, _ = single_op(op, [((4,), dtype, None, q)], [((4,), out_dtype, q)])
        samples = [[values(dtype)]]
    else:
        model = binary(op, dtype, out_dtype, q, q, q if out_dtype != "BOOL" else None)
        samples = [[values(dtype), values(dtype)]]
    with pytest.raises(NotImplementedError, match=message):
        ours(model)
    assert tflm_outcome(model, samples, tmp_path)[0] == "error"


def test_greater_int16_refused_tflm_compares_zeros(tmp_path):
    """TFLM's GREATER takes int16 but never sets up its rescaling: it reads
    its parameters from arena memory it never wrote. In a fresh process
    (a zeroed arena) every element compares two zeros (false), whatever the
    values; after other models ran in the process, anything."""
    model = binary("GREATER", "INT16", "BOOL", Q, Q)
    a = np.array([5, 300, -2, 7], np.int16)
    b = np.array([1, -300, -9, 7], np.int16)
    kind, out = tflm_outcome(model, [[a, b]], tmp_path, child=True)
    assert kind == "ok" and not out[0][0].any()
    with pytest.raises(NotImplementedError, match="input of type int16 is not supported"):
        ours(model)


@pytest.mark.parametrize("scale", [1.0, 2.5, 0.0])
def test_comparison_scale_out_of_range(scale, tmp_path):
    """TFLM's int8 comparisons need each scale in (0, 1): it aborts otherwise."""
    q = ([scale], [0])
    model = binary("LESS", "INT8", "BOOL", q, Q)
    with pytest.raises(ValueError, match="out-of-range multiplier"):
        ours(model)
    assert tflm_outcome(model, [[values("INT8"), values("INT8")]], tmp_path, child=True)[0] == "abort"


def test_comparison_needs_bool_output_and_equal_types():
    with pytest.raises(ValueError, match="expected equal types and bool"):
        ours(binary("EQUAL", "FLOAT32", "INT8"))
    model, _ = single_op("LESS", [((4,), "FLOAT32", None), ((4,), "INT32", None)], [((4,), "BOOL", None)])
    with pytest.raises(ValueError, match="expected equal types and bool"):
        ours(model)


def test_logical_refuses_other_types():
    """TFLM's LOGICAL_AND/OR read any type as bools (undefined in C++)."""
    with pytest.raises(NotImplementedError, match="output of type int8 is not supported"):
        ours(binary("LOGICAL_AND", "INT8", "INT8"))
    with pytest.raises(ValueError, match="differ from the output's bool"):
        ours(binary("LOGICAL_OR", "INT8", "BOOL"))


def test_select_condition_must_be_bool(tmp_path):
    model, _ = single_op("SELECT_V2", [((4,), "INT8", None), ((4,), "FLOAT32", None), ((4,), "FLOAT32", None)],
                         [((4,), "FLOAT32", None)])
    with pytest.raises(ValueError, match="condition of type int8, expected bool"):
        ours(model)
    assert tflm_outcome(model, [[values("INT8"), values("FLOAT32"), values("FLOAT32")]], tmp_path)[0] == "error"


def test_select_v1_is_not_a_tflm_op(tmp_path):
    model, _ = single_op("SELECT", [((4,), "BOOL", None), ((4,), "FLOAT32", None), ((4,), "FLOAT32", None)],
                         [((4,), "FLOAT32", None)])
    with pytest.raises(NotImplementedError, match="SELECT"):
        ours(model)
    assert tflm_outcome(model, [[values("BOOL"), values("FLOAT32"), values("FLOAT32")]], tmp_path)[0] == "error"


@pytest.mark.parametrize("zero", [0.0, -0.0])
def test_floor_div_by_zero_fails_at_invoke(zero, tmp_path):
    """TFLM checks every divisor before dividing; so does the kernel."""
    model = binary("FLOOR_DIV", "FLOAT32", "FLOAT32")
    a = np.array([1, 2, 3, 4], np.float32)
    b = np.array([1, zero, 2, 3], np.float32)
    assert tflm_outcome(model, [[a, b]], tmp_path)[0] == "error"
    with pytest.raises(RuntimeError, match="division by zero"):
        ours(model, [[a, b]])
    # The same interpreter runs again once the divisors are non-zero.
    assert ours(model, [[a, np.ones(4, np.float32)]])[0][0].tolist() == [1, 2, 3, 4]


@pytest.mark.parametrize("dtype,q,message", [
    ("INT8", ([0.1], [200]), "zero point 200, outside -128..127"),
    ("INT16", ([0.01], [3]), "zero point 3: int16 needs 0"),
])
def test_squared_difference_zero_points(dtype, q, message, tmp_path):
    model = binary("SQUARED_DIFFERENCE", dtype, dtype, q, Q, Q)
    with pytest.raises(ValueError, match=message):
        ours(model)
    assert tflm_outcome(model, [[values(dtype), values(dtype)]], tmp_path)[0] == "error"


def test_add_n_refusals(tmp_path):
    def add_n(specs, out):
        model, _ = single_op("ADD_N", specs, [out])
        return model

    int16 = add_n([((4,), "INT16", None, Q)] * 2, ((4,), "INT16", Q))
    with pytest.raises(NotImplementedError, match="output of type int16 is not supported"):
        ours(int16)
    assert tflm_outcome(int16, [[values("INT16"), values("INT16")]], tmp_path)[0] == "error"
    scales = add_n([((4,), "INT8", None, Q), ((4,), "INT8", None, ([0.25], [0]))], ((4,), "INT8", Q))
    with pytest.raises(ValueError, match="input 1 differs from input 0"):
        ours(scales)
    assert tflm_outcome(scales, [[values("INT8"), values("INT8")]], tmp_path)[0] == "error"
    shapes = add_n([((4,), "FLOAT32", None), ((2, 2), "FLOAT32", None)], ((4,), "FLOAT32", None))
    with pytest.raises(ValueError, match="input 1 differs from input 0"):
        ours(shapes)
    with pytest.raises(ValueError, match="expected 2 to"):
        ours(add_n([((4,), "FLOAT32", None)], ((4,), "FLOAT32", None)))
