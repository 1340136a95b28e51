//===- PartitionRewrite.cpp - graph-partition: the rewrite ----------------===//
//
// Step 3 of graph-partition (PartitionRewrite.h).
//
//===----------------------------------------------------------------------===//
#include "PartitionRewrite.h"

#include "loom/Reference/Evaluator.h"
#include "loom/Runtime/Reference.h"

#include "llvm/ADT/BitVector.h"

namespace loom::graph::partition {

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
  Box box =
      pieceBox(cast<RankedTensorType>(attr.getType()).getShape(), s, r, n);
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
      Value wv = ConstantOp::create(
          b, w.getLoc(), cast<RankedTensorType>(wPart.getType()), wPart);
      Value r = MatMulOp::create(b, mm.getLoc(), sl.getResult().getType(),
                                 mm.getLhs(), wv);
      if (bias) {
        Value bv =
            ConstantOp::create(b, biasConst.getLoc(),
                               cast<RankedTensorType>(bPart.getType()), bPart);
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
      newArgs_.push_back(
          {a,
           {int64_t(arg.getArgNumber()), s.kind == Shard::Split ? s.dim : -1,
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
    return v.getType() == type ? v
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
    Operation *op =
        AllGatherOp::create(b_, loc, types, ps, b_.getI64IntegerAttr(have.dim),
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
      out.push_back(ConstantOp::create(
          b_, c.getLoc(), cast<RankedTensorType>(value.getType()), value));
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
      func_.setType(
          FunctionType::get(func_.getContext(), argTypes, resultTypes));
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
    Shard runAs =
        plan.gatherAfter >= 0 ? Shard::split(plan.gatherAfter) : plan.result;
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
      results[0] =
          collective(results[0], op->getResult(0), runAs, stage, op->getLoc());
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

} // namespace loom::graph::partition
