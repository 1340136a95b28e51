// Tests that graph-partition counts the weights of matmul and conv at the
// precision policy's storage format (issue 31 item 8): a conv whose fp32
// weight (512x512x3x3, 9.4 MB) exceeds tiny's 4 MiB of SRAM fits at int8
// and fp8 (2.4 MB), and the fp32 refusal counts 4 bytes a weight; a
// matmul's weight likewise.
// RUN: not %loom-opt --graph-partition="target=tiny chips=1 precision=fp32" %s 2>&1 | FileCheck %s --check-prefix=FP32
// RUN: %loom-opt --graph-partition="target=tiny chips=1 precision=int8" %s | FileCheck %s --check-prefix=NARROW
// RUN: %loom-opt --graph-partition="target=tiny chips=1 precision=fp8" %s | FileCheck %s --check-prefix=NARROW
// RUN: not %loom-opt --graph-partition="target=tiny chips=1 precision=bf16" %s 2>&1 | FileCheck %s --check-prefix=BF16

// FP32: graph-partition: the model does not fit on 1 chip of tiny: it needs 9445376 bytes of SRAM (9437184 of weights, 8192 of inputs)
// BF16: it needs 4726784 bytes of SRAM (4718592 of weights, 8192 of inputs)
// NARROW-LABEL: func.func @conv(
// NARROW: graph.conv
func.func @conv(%x: tensor<1x512x2x2xf32> {graph.name = "x"}) -> (tensor<1x512x2x2xf32> {graph.name = "y"}) {
  %w = graph.constant {value = dense<0.5> : tensor<512x512x3x3xf32>} : () -> tensor<512x512x3x3xf32>
  %y = graph.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x512x2x2xf32>, tensor<512x512x3x3xf32>) -> tensor<1x512x2x2xf32>
  return %y : tensor<1x512x2x2xf32>
}
