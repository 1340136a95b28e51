//===- TileRun.cpp - Functional execution of tile programs ----------------===//
//
// See TileRun.h. The instrs run in schedule order (start cycle, then id,
// deferring any whose dependencies have not run: a zero-cycle producer may
// share its consumer's start).
//
//===----------------------------------------------------------------------===//
#include "TileRun.h"

#include "loom/Runtime/InstrTiming.h"

#include "loom/Runtime/Progress.h"
#include "loom/Runtime/TileExecutor.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <queue>
#include <set>

namespace loom::rt::detail {
namespace {

/// Copies the elements of `region` (inside both blocks' boxes) from `src`
/// into `dst`, one contiguous run at a time: the last dimension and every
/// dimension before it that the region and both blocks cover alike.
void copyRegion(const Block &src, Block &dst, const Box &region) {
  if (region.empty())
    return;
  const size_t rank = region.rank();
  const size_t elem = dtypeSize(src.data.dtype());
  const auto *from = static_cast<const char *>(src.data.raw());
  auto *to = static_cast<char *>(dst.data.mutableRaw());
  if (rank == 0) {
    std::memcpy(to, from, elem);
    return;
  }
  auto spans = [&](size_t d) {
    return region.lo[d] == src.box.lo[d] && region.hi[d] == src.box.hi[d] &&
           region.lo[d] == dst.box.lo[d] && region.hi[d] == dst.box.hi[d];
  };
  size_t inner = rank - 1;
  while (inner > 0 && spans(inner))
    --inner;
  int64_t run = 1;
  for (size_t d = inner; d < rank; ++d)
    run *= region.extent(d);
  Shape srcExt = src.box.extents(), dstExt = dst.box.extents();
  std::vector<int64_t> idx(region.lo);
  while (true) {
    int64_t s = 0, d = 0;
    for (size_t k = 0; k < rank; ++k) {
      s = s * srcExt[k] + (idx[k] - src.box.lo[k]);
      d = d * dstExt[k] + (idx[k] - dst.box.lo[k]);
    }
    std::memcpy(to + d * elem, from + s * elem, static_cast<size_t>(run) * elem);
    // Next run: the odometer over the dimensions before `inner`.
    size_t k = inner;
    while (true) {
      if (k == 0)
        return;
      --k;
      if (++idx[k] < region.hi[k])
        break;
      idx[k] = region.lo[k];
    }
  }
}

/// A block of `box` of a tensor of type `dtype` that nothing has written:
/// floats are NaN, so a read of an element no transfer delivered shows.
Block poisoned(DType dtype, const Box &box) {
  const bool isNaNable = dtype == DType::F32 || dtype == DType::F64;
  // Floats are filled below; other types start zeroed.
  Block b{box, isNaNable ? Tensor::uninitialized(dtype, box.extents())
                         : Tensor(dtype, box.extents())};
  if (dtype == DType::F32) {
    float *v = b.data.mutableData<float>();
    std::fill(v, v + b.data.numElements(),
              std::numeric_limits<float>::quiet_NaN());
  } else if (dtype == DType::F64) {
    double *v = b.data.mutableData<double>();
    std::fill(v, v + b.data.numElements(),
              std::numeric_limits<double>::quiet_NaN());
  }
  return b;
}

/// One kernel's work on one tile: the buffers all its instrs there read
/// and write (a matrix instr and its epilogue's vector instr are one
/// computation). It runs at its trigger: the first of its matrix or vector
/// instrs to run, or for a kernel the DMA unit runs (data movement) the
/// first that reads; a DMA that only loads its inputs runs before it.
struct TilePart {
  std::set<int32_t> reads, writes;
  int32_t trigger = -1;
  bool done = false;
};

class TileRunner {
public:
  TileRunner(const Program &p, const FunctionalHooks &hooks)
      : p_(p), hooks_(hooks), mem_(p.buffers.size()) {}

  std::map<int32_t, Tensor>
  run(const std::unordered_map<int32_t, Tensor> &inputs);

private:
  /// The instrs' positions in the order they run.
  std::vector<size_t> executionOrder() const;
  /// Writes the constants' and the inputs' buffers.
  void bind(const std::unordered_map<int32_t, Tensor> &inputs);
  /// The block of buffer `id`, which something must have written.
  const Block &readable(int32_t id, const std::string &where) const;
  Block &writable(int32_t id);
  void runKernel(const ProgramInstr &in, TilePart &work);
  void runTransfer(const ProgramInstr &in);
  /// The whole tensor `id` from `buffers` (elements none holds stay NaN);
  /// with `complete`, an element no buffer holds is an error.
  Tensor gather(int32_t id, const std::set<int32_t> &buffers,
                bool complete) const;
  std::string describeInstr(const ProgramInstr &in) const;

  const Program &p_;
  const FunctionalHooks &hooks_;
  std::vector<std::optional<Block>> mem_;
  std::map<std::pair<int32_t, int32_t>, TilePart> work_; // (kernel, tile)
  /// Per kernel: its tiles not yet run, and the buffers its instrs write.
  std::map<int32_t, int64_t> tilesLeft_;
  std::map<int32_t, std::set<int32_t>> kernelWrites_;
  /// Per kernel, the tensors its ops compute (computedBy's cache: the
  /// same for each of its tiles).
  std::map<int32_t, std::set<int32_t>> computed_;

  const std::set<int32_t> &computedBy(const ProgramKernel &k) {
    auto [it, fresh] = computed_.try_emplace(k.id);
    if (fresh)
      for (const ProgramOp &op : k.ops)
        it->second.insert(op.outputs.begin(), op.outputs.end());
    return it->second;
  }
};

std::string TileRunner::describeInstr(const ProgramInstr &in) const {
  std::string s = p_.path + ": instr " + std::to_string(in.id);
  if (in.kernel >= 0) {
    s += " of " + p_.describeKernel(in.kernel);
  } else {
    s += " (a transfer)";
  }
  if (!isLinkUnit(in.unit))
    s += " on " + p_.describeTile(in.resource);
  return s;
}

std::vector<size_t> TileRunner::executionOrder() const {
  const size_t n = p_.instrs.size();
  std::vector<int64_t> waiting(n, 0);
  std::vector<std::vector<size_t>> dependants(n);
  for (size_t i = 0; i < n; ++i)
    for (int32_t dep : p_.instrs[i].deps) {
      int64_t d = p_.instrIndex(dep);
      if (d < 0)
        continue;
      ++waiting[i];
      dependants[static_cast<size_t>(d)].push_back(i);
    }
  // The loader keeps instrs sorted by (start, id): a position is a priority.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i)
    if (waiting[i] == 0)
      ready.push(i);
  std::vector<size_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t j : dependants[i])
      if (--waiting[j] == 0)
        ready.push(j);
  }
  if (order.size() != n)
    throw Error(p_.path + ": the instrs' dependencies form a cycle");
  return order;
}

void TileRunner::bind(const std::unordered_map<int32_t, Tensor> &inputs) {
  // Each constant and input once: its value (a splat expanded), cut into
  // the buffers that hold it from the start: all but those a transfer
  // writes (its copies are the transfer's to make).
  std::set<int32_t> written;
  for (const ProgramInstr &in : p_.instrs)
    if (!isLinkUnit(in.unit) && in.kernel < 0)
      written.insert(in.writes.begin(), in.writes.end());
  std::map<int32_t, std::vector<size_t>> buffersOf;
  for (size_t i = 0; i < p_.buffers.size(); ++i)
    if (!written.count(p_.buffers[i].id))
      buffersOf[p_.buffers[i].tensor].push_back(i);
  for (const auto &[id, positions] : buffersOf) {
    const ProgramTensor &t = p_.tensor(id);
    std::optional<Tensor> value;
    if (auto it = inputs.find(id); it != inputs.end()) {
      value = it->second;
    } else if (t.kind == TensorKind::Constant) {
      if (!t.hasData)
        throw Error(p_.path + ": constant tensor " + std::to_string(id) +
                    " '" + t.name +
                    "' has no data (a timing-only program); run it in "
                    "timing mode");
      value = t.value();
    }
    if (!value)
      continue;
    Block whole{Box::whole(value->shape()), *value};
    for (size_t pos : positions) {
      Box box = bufferBox(p_, p_.buffers[pos]);
      mem_[pos] = Block{box, crop(whole, box)};
    }
  }
}

const Block &TileRunner::readable(int32_t id, const std::string &where) const {
  int64_t pos = p_.bufferIndex(id);
  if (pos < 0 || !mem_[static_cast<size_t>(pos)]) {
    const ProgramBuffer &b = p_.buffer(id);
    const ProgramTensor &t = p_.tensor(b.tensor);
    throw Error(where + ": reads buffer " + std::to_string(id) + " (tensor " +
                std::to_string(b.tensor) + " '" + t.name + "' " +
                bufferBox(p_, b).str() + ") before anything wrote it");
  }
  return *mem_[static_cast<size_t>(pos)];
}

Block &TileRunner::writable(int32_t id) {
  size_t pos = static_cast<size_t>(p_.bufferIndex(id));
  if (!mem_[pos]) {
    const ProgramBuffer &b = p_.buffer(id);
    mem_[pos] = poisoned(p_.tensor(b.tensor).dtype, bufferBox(p_, b));
  }
  return *mem_[pos];
}

void TileRunner::runKernel(const ProgramInstr &in, TilePart &work) {
  const ProgramKernel &k = p_.kernel(in.kernel);
  const std::string where = describeInstr(in);
  // A buffer of a value the kernel computes itself is not an input: the
  // kernel writes it (a producer's buffer read back by its epilogue).
  const std::set<int32_t> &computed = computedBy(k);
  std::map<int32_t, Block> inputs;
  for (int32_t id : work.reads) {
    if (computed.count(p_.buffer(id).tensor))
      continue;
    const Block &b = readable(id, where);
    inputs.emplace(p_.buffer(id).tensor, b);
  }
  // Buffers of the kernel's inputs that its instrs write (a load into
  // SRAM) hold what was bound there; the kernel computes the rest.
  std::vector<int32_t> results;
  for (int32_t id : work.writes)
    if (computed.count(p_.buffer(id).tensor))
      results.push_back(id);
  std::map<int32_t, Box> outputBoxes;
  for (int32_t id : results) {
    const ProgramBuffer &b = p_.buffer(id);
    Box box = bufferBox(p_, b);
    auto [it, fresh] = outputBoxes.emplace(b.tensor, box);
    if (!fresh)
      it->second = it->second.unite(box);
  }
  FastOptions fast;
  fast.inputRounding = inputRoundingOf(numericFormatName(k.precision))
                           .value_or(InputRounding::None);
  std::map<int32_t, Block> outs;
  try {
    outs = executeOnTile(
        k.ops, [&](int32_t id) -> const ProgramTensor & { return p_.tensor(id); },
        inputs, outputBoxes, ExecMode::Fast, fast);
  } catch (const Error &e) {
    throw Error(where + ": " + e.what());
  }
  for (int32_t id : results) {
    const ProgramBuffer &b = p_.buffer(id);
    auto it = outs.find(b.tensor);
    if (it == outs.end())
      throw Error(where + ": the kernel did not compute tensor " +
                  std::to_string(b.tensor) + " that buffer " +
                  std::to_string(id) + " holds");
    Block &dst = writable(id);
    if (hooks_.corruptKernel == k.id && isFloat(it->second.data.dtype())) {
      Tensor &v = it->second.data;
      for (int64_t i = 0; i < v.numElements(); ++i)
        v.setDouble(i, v.getDouble(i) + 1.0);
    }
    copyRegion(it->second, dst, dst.box.intersect(it->second.box));
  }
}

void TileRunner::runTransfer(const ProgramInstr &in) {
  const std::string where = describeInstr(in);
  for (int32_t r : in.reads) {
    const Block &src = readable(r, where);
    const int32_t tensor = p_.buffer(r).tensor;
    for (int32_t w : in.writes) {
      if (p_.buffer(w).tensor != tensor)
        continue;
      Block &dst = writable(w);
      copyRegion(src, dst, dst.box.intersect(src.box));
    }
  }
}

Tensor TileRunner::gather(int32_t id, const std::set<int32_t> &buffers,
                          bool complete) const {
  const ProgramTensor &t = p_.tensor(id);
  Block whole = poisoned(t.dtype, Box::whole(t.shape));
  // Which elements some buffer held (only for a complete gather).
  Block mask;
  if (complete)
    mask = Block{whole.box, Tensor(DType::U8, t.shape)};
  for (int32_t b : buffers) {
    int64_t pos = p_.bufferIndex(b);
    if (pos < 0 || !mem_[static_cast<size_t>(pos)])
      continue;
    const Block &src = *mem_[static_cast<size_t>(pos)];
    copyRegion(src, whole, src.box);
    if (complete) {
      Block ones{src.box, Tensor(DType::U8, src.box.extents())};
      std::fill(ones.data.mutableData<uint8_t>(),
                ones.data.mutableData<uint8_t>() + ones.data.numElements(), 1);
      copyRegion(ones, mask, src.box);
    }
  }
  if (complete) {
    const uint8_t *m = static_cast<const uint8_t *>(mask.data.raw());
    for (int64_t i = 0; i < mask.data.numElements(); ++i)
      if (!m[i])
        throw Error(p_.path + ": output tensor " + std::to_string(id) + " '" +
                    t.name + "': element " + std::to_string(i) +
                    " (flat) is held by no buffer any tile wrote");
  }
  return whole.data;
}

std::map<int32_t, Tensor>
TileRunner::run(const std::unordered_map<int32_t, Tensor> &inputs) {
  for (const ProgramInstr &in : p_.instrs) {
    if (in.kernel < 0 || isLinkUnit(in.unit))
      continue;
    TilePart &w = work_[{in.kernel, in.resource}];
    w.reads.insert(in.reads.begin(), in.reads.end());
    w.writes.insert(in.writes.begin(), in.writes.end());
    kernelWrites_[in.kernel].insert(in.writes.begin(), in.writes.end());
  }
  for (const auto &[key, w] : work_)
    ++tilesLeft_[key.first];
  bind(inputs);

  std::vector<size_t> order = executionOrder();
  for (int pass = 0; pass < 2; ++pass)
    for (size_t pos : order) {
      const ProgramInstr &in = p_.instrs[pos];
      if (in.kernel < 0 || isLinkUnit(in.unit))
        continue;
      TilePart &w = work_[{in.kernel, in.resource}];
      const bool compute = in.unit == Unit::Matrix || in.unit == Unit::Vector;
      if (w.trigger < 0 && (pass == 0 ? compute : !in.reads.empty()))
        w.trigger = in.id;
    }
  for (auto &[key, w] : work_)
    if (w.trigger < 0)
      w.trigger = -2; // writes only: runs at its first instr
  // Each buffer's block is freed after its last reader, unless it holds a
  // program output: a run holds about the live set, as the SRAM does.
  std::set<int32_t> outputTensors(p_.outputs.begin(), p_.outputs.end());
  std::vector<int64_t> lastRead(p_.buffers.size(), -1);
  for (size_t step = 0; step < order.size(); ++step) {
    const ProgramInstr &in = p_.instrs[order[step]];
    if (isLinkUnit(in.unit))
      continue;
    const std::set<int32_t> *reads = nullptr;
    std::set<int32_t> own(in.reads.begin(), in.reads.end());
    if (in.kernel < 0)
      reads = &own;
    else if (const TilePart &w = work_[{in.kernel, in.resource}];
             w.trigger == in.id || w.trigger == -2)
      reads = &w.reads;
    if (!reads)
      continue;
    for (int32_t id : *reads)
      if (int64_t b = p_.bufferIndex(id); b >= 0)
        lastRead[static_cast<size_t>(b)] = static_cast<int64_t>(step);
  }
  std::vector<std::vector<size_t>> freeAfter(order.size());
  for (size_t b = 0; b < p_.buffers.size(); ++b)
    if (lastRead[b] >= 0 && !outputTensors.count(p_.buffers[b].tensor))
      freeAfter[static_cast<size_t>(lastRead[b])].push_back(b);

  // Progress counts kernels whose every tile has run.
  Progress bar("simulate", static_cast<int64_t>(p_.kernels.size()));
  int64_t kernelsDone = 0;
  for (size_t step = 0; step < order.size(); ++step) {
    for (size_t b : step > 0 ? freeAfter[step - 1] : std::vector<size_t>())
      mem_[b].reset();
    const ProgramInstr &in = p_.instrs[order[step]];
    const bool dropped = in.id == hooks_.dropInstr;
    if (isLinkUnit(in.unit) || (dropped && in.kernel < 0))
      continue;
    if (in.kernel < 0) {
      runTransfer(in);
      continue;
    }
    TilePart &w = work_[{in.kernel, in.resource}];
    if (w.done || (w.trigger != in.id && w.trigger != -2))
      continue;
    w.done = true;
    if (!dropped)
      runKernel(in, w);
    if (--tilesLeft_[in.kernel] > 0)
      continue;
    bar.update(++kernelsDone, p_.kernel(in.kernel).name);
    if (hooks_.afterKernel) {
      const ProgramKernel &k = p_.kernel(in.kernel);
      std::map<int32_t, Tensor> outs;
      for (int32_t id : k.outputs) {
        std::set<int32_t> mine;
        for (int32_t b : kernelWrites_[k.id])
          if (p_.buffer(b).tensor == id)
            mine.insert(b);
        if (!mine.empty())
          outs.emplace(id, gather(id, mine, /*complete=*/false));
      }
      hooks_.afterKernel(k, outs);
    }
  }

  std::map<int32_t, std::set<int32_t>> buffersOf;
  for (const ProgramBuffer &b : p_.buffers)
    buffersOf[b.tensor].insert(b.id);
  std::map<int32_t, Tensor> outputs;
  for (int32_t id : p_.outputs) {
    if (outputs.count(id))
      continue;
    auto it = buffersOf.find(id);
    if (it == buffersOf.end()) {
      // An output no buffer holds (a model input given back, a constant
      // returned): the host has it.
      if (auto in = inputs.find(id); in != inputs.end())
        outputs.emplace(id, in->second);
      else
        outputs.emplace(id, p_.tensor(id).value());
      continue;
    }
    outputs.emplace(id, gather(id, it->second, /*complete=*/true));
  }
  return outputs;
}

} // namespace

std::map<int32_t, Tensor>
runTilePrograms(const Program &p,
                const std::unordered_map<int32_t, Tensor> &inputs,
                const FunctionalHooks &hooks) {
  return TileRunner(p, hooks).run(inputs);
}

} // namespace loom::rt::detail
