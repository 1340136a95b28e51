//===- TilePlan.cpp - A kernel's backward propagation on one tile ---------===//
//
// The value-free half of executing a kernel on a tile (TilePlan.h), and
// its cost (tileWork) and operand check (checkTileOperands), each also
// through TilePlanCache, which derives a plan once per distinct kernel
// structure and output boxes.
//
//===----------------------------------------------------------------------===//
#include "TilePlan.h"

#include <cstring>
#include <limits>
#include <unordered_map>

namespace loom::rt {
namespace detail {

std::string describeOp(const std::vector<ProgramOp> &ops, size_t i) {
  return "op " + std::to_string(i) + " '" + ops[i].name + "'";
}

std::string describeTensor(const ProgramTensor &t) {
  return "tensor " + std::to_string(t.id) +
         (t.name.empty() ? "" : " '" + t.name + "'");
}

bool covers(const Box *held, const Box &needed) {
  if (needed.empty())
    return true;
  if (!held || held->rank() != needed.rank())
    return false;
  for (size_t d = 0; d < needed.rank(); ++d)
    if (needed.lo[d] < held->lo[d] || needed.hi[d] > held->hi[d])
      return false;
  return true;
}

void checkCovered(const std::string &who, const ProgramTensor &t,
                  const Box *held, const Box &needed) {
  if (needed.empty())
    return;
  if (!held)
    throw Error(who + ": needs " + needed.str() + " of " + describeTensor(t) +
                ", the tile holds no block of it");
  if (held->rank() != needed.rank())
    throw Error(who + ": the tile's block of " + describeTensor(t) + " " +
                held->str() + " has rank " +
                std::to_string(held->rank()) + ", the tensor " +
                std::to_string(needed.rank()));
  for (size_t d = 0; d < needed.rank(); ++d)
    if (needed.lo[d] < held->lo[d] || needed.hi[d] > held->hi[d])
      throw Error(who + ": needs rows [" + std::to_string(needed.lo[d]) + ", " +
                  std::to_string(needed.hi[d]) + ") of dimension " +
                  std::to_string(d) + " of " + describeTensor(t) +
                  ", the tile holds [" + std::to_string(held->lo[d]) +
                  ", " + std::to_string(held->hi[d]) + ")");
}

/// The op's operands as executeOp takes them, with their shapes, and its
/// results' shapes and types.
Step describeStep(
    const ProgramOp &op,
    const std::function<const ProgramTensor &(int32_t)> &tensorOf) {
  Step s;
  size_t n = op.inputs.size();
  while (n > 0 && op.inputs[n - 1] < 0)
    --n;
  s.operands.assign(op.inputs.begin(), op.inputs.begin() + n);
  for (int32_t id : s.operands) {
    s.operandShapes.push_back(id < 0 ? Shape{} : tensorOf(id).shape);
    s.operandDTypes.push_back(id < 0 ? DType::F32 : tensorOf(id).dtype);
  }
  for (int32_t id : op.outputs) {
    s.resultShapes.push_back(tensorOf(id).shape);
    s.resultDTypes.push_back(tensorOf(id).dtype);
  }
  return s;
}

std::vector<Step> planBackward(const std::vector<ProgramOp> &ops,
                               const TensorOf &tensorOf,
                               const std::map<int32_t, Box> &outputBoxes) {
  std::map<int32_t, Box> needed = outputBoxes;
  std::vector<Step> steps(ops.size());
  for (size_t i = ops.size(); i-- > 0;) {
    const ProgramOp &op = ops[i];
    Step &s = steps[i] = describeStep(op, tensorOf);
    for (size_t k = 0; k < op.outputs.size(); ++k) {
      auto it = needed.find(op.outputs[k]);
      // A rank-0 box is a scalar, never empty: what no one needs is absent.
      bool wanted = it != needed.end() && !it->second.empty();
      s.run |= wanted;
      s.resultBoxes.push_back(wanted ? it->second
                                     : Box::none(s.resultShapes[k].size()));
    }
    if (!s.run)
      continue;
    try {
      s.operandBoxes = operandRegions(op.name, op.attrs, s.operandShapes,
                                      s.resultShapes, s.resultBoxes);
    } catch (const Error &e) {
      throw Error(describeOp(ops, i) + ": " + e.what());
    }
    for (size_t k = 0; k < s.operands.size(); ++k) {
      int32_t id = s.operands[k];
      if (id < 0)
        continue;
      auto [it, fresh] = needed.emplace(id, s.operandBoxes[k]);
      if (!fresh)
        it->second = it->second.unite(s.operandBoxes[k]);
    }
  }
  return steps;
}

std::map<int32_t, size_t> producers(const std::vector<ProgramOp> &ops) {
  std::map<int32_t, size_t> producer;
  for (size_t i = 0; i < ops.size(); ++i)
    for (int32_t id : ops[i].outputs)
      if (!producer.emplace(id, i).second)
        throw Error(describeOp(ops, i) + ": tensor " + std::to_string(id) +
                    " is already computed by " + describeOp(ops, producer[id]));
  for (size_t i = 0; i < ops.size(); ++i)
    for (int32_t id : ops[i].inputs)
      if (auto it = producer.find(id); it != producer.end() && it->second >= i)
        throw Error(describeOp(ops, i) + " reads tensor " + std::to_string(id) +
                    " before " + describeOp(ops, it->second) + " computes it");
  return producer;
}

void checkCoverage(
    const std::vector<ProgramOp> &ops, const std::vector<Step> &steps,
    const std::map<int32_t, size_t> &producer,
    const TensorOf &tensorOf, const HeldOf &held,
    const std::map<int32_t, Box> &outputBoxes) {
  for (size_t i = 0; i < ops.size(); ++i) {
    const Step &s = steps[i];
    if (!s.run)
      continue;
    for (size_t k = 0; k < s.operands.size(); ++k) {
      int32_t id = s.operands[k];
      if (id >= 0 && !producer.count(id) && !covers(held(id), s.operandBoxes[k]))
        checkCovered(describeOp(ops, i), tensorOf(id), held(id),
                     s.operandBoxes[k]);
    }
  }
  for (const auto &[id, box] : outputBoxes) {
    const ProgramTensor &t = tensorOf(id);
    if (!Box::whole(t.shape).contains(box))
      throw Error("output box " + box.str() + " of " + describeTensor(t) +
                  " is not inside its shape " + shapeToString(t.shape));
    if (!producer.count(id))
      checkCovered("output", t, held(id), box);
  }
}

} // namespace detail

using namespace detail;

namespace {

/// The work of `steps` for the ISA's timing rules (see tileWork).
TileWork workOf(const std::vector<ProgramOp> &ops,
                const std::vector<Step> &steps) {
  TileWork work;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Step &s = steps[i];
    if (!s.run || s.resultBoxes.empty())
      continue;
    const ProgramOp &op = ops[i];
    OpCost cost = opCost(op.name, s.operandShapes, s.resultShapes[0]);
    const Box &out = s.resultBoxes[0];
    auto add = [&](int64_t elements) {
      int64_t ops = 0;
      if (__builtin_mul_overflow(elements, cost.ops, &ops) ||
          __builtin_add_overflow(work.vectorOps, ops, &work.vectorOps))
        work.vectorOps = std::numeric_limits<int64_t>::max();
    };
    switch (cost.kind) {
    case OpCost::Contraction:
      if (s.operandShapes.size() < 2)
        throw Error(describeOp(ops, i) + ": needs two operands");
      if (op.name == "matmul") {
        work.contractions.push_back(matmulContraction(
            s.operandShapes[0], s.operandShapes[1], out.lo, out.hi));
      } else {
        auto g = op.attrs.find("group");
        int64_t groups =
            g != op.attrs.end() && !g->second.ints.empty() ? g->second.ints[0]
                                                            : 1;
        work.contractions.push_back(
            convContraction(s.operandShapes[1], groups, out.lo, out.hi));
      }
      break;
    case OpCost::PerOutput:
      add(out.elements());
      break;
    case OpCost::PerInput:
      add(s.operandBoxes.empty() ? 0 : s.operandBoxes[0].elements());
      break;
    case OpCost::DataMovement:
      break;
    }
  }
  return work;
}

} // namespace

void checkTileOperands(const std::vector<ProgramOp> &ops,
                       const TensorOf &tensorOf,
                       const std::map<int32_t, Box> &held,
                       const std::map<int32_t, Box> &outputBoxes) {
  std::map<int32_t, size_t> producer = producers(ops);
  std::vector<Step> steps = planBackward(ops, tensorOf, outputBoxes);
  checkCoverage(
      ops, steps, producer, tensorOf,
      [&](int32_t id) -> const Box * {
        auto it = held.find(id);
        return it == held.end() ? nullptr : &it->second;
      },
      outputBoxes);
}

TileWork tileWork(const std::vector<ProgramOp> &ops, const TensorOf &tensorOf,
                  const std::map<int32_t, Box> &outputBoxes) {
  producers(ops);
  return workOf(ops, planBackward(ops, tensorOf, outputBoxes));
}

//===----------------------------------------------------------------------===//
// TilePlanCache
//===----------------------------------------------------------------------===//

namespace {

/// Appends the bytes of `v` to a signature.
template <typename T> void put(std::string &sig, const T &v) {
  sig.append(reinterpret_cast<const char *>(&v), sizeof(v));
}

void putString(std::string &sig, const std::string &s) {
  put(sig, s.size());
  sig += s;
}

struct KeyHash {
  size_t operator()(const std::vector<int64_t> &key) const {
    uint64_t h = 1469598103934665603ull;
    for (int64_t v : key)
      h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

} // namespace

struct TilePlanCache::Impl {
  TensorOf tensorOf;
  int64_t derivations = 0;

  /// A kernel's ops, numbered by structure.
  struct Kernel {
    /// The structure's number; -1 if the ops are malformed (every call
    /// then runs the uncached functions, which name the fault).
    int32_t sig = -1;
    std::unordered_map<int32_t, int32_t> local; // tensor id -> local index
    std::vector<int32_t> ids;                   // local index -> tensor id
    std::vector<bool> produced;                 // by local index
  };
  std::unordered_map<const void *, Kernel> kernels;
  std::unordered_map<std::string, int32_t> sigIds;

  /// A box of a kernel input that op `op` reads.
  struct Need {
    size_t op;
    int32_t local;
    Box box;
  };
  struct Plan {
    TileWork work;
    bool workFailed = false;
    std::vector<Need> needs;
  };
  std::unordered_map<std::vector<int64_t>, Plan, KeyHash> plans;
  std::vector<int64_t> key_; // planOf's key, its storage reused

  const Kernel &kernelOf(const std::vector<ProgramOp> &ops) {
    auto [it, fresh] = kernels.try_emplace(&ops);
    Kernel &k = it->second;
    if (!fresh)
      return k;
    try {
      producers(ops);
    } catch (const Error &) {
      return k; // sig -1
    }
    auto localOf = [&](int32_t id) -> int32_t {
      if (id < 0)
        return -1;
      auto [at, added] = k.local.emplace(id, static_cast<int32_t>(k.ids.size()));
      if (added)
        k.ids.push_back(id);
      return at->second;
    };
    std::string sig;
    for (const ProgramOp &op : ops) {
      putString(sig, op.name);
      put(sig, op.inputs.size());
      for (int32_t id : op.inputs)
        put(sig, localOf(id));
      put(sig, op.outputs.size());
      for (int32_t id : op.outputs)
        put(sig, localOf(id));
      put(sig, op.attrs.size());
      for (const auto &[name, a] : op.attrs) {
        putString(sig, name);
        put(sig, a.kind);
        put(sig, a.ints.size());
        for (int64_t v : a.ints)
          put(sig, v);
        put(sig, a.floats.size());
        for (double v : a.floats)
          put(sig, v);
        putString(sig, a.str);
      }
    }
    k.produced.assign(k.ids.size(), false);
    for (const ProgramOp &op : ops)
      for (int32_t id : op.outputs)
        k.produced[k.local.at(id)] = true;
    for (int32_t id : k.ids) {
      const ProgramTensor &t = tensorOf(id);
      put(sig, t.dtype);
      put(sig, t.storage);
      put(sig, t.shape.size());
      for (int64_t d : t.shape)
        put(sig, d);
    }
    auto [at, added] =
        sigIds.emplace(std::move(sig), static_cast<int32_t>(sigIds.size()));
    k.sig = at->second;
    return k;
  }

  /// The plan of `outputBoxes` of kernel `k`, derived on first use; null
  /// if an output is not a value of the kernel's ops (the uncached
  /// functions then answer). Throws as planBackward does.
  const Plan *planOf(const std::vector<ProgramOp> &ops, const Kernel &k,
                     const std::map<int32_t, Box> &outputBoxes) {
    std::vector<int64_t> &key = key_;
    key.clear();
    key.push_back(k.sig);
    for (const auto &[id, box] : outputBoxes) {
      auto it = k.local.find(id);
      if (it == k.local.end())
        return nullptr;
      key.push_back(it->second);
      key.push_back(static_cast<int64_t>(box.rank()));
      key.insert(key.end(), box.lo.begin(), box.lo.end());
      key.insert(key.end(), box.hi.begin(), box.hi.end());
    }
    auto it = plans.find(key);
    if (it != plans.end())
      return &it->second;
    ++derivations;
    std::vector<Step> steps = planBackward(ops, tensorOf, outputBoxes);
    Plan plan;
    try {
      plan.work = workOf(ops, steps);
    } catch (const Error &) {
      plan.workFailed = true;
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      const Step &s = steps[i];
      if (!s.run)
        continue;
      for (size_t n = 0; n < s.operands.size(); ++n) {
        int32_t id = s.operands[n];
        if (id >= 0 && !k.produced[k.local.at(id)])
          plan.needs.push_back({i, k.local.at(id), s.operandBoxes[n]});
      }
    }
    return &plans.emplace(key, std::move(plan)).first->second;
  }
};

TilePlanCache::TilePlanCache(TensorOf tensorOf)
    : impl_(std::make_unique<Impl>()) {
  impl_->tensorOf = std::move(tensorOf);
}

TilePlanCache::~TilePlanCache() = default;

TileWork TilePlanCache::work(const std::vector<ProgramOp> &ops,
                             const std::map<int32_t, Box> &outputBoxes) {
  Impl &m = *impl_;
  const Impl::Kernel &k = m.kernelOf(ops);
  if (k.sig >= 0)
    if (const Impl::Plan *plan = m.planOf(ops, k, outputBoxes);
        plan && !plan->workFailed)
      return plan->work;
  ++m.derivations;
  return tileWork(ops, m.tensorOf, outputBoxes);
}

void TilePlanCache::checkOperands(const std::vector<ProgramOp> &ops,
                                  const std::map<int32_t, Box> &held,
                                  const std::map<int32_t, Box> &outputBoxes) {
  Impl &m = *impl_;
  const Impl::Kernel &k = m.kernelOf(ops);
  const Impl::Plan *plan =
      k.sig >= 0 ? m.planOf(ops, k, outputBoxes) : nullptr;
  if (!plan) {
    ++m.derivations;
    checkTileOperands(ops, m.tensorOf, held, outputBoxes);
    return;
  }
  auto heldOf = [&](int32_t id) -> const Box * {
    auto it = held.find(id);
    return it == held.end() ? nullptr : &it->second;
  };
  for (const Impl::Need &n : plan->needs) {
    int32_t id = k.ids[static_cast<size_t>(n.local)];
    if (!covers(heldOf(id), n.box))
      checkCovered(describeOp(ops, n.op), m.tensorOf(id), heldOf(id), n.box);
  }
  for (const auto &[id, box] : outputBoxes) {
    const ProgramTensor &t = m.tensorOf(id);
    if (!Box::whole(t.shape).contains(box))
      throw Error("output box " + box.str() + " of " + describeTensor(t) +
                  " is not inside its shape " + shapeToString(t.shape));
    if (!k.produced[static_cast<size_t>(k.local.at(id))])
      checkCovered("output", t, heldOf(id), box);
  }
}

int64_t TilePlanCache::derivations() const { return impl_->derivations; }

} // namespace loom::rt
