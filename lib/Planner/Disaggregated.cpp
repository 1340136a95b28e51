//===- Disaggregated.cpp - Prefill on one system, decode on another -------===//
//
// planDisaggregated(): a decode search and a prefill search (plan() on
// each system), the prefill plan chosen, the decode plans priced with
// their prompts prefilled elsewhere and each request's KV cache moved
// between the systems, and each system alone for the same request.
//
//===----------------------------------------------------------------------===//
#include "PlannerInternal.h"

#include <algorithm>
#include <cmath>

namespace loom::plan {

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
  auto moveOf = [&](const Plan &q) {
    return SystemCostModel::moveOutSeconds(prefillSystem, kvBytes, q.chips);
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

} // namespace loom::plan
