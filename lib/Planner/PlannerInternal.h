//===- PlannerInternal.h - What the planner's files share -------*- C++ -*-===//
//
// Private to lib/Planner: what its files hand each other. Formats.cpp
// holds the precisions, weight mixes and matrix formats and a model's
// cost; Queueing.cpp the queues of the server scenario; Pricing.cpp the
// cost model (System, price() and the rates that follow from a plan's
// step); Search.cpp plan(), its candidates, ranking and Pareto front;
// CompiledLayers.cpp the re-pricing of spatial plans by compiled layers
// and prefill chunks; Disaggregated.cpp planDisaggregated(); Report.cpp
// the table, the Pareto pages and the JSON.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_PLANNER_PLANNERINTERNAL_H
#define LOOM_LIB_PLANNER_PLANNERINTERNAL_H

#include "loom/Planner/Planner.h"

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

/// What the cost model knows of a system for one request: a chip's memory
/// (SRAM on spatial chips, else HBM) and its bandwidth, the chip links,
/// the power, the rates the matrix unit multiplies the request's formats
/// at and the target's efficiency factors; and the times of the
/// collectives and stage hops over its links.
struct System {
  const TargetModel &t;
  bool spatial;
  double capacity, usable, memBw, linkBw, latency, power;
  /// system.links.sync_seconds: what a layer's chips wait at each of its
  /// collectives (syncSeconds()).
  double sync = 0;
  /// A format the matrix unit runs the weights in: its share of the
  /// weights (weightMix), the FLOP/s its matmuls reach as their rows grow
  /// (the format's peak times its efficiency) and its
  /// `efficiency.matrix_half_rows` (0: none).
  struct MatmulFormat {
    double share = 1, rate = 0, halfRows = 0;
  };
  std::vector<MatmulFormat> weightFormats;
  /// The weights' mean bytes (weightBytes; 0 for a spec weightMix
  /// rejects, which price() refuses).
  double bytesPerWeight = 0;
  /// The FLOP/s of attention's matmuls (q.k, p.v), which read the KV cache
  /// and run in its format (an fp8 cache beside fp4 weights: the fp8 rate).
  double attnRate = 0;
  /// The efficiency factors of docs/planner.md, the target's `efficiency`
  /// (TargetModel::efficiency): statically scheduled spatial chips run
  /// near their peaks (the compiled schedule then replaces the estimate);
  /// GPUs get the fractions of their peaks that published kernels reach,
  /// the matrix unit's depending on the format it runs.
  rt::EfficiencyDesc eff;

  System(const TargetModel &target, const Request &r);

  /// The synchronisation a layer of `tp` x `ep` chips waits beyond its
  /// collectives' transfers: system.links.sync_seconds at each collective
  /// in series, the two all-reduces of tensor parallelism (after
  /// attention, after the MLP or experts), the all-gathers of the heads
  /// where tp exceeds the KV heads (`gathersHeads`: k and v, or q, k and
  /// v, gathered at once: one wait, as the compiled layer's run side by
  /// side) and the two all-to-alls of expert parallelism (the tokens to
  /// their experts and back).
  double syncSeconds(int64_t tp, int64_t ep, bool gathersHeads) const {
    return sync * (2.0 * double(tp > 1) + double(gathersHeads) +
                   2.0 * double(ep > 1));
  }

  /// The FLOP/s of a weight matmul of `rows` rows (the tokens it
  /// multiplies), its FLOPs split over the weights' formats in their
  /// shares: each format's rate x rows / (rows + its half rows), and half
  /// its rate below its half rows (the law is fitted on large GEMMs; a
  /// matmul of a few rows runs a different kernel, memory bound, which
  /// the law's fixed cost of half rows rows would wrongly make compute
  /// bound). `asRowsGrow`: each format's rate without the law.
  double matmulRateAt(double rows, bool asRowsGrow = false) const {
    double secondsPerFlop = 0;
    for (const MatmulFormat &f : weightFormats) {
      double rate = f.rate;
      if (f.halfRows > 0 && !asRowsGrow) {
        const double m = std::max(rows, f.halfRows);
        rate *= m / (m + f.halfRows);
      }
      secondsPerFlop += f.share / rate;
    }
    return 1.0 / secondsPerFlop;
  }

  /// The LM head of `params` weights of `weightBytes` each split over
  /// `tp` chips, for `tokens` tokens: its own roofline (its weights read,
  /// compute bound at large batches).
  double lmHead(double params, double tokens, int64_t tp,
                double bytesEach) const;
  /// An all-reduce of `bytes` over `n` chips: two steps of direct
  /// exchange (reduce-scatter, all-gather), each a link latency plus the
  /// chip's share of the bytes over all its links.
  double allReduce(double bytes, int64_t n) const {
    if (n <= 1)
      return 0;
    return 2 * latency +
           2.0 * bytes * double(n - 1) / double(n) / (linkBw * eff.links);
  }
  /// An all-to-all (expert dispatch or combine) of `bytes` per chip.
  double allToAll(double bytes, int64_t n) const {
    if (n <= 1)
      return 0;
    return latency + bytes * double(n - 1) / double(n) / (linkBw * eff.links);
  }
  /// One hop between pipeline stages of a system of `chips`: over the link
  /// between a chip and its counterpart in the next stage, whose bandwidth
  /// is that pair's share of the chip's links (loom::ChipNetwork's rules,
  /// which PlannerTest checks this against): a ring's neighbour gets half;
  /// a dragonfly's local peer half / (chips per node - 1), all of them /
  /// (n - 1) in a single node, its global peer half / (nodes - 1) once
  /// stages span nodes (after a local hop, at the slower link's rate, when
  /// a stage is not whole nodes); fully connected and switch 1 / (n - 1).
  /// Under adaptive routing a dragonfly's stages of whole nodes may also
  /// send over the two-hop routes through every other node, each node to
  /// its one counterpart: (nodes - 1) / 2 times the global share, at two
  /// link latencies, where that delivers the bytes first.
  double hop(double bytes, int64_t chips, int64_t stageChips) const {
    Hop h = hopParts(bytes, chips, stageChips);
    return h.latency + h.transfer;
  }
  /// A hop's route's latency and its transfer time (bytes over the
  /// route's rate): the time the link is busy, which a message sent behind
  /// another waits for, where the latency overlaps.
  struct Hop {
    double latency = 0, transfer = 0;
  };
  Hop hopParts(double bytes, int64_t chips, int64_t stageChips) const;
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
/// its collectives, System::syncSeconds).
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
