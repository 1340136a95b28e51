//===- Compare.h - A simulated tensor against its reference -----*- C++ -*-===//
//
// The one comparison of a program's output with the golden reference, and
// the one table of its tolerances per numeric format (docs/numerics.md):
// `loom check` and the Python module's loom.check (through _loom.compare)
// both take them from here, and loom-conformance compares the golden
// reference with ONNX's test data with the same comparison at ONNX's
// backend-test tolerance.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_COMPARE_H
#define LOOM_RUNTIME_COMPARE_H

#include "loom/Runtime/Tensor.h"

#include <cstdint>
#include <string_view>

namespace loom::rt {

/// An element passes when |actual - expected| <= max(atol, scaleTol * S) +
/// rtol * |expected|, S the largest finite |expected| of the tensor: narrow
/// formats' errors grow with the values' scale, and elementwise relative
/// error means nothing for outputs near zero.
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-4;
  double scaleTol = 1e-4;
};

/// The tolerance `loom check` applies to a program compiled at `precision`
/// with its KV cache stored at `kvPrecision`: fp32 elementwise (rtol 1e-3,
/// atol 1e-4, scale 1e-4); a narrow format against the scale only (bf16
/// 0.04, fp16 4e-3, fp8 1.0, int8 0.2, measured on the zoo), the looser of
/// the two formats when both are given.
Tolerance checkTolerance(std::string_view precision,
                         std::string_view kvPrecision = "fp32");

/// ONNX's backend-test tolerance (rtol 1e-3, atol 1e-7, no scale term):
/// what loom-conformance holds the golden reference to against ONNX's
/// expected outputs.
Tolerance onnxTestTolerance();

/// The largest error of `actual` against `expected` and whether every
/// element passes `tol`. Equal values match (infinities of one sign
/// included, a masked logit's -inf; NaN matches NaN); a NaN or an infinity
/// against anything else does not, nor does a tensor of another shape or
/// element type. Integers and booleans must be equal: a tolerance is for
/// rounding, which they do not have.
struct Divergence {
  double maxAbs = 0, maxRel = 0;
  int64_t worst = -1;     ///< the element of the largest absolute error
  int64_t mismatches = 0; ///< the elements that do not pass
  bool ok = true;
};
Divergence compareTensors(const Tensor &expected, const Tensor &actual,
                          const Tolerance &tol);

} // namespace loom::rt

#endif // LOOM_RUNTIME_COMPARE_H
