"""Shapes and filled outputs: SHAPE (any input type, int32 out), FILL (float32,
int32, int8 values; dims int8/16/32/64; the value constant or computed),
ZEROS_LIKE (float32, int8, int32, int64), BROADCAST_TO (every type, int32
or int64 shapes, constant or model inputs) and BROADCAST_ARGS (int32,
int64; outputs longer or shorter than the inputs, as TFLM takes them;
int64 values past 2^31, which TFLM truncates). The error cases: what TFLM
refuses, and shapes that do not broadcast."""

from __future__ import annotations

import numpy as np

from tflm_dev.builder import ModelBuilder
from . import Case, ErrorCase, error_case, generator, int_quant, random_data, random_shape, single_op

ALL = ["FLOAT32", "INT8", "INT16", "INT32", "INT64", "BOOL", "UINT8"]
NP = {"FLOAT32": np.float32, "INT8": np.int8, "INT16": np.int16, "INT32": np.int32, "INT64": np.int64,
      "BOOL": np.bool_, "UINT8": np.uint8}


# -- SHAPE -------------------------------------------------------------------------

def _shape_op(rng, dtype):
    s = random_shape(rng, 1, 6, 4)
    q = int_quant(rng, dtype)
    if rng.random() < 0.2:
        # A constant input, a scalar now and then (0 values out).
        s = () if rng.random() < 0.5 else s
        model, _ = single_op("SHAPE", [(s, dtype, random_data(rng, dtype, s), q)], [((len(s),), "INT32", None)],
                             OutType="INT32")
        return Case("", model, dict(dtype=dtype, shape=s, const=True), inputs=[[] for _ in range(3)])
    model, _ = single_op("SHAPE", [(s, dtype, None, q)], [((len(s),), "INT32", None)], OutType="INT32")
    return Case("", model, dict(dtype=dtype, shape=s, const=False))


for _dt in ALL:
    generator(f"SHAPE/{_dt.lower()}")(lambda rng, dt=_dt: _shape_op(rng, dt))


# -- FILL --------------------------------------------------------------------------

FILL_SPECIAL = {"FLOAT32": [np.nan, np.inf, -np.inf, -0.0, 3.4028235e38, 1e-45],
                "INT32": [-2**31, 2**31 - 1, 0], "INT8": [-128, 127, 0]}


def _fill_value(rng, dtype):
    if rng.random() < 0.4:
        return np.array(rng.choice(FILL_SPECIAL[dtype]), NP[dtype])
    return random_data(rng, dtype, ())


def _fill(rng, dtype):
    out = random_shape(rng, 1, 5)
    dims_type = str(rng.choice(["INT32", "INT64", "INT16", "INT8"]))
    dims = np.array(out, NP[dims_type])
    q = int_quant(rng, dtype)
    computed = rng.random() < 0.3
    if not computed:
        model, _ = single_op("FILL", [((len(out),), dims_type, dims), ((), dtype, _fill_value(rng, dtype), q)],
                             [(out, dtype, q)])
        return Case("", model, dict(dtype=dtype, output=out, dims_type=dims_type, value="const"),
                    inputs=[[] for _ in range(3)])
    # The value computed at run time: a 1-value model input reshaped to a scalar.
    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1,), dtype, quant=q)
    new_shape = sg.tensor((0,), "INT32", data=np.zeros(0, np.int32))
    scalar = sg.tensor((), dtype, quant=q)
    dims_t = sg.tensor((len(out),), dims_type, data=dims)
    y = sg.tensor(out, dtype, quant=q)
    sg.op("RESHAPE", [x, new_shape], [scalar])
    sg.op("FILL", [dims_t, scalar], [y])
    sg.inputs, sg.outputs = [x], [y]
    rs = np.random.default_rng(int(rng.integers(1 << 30)))
    return Case("", b.build(), dict(dtype=dtype, output=out, dims_type=dims_type, value="computed"),
                inputs=[[_fill_value(rs, dtype).reshape(1)] for _ in range(3)])


for _dt in ("FLOAT32", "INT32", "INT8"):
    generator(f"FILL/{_dt.lower()}")(lambda rng, dt=_dt: _fill(rng, dt))


# -- ZEROS_LIKE --------------------------------------------------------------------

def _zeros_like(rng, dtype):
    s = random_shape(rng, 1, 5)
    q = int_quant(rng, dtype)
    model, _ = single_op("ZEROS_LIKE", [(s, dtype, None, q)], [(s, dtype, q)])
    return Case("", model, dict(dtype=dtype, shape=s))


for _dt in ("FLOAT32", "INT8", "INT32", "INT64"):
    generator(f"ZEROS_LIKE/{_dt.lower()}")(lambda rng, dt=_dt: _zeros_like(rng, dt))


# -- BROADCAST_TO ------------------------------------------------------------------

def _broadcast_to(rng, dtype):
    out = random_shape(rng, 1, 5, 4)
    rank = int(rng.integers(0, len(out) + 1))
    inp = tuple(1 if rng.random() < 0.4 else d for d in out[len(out) - rank:])
    shape_type = "INT64" if rng.random() < 0.4 else "INT32"
    q = int_quant(rng, dtype)
    # A scalar input cannot be fed to TFLM's Python interpreter: constant then.
    const = rank == 0 or rng.random() < 0.25
    data = random_data(rng, dtype, inp) if const else None
    model, _ = single_op("BROADCAST_TO", [(inp, dtype, data, q), ((len(out),), shape_type, np.array(out, NP[shape_type]))],
                         [(out, dtype, q)])
    return Case("", model, dict(dtype=dtype, input=inp, output=out, shape_type=shape_type, const=const),
                inputs=[[] for _ in range(3)] if const else None)


for _dt in ALL:
    generator(f"BROADCAST_TO/{_dt.lower()}")(lambda rng, dt=_dt: _broadcast_to(rng, dt))


# -- BROADCAST_ARGS ----------------------------------------------------------------

def _bargs_values(rng, n_out, n1, n2, dtype):
    """Two shapes that broadcast: each value the common one or 1 (0 too);
    int64 values past 2^31 now and then, which both sides truncate alike."""
    full = [int(rng.choice([0, 2, 3, 4, 7])) for _ in range(max(n_out, n1, n2))]
    if dtype == "INT64" and rng.random() < 0.3:
        full = [v + (int(rng.integers(1, 4)) << 32) if v > 1 else v for v in full]
    def pick(n):
        tail = full[len(full) - n:]
        return np.array([1 if rng.random() < 0.35 else v for v in tail], NP[dtype])
    return pick(n1), pick(n2)


def _broadcast_args(rng, dtype):
    n1, n2 = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    n_out = max(n1, n2) + int(rng.choice([0, 0, 0, 1, -1]))
    n_out = max(n_out, 1)
    const = rng.random() < 0.25
    a, b = _bargs_values(rng, n_out, n1, n2, dtype)
    inputs = [((n1,), dtype, a if const else None), ((n2,), dtype, b if const else None)]
    model, _ = single_op("BROADCAST_ARGS", inputs, [((n_out,), dtype, None)])
    rs = np.random.default_rng(int(rng.integers(1 << 30)))
    sets = [[] if const else list(_bargs_values(rs, n_out, n1, n2, dtype)) for _ in range(3)]
    return Case("", model, dict(dtype=dtype, lengths=(n1, n2, n_out), const=const), inputs=sets)


for _dt in ("INT32", "INT64"):
    generator(f"BROADCAST_ARGS/{_dt.lower()}")(lambda rng, dt=_dt: _broadcast_args(rng, dt))


# -- error cases -------------------------------------------------------------------

@error_case("SHAPE/int64_output")
def _shape_int64():
    model, _ = single_op("SHAPE", [((2, 3), "FLOAT32")], [((2,), "INT64", None)], OutType="INT64")
    return ErrorCase("", model, [np.zeros((2, 3), np.float32)], "NotImplementedError output of type int64")


@error_case("FILL/computed_dims")
def _fill_computed():
    model, _ = single_op("FILL", [((2,), "INT32"), ((), "FLOAT32", np.array(1.5, np.float32))],
                         [((2, 3), "FLOAT32", None)])
    return ErrorCase("", model, [np.array([2, 3], np.int32)], "NotImplementedError dims must be a constant tensor")


@error_case("FILL/dims_differ")
def _fill_differ():
    model, _ = single_op("FILL", [((2,), "INT64", np.array([2, 4], np.int64)), ((), "INT8", np.array(3, np.int8))],
                         [((2, 3), "INT8", None)])
    return ErrorCase("", model, [], "ValueError dims value 1 is 4, the output's dimension 3")


@error_case("FILL/int16")
def _fill_int16():
    model, _ = single_op("FILL", [((2,), "INT32", np.array([2, 3], np.int32)), ((), "INT16", np.array(3, np.int16))],
                         [((2, 3), "INT16", None)])
    return ErrorCase("", model, [], "NotImplementedError value of type int16")


@error_case("FILL/vector_value")
def _fill_vector():
    model, _ = single_op("FILL", [((2,), "INT32", np.array([2, 3], np.int32)),
                                  ((1,), "FLOAT32", np.array([3], np.float32))], [((2, 3), "FLOAT32", None)])
    return ErrorCase("", model, [], "ValueError the value must be a scalar")


@error_case("ZEROS_LIKE/bool")
def _zeros_bool():
    model, _ = single_op("ZEROS_LIKE", [((2, 3), "BOOL")], [((2, 3), "BOOL", None)])
    return ErrorCase("", model, [np.zeros((2, 3), np.bool_)], "NotImplementedError input of type bool")


@error_case("BROADCAST_TO/computed_shape")
def _bt_computed():
    model, _ = single_op("BROADCAST_TO", [((1, 3), "FLOAT32"), ((2,), "INT32")], [((2, 3), "FLOAT32", None)])
    return ErrorCase("", model, [np.zeros((1, 3), np.float32), np.array([2, 3], np.int32)],
                     "NotImplementedError the shape must be a constant tensor")


@error_case("BROADCAST_TO/not_broadcastable")
def _bt_not():
    model, _ = single_op("BROADCAST_TO", [((2, 3), "INT8"), ((2,), "INT32", np.array([4, 3], np.int32))],
                         [((4, 3), "INT8", None)])
    return ErrorCase("", model, [np.zeros((2, 3), np.int8)],
                     "ValueError input shapes do not broadcast to the output shape")


@error_case("BROADCAST_TO/six_dims")
def _bt_six():
    out = (1, 1, 1, 1, 2, 3)
    model, _ = single_op("BROADCAST_TO", [((2, 3), "FLOAT32"), ((6,), "INT32", np.array(out, np.int32))],
                         [(out, "FLOAT32", None)])
    return ErrorCase("", model, [np.zeros((2, 3), np.float32)], "ValueError a 2-D input to a 6-D output (at most 5)")


@error_case("BROADCAST_ARGS/incompatible")
def _bargs_bad():
    model, _ = single_op("BROADCAST_ARGS", [((2,), "INT32"), ((2,), "INT32")], [((2,), "INT32", None)])
    return ErrorCase("", model, [np.array([2, 3], np.int32), np.array([2, 4], np.int32)],
                     "RuntimeError shapes do not broadcast: 3 and 4", tflm=False,
                     why="TFLM's reference aborts the process (TFLITE_CHECK_EQ)")


@error_case("BROADCAST_ARGS/float32")
def _bargs_float():
    model, _ = single_op("BROADCAST_ARGS", [((2,), "FLOAT32"), ((2,), "FLOAT32")], [((2,), "FLOAT32", None)])
    return ErrorCase("", model, [np.ones(2, np.float32), np.ones(2, np.float32)],
                     "NotImplementedError shape of type float32")
