//===- DecodeStep.cpp - Llama config.json -> one decode step ----*- C++ -*-===//
//
// Reads a Hugging Face Llama `config.json` and builds the graph-dialect
// function of one decode step with a KV cache (see LLM.h). No weights exist:
// each is a splat constant, so shapes, FLOPs and bytes are exact while the
// values computed are meaningless.
//
//===----------------------------------------------------------------------===//

#include "loom/Frontend/LLM.h"

#include "loom/Dialect/Graph/IR/Graph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

using namespace mlir;

namespace loom {
namespace {

using json = nlohmann::json;

/// Largest value accepted for an integer field: keeps every product of two
/// fields, times four bytes, inside int64.
constexpr int64_t kMaxField = std::numeric_limits<int32_t>::max();
/// The most layers a decode step is built with.
constexpr int64_t kMaxLayers = 1024;

/// The splat value of each kind of weight. They are distinct so a printed
/// graph shows which tensor is which; none is 1.0, because `x * 1.0` folds
/// away and the norm weights would vanish (with their bytes) under
/// canonicalization.
namespace splat {
constexpr float kEmbedding = 0.01f;
constexpr float kInputNorm = 0.9f;
constexpr float kPostAttentionNorm = 0.8f;
constexpr float kFinalNorm = 0.7f;
constexpr float kQProj = 0.02f;
constexpr float kKProj = 0.021f;
constexpr float kVProj = 0.022f;
constexpr float kOProj = 0.023f;
constexpr float kGateProj = 0.015f;
constexpr float kUpProj = 0.016f;
constexpr float kDownProj = 0.017f;
constexpr float kRouter = 0.018f;
constexpr float kLmHead = 0.03f;
} // namespace splat

//===----------------------------------------------------------------------===//
// config.json
//===----------------------------------------------------------------------===//

/// Why a field was refused: "field: problem".
struct FieldError {
  std::string text;
};

std::string describe(const json &value) {
  std::string text = value.dump();
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return text;
}

/// Reads integer field `key`; nullopt with `problem` set when it is absent
/// (and `required`) or not a positive integer of sane size.
std::optional<int64_t> readCount(const json &doc, const char *key,
                                 bool required, std::string &problem) {
  auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) {
    if (required)
      problem = std::string(key) + ": missing (required)";
    return std::nullopt;
  }
  if (!it->is_number_integer()) {
    problem = std::string(key) + ": must be an integer, got " + describe(*it);
    return std::nullopt;
  }
  if (it->is_number_unsigned() && it->get<uint64_t>() > uint64_t(kMaxField)) {
    problem = std::string(key) + ": must be at most " +
              std::to_string(kMaxField) + ", got " + describe(*it);
    return std::nullopt;
  }
  int64_t v = it->get<int64_t>();
  if (v <= 0) {
    problem = std::string(key) + ": must be positive, got " + std::to_string(v);
    return std::nullopt;
  }
  if (v > kMaxField) {
    problem = std::string(key) + ": must be at most " +
              std::to_string(kMaxField) + ", got " + std::to_string(v);
    return std::nullopt;
  }
  return v;
}

/// Reads optional real field `key` into `out`; false with `problem` set when
/// present but not a positive finite number.
bool readReal(const json &doc, const char *key, double &out,
              std::string &problem) {
  auto it = doc.find(key);
  if (it == doc.end() || it->is_null())
    return true;
  if (!it->is_number()) {
    problem = std::string(key) + ": must be a number, got " + describe(*it);
    return false;
  }
  double v = it->get<double>();
  if (!std::isfinite(v) || v <= 0) {
    problem = std::string(key) + ": must be positive, got " + describe(*it);
    return false;
  }
  out = v;
  return true;
}

/// Refuses what the decode step does not model, rather than building a
/// different model than the config describes.
std::string checkUnsupported(const json &doc) {
  // The decode step is a Llama-family model (Llama, Mistral, Mixtral):
  // another architecture's config is refused rather than built as Llama.
  static const std::set<std::string> modelTypes = {"llama", "mistral",
                                                   "mixtral"};
  static const std::set<std::string> architectures = {
      "LlamaForCausalLM", "MistralForCausalLM", "MixtralForCausalLM"};
  if (auto it = doc.find("model_type"); it != doc.end() && !it->is_null()) {
    if (!it->is_string())
      return "model_type: must be a string, got " + describe(*it);
    if (!modelTypes.count(it->get<std::string>()))
      return "model_type: unsupported: '" + it->get<std::string>() +
             "' (the decode step is a llama, mistral or mixtral model)";
  }
  if (auto it = doc.find("architectures"); it != doc.end() && !it->is_null()) {
    if (!it->is_array())
      return "architectures: must be a list of names, got " + describe(*it);
    for (const json &name : *it)
      if (!name.is_string() || !architectures.count(name.get<std::string>()))
        return "architectures: unsupported: " + describe(name) +
               " (the decode step is LlamaForCausalLM, MistralForCausalLM or "
               "MixtralForCausalLM)";
  }
  // Flags are JSON booleans: 1, [] or {} is not read as false.
  std::string problem;
  auto isTrue = [&](const char *key) {
    auto it = doc.find(key);
    if (it == doc.end() || it->is_null())
      return false;
    if (!it->is_boolean()) {
      if (problem.empty())
        problem = std::string(key) + ": must be true or false, got " +
                  describe(*it);
      return false;
    }
    return it->get<bool>();
  };
  for (const char *key : {"tie_word_embeddings", "attention_bias", "mlp_bias"})
    isTrue(key);
  if (!problem.empty())
    return problem;
  // A window as long as the positions changes nothing; a shorter one masks
  // attention the decode step does not model.
  if (auto it = doc.find("sliding_window"); it != doc.end() && !it->is_null()) {
    auto positions = doc.find("max_position_embeddings");
    if (!it->is_number_integer() || it->get<int64_t>() <= 0)
      return "sliding_window: must be a positive integer or null, got " +
             describe(*it);
    if (positions == doc.end() || !positions->is_number_integer() ||
        it->get<int64_t>() < positions->get<int64_t>())
      return "sliding_window: unsupported: attention over a window of " +
             describe(*it) +
             " positions (the decode step attends to every position)";
  }
  if (isTrue("tie_word_embeddings"))
    return "tie_word_embeddings: unsupported: the decode step has its own "
           "lm_head weight";
  if (isTrue("attention_bias"))
    return "attention_bias: unsupported: projections have no bias";
  if (isTrue("mlp_bias"))
    return "mlp_bias: unsupported: projections have no bias";
  auto act = doc.find("hidden_act");
  if (act != doc.end() &&
      !(act->is_string() && act->get<std::string>() == "silu"))
    return "hidden_act: unsupported: only silu, got " + describe(*act);
  return "";
}

std::optional<LlmConfig> parseConfig(const json &doc, std::string &problem) {
  if (!doc.is_object()) {
    problem = std::string("(json): expected an object, got ") + doc.type_name();
    return std::nullopt;
  }
  if (problem = checkUnsupported(doc); !problem.empty())
    return std::nullopt;
  LlmConfig c;
  auto hidden = readCount(doc, "hidden_size", true, problem);
  if (!hidden)
    return std::nullopt;
  auto layers = readCount(doc, "num_hidden_layers", true, problem);
  if (!layers)
    return std::nullopt;
  auto heads = readCount(doc, "num_attention_heads", true, problem);
  if (!heads)
    return std::nullopt;
  auto kvHeads = readCount(doc, "num_key_value_heads", false, problem);
  if (!kvHeads && !problem.empty())
    return std::nullopt;
  auto intermediate = readCount(doc, "intermediate_size", true, problem);
  if (!intermediate)
    return std::nullopt;
  auto vocab = readCount(doc, "vocab_size", true, problem);
  if (!vocab)
    return std::nullopt;
  auto headDim = readCount(doc, "head_dim", false, problem);
  if (!headDim && !problem.empty())
    return std::nullopt;
  auto maxPositions = readCount(doc, "max_position_embeddings", true, problem);
  if (!maxPositions)
    return std::nullopt;
  auto experts = readCount(doc, "num_local_experts", false, problem);
  if (!experts && !problem.empty())
    return std::nullopt;
  auto expertsPerToken = readCount(doc, "num_experts_per_tok",
                                   experts && *experts > 1, problem);
  if (!expertsPerToken && !problem.empty())
    return std::nullopt;
  if (!readReal(doc, "rms_norm_eps", c.rmsEps, problem) ||
      !readReal(doc, "rope_theta", c.ropeTheta, problem))
    return std::nullopt;

  if (!headDim && *hidden % *heads != 0) {
    problem = "num_attention_heads: must divide hidden_size (" +
              std::to_string(*hidden) + "), got " + std::to_string(*heads);
    return std::nullopt;
  }
  c.hidden = *hidden;
  c.layers = *layers;
  c.heads = *heads;
  c.kvHeads = kvHeads ? *kvHeads : *heads;
  c.intermediate = *intermediate;
  c.vocab = *vocab;
  c.headDim = headDim ? *headDim : *hidden / *heads;
  c.maxPositions = *maxPositions;
  c.experts = experts ? *experts : 1;
  c.expertsPerToken = expertsPerToken ? *expertsPerToken : 1;
  if (problem = validateLlmConfig(c); !problem.empty())
    return std::nullopt;
  return c;
}

/// One line, whatever the file held.
std::string oneLine(std::string text) {
  for (char &ch : text)
    if (ch == '\n' || ch == '\r')
      ch = ' ';
    else if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
      ch = '?';
  return text;
}

//===----------------------------------------------------------------------===//
// The decode step
//===----------------------------------------------------------------------===//

/// Builds @main op by op. Shapes are known in advance, so each helper states
/// its result type and the verifier checks it.
class DecodeStepBuilder {
public:
  DecodeStepBuilder(MLIRContext &ctx, const LlmConfig &c, int64_t batch,
                    int64_t tokens, int64_t past, int64_t layers,
                    bool bodyOnly)
      : ctx(ctx), c(c), b(&ctx), batch(batch), tokens(tokens), past(past),
        layers(layers), group(c.heads / c.kvHeads), bodyOnly(bodyOnly) {}

  OwningOpRef<ModuleOp> build();

private:
  Location loc(const std::string &name) {
    return NameLoc::get(StringAttr::get(&ctx, name));
  }
  /// Activations are f32 (kDecodeStepActivationBytes, which the planner
  /// prices stage hops by).
  RankedTensorType f32(ArrayRef<int64_t> shape) {
    static_assert(kDecodeStepActivationBytes == sizeof(float));
    return RankedTensorType::get(shape, b.getF32Type());
  }
  static ArrayRef<int64_t> shapeOf(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }

  /// A weight: an f32 splat constant named after its HF parameter.
  Value weight(const std::string &name, ArrayRef<int64_t> shape, float value) {
    auto type = f32(shape);
    // Every weight tensor gets its own value (the kind's value nudged by a
    // count): equal constants would be merged by canonicalisation, and 80
    // layers would share one weight's SRAM.
    if (!shape.empty())
      value *= 1.0f + 1e-5f * static_cast<float>(++weights);
    return graph::ConstantOp::create(b, loc(name), type,
                                     DenseElementsAttr::get(type, value));
  }
  int64_t weights = 0;
  /// A rank-0 f32 constant (epsilon, attention scale).
  Value scalar(const std::string &name, float value) {
    return weight(name, {}, value);
  }
  /// An elementwise binary op whose result has the broadcast shape.
  template <typename OpT>
  Value binary(const std::string &name, Value x, Value y) {
    SmallVector<int64_t> shape;
    OpTrait::util::getBroadcastedShape(shapeOf(x), shapeOf(y), shape);
    return OpT::create(b, loc(name), f32(shape), x, y);
  }
  template <typename OpT> Value unary(const std::string &name, Value x) {
    return OpT::create(b, loc(name), x.getType(), x);
  }
  Value reshape(const std::string &name, Value x, ArrayRef<int64_t> shape) {
    return graph::ReshapeOp::create(b, loc(name), f32(shape), x);
  }
  Value matmul(const std::string &name, Value x, Value y) {
    SmallVector<int64_t> shape(shapeOf(x));
    shape.back() = shapeOf(y).back();
    return graph::MatMulOp::create(b, loc(name), f32(shape), x, y);
  }
  Value concat(const std::string &name, ValueRange inputs, int64_t axis) {
    SmallVector<int64_t> shape(shapeOf(inputs.front()));
    shape[axis] = 0;
    for (Value v : inputs)
      shape[axis] += shapeOf(v)[axis];
    return graph::ConcatOp::create(b, loc(name), f32(shape), inputs, axis);
  }
  /// x[..., begin:end] on the last axis.
  Value sliceLast(const std::string &name, Value x, int64_t begin,
                  int64_t end) {
    SmallVector<int64_t> shape(shapeOf(x));
    int64_t axis = shape.size() - 1;
    shape[axis] = end - begin;
    return graph::SliceOp::create(b, loc(name), f32(shape), x, {begin}, {end},
                                  {axis}, {1});
  }

  /// x @ W for an [in, out] weight `prefix.weight`; the matmul is `prefix`.
  Value linear(Value x, const std::string &prefix, int64_t in, int64_t out,
               float value) {
    Value w = weight(prefix + ".weight", {in, out}, value);
    return matmul(prefix, x, w);
  }
  Value rmsNorm(Value x, const std::string &prefix, float value);
  Value rotary(Value x, const std::string &prefix);
  Value attention(Value x, const std::string &prefix, Value pastKey,
                  Value pastValue, Value &presentKey, Value &presentValue);
  Value mlp(Value x, const std::string &prefix);
  Value moe(Value x, const std::string &prefix);

  MLIRContext &ctx;
  const LlmConfig &c;
  OpBuilder b;
  /// New tokens per sequence: 1 for a decode step, more for a prefill
  /// chunk.
  int64_t batch, tokens, past, layers, group;
  /// Layers only: "hidden" in, "hidden_out" out (see DecodeStepOptions).
  bool bodyOnly;
  Value ropeCos, ropeSin;
  /// The additive causal mask of a prefill chunk (null for one token).
  Value mask;
};

/// x / sqrt(mean(x^2) + eps) * w over the last axis. The dialect has no rsqrt
/// (nor an RMS norm), so it is square, reduce_mean, add, sqrt, div, mul.
Value DecodeStepBuilder::rmsNorm(Value x, const std::string &prefix,
                                 float value) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t axis = shape.size() - 1;
  SmallVector<int64_t> reduced(shape);
  reduced[axis] = 1;
  Value squared = binary<graph::MulOp>(prefix + ".square", x, x);
  Value mean =
      graph::ReduceMeanOp::create(b, loc(prefix + ".mean"), f32(reduced),
                                  squared, ArrayRef<int64_t>{axis}, true);
  Value eps = scalar(prefix + ".eps", static_cast<float>(c.rmsEps));
  Value rms = unary<graph::SqrtOp>(
      prefix + ".rms", binary<graph::AddOp>(prefix + ".add_eps", mean, eps));
  Value normed = binary<graph::DivOp>(prefix + ".normalize", x, rms);
  Value w = weight(prefix + ".weight", {shape.back()}, value);
  return binary<graph::MulOp>(prefix, normed, w);
}

/// x * cos + rotate_half(x) * sin, rotate_half(x) = concat(-x2, x1) over the
/// halves of the last axis (Hugging Face's Llama rotary embedding).
Value DecodeStepBuilder::rotary(Value x, const std::string &prefix) {
  int64_t half = c.headDim / 2;
  Value lo = sliceLast(prefix + ".first_half", x, 0, half);
  Value hi = sliceLast(prefix + ".second_half", x, half, c.headDim);
  Value negHi = unary<graph::NegOp>(prefix + ".neg", hi);
  Value rotated =
      concat(prefix + ".rotate_half", {negHi, lo}, shapeOf(x).size() - 1);
  Value withCos = binary<graph::MulOp>(prefix + ".mul_cos", x, ropeCos);
  Value withSin = binary<graph::MulOp>(prefix + ".mul_sin", rotated, ropeSin);
  return binary<graph::AddOp>(prefix, withCos, withSin);
}

/// Grouped-query attention of the new tokens against the KV cache, without
/// repeating the KV heads: q is viewed as [b, kv, group x tokens, hd], so
/// each KV head serves its `group` query heads in one batched matmul. Query
/// head h uses KV head h / group, as Hugging Face's repeat_kv does. A
/// prefill chunk (tokens > 1) adds the causal mask to the scores, viewed
/// per query head as [b, heads, tokens, past + tokens].
Value DecodeStepBuilder::attention(Value x, const std::string &prefix,
                                   Value pastKey, Value pastValue,
                                   Value &presentKey, Value &presentValue) {
  int64_t hd = c.headDim, kv = c.kvHeads, t = tokens;
  Value q =
      linear(x, prefix + ".q_proj", c.hidden, c.heads * hd, splat::kQProj);
  Value k = linear(x, prefix + ".k_proj", c.hidden, kv * hd, splat::kKProj);
  Value v = linear(x, prefix + ".v_proj", c.hidden, kv * hd, splat::kVProj);
  if (t == 1) {
    // With one token, [b, 1, n*hd] -> [b, n, 1, hd] is a pure reshape (the
    // transpose HF does moves a size-1 axis), and q goes straight to its
    // grouped view [b, kv, group, hd].
    q = reshape(prefix + ".q_heads", q, {batch, kv, group, hd});
    k = reshape(prefix + ".k_heads", k, {batch, kv, 1, hd});
    v = reshape(prefix + ".v_heads", v, {batch, kv, 1, hd});
    q = rotary(q, prefix + ".rotary_q");
    k = rotary(k, prefix + ".rotary_k");
  } else {
    // [b, t, n*hd] -> [b, t, n, hd] -> [b, n, t, hd], as HF's view and
    // transpose; q's heads [kv, group] then merge with its tokens into
    // [b, kv, group x t, hd] (a pure reshape: head-major).
    auto heads = [&](Value y, const std::string &name, int64_t n) {
      y = reshape(prefix + "." + name + "_split", y, {batch, t, n, hd});
      return graph::TransposeOp::create(b, loc(prefix + "." + name + "_heads"),
                                        f32({batch, n, t, hd}), y,
                                        ArrayRef<int64_t>{0, 2, 1, 3})
          .getResult();
    };
    q = rotary(heads(q, "q", c.heads), prefix + ".rotary_q");
    q = reshape(prefix + ".q_groups", q, {batch, kv, group * t, hd});
    k = rotary(heads(k, "k", kv), prefix + ".rotary_k");
    v = heads(v, "v", kv);
  }
  presentKey = concat(prefix + ".present_key", {pastKey, k}, 2);
  presentValue = concat(prefix + ".present_value", {pastValue, v}, 2);

  int64_t total = past + t;
  Value keyT = graph::TransposeOp::create(
      b, loc(prefix + ".key_transpose"), f32({batch, kv, hd, total}),
      presentKey, ArrayRef<int64_t>{0, 1, 3, 2});
  Value scores = matmul(prefix + ".scores", q, keyT);
  Value scale = scalar(prefix + ".scale",
                       static_cast<float>(1.0 / std::sqrt(double(hd))));
  scores = binary<graph::MulOp>(prefix + ".scaled_scores", scores, scale);
  if (t > 1) {
    scores = reshape(prefix + ".scores_per_head", scores,
                     {batch, c.heads, t, total});
    scores = binary<graph::AddOp>(prefix + ".causal_mask", scores, mask);
  }
  Value probs = graph::SoftmaxOp::create(b, loc(prefix + ".softmax"),
                                         scores.getType(), scores, int64_t(3));
  if (t > 1)
    probs = reshape(prefix + ".probs_groups", probs,
                    {batch, kv, group * t, total});
  Value context = matmul(prefix + ".context", probs, presentValue);
  if (t == 1) {
    // [b, kv, group, hd] is already head-major in query-head order.
    context =
        reshape(prefix + ".merge_heads", context, {batch, 1, c.heads * hd});
  } else {
    context = reshape(prefix + ".context_heads", context,
                      {batch, c.heads, t, hd});
    context = graph::TransposeOp::create(
        b, loc(prefix + ".context_tokens"), f32({batch, t, c.heads, hd}),
        context, ArrayRef<int64_t>{0, 2, 1, 3});
    context =
        reshape(prefix + ".merge_heads", context, {batch, t, c.heads * hd});
  }
  return linear(context, prefix + ".o_proj", c.heads * hd, c.hidden,
                splat::kOProj);
}

/// down_proj(silu(gate_proj(x)) * up_proj(x)), silu(g) = g * sigmoid(g).
Value DecodeStepBuilder::mlp(Value x, const std::string &prefix) {
  Value gate = linear(x, prefix + ".gate_proj", c.hidden, c.intermediate,
                      splat::kGateProj);
  Value up =
      linear(x, prefix + ".up_proj", c.hidden, c.intermediate, splat::kUpProj);
  Value sig = unary<graph::SigmoidOp>(prefix + ".act_fn.sigmoid", gate);
  Value act = binary<graph::MulOp>(prefix + ".act_fn", gate, sig);
  Value h = binary<graph::MulOp>(prefix + ".gate_mul_up", act, up);
  return linear(h, prefix + ".down_proj", c.intermediate, c.hidden,
                splat::kDownProj);
}

/// Mixtral's sparse mixture-of-experts block, as a static schedule runs it.
/// The router picks each token's top k experts and weighs them by the
/// softmax of their logits (Hugging Face renormalises the softmax over the
/// chosen k, which is the same). A schedule fixed before the routing is
/// known must reserve every expert for every token (the worst case), so the
/// block computes all of them and weighs each by its gate: the softmax of
/// the logits with those outside the top k set to -inf, so an unchosen
/// expert's gate is exactly 0 and the sum is the sparse block's.
///
/// The experts are one weight each for w1 (gate) and w3 (up), [hidden,
/// intermediate x experts], and w2 (down), [intermediate x experts, hidden],
/// their columns (rows of w2) interleaved: column i x experts + e is column i
/// of expert e. A tensor-parallel split of the columns then gives each chip
/// the same slice of every expert's intermediate dimension (never cutting
/// the expert dim the gates multiply), and the down projection's partial
/// sums add the experts up in the all-reduce the residual needs anyway.
Value DecodeStepBuilder::moe(Value x, const std::string &prefix) {
  const int64_t e = c.experts, k = c.expertsPerToken, n = c.intermediate;
  Value logits = linear(x, prefix + ".gate", c.hidden, e, splat::kRouter);
  auto topk = graph::TopKOp::create(
      b, loc(prefix + ".top_k"),
      TypeRange{f32({batch, tokens, k}),
                RankedTensorType::get({batch, tokens, k}, b.getI64Type())},
      logits, int64_t(k), int64_t(2), true, true);
  Value kth = sliceLast(prefix + ".kth_logit", topk.getValues(), k - 1, k);
  Value chosen = graph::GreaterEqualOp::create(
      b, loc(prefix + ".chosen"),
      RankedTensorType::get({batch, tokens, e}, b.getI1Type()), logits, kth);
  Value minusInf = scalar(prefix + ".minus_inf",
                          -std::numeric_limits<float>::infinity());
  Value masked = graph::SelectOp::create(b, loc(prefix + ".masked_logits"),
                                         f32({batch, tokens, e}), chosen, logits,
                                         minusInf);
  Value gates = graph::SoftmaxOp::create(b, loc(prefix + ".gates"),
                                         masked.getType(), masked, int64_t(2));
  Value gate = linear(x, prefix + ".experts.w1", c.hidden, n * e,
                      splat::kGateProj);
  Value up = linear(x, prefix + ".experts.w3", c.hidden, n * e, splat::kUpProj);
  Value sig = unary<graph::SigmoidOp>(prefix + ".experts.act_fn.sigmoid", gate);
  Value act = binary<graph::MulOp>(prefix + ".experts.act_fn", gate, sig);
  Value h = binary<graph::MulOp>(prefix + ".experts.w1_mul_w3", act, up);
  h = reshape(prefix + ".experts.split", h, {batch, tokens, n, e});
  Value weights =
      reshape(prefix + ".gates_per_expert", gates, {batch, tokens, 1, e});
  h = binary<graph::MulOp>(prefix + ".experts.weighted", h, weights);
  h = reshape(prefix + ".experts.merge", h, {batch, tokens, n * e});
  return linear(h, prefix + ".experts.w2", n * e, c.hidden, splat::kDownProj);
}

OwningOpRef<ModuleOp> DecodeStepBuilder::build() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  int64_t hd = c.headDim, kv = c.kvHeads;

  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  auto addArg = [&](std::string name, Type type) {
    argNames.push_back(std::move(name));
    argTypes.push_back(type);
  };
  if (bodyOnly)
    addArg("hidden", f32({batch, tokens, c.hidden}));
  else
    addArg("input_ids", RankedTensorType::get({batch, tokens}, b.getI64Type()));
  addArg("rope_cos", f32({1, 1, tokens, hd}));
  addArg("rope_sin", f32({1, 1, tokens, hd}));
  if (tokens > 1)
    addArg("attention_mask", f32({1, 1, tokens, past + tokens}));
  // The first layer's past_key argument.
  const unsigned firstCache = tokens > 1 ? 4 : 3;
  for (int64_t i = 0; i < layers; ++i) {
    addArg("past_key_" + std::to_string(i), f32({batch, kv, past, hd}));
    addArg("past_value_" + std::to_string(i), f32({batch, kv, past, hd}));
  }

  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, loc("main"), "main",
                                   b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames))
    func.setArgAttr(i, "graph.name", b.getStringAttr(name));
  // A body's input stands for the previous layer's output, which every
  // chip of a tensor-parallel group holds whole.
  if (bodyOnly)
    func.setArgAttr(0, graph::kWholeAttr, b.getUnitAttr());
  b.setInsertionPointToEnd(entry);
  ropeCos = entry->getArgument(1);
  ropeSin = entry->getArgument(2);
  if (tokens > 1)
    mask = entry->getArgument(3);

  Value x = entry->getArgument(0);
  if (!bodyOnly) {
    // The embedding table is bf16 (a gathered table does not run on the
    // matrix unit, so the fp8 matrix policy does not narrow it); rows are
    // widened to f32 as they are looked up.
    auto bf16 = [&](ArrayRef<int64_t> shape) {
      return RankedTensorType::get(shape, b.getBF16Type());
    };
    auto embedType = bf16({c.vocab, c.hidden});
    Value embed = graph::ConstantOp::create(
        b, loc("model.embed_tokens.weight"), embedType,
        DenseElementsAttr::get(
            embedType, b.getFloatAttr(b.getBF16Type(), splat::kEmbedding)));
    Value rows = graph::GatherOp::create(b, loc("model.embed_tokens"),
                                         bf16({batch, tokens, c.hidden}), embed,
                                         entry->getArgument(0), int64_t(0));
    x = graph::CastOp::create(b, loc("model.embed_tokens.to_f32"),
                              f32({batch, tokens, c.hidden}), rows);
  }
  SmallVector<Value> presents;
  for (int64_t i = 0; i < layers; ++i) {
    std::string layer = "model.layers." + std::to_string(i);
    Value presentKey, presentValue;
    Value h = rmsNorm(x, layer + ".input_layernorm", splat::kInputNorm);
    h = attention(h, layer + ".self_attn",
                  entry->getArgument(firstCache + 2 * i),
                  entry->getArgument(firstCache + 1 + 2 * i), presentKey,
                  presentValue);
    x = binary<graph::AddOp>(layer + ".attn_residual", x, h);
    h = rmsNorm(x, layer + ".post_attention_layernorm",
                splat::kPostAttentionNorm);
    h = c.experts > 1 ? moe(h, layer + ".block_sparse_moe")
                      : mlp(h, layer + ".mlp");
    x = binary<graph::AddOp>(layer + ".mlp_residual", x, h);
    presents.push_back(presentKey);
    presents.push_back(presentValue);
  }
  Value first = x;
  if (!bodyOnly) {
    x = rmsNorm(x, "model.norm", splat::kFinalNorm);
    first = linear(x, "lm_head", c.hidden, c.vocab, splat::kLmHead);
  }

  SmallVector<Value> results{first};
  results.append(presents.begin(), presents.end());
  func::ReturnOp::create(b, loc("outputs"), results);
  func.setType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  func.setResultAttr(0, "graph.name",
                     b.getStringAttr(bodyOnly ? "hidden_out" : "logits"));
  for (int64_t i = 0; i < layers; ++i) {
    func.setResultAttr(1 + 2 * i, "graph.name",
                       b.getStringAttr("present_key_" + std::to_string(i)));
    func.setResultAttr(2 + 2 * i, "graph.name",
                       b.getStringAttr("present_value_" + std::to_string(i)));
  }
  return module;
}

/// a * b * ..., false when it overflows int64.
bool checkedProduct(std::initializer_list<int64_t> factors, int64_t &out) {
  out = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(out, f, &out))
      return false;
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

std::string validateLlmConfig(const LlmConfig &c) {
  auto positive = [](const char *key, int64_t v) -> std::string {
    if (v <= 0)
      return std::string(key) + ": must be positive, got " + std::to_string(v);
    if (v > kMaxField)
      return std::string(key) + ": must be at most " +
             std::to_string(kMaxField) + ", got " + std::to_string(v);
    return "";
  };
  for (auto [key, v] :
       {std::pair<const char *, int64_t>{"hidden_size", c.hidden},
        {"num_hidden_layers", c.layers},
        {"num_attention_heads", c.heads},
        {"num_key_value_heads", c.kvHeads},
        {"intermediate_size", c.intermediate},
        {"vocab_size", c.vocab},
        {"head_dim", c.headDim},
        {"max_position_embeddings", c.maxPositions},
        {"num_local_experts", c.experts},
        {"num_experts_per_tok", c.expertsPerToken}})
    if (std::string problem = positive(key, v); !problem.empty())
      return problem;
  // The graph of every layer is built, and its passes take memory and time
  // that grow faster than the layer count (20,000 layers of a 64-wide
  // model pass 24 GB): far beyond the deepest published models (126).
  if (c.layers > kMaxLayers)
    return "num_hidden_layers: must be at most " + std::to_string(kMaxLayers) +
           " (each layer's graph is built), got " + std::to_string(c.layers);
  if (c.expertsPerToken > c.experts)
    return "num_experts_per_tok: must be at most num_local_experts (" +
           std::to_string(c.experts) + "), got " +
           std::to_string(c.expertsPerToken);
  if (c.heads % c.kvHeads != 0)
    return "num_key_value_heads: must divide num_attention_heads (" +
           std::to_string(c.heads) + "), got " + std::to_string(c.kvHeads);
  if (c.headDim % 2 != 0)
    return "head_dim: must be even (rotary embeddings rotate its halves), "
           "got " +
           std::to_string(c.headDim);
  int64_t qWidth;
  if (!checkedProduct({c.heads, c.headDim, c.hidden, 4}, qWidth))
    return "head_dim: num_attention_heads * head_dim * hidden_size overflows";
  if (!(std::isfinite(c.rmsEps) && c.rmsEps > 0))
    return "rms_norm_eps: must be positive, got " + std::to_string(c.rmsEps);
  if (!(std::isfinite(c.ropeTheta) && c.ropeTheta > 0))
    return "rope_theta: must be positive, got " + std::to_string(c.ropeTheta);
  return "";
}

std::optional<LlmConfig> readLlmConfig(const std::string &path,
                                       std::string &error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = path + ": is a directory, not a config.json file";
    return std::nullopt;
  }
  std::ifstream stream(path, std::ios::binary);
  if (!stream) {
    error =
        path + ": cannot open: " +
        (std::filesystem::exists(path, ec) ? "permission denied or unreadable"
                                           : "no such file");
    return std::nullopt;
  }
  std::ostringstream text;
  text << stream.rdbuf();
  // Parsed without exceptions (this library is built without them): a parse
  // error gives a discarded value.
  // A key given twice would resolve to its last value without a word: the
  // first duplicate (in any object) is recorded while parsing.
  std::vector<std::set<std::string>> keys;
  std::string duplicate;
  auto noDuplicates = [&](int, json::parse_event_t event, json &parsed) {
    if (event == json::parse_event_t::object_start)
      keys.emplace_back();
    else if (event == json::parse_event_t::object_end && !keys.empty())
      keys.pop_back();
    else if (event == json::parse_event_t::key && !keys.empty() &&
             !keys.back().insert(parsed.get<std::string>()).second &&
             duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  json doc = json::parse(text.str(), noDuplicates, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    error = path + ": (json): invalid JSON";
    return std::nullopt;
  }
  if (!duplicate.empty()) {
    error = oneLine(path + ": " + duplicate + ": duplicate key");
    return std::nullopt;
  }
  std::string problem;
  auto config = parseConfig(doc, problem);
  if (!config) {
    error = oneLine(path + ": " + problem);
    return std::nullopt;
  }
  config->name = std::filesystem::path(path).stem().string();
  return config;
}

OwningOpRef<ModuleOp> buildDecodeStep(MLIRContext &ctx, const LlmConfig &c,
                                      const DecodeStepOptions &o,
                                      std::string &error) {
  std::string label = c.name.empty() ? "(config)" : c.name;
  if (std::string problem = validateLlmConfig(c); !problem.empty()) {
    error = oneLine(label + ": " + problem);
    return nullptr;
  }
  if (o.layers < 0 || o.layers > c.layers) {
    error = label + ": layers must be in [0, num_hidden_layers = " +
            std::to_string(c.layers) + "] (0: all), got " +
            std::to_string(o.layers);
    return nullptr;
  }
  int64_t layers = o.layers == 0 ? c.layers : o.layers;
  if (o.batch <= 0 || o.batch > kMaxField) {
    error = label + ": batch must be in [1, " + std::to_string(kMaxField) +
            "], got " + std::to_string(o.batch);
    return nullptr;
  }
  if (o.tokens <= 0 || o.tokens >= c.maxPositions) {
    error = label + ": tokens must be in [1, max_position_embeddings - 1 = " +
            std::to_string(c.maxPositions - 1) + "], got " +
            std::to_string(o.tokens);
    return nullptr;
  }
  int64_t past =
      o.pastLength == 0 ? c.maxPositions - o.tokens : o.pastLength;
  if (past <= 0 || past + o.tokens > c.maxPositions) {
    error = label + ": past length must be in [1, max_position_embeddings - " +
            "tokens = " + std::to_string(c.maxPositions - o.tokens) +
            "], got " + std::to_string(past);
    return nullptr;
  }
  // The largest tensors: the KV cache, the scores, the embedding table.
  int64_t bytes;
  if (!checkedProduct({o.batch, c.kvHeads, past + o.tokens, c.headDim, 4},
                      bytes) ||
      !checkedProduct({o.batch, c.heads, o.tokens, past + o.tokens, 4},
                      bytes) ||
      !checkedProduct({o.batch, o.tokens, c.vocab, 4}, bytes) ||
      !checkedProduct({o.batch, o.tokens, c.experts, c.intermediate, 4},
                      bytes) ||
      !checkedProduct({c.vocab, c.hidden, 4}, bytes) ||
      !checkedProduct({c.experts, c.intermediate, c.hidden, 4}, bytes)) {
    error = label + ": a tensor's byte size overflows 64 bits";
    return nullptr;
  }

  std::optional<rt::NumericFormat> kvFormat = rt::storageFormat(o.kvPrecision);
  if (!kvFormat) {
    error = label + ": KV-cache precision must be " +
            std::string(rt::kStorageFormats) + ", got '" + o.kvPrecision +
            "'" +
            (o.kvPrecision == "int8"
                 ? " (int8 needs a scale, which the stored cache does not "
                   "carry; use fp8)"
                 : "");
    return nullptr;
  }

  ctx.loadDialect<graph::GraphDialect, func::FuncDialect>();
  std::string lastDiagnostic;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error &&
        lastDiagnostic.empty()) {
      // An unknown location says nothing: the caller names the file.
      std::string where;
      if (!isa<UnknownLoc>(d.getLocation())) {
        llvm::raw_string_ostream os(where);
        os << d.getLocation() << ": ";
      }
      lastDiagnostic = where + d.str();
    }
    return success();
  });
  DecodeStepBuilder builder(ctx, c, o.batch, o.tokens, past, layers,
                            o.bodyOnly);
  OwningOpRef<ModuleOp> module = builder.build();
  if (*kvFormat != rt::NumericFormat::F32) {
    auto func = cast<func::FuncOp>(module->getBody()->front());
    auto storage = StringAttr::get(&ctx, o.kvPrecision);
    auto isCache = [](Attribute name, StringRef a, StringRef b) {
      auto s = dyn_cast_or_null<StringAttr>(name);
      return s && (s.getValue().starts_with(a) || s.getValue().starts_with(b));
    };
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (isCache(func.getArgAttr(i, "graph.name"), "past_key_",
                  "past_value_"))
        func.setArgAttr(i, graph::kStorageAttr, storage);
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (isCache(func.getResultAttr(i, "graph.name"), "present_key_",
                  "present_value_"))
        func.setResultAttr(i, graph::kStorageAttr, storage);
  }
  if (failed(mlir::verify(*module))) {
    error =
        oneLine(label + ": the decode step does not verify: " + lastDiagnostic);
    return nullptr;
  }
  return module;
}

void ropeTables(const LlmConfig &c, int64_t first, int64_t count,
                std::vector<float> &cos, std::vector<float> &sin) {
  cos.clear();
  sin.clear();
  std::vector<float> oneCos, oneSin;
  for (int64_t p = first; p < first + count; ++p) {
    ropeTables(c, p, oneCos, oneSin);
    cos.insert(cos.end(), oneCos.begin(), oneCos.end());
    sin.insert(sin.end(), oneSin.begin(), oneSin.end());
  }
}

std::vector<float> causalMask(int64_t past, int64_t tokens) {
  if (past < 0 || tokens <= 0)
    return {};
  const int64_t total = past + tokens;
  std::vector<float> mask(tokens * total, 0.0f);
  for (int64_t i = 0; i < tokens; ++i)
    for (int64_t j = past + i + 1; j < total; ++j)
      mask[i * total + j] = -std::numeric_limits<float>::infinity();
  return mask;
}

void ropeTables(const LlmConfig &c, int64_t position, std::vector<float> &cos,
                std::vector<float> &sin) {
  int64_t half = c.headDim / 2;
  cos.assign(c.headDim, 0.0f);
  sin.assign(c.headDim, 0.0f);
  for (int64_t i = 0; i < half; ++i) {
    double invFreq =
        1.0 / std::pow(c.ropeTheta, double(2 * i) / double(c.headDim));
    double angle = double(position) * invFreq;
    cos[i] = cos[i + half] = static_cast<float>(std::cos(angle));
    sin[i] = sin[i + half] = static_cast<float>(std::sin(angle));
  }
}

} // namespace loom
