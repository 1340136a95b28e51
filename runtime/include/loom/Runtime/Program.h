//===- Program.h - A loaded, verified Loom program file ---------*- C++ -*-===//
//
// The runtime's view of a `.loom` program (runtime/include/loom/Runtime/Program.fbs):
// plain C++ data, loaded from the FlatBuffers file and checked, so nothing
// downstream (the simulator, `loom run`) touches unverified bytes or needs the
// generated header.
//
// Loading checks, in order:
//  1. the bytes: large enough, the "LOOM" file identifier, and the
//     flatbuffers::Verifier (every offset and vector inside the buffer);
//  2. the contract the verifier cannot see: every id (tensor, kernel, instr,
//     buffer, link) is non-negative and unique, and every id referenced
//     exists; enum values are in range; shapes are non-negative and their
//     byte sizes do not overflow; a constant's data is exactly
//     numElements * dtypeSize bytes; the tile grid and every kernel region
//     are inside it; ops are known to the runtime (rt::isKnownOp); buffers
//     lie inside one tile's SRAM with live_start <= live_end; instrs have
//     non-negative start and duration, name a real tile or link of the
//     matching kind, and are sorted by (start, id); mesh links join
//     neighbouring tiles of one chip; chips are in [1, 2^20], the system
//     holds at most kMaxSystemTiles tiles in all, and every
//     kernel, chip link and tile index names one of them; a chip link joins
//     two different chips through their first tiles.
// Any failure throws loom::rt::Error "<file>: <problem>".
//
// A Constant without data is accepted (a timing-only program may leave the
// weights out); the functional simulator refuses to run it.
//
// Constants are zero-copy views of the file's bytes, which the Program keeps
// alive (shared by copies of it). A splat constant keeps its one element;
// ProgramTensor::value() expands it, which only a functional run does:
// loading and timing never touch a constant's bytes.
//
// Multi-chip programs number tiles system-wide: tile t is local tile
// t % tilesPerChip() of chip t / tilesPerChip().
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_PROGRAM_H
#define LOOM_RUNTIME_PROGRAM_H

#include "loom/Runtime/IdIndex.h"
#include "loom/Runtime/KernelEnums.h"
#include "loom/Runtime/OpExecutor.h"
#include "loom/Runtime/TargetDesc.h"
#include "loom/Runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace loom::rt {

enum class TensorKind : uint8_t { Input, Output, Constant, Intermediate };
const char *tensorKindName(TensorKind kind);

/// The unit an instruction occupies. Matrix, Vector and Dma are per tile
/// (the instr's resource is the system-wide tile index); MeshLink and
/// ChipLink are per link (the resource is the id of a link record, an
/// on-chip mesh link or a chip-to-chip link respectively).
enum class Unit : uint8_t { Matrix, Vector, Dma, MeshLink, ChipLink };
inline constexpr int kNumUnits = 5;
/// Units of each tile: Matrix, Vector and Dma (the first three of Unit).
inline constexpr int kTileUnits = 3;
/// The numbering of tile units system-wide that the scheduler's resources,
/// the simulator's and replay's tables and the schedule verifier share:
/// tile t's unit u is t * kTileUnits + u (links follow all tile units).
/// Requires a tile unit (not isLinkUnit).
inline int64_t tileUnitSlot(int64_t tile, Unit unit) {
  return tile * kTileUnits + static_cast<int64_t>(unit);
}
/// The most tiles a program may hold in all (chips x tiles per chip).
/// The simulator keeps per-tile and per-chip tables and statistics, so a
/// program's size bounds its memory and time; 2^20 tiles (65,536 chips of
/// 16 tiles) is far past every preset and what the compiler can build
/// (Driver refuses a compile past it too).
inline constexpr int64_t kMaxSystemTiles = int64_t(1) << 20;
/// "matrix", "vector", "dma", "mesh_link", "chip_link".
const char *unitName(Unit unit);
/// MeshLink or ChipLink: the resource is a link id, not a tile.
inline bool isLinkUnit(Unit unit) {
  return unit == Unit::MeshLink || unit == Unit::ChipLink;
}

struct ProgramTensor {
  int32_t id = 0;
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  TensorKind kind = TensorKind::Intermediate;
  /// For a Constant with data: a view of the file's bytes; for a splat, a
  /// view of its one element (shape [], not `shape`).
  Tensor constant;
  bool hasData = false;
  /// Every element equals the one `constant` holds.
  bool splat = false;
  /// One part of a model input or output split across chips (see
  /// Program.fbs): a slice along `partAxis` (index `partIndex` of
  /// `partCount` equal slices), or a replica when partAxis is -1.
  int32_t partAxis = -1, partIndex = 0, partCount = 1;
  bool isPart() const { return partCount > 1; }
  /// The narrow format the tensor is stored in (Program.fbs `storage`);
  /// F32: as its dtype.
  NumericFormat storage = NumericFormat::F32;

  int64_t numElements() const;
  int64_t byteSize() const;
  /// The full value of a constant with data: `constant` itself, or for a
  /// splat a new tensor of `shape` filled with its element (allocated on
  /// every call: callers that need it more than once keep it). Bool
  /// constants are checked to hold only 0 and 1 here, not at load time.
  /// Throws Error if there is no data.
  Tensor value() const;
};

struct ProgramOp {
  std::string name;
  /// Tensor ids; -1 for an absent optional operand.
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  AttrMap attrs;
  std::string onnxNode;
};

/// The program file version this runtime reads and the compiler writes:
/// 3, a kernel's kind, precision and bound as enums (version 2, the first
/// with tile programs, stored them as strings).
inline constexpr int32_t kProgramVersion = 3;

struct ProgramKernel {
  int32_t id = 0;
  std::string name;
  std::vector<std::string> onnxNodes;
  KernelKind kind = KernelKind::Elementwise;
  /// The format of the matrix unit's inputs: a kernel precision (fp32,
  /// bf16, fp16, fp8 or int8; rt::kernelPrecisionFormat).
  NumericFormat precision = NumericFormat::F32;
  int32_t tileRow = 0, tileCol = 0, tileRows = 0, tileCols = 0;
  std::vector<ProgramOp> ops;
  std::vector<int32_t> inputs, outputs;
  int64_t flops = 0, bytes = 0;
  CostBound bound = CostBound::Compute;
  /// The cost model's estimate.
  int64_t cycles = 0;
  /// Pipeline group: kernels of one group run on disjoint tiles.
  int32_t group = 0;
  /// The chip the region is on (tileRow/tileCol are chip-local).
  int32_t chip = 0;
  /// How the work is split over the region's tiles ("conv.out_rows", ...).
  std::string decomposition;
};

struct ProgramInstr {
  int32_t id = 0;
  /// Kernel id, or -1 for a transfer between kernels.
  int32_t kernel = -1;
  Unit unit = Unit::Matrix;
  /// System-wide tile index (Matrix, Vector, Dma) or link id (MeshLink,
  /// ChipLink).
  int32_t resource = 0;
  int64_t start = 0, duration = 0;
  std::vector<int32_t> deps, reads, writes;
  int64_t bytes = 0;
  /// Cycles after end() until what it writes arrives (a chip link's route
  /// latency; the link itself is free from end()).
  int64_t latency = 0;

  /// When its resource is free again.
  int64_t end() const { return start + duration; }
  /// When what it writes is there: dependants start no earlier.
  int64_t arrival() const { return end() + latency; }
};

struct ProgramBuffer {
  int32_t id = 0;
  int32_t tensor = 0;
  int32_t tile = 0;
  int64_t offset = 0, size = 0;
  /// Live over [liveStart, liveEnd) cycles of one iteration.
  int64_t liveStart = 0, liveEnd = 0;
  /// Slots it rotates over in a software-pipelined program (iteration k uses
  /// offset + (k mod copies) * size); a resident buffer (a weight) has one
  /// slot shared by all iterations and is live always.
  int32_t copies = 1;
  bool resident = false;
  /// The elements of the tensor it holds, [boxLo[d], boxHi[d]); both empty
  /// for the whole tensor (use box()).
  std::vector<int64_t> boxLo, boxHi;

  /// Bytes of SRAM it occupies: size * copies.
  int64_t footprint() const { return size * copies; }
};

/// A directed link: a mesh link between neighbouring tiles of one chip, or
/// a chip link from chip fromChip to chip toChip, whose ends are the first
/// tiles of the two chips. Tiles are system-wide; a mesh link's chips are
/// those of its tiles.
struct ProgramLink {
  int32_t id = 0;
  int32_t fromTile = 0, toTile = 0;
  bool chipLink = false;
  int32_t fromChip = 0, toChip = 0;
  /// Chip links: the bundle's bandwidth and wire latency.
  double bytesPerCycle = 0;
  int64_t latencyCycles = 0;
  /// Under adaptive routing: the rate of the non-minimal alternative a
  /// large transfer may take instead (0: none).
  double adaptiveBytesPerCycle = 0;
};

/// How a program file is checked as it is loaded.
struct LoadOptions {
  /// Refuse a file whose length or checksum (ProgramSeal.h) is not the one
  /// loom wrote. Off only to run a file edited by hand (`loom run
  /// --ignore-checksum`) and for the loader's fuzzer, which must reach
  /// the checks behind it.
  bool checkIntegrity = true;
};

class Program {
public:
  /// Reads and checks a .loom file. Throws Error "<path>: <problem>".
  static Program load(const std::string &path, const LoadOptions &options = {});
  /// Checks and loads a program from bytes (copied); `name` prefixes errors.
  static Program fromBytes(const void *data, size_t size,
                           const std::string &name,
                           const LoadOptions &options = {});

  /// The file (or name) it was loaded from.
  std::string path;
  int32_t version = kProgramVersion;
  std::string model, targetName, targetJson;
  /// The chip of the target, parsed and validated from targetJson at load
  /// (the loader refuses a program without one): the fields the ISA's
  /// timing rules read (Isa.h). Absent only in a program built in code.
  std::optional<ChipDesc> chip;
  /// The tile grid of one chip.
  int32_t tileRows = 1, tileCols = 1;
  int64_t sramBytesPerTile = 0;
  /// Chips the program runs on, chips per tensor-parallel group, pipeline
  /// stages, and the chip network's topology (see Program.fbs).
  int32_t chips = 1;
  int32_t tensorParallel = 1, pipelineParallel = 1;
  std::string topology;
  double clockHz = 0;
  std::vector<ProgramTensor> tensors;
  /// Tensor ids in the model's input / output order.
  std::vector<int32_t> inputs, outputs;
  /// The name of each output, by position (one tensor may be two outputs).
  std::vector<std::string> outputNames;
  /// In execution order.
  std::vector<ProgramKernel> kernels;
  /// Sorted by (start, id).
  std::vector<ProgramInstr> instrs;
  std::vector<ProgramBuffer> buffers;
  std::vector<ProgramLink> links;
  int64_t totalCycles = 0, sramPeakBytes = 0, sramLowerBoundBytes = 0,
          rooflineCycles = 0;
  /// "sequential", "pipelined" or "hybrid" (see Program.fbs).
  std::string mapping = "sequential";
  int32_t pipelineGroups = 1;
  /// Cycles between consecutive inputs of a stream (II); iteration k runs
  /// every instr k * II later. Equal to totalCycles when not pipelined.
  int64_t initiationInterval = 0;
  /// True if inputs overlap: 0 < II < totalCycles.
  bool pipelined() const {
    return initiationInterval > 0 && initiationInterval < totalCycles;
  }

  /// Tiles of one chip, and of the whole system (chips * tilesPerChip()).
  int64_t tilesPerChip() const { return int64_t(tileRows) * tileCols; }
  int64_t numTiles() const { return int64_t(chips) * tilesPerChip(); }
  /// The chip of system-wide tile `tile`.
  int64_t chipOf(int64_t tile) const {
    return tilesPerChip() > 0 ? tile / tilesPerChip() : 0;
  }
  /// How errors and traces name a tile: "tile 5 (1,1)", or with several
  /// chips "tile 5 (chip 1, 0,1)" (row and column within the chip); just
  /// "tile 5" when the grid is unknown.
  std::string describeTile(int64_t tile) const;

  /// Lookups by id; throw Error if the id does not exist.
  const ProgramTensor &tensor(int32_t id) const;
  const ProgramKernel &kernel(int32_t id) const;
  const ProgramInstr &instr(int32_t id) const;
  const ProgramBuffer &buffer(int32_t id) const;
  const ProgramLink &link(int32_t id) const;
  /// Positions by id (into tensors, kernels, ...); -1 if absent.
  int64_t tensorIndex(int32_t id) const;
  int64_t kernelIndex(int32_t id) const;
  int64_t instrIndex(int32_t id) const;
  int64_t bufferIndex(int32_t id) const;
  int64_t linkIndex(int32_t id) const;

  /// "kernel 3 'fused_matmul' (onnx: MatMul_0, Add_1)", or "transfer" for
  /// kernel id -1: how errors and reports name a kernel.
  std::string describeKernel(int32_t id) const;

private:
  static Program fromShared(std::shared_ptr<const std::vector<uint8_t>> bytes,
                            const std::string &name,
                            const LoadOptions &options);
  std::shared_ptr<const std::vector<uint8_t>> bytes_;
  IdIndex tensorIdx_, kernelIdx_, instrIdx_, bufferIdx_, linkIdx_;
  friend class ProgramLoader;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_PROGRAM_H
