//===- Simulator.cpp - Replay, check and run a Loom program ---------------===//
//
// The schedule checks and statistics are one pass over the instrs (sorted by
// start) and one sweep over each tile's buffers; functional execution walks
// the kernels in order through rt::executeOp. See Simulator.h.
//
// It is long (over 1,000 lines) because it holds the Simulator and every
// form of a run's results it writes (the statistics as text and JSON, and
// the trace), which share the helpers at the top.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Simulator.h"

#include "loom/Runtime/InstrTiming.h"
#include "loom/Runtime/Reference.h"
#include "loom/Runtime/ScheduleVerifier.h"
#include "TileRun.h"

#include <nlohmann/json.hpp>

#include <malloc.h>
#include <mutex>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>

namespace loom::rt {
namespace {

using Json = nlohmann::ordered_json;

/// a += b, saturating (sums of durations and bytes from a hostile file must
/// not overflow).
void addSat(int64_t &a, int64_t b) {
  if (__builtin_add_overflow(a, b, &a))
    a = std::numeric_limits<int64_t>::max();
}

/// Serialises `j` compactly, newline-terminated. Invalid UTF-8 in names read
/// from a (possibly hostile) program is replaced, not thrown on.
std::string dumpJson(const Json &j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

//===----------------------------------------------------------------------===//
// Naming things in errors
//===----------------------------------------------------------------------===//

/// Position of an instr's resource in a flat table: tile units first, then
/// links (the trace's track ids).
size_t resourceSlot(const Program &p, const ProgramInstr &in) {
  if (isLinkUnit(in.unit))
    return static_cast<size_t>(p.numTiles() * kTileUnits +
                               p.linkIndex(in.resource));
  return static_cast<size_t>(tileUnitSlot(in.resource, in.unit));
}

std::string describeTensor(const Program &p, int32_t id) {
  int64_t i = p.tensorIndex(id);
  std::string s = "tensor " + std::to_string(id);
  if (i >= 0 && !p.tensors[static_cast<size_t>(i)].name.empty())
    s += " '" + p.tensors[static_cast<size_t>(i)].name + "'";
  return s;
}

//===----------------------------------------------------------------------===//
// Statistics
//===----------------------------------------------------------------------===//

SimStats computeStats(const Program &p, const Replay &replay) {
  SimStats s;
  s.model = p.model;
  s.target = p.targetName;
  s.clockHz = p.clockHz;
  s.declaredTotalCycles = p.totalCycles;
  s.declaredSramPeakBytes = p.sramPeakBytes;
  s.rooflineCycles = p.rooflineCycles;
  s.sramBytesPerTile = p.sramBytesPerTile;
  s.numInstrs = static_cast<int64_t>(p.instrs.size());

  // Each link record's row in s.links or s.chipLinks, by link position.
  std::vector<LinkStats *> linkRow(p.links.size());
  int64_t numChipLinks = 0;
  for (const ProgramLink &l : p.links)
    numChipLinks += l.chipLink;
  s.links.reserve(p.links.size() - static_cast<size_t>(numChipLinks));
  s.chipLinks.reserve(static_cast<size_t>(numChipLinks));
  for (size_t i = 0; i < p.links.size(); ++i) {
    const ProgramLink &l = p.links[i];
    auto &rows = l.chipLink ? s.chipLinks : s.links;
    rows.push_back({l.id, l.fromTile, l.toTile, 0, 0, l.fromChip, l.toChip});
    linkRow[i] = &rows.back();
  }
  for (int u = 0; u < kNumUnits; ++u) {
    UnitStats us;
    us.unit = static_cast<Unit>(u);
    int64_t meshLinks = static_cast<int64_t>(s.links.size());
    us.count = us.unit == Unit::MeshLink   ? meshLinks
               : us.unit == Unit::ChipLink ? numChipLinks
                                           : p.numTiles();
    s.units.push_back(us);
  }
  s.chips = p.chips;
  if (p.chips > 1) {
    s.chipStats.resize(static_cast<size_t>(p.chips));
    for (int32_t c = 0; c < p.chips; ++c)
      s.chipStats[static_cast<size_t>(c)].chip = c;
  }
  std::unordered_map<int32_t, size_t> kernelPos;
  for (const ProgramKernel &k : p.kernels) {
    KernelStats ks;
    ks.id = k.id;
    ks.name = k.name;
    ks.onnxNodes = k.onnxNodes;
    ks.estimatedCycles = k.cycles;
    kernelPos.emplace(k.id, s.kernels.size());
    s.kernels.push_back(std::move(ks));
  }

  // The replay's ends: each instr at its scheduled start for its rule's
  // cycles.
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const ProgramInstr &in = p.instrs[i];
    s.simulatedTotalCycles =
        std::max(s.simulatedTotalCycles, replay.arrival[i]);
    if (in.kernel >= 0) {
      KernelStats &ks = s.kernels[kernelPos.at(in.kernel)];
      ks.simulatedCycles = std::max(ks.simulatedCycles, replay.finish[i]);
    }
  }
  s.hazards = static_cast<int64_t>(replay.hazards.size());
  for (int k = 0; k < kNumHazardKinds; ++k)
    s.hazardsByKind[k] = replay.byKind[k];
  for (const auto &[kernel, count] : replay.byKernel)
    if (kernel >= 0)
      s.kernels[kernelPos.at(kernel)].hazards = count;
  for (size_t i = 0;
       i < replay.hazards.size() && i < SimStats::kMaxHazardRecords; ++i) {
    const Hazard &h = replay.hazards[i];
    s.hazardRecords.push_back(
        {h, h.instr < 0 ? -1 : p.instr(h.instr).kernel, describeHazard(p, h)});
  }
  for (const ProgramInstr &in : p.instrs) {
    s.totalCycles = std::max(s.totalCycles, in.arrival());
    addSat(s.units[static_cast<size_t>(in.unit)].busyCycles, in.duration);
    if (isLinkUnit(in.unit)) {
      LinkStats &ls = *linkRow[static_cast<size_t>(p.linkIndex(in.resource))];
      addSat(ls.bytes, in.bytes);
      addSat(ls.busyCycles, in.duration);
    } else {
      if (in.unit == Unit::Dma)
        addSat(s.dmaBytes, in.bytes);
      if (!s.chipStats.empty())
        addSat(s.chipStats[static_cast<size_t>(p.chipOf(in.resource))]
                   .busyCycles,
               in.duration);
    }
    if (in.kernel >= 0) {
      KernelStats &ks = s.kernels[kernelPos.at(in.kernel)];
      if (ks.numInstrs == 0) {
        ks.startCycle = in.start;
        ks.endCycle = in.end();
      } else {
        ks.startCycle = std::min(ks.startCycle, in.start);
        ks.endCycle = std::max(ks.endCycle, in.end());
      }
      addSat(ks.busyCycles, in.duration);
      ++ks.numInstrs;
    }
  }
  // Replayed ends are absolute until here: make them spans from the start.
  for (KernelStats &ks : s.kernels)
    if (ks.numInstrs > 0)
      ks.simulatedCycles -= ks.startCycle;
  s.seconds = static_cast<double>(s.totalCycles) / p.clockHz;
  s.mapping = p.mapping;
  s.pipelineGroups = p.pipelineGroups;
  s.initiationInterval =
      p.pipelined() ? p.initiationInterval : s.totalCycles;
  s.setStream(1);
  // Utilisation in the steady state: per initiation interval.
  for (UnitStats &us : s.units)
    if (s.initiationInterval > 0 && us.count > 0)
      us.utilisation = static_cast<double>(us.busyCycles) /
                       (static_cast<double>(s.initiationInterval) *
                        static_cast<double>(us.count));
  for (const LinkStats &ls : s.links)
    s.maxLinkBytes = std::max(s.maxLinkBytes, ls.bytes);
  for (const LinkStats &ls : s.chipLinks)
    s.maxChipLinkBytes = std::max(s.maxChipLinkBytes, ls.bytes);
  double allBusy = 0;
  for (const ChipStats &cs : s.chipStats)
    allBusy += static_cast<double>(cs.busyCycles);
  double chipCapacity = static_cast<double>(s.initiationInterval) *
                        static_cast<double>(p.tilesPerChip() * kTileUnits);
  for (ChipStats &cs : s.chipStats) {
    if (chipCapacity > 0)
      cs.utilisation = static_cast<double>(cs.busyCycles) / chipCapacity;
    if (allBusy > 0)
      cs.share = static_cast<double>(cs.busyCycles) / allBusy;
  }

  // SRAM peak: every buffer's footprint over its lifetime (modulo the
  // initiation interval when pipelined), as the verifier sees it.
  s.sramPeakPerTile = sramPeakPerTile(p);
  for (int64_t peak : s.sramPeakPerTile)
    s.sramPeakBytes = std::max(s.sramPeakBytes, peak);
  return s;
}

std::string fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

} // namespace

//===----------------------------------------------------------------------===//
// Reports
//===----------------------------------------------------------------------===//

void SimStats::setStream(int64_t inputs) {
  stream = std::max<int64_t>(1, inputs);
  // (stream - 1) * II + latency, saturating.
  int64_t steady = 0;
  if (__builtin_mul_overflow(stream - 1, initiationInterval, &steady))
    steady = std::numeric_limits<int64_t>::max();
  streamCycles = steady;
  addSat(streamCycles, totalCycles);
}

/// The rows of a list of `n` to print: all, in order, when they are few or
/// `verbose`; else the kTextRows busiest by `busier` (a strict order).
template <typename Busier>
static std::vector<size_t> shownRows(size_t n, bool verbose, Busier busier) {
  std::vector<size_t> rows(n);
  for (size_t i = 0; i < n; ++i)
    rows[i] = i;
  if (verbose || n <= SimStats::kTextRows)
    return rows;
  std::stable_sort(rows.begin(), rows.end(), busier);
  rows.resize(SimStats::kTextRows);
  return rows;
}

/// The line after a shortened list.
static std::string omittedLine(size_t shown, size_t total, const char *what) {
  if (shown >= total)
    return "";
  return "  ... " + std::to_string(total - shown) + " more " + what +
         " (--verbose lists all)\n";
}

/// The hazards line and the first hazards found.
static void writeHazards(std::ostream &os, const SimStats &stats) {
  if (stats.hazards > 0) {
    os << "hazards:          " << stats.hazards << " (";
    bool first = true;
    for (int k = 0; k < kNumHazardKinds; ++k)
      if (stats.hazardsByKind[k] > 0) {
        os << (first ? "" : ", ") << hazardKindName(static_cast<HazardKind>(k))
           << " " << stats.hazardsByKind[k];
        first = false;
      }
    os << "); silicon would compute garbage\n";
    const size_t shown = std::min<size_t>(stats.hazardRecords.size(), 10);
    for (size_t i = 0; i < shown; ++i)
      os << "  " << stats.hazardRecords[i].message << "\n";
    if (static_cast<int64_t>(shown) < stats.hazards)
      os << "  ... and " << stats.hazards - static_cast<int64_t>(shown)
         << " more (--stats=FILE.json lists the first "
         << SimStats::kMaxHazardRecords << ")\n";
  }
}

/// The mesh links and chip links in use.
static void writeLinks(std::ostream &os, const SimStats &stats, bool verbose) {
  // The links that carry anything; the busiest first when there are many.
  auto usedLinks = [](const std::vector<LinkStats> &all) {
    std::vector<const LinkStats *> used;
    for (const LinkStats &l : all)
      if (l.bytes > 0 || l.busyCycles > 0)
        used.push_back(&l);
    return used;
  };
  auto byBytes = [](const std::vector<const LinkStats *> &used) {
    return [&used](size_t a, size_t b) {
      if (used[a]->bytes != used[b]->bytes)
        return used[a]->bytes > used[b]->bytes;
      return used[a]->busyCycles > used[b]->busyCycles;
    };
  };
  std::vector<const LinkStats *> mesh = usedLinks(stats.links);
  std::vector<size_t> meshRows = shownRows(mesh.size(), verbose, byBytes(mesh));
  os << "mesh links:       " << stats.links.size() << ", busiest carries "
     << stats.maxLinkBytes << " bytes";
  if (meshRows.size() < mesh.size())
    os << "; the " << meshRows.size() << " busiest of the " << mesh.size()
       << " in use";
  os << "\n";
  for (size_t i : meshRows) {
    const LinkStats &l = *mesh[i];
    os << "  link " << l.id << " (" << l.fromTile << " -> " << l.toTile
       << "): " << l.bytes << " bytes, " << l.busyCycles << " busy cycles\n";
  }
  os << omittedLine(meshRows.size(), mesh.size(), "mesh links in use");
  if (stats.chips > 1 || !stats.chipLinks.empty()) {
    std::vector<const LinkStats *> chip = usedLinks(stats.chipLinks);
    std::vector<size_t> chipRows =
        shownRows(chip.size(), verbose, byBytes(chip));
    os << "chip links:       " << stats.chipLinks.size() << ", busiest carries "
       << stats.maxChipLinkBytes << " bytes";
    if (chipRows.size() < chip.size())
      os << "; the " << chipRows.size() << " busiest of the " << chip.size()
         << " in use";
    os << "\n";
    for (size_t i : chipRows) {
      const LinkStats &l = *chip[i];
      os << "  chip link " << l.id << " (chip " << l.fromChip << " -> chip "
         << l.toChip << "): " << l.bytes << " bytes, " << l.busyCycles
         << " busy cycles\n";
    }
    os << omittedLine(chipRows.size(), chip.size(), "chip links in use");
  }
}

/// Each chip's busy cycles and share.
static void writeChips(std::ostream &os, const SimStats &stats, bool verbose) {
  if (!stats.chipStats.empty()) {
    std::vector<size_t> rows =
        shownRows(stats.chipStats.size(), verbose, [&](size_t a, size_t b) {
          return stats.chipStats[a].busyCycles > stats.chipStats[b].busyCycles;
        });
    os << "per chip (tile units busy, share of all)"
       << (rows.size() < stats.chipStats.size() ? ", the busiest" : "")
       << ":\n";
    for (size_t i : rows) {
      const ChipStats &c = stats.chipStats[i];
      os << "  chip " << std::left << std::setw(6) << c.chip << std::right
         << std::setw(14) << c.busyCycles << " busy cycles  " << std::setw(6)
         << fixed(100.0 * c.utilisation, 2) << "%  share " << std::setw(6)
         << fixed(100.0 * c.share, 2) << "%\n";
    }
    os << omittedLine(rows.size(), stats.chipStats.size(), "chips");
  }
}

/// The kernels, those a hazard happened in first, then the longest.
static void writeKernels(std::ostream &os, const SimStats &stats,
                         bool verbose) {
  std::vector<size_t> kernelRows =
      shownRows(stats.kernels.size(), verbose, [&](size_t a, size_t b) {
        // Kernels a hazard happened in first: they are what to look at.
        if ((stats.kernels[a].hazards > 0) != (stats.kernels[b].hazards > 0))
          return stats.kernels[a].hazards > 0;
        return stats.kernels[a].cycles() > stats.kernels[b].cycles();
      });
  os << "kernels"
     << (kernelRows.size() < stats.kernels.size() ? ", the longest" : "")
     << ":\n";
  os << "  " << std::setw(5) << "id"
     << "  " << std::setw(12) << "start" << std::setw(12) << "cycles"
     << std::setw(12) << "simulated" << std::setw(12) << "estimate";
  if (stats.hazards > 0)
    os << std::setw(9) << "hazards";
  os << "  name (onnx nodes)\n";
  for (size_t row : kernelRows) {
    const KernelStats &k = stats.kernels[row];
    os << "  " << std::setw(5) << k.id << "  " << std::setw(12) << k.startCycle
       << std::setw(12) << k.cycles() << std::setw(12) << k.simulatedCycles
       << std::setw(12) << k.estimatedCycles;
    if (stats.hazards > 0)
      os << std::setw(9) << k.hazards;
    os << "  " << k.name;
    if (!k.onnxNodes.empty()) {
      os << " (";
      for (size_t i = 0; i < k.onnxNodes.size(); ++i)
        os << (i ? ", " : "") << k.onnxNodes[i];
      os << ")";
    }
    os << "\n";
  }
  os << omittedLine(kernelRows.size(), stats.kernels.size(), "kernels");
}

std::string SimStats::toText(bool verbose) const {
  std::ostringstream os;
  os << "model:            " << model << "\n";
  os << "target:           " << target << "\n";
  os << "total cycles:     " << totalCycles;
  if (declaredTotalCycles != totalCycles)
    os << " (program says " << declaredTotalCycles << ")";
  if (simulatedTotalCycles != totalCycles)
    os << " (simulated " << simulatedTotalCycles << ")";
  os << "\n";
  os << "time:             " << fixed(seconds * 1e6, 3) << " us at "
     << fixed(clockHz / 1e6, 1) << " MHz\n";
  os << "mapping:          " << mapping;
  if (mapping == "hybrid")
    os << " (" << pipelineGroups << " groups)";
  os << ", a new input every " << initiationInterval << " cycles ("
     << fixed(initiationInterval > 0
                  ? clockHz / static_cast<double>(initiationInterval)
                  : 0.0,
              1)
     << " inputs/s)\n";
  if (stream > 1)
    os << "stream:           " << stream << " inputs in " << streamCycles
       << " cycles, fill and drain included ("
       << fixed(streamCycles > 0 ? static_cast<double>(stream) * clockHz /
                                       static_cast<double>(streamCycles)
                                 : 0.0,
                1)
       << " inputs/s)\n";
  if (rooflineCycles > 0)
    os << "roofline cycles:  " << rooflineCycles << " ("
       << fixed(totalCycles > 0 ? 100.0 * static_cast<double>(rooflineCycles) /
                                      static_cast<double>(totalCycles)
                                : 0.0,
                1)
       << "% of roofline)\n";
  os << "instrs:           " << numInstrs << "\n";
  writeHazards(os, *this);
  if (chips > 1)
    os << "chips:            " << chips << "\n";
  os << "utilisation:\n";
  for (const UnitStats &u : units) {
    // A single-chip program has no chip links: its report stays as it was.
    if (u.unit == Unit::ChipLink && u.count == 0)
      continue;
    os << "  " << std::left << std::setw(10) << unitName(u.unit) << std::right
       << std::setw(6) << u.count << " units  " << std::setw(14)
       << u.busyCycles << " busy cycles  " << std::setw(6)
       << fixed(100.0 * u.utilisation, 2) << "%\n";
  }
  os << "sram peak:        " << sramPeakBytes << " bytes on one tile ("
     << fixed(sramBytesPerTile > 0
                  ? 100.0 * static_cast<double>(sramPeakBytes) /
                        static_cast<double>(sramBytesPerTile)
                  : 0.0,
              1)
     << "% of " << sramBytesPerTile << ")";
  if (declaredSramPeakBytes != sramPeakBytes)
    os << " (program says " << declaredSramPeakBytes << ")";
  os << "\n";
  if (verbose || sramPeakPerTile.size() <= 64) {
    os << "sram peak/tile:  ";
    for (int64_t b : sramPeakPerTile)
      os << " " << b;
    os << "\n";
  }
  os << "dma bytes:        " << dmaBytes << "\n";
  writeLinks(os, *this, verbose);
  writeChips(os, *this, verbose);
  writeKernels(os, *this, verbose);
  return os.str();
}

namespace {

Json unitJson(const UnitStats &u) {
  Json j;
  j["count"] = u.count;
  j["busy_cycles"] = u.busyCycles;
  j["utilisation"] = u.utilisation;
  return j;
}

Json linkJson(const LinkStats &l) {
  Json j;
  j["id"] = l.id;
  j["from_tile"] = l.fromTile;
  j["to_tile"] = l.toTile;
  j["bytes"] = l.bytes;
  j["busy_cycles"] = l.busyCycles;
  return j;
}

Json chipLinkJson(const LinkStats &l) {
  Json j;
  j["id"] = l.id;
  j["from_chip"] = l.fromChip;
  j["to_chip"] = l.toChip;
  j["bytes"] = l.bytes;
  j["busy_cycles"] = l.busyCycles;
  return j;
}

Json chipJson(const ChipStats &c) {
  Json j;
  j["chip"] = c.chip;
  j["busy_cycles"] = c.busyCycles;
  j["utilisation"] = c.utilisation;
  j["share"] = c.share;
  return j;
}

Json kernelJson(const KernelStats &k) {
  Json j;
  j["id"] = k.id;
  j["name"] = k.name;
  j["onnx_nodes"] = k.onnxNodes;
  j["start_cycle"] = k.startCycle;
  j["cycles"] = k.cycles();
  j["busy_cycles"] = k.busyCycles;
  j["instrs"] = k.numInstrs;
  j["estimated_cycles"] = k.estimatedCycles;
  j["simulated_cycles"] = k.simulatedCycles;
  j["hazards"] = k.hazards;
  return j;
}

} // namespace

std::string SimStats::toJson() const {
  Json j;
  j["model"] = model;
  j["target"] = target;
  j["clock_hz"] = clockHz;
  j["total_cycles"] = totalCycles;
  j["declared_total_cycles"] = declaredTotalCycles;
  j["simulated_total_cycles"] = simulatedTotalCycles;
  j["roofline_cycles"] = rooflineCycles;
  j["seconds"] = seconds;
  j["mapping"] = mapping;
  j["pipeline_groups"] = pipelineGroups;
  j["initiation_interval"] = initiationInterval;
  j["stream"] = stream;
  j["stream_cycles"] = streamCycles;
  j["instrs"] = numInstrs;
  Json unitsJson = Json::object();
  for (const UnitStats &u : units)
    unitsJson[unitName(u.unit)] = unitJson(u);
  j["units"] = std::move(unitsJson);
  j["sram_bytes_per_tile"] = sramBytesPerTile;
  j["sram_peak_bytes"] = sramPeakBytes;
  j["declared_sram_peak_bytes"] = declaredSramPeakBytes;
  j["sram_peak_per_tile"] = sramPeakPerTile;
  j["dma_bytes"] = dmaBytes;
  j["max_link_bytes"] = maxLinkBytes;
  Json linksJson = Json::array();
  for (const LinkStats &l : links)
    linksJson.push_back(linkJson(l));
  j["links"] = std::move(linksJson);
  j["chips"] = chips;
  Json chipsJson = Json::array();
  for (const ChipStats &c : chipStats)
    chipsJson.push_back(chipJson(c));
  j["per_chip"] = std::move(chipsJson);
  j["max_chip_link_bytes"] = maxChipLinkBytes;
  Json chipLinksJson = Json::array();
  for (const LinkStats &l : chipLinks)
    chipLinksJson.push_back(chipLinkJson(l));
  j["chip_links"] = std::move(chipLinksJson);
  Json kernelsJson = Json::array();
  for (const KernelStats &k : kernels)
    kernelsJson.push_back(kernelJson(k));
  j["kernels"] = std::move(kernelsJson);
  Json hazardsJson;
  hazardsJson["total"] = hazards;
  Json kinds = Json::object();
  for (int k = 0; k < kNumHazardKinds; ++k)
    kinds[hazardKindName(static_cast<HazardKind>(k))] = hazardsByKind[k];
  hazardsJson["by_kind"] = std::move(kinds);
  Json first = Json::array();
  for (const HazardRecord &r : hazardRecords)
    first.push_back({{"kind", hazardKindName(r.hazard.kind)},
                     {"instr", r.hazard.instr},
                     {"kernel", r.kernel},
                     {"cycle", r.hazard.cycle},
                     {"missing_cycles", r.hazard.missing},
                     {"message", r.message}});
  hazardsJson["first"] = std::move(first);
  j["hazards"] = std::move(hazardsJson);
  return dumpJson(j);
}

//===----------------------------------------------------------------------===//
// Simulator
//===----------------------------------------------------------------------===//

Simulator::Simulator(const Program &program, SimOptions options)
    : program_(program), options_(options) {}

std::vector<std::string> Simulator::inputNames() const {
  // A model input split across chips is several program inputs (parts) of
  // one name: the name is listed once.
  std::vector<std::string> names;
  for (int32_t id : program_.inputs) {
    const std::string &n = program_.tensor(id).name;
    if (std::find(names.begin(), names.end(), n) == names.end())
      names.push_back(n);
  }
  return names;
}

namespace {
/// The model-level shape of a part: its shape with the split axis times the
/// number of parts.
Shape wholeShape(const ProgramTensor &t) {
  Shape s = t.shape;
  if (t.isPart() && t.partAxis >= 0)
    s[t.partAxis] *= t.partCount;
  return s;
}
} // namespace

SimStats Simulator::checkSchedule() const {
  const Program &p = program_;
  std::vector<InstrTiming> rules;
  if (options_.verify) {
    verifyScheduleOrThrow(p, &rules);
  } else if (p.chip) {
    // Unverified (--no-verify), a kernel whose ops cannot be timed is
    // still reported against the file, as every error is.
    try {
      rules = instrTimings(p);
    } catch (const Error &e) {
      throw Error(p.path + ": " + e.what());
    }
  }
  Replay replay = replaySchedule(p, rules);
  if (options_.stopOnHazard && !replay.hazards.empty()) {
    std::string more;
    if (replay.hazards.size() > 1)
      more = " (and " + std::to_string(replay.hazards.size() - 1) +
             (replay.hazards.size() == 2 ? " more hazard" : " more hazards") +
             "; --hazards=count counts them and runs on)";
    throw Error(p.path + ": schedule hazard: " +
                describeHazard(p, replay.hazards.front()) + more);
  }
  return computeStats(p, replay);
}

SimResult Simulator::runTiming() const {
  SimResult r;
  r.stats = checkSchedule();
  return r;
}

SimResult Simulator::runFunctional(const std::vector<Tensor> &inputs,
                                   const FunctionalHooks &hooks) const {
  const Program &p = program_;
  std::vector<std::string> names = inputNames();
  if (inputs.size() != names.size())
    throw Error(p.path + ": the model has " + std::to_string(names.size()) +
                " inputs, got " + std::to_string(inputs.size()));
  std::map<std::string, Tensor> named;
  for (size_t i = 0; i < inputs.size(); ++i)
    named.emplace(names[i], inputs[i]);
  if (named.size() != names.size())
    throw Error(p.path + ": two model inputs share a name");
  return runFunctional(named, hooks);
}

/// Keeps freed tensor memory in the heap for reuse instead of returning it
/// to the kernel after every op: a functional run allocates and frees
/// activations of the same sizes over and over, and fresh pages cost a
/// fault and a clear each.
static void keepFreedMemory() {
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
  });
}

SimResult Simulator::runFunctional(const std::map<std::string, Tensor> &inputs,
                                   const FunctionalHooks &hooks) const {
  keepFreedMemory();
  const Program &p = program_;
  SimResult result;
  result.stats = checkSchedule();

  std::unordered_map<int32_t, Tensor> values;
  // Bind the inputs by name.
  std::string known;
  for (int32_t id : p.inputs)
    known += (known.empty() ? "'" : ", '") + p.tensor(id).name + "'";
  for (const auto &[name, value] : inputs) {
    bool found = false;
    for (int32_t id : p.inputs)
      found = found || p.tensor(id).name == name;
    if (!found)
      throw Error(p.path + ": unknown input '" + name +
                  "' (the model's inputs: " + known + ")");
  }
  for (int32_t id : p.inputs) {
    const ProgramTensor &t = p.tensor(id);
    auto it = inputs.find(t.name);
    if (it == inputs.end())
      throw Error(p.path + ": missing input '" + t.name + "'");
    const Tensor &v = it->second;
    Shape whole = wholeShape(t);
    if (v.dtype() != t.dtype || v.shape() != whole)
      throw Error(p.path + ": input '" + t.name + "' is " +
                  dtypeName(v.dtype()) + shapeToString(v.shape()) +
                  ", the model expects " + dtypeName(t.dtype) +
                  shapeToString(whole));
    if (t.isPart() && t.partAxis >= 0) {
      // The host scatters a split input: this chip's slice.
      int64_t size = t.shape[t.partAxis];
      values[id] = ref::slice(v, {t.partIndex * size},
                              {(t.partIndex + 1) * size}, {t.partAxis}, {1});
    } else {
      values[id] = v;
    }
    // An input stored narrow (a KV cache at fp8) holds its values rounded.
    if (t.storage != NumericFormat::F32)
      values[id] = roundToStorage(values[id], t.storage);
  }

  // Every tile runs its part of every kernel on its own buffers.
  std::map<int32_t, Tensor> computed =
      detail::runTilePrograms(p, values, hooks);
  auto fetch = [&](int32_t id, const std::string &where) -> Tensor {
    auto it = computed.find(id);
    if (it == computed.end())
      throw Error(p.path + ": " + where + ": " + describeTensor(p, id) +
                  " was not computed");
    return it->second;
  };

  // Outputs split across chips are gathered: the parts concatenated along
  // their axis (replicas: part 0), in the order of their first part.
  // Grouped by the outputs' names (by position: one tensor may be given as
  // two outputs).
  std::map<std::string, std::vector<const ProgramTensor *>> partsOf;
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const ProgramTensor &t = p.tensor(p.outputs[i]);
    if (t.isPart())
      partsOf[p.outputNames[i]].push_back(&t);
  }
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const int32_t id = p.outputs[i];
    const ProgramTensor &t = p.tensor(id);
    SimOutput out;
    out.name = p.outputNames[i];
    out.tensorId = id;
    if (!t.isPart()) {
      out.value = fetch(id, "program output");
    } else {
      std::vector<const ProgramTensor *> &parts = partsOf[out.name];
      if (parts.empty())
        continue; // gathered at its first part
      std::sort(parts.begin(), parts.end(),
                [](const ProgramTensor *a, const ProgramTensor *b) {
                  return a->partIndex < b->partIndex;
                });
      if (static_cast<int32_t>(parts.size()) != t.partCount)
        throw Error(p.path + ": output '" + out.name + "' has " +
                    std::to_string(parts.size()) + " parts, not " +
                    std::to_string(t.partCount));
      if (t.partAxis < 0) {
        out.value = fetch(parts.front()->id, "program output");
      } else {
        std::vector<Tensor> pieces;
        for (const ProgramTensor *part : parts)
          pieces.push_back(fetch(part->id, "program output"));
        out.value = ref::concat(pieces, t.partAxis);
      }
      parts.clear();
    }
    result.outputs.push_back(std::move(out));
  }
  return result;
}

namespace {

/// A metadata ('M') event at time 0 on track (`pid`, `tid`).
Json metaEvent(const char *name, int64_t pid, int64_t tid, Json args) {
  Json e;
  e["name"] = name;
  e["ph"] = "M";
  e["ts"] = 0;
  e["pid"] = pid;
  e["tid"] = tid;
  e["args"] = std::move(args);
  return e;
}

/// Names track `tid` of process `pid` (the process itself when `process`)
/// and sets its sort index.
void nameTrack(Json &events, bool process, int64_t pid, int64_t tid,
               const std::string &name, int64_t sortIndex) {
  events.push_back(metaEvent(process ? "process_name" : "thread_name", pid,
                             tid, Json{{"name", name}}));
  events.push_back(
      metaEvent(process ? "process_sort_index" : "thread_sort_index", pid,
                tid, Json{{"sort_index", sortIndex}}));
}

/// The trace process of a link: its chip for a mesh link; chip links share
/// one process after the chips.
int64_t linkPid(const Program &p, const ProgramLink &l) {
  return l.chipLink ? p.chips : p.chipOf(l.fromTile);
}

/// The trace process of an instr's track: its chip, or the chip links'.
int64_t tracePid(const Program &p, const ProgramInstr &in) {
  if (p.chips <= 1)
    return 0;
  if (isLinkUnit(in.unit))
    return linkPid(p, p.links[static_cast<size_t>(p.linkIndex(in.resource))]);
  return p.chipOf(in.resource);
}

/// Names the chips, every unit of every tile the schedule uses (an instr or
/// a buffer on it), every mesh link and every chip link.
void nameTracks(const Program &p, Json &events) {
  std::string target = p.targetName.empty() ? "" : " (" + p.targetName + ")";
  std::set<int64_t> usedTiles;
  for (const ProgramInstr &in : p.instrs)
    if (!isLinkUnit(in.unit))
      usedTiles.insert(in.resource);
  for (const ProgramBuffer &b : p.buffers)
    usedTiles.insert(b.tile);
  // One process per chip with a track, and one for the chip links.
  std::set<int64_t> pids;
  if (p.chips <= 1) {
    pids.insert(0);
  } else {
    for (int64_t t : usedTiles)
      pids.insert(p.chipOf(t));
    for (const ProgramLink &l : p.links)
      pids.insert(linkPid(p, l));
  }
  for (int64_t pid : pids)
    nameTrack(events, /*process=*/true, pid, 0,
              pid == p.chips ? std::string("chip links")
                             : "chip " + std::to_string(pid) + target,
              pid);
  for (int64_t t : usedTiles)
    for (int u = 0; u < kTileUnits; ++u) {
      int64_t tid = tileUnitSlot(t, static_cast<Unit>(u));
      nameTrack(events, /*process=*/false, p.chips <= 1 ? 0 : p.chipOf(t),
                tid, p.describeTile(t) + " " + unitName(static_cast<Unit>(u)),
                tid);
    }
  for (size_t i = 0; i < p.links.size(); ++i) {
    const ProgramLink &l = p.links[i];
    int64_t tid = p.numTiles() * kTileUnits + static_cast<int64_t>(i);
    std::string name =
        l.chipLink ? "chip " + std::to_string(l.fromChip) + " -> chip " +
                         std::to_string(l.toChip) + " (chip link " +
                         std::to_string(l.id) + ")"
                   : "link " + std::to_string(l.id) + " (tile " +
                         std::to_string(l.fromTile) + " -> tile " +
                         std::to_string(l.toTile) + ")";
    nameTrack(events, /*process=*/false, p.chips <= 1 ? 0 : linkPid(p, l), tid,
              name, tid);
  }
}

/// What the trace says about each instr: its dependency users, and for a
/// transfer's instr (kernel -1) the kernels on both ends, found through the
/// dependencies (its deps produce the data, its users consume it; a
/// transfer that depends on a transfer takes that one's producers, as far
/// as they are known when the instrs come in dependency order).
struct TraceIndex {
  /// Kernels named per end, at most (a hostile file may list thousands).
  static constexpr size_t kMaxEnds = 8;
  std::vector<std::vector<size_t>> users;
  std::vector<std::vector<int32_t>> fromKernels, toKernels;
  std::unordered_map<int32_t, size_t> kernelPos;

  explicit TraceIndex(const Program &p) {
    size_t n = p.instrs.size();
    users.resize(n);
    fromKernels.resize(n);
    toKernels.resize(n);
    for (size_t i = 0; i < p.kernels.size(); ++i)
      kernelPos.emplace(p.kernels[i].id, i);
    auto addOnce = [](std::vector<int32_t> &v, int32_t k) {
      if (k >= 0 && v.size() < kMaxEnds &&
          std::find(v.begin(), v.end(), k) == v.end())
        v.push_back(k);
    };
    for (size_t i = 0; i < n; ++i)
      for (int32_t d : p.instrs[i].deps) {
        size_t dp = static_cast<size_t>(p.instrIndex(d));
        users[dp].push_back(i);
        if (p.instrs[i].kernel < 0) {
          addOnce(fromKernels[i], p.instrs[dp].kernel);
          // A transfer fed by a transfer (a copy that crossed to this chip
          // and is passed on over the mesh) names the kernel that made it.
          if (p.instrs[dp].kernel < 0)
            for (int32_t k : fromKernels[dp])
              addOnce(fromKernels[i], k);
        }
        if (p.instrs[dp].kernel < 0)
          addOnce(toKernels[dp], p.instrs[i].kernel);
      }
  }
};

/// The complete ('X') event of one instr, named by its kernel; a transfer's
/// is named "transfer A -> B" by the kernels on both ends and carries their
/// ONNX nodes.
Json instrEvent(const Program &p, const TraceIndex &index, size_t pos,
                double usPerCycle, int64_t iteration, int64_t iterations) {
  const ProgramInstr &in = p.instrs[pos];
  int64_t shift = 0;
  if (__builtin_mul_overflow(iteration, p.initiationInterval, &shift))
    shift = std::numeric_limits<int64_t>::max() / 2;
  std::string name = "transfer";
  Json nodes = Json::array();
  Json args;
  if (in.kernel >= 0) {
    const ProgramKernel &k = p.kernels[index.kernelPos.at(in.kernel)];
    name = k.name;
    nodes = k.onnxNodes;
  } else {
    auto end = [&](const std::vector<int32_t> &ks, const char *none) {
      std::string s = ks.empty()
                          ? std::string(none)
                          : p.kernels[index.kernelPos.at(ks.front())].name;
      if (ks.size() > 1)
        s += " +" + std::to_string(ks.size() - 1);
      return s;
    };
    name = "transfer " + end(index.fromKernels[pos], "input") + " -> " +
           end(index.toKernels[pos], "output");
    std::set<std::string> seen;
    for (const auto *ks : {&index.fromKernels[pos], &index.toKernels[pos]})
      for (int32_t k : *ks)
        for (const std::string &node :
             p.kernels[index.kernelPos.at(k)].onnxNodes)
          if (seen.insert(node).second)
            nodes.push_back(node);
    args["from_kernels"] = index.fromKernels[pos];
    args["to_kernels"] = index.toKernels[pos];
  }
  args["onnx_nodes"] = std::move(nodes);
  args["kernel"] = name;
  args["kernel_id"] = in.kernel;
  args["bytes"] = in.bytes;
  args["instr"] = in.id;
  args["unit"] = unitName(in.unit);
  args["start_cycle"] = in.start + shift;
  args["cycles"] = in.duration;
  if (in.latency)
    args["arrives_cycle"] = in.arrival() + shift; // a chip link's message
  if (iterations > 1)
    args["iteration"] = iteration;
  Json e;
  e["name"] = std::move(name);
  e["cat"] = unitName(in.unit);
  e["ph"] = "X";
  e["ts"] = static_cast<double>(in.start + shift) * usPerCycle;
  e["dur"] = static_cast<double>(in.duration) * usPerCycle;
  e["pid"] = tracePid(p, in);
  e["tid"] = resourceSlot(p, in);
  e["args"] = std::move(args);
  return e;
}

/// A flow arrow from the middle of instr `from` to the middle of instr `to`
/// (each end binds to the instr's slice on its track).
void flowEvents(const Program &p, const ProgramInstr &from,
                const ProgramInstr &to, int64_t shift, double usPerCycle,
                int64_t id, Json &events) {
  auto mid = [&](const ProgramInstr &in) {
    return (static_cast<double>(in.start + shift) +
            0.5 * static_cast<double>(in.duration)) *
           usPerCycle;
  };
  for (int end = 0; end < 2; ++end) {
    const ProgramInstr &in = end == 0 ? from : to;
    Json e;
    e["name"] = "data";
    e["cat"] = "flow";
    e["ph"] = end == 0 ? "s" : "f";
    if (end == 1)
      e["bp"] = "e";
    e["id"] = id;
    e["ts"] = mid(in);
    e["pid"] = tracePid(p, in);
    e["tid"] = resourceSlot(p, in);
    events.push_back(std::move(e));
  }
}

} // namespace

std::string Simulator::traceJson(int64_t iterations) const {
  const Program &p = program_;
  Json j;
  j["displayTimeUnit"] = "ns";
  j["otherData"] = {{"model", p.model},
                    {"target", p.targetName},
                    {"clock_hz", p.clockHz}};
  Json events = Json::array();
  nameTracks(p, events);
  double usPerCycle = 1e6 / p.clockHz;
  iterations = std::max<int64_t>(1, iterations);
  TraceIndex index(p);
  int64_t flowId = 0;
  for (int64_t k = 0; k < iterations; ++k) {
    int64_t shift = 0;
    if (__builtin_mul_overflow(k, p.initiationInterval, &shift))
      shift = std::numeric_limits<int64_t>::max() / 2;
    for (size_t i = 0; i < p.instrs.size(); ++i) {
      const ProgramInstr &in = p.instrs[i];
      events.push_back(instrEvent(p, index, i, usPerCycle, k, iterations));
      // A transfer's DMA instr is linked to a kernel instr on each end: the
      // first dep that computed its data and the first user that reads it.
      if (in.kernel >= 0 || in.unit != Unit::Dma || in.duration <= 0)
        continue;
      for (int32_t d : in.deps) {
        const ProgramInstr &dep = p.instrs[static_cast<size_t>(p.instrIndex(d))];
        if (dep.kernel >= 0 && dep.duration > 0) {
          flowEvents(p, dep, in, shift, usPerCycle, flowId++, events);
          break;
        }
      }
      for (size_t u : index.users[i]) {
        const ProgramInstr &user = p.instrs[u];
        if (user.kernel >= 0 && user.duration > 0) {
          flowEvents(p, in, user, shift, usPerCycle, flowId++, events);
          break;
        }
      }
    }
  }
  j["traceEvents"] = std::move(events);
  return dumpJson(j);
}

void writeTextFile(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw Error(path + ": cannot write: " + std::strerror(errno));
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out)
    throw Error(path + ": cannot write: " + std::strerror(errno));
}

} // namespace loom::rt
