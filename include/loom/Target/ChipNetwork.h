//===- ChipNetwork.h - The chip-to-chip network of a system -----*- C++ -*-===//
//
// `ChipNetwork` is the graph of chip-to-chip links of a multi-chip system,
// built from a `TargetModel`: which chips are directly linked, at what
// bandwidth and latency, the route a transfer takes, and which collective
// algorithm fits a group of chips. The compiler routes transfers between
// chips with it and the cost model prices them.
//
// Links are directed bundles: one `Link` per ordered pair of directly linked
// chips, carrying all the physical links the topology gives that peer.
//
//   bytesPerCycle = physical links to the peer x bytes_per_second / clock_hz
//   latencyCycles = ceil(latency_seconds x clock_hz)
//   syncCycles    = ceil(sync_seconds x clock_hz): what the chips of a
//                   collective wait before its first exchange (the
//                   transfers lower-collectives marks, kCollectiveSyncAttr)
//
// The physical share may be fractional (a dragonfly's 48 global links over
// 31 peer nodes), so bandwidth is a double.
//
// Chips are split into link domains of `domain_chips` consecutive chips (the
// last one may be partial); each domain is wired as one instance of the
// topology over its own chips, where `m` is the domain's chip count:
//
// - None, or a single chip: no links.
// - Ring ("ring"): chip i <-> i+1 and i-1 (mod m), per_chip/2 links to each;
//   for m == 2 the neighbours coincide and all per_chip links go to it.
//   Routes go the shorter way round, ties clockwise (increasing index).
// - Torus2D ("torus"): the squarest r x c grid with r x c == m, r <= c, chip
//   i at row i / c, column i % c; four neighbours with wrap-around,
//   per_chip/4 each. A dimension of 2 gives its one neighbour both shares
//   (per_chip/2); a dimension of 1 has no links and its share is unused.
//   Dimension-order routing: along the row to the destination's column
//   first, then along the column; each the shorter way round, ties to
//   increasing index.
// - FullyConnected ("direct"): every pair linked, per_chip/(m-1) each.
// - Dragonfly: groups of chips_per_node chips (the nodes) fully connected
//   inside with half the links, per_chip/2/(cpn-1) to each peer ("local");
//   the other half are global links, chip j of one group to chip j of every
//   other group, per_chip/2/(groups-1) each ("global"). A single group uses
//   all links locally, per_chip/(cpn-1); groups of one chip use all links
//   globally, per_chip/(groups-1). Route: same group direct; same
//   local index one global hop; else a local hop to this group's chip with
//   the destination's index, then the global hop (the global hop first when
//   that chip is missing from a partial last group).
//   With `system.links.routing` "adaptive", a large message between nodes
//   may also take the two-hop routes through every other node's chip of
//   the same index (Valiant; UGAL picks them when the minimal route is
//   slower). The chips are split into traffic blocks of `blockChips`
//   consecutive chips (a tensor-parallel group), whose nodes exchange the
//   bulk of the traffic; every block of the system is taken to do the same
//   (a pipeline of such groups). When each node sends to k others, Valiant
//   spreads every pair's bytes over all G - 1 global paths, loading each
//   global link with the first hops of its sender's traffic and the
//   second hops of its receiver's, so a pair gets half the chip's global
//   links over k. A global bundle between two nodes of one block therefore
//   gets an adaptive alternative when that beats minimal's share:
//     adaptive = per_chip/2 / (2k) links, latency two global hops,
//   k the block's other nodes in the bundle's domain (a block must be
//   whole nodes; one that splits a node gets none), scaled by paths / (G -
//   1) for an index a partial last group lacks (one two-hop path fewer).
//   The bundle from a chip to the same chip of the next block (a pipeline
//   stage's hand-off, each node of a block sending to its one counterpart
//   node) gets the alternative with k = 1.
//   A transfer over a route takes whichever
//   finishes first for its bytes (timing()): small messages stay minimal,
//   large ones pay the second hop's latency for the bandwidth. Not modelled:
//   the intermediate chips' own links (the fluid share stands for them),
//   non-minimal routes between chips of different index.
// - Switch ("switch"): every pair one hop apart, per_chip x bytes_per_second
//   / (m-1) each: the chip's port divided among its peers when all talk at
//   once. A lone pair could use the whole port; that is not modelled.
//
// Domains: chips in different domains are joined only by scale-out, when the
// target has it: one "scale_out" bundle between same-index chips of every
// pair of domains, at the chip's full scale_out.bytes_per_second (not divided
// among domains) and scale_out latency. A route between domains goes inside
// the source domain to the destination's index, then crosses (crossing first
// when that chip is missing from a partial last domain). Without scale-out
// all chips form one bigger instance of the topology: 1024 chips of lpx-rack
// are one dragonfly of 128 groups.
//
// `chips` may exceed target.chips(): the system is then several copies of the
// target's system. Fewer chips than a domain form a smaller instance of the
// topology over the chips present (8 chips of lpx-rack: one dragonfly group).
// Memory is one Link per bundle, so O(chips x peers); fully connected or switch
// domains of m chips store m(m-1) bundles each.
//
// Preconditions are asserted, not reported (this library does not throw):
// chips >= 1, chip ids in [0, chips()), link ids in [0, numLinks()).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TARGET_CHIPNETWORK_H
#define LOOM_TARGET_CHIPNETWORK_H

#include "loom/Target/Collective.h"
#include "loom/Target/TargetModel.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace loom {

/// On a spatial.transfer that lower-collectives made: the transfer is one
/// of a collective's first exchange, which waits the chips' synchronisation
/// (ChipNetwork::syncCycles) before its message arrives. Set only when the
/// target has a synchronisation (system.links.sync_seconds > 0).
inline constexpr const char *kCollectiveSyncAttr = "spatial.collective_sync";

/// The chip-to-chip links of `chips` chips of a target, with routes.
class ChipNetwork {
public:
  /// The network joining `chips` chips of `target` (chips >= 1; it may exceed
  /// target.chips(), see the file comment). With `systemChips` > `chips` the
  /// chips are the first `chips` of a system of `systemChips`: only their
  /// links exist, but each link carries the share of the chip's physical
  /// links it has in the whole system (a dragonfly's local links keep half
  /// when the system has other groups; a fully connected or switched
  /// domain splits the links over all its chips; domains and scale-out
  /// follow the system). Ring and torus keep the present chips' smaller
  /// instance. The planner prices a slice of a system (one layer on its
  /// tensor-parallel group) this way.
  ///
  /// `blockChips` (>= 0; 0: unknown) is the traffic block of adaptive
  /// routing (the file comment): the tensor-parallel group's chips. A
  /// network of the first chips of a bigger system (a slice, `systemChips`
  /// > `chips`) with no block given is one block.
  ChipNetwork(const TargetModel &target, int64_t chips, int64_t systemChips = 0,
              int64_t blockChips = 0);

  /// One direction of the bundle of physical links between two chips.
  struct Link {
    int64_t id = 0;
    int64_t from = 0;
    int64_t to = 0;
    /// Bytes per cycle of the chip clock, all physical links of the bundle.
    double bytesPerCycle = 0;
    int64_t latencyCycles = 0;
    /// "ring", "torus", "direct", "local", "global", "switch", "scale_out".
    const char *kind = "";
    /// Adaptive routing's alternative for a global bundle inside a traffic
    /// block (the file comment): its bandwidth and latency; 0 when the
    /// bundle has none.
    double adaptiveBytesPerCycle = 0;
    int64_t adaptiveLatencyCycles = 0;
  };

  /// How a message of `bytes` crosses a route (link ids in order): at the
  /// slowest link's rate, after the links' summed latency, over the
  /// minimal routes or, where links have an adaptive alternative and that
  /// finishes first, over it. cycles() is latency + bytes / rate.
  struct Timing {
    double bytesPerCycle = 0;
    int64_t latencyCycles = 0;
    bool adaptive = false;
    double cycles(int64_t bytes) const {
      return double(latencyCycles) + double(bytes) / bytesPerCycle;
    }
  };
  /// Requires a non-empty route of valid link ids.
  Timing timing(std::span<const int64_t> route, int64_t bytes) const;
  /// system.links.sync_seconds in whole cycles of the chip clock: added to
  /// the arrival of a collective's first exchange.
  int64_t syncCycles() const { return syncCycles_; }
  /// The traffic block's chips (0 when adaptive routing has none).
  int64_t blockChips() const { return blockChips_; }

  int64_t chips() const { return chips_; }
  /// The system the chips are the first of (chips() when alone).
  int64_t systemChips() const { return systemChips_; }
  int64_t numLinks() const { return static_cast<int64_t>(links_.size()); }
  const Link &link(int64_t id) const;
  /// The links leaving `chip`, sorted by destination.
  std::span<const Link> linksFrom(int64_t chip) const;

  /// Chips per link domain (all chips when the domains are not joined by
  /// scale-out, see the file comment).
  int64_t domainChips() const { return domainChips_; }
  /// The link domain of a chip.
  int64_t domain(int64_t chip) const;
  /// Node (chips_per_node chips) of a chip; chips are numbered node-major.
  int64_t node(int64_t chip) const;
  /// True if every chip can reach every other (false only for several chips
  /// of a target without links).
  bool connected() const;

  /// Deterministic minimal route from chip a to chip b: link ids in order.
  /// Empty if a == b. Requires connected(). O(hops x log(peers)).
  std::vector<int64_t> route(int64_t a, int64_t b) const;
  /// Links on route(a, b).
  int64_t hops(int64_t a, int64_t b) const;
  /// The link a->b if the chips are directly connected, else -1.
  int64_t linkBetween(int64_t a, int64_t b) const;

  /// Which collective algorithm fits a group of chips (sorted, distinct chip
  /// ids): Direct when every pair in the group is directly linked (so any
  /// group of one), Ring when consecutive members are linked, last to first
  /// too, else Hierarchical (direct inside each node, then across nodes).
  CollectiveAlgorithm
  collectiveAlgorithm(const std::vector<int64_t> &group) const;

  /// Cycles of the chip clock to move `bytes` from a to b along route(a, b):
  /// the sum of the links' latencies plus bytes / the slowest link's
  /// bytesPerCycle (a pipelined, store-and-forward-free transfer), or the
  /// adaptive alternative's when faster (timing()). 0 if a == b.
  double transferCycles(int64_t a, int64_t b, int64_t bytes) const;

  /// The topology inside a link domain, as the JSON spells it ("ring",
  /// "dragonfly", ...); "none" for a single chip.
  std::string topologyName() const;

private:
  /// Appends the links leaving `chip` inside its domain and across domains.
  void addLinksFrom(int64_t chip);
  /// Chips in domain `d` (the last may be partial).
  int64_t domainSize(int64_t d) const;
  /// Chips of domain `d` in the whole system (systemChips_), which set the
  /// links' bandwidth shares.
  int64_t systemDomainSize(int64_t d) const;
  /// Route between two chips of the same domain, appended to `out`.
  void routeInDomain(int64_t a, int64_t b, std::vector<int64_t> &out) const;
  /// Appends the link a->b, which must exist.
  void appendLink(int64_t a, int64_t b, std::vector<int64_t> &out) const;

  int64_t chips_ = 1;
  /// The system the chips are part of (>= chips_).
  int64_t systemChips_ = 1;
  Topology topology_ = Topology::None;
  int64_t domainChips_ = 1;
  int64_t domains_ = 1;
  int64_t chipsPerNode_ = 1;
  /// Dragonfly group size inside a domain: min(chips_per_node, domainChips).
  int64_t groupChips_ = 1;
  bool scaleOut_ = false;
  /// Per-link figures, copied from the target at construction.
  int64_t linksPerChip_ = 0;
  double linkBytesPerCycle_ = 0;
  int64_t linkLatencyCycles_ = 0;
  int64_t syncCycles_ = 0;
  double scaleOutBytesPerCycle_ = 0;
  int64_t scaleOutLatencyCycles_ = 0;
  /// Adaptive routing's traffic block (0: minimal routing only).
  int64_t blockChips_ = 0;

  /// All links, grouped by source chip and sorted by destination within a
  /// chip: links of chip c are [firstLink_[c], firstLink_[c + 1]).
  std::vector<Link> links_;
  std::vector<int64_t> firstLink_;
};

} // namespace loom

#endif // LOOM_TARGET_CHIPNETWORK_H
