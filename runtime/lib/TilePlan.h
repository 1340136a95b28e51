//===- TilePlan.h - A kernel's backward propagation on one tile -*- C++ -*-===//
//
// Internal to the runtime (TileExecutor.cpp and TilePlan.cpp). The part of
// executing a kernel on one tile that needs no values: which box of every
// value the tile's output boxes need (backward region-of-interest
// propagation through the kernel's ops), and whether the tile holds the
// boxes of the kernel inputs those ops read. executeOnTile runs the plan;
// tileWork and TilePlanCache cost it and check it without running it.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_LIB_TILEPLAN_H
#define LOOM_RUNTIME_LIB_TILEPLAN_H

#include "loom/Runtime/TileExecutor.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace loom::rt::detail {

using TensorOf = std::function<const ProgramTensor &(int32_t)>;
/// The box the tile holds of kernel input `id`, or null.
using HeldOf = std::function<const Box *(int32_t)>;

/// What one op of the kernel does on this tile.
struct Step {
  /// Operands as executeOp takes them: trailing absent ones dropped, -1 for
  /// an absent one in the middle.
  std::vector<int32_t> operands;
  std::vector<Shape> operandShapes, resultShapes;
  std::vector<DType> operandDTypes, resultDTypes;
  std::vector<Box> resultBoxes, operandBoxes;
  bool run = false;
};

/// "op 3 'conv'": how errors name an op of the kernel.
std::string describeOp(const std::vector<ProgramOp> &ops, size_t i);
/// "tensor 7 'x'".
std::string describeTensor(const ProgramTensor &t);

/// Backward: the box of every value the output boxes need, and what each op
/// computes and reads. Throws Error naming the op.
std::vector<Step> planBackward(const std::vector<ProgramOp> &ops,
                               const TensorOf &tensorOf,
                               const std::map<int32_t, Box> &outputBoxes);

/// Which op produces each value; throws if one is produced twice or read
/// before it is produced.
std::map<int32_t, size_t> producers(const std::vector<ProgramOp> &ops);

/// Throws unless `held` (the tile's box of kernel input `t`, or null)
/// covers `needed`, naming `who` and the first dimension that falls short.
void checkCovered(const std::string &who, const ProgramTensor &t,
                  const Box *held, const Box &needed);

/// True if `held` (or null) covers `needed`: checkCovered would not throw.
bool covers(const Box *held, const Box &needed);

/// Every kernel input box an op (or an output) needs is held.
void checkCoverage(const std::vector<ProgramOp> &ops,
                   const std::vector<Step> &steps,
                   const std::map<int32_t, size_t> &producer,
                   const TensorOf &tensorOf, const HeldOf &held,
                   const std::map<int32_t, Box> &outputBoxes);

} // namespace loom::rt::detail

#endif // LOOM_RUNTIME_LIB_TILEPLAN_H
