//===- EvaluatorTest.cpp - The golden reference on hand-built graphs ------===//
#include "loom/InitAll.h"
#include "loom/Reference/Evaluator.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace loom;

namespace {

class EvaluatorTest : public ::testing::Test {
protected:
  EvaluatorTest() {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }

  std::vector<rt::Tensor> run(const char *ir, std::vector<rt::Tensor> inputs) {
    module = mlir::parseSourceString<mlir::ModuleOp>(ir, &ctx);
    EXPECT_TRUE(module) << "IR did not parse";
    auto func = module->lookupSymbol<mlir::func::FuncOp>("main");
    auto out = evaluate(func, inputs);
    EXPECT_TRUE(out.has_value());
    return out ? *out : std::vector<rt::Tensor>{};
  }

  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

rt::Tensor make(rt::Shape shape, std::vector<double> v) {
  return rt::Tensor::fromVector(rt::DType::F32, shape, v);
}

TEST_F(EvaluatorTest, MatmulPlusBiasThroughConstants) {
  auto out = run(R"mlir(
    func.func @main(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
      %w = graph.constant {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
      %b = graph.constant {value = dense<[10.0, 20.0]> : tensor<2xf32>} : () -> tensor<2xf32>
      %m = graph.matmul %a, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      %y = graph.add %m, %b : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
      return %y : tensor<2x2xf32>
    })mlir",
                 {make({2, 2}, {1, 0, 0, 1})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].getDouble(0), 11);
  EXPECT_EQ(out[0].getDouble(1), 22);
  EXPECT_EQ(out[0].getDouble(2), 13);
  EXPECT_EQ(out[0].getDouble(3), 24);
}

TEST_F(EvaluatorTest, SoftmaxRowsSumToOne) {
  auto out = run(R"mlir(
    func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %y = graph.softmax %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
      return %y : tensor<2x3xf32>
    })mlir",
                 {make({2, 3}, {1, 2, 3, -1, 0, 1})});
  ASSERT_EQ(out.size(), 1u);
  for (int r = 0; r < 2; ++r) {
    double sum = 0;
    for (int c = 0; c < 3; ++c)
      sum += out[0].getDouble(r * 3 + c);
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
  // Softmax is shift-invariant: both rows are the same distribution.
  EXPECT_NEAR(out[0].getDouble(0), out[0].getDouble(3), 1e-7);
}

TEST_F(EvaluatorTest, ReshapeTransposeReduce) {
  auto out = run(R"mlir(
    func.func @main(%x: tensor<6xf32>) -> tensor<3xf32> {
      %r = graph.reshape %x : (tensor<6xf32>) -> tensor<2x3xf32>
      %t = graph.transpose %r {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
      %s = graph.reduce_sum %t {axes = array<i64: 1>, keepdims = false} : (tensor<3x2xf32>) -> tensor<3xf32>
      return %s : tensor<3xf32>
    })mlir",
                 {make({6}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].getDouble(0), 5);
  EXPECT_EQ(out[0].getDouble(1), 7);
  EXPECT_EQ(out[0].getDouble(2), 9);
}

TEST_F(EvaluatorTest, WrongInputCountIsAnError) {
  module = mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      return %x : tensor<2xf32>
    })mlir",
                                                   &ctx);
  ASSERT_TRUE(module);
  mlir::ScopedDiagnosticHandler silence(&ctx, [](mlir::Diagnostic &) {
    return mlir::success();
  });
  auto func = module->lookupSymbol<mlir::func::FuncOp>("main");
  EXPECT_FALSE(evaluate(func, {}).has_value());
}

} // namespace
