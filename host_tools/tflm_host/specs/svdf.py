"""SVDF (kernels/svdf.c)."""

from . import register, tensor


def _data(model, sg, op) -> int:
    return 52  # svdf_data_t


def _scratch(model, sg, op) -> list[int]:
    # As TFLM: the time filter's int32/float sums per batch and filter, and
    # for the integer kernel the int32 output accumulators.
    inp, wf = tensor(sg, op, 0), tensor(sg, op, 1)
    batches, filters = inp.shape[0], wf.shape[0]
    sizes = [batches * filters * 4]
    if inp.dtype != "FLOAT32":
        units = filters // op.options.get("Rank", 0)
        sizes.append(batches * units * 4)
    return sizes


register("SVDF", _data, scratch=_scratch)
