"""Models converted with an unknown batch size, beyond the batch: TensorFlow's
converter writes 1 in every static dimension it does not know (a -1 in the
tensor's shape_signature) and, for a Keras Dense layer on a 3-D input or a
Reshape, computes the RESHAPE's new shape while the model runs (SHAPE,
GATHER, REDUCE_PROD, PACK; STRIDED_SLICE, CONCATENATION). TFLM and the
engine run the static shapes: the RESHAPE's output has the wrong size and
REDUCE_PROD has no kernel in either. `tflm-host prepare` writes the shapes
and folds the arithmetic away (tflm_host.shape_fold). The prepared model must
then run bit-exact with TFLM's reference on it, and give what a model of
the same layers with constant shapes gives (TFLM's outputs on it: an
independent check of the semantics)."""

from __future__ import annotations

import numpy as np
import pytest

from engine_host import run_engine
from opgen import bias_data, random_data, weight_quant
from tflm_dev.builder import ModelBuilder
from tflm_host import _engine, cli
from tflm_host.deploy import deploy
from tflm_host.model import load_model
from tflm_host.prepare import prepare_model
from tflm_host.reference import reference_outputs
from tflm_host.shape_fold import fold_plan, fold_shapes

ROWS, FEATURES, UNITS = 4, 12, 5  # Dense(UNITS) on inputs of (batch, ROWS, FEATURES)


def _i32(values) -> np.ndarray:
    return np.array(values, np.int32)


def _dense(dtype: str, computed: bool, seed: int = 3, own_buffers: bool = True) -> bytes:
    """A Keras Dense layer on a 3-D input as the converter writes it at an
    unknown batch (computed: the new shapes computed from SHAPE, with the
    static shapes it writes), or with constant shapes and the true static
    ones (the model the prepared one must equal)."""
    rng = np.random.default_rng(seed)
    q_in = ([0.04], [3]) if dtype == "INT8" else None
    q_out = ([0.09], [-2]) if dtype == "INT8" else None
    qw = weight_quant(rng, UNITS, False, dim=0) if dtype == "INT8" else None
    bias_type = "INT32" if dtype == "INT8" else "FLOAT32"
    qb = ([q_in[0][0] * qw[0][0]], [0]) if dtype == "INT8" else None
    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1, ROWS, FEATURES), dtype, quant=q_in, signature=(-1, ROWS, FEATURES), name="x")
    w = sg.tensor((UNITS, FEATURES), dtype, random_data(rng, dtype, (UNITS, FEATURES)), qw)
    bias = sg.tensor((UNITS,), bias_type, bias_data(rng, bias_type, UNITS), qb)
    y = sg.tensor((1, ROWS, UNITS), dtype, quant=q_out, signature=(-1, ROWS, UNITS), name="y")
    if computed:
        flat = sg.tensor((1, 1), dtype, quant=q_in, signature=(-1, -1), name="flat")
        dense = sg.tensor((1, UNITS), dtype, quant=q_out, signature=(-1, UNITS), name="dense")
        shape = sg.tensor((3,), "INT32", name="shape")
        lead, last = sg.tensor((2,), "INT32", name="lead"), sg.tensor((1,), "INT32", name="last")
        rows, depth = sg.tensor((), "INT32", name="rows"), sg.tensor((), "INT32", name="depth")
        new_shape = sg.tensor((2,), "INT32", name="new_shape")
        out_shape = sg.tensor((3,), "INT32", name="out_shape")
        axis0 = sg.tensor((1,), "INT32", _i32([0]))
        sg.op("SHAPE", [x], [shape], OutType="INT32")
        sg.op("GATHER", [shape, sg.tensor((2,), "INT32", _i32([0, 1]))], [lead], Axis=0, BatchDims=0)
        sg.op("REDUCE_PROD", [lead, axis0], [rows], KeepDims=False)
        sg.op("GATHER", [shape, sg.tensor((1,), "INT32", _i32([2]))], [last], Axis=0, BatchDims=0)
        sg.op("REDUCE_PROD", [last, axis0], [depth], KeepDims=False)
        sg.op("PACK", [rows, depth], [new_shape], Axis=0, ValuesCount=2)
        sg.op("RESHAPE", [x, new_shape], [flat])
        sg.op("FULLY_CONNECTED", [flat, w, bias], [dense], FusedActivationFunction="RELU", KeepNumDims=False)
        sg.op("CONCATENATION", [lead, sg.tensor((1,), "INT32", _i32([UNITS]))], [out_shape], Axis=0,
              FusedActivationFunction="NONE")
        sg.op("RESHAPE", [dense, out_shape], [y])
    else:
        flat = sg.tensor((ROWS, FEATURES), dtype, quant=q_in, name="flat")
        dense = sg.tensor((ROWS, UNITS), dtype, quant=q_out, name="dense")
        sg.op("RESHAPE", [x, sg.tensor((2,), "INT32", _i32([ROWS, FEATURES]))], [flat])
        sg.op("FULLY_CONNECTED", [flat, w, bias], [dense], FusedActivationFunction="RELU", KeepNumDims=False)
        sg.op("RESHAPE", [dense, sg.tensor((3,), "INT32", _i32([1, ROWS, UNITS]))], [y])
    sg.inputs, sg.outputs = [x], [y]
    return b.build(own_buffers=own_buffers)


H, W, C = 3, 4, 2


def _flatten(computed: bool, own_buffers: bool = True) -> bytes:
    """keras Reshape((-1, C)) then a softmax, at an unknown batch: the new
    shape is the batch (STRIDED_SLICE of SHAPE), -1 and C; the converter
    writes the reshaped tensors as (1, 1, C)."""
    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1, H, W, C), "FLOAT32", signature=(-1, H, W, C), name="x")
    rows = (1, 1, C) if computed else (1, H * W, C)
    signature = (-1, -1, C) if computed else None
    r = sg.tensor(rows, "FLOAT32", signature=signature, name="reshaped")
    y = sg.tensor(rows, "FLOAT32", signature=signature, name="y")
    if computed:
        shape, batch = sg.tensor((4,), "INT32", name="shape"), sg.tensor((1,), "INT32", name="batch")
        new_shape = sg.tensor((3,), "INT32", name="new_shape")
        sg.op("SHAPE", [x], [shape], OutType="INT32")
        sg.op("STRIDED_SLICE", [shape, sg.tensor((1,), "INT32", _i32([0])), sg.tensor((1,), "INT32", _i32([1])),
                                sg.tensor((1,), "INT32", _i32([1]))], [batch],
              BeginMask=0, EndMask=0, EllipsisMask=0, NewAxisMask=0, ShrinkAxisMask=0, Offset=False)
        sg.op("CONCATENATION", [batch, sg.tensor((2,), "INT32", _i32([-1, C]))], [new_shape], Axis=0,
              FusedActivationFunction="NONE")
        sg.op("RESHAPE", [x, new_shape], [r])
    else:
        sg.op("RESHAPE", [x, sg.tensor((3,), "INT32", _i32(rows))], [r])
    sg.op("SOFTMAX", [r], [y], Beta=1.0)
    sg.inputs, sg.outputs = [x], [y]
    return b.build(own_buffers=own_buffers)


def _same_outputs(model: bytes, expected_model: bytes, dtype: str, shape: tuple[int, ...], tmp_path) -> None:
    path, expected = tmp_path / "prepared.tflite", tmp_path / "expected.tflite"
    path.write_bytes(model)
    expected.write_bytes(expected_model)
    rng = np.random.default_rng(17)
    samples = [[random_data(rng, dtype, shape)] for _ in range(3)]
    ours = run_engine(path, load_model(model), samples, tmp_path).runs
    tflm = reference_outputs(path, samples)
    want = reference_outputs(expected, samples)
    for run, theirs, w in zip(ours, tflm, want):
        assert run[0].shape == np.asarray(w[0]).shape
        assert run[0].tobytes() == np.asarray(theirs[0]).astype(run[0].dtype).tobytes()
        assert run[0].tobytes() == np.asarray(w[0]).astype(run[0].dtype).tobytes()


def _shape_inputs(model: bytes) -> list:
    """Each RESHAPE's shape input: its constant values, or None when it has none."""
    sg = load_model(model).main
    return [np.frombuffer(sg.tensors[op.inputs[1]].data, np.int32).tolist() if len(op.inputs) > 1 else None
            for op in sg.operators if op.opcode == "RESHAPE"]


@pytest.mark.parametrize("dtype", ["FLOAT32", "INT8"])
@pytest.mark.parametrize("own_buffers", [True, False], ids=["as converted", "shared buffers"])
def test_prepare_folds_a_dense_layer_on_3d_inputs(dtype, own_buffers, tmp_path):
    model = _dense(dtype, computed=True, own_buffers=own_buffers)
    with pytest.raises(NotImplementedError, match="no kernel of tflm implements: REDUCE_PROD"):
        _engine.allocate(_engine.Model(model))
    plan = fold_plan(model)
    names = {t.index: t.name for t in load_model(model).main.tensors}
    assert {names[i]: shapes for (_, i), shapes in plan.shapes.items()} == {
        "flat": ((1, 1), (ROWS, FEATURES)), "dense": ((1, UNITS), (ROWS, UNITS))}
    folded, _ = fold_shapes(model)
    assert fold_shapes(folded)[0] == folded and not fold_plan(folded)
    assert [op.opcode for op in load_model(folded).main.operators] == ["RESHAPE", "FULLY_CONNECTED", "RESHAPE"]
    # The new shapes as constant inputs where the tensors computing them had
    # buffers of their own (TF Lite reads them), else no shape input (the
    # output tensors' shapes: TFLM's and the engine's RESHAPE read only those).
    assert _shape_inputs(folded) == ([[ROWS, FEATURES], [1, ROWS, UNITS]] if own_buffers else [None, None])
    assert (len(folded) > len(model)) == own_buffers

    prepared = prepare_model(model)
    assert [op.opcode for op in load_model(prepared).main.operators] == ["RESHAPE", "FULLY_CONNECTED", "RESHAPE"]
    _same_outputs(prepared, _dense(dtype, computed=False), dtype, (1, ROWS, FEATURES), tmp_path)


def test_prepare_folds_a_reshape_with_an_unknown_dimension(tmp_path):
    model = _flatten(computed=True)
    with pytest.raises(ValueError, match=r"operator 3 \(RESHAPE\): input has 24 elements, output 2"):
        _engine.allocate(_engine.Model(model))
    folded, plan = fold_shapes(model)
    assert sorted(shapes for shapes in plan.shapes.values()) == [((1, 1, C), (1, H * W, C))] * 2
    assert plan.removed == {0: [0, 1, 2]} and plan.reshapes == {0: []} and len(plan.constants) == 1
    assert [op.opcode for op in load_model(folded).main.operators] == ["RESHAPE", "SOFTMAX"]
    assert _shape_inputs(folded) == [[1, H * W, C]]  # the -1 resolved
    _same_outputs(prepare_model(model), _flatten(computed=False), "FLOAT32", (1, H, W, C), tmp_path)


def test_shape_arithmetic_something_else_reads_stays():
    # The SHAPE's output also gives TILE its multiples (computed, so read
    # while the model runs): SHAPE stays, the rest of the arithmetic goes
    # and the RESHAPE drops its input.
    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1, 2, 3), "FLOAT32", signature=(-1, 2, 3))
    shape, dims = sg.tensor((3,), "INT32"), sg.tensor((2,), "INT32")
    r = sg.tensor((1, 1), "FLOAT32", signature=(-1, -1))
    tiled = sg.tensor((1, 4, 9), "FLOAT32", signature=(-1, 4, 9))
    sg.op("SHAPE", [x], [shape], OutType="INT32")
    sg.op("STRIDED_SLICE", [shape, sg.tensor((1,), "INT32", _i32([1])), sg.tensor((1,), "INT32", _i32([3])),
                            sg.tensor((1,), "INT32", _i32([1]))], [dims],
          BeginMask=0, EndMask=0, EllipsisMask=0, NewAxisMask=0, ShrinkAxisMask=0, Offset=False)
    sg.op("RESHAPE", [x, dims], [r])
    sg.op("TILE", [x, shape], [tiled])
    sg.inputs, sg.outputs = [x], [r, tiled]
    model = b.build()
    folded, plan = fold_shapes(model)
    assert plan.removed == {0: [1]} and plan.reshapes == {0: [2]}
    assert {k[1]: v for k, v in plan.shapes.items()} == {r: ((1, 1), (2, 3))}
    assert [op.opcode for op in load_model(folded).main.operators] == ["SHAPE", "RESHAPE", "TILE"]
    it = _engine.allocate(_engine.Model(folded))
    assert it is not None


def test_shapes_no_rule_follows_are_left_as_written():
    # An op without a shape rule (a custom one) after a shape that changes:
    # nothing is written, and the engine's refusal stands.
    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1, H, W, C), "FLOAT32", signature=(-1, H, W, C))
    shape, batch = sg.tensor((4,), "INT32"), sg.tensor((1,), "INT32")
    new_shape = sg.tensor((3,), "INT32")
    r = sg.tensor((1, 1, C), "FLOAT32", signature=(-1, -1, C))
    y = sg.tensor((1, 1, C), "FLOAT32", signature=(-1, -1, C))
    sg.op("SHAPE", [x], [shape], OutType="INT32")
    sg.op("SLICE", [shape, sg.tensor((1,), "INT32", _i32([0])), sg.tensor((1,), "INT32", _i32([1]))], [batch])
    sg.op("CONCATENATION", [batch, sg.tensor((2,), "INT32", _i32([-1, C]))], [new_shape], Axis=0,
          FusedActivationFunction="NONE")
    sg.op("RESHAPE", [x, new_shape], [r])
    sg.op("CUSTOM:SomethingElse", [r], [y])
    sg.inputs, sg.outputs = [x], [y]
    model = b.build()
    out, plan = fold_shapes(model)
    assert out == model and not plan
    assert plan.left == ["subgraph 0: operator 4 (CUSTOM:SomethingElse): no rule gives its outputs' shapes"]


def test_a_shape_the_signature_knows_is_not_rewritten():
    # The written static shape contradicts a dimension the signature knows:
    # the model is left to the engine's checks.
    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1, 6), "FLOAT32", signature=(-1, 6))
    y = sg.tensor((1, 2, 2), "FLOAT32", signature=(-1, -1, 2))
    sg.op("RESHAPE", [x, sg.tensor((3,), "INT32", _i32([1, 2, 3]))], [y])
    sg.inputs, sg.outputs = [x], [y]
    model = b.build()
    out, plan = fold_shapes(model)
    assert out == model and not plan and "its signature [-1, -1, 2] knows it" in plan.left[0]


def test_models_with_known_shapes_are_left_as_they_are():
    for model in (_dense("INT8", computed=False), _flatten(computed=False)):
        out, plan = fold_shapes(model)
        assert out == model and not plan and not plan.left


def test_cli_inspect_and_prepare_say_what_is_folded(tmp_path, capsys):
    src, out = tmp_path / "dense_unknown_batch.tflite", tmp_path / "out.tflite"
    src.write_bytes(_dense("INT8", computed=True))
    assert cli.main(["inspect", str(src)]) == 0
    assert ("prepare: converted with an unknown batch size: tflm-host prepare writes 2 tensor shape(s), "
            "removes 7 shape-arithmetic operator(s)") in capsys.readouterr().out
    assert cli.main(["prepare", str(src), "-o", str(out)]) == 0
    assert ("note: converted with an unknown batch size: 2 tensor shape(s) written, 7 shape-arithmetic "
            "operator(s) removed") in capsys.readouterr().err
    _engine.allocate(_engine.Model(out.read_bytes()))
    # The commands that refuse the model as converted say what prepare writes.
    assert cli.main(["arena", str(src)]) == 2
    assert capsys.readouterr().err == (
        "tflm-host arena: model uses ops no kernel of tflm implements: REDUCE_PROD (converted with an unknown "
        "batch size: tflm-host prepare writes 2 tensor shape(s), removes 7 shape-arithmetic operator(s))\n")
    # deploy refuses the model as converted, naming prepare; takes the prepared one.
    with pytest.raises(ValueError, match=r"dense_unknown_batch.tflite: converted with an unknown batch size: "
                                         r"tflm-host prepare writes 2 tensor shape\(s\), removes 7 shape-arithmetic "
                                         r"operator\(s\); deploy what it writes \(tflm-host prepare "
                                         r"dense_unknown_batch.tflite -o OUT.tflite\): as it is, the engine refuses "
                                         r"it \(model uses ops no kernel of tflm implements: "
                                         r"REDUCE_PROD\)"):
        deploy([src], "/dev/ttyACM0", dry_run=True)
    assert deploy([out], "/dev/ttyACM0", dry_run=True) == 0
    capsys.readouterr()
    # A prepared model holds nothing more to fold.
    assert cli.main(["prepare", str(out), "-o", str(tmp_path / "again.tflite")]) == 0
    assert "unknown batch size" not in capsys.readouterr().err


@pytest.mark.parametrize("build", [lambda: _dense("INT8", computed=True), lambda: _flatten(computed=True)],
                         ids=["dense", "flatten"])
def test_mutants_are_folded_or_refused(build):
    """Mutants of models it folds (tests/model_mutants.py): fold_shapes()
    returns a model or raises ValueError, and the engine takes what it
    returns or refuses it by type (never a crash)."""
    from model_mutants import mutants

    outcomes = {"folded": 0, "refused": 0}
    for data in mutants(build(), seed=7, count=300):
        try:
            out, plan = fold_shapes(data)
        except ValueError:
            outcomes["refused"] += 1
            continue
        outcomes["folded" if plan else "refused"] += 1
        try:
            _engine.allocate(_engine.Model(out))
        except (ValueError, NotImplementedError, MemoryError):
            pass
    assert outcomes["folded"] and outcomes["refused"], outcomes


def test_every_rule_gives_the_shapes_of_the_generated_models():
    """Every generated single-op and multi-op model (tests/opgen: shapes
    TFLM's kernels accept) followed from its inputs as if each size were
    unknown: every shape a rule gives is the one the model has (a rule that
    disagrees leaves the subgraph: the assertion names it)."""
    import opgen
    from tflm_host.shape_fold import _RULES, _follow

    followed = set()
    for case in opgen.cases(2):
        model = load_model(case.model)
        for sg in model.subgraphs:
            if any(op.opcode in ("IF", "WHILE", "CALL_ONCE") for op in model.subgraphs[0].operators):
                continue
            unknown = [[-1] * len(t.shape) for t in sg.tensors]
            _, changed = _follow(sg, unknown)
            assert not changed, (case.name, {i: (sg.tensors[i].shape, s) for i, s in changed.items()})
            followed.update(op.opcode for op in sg.operators if op.opcode in _RULES)
    # Nearly every rule meets a model it gives the shapes of.
    assert len(followed) >= 0.9 * len(_RULES), sorted(set(_RULES) - followed)


def _float16_conv(dequantized: bool, own_buffers: bool = True) -> bytes:
    """A CONV_2D whose weights and bias TF's float16 quantization stores as
    float16 constants, each through a DEQUANTIZE (dequantized: the model
    with those values as float32 constants, what prepare must write)."""
    rng = np.random.default_rng(5)
    w = rng.normal(0, 0.5, (4, 3, 3, 2)).astype(np.float16)
    bias = rng.normal(0, 0.1, (4,)).astype(np.float16)
    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1, 6, 6, 2), "FLOAT32", name="x")
    y = sg.tensor((1, 6, 6, 4), "FLOAT32", name="y")
    if dequantized:
        w32 = sg.tensor(w.shape, "FLOAT32", w.astype(np.float32))
        b32 = sg.tensor(bias.shape, "FLOAT32", bias.astype(np.float32))
    else:
        w16, b16 = sg.tensor(w.shape, "FLOAT16", w), sg.tensor(bias.shape, "FLOAT16", bias)
        w32, b32 = sg.tensor(w.shape, "FLOAT32", name="w"), sg.tensor(bias.shape, "FLOAT32", name="bias")
        sg.op("DEQUANTIZE", [w16], [w32])
        sg.op("DEQUANTIZE", [b16], [b32])
    sg.op("CONV_2D", [x, w32, b32], [y], Padding="SAME", StrideH=1, StrideW=1, DilationHFactor=1,
          DilationWFactor=1, FusedActivationFunction="RELU")
    sg.inputs, sg.outputs = [x], [y]
    return b.build(own_buffers=own_buffers)


def test_prepare_makes_float16_weights_float32(tmp_path, capsys):
    model = _float16_conv(dequantized=False)
    with pytest.raises(NotImplementedError, match=r"operator 0 \(DEQUANTIZE\): input of type float16 is not supported"):
        _engine.allocate(_engine.Model(model))
    folded, plan = fold_shapes(model)
    assert plan.dequantized == 2 and plan.removed == {0: [0, 1]} and not plan.summary()
    sg = load_model(folded).main
    assert [op.opcode for op in sg.operators] == ["CONV_2D"]
    expected = load_model(_float16_conv(dequantized=True)).main
    assert [sg.tensors[i].data for i in sg.operators[0].inputs[1:]] == \
        [expected.tensors[i].data for i in expected.operators[0].inputs[1:]]
    _same_outputs(prepare_model(model), _float16_conv(dequantized=True), "FLOAT32", (1, 6, 6, 2), tmp_path)

    src = tmp_path / "fp16.tflite"
    src.write_bytes(model)
    assert cli.main(["inspect", str(src)]) == 0
    assert ("prepare: float16 weights: tflm-host prepare makes 2 float16 constant(s) float32 (neither TFLM nor "
            "this engine has float16 kernels)") in capsys.readouterr().out
    assert cli.main(["prepare", str(src), "-o", str(tmp_path / "out.tflite")]) == 0
    err = capsys.readouterr().err
    assert "note: float16 weights: 2 float16 constant(s) made float32" in err and "unknown batch" not in err
    # Dequantized outputs without buffers of their own are left (the engine's refusal stands).
    shared = _float16_conv(dequantized=False, own_buffers=False)
    assert fold_shapes(shared) == (shared, fold_plan(shared)) and not fold_plan(shared)
