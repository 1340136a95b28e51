//===- CompiledLayers.cpp - Spatial plans re-priced by compiling ----------===//
//
// On spatial targets (weights in SRAM) the cost model's estimate is
// replaced by the compiler's schedule: one decode layer compiled for a
// plan's tensor-parallel group and its latency reused for every layer,
// and the prompt's prefill chunks compiled likewise; the plans not
// compiled are scaled by the compiled ones' ratio to their estimates. A
// budget of compiled shapes keeps a search quick.
//
//===----------------------------------------------------------------------===//
#include "PlannerInternal.h"
#include "loom/Runtime/Progress.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <tuple>

namespace loom::plan {

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
    const std::function<SystemCostModel::Hop(const Plan &, int64_t)>
        &chunkHop) {
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
      const SystemCostModel::Hop hop = chunkHop(p, pipelineChunk);
      p.prompt.chunks = double(L) / double(pipelineChunk);
      p.prompt.hop = hop.latency + hop.transfer;
      p.prompt.hopTransfer = hop.transfer;
    }
    p.prefillShare *= layerSeconds / p.prompt.layer;
    p.prompt.layer = layerSeconds;
    p.prompt.alone = promptPass(
        p.pp, stageLayers(m.layers, p.pp, /*spatial=*/true, mlpWeightShare(m)),
        layerSeconds,
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

/// One search's re-pricing by compiled layers (repriceByCompiledLayers):
/// what it keeps, and its steps.
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
  // nodes). A mixture-of-experts layer is compiled on its tp chips at
  // the whole micro-batch: graph-partition splits every expert's
  // (interleaved) columns and the attention's heads over them (a spatial
  // plan has ep 1: Search::chooseDegrees).
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
  /// What a layer of `p` waits at its collectives
  /// (SystemCostModel::syncSeconds).
  double layerSync(const Plan &p) const {
    return s.cost.syncSeconds(p.tp, p.ep, p.kvGathered);
  }
  /// The layers' time in `p`'s decode step, as price() counts it: pp
  /// stages, each paced by the slowest (stageLayers): 80 layers over 33
  /// stages step at 33 x 2.5 = 82.5 layers' time, not 80. The halves are
  /// taken as equal: a decode layer's halves each wait one collective, and
  /// on tsp-v1 those waits are 33 us of its 42, so its MLP half is about
  /// 56% of it and a stage up to 2.4% longer than counted. (Before, a
  /// compiled layer was multiplied by the layers, which priced an uneven
  /// pipeline as if it were balanced, while the estimates it calibrated
  /// counted the slowest stage, whole layers of it.)
  double paced(const Plan &p) const {
    return double(p.pp) * stageLayers(m.layers, p.pp, /*spatial=*/true);
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
    return double(p.pp - 1) * s.cost.hop(vec, p.tp * p.pp * p.ep, p.tp * p.ep) +
           s.cost.lmHead(m.headParams, double(p.batch), p.tp,
                         s.bytesPerWeight) +
           (withSync ? paced(p) * layerSync(p) : 0.0);
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
         compilePrefill(
             prefill, result, result.front, m, configPath, systemName,
             precision, kvStorage, r, s.power, compileLayer,
             [&] { orderPlans(result, r); },
             [&](const Plan &p, int64_t chunk) {
               return s.cost.hopParts(double(chunk) * m.hidden *
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
    setTpot(p, paced(p) * *it->second + fixed(p, true, false));
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
        setTpot(p, paced(p) * estLayer[idOf(p)] * k +
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
    double est = (p.tpot - fixed(p, false, true)) / paced(p);
    auto it = cache.find(keyOf(p));
    if (it != cache.end() && it->second) {
      setTpot(p, paced(p) * *it->second + fixed(p, true, false));
      p.compiled = true;
      p.layerPrecision = precision;
    } else if (!ratios.empty()) {
      auto g = byGroup.find(group(p));
      double k = g != byGroup.end() ? median(g->second) : median(ratios);
      setTpot(p, paced(p) * est * k + fixed(p, false, true));
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
    estLayer[idOf(p)] = (p.tpot - fixed(p, false, true)) / paced(p);
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

void repriceByCompiledLayers(Result &result, const ModelCost &m,
                             const TargetModel &system, const Request &r,
                             const std::string &configPath,
                             const LayerCompiler &compileLayer,
                             const std::vector<WeightShare> &mix) {
  LayerCalibration(result, m, system, r, configPath, compileLayer, mix).run();
}

} // namespace loom::plan
