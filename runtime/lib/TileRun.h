//===- TileRun.h - Functional execution of tile programs --------*- C++ -*-===//
//
// Internal to the simulator (Simulator.cpp calls it). Every buffer of the
// program is a block of its tensor in its tile's SRAM; the instrs run in
// schedule order: a kernel's instr on a tile computes the boxes of the
// buffers it writes there from the buffers it reads there (executeOnTile),
// a transfer's DMA copies the part of its source buffer that each
// destination buffer holds, and the outputs are gathered from their
// buffers. Nothing is computed on whole tensors outside the tile programs,
// so a wrong shard, a missing halo or a dropped transfer gives a wrong
// answer (or an error naming the kernel), never a silently right one.
//
// Partial: a buffer's contents are kept as a tensor of its box, not as
// bytes at its offset in one array per tile (the schedule verifier proves
// live buffers disjoint), and stored narrow formats are emulated by
// rounding, not by their bytes.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_LIB_TILERUN_H
#define LOOM_RUNTIME_LIB_TILERUN_H

#include "loom/Runtime/Program.h"
#include "loom/Runtime/Simulator.h"
#include "loom/Runtime/Tensor.h"

#include <cstdint>
#include <map>
#include <unordered_map>

namespace loom::rt::detail {

/// Runs the tile programs of `p` with the model inputs `inputs` (by tensor
/// id, each as the host writes it: a chip's part, rounded to its storage)
/// and returns the value of every program output tensor, by tensor id.
/// Throws Error naming the instr, kernel and ONNX node on a read of a
/// buffer nothing wrote, and naming the tensor when an output element is
/// written by no tile.
std::map<int32_t, Tensor>
runTilePrograms(const Program &p,
                const std::unordered_map<int32_t, Tensor> &inputs,
                const FunctionalHooks &hooks);

} // namespace loom::rt::detail

#endif // LOOM_RUNTIME_LIB_TILERUN_H
