"""BATCH_MATMUL models: float32, int8 and int16, operands of 2 to 5
dimensions whose batch dimensions broadcast, adj_x / adj_y, a constant
right operand (as converters emit for dense layers of transformer blocks,
asymmetric or per-channel int8 among them) or both computed (attention),
odd and even sizes for the kernel's two-by-two blocks."""

from __future__ import annotations

import numpy as np

from . import Case, ErrorCase, act_quant, error_case, generator, random_data, single_op

QMAX = {"INT8": 127, "INT16": 32767}


def _batch_dims(rng, n):
    return [int(rng.choice([1, 1, 2, 3])) for _ in range(n)]


def _shapes(rng):
    """Batch dimensions of both operands (broadcasting) and of the output."""
    lb = int(rng.integers(0, 4))
    rb = int(rng.integers(0, 4))
    out = _batch_dims(rng, max(lb, rb))
    lhs = [d if rng.integers(0, 3) else 1 for d in out[len(out) - lb:]]
    rhs = [d if rng.integers(0, 3) else 1 for d in out[len(out) - rb:]]
    # Broadcast back: a dimension both operands set to 1 is 1 in the output.
    full_l = [1] * (len(out) - lb) + lhs
    full_r = [1] * (len(out) - rb) + rhs
    out = [max(a, b) for a, b in zip(full_l, full_r)]
    return lhs, rhs, out


def _quant(rng, dtype, depth, lhs_q, rhs_q):
    """Output quantization giving outputs spread over the type's range."""
    spread = {"INT8": 70.0, "INT16": 16000.0}[dtype]
    typical = lhs_q[0][0] * rhs_q[0][0] * spread * spread * np.sqrt(depth)
    scale = float(np.float32(typical / (QMAX[dtype] / 2) * rng.uniform(0.3, 3.0)))
    if dtype == "INT16":
        return [scale], [0]
    return [scale], [int(rng.integers(-20, 21))]


def _batch_matmul(rng, dtype):
    lb, rb, ob = _shapes(rng)
    m, k, n = (int(v) for v in rng.integers(1, 9, 3))
    adj_x, adj_y = bool(rng.integers(0, 2)), bool(rng.integers(0, 2))
    lhs_shape = tuple(lb + ([k, m] if adj_x else [m, k]))
    rhs_shape = tuple(rb + ([n, k] if adj_y else [k, n]))
    out_shape = tuple(ob + [m, n])
    if rng.integers(0, 6) == 0:
        out_shape = (1,) + out_shape  # TFLM takes more dimensions of the same size
    rhs_const = bool(rng.integers(0, 2))
    lhs_const = not rhs_const and rng.integers(0, 6) == 0
    per_channel = False
    if dtype == "FLOAT32":
        lq = rq = oq = None
    else:
        lq = act_quant(rng, dtype)
        rq = act_quant(rng, dtype)
        if rhs_const and dtype == "INT8" and rng.integers(0, 3) == 0:
            # Per-channel weights: TFLM uses the first scale and zero point.
            per_channel = True
            scales = [float(np.float32(s)) for s in rng.uniform(0.005, 0.05, n)]
            rq = (scales, [0] * n, len(rhs_shape) - (2 if adj_y else 1))
        oq = _quant(rng, dtype, k, lq, rq)
        if rng.integers(0, 8) == 0:
            oq = ([float(np.float32(oq[0][0] / 2000))], oq[1])  # a multiplier above 1: saturates
    lhs_data = random_data(rng, dtype, lhs_shape) if lhs_const else None
    rhs_data = random_data(rng, dtype, rhs_shape) if rhs_const else None
    model, _ = single_op("BATCH_MATMUL", [(lhs_shape, dtype, lhs_data, lq), (rhs_shape, dtype, rhs_data, rq)],
                         [(out_shape, dtype, oq)], AdjX=adj_x, AdjY=adj_y)
    inputs = None
    if dtype != "FLOAT32" and rng.integers(0, 3) == 0:
        # The type's limits: the widest products and sums.
        info = np.iinfo(np.int8 if dtype == "INT8" else np.int16)
        inputs = []
        for _ in range(3):
            sample = []
            for shape, const in ((lhs_shape, lhs_const), (rhs_shape, rhs_const)):
                if not const:
                    sample.append(rng.choice(np.asarray([info.min, info.max], dtype=info.dtype), shape))
            inputs.append(sample)
    return Case("", model, dict(dtype=dtype, lhs=lhs_shape, rhs=rhs_shape, out=out_shape, adj_x=adj_x, adj_y=adj_y,
                                lhs_const=lhs_const, rhs_const=rhs_const, per_channel=per_channel, quant=(lq, rq, oq)),
                inputs=inputs)


for _dt in ("FLOAT32", "INT8", "INT16"):
    generator(f"BATCH_MATMUL/{_dt.lower()}")(lambda rng, dt=_dt: _batch_matmul(rng, dt))


# -- what TFLM refuses ------------------------------------------------------------------

Q8, Q16 = ([0.1], [3]), ([0.1], [0])
NP = {"FLOAT32": np.float32, "INT8": np.int8, "INT16": np.int16, "INT32": np.int32}


def _bmm(lhs=(2, 3), rhs=(3, 4), out=(2, 4), dtype="FLOAT32", rtype=None, q=None, rq=None, **opts):
    model, _ = single_op("BATCH_MATMUL", [(lhs, dtype, None, q), (rhs, rtype or dtype, None, rq or q)],
                         [(out, dtype, q)], **opts)
    return model, [np.zeros(lhs, NP[dtype]), np.zeros(rhs, NP[rtype or dtype])]


def _bmm_error(error, **kw):
    model, inputs = _bmm(**kw)
    return ErrorCase("", model, inputs, error)


@error_case("BATCH_MATMUL/int32")
def _int32():
    return _bmm_error("NotImplementedError input of type int32 is not supported", dtype="INT32")


@error_case("BATCH_MATMUL/int8_by_int16")
def _mixed():
    return _bmm_error("NotImplementedError int8 x int16 to int8 is not supported", dtype="INT8", rtype="INT16",
                      q=Q8, rq=Q16)


@error_case("BATCH_MATMUL/rank_6")
def _rank6():
    return _bmm_error("NotImplementedError operands of 6 and 2 dimensions are not supported",
                      lhs=(1, 1, 1, 1, 2, 3), out=(1, 1, 1, 1, 2, 4))


@error_case("BATCH_MATMUL/int16_zero_point")
def _int16_zp():
    return _bmm_error("ValueError int16 zero points must be 0", dtype="INT16", q=([0.1], [2]))


@error_case("BATCH_MATMUL/depths_differ")
def _depths():
    return _bmm_error("ValueError operands multiply 3 by 4 values", rhs=(4, 4))


@error_case("BATCH_MATMUL/batches_do_not_broadcast")
def _batches():
    return _bmm_error("ValueError batch dimensions 2 and 3 do not broadcast", lhs=(2, 2, 3), rhs=(3, 3, 4),
                      out=(3, 2, 4))


@error_case("BATCH_MATMUL/output_size")
def _out_size():
    return _bmm_error("ValueError output holds 10 values, the product 8", out=(2, 5))
