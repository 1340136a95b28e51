//===- Planner.cpp - Capacity planning for LLM serving --------------------===//
//
// See Planner.h and docs/planner.md (every formula and factor used here is
// stated there).
//
//===----------------------------------------------------------------------===//
#include "loom/Planner/Planner.h"
#include "loom/Runtime/Progress.h"
#include "loom/Target/ChipNetwork.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace loom::plan {

double precisionBytes(const std::string &p) {
  if (p == "fp32")
    return 4;
  if (p == "bf16" || p == "fp16")
    return 2;
  if (p == "fp8" || p == "int8")
    return 1;
  if (p == "fp4")
    return 0.5;
  return 0;
}

namespace {
/// Why `precision` is not one: the formats that are.
std::string unknownPrecision(const std::string &precision) {
  return "precision '" + precision +
         "' is not fp32, bf16, fp16, fp8, int8 or fp4";
}
} // namespace

std::vector<WeightShare> weightMix(const std::string &spec,
                                   std::string &error) {
  std::vector<WeightShare> mix;
  auto fail = [&](const std::string &why) {
    error = "--weights=" + spec + ": " + why;
    return std::vector<WeightShare>{};
  };
  if (spec.find_first_of(":,") == std::string::npos) {
    if (precisionBytes(spec) == 0) {
      error = unknownPrecision(spec);
      return {};
    }
    return {WeightShare{spec, 1.0}};
  }
  const char *form = " (a mix is FORMAT:SHARE,FORMAT:SHARE,...)";
  if (spec.find_first_of(" \t\n") != std::string::npos)
    return fail(std::string("has a blank") + form);
  double sum = 0;
  size_t begin = 0;
  while (begin <= spec.size()) {
    size_t end = std::min(spec.find(',', begin), spec.size());
    std::string item = spec.substr(begin, end - begin);
    begin = end + 1;
    if (item.empty())
      return fail(std::string("has an empty item") + form);
    size_t colon = item.find(':');
    if (colon == std::string::npos)
      return fail("'" + item + "' has no share" + form);
    std::string format = item.substr(0, colon), share = item.substr(colon + 1);
    if (precisionBytes(format) == 0)
      return fail(unknownPrecision(format));
    char *last = nullptr;
    double x = std::strtod(share.c_str(), &last);
    if (share.empty() || *last != '\0' || !(x > 0) || x > 1)
      return fail(format + "'s share '" + share +
                  "' is not a number in (0, 1]");
    for (const WeightShare &w : mix)
      if (w.format == format)
        return fail(format + " is named twice");
    mix.push_back(WeightShare{format, x});
    sum += x;
  }
  if (std::abs(sum - 1) > 1e-3) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", sum);
    return fail(std::string("the shares sum to ") + buf + ", not 1");
  }
  for (WeightShare &w : mix)
    w.share /= sum;
  return mix;
}

double weightBytes(const std::vector<WeightShare> &mix) {
  double bytes = 0;
  for (const WeightShare &w : mix)
    bytes += w.share * precisionBytes(w.format);
  return bytes;
}

double weightBytes(const std::string &spec) {
  std::string error;
  return weightBytes(weightMix(spec, error));
}

double ModelCost::totalParams() const {
  return layers * (attnParams + experts * expertParams) + embedParams +
         headParams;
}

double ModelCost::activeParams() const {
  return layers * (attnParams + expertsPerToken * expertParams) + headParams;
}

double ModelCost::layerFlopsPerToken() const {
  return 2.0 * (attnParams + expertsPerToken * expertParams);
}

double ModelCost::attnFlopsPerPosition() const {
  // Scores (q . k) and context (p . v): 2 FLOPs per multiply-add each.
  return 4.0 * heads * headDim;
}

double ModelCost::kvElementsPerTokenLayer() const {
  return 2.0 * kvHeads * headDim;
}

ModelCost modelCost(const LlmConfig &c) {
  ModelCost m;
  m.layers = c.layers;
  m.hidden = c.hidden;
  m.heads = c.heads;
  m.kvHeads = c.kvHeads;
  m.headDim = c.headDim;
  m.vocab = c.vocab;
  m.experts = std::max<int64_t>(1, c.experts);
  m.expertsPerToken = std::max<int64_t>(1, c.expertsPerToken);
  double h = double(c.hidden), qd = double(c.heads) * c.headDim,
         kvd = double(c.kvHeads) * c.headDim;
  m.attnParams = h * qd + 2 * h * kvd + qd * h;
  m.expertParams = 3.0 * h * double(c.intermediate);
  m.embedParams = double(c.vocab) * h;
  m.headParams = h * double(c.vocab);
  return m;
}

namespace {
/// x with erfc(x) = y, 0 < y < 2 (bisection: erfc falls monotonically).
double inverseErfc(double y) {
  double lo = -10, hi = 10;
  for (int i = 0; i < 100; ++i) {
    double mid = (lo + hi) / 2;
    (std::erfc(mid) > y ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}
} // namespace

namespace {
/// Erlang's C for c servers offered a erlangs (M/M/c), or 0 as soon as it
/// is known to be at most `below` (0: never). Up to 4,096 servers, Erlang's
/// B is the ratio of the Poisson(a) term at n = floor(c) to the sum of
/// those up to it, 1 / B = sum_j prod_{i<j} (n - i) / a: summed from j = 0
/// its terms grow while n - j > a and then fall off like a Gaussian of
/// width sqrt(a), so the sum stops once they are below 2^-60 of it (about
/// n - a + 9 sqrt(a) terms, not n), or once it shows C <= c B / (c - a) <=
/// `below`.
double erlangCAtMost(double c, double a, double below) {
  const int64_t n = static_cast<int64_t>(c);
  if (n < 1 || a <= 0)
    return 0;
  if (a >= c)
    return 1;
  if (n > 4096) {
    // Past 4,096 servers the sum's terms (O(c) at light load), repeated in
    // every bisection, are what a search would spend its time on: the
    // Halfin-Whitt limit, 1 / (1 + beta Phi(beta) / phi(beta)), beta =
    // (c - a) / sqrt(a), within 5% of Erlang's C wherever C > 1%
    // (PlannerTest); an arrival's wait then moves by less, with its
    // logarithm.
    const double beta = (c - a) / std::sqrt(a);
    const double Phi = 0.5 * std::erfc(-beta / std::sqrt(2.0));
    const double phi = std::exp(-beta * beta / 2) / std::sqrt(2 * M_PI);
    return phi > 0 ? 1 / (1 + beta * Phi / phi) : 0;
  }
  const double stop = below > 0 ? c / ((c - a) * below) : HUGE_VAL;
  double sum = 1, term = 1;
  for (int64_t j = 1; j <= n; ++j) {
    term *= double(n - j + 1) / a;
    sum += term;
    if (sum >= stop || sum > 1e300)
      return 0;
    if (double(n - j) <= a && term < sum * 0x1p-60)
      break;
  }
  const double b = 1 / sum;
  return c * b / (c - a * (1 - b));
}
} // namespace

double erlangC(double c, double a) { return erlangCAtMost(c, a, 0); }

double prefillWait(double service, double rate, double tail) {
  // M/D/1: an arrival waits with probability rho = rate x service, and the
  // wait's tail is C exp(-theta t) (Cramer-Lundberg), theta the positive
  // root of rate (exp(theta service) - 1) = theta and
  // C = (1 - rho) / (rho exp(theta service) - 1); the time it exceeds
  // with probability `tail`.
  const double rho = rate * service;
  if (rho >= 1)
    return std::numeric_limits<double>::infinity();
  if (rho <= tail || service <= 0)
    return 0;
  auto f = [&](double th) { return rate * std::expm1(th * service) - th; };
  // f < 0 just above 0 (rho < 1), convex, and grows without bound: from a
  // point where f >= 0, Newton's steps fall monotonically onto the root.
  double hi = 1.0 / service;
  while (f(hi) < 0)
    hi *= 2;
  for (int i = 0; i < 200; ++i) {
    const double slope = rate * service * std::exp(hi * service) - 1;
    const double next = hi - f(hi) / slope;
    if (!(next < hi) || hi - next <= hi * 0x1p-50)
      break;
    hi = next;
  }
  const double constant = (1 - rho) / (rho * std::exp(hi * service) - 1);
  return std::max(0.0, std::log(constant / tail) / hi);
}

double slotWait(double c, double hold, double rate, double tail) {
  // P(wait > t) = C(c, a) exp(-(c - a) t / hold), a = rate x hold.
  const double a = rate * hold;
  if (a >= c)
    return std::numeric_limits<double>::infinity();
  const double waits = erlangCAtMost(c, a, tail);
  if (waits <= tail)
    return 0;
  return hold / (c - a) * std::log(waits / tail);
}

double tpotPercentile(double step, double prefill, double rate,
                      double output, double tail) {
  // N, the prefills interleaved in the request's decode: the arrivals
  // during its own work x = output x step, plus those during their
  // prefills, and so on (a Galton-Watson tree with Poisson(rho) offspring,
  // rho = rate x prefill, from Poisson(a) roots, a = rate x x). Its law is
  // the generalized Borel-Tanner one, P(N = n) = a / (a + rho n)
  // exp(-(a + rho n)) (a + rho n)^n / n!, its cumulants a / (1 - rho),
  // a / (1 - rho)^3 and a (1 + 2 rho) / (1 - rho)^5. Its mean gives
  // step / (1 - rho), the mean TPOT.
  const double rho = rate * prefill;
  if (rho >= 1)
    return std::numeric_limits<double>::infinity();
  const double a = rate * output * step;
  if (rho <= 0 || a <= 0 || output <= 0)
    return step;
  // Fewer than 20 arrivals, or fewer than 100 near saturation (rho >
  // 0.85): the law summed to the quantile, where the expansion below is
  // off by up to 29% (and by orders of magnitude with a handful of
  // arrivals near saturation). The sum stops at 20,000 terms (a < 100
  // reaches its quantile before that up to rho = 0.98); past them the
  // expansion serves, an overestimate there.
  if (a < 20 || (a < 100 && rho > 0.85)) {
    double cdf = 0;
    for (double n = 0; n < 2e4; n += 1) {
      const double mean = a + rho * n;
      cdf += std::exp(std::log(a / mean) - mean + n * std::log(mean) -
                      std::lgamma(n + 1));
      if (cdf >= 1 - tail)
        return step + n * prefill / output;
    }
  }
  // Else the Cornish-Fisher expansion to the skewness: within 2% of the
  // summed quantile from a = 20 up to rho = 0.85, and from a = 100 within
  // 1.2% up to rho = 0.95 (4.6% at 0.98), closer with more arrivals
  // (PlannerTest). The normal quantile is kept for the
  // next call (the same tail).
  thread_local double lastTail = -1, z = 0;
  if (tail != lastTail) {
    lastTail = tail;
    z = std::sqrt(2.0) * inverseErfc(2 * tail);
  }
  const double sd = std::sqrt(a / std::pow(1 - rho, 3));
  const double skew = a * (1 + 2 * rho) / std::pow(1 - rho, 5) / (sd * sd * sd);
  const double n =
      std::max(0.0, a / (1 - rho) + sd * (z + (z * z - 1) * skew / 6));
  return step + n * prefill / output;
}

namespace {

/// The share of `experts` that `tokens` tokens routed to `perToken` each
/// touch, under uniform routing: 1 - (1 - k/E)^tokens.
double touchedExpertShare(double tokens, int64_t experts, int64_t perToken) {
  return 1.0 - std::pow(1.0 - double(perToken) / double(experts), tokens);
}

/// Sets a plan's data-parallel replicas and what follows from them: its
/// chips, nodes, racks and sequences in flight.
void setReplicas(Plan &p, int64_t dp, const TargetModel &target) {
  p.dp = dp;
  p.chips = p.tp * p.pp * p.ep * dp;
  p.nodes = (p.chips + target.chipsPerNode() - 1) / target.chipsPerNode();
  p.racks = (p.chips + target.chipsPerRack() - 1) / target.chipsPerRack();
  p.concurrency = dp * p.micro * p.batch;
}

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

/// One kernel's compute and memory times; it takes the longer.
struct Roofline {
  double compute = 0, memory = 0;
  double time() const { return std::max(compute, memory); }
  /// Its time where that side bounds it, else 0.
  double computeBound() const { return compute >= memory ? compute : 0; }
  double memoryBound() const { return compute >= memory ? 0 : memory; }
};

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

  System(const TargetModel &target, const Request &r)
      : t(target), spatial(!target.hasOffChipMemory()) {
    capacity = spatial ? double(target.sramBytesPerChip())
                       : double(target.offChipBytesPerChip());
    usable = spatial ? TargetModel::kPartitionSramShare : 0.9;
    memBw = spatial ? target.sramBytesPerSecondPerChip()
                    : target.offChipBytesPerSecondPerChip();
    eff = target.efficiency();
    // The matrix unit runs each format of the weights in a format it has
    // (fp8 weights on tsp-v1 as int8, fp4 on H100 as fp8), as the
    // compiled layers do.
    std::string bad;
    const std::vector<WeightShare> mix = weightMix(r.weights, bad);
    bytesPerWeight = weightBytes(mix);
    for (const WeightShare &w : mix) {
      NumericFormat wF = matrixFormat(target, w.format);
      double peak = target.peakFlopsPerChip(wF);
      if (peak <= 0) {
        wF = NumericFormat::BF16;
        peak = target.peakFlopsPerChip(wF);
      }
      weightFormats.push_back(MatmulFormat{
          w.share, peak * target.matrixEfficiency(wF),
          double(target.matrixHalfRows(wF))});
    }
    // A cache format the chip does not compute in runs at the weights'
    // rate as the rows grow (their formats' rates in their shares).
    NumericFormat kvF = matrixFormat(target, r.kv);
    double attnPeak = target.peakFlopsPerChip(kvF);
    attnRate = attnPeak > 0 ? attnPeak * target.matrixEfficiency(kvF)
                            : matmulRateAt(0, /*asRowsGrow=*/true);
    linkBw = target.chipLinkBytesPerSecondPerChip();
    latency = target.chipLinkLatencySeconds();
    sync = target.desc().system.links.syncSeconds;
    power = target.powerWattsPerChip();
  }

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
                double bytesEach) const {
    return Roofline{tokens * 2.0 * params / double(tp) / matmulRateAt(tokens),
                    params / double(tp) * bytesEach / (memBw * eff.memory)}
        .time();
  }
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
  Hop hopParts(double bytes, int64_t chips, int64_t stageChips) const {
    const auto &l = t.desc().system.links;
    double perLink = l.bytesPerSecond * eff.links;
    double share = double(l.perChip);
    int64_t n = std::max<int64_t>(2, chips);
    double valiant = 0;
    int hops = 1;
    switch (l.topology) {
    case Topology::Ring:
      share = n == 2 ? share : share / 2;
      break;
    case Topology::Torus2D:
      share = share / 4;
      break;
    case Topology::Dragonfly: {
      int64_t cpn = std::max<int64_t>(1, t.chipsPerNode());
      int64_t nodes = (n + cpn - 1) / cpn;
      bool crossNode = stageChips >= cpn && nodes > 1;
      if (nodes == 1)
        share = share / double(std::min(n, cpn) - 1);
      else if (!crossNode)
        share = share / 2 / double(cpn - 1);
      else if (stageChips % cpn != 0) {
        // The counterpart has another index: a local hop to this node's
        // chip of that index, then the global one, at the slower's rate.
        share = share / 2 / double(std::max(cpn - 1, nodes - 1));
        hops = 2;
      } else {
        share = share / 2 / double(nodes - 1);
        if (l.adaptiveRouting)
          valiant = share * double(nodes - 1) / 2;
      }
      break;
    }
    default:
      share = share / double(n - 1);
      break;
    }
    Hop minimal{double(hops) * latency, bytes / (share * perLink)};
    if (valiant > share) {
      Hop twoHop{2 * latency, bytes / (valiant * perLink)};
      if (twoHop.latency + twoHop.transfer <
          minimal.latency + minimal.transfer)
        return twoHop;
    }
    return minimal;
  }
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
                  double layerSync) {
  const double stage = stageLayers * (layerSeconds / chunks + layerSync);
  const double period = pp > 1 ? std::max(stage, hopTransfer) : stage;
  return double(pp) * stage + double(pp - 1) * hop + (chunks - 1) * period;
}

/// Tokens/s per user, per system and per watt of a plan whose tpot and
/// prefillShare are set. Every request's prefill takes its replica away
/// from decoding (prefill and decode share the chips), so a replica with C
/// sequences in flight makes C x output tokens in output x tpot + C x
/// prefillShare, and a sequence waits for the others' prefills between its
/// steps (tpotLoaded).
void setRates(Plan &p, const Request &r, double wattsPerChip) {
  double perReplica = double(p.micro * p.batch);
  double out = double(r.outputLen);
  if (r.scenario != "server") {
    // Offline: every slot always occupied.
    p.tpotLoaded = p.tpot + (perReplica - 1) * p.prefillShare / out;
    p.tokensPerSecond = double(p.dp) * perReplica * out /
                        (out * p.tpot + perReplica * p.prefillShare);
    p.requestRate = p.tokensPerSecond / double(p.dp) / out;
    p.ttft = p.ttftAlone;
    p.tpotP99 = p.tpotLoaded;
  } else {
    // Server: Poisson arrivals at `rate` per replica. Prefills take
    // rate x prefillShare of the replica's time and the decode steps the
    // rest, so a step is held up to tpot / (1 - rate x prefillShare) (at
    // saturation tpot + C x prefillShare / output, about the offline
    // figure); a request holds one of the
    // perReplica slots for its output tokens at that pace, and waits for
    // a free one (M/M/c: output lengths vary), then for the prompts ahead
    // of it to be prefilled (M/D/1). The highest rate whose
    // 99th-percentile time to first token and loaded time per output
    // token meet the targets. The TTFT bound: each wait's 99.5th
    // percentile (their sum exceeds the total's 99th percentile with at
    // most 0.5% + 0.5%), its prefill and its first step.
    const double ps = p.prefillShare, step = p.tpot;
    auto tpotAt = [&](double rate) { return step / (1.0 - rate * ps); };
    auto ttftAt = [&](double rate) {
      const double steps = double(p.prefillSteps);
      return p.ttftAlone + steps * (tpotAt(rate) - step) +
             slotWait(perReplica, out * tpotAt(rate), rate, 0.005) +
             prefillWait(ps, rate, 0.005);
    };
    auto meetsAt = [&](double rate) {
      return (r.tpot <= 0 ||
              tpotPercentile(step, ps, rate, out, 0.01) <= r.tpot) &&
             (r.ttft <= 0 || ttftAt(rate) <= r.ttft);
    };
    const double busy = out * step + perReplica * ps;
    const double lo = highestMeeting(busy > 0 ? perReplica / busy : 0, meetsAt);
    p.requestRate = lo;
    p.tpotLoaded = tpotAt(lo);
    p.tpotP99 = tpotPercentile(step, ps, lo, out, 0.01);
    p.ttft = ttftAt(lo);
    p.tokensPerSecond = double(p.dp) * lo * out;
  }
  p.tokensPerSecondPerUser = 1.0 / p.tpotLoaded;
  p.tokensPerSecondPerWatt =
      wattsPerChip > 0 ? p.tokensPerSecond / (wattsPerChip * double(p.chips))
                       : 0;
}

const char *bigger(double compute, double memory, double link) {
  if (link >= compute && link >= memory)
    return "link";
  return compute >= memory ? "compute" : "memory bandwidth";
}

} // namespace

namespace {
/// The formats a matrix unit may multiply weights stored as `weights` in,
/// in order of preference: the weights' own, then the others of its width
/// (fp4, which few units run, falls back to one byte).
std::vector<NumericFormat> matrixCandidates(const std::string &weights) {
  std::optional<NumericFormat> asked = rt::parseNumericFormat(weights);
  NumericFormat own = asked.value_or(NumericFormat::F8);
  std::vector<NumericFormat> c{own};
  switch (own) {
  case NumericFormat::F4:
  case NumericFormat::F8:
  case NumericFormat::I8:
    c.insert(c.end(), {NumericFormat::F8, NumericFormat::I8});
    break;
  case NumericFormat::BF16:
  case NumericFormat::F16:
    c.insert(c.end(), {NumericFormat::BF16, NumericFormat::F16});
    break;
  case NumericFormat::F32:
  case NumericFormat::TF32:
    c.insert(c.end(), {NumericFormat::F32, NumericFormat::TF32});
    break;
  }
  return c;
}
} // namespace

NumericFormat matrixFormat(const TargetModel &target,
                           const std::string &weights) {
  std::vector<NumericFormat> c = matrixCandidates(weights);
  for (NumericFormat f : c)
    if (target.matrixSupports(f))
      return f;
  return c.front();
}

std::string layerPrecision(const TargetModel &target,
                           const std::string &weights) {
  std::vector<NumericFormat> kernel;
  for (NumericFormat f : matrixCandidates(weights))
    if (rt::kernelPrecisionFormat(rt::numericFormatName(f)))
      kernel.push_back(f);
  for (NumericFormat f : kernel)
    if (target.matrixSupports(f))
      return rt::numericFormatName(f);
  return rt::numericFormatName(kernel.front());
}

std::string layerKvStorage(const std::string &kv) {
  if (rt::storageFormat(kv))
    return kv;
  return "fp8"; // int8 and fp4: the compiler's one-byte storage
}

namespace {

/// One pipeline stage's prefill (Pricer::prefillStage): its kernels'
/// rooflines, the elementwise kernels and the link, and their sums.
struct StageTimes {
  Roofline matmuls, attention;
  double elementwise, link;
  double total() const {
    return matmuls.time() + attention.time() + elementwise + link;
  }
  double compute() const {
    return matmuls.computeBound() + attention.computeBound();
  }
  double memory() const {
    return matmuls.memoryBound() + attention.memoryBound() + elementwise;
  }
};

/// One candidate as price() prices it, step by step: what a chip of it
/// holds (fitsMemory), its decode step (priceDecode), then its prompts'
/// prefill (pricePrefill). The steps share the figures of the layout
/// fitsMemory works out and of the step priceDecode prices, kept here.
struct Pricer {
  const ModelCost &m;
  const TargetModel &target;
  const Request &r;
  const int64_t tp, pp, ep, dp, batch, micro;
  System s;
  /// The bytes of a weight, a KV-cache element and an activation, and the
  /// layers of a stage.
  const double wB, kvB, aB, Ls;
  /// Set by fitsMemory: the layout of a chip's share.
  double headsShare = 0, expertsPerChip = 0, ctxAvg = 0, kvPerTokenLayer = 0,
         kvBytes = 0, attnPerChip = 0, weights = 0, memory = 0,
         gatheredHeads = 0;
  /// Set by priceDecode, which pricePrefill follows: the experts a token's
  /// matmuls run, the prompt's tokens, the token budget and the rows of a
  /// step's matmuls.
  double routed = 0, L = 0, budget = 0, stepRows = 0;

  Pricer(const ModelCost &m, const TargetModel &target, const Request &r,
         const Parallelism &degrees)
      : m(m), target(target), r(r), tp(degrees.tp), pp(degrees.pp),
        ep(degrees.ep), dp(degrees.dp), batch(degrees.batch),
        micro(degrees.micro), s(target, r), wB(s.bytesPerWeight),
        kvB(precisionBytes(r.kv)), aB(precisionBytes(r.activations)),
        Ls(std::ceil(double(m.layers) / double(pp))) {}

  /// Whether the weights, the KV cache and the activations a chip holds
  /// fit its memory; sets the layout.
  bool fitsMemory() {
    // Attention splits by key-value heads (graph-partition's rules). Past
    // them, when tp is a multiple of the KV heads and divides the query
    // heads, each chip takes its query heads of one KV head, whose cache the
    // chips of that head share, after all-gathers of k and v; otherwise the
    // attention and the whole KV cache are on every chip of the group, after
    // all-gathers of q, k and v.
    const bool pastKvHeads = tp > m.kvHeads;
    const bool headsSplit =
        !pastKvHeads || (tp % m.kvHeads == 0 && m.heads % tp == 0);
    const double kvHeadsPerChip =
        !pastKvHeads ? std::ceil(double(m.kvHeads) / double(tp))
        : headsSplit ? 1.0
                     : double(m.kvHeads);
    headsShare = headsSplit ? 1.0 / double(tp) : 1.0;
    // Past the KV heads with the heads split, graph-partition computes the
    // k and v projections per KV head on every chip of the head's group
    // when that fits (each chip holds one KV head's k and v weights;
    // nothing is gathered, one collective and its wait fewer a layer), else
    // each chip computes a part and the group gathers them.
    const double kvProjParams =
        2.0 * double(m.hidden) * double(m.kvHeads) * double(m.headDim);
    bool kvShared = pastKvHeads && headsSplit;
    expertsPerChip = std::ceil(double(m.experts) / double(ep));
    double mlpPerChip = expertsPerChip * m.expertParams / double(tp);
    // KV cache: `micro` micro-batches of `batch` sequences are in flight;
    // each stage holds its layers' cache for all of them (attention is data
    // parallel over the ep groups).
    double inFlight = double(micro) * double(batch) / double(ep);
    double ctxMax = double(r.inputLen + r.outputLen);
    ctxAvg = double(r.inputLen) + double(r.outputLen) / 2;
    kvPerTokenLayer = 2.0 * kvHeadsPerChip * m.headDim * kvB;
    kvBytes = inFlight * ctxMax * Ls * kvPerTokenLayer;
    // Activations: a few hidden vectors per sequence in flight.
    double act = inFlight * 8.0 * m.hidden * aB;
    for (;;) {
      // Weights: projections split by tp, experts over ep then tp; the
      // embedding on the first stage and the head on the last.
      attnPerChip = kvShared ? (m.attnParams - kvProjParams) / double(tp) +
                                   kvProjParams / double(m.kvHeads)
                             : m.attnParams / double(tp);
      // Stages are balanced by the partitioner (whole layers, the embedding
      // and head on the end stages): a chip holds its share of everything
      // plus up to half a layer of rounding.
      double layerPerChip = attnPerChip + mlpPerChip;
      double total = double(m.layers) * layerPerChip +
                     (m.embedParams + m.headParams) / double(tp);
      weights =
          (total / double(pp) + (pp > 1 ? 0.5 * layerPerChip : 0.0)) * wB;
      memory = weights + kvBytes + act;
      if (memory <= s.capacity * s.usable || !kvShared)
        break;
      kvShared = false;
    }
    gatheredHeads = !pastKvHeads ? 0.0
                    : kvShared   ? 0.0
                    : headsSplit ? double(2 * m.kvHeads)
                                 : double(m.heads + 2 * m.kvHeads);
    if (memory > s.capacity * s.usable)
      return false;
    return true;
  }

  /// The plan of the candidate's degrees and batch, with what a chip holds.
  Plan startPlan() const {
    Plan p;
    p.system = target.name();
    p.kvGathered = gatheredHeads > 0;
    p.tp = tp;
    p.pp = pp;
    p.ep = ep;
    p.batch = batch;
    p.micro = micro;
    setReplicas(p, dp, target);
    p.memoryPerChip = memory;
    p.weightsPerChip = weights;
    p.kvPerChip = kvBytes;
    p.capacityPerChip = s.capacity;
    p.memory = s.spatial ? "SRAM" : "HBM";
    return p;
  }

  /// The elementwise kernels of `tokens` tokens through the stage's
  /// layers, at the activations' precision, with TensorRT-LLM's fusions:
  /// each of the two residual adds fused with the RMSNorm after it (reading
  /// the residual and the branch, writing the sum and the normed: 4 hidden
  /// vectors), and the gate's SiLU with the up projection's product
  /// (reading 2, writing 1 intermediate vector of each expert a token is
  /// routed to, split over tp; RoPE and the softmax are in the attention
  /// kernel). The matmuls' own activations are not counted: where the
  /// matmuls are memory bound (small batches) they are small against the
  /// weights, and where they are large the matmuls are compute bound.
  double elementwiseBytes(double tokens) const {
    const double intermediate = m.expertParams / (3.0 * double(m.hidden));
    // (The hidden vectors' kernels, like attention, are data parallel
    // over the ep groups.)
    return Ls * aB * tokens *
           (8.0 * double(m.hidden) / double(ep) +
            (s.spatial ? double(m.experts) : double(m.expertsPerToken)) *
                3.0 * intermediate / double(tp * ep));
  }

  /// An expert's matmuls multiply its share of the routed rows on a GPU,
  /// which runs only the experts tokens are routed to (rowsPerExpert); a
  /// static schedule runs every expert on every token.
  double expertRows(double rows) const {
    return s.spatial ? rows
                     : rowsPerExpert(rows, m.experts, m.expertsPerToken);
  }

  /// The seconds of `n` tokens' weight matmuls through the stage, in
  /// matmuls of `rows` rows.
  double matmulSeconds(double n, double rows) const {
    return Ls * n * 2.0 *
           (attnPerChip / s.matmulRateAt(rows) +
            routed * m.expertParams / double(tp * ep) /
                s.matmulRateAt(expertRows(rows)));
  }

  /// Decode: one micro-batch through one stage; sets `p`'s step (tpot)
  /// and what bounds it.
  void priceDecode(Plan &p) {
    double tokens = double(batch);
    double perEp = tokens / double(ep);
    // Mixture of experts: a GPU runs the experts its tokens are routed to; a
    // static schedule (spatial presets), fixed before the routing is known,
    // reserves every expert of the chip for every token (buildDecodeStep's
    // block, which the compiled layers run).
    routed = s.spatial ? double(m.experts) : double(m.expertsPerToken);
    double touched =
        m.experts == 1 ? 1.0
        : s.spatial
            ? expertsPerChip
            : expertsPerChip *
                  touchedExpertShare(tokens, m.experts, m.expertsPerToken);
    // The rows of a step's matmuls: its decode tokens and, where prompts
    // are prefilled between the steps, the prompt tokens a step carries in
    // the steady state (a prompt of `input` tokens for each sequence that
    // finishes, one in `output` a step: TensorRT-LLM's in-flight batching
    // puts them in the same matmuls; plan() keeps the sum within the token
    // budget). The decode and the prompt tokens are priced at these mean
    // rows: where fewer than one prompt a step arrives, the steps that
    // carry one have more rows and the others fewer, and under the law's
    // fixed cost a step (matmulRateAt) the mean rows give the same total
    // time.
    const bool interleaved = !r.decodeOnly && !r.prefillOnly;
    budget = double(std::max<int64_t>(1, r.maxNumTokens));
    L = double(r.inputLen);
    const double perDecodeToken = 1.0 + L / double(r.outputLen);
    stepRows = interleaved
                   ? std::max(tokens, std::min(budget, tokens * perDecodeToken))
                   : tokens;
    // A roofline per kernel: the weight matmuls (their FLOPs against the
    // weights read) and the attention over the cache (its FLOPs against the
    // cache read) run one after the other, each at its own bound, so a
    // compute-bound batch of matmuls does not hide a memory-bound attention.
    const double weightsRead =
        Ls * (attnPerChip + touched * m.expertParams / double(tp)) * wB;
    const double cacheRead = perEp * ctxAvg * Ls * kvPerTokenLayer;
    const double attnFlops = Ls * perEp * ctxAvg * m.attnFlopsPerPosition() *
                             headsShare;
    const Roofline matmuls{matmulSeconds(tokens, stepRows),
                           weightsRead / (s.memBw * s.eff.memory)};
    const Roofline attention{attnFlops / s.attnRate,
                             cacheRead / (s.memBw * s.eff.memory)};
    // The elementwise kernels between them, memory bound.
    const double elementwise =
        elementwiseBytes(tokens) / (s.memBw * s.eff.memory);
    double vec = tokens * m.hidden * aB;
    double gather =
        gatheredHeads > 0
            ? 2 * s.allReduce(tokens * gatheredHeads * m.headDim * aB / 2, tp)
            : 0;
    double tLink =
        Ls *
        (2 * s.allReduce(vec, tp) + gather +
         (m.experts > 1 ? 2 * s.allToAll(vec * m.expertsPerToken, ep) : 0) +
         s.syncSeconds(tp, ep, p.kvGathered));
    double stage = matmuls.time() + attention.time() + elementwise + tLink;
    double hops = double(pp - 1) * s.hop(vec, tp * pp * ep, tp * ep);
    // The LM head of the last stage: its weights once per step.
    double head = s.lmHead(m.headParams, tokens, tp, wB);
    p.tpot = double(pp) * stage + hops + head;
    p.decodeBound = bigger(matmuls.computeBound() + attention.computeBound(),
                           matmuls.memoryBound() + attention.memoryBound() +
                               elementwise,
                           tLink + hops / pp);
  }

  /// Prefill through one stage of `tokens` prompt tokens, `prompts` prompts
  /// of L tokens each, in matmuls of `rows` rows: compute, memory and link
  /// time (the weights read once for all of them).
  StageTimes prefillStage(double tokens, double prompts, double rows) const {
    // The matmuls against the weights read once; the attention over each
    // prompt's L^2 / 2 positions against the cache written.
    double attnFlops =
        Ls * prompts * L * L / 2 * m.attnFlopsPerPosition() * headsShare;
    double weightsRead =
        Ls * (attnPerChip + expertsPerChip * m.expertParams / double(tp)) * wB;
    double cacheWritten = tokens * Ls * kvPerTokenLayer;
    double vectors = tokens * m.hidden * aB;
    double link =
        Ls *
        (2 * s.allReduce(vectors, tp) +
         (m.experts > 1 ? 2 * s.allToAll(vectors * m.expertsPerToken / ep, ep)
                        : 0));
    const double memory = s.memBw * s.eff.memory;
    return StageTimes{{matmulSeconds(tokens, rows), weightsRead / memory},
                      {attnFlops / s.attnRate, cacheWritten / memory},
                      elementwiseBytes(tokens) / memory,
                      link};
  }

  /// The prompt's prefill, alone and under load; sets `p`'s prompt pass,
  /// time to first token alone, what bounds it and prefill share (after
  /// priceDecode: it rides on the decode steps).
  void pricePrefill(Plan &p) const {
    // One request alone (the time to first token): its prompt through the
    // stages, riding on as many of its micro-batch's decode steps as the
    // token budget spreads it over (the last yields its first token). A
    // spatial chip's static schedule pipelines the prompt's chunks through
    // the stages as it does micro-batches (the chunk compiled prefill
    // uses); on GPUs a serving engine sends a request's next chunk only
    // after the one before has left the last stage (TensorRT-LLM's
    // in-flight batching), so the prompt passes the stages as one, in
    // matmuls of at most the token budget's rows.
    const double promptChunk =
        s.spatial ? std::min(L, double(kSpatialPrefillChunk)) : L;
    StageTimes one = prefillStage(L, 1, std::min(promptChunk, budget));
    p.prompt.chunks = L / promptChunk;
    const System::Hop chunkHop =
        s.hopParts(promptChunk * m.hidden * aB, tp * pp * ep, tp * ep);
    p.prompt.hop = chunkHop.latency + chunkHop.transfer;
    p.prompt.hopTransfer = chunkHop.transfer;
    p.prompt.layer = one.total() / Ls;
    p.prompt.layerSync = s.syncSeconds(tp, ep, p.kvGathered);
    p.prompt.alone = promptPass(pp, Ls, p.prompt.layer, p.prompt.chunks,
                                p.prompt.hop, p.prompt.hopTransfer,
                                p.prompt.layerSync);
    // (Room for at least one prompt token a step: plan() keeps the batch
    // below the budget; a direct call past it gets a token a step.)
    const int64_t room = std::max<int64_t>(1, r.maxNumTokens - batch);
    p.prefillSteps = r.decodeOnly || r.prefillOnly
                         ? 1
                         : std::max<int64_t>(1, (r.inputLen + room - 1) / room);
    p.ttftAlone = p.prompt.alone + double(p.prefillSteps) * p.tpot;
    p.prefillBound = bigger(one.compute(), one.memory(), one.link);
    // Under load: prompts batched into chunks of the token budget (a longer
    // prompt is one chunk), which read each stage's weights once and
    // flow through the stages one behind another, so a chunk holds the
    // replica for one stage's time; each prompt pays its share. Their
    // matmuls have the steps' rows (prefill-only chips: the budget's).
    double chunk = std::max(L, double(r.maxNumTokens));
    p.prefillShare =
        r.decodeOnly ? 0
                     : prefillStage(chunk, chunk / L,
                                    r.prefillOnly ? std::min(chunk, budget)
                                                  : stepRows)
                               .total() /
                           (chunk / L);
  }
};

} // namespace

std::optional<Plan> price(const ModelCost &m, const TargetModel &target,
                          const Request &r, const Parallelism &degrees) {
  Pricer c(m, target, r, degrees);
  if (c.s.bytesPerWeight <= 0)
    return std::nullopt; // weights validate() rejects
  if (!c.fitsMemory())
    return std::nullopt;
  Plan p = c.startPlan();
  c.priceDecode(p);
  c.pricePrefill(p);
  setRates(p, r, c.s.power);
  return p;
}

namespace {

bool meets(const Plan &p, const Request &r) {
  return (r.ttft <= 0 || p.ttft <= r.ttft) &&
         (r.tpot <= 0 || p.tpotP99 <= r.tpot);
}

/// A plan's degrees and batch: what identifies it while the search
/// re-ranks (moves) the plans.
using PlanId = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;
PlanId idOf(const Plan &p) {
  return {p.tp, p.pp, p.ep, p.dp, p.batch, p.micro};
}

/// Orders plans: with a load to serve (concurrency or rate), the fewest
/// chips that serve it, then the lower time per output token; else the
/// most tokens/s per chip, then the fewer chips; prefill-only chips (a
/// disaggregated plan's prefill system) the most prompts/s per chip, as
/// planDisaggregated chooses among them, then the faster prompt. The
/// plans' degrees and batch (idOf) break the remaining ties, so a plain
/// std::sort of a list without repeated plans is deterministic.
bool better(const Plan &a, const Plan &b, const Request &r) {
  bool load = r.concurrency > 0 || r.requestRate > 0;
  if (r.prefillOnly) {
    double ca = a.prefillShare * double(a.chips),
           cb = b.prefillShare * double(b.chips);
    if (ca != cb)
      return ca < cb;
    if (a.prompt.alone != b.prompt.alone)
      return a.prompt.alone < b.prompt.alone;
  } else if (load) {
    if (a.chips != b.chips)
      return a.chips < b.chips;
    if (a.tpotLoaded != b.tpotLoaded)
      return a.tpotLoaded < b.tpotLoaded;
  } else {
    // Tokens/s per chip to within a relative 1e-9 (replicas of one layout
    // differ by rounding), as buckets of its logarithm: an order, where
    // comparing within a tolerance is not one (sorting needs an order).
    auto bucket = [](const Plan &p) {
      double e = p.tokensPerSecond / double(p.chips);
      return e > 0 ? std::llround(std::log(e) * 1e9)
                   : std::numeric_limits<long long>::min();
    };
    long long ea = bucket(a), eb = bucket(b);
    if (ea != eb)
      return ea > eb;
    if (a.chips != b.chips)
      return a.chips < b.chips;
  }
  return idOf(a) < idOf(b);
}

/// Data-parallel replicas the load asks for, unclamped, when each replica
/// holds `slots` sequences and serves `requestsPerReplica` requests/s. A
/// replica that serves no rate at all (its targets admit none in the
/// server scenario) counts as one: it misses its targets (meets) and may
/// still be the nearest plan.
double replicasNeeded(double slots, double requestsPerReplica,
                      const Request &r) {
  double dp = 1;
  if (r.concurrency > 0)
    dp = std::max(dp, std::ceil(double(r.concurrency) / slots));
  if (r.requestRate > 0 && requestsPerReplica > 0)
    dp = std::max(dp, std::ceil(r.requestRate / requestsPerReplica));
  return dp;
}

/// The replicas a candidate (one replica) needs for the load; more than
/// r.maxChips when that many do not fit.
int64_t replicas(const Plan &one, const Request &r) {
  double dp = replicasNeeded(double(one.concurrency),
                             one.tokensPerSecond / double(r.outputLen), r);
  return dp <= double(r.maxChips) ? static_cast<int64_t>(dp) : r.maxChips + 1;
}

/// Tokens/s per chip: what plans are ranked by without a load, and the
/// Pareto front's other axis.
double perChip(const Plan &p) {
  return p.chips > 0 ? p.tokensPerSecond / double(p.chips) : 0;
}

/// Adds `p` to the Pareto front `front` of tokens/s per user against
/// tokens/s per chip, unless a plan there is at least as good on both (of
/// two equal plans the first by idOf stays, whatever the order they come
/// in: deterministic), and removes the plans it is at least as good as.
void addToFront(std::vector<Plan> &front, const Plan &p) {
  auto atLeast = [](const Plan &a, const Plan &b) {
    return a.tokensPerSecondPerUser >= b.tokensPerSecondPerUser &&
           perChip(a) >= perChip(b);
  };
  for (const Plan &q : front)
    if (atLeast(q, p) && (!atLeast(p, q) || idOf(q) < idOf(p)))
      return;
  std::erase_if(front, [&](const Plan &q) { return atLeast(p, q); });
  front.push_back(p);
}

/// The front best per user first (then fewer chips: deterministic).
void sortFront(std::vector<Plan> &front) {
  std::sort(front.begin(), front.end(), [](const Plan &a, const Plan &b) {
    if (a.tokensPerSecondPerUser != b.tokensPerSecondPerUser)
      return a.tokensPerSecondPerUser > b.tokensPerSecondPerUser;
    return idOf(a) < idOf(b);
  });
}

} // namespace

int64_t namedSize(const TargetModel &system) {
  return system.chips() > 1 && system.chips() >= system.chipsPerRack()
             ? system.chips()
             : 0;
}

ChipRange chipRange(const TargetModel &system, const Request &r) {
  if (r.maxChips != 0)
    return {r.maxChips, "--max-chips"};
  if (int64_t size = namedSize(system))
    return {size, system.name() + "'s size; --max-chips searches more"};
  return {kDefaultMaxChips, "the default; --max-chips sets it"};
}

int64_t maxSustainedBatch(const Request &r) {
  if (r.decodeOnly || r.prefillOnly)
    return std::max<int64_t>(0, r.maxNumTokens);
  // B x (1 + input / output) <= budget, in integers (128-bit: the flags
  // allow 1e12 each).
  __int128 b = __int128(r.maxNumTokens) * r.outputLen /
               (__int128(r.outputLen) + r.inputLen);
  return std::max<int64_t>(0, int64_t(std::min<__int128>(b, r.maxNumTokens)));
}

double rowsPerExpert(double rows, int64_t experts, int64_t perToken) {
  if (experts <= 1 || rows <= 0)
    return rows;
  return rows * double(perToken) /
         (double(experts) * touchedExpertShare(rows, experts, perToken));
}

namespace {

std::string validate(const Request &r) {
  if (r.inputLen < 1 || r.outputLen < 1)
    return "--input-len and --output-len must be at least 1";
  if (r.maxNumTokens < 1)
    return "--max-num-tokens must be at least 1";
  if (maxSustainedBatch(r) < 1) {
    // The least whole budget that holds one: ceil((output + input) / output).
    __int128 least = (__int128(r.outputLen) + r.inputLen + r.outputLen - 1) /
                     r.outputLen;
    return "--max-num-tokens=" + std::to_string(r.maxNumTokens) +
           " is below one sequence's tokens per step (its decode token and "
           "the input/output prompt tokens of its successor need at least " +
           std::to_string(int64_t(least)) + ")";
  }
  if (r.batch > maxSustainedBatch(r))
    return r.decodeOnly
               ? "--batch=" + std::to_string(r.batch) +
                     " decode tokens a step are over --max-num-tokens=" +
                     std::to_string(r.maxNumTokens)
               : "--batch=" + std::to_string(r.batch) + " needs " +
                     std::to_string(r.batch) + " x (1 + " +
                     std::to_string(r.inputLen) + "/" +
                     std::to_string(r.outputLen) +
                     ") tokens per step, over --max-num-tokens=" +
                     std::to_string(r.maxNumTokens) +
                     " (the largest batch it keeps in flight: " +
                     std::to_string(maxSustainedBatch(r)) + ")";
  if (std::string bad; weightMix(r.weights, bad).empty())
    return bad;
  for (const std::string *p : {&r.kv, &r.activations})
    if (precisionBytes(*p) == 0)
      return unknownPrecision(*p);
  if (r.maxChips < 1)
    return "--max-chips must be at least 1";
  if (r.concurrency < 0 || r.requestRate < 0 || r.ttft < 0 || r.tpot < 0)
    return "concurrency, rate and targets must not be negative";
  if (r.top < 1)
    return "--top must be at least 1";
  if (r.scenario != "offline" && r.scenario != "server")
    return "--scenario must be offline or server, got '" + r.scenario + "'";
  if (r.scenario == "server" && r.ttft <= 0)
    return "--scenario=server needs --ttft (the bound on the 99th percentile "
           "of the time to first token under Poisson arrivals)";
  return "";
}

/// The request's latency targets, in words.
std::string targetsOf(const Request &r) {
  return (r.ttft > 0 ? "time to first token " +
                           std::to_string(int64_t(r.ttft * 1e3)) + " ms"
                     : std::string()) +
         (r.ttft > 0 && r.tpot > 0 ? ", " : "") +
         (r.tpot > 0 ? "time per output token " +
                           std::to_string(r.tpot * 1e3).substr(0, 6) + " ms"
                     : std::string());
}

/// Bytes with a unit (kB, MB, GB: three figures).
std::string bytesText(double b) {
  char buf[32];
  const char *unit = "bytes";
  double v = b;
  if (b >= 1e9) {
    v = b / 1e9;
    unit = "GB";
  } else if (b >= 1e6) {
    v = b / 1e6;
    unit = "MB";
  } else if (b >= 1e3) {
    v = b / 1e3;
    unit = "kB";
  }
  std::snprintf(buf, sizeof buf,
                v >= 100 || unit[0] == 'b' ? "%.0f %s" : "%.3g %s", v, unit);
  return buf;
}

/// What one chip of the split tp x pp x ep still holds, as price() counts
/// it at batch 1, largest first, against what it may fill: the tensors
/// that block a model no split fits. (At pp = layers a stage is one layer,
/// plus up to half a layer of the stages' rounding.)
std::string finestSplitHolds(const ModelCost &m, const System &s,
                             const Request &r, int64_t tp, int64_t pp,
                             int64_t ep) {
  const double wB = s.bytesPerWeight, kvB = precisionBytes(r.kv),
               aB = precisionBytes(r.activations);
  const double layers = double(m.layers) / double(pp) + (pp > 1 ? 0.5 : 0.0);
  const double Ls = std::ceil(double(m.layers) / double(pp));
  const bool pastKvHeads = tp > m.kvHeads;
  const bool headsSplit =
      !pastKvHeads || (tp % m.kvHeads == 0 && m.heads % tp == 0);
  const double kvHeadsPerChip = !pastKvHeads
                                    ? std::ceil(double(m.kvHeads) / double(tp))
                                : headsSplit ? 1.0
                                             : double(m.kvHeads);
  const double experts = std::ceil(double(m.experts) / double(ep));
  struct Part {
    std::string what;
    double bytes;
  };
  char n[64];
  std::snprintf(n, sizeof n, "%g", layers);
  const std::string ofLayers =
      std::string(" of ") + n + " layer" + (layers == 1 ? "" : "s");
  std::vector<Part> parts = {
      {(m.experts > 1 ? "the experts' MLP (w1, w2, w3 of " +
                            std::to_string(int64_t(experts)) + " experts)"
                      : std::string("mlp (gate_proj, up_proj, down_proj)")) +
           ofLayers,
       layers * experts * m.expertParams / double(tp) * wB},
      {"self_attn (q_proj, k_proj, v_proj, o_proj)" + ofLayers,
       layers * m.attnParams / double(tp) * wB},
      {"embed_tokens and lm_head's share",
       (m.embedParams + m.headParams) / double(tp) / double(pp) * wB},
      {"the KV cache of one sequence of " +
           std::to_string(r.inputLen + r.outputLen) + " tokens",
       double(r.inputLen + r.outputLen) * Ls * 2.0 * kvHeadsPerChip *
           m.headDim * kvB / double(ep)},
      {"activations", 8.0 * m.hidden * aB / double(ep)}};
  std::sort(parts.begin(), parts.end(), [](const Part &a, const Part &b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.what < b.what;
  });
  double total = 0;
  for (const Part &p : parts)
    total += p.bytes;
  const double usable = s.capacity * s.usable;
  std::string out = "at the finest split, tp " + std::to_string(tp) + " x pp " +
                    std::to_string(pp) + " x ep " + std::to_string(ep) + " (" +
                    std::to_string(tp * pp * ep) + " chips), a chip holds " +
                    bytesText(total) + " against the " + bytesText(usable) +
                    " it may fill (" +
                    std::to_string(int64_t(std::lround(s.usable * 100))) +
                    "% of " + bytesText(s.capacity) + "): ";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].bytes <= 0)
      continue;
    out += (i ? ", " : "") + parts[i].what + " " + bytesText(parts[i].bytes) +
           (parts[i].bytes > usable ? " (over the chip alone)" : "");
  }
  return out;
}

std::string describe(const Plan &p) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%lld chips (tp %lld x pp %lld x ep %lld x dp %lld, batch "
                "%lld): time to first token %.1f ms, time per output token "
                "%.2f ms",
                (long long)p.chips, (long long)p.tp, (long long)p.pp,
                (long long)p.ep, (long long)p.dp, (long long)p.batch,
                p.ttft * 1e3, p.tpotLoaded * 1e3);
  std::string out = buf;
  if (p.tpotP99 != p.tpotLoaded) {
    std::snprintf(buf, sizeof buf, " (99th percentile %.2f ms)",
                  p.tpotP99 * 1e3);
    out += buf;
  }
  return out;
}

} // namespace

namespace {

/// The median of `v` (non-empty; the upper one of an even count).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// The most prefill layer shapes (tp x ep chips, system chips) compiled
/// in one search.
constexpr size_t kPrefillGroups = 3;

/// What compilePrefill keeps between its calls: the prefill shapes
/// compiled (keyed by tp x ep chips and system chips) and each plan's
/// estimate (keyed by its degrees: the plans move).
struct PrefillState {
  struct Prefill {
    int64_t chunk = 0; // 0: did not compile
    int64_t smallestTried = 0;
    double seconds = 0;
    std::string why;
  };
  using Key = std::pair<int64_t, int64_t>;
  std::map<Key, Prefill> compiled;
  std::map<PlanId, double> estimate;
  /// Each plan's estimated synchronisation a prompt chunk waits per layer.
  std::map<PlanId, double> estimateSync;
};

/// Prices the prompts of spatial plans by compiled prefill chunks
/// (chunked prefill): the prompt of L tokens in chunks of C, each one
/// layer of `tokens = C` new tokens of one sequence compiled on the plan's
/// tp x ep chips (as the first chips of its system, like the decode layer).
/// A chunk's time grows linearly with the cache before it (its attention
/// and the cache it carries), which grows from 1 to L - C tokens, so the
/// first chunk and the last are compiled and the prompt's layer time is
/// L / C times their mean. The top plans' groups are compiled (a few
/// rounds, as the order moves); every other plan's estimate is scaled by
/// its group's ratio of compiled to estimated time, else the median
/// ratio. The layer time scales the prompt's pass alone (time to first
/// token) and its share under load alike. Called before and after the
/// decode layers are compiled (which re-rank the plans), with `state` kept
/// between the calls; returns whether it compiled anything.
bool compilePrefill(
    PrefillState &state, Result &result, std::vector<Plan> &calibrateOnly,
    const ModelCost &m, const std::string &configPath,
    const std::string &systemName, const std::string &precision,
    const std::string &kvStorage, const Request &r, double wattsPerChip,
    const LayerCompiler &compileLayer, const std::function<void()> &order,
    const std::function<System::Hop(const Plan &, int64_t)> &chunkHop) {
  using Prefill = PrefillState::Prefill;
  using Key = PrefillState::Key;
  std::map<Key, Prefill> &compiled = state.compiled;
  auto keyOf = [](const Plan &p) { return Key{p.tp * p.ep, p.chips}; };
  const int64_t L = r.inputLen;
  rt::Progress bar("plan: compiling prefill chunks", 0);
  auto compile = [&](const Plan &p) {
    Prefill out;
    LayerSpec layer;
    layer.tp = p.tp * p.ep;
    layer.precision = precision;
    layer.kvStorage = kvStorage;
    layer.systemChips = p.chips;
    for (int64_t chunk = std::min(L, kSpatialPrefillChunk);; chunk /= 2) {
      bar.update(int64_t(compiled.size()),
                 "tp " + std::to_string(layer.tp) + ", " +
                     std::to_string(chunk) + " tokens a chunk");
      layer.tokens = chunk;
      layer.past = 1;
      out.smallestTried = chunk;
      std::optional<double> first =
          compileLayer(configPath, systemName, layer, out.why);
      std::optional<double> last = first;
      if (first && L > chunk) {
        layer.past = L - chunk;
        last = compileLayer(configPath, systemName, layer, out.why);
      }
      if (first && last && *first > 0 && *last > 0) {
        out.chunk = chunk;
        out.seconds = double(L) / double(chunk) * (*first + *last) / 2;
        out.why.clear();
        break;
      }
      if (first && last && out.why.empty())
        out.why = "the compiled chunk took no time";
      if (chunk / 2 < kSmallestPrefillChunk)
        break;
    }
    compiled[keyOf(p)] = out;
  };
  // Each plan's estimate, kept to scale by the calibration.
  auto &estimate = state.estimate;
  auto &estimateSync = state.estimateSync;
  for (const std::vector<Plan> *plans : {&result.plans, &calibrateOnly})
    for (const Plan &p : *plans) {
      estimate.emplace(idOf(p),
                       p.prompt.layer); // the first call's: the estimate
      estimateSync.emplace(idOf(p), p.prompt.layerSync);
    }
  // `pipelineChunk`: the chunk the prompt is pipelined in, where known
  // (the plan's compiled chunk, or its group's); 0 keeps the estimate's.
  // A compiled chunk's tile program waits system.links.sync_seconds at
  // its collectives (lower-collectives); an estimate, scaled by compiled
  // ones or not, waits it on top (`layerSync`).
  auto apply = [&](Plan &p, double layerSeconds, int64_t chunk,
                   const char *pricedBy, int64_t pipelineChunk,
                   bool syncInLayer) {
    p.prompt.layerSync = syncInLayer ? 0.0 : estimateSync[idOf(p)];
    if (pipelineChunk > 0) {
      const System::Hop hop = chunkHop(p, pipelineChunk);
      p.prompt.chunks = double(L) / double(pipelineChunk);
      p.prompt.hop = hop.latency + hop.transfer;
      p.prompt.hopTransfer = hop.transfer;
    }
    p.prefillShare *= layerSeconds / p.prompt.layer;
    p.prompt.layer = layerSeconds;
    p.prompt.alone = promptPass(
        p.pp, std::ceil(double(m.layers) / double(p.pp)), layerSeconds,
        p.prompt.chunks, p.prompt.hop, p.prompt.hopTransfer,
        p.prompt.layerSync);
    p.ttftAlone = p.prompt.alone + double(p.prefillSteps) * p.tpot;
    p.prompt.chunk = chunk;
    p.prompt.pricedBy = pricedBy;
    setRates(p, r, wattsPerChip);
  };
  bool compiledAny = false;
  for (int round = 0; round < 3; ++round) {
    bool any = false;
    size_t top = std::min<size_t>(result.plans.size(), size_t(r.top));
    // At most kPrefillGroups shapes a search, like the decode layers'
    // budget: the calibration carries their lesson to the rest.
    for (size_t i = 0; i < top && compiled.size() < kPrefillGroups; ++i)
      if (!compiled.count(keyOf(result.plans[i]))) {
        compile(result.plans[i]);
        any = true;
      }
    if (!any)
      break;
    compiledAny = true;
    // The compiled groups' ratios to their estimates.
    // And the chunk each group compiled in (the smallest, where its
    // shapes differ), which its calibrated plans are pipelined in.
    std::map<int64_t, std::vector<double>> byGroup;
    std::map<int64_t, int64_t> groupChunk;
    std::vector<double> all;
    for (const Plan &p : result.plans) {
      auto it = compiled.find(keyOf(p));
      if (it == compiled.end() || !it->second.chunk)
        continue;
      // The waits at the collectives taken out (each chunk waits them at
      // every layer); the calibrated plans add theirs back (apply).
      double waits = double(L) / double(it->second.chunk) *
                     estimateSync[idOf(p)];
      double k = std::max(it->second.seconds - waits, 0.0) /
                 estimate[idOf(p)];
      byGroup[p.tp * p.ep].push_back(k);
      all.push_back(k);
      auto [at, fresh] = groupChunk.emplace(p.tp * p.ep, it->second.chunk);
      if (!fresh)
        at->second = std::min(at->second, it->second.chunk);
    }
    // The plans, and those only calibrated (the Pareto front: they take
    // the lesson, and teach none).
    for (std::vector<Plan> *plans : {&result.plans, &calibrateOnly})
      for (Plan &p : *plans) {
        auto it = compiled.find(keyOf(p));
        if (it != compiled.end() && it->second.chunk) {
          apply(p, it->second.seconds, it->second.chunk, "compiled chunks",
                it->second.chunk, true);
        } else if (it != compiled.end()) {
          // Its chunks did not compile: the estimate stands (reported).
          apply(p, estimate[idOf(p)], 0, "cost model", 0, false);
        } else if (!all.empty()) {
          auto g = byGroup.find(p.tp * p.ep);
          double k = g != byGroup.end() ? median(g->second) : median(all);
          apply(p, estimate[idOf(p)] * k, 0, "cost model x compiled",
                g != byGroup.end() ? groupChunk[p.tp * p.ep] : 0, false);
        }
      }
    order();
  }
  bar.finish();
  return compiledAny;
}

/// The prefill shapes that did not compile, as compileFailures lines.
void reportPrefillFailures(const PrefillState &state, Result &result,
                           const Request &r) {
  for (const auto &[key, prefill] : state.compiled)
    if (!prefill.chunk)
      result.compileFailures.push_back(
          "the prefill chunk on " + std::to_string(key.first) +
          " chips did not compile (chunks of " +
          std::to_string(std::min(r.inputLen, kSpatialPrefillChunk)) +
          " down to " + std::to_string(prefill.smallestTried) +
          " tokens tried; the prompt keeps the estimate): " + prefill.why);
}

} // namespace

namespace {

/// Plans meeting the targets first, plans whose layer did not compile
/// last.
void orderPlans(Result &result, const Request &r) {
  for (Plan &p : result.plans)
    p.meetsTargets = meets(p, r);
  std::sort(result.plans.begin(), result.plans.end(),
            [&](const Plan &a, const Plan &b) {
              if (a.note.empty() != b.note.empty())
                return a.note.empty();
              if (a.meetsTargets != b.meetsTargets)
                return a.meetsTargets;
              return better(a, b, r);
            });
}

/// One search of plan(): the candidate degrees and batches (chooseDegrees),
/// each candidate priced (work, one tensor-parallel degree at a time, run
/// over threads), what it found merged into the result (merge) and, when
/// no plan was found, why (whyNone).
struct Search {
  const LlmConfig &config;
  const TargetModel &system;
  const Request &r;
  const ModelCost &m;
  /// The candidate degrees and batches (chooseDegrees).
  std::vector<int64_t> tps, pps, eps, batches;
  // The search, spread over threads by tensor-parallel degree (each
  // thread's plans are merged in a fixed order: deterministic).
  std::vector<std::vector<Plan>> found;
  std::vector<std::optional<Plan>> nearestOf;
  // The candidate that fits a chip's memory but needs the fewest chips
  // beyond --max-chips for the load asked for (and how many).
  std::vector<std::optional<std::pair<double, Plan>>> fewestOf;
  std::vector<int64_t> counted;
  std::vector<std::vector<Plan>> frontOf;
  std::mutex mu;

  Search(const LlmConfig &config, const TargetModel &system, const Request &r,
         const ModelCost &m)
      : config(config), system(system), r(r), m(m) {}

  /// Candidate degrees: tensor parallelism in powers of two up to a node of
  /// GPUs or the attention heads of a spatial chip group; pipeline stages
  /// up to the layers; experts in powers of two; batches in powers of two
  /// and the quarter steps between them (within 12.5% of any batch a
  /// serving engine could choose).
  void chooseDegrees(bool spatial);
  /// Prices the candidates of the tensor-parallel degree tps[ti].
  void work(size_t ti);
  /// Runs work() for every tensor-parallel degree, over threads.
  void run();
  /// Merges what every degree found into `result`, its plans ranked;
  /// returns the candidate that needs the fewest chips beyond --max-chips
  /// (and how many).
  std::optional<std::pair<double, Plan>> merge(Result &result,
                                               const ChipRange &range);
  /// Why no plan was found (the line plan() fails with).
  std::string whyNone(const Result &result,
                      const std::optional<std::pair<double, Plan>> &fewest,
                      const std::vector<WeightShare> &mix) const;
};

void Search::chooseDegrees(bool spatial) {
  // Tensor parallelism up to the attention heads (past the key-value heads
  // the attention itself is replicated: see price()), and within a node of
  // GPUs.
  int64_t tpMax = spatial ? std::min<int64_t>(m.heads, 64)
                          : std::min<int64_t>(system.chipsPerNode(), m.heads);
  for (int64_t t = 1; t <= tpMax; t *= 2)
    if (r.tp == 0 || t == r.tp)
      tps.push_back(t);
  if (r.tp > 0 && tps.empty())
    tps.push_back(r.tp);
  for (int64_t q = 1; q <= m.layers; ++q)
    if (r.pp == 0 || q == r.pp)
      pps.push_back(q);
  for (int64_t e = 1; e <= m.experts; e *= 2)
    eps.push_back(e);
  const int64_t sustained = maxSustainedBatch(r);
  const int64_t topBatch = std::min<int64_t>(2048, sustained);
  for (int64_t b = 1, last = 0; b <= topBatch; b *= 2)
    for (int64_t c : {b, b + b / 4, b + b / 2, b + 3 * b / 4})
      if (c > last && c <= topBatch) {
        last = c;
        if (r.batch == 0 || c == r.batch)
          batches.push_back(c);
      }
  if (r.batch > 0 && batches.empty())
    batches.push_back(r.batch);
}

void Search::work(size_t ti) {
  int64_t t = tps[ti];
  std::vector<Plan> mine, myFront;
  std::optional<Plan> near;
  std::optional<std::pair<double, Plan>> fewest;
  for (int64_t q : pps)
    for (int64_t e : eps)
      for (int64_t b : batches)
        for (int64_t mb : {int64_t(1), q}) {
        if (t * q * e > r.maxChips)
          continue;
        ++counted[ti];
        std::optional<Plan> one =
            price(m, system, r,
                  {.tp = t, .pp = q, .ep = e, .batch = b, .micro = mb});
        if (!one)
          continue;
        int64_t dp = replicas(*one, r);
        if (dp > r.maxChips / (t * q * e)) {
          double need = replicasNeeded(
              double(one->concurrency),
              one->tokensPerSecond / double(r.outputLen), r);
          double chips = need * double(t * q * e);
          if (std::isfinite(chips) && (!fewest || chips < fewest->first)) {
            fewest = {chips, *one};
            setReplicas(fewest->second, static_cast<int64_t>(need), system);
          }
          continue;
        }
        Plan p = dp == 1 ? *one
                         : *price(m, system, r,
                                  {.tp = t, .pp = q, .ep = e, .dp = dp,
                                   .batch = b, .micro = mb});
        if (meets(p, r)) {
          if (r.pareto)
            addToFront(myFront, p);
          mine.push_back(p);
        } else if (!near ||
                   p.tpotLoaded + p.ttft < near->tpotLoaded + near->ttft)
          near = p;
        if (q == 1)
          break; // one stage: micro is 1
      }
  std::sort(mine.begin(), mine.end(),
            [&](const Plan &a, const Plan &b) { return better(a, b, r); });
  // The best 4 x top of each expert-parallel degree, so that every
  // group of chips a layer is compiled on (tp x ep) has its best plans
  // in the list the compiled layers calibrate.
  std::map<int64_t, size_t> kept;
  std::erase_if(mine, [&](const Plan &p) {
    return ++kept[p.ep] > size_t(4 * r.top);
  });
  std::lock_guard<std::mutex> lock(mu);
  found[ti] = std::move(mine);
  nearestOf[ti] = near;
  fewestOf[ti] = fewest;
  frontOf[ti] = std::move(myFront);
}

void Search::run() {
  found.resize(tps.size());
  nearestOf.resize(tps.size());
  fewestOf.resize(tps.size());
  counted.resize(tps.size(), 0);
  frontOf.resize(tps.size());
  unsigned threads =
      r.threads > 0 ? unsigned(r.threads)
                    : std::max(1u, std::thread::hardware_concurrency());
  {
    std::vector<std::thread> pool;
    std::atomic<size_t> next{0};
    for (unsigned i = 0; i < std::min<size_t>(threads, tps.size()); ++i)
      pool.emplace_back([&] {
        for (size_t ti = next++; ti < tps.size(); ti = next++)
          work(ti);
      });
    for (std::thread &th : pool)
      th.join();
  }
}

std::optional<std::pair<double, Plan>>
Search::merge(Result &result, const ChipRange &range) {
  result.model = config.name;
  result.system = system.name();
  result.chips = range;
  result.tpMax = tps.empty() ? 0 : tps.back();
  result.ppMax = pps.empty() ? 0 : pps.back();
  result.epMax = eps.empty() ? 0 : eps.back();
  result.batchMax = batches.empty() ? 0 : batches.back();
  std::optional<std::pair<double, Plan>> fewest;
  for (size_t i = 0; i < tps.size(); ++i) {
    for (const Plan &p : frontOf[i])
      addToFront(result.front, p);
    if (fewestOf[i] && (!fewest || fewestOf[i]->first < fewest->first))
      fewest = fewestOf[i];
    result.evaluated += counted[i];
    for (Plan &p : found[i])
      result.plans.push_back(std::move(p));
    if (nearestOf[i] &&
        (!result.nearest ||
         nearestOf[i]->tpotLoaded + nearestOf[i]->ttft <
             result.nearest->tpotLoaded + result.nearest->ttft))
      result.nearest = nearestOf[i];
  }
  std::sort(result.plans.begin(), result.plans.end(),
            [&](const Plan &a, const Plan &b) { return better(a, b, r); });
  return fewest;
}

std::string
Search::whyNone(const Result &result,
                const std::optional<std::pair<double, Plan>> &fewest,
                const std::vector<WeightShare> &mix) const {
  std::string error;
  double weights = m.totalParams() * weightBytes(mix);
  System s(system, r);
  if (!result.nearest && (r.tp > 0 || r.pp > 0 || r.batch > 0)) {
    error = "no plan with the degrees asked for (" +
            (r.tp > 0 ? "tp " + std::to_string(r.tp) + " " : std::string()) +
            (r.pp > 0 ? "pp " + std::to_string(r.pp) + " " : std::string()) +
            (r.batch > 0 ? "batch " + std::to_string(r.batch) + " "
                         : std::string()) +
            ") fits " + system.name() + "'s memory per chip within " +
            std::to_string(r.maxChips) + " chips";
  } else if (!result.nearest && fewest) {
    // Plans fit, but not enough of them within --max-chips for the load.
    const Plan &f = fewest->second;
    char rate[64] = "";
    if (r.requestRate > 0)
      std::snprintf(rate, sizeof rate, "%g requests/s", r.requestRate);
    std::string load =
        std::string(rate) +
        (r.requestRate > 0 && r.concurrency > 0 ? " and " : "") +
        (r.concurrency > 0 ? std::to_string(r.concurrency) + " sequences"
                           : std::string());
    error = "no plan on " + system.name() + " serves the load asked for (" +
            load + ") within " + std::to_string(r.maxChips) +
            " chips; the fewest chips that do: " +
            std::to_string(f.chips) + " (tp " + std::to_string(f.tp) +
            " x pp " + std::to_string(f.pp) + " x ep " +
            std::to_string(f.ep) + " x dp " + std::to_string(f.dp) +
            ", batch " + std::to_string(f.batch) + ") (raise --max-chips)";
  } else if (!result.nearest) {
    // What must be held: the weights, and the KV cache of the sequences
    // asked for (at least one).
    double kvPerSequence = double(r.inputLen + r.outputLen) * m.layers *
                           m.kvElementsPerTokenLayer() * precisionBytes(r.kv);
    int64_t sequences = std::max<int64_t>(1, r.concurrency);
    double needed = weights + double(sequences) * kvPerSequence;
    int64_t least = static_cast<int64_t>(
        std::ceil(needed / (s.capacity * s.usable)));
    // Does any split fit a chip, given chips enough? If none does, name
    // what a chip of the finest split still holds.
    bool anySplitFits = false;
    for (int64_t t : tps)
      for (int64_t e : eps)
        for (int64_t q = 1; q <= m.layers && !anySplitFits; ++q)
          anySplitFits =
              price(m, system, r, {.tp = t, .pp = q, .ep = e}).has_value();
    if (!anySplitFits && r.tp == 0 && r.pp == 0 && r.batch == 0) {
      error = config.name + " fits no split on " + system.name() + ": " +
              finestSplitHolds(m, s, r, tps.back(), m.layers, eps.back());
      return error;
    }
    error = config.name + " fits nowhere on " + system.name() + " within " +
            std::to_string(r.maxChips) + " chips: its weights are " +
            std::to_string(int64_t(weights)) + " bytes (" + r.weights +
            ") and the KV cache of " + std::to_string(sequences) +
            " sequence" + (sequences == 1 ? "" : "s") + " " +
            std::to_string(int64_t(double(sequences) * kvPerSequence)) +
            " bytes (" + r.kv + "): at least " + std::to_string(least) +
            " chips of " + std::to_string(int64_t(s.capacity)) + " bytes" +
            (least > r.maxChips ? " (raise --max-chips)" : "");
  } else {
    error = "no plan on " + system.name() + " meets the targets (" +
            targetsOf(r) + "); the nearest: " + describe(*result.nearest);
  }
  return error;
}

/// On spatial targets the best plans are re-priced with the compiler:
/// one layer compiled for the plan's tensor-parallel group, its latency
/// reused for every layer. Re-pricing can reorder the plans, so it repeats
/// until the best `top` are all compiled (or a round adds nothing); the
/// prompts are priced by compiled prefill chunks before and after
/// (compilePrefill). What one search's re-pricing keeps, and its steps.
struct LayerCalibration {
  Result &result;
  const ModelCost &m;
  const TargetModel &system;
  const Request &r;
  const std::string &configPath;
  const LayerCompiler &compileLayer;
  // Keyed by (tp x ep, batch, past, chips): the layer is compiled for its
  // tensor-parallel group as the first chips of the plan's whole system,
  // so its chip links get the bandwidth share they have there (a
  // dragonfly node's local links keep half when the system has other
  // nodes). A mixture-of-experts layer is compiled on its tp x ep chips
  // at the whole micro-batch: graph-partition splits every expert's
  // (interleaved) columns and the attention's heads over them, which
  // gives each chip the work the estimate gives it (the micro-batch's
  // attention split over ep groups of tp chips, the experts over tp x ep).
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t>;
  std::map<Key, std::optional<double>> cache;
  std::map<Key, std::string> why;
  int64_t past;
  // (One format here: plan() refuses a mix.)
  const std::string precision;
  const std::string systemName;
  const std::string kvStorage;
  rt::Progress bar;
  System s;
  // The stage hops and the LM head. A compiled plan's hops carry what the
  // compiled decode step moves between stages: its fp32 activations, at
  // the kernel precision's wire format (rt::activationWireFormat).
  const std::optional<NumericFormat> wire;
  const double wireBytes;
  /// Each plan's estimated layer time, kept to scale by the calibration.
  std::map<PlanId, double> estLayer;
  /// What compilePrefill keeps between its passes.
  PrefillState prefill;

  LayerCalibration(Result &result, const ModelCost &m,
                   const TargetModel &system, const Request &r,
                   const std::string &configPath,
                   const LayerCompiler &compileLayer,
                   const std::vector<WeightShare> &mix)
      : result(result), m(m), system(system), r(r), configPath(configPath),
        compileLayer(compileLayer), past(r.inputLen + r.outputLen / 2),
        precision(layerPrecision(system, mix.front().format)),
        systemName(r.systemSource.empty() ? system.name() : r.systemSource),
        kvStorage(layerKvStorage(r.kv)), bar("plan: compiling layers", 0),
        s(system, r), wire(rt::activationWireFormat(precision)),
        wireBytes(wire ? rt::numericFormatBytes(*wire)
                       : double(kDecodeStepActivationBytes)) {}

  /// The chips one layer is compiled on.
  static int64_t group(const Plan &p) { return p.tp * p.ep; }
  Key keyOf(const Plan &p) const {
    return Key{group(p), p.batch, past, p.chips};
  }
  /// What a layer of `p` waits at its collectives (System::syncSeconds).
  double layerSync(const Plan &p) const {
    return s.syncSeconds(p.tp, p.ep, p.kvGathered);
  }
  /// The stage hops and the LM head of `p`'s step, compiled or estimated.
  /// `withSync`: the estimate's layers, and those scaled by compiled ones
  /// (ratioOf), wait system.links.sync_seconds at their collectives on
  /// top of their time (price()); a compiled layer's tile program waits
  /// it at its collectives' first exchanges (lower-collectives), so it
  /// carries it already.
  double fixed(const Plan &p, bool compiled, bool withSync) const {
    double vec = double(p.batch) * m.hidden *
                 (compiled ? wireBytes : precisionBytes(r.activations));
    return double(p.pp - 1) * s.hop(vec, p.tp * p.pp * p.ep, p.tp * p.ep) +
           s.lmHead(m.headParams, double(p.batch), p.tp, s.bytesPerWeight) +
           (withSync ? double(m.layers) * layerSync(p) : 0.0);
  }
  /// A compiled layer's time over its estimate, the synchronisation it
  /// waits taken out first: the calibration scales the work, and the
  /// waits, the same count a layer whatever its size, are added back.
  double ratioOf(const Plan &p, double compiled, double estimated) const {
    return std::max(compiled - layerSync(p), 0.0) / estimated;
  }
  /// Sets `p`'s decode step to `tpot`, and what follows from it: its time
  /// to first token alone (the steps its prompt rides on) and its rates.
  void setTpot(Plan &p, double tpot) const {
    p.ttftAlone += double(p.prefillSteps) * (tpot - p.tpot);
    p.tpot = tpot;
    setRates(p, r, s.power);
  }

  /// Prices the prompts by compiled prefill chunks (compilePrefill);
  /// returns whether it compiled any.
  bool prefillPass();
  /// Compiles the layer of `p`'s group, batch and system into the cache
  /// (its time, or why not); sets `compiledAny`.
  void compile(const Plan &p, bool &compiledAny);
  /// One round: compiles the layers of the best plans not compiled yet,
  /// re-prices every plan by them and re-ranks; returns whether it
  /// compiled any.
  bool compileRound();
  /// The front's plans take the compiled layers' lesson as the plans do:
  /// a compiled layer's time where theirs was compiled, else their
  /// group's ratio of compiled to estimated layer (else the median).
  void calibrateFront();
  /// The whole re-pricing, and its failures as compileFailures lines.
  void run();
};

bool LayerCalibration::prefillPass() {
  return !r.decodeOnly &&
         compilePrefill(prefill, result, result.front, m, configPath,
                        systemName, precision, kvStorage, r, s.power,
                        compileLayer, [&] { orderPlans(result, r); },
                        [&](const Plan &p, int64_t chunk) {
                          return s.hopParts(double(chunk) * m.hidden *
                                                precisionBytes(r.activations),
                                            p.tp * p.pp * p.ep, p.tp * p.ep);
                        });
}

void LayerCalibration::compile(const Plan &p, bool &compiledAny) {
  Key key = keyOf(p);
  bar.update(int64_t(cache.size()),
             "tp " + std::to_string(p.tp) +
                 (p.ep > 1 ? " x ep " + std::to_string(p.ep) : "") +
                 ", batch " + std::to_string(p.batch));
  LayerSpec layer;
  layer.tp = p.tp * p.ep;
  layer.batch = p.batch;
  layer.past = past;
  layer.precision = precision;
  layer.kvStorage = kvStorage;
  layer.systemChips = p.chips;
  cache[key] = compileLayer(configPath, systemName, layer, why[key]);
  compiledAny = true;
}

bool LayerCalibration::compileRound() {
  // Compile the layers of the best `top` plans not compiled yet.
  size_t top = std::min<size_t>(result.plans.size(), size_t(r.top));
  bool compiledAny = false;
  // A budget of compiled layers keeps a large search quick; the
  // calibration carries their lesson to the rest. The best plan is
  // compiled whatever the budget, so the plan printed first is priced
  // by its own layer (at most one compile more a round; before, a
  // Mixtral-8x7B search on tsp-v1 spent the budget on the tp 16
  // layers of 512, 528 and 544 chips, whose chip links' shares differ
  // with the system, and printed a 400-chip plan priced by its
  // estimate).
  for (size_t i = 0; i < top && (cache.size() < 3 || i == 0); ++i) {
    const Plan &p = result.plans[i];
    if (!p.compiled && !cache.count(keyOf(p)))
      compile(p, compiledAny);
  }
  // While the budget lasts, the best plan of each group size (tp x ep)
  // not measured yet is compiled too: a group's calibration is not
  // another's (their collectives differ), and borrowing one can bury a
  // better plan of another group under it.
  std::set<int64_t> groups;
  for (const auto &[key, seconds] : cache)
    groups.insert(std::get<0>(key));
  for (size_t i = 0; i < result.plans.size() && cache.size() < 3; ++i)
    if (groups.insert(group(result.plans[i])).second)
      compile(result.plans[i], compiledAny);
  // Every plan whose layer is compiled takes its time; the others are
  // scaled by how far the compiled layers are from their estimates
  // (the median ratio), so estimates and schedules rank fairly.
  std::vector<double> ratios;
  for (Plan &p : result.plans) {
    Key key = keyOf(p);
    auto it = cache.find(key);
    if (it == cache.end())
      continue;
    if (!it->second) {
      p.note = "layer compile failed: " + why[key];
      continue;
    }
    if (!p.compiled)
      ratios.push_back(ratioOf(p, *it->second, estLayer[idOf(p)]));
    setTpot(p, double(m.layers) * *it->second + fixed(p, true, false));
    p.compiled = true;
    p.layerPrecision = precision;
  }
  // The calibration per group size where a layer of it is compiled
  // (the collectives differ), else over all.
  std::map<int64_t, std::vector<double>> byGroup;
  for (Plan &p : result.plans) {
    auto it = cache.find(keyOf(p));
    if (it != cache.end() && it->second)
      byGroup[group(p)].push_back(
          ratioOf(p, *it->second, estLayer[idOf(p)]));
  }
  if (!ratios.empty()) {
    double all = median(ratios);
    for (Plan &p : result.plans)
      if (!p.compiled) {
        auto it = byGroup.find(group(p));
        double k = it != byGroup.end() ? median(it->second) : all;
        setTpot(p, double(m.layers) * estLayer[idOf(p)] * k +
                       fixed(p, false, true));
      }
  }
  orderPlans(result, r);
  return compiledAny;
}

void LayerCalibration::calibrateFront() {
  std::map<int64_t, std::vector<double>> byGroup;
  std::vector<double> ratios;
  for (const Plan &p : result.plans) {
    auto it = cache.find(keyOf(p));
    if (it == cache.end() || !it->second)
      continue;
    double k = ratioOf(p, *it->second, estLayer[idOf(p)]);
    byGroup[group(p)].push_back(k);
    ratios.push_back(k);
  }
  std::vector<Plan> front;
  for (Plan p : result.front) {
    double est = (p.tpot - fixed(p, false, true)) / double(m.layers);
    auto it = cache.find(keyOf(p));
    if (it != cache.end() && it->second) {
      setTpot(p, double(m.layers) * *it->second + fixed(p, true, false));
      p.compiled = true;
      p.layerPrecision = precision;
    } else if (!ratios.empty()) {
      auto g = byGroup.find(group(p));
      double k = g != byGroup.end() ? median(g->second) : median(ratios);
      setTpot(p, double(m.layers) * est * k + fixed(p, false, true));
    }
    if (meets(p, r))
      addToFront(front, p);
  }
  result.front = std::move(front);
}

void LayerCalibration::run() {
  for (Plan &p : result.plans)
    p.note.clear();
  for (Plan &p : result.plans)
    estLayer[idOf(p)] = (p.tpot - fixed(p, false, true)) / double(m.layers);
  // The prompts first, then the decode layers, then the prompts of the
  // plans the decode layers brought to the top (while the budget lasts).
  prefillPass();
  // Prefill-only chips (a disaggregated plan's prefill system) take
  // their decode step from nothing: only their prompts are compiled.
  for (int round = 0; round < 6 && !r.prefillOnly; ++round)
    if (!compileRound())
      break;
  if (!result.front.empty())
    calibrateFront();
  bar.finish();
  prefillPass();
  reportPrefillFailures(prefill, result, r);
  for (const auto &[key, seconds] : cache)
    if (!seconds)
      result.compileFailures.push_back(
          "the layer on " + std::to_string(std::get<0>(key)) +
          " chips at batch " + std::to_string(std::get<1>(key)) +
          " did not compile: " + why[key]);
}

} // namespace

std::optional<Result> plan(const LlmConfig &config,
                           const std::string &configPath,
                           const TargetModel &system, const Request &request,
                           const LayerCompiler &compileLayer,
                           std::string &error) {
  auto started = std::chrono::steady_clock::now();
  // The chips searched: --max-chips, else the system's own size where it
  // names one (an LPX rack is 256 chips), else the default.
  const ChipRange range = chipRange(system, request);
  Request r = request;
  r.maxChips = range.max;
  if (std::string bad = validate(r); !bad.empty()) {
    error = bad;
    return std::nullopt;
  }
  // A sequence's context is its input and output tokens; the model has
  // positions for max_position_embeddings of them.
  if (config.maxPositions > 0 &&
      r.inputLen + r.outputLen > config.maxPositions) {
    error = "input + output tokens (" + std::to_string(r.inputLen) + " + " +
            std::to_string(r.outputLen) + ") exceed " + config.name +
            "'s max_position_embeddings (" +
            std::to_string(config.maxPositions) + ")";
    return std::nullopt;
  }
  ModelCost m = modelCost(config);
  bool spatial = !system.hasOffChipMemory();
  std::string unused;
  const std::vector<WeightShare> mix = weightMix(r.weights, unused);
  if (spatial && r.compile && mix.size() > 1) {
    error = "--weights=" + r.weights + ": a mix of weight formats is not "
            "compiled yet (partial: a compiled layer runs one format); "
            "--no-compile prices the mix on " + system.name() +
            " with the cost model";
    return std::nullopt;
  }
  Search search(config, system, r, m);
  search.chooseDegrees(spatial);
  search.run();
  Result result;
  std::optional<std::pair<double, Plan>> fewest = search.merge(result, range);
  if (result.plans.empty()) {
    error = search.whyNone(result, fewest, mix);
    return std::nullopt;
  }

  // On spatial targets the best plans are re-priced with the compiler.
  if (spatial && r.compile && compileLayer)
    LayerCalibration(result, m, system, r, configPath, compileLayer, mix)
        .run();
  orderPlans(result, r);
  if (!result.front.empty()) {
    // A front plan that is one of the plans takes the plan's figures
    // (its decode layer or prompt may be compiled, not only calibrated);
    // calibration can make others dominated.
    std::map<PlanId, const Plan *> byId;
    for (const Plan &p : result.plans)
      byId.emplace(idOf(p), &p);
    std::vector<Plan> front;
    for (const Plan &p : result.front) {
      auto it = byId.find(idOf(p));
      const Plan &q = it != byId.end() ? *it->second : p;
      if (meets(q, r) && q.note.empty())
        addToFront(front, q);
    }
    // And the ranked plans, which their compiled layers may have lifted
    // above the estimates' front.
    for (const Plan &p : result.plans)
      if (meets(p, r) && p.note.empty())
        addToFront(front, p);
    result.front = std::move(front);
  }
  if (result.plans.size() > 1)
    result.runnerUp = result.plans[1];
  if (result.plans.size() > size_t(r.top))
    result.plans.resize(size_t(r.top));
  for (Plan &p : result.front)
    p.meetsTargets = true;
  sortFront(result.front);
  result.seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - started)
                       .count();
  return result;
}

namespace {

/// Prices decode plan `q` of `decodeSystem` with prompts prefilled on
/// `prefillSystem` by replicas of plan `fast`, each request's KV cache then
/// moved in `move` seconds, its first token `ttft` after it starts. The
/// decode chips only decode, so a request's time per output token is the
/// step (plus, in the server scenario, its wait for a decode slot spread
/// over its output). The prompts arrive at the rate asked for, else at
/// what the decode chips take. Offline: every decode slot is kept
/// occupied, and the prefill replicas are ceil(prompts/s x prefill share).
/// Server: Poisson arrivals (the comment in the body).
void priceDisaggregated(Plan &q, const Plan &fast, double move, double ttft,
                        const TargetModel &decodeSystem,
                        const TargetModel &prefillSystem, const Request &r) {
  const double out = double(r.outputLen), step = q.tpot;
  const double slots = double(q.micro * q.batch), ps = fast.prefillShare;
  q.prefillSystem = prefillSystem.name();
  q.prefillTp = fast.tp;
  q.kvMove = move;
  q.ttft = q.ttftAlone = ttft;
  q.prefillSteps = 0; // the prompt's own pass yields its first token
  // The prompt's pass is the prefill system's.
  q.prompt = fast.prompt;
  q.tpotLoaded = q.tpotP99 = step;
  // Decode replicas: as many as the concurrency asked for needs, and the
  // rate asked for at `perReplica` requests/s each (as replicas() does;
  // the decode chips serve more than when they prefill too).
  auto resize = [&](double perReplica) {
    const int64_t chipsPer = q.chips / q.dp;
    double dp = replicasNeeded(slots, perReplica, r);
    setReplicas(q,
                dp * double(chipsPer) <= double(r.maxChips)
                    ? static_cast<int64_t>(dp)
                    : r.maxChips / chipsPer + 1,
                decodeSystem);
  };
  double replicasPrefill = 1;
  if (r.scenario != "server") {
    q.requestRate = slots / (out * step);
    resize(q.requestRate);
    // Prompts arrive at the rate asked for, else at what the decode
    // chips take.
    const double arrivals =
        r.requestRate > 0 ? r.requestRate : double(q.dp) * q.requestRate;
    replicasPrefill = std::max(1.0, std::ceil(arrivals * ps));
  } else {
    // Poisson arrivals. A prompt queues on its prefill replica (M/D/1
    // each, the arrivals split evenly), and its pass yields the first
    // token: TTFT = that wait + its prefill and move. Its KV cache then
    // waits for a free decode slot (M/M/c over the replica's slots, each
    // held for its output) and that wait delays its second token: it is
    // spread over the request's time per output token (MLPerf's TPOT is
    // (latency - TTFT) / (tokens - 1)) and held to the TTFT bound too.
    // The decode rate per replica is the highest whose slot wait meets
    // both at the 99th percentile; the prefill replicas the fewest that
    // keep the TTFT's 99th percentile within its bound at the prompts'
    // rate (bisection: more replicas, shorter waits; past load / 0.01 no
    // prompt waits at the 99th percentile).
    const double hold = out * step;
    auto decodeMeets = [&](double rate) {
      double wait = slotWait(slots, hold, rate, 0.01);
      return wait <= r.ttft &&
             (r.tpot <= 0 ||
              step + wait / std::max(1.0, out - 1) <= r.tpot);
    };
    const double perReplica = highestMeeting(
        r.tpot > 0 && step > r.tpot ? 0 : slots / hold, decodeMeets);
    resize(perReplica);
    q.requestRate = r.requestRate > 0 && q.dp > 0
                        ? std::min(perReplica, r.requestRate / double(q.dp))
                        : perReplica;
    const double arrivals = double(q.dp) * q.requestRate;
    auto ttftWith = [&](double prefillers) {
      return q.ttftAlone + prefillWait(ps, arrivals / prefillers, 0.01);
    };
    double pLo = std::max(1.0, std::ceil(arrivals * ps)),
           pHi = std::max(pLo, std::ceil(arrivals * ps / 0.01));
    if (ttftWith(pLo) <= r.ttft)
      pHi = pLo;
    while (pHi - pLo > 1) {
      double mid = std::floor((pLo + pHi) / 2);
      (ttftWith(mid) <= r.ttft ? pHi : pLo) = mid;
    }
    replicasPrefill = pHi;
    q.ttft = ttftWith(replicasPrefill);
    q.tpotP99 = step + slotWait(slots, hold, q.requestRate, 0.01) /
                           std::max(1.0, out - 1);
    // The mean: M/M/c's mean wait, C(c, a) x hold / (c - a).
    const double a = q.requestRate * hold;
    if (a < slots)
      q.tpotLoaded = step + erlangC(slots, a) * hold / (slots - a) /
                                std::max(1.0, out - 1);
  }
  q.prefillReplicas = static_cast<int64_t>(replicasPrefill);
  q.prefillChips = q.prefillReplicas * fast.chips;
  q.prefillShare = ps;
  q.tokensPerSecondPerUser = 1.0 / q.tpotLoaded;
  // What both systems sustain: the decode replicas' rate, within what the
  // prefill replicas take (fewer when they were sized to a rate asked
  // for below the decode chips' capacity).
  if (ps > 0 && q.dp > 0)
    q.requestRate =
        std::min(q.requestRate, double(q.prefillReplicas) / ps / double(q.dp));
  q.tokensPerSecond = double(q.dp) * q.requestRate * out;
  double watts = decodeSystem.powerWattsPerChip() * double(q.chips) +
                 prefillSystem.powerWattsPerChip() * double(q.prefillChips);
  q.tokensPerSecondPerWatt = watts > 0 ? q.tokensPerSecond / watts : 0;
  q.meetsTargets = meets(q, r) && q.chips <= r.maxChips &&
                   (r.requestRate <= 0 ||
                    double(q.dp) * q.requestRate >= r.requestRate * (1 - 1e-9));
  q.note = "prefill on " + std::to_string(q.prefillChips) + " " +
           prefillSystem.name() + " chips (" +
           std::to_string(q.prefillReplicas) +
           (q.prefillReplicas == 1 ? " replica" : " replicas") + " of tp " +
           std::to_string(fast.tp) + " x pp " + std::to_string(fast.pp) + ")";
}

} // namespace

std::optional<Result>
planDisaggregated(const LlmConfig &config, const std::string &configPath,
                  const TargetModel &prefillSystem,
                  const TargetModel &decodeSystem, const Request &request,
                  const LayerCompiler &compileLayer, std::string &error) {
  if (request.pareto) {
    error = "--pareto with --prefill-system is not built yet (partial: the "
            "front is of colocated plans)";
    return std::nullopt;
  }
  // --max-chips bounds the decode chips; without it, the decode system's
  // own size where it names one.
  Request r = request;
  r.maxChips = chipRange(decodeSystem, request).max;
  // The request as asked, before any search (--batch is the decode
  // chips', which carry no prompt tokens; the prefill chips carry no
  // decode tokens, so the budget bounds nothing more there).
  Request decodeOnly = r;
  decodeOnly.decodeOnly = true;
  if (std::string bad = validate(decodeOnly); !bad.empty()) {
    error = bad;
    return std::nullopt;
  }
  // Decode plans on the decode system (no time-to-first-token target:
  // prefill happens elsewhere; searched as offline, the scenario's rates
  // are set below), prefill plans on the prefill system (its time to
  // first token only).
  // The decode chips only decode (decodeOnly: their plans are ranked,
  // sized and held to --tpot by the decode step alone), and more plans
  // than --top are kept, to re-rank once their prefill is priced.
  Request decode = r;
  decode.ttft = 0;
  decode.scenario = "offline";
  decode.decodeOnly = true;
  decode.top = std::max<int64_t>(r.top, 32);
  std::optional<Result> d =
      plan(config, configPath, decodeSystem, decode, compileLayer, error);
  if (!d)
    return std::nullopt;
  // Forced degrees and batch are the decode system's. A spatial prefill
  // system's prompts are priced by compiled chunks, as colocated plans'
  // are (the best plans' shapes compiled, the rest calibrated by them).
  Request prefill = r;
  prefill.systemSource = r.prefillSystemSource;
  prefill.tpot = 0;
  prefill.concurrency = 0;
  prefill.requestRate = 0;
  prefill.scenario = "offline";
  prefill.ttft = 0;
  prefill.tp = prefill.pp = prefill.batch = 0;
  prefill.prefillOnly = true;
  // The prefill chips are bounded as their own system is.
  prefill.maxChips = request.maxChips;
  prefill.top = int64_t(1) << 30; // every plan, to choose from
  std::optional<Result> p =
      plan(config, configPath, prefillSystem, prefill, compileLayer, error);
  if (!p)
    return std::nullopt;
  // The KV cache of one request moved over the prefill system's scale-out
  // network (or its chip links), every prefill chip sending its share.
  ModelCost m = modelCost(config);
  double kvBytes = double(r.inputLen) * m.layers * m.kvElementsPerTokenLayer() *
                   precisionBytes(r.kv);
  const auto &so = prefillSystem.desc().system.scaleOut;
  double bw = so ? so->bytesPerSecond : prefillSystem.chipLinkBytesPerSecondPerChip();
  double lat = so ? so->latencySeconds : prefillSystem.chipLinkLatencySeconds();
  auto moveOf = [&](const Plan &q) {
    return lat + kvBytes / (bw * double(q.chips));
  };
  // The prompt's pass yields the first token: a prefill plan's time to it
  // is its prefill alone (without the decode step its batch would take)
  // and the move.
  auto ttftOf = [&](const Plan &q) {
    return q.ttftAlone - double(q.prefillSteps) * q.tpot + moveOf(q);
  };
  // The prefill plan: among those whose prompt alone (and its move) meets
  // the time-to-first-token target, the most prompts per second per chip
  // (the fewest prefill chips for the decode chips' rate); with none, the
  // fastest.
  const Plan *best = nullptr, *fastest = nullptr;
  auto perChip = [](const Plan &q) {
    return 1.0 / (q.prefillShare * double(q.chips));
  };
  for (const Plan &q : p->plans) {
    if (!fastest || ttftOf(q) < ttftOf(*fastest))
      fastest = &q;
    if ((r.ttft <= 0 || ttftOf(q) <= r.ttft) &&
        (!best || perChip(q) > perChip(*best) ||
         (perChip(q) == perChip(*best) && ttftOf(q) < ttftOf(*best))))
      best = &q;
  }
  const Plan &chosen = best ? *best : *fastest;
  Result out = *d;
  out.chips = chipRange(decodeSystem, request);
  for (const std::string &failure : p->compileFailures)
    out.compileFailures.push_back("prefill system " + prefillSystem.name() +
                                  ": " + failure);
  for (Plan &q : out.plans)
    priceDisaggregated(q, chosen, moveOf(chosen), ttftOf(chosen), decodeSystem,
                       prefillSystem, r);
  std::sort(out.plans.begin(), out.plans.end(),
            [&](const Plan &a, const Plan &b) {
              if (a.meetsTargets != b.meetsTargets)
                return a.meetsTargets;
              return better(a, b, r);
            });
  out.runnerUp.reset();
  if (out.plans.size() > 1)
    out.runnerUp = out.plans[1];
  if (out.plans.size() > size_t(r.top))
    out.plans.resize(size_t(r.top));
  if (!out.plans.front().meetsTargets) {
    const Plan &near = out.plans.front();
    error = "no plan decoding on " + decodeSystem.name() + " and prefilling on " +
            prefillSystem.name() + " meets the targets (" + targetsOf(r) +
            "); the nearest: " + describe(near) + ", " + near.note;
    return std::nullopt;
  }
  // Each system alone for the same request, to compare with (once when
  // they are the same).
  for (const TargetModel *system : {&decodeSystem, &prefillSystem}) {
    if (system == &prefillSystem && prefillSystem.name() == decodeSystem.name())
      break;
    Request alone = r;
    alone.maxChips = request.maxChips;
    alone.top = 1;
    if (system == &prefillSystem)
      alone.systemSource = r.prefillSystemSource;
    std::string why;
    std::optional<Result> a =
        plan(config, configPath, *system, alone, compileLayer, why);
    out.alone.push_back({system->name(),
                         a ? std::optional<Plan>(a->plans.front())
                           : std::nullopt,
                         why});
  }
  return out;
}

std::string rankedBy(const Request &r) {
  if (r.prefillOnly)
    return "prompts per second per chip, then the faster prompt";
  if (r.concurrency > 0 || r.requestRate > 0)
    return "the fewest chips that serve the load, then the lower TPOT";
  return "tokens/s per chip (tok/s/chip), then the fewer chips";
}

namespace {

/// The request, and the search's bounds, in words: what the plans
/// assumed (formatTable prints it first).
std::string requestText(const Result &result, const Request &r) {
  const bool server = r.scenario == "server";
  char buf[128];
  std::string load = server ? "none given (the highest rate the bounds admit)"
                            : "none given (as many sequences as pay off)";
  if (r.concurrency > 0)
    load = std::to_string(r.concurrency) + " sequences at once";
  if (r.requestRate > 0) {
    std::snprintf(buf, sizeof buf, "%g requests/s", r.requestRate);
    load = buf;
  }
  std::string bounds;
  auto ms = [&](double s) {
    std::snprintf(buf, sizeof buf, "%g ms", s * 1e3);
    return std::string(buf);
  };
  if (r.ttft > 0)
    bounds += std::string(server ? "p99 " : "") + "TTFT <= " + ms(r.ttft);
  if (r.tpot > 0)
    bounds += std::string(bounds.empty() ? "" : ", ") + (server ? "p99 " : "") +
              "TPOT <= " + ms(r.tpot);
  if (bounds.empty())
    bounds = "none";
  auto degree = [](const char *name, int64_t forced, int64_t max) {
    return std::string(name) + " " +
           (forced > 0 ? std::to_string(forced) + " (forced)"
                       : (max > 1 ? "1 to " : "") + std::to_string(max));
  };
  std::string out = "request: " + result.model + " on " + result.system + ", " +
                    std::to_string(r.inputLen) + " input and " +
                    std::to_string(r.outputLen) + " output tokens; weights " +
                    r.weights + ", KV cache " + r.kv + ", activations " +
                    r.activations + "; " + r.scenario + " scenario; load " +
                    load + "; bounds " + bounds + "; token budget " +
                    std::to_string(r.maxNumTokens) + " a step\n";
  out += "searched: 1 to " + std::to_string(result.chips.max) + " chips (" +
         result.chips.why + "); " + degree("tp", r.tp, result.tpMax) + ", " +
         degree("pp", r.pp, result.ppMax) + ", " +
         degree("ep", 0, result.epMax) + ", " +
         degree("batch", r.batch, result.batchMax) + "\n";
  out += "ranked by: " + rankedBy(r) + "\n";
  return out;
}

std::string splitText(const Plan &p) {
  return "tp " + std::to_string(p.tp) + " x pp " + std::to_string(p.pp) +
         " x ep " + std::to_string(p.ep) + " x dp " + std::to_string(p.dp) +
         ", batch " + std::to_string(p.batch);
}

/// One line on why the top plan won against the next one.
std::string whyTop(const Result &result, const Request &r) {
  if (result.plans.empty())
    return "";
  const Plan &top = result.plans.front();
  char buf[256];
  if (!top.meetsTargets)
    return "why: no plan meets the targets; this one misses them least\n";
  const std::string bound =
      "; its decode step is " +
      (top.decodeBound == "memory bandwidth" ? std::string("memory")
                                             : top.decodeBound) +
      " bound";
  if (!result.runnerUp)
    return "why: the only plan that fits and meets the targets" + bound + "\n";
  const Plan &next = *result.runnerUp;
  const bool load = r.concurrency > 0 || r.requestRate > 0;
  if (load) {
    if (top.chips < next.chips) {
      std::snprintf(buf, sizeof buf,
                    "why: %lld chips, the fewest that serve the load within "
                    "the targets (the next, %s, takes %lld)",
                    (long long)top.chips, splitText(next).c_str(),
                    (long long)next.chips);
    } else {
      std::snprintf(buf, sizeof buf,
                    "why: %lld chips, the fewest that serve the load; among "
                    "them the lowest TPOT, %.3f ms (the next, %s: %.3f ms)",
                    (long long)top.chips, top.tpotLoaded * 1e3,
                    splitText(next).c_str(), next.tpotLoaded * 1e3);
    }
    return buf + bound + "\n";
  }
  const double a = perChip(top), b = perChip(next);
  if (b > 0 && a > b * (1 + 1e-9))
    std::snprintf(buf, sizeof buf,
                  "why: the most tokens/s per chip, %.1f, %.1f%% more than "
                  "the next (%s on %lld chips: %.1f)",
                  a, 100 * (a / b - 1), splitText(next).c_str(),
                  (long long)next.chips, b);
  else
    std::snprintf(buf, sizeof buf,
                  "why: as many tokens/s per chip as the next (%s: %.1f) on "
                  "%s chips",
                  splitText(next).c_str(), b,
                  top.chips < next.chips ? "fewer" : "as many");
  return buf + bound + "\n";
}

} // namespace

std::string formatTable(const Result &result, const Request &r) {
  std::string out = requestText(result, r);
  char buf[512];
  // The server scenario adds the TPOT's 99th percentile (what --tpot
  // bounds there).
  const bool server = r.scenario == "server";
  std::snprintf(
      buf, sizeof buf,
      "%-5s %-20s %6s %5s %6s %9s %9s %9s%s %9s %11s %10s %10s %14s %-9s %s\n",
      "chips", "tp x pp x ep x dp", "batch", "nodes", "racks", "TTFT ms",
      "step ms", "TPOT ms", server ? "    p99 ms" : "", "tok/s/usr", "tok/s",
      "tok/s/chip", "tok/s/W", "mem/chip", "bound", "");
  out += buf;
  for (const Plan &p : result.plans) {
    std::string split = std::to_string(p.tp) + " x " + std::to_string(p.pp) +
                        " x " + std::to_string(p.ep) + " x " +
                        std::to_string(p.dp);
    char p99[32] = "";
    if (server)
      std::snprintf(p99, sizeof p99, " %9.3f", p.tpotP99 * 1e3);
    std::snprintf(
        buf, sizeof buf,
        "%-5lld %-20s %6lld %5lld %6lld %9.1f %9.3f %9.3f%s %9.1f %11.0f "
        "%10.1f %10.2f %7.1f %s %2.0f%% %-9s %s%s%s\n",
        (long long)p.chips, split.c_str(), (long long)p.batch,
        (long long)p.nodes, (long long)p.racks, p.ttft * 1e3, p.tpot * 1e3,
        p.tpotLoaded * 1e3, p99, p.tokensPerSecondPerUser, p.tokensPerSecond,
        perChip(p), p.tokensPerSecondPerWatt,
        p.memoryPerChip / (p.memory == "SRAM" ? 1e6 : 1e9),
        p.memory == "SRAM" ? "MB" : "GB",
        100.0 * p.memoryPerChip / p.capacityPerChip,
        p.decodeBound == "memory bandwidth" ? "memory" : p.decodeBound.c_str(),
        p.compiled ? "compiled" : "estimate",
        p.meetsTargets ? "" : " (misses targets)",
        p.note.empty() ? "" : ("; " + p.note).c_str());
    out += buf;
  }
  out += whyTop(result, r);
  std::snprintf(buf, sizeof buf, "%lld candidates priced in %.2f s\n",
                (long long)result.evaluated, result.seconds);
  out += buf;
  out += "step: one decode step; TPOT: per output token under the plan's "
         "load, the other sequences' prefills interleaved between steps\n";
  const bool disaggregated =
      !result.plans.empty() && !result.plans.front().prefillSystem.empty();
  if (server && !disaggregated)
    out += "server: requests arrive as a Poisson process; tok/s is the "
           "highest rate at which the 99th-percentile TTFT (the waits for "
           "a free batch slot and for prefill included) and the "
           "99th-percentile TPOT (p99: the prefills interleaved in a "
           "request's decode vary) meet the targets\n";
  if (server && disaggregated)
    out += "server: requests arrive as a Poisson process; TTFT: the "
           "99th percentile of a prompt's wait on its prefill replica, its "
           "prefill and the KV cache's move; p99: the decode step and the "
           "wait for a decode slot spread over the output; tok/s: the "
           "highest decode rate whose slot wait meets both targets\n";
  bool anyEstimate = false;
  for (const Plan &p : result.plans)
    anyEstimate = anyEstimate || (!p.compiled && p.memory == "SRAM");
  if (anyEstimate)
    out += "estimate: priced by the cost model alone (--no-compile, or the "
           "layer budget was spent: scaled by the compiled layers' ratio to "
           "their estimates); compiled: the decode layer's schedule\n";
  if (!result.alone.empty()) {
    out += "each system alone, for the same request:\n";
    for (const Result::Alone &a : result.alone) {
      if (!a.plan) {
        out += "  " + a.system + ": no plan (" + a.why + ")\n";
        continue;
      }
      std::snprintf(buf, sizeof buf, ": %.0f tok/s, %.2f tok/s/W\n",
                    a.plan->tokensPerSecond, a.plan->tokensPerSecondPerWatt);
      out += "  " + a.system + ": " + describe(*a.plan) + buf;
    }
  }
  int64_t chunk = 0;
  for (const Plan &p : result.plans)
    chunk = std::max(chunk, p.prompt.chunk);
  if (chunk)
    out += "TTFT: the prompt's prefill priced by compiled chunks of " +
           std::to_string(chunk) +
           " tokens (chunked prefill; the other plans' scaled by their "
           "ratio to the estimate)\n";
  for (const std::string &f : result.compileFailures)
    out += "warning: " + f + "\n";
  return out;
}

std::string formatParetoTable(const Result &result, const Request &r) {
  std::string out = requestText(result, r);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "Pareto front of tokens/s per user against tokens/s per chip "
                "(%zu plans; none of the %lld candidates is better on both)\n",
                result.front.size(), (long long)result.evaluated);
  out += buf;
  std::snprintf(buf, sizeof buf, "%9s %10s %-5s %-20s %6s %5s %9s %9s %s\n",
                "tok/s/usr", "tok/s/chip", "chips", "tp x pp x ep x dp",
                "batch", "micro", "TTFT ms", "TPOT ms", "");
  out += buf;
  for (const Plan &p : result.front) {
    std::string split = std::to_string(p.tp) + " x " + std::to_string(p.pp) +
                        " x " + std::to_string(p.ep) + " x " +
                        std::to_string(p.dp);
    std::snprintf(buf, sizeof buf,
                  "%9.1f %10.1f %-5lld %-20s %6lld %5lld %9.1f %9.3f %s\n",
                  p.tokensPerSecondPerUser, perChip(p), (long long)p.chips,
                  split.c_str(), (long long)p.batch, (long long)p.micro,
                  p.ttft * 1e3, p.tpotLoaded * 1e3,
                  p.compiled                        ? "compiled"
                  : p.memory == "SRAM" && r.compile ? "estimate (calibrated)"
                                                    : "estimate");
    out += buf;
  }
  out += "tok/s/usr: 1 / TPOT, the TPOT under the plan's load; tok/s/chip: "
         "the plan's tokens/s over its chips; micro: micro-batches in flight "
         "through the stages\n";
  if (r.compile && !result.front.empty() &&
      result.front.front().memory == "SRAM")
    out += "estimate (calibrated): the cost model scaled by the compiled "
           "decode layers' and prefill chunks' ratios to their estimates, "
           "as the ranked plans are\n";
  return out;
}

namespace {
std::string htmlEscape(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// Ticks for an axis from `lo` to `hi`: 1, 2, 5 x a power of ten, about
/// five of them, never a zero on a log axis.
std::vector<double> axisTicks(double lo, double hi, bool log) {
  std::vector<double> ticks;
  if (log) {
    for (double d = std::pow(10, std::floor(std::log10(lo))); d <= hi * 1.0001;
         d *= 10)
      for (double k : {1.0, 2.0, 5.0})
        if (k * d >= lo * 0.9999 && k * d <= hi * 1.0001)
          ticks.push_back(k * d);
    return ticks;
  }
  double step = std::pow(10, std::floor(std::log10((hi - lo) / 4)));
  for (double k : {1.0, 2.0, 5.0, 10.0})
    if ((hi - lo) / (k * step) <= 6) {
      step *= k;
      break;
    }
  for (double v = std::ceil(lo / step) * step; v <= hi * 1.0001; v += step)
    ticks.push_back(v);
  return ticks;
}

std::string tickText(double v) {
  char buf[32];
  if (v >= 1e6)
    std::snprintf(buf, sizeof buf, "%gM", v / 1e6);
  else if (v >= 1e3)
    std::snprintf(buf, sizeof buf, "%gk", v / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
} // namespace

std::string formatParetoHtml(const Result &result, const Request &r) {
  std::ostringstream o;
  const std::string title =
      "loom plan --pareto: " + result.model + " on " + result.system;
  o << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
    << htmlEscape(title)
    << "</title><style>body{font-family:sans-serif;margin:24px;color:#222;"
       "max-width:1100px}h1{font-size:20px}.note{color:#555;font-size:13px;"
       "white-space:pre-wrap}"
       "table{border-collapse:collapse;font-size:12px}td,th{border:1px "
       "solid #ccc;padding:2px 6px;text-align:right}</style></head><body>\n"
    << "<h1>" << htmlEscape(title) << "</h1>\n<pre class=\"note\">"
    << htmlEscape(requestText(result, r)) << "</pre>\n";
  const std::vector<Plan> &front = result.front;
  if (front.empty()) {
    o << "<p>no plan meets the targets: the front is empty</p></body></html>\n";
    return o.str();
  }
  double xlo = 1e300, xhi = 0, ylo = 1e300, yhi = 0;
  for (const Plan &p : front) {
    xlo = std::min(xlo, p.tokensPerSecondPerUser);
    xhi = std::max(xhi, p.tokensPerSecondPerUser);
    ylo = std::min(ylo, perChip(p));
    yhi = std::max(yhi, perChip(p));
  }
  // A log axis where the values span more than a decade (a front spans
  // batch 1 to thousands), else linear; a single value gets a range
  // around it.
  auto widen = [](double &lo, double &hi) {
    if (hi <= lo * 1.0001) {
      lo = lo * 0.9;
      hi = hi * 1.1;
    }
  };
  widen(xlo, xhi);
  widen(ylo, yhi);
  const bool xlog = xhi / xlo > 10, ylog = yhi / ylo > 10;
  const double W = 560, H = 340, L = 70, T = 30, B = 50, R = 30;
  auto at = [](double v, double lo, double hi, bool log, double a, double b) {
    double f =
        log ? (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo))
            : (v - lo) / (hi - lo);
    return a + f * (b - a);
  };
  auto X = [&](double v) { return at(v, xlo, xhi, xlog, L, L + W); };
  auto Y = [&](double v) { return at(v, ylo, yhi, ylog, T + H, T); };
  char buf[256];
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"pareto\" width=\""
    << L + W + R << "\" height=\"" << T + H + B << "\">";
  o << "<text x=\"" << L
    << "\" y=\"18\" font-size=\"13\" "
       "font-weight=\"bold\">tokens/s per chip against tokens/s per user "
       "(Pareto front)</text>";
  o << "<rect x=\"" << L << "\" y=\"" << T << "\" width=\"" << W
    << "\" height=\"" << H << "\" fill=\"#fafafa\" stroke=\"#999\"/>";
  for (double v : axisTicks(xlo, xhi, xlog)) {
    std::snprintf(
        buf, sizeof buf,
        "<g class=\"xtick\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
        "y2=\"%.1f\" stroke=\"#e4e4e4\"/><text x=\"%.1f\" y=\"%.1f\" "
        "font-size=\"10\" text-anchor=\"middle\">",
        X(v), T, X(v), T + H, X(v), T + H + 14);
    o << buf << tickText(v) << "</text></g>";
  }
  for (double v : axisTicks(ylo, yhi, ylog)) {
    std::snprintf(
        buf, sizeof buf,
        "<g class=\"ytick\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
        "y2=\"%.1f\" stroke=\"#e4e4e4\"/><text x=\"%.1f\" y=\"%.1f\" "
        "font-size=\"10\" text-anchor=\"end\">",
        L, Y(v), L + W, Y(v), L - 4, Y(v) + 3);
    o << buf << tickText(v) << "</text></g>";
  }
  o << "<text class=\"xlabel\" x=\"" << L + W / 2 << "\" y=\"" << T + H + 36
    << "\" font-size=\"11\" text-anchor=\"middle\">tokens/s per user (1 / "
       "TPOT)"
    << (xlog ? ", log scale" : "") << "</text>";
  o << "<text class=\"ylabel\" x=\"16\" y=\"" << T + H / 2
    << "\" font-size=\"11\" transform=\"rotate(-90 16 " << T + H / 2
    << ")\" text-anchor=\"middle\">tokens/s per chip"
    << (ylog ? ", log scale" : "") << "</text>";
  o << "<polyline class=\"front\" fill=\"none\" stroke=\"#c0392b\" "
       "stroke-width=\"1.5\" points=\"";
  for (size_t i = 0; i < front.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.1f,%.1f", i ? " " : "",
                  X(front[i].tokensPerSecondPerUser), Y(perChip(front[i])));
    o << buf;
  }
  o << "\"/>";
  for (const Plan &p : front) {
    std::snprintf(
        buf, sizeof buf,
        "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
        "fill=\"#c0392b\" stroke=\"#333\" stroke-width=\"0.5\"><title>",
        X(p.tokensPerSecondPerUser), Y(perChip(p)));
    o << buf;
    std::snprintf(buf, sizeof buf,
                  "%lld chips, %s: %.1f tok/s per user, %.1f tok/s per chip, "
                  "TTFT %.1f ms",
                  (long long)p.chips, splitText(p).c_str(),
                  p.tokensPerSecondPerUser, perChip(p), p.ttft * 1e3);
    o << htmlEscape(buf) << "</title></circle>";
  }
  o << "</svg>\n<table><tr><th>tok/s/usr</th><th>tok/s/chip</th><th>chips</th>"
       "<th>split</th><th>TTFT ms</th><th>TPOT ms</th><th>priced "
       "by</th></tr>\n";
  for (const Plan &p : front) {
    std::snprintf(buf, sizeof buf,
                  "<tr><td>%.1f</td><td>%.1f</td><td>%lld</td><td>%s</td>"
                  "<td>%.1f</td><td>%.3f</td><td>%s</td></tr>\n",
                  p.tokensPerSecondPerUser, perChip(p), (long long)p.chips,
                  htmlEscape(splitText(p)).c_str(), p.ttft * 1e3,
                  p.tpotLoaded * 1e3,
                  p.compiled ? "compiled layer" : "cost model");
    o << buf;
  }
  o << "</table>\n</body></html>\n";
  return o.str();
}

std::string formatJson(const Result &result, const Request &r) {
  nlohmann::ordered_json j;
  j["request"] = {{"input_len", r.inputLen},
                  {"output_len", r.outputLen},
                  {"concurrency", r.concurrency},
                  {"request_rate", r.requestRate},
                  {"weights", r.weights},
                  {"kv", r.kv},
                  {"activations", r.activations},
                  {"ttft_s", r.ttft},
                  {"tpot_s", r.tpot},
                  {"max_chips", result.chips.max},
                  {"max_num_tokens", r.maxNumTokens},
                  {"scenario", r.scenario}};
  j["request"]["model"] = result.model;
  j["request"]["system"] = result.system;
  j["searched"] = {
      {"max_chips", result.chips.max}, {"max_chips_why", result.chips.why},
      {"tp_max", result.tpMax},        {"pp_max", result.ppMax},
      {"ep_max", result.epMax},        {"batch_max", result.batchMax}};
  j["ranked_by"] = rankedBy(r);
  if (std::string why = whyTop(result, r); !why.empty())
    j["why"] = why.substr(5, why.size() - 6); // without "why: " and "\n"

  auto planJson = [](const Plan &p) {
    nlohmann::ordered_json q;
    q["system"] = p.system;
    q["chips"] = p.chips;
    q["nodes"] = p.nodes;
    q["racks"] = p.racks;
    q["tp"] = p.tp;
    q["pp"] = p.pp;
    q["ep"] = p.ep;
    q["dp"] = p.dp;
    q["batch"] = p.batch;
    q["micro_batches"] = p.micro;
    q["concurrency"] = p.concurrency;
    q["ttft_s"] = p.ttft;
    q["ttft_alone_s"] = p.ttftAlone;
    q["prefill_steps"] = p.prefillSteps;
    q["requests_per_s_per_replica"] = p.requestRate;
    q["tpot_s"] = p.tpotLoaded;
    q["tpot_p99_s"] = p.tpotP99;
    q["decode_step_s"] = p.tpot;
    q["prefill_share_s"] = p.prefillShare;
    q["tokens_per_s_per_user"] = p.tokensPerSecondPerUser;
    q["tokens_per_s"] = p.tokensPerSecond;
    q["tokens_per_s_per_chip"] = perChip(p);
    q["tokens_per_s_per_watt"] = p.tokensPerSecondPerWatt;
    q["memory"] = p.memory;
    q["memory_per_chip_bytes"] = p.memoryPerChip;
    q["weights_per_chip_bytes"] = p.weightsPerChip;
    q["kv_per_chip_bytes"] = p.kvPerChip;
    q["capacity_per_chip_bytes"] = p.capacityPerChip;
    q["decode_bound"] = p.decodeBound;
    q["prefill_bound"] = p.prefillBound;
    q["meets_targets"] = p.meetsTargets;
    q["decode_priced_by"] = p.compiled ? "compiled layer" : "cost model";
    q["prefill_s"] = p.prompt.alone;
    q["prefill_layer_s"] = p.prompt.layer;
    q["prefill_priced_by"] = p.prompt.pricedBy;
    if (p.prompt.chunk)
      q["prefill_chunk_tokens"] = p.prompt.chunk;
    q["prefill_chunks_pipelined"] = p.prompt.chunks;
    if (p.compiled)
      q["layer_precision"] = p.layerPrecision;
    if (!p.prefillSystem.empty()) {
      q["prefill_system"] = p.prefillSystem;
      q["prefill_chips"] = p.prefillChips;
      q["prefill_replicas"] = p.prefillReplicas;
      q["prefill_tp"] = p.prefillTp;
      q["kv_move_s"] = p.kvMove;
    }
    if (!p.note.empty())
      q["note"] = p.note;
    return q;
  };
  nlohmann::ordered_json plans = nlohmann::ordered_json::array();
  for (const Plan &p : result.plans)
    plans.push_back(planJson(p));
  j["plans"] = plans;
  if (!result.alone.empty()) {
    nlohmann::ordered_json alone = nlohmann::ordered_json::array();
    for (const Result::Alone &a : result.alone) {
      nlohmann::ordered_json q =
          a.plan ? planJson(*a.plan) : nlohmann::ordered_json::object();
      if (!a.plan) {
        q["system"] = a.system;
        q["error"] = a.why;
      }
      alone.push_back(q);
    }
    j["alone"] = alone;
  }
  if (r.pareto) {
    nlohmann::ordered_json front = nlohmann::ordered_json::array();
    for (const Plan &p : result.front)
      front.push_back(planJson(p));
    j["pareto_front"] = front;
  }
  if (!result.compileFailures.empty())
    j["compile_failures"] = result.compileFailures;
  j["candidates"] = result.evaluated;
  j["seconds"] = result.seconds;
  return j.dump(2) + "\n";
}

} // namespace loom::plan
