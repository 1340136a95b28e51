// Tests that a model whose live bytes exceed a tile's SRAM fails scheduling
// with one diagnostic at the kernel (its location is the ONNX node), naming
// the kernel, the bytes needed and the bytes the tile has.
// RUN: not %loom-opt --split-input-file --graph-to-spatial=target=tiny --spatial-to-sched=target=tiny %s 2>&1 | FileCheck %s

// Tests a weight too big for the chip: 1024 x 2048 fp32 is 8 MiB, 512 KiB
// on each of tiny's 16 tiles of 256 KiB.
// CHECK: loc("big_fc"): kernel 'big_fc' does not fit in SRAM: tile 0 needs {{[0-9]+}} bytes live at once but has 262144 bytes
// CHECK-NOT: error:
func.func @too_big(%x: tensor<16x1024xf32>) -> tensor<16x2048xf32> {
  %w = graph.constant {value = dense<1.0> : tensor<1024x2048xf32>} : () -> tensor<1024x2048xf32> loc("w")
  %y = graph.kernel %x, %w {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<16x1024xf32>, tensor<1024x2048xf32>) -> tensor<16x2048xf32> {
  ^bb0(%a: tensor<16x1024xf32>, %b: tensor<1024x2048xf32>):
    %m = graph.matmul %a, %b : (tensor<16x1024xf32>, tensor<1024x2048xf32>) -> tensor<16x2048xf32>
    graph.yield %m : tensor<16x2048xf32>
  } loc("big_fc")
  return %y : tensor<16x2048xf32>
}
