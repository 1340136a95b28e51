//===- TargetDesc.h - Plain-data hardware description -----------*- C++ -*-===//
//
// The plain-data mirror of a Loom target description: what a chip and a
// system of chips are made of, field for field as in the target JSON (see
// docs/targets.md). It has no behaviour beyond a few helpers on its enums, so
// the runtime and the simulator can read it without MLIR or LLVM. The
// compiler's `loom::TargetModel` (include/loom/Target/TargetModel.h) loads and
// validates it and answers derived questions (peak FLOP/s, bisection
// bandwidth, ...); nothing else may hard-code a device constant.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_TARGETDESC_H
#define LOOM_RUNTIME_TARGETDESC_H

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace loom::rt {

/// Numeric formats a matrix unit may run natively. The JSON spellings are
/// those returned by `numericFormatName`.
enum class NumericFormat : uint8_t { F32, TF32, BF16, F16, F8, I8, F4 };

inline constexpr size_t kNumNumericFormats = 7;

inline constexpr std::array<NumericFormat, kNumNumericFormats>
    kAllNumericFormats = {NumericFormat::F32,  NumericFormat::TF32,
                          NumericFormat::BF16, NumericFormat::F16,
                          NumericFormat::F8,   NumericFormat::I8,
                          NumericFormat::F4};

/// The JSON spelling of a numeric format: "fp32", "tf32", "bf16", "fp16",
/// "fp8", "int8", "fp4".
inline const char *numericFormatName(NumericFormat format) {
  switch (format) {
  case NumericFormat::F32:
    return "fp32";
  case NumericFormat::TF32:
    return "tf32";
  case NumericFormat::BF16:
    return "bf16";
  case NumericFormat::F16:
    return "fp16";
  case NumericFormat::F8:
    return "fp8";
  case NumericFormat::I8:
    return "int8";
  case NumericFormat::F4:
    return "fp4";
  }
  return "?";
}

/// Parses a JSON spelling; std::nullopt if it names no known format.
inline std::optional<NumericFormat> parseNumericFormat(std::string_view name) {
  for (NumericFormat format : kAllNumericFormats) {
    if (name == numericFormatName(format)) {
      return format;
    }
  }
  return std::nullopt;
}

/// The precisions a kernel's precision policy may name, the format of its
/// matrix unit's inputs: "fp32", "bf16", "fp16", "fp8" (E4M3) or "int8"
/// (symmetric, per tensor); std::nullopt for anything else.
inline std::optional<NumericFormat>
kernelPrecisionFormat(std::string_view precision) {
  std::optional<NumericFormat> f = parseNumericFormat(precision);
  if (f && (*f == NumericFormat::F32 || *f == NumericFormat::BF16 ||
            *f == NumericFormat::F16 || *f == NumericFormat::F8 ||
            *f == NumericFormat::I8))
    return f;
  return std::nullopt;
}

/// The kernel precisions, as error messages list them.
inline constexpr const char *kKernelPrecisions =
    "fp32, bf16, fp16, fp8 or int8";

/// The format fp32 activations cross chips in under a kernel precision
/// policy, as serving engines send them: fp16 under fp16, bf16 under the
/// other narrow policies (bf16, fp8, int8); std::nullopt (as computed,
/// fp32) under fp32 or anything else. graph-precision-policy stores them
/// so; graph-partition and the planner price them so.
inline std::optional<NumericFormat>
activationWireFormat(std::string_view precision) {
  std::optional<NumericFormat> f = kernelPrecisionFormat(precision);
  if (!f || *f == NumericFormat::F32)
    return std::nullopt;
  return *f == NumericFormat::F16 ? NumericFormat::F16 : NumericFormat::BF16;
}

/// Storage bytes of one element (tf32 is stored as fp32; fp4 is half a byte).
inline double numericFormatBytes(NumericFormat format) {
  switch (format) {
  case NumericFormat::F32:
  case NumericFormat::TF32:
    return 4.0;
  case NumericFormat::BF16:
  case NumericFormat::F16:
    return 2.0;
  case NumericFormat::F8:
  case NumericFormat::I8:
    return 1.0;
  case NumericFormat::F4:
    return 0.5;
  }
  return 4.0;
}

/// The formats a tensor may be stored in, narrower than the fp32 it is
/// computed in (a KV cache held at fp8, say): "fp32" (as computed), "bf16",
/// "fp16" or "fp8" (E4M3, unscaled); std::nullopt for anything else. int8
/// is not among them: it needs a scale, which a stored tensor does not carry.
/// (The kernel precisions but int8.)
inline std::optional<NumericFormat>
storageFormat(std::string_view name) {
  std::optional<NumericFormat> f = kernelPrecisionFormat(name);
  if (f == NumericFormat::I8)
    return std::nullopt;
  return f;
}

/// The storage formats, as error messages list them.
inline constexpr const char *kStorageFormats = "fp32, bf16, fp16 or fp8";

/// True for a storage format narrower than fp32: bf16, fp16 or fp8 (a
/// kernel's `storage`, the storage formats but fp32).
inline bool isNarrowStorageFormat(NumericFormat format) {
  return format == NumericFormat::BF16 || format == NumericFormat::F16 ||
         format == NumericFormat::F8;
}

/// A storage format narrower than fp32 ("bf16", "fp16", "fp8"): what a
/// tensor's `storage` may name; std::nullopt for fp32 and anything else.
inline std::optional<NumericFormat> narrowStorageFormat(std::string_view name) {
  std::optional<NumericFormat> f = storageFormat(name);
  if (!f || !isNarrowStorageFormat(*f))
    return std::nullopt;
  return f;
}

/// Bytes per element of an f32 value of `ownBytes` per element stored in
/// `format` (its own bytes without one, or when the format is not narrower).
inline int64_t bytesStoredAs(int64_t ownBytes,
                             std::optional<NumericFormat> format) {
  if (!format)
    return ownBytes;
  return std::min<int64_t>(ownBytes,
                           static_cast<int64_t>(numericFormatBytes(*format)));
}

/// How chips are wired to each other by their chip-to-chip links.
enum class Topology : uint8_t {
  None,           ///< A single chip: the links are not used.
  Ring,           ///< Each chip talks to two neighbours.
  Torus2D,        ///< Four neighbours, wrap-around in both dimensions.
  FullyConnected, ///< Every chip has a direct link to every other chip.
  Dragonfly,      ///< Fully connected groups joined by global links.
  Switch,         ///< Every link goes to a switch (NVLink/NVSwitch class).
};

inline const char *topologyName(Topology topology) {
  switch (topology) {
  case Topology::None:
    return "none";
  case Topology::Ring:
    return "ring";
  case Topology::Torus2D:
    return "torus2d";
  case Topology::FullyConnected:
    return "fully_connected";
  case Topology::Dragonfly:
    return "dragonfly";
  case Topology::Switch:
    return "switch";
  }
  return "?";
}

inline std::optional<Topology> parseTopology(std::string_view name) {
  for (Topology topology :
       {Topology::None, Topology::Ring, Topology::Torus2D,
        Topology::FullyConnected, Topology::Dragonfly, Topology::Switch}) {
    if (name == topologyName(topology)) {
      return topology;
    }
  }
  return std::nullopt;
}

/// The matrix unit of one tile.
struct MatrixUnitDesc {
  /// Dense multiply-accumulates per cycle, indexed by NumericFormat; 0 means
  /// the unit does not run that format (the vector unit does instead).
  std::array<int64_t, kNumNumericFormats> macsPerCycle{};
  /// The native block: the unit works on whole M x N x K blocks, so a matmul
  /// is padded up to multiples of these.
  int64_t blockM = 1;
  int64_t blockN = 1;
  int64_t blockK = 1;
  /// Cycles from the first operand in to the first result out.
  int64_t latencyCycles = 0;
  /// The rate the unit takes its stationary operand (a matmul's B, a
  /// convolution's weights) into the array, in bytes a cycle: a block's
  /// rows load while the previous block computes, so a contraction with few
  /// rows of A per block (a decode step's matrix-vector products) is bound
  /// by it. 0: not modelled (the weights arrive as fast as the blocks run).
  double weightLoadBytesPerCycle = 0;

  int64_t macs(NumericFormat format) const {
    return macsPerCycle[static_cast<size_t>(format)];
  }
};

/// The vector unit of one tile: `lanes` element operations per cycle.
struct VectorUnitDesc {
  int64_t lanes = 1;
  int64_t latencyCycles = 0;
};

/// A tile's local SRAM.
struct SramDesc {
  int64_t bytes = 0;
  /// Read plus write bytes per cycle the tile's SRAM sustains.
  double bytesPerCycle = 0;
};

struct TileDesc {
  MatrixUnitDesc matrix;
  VectorUnitDesc vector;
  SramDesc sram;
};

/// The on-chip mesh between neighbouring tiles.
struct MeshDesc {
  /// Bytes per cycle per link per direction.
  double linkBytesPerCycle = 0;
  int64_t hopLatencyCycles = 0;
};

/// Memory outside the chip (HBM, GDDR, DRAM).
struct OffChipMemoryDesc {
  int64_t bytes = 0;
  double bytesPerSecond = 0;
};

struct ChipDesc {
  std::string name;
  int64_t tileRows = 1;
  int64_t tileCols = 1;
  double clockHz = 0;
  TileDesc tile;
  /// Absent only when the chip is a single tile.
  std::optional<MeshDesc> mesh;
  std::optional<OffChipMemoryDesc> offChip;
};

/// The chip-to-chip links of one chip and how they are wired.
struct ChipLinkDesc {
  int64_t perChip = 0;
  /// Bytes per second per link per direction.
  double bytesPerSecond = 0;
  double latencySeconds = 0;
  /// What the chips of a layer's tp x ep group wait at each of its
  /// collectives (the two all-reduces of tensor parallelism, the two
  /// all-to-alls of expert parallelism) beyond the collective's own
  /// transfers: aligning their schedules. A
  /// fitted figure (docs/silicon-validation.md); 0, the default, charges
  /// nothing.
  double syncSeconds = 0;
  Topology topology = Topology::None;
  /// Chips reachable over these links alone (an NVLink domain, a Groq
  /// RealScale system); a divisor of the system's chips.
  int64_t domainChips = 1;
  /// "adaptive" routing (dragonfly only): a large transfer between nodes
  /// may also take the two-hop routes through other nodes (Valiant), see
  /// loom::ChipNetwork; false: minimal routes only (the default).
  bool adaptiveRouting = false;
};

/// The network between link domains (InfiniBand, Ethernet), per chip.
struct ScaleOutDesc {
  double bytesPerSecond = 0;
  double latencySeconds = 0;
};

struct SystemDesc {
  int64_t chips = 1;
  int64_t chipsPerNode = 1;
  int64_t nodesPerRack = 1;
  ChipLinkDesc links;
  /// Required when links.domainChips < chips.
  std::optional<ScaleOutDesc> scaleOut;
  double powerWattsPerChip = 0;
};

/// The fractions of its peaks a chip's kernels sustain, which the
/// planner's analytical cost model applies (docs/planner.md). They are
/// assumptions about the chip's software as much as its silicon, so a
/// preset states each with its source.
struct EfficiencyDesc {
  /// Indexed by NumericFormat: the matrix unit's fraction of its peak in
  /// that format; set for every format the matrix unit runs, 0 for others.
  std::array<double, kNumNumericFormats> matrix{};
  /// Indexed by NumericFormat: the rows (a matmul's M, the tokens it
  /// multiplies) at which a matmul in that format sustains half its
  /// `matrix` fraction; M rows sustain matrix x M / (M + halfRows). 0 (the
  /// default, and for formats the matrix unit does not run): the fraction
  /// at every M.
  std::array<double, kNumNumericFormats> matrixHalfRows{};
  /// Of the memory the weights and caches stream from (off-chip memory, or
  /// SRAM on a chip without it).
  double memory = 0;
  /// Of the chip-to-chip links.
  double links = 0;
};

/// A whole target: one kind of chip, and a system of them.
struct TargetDesc {
  std::string name;
  std::string description;
  ChipDesc chip;
  SystemDesc system;
  /// Absent: the planner's defaults (TargetModel::efficiency).
  std::optional<EfficiencyDesc> efficiency;
  /// The kernel precision the chip is meant to run (`default_precision`),
  /// which `loom compile`, `check` and `sweep` take when --precision is not
  /// given; empty: fp32.
  std::string defaultPrecision;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_TARGETDESC_H
