//===- Isa.cpp - The tile instruction set's timing rules ------------------===//
#include "loom/Runtime/Isa.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace loom::rt {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t mulSat(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kMax : r;
}

int64_t addSat(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kMax : r;
}

int64_t ceilDiv(int64_t a, int64_t b) {
  return b > 0 ? a / b + (a % b != 0) : kMax; // no a + b - 1: a may be kMax
}

/// ceil(bytes / rate) in whole cycles; 0 for no bytes, INT64_MAX without a
/// rate or past the range.
int64_t cyclesAt(int64_t bytes, double rate) {
  if (bytes <= 0)
    return 0;
  if (!(rate > 0))
    return kMax;
  double c = std::ceil(static_cast<double>(bytes) / rate);
  return c >= 9.2e18 ? kMax : static_cast<int64_t>(c);
}

int64_t product(const std::vector<int64_t> &v, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i)
    p = mulSat(p, v[i]);
  return p;
}

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

} // namespace

int64_t Contraction::macs() const {
  return mulSat(mulSat(batch, m), mulSat(n, k));
}

OpCost opCost(std::string_view name,
              const std::vector<std::vector<int64_t>> &operandShapes,
              const std::vector<int64_t> &resultShape) {
  if (name == "matmul" || name == "conv")
    return {OpCost::Contraction, 0};
  if (startsWith(name, "reduce_") || name == "arg_max" || name == "arg_min" ||
      name == "max_pool" || name == "avg_pool")
    return {OpCost::PerInput, 1};
  if (name == "softmax" || name == "log_softmax" || name == "hardmax")
    return {OpCost::PerOutput, 5};
  if (name == "batch_norm" || name == "layer_norm" || name == "instance_norm")
    return {OpCost::PerOutput, 7};
  if (name == "conv_transpose") {
    // Weights [IC, OC/g, k...]: every tap of the input channels of one
    // output channel's group.
    int64_t channels = resultShape.size() > 1 ? resultShape[1] : 1;
    int64_t taps = operandShapes.size() > 1 ? product(operandShapes[1]) : 1;
    return {OpCost::PerOutput, std::max<int64_t>(1, taps / std::max<int64_t>(
                                                               1, channels))};
  }
  if (name == "all_reduce")
    return {OpCost::PerOutput,
            std::max<int64_t>(1, static_cast<int64_t>(operandShapes.size()) - 1)};
  static constexpr std::string_view kMoves[] = {
      "reshape",      "transpose",      "broadcast_to", "concat",
      "slice",        "gather",         "gather_elements", "gather_nd",
      "scatter_nd",   "scatter_elements", "tile",       "pad",
      "topk",         "trilu",          "resize",       "depth_to_space",
      "space_to_depth", "one_hot",      "cumsum",       "all_gather",
      "constant"};
  for (std::string_view m : kMoves)
    if (name == m)
      return {OpCost::DataMovement, 0};
  return {OpCost::PerOutput, 1};
}

Contraction matmulContraction(const std::vector<int64_t> &lhsShape,
                              const std::vector<int64_t> &rhsShape,
                              const std::vector<int64_t> &boxLo,
                              const std::vector<int64_t> &boxHi) {
  std::vector<int64_t> ext;
  for (size_t d = 0; d < boxLo.size() && d < boxHi.size(); ++d)
    ext.push_back(std::max<int64_t>(0, boxHi[d] - boxLo[d]));
  Contraction c;
  c.k = lhsShape.empty() ? 1 : lhsShape.back();
  size_t rest = ext.size();
  if (rhsShape.size() >= 2 && rest > 0)
    c.n = ext[--rest];
  else
    c.n = 1;
  if (lhsShape.size() >= 2 && rest > 0)
    c.m = ext[--rest];
  else
    c.m = 1;
  c.batch = 1;
  for (size_t d = 0; d < rest; ++d)
    c.batch = mulSat(c.batch, ext[d]);
  return c;
}

Contraction convContraction(const std::vector<int64_t> &weightShape,
                            int64_t groups, const std::vector<int64_t> &boxLo,
                            const std::vector<int64_t> &boxHi) {
  Contraction c;
  if (weightShape.size() < 2 || boxLo.size() < 2 || boxHi.size() < 2)
    return {1, 0, 0, 0};
  groups = std::max<int64_t>(1, groups);
  const int64_t perGroup = std::max<int64_t>(1, weightShape[0] / groups);
  const int64_t c0 = boxLo[1], c1 = boxHi[1];
  if (c1 <= c0)
    return {1, 0, 0, 0};
  c.batch = ceilDiv(c1, perGroup) - c0 / perGroup;
  c.n = std::min(c1 - c0, perGroup);
  c.m = std::max<int64_t>(0, boxHi[0] - boxLo[0]);
  for (size_t d = 2; d < boxLo.size() && d < boxHi.size(); ++d)
    c.m = mulSat(c.m, std::max<int64_t>(0, boxHi[d] - boxLo[d]));
  c.k = product(weightShape, 1);
  return c;
}

int64_t weightLoadCycles(const TileDesc &tile, NumericFormat format,
                         int64_t rows) {
  const MatrixUnitDesc &mu = tile.matrix;
  if (!(mu.weightLoadBytesPerCycle > 0) || rows <= 0)
    return 0;
  // Whole rows of the array: a row enters as one vector, padded or not.
  double bytes = double(rows) * double(std::max<int64_t>(1, mu.blockN)) *
                 numericFormatBytes(format);
  double c = std::ceil(bytes / mu.weightLoadBytesPerCycle);
  return c >= 9.2e18 ? kMax : static_cast<int64_t>(c);
}

int64_t matrixBlockCycles(const TileDesc &tile, NumericFormat format,
                          const Contraction &c) {
  if (c.batch <= 0 || c.m <= 0 || c.n <= 0 || c.k <= 0)
    return 0;
  const MatrixUnitDesc &mu = tile.matrix;
  int64_t macs = mu.macs(format);
  if (macs <= 0)
    return kMax;
  int64_t bm = std::max<int64_t>(1, mu.blockM);
  int64_t bn = std::max<int64_t>(1, mu.blockN);
  int64_t bk = std::max<int64_t>(1, mu.blockK);
  int64_t perBlock = ceilDiv(mulSat(mulSat(bm, bn), bk), macs);
  // One stationary block (bK rows of the array, fewer in the last K block)
  // serves every row block of A; the next block's weights load meanwhile.
  int64_t rowsPass = mulSat(ceilDiv(c.m, bm), perBlock);
  int64_t fullK = c.k / bk, lastRows = c.k % bk;
  int64_t perColumn =
      addSat(mulSat(fullK, std::max(rowsPass, weightLoadCycles(tile, format, bk))),
             lastRows ? std::max(rowsPass, weightLoadCycles(tile, format, lastRows))
                      : 0);
  return mulSat(mulSat(c.batch, ceilDiv(c.n, bn)), perColumn);
}

int64_t sramCycles(const TileDesc &tile, int64_t bytes) {
  return cyclesAt(bytes, tile.sram.bytesPerCycle);
}

int64_t matrixInstrCycles(const TileDesc &tile, NumericFormat format,
                          const TileWork &work) {
  int64_t compute = 0;
  for (const Contraction &c : work.contractions)
    compute = addSat(compute, matrixBlockCycles(tile, format, c));
  if (compute > 0)
    compute = addSat(compute, tile.matrix.latencyCycles);
  return std::max<int64_t>({1, compute, sramCycles(tile, work.sramBytes)});
}

int64_t epilogueInstrCycles(const TileDesc &tile, const TileWork &work) {
  return std::max<int64_t>(
      1, ceilDiv(work.vectorOps, std::max<int64_t>(1, tile.vector.lanes)));
}

int64_t vectorInstrCycles(const TileDesc &tile, const TileWork &work) {
  int64_t ops = work.vectorOps;
  for (const Contraction &c : work.contractions)
    ops = addSat(ops, c.macs());
  int64_t compute = 0;
  if (ops > 0)
    compute = addSat(ceilDiv(ops, std::max<int64_t>(1, tile.vector.lanes)),
                     tile.vector.latencyCycles);
  return std::max<int64_t>({1, compute, sramCycles(tile, work.sramBytes)});
}

int64_t dmaKernelInstrCycles(const TileDesc &tile, const TileWork &work) {
  return std::max<int64_t>(1, sramCycles(tile, work.sramBytes));
}

int64_t meshTransferCycles(const ChipDesc &chip, int64_t bytes, int64_t hops,
                           bool leavesTile) {
  double rate = leavesTile ? (chip.mesh ? chip.mesh->linkBytesPerCycle : 0)
                           : chip.tile.sram.bytesPerCycle;
  int64_t hopCycles =
      chip.mesh ? mulSat(chip.mesh->hopLatencyCycles, std::max<int64_t>(0, hops))
                : 0;
  return std::max<int64_t>(1, addSat(cyclesAt(bytes, rate), hopCycles));
}

int64_t meshLinkCycles(const ChipDesc &chip, int64_t bytes, int64_t hops) {
  return meshTransferCycles(chip, bytes, hops, /*leavesTile=*/true);
}

int64_t chipInjectCycles(const ChipDesc &chip, int64_t bytes) {
  double rate = chip.mesh && chip.mesh->linkBytesPerCycle > 0
                    ? chip.mesh->linkBytesPerCycle
                    : chip.tile.sram.bytesPerCycle;
  return std::max<int64_t>(1, cyclesAt(bytes, rate));
}

int64_t chipLinkCycles(double bytesPerCycle, int64_t bytes) {
  return std::max<int64_t>(1, cyclesAt(bytes, bytesPerCycle));
}

} // namespace loom::rt
