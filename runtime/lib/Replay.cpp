//===- Replay.cpp - The schedule replayed event by event ------------------===//
//
// See Replay.h. Operand and unit checks walk the instrs in start order;
// SRAM overwrites are a sweep per tile over the buffers' data lifetimes,
// ordered by time, with the live ones kept by address.
//
//===----------------------------------------------------------------------===//
#include "loom/Runtime/Replay.h"

#include <algorithm>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <tuple>

namespace loom::rt {

const char *hazardKindName(HazardKind kind) {
  switch (kind) {
  case HazardKind::OperandLate:
    return "operand-late";
  case HazardKind::UnwrittenRead:
    return "unwritten-read";
  case HazardKind::UnitBusy:
    return "unit-busy";
  case HazardKind::TooFast:
    return "too-fast";
  case HazardKind::SramOverwrite:
    return "sram-overwrite";
  case HazardKind::RemoteAccess:
    return "remote-access";
  }
  return "?";
}

namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

int64_t addSat(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kNever : r;
}

/// Buffer ids to positions, and per buffer position the instrs (by
/// position) that write and read it, each list in instr order.
struct Uses {
  std::vector<std::vector<size_t>> writers, readers;
};

class Replayer {
public:
  Replayer(const Program &p, const std::vector<InstrTiming> &rules)
      : p_(p), rules_(rules) {}

  Replay run();

private:
  size_t bufferPos(int32_t id) const {
    return static_cast<size_t>(p_.bufferIndex(id));
  }
  void add(Hazard h) {
    ++out_.byKind[static_cast<int>(h.kind)];
    ++out_.byKernel[h.instr < 0 ? -1
                                : p_.instrs[static_cast<size_t>(
                                                p_.instrIndex(h.instr))]
                                      .kernel];
    out_.hazards.push_back(h);
  }
  void checkTiming();
  void checkUnits();
  void checkOperands();
  void checkOverwrites();
  void checkLocality();

  const Program &p_;
  const std::vector<InstrTiming> &rules_;
  std::vector<Box> boxes_;
  Uses uses_;
  Replay out_;
};

void Replayer::checkTiming() {
  for (size_t i = 0; i < p_.instrs.size(); ++i) {
    const ProgramInstr &in = p_.instrs[i];
    if (rules_.empty() || rules_[i].cycles <= in.duration)
      continue;
    Hazard h;
    h.kind = HazardKind::TooFast;
    h.instr = in.id;
    h.cycle = in.start;
    h.missing = rules_[i].cycles - in.duration;
    add(h);
  }
}

void Replayer::checkUnits() {
  // One slot per tile unit, then one per wire: link records of the same
  // kind and ends are one wire.
  std::map<std::tuple<bool, int32_t, int32_t, int32_t, int32_t>, size_t> wire;
  std::vector<size_t> wireOf(p_.links.size());
  for (size_t l = 0; l < p_.links.size(); ++l) {
    const ProgramLink &k = p_.links[l];
    auto key = std::make_tuple(k.chipLink, k.fromTile, k.toTile, k.fromChip,
                               k.toChip);
    wireOf[l] = wire.try_emplace(key, wire.size()).first->second;
  }
  const size_t tileSlots = static_cast<size_t>(p_.numTiles()) * kTileUnits;
  std::vector<int64_t> busyUntil(tileSlots + wire.size(), 0);
  std::vector<int32_t> occupant(busyUntil.size(), -1);
  for (size_t i = 0; i < p_.instrs.size(); ++i) {
    const ProgramInstr &in = p_.instrs[i];
    size_t slot =
        isLinkUnit(in.unit)
            ? tileSlots + wireOf[static_cast<size_t>(p_.linkIndex(in.resource))]
            : static_cast<size_t>(tileUnitSlot(in.resource, in.unit));
    if (busyUntil[slot] > in.start) {
      Hazard h;
      h.kind = HazardKind::UnitBusy;
      h.instr = in.id;
      h.cycle = in.start;
      h.missing = busyUntil[slot] - in.start;
      h.other = occupant[slot];
      add(h);
    }
    if (out_.finish[i] > busyUntil[slot]) {
      busyUntil[slot] = out_.finish[i];
      occupant[slot] = in.id;
    }
  }
}

namespace {

/// The box a ∩ b of two buffers' boxes (b may be null: a alone), read
/// dimension by dimension without building it.
struct Cut {
  const Box *a = nullptr, *b = nullptr;
  int64_t lo(size_t d) const {
    return b ? std::max(a->lo[d], b->lo[d]) : a->lo[d];
  }
  int64_t hi(size_t d) const {
    return b ? std::min(a->hi[d], b->hi[d]) : a->hi[d];
  }
  size_t rank() const { return a->rank(); }
  bool empty() const {
    for (size_t d = 0; d < rank(); ++d)
      if (hi(d) <= lo(d))
        return true;
    return false;
  }
  Box box() const { return b ? a->intersect(*b) : *a; }
};

bool overlaps(const Cut &x, const Cut &y) {
  for (size_t d = 0; d < x.rank(); ++d)
    if (std::min(x.hi(d), y.hi(d)) <= std::max(x.lo(d), y.lo(d)))
      return false;
  return true;
}

bool contains(const Cut &outer, const Cut &inner) {
  for (size_t d = 0; d < inner.rank(); ++d)
    if (inner.lo(d) < outer.lo(d) || inner.hi(d) > outer.hi(d))
      return false;
  return true;
}

} // namespace

void Replayer::checkOperands() {
  std::vector<Cut> wants, regions;
  for (size_t i = 0; i < p_.instrs.size(); ++i) {
    const ProgramInstr &in = p_.instrs[i];
    const bool kernelInstr = in.kernel >= 0 && !isLinkUnit(in.unit);
    for (int32_t r : in.reads) {
      size_t rp = bufferPos(r);
      const std::vector<size_t> &writers = uses_.writers[rp];
      // Nothing writes it: the host bound it (an input, a constant) before
      // cycle 0. An instr that writes what it reads accumulates in place.
      if (writers.empty() ||
          std::find(in.writes.begin(), in.writes.end(), r) != in.writes.end())
        continue;
      // What it needs: a kernel's instr the whole box, a transfer's the
      // part each buffer it writes holds.
      wants.clear();
      if (kernelInstr) {
        wants.push_back({&boxes_[rp], nullptr});
      } else {
        for (int32_t w : in.writes) {
          size_t wp = bufferPos(w);
          if (p_.buffers[wp].tensor != p_.buffers[rp].tensor)
            continue;
          Cut c{&boxes_[rp], &boxes_[wp]};
          if (!c.empty() || c.rank() == 0)
            wants.push_back(c);
        }
      }
      for (const Cut &want : wants) {
        // Every write of these bytes begun by the start must have arrived
        // (a kernel's matrix part and its epilogue both write its result;
        // a K split's parts each their partial sums), and together they
        // must cover them.
        Hazard h;
        h.instr = in.id;
        h.cycle = in.start;
        h.buffer = r;
        h.kind = HazardKind::UnwrittenRead;
        h.missing = -1;
        bool covered = false;
        regions.clear();
        for (size_t w : writers) {
          const ProgramInstr &by = p_.instrs[w];
          if (w == i || by.start > in.start)
            continue;
          // The boxes it writes into the buffer: a kernel's instr the
          // whole, a transfer's the part of each buffer it reads.
          const size_t before = regions.size();
          if (by.kernel >= 0 && !isLinkUnit(by.unit)) {
            regions.push_back({&boxes_[rp], nullptr});
          } else {
            for (int32_t from : by.reads) {
              size_t fp = bufferPos(from);
              if (p_.buffers[fp].tensor == p_.buffers[rp].tensor)
                regions.push_back({&boxes_[rp], &boxes_[fp]});
            }
          }
          for (size_t k = before; k < regions.size(); ++k) {
            if (want.rank() > 0 && !overlaps(regions[k], want))
              continue;
            if (out_.arrival[w] > in.start &&
                (h.kind != HazardKind::OperandLate ||
                 out_.arrival[w] - in.start > h.missing)) {
              h.kind = HazardKind::OperandLate;
              h.missing = out_.arrival[w] - in.start;
              h.other = by.id;
            }
            covered = covered || contains(regions[k], want);
          }
        }
        if (h.kind == HazardKind::UnwrittenRead) {
          if (!covered) {
            // No one write holds it all: several together may.
            std::vector<Box> missing = {want.box()};
            for (const Cut &c : regions) {
              std::vector<Box> next;
              Box b = c.box();
              for (const Box &m : missing)
                for (Box &piece : m.minus(b))
                  next.push_back(std::move(piece));
              missing = std::move(next);
              if (missing.empty())
                break;
            }
            covered = missing.empty();
          }
          if (covered)
            continue;
          // The first writer that starts too late.
          for (size_t w : writers)
            if (w != i && p_.instrs[w].start > in.start) {
              h.other = p_.instrs[w].id;
              break;
            }
        }
        add(h);
        break; // one hazard per operand
      }
    }
  }
}

void Replayer::checkOverwrites() {
  // Each buffer's data lives from its first write (cycle 0 when the host
  // binds it) to its last reader's end; always for a resident weight, to
  // the end for a model output a kernel writes.
  std::vector<bool> isOutput(p_.tensors.size(), false);
  for (int32_t id : p_.outputs)
    isOutput[static_cast<size_t>(p_.tensorIndex(id))] = true;
  struct Span {
    int64_t from = 0, until = 0, lo = 0, hi = 0;
    int32_t lastReader = -1;
  };
  std::vector<Span> spans(p_.buffers.size());
  for (size_t b = 0; b < p_.buffers.size(); ++b) {
    const ProgramBuffer &buf = p_.buffers[b];
    Span &s = spans[b];
    s.lo = buf.offset;
    s.hi = addSat(buf.offset, buf.size);
    s.from = kNever;
    for (size_t w : uses_.writers[b])
      s.from = std::min(s.from, p_.instrs[w].start);
    if (uses_.writers[b].empty())
      s.from = 0;
    for (size_t w : uses_.writers[b])
      s.until = std::max(s.until, out_.arrival[w]);
    for (size_t r : uses_.readers[b])
      if (out_.finish[r] >= s.until) {
        s.until = out_.finish[r];
        s.lastReader = p_.instrs[r].id;
      }
    // The host reads an output from the buffers its kernel writes (a copy
    // a transfer makes for a reader on another tile is dropped after it).
    bool kernelWrites = false;
    for (size_t w : uses_.writers[b])
      kernelWrites = kernelWrites || p_.instrs[w].kernel >= 0;
    if (buf.resident ||
        (kernelWrites &&
         isOutput[static_cast<size_t>(p_.tensorIndex(buf.tensor))]))
      s.until = kNever;
  }
  // Writes by the instrs that put bytes in SRAM (a kernel's, a transfer's
  // DMA; a link only carries them), by tile and cycle.
  struct Write {
    int32_t tile = 0;
    int64_t at = 0;
    size_t buffer = 0, instr = 0;
  };
  constexpr size_t kHost = std::numeric_limits<size_t>::max();
  std::vector<Write> writes;
  for (size_t b = 0; b < p_.buffers.size(); ++b)
    if (uses_.writers[b].empty())
      writes.push_back({p_.buffers[b].tile, 0, b, kHost});
  for (size_t i = 0; i < p_.instrs.size(); ++i) {
    const ProgramInstr &in = p_.instrs[i];
    if (isLinkUnit(in.unit))
      continue;
    for (int32_t w : in.writes) {
      size_t wp = bufferPos(w);
      writes.push_back({p_.buffers[wp].tile, in.start, wp, i});
    }
  }
  auto byTileTime = [](const Write &a, const Write &b) {
    return std::tie(a.tile, a.at, a.instr) < std::tie(b.tile, b.at, b.instr);
  };
  std::sort(writes.begin(), writes.end(), byTileTime);
  std::vector<size_t> order(p_.buffers.size());
  for (size_t b = 0; b < order.size(); ++b)
    order[b] = b;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_tuple(p_.buffers[a].tile, spans[a].from, a) <
           std::make_tuple(p_.buffers[b].tile, spans[b].from, b);
  });

  size_t next = 0; // into order
  for (size_t wi = 0; wi < writes.size();) {
    const int32_t tile = writes[wi].tile;
    // The spans of this tile: live ones by address, expiring by time.
    while (next < order.size() && p_.buffers[order[next]].tile < tile)
      ++next;
    std::set<std::pair<int64_t, size_t>> live;
    std::priority_queue<std::pair<int64_t, size_t>,
                        std::vector<std::pair<int64_t, size_t>>,
                        std::greater<>>
        expiry;
    int64_t longest = 0;
    for (; wi < writes.size() && writes[wi].tile == tile; ++wi) {
      const Write &w = writes[wi];
      for (; next < order.size() && p_.buffers[order[next]].tile == tile &&
             spans[order[next]].from <= w.at;
           ++next) {
        const Span &s = spans[order[next]];
        if (s.until <= s.from || s.hi <= s.lo)
          continue;
        live.insert({s.lo, order[next]});
        expiry.push({s.until, order[next]});
        longest = std::max(longest, s.hi - s.lo);
      }
      while (!expiry.empty() && expiry.top().first <= w.at) {
        live.erase({spans[expiry.top().second].lo, expiry.top().second});
        expiry.pop();
      }
      const Span &mine = spans[w.buffer];
      for (auto it = live.lower_bound({mine.lo - longest + 1, 0});
           it != live.end() && it->first < mine.hi; ++it) {
        const Span &s = spans[it->second];
        if (it->second == w.buffer || s.hi <= mine.lo)
          continue;
        Hazard h;
        h.kind = HazardKind::SramOverwrite;
        h.instr = w.instr == kHost ? -1 : p_.instrs[w.instr].id;
        h.cycle = w.at;
        h.missing = s.until == kNever ? -1 : s.until - w.at;
        h.other = s.lastReader;
        h.buffer = p_.buffers[w.buffer].id;
        h.otherBuffer = p_.buffers[it->second].id;
        add(h);
      }
    }
  }
}

void Replayer::checkLocality() {
  for (size_t i = 0; i < p_.instrs.size(); ++i) {
    const ProgramInstr &in = p_.instrs[i];
    if (isLinkUnit(in.unit))
      continue;
    auto check = [&](int32_t id) {
      if (p_.buffers[bufferPos(id)].tile == in.resource)
        return;
      Hazard h;
      h.kind = HazardKind::RemoteAccess;
      h.instr = in.id;
      h.cycle = in.start;
      h.buffer = id;
      add(h);
    };
    for (int32_t r : in.reads)
      check(r);
    if (in.unit != Unit::Dma)
      for (int32_t w : in.writes)
        check(w);
  }
}

Replay Replayer::run() {
  const size_t n = p_.instrs.size();
  out_.finish.resize(n);
  out_.arrival.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const ProgramInstr &in = p_.instrs[i];
    int64_t cycles = rules_.empty() ? in.duration : rules_[i].cycles;
    out_.finish[i] = addSat(in.start, cycles);
    int64_t wire = 0;
    if (in.unit == Unit::ChipLink)
      wire = p_.links[static_cast<size_t>(p_.linkIndex(in.resource))]
                 .latencyCycles;
    out_.arrival[i] = addSat(out_.finish[i], wire);
  }
  boxes_.reserve(p_.buffers.size());
  for (const ProgramBuffer &b : p_.buffers)
    boxes_.push_back(bufferBox(p_, b));
  uses_.writers.resize(p_.buffers.size());
  uses_.readers.resize(p_.buffers.size());
  for (size_t i = 0; i < n; ++i) {
    for (int32_t w : p_.instrs[i].writes)
      uses_.writers[bufferPos(w)].push_back(i);
    for (int32_t r : p_.instrs[i].reads)
      uses_.readers[bufferPos(r)].push_back(i);
  }
  checkTiming();
  checkUnits();
  checkOperands();
  checkOverwrites();
  checkLocality();
  auto key = [](const Hazard &h) {
    return std::make_tuple(h.cycle, h.instr, h.kind, h.buffer, h.otherBuffer,
                           h.other, h.missing);
  };
  std::sort(out_.hazards.begin(), out_.hazards.end(),
            [&](const Hazard &a, const Hazard &b) { return key(a) < key(b); });
  return std::move(out_);
}

std::string describeInstr(const Program &p, int32_t id) {
  const ProgramInstr &in = p.instr(id);
  std::string s = "instr " + std::to_string(id) + " of " +
                  (in.kernel >= 0 ? p.describeKernel(in.kernel)
                                  : std::string("a transfer"));
  if (isLinkUnit(in.unit)) {
    const ProgramLink &l = p.link(in.resource);
    s += l.chipLink ? " on chip link " + std::to_string(l.id) + " (chip " +
                          std::to_string(l.fromChip) + " -> chip " +
                          std::to_string(l.toChip) + ")"
                    : " on mesh link " + std::to_string(l.id) + " (tile " +
                          std::to_string(l.fromTile) + " -> tile " +
                          std::to_string(l.toTile) + ")";
  } else {
    s += " on the " + std::string(unitName(in.unit)) + " unit of " +
         p.describeTile(in.resource);
  }
  return s;
}

std::string describeBuffer(const Program &p, int32_t id) {
  const ProgramBuffer &b = p.buffer(id);
  const ProgramTensor &t = p.tensor(b.tensor);
  return "buffer " + std::to_string(id) + " (tensor " +
         std::to_string(b.tensor) + (t.name.empty() ? "" : " '" + t.name + "'") +
         " " +
         bufferBox(p, b).str() + ", bytes [" + std::to_string(b.offset) +
         ", " + std::to_string(addSat(b.offset, b.size)) + ") of " +
         p.describeTile(b.tile) + ")";
}

} // namespace

Replay replaySchedule(const Program &p,
                      const std::vector<InstrTiming> &rules) {
  if (!rules.empty() && rules.size() != p.instrs.size())
    throw Error(p.path + ": replay: " + std::to_string(rules.size()) +
                " timing rules for " + std::to_string(p.instrs.size()) +
                " instrs");
  return Replayer(p, rules).run();
}

std::string describeHazard(const Program &p, const Hazard &h) {
  const std::string who =
      h.instr < 0 ? std::string("the host") : describeInstr(p, h.instr);
  const std::string at = " at cycle " + std::to_string(h.cycle);
  const std::string kind = std::string(" (") + hazardKindName(h.kind) + ")";
  auto missing = [&](const char *what) {
    return ": " + std::to_string(h.missing) +
           (h.missing == 1 ? " cycle " : " cycles ") + what;
  };
  switch (h.kind) {
  case HazardKind::OperandLate:
    return who + " starts" + at + ", but " + describeBuffer(p, h.buffer) +
           " it reads arrives at cycle " +
           std::to_string(addSat(h.cycle, h.missing)) + " from " +
           describeInstr(p, h.other) + missing("missing") + kind;
  case HazardKind::UnwrittenRead:
    return who + " starts" + at + " and reads " +
           describeBuffer(p, h.buffer) +
           ", bytes of which nothing has written by then" +
           (h.other >= 0 ? " (" + describeInstr(p, h.other) +
                               " writes them at cycle " +
                               std::to_string(p.instr(h.other).start) + ")"
                         : std::string()) +
           kind;
  case HazardKind::UnitBusy:
    return who + " starts" + at + ", but " + describeInstr(p, h.other) +
           " occupies it until cycle " +
           std::to_string(addSat(h.cycle, h.missing)) +
           " by its timing rule" + missing("missing") + kind;
  case HazardKind::TooFast: {
    const int64_t duration = p.instr(h.instr).duration;
    return who + " is scheduled for " + std::to_string(duration) +
           " cycles, but its timing rule takes " +
           std::to_string(addSat(duration, h.missing)) + missing("missing") +
           kind;
  }
  case HazardKind::RemoteAccess:
    return who + " at cycle " + std::to_string(h.cycle) + " uses " +
           describeBuffer(p, h.buffer) +
           ", out of its unit's reach: a unit reads and writes only its own "
           "tile's SRAM, a DMA writes elsewhere only through the mesh" +
           kind;
  case HazardKind::SramOverwrite:
    return who + " writes " + describeBuffer(p, h.buffer) + at + " over " +
           describeBuffer(p, h.otherBuffer) + ", whose data " +
           (h.missing < 0 ? std::string("must stay to the end")
                          : "is read until cycle " +
                                std::to_string(addSat(h.cycle, h.missing)) +
                                (h.other >= 0 ? " by " +
                                                    describeInstr(p, h.other)
                                              : std::string()) +
                                missing("too early")) +
           kind;
  }
  return who + kind;
}

} // namespace loom::rt
