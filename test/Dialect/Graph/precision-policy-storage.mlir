// Tests graph-precision-policy's storage rules (an LLM's KV cache held at
// a narrow format, `--kv-precision`): a kernel whose every result is
// returned as a result with graph.storage = F stores at F; a copy (reshape,
// transpose, concat, slice, gather, broadcast_to, tile) of values all stored
// at F stores at F; every other kernel has no storage. The kernels are as
// graph-form-kernels makes them; the precision policy does not change the
// rules.
// RUN: %loom-opt --graph-precision-policy --split-input-file --verify-diagnostics %s | FileCheck %s
// RUN: %loom-opt --graph-precision-policy=precision=fp8 --split-input-file --verify-diagnostics %s | FileCheck %s

// The decode step's pattern: the past keys (an fp8 argument) and the new
// key appended into the present keys (an fp8 result, rounded as written),
// then transposed for the scores (an exact copy: fp8 too); the matmul and
// the softmax read them but are not copies, so they have no storage.
// CHECK-LABEL: func.func @kv_cache(
// CHECK: graph.kernel %arg0, %arg1 {kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>, storage = #graph.precision<fp8>}
// CHECK: graph.kernel %0 {kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>, storage = #graph.precision<fp8>}
// CHECK: graph.kernel %arg2, %1 {kind = #graph.kind<matmul>, precision = #graph.precision<{{fp32|fp8}}>} :
// CHECK: graph.kernel %2 {kind = #graph.kind<softmax>, precision = #graph.precision<fp32>} :
func.func @kv_cache(%past: tensor<1x2x3x4xf32> {graph.storage = "fp8"}, %new: tensor<1x2x1x4xf32>, %q: tensor<1x2x1x4xf32>) -> (tensor<1x2x4x4xf32> {graph.storage = "fp8"}, tensor<1x2x1x4xf32>) {
  %present = graph.kernel %past, %new {kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%a: tensor<1x2x3x4xf32>, %b: tensor<1x2x1x4xf32>):
    %c = graph.concat %a, %b {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
    graph.yield %c : tensor<1x2x4x4xf32>
  }
  %kt = graph.kernel %present {kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%a: tensor<1x2x4x4xf32>):
    %t = graph.transpose %a {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    graph.yield %t : tensor<1x2x4x4xf32>
  }
  %s = graph.kernel %q, %kt {kind = #graph.kind<matmul>, precision = #graph.precision<fp32>} : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32> {
  ^bb0(%a: tensor<1x2x1x4xf32>, %b: tensor<1x2x4x4xf32>):
    %m = graph.matmul %a, %b : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
    graph.yield %m : tensor<1x2x1x4xf32>
  }
  %p = graph.kernel %s {kind = #graph.kind<softmax>, precision = #graph.precision<fp32>} : (tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32> {
  ^bb0(%a: tensor<1x2x1x4xf32>):
    %y = graph.softmax %a {axis = 3 : i64} : (tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
    graph.yield %y : tensor<1x2x1x4xf32>
  }
  return %present, %p : tensor<1x2x4x4xf32>, tensor<1x2x1x4xf32>
}

// -----

// A copy that mixes a stored value with one that is not (the new key
// before it is appended) is not exact in the narrow format: no storage.
// CHECK-LABEL: func.func @not_stored(
// CHECK-NOT: , storage =
// CHECK: return
func.func @not_stored(%past: tensor<2x4xf32> {graph.storage = "fp8"}, %new: tensor<1x4xf32>) -> tensor<3x4xf32> {
  %mixed = graph.kernel %past, %new {kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>} : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32> {
  ^bb0(%a: tensor<2x4xf32>, %b: tensor<1x4xf32>):
    %c = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
    graph.yield %c : tensor<3x4xf32>
  }
  return %mixed : tensor<3x4xf32>
}

// -----

// A result to be stored narrow whose value no kernel stores so is refused:
// a kernel returned as results of two formats,
// expected-error @+1 {{graph-precision-policy: result 0 is to be stored at fp8, but its value comes from 'graph.kernel', which does not store it so (storage is partial: only a kernel whose every result is returned stores narrow)}}
func.func @two_formats(%new: tensor<1x4xf32>) -> (tensor<4x4xf32> {graph.storage = "fp8"}, tensor<4x4xf32> {graph.storage = "bf16"}) {
  %two = graph.kernel %new, %new, %new, %new {kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>} : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<1x4xf32>, %b: tensor<1x4xf32>, %c: tensor<1x4xf32>, %d: tensor<1x4xf32>):
    %e = graph.concat %a, %b, %c, %d {axis = 0 : i64} : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
    graph.yield %e : tensor<4x4xf32>
  }
  return %two, %two : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// one returned both with and without graph.storage,
// expected-error @+1 {{graph-precision-policy: result 0 'kv' is to be stored at fp8, but its value comes from 'graph.kernel'}}
func.func @stored_and_not(%past: tensor<2x4xf32>) -> (tensor<2x4xf32> {graph.name = "kv", graph.storage = "fp8"}, tensor<2x4xf32>) {
  %neg = graph.kernel %past {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>} : (tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>):
    %n = graph.neg %a : (tensor<2x4xf32>) -> tensor<2x4xf32>
    graph.yield %n : tensor<2x4xf32>
  }
  return %neg, %neg : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// and an argument returned as it came in.
// expected-error @+1 {{graph-precision-policy: result 0 is to be stored at fp8, but its value comes from an argument}}
func.func @argument(%x: tensor<2xf32>) -> (tensor<2xf32> {graph.storage = "fp8"}) {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{graph-precision-policy: argument 0: graph.storage must be bf16, fp16 or fp8, got "int8"}}
func.func @bad_storage(%x: tensor<2xf32> {graph.storage = "int8"}) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// A kernel's own storage attribute is checked by its verifier.
func.func @bad_kernel_storage(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'graph.kernel' op storage must be bf16, fp16 or fp8, got 'fp32'}}
  %y = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, storage = #graph.precision<fp32>} : (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>):
    %n = graph.neg %a : (tensor<2xf32>) -> tensor<2xf32>
    graph.yield %n : tensor<2xf32>
  }
  return %y : tensor<2xf32>
}

// -----

// int8 is a kernel precision, but no storage format: it needs a scale.
func.func @int8_kernel_storage(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'graph.kernel' op storage must be bf16, fp16 or fp8, got 'int8'}}
  %y = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, storage = #graph.precision<int8>} : (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>):
    %n = graph.neg %a : (tensor<2xf32>) -> tensor<2xf32>
    graph.yield %n : tensor<2xf32>
  }
  return %y : tensor<2xf32>
}

// -----

// A storage that names no kernel precision is refused by the parser.
func.func @tf32_kernel_storage(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{precision must be fp32, bf16, fp16, fp8 or int8, got 'tf32'}}
  %y = graph.kernel %x {kind = #graph.kind<elementwise>, precision = #graph.precision<fp32>, storage = #graph.precision<tf32>} : (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>):
    %n = graph.neg %a : (tensor<2xf32>) -> tensor<2xf32>
    graph.yield %n : tensor<2xf32>
  }
  return %y : tensor<2xf32>
}

// -----

// Storage is for f32 results.
func.func @bad_kernel_storage_type(%x: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{'graph.kernel' op storage fp8 is for f32 results, got 'tensor<2xi64>'}}
  %y = graph.kernel %x {kind = #graph.kind<data_movement>, precision = #graph.precision<fp32>, storage = #graph.precision<fp8>} : (tensor<2xi64>) -> tensor<2xi64> {
  ^bb0(%a: tensor<2xi64>):
    %n = graph.reshape %a : (tensor<2xi64>) -> tensor<2xi64>
    graph.yield %n : tensor<2xi64>
  }
  return %y : tensor<2xi64>
}
