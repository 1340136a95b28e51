//===- ScheduleVerifier.cpp - Prove a program's schedule is sound ---------===//
//
// Every check is a sort and a sweep (or a graph walk) over the program's own
// lists; ids are resolved through maps built here, not the Program's, so a
// program edited in memory (as the fault-injection test does) is checked as
// it stands. See ScheduleVerifier.h for what is proven.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/ScheduleVerifier.h"

#include "loom/Runtime/InstrTiming.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

namespace loom::rt {

const char *violationKindName(ViolationKind kind) {
  switch (kind) {
  case ViolationKind::Deadlock:
    return "deadlock";
  case ViolationKind::Dependency:
    return "dependency";
  case ViolationKind::DataArrival:
    return "data-arrival";
  case ViolationKind::Locality:
    return "locality";
  case ViolationKind::Liveness:
    return "liveness";
  case ViolationKind::ResourceConflict:
    return "resource-conflict";
  case ViolationKind::SramBounds:
    return "sram-bounds";
  case ViolationKind::BufferCopies:
    return "buffer-copies";
  case ViolationKind::SramOverlap:
    return "sram-overlap";
  case ViolationKind::Latency:
    return "latency";
  case ViolationKind::Timing:
    return "timing";
  case ViolationKind::DataFlow:
    return "data-flow";
  }
  return "?";
}

namespace {

/// The pieces of [start, end) on the circle of `period` (or the line when
/// `period` is 0): up to two [lo, hi) intervals.
std::vector<std::pair<int64_t, int64_t>> piecesOf(int64_t start, int64_t end,
                                                  int64_t period) {
  if (!period)
    return {{start, end}};
  if (end - start >= period)
    return {{0, period}};
  int64_t lo = start % period;
  if (lo < 0)
    lo += period;
  int64_t hi = lo + (end - start);
  if (hi <= period)
    return {{lo, hi}};
  return {{lo, period}, {0, hi - period}};
}

/// The lifetime pieces of a buffer in a program of `period` (0: not
/// pipelined); a resident buffer of a pipelined program is live always.
std::vector<std::pair<int64_t, int64_t>> bufferPieces(const ProgramBuffer &b,
                                                      int64_t period) {
  if (b.size <= 0)
    return {};
  if (b.resident && period)
    return {{0, period}};
  if (b.liveEnd <= b.liveStart)
    return {};
  return piecesOf(b.liveStart, b.liveEnd, period);
}

/// a + b, saturating at the int64 range (hostile files).
int64_t addSat(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? std::numeric_limits<int64_t>::max()
                 : std::numeric_limits<int64_t>::min();
  return r;
}

class Verifier {
public:
  Verifier(const Program &p, size_t maxViolations,
           std::vector<InstrTiming> *timings = nullptr)
      : p_(p), max_(std::max<size_t>(1, maxViolations)), timings_(timings),
        plans_([this](int32_t id) -> const ProgramTensor & {
          return tensorOf(id);
        }) {
    instrPos_.reserve(p.instrs.size());
    bufferPos_.reserve(p.buffers.size());
    linkPos_.reserve(p.links.size());
    tensorPos_.reserve(p.tensors.size());
    kernelPos_.reserve(p.kernels.size());
    for (size_t i = 0; i < p.instrs.size(); ++i)
      instrPos_.emplace(p.instrs[i].id, i);
    for (size_t i = 0; i < p.buffers.size(); ++i)
      bufferPos_.emplace(p.buffers[i].id, i);
    for (size_t i = 0; i < p.links.size(); ++i)
      linkPos_.emplace(p.links[i].id, i);
    for (size_t i = 0; i < p.tensors.size(); ++i)
      tensorPos_.emplace(p.tensors[i].id, i);
    for (size_t i = 0; i < p.kernels.size(); ++i)
      kernelPos_.emplace(p.kernels[i].id, i);
    // A mesh link is the wire between two tiles, a chip link the bundle
    // between two chips: records with the same kind and ends share one
    // resource.
    for (size_t i = 0; i < p.links.size(); ++i) {
      const ProgramLink &l = p.links[i];
      auto ends = l.chipLink ? std::make_tuple(true, l.fromChip, l.toChip)
                             : std::make_tuple(false, l.fromTile, l.toTile);
      auto [it, fresh] = wireOf_.emplace(ends, wireOf_.size());
      linkWire_.push_back(it->second);
    }
    writers_.resize(p.buffers.size());
    for (size_t i = 0; i < p.instrs.size(); ++i)
      for (int32_t b : p.instrs[i].writes)
        if (auto bp = find(bufferPos_, b))
          writers_[*bp].push_back(i);
    period_ = p.pipelined() ? p.initiationInterval : 0;
  }

  std::vector<Violation> run() {
    // Each check assumes the ids it follows exist.
    if (!checkReferences())
      return out_;
    for (auto check : {&Verifier::checkDeadlock, &Verifier::checkDeps,
                       &Verifier::checkDataArrival, &Verifier::checkResident,
                       &Verifier::checkHostData,
                       &Verifier::checkLocality, &Verifier::checkLiveness,
                       &Verifier::checkResources, &Verifier::checkSramBounds,
                       &Verifier::checkCopies, &Verifier::checkSramOverlap,
                       &Verifier::checkLatency, &Verifier::checkDataFlow,
                       &Verifier::checkWrittenCoverage,
                       &Verifier::checkTiming}) {
      (this->*check)();
      if (full())
        break;
    }
    return out_;
  }

private:
  static std::optional<size_t> find(const IdIndex &m, int32_t id) {
    return m.find(id);
  }
  /// The position of an id the reference check has found.
  static size_t posOf(const IdIndex &m, int32_t id) {
    if (std::optional<size_t> pos = m.find(id))
      return *pos;
    throw Error("no record with id " + std::to_string(id));
  }
  const ProgramTensor &tensorOf(int32_t id) const {
    auto pos = find(tensorPos_, id);
    if (!pos)
      throw Error("no tensor with id " + std::to_string(id));
    return p_.tensors[*pos];
  }
  bool full() const { return out_.size() >= max_; }
  void add(ViolationKind kind, std::string msg, int32_t instr = -1,
           int32_t buffer = -1) {
    if (!full())
      out_.push_back({kind, std::move(msg), instr, buffer});
  }

  //===--------------------------------------------------------------------===//
  // Naming
  //===--------------------------------------------------------------------===//

  /// "tile 5 (1,1)"; with several chips "tile 5 (chip 1, 0,1)", the row
  /// and column within the chip.
  std::string tile(int64_t t) const { return p_.describeTile(t); }
  /// "mesh link 3 (tile 0 -> tile 1)", "chip link 3 (chip 0 -> chip 1)".
  std::string link(int32_t id, bool chipLink) const {
    std::string s =
        (chipLink ? "chip link " : "mesh link ") + std::to_string(id);
    if (auto l = find(linkPos_, id)) {
      const ProgramLink &rec = p_.links[*l];
      // Named by what the record is, whatever the instr expected.
      if (rec.chipLink)
        s = "chip link " + std::to_string(id) + " (chip " +
            std::to_string(rec.fromChip) + " -> chip " +
            std::to_string(rec.toChip) + ")";
      else
        s = "mesh link " + std::to_string(id) + " (tile " +
            std::to_string(rec.fromTile) + " -> tile " +
            std::to_string(rec.toTile) + ")";
    }
    return s;
  }
  std::string resource(const ProgramInstr &in) const {
    if (isLinkUnit(in.unit))
      return link(in.resource, in.unit == Unit::ChipLink);
    return std::string(unitName(in.unit)) + " unit of " + tile(in.resource);
  }
  std::string kernel(int32_t id) const {
    if (auto pos = find(kernelPos_, id)) {
      const ProgramKernel &k = p_.kernels[*pos];
      std::string s = "kernel " + std::to_string(id) + " '" + k.name + "'";
      if (!k.onnxNodes.empty()) {
        s += " (onnx: ";
        for (size_t i = 0; i < k.onnxNodes.size(); ++i)
          s += (i ? ", " : "") + k.onnxNodes[i];
        s += ")";
      }
      return s;
    }
    return id < 0 ? "transfer" : "kernel " + std::to_string(id);
  }
  std::string instr(const ProgramInstr &in) const {
    return "instr " + std::to_string(in.id) + " [" + kernel(in.kernel) + ", " +
           resource(in) + ", cycles " + std::to_string(in.start) + "-" +
           std::to_string(in.end()) +
           (in.latency ? ", arrives " + std::to_string(in.arrival()) : "") +
           "]";
  }
  std::string tensor(int32_t id) const {
    std::string s = "tensor " + std::to_string(id);
    auto t = find(tensorPos_, id);
    if (t && !p_.tensors[*t].name.empty())
      s += " '" + p_.tensors[*t].name + "'";
    return s;
  }
  std::string buffer(size_t pos) const {
    const ProgramBuffer &b = p_.buffers[pos];
    std::string s = "buffer " + std::to_string(b.id) + " (" + tensor(b.tensor) +
                    ", " + tile(b.tile) + ", bytes [" +
                    std::to_string(b.offset) + ", " +
                    std::to_string(addSat(b.offset, b.footprint())) + ")";
    if (b.copies > 1)
      s += " in " + std::to_string(b.copies) + " copies";
    s += b.resident ? ", resident"
                    : ", live [" + std::to_string(b.liveStart) + ", " +
                          std::to_string(b.liveEnd) + ")";
    if (!writers_[pos].empty())
      s += ", written by " + kernel(p_.instrs[writers_[pos].front()].kernel);
    return s + ")";
  }
  std::string stream() const {
    return period_ ? " (across inputs of the stream, initiation interval " +
                         std::to_string(period_) + ")"
                   : "";
  }

  //===--------------------------------------------------------------------===//
  // Checks
  //===--------------------------------------------------------------------===//

  bool checkReferences() {
    for (const ProgramInstr &in : p_.instrs) {
      if (full())
        return false;
      for (int32_t d : in.deps)
        if (!full() && !find(instrPos_, d))
          add(ViolationKind::Dependency,
              instr(in) + " depends on instr " + std::to_string(d) +
                  ", which does not exist",
              in.id);
      for (const auto *list : {&in.reads, &in.writes})
        for (int32_t b : *list)
          if (!full() && !find(bufferPos_, b))
            add(ViolationKind::Liveness,
                instr(in) + " uses buffer " + std::to_string(b) +
                    ", which does not exist",
                in.id);
      bool isLink = isLinkUnit(in.unit);
      auto l = isLink ? find(linkPos_, in.resource) : std::nullopt;
      if (isLink ? !l : in.resource < 0 || in.resource >= p_.numTiles()) {
        add(ViolationKind::ResourceConflict,
            instr(in) + " runs on a " + (isLink ? "link" : "tile") +
                " that does not exist",
            in.id);
      } else if (l && p_.links[*l].chipLink != (in.unit == Unit::ChipLink)) {
        bool chip = in.unit == Unit::ChipLink;
        add(ViolationKind::ResourceConflict,
            instr(in) + " is a " + (chip ? "chip-link" : "mesh-link") +
                " instr but link " + std::to_string(in.resource) + " is a " +
                (chip ? "mesh link" : "chip link"),
            in.id);
      }
    }
    for (const ProgramBuffer &b : p_.buffers)
      if (b.tile < 0 || b.tile >= p_.numTiles())
        add(ViolationKind::SramBounds,
            "buffer " + std::to_string(b.id) + " (" + tensor(b.tensor) +
                ") is on a tile that does not exist",
            -1, b.id);
    return out_.empty();
  }

  void checkDeadlock() {
    size_t n = p_.instrs.size();
    std::vector<size_t> indegree(n, 0);
    std::vector<std::vector<size_t>> users(n);
    for (size_t i = 0; i < n; ++i)
      for (int32_t d : p_.instrs[i].deps) {
        users[posOf(instrPos_, d)].push_back(i);
        ++indegree[i];
      }
    std::vector<size_t> ready;
    for (size_t i = 0; i < n; ++i)
      if (indegree[i] == 0)
        ready.push_back(i);
    size_t done = 0;
    while (!ready.empty()) {
      size_t i = ready.back();
      ready.pop_back();
      ++done;
      for (size_t u : users[i])
        if (--indegree[u] == 0)
          ready.push_back(u);
    }
    if (done == n)
      return;
    // Walk deps among the instrs left over until one repeats: a cycle.
    size_t at = 0;
    while (indegree[at] == 0)
      ++at;
    std::vector<size_t> path;
    std::vector<int64_t> seenAt(n, -1);
    while (seenAt[at] < 0) {
      seenAt[at] = static_cast<int64_t>(path.size());
      path.push_back(at);
      for (int32_t d : p_.instrs[at].deps) {
        size_t dp = posOf(instrPos_, d);
        if (indegree[dp] > 0) {
          at = dp;
          break;
        }
      }
    }
    std::string cycle;
    for (size_t k = static_cast<size_t>(seenAt[at]); k < path.size(); ++k)
      cycle += "instr " + std::to_string(p_.instrs[path[k]].id) + " waits for ";
    cycle += "instr " + std::to_string(p_.instrs[at].id);
    add(ViolationKind::Deadlock,
        "deadlock: the dependencies form a cycle (" + cycle + "), starting at " +
            instr(p_.instrs[at]));
  }

  void checkDeps() {
    for (const ProgramInstr &in : p_.instrs)
      for (int32_t d : in.deps) {
        if (full())
          return;
        const ProgramInstr &dep = p_.instrs[posOf(instrPos_, d)];
        if (in.start < dep.arrival())
          add(ViolationKind::Dependency,
              instr(in) + " starts at cycle " + std::to_string(in.start) +
                  " before its dep " + instr(dep) +
                  (dep.latency ? " delivers at cycle " : " finishes at cycle ") +
                  std::to_string(dep.arrival()),
              in.id);
      }
  }

  void checkDataArrival() {
    for (const ProgramInstr &in : p_.instrs) {
      if (full())
        return;
      std::vector<int32_t> deps = in.deps;
      std::sort(deps.begin(), deps.end());
      for (int32_t b : in.reads) {
        size_t bp = posOf(bufferPos_, b);
        const ProgramBuffer &buf = p_.buffers[bp];
        bool anyWriter = false;
        for (size_t w : writers_[bp]) {
          if (full())
            return;
          const ProgramInstr &writer = p_.instrs[w];
          if (writer.id == in.id)
            continue;
          anyWriter = true;
          if (!std::binary_search(deps.begin(), deps.end(), writer.id))
            add(ViolationKind::DataArrival,
                instr(in) + " reads " + buffer(bp) + " written by " +
                    instr(writer) +
                    " without depending on it: nothing orders the read "
                    "after the data arrives",
                in.id, b);
        }
        auto t = find(tensorPos_, buf.tensor);
        bool computed = t && (p_.tensors[*t].kind == TensorKind::Intermediate ||
                              p_.tensors[*t].kind == TensorKind::Output);
        if (!anyWriter && computed && !buf.resident)
          add(ViolationKind::DataArrival,
              instr(in) + " reads " + buffer(bp) +
                  ", which no instr writes: its data never arrives",
              in.id, b);
      }
    }
  }

  /// A tile's units touch only its own SRAM: a matrix or vector instr reads
  /// and writes buffers of its tile, a DMA instr reads buffers of its tile
  /// (and writes wherever it sends them).
  void checkLocality() {
    for (const ProgramInstr &in : p_.instrs) {
      if (full())
        return;
      if (isLinkUnit(in.unit))
        continue;
      auto check = [&](int32_t id, const char *verb) {
        size_t bp = posOf(bufferPos_, id);
        if (p_.buffers[bp].tile != in.resource)
          add(ViolationKind::Locality,
              instr(in) + " " + verb + " " + buffer(bp) +
                  ", which is in another tile's SRAM",
              in.id, id);
      };
      for (int32_t b : in.reads)
        check(b, "reads");
      if (in.unit != Unit::Dma)
        for (int32_t b : in.writes)
          check(b, "writes");
    }
  }

  /// What the host provides and takes: a model input no instr writes is
  /// there from the iteration's start; a model output a kernel writes stays
  /// until the iteration ends (the host reads it then); a constant no instr
  /// writes is resident, or a later buffer could overwrite the weight
  /// before the next input reads it.
  void checkHostData() {
    for (size_t bp = 0; bp < p_.buffers.size(); ++bp) {
      if (full())
        return;
      const ProgramBuffer &b = p_.buffers[bp];
      auto t = find(tensorPos_, b.tensor);
      if (!t || b.size <= 0)
        continue;
      TensorKind kind = p_.tensors[*t].kind;
      bool written = !writers_[bp].empty();
      bool byKernel = false;
      for (size_t w : writers_[bp])
        byKernel = byKernel || p_.instrs[w].kernel >= 0;
      if (kind == TensorKind::Input && !written && !b.resident &&
          b.liveStart != 0)
        add(ViolationKind::Liveness,
            buffer(bp) + " holds a model input but is not live from cycle "
                         "0, when the host writes it",
            -1, b.id);
      else if (kind == TensorKind::Output && byKernel &&
               b.liveEnd < p_.totalCycles)
        add(ViolationKind::Liveness,
            buffer(bp) + " holds a model output but dies before the end of "
                         "the iteration (" +
                std::to_string(p_.totalCycles) + "), when the host reads it",
            -1, b.id);
      else if (kind == TensorKind::Constant && !written && !b.resident)
        add(ViolationKind::DataArrival,
            buffer(bp) + " holds a constant that no instr writes but is not "
                         "resident: its bytes may be reused before the next "
                         "input reads them",
            -1, b.id);
    }
  }

  /// Only constants (weights) are resident, and nothing writes them.
  void checkResident() {
    for (size_t bp = 0; bp < p_.buffers.size(); ++bp) {
      if (full())
        return;
      const ProgramBuffer &b = p_.buffers[bp];
      if (!b.resident)
        continue;
      auto t = find(tensorPos_, b.tensor);
      if (!t || p_.tensors[*t].kind != TensorKind::Constant)
        add(ViolationKind::DataArrival,
            buffer(bp) + " is resident but holds a tensor that is not a "
                         "constant: every input would share its one copy",
            -1, b.id);
      else if (!writers_[bp].empty())
        add(ViolationKind::DataArrival,
            buffer(bp) + " is resident (a constant) but " +
                instr(p_.instrs[writers_[bp].front()]) + " writes it",
            p_.instrs[writers_[bp].front()].id, b.id);
    }
  }

  void checkLiveness() {
    for (const ProgramInstr &in : p_.instrs) {
      if (full())
        return;
      // What it writes must stay live until it arrives.
      auto check = [&](int32_t id, const char *verb, int64_t until) {
        size_t bp = posOf(bufferPos_, id);
        const ProgramBuffer &b = p_.buffers[bp];
        if (b.resident && period_)
          return; // live always
        if (in.start < b.liveStart || until > b.liveEnd)
          add(ViolationKind::Liveness,
              instr(in) + " " + verb + " " + buffer(bp) +
                  ", which is not live for the whole instr",
              in.id, id);
      };
      for (int32_t b : in.reads)
        check(b, "reads", in.end());
      for (int32_t b : in.writes)
        check(b, "writes", in.arrival());
    }
  }

  void checkResources() {
    // (resource slot, lo, hi, instr position), swept per slot in start order
    // with one running end: any overlap shows against the latest holder.
    std::vector<std::tuple<size_t, int64_t, int64_t, size_t>> busy;
    for (size_t i = 0; i < p_.instrs.size(); ++i) {
      if (full())
        return;
      const ProgramInstr &in = p_.instrs[i];
      if (in.duration <= 0)
        continue;
      if (period_ && in.duration > period_) {
        add(ViolationKind::ResourceConflict,
            instr(in) + " runs " + std::to_string(in.duration) +
                " cycles, longer than the initiation interval " +
                std::to_string(period_) + ": it overlaps itself on the " +
                resource(in) + " in the next input of the stream",
            in.id);
        continue;
      }
      size_t slot = isLinkUnit(in.unit)
                        ? static_cast<size_t>(p_.numTiles() * kTileUnits) +
                              linkWire_[posOf(linkPos_, in.resource)]
                        : static_cast<size_t>(
                              tileUnitSlot(in.resource, in.unit));
      for (auto [lo, hi] : piecesOf(in.start, in.end(), period_))
        busy.emplace_back(slot, lo, hi, i);
    }
    std::sort(busy.begin(), busy.end());
    for (size_t k = 1, holder = 0; k < busy.size(); ++k) {
      auto [slot, lo, hi, i] = busy[k];
      auto [hslot, hlo, hhi, hi_] = busy[holder];
      if (slot == hslot && lo < hhi && i != hi_) {
        add(ViolationKind::ResourceConflict,
            instr(p_.instrs[i]) + " and " + instr(p_.instrs[hi_]) +
                " overlap on the " + resource(p_.instrs[i]) + stream(),
            p_.instrs[i].id);
        if (full())
          return;
      }
      if (slot != hslot || hi > hhi)
        holder = k;
    }
  }

  void checkSramBounds() {
    for (size_t bp = 0; bp < p_.buffers.size(); ++bp) {
      if (full())
        return;
      const ProgramBuffer &b = p_.buffers[bp];
      int64_t footprint;
      if (b.offset < 0 || b.size < 0 || b.copies < 1 ||
          __builtin_mul_overflow(b.size, int64_t(b.copies), &footprint) ||
          footprint > p_.sramBytesPerTile ||
          b.offset > p_.sramBytesPerTile - footprint)
        add(ViolationKind::SramBounds,
            buffer(bp) + " lies outside its tile's SRAM of " +
                std::to_string(p_.sramBytesPerTile) + " bytes",
            -1, b.id);

    }
  }

  void checkCopies() {
    if (!period_)
      return;
    for (size_t bp = 0; bp < p_.buffers.size(); ++bp) {
      if (full())
        return;
      const ProgramBuffer &b = p_.buffers[bp];
      if (b.resident || b.size == 0)
        continue;
      int64_t span = b.liveEnd - b.liveStart, cover = 0;
      if (__builtin_mul_overflow(int64_t(b.copies), period_, &cover))
        cover = std::numeric_limits<int64_t>::max();
      if (span > cover)
        add(ViolationKind::BufferCopies,
            buffer(bp) + " lives " + std::to_string(span) +
                " cycles but its " + std::to_string(b.copies) +
                " copies cover only " + std::to_string(cover) +
                " at initiation interval " + std::to_string(period_) +
                ": the next inputs overwrite it while it is live",
            -1, b.id);
    }
  }

  void checkSramOverlap() {
    // Per tile: (lo, buffer id, hi, buffer position) pieces of each buffer's
    // lifetime (modulo the period), swept in time with the live footprints
    // kept by offset; live footprints are disjoint, so a clash shows against
    // a neighbour by address.
    std::map<int32_t, std::vector<std::tuple<int64_t, int32_t, int64_t, size_t>>>
        byTile;
    for (size_t bp = 0; bp < p_.buffers.size(); ++bp) {
      if (full())
        return;
      const ProgramBuffer &b = p_.buffers[bp];
      for (auto [lo, hi] : bufferPieces(b, period_))
        byTile[b.tile].emplace_back(lo, b.id, hi, bp);
    }
    for (auto &[t, list] : byTile) {
      std::sort(list.begin(), list.end());
      std::map<int64_t, size_t> byOffset; // offset -> buffer position
      std::multimap<int64_t, size_t> byEnd;
      for (auto [lo, id, hi, bp] : list) {
        while (!byEnd.empty() && byEnd.begin()->first <= lo) {
          byOffset.erase(p_.buffers[byEnd.begin()->second].offset);
          byEnd.erase(byEnd.begin());
        }
        const ProgramBuffer &b = p_.buffers[bp];
        auto clash = [&](size_t other) {
          add(ViolationKind::SramOverlap,
              buffer(bp) + " and " + buffer(other) +
                  " overlap in SRAM while both are live" + stream(),
              -1, b.id);
        };
        auto next = byOffset.lower_bound(b.offset);
        if (next != byOffset.end() && next->second != bp &&
            p_.buffers[next->second].offset < addSat(b.offset, b.footprint()))
          clash(next->second);
        if (next != byOffset.begin()) {
          auto prev = std::prev(next);
          const ProgramBuffer &o = p_.buffers[prev->second];
          if (prev->second != bp && addSat(o.offset, o.footprint()) > b.offset)
            clash(prev->second);
        }
        if (full())
          return;
        if (byOffset.emplace(b.offset, bp).second)
          byEnd.emplace(hi, bp);
      }
    }
  }

  void checkLatency() {
    for (const ProgramInstr &in : p_.instrs)
      if (!full() && in.arrival() > p_.totalCycles)
        add(ViolationKind::Latency,
            instr(in) + " ends after the program's total_cycles " +
                std::to_string(p_.totalCycles),
            in.id);
  }

  /// Every kernel instr reads, on its tile, the boxes of the kernel's
  /// inputs that its ops need for the boxes it writes (a convolution's rows
  /// with their halo, a matmul's whole K): re-derived from the ops
  /// (checkTileOperands), not from the scheduler's placement. The Vector
  /// instr beside a kernel's Matrix instr on one tile is the same
  /// computation (its epilogue) and reads through it.
  void checkDataFlow() {
    std::set<std::pair<int32_t, int32_t>> matrixOn;
    for (const ProgramInstr &in : p_.instrs)
      if (in.kernel >= 0 && in.unit == Unit::Matrix)
        matrixOn.insert({in.kernel, in.resource});
    for (const ProgramInstr &in : p_.instrs) {
      if (full())
        return;
      auto kernelAt = find(kernelPos_, in.kernel);
      // A kernel without ops (a timing-only program built in code) has no
      // data flow to check.
      if (in.kernel < 0 || !kernelAt || p_.kernels[*kernelAt].ops.empty() ||
          (in.unit == Unit::Vector && matrixOn.count({in.kernel, in.resource})))
        continue;
      std::map<int32_t, Box> held, out;
      auto hold = [&](std::map<int32_t, Box> &m, int32_t bufferId) {
        const ProgramBuffer &b = p_.buffers[*find(bufferPos_, bufferId)];
        Box box = b.boxLo.empty() ? Box::whole(tensorOf(b.tensor).shape)
                                  : Box{b.boxLo, b.boxHi};
        auto [it, fresh] = m.emplace(b.tensor, box);
        if (!fresh)
          it->second = it->second.unite(box);
      };
      try {
        for (int32_t id : in.reads)
          hold(held, id);
        for (int32_t id : in.writes)
          hold(out, id);
        // Only what the kernel computes (a DMA instr of a kernel that loads
        // its inputs, in programs built in code, computes nothing).
        const std::vector<int32_t> &outs = p_.kernels[*kernelAt].outputs;
        if (std::any_of(out.begin(), out.end(), [&](const auto &o) {
              return std::find(outs.begin(), outs.end(), o.first) == outs.end();
            }))
          continue;
        plans_.checkOperands(p_.kernels[*kernelAt].ops, held, out);
      } catch (const Error &e) {
        add(ViolationKind::DataFlow,
            instr(in) + " does not read what its ops need: " + e.what(),
            in.id);
      }
    }
  }

  /// Every byte read of a computed tensor's buffer was written there: the
  /// boxes its writers put in it (a kernel's instr its whole box, a
  /// transfer's DMA the overlap of the buffer it reads) cover the buffer's
  /// box. (A buffer several DMAs fill, as a K split's partial sums, is
  /// not complete because one of them writes it.)
  void checkWrittenCoverage() {
    auto boxOf = [&](const ProgramBuffer &b) -> std::optional<Box> {
      if (!b.boxLo.empty())
        return Box{b.boxLo, b.boxHi};
      auto t = find(tensorPos_, b.tensor);
      if (!t)
        return std::nullopt;
      return Box::whole(p_.tensors[*t].shape);
    };
    std::vector<bool> read(p_.buffers.size(), false);
    for (const ProgramInstr &in : p_.instrs)
      for (int32_t b : in.reads)
        if (auto pos = find(bufferPos_, b))
          read[*pos] = true;
    for (size_t bp = 0; bp < p_.buffers.size() && !full(); ++bp) {
      const ProgramBuffer &b = p_.buffers[bp];
      auto t = find(tensorPos_, b.tensor);
      if (!read[bp] || b.resident || writers_[bp].empty() || !t ||
          (p_.tensors[*t].kind != TensorKind::Intermediate &&
           p_.tensors[*t].kind != TensorKind::Output))
        continue;
      std::optional<Box> want = boxOf(b);
      if (!want)
        continue;
      std::vector<Box> missing = {*want};
      for (size_t w : writers_[bp]) {
        const ProgramInstr &in = p_.instrs[w];
        if (isLinkUnit(in.unit))
          continue;
        std::vector<Box> written;
        if (in.kernel >= 0) {
          written.push_back(*want);
        } else {
          for (int32_t r : in.reads)
            if (auto rp = find(bufferPos_, r);
                rp && p_.buffers[*rp].tensor == b.tensor)
              if (std::optional<Box> rb = boxOf(p_.buffers[*rp]))
                written.push_back(rb->intersect(*want));
        }
        for (const Box &wb : written) {
          std::vector<Box> next;
          for (const Box &m : missing)
            for (Box &piece : m.minus(wb))
              next.push_back(std::move(piece));
          missing = std::move(next);
          // Pathological fragmentation: stop refining, report what is left.
          if (missing.size() > 4096)
            break;
        }
        if (missing.empty())
          break;
      }
      if (!missing.empty())
        add(ViolationKind::DataFlow,
            buffer(bp) + " is read but " + missing.front().str() +
                " of its box " + want->str() +
                " is written by no instr (its writers: " +
                std::to_string(writers_[bp].size()) + ")",
            -1, b.id);
    }
  }

  /// Every instr lasts at least what its timing rule gives for the shape
  /// re-derived from the program (InstrTiming.h), and a transfer's instr
  /// says it carries at least the bytes its buffers derive. A program
  /// built in code without a target chip has no rules to check.
  void checkTiming() {
    if (!p_.chip)
      return;
    std::vector<InstrTiming> rules;
    try {
      rules = instrTimings(p_, &plans_);
    } catch (const Error &e) {
      add(ViolationKind::Timing, e.what());
      return;
    }
    struct Keep {
      std::vector<InstrTiming> &rules, *out;
      ~Keep() {
        if (out)
          *out = std::move(rules);
      }
    } keep{rules, timings_};
    for (size_t i = 0; i < p_.instrs.size() && !full(); ++i) {
      const ProgramInstr &in = p_.instrs[i];
      const InstrTiming &t = rules[i];
      if (in.duration < t.cycles)
        add(ViolationKind::Timing,
            instr(in) + " lasts " + std::to_string(in.duration) +
                " cycles, less than the " + std::to_string(t.cycles) +
                " its timing rule gives (" + t.ruleText() + ")",
            in.id);
      else if (in.unit == Unit::MeshLink && in.bytes > 0 && t.bytes == 0)
        add(ViolationKind::Timing,
            instr(in) + " says it carries " + std::to_string(in.bytes) +
                " bytes, but no copy of its transfer routes across it (XY, "
                "columns first)",
            in.id);
      else if (in.kernel < 0 && in.bytes < t.bytes)
        add(ViolationKind::Timing,
            instr(in) + " says it carries " + std::to_string(in.bytes) +
                " bytes, but the buffers it moves hold " +
                std::to_string(t.bytes) + " (" + t.ruleText() + ")",
            in.id);
    }
  }

  const Program &p_;
  size_t max_;
  std::vector<InstrTiming> *timings_ = nullptr;
  std::vector<Violation> out_;
  IdIndex instrPos_, bufferPos_, linkPos_, tensorPos_, kernelPos_;
  /// Each link record's wire: distinct (chip link, from, to), the ends
  /// being tiles for a mesh link and chips for a chip link.
  std::map<std::tuple<bool, int32_t, int32_t>, size_t> wireOf_;
  std::vector<size_t> linkWire_;
  /// Instr positions writing each buffer (by buffer position).
  std::vector<std::vector<size_t>> writers_;
  /// The initiation interval of a pipelined program; 0 otherwise.
  int64_t period_ = 0;
  /// Each kernel instr's backward propagation, shared by the data-flow and
  /// the timing checks and across repeated kernels.
  TilePlanCache plans_;
};

} // namespace

std::vector<Violation> verifySchedule(const Program &program,
                                      size_t maxViolations) {
  return Verifier(program, maxViolations).run();
}

std::vector<int64_t> sramPeakPerTile(const Program &program) {
  int64_t period = program.pipelined() ? program.initiationInterval : 0;
  std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>> events;
  for (const ProgramBuffer &b : program.buffers)
    for (auto [lo, hi] : bufferPieces(b, period)) {
      events[b.tile].push_back({lo, b.footprint()});
      events[b.tile].push_back({hi, -b.footprint()});
    }
  std::vector<int64_t> peak(static_cast<size_t>(program.numTiles()), 0);
  for (auto &[t, ev] : events) {
    std::sort(ev.begin(), ev.end()); // ends before starts at equal cycles
    int64_t live = 0;
    for (auto [cycle, bytes] : ev) {
      live = addSat(live, bytes);
      if (t >= 0 && t < program.numTiles())
        peak[static_cast<size_t>(t)] =
            std::max(peak[static_cast<size_t>(t)], live);
    }
  }
  return peak;
}

void verifyScheduleOrThrow(const Program &program,
                           std::vector<InstrTiming> *timings) {
  std::vector<Violation> v = Verifier(program, 1, timings).run();
  if (!v.empty())
    throw Error(program.path + ": schedule violation: " + v.front().message);
}

} // namespace loom::rt
