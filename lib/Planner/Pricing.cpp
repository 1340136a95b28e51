//===- Pricing.cpp - The planner's pricing: one candidate's price ---------===//
//
// price(): what a candidate's chips hold, its decode step and its
// prompts' prefill: the FLOPs and bytes of each kernel, priced by the cost
// model (SystemCostModel: its memory, links and matrix rates, the
// collectives and stage hops, a RooflineTime per kernel); then its rates,
// per user, per system and per watt (setRates). Every formula and
// efficiency factor is stated in docs/planner.md.
//
//===----------------------------------------------------------------------===//
#include "PlannerInternal.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace loom::plan {

namespace {

/// The share of `experts` that `tokens` tokens routed to `perToken` each
/// touch, under uniform routing: 1 - (1 - k/E)^tokens.
double touchedExpertShare(double tokens, int64_t experts, int64_t perToken) {
  return 1.0 - std::pow(1.0 - double(perToken) / double(experts), tokens);
}

/// What bounds a step or a prefill: the largest of its compute, memory and
/// link times.
const char *bigger(double compute, double memory, double link) {
  if (link >= compute && link >= memory)
    return "link";
  return compute >= memory ? "compute" : "memory bandwidth";
}

} // namespace

double rowsPerExpert(double rows, int64_t experts, int64_t perToken) {
  if (experts <= 1 || rows <= 0)
    return rows;
  return rows * double(perToken) /
         (double(experts) * touchedExpertShare(rows, experts, perToken));
}

void setReplicas(Plan &p, int64_t dp, const TargetModel &target) {
  p.dp = dp;
  p.chips = p.tp * p.pp * p.ep * dp;
  p.nodes = (p.chips + target.chipsPerNode() - 1) / target.chipsPerNode();
  p.racks = (p.chips + target.chipsPerRack() - 1) / target.chipsPerRack();
  p.concurrency = dp * p.micro * p.batch;
}

System::System(const TargetModel &target, const Request &r)
    : System(target, r, [&] {
        std::string bad;
        return weightMix(r.weights, bad);
      }()) {}

namespace {
/// The formats the matrix unit runs `mix` in, in its shares.
std::vector<SystemCostModel::WeightFormat>
matrixFormatsOf(const TargetModel &target,
                const std::vector<WeightShare> &mix) {
  std::vector<SystemCostModel::WeightFormat> formats;
  for (const WeightShare &w : mix)
    formats.push_back({w.share, matrixFormat(target, w.format)});
  return formats;
}
} // namespace

System::System(const TargetModel &target, const Request &r,
               const std::vector<WeightShare> &mix)
    : t(target), spatial(!target.hasOffChipMemory()),
      cost(target, matrixFormatsOf(target, mix), matrixFormat(target, r.kv)) {
  capacity = spatial ? double(target.sramBytesPerChip())
                     : double(target.offChipBytesPerChip());
  usable = spatial ? TargetModel::kPartitionSramShare : TargetModel::kHbmShare;
  bytesPerWeight = weightBytes(mix);
  power = target.powerWattsPerChip();
}

double stageLayers(int64_t layers, int64_t pp, bool spatial,
                   double mlpShare) {
  if (!spatial || layers <= 0 || pp <= 1)
    return std::ceil(double(layers) / double(std::max<int64_t>(pp, 1)));
  // Equal halves: the longest of pp runs of 2 x layers halves has
  // ceil(2 x layers / pp) of them.
  if (mlpShare == 0.5)
    return std::ceil(2.0 * double(layers) / double(pp)) / 2.0;
  // Else the split is searched (below), once per model, stage count and
  // share on each thread: the planner prices tens of thousands of
  // candidates of a few hundred stage counts.
  thread_local std::map<std::tuple<int64_t, int64_t, double>, double> known;
  auto [it, added] = known.try_emplace({layers, pp, mlpShare}, 0.0);
  if (!added)
    return it->second;
  // The halves in order, attention then MLP, in layers' time.
  const double a = 1.0 - mlpShare, b = mlpShare;
  auto stagesWithin = [&](double bound) {
    int64_t stages = 1;
    double stage = 0;
    for (int64_t i = 0; i < 2 * layers; ++i) {
      double half = i % 2 ? b : a;
      if (stage + half > bound + 1e-9) {
        ++stages;
        stage = 0;
      }
      stage += half;
    }
    return stages;
  };
  // The slowest stage of the best split is a run of halves: k whole
  // layers, and perhaps one more half, the lighter or the heavier. Those
  // candidates, in increasing order, are k + 0, k + min and k + max for k
  // = 0..layers (i / 3 + offset[i % 3]); the least that greedy packing
  // (optimal for contiguous runs) fits in pp stages is the answer. The
  // stages a bound needs only fall as it grows, so it is found by
  // bisection, without a list: the planner prices thousands of
  // candidates.
  const double offset[3] = {0.0, std::min(a, b), std::max(a, b)};
  auto candidate = [&](int64_t i) { return double(i / 3) + offset[i % 3]; };
  int64_t lo = 0, hi = 3 * layers; // candidate(hi) = layers always fits
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (candidate(mid) >= std::max(a, b) - 1e-12 &&
        stagesWithin(candidate(mid)) <= pp)
      hi = mid;
    else
      lo = mid + 1;
  }
  it->second = candidate(lo);
  return it->second;
}

double mlpWeightShare(const ModelCost &m) {
  const double mlp = double(m.experts) * m.expertParams;
  return mlp + m.attnParams > 0 ? mlp / (mlp + m.attnParams) : 0.5;
}

double promptPass(int64_t pp, double stageLayers, double layerSeconds,
                  double chunks, double hop, double hopTransfer,
                  double layerSync) {
  const double stage = stageLayers * (layerSeconds / chunks + layerSync);
  const double period = pp > 1 ? std::max(stage, hopTransfer) : stage;
  return double(pp) * stage + double(pp - 1) * hop + (chunks - 1) * period;
}

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

namespace {

/// One pipeline stage's prefill (Pricer::prefillStage): its kernels'
/// rooflines, the elementwise kernels and the link, and their sums.
struct StageTimes {
  RooflineTime matmuls, attention;
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
  /// The bytes of a weight, a KV-cache element and an activation; the
  /// layers' time a stage takes (stageLayers) and the layers whose KV
  /// cache a stage may hold (one whose cut falls inside a layer holds
  /// that layer's attention, so whole layers).
  const double wB, kvB, aB, Ls, LsWhole;
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
        Ls(stageLayers(m.layers, pp, s.spatial)),
        LsWhole(std::ceil(double(m.layers) / double(pp))) {}

  /// The layers' time a stage of a prompt takes (stageLayers, its halves
  /// weighed by their weights).
  double promptStageLayers() const {
    return stageLayers(m.layers, pp, s.spatial, mlpWeightShare(m));
  }

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
    kvBytes = inFlight * ctxMax * LsWhole * kvPerTokenLayer;
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
           (attnPerChip / s.cost.matmulRateAt(rows) +
            routed * m.expertParams / double(tp * ep) /
                s.cost.matmulRateAt(expertRows(rows)));
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
    const RooflineTime matmuls{matmulSeconds(tokens, stepRows),
                               s.cost.memorySeconds(weightsRead)};
    const RooflineTime attention{s.cost.attentionSeconds(attnFlops),
                                 s.cost.memorySeconds(cacheRead)};
    // The elementwise kernels between them, memory bound.
    const double elementwise = s.cost.memorySeconds(elementwiseBytes(tokens));
    double vec = tokens * m.hidden * aB;
    double gather =
        gatheredHeads > 0
            ? 2 * s.cost.allReduce(tokens * gatheredHeads * m.headDim * aB / 2,
                                   tp)
            : 0;
    double tLink =
        Ls * (2 * s.cost.allReduce(vec, tp) + gather +
              (m.experts > 1 ? 2 * s.cost.allToAll(vec * m.expertsPerToken, ep)
                             : 0) +
              s.cost.syncSeconds(tp, ep, p.kvGathered));
    double stage = matmuls.time() + attention.time() + elementwise + tLink;
    double hops = double(pp - 1) * s.cost.hop(vec, tp * pp * ep, tp * ep);
    // The LM head of the last stage: its weights once per step.
    double head = s.cost.lmHead(m.headParams, tokens, tp, wB);
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
        Ls * (2 * s.cost.allReduce(vectors, tp) +
              (m.experts > 1
                   ? 2 * s.cost.allToAll(vectors * m.expertsPerToken / ep, ep)
                   : 0));
    return StageTimes{
        {matmulSeconds(tokens, rows), s.cost.memorySeconds(weightsRead)},
        {s.cost.attentionSeconds(attnFlops),
         s.cost.memorySeconds(cacheWritten)},
        s.cost.memorySeconds(elementwiseBytes(tokens)),
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
    const SystemCostModel::Hop chunkHop =
        s.cost.hopParts(promptChunk * m.hidden * aB, tp * pp * ep, tp * ep);
    p.prompt.hop = chunkHop.latency + chunkHop.transfer;
    p.prompt.hopTransfer = chunkHop.transfer;
    p.prompt.layer = one.total() / Ls;
    p.prompt.layerSync = s.cost.syncSeconds(tp, ep, p.kvGathered);
    // A prompt's layers are compute bound: its stages split by the
    // weights' time (stageLayers).
    const double promptLayers = promptStageLayers();
    p.prompt.alone = promptPass(pp, promptLayers, p.prompt.layer,
                                p.prompt.chunks,
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
    // matmuls have the steps' rows (prefill-only chips: the budget's). A
    // stage of a prompt takes promptLayers layers' time.
    double chunk = std::max(L, double(r.maxNumTokens));
    p.prefillShare =
        r.decodeOnly ? 0
                     : prefillStage(chunk, chunk / L,
                                    r.prefillOnly ? std::min(chunk, budget)
                                                  : stepRows)
                               .total() /
                           Ls * promptLayers / (chunk / L);
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

} // namespace loom::plan
