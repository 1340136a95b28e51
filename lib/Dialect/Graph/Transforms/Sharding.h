//===- Sharding.h - graph-partition: how values are held --------*- C++ -*-===//
//
// Step 1 of graph-partition (Partition.cpp): how every value is held across
// the tp ranks of a tensor-parallel group (a Shard: replicated, split along
// dims, or partial sums), the plan of each op, and the collectives the plan
// needs. Propagation touches no IR, so every tp candidate can be costed
// (PartitionCost.h) before one is rewritten (PartitionRewrite.h).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_DIALECT_GRAPH_TRANSFORMS_SHARDING_H
#define LOOM_LIB_DIALECT_GRAPH_TRANSFORMS_SHARDING_H

#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Target/TargetModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

namespace loom::graph::partition {
using namespace mlir;

/// How a value is held across the ranks of a tensor-parallel group.
///
/// A split cuts dims [dim, dim + span) of the value, flattened, into
/// `parts` contiguous pieces (0: one per rank), each a box of whole index
/// ranges. Rank r holds piece r / (ranks / parts): with fewer pieces than
/// ranks, consecutive ranks share one. Attention past the key-value heads
/// needs both: the query heads split over (kv, group) two dims at once, and
/// each KV head shared by the ranks of its query heads.
struct Shard {
  enum Kind : uint8_t { Rep, Split, Partial } kind = Rep;
  int64_t dim = -1, span = 1, parts = 0;
  std::tuple<Kind, int64_t, int64_t, int64_t> key() const {
    if (kind != Split)
      return {kind, -1, 1, 0};
    return {kind, dim, span, parts};
  }
  bool operator==(const Shard &o) const { return key() == o.key(); }
  bool operator<(const Shard &o) const { return key() < o.key(); }
  /// Whether dim `d` is one of the split's.
  bool covers(int64_t d) const {
    return kind == Split && d >= dim && d < dim + span;
  }
  int64_t pieces(int64_t ranks) const { return parts ? parts : ranks; }
  static Shard rep() { return {}; }
  static Shard split(int64_t d, int64_t span = 1, int64_t parts = 0) {
    return {Split, d, span, parts};
  }
  static Shard partial() { return {Partial, -1}; }
};

/// The pieces along each of dims [dim, dim + span) of `shape` (outer
/// first) when those dims, flattened, are cut into `parts` contiguous
/// pieces that are boxes: some outer dims cut to single indices, one dim
/// cut into ranges, the inner dims whole. Empty when the pieces are not
/// boxes.
SmallVector<int64_t> pieceFactors(ArrayRef<int64_t> shape, int64_t dim,
                                  int64_t span, int64_t parts);

/// The box rank `rank` of `ranks` holds of a value of `shape` split as
/// `s`: per dim of the split, its first index and its size.
struct Box {
  SmallVector<int64_t> lo, size;
};
Box pieceBox(ArrayRef<int64_t> shape, Shard s, int64_t rank, int64_t ranks);

/// `s` without the dims its pieces leave whole at either end (size-1 dims
/// in front, unsplit dims behind), and with one piece per rank written as
/// parts 0, so that equal splits compare equal.
Shard canonical(ArrayRef<int64_t> shape, Shard s, int64_t ranks);

/// The split of `s` into one piece per rank, over as many more inner dims
/// as that takes (for gathering a split whose ranks share pieces); nullopt
/// if there is none.
std::optional<Shard> perRank(ArrayRef<int64_t> shape, Shard s, int64_t ranks);

inline RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Whether `v` is an f32 value held at 4 bytes (no narrower declared
/// storage): what a narrow policy carries across chips at 16 bits.
bool isF32(Value v);

/// Bytes of `v` as stored (a KV cache at its declared storage).
int64_t bytesOf(Value v);

/// The matrix unit's input format under the pass's precision (fp32 for an
/// unknown one, which graph-precision-policy refuses), and the bytes a
/// weight takes in it.
NumericFormat matrixFormat(StringRef precision);
int64_t weightElementBytes(StringRef precision);

/// A constant, or a model input the host scatters however it is wanted
/// (not one marked graph.whole).
bool isFree(Value v);

/// The decision for one op: the form each operand must take, and the form
/// of its results.
struct OpPlan {
  std::vector<Shard> operands;
  Shard result;
  /// When >= 0: the op runs split along this result dimension and its
  /// result is gathered at once (so `result` is replicated).
  int64_t gatherAfter = -1;
};

/// A collective the plan needs (for costing).
struct CollectiveNeed {
  bool reduce; // all_reduce (else all_gather)
  int64_t bytes;
  Operation *before; // the op that needs it
  /// The ranks of each group that runs it (0: all tp): a gather into
  /// pieces that groups of ranks share runs inside each group.
  int64_t ranks = 0;
  /// Whether the value is f32, which a narrow precision policy carries
  /// across chips at 16 bits (graph-precision-policy's wire format).
  bool f32 = true;
  /// The value moved.
  Value value = {};
  /// The form it is turned into.
  Shard want = {};
};

/// Step 1: sharding propagation for `tp` ranks.
struct Propagation {
  int64_t tp = 1;
  /// Set by run(), a new number each time (0: never run): what
  /// PartitionPricer keys the costs that depend on it alone by.
  uint64_t serial = 0;
  std::map<void *, Shard> state; // value -> form
  std::map<Operation *, OpPlan> plans;
  std::vector<CollectiveNeed> collectives;
  /// Per op: how many ways its work is divided (1: replicated on every
  /// rank; below tp when ranks share pieces).
  std::map<Operation *, int64_t> divided;
  /// Projections (a matmul by a constant 2-D weight) computed in shared
  /// pieces: the form of their result. Past the key-value heads, each rank
  /// group computes the k and v projection of the head it shares, the
  /// weight's columns of that head held by every rank of the group,
  /// instead of each rank a part of it gathered inside the group
  /// (sharedProjections finds them; graph-partition keeps them when
  /// they price lower).
  std::map<Operation *, Shard> sharedResult;

  /// The projections whose results this propagation gathers inside rank
  /// groups (groupGather), with the shared form each would be computed in
  /// instead: the hints for a second propagation.
  std::map<Operation *, Shard> sharedProjections() const;

  Shard of(Value v) const {
    auto it = state.find(v.getAsOpaquePointer());
    return it == state.end() ? Shard::rep() : it->second;
  }
  /// Whether `v` can be held as split `s`: its pieces are boxes and
  /// ranks share pieces evenly.
  bool splittable(Value v, Shard s) const {
    ArrayRef<int64_t> shape = typeOf(v).getShape();
    int64_t parts = s.pieces(tp);
    return s.kind == Shard::Split && parts >= 2 && tp % parts == 0 &&
           !pieceFactors(shape, s.dim, s.span, parts).empty();
  }
  bool splittable(Value v, int64_t d) const {
    return splittable(v, Shard::split(d));
  }
  /// How many copies of each piece gathering `v` held as `s` moves: one,
  /// or every rank's when ranks share pieces that cannot be cut once more
  /// per rank (Rewriter::collective).
  int64_t gatherCopies(Value v, Shard s) const {
    int64_t share = tp / s.pieces(tp);
    return share > 1 && !perRank(typeOf(v).getShape(), s, tp) ? share : 1;
  }
  /// Records what turning `v` into `want` costs.
  void need(Value v, Shard want, Operation *user) {
    Shard have = of(v);
    if (have == want || isFree(v))
      return;
    if (have.kind == Shard::Partial)
      collectives.push_back({true, bytesOf(v), user, 0, isF32(v)});
    else if (int64_t group = groupGather(have, want))
      collectives.push_back({false, bytesOf(v) / want.pieces(tp), user, group,
                             isF32(v), v, want});
    else if (have.kind == Shard::Split && want.kind != Shard::Partial) {
      int64_t bytes;
      if (__builtin_mul_overflow(bytesOf(v), gatherCopies(v, have), &bytes))
        bytes = std::numeric_limits<int64_t>::max();
      collectives.push_back({false, bytes, user, 0, isF32(v)});
    }
  }
  /// When turning `have` into `want` is a gather inside groups of
  /// consecutive ranks (each rank holds its own piece of one dim, and each
  /// group's pieces make one larger piece that the group then shares):
  /// the ranks per group; else 0.
  int64_t groupGather(Shard have, Shard want) const {
    if (have.kind != Shard::Split || want.kind != Shard::Split ||
        have.parts != 0 || have.span != 1 || want.span != 1 ||
        want.dim != have.dim)
      return 0;
    int64_t pieces = want.pieces(tp);
    return pieces < tp && tp % pieces == 0 ? tp / pieces : 0;
  }

  void run(func::FuncOp func);

  OpPlan allRep(Operation *op);

  /// The plan of one op: by its family (decideMatMul, decideElementwise,
  /// decideMovement for the data-movement and normalisation ops).
  OpPlan decide(Operation *op);
  OpPlan decideMatMul(MatMulOp mm);
  OpPlan decideElementwise(Operation *op);
  OpPlan decideMovement(Operation *op);

  /// The split of a reshape's result holding the same pieces as split
  /// `s` of its input (whose pieces are contiguous runs of the flattened
  /// value, so the same runs on the result side), if they are boxes there.
  std::optional<Shard> throughReshape(ArrayRef<int64_t> in,
                                      ArrayRef<int64_t> out, Shard s);

  /// A reshape of split `s`: the same pieces on the result side when they
  /// are boxes there. A reshape that cuts the last dim into several (hidden
  /// into heads x head_dim) should not cut the new, smaller last dim (a
  /// head apart): fewer, larger pieces that rank groups share are taken
  /// instead (k and v past the key-value heads: each rank holds the whole
  /// head its query heads read), gathered inside each group of ranks that
  /// shares one (groupGather).
  OpPlan reshape(Operation *op, Shard s);
};

} // namespace loom::graph::partition

#endif // LOOM_LIB_DIALECT_GRAPH_TRANSFORMS_SHARDING_H
