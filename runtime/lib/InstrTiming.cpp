//===- InstrTiming.cpp - Each instruction's timing rule, re-derived -------===//
#include "loom/Runtime/InstrTiming.h"

#include "loom/Runtime/Isa.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>

namespace loom::rt {

Box bufferBox(const Program &p, const ProgramBuffer &b) {
  if (b.boxLo.empty())
    return Box::whole(p.tensor(b.tensor).shape);
  return Box{b.boxLo, b.boxHi};
}

int64_t storedBytes(const ProgramTensor &t, int64_t elements) {
  std::optional<NumericFormat> narrow;
  if (t.storage != NumericFormat::F32)
    narrow = t.storage;
  int64_t per = bytesStoredAs(static_cast<int64_t>(dtypeSize(t.dtype)), narrow);
  int64_t bytes = 0;
  if (__builtin_mul_overflow(elements, per, &bytes))
    return std::numeric_limits<int64_t>::max();
  return bytes;
}

std::string InstrTiming::ruleText() const {
  auto contractionText = [&] {
    std::string s = std::to_string(contractions) + " contraction" +
                    (contractions == 1 ? "" : "s");
    if (contractions > 0) {
      const Contraction &c = firstContraction;
      s += " (" + std::to_string(c.batch) + " x " + std::to_string(c.m) + "x" +
           std::to_string(c.n) + "x" + std::to_string(c.k) +
           (contractions > 1 ? ", ..." : "") + ")";
    }
    return s;
  };
  const std::string sram = std::to_string(sramBytes) + " SRAM bytes";
  switch (rule) {
  case Rule::None:
    return "no rule";
  case Rule::KernelMatrix:
    return "kernel.matrix: " + contractionText() + " in " +
           numericFormatName(format) + ", " + sram;
  case Rule::KernelEpilogue:
    return "kernel.epilogue: " + std::to_string(vectorOps) + " vector ops";
  case Rule::KernelVector:
    return "kernel.vector: " + contractionText() + ", " +
           std::to_string(vectorOps) + " vector ops, " + sram;
  case Rule::KernelDma:
    return "kernel.dma: " + sram;
  case Rule::TransferChip:
    return "transfer.chip: " + std::to_string(bytes) + " bytes";
  case Rule::TransferMesh:
    return "transfer.mesh: " + std::to_string(bytes) + " bytes, " +
           std::to_string(hops) + " hops" +
           (leaves ? "" : ", within the tile");
  case Rule::LinkMesh:
    return "link.mesh: " + std::to_string(bytes) + " bytes, " +
           std::to_string(hops) + " hops";
  case Rule::LinkChip:
    return "link.chip: " + std::to_string(bytes) + " bytes at " +
           std::to_string(rate) + " bytes/cycle";
  }
  return "no rule";
}

namespace {

void addSat(int64_t &a, int64_t b) {
  if (__builtin_add_overflow(a, b, &a))
    a = std::numeric_limits<int64_t>::max();
}

/// Row and column of system-wide tile `t` on its chip.
std::pair<int64_t, int64_t> coords(const Program &p, int64_t t) {
  int64_t local = t % std::max<int64_t>(1, p.tilesPerChip());
  return {local / p.tileCols, local % p.tileCols};
}

int64_t hopsBetween(const Program &p, int64_t a, int64_t b) {
  auto [ra, ca] = coords(p, a);
  auto [rb, cb] = coords(p, b);
  return std::abs(ra - rb) + std::abs(ca - cb);
}

/// True if the XY route (columns first, then rows) from tile `a` to tile
/// `b` of one chip steps from `u` to `v`.
bool routeCrosses(const Program &p, int64_t a, int64_t b, int64_t u,
                  int64_t v) {
  if (p.chipOf(a) != p.chipOf(b) || p.chipOf(u) != p.chipOf(a))
    return false;
  auto [ra, ca] = coords(p, a);
  auto [rb, cb] = coords(p, b);
  auto [ru, cu] = coords(p, u);
  auto [rv, cv] = coords(p, v);
  auto between = [](int64_t x, int64_t from, int64_t to) {
    return from <= to ? from <= x && x <= to : to <= x && x <= from;
  };
  if (ru == rv && ru == ra && std::abs(cu - cv) == 1) {
    // The row leg: from column ca to cb along row ra, in its direction.
    int64_t step = cb > ca ? 1 : -1;
    return cb != ca && cv - cu == step && between(cu, ca, cb) &&
           between(cv, ca, cb);
  }
  if (cu == cv && cu == cb && std::abs(ru - rv) == 1) {
    int64_t step = rb > ra ? 1 : -1;
    return rb != ra && rv - ru == step && between(ru, ra, rb) &&
           between(rv, ra, rb);
  }
  return false;
}

class Deriver {
public:
  Deriver(const Program &p, TilePlanCache *plans) : p_(p), chip_(*p.chip) {
    if (!plans) {
      own_ = std::make_unique<TilePlanCache>(
          [this](int32_t id) -> const ProgramTensor & { return tensor(id); });
      plans = own_.get();
    }
    plans_ = plans;
    // Ids are resolved here, not through the Program's index (a program
    // edited in memory, as fault injection does, is timed as it stands).
    bufferPos_.reserve(p.buffers.size());
    tensorPos_.reserve(p.tensors.size());
    kernelPos_.reserve(p.kernels.size());
    linkPos_.reserve(p.links.size());
    for (size_t i = 0; i < p.buffers.size(); ++i)
      bufferPos_.emplace(p.buffers[i].id, i);
    for (size_t i = 0; i < p.tensors.size(); ++i)
      tensorPos_.emplace(p.tensors[i].id, i);
    boxes_.reserve(p.buffers.size());
    for (const ProgramBuffer &b : p.buffers)
      boxes_.push_back(b.boxLo.empty() ? Box::whole(tensor(b.tensor).shape)
                                       : Box{b.boxLo, b.boxHi});
    for (size_t i = 0; i < p.kernels.size(); ++i)
      kernelPos_.emplace(p.kernels[i].id, i);
    for (size_t i = 0; i < p.links.size(); ++i)
      linkPos_.emplace(p.links[i].id, i);
    for (const ProgramInstr &in : p.instrs)
      if (in.kernel >= 0 && in.unit == Unit::Matrix)
        matrixOn_.insert({in.kernel, in.resource});
  }

  InstrTiming derive(const ProgramInstr &in) {
    if (in.kernel >= 0)
      return kernelInstr(in);
    switch (in.unit) {
    case Unit::Dma:
      return transferDma(in);
    case Unit::MeshLink:
      return meshLink(in);
    case Unit::ChipLink:
      return chipLink(in);
    default:
      // The loader and the verifier refuse a transfer on a matrix or vector
      // unit; its rule is the DMA's.
      return transferDma(in);
    }
  }

private:
  template <typename T>
  const T &lookup(const std::vector<T> &v,
                  const IdIndex &pos, int32_t id, const char *what) const {
    std::optional<size_t> at = pos.find(id);
    if (!at)
      throw Error(std::string("no ") + what + " with id " + std::to_string(id));
    return v[*at];
  }
  const ProgramBuffer &buf(int32_t id) const {
    return lookup(p_.buffers, bufferPos_, id, "buffer");
  }
  const ProgramTensor &tensor(int32_t id) const {
    return lookup(p_.tensors, tensorPos_, id, "tensor");
  }
  const ProgramKernel &kernel(int32_t id) const {
    return lookup(p_.kernels, kernelPos_, id, "kernel");
  }
  const ProgramLink &link(int32_t id) const {
    return lookup(p_.links, linkPos_, id, "link");
  }
  /// Buffer `b`'s box, derived once (by its position in the program).
  const Box &box(const ProgramBuffer &b) const {
    return boxes_[static_cast<size_t>(&b - p_.buffers.data())];
  }

  /// Bytes of buffer `id` as stored: its box at its tensor's format, or
  /// its size where that is smaller (a weight a narrow kernel reads is
  /// stored at the kernel's precision).
  int64_t bufferBytes(int32_t id) const {
    const ProgramBuffer &b = buf(id);
    return std::min(b.size,
                    storedBytes(tensor(b.tensor), box(b).elements()));
  }

  /// Bytes of the part of `r`'s box that `w` holds (as `w` stores them).
  int64_t overlapBytes(const ProgramBuffer &r, const ProgramBuffer &w) const {
    if (r.tensor != w.tensor)
      return 0;
    return storedBytes(tensor(w.tensor), box(r).overlap(box(w)));
  }

  const TileWork &work(const ProgramInstr &in) {
    auto key = std::make_pair(in.kernel, in.resource);
    auto it = works_.find(key);
    if (it != works_.end())
      return it->second;
    const ProgramKernel &k = kernel(in.kernel);
    std::map<int32_t, Box> boxes;
    for (int32_t id : in.writes) {
      const ProgramBuffer &b = buf(id);
      const Box &held = box(b);
      auto [at, fresh] = boxes.emplace(b.tensor, held);
      if (!fresh)
        at->second = at->second.unite(held);
    }
    TileWork w;
    try {
      w = plans_->work(k.ops, boxes);
    } catch (const Error &e) {
      throw Error("instr " + std::to_string(in.id) + " (kernel " +
                  std::to_string(in.kernel) + " '" + k.name + "'): " + e.what());
    }
    return works_.emplace(key, std::move(w)).first->second;
  }

  InstrTiming kernelInstr(const ProgramInstr &in) {
    TileWork w = work(in);
    // A data-movement kernel reads each element it writes once (a gather
    // reads its rows, not the table); the others read their operands'
    // buffers and write their results'.
    if (in.unit != Unit::Dma)
      for (int32_t id : in.reads)
        addSat(w.sramBytes, bufferBytes(id));
    for (int32_t id : in.writes) {
      addSat(w.sramBytes, bufferBytes(id));
      if (in.unit == Unit::Dma)
        addSat(w.sramBytes, bufferBytes(id));
    }
    const ProgramKernel &k = kernel(in.kernel);
    NumericFormat format = k.precision;
    InstrTiming t;
    t.contractions = static_cast<int64_t>(w.contractions.size());
    if (!w.contractions.empty())
      t.firstContraction = w.contractions.front();
    t.format = format;
    t.vectorOps = w.vectorOps;
    t.sramBytes = w.sramBytes;
    switch (in.unit) {
    case Unit::Matrix:
      t.cycles = matrixInstrCycles(chip_.tile, format, w);
      t.rule = InstrTiming::Rule::KernelMatrix;
      break;
    case Unit::Vector:
      if (matrixOn_.count({in.kernel, in.resource})) {
        t.cycles = epilogueInstrCycles(chip_.tile, w);
        t.rule = InstrTiming::Rule::KernelEpilogue;
      } else {
        t.cycles = vectorInstrCycles(chip_.tile, w);
        t.rule = InstrTiming::Rule::KernelVector;
      }
      break;
    default:
      t.cycles = dmaKernelInstrCycles(chip_.tile, w);
      t.rule = InstrTiming::Rule::KernelDma;
      break;
    }
    return t;
  }

  InstrTiming transferDma(const ProgramInstr &in) {
    InstrTiming t;
    int64_t hops = 0;
    bool leaves = false, crossesChips = false;
    for (int32_t w : in.writes) {
      const ProgramBuffer &wb = buf(w);
      for (int32_t r : in.reads) {
        const ProgramBuffer &rb = buf(r);
        addSat(t.bytes, overlapBytes(rb, wb));
        if (p_.chipOf(rb.tile) != p_.chipOf(wb.tile))
          crossesChips = true;
        else
          hops = std::max(hops, hopsBetween(p_, rb.tile, wb.tile));
        leaves = leaves || rb.tile != wb.tile;
      }
    }
    if (crossesChips) {
      t.cycles = chipInjectCycles(chip_, t.bytes);
      t.rule = InstrTiming::Rule::TransferChip;
    } else {
      t.cycles = meshTransferCycles(chip_, t.bytes, hops, leaves);
      t.rule = InstrTiming::Rule::TransferMesh;
      t.hops = hops;
      t.leaves = leaves;
    }
    return t;
  }

  InstrTiming meshLink(const ProgramInstr &in) {
    InstrTiming t;
    const ProgramLink &l = link(in.resource);
    const std::vector<int32_t> reads = sorted(in.reads);
    int64_t hops = 0;
    // The DMA copies between the buffers it joins whose XY route crosses it.
    for (const Flow &f : flowsInto(in.writes))
      if (std::binary_search(reads.begin(), reads.end(), f.from)) {
        const ProgramBuffer &rb = buf(f.from), &wb = buf(f.to);
        if (!routeCrosses(p_, rb.tile, wb.tile, l.fromTile, l.toTile))
          continue;
        addSat(t.bytes, f.bytes);
        hops = std::max(hops, hopsBetween(p_, rb.tile, wb.tile));
      }
    t.cycles = meshLinkCycles(chip_, t.bytes, hops);
    t.rule = InstrTiming::Rule::LinkMesh;
    t.hops = hops;
    return t;
  }

  InstrTiming chipLink(const ProgramInstr &in) {
    InstrTiming t;
    const ProgramLink &l = link(in.resource);
    const std::vector<int32_t> reads = sorted(in.reads);
    for (const Flow &f : flowsInto(in.writes))
      if (std::binary_search(reads.begin(), reads.end(), f.from) &&
          p_.chipOf(buf(f.from).tile) != p_.chipOf(buf(f.to).tile))
        addSat(t.bytes, f.bytes);
    // Adaptive routing may spread a transfer over the link's non-minimal
    // alternative, at that rate.
    double rate = std::max(l.bytesPerCycle, l.adaptiveBytesPerCycle);
    t.cycles = chipLinkCycles(rate, t.bytes);
    t.rule = InstrTiming::Rule::LinkChip;
    t.rate = rate;
    return t;
  }

  /// One copy a transfer's DMA instr makes: from the buffer it reads into
  /// one it writes, the bytes of their boxes' overlap.
  struct Flow {
    int32_t from = 0, to = 0;
    int64_t bytes = 0;
  };
  /// The copies of transfer DMA instrs into the buffers `writes` (each
  /// buffer once), from an index of every copy by destination built once.
  static std::vector<int32_t> sorted(std::vector<int32_t> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  }

  std::vector<Flow> flowsInto(const std::vector<int32_t> &writes) {
    if (!flowsDone_) {
      flowsDone_ = true;
      for (const ProgramInstr &in : p_.instrs) {
        if (in.kernel >= 0 || in.unit != Unit::Dma)
          continue;
        for (int32_t w : in.writes)
          for (int32_t r : in.reads)
            if (int64_t b = overlapBytes(buf(r), buf(w)); b > 0)
              flows_[w].push_back({r, w, b});
      }
    }
    std::vector<Flow> out;
    for (int32_t w : sorted(writes))
      if (auto it = flows_.find(w); it != flows_.end())
        out.insert(out.end(), it->second.begin(), it->second.end());
    return out;
  }

  const Program &p_;
  const ChipDesc &chip_;
  IdIndex bufferPos_, tensorPos_, kernelPos_, linkPos_;
  std::set<std::pair<int32_t, int32_t>> matrixOn_; // (kernel, tile)
  std::vector<Box> boxes_; // by buffer position
  std::map<std::pair<int32_t, int32_t>, TileWork> works_;
  std::unordered_map<int32_t, std::vector<Flow>> flows_; // by destination
  bool flowsDone_ = false;
  std::unique_ptr<TilePlanCache> own_;
  TilePlanCache *plans_ = nullptr;
};

} // namespace

std::vector<InstrTiming> instrTimings(const Program &p) {
  return instrTimings(p, nullptr);
}

std::vector<InstrTiming> instrTimings(const Program &p, TilePlanCache *plans) {
  if (!p.chip)
    throw Error("the program carries no target chip: its instructions' "
                "timing rules cannot be applied");
  Deriver d(p, plans);
  std::vector<InstrTiming> out;
  out.reserve(p.instrs.size());
  for (const ProgramInstr &in : p.instrs)
    out.push_back(d.derive(in));
  return out;
}

} // namespace loom::rt
