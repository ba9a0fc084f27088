"""SOFTMAX (kernels/softmax.c), LOGISTIC (kernels/logistic.c) and TANH
(kernels/tanh.c)."""

from . import register, tensor


def _softmax(model, sg, op) -> int:
    # softmax_data_t is 28 bytes; int16 input adds two 513-entry int16 tables.
    size = 28
    if tensor(sg, op, 0).dtype == "INT16":
        size += 2 * 513 * 2
    return size


def _activation(model, sg, op) -> int:
    # logistic_data_t / tanh_data_t: 24 bytes.
    return 24


register("SOFTMAX", _softmax)
register("LOGISTIC", _activation)
register("TANH", _activation)
