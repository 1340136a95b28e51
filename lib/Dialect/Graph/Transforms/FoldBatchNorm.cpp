//===- FoldBatchNorm.cpp - Fold batch_norm into the conv before it --------===//
#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"
#include "loom/Reference/Evaluator.h"

#include "mlir/IR/Builders.h"

#include <cmath>

namespace loom::graph {
#define GEN_PASS_DEF_GRAPHFOLDBATCHNORM
#include "loom/Dialect/Graph/Transforms/Passes.h.inc"

namespace {
/// The value of `v` if it is a graph.constant whose data is available.
std::optional<rt::Tensor> constantOf(mlir::Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c)
    return std::nullopt;
  std::string error;
  return tryTensorFromAttr(c.getValue(), error);
}

bool isFloatTensor(const rt::Tensor &t) { return rt::isFloat(t.dtype()); }

/// The convolution feeding a batch_norm, in the terms folding needs.
struct ConvInfo {
  mlir::Operation *op;
  mlir::Value weight;
  mlir::Value bias; // null when absent
  bool transposed;
  int64_t group;
};

std::optional<ConvInfo> convFeeding(BatchNormOp bn) {
  mlir::Operation *def = bn.getInput().getDefiningOp();
  if (!def || !def->hasOneUse())
    return std::nullopt;
  if (auto conv = llvm::dyn_cast<ConvOp>(def))
    return ConvInfo{conv, conv.getWeight(), conv.getBias(), false,
                    static_cast<int64_t>(conv.getGroup())};
  if (auto conv = llvm::dyn_cast<ConvTransposeOp>(def))
    return ConvInfo{conv, conv.getWeight(), conv.getBias(), true,
                    static_cast<int64_t>(conv.getGroup())};
  return std::nullopt;
}

struct GraphFoldBatchNormPass
    : impl::GraphFoldBatchNormBase<GraphFoldBatchNormPass> {
  using Base::Base;

  /// Folds `bn` into the convolution before it; false if it does not apply.
  bool fold(BatchNormOp bn) {
    std::optional<ConvInfo> conv = convFeeding(bn);
    if (!conv)
      return false;
    std::optional<rt::Tensor> w = constantOf(conv->weight);
    std::optional<rt::Tensor> scale = constantOf(bn.getScale());
    std::optional<rt::Tensor> shift = constantOf(bn.getBias());
    std::optional<rt::Tensor> mean = constantOf(bn.getMean());
    std::optional<rt::Tensor> var = constantOf(bn.getVariance());
    if (!w || !scale || !shift || !mean || !var)
      return false;
    std::optional<rt::Tensor> b;
    if (conv->bias) {
      b = constantOf(conv->bias);
      if (!b)
        return false;
    }
    for (const rt::Tensor *t : {&*w, &*scale, &*shift, &*mean, &*var})
      if (!isFloatTensor(*t))
        return false;
    if (b && !isFloatTensor(*b))
      return false;

    // Output channels and where each weight element's channel comes from.
    // conv: weight [M, C/g, K...], output channel = index 0.
    // conv_transpose: weight [C, M/g, K...], output channel of
    // weight[c, j, ...] = (c / (C/g)) * (M/g) + j.
    const rt::Shape &ws = w->shape();
    if (ws.size() < 2 || conv->group <= 0)
      return false;
    int64_t inner = 1; // elements per (dim0, dim1) pair
    for (size_t i = 2; i < ws.size(); ++i)
      inner *= ws[i];
    int64_t channels = conv->transposed ? ws[1] * conv->group : ws[0];
    for (const rt::Tensor *t : {&*scale, &*shift, &*mean, &*var})
      if (t->numElements() != channels)
        return false;
    if (b && b->numElements() != channels)
      return false;
    if (conv->transposed && ws[0] % conv->group != 0)
      return false;

    double eps = bn.getEpsilon().convertToDouble();
    std::vector<double> s(channels);
    for (int64_t c = 0; c < channels; ++c)
      s[c] = scale->getDouble(c) / std::sqrt(var->getDouble(c) + eps);

    rt::Tensor newW(w->dtype(), ws);
    int64_t perFirst = ws[1] * inner; // elements per index of dim 0
    for (int64_t i0 = 0; i0 < ws[0]; ++i0)
      for (int64_t i1 = 0; i1 < ws[1]; ++i1) {
        int64_t c = conv->transposed
                        ? (i0 / (ws[0] / conv->group)) * ws[1] + i1
                        : i0;
        int64_t base = i0 * perFirst + i1 * inner;
        for (int64_t k = 0; k < inner; ++k)
          newW.setDouble(base + k, w->getDouble(base + k) * s[c]);
      }
    rt::DType biasType = b ? b->dtype() : w->dtype();
    rt::Tensor newB(biasType, {channels});
    for (int64_t c = 0; c < channels; ++c) {
      double b0 = b ? b->getDouble(c) : 0.0;
      newB.setDouble(c, (b0 - mean->getDouble(c)) * s[c] + shift->getDouble(c));
    }

    mlir::OpBuilder builder(conv->op);
    auto wType = llvm::cast<mlir::RankedTensorType>(conv->weight.getType());
    auto bType = conv->bias
                     ? llvm::cast<mlir::RankedTensorType>(conv->bias.getType())
                     : mlir::RankedTensorType::get({channels},
                                                   wType.getElementType());
    mlir::Location loc = bn.getLoc();
    mlir::Value wc =
        ConstantOp::create(builder, loc, wType, attrFromTensor(newW, wType));
    mlir::Value bc =
        ConstantOp::create(builder, loc, bType, attrFromTensor(newB, bType));

    // The folded convolution: the conv with the new weight and bias, and
    // the batch_norm's result type (the same shape).
    mlir::Operation *folded = builder.clone(*conv->op);
    folded->setLoc(builder.getFusedLoc({conv->op->getLoc(), bn.getLoc()}));
    if (auto c = llvm::dyn_cast<ConvOp>(folded)) {
      c.getWeightMutable().assign(wc);
      c.getBiasMutable().assign(bc);
    } else {
      auto ct = llvm::cast<ConvTransposeOp>(folded);
      ct.getWeightMutable().assign(wc);
      ct.getBiasMutable().assign(bc);
    }
    folded->getResult(0).setType(bn.getType());
    bn.replaceAllUsesWith(folded->getResult(0));
    bn.erase();
    conv->op->erase();
    return true;
  }

  void runOnOperation() override {
    llvm::SmallVector<BatchNormOp> norms;
    getOperation().walk([&](BatchNormOp bn) { norms.push_back(bn); });
    for (BatchNormOp bn : norms)
      fold(bn);
  }
};
} // namespace
} // namespace loom::graph
