//===- PlannerTest.cpp - The planner's cost model on hand-computed cases --===//
#include "loom/Planner/Planner.h"
#include "loom/Target/ChipNetwork.h"

#include "TargetHelpers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>
#include <set>

using namespace loom;
using loom::testing::loadTarget;
using namespace loom::plan;

namespace {

LlmConfig tinyConfig() {
  LlmConfig c;
  c.name = "tiny";
  c.hidden = 64;
  c.layers = 2;
  c.heads = 4;
  c.kvHeads = 2;
  c.headDim = 16;
  c.intermediate = 128;
  c.vocab = 256;
  c.maxPositions = 128;
  return c;
}

/// The tiny model widened to 2,048 hidden (16 heads of 128, 8,192 MLP),
/// `kvHeads` key-value heads: large enough to fill a chip.
LlmConfig wideConfig(int64_t kvHeads) {
  LlmConfig c = tinyConfig();
  c.hidden = 2048;
  c.heads = 16;
  c.kvHeads = kvHeads;
  c.headDim = 128;
  c.intermediate = 8192;
  return c;
}

/// A request of 100 input and 20 output tokens, which the tiny model's 128
/// positions hold.
Request tinyRequest() {
  Request r;
  r.inputLen = 100;
  r.outputLen = 20;
  return r;
}

/// The tiny model at fp8 on one H100, 100 input and 20 output tokens,
/// `batch` sequences in flight.
std::optional<Plan> tinyOnOneH100(int64_t batch) {
  Request r = tinyRequest();
  return price(modelCost(tinyConfig()), loadTarget("h100"), r,
               {.batch = batch});
}

} // namespace

TEST(PlannerTest, PrecisionBytes) {
  EXPECT_EQ(precisionBytes("fp32"), 4);
  EXPECT_EQ(precisionBytes("bf16"), 2);
  EXPECT_EQ(precisionBytes("fp8"), 1);
  EXPECT_EQ(precisionBytes("fp4"), 0.5);
  EXPECT_EQ(precisionBytes("fp64"), 0);
}

// --weights names one format, or a mixed-precision checkpoint's shares of
// the weights in each (FORMAT:SHARE,...); a malformed mix is one error
// naming the flag and what is wrong.
TEST(PlannerTest, WeightMix) {
  std::string error;
  std::vector<WeightShare> one = weightMix("fp8", error);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].format, "fp8");
  EXPECT_EQ(one[0].share, 1);
  std::vector<WeightShare> mix = weightMix("fp8:0.8125,fp4:0.1875", error);
  ASSERT_EQ(mix.size(), 2u);
  EXPECT_EQ(mix[0].format, "fp8");
  EXPECT_EQ(mix[1].format, "fp4");
  EXPECT_DOUBLE_EQ(mix[0].share, 0.8125);
  EXPECT_DOUBLE_EQ(mix[1].share, 0.1875);
  // Shares within 0.001 of 1 are scaled to 1.
  mix = weightMix("fp8:0.9,fp16:0.0995", error);
  ASSERT_EQ(mix.size(), 2u);
  EXPECT_DOUBLE_EQ(mix[0].share + mix[1].share, 1);
  EXPECT_DOUBLE_EQ(mix[0].share, 0.9 / 0.9995);
  EXPECT_TRUE(error.empty()) << error;
  // One format with its share is that format; three formats.
  mix = weightMix("fp4:1", error);
  ASSERT_EQ(mix.size(), 1u);
  EXPECT_EQ(mix[0].format, "fp4");
  mix = weightMix("fp4:0.5,fp8:0.25,bf16:0.25", error);
  ASSERT_EQ(mix.size(), 3u);
  EXPECT_EQ(mix[2].format, "bf16");
  EXPECT_DOUBLE_EQ(weightBytes("fp4:0.5,fp8:0.25,bf16:0.25"), 1.0);
  // The mean bytes of a weight: 0.8125 x 1 + 0.1875 x 0.5.
  EXPECT_DOUBLE_EQ(weightBytes("fp8:0.8125,fp4:0.1875"), 0.90625);
  EXPECT_EQ(weightBytes("bf16"), 2);
  EXPECT_EQ(weightBytes("fp8:0.5,fp4"), 0);
  const std::pair<const char *, const char *> bad[] = {
      {"fp64", "precision 'fp64' is not fp32, bf16, fp16, fp8, int8 or fp4"},
      {"fp8:0.5,fp4:0.4", "--weights=fp8:0.5,fp4:0.4: the shares sum to "
                          "0.9, not 1"},
      {"fp8:0.5,fp4", "--weights=fp8:0.5,fp4: 'fp4' has no share (a mix is "
                      "FORMAT:SHARE,FORMAT:SHARE,...)"},
      {"fp8:0.5,fp4:0.5,", "--weights=fp8:0.5,fp4:0.5,: has an empty item"},
      {",fp8:1", "--weights=,fp8:1: has an empty item"},
      {"fp8: 0.5,fp4:0.5", "--weights=fp8: 0.5,fp4:0.5: has a blank"},
      {"fp8:0.5, fp4:0.5", "has a blank"},
      {"fp8:0.5,fp4:0.5 ", "has a blank"},
      {"fp8:,fp4:1", "fp8's share '' is not a number in (0, 1]"},
      {":0.5,fp4:0.5", "precision '' is not fp32"},
      {"fp8:inf,fp4:1", "fp8's share 'inf' is not a number in (0, 1]"},
      {"fp8:0.5,fp8:0.5", "--weights=fp8:0.5,fp8:0.5: fp8 is named twice"},
      {"fp8:1.5,fp4:0.5", "fp8's share '1.5' is not a number in (0, 1]"},
      {"fp8:0,fp4:1", "fp8's share '0' is not a number in (0, 1]"},
      {"fp8:nan,fp4:1", "fp8's share 'nan' is not a number in (0, 1]"},
      {"fp8:0.5x,fp4:0.5", "fp8's share '0.5x' is not a number in (0, 1]"},
      {"fp9:0.5,fp4:0.5", "--weights=fp9:0.5,fp4:0.5: precision 'fp9' is "
                          "not fp32, bf16, fp16, fp8, int8 or fp4"},
  };
  for (const auto &[spec, why] : bad) {
    error.clear();
    EXPECT_TRUE(weightMix(spec, error).empty()) << spec;
    EXPECT_NE(error.find(why), std::string::npos) << spec << ": " << error;
  }
}

// A mix's weight matmuls split their FLOPs and bytes in its shares, each
// format at its own rate for the rows (on a B200, fp8 at 0.6 of its peak
// at every M, fp4 at 0.444 x M / (M + 400)): the compute-bound prefill
// chunk of the tiny model, and the weights a chip holds, are the shares'
// means of each format's alone.
TEST(PlannerTest, WeightMixSplitsTheMatmulsInItsShares) {
  TargetModel b200 = loadTarget("b200");
  ModelCost m = modelCost(tinyConfig());
  Request r = tinyRequest();
  auto at = [&](const char *weights) {
    r.weights = weights;
    return price(m, b200, r, {.batch = 4});
  };
  std::optional<Plan> fp8 = at("fp8"), fp4 = at("fp4"),
                      mix = at("fp8:0.75,fp4:0.25");
  ASSERT_TRUE(fp8 && fp4 && mix);
  ASSERT_GT(fp4->prefillShare, fp8->prefillShare);
  EXPECT_NEAR(mix->prefillShare,
              0.75 * fp8->prefillShare + 0.25 * fp4->prefillShare,
              1e-9 * mix->prefillShare);
  EXPECT_NEAR(mix->weightsPerChip,
              0.75 * fp8->weightsPerChip + 0.25 * fp4->weightsPerChip,
              1e-9 * mix->weightsPerChip);
  // The decode step too: at 1,024 sequences (1,024 rows a matmul, where
  // fp4 sustains 0.444 x 1024 / 1424 of its peak) its matmuls and LM head
  // are compute bound in every format.
  auto decode = [&](const char *weights) {
    r.weights = weights;
    std::optional<Plan> p = price(m, b200, r, {.batch = 1024});
    EXPECT_TRUE(p.has_value());
    return p ? p->tpot : 0.0;
  };
  double d8 = decode("fp8"), d4 = decode("fp4"),
         dMix = decode("fp8:0.75,fp4:0.25");
  ASSERT_NE(d8, d4);
  EXPECT_NEAR(dMix, 0.75 * d8 + 0.25 * d4, 1e-9 * dMix);
  // A spec validate() rejects prices nothing.
  r.weights = "fp8:0.5";
  EXPECT_FALSE(price(m, b200, r, {.batch = 4}).has_value());
}

TEST(PlannerTest, ModelCostByHand) {
  ModelCost m = modelCost(tinyConfig());
  // q 64x64, k and v 64x32 each, o 64x64.
  EXPECT_EQ(m.attnParams, 64.0 * 64 + 2 * 64 * 32 + 64 * 64);
  // gate, up, down: 3 x 64 x 128.
  EXPECT_EQ(m.expertParams, 3.0 * 64 * 128);
  EXPECT_EQ(m.totalParams(), 2 * (12288.0 + 24576.0) + 2 * 256 * 64);
  // Two FLOPs per parameter of a layer.
  EXPECT_EQ(m.layerFlopsPerToken(), 2 * (12288.0 + 24576.0));
  // q.k and p.v: 4 FLOPs per head dimension per position.
  EXPECT_EQ(m.attnFlopsPerPosition(), 4.0 * 4 * 16);
  EXPECT_EQ(m.kvElementsPerTokenLayer(), 2.0 * 2 * 16);
}

TEST(PlannerTest, MixtureOfExpertsCountsActiveExperts) {
  LlmConfig c = tinyConfig();
  c.experts = 8;
  c.expertsPerToken = 2;
  ModelCost m = modelCost(c);
  EXPECT_EQ(m.totalParams(), 2 * (12288.0 + 8 * 24576.0) + 2 * 256 * 64);
  EXPECT_EQ(m.activeParams(), 2 * (12288.0 + 2 * 24576.0) + 256 * 64);
}

// A static schedule reserves every expert for every token: on a spatial
// preset the MoE step costs what a dense MLP of all the experts' columns
// does, where a GPU runs only the experts its batch is routed to.
TEST(PlannerTest, SpatialPresetsReserveEveryExpert) {
  LlmConfig moe = tinyConfig();
  moe.experts = 4;
  moe.expertsPerToken = 1;
  moe.intermediate = 32;
  LlmConfig dense = tinyConfig();
  dense.intermediate = 4 * 32;
  Request r;
  r.inputLen = 20;
  r.outputLen = 10;
  auto step = [&](const LlmConfig &c, const char *system) {
    std::optional<Plan> p =
        price(modelCost(c), loadTarget(system), r, {});
    EXPECT_TRUE(p.has_value());
    return p ? p->tpot : 0.0;
  };
  // The router's columns are the only difference (4 of 64 x 4 weights).
  EXPECT_NEAR(step(moe, "tsp-v1"), step(dense, "tsp-v1"),
              0.01 * step(dense, "tsp-v1"));
  // One token reads one expert on a GPU: under a third of the MLP.
  EXPECT_LT(step(moe, "h100"), 0.9 * step(dense, "h100"));
}

// One H100 (3.35 TB/s HBM at efficiency 0.75), the tiny model at fp8, batch
// 1: a decode step reads every weight of the two layers once, the KV cache
// of the average context, and the elementwise kernels' bf16 vectors (per
// layer 8 hidden for the two fused residual adds and norms, 3
// intermediate for the SiLU and product: 8 x 64 + 3 x 128); it is memory
// bound.
TEST(PlannerTest, DecodeStepOnOneGpuByHand) {
  std::optional<Plan> p = tinyOnOneH100(1);
  ASSERT_TRUE(p.has_value());
  double bw = 3.35e12 * 0.75;
  double weights = 2 * (12288.0 + 24576.0);           // fp8: 1 byte each
  double kv = 1 * (100 + 10) * 2 * (2 * 2 * 16) * 1.0; // avg context 110
  double elementwise = 2 * (8 * 64 + 3 * 128) * 2.0;   // bf16
  double head = 256.0 * 64 / bw;                       // the LM head, once
  EXPECT_NEAR(p->tpot, (weights + kv + elementwise) / bw + head, 1e-15);
  EXPECT_EQ(p->decodeBound, "memory bandwidth");
  EXPECT_EQ(p->chips, 1);
  EXPECT_DOUBLE_EQ(p->tokensPerSecondPerUser, 1.0 / p->tpot);
  EXPECT_DOUBLE_EQ(p->tokensPerSecondPerWatt, p->tokensPerSecond / 700.0);
}

// The target's `efficiency` is what the roofline divides by: the same
// batch-1 step on an H100 whose file states half the memory efficiency
// (0.375) reads the same bytes at half the rate, and at batch 2048 its
// compute-bound matmuls run at the stated fp8 fraction (0.3, half of 0.6).
TEST(PlannerTest, TheTargetsEfficiencyIsTheRooflines) {
  TargetDesc desc = loadTarget("h100").desc();
  ASSERT_TRUE(desc.efficiency);
  desc.efficiency->memory = 0.375;
  for (double &f : desc.efficiency->matrix)
    f = f > 0 ? 0.3 : 0;
  std::string error;
  std::optional<TargetModel> slow = TargetModel::fromDesc(desc, error);
  ASSERT_TRUE(slow) << error;
  Request r = tinyRequest();
  std::optional<Plan> p1 = price(modelCost(tinyConfig()), *slow, r, {}),
                      base1 = tinyOnOneH100(1);
  ASSERT_TRUE(p1 && base1);
  EXPECT_NEAR(p1->tpot, 2 * base1->tpot, 1e-15);
  std::optional<Plan> p2 =
      price(modelCost(tinyConfig()), *slow, r, {.batch = 2048});
  ASSERT_TRUE(p2);
  double compute = slow->peakFlopsPerChip(NumericFormat::F8) * 0.3,
         memory = 3.35e12 * 0.375;
  double matmuls = 2 * 2048 * 2 * (12288.0 + 24576.0) / compute;
  double attention = 2 * 2048 * 110 * (2.0 * 2 * 16) / memory;
  double elementwise = 2048 * 2 * (8 * 64 + 3 * 128) * 2.0 / memory;
  double head = 2048 * 2 * 256.0 * 64 / compute;
  EXPECT_NEAR(p2->tpot, matmuls + attention + elementwise + head, 1e-15);
}

// A prompt's pass alone: on a spatial chip its chunks of 512 tokens follow
// one another through the stages (2,048 tokens: 4 chunks through 4
// stages take 4 + 3 stage-chunk times and the first chunk's 3 hops, the
// hops here shorter than a stage's chunk); on a GPU the prompt passes the
// stages as one (4 stage times and 3 hops of the whole prompt). A model
// of 2,048 hidden, so that a chunk's stage outlasts its hop.
TEST(PlannerTest, SpatialPromptChunksArePipelinedThroughTheStages) {
  LlmConfig c = wideConfig(4);
  c.layers = 8;
  c.maxPositions = 4096;
  Request r = tinyRequest();
  r.inputLen = 2048;
  r.compile = false;
  std::optional<Plan> lpx =
      price(modelCost(c), loadTarget("lpx-rack"), r, {.pp = 4});
  ASSERT_TRUE(lpx);
  EXPECT_EQ(lpx->prompt.chunks, 4);
  const double stage = 2 * lpx->prompt.layer; // 2 layers a stage
  ASSERT_GT(stage / 4, lpx->prompt.hop);
  EXPECT_NEAR(lpx->prompt.alone, 7 * stage / 4 + 3 * lpx->prompt.hop,
              1e-12 * lpx->prompt.alone);
  EXPECT_LT(lpx->prompt.alone, 0.5 * 4 * stage);
  std::optional<Plan> gpu =
      price(modelCost(c), loadTarget("h100"), r, {.pp = 4});
  ASSERT_TRUE(gpu);
  EXPECT_EQ(gpu->prompt.chunks, 1);
  EXPECT_NEAR(gpu->prompt.alone, 4 * 2 * gpu->prompt.layer + 3 * gpu->prompt.hop,
              1e-12 * gpu->prompt.alone);
  // The tiny model's chunks take less than a hop's latency: the chunks
  // follow one another at the hop's transfer (the latencies of chunks in
  // flight overlap), and one stage has no hop at all.
  LlmConfig t = tinyConfig();
  t.layers = 8;
  t.maxPositions = 4096;
  std::optional<Plan> small =
      price(modelCost(t), loadTarget("lpx-rack"), r, {.pp = 4});
  ASSERT_TRUE(small);
  const double smallStage = 2 * small->prompt.layer;
  ASSERT_LT(small->prompt.hopTransfer, small->prompt.hop);
  ASSERT_GT(small->prompt.hop, smallStage / 4);
  EXPECT_NEAR(small->prompt.alone,
              smallStage + 3 * small->prompt.hop +
                  3 * std::max(smallStage / 4, small->prompt.hopTransfer),
              1e-12 * small->prompt.alone);
  std::optional<Plan> one =
      price(modelCost(t), loadTarget("lpx-rack"), r, {});
  ASSERT_TRUE(one);
  EXPECT_NEAR(one->prompt.alone, 8 * one->prompt.layer,
              1e-12 * one->prompt.alone);
}

// A roofline per kernel: at batch 2048 on one H100 the tiny model's
// matmuls are compute bound (2 layers x 2048 tokens x 2 x 36,864 weights
// at fp8's peak x 0.6) and its attention memory bound (the cache of 2048
// sequences at the average context of 110 tokens, 64 bytes a token a
// layer), and the step takes both one after the other, not the larger of
// the step's compute and its memory; then the elementwise kernels (memory
// bound) and the LM head (compute bound at this batch).
TEST(PlannerTest, DecodeStepIsARooflinePerKernelByHand) {
  TargetModel h100 = loadTarget("h100");
  std::optional<Plan> p = tinyOnOneH100(2048);
  ASSERT_TRUE(p.has_value());
  double compute = h100.peakFlopsPerChip(NumericFormat::F8) * 0.6,
         memory = 3.35e12 * 0.75;
  double matmulCompute = 2 * 2048 * 2 * (12288.0 + 24576.0) / compute;
  double matmulMemory = 2 * (12288.0 + 24576.0) / memory;
  double attnCompute = 2 * 2048 * 110 * (4.0 * 4 * 16) / compute;
  double attnMemory = 2 * 2048 * 110 * (2.0 * 2 * 16) / memory;
  ASSERT_GT(matmulCompute, matmulMemory);
  ASSERT_GT(attnMemory, attnCompute);
  double elementwise = 2048 * 2 * (8 * 64 + 3 * 128) * 2.0 / memory;
  double head = 2048 * 2 * 256.0 * 64 / compute;
  ASSERT_GT(head, 256.0 * 64 / memory);
  EXPECT_NEAR(p->tpot, matmulCompute + attnMemory + elementwise + head, 1e-15);
  EXPECT_EQ(p->decodeBound, "memory bandwidth");
}

// Prefill under load, by hand: prompts of 100 tokens are batched into a
// chunk of 8192 tokens (81.92 prompts) that reads the weights once; each
// kernel takes its own bound (on an H100, fp8 peak at efficiency 0.6): the
// chunk's matmuls are compute bound, its attention (100-token prompts over
// a cache of 64 bytes a token a layer) memory bound, and each prompt takes
// its share of the chunk's time. A sequence among 4 in flight
// waits for the other 3 prompts' shares over its 20 output tokens, and
// the replica's tokens/s charges all 4 prompts against 20 steps.
TEST(PlannerTest, PrefillBatchedIntoChunksByHand) {
  TargetModel h100 = loadTarget("h100");
  std::optional<Plan> p = tinyOnOneH100(4);
  ASSERT_TRUE(p.has_value());
  double chunk = 8192, prompts = chunk / 100;
  double compute = h100.peakFlopsPerChip(NumericFormat::F8) * 0.6,
         memory = 3.35e12 * 0.75;
  double matmulCompute = 2 * chunk * 2 * (12288.0 + 24576.0) / compute;
  double matmulMemory = 2 * (12288.0 + 24576.0) / memory;
  double attnCompute = 2 * prompts * 100.0 * 100 / 2 * (4.0 * 4 * 16) / compute;
  double attnMemory = 2 * chunk * (2.0 * 2 * 16) / memory;
  ASSERT_GT(matmulCompute, matmulMemory);
  ASSERT_GT(attnMemory, attnCompute);
  double elementwise = chunk * 2 * (8 * 64 + 3 * 128) * 2.0 / memory;
  EXPECT_NEAR(p->prefillShare,
              (matmulCompute + attnMemory + elementwise) / prompts, 1e-15);
  EXPECT_NEAR(p->tpotLoaded, p->tpot + 3 * p->prefillShare / 20, 1e-15);
  EXPECT_DOUBLE_EQ(p->tokensPerSecondPerUser, 1.0 / p->tpotLoaded);
  EXPECT_NEAR(p->tokensPerSecond,
              4 * 20 / (20 * p->tpot + 4 * p->prefillShare), 1e-6);
  // One sequence alone waits for nobody else's prompt.
  std::optional<Plan> alone = tinyOnOneH100(1);
  ASSERT_TRUE(alone.has_value());
  EXPECT_DOUBLE_EQ(alone->tpotLoaded, alone->tpot);
}

// The engine's token budget per step: a batch of B sequences of 100 input
// and 20 output tokens keeps B x (1 + 100/20) = 6B tokens a step busy, so
// 600 tokens hold 100 (decode-only chips, which prefill nothing, 600); a
// prompt rides on ceil(100 / (budget - B)) steps, and prompts are
// prefilled in chunks of the budget.
TEST(PlannerTest, TokenBudgetBoundsTheBatchAndSpreadsThePrompt) {
  Request r = tinyRequest();
  r.maxNumTokens = 600;
  EXPECT_EQ(maxSustainedBatch(r), 100);
  r.maxNumTokens = 599;
  EXPECT_EQ(maxSustainedBatch(r), 99);
  r.maxNumTokens = 5;
  EXPECT_EQ(maxSustainedBatch(r), 0);
  r.decodeOnly = true;
  EXPECT_EQ(maxSustainedBatch(r), 5);

  TargetModel h100 = loadTarget("h100");
  ModelCost m = modelCost(tinyConfig());
  Request wide = tinyRequest(), narrow = tinyRequest();
  narrow.maxNumTokens = 64; // 100 prompt tokens beside 4 decode tokens
  std::optional<Plan> one = price(m, h100, wide, {.batch = 4});
  std::optional<Plan> spread = price(m, h100, narrow, {.batch = 4});
  ASSERT_TRUE(one && spread);
  EXPECT_EQ(one->prefillSteps, 1);
  EXPECT_EQ(spread->prefillSteps, 2); // ceil(100 / 60)
  EXPECT_DOUBLE_EQ(spread->tpot, one->tpot);
  // The prompt's own prefill is the same; it waits for one more step.
  EXPECT_NEAR(spread->ttftAlone - 2 * spread->tpot,
              one->ttftAlone - one->tpot, 1e-15);
  // Chunks of 100 tokens (the prompt: a chunk is never shorter) read the
  // weights once per prompt, where chunks of 8192 share them: the share
  // grows by the weights' read less their 82nd.
  double weightsRead = 2 * (12288.0 + 24576.0) / (3.35e12 * 0.75);
  EXPECT_GT(spread->prefillShare, one->prefillShare);
  EXPECT_LE(spread->prefillShare - one->prefillShare, weightsRead);
}

// In the server scenario the time to first token is the prompt's prefill,
// the steps it rides on at their loaded length, and the waits for a slot
// and for the prompts ahead (each at its 99.5th percentile).
TEST(PlannerTest, ServerTtftCountsEveryStepAPromptRidesOn) {
  Request r = tinyRequest();
  r.scenario = "server";
  r.ttft = 1.0;
  r.maxNumTokens = 40; // 100 prompt tokens beside 4 decode tokens: 3 steps
  std::optional<Plan> p =
      price(modelCost(tinyConfig()), loadTarget("h100"), r, {.batch = 4});
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->prefillSteps, 3);
  ASSERT_GT(p->requestRate, 0.0);
  double waits = slotWait(4, 20 * p->tpotLoaded, p->requestRate, 0.005) +
                 prefillWait(p->prefillShare, p->requestRate, 0.005);
  EXPECT_NEAR(p->ttft,
              p->ttftAlone + 3 * (p->tpotLoaded - p->tpot) + waits,
              1e-9 * p->ttft);
}

// Attention's matmuls run at the KV cache's precision: on a B200 with fp4
// weights, the attention FLOPs of a prefill chunk of 1000-token prompts
// (compute bound at either cache format: 2,000 FLOPs a cache byte at fp8)
// run at 0.6 of the FP8 peak (4.5 PFLOP/s) with an fp8 cache and at 0.444
// of the FP4 peak (9) with an fp4 one (attention's matmuls take no
// `matrix_half_rows`), and nothing else changes.
TEST(PlannerTest, AttentionRunsAtTheCachePrecision) {
  TargetModel b200 = loadTarget("b200");
  LlmConfig c = tinyConfig();
  c.maxPositions = 2048;
  Request r = tinyRequest();
  r.inputLen = 1000;
  r.weights = "fp4";
  r.kv = "fp4";
  std::optional<Plan> fp4 = price(modelCost(c), b200, r, {.batch = 4});
  r.kv = "fp8";
  std::optional<Plan> fp8 = price(modelCost(c), b200, r, {.batch = 4});
  ASSERT_TRUE(fp4 && fp8);
  double chunk = 8192, prompts = chunk / 1000;
  double attention = 2 * prompts * 1000.0 * 1000 / 2 * (4.0 * 4 * 16);
  // (The preset's peaks, 4.5 and 9 PFLOP/s to 4 digits, from its MACs
  // and clock.)
  double peak8 = b200.peakFlopsPerChip(NumericFormat::F8);
  double peak4 = b200.peakFlopsPerChip(NumericFormat::F4);
  ASSERT_NEAR(peak8, 4.5e15, 1e12);
  ASSERT_DOUBLE_EQ(peak4, 2 * peak8);
  double rate8 = peak8 * 0.6, rate4 = peak4 * 0.444;
  ASSERT_GT(attention / rate4, 2 * chunk * (2.0 * 2 * 16) / (8e12 * 0.75));
  EXPECT_NEAR(fp8->prefillShare - fp4->prefillShare,
              (attention / rate8 - attention / rate4) / prompts, 1e-15);
}

// A GPU's weight matmuls run at the efficiency of the format its matrix
// unit runs them in: fp4 (block-scaled NVFP4 GEMMs) at 0.444 of the
// B200's 9 PFLOP/s times M / (M + 400) for M rows, fp8 at 0.6 of its 4.5
// at every M. The same prefill chunk (8,192 tokens of the tiny model,
// compute bound) with an fp8 cache: the matmuls, 2 x 2 layers x 8,192
// tokens x the layer's 12,288 attention (q and o 64 x 64, k and v 64 x
// 32) and 3 x 64 x 128 MLP weights, in the rows of the steps the prompts
// ride in (4 decode tokens and, a step, the 100-token prompts of the 0.2
// sequences that finish: 24 rows, below the 400 half rows, where fp4
// holds at half), take 1/2.7e15 s a FLOP at fp8 and 1/(4.0e15 / 2) at
// fp4.
TEST(PlannerTest, Fp4MatmulsRunAtTheirOwnEfficiency) {
  TargetModel b200 = loadTarget("b200");
  ModelCost m = modelCost(tinyConfig());
  Request r = tinyRequest();
  r.kv = "fp8";
  r.weights = "fp8";
  std::optional<Plan> fp8 = price(m, b200, r, {.batch = 4});
  r.weights = "fp4";
  std::optional<Plan> fp4 = price(m, b200, r, {.batch = 4});
  ASSERT_TRUE(fp8 && fp4);
  double chunk = 8192, prompts = chunk / 100;
  double flops = 2.0 * 2 * chunk * (12288.0 + 3.0 * 64 * 128);
  double peak8 = b200.peakFlopsPerChip(NumericFormat::F8);
  double peak4 = b200.peakFlopsPerChip(NumericFormat::F4);
  double rate4 = peak4 * 0.444 / 2;
  EXPECT_NEAR(fp8->prefillShare - fp4->prefillShare,
              (flops / (peak8 * 0.6) - flops / rate4) / prompts,
              1e-9 * fp4->prefillShare);
  // (At so few rows NVFP4 sustains less than FP8: 2.0 against 2.7
  // PFLOP/s.)
  EXPECT_LT(fp8->prefillShare, fp4->prefillShare);
}

namespace {
/// The B200 preset without its `matrix_half_rows`: every format's
/// fraction at every M.
TargetModel b200WithoutHalfRows() {
  TargetDesc desc = loadTarget("b200").desc();
  desc.efficiency->matrixHalfRows = {};
  std::string error;
  std::optional<TargetModel> t = TargetModel::fromDesc(desc, error);
  EXPECT_TRUE(t) << error;
  return *t;
}
} // namespace

// A weight matmul of M rows sustains matrix x M / (M + half rows) of the
// peak (b200's fp4: 0.444 and 400), half of matrix below 400 rows, so
// against the same target without half rows its compute takes (M + 400)
// / M as long, twice below 400. The prompts' matmuls (the tiny model's
// chunk of 8,192 tokens, compute bound) have the rows of the steps they
// ride in, the decode tokens and a step's share of the prompt tokens (a
// 100-token prompt for each of the sequences that finish, 1 in 20): 4
// sequences make 24 rows (below 400: twice), 100 make 600, and 400 with
// a 1,000-token budget make 1,000 (the budget caps them; the chunk is
// then 1,000 tokens, 10 prompts).
TEST(PlannerTest, PromptMatmulsHaveTheStepsRows) {
  TargetModel b200 = loadTarget("b200"), flat = b200WithoutHalfRows();
  ModelCost m = modelCost(tinyConfig());
  const double rate = b200.peakFlopsPerChip(NumericFormat::F4) * 0.444;
  const double perToken = 2.0 * 2 * (12288.0 + 3.0 * 64 * 128);
  struct Case {
    int64_t batch, budget;
    double slower;
  };
  for (Case c : {Case{4, 8192, 1.0}, Case{100, 8192, 400.0 / 600},
                 Case{400, 1000, 400.0 / 1000}}) {
    Request r = tinyRequest();
    r.weights = "fp4";
    r.kv = "fp8";
    r.maxNumTokens = c.budget;
    std::optional<Plan> halved = price(m, b200, r, {.batch = c.batch});
    std::optional<Plan> whole = price(m, flat, r, {.batch = c.batch});
    ASSERT_TRUE(halved && whole);
    // (Compute bound: the layers' weights, read once a chunk, take 6.1 ns
    // at 0.75 of 8 TB/s.)
    const double chunk = double(c.budget);
    ASSERT_GT(perToken * chunk / rate, 73728 * 0.5 / (8e12 * 0.75));
    EXPECT_NEAR(halved->prefillShare - whole->prefillShare,
                perToken * chunk / rate * c.slower / (chunk / 100),
                1e-9 * halved->prefillShare)
        << c.batch << " " << c.budget;
  }
}

// The rows each expert a GPU runs multiplies: of 8 experts, 2 a token, 1
// token touches 2 experts, one row each; 2 tokens touch 8 (1 - 0.75^2) =
// 3.5 experts on average, which share the 4 routed rows; 2,400 tokens
// touch all 8, 600 rows each. One expert: every row.
TEST(PlannerTest, RowsPerExpert) {
  EXPECT_DOUBLE_EQ(rowsPerExpert(1, 8, 2), 1.0);
  EXPECT_DOUBLE_EQ(rowsPerExpert(2, 8, 2), 4.0 / 3.5);
  EXPECT_NEAR(rowsPerExpert(2400, 8, 2), 600.0, 1e-9);
  EXPECT_EQ(rowsPerExpert(5, 1, 1), 5.0);
  EXPECT_EQ(rowsPerExpert(0, 8, 2), 0.0);
}

// On a GPU an expert's matmuls have its share of the rows: with 8 experts
// and 2 a token, a step of 400 decode sequences and their 2,000 prompt
// tokens (2,400 rows) gives each expert 600, while attention's
// projections keep 2,400. The tiny model's 8,192-token prompt chunk is
// compute bound at either.
TEST(PlannerTest, ExpertMatmulsHaveTheirShareOfTheRows) {
  TargetModel b200 = loadTarget("b200"), flat = b200WithoutHalfRows();
  LlmConfig c = tinyConfig();
  c.experts = 8;
  c.expertsPerToken = 2;
  ModelCost m = modelCost(c);
  Request r = tinyRequest();
  r.weights = "fp4";
  r.kv = "fp8";
  std::optional<Plan> halved = price(m, b200, r, {.batch = 400});
  std::optional<Plan> whole = price(m, flat, r, {.batch = 400});
  ASSERT_TRUE(halved && whole);
  const double rate = b200.peakFlopsPerChip(NumericFormat::F4) * 0.444;
  const double chunk = 8192, prompts = chunk / 100;
  const double attention = 2 * chunk * 2 * 12288.0 / rate,
               experts = 2 * chunk * 2 * 2 * 24576.0 / rate;
  EXPECT_NEAR(halved->prefillShare - whole->prefillShare,
              (attention * 400 / 2400 + experts * 400 / 600) / prompts,
              1e-9 * halved->prefillShare);
}

// A decode step's matmuls have its decode tokens and the prompt tokens it
// carries as rows: 400 sequences of 20 output tokens finish 20 a step,
// whose 100-token prompts make 2,400 rows, and the LM head has the 400
// decode tokens alone. At batch 400 the tiny model's step is compute
// bound on b200 at fp4, so the half rows add (400 / 2,400) of the
// layers' matmul time and (400 / 400) of the head's.
TEST(PlannerTest, DecodeMatmulsHaveTheirStepsRows) {
  TargetModel b200 = loadTarget("b200"), flat = b200WithoutHalfRows();
  Request r = tinyRequest();
  r.weights = "fp4";
  r.kv = "fp8";
  ModelCost m = modelCost(tinyConfig());
  std::optional<Plan> halved = price(m, b200, r, {.batch = 400});
  std::optional<Plan> whole = price(m, flat, r, {.batch = 400});
  ASSERT_TRUE(halved && whole);
  const double rate = b200.peakFlopsPerChip(NumericFormat::F4) * 0.444;
  const double layers = 400 * 2.0 * 2 * (12288.0 + 3.0 * 64 * 128) / rate;
  const double head = 400 * 2.0 * 64 * 256 / rate;
  // (Compute bound: the layers' weights, 73,728 at half a byte, take
  // 6.1 ns at 0.75 of 8 TB/s; their matmuls 14.7 ns.)
  ASSERT_GT(layers, 2 * 73728 * 0.5 / (8e12 * 0.75));
  EXPECT_NEAR(halved->tpot - whole->tpot, layers * 400 / 2400 + head * 1.0,
              1e-9 * halved->tpot);
}

// Two GPUs in tensor parallelism: each reads half the weights, and every
// layer adds two all-reduces of the hidden vector over NVLink (two link
// latencies and the bytes each).
TEST(PlannerTest, TensorParallelAddsAllReduces) {
  TargetModel h100 = loadTarget("h100");
  ModelCost m = modelCost(tinyConfig());
  Request r;
  std::optional<Plan> one = price(m, h100, r, {});
  std::optional<Plan> two = price(m, h100, r, {.tp = 2});
  ASSERT_TRUE(one && two);
  EXPECT_EQ(two->chips, 2);
  double lat = h100.chipLinkLatencySeconds();
  double bw = h100.chipLinkBytesPerSecondPerChip() * 0.7;
  double allReduce = 2 * lat + 2.0 * (64 * 2.0) * 0.5 / bw; // bf16 vector
  // 2 layers x 2 all-reduces.
  double linkTime = 2 * 2 * allReduce;
  EXPECT_GT(two->tpot, linkTime);
  EXPECT_LT(two->tpot - linkTime, one->tpot);
}

// The KV cache per chip follows graph-partition's attention split (tiny: 4
// query heads, 2 KV heads): tp 2 splits the KV heads, one per chip; tp 4
// goes past them, each chip taking one query head and the one KV head it
// reads; tp 8 has more chips than query heads, so attention and the whole
// cache are on every chip.
TEST(PlannerTest, KvCachePerChipFollowsTheHeadSplit) {
  TargetModel h100 = loadTarget("h100");
  ModelCost m = modelCost(tinyConfig());
  Request r = tinyRequest();
  double perHead = 1 * (100 + 20) * 2 * (2 * 16) * precisionBytes(r.kv);
  for (auto [tp, heads] : {std::pair{2, 1}, {4, 1}, {8, 2}}) {
    std::optional<Plan> p = price(m, h100, r, {.tp = tp});
    ASSERT_TRUE(p.has_value()) << "tp " << tp;
    EXPECT_DOUBLE_EQ(p->kvPerChip, heads * perHead) << "tp " << tp;
  }
}

TEST(PlannerTest, CapacityRejectsWhatDoesNotFit) {
  TargetModel tiny = loadTarget("tiny"); // 4 MiB of SRAM per chip
  ModelCost m = modelCost(wideConfig(16));
  Request r;
  EXPECT_FALSE(price(m, tiny, r, {}).has_value());
}

// The batch grid: powers of two and the quarter steps between them, every
// batch up to 8 (1, 2, 3, ..., 8), then 10, 12, 14, 16, 20, ... Without a
// load the one-chip plans of the tiny model on an H100 are memory bound,
// so the search takes the largest batch it may: with a token budget that
// sustains 3 sequences (3 x (1 + 100 / 20) = 18 tokens a step) that is 3,
// and with 1,400 tokens (233 sequences) 224, the grid's step below it.
TEST(PlannerTest, BatchGridHasTheQuarterSteps) {
  TargetModel h100 = loadTarget("h100");
  Request r = tinyRequest();
  r.compile = false;
  r.maxChips = 1;
  r.top = 100;
  std::string error;
  auto batchesOf = [&](int64_t budget) {
    r.maxNumTokens = budget;
    std::optional<Result> result =
        loom::plan::plan(tinyConfig(), "", h100, r, nullptr, error);
    std::set<int64_t> batches;
    EXPECT_TRUE(result.has_value()) << error;
    if (result)
      for (const Plan &p : result->plans)
        batches.insert(p.batch);
    return std::pair{batches, result ? result->plans.front().batch : 0};
  };
  auto [small, smallBest] = batchesOf(18);
  EXPECT_EQ(small, (std::set<int64_t>{1, 2, 3}));
  EXPECT_EQ(smallBest, 3);
  auto [large, largeBest] = batchesOf(1400);
  EXPECT_EQ(largeBest, 224);
  for (int64_t b : {4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 160, 192, 224})
    EXPECT_TRUE(large.count(b)) << b;
  for (int64_t b : {9, 11, 13, 15, 17, 18, 200, 256})
    EXPECT_FALSE(large.count(b)) << b;
}

TEST(PlannerTest, SearchIsDeterministicAndMeetsTargets) {
  TargetModel h100 = loadTarget("h100");
  Request r = tinyRequest();
  r.concurrency = 16;
  r.tpot = 0.05;
  r.compile = false;
  r.threads = 2;
  std::string error;
  std::optional<Result> a = loom::plan::plan(tinyConfig(), "", h100, r, nullptr, error);
  r.threads = 1;
  std::optional<Result> b = loom::plan::plan(tinyConfig(), "", h100, r, nullptr, error);
  ASSERT_TRUE(a && b) << error;
  ASSERT_FALSE(a->plans.empty());
  // Two threads and one give the same plans, byte for byte (wall time
  // aside).
  a->seconds = b->seconds = 0;
  EXPECT_EQ(formatJson(*a, r), formatJson(*b, r));
  for (size_t i = 0; i < a->plans.size(); ++i) {
    EXPECT_TRUE(a->plans[i].meetsTargets);
    EXPECT_LE(a->plans[i].tpot, 0.05);
    EXPECT_GE(a->plans[i].concurrency, 16);
  }
}

// On a spatial target the search compiles layers to price plans, and
// scales the estimates of the rest by how far compiled layers were from
// theirs. A degree's calibration is not another's: when the estimate's
// best tensor-parallel degree compiles badly, the best plan of another
// degree is compiled too, rather than condemned by the first's ratio, even
// when only the top plan is asked for.
TEST(PlannerTest, EachTensorParallelDegreeIsMeasured) {
  TargetModel tsp = loadTarget("tsp-v1");
  Request r = tinyRequest();
  r.maxChips = 8;
  r.top = 1;
  r.threads = 1;
  r.compile = false;
  std::string error;
  std::optional<Result> estimated =
      loom::plan::plan(tinyConfig(), "tiny.json", tsp, r, nullptr, error);
  ASSERT_TRUE(estimated && !estimated->plans.empty()) << error;
  int64_t slowTp = estimated->plans[0].tp;
  std::set<int64_t> compiledTps;
  std::set<std::string> kvStorages;
  LayerCompiler fake = [&](const std::string &, const std::string &,
                           const LayerSpec &layer,
                           std::string &) -> std::optional<double> {
    if (layer.tokens > 1)
      return std::nullopt; // (prefill chunks: the estimate stands)
    compiledTps.insert(layer.tp);
    kvStorages.insert(layer.kvStorage);
    return layer.tp == slowTp ? 1.0 : 1e-7; // seconds per layer
  };
  r.compile = true;
  std::optional<Result> measured =
      loom::plan::plan(tinyConfig(), "tiny.json", tsp, r, fake, error);
  ASSERT_TRUE(measured && !measured->plans.empty()) << error;
  EXPECT_GE(compiledTps.size(), 2u);
  // The request's KV cache (fp8 by default) is what the layers store.
  EXPECT_EQ(kvStorages, std::set<std::string>{"fp8"});
  EXPECT_NE(measured->plans[0].tp, slowTp);
  EXPECT_LT(measured->plans[0].tpot, 2 * 1.0);
}

/// The tiny model's request searched over up to 8 tsp-v1 chips on one
/// thread, keeping the best `top` plans.
Request spatialSearch(int64_t top) {
  Request r = tinyRequest();
  r.maxChips = 8;
  r.top = top;
  r.threads = 1;
  return r;
}

/// A layer compiler whose decode layers take 1 us and whose prefill chunks
/// (tokens > 1) `chunk` prices.
LayerCompiler withChunks(
    std::function<std::optional<double>(const LayerSpec &, std::string &)>
        chunk) {
  return [chunk](const std::string &, const std::string &,
                 const LayerSpec &layer,
                 std::string &why) -> std::optional<double> {
    if (layer.tokens == 1)
      return 1e-6;
    return chunk(layer, why);
  };
}

// A spatial plan's prompt is priced by compiled prefill chunks: a chunk of
// 100 tokens does not compile here (the fake's SRAM holds 64), so the
// prompt goes in chunks of 50; the first (1 cached token) and the last (50)
// are compiled, and a layer takes 100 / 50 chunks times their mean. The
// prompt's pass alone is every stage's layers at that time plus the
// estimate's hops, and its time to first token adds the decode step it
// rides on.
TEST(PlannerTest, SpatialPrefillIsPricedByCompiledChunks) {
  TargetModel tsp = loadTarget("tsp-v1");
  Request r = spatialSearch(1);
  std::set<std::pair<int64_t, int64_t>> chunks; // (tokens, past)
  auto chunkSeconds = [](int64_t tokens, int64_t past) {
    return 1e-5 * double(tokens) / 64 + 1e-8 * double(past);
  };
  LayerCompiler fake = withChunks(
      [&](const LayerSpec &layer, std::string &why) -> std::optional<double> {
        chunks.insert({layer.tokens, layer.past});
        EXPECT_EQ(layer.batch, 1);
        if (layer.tokens > 64) {
          why = "does not fit";
          return std::nullopt;
        }
        return chunkSeconds(layer.tokens, layer.past);
      });
  std::string error;
  std::optional<Result> result =
      loom::plan::plan(tinyConfig(), "tiny.json", tsp, r, fake, error);
  ASSERT_TRUE(result && !result->plans.empty()) << error;
  EXPECT_EQ(chunks, (std::set<std::pair<int64_t, int64_t>>{
                        {100, 1}, {50, 1}, {50, 50}}));
  EXPECT_TRUE(result->compileFailures.empty());
  const Plan &p = result->plans[0];
  EXPECT_EQ(p.prompt.chunk, 50);
  EXPECT_EQ(p.prompt.pricedBy, "compiled chunks");
  double layer = 2.0 * (chunkSeconds(50, 1) + chunkSeconds(50, 50)) / 2;
  EXPECT_DOUBLE_EQ(p.prompt.layer, layer);
  std::optional<Plan> est =
      price(modelCost(tinyConfig()), tsp, r,
            {.tp = p.tp, .pp = p.pp, .ep = p.ep, .dp = p.dp, .batch = p.batch,
             .micro = p.micro});
  ASSERT_TRUE(est.has_value());
  double stages = double(p.pp) * std::ceil(2.0 / double(p.pp));
  double hops = est->prompt.alone - stages * est->prompt.layer;
  EXPECT_NEAR(p.prompt.alone, stages * layer + hops, 1e-15);
  EXPECT_NEAR(p.ttftAlone, p.prompt.alone + double(p.prefillSteps) * p.tpot,
              1e-15);
  EXPECT_NEAR(p.prefillShare / est->prefillShare, layer / est->prompt.layer,
              1e-9);
  std::string json = formatJson(*result, r);
  EXPECT_NE(json.find("\"prefill_priced_by\": \"compiled chunks\""),
            std::string::npos);
  EXPECT_NE(json.find("\"prefill_chunk_tokens\": 50"), std::string::npos);
  EXPECT_NE(formatTable(*result, r).find("compiled chunks of 50 tokens"),
            std::string::npos);
}

// tsp-v1 without its collective synchronisation, for the tests whose fake
// layer compilers return times that wait none: a compiled layer or chunk
// waits system.links.sync_seconds in its tile program, and the planner
// takes that out before it calibrates estimates by it.
TargetModel tspWithoutSync() {
  rt::TargetDesc desc = loadTarget("tsp-v1").desc();
  desc.system.links.syncSeconds = 0;
  std::string error;
  std::optional<TargetModel> t = TargetModel::fromDesc(desc, error);
  EXPECT_TRUE(t) << error;
  return *t;
}

// A disaggregated plan whose prefill system is spatial prices its prompts
// by compiled chunks, compiled against the prefill system as named
// (prefillSystemSource), and compiles no decode layer for those chips
// (they only prefill); the decode system here is a GPU, which compiles
// nothing.
TEST(PlannerTest, SpatialPrefillSystemIsCompiledToo) {
  Request r = spatialSearch(1);
  r.prefillSystemSource = "my-tsp.json";
  std::set<std::string> systems;
  int decodeLayers = 0;
  LayerCompiler fake = [&](const std::string &, const std::string &system,
                           const LayerSpec &layer,
                           std::string &) -> std::optional<double> {
    systems.insert(system);
    if (layer.tokens == 1) {
      ++decodeLayers;
      return 1e-6;
    }
    return 1e-5 * double(layer.tokens) / 64;
  };
  std::string error;
  std::optional<Result> result =
      planDisaggregated(tinyConfig(), "tiny.json", tspWithoutSync(),
                        loadTarget("h100"), r, fake, error);
  ASSERT_TRUE(result && !result->plans.empty()) << error;
  EXPECT_EQ(systems, std::set<std::string>{"my-tsp.json"});
  const Plan &p = result->plans[0];
  EXPECT_EQ(p.prefillSystem, "tsp-v1");
  EXPECT_EQ(p.prompt.pricedBy, "compiled chunks");
  EXPECT_EQ(p.prompt.chunk, 100);
  EXPECT_TRUE(result->compileFailures.empty());
  // The prefill search alone: chunks compiled, no decode layer.
  decodeLayers = 0;
  Request prefillOnly = r;
  prefillOnly.prefillOnly = true;
  prefillOnly.top = 1000;
  std::optional<Result> prefill = loom::plan::plan(
      tinyConfig(), "tiny.json", tspWithoutSync(), prefillOnly, fake, error);
  ASSERT_TRUE(prefill && !prefill->plans.empty()) << error;
  EXPECT_EQ(decodeLayers, 0);
  EXPECT_EQ(prefill->plans[0].prompt.pricedBy, "compiled chunks");
  // A prefill chunk that does not compile is reported as the prefill
  // system's, and the prompt keeps the estimate.
  LayerCompiler failing = [](const std::string &, const std::string &,
                             const LayerSpec &layer,
                             std::string &why) -> std::optional<double> {
    if (layer.tokens == 1)
      return 1e-6;
    why = "does not fit";
    return std::nullopt;
  };
  std::optional<Result> failed =
      planDisaggregated(tinyConfig(), "tiny.json", tspWithoutSync(),
                        loadTarget("h100"), r, failing, error);
  ASSERT_TRUE(failed && !failed->plans.empty()) << error;
  EXPECT_EQ(failed->plans[0].prompt.pricedBy, "cost model");
  ASSERT_FALSE(failed->compileFailures.empty());
  EXPECT_EQ(failed->compileFailures[0].rfind(
                "prefill system tsp-v1: the prefill chunk on ", 0),
            0u)
      << failed->compileFailures[0];
}

// A pipeline stage's hop is what the compiler's chip network gives the
// same transfer: from the first chip of stage 0 to its counterpart in
// stage 1 in the plan's whole system, each stage a traffic block. Here it is read off a prompt's pass alone (every stage's
// layers and pp - 1 hops of the prompt's activations). The cases: tsp-v1
// in one node (all links local), stages inside a node of a bigger system
// (half the links local), stages of two nodes in a 64-node dragonfly
// (adaptive routing's two-hop routes: a quarter of the links instead of
// 1/126 of them) and of one node in four (where 1.5 times the global
// share does not pay for the second hop's latency at 12.8 KB), and of
// 12 chips, a node and a half (a local hop to the chip of the
// counterpart's index, then a global one, at the slower one's rate);
// lpx-rack's 32 nodes; the tiny target's ring. (All at ep 1: the
// planner's stage is tp x ep chips, the compiler's traffic block tp.)
TEST(PlannerTest, StageHopIsTheChipNetworksTransfer) {
  LlmConfig c = tinyConfig();
  c.layers = 64;
  c.heads = c.kvHeads = 16;
  ModelCost m = modelCost(c);
  Request r = tinyRequest();
  struct Case {
    const char *target;
    int64_t tp, pp;
  };
  for (Case k : {Case{"tsp-v1", 2, 4}, Case{"tsp-v1", 4, 4},
                 Case{"tsp-v1", 16, 32}, Case{"tsp-v1", 8, 4},
                 Case{"tsp-v1", 12, 4},
                 Case{"lpx-rack", 8, 32}, Case{"tiny", 1, 4}}) {
    TargetModel t = loadTarget(k.target);
    std::optional<Plan> p = price(m, t, r, {.tp = k.tp, .pp = k.pp});
    ASSERT_TRUE(p.has_value()) << k.target << " tp " << k.tp;
    const double stages = double(k.pp) * std::ceil(64.0 / double(k.pp));
    // (One chunk: every layer's time and its collectives' waits.)
    const double hop = (p->prompt.alone -
                        stages * (p->prompt.layer + p->prompt.layerSync)) /
                       double(k.pp - 1);
    const int64_t bytes = r.inputLen * c.hidden *
                          int64_t(precisionBytes(r.activations));
    ChipNetwork net(t, k.tp * k.pp, 0, k.tp);
    const double expected =
        t.cyclesToSeconds(net.transferCycles(0, k.tp, bytes));
    EXPECT_NEAR(hop, expected, 1e-9 * expected)
        << k.target << " tp " << k.tp << " x pp " << k.pp;
  }
}

// At most three prefill shapes are compiled a search; every other plan's
// estimate is scaled by its group's ratio of compiled to estimated prompt
// time (the median over the group's compiled plans), else by the median
// over all, and says so.
TEST(PlannerTest, SpatialPrefillCalibratesThePlansNotCompiled) {
  TargetModel tsp = tspWithoutSync();
  ModelCost m = modelCost(tinyConfig());
  Request r = spatialSearch(160);
  int compiles = 0;
  LayerCompiler fake = withChunks(
      [&](const LayerSpec &layer, std::string &) -> std::optional<double> {
        ++compiles;
        return 1e-5 / double(layer.tp);
      });
  std::string error;
  std::optional<Result> result =
      loom::plan::plan(tinyConfig(), "tiny.json", tsp, r, fake, error);
  ASSERT_TRUE(result && result->plans.size() > 3) << error;
  auto estimate = [&](const Plan &p) {
    std::optional<Plan> e =
        price(m, tsp, r,
              {.tp = p.tp, .pp = p.pp, .ep = p.ep, .dp = p.dp,
               .batch = p.batch, .micro = p.micro});
    EXPECT_TRUE(e.has_value());
    return e ? e->prompt.layer : 0.0;
  };
  std::map<int64_t, std::vector<double>> byGroup;
  std::vector<double> all;
  std::set<std::pair<int64_t, int64_t>> keys;
  int calibrated = 0;
  for (const Plan &p : result->plans)
    if (p.prompt.pricedBy == "compiled chunks") {
      keys.insert({p.tp * p.ep, p.chips});
      byGroup[p.tp * p.ep].push_back(p.prompt.layer / estimate(p));
      all.push_back(p.prompt.layer / estimate(p));
    }
  EXPECT_LE(keys.size(), 3u);
  EXPECT_LE(compiles, 2 * 3);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  for (const Plan &p : result->plans) {
    if (p.prompt.pricedBy != "cost model x compiled")
      continue;
    ++calibrated;
    auto g = byGroup.find(p.tp * p.ep);
    double k = g != byGroup.end() ? median(g->second) : median(all);
    EXPECT_NEAR(p.prompt.layer / estimate(p), k, 1e-9 * k)
        << p.tp << "x" << p.pp << " batch " << p.batch;
  }
  EXPECT_GT(calibrated, 0);
}

// A prompt no chunk of which compiles keeps the estimate, and the failure
// is reported with the chunk sizes tried.
TEST(PlannerTest, SpatialPrefillThatDoesNotCompileIsReported) {
  Request r = spatialSearch(1);
  LayerCompiler fake = withChunks(
      [](const LayerSpec &, std::string &why) -> std::optional<double> {
        why = "boom";
        return std::nullopt;
      });
  std::string error;
  std::optional<Result> result = loom::plan::plan(
      tinyConfig(), "tiny.json", loadTarget("tsp-v1"), r, fake, error);
  ASSERT_TRUE(result && !result->plans.empty()) << error;
  // No chunk compiled, so nothing calibrates the others either.
  for (const Plan &p : result->plans) {
    EXPECT_EQ(p.prompt.pricedBy, "cost model");
    EXPECT_EQ(p.prompt.chunk, 0);
  }
  // One line per shape tried (before and after the decode layers moved
  // the top plans), within the budget of three.
  ASSERT_GE(result->compileFailures.size(), 1u);
  EXPECT_LE(result->compileFailures.size(), 3u);
  for (const std::string &f : result->compileFailures) {
    EXPECT_EQ(f.rfind("the prefill chunk on ", 0), 0u) << f;
    EXPECT_NE(f.find(" chips did not compile (chunks of 100 down to 50 "
                     "tokens tried; the prompt keeps the estimate): boom"),
              std::string::npos)
        << f;
  }
}

// A chunk that compiles to no time at all is no measurement: it counts as
// a failure, and the prompt keeps the estimate.
TEST(PlannerTest, SpatialPrefillTakingNoTimeIsAFailure) {
  Request r = spatialSearch(1);
  LayerCompiler fake = withChunks(
      [](const LayerSpec &, std::string &) -> std::optional<double> {
        return 0.0;
      });
  std::string error;
  std::optional<Result> result = loom::plan::plan(
      tinyConfig(), "tiny.json", loadTarget("tsp-v1"), r, fake, error);
  ASSERT_TRUE(result && !result->plans.empty()) << error;
  EXPECT_EQ(result->plans[0].prompt.pricedBy, "cost model");
  ASSERT_FALSE(result->compileFailures.empty());
  EXPECT_NE(result->compileFailures[0].find(
                "the prompt keeps the estimate): the compiled chunk took no "
                "time"),
            std::string::npos)
      << result->compileFailures[0];
}

// A mixture-of-experts model on a spatial preset is searched at ep 1 only:
// its compiler splits every expert by tensor parallelism (the decode step
// reserves every expert for every token), with no all-to-all, so a plan
// with expert parallelism would be priced as a layout it does not build,
// and its layer, compiled on tp x ep chips, would repeat the tp plan of as
// many chips. The layers compiled are tp's, the search line says why, and
// a GPU preset still searches ep.
TEST(PlannerTest, MixtureOfExpertsOnSpatialPresetsIsSplitByTp) {
  TargetModel tsp = loadTarget("tsp-v1");
  LlmConfig c = tinyConfig();
  c.experts = 4;
  c.expertsPerToken = 2;
  Request r;
  r.maxChips = 16;
  r.top = 1;
  r.threads = 1;
  r.inputLen = 20;
  r.outputLen = 10;
  std::set<int64_t> groups;
  LayerCompiler fake = [&](const std::string &, const std::string &,
                           const LayerSpec &layer,
                           std::string &) -> std::optional<double> {
    if (layer.tokens > 1)
      return std::nullopt; // (prefill chunks: the estimate stands)
    groups.insert(layer.tp);
    return 1e-6 * double(layer.tp);
  };
  std::string error;
  std::optional<Result> result =
      loom::plan::plan(c, "tiny-moe.json", tsp, r, fake, error);
  ASSERT_TRUE(result && !result->plans.empty()) << error;
  EXPECT_EQ(result->epMax, 1);
  EXPECT_TRUE(result->expertsByTp);
  for (const Plan &p : result->plans)
    EXPECT_EQ(p.ep, 1);
  EXPECT_FALSE(groups.empty());
  const Plan &top = result->plans[0];
  EXPECT_TRUE(top.compiled);
  EXPECT_NE(formatTable(*result, r).find(
                "ep 1 (experts split by tp, as the compiler lowers them: no "
                "expert-parallel lowering)"),
            std::string::npos);
  EXPECT_NE(formatJson(*result, r).find("\"experts_by_tp\": true"),
            std::string::npos);
  // On a GPU the experts may be spread over ep groups.
  r.maxChips = 8;
  std::optional<Result> gpu =
      loom::plan::plan(c, "tiny-moe.json", loadTarget("h100"), r, nullptr,
                       error);
  ASSERT_TRUE(gpu.has_value()) << error;
  EXPECT_EQ(gpu->epMax, 4);
  EXPECT_FALSE(gpu->expertsByTp);
}

// A pipeline moves at its slowest stage's pace. graph-partition cuts a
// spatial system's stages at whole layers or between a layer's attention
// and its MLP (tiny-llama-24 at pp 7 compiles to stages of 3.5 layers),
// balanced by time; GPU frameworks cut whole layers only. 7 layers over 3
// stages: 2.5 layers' time a stage with equal halves (a decode layer's),
// 2 2/3 with the tiny model's MLP at 2/3 of its weights (a prompt's: a
// run of three MLP halves and two attention halves), 3 at whole layers,
// 7/3 if perfectly balanced. A compiled decode layer 1 us slower makes the
// step 3 x 2.5 = 7.5 us slower; a compiled prompt chunk's layer 1 us
// slower makes the prompt's pass 3 x 2 2/3 = 8 us slower.
TEST(PlannerTest, CompiledPipelinesStepAtTheSlowestStagesPace) {
  EXPECT_EQ(stageLayers(7, 3, /*spatial=*/true), 2.5);
  EXPECT_EQ(stageLayers(7, 3, /*spatial=*/false), 3.0);
  EXPECT_NEAR(stageLayers(7, 3, /*spatial=*/true, 2.0 / 3.0), 8.0 / 3.0,
              1e-12);
  EXPECT_EQ(stageLayers(24, 7, /*spatial=*/true), 3.5);
  EXPECT_EQ(stageLayers(80, 33, /*spatial=*/true), 2.5);
  EXPECT_NEAR(stageLayers(80, 33, /*spatial=*/true, 0.82), 2.82, 1e-12);
  EXPECT_EQ(stageLayers(80, 33, /*spatial=*/false), 3.0);
  EXPECT_EQ(stageLayers(32, 16, /*spatial=*/true, 0.82), 2.0);
  LlmConfig c = tinyConfig();
  c.layers = 7;
  EXPECT_NEAR(mlpWeightShare(modelCost(c)), 2.0 / 3.0, 1e-12);
  Request r = tinyRequest();
  r.maxChips = 3;
  r.tp = 1;
  r.pp = 3;
  r.batch = 1;
  r.top = 1;
  r.threads = 1;
  auto planWith = [&](double layerSeconds, double chunkSeconds) {
    LayerCompiler fake = [=](const std::string &, const std::string &,
                             const LayerSpec &layer,
                             std::string &) -> std::optional<double> {
      return layer.tokens > 1 ? chunkSeconds : layerSeconds;
    };
    std::string error;
    std::optional<Result> result = loom::plan::plan(
        c, "tiny-7.json", tspWithoutSync(), r, fake, error);
    if (!result || result->plans.empty()) {
      ADD_FAILURE() << error;
      return Plan{};
    }
    const Plan &p = result->plans[0];
    EXPECT_TRUE(p.compiled);
    EXPECT_EQ(p.pp, 3);
    EXPECT_EQ(p.prompt.pricedBy, "compiled chunks");
    return p;
  };
  Plan slow = planWith(2e-6, 2e-5), fast = planWith(1e-6, 1e-5);
  EXPECT_NEAR(slow.tpot - fast.tpot, 7.5e-6, 1e-12);
  // The chunks: one of 100 tokens a layer (the tiny prompt), 1e-5 s more.
  EXPECT_NEAR(slow.prompt.alone - fast.prompt.alone, 3 * (8.0 / 3.0) * 1e-5,
              1e-12);
}

// The precision a planned layer compiles at: the weights' own format where
// the chip's matrix unit runs it, else one of the same width it runs.
TEST(PlannerTest, LayerPrecisionIsOneTheMatrixUnitRuns) {
  TargetModel tsp = loadTarget("tsp-v1"), lpx = loadTarget("lpx-rack"),
              h100 = loadTarget("h100");
  EXPECT_EQ(layerPrecision(tsp, "int8"), "int8");
  EXPECT_EQ(layerPrecision(tsp, "fp8"), "int8");  // tsp-v1: int8, fp16
  EXPECT_EQ(layerPrecision(tsp, "fp4"), "int8");
  EXPECT_EQ(layerPrecision(tsp, "bf16"), "fp16");
  EXPECT_EQ(layerPrecision(lpx, "int8"), "fp8");  // lpx: fp8 only
  EXPECT_EQ(layerPrecision(lpx, "fp8"), "fp8");
  EXPECT_EQ(layerPrecision(lpx, "bf16"), "bf16"); // none: the vector unit
  EXPECT_EQ(layerPrecision(h100, "int8"), "int8");
  EXPECT_EQ(layerPrecision(h100, "fp32"), "fp32");
  // The cost model's format keeps fp4 where the unit runs it.
  TargetModel b200 = loadTarget("b200");
  EXPECT_EQ(matrixFormat(b200, "fp4"), NumericFormat::F4);
  EXPECT_EQ(matrixFormat(h100, "fp4"), NumericFormat::F8);
  EXPECT_EQ(matrixFormat(tsp, "fp8"), NumericFormat::I8);
  EXPECT_EQ(matrixFormat(lpx, "int8"), NumericFormat::F8);
  EXPECT_EQ(layerPrecision(b200, "fp4"), "fp8");
}

// fp8 weights on tsp-v1 run on its int8 matrix unit: the estimate prices
// them at the int8 peak, not the vector unit's.
TEST(PlannerTest, EstimatePricesTheMatrixUnitsFormat) {
  TargetModel tsp = loadTarget("tsp-v1");
  Request r = tinyRequest();
  auto step = [&](const char *weights) {
    r.weights = weights;
    std::optional<Plan> p =
        price(modelCost(tinyConfig()), tsp, r, {.batch = 1024});
    EXPECT_TRUE(p.has_value());
    return p ? p->tpot : 0.0;
  };
  EXPECT_NEAR(step("fp8"), step("int8"), 1e-12);
}

// A context longer than the model's positions is refused, naming both.
TEST(PlannerTest, ContextBeyondTheModelsPositionsIsAnError) {
  Request r;
  r.inputLen = 120;
  r.outputLen = 20;
  std::string error;
  EXPECT_FALSE(loom::plan::plan(tinyConfig(), "", loadTarget("h100"), r,
                                nullptr, error));
  EXPECT_EQ(error, "input + output tokens (120 + 20) exceed tiny's "
                   "max_position_embeddings (128)");
}

// A layer that does not compile is reported (not only ranked last), and the
// table says so.
TEST(PlannerTest, LayerCompileFailuresAreReported) {
  Request r = tinyRequest();
  r.maxChips = 8;
  r.top = 2;
  r.threads = 1;
  LayerCompiler failing = [](const std::string &, const std::string &,
                             const LayerSpec &, std::string &why)
      -> std::optional<double> {
    why = "boom";
    return std::nullopt;
  };
  std::string error;
  std::optional<Result> result = loom::plan::plan(
      tinyConfig(), "tiny.json", loadTarget("tsp-v1"), r, failing, error);
  ASSERT_TRUE(result && !result->plans.empty()) << error;
  ASSERT_FALSE(result->compileFailures.empty());
  // The decode layers' failures (the prompts' chunks fail too, reported
  // beside them).
  bool decodeFailure = false;
  for (const std::string &f : result->compileFailures)
    decodeFailure |= f.rfind("the layer on ", 0) == 0 &&
                     f.find("did not compile: boom") != std::string::npos;
  EXPECT_TRUE(decodeFailure);
  EXPECT_NE(formatTable(*result, r).find("warning: the layer on "),
            std::string::npos);
  EXPECT_NE(formatJson(*result, r).find("\"compile_failures\""),
            std::string::npos);
}

// The KV cache a compiled layer stores: the request's format where the
// compiler stores it, else the compiler's one-byte format.
TEST(PlannerTest, LayerKvStorageMapsToTheCompilersFormats) {
  EXPECT_EQ(loom::plan::layerKvStorage("fp32"), "fp32");
  EXPECT_EQ(loom::plan::layerKvStorage("bf16"), "bf16");
  EXPECT_EQ(loom::plan::layerKvStorage("fp16"), "fp16");
  EXPECT_EQ(loom::plan::layerKvStorage("fp8"), "fp8");
  EXPECT_EQ(loom::plan::layerKvStorage("int8"), "fp8");
  EXPECT_EQ(loom::plan::layerKvStorage("fp4"), "fp8");
}

// Erlang's C formula and the M/M/c wait on hand-computed cases: one server
// at half load waits half the time (M/M/1: P(wait) = rho), two servers
// offered one erlang a third of the time; the M/M/1 wait's tail is
// rho exp(-mu (1 - rho) t), so its 99th percentile at rho = 1/2 and a
// 1 s hold is 2 ln 50 s.
TEST(PlannerTest, ErlangCAndTheWaitByHand) {
  EXPECT_NEAR(erlangC(1, 0.5), 0.5, 1e-12);
  EXPECT_NEAR(erlangC(2, 1.0), 1.0 / 3.0, 1e-12);
  EXPECT_EQ(erlangC(4, 0), 0.0);
  EXPECT_EQ(erlangC(4, 4), 1.0);
  EXPECT_NEAR(slotWait(1, 1.0, 0.5, 0.01), 2 * std::log(50.0), 1e-9);
  // Under 1% of arrivals wait: no wait at the 99th percentile.
  EXPECT_EQ(slotWait(64, 1.0, 10.0, 0.01), 0.0);
  EXPECT_TRUE(std::isinf(slotWait(2, 1.0, 2.0, 0.01)));
  // Thousands of slots stay finite (the recurrence, not factorials).
  EXPECT_GT(erlangC(4096, 4000), 0.0);
  EXPECT_LT(erlangC(4096, 4000), 1.0);
  // Past 4,096 the Halfin-Whitt limit, within 5% of the recurrence (here
  // by hand in the test) wherever C > 1%.
  auto recurrence = [](int64_t c, double a) {
    double b = 1;
    for (int64_t k = 1; k <= c; ++k)
      b = a * b / (double(k) + a * b);
    return double(c) * b / (double(c) - a * (1 - b));
  };
  for (int64_t c : {4097, 8000, 20000})
    for (double u : {0.96, 0.965, 0.97, 0.975, 0.98, 0.99, 0.999}) {
      double exact = recurrence(c, u * double(c));
      if (exact > 0.01)
        EXPECT_NEAR(erlangC(double(c), u * double(c)), exact, 0.05 * exact)
            << c << " " << u;
    }
  // Up to 4,096 the sum, cut where its terms no longer count, is the
  // recurrence to rounding, from light load to the edge of saturation; and
  // the wait, which stops summing once C is known to be under the tail,
  // is the one the whole formula gives.
  for (int64_t c : {1, 3, 17, 256, 1500, 4096})
    for (double u : {0.01, 0.3, 0.7, 0.9, 0.99, 0.9999}) {
      const double a = u * double(c);
      const double exact = recurrence(c, a);
      EXPECT_NEAR(erlangC(double(c), a), exact, 1e-12 + 1e-12 * exact)
          << c << " " << u;
      for (double tail : {0.005, 0.01}) {
        const double hold = 1.0, rate = a / hold;
        const double byHand =
            exact <= tail ? 0.0 : hold / (double(c) - a) * std::log(exact / tail);
        EXPECT_NEAR(slotWait(double(c), hold, rate, tail), byHand,
                    1e-9 * (1 + byHand))
            << c << " " << u << " " << tail;
      }
    }
}

// The prefill queue, M/D/1, at half load with 1 s prompts: the tail
// decays at theta = 1.25643 (the root of 0.5 (e^theta - 1) = theta) from
// C = 0.5 / (0.5 e^theta - 1) = 0.661, so the 99th percentile is
// ln(C / 0.01) / theta = 3.3358 s; and against a simulated queue
// (Lindley's recursion, 400,000 arrivals, a fixed seed) at three loads.
TEST(PlannerTest, PrefillQueueByHandAndSimulated) {
  EXPECT_NEAR(prefillWait(1.0, 0.5, 0.01), 3.3357709, 1e-6);
  EXPECT_NEAR(prefillWait(2.0, 0.25, 0.01), 2 * 3.3357709, 1e-5);
  EXPECT_EQ(prefillWait(1.0, 0.005, 0.01), 0.0);
  EXPECT_TRUE(std::isinf(prefillWait(1.0, 1.0, 0.01)));
  for (double rho : {0.2, 0.5, 0.8}) {
    std::mt19937_64 rng(7);
    std::exponential_distribution<double> gap(rho);
    std::vector<double> waits;
    double w = 0;
    for (int i = 0; i < 400000; ++i) {
      waits.push_back(w);
      w = std::max(0.0, w + 1.0 - gap(rng));
    }
    std::sort(waits.begin(), waits.end());
    double p99 = waits[waits.size() * 99 / 100];
    EXPECT_NEAR(prefillWait(1.0, rho, 0.01), p99, 0.05 * p99 + 0.05)
        << "rho " << rho;
  }
}

// A request's TPOT under Poisson arrivals, each holding the replica for a
// prefill: by hand at a = rate x output x step = 0.1, rho = 0.1 (P(N = 0)
// = e^-0.1 = 0.9048, P(1) = 0.1 e^-0.2 = 0.0819, P(2) = (0.1 / 0.3)
// e^-0.3 0.3^2 / 2 = 0.0111: the 99th percentile is N = 2, so
// 1 + 2 x 1 / 1 s); the Cornish-Fisher quantile against the law summed
// (both branches at a = 20 and beyond); and against simulated busy periods
// (arrivals during the work left, each adding a prefill; a fixed seed).
TEST(PlannerTest, TpotPercentileByHandSummedAndSimulated) {
  using loom::plan::tpotPercentile;
  EXPECT_DOUBLE_EQ(tpotPercentile(1, 1, 0.1, 1, 0.01), 3.0);
  EXPECT_DOUBLE_EQ(tpotPercentile(0.02, 0, 5, 100, 0.01), 0.02);
  EXPECT_TRUE(std::isinf(tpotPercentile(0.02, 0.5, 2, 100, 0.01)));
  // The mean over requests is step / (1 - rho); the 99th percentile lies
  // above it.
  EXPECT_GT(tpotPercentile(0.02, 0.1, 5, 100, 0.01), 0.02 / 0.5);
  auto summed = [](double a, double rho) {
    double cdf = 0, n = 0;
    for (;; n += 1) {
      double mean = a + rho * n;
      cdf += std::exp(std::log(a / mean) - mean + n * std::log(mean) -
                      std::lgamma(n + 1));
      if (cdf >= 0.99)
        return n;
    }
  };
  // step 1 s, output 1, prefill d: a = rate, rho = rate x d. Below 20
  // arrivals, and below 100 past rho = 0.85, the law is summed (exact,
  // also near saturation, where the expansion is far off); else the
  // expansion is within 2% from 20 arrivals up to rho = 0.85, and from
  // 100 within 1.2% up to rho = 0.95 and 4.6% at 0.98.
  auto quantile = [&](double a, double rho) {
    return (tpotPercentile(1, rho / a, a, 1, 0.01) - 1) / (rho / a);
  };
  for (auto [a, rho] : {std::pair{0.5, 0.1}, std::pair{0.5, 0.8},
                        std::pair{0.5, 0.998}, std::pair{19.0, 0.5},
                        std::pair{19.0, 0.95}, std::pair{20.0, 0.9},
                        std::pair{50.0, 0.95}, std::pair{99.0, 0.98}})
    EXPECT_NEAR(quantile(a, rho), summed(a, rho), 1e-6 * summed(a, rho) + 1e-6)
        << "a " << a << " rho " << rho;
  for (double a : {20.0, 50.0})
    for (double rho : {0.1, 0.5, 0.8, 0.85})
      EXPECT_NEAR(quantile(a, rho), summed(a, rho), 0.02 * summed(a, rho))
          << "a " << a << " rho " << rho;
  for (double a : {100.0, 400.0})
    for (double rho : {0.1, 0.5, 0.8, 0.95, 0.98})
      EXPECT_NEAR(quantile(a, rho), summed(a, rho),
                  (rho > 0.95 ? 0.046 : 0.012) * summed(a, rho))
          << "a " << a << " rho " << rho;
  std::mt19937_64 rng(11);
  for (auto [a, rho] : {std::pair{3.0, 0.5}, std::pair{60.0, 0.3}}) {
    std::exponential_distribution<double> gap(a);
    std::vector<double> count;
    for (int i = 0; i < 100000; ++i) {
      double t = 0, end = 1, n = 0;
      while ((t += gap(rng)) <= end) {
        n += 1;
        end += rho / a;
      }
      count.push_back(n);
    }
    std::sort(count.begin(), count.end());
    double p99 = count[count.size() * 99 / 100];
    double n = (tpotPercentile(1, rho / a, a, 1, 0.01) - 1) / (rho / a);
    EXPECT_NEAR(n, p99, 0.03 * p99 + 1) << "a " << a << " rho " << rho;
  }
}

// The server scenario: Poisson arrivals at the highest rate whose
// 99th-percentile time to first token meets the target. It serves at most
// the offline (saturated) rate, its TTFT is the request's own plus the
// wait (so at least the offline one), and a tighter TTFT target gives a
// lower rate; a target the request alone misses gives no rate and fails.
TEST(PlannerTest, ServerScenarioQueuesForASlot) {
  TargetModel h100 = loadTarget("h100");
  ModelCost m = modelCost(tinyConfig());
  Request r = tinyRequest();
  std::optional<Plan> offline = price(m, h100, r, {.batch = 8});
  ASSERT_TRUE(offline);
  r.scenario = "server";
  r.ttft = 10 * offline->ttftAlone;
  std::optional<Plan> loose = price(m, h100, r, {.batch = 8});
  r.ttft = 1.05 * offline->ttftAlone;
  std::optional<Plan> tight = price(m, h100, r, {.batch = 8});
  ASSERT_TRUE(loose && tight);
  // Short prompts and 8 slots: a loose target admits most of the offline
  // load, a tight one (5% over the request's own TTFT) less.
  EXPECT_GT(loose->tokensPerSecond, 0.5 * offline->tokensPerSecond);
  EXPECT_LT(tight->tokensPerSecond, 0.9 * loose->tokensPerSecond);
  EXPECT_GT(tight->tokensPerSecond, 0.0);
  EXPECT_LE(loose->ttft, 10 * offline->ttftAlone * (1 + 1e-9));
  EXPECT_GE(loose->ttft, offline->ttftAlone);
  // The loaded TPOT at the server's rate: below the saturated one.
  EXPECT_LT(loose->tpotLoaded, offline->tpotLoaded);
  EXPECT_NEAR(loose->tokensPerSecond,
              loose->requestRate * double(r.outputLen), 1e-6);
  // --tpot bounds the 99th percentile, not the mean: a bound between
  // them lowers the rate until the percentile meets it.
  EXPECT_GT(loose->tpotP99, loose->tpotLoaded);
  // (The few arrivals per request here take the summed law, whose
  // percentile moves in steps: the bound is met, the next step misses.)
  r.ttft = 10 * offline->ttftAlone;
  r.tpot = 0.5 * (loose->tpotLoaded + loose->tpotP99);
  std::optional<Plan> bounded = price(m, h100, r, {.batch = 8});
  ASSERT_TRUE(bounded);
  EXPECT_LT(bounded->requestRate, loose->requestRate);
  EXPECT_LE(bounded->tpotP99, r.tpot);
  EXPECT_GT(tpotPercentile(bounded->tpot, bounded->prefillShare,
                           1.001 * bounded->requestRate, r.outputLen, 0.01),
            r.tpot);
  r.tpot = 0;
  r.ttft = 0.5 * offline->ttftAlone;
  std::optional<Plan> never = price(m, h100, r, {.batch = 8});
  ASSERT_TRUE(never);
  EXPECT_EQ(never->tokensPerSecond, 0.0);
  EXPECT_GT(never->ttft, r.ttft);
}

// A rate to serve that a target leaves no plan any rate of: no plan, and
// the nearest named has a sane chip count (it was dp = 2^63 - 1 once).
TEST(PlannerTest, ServerRateNoPlanServes) {
  Request r = tinyRequest();
  r.scenario = "server";
  r.ttft = 1e-9;
  r.requestRate = 2;
  r.maxChips = 64;
  r.compile = false;
  std::string error;
  std::optional<Result> result =
      loom::plan::plan(tinyConfig(), "", loadTarget("h100"), r, nullptr, error);
  EXPECT_FALSE(result);
  EXPECT_NE(error.find("no plan on h100 meets the targets"), std::string::npos)
      << error;
  EXPECT_NE(error.find("the nearest: 1 chips"), std::string::npos) << error;
}

TEST(PlannerTest, ServerScenarioNeedsATtftTarget) {
  Request r = tinyRequest();
  r.scenario = "server";
  std::string error;
  EXPECT_FALSE(loom::plan::plan(tinyConfig(), "", loadTarget("h100"), r,
                                nullptr, error));
  EXPECT_NE(error.find("--scenario=server needs --ttft"), std::string::npos)
      << error;
  r.scenario = "serving";
  r.ttft = 1;
  EXPECT_FALSE(loom::plan::plan(tinyConfig(), "", loadTarget("h100"), r,
                                nullptr, error));
  EXPECT_NE(error.find("--scenario must be offline or server"),
            std::string::npos)
      << error;
}

// Disaggregated serving: the decode chips only decode (TPOT = the step),
// and the prefill replicas are as many as the decode chips' request rate
// needs. Offline: exactly enough (ceil(rate x prefill share)); server:
// a stable queue on each, the 99th-percentile TTFT within its target, and
// a rate to serve sets the decode replicas.
TEST(PlannerTest, DisaggregatedPrefillKeepsUpWithDecode) {
  Request r = tinyRequest();
  r.compile = false;
  r.top = 1;
  std::string error;
  TargetModel lpx = loadTarget("lpx-rack"), h100 = loadTarget("h100");
  std::optional<Result> offline = planDisaggregated(
      tinyConfig(), "", h100, lpx, r, nullptr, error);
  ASSERT_TRUE(offline) << error;
  const Plan &q = offline->plans.front();
  // Each system alone for the same request, the decode system first.
  ASSERT_EQ(offline->alone.size(), 2u);
  EXPECT_EQ(offline->alone[0].system, "lpx-rack");
  EXPECT_EQ(offline->alone[1].system, "h100");
  ASSERT_TRUE(offline->alone[0].plan && offline->alone[1].plan);
  // The decode system alone also prefills: its tokens wait for prompts.
  EXPECT_GT(offline->alone[0].plan->tpotLoaded, offline->plans.front().tpot);
  double load = double(q.dp) * q.requestRate * q.prefillShare;
  EXPECT_GE(double(q.prefillReplicas), load);
  EXPECT_LT(double(q.prefillReplicas) - 1, load);
  EXPECT_EQ(q.prefillChips % q.prefillReplicas, 0);
  EXPECT_EQ(q.tpotLoaded, q.tpot);
  // The prompt's own pass yields the first token: no decode step in it,
  // however the budget spreads the prompt on a colocated system.
  EXPECT_EQ(q.prefillSteps, 0);
  Request narrow = r;
  narrow.maxNumTokens = 64; // 100-token prompts beside the decode tokens
  std::optional<Result> spread = planDisaggregated(
      tinyConfig(), "", h100, lpx, narrow, nullptr, error);
  ASSERT_TRUE(spread) << error;
  EXPECT_EQ(spread->plans.front().prefillSteps, 0);
  EXPECT_NEAR(spread->plans.front().ttft - spread->plans.front().kvMove,
              q.ttft - q.kvMove, 1e-6 * q.ttft);
  EXPECT_NEAR(q.tokensPerSecond,
              double(q.dp) * q.requestRate * double(r.outputLen),
              1e-9 * q.tokensPerSecond);
  EXPECT_NEAR(q.tokensPerSecondPerWatt,
              q.tokensPerSecond / (lpx.powerWattsPerChip() * double(q.chips) +
                                   h100.powerWattsPerChip() *
                                       double(q.prefillChips)),
              1e-9 * q.tokensPerSecondPerWatt);

  r.scenario = "server";
  r.ttft = 3 * q.ttftAlone;
  std::optional<Result> server = planDisaggregated(
      tinyConfig(), "", h100, lpx, r, nullptr, error);
  ASSERT_TRUE(server) << error;
  const Plan &s = server->plans.front();
  EXPECT_TRUE(s.meetsTargets);
  EXPECT_GT(s.requestRate, 0.0);
  EXPECT_LE(s.requestRate, q.requestRate);
  EXPECT_LE(s.ttft, r.ttft);
  EXPECT_GE(s.ttft, s.ttftAlone);
  // The wait for a decode slot delays the second token: spread over the
  // output, at most the TTFT bound's worth.
  EXPECT_GE(s.tpotP99, s.tpot);
  EXPECT_LE(s.tpotP99, s.tpot + r.ttft / double(r.outputLen - 1) + 1e-12);
  // Its mean (M/M/c's mean wait, spread likewise) lies between.
  EXPECT_GE(s.tpotLoaded, s.tpot);
  EXPECT_LE(s.tpotLoaded, s.tpotP99);
  EXPECT_DOUBLE_EQ(s.tokensPerSecondPerUser, 1.0 / s.tpotLoaded);
  EXPECT_LT(double(s.dp) * s.requestRate * s.prefillShare,
            double(s.prefillReplicas));
  // Fewer prefill replicas miss the TTFT bound at that rate.
  EXPECT_GT(s.ttftAlone + prefillWait(s.prefillShare,
                                      double(s.dp) * s.requestRate /
                                          double(s.prefillReplicas - 1),
                                      0.01),
            r.ttft);

  // A target no prefill plan meets: an error naming the nearest plan.
  Request impossible = r;
  impossible.ttft = 1e-9;
  EXPECT_FALSE(planDisaggregated(tinyConfig(), "", h100, lpx, impossible,
                                 nullptr, error));
  EXPECT_NE(error.find("no plan decoding on lpx-rack and prefilling on h100 "
                       "meets the targets (time to first token 0 ms); the "
                       "nearest: "),
            std::string::npos)
      << error;

  // --tpot bounds the decode step (the decode chips never prefill): a
  // bound between the step and what the decode system alone gives its
  // tokens still has the disaggregated plan.
  Request bounded = r;
  bounded.scenario = "offline";
  bounded.ttft = 0;
  bounded.tpot = 0.5 * (q.tpot + offline->alone[0].plan->tpotLoaded);
  std::optional<Result> tight = planDisaggregated(
      tinyConfig(), "", h100, lpx, bounded, nullptr, error);
  ASSERT_TRUE(tight) << error;
  EXPECT_LE(tight->plans.front().tpot, bounded.tpot);
  EXPECT_GE(tight->plans.front().tokensPerSecond, 0.99 * q.tokensPerSecond);

  r.requestRate = 10 * double(s.dp) * s.requestRate;
  std::optional<Result> rated = planDisaggregated(
      tinyConfig(), "", h100, lpx, r, nullptr, error);
  ASSERT_TRUE(rated) << error;
  const Plan &t = rated->plans.front();
  EXPECT_TRUE(t.meetsTargets);
  EXPECT_GE(double(t.dp) * t.requestRate, r.requestRate * (1 - 1e-9));
  EXPECT_GT(t.prefillReplicas, s.prefillReplicas);
  // Offline with a rate asked for: the prefill replicas serve that rate,
  // and the tokens/s reported is what they take, not the decode chips'
  // capacity alone.
  Request offlineRated = r;
  offlineRated.scenario = "offline";
  offlineRated.ttft = 0;
  offlineRated.requestRate = 1.5 * double(q.dp) * q.requestRate;
  std::optional<Result> o = planDisaggregated(tinyConfig(), "", h100, lpx,
                                              offlineRated, nullptr, error);
  ASSERT_TRUE(o) << error;
  const Plan &u = o->plans.front();
  EXPECT_EQ(double(u.prefillReplicas),
            std::ceil(offlineRated.requestRate * u.prefillShare));
  EXPECT_LE(double(u.dp) * u.requestRate * u.prefillShare,
            double(u.prefillReplicas) * (1 + 1e-9));
  EXPECT_GE(double(u.dp) * u.requestRate,
            offlineRated.requestRate * (1 - 1e-9));
}

// system.links.sync_seconds: a layer spread over chips waits it at each
// collective, a dense layer's two all-reduces (after attention, after the
// MLP), so tp 2 on tsp-v1 gains 2 layers x 2 x 10 us = 40 us a step and
// every prompt chunk 2 a layer; a layer on one chip waits nothing; past
// the KV heads, a third where the heads are gathered.
TEST(PlannerTest, LinkSyncIsTwoPointsALayerSpreadOverChips) {
  rt::TargetDesc desc = loadTarget("tsp-v1").desc();
  std::string error;
  desc.system.links.syncSeconds = 0;
  std::optional<TargetModel> tsp = TargetModel::fromDesc(desc, error);
  desc.system.links.syncSeconds = 10e-6;
  std::optional<TargetModel> synced = TargetModel::fromDesc(desc, error);
  ASSERT_TRUE(tsp && synced) << error;
  ModelCost m = modelCost(tinyConfig());
  Request r = tinyRequest();
  for (int64_t tp : {1, 2}) {
    std::optional<Plan> base = price(m, *tsp, r, {.tp = tp});
    std::optional<Plan> with = price(m, *synced, r, {.tp = tp});
    ASSERT_TRUE(base && with) << "tp " << tp;
    const double perLayer = tp > 1 ? 2 * 10e-6 : 0.0;
    EXPECT_NEAR(with->tpot - base->tpot, 2 * perLayer, 1e-12) << "tp " << tp;
    EXPECT_NEAR(with->prompt.alone - base->prompt.alone,
                2 * perLayer * with->prompt.chunks, 1e-12)
        << "tp " << tp;
  }
  // Past the KV heads (tp 4 over 2), the k and v projections are
  // computed per KV head on both chips of its group, as graph-partition
  // does where they fit: nothing is gathered, two waits a layer, and each
  // chip holds one KV head's k and v weights (2 x hidden x head_dim a
  // layer) where tp 4 would give it half of one.
  std::optional<Plan> base = price(m, *tsp, r, {.tp = 4});
  std::optional<Plan> with = price(m, *synced, r, {.tp = 4});
  ASSERT_TRUE(base && with);
  EXPECT_FALSE(with->kvGathered);
  EXPECT_NEAR(with->tpot - base->tpot, 2 * 2 * 10e-6, 1e-12);
  std::optional<Plan> one = price(m, *tsp, r, {});
  ASSERT_TRUE(one);
  const double kv = 2.0 * m.hidden * m.kvHeads * m.headDim;
  const double all = m.layers * (m.attnParams + m.expertParams) +
                     m.embedParams + m.headParams;
  const double perChip =
      m.layers * ((m.attnParams - kv) / 4 + kv / m.kvHeads +
                  m.expertParams / 4) +
      (m.embedParams + m.headParams) / 4;
  EXPECT_NEAR(base->weightsPerChip, one->weightsPerChip / all * perChip,
              1e-9 * base->weightsPerChip);
  // tp 3 splits neither the 2 KV heads nor the 4 query heads: q, k and v
  // are gathered, side by side, and wait once more: three waits a layer,
  // as a compiled layer's tile program has.
  base = price(m, *tsp, r, {.tp = 3});
  with = price(m, *synced, r, {.tp = 3});
  ASSERT_TRUE(base && with);
  EXPECT_TRUE(with->kvGathered);
  EXPECT_NEAR(with->tpot - base->tpot, 2 * 3 * 10e-6, 1e-12);
}
