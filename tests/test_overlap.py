"""Overlapped placement (engine/overlap.h) against brute force: each op with
a rule, its output placed at every offset from X.off - d - K to X.off + K
over its dying input X (tests/engine/overlap_brute.c, under ASan/UBSan):
from the rule's distance d on, the output is bit-exact with the
non-overlapped run, which is TFLM's (the reference). Also how tight d is,
and models planned with overlaps: bit-exact, and an unsafe overlap in an
offline plan rejected with a ValueError naming the tensors."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import DEVICE_PRELUDE, ROOT, model_files, model_path, run_on
from engine_host import BUILD, tflm_run
from opgen import GENERATORS, act_quant, bias_data, random_data, single_op
from opgen.conv import _quant
from tflm_host import arena
from tflm_host.model import load_model
from tflm_host.planning import OfflinePlan
from tflm_host.reference import reference_outputs

K = 48  # bytes tried beyond the rule on either side


def _conv(dtype: str, h: int, w: int, in_d: int, out_d: int, k: int, s: int, padding: str, dil: int = 1,
          depthwise: bool = False, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    eff = (k - 1) * dil + 1
    oh = (h + s - 1) // s if padding == "SAME" else (h + s - eff) // s
    ow = (w + s - 1) // s if padding == "SAME" else (w + s - eff) // s
    mult = out_d // in_d if depthwise else 1
    fshape = (1, k, k, out_d) if depthwise else (out_d, k, k, in_d)
    wtype = "FLOAT32" if dtype == "FLOAT32" else "INT8"
    btype = {"FLOAT32": "FLOAT32", "INT8": "INT32", "INT16": "INT64"}[dtype]
    if dtype == "FLOAT32":
        qin = qw = qb = qout = None
        weights = random_data(rng, wtype, fshape)
    else:
        qin, qw, qout = _quant(rng, dtype, out_d, True, 3 if depthwise else 0, k * k * (1 if depthwise else in_d))
        qb = ([qin[0][0] * sc for sc in qw[0]], [0] * len(qw[0]), 0)
        weights = random_data(rng, wtype, fshape, -127, 127)
    inputs = [((1, h, w, in_d), dtype, None, qin), (fshape, wtype, weights, qw),
              ((out_d,), btype, bias_data(rng, btype, out_d), qb)]
    options = dict(Padding=padding, StrideH=s, StrideW=s, DilationHFactor=dil, DilationWFactor=dil)
    if depthwise:
        options["DepthMultiplier"] = mult
    model, _ = single_op("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", inputs,
                         [((1, oh, ow, out_d), dtype, qout)], **options)
    return model


def _pool(op: str, dtype: str, h: int, d: int, k: int, s: int, padding: str) -> bytes:
    q = None if dtype == "FLOAT32" else act_quant(np.random.default_rng(1), dtype)
    oh = (h + s - 1) // s if padding == "SAME" else (h + s - k) // s
    model, _ = single_op(op, [((1, h, h, d), dtype, None, q)], [((1, oh, oh, d), dtype, q)], Padding=padding,
                         StrideH=s, StrideW=s, FilterHeight=k, FilterWidth=k)
    return model


def _pad(dtype: str, h: int, d: int, pads: list[list[int]]) -> bytes:
    q = None if dtype == "FLOAT32" else act_quant(np.random.default_rng(2), dtype)
    out = tuple(n + lo + hi for n, (lo, hi) in zip((1, h, h, d), pads))
    model, _ = single_op("PAD", [((1, h, h, d), dtype, None, q), ((4, 2), "INT32", np.array(pads, np.int32))],
                         [(out, dtype, q)])
    return model


def _lstm(dtype: str, batches: int, steps: int, n_input: int, n_state: int, time_major: bool) -> bytes:
    from opgen.lstm import _lstm as lstm_case
    return lstm_case(np.random.default_rng(3), dtype, batches=batches, steps=steps, n_input=n_input,
                     n_state=n_state, time_major=time_major).model


# Every fast path: 1x1 stride 1 (the pointwise GEMM) with channel expansion
# and reduction across the int8 kernel's 32-channel chunks, up to the 64
# channels whose constants it sets up once over an overlapped input (then
# all channels of a pixel pair at once, in order where the distance allows,
# as in kws_ref_model), past them and past the 128 channels whose starting
# sums it computes once, 3x3 strides 1 and 2, SAME
# and VALID, dilation, short rows (gathered windows), windows of more than
# 128 values (gathered a slab at a time; all 40 channels of a pair at once,
# or in chunks past 64 channels), the depthwise 3x3 path
# across its 16-channel chunks (channel by channel over all rows where the
# distance allows, else in bands), the depthwise channels path across its
# chunks, and the other dtypes.
CASES = {
    "conv1x1_expand_int8": lambda: _conv("INT8", 8, 7, 16, 48, 1, 1, "VALID"),
    "conv1x1_reduce_int8": lambda: _conv("INT8", 8, 7, 40, 8, 1, 1, "VALID"),
    "conv1x1_64_int8": lambda: _conv("INT8", 5, 5, 64, 64, 1, 1, "VALID"),
    "conv1x1_96_int8": lambda: _conv("INT8", 3, 5, 24, 96, 1, 1, "VALID"),
    "conv1x1_s2_int8": lambda: _conv("INT8", 9, 9, 8, 36, 1, 2, "SAME"),
    # Wider than the starting sums an overlapped call computes once (128).
    "conv1x1_wide_int8": lambda: _conv("INT8", 4, 3, 8, 136, 1, 1, "VALID"),
    "conv3x3_s1_same_int8": lambda: _conv("INT8", 9, 8, 8, 40, 3, 1, "SAME"),
    "conv3x3_s2_same_int8": lambda: _conv("INT8", 10, 10, 4, 16, 3, 2, "SAME"),
    "conv3x3_s2_valid_int8": lambda: _conv("INT8", 11, 9, 3, 8, 3, 2, "VALID"),
    # One pixel a row: pixels pair across rows, which over an overlapped
    # input they may only do inside a band.
    "conv3x3_narrow_int8": lambda: _conv("INT8", 9, 3, 4, 12, 3, 1, "VALID"),
    "conv3x3_dil2_int8": lambda: _conv("INT8", 10, 10, 8, 8, 3, 1, "SAME", dil=2),
    "conv3x3_c1_int8": lambda: _conv("INT8", 12, 12, 1, 8, 3, 2, "SAME"),
    "conv3x3_large_window_int8": lambda: _conv("INT8", 6, 5, 24, 40, 3, 1, "SAME"),
    "conv5x5_s2_large_window_int8": lambda: _conv("INT8", 7, 7, 16, 70, 5, 2, "SAME"),
    "conv3x3_float32": lambda: _conv("FLOAT32", 7, 7, 4, 6, 3, 1, "SAME"),
    "conv3x3_int16": lambda: _conv("INT16", 7, 7, 4, 6, 3, 2, "SAME"),
    "dw3x3_s1_int8": lambda: _conv("INT8", 9, 9, 40, 40, 3, 1, "SAME", depthwise=True),
    "dw3x3_s2_int8": lambda: _conv("INT8", 10, 10, 24, 24, 3, 2, "SAME", depthwise=True),
    "dw3x3_mult2_int8": lambda: _conv("INT8", 8, 8, 8, 16, 3, 1, "VALID", depthwise=True),
    # The channels-innermost path over more than one 16-channel chunk: all
    # rows in one call where the distance is a whole number of pixels.
    "dw3x3_narrow_int8": lambda: _conv("INT8", 4, 4, 40, 40, 3, 1, "SAME", depthwise=True),
    # 24 channels: the pixel rule's distance a whole number of pixels and of
    # 16 bytes (48s); the distances between, pixel by pixel.
    "dw3x3_s1_c24_int8": lambda: _conv("INT8", 7, 6, 24, 24, 3, 1, "SAME", depthwise=True),
    "dw3x3_s1_c3_int8": lambda: _conv("INT8", 8, 8, 3, 3, 3, 1, "SAME", depthwise=True),
    "dw5x5_s2_int8": lambda: _conv("INT8", 9, 9, 36, 36, 5, 2, "SAME", depthwise=True),
    "dw5x5_dil2_int8": lambda: _conv("INT8", 12, 12, 8, 8, 5, 1, "SAME", dil=2, depthwise=True),
    "dw3x3_float32": lambda: _conv("FLOAT32", 8, 8, 6, 6, 3, 2, "SAME", depthwise=True),
    "dw3x3_int16": lambda: _conv("INT16", 8, 8, 6, 6, 3, 1, "SAME", depthwise=True),
    "avgpool_int8": lambda: _pool("AVERAGE_POOL_2D", "INT8", 9, 8, 3, 2, "SAME"),
    "avgpool_float32": lambda: _pool("AVERAGE_POOL_2D", "FLOAT32", 8, 4, 2, 2, "VALID"),
    "maxpool_int8": lambda: _pool("MAX_POOL_2D", "INT8", 9, 8, 3, 1, "SAME"),
    "maxpool_int16": lambda: _pool("MAX_POOL_2D", "INT16", 8, 4, 2, 2, "VALID"),
    "pad_int8": lambda: _pad("INT8", 6, 8, [[0, 0], [1, 1], [1, 1], [0, 0]]),
    "pad_channels_float32": lambda: _pad("FLOAT32", 5, 3, [[0, 0], [2, 0], [0, 1], [1, 2]]),
    # Sequence ops: output units narrower and wider than the input's, batch
    # and time major (a time-major unit is a step of every batch).
    "lstm_float32": lambda: _lstm("FLOAT32", 2, 5, 7, 5, False),
    "lstm_wide_float32": lambda: _lstm("FLOAT32", 2, 4, 3, 6, False),
    "lstm_time_major_float32": lambda: _lstm("FLOAT32", 3, 4, 3, 5, True),
    "lstm_int8": lambda: _lstm("INT8", 2, 4, 6, 9, False),
    "lstm_time_major_int8": lambda: _lstm("INT8", 2, 5, 9, 4, True),
    "lstm_int16": lambda: _lstm("INT16", 1, 5, 4, 7, False),
    # Views: a memmove when the buffers differ, safe at any overlap.
    "reshape_float32": lambda: single_op("RESHAPE", [((1, 6, 5), "FLOAT32"), ((2,), "INT32", np.array([1, 30], np.int32))],
                                         [((1, 30), "FLOAT32", None)])[0],
}
# Element-wise and random geometries from the generators (a few seeds each).
GENERATED = ["ADD/int8", "MUL/int8", "RELU/int8", "LOGISTIC/int8", "CONV_2D/int8", "DEPTHWISE_CONV_2D/int8",
             "AVERAGE_POOL_2D/int8", "MAX_POOL_2D/float32", "PAD/int8", "PAD/float32",
             "UNIDIRECTIONAL_SEQUENCE_LSTM/float32", "UNIDIRECTIONAL_SEQUENCE_LSTM/int8_hidden_zero_point", "RESHAPE/int8"]


def brute(model: bytes, tmp_path, name: str) -> tuple[str, dict]:
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(model)
    m = load_model(model)
    t = m.inputs[0]
    rng = np.random.default_rng(7)
    data = rng.integers(-128, 128, size=t.nbytes, dtype=np.int8)
    if t.dtype == "FLOAT32":
        data = rng.normal(0, 1, t.nbytes // 4).astype(np.float32).view(np.int8)
    (tmp_path / f"{name}.bin").write_bytes(data.tobytes())
    tflm_run()  # builds the binaries
    args = [str(BUILD / "overlap_brute"), str(path), str(tmp_path / f"{name}.bin"), str(K)]
    # Every allowed distance under the full ASan checks, then every distance
    # (the unsafe ones may overlap a memcpy: ASan's intrinsic checks off).
    for extra, env in ((["safe"], None), ([], dict(os.environ, ASAN_OPTIONS="intercept_intrin=0:replace_intrin=0"))):
        proc = subprocess.run(args + extra, capture_output=True, text=True, timeout=120, env=env)
        out = proc.stdout.strip().splitlines()
        assert proc.returncode == 0 and out and not out[-1].startswith("error"), \
            (name, proc.stdout[-800:], proc.stderr[-2000:])
    last = out[-1].split()
    if last[0] == "none":
        return "none", {}
    info = dict(rule=int(last[1]), tight=int(last[3]), elem=int(last[5]), out=bytes.fromhex(last[7]) if len(last) > 7 else b"")
    # A kernel that also runs backward: its distance above X and how tight it is.
    up = [line.split() for line in out if line.startswith("up ")]
    if up:
        info.update(up=int(up[0][1]), tight_up=int(up[0][3]))
    # The non-overlapped output is TFLM's.
    # Other inputs hold the harness's fill pattern (0xa5 bytes).
    others = [np.full(o.nbytes, 0xa5, np.uint8).view(o.numpy_dtype).reshape(o.shape) for o in m.inputs[1:]]
    ref = reference_outputs(path, [[data.view(t.numpy_dtype).reshape(t.shape)] + others])[0][0]
    assert np.asarray(ref).tobytes() == info["out"], name
    return "rule", info


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_is_safe_and_near_tight(name, tmp_path):
    kind, info = brute(CASES[name](), tmp_path, name)
    assert kind == "rule", f"{name}: no overlap rule"
    # Safe from d on (the binary fails otherwise); tight within a row pair.
    assert info["tight"] <= info["rule"]
    print(f"{name}: rule {info['rule']} tight {info['tight']}")


# The int8 depthwise layers of one output channel per input channel: the
# pixel rule's distance (engine/overlap.h), worked out by hand from each
# geometry: px bytes a pixel, P = px * max over output pixels p of
# (p - first(p)) rounded up to a multiple of px and 16, where the row rule's
# is larger. 3x3 stride 1 SAME: first(p) a row and a pixel back, W + 1
# pixels (the row rule: two rows).
PIXEL_RULE = {
    "dw3x3_s1_int8": 400,       # 9x9x40: 10 pixels of 40 B, a multiple of 80 (row rule 720)
    "dw3x3_s1_c24_int8": 192,   # 7x6x24: 7 pixels of 24 B = 168, up to 48s (row rule 288)
    "dw3x3_s1_c3_int8": 48,     # 8x8x3: 9 pixels of 3 B = 27, up to 48s: the row rule's 48 too
    "dw3x3_narrow_int8": 240,   # 4x4x40: 5 pixels = 200, up to 80s (row rule 320)
    "dw3x3_s2_int8": 0,         # 10x10x24, stride 2, no padding before: no pixel reads behind its own
    "dw5x5_s2_int8": 288,       # 9x9x36, pad 2: output (1, 1) reads from (0, 0), 6 pixels = 216, up to 144s
    "dw5x5_dil2_int8": 416,     # 12x12x8, reach 9, pad 4: output (4, 4) from (0, 0), 52 pixels (row rule 480)
}


@pytest.mark.parametrize("name", sorted(PIXEL_RULE))
def test_depthwise_pixel_rule(name, tmp_path):
    """The int8 depthwise layers of multiplier 1 take the pixel rule where
    it is smaller than the row rule: their output may start that near below
    the input, at a whole number of pixels (the kernel's own loops) or not
    (pixel by pixel), bit-exact from there on (the binary fails otherwise)."""
    kind, info = brute(CASES[name](), tmp_path, name)
    assert kind == "rule" and info["rule"] == PIXEL_RULE[name], (name, info)
    assert info["tight"] <= info["rule"]


BACKWARD = sorted(n for n in CASES if n.startswith("conv") and n.endswith("_int8"))


@pytest.mark.parametrize("name", BACKWARD)
def test_backward_rule_is_safe_and_tight(name, tmp_path):
    """The int8 CONV_2D also runs backward: its output anywhere from e
    bytes above its input on is bit-exact (the binary fails otherwise), and
    e is within a unit of pixels of the least distance that is."""
    kind, info = brute(CASES[name](), tmp_path, name)
    assert kind == "rule" and "up" in info, name
    assert info["tight_up"] <= info["up"]
    m = load_model(CASES[name]())
    row_x = m.inputs[0].nbytes // m.inputs[0].shape[1]
    # Exact for windows of rows; pointwise layers go by pixels, within a row of it.
    if "1x1" in name:
        assert info["up"] - info["tight_up"] <= row_x, name
    else:
        assert info["tight_up"] == info["up"], name


@pytest.mark.parametrize("name", ["dw3x3_s1_int8", "avgpool_int8", "maxpool_int8", "pad_int8", "conv3x3_float32", "lstm_int8"])
def test_forward_only_kernels(name, tmp_path):
    """Kernels that run forward only give no distance above."""
    kind, info = brute(CASES[name](), tmp_path, name)
    assert kind == "rule" and "up" not in info, name


def test_kws_zigzags():
    """kws_ref_model: four depthwise-pointwise blocks over 25x5x64 maps
    (8,000 bytes, rows of 320). Each depthwise output lies a row and a pixel
    (384 bytes, the pixel rule) below its input, each pointwise output above
    its own by the same, so the head is the map and 384 bytes
    (docs/planning.md gives the figures); overlaps TFLM's kernels also run
    (an offline plan's) need the two per block."""
    model = load_model(model_path("kws_ref_model.tflite"))
    layout = arena.plan_layout(model, "greedy")
    forward = arena.plan_layout(model, "greedy", forward_overlaps=True)
    live = [b for b in layout.buffers if b.size == 8000]
    above = [(y, x) for y in layout.buffers for x in live
             if x is not y and x.last == y.first and x.offset < y.offset < x.offset + x.size]
    assert len(above) == 4 and all(y.offset - x.offset >= 320 for y, x in above)  # the rule: a row
    pixel = (5 + 1) * 64
    assert len(live) == 9 and layout.head == 8000 + pixel
    assert forward.head == 8000 + 4 * (pixel + 320)
    doc = " ".join((ROOT / "docs" / "planning.md").read_text().split())
    assert f"head {layout.head:,} bytes, {forward.head:,} forward only" in doc
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"kws_ref_model's head {layout.head:,} bytes instead of {forward.head:,}" in readme
    # The device's greedy plan as an offline plan: accepted, the same head;
    # the last pointwise output (at its rule's row above its input) moved 16
    # bytes nearer: refused.
    offsets = [r.offset if r.planned else -1 for r in layout.records]
    n = layout.n_tensors
    assert arena.plan_layout(model, "offline", plan=OfflinePlan(offsets[:n], offsets[n:] or None)).head == layout.head
    y, x = max(above, key=lambda p: p[0].first)
    offsets[y.index] = x.offset + 320 - 16
    with pytest.raises(ValueError, match=rf"^offline plan: tensor {y.index} overlaps tensor {x.index} \(the input "
                       rf"that dies at the operator writing it\) unsafely: it may start at offset {x.offset - 320} or "
                       rf"lower, or {x.offset + 320} or higher, not at {x.offset + 304}$"):
        arena.plan_layout(model, "offline", plan=OfflinePlan(offsets[:n], offsets[n:] or None))


@pytest.mark.parametrize("target", ["host", "unix", "MPS2_AN385", "NETDUINOPLUS2", "MICROBIT"])
def test_backward_plan_runs_bit_exact(target, tmp_path, capsys):
    """`tflm-host plan --backward` writes the zigzag into kws_ref_model's
    metadata (a plan for this runtime: the plain plan keeps to the overlaps
    TFLM's kernels run, a row pair per block); the device runs it bit-exact
    with TFLM's reference on the original model, each core's loops going
    backward."""
    from tflm_host import cli
    out_path = tmp_path / "kws_backward.tflite"
    assert cli.main(["plan", str(model_path("kws_ref_model.tflite")), "--backward", "--embed", "-o", str(out_path)]) == 0
    text = capsys.readouterr().out
    # The map (8,000 bytes), then per block a depthwise output a row and a
    # pixel below (the pixel rule: 384 bytes), a pointwise one a row above
    # (320): zigzagging, 384 bytes of room in all; forward only, four blocks'.
    zigzag, forward = 8000 + (5 + 1) * 64, 8000 + 4 * ((5 + 1) * 64 + 320)
    assert re.search(rf"^  this plan +{zigzag} ", text, re.M), text
    assert cli.main(["plan", str(model_path("kws_ref_model.tflite"))]) == 0
    text = capsys.readouterr().out
    assert re.search(rf"^  this plan +{forward} ", text, re.M) and "--backward plans that way" in text, text
    layout = arena.plan_layout(load_model(out_path.read_bytes()))
    assert layout.planner == "offline" and layout.head == zigzag
    assert cli.main(["compare", str(out_path), "--target", target, "--count", "3"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("result: bit-exact")


@pytest.mark.parametrize("arch", ["dsp", "thumb2", "v6m"])
def test_rule_with_each_core_family_loops(arch, tmp_path, monkeypatch):
    """The int8 conv and depthwise cases through the engine built with each
    core family's loops (test_speed_paths' builds; dsp and v6m run the
    non-overlapped rows in bands): safe from d on as with the portable loops."""
    from test_speed_paths import arch_binary
    monkeypatch.setattr(sys.modules[__name__], "BUILD", arch_binary(arch).parent)
    for name in sorted(n for n in CASES if n.endswith("_int8") and n.startswith(("conv", "dw"))):
        kind, info = brute(CASES[name](), tmp_path, name)
        assert kind == "rule" and info["tight"] <= info["rule"], name


@pytest.mark.parametrize("gen", GENERATED)
def test_rule_on_generated_models(gen, tmp_path):
    for seed in range(3):
        rng = np.random.default_rng(100 + seed)
        case = GENERATORS[gen](rng)
        kind, info = brute(case.model, tmp_path, f"{gen.replace('/', '_')}_{seed}")
        if kind == "rule":
            assert info["tight"] <= info["rule"]


def _unsafe_plan() -> tuple[list[int], str]:
    """person_detect's greedy plan with one overlapped output moved too close
    to the input it is written over, and the host validator's message."""
    model = load_model(model_path("person_detect.tflite"))
    layout = arena.plan_layout(model, "greedy")
    # An overlapped pair of the greedy plan: output y below its dying input x,
    # written by a depthwise layer (a kernel that runs forward only).
    depthwise = {op.outputs[0] for op in model.main.operators if op.opcode == "DEPTHWISE_CONV_2D"}
    pairs = [(y, x) for y in layout.buffers for x in layout.buffers
             if x is not y and x.last == y.first and x.offset > y.offset and y.offset + y.size > x.offset
             and y.index in depthwise]
    assert pairs, "the greedy plan overlaps nothing"
    y, x = pairs[0]
    offsets = [r.offset if r.planned else -1 for r in layout.records]
    n = layout.n_tensors
    offsets[y.index] = x.offset - 16 * ((x.offset - y.offset) // 32)  # half as far below x
    with pytest.raises(ValueError, match=r"offline plan: tensor \d+ overlaps tensor \d+, the input that dies at the "
                       r"operator writing it, unsafely: it must start \d+ bytes or more below it") as e:
        arena.plan_layout(model, "offline", plan=OfflinePlan(offsets[:n], offsets[n:] or None))
    assert re.search(rf"tensor {y.index}\b", str(e.value))
    # The greedy plan itself passes the same check.
    good = [r.offset if r.planned else -1 for r in layout.records]
    assert arena.plan_layout(model, "offline", plan=OfflinePlan(good[:n], good[n:] or None)).head == layout.head
    return offsets, str(e.value)


def test_unsafe_overlap_is_rejected():
    """The host's validator (the engine's) names the tensors."""
    _unsafe_plan()


@pytest.mark.parametrize("target", ["unix", "NETDUINO2"])
def test_unsafe_overlap_is_rejected_on_device(target):
    """The device's validator: the same ValueError, and the greedy plan runs."""
    offsets, message = _unsafe_plan()
    code = DEVICE_PRELUDE + f"""
m = tflm.Model(load('person_detect.tflite'))
attempt(lambda: tflm.Interpreter(m, plan={offsets!r}))
"""
    out = run_on(target, [code], model_files("person_detect.tflite")).splitlines()
    assert out == [f"ValueError {message}"]


@pytest.mark.parametrize("name", ["trained_lstm.tflite", "trained_lstm_int8.tflite"])
def test_lstm_and_view_overlaps_validated(name):
    """trained_lstm's greedy plan writes the LSTM's output over its input and
    the RESHAPE's output over the LSTM's (d = 0 for both): the validator
    accepts that plan, and refuses each output moved 16 bytes above the start
    of the input it overlaps (it would overwrite input steps still unread)."""
    model = load_model(model_path(name))
    layout = arena.plan_layout(model, "greedy")
    ops = {model.main.operators[i].opcode: model.main.operators[i] for i in range(len(model.main.operators))}
    pairs = [(y, x) for y in layout.buffers for x in layout.buffers
             if x is not y and x.last == y.first and x.offset >= y.offset and y.offset + y.size > x.offset]
    written = {y.index for y, _ in pairs}
    assert {ops["UNIDIRECTIONAL_SEQUENCE_LSTM"].outputs[0], ops["RESHAPE"].outputs[0]} <= written, pairs
    n = layout.n_tensors
    good = [r.offset if r.planned else -1 for r in layout.records]
    assert arena.plan_layout(model, "offline", plan=OfflinePlan(good[:n], good[n:] or None)).head == layout.head
    for y, x in pairs:
        offsets = list(good)
        offsets[y.index] = x.offset + 16
        with pytest.raises(ValueError, match=rf"offline plan: tensor {y.index} overlaps tensor {x.index}, the input "
                           r"that dies at the operator writing it, unsafely: it must start 0 bytes or more below it"):
            arena.plan_layout(model, "offline", plan=OfflinePlan(offsets[:n], offsets[n:] or None))


@pytest.mark.parametrize("target", ["unix", "NETDUINO2"])
def test_lstm_overlap_rejected_on_device(target):
    """The device's validator gives the host's ValueError for an LSTM output
    moved above the start of its input."""
    model = load_model(model_path("trained_lstm_int8.tflite"))
    layout = arena.plan_layout(model, "greedy")
    lstm = next(op for op in model.main.operators if op.opcode == "UNIDIRECTIONAL_SEQUENCE_LSTM")
    y = next(b for b in layout.buffers if b.index == lstm.outputs[0])
    x = next(b for b in layout.buffers if b.index == lstm.inputs[0])
    offsets = [r.offset if r.planned else -1 for r in layout.records]
    offsets[y.index] = x.offset + 16
    n = layout.n_tensors
    with pytest.raises(ValueError) as e:
        arena.plan_layout(model, "offline", plan=OfflinePlan(offsets[:n], offsets[n:] or None))
    code = DEVICE_PRELUDE + f"""
m = tflm.Model(load('trained_lstm_int8.tflite'))
attempt(lambda: tflm.Interpreter(m, plan={offsets!r}))
"""
    out = run_on(target, [code], model_files("trained_lstm_int8.tflite")).splitlines()
    assert out == [f"ValueError {e.value}"]
