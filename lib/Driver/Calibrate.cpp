//===- Calibrate.cpp - int8 scales from calibration inputs ----------------===//
#include "loom/Driver/Calibrate.h"

#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Reference/Evaluator.h"
#include "loom/Runtime/Tensor.h"
#include "loom/Runtime/TensorIO.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace loom::driver {
namespace fs = std::filesystem;

namespace {
double maxAbs(const rt::Tensor &t) {
  double m = 0.0;
  if (!rt::isFloat(t.dtype()))
    return m;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    double v = t.getDouble(i);
    if (std::isfinite(v))
      m = std::max(m, std::fabs(v));
  }
  return m;
}

bool isF32(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType())
      .getElementType()
      .isF32();
}
} // namespace

CalibrationResult calibrateInt8(mlir::func::FuncOp func,
                                const std::string &dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw rt::Error("--calibrate=" + dir + ": not a directory");
  std::vector<std::string> samples;
  for (const auto &e : fs::directory_iterator(dir, ec))
    if (e.is_directory())
      samples.push_back(e.path().string());
  std::sort(samples.begin(), samples.end());
  if (samples.empty())
    samples.push_back(dir);

  // The ops to calibrate: top-level fp32 matmuls and convs.
  llvm::SmallVector<mlir::Operation *> ops;
  for (mlir::Operation &op : func.getBody().front())
    if (llvm::isa<graph::MatMulOp, graph::ConvOp>(op) &&
        isF32(op.getOperand(0)) && isF32(op.getOperand(1)))
      ops.push_back(&op);
  llvm::DenseMap<mlir::Value, double> range;
  auto note = [&](mlir::Value v, double m) {
    double &r = range[v];
    r = std::max(r, m);
  };
  for (const std::string &sample : samples) {
    std::vector<rt::Tensor> inputs;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto name = func.getArgAttrOfType<mlir::StringAttr>(i, "graph.name");
      std::string n = name ? name.str() : "arg" + std::to_string(i);
      std::string path = (fs::path(sample) / (n + ".npy")).string();
      if (!fs::exists(path, ec))
        throw rt::Error("--calibrate=" + dir + ": " + path +
                        " is missing (each sample needs one .npy per model "
                        "input)");
      rt::Tensor t = rt::readTensorFile(path, n);
      auto type = llvm::cast<mlir::RankedTensorType>(
          func.getArgument(i).getType());
      std::optional<rt::DType> dt = dtypeFromType(type.getElementType());
      if (!dt || t.dtype() != *dt ||
          t.shape() != rt::Shape(type.getShape().begin(), type.getShape().end()))
        throw rt::Error("--calibrate=" + dir + ": " + path + " has " +
                        rt::dtypeName(t.dtype()) + " " +
                        rt::shapeToString(t.shape()) + ", input '" + n +
                        "' is " + (dt ? rt::dtypeName(*dt) : "?") + " " +
                        rt::shapeToString(rt::Shape(type.getShape().begin(),
                                                    type.getShape().end())));
      note(func.getArgument(i), maxAbs(t));
      inputs.push_back(std::move(t));
    }
    auto out = evaluate(func, inputs,
                        [&](mlir::Operation *op,
                            const std::vector<rt::Tensor> &results) {
                          for (auto [r, t] : llvm::zip(op->getResults(), results))
                            if (isF32(r))
                              note(r, maxAbs(t));
                        });
    if (!out)
      throw rt::Error("--calibrate=" + dir + ": the golden reference failed "
                      "on sample " + sample);
  }
  mlir::Builder b(func.getContext());
  for (mlir::Operation *op : ops) {
    double s[2];
    for (int k = 0; k < 2; ++k) {
      mlir::Value v = op->getOperand(k);
      auto it = range.find(v);
      double m = it != range.end() ? it->second : 0.0;
      if (it == range.end())
        if (auto c = v.getDefiningOp<graph::ConstantOp>())
          m = maxAbs(tensorFromAttr(c.getValue()));
      s[k] = m / 127.0;
    }
    op->setAttr("calibrated_int8_scales", b.getDenseF64ArrayAttr({s[0], s[1]}));
  }
  return {static_cast<int64_t>(samples.size()),
          static_cast<int64_t>(ops.size())};
}

} // namespace loom::driver
