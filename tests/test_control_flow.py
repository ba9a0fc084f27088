"""IF and WHILE beyond the generated cases (tests/opgen/control_flow.py):
models they refuse, with the reason; a loop of many passes, loops inside
loops, and tensors copied as raw bytes between types, all bit-exact with
TFLM on the engine's ASan/UBSan build."""

from __future__ import annotations

import numpy as np
import pytest

from engine_host import run_engine
from tflm_host import _engine, arena
from tflm_dev.builder import ModelBuilder
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs


def _if_model(cond_dtype="BOOL", cond_shape=(1,), then_shape=(4,), else_shape=(4,), const_input=False,
              then_dtype="FLOAT32") -> bytes:
    b = ModelBuilder()
    main = b.subgraph("main")
    c = main.tensor(cond_shape, cond_dtype, name="cond")
    x = main.tensor((4,), "FLOAT32", name="x")
    y = main.tensor((4,), "FLOAT32", name="y")
    main.op("IF", [c, x], [y], ThenSubgraphIndex=1, ElseSubgraphIndex=2)
    main.inputs, main.outputs = [c, x], [y]
    for name, shape, dtype in (("then", then_shape, then_dtype), ("else", else_shape, "FLOAT32")):
        s = b.subgraph(name)
        data = np.zeros(shape, np.float32) if const_input and name == "else" else None
        t = s.tensor(shape, dtype, data=data, name="arg")
        s.inputs, s.outputs = [t], [t]
        if dtype == "FLOAT32":
            out = s.tensor(shape, dtype, name="out")
            s.op("RELU", [t], [out])
            s.outputs = [out]
    return b.build()


def _count_model(n: int, body_cond_flag: str = "BOOL", outer: int = 0) -> bytes:
    """WHILE i != n: i += 1, x = x * 0.5 + 1 (x float32 (4,)); with outer > 0
    that loop is the body of another that runs `outer` times."""
    b = ModelBuilder()
    main = b.subgraph("main")
    x = main.tensor((4,), "FLOAT32", name="x")
    zero = main.tensor((), "INT32", data=np.array(0, np.int32), name="zero")

    def cond(limit):
        sg = b.subgraph("cond")
        i = sg.tensor((), "INT32", name="i")
        v = sg.tensor((4,), "FLOAT32", name="v")
        lim = sg.tensor((), "INT32", data=np.array(limit, np.int32), name="n")
        left = sg.tensor((), "INT32", name="left")
        flag = sg.tensor((), body_cond_flag, name="flag")
        sg.op("SUB", [lim, i], [left], FusedActivationFunction="NONE")
        if body_cond_flag == "BOOL":
            sg.op("CAST", [left], [flag])
        else:
            sg.op("ADD", [left, lim], [flag], FusedActivationFunction="NONE")
        sg.inputs, sg.outputs = [i, v], [flag]
        return len(b.subgraphs) - 1

    def counter(sg):
        i = sg.tensor((), "INT32", name="i")
        one = sg.tensor((), "INT32", data=np.array(1, np.int32), name="one")
        i2 = sg.tensor((), "INT32", name="i2")
        sg.op("ADD", [i, one], [i2], FusedActivationFunction="NONE")
        return i, i2

    def inner_body():
        sg = b.subgraph("body")
        i, i2 = counter(sg)
        v = sg.tensor((4,), "FLOAT32", name="v")
        half = sg.tensor((), "FLOAT32", data=np.array(0.5, np.float32), name="half")
        one = sg.tensor((4,), "FLOAT32", data=np.ones(4, np.float32), name="onef")
        m = sg.tensor((4,), "FLOAT32", name="m")
        v2 = sg.tensor((4,), "FLOAT32", name="v2")
        sg.op("MUL", [v, half], [m], FusedActivationFunction="NONE")
        sg.op("ADD", [m, one], [v2], FusedActivationFunction="NONE")
        sg.inputs, sg.outputs = [i, v], [i2, v2]
        return len(b.subgraphs) - 1

    if outer:
        c_out = cond(outer)
        sg = b.subgraph("outer_body")
        i, i2 = counter(sg)
        v = sg.tensor((4,), "FLOAT32", name="v")
        z = sg.tensor((), "INT32", data=np.array(0, np.int32), name="zero")
        j = sg.tensor((), "INT32", name="j")
        v2 = sg.tensor((4,), "FLOAT32", name="v2")
        body_out = len(b.subgraphs) - 1
        c_in, body_in = cond(n), inner_body()
        sg.op("WHILE", [z, v], [j, v2], CondSubgraphIndex=c_in, BodySubgraphIndex=body_in)
        sg.inputs, sg.outputs = [i, v], [i2, v2]
        loop = (c_out, body_out)
    else:
        loop = (cond(n), inner_body())
    i_out = main.tensor((), "INT32", name="i_out")
    y = main.tensor((4,), "FLOAT32", name="y")
    main.op("WHILE", [zero, x], [i_out, y], CondSubgraphIndex=loop[0], BodySubgraphIndex=loop[1])
    count = main.tensor((1,), "INT32", name="count")
    main.op("RESHAPE", [i_out], [count])
    main.inputs, main.outputs = [x], [count, y]
    return b.build()


def _allocate(data: bytes):
    return _engine.allocate(_engine.Model(data))


@pytest.mark.parametrize("model, message", [
    (lambda: _if_model(cond_dtype="INT32"), "the condition \\(input 0\\) must be one bool"),
    (lambda: _if_model(cond_shape=(2,)), "the condition \\(input 0\\) must be one bool"),
    (lambda: _if_model(else_shape=(5,)), "input 1 has 16 bytes, else subgraph 2's input 0 has 20"),
    (lambda: _if_model(const_input=True), "input 0 of subgraph 2 is tensor 0, a constant \\(its bytes are the model's"),
    (lambda: _count_model(3, body_cond_flag="INT32"), "the cond subgraph's output 0 must be a bool"),
])
def test_refused(model, message):
    """TFLM checks sizes when it copies (the else branch's only when taken);
    here prepare() refuses what a copy could not do, with the reason."""
    with pytest.raises(ValueError, match=message):
        _allocate(model())


def _check_with_tflm(data: bytes, samples, tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    model = load_model(path)
    ref = reference_outputs(path, samples)
    ours = run_engine(path, model, samples, tmp_path)
    layout = arena.plan_layout(model)
    assert (ours.head, ours.tail) == (layout.head, layout.tail)
    for a_run, b_run in zip(ours.runs, ref):
        for a, b in zip(a_run, b_run):
            assert a.tobytes() == np.asarray(b).astype(a.dtype).tobytes()
    return ours


def test_many_passes(tmp_path):
    """20,000 passes of a loop: no stack grows with them (the engine runs
    each pass from invoke()'s own loop), the result is TFLM's."""
    x = np.array([1.0, -3.0, 1e6, 0.25], np.float32)
    ours = _check_with_tflm(_count_model(20000), [[x]], tmp_path)
    assert int(ours.runs[0][0][0]) == 20000


def test_loops_in_a_loop(tmp_path):
    """A WHILE in a WHILE's body: the inner loop runs afresh at each outer
    pass (its state reset when its operator starts)."""
    samples = [[np.array([1.0, 2.0, -1.0, 0.5], np.float32)], [np.zeros(4, np.float32)]]
    ours = _check_with_tflm(_count_model(4, outer=3), samples, tmp_path)
    assert int(ours.runs[0][0][0]) == 3


def test_bytes_copied_between_types(tmp_path):
    """Only sizes must agree: TFLM copies an int32 branch's bytes into a
    float32 output as they are, and so does the engine."""
    samples = [[np.array([True]), np.array([1.5, -2.0, 0.0, 7.0], np.float32)],
               [np.array([False]), np.array([1.5, -2.0, 0.0, 7.0], np.float32)]]
    _check_with_tflm(_if_model(then_dtype="INT32"), samples, tmp_path)


def _gather_loop_model() -> bytes:
    """WHILE i != 2: y += params[k] (k carried unchanged): a k out of range
    fails the GATHER inside the body, on its first pass."""
    b = ModelBuilder()
    main = b.subgraph("main")
    k = main.tensor((1,), "INT32", name="k")
    x = main.tensor((4,), "FLOAT32", name="x")
    zero = main.tensor((), "INT32", data=np.array(0, np.int32), name="zero")
    cond = b.subgraph("cond")
    ci, ck, cx = cond.tensor((), "INT32"), cond.tensor((1,), "INT32"), cond.tensor((4,), "FLOAT32")
    two = cond.tensor((), "INT32", data=np.array(2, np.int32))
    left, flag = cond.tensor((), "INT32"), cond.tensor((), "BOOL")
    cond.op("SUB", [two, ci], [left], FusedActivationFunction="NONE")
    cond.op("CAST", [left], [flag])
    cond.inputs, cond.outputs = [ci, ck, cx], [flag]
    body = b.subgraph("body")
    bi, bk, bx = body.tensor((), "INT32"), body.tensor((1,), "INT32"), body.tensor((4,), "FLOAT32")
    params = body.tensor((4,), "FLOAT32", data=np.array([0.5, -1.0, 2.0, 8.0], np.float32))
    one = body.tensor((), "INT32", data=np.array(1, np.int32))
    g, bi2, bx2 = body.tensor((1,), "FLOAT32"), body.tensor((), "INT32"), body.tensor((4,), "FLOAT32")
    body.op("GATHER", [params, bk], [g], Axis=0)
    body.op("ADD", [bx, g], [bx2], FusedActivationFunction="NONE")
    body.op("ADD", [bi, one], [bi2], FusedActivationFunction="NONE")
    body.inputs, body.outputs = [bi, bk, bx], [bi2, bk, bx2]
    outs = [main.tensor((), "INT32"), main.tensor((1,), "INT32"), main.tensor((4,), "FLOAT32", name="y")]
    main.op("WHILE", [zero, k, x], outs, CondSubgraphIndex=1, BodySubgraphIndex=2)
    main.inputs, main.outputs = [k, x], [outs[2]]
    return b.build()


def test_failed_invoke_inside_a_loop_starts_afresh(tmp_path):
    """An operator failing inside a WHILE body stops the invoke (TFLM's
    fails too); the next invoke runs the loop from its start, as a fresh
    interpreter (TFLM's) does."""
    data = _gather_loop_model()
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    bad, good = [np.array([7], np.int32), x], [np.array([2], np.int32), x]
    with pytest.raises(RuntimeError):
        reference_outputs(path, [bad])
    expected = reference_outputs(path, [good])[0][0]
    it = _engine.allocate(_engine.Model(data), run=True)
    it.set_input(0, bad[0].tobytes())
    it.set_input(1, x.tobytes())
    with pytest.raises(RuntimeError, match="index 7 out of range"):
        it.invoke()
    it.set_input(0, good[0].tobytes())
    it.invoke()
    assert it.output(0) == expected.tobytes()
