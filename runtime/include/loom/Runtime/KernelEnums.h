//===- KernelEnums.h - A kernel's kind and cost bound -----------*- C++ -*-===//
//
// The one C++ definition of two facts every layer states about a kernel:
// its kind (its cost class) and the resource its cost is bound by. The
// compiler's cost model (loom::KernelKind, loom::CostBound), the graph and
// spatial dialects' `#graph.kind<...>` and `#graph.bound<...>` attributes
// (GraphAttrs.td), the program file's KernelKind and CostBound enums
// (Program.fbs, same values in the same order) and the runtime all use
// these; the spellings returned by the *Name functions are the ones the IR,
// the reports and the traces print. A kernel's precision is a
// NumericFormat (TargetDesc.h) limited by kernelPrecisionFormat. Plain C++,
// so the runtime can include it without MLIR or LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_KERNELENUMS_H
#define LOOM_RUNTIME_KERNELENUMS_H

#include "loom/Runtime/EnumNames.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace loom::rt {

/// A kernel's kind: its cost class in the cost model.
enum class KernelKind : uint8_t {
  MatMul,        ///< batch x (M x K) * (K x N), with an optional epilogue.
  Conv,          ///< A convolution, costed as an implicit GEMM.
  Elementwise,   ///< Element-wise vector work.
  Reduction,     ///< Reduces `elements` inputs to fewer outputs.
  Softmax,       ///< max, subtract, exp, sum, divide.
  Normalization, ///< Layer/RMS/batch normalisation.
  DataMovement,  ///< Transpose, concat, gather, copy: bytes, few operations.
  Collective,    ///< A chip-to-chip collective (priced, never a kernel's).
};

inline constexpr size_t kNumKernelKinds = 8;

/// "matmul", "conv", "elementwise", "reduction", "softmax",
/// "normalization", "data_movement", "collective".
inline const char *kernelKindName(KernelKind kind) {
  switch (kind) {
  case KernelKind::MatMul:
    return "matmul";
  case KernelKind::Conv:
    return "conv";
  case KernelKind::Elementwise:
    return "elementwise";
  case KernelKind::Reduction:
    return "reduction";
  case KernelKind::Softmax:
    return "softmax";
  case KernelKind::Normalization:
    return "normalization";
  case KernelKind::DataMovement:
    return "data_movement";
  case KernelKind::Collective:
    return "collective";
  }
  return "?";
}

/// The kind a kernelKindName spelling names; std::nullopt for anything else.
inline std::optional<KernelKind> parseKernelKind(std::string_view name) {
  return enumNamed<KernelKind, kNumKernelKinds>(name, kernelKindName);
}

/// The kinds a kernel may have (all but collective), as error messages list
/// them.
inline constexpr const char *kKernelKinds =
    "matmul, conv, elementwise, reduction, softmax, normalization or "
    "data_movement";

/// The resource that bounds a kernel (or a graph, for the roofline).
enum class CostBound : uint8_t {
  Compute,
  Sram,
  Mesh,
  Link,
  OffChip,
  FillDrain
};

inline constexpr size_t kNumCostBounds = 6;

/// "compute", "sram", "mesh", "link", "offchip", "fill_drain".
inline const char *costBoundName(CostBound bound) {
  switch (bound) {
  case CostBound::Compute:
    return "compute";
  case CostBound::Sram:
    return "sram";
  case CostBound::Mesh:
    return "mesh";
  case CostBound::Link:
    return "link";
  case CostBound::OffChip:
    return "offchip";
  case CostBound::FillDrain:
    return "fill_drain";
  }
  return "?";
}

/// The bound a costBoundName spelling names; std::nullopt for anything else.
inline std::optional<CostBound> parseCostBound(std::string_view name) {
  return enumNamed<CostBound, kNumCostBounds>(name, costBoundName);
}

/// The bounds, as error messages list them.
inline constexpr const char *kCostBounds =
    "compute, sram, mesh, link, offchip or fill_drain";

} // namespace loom::rt

#endif // LOOM_RUNTIME_KERNELENUMS_H
