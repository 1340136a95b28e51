// Tests graph-to-spatial's errors: each is one diagnostic at the op.
// RUN: %loom-opt --split-input-file --verify-diagnostics --graph-to-spatial=target=tiny %s
// RUN: not %loom-opt --graph-to-spatial=target=no-such-target %s 2>&1 | FileCheck %s --check-prefix=TARGET

// TARGET: graph-to-spatial: {{.*}}no-such-target

// Tests that compute outside a kernel is rejected with a hint.
func.func @loose_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{graph-to-spatial: 'graph.relu' is not inside a graph.kernel (run graph-form-kernels first)}}
  %r = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

