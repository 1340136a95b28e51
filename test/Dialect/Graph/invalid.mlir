// Tests that each verifier in GraphOps.cpp rejects what it should, with its
// own message.
// RUN: %loom-opt --split-input-file --verify-diagnostics %s

// Tests that a constant whose value type differs from its result type is
// rejected.
func.func @constant_type_mismatch() -> tensor<3xf32> {
  // expected-error @+1 {{'graph.constant' op value type 'tensor<2xf32>' does not match result type 'tensor<3xf32>'}}
  %0 = graph.constant {value = dense<1.0> : tensor<2xf32>} : () -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that a constant cannot change the element type of its value.
func.func @constant_element_type_mismatch() -> tensor<2xf64> {
  // expected-error @+1 {{value type 'tensor<2xf32>' does not match result type 'tensor<2xf64>'}}
  %0 = graph.constant {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// Tests that a binary op on shapes that do not broadcast is rejected.
func.func @binary_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.add' op operand shapes are not broadcast-compatible: [2x3] and [4x5]}}
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that dynamic dimensions print as '?' in verifier messages.
func.func @binary_not_broadcastable_dynamic(%a: tensor<?x3xf32>, %b: tensor<4x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{'graph.add' op operand shapes are not broadcast-compatible: [?x3] and [4x5]}}
  %0 = graph.add %a, %b : (tensor<?x3xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// Tests that a binary op whose result shape is not the broadcast shape is
// rejected.
func.func @binary_wrong_result_shape(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{'graph.sub' op result shape [3x3] is not the broadcast shape [2x3] of the operands}}
  %0 = graph.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// Tests that a binary op may not drop the broadcast dimensions from its result
// (rank too small).
func.func @binary_result_rank_too_small(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{result shape [3] is not the broadcast shape [2x3] of the operands}}
  %0 = graph.mul %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that pow's result must keep the base's element type.
func.func @pow_result_element_type(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xf16> {
  // expected-error @+1 {{'graph.pow' op result element type 'f16' differs from the left operand's 'f32'}}
  %0 = graph.pow %a, %b : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Tests that a comparison whose result is not i1 is rejected.
func.func @compare_result_not_i1(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.less' op comparison result must have element type i1, got 'f32'}}
  %0 = graph.less %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a comparison of operands with different element types is
// rejected.
func.func @compare_operand_types_differ(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xi1> {
  // expected-error @+1 {{'graph.equal' op compared operands must share an element type}}
  %0 = graph.equal %a, %b : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Tests that a comparison also checks broadcasting.
func.func @compare_not_broadcastable(%a: tensor<4xf32>, %b: tensor<3xf32>) -> tensor<4xi1> {
  // expected-error @+1 {{'graph.greater_equal' op operand shapes are not broadcast-compatible: [4] and [3]}}
  %0 = graph.greater_equal %a, %b : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Tests that select's condition must be boolean.
func.func @select_condition_not_i1(%c: tensor<4xi8>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.select' op condition must have element type i1}}
  %0 = graph.select %c, %x, %y : (tensor<4xi8>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that select's branches must share an element type.
func.func @select_branch_types_differ(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.select' op x, y and the result must share an element type}}
  %0 = graph.select %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that select's result must be the broadcast of all three operands.
func.func @select_wrong_result_shape(%c: tensor<2x1xi1>, %x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.select' op result shape [3] is not the broadcast shape [2x3] of the operands}}
  %0 = graph.select %c, %x, %y : (tensor<2x1xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that reduction axes must be sorted.
func.func @reduce_axes_unsorted(%x: tensor<2x3x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.reduce_sum' op axes must be sorted and unique}}
  %0 = graph.reduce_sum %x {axes = array<i64: 1, 0>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that reduction axes may not repeat.
func.func @reduce_axes_repeated(%x: tensor<2x3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.reduce_max' op axes must be sorted and unique}}
  %0 = graph.reduce_max %x {axes = array<i64: 1, 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that a reduction axis past the rank is rejected.
func.func @reduce_axis_too_large(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'graph.reduce_mean' op axis 3 is out of range for rank 3}}
  %0 = graph.reduce_mean %x {axes = array<i64: 3>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Tests that a negative reduction axis is rejected (the importer normalises
// axes).
func.func @reduce_axis_negative(%x: tensor<2x3x4xf32>) -> tensor<2x3x1xf32> {
  // expected-error @+1 {{'graph.reduce_prod' op axis -1 is out of range for rank 3}}
  %0 = graph.reduce_prod %x {axes = array<i64: -1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  return %0 : tensor<2x3x1xf32>
}

// -----

// Tests that a reduction result without the kept unit axis is rejected.
func.func @reduce_wrong_result_keepdims(%x: tensor<2x3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.reduce_l2' op result shape [2x4] should be [2x1x4]}}
  %0 = graph.reduce_l2 %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that an empty axes list reduces every axis, so a partial result shape
// is rejected.
func.func @reduce_wrong_result_all_axes(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'graph.reduce_log_sum_exp' op result shape [2] should be []}}
  %0 = graph.reduce_log_sum_exp %x {axes = array<i64>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that a softmax axis past the rank is rejected.
func.func @softmax_axis_out_of_range(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.softmax' op axis 2 is out of range for rank 2}}
  %0 = graph.softmax %x {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that a negative log_softmax axis is rejected.
func.func @log_softmax_axis_negative(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.log_softmax' op axis -1 is out of range for rank 2}}
  %0 = graph.log_softmax %x {axis = -1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that a hardmax axis past the rank is rejected.
func.func @hardmax_axis_out_of_range(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.hardmax' op axis 5 is out of range for rank 2}}
  %0 = graph.hardmax %x {axis = 5 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that batch_norm parameters must have one entry per channel.
func.func @batch_norm_param_shape(%x: tensor<1x4x2x2xf32>, %c: tensor<4xf32>, %bad: tensor<3xf32>) -> tensor<1x4x2x2xf32> {
  // expected-error @+1 {{'graph.batch_norm' op scale, bias, mean and variance must have shape [4], got [3]}}
  %0 = graph.batch_norm %x, %c, %c, %bad, %c {epsilon = 1.0e-05 : f64} : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  return %0 : tensor<1x4x2x2xf32>
}

// -----

// Tests that batch_norm needs an input of rank at least 2.
func.func @batch_norm_rank(%x: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.batch_norm' op input must have rank >= 2 (N, C, ...)}}
  %0 = graph.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-05 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that batch_norm's result must have the input's type.
func.func @batch_norm_result_type(%x: tensor<1x4x2x2xf32>, %c: tensor<4xf32>) -> tensor<1x4x2x2xf16> {
  // expected-error @+1 {{'graph.batch_norm' op result type must equal the input type}}
  %0 = graph.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-05 : f64} : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf16>
  return %0 : tensor<1x4x2x2xf16>
}

// -----

// Tests that a layer_norm axis past the rank is rejected.
func.func @layer_norm_axis(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'graph.layer_norm' op axis 2 is out of range for rank 2}}
  %0 = graph.layer_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Tests that layer_norm's result must have the input's type.
func.func @layer_norm_result_type(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<8x2xf32> {
  // expected-error @+1 {{'graph.layer_norm' op result type must equal the input type}}
  %0 = graph.layer_norm %x, %g, %g {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}

// -----

// Tests that a matmul whose contraction sizes differ is rejected.
func.func @matmul_contraction_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'graph.matmul' op contraction sizes differ: [2x3] times [4x5]}}
  %0 = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that 1-D promotion is used for the contraction check: a vector of 4
// against a [3x5] matrix does not contract.
func.func @matmul_vector_contraction_mismatch(%a: tensor<4xf32>, %b: tensor<3x5xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'graph.matmul' op contraction sizes differ: [4] times [3x5]}}
  %0 = graph.matmul %a, %b : (tensor<4xf32>, tensor<3x5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Tests that matmul batch dimensions must broadcast.
func.func @matmul_batch_mismatch(%a: tensor<2x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<2x3x6xf32> {
  // expected-error @+1 {{'graph.matmul' op batch dimensions do not broadcast: [2x3x4] times [5x4x6]}}
  %0 = graph.matmul %a, %b : (tensor<2x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x3x6xf32>
  return %0 : tensor<2x3x6xf32>
}

// -----

// Tests that a matmul with a wrong result shape is rejected.
func.func @matmul_wrong_result(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.matmul' op result shape [2x3] should be [2x5]}}
  %0 = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that matmul rejects scalar operands.
func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.matmul' op operands must have rank >= 1}}
  %0 = graph.matmul %a, %b : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that conv input channels must equal weight channels times group.
func.func @conv_channel_mismatch(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'graph.conv' op channels do not match: input has 3, weight expects 2 x group 1}}
  %0 = graph.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// Tests that conv output channels must divide by the group count.
func.func @conv_group_output_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32> {
  // expected-error @+1 {{'graph.conv' op channels do not match: input has 4, weight expects 2 x group 2}}
  %0 = graph.conv %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  return %0 : tensor<1x3x6x6xf32>
}

// -----

// Tests that a conv with a wrong result shape is rejected (padding counted).
func.func @conv_wrong_result(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'graph.conv' op result shape [1x4x6x6] should be [1x4x8x8]}}
  %0 = graph.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// Tests that a conv window larger than the padded input is rejected.
func.func @conv_window_too_large(%x: tensor<1x3x2x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x1x6xf32> {
  // expected-error @+1 {{'graph.conv' op window does not fit the padded input on axis 2}}
  %0 = graph.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x2x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x6xf32>
  return %0 : tensor<1x4x1x6xf32>
}

// -----

// Tests that dilation counts towards the conv window size.
func.func @conv_dilated_window_too_large(%x: tensor<1x3x8x4xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x1xf32> {
  // expected-error @+1 {{'graph.conv' op window does not fit the padded input on axis 3}}
  %0 = graph.conv %x, %w {dilations = array<i64: 1, 2>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x1xf32>
  return %0 : tensor<1x4x6x1xf32>
}

// -----

// Tests that a zero conv stride is rejected.
func.func @conv_zero_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'graph.conv' op window does not fit the padded input on axis 2}}
  %0 = graph.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// Tests that conv input and weight must have the same rank.
func.func @conv_rank_mismatch(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'graph.conv' op input and weight must have the same rank >= 3}}
  %0 = graph.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// Tests that conv pads need two values per spatial axis.
func.func @conv_pads_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{'graph.conv' op strides, dilations need 2 values and pads 4}}
  %0 = graph.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

// Tests that a conv bias needs one value per output channel.
func.func @conv_bias_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'graph.conv' op bias must have shape [4]}}
  %0 = graph.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// Tests that a reshape that changes the element count is rejected.
func.func @reshape_count_mismatch(%x: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{'graph.reshape' op cannot reshape [2x3] (6 elements) to [7] (7 elements)}}
  %0 = graph.reshape %x : (tensor<2x3xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

// Tests that a reshape may not change the element type.
func.func @reshape_element_type(%x: tensor<2x3xf32>) -> tensor<6xi32> {
  // expected-error @+1 {{'graph.reshape' op reshape cannot change the element type}}
  %0 = graph.reshape %x : (tensor<2x3xf32>) -> tensor<6xi32>
  return %0 : tensor<6xi32>
}

// -----

// Tests that a transpose with a repeated axis is rejected.
func.func @transpose_repeated_axis(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'graph.transpose' op perm is not a permutation}}
  %0 = graph.transpose %x {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// Tests that a transpose with an axis past the rank is rejected.
func.func @transpose_axis_out_of_range(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'graph.transpose' op perm is not a permutation}}
  %0 = graph.transpose %x {perm = array<i64: 2, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Tests that a transpose needs one perm entry per axis.
func.func @transpose_perm_length(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'graph.transpose' op perm has 3 entries for rank 2}}
  %0 = graph.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Tests that a transpose result must follow the permutation.
func.func @transpose_wrong_result(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.transpose' op result shape should be [3x2]}}
  %0 = graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that broadcast_to rejects a target the input cannot broadcast to.
func.func @broadcast_to_incompatible(%x: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.broadcast_to' op cannot broadcast [3] to [2x4]}}
  %0 = graph.broadcast_to %x : (tensor<3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that broadcast_to cannot shrink: the target must be the broadcast
// shape itself, not merely compatible with the input.
func.func @broadcast_to_shrinks(%x: tensor<2x3xf32>) -> tensor<1x3xf32> {
  // expected-error @+1 {{'graph.broadcast_to' op cannot broadcast [2x3] to [1x3]}}
  %0 = graph.broadcast_to %x : (tensor<2x3xf32>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

// Tests that concat inputs must agree off the concatenated axis.
func.func @concat_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'graph.concat' op inputs differ on non-concatenated axis 0}}
  %0 = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// Tests that concat inputs must share an element type.
func.func @concat_element_type(%a: tensor<2x3xf32>, %b: tensor<2x3xi32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'graph.concat' op inputs must share rank and element type}}
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that a concat result must sum the sizes along the axis.
func.func @concat_wrong_result(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x7xf32> {
  // expected-error @+1 {{'graph.concat' op result shape should be [2x8]}}
  %0 = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x7xf32>
  return %0 : tensor<2x7xf32>
}

// -----

// Tests that a concat axis past the rank is rejected.
func.func @concat_axis(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.concat' op axis 2 is out of range for rank 2}}
  %0 = graph.concat %a {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that concat needs at least one input.
func.func @concat_no_inputs() -> tensor<0xf32> {
  // expected-error @+1 {{'graph.concat' op needs at least one input}}
  %0 = graph.concat {axis = 0 : i64} : () -> tensor<0xf32>
  return %0 : tensor<0xf32>
}

// -----

// Tests that a slice with a zero step is rejected.
func.func @slice_zero_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.slice' op step must be nonzero}}
  %0 = graph.slice %x {axes = array<i64: 0>, ends = array<i64: 4>, starts = array<i64: 0>, steps = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a slice with a wrong result shape is rejected (ceil of span over
// step).
func.func @slice_wrong_shape(%x: tensor<10x3xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{'graph.slice' op result shape should be [4x3]}}
  %0 = graph.slice %x {axes = array<i64: 0>, ends = array<i64: 8>, starts = array<i64: 1>, steps = array<i64: 2>} : (tensor<10x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// Tests that the result shape of a slice with a negative step counts down from
// start to end.
func.func @slice_negative_step_wrong_shape(%x: tensor<5xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'graph.slice' op result shape should be [3]}}
  %0 = graph.slice %x {axes = array<i64: 0>, ends = array<i64: -1>, starts = array<i64: 4>, steps = array<i64: -2>} : (tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Tests that slice attribute arrays must have equal lengths.
func.func @slice_lengths(%x: tensor<4x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.slice' op starts, ends, axes and steps must have equal length}}
  %0 = graph.slice %x {axes = array<i64: 0>, ends = array<i64: 2, 4>, starts = array<i64: 0>, steps = array<i64: 1>} : (tensor<4x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that a slice axis past the rank is rejected.
func.func @slice_axis(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.slice' op axis 1 is out of range for rank 1}}
  %0 = graph.slice %x {axes = array<i64: 1>, ends = array<i64: 2>, starts = array<i64: 0>, steps = array<i64: 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that trilu needs a matrix (rank >= 2) to take a triangle of.
func.func @trilu_rank(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.trilu' op input must have rank >= 2}}
  %0 = graph.trilu %x {k = 0 : i64, upper = true} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that the parser refuses a precision no kernel may have, naming those
// it may.
func.func @kernel_precision(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{precision must be fp32, bf16, fp16, fp8 or int8, got 'fp6'}}
  %0 = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<fp6>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %r = graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %r : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// Tests that tf32, a numeric format but no kernel precision, is refused.
func.func @kernel_precision_tf32(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{precision must be fp32, bf16, fp16, fp8 or int8, got 'tf32'}}
  %0 = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<tf32>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %r = graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %r : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// Tests that the parser refuses a kernel kind that names none, listing the
// kinds.
func.func @kernel_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{kind must be matmul, conv, elementwise, reduction, softmax, normalization or data_movement, got 'magic'}}
  %0 = graph.kernel %x {kind = #graph.kind<magic>, precision = #graph.precision<fp32>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %r = graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %r : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// Tests that collective, the cost class of a collective, is no kernel's kind.
func.func @kernel_kind_collective(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{kind must be matmul, conv, elementwise, reduction, softmax, normalization or data_movement, got 'collective'}}
  %0 = graph.kernel %x {kind = #graph.kind<collective>, precision = #graph.precision<fp32>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %r = graph.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %r : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// Tests that a collective needs one chip per operand.
func.func @all_reduce_chips(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'graph.all_reduce' op needs as many results and chips as operands (2)}}
  %r:2 = graph.all_reduce %a, %b {chips = array<i64: 0>} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// Tests that a chip appears once in a collective.
func.func @all_reduce_twice(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'graph.all_reduce' op chip 1 appears twice}}
  %r:2 = graph.all_reduce %a, %b {chips = array<i64: 1, 1>} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// Tests that an all-gather's results are the concatenation.
func.func @all_gather_shape(%a: tensor<1x4xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{'graph.all_gather' op every result should be [1x8]}}
  %r:2 = graph.all_gather %a, %b {axis = 1 : i64, chips = array<i64: 0, 1>} : (tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>)
  return
}

// -----

// Tests that the pre-enum spelling of a kernel's storage (a string) is
// refused with the spelling it now takes.
func.func @storage_string(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'storage' failed to satisfy constraint: a numeric format: #graph.precision<fp32|bf16|fp16|fp8|int8>}}
  %0 = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, storage = "fp8"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    graph.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
