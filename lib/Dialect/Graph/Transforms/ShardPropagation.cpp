//===- ShardPropagation.cpp - graph-partition: sharding propagation -------===//
//
// Step 1 of graph-partition: decides, op by op, how every value is held
// across the tp ranks and which collectives that needs (Sharding.h).
//
//===----------------------------------------------------------------------===//
#include "Sharding.h"

#include "loom/Dialect/Graph/IR/OpClasses.h"

#include <atomic>
#include <cassert>

namespace loom::graph::partition {

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
std::optional<Shard> perRank(ArrayRef<int64_t> shape, Shard s, int64_t ranks) {
  for (Shard t = Shard::split(s.dim, s.span);
       t.dim + t.span <= int64_t(shape.size()); ++t.span)
    if (!pieceFactors(shape, t.dim, t.span, ranks).empty())
      return t;
  return std::nullopt;
}

/// Whether `v` is an f32 value held at 4 bytes (no narrower declared
/// storage): what a narrow policy carries across chips at 16 bits.
bool isF32(Value v) {
  return typeOf(v).getElementType().isF32() && !declaredStorage(v);
}
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
NumericFormat matrixFormat(StringRef precision) {
  return rt::kernelPrecisionFormat(precision).value_or(NumericFormat::F32);
}
int64_t weightElementBytes(StringRef precision) {
  return static_cast<int64_t>(rt::numericFormatBytes(matrixFormat(precision)));
}
bool isFree(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto f = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    return !f || !f.getArgAttr(arg.getArgNumber(), kWholeAttr);
  }
  return v.getDefiningOp<ConstantOp>() != nullptr;
}

void Propagation::run(func::FuncOp func) {
  static std::atomic<uint64_t> runs{0};
  serial = ++runs;
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
      collectives.push_back(
          {false, bytesOf(op.getResult(0)), &op, 0, isF32(op.getResult(0))});
    for (Value r : op.getResults())
      state[r.getAsOpaquePointer()] = plan.result;
    divided[&op] = plan.gatherAfter >= 0 || plan.result.kind == Shard::Partial
                       ? tp
                   : plan.result.kind == Shard::Split ? plan.result.pieces(tp)
                                                      : 1;
    plans[&op] = std::move(plan);
  }
}

std::map<Operation *, Shard> Propagation::sharedProjections() const {
  std::map<Operation *, Shard> out;
  for (const CollectiveNeed &c : collectives) {
    if (c.reduce || c.ranks == 0 || !c.value)
      continue;
    auto mm = c.value.getDefiningOp<MatMulOp>();
    if (!mm || !mm.getRhs().getDefiningOp<ConstantOp>() ||
        typeOf(mm.getRhs()).getRank() != 2)
      continue;
    // The projection's result is split along its last dim, one piece per
    // rank (decideMatMul), and wanted in fewer pieces along the same dim.
    int64_t last = typeOf(c.value).getRank() - 1;
    if (c.want.kind == Shard::Split && c.want.dim == last &&
        c.want.span == 1 && c.want.parts > 0 && c.want.parts < tp)
      out[mm.getOperation()] = c.want;
  }
  return out;
}

OpPlan Propagation::allRep(Operation *op) {
  OpPlan p;
  p.operands.assign(op->getNumOperands(), Shard::rep());
  return p;
}

OpPlan Propagation::decide(Operation *op) {
  if (tp == 1 || op->getNumResults() != 1)
    return allRep(op);
  if (auto mm = dyn_cast<MatMulOp>(op))
    return decideMatMul(mm);
  if (isElementwise(op))
    return decideElementwise(op);
  return decideMovement(op);
}

OpPlan Propagation::decideMatMul(MatMulOp mm) {
  Operation *op = mm.getOperation();
  Value out = op->getResult(0);
  int64_t outRank = typeOf(out).getRank();
  Value a = mm.getLhs(), b = mm.getRhs();
  int64_t ra = typeOf(a).getRank(), rb = typeOf(b).getRank();
  if (b.getDefiningOp<ConstantOp>() && rb == 2 && ra >= 1) {
    Shard sa = of(a);
    OpPlan p;
    auto shared = sharedResult.find(op);
    if (shared != sharedResult.end() && sa.kind != Shard::Partial &&
        splittable(b, Shard::split(1, 1, shared->second.parts)) &&
        splittable(out, shared->second)) {
      p.operands = {Shard::rep(), Shard::split(1, 1, shared->second.parts)};
      p.result = shared->second;
      return p;
    }
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
        SmallVector<int64_t> f = pieceFactors(sha, sa.dim, sa.span, parts);
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

OpPlan Propagation::decideElementwise(Operation *op) {
  Value out = op->getResult(0);
  int64_t outRank = typeOf(out).getRank();
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
    SmallVector<int64_t> factors =
        pieceFactors(outShape, common->dim, common->span, common->pieces(tp));
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

OpPlan Propagation::decideMovement(Operation *op) {
  Value out = op->getResult(0);
  int64_t outRank = typeOf(out).getRank();
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
    if (s.kind != Shard::Split || s.dim + s.span > axisOf(ln.getAxis(), in))
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

std::optional<Shard> Propagation::throughReshape(ArrayRef<int64_t> in,
                                                 ArrayRef<int64_t> out,
                                                 Shard s) {
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

OpPlan Propagation::reshape(Operation *op, Shard s) {
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

} // namespace loom::graph::partition
