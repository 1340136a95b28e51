//===- DecodeStepTest.cpp - Llama config.json -> one decode step ----------===//
#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"
#include "loom/Frontend/LLM.h"
#include "loom/InitAll.h"
#include "loom/Reference/Evaluator.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <functional>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>

using namespace loom;

namespace {

std::string modelPath(const std::string &file) {
  return std::string(LOOM_MODELS_DIR) + "/" + file;
}

/// Writes `text` to a fresh file under the test's temporary folder.
std::string writeConfig(const std::string &name, const std::string &text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

/// The error readLlmConfig gives for `text` written as `name`, after the
/// "PATH: " every error starts with; a note when it reads the file.
std::string configError(const std::string &name, const std::string &text) {
  std::string path = writeConfig(name, text), error;
  if (readLlmConfig(path, error))
    return "(no error)";
  if (error.rfind(path + ": ", 0) != 0)
    return "(error without the path) " + error;
  return error.substr(path.size() + 2);
}

const char *kTinyText = R"({"hidden_size": 64, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
  "vocab_size": 256, "max_position_embeddings": 128})";

std::string locName(mlir::Operation *op) {
  if (auto name = mlir::dyn_cast<mlir::NameLoc>(op->getLoc()))
    return name.getName().str();
  return "";
}

std::vector<int64_t> shapeOf(mlir::Type t) {
  auto shape = mlir::cast<mlir::RankedTensorType>(t).getShape();
  return {shape.begin(), shape.end()};
}

class DecodeStepTest : public ::testing::Test {
protected:
  DecodeStepTest() {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }

  LlmConfig load(const std::string &file) {
    std::string error;
    auto c = readLlmConfig(modelPath(file), error);
    EXPECT_TRUE(c.has_value()) << error;
    return c ? *c : LlmConfig{};
  }

  mlir::func::FuncOp build(const LlmConfig &c, DecodeStepOptions o = {}) {
    std::string error;
    module = buildDecodeStep(ctx, c, o, error);
    EXPECT_TRUE(module) << error;
    if (!module)
      return nullptr;
    return module->lookupSymbol<mlir::func::FuncOp>("main");
  }

  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

//===----------------------------------------------------------------------===//
// readLlmConfig
//===----------------------------------------------------------------------===//

TEST(ReadLlmConfig, ReadsTheShippedConfigs) {
  std::string error;
  auto c = readLlmConfig(modelPath("llama3-70b.json"), error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->name, "llama3-70b");
  EXPECT_EQ(c->hidden, 8192);
  EXPECT_EQ(c->layers, 80);
  EXPECT_EQ(c->heads, 64);
  EXPECT_EQ(c->kvHeads, 8);
  EXPECT_EQ(c->intermediate, 28672);
  EXPECT_EQ(c->vocab, 128256);
  EXPECT_EQ(c->headDim, 128);
  EXPECT_EQ(c->maxPositions, 8192);
  EXPECT_DOUBLE_EQ(c->rmsEps, 1e-5);
  EXPECT_DOUBLE_EQ(c->ropeTheta, 500000.0);

  auto c8 = readLlmConfig(modelPath("llama3-8b.json"), error);
  ASSERT_TRUE(c8) << error;
  EXPECT_EQ(c8->headDim, 128);
  EXPECT_EQ(c8->kvHeads, 8);
}

TEST(ReadLlmConfig, DefaultsKvHeadsAndHeadDim) {
  std::string error;
  auto c =
      readLlmConfig(writeConfig("defaults.json",
                                R"({"hidden_size": 64, "num_hidden_layers": 1,
                      "num_attention_heads": 8, "intermediate_size": 96,
                      "vocab_size": 10, "max_position_embeddings": 16,
                      "head_dim": null})"),
                    error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->kvHeads, 8);
  EXPECT_EQ(c->headDim, 8);
  EXPECT_DOUBLE_EQ(c->rmsEps, 1e-6);
  EXPECT_DOUBLE_EQ(c->ropeTheta, 10000.0);
}

TEST(ReadLlmConfig, ExplicitHeadDimNeedNotDivideHidden) {
  std::string error;
  auto c =
      readLlmConfig(writeConfig("headdim.json",
                                R"({"hidden_size": 60, "num_hidden_layers": 1,
                      "num_attention_heads": 8, "head_dim": 16,
                      "intermediate_size": 96, "vocab_size": 10,
                      "max_position_embeddings": 16})"),
                    error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->headDim, 16);
}

TEST(ReadLlmConfig, MissingFieldNamesIt) {
  EXPECT_EQ(configError("missing.json", R"({"hidden_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "vocab_size": 256,
        "max_position_embeddings": 128})"),
            "intermediate_size: missing (required)");
}

TEST(ReadLlmConfig, KvHeadsMustDivideHeads) {
  std::string text = kTinyText;
  text.replace(text.find("\"num_key_value_heads\": 2"), 24,
               "\"num_key_value_heads\": 3");
  EXPECT_EQ(configError("badkv.json", text),
            "num_key_value_heads: must divide "
            "num_attention_heads (4), got 3");
}

TEST(ReadLlmConfig, HeadsMustDivideHidden) {
  std::string text = kTinyText;
  text.replace(text.find("\"num_attention_heads\": 4"), 24,
               "\"num_attention_heads\": 6");
  text.replace(text.find("\"num_key_value_heads\": 2"), 24,
               "\"num_key_value_heads\": 3");
  EXPECT_EQ(configError("badheads.json", text),
            "num_attention_heads: must divide hidden_size "
            "(64), got 6");
}

TEST(ReadLlmConfig, RejectsNonPositiveAndNonIntegers) {
  std::string text = kTinyText;
  text.replace(text.find("\"vocab_size\": 256"), 17, "\"vocab_size\": 0");
  EXPECT_EQ(configError("zero.json", text),
            "vocab_size: must be positive, got 0");

  text = kTinyText;
  text.replace(text.find("\"hidden_size\": 64"), 17, "\"hidden_size\": \"64\"");
  EXPECT_EQ(configError("string.json", text),
            "hidden_size: must be an integer, got \"64\"");
}

TEST(ReadLlmConfig, RejectsWhatItDoesNotModel) {
  std::string error;
  std::string text = kTinyText;
  text.insert(1, "\"tie_word_embeddings\": true, ");
  std::string path = writeConfig("tied.json", text);
  EXPECT_FALSE(readLlmConfig(path, error));
  EXPECT_NE(error.find("tie_word_embeddings: unsupported"), std::string::npos)
      << error;
}

TEST(ReadLlmConfig, RefusesOtherArchitecturesAndLooseFlags) {
  auto withField = [](const std::string &field) {
    std::string text = kTinyText;
    text.insert(1, field + ", ");
    return text;
  };
  // Another architecture is not built as Llama.
  EXPECT_EQ(configError("gpt2.json", withField("\"model_type\": \"gpt2\"")),
            "model_type: unsupported: 'gpt2' (the decode step is a llama, "
            "mistral or mixtral model)");
  EXPECT_EQ(configError("arch.json",
                        withField("\"architectures\": [\"GPT2LMHeadModel\"]")),
            "architectures: unsupported: \"GPT2LMHeadModel\" (the decode step "
            "is LlamaForCausalLM, MistralForCausalLM or MixtralForCausalLM)");
  // A flag is a JSON boolean: 1, [] or {} is not read as false.
  for (const char *value : {"1", "[]", "{}"})
    EXPECT_EQ(configError("tie.json", withField(std::string(
                                          "\"tie_word_embeddings\": ") +
                                          value)),
              std::string("tie_word_embeddings: must be true or false, got ") +
                  value);
  EXPECT_EQ(configError("bias.json", withField("\"mlp_bias\": 0")),
            "mlp_bias: must be true or false, got 0");
  // A sliding window shorter than the positions changes attention.
  EXPECT_EQ(configError("window.json", withField("\"sliding_window\": 64")),
            "sliding_window: unsupported: attention over a window of 64 "
            "positions (the decode step attends to every position)");
  std::string error;
  EXPECT_TRUE(readLlmConfig(
      writeConfig("full-window.json", withField("\"sliding_window\": 128")),
      error))
      << error;
  // A key given twice.
  EXPECT_EQ(configError("twice.json", withField("\"vocab_size\": 512")),
            "vocab_size: duplicate key");
  // Deeper than any published model.
  std::string deep = kTinyText;
  deep.replace(deep.find("\"num_hidden_layers\": 2"), 22,
               "\"num_hidden_layers\": 20000");
  EXPECT_EQ(configError("deep.json", deep),
            "num_hidden_layers: must be at most 1024 (each layer's graph is "
            "built), got 20000");
}

TEST(ReadLlmConfig, ReadsMixtureOfExperts) {
  std::string error;
  auto c = readLlmConfig(modelPath("mixtral-8x7b.json"), error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->name, "mixtral-8x7b");
  EXPECT_EQ(c->experts, 8);
  EXPECT_EQ(c->expertsPerToken, 2);
  EXPECT_EQ(c->hidden, 4096);
  EXPECT_EQ(c->layers, 32);
  EXPECT_EQ(c->kvHeads, 8);
  EXPECT_EQ(c->intermediate, 14336);
  EXPECT_EQ(c->maxPositions, 32768);
  EXPECT_DOUBLE_EQ(c->ropeTheta, 1e6);

  // A dense config is one expert, one per token.
  auto dense = readLlmConfig(modelPath("llama3-8b.json"), error);
  ASSERT_TRUE(dense) << error;
  EXPECT_EQ(dense->experts, 1);
  EXPECT_EQ(dense->expertsPerToken, 1);
}

TEST(ReadLlmConfig, ReadsTheLargeDenseConfigs) {
  std::string error;
  auto l2 = readLlmConfig(modelPath("llama2-70b.json"), error);
  ASSERT_TRUE(l2) << error;
  EXPECT_EQ(l2->layers, 80);
  EXPECT_EQ(l2->vocab, 32000);
  EXPECT_EQ(l2->maxPositions, 4096);
  EXPECT_DOUBLE_EQ(l2->ropeTheta, 10000.0);
  auto l405 = readLlmConfig(modelPath("llama3.1-405b.json"), error);
  ASSERT_TRUE(l405) << error;
  EXPECT_EQ(l405->hidden, 16384);
  EXPECT_EQ(l405->layers, 126);
  EXPECT_EQ(l405->heads, 128);
  EXPECT_EQ(l405->kvHeads, 8);
  EXPECT_EQ(l405->headDim, 128);
  EXPECT_EQ(l405->intermediate, 53248);
  EXPECT_EQ(l405->maxPositions, 131072);
}

TEST(ReadLlmConfig, BadExpertsPerTokenNamesIt) {
  std::string text = kTinyText;
  text.insert(1, "\"num_local_experts\": 4, \"num_experts_per_tok\": 5, ");
  EXPECT_EQ(configError("moe-too-many.json", text),
            "num_experts_per_tok: must be at most "
            "num_local_experts (4), got 5");

  text = kTinyText;
  text.insert(1, "\"num_local_experts\": 4, \"num_experts_per_tok\": 0, ");
  EXPECT_EQ(configError("moe-zero.json", text),
            "num_experts_per_tok: must be positive, got 0");

  text = kTinyText;
  text.insert(1, "\"num_local_experts\": 4, ");
  EXPECT_EQ(configError("moe-missing.json", text),
            "num_experts_per_tok: missing (required)");

  // Routed to two experts of a dense (one-expert) model.
  text = kTinyText;
  text.insert(1, "\"num_experts_per_tok\": 2, ");
  EXPECT_EQ(configError("moe-dense.json", text),
            "num_experts_per_tok: must be at most "
            "num_local_experts (1), got 2");

  LlmConfig c;
  c.hidden = c.heads = c.kvHeads = c.intermediate = c.vocab = 8;
  c.layers = 1;
  c.headDim = 2;
  c.maxPositions = 4;
  c.experts = 2;
  c.expertsPerToken = 3;
  EXPECT_EQ(validateLlmConfig(c), "num_experts_per_tok: must be at most "
                                  "num_local_experts (2), got 3");
  c.expertsPerToken = 2;
  EXPECT_EQ(validateLlmConfig(c), "");
}

TEST(ReadLlmConfig, NotAnObject) {
  EXPECT_EQ(configError("array.json", "[1, 2, 3]"),
            "(json): expected an object, got array");

  EXPECT_EQ(configError("broken.json", "{\"hidden_size\": "),
            "(json): invalid JSON");
}

TEST(ReadLlmConfig, MissingFile) {
  std::string error;
  std::string path = ::testing::TempDir() + "/no-such-config.json";
  EXPECT_FALSE(readLlmConfig(path, error));
  EXPECT_EQ(error, path + ": cannot open: no such file");
}

//===----------------------------------------------------------------------===//
// buildDecodeStep
//===----------------------------------------------------------------------===//

TEST_F(DecodeStepTest, TinyBuildsWithNamedInputsAndOutputs) {
  LlmConfig c = load("tiny-llama.json");
  DecodeStepOptions o;
  o.batch = 2;
  o.pastLength = 5;
  auto func = build(c, o);
  ASSERT_TRUE(func);
  EXPECT_TRUE(mlir::succeeded(mlir::verify(*module)));
  // The pass that holds hand-built graphs to the importer's standard.
  mlir::PassManager pm(&ctx);
  pm.addNestedPass<mlir::func::FuncOp>(graph::createGraphVerifyShapes());
  EXPECT_TRUE(mlir::succeeded(pm.run(*module)));

  auto args = func.getArgumentTypes();
  auto results = func.getResultTypes();
  ASSERT_EQ(args.size(), 3u + 2 * 2);
  ASSERT_EQ(results.size(), 1u + 2 * 2);
  auto argName = [&](unsigned i) {
    return func.getArgAttrOfType<mlir::StringAttr>(i, "graph.name").str();
  };
  auto resultName = [&](unsigned i) {
    return func.getResultAttrOfType<mlir::StringAttr>(i, "graph.name").str();
  };
  EXPECT_EQ(argName(0), "input_ids");
  EXPECT_EQ(shapeOf(args[0]), (std::vector<int64_t>{2, 1}));
  EXPECT_TRUE(
      mlir::cast<mlir::RankedTensorType>(args[0]).getElementType().isInteger(
          64));
  EXPECT_EQ(argName(1), "rope_cos");
  EXPECT_EQ(argName(2), "rope_sin");
  EXPECT_EQ(shapeOf(args[1]), (std::vector<int64_t>{1, 1, 1, 16}));
  EXPECT_EQ(shapeOf(args[2]), (std::vector<int64_t>{1, 1, 1, 16}));
  EXPECT_EQ(resultName(0), "logits");
  EXPECT_EQ(shapeOf(results[0]), (std::vector<int64_t>{2, 1, 256}));
  for (int i = 0; i < 2; ++i) {
    std::string n = std::to_string(i);
    EXPECT_EQ(argName(3 + 2 * i), "past_key_" + n);
    EXPECT_EQ(argName(4 + 2 * i), "past_value_" + n);
    EXPECT_EQ(shapeOf(args[3 + 2 * i]), (std::vector<int64_t>{2, 2, 5, 16}));
    EXPECT_EQ(shapeOf(args[4 + 2 * i]), (std::vector<int64_t>{2, 2, 5, 16}));
    EXPECT_EQ(resultName(1 + 2 * i), "present_key_" + n);
    EXPECT_EQ(resultName(2 + 2 * i), "present_value_" + n);
    EXPECT_EQ(shapeOf(results[1 + 2 * i]), (std::vector<int64_t>{2, 2, 6, 16}));
    EXPECT_EQ(shapeOf(results[2 + 2 * i]), (std::vector<int64_t>{2, 2, 6, 16}));
  }
}

TEST_F(DecodeStepTest, DefaultPastIsTheLastPosition) {
  LlmConfig c = load("tiny-llama.json");
  auto func = build(c);
  ASSERT_TRUE(func);
  EXPECT_EQ(shapeOf(func.getArgumentTypes()[3]),
            (std::vector<int64_t>{1, 2, 127, 16}));
  EXPECT_EQ(shapeOf(func.getResultTypes()[1]),
            (std::vector<int64_t>{1, 2, 128, 16}));
}

TEST_F(DecodeStepTest, OpCountsPerLayer) {
  LlmConfig c = load("tiny-llama.json");
  auto func = build(c);
  ASSERT_TRUE(func);
  // Ops of layer 1, by name, and of the whole function.
  std::map<std::string, int> layer, all;
  int matmulsNamedAfterProjections = 0;
  func.walk([&](mlir::Operation *op) {
    if (mlir::isa<mlir::func::FuncOp, mlir::func::ReturnOp>(op))
      return;
    std::string name = op->getName().getStringRef().str();
    ++all[name];
    std::string where = locName(op);
    EXPECT_FALSE(where.empty()) << name << " has no NameLoc";
    if (where.rfind("model.layers.1.", 0) == 0)
      ++layer[name];
    if (mlir::isa<graph::MatMulOp>(op) &&
        (where.ends_with("_proj") || where == "lm_head"))
      ++matmulsNamedAfterProjections;
  });
  std::map<std::string, int> perLayer = {
      {"graph.constant", 12}, // 9 weights, 2 epsilons, the attention scale
      {"graph.matmul", 9},    // 7 projections, scores, context
      {"graph.mul", 11},      {"graph.add", 6},     {"graph.reduce_mean", 2},
      {"graph.sqrt", 2},      {"graph.div", 2},     {"graph.slice", 4},
      {"graph.neg", 2},       {"graph.concat", 4},  {"graph.reshape", 4},
      {"graph.transpose", 1}, {"graph.softmax", 1}, {"graph.sigmoid", 1},
  };
  EXPECT_EQ(layer, perLayer);
  // Outside the layers: embedding (bf16 constant, gather, cast to f32),
  // final norm (2
  // constants, 4 arithmetic ops, reduce_mean, sqrt), lm_head (constant,
  // matmul).
  std::map<std::string, int> outside = {
      {"graph.constant", 4},    {"graph.gather", 1}, {"graph.cast", 1},
      {"graph.matmul", 1},
      {"graph.mul", 2},         {"graph.add", 1},    {"graph.div", 1},
      {"graph.reduce_mean", 1}, {"graph.sqrt", 1},
  };
  std::map<std::string, int> expected = outside;
  for (auto &[name, n] : perLayer)
    expected[name] += n * c.layers;
  EXPECT_EQ(all, expected);
  EXPECT_EQ(matmulsNamedAfterProjections, 7 * c.layers + 1);
}

TEST_F(DecodeStepTest, LocationsNameTheModules) {
  LlmConfig c = load("tiny-llama.json");
  auto func = build(c);
  ASSERT_TRUE(func);
  std::map<std::string, std::vector<int64_t>> weights;
  bool sawQProj = false;
  func.walk([&](mlir::Operation *op) {
    if (auto cst = mlir::dyn_cast<graph::ConstantOp>(op))
      weights[locName(op)] = shapeOf(cst.getType());
    if (mlir::isa<graph::MatMulOp>(op) &&
        locName(op) == "model.layers.1.self_attn.q_proj")
      sawQProj = true;
  });
  EXPECT_TRUE(sawQProj);
  // HF parameter names, with [in, out] matmul weights.
  using Shape = std::vector<int64_t>;
  EXPECT_EQ(weights["model.embed_tokens.weight"], (Shape{256, 64}));
  EXPECT_EQ(weights["model.layers.0.self_attn.q_proj.weight"], (Shape{64, 64}));
  EXPECT_EQ(weights["model.layers.0.self_attn.k_proj.weight"], (Shape{64, 32}));
  EXPECT_EQ(weights["model.layers.0.self_attn.v_proj.weight"], (Shape{64, 32}));
  EXPECT_EQ(weights["model.layers.0.self_attn.o_proj.weight"], (Shape{64, 64}));
  EXPECT_EQ(weights["model.layers.1.mlp.gate_proj.weight"], (Shape{64, 128}));
  EXPECT_EQ(weights["model.layers.1.mlp.up_proj.weight"], (Shape{64, 128}));
  EXPECT_EQ(weights["model.layers.1.mlp.down_proj.weight"], (Shape{128, 64}));
  EXPECT_EQ(weights["model.layers.1.input_layernorm.weight"], (Shape{64}));
  EXPECT_EQ(weights["model.layers.1.post_attention_layernorm.weight"],
            (Shape{64}));
  EXPECT_EQ(weights["model.norm.weight"], (Shape{64}));
  EXPECT_EQ(weights["lm_head.weight"], (Shape{64, 256}));
}

// --kv-precision: every past_* argument and present_* result, and nothing
// else, carries graph.storage.
TEST_F(DecodeStepTest, KvPrecisionMarksTheCache) {
  DecodeStepOptions o;
  o.kvPrecision = "fp8";
  mlir::func::FuncOp f = build(load("tiny-llama.json"), o);
  ASSERT_TRUE(f);
  int stored = 0;
  auto check = [&](mlir::Attribute name, mlir::Attribute storage) {
    llvm::StringRef n = mlir::cast<mlir::StringAttr>(name).getValue();
    bool cache = n.starts_with("past_") || n.starts_with("present_");
    EXPECT_EQ(bool(storage), cache) << n.str();
    if (storage) {
      EXPECT_EQ(mlir::cast<mlir::StringAttr>(storage).getValue(), "fp8");
      ++stored;
    }
  };
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    check(f.getArgAttr(i, "graph.name"), f.getArgAttr(i, "graph.storage"));
  for (unsigned i = 0; i < f.getNumResults(); ++i)
    check(f.getResultAttr(i, "graph.name"),
          f.getResultAttr(i, "graph.storage"));
  EXPECT_EQ(stored, 8); // 2 layers x (key, value) x (past, present)
  // fp32 (the default) marks nothing.
  f = build(load("tiny-llama.json"));
  ASSERT_TRUE(f);
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    EXPECT_FALSE(f.getArgAttr(i, "graph.storage"));
}

TEST_F(DecodeStepTest, RejectsBadOptions) {
  LlmConfig c = load("tiny-llama.json");
  std::string error;
  DecodeStepOptions o;
  o.pastLength = 128; // past + 1 would exceed max_position_embeddings
  EXPECT_FALSE(buildDecodeStep(ctx, c, o, error));
  EXPECT_NE(error.find("past length"), std::string::npos) << error;
  o = {};
  o.batch = 0;
  EXPECT_FALSE(buildDecodeStep(ctx, c, o, error));
  EXPECT_NE(error.find("batch"), std::string::npos) << error;
  o = {};
  o.kvPrecision = "fp4";
  EXPECT_FALSE(buildDecodeStep(ctx, c, o, error));
  EXPECT_EQ(error, "tiny-llama: KV-cache precision must be fp32, bf16, fp16 "
                   "or fp8, got 'fp4'");
  LlmConfig odd = c;
  odd.headDim = 15;
  odd.heads = 4;
  EXPECT_FALSE(buildDecodeStep(ctx, odd, {}, error));
  EXPECT_EQ(error, "tiny-llama: head_dim: must be even (rotary embeddings "
                   "rotate its halves), got 15");
}

/// The parameters of one Llama decoder layer: the four attention
/// projections, the three MLP projections and two norms.
int64_t layerParameters(const LlmConfig &c) {
  int64_t attn = c.hidden * c.heads * c.headDim +
                 2 * c.hidden * c.kvHeads * c.headDim +
                 c.heads * c.headDim * c.hidden;
  int64_t mlp = 3 * c.hidden * c.intermediate;
  return attn + mlp + 2 * c.hidden;
}

/// The parameter count of a Llama decoder: embedding, the layers, the final
/// norm and lm_head.
int64_t llamaParameters(const LlmConfig &c) {
  return c.vocab * c.hidden + c.layers * layerParameters(c) + c.hidden +
         c.hidden * c.vocab;
}

// Mixtral's block: a router over the experts, its top k, the masked softmax
// of the gates, and the experts as one weight each with their columns
// interleaved; the layer has Mixtral's parameters.
TEST_F(DecodeStepTest, MixtureOfExpertsBlock) {
  LlmConfig c = load("tiny-mixtral.json");
  DecodeStepOptions o;
  o.bodyOnly = true;
  o.layers = 1;
  o.batch = 3;
  o.pastLength = 5;
  auto func = build(c, o);
  ASSERT_TRUE(func);
  mlir::PassManager pm(&ctx);
  pm.addNestedPass<mlir::func::FuncOp>(graph::createGraphVerifyShapes());
  EXPECT_TRUE(mlir::succeeded(pm.run(*module)));
  std::map<std::string, std::vector<int64_t>> weights;
  std::map<std::string, int> ops;
  int64_t params = 0;
  func.walk([&](mlir::Operation *op) {
    ++ops[op->getName().getStringRef().str()];
    if (auto cst = mlir::dyn_cast<graph::ConstantOp>(op)) {
      weights[locName(op)] = shapeOf(cst.getType());
      if (cst.getType().getRank() > 0)
        params += cst.getType().getNumElements();
    }
    if (auto topk = mlir::dyn_cast<graph::TopKOp>(op)) {
      EXPECT_EQ(topk.getK(), c.expertsPerToken);
      EXPECT_EQ(topk.getAxis(), 2);
      EXPECT_TRUE(topk.getLargest());
    }
    if (auto softmax = mlir::dyn_cast<graph::SoftmaxOp>(op);
        softmax && locName(op) == "model.layers.0.block_sparse_moe.gates")
      EXPECT_EQ(shapeOf(softmax.getType()), (std::vector<int64_t>{3, 1, 4}));
  });
  using Shape = std::vector<int64_t>;
  const std::string moe = "model.layers.0.block_sparse_moe.";
  EXPECT_EQ(weights[moe + "gate.weight"], (Shape{64, 4}));
  EXPECT_EQ(weights[moe + "experts.w1.weight"], (Shape{64, 32 * 4}));
  EXPECT_EQ(weights[moe + "experts.w3.weight"], (Shape{64, 32 * 4}));
  EXPECT_EQ(weights[moe + "experts.w2.weight"], (Shape{32 * 4, 64}));
  EXPECT_EQ(weights.count("model.layers.0.mlp.gate_proj.weight"), 0u);
  EXPECT_EQ(ops["graph.topk"], 1);
  EXPECT_EQ(ops["graph.select"], 1);
  // Mixtral's layer: attention, the router, 3 matrices per expert, 2 norms.
  int64_t attn = 2 * c.hidden * c.heads * c.headDim +
                 2 * c.hidden * c.kvHeads * c.headDim;
  EXPECT_EQ(params, attn + c.hidden * c.experts +
                        c.experts * 3 * c.hidden * c.intermediate +
                        2 * c.hidden);
}

// The whole Mixtral-8x7B step builds: 32 layers of 8 experts.
TEST_F(DecodeStepTest, Mixtral8x7bBuilds) {
  LlmConfig c = load("mixtral-8x7b.json");
  DecodeStepOptions o;
  o.pastLength = 16;
  auto func = build(c, o);
  ASSERT_TRUE(func);
  int topks = 0;
  func.walk([&](graph::TopKOp) { ++topks; });
  EXPECT_EQ(topks, 32);
}

TEST_F(DecodeStepTest, BodyOnlyOneLayerOfLlama3_70b) {
  LlmConfig c = load("llama3-70b.json");
  DecodeStepOptions o;
  o.bodyOnly = true;
  o.layers = 1;
  o.pastLength = 100;
  auto func = build(c, o);
  ASSERT_TRUE(func);
  EXPECT_TRUE(mlir::succeeded(mlir::verify(*module)));
  mlir::PassManager pm(&ctx);
  pm.addNestedPass<mlir::func::FuncOp>(graph::createGraphVerifyShapes());
  EXPECT_TRUE(mlir::succeeded(pm.run(*module)));

  auto argName = [&](unsigned i) {
    return func.getArgAttrOfType<mlir::StringAttr>(i, "graph.name").str();
  };
  auto resultName = [&](unsigned i) {
    return func.getResultAttrOfType<mlir::StringAttr>(i, "graph.name").str();
  };
  std::vector<std::string> args, results;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    args.push_back(argName(i));
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    results.push_back(resultName(i));
  EXPECT_EQ(args, (std::vector<std::string>{"hidden", "rope_cos", "rope_sin",
                                            "past_key_0", "past_value_0"}));
  EXPECT_EQ(results, (std::vector<std::string>{"hidden_out", "present_key_0",
                                               "present_value_0"}));
  auto argTypes = func.getArgumentTypes();
  auto resultTypes = func.getResultTypes();
  EXPECT_EQ(shapeOf(argTypes[0]), (std::vector<int64_t>{1, 1, 8192}));
  EXPECT_TRUE(
      mlir::cast<mlir::RankedTensorType>(argTypes[0]).getElementType().isF32());
  EXPECT_EQ(shapeOf(argTypes[3]), (std::vector<int64_t>{1, 8, 100, 128}));
  EXPECT_EQ(shapeOf(resultTypes[0]), (std::vector<int64_t>{1, 1, 8192}));
  EXPECT_TRUE(mlir::cast<mlir::RankedTensorType>(resultTypes[0])
                  .getElementType()
                  .isF32());
  EXPECT_EQ(shapeOf(resultTypes[1]), (std::vector<int64_t>{1, 8, 101, 128}));

  int64_t weights = 0;
  bool outsideLayer = false;
  func.walk([&](mlir::Operation *op) {
    if (mlir::isa<mlir::func::FuncOp, mlir::func::ReturnOp>(op))
      return;
    if (auto cst = mlir::dyn_cast<graph::ConstantOp>(op))
      if (locName(op).ends_with(".weight"))
        weights += cst.getType().getNumElements();
    if (mlir::isa<graph::GatherOp>(op) ||
        locName(op).rfind("model.layers.0.", 0) != 0)
      outsideLayer = true;
  });
  EXPECT_FALSE(outsideLayer) << "no embedding, final norm or lm_head";
  EXPECT_EQ(weights, layerParameters(c));
  EXPECT_EQ(layerParameters(c), 855654400);
}

TEST_F(DecodeStepTest, LayersOptionBuildsThatMany) {
  LlmConfig c = load("tiny-llama.json");
  DecodeStepOptions o;
  o.layers = 1;
  auto func = build(c, o);
  ASSERT_TRUE(func);
  // Full step, one layer: input_ids, rope tables, one layer's caches; logits
  // and its presents.
  EXPECT_EQ(func.getNumArguments(), 3u + 2);
  EXPECT_EQ(func.getNumResults(), 1u + 2);
  EXPECT_EQ(func.getResultAttrOfType<mlir::StringAttr>(0, "graph.name").str(),
            "logits");

  // bodyOnly with all layers.
  o = {};
  o.bodyOnly = true;
  func = build(c, o);
  ASSERT_TRUE(func);
  EXPECT_EQ(func.getNumArguments(), 3u + 2 * 2);
  EXPECT_EQ(func.getNumResults(), 1u + 2 * 2);

  std::string error;
  o = {};
  o.layers = 3;
  EXPECT_FALSE(buildDecodeStep(ctx, c, o, error));
  EXPECT_EQ(error, "tiny-llama: layers must be in [0, num_hidden_layers = 2] "
                   "(0: all), got 3");
  o.layers = -1;
  EXPECT_FALSE(buildDecodeStep(ctx, c, o, error));
  EXPECT_NE(error.find("layers must be in"), std::string::npos) << error;
}

TEST_F(DecodeStepTest, BodyOnlyEvaluates) {
  LlmConfig c = load("tiny-llama.json");
  DecodeStepOptions o;
  o.bodyOnly = true;
  o.layers = 1;
  o.pastLength = 2;
  auto func = build(c, o);
  ASSERT_TRUE(func);
  const int64_t b = 1, kv = 2, past = 2, hd = 16;
  std::vector<rt::Tensor> inputs;
  std::vector<float> hidden(c.hidden);
  for (int64_t j = 0; j < c.hidden; ++j)
    hidden[j] = 0.01f * float(j % 7) - 0.03f;
  inputs.push_back(
      rt::Tensor::fromVector(rt::DType::F32, {b, 1, c.hidden}, hidden));
  std::vector<float> cos, sin;
  ropeTables(c, past, cos, sin);
  inputs.push_back(rt::Tensor::fromVector(rt::DType::F32, {1, 1, 1, hd}, cos));
  inputs.push_back(rt::Tensor::fromVector(rt::DType::F32, {1, 1, 1, hd}, sin));
  for (int r = 0; r < 2; ++r)
    inputs.push_back(rt::Tensor::fromVector(
        rt::DType::F32, {b, kv, past, hd},
        std::vector<float>(b * kv * past * hd, 0.02f * float(r + 1))));
  auto out = evaluate(func, inputs);
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].shape(), (rt::Shape{b, 1, c.hidden}));
  EXPECT_EQ((*out)[1].shape(), (rt::Shape{b, kv, past + 1, hd}));
  for (const rt::Tensor &t : *out)
    for (int64_t j = 0; j < t.numElements(); ++j)
      ASSERT_TRUE(std::isfinite(t.getDouble(j)));
}

TEST_F(DecodeStepTest, Llama3_70bHasItsParameterCount) {
  LlmConfig c = load("llama3-70b.json");
  auto func = build(c);
  ASSERT_TRUE(func);
  int64_t weights = 0, all = 0, scalars = 0;
  bool allSplat = true;
  func.walk([&](graph::ConstantOp cst) {
    int64_t n = cst.getType().getNumElements();
    all += n;
    if (locName(cst).ends_with(".weight"))
      weights += n;
    else
      scalars += n;
    auto dense = mlir::dyn_cast<mlir::DenseElementsAttr>(cst.getValue());
    allSplat &= dense && dense.isSplat();
  });
  EXPECT_TRUE(allSplat);
  EXPECT_EQ(llamaParameters(c), 70553706496);
  EXPECT_EQ(weights, llamaParameters(c));
  // Two epsilons and a scale per layer, the final norm's epsilon.
  EXPECT_EQ(scalars, 3 * c.layers + 1);
  EXPECT_EQ(all, weights + scalars);
  EXPECT_EQ(func.getNumArguments(), 3u + 2 * 80);
  EXPECT_EQ(shapeOf(func.getArgumentTypes()[3]),
            (std::vector<int64_t>{1, 8, 8191, 128}));
  EXPECT_EQ(shapeOf(func.getResultTypes()[0]),
            (std::vector<int64_t>{1, 1, 128256}));
}

//===----------------------------------------------------------------------===//
// Evaluation with the golden reference
//===----------------------------------------------------------------------===//

float splatOf(mlir::func::FuncOp func, const std::string &name) {
  float value = NAN;
  func.walk([&](graph::ConstantOp cst) {
    if (locName(cst) == name)
      value = static_cast<float>(
          mlir::cast<mlir::DenseElementsAttr>(cst.getValue())
              .getSplatValue<llvm::APFloat>()
              .convertToDouble());
  });
  return value;
}

TEST_F(DecodeStepTest, TinyEvaluates) {
  LlmConfig c = load("tiny-llama.json");
  DecodeStepOptions o;
  o.batch = 2;
  o.pastLength = 3;
  auto func = build(c, o);
  ASSERT_TRUE(func);
  const int64_t b = 2, kv = 2, past = 3, hd = 16, position = past;

  std::vector<rt::Tensor> inputs;
  inputs.push_back(rt::Tensor::fromVector(rt::DType::I64, {b, 1},
                                          std::vector<int64_t>{7, 200}));
  std::vector<float> cos, sin;
  ropeTables(c, position, cos, sin);
  inputs.push_back(rt::Tensor::fromVector(rt::DType::F32, {1, 1, 1, hd}, cos));
  inputs.push_back(rt::Tensor::fromVector(rt::DType::F32, {1, 1, 1, hd}, sin));
  for (int64_t i = 0; i < 2 * c.layers; ++i) {
    std::vector<float> cache(b * kv * past * hd);
    for (size_t j = 0; j < cache.size(); ++j)
      cache[j] = 0.001f * float((j * 37 + i * 11) % 101) - 0.05f;
    inputs.push_back(
        rt::Tensor::fromVector(rt::DType::F32, {b, kv, past, hd}, cache));
  }
  auto out = evaluate(func, inputs);
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->size(), 1u + 2 * c.layers);

  // Shapes, and every value finite.
  EXPECT_EQ((*out)[0].shape(), (rt::Shape{b, 1, c.vocab}));
  for (size_t r = 1; r < out->size(); ++r)
    EXPECT_EQ((*out)[r].shape(), (rt::Shape{b, kv, past + 1, hd}));
  for (const rt::Tensor &t : *out)
    for (int64_t j = 0; j < t.numElements(); ++j)
      ASSERT_TRUE(std::isfinite(t.getDouble(j)));

  // The cache is carried over: present[:, :, :past] is the past input.
  for (int64_t r = 0; r < 2 * c.layers; ++r) {
    const rt::Tensor &in = inputs[3 + r], &present = (*out)[1 + r];
    for (int64_t bh = 0; bh < b * kv; ++bh)
      for (int64_t p = 0; p < past; ++p)
        for (int64_t d = 0; d < hd; ++d)
          ASSERT_EQ(present.getDouble((bh * (past + 1) + p) * hd + d),
                    in.getDouble((bh * past + p) * hd + d));
  }

  // Layer 0's new key and value, by hand: the embedded row is a constant
  // vector e, so the norm gives e / sqrt(e^2 + eps) * w everywhere, each
  // projection column sums hidden of those times its weight, and RoPE rotates
  // the key's halves.
  double e = splatOf(func, "model.embed_tokens.weight");
  double normed = e / std::sqrt(e * e + c.rmsEps) *
                  splatOf(func, "model.layers.0.input_layernorm.weight");
  double key = c.hidden * normed *
               splatOf(func, "model.layers.0.self_attn.k_proj.weight");
  double value = c.hidden * normed *
                 splatOf(func, "model.layers.0.self_attn.v_proj.weight");
  const rt::Tensor &presentKey = (*out)[1], &presentValue = (*out)[2];
  for (int64_t bh = 0; bh < b * kv; ++bh)
    for (int64_t d = 0; d < hd; ++d) {
      double rotated = d < hd / 2 ? -key : key;
      double expected = key * cos[d] + rotated * sin[d];
      int64_t at = (bh * (past + 1) + past) * hd + d;
      EXPECT_NEAR(presentKey.getDouble(at), expected, 1e-5 * std::abs(key));
      EXPECT_NEAR(presentValue.getDouble(at), value, 1e-5 * std::abs(value));
    }

  // A splat lm_head makes every logit of a row equal.
  const rt::Tensor &logits = (*out)[0];
  for (int64_t row = 0; row < b; ++row) {
    double first = logits.getDouble(row * c.vocab);
    for (int64_t j = 1; j < c.vocab; ++j)
      ASSERT_NEAR(logits.getDouble(row * c.vocab + j), first,
                  1e-5 * std::abs(first));
  }
}

/// The layers alone (bodyOnly) over `past` cached tokens, fed one prefill
/// chunk of `rows.size()` tokens, give the same hidden states and caches
/// as that many decode steps one after another: the chunk's causal mask
/// and rotary tables make each of its tokens see what its own decode step
/// sees.
void expectPrefillMatchesDecodeSteps(DecodeStepTest &t, const LlmConfig &c,
                                     int64_t past,
                                     const std::vector<std::vector<float>> &rows,
                                     const std::function<mlir::func::FuncOp(
                                         const DecodeStepOptions &)> &build) {
  const int64_t kv = c.kvHeads, hd = c.headDim, n = int64_t(rows.size());
  std::vector<rt::Tensor> caches;
  for (int64_t i = 0; i < 2 * c.layers; ++i) {
    std::vector<float> cache(kv * past * hd);
    for (size_t j = 0; j < cache.size(); ++j)
      cache[j] = 0.001f * float((j * 37 + i * 11) % 101) - 0.05f;
    caches.push_back(
        rt::Tensor::fromVector(rt::DType::F32, {1, kv, past, hd}, cache));
  }
  auto run = [&](int64_t first, int64_t count,
                 const std::vector<rt::Tensor> &cache) {
    DecodeStepOptions o;
    o.bodyOnly = true;
    o.tokens = count;
    o.pastLength = first;
    mlir::func::FuncOp func = build(o);
    EXPECT_TRUE(func);
    if (!func)
      return std::vector<rt::Tensor>{};
    std::vector<float> hidden;
    for (int64_t r = first - past; r < first - past + count; ++r)
      hidden.insert(hidden.end(), rows[r].begin(), rows[r].end());
    std::vector<rt::Tensor> inputs{
        rt::Tensor::fromVector(rt::DType::F32, {1, count, c.hidden}, hidden)};
    std::vector<float> cos, sin;
    ropeTables(c, first, count, cos, sin);
    inputs.push_back(
        rt::Tensor::fromVector(rt::DType::F32, {1, 1, count, hd}, cos));
    inputs.push_back(
        rt::Tensor::fromVector(rt::DType::F32, {1, 1, count, hd}, sin));
    if (count > 1)
      inputs.push_back(rt::Tensor::fromVector(
          rt::DType::F32, {1, 1, count, first + count},
          causalMask(first, count)));
    inputs.insert(inputs.end(), cache.begin(), cache.end());
    auto out = evaluate(func, inputs);
    EXPECT_TRUE(out.has_value());
    return out ? *out : std::vector<rt::Tensor>{};
  };
  std::vector<rt::Tensor> chunk = run(past, n, caches);
  ASSERT_EQ(chunk.size(), 1u + 2 * c.layers);
  std::vector<rt::Tensor> cache = caches;
  for (int64_t step = 0; step < n; ++step) {
    std::vector<rt::Tensor> one = run(past + step, 1, cache);
    ASSERT_EQ(one.size(), 1u + 2 * c.layers);
    for (int64_t j = 0; j < c.hidden; ++j)
      ASSERT_NEAR(one[0].getDouble(j), chunk[0].getDouble(step * c.hidden + j),
                  1e-5)
          << "token " << step << ", element " << j;
    cache.assign(one.begin() + 1, one.end());
  }
  for (int64_t r = 0; r < 2 * c.layers; ++r) {
    ASSERT_EQ(cache[r].shape(), chunk[1 + r].shape());
    for (int64_t j = 0; j < cache[r].numElements(); ++j)
      ASSERT_NEAR(cache[r].getDouble(j), chunk[1 + r].getDouble(j), 1e-5)
          << "cache " << r << ", element " << j;
  }
}

/// Hidden rows that differ from token to token.
std::vector<std::vector<float>> varyingRows(int64_t n, int64_t hidden) {
  std::vector<std::vector<float>> rows(n, std::vector<float>(hidden));
  for (int64_t t = 0; t < n; ++t)
    for (int64_t j = 0; j < hidden; ++j)
      rows[t][j] = 0.01f * float((j * 13 + t * 7) % 11) - 0.05f;
  return rows;
}

TEST_F(DecodeStepTest, PrefillChunkMatchesDecodeSteps) {
  LlmConfig c = load("tiny-llama.json");
  expectPrefillMatchesDecodeSteps(
      *this, c, 2, varyingRows(4, c.hidden),
      [&](const DecodeStepOptions &o) { return build(c, o); });
}

TEST_F(DecodeStepTest, MixtralPrefillChunkMatchesDecodeSteps) {
  LlmConfig c = load("tiny-mixtral.json");
  expectPrefillMatchesDecodeSteps(
      *this, c, 3, varyingRows(3, c.hidden),
      [&](const DecodeStepOptions &o) { return build(c, o); });
}

// A prefill chunk's shapes: T tokens in, every token's logits out, the
// causal mask an input after the rotary tables, the caches past + T long.
TEST_F(DecodeStepTest, PrefillChunkShapes) {
  LlmConfig c = load("tiny-llama.json");
  DecodeStepOptions o;
  o.batch = 2;
  o.tokens = 5;
  o.pastLength = 7;
  auto func = build(c, o);
  ASSERT_TRUE(func);
  auto types = func.getArgumentTypes();
  ASSERT_EQ(types.size(), 4u + 2 * c.layers);
  EXPECT_EQ(shapeOf(types[0]), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(shapeOf(types[1]), (std::vector<int64_t>{1, 1, 5, 16}));
  EXPECT_EQ(shapeOf(types[3]), (std::vector<int64_t>{1, 1, 5, 12}));
  EXPECT_EQ(func.getArgAttrOfType<mlir::StringAttr>(3, "graph.name").str(),
            "attention_mask");
  EXPECT_EQ(shapeOf(types[4]), (std::vector<int64_t>{2, 2, 7, 16}));
  EXPECT_EQ(shapeOf(func.getResultTypes()[0]),
            (std::vector<int64_t>{2, 5, c.vocab}));
  EXPECT_EQ(shapeOf(func.getResultTypes()[1]),
            (std::vector<int64_t>{2, 2, 12, 16}));
  // The default past leaves room for the chunk.
  o.pastLength = 0;
  func = build(c, o);
  ASSERT_TRUE(func);
  EXPECT_EQ(shapeOf(func.getArgumentTypes()[4]),
            (std::vector<int64_t>{2, 2, 128 - 5, 16}));
}

TEST_F(DecodeStepTest, PrefillChunkBadTokens) {
  LlmConfig c = load("tiny-llama.json");
  std::string error;
  DecodeStepOptions o;
  o.tokens = 0;
  EXPECT_FALSE(buildDecodeStep(ctx, c, o, error));
  EXPECT_NE(error.find("tokens must be in [1, max_position_embeddings - 1 = "
                       "127], got 0"),
            std::string::npos)
      << error;
  o.tokens = 100;
  o.pastLength = 29;
  EXPECT_FALSE(buildDecodeStep(ctx, c, o, error));
  EXPECT_NE(error.find("past length must be in [1, max_position_embeddings - "
                       "tokens = 28], got 29"),
            std::string::npos)
      << error;
}

TEST(CausalMask, ByHand) {
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(causalMask(1, 2), (std::vector<float>{0, 0, -inf, 0, 0, 0}));
  EXPECT_TRUE(causalMask(-1, 2).empty());
  EXPECT_TRUE(causalMask(3, 0).empty());
}

TEST(RopeTables, MatchHuggingFace) {
  LlmConfig c;
  c.headDim = 8;
  c.ropeTheta = 10000;
  std::vector<float> cos, sin;
  ropeTables(c, 5, cos, sin);
  ASSERT_EQ(cos.size(), 8u);
  // inv_freq = 1 / 10000^(2i/8), i = 0..3, repeated for both halves.
  for (int i = 0; i < 4; ++i) {
    double angle = 5.0 / std::pow(10000.0, 2.0 * i / 8.0);
    EXPECT_FLOAT_EQ(cos[i], std::cos(angle));
    EXPECT_FLOAT_EQ(cos[i + 4], std::cos(angle));
    EXPECT_FLOAT_EQ(sin[i], std::sin(angle));
    EXPECT_FLOAT_EQ(sin[i + 4], std::sin(angle));
  }
}

} // namespace
