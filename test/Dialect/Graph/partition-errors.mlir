// RUN: %loom-opt --split-input-file --verify-diagnostics --graph-partition="target=tiny chips=2" %s
// RUN: %loom-opt --split-input-file --verify-diagnostics --graph-partition="target=tiny chips=2 tp=3" %S/Inputs/partition-one-op.mlir
// RUN: %loom-opt --split-input-file --verify-diagnostics --graph-partition="target=tiny chips=4 tp=2 pp=3" %S/Inputs/partition-tp-pp.mlir

// A 16 MiB weight does not fit in two tiny chips (4 MiB of SRAM each): the
// error names the bytes and the fewest chips a partition fits on: one
// matmul is one stage, so its weight must be split by columns over enough
// chips that a fifth of each stays free (8: 2 MiB each; 5 to 7 do not
// divide its 262144 columns).
// expected-error @+1 {{graph-partition: the model does not fit on 2 chips of tiny: it needs 16777280 bytes of SRAM (16777216 of weights, 64 of inputs) but 2 chips hold 8388608; the fewest chips that fit are 8 (--chips=8)}}
func.func @too_big(%x: tensor<1x16xf32>) -> tensor<1x262144xf32> {
  %w = graph.constant {value = dense<1.0> : tensor<16x262144xf32>} : () -> tensor<16x262144xf32>
  %y = graph.matmul %x, %w : (tensor<1x16xf32>, tensor<16x262144xf32>) -> tensor<1x262144xf32>
  return %y : tensor<1x262144xf32>
}

// -----

// A constant printed without its data (`--emit=graph` elides large
// weights) cannot be cut into per-chip pieces: the error says why and how
// to print it whole.
// expected-error @+1 {{graph-partition: could not slice a constant: constant blob 'w_elided' has no data (text printed with its weights elided; `loom compile --emit=... --keep-weights` keeps them)}}
func.func @elided(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %w = graph.constant {value = dense_resource<w_elided> : tensor<8x8xf32>} : () -> tensor<8x8xf32>
  %m = graph.matmul %x, %w : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
  return %m : tensor<1x8xf32>
}
