"""Builds .tflite models from Python: tensors, operators, options, metadata.

    b = ModelBuilder()
    sg = b.subgraph()
    x = sg.tensor((1, 4), "INT8", quant=([0.1], [3]))
    w = sg.tensor((2, 4), "INT8", data=np.ones((2, 4), np.int8), quant=([0.05], [0]))
    y = sg.tensor((1, 2), "INT8", quant=([0.2], [-1]))
    sg.op("FULLY_CONNECTED", [x, w, -1], [y], FusedActivationFunction="RELU")
    sg.inputs, sg.outputs = [x], [y]
    data = b.build()

Options are given by their schema field names (CamelCase, as the tflite
package spells them); enum options (activations, padding) may be names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import flatbuffers
import numpy as np
import tflite

from tflm_host import schema

# Options table of each builtin op that has one.
OPTIONS_TYPE: dict[str, str] = {
    "ADD": "AddOptions", "AVERAGE_POOL_2D": "Pool2DOptions", "CONCATENATION": "ConcatenationOptions",
    "CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "FULLY_CONNECTED": "FullyConnectedOptions", "MAX_POOL_2D": "Pool2DOptions", "MUL": "MulOptions",
    "RESHAPE": "ReshapeOptions", "SOFTMAX": "SoftmaxOptions", "SUB": "SubOptions", "DIV": "DivOptions",
    "SQUEEZE": "SqueezeOptions", "STRIDED_SLICE": "StridedSliceOptions", "SPLIT": "SplitOptions",
    "SPLIT_V": "SplitVOptions", "PACK": "PackOptions", "UNPACK": "UnpackOptions", "MEAN": "ReducerOptions",
    "SUM": "ReducerOptions", "LEAKY_RELU": "LeakyReluOptions", "TRANSPOSE_CONV": "TransposeConvOptions",
    "GATHER": "GatherOptions", "SVDF": "SVDFOptions", "PAD": "PadOptions", "PADV2": "PadV2Options",
    "TRANSPOSE": "TransposeOptions", "EXPAND_DIMS": "ExpandDimsOptions", "CAST": "CastOptions",
    "QUANTIZE": "QuantizeOptions", "DEQUANTIZE": "DequantizeOptions", "SLICE": "SliceOptions",
    "MINIMUM": "MaximumMinimumOptions", "MAXIMUM": "MaximumMinimumOptions", "HARD_SWISH": "HardSwishOptions",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions", "CALL_ONCE": "CallOnceOptions",
    "VAR_HANDLE": "VarHandleOptions", "READ_VARIABLE": "ReadVariableOptions",
    "ASSIGN_VARIABLE": "AssignVariableOptions", "IF": "IfOptions", "WHILE": "WhileOptions",
    "EQUAL": "EqualOptions", "NOT_EQUAL": "NotEqualOptions", "GREATER": "GreaterOptions",
    "GREATER_EQUAL": "GreaterEqualOptions", "LESS": "LessOptions", "LESS_EQUAL": "LessEqualOptions",
    "LOGICAL_AND": "LogicalAndOptions", "LOGICAL_OR": "LogicalOrOptions", "LOGICAL_NOT": "LogicalNotOptions",
    "SELECT_V2": "SelectV2Options", "FLOOR_DIV": "FloorDivOptions", "FLOOR_MOD": "FloorModOptions",
    "SQUARED_DIFFERENCE": "SquaredDifferenceOptions", "ADD_N": "AddNOptions",
    "ARG_MAX": "ArgMaxOptions", "ARG_MIN": "ArgMinOptions", "REDUCE_MAX": "ReducerOptions",
    "REDUCE_MIN": "ReducerOptions", "REDUCE_ALL": "ReducerOptions", "CUMSUM": "CumsumOptions",
    "GATHER_ND": "GatherNdOptions", "DYNAMIC_UPDATE_SLICE": "DynamicUpdateSliceOptions",
    "SHAPE": "ShapeOptions", "FILL": "FillOptions", "ZEROS_LIKE": "ZerosLikeOptions",
    "BROADCAST_TO": "BroadcastToOptions",
    "L2_NORMALIZATION": "L2NormOptions", "LOG_SOFTMAX": "LogSoftmaxOptions",
    "RESIZE_BILINEAR": "ResizeBilinearOptions", "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
    "BATCH_MATMUL": "BatchMatMulOptions", "L2_POOL_2D": "Pool2DOptions",
    "BATCH_TO_SPACE_ND": "BatchToSpaceNDOptions", "SPACE_TO_BATCH_ND": "SpaceToBatchNDOptions",
    "DEPTH_TO_SPACE": "DepthToSpaceOptions", "SPACE_TO_DEPTH": "SpaceToDepthOptions",
    "MIRROR_PAD": "MirrorPadOptions", "REVERSE_V2": "ReverseV2Options", "REDUCE_PROD": "ReducerOptions",
}

_ENUMS = {
    "FusedActivationFunction": {k: v for k, v in vars(tflite.ActivationFunctionType).items() if not k.startswith("_")},
    "Padding": {k: v for k, v in vars(tflite.Padding).items() if not k.startswith("_")},
    # Tensor types (ARG_MAX/ARG_MIN's output_type, SHAPE's out_type).
    "OutputType": {k: v for k, v in vars(tflite.TensorType).items() if not k.startswith("_")},
    "OutType": {k: v for k, v in vars(tflite.TensorType).items() if not k.startswith("_")},
    "Mode": {k: v for k, v in vars(tflite.MirrorPadMode).items() if not k.startswith("_")},
}


@dataclass
class _Tensor:
    shape: tuple[int, ...]
    dtype: str
    data: bytes | None
    quant: tuple[list[float], list[int], int] | None
    name: str
    variable: bool
    signature: tuple[int, ...] | None = None


@dataclass
class _Op:
    opcode: str
    custom: str | None
    inputs: list[int]
    outputs: list[int]
    options: dict[str, Any]
    custom_options: bytes | None
    intermediates: list[int]


@dataclass
class SubgraphBuilder:
    name: str
    tensors: list[_Tensor] = field(default_factory=list)
    ops: list[_Op] = field(default_factory=list)
    inputs: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)

    def tensor(self, shape, dtype: str, data: Any = None, quant=None, name: str | None = None,
               variable: bool = False, signature=None) -> int:
        """Adds a tensor; data (array or bytes) makes it a constant; quant is
        (scales, zero_points) or (scales, zero_points, quantized_dimension);
        signature is the shape_signature (-1 where a size is unknown)."""
        dtype = dtype.upper()
        if dtype not in schema.TENSOR_TYPES:
            raise ValueError(f"unknown tensor type {dtype}")
        raw = None
        if data is not None:
            raw = data if isinstance(data, (bytes, bytearray)) else \
                np.ascontiguousarray(np.asarray(data, dtype=schema.NUMPY_DTYPES[dtype])).tobytes()
        q = None
        if quant is not None:
            scales, zps = list(quant[0]), list(quant[1])
            q = (scales, zps, quant[2] if len(quant) > 2 else 0)
        self.tensors.append(_Tensor(tuple(int(d) for d in shape), dtype, raw, q,
                                    name or f"t{len(self.tensors)}", variable,
                                    None if signature is None else tuple(int(d) for d in signature)))
        return len(self.tensors) - 1

    def op(self, opcode: str, inputs: list[int], outputs: list[int], custom_options: bytes | None = None,
           intermediates: list[int] | None = None, **options) -> int:
        custom = None
        if opcode.startswith("CUSTOM:"):
            opcode, custom = "CUSTOM", opcode.split(":", 1)[1]
        if opcode not in schema.OP_CODES:
            raise ValueError(f"unknown op {opcode}")
        self.ops.append(_Op(opcode, custom, list(inputs), list(outputs), options, custom_options,
                            list(intermediates or [])))
        return len(self.ops) - 1


class ModelBuilder:
    def __init__(self, description: str = "built by tflm-host") -> None:
        self.description = description
        self.subgraphs: list[SubgraphBuilder] = []
        self.metadata: dict[str, bytes] = {}

    def subgraph(self, name: str = "main") -> SubgraphBuilder:
        sg = SubgraphBuilder(name)
        self.subgraphs.append(sg)
        return sg

    # -- serialisation -------------------------------------------------------

    def build(self, data_alignment: int = 16, own_buffers: bool = False) -> bytes:
        """The model's bytes. Buffer data is 16-byte aligned, as today's
        converter writes it; data_alignment=4 writes it as older converters
        did (int64 data can then sit at 4 modulo 8). own_buffers: each tensor
        without data has an empty buffer of its own (TensorFlow's converter
        writes them so), not buffer 0."""
        b = flatbuffers.Builder(1024)
        buffers: list[bytes | None] = [None]  # buffer 0 is empty by convention
        opcodes: list[tuple[str, str | None]] = []

        def data_vector(raw: bytes) -> int:
            b.StartVector(1, len(raw), data_alignment)
            b.head -= len(raw)
            b.Bytes[b.head:b.head + len(raw)] = raw
            return b.EndVector()

        def int_vector(values, start) -> int:
            start(b, len(values))
            for v in reversed(values):
                b.PrependInt32(int(v))
            return b.EndVector()

        def offsets_vector(offsets, start) -> int:
            start(b, len(offsets))
            for o in reversed(offsets):
                b.PrependUOffsetTRelative(o)
            return b.EndVector()

        subgraph_offsets = []
        for sg in self.subgraphs:
            tensor_offsets = []
            for t in sg.tensors:
                buffer_index = 0
                if t.data is not None or own_buffers:
                    buffers.append(t.data)
                    buffer_index = len(buffers) - 1
                name = b.CreateString(t.name)
                shape = int_vector(t.shape, tflite.TensorStartShapeVector)
                signature = None if t.signature is None else \
                    int_vector(t.signature, tflite.TensorStartShapeSignatureVector)
                quant = None
                if t.quant is not None:
                    scales, zps, dim = t.quant
                    tflite.QuantizationParametersStartScaleVector(b, len(scales))
                    for s in reversed(scales):
                        b.PrependFloat32(float(s))
                    scale_vec = b.EndVector()
                    tflite.QuantizationParametersStartZeroPointVector(b, len(zps))
                    for z in reversed(zps):
                        b.PrependInt64(int(z))
                    zp_vec = b.EndVector()
                    tflite.QuantizationParametersStart(b)
                    tflite.QuantizationParametersAddScale(b, scale_vec)
                    tflite.QuantizationParametersAddZeroPoint(b, zp_vec)
                    tflite.QuantizationParametersAddQuantizedDimension(b, dim)
                    quant = tflite.QuantizationParametersEnd(b)
                tflite.TensorStart(b)
                tflite.TensorAddShape(b, shape)
                tflite.TensorAddType(b, schema.TENSOR_TYPES.index(t.dtype))
                tflite.TensorAddBuffer(b, buffer_index)
                tflite.TensorAddName(b, name)
                if quant is not None:
                    tflite.TensorAddQuantization(b, quant)
                if t.variable:
                    tflite.TensorAddIsVariable(b, True)
                if signature is not None:
                    tflite.TensorAddShapeSignature(b, signature)
                tensor_offsets.append(tflite.TensorEnd(b))
            op_offsets = []
            for op in sg.ops:
                key = (op.opcode, op.custom)
                if key not in opcodes:
                    opcodes.append(key)
                options_name = OPTIONS_TYPE.get(op.opcode)
                options = self._options(b, options_name, op.options) if op.options or options_name else None
                custom_opts = None
                if op.custom_options is not None:
                    custom_opts = b.CreateByteVector(op.custom_options)
                inputs = int_vector(op.inputs, tflite.OperatorStartInputsVector)
                outputs = int_vector(op.outputs, tflite.OperatorStartOutputsVector)
                inter = int_vector(op.intermediates, tflite.OperatorStartIntermediatesVector) \
                    if op.intermediates else None
                tflite.OperatorStart(b)
                tflite.OperatorAddOpcodeIndex(b, opcodes.index(key))
                tflite.OperatorAddInputs(b, inputs)
                tflite.OperatorAddOutputs(b, outputs)
                if options is not None:
                    tflite.OperatorAddBuiltinOptionsType(b, getattr(tflite.BuiltinOptions, options_name))
                    tflite.OperatorAddBuiltinOptions(b, options)
                if custom_opts is not None:
                    tflite.OperatorAddCustomOptions(b, custom_opts)
                if inter is not None:
                    tflite.OperatorAddIntermediates(b, inter)
                op_offsets.append(tflite.OperatorEnd(b))
            tensors = offsets_vector(tensor_offsets, tflite.SubGraphStartTensorsVector)
            ops = offsets_vector(op_offsets, tflite.SubGraphStartOperatorsVector)
            inputs = int_vector(sg.inputs, tflite.SubGraphStartInputsVector)
            outputs = int_vector(sg.outputs, tflite.SubGraphStartOutputsVector)
            name = b.CreateString(sg.name)
            tflite.SubGraphStart(b)
            tflite.SubGraphAddTensors(b, tensors)
            tflite.SubGraphAddInputs(b, inputs)
            tflite.SubGraphAddOutputs(b, outputs)
            tflite.SubGraphAddOperators(b, ops)
            tflite.SubGraphAddName(b, name)
            subgraph_offsets.append(tflite.SubGraphEnd(b))

        metadata_offsets = []
        for name, data in self.metadata.items():
            buffers.append(data)
            name_off = b.CreateString(name)
            tflite.MetadataStart(b)
            tflite.MetadataAddName(b, name_off)
            tflite.MetadataAddBuffer(b, len(buffers) - 1)
            metadata_offsets.append(tflite.MetadataEnd(b))

        opcode_offsets = []
        for opcode, custom in opcodes:
            code = schema.OP_CODES[opcode]
            custom_off = b.CreateString(custom) if custom else None
            tflite.OperatorCodeStart(b)
            tflite.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, 127))
            tflite.OperatorCodeAddBuiltinCode(b, code)
            tflite.OperatorCodeAddVersion(b, 1)
            if custom_off is not None:
                tflite.OperatorCodeAddCustomCode(b, custom_off)
            opcode_offsets.append(tflite.OperatorCodeEnd(b))

        buffer_offsets = []
        for data in buffers:
            vec = data_vector(data) if data else None
            tflite.BufferStart(b)
            if vec is not None:
                tflite.BufferAddData(b, vec)
            buffer_offsets.append(tflite.BufferEnd(b))

        description = b.CreateString(self.description)
        opcodes_vec = offsets_vector(opcode_offsets, tflite.ModelStartOperatorCodesVector)
        subgraphs_vec = offsets_vector(subgraph_offsets, tflite.ModelStartSubgraphsVector)
        buffers_vec = offsets_vector(buffer_offsets, tflite.ModelStartBuffersVector)
        metadata_vec = offsets_vector(metadata_offsets, tflite.ModelStartMetadataVector) if metadata_offsets else None
        tflite.ModelStart(b)
        tflite.ModelAddVersion(b, 3)
        tflite.ModelAddOperatorCodes(b, opcodes_vec)
        tflite.ModelAddSubgraphs(b, subgraphs_vec)
        tflite.ModelAddDescription(b, description)
        tflite.ModelAddBuffers(b, buffers_vec)
        if metadata_vec is not None:
            tflite.ModelAddMetadata(b, metadata_vec)
        b.Finish(tflite.ModelEnd(b), file_identifier=schema.FILE_IDENTIFIER)
        return bytes(b.Output())

    @staticmethod
    def _options(b: flatbuffers.Builder, name: str | None, options: dict[str, Any]) -> int:
        if name is None:
            raise ValueError(f"no options table known for options {sorted(options)}")
        # Vectors and strings first: they cannot be built inside a table.
        vectors = {}
        for key, value in options.items():
            if isinstance(value, str) and key not in _ENUMS:
                vectors[key] = b.CreateString(value)
            elif isinstance(value, (list, tuple)):
                getattr(tflite, f"{name}Start{key}Vector")(b, len(value))
                for v in reversed(value):
                    b.PrependInt32(int(v))
                vectors[key] = b.EndVector()
        getattr(tflite, f"{name}Start")(b)
        for key, value in options.items():
            add = getattr(tflite, f"{name}Add{key}", None)
            if add is None:
                raise ValueError(f"{name} has no field {key}")
            if key in vectors:
                add(b, vectors[key])
            elif isinstance(value, str):
                add(b, _ENUMS[key][value])
            else:
                add(b, value)
        return getattr(tflite, f"{name}End")(b)


def single_op(op: str, inputs: list, outputs: list, **options) -> tuple[ModelBuilder, SubgraphBuilder]:
    """A model of one op, not yet built. inputs/outputs are tensor() argument
    tuples: (shape, dtype, data, quant) and (shape, dtype, quant); inputs
    with data are constants, the others the model's inputs; None is an
    absent optional input."""
    b = ModelBuilder()
    sg = b.subgraph()
    ins = []
    for spec in inputs:
        if spec is None:
            ins.append(-1)
            continue
        shape, dtype, data, quant = (tuple(spec) + (None, None))[:4]
        ins.append(sg.tensor(shape, dtype, data=data, quant=quant))
    outs = [sg.tensor(shape, dtype, quant=quant) for shape, dtype, quant in outputs]
    sg.op(op, ins, outs, **options)
    sg.inputs = [i for i, spec in zip(ins, inputs) if spec is not None and (tuple(spec) + (None, None))[2] is None]
    sg.outputs = outs
    return b, sg
