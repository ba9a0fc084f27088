"""What the spatial and matrix kernels (RESIZE_*, BATCH_MATMUL, L2_POOL_2D,
SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, DEPTH_TO_SPACE, SPACE_TO_DEPTH,
MIRROR_PAD, REVERSE_V2) refuse, through the engine under ASan/UBSan: the
error's kind and message. Where TFLM refuses the model too, its interpreter
is asked as well; the others are models TFLM runs out of bounds or into
undefined behaviour (it reads past its input, or before a list)."""

from __future__ import annotations

import numpy as np
import pytest

import opgen  # noqa: F401  (the generators' helpers)
from opgen import random_data, single_op
from engine_host import EngineError, run_engine
from tflm_host.model import load_model
from tflm_host.reference import reference_outputs
from tflm_host.runner import make_inputs

VALUE, NOT_IMPLEMENTED, RUNTIME = 1, 3, 4
Q8 = ([0.1], [3])
Q16 = ([0.1], [0])


def i32(values):
    return np.asarray(values, np.int32)


def resize(op, dtype="FLOAT32", size=(4, 4), out=(1, 4, 4, 1), const=True, q=None, **opts):
    size_t = ((2,), "INT32", i32(size) if const else None)
    return single_op(op, [((1, 2, 2, 1), dtype, None, q), size_t], [(out, dtype, q)], **opts)[0]


def bmm(lhs=(2, 3), rhs=(3, 4), out=(2, 4), dtype="FLOAT32", rtype=None, q=None, rq=None, oq=None, **opts):
    return single_op("BATCH_MATMUL", [(lhs, dtype, None, q), (rhs, rtype or dtype, None, rq or q)],
                     [(out, dtype, oq or q)], **opts)[0]


def space_batch(op, dtype="FLOAT32", shape=(1, 4, 4, 1), out=(4, 2, 2, 1), block=(2, 2), pads=((0, 0), (0, 0)),
                const=True, q=None):
    spatial = len(block)
    return single_op(op, [(shape, dtype, None, q), ((spatial,), "INT32", i32(block) if const else None),
                          ((spatial, 2), "INT32", i32(pads) if const else None)], [(out, dtype, q)])[0]


def mirror(dtype="FLOAT32", pads=((0, 0), (1, 1)), out=(2, 5), const=True, q=None, mode="REFLECT"):
    return single_op("MIRROR_PAD", [((2, 3), dtype, None, q), ((2, 2), "INT32", i32(pads) if const else None)],
                     [(out, dtype, q)], Mode=mode)[0]


def reverse(shape=(2, 3, 4), axes=(1,), dtype="FLOAT32", axis_type="INT32", const=True):
    data = np.asarray(axes, np.int32 if axis_type == "INT32" else np.int64) if const else None
    return single_op("REVERSE_V2", [(shape, dtype), ((len(axes),), axis_type, data)], [(shape, dtype, None)])[0]


# (name, model, status, message, TFLM refuses it too, computed inputs)
CASES = [
    ("bilinear_int16", resize("RESIZE_BILINEAR", "INT16", q=Q16), NOT_IMPLEMENTED,
     "input of type int16 is not supported", True, None),
    ("bilinear_corners_and_centers", resize("RESIZE_BILINEAR", AlignCorners=True, HalfPixelCenters=True), VALUE,
     "half_pixel_centers needs align_corners false", True, None),
    ("bilinear_computed_size", resize("RESIZE_BILINEAR", const=False), NOT_IMPLEMENTED,
     "non-constant size is not supported", True, [i32([4, 4])]),
    ("nearest_computed_size", resize("RESIZE_NEAREST_NEIGHBOR", const=False), NOT_IMPLEMENTED,
     "non-constant size is not supported", True, [i32([4, 4])]),
    ("nearest_int32", resize("RESIZE_NEAREST_NEIGHBOR", "INT32"), NOT_IMPLEMENTED,
     "input of type int32 is not supported", True, None),
    ("bilinear_output_shape", resize("RESIZE_BILINEAR", size=(3, 3), out=(1, 2, 2, 1)), VALUE,
     "output shape is not 1x3x3x1", False, None),
    # TFLM's 10-bit positions pass the input's end for such upscaling.
    ("bilinear_int8_past_input", single_op("RESIZE_BILINEAR", [((1, 1, 1, 1), "INT8", None, Q8),
                                                                ((2,), "INT32", i32([1, 120]))],
                                           [((1, 1, 120, 1), "INT8", Q8)])[0],
     NOT_IMPLEMENTED, "resizing 1x1 to 1x120 reads past the input", False, None),
    ("matmul_int32", bmm(dtype="INT32"), NOT_IMPLEMENTED, "input of type int32 is not supported", True, None),
    ("matmul_mixed", bmm(dtype="INT8", rtype="INT16", q=Q8, rq=Q16), NOT_IMPLEMENTED,
     "int8 x int16 to int8 is not supported", True, None),
    ("matmul_rank_6", bmm(lhs=(1, 1, 1, 1, 2, 3), out=(1, 1, 1, 1, 2, 4)), NOT_IMPLEMENTED,
     "operands of 6 and 2 dimensions are not supported", True, None),
    ("matmul_int16_zero_point", bmm(dtype="INT16", q=([0.1], [2])), VALUE, "int16 zero points must be 0", True, None),
    ("matmul_depths", bmm(rhs=(4, 4)), VALUE, "operands multiply 3 by 4 values", True, None),
    ("matmul_batches", bmm(lhs=(2, 2, 3), rhs=(3, 3, 4), out=(3, 2, 4)), VALUE,
     "batch dimensions 2 and 3 do not broadcast", True, None),
    ("matmul_output_size", bmm(out=(2, 5)), VALUE, "output holds 10 values, the product 8", True, None),
    ("l2_pool_int8", single_op("L2_POOL_2D", [((1, 2, 2, 1), "INT8", None, Q8)], [((1, 1, 1, 1), "INT8", Q8)],
                               Padding="VALID", StrideH=1, StrideW=1, FilterHeight=2, FilterWidth=2)[0],
     NOT_IMPLEMENTED, "input of type int8 is not supported", True, None),
    ("space_to_batch_int16", space_batch("SPACE_TO_BATCH_ND", "INT16", q=Q16), NOT_IMPLEMENTED,
     "input of type int16 is not supported", True, None),
    ("batch_to_space_rank_5", space_batch("BATCH_TO_SPACE_ND", shape=(4, 1, 2, 2, 1), out=(1, 1, 4, 4, 1)), VALUE,
     "input and output need 3 or 4 dimensions alike", True, None),
    ("space_to_batch_block_0", space_batch("SPACE_TO_BATCH_ND", block=(0, 2)), VALUE,
     "block shape and paddings do not give the output's shape", False, None),
    ("batch_to_space_computed_crops", space_batch("BATCH_TO_SPACE_ND", shape=(4, 2, 2, 1), out=(1, 4, 4, 1),
                                                  const=False), RUNTIME,
     "block shape and crops do not give the output's shape", False, [i32([2, 2]), i32([[1, 0], [0, 0]])]),
    ("depth_to_space_int16", single_op("DEPTH_TO_SPACE", [((1, 1, 1, 4), "INT16", None, Q16)],
                                       [((1, 2, 2, 1), "INT16", Q16)], BlockSize=2)[0],
     NOT_IMPLEMENTED, "input of type int16 is not supported", True, None),
    ("space_to_depth_uneven", single_op("SPACE_TO_DEPTH", [((1, 3, 2, 1), "FLOAT32")], [((1, 1, 1, 4), "FLOAT32", None)],
                                        BlockSize=2)[0],
     VALUE, "block size 2 does not turn 1x3x2x1 into 1x1x1x4", True, None),
    ("depth_to_space_block_0", single_op("DEPTH_TO_SPACE", [((1, 1, 1, 4), "FLOAT32")], [((1, 1, 1, 4), "FLOAT32", None)],
                                         BlockSize=0)[0],
     VALUE, "block size 0 does not turn", True, None),
    ("mirror_pad_int16", mirror("INT16", q=Q16), NOT_IMPLEMENTED, "input of type int16 is not supported", True, None),
    ("mirror_pad_reflect_too_far", mirror(pads=((0, 0), (3, 0)), out=(2, 6)), VALUE,
     "paddings do not fit the input in REFLECT mode", False, None),
    ("mirror_pad_computed_too_far", mirror(pads=((0, 0), (4, 0)), out=(2, 7), const=False, mode="SYMMETRIC"), RUNTIME,
     "paddings do not fit the input in SYMMETRIC mode", False, [i32([[0, 0], [4, 0]])]),
    ("mirror_pad_mode", mirror(mode=2), VALUE, "unknown mirror padding mode 2", False, None),
    ("reverse_rank_7", reverse(shape=(1, 1, 1, 1, 1, 1, 2), axes=(6,)), NOT_IMPLEMENTED,
     "at most 6 dimensions supported", True, None),
    ("reverse_apart", reverse(axes=(0, 2)), NOT_IMPLEMENTED, "axes that repeat or are not adjacent", True, None),
    ("reverse_repeated", reverse(axes=(1, 1)), NOT_IMPLEMENTED, "axes that repeat or are not adjacent", True, None),
    ("reverse_out_of_range", reverse(axes=(3,)), VALUE, "axis 3 is out of range for 3 dimensions", True, None),
    ("reverse_computed_apart", reverse(axes=(0, 2), const=False), RUNTIME, "axes that repeat or are not adjacent",
     True, [i32([0, 2])]),
    ("reverse_int64_axis", reverse(axis_type="INT64"), NOT_IMPLEMENTED, "axis of type int64 is not supported", True,
     None),
    ("reverse_no_axis", reverse(axes=()), VALUE, "axes must list 1 to 3 dimensions", False, None),
]


@pytest.mark.parametrize("name, model, status, message, tflm_refuses, computed", CASES, ids=[c[0] for c in CASES])
def test_refused(name, model, status, message, tflm_refuses, computed, tmp_path):
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(model)
    m = load_model(model)
    if computed is None:
        samples = make_inputs(m, "random", seed=1, count=1)
    else:
        shape = m.inputs[0].shape
        samples = [[random_data(np.random.default_rng(1), m.inputs[0].dtype, shape)] + computed]
    with pytest.raises(EngineError) as e:
        run_engine(path, m, samples, tmp_path)
    assert e.value.status == status, str(e.value)
    assert message in str(e.value)
    if tflm_refuses:
        with pytest.raises(RuntimeError):
            reference_outputs(path, samples)
