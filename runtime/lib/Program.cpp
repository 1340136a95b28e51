//===- Program.cpp - Load and check a .loom program file ------------------===//
//
// FlatBuffers verification first (offsets, vectors, strings, identifier),
// then the runtime's own checks of everything the verifier cannot know: ids,
// cross references, enum ranges, shapes, sizes and placement. See Program.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Program.h"
#include "loom/Target/TargetModel.h"
#include "loom/Runtime/OpExecutor.h"

#include "loom/Runtime/ProgramSeal.h"
#include "loom/Runtime/Program_generated.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace loom::rt {

const char *tensorKindName(TensorKind kind) {
  switch (kind) {
  case TensorKind::Input:
    return "input";
  case TensorKind::Output:
    return "output";
  case TensorKind::Constant:
    return "constant";
  case TensorKind::Intermediate:
    return "intermediate";
  }
  return "?";
}

const char *unitName(Unit unit) {
  switch (unit) {
  case Unit::Matrix:
    return "matrix";
  case Unit::Vector:
    return "vector";
  case Unit::Dma:
    return "dma";
  case Unit::MeshLink:
    return "mesh_link";
  case Unit::ChipLink:
    return "chip_link";
  }
  return "?";
}

int64_t ProgramTensor::numElements() const { return numElementsOf(shape); }
int64_t ProgramTensor::byteSize() const {
  return numElements() * static_cast<int64_t>(dtypeSize(dtype));
}

Tensor ProgramTensor::value() const {
  std::string where = "tensor " + std::to_string(id) +
                      (name.empty() ? "" : " '" + name + "'");
  if (!hasData)
    throw Error(where + ": constant has no data");
  // Checked here rather than at load time, so loading never reads a
  // constant's bytes.
  if (dtype == DType::Bool) {
    const auto *bytes = static_cast<const uint8_t *>(constant.raw());
    for (size_t i = 0; i < constant.byteSize(); ++i)
      if (bytes[i] > 1)
        throw Error(where + ": bool constant holds a byte other than 0 or 1");
  }
  if (!splat)
    return constant;
  Tensor full = Tensor::uninitialized(dtype, shape);
  size_t esize = dtypeSize(dtype), total = full.byteSize();
  if (total == 0)
    return full;
  // One element, then doubling copies of what is filled so far.
  auto *out = static_cast<uint8_t *>(full.mutableRaw());
  std::memcpy(out, constant.raw(), esize);
  for (size_t filled = esize; filled < total;) {
    size_t n = std::min(filled, total - filled);
    std::memcpy(out + filled, out, n);
    filled += n;
  }
  return full;
}

namespace {

template <typename T>
const T &lookup(const std::vector<T> &items, const IdIndex &index, int32_t id,
                const char *what) {
  std::optional<size_t> pos = index.find(id);
  if (!pos)
    throw Error(std::string("no ") + what + " with id " + std::to_string(id));
  return items[*pos];
}

int64_t find(const IdIndex &index, int32_t id) {
  std::optional<size_t> pos = index.find(id);
  return pos ? static_cast<int64_t>(*pos) : -1;
}

/// A name from the file. Names end up in one-line error messages, so line
/// breaks become spaces.
std::string str(const flatbuffers::String *s) {
  std::string out = s ? std::string(s->c_str(), s->size()) : std::string();
  std::replace_if(
      out.begin(), out.end(), [](char c) { return c == '\n' || c == '\r'; },
      ' ');
  return out;
}

template <typename T, typename U>
std::vector<T> vec(const flatbuffers::Vector<U> *v) {
  std::vector<T> out;
  if (v) {
    out.reserve(v->size());
    // memcpy, not *v: the verifier aligns a vector only to 4 bytes, so the
    // elements of a [long] or [double] in a hostile file may be misaligned.
    for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) {
      U x;
      std::memcpy(&x, v->Data() + i * sizeof(U), sizeof(U));
      out.push_back(static_cast<T>(x));
    }
  }
  return out;
}

} // namespace

std::string Program::describeTile(int64_t t) const {
  if (tileCols <= 0 || tileRows <= 0)
    return "tile " + std::to_string(t);
  int64_t local = t % tilesPerChip();
  std::string rc =
      std::to_string(local / tileCols) + "," + std::to_string(local % tileCols);
  if (chips <= 1)
    return "tile " + std::to_string(t) + " (" + rc + ")";
  return "tile " + std::to_string(t) + " (chip " + std::to_string(chipOf(t)) +
         ", " + rc + ")";
}

const ProgramTensor &Program::tensor(int32_t id) const {
  return lookup(tensors, tensorIdx_, id, "tensor");
}
const ProgramKernel &Program::kernel(int32_t id) const {
  return lookup(kernels, kernelIdx_, id, "kernel");
}
const ProgramInstr &Program::instr(int32_t id) const {
  return lookup(instrs, instrIdx_, id, "instr");
}
const ProgramBuffer &Program::buffer(int32_t id) const {
  return lookup(buffers, bufferIdx_, id, "buffer");
}
const ProgramLink &Program::link(int32_t id) const {
  return lookup(links, linkIdx_, id, "link");
}
int64_t Program::tensorIndex(int32_t id) const { return find(tensorIdx_, id); }
int64_t Program::kernelIndex(int32_t id) const { return find(kernelIdx_, id); }
int64_t Program::instrIndex(int32_t id) const { return find(instrIdx_, id); }
int64_t Program::bufferIndex(int32_t id) const { return find(bufferIdx_, id); }
int64_t Program::linkIndex(int32_t id) const { return find(linkIdx_, id); }

std::string Program::describeKernel(int32_t id) const {
  if (id == -1)
    return "transfer";
  int64_t k = kernelIndex(id);
  if (k < 0)
    return "kernel " + std::to_string(id);
  const ProgramKernel &kern = kernels[static_cast<size_t>(k)];
  std::string s = "kernel " + std::to_string(id) + " '" + kern.name + "'";
  if (!kern.onnxNodes.empty()) {
    s += " (onnx: ";
    for (size_t i = 0; i < kern.onnxNodes.size(); ++i)
      s += (i ? ", " : "") + kern.onnxNodes[i];
    s += ")";
  }
  return s;
}

/// Builds a Program from a verified flatbuffer, checking as it goes.
class ProgramLoader {
public:
  ProgramLoader(Program &p) : p_(p) {}

  void load(const loom::program::Program &fb);

private:
  Program &p_;

  [[noreturn]] void fail(const std::string &msg) { throw Error(msg); }

  void checkIds();
  void loadTensors(const loom::program::Program &fb);
  void loadKernels(const loom::program::Program &fb);
  void loadInstrs(const loom::program::Program &fb);
  void loadBuffers(const loom::program::Program &fb);
  /// Checks a buffer's box lies in its tensor (rank and bounds).
  void checkBox(const ProgramBuffer &b, const std::string &where);
  void loadLinks(const loom::program::Program &fb);
  void checkTensorRef(int32_t id, const std::string &where, bool allowAbsent);
  /// "the 4 x 4 tile grid", or for several chips "the 2 chips of 4 x 4
  /// tiles": what a tile index must lie in.
  std::string grid() const;
};

std::string ProgramLoader::grid() const {
  std::string g = std::to_string(p_.tileRows) + " x " +
                  std::to_string(p_.tileCols);
  if (p_.chips == 1)
    return "the " + g + " tile grid";
  return "the " + std::to_string(p_.chips) + " chips of " + g + " tiles";
}

void ProgramLoader::checkTensorRef(int32_t id, const std::string &where,
                                   bool allowAbsent) {
  if (allowAbsent && id == -1)
    return;
  if (p_.tensorIndex(id) < 0)
    fail(where + ": unknown tensor id " + std::to_string(id));
}

template <typename Items>
static void indexIds(const Items &items, IdIndex &index, const char *what) {
  index.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    int32_t id = items[i].id;
    if (id < 0)
      throw Error(std::string(what) + " at position " + std::to_string(i) +
                  ": negative id " + std::to_string(id));
    if (!index.emplace(id, i))
      throw Error(std::string(what) + " " + std::to_string(id) +
                  ": duplicate id");
  }
}

void ProgramLoader::load(const loom::program::Program &fb) {
  p_.version = fb.version();
  if (p_.version != kProgramVersion)
    fail("unsupported program version " + std::to_string(p_.version) +
         " (this runtime reads version " + std::to_string(kProgramVersion) +
         ", with enum kernel kinds, precisions and bounds); recompile the "
         "model with this loom");
  p_.model = str(fb.model());
  p_.targetName = str(fb.target_name());
  p_.targetJson = fb.target_json() ? fb.target_json()->str() : "";
  p_.tileRows = fb.tile_rows();
  p_.tileCols = fb.tile_cols();
  if (p_.tileRows < 1 || p_.tileCols < 1)
    fail("tile grid " + std::to_string(p_.tileRows) + " x " +
         std::to_string(p_.tileCols) + " must be at least 1 x 1");
  // As in the target model: counts are capped at 2^24 tiles.
  if (p_.tilesPerChip() > (int64_t(1) << 24))
    fail("tile grid " + std::to_string(p_.tileRows) + " x " +
         std::to_string(p_.tileCols) + " is too large");
  p_.chips = fb.chips();
  if (p_.chips < 1 || p_.chips > (1 << 20))
    fail("chips must be in [1, 2^20], got " + std::to_string(p_.chips));
  // Tile indices are system-wide; per-tile tables are sized by them.
  if (p_.numTiles() > kMaxSystemTiles)
    fail("chips " + std::to_string(p_.chips) + " of " +
         std::to_string(p_.tileRows) + " x " + std::to_string(p_.tileCols) +
         " tiles: " + std::to_string(p_.numTiles()) +
         " tiles in all, more than the " + std::to_string(kMaxSystemTiles) +
         " a program may hold");
  p_.tensorParallel = fb.tensor_parallel();
  p_.pipelineParallel = fb.pipeline_parallel();
  if (p_.tensorParallel < 1 || p_.pipelineParallel < 1 ||
      p_.tensorParallel > p_.chips || p_.pipelineParallel > p_.chips)
    fail("tensor_parallel " + std::to_string(p_.tensorParallel) +
         " and pipeline_parallel " + std::to_string(p_.pipelineParallel) +
         " must be in [1, chips = " + std::to_string(p_.chips) + "]");
  p_.topology = str(fb.topology());
  p_.sramBytesPerTile = fb.sram_bytes_per_tile();
  if (p_.sramBytesPerTile <= 0)
    fail("sram_bytes_per_tile must be positive, got " +
         std::to_string(p_.sramBytesPerTile));
  {
    // The timing rules read the chip's fields: the target must be whole.
    std::string error;
    std::optional<TargetModel> target =
        TargetModel::parse(p_.targetJson, "target_json", error);
    if (!target)
      fail(p_.targetJson.empty() ? std::string("no target description "
                                               "(target_json is empty)")
                                 : error);
    p_.chip = target->desc().chip;
  }
  // The grid and SRAM the schedule uses are the target's.
  if (p_.chip->tileRows != p_.tileRows || p_.chip->tileCols != p_.tileCols)
    fail("tile grid " + std::to_string(p_.tileRows) + " x " +
         std::to_string(p_.tileCols) + " differs from target_json's chip (" +
         std::to_string(p_.chip->tileRows) + " x " +
         std::to_string(p_.chip->tileCols) + ")");
  if (p_.chip->tile.sram.bytes != p_.sramBytesPerTile)
    fail("sram_bytes_per_tile " + std::to_string(p_.sramBytesPerTile) +
         " differs from target_json's chip.tile.sram.bytes " +
         std::to_string(p_.chip->tile.sram.bytes));
  p_.clockHz = fb.clock_hz();
  if (!(std::isfinite(p_.clockHz) && p_.clockHz > 0))
    fail("clock_hz must be a positive number");
  p_.totalCycles = fb.total_cycles();
  p_.sramPeakBytes = fb.sram_peak_bytes();
  p_.sramLowerBoundBytes = fb.sram_lower_bound_bytes();
  p_.rooflineCycles = fb.roofline_cycles();
  if (p_.totalCycles < 0 || p_.sramPeakBytes < 0 ||
      p_.sramLowerBoundBytes < 0 || p_.rooflineCycles < 0)
    fail("total_cycles, sram_peak_bytes, sram_lower_bound_bytes and "
         "roofline_cycles must not be negative");
  p_.mapping = fb.mapping() ? str(fb.mapping()) : "sequential";
  if (p_.mapping != "sequential" && p_.mapping != "pipelined" &&
      p_.mapping != "hybrid")
    fail("mapping '" + p_.mapping +
         "' is not sequential, pipelined or hybrid");
  p_.pipelineGroups = fb.pipeline_groups();
  if (p_.pipelineGroups < 1)
    fail("pipeline_groups must be at least 1, got " +
         std::to_string(p_.pipelineGroups));
  p_.initiationInterval = fb.initiation_interval();
  if (p_.initiationInterval < 0)
    fail("initiation_interval must not be negative");
  if (p_.initiationInterval == 0)
    p_.initiationInterval = p_.totalCycles;

  loadTensors(fb);
  loadLinks(fb);
  loadBuffers(fb);
  loadKernels(fb);
  loadInstrs(fb);

  p_.inputs = vec<int32_t>(fb.inputs());
  p_.outputs = vec<int32_t>(fb.outputs());
  for (size_t i = 0; i < p_.inputs.size(); ++i) {
    checkTensorRef(p_.inputs[i], "program input " + std::to_string(i), false);
    const ProgramTensor &t = p_.tensor(p_.inputs[i]);
    if (t.kind != TensorKind::Input)
      fail("program input " + std::to_string(i) + ": tensor " +
           std::to_string(t.id) + " '" + t.name + "' is a " +
           tensorKindName(t.kind) + ", not an input");
  }
  for (size_t i = 0; i < p_.outputs.size(); ++i)
    checkTensorRef(p_.outputs[i], "program output " + std::to_string(i), false);
  if (const auto *names = fb.output_names()) {
    if (names->size() != p_.outputs.size())
      fail("the program names " + std::to_string(names->size()) +
           " outputs but has " + std::to_string(p_.outputs.size()));
    for (const auto *n : *names)
      p_.outputNames.push_back(n ? n->str() : std::string());
  } else {
    for (int32_t id : p_.outputs)
      p_.outputNames.push_back(p_.tensor(id).name);
  }
}

void ProgramLoader::loadTensors(const loom::program::Program &fb) {
  if (!fb.tensors())
    return;
  p_.tensors.reserve(fb.tensors()->size());
  for (const auto *t : *fb.tensors()) {
    ProgramTensor pt;
    pt.id = t->id();
    pt.name = str(t->name());
    std::string where = "tensor " + std::to_string(pt.id) +
                        (pt.name.empty() ? "" : " '" + pt.name + "'");
    int dt = static_cast<int>(t->dtype());
    if (dt < loom::program::DType_MIN || dt > loom::program::DType_MAX)
      fail(where + ": unknown dtype " + std::to_string(dt));
    pt.dtype = static_cast<DType>(dt);
    int kind = static_cast<int>(t->kind());
    if (kind < loom::program::TensorKind_MIN ||
        kind > loom::program::TensorKind_MAX)
      fail(where + ": unknown tensor kind " + std::to_string(kind));
    pt.kind = static_cast<TensorKind>(kind);
    pt.shape = vec<int64_t>(t->shape());
    int64_t elems = 0;
    try {
      elems = numElementsOf(pt.shape);
    } catch (const Error &e) {
      fail(where + ": " + e.what());
    }
    int64_t esize = static_cast<int64_t>(dtypeSize(pt.dtype));
    if (elems > std::numeric_limits<int64_t>::max() / esize)
      fail(where + ": byte size of shape " + shapeToString(pt.shape) +
           " overflows");
    const auto *data = t->data();
    pt.partAxis = t->part_axis();
    pt.partIndex = t->part_index();
    pt.partCount = t->part_count();
    if (pt.partCount < 1 || pt.partIndex < 0 ||
        pt.partIndex >= pt.partCount || pt.partAxis < -1 ||
        pt.partAxis >= static_cast<int32_t>(pt.shape.size()))
      fail(where + ": part " + std::to_string(pt.partIndex) + " of " +
           std::to_string(pt.partCount) + " along axis " +
           std::to_string(pt.partAxis) + " does not fit its shape " +
           shapeToString(pt.shape));
    if (pt.isPart() && pt.kind != TensorKind::Input &&
        pt.kind != TensorKind::Output)
      fail(where + ": only model inputs and outputs are split into parts");
    if (const auto *storage = t->storage(); storage && storage->size()) {
      std::optional<NumericFormat> f = narrowStorageFormat(storage->str());
      if (!f)
        fail(where + ": storage must be bf16, fp16 or fp8, got '" +
             storage->str() + "'");
      if (pt.dtype != DType::F32)
        fail(where + ": storage " + storage->str() + " is set on a " +
             dtypeName(pt.dtype) + " tensor (only f32 tensors are stored "
             "narrow)");
      if (pt.kind == TensorKind::Constant)
        fail(where + ": storage " + storage->str() +
             " is set on a constant (weights are rounded by the kernels "
             "that read them)");
      pt.storage = *f;
    }
    pt.splat = t->splat();
    if (pt.splat && pt.kind != TensorKind::Constant)
      fail(where + ": splat is set on an " + tensorKindName(pt.kind) +
           " tensor (only constants are splats)");
    if (pt.splat && !data)
      fail(where + ": splat constant has no data (it needs its one element)");
    if (pt.kind == TensorKind::Constant && data) {
      // A splat holds one element, whatever its shape.
      int64_t want = pt.splat ? esize : elems * esize;
      if (static_cast<int64_t>(data->size()) != want)
        fail(where + ": constant data is " + std::to_string(data->size()) +
             " bytes, but " +
             (pt.splat ? std::string("a splat of ") + dtypeName(pt.dtype) +
                             " needs one element, " + std::to_string(want)
                       : "shape " + shapeToString(pt.shape) + " of " +
                             dtypeName(pt.dtype) + " needs " +
                             std::to_string(want)));
      // The schema aligns data to 16 bytes; a hostile file may not.
      if (reinterpret_cast<uintptr_t>(data->data()) % esize != 0)
        fail(where + ": constant data is not aligned to its element size");
      // No pass over the bytes here (bool values are checked by
      // ProgramTensor::value()): loading costs nothing per weight byte.
      pt.constant = Tensor::view(pt.dtype, pt.splat ? Shape{} : pt.shape,
                                 data->data(),
                                 std::shared_ptr<const void>(p_.bytes_));
      pt.hasData = true;
    }
    p_.tensors.push_back(std::move(pt));
  }
  indexIds(p_.tensors, p_.tensorIdx_, "tensor");
}

void ProgramLoader::loadLinks(const loom::program::Program &fb) {
  if (!fb.links())
    return;
  int64_t tiles = p_.numTiles(), perChip = p_.tilesPerChip();
  p_.links.reserve(fb.links()->size());
  for (const auto *l : *fb.links()) {
    ProgramLink pl;
    pl.id = l->id();
    pl.fromTile = l->from_tile();
    pl.toTile = l->to_tile();
    pl.chipLink = l->chip_link();
    std::string where = (pl.chipLink ? "chip link " : "link ") +
                        std::to_string(pl.id);
    if (pl.fromTile < 0 || pl.fromTile >= tiles || pl.toTile < 0 ||
        pl.toTile >= tiles)
      fail(where + ": tile " +
           std::to_string(pl.fromTile < 0 || pl.fromTile >= tiles ? pl.fromTile
                                                                  : pl.toTile) +
           " is outside " + grid());
    if (pl.chipLink) {
      pl.fromChip = l->from_chip();
      pl.toChip = l->to_chip();
      pl.bytesPerCycle = l->bytes_per_cycle();
      pl.latencyCycles = l->latency_cycles();
      pl.adaptiveBytesPerCycle = l->adaptive_bytes_per_cycle();
      for (int32_t c : {pl.fromChip, pl.toChip})
        if (c < 0 || c >= p_.chips)
          fail(where + ": chip " + std::to_string(c) +
               " is outside the program's " + std::to_string(p_.chips) +
               " chips");
      if (pl.fromChip == pl.toChip)
        fail(where + ": joins chip " + std::to_string(pl.fromChip) +
             " to itself");
      // The ends are the chips' ports: their first tiles.
      if (pl.fromTile != pl.fromChip * perChip ||
          pl.toTile != pl.toChip * perChip)
        fail(where + ": from_tile " + std::to_string(pl.fromTile) +
             " and to_tile " + std::to_string(pl.toTile) +
             " are not the first tiles of chips " +
             std::to_string(pl.fromChip) + " and " +
             std::to_string(pl.toChip) + " (" +
             std::to_string(pl.fromChip * perChip) + " and " +
             std::to_string(pl.toChip * perChip) + ")");
      if (!(std::isfinite(pl.bytesPerCycle) && pl.bytesPerCycle >= 0) ||
          !(std::isfinite(pl.adaptiveBytesPerCycle) &&
            pl.adaptiveBytesPerCycle >= 0) ||
          pl.latencyCycles < 0)
        fail(where + ": bytes_per_cycle, adaptive_bytes_per_cycle and "
                     "latency_cycles must be non-negative");
    } else {
      pl.fromChip = static_cast<int32_t>(pl.fromTile / perChip);
      pl.toChip = static_cast<int32_t>(pl.toTile / perChip);
      int64_t from = pl.fromTile % perChip, to = pl.toTile % perChip;
      int64_t r0 = from / p_.tileCols, c0 = from % p_.tileCols;
      int64_t r1 = to / p_.tileCols, c1 = to % p_.tileCols;
      if (pl.fromChip != pl.toChip ||
          std::abs(r0 - r1) + std::abs(c0 - c1) != 1)
        fail(where + ": tiles " + std::to_string(pl.fromTile) + " and " +
             std::to_string(pl.toTile) + " are not neighbours" +
             (pl.fromChip != pl.toChip ? " (they are on chips " +
                                             std::to_string(pl.fromChip) +
                                             " and " +
                                             std::to_string(pl.toChip) +
                                             "; a mesh link stays on one chip)"
                                       : ""));
    }
    p_.links.push_back(pl);
  }
  indexIds(p_.links, p_.linkIdx_, "link");
}

void ProgramLoader::checkBox(const ProgramBuffer &b, const std::string &where) {
  if (b.boxLo.empty() && b.boxHi.empty())
    return;
  const Shape &shape = p_.tensor(b.tensor).shape;
  if (b.boxLo.size() != shape.size() || b.boxHi.size() != shape.size())
    fail(where + ": its box has " + std::to_string(b.boxLo.size()) + " and " +
         std::to_string(b.boxHi.size()) + " bounds for a rank-" +
         std::to_string(shape.size()) + " tensor");
  for (size_t d = 0; d < shape.size(); ++d)
    if (b.boxLo[d] < 0 || b.boxLo[d] > b.boxHi[d] || b.boxHi[d] > shape[d])
      fail(where + ": box dimension " + std::to_string(d) + " [" +
           std::to_string(b.boxLo[d]) + ", " + std::to_string(b.boxHi[d]) +
           ") is not inside [0, " + std::to_string(shape[d]) + ")");
}

void ProgramLoader::loadBuffers(const loom::program::Program &fb) {
  if (!fb.buffers())
    return;
  int64_t tiles = p_.numTiles();
  p_.buffers.reserve(fb.buffers()->size());
  for (const auto *b : *fb.buffers()) {
    ProgramBuffer pb;
    pb.id = b->id();
    pb.tensor = b->tensor();
    pb.tile = b->tile();
    pb.offset = b->offset();
    pb.size = b->size();
    pb.liveStart = b->live_start();
    pb.liveEnd = b->live_end();
    pb.copies = b->copies();
    pb.resident = b->resident();
    if (b->box_lo())
      pb.boxLo.assign(b->box_lo()->begin(), b->box_lo()->end());
    if (b->box_hi())
      pb.boxHi.assign(b->box_hi()->begin(), b->box_hi()->end());
    std::string where = "buffer " + std::to_string(pb.id);
    if (pb.copies < 1)
      fail(where + ": copies must be at least 1, got " +
           std::to_string(pb.copies));
    checkTensorRef(pb.tensor, where, false);
    if (pb.tile < 0 || pb.tile >= tiles)
      fail(where + ": tile " + std::to_string(pb.tile) + " is outside " +
           grid());
    if (pb.offset < 0 || pb.size < 0)
      fail(where + ": negative offset or size");
    int64_t footprint = 0;
    if (__builtin_mul_overflow(pb.size, int64_t(pb.copies), &footprint) ||
        footprint > p_.sramBytesPerTile ||
        pb.offset > p_.sramBytesPerTile - footprint)
      fail(where + ": [" + std::to_string(pb.offset) + ", " +
           std::to_string(pb.offset) + " + " + std::to_string(pb.size) +
           (pb.copies > 1 ? " x " + std::to_string(pb.copies) : "") +
           ") lies beyond the tile's SRAM of " +
           std::to_string(p_.sramBytesPerTile) + " bytes");
    if (pb.liveStart < 0 || pb.liveEnd < pb.liveStart)
      fail(where + ": bad lifetime [" + std::to_string(pb.liveStart) + ", " +
           std::to_string(pb.liveEnd) + ")");
    checkBox(pb, where);
    p_.buffers.push_back(pb);
  }
  indexIds(p_.buffers, p_.bufferIdx_, "buffer");
}

static AttrValue convertAttr(const loom::program::Attr &a,
                             const std::string &where) {
  AttrValue v;
  switch (static_cast<int>(a.kind())) {
  case loom::program::AttrKind_Int:
    v.kind = AttrValue::Kind::Int;
    break;
  case loom::program::AttrKind_Ints:
    v.kind = AttrValue::Kind::Ints;
    break;
  case loom::program::AttrKind_Float:
    v.kind = AttrValue::Kind::Float;
    break;
  case loom::program::AttrKind_Floats:
    v.kind = AttrValue::Kind::Floats;
    break;
  case loom::program::AttrKind_String:
    v.kind = AttrValue::Kind::String;
    break;
  case loom::program::AttrKind_Bool:
    v.kind = AttrValue::Kind::Bool;
    break;
  default:
    throw Error(where + ": unknown attribute kind " +
                std::to_string(static_cast<int>(a.kind())));
  }
  v.ints = vec<int64_t>(a.ints());
  v.floats = vec<double>(a.floats());
  v.str = str(a.str());
  bool scalarInt = v.kind == AttrValue::Kind::Int || v.kind == AttrValue::Kind::Bool;
  if (scalarInt && v.ints.size() != 1)
    throw Error(where + ": an Int/Bool attribute needs exactly one value");
  if (v.kind == AttrValue::Kind::Float && v.floats.size() != 1)
    throw Error(where + ": a Float attribute needs exactly one value");
  return v;
}

// The schema's KernelKind, NumericFormat and CostBound are the runtime's
// enums value for value (Program.fbs): a kernel's fields are cast.
namespace fbk = loom::program;
static_assert(fbk::KernelKind_matmul == int(KernelKind::MatMul) &&
              fbk::KernelKind_conv == int(KernelKind::Conv) &&
              fbk::KernelKind_elementwise == int(KernelKind::Elementwise) &&
              fbk::KernelKind_reduction == int(KernelKind::Reduction) &&
              fbk::KernelKind_softmax == int(KernelKind::Softmax) &&
              fbk::KernelKind_normalization == int(KernelKind::Normalization) &&
              fbk::KernelKind_data_movement == int(KernelKind::DataMovement) &&
              fbk::KernelKind_collective == int(KernelKind::Collective) &&
              fbk::KernelKind_MAX + 1 == kNumKernelKinds);
static_assert(fbk::NumericFormat_fp32 == int(NumericFormat::F32) &&
              fbk::NumericFormat_tf32 == int(NumericFormat::TF32) &&
              fbk::NumericFormat_bf16 == int(NumericFormat::BF16) &&
              fbk::NumericFormat_fp16 == int(NumericFormat::F16) &&
              fbk::NumericFormat_fp8 == int(NumericFormat::F8) &&
              fbk::NumericFormat_int8 == int(NumericFormat::I8) &&
              fbk::NumericFormat_fp4 == int(NumericFormat::F4) &&
              fbk::NumericFormat_MAX + 1 == kNumNumericFormats);
static_assert(fbk::CostBound_compute == int(CostBound::Compute) &&
              fbk::CostBound_sram == int(CostBound::Sram) &&
              fbk::CostBound_mesh == int(CostBound::Mesh) &&
              fbk::CostBound_link == int(CostBound::Link) &&
              fbk::CostBound_offchip == int(CostBound::OffChip) &&
              fbk::CostBound_fill_drain == int(CostBound::FillDrain) &&
              fbk::CostBound_MAX + 1 == kNumCostBounds);

void ProgramLoader::loadKernels(const loom::program::Program &fb) {
  if (!fb.kernels())
    return;
  p_.kernels.reserve(fb.kernels()->size());
  for (const auto *k : *fb.kernels()) {
    ProgramKernel pk;
    pk.id = k->id();
    pk.name = str(k->name());
    std::string where = "kernel " + std::to_string(pk.id) + " '" + pk.name + "'";
    if (k->onnx_nodes())
      for (const auto *s : *k->onnx_nodes())
        pk.onnxNodes.push_back(str(s));
    int kind = static_cast<int>(k->kind());
    if (kind < 0 || kind >= static_cast<int>(kNumKernelKinds))
      fail(where + ": unknown kernel kind " + std::to_string(kind) +
           " (expected " + kKernelKinds + ")");
    if (kind == static_cast<int>(KernelKind::Collective))
      fail(where + ": kind collective is a collective's, not a kernel's "
                   "(expected " +
           std::string(kKernelKinds) + ")");
    pk.kind = static_cast<KernelKind>(kind);
    int precision = static_cast<int>(k->precision());
    std::string precisionName =
        precision >= 0 && precision < static_cast<int>(kNumNumericFormats)
            ? numericFormatName(static_cast<NumericFormat>(precision))
            : "format " + std::to_string(precision);
    if (!kernelPrecisionFormat(precisionName))
      fail(where + ": precision " + precisionName +
           " is no kernel precision (expected " + kKernelPrecisions + ")");
    pk.precision = static_cast<NumericFormat>(precision);
    pk.tileRow = k->tile_row();
    pk.tileCol = k->tile_col();
    pk.tileRows = k->tile_rows();
    pk.tileCols = k->tile_cols();
    if (pk.tileRow < 0 || pk.tileCol < 0 || pk.tileRows < 1 ||
        pk.tileCols < 1 || pk.tileRows > p_.tileRows - pk.tileRow ||
        pk.tileCols > p_.tileCols - pk.tileCol)
      fail(where + ": region at (" + std::to_string(pk.tileRow) + ", " +
           std::to_string(pk.tileCol) + ") of " + std::to_string(pk.tileRows) +
           " x " + std::to_string(pk.tileCols) + " tiles is outside the " +
           std::to_string(p_.tileRows) + " x " + std::to_string(p_.tileCols) +
           " tile grid");
    pk.chip = k->chip();
    pk.decomposition = str(k->decomposition());
    if (pk.chip < 0 || pk.chip >= p_.chips)
      fail(where + ": chip " + std::to_string(pk.chip) +
           " is outside the program's " + std::to_string(p_.chips) + " chips");
    pk.inputs = vec<int32_t>(k->inputs());
    pk.outputs = vec<int32_t>(k->outputs());
    for (int32_t id : pk.inputs)
      checkTensorRef(id, where + " input", false);
    for (int32_t id : pk.outputs)
      checkTensorRef(id, where + " output", false);
    pk.flops = k->flops();
    pk.bytes = k->bytes();
    int bound = static_cast<int>(k->bound());
    if (bound < 0 || bound >= static_cast<int>(kNumCostBounds))
      fail(where + ": unknown cost bound " + std::to_string(bound) +
           " (expected " + kCostBounds + ")");
    pk.bound = static_cast<CostBound>(bound);
    pk.cycles = k->cycles();
    pk.group = k->group();
    if (pk.group < 0 || pk.group >= p_.pipelineGroups)
      fail(where + ": group " + std::to_string(pk.group) +
           " is outside the program's " + std::to_string(p_.pipelineGroups) +
           " pipeline groups");
    if (pk.flops < 0 || pk.bytes < 0 || pk.cycles < 0)
      fail(where + ": negative flops, bytes or cycles");
    if (k->ops()) {
      size_t i = 0;
      for (const auto *o : *k->ops()) {
        ProgramOp po;
        po.name = str(o->name());
        po.onnxNode = str(o->onnx_node());
        std::string owhere = where + " op " + std::to_string(i++) + " '" +
                             po.name + "'" +
                             (po.onnxNode.empty()
                                  ? ""
                                  : " (onnx node '" + po.onnxNode + "')");
        if (!isKnownOp(po.name))
          fail(owhere + ": unknown op");
        po.inputs = vec<int32_t>(o->inputs());
        po.outputs = vec<int32_t>(o->outputs());
        for (int32_t id : po.inputs)
          checkTensorRef(id, owhere + " input", true);
        for (int32_t id : po.outputs)
          checkTensorRef(id, owhere + " output", false);
        if (o->attrs())
          for (const auto *a : *o->attrs()) {
            std::string name = str(a->name());
            std::string awhere = owhere + " attribute '" + name + "'";
            if (name.empty())
              fail(owhere + ": attribute without a name");
            if (!po.attrs.emplace(name, convertAttr(*a, awhere)).second)
              fail(awhere + ": duplicate attribute");
          }
        pk.ops.push_back(std::move(po));
      }
    }
    p_.kernels.push_back(std::move(pk));
  }
  indexIds(p_.kernels, p_.kernelIdx_, "kernel");
}

void ProgramLoader::loadInstrs(const loom::program::Program &fb) {
  if (!fb.instrs())
    return;
  int64_t tiles = p_.numTiles();
  p_.instrs.reserve(fb.instrs()->size());
  for (const auto *in : *fb.instrs()) {
    ProgramInstr pi;
    pi.id = in->id();
    pi.kernel = in->kernel();
    std::string where = "instr " + std::to_string(pi.id);
    int unit = static_cast<int>(in->unit());
    if (unit < loom::program::Unit_MIN || unit > loom::program::Unit_MAX)
      fail(where + ": unknown unit " + std::to_string(unit));
    pi.unit = static_cast<Unit>(unit);
    pi.resource = in->resource();
    pi.start = in->start();
    pi.duration = in->duration();
    pi.bytes = in->bytes();
    pi.latency = in->latency();
    if (pi.latency < 0)
      fail(where + ": negative latency " + std::to_string(pi.latency));
    pi.deps = vec<int32_t>(in->deps());
    pi.reads = vec<int32_t>(in->reads());
    pi.writes = vec<int32_t>(in->writes());
    if (pi.kernel != -1 && p_.kernelIndex(pi.kernel) < 0)
      fail(where + ": unknown kernel id " + std::to_string(pi.kernel));
    if (isLinkUnit(pi.unit)) {
      bool chip = pi.unit == Unit::ChipLink;
      int64_t l = p_.linkIndex(pi.resource);
      if (l < 0)
        fail(where + ": unknown " + (chip ? "chip" : "mesh") + " link id " +
             std::to_string(pi.resource));
      if (p_.links[static_cast<size_t>(l)].chipLink != chip)
        fail(where + ": a " + unitName(pi.unit) + " instr on link " +
             std::to_string(pi.resource) + ", which is a " +
             (chip ? "mesh link" : "chip link"));
    } else if (pi.resource < 0 || pi.resource >= tiles) {
      fail(where + ": tile " + std::to_string(pi.resource) + " is outside " +
           grid());
    }
    if (pi.start < 0 || pi.duration < 0 ||
        pi.duration > std::numeric_limits<int64_t>::max() - pi.start)
      fail(where + ": bad start " + std::to_string(pi.start) +
           " or duration " + std::to_string(pi.duration));
    if (pi.bytes < 0)
      fail(where + ": negative bytes");
    for (int32_t b : pi.reads)
      if (p_.bufferIndex(b) < 0)
        fail(where + ": reads unknown buffer id " + std::to_string(b));
    for (int32_t b : pi.writes)
      if (p_.bufferIndex(b) < 0)
        fail(where + ": writes unknown buffer id " + std::to_string(b));
    if (!p_.instrs.empty()) {
      const ProgramInstr &prev = p_.instrs.back();
      if (prev.start > pi.start || (prev.start == pi.start && prev.id >= pi.id))
        fail(where + ": instrs are not sorted by (start, id): it follows "
                     "instr " +
             std::to_string(prev.id) + " at cycle " +
             std::to_string(prev.start));
    }
    p_.instrs.push_back(std::move(pi));
  }
  indexIds(p_.instrs, p_.instrIdx_, "instr");
  for (const ProgramInstr &pi : p_.instrs)
    for (int32_t d : pi.deps)
      if (p_.instrIndex(d) < 0)
        fail("instr " + std::to_string(pi.id) + ": unknown dep instr id " +
             std::to_string(d));
}

Program Program::fromBytes(const void *data, size_t size,
                           const std::string &name,
                           const LoadOptions &options) {
  return fromShared(std::make_shared<std::vector<uint8_t>>(
                        static_cast<const uint8_t *>(data),
                        static_cast<const uint8_t *>(data) + size),
                    name, options);
}

namespace {

uint64_t readU64(const uint8_t *at) {
  uint64_t v;
  std::memcpy(&v, at, sizeof(v)); // the verifier aligns only to 4 bytes
  return flatbuffers::EndianScalar(v);
}

/// The file is the one loom wrote: its length and checksum (ProgramSeal.h).
void checkSeal(const uint8_t *data, size_t size) {
  ProgramSealFields f = programSealFields(data);
  if (!f.fileSize || !f.checksum)
    throw Error("the program carries no checksum (written by an earlier "
                "loom): recompile the model with this loom");
  uint64_t want = readU64(f.fileSize);
  if (size > want)
    throw Error(std::to_string(size - want) +
                " trailing bytes after the program's " + std::to_string(want) +
                " bytes");
  if (size < want)
    throw Error("truncated program: " + std::to_string(size) + " of its " +
                std::to_string(want) + " bytes");
  if (programChecksum(data, size, f.checksum) != readU64(f.checksum))
    throw Error("checksum mismatch: the file changed after loom wrote it (a "
                "corrupted copy or an edit); recompile the model, or run an "
                "edited file with --ignore-checksum");
}

} // namespace

Program Program::fromShared(std::shared_ptr<const std::vector<uint8_t>> bytes,
                            const std::string &name,
                            const LoadOptions &options) {
  Program p;
  p.path = name;
  p.bytes_ = bytes;
  size_t size = bytes->size();
  try {
    // A flatbuffer starts with the root offset and the 4-byte identifier.
    if (size < 8)
      throw Error("truncated file (" + std::to_string(size) +
                  " bytes): not a Loom program");
    if (!loom::program::ProgramBufferHasIdentifier(bytes->data()))
      throw Error("not a Loom program (file identifier is not 'LOOM')");
    if (size >= FLATBUFFERS_MAX_BUFFER_SIZE)
      throw Error("file too large for a Loom program");
    flatbuffers::Verifier::Options opts;
    // Each table takes at least 4 bytes: never reject a large valid program
    // for having many tables.
    opts.max_tables = static_cast<flatbuffers::uoffset_t>(
        std::max<size_t>(1000000, size / 4 + 1));
    flatbuffers::Verifier verifier(bytes->data(), size, opts);
    if (!loom::program::VerifyProgramBuffer(verifier))
      throw Error("corrupt or truncated program (flatbuffers verification "
                  "failed)");
    if (options.checkIntegrity)
      checkSeal(bytes->data(), size);
    ProgramLoader(p).load(*loom::program::GetProgram(bytes->data()));
  } catch (const Error &e) {
    throw Error(name + ": " + e.what());
  }
  return p;
}

Program Program::load(const std::string &path, const LoadOptions &options) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path + ": cannot open: " + std::strerror(errno));
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0 || !in)
    throw Error(path + ": cannot read");
  // Before allocating: a directory's size reads as LLONG_MAX.
  if (size >= static_cast<std::streamoff>(FLATBUFFERS_MAX_BUFFER_SIZE))
    throw Error(path + ": not a Loom program (not a regular file, or over "
                       "2 GiB)");
  auto bytes = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(size));
  in.read(reinterpret_cast<char *>(bytes->data()), size);
  if (in.gcount() != size)
    throw Error(path + ": read error");
  return fromShared(std::move(bytes), path, options);
}

} // namespace loom::rt
