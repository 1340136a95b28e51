//===- Collective.h - A collective's kind and algorithm ---------*- C++ -*-===//
//
// The one C++ definition of a collective's kind (what it computes across
// chips), which the cost model prices (CostModel.h), and of its algorithm
// (how it moves the data), which the chip network chooses for a group of
// chips (ChipNetwork::collectiveAlgorithm) and spatial-lower-collectives
// follows. The spatial dialect's `#spatial.collective_kind<...>` and
// `#spatial.collective_algorithm<...>` attributes (SpatialAttrs.td) hold
// these enums and print the spellings the *Name functions return. Its own
// header, like KernelKind.h, so that the dialect can name them without the
// cost model; plain C++, header only.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TARGET_COLLECTIVE_H
#define LOOM_TARGET_COLLECTIVE_H

#include "loom/Runtime/EnumNames.h"

#include <cstddef>
#include <optional>
#include <string_view>

namespace loom {

/// What a collective computes across its chips, as the cost model prices
/// it. spatial.collective takes all_reduce and all_gather.
enum class CollectiveKind {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  Broadcast,
  SendRecv,
};

inline constexpr size_t kNumCollectiveKinds = 6;

/// "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast",
/// "send_recv".
inline const char *collectiveKindName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  case CollectiveKind::Broadcast:
    return "broadcast";
  case CollectiveKind::SendRecv:
    return "send_recv";
  }
  return "?";
}

/// The kind a collectiveKindName spelling names; std::nullopt for anything
/// else.
inline std::optional<CollectiveKind>
parseCollectiveKind(std::string_view name) {
  return rt::enumNamed<CollectiveKind, kNumCollectiveKinds>(
      name, collectiveKindName);
}

/// How a collective's chips exchange their data (docs/multichip.md).
enum class CollectiveAlgorithm {
  /// Reduce-scatter and all-gather around a ring of direct links.
  Ring,
  /// Every chip sends each other chip its chunk at once, over direct links.
  Direct,
  /// Direct inside each node, then across nodes between the chips of equal
  /// rank, then direct inside each node again.
  Hierarchical,
};

inline constexpr size_t kNumCollectiveAlgorithms = 3;

/// "ring", "direct", "hierarchical".
inline const char *collectiveAlgorithmName(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
  case CollectiveAlgorithm::Ring:
    return "ring";
  case CollectiveAlgorithm::Direct:
    return "direct";
  case CollectiveAlgorithm::Hierarchical:
    return "hierarchical";
  }
  return "?";
}

/// The algorithm a collectiveAlgorithmName spelling names; std::nullopt for
/// anything else.
inline std::optional<CollectiveAlgorithm>
parseCollectiveAlgorithm(std::string_view name) {
  return rt::enumNamed<CollectiveAlgorithm, kNumCollectiveAlgorithms>(
      name, collectiveAlgorithmName);
}

/// The algorithms, as error messages list them.
inline constexpr const char *kCollectiveAlgorithms =
    "ring, direct or hierarchical";

} // namespace loom

#endif // LOOM_TARGET_COLLECTIVE_H
