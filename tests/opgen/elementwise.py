"""Elementwise binary ops: ADD, SUB, MUL, DIV, MINIMUM, MAXIMUM for every
type TFLM has them in, random broadcast shapes (1 to 5 dims, sizes 1 on
either side), fused activations, scales and zero points (0 for int16), a
constant second input now and then, and small two-op graphs."""

from __future__ import annotations

import numpy as np

from tflm_dev.builder import ModelBuilder
from . import Case, ErrorCase, act_quant, error_case, generator, generators, random_data, single_op

ACTIVATIONS = ["NONE", "RELU", "RELU_N1_TO_1", "RELU6"]
NP = {"INT8": np.int8, "INT16": np.int16, "INT32": np.int32, "INT64": np.int64, "FLOAT32": np.float32}


def broadcast_shapes(rng: np.random.Generator, max_elements: int = 400, scalar2: bool = False,
                     max_rank: int = 5):
    """(input 1 shape, input 2 shape, output shape): the inputs align on the
    last dimension, each dim the output's or 1; sometimes equal shapes.
    Only input 2 may be a scalar, and only when scalar2 (TFLM's Python
    interpreter cannot feed scalar inputs)."""
    while True:
        rank = int(rng.integers(1, max_rank + 1))
        out = [int(d) for d in rng.integers(1, 6, rank)]
        if int(np.prod(out)) <= max_elements:
            break
    if rng.random() < 0.3:
        return tuple(out), tuple(out), tuple(out)
    shapes = []
    for k in range(2):
        r = rank if rng.random() < 0.6 else int(rng.integers(0 if k and scalar2 else 1, rank + 1))
        shapes.append(tuple(1 if rng.random() < 0.35 else d for d in out[rank - r:]))
    # The output is the broadcast of the inputs.
    full = tuple(max(x, y) for x, y in zip(*(((1,) * (rank - len(s)) + s) for s in shapes)))
    if len(shapes[0]) < rank and len(shapes[1]) < rank:
        full = full[rank - max(len(shapes[0]), len(shapes[1])):]
    return shapes[0], shapes[1], full


def _quant(rng, dtype):
    if dtype in ("INT8", "INT16"):
        return act_quant(rng, dtype, scale_range=(0.01, 0.5))
    return None


def _binary(rng, op: str, dtype: str, activation: bool = True, inputs_fn=None) -> Case:
    const2 = inputs_fn is None and rng.random() < 0.25
    s1, s2, so = broadcast_shapes(rng, scalar2=const2)
    act = str(rng.choice(ACTIVATIONS)) if activation else None
    q1, q2, qo = _quant(rng, dtype), _quant(rng, dtype), _quant(rng, dtype)
    data2 = random_data(rng, dtype, s2) if const2 else None
    opts = {"FusedActivationFunction": act} if act else {}
    model, _ = single_op(op, [(s1, dtype, None, q1), (s2, dtype, data2, q2)], [(so, dtype, qo)], **opts)
    params = dict(dtype=dtype, shapes=(s1, s2, so), act=act, quant=(q1, q2, qo), const2=const2)
    inputs = inputs_fn(rng, s1, s2, q1, q2) if inputs_fn else None
    return Case("", model, params, inputs=inputs)


def _register(op: str, dtypes: list[str], activation: bool = True, inputs_fn=None):
    for dt in dtypes:
        def gen(rng, dt=dt):
            return _binary(rng, op, dt, activation, inputs_fn)
        generator(f"{op}/{dt.lower()}")(gen)


_register("ADD", ["FLOAT32", "INT32", "INT8", "INT16"])
_register("SUB", ["FLOAT32", "INT32", "INT8", "INT16"])
_register("MUL", ["FLOAT32", "INT32", "INT8", "INT16"])
_register("MINIMUM", ["FLOAT32", "INT8", "INT16", "INT32", "INT64"], activation=False)
_register("MAXIMUM", ["FLOAT32", "INT8", "INT16", "INT32", "INT64"], activation=False)


def _div_inputs(rng, s1, s2, q1, q2):
    """Divisors away from zero (TFLM leaves x / 0 undefined)."""
    sets = []
    for _ in range(3):
        if q1 is not None:
            a = rng.integers(-128, 128, s1).astype(np.int8)
            # Some numerators at the zero point (quotient 0).
            a[rng.random(s1) < 0.1] = q1[1][0]
            b = rng.integers(-128, 128, s2).astype(np.int8)
            b[b == q2[1][0]] = np.int8(q2[1][0] + (1 if q2[1][0] < 127 else -1))
        else:
            a = rng.integers(-100000, 100000, s1).astype(np.int32)
            b = rng.integers(1, 300, s2).astype(np.int32) * rng.choice([-1, 1], s2).astype(np.int32)
        sets.append([a, b])
    return sets


_register("DIV", ["FLOAT32"])
_register("DIV", ["INT32", "INT8"], inputs_fn=_div_inputs)


def _two_op(rng, dtype: str) -> Case:
    """x op1 y -> op2 with a constant or the first input again."""
    ops = ["ADD", "SUB", "MUL", "MINIMUM", "MAXIMUM"]
    op1, op2 = (str(o) for o in rng.choice(ops, 2))
    s1, s2, so = broadcast_shapes(rng, 200)
    b = ModelBuilder()
    sg = b.subgraph()
    q = [_quant(rng, dtype) for _ in range(5)]
    x = sg.tensor(s1, dtype, quant=q[0], name="x")
    y = sg.tensor(s2, dtype, quant=q[1], name="y")
    mid = sg.tensor(so, dtype, quant=q[2], name="mid")
    c_shape = so[len(so) - int(rng.integers(0, len(so) + 1)):]
    c = sg.tensor(c_shape, dtype, data=random_data(rng, dtype, c_shape), quant=q[3], name="c")
    out = sg.tensor(so, dtype, quant=q[4], name="out")

    def opts(op):
        return {} if op in ("MINIMUM", "MAXIMUM") else {"FusedActivationFunction": str(rng.choice(ACTIVATIONS))}

    sg.op(op1, [x, y], [mid], **opts(op1))
    sg.op(op2, [c, mid] if rng.random() < 0.5 else [mid, c], [out], **opts(op2))
    sg.inputs, sg.outputs = [x, y], [out]
    return Case("", b.build(), dict(dtype=dtype, ops=(op1, op2), shapes=(s1, s2, so, c_shape), quant=q))


generators(_two_op, {"ELEMENTWISE/two_op_float32": ("FLOAT32",),
                     "ELEMENTWISE/two_op_int8": ("INT8",),
                     "ELEMENTWISE/two_op_int16": ("INT16",)})


@error_case("SUB/empty_output_huge_dims")
def _sub_empty_huge():
    # An empty output whose other dimensions multiply past int32: the
    # broadcast plan fused them into one loop extent, which overflowed (the
    # engine's fuzzer, seed 13, SUB_int16_0 case 386, shapes changed after
    # loading). The model reader bounds the product of a tensor's dimensions
    # other than zeros.
    shape = (0, 1019869635, 4)
    model, _ = single_op("SUB", [(shape, "FLOAT32", None, None), (shape, "FLOAT32", None, None)],
                         [(shape, "FLOAT32", None)])
    return ErrorCase("", model, [np.zeros(shape, np.float32)] * 2,
                     "ValueError malformed model: tensor 0 of subgraph 0 has a negative or too large shape")
