"""QUANTIZE (float32 to integer, and requantizing between integer types) and
DEQUANTIZE models."""

from __future__ import annotations

from . import Case, act_quant, generator, single_op


def _shape(rng):
    return tuple(int(d) for d in rng.integers(1, 6, int(rng.integers(1, 5))))


@generator("QUANTIZE/float32")
def quantize_float(rng):
    out = str(rng.choice(["INT8", "INT16"]))  # what TFLM quantizes float32 to
    shape = _shape(rng)
    q = act_quant(rng, out)
    model, _ = single_op("QUANTIZE", [(shape, "FLOAT32")], [(shape, out, q)])
    return Case("", model, dict(out=out, shape=shape, quant=q))


@generator("QUANTIZE/requantize")
def requantize(rng):
    pairs = [("INT8", "INT8"), ("INT16", "INT8"), ("INT8", "INT16"), ("INT16", "INT16"), ("INT8", "INT32"),
             ("INT16", "INT32"), ("UINT8", "INT8"), ("INT8", "UINT8")]
    src, dst = pairs[int(rng.integers(0, len(pairs)))]
    shape = _shape(rng)

    def q(t):
        if t == "UINT8":
            return [float(rng.uniform(0.005, 0.2))], [int(rng.integers(10, 245))]
        if t == "INT32":
            return [float(rng.uniform(0.0001, 0.01))], [0]
        return act_quant(rng, t)

    qs, qd = q(src), q(dst)
    model, _ = single_op("QUANTIZE", [(shape, src, None, qs)], [(shape, dst, qd)])
    return Case("", model, dict(src=src, dst=dst, shape=shape, qin=qs, qout=qd))


@generator("DEQUANTIZE/int")
def dequantize(rng):
    src = str(rng.choice(["INT8", "INT16", "UINT8"]))
    shape = _shape(rng)
    q = act_quant(rng, src) if src != "UINT8" else ([float(rng.uniform(0.005, 0.2))], [int(rng.integers(10, 245))])
    model, _ = single_op("DEQUANTIZE", [(shape, src, None, q)], [(shape, "FLOAT32", None)])
    return Case("", model, dict(src=src, shape=shape, quant=q))
