//===- loom-opt.cpp - Loom's mlir-opt -------------------------------------===//
#include "loom/InitAll.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  loom::registerAllDialects(registry);
  loom::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Loom optimizer driver\n", registry));
}
