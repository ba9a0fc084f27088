"""Stateful models: resource variables (VAR_HANDLE, READ_VARIABLE,
ASSIGN_VARIABLE) with an initialising subgraph run by CALL_ONCE. Each case
runs several invokes through one interpreter."""

from __future__ import annotations

from tflm_dev.builder import ModelBuilder
from . import Case, act_quant, generator, random_data


def _delay_line(rng, with_init: bool) -> Case:
    """out = the input of the previous invoke (the initial value the first time)."""
    dtype = str(rng.choice(["INT8", "FLOAT32", "INT16", "INT32"]))
    shape = tuple(int(d) for d in rng.integers(1, 5, int(rng.integers(1, 4))))
    q = act_quant(rng, dtype) if dtype in ("INT8", "INT16") else None
    b = ModelBuilder()
    main = b.subgraph("main")
    x = main.tensor(shape, dtype, quant=q, name="x")
    handle = main.tensor((), "RESOURCE", name="state_handle")
    prev = main.tensor(shape, dtype, quant=q, name="previous")
    if with_init:
        main.op("CALL_ONCE", [], [], InitSubgraphIndex=1)
    main.op("VAR_HANDLE", [], [handle], SharedName="state")
    main.op("READ_VARIABLE", [handle], [prev])
    main.op("ASSIGN_VARIABLE", [handle, x], [])
    main.inputs, main.outputs = [x], [prev]
    if with_init:
        init = b.subgraph("init")
        h2 = init.tensor((), "RESOURCE", name="state_handle")
        value = init.tensor(shape, dtype, data=random_data(rng, dtype, shape), quant=q, name="initial")
        init.op("VAR_HANDLE", [], [h2], SharedName="state")
        init.op("ASSIGN_VARIABLE", [h2, value], [])
    return Case("", b.build(), dict(dtype=dtype, shape=shape, quant=q, init=with_init), runs=4)


@generator("STATEFUL/delay_line_init")
def delay_line_init(rng):
    return _delay_line(rng, True)


@generator("STATEFUL/delay_line_zero_point")
def delay_line_zero_point(rng):
    """No init subgraph: the state starts filled with the value's zero point."""
    return _delay_line(rng, False)
