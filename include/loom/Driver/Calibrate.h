//===- Calibrate.h - int8 scales from calibration inputs ---------*- C++ -*-===//
//
// `--precision=int8 --calibrate=DIR`: the scale of each fp32 matmul and
// conv operand is fixed at compile time from calibration inputs instead of
// being taken from each run's live tensor. The method: the golden
// reference runs the imported model on every sample, and an operand's
// scale is its largest |x| over all samples (per tensor) / 127; the op gets
// `calibrated_int8_scales = array<f64: s0, s1>`, which the simulator's
// int8 rounding then uses (a value beyond the calibrated range saturates
// at +-127 steps).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_DRIVER_CALIBRATE_H
#define LOOM_DRIVER_CALIBRATE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace loom::driver {

/// Calibrates `func` (the imported model) on the samples in `dir`: each
/// subdirectory of `dir` is one sample holding NAME.npy for every model
/// input NAME, or, with no subdirectories, `dir` itself is the one sample.
/// Returns the number of samples and the ops calibrated; throws
/// loom::rt::Error naming the file or input that is wrong.
struct CalibrationResult {
  int64_t samples = 0;
  int64_t ops = 0;
};
CalibrationResult calibrateInt8(mlir::func::FuncOp func,
                                const std::string &dir);

} // namespace loom::driver

#endif // LOOM_DRIVER_CALIBRATE_H
