"""Ops that read or write at indices given as data: GATHER_ND, EMBEDDING_LOOKUP
and DYNAMIC_UPDATE_SLICE, in every type TFLM's kernels take, indices constant
or model inputs. GATHER_ND index tuples whose parts leave their dimensions
while the flat position stays inside params (TFLM checks only that);
DYNAMIC_UPDATE_SLICE starts before, inside and beyond the operand (clamped),
int32 and int64, up to the int limits. The error cases: what TFLM refuses,
and indices outside a tensor."""

from __future__ import annotations

import numpy as np

from . import Case, ErrorCase, act_quant, error_case, generator, int_quant, random_data, random_shape, single_op

NP = {"INT32": np.int32, "INT64": np.int64}


# -- GATHER_ND ---------------------------------------------------------------------

def _gnd_tuple(rng, params_shape, nd):
    """An index tuple of a random slice: now and then spelled with parts
    outside their dimensions that give the same flat position."""
    idx = [int(rng.integers(0, params_shape[j])) for j in range(nd)]
    for _ in range(int(rng.integers(0, 3)) if nd > 1 else 0):
        j = int(rng.integers(1, nd))
        k = int(rng.integers(-2, 3))
        idx[j] += k * params_shape[j]
        idx[j - 1] -= k
    return idx


def _gather_nd(rng, dtype):
    params_shape = random_shape(rng, 1, 4)
    # Tuples of no values (whole params per slice) now and then.
    nd = 0 if rng.random() < 0.1 else int(rng.integers(1, min(len(params_shape), 5) + 1))
    batch = random_shape(rng, 0, 2, 4)
    idx_shape = batch + (nd,)
    out_shape = batch + params_shape[nd:]
    q = int_quant(rng, dtype)
    const = nd > 0 and rng.random() < 0.3

    def indices(r):
        n = int(np.prod(batch, dtype=np.int64))
        return np.array([_gnd_tuple(r, params_shape, nd) for _ in range(n)], np.int32).reshape(idx_shape)

    idx_t = (idx_shape, "INT32", indices(rng)) if const or nd == 0 else (idx_shape, "INT32")
    model, _ = single_op("GATHER_ND", [(params_shape, dtype, None, q), idx_t], [(out_shape, dtype, q)])
    rs = np.random.default_rng(int(rng.integers(1 << 30)))
    sets = []
    for _ in range(3):
        x = random_data(rs, dtype, params_shape)
        sets.append([x] if len(idx_t) == 3 else [x, indices(rs)])
    return Case("", model, dict(dtype=dtype, params=params_shape, indices=idx_shape, const=len(idx_t) == 3),
                inputs=sets)


for _dt in ("FLOAT32", "INT8"):
    generator(f"GATHER_ND/{_dt.lower()}")(lambda rng, dt=_dt: _gather_nd(rng, dt))


def _gnd_model(dtype="FLOAT32", idx_type="INT32", out_shape=(2,)):
    q = int_quant(np.random.default_rng(0), dtype)
    model, _ = single_op("GATHER_ND", [((3, 4), dtype, None, q), ((2, 2), idx_type)], [(out_shape, dtype, q)])
    return model


@error_case("GATHER_ND/out_of_bounds")
def _gnd_oob():
    # [2, 4] is flat position 12 of 12 values.
    return ErrorCase("", _gnd_model(), [np.zeros((3, 4), np.float32), np.array([[0, 5], [2, 4]], np.int32)],
                     "RuntimeError index tuple 1 is out of bounds")


@error_case("GATHER_ND/negative")
def _gnd_negative():
    return ErrorCase("", _gnd_model("INT8"), [np.zeros((3, 4), np.int8), np.array([[0, -1], [0, 0]], np.int32)],
                     "RuntimeError index tuple 0 is out of bounds")


@error_case("GATHER_ND/wrapping")
def _gnd_wrapping():
    # 2^30 * 4 wraps to 0 in TFLM's int arithmetic, as here: in bounds, then 2^30 + 12 is not.
    return ErrorCase("", _gnd_model(), [np.zeros((3, 4), np.float32),
                                        np.array([[1 << 30, 2], [1 << 30, 12]], np.int32)],
                     "RuntimeError index tuple 1 is out of bounds")


@error_case("GATHER_ND/int16")
def _gnd_int16():
    return ErrorCase("", _gnd_model("INT16"), [np.zeros((3, 4), np.int16), np.zeros((2, 2), np.int32)],
                     "NotImplementedError params of type int16")


@error_case("GATHER_ND/int64_indices")
def _gnd_int64():
    return ErrorCase("", _gnd_model(idx_type="INT64"), [np.zeros((3, 4), np.float32), np.zeros((2, 2), np.int64)],
                     "NotImplementedError indices of type int64")


@error_case("GATHER_ND/small_output")
def _gnd_small():
    model, _ = single_op("GATHER_ND", [((3, 4), "FLOAT32"), ((2, 1), "INT32")], [((2, 3), "FLOAT32", None)])
    return ErrorCase("", model, [np.zeros((3, 4), np.float32), np.zeros((2, 1), np.int32)],
                     "ValueError the output holds 6 values, gather_nd gives 8", tflm=False,
                     why="TFLM writes the 8 gathered values into the output's 6")


# -- EMBEDDING_LOOKUP ----------------------------------------------------------------

def _embedding(rng, kind):
    """kind: float32, int8 (rows copied) or hybrid (int8 rows, float32 out)."""
    rows = int(rng.integers(1, 9))
    rest = random_shape(rng, 1, 3, 4, 60)
    table_shape = (rows,) + rest
    vtype = "FLOAT32" if kind == "float32" else "INT8"
    otype = "INT8" if kind == "int8" else "FLOAT32"
    q = None
    if kind == "int8":
        q = act_quant(rng, "INT8")
    elif kind == "hybrid":
        # Symmetric weights; per channel now and then (TFLM uses the first scale).
        n = rows if rng.random() < 0.3 else 1
        q = ([float(np.float32(s)) for s in rng.uniform(0.001, 0.5, n)], [0] * n, 0)
    n = int(rng.integers(1, 7))
    table = random_data(rng, vtype, table_shape)
    const_table = rng.random() < 0.75
    const_lookup = rng.random() < 0.25
    lookup = rng.integers(0, rows, n).astype(np.int32)
    inputs = [((n,), "INT32", lookup if const_lookup else None),
              (table_shape, vtype, table if const_table else None, q)]
    model, _ = single_op("EMBEDDING_LOOKUP", inputs, [((n,) + rest, otype, q if kind == "int8" else None)])
    rs = np.random.default_rng(int(rng.integers(1 << 30)))
    sets = []
    for _ in range(3):
        s = []
        if not const_lookup:
            s.append(rs.integers(0, rows, n).astype(np.int32))
        if not const_table:
            s.append(random_data(rs, vtype, table_shape))
        sets.append(s)
    return Case("", model, dict(kind=kind, table=table_shape, lookups=n, const_table=const_table,
                                const_lookup=const_lookup, quant=q), inputs=sets)


for _k in ("float32", "int8", "hybrid"):
    generator(f"EMBEDDING_LOOKUP/{_k}")(lambda rng, k=_k: _embedding(rng, k))


def _emb_model(vtype="FLOAT32", otype="FLOAT32", q=None, lookup_shape=(2,)):
    table = random_data(np.random.default_rng(1), vtype, (3, 4))
    model, _ = single_op("EMBEDDING_LOOKUP", [(lookup_shape, "INT32"), ((3, 4), vtype, table, q)],
                         [(lookup_shape[:1] + (4,), otype, None)])
    return model


@error_case("EMBEDDING_LOOKUP/row_out_of_range")
def _emb_range():
    return ErrorCase("", _emb_model(), [np.array([1, 3], np.int32)], "RuntimeError row 3 is out of range [0, 3)")


@error_case("EMBEDDING_LOOKUP/negative_row")
def _emb_negative():
    return ErrorCase("", _emb_model("INT8", "FLOAT32", ([0.5], [0])), [np.array([-1, 0], np.int32)],
                     "RuntimeError row -1 is out of range [0, 3)")


@error_case("EMBEDDING_LOOKUP/hybrid_zero_point")
def _emb_zp():
    return ErrorCase("", _emb_model("INT8", "FLOAT32", ([0.5], [3])), [np.array([0, 1], np.int32)],
                     "ValueError an int8 table read as float32 needs zero point 0, not 3")


@error_case("EMBEDDING_LOOKUP/float_to_int8")
def _emb_float_int8():
    return ErrorCase("", _emb_model("FLOAT32", "INT8"), [np.array([0, 1], np.int32)],
                     "NotImplementedError a float32 table with a int8 output")


# -- DYNAMIC_UPDATE_SLICE ------------------------------------------------------------

def _dus_start(rng, dim, udim, itype):
    """In range, before the start, beyond the end, or at the type's limits."""
    pick = rng.random()
    if pick < 0.5:
        return int(rng.integers(0, dim - udim + 1))
    if pick < 0.7:
        return -int(rng.integers(1, 4))
    if pick < 0.9:
        return dim - udim + int(rng.integers(1, 4))
    info = np.iinfo(NP[itype])
    return int(rng.choice([info.min, info.max]))


def _dus(rng, dtype):
    shape = random_shape(rng, 1, 5, 5, 300)
    kind = rng.random()
    if kind < 0.1:
        update = shape  # the whole operand
    else:
        update = tuple(int(rng.integers(1, d + 1)) for d in shape)
    itype = "INT64" if rng.random() < 0.4 else "INT32"
    const = rng.random() < 0.3
    q = int_quant(rng, dtype)
    starts = np.array([_dus_start(rng, d, u, itype) for d, u in zip(shape, update)], NP[itype])
    idx_t = ((len(shape),), itype, starts) if const else ((len(shape),), itype)
    model, _ = single_op("DYNAMIC_UPDATE_SLICE", [(shape, dtype, None, q), (update, dtype, None, q), idx_t],
                         [(shape, dtype, q)])
    rs = np.random.default_rng(int(rng.integers(1 << 30)))
    sets = []
    for _ in range(3):
        s = [random_data(rs, dtype, shape), random_data(rs, dtype, update)]
        if not const:
            s.append(np.array([_dus_start(rs, d, u, itype) for d, u in zip(shape, update)], NP[itype]))
        sets.append(s)
    return Case("", model, dict(dtype=dtype, operand=shape, update=update, index_type=itype, const=const),
                inputs=sets)


for _dt in ("FLOAT32", "INT8", "INT16", "INT32"):
    generator(f"DYNAMIC_UPDATE_SLICE/{_dt.lower()}")(lambda rng, dt=_dt: _dus(rng, dt))


def _dus_model(dtype="FLOAT32", update=(1, 2), itype="INT32"):
    model, _ = single_op("DYNAMIC_UPDATE_SLICE", [((3, 4), dtype), (update, dtype), ((2,), itype)],
                         [((3, 4), dtype, None)])
    return model


@error_case("DYNAMIC_UPDATE_SLICE/int64_operand")
def _dus_int64():
    return ErrorCase("", _dus_model("INT64"), [np.zeros((3, 4), np.int64), np.zeros((1, 2), np.int64),
                                               np.zeros(2, np.int32)], "NotImplementedError operand of type int64")


@error_case("DYNAMIC_UPDATE_SLICE/int16_indices")
def _dus_int16_idx():
    return ErrorCase("", _dus_model(itype="INT16"), [np.zeros((3, 4), np.float32), np.zeros((1, 2), np.float32),
                                                     np.zeros(2, np.int16)],
                     "NotImplementedError start indices of type int16")


@error_case("DYNAMIC_UPDATE_SLICE/update_too_large")
def _dus_large():
    return ErrorCase("", _dus_model(update=(4, 1)), [np.zeros((3, 4), np.float32), np.zeros((4, 1), np.float32),
                                                     np.zeros(2, np.int32)],
                     "ValueError the update is larger than the operand in dimension 0")


@error_case("EMBEDDING_LOOKUP/output_rank")
def _emb_rank():
    table = random_data(np.random.default_rng(1), "FLOAT32", (3, 2, 2))
    model, _ = single_op("EMBEDDING_LOOKUP", [((2,), "INT32"), ((3, 2, 2), "FLOAT32", table)],
                         [((2, 4), "FLOAT32", None)])
    return ErrorCase("", model, [np.array([0, 1], np.int32)], "ValueError the lookup must be 1-D")
