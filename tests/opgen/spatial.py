"""Spatial data-movement models, in every type TFLM's kernel takes:
SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND (float32, int8; 3-D and 4-D,
constant or computed block shape and paddings / crops; padding, whose
values TFLM leaves undefined, not compared; int16, which TFLM refuses as it
runs it: numpy's moves of the bytes, TF Lite's definition, with its zero
point 0 as padding), DEPTH_TO_SPACE and
SPACE_TO_DEPTH (float32, int8; block sizes 1 to 3), MIRROR_PAD (float32,
int8; REFLECT and SYMMETRIC to their largest paddings, int32 or int64
paddings, constant or computed), REVERSE_V2 (float32, int8, uint8, int16,
int32, int64, bool; adjacent axes of up to 6 dimensions, in any order,
negative ones, constant or computed), TILE (the same types; up to 6
dimensions, int32 or int64 multiples, zero ones too, constant or computed:
no TFLM kernel, numpy's tile, TF Lite's definition, is the reference)."""

from __future__ import annotations

import numpy as np

from . import Case, ErrorCase, error_case, generator, int_quant, random_data, single_op


def _i32(values):
    return np.asarray(values, np.int32)


def _with_params(rng, dtype, in_shape, params):
    """Three input sets: the data, then the computed parameters as given."""
    return [[random_data(rng, dtype, in_shape)] + [_i32(p) for p in params] for _ in range(3)]


# -- SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND --------------------------------------------

def _space_batch(rng, dtype, to_batch):
    rank = int(rng.integers(3, 5))
    spatial = rank - 2
    blocks = [int(rng.integers(1, 4)) for _ in range(spatial)]
    batch, depth = int(rng.integers(1, 3)), int(rng.integers(1, 5))
    space, small, pads = [], [], []
    for blk in blocks:
        # small * blk == space + before + after (paddings, or crops)
        small_size = int(rng.integers(1, 5))
        full = small_size * blk
        extra = int(rng.integers(0, min(full - 1, 2 * blk) + 1))
        before = int(rng.integers(0, extra + 1))
        space.append(full - extra)
        small.append(small_size)
        pads.append([before, extra - before])
    space_shape = (batch, *space, depth)
    batch_shape = (batch * int(np.prod(blocks)), *small, depth)
    in_shape, out_shape = (space_shape, batch_shape) if to_batch else (batch_shape, space_shape)
    q = int_quant(rng, dtype)
    computed = rng.integers(0, 4) == 0
    block_t = ((spatial,), "INT32", None if computed else _i32(blocks))
    pads_t = ((spatial, 2), "INT32", None if computed else _i32(pads))
    op = "SPACE_TO_BATCH_ND" if to_batch else "BATCH_TO_SPACE_ND"
    model, _ = single_op(op, [(in_shape, dtype, None, q), block_t, pads_t], [(out_shape, dtype, q)])
    inputs = _with_params(rng, dtype, in_shape, [blocks, pads]) if computed else None
    defined = expected = None
    if dtype == "INT16":
        # No TFLM kernel: TensorFlow's definition, padding with the zero point (0).
        def expected(sample, blocks=blocks, pads=pads):
            f = space_to_batch if to_batch else batch_to_space
            return [f(sample[0], blocks, pads)]
    elif to_batch:
        # TFLM pads with bytes it never sets (whatever its arena held there):
        # the values from the input compare, the padding does not
        # (tests/test_space_to_batch_padding.py checks ours).
        real = space_to_batch(np.ones(in_shape, np.int8), blocks, pads).ravel() != 0

        def from_input(outputs, run, real=real):
            return [outputs[0].ravel()[real]]
        defined = from_input
    return Case("", model, dict(op=op, dtype=dtype, input=in_shape, block=blocks, pads=pads, computed=computed,
                                quant=q), inputs=inputs, defined=defined, expected=expected)


def space_to_batch(x: np.ndarray, block: list[int], pads: list[list[int]]) -> np.ndarray:
    """TensorFlow's SPACE_TO_BATCH_ND of an NHWC (or NHC) array, zero bytes as padding."""
    three_d = x.ndim == 3
    if three_d:
        x = x[:, :, None, :]
        block, pads = list(block) + [1], list(pads) + [[0, 0]]
    x = np.pad(x, [(0, 0), tuple(pads[0]), tuple(pads[1]), (0, 0)])
    n, h, w, c = x.shape
    bh, bw = block
    y = x.reshape(n, h // bh, bh, w // bw, bw, c).transpose(2, 4, 0, 1, 3, 5).reshape(bh * bw * n, h // bh, w // bw, c)
    return y[:, :, 0, :] if three_d else y


def batch_to_space(x: np.ndarray, block: list[int], crops: list[list[int]]) -> np.ndarray:
    """TensorFlow's BATCH_TO_SPACE_ND of an NHWC (or NHC) array."""
    three_d = x.ndim == 3
    if three_d:
        x = x[:, :, None, :]
        block, crops = list(block) + [1], list(crops) + [[0, 0]]
    bh, bw = block
    nb, h, w, c = x.shape
    n = nb // (bh * bw)
    y = x.reshape(bh, bw, n, h, w, c).transpose(2, 3, 0, 4, 1, 5).reshape(n, h * bh, w * bw, c)
    y = y[:, crops[0][0]:h * bh - crops[0][1], crops[1][0]:w * bw - crops[1][1]]
    return y[:, :, 0, :] if three_d else y


for _dt in ("FLOAT32", "INT8", "INT16"):
    generator(f"SPACE_TO_BATCH_ND/{_dt.lower()}")(lambda rng, dt=_dt: _space_batch(rng, dt, True))
    generator(f"BATCH_TO_SPACE_ND/{_dt.lower()}")(lambda rng, dt=_dt: _space_batch(rng, dt, False))


# -- DEPTH_TO_SPACE, SPACE_TO_DEPTH ----------------------------------------------------

def _depth_space(rng, dtype, to_space):
    block = int(rng.integers(1, 4))
    batch = int(rng.integers(1, 3))
    h, w, depth = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
    deep = (batch, h, w, depth * block * block)
    space = (batch, h * block, w * block, depth)
    in_shape, out_shape = (deep, space) if to_space else (space, deep)
    q = int_quant(rng, dtype)
    op = "DEPTH_TO_SPACE" if to_space else "SPACE_TO_DEPTH"
    model, _ = single_op(op, [(in_shape, dtype, None, q)], [(out_shape, dtype, q)], BlockSize=block)
    return Case("", model, dict(op=op, dtype=dtype, input=in_shape, block=block))


for _dt in ("FLOAT32", "INT8"):
    generator(f"DEPTH_TO_SPACE/{_dt.lower()}")(lambda rng, dt=_dt: _depth_space(rng, dt, True))
    generator(f"SPACE_TO_DEPTH/{_dt.lower()}")(lambda rng, dt=_dt: _depth_space(rng, dt, False))


# -- the inputs of MIRROR_PAD and REVERSE_V2 ------------------------------------------

COPIED_SPECIAL = np.asarray([np.inf, -np.inf, np.nan, -0.0], np.float32)


def _copied_inputs(rng: np.random.Generator, dtype: str, in_shape: tuple[int, ...],
                   param: np.ndarray | None) -> list[list[np.ndarray]]:
    """Three input sets of an op that copies values: the data (float32 with
    infinities, NaN and -0.0 now and then: values are copied, bits and all),
    then the computed parameter, if there is one."""
    inputs = []
    for _ in range(3):
        x = random_data(rng, dtype, in_shape)
        if dtype == "FLOAT32":
            mask = rng.integers(0, 4, in_shape) == 0
            x[mask] = rng.choice(COPIED_SPECIAL, int(mask.sum()))
        inputs.append([x] if param is None else [x, param])
    return inputs


# -- MIRROR_PAD --------------------------------------------------------------------------

def _mirror_pad(rng, dtype):
    rank = int(rng.integers(1, 6))
    in_shape = tuple(int(d) for d in rng.integers(1, 5, rank))
    mode = str(rng.choice(["REFLECT", "SYMMETRIC"]))
    most = [d - (1 if mode == "REFLECT" else 0) for d in in_shape]
    pads = [[int(rng.integers(0, min(m, 3) + 1)) for _ in range(2)] for m in most]
    out_shape = tuple(d + lo + hi for d, (lo, hi) in zip(in_shape, pads))
    pad_type = "INT64" if rng.integers(0, 4) == 0 else "INT32"
    pad_np = np.asarray(pads, np.int64 if pad_type == "INT64" else np.int32)
    computed = rng.integers(0, 4) == 0
    q = int_quant(rng, dtype)
    model, _ = single_op("MIRROR_PAD", [(in_shape, dtype, None, q), ((rank, 2), pad_type, None if computed else pad_np)],
                         [(out_shape, dtype, q)], Mode=mode)
    inputs = _copied_inputs(rng, dtype, in_shape, pad_np if computed else None) \
        if computed or dtype == "FLOAT32" else None
    return Case("", model, dict(dtype=dtype, input=in_shape, paddings=pads, mode=mode, pad_type=pad_type,
                                computed=computed), inputs=inputs)


for _dt in ("FLOAT32", "INT8"):
    generator(f"MIRROR_PAD/{_dt.lower()}")(lambda rng, dt=_dt: _mirror_pad(rng, dt))


# -- REVERSE_V2 --------------------------------------------------------------------------

REVERSE_TYPES = ["FLOAT32", "INT8", "UINT8", "INT16", "INT32", "INT64", "BOOL"]


def _reverse(rng, dtype):
    rank = int(rng.integers(1, 7))
    in_shape = tuple(int(d) for d in rng.integers(1, 6 if rank <= 3 else 3, rank))
    # Adjacent axes (TFLM takes no others), in any order, some counted from the end.
    lo = int(rng.integers(0, rank))
    hi = int(rng.integers(lo, rank))
    axes = list(range(lo, hi + 1))
    rng.shuffle(axes)
    axes = [a - rank if rng.integers(0, 2) else a for a in axes]
    computed = rng.integers(0, 4) == 0
    q = int_quant(rng, dtype)
    model, _ = single_op("REVERSE_V2", [(in_shape, dtype, None, q), ((len(axes),), "INT32", None if computed else _i32(axes))],
                         [(in_shape, dtype, q)])
    inputs = _copied_inputs(rng, dtype, in_shape, _i32(axes) if computed else None) \
        if computed or dtype == "FLOAT32" else None
    return Case("", model, dict(dtype=dtype, input=in_shape, axes=axes, computed=computed), inputs=inputs)


for _dt in REVERSE_TYPES:
    generator(f"REVERSE_V2/{_dt.lower()}")(lambda rng, dt=_dt: _reverse(rng, dt))


# -- what TFLM refuses, or runs out of bounds ---------------------------------------

NP = {"FLOAT32": np.float32, "INT8": np.int8, "INT16": np.int16}
Q16 = ([0.1], [0])


def _space_batch_model(op, dtype="FLOAT32", shape=(1, 4, 4, 1), out=(4, 2, 2, 1), block=(2, 2),
                       pads=((0, 0), (0, 0)), const=True):
    q = Q16 if dtype == "INT16" else None
    spatial = len(block)
    return single_op(op, [(shape, dtype, None, q), ((spatial,), "INT32", _i32(block) if const else None),
                          ((spatial, 2), "INT32", _i32(pads) if const else None)], [(out, dtype, q)])[0]


@error_case("BATCH_TO_SPACE_ND/rank_5")
def _b2s_rank5():
    model = _space_batch_model("BATCH_TO_SPACE_ND", shape=(4, 1, 2, 2, 1), out=(1, 1, 4, 4, 1))
    return ErrorCase("", model, [np.zeros((4, 1, 2, 2, 1), np.float32)],
                     "ValueError input and output need 3 or 4 dimensions alike")


@error_case("SPACE_TO_BATCH_ND/block_0")
def _s2b_block0():
    return ErrorCase("", _space_batch_model("SPACE_TO_BATCH_ND", block=(0, 2)), [np.zeros((1, 4, 4, 1), np.float32)],
                     "ValueError block shape and paddings do not give the output's shape", tflm=False,
                     why="TFLM divides by the block's height")


@error_case("BATCH_TO_SPACE_ND/computed_crops_do_not_fit")
def _b2s_crops():
    model = _space_batch_model("BATCH_TO_SPACE_ND", shape=(4, 2, 2, 1), out=(1, 4, 4, 1), const=False)
    return ErrorCase("", model, [np.zeros((4, 2, 2, 1), np.float32), _i32([2, 2]), _i32([[1, 0], [0, 0]])],
                     "RuntimeError block shape and crops do not give the output's shape", tflm=False,
                     why="TFLM leaves the output's last row unwritten")


@error_case("DEPTH_TO_SPACE/int16")
def _d2s_int16():
    model, _ = single_op("DEPTH_TO_SPACE", [((1, 1, 1, 4), "INT16", None, Q16)], [((1, 2, 2, 1), "INT16", Q16)],
                         BlockSize=2)
    return ErrorCase("", model, [np.zeros((1, 1, 1, 4), np.int16)], "NotImplementedError input of type int16 is not supported")


@error_case("SPACE_TO_DEPTH/uneven")
def _s2d_uneven():
    model, _ = single_op("SPACE_TO_DEPTH", [((1, 3, 2, 1), "FLOAT32")], [((1, 1, 1, 4), "FLOAT32", None)], BlockSize=2)
    return ErrorCase("", model, [np.zeros((1, 3, 2, 1), np.float32)],
                     "ValueError block size 2 does not turn 1x3x2x1 into 1x1x1x4")


@error_case("DEPTH_TO_SPACE/block_0")
def _d2s_block0():
    model, _ = single_op("DEPTH_TO_SPACE", [((1, 1, 1, 4), "FLOAT32")], [((1, 1, 1, 4), "FLOAT32", None)], BlockSize=0)
    return ErrorCase("", model, [np.zeros((1, 1, 1, 4), np.float32)], "ValueError block size 0 does not turn")


def _mirror_model(dtype="FLOAT32", pads=((0, 0), (1, 1)), out=(2, 5), const=True, mode="REFLECT"):
    q = Q16 if dtype == "INT16" else None
    return single_op("MIRROR_PAD", [((2, 3), dtype, None, q), ((2, 2), "INT32", _i32(pads) if const else None)],
                     [(out, dtype, q)], Mode=mode)[0]


@error_case("MIRROR_PAD/int16")
def _mirror_int16():
    return ErrorCase("", _mirror_model("INT16"), [np.zeros((2, 3), np.int16)],
                     "NotImplementedError input of type int16 is not supported")


@error_case("MIRROR_PAD/reflect_too_far")
def _mirror_far():
    return ErrorCase("", _mirror_model(pads=((0, 0), (3, 0)), out=(2, 6)), [np.zeros((2, 3), np.float32)],
                     "ValueError paddings do not fit the input in REFLECT mode", tflm=False,
                     why="TFLM reads before the input's row")


@error_case("MIRROR_PAD/computed_symmetric_too_far")
def _mirror_computed():
    model = _mirror_model(pads=((0, 0), (4, 0)), out=(2, 7), const=False, mode="SYMMETRIC")
    return ErrorCase("", model, [np.zeros((2, 3), np.float32), _i32([[0, 0], [4, 0]])],
                     "RuntimeError paddings do not fit the input in SYMMETRIC mode", tflm=False,
                     why="TFLM reads before the input's row")


@error_case("MIRROR_PAD/unknown_mode")
def _mirror_mode():
    return ErrorCase("", _mirror_model(mode=2), [np.zeros((2, 3), np.float32)],
                     "ValueError unknown mirror padding mode 2", tflm=False, why="TFLM pads symmetrically")


def _reverse_model(shape=(2, 3, 4), axes=(1,), axis_type="INT32", const=True):
    data = np.asarray(axes, np.int32 if axis_type == "INT32" else np.int64) if const else None
    return single_op("REVERSE_V2", [(shape, "FLOAT32"), ((len(axes),), axis_type, data)], [(shape, "FLOAT32", None)])[0]


def _reverse_error(error, shape=(2, 3, 4), tflm=True, why="", computed=None, **kw):
    inputs = [np.zeros(shape, np.float32)] + ([_i32(computed)] if computed is not None else [])
    return ErrorCase("", _reverse_model(shape=shape, const=computed is None, **kw), inputs, error, tflm=tflm, why=why)


@error_case("REVERSE_V2/rank_7")
def _reverse_rank7():
    return _reverse_error("NotImplementedError at most 6 dimensions supported", shape=(1, 1, 1, 1, 1, 1, 2), axes=(6,))


@error_case("REVERSE_V2/axes_apart")
def _reverse_apart():
    return _reverse_error("NotImplementedError axes that repeat or are not adjacent", axes=(0, 2))


@error_case("REVERSE_V2/axes_repeated")
def _reverse_repeated():
    return _reverse_error("NotImplementedError axes that repeat or are not adjacent", axes=(1, 1))


@error_case("REVERSE_V2/axis_out_of_range")
def _reverse_range():
    return _reverse_error("ValueError axis 3 is out of range for 3 dimensions", axes=(3,))


@error_case("REVERSE_V2/computed_axes_apart")
def _reverse_computed():
    return _reverse_error("RuntimeError axes that repeat or are not adjacent", axes=(0, 2), computed=[0, 2])


@error_case("REVERSE_V2/int64_axis")
def _reverse_int64():
    return _reverse_error("NotImplementedError axis of type int64 is not supported", axis_type="INT64")


@error_case("REVERSE_V2/no_axis")
def _reverse_none():
    return _reverse_error("ValueError axes must list 1 to 3 dimensions", axes=(), tflm=False,
                          why="TFLM reads the axis before its list")


# -- TILE (no TFLM kernel: TF Lite's definition, numpy's tile) ---------------------------

TILE_TYPES = ["FLOAT32", "INT8", "UINT8", "INT16", "INT32", "INT64", "BOOL"]


def _tile_model(dtype, in_shape, multiples, mult_type="INT32", computed=False, out_shape=None, q=None):
    mult = np.asarray(multiples, np.int64 if mult_type == "INT64" else np.int32)
    if out_shape is None:
        out_shape = tuple(int(d) * int(m) for d, m in zip(in_shape, multiples))
    return single_op("TILE", [(in_shape, dtype, None, q), ((len(multiples),), mult_type, None if computed else mult)],
                     [(out_shape, dtype, q)])[0]


def _tile(rng, dtype):
    rank = int(rng.integers(1, 7))
    in_shape = tuple(int(d) for d in rng.integers(1, 5 if rank <= 3 else 3, rank))
    multiples = [int(m) for m in rng.integers(1, 4 if rank <= 3 else 3, rank)]
    if rng.integers(0, 8) == 0:
        multiples[int(rng.integers(0, rank))] = 0  # an empty output
    mult_type = "INT64" if rng.integers(0, 4) == 0 else "INT32"
    computed = rng.integers(0, 4) == 0
    q = int_quant(rng, dtype)
    model = _tile_model(dtype, in_shape, multiples, mult_type, computed, q=q)
    mult = np.asarray(multiples, np.int64 if mult_type == "INT64" else np.int32)
    inputs = _copied_inputs(rng, dtype, in_shape, mult if computed else None)
    return Case("", model, dict(dtype=dtype, input=in_shape, multiples=multiples, mult_type=mult_type,
                                computed=computed), inputs=inputs,
                expected=lambda sample, m=tuple(multiples): [np.tile(sample[0], m)])


for _dt in TILE_TYPES:
    generator(f"TILE/{_dt.lower()}")(lambda rng, dt=_dt: _tile(rng, dt))


def _tile_error(error, shape=(2, 3), multiples=(2, 1), tflm=False, why="TFLM has no TILE kernel", **kw):
    model = _tile_model("FLOAT32", shape, multiples, **kw)
    inputs = [np.zeros(shape, np.float32)]
    if kw.get("computed"):
        inputs.append(np.asarray(multiples, np.int64 if kw.get("mult_type") == "INT64" else np.int32))
    return ErrorCase("", model, inputs, error, tflm=tflm, why=why)


@error_case("TILE/shape")
def _tile_shape():
    return _tile_error("ValueError multiples do not give the output's shape", out_shape=(4, 6))


@error_case("TILE/negative")
def _tile_negative():
    return _tile_error("ValueError multiples do not give the output's shape", multiples=(-1, 1), out_shape=(2, 3))


@error_case("TILE/computed_shape")
def _tile_computed():
    return _tile_error("RuntimeError multiples do not give the output's shape", computed=True, out_shape=(2, 6))


@error_case("TILE/count")
def _tile_count():
    model = single_op("TILE", [((2, 3), "FLOAT32"), ((3,), "INT32", np.asarray([1, 1, 1], np.int32))],
                      [((2, 3), "FLOAT32", None)])[0]
    return ErrorCase("", model, [np.zeros((2, 3), np.float32)],
                     "ValueError multiples must hold one value per dimension of input and output", tflm=False,
                     why="TFLM has no TILE kernel")


@error_case("TILE/seven_dims")
def _tile_rank():
    return _tile_error("NotImplementedError at most 6 dimensions supported", shape=(1,) * 7, multiples=(1,) * 7)


@error_case("TILE/float_multiples")
def _tile_float_multiples():
    model = single_op("TILE", [((2, 3), "FLOAT32"), ((2,), "FLOAT32", np.asarray([1, 1], np.float32))],
                      [((2, 3), "FLOAT32", None)])[0]
    return ErrorCase("", model, [np.zeros((2, 3), np.float32)],
                     "NotImplementedError multiples of type float32 is not supported", tflm=False,
                     why="TFLM has no TILE kernel")
