//===- GraphOps.td - graph dialect operations --------------*- tablegen -*-===//
#ifndef LOOM_GRAPH_OPS
#define LOOM_GRAPH_OPS

include "loom/Dialect/Graph/IR/GraphAttrs.td"
include "loom/Dialect/Graph/IR/GraphBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/IR/OpBase.td"

def Graph_Tensor : RankedTensorOf<[AnyType]>;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Graph_ConstantOp : Graph_Op<"constant", [Pure, ConstantLike]> {
  let summary = "A constant tensor (weights are dense_resource blobs)";
  let description = [{
    Example:
    ```mlir
    %w = graph.constant {value = dense_resource<conv1.weight> : tensor<64x3x7x7xf32>} : () -> tensor<64x3x7x7xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Graph_Tensor:$output);
  let hasFolder = 1;
  let hasVerifier = 1;
  let assemblyFormat = "attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops: result has the operand's type.
//===----------------------------------------------------------------------===//

class Graph_UnaryOp<string mnemonic, string what, dag attrs = (ins)>
    : Graph_Op<mnemonic, [Pure, SameOperandsAndResultType, Graph_Elementwise]> {
  let summary = "Elementwise " # what;
  let description = "Elementwise " # what # [{ of a tensor; the result has
    the operand's shape and element type.

    Example:
    ```mlir
    %y = graph.}] # mnemonic # [{ %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = !con((ins Graph_Tensor:$input), attrs);
  let results = (outs Graph_Tensor:$output);
}

def Graph_NegOp : Graph_UnaryOp<"neg", "negation">;
def Graph_AbsOp : Graph_UnaryOp<"abs", "absolute value">;
def Graph_SqrtOp : Graph_UnaryOp<"sqrt", "square root">;
def Graph_ReciprocalOp : Graph_UnaryOp<"reciprocal", "reciprocal (1/x)">;
def Graph_ExpOp : Graph_UnaryOp<"exp", "exponential">;
def Graph_LogOp : Graph_UnaryOp<"log", "natural logarithm">;
def Graph_ErfOp : Graph_UnaryOp<"erf", "error function">;
def Graph_TanhOp : Graph_UnaryOp<"tanh", "hyperbolic tangent">;
def Graph_SigmoidOp : Graph_UnaryOp<"sigmoid", "logistic sigmoid">;
def Graph_ReluOp : Graph_UnaryOp<"relu", "max(x, 0)">;
def Graph_SinOp : Graph_UnaryOp<"sin", "sine">;
def Graph_CosOp : Graph_UnaryOp<"cos", "cosine">;
def Graph_TanOp : Graph_UnaryOp<"tan", "tangent">;
def Graph_AsinOp : Graph_UnaryOp<"asin", "arcsine">;
def Graph_AcosOp : Graph_UnaryOp<"acos", "arccosine">;
def Graph_AtanOp : Graph_UnaryOp<"atan", "arctangent">;
def Graph_SinhOp : Graph_UnaryOp<"sinh", "hyperbolic sine">;
def Graph_CoshOp : Graph_UnaryOp<"cosh", "hyperbolic cosine">;
def Graph_AsinhOp : Graph_UnaryOp<"asinh", "inverse hyperbolic sine">;
def Graph_AcoshOp : Graph_UnaryOp<"acosh", "inverse hyperbolic cosine">;
def Graph_AtanhOp : Graph_UnaryOp<"atanh", "inverse hyperbolic tangent">;
def Graph_FloorOp : Graph_UnaryOp<"floor", "floor">;
def Graph_CeilOp : Graph_UnaryOp<"ceil", "ceiling">;
def Graph_RoundOp : Graph_UnaryOp<"round", "round half to even">;
def Graph_SignOp : Graph_UnaryOp<"sign", "sign (-1, 0, 1)">;
def Graph_SoftsignOp : Graph_UnaryOp<"softsign", "x / (1 + |x|)">;
def Graph_SoftplusOp : Graph_UnaryOp<"softplus", "log(1 + exp(x))">;
def Graph_NotOp : Graph_UnaryOp<"not", "logical not (bool), bitwise not (integers)">;
def Graph_HardSwishOp : Graph_UnaryOp<"hard_swish", "x * max(0, min(1, x/6 + 1/2))">;
def Graph_LeakyReluOp : Graph_UnaryOp<"leaky_relu", "x if x >= 0 else alpha*x",
    (ins F64Attr:$alpha)>;
def Graph_EluOp : Graph_UnaryOp<"elu", "x if x >= 0 else alpha*(exp(x)-1)",
    (ins F64Attr:$alpha)>;
def Graph_CeluOp : Graph_UnaryOp<"celu", "max(0,x) + min(0, alpha*(exp(x/alpha)-1))",
    (ins F64Attr:$alpha)>;
def Graph_SeluOp : Graph_UnaryOp<"selu", "gamma*(x if x > 0 else alpha*(exp(x)-1))",
    (ins F64Attr:$alpha, F64Attr:$gamma)>;
def Graph_HardSigmoidOp : Graph_UnaryOp<"hard_sigmoid", "max(0, min(1, alpha*x + beta))",
    (ins F64Attr:$alpha, F64Attr:$beta)>;
def Graph_ThresholdedReluOp : Graph_UnaryOp<"thresholded_relu", "x if x > alpha else 0",
    (ins F64Attr:$alpha)>;
def Graph_ShrinkOp : Graph_UnaryOp<"shrink",
    "x-bias if x > lambd, x+bias if x < -lambd, else 0",
    (ins F64Attr:$lambd, F64Attr:$bias)>;

def Graph_IsNaNOp : Graph_Op<"is_nan", [Pure, SameOperandsAndResultShape,
                                         Graph_Elementwise]> {
  let summary = "Elementwise test for NaN (boolean result)";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$output);
}
def Graph_IsInfOp : Graph_Op<"is_inf", [Pure, SameOperandsAndResultShape,
                                         Graph_Elementwise]> {
  let summary = "Elementwise test for infinity (boolean result)";
  let arguments = (ins Graph_Tensor:$input, BoolAttr:$detect_positive,
                       BoolAttr:$detect_negative);
  let results = (outs Graph_Tensor:$output);
}

def Graph_CastOp : Graph_Op<"cast", [Pure, SameOperandsAndResultShape,
                                     Graph_Elementwise]> {
  let summary = "Element type conversion (ONNX Cast semantics)";
  let description = [{
    Converts each element to the result's element type: floats round to
    nearest, float-to-integer truncates toward zero, nonzero is true.
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$output);
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops with numpy broadcasting.
//===----------------------------------------------------------------------===//

class Graph_BinaryOp<string mnemonic, string what, list<Trait> traits = [],
                     dag attrs = (ins)>
    : Graph_Op<mnemonic, !listconcat([Pure, Graph_Elementwise], traits)> {
  let summary = "Elementwise " # what # " with numpy broadcasting";
  let description = "Elementwise " # what # [{ of two tensors, broadcast
    numpy-style to the result shape.

    Example:
    ```mlir
    %z = graph.}] # mnemonic # [{ %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = !con((ins Graph_Tensor:$lhs, Graph_Tensor:$rhs), attrs);
  let results = (outs Graph_Tensor:$output);
  let hasVerifier = 1;
}

class Graph_ArithOp<string mnemonic, string what, dag attrs = (ins)>
    : Graph_BinaryOp<mnemonic, what, [SameOperandsAndResultElementType], attrs>;
class Graph_CompareOp<string mnemonic, string what>
    : Graph_BinaryOp<mnemonic, what>;

def Graph_AddOp : Graph_ArithOp<"add", "addition"> { let hasFolder = 1; }
def Graph_SubOp : Graph_ArithOp<"sub", "subtraction">;
def Graph_MulOp : Graph_ArithOp<"mul", "multiplication"> { let hasFolder = 1; }
def Graph_DivOp : Graph_ArithOp<"div", "division">;
def Graph_MinOp : Graph_ArithOp<"min", "minimum">;
def Graph_MaxOp : Graph_ArithOp<"max", "maximum">;
def Graph_ModOp : Graph_ArithOp<"mod", "remainder (sign of divisor, or C fmod when fmod is set)",
    (ins BoolAttr:$fmod)>;
def Graph_AndOp : Graph_ArithOp<"and", "logical and (bool), bitwise and (integers)">;
def Graph_OrOp : Graph_ArithOp<"or", "logical or (bool), bitwise or (integers)">;
def Graph_XorOp : Graph_ArithOp<"xor", "logical xor (bool), bitwise xor (integers)">;
def Graph_BitShiftOp : Graph_ArithOp<"bit_shift", "bit shift (left when left is set)",
    (ins BoolAttr:$left)>;
def Graph_PReluOp : Graph_ArithOp<"prelu", "x if x >= 0 else slope*x">;
def Graph_PowOp : Graph_BinaryOp<"pow", "power (result has the base's element type)">;
def Graph_EqualOp : Graph_CompareOp<"equal", "equality test">;
def Graph_LessOp : Graph_CompareOp<"less", "less-than test">;
def Graph_GreaterOp : Graph_CompareOp<"greater", "greater-than test">;
def Graph_LessEqualOp : Graph_CompareOp<"less_equal", "less-or-equal test">;
def Graph_GreaterEqualOp : Graph_CompareOp<"greater_equal", "greater-or-equal test">;

def Graph_SelectOp : Graph_Op<"select", [Pure, Graph_Elementwise]> {
  let summary = "Elementwise choice: condition ? x : y, with broadcasting";
  let arguments = (ins Graph_Tensor:$condition, Graph_Tensor:$x, Graph_Tensor:$y);
  let results = (outs Graph_Tensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and normalisations
//===----------------------------------------------------------------------===//

class Graph_ReduceOp<string mnemonic, string what>
    : Graph_Op<mnemonic, [Pure, Graph_Reduce, Graph_ReductionKind]> {
  let summary = "Reduction: " # what # " over the given axes";
  let description = [{
    Reduces over `axes` (sorted, non-negative, no repeats; an empty list means
    every axis). With `keepdims` the reduced axes stay with size 1.

    Example:
    ```mlir
    %m = graph.}] # mnemonic # [{ %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$axes,
                       BoolAttr:$keepdims);
  let results = (outs Graph_Tensor:$output);
  let hasVerifier = 1;
}

def Graph_ReduceSumOp : Graph_ReduceOp<"reduce_sum", "sum">;
def Graph_ReduceMeanOp : Graph_ReduceOp<"reduce_mean", "mean">;
def Graph_ReduceMaxOp : Graph_ReduceOp<"reduce_max", "maximum">;
def Graph_ReduceMinOp : Graph_ReduceOp<"reduce_min", "minimum">;
def Graph_ReduceProdOp : Graph_ReduceOp<"reduce_prod", "product">;
def Graph_ReduceL1Op : Graph_ReduceOp<"reduce_l1", "sum of absolute values">;
def Graph_ReduceL2Op : Graph_ReduceOp<"reduce_l2", "Euclidean norm">;
def Graph_ReduceSumSquareOp : Graph_ReduceOp<"reduce_sum_square", "sum of squares">;
def Graph_ReduceLogSumOp : Graph_ReduceOp<"reduce_log_sum", "log of the sum">;
def Graph_ReduceLogSumExpOp : Graph_ReduceOp<"reduce_log_sum_exp", "log of the sum of exponentials">;

class Graph_ArgOp<string mnemonic, string what>
    : Graph_Op<mnemonic, [Pure, Graph_ReductionKind]> {
  let summary = "Index (i64) of the " # what # " along an axis";
  let arguments = (ins Graph_Tensor:$input, I64Attr:$axis, BoolAttr:$keepdims,
                       BoolAttr:$select_last_index);
  let results = (outs Graph_Tensor:$output);
}
def Graph_ArgMaxOp : Graph_ArgOp<"arg_max", "maximum">;
def Graph_ArgMinOp : Graph_ArgOp<"arg_min", "minimum">;

class Graph_AxisOp<string mnemonic, string what>
    : Graph_Op<mnemonic, [Pure, SameOperandsAndResultType, Graph_SoftmaxKind]> {
  let summary = what # " along one axis";
  let arguments = (ins Graph_Tensor:$input, I64Attr:$axis);
  let results = (outs Graph_Tensor:$output);
  let hasVerifier = 1;
}
def Graph_SoftmaxOp : Graph_AxisOp<"softmax", "Softmax">;
def Graph_LogSoftmaxOp : Graph_AxisOp<"log_softmax", "Log-softmax">;
def Graph_HardmaxOp : Graph_AxisOp<"hardmax", "One-hot of the first maximum">;

def Graph_CumSumOp : Graph_Op<"cumsum", [Pure, SameOperandsAndResultType, Graph_DataMovementKind]> {
  let summary = "Cumulative sum along an axis";
  let arguments = (ins Graph_Tensor:$input, I64Attr:$axis, BoolAttr:$exclusive,
                       BoolAttr:$reverse);
  let results = (outs Graph_Tensor:$output);
}

def Graph_BatchNormOp : Graph_Op<"batch_norm", [Pure, Graph_NormalizationKind]> {
  let summary = "Inference batch normalisation over channel axis 1";
  let description = [{
    y = scale[c] * (x - mean[c]) / sqrt(var[c] + epsilon) + bias[c].
    The graph pass `graph-fold-batch-norm` folds it into a preceding conv.
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$scale,
                       Graph_Tensor:$bias, Graph_Tensor:$mean,
                       Graph_Tensor:$variance, F64Attr:$epsilon);
  let results = (outs Graph_Tensor:$output);
  let hasVerifier = 1;
}

def Graph_LayerNormOp : Graph_Op<"layer_norm", [Pure, Graph_NormalizationKind]> {
  let summary = "Layer normalisation over the axes from `axis` to the last";
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$scale,
                       Optional<Graph_Tensor>:$bias, I64Attr:$axis,
                       F64Attr:$epsilon);
  let results = (outs Graph_Tensor:$output);
  let hasVerifier = 1;
}

def Graph_InstanceNormOp : Graph_Op<"instance_norm", [Pure, Graph_NormalizationKind]> {
  let summary = "Instance normalisation over the spatial axes";
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$scale,
                       Graph_Tensor:$bias, F64Attr:$epsilon);
  let results = (outs Graph_Tensor:$output);
}

//===----------------------------------------------------------------------===//
// Linear algebra, convolution, pooling
//===----------------------------------------------------------------------===//

def Graph_MatMulOp : Graph_Op<"matmul", [Pure, Graph_MatMulKind]> {
  let summary = "Matrix product with numpy batching and 1-D promotion";
  let description = [{
    Example:
    ```mlir
    %y = graph.matmul %a, %b : (tensor<8x16x32xf32>, tensor<32x64xf32>) -> tensor<8x16x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_Tensor:$output);
  let hasVerifier = 1;
}

def Graph_ConvOp : Graph_Op<"conv", [Pure, Graph_ConvKind]> {
  let summary = "N-d grouped convolution with explicit padding";
  let description = [{
    x: [N, C, D1..Dn], weight: [M, C/group, K1..Kn], optional bias [M].
    `pads` is [begin_1..begin_n, end_1..end_n]; auto_pad is resolved at import.

    Example:
    ```mlir
    %y = graph.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$weight,
                       Optional<Graph_Tensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pads, I64Attr:$group);
  let results = (outs Graph_Tensor:$output);
  let hasVerifier = 1;
}

def Graph_ConvTransposeOp : Graph_Op<"conv_transpose", [Pure, Graph_ConvKind]> {
  let summary = "N-d grouped transposed convolution";
  let description = [{
    x: [N, C, D1..Dn], weight: [C, M/group, K1..Kn], optional bias [M]. The
    output shape is the result type (output_shape and auto_pad resolved at
    import into `pads` and `output_padding`).
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$weight,
                       Optional<Graph_Tensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$output_padding, I64Attr:$group);
  let results = (outs Graph_Tensor:$output);
}

def Graph_MaxPoolOp : Graph_Op<"max_pool", [Pure, Graph_ReductionKind]> {
  let summary = "N-d max pooling with explicit padding";
  let description = [{
    The output shape is the result type (ceil_mode resolved at import). The
    optional second result holds the flat row-major argmax indices (i64).
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pads);
  let results = (outs Graph_Tensor:$output, Optional<Graph_Tensor>:$indices);
}

def Graph_AvgPoolOp : Graph_Op<"avg_pool", [Pure, Graph_ReductionKind]> {
  let summary = "N-d average pooling with explicit padding";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pads, BoolAttr:$count_include_pad);
  let results = (outs Graph_Tensor:$output);
}

def Graph_EinsumOp : Graph_Op<"einsum", [Pure, Graph_MatMulKind]> {
  let summary = "Einstein summation with an explicit output";
  let description = [{
    `equation` always has `->`, no spaces; `...` stands for broadcast axes.
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, StrAttr:$equation);
  let results = (outs Graph_Tensor:$output);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Graph_ReshapeOp : Graph_Op<"reshape", [Pure, Graph_DataMovementKind]> {
  let summary = "Reshape to the result type (same element count)";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_TransposeOp : Graph_Op<"transpose", [Pure, Graph_DataMovementKind]> {
  let summary = "Permute axes: output axis i is input axis perm[i]";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Graph_Tensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_BroadcastToOp : Graph_Op<"broadcast_to", [Pure, Graph_DataMovementKind]> {
  let summary = "Broadcast numpy-style to the result shape (ONNX Expand)";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$output);
  let hasVerifier = 1;
}

def Graph_ConcatOp : Graph_Op<"concat", [Pure, Graph_DataMovementKind]> {
  let summary = "Concatenate along an axis";
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Graph_Tensor:$output);
  let hasVerifier = 1;
}

def Graph_SliceOp : Graph_Op<"slice", [Pure, Graph_DataMovementKind]> {
  let summary = "Strided slice with static, clamped bounds";
  let description = [{
    For each axis in `axes`, takes `starts[i]` up to (not including) `ends[i]`
    in steps of `steps[i]`; bounds are already clamped as ONNX Slice does, so
    a negative step may have end = -1 meaning "through index 0".
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$axes,
                       DenseI64ArrayAttr:$steps);
  let results = (outs Graph_Tensor:$output);
  let hasVerifier = 1;
}

def Graph_GatherOp : Graph_Op<"gather", [Pure, Graph_DataMovementKind]> {
  let summary = "Gather slices along an axis (ONNX Gather)";
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$indices, I64Attr:$axis);
  let results = (outs Graph_Tensor:$output);
}
def Graph_GatherElementsOp : Graph_Op<"gather_elements", [Pure, Graph_DataMovementKind]> {
  let summary = "Gather single elements along an axis";
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$indices, I64Attr:$axis);
  let results = (outs Graph_Tensor:$output);
}
def Graph_GatherNDOp : Graph_Op<"gather_nd", [Pure, Graph_DataMovementKind]> {
  let summary = "Gather by index tuples (ONNX GatherND)";
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$indices, I64Attr:$batch_dims);
  let results = (outs Graph_Tensor:$output);
}
def Graph_ScatterNDOp : Graph_Op<"scatter_nd", [Pure, Graph_DataMovementKind]> {
  let summary = "Scatter updates at index tuples; reduction none|add|mul|max|min";
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$indices,
                       Graph_Tensor:$updates, StrAttr:$reduction);
  let results = (outs Graph_Tensor:$output);
}
def Graph_ScatterElementsOp : Graph_Op<"scatter_elements", [Pure, Graph_DataMovementKind]> {
  let summary = "Scatter single elements along an axis";
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$indices,
                       Graph_Tensor:$updates, I64Attr:$axis, StrAttr:$reduction);
  let results = (outs Graph_Tensor:$output);
}

def Graph_TileOp : Graph_Op<"tile", [Pure, Graph_DataMovementKind]> {
  let summary = "Repeat the tensor along each axis";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$repeats);
  let results = (outs Graph_Tensor:$output);
}

def Graph_PadOp : Graph_Op<"pad", [Pure, Graph_DataMovementKind]> {
  let summary = "Pad (constant|reflect|edge|wrap); pads may be negative";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$pads,
                       StrAttr:$mode, F64Attr:$value);
  let results = (outs Graph_Tensor:$output);
}

def Graph_TopKOp : Graph_Op<"topk", [Pure, Graph_DataMovementKind]> {
  let summary = "The k largest (or smallest) values along an axis and their indices";
  let arguments = (ins Graph_Tensor:$input, I64Attr:$k, I64Attr:$axis,
                       BoolAttr:$largest, BoolAttr:$sorted);
  let results = (outs Graph_Tensor:$values, Graph_Tensor:$indices);
}

def Graph_TriluOp : Graph_Op<"trilu", [Pure, SameOperandsAndResultType, Graph_DataMovementKind]> {
  let summary = "Keep the upper or lower triangle (offset k) of the last two axes";
  let arguments = (ins Graph_Tensor:$input, I64Attr:$k, BoolAttr:$upper);
  let results = (outs Graph_Tensor:$output);
  let hasVerifier = 1;
}

def Graph_ResizeOp : Graph_Op<"resize", [Pure, Graph_DataMovementKind]> {
  let summary = "Resize (nearest|linear|cubic) to the result shape";
  let description = [{
    The output shape is the result type. `scales` are the per-axis factors the
    coordinate transform uses; `roi` is used by tf_crop_and_resize only.
  }];
  let arguments = (ins Graph_Tensor:$input, StrAttr:$mode,
                       StrAttr:$coordinate_transformation_mode,
                       StrAttr:$nearest_mode, F64Attr:$cubic_coeff_a,
                       BoolAttr:$exclude_outside, F64Attr:$extrapolation_value,
                       DenseF64ArrayAttr:$scales, DenseF64ArrayAttr:$roi);
  let results = (outs Graph_Tensor:$output);
}

def Graph_DepthToSpaceOp : Graph_Op<"depth_to_space", [Pure, Graph_DataMovementKind]> {
  let summary = "Move channel blocks into spatial blocks (mode DCR or CRD)";
  let arguments = (ins Graph_Tensor:$input, I64Attr:$blocksize, StrAttr:$mode);
  let results = (outs Graph_Tensor:$output);
}
def Graph_SpaceToDepthOp : Graph_Op<"space_to_depth", [Pure, Graph_DataMovementKind]> {
  let summary = "Move spatial blocks into channels";
  let arguments = (ins Graph_Tensor:$input, I64Attr:$blocksize);
  let results = (outs Graph_Tensor:$output);
}

def Graph_OneHotOp : Graph_Op<"one_hot", [Pure, Graph_DataMovementKind]> {
  let summary = "One-hot encoding along an output axis; values = [off, on]";
  let arguments = (ins Graph_Tensor:$indices, Graph_Tensor:$values,
                       I64Attr:$depth, I64Attr:$axis);
  let results = (outs Graph_Tensor:$output);
}

//===----------------------------------------------------------------------===//
// Kernels: fused groups of ops, the unit that is mapped and scheduled
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Collectives across chips (made by graph-partition for tensor parallelism)
//===----------------------------------------------------------------------===//

def Graph_AllReduceOp : Graph_Op<"all_reduce", [Pure, SameOperandsAndResultType]> {
  let summary = "Sum of one tensor per chip, delivered to every chip";
  let description = [{
    Operand `i` is the partial value on chip `chips[i]`; every result is the
    elementwise sum of all operands (result `i` on chip `chips[i]`). The
    sum is taken in operand order. `graph-to-spatial` turns it into a
    `spatial.collective`, which is lowered to chip-to-chip transfers.

    Example:
    ```mlir
    %r:2 = graph.all_reduce %a, %b {chips = array<i64: 0, 1>} : (tensor<1x8xf32>, tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>)
    ```
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, DenseI64ArrayAttr:$chips);
  let results = (outs Variadic<Graph_Tensor>:$outputs);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
}

def Graph_AllGatherOp : Graph_Op<"all_gather", [Pure]> {
  let summary = "Concatenation of one shard per chip, delivered to every chip";
  let description = [{
    Operand `i` is the shard on chip `chips[i]`; every result is the
    concatenation of all operands along `axis` (result `i` on chip
    `chips[i]`).

    Example:
    ```mlir
    %r:2 = graph.all_gather %a, %b {axis = 1 : i64, chips = array<i64: 0, 1>} : (tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>)
    ```
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$axis,
                       DenseI64ArrayAttr:$chips);
  let results = (outs Variadic<Graph_Tensor>:$outputs);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
}

def Graph_KernelOp : Graph_Op<"kernel", [IsolatedFromAbove,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "A fused group of graph ops: one unit of mapping and scheduling";
  let description = [{
    The body computes the results from the block arguments (one per input)
    and ends with `graph.yield`. Formed by `graph-form-kernels`: a matmul or
    convolution anchor with its elementwise epilogue (bias, activation,
    residual add, scale), or a single other op. `kind` names the anchor's
    class (matmul, conv, elementwise, reduction, softmax, normalization,
    data_movement); `precision` is the kernel's precision policy (fp32, or
    bf16, fp16 or fp8 (E4M3) inputs with fp32 accumulation); `block` is the layout chosen for the matrix
    unit's native block, when it has one. `storage`, when present, is the
    format every result is stored in (`#graph.precision<...>`, one of
    bf16, fp16 or fp8): the results are rounded to it when written and
    take its bytes in SRAM (set by `graph-precision-policy` for a KV cache
    and the activations crossing chips, see there).

    Example:
    ```mlir
    %y = graph.kernel %x, %w, %b {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> {
    ^bb0(%a: tensor<4x8xf32>, %bw: tensor<8x16xf32>, %bb: tensor<16xf32>):
      %m = graph.matmul %a, %bw : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
      %s = graph.add %m, %bb : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
      %r = graph.relu %s : (tensor<4x16xf32>) -> tensor<4x16xf32>
      graph.yield %r : tensor<4x16xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs,
                       Graph_KernelKindAttr:$kind,
                       Graph_PrecisionAttr:$precision,
                       OptionalAttr<DenseI64ArrayAttr>:$block,
                       OptionalAttr<Graph_PrecisionAttr>:$storage);
  let results = (outs Variadic<Graph_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, results) $body
  }];
  let hasVerifier = 1;
}

def Graph_YieldOp : Graph_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"KernelOp">]> {
  let summary = "Returns a kernel's results";
  let arguments = (ins Variadic<Graph_Tensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, {}); }]>];
}

#endif // LOOM_GRAPH_OPS
