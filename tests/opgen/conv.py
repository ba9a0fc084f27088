"""CONV_2D and DEPTHWISE_CONV_2D models: float32, int8 (per-tensor and
per-channel filters, random input/output zero points), int16 activations with
int8 filters (int64 bias; int32 bias too for CONV_2D); random sizes, batches,
kernels, strides, dilation, both paddings, all fused activations, grouped
filters and optional bias (CONV_2D), depth multipliers (DEPTHWISE_CONV_2D,
always with a bias: TFLM's prepare() crashes without one)."""

from __future__ import annotations

import math

import numpy as np

from . import Case, act_quant, bias_data, generator, generators, random_data, single_op, weight_quant

ACTIVATIONS = ["NONE", "RELU", "RELU_N1_TO_1", "RELU6"]


def _out_size(padding: str, n: int, k: int, stride: int, dilation: int) -> int:
    eff = (k - 1) * dilation + 1
    return (n + stride - 1) // stride if padding == "SAME" else (n + stride - eff) // stride


def _window(rng: np.random.Generator) -> tuple[int, int, int]:
    """Kernel, stride, dilation along one dimension."""
    k = int(rng.integers(1, 6))
    stride = int(rng.integers(1, 4))
    dilation = int(rng.integers(1, 4)) if rng.integers(0, 2) else 1
    return k, stride, dilation


def _geometry(rng: np.random.Generator) -> dict:
    h, w = int(rng.integers(1, 13)), int(rng.integers(1, 13))
    kh, sh, dh = _window(rng)
    kw, sw, dw = _window(rng)
    padding = "SAME" if rng.integers(0, 2) else "VALID"
    if padding == "VALID":
        # VALID needs the dilated window to fit: shrink it until it does.
        while (kh - 1) * dh + 1 > h:
            if dh > 1:
                dh -= 1
            else:
                kh -= 1
        while (kw - 1) * dw + 1 > w:
            if dw > 1:
                dw -= 1
            else:
                kw -= 1
    return dict(h=h, w=w, kh=kh, kw=kw, sh=sh, sw=sw, dh=dh, dw=dw, padding=padding,
                oh=_out_size(padding, h, kh, sh, dh), ow=_out_size(padding, w, kw, sw, dw))


def _quant(rng, dtype, out_channels, per_channel, qdim, taps):
    """Input, filter and output quantization: filter scales chosen so the sums
    mostly land inside the output range, and the output scale so that fused
    activations (-1..1, 0..6) clamp at several distinct values."""
    qin = act_quant(rng, dtype)
    qout = act_quant(rng, dtype, (0.005, 0.2) if dtype == "INT8" else (0.0002, 0.004))
    spread = 74.0 if dtype == "INT8" else 18900.0   # std of uniform random inputs
    target = 40.0 if dtype == "INT8" else 8000.0    # wanted std of the outputs
    typical = qout[0][0] * target / (qin[0][0] * spread * 73.0 * math.sqrt(max(taps, 1)))
    qw = weight_quant(rng, out_channels, per_channel, qdim, (typical * 0.5, typical * 2.0))
    return qin, qw, qout


def _conv(rng: np.random.Generator, dtype: str, bias_type: str | None = None, int64_at_4_mod_8: bool = False) -> Case:
    g = _geometry(rng)
    batches = int(rng.integers(1, 4)) if rng.integers(0, 3) == 0 else 1
    in_d = int(rng.integers(1, 17))
    # Grouped filters sometimes: each filter sees in_d / groups input channels.
    divisors = [d for d in range(1, in_d + 1) if in_d % d == 0]
    groups = int(rng.choice(divisors)) if rng.integers(0, 3) == 0 else 1
    f_d = in_d // groups
    out_d = groups * int(rng.integers(1, max(2, 16 // groups + 1)))
    act = str(rng.choice(ACTIVATIONS))
    has_bias = int64_at_4_mod_8 or bool(rng.integers(0, 4))
    per_channel = dtype != "FLOAT32" and bool(rng.integers(0, 2))
    wtype = "FLOAT32" if dtype == "FLOAT32" else "INT8"
    btype = bias_type or {"FLOAT32": "FLOAT32", "INT8": "INT32", "INT16": "INT64"}[dtype]
    fshape = (out_d, g["kh"], g["kw"], f_d)
    if dtype == "FLOAT32":
        qin = qw = qb = qout = None
        weights = random_data(rng, wtype, fshape)
    else:
        qin, qw, qout = _quant(rng, dtype, out_d, per_channel, 0, g["kh"] * g["kw"] * f_d)
        qb = ([qin[0][0] * s for s in qw[0]], [0] * len(qw[0]), 0)
        weights = random_data(rng, wtype, fshape, -127, 127)
    inputs = [((batches, g["h"], g["w"], in_d), dtype, None, qin), (fshape, wtype, weights, qw),
              ((out_d,), btype, bias_data(rng, btype, out_d), qb) if has_bias else None]
    if not has_bias and rng.integers(0, 2):
        inputs = inputs[:2]  # two inputs rather than an omitted third
    model, _ = single_op("CONV_2D", inputs, [((batches, g["oh"], g["ow"], out_d), dtype, qout)],
                         int64_at_4_mod_8=int64_at_4_mod_8, Padding=g["padding"], StrideH=g["sh"], StrideW=g["sw"],
                         DilationHFactor=g["dh"], DilationWFactor=g["dw"], FusedActivationFunction=act)
    return Case("", model, dict(dtype=dtype, batches=batches, in_d=in_d, out_d=out_d, groups=groups, act=act,
                                bias=btype if has_bias else None, per_channel=per_channel, **g))


def _large_window(rng: np.random.Generator) -> dict:
    """A window of more than 25 taps (up to 10x8, as micro_speech's, or a
    row of more than 25 taps), on maps a few windows wide, SAME or VALID."""
    while True:
        g = _geometry(rng)
        kh, kw = int(rng.integers(4, 11)), int(rng.integers(5, 9))
        if rng.integers(0, 6) == 0:
            kh, kw = 1, int(rng.integers(26, 31))
        h, w = int(rng.integers(kh, kh + 12)), int(rng.integers(kw, kw + 10))
        if g["padding"] == "VALID":
            g.update(dh=1, dw=1)
        g.update(h=h, w=w, kh=kh, kw=kw, oh=_out_size(g["padding"], h, kh, g["sh"], g["dh"]),
                 ow=_out_size(g["padding"], w, kw, g["sw"], g["dw"]))
        if kh * kw > 25 and g["oh"] > 0 and g["ow"] > 0:
            return g


def _depthwise(rng: np.random.Generator, dtype: str, int64_at_4_mod_8: bool = False, narrow: bool = False,
               multipliers: bool = False) -> Case:
    g = _large_window(rng) if multipliers and rng.integers(0, 2) else _geometry(rng)
    if narrow:
        # Outputs a few pixels wide with many channels, one per input channel
        # (in several of the int8 kernel's chunks of channels).
        while g["ow"] > 4:
            g = _geometry(rng)
    batches = int(rng.integers(1, 4)) if rng.integers(0, 3) == 0 else 1
    in_d = int(rng.integers(17, 41)) if narrow else int(rng.integers(1, 17))
    mult = 1 if narrow else int(rng.choice([1, 1, 2, 3]))
    if multipliers:
        # Every depth multiplier the int8 kernel's paths tell apart (1, 2,
        # multiples of 4, others), over one or several chunks of channels.
        mult = int(rng.choice([1, 2, 4, 8, 3, 5, 12]))
        in_d = int(rng.integers(1, 7))
    out_d = in_d * mult
    act = str(rng.choice(ACTIVATIONS))
    per_channel = dtype != "FLOAT32" and bool(rng.integers(0, 2))
    wtype = "FLOAT32" if dtype == "FLOAT32" else "INT8"
    btype = {"FLOAT32": "FLOAT32", "INT8": "INT32", "INT16": "INT64"}[dtype]
    fshape = (1, g["kh"], g["kw"], out_d)
    if dtype == "FLOAT32":
        qin = qw = qb = qout = None
        weights = random_data(rng, wtype, fshape)
    else:
        qin, qw, qout = _quant(rng, dtype, out_d, per_channel, 3, g["kh"] * g["kw"])
        qb = ([qin[0][0] * s for s in qw[0]], [0] * len(qw[0]), 0)
        weights = random_data(rng, wtype, fshape, -127, 127)
    # Always with a bias: TFLM's DEPTHWISE_CONV_2D prepare() crashes without
    # one (it frees the missing tensor).
    inputs = [((batches, g["h"], g["w"], in_d), dtype, None, qin), (fshape, wtype, weights, qw),
              ((out_d,), btype, bias_data(rng, btype, out_d), qb)]
    model, _ = single_op("DEPTHWISE_CONV_2D", inputs, [((batches, g["oh"], g["ow"], out_d), dtype, qout)],
                         int64_at_4_mod_8=int64_at_4_mod_8, Padding=g["padding"], StrideH=g["sh"], StrideW=g["sw"],
                         DilationHFactor=g["dh"], DilationWFactor=g["dw"], DepthMultiplier=mult,
                         FusedActivationFunction=act)
    return Case("", model, dict(dtype=dtype, batches=batches, in_d=in_d, multiplier=mult, act=act,
                                per_channel=per_channel, **g))


generators(_conv, {"CONV_2D/float32": ("FLOAT32",),
                   "CONV_2D/int8": ("INT8",),
                   "CONV_2D/int16": ("INT16",),
                   "CONV_2D/int16_bias32": ("INT16", "INT32",)})


@generator("CONV_2D/int16_bias64_4_mod_8")
def conv_int16_bias64_misaligned(rng):
    """int64 bias at 4 modulo 8, as older converters wrote it."""
    return _conv(rng, "INT16", int64_at_4_mod_8=True)


generators(_depthwise, {"DEPTHWISE_CONV_2D/float32": ("FLOAT32",),
                        "DEPTHWISE_CONV_2D/int8": ("INT8",),
                        "DEPTHWISE_CONV_2D/int8_narrow": ("INT8", False, True),
                        "DEPTHWISE_CONV_2D/int8_multipliers": ("INT8", False, False, True),
                        "DEPTHWISE_CONV_2D/int16": ("INT16",)})


@generator("DEPTHWISE_CONV_2D/int16_bias64_4_mod_8")
def depthwise_int16_bias64_misaligned(rng):
    """int64 bias at 4 modulo 8, as older converters wrote it."""
    return _depthwise(rng, "INT16", int64_at_4_mod_8=True)


@generator("CONV_2D/int8_lanes")
def conv_int8_lanes(rng):
    """int8 convolutions at the edges of the sums that hold two pixels in one
    64-bit multiply-accumulate (kernels/mm_s8.h, Cortex-M4) or in one 32-bit
    multiply (Cortex-M3): pointwise layers of 1 to 258 input channels (four
    pixels a pass up to 128, two up to 256) and 3x3 windows (two gathered
    pixels), filters of +-127 or -128 throughout (their absolute values
    adding up to just under, or at, 2^15: then the plain sums; two values
    of -128 against inputs of -128 take the M3's low half to its edge), and
    inputs all -128 or all 127 as well as random, the output scale spanning
    the largest sum so a wrong lane shows."""
    pointwise = bool(rng.integers(0, 3))
    in_d = int(rng.choice([1, 3, 4, 7, 8, 64, 127, 128, 129, 200, 255, 256, 257, 258])) if pointwise \
        else int(rng.integers(1, 15))
    k = 1 if pointwise else 3
    h, w = int(rng.integers(1, 8)), int(rng.integers(1, 8))
    out_d = int(rng.integers(1, 10))
    fshape = (out_d, k, k, in_d)
    mode = int(rng.integers(0, 3))
    if mode == 0:
        weights = random_data(rng, "INT8", fshape, -128, 127)
    else:
        # Each filter all one value: +-127, or -128 (with mode 2). A
        # pointwise filter of 256 values of -128 meets all -128 inputs at
        # exactly 2^22, one past the lanes' range: the layer sums plainly;
        # fewer values of -128 sum in lanes.
        if mode == 2 and pointwise and rng.integers(0, 2):
            in_d = 256
            fshape = (out_d, k, k, in_d)
        values = rng.choice([-128, -127, 127] if mode == 2 else [-127, 127], out_d)
        if mode == 2:
            values[0] = -128
        weights = np.broadcast_to(values.reshape(out_d, 1, 1, 1), fshape).astype(np.int8).copy()
    qin = ([0.05], [0])
    per_channel = bool(rng.integers(0, 2))
    qw = weight_quant(rng, out_d, per_channel, 0, (0.004, 0.006))
    largest = 128.0 * float(np.abs(weights.astype(np.int64)).reshape(out_d, -1).sum(axis=1).max())
    # The largest sum near the output's edge, the smallest steps still seen.
    qout = ([float(np.float32(qin[0][0] * max(qw[0]) * max(largest, 1.0) / 120.0))], [0])
    qb = ([qin[0][0] * s for s in qw[0]], [0] * len(qw[0]), 0)
    inputs = [((1, h, w, in_d), "INT8", None, qin), (fshape, "INT8", weights, qw),
              ((out_d,), "INT32", bias_data(rng, "INT32", out_d), qb)]
    model, _ = single_op("CONV_2D", inputs, [((1, h, w, out_d), "INT8", qout)], Padding="SAME", StrideH=1,
                         StrideW=1, DilationHFactor=1, DilationWFactor=1, FusedActivationFunction="NONE")
    sets = [[np.full((1, h, w, in_d), v, np.int8)] for v in (-128, 127)]
    sets.append([random_data(rng, "INT8", (1, h, w, in_d))])
    return Case("", model, dict(in_d=in_d, out_d=out_d, k=k, h=h, w=w, mode=mode, per_channel=per_channel), sets)


@generator("CONV_2D/int8_large_window")
def conv_int8_large_window(rng):
    """int8 convolutions whose windows hold more than 128 values (3x3 over
    15 to 64 channels, 5x5 over 6 to 24, 3x3 over up to 170, 1x7 and 7x1),
    mostly SAME-padded on small maps, so that most pixels' windows leave the
    input: those gathered a slab at a time (kernels/conv_s8.c). Strides 1
    to 3, dilation sometimes, odd channel counts, one or more chunks of 32
    output channels, per-channel or per-tensor scales, batches."""
    kh, kw, in_d = [(3, 3, int(rng.integers(15, 65))), (5, 5, int(rng.integers(6, 25))),
                    (3, 3, int(rng.integers(100, 171))), (1, 7, int(rng.integers(19, 40))),
                    (7, 1, int(rng.integers(19, 40)))][int(rng.integers(0, 5))]
    stride = int(rng.choice([1, 1, 2, 3]))
    dil = int(rng.choice([1, 1, 1, 2]))
    padding = "SAME" if rng.integers(0, 4) else "VALID"
    # VALID: at least the dilated window.
    low_h, low_w = ((kh - 1) * dil + 1, (kw - 1) * dil + 1) if padding == "VALID" else (1, 1)
    h, w = int(rng.integers(low_h, max(low_h, 9) + 1)), int(rng.integers(low_w, max(low_w, 9) + 1))
    batches = int(rng.integers(1, 3)) if rng.integers(0, 4) == 0 else 1
    out_d = int(rng.choice([1, 2, 5, 16, 31, 33, 48, 70]))
    per_channel = bool(rng.integers(0, 2))
    act = str(rng.choice(ACTIVATIONS))
    oh, ow = _out_size(padding, h, kh, stride, dil), _out_size(padding, w, kw, stride, dil)
    fshape = (out_d, kh, kw, in_d)
    qin, qw, qout = _quant(rng, "INT8", out_d, per_channel, 0, kh * kw * in_d)
    qb = ([qin[0][0] * s for s in qw[0]], [0] * len(qw[0]), 0)
    weights = random_data(rng, "INT8", fshape, -127, 127)
    inputs = [((batches, h, w, in_d), "INT8", None, qin), (fshape, "INT8", weights, qw),
              ((out_d,), "INT32", bias_data(rng, "INT32", out_d), qb)]
    model, _ = single_op("CONV_2D", inputs, [((batches, oh, ow, out_d), "INT8", qout)], Padding=padding,
                         StrideH=stride, StrideW=stride, DilationHFactor=dil, DilationWFactor=dil,
                         FusedActivationFunction=act)
    return Case("", model, dict(h=h, w=w, in_d=in_d, out_d=out_d, kh=kh, kw=kw, stride=stride, dil=dil,
                                padding=padding, batches=batches, per_channel=per_channel, act=act))
