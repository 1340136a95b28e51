//===- Partition.cpp - Tensor and pipeline parallelism across chips -------===//
//
// Splits a function over tp x pp chips. See Passes.td for the rules.
//
// The work is in three steps:
//  1. `propagate` decides, op by op, how every value is held across the
//     tp ranks (replicated, split along a dimension, or partial sums) and
//     which collectives that needs; it touches no IR, so every tp candidate
//     can be costed.
//  2. `stages` cuts the ops into pp contiguous stages balancing the
//     estimated time under each chip's SRAM.
//  3. `Rewriter` clones every op per rank with local shapes, inserts the
//     collectives, slices constants and splits model inputs and outputs
//     into per-chip parts.
//
//===----------------------------------------------------------------------===//
#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"
#include "loom/Reference/Evaluator.h"
#include "loom/Runtime/Reference.h"
#include "loom/Target/ChipNetwork.h"
#include "loom/Target/TargetModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/BitVector.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

namespace loom::graph {
#define GEN_PASS_DEF_GRAPHPARTITION
#include "loom/Dialect/Graph/Transforms/Passes.h.inc"

using namespace mlir;

namespace {

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
                                  int64_t span, int64_t parts) {
  if (dim < 0 || span < 1 || dim + span > int64_t(shape.size()) || parts < 1)
    return {};
  SmallVector<int64_t> factors;
  int64_t rem = parts;
  for (int64_t i = dim; i < dim + span; ++i) {
    int64_t size = shape[i];
    if (size <= 0)
      return {};
    if (rem >= size) {
      if (rem % size)
        return {};
      factors.push_back(size);
      rem /= size;
    } else {
      if (size % rem)
        return {};
      factors.push_back(rem);
      rem = 1;
    }
  }
  if (rem != 1)
    return {};
  return factors;
}

/// The box rank `rank` of `ranks` holds of a value of `shape` split as
/// `s`: per dim of the split, its first index and its size.
struct Box {
  SmallVector<int64_t> lo, size;
};
Box pieceBox(ArrayRef<int64_t> shape, Shard s, int64_t rank, int64_t ranks) {
  int64_t parts = s.pieces(ranks);
  SmallVector<int64_t> factors = pieceFactors(shape, s.dim, s.span, parts);
  assert(!factors.empty() && ranks % parts == 0 && "not a valid split");
  int64_t piece = rank / (ranks / parts);
  Box box;
  box.lo.resize(s.span);
  box.size.resize(s.span);
  for (int64_t i = s.span - 1; i >= 0; --i) {
    box.size[i] = shape[s.dim + i] / factors[i];
    box.lo[i] = (piece % factors[i]) * box.size[i];
    piece /= factors[i];
  }
  return box;
}

/// `s` without the dims its pieces leave whole at either end (size-1 dims
/// in front, unsplit dims behind), and with one piece per rank written as
/// parts 0, so that equal splits compare equal.
Shard canonical(ArrayRef<int64_t> shape, Shard s, int64_t ranks) {
  if (s.kind != Shard::Split)
    return s;
  SmallVector<int64_t> f = pieceFactors(shape, s.dim, s.span, s.pieces(ranks));
  if (f.empty())
    return s;
  int64_t lo = 0, hi = f.size();
  while (hi > lo + 1 && f[hi - 1] == 1)
    --hi;
  while (lo < hi - 1 && f[lo] == 1)
    ++lo;
  s.dim += lo;
  s.span = hi - lo;
  if (s.parts == ranks)
    s.parts = 0;
  return s;
}

/// The split of `s` into one piece per rank, over as many more inner dims
/// as that takes (for gathering a split whose ranks share pieces); nullopt
/// if there is none.
std::optional<Shard> perRank(ArrayRef<int64_t> shape, Shard s, int64_t ranks) {
  for (Shard t = Shard::split(s.dim, s.span);
       t.dim + t.span <= int64_t(shape.size()); ++t.span)
    if (!pieceFactors(shape, t.dim, t.span, ranks).empty())
      return t;
  return std::nullopt;
}

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Whether `v` is an f32 value held at 4 bytes (no narrower declared
/// storage): what a narrow policy carries across chips at 16 bits.
bool isF32(Value v) {
  return typeOf(v).getElementType().isF32() && !declaredStorage(v);
}

/// Bytes of `v` as stored (a KV cache at its declared storage).
int64_t bytesOf(Value v) {
  RankedTensorType t = typeOf(v);
  int64_t bits = t.getElementType().isIntOrFloat()
                     ? t.getElementType().getIntOrFloatBitWidth()
                     : 32;
  int64_t bytes = std::max<int64_t>(1, bits / 8);
  if (t.getElementType().isF32())
    bytes = rt::bytesStoredAs(bytes, declaredStorage(v));
  return t.getNumElements() * bytes;
}

/// The matrix unit's input format under the pass's precision (fp32 for an
/// unknown one, which graph-precision-policy refuses), and the bytes a
/// weight takes in it.
NumericFormat matrixFormat(StringRef precision) {
  return rt::kernelPrecisionFormat(precision).value_or(NumericFormat::F32);
}
int64_t weightElementBytes(StringRef precision) {
  return static_cast<int64_t>(rt::numericFormatBytes(matrixFormat(precision)));
}

/// A constant, or a model input the host scatters however it is wanted
/// (not one marked graph.whole).
bool isFree(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto f = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    return !f || !f.getArgAttr(arg.getArgNumber(), kWholeAttr);
  }
  return v.getDefiningOp<ConstantOp>() != nullptr;
}

bool isElementwiseOp(Operation *op) {
  return isa<NegOp, AbsOp, SqrtOp, ReciprocalOp, ExpOp, LogOp, ErfOp, TanhOp,
             SigmoidOp, ReluOp, SinOp, CosOp, FloorOp, CeilOp, RoundOp,
             SignOp, SoftsignOp, SoftplusOp, HardSwishOp, LeakyReluOp, EluOp,
             CeluOp, SeluOp, HardSigmoidOp, CastOp, AddOp, SubOp, MulOp,
             DivOp, MinOp, MaxOp, PowOp, PReluOp>(op);
}

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
};

/// Step 1: sharding propagation for `tp` ranks.
struct Propagation {
  int64_t tp = 1;
  std::map<void *, Shard> state; // value -> form
  std::map<Operation *, OpPlan> plans;
  std::vector<CollectiveNeed> collectives;
  /// Per op: how many ways its work is divided (1: replicated on every
  /// rank; below tp when ranks share pieces).
  std::map<Operation *, int64_t> divided;

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
      collectives.push_back(
          {false, bytesOf(v) / want.pieces(tp), user, group, isF32(v)});
    else if (have.kind == Shard::Split && want.kind != Shard::Partial)
      collectives.push_back(
          {false, bytesOf(v) * gatherCopies(v, have), user, 0, isF32(v)});
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

  void run(func::FuncOp func) {
    for (Operation &op : func.getBody().front()) {
      if (isa<ConstantOp>(op))
        continue;
      if (isa<func::ReturnOp>(op)) {
        OpPlan plan;
        for (Value v : op.getOperands()) {
          Shard s = of(v);
          // Splits of one dim become per-chip output parts; partial sums
          // are reduced and splits of several dims gathered.
          bool part = s.kind == Shard::Split && s.span == 1;
          plan.operands.push_back(part ? s : Shard::rep());
          need(v, plan.operands.back(), &op);
        }
        plans[&op] = plan;
        continue;
      }
      OpPlan plan = decide(&op);
      for (auto [v, want] : llvm::zip(op.getOperands(), plan.operands))
        need(v, want, &op);
      if (plan.gatherAfter >= 0)
        collectives.push_back({false, bytesOf(op.getResult(0)), &op, 0,
                               isF32(op.getResult(0))});
      for (Value r : op.getResults())
        state[r.getAsOpaquePointer()] = plan.result;
      divided[&op] = plan.gatherAfter >= 0 || plan.result.kind == Shard::Partial
                         ? tp
                     : plan.result.kind == Shard::Split ? plan.result.pieces(tp)
                                                        : 1;
      plans[&op] = std::move(plan);
    }
  }

  OpPlan allRep(Operation *op) {
    OpPlan p;
    p.operands.assign(op->getNumOperands(), Shard::rep());
    return p;
  }

  OpPlan decide(Operation *op) {
    if (tp == 1 || op->getNumResults() != 1)
      return allRep(op);
    Value out = op->getResult(0);
    int64_t outRank = typeOf(out).getRank();

    if (auto mm = dyn_cast<MatMulOp>(op)) {
      Value a = mm.getLhs(), b = mm.getRhs();
      int64_t ra = typeOf(a).getRank(), rb = typeOf(b).getRank();
      if (b.getDefiningOp<ConstantOp>() && rb == 2 && ra >= 1) {
        Shard sa = of(a);
        OpPlan p;
        if (sa.kind == Shard::Split && sa.dim == ra - 1 && sa.span == 1 &&
            sa.parts == 0 && splittable(b, 0)) {
          p.operands = {sa, Shard::split(0)};
          p.result = Shard::partial();
          return p;
        }
        if (splittable(b, 1)) {
          p.operands = {Shard::rep(), Shard::split(1)};
          p.result = Shard::split(outRank - 1);
          return p;
        }
        return allRep(op);
      }
      // Two activations: keep a split of batch dims (attention heads),
      // which may go on into the left side's rows (the query heads that
      // share a key-value head: the right side is then split by the batch
      // dims alone, its pieces shared by the ranks of those rows).
      if (ra == rb && ra >= 3) {
        ArrayRef<int64_t> sha = typeOf(a).getShape(), shb = typeOf(b).getShape();
        auto sameBatch = [&](Shard s) {
          for (int64_t d = s.dim; d < s.dim + s.span; ++d)
            if (sha[d] != shb[d])
              return false;
          return true;
        };
        Shard sa = of(a), sb = of(b);
        if (sa.kind == Shard::Split && sa.dim < ra - 2 &&
            sa.dim + sa.span <= ra - 1 && splittable(out, sa)) {
          Shard wantB = sa;
          if (sa.dim + sa.span == ra - 1) {
            int64_t parts = sa.pieces(tp);
            SmallVector<int64_t> f =
                pieceFactors(sha, sa.dim, sa.span, parts);
            wantB = canonical(
                shb, Shard::split(sa.dim, sa.span - 1, parts / f.back()), tp);
          }
          if (sameBatch(wantB) && splittable(b, wantB)) {
            OpPlan p;
            p.operands = {sa, wantB};
            p.result = sa;
            return p;
          }
        }
        if (sb.kind == Shard::Split && sb.dim + sb.span <= rb - 2 &&
            sameBatch(sb) && splittable(a, sb) && splittable(out, sb)) {
          OpPlan p;
          p.operands = {sb, sb};
          p.result = sb;
          return p;
        }
      }
      return allRep(op);
    }

    if (isElementwiseOp(op)) {
      // Partial sums survive only a sum of partial sums.
      bool allPartial = isa<AddOp, SubOp>(op);
      for (Value v : op->getOperands())
        allPartial = allPartial && of(v).kind == Shard::Partial;
      if (allPartial) {
        OpPlan p;
        p.operands.assign(op->getNumOperands(), Shard::partial());
        p.result = Shard::partial();
        return p;
      }
      // The split (aligned to the result's dimensions) shared by every
      // split operand; operands that broadcast along it stay whole.
      std::optional<Shard> common;
      for (Value v : op->getOperands()) {
        Shard s = of(v);
        if (s.kind != Shard::Split)
          continue;
        s.dim += outRank - typeOf(v).getRank();
        if (common && !(*common == s))
          return allRep(op);
        common = s;
      }
      if (!common || !splittable(out, *common))
        return allRep(op);
      OpPlan p;
      for (Value v : op->getOperands()) {
        int64_t off = outRank - typeOf(v).getRank();
        // Along the split's dims (those not of size 1) the operand has all,
        // none, or the outer ones and broadcasts along the rest (a gate per
        // expert, [.., experts, 1], meeting activations split over experts
        // and columns): it then takes the outer dims' pieces, which the
        // ranks of the inner ones share.
        ArrayRef<int64_t> outShape = typeOf(out).getShape();
        SmallVector<int64_t> factors = pieceFactors(
            outShape, common->dim, common->span, common->pieces(tp));
        int64_t dims = 0, present = 0, parts = 1, span = 0;
        bool gap = false;
        for (int64_t i = 0; i < common->span; ++i) {
          int64_t d = common->dim + i;
          if (outShape[d] == 1)
            continue;
          ++dims;
          bool has = d - off >= 0 && typeOf(v).getDimSize(d - off) != 1;
          if (has && gap)
            return allRep(op);
          if (!has) {
            gap = true;
            continue;
          }
          ++present;
          parts *= factors[i];
          span = i + 1;
        }
        bool broadcasts = present == 0;
        // A split meeting a whole computed value as large as the result
        // (the residual stream): gather the split once rather than keep
        // the stream split. A smaller one (a gate, a norm's scale) is
        // sliced on each chip instead, which moves nothing. (An input
        // marked whole stays whole: the host does not scatter it.)
        bool smallComputed = of(v).kind == Shard::Rep && v.getDefiningOp() &&
                             bytesOf(v) < bytesOf(out);
        if (!broadcasts && !isFree(v) && of(v).kind != Shard::Split &&
            !smallComputed)
          return allRep(op);
        Shard mine = *common;
        mine.dim -= off;
        if (!broadcasts && present != dims) {
          mine.span = span;
          mine.parts = parts;
          mine = canonical(typeOf(v).getShape(), mine, tp);
          if (!splittable(v, mine))
            return allRep(op);
        }
        p.operands.push_back(broadcasts ? Shard::rep() : mine);
      }
      p.result = *common;
      return p;
    }

    Value in = op->getOperand(0);
    Shard s = of(in);
    auto keep = [&](Shard operand, Shard result) {
      OpPlan p = allRep(op);
      p.operands[0] = operand;
      p.result = result;
      return p;
    };
    if (isa<ReshapeOp>(op)) {
      if (s.kind == Shard::Partial)
        return keep(s, s);
      if (s.kind != Shard::Split)
        return allRep(op);
      return reshape(op, s);
    }
    if (auto tr = dyn_cast<TransposeOp>(op)) {
      if (s.kind == Shard::Partial)
        return keep(s, s);
      if (s.kind != Shard::Split)
        return allRep(op);
      ArrayRef<int64_t> perm = tr.getPerm();
      for (int64_t e = 0; e < (int64_t)perm.size(); ++e) {
        if (perm[e] != s.dim)
          continue;
        // The split's dims must stay together and in order.
        for (int64_t i = 1; i < s.span; ++i)
          if (e + i >= (int64_t)perm.size() || perm[e + i] != s.dim + i)
            return allRep(op);
        return keep(s, Shard::split(e, s.span, s.parts));
      }
      return allRep(op);
    }
    auto axisOf = [&](int64_t axis, Value v) {
      return axis < 0 ? axis + typeOf(v).getRank() : axis;
    };
    if (auto cat = dyn_cast<ConcatOp>(op)) {
      std::optional<Shard> split;
      for (Value v : op->getOperands())
        if (of(v).kind == Shard::Split) {
          if (split && !(*split == of(v)))
            return allRep(op);
          split = of(v);
        } else if (of(v).kind == Shard::Partial) {
          return allRep(op);
        }
      if (!split || split->covers(axisOf(cat.getAxis(), out)) ||
          !splittable(out, *split))
        return allRep(op);
      OpPlan p;
      p.operands.assign(op->getNumOperands(), *split);
      p.result = *split;
      return p;
    }
    if (auto sl = dyn_cast<SliceOp>(op)) {
      if (s.kind != Shard::Split)
        return allRep(op);
      for (int64_t axis : sl.getAxes())
        if (s.covers(axisOf(axis, in)))
          return allRep(op);
      return keep(s, s);
    }
    if (auto sm = dyn_cast<SoftmaxOp>(op)) {
      if (s.kind != Shard::Split || s.covers(axisOf(sm.getAxis(), in)))
        return allRep(op);
      return keep(s, s);
    }
    if (auto ln = dyn_cast<LayerNormOp>(op)) {
      if (s.kind != Shard::Split ||
          s.dim + s.span > axisOf(ln.getAxis(), in))
        return allRep(op);
      return keep(s, s);
    }
    if (auto g = dyn_cast<GatherOp>(op)) {
      // An embedding table split along its row (hidden) dimension: every
      // rank looks up its slice of the hidden vector.
      Value table = g.getInput();
      int64_t rt = typeOf(table).getRank();
      if (g.getAxis() == 0 && rt == 2 && table.getDefiningOp<ConstantOp>() &&
          splittable(table, 1) && of(g.getIndices()).kind == Shard::Rep) {
        // The rows are gathered at once: the residual stream they start
        // stays whole on every chip.
        OpPlan p;
        p.operands = {Shard::split(1), Shard::rep()};
        p.result = Shard::rep();
        p.gatherAfter = outRank - 1;
        return p;
      }
      return allRep(op);
    }
    return allRep(op);
  }

  /// The split of a reshape's result holding the same pieces as split
  /// `s` of its input (whose pieces are contiguous runs of the flattened
  /// value, so the same runs on the result side), if they are boxes there.
  std::optional<Shard> throughReshape(ArrayRef<int64_t> in,
                                      ArrayRef<int64_t> out, Shard s) {
    int64_t parts = s.pieces(tp);
    int64_t before = 1, run = 1;
    for (int64_t i = 0; i < s.dim; ++i)
      before *= in[i];
    for (int64_t i = s.dim; i < s.dim + s.span; ++i)
      run *= in[i];
    // The run may take in the whole dims after it: the pieces stay the same.
    for (int64_t j = s.dim + s.span;; ++j) {
      int64_t prefix = 1;
      for (int64_t e = 0; e < (int64_t)out.size() && prefix <= before; ++e) {
        if (prefix == before) {
          int64_t m = 1;
          for (int64_t f = e; f < (int64_t)out.size() && m < run; ++f) {
            m *= out[f];
            if (m == run && !pieceFactors(out, e, f - e + 1, parts).empty())
              return canonical(out, Shard::split(e, f - e + 1, s.parts), tp);
          }
        }
        prefix *= out[e];
      }
      if (j >= (int64_t)in.size())
        return std::nullopt;
      run *= in[j];
    }
  }

  /// A reshape of split `s`: the same pieces on the result side when they
  /// are boxes there. A reshape that cuts the last dim into several (hidden
  /// into heads x head_dim) should not cut the new, smaller last dim (a
  /// head apart): fewer, larger pieces that rank groups share are taken
  /// instead (k and v past the key-value heads: each rank holds the whole
  /// head its query heads read), gathered inside each group of ranks that
  /// shares one (groupGather).
  OpPlan reshape(Operation *op, Shard s) {
    ArrayRef<int64_t> in = typeOf(op->getOperand(0)).getShape();
    ArrayRef<int64_t> out = typeOf(op->getResult(0)).getShape();
    bool avoidLast = !out.empty() && !in.empty() && out.back() < in.back();
    int64_t parts = s.pieces(tp);
    std::optional<Shard> cutsLast;
    for (int64_t q = parts; q >= 2; --q) {
      if (parts % q)
        continue;
      Shard from = s;
      from.parts = q;
      if (q != parts && !splittable(op->getOperand(0), from))
        continue;
      from = canonical(in, from, tp);
      std::optional<Shard> r = throughReshape(in, out, from);
      if (!r || !splittable(op->getResult(0), *r))
        continue;
      bool last = r->covers(int64_t(out.size()) - 1);
      OpPlan p = allRep(op);
      p.operands[0] = from;
      p.result = *r;
      if (q == parts && (!last || !avoidLast))
        return p;
      if (q == parts) {
        cutsLast = *r;
        continue;
      }
      if (!last)
        return p;
    }
    if (cutsLast) {
      OpPlan p = allRep(op);
      p.operands[0] = s;
      p.result = *cutsLast;
      return p;
    }
    return allRep(op);
  }
};

/// Estimated seconds and SRAM bytes of one op on one chip.
struct OpCost {
  double seconds = 0;
  int64_t weightBytes = 0; // constants (stored at the matrix precision)
  int64_t inputBytes = 0;  // model inputs it reads first
};

struct Estimate {
  int64_t tp = 1, pp = 1;
  bool fits = false;
  double latency = 0, interval = 0;
  std::vector<int64_t> stageOf; // per costed op
  std::string why;              // why it does not fit
};

struct GraphPartitionPass : impl::GraphPartitionBase<GraphPartitionPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  /// The fewest chips, from `from` up to `limit`, on which some tp x pp
  /// partition fits; 0 if none does.
  int64_t smallestFit(func::FuncOp func, int64_t from, int64_t limit);
  Propagation &propagation(func::FuncOp func, int64_t tp);

  std::optional<TargetModel> target_;
  std::vector<Operation *> ops_; // costed ops, in order
  std::map<int64_t, Propagation> props_;
  std::map<int64_t, std::shared_ptr<ChipNetwork>> networks_;

  OpCost costOf(Operation *op, const Propagation &prop,
                std::set<void *> &seenArgs);
  Estimate estimate(int64_t tp, int64_t pp,
                    const Propagation &prop);
  double collectiveSeconds(const CollectiveNeed &c, int64_t tp);
  LogicalResult rewrite(func::FuncOp func, const Propagation &prop,
                        const Estimate &plan);
};

OpCost GraphPartitionPass::costOf(Operation *op, const Propagation &prop,
                                  std::set<void *> &seenArgs) {
  OpCost c;
  const TargetModel &t = *target_;
  NumericFormat format = matrixFormat(precision);
  int64_t weightElemBytes = weightElementBytes(precision);
  double flops = 0, bytes = 0;
  bool matrix = false;
  // Each chip reads and writes its share of every value: its piece of a
  // split (a piece shared by several ranks is read by each), the whole of
  // anything else (a partial sum is whole on every chip). An input split
  // over several dims arrives whole and is cut on chip.
  auto planIt = prop.plans.find(op);
  const OpPlan *plan = planIt == prop.plans.end() ? nullptr : &planIt->second;
  auto share = [&](Value v, Shard s) -> double {
    if (s.kind != Shard::Split || (isa<BlockArgument>(v) && s.span > 1))
      return 1.0;
    return double(s.pieces(prop.tp));
  };
  if (auto mm = dyn_cast<MatMulOp>(op)) {
    ArrayRef<int64_t> a = typeOf(mm.getLhs()).getShape();
    int64_t k = a.empty() ? 1 : a.back();
    flops = 2.0 * double(typeOf(mm.getResult()).getNumElements()) * double(k);
    matrix = t.matrixSupports(format);
  } else {
    for (Value r : op->getResults())
      flops += double(typeOf(r).getNumElements());
  }
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    double div = plan ? share(v, plan->operands[i]) : 1.0;
    if (auto cst = v.getDefiningOp<ConstantOp>()) {
      int64_t b = isa<MatMulOp>(op) && typeOf(v).getElementType().isF32()
                      ? typeOf(v).getNumElements() * weightElemBytes
                      : bytesOf(v);
      c.weightBytes += int64_t(double(b) / div);
      bytes += double(b) / div;
      continue;
    }
    bytes += double(bytesOf(v)) / div;
    if (isa<BlockArgument>(v) && seenArgs.insert(v.getAsOpaquePointer()).second)
      c.inputBytes += int64_t(double(bytesOf(v)) / div);
  }
  for (Value r : op->getResults())
    bytes += double(bytesOf(r)) /
             (!plan                     ? 1.0
              : plan->gatherAfter >= 0 ? double(prop.tp)
                                       : share(r, plan->result));
  double peak = matrix ? t.peakMatrixFlopsPerChip(format)
                       : t.peakVectorOpsPerChip();
  double bw = t.sramBytesPerSecondPerChip();
  double split = prop.divided.count(op) ? double(prop.divided.at(op)) : 1.0;
  // A fixed cost per op keeps many tiny ops from looking free: the
  // longest unit pipeline latency of the tile (a kernel's fill and drain).
  const auto &tile = t.desc().chip.tile;
  double fixed =
      double(std::max(tile.matrix.latencyCycles, tile.vector.latencyCycles)) /
      t.clockHz();
  // A transpose of a matmul operand is read in place by the matmul's kernel
  // (graph-form-kernels): no copy is made, so it takes no time (its
  // weights, a Gemm's transposed B, still count).
  c.seconds = isMatmulOperandTranspose(op)
                  ? 0.0
                  : std::max(flops / split / std::max(peak, 1.0), bytes / bw) +
                        fixed;
  return c;
}

double GraphPartitionPass::collectiveSeconds(const CollectiveNeed &c,
                                             int64_t tp) {
  std::shared_ptr<ChipNetwork> &cached = networks_[tp];
  if (!cached)
    cached = std::make_shared<ChipNetwork>(
        *target_, tp, std::max<int64_t>(systemChips, chips), tp);
  const ChipNetwork &net = *cached;
  // A group's ranks are consecutive: the first group stands for all.
  int64_t n = c.ranks ? c.ranks : tp;
  std::vector<int64_t> group;
  for (int64_t i = 0; i < n; ++i)
    group.push_back(i);
  std::string alg = net.collectiveAlgorithm(group);
  // A narrow policy's f32 activations cross chips at its wire format.
  std::optional<NumericFormat> wire = rt::activationWireFormat(precision);
  int64_t bytes =
      c.f32 && wire ? c.bytes / 4 * int64_t(rt::numericFormatBytes(*wire))
                    : c.bytes;
  int64_t chunk = (bytes + n - 1) / n;
  // One step: every rank sends a chunk to a neighbour (ring) or to every
  // other rank at once (direct); the slowest pair sets the pace.
  double step = net.transferCycles(0, 1 % n, chunk);
  double steps = alg == "ring" ? double(n - 1) : alg == "direct" ? 1.0 : 2.0;
  if (alg == "hierarchical")
    step = net.transferCycles(0, n - 1, chunk);
  double phases = c.reduce ? 2.0 : 1.0;
  return phases * steps * step / target_->clockHz();
}

Estimate GraphPartitionPass::estimate(int64_t tp, int64_t pp,
                                      const Propagation &prop) {
  Estimate e;
  e.tp = tp;
  e.pp = pp;
  std::set<void *> seenArgs;
  std::vector<OpCost> costs;
  for (Operation *op : ops_)
    costs.push_back(costOf(op, prop, seenArgs));
  // Collectives are charged to the op that needs them.
  std::map<Operation *, double> extra;
  for (const CollectiveNeed &c : prop.collectives)
    extra[c.before] += collectiveSeconds(c, tp);
  std::vector<double> seconds;
  for (size_t i = 0; i < ops_.size(); ++i)
    seconds.push_back(costs[i].seconds + extra[ops_[i]]);
  double total = 0;
  for (double s : seconds)
    total += s;
  // A fifth of each chip is left for activations and for the uneven spread
  // of weights over its tiles.
  const double capacity =
      double(target_->sramBytesPerChip()) * TargetModel::kPartitionSramShare;
  // Where stages may be cut: before op i, the bytes of computed values
  // made before it and read from it on (they cross to the next stage).
  // Only cuts within 4x of the cheapest are allowed: between layers (the
  // residual stream), not inside attention (the KV cache).
  std::map<Operation *, size_t> position;
  for (size_t i = 0; i < ops_.size(); ++i)
    position[ops_[i]] = i;
  std::vector<double> crossing(ops_.size() + 1, 0);
  for (size_t i = 0; i < ops_.size(); ++i)
    for (Value r : ops_[i]->getResults()) {
      size_t last = i;
      for (Operation *u : r.getUsers())
        if (auto it = position.find(u); it != position.end())
          last = std::max(last, it->second);
      if (last > i) {
        crossing[i + 1] += double(bytesOf(r));
        crossing[last + 1] -= double(bytesOf(r));
      }
    }
  // An activation every chip holds whole (graph.whole: the layer input of
  // a body-only graph, the residual stream) is made before the first op:
  // read on both sides of a cut, it crosses it as a computed value would.
  // (Without it, a cut inside the first norm carried a few bytes, the
  // cheapest by far, and the 4x rule below left no other: a body-only
  // graph's first stage got four ops.)
  if (!ops_.empty())
    if (auto f = ops_.front()->getParentOfType<func::FuncOp>())
      for (BlockArgument arg : f.getArguments()) {
        if (!f.getArgAttr(arg.getArgNumber(), kWholeAttr))
          continue;
        size_t last = 0;
        bool read = false;
        for (Operation *u : arg.getUsers())
          if (auto it = position.find(u); it != position.end()) {
            last = std::max(last, it->second);
            read = true;
          }
        if (read && last > 0) {
          crossing[1] += double(bytesOf(arg));
          crossing[last + 1] -= double(bytesOf(arg));
        }
      }
  for (size_t i = 1; i <= ops_.size(); ++i)
    crossing[i] += crossing[i - 1];
  double cheapest = -1;
  for (size_t i = 1; i < ops_.size(); ++i)
    if (crossing[i] > 0 && (cheapest < 0 || crossing[i] < cheapest))
      cheapest = crossing[i];
  auto cuttable = [&](size_t i) {
    return cheapest < 0 || crossing[i] <= 4 * cheapest;
  };
  // Segments: the runs of ops between allowed cuts.
  struct Segment {
    size_t begin, end;
    double seconds = 0, weights = 0, inputs = 0;
    double bytes() const { return weights + inputs; }
  };
  std::vector<Segment> segments;
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (segments.empty() || cuttable(i))
      segments.push_back({i, i});
    Segment &g = segments.back();
    g.end = i + 1;
    g.seconds += seconds[i];
    g.weights += double(costs[i].weightBytes);
    g.inputs += double(costs[i].inputBytes);
  }
  // A hop between stages: the activations crossing it (small for decode)
  // cost about one link latency.
  const double hop = target_->chipLinkLatencySeconds();
  e.latency = total + double(pp - 1) * hop;
  // What a stage of `time` seconds holding `weights` and reading `inputs`
  // bytes of model inputs bounds: for objective latency its time; for
  // throughput also the interval its SRAM allows. Each input in flight
  // keeps its own copy of the model inputs a stage reads (a decode step's
  // KV cache: read at the stage, written back as an output kept to the
  // end), about latency / interval inputs at once, beside the stage's
  // resident weights. Stages are packed by this, so a throughput split
  // leaves each stage room for its copies instead of filling some with
  // weights. (A stage packs its weights and one copy of its inputs within
  // `capacity`, so the room is at least the inputs.)
  const bool throughput = objective == "throughput";
  auto sramInterval = [&](double weights, double inputs) {
    if (inputs <= 0)
      return 0.0;
    double room = capacity - weights;
    return room > 0 ? e.latency * inputs / room
                    : std::numeric_limits<double>::infinity();
  };
  auto bound = [&](double time, double weights, double inputs) {
    return throughput ? std::max(time, sramInterval(weights, inputs)) : time;
  };
  // The fewest stages of at most `limit` each (by `bound`), filled
  // greedily segment by segment, each within SRAM; the stage of every op,
  // or empty.
  auto pack = [&](double limit) -> std::vector<int64_t> {
    std::vector<int64_t> stage(ops_.size(), 0);
    int64_t s = 0;
    double time = 0, weights = 0, inputs = 0;
    for (size_t k = 0; k < segments.size(); ++k) {
      const Segment &g = segments[k];
      if (g.bytes() > capacity)
        return {};
      if (k > 0 &&
          (bound(time + g.seconds, weights + g.weights, inputs + g.inputs) >
               limit ||
           weights + inputs + g.bytes() > capacity)) {
        ++s;
        time = weights = inputs = 0;
      }
      if (s >= pp)
        return {};
      time += g.seconds;
      weights += g.weights;
      inputs += g.inputs;
      for (size_t i = g.begin; i < g.end; ++i)
        stage[i] = s;
    }
    return stage;
  };
  // Binary search for the smallest stage bound that packs into pp stages.
  // (Rounding: sums taken in another order may exceed `total` by an ulp.
  // A stage within SRAM bounds at most max(its time, the latency).)
  double lo = 0,
         hi = (throughput ? std::max(total, e.latency) : total) * (1 + 1e-9) +
              1e-12;
  std::vector<int64_t> best = pack(hi);
  if (best.empty()) {
    e.why = "the ops do not pack into " + std::to_string(pp) +
            " stages within each chip's SRAM";
    return e;
  }
  for (int it = 0; it < 40; ++it) {
    double mid = (lo + hi) / 2;
    std::vector<int64_t> s = pack(mid);
    if (s.empty())
      lo = mid;
    else {
      hi = mid;
      best = std::move(s);
    }
  }
  // Among packings whose stages take at most 5% more than the best, the
  // one whose cuts carry the fewest bytes (a cut after a layer's norm moves
  // the normalised activations and the residual; one before it only the
  // residual): stage by stage, the cheapest cut that still lets the rest
  // pack into the stages left (greedy packing is optimal for that test),
  // the later one on a tie.
  const double relaxed = hi * 1.05;
  // need[k]: the stages greedy packing takes for segments k.. (a stage
  // starting at segment k ends before reach(k), the first segment that
  // would overflow it); one pass from the end, with prefix sums.
  const size_t n = segments.size();
  std::vector<double> timeBefore(n + 1, 0), weightsBefore(n + 1, 0),
      inputsBefore(n + 1, 0);
  for (size_t k = 0; k < n; ++k) {
    timeBefore[k + 1] = timeBefore[k] + segments[k].seconds;
    weightsBefore[k + 1] = weightsBefore[k] + segments[k].weights;
    inputsBefore[k + 1] = inputsBefore[k] + segments[k].inputs;
  }
  // Segments k..r-1 as one stage: over the relaxed bound, or SRAM.
  auto overflows = [&](size_t k, size_t r) {
    double w = weightsBefore[r] - weightsBefore[k];
    double in = inputsBefore[r] - inputsBefore[k];
    return bound(timeBefore[r] - timeBefore[k], w, in) > relaxed ||
           w + in > capacity;
  };
  const int64_t never = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> need(n + 1, 0);
  for (size_t k = n, reach = n; k-- > 0;) {
    // The stage from k takes segments k..reach-1; an earlier k reaches no
    // further (segment times and bytes are not negative, and the bound
    // grows with each).
    while (reach > k + 1 && overflows(k, reach))
      --reach;
    need[k] = segments[k].bytes() > capacity || need[reach] == never
                  ? never
                  : 1 + need[reach];
  }
  std::vector<int64_t> refined(ops_.size(), 0);
  size_t next = 0;
  for (int64_t s = 0; s < pp && next < segments.size(); ++s) {
    size_t end = 0;
    double cheapestCut = std::numeric_limits<double>::infinity();
    for (size_t j = next; j < segments.size(); ++j) {
      if (j > next && overflows(next, j + 1))
        break;
      if (j + 1 == segments.size()) {
        // The rest fits in this stage: the last one takes it.
        if (s == pp - 1 || end == 0)
          end = j + 1;
        break;
      }
      if (s == pp - 1 || need[j + 1] > pp - s - 1)
        continue;
      double cut = crossing[segments[j + 1].begin];
      if (cut <= cheapestCut) {
        cheapestCut = cut;
        end = j + 1;
      }
    }
    if (end == 0)
      break;
    for (size_t k = next; k < end; ++k)
      for (size_t i = segments[k].begin; i < segments[k].end; ++i)
        refined[i] = s;
    next = end;
  }
  if (next == segments.size())
    best = std::move(refined);
  e.fits = true;
  e.stageOf = best;
  std::vector<double> stageTime(pp, 0), stageWeights(pp, 0),
      stageInputs(pp, 0);
  for (size_t i = 0; i < ops_.size(); ++i) {
    stageTime[best[i]] += seconds[i];
    stageWeights[best[i]] += double(costs[i].weightBytes);
    stageInputs[best[i]] += double(costs[i].inputBytes);
  }
  // The interval: the busiest stage, and no shorter than its SRAM lets
  // inputs overlap (`bound` for throughput, whatever the objective).
  e.interval = 0;
  for (int64_t s = 0; s < pp; ++s)
    e.interval = std::max({e.interval, stageTime[s],
                           sramInterval(stageWeights[s], stageInputs[s])});
  return e;
}

//===----------------------------------------------------------------------===//
// Step 3: the rewrite
//===----------------------------------------------------------------------===//

/// The slice [lo, hi) of constant `attr` along `dim`.
ElementsAttr sliceConstantRange(ElementsAttr attr, int64_t dim, int64_t lo,
                                int64_t hi, std::string &error) {
  auto type = cast<RankedTensorType>(attr.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = hi - lo;
  auto sliced = RankedTensorType::get(shape, type.getElementType());
  if (auto dense = dyn_cast<DenseElementsAttr>(attr); dense && dense.isSplat())
    return dense.resizeSplat(sliced);
  std::optional<rt::Tensor> t = tryTensorFromAttr(attr, error);
  if (!t)
    return {};
  rt::Tensor part = rt::ref::slice(*t, {lo}, {hi}, {dim}, {1});
  return attrFromTensor(part, sliced);
}

/// The piece of constant `attr` that rank `r` of `n` holds as split `s`.
ElementsAttr sliceConstant(ElementsAttr attr, Shard s, int64_t r, int64_t n,
                           std::string &error) {
  Box box = pieceBox(cast<RankedTensorType>(attr.getType()).getShape(), s, r, n);
  for (int64_t i = 0; i < s.span && attr; ++i)
    attr = sliceConstantRange(attr, s.dim + i, box.lo[i],
                              box.lo[i] + box.size[i], error);
  return attr;
}

/// A projection whose output is only ever read in column slices (a fused
/// QKV projection split into Q, K and V) becomes one projection per slice:
///   %m = matmul %x, %W ; %a = add %b, %m ; slice %a [lo, hi) on the last axis
/// -> matmul %x, %W[:, lo:hi] ; add %b[lo:hi]. Each can then be split by
/// columns across chips on its own (by heads).
void unfuseSlicedProjections(func::FuncOp func) {
  std::vector<MatMulOp> candidates;
  func.walk([&](MatMulOp mm) { candidates.push_back(mm); });
  for (MatMulOp mm : candidates) {
    auto w = mm.getRhs().getDefiningOp<ConstantOp>();
    if (!w || typeOf(w).getRank() != 2 || mm->use_empty())
      continue;
    int64_t rank = typeOf(mm.getResult()).getRank();
    Value out = mm.getResult();
    AddOp bias;
    ConstantOp biasConst;
    if (auto add = dyn_cast<AddOp>(*mm->getUsers().begin());
        add && mm->hasOneUse()) {
      Value other = add.getLhs() == out ? add.getRhs() : add.getLhs();
      auto c = other.getDefiningOp<ConstantOp>();
      if (c && typeOf(c).getRank() == 1 &&
          typeOf(c).getDimSize(0) == typeOf(out).getShape().back() &&
          add.getResult().getType() == out.getType()) {
        bias = add;
        biasConst = c;
        out = add.getResult();
      }
    }
    if (!bias && !isa<SliceOp>(*mm->getUsers().begin()))
      continue;
    std::vector<SliceOp> slices;
    bool ok = !out.use_empty();
    for (Operation *u : out.getUsers()) {
      auto sl = dyn_cast<SliceOp>(u);
      ok = ok && sl && sl.getAxes().size() == 1 &&
           (sl.getAxes()[0] == rank - 1 || sl.getAxes()[0] == -1) &&
           sl.getSteps()[0] == 1 && sl.getStarts()[0] >= 0 &&
           sl.getEnds()[0] > sl.getStarts()[0];
      if (ok)
        slices.push_back(sl);
    }
    if (!ok || slices.size() < 2)
      continue;
    std::string error;
    for (SliceOp sl : slices) {
      int64_t lo = sl.getStarts()[0], hi = sl.getEnds()[0];
      ElementsAttr wPart = sliceConstantRange(w.getValue(), 1, lo, hi, error);
      ElementsAttr bPart;
      if (biasConst)
        bPart = sliceConstantRange(biasConst.getValue(), 0, lo, hi, error);
      if (!wPart || (biasConst && !bPart))
        return;
      OpBuilder b(sl);
      Value wv = ConstantOp::create(b, w.getLoc(),
                                    cast<RankedTensorType>(wPart.getType()),
                                    wPart);
      Value r = MatMulOp::create(b, mm.getLoc(), sl.getResult().getType(),
                                 mm.getLhs(), wv);
      if (bias) {
        Value bv = ConstantOp::create(b, biasConst.getLoc(),
                                      cast<RankedTensorType>(bPart.getType()),
                                      bPart);
        r = AddOp::create(b, bias.getLoc(), sl.getResult().getType(), r, bv);
      }
      sl.getResult().replaceAllUsesWith(r);
      sl.erase();
    }
    if (bias)
      bias.erase();
    mm.erase();
  }
}

class Rewriter {
public:
  Rewriter(func::FuncOp func, const Propagation &prop,
           const std::vector<Operation *> &ops,
           const std::vector<int64_t> &stageOf, int64_t tp)
      : func_(func), prop_(prop), tp_(tp), b_(func.getContext()) {
    for (size_t i = 0; i < ops.size(); ++i)
      stage_[ops[i]] = stageOf[i];
  }

  LogicalResult run();
  const std::string &error() const { return error_; }

private:
  int64_t chip(int64_t stage, int64_t rank) const { return stage * tp_ + rank; }
  Type localType(Value v, Shard s) const {
    RankedTensorType t = typeOf(v);
    if (s.kind != Shard::Split)
      return t;
    SmallVector<int64_t> shape(t.getShape());
    Box box = pieceBox(shape, s, 0, tp_);
    for (int64_t i = 0; i < s.span; ++i)
      shape[s.dim + i] = box.size[i];
    return RankedTensorType::get(shape, t.getElementType());
  }
  /// `v` in form `want` on every rank of `stage` (one value per rank).
  FailureOr<std::vector<Value>> get(Value v, Shard want, int64_t stage,
                                    Location loc);
  std::vector<Value> slices(const std::vector<Value> &whole, Value orig,
                            Shard want, int64_t stage, Location loc);
  /// `v`[lo, lo + size) along dims first.. on rank `rank`'s chip.
  Value sliceOnChip(Value v, ArrayRef<int64_t> lo, ArrayRef<int64_t> size,
                    int64_t first, int64_t stage, int64_t rank, Location loc);
  std::vector<Value> collective(const std::vector<Value> &parts, Value orig,
                                Shard have, int64_t stage, Location loc);
  Value argPart(BlockArgument arg, Shard s, int64_t rank);

  func::FuncOp func_;
  const Propagation &prop_;
  int64_t tp_;
  OpBuilder b_;
  std::map<Operation *, int64_t> stage_;
  /// Per original value: its per-rank values in its own form.
  std::map<void *, std::vector<Value>> local_;
  /// (value, form, stage) -> per-rank values.
  std::map<std::tuple<void *, Shard, int64_t>, std::vector<Value>> cache_;
  /// New arguments: (arg, form) -> per-rank argument.
  std::map<std::pair<void *, Shard>, std::vector<Value>> argParts_;
  std::vector<std::pair<Value, std::array<int64_t, 4>>> newArgs_; // arg, (orig, axis, index, count)
  std::string error_;
};

Value Rewriter::argPart(BlockArgument arg, Shard s, int64_t rank) {
  assert((s.kind != Shard::Split || s.span == 1) &&
         "an input part is cut along one dim (get() cuts the others on chip)");
  auto key = std::make_pair(arg.getAsOpaquePointer(), s);
  auto &args = argParts_[key];
  if (args.empty()) {
    Block &entry = func_.getBody().front();
    // Ranks that share a piece each get a copy of it.
    int64_t pieces = s.kind == Shard::Split ? s.pieces(tp_) : tp_;
    for (int64_t r = 0; r < tp_; ++r) {
      BlockArgument a = entry.addArgument(localType(arg, s), arg.getLoc());
      args.push_back(a);
      newArgs_.push_back({a, {int64_t(arg.getArgNumber()),
                              s.kind == Shard::Split ? s.dim : -1,
                              r / (tp_ / pieces), pieces}});
    }
  }
  return args[rank];
}

Value Rewriter::sliceOnChip(Value v, ArrayRef<int64_t> lo,
                            ArrayRef<int64_t> size, int64_t first,
                            int64_t stage, int64_t rank, Location loc) {
  RankedTensorType t = typeOf(v);
  SmallVector<int64_t> shape(t.getShape()), ends, axes;
  for (size_t i = 0; i < lo.size(); ++i) {
    shape[first + i] = size[i];
    ends.push_back(lo[i] + size[i]);
    axes.push_back(first + int64_t(i));
  }
  auto s = SliceOp::create(
      b_, loc, RankedTensorType::get(shape, t.getElementType()), v,
      b_.getDenseI64ArrayAttr(lo), b_.getDenseI64ArrayAttr(ends),
      b_.getDenseI64ArrayAttr(axes),
      b_.getDenseI64ArrayAttr(SmallVector<int64_t>(lo.size(), 1)));
  s->setAttr(kChipAttr, b_.getI64IntegerAttr(chip(stage, rank)));
  return s;
}

std::vector<Value> Rewriter::slices(const std::vector<Value> &whole, Value orig,
                                    Shard want, int64_t stage, Location loc) {
  std::vector<Value> out;
  ArrayRef<int64_t> shape = typeOf(orig).getShape();
  for (int64_t r = 0; r < tp_; ++r) {
    Box box = pieceBox(shape, want, r, tp_);
    out.push_back(
        sliceOnChip(whole[r], box.lo, box.size, want.dim, stage, r, loc));
  }
  return out;
}

std::vector<Value> Rewriter::collective(const std::vector<Value> &parts,
                                        Value orig, Shard have, int64_t stage,
                                        Location loc) {
  std::vector<int64_t> chips;
  for (int64_t r = 0; r < tp_; ++r)
    chips.push_back(chip(stage, r));
  SmallVector<Type> types(tp_, orig.getType());
  if (have.kind == Shard::Partial) {
    Operation *op = AllReduceOp::create(b_, loc, types, parts,
                                        b_.getDenseI64ArrayAttr(chips));
    return std::vector<Value>(op->result_begin(), op->result_end());
  }
  RankedTensorType full = typeOf(orig);
  ArrayRef<int64_t> shape = full.getShape();
  auto onChip = [&](Operation *op, int64_t r) {
    op->setAttr(kChipAttr, b_.getI64IntegerAttr(chip(stage, r)));
    return op->getResult(0);
  };
  auto reshaped = [&](Value v, Type type, int64_t r) {
    return v.getType() == type
               ? v
               : onChip(ReshapeOp::create(b_, loc, type, v), r);
  };
  std::vector<Value> ps = parts;
  int64_t share = tp_ / have.pieces(tp_);
  // Ranks sharing a piece first cut it once more, one piece per rank, if
  // it can be cut into boxes that follow each other.
  std::optional<Shard> perRankSplit =
      share > 1 ? perRank(shape, have, tp_) : std::nullopt;
  if (perRankSplit) {
    Shard mine = *perRankSplit;
    Shard shared = have;
    shared.span = mine.span;
    for (int64_t r = 0; r < tp_; ++r) {
      Box outer = pieceBox(shape, shared, r, tp_);
      Box inner = pieceBox(shape, mine, r, tp_);
      SmallVector<int64_t> lo;
      for (int64_t i = 0; i < mine.span; ++i)
        lo.push_back(inner.lo[i] - outer.lo[i]);
      ps[r] = sliceOnChip(ps[r], lo, inner.size, mine.dim, stage, r, loc);
    }
    have = mine;
    share = 1;
  }
  if (have.span == 1 && share == 1) {
    Operation *op = AllGatherOp::create(b_, loc, types, ps,
                                        b_.getI64IntegerAttr(have.dim),
                                        b_.getDenseI64ArrayAttr(chips));
    return std::vector<Value>(op->result_begin(), op->result_end());
  }
  // Otherwise the pieces are contiguous runs of the split's dims
  // flattened: gather them as one dim (every rank's copy of a shared
  // piece, of which each rank then keeps one) and restore the shape.
  ArrayRef<int64_t> local =
      cast<RankedTensorType>(localType(orig, have)).getShape();
  int64_t run = 1;
  for (int64_t i = have.dim; i < have.dim + have.span; ++i)
    run *= local[i];
  auto withRun = [&](ArrayRef<int64_t> middle) {
    SmallVector<int64_t> m(local.take_front(have.dim));
    m.append(middle.begin(), middle.end());
    m.append(local.begin() + have.dim + have.span, local.end());
    return RankedTensorType::get(m, full.getElementType());
  };
  int64_t pieces = tp_ / share;
  for (int64_t r = 0; r < tp_; ++r)
    ps[r] = reshaped(ps[r], withRun({run}), r);
  SmallVector<Type> gatheredTypes(tp_, withRun({tp_ * run}));
  Operation *op = AllGatherOp::create(b_, loc, gatheredTypes, ps,
                                      b_.getI64IntegerAttr(have.dim),
                                      b_.getDenseI64ArrayAttr(chips));
  std::vector<Value> out;
  for (int64_t r = 0; r < tp_; ++r) {
    Value v = op->getResult(r);
    if (share > 1) {
      v = reshaped(v, withRun({pieces, share, run}), r);
      v = sliceOnChip(v, {0}, {1}, have.dim + 1, stage, r, loc);
    }
    out.push_back(reshaped(v, full, r));
  }
  return out;
}

FailureOr<std::vector<Value>> Rewriter::get(Value v, Shard want, int64_t stage,
                                            Location loc) {
  auto key = std::make_tuple(v.getAsOpaquePointer(), want, stage);
  if (auto it = cache_.find(key); it != cache_.end())
    return it->second;
  std::vector<Value> out;
  if (tp_ == 1 && isFree(v)) {
    out.push_back(v);
  } else if (auto c = v.getDefiningOp<ConstantOp>()) {
    for (int64_t r = 0; r < tp_; ++r) {
      ElementsAttr value = c.getValue();
      if (want.kind == Shard::Split) {
        value = sliceConstant(value, want, r, tp_, error_);
        if (!value)
          return failure();
      }
      out.push_back(ConstantOp::create(b_, c.getLoc(),
                                       cast<RankedTensorType>(value.getType()),
                                       value));
    }
  } else if (auto arg = dyn_cast<BlockArgument>(v)) {
    // Input parts are cut along one dim; a split of several is cut on
    // chip from the whole input.
    if (want.kind == Shard::Split && want.span > 1) {
      FailureOr<std::vector<Value>> whole = get(v, Shard::rep(), stage, loc);
      if (failed(whole))
        return failure();
      out = slices(*whole, v, want, stage, loc);
    } else {
      for (int64_t r = 0; r < tp_; ++r)
        out.push_back(argPart(arg, want, r));
    }
  } else {
    Shard have = prop_.of(v);
    std::vector<Value> parts = local_.at(v.getAsOpaquePointer());
    // Collectives and slices run on the producer's chips.
    if (Operation *def = v.getDefiningOp(); def && stage_.count(def))
      stage = stage_.at(def);
    if (int64_t group = prop_.groupGather(have, want)) {
      // Each group of ranks gathers its pieces into the one it shares.
      std::vector<Value> gathered;
      Type type = localType(v, want);
      for (int64_t first = 0; first < tp_; first += group) {
        SmallVector<int64_t> chips;
        for (int64_t r = first; r < first + group; ++r)
          chips.push_back(chip(stage, r));
        Operation *op = AllGatherOp::create(
            b_, loc, SmallVector<Type>(group, type),
            ValueRange(ArrayRef<Value>(parts).slice(first, group)),
            b_.getI64IntegerAttr(have.dim), b_.getDenseI64ArrayAttr(chips));
        gathered.insert(gathered.end(), op->result_begin(), op->result_end());
      }
      parts = std::move(gathered);
    } else if (!(have == want)) {
      if (have.kind != Shard::Rep) {
        parts = collective(parts, v, have, stage, loc);
        have = Shard::rep();
      }
      if (want.kind == Shard::Split)
        parts = slices(parts, v, want, stage, loc);
    }
    out = std::move(parts);
  }
  cache_[key] = out;
  return out;
}

LogicalResult Rewriter::run() {
  Block &entry = func_.getBody().front();
  const unsigned originalArgs = entry.getNumArguments();
  std::vector<Operation *> order;
  for (Operation &op : entry)
    order.push_back(&op);
  int64_t lastStage = 0;
  for (Operation *op : order) {
    if (isa<ConstantOp>(op))
      continue;
    auto planIt = prop_.plans.find(op);
    if (planIt == prop_.plans.end())
      continue;
    const OpPlan &plan = planIt->second;
    b_.setInsertionPoint(op);
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      // Results: a split output becomes one result per rank; anything else
      // is rank 0's copy. Outputs come from the last stage's chips.
      SmallVector<Value> results;
      SmallVector<std::array<int64_t, 4>> parts; // orig, axis, index, count
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        Shard want = plan.operands[i];
        int64_t stage = lastStage;
        if (Operation *def = v.getDefiningOp(); def && stage_.count(def))
          stage = stage_.at(def);
        if (tp_ > 1 && want.kind == Shard::Split) {
          FailureOr<std::vector<Value>> vs = get(v, want, stage, op->getLoc());
          if (failed(vs))
            return failure();
          // One result per piece: ranks that share a piece give it once.
          int64_t pieces = want.pieces(tp_), share = tp_ / pieces;
          for (int64_t r = 0; r < tp_; r += share) {
            results.push_back((*vs)[r]);
            parts.push_back({int64_t(i), want.dim, r / share, pieces});
          }
          continue;
        }
        if (!isFree(v)) {
          FailureOr<std::vector<Value>> vs =
              get(v, Shard::rep(), stage, op->getLoc());
          if (failed(vs))
            return failure();
          results.push_back((*vs)[0]);
        } else {
          results.push_back(v);
        }
        parts.push_back({int64_t(i), -2, 0, 1});
      }
      // Rewrite the signature: results, then arguments.
      SmallVector<DictionaryAttr> oldResAttrs;
      for (unsigned i = 0; i < func_.getNumResults(); ++i)
        oldResAttrs.push_back(func_.getResultAttrDict(i));
      auto newRet = func::ReturnOp::create(b_, ret.getLoc(), results);
      ret.erase();
      SmallVector<Type> resultTypes;
      for (Value r : newRet.getOperands())
        resultTypes.push_back(r.getType());
      SmallVector<Type> argTypes(entry.getArgumentTypes());
      func_.setType(FunctionType::get(func_.getContext(), argTypes, resultTypes));
      for (auto [i, p] : llvm::enumerate(parts)) {
        if (oldResAttrs[p[0]])
          func_.setResultAttrs(i, oldResAttrs[p[0]]);
        if (p[1] != -2)
          func_.setResultAttr(i, kPartAttr,
                              b_.getDenseI64ArrayAttr({p[1], p[2], p[3]}));
      }
      continue;
    }
    int64_t stage = stage_.count(op) ? stage_.at(op) : lastStage;
    lastStage = stage;
    std::vector<std::vector<Value>> operands;
    for (auto [v, want] : llvm::zip(op->getOperands(), plan.operands)) {
      FailureOr<std::vector<Value>> vs = get(v, want, stage, op->getLoc());
      if (failed(vs))
        return failure();
      operands.push_back(*vs);
    }
    // Per result, its per-rank values (ops of several results, such as
    // topk's values and indices, run replicated).
    std::vector<std::vector<Value>> results(op->getNumResults());
    Shard runAs = plan.gatherAfter >= 0 ? Shard::split(plan.gatherAfter)
                                        : plan.result;
    for (int64_t r = 0; r < tp_; ++r) {
      OperationState state(op->getLoc(), op->getName());
      for (auto &vs : operands)
        state.addOperands(vs[r]);
      for (Value res : op->getResults())
        state.addTypes(localType(res, runAs));
      state.addAttributes(op->getAttrs());
      Operation *clone = b_.create(state);
      clone->setAttr(kChipAttr, b_.getI64IntegerAttr(chip(stage, r)));
      for (auto [i, res] : llvm::enumerate(clone->getResults()))
        results[i].push_back(res);
    }
    if (plan.gatherAfter >= 0) {
      b_.setInsertionPoint(op);
      results[0] = collective(results[0], op->getResult(0), runAs, stage,
                              op->getLoc());
    }
    for (auto [i, res] : llvm::enumerate(op->getResults()))
      local_[res.getAsOpaquePointer()] = std::move(results[i]);
  }
  // The original ops are dead now: erase them (users first), then clones no
  // one uses (replicated work of ranks whose copy nobody reads).
  for (Operation *op : llvm::reverse(order))
    if (op != order.back() && !isa<ConstantOp>(op) && op->use_empty())
      op->erase();
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(entry)))
      if (!op.hasTrait<OpTrait::IsTerminator>() && op.use_empty() &&
          isMemoryEffectFree(&op)) {
        op.erase();
        changed = true;
      }
  }
  // Arguments: the original ones go (if unused), the parts stay, named as
  // the model input they are part of.
  SmallVector<DictionaryAttr> oldArgAttrs;
  for (unsigned i = 0; i < originalArgs; ++i)
    oldArgAttrs.push_back(func_.getArgAttrDict(i));
  for (auto &[arg, info] : newArgs_) {
    unsigned n = cast<BlockArgument>(arg).getArgNumber();
    if (oldArgAttrs[info[0]])
      func_.setArgAttrs(n, oldArgAttrs[info[0]]);
    func_.setArgAttr(n, kPartAttr,
                     b_.getDenseI64ArrayAttr({info[1], info[2], info[3]}));
  }
  // Unused parts are still parts of the input (the host writes them); only
  // original arguments that every use moved off are dropped, when a part
  // replaces them.
  llvm::BitVector drop(entry.getNumArguments());
  std::set<int64_t> replaced;
  for (auto &[arg, info] : newArgs_)
    replaced.insert(info[0]);
  for (unsigned i = 0; i < originalArgs; ++i)
    if (replaced.count(i) && entry.getArgument(i).use_empty())
      drop.set(i);
  if (failed(func_.eraseArguments(drop)))
    return failure();
  return success();
}

Propagation &GraphPartitionPass::propagation(func::FuncOp func, int64_t tp) {
  Propagation &prop = props_[tp];
  if (prop.tp != tp || prop.plans.empty()) {
    prop = Propagation();
    prop.tp = tp;
    prop.run(func);
  }
  return prop;
}

int64_t GraphPartitionPass::smallestFit(func::FuncOp func, int64_t from,
                                        int64_t limit) {
  for (int64_t m = std::max<int64_t>(1, from); m <= limit; ++m)
    for (int64_t t = 1; t <= m && t <= 64; ++t) {
      if (m % t || m / t > (int64_t)ops_.size())
        continue;
      if (estimate(t, m / t, propagation(func, t)).fits)
        return m;
    }
  return 0;
}

void GraphPartitionPass::runOnOperation() {
  func::FuncOp func = getOperation();
  std::string error;
  target_ = TargetModel::load(target, error);
  if (!target_) {
    func.emitError() << "graph-partition: " << error;
    return signalPassFailure();
  }
  if (chips < 1 || tp < 0 || pp < 0) {
    func.emitError() << "graph-partition: chips, tp and pp must be positive";
    return signalPassFailure();
  }
  if (objective != "latency" && objective != "throughput") {
    func.emitError() << "graph-partition: objective '" << objective
                     << "' is not latency or throughput";
    return signalPassFailure();
  }
  int64_t n = chips;
  const int64_t askedTp = tp, askedPp = pp;
  if (tp > 0 && pp > 0 && tp * pp != n) {
    if (n == 1)
      n = tp * pp;
    else {
      func.emitError() << "graph-partition: tp " << askedTp << " x pp "
                       << askedPp << " is " << askedTp * askedPp
                       << " chips, not the " << n << " asked for";
      return signalPassFailure();
    }
  }
  if ((askedTp > 0 && n % askedTp) || (askedPp > 0 && n % askedPp)) {
    bool badTp = askedTp > 0 && n % askedTp;
    func.emitError() << "graph-partition: " << (badTp ? "tp " : "pp ")
                     << (badTp ? askedTp : askedPp) << " does not divide "
                     << n << " chips";
    return signalPassFailure();
  }
  Builder b(func.getContext());

  // Does it fit at all?
  int64_t weightElemBytes = weightElementBytes(precision);
  int64_t needed = 0;
  for (Operation &op : func.getBody().front())
    if (auto c = dyn_cast<ConstantOp>(op)) {
      bool matrix = llvm::any_of(op.getUsers(), [](Operation *u) {
        return isa<MatMulOp>(u);
      });
      needed += matrix && typeOf(c).getElementType().isF32()
                    ? typeOf(c).getNumElements() * weightElemBytes
                    : bytesOf(c);
    }
  int64_t weights = needed;
  for (BlockArgument a : func.getArguments())
    needed += bytesOf(a);
  const int64_t perChip = target_->sramBytesPerChip();
  auto prepare = [&] {
    unfuseSlicedProjections(func);
    ops_.clear();
    props_.clear();
    for (Operation &op : func.getBody().front())
      if (!isa<ConstantOp, func::ReturnOp>(op))
        ops_.push_back(&op);
  };
  // The smallest chip count that fits, for the errors: from the bytes'
  // lower bound up (a partition needs room for activations too, and whole
  // layers per stage).
  auto fewest = [&](int64_t from) -> std::string {
    int64_t limit = std::max<int64_t>(4 * from, from + 64);
    int64_t m = smallestFit(func, from, limit);
    if (m == 0)
      return "no partition of up to " + std::to_string(limit) +
             " chips fits either";
    return "the fewest chips that fit are " + std::to_string(m) +
           " (--chips=" + std::to_string(m) + ")";
  };
  if (needed > perChip * n) {
    int64_t least = (needed + perChip - 1) / perChip;
    prepare();
    func.emitError() << "graph-partition: the model does not fit on " << n
                     << " chip" << (n == 1 ? "" : "s") << " of "
                     << target_->desc().name << ": it needs " << needed
                     << " bytes of SRAM (" << weights << " of weights, "
                     << needed - weights << " of inputs) but " << n
                     << " chip" << (n == 1 ? " holds " : "s hold ")
                     << perChip * n << "; " << fewest(least);
    return signalPassFailure();
  }
  // One chip: nothing to split (the check above is all this pass does).
  if (n == 1 && askedTp <= 1 && askedPp <= 1)
    return;
  prepare();

  // Candidates: every tp x pp = n the options allow.
  std::vector<Estimate> candidates;
  std::string report;
  for (int64_t t = 1; t <= n; ++t) {
    if (n % t || (tp > 0 && t != tp) || (pp > 0 && n / t != pp))
      continue;
    int64_t p = n / t;
    if (p > (int64_t)ops_.size()) {
      // Said, so that a failure with no candidate left still has a reason.
      report += (report.empty() ? "" : "; ") + std::string("tp ") +
                std::to_string(t) + " x pp " + std::to_string(p) +
                ": more pipeline stages than the model's " +
                std::to_string(ops_.size()) + " ops";
      continue;
    }
    Propagation &prop = propagation(func, t);
    Estimate e = estimate(t, p, prop);
    char buf[200];
    if (e.fits)
      std::snprintf(buf, sizeof buf, "tp %lld x pp %lld: latency %.2f us, "
                    "interval %.2f us, %zu collectives",
                    (long long)t, (long long)p, e.latency * 1e6,
                    e.interval * 1e6, prop.collectives.size());
    else
      std::snprintf(buf, sizeof buf, "tp %lld x pp %lld: does not fit (%s)",
                    (long long)t, (long long)p, e.why.c_str());
    report += (report.empty() ? "" : "; ") + std::string(buf);
    candidates.push_back(std::move(e));
  }
  const Estimate *chosen = nullptr;
  for (const Estimate &e : candidates) {
    if (!e.fits)
      continue;
    double key = objective == "latency" ? e.latency : e.interval;
    double best = !chosen ? 0
                  : objective == "latency" ? chosen->latency
                                           : chosen->interval;
    if (!chosen || key < best * (1 - 1e-9))
      chosen = &e;
  }
  if (!chosen) {
    std::string hint = tp > 0 || pp > 0 ? "" : "; " + fewest(n + 1);
    InFlightDiagnostic diag = func.emitError();
    diag << "graph-partition: no partition of " << n << " chips of "
         << target_->desc().name << " fits: " << report << hint;
    return signalPassFailure();
  }
  std::string head = "tp " + std::to_string(chosen->tp) + " x pp " +
                     std::to_string(chosen->pp) + " on " + std::to_string(n) +
                     " chips" +
                     (tp > 0 && pp > 0 ? " (as asked)"
                                       : " (objective " + objective + ")");
  func->setAttr(kChipsAttr, b.getI64IntegerAttr(n));
  func->setAttr(kTensorParallelAttr, b.getI64IntegerAttr(chosen->tp));
  func->setAttr(kPipelineParallelAttr, b.getI64IntegerAttr(chosen->pp));
  func->setAttr(kPartitionReportAttr, b.getStringAttr(head + "; " + report));
  if (chosen->pp > 1 && chosen->interval > 0)
    func->setAttr(kInFlightAttr,
                  b.getI64IntegerAttr(std::max<int64_t>(
                      1, static_cast<int64_t>(std::ceil(
                             chosen->latency / chosen->interval - 1e-9)))));
  if (systemChips > n)
    func->setAttr(kSystemChipsAttr, b.getI64IntegerAttr(systemChips));
  if (n == 1)
    return;
  Rewriter rw(func, props_.at(chosen->tp), ops_, chosen->stageOf, chosen->tp);
  if (failed(rw.run())) {
    func.emitError() << "graph-partition: could not slice a constant"
                     << (rw.error().empty() ? "" : ": " + rw.error());
    return signalPassFailure();
  }
  // A model input used on several chips (RoPE tables read by every layer,
  // say) gets a replica per chip, written by the host, rather than a trip
  // over the chip links from the first chip that reads it.
  Block &entry = func.getBody().front();
  unsigned args = entry.getNumArguments();
  for (unsigned i = 0; i < args; ++i) {
    BlockArgument arg = entry.getArgument(i);
    auto part = func.getArgAttrOfType<DenseI64ArrayAttr>(i, kPartAttr);
    if (part && part.size() == 3 && part[0] >= 0)
      continue; // a slice of the input: one chip's
    std::map<int64_t, std::vector<OpOperand *>> byChip;
    for (OpOperand &use : arg.getUses())
      byChip[chipOf(use.getOwner())].push_back(&use);
    if (byChip.size() < 2)
      continue;
    DictionaryAttr attrs = func.getArgAttrDict(i);
    int64_t replicas = int64_t(byChip.size()) - 1 + (part ? part[2] : 1);
    int64_t index = part ? part[2] : 1;
    for (auto it = std::next(byChip.begin()); it != byChip.end(); ++it) {
      unsigned n = entry.getNumArguments();
      if (failed(func.insertArgument(n, arg.getType(), attrs, arg.getLoc())))
        return signalPassFailure();
      BlockArgument added = entry.getArgument(n);
      func.setArgAttr(n, kPartAttr,
                      b.getDenseI64ArrayAttr({-1, index++, replicas}));
      for (OpOperand *use : it->second)
        use->set(added);
    }
    func.setArgAttr(i, kPartAttr,
                    b.getDenseI64ArrayAttr({-1, part ? part[1] : 0, replicas}));
  }
  // A constant used on several chips gets a copy per chip: weights are
  // resident where they are used.
  for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
    auto c = dyn_cast<ConstantOp>(op);
    if (!c)
      continue;
    std::map<int64_t, Value> perChip;
    for (OpOperand &use : llvm::make_early_inc_range(c->getUses())) {
      int64_t chip = chipOf(use.getOwner());
      auto it = perChip.find(chip);
      if (it == perChip.end()) {
        if (perChip.empty()) {
          perChip[chip] = c;
          continue;
        }
        OpBuilder ob(c);
        it = perChip.emplace(chip, ob.clone(*c)->getResult(0)).first;
      }
      use.set(it->second);
    }
  }
}

} // namespace
} // namespace loom::graph
