//===- Isa.h - The tile instruction set's timing rules ----------*- C++ -*-===//
//
// How long each instruction of a tile program takes, from its shape and the
// target's fields: the one place these rules live (docs/isa.md states each
// with its name). The runtime owns them, as it owns Program.fbs: the
// scheduler (spatial-to-sched) sets every duration by them, and the
// schedule verifier and the simulator check every duration against them,
// each re-deriving the instruction's shape on its own side (the compiler
// from its decomposition, the runtime from the program's ops and buffer
// boxes), so neither trusts the other's arithmetic.
//
// A kernel instruction's shape is its TileWork: the contractions its tile
// computes (batch x (m x k) * (k x n) each, from the boxes of their results
// the tile produces), the vector element operations of its other ops, and
// the bytes of its SRAM operands. What each op costs is `opCost`, keyed by
// the op's program name (the graph dialect's mnemonic).
//
// Every rule returns whole cycles, at least 1, saturating at INT64_MAX
// (rates and sizes from a hostile file must not overflow).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_ISA_H
#define LOOM_RUNTIME_ISA_H

#include "loom/Runtime/TargetDesc.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace loom::rt {

/// One contraction a tile computes: `batch` products (m x k) * (k x n).
struct Contraction {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  /// batch * m * n * k, saturating.
  int64_t macs() const;
  bool operator==(const Contraction &) const = default;
};

/// The shape of one kernel instruction on its tile: what its timing rule
/// reads.
struct TileWork {
  /// The kernel's contractions (matmul, conv) on this tile's result boxes.
  std::vector<Contraction> contractions;
  /// Element operations of its other ops on this tile (opCost).
  int64_t vectorOps = 0;
  /// Bytes of the SRAM buffers its kernel instruction reads and writes.
  int64_t sramBytes = 0;
};

/// What an op costs on the vector unit, per element.
struct OpCost {
  enum Kind {
    Contraction,   ///< matmul, conv: a Contraction (the matrix unit's work).
    PerOutput,     ///< `ops` per element of the result box it produces.
    PerInput,      ///< `ops` per element of the box of operand 0 it reads
                   ///< (reductions and pooling).
    DataMovement,  ///< no arithmetic: its bytes are the instruction's.
  };
  Kind kind = PerOutput;
  int64_t ops = 1;
};

/// The cost class of the op `name` (a program op name, the graph dialect's
/// mnemonic): matmul and conv are contractions; reduce_*, arg_max, arg_min,
/// max_pool and avg_pool 1 per input element; softmax, log_softmax and
/// hardmax 5 per output element (max, subtract, exp, sum, divide); the
/// normalisations 7 (mean, subtract, square, mean, rsqrt, multiply, add);
/// conv_transpose every kernel tap of its input channels per output element
/// (weight elements / output channels: an upper bound, strides ignored);
/// all_reduce one add per extra operand per element; reshape, transpose,
/// broadcast_to, concat, slice, gather*, scatter*, tile, pad, topk, trilu,
/// resize, depth_to_space, space_to_depth, one_hot, cumsum, all_gather and
/// constant move data; every other op (elementwise, einsum: partial, its
/// contracted indices are not counted) 1 per output element.
/// `operandShapes` and `resultShape` are those of the whole op.
OpCost opCost(std::string_view name,
              const std::vector<std::vector<int64_t>> &operandShapes,
              const std::vector<int64_t> &resultShape);

/// The contraction of a matmul (numpy semantics: 1-D operands promoted)
/// whose result box has extents `box`: n the last extent (1 for a 1-D B),
/// m the one before (1 for a 1-D A), batch the product of the rest; k is
/// A's last dimension.
Contraction matmulContraction(const std::vector<int64_t> &lhsShape,
                              const std::vector<int64_t> &rhsShape,
                              const std::vector<int64_t> &boxLo,
                              const std::vector<int64_t> &boxHi);

/// The contraction of a convolution with weights of `weightShape`
/// ([OC, IC/g, k...]) and `groups` groups whose result box is
/// [boxLo, boxHi) (N, C, spatial...): batch the groups the channel range
/// touches, m the box's batch and spatial extents, n the channels of one
/// group in the box (min(channel extent, OC/g)), k = IC/g x kernel elements.
Contraction convContraction(const std::vector<int64_t> &weightShape,
                            int64_t groups, const std::vector<int64_t> &boxLo,
                            const std::vector<int64_t> &boxHi);

//===----------------------------------------------------------------------===//
// The rules (docs/isa.md, "Timing rules"): one function per rule.
//===----------------------------------------------------------------------===//

/// Rule `weight.load`: `rows` rows of the matrix unit's stationary block
/// (each bN wide, as the array takes them, in `format`) entering at
/// chip.tile.matrix.weight_load_bytes_per_cycle; 0 when the target does not
/// model the rate.
int64_t weightLoadCycles(const TileDesc &tile, NumericFormat format,
                         int64_t rows);

/// Rule `matrix.block`: one contraction on the matrix unit in `format`, in
/// whole native blocks: for each of batch x ceil(n/bN) x ceil(k/bK)
/// stationary blocks, the larger of ceil(m/bM) row blocks of
/// ceil(bM x bN x bK / macs) cycles each and the block's `weight.load`
/// (loaded while the previous block computes). 0 for an empty contraction;
/// the unit must run `format` (macs > 0), else INT64_MAX.
int64_t matrixBlockCycles(const TileDesc &tile, NumericFormat format,
                          const Contraction &c);

/// Rule `sram`: bytes through the tile's SRAM, ceil(bytes / bytes per
/// cycle) (0 for none; INT64_MAX without a rate).
int64_t sramCycles(const TileDesc &tile, int64_t bytes);

/// Rule `kernel.matrix`: a kernel's Matrix instruction: its contractions'
/// matrix.block cycles plus the unit's latency, no less than its SRAM
/// operands' `sram` cycles; 1 with no work.
int64_t matrixInstrCycles(const TileDesc &tile, NumericFormat format,
                          const TileWork &work);

/// Rule `kernel.epilogue`: the Vector instruction beside a Matrix one (the
/// fused epilogue streams as results come out): ceil(vectorOps / lanes),
/// at least 1.
int64_t epilogueInstrCycles(const TileDesc &tile, const TileWork &work);

/// Rule `kernel.vector`: a kernel on the vector unit alone: its
/// contractions as one multiply-accumulate per lane per cycle plus its
/// vector ops, ceil((macs + vectorOps) / lanes) plus the unit's latency, no
/// less than its SRAM operands' `sram` cycles; 1 with no work.
int64_t vectorInstrCycles(const TileDesc &tile, const TileWork &work);

/// Rule `kernel.dma`: a data-movement kernel on the DMA unit: its SRAM
/// operands' `sram` cycles, at least 1.
int64_t dmaKernelInstrCycles(const TileDesc &tile, const TileWork &work);

/// Rule `transfer.mesh`: a DMA instruction of a transfer on one chip:
/// ceil(bytes / rate) + hop latency x hops, where the rate is the mesh
/// link's when the bytes leave the tile (`leavesTile`) and the SRAM's for a
/// copy within it; at least 1.
int64_t meshTransferCycles(const ChipDesc &chip, int64_t bytes, int64_t hops,
                           bool leavesTile);

/// Rule `link.mesh`: a mesh link carrying `bytes` of a transfer whose
/// longest route is `hops` hops: ceil(bytes / link rate) + hop latency x
/// hops; at least 1.
int64_t meshLinkCycles(const ChipDesc &chip, int64_t bytes, int64_t hops);

/// Rule `transfer.chip`: a DMA instruction injecting `bytes` into the chip
/// network: ceil(bytes / mesh link rate) (the SRAM's without a mesh), at
/// least 1.
int64_t chipInjectCycles(const ChipDesc &chip, int64_t bytes);

/// Rule `link.chip`: a chip link carrying `bytes` at its route's
/// `bytesPerCycle`: ceil(bytes / rate), at least 1.
int64_t chipLinkCycles(double bytesPerCycle, int64_t bytes);

} // namespace loom::rt

#endif // LOOM_RUNTIME_ISA_H
