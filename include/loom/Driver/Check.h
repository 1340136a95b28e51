//===- Check.h - `loom check` as a function ---------------------*- C++ -*-===//
//
// What `loom check` does: compile a model for a target, run the program on
// the functional simulator, and compare every output with the golden
// reference at the format's tolerances (rt::checkTolerance,
// rt::compareTensors); on one chip it also compares each kernel's outputs
// with the reference on the kernel-formed graph and names the first that
// diverges. The command-line driver formats the report (text or --json).
//
// User errors are thrown as loom::rt::Error, one line each, like the rest
// of the driver.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_DRIVER_CHECK_H
#define LOOM_DRIVER_CHECK_H

#include "loom/Driver/Driver.h"
#include "loom/Runtime/Compare.h"
#include "loom/Runtime/Simulator.h"

#include <optional>
#include <string>
#include <vector>

namespace loom::driver {

struct CheckOptions {
  /// The model's path, as errors and the report name it.
  std::string model;
  std::string targetName = "tiny";
  std::string precision = "fp32";
  /// The KV cache's storage format (reported; the tolerance already
  /// accounts for it).
  std::string kvPrecision = "fp32";
  rt::Tolerance tolerance;
  MappingOptions mapping;
  /// Fault injection (tests of the check itself): the kernel whose outputs
  /// the simulator corrupts, and the instr it skips; -1 for none.
  int corruptKernel = -1;
  int dropInstr = -1;
};

struct CheckReport {
  /// Per graph output, in order: its name and how it compares.
  std::vector<std::string> outputNames;
  std::vector<rt::Divergence> outputs;
  /// The first kernel whose output diverges (-1: none, or not compared:
  /// across chips the kernels are per-chip slices and only outputs are).
  int32_t firstKernel = -1;
  std::string firstKernelName;
  std::vector<std::string> firstKernelNodes;
  size_t firstOutput = 0;
  rt::Divergence firstDivergence;
  bool kernelsCompared = true;
  rt::SimStats stats;
  bool passed = false;
};

/// Checks the imported `module` (consumed: it is compiled in place) on
/// `inputs`, one per graph input in order.
CheckReport checkModel(mlir::MLIRContext &ctx, mlir::ModuleOp module,
                       const TargetModel &target,
                       const std::vector<rt::Tensor> &inputs,
                       const CheckOptions &options);

/// The report as JSON (docs/schema/check.schema.json), one line.
std::string checkJson(const CheckReport &report, const CheckOptions &options);

} // namespace loom::driver

#endif // LOOM_DRIVER_CHECK_H
