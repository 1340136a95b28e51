//===- ChipNetwork.cpp - The chip-to-chip network of a system -------------===//
//
// The wiring and routing rules are documented in ChipNetwork.h and in
// docs/targets.md ("Chip-to-chip network model"); keep the three in step.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/ChipNetwork.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace loom {

namespace {

int64_t cyclesCeil(double seconds, double hz) {
  return TargetModel::cyclesCeil(seconds, hz);
}

/// The squarest rows x cols grid with rows x cols == chips, rows <= cols.
struct TorusGrid {
  int64_t rows = 1;
  int64_t cols = 1;
};

TorusGrid torusGrid(int64_t chips) {
  int64_t rows = static_cast<int64_t>(std::sqrt(static_cast<double>(chips)));
  while ((rows + 1) * (rows + 1) <= chips) {
    ++rows;
  }
  while (rows > 1 && (rows * rows > chips || chips % rows != 0)) {
    --rows;
  }
  rows = std::max<int64_t>(rows, 1);
  return {rows, chips / rows};
}

/// Dragonfly groups of one domain of `chips` chips.
struct DragonflyGroups {
  /// Chips per group (the last group may be partial).
  int64_t size = 1;
  int64_t count = 1;
};

DragonflyGroups dragonflyGroups(int64_t groupChips, int64_t chips) {
  int64_t size = std::min(groupChips, chips);
  return {size, (chips + size - 1) / size};
}

/// The first step from `from` to `to` on a cycle of `size` positions: the
/// shorter way round, ties to increasing index. Returns +1, -1 or 0.
int64_t cycleStep(int64_t from, int64_t to, int64_t size) {
  if (from == to) {
    return 0;
  }
  int64_t forward = ((to - from) % size + size) % size;
  return forward <= size - forward ? 1 : -1;
}

int64_t wrap(int64_t index, int64_t size) {
  return ((index % size) + size) % size;
}

} // namespace

ChipNetwork::ChipNetwork(const TargetModel &target, int64_t chips,
                         int64_t systemChips, int64_t blockChips)
    : chips_(chips), systemChips_(std::max(chips, systemChips)) {
  assert(chips >= 1 && "a chip network needs at least one chip");
  const rt::SystemDesc &system = target.desc().system;
  topology_ = system.links.topology;
  chipsPerNode_ = std::max<int64_t>(system.chipsPerNode, 1);
  linksPerChip_ = system.links.perChip;
  linkBytesPerCycle_ = system.links.bytesPerSecond / target.clockHz();
  linkLatencyCycles_ =
      cyclesCeil(system.links.latencySeconds, target.clockHz());
  syncCycles_ = cyclesCeil(system.links.syncSeconds, target.clockHz());

  // Domains are joined by scale-out only when the target has it; otherwise
  // the whole set is one bigger instance of the topology.
  int64_t targetDomain = std::max<int64_t>(target.linkDomainChips(), 1);
  if (systemChips_ <= targetDomain || !system.scaleOut) {
    domainChips_ = systemChips_;
  } else {
    domainChips_ = targetDomain;
    scaleOut_ = true;
    scaleOutBytesPerCycle_ = system.scaleOut->bytesPerSecond / target.clockHz();
    scaleOutLatencyCycles_ =
        cyclesCeil(system.scaleOut->latencySeconds, target.clockHz());
  }
  domains_ = (chips + domainChips_ - 1) / domainChips_;
  groupChips_ = std::min(chipsPerNode_, domainChips_);
  if (system.links.adaptiveRouting && topology_ == Topology::Dragonfly) {
    blockChips_ = blockChips > 0 ? blockChips
                  : systemChips_ > chips_ ? chips_
                                          : 0;
  }

  firstLink_.reserve(chips + 1);
  for (int64_t chip = 0; chip < chips; ++chip) {
    firstLink_.push_back(numLinks());
    addLinksFrom(chip);
  }
  firstLink_.push_back(numLinks());
}

int64_t ChipNetwork::domainSize(int64_t d) const {
  return std::min(domainChips_, chips_ - d * domainChips_);
}

int64_t ChipNetwork::systemDomainSize(int64_t d) const {
  return std::min(domainChips_, systemChips_ - d * domainChips_);
}

void ChipNetwork::addLinksFrom(int64_t chip) {
  int64_t d = chip / domainChips_;
  int64_t base = d * domainChips_;
  int64_t offset = chip - base;
  int64_t m = domainSize(d);
  double perChip = static_cast<double>(linksPerChip_);
  size_t first = links_.size();

  // `physicalLinks` of the chip's links go to the chip at domain offset
  // `peer`.
  auto addInDomain = [&](int64_t peer, double physicalLinks, const char *kind) {
    Link link;
    link.from = chip;
    link.to = base + peer;
    link.bytesPerCycle = physicalLinks * linkBytesPerCycle_;
    link.latencyCycles = linkLatencyCycles_;
    link.kind = kind;
    links_.push_back(link);
  };

  switch (topology_) {
  case Topology::None:
    break;
  case Topology::Ring:
    if (m == 2) {
      addInDomain(1 - offset, perChip, "ring");
    } else if (m > 2) {
      addInDomain(wrap(offset + 1, m), perChip / 2, "ring");
      addInDomain(wrap(offset - 1, m), perChip / 2, "ring");
    }
    break;
  case Topology::Torus2D: {
    TorusGrid grid = torusGrid(m);
    int64_t row = offset / grid.cols;
    int64_t col = offset % grid.cols;
    // Each dimension owns half the links: per_chip/4 to each of its two
    // neighbours, or per_chip/2 to its one neighbour when it has size 2.
    if (grid.cols == 2) {
      addInDomain(row * grid.cols + (1 - col), perChip / 2, "torus");
    } else if (grid.cols > 2) {
      addInDomain(row * grid.cols + wrap(col + 1, grid.cols), perChip / 4,
                  "torus");
      addInDomain(row * grid.cols + wrap(col - 1, grid.cols), perChip / 4,
                  "torus");
    }
    if (grid.rows == 2) {
      addInDomain((1 - row) * grid.cols + col, perChip / 2, "torus");
    } else if (grid.rows > 2) {
      addInDomain(wrap(row + 1, grid.rows) * grid.cols + col, perChip / 4,
                  "torus");
      addInDomain(wrap(row - 1, grid.rows) * grid.cols + col, perChip / 4,
                  "torus");
    }
    break;
  }
  case Topology::FullyConnected:
  case Topology::Switch: {
    const char *kind = topology_ == Topology::Switch ? "switch" : "direct";
    int64_t ms = systemDomainSize(d);
    for (int64_t peer = 0; peer < m; ++peer) {
      if (peer != offset) {
        addInDomain(peer, perChip / static_cast<double>(ms - 1), kind);
      }
    }
    break;
  }
  case Topology::Dragonfly: {
    DragonflyGroups groups = dragonflyGroups(groupChips_, m);
    // The shares follow the whole system's groups.
    DragonflyGroups all = dragonflyGroups(groupChips_, systemDomainSize(d));
    int64_t group = offset / groups.size;
    int64_t index = offset % groups.size;
    // Half the links stay in the group and half go to other groups; a
    // single group keeps them all, a group of one chip sends them all out.
    double localLinks = all.count == 1  ? perChip
                        : all.size == 1 ? 0.0
                                        : perChip / 2;
    double globalLinks = all.size == 1 ? perChip : perChip / 2;
    int64_t groupEnd = std::min((group + 1) * groups.size, m);
    for (int64_t peer = group * groups.size; peer < groupEnd; ++peer) {
      if (peer != offset) {
        addInDomain(peer, localLinks / static_cast<double>(all.size - 1),
                    "local");
      }
    }
    // Adaptive routing: the part of this chip's block in its domain (whole
    // nodes: a block that splits a node has none), the nodes it spans, and
    // the pair's Valiant share when both ends are in it (the file
    // comment), over the two-hop paths this index has in the system's
    // groups (a partial last group may lack it).
    int64_t blockFirst = 0, blockEnd = 0, partners = 0;
    if (blockChips_ > 0 && blockChips_ % all.size == 0) {
      const int64_t start = chip / blockChips_ * blockChips_ - base;
      blockFirst = std::max<int64_t>(0, start);
      blockEnd = std::min(start + blockChips_, m);
      partners = (blockEnd - 1) / all.size - blockFirst / all.size;
    }
    const int64_t systemM = systemDomainSize(d);
    const int64_t paths =
        all.count - 1 - (index >= systemM - (all.count - 1) * all.size ? 1 : 0);
    for (int64_t other = 0; other < groups.count; ++other) {
      int64_t peer = other * groups.size + index;
      if (other != group && peer < m) {
        double minimal = globalLinks / static_cast<double>(all.count - 1);
        addInDomain(peer, minimal, "global");
        // k, the nodes this node sends to: the block's other nodes, or for
        // a pipeline's hand-off (the same chip of the next block) the one
        // counterpart node.
        const bool inBlock = peer >= blockFirst && peer < blockEnd;
        const bool nextStage =
            blockEnd > blockFirst && peer == offset + blockChips_;
        const int64_t k = nextStage ? 1 : inBlock ? partners : 0;
        const double valiant =
            k > 0 ? minimal * double(paths) / (2.0 * double(k)) : 0.0;
        if (valiant > minimal) {
          links_.back().adaptiveBytesPerCycle = valiant * linkBytesPerCycle_;
          links_.back().adaptiveLatencyCycles = 2 * linkLatencyCycles_;
        }
      }
    }
    break;
  }
  }

  if (scaleOut_) {
    for (int64_t other = 0; other < domains_; ++other) {
      if (other == d || offset >= domainSize(other)) {
        continue;
      }
      Link link;
      link.from = chip;
      link.to = other * domainChips_ + offset;
      link.bytesPerCycle = scaleOutBytesPerCycle_;
      link.latencyCycles = scaleOutLatencyCycles_;
      link.kind = "scale_out";
      links_.push_back(link);
    }
  }

  // linkBetween binary-searches a chip's links by destination.
  std::sort(links_.begin() + first, links_.end(),
            [](const Link &x, const Link &y) { return x.to < y.to; });
  for (size_t i = first; i < links_.size(); ++i) {
    links_[i].id = static_cast<int64_t>(i);
    assert((i == first || links_[i - 1].to != links_[i].to) &&
           "one bundle per ordered pair of chips");
  }
}

const ChipNetwork::Link &ChipNetwork::link(int64_t id) const {
  assert(id >= 0 && id < numLinks() && "link id out of range");
  return links_[id];
}

std::span<const ChipNetwork::Link> ChipNetwork::linksFrom(int64_t chip) const {
  assert(chip >= 0 && chip < chips_ && "chip id out of range");
  return std::span<const Link>(links_.data() + firstLink_[chip],
                               links_.data() + firstLink_[chip + 1]);
}

int64_t ChipNetwork::domain(int64_t chip) const {
  assert(chip >= 0 && chip < chips_ && "chip id out of range");
  return chip / domainChips_;
}

int64_t ChipNetwork::node(int64_t chip) const {
  assert(chip >= 0 && chip < chips_ && "chip id out of range");
  return chip / chipsPerNode_;
}

bool ChipNetwork::connected() const {
  // Every topology but None links all chips of a domain, and scale-out (the
  // only way to have several domains) links the domains.
  return topology_ != Topology::None || domainChips_ == 1;
}

int64_t ChipNetwork::linkBetween(int64_t a, int64_t b) const {
  std::span<const Link> out = linksFrom(a);
  assert(b >= 0 && b < chips_ && "chip id out of range");
  auto it = std::lower_bound(
      out.begin(), out.end(), b,
      [](const Link &link, int64_t chip) { return link.to < chip; });
  if (it == out.end() || it->to != b) {
    return -1;
  }
  return it->id;
}

void ChipNetwork::appendLink(int64_t a, int64_t b,
                             std::vector<int64_t> &out) const {
  int64_t id = linkBetween(a, b);
  assert(id >= 0 && "route step between chips that are not linked");
  out.push_back(id);
}

void ChipNetwork::routeInDomain(int64_t a, int64_t b,
                                std::vector<int64_t> &out) const {
  if (a == b) {
    return;
  }
  int64_t d = a / domainChips_;
  int64_t base = d * domainChips_;
  int64_t from = a - base;
  int64_t to = b - base;
  int64_t m = domainSize(d);

  switch (topology_) {
  case Topology::None:
    assert(false && "no links to route over");
    return;
  case Topology::Ring: {
    int64_t step = cycleStep(from, to, m);
    for (int64_t at = from; at != to; at = wrap(at + step, m)) {
      appendLink(base + at, base + wrap(at + step, m), out);
    }
    return;
  }
  case Topology::Torus2D: {
    TorusGrid grid = torusGrid(m);
    int64_t row = from / grid.cols;
    int64_t col = from % grid.cols;
    int64_t toRow = to / grid.cols;
    int64_t toCol = to % grid.cols;
    // Along the row to the destination's column, then along that column.
    int64_t step = cycleStep(col, toCol, grid.cols);
    while (col != toCol) {
      int64_t next = wrap(col + step, grid.cols);
      appendLink(base + row * grid.cols + col, base + row * grid.cols + next,
                 out);
      col = next;
    }
    step = cycleStep(row, toRow, grid.rows);
    while (row != toRow) {
      int64_t next = wrap(row + step, grid.rows);
      appendLink(base + row * grid.cols + col, base + next * grid.cols + col,
                 out);
      row = next;
    }
    return;
  }
  case Topology::FullyConnected:
  case Topology::Switch:
    appendLink(a, b, out);
    return;
  case Topology::Dragonfly: {
    DragonflyGroups groups = dragonflyGroups(groupChips_, m);
    int64_t fromGroup = from / groups.size;
    int64_t toGroup = to / groups.size;
    if (fromGroup == toGroup || from % groups.size == to % groups.size) {
      appendLink(a, b, out);
      return;
    }
    // Local hop to this group's chip with the destination's index, then the
    // global hop; global first when that chip is missing from a partial
    // last group.
    int64_t viaLocal = fromGroup * groups.size + to % groups.size;
    int64_t via =
        viaLocal < m ? viaLocal : toGroup * groups.size + from % groups.size;
    appendLink(a, base + via, out);
    appendLink(base + via, b, out);
    return;
  }
  }
}

std::vector<int64_t> ChipNetwork::route(int64_t a, int64_t b) const {
  assert(a >= 0 && a < chips_ && b >= 0 && b < chips_ &&
         "chip id out of range");
  std::vector<int64_t> out;
  if (a == b) {
    return out;
  }
  assert(connected() && "route in a network without links");
  if (!connected()) {
    return out;
  }
  int64_t fromDomain = a / domainChips_;
  int64_t toDomain = b / domainChips_;
  if (fromDomain == toDomain) {
    routeInDomain(a, b, out);
    return out;
  }
  // Inside the source domain to the destination's index, then scale-out;
  // scale-out first when that chip is missing from a partial last domain.
  int64_t toIndex = b - toDomain * domainChips_;
  if (toIndex < domainSize(fromDomain)) {
    int64_t via = fromDomain * domainChips_ + toIndex;
    routeInDomain(a, via, out);
    appendLink(via, b, out);
    return out;
  }
  int64_t via = toDomain * domainChips_ + (a - fromDomain * domainChips_);
  appendLink(a, via, out);
  routeInDomain(via, b, out);
  return out;
}

int64_t ChipNetwork::hops(int64_t a, int64_t b) const {
  return static_cast<int64_t>(route(a, b).size());
}

CollectiveAlgorithm
ChipNetwork::collectiveAlgorithm(const std::vector<int64_t> &group) const {
  assert(std::is_sorted(group.begin(), group.end()) &&
         std::adjacent_find(group.begin(), group.end()) == group.end() &&
         "a collective group is sorted, distinct chip ids");
  size_t n = group.size();
  bool allLinked = true;
  for (size_t i = 0; i < n && allLinked; ++i) {
    for (size_t j = i + 1; j < n && allLinked; ++j) {
      allLinked = linkBetween(group[i], group[j]) >= 0;
    }
  }
  if (allLinked) {
    return CollectiveAlgorithm::Direct;
  }
  for (size_t i = 0; i < n; ++i) {
    if (linkBetween(group[i], group[(i + 1) % n]) < 0) {
      return CollectiveAlgorithm::Hierarchical;
    }
  }
  return CollectiveAlgorithm::Ring;
}

ChipNetwork::Timing ChipNetwork::timing(std::span<const int64_t> route,
                                        int64_t bytes) const {
  assert(!route.empty() && "timing of an empty route");
  Timing minimal, adaptive;
  minimal.bytesPerCycle = adaptive.bytesPerCycle =
      std::numeric_limits<double>::infinity();
  adaptive.adaptive = true;
  bool any = false;
  for (int64_t id : route) {
    const Link &l = link(id);
    minimal.latencyCycles += l.latencyCycles;
    minimal.bytesPerCycle = std::min(minimal.bytesPerCycle, l.bytesPerCycle);
    bool alt = l.adaptiveBytesPerCycle > 0;
    any = any || alt;
    adaptive.latencyCycles += alt ? l.adaptiveLatencyCycles : l.latencyCycles;
    adaptive.bytesPerCycle = std::min(
        adaptive.bytesPerCycle, alt ? l.adaptiveBytesPerCycle : l.bytesPerCycle);
  }
  return any && adaptive.cycles(bytes) < minimal.cycles(bytes) ? adaptive
                                                               : minimal;
}

double ChipNetwork::transferCycles(int64_t a, int64_t b, int64_t bytes) const {
  std::vector<int64_t> path = route(a, b);
  if (path.empty()) {
    return 0;
  }
  return timing(path, bytes).cycles(bytes);
}

std::string ChipNetwork::topologyName() const {
  if (chips_ == 1) {
    return "none";
  }
  return rt::topologyName(topology_);
}

} // namespace loom
