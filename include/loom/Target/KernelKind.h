//===- KernelKind.h - The kinds of kernel the cost model prices -*- C++ -*-===//
//
// A kernel's kind: its cost class in the cost model (CostModel.h) and the
// kind each graph op's kernel takes, stated on the op's ODS line
// (Graph_KernelKind in GraphBase.td). Its own header so that the graph
// dialect can name it without the cost model; the enum itself is the
// runtime's (KernelEnums.h).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TARGET_KERNELKIND_H
#define LOOM_TARGET_KERNELKIND_H

#include "loom/Runtime/KernelEnums.h"

namespace loom {

/// The runtime's enum (loom/Runtime/KernelEnums.h), so the compiler, the
/// dialects' attributes and the program file name a kind the same way.
using KernelKind = rt::KernelKind;
using rt::kernelKindName;

} // namespace loom

#endif // LOOM_TARGET_KERNELKIND_H
