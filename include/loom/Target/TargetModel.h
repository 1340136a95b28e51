//===- TargetModel.h - The hardware every pass asks about -------*- C++ -*-===//
//
// `TargetModel` is the one place the compiler, the planner and the reports
// learn what the hardware is: tile grid, clock, matrix and vector units, SRAM,
// mesh, off-chip memory, chip-to-chip links and the system they form. It is
// loaded from JSON (a preset under targets/ or a user file), validated field
// by field, and answers derived questions. No other code may hard-code a
// device constant.
//
// This library does not depend on MLIR or LLVM, and its API does not throw.
// The schema, the derived figures and their formulas are in docs/targets.md.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TARGET_TARGETMODEL_H
#define LOOM_TARGET_TARGETMODEL_H

#include "loom/Runtime/TargetDesc.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loom {

using rt::NumericFormat;
using rt::TargetDesc;
using rt::Topology;

/// A figure derived from a target description, e.g. "chip.peak_flops.fp16".
/// `key` is stable: tests and presets' "_published" tables refer to it.
struct DerivedFigure {
  std::string key;
  double value = 0;
  /// "FLOP/s", "B", "B/s", "W", "chips", ...
  std::string unit;
};

/// A validated target description with derived-figure queries.
class TargetModel {
public:
  /// Loads `nameOrPath`: a preset name (letters, digits, '-', '_') resolves
  /// to `<presetsDir()>/<name>.json`; anything else is a file path. On
  /// failure returns std::nullopt and sets `error` to one line of the form
  /// "<file>: <json.path>: <problem>".
  static std::optional<TargetModel> load(const std::string &nameOrPath,
                                         std::string &error);
  /// Loads and validates the JSON file at `path`.
  static std::optional<TargetModel> loadFile(const std::string &path,
                                             std::string &error);
  /// Parses and validates JSON text; `fileLabel` names it in errors.
  static std::optional<TargetModel> parse(std::string_view jsonText,
                                          std::string_view fileLabel,
                                          std::string &error);
  /// Validates a description built in code (e.g. a sweep that edits one
  /// field). Errors name the JSON path of the offending field.
  static std::optional<TargetModel> fromDesc(TargetDesc desc,
                                             std::string &error);

  /// The directory preset names resolve in: $LOOM_TARGETS_DIR if set, else
  /// the source tree's targets/ directory fixed at build time.
  static std::string presetsDir();
  /// The JSON text of the preset or file `nameOrPath` resolves to, as a
  /// program file carries it (target_json); empty if it cannot be read.
  static std::string fileText(const std::string &nameOrPath);
  /// Names of the presets in presetsDir(), sorted.
  static std::vector<std::string> presetNames();
  /// True if `nameOrPath` would be looked up as a preset name.
  static bool isPresetName(std::string_view nameOrPath);

  const TargetDesc &desc() const { return desc_; }
  const std::string &name() const { return desc_.name; }

  //===--------------------------------------------------------------------===//
  // Chip
  //===--------------------------------------------------------------------===//

  int64_t tileRows() const { return desc_.chip.tileRows; }
  int64_t tileCols() const { return desc_.chip.tileCols; }
  int64_t tilesPerChip() const { return tileRows() * tileCols(); }
  double clockHz() const { return desc_.chip.clockHz; }
  double secondsToCycles(double seconds) const { return seconds * clockHz(); }
  double cyclesToSeconds(double cycles) const { return cycles / clockHz(); }

  /// True if the matrix unit runs `format` natively.
  /// The precision a compile takes without --precision: the target's
  /// `default_precision`, else fp32.
  std::string defaultPrecision() const {
    return desc_.defaultPrecision.empty() ? "fp32" : desc_.defaultPrecision;
  }

  bool matrixSupports(NumericFormat format) const {
    return desc_.chip.tile.matrix.macs(format) > 0;
  }
  /// Matrix MACs per cycle per tile for `format` (0 if unsupported).
  int64_t matrixMacsPerCycle(NumericFormat format) const {
    return desc_.chip.tile.matrix.macs(format);
  }
  /// Dense matrix-unit peak of one chip: 2 * MACs * tiles * clock; 0 if the
  /// matrix unit does not run `format`.
  double peakMatrixFlopsPerChip(NumericFormat format) const;
  /// Vector-unit element operations per second of one chip.
  double peakVectorOpsPerChip() const;
  /// The best dense FLOP/s a matmul in `format` can reach on one chip: the
  /// matrix unit if it runs `format`, else the vector unit (one MAC per lane
  /// per cycle).
  double peakFlopsPerChip(NumericFormat format) const;

  int64_t sramBytesPerTile() const { return desc_.chip.tile.sram.bytes; }
  int64_t sramBytesPerChip() const {
    return sramBytesPerTile() * tilesPerChip();
  }
  /// Memory headroom: how much of a memory each step that fills it takes,
  /// the rest left for what that step does not count. One named policy
  /// each, all here:
  /// - kPartitionSramShare: the share of a chip's SRAM that partitioning
  ///   across chips (and the planner, which prices the same partitions)
  ///   fills with weights and KV caches; the rest is for activations and
  ///   the uneven spread of weights over the chip's tiles.
  static constexpr double kPartitionSramShare = 0.8;
  /// - kPlacementReserveDivisor: graph-to-spatial leaves 1 / 10 of each
  ///   tile for activations when it places weights (or the room a
  ///   pipelined mapping's inputs in flight need, if more).
  static constexpr int64_t kPlacementReserveDivisor = 10;
  /// - kMappingSramShare: the mapping planner packs its bands' resident
  ///   bytes into this share of each tile.
  static constexpr double kMappingSramShare = 0.75;
  /// - kHbmShare: the share of a GPU's HBM the planner fills with weights
  ///   and KV caches (the rest for activations and the serving engine's
  ///   workspace).
  static constexpr double kHbmShare = 0.9;
  /// The most chips one tensor-parallel group spans in graph-partition's
  /// and the planner's searches.
  static constexpr int64_t kMaxTensorParallel = 64;
  double sramBytesPerSecondPerChip() const;

  bool hasMesh() const { return desc_.chip.mesh.has_value(); }
  /// Bytes per second of one mesh link in one direction (0 without a mesh).
  double meshLinkBytesPerSecond() const;
  /// Bidirectional bandwidth across the narrowest cut that halves the tile
  /// grid (0 for a single-tile chip).
  double meshBisectionBytesPerSecond() const;

  bool hasOffChipMemory() const { return desc_.chip.offChip.has_value(); }
  int64_t offChipBytesPerChip() const;
  double offChipBytesPerSecondPerChip() const;

  //===--------------------------------------------------------------------===//
  // System
  //===--------------------------------------------------------------------===//

  int64_t chips() const { return desc_.system.chips; }
  int64_t chipsPerNode() const { return desc_.system.chipsPerNode; }
  int64_t chipsPerRack() const {
    return desc_.system.chipsPerNode * desc_.system.nodesPerRack;
  }
  /// Chips reachable over chip-to-chip links without the scale-out network.
  int64_t linkDomainChips() const { return desc_.system.links.domainChips; }
  Topology topology() const { return desc_.system.links.topology; }
  /// All of one chip's chip-to-chip links, one direction.
  double chipLinkBytesPerSecondPerChip() const;
  /// The chip links' latency in whole cycles, as the chip network and the
  /// scheduler count it (cyclesCeil), in seconds: every cost agrees with
  /// the compiled program.
  double chipLinkLatencySeconds() const {
    return cyclesToSeconds(double(
        cyclesCeil(desc_.system.links.latencySeconds, clockHz())));
  }
  /// ceil(seconds x hz), forgiving the rounding error of a product that is
  /// meant to be whole (1e-6 s x 1e9 Hz is 1000 cycles, not 1001).
  static int64_t cyclesCeil(double seconds, double hz);
  double powerWattsPerChip() const { return desc_.system.powerWattsPerChip; }

  //===--------------------------------------------------------------------===//
  // Efficiency (the planner's analytical cost model)
  //===--------------------------------------------------------------------===//

  /// The fractions of its peaks the chip's kernels sustain: the target's
  /// `efficiency`, else defaults. A chip with off-chip memory (a GPU)
  /// defaults to 0.6 of its matrix peak (0.4 in fp4), 0.75 of its memory
  /// bandwidth and 0.7 of its links; one without (a statically scheduled
  /// spatial chip) to 0.9, 0.9 and 1 (docs/planner.md).
  rt::EfficiencyDesc efficiency() const;
  /// The fraction of its peak a matmul in `format` sustains: the matrix
  /// unit's in that format, or, where the unit does not run it (the vector
  /// unit does), the highest of the formats it runs.
  double matrixEfficiency(NumericFormat format) const;
  /// The rows at which a matmul in `format` sustains half of
  /// matrixEfficiency(format) (`efficiency.matrix_half_rows`): M rows
  /// sustain matrixEfficiency x M / (M + this). 0 where the file states
  /// none, the defaults, and for a format the matrix unit does not run.
  double matrixHalfRows(NumericFormat format) const;

  /// Every derived figure, in the order `loom target show` prints them.
  std::vector<DerivedFigure> derivedFigures() const;
  /// One derived figure by key, or std::nullopt if no such key.
  std::optional<double> derivedFigure(std::string_view key) const;

private:
  explicit TargetModel(TargetDesc desc) : desc_(std::move(desc)) {}

  TargetDesc desc_;
};

} // namespace loom

#endif // LOOM_TARGET_TARGETMODEL_H
