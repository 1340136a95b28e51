//===- TargetCommand.cpp - `loom target list|show` ------------------------===//
//
// Prints a target's derived figures (peak FLOP/s per format, SRAM capacity
// and bandwidth, mesh bisection, chip-to-chip bandwidth, per-chip, per-rack
// and per-system totals) so a user can check a description against the
// figures its vendor publishes.
//
//===----------------------------------------------------------------------===//

#include "loom/Tools/TargetCommand.h"

#include "loom/Target/TargetModel.h"

#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace loom {
namespace {

const char *const kUsage =
    "usage: loom target list | loom target show NAME|FILE.json [--json]";

int usageError(const std::string &problem) {
  std::fprintf(stderr, "loom: target: %s (%s)\n", problem.c_str(), kUsage);
  return 1;
}

/// 1234.5e12 -> "1.234 P" style, three significant decimals.
std::string withSiPrefix(double value) {
  static const char *const prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int index = 0;
  double scaled = value;
  while (std::fabs(scaled) >= 1000.0 && index < 6) {
    scaled /= 1000.0;
    ++index;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.3f %s", scaled, prefixes[index]);
  return buffer;
}

std::string withBinaryPrefix(double value) {
  static const char *const prefixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
  int index = 0;
  double scaled = value;
  while (std::fabs(scaled) >= 1024.0 && index < 5) {
    scaled /= 1024.0;
    ++index;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.3f %s", scaled, prefixes[index]);
  return buffer;
}

std::string formatFigure(const DerivedFigure &figure) {
  const std::string &unit = figure.unit;
  if (unit == "B") {
    return withSiPrefix(figure.value) + "B (" + withBinaryPrefix(figure.value) +
           "B)";
  }
  if (unit == "FLOP/s" || unit == "B/s" || unit == "Hz" || unit == "op/s" ||
      unit == "W") {
    return withSiPrefix(figure.value) + unit;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.0f %s", figure.value, unit.c_str());
  return buffer;
}

std::string jsonEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
      out += buffer;
    } else {
      out += c;
    }
  }
  return out;
}

/// The planner's efficiency factors (TargetModel::efficiency) as
/// `(key, value)` pairs: `matrix.<format>` for each format the matrix
/// unit runs, `matrix_half_rows.<format>` for each that states one (rows,
/// not a fraction), then `memory` and `links`.
std::vector<std::pair<std::string, double>>
efficiencyFigures(const TargetModel &target) {
  rt::EfficiencyDesc e = target.efficiency();
  std::vector<std::pair<std::string, double>> out;
  for (NumericFormat format : rt::kAllNumericFormats) {
    if (double f = e.matrix[static_cast<size_t>(format)]; f > 0) {
      out.emplace_back(std::string("matrix.") + rt::numericFormatName(format),
                       f);
    }
  }
  for (NumericFormat format : rt::kAllNumericFormats) {
    if (double rows = e.matrixHalfRows[static_cast<size_t>(format)]; rows > 0) {
      out.emplace_back(
          std::string("matrix_half_rows.") + rt::numericFormatName(format),
          rows);
    }
  }
  out.emplace_back("memory", e.memory);
  out.emplace_back("links", e.links);
  return out;
}

void printJson(const TargetModel &target) {
  std::printf("{\n  \"name\": \"%s\",\n  \"description\": \"%s\",\n"
              "  \"figures\": {\n",
              jsonEscape(target.name()).c_str(),
              jsonEscape(target.desc().description).c_str());
  // One JSON object's members, `key: value` a line.
  auto members = [](const std::vector<std::pair<std::string, double>> &all) {
    for (size_t i = 0; i < all.size(); ++i) {
      std::printf("    \"%s\": %.17g%s\n", all[i].first.c_str(),
                  all[i].second, i + 1 == all.size() ? "" : ",");
    }
  };
  std::vector<std::pair<std::string, double>> figures;
  for (const DerivedFigure &figure : target.derivedFigures()) {
    figures.emplace_back(figure.key, figure.value);
  }
  members(figures);
  std::printf("  },\n  \"efficiency_from_file\": %s,\n  \"efficiency\": {\n",
              target.desc().efficiency ? "true" : "false");
  members(efficiencyFigures(target));
  std::printf("  }\n}\n");
}

void printText(const TargetModel &target, const std::string &source) {
  const TargetDesc &desc = target.desc();
  std::printf("target %s: %s\n", target.name().c_str(),
              desc.description.c_str());
  std::printf("  from %s\n", source.c_str());
  std::printf("chip %s: %lld x %lld tiles at %sHz, %s topology\n",
              desc.chip.name.c_str(), (long long)target.tileRows(),
              (long long)target.tileCols(),
              withSiPrefix(target.clockHz()).c_str(),
              rt::topologyName(target.topology()));
  std::string scope;
  for (const DerivedFigure &figure : target.derivedFigures()) {
    std::string figureScope = figure.key.substr(0, figure.key.find('.'));
    if (figureScope != scope) {
      scope = figureScope;
      if (scope == "rack") {
        std::printf("per rack (%lld chips):\n",
                    (long long)target.chipsPerRack());
      } else if (scope == "system") {
        std::printf("per system (%lld chips):\n", (long long)target.chips());
      } else {
        std::printf("per chip:\n");
      }
    }
    std::printf("  %-44s %s\n", figure.key.c_str(),
                formatFigure(figure).c_str());
  }
  std::printf("planner efficiency (fractions of peak, and the rows at which "
              "a matmul sustains half its fraction; %s):\n",
              target.desc().efficiency ? "from the file's \"efficiency\""
                                       : "defaults, the file has no "
                                         "\"efficiency\"");
  for (const auto &[key, value] : efficiencyFigures(target)) {
    std::printf("  %-44s %.3g\n", key.c_str(), value);
  }
}

int showTarget(const std::string &nameOrPath, bool asJson) {
  std::string error;
  std::optional<TargetModel> target = TargetModel::load(nameOrPath, error);
  if (!target) {
    std::fprintf(stderr, "loom: %s\n", error.c_str());
    return 1;
  }
  std::string source = nameOrPath;
  if (TargetModel::isPresetName(nameOrPath)) {
    source = TargetModel::presetsDir() + "/" + nameOrPath + ".json";
  }
  if (asJson) {
    printJson(*target);
  } else {
    printText(*target, source);
  }
  return 0;
}

int listTargets() {
  std::vector<std::string> names = TargetModel::presetNames();
  if (names.empty()) {
    std::fprintf(stderr, "loom: %s: no target presets found\n",
                 TargetModel::presetsDir().c_str());
    return 1;
  }
  int status = 0;
  for (const std::string &name : names) {
    std::string error;
    std::optional<TargetModel> target = TargetModel::load(name, error);
    if (!target) {
      std::fprintf(stderr, "loom: %s\n", error.c_str());
      status = 1;
      continue;
    }
    std::printf("%-12s %s\n", name.c_str(), target->desc().description.c_str());
  }
  return status;
}

} // namespace

int runTargetCommand(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    return usageError("missing subcommand");
  }
  const std::string &subcommand = args[0];
  if (subcommand == "-h" || subcommand == "--help") {
    std::printf("%s\n", kUsage);
    return 0;
  }
  if (subcommand == "list") {
    if (args.size() != 1) {
      return usageError("'list' takes no arguments");
    }
    return listTargets();
  }
  if (subcommand == "show") {
    bool asJson = false;
    std::string nameOrPath;
    for (size_t i = 1; i < args.size(); ++i) {
      if (args[i] == "--json") {
        asJson = true;
      } else if (!args[i].empty() && args[i][0] == '-' && args[i] != "-") {
        return usageError("unknown option '" + args[i] + "'");
      } else if (nameOrPath.empty()) {
        nameOrPath = args[i];
      } else {
        return usageError("'show' takes one target");
      }
    }
    if (nameOrPath.empty()) {
      return usageError("'show' needs a target name or file");
    }
    return showTarget(nameOrPath, asJson);
  }
  // A typo of a subcommand (two edits at most: a swapped pair is two) is
  // named.
  for (const char *known : {"list", "show"})
    if (llvm::StringRef(subcommand).edit_distance(known, true, 2) <= 2)
      return usageError("unknown subcommand '" + subcommand +
                        "' (did you mean '" + known + "'?)");
  return usageError("unknown subcommand '" + subcommand + "'");
}

} // namespace loom
