//===- PartitionCost.cpp - graph-partition: the price of a partition ------===//
//
// Step 2 of graph-partition (PartitionCost.h).
//
//===----------------------------------------------------------------------===//
#include "PartitionCost.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace loom::graph::partition {

OpCost PartitionPricer::costOf(Operation *op, const Propagation &prop,
                               std::set<void *> &seenArgs) {
  OpCost c;
  int64_t weightElemBytes = weightElementBytes(precision);
  ChipOpWork work;
  work.format = matrixFormat(precision);
  double &flops = work.flops, &bytes = work.bytes;
  // Each chip reads and writes its share of every value: its piece of a
  // split (a piece shared by several ranks is read by each), the whole of
  // anything else (a partial sum is whole on every chip). An input split
  // over several dims arrives whole and is cut on chip.
  auto planIt = prop.plans.find(op);
  const OpPlan *plan = planIt == prop.plans.end() ? nullptr : &planIt->second;
  auto share = [&](Value v, Shard s) -> double {
    if (s.kind != Shard::Split || (isa<BlockArgument>(v) && s.span > 1))
      return 1.0;
    return double(s.pieces(prop.tp));
  };
  if (auto mm = dyn_cast<MatMulOp>(op)) {
    ArrayRef<int64_t> a = typeOf(mm.getLhs()).getShape();
    int64_t k = a.empty() ? 1 : a.back();
    flops = 2.0 * double(typeOf(mm.getResult()).getNumElements()) * double(k);
    work.matmul = true;
  } else {
    for (Value r : op->getResults())
      flops += double(typeOf(r).getNumElements());
  }
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    double div = plan ? share(v, plan->operands[i]) : 1.0;
    if (auto cst = v.getDefiningOp<ConstantOp>()) {
      int64_t b = isa<MatMulOp, ConvOp>(op) && typeOf(v).getElementType().isF32()
                      ? typeOf(v).getNumElements() * weightElemBytes
                      : bytesOf(v);
      c.weightBytes += int64_t(double(b) / div);
      bytes += double(b) / div;
      continue;
    }
    bytes += double(bytesOf(v)) / div;
    if (isa<BlockArgument>(v) && seenArgs.insert(v.getAsOpaquePointer()).second)
      c.inputBytes += int64_t(double(bytesOf(v)) / div);
  }
  for (Value r : op->getResults())
    bytes += double(bytesOf(r)) / (!plan ? 1.0
                                   : plan->gatherAfter >= 0
                                       ? double(prop.tp)
                                       : share(r, plan->result));
  work.split = prop.divided.count(op) ? double(prop.divided.at(op)) : 1.0;
  // A transpose of a matmul operand is read in place by the matmul's kernel
  // (graph-form-kernels): no copy is made, so it takes no time (its
  // weights, a Gemm's transposed B, still count).
  c.seconds = isMatmulOperandTranspose(op) ? 0.0 : model_.opSecondsOnChip(work);
  return c;
}

double PartitionPricer::collectiveSeconds(const CollectiveNeed &c, int64_t tp) {
  std::shared_ptr<ChipNetwork> &cached = networks_[tp];
  if (!cached)
    cached = std::make_shared<ChipNetwork>(
        *target_, tp, std::max<int64_t>(systemChips, chips), tp);
  const ChipNetwork &net = *cached;
  // A group's ranks are consecutive: the first group stands for all.
  int64_t n = c.ranks ? c.ranks : tp;
  // A narrow policy's f32 activations cross chips at its wire format.
  std::optional<NumericFormat> wire = rt::activationWireFormat(precision);
  int64_t bytes = c.f32 && wire
                      ? c.bytes / 4 * int64_t(rt::numericFormatBytes(*wire))
                      : c.bytes;
  return model_.collectiveSecondsOnNetwork(net, n, bytes, c.reduce);
}

namespace {

/// Where stages may be cut: before op i, the bytes of computed values made
/// before it and read from it on (they cross to the next stage), for i in
/// 0..ops.size().
std::vector<double> cutCrossings(const std::vector<Operation *> &ops) {
  std::map<Operation *, size_t> position;
  for (size_t i = 0; i < ops.size(); ++i)
    position[ops[i]] = i;
  std::vector<double> crossing(ops.size() + 1, 0);
  for (size_t i = 0; i < ops.size(); ++i)
    for (Value r : ops[i]->getResults()) {
      size_t last = i;
      for (Operation *u : r.getUsers())
        if (auto it = position.find(u); it != position.end())
          last = std::max(last, it->second);
      if (last > i) {
        crossing[i + 1] += double(bytesOf(r));
        crossing[last + 1] -= double(bytesOf(r));
      }
    }
  // An activation every chip holds whole (graph.whole: the layer input of
  // a body-only graph, the residual stream) is made before the first op:
  // read on both sides of a cut, it crosses it as a computed value would.
  // (Without it, a cut inside the first norm carried a few bytes, the
  // cheapest by far, and the 4x rule below left no other: a body-only
  // graph's first stage got four ops.)
  if (!ops.empty())
    if (auto f = ops.front()->getParentOfType<func::FuncOp>())
      for (BlockArgument arg : f.getArguments()) {
        if (!f.getArgAttr(arg.getArgNumber(), kWholeAttr))
          continue;
        size_t last = 0;
        bool read = false;
        for (Operation *u : arg.getUsers())
          if (auto it = position.find(u); it != position.end()) {
            last = std::max(last, it->second);
            read = true;
          }
        if (read && last > 0) {
          crossing[1] += double(bytesOf(arg));
          crossing[last + 1] -= double(bytesOf(arg));
        }
      }
  for (size_t i = 1; i <= ops.size(); ++i)
    crossing[i] += crossing[i - 1];
  return crossing;
}

/// Segments: the runs of ops between allowed cuts. Only cuts within 4x of
/// the cheapest are allowed: between layers (the residual stream), not
/// inside attention (the KV cache).
std::vector<Segment> makeSegments(const std::vector<double> &crossing,
                                  const std::vector<double> &seconds,
                                  const std::vector<OpCost> &costs) {
  size_t ops = seconds.size();
  double cheapest = -1;
  for (size_t i = 1; i < ops; ++i)
    if (crossing[i] > 0 && (cheapest < 0 || crossing[i] < cheapest))
      cheapest = crossing[i];
  auto cuttable = [&](size_t i) {
    return cheapest < 0 || crossing[i] <= 4 * cheapest;
  };
  std::vector<Segment> segments;
  for (size_t i = 0; i < ops; ++i) {
    if (segments.empty() || cuttable(i))
      segments.push_back({i, i});
    Segment &g = segments.back();
    g.end = i + 1;
    g.seconds += seconds[i];
    g.weights += double(costs[i].weightBytes);
    g.inputs += double(costs[i].inputBytes);
  }
  return segments;
}

// What a stage of `time` seconds holding `weights` and reading `inputs`
// bytes of model inputs bounds: for objective latency its time; for
// throughput also the interval its SRAM allows. Each input in flight
// keeps its own copy of the model inputs a stage reads (a decode step's
// KV cache: read at the stage, written back as an output kept to the
// end), about latency / interval inputs at once, beside the stage's
// resident weights. Stages are packed by this, so a throughput split
// leaves each stage room for its copies instead of filling some with
// weights. (A stage packs its weights and one copy of its inputs within
// `capacity`, so the room is at least the inputs.)
struct StageBound {
  double capacity, latency;
  bool throughput;

  double sramInterval(double weights, double inputs) const {
    if (inputs <= 0)
      return 0.0;
    double room = capacity - weights;
    return room > 0 ? latency * inputs / room
                    : std::numeric_limits<double>::infinity();
  }
  double operator()(double time, double weights, double inputs) const {
    return throughput ? std::max(time, sramInterval(weights, inputs)) : time;
  }
};

/// The fewest stages of at most `limit` each (by `bound`), filled greedily
/// segment by segment, each within SRAM; the stage of every op, or empty.
std::vector<int64_t> pack(const std::vector<Segment> &segments, size_t ops,
                          int64_t pp, const StageBound &bound, double limit) {
  const double capacity = bound.capacity;
  std::vector<int64_t> stage(ops, 0);
  int64_t s = 0;
  double time = 0, weights = 0, inputs = 0;
  for (size_t k = 0; k < segments.size(); ++k) {
    const Segment &g = segments[k];
    if (g.bytes() > capacity)
      return {};
    if (k > 0 && (bound(time + g.seconds, weights + g.weights,
                        inputs + g.inputs) > limit ||
                  weights + inputs + g.bytes() > capacity)) {
      ++s;
      time = weights = inputs = 0;
    }
    if (s >= pp)
      return {};
    time += g.seconds;
    weights += g.weights;
    inputs += g.inputs;
    for (size_t i = g.begin; i < g.end; ++i)
      stage[i] = s;
  }
  return stage;
}

/// Among packings whose stages take at most 5% more than the best (`hi`),
/// the one whose cuts carry the fewest bytes (a cut after a layer's norm
/// moves the normalised activations and the residual; one before it only
/// the residual): stage by stage, the cheapest cut that still lets the
/// rest pack into the stages left (greedy packing is optimal for that
/// test), the later one on a tie. Replaces `best` when one is found.
void refineCuts(const std::vector<Segment> &segments,
                const std::vector<double> &crossing, size_t ops, int64_t pp,
                const StageBound &bound, double hi,
                std::vector<int64_t> &best) {
  const double capacity = bound.capacity;
  const double relaxed = hi * 1.05;
  // need[k]: the stages greedy packing takes for segments k.. (a stage
  // starting at segment k ends before reach(k), the first segment that
  // would overflow it); one pass from the end, with prefix sums.
  const size_t n = segments.size();
  std::vector<double> timeBefore(n + 1, 0), weightsBefore(n + 1, 0),
      inputsBefore(n + 1, 0);
  for (size_t k = 0; k < n; ++k) {
    timeBefore[k + 1] = timeBefore[k] + segments[k].seconds;
    weightsBefore[k + 1] = weightsBefore[k] + segments[k].weights;
    inputsBefore[k + 1] = inputsBefore[k] + segments[k].inputs;
  }
  // Segments k..r-1 as one stage: over the relaxed bound, or SRAM.
  auto overflows = [&](size_t k, size_t r) {
    double w = weightsBefore[r] - weightsBefore[k];
    double in = inputsBefore[r] - inputsBefore[k];
    return bound(timeBefore[r] - timeBefore[k], w, in) > relaxed ||
           w + in > capacity;
  };
  const int64_t never = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> need(n + 1, 0);
  for (size_t k = n, reach = n; k-- > 0;) {
    // The stage from k takes segments k..reach-1; an earlier k reaches no
    // further (segment times and bytes are not negative, and the bound
    // grows with each).
    while (reach > k + 1 && overflows(k, reach))
      --reach;
    need[k] = segments[k].bytes() > capacity || need[reach] == never
                  ? never
                  : 1 + need[reach];
  }
  std::vector<int64_t> refined(ops, 0);
  size_t next = 0;
  for (int64_t s = 0; s < pp && next < segments.size(); ++s) {
    size_t end = 0;
    double cheapestCut = std::numeric_limits<double>::infinity();
    for (size_t j = next; j < segments.size(); ++j) {
      if (j > next && overflows(next, j + 1))
        break;
      if (j + 1 == segments.size()) {
        // The rest fits in this stage: the last one takes it.
        if (s == pp - 1 || end == 0)
          end = j + 1;
        break;
      }
      if (s == pp - 1 || need[j + 1] > pp - s - 1)
        continue;
      double cut = crossing[segments[j + 1].begin];
      if (cut <= cheapestCut) {
        cheapestCut = cut;
        end = j + 1;
      }
    }
    if (end == 0)
      break;
    for (size_t k = next; k < end; ++k)
      for (size_t i = segments[k].begin; i < segments[k].end; ++i)
        refined[i] = s;
    next = end;
  }
  if (next == segments.size())
    best = std::move(refined);
}

} // namespace

const PartitionPricer::Prepared &
PartitionPricer::prepare(int64_t tp, const Propagation &prop,
                         PassSteps *steps) {
  const std::pair<uint64_t, int64_t> key{prop.serial, tp};
  auto found = prop.serial ? prepared_.find(key) : prepared_.end();
  if (found != prepared_.end()) {
    if (steps)
      steps->advance(int64_t(ops_.size()));
    return found->second;
  }
  Prepared fresh;
  std::set<void *> seenArgs;
  std::vector<OpCost> &costs = fresh.costs;
  for (Operation *op : ops_) {
    costs.push_back(costOf(op, prop, seenArgs));
    if (steps)
      steps->advance();
  }
  // Collectives are charged to the op that needs them.
  std::map<Operation *, double> extra;
  for (const CollectiveNeed &c : prop.collectives)
    extra[c.before] += collectiveSeconds(c, tp);
  for (size_t i = 0; i < ops_.size(); ++i)
    fresh.seconds.push_back(costs[i].seconds + extra[ops_[i]]);
  for (double s : fresh.seconds)
    fresh.total += s;
  // Where stages may be cut, and the runs of ops between allowed cuts.
  fresh.crossing = cutCrossings(ops_);
  fresh.segments = makeSegments(fresh.crossing, fresh.seconds, costs);
  // A propagation never run (serial 0) is not kept apart from others:
  // its entry is replaced each time.
  return prepared_[key] = std::move(fresh);
}

Estimate PartitionPricer::estimate(int64_t tp, int64_t pp,
                                   const Propagation &prop, PassSteps *steps) {
  Estimate e;
  e.tp = tp;
  e.pp = pp;
  const Prepared &p = prepare(tp, prop, steps);
  const std::vector<OpCost> &costs = p.costs;
  const std::vector<double> &seconds = p.seconds;
  const std::vector<double> &crossing = p.crossing;
  const std::vector<Segment> &segments = p.segments;
  const double total = p.total;
  // A fifth of each chip is left for activations and for the uneven spread
  // of weights over its tiles.
  const double capacity =
      double(target_->sramBytesPerChip()) * TargetModel::kPartitionSramShare;
  // A hop between stages (CostModel::stageHopSeconds).
  const double hop = model_.stageHopSeconds();
  e.latency = total + double(pp - 1) * hop;
  const bool throughput = objective == "throughput";
  const StageBound bound{capacity, e.latency, throughput};
  // Binary search for the smallest stage bound that packs into pp stages.
  // (Rounding: sums taken in another order may exceed `total` by an ulp.
  // A stage within SRAM bounds at most max(its time, the latency).)
  double lo = 0,
         hi = (throughput ? std::max(total, e.latency) : total) * (1 + 1e-9) +
              1e-12;
  std::vector<int64_t> best = pack(segments, ops_.size(), pp, bound, hi);
  if (best.empty()) {
    e.why = "the ops do not pack into " + std::to_string(pp) +
            " stages within each chip's SRAM";
    return e;
  }
  for (int it = 0; it < 40; ++it) {
    double mid = (lo + hi) / 2;
    std::vector<int64_t> s = pack(segments, ops_.size(), pp, bound, mid);
    if (s.empty())
      lo = mid;
    else {
      hi = mid;
      best = std::move(s);
    }
  }
  refineCuts(segments, crossing, ops_.size(), pp, bound, hi, best);
  e.fits = true;
  e.stageOf = best;
  std::vector<double> stageTime(pp, 0), stageWeights(pp, 0), stageInputs(pp, 0);
  for (size_t i = 0; i < ops_.size(); ++i) {
    stageTime[best[i]] += seconds[i];
    stageWeights[best[i]] += double(costs[i].weightBytes);
    stageInputs[best[i]] += double(costs[i].inputBytes);
  }
  // The interval: the busiest stage, and no shorter than its SRAM lets
  // inputs overlap (`bound` for throughput, whatever the objective).
  e.interval = 0;
  for (int64_t s = 0; s < pp; ++s)
    e.interval = std::max({e.interval, stageTime[s],
                           bound.sramInterval(stageWeights[s], stageInputs[s])});
  return e;
}

} // namespace loom::graph::partition
