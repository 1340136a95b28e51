//===- FormKernels.cpp - Group compute ops into graph.kernel ops ----------===//
//
// Every compute op of a function ends up in exactly one graph.kernel: a
// matmul/conv anchor with its elementwise epilogue (and a matmul with the
// transposes of its operands), a chain of elementwise ops, or a single other
// op. Grouping is decided first, without touching the IR, then each group is
// outlined into a kernel at its first op's position (a matmul's, when it
// takes in transposes before it).
//
//===----------------------------------------------------------------------===//
#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Graph/IR/OpClasses.h"
#include "loom/Dialect/Graph/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <queue>

namespace loom::graph {
#define GEN_PASS_DEF_GRAPHFORMKERNELS
#include "loom/Dialect/Graph/Transforms/Passes.h.inc"

namespace {

/// Ops that anchor a kernel and absorb its elementwise epilogue.
bool isAnchor(mlir::Operation *op) {
  return llvm::isa<MatMulOp, EinsumOp, ConvOp, ConvTransposeOp>(op) &&
         op->getNumResults() == 1;
}

mlir::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType()).getShape();
}

struct Group {
  llvm::SmallVector<mlir::Operation *> ops; // in block order
  loom::KernelKind kind;
  /// Where the kernel goes and whose location names it: the first op, or
  /// the anchor when transposes of its operands come before it.
  mlir::Operation *at = nullptr;
};

/// True if `op` is a transpose of a matmul operand (isMatmulOperandTranspose)
/// on the matmul's chip: the matmul's kernel absorbs it (the matrix unit
/// reads an operand in either order), so no transposed copy is made (the
/// keys of attention's scores).
bool isOperandTranspose(mlir::Operation *op) {
  return isMatmulOperandTranspose(op) &&
         chipOf(*op->getUsers().begin()) == chipOf(op);
}

struct GraphFormKernelsPass
    : impl::GraphFormKernelsBase<GraphFormKernelsPass> {
  using Base::Base;

  /// Position of each op of the block being grouped.
  llvm::DenseMap<mlir::Operation *, int64_t> index;

  /// True if `v` may be a kernel input of a group that starts at `seedIdx`:
  /// a block argument, a constant, or a value defined before the seed.
  bool availableAt(mlir::Value v, int64_t seedIdx) {
    mlir::Operation *def = v.getDefiningOp();
    if (!def || llvm::isa<ConstantOp>(def))
      return true;
    auto it = index.find(def);
    return it != index.end() && it->second < seedIdx;
  }

  /// Grows the group that starts at `seed`: later elementwise ops of the
  /// group's result shape that use one of its values and whose other
  /// operands are available at the seed.
  void grow(Group &g, llvm::DenseSet<mlir::Operation *> &assigned,
            mlir::ArrayRef<int64_t> shape) {
    mlir::Operation *seed = g.ops.front();
    int64_t seedIdx = index.lookup(seed);
    llvm::DenseSet<mlir::Operation *> members(g.ops.begin(), g.ops.end());
    using Entry = std::pair<int64_t, mlir::Operation *>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
    llvm::DenseSet<mlir::Operation *> queued;
    auto pushUsers = [&](mlir::Operation *op) {
      for (mlir::Operation *user : op->getUsers()) {
        auto it = index.find(user);
        if (it == index.end() || it->second <= seedIdx ||
            assigned.contains(user) || !queued.insert(user).second)
          continue;
        queue.push({it->second, user});
      }
    };
    pushUsers(seed);
    // Users are visited in block order, so when a candidate is looked at,
    // every op of the group that could feed it has already been decided.
    while (!queue.empty()) {
      mlir::Operation *op = queue.top().second;
      queue.pop();
      if (!isElementwise(op) || op->getNumResults() != 1 ||
          shapeOf(op->getResult(0)) != shape || chipOf(op) != chipOf(seed))
        continue;
      bool ok = llvm::all_of(op->getOperands(), [&](mlir::Value v) {
        mlir::Operation *def = v.getDefiningOp();
        return (def && members.contains(def)) || availableAt(v, seedIdx);
      });
      if (!ok)
        continue;
      members.insert(op);
      assigned.insert(op);
      g.ops.push_back(op);
      pushUsers(op);
    }
    llvm::sort(g.ops, [&](mlir::Operation *a, mlir::Operation *b) {
      return index.lookup(a) < index.lookup(b);
    });
  }

  /// Decides the groups of `block`, in the order of their first ops.
  mlir::FailureOr<llvm::SmallVector<Group>> groupsOf(mlir::Block &block) {
    index.clear();
    int64_t i = 0;
    for (mlir::Operation &op : block)
      index[&op] = i++;
    llvm::SmallVector<Group> groups;
    llvm::DenseSet<mlir::Operation *> assigned;
    bool failedAny = false;
    for (mlir::Operation &op : block) {
      if (assigned.contains(&op) ||
          !llvm::isa_and_nonnull<GraphDialect>(op.getDialect()) ||
          llvm::isa<ConstantOp, KernelOp, YieldOp, AllReduceOp, AllGatherOp>(
              op))
        continue;
      // Left for the matmul that reads it (below).
      if (isOperandTranspose(&op))
        continue;
      // ODS's Graph_KernelKind on the op, read by kernelKindOf.
      std::optional<loom::KernelKind> kind = kernelKindOf(&op);
      if (!kind) {
        op.emitError() << "graph-form-kernels: no kernel kind for '"
                       << op.getName() << "'";
        failedAny = true;
        continue;
      }
      assigned.insert(&op);
      Group g{{&op}, *kind, &op};
      if (isAnchor(&op) ||
          (isElementwise(&op) && op.getNumResults() == 1))
        grow(g, assigned, shapeOf(op.getResult(0)));
      // The transposes of a matmul's operands go in first.
      if (llvm::isa<MatMulOp>(op))
        for (mlir::Value v : op.getOperands().take_front(2))
          if (mlir::Operation *def = v.getDefiningOp();
              def && isOperandTranspose(def) && assigned.insert(def).second)
            g.ops.insert(g.ops.begin(), def);
      llvm::sort(g.ops, [&](mlir::Operation *a, mlir::Operation *b) {
        return index.lookup(a) < index.lookup(b);
      });
      groups.push_back(std::move(g));
    }
    if (failedAny)
      return mlir::failure();
    return groups;
  }

  /// Replaces the ops of `g` with one graph.kernel at `g.at`.
  void outline(const Group &g) {
    mlir::Operation *seed = g.at;
    llvm::DenseSet<mlir::Operation *> members(g.ops.begin(), g.ops.end());

    llvm::SetVector<mlir::Value> inputs;
    for (mlir::Operation *op : g.ops)
      for (mlir::Value v : op->getOperands()) {
        mlir::Operation *def = v.getDefiningOp();
        if (!def || !members.contains(def))
          inputs.insert(v);
      }
    llvm::SmallVector<mlir::Value> outputs;
    for (mlir::Operation *op : g.ops)
      for (mlir::Value r : op->getResults())
        if (r.use_empty() ||
            llvm::any_of(r.getUsers(), [&](mlir::Operation *user) {
              return !members.contains(user);
            }))
          outputs.push_back(r);

    // A constant input defined after the seed moves up to it (constants are
    // free to move; every other input is defined before the seed). Order by
    // `index`, not isBeforeInBlock: each kernel inserted invalidates the
    // block's order, and recomputing it per group was quadratic (a fifth of
    // Llama-3-70B's compile on lpx-rack). Seeds are outlined in block order
    // and a moved constant takes its seed's index, so the index still
    // orders every op a later group asks about.
    const int64_t seedIdx = index.lookup(seed);
    for (mlir::Value v : inputs)
      if (auto c = v.getDefiningOp<ConstantOp>())
        if (c->getBlock() == seed->getBlock() && seedIdx < index.lookup(c)) {
          c->moveBefore(seed);
          index[c] = seedIdx;
        }

    // The anchor's location first: it names the kernel.
    llvm::SmallVector<mlir::Location> locs{seed->getLoc()};
    for (mlir::Operation *op : g.ops)
      if (op != seed)
        locs.push_back(op->getLoc());
    mlir::OpBuilder b(seed);
    mlir::Location loc = b.getFusedLoc(locs);
    llvm::SmallVector<mlir::Type> resultTypes;
    for (mlir::Value r : outputs)
      resultTypes.push_back(r.getType());
    auto kernel = KernelOp::create(b, loc, resultTypes, inputs.getArrayRef(),
                                   g.kind, rt::NumericFormat::F32,
                                   /*block=*/mlir::DenseI64ArrayAttr(),
                                   /*storage=*/PrecisionAttr());
    if (auto chip = seed->getAttr(kChipAttr))
      kernel->setAttr(kChipAttr, chip);

    mlir::Block *body = new mlir::Block();
    kernel.getBody().push_back(body);
    mlir::IRMapping map;
    for (mlir::Value v : inputs)
      map.map(v, body->addArgument(v.getType(), v.getLoc()));
    b.setInsertionPointToStart(body);
    for (mlir::Operation *op : g.ops)
      b.clone(*op, map);
    llvm::SmallVector<mlir::Value> yielded;
    for (mlir::Value r : outputs)
      yielded.push_back(map.lookup(r));
    YieldOp::create(b, loc, yielded);

    for (auto [r, k] : llvm::zip(outputs, kernel.getResults()))
      r.replaceUsesWithIf(k, [&](mlir::OpOperand &use) {
        return !members.contains(use.getOwner());
      });
    for (mlir::Operation *op : llvm::reverse(g.ops))
      op->erase();
  }

  void runOnOperation() override {
    bool failedAny = false;
    for (mlir::Block &block : getOperation().getBody()) {
      mlir::FailureOr<llvm::SmallVector<Group>> groups = groupsOf(block);
      if (mlir::failed(groups)) {
        failedAny = true;
        continue;
      }
      for (const Group &g : *groups)
        outline(g);
    }
    index.clear();
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
} // namespace loom::graph
