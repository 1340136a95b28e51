//===- Passes.td - graph dialect passes --------------------*- tablegen -*-===//
#ifndef LOOM_GRAPH_PASSES
#define LOOM_GRAPH_PASSES

include "mlir/Pass/PassBase.td"

def GraphVerifyShapes : Pass<"graph-verify-shapes", "mlir::func::FuncOp"> {
  let summary = "Check that every tensor has a static shape and every op's "
                "result shape is what its operands imply";
  let description = [{
    Later passes (mapping, scheduling, allocation) need static shapes. This
    pass rejects dynamic dimensions and unranked tensors with a diagnostic at
    the op (whose location names the ONNX node), and re-runs each op's
    verifier so a graph built by hand is held to the importer's standard.
  }];
}

def GraphFoldConstants : Pass<"graph-fold-constants", "mlir::func::FuncOp"> {
  let summary = "Evaluate ops whose operands are all constants";
  let description = [{
    Uses the golden reference evaluator to replace an op whose operands are
    all `graph.constant` with the constant it computes, when the result has at
    most `max-elements` elements (so weights are not duplicated).
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"1 << 20",
           "Largest result (in elements) that is folded">
  ];
}

def GraphFoldBatchNorm : Pass<"graph-fold-batch-norm", "mlir::func::FuncOp"> {
  let summary = "Fold an inference batch_norm into the convolution before it";
  let description = [{
    A `graph.batch_norm` whose input is a `graph.conv` or
    `graph.conv_transpose` used by nothing else, where the convolution's
    weight and bias (if any) and the normalisation's scale, bias, mean and
    variance are all `graph.constant`, becomes one convolution with

      s[c] = scale[c] / sqrt(variance[c] + epsilon)
      weight'[c, ...] = weight[c, ...] * s[c]     (output channel c)
      bias'[c] = (bias[c] - mean[c]) * s[c] + bias_bn[c]

    computed in double and stored in the weight's element type. The new
    weight and bias are new `graph.constant` ops; the old ones are left for
    `-canonicalize` to delete. Any other batch_norm (after a non-convolution,
    after a convolution with other users, or with a non-constant operand, or
    whose constant data is not available) is left as it is.
  }];
}

def GraphFoldQuantized : Pass<"graph-fold-quantized", "mlir::func::FuncOp"> {
  let summary = "Fold quantized matmul and conv patterns into int8 anchors";
  let description = [{
    A `graph.matmul` or `graph.conv` whose two operands are 8-bit integer
    tensors as the importer writes ONNX's quantized ops (DequantizeLinear:
    `cast`, `sub` of a constant zero point, `mul` by a constant scale;
    MatMulInteger, QLinearMatMul: `cast` to int32 and `sub`; QLinearConv,
    ConvInteger: the same in f64; a matmul operand possibly through a
    `transpose`) becomes the int8 kernel's anchor: the same op on the 8-bit
    tensors with an int32 result and the zero points as the attributes
    `lhs_zero_point`/`rhs_zero_point` (matmul) or
    `input_zero_point`/`weight_zero_point` (conv), followed by `cast`, the
    product of the scales (per tensor, or per output channel) and a float
    bias, which `graph-form-kernels` fuses as its epilogue. A conv's int32
    bias (QLinearConv's, or QDQ's at scale x_scale * w_scale) joins the
    integer sum. Runs before constant folding, which would otherwise fold a
    dequantized weight into fp32.

    Left as it is, with a warning naming the reason when both operands are
    quantized: per-axis zero points that differ, a scale that varies along
    the contracted axis, a conv input scale that is not per tensor, a conv
    weight scale along an axis other than 0, a matmul operand of rank 1.
  }];
  let statistics = [
    Statistic<"folded", "folded", "Matrix ops folded into int8 anchors">
  ];
}

def GraphPartition : Pass<"graph-partition", "mlir::func::FuncOp"> {
  let summary = "Split a model across chips: tensor and pipeline parallelism";
  let description = [{
    Partitions the function over `chips` chips as `tp` x `pp`: `pp`
    pipeline stages (contiguous ranges of ops, balanced by the cost model's
    time under each chip's SRAM), each on a tensor-parallel group of `tp`
    chips. Chip `stage * tp + rank` runs rank `rank` of stage `stage`.

    Tensor parallelism propagates a sharding through the graph in op order:
    every value is replicated, split, or a partial sum. A split cuts one
    dimension, or several consecutive ones flattened, into contiguous
    pieces that are boxes: one per rank, or fewer, each shared by
    consecutive ranks. A matmul by a constant weight splits the weight by
    columns when its input is replicated (column-parallel) and by rows when
    its input is split along the contracted dimension (row-parallel, giving
    partial sums); elementwise ops, softmax and normalisations over other
    axes, reshapes, transposes, concats and slices keep a split; batched
    matmuls of two activations split along batch dimensions (attention
    heads), or along batch dimensions and the left side's rows, stay local.
    So attention with more ranks than key-value heads splits its query
    heads over (kv, group) and each KV head, and its cache, is shared by the
    ranks of its query heads: a reshape that would cut a head apart takes
    fewer, shared pieces instead, gathered inside each group of ranks that
    shares one. Where such a gathered piece is a projection's result (k and
    v), the pass also prices the projection computed in the shared pieces
    (each rank multiplying by its group's weight columns whole: more
    weights and work a rank, no gather) and keeps it where it fits and the
    estimate is lower; the partition report says which ("N projections
    computed per group of G ranks", or why not). Where an op needs a replicated value, a `graph.all_reduce`
    (partial sums) or `graph.all_gather` (splits) is inserted. Every op is
    cloned per rank with the rank's local shapes; constants are sliced per
    rank; model inputs and outputs that are split or replicated become one
    function argument or result per chip, marked `graph.part`, which the
    runtime scatters and gathers.

    With `tp` or `pp` 0 the pass chooses both from the cost model: every
    tp x pp = chips whose stages fit in SRAM, the best estimate for the
    objective (latency: the sum of stage times and collectives; throughput:
    the slowest stage). A model whose weights and inputs exceed the chips'
    SRAM fails with the bytes needed and the fewest chips that could hold
    them. The choice and the estimates are in the function attribute
    `graph.partition_report`; for a pipelined split (pp > 1),
    `graph.in_flight` is the chosen estimate's latency over its interval
    (rounded up), the inputs in flight that graph-to-spatial leaves room
    for.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"tiny\"",
           "Target preset name or JSON file">,
    Option<"chips", "chips", "int64_t", /*default=*/"1",
           "Chips to partition over (tp x pp)">,
    Option<"tp", "tp", "int64_t", /*default=*/"0",
           "Tensor-parallel degree (0: choose)">,
    Option<"pp", "pp", "int64_t", /*default=*/"0",
           "Pipeline stages (0: choose)">,
    Option<"systemChips", "system-chips", "int64_t", /*default=*/"0",
           "The system the chips are the first of: chip links get their "
           "share of bandwidth in a system this big (0: the chips alone)">,
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "Matrix precision (sets the bytes a weight takes)">,
    Option<"objective", "objective", "std::string", /*default=*/"\"latency\"",
           "latency or throughput">,
  ];
}

def GraphFormKernels : Pass<"graph-form-kernels", "mlir::func::FuncOp"> {
  let summary = "Group every compute op into graph.kernel ops, fusing "
                "elementwise epilogues into matmul/conv anchors";
  let description = [{
    Visits the function's ops in order. Each op not yet in a kernel starts a
    group:

    - A `graph.matmul`, `graph.einsum`, `graph.conv` or `graph.conv_transpose`
      anchor absorbs its elementwise epilogue: each later elementwise op
      (unary ops such as relu, sigmoid, tanh, erf, leaky_relu; binary
      arithmetic such as add, sub, mul, div, max, min, pow, prelu; select;
      cast) whose result has the anchor's shape, that uses a value of the
      group, and whose other operands are constants or values defined before
      the anchor (a bias, a residual input). This takes in bias, activation,
      residual add, scaling, clipping, and a GELU written out as
      div/erf/add/mul/mul.
    - A `graph.matmul` also takes in a transpose of the last two
      dimensions of either operand when the matmul is its one use (the
      keys of attention's scores, a Gemm's transposed weight): the matrix
      unit reads an operand in either order, so no transposed copy is made.
      Such a kernel is placed where its matmul was.
    - An elementwise op starts an elementwise group that grows by the same
      rule (same result shape), so a chain of elementwise ops becomes one
      kernel.
    - Any other op forms a kernel by itself.

    Kernel kinds: matmul (matmul, einsum), conv (conv, conv_transpose),
    elementwise, reduction (reduce_*, arg_max, arg_min, max_pool, avg_pool),
    softmax (softmax, log_softmax, hardmax), normalization (batch_norm,
    layer_norm, instance_norm) and data_movement (reshape, transpose, concat,
    slice, gather*, scatter*, pad, tile, broadcast_to, resize,
    depth_to_space, space_to_depth, topk, trilu, one_hot, cumsum).

    Each kernel is placed where its first op was, or its matmul (every
    input is defined before it by the rules above). Its inputs are the values its ops use from
    outside, in order of first use; `graph.constant` ops stay outside and are
    passed in (a constant defined later is moved up). It yields every result
    used outside it, including an intermediate that is also used inside, and
    every result with no use at all. `precision` is "fp32"; ops already in a
    kernel are left alone, so the pass is idempotent. An op of the graph
    dialect with no known kind is an error.
  }];
}

def GraphPrecisionPolicy : Pass<"graph-precision-policy", "mlir::func::FuncOp"> {
  let summary = "Set the precision of every graph.kernel";
  let description = [{
    With `precision=bf16`, `fp16` or `fp8`, matmul and conv kernels run the
    matrix unit on narrow inputs (activations and weights rounded to
    bfloat16, IEEE binary16 or FP8 E4M3, round to nearest even; E4M3
    saturates at +-448) with fp32 accumulation, and their epilogue and
    outputs in fp32; every other kernel stays fp32. With `precision=int8`
    each input of a matmul or conv is quantized symmetrically per tensor
    (scale max|x| / 127, round to nearest even, clamp to +-127; zero stays
    zero) and the result is fp32 (the hardware's int32 arithmetic is exact;
    the simulator multiplies and sums the dequantized values in fp32).
    With `precision=fp32` (the default) every kernel is fp32. Any other
    value is an error.

    The pass also sets each kernel's `storage` (`#graph.precision<F>`),
    the format its results are held in (an LLM's KV cache at fp8,
    `--kv-precision`), from the `graph.storage` attributes (strings, "F")
    of the function's arguments and results:

    - a kernel whose every result is returned as a result with
      `graph.storage = F` stores at F: its results are rounded to F when
      written (the updated KV cache);
    - a kernel that only copies (reshape, transpose, concat, slice, gather,
      broadcast_to, tile) and whose every f32 input is stored at F (an
      argument with `graph.storage = F`, or a kernel storing at F) stores
      at F too: its values are F's already, so nothing is rounded (a
      reshape or slice of the cache).

    Any other kernel stores its results as their type. A result with
    `graph.storage` whose value no kernel stores so (an argument returned
    as it is, a kernel with other results besides, a value gathered across
    chips before it is returned) is an error (storage is partial), as is a
    `graph.storage` that is not bf16, fp16 or fp8.
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "Matrix precision policy: fp32, bf16, fp16, fp8 or int8 (narrow "
           "inputs, fp32 or int32 accumulation)">
  ];
}

def GraphChooseLayout : Pass<"graph-choose-layout", "mlir::func::FuncOp"> {
  let summary = "Set each matmul/conv kernel's block to the target matrix "
                "unit's native block";
  let description = [{
    Loads the target (`target=NAME` for a preset, or a JSON file) with
    `loom::TargetModel` and sets `block = [M, N, K]`, the matrix unit's
    native block, on every matmul and conv kernel whose precision (fp32,
    bf16, fp16, fp8 or int8) the matrix unit runs; the operands are laid out and padded in
    whole blocks. A kernel whose precision the matrix unit does not run goes
    to the vector unit, which has no native block, so its `block` is
    removed. Other kernels are not changed. A missing or invalid target is
    an error that names it.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "Target preset name or JSON file">
  ];
}

#endif // LOOM_GRAPH_PASSES
