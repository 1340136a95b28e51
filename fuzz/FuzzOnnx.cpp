//===- FuzzOnnx.cpp - Fuzz the ONNX importer ------------------------------===//
//
// Bytes -> ModelProto -> graph dialect (importOnnxBytes), with a fresh
// MLIRContext per input so nothing carries over from one input to the next.
// The importer must accept the model or refuse it with one line; it must
// never crash, and no exception may leave it.
//
//===----------------------------------------------------------------------===//
#include "FuzzCheck.h"

#include "loom/Frontend/ONNX/Importer.h"

#include "mlir/IR/MLIRContext.h"

bool loom::fuzz::runOne(const uint8_t *data, size_t size) {
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  ImportOptions options;
  // Bind the dynamic dimension names the seeds use, so their graphs get past
  // binding and into shape inference and conversion.
  options.dims = {{"batch", 1}, {"N", 2}};
  std::string error;
  auto module = importOnnxBytes(ctx, data, size, "fuzz.onnx", options, error);
  if (!module) {
    checkErrorLine(error, "fuzz.onnx");
    return false;
  }
  return true;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  loom::fuzz::runOne(data, size);
  return 0;
}
