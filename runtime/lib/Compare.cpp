//===- Compare.cpp - A simulated tensor against its reference -------------===//
#include "loom/Runtime/Compare.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace loom::rt {

namespace {
/// The scale tolerance of one format (docs/numerics.md, measured on the
/// zoo): bf16 keeps 8 bits of mantissa, fp16 11 (worst 7.2e-4), fp8 E4M3 4
/// (unscaled; vit_b16 0.73), int8 steps of 1/127 of each tensor's largest
/// value (per-tensor scales; gpt2 0.050). fp32's rounding error also grows
/// with depth and the values' scale: deep activations of ResNet-50 reach
/// tens, and another summation order (BLAS against the fp64 reference)
/// moves them by ~1e-5 of that.
double scaleToleranceOf(std::string_view format) {
  return format == "bf16"   ? 0.04
         : format == "fp16" ? 4e-3
         : format == "fp8"  ? 1.0
         : format == "int8" ? 0.2
                            : 1e-4;
}
} // namespace

Tolerance checkTolerance(std::string_view precision,
                         std::string_view kvPrecision) {
  bool narrow = precision != "fp32" || kvPrecision != "fp32";
  Tolerance t;
  t.rtol = narrow ? 0.0 : 1e-3;
  t.atol = narrow ? 0.0 : 1e-4;
  t.scaleTol =
      std::max(scaleToleranceOf(precision), scaleToleranceOf(kvPrecision));
  return t;
}

Tolerance onnxTestTolerance() {
  Tolerance t;
  t.rtol = 1e-3;
  t.atol = 1e-7;
  t.scaleTol = 0;
  return t;
}

Divergence compareTensors(const Tensor &expected, const Tensor &actual,
                          const Tolerance &tol) {
  Divergence d;
  if (expected.shape() != actual.shape() ||
      expected.dtype() != actual.dtype()) {
    d.ok = false;
    return d;
  }
  double scale = 0;
  for (int64_t i = 0; i < expected.numElements(); ++i)
    if (std::isfinite(expected.getDouble(i)))
      scale = std::max(scale, std::fabs(expected.getDouble(i)));
  double atol = std::max(tol.atol, tol.scaleTol * scale);
  // Integers compare as integers: 64-bit values are not all doubles.
  const bool exact = !isFloat(expected.dtype());
  for (int64_t i = 0; i < expected.numElements(); ++i) {
    double e = expected.getDouble(i), a = actual.getDouble(i);
    if (exact ? expected.getInt(i) == actual.getInt(i)
              : (std::isnan(e) && std::isnan(a)) || a == e)
      continue;
    double err = std::isinf(e) ? std::numeric_limits<double>::infinity()
                               : std::fabs(a - e);
    if (std::isnan(err))
      err = std::numeric_limits<double>::infinity();
    if (err > d.maxAbs || d.worst < 0) {
      d.maxAbs = err;
      d.worst = i;
    }
    if (e != 0 && std::isfinite(e))
      d.maxRel = std::max(d.maxRel, err / std::fabs(e));
    if (exact || !std::isfinite(err) ||
        !(err <= atol + tol.rtol * std::fabs(e))) {
      d.ok = false;
      ++d.mismatches;
    }
  }
  return d;
}

} // namespace loom::rt
