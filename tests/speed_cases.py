"""One-op models shaped like the cases the fast int8 kernels special-case
(kernels/conv_s8.c, depthwise_conv_s8.c, fully_connected.c,
batch_matmul.c): pointwise
convolutions with channel counts on and off the 2x2 block, small windows
gathered on the stack, 3x3 depthwise windows with stride 1 and 2 at every
edge, odd widths, depth multipliers, per-channel and per-tensor scales,
every fused activation, and requantization shifts outside the fast range
(left shifts, no shift, more than 24 bits right), and the largest sums of
two pixels summed in one 64-bit multiply-accumulate. Deterministic: the
same list every run."""

from __future__ import annotations

import itertools
import math

import numpy as np

import opgen
from opgen import Case, act_quant, bias_data, random_data, single_op

ACTIVATIONS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]


def _out(padding: str, n: int, k: int, stride: int, dil: int = 1) -> int:
    eff = (k - 1) * dil + 1
    return (n + stride - 1) // stride if padding == "SAME" else (n + stride - eff) // stride


def _scales(rng, n: int, per_channel: bool, typical: float, extreme: bool | str) -> list[float]:
    """Filter scales around `typical`; `extreme` spreads them so that some
    channels' multipliers shift left or by more than 24 bits; "wide" only
    right, by 25 to 31 bits or so far that the multiplier is 0, beside
    typical ones (out_s8.h's wide form); "wide_last" the last channel only."""
    count = n if per_channel else 1
    s = rng.uniform(typical * 0.5, typical * 2.0, count)
    if extreme == "wide_last":
        # Only the last channel's shift in the wide form: a chunk of them
        # all takes that form, every other channel's output still varied.
        s[-1] *= 1e-6
    elif extreme:
        factors = [1.0, 1e-6, 2e-7, 1e-9] if extreme == "wide" else [1e-9, 1e-6, 3e-4, 1.0, 40.0, 300.0]
        s = s * np.array([factors[i % len(factors)] for i in range(count)])
    return [float(np.float32(v)) for v in s]


def _conv_case(rng, name: str, *, h: int, w: int, in_d: int, out_d: int, kh: int, kw: int, stride: int,
               padding: str, dil: int = 1, groups: int = 1, batches: int = 1, per_channel: bool, act: str,
               depthwise: bool = False, mult: int = 1, extreme: bool | str = False, bias: bool = True,
               big_bias: bool = False) -> Case:
    oh, ow = _out(padding, h, kh, stride, dil), _out(padding, w, kw, stride, dil)
    qin = act_quant(rng, "INT8")
    qout = act_quant(rng, "INT8")
    if depthwise:
        out_d = in_d * mult
        taps = kh * kw
        fshape, qdim = (1, kh, kw, out_d), 3
    else:
        taps = kh * kw * in_d // groups
        fshape, qdim = (out_d, kh, kw, in_d // groups), 0
    typical = qout[0][0] * 40.0 / (qin[0][0] * 74.0 * 73.0 * math.sqrt(taps))
    scales = _scales(rng, out_d, per_channel, typical, extreme)
    qw = (scales, [0] * len(scales), qdim)
    weights = random_data(rng, "INT8", fshape, -127, 127)
    qb = ([qin[0][0] * s for s in scales], [0] * len(scales), 0)
    biases = bias_data(rng, "INT32", out_d)
    if big_bias:
        # Every third channel's bias at or past the bound of the DSP cores'
        # SMMLAR output stage (out_s8.h: 2^29), as trained layers have
        # (vww_96_int8: 2^30).
        edges = [1 << 30, -(1 << 30), (1 << 29) - 1, -(1 << 29) + 1, 1 << 29, -(1 << 29), 3 << 29]
        for i in range(0, out_d, 3):
            biases[i] = edges[(i // 3) % len(edges)]
    inputs = [((batches, h, w, in_d), "INT8", None, qin), (fshape, "INT8", weights, qw),
              ((out_d,), "INT32", biases, qb) if bias or depthwise else None]
    options = dict(Padding=padding, StrideH=stride, StrideW=stride, DilationHFactor=dil, DilationWFactor=dil,
                   FusedActivationFunction=act)
    if depthwise:
        options["DepthMultiplier"] = mult
    op = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
    model, _ = single_op(op, inputs, [((batches, oh, ow, out_d), "INT8", qout)], **options)
    params = dict(h=h, w=w, in_d=in_d, out_d=out_d, kh=kh, kw=kw, stride=stride, padding=padding, dil=dil,
                  groups=groups, batches=batches, per_channel=per_channel, act=act, mult=mult, extreme=extreme,
                  big_bias=big_bias)
    return Case(f"{op}/{name}", model, params)


def _fc_case(rng, name: str, *, batches: int, depth: int, units: int, per_channel: bool, act: str,
             extreme: bool = False, bias: bool = True) -> Case:
    qin, qout = act_quant(rng, "INT8"), act_quant(rng, "INT8")
    typical = qout[0][0] * 40.0 / (qin[0][0] * 74.0 * 73.0 * math.sqrt(depth))
    scales = _scales(rng, units, per_channel, typical, extreme)
    qw = (scales, [0] * len(scales), 0)
    qb = ([qin[0][0] * s for s in scales], [0] * len(scales), 0)
    weights = random_data(rng, "INT8", (units, depth), -127, 127)
    inputs = [((batches, depth), "INT8", None, qin), ((units, depth), "INT8", weights, qw),
              ((units,), "INT32", bias_data(rng, "INT32", units), qb) if bias else None]
    model, _ = single_op("FULLY_CONNECTED", inputs, [((batches, units), "INT8", qout)],
                         FusedActivationFunction=act)
    return Case(f"FULLY_CONNECTED/{name}", model, dict(batches=batches, depth=depth, units=units,
                                                      per_channel=per_channel, act=act, extreme=extreme))


def _unit_case(rng, name: str, *, h: int, w: int, in_d: int, out_d: int, kh: int) -> Case:
    """A convolution whose output is its sum itself: the output scale is the
    input's times the filter's (a multiplier of 1), weights of -1, 0 and 1
    against inputs of -3 to 3 (zero point 1) keep every sum within int8, so
    a sum off by one shows in the output (the Cortex-M3's packed pairs:
    their decoding and an odd last value)."""
    qin, sw = ([0.05], [1]), float(np.float32(0.01))
    qw = ([sw], [0], 0)
    qout = ([float(np.float32(qin[0][0] * sw))], [0])
    weights = rng.integers(-1, 2, (out_d, kh, kh, in_d)).astype(np.int8)
    biases = rng.integers(-20, 21, out_d).astype(np.int32)
    inputs = [((1, h, w, in_d), "INT8", None, qin), ((out_d, kh, kh, in_d), "INT8", weights, qw),
              ((out_d,), "INT32", biases, ([qin[0][0] * sw], [0], 0))]
    model, _ = single_op("CONV_2D", inputs, [((1, h, w, out_d), "INT8", qout)], Padding="SAME", StrideH=1,
                         StrideW=1, DilationHFactor=1, DilationWFactor=1, FusedActivationFunction="NONE")
    sets = [[rng.integers(-3, 4, (1, h, w, in_d)).astype(np.int8)] for _ in range(2)]
    return Case(f"CONV_2D/{name}", model, dict(h=h, w=w, in_d=in_d, out_d=out_d, kh=kh), sets)


def cases() -> list[Case]:
    rng = np.random.default_rng(20261124)
    acts = itertools.cycle(ACTIVATIONS)
    out: list[Case] = []
    k = itertools.count()

    def conv(name, **kw):
        kw.setdefault("per_channel", next(k) % 2 == 0)
        kw.setdefault("act", next(acts))
        out.append(_conv_case(rng, name, **kw))

    # Pointwise: channel counts on and off the 2x2 block and the 4-value
    # step, odd pixel counts, batches, stride 2.
    for in_d, out_d, (h, w) in [(8, 16, (5, 7)), (7, 5, (3, 3)), (1, 3, (2, 5)), (16, 1, (1, 1)), (33, 17, (3, 1)),
                                (4, 2, (1, 9)), (17, 8, (4, 4)), (64, 12, (2, 3)),
                                # Pixels longer than 128 and than 256 values (the DSP
                                # loops widen up to 256 on the stack).
                                (200, 3, (1, 3)), (259, 2, (1, 2))]:
        conv(f"1x1_{in_d}to{out_d}_{h}x{w}", h=h, w=w, in_d=in_d, out_d=out_d, kh=1, kw=1, stride=1,
             padding="SAME")
    conv("1x1_stride2", h=7, w=6, in_d=12, out_d=6, kh=1, kw=1, stride=2, padding="VALID")
    conv("1x1_batches", h=3, w=3, in_d=9, out_d=7, kh=1, kw=1, stride=1, padding="SAME", batches=2)
    conv("1x1_no_bias", h=2, w=3, in_d=8, out_d=4, kh=1, kw=1, stride=1, padding="SAME", bias=False)
    # Small windows gathered on the stack (first layers), both paddings.
    conv("3x3s2_rgb_same", h=11, w=9, in_d=3, out_d=8, kh=3, kw=3, stride=2, padding="SAME")
    conv("3x3s2_rgb_valid", h=9, w=10, in_d=3, out_d=5, kh=3, kw=3, stride=2, padding="VALID")
    conv("10x4s2_mono_same", h=13, w=10, in_d=1, out_d=9, kh=10, kw=4, stride=2, padding="SAME")
    conv("5x5_dilated", h=9, w=8, in_d=2, out_d=3, kh=3, kw=3, stride=1, padding="SAME", dil=2)
    # Windows read in place inside, borders gathered or generic.
    conv("3x3_16ch", h=5, w=6, in_d=16, out_d=6, kh=3, kw=3, stride=1, padding="SAME")
    conv("3x3_48ch_big_window", h=4, w=5, in_d=48, out_d=3, kh=3, kw=3, stride=1, padding="SAME")
    # The Cortex-M3's and the DSP cores' gather buffer (256 values) at its
    # edge: 252 and 256 values gathered inside too, 261 read in place (rows
    # of 87 values: an odd number of four-value steps in tflm_mm_s8_2x2's
    # loop, and three left).
    conv("3x3_28ch_gathered", h=5, w=5, in_d=28, out_d=5, kh=3, kw=3, stride=1, padding="SAME")
    conv("4x4_16ch_gathered", h=6, w=5, in_d=16, out_d=4, kh=4, kw=4, stride=1, padding="SAME")
    conv("3x3_29ch_in_place", h=5, w=6, in_d=29, out_d=7, kh=3, kw=3, stride=1, padding="SAME")
    conv("grouped", h=4, w=4, in_d=8, out_d=8, kh=3, kw=3, stride=1, padding="SAME", groups=2)
    # Border windows of more than 128 values, gathered a slab at a time:
    # windows split into slabs of equal and unequal length (values not a
    # multiple of 4), odd channel counts and more than one chunk of 32
    # channels, one pixel waiting across rows, dilation (every pixel then
    # gathered, inside ones too), a one-channel input.
    for name, kw in [("3x3s1_32ch", dict(h=5, w=6, in_d=32, out_d=7, kh=3, kw=3, stride=1)),
                     ("3x3s1_15ch_odd", dict(h=4, w=3, in_d=15, out_d=5, kh=3, kw=3, stride=1)),
                     ("5x5s1_16ch", dict(h=6, w=7, in_d=16, out_d=5, kh=5, kw=5, stride=1)),
                     ("5x5s2_16ch", dict(h=8, w=9, in_d=16, out_d=6, kh=5, kw=5, stride=2)),
                     ("3x3s1_160ch", dict(h=3, w=4, in_d=160, out_d=35, kh=3, kw=3, stride=1)),
                     ("3x3s2_160ch", dict(h=5, w=5, in_d=160, out_d=9, kh=3, kw=3, stride=2)),
                     ("3x3s1_67ch_one_row", dict(h=1, w=5, in_d=67, out_d=3, kh=3, kw=3, stride=1)),
                     ("3x3_dilated_20ch", dict(h=7, w=6, in_d=20, out_d=4, kh=3, kw=3, stride=1, dil=2)),
                     ("13x11_mono", dict(h=9, w=12, in_d=1, out_d=6, kh=13, kw=11, stride=1)),
                     ("3x3s1_33ch_batches", dict(h=3, w=3, in_d=33, out_d=33, kh=3, kw=3, stride=1, batches=2))]:
        conv(f"large_window_{name}", padding="SAME", **kw)
    conv("large_window_5x4s3_valid", h=11, w=10, in_d=9, out_d=4, kh=5, kw=4, stride=3, padding="VALID", dil=2)
    conv("large_window_extreme_shifts", h=4, w=4, in_d=24, out_d=10, kh=3, kw=3, stride=1, padding="SAME",
         per_channel=True, extreme=True)
    # Multipliers outside the fast range, per channel and per tensor.
    conv("1x1_extreme_shifts", h=3, w=4, in_d=8, out_d=12, kh=1, kw=1, stride=1, padding="SAME",
         per_channel=True, extreme=True)
    conv("3x3_extreme_shifts", h=4, w=4, in_d=3, out_d=6, kh=3, kw=3, stride=1, padding="SAME",
         per_channel=True, extreme=True)

    def dw(name, **kw):
        kw.setdefault("per_channel", next(k) % 2 == 0)
        kw.setdefault("act", next(acts))
        out.append(_conv_case(rng, name, depthwise=True, out_d=0, kh=kw.pop("kh", 3), kw=kw.pop("kw", 3), **kw))

    # 3x3 depthwise: both strides and paddings, widths 1 to 9 (every edge
    # case of the window's columns), heights down to 1, multipliers.
    for stride, padding, (h, w), in_d, mult in [
            (1, "SAME", (5, 7), 8, 1), (1, "SAME", (1, 1), 3, 1), (1, "SAME", (2, 2), 5, 1),
            (1, "VALID", (4, 5), 4, 1), (1, "VALID", (3, 3), 16, 1), (2, "SAME", (6, 6), 8, 1),
            (2, "SAME", (7, 5), 3, 1), (2, "SAME", (1, 2), 2, 1), (2, "VALID", (5, 9), 6, 1),
            (2, "SAME", (9, 8), 1, 8), (1, "SAME", (3, 4), 3, 2), (2, "VALID", (4, 3), 17, 1),
            (1, "SAME", (2, 9), 17, 1)]:
        dw(f"3x3s{stride}_{padding.lower()}_{h}x{w}x{in_d}_m{mult}", h=h, w=w, in_d=in_d, stride=stride,
           padding=padding, mult=mult)
    # Whole windows on the channels path (outputs 4 to 8 wide): groups of
    # four channels in one loop a pixel, chunks of 16 and the channels left
    # over, without and with a clamp.
    dw("3x3s1_same_6x6x36_whole", h=6, w=6, in_d=36, stride=1, padding="SAME", act="NONE")
    dw("3x3s2_same_11x9x21_whole", h=11, w=9, in_d=21, stride=2, padding="SAME", act="RELU6")
    dw("3x3_batches", h=4, w=4, in_d=4, stride=1, padding="SAME", batches=2)
    dw("3x3_extreme_shifts", h=4, w=5, in_d=12, stride=1, padding="SAME", per_channel=True, extreme=True)
    # Other windows: the channels path (multipliers 1, 2 and multiples of
    # 4; in blocks of window rows past 25 taps), else the generic loop.
    dw("3x3_dilated", h=7, w=7, in_d=4, stride=1, padding="SAME", dil=2)
    dw("5x5", h=6, w=6, in_d=5, stride=1, padding="SAME", kh=5, kw=5)
    dw("3x1_mult3", h=5, w=4, in_d=3, stride=1, padding="SAME", kh=3, kw=1, mult=3)
    dw("3x3s3", h=9, w=8, in_d=4, stride=3, padding="SAME")
    # One input channel per chunk of output channels (micro_speech's first
    # layer: a single-channel input, multiplier 8), and chunks that split a
    # channel's multiplier.
    dw("10x8s2_mono_m8", h=13, w=11, in_d=1, stride=2, padding="SAME", kh=10, kw=8, mult=8)
    dw("5x3_in2_m12", h=6, w=5, in_d=2, stride=1, padding="SAME", kh=5, kw=3, mult=12)
    dw("7x7_m1", h=9, w=8, in_d=18, stride=1, padding="SAME", kh=7, kw=7)
    dw("3x3s1_8x6x5_m4", h=8, w=6, in_d=5, stride=1, padding="SAME", mult=4)
    dw("3x3s2_4x4x7_m2", h=4, w=4, in_d=7, stride=2, padding="SAME", mult=2)
    dw("1x27_m2", h=3, w=30, in_d=3, stride=1, padding="VALID", kh=1, kw=27, mult=2)
    # One input channel, windows of at most ten taps, on the channels path
    # (dw_s8_one_in on the DSP cores): the taps in pairs (an odd count's
    # last against a zero weight), windows at every edge and inside, chunks
    # of 16 channels and the ones past them, shifts outside the one-multiply
    # form, two batches.
    dw("one_3x3s1_same_7x6_m4", h=7, w=6, in_d=1, stride=1, padding="SAME", mult=4)
    dw("one_3x3s2_valid_9x11_m8", h=9, w=11, in_d=1, stride=2, padding="VALID", mult=8)
    dw("one_2x5s1_same_6x8_m20", h=6, w=8, in_d=1, stride=1, padding="SAME", kh=2, kw=5, mult=20)
    dw("one_3x3_dil2_8x8_m16", h=8, w=8, in_d=1, stride=1, padding="SAME", dil=2, mult=16)
    dw("one_1x1_3x5_m2", h=3, w=5, in_d=1, stride=1, padding="SAME", kh=1, kw=1, mult=2)
    dw("one_3x1_5x4_m1", h=5, w=4, in_d=1, stride=1, padding="SAME", kh=3, kw=1)
    dw("one_1x9_4x12_m4", h=4, w=12, in_d=1, stride=1, padding="SAME", kh=1, kw=9, mult=4)
    dw("one_3x3_extreme_6x5_m8", h=6, w=5, in_d=1, stride=1, padding="SAME", mult=8, per_channel=True,
       extreme=True)
    dw("one_3x3_batches_5x5_m4", h=5, w=5, in_d=1, stride=2, padding="SAME", mult=4, batches=2)
    # Every multiplier the paths tell apart, windows past 25 taps.
    out += opgen.cases(8, only="DEPTHWISE_CONV_2D/int8_multipliers")

    # Fully connected: units odd and even (groups of five, four, two and one
    # on the Cortex-M0, four, two and one elsewhere), depths around the
    # 4-value step and the two-step turn, rows of one value; units of one to
    # three values (fc_short: eight outputs a store, a loop per depth) in
    # blocks of eight and what is left of them.
    for batches, depth, units in [(1, 64, 12), (1, 256, 2), (3, 7, 5), (2, 33, 1), (1, 3, 16), (2, 5, 7),
                                  (1, 8, 11), (2, 12, 19), (1, 1, 16), (1, 16, 1), (1, 20, 14), (2, 2, 9),
                                  (3, 1, 17), (1, 2, 8), (2, 3, 3)]:
        out.append(_fc_case(rng, f"{batches}x{depth}to{units}", batches=batches, depth=depth, units=units,
                            per_channel=next(k) % 2 == 0, act=next(acts)))
    out.append(_fc_case(rng, "extreme_shifts", batches=2, depth=16, units=9, per_channel=True, act="NONE",
                        extreme=True))
    out.append(_fc_case(rng, "short_extreme_shifts", batches=2, depth=2, units=11, per_channel=True, act="NONE",
                        extreme=True))
    out.append(_fc_case(rng, "short_no_bias", batches=1, depth=3, units=10, per_channel=False, act="RELU",
                        bias=False))
    # Two pixels in one 64-bit sum (Cortex-M3/M4): the largest sums, with
    # their own input sets (all -128, all 127, random).
    out += opgen.cases(16, only="CONV_2D/int8_lanes")
    # Depthwise on narrow outputs, in chunks of 16 channels and what is left
    # of them.
    out += opgen.cases(8, only="DEPTHWISE_CONV_2D/int8_narrow")
    # Batch matrix multiplies (kernels/batch_matmul.c: two rows by two
    # columns through kernels/mm_s8.h): the generator's odd and even sizes,
    # and rows longer than a few 4-value steps, right operand constant
    # (asymmetric) or computed.
    out += opgen.cases(8, only="BATCH_MATMUL/int8")
    for m, k_, n, const in [(5, 33, 7, True), (4, 64, 6, False), (3, 19, 2, True)]:
        q, rq = act_quant(rng, "INT8"), ([0.01], [int(rng.integers(-20, 21))])
        oq = ([float(np.float32(q[0][0] * 0.01 * 70 * 70 * math.sqrt(k_) / 60))], [int(rng.integers(-20, 21))])
        rhs = random_data(rng, "INT8", (k_, n)) if const else None
        model, _ = single_op("BATCH_MATMUL", [((2, m, k_), "INT8", None, q), ((k_, n), "INT8", rhs, rq)],
                             [((2, m, n), "INT8", oq)])
        out.append(Case(f"batch_matmul_{m}x{k_}x{n}", model, dict(m=m, k=k_, n=n, const=const)))
    # Sums that show in the output one by one, through the Cortex-M3's
    # packed pairs: an even and an odd pointwise depth, an odd last
    # channel and pixel, and 3x3 windows gathered at the edges.
    out += [_unit_case(rng, "1x1_unit_24to9", h=3, w=3, in_d=24, out_d=9, kh=1),
            _unit_case(rng, "1x1_unit_25to8", h=2, w=3, in_d=25, out_d=8, kh=1),
            _unit_case(rng, "3x3_unit_3to8", h=4, w=4, in_d=3, out_d=8, kh=3)]
    # Pointwise channel pairs in one block of assembly on the DSP cores
    # (every channel's scaling fast, the activation's range all of int8, k
    # a multiple of 4): one to several chunks of 32 output channels, an odd
    # last one, pixels past the last group of four; and a layer whose
    # activation narrows the range (the C output stage).
    # Depths of every start of the four-pixel loop (four, then eight values
    # first as k's bits ask, then sixteen a turn): 4, 8, 12, 20, 24, 28, 36,
    # 44 and 60 (20 and 36: four values, then the loop).
    for in_d, out_d, (h, w), act in [(4, 2, (2, 2), "NONE"), (12, 7, (3, 3), "NONE"), (64, 40, (2, 5), "NONE"),
                                     (128, 67, (1, 5), "NONE"), (32, 33, (3, 3), "NONE"), (16, 6, (2, 4), "RELU"),
                                     (8, 4, (2, 2), "NONE"), (24, 6, (1, 4), "NONE"), (28, 3, (2, 2), "NONE"),
                                     (44, 5, (2, 2), "NONE"), (60, 4, (1, 4), "NONE"), (20, 5, (1, 4), "NONE"),
                                     (36, 3, (2, 2), "NONE")]:
        conv(f"1x1_pairs_{in_d}to{out_d}_{h}x{w}_{act.lower()}", h=h, w=w, in_d=in_d, out_d=out_d, kh=1, kw=1,
             stride=1, padding="SAME", act=act)
    # The same blocks with channels of the wide form (shifts of 25-31 bits,
    # multiplier 0) beside fast ones: pointwise four and two pixels at a
    # time, windows gathered (27 values) and over 128 values, an odd
    # channel, and an activation that narrows the range (the C stage).
    for name, kw in [("1x1_wide_64to12", dict(h=2, w=4, in_d=64, out_d=12, kh=1, kw=1, act="NONE")),
                     ("1x1_wide_128to21", dict(h=3, w=3, in_d=128, out_d=21, kh=1, kw=1, act="NONE")),
                     ("1x1_wide_200to8", dict(h=1, w=3, in_d=200, out_d=8, kh=1, kw=1, act="NONE")),
                     ("3x3_wide_rgb", dict(h=7, w=6, in_d=3, out_d=9, kh=3, kw=3, act="NONE")),
                     ("1x1_wide_relu", dict(h=2, w=4, in_d=32, out_d=8, kh=1, kw=1, act="RELU"))]:
        conv(name, stride=1, padding="SAME", per_channel=True, extreme="wide", **kw)
    # Rows wide enough for the 3x3 path on every core (outputs wider than
    # 8), which go along the row in segments of 48 sums on the Cortex-M3
    # and M4: widths around one and two segments, odd and even, with the
    # channels' other output stages beside them.
    for stride, padding, (h, w), in_d, extreme in [
            (1, "SAME", (3, 70), 3, False), (1, "VALID", (4, 100), 2, False), (1, "SAME", (5, 50), 5, False),
            (2, "SAME", (3, 131), 2, False), (2, "VALID", (5, 68), 3, False), (2, "SAME", (4, 66), 2, False),
            (1, "SAME", (3, 41), 12, True), (2, "SAME", (3, 81), 12, True)]:
        more = {"per_channel": True, "extreme": True} if extreme else {}
        dw(f"3x3s{stride}_{padding.lower()}_{h}x{w}x{in_d}_wide" + ("_extreme" if extreme else ""), h=h, w=w,
           in_d=in_d, stride=stride, padding=padding, **more)
    # Whole 3x3 windows on the channels path (outputs 4-8 wide on the
    # Cortex-M3 and M4): the input offset folded into each channel's start,
    # the weights copied per group of four; several chunks of 16 channels
    # with a remainder, both strides, and activations that clamp or not.
    for stride, (h, w), in_d, act in [(1, (6, 8), 37, "RELU6"), (2, (9, 12), 20, "NONE"),
                                      (1, (4, 4), 4, "RELU"), (1, (7, 5), 16, "NONE")]:
        dw(f"3x3s{stride}_same_{h}x{w}x{in_d}_whole_{act.lower()}", h=h, w=w, in_d=in_d, stride=stride,
           padding="SAME", act=act)
    # Rows whose last segment's length is two more than a multiple of four
    # (the Cortex-M3 and M4 loops' four sums a step start with the second
    # two), clamped by SSAT (no activation) or by the range.
    for stride, padding, (h, w), in_d, act in [(1, "SAME", (3, 47), 4, "NONE"), (1, "VALID", (4, 56), 3, "RELU6"),
                                               (2, "SAME", (3, 61), 3, "NONE"), (2, "VALID", (5, 53), 2, "RELU")]:
        dw(f"3x3s{stride}_{padding.lower()}_{h}x{w}x{in_d}_wide_{act.lower()}", h=h, w=w, in_d=in_d, stride=stride,
           padding=padding, act=act, per_channel=True)
    out += _tail_cases(rng)
    # Biases at and past the bound of the DSP cores' SMMLAR output stage:
    # pointwise chunks in the fast form, beside the wide form, over 128
    # values (pairs of pixels), and a 3x3 window.
    for name, kw in [("1x1_big_bias_16to8", dict(h=2, w=4, in_d=16, out_d=8, kh=1, kw=1)),
                     ("1x1_big_bias_64to21_wide", dict(h=3, w=3, in_d=64, out_d=21, kh=1, kw=1, extreme="wide")),
                     ("1x1_big_bias_200to7", dict(h=1, w=4, in_d=200, out_d=7, kh=1, kw=1)),
                     ("3x3_big_bias", dict(h=5, w=5, in_d=8, out_d=7, kh=3, kw=3))]:
        conv(name, stride=1, padding="SAME", per_channel=True, act="NONE", big_bias=True, **kw)
    # The fast form's loop for k = 16 (its sixteen steps once, no loop).
    conv("1x1_pairs_16to6_2x4_none", h=2, w=4, in_d=16, out_d=6, kh=1, kw=1, stride=1, padding="SAME",
         act="NONE")
    # The DSP cores' pointwise loops for each k they tell apart, in the wide
    # form (the fast form: the pairs above), two pairs of channels whose
    # outputs vary and a last one that makes the chunk wide.
    for in_d in (8, 16, 32, 64, 128, 48):
        conv(f"1x1_wide_last_k{in_d}", h=2, w=4, in_d=in_d, out_d=5, kh=1, kw=1, stride=1, padding="SAME",
             per_channel=True, act="NONE", extreme="wide_last")
    # 3x3 depthwise on the channels path's groups (outputs 4 to 8 wide)
    # with biases past the SMMLAR stage's bound, clamped or not.
    dw("3x3s1_same_6x6x8_big_bias", h=6, w=6, in_d=8, stride=1, padding="SAME", act="NONE", per_channel=True,
       big_bias=True)
    dw("3x3s2_same_9x9x12_big_bias", h=9, w=9, in_d=12, stride=2, padding="SAME", act="RELU6", per_channel=True,
       big_bias=True)
    # The same on rows wider than 8 (the rows' segments), both strides.
    dw("3x3s1_same_3x20x4_big_bias", h=3, w=20, in_d=4, stride=1, padding="SAME", act="NONE", per_channel=True,
       big_bias=True)
    dw("3x3s2_same_4x41x3_big_bias", h=4, w=41, in_d=3, stride=2, padding="SAME", act="RELU", per_channel=True,
       big_bias=True)
    return out


def _tail_cases(rng) -> list[Case]:
    """The int8 tail layers (kernels/pool_s8.h, softmax_s8.h): average pools
    four channels a word up to 256 taps (a window of 256, one of 272 past
    it, SAME windows cut at the edges, an input of all -128 and one of all
    127: the lanes' extremes, every fused activation), and softmax rows of
    up to 32 values, whose exps wait on the stack, and longer ones, with
    large betas (differences below diff_min), to int8 and int16."""
    out = []
    pools = [((1, 25, 5, 64), (25, 5), (25, 5), "VALID", "NONE"), ((1, 3, 3, 256), (3, 3), (2, 2), "VALID", "RELU"),
             ((2, 16, 16, 8), (16, 16), (1, 1), "VALID", "NONE"), ((1, 17, 16, 4), (17, 16), (1, 1), "VALID", "NONE"),
             ((1, 9, 7, 12), (4, 3), (2, 2), "SAME", "RELU6"), ((1, 6, 6, 16), (3, 3), (1, 1), "SAME", "RELU_N1_TO_1"),
             ((1, 5, 5, 6), (2, 2), (1, 1), "VALID", "NONE")]
    for shape, (fh, fw), (sh, sw), padding, act in pools:
        oh, ow = _out(padding, shape[1], fh, sh), _out(padding, shape[2], fw, sw)
        q = act_quant(rng, "INT8")
        model, _ = single_op("AVERAGE_POOL_2D", [(shape, "INT8", None, q)], [((shape[0], oh, ow, shape[3]), "INT8", q)],
                             Padding=padding, StrideH=sh, StrideW=sw, FilterHeight=fh, FilterWidth=fw,
                             FusedActivationFunction=act)
        inputs = [[np.full(shape, -128, np.int8)], [np.full(shape, 127, np.int8)], [random_data(rng, "INT8", shape)]]
        out.append(Case(f"avgpool_{'x'.join(map(str, shape))}_{fh}x{fw}", model,
                        dict(filter=(fh, fw), stride=(sh, sw), padding=padding, act=act), inputs=inputs))
    for shape, beta, out_type in [((1, 12), 1.0, "INT8"), ((3, 32), 1.0, "INT8"), ((2, 33), 2.5, "INT8"),
                                  ((1, 100), 40.0, "INT8"), ((2, 5), 1.0, "INT16"), ((1, 70), 300.0, "INT16")]:
        qin = ([float(np.float32(rng.uniform(0.02, 0.3)))], [int(rng.integers(-100, 100))])
        qout = ([1.0 / 256], [-128]) if out_type == "INT8" else ([1.0 / 65536], [-32768])
        model, _ = single_op("SOFTMAX", [(shape, "INT8", None, qin)], [(shape, out_type, qout)], Beta=beta)
        inputs = [[random_data(rng, "INT8", shape)] for _ in range(2)] + [[np.zeros(shape, np.int8)]]
        out.append(Case(f"softmax_{'x'.join(map(str, shape))}_{out_type.lower()}", model,
                        dict(beta=beta, qin=qin), inputs=inputs))
    return out
