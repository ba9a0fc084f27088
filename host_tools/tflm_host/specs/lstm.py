"""UNIDIRECTIONAL_SEQUENCE_LSTM (kernels/lstm.c)."""

from . import register, tensor


def _data(model, sg, op) -> int:
    return 104  # lstm_data_t, whatever the types


def _scratch(model, sg, op) -> list[int]:
    # Four gate buffers of batch x state cells, as TFLM requests them.
    inp, hidden, cell = tensor(sg, op, 0), tensor(sg, op, 18), tensor(sg, op, 19)
    batches = inp.shape[1] if op.options.get("TimeMajor") else inp.shape[0]
    size = batches * hidden.shape[1] * (4 if cell.dtype == "FLOAT32" else 2)
    return [size] * 4


register("UNIDIRECTIONAL_SEQUENCE_LSTM", _data, scratch=_scratch)
