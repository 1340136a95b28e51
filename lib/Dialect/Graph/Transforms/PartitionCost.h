//===- PartitionCost.h - graph-partition: the price of a partition *- C++
//-*-===//
//
// Step 2 of graph-partition: the estimated seconds and SRAM of each op on
// one chip under a sharding (Sharding.h), the collectives' time on the chip
// network, and the pp stages cut to balance them under each chip's SRAM.
// Every price comes from the cost model (CostModel::opSecondsOnChip,
// collectiveSecondsOnNetwork, stageHopSeconds); this file counts the work
// and bytes it prices.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_DIALECT_GRAPH_TRANSFORMS_PARTITIONCOST_H
#define LOOM_LIB_DIALECT_GRAPH_TRANSFORMS_PARTITIONCOST_H

#include "Sharding.h"

#include "loom/Target/ChipNetwork.h"
#include "loom/Target/CostModel.h"
#include "loom/Target/PassProgress.h"
#include "loom/Target/TargetModel.h"

#include <map>
#include <memory>
#include <set>
#include <string>

namespace loom::graph::partition {

/// Estimated seconds and SRAM bytes of one op on one chip.
struct OpCost {
  double seconds = 0;
  int64_t weightBytes = 0; // constants (stored at the matrix precision)
  int64_t inputBytes = 0;  // model inputs it reads first
};

struct Estimate {
  int64_t tp = 1, pp = 1;
  bool fits = false;
  double latency = 0, interval = 0;
  std::vector<int64_t> stageOf; // per costed op
  std::string why;              // why it does not fit
};

/// A run of ops between allowed cuts.
struct Segment {
  size_t begin, end;
  double seconds = 0, weights = 0, inputs = 0;
  double bytes() const { return weights + inputs; }
};

/// Prices tp x pp partitions of the costed ops `ops` (in order) on
/// `target`, under graph-partition's options.
class PartitionPricer {
public:
  PartitionPricer(const TargetModel &target,
                  const std::vector<Operation *> &ops, std::string precision,
                  std::string objective, int64_t systemChips, int64_t chips)
      : target_(&target), model_(target), ops_(ops),
        precision(std::move(precision)), objective(std::move(objective)),
        systemChips(systemChips), chips(chips) {}

  OpCost costOf(Operation *op, const Propagation &prop,
                std::set<void *> &seenArgs);
  /// The partition's estimate; each op costed advances `steps`, if given.
  Estimate estimate(int64_t tp, int64_t pp, const Propagation &prop,
                    PassSteps *steps = nullptr);
  double collectiveSeconds(const CollectiveNeed &c, int64_t tp);

private:
  const TargetModel *target_;
  /// Prices every op, collective and stage hop (CostModel's
  /// graph-partition prices).
  CostModel model_;
  const std::vector<Operation *> &ops_;
  std::string precision;
  std::string objective;
  int64_t systemChips;
  int64_t chips;
  std::map<int64_t, std::shared_ptr<ChipNetwork>> networks_;
  /// What a partition's price takes from its propagation alone, not from
  /// pp: each op's cost and time with its collectives, the cut crossings
  /// and the segments. Kept per Propagation::serial and tp: the search for the
  /// fewest chips that fit prices thousands of pp for each tp (Llama-3.1-
  /// 405B on 1024 LPX chips took 95 s to say it does not fit).
  struct Prepared {
    std::vector<OpCost> costs;
    std::vector<double> seconds, crossing;
    std::vector<Segment> segments;
    double total = 0;
  };
  std::map<std::pair<uint64_t, int64_t>, Prepared> prepared_;
  const Prepared &prepare(int64_t tp, const Propagation &prop,
                          PassSteps *steps);
};

} // namespace loom::graph::partition

#endif // LOOM_LIB_DIALECT_GRAPH_TRANSFORMS_PARTITIONCOST_H
