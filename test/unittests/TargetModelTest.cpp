//===- TargetModelTest.cpp - Target loading, validation, figures ----------===//

#include "loom/Target/TargetModel.h"

#include "TargetHelpers.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <unistd.h>

using namespace loom;
using loom::testing::loadTarget;
using json = nlohmann::json;

namespace {

std::string presetPath(const std::string &name) {
  return TargetModel::presetsDir() + "/" + name + ".json";
}

json readPresetJson(const std::string &name) {
  std::ifstream stream(presetPath(name));
  EXPECT_TRUE(stream.good()) << presetPath(name);
  return json::parse(stream);
}

/// The tiny preset's JSON, for mutation by the validation tests.
json tinyJson() { return readPresetJson("tiny"); }

/// Parses `document` and returns the error ("" if it loaded).
std::string loadError(const json &document) {
  std::string error;
  std::optional<TargetModel> target =
      TargetModel::parse(document.dump(), "t.json", error);
  if (target) {
    return "";
  }
  return error;
}

std::string loadTextError(std::string_view text) {
  std::string error;
  std::optional<TargetModel> target = TargetModel::parse(text, "t.json", error);
  return target ? "" : error;
}

const std::vector<std::string> kPresets = {
    "b200",     "gb200", "h100",   "h200",    "lp30",
    "lpx-rack", "tiny",  "tsp-v1", "wormhole"};

} // namespace

//===----------------------------------------------------------------------===//
// Presets
//===----------------------------------------------------------------------===//

TEST(TargetPresets, AllPresetsAreListedAndLoad) {
  std::vector<std::string> names = TargetModel::presetNames();
  for (const std::string &name : kPresets) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  for (const std::string &name : names) {
    std::string error;
    std::optional<TargetModel> target = TargetModel::load(name, error);
    ASSERT_TRUE(target) << error;
    EXPECT_EQ(target->name(), name);
    EXPECT_FALSE(target->desc().description.empty()) << name;
  }
}

// Every real preset cites the figures it was built from; each derived figure
// must be within 2% of the published one. The list of required keys keeps
// the test from passing because a citation was deleted.
TEST(TargetPresets, DerivedFiguresMatchPublishedFigures) {
  const std::map<std::string, std::set<std::string>> required = {
      {"tsp-v1",
       {"chip.peak_flops.int8", "chip.peak_flops.fp16", "chip.sram_bytes",
        "chip.sram_bytes_per_second", "chip.clock_hz", "chip.c2c_links",
        "chip.c2c_bidirectional_bytes_per_second", "rack.chips"}},
      {"lp30",
       {"chip.peak_flops.fp8", "chip.sram_bytes", "chip.sram_bytes_per_second",
        "chip.c2c_bidirectional_bytes_per_second"}},
      {"lpx-rack",
       {"chip.peak_flops.fp8", "chip.sram_bytes", "chip.sram_bytes_per_second",
        "rack.chips", "rack.peak_flops.fp8", "rack.sram_bytes",
        "rack.c2c_bidirectional_bytes_per_second"}},
      {"wormhole",
       {"chip.tiles", "chip.peak_flops.fp16", "chip.peak_flops.fp8",
        "chip.sram_bytes", "chip.offchip_bytes",
        "chip.offchip_bytes_per_second"}},
      {"h100",
       {"chip.peak_flops.fp16", "chip.peak_flops.bf16", "chip.peak_flops.tf32",
        "chip.peak_flops.fp8", "chip.peak_flops.int8", "chip.offchip_bytes",
        "chip.offchip_bytes_per_second",
        "chip.c2c_bidirectional_bytes_per_second", "system.link_domain_chips",
        "chip.power_watts"}},
      {"h200",
       {"chip.peak_flops.fp16", "chip.peak_flops.fp8", "chip.offchip_bytes",
        "chip.offchip_bytes_per_second",
        "chip.c2c_bidirectional_bytes_per_second", "system.link_domain_chips"}},
      {"b200",
       {"chip.peak_flops.fp16", "chip.peak_flops.tf32", "chip.peak_flops.fp8",
        "chip.peak_flops.int8", "chip.peak_flops.fp4", "chip.offchip_bytes",
        "chip.offchip_bytes_per_second",
        "chip.c2c_bidirectional_bytes_per_second", "system.link_domain_chips",
        "chip.power_watts"}},
      {"gb200",
       {"chip.peak_flops.fp16", "chip.peak_flops.tf32", "chip.peak_flops.fp8",
        "chip.peak_flops.int8", "chip.peak_flops.fp4", "chip.offchip_bytes",
        "chip.offchip_bytes_per_second",
        "chip.c2c_bidirectional_bytes_per_second", "system.link_domain_chips",
        "chip.power_watts"}},
  };
  for (const auto &[name, keys] : required) {
    SCOPED_TRACE(name);
    TargetModel target = loadTarget(name);
    json published = readPresetJson(name).at("_published");
    for (const std::string &key : keys) {
      EXPECT_TRUE(published.contains(key)) << "no published figure " << key;
    }
    for (const auto &[key, entry] : published.items()) {
      SCOPED_TRACE(key);
      ASSERT_TRUE(entry.contains("value") && entry.contains("source"));
      EXPECT_FALSE(entry.at("source").get<std::string>().empty());
      double expected = entry.at("value").get<double>();
      std::optional<double> derived = target.derivedFigure(key);
      ASSERT_TRUE(derived) << "no derived figure named " << key;
      EXPECT_LE(std::fabs(*derived - expected), 0.02 * expected)
          << "derived " << *derived << " vs published " << expected;
    }
  }
}

// The headline figures of the issue, spelled out so a change to a preset
// that drifts from them is caught even if its citation table moves along.
TEST(TargetPresets, HeadlineFigures) {
  auto near = [](const TargetModel &target, std::string_view key,
                 double expected) {
    std::optional<double> value = target.derivedFigure(key);
    ASSERT_TRUE(value) << key;
    EXPECT_NEAR(*value, expected, 0.02 * expected) << key;
  };
  TargetModel tsp = loadTarget("tsp-v1");
  near(tsp, "chip.sram_bytes", 220.0 * 1024 * 1024);
  near(tsp, "chip.sram_bytes_per_second", 80e12);
  near(tsp, "chip.peak_flops.fp16", 188e12);
  near(tsp, "chip.peak_flops.int8", 750e12);
  near(tsp, "chip.clock_hz", 900e6);
  near(tsp, "chip.c2c_links", 16);
  EXPECT_EQ(tsp.chipsPerNode(), 8);

  TargetModel lpx = loadTarget("lpx-rack");
  near(lpx, "chip.sram_bytes", 500e6);
  near(lpx, "chip.sram_bytes_per_second", 150e12);
  near(lpx, "chip.peak_flops.fp8", 1.23e15);
  EXPECT_EQ(lpx.chipsPerRack(), 256);

  TargetModel h100 = loadTarget("h100");
  near(h100, "chip.offchip_bytes_per_second", 3.35e12);
  near(h100, "chip.peak_flops.bf16", 989.4e12);
  EXPECT_EQ(h100.linkDomainChips(), 8);
  TargetModel h200 = loadTarget("h200");
  near(h200, "chip.offchip_bytes_per_second", 4.8e12);
  TargetModel b200 = loadTarget("b200");
  near(b200, "chip.peak_flops.fp8", 4.5e15);
  near(b200, "chip.offchip_bytes_per_second", 8e12);
  TargetModel gb200 = loadTarget("gb200");
  near(gb200, "chip.peak_flops.fp4", 10e15);
  EXPECT_EQ(gb200.linkDomainChips(), 72);
  EXPECT_EQ(gb200.chipsPerNode(), 72);

  TargetModel tiny = loadTarget("tiny");
  EXPECT_EQ(tiny.tileRows(), 4);
  EXPECT_EQ(tiny.tileCols(), 4);
}

// lpx-rack repeats lp30's chip section; they must not drift apart.
TEST(TargetPresets, LpxRackChipMatchesLp30) {
  json lp30 = readPresetJson("lp30");
  json lpx = readPresetJson("lpx-rack");
  EXPECT_EQ(lp30.at("chip"), lpx.at("chip"));
}

//===----------------------------------------------------------------------===//
// Derived figures, by hand on the tiny chip
//===----------------------------------------------------------------------===//

TEST(TargetFigures, TinyChipByHand) {
  TargetModel tiny = loadTarget("tiny");
  EXPECT_EQ(tiny.tilesPerChip(), 16);
  // 2 FLOPs x 1024 MACs x 16 tiles x 1 GHz.
  EXPECT_DOUBLE_EQ(tiny.peakMatrixFlopsPerChip(NumericFormat::F16), 32.768e12);
  EXPECT_DOUBLE_EQ(tiny.peakMatrixFlopsPerChip(NumericFormat::F32), 8.192e12);
  EXPECT_DOUBLE_EQ(tiny.peakMatrixFlopsPerChip(NumericFormat::TF32), 0);
  // No tf32 on the matrix unit: the vector unit's 64 lanes x 16 tiles do one
  // MAC per lane per cycle.
  EXPECT_DOUBLE_EQ(tiny.peakFlopsPerChip(NumericFormat::TF32), 2.048e12);
  EXPECT_DOUBLE_EQ(tiny.peakVectorOpsPerChip(), 1.024e12);
  EXPECT_EQ(tiny.sramBytesPerChip(), 16 * 262144);
  EXPECT_DOUBLE_EQ(tiny.sramBytesPerSecondPerChip(), 256.0 * 16 * 1e9);
  // A 4 x 4 grid is halved by a cut through 4 links, counted both ways.
  EXPECT_DOUBLE_EQ(tiny.meshBisectionBytesPerSecond(), 2.0 * 4 * 64 * 1e9);
  EXPECT_DOUBLE_EQ(tiny.chipLinkBytesPerSecondPerChip(), 40e9);
  EXPECT_EQ(*tiny.derivedFigure("system.peak_flops.fp16"), 4 * 32.768e12);
  EXPECT_EQ(*tiny.derivedFigure("rack.power_watts"), 40);
  EXPECT_FALSE(tiny.derivedFigure("chip.offchip_bytes"));
  EXPECT_FALSE(tiny.derivedFigure("no.such.figure"));
}

TEST(TargetFigures, OneRowMeshBisection) {
  // The TSP is a 1 x 4 row: the only halving cut crosses one link.
  TargetModel tsp = loadTarget("tsp-v1");
  EXPECT_DOUBLE_EQ(tsp.meshBisectionBytesPerSecond(), 2.0 * 10240 * 900e6);
  // A GPU is one big tile with no mesh.
  TargetModel h100 = loadTarget("h100");
  EXPECT_FALSE(h100.hasMesh());
  EXPECT_DOUBLE_EQ(h100.meshBisectionBytesPerSecond(), 0);
}

//===----------------------------------------------------------------------===//
// Lookup
//===----------------------------------------------------------------------===//

TEST(TargetLookup, UnknownPresetListsKnownOnes) {
  std::string error;
  EXPECT_FALSE(TargetModel::load("no-such-chip", error));
  EXPECT_NE(error.find("no-such-chip: (target): unknown target preset"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("tsp-v1"), std::string::npos) << error;
}

TEST(TargetLookup, MissingFile) {
  std::string error;
  EXPECT_FALSE(TargetModel::load("/nonexistent/x.json", error));
  EXPECT_EQ(error, "/nonexistent/x.json: (file): cannot open: No such file or "
                   "directory");
}

TEST(TargetLookup, UserFileAndEnvironmentOverride) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("loom-target-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  json custom = tinyJson();
  custom["name"] = "custom";
  custom["chip"]["tiles"]["rows"] = 2;
  {
    std::ofstream out(dir / "custom.json");
    out << custom.dump(2);
  }
  // A path loads as a file.
  std::string error;
  std::optional<TargetModel> fromFile =
      TargetModel::load((dir / "custom.json").string(), error);
  ASSERT_TRUE(fromFile) << error;
  EXPECT_EQ(fromFile->tileRows(), 2);

  // A name resolves in $LOOM_TARGETS_DIR when set.
  ::setenv("LOOM_TARGETS_DIR", dir.c_str(), 1);
  std::optional<TargetModel> fromEnv = TargetModel::load("custom", error);
  std::vector<std::string> names = TargetModel::presetNames();
  ::unsetenv("LOOM_TARGETS_DIR");
  ASSERT_TRUE(fromEnv) << error;
  EXPECT_EQ(fromEnv->name(), "custom");
  EXPECT_EQ(names, std::vector<std::string>{"custom"});
  std::filesystem::remove_all(dir);
}

//===----------------------------------------------------------------------===//
// Validation: one case per error class, each naming the JSON path
//===----------------------------------------------------------------------===//

TEST(TargetValidation, TinyIsValid) { EXPECT_EQ(loadError(tinyJson()), ""); }

TEST(TargetValidation, CommentKeysAreIgnoredAnywhere) {
  json document = tinyJson();
  document["_note"] = {1, 2, 3};
  document["chip"]["_source"] = "made up";
  document["chip"]["tile"]["matrix"]["macs_per_cycle"]["_fp16"] = "a note";
  document["system"]["links"]["_latency_seconds"] = "estimate";
  EXPECT_EQ(loadError(document), "");
}

TEST(TargetValidation, IntegralNumbersInExponentFormAreIntegers) {
  json document = tinyJson();
  document["chip"]["tile"]["sram"]["bytes"] = 2.62144e5;
  EXPECT_EQ(loadError(document), "");
}

TEST(TargetValidation, UnknownField) {
  json document = tinyJson();
  document["chip"]["clok_hz"] = 1;
  EXPECT_EQ(loadError(document),
            "t.json: chip.clok_hz: unknown field (did you mean 'clock_hz'?)");
  document = tinyJson();
  document["system"]["links"]["wires"] = 1;
  EXPECT_EQ(loadError(document),
            "t.json: system.links.wires: unknown field (expected one of: "
            "per_chip, bytes_per_second, latency_seconds, sync_seconds, "
            "topology, domain_chips, routing; keys starting with '_' are "
            "comments)");
}

TEST(TargetValidation, RoutingIsMinimalOrAdaptiveOnADragonfly) {
  json document = tinyJson();
  document["system"]["links"]["routing"] = "valiant";
  EXPECT_EQ(loadError(document),
            "t.json: system.links.routing: unknown routing 'valiant' "
            "(expected minimal or adaptive)");
  document["system"]["links"]["routing"] = "adaptive";
  EXPECT_EQ(loadError(document),
            "t.json: system.links.routing: inconsistent: adaptive routing is "
            "modelled for the dragonfly only, got topology '" +
                std::string(rt::topologyName(
                    loadTarget("tiny").desc().system.links.topology)) +
                "'");
  document["system"]["links"]["routing"] = "minimal";
  EXPECT_EQ(loadError(document), "");
}

TEST(TargetValidation, UnknownEnumValues) {
  json document = tinyJson();
  document["chip"]["tile"]["matrix"]["macs_per_cycle"]["fp12"] = 8;
  EXPECT_EQ(loadError(document),
            "t.json: chip.tile.matrix.macs_per_cycle.fp12: unknown numeric "
            "format (expected one of: fp32, tf32, bf16, fp16, fp8, int8, fp4)");
  document = tinyJson();
  document["system"]["links"]["topology"] = "hypercube";
  EXPECT_EQ(loadError(document),
            "t.json: system.links.topology: unknown topology 'hypercube' "
            "(expected one of: none, ring, torus2d, fully_connected, "
            "dragonfly, switch)");
}

TEST(TargetValidation, WrongType) {
  json document = tinyJson();
  document["chip"]["clock_hz"] = "1 GHz";
  EXPECT_EQ(loadError(document), "t.json: chip.clock_hz: wrong type: expected "
                                 "a number, got string \"1 GHz\"");
  document = tinyJson();
  document["chip"]["tiles"]["rows"] = 4.5;
  EXPECT_EQ(loadError(document), "t.json: chip.tiles.rows: wrong type: "
                                 "expected an integer, got number 4.5");
  document = tinyJson();
  document["chip"]["tile"] = 3;
  EXPECT_EQ(loadError(document), "t.json: chip.tile: wrong type: expected an "
                                 "object, got number 3");
  document = tinyJson();
  document["name"] = true;
  EXPECT_EQ(loadError(document), "t.json: name: wrong type: expected a "
                                 "string, got boolean true");
  EXPECT_EQ(loadTextError("[1, 2]"),
            "t.json: (root): wrong type: expected an object, got array [1,2]");
}

TEST(TargetValidation, Missing) {
  json document = tinyJson();
  document["system"].erase("chips");
  EXPECT_EQ(loadError(document),
            "t.json: system.chips: missing required field");
  document = tinyJson();
  document["chip"]["tile"]["matrix"].erase("block");
  EXPECT_EQ(loadError(document),
            "t.json: chip.tile.matrix.block: missing required field");
  document = tinyJson();
  document.erase("system");
  EXPECT_EQ(loadError(document), "t.json: system: missing required field");
}

TEST(TargetValidation, NonPositive) {
  struct Case {
    json::json_pointer pointer;
    json value;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {json::json_pointer("/chip/clock_hz"), 0,
       "t.json: chip.clock_hz: must be positive, got 0"},
      {json::json_pointer("/chip/tiles/cols"), -2,
       "t.json: chip.tiles.cols: must be positive, got -2"},
      {json::json_pointer("/chip/tile/sram/bytes"), 0,
       "t.json: chip.tile.sram.bytes: must be positive, got 0"},
      {json::json_pointer("/chip/tile/vector/lanes"), 0,
       "t.json: chip.tile.vector.lanes: must be positive, got 0"},
      {json::json_pointer("/chip/tile/matrix/macs_per_cycle/fp16"), 0,
       "t.json: chip.tile.matrix.macs_per_cycle.fp16: must be positive, got 0 "
       "(omit a format the matrix unit does not run)"},
      {json::json_pointer("/chip/tile/matrix/block/k"), 0,
       "t.json: chip.tile.matrix.block.k: must be positive, got 0"},
      {json::json_pointer("/chip/mesh/hop_latency_cycles"), -1,
       "t.json: chip.mesh.hop_latency_cycles: must not be negative, got -1"},
      {json::json_pointer("/system/links/bytes_per_second"), -1.5,
       "t.json: system.links.bytes_per_second: must be positive, got -1.5"},
      {json::json_pointer("/system/power_watts_per_chip"), 0,
       "t.json: system.power_watts_per_chip: must be positive, got 0"},
      {json::json_pointer("/system/links/sync_seconds"), -1e-6,
       "t.json: system.links.sync_seconds: must not be negative, got -1e-06"},
      {json::json_pointer("/chip/tile/matrix/weight_load_bytes_per_cycle"),
       0.5,
       "t.json: chip.tile.matrix.weight_load_bytes_per_cycle: out of range: "
       "must be at least 1, got 0.5"},
      {json::json_pointer("/chip/tile/matrix/weight_load_bytes_per_cycle"),
       "fast",
       "t.json: chip.tile.matrix.weight_load_bytes_per_cycle: wrong type: "
       "expected a number, got string \"fast\""},
  };
  for (const Case &testCase : cases) {
    json document = tinyJson();
    document[testCase.pointer] = testCase.value;
    EXPECT_EQ(loadError(document), testCase.expected);
  }
}

TEST(TargetValidation, Inconsistent) {
  struct Case {
    std::function<void(json &)> mutate;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {[](json &d) { d["system"]["chips"] = 6; },
       "t.json: system.chips: inconsistent: 6 chips is not a whole number of "
       "nodes of 4 (system.chips_per_node)"},
      {[](json &d) {
         d["system"]["chips"] = 12;
         d["system"]["chips_per_node"] = 2;
         d["system"]["nodes_per_rack"] = 4;
       },
       "t.json: system.chips: inconsistent: 12 chips span more than one rack "
       "but are not a whole number of racks of 8 (chips_per_node x "
       "nodes_per_rack)"},
      {[](json &d) { d["system"]["links"]["domain_chips"] = 3; },
       "t.json: system.links.domain_chips: inconsistent: 3 does not divide "
       "system.chips (4)"},
      {[](json &d) { d["system"]["links"]["domain_chips"] = 2; },
       "t.json: system.scale_out: inconsistent: required when "
       "system.links.domain_chips (2) is less than system.chips (4)"},
      {[](json &d) { d["chip"].erase("mesh"); },
       "t.json: chip.mesh: inconsistent: required when the chip has more than "
       "one tile (4 x 4)"},
      {[](json &d) {
         d["chip"]["tile"]["matrix"]["block"] = {
             {"m", 16}, {"n", 256}, {"k", 512}};
       },
       "t.json: chip.tile.matrix.block: inconsistent: a 512 x 256 block "
       "(524288 bytes) does not fit in chip.tile.sram.bytes (262144)"},
      {[](json &d) {
         d["system"]["links"]["topology"] = "fully_connected";
         d["system"]["links"]["per_chip"] = 2;
       },
       "t.json: system.links.per_chip: inconsistent: fully connecting 4 chips "
       "needs at least 3 links per chip, got 2"},
      {[](json &d) { d["system"]["links"]["per_chip"] = 1; },
       "t.json: system.links.per_chip: inconsistent: a ring needs at least 2 "
       "links per chip, got 1"},
      {[](json &d) { d["system"]["links"]["topology"] = "none"; },
       "t.json: system.links.topology: inconsistent: 'none' requires "
       "system.chips to be 1, got 4"},
      {[](json &d) {
         d["chip"]["tile"]["matrix"]["macs_per_cycle"] = json::object();
       },
       "t.json: chip.tile.matrix.macs_per_cycle: inconsistent: must name at "
       "least one numeric format"},
  };
  for (const Case &testCase : cases) {
    json document = tinyJson();
    testCase.mutate(document);
    EXPECT_EQ(loadError(document), testCase.expected);
  }
}

TEST(TargetValidation, DuplicateKey) {
  std::string text = tinyJson().dump();
  // Repeat "chips" inside "system".
  size_t pos = text.find("\"chips\":4");
  ASSERT_NE(pos, std::string::npos);
  text.insert(pos, "\"chips\":8,");
  EXPECT_EQ(loadTextError(text), "t.json: system.chips: duplicate key");
}

TEST(TargetValidation, MalformedJson) {
  EXPECT_EQ(loadTextError("{\n  \"name\": \"x\",\n}"),
            "t.json: (json): invalid JSON: parse error at line 3, column 1: "
            "syntax error while parsing object key - unexpected '}'; "
            "expected string literal");
  EXPECT_NE(loadTextError("").find("t.json: (json): invalid JSON"),
            std::string::npos);
}

TEST(TargetValidation, FromDescNamesTheJsonPath) {
  TargetModel tiny = loadTarget("tiny");
  TargetDesc desc = tiny.desc();
  desc.system.chipsPerNode = 3;
  std::string error;
  EXPECT_FALSE(TargetModel::fromDesc(desc, error));
  EXPECT_EQ(error, "tiny: system.chips: inconsistent: 4 chips is not a whole "
                   "number of nodes of 3 (system.chips_per_node)");
  desc = tiny.desc();
  desc.chip.tileRows = 2;
  std::optional<TargetModel> edited = TargetModel::fromDesc(desc, error);
  ASSERT_TRUE(edited) << error;
  EXPECT_EQ(edited->tilesPerChip(), 8);
}

//===----------------------------------------------------------------------===//
// Efficiency (the planner's factors)
//===----------------------------------------------------------------------===//

// Without `efficiency` a chip with off-chip memory (a GPU) gets 0.6 of its
// matrix peak (0.4 in fp4), 0.75 of its memory and 0.7 of its links; a
// spatial chip 0.9, 0.9 and 1. A format the matrix unit does not run (the
// vector unit does) takes the highest of the unit's.
TEST(TargetEfficiency, DefaultsByKindOfChip) {
  TargetModel wormhole = loadTarget("wormhole"), tiny = loadTarget("tiny");
  ASSERT_FALSE(wormhole.desc().efficiency);
  ASSERT_TRUE(wormhole.hasOffChipMemory());
  EXPECT_EQ(wormhole.matrixEfficiency(NumericFormat::F8), 0.6);
  EXPECT_EQ(wormhole.efficiency().memory, 0.75);
  EXPECT_EQ(wormhole.efficiency().links, 0.7);
  EXPECT_EQ(wormhole.matrixEfficiency(NumericFormat::F4), 0.6);
  ASSERT_FALSE(tiny.desc().efficiency);
  EXPECT_EQ(tiny.matrixEfficiency(NumericFormat::BF16), 0.9);
  EXPECT_EQ(tiny.efficiency().memory, 0.9);
  EXPECT_EQ(tiny.efficiency().links, 1.0);
}

// The GPU presets state their factors, each with its source; fp4 on
// Blackwell is 0.444 as the rows grow, half of it at 400 rows (the fit of
// vLLM's NVFP4 benchmark), the others 0.6 at every M.
TEST(TargetEfficiency, GpuPresetsStateTheirs) {
  for (const char *name : {"h100", "h200", "b200", "gb200"}) {
    TargetModel t = loadTarget(name);
    ASSERT_TRUE(t.desc().efficiency) << name;
    EXPECT_EQ(t.matrixEfficiency(NumericFormat::F8), 0.6) << name;
    EXPECT_EQ(t.efficiency().memory, 0.75) << name;
    EXPECT_EQ(t.efficiency().links, 0.7) << name;
    json document = readPresetJson(name);
    for (const char *field : {"_memory", "_links"})
      EXPECT_TRUE(document["efficiency"].contains(field)) << name << field;
    EXPECT_TRUE(document["efficiency"]["matrix"].contains("_source")) << name;
  }
  for (const char *name : {"b200", "gb200"}) {
    TargetModel t = loadTarget(name);
    EXPECT_EQ(t.matrixEfficiency(NumericFormat::F4), 0.444) << name;
    EXPECT_EQ(t.matrixHalfRows(NumericFormat::F4), 400) << name;
    EXPECT_EQ(t.matrixHalfRows(NumericFormat::F8), 0) << name;
    EXPECT_TRUE(readPresetJson(name)["efficiency"]["matrix_half_rows"]
                    .contains("_source"))
        << name;
  }
  for (const char *name : {"h100", "h200"})
    EXPECT_EQ(loadTarget(name).matrixHalfRows(NumericFormat::F8), 0) << name;
}

// The factors a file states, `matrix_half_rows` optional and per format
// the matrix unit runs; absent (and in the defaults) every format's
// fraction holds at every M.
TEST(TargetEfficiency, ReadFromTheFile) {
  json document = tinyJson();
  document["efficiency"] = {
      {"matrix",
       {{"fp32", 0.5}, {"bf16", 0.5}, {"fp16", 0.5}, {"fp8", 0.25},
        {"int8", 0.5}, {"_source", "a comment"}}},
      {"matrix_half_rows", {{"fp8", 256}, {"_source", "a comment"}}},
      {"memory", 0.8},
      {"links", 1}};
  std::string error;
  std::optional<TargetModel> t =
      TargetModel::parse(document.dump(), "t.json", error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->matrixEfficiency(NumericFormat::F8), 0.25);
  EXPECT_EQ(t->matrixEfficiency(NumericFormat::BF16), 0.5);
  EXPECT_EQ(t->efficiency().memory, 0.8);
  EXPECT_EQ(t->efficiency().links, 1.0);
  EXPECT_EQ(t->matrixHalfRows(NumericFormat::F8), 256);
  EXPECT_EQ(t->matrixHalfRows(NumericFormat::BF16), 0);
  // (A format the matrix unit does not run has none.)
  EXPECT_EQ(t->matrixHalfRows(NumericFormat::F4), 0);
  EXPECT_EQ(loadTarget("tiny").matrixHalfRows(NumericFormat::BF16), 0);
  EXPECT_EQ(loadTarget("wormhole").matrixHalfRows(NumericFormat::F8), 0);
}

TEST(TargetEfficiency, BadValuesNameTheirField) {
  json good = tinyJson();
  good["efficiency"] = {
      {"matrix",
       {{"fp32", 0.5}, {"bf16", 0.5}, {"fp16", 0.5}, {"fp8", 0.5},
        {"int8", 0.5}}},
      {"memory", 0.8},
      {"links", 1}};
  ASSERT_EQ(loadError(good), "");
  json document = good;
  document["efficiency"]["matrix"]["fp8"] = 1.5;
  EXPECT_EQ(loadError(document), "t.json: efficiency.matrix.fp8: must be a "
                                 "fraction in (0, 1], got 1.5");
  document = good;
  document["efficiency"]["memory"] = 0;
  EXPECT_EQ(loadError(document),
            "t.json: efficiency.memory: must be a fraction in (0, 1], got 0");
  document = good;
  document["efficiency"]["matrix"].erase("fp8");
  EXPECT_EQ(loadError(document),
            "t.json: efficiency.matrix.fp8: missing: the matrix unit runs fp8 "
            "(chip.tile.matrix.macs_per_cycle), so its efficiency is required");
  document = good;
  document["efficiency"]["matrix"]["fp4"] = 0.4;
  EXPECT_EQ(loadError(document),
            "t.json: efficiency.matrix.fp4: inconsistent: the matrix unit does "
            "not run fp4 (not in chip.tile.matrix.macs_per_cycle)");
  document = good;
  document["efficiency"]["matrix"]["fp6"] = 0.4;
  EXPECT_NE(loadError(document).find(
                "t.json: efficiency.matrix.fp6: unknown numeric format"),
            std::string::npos);
  document = good;
  document["efficiency"]["matrix_half_rows"] = {{"fp8", -1}};
  EXPECT_EQ(loadError(document), "t.json: efficiency.matrix_half_rows.fp8: "
                                 "must be a row count in [0, 1e9], got -1");
  document = good;
  document["efficiency"]["matrix_half_rows"] = {{"fp4", 400}};
  EXPECT_EQ(loadError(document),
            "t.json: efficiency.matrix_half_rows.fp4: inconsistent: the "
            "matrix unit does not run fp4 (not in "
            "chip.tile.matrix.macs_per_cycle)");
  document = good;
  document["efficiency"]["matrix_half_rows"] = {{"fp8", "many"}};
  EXPECT_NE(loadError(document).find(
                "t.json: efficiency.matrix_half_rows.fp8: wrong type"),
            std::string::npos);
  document = good;
  document["efficiency"]["compute"] = 0.4;
  EXPECT_NE(loadError(document).find("t.json: efficiency.compute: unknown field"),
            std::string::npos);
  document = good;
  document["efficiency"].erase("links");
  EXPECT_EQ(loadError(document),
            "t.json: efficiency.links: missing required field");
  document = good;
  document["efficiency"]["matrix_half_rows"] = {{"fp8", 2e9}};
  EXPECT_EQ(loadError(document), "t.json: efficiency.matrix_half_rows.fp8: "
                                 "must be a row count in [0, 1e9], got 2e+09");
  // A description edited in code is checked the same way.
  TargetDesc desc = loadTarget("h100").desc();
  desc.efficiency->links = 2;
  std::string error;
  EXPECT_FALSE(TargetModel::fromDesc(desc, error));
  EXPECT_EQ(error, "h100: efficiency.links: must be a fraction in (0, 1], got 2");
  desc = loadTarget("b200").desc();
  desc.efficiency->matrixHalfRows[static_cast<size_t>(NumericFormat::F4)] = -1;
  EXPECT_FALSE(TargetModel::fromDesc(desc, error));
  EXPECT_EQ(error, "b200: efficiency.matrix_half_rows.fp4: must be a row count "
                   "in [0, 1e9], got -1");
}

// default_precision: a kernel precision the matrix unit runs; the model
// answers fp32 without one.
TEST(TargetValidation, DefaultPrecision) {
  json document = tinyJson();
  document["default_precision"] = "fp12";
  EXPECT_EQ(loadError(document),
            "t.json: default_precision: unknown precision 'fp12' (expected "
            "fp32, bf16, fp16, fp8 or int8)");
  document = tinyJson();
  document["chip"]["tile"]["matrix"]["macs_per_cycle"].erase("int8");
  document["default_precision"] = "int8";
  EXPECT_EQ(loadError(document),
            "t.json: default_precision: inconsistent: the matrix unit does not "
            "run int8 (chip.tile.matrix.macs_per_cycle names its formats)");
  document = tinyJson();
  document["default_precision"] = 8;
  EXPECT_EQ(loadError(document), "t.json: default_precision: wrong type: "
                                 "expected a string, got number 8");
  EXPECT_EQ(loadTarget("tiny").defaultPrecision(), "fp32");
  EXPECT_EQ(loadTarget("tsp-v1").defaultPrecision(), "fp16");
}
