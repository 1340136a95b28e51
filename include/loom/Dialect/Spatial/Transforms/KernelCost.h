//===- KernelCost.h - Cost-model descriptions of fused kernels --*- C++ -*-===//
#ifndef LOOM_DIALECT_SPATIAL_TRANSFORMS_KERNELCOST_H
#define LOOM_DIALECT_SPATIAL_TRANSFORMS_KERNELCOST_H

#include "loom/Target/CostModel.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/IR/Region.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace loom::spatial {

/// The cost model's description of a fused kernel: its `kind`, `precision`
/// (a kernel precision: fp32, bf16, fp16, fp8 or int8) and body. A matmul or
/// conv anchor is costed as such, the other ops of the body as its
/// epilogue (one vector op per output each). `storage` is the kernel's
/// storage format (bf16, fp16 or fp8), when it has one: a data-movement
/// kernel's bytes are its results' at that format. std::nullopt, with `error`
/// set, for a kind no kernel has (collective).
std::optional<KernelDesc>
describeKernel(KernelKind kind, NumericFormat precision, mlir::Region &body,
               std::string &error,
               std::optional<NumericFormat> storage = std::nullopt);

/// The ONNX node name a location carries (the first NameLoc inside it), or
/// the empty string.
std::string onnxNodeName(mlir::Location loc);

/// Bytes of one element of `elementType` (i1 and other sub-byte types take
/// one byte).
int64_t elementBytes(mlir::Type elementType);

/// The unit a kernel's instructions occupy on each tile of a rows x cols
/// region: 0 matrix (a matmul or conv the cost model runs there, with its
/// epilogue beside it on the vector unit), 2 DMA (data movement), 1 vector
/// (everything else, and a contraction the vector unit runs faster).
struct KernelUnit {
  int unit = 1;
  bool epilogue = false;
};
KernelUnit kernelUnit(KernelKind kind, const KernelDesc &desc,
                      const CostModel &model, int64_t rows, int64_t cols);

/// Bytes per element a weight (a graph.constant or spatial.weight of f32)
/// occupies in SRAM: the narrow policy's format (2 for bf16 and fp16, 1
/// for fp8) when every use is a matrix operand of a kernel of that
/// precision, which rounds it to that format anyway; its type's size
/// otherwise. The program file keeps the fp32 values.
int64_t storedElementBytes(mlir::Value weight);

/// The narrow format `v` is stored in, when it has one: a function argument
/// with `graph.storage`, a result of a graph.kernel or spatial.kernel with
/// `storage`, or a spatial.transfer of such a value. std::nullopt: it is
/// stored as its type.
std::optional<NumericFormat> storageFormatOf(mlir::Value v);

/// The storage format every one of `values` shares (storageFormatOf), or
/// std::nullopt when they have none in common: a collective's wire format
/// (graph-precision-policy stores a narrow policy's collective inputs so).
std::optional<NumericFormat> commonStorageFormat(mlir::ValueRange values);

/// Bytes per element `v` takes in SRAM and on the wires: its storage
/// format's when narrower than its type (storageFormatOf), else its type's.
/// (Weights: storedElementBytes.)
int64_t storageElementBytes(mlir::Value v);

} // namespace loom::spatial

#endif // LOOM_DIALECT_SPATIAL_TRANSFORMS_KERNELCOST_H
