//===- PlannerInternal.h - What the planner's files share -------*- C++ -*-===//
//
// Private to lib/Planner: what its files hand each other. Formats.cpp
// holds the precisions, weight mixes and matrix formats and a model's
// cost; Queueing.cpp the queues of the server scenario; Pricing.cpp the
// pricing (System, price() and the rates that follow from a plan's step),
// whose every price comes from the Target library's SystemCostModel; Search.cpp
// plan(), its candidates, ranking and Pareto front; CompiledLayers.cpp the
// re-pricing of spatial plans by compiled layers and prefill chunks;
// Disaggregated.cpp planDisaggregated(); Report.cpp the table, the Pareto pages
// and the JSON.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_PLANNER_PLANNERINTERNAL_H
#define LOOM_LIB_PLANNER_PLANNERINTERNAL_H

#include "loom/Planner/Planner.h"
#include "loom/Target/CostModel.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace loom::plan {

//===----------------------------------------------------------------------===//
// Formats.cpp
//===----------------------------------------------------------------------===//

/// Why `precision` is not one: the formats that are.
std::string unknownPrecision(const std::string &precision);

//===----------------------------------------------------------------------===//
// Queueing.cpp
//===----------------------------------------------------------------------===//

/// The highest x in [0, hi] at which `meets` (true at 0, monotone) holds,
/// by bisection to within hi / 2^60.
template <typename Pred> double highestMeeting(double hi, Pred meets) {
  double lo = 0;
  for (int i = 0; i < 60 && hi > 0; ++i) {
    double mid = (lo + hi) / 2;
    (meets(mid) ? lo : hi) = mid;
  }
  return lo;
}

//===----------------------------------------------------------------------===//
// Pricing.cpp
//===----------------------------------------------------------------------===//

/// Sets a plan's data-parallel replicas and what follows from them: its
/// chips, nodes, racks and sequences in flight.
void setReplicas(Plan &p, int64_t dp, const TargetModel &target);

/// What the planner knows of a system for one request: a chip's memory
/// (SRAM on spatial chips, else HBM), what of it the plan may fill and the
/// power, beside the cost model's prices of the system (SystemCostModel:
/// its rates with the target's efficiency factors, the matrix unit's rates
/// for the request's formats, the collectives and stage hops over its
/// links), which every price the planner computes comes from.
struct System {
  const TargetModel &t;
  bool spatial;
  double capacity, usable, power;
  /// The weights' mean bytes (weightBytes; 0 for a spec weightMix
  /// rejects, which price() refuses).
  double bytesPerWeight = 0;
  /// The prices: the matrix unit runs each format of the weights in a
  /// format it has (fp8 weights on tsp-v1 as int8, fp4 on H100 as fp8),
  /// as the compiled layers do, and the attention's matmuls in the KV
  /// cache's.
  SystemCostModel cost;

  System(const TargetModel &target, const Request &r);

private:
  System(const TargetModel &target, const Request &r,
         const std::vector<WeightShare> &mix);
};

/// The largest prefill chunk a spatial plan's prompt is compiled in, and
/// the smallest tried when a larger one does not compile (its activations
/// do not fit the chips' SRAM).
constexpr int64_t kSpatialPrefillChunk = 512, kSmallestPrefillChunk = 32;

/// A prompt's pass alone through `pp` stages of `stageLayers` layers each
/// (a layer takes `layerSeconds` for the whole prompt), in `chunks` equal
/// chunks that follow one another through the stages, a hop of `hop` per
/// chunk between stages: the first chunk's trip through every stage and
/// hop, then one more chunk per period, the slower of a stage's chunk and
/// the time its hop holds the link (its transfer; the latencies of chunks
/// in flight overlap). One chunk: the stages one after another; one
/// stage: no hop. Every chunk also waits `layerSync` at each layer (at
/// its collectives, SystemCostModel::syncSeconds).
double promptPass(int64_t pp, double stageLayers, double layerSeconds,
                  double chunks, double hop, double hopTransfer,
                  double layerSync);

/// Tokens/s per user, per system and per watt of a plan whose tpot and
/// prefillShare are set. Every request's prefill takes its replica away
/// from decoding (prefill and decode share the chips), so a replica with C
/// sequences in flight makes C x output tokens in output x tpot + C x
/// prefillShare, and a sequence waits for the others' prefills between its
/// steps (tpotLoaded).
void setRates(Plan &p, const Request &r, double wattsPerChip);

//===----------------------------------------------------------------------===//
// Search.cpp
//===----------------------------------------------------------------------===//

/// Whether `p` meets the request's targets: its time to first token and
/// its 99th-percentile time per output token within theirs.
bool meets(const Plan &p, const Request &r);

/// A plan's degrees and batch: what identifies it while the search
/// re-ranks (moves) the plans.
using PlanId = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;
PlanId idOf(const Plan &p);

/// Orders plans: with a load to serve (concurrency or rate), the fewest
/// chips that serve it, then the lower time per output token; else the
/// most tokens/s per chip, then the fewer chips; prefill-only chips (a
/// disaggregated plan's prefill system) the most prompts/s per chip, as
/// planDisaggregated chooses among them, then the faster prompt. The
/// plans' degrees and batch (idOf) break the remaining ties, so a plain
/// std::sort of a list without repeated plans is deterministic.
bool better(const Plan &a, const Plan &b, const Request &r);

/// Data-parallel replicas the load asks for, unclamped, when each replica
/// holds `slots` sequences and serves `requestsPerReplica` requests/s. A
/// replica that serves no rate at all (its targets admit none in the
/// server scenario) counts as one: it misses its targets (meets) and may
/// still be the nearest plan.
double replicasNeeded(double slots, double requestsPerReplica,
                      const Request &r);

/// Tokens/s per chip: what plans are ranked by without a load, and the
/// Pareto front's other axis.
double perChip(const Plan &p);

/// Adds `p` to the Pareto front `front` of tokens/s per user against
/// tokens/s per chip, unless a plan there is at least as good on both (of
/// two equal plans the first by idOf stays, whatever the order they come
/// in: deterministic), and removes the plans it is at least as good as.
void addToFront(std::vector<Plan> &front, const Plan &p);

/// Plans meeting the targets first, plans whose layer did not compile
/// last.
void orderPlans(Result &result, const Request &r);

/// Why request `r` cannot be planned (its flags out of range or at odds),
/// or empty.
std::string validate(const Request &r);

//===----------------------------------------------------------------------===//
// CompiledLayers.cpp
//===----------------------------------------------------------------------===//

/// On spatial targets the best plans are re-priced with the compiler:
/// one layer compiled for the plan's tensor-parallel group, its latency
/// reused for every layer. Re-pricing can reorder the plans, so it repeats
/// until the best `top` are all compiled (or a round adds nothing); the
/// prompts are priced by compiled prefill chunks before and after. The
/// plans of `result` (and its Pareto front) are re-priced and re-ranked;
/// what did not compile is added to its compileFailures. `mix` is the
/// weights' one format (plan() refuses a mix here).
void repriceByCompiledLayers(Result &result, const ModelCost &m,
                             const TargetModel &system, const Request &r,
                             const std::string &configPath,
                             const LayerCompiler &compileLayer,
                             const std::vector<WeightShare> &mix);

//===----------------------------------------------------------------------===//
// Report.cpp
//===----------------------------------------------------------------------===//

/// The request's latency targets, in words.
std::string targetsOf(const Request &r);

/// A plan in one line: its chips and split, time to first token and time
/// per output token (and its 99th percentile where that differs).
std::string describe(const Plan &p);

} // namespace loom::plan

#endif // LOOM_LIB_PLANNER_PLANNERINTERNAL_H
