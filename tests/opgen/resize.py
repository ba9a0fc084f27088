"""RESIZE_BILINEAR (float32, int8) and RESIZE_NEAREST_NEIGHBOR (float32,
int8, int16) models: up- and downscaling, sizes of 1, batches, every
combination of align_corners and half_pixel_centers TFLM takes."""

from __future__ import annotations

import numpy as np

from . import Case, ErrorCase, act_quant, error_case, generator, random_data, single_op

NP = {"FLOAT32": np.float32, "INT8": np.int8, "INT16": np.int16}


def _inputs(rng, dtype, shape, specials):
    """Three input sets; some with the type's limits or (float) signed zeros
    and, where the op only copies values, infinities and NaN."""
    sets = []
    for _ in range(3):
        x = random_data(rng, dtype, shape)
        if rng.integers(0, 2):
            mask = rng.integers(0, 3, shape) == 0
            if dtype == "FLOAT32":
                x[mask] = rng.choice(np.asarray(specials, np.float32), int(mask.sum()))
            else:
                info = np.iinfo(NP[dtype])
                x[mask] = rng.choice([info.min, info.max, 0, -1], int(mask.sum()))
        sets.append([x])
    return sets


def _resize(rng, op, dtype):
    bilinear = op == "RESIZE_BILINEAR"
    batches = int(rng.integers(1, 3))
    depth = int(rng.integers(1, 5))
    in_h, in_w = (int(v) for v in rng.integers(1, 7, 2))
    # Up to 3x up or down, and sizes of 1.
    out_h, out_w = (int(rng.integers(1, 3 * v + 2)) for v in (in_h, in_w))
    if bilinear:
        ac, hpc = [(False, False), (True, False), (False, True)][int(rng.integers(0, 3))]
    else:
        ac, hpc = bool(rng.integers(0, 2)), bool(rng.integers(0, 2))
    q = act_quant(rng, dtype) if dtype != "FLOAT32" else None
    in_shape, out_shape = (batches, in_h, in_w, depth), (batches, out_h, out_w, depth)
    size = np.asarray([out_h, out_w], np.int32)
    model, _ = single_op(op, [(in_shape, dtype, None, q), ((2,), "INT32", size)], [(out_shape, dtype, q)],
                         AlignCorners=ac, HalfPixelCenters=hpc)
    # Bilinear float sums: signed zeros (x + 0 makes -0 +0); nearest copies bits.
    specials = [0.0, -0.0, 1e30, -1e30] if bilinear else [0.0, -0.0, np.inf, -np.inf, np.nan]
    return Case("", model, dict(op=op, dtype=dtype, input=in_shape, size=(out_h, out_w), align_corners=ac,
                                half_pixel_centers=hpc),
                inputs=_inputs(rng, dtype, in_shape, specials))


for _dt in ("FLOAT32", "INT8"):
    generator(f"RESIZE_BILINEAR/{_dt.lower()}")(lambda rng, dt=_dt: _resize(rng, "RESIZE_BILINEAR", dt))
for _dt in ("FLOAT32", "INT8", "INT16"):
    generator(f"RESIZE_NEAREST_NEIGHBOR/{_dt.lower()}")(
        lambda rng, dt=_dt: _resize(rng, "RESIZE_NEAREST_NEIGHBOR", dt))


# -- what TFLM refuses, or runs out of bounds ---------------------------------------

def _resize_model(op, dtype="FLOAT32", size=(4, 4), out=(1, 4, 4, 1), const=True, in_shape=(1, 2, 2, 1), **opts):
    q = ([0.1], [0]) if dtype in ("INT8", "INT16") else None
    size_t = ((2,), "INT32", np.asarray(size, np.int32) if const else None)
    return single_op(op, [(in_shape, dtype, None, q), size_t], [(out, dtype, q)], **opts)[0]


def _x(dtype="FLOAT32", shape=(1, 2, 2, 1)):
    return np.zeros(shape, NP.get(dtype, np.int32))


@error_case("RESIZE_BILINEAR/int16")
def _bilinear_int16():
    return ErrorCase("", _resize_model("RESIZE_BILINEAR", "INT16"), [_x("INT16")],
                     "NotImplementedError input of type int16 is not supported")


@error_case("RESIZE_BILINEAR/align_corners_and_half_pixel_centers")
def _bilinear_both():
    return ErrorCase("", _resize_model("RESIZE_BILINEAR", AlignCorners=True, HalfPixelCenters=True), [_x()],
                     "ValueError half_pixel_centers needs align_corners false")


@error_case("RESIZE_BILINEAR/computed_size")
def _bilinear_size():
    return ErrorCase("", _resize_model("RESIZE_BILINEAR", const=False), [_x(), np.array([4, 4], np.int32)],
                     "NotImplementedError non-constant size is not supported")


@error_case("RESIZE_NEAREST_NEIGHBOR/computed_size")
def _nearest_size():
    return ErrorCase("", _resize_model("RESIZE_NEAREST_NEIGHBOR", const=False), [_x(), np.array([4, 4], np.int32)],
                     "NotImplementedError non-constant size is not supported")


@error_case("RESIZE_NEAREST_NEIGHBOR/int32")
def _nearest_int32():
    return ErrorCase("", _resize_model("RESIZE_NEAREST_NEIGHBOR", "INT32"), [_x("INT32")],
                     "NotImplementedError input of type int32 is not supported")


@error_case("RESIZE_BILINEAR/output_shape")
def _bilinear_out():
    return ErrorCase("", _resize_model("RESIZE_BILINEAR", size=(3, 3), out=(1, 2, 2, 1)), [_x()],
                     "ValueError output shape is not 1x3x3x1", tflm=False,
                     why="TFLM writes the 3x3 result into the 2x2 output")


@error_case("RESIZE_BILINEAR/int8_past_input")
def _bilinear_past():
    model = _resize_model("RESIZE_BILINEAR", "INT8", size=(1, 120), out=(1, 1, 120, 1), in_shape=(1, 1, 1, 1))
    return ErrorCase("", model, [_x("INT8", (1, 1, 1, 1))],
                     "NotImplementedError resizing 1x1 to 1x120 reads past the input", tflm=False,
                     why="TFLM's 10-bit positions pass the input's end for such upscaling: it reads past the input")
