"""Where a model's outputs here (TFLM's, bit for bit) are not TensorFlow's.

The kernels compute what TFLM's reference kernels compute. In two cases a
converted model meets, TFLM's kernel is not TensorFlow's definition of the
op, and the outputs can be far from what the model gives in TensorFlow or
TF Lite; `tflm-host inspect` names the operators:

- RELU6 on int8 or int16 tensors whose input and output quantization
  differ: TFLM clamps the input to its own quantized 0 and 6 and does not
  rescale to the output's scale and zero point (the converter writes such a
  RELU6 where it cannot fuse the activation into the operator before it:
  after a CONCATENATION, or a dilated convolution converted at an unknown
  batch).
- int8 SPACE_TO_BATCH_ND with padding, whose input zero point is not 0:
  TFLM pads with a value it never sets (0 in a fresh arena, and so here),
  TensorFlow with the zero point (real 0).
"""

from __future__ import annotations

from .model import Model, Tensor


def _quantization(t: Tensor) -> tuple[float, int]:
    return t.scale, t.zero_point


def not_tensorflows(model: Model) -> list[str]:
    """One line per operator whose outputs here are not TensorFlow's."""
    lines = []
    for sg in model.subgraphs:
        where = f"subgraph {sg.index} " if len(model.subgraphs) > 1 else ""
        for op in sg.operators:
            ins = [sg.tensors[i] for i in op.inputs if 0 <= i < len(sg.tensors)]
            outs = [sg.tensors[o] for o in op.outputs if 0 <= o < len(sg.tensors)]
            if not ins or not outs:
                continue
            x, y = ins[0], outs[0]
            if op.opcode == "RELU6" and x.dtype in ("INT8", "INT16") and _quantization(x) != _quantization(y):
                lines.append(f"{where}operator {op.index} (RELU6): input and output quantization differ (scale "
                             f"{x.scale:.6g}, zero point {x.zero_point} in; {y.scale:.6g}, {y.zero_point} out): "
                             "TFLM's kernel, and so this one, clamps without rescaling: its outputs are not "
                             "TensorFlow's")
            elif op.opcode == "SPACE_TO_BATCH_ND" and x.dtype == "INT8" and x.zero_point != 0 and len(ins) > 2 \
                    and (ins[2].data is None or any(ins[2].data)):
                lines.append(f"{where}operator {op.index} (SPACE_TO_BATCH_ND): int8 padding with zero point "
                             f"{x.zero_point}: TFLM pads with 0 (a value it never sets, 0 in a fresh arena), and so "
                             "does this kernel; TensorFlow pads with the zero point")
    return lines
