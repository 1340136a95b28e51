//===- ChipNetworkTest.cpp - Chip-to-chip links, routes, collectives ------===//

#include "loom/Target/ChipNetwork.h"

#include "TargetHelpers.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>

using namespace loom;
using loom::testing::loadTarget;

namespace {

/// `tiny` with its system edited by `edit`, validated.
template <typename Edit> TargetModel editedTiny(Edit edit) {
  TargetDesc desc = loadTarget("tiny").desc();
  edit(desc.system);
  std::string error;
  std::optional<TargetModel> target = TargetModel::fromDesc(desc, error);
  return loom::testing::requireTarget(std::move(target), error);
}

/// The chips a route visits, starting at its source.
std::vector<int64_t> routeChips(const ChipNetwork &network, int64_t a,
                                int64_t b) {
  std::vector<int64_t> chips = {a};
  for (int64_t id : network.route(a, b)) {
    chips.push_back(network.link(id).to);
  }
  return chips;
}

std::vector<int64_t> iota(int64_t first, int64_t count) {
  std::vector<int64_t> chips(count);
  std::iota(chips.begin(), chips.end(), first);
  return chips;
}

/// Every route is a chain of links from a to b no longer than `maxHops`,
/// and every link has its reverse.
void expectWellFormed(const ChipNetwork &network, int64_t maxHops) {
  for (int64_t id = 0; id < network.numLinks(); ++id) {
    const ChipNetwork::Link &link = network.link(id);
    ASSERT_EQ(link.id, id);
    ASSERT_GT(link.bytesPerCycle, 0) << link.from << "->" << link.to;
    ASSERT_EQ(network.linkBetween(link.from, link.to), id);
    int64_t reverse = network.linkBetween(link.to, link.from);
    ASSERT_GE(reverse, 0) << link.from << "->" << link.to;
    ASSERT_DOUBLE_EQ(network.link(reverse).bytesPerCycle, link.bytesPerCycle);
  }
  for (int64_t a = 0; a < network.chips(); ++a) {
    for (int64_t b = 0; b < network.chips(); ++b) {
      std::vector<int64_t> path = network.route(a, b);
      int64_t at = a;
      for (int64_t id : path) {
        ASSERT_EQ(network.link(id).from, at) << a << "->" << b;
        at = network.link(id).to;
      }
      ASSERT_EQ(at, b);
      ASSERT_LE(static_cast<int64_t>(path.size()), maxHops) << a << "->" << b;
      ASSERT_EQ(network.hops(a, b), static_cast<int64_t>(path.size()));
      ASSERT_EQ(path.size() == 1, network.linkBetween(a, b) >= 0)
          << a << "->" << b << ": a direct link must be the route";
    }
  }
}

TEST(ChipNetwork, TinyRingLinksAndShares) {
  ChipNetwork network(loadTarget("tiny"), 4);
  EXPECT_EQ(network.chips(), 4);
  EXPECT_EQ(network.topologyName(), "ring");
  EXPECT_TRUE(network.connected());
  ASSERT_EQ(network.numLinks(), 8);
  // 4 links of 10 GB/s at 1 GHz, half to each neighbour: 2 x 10 B/cycle.
  int64_t id = network.linkBetween(0, 1);
  ASSERT_GE(id, 0);
  EXPECT_DOUBLE_EQ(network.link(id).bytesPerCycle, 20.0);
  EXPECT_EQ(network.link(id).latencyCycles, 1000);
  EXPECT_STREQ(network.link(id).kind, "ring");
  EXPECT_GE(network.linkBetween(0, 3), 0);
  EXPECT_EQ(network.linkBetween(0, 2), -1);
  EXPECT_EQ(network.linkBetween(1, 3), -1);
  EXPECT_EQ(network.node(3), 0);
  expectWellFormed(network, 2);
}

TEST(ChipNetwork, TinyRingRoutesShorterWayTiesClockwise) {
  ChipNetwork network(loadTarget("tiny"), 4);
  EXPECT_TRUE(network.route(2, 2).empty());
  EXPECT_EQ(routeChips(network, 0, 1), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(routeChips(network, 0, 3), (std::vector<int64_t>{0, 3}));
  // Two hops either way: clockwise, through increasing indices.
  EXPECT_EQ(routeChips(network, 0, 2), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(routeChips(network, 3, 1), (std::vector<int64_t>{3, 0, 1}));
  EXPECT_EQ(network.hops(0, 2), 2);
  EXPECT_EQ(network.hops(1, 0), 1);
  // Two 1000-cycle hops plus 1000 B at 20 B/cycle.
  EXPECT_DOUBLE_EQ(network.transferCycles(0, 2, 1000), 2050.0);
  EXPECT_DOUBLE_EQ(network.transferCycles(1, 1, 1000), 0.0);
}

TEST(ChipNetwork, TinyRingCollectives) {
  ChipNetwork network(loadTarget("tiny"), 4);
  EXPECT_EQ(network.collectiveAlgorithm({0, 1, 2, 3}),
            CollectiveAlgorithm::Ring);
  EXPECT_EQ(network.collectiveAlgorithm({0, 1}), CollectiveAlgorithm::Direct);
  EXPECT_EQ(network.collectiveAlgorithm({3}), CollectiveAlgorithm::Direct);
  EXPECT_EQ(network.collectiveAlgorithm({0, 2}),
            CollectiveAlgorithm::Hierarchical);
  EXPECT_EQ(network.collectiveAlgorithm({0, 1, 2}),
            CollectiveAlgorithm::Hierarchical);
}

TEST(ChipNetwork, RingOfTwoGivesAllLinksToTheOneNeighbour) {
  ChipNetwork network(loadTarget("tiny"), 2);
  ASSERT_EQ(network.numLinks(), 2);
  EXPECT_DOUBLE_EQ(network.link(network.linkBetween(0, 1)).bytesPerCycle, 40.0);
  EXPECT_DOUBLE_EQ(network.link(network.linkBetween(1, 0)).bytesPerCycle, 40.0);
}

TEST(ChipNetwork, BeyondTheDomainWithoutScaleOutIsOneBiggerRing) {
  // tiny has 4 chips and no scale-out: 8 chips form one ring of 8.
  ChipNetwork network(loadTarget("tiny"), 8);
  EXPECT_EQ(network.domainChips(), 8);
  EXPECT_EQ(network.numLinks(), 16);
  EXPECT_EQ(network.hops(0, 4), 4);
  EXPECT_EQ(routeChips(network, 0, 5), (std::vector<int64_t>{0, 7, 6, 5}));
  EXPECT_EQ(network.node(5), 1);
  expectWellFormed(network, 4);
}

TEST(ChipNetwork, SingleChipHasNoLinks) {
  ChipNetwork lp30(loadTarget("lp30"), 1);
  EXPECT_EQ(lp30.numLinks(), 0);
  EXPECT_EQ(lp30.topologyName(), "none");
  EXPECT_TRUE(lp30.connected());
  EXPECT_TRUE(lp30.route(0, 0).empty());
  ChipNetwork tiny(loadTarget("tiny"), 1);
  EXPECT_EQ(tiny.numLinks(), 0);
  EXPECT_EQ(tiny.topologyName(), "none");
  // Several chips of a target without links cannot reach each other.
  ChipNetwork isolated(loadTarget("lp30"), 4);
  EXPECT_EQ(isolated.numLinks(), 0);
  EXPECT_FALSE(isolated.connected());
}

TEST(ChipNetwork, Torus2DSquarestGridDimensionOrder) {
  TargetModel target = editedTiny([](rt::SystemDesc &system) {
    system.chips = 16;
    system.nodesPerRack = 4;
    system.links.perChip = 8;
    system.links.topology = Topology::Torus2D;
    system.links.domainChips = 16;
  });
  ChipNetwork network(target, 16);
  EXPECT_EQ(network.topologyName(), "torus2d");
  ASSERT_EQ(network.numLinks(), 16 * 4);
  // 8 links, 2 to each of 4 neighbours, 10 B/cycle each.
  int64_t id = network.linkBetween(5, 6);
  ASSERT_GE(id, 0);
  EXPECT_DOUBLE_EQ(network.link(id).bytesPerCycle, 20.0);
  EXPECT_STREQ(network.link(id).kind, "torus");
  EXPECT_GE(network.linkBetween(0, 3), 0);  // wrap in the row
  EXPECT_GE(network.linkBetween(0, 12), 0); // wrap in the column
  EXPECT_EQ(network.linkBetween(0, 5), -1);
  // Columns first (tie to increasing index), then rows.
  EXPECT_EQ(routeChips(network, 0, 6), (std::vector<int64_t>{0, 1, 2, 6}));
  EXPECT_EQ(routeChips(network, 0, 15), (std::vector<int64_t>{0, 3, 15}));
  EXPECT_EQ(routeChips(network, 10, 0),
            (std::vector<int64_t>{10, 11, 8, 12, 0}));
  EXPECT_EQ(network.collectiveAlgorithm({0, 1, 2, 3}),
            CollectiveAlgorithm::Ring);
  expectWellFormed(network, 4);
}

TEST(ChipNetwork, Torus2DDimensionOfTwoMergesNeighbours) {
  // 6 chips: a 2 x 3 grid; the row dimension has one neighbour.
  TargetModel target = editedTiny([](rt::SystemDesc &system) {
    system.chips = 6;
    system.chipsPerNode = 6;
    system.links.perChip = 8;
    system.links.topology = Topology::Torus2D;
    system.links.domainChips = 6;
  });
  ChipNetwork network(target, 6);
  ASSERT_EQ(network.numLinks(), 6 * 3);
  EXPECT_DOUBLE_EQ(network.link(network.linkBetween(0, 3)).bytesPerCycle, 40.0);
  EXPECT_DOUBLE_EQ(network.link(network.linkBetween(0, 1)).bytesPerCycle, 20.0);
  expectWellFormed(network, 2);
}

TEST(ChipNetwork, FullyConnectedSplitsLinksOverPeers) {
  TargetModel target = editedTiny([](rt::SystemDesc &system) {
    system.links.perChip = 3;
    system.links.topology = Topology::FullyConnected;
  });
  ChipNetwork network(target, 4);
  ASSERT_EQ(network.numLinks(), 12);
  int64_t id = network.linkBetween(0, 2);
  ASSERT_GE(id, 0);
  EXPECT_DOUBLE_EQ(network.link(id).bytesPerCycle, 10.0);
  EXPECT_STREQ(network.link(id).kind, "direct");
  EXPECT_EQ(network.collectiveAlgorithm({0, 1, 2, 3}),
            CollectiveAlgorithm::Direct);
  expectWellFormed(network, 1);
}

TEST(ChipNetwork, TspNodeIsFullyConnected) {
  TargetModel target = loadTarget("tsp-v1");
  ChipNetwork network(target, 8);
  EXPECT_EQ(network.topologyName(), "dragonfly");
  ASSERT_EQ(network.numLinks(), 8 * 7);
  // A single node keeps all 16 links local: 16/7 to each peer.
  double perLink = 15e9 / target.clockHz();
  for (int64_t id = 0; id < network.numLinks(); ++id) {
    EXPECT_STREQ(network.link(id).kind, "local");
    EXPECT_NEAR(network.link(id).bytesPerCycle, 16.0 / 7 * perLink, 1e-9);
  }
  EXPECT_EQ(network.collectiveAlgorithm(iota(0, 8)),
            CollectiveAlgorithm::Direct);
  expectWellFormed(network, 1);
}

TEST(ChipNetwork, LpxRackDragonfly) {
  TargetModel target = loadTarget("lpx-rack");
  ChipNetwork network(target, 256);
  EXPECT_EQ(network.topologyName(), "dragonfly");
  // 7 local peers and 31 global peers per chip.
  ASSERT_EQ(network.numLinks(), 256 * (7 + 31));
  double perLink = target.desc().system.links.bytesPerSecond / target.clockHz();
  const ChipNetwork::Link &local = network.link(network.linkBetween(0, 7));
  EXPECT_STREQ(local.kind, "local");
  EXPECT_NEAR(local.bytesPerCycle, 48.0 / 7 * perLink, 1e-9);
  const ChipNetwork::Link &global = network.link(network.linkBetween(0, 8));
  EXPECT_STREQ(global.kind, "global");
  EXPECT_NEAR(global.bytesPerCycle, 48.0 / 31 * perLink, 1e-9);
  EXPECT_EQ(local.latencyCycles, 1000);

  EXPECT_EQ(network.node(7), 0);
  EXPECT_EQ(network.node(8), 1);
  EXPECT_EQ(network.hops(0, 7), 1);   // same node
  EXPECT_EQ(network.hops(3, 251), 1); // same local index
  EXPECT_EQ(network.hops(1, 8), 2);
  // Local hop to this node's chip with the destination's index, then global.
  EXPECT_EQ(routeChips(network, 1, 8), (std::vector<int64_t>{1, 0, 8}));
  EXPECT_EQ(routeChips(network, 9, 250), (std::vector<int64_t>{9, 10, 250}));
  // The slower global link sets the rate.
  EXPECT_NEAR(network.transferCycles(1, 8, 1 << 20),
              2000.0 + (1 << 20) / global.bytesPerCycle, 1e-6);

  EXPECT_EQ(network.collectiveAlgorithm(iota(0, 8)),
            CollectiveAlgorithm::Direct);
  EXPECT_EQ(network.collectiveAlgorithm({0, 8, 16}),
            CollectiveAlgorithm::Direct);
  EXPECT_EQ(network.collectiveAlgorithm(iota(0, 16)),
            CollectiveAlgorithm::Hierarchical);
  expectWellFormed(network, 2);
}

TEST(ChipNetwork, LpxPartialLastGroupRoutesGlobalFirst) {
  // 20 chips: groups of 8, 8 and 4.
  ChipNetwork network(loadTarget("lpx-rack"), 20);
  EXPECT_EQ(routeChips(network, 17, 6), (std::vector<int64_t>{17, 1, 6}));
  EXPECT_EQ(routeChips(network, 6, 17), (std::vector<int64_t>{6, 1, 17}));
  expectWellFormed(network, 2);
}

TEST(ChipNetwork, FourLpxRacksAreOneDragonfly) {
  ChipNetwork network(loadTarget("lpx-rack"), 1024);
  // Without scale-out, 1024 chips are one dragonfly of 128 nodes.
  EXPECT_EQ(network.domainChips(), 1024);
  ASSERT_EQ(network.numLinks(), 1024 * (7 + 127));
  EXPECT_EQ(network.hops(5, 1023), 2);
  EXPECT_EQ(network.hops(5, 1021), 1);
  EXPECT_EQ(network.node(1023), 127);
}

TEST(ChipNetwork, SliceOfASystemKeepsTheSystemsShares) {
  TargetModel target = loadTarget("lpx-rack");
  ChipNetwork full(target, 256);
  double perLink = target.desc().system.links.bytesPerSecond / target.clockHz();
  // One node alone keeps all 96 links local; as the first node of a rack
  // it keeps half, and its links are the rack's.
  ChipNetwork alone(target, 8);
  ChipNetwork node(target, 8, 256);
  EXPECT_EQ(alone.systemChips(), 8);
  EXPECT_EQ(node.systemChips(), 256);
  ASSERT_EQ(node.numLinks(), 8 * 7);
  EXPECT_NEAR(alone.link(alone.linkBetween(0, 7)).bytesPerCycle,
              96.0 / 7 * perLink, 1e-9);
  EXPECT_NEAR(node.link(node.linkBetween(0, 7)).bytesPerCycle,
              48.0 / 7 * perLink, 1e-9);
  // Two nodes of the rack: their global link has the rack's 1/31 share.
  ChipNetwork two(target, 16, 256);
  ASSERT_EQ(two.numLinks(), 16 * (7 + 1));
  for (int64_t id = 0; id < two.numLinks(); ++id) {
    const ChipNetwork::Link &l = two.link(id);
    int64_t same = full.linkBetween(l.from, l.to);
    ASSERT_GE(same, 0) << l.from << "->" << l.to;
    EXPECT_DOUBLE_EQ(l.bytesPerCycle, full.link(same).bytesPerCycle);
    EXPECT_STREQ(l.kind, full.link(same).kind);
  }
  EXPECT_EQ(routeChips(two, 1, 8), (std::vector<int64_t>{1, 0, 8}));
  expectWellFormed(two, 2);
  // A switch splits the port over all the system's peers.
  TargetModel h100 = loadTarget("h100");
  ChipNetwork pair(h100, 2, 8);
  ASSERT_EQ(pair.numLinks(), 2);
  EXPECT_NEAR(pair.link(0).bytesPerCycle, 18 * 25e9 / 7 / h100.clockHz(), 1e-9);
  // No bigger system: the chips alone.
  EXPECT_EQ(ChipNetwork(target, 16, 4).systemChips(), 16);
}

// Adaptive routing (docs/targets.md): a global bundle between two nodes of
// one traffic block, or from a chip to the same chip of the next block,
// gets Valiant's share, half the chip's 48 global links over the nodes its
// node sends to, at two global hops' latency, when that beats minimal's
// 1/31 of them; a transfer takes whichever is faster.
TEST(ChipNetwork, AdaptiveRoutingGivesATrafficBlockValiantsShare) {
  TargetDesc desc = loadTarget("lpx-rack").desc();
  desc.system.links.adaptiveRouting = true;
  std::string error;
  TargetModel target =
      loom::testing::requireTarget(TargetModel::fromDesc(desc, error), error);
  const double perLink = desc.system.links.bytesPerSecond / target.clockHz();
  // Two nodes as the first of a 256-chip rack: one block (k = 1).
  ChipNetwork two(target, 16, 256);
  EXPECT_EQ(two.blockChips(), 16);
  const ChipNetwork::Link &global = two.link(two.linkBetween(0, 8));
  EXPECT_NEAR(global.bytesPerCycle, 48.0 / 31 * perLink, 1e-9);
  EXPECT_NEAR(global.adaptiveBytesPerCycle, 24.0 * perLink, 1e-9);
  EXPECT_EQ(global.adaptiveLatencyCycles, 2000);
  EXPECT_EQ(two.link(two.linkBetween(0, 1)).adaptiveBytesPerCycle, 0.0);
  // A small message stays minimal; a large one takes the second hop.
  const std::vector<int64_t> direct = {global.id};
  EXPECT_FALSE(two.timing(direct, 64).adaptive);
  EXPECT_NEAR(two.transferCycles(0, 8, 64), 1000.0 + 64 / global.bytesPerCycle,
              1e-9);
  EXPECT_TRUE(two.timing(direct, 1 << 20).adaptive);
  EXPECT_NEAR(two.transferCycles(0, 8, 1 << 20),
              2000.0 + (1 << 20) / (24.0 * perLink), 1e-6);
  // Through a local hop, the local link (48/7) sets the adaptive rate.
  EXPECT_NEAR(two.transferCycles(1, 8, 1 << 20),
              3000.0 + (1 << 20) / (48.0 / 7 * perLink), 1e-6);
  // The whole rack with blocks of 4 nodes: partners share 48 / (2 x 3);
  // a pipeline's hand-off, to the same chip of the next block, 48 / 2
  // (its node sends to that one node); a bundle to any other chip of
  // another block, or back to the block before, stays minimal.
  ChipNetwork rack(target, 256, 0, 32);
  EXPECT_NEAR(rack.link(rack.linkBetween(0, 24)).adaptiveBytesPerCycle,
              8.0 * perLink, 1e-9);
  EXPECT_NEAR(rack.link(rack.linkBetween(0, 32)).adaptiveBytesPerCycle,
              24.0 * perLink, 1e-9);
  EXPECT_NEAR(rack.link(rack.linkBetween(40, 72)).adaptiveBytesPerCycle,
              24.0 * perLink, 1e-9);
  EXPECT_EQ(rack.link(rack.linkBetween(0, 40)).adaptiveBytesPerCycle, 0.0);
  EXPECT_EQ(rack.link(rack.linkBetween(0, 64)).adaptiveBytesPerCycle, 0.0);
  EXPECT_EQ(rack.link(rack.linkBetween(32, 0)).adaptiveBytesPerCycle, 0.0);
  EXPECT_NEAR(rack.link(rack.linkBetween(40, 56)).adaptiveBytesPerCycle,
              8.0 * perLink, 1e-9);
  // A block of 8 nodes in a system of 8: Valiant's 48/14 loses to 48/7.
  ChipNetwork eight(target, 64, 0, 64);
  for (int64_t id = 0; id < eight.numLinks(); ++id)
    EXPECT_EQ(eight.link(id).adaptiveBytesPerCycle, 0.0);
  // A block that splits a node (12 chips of 8-chip nodes) has none.
  ChipNetwork split(target, 256, 0, 12);
  for (int64_t id = 0; id < split.numLinks(); ++id)
    EXPECT_EQ(split.link(id).adaptiveBytesPerCycle, 0.0);
  // A partial last node (260 chips: 33 nodes, the last of 4) lacks
  // indices 4 to 7: those chips have 31 two-hop paths, not 32.
  ChipNetwork partial(target, 16, 260);
  EXPECT_NEAR(partial.link(partial.linkBetween(0, 8)).adaptiveBytesPerCycle,
              24.0 * perLink, 1e-9);
  EXPECT_NEAR(partial.link(partial.linkBetween(5, 13)).adaptiveBytesPerCycle,
              24.0 * 31 / 32 * perLink, 1e-9);
  // Minimal routing, or no block: none.
  ChipNetwork noBlock(target, 256);
  EXPECT_EQ(noBlock.blockChips(), 0);
  EXPECT_EQ(noBlock.link(noBlock.linkBetween(0, 8)).adaptiveBytesPerCycle, 0.0);
  desc.system.links.adaptiveRouting = false;
  TargetModel minimal =
      loom::testing::requireTarget(TargetModel::fromDesc(desc, error), error);
  ChipNetwork twoMinimal(minimal, 16, 256);
  EXPECT_EQ(twoMinimal.blockChips(), 0);
  EXPECT_NEAR(twoMinimal.transferCycles(0, 8, 1 << 20),
              1000.0 + (1 << 20) / global.bytesPerCycle, 1e-6);
  expectWellFormed(two, 2);
}

// With scale-out, a block that crosses a domain boundary is, in each
// domain, only its part there: 512 chips in dragonflies of 256 (32 nodes
// of 8), blocks of 96 chips. Chip 256 is in block [192, 288), whose part
// in the second domain is its first 4 nodes (k = 3: 48 / 6 links); chip
// 288 starts block [288, 384), 12 nodes (k = 11: 48 / 22).
TEST(ChipNetwork, AdaptiveBlocksAcrossScaleOutDomains) {
  TargetDesc desc = loadTarget("lpx-rack").desc();
  desc.system.links.adaptiveRouting = true;
  desc.system.chips = 512;
  desc.system.links.domainChips = 256;
  desc.system.scaleOut = rt::ScaleOutDesc{50e9, 5e-6};
  std::string error;
  TargetModel target =
      loom::testing::requireTarget(TargetModel::fromDesc(desc, error), error);
  const double perLink = desc.system.links.bytesPerSecond / target.clockHz();
  ChipNetwork network(target, 512, 0, 96);
  EXPECT_NEAR(network.link(network.linkBetween(256, 264)).adaptiveBytesPerCycle,
              8.0 * perLink, 1e-9);
  EXPECT_NEAR(network.link(network.linkBetween(256, 280)).adaptiveBytesPerCycle,
              8.0 * perLink, 1e-9);
  EXPECT_EQ(network.link(network.linkBetween(256, 288)).adaptiveBytesPerCycle,
            0.0);
  EXPECT_NEAR(network.link(network.linkBetween(288, 296)).adaptiveBytesPerCycle,
              48.0 / 22 * perLink, 1e-9);
  EXPECT_STREQ(network.link(network.linkBetween(0, 256)).kind, "scale_out");
  EXPECT_EQ(network.link(network.linkBetween(0, 256)).adaptiveBytesPerCycle,
            0.0);
}

TEST(ChipNetwork, SwitchDividesThePortAmongPeers) {
  TargetModel target = loadTarget("h100");
  ChipNetwork network(target, 8);
  EXPECT_EQ(network.topologyName(), "switch");
  ASSERT_EQ(network.numLinks(), 56);
  const ChipNetwork::Link &link = network.link(network.linkBetween(2, 5));
  EXPECT_STREQ(link.kind, "switch");
  EXPECT_NEAR(link.bytesPerCycle, 18 * 25e9 / 7 / target.clockHz(), 1e-9);
  EXPECT_EQ(network.collectiveAlgorithm(iota(0, 8)),
            CollectiveAlgorithm::Direct);
  expectWellFormed(network, 1);
}

TEST(ChipNetwork, ScaleOutJoinsSameIndexChipsOfDomains) {
  TargetModel target = loadTarget("h100");
  ChipNetwork network(target, 16);
  EXPECT_EQ(network.domainChips(), 8);
  EXPECT_EQ(network.domain(9), 1);
  ASSERT_EQ(network.numLinks(), 2 * 56 + 16);
  const ChipNetwork::Link &scaleOut = network.link(network.linkBetween(1, 9));
  EXPECT_STREQ(scaleOut.kind, "scale_out");
  EXPECT_NEAR(scaleOut.bytesPerCycle, 50e9 / target.clockHz(), 1e-9);
  EXPECT_EQ(scaleOut.latencyCycles, 9150); // 5 us at 1.83 GHz
  EXPECT_EQ(network.linkBetween(1, 10), -1);
  // Inside the domain to the destination's index, then across.
  EXPECT_EQ(routeChips(network, 1, 10), (std::vector<int64_t>{1, 2, 10}));
  EXPECT_EQ(network.collectiveAlgorithm({1, 9}), CollectiveAlgorithm::Direct);
  EXPECT_EQ(network.collectiveAlgorithm(iota(0, 16)),
            CollectiveAlgorithm::Hierarchical);
  expectWellFormed(network, 2);
}

TEST(ChipNetwork, PartialLastDomainCrossesFirst) {
  // 12 GPUs: one full NVLink domain of 8 and one of 4.
  ChipNetwork network(loadTarget("h100"), 12);
  EXPECT_EQ(network.linkBetween(11, 3), network.linksFrom(11).front().id);
  EXPECT_EQ(network.linkBetween(5, 10), -1);
  EXPECT_EQ(routeChips(network, 10, 5), (std::vector<int64_t>{10, 2, 5}));
  EXPECT_EQ(routeChips(network, 5, 10), (std::vector<int64_t>{5, 2, 10}));
  // The partial domain is a switch of 4: the port over 3 peers.
  EXPECT_NEAR(network.link(network.linkBetween(8, 9)).bytesPerCycle,
              18 * 25e9 / 3 / loadTarget("h100").clockHz(), 1e-9);
  expectWellFormed(network, 2);
}

} // namespace
