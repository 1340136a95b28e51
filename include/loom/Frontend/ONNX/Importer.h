//===- Importer.h - ONNX model -> graph dialect -----------------*- C++ -*-===//
#ifndef LOOM_FRONTEND_ONNX_IMPORTER_H
#define LOOM_FRONTEND_ONNX_IMPORTER_H

#include "loom/Runtime/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace loom {

struct ImportOptions {
  /// Values for named dynamic dimensions (`--dim batch=1`).
  std::map<std::string, int64_t> dims;
  /// Fold ops whose inputs are all constant when the result has at most this
  /// many elements (shape computations, small tables).
  int64_t foldLimit = 1 << 16;
  /// Graph inputs to freeze into constants with these values (a static
  /// compiler needs shape arguments such as Reshape's shape at compile time).
  std::map<std::string, rt::Tensor> frozenInputs;
  /// Values of graph inputs the caller knows (`loom eval` has every input's
  /// value). An input that a node needs as a compile-time constant (Reshape's
  /// shape, Range's limits, TopK's k, the data of NonZero, ...) is frozen
  /// to its value, as with frozenInputs, and the model imported again;
  /// other known inputs stay inputs of `main`.
  std::map<std::string, rt::Tensor> knownInputs;
  /// If set, receives the names of the known inputs that were frozen (they
  /// are no longer arguments of `main`).
  std::vector<std::string> *frozenKnownInputs = nullptr;
  /// The KV cache's storage format (`--kv-precision`): an LLM config.json
  /// only (DecodeStepOptions::kvPrecision); an ONNX model must leave it
  /// "fp32".
  std::string kvPrecision = "fp32";
};

/// Imports the ONNX model at `path` into a module holding `func.func @main`.
/// On failure returns null and sets `error` to one line naming the file, the
/// ONNX node and the problem.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxFile(mlir::MLIRContext &ctx,
                                                 const std::string &path,
                                                 const ImportOptions &options,
                                                 std::string &error);

/// Imports a serialized ONNX model held in memory (`size` bytes at `data`).
/// `name` stands for the file in error messages. External data is refused
/// (there is no folder to resolve it in). Errors as for importOnnxFile.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxBytes(mlir::MLIRContext &ctx,
                                                  const void *data, size_t size,
                                                  const std::string &name,
                                                  const ImportOptions &options,
                                                  std::string &error);

/// The ONNX operator types the importer has converters for.
std::vector<std::string> supportedOnnxOps();

/// What the importer reads of one ONNX operator (`loom ops`, docs/ops.md),
/// derived from the tables the importer decides by.
struct OnnxOpSupport {
  std::string name;
  /// "" (the default domain) or "ai.onnx.preview.training".
  std::string domain;
  /// "converter": converted node by node; "function": expanded into its
  /// ONNX function body, whose operators are then read.
  std::string how;
  /// The model opsets (of the operator's domain) at which a node of it is
  /// read, as inclusive ranges in order.
  std::vector<std::pair<int64_t, int64_t>> opsets;
  /// What a node of it is refused for although ONNX allows it, and the
  /// first opset that applies at (0: every opset it is read at).
  struct Refused {
    std::string what;
    int64_t sinceOpset = 0;
  };
  std::vector<Refused> refuses;
};

/// Every operator the importer reads, the default domain's by name, then
/// the training domain's.
std::vector<OnnxOpSupport> onnxOpSupport();
/// The default domain's opsets a model may import (first, last).
std::pair<int64_t, int64_t> onnxOpsetRange();

} // namespace loom

#endif // LOOM_FRONTEND_ONNX_IMPORTER_H
