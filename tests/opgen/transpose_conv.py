"""TRANSPOSE_CONV models: float32 (fused activations, bias optional), int8
with per-tensor or per-channel weights and int32 bias, int16 activations with
int8 weights and int64 (or int16) bias; strides, SAME and VALID padding,
output sizes as TensorFlow gives them and, now and then, a row or column
more or less (TFLM takes the output tensor's shape as it is)."""

from __future__ import annotations

import numpy as np

from . import Case, act_quant, bias_data, generator, generators, random_data, single_op, weight_quant

# TANH and SIGN_BIT are no clamp for TFLM's transpose convolution.
ACTIVATIONS = ["NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT"]


def _out_size(padding: str, size: int, filt: int, stride: int) -> int:
    return size * stride if padding == "SAME" else (size - 1) * stride + filt


def _tconv(rng: np.random.Generator, dtype: str, bias_type: str | None = None, int64_at_4_mod_8: bool = False) -> Case:
    batches = int(rng.integers(1, 3))
    in_h, in_w = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    in_c, out_c = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    fh, fw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    padding = str(rng.choice(["SAME", "VALID"]))
    out_h, out_w = _out_size(padding, in_h, fh, sh), _out_size(padding, in_w, fw, sw)
    if rng.integers(0, 4) == 0:
        out_h = max(1, out_h + int(rng.integers(-1, 2)))
        out_w = max(1, out_w + int(rng.integers(-1, 2)))
    act = str(rng.choice(ACTIVATIONS))
    if bias_type is None:
        bias_type = {"FLOAT32": "FLOAT32", "INT8": "INT32", "INT16": "INT64"}[dtype]
    has_bias = bias_type == "INT16" or int64_at_4_mod_8 or bool(rng.integers(0, 4))
    per_channel = dtype != "FLOAT32" and bool(rng.integers(0, 2))
    wtype = "FLOAT32" if dtype == "FLOAT32" else "INT8"
    fshape = (out_c, fh, fw, in_c)
    filter_zp = False
    if dtype == "FLOAT32":
        qin = qw = qb = qout = None
        weights = random_data(rng, "FLOAT32", fshape)
    else:
        qin = act_quant(rng, dtype)
        qout = act_quant(rng, dtype, (0.05, 0.5) if dtype == "INT8" else (0.005, 0.2))
        qw = weight_quant(rng, out_c, per_channel, 0)
        if dtype == "INT8" and rng.integers(0, 4) == 0:
            # TFLM ignores the filter zero point: so does the engine.
            qw = (qw[0], [int(z) for z in rng.integers(-5, 6, len(qw[0]))], 0)
            filter_zp = True
        qb = ([qin[0][0] * s for s in qw[0]], [0] * len(qw[0]), 0)
        weights = random_data(rng, "INT8", fshape, -127, 127)
    if bias_type == "INT16":
        bias = rng.integers(-20000, 20000, out_c).astype(np.int16)
    else:
        bias = bias_data(rng, bias_type, out_c)
    out_shape = (batches, out_h, out_w, out_c)
    inputs = [((4,), "INT32", np.array(out_shape, np.int32)), (fshape, wtype, weights, qw),
              ((batches, in_h, in_w, in_c), dtype, None, qin),
              ((out_c,), bias_type, bias, qb) if has_bias else None]
    if not has_bias:
        inputs.pop()  # TFLM counts its inputs: no bias means 3
    model, _ = single_op("TRANSPOSE_CONV", inputs, [(out_shape, dtype, qout)], int64_at_4_mod_8=int64_at_4_mod_8,
                         Padding=padding, StrideH=sh, StrideW=sw, FusedActivationFunction=act)
    return Case("", model, dict(dtype=dtype, input=(batches, in_h, in_w, in_c), filter=fshape, output=out_shape,
                                stride=(sh, sw), padding=padding, act=act, bias=bias_type if has_bias else None,
                                per_channel=per_channel, filter_zp=filter_zp))


generators(_tconv, {"TRANSPOSE_CONV/float32": ("FLOAT32",),
                    "TRANSPOSE_CONV/int8": ("INT8",),
                    "TRANSPOSE_CONV/int16": ("INT16",),
                    "TRANSPOSE_CONV/int16_bias16": ("INT16", "INT16",)})


@generator("TRANSPOSE_CONV/int16_bias64_4_mod_8")
def tconv_int16_bias64_misaligned(rng):
    """int64 bias at 4 modulo 8, as the speech-enhancement network's layers have it."""
    return _tconv(rng, "INT16", "INT64", int64_at_4_mod_8=True)
