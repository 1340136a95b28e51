//===- TargetModel.cpp - Load, validate and query target descriptions -----===//
//
// The JSON reader checks shape (known keys, types, presence); `validateDesc`
// then checks values (signs, consistency) on the plain description, so a
// description built in code gets the same checks with the same JSON paths.
// Exceptions are used internally to unwind to the API boundary and never
// escape it.
//
// It is long (over 1,000 lines) because it is the one reader and validator
// of every field of the target schema, each with its JSON path; split by
// schema section it would scatter the one list of known keys.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/TargetModel.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

using json = nlohmann::json;

namespace loom {
namespace {

/// A problem at a JSON path. Thrown inside this file only.
struct ValidationError {
  std::string path;
  std::string problem;
};

[[noreturn]] void fail(std::string path, std::string problem) {
  throw ValidationError{std::move(path), std::move(problem)};
}

std::string join(const std::string &path, std::string_view key) {
  if (path.empty()) {
    return std::string(key);
  }
  return path + "." + std::string(key);
}

/// Keys starting with '_' are documentation (sources, notes) and ignored.
bool isCommentKey(std::string_view key) {
  return !key.empty() && key.front() == '_';
}

/// Levenshtein distance, for "did you mean" hints.
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string describeValue(const json &value) {
  if (value.is_null()) {
    return "null";
  }
  std::string text = value.dump();
  if (text.size() > 40) {
    text = text.substr(0, 37) + "...";
  }
  return std::string(value.type_name()) + " " + text;
}

/// Reads one JSON object whose keys are all known up front: unknown keys are
/// reported before anything else, so a misspelt required key is reported as
/// unknown (with a suggestion) rather than as missing.
class ObjectReader {
public:
  ObjectReader(const json &object, std::string path,
               std::initializer_list<std::string_view> knownKeys)
      : object_(object), path_(std::move(path)) {
    if (!object_.is_object()) {
      fail(displayPath(path_),
           "wrong type: expected an object, got " + describeValue(object_));
    }
    for (const auto &[key, value] : object_.items()) {
      if (isCommentKey(key)) {
        continue;
      }
      if (std::find(knownKeys.begin(), knownKeys.end(), key) !=
          knownKeys.end()) {
        continue;
      }
      std::string problem = "unknown field";
      std::string_view best;
      size_t bestDistance = 3;
      for (std::string_view known : knownKeys) {
        size_t distance = editDistance(key, known);
        if (distance < bestDistance) {
          bestDistance = distance;
          best = known;
        }
      }
      if (!best.empty()) {
        problem += " (did you mean '" + std::string(best) + "'?)";
      } else {
        std::string list;
        for (std::string_view known : knownKeys) {
          list += (list.empty() ? "" : ", ") + std::string(known);
        }
        problem += " (expected one of: " + list +
                   "; keys starting with '_' are comments)";
      }
      fail(join(path_, key), problem);
    }
  }

  static std::string displayPath(const std::string &path) {
    return path.empty() ? "(root)" : path;
  }

  const std::string &path() const { return path_; }

  const json *find(std::string_view key) const {
    auto it = object_.find(std::string(key));
    return it == object_.end() ? nullptr : &*it;
  }

  const json &require(std::string_view key) const {
    const json *value = find(key);
    if (!value) {
      fail(join(path_, key), "missing required field");
    }
    return *value;
  }

  ObjectReader object(std::string_view key,
                      std::initializer_list<std::string_view> knownKeys) const {
    return ObjectReader(require(key), join(path_, key), knownKeys);
  }

  std::optional<ObjectReader>
  optionalObject(std::string_view key,
                 std::initializer_list<std::string_view> knownKeys) const {
    const json *value = find(key);
    if (!value) {
      return std::nullopt;
    }
    return ObjectReader(*value, join(path_, key), knownKeys);
  }

  std::string string(std::string_view key) const {
    return asString(require(key), join(path_, key));
  }

  std::string optionalString(std::string_view key,
                             std::string defaultValue) const {
    const json *value = find(key);
    return value ? asString(*value, join(path_, key)) : defaultValue;
  }

  double number(std::string_view key) const {
    return asNumber(require(key), join(path_, key));
  }

  int64_t integer(std::string_view key) const {
    return asInteger(require(key), join(path_, key));
  }

  std::optional<double> optionalNumber(std::string_view key) const {
    const json *value = find(key);
    if (!value) {
      return std::nullopt;
    }
    return asNumber(*value, join(path_, key));
  }

  std::optional<int64_t> optionalInteger(std::string_view key) const {
    const json *value = find(key);
    if (!value) {
      return std::nullopt;
    }
    return asInteger(*value, join(path_, key));
  }

  static std::string asString(const json &value, const std::string &path) {
    if (!value.is_string()) {
      fail(path, "wrong type: expected a string, got " + describeValue(value));
    }
    return value.get<std::string>();
  }

  static double asNumber(const json &value, const std::string &path) {
    if (!value.is_number()) {
      fail(path, "wrong type: expected a number, got " + describeValue(value));
    }
    double result = value.get<double>();
    if (!std::isfinite(result)) {
      fail(path, "must be a finite number");
    }
    return result;
  }

  /// Integers may be written as JSON integers or as integral numbers in
  /// exponent form (e.g. 5e8); anything with a fraction is a type error.
  static int64_t asInteger(const json &value, const std::string &path) {
    if (value.is_number_integer() && !value.is_number_unsigned()) {
      return value.get<int64_t>();
    }
    if (value.is_number_unsigned()) {
      uint64_t unsignedValue = value.get<uint64_t>();
      if (unsignedValue > (uint64_t(1) << 53)) {
        fail(path, "out of range: must be at most 2^53");
      }
      return static_cast<int64_t>(unsignedValue);
    }
    if (value.is_number_float()) {
      double number = value.get<double>();
      if (std::isfinite(number) && std::floor(number) == number &&
          std::fabs(number) <= 9007199254740992.0) {
        return static_cast<int64_t>(number);
      }
      fail(path,
           "wrong type: expected an integer, got " + describeValue(value));
    }
    fail(path, "wrong type: expected an integer, got " + describeValue(value));
  }

private:
  const json &object_;
  std::string path_;
};

//===----------------------------------------------------------------------===//
// JSON -> TargetDesc (shape only)
//===----------------------------------------------------------------------===//

/// Calls `each(format, value, path)` for every entry of the object
/// `parent.name` keyed by numeric formats (comment keys skipped), after
/// checking that it is an object and that each key names a format.
template <typename Each>
void forEachFormat(const ObjectReader &parent, std::string_view name,
                   Each each) {
  const json &object = parent.require(name);
  const std::string path = join(parent.path(), name);
  if (!object.is_object()) {
    fail(path, "wrong type: expected an object, got " + describeValue(object));
  }
  for (const auto &[key, value] : object.items()) {
    if (isCommentKey(key)) {
      continue;
    }
    std::optional<NumericFormat> format = rt::parseNumericFormat(key);
    if (!format) {
      std::string list;
      for (NumericFormat known : rt::kAllNumericFormats) {
        list += (list.empty() ? "" : ", ") +
                std::string(rt::numericFormatName(known));
      }
      fail(join(path, key),
           "unknown numeric format (expected one of: " + list + ")");
    }
    each(*format, value, join(path, key));
  }
}

rt::MatrixUnitDesc readMatrixUnit(const ObjectReader &tile) {
  ObjectReader matrix =
      tile.object("matrix", {"macs_per_cycle", "block", "latency_cycles",
                             "weight_load_bytes_per_cycle"});
  rt::MatrixUnitDesc result;
  const std::string macsPath = join(matrix.path(), "macs_per_cycle");
  bool any = false;
  forEachFormat(matrix, "macs_per_cycle",
                [&](NumericFormat format, const json &value,
                    const std::string &path) {
                  int64_t count = ObjectReader::asInteger(value, path);
                  if (count <= 0) {
                    fail(path, "must be positive, got " +
                                   std::to_string(count) +
                                   " (omit a format the matrix unit does "
                                   "not run)");
                  }
                  result.macsPerCycle[static_cast<size_t>(format)] = count;
                  any = true;
                });
  if (!any) {
    fail(macsPath, "inconsistent: must name at least one numeric format");
  }
  ObjectReader block = matrix.object("block", {"m", "n", "k"});
  result.blockM = block.integer("m");
  result.blockN = block.integer("n");
  result.blockK = block.integer("k");
  result.latencyCycles = matrix.integer("latency_cycles");
  result.weightLoadBytesPerCycle =
      matrix.optionalNumber("weight_load_bytes_per_cycle").value_or(0);
  return result;
}

rt::ChipDesc readChip(const ObjectReader &root, const std::string &targetName) {
  ObjectReader chip = root.object(
      "chip", {"name", "clock_hz", "tiles", "tile", "mesh", "offchip"});
  rt::ChipDesc result;
  result.name = chip.optionalString("name", targetName);
  result.clockHz = chip.number("clock_hz");
  ObjectReader tiles = chip.object("tiles", {"rows", "cols"});
  result.tileRows = tiles.integer("rows");
  result.tileCols = tiles.integer("cols");

  ObjectReader tile = chip.object("tile", {"matrix", "vector", "sram"});
  result.tile.matrix = readMatrixUnit(tile);
  ObjectReader vector = tile.object("vector", {"lanes", "latency_cycles"});
  result.tile.vector.lanes = vector.integer("lanes");
  result.tile.vector.latencyCycles = vector.integer("latency_cycles");
  ObjectReader sram = tile.object("sram", {"bytes", "bytes_per_cycle"});
  result.tile.sram.bytes = sram.integer("bytes");
  result.tile.sram.bytesPerCycle = sram.number("bytes_per_cycle");

  if (auto mesh = chip.optionalObject(
          "mesh", {"link_bytes_per_cycle", "hop_latency_cycles"})) {
    rt::MeshDesc meshDesc;
    meshDesc.linkBytesPerCycle = mesh->number("link_bytes_per_cycle");
    meshDesc.hopLatencyCycles = mesh->integer("hop_latency_cycles");
    result.mesh = meshDesc;
  }
  if (auto offChip =
          chip.optionalObject("offchip", {"bytes", "bytes_per_second"})) {
    rt::OffChipMemoryDesc offChipDesc;
    offChipDesc.bytes = offChip->integer("bytes");
    offChipDesc.bytesPerSecond = offChip->number("bytes_per_second");
    result.offChip = offChipDesc;
  }
  return result;
}

rt::SystemDesc readSystem(const ObjectReader &root) {
  ObjectReader system =
      root.object("system", {"chips", "chips_per_node", "nodes_per_rack",
                             "links", "scale_out", "power_watts_per_chip"});
  rt::SystemDesc result;
  result.chips = system.integer("chips");
  result.chipsPerNode = system.integer("chips_per_node");
  result.nodesPerRack = system.integer("nodes_per_rack");
  result.powerWattsPerChip = system.number("power_watts_per_chip");

  ObjectReader links =
      system.object("links", {"per_chip", "bytes_per_second", "latency_seconds",
                              "sync_seconds", "topology", "domain_chips",
                              "routing"});
  result.links.perChip = links.integer("per_chip");
  result.links.bytesPerSecond = links.number("bytes_per_second");
  result.links.latencySeconds = links.number("latency_seconds");
  result.links.syncSeconds = links.optionalNumber("sync_seconds").value_or(0);
  std::string topologyName = links.string("topology");
  std::optional<Topology> topology = rt::parseTopology(topologyName);
  if (!topology) {
    fail(join(links.path(), "topology"),
         "unknown topology '" + topologyName +
             "' (expected one of: none, ring, torus2d, fully_connected, "
             "dragonfly, switch)");
  }
  result.links.topology = *topology;
  result.links.domainChips =
      links.optionalInteger("domain_chips").value_or(result.chips);
  std::string routing = links.optionalString("routing", "minimal");
  if (routing != "minimal" && routing != "adaptive") {
    fail(join(links.path(), "routing"),
         "unknown routing '" + routing + "' (expected minimal or adaptive)");
  }
  result.links.adaptiveRouting = routing == "adaptive";

  if (auto scaleOut = system.optionalObject(
          "scale_out", {"bytes_per_second", "latency_seconds"})) {
    rt::ScaleOutDesc scaleOutDesc;
    scaleOutDesc.bytesPerSecond = scaleOut->number("bytes_per_second");
    scaleOutDesc.latencySeconds = scaleOut->number("latency_seconds");
    result.scaleOut = scaleOutDesc;
  }
  return result;
}

std::string formatNumber(double value);

/// A fraction of a peak: in (0, 1], and at least a thousandth (efficiencies
/// divide peak rates: a smaller one is a typo, and stretches cycle counts
/// past any bound).
void requireFraction(double value, const std::string &path) {
  if (!(value > 0 && value <= 1)) {
    fail(path, "must be a fraction in (0, 1], got " + formatNumber(value));
  }
  if (value < 1e-3) {
    fail(path, "out of range: must be at least 0.001, got " +
                   formatNumber(value));
  }
}

std::optional<rt::EfficiencyDesc> readEfficiency(const ObjectReader &root) {
  std::optional<ObjectReader> efficiency =
      root.optionalObject("efficiency",
                          {"matrix", "matrix_half_rows", "memory", "links"});
  if (!efficiency) {
    return std::nullopt;
  }
  rt::EfficiencyDesc result;
  forEachFormat(*efficiency, "matrix",
                [&](NumericFormat format, const json &value,
                    const std::string &path) {
                  double fraction = ObjectReader::asNumber(value, path);
                  requireFraction(fraction, path);
                  result.matrix[static_cast<size_t>(format)] = fraction;
                });
  if (efficiency->find("matrix_half_rows")) {
    forEachFormat(*efficiency, "matrix_half_rows",
                  [&](NumericFormat format, const json &value,
                      const std::string &path) {
                    result.matrixHalfRows[static_cast<size_t>(format)] =
                        ObjectReader::asNumber(value, path);
                  });
  }
  result.memory = efficiency->number("memory");
  result.links = efficiency->number("links");
  return result;
}

TargetDesc readTarget(const json &document) {
  ObjectReader root(document, "",
                    {"name", "description", "chip", "system", "efficiency",
                     "default_precision"});
  TargetDesc result;
  result.name = root.string("name");
  result.description = root.optionalString("description", "");
  result.chip = readChip(root, result.name);
  result.system = readSystem(root);
  result.efficiency = readEfficiency(root);
  result.defaultPrecision = root.optionalString("default_precision", "");
  return result;
}

//===----------------------------------------------------------------------===//
// Value checks on TargetDesc
//===----------------------------------------------------------------------===//

void requirePositive(int64_t value, const std::string &path) {
  if (value <= 0) {
    fail(path, "must be positive, got " + std::to_string(value));
  }
}

std::string formatNumber(double value) {
  std::ostringstream stream;
  stream << value;
  return stream.str();
}

void requirePositive(double value, const std::string &path) {
  if (!std::isfinite(value)) {
    fail(path, "must be a finite number");
  }
  if (value <= 0) {
    fail(path, "must be positive, got " + formatNumber(value));
  }
}

void requireNonNegative(int64_t value, const std::string &path) {
  if (value < 0) {
    fail(path, "must not be negative, got " + std::to_string(value));
  }
}

void requireNonNegative(double value, const std::string &path) {
  if (!std::isfinite(value)) {
    fail(path, "must be a finite number");
  }
  if (value < 0) {
    fail(path, "must not be negative, got " + formatNumber(value));
  }
}

/// Counts and sizes are capped so every derived product fits in an int64.
constexpr int64_t kMaxCount = int64_t(1) << 24;

void requireAtMost(int64_t value, int64_t limit, const std::string &path) {
  if (value > limit) {
    fail(path, "out of range: must be at most " + std::to_string(limit) +
                   ", got " + std::to_string(value));
  }
}

/// Upper bounds far beyond any real hardware: a figure past them is a typo or
/// a hostile file, and would overflow the cycle counts derived from it.
constexpr double kMaxClockHz = 1e12;
constexpr double kMaxBytesPerCycle = 1e12;
constexpr double kMaxBytesPerSecond = 1e18;
constexpr double kMaxLatencySeconds = 1;
constexpr double kMaxWatts = 1e6;
constexpr int64_t kMaxLatencyCycles = int64_t(1) << 32;

void requireAtMost(double value, double limit, const std::string &path) {
  if (value > limit) {
    fail(path, "out of range: must be at most " + formatNumber(limit) +
                   ", got " + formatNumber(value));
  }
}

/// Lower bounds below any real hardware, for the same reason: a rate of
/// 1e-9 bytes/s makes every transfer's cycle count overflow. On-chip rates
/// are at least a byte a cycle; a chip-to-chip, off-chip or scale-out rate
/// is at least kMinBytesPerCycle of the chip's clock (1 MB/s at 1 GHz).
constexpr double kMinClockHz = 1e6;
constexpr double kMinOnChipBytesPerCycle = 1;
constexpr double kMinBytesPerCycle = 1e-3;
constexpr double kMinWatts = 1e-3;

void requireAtLeast(double value, double limit, const std::string &path,
                    const std::string &unit = "") {
  if (!(value >= limit)) {
    fail(path, "out of range: must be at least " + formatNumber(limit) + unit +
                   ", got " + formatNumber(value));
  }
}

/// A rate in bytes per second against the chip clock: at least
/// kMinBytesPerCycle bytes a cycle.
void requireOffChipRate(double bytesPerSecond, double clockHz,
                        const std::string &path) {
  requireAtLeast(bytesPerSecond, kMinBytesPerCycle * clockHz, path,
                 " bytes/s (" + formatNumber(kMinBytesPerCycle) +
                     " bytes a cycle of chip.clock_hz)");
}

void validateChip(const rt::ChipDesc &chip) {
  requirePositive(chip.clockHz, "chip.clock_hz");
  requireAtLeast(chip.clockHz, kMinClockHz, "chip.clock_hz", " Hz");
  requireAtMost(chip.clockHz, kMaxClockHz, "chip.clock_hz");
  requirePositive(chip.tileRows, "chip.tiles.rows");
  requirePositive(chip.tileCols, "chip.tiles.cols");
  requireAtMost(chip.tileRows, kMaxCount, "chip.tiles.rows");
  requireAtMost(chip.tileCols, kMaxCount, "chip.tiles.cols");
  if (chip.tileRows * chip.tileCols > kMaxCount) {
    fail("chip.tiles",
         "out of range: more than " + std::to_string(kMaxCount) + " tiles");
  }

  const rt::MatrixUnitDesc &matrix = chip.tile.matrix;
  bool any = false;
  for (NumericFormat format : rt::kAllNumericFormats) {
    int64_t macs = matrix.macs(format);
    std::string path = std::string("chip.tile.matrix.macs_per_cycle.") +
                       rt::numericFormatName(format);
    requireNonNegative(macs, path);
    requireAtMost(macs, int64_t(1) << 40, path);
    any |= macs > 0;
  }
  if (!any) {
    fail("chip.tile.matrix.macs_per_cycle",
         "inconsistent: must name at least one numeric format");
  }
  requirePositive(matrix.blockM, "chip.tile.matrix.block.m");
  requirePositive(matrix.blockN, "chip.tile.matrix.block.n");
  requirePositive(matrix.blockK, "chip.tile.matrix.block.k");
  requireAtMost(matrix.blockM, kMaxCount, "chip.tile.matrix.block.m");
  requireAtMost(matrix.blockN, kMaxCount, "chip.tile.matrix.block.n");
  requireAtMost(matrix.blockK, kMaxCount, "chip.tile.matrix.block.k");
  requireNonNegative(matrix.latencyCycles, "chip.tile.matrix.latency_cycles");
  requireAtMost(matrix.latencyCycles, kMaxLatencyCycles,
                "chip.tile.matrix.latency_cycles");
  if (matrix.weightLoadBytesPerCycle != 0) { // 0 or absent: not modelled
    requireAtLeast(matrix.weightLoadBytesPerCycle, kMinOnChipBytesPerCycle,
                   "chip.tile.matrix.weight_load_bytes_per_cycle");
    requireAtMost(matrix.weightLoadBytesPerCycle, kMaxBytesPerCycle,
                  "chip.tile.matrix.weight_load_bytes_per_cycle");
  }

  requirePositive(chip.tile.vector.lanes, "chip.tile.vector.lanes");
  requireAtMost(chip.tile.vector.lanes, int64_t(1) << 40,
                "chip.tile.vector.lanes");
  requireNonNegative(chip.tile.vector.latencyCycles,
                     "chip.tile.vector.latency_cycles");
  requireAtMost(chip.tile.vector.latencyCycles, kMaxLatencyCycles,
                "chip.tile.vector.latency_cycles");
  requirePositive(chip.tile.sram.bytes, "chip.tile.sram.bytes");
  requireAtMost(chip.tile.sram.bytes, int64_t(1) << 50, "chip.tile.sram.bytes");
  requirePositive(chip.tile.sram.bytesPerCycle,
                  "chip.tile.sram.bytes_per_cycle");
  requireAtLeast(chip.tile.sram.bytesPerCycle, kMinOnChipBytesPerCycle,
                 "chip.tile.sram.bytes_per_cycle");
  requireAtMost(chip.tile.sram.bytesPerCycle, kMaxBytesPerCycle,
                "chip.tile.sram.bytes_per_cycle");

  // The matrix unit holds one K x N block of the stationary operand; it must
  // fit in the tile's SRAM in the widest format the unit runs.
  double widestBytes = 0;
  for (NumericFormat format : rt::kAllNumericFormats) {
    if (matrix.macs(format) > 0) {
      widestBytes = std::max(widestBytes, rt::numericFormatBytes(format));
    }
  }
  double blockBytes =
      double(matrix.blockK) * double(matrix.blockN) * widestBytes;
  if (blockBytes > double(chip.tile.sram.bytes)) {
    fail("chip.tile.matrix.block",
         "inconsistent: a " + std::to_string(matrix.blockK) + " x " +
             std::to_string(matrix.blockN) + " block (" +
             formatNumber(blockBytes) +
             " bytes) does not fit in chip.tile.sram.bytes (" +
             std::to_string(chip.tile.sram.bytes) + ")");
  }

  if (chip.mesh) {
    requirePositive(chip.mesh->linkBytesPerCycle,
                    "chip.mesh.link_bytes_per_cycle");
    requireAtLeast(chip.mesh->linkBytesPerCycle, kMinOnChipBytesPerCycle,
                   "chip.mesh.link_bytes_per_cycle");
    requireAtMost(chip.mesh->linkBytesPerCycle, kMaxBytesPerCycle,
                  "chip.mesh.link_bytes_per_cycle");
    requireNonNegative(chip.mesh->hopLatencyCycles,
                       "chip.mesh.hop_latency_cycles");
    requireAtMost(chip.mesh->hopLatencyCycles, kMaxLatencyCycles,
                  "chip.mesh.hop_latency_cycles");
  } else if (chip.tileRows * chip.tileCols > 1) {
    fail("chip.mesh",
         "inconsistent: required when the chip has more than one tile (" +
             std::to_string(chip.tileRows) + " x " +
             std::to_string(chip.tileCols) + ")");
  }
  if (chip.offChip) {
    requirePositive(chip.offChip->bytes, "chip.offchip.bytes");
    requireAtMost(chip.offChip->bytes, int64_t(1) << 60, "chip.offchip.bytes");
    requirePositive(chip.offChip->bytesPerSecond,
                    "chip.offchip.bytes_per_second");
    requireOffChipRate(chip.offChip->bytesPerSecond, chip.clockHz,
                       "chip.offchip.bytes_per_second");
    requireAtMost(chip.offChip->bytesPerSecond, kMaxBytesPerSecond,
                  "chip.offchip.bytes_per_second");
  }
}

void validateSystem(const rt::SystemDesc &system, double clockHz) {
  requirePositive(system.chips, "system.chips");
  requirePositive(system.chipsPerNode, "system.chips_per_node");
  requirePositive(system.nodesPerRack, "system.nodes_per_rack");
  requireAtMost(system.chips, kMaxCount, "system.chips");
  requireAtMost(system.chipsPerNode, kMaxCount, "system.chips_per_node");
  requireAtMost(system.nodesPerRack, kMaxCount, "system.nodes_per_rack");
  requirePositive(system.powerWattsPerChip, "system.power_watts_per_chip");
  requireAtLeast(system.powerWattsPerChip, kMinWatts,
                 "system.power_watts_per_chip", " W");
  requireAtMost(system.powerWattsPerChip, kMaxWatts,
                "system.power_watts_per_chip");

  if (system.chips % system.chipsPerNode != 0) {
    fail("system.chips", "inconsistent: " + std::to_string(system.chips) +
                             " chips is not a whole number of nodes of " +
                             std::to_string(system.chipsPerNode) +
                             " (system.chips_per_node)");
  }
  int64_t chipsPerRack = system.chipsPerNode * system.nodesPerRack;
  if (system.chips > chipsPerRack && system.chips % chipsPerRack != 0) {
    fail("system.chips",
         "inconsistent: " + std::to_string(system.chips) +
             " chips span more than one rack but are not a whole number of "
             "racks of " +
             std::to_string(chipsPerRack) +
             " (chips_per_node x nodes_per_rack)");
  }

  const rt::ChipLinkDesc &links = system.links;
  requirePositive(links.perChip, "system.links.per_chip");
  requireAtMost(links.perChip, kMaxCount, "system.links.per_chip");
  requirePositive(links.bytesPerSecond, "system.links.bytes_per_second");
  requireOffChipRate(links.bytesPerSecond, clockHz,
                     "system.links.bytes_per_second");
  requireAtMost(links.bytesPerSecond, kMaxBytesPerSecond,
                "system.links.bytes_per_second");
  requireNonNegative(links.latencySeconds, "system.links.latency_seconds");
  requireAtMost(links.latencySeconds, kMaxLatencySeconds,
                "system.links.latency_seconds");
  requireNonNegative(links.syncSeconds, "system.links.sync_seconds");
  requireAtMost(links.syncSeconds, kMaxLatencySeconds,
                "system.links.sync_seconds");
  requirePositive(links.domainChips, "system.links.domain_chips");
  if (links.domainChips > system.chips ||
      system.chips % links.domainChips != 0) {
    fail("system.links.domain_chips",
         "inconsistent: " + std::to_string(links.domainChips) +
             " does not divide system.chips (" + std::to_string(system.chips) +
             ")");
  }
  switch (links.topology) {
  case Topology::None:
    if (system.chips != 1) {
      fail("system.links.topology",
           "inconsistent: 'none' requires system.chips to be 1, got " +
               std::to_string(system.chips));
    }
    break;
  case Topology::Ring:
    if (links.domainChips > 1 && links.perChip < 2) {
      fail("system.links.per_chip",
           "inconsistent: a ring needs at least 2 links per chip, got " +
               std::to_string(links.perChip));
    }
    break;
  case Topology::Torus2D:
    if (links.domainChips > 1 && links.perChip < 4) {
      fail("system.links.per_chip",
           "inconsistent: a 2-D torus needs at least 4 links per chip, got " +
               std::to_string(links.perChip));
    }
    break;
  case Topology::FullyConnected:
    if (links.perChip < links.domainChips - 1) {
      fail("system.links.per_chip",
           "inconsistent: fully connecting " +
               std::to_string(links.domainChips) + " chips needs at least " +
               std::to_string(links.domainChips - 1) + " links per chip, got " +
               std::to_string(links.perChip));
    }
    break;
  case Topology::Dragonfly:
  case Topology::Switch:
    break;
  }
  if (links.adaptiveRouting && links.topology != Topology::Dragonfly) {
    fail("system.links.routing",
         std::string("inconsistent: adaptive routing is modelled for the "
                     "dragonfly only, got topology '") +
             rt::topologyName(links.topology) + "'");
  }

  if (system.scaleOut) {
    requirePositive(system.scaleOut->bytesPerSecond,
                    "system.scale_out.bytes_per_second");
    requireOffChipRate(system.scaleOut->bytesPerSecond, clockHz,
                       "system.scale_out.bytes_per_second");
    requireAtMost(system.scaleOut->bytesPerSecond, kMaxBytesPerSecond,
                  "system.scale_out.bytes_per_second");
    requireNonNegative(system.scaleOut->latencySeconds,
                       "system.scale_out.latency_seconds");
    requireAtMost(system.scaleOut->latencySeconds, kMaxLatencySeconds,
                  "system.scale_out.latency_seconds");
  } else if (links.domainChips < system.chips) {
    fail("system.scale_out",
         "inconsistent: required when system.links.domain_chips (" +
             std::to_string(links.domainChips) +
             ") is less than system.chips (" + std::to_string(system.chips) +
             ")");
  }
}

void validateEfficiency(const rt::EfficiencyDesc &efficiency,
                        const rt::MatrixUnitDesc &matrix) {
  for (NumericFormat format : rt::kAllNumericFormats) {
    const std::string name = rt::numericFormatName(format);
    const std::string path = "efficiency.matrix." + name,
                      halfPath = "efficiency.matrix_half_rows." + name;
    const double fraction = efficiency.matrix[static_cast<size_t>(format)];
    const double rows = efficiency.matrixHalfRows[static_cast<size_t>(format)];
    if (!(rows >= 0 && rows <= 1e9)) {
      fail(halfPath,
           "must be a row count in [0, 1e9], got " + formatNumber(rows));
    }
    if (matrix.macs(format) > 0) {
      if (fraction == 0) {
        fail(path, "missing: the matrix unit runs " + name +
                       " (chip.tile.matrix.macs_per_cycle), so its "
                       "efficiency is required");
      }
      requireFraction(fraction, path);
      continue;
    }
    // A format the matrix unit does not run states neither.
    for (const auto &[value, at] : {std::pair{fraction, path},
                                    std::pair{rows, halfPath}}) {
      if (value != 0) {
        fail(at, "inconsistent: the matrix unit does not run " + name +
                     " (not in chip.tile.matrix.macs_per_cycle)");
      }
    }
  }
  requireFraction(efficiency.memory, "efficiency.memory");
  requireFraction(efficiency.links, "efficiency.links");
}

void validateDesc(const TargetDesc &desc) {
  if (desc.name.empty()) {
    fail("name", "must not be empty");
  }
  validateChip(desc.chip);
  validateSystem(desc.system, desc.chip.clockHz);
  if (desc.efficiency) {
    validateEfficiency(*desc.efficiency, desc.chip.tile.matrix);
  }
  if (!desc.defaultPrecision.empty()) {
    std::optional<NumericFormat> format =
        rt::kernelPrecisionFormat(desc.defaultPrecision);
    if (!format) {
      fail("default_precision", "unknown precision '" +
                                    desc.defaultPrecision + "' (expected " +
                                    rt::kKernelPrecisions + ")");
    }
    if (desc.chip.tile.matrix.macs(*format) <= 0) {
      fail("default_precision",
           "inconsistent: the matrix unit does not run " +
               desc.defaultPrecision +
               " (chip.tile.matrix.macs_per_cycle names its formats)");
    }
  }
}

/// Deeper than any target description nests (4 levels); the limit keeps a
/// hostile file from costing time and memory quadratic in its depth.
constexpr int kMaxJsonDepth = 64;

/// Rejects duplicate keys, which nlohmann would otherwise silently resolve
/// to the last value, and nesting deeper than kMaxJsonDepth.
class DuplicateKeyChecker {
public:
  bool operator()(int depth, json::parse_event_t event, json &parsed) {
    switch (event) {
    case json::parse_event_t::object_start:
    case json::parse_event_t::array_start:
      if (depth >= kMaxJsonDepth) {
        fail(childPath(), "nested more than " + std::to_string(kMaxJsonDepth) +
                              " levels deep");
      }
      frames_.push_back(
          {{}, childPath(), "", event == json::parse_event_t::array_start});
      break;
    case json::parse_event_t::object_end:
    case json::parse_event_t::array_end:
      if (!frames_.empty()) {
        frames_.pop_back();
      }
      break;
    case json::parse_event_t::key: {
      Frame &frame = frames_.back();
      std::string key = parsed.get<std::string>();
      if (!frame.keys.insert(key).second) {
        fail(join(frame.path, key), "duplicate key");
      }
      frame.lastKey = key;
      break;
    }
    case json::parse_event_t::value:
      break;
    }
    return true;
  }

private:
  struct Frame {
    std::set<std::string> keys;
    std::string path;
    std::string lastKey;
    bool isArray = false;
  };

  std::string childPath() const {
    if (frames_.empty()) {
      return "";
    }
    const Frame &parent = frames_.back();
    if (parent.isArray) {
      return parent.path + "[]";
    }
    return join(parent.path, parent.lastKey);
  }

  std::vector<Frame> frames_;
};

/// "<file>: <json.path>: <problem>" on one line: keys and values quoted in
/// it may hold escaped line breaks, which become spaces (other control
/// characters '?').
std::string formatError(std::string_view fileLabel, const std::string &path,
                        const std::string &problem) {
  std::string text = std::string(fileLabel) + ": " +
                     ObjectReader::displayPath(path) + ": " + problem;
  for (char &c : text) {
    if (c == '\n' || c == '\r') {
      c = ' ';
    } else if (static_cast<unsigned char>(c) < 0x20) {
      c = '?';
    }
  }
  return text;
}

} // namespace

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

std::optional<TargetModel> TargetModel::parse(std::string_view jsonText,
                                              std::string_view fileLabel,
                                              std::string &error) {
  try {
    json document;
    try {
      DuplicateKeyChecker checker;
      document = json::parse(
          jsonText.begin(), jsonText.end(),
          [&checker](int depth, json::parse_event_t event, json &parsed) {
            return checker(depth, event, parsed);
          });
    } catch (const json::exception &parseError) {
      // nlohmann's message is "[json.exception.parse_error.101] parse error
      // at line L, column C: ..." (or out_of_range.406 for a number that
      // overflows a double); keep the part after the id.
      std::string message = parseError.what();
      if (size_t pos = message.find("] "); pos != std::string::npos) {
        message = message.substr(pos + 2);
      }
      std::replace(message.begin(), message.end(), '\n', ' ');
      error = std::string(fileLabel) + ": (json): invalid JSON: " + message;
      return std::nullopt;
    }
    TargetDesc desc = readTarget(document);
    validateDesc(desc);
    return TargetModel(std::move(desc));
  } catch (const ValidationError &validationError) {
    error =
        formatError(fileLabel, validationError.path, validationError.problem);
  } catch (const std::exception &exception) {
    error = formatError(fileLabel, "", exception.what());
  }
  return std::nullopt;
}

std::optional<TargetModel> TargetModel::fromDesc(TargetDesc desc,
                                                 std::string &error) {
  try {
    validateDesc(desc);
  } catch (const ValidationError &validationError) {
    error = formatError(desc.name.empty() ? "(target)" : desc.name,
                        validationError.path, validationError.problem);
    return std::nullopt;
  }
  return TargetModel(std::move(desc));
}

std::optional<TargetModel> TargetModel::loadFile(const std::string &path,
                                                 std::string &error) {
  std::error_code errorCode;
  if (std::filesystem::is_directory(path, errorCode)) {
    error = path + ": (file): is a directory, not a target JSON file";
    return std::nullopt;
  }
  if (!std::filesystem::exists(path, errorCode)) {
    error = path + ": (file): cannot open: No such file or directory";
    return std::nullopt;
  }
  std::ifstream stream(path, std::ios::binary);
  if (!stream) {
    error = path + ": (file): cannot open: permission denied or unreadable";
    return std::nullopt;
  }
  std::ostringstream contents;
  contents << stream.rdbuf();
  return parse(contents.str(), path, error);
}

std::string TargetModel::fileText(const std::string &nameOrPath) {
  std::string path = nameOrPath;
  if (isPresetName(nameOrPath))
    path = presetsDir() + "/" + nameOrPath + ".json";
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::string();
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string TargetModel::presetsDir() {
  if (const char *fromEnv = std::getenv("LOOM_TARGETS_DIR");
      fromEnv && *fromEnv) {
    return fromEnv;
  }
#ifdef LOOM_SOURCE_TARGETS_DIR
  return LOOM_SOURCE_TARGETS_DIR;
#else
  return "targets";
#endif
}

std::vector<std::string> TargetModel::presetNames() {
  std::vector<std::string> names;
  std::error_code errorCode;
  std::filesystem::directory_iterator it(presetsDir(), errorCode);
  if (errorCode) {
    return names;
  }
  for (const auto &entry : it) {
    std::filesystem::path file = entry.path();
    if (file.extension() == ".json" && isPresetName(file.stem().string())) {
      names.push_back(file.stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool TargetModel::isPresetName(std::string_view nameOrPath) {
  if (nameOrPath.empty()) {
    return false;
  }
  return std::all_of(nameOrPath.begin(), nameOrPath.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

std::optional<TargetModel> TargetModel::load(const std::string &nameOrPath,
                                             std::string &error) {
  if (!isPresetName(nameOrPath)) {
    return loadFile(nameOrPath, error);
  }
  std::filesystem::path preset =
      std::filesystem::path(presetsDir()) / (nameOrPath + ".json");
  std::error_code errorCode;
  if (std::filesystem::is_regular_file(preset, errorCode)) {
    return loadFile(preset.string(), error);
  }
  std::string known;
  for (const std::string &name : presetNames()) {
    known += (known.empty() ? "" : ", ") + name;
  }
  error =
      nameOrPath + ": (target): unknown target preset (known: " +
      (known.empty() ? std::string("none found in ") + presetsDir() : known) +
      "); give a path to a .json file for a custom target";
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Derived figures
//===----------------------------------------------------------------------===//

double TargetModel::peakMatrixFlopsPerChip(NumericFormat format) const {
  return 2.0 * double(matrixMacsPerCycle(format)) * double(tilesPerChip()) *
         clockHz();
}

double TargetModel::peakVectorOpsPerChip() const {
  return double(desc_.chip.tile.vector.lanes) * double(tilesPerChip()) *
         clockHz();
}

double TargetModel::peakFlopsPerChip(NumericFormat format) const {
  if (matrixSupports(format)) {
    return peakMatrixFlopsPerChip(format);
  }
  // One multiply-accumulate (two FLOPs) per lane per cycle.
  return 2.0 * peakVectorOpsPerChip();
}

double TargetModel::sramBytesPerSecondPerChip() const {
  return desc_.chip.tile.sram.bytesPerCycle * double(tilesPerChip()) *
         clockHz();
}

double TargetModel::meshLinkBytesPerSecond() const {
  if (!hasMesh()) {
    return 0;
  }
  return desc_.chip.mesh->linkBytesPerCycle * clockHz();
}

double TargetModel::meshBisectionBytesPerSecond() const {
  if (!hasMesh() || tilesPerChip() < 2) {
    return 0;
  }
  // A cut between two columns crosses one link per row; a cut between two
  // rows crosses one per column. The bisection is the narrower of the cuts
  // that exist, counted in both directions.
  int64_t links = INT64_MAX;
  if (tileCols() >= 2) {
    links = std::min(links, tileRows());
  }
  if (tileRows() >= 2) {
    links = std::min(links, tileCols());
  }
  return 2.0 * double(links) * meshLinkBytesPerSecond();
}

int64_t TargetModel::offChipBytesPerChip() const {
  return hasOffChipMemory() ? desc_.chip.offChip->bytes : 0;
}

double TargetModel::offChipBytesPerSecondPerChip() const {
  return hasOffChipMemory() ? desc_.chip.offChip->bytesPerSecond : 0;
}

double TargetModel::chipLinkBytesPerSecondPerChip() const {
  return double(desc_.system.links.perChip) * desc_.system.links.bytesPerSecond;
}

rt::EfficiencyDesc TargetModel::efficiency() const {
  if (desc_.efficiency) {
    return *desc_.efficiency;
  }
  rt::EfficiencyDesc defaults;
  bool gpu = hasOffChipMemory();
  for (NumericFormat format : rt::kAllNumericFormats) {
    if (matrixSupports(format)) {
      defaults.matrix[static_cast<size_t>(format)] =
          !gpu ? 0.9 : format == NumericFormat::F4 ? 0.4 : 0.6;
    }
  }
  defaults.memory = gpu ? 0.75 : 0.9;
  defaults.links = gpu ? 0.7 : 1.0;
  return defaults;
}

double TargetModel::matrixEfficiency(NumericFormat format) const {
  rt::EfficiencyDesc e = efficiency();
  double own = e.matrix[static_cast<size_t>(format)];
  return own > 0 ? own : *std::max_element(e.matrix.begin(), e.matrix.end());
}

double TargetModel::matrixHalfRows(NumericFormat format) const {
  return matrixSupports(format)
             ? efficiency().matrixHalfRows[static_cast<size_t>(format)]
             : 0;
}

std::vector<DerivedFigure> TargetModel::derivedFigures() const {
  std::vector<DerivedFigure> figures;
  auto add = [&figures](std::string key, double value, std::string unit) {
    figures.push_back({std::move(key), value, std::move(unit)});
  };
  // Per-chip figures, then totals for a rack and for the whole system.
  add("chip.tiles", double(tilesPerChip()), "tiles");
  add("chip.clock_hz", clockHz(), "Hz");
  for (NumericFormat format : rt::kAllNumericFormats) {
    if (matrixSupports(format)) {
      add(std::string("chip.peak_flops.") + rt::numericFormatName(format),
          peakMatrixFlopsPerChip(format), "FLOP/s");
    }
  }
  add("chip.vector_ops_per_second", peakVectorOpsPerChip(), "op/s");
  add("chip.sram_bytes", double(sramBytesPerChip()), "B");
  add("chip.sram_bytes_per_second", sramBytesPerSecondPerChip(), "B/s");
  if (hasMesh()) {
    add("chip.mesh_link_bytes_per_second", meshLinkBytesPerSecond(), "B/s");
    add("chip.mesh_bisection_bytes_per_second", meshBisectionBytesPerSecond(),
        "B/s");
  }
  if (hasOffChipMemory()) {
    add("chip.offchip_bytes", double(offChipBytesPerChip()), "B");
    add("chip.offchip_bytes_per_second", offChipBytesPerSecondPerChip(), "B/s");
  }
  add("chip.c2c_links", double(desc_.system.links.perChip), "links");
  add("chip.c2c_bytes_per_second", chipLinkBytesPerSecondPerChip(), "B/s");
  add("chip.c2c_bidirectional_bytes_per_second",
      2.0 * chipLinkBytesPerSecondPerChip(), "B/s");
  add("chip.power_watts", powerWattsPerChip(), "W");

  auto addTotals = [&](const std::string &scope, int64_t chipCount) {
    double count = double(chipCount);
    add(scope + ".chips", count, "chips");
    for (NumericFormat format : rt::kAllNumericFormats) {
      if (matrixSupports(format)) {
        add(scope + ".peak_flops." + rt::numericFormatName(format),
            count * peakMatrixFlopsPerChip(format), "FLOP/s");
      }
    }
    add(scope + ".sram_bytes", count * double(sramBytesPerChip()), "B");
    add(scope + ".sram_bytes_per_second", count * sramBytesPerSecondPerChip(),
        "B/s");
    if (hasOffChipMemory()) {
      add(scope + ".offchip_bytes", count * double(offChipBytesPerChip()), "B");
      add(scope + ".offchip_bytes_per_second",
          count * offChipBytesPerSecondPerChip(), "B/s");
    }
    add(scope + ".c2c_bidirectional_bytes_per_second",
        count * 2.0 * chipLinkBytesPerSecondPerChip(), "B/s");
    add(scope + ".power_watts", count * powerWattsPerChip(), "W");
  };
  addTotals("rack", chipsPerRack());
  addTotals("system", chips());
  add("system.nodes", double(chips() / chipsPerNode()), "nodes");
  add("system.racks", double((chips() + chipsPerRack() - 1) / chipsPerRack()),
      "racks");
  add("system.link_domain_chips", double(linkDomainChips()), "chips");
  return figures;
}

std::optional<double> TargetModel::derivedFigure(std::string_view key) const {
  for (const DerivedFigure &figure : derivedFigures()) {
    if (figure.key == key) {
      return figure.value;
    }
  }
  return std::nullopt;
}

int64_t TargetModel::cyclesCeil(double seconds, double hz) {
  double cycles = seconds * hz;
  double nearest = std::round(cycles);
  if (std::abs(cycles - nearest) <= 1e-9 * std::max(1.0, nearest))
    return static_cast<int64_t>(nearest);
  return static_cast<int64_t>(std::ceil(cycles));
}

} // namespace loom
