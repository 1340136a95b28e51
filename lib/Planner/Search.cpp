//===- Search.cpp - plan(): the search over candidate plans ---------------===//
//
// The request's checks and the chips searched, the candidate degrees and
// batches, their prices over threads (one tensor-parallel degree each),
// how plans are ranked and the Pareto front, why no plan fits when none
// does, and plan(), which runs them (and, on spatial targets, the
// re-pricing by compiled layers: CompiledLayers.cpp).
//
//===----------------------------------------------------------------------===//
#include "PlannerInternal.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

namespace loom::plan {

bool meets(const Plan &p, const Request &r) {
  return (r.ttft <= 0 || p.ttft <= r.ttft) &&
         (r.tpot <= 0 || p.tpotP99 <= r.tpot);
}

PlanId idOf(const Plan &p) {
  return {p.tp, p.pp, p.ep, p.dp, p.batch, p.micro};
}

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

double replicasNeeded(double slots, double requestsPerReplica,
                      const Request &r) {
  double dp = 1;
  if (r.concurrency > 0)
    dp = std::max(dp, std::ceil(double(r.concurrency) / slots));
  if (r.requestRate > 0 && requestsPerReplica > 0)
    dp = std::max(dp, std::ceil(r.requestRate / requestsPerReplica));
  return dp;
}

double perChip(const Plan &p) {
  return p.chips > 0 ? p.tokensPerSecond / double(p.chips) : 0;
}

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

namespace {

/// The replicas a candidate (one replica) needs for the load; more than
/// r.maxChips when that many do not fit.
int64_t replicas(const Plan &one, const Request &r) {
  double dp = replicasNeeded(double(one.concurrency),
                             one.tokensPerSecond / double(r.outputLen), r);
  return dp <= double(r.maxChips) ? static_cast<int64_t>(dp) : r.maxChips + 1;
}

/// The front best per user first (then fewer chips: deterministic).
void sortFront(std::vector<Plan> &front) {
  std::sort(front.begin(), front.end(), [](const Plan &a, const Plan &b) {
    if (a.tokensPerSecondPerUser != b.tokensPerSecondPerUser)
      return a.tokensPerSecondPerUser > b.tokensPerSecondPerUser;
    return idOf(a) < idOf(b);
  });
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
  /// A mixture of experts on a spatial system: ep stays 1.
  bool epBySpatialTp = false;
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
  int64_t tpMax =
      spatial ? std::min<int64_t>(m.heads, TargetModel::kMaxTensorParallel)
              : std::min<int64_t>(system.chipsPerNode(), m.heads);
  for (int64_t t = 1; t <= tpMax; t *= 2)
    if (r.tp == 0 || t == r.tp)
      tps.push_back(t);
  if (r.tp > 0 && tps.empty())
    tps.push_back(r.tp);
  for (int64_t q = 1; q <= m.layers; ++q)
    if (r.pp == 0 || q == r.pp)
      pps.push_back(q);
  // Expert parallelism (each ep group holds its experts, all-to-alls send
  // the tokens to them and back) on GPU systems only. A spatial system's
  // compiler splits a layer's experts by tensor parallelism (the decode
  // step reserves every expert for every token; graph-partition cuts each
  // expert's intermediate dimension, and the all-reduce the residual needs
  // sums them), with no all-to-all: an ep plan there would be priced as a
  // layout the compiler does not build, and its layer compiled as tp x ep
  // duplicates the tp plan of as many chips (partial: no expert-parallel
  // lowering yet).
  for (int64_t e = 1; e <= (spatial ? 1 : m.experts); e *= 2)
    eps.push_back(e);
  epBySpatialTp = spatial && m.experts > 1;
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
  result.expertsByTp = epBySpatialTp;
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
    repriceByCompiledLayers(result, m, system, r, configPath, compileLayer,
                            mix);
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

} // namespace loom::plan
