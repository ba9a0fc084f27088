"""Control flow: IF and WHILE running subgraphs, float32 and int8.

IF: a bool condition picks a then or an else subgraph, built of different
ops, with outputs of other shapes than the IF's (TFLM copies bytes, so only
sizes must agree), pass-through branches with no operator, inputs a branch
ignores. WHILE: loops that count to N (0 included: the body never runs)
with a carried tensor, loop invariants, and an IF inside the body. Each
case runs several input sets through one interpreter, the condition true
and false in turn."""

from __future__ import annotations

import numpy as np

from tflm_dev.builder import ModelBuilder, SubgraphBuilder
from . import Case, act_quant, generator, generators, random_data


def _shape(rng, max_elements: int = 48) -> tuple[int, ...]:
    while True:
        shape = tuple(int(d) for d in rng.integers(1, 5, int(rng.integers(1, 4))))
        if int(np.prod(shape)) <= max_elements:
            return shape


def _other_shape(rng, shape) -> tuple[int, ...]:
    """A shape of as many elements (a branch output the IF reshapes by copying)."""
    n = int(np.prod(shape))
    options = [(n,), (1, n), shape, (n, 1)]
    return options[int(rng.integers(len(options)))]


def _quant(rng, dtype):
    return act_quant(rng, dtype, scale_range=(0.02, 0.3)) if dtype == "INT8" else None


def _branch(rng, b: ModelBuilder, name: str, dtype: str, in_shapes, q_ins, out_shape, q_out) -> int:
    """A branch subgraph of one or two ops on its inputs (or none: it passes
    input 0 through when the shapes allow); returns its index."""
    sg = b.subgraph(name)
    ins = [sg.tensor(s, dtype, quant=q, name=f"arg{k}") for k, (s, q) in enumerate(zip(in_shapes, q_ins))]
    sg.inputs = ins
    kind = str(rng.choice(["add_const", "mul_inputs", "relu_reshape", "pass", "sub_two"]))
    n_out = int(np.prod(out_shape))
    if kind == "pass" and in_shapes[0] == out_shape and q_ins[0] == q_out:
        sg.outputs = [ins[0]]
        return len(b.subgraphs) - 1
    x = ins[0]
    shape0 = in_shapes[0]
    if kind == "mul_inputs" and len(ins) > 1 and in_shapes[1] == shape0:
        mid = sg.tensor(shape0, dtype, quant=_quant(rng, dtype), name="prod")
        sg.op("MUL", [x, ins[1]], [mid], FusedActivationFunction=str(rng.choice(["NONE", "RELU"])))
    elif kind == "sub_two" and len(ins) > 1 and in_shapes[1] == shape0:
        mid = sg.tensor(shape0, dtype, quant=_quant(rng, dtype), name="diff")
        sg.op("SUB", [ins[1], x], [mid], FusedActivationFunction="NONE")
    elif kind == "relu_reshape":
        mid = sg.tensor(shape0, dtype, quant=q_ins[0], name="relu")
        sg.op("RELU", [x], [mid])
    else:
        qc = _quant(rng, dtype)
        c = sg.tensor((shape0[-1],), dtype, data=random_data(rng, dtype, (shape0[-1],)), quant=qc, name="c")
        mid = sg.tensor(shape0, dtype, quant=_quant(rng, dtype), name="sum")
        sg.op("ADD", [x, c], [mid], FusedActivationFunction=str(rng.choice(["NONE", "RELU6"])))
    # To the output's quantization and shape: an ADD of zero requantizes, a
    # RESHAPE gives the branch's own shape of the IF output's size.
    if dtype == "INT8":
        zero = sg.tensor((1,), dtype, data=np.array([q_out[1][0]], np.int8), quant=q_out, name="zero")
        req = sg.tensor(shape0, dtype, quant=q_out, name="requant")
        sg.op("ADD", [mid, zero], [req], FusedActivationFunction="NONE")
        mid = req
    if int(np.prod(shape0)) != n_out:
        raise AssertionError("branch output size")
    out = sg.tensor(out_shape, dtype, quant=q_out, name="out")
    new_shape = sg.tensor((len(out_shape),), "INT32", data=np.array(out_shape, np.int32), name="shape")
    sg.op("RESHAPE", [mid, new_shape], [out], NewShape=list(out_shape))
    sg.outputs = [out]
    return len(b.subgraphs) - 1


def _cond_inputs(rng, model_inputs, n_sets: int = 4) -> list[list[np.ndarray]]:
    """Input sets with the condition (input 0) true and false in turn."""
    sets = []
    for k in range(n_sets):
        row = [np.array([(k + int(rng.integers(2))) % 2 == 0], np.bool_).reshape(model_inputs[0][0])]
        for shape, dtype in model_inputs[1:]:
            row.append(random_data(rng, dtype, shape))
        sets.append(row)
    return sets


def _if(rng, dtype: str) -> Case:
    shape = _shape(rng)
    n_in = int(rng.integers(1, 4))
    in_shapes = [shape] + [shape if rng.random() < 0.7 else _shape(rng) for _ in range(n_in - 1)]
    q_ins = [_quant(rng, dtype) for _ in range(n_in)]
    out_shape = _other_shape(rng, shape)
    q_out = _quant(rng, dtype)
    two_outputs = rng.random() < 0.4
    b = ModelBuilder()
    main = b.subgraph("main")
    cond_shape = (1,) if rng.random() < 0.5 else (1, 1)
    cond = main.tensor(cond_shape, "BOOL", name="cond")
    xs = [main.tensor(s, dtype, quant=q, name=f"x{k}") for k, (s, q) in enumerate(zip(in_shapes, q_ins))]
    y = main.tensor(out_shape, dtype, quant=q_out, name="y")
    outs = [y]
    then_i = _branch(rng, b, "then", dtype, in_shapes, q_ins, _other_shape(rng, shape), q_out)
    else_i = _branch(rng, b, "else", dtype, in_shapes, q_ins, _other_shape(rng, shape), q_out)
    if two_outputs:
        # A second output: each branch passes one of its inputs through.
        k = int(rng.integers(n_in))
        y2 = main.tensor(in_shapes[k], dtype, quant=q_ins[k], name="y2")
        outs.append(y2)
        for s in (then_i, else_i):
            sub = b.subgraphs[s]
            sub.outputs = sub.outputs + [sub.inputs[k]]
    main.op("IF", [cond] + xs, outs, ThenSubgraphIndex=then_i, ElseSubgraphIndex=else_i)
    # Work after the IF on its output keeps the plan honest.
    if rng.random() < 0.5:
        z = main.tensor(out_shape, dtype, quant=q_out, name="z")
        main.op("RELU", [y], [z])
        outs = [z] + outs[1:]
    main.inputs, main.outputs = [cond] + xs, outs
    inputs = _cond_inputs(rng, [(cond_shape, "BOOL")] + [(s, dtype) for s in in_shapes])
    params = dict(dtype=dtype, shapes=in_shapes, out=out_shape, quant=(q_ins, q_out), outputs=len(outs),
                  branches=[[o.opcode for o in b.subgraphs[s].ops] for s in (then_i, else_i)])
    return Case("", b.build(), params, inputs=inputs)


@generator("IF/float32")
def if_float32(rng):
    return _if(rng, "FLOAT32")


@generator("IF/int8")
def if_int8(rng):
    return _if(rng, "INT8")


def _counter_cond(b: ModelBuilder, n: int, carried: list[tuple]) -> int:
    """cond(i, ...) = (n - i) != 0: SUB then CAST to bool (any non-zero is true)."""
    sg = b.subgraph("cond")
    i = sg.tensor((), "INT32", name="i")
    rest = [sg.tensor(s, dt, quant=q, name=f"v{k}") for k, (s, dt, q) in enumerate(carried)]
    limit = sg.tensor((), "INT32", data=np.array(n, np.int32), name="n")
    left = sg.tensor((), "INT32", name="left")
    flag = sg.tensor((), "BOOL", name="flag")
    sg.op("SUB", [limit, i], [left], FusedActivationFunction="NONE")
    sg.op("CAST", [left], [flag])
    sg.inputs, sg.outputs = [i] + rest, [flag]
    return len(b.subgraphs) - 1


def _step(rng, sg: SubgraphBuilder, dtype: str, x: int, shape, q) -> int:
    """x * a + c (float) or a requantizing ADD of a constant (int8): bounded
    values over many iterations."""
    out = sg.tensor(shape, dtype, quant=q, name="next")
    if dtype == "FLOAT32":
        a = sg.tensor((), dtype, data=np.array(rng.uniform(0.5, 0.9), np.float32), name="a")
        c = sg.tensor(shape[-1:], dtype, data=rng.normal(0, 1, shape[-1:]).astype(np.float32), name="c")
        mid = sg.tensor(shape, dtype, name="scaled")
        sg.op("MUL", [x, a], [mid], FusedActivationFunction="NONE")
        sg.op("ADD", [mid, c], [out], FusedActivationFunction="NONE")
    else:
        qc = _quant(rng, dtype)
        c = sg.tensor(shape[-1:], dtype, data=random_data(rng, dtype, shape[-1:]), quant=qc, name="c")
        sg.op("ADD", [x, c], [out], FusedActivationFunction=str(rng.choice(["NONE", "RELU6"])))
    return out


def _while(rng, dtype: str, nested_if: bool) -> Case:
    shape = _shape(rng)
    q = _quant(rng, dtype)
    n = int(rng.choice([0, 1, 2, 5, int(rng.integers(3, 40))]))
    invariant = rng.random() < 0.5
    b = ModelBuilder()
    main = b.subgraph("main")
    x = main.tensor(shape, dtype, quant=q, name="x")
    start_const = rng.random() < 0.5
    i0 = main.tensor((), "INT32", data=np.array(0, np.int32), name="zero") if start_const else \
        main.tensor((1,), "INT32", name="start")
    if not start_const:
        # A model input of shape (1,) reshaped to the scalar the loop carries.
        i_in = i0
        i0 = main.tensor((), "INT32", name="i0")
        main.op("RESHAPE", [i_in], [i0])
    carried = [(shape, dtype, q)]
    flag0 = None
    if nested_if:
        flag0 = main.tensor((), "INT32", data=np.array(int(rng.integers(2)), np.int32), name="flag0")
        carried.append(((), "INT32", None))
    w = None
    if invariant:
        w = main.tensor(shape, dtype, quant=q, name="w")
        carried.append((shape, dtype, q))
    cond_i = _counter_cond(b, n, carried)
    body = b.subgraph("body")
    bi = body.tensor((), "INT32", name="i")
    bx = body.tensor(shape, dtype, quant=q, name="x")
    b_ins = [bi, bx]
    one = body.tensor((), "INT32", data=np.array(1, np.int32), name="one")
    bi2 = body.tensor((), "INT32", name="i_next")
    body.op("ADD", [bi, one], [bi2], FusedActivationFunction="NONE")
    b_outs = [bi2]
    if nested_if:
        bflag = body.tensor((), "INT32", name="flag")
        b_ins.append(bflag)
        flag_next = body.tensor((), "INT32", name="flag_next")
        body.op("SUB", [one, bflag], [flag_next], FusedActivationFunction="NONE")
        as_bool = body.tensor((1,), "BOOL", name="flag_bool")
        flag_1 = body.tensor((1,), "INT32", name="flag_1")
        body.op("RESHAPE", [bflag], [flag_1])
        body.op("CAST", [flag_1], [as_bool])
        if_out = body.tensor(shape, dtype, quant=q, name="branch")
        then_i = len(b.subgraphs)
        t = b.subgraph("then")
        tx = t.tensor(shape, dtype, quant=q, name="x")
        t.inputs, t.outputs = [tx], [_step(rng, t, dtype, tx, shape, q)]
        else_i = len(b.subgraphs)
        e = b.subgraph("else")
        ex = e.tensor(shape, dtype, quant=q, name="x")
        e.inputs, e.outputs = [ex], [_step(rng, e, dtype, ex, shape, q)]
        body.op("IF", [as_bool, bx], [if_out], ThenSubgraphIndex=then_i, ElseSubgraphIndex=else_i)
        b_outs += [if_out, flag_next]
    else:
        b_outs.append(_step(rng, body, dtype, bx, shape, q))
    if invariant:
        bw = body.tensor(shape, dtype, quant=q, name="w")
        b_ins.append(bw)
        # The invariant feeds the step: x + w, requantized, replaces x.
        mixed = body.tensor(shape, dtype, quant=q, name="mixed")
        body.op("ADD", [b_outs[1], bw], [mixed], FusedActivationFunction="RELU6" if dtype == "INT8" else "NONE")
        b_outs[1] = mixed
        b_outs.append(bw)
    body.inputs, body.outputs = b_ins, b_outs
    body_i = b.subgraphs.index(body)
    op_ins = [i0, x] + ([flag0] if nested_if else []) + ([w] if invariant else [])
    outs = [main.tensor((), "INT32", name="i_out"), main.tensor(shape, dtype, quant=q, name="y")]
    if nested_if:
        outs.append(main.tensor((), "INT32", name="flag_out"))
    if invariant:
        outs.append(main.tensor(shape, dtype, quant=q, name="w_out"))
    main.op("WHILE", op_ins, outs, CondSubgraphIndex=cond_i, BodySubgraphIndex=body_i)
    # The count comes out as a (1,) tensor: TFLM's Python interpreter reads no scalars.
    count = main.tensor((1,), "INT32", name="count")
    main.op("RESHAPE", [outs[0]], [count])
    main.inputs = ([] if start_const else [i_in]) + [x] + ([w] if invariant else [])
    main.outputs = [count, outs[1]]
    inputs = []
    for k in range(3):
        # A start past n would never end (the condition is n - i != 0).
        row = [] if start_const else [np.array([int(rng.integers(0, n + 1))], np.int32)]
        row.append(random_data(rng, dtype, shape))
        if invariant:
            row.append(random_data(rng, dtype, shape))
        inputs.append(row)
    params = dict(dtype=dtype, shape=shape, n=n, quant=q, start_const=start_const, invariant=invariant,
                  nested_if=nested_if)
    return Case("", b.build(), params, inputs=inputs)


generators(_while, {"WHILE/float32": ("FLOAT32", False,),
                    "WHILE/int8": ("INT8", False,),
                    "WHILE/if_in_body_float32": ("FLOAT32", True,),
                    "WHILE/if_in_body_int8": ("INT8", True,)})
