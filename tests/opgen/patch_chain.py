"""Chains of int8 CONV_2D and DEPTHWISE_CONV_2D (and, mixed with pools, of
float32 or int8 convolutions and MAX_POOL_2D / AVERAGE_POOL_2D), as the first stages of
convolutional models are, for patch-based execution (engine/patch.h): random
maps, 1x1 to 5x5 kernels, strides 1 and 2, SAME and VALID padding, dilation,
depth multipliers, random zero points. The model's output is the chain's last
map (every element of the stage's output is compared), optionally followed by
one more CONV_2D that the stage leaves out; an int8 chain may follow the
QUANTIZE of a float input, as a converted float-input model's does (the
stage then starts at operator 1: params["start"]). params["grid"] is a patch
grid for the test to use, often one that does not divide the map;
params["split"] the operator after the stage."""

from __future__ import annotations

import numpy as np

from tflm_dev.builder import ModelBuilder

from . import Case, act_quant, bias_data, generator, random_data, weight_quant
from .conv import ACTIVATIONS, _out_size


def _layer(rng: np.random.Generator, h: int, w: int, d: int) -> dict:
    depthwise = bool(rng.integers(0, 2))
    k = int(rng.choice([1, 3, 3, 5])) if not depthwise else int(rng.choice([3, 3, 5]))
    stride = int(rng.choice([1, 1, 2]))
    dil = 2 if rng.integers(0, 6) == 0 and stride == 1 else 1
    padding = "SAME" if rng.integers(0, 3) else "VALID"
    if padding == "VALID" and (k - 1) * dil + 1 > min(h, w):
        padding = "SAME"
    mult = int(rng.choice([1, 1, 2])) if depthwise else 1
    out_d = d * mult if depthwise else int(rng.integers(1, 17))
    return dict(op="DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", k=k, stride=stride, dil=dil, padding=padding,
                mult=mult, out_d=out_d, oh=_out_size(padding, h, k, stride, dil),
                ow=_out_size(padding, w, k, stride, dil))


@generator("PATCH/chain_int8")
def chain_int8(rng: np.random.Generator) -> Case:
    return _int8_chain(rng, quantize_first=False)


@generator("PATCH/chain_after_quantize_int8")
def chain_after_quantize_int8(rng: np.random.Generator) -> Case:
    return _int8_chain(rng, quantize_first=True)


def _int8_chain(rng: np.random.Generator, quantize_first: bool) -> Case:
    h, w, d = int(rng.integers(6, 25)), int(rng.integers(6, 25)), int(rng.integers(1, 5))
    n = int(rng.integers(2, 5))
    tail = bool(rng.integers(0, 2))
    b = ModelBuilder()
    sg = b.subgraph()
    q = act_quant(rng, "INT8")
    x = sg.tensor((1, h, w, d), "INT8", quant=q)
    start = 0
    if quantize_first:
        f = sg.tensor((1, h, w, d), "FLOAT32")
        sg.op("QUANTIZE", [f], [x])
        sg.inputs = [f]
        start = 1
    else:
        sg.inputs = [x]
    layers = []
    cur, ch, cw, cd = x, h, w, d
    for j in range(n + (1 if tail else 0)):
        L = _layer(rng, ch, cw, cd)
        if j == n:  # the op after the stage: a plain 1x1 or 3x3 CONV_2D
            L = dict(L, op="CONV_2D", mult=1, dil=1, stride=1, padding="SAME", oh=ch, ow=cw)
        per_channel = bool(rng.integers(0, 2))
        dw = L["op"] == "DEPTHWISE_CONV_2D"
        out_d = L["out_d"]
        fshape = (1, L["k"], L["k"], out_d) if dw else (out_d, L["k"], L["k"], cd)
        taps = L["k"] * L["k"] * (1 if dw else cd)
        qw = weight_quant(rng, out_d, per_channel, 3 if dw else 0,
                          (0.5 * 0.02 / np.sqrt(taps), 2.0 * 0.02 / np.sqrt(taps)))
        qout = act_quant(rng, "INT8", (0.01, 0.05))
        wt = sg.tensor(fshape, "INT8", data=random_data(rng, "INT8", fshape, -127, 127), quant=qw)
        qb = ([q[0][0] * s for s in qw[0]], [0] * len(qw[0]), 0)
        bt = sg.tensor((out_d,), "INT32", data=bias_data(rng, "INT32", out_d), quant=qb)
        y = sg.tensor((1, L["oh"], L["ow"], out_d), "INT8", quant=qout)
        act = str(rng.choice(ACTIVATIONS))
        opts = dict(Padding=L["padding"], StrideH=L["stride"], StrideW=L["stride"], DilationHFactor=L["dil"],
                    DilationWFactor=L["dil"], FusedActivationFunction=act)
        if dw:
            opts["DepthMultiplier"] = L["mult"]
        sg.op(L["op"], [cur, wt, bt], [y], **opts)
        layers.append(f"{L['op'][0]}{L['k']}s{L['stride']}d{L['dil']}{L['padding'][0]}x{L['mult']}->{out_d}")
        cur, ch, cw, cd, q = y, L["oh"], L["ow"], out_d, qout
        if j == n - 1:
            stage_out = (ch, cw)
    sg.outputs = [cur]
    gh = int(rng.integers(2, min(stage_out[0], 6) + 1)) if stage_out[0] >= 2 else 1
    gw = int(rng.integers(2, min(stage_out[1], 6) + 1)) if stage_out[1] >= 2 else 1
    return Case("", b.build(), dict(h=h, w=w, d=d, layers=" ".join(layers), split=start + n, grid=(gh, gw),
                                    tail=tail, start=start))


def _pool_layer(rng: np.random.Generator, h: int, w: int, d: int) -> dict:
    k = int(rng.choice([1, 2, 3]))
    stride = int(rng.choice([1, 2, 3]))
    padding = "SAME" if rng.integers(0, 2) or k > min(h, w) else "VALID"
    op = "MAX_POOL_2D" if rng.integers(0, 3) else "AVERAGE_POOL_2D"
    return dict(op=op, k=k, stride=stride, dil=1, padding=padding, mult=1, out_d=d,
                oh=_out_size(padding, h, k, stride, 1), ow=_out_size(padding, w, k, stride, 1))


def _conv_op(rng: np.random.Generator, sg, L: dict, cur, cd: int, q, dtype: str):
    """Layer L (a CONV_2D or DEPTHWISE_CONV_2D from _layer, or _uneven_layer's
    with a window, stride and dilation per axis) on `cur` (depth cd,
    quantization q), float32 or int8: its output, the output's quantization
    and the layer's label."""
    dw = L["op"] == "DEPTHWISE_CONV_2D"
    out_d = L["out_d"]
    kh, kw = L.get("kh", L["k"]), L.get("kw", L["k"])
    sh, sw = L.get("sh", L["stride"]), L.get("sw", L["stride"])
    dh, dw_ = L.get("dh", L["dil"]), L.get("dw", L["dil"])
    fshape = (1, kh, kw, out_d) if dw else (out_d, kh, kw, cd)
    taps = kh * kw * (1 if dw else cd)
    if dtype == "FLOAT32":
        wt = sg.tensor(fshape, "FLOAT32", data=(rng.normal(0, 1, fshape) / np.sqrt(taps)).astype(np.float32))
        bt = sg.tensor((out_d,), "FLOAT32", data=bias_data(rng, "FLOAT32", out_d))
        qout = None
    else:
        qw = weight_quant(rng, out_d, bool(rng.integers(0, 2)), 3 if dw else 0,
                          (0.5 * 0.02 / np.sqrt(taps), 2.0 * 0.02 / np.sqrt(taps)))
        wt = sg.tensor(fshape, "INT8", data=random_data(rng, "INT8", fshape, -127, 127), quant=qw)
        qb = ([q[0][0] * s for s in qw[0]], [0] * len(qw[0]), 0)
        bt = sg.tensor((out_d,), "INT32", data=bias_data(rng, "INT32", out_d), quant=qb)
        qout = act_quant(rng, "INT8", (0.01, 0.05))
    y = sg.tensor((1, L["oh"], L["ow"], out_d), dtype, quant=qout)
    opts = dict(Padding=L["padding"], StrideH=sh, StrideW=sw, DilationHFactor=dh, DilationWFactor=dw_,
                FusedActivationFunction=str(rng.choice(ACTIVATIONS)))
    if dw:
        opts["DepthMultiplier"] = L["mult"]
    sg.op(L["op"], [cur, wt, bt], [y], **opts)
    if (kh, sh, dh) == (kw, sw, dw_):
        return y, qout, f"{L['op'][0]}{kh}s{sh}d{dh}{L['padding'][0]}x{L['mult']}->{out_d}"
    return y, qout, f"{L['op'][0]}{kh}x{kw}s{sh}x{sw}d{dh}x{dw_}{L['padding'][0]}x{L['mult']}->{out_d}"


def _chain_input(rng: np.random.Generator, dtype: str, h: int, w: int, d: int):
    """A model's builder, its subgraph, and the chain's input (1 x h x w x d,
    float32 or int8, its quantization drawn here): (builder, subgraph,
    quantization, input)."""
    b = ModelBuilder()
    sg = b.subgraph()
    q = act_quant(rng, "INT8") if dtype == "INT8" else None
    x = sg.tensor((1, h, w, d), dtype, quant=q)
    sg.inputs = [x]
    return b, sg, q, x


def _uneven_layer(rng: np.random.Generator, h: int, w: int, d: int) -> dict | None:
    """A convolution or pool whose window, stride and dilation differ between
    rows and columns: 1 to 5 taps a side, strides 1 to 3 (some longer than
    the window, so rows or columns go unread), dilation with stride too;
    None when no output fits."""
    op = str(rng.choice(["CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "AVERAGE_POOL_2D"]))
    pool = op.endswith("POOL_2D")
    kh, kw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    dh = 1 if pool or rng.integers(0, 3) else int(rng.integers(2, 4))
    dw = 1 if pool or rng.integers(0, 3) else int(rng.integers(2, 4))
    padding = "SAME" if rng.integers(0, 2) else "VALID"
    if padding == "VALID" and ((kh - 1) * dh + 1 > h or (kw - 1) * dw + 1 > w):
        padding = "SAME"
    oh, ow = _out_size(padding, h, kh, sh, dh), _out_size(padding, w, kw, sw, dw)
    if oh < 1 or ow < 1:
        return None
    mult = int(rng.choice([1, 1, 2])) if op == "DEPTHWISE_CONV_2D" else 1
    out_d = d if pool else d * mult if op == "DEPTHWISE_CONV_2D" else int(rng.integers(1, 9))
    return dict(op=op, k=kh, kh=kh, kw=kw, stride=sh, sh=sh, sw=sw, dil=dh, dh=dh, dw=dw, padding=padding,
                mult=mult, out_d=out_d, oh=oh, ow=ow)


@generator("PATCH/chain_uneven")
def chain_uneven(rng: np.random.Generator) -> Case:
    """A chain of one to eight convolutions and pools, float32 or int8, with
    windows, strides and dilations that differ between rows and columns,
    over maps from 1 to 32 pixels a side (the patch stages' axes are walked
    apart: engine/patch.c)."""
    dtype = "INT8" if rng.integers(0, 3) else "FLOAT32"
    h, w, d = int(rng.integers(1, 33)), int(rng.integers(1, 33)), int(rng.integers(1, 5))
    b, sg, q, x = _chain_input(rng, dtype, h, w, d)
    layers = []
    cur, ch, cw, cd = x, h, w, d
    for _ in range(int(rng.integers(1, 9))):
        L = _uneven_layer(rng, ch, cw, cd)
        if L is None:
            break
        if L["op"].endswith("POOL_2D"):
            y = sg.tensor((1, L["oh"], L["ow"], cd), dtype, quant=q)  # pools keep the quantization
            sg.op(L["op"], [cur], [y], Padding=L["padding"], StrideH=L["sh"], StrideW=L["sw"],
                  FilterHeight=L["kh"], FilterWidth=L["kw"], FusedActivationFunction=str(rng.choice(ACTIVATIONS)))
            layers.append(f"{L['op'][0]}P{L['kh']}x{L['kw']}s{L['sh']}x{L['sw']}{L['padding'][0]}")
            cur, ch, cw = y, L["oh"], L["ow"]
            continue
        y, qout, label = _conv_op(rng, sg, L, cur, cd, q, dtype)
        layers.append(label)
        cur, ch, cw, cd, q = y, L["oh"], L["ow"], L["out_d"], qout
    if not layers:  # (a 1x1 convolution always fits)
        L = dict(op="CONV_2D", k=1, stride=1, dil=1, padding="SAME", mult=1, out_d=d, oh=h, ow=w)
        y, q, label = _conv_op(rng, sg, L, cur, cd, q, dtype)
        layers.append(label)
        cur, ch, cw = y, h, w
    sg.outputs = [cur]
    grid = (int(rng.integers(1, ch + 1)), int(rng.integers(1, cw + 1)))
    return Case("", b.build(), dict(h=h, w=w, d=d, layers=" ".join(layers), split=len(layers), grid=grid,
                                    tail=False))


def _mixed_chain(rng: np.random.Generator, dtype: str) -> Case:
    """A chain of convolutions and pools (at least one pool), float32 or int8."""
    h, w, d = int(rng.integers(6, 25)), int(rng.integers(1, 25)), int(rng.integers(1, 5))
    n = int(rng.integers(2, 5))
    pools = set(int(j) for j in rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False))
    b, sg, q, x = _chain_input(rng, dtype, h, w, d)
    layers = []
    cur, ch, cw, cd = x, h, w, d
    for j in range(n):
        if j in pools:
            L = _pool_layer(rng, ch, cw, cd)
            y = sg.tensor((1, L["oh"], L["ow"], cd), dtype, quant=q)  # pools keep the quantization
            act = str(rng.choice(ACTIVATIONS))
            sg.op(L["op"], [cur], [y], Padding=L["padding"], StrideH=L["stride"], StrideW=L["stride"],
                  FilterHeight=L["k"], FilterWidth=L["k"], FusedActivationFunction=act)
            layers.append(f"{L['op'][0]}P{L['k']}s{L['stride']}{L['padding'][0]}")
            cur, ch, cw = y, L["oh"], L["ow"]
            continue
        L = _layer(rng, ch, cw, cd)
        y, qout, label = _conv_op(rng, sg, L, cur, cd, q, dtype)
        layers.append(label)
        cur, ch, cw, cd, q = y, L["oh"], L["ow"], L["out_d"], qout
    sg.outputs = [cur]
    gh = int(rng.integers(2, min(ch, 6) + 1)) if ch >= 2 else 1
    gw = int(rng.integers(2, min(cw, 6) + 1)) if cw >= 2 else 1
    if gh * gw == 1:
        gh, gw = (1, 1)
    return Case("", b.build(), dict(h=h, w=w, d=d, layers=" ".join(layers), split=n, grid=(gh, gw), tail=False))


@generator("PATCH/chain_pool_float32")
def chain_pool_float32(rng: np.random.Generator) -> Case:
    return _mixed_chain(rng, "FLOAT32")


@generator("PATCH/chain_pool_int8")
def chain_pool_int8(rng: np.random.Generator) -> Case:
    return _mixed_chain(rng, "INT8")


def _int8_model(rng: np.random.Generator, h: int, w: int, d: int):
    """A model builder with one subgraph whose input is an int8 map of h x w
    x d: the builder, the subgraph, the input's quantization and tensor."""
    b = ModelBuilder()
    sg = b.subgraph()
    q = act_quant(rng, "INT8")
    x = sg.tensor((1, h, w, d), "INT8", quant=q)
    sg.inputs = [x]
    return b, sg, q, x


@generator("PATCH/chain_fc_int8")
def chain_fc_int8(rng: np.random.Generator) -> Case:
    """An int8 chain of 1-3 convolutions ending in a FULLY_CONNECTED of its
    last map (flattened): a stage in bands of rows may end in it, the layer
    taking its input's rows in slices (kernel.h's reduce hook).
    params["grid"]: (bands, 1) over the map the layer reads."""
    h, w, d = int(rng.integers(4, 20)), int(rng.integers(1, 16)), int(rng.integers(1, 5))
    n = int(rng.integers(1, 4))
    b, sg, q, x = _int8_model(rng, h, w, d)
    layers = []
    cur, ch, cw, cd = x, h, w, d
    for _ in range(n):
        L = _layer(rng, ch, cw, cd)
        y, qout, label = _conv_op(rng, sg, L, cur, cd, q, "INT8")
        layers.append(label)
        cur, ch, cw, cd, q = y, L["oh"], L["ow"], L["out_d"], qout
    depth, units = ch * cw * cd, int(rng.integers(1, 13))
    qw = weight_quant(rng, units, False, 0, (0.5 * 0.02 / np.sqrt(depth), 2.0 * 0.02 / np.sqrt(depth)))
    wt = sg.tensor((units, depth), "INT8", data=random_data(rng, "INT8", (units, depth), -127, 127), quant=qw)
    bt = sg.tensor((units,), "INT32", data=bias_data(rng, "INT32", units), quant=([q[0][0] * qw[0][0]], [0], 0))
    y = sg.tensor((1, units), "INT8", quant=act_quant(rng, "INT8", (0.02, 0.1)))
    sg.op("FULLY_CONNECTED", [cur, wt, bt], [y], FusedActivationFunction=str(rng.choice(["NONE", "RELU"])))
    layers.append(f"FC{depth}->{units}")
    sg.outputs = [y]
    return Case("", b.build(), dict(h=h, w=w, d=d, layers=" ".join(layers), split=n + 1,
                                    grid=(int(rng.integers(1, ch + 1)), 1), tail=False, start=0))


@generator("PATCH/residual_int8")
def residual_int8(rng: np.random.Generator) -> Case:
    return _residual(rng, "INT8")


@generator("PATCH/residual_float32")
def residual_float32(rng: np.random.Generator) -> Case:
    return _residual(rng, "FLOAT32")


def _residual(rng: np.random.Generator, dtype: str) -> Case:
    """Residual blocks, as ResNets' are: a map (int8 or float32) through two
    3x3 CONV_2Ds (or MobileNetV2's 1x1 expansion, depthwise 3x3 and 1x1
    projection) whose output an ADD sums with the block's input (the
    stage's input itself in the first block, so an ADD may read it), then
    optionally a block that halves the map: a 3x3 CONV_2D of stride 2 and
    one of stride 1 on one path, a 1x1 CONV_2D of stride 2 on the other,
    their ADD. A stage in bands of rows holds them all (the maps its ops
    read come from the stage's input or from ops before them); the model's
    output is the last ADD's. params["grid"]: (bands, 1)."""
    h, w, d = int(rng.integers(4, 20)), int(rng.integers(1, 16)), int(rng.integers(1, 9))
    if dtype == "INT8":
        b, sg, q, x = _int8_model(rng, h, w, d)
    else:
        b = ModelBuilder()
        sg = b.subgraph()
        q = None
        x = sg.tensor((1, h, w, d), dtype)
        sg.inputs = [x]
    layers = []

    def conv(cur, q_in, ch, cw, cd, k, stride, out_d, op="CONV_2D"):
        L = dict(op=op, k=k, stride=stride, dil=1, padding="SAME", mult=1, out_d=out_d,
                 oh=_out_size("SAME", ch, k, stride, 1), ow=_out_size("SAME", cw, k, stride, 1))
        y, qout, label = _conv_op(rng, sg, L, cur, cd, q_in, dtype)
        layers.append(label)
        return y, qout, L["oh"], L["ow"]

    def add(a, qa, c, qc, ch, cw, cd):
        qout = act_quant(rng, "INT8", (0.01, 0.1)) if dtype == "INT8" else None
        y = sg.tensor((1, ch, cw, cd), dtype, quant=qout)
        sg.op("ADD", [a, c], [y], FusedActivationFunction=str(rng.choice(["NONE", "RELU"])))
        layers.append("ADD")
        return y, qout

    if rng.integers(0, 2):
        y, qy, _, _ = conv(x, q, h, w, d, 3, 1, d)
        y, qy, _, _ = conv(y, qy, h, w, d, 3, 1, d)
        n = 3
    else:
        # MobileNetV2's inverted residual: 1x1 expansion, depthwise 3x3, 1x1 projection.
        e = d * int(rng.integers(2, 5))
        y, qy, _, _ = conv(x, q, h, w, d, 1, 1, e)
        y, qy, _, _ = conv(y, qy, h, w, e, 3, 1, e, "DEPTHWISE_CONV_2D")
        y, qy, _, _ = conv(y, qy, h, w, e, 1, 1, d)
        n = 4
    cur, q = add(x, q, y, qy, h, w, d)
    ch, cw, cd = h, w, d
    if h >= 4 and rng.integers(0, 2):
        out_d = int(rng.integers(1, 13))
        y, qy, oh, ow = conv(cur, q, ch, cw, cd, 3, 2, out_d)
        y, qy, _, _ = conv(y, qy, oh, ow, out_d, 3, 1, out_d)
        s, qs, _, _ = conv(cur, q, ch, cw, cd, 1, 2, out_d)
        cur, q = add(s, qs, y, qy, oh, ow, out_d)
        n, ch, cw, cd = n + 4, oh, ow, out_d
    sg.outputs = [cur]
    return Case("", b.build(), dict(h=h, w=w, d=d, layers=" ".join(layers), split=n,
                                    grid=(int(rng.integers(1, ch + 1)), 1), tail=False, start=0))
