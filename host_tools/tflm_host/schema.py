"""Facts of the TFLite FlatBuffer schema that the host tools and the C engine share.

Enum values are the schema's own numbers. `tflm-host codegen` writes the C tables
(micropython_mod/engine/op_names.c) from this module, and a test checks that the
committed C file matches.
"""

from __future__ import annotations

import re

FILE_IDENTIFIER = b"TFL3"

BUILTIN_OPS = (
    'ADD', 'AVERAGE_POOL_2D', 'CONCATENATION', 'CONV_2D', 'DEPTHWISE_CONV_2D', 'DEPTH_TO_SPACE',
    'DEQUANTIZE', 'EMBEDDING_LOOKUP', 'FLOOR', 'FULLY_CONNECTED', 'HASHTABLE_LOOKUP',
    'L2_NORMALIZATION', 'L2_POOL_2D', 'LOCAL_RESPONSE_NORMALIZATION', 'LOGISTIC', 'LSH_PROJECTION',
    'LSTM', 'MAX_POOL_2D', 'MUL', 'RELU', 'RELU_N1_TO_1', 'RELU6', 'RESHAPE', 'RESIZE_BILINEAR',
    'RNN', 'SOFTMAX', 'SPACE_TO_DEPTH', 'SVDF', 'TANH', 'CONCAT_EMBEDDINGS', 'SKIP_GRAM', 'CALL',
    'CUSTOM', 'EMBEDDING_LOOKUP_SPARSE', 'PAD', 'UNIDIRECTIONAL_SEQUENCE_RNN', 'GATHER',
    'BATCH_TO_SPACE_ND', 'SPACE_TO_BATCH_ND', 'TRANSPOSE', 'MEAN', 'SUB', 'DIV', 'SQUEEZE',
    'UNIDIRECTIONAL_SEQUENCE_LSTM', 'STRIDED_SLICE', 'BIDIRECTIONAL_SEQUENCE_RNN', 'EXP', 'TOPK_V2',
    'SPLIT', 'LOG_SOFTMAX', 'DELEGATE', 'BIDIRECTIONAL_SEQUENCE_LSTM', 'CAST', 'PRELU', 'MAXIMUM',
    'ARG_MAX', 'MINIMUM', 'LESS', 'NEG', 'PADV2', 'GREATER', 'GREATER_EQUAL', 'LESS_EQUAL',
    'SELECT', 'SLICE', 'SIN', 'TRANSPOSE_CONV', 'SPARSE_TO_DENSE', 'TILE', 'EXPAND_DIMS', 'EQUAL',
    'NOT_EQUAL', 'LOG', 'SUM', 'SQRT', 'RSQRT', 'SHAPE', 'POW', 'ARG_MIN', 'FAKE_QUANT',
    'REDUCE_PROD', 'REDUCE_MAX', 'PACK', 'LOGICAL_OR', 'ONE_HOT', 'LOGICAL_AND', 'LOGICAL_NOT',
    'UNPACK', 'REDUCE_MIN', 'FLOOR_DIV', 'REDUCE_ANY', 'SQUARE', 'ZEROS_LIKE', 'FILL', 'FLOOR_MOD',
    'RANGE', 'RESIZE_NEAREST_NEIGHBOR', 'LEAKY_RELU', 'SQUARED_DIFFERENCE', 'MIRROR_PAD', 'ABS',
    'SPLIT_V', 'UNIQUE', 'CEIL', 'REVERSE_V2', 'ADD_N', 'GATHER_ND', 'COS', 'WHERE', 'RANK', 'ELU',
    'REVERSE_SEQUENCE', 'MATRIX_DIAG', 'QUANTIZE', 'MATRIX_SET_DIAG', 'ROUND', 'HARD_SWISH', 'IF',
    'WHILE', 'NON_MAX_SUPPRESSION_V4', 'NON_MAX_SUPPRESSION_V5', 'SCATTER_ND', 'SELECT_V2',
    'DENSIFY', 'SEGMENT_SUM', 'BATCH_MATMUL', 'PLACEHOLDER_FOR_GREATER_OP_CODES', 'CUMSUM',
    'CALL_ONCE', 'BROADCAST_TO', 'RFFT2D', 'CONV_3D', 'IMAG', 'REAL', 'COMPLEX_ABS', 'HASHTABLE',
    'HASHTABLE_FIND', 'HASHTABLE_IMPORT', 'HASHTABLE_SIZE', 'REDUCE_ALL', 'CONV_3D_TRANSPOSE',
    'VAR_HANDLE', 'READ_VARIABLE', 'ASSIGN_VARIABLE', 'BROADCAST_ARGS', 'RANDOM_STANDARD_NORMAL',
    'BUCKETIZE', 'RANDOM_UNIFORM', 'MULTINOMIAL', 'GELU', 'DYNAMIC_UPDATE_SLICE', 'RELU_0_TO_1',
    'UNSORTED_SEGMENT_PROD', 'UNSORTED_SEGMENT_MAX', 'UNSORTED_SEGMENT_SUM', 'ATAN2',
    'UNSORTED_SEGMENT_MIN', 'SIGN', 'BITCAST', 'BITWISE_XOR', 'RIGHT_SHIFT', 'STABLEHLO_LOGISTIC',
    'STABLEHLO_ADD', 'STABLEHLO_DIVIDE', 'STABLEHLO_MULTIPLY', 'STABLEHLO_MAXIMUM',
    'STABLEHLO_RESHAPE', 'STABLEHLO_CLAMP', 'STABLEHLO_CONCATENATE', 'STABLEHLO_BROADCAST_IN_DIM',
    'STABLEHLO_CONVOLUTION', 'STABLEHLO_SLICE', 'STABLEHLO_CUSTOM_CALL', 'STABLEHLO_REDUCE',
    'STABLEHLO_ABS', 'STABLEHLO_AND', 'STABLEHLO_COSINE', 'STABLEHLO_EXPONENTIAL',
    'STABLEHLO_FLOOR', 'STABLEHLO_LOG', 'STABLEHLO_MINIMUM', 'STABLEHLO_NEGATE', 'STABLEHLO_OR',
    'STABLEHLO_POWER', 'STABLEHLO_REMAINDER', 'STABLEHLO_RSQRT', 'STABLEHLO_SELECT',
    'STABLEHLO_SUBTRACT', 'STABLEHLO_TANH', 'STABLEHLO_SCATTER', 'STABLEHLO_COMPARE',
    'STABLEHLO_CONVERT', 'STABLEHLO_DYNAMIC_SLICE', 'STABLEHLO_DYNAMIC_UPDATE_SLICE',
    'STABLEHLO_PAD', 'STABLEHLO_IOTA', 'STABLEHLO_DOT_GENERAL', 'STABLEHLO_REDUCE_WINDOW',
    'STABLEHLO_SORT', 'STABLEHLO_WHILE', 'STABLEHLO_GATHER', 'STABLEHLO_TRANSPOSE', 'DILATE',
    'STABLEHLO_RNG_BIT_GENERATOR', 'REDUCE_WINDOW', 'STABLEHLO_COMPOSITE', 'STABLEHLO_SHIFT_LEFT',
    'STABLEHLO_CBRT', 'STABLEHLO_CASE',
)
# The BuiltinOptions union: the type number of each options table.
BUILTIN_OPTIONS = (
    'NONE', 'Conv2DOptions', 'DepthwiseConv2DOptions', 'ConcatEmbeddingsOptions', 'LSHProjectionOptions',
    'Pool2DOptions', 'SVDFOptions', 'RNNOptions', 'FullyConnectedOptions', 'SoftmaxOptions',
    'ConcatenationOptions', 'AddOptions', 'L2NormOptions', 'LocalResponseNormalizationOptions', 'LSTMOptions',
    'ResizeBilinearOptions', 'CallOptions', 'ReshapeOptions', 'SkipGramOptions', 'SpaceToDepthOptions',
    'EmbeddingLookupSparseOptions', 'MulOptions', 'PadOptions', 'GatherOptions', 'BatchToSpaceNDOptions',
    'SpaceToBatchNDOptions', 'TransposeOptions', 'ReducerOptions', 'SubOptions', 'DivOptions', 'SqueezeOptions',
    'SequenceRNNOptions', 'StridedSliceOptions', 'ExpOptions', 'TopKV2Options', 'SplitOptions',
    'LogSoftmaxOptions', 'CastOptions', 'DequantizeOptions', 'MaximumMinimumOptions', 'ArgMaxOptions',
    'LessOptions', 'NegOptions', 'PadV2Options', 'GreaterOptions', 'GreaterEqualOptions', 'LessEqualOptions',
    'SelectOptions', 'SliceOptions', 'TransposeConvOptions', 'SparseToDenseOptions', 'TileOptions',
    'ExpandDimsOptions', 'EqualOptions', 'NotEqualOptions', 'ShapeOptions', 'PowOptions', 'ArgMinOptions',
    'FakeQuantOptions', 'PackOptions', 'LogicalOrOptions', 'OneHotOptions', 'LogicalAndOptions',
    'LogicalNotOptions', 'UnpackOptions', 'FloorDivOptions', 'SquareOptions', 'ZerosLikeOptions', 'FillOptions',
    'BidirectionalSequenceLSTMOptions', 'BidirectionalSequenceRNNOptions', 'UnidirectionalSequenceLSTMOptions',
    'FloorModOptions', 'RangeOptions', 'ResizeNearestNeighborOptions', 'LeakyReluOptions',
    'SquaredDifferenceOptions', 'MirrorPadOptions', 'AbsOptions', 'SplitVOptions', 'UniqueOptions',
    'ReverseV2Options', 'AddNOptions', 'GatherNdOptions', 'CosOptions', 'WhereOptions', 'RankOptions',
    'ReverseSequenceOptions', 'MatrixDiagOptions', 'QuantizeOptions', 'MatrixSetDiagOptions',
    'HardSwishOptions', 'IfOptions', 'WhileOptions', 'DepthToSpaceOptions', 'NonMaxSuppressionV4Options',
    'NonMaxSuppressionV5Options', 'ScatterNdOptions', 'SelectV2Options', 'DensifyOptions', 'SegmentSumOptions',
    'BatchMatMulOptions', 'CumsumOptions', 'CallOnceOptions', 'BroadcastToOptions', 'Rfft2dOptions',
    'Conv3DOptions', 'HashtableOptions', 'HashtableFindOptions', 'HashtableImportOptions',
    'HashtableSizeOptions', 'VarHandleOptions', 'ReadVariableOptions', 'AssignVariableOptions', 'RandomOptions',
    'BucketizeOptions', 'GeluOptions', 'DynamicUpdateSliceOptions', 'UnsortedSegmentProdOptions',
    'UnsortedSegmentMaxOptions', 'UnsortedSegmentMinOptions', 'UnsortedSegmentSumOptions', 'ATan2Options',
    'SignOptions', 'BitcastOptions', 'BitwiseXorOptions', 'RightShiftOptions',
)

TENSOR_TYPES = ('FLOAT32', 'FLOAT16', 'INT32', 'UINT8', 'INT64', 'STRING', 'BOOL', 'INT16', 'COMPLEX64', 'INT8', 'FLOAT64', 'COMPLEX128', 'UINT64', 'RESOURCE', 'VARIANT', 'UINT32', 'UINT16', 'INT4', 'BFLOAT16', 'INT2', 'UINT4', 'FLOAT8_E4M3FN', 'FLOAT8_E5M2')

OP_CODES: dict[str, int] = {name: code for code, name in enumerate(BUILTIN_OPS)}

# Bytes per element (0: no fixed size).
TYPE_SIZES: dict[str, int] = {
    "FLOAT32": 4, "FLOAT16": 2, "INT32": 4, "UINT8": 1, "INT64": 8, "STRING": 0, "BOOL": 1,
    "INT16": 2, "COMPLEX64": 8, "INT8": 1, "FLOAT64": 8, "COMPLEX128": 16, "UINT64": 8,
    "RESOURCE": 4, "VARIANT": 0, "UINT32": 4, "UINT16": 2, "INT4": 0, "BFLOAT16": 2, "INT2": 0,
    "UINT4": 0, "FLOAT8_E4M3FN": 1, "FLOAT8_E5M2": 1,
}

# numpy dtype names of the tensor types the runtime can hold.
NUMPY_DTYPES: dict[str, str] = {
    "FLOAT32": "float32", "FLOAT16": "float16", "INT32": "int32", "UINT8": "uint8",
    "INT64": "int64", "BOOL": "bool", "INT16": "int16", "INT8": "int8", "FLOAT64": "float64",
    "UINT64": "uint64", "UINT32": "uint32", "UINT16": "uint16",
}

ACTIVATIONS = ("NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT")

OFFLINE_PLAN_METADATA = "OfflineMemoryAllocation"


def op_name(code: int, custom: str | None = None) -> str:
    """Name of a builtin op code ("CUSTOM:Name" for custom ops)."""
    if code == OP_CODES["CUSTOM"] and custom:
        return f"CUSTOM:{custom}"
    if 0 <= code < len(BUILTIN_OPS):
        return BUILTIN_OPS[code]
    return f"BUILTIN_{code}"


CUSTOM_PREFIX = "CUSTOM:"


def flag_name(op: str) -> str:
    """The name of an op in flags and functions: 'CONV_2D' stays, a custom op
    'CUSTOM:SignalFftAutoScale' becomes 'SIGNAL_FFT_AUTO_SCALE' (TFLM_KERNEL_...,
    TFLM_OPS="..."), 'CUSTOM:TFLite_Detection_PostProcess'
    'TF_LITE_DETECTION_POST_PROCESS' (underscores stay word breaks)."""
    if not op.startswith(CUSTOM_PREFIX):
        return op
    name = op[len(CUSTOM_PREFIX):]
    # a word starts at an upper-case letter after a lower-case one or a digit,
    # or at the last capital of a run followed by a lower-case letter (PCANx)
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).upper()
