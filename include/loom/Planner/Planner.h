//===- Planner.h - Capacity planning for LLM serving ------------*- C++ -*-===//
//
// `loom plan`: for a model (a Hugging Face config.json), a system (a target
// preset or file) and a request shape (input and output lengths,
// concurrency or request rate, precisions, latency targets), searches the
// tensor, pipeline, expert and data parallel degrees and the batch, and
// reports the plans that meet the targets: chips, nodes, racks, time to
// first token, time per output token, tokens/s per user, per system and per
// watt, memory per chip and what bounds each.
//
// One cost model prices every candidate (docs/planner.md states every
// formula and efficiency factor). On spatial targets (weights in SRAM) the
// best plans are then re-priced with the compiler itself: one layer of the
// decode step is compiled for the plan's tensor-parallel group, scheduled
// and its latency reused for every identical layer.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_PLANNER_PLANNER_H
#define LOOM_PLANNER_PLANNER_H

#include "loom/Frontend/LLM.h"
#include "loom/Target/TargetModel.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace loom::plan {

/// Bytes per element of a precision name (fp32 4, bf16/fp16 2, fp8/int8 1,
/// fp4 0.5); 0 for an unknown name.
double precisionBytes(const std::string &precision);

/// One format of a checkpoint's weights and the share of the weights
/// stored in it.
struct WeightShare {
  std::string format;
  double share = 1;
};

/// The formats of `--weights`: one ("fp8"), or a mixed-precision
/// checkpoint's shares of the weights in each ("fp8:0.8125,fp4:0.1875",
/// what ModelOpt's AutoQuantize writes: a format per layer, within a
/// bound on the weights' mean bits). The cost model splits every weight
/// matmul's bytes and FLOPs in these shares (which layers are in which
/// format is not known to it). Empty, with `error` saying why, for an
/// unknown format, a share outside (0, 1], a format named twice or shares
/// that do not sum to 1 (within 0.001; they are then scaled to 1); a
/// mix has no blanks or empty items.
std::vector<WeightShare> weightMix(const std::string &spec,
                                   std::string &error);

/// The mean bytes of a weight stored as `spec` (weightMix): its formats'
/// bytes in their shares; 0 for a spec weightMix rejects.
double weightBytes(const std::string &spec);
/// The same of a mix weightMix returned (0 for an empty one).
double weightBytes(const std::vector<WeightShare> &mix);

/// What one model costs, per layer and per token.
struct ModelCost {
  int64_t layers = 0, hidden = 0, heads = 0, kvHeads = 0, headDim = 0;
  int64_t vocab = 0, experts = 1, expertsPerToken = 1;
  /// Parameters of one layer's attention (q, k, v, o), one expert's MLP
  /// (gate, up, down), the embedding and the LM head.
  double attnParams = 0, expertParams = 0, embedParams = 0, headParams = 0;
  /// All parameters, and those one token uses.
  double totalParams() const;
  double activeParams() const;
  /// Matmul FLOPs of one token through one layer (without attention over
  /// the context), and the attention FLOPs per token per context position.
  double layerFlopsPerToken() const;
  double attnFlopsPerPosition() const;
  /// KV-cache elements of one token in one layer (keys and values).
  double kvElementsPerTokenLayer() const;
};

ModelCost modelCost(const LlmConfig &config);

/// The serving engine's default token budget per forward pass
/// (Request::maxNumTokens; TensorRT-LLM's default max_num_tokens).
inline constexpr int64_t kDefaultMaxNumTokens = 8192;

/// The chips a search may take when neither --max-chips nor the system
/// bounds them.
inline constexpr int64_t kDefaultMaxChips = 10000;

/// The size a system names (0 when it names none): its `system.chips`
/// where they are at least a rack of more than one chip (lpx-rack's 256,
/// gb200's NVL72 of 72), which is what one buys; a preset of a node that
/// scales out (h100's 8 GPUs, tsp-v1's GroqNode) or of one chip names none.
int64_t namedSize(const TargetModel &system);

/// The chips searched and why (for the request the plan prints first):
/// --max-chips as given, else the system's named size, else the default.
struct Request;
struct ChipRange {
  int64_t max = kDefaultMaxChips;
  std::string why;
};
ChipRange chipRange(const TargetModel &system, const Request &request);

/// The request and the search's bounds.
struct Request {
  int64_t inputLen = 1024, outputLen = 256;
  /// Sequences decoded at once across the system (0: as many as pay off).
  int64_t concurrency = 0;
  /// Requests per second to serve (0: none); sets the throughput needed.
  double requestRate = 0;
  /// The weights' format, or a mix of formats (weightMix); the KV
  /// cache's and the activations' formats.
  std::string weights = "fp8", kv = "fp8", activations = "bf16";
  /// Targets in seconds (0: none).
  double ttft = 0, tpot = 0;
  /// The most chips a plan may take (decode chips, in a disaggregated
  /// plan). 0: the system's own size where it names one (namedSize: an
  /// LPX rack's 256 chips), else kDefaultMaxChips.
  int64_t maxChips = 0;
  int64_t top = 5;
  /// Re-price the best plans on spatial targets by compiling one layer.
  bool compile = true;
  /// Worker threads for the search (0: the machine's cores).
  int threads = 0;
  /// Tensor- and pipeline-parallel degrees and the batch to force (0:
  /// searched).
  int64_t tp = 0, pp = 0, batch = 0;
  /// Tokens one forward pass of a micro-batch may carry, its sequences'
  /// decode tokens and the prompt tokens prefilled with them (the serving
  /// engine's budget: TensorRT-LLM's max_num_tokens, vLLM's
  /// max_num_batched_tokens). It bounds the batch (maxSustainedBatch),
  /// spreads a long prompt over several steps (Plan::prefillSteps) and is
  /// the chunk in which prompts are prefilled under load.
  int64_t maxNumTokens = kDefaultMaxNumTokens;
  /// Keep the Pareto front of tokens/s per user against tokens/s per chip
  /// (Result::front; `loom plan --pareto`).
  bool pareto = false;
  /// How requests arrive. "offline": every replica kept full (its batch
  /// slots always occupied), the time to first token a request's own
  /// prefill. "server": a Poisson process (MLPerf's Server scenario); a
  /// plan serves the highest rate at which the 99th percentile of the time
  /// to first token, the waits for a free slot and for prefill included,
  /// meets `ttft` (which it then needs).
  std::string scenario = "offline";
  /// How the (decode) system was named, a preset or a target file's path,
  /// for compiling its layers (empty: the target's name, a preset's); the
  /// same for a disaggregated plan's prefill system.
  std::string systemSource, prefillSystemSource;
  /// The chips only decode: prompts are prefilled on another system
  /// (planDisaggregated's decode search), so no prefill share is charged
  /// to their steps, rates or replicas.
  bool decodeOnly = false;
  /// The chips only prefill (planDisaggregated's prefill search): a step
  /// carries no decode tokens, so the token budget only chunks prompts
  /// and bounds a pass's batch, and the first token is the pass's own.
  bool prefillOnly = false;
};

/// The most sequences a micro-batch keeps in flight within the token
/// budget: each step carries its B decode tokens and, on average, the B x
/// input / output prompt tokens of the sequences that replace those
/// finishing, so B x (1 + input / output) <= maxNumTokens (B <=
/// maxNumTokens on decode-only or prefill-only chips). 0 when not even one
/// fits.
int64_t maxSustainedBatch(const Request &r);

/// The rows each expert a GPU runs multiplies when `rows` tokens are
/// routed to `perToken` of `experts` each: the experts they touch, E (1 -
/// (1 - k/E)^rows), share the rows x k routed rows. `rows` with one
/// expert.
double rowsPerExpert(double rows, int64_t experts, int64_t perToken);

/// Erlang's C formula: the probability that an arrival waits, for `c`
/// servers offered `a` erlangs of Poisson traffic (M/M/c, a < c); past
/// 4,096 servers, its Halfin-Whitt limit (within 5% where C > 1%).
double erlangC(double c, double a);
/// The wait for a free slot in an M/M/c queue of `c` slots, each held
/// `hold` seconds on average, at `rate` arrivals/s, that arrivals exceed
/// with probability `tail` (infinity at or past saturation).
double slotWait(double c, double hold, double rate, double tail);
/// The wait behind other prompts' prefill, an M/D/1 queue of prompts
/// served `service` seconds each at `rate` arrivals/s, that arrivals exceed
/// with probability `tail` (the Cramer-Lundberg tail).
double prefillWait(double service, double rate, double tail);
/// The time per output token that a request of `output` tokens exceeds
/// with probability `tail`, when its decode steps take `step` each and
/// every request arriving while it decodes (Poisson, `rate`/s) holds the
/// replica for `prefill` first: step + N x prefill / output, with N the
/// arrivals in an M/D/1 busy period started by the request's own decode
/// work (infinity at rate x prefill >= 1).
double tpotPercentile(double step, double prefill, double rate,
                      double output, double tail);

struct Plan {
  std::string system;
  int64_t tp = 1, pp = 1, ep = 1, dp = 1, batch = 1;
  /// Micro-batches of `batch` sequences in flight through the pipeline
  /// stages (1: one at a time, the least memory; pp: the pipe full).
  int64_t micro = 1;
  /// Whether each layer gathers k and v (or q, k and v) inside its tp
  /// group: tp past the KV heads, without the k and v projections
  /// computed per KV head (graph-partition's choice where they fit).
  bool kvGathered = false;
  int64_t chips = 0, nodes = 0, racks = 0;
  /// Sequences in flight across the system (dp x micro x batch).
  int64_t concurrency = 0;
  /// Time to first token, and one decode step (`tpot`: the time per
  /// output token of a sequence with nothing else in flight, the figure
  /// `loom compile` gives for the step). `ttft` is a request's own prefill
  /// and the steps it rides on, the last of which yields its first token
  /// (`ttftAlone`, prefillSteps), in the offline scenario, the 99th
  /// percentile under the plan's load in the server one.
  double ttft = 0, tpot = 0, ttftAlone = 0;
  /// Decode steps a prompt's prefill rides on: ceil(input / (budget -
  /// batch)), the prompt tokens a step has room for beside its batch's
  /// decode tokens (1 when the prompt fits one step). The time to first
  /// token alone is the prompt's prefill and that many steps. 0 for a
  /// disaggregated plan, whose prompt's own pass (elsewhere) yields it.
  int64_t prefillSteps = 1;
  /// The prompt's own pass alone, which a disaggregated plan takes from
  /// its prefill system's plan whole.
  struct PromptPass {
    /// Through every stage, and the hops between them (ttftAlone without
    /// the decode steps it rides on). On spatial chips its `chunks` chunks
    /// follow one another through the stages (the first chunk's trip,
    /// then one chunk per period: the slower of a stage's chunk and
    /// `hopTransfer`, the time a chunk's `hop` between stages holds the
    /// link); on GPUs the prompt passes the stages as one (chunks 1, hop
    /// the whole prompt's).
    double alone = 0;
    double chunks = 1, hop = 0, hopTransfer = 0;
    /// What each chunk waits at every layer (at its collectives,
    /// system.links.sync_seconds) on top of `layer`, in seconds: 0 where
    /// `layer` comes from compiled chunks, whose tile programs wait it.
    double layerSync = 0;
    /// The seconds one layer takes for the whole prompt alone, and the
    /// tokens a chunk of it had where that comes from compiled prefill
    /// chunks (0: the cost model's estimate).
    double layer = 0;
    int64_t chunk = 0;
    /// Where `layer` comes from: "cost model"; "compiled chunks" (of
    /// `chunk` tokens, spatial presets); "cost model x compiled" (the
    /// estimate scaled by the compiled chunks' ratio to theirs).
    std::string pricedBy = "cost model";
  } prompt;
  /// Requests per second one replica serves (the server scenario's rate,
  /// or the offline one's saturation rate).
  double requestRate = 0;
  /// Replica time each request's prefill takes under load: prompts batched
  /// into chunks of Request::maxNumTokens tokens (a longer prompt is one
  /// chunk), the chunks overlapped across pipeline stages (so one stage's
  /// time per chunk).
  double prefillShare = 0;
  /// Time per output token under the plan's load: one decode step plus the
  /// prefills of the other sequences in flight, interleaved between steps
  /// (continuous batching): tpot + (C - 1) x prefillShare / output, with C
  /// the sequences in flight per replica (the mean over requests).
  double tpotLoaded = 0;
  /// The 99th percentile over requests of a request's time per output
  /// token (MLPerf's TPOT bound; the targets apply to it): in the server
  /// scenario the number of prefills interleaved in a request's decode
  /// varies (tpotPercentile); offline it is tpotLoaded.
  double tpotP99 = 0;
  double tokensPerSecondPerUser = 0, tokensPerSecond = 0,
         tokensPerSecondPerWatt = 0;
  /// Bytes per chip (weights + KV cache) against the chip's capacity.
  double memoryPerChip = 0, capacityPerChip = 0, weightsPerChip = 0,
         kvPerChip = 0;
  std::string memory; // "SRAM" or "HBM"
  /// What bounds a decode step and the prefill: compute, memory bandwidth,
  /// link (collectives and stage hops).
  std::string decodeBound, prefillBound;
  bool meetsTargets = false;
  /// True if the decode step's layer time comes from a compiled schedule.
  bool compiled = false;
  /// The kernel precision its compiled layer ran at (layerPrecision); empty
  /// when not compiled.
  std::string layerPrecision;
  /// For a disaggregated plan: the prefill system, its chips, replicas
  /// (as many as the prompts' rate needs: the rate asked for, else what
  /// the decode chips take) and tensor-parallel
  /// degree, and the time to move one request's KV cache. Its prefillShare
  /// is then a prompt's time on a prefill replica.
  std::string prefillSystem;
  int64_t prefillChips = 0, prefillReplicas = 0, prefillTp = 0;
  double kvMove = 0;
  std::string note;
};

struct Result {
  std::vector<Plan> plans;
  /// What the search assumed, printed before the plans: the model's name,
  /// the system's, the chips searched (and why that many) and the degrees
  /// and batches tried.
  std::string model, system;
  ChipRange chips;
  int64_t tpMax = 1, ppMax = 1, epMax = 1, batchMax = 1;
  /// A mixture of experts on a spatial system: its experts are split by
  /// tensor parallelism, as its compiler lowers them, and no ep is
  /// searched (Search::chooseDegrees).
  bool expertsByTp = false;
  /// The Pareto front of tokens/s per user against tokens/s per chip over
  /// every candidate that meets the targets (Request::pareto), best per
  /// user first; its decode steps calibrated by the compiled layers as the
  /// plans are.
  std::vector<Plan> front;
  /// The plan ranked after the top one (before the list is cut to
  /// Request::top), to say why the top one won.
  std::optional<Plan> runnerUp;
  /// Candidates priced, and the best candidate overall when none meets
  /// the targets (the nearest feasible plan).
  int64_t evaluated = 0;
  std::optional<Plan> nearest;
  double seconds = 0;
  /// Layers that did not compile (one line each: the group, the batch and
  /// why); their plans are ranked last and priced by the cost model.
  std::vector<std::string> compileFailures;
  /// For a disaggregated search: each system alone for the same request
  /// (the decode system first), its best plan or why it has none.
  struct Alone {
    std::string system;
    std::optional<Plan> plan;
    std::string why;
  };
  std::vector<Alone> alone;
};

/// The format `target`'s matrix unit multiplies weights stored in the one
/// format `weights` (a format of a weightMix, not a mix) in: that format when the unit runs it, else one of the same width it
/// runs (fp8 or int8 for one byte, and for fp4; bf16 or fp16 for two; fp32
/// or tf32), else the weights' own (the vector unit). fp8 weights on
/// tsp-v1 (int8 and fp16) run as int8, fp4 on H100 as fp8. The cost model
/// prices compute at its peak.
rt::NumericFormat matrixFormat(const TargetModel &target,
                               const std::string &weights);

/// The layers' time the slowest of `pp` pipeline stages of `layers` layers
/// takes, which paces a full pipeline. GPU serving frameworks cut stages
/// at whole layers: ceil(layers / pp). A spatial system's stages are cut
/// by graph-partition, which balances them by time and may also cut a
/// layer between its attention and its MLP, where the hidden vector alone
/// crosses (tiny-llama-24 at pp 7: stages of 3.5 layers): the least, over
/// the splits of the 2 x layers halves into pp runs, of the longest run,
/// an MLP half taking `mlpShare` of a layer's time and an attention half
/// the rest. Equal halves (0.5) give ceil(2 x layers / pp) / 2 (80 over
/// 33: 2.5); an MLP of 82% of the layer gives 2.82 there, a run of three
/// MLPs and two attentions.
double stageLayers(int64_t layers, int64_t pp, bool spatial,
                   double mlpShare = 0.5);

/// The MLP's share of a layer's weights (every expert's, as a spatial
/// system computes them all): the share of its time where the layer is
/// compute bound, as a prompt's is.
double mlpWeightShare(const ModelCost &m);

/// The kernel precision a layer with weights stored in the one format
/// `weights` (not a mix) compiles at on `target`: as matrixFormat, among the formats the compiler has
/// (fp4 compiles at fp8 or int8): int8 weights on an fp8-only chip at fp8,
/// fp8 weights on tsp-v1 at int8. With none the unit runs, the weights'
/// own, or fp8 for fp4 (whose matmuls then run on the vector unit).
std::string layerPrecision(const TargetModel &target,
                           const std::string &weights);

/// The storage format a compiled layer holds a KV cache of precision `kv`
/// in (the compiler's --kv-precision): `kv` itself when the compiler stores
/// it (fp32, bf16, fp16, fp8), else the one of the same bytes: fp8 for
/// int8, whose scales the compiler does not model (the timing is the
/// same), and fp8 for fp4, which the compiler does not store (its layer
/// then holds twice the cache the estimate does).
std::string layerKvStorage(const std::string &kv);

/// One layer to compile: `tokens` new tokens for each of `batch`
/// sequences after `past` cached ones (tokens 1: a decode step; more: a
/// prefill chunk), on `tp` chips that are the first of a system of
/// `systemChips` (their links get that system's bandwidth shares), at
/// kernel precision `precision` with the KV cache stored at `kvStorage`
/// (layerKvStorage).
struct LayerSpec {
  int64_t tp = 1, batch = 1, tokens = 1, past = 1;
  std::string precision, kvStorage;
  int64_t systemChips = 0;
};

/// Compiles one layer of `config` on `system` as `layer` says; returns its
/// latency in seconds, or nullopt with `error`. Set by the driver (the
/// planner links no compiler).
using LayerCompiler = std::function<std::optional<double>(
    const std::string &configPath, const std::string &system,
    const LayerSpec &layer, std::string &error)>;

/// Plans `config` (read from `configPath`) on `system`. Errors (a bad
/// request, a model that fits nowhere, targets no plan meets) return
/// nullopt with one line in `error`, naming the nearest feasible plan where
/// there is one.
std::optional<Result> plan(const LlmConfig &config, const std::string &configPath,
                           const TargetModel &system, const Request &request,
                           const LayerCompiler &compileLayer, std::string &error);

/// Disaggregated serving: prefill on `prefillSystem`, decode on
/// `decodeSystem`, with the KV cache of every request moved between them
/// over the prefill system's scale-out network. The plans' ttft includes
/// the move, and the prefill replicas are as many as the prompts' rate
/// needs (the rate asked for, else what the decode chips take). In the
/// server scenario a prompt queues on its prefill replica (TTFT: that
/// wait's 99th percentile, the prefill and the move) and its KV cache then
/// waits for a decode slot, which delays its second token (spread into the
/// 99th-percentile TPOT and held to the TTFT bound); the decode rate is the
/// highest whose slot wait meets both, the prefill replicas the fewest that
/// keep the TTFT within its bound. `maxChips` bounds the decode chips.
std::optional<Result> planDisaggregated(const LlmConfig &config,
                                        const std::string &configPath,
                                        const TargetModel &prefillSystem,
                                        const TargetModel &decodeSystem,
                                        const Request &request,
                                        const LayerCompiler &compileLayer,
                                        std::string &error);

/// The table `loom plan` prints (the request and the search's bounds
/// first, then the plans, the metric they are ranked by as a column, and
/// why the top plan won), and its JSON.
std::string formatTable(const Result &result, const Request &request);
std::string formatJson(const Result &result, const Request &request);
/// What the plans are ranked by, in words.
std::string rankedBy(const Request &request);
/// The Pareto front (`loom plan --pareto`) as a table, and as an HTML page
/// with its picture (tokens/s per user against tokens/s per chip).
std::string formatParetoTable(const Result &result, const Request &request);
std::string formatParetoHtml(const Result &result, const Request &request);

/// The degrees of one candidate plan, and its batch (as Plan holds them).
struct Parallelism {
  /// Tensor parallelism: the chips each layer's weight matrices and
  /// attention heads are split over.
  int64_t tp = 1;
  /// Pipeline parallelism: the stages the layers are split into, one after
  /// another.
  int64_t pp = 1;
  /// Expert parallelism: the groups of tp chips a mixture of experts'
  /// experts are spread over, each group running the attention of its
  /// share of the batch (1 for a dense model).
  int64_t ep = 1;
  /// Data parallelism: the replicas of the tp x pp x ep chips, each
  /// serving its own sequences.
  int64_t dp = 1;
  /// Sequences in one micro-batch, decoded together a step.
  int64_t batch = 1;
  /// Micro-batches of `batch` sequences in flight through the pipeline
  /// stages (1: one at a time, the least memory; pp: the pipe full).
  int64_t micro = 1;
};

/// Pricing one candidate (exposed for the unit tests): nullopt if it does
/// not fit the chips' memory.
std::optional<Plan> price(const ModelCost &model, const TargetModel &system,
                          const Request &request, const Parallelism &degrees);

} // namespace loom::plan

#endif // LOOM_PLANNER_PLANNER_H
