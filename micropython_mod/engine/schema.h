// Field numbers of the TFLite FlatBuffer schema tables the engine reads
// (the builtin options tables' are generated: engine/options.h).
#ifndef TFLM_ENGINE_SCHEMA_H
#define TFLM_ENGINE_SCHEMA_H

// table Model
#define TFLM_MODEL_VERSION (0)
#define TFLM_MODEL_OPERATOR_CODES (1)
#define TFLM_MODEL_SUBGRAPHS (2)
#define TFLM_MODEL_DESCRIPTION (3)
#define TFLM_MODEL_BUFFERS (4)
#define TFLM_MODEL_METADATA_BUFFER (5)
#define TFLM_MODEL_METADATA (6)

// table OperatorCode
#define TFLM_OPCODE_DEPRECATED_BUILTIN_CODE (0)
#define TFLM_OPCODE_CUSTOM_CODE (1)
#define TFLM_OPCODE_VERSION (2)
#define TFLM_OPCODE_BUILTIN_CODE (3)

// table SubGraph
#define TFLM_SUBGRAPH_TENSORS (0)
#define TFLM_SUBGRAPH_INPUTS (1)
#define TFLM_SUBGRAPH_OUTPUTS (2)
#define TFLM_SUBGRAPH_OPERATORS (3)
#define TFLM_SUBGRAPH_NAME (4)

// table Tensor
#define TFLM_TENSOR_SHAPE (0)
#define TFLM_TENSOR_TYPE (1)
#define TFLM_TENSOR_BUFFER (2)
#define TFLM_TENSOR_NAME (3)
#define TFLM_TENSOR_QUANTIZATION (4)
#define TFLM_TENSOR_IS_VARIABLE (5)
#define TFLM_TENSOR_SPARSITY (6)

// table QuantizationParameters
#define TFLM_QUANT_SCALE (2)
#define TFLM_QUANT_ZERO_POINT (3)
#define TFLM_QUANT_QUANTIZED_DIMENSION (6)

// table Operator
#define TFLM_OPERATOR_OPCODE_INDEX (0)
#define TFLM_OPERATOR_INPUTS (1)
#define TFLM_OPERATOR_OUTPUTS (2)
#define TFLM_OPERATOR_BUILTIN_OPTIONS_TYPE (3)
#define TFLM_OPERATOR_BUILTIN_OPTIONS (4)
#define TFLM_OPERATOR_CUSTOM_OPTIONS (5)
#define TFLM_OPERATOR_INTERMEDIATES (8)

// table Buffer
#define TFLM_BUFFER_DATA (0)
#define TFLM_BUFFER_OFFSET (1)
#define TFLM_BUFFER_SIZE (2)

// table Metadata
#define TFLM_METADATA_NAME (0)
#define TFLM_METADATA_BUFFER (1)

// ActivationFunctionType
#define TFLM_ACT_NONE (0)
#define TFLM_ACT_RELU (1)
#define TFLM_ACT_RELU_N1_TO_1 (2)
#define TFLM_ACT_RELU6 (3)
#define TFLM_ACT_TANH (4)
#define TFLM_ACT_SIGN_BIT (5)

#endif // TFLM_ENGINE_SCHEMA_H
