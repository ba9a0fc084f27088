"""The math ops (tests/opgen/math_unary.py, math_activations.py, math_rows.py)
refuse what TFLM refuses, with the error kind and message the engine gives:
types TFLM's kernels do not take, quantization they require, shapes they
cannot walk, and RSQRT's negative inputs (an error when the interpreter
runs, as in TFLM). Where TFLM fails cleanly, its interpreter is checked to
fail too; where it would read memory it never set, run out of bounds or
abort, only ours is (those cases say so)."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import DEVICE_PRELUDE, run_on
from engine_host import EngineError, run_engine
from opgen import single_op
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs

VALUE, NOT_IMPLEMENTED, RUNTIME = 1, 3, 4
Q8 = ([0.05], [3])
Q16 = ([0.001], [0])


def _unary(op: str, dtype: str, qin=None, qout=None, shape=(2, 3), out_shape=None, **options) -> bytes:
    model, _ = single_op(op, [(shape, dtype, None, qin)], [(out_shape or shape, dtype, qout)], **options)
    return model


def _prelu(dtype: str, alpha_dtype: str, shape=(2, 3), qin=None, qa=None) -> bytes:
    alpha = np.ones(shape[-1:], {"FLOAT32": np.float32, "INT8": np.int8, "INT16": np.int16,
                                 "INT32": np.int32}[alpha_dtype])
    model, _ = single_op("PRELU", [(shape, dtype, None, qin), (shape[-1:], alpha_dtype, alpha, qa)],
                         [(shape, dtype, qin)])
    return model


# (name, model, status, message, whether TFLM's interpreter fails cleanly too)
CASES = [
    ("NEG int32", _unary("NEG", "INT32"), NOT_IMPLEMENTED, "input of type int32 is not supported", True),
    ("ABS int32", _unary("ABS", "INT32"), NOT_IMPLEMENTED, "input of type int32 is not supported", True),
    ("SQRT int8", _unary("SQRT", "INT8", Q8, Q8), NOT_IMPLEMENTED, "input of type int8 is not supported", True),
    ("LOG int16", _unary("LOG", "INT16", Q16, Q16), NOT_IMPLEMENTED, "input of type int16 is not supported", True),
    # TFLM refuses int8 and int16 EXP and int8 LOG, which this engine takes
    # (TF Lite's tables), with TF Lite's requirements.
    ("EXP int8 without quantization", _unary("EXP", "INT8"), VALUE, "int8 input and output need quantization", False),
    ("EXP int16 without quantization", _unary("EXP", "INT16"), VALUE, "int16 EXP needs quantization", False),
    ("LOG int8 without quantization", _unary("LOG", "INT8"), VALUE, "int8 input and output need quantization", False),
    ("LOG int8 infinite output scale", _unary("LOG", "INT8", Q8, ([float("inf")], [0])), VALUE,
     "LOG needs finite scales", False),
    ("EXP int16 zero point", _unary("EXP", "INT16", ([0.001], [5]), Q16), VALUE, "int16 needs zero points 0", False),
    ("EXP int16 output scale", _unary("EXP", "INT16", Q16, ([1e-45], [0])), VALUE,
     "the output scale is too small for its inverse to be a float", False),
    ("EXP int16 infinite input scale", _unary("EXP", "INT16", ([float("inf")], [0]), Q16), VALUE,
     "EXP needs finite scales", False),
    ("EXP int8 output scale", _unary("EXP", "INT8", Q8, ([1e-45], [0])), VALUE,
     "the output scale is too small for its inverse to be a float", False),
    ("EXP int8 infinite input scale", _unary("EXP", "INT8", ([float("inf")], [3]), Q8), VALUE,
     "EXP needs finite scales", False),
    ("RSQRT int32", _unary("RSQRT", "INT32"), NOT_IMPLEMENTED, "input of type int32 is not supported", True),
    ("ABS int8 without quantization", _unary("ABS", "INT8"), VALUE,
     "int8 input and output need quantization", True),
    ("ABS int16 zero point", _unary("ABS", "INT16", ([0.01], [3]), ([0.01], [3])), VALUE,
     "int16 needs zero points 0", True),
    # TFLM would run with a multiplier it never set.
    ("RSQRT int16 without quantization", _unary("RSQRT", "INT16"), VALUE, "int16 RSQRT needs quantization", False),
    ("EXP shapes", _unary("EXP", "FLOAT32", out_shape=(3, 2)), VALUE, "output shape differs from the input's", True),
    ("ELU int16", _unary("ELU", "INT16", Q16, Q16), NOT_IMPLEMENTED, "input of type int16 is not supported", True),
    ("PRELU int32", _prelu("INT32", "INT32"), NOT_IMPLEMENTED, "input of type int32 is not supported", True),
    ("PRELU int16 alpha", _prelu("INT16", "INT16", qin=Q16, qa=Q16), VALUE, "int16 PRELU needs int8 alpha", True),
    # TFLM would read the int16 alpha's bytes as int8 values.
    ("PRELU int8 with int16 alpha", _prelu("INT8", "INT16", qin=Q8, qa=Q16), VALUE,
     "int8 PRELU needs int8 alpha", False),
    # TFLM's float kernel extends shapes to 4 dimensions.
    ("PRELU float32 5-D", _prelu("FLOAT32", "FLOAT32", shape=(1, 2, 1, 2, 3)), NOT_IMPLEMENTED,
     "float32 PRELU takes at most 4 dimensions", False),
    ("LOG_SOFTMAX int8 output", _unary("LOG_SOFTMAX", "INT8", Q8, ([1 / 256], [-128])), VALUE,
     "int8 output needs scale 16/256 and zero point 127", True),
    # TFLM aborts (a failed check in its multiplier's preprocessing).
    ("LOG_SOFTMAX int8 without quantization", _unary("LOG_SOFTMAX", "INT8", None, ([16 / 256], [127])), VALUE,
     "int8 input needs a positive scale", False),
    ("LOG_SOFTMAX int16", _unary("LOG_SOFTMAX", "INT16", Q16, Q16), NOT_IMPLEMENTED,
     "input of type int16 is not supported", True),
    ("L2_NORMALIZATION int16", _unary("L2_NORMALIZATION", "INT16", Q16, Q16), NOT_IMPLEMENTED,
     "input of type int16 is not supported", True),
    ("L2_NORMALIZATION 5-D", _unary("L2_NORMALIZATION", "FLOAT32", shape=(1, 1, 2, 1, 3)), VALUE,
     "input needs 1 to 4 dimensions, has 5", True),
    ("L2_NORMALIZATION activation", _unary("L2_NORMALIZATION", "FLOAT32", FusedActivationFunction="RELU"),
     NOT_IMPLEMENTED, "fused activation is not supported", True),
]


def _input(model_bytes: bytes) -> list[list[np.ndarray]]:
    model = load_model(model_bytes)
    return [[np.ones(t.shape, t.numpy_dtype) for t in model.inputs]]


@pytest.mark.parametrize("name,model,status,message,tflm_fails", CASES, ids=[c[0] for c in CASES])
def test_refused(name, model, status, message, tflm_fails, tmp_path):
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    with pytest.raises(EngineError) as e:
        run_engine(path, load_model(path), _input(model), tmp_path)
    assert e.value.status == status and message in str(e.value), str(e.value)
    if tflm_fails:
        with pytest.raises(Exception):
            reference_outputs(path, _input(model))


def _rsqrt_int8() -> tuple[bytes, np.ndarray]:
    """RSQRT with zero point 3: inputs below 3 are negative values."""
    return _unary("RSQRT", "INT8", Q8, ([0.1], [-20])), np.array([[5, 9, 3], [4, 2, 7]], np.int8)


def test_rsqrt_of_a_negative_value_fails_when_run(tmp_path):
    model, x = _rsqrt_int8()
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    with pytest.raises(EngineError) as e:
        run_engine(path, load_model(path), [[x]], tmp_path)
    assert e.value.status == RUNTIME and "RSQRT of a negative value (element 4)" in str(e.value)
    with pytest.raises(Exception, match="invocation failed"):
        reference_outputs(path, [[x]])
    # Values at the zero point and above run, and match TFLM.
    ok = np.array([[5, 9, 3], [4, 127, 7]], np.int8)
    ours = run_engine(path, load_model(path), [[ok]], tmp_path).runs[0][0]
    assert ours.tobytes() == reference_outputs(path, [[ok]])[0][0].tobytes()


def test_errors_on_the_unix_port():
    """The kinds reach Python as NotImplementedError, ValueError and RuntimeError."""
    model, x = _rsqrt_int8()
    code = DEVICE_PRELUDE + """
def run(name, data):
    it = tflm.Interpreter(tflm.Model(load(name)))
    it.set_input(0, data)
    it.invoke()
attempt(lambda: tflm.Interpreter(tflm.Model(load('neg.tflite'))))
attempt(lambda: tflm.Interpreter(tflm.Model(load('abs.tflite'))))
attempt(lambda: run('rsqrt.tflite', bytes([5, 9, 3, 4, 2, 7])))
attempt(lambda: run('rsqrt.tflite', bytes([5, 9, 3, 4, 127, 7])))
"""
    files = {"neg.tflite": _unary("NEG", "INT32"), "abs.tflite": _unary("ABS", "INT8"), "rsqrt.tflite": model}
    out = run_on("unix", code, files).splitlines()
    assert out == ["NotImplementedError operator 0 (NEG): input of type int32 is not supported",
                   "ValueError operator 0 (ABS): int8 input and output need quantization",
                   "RuntimeError operator 0 (RSQRT): RSQRT of a negative value (element 4)",
                   "ok"], out


def test_elu_int8_without_quantization_matches_tflm(tmp_path):
    """Scale 0 makes TFLM's table NaN throughout, which converts to -128."""
    model = _unary("ELU", "INT8")
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    x = np.array([[-128, -1, 0], [1, 50, 127]], np.int8)
    ours = run_engine(path, load_model(path), [[x]], tmp_path).runs[0][0]
    ref = reference_outputs(path, [[x]])[0][0]
    assert ours.tobytes() == ref.tobytes() and (ref == -128).all()


def test_elu_int8_table_overflow_matches_tflm(tmp_path):
    """Values past 2^31 in TFLM's table convert, as x86 converts them, to
    INT32_MIN and clamp to -128 (int8 EXP's table, TF Lite's, clamps them in
    float to 127 instead): an input scale of 1e4 over an output scale of 1e-6."""
    model = _unary("ELU", "INT8", ([1e4], [0]), ([1e-6], [0]))
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    x = np.array([[-128, -1, 0], [1, 50, 127]], np.int8)
    ours = run_engine(path, load_model(path), [[x]], tmp_path).runs[0][0]
    ref = reference_outputs(path, [[x]])[0][0]
    assert ours.tobytes() == ref.tobytes()
    assert ref.tolist() == [[-128, -128, 0], [-128, -128, -128]]


def test_int16_exp_left_out_of_the_pyboard():
    """The pyboard's firmware, built with every kernel, leaves int16 EXP out
    for flash (port_boards/PYBV11/mpconfigboard.mk; PYBV11_QEMU is the same
    firmware): refused as a type its kernel does not take, where the other
    builds run it."""
    code = DEVICE_PRELUDE + """
attempt(lambda: tflm.Interpreter(tflm.Model(load('exp.tflite'))))
"""
    files = {"exp.tflite": _unary("EXP", "INT16", Q16, Q16)}
    assert run_on("PYBV11_QEMU", code, files).splitlines() == [
        "NotImplementedError operator 0 (EXP): input of type int16 is not supported"]
    assert run_on("unix", code, files).splitlines() == ["ok"]
