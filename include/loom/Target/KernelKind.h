//===- KernelKind.h - The kinds of kernel the cost model prices -*- C++ -*-===//
//
// A kernel's kind: its cost class in the cost model (CostModel.h) and the
// kind each graph op's kernel takes, stated on the op's ODS line
// (Graph_KernelKind in GraphBase.td). Its own header so that the graph
// dialect can name it without the cost model.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TARGET_KERNELKIND_H
#define LOOM_TARGET_KERNELKIND_H

namespace loom {

enum class KernelKind {
  MatMul,        ///< batch x (M x K) * (K x N), with an optional epilogue.
  Conv,          ///< A convolution, costed as an implicit GEMM.
  Elementwise,   ///< Element-wise vector work.
  Reduction,     ///< Reduces `elements` inputs to fewer outputs.
  Softmax,       ///< max, subtract, exp, sum, divide.
  Normalization, ///< Layer/RMS/batch normalisation.
  DataMovement,  ///< Transpose, concat, gather, copy: bytes, few operations.
  Collective,    ///< A chip-to-chip collective over `Region::chips` chips.
};

/// "matmul", "conv", "elementwise", "reduction", "softmax",
/// "normalization", "data_movement", "collective" (CostModel.cpp).
const char *kernelKindName(KernelKind kind);

} // namespace loom

#endif // LOOM_TARGET_KERNELKIND_H
