//===- DriverTest.cpp - The driver library's diagnostics ------------------===//
#include "loom/Driver/Driver.h"

#include "mlir/IR/Builders.h"

#include <gtest/gtest.h>

namespace {

// Tests that an error at an unknown location is captured as its message
// alone: "loc(unknown)" told a user nothing (the callers name the file).
TEST(DiagnosticCapture, UnknownLocationIsLeftOut) {
  std::unique_ptr<mlir::MLIRContext> ctx = loom::driver::makeContext();
  loom::driver::DiagnosticCapture diags(*ctx);
  mlir::emitError(mlir::UnknownLoc::get(ctx.get()), "it does not fit");
  EXPECT_EQ(diags.first, "it does not fit");
}

// Tests that a known location (an ONNX node's name) leads the message.
TEST(DiagnosticCapture, NamedLocationLeads) {
  std::unique_ptr<mlir::MLIRContext> ctx = loom::driver::makeContext();
  loom::driver::DiagnosticCapture diags(*ctx);
  mlir::emitError(mlir::NameLoc::get(mlir::StringAttr::get(ctx.get(), "conv1")),
                  "it does not fit");
  mlir::emitError(mlir::UnknownLoc::get(ctx.get()), "a second error");
  EXPECT_EQ(diags.first, "loc(\"conv1\"): it does not fit");
}

} // namespace
