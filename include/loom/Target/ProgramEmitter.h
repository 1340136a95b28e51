//===- ProgramEmitter.h - Write the program file ----------------*- C++ -*-===//
//
// Serialises a scheduled module (spatial ops annotated with sched ops, the
// output of spatial-to-sched) into the FlatBuffers program file described by
// runtime/include/loom/Runtime/Program.fbs. The same module always gives the same
// bytes.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TARGET_PROGRAMEMITTER_H
#define LOOM_TARGET_PROGRAMEMITTER_H

#include "loom/Target/TargetModel.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom {

/// The most bytes a program file may take: 2^31 - 1, FlatBuffers' limit
/// (its offsets are 32-bit, signed in the vtables). The builder only
/// asserts it, so the emitter checks it itself and refuses a larger
/// program (a model whose constants pass 2 GiB, which ONNX external data
/// can carry).
inline constexpr int64_t kMaxProgramBytes = (int64_t(1) << 31) - 1;

/// What the program file records about where it came from.
struct ProgramSource {
  /// The ONNX file the program was compiled from.
  std::string model;
  /// The full target description (the JSON text it was loaded from).
  std::string targetJson;
  /// False: constants are written without their data (a timing-only
  /// program, as the schedule verifier reads it).
  bool constantData = true;
  /// The most bytes the file may take (kMaxProgramBytes; smaller in tests
  /// of the refusal).
  int64_t maxBytes = kMaxProgramBytes;
};

/// Writes the program of the scheduled `module` (one func.func) into
/// `bytes`. Emits an error diagnostic and returns failure when the module is
/// not in sched form, a constant's data is missing (elided) or the file
/// would pass `source.maxBytes`.
mlir::LogicalResult emitProgram(mlir::ModuleOp module,
                                const TargetModel &target,
                                std::vector<uint8_t> &bytes,
                                const ProgramSource &source = {});
/// The same, written to `os`.
mlir::LogicalResult emitProgram(mlir::ModuleOp module,
                                const TargetModel &target,
                                llvm::raw_ostream &os,
                                const ProgramSource &source = {});

} // namespace loom

#endif // LOOM_TARGET_PROGRAMEMITTER_H
