//===- LLM.h - Llama-family config.json -> graph dialect --------*- C++ -*-===//
//
// Builds the graph-dialect function of one decode step of a Llama-family
// model from its Hugging Face `config.json` alone: no weights are read.
// Every weight is a splat constant, so a 70B model costs no memory; the
// numbers such a graph computes are meaningless, but its shapes, FLOPs and
// bytes are those of the real model, which is what compiling and timing it
// needs.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_FRONTEND_LLM_H
#define LOOM_FRONTEND_LLM_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom {

/// The shape of a Llama-family decoder, as read from a Hugging Face
/// `config.json`.
struct LlmConfig {
  /// The config file's stem ("llama3-70b" for `models/llama3-70b.json`).
  std::string name;
  int64_t hidden = 0;       ///< hidden_size
  int64_t layers = 0;       ///< num_hidden_layers
  int64_t heads = 0;        ///< num_attention_heads
  int64_t kvHeads = 0;      ///< num_key_value_heads (default: heads)
  int64_t intermediate = 0; ///< intermediate_size (per expert when MoE)
  int64_t vocab = 0;        ///< vocab_size
  int64_t headDim = 0;      ///< head_dim (default: hidden / heads)
  double rmsEps = 1e-6;     ///< rms_norm_eps (default: HF's 1e-6)
  double ropeTheta = 1e4;   ///< rope_theta (default: HF's 10000)
  int64_t maxPositions = 0; ///< max_position_embeddings
  /// num_local_experts: MLP experts per layer (Mixtral-style mixture of
  /// experts); 1 means a dense MLP.
  int64_t experts = 1;
  /// num_experts_per_tok: experts each token is routed to, in [1, experts];
  /// required in the config when experts > 1.
  int64_t expertsPerToken = 1;
};

/// Reads a Hugging Face `config.json`. Required keys: hidden_size,
/// num_hidden_layers, num_attention_heads, intermediate_size, vocab_size,
/// max_position_embeddings; optional: num_key_value_heads, head_dim (null
/// counts as absent), rms_norm_eps, rope_theta, num_local_experts (default 1:
/// dense) and num_experts_per_tok (required when num_local_experts > 1, in
/// [1, num_local_experts]). Features
/// nothing here models (tied embeddings, attention or MLP biases, an
/// activation other than silu) are refused rather than ignored. On failure
/// returns
/// nullopt and sets `error` to one line naming the file and the field:
/// `llama3-70b.json: num_key_value_heads: must divide num_attention_heads
/// (64), got 7`.
std::optional<LlmConfig> readLlmConfig(const std::string &path,
                                       std::string &error);

/// Checks a configuration (read or built by hand) the way readLlmConfig does;
/// returns an empty string when it is usable, else "field: problem".
std::string validateLlmConfig(const LlmConfig &config);

/// Bytes per element of the activations buildDecodeStep's graphs carry
/// between ops (f32, whatever the matrix precision); what crosses a
/// pipeline stage of a compiled decode step.
inline constexpr int64_t kDecodeStepActivationBytes = 4;

struct DecodeStepOptions {
  /// Sequences decoded together.
  int64_t batch = 1;
  /// New tokens per sequence: 1 for a decode step; more for a chunk of a
  /// prompt prefilled at once (chunked prefill), whose tokens attend to the
  /// cache and, causally, to each other. In [1, max_position_embeddings).
  int64_t tokens = 1;
  /// Tokens already in the KV cache, at least 1; 0 means
  /// max_position_embeddings - tokens (the last, most expensive step).
  int64_t pastLength = 0;
  /// Decoder layers built: 0 means the config's num_hidden_layers, else this
  /// many (in [1, num_hidden_layers]), named model.layers.0 onwards. All
  /// layers of a Llama decoder are identical in shape, so one compiled layer
  /// times them all.
  int64_t layers = 0;
  /// When true, only the decoder layers are built: no embedding, no final
  /// norm, no lm_head. The first input is "hidden" f32 [batch, tokens, hidden]
  /// instead of "input_ids", and the first result is "hidden_out" f32
  /// [batch, tokens, hidden] instead of "logits"; rope tables and the KV caches
  /// are as below.
  bool bodyOnly = false;
  /// The format the KV cache is stored in: "fp32" (as computed), "bf16",
  /// "fp16" or "fp8" (E4M3, unscaled; rt::storageFormat). A narrow one
  /// marks every past_* argument and present_* result with
  /// `graph.storage`: the compiler holds the cache at that format and
  /// rounds the new key and value to it as it appends them.
  std::string kvPrecision = "fp32";
};

/// Builds `module { func.func @main }` computing one decode step, or with
/// options.tokens = T > 1 one prefill chunk of T tokens:
///
/// - inputs (`graph.name`): "input_ids" i64 [batch, T]; "rope_cos",
///   "rope_sin" f32 [1, 1, T, headDim] (the rotary tables of the new
///   tokens' positions past .. past + T - 1, computed by the host, see
///   ropeTables); for T > 1 "attention_mask" f32 [1, 1, T, past + T] (the
///   additive causal mask, see causalMask); then for each built layer i
///   "past_key_i", "past_value_i" f32 [batch, kvHeads, past, headDim];
/// - results: "logits" f32 [batch, T, vocab] (every new token's, as
///   Hugging Face's forward gives them); then for each layer i
///   "present_key_i", "present_value_i" f32 [batch, kvHeads, past + T,
///   headDim] (with `graph.storage` when options.kvPrecision is narrow).
///
/// Each projection is its own `graph.matmul` with an [in, out] weight, so a
/// tensor-parallel partitioner can split it along its output columns. Weights
/// are f32 splat constants whose locations are the Hugging Face parameter
/// names ("model.layers.3.self_attn.q_proj.weight"); every other op's
/// location names the module it belongs to ("model.layers.3.self_attn.q_proj").
/// A mixture-of-experts config (experts > 1) gets Mixtral's block in place of
/// the MLP ("model.layers.3.block_sparse_moe"): a router ("gate", [hidden,
/// experts]), its top k, and every expert computed for every token and
/// weighed by its gate (0 outside the token's top k), as a schedule fixed
/// before the routing is known must reserve them; the experts' w1, w3 and w2
/// are each one weight, their intermediate columns interleaved (column
/// i x experts + e is expert e's column i).
/// The module verifies. On failure returns null and sets `error` to one line.
mlir::OwningOpRef<mlir::ModuleOp>
buildDecodeStep(mlir::MLIRContext &ctx, const LlmConfig &config,
                const DecodeStepOptions &options, std::string &error);

/// The rotary tables of `position` as Hugging Face's Llama computes them
/// (without rope_scaling): cos and sin of position * inv_freq, the headDim/2
/// frequencies repeated twice. Each vector has headDim elements, ready to be
/// the "rope_cos" and "rope_sin" inputs.
void ropeTables(const LlmConfig &config, int64_t position,
                std::vector<float> &cos, std::vector<float> &sin);
/// The tables of `count` positions from `first`, one after another: the
/// "rope_cos" and "rope_sin" inputs of a prefill chunk.
void ropeTables(const LlmConfig &config, int64_t first, int64_t count,
                std::vector<float> &cos, std::vector<float> &sin);
/// The "attention_mask" input of a prefill chunk of `tokens` new tokens
/// after `past` cached ones, row-major [tokens, past + tokens]: 0 where new
/// token i may attend (positions up to past + i), -inf after. Empty for a
/// negative past or no tokens.
std::vector<float> causalMask(int64_t past, int64_t tokens);

} // namespace loom

#endif // LOOM_FRONTEND_LLM_H
