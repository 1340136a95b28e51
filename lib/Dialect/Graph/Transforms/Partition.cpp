//===- Partition.cpp - Tensor and pipeline parallelism across chips -------===//
//
// Splits a function over tp x pp chips. See Passes.td for the rules.
//
// The work is in three steps, each in a file of its own:
//  1. `Propagation` (Sharding.h, ShardPropagation.cpp) decides, op by op, how
//  every value is held across the
//     tp ranks (replicated, split along a dimension, or partial sums) and
//     which collectives that needs; it touches no IR, so every tp candidate
//     can be costed.
//  2. `PartitionPricer` (PartitionCost.h) prices each candidate and cuts
//     the ops into pp contiguous stages balancing the estimated time under
//     each chip's SRAM.
//  3. `Rewriter` (PartitionRewrite.h) clones every op per rank with local
//  shapes, inserts the
//     collectives, slices constants and splits model inputs and outputs
//     into per-chip parts.
//
//===----------------------------------------------------------------------===//
#include "PartitionCost.h"
#include "PartitionRewrite.h"

#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"
#include "loom/Target/ChipNetwork.h"
#include "loom/Target/PassProgress.h"
#include "loom/Target/TargetModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

namespace loom::graph {
#define GEN_PASS_DEF_GRAPHPARTITION
#include "loom/Dialect/Graph/Transforms/Passes.h.inc"

using namespace mlir;
using namespace partition;

namespace {

struct GraphPartitionPass : impl::GraphPartitionBase<GraphPartitionPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  /// The fewest chips, from `from` up to `limit`, on which some tp x pp
  /// partition fits; 0 if none does.
  int64_t smallestFit(func::FuncOp func, int64_t from, int64_t limit);
  Propagation &propagation(func::FuncOp func, int64_t tp);
  LogicalResult resolveChips(func::FuncOp func, int64_t &n);
  /// Unfuses sliced projections and collects the ops to cost.
  void prepare(func::FuncOp func);
  std::string fewest(func::FuncOp func, int64_t from);
  /// Fails, with the error, when the model's bytes exceed n chips' SRAM.
  LogicalResult checkCapacity(func::FuncOp func, int64_t n);
  /// Prices tp `t` x pp `p`, trying shared projections; `note` says how.
  Estimate priceCandidate(func::FuncOp func, int64_t t, int64_t p,
                          PassSteps &steps, std::string &note);
  /// Prices every candidate on `n` chips; `report` gets one line each.
  std::vector<Estimate> priceCandidates(func::FuncOp func, int64_t n,
                                        std::string &report);
  /// The best candidate that fits for the objective, or null.
  const Estimate *choose(const std::vector<Estimate> &candidates);
  void setPartitionAttrs(func::FuncOp func, int64_t n, const Estimate &chosen,
                         const std::string &report);

  std::optional<TargetModel> target_;
  std::vector<Operation *> ops_; // costed ops, in order
  std::map<int64_t, Propagation> props_;
  std::optional<PartitionPricer> pricer_;
};

Propagation &GraphPartitionPass::propagation(func::FuncOp func, int64_t tp) {
  Propagation &prop = props_[tp];
  if (prop.tp != tp || prop.plans.empty()) {
    prop = Propagation();
    prop.tp = tp;
    prop.run(func);
  }
  return prop;
}

int64_t GraphPartitionPass::smallestFit(func::FuncOp func, int64_t from,
                                        int64_t limit) {
  for (int64_t m = std::max<int64_t>(1, from); m <= limit; ++m)
    for (int64_t t = 1; t <= m && t <= TargetModel::kMaxTensorParallel; ++t) {
      if (m % t || m / t > (int64_t)ops_.size())
        continue;
      if (pricer_->estimate(t, m / t, propagation(func, t)).fits)
        return m;
    }
  return 0;
}

/// Checks the options and works out the chip count `n` from --chips, --tp
/// and --pp; emits the error and fails when they do not agree.
LogicalResult GraphPartitionPass::resolveChips(func::FuncOp func,
                                               int64_t &n) {
  if (chips < 1 || tp < 0 || pp < 0) {
    func.emitError() << "graph-partition: chips, tp and pp must be positive";
    return failure();
  }
  if (objective != "latency" && objective != "throughput") {
    func.emitError() << "graph-partition: objective '" << objective
                     << "' is not latency or throughput";
    return failure();
  }
  n = chips;
  const int64_t askedTp = tp, askedPp = pp;
  if (tp > 0 && pp > 0 && tp * pp != n) {
    if (n == 1)
      n = tp * pp;
    else {
      func.emitError() << "graph-partition: tp " << askedTp << " x pp "
                       << askedPp << " is " << askedTp * askedPp
                       << " chips, not the " << n << " asked for";
      return failure();
    }
  }
  if ((askedTp > 0 && n % askedTp) || (askedPp > 0 && n % askedPp)) {
    bool badTp = askedTp > 0 && n % askedTp;
    func.emitError() << "graph-partition: " << (badTp ? "tp " : "pp ")
                     << (badTp ? askedTp : askedPp) << " does not divide " << n
                     << " chips";
    return failure();
  }
  return success();
}

void GraphPartitionPass::prepare(func::FuncOp func) {
  unfuseSlicedProjections(func);
  ops_.clear();
  props_.clear();
  for (Operation &op : func.getBody().front())
    if (!isa<ConstantOp, func::ReturnOp>(op))
      ops_.push_back(&op);
}

// The smallest chip count that fits, for the errors: from the bytes'
// lower bound up (a partition needs room for activations too, and whole
// layers per stage).
std::string GraphPartitionPass::fewest(func::FuncOp func, int64_t from) {
  int64_t limit = std::max<int64_t>(4 * from, from + 64);
  int64_t m = smallestFit(func, from, limit);
  if (m == 0)
    return "no partition of up to " + std::to_string(limit) +
           " chips fits either";
  return "the fewest chips that fit are " + std::to_string(m) +
         " (--chips=" + std::to_string(m) + ")";
}

LogicalResult GraphPartitionPass::checkCapacity(func::FuncOp func,
                                                int64_t n) {
  // Does it fit at all? (Sums saturate at INT64_MAX: a model's inputs may
  // each be near 2^63 bytes.)
  auto add = [](int64_t &sum, int64_t bytes) {
    if (__builtin_add_overflow(sum, bytes, &sum))
      sum = std::numeric_limits<int64_t>::max();
  };
  int64_t weightElemBytes = weightElementBytes(precision);
  int64_t needed = 0;
  for (Operation &op : func.getBody().front())
    if (auto c = dyn_cast<ConstantOp>(op)) {
      bool matrix = llvm::any_of(op.getUsers(),
                                 [](Operation *u) { return isa<MatMulOp, ConvOp>(u); });
      add(needed, matrix && typeOf(c).getElementType().isF32()
                      ? typeOf(c).getNumElements() * weightElemBytes
                      : bytesOf(c));
    }
  int64_t weights = needed;
  for (BlockArgument a : func.getArguments())
    add(needed, bytesOf(a));
  auto bytesText = [](int64_t bytes) {
    return bytes == std::numeric_limits<int64_t>::max()
               ? std::string("2^63 or more")
               : std::to_string(bytes);
  };
  const int64_t perChip = target_->sramBytesPerChip();
  int64_t have;
  if (__builtin_mul_overflow(perChip, n, &have))
    have = std::numeric_limits<int64_t>::max();
  if (needed > have) {
    int64_t least = needed / perChip + (needed % perChip != 0);
    prepare(func);
    // Past 2^20 chips (the most a program may hold) no count is searched.
    std::string hint =
        least > (int64_t(1) << 20)
            ? "no system of up to 2^20 chips holds it"
            : fewest(func, least);
    func.emitError() << "graph-partition: the model does not fit on " << n
                     << " chip" << (n == 1 ? "" : "s") << " of "
                     << target_->desc().name << ": it needs "
                     << bytesText(needed) << " bytes of SRAM ("
                     << bytesText(weights) << " of weights, "
                     << (needed == std::numeric_limits<int64_t>::max()
                             ? bytesText(needed)
                             : std::to_string(needed - weights))
                     << " of inputs) but " << n << " chip"
                     << (n == 1 ? " holds " : "s hold ") << bytesText(have)
                     << "; " << hint;
    return failure();
  }
  return success();
}

Estimate GraphPartitionPass::priceCandidate(func::FuncOp func, int64_t t,
                                            int64_t p, PassSteps &steps,
                                            std::string &note) {
  Propagation &prop = propagation(func, t);
  Estimate e = pricer_->estimate(t, p, prop, &steps);
  // Past the key-value heads, the k and v projections may be computed
  // by each rank group of the head it shares, rather than in parts
  // gathered inside the group: more weights and work per chip, one
  // collective (and its synchronisation) fewer per layer. Kept when it
  // prices lower.
  std::map<Operation *, Shard> shared = prop.sharedProjections();
  if (!shared.empty()) {
    Propagation alt;
    alt.tp = t;
    alt.sharedResult = shared;
    alt.run(func);
    Estimate ea = pricer_->estimate(t, p, alt);
    double key = objective == "latency" ? e.latency : e.interval;
    double altKey = objective == "latency" ? ea.latency : ea.interval;
    std::string what = std::to_string(shared.size()) +
                       " projections computed per group of " +
                       std::to_string(t / shared.begin()->second.parts) +
                       " ranks";
    if (ea.fits && (!e.fits || altKey < key * (1 - 1e-9))) {
      note = ", " + what;
      props_[t] = std::move(alt);
      e = std::move(ea);
    } else {
      char alt[160];
      std::snprintf(alt, sizeof alt, "%.2f us", altKey * 1e6);
      note = " (gathered: " + what + " " +
             (ea.fits ? "would take " + std::string(alt)
                      : "would not fit") +
             ")";
    }
  }
  return e;
}

std::vector<Estimate>
GraphPartitionPass::priceCandidates(func::FuncOp func, int64_t n,
                                    std::string &report) {
  // Candidates: every tp x pp = n the options allow, each priced op by op
  // (its ops costed, in steps of at most 5% of all candidates' ops).
  std::vector<int64_t> tps;
  for (int64_t t = 1; t <= n; ++t)
    if (n % t == 0 && (tp <= 0 || t == tp) && (pp <= 0 || n / t == pp))
      tps.push_back(t);
  int64_t priced = 0;
  for (int64_t t : tps)
    priced += n / t > (int64_t)ops_.size() ? 0 : (int64_t)ops_.size();
  PassSteps steps(priced, "ops priced (each partition)");
  std::vector<Estimate> candidates;
  for (int64_t t : tps) {
    int64_t p = n / t;
    if (p > (int64_t)ops_.size()) {
      // Said, so that a failure with no candidate left still has a reason.
      report += (report.empty() ? "" : "; ") + std::string("tp ") +
                std::to_string(t) + " x pp " + std::to_string(p) +
                ": more pipeline stages than the model's " +
                std::to_string(ops_.size()) + " ops";
      continue;
    }
    std::string note;
    Estimate e = priceCandidate(func, t, p, steps, note);
    const Propagation &kept = props_.at(t);
    char buf[300];
    if (e.fits)
      std::snprintf(buf, sizeof buf,
                    "tp %lld x pp %lld: latency %.2f us, "
                    "interval %.2f us, %zu collectives%s",
                    (long long)t, (long long)p, e.latency * 1e6,
                    e.interval * 1e6, kept.collectives.size(), note.c_str());
    else
      std::snprintf(buf, sizeof buf, "tp %lld x pp %lld: does not fit (%s)",
                    (long long)t, (long long)p, e.why.c_str());
    report += (report.empty() ? "" : "; ") + std::string(buf);
    candidates.push_back(std::move(e));
  }
  return candidates;
}

const Estimate *
GraphPartitionPass::choose(const std::vector<Estimate> &candidates) {
  const Estimate *chosen = nullptr;
  for (const Estimate &e : candidates) {
    if (!e.fits)
      continue;
    double key = objective == "latency" ? e.latency : e.interval;
    double best = !chosen                  ? 0
                  : objective == "latency" ? chosen->latency
                                           : chosen->interval;
    if (!chosen || key < best * (1 - 1e-9))
      chosen = &e;
  }
  return chosen;
}

void GraphPartitionPass::setPartitionAttrs(func::FuncOp func, int64_t n,
                                           const Estimate &chosen,
                                           const std::string &report) {
  Builder b(func.getContext());
  std::string head =
      "tp " + std::to_string(chosen.tp) + " x pp " +
      std::to_string(chosen.pp) + " on " + std::to_string(n) + " chips" +
      (tp > 0 && pp > 0 ? " (as asked)" : " (objective " + objective + ")");
  func->setAttr(kChipsAttr, b.getI64IntegerAttr(n));
  func->setAttr(kTensorParallelAttr, b.getI64IntegerAttr(chosen.tp));
  func->setAttr(kPipelineParallelAttr, b.getI64IntegerAttr(chosen.pp));
  func->setAttr(kPartitionReportAttr, b.getStringAttr(head + "; " + report));
  if (chosen.pp > 1 && chosen.interval > 0)
    func->setAttr(kInFlightAttr,
                  b.getI64IntegerAttr(std::max<int64_t>(
                      1, static_cast<int64_t>(std::ceil(
                             chosen.latency / chosen.interval - 1e-9)))));
  if (systemChips > n)
    func->setAttr(kSystemChipsAttr, b.getI64IntegerAttr(systemChips));
}

/// A model input used on several chips (RoPE tables read by every layer,
/// say) gets a replica per chip, written by the host, rather than a trip
/// over the chip links from the first chip that reads it.
static LogicalResult replicateInputs(func::FuncOp func) {
  Builder b(func.getContext());
  Block &entry = func.getBody().front();
  unsigned args = entry.getNumArguments();
  for (unsigned i = 0; i < args; ++i) {
    BlockArgument arg = entry.getArgument(i);
    auto part = func.getArgAttrOfType<DenseI64ArrayAttr>(i, kPartAttr);
    if (part && part.size() == 3 && part[0] >= 0)
      continue; // a slice of the input: one chip's
    std::map<int64_t, std::vector<OpOperand *>> byChip;
    for (OpOperand &use : arg.getUses())
      byChip[chipOf(use.getOwner())].push_back(&use);
    if (byChip.size() < 2)
      continue;
    DictionaryAttr attrs = func.getArgAttrDict(i);
    int64_t replicas = int64_t(byChip.size()) - 1 + (part ? part[2] : 1);
    int64_t index = part ? part[2] : 1;
    for (auto it = std::next(byChip.begin()); it != byChip.end(); ++it) {
      unsigned n = entry.getNumArguments();
      if (failed(func.insertArgument(n, arg.getType(), attrs, arg.getLoc())))
        return failure();
      BlockArgument added = entry.getArgument(n);
      func.setArgAttr(n, kPartAttr,
                      b.getDenseI64ArrayAttr({-1, index++, replicas}));
      for (OpOperand *use : it->second)
        use->set(added);
    }
    func.setArgAttr(i, kPartAttr,
                    b.getDenseI64ArrayAttr({-1, part ? part[1] : 0, replicas}));
  }
  return success();
}

/// A constant used on several chips gets a copy per chip: weights are
/// resident where they are used.
static void copyConstantsPerChip(func::FuncOp func) {
  for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
    auto c = dyn_cast<ConstantOp>(op);
    if (!c)
      continue;
    std::map<int64_t, Value> perChip;
    for (OpOperand &use : llvm::make_early_inc_range(c->getUses())) {
      int64_t chip = chipOf(use.getOwner());
      auto it = perChip.find(chip);
      if (it == perChip.end()) {
        if (perChip.empty()) {
          perChip[chip] = c;
          continue;
        }
        OpBuilder ob(c);
        it = perChip.emplace(chip, ob.clone(*c)->getResult(0)).first;
      }
      use.set(it->second);
    }
  }
}

void GraphPartitionPass::runOnOperation() {
  func::FuncOp func = getOperation();
  std::string error;
  target_ = TargetModel::load(target, error);
  if (target_)
    pricer_.emplace(*target_, ops_, precision, objective, systemChips, chips);
  if (!target_) {
    func.emitError() << "graph-partition: " << error;
    return signalPassFailure();
  }
  int64_t n;
  if (failed(resolveChips(func, n)))
    return signalPassFailure();
  const int64_t askedTp = tp, askedPp = pp;
  if (failed(checkCapacity(func, n)))
    return signalPassFailure();
  // One chip: nothing to split (the check above is all this pass does).
  if (n == 1 && askedTp <= 1 && askedPp <= 1)
    return;
  prepare(func);

  std::string report;
  std::vector<Estimate> candidates = priceCandidates(func, n, report);
  const Estimate *chosen = choose(candidates);
  if (!chosen) {
    std::string hint = tp > 0 || pp > 0 ? "" : "; " + fewest(func, n + 1);
    InFlightDiagnostic diag = func.emitError();
    diag << "graph-partition: no partition of " << n << " chips of "
         << target_->desc().name << " fits: " << report << hint;
    return signalPassFailure();
  }
  setPartitionAttrs(func, n, *chosen, report);
  if (n == 1)
    return;
  Rewriter rw(func, props_.at(chosen->tp), ops_, chosen->stageOf, chosen->tp);
  if (failed(rw.run())) {
    func.emitError() << "graph-partition: could not slice a constant"
                     << (rw.error().empty() ? "" : ": " + rw.error());
    return signalPassFailure();
  }
  if (failed(replicateInputs(func)))
    return signalPassFailure();
  copyConstantsPerChip(func);
}

} // namespace
} // namespace loom::graph
