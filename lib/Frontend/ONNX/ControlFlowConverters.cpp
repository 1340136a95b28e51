//===- ControlFlowConverters.cpp - If, Loop and Scan, unrolled ------------===//
//
// Static control flow. Loom compiles one static schedule, so control flow is
// resolved when the model is imported:
//   - If whose condition is a compile-time constant becomes the branch it
//     takes;
//   - Loop with a constant trip count, whose condition stays a constant, is
//     unrolled: its body converted once per iteration, the iteration number
//     and the loop-carried values bound to the body's inputs, the scan
//     outputs stacked along a new first axis;
//   - Scan (opset 9 on) is unrolled over its scan inputs' static length,
//     each iteration reading one slice of every scan input (in either
//     direction, along any axis) and its scan outputs stacked the same way.
// A condition or trip count computed at run time is refused naming the node
// and the value; with `loom eval`, or `loom compile --bind`, a graph input it
// comes from is a constant and the node is read. Partial, and refused with a
// message: a Loop without a trip count, a Loop condition the body computes
// at run time, Scan of opset 8 (its batch axis and sequence lengths),
// scan outputs whose shape changes between iterations, and no iteration at
// all when the node has scan outputs (their shape is then unknown).
//
//===----------------------------------------------------------------------===//
#include "ConvertHelpers.h"

#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Reference/Evaluator.h"

#include <algorithm>

using namespace mlir;
using namespace loom::graph;

namespace loom::onnx_import {
namespace {

const Refusal &kLoopNoTripCount = declareRefusal(
    "Loop", "a Loop without a trip count (M): it ends on a condition "
            "computed at run time; static control flow only");
const Refusal &kLoopRuntimeCondition = declareRefusal(
    "Loop", "a loop condition the body computes at run time; static control "
            "flow only (a constant trip count)");
const Refusal &kScanOpset8 = declareRefusal(
    "Scan", "Scan of opset 8 (its batch axis and sequence_lens); opset 9 on "
            "is read");
const Refusal &kScanShapeChanges = declareRefusal(
    "Loop,Scan", "a scan output whose shape or type changes between "
                 "iterations");
const Refusal &kNoIteration = declareRefusal(
    "Loop,Scan", "no iteration at all with scan outputs (their shape is "
                 "unknown)");

/// A constant scalar of `dtype` holding `v`.
Value scalar(NodeContext &nc, rt::DType dtype, int64_t v) {
  return nc.constant(rt::Tensor::fromVector(dtype, {}, std::vector<int64_t>{v}));
}

/// The one boolean a condition input holds; throws if it is not one value.
bool truth(NodeContext &nc, const rt::Tensor &t, const std::string &what) {
  if (t.numElements() != 1)
    nc.fail(what + " holds " + std::to_string(t.numElements()) +
            " values, not one");
  return t.getDouble(0) != 0;
}

/// `x` with the slice at `index` along `axis` taken out (rank one less).
Value sliceOut(NodeContext &nc, Value x, int64_t axis, int64_t index) {
  SmallVector<int64_t> shape(typeOf(x).getShape());
  shape.erase(shape.begin() + axis);
  return nc.reshape(sliceAxis(nc, x, axis, index, index + 1, 1), shape);
}

/// The slices stacked along a new axis `axis` (of the result's rank, which
/// is one more than theirs; negative counts from its end). Every slice must
/// have one shape.
Value stack(NodeContext &nc, ArrayRef<Value> slices, int64_t axis,
            const std::string &what) {
  auto first = typeOf(slices.front());
  for (Value s : slices)
    if (typeOf(s) != first)
      nc.refuse(kScanShapeChanges, what);
  int64_t a = nc.axis(axis, first.getRank() + 1);
  SmallVector<int64_t> one(first.getShape());
  one.insert(one.begin() + a, 1);
  SmallVector<Value> parts;
  for (Value s : slices)
    parts.push_back(nc.reshape(s, one));
  if (parts.size() == 1)
    return parts.front();
  SmallVector<int64_t> shape = one;
  shape[a] = static_cast<int64_t>(parts.size());
  return nc.create<ConcatOp>(nc.tensorType(shape, first.getElementType()),
                             parts, nc.b.getI64IntegerAttr(a));
}

const onnx::GraphProto &graphAttr(NodeContext &nc, const char *name) {
  const onnx::AttributeProto *a = nc.attr(name);
  if (!a || !a->has_g())
    nc.fail(std::string("attribute '") + name + "' must be a graph");
  return a->g();
}

// If: the branch the constant condition takes.
Values convertIf(NodeContext &nc) {
  bool cond = truth(nc, nc.requireConstant(0, "its condition",
                                           "static control flow: the branch "
                                           "is chosen when the model is "
                                           "compiled"),
                    "its condition");
  const onnx::GraphProto &thenBranch = graphAttr(nc, "then_branch");
  const onnx::GraphProto &elseBranch = graphAttr(nc, "else_branch");
  const onnx::GraphProto &taken = cond ? thenBranch : elseBranch;
  if (taken.output_size() != static_cast<int>(nc.numOutputs()))
    nc.fail(std::string(cond ? "then_branch" : "else_branch") + " has " +
            std::to_string(taken.output_size()) + " outputs, the node " +
            std::to_string(nc.numOutputs()));
  return nc.subgraph(taken, {});
}

// Loop: unrolled over its constant trip count.
Values convertLoop(NodeContext &nc) {
  if (!nc.hasInput(0))
    nc.refuse(kLoopNoTripCount);
  std::vector<int64_t> m =
      nc.requireConstant(0, "its trip count (M)",
                         "static control flow: the loop is unrolled")
          .toInts();
  if (m.size() != 1)
    nc.fail("its trip count (M) holds " + std::to_string(m.size()) +
            " values, not one");
  if (m[0] < 0)
    nc.fail("its trip count (M) is negative (" + std::to_string(m[0]) + ")");
  bool cond = true;
  if (nc.hasInput(1))
    cond = truth(nc,
                 nc.requireConstant(1, "its condition",
                                    "static control flow: the loop is "
                                    "unrolled"),
                 "its condition");
  const onnx::GraphProto &body = graphAttr(nc, "body");
  int64_t carried = static_cast<int64_t>(nc.node.input_size()) - 2;
  if (carried < 0)
    carried = 0;
  if (body.input_size() != carried + 2 || body.output_size() < carried + 1)
    nc.fail("its body takes " + std::to_string(body.input_size()) +
            " inputs and gives " + std::to_string(body.output_size()) +
            " outputs, for " + std::to_string(carried) +
            " loop-carried values");
  int64_t scans = body.output_size() - 1 - carried;
  if (static_cast<int64_t>(nc.numOutputs()) > carried + scans)
    nc.fail("it has " + std::to_string(nc.numOutputs()) +
            " outputs, its body " + std::to_string(carried + scans));
  std::vector<Value> state;
  for (int64_t i = 0; i < carried; ++i)
    state.push_back(nc.input(2 + i));
  nc.checkUnrolling(m[0], body.node_size());
  std::vector<std::vector<Value>> scanned(scans);
  for (int64_t i = 0; i < m[0] && cond; ++i) {
    std::vector<Value> in = {scalar(nc, rt::DType::I64, i),
                             scalar(nc, rt::DType::Bool, 1)};
    in.insert(in.end(), state.begin(), state.end());
    std::vector<Value> out = nc.subgraph(body, in);
    auto c = out[0].getDefiningOp<ConstantOp>();
    if (!c)
      nc.refuse(kLoopRuntimeCondition, "'" + body.output(0).name() + "'");
    cond = truth(nc, tensorFromAttr(c.getValue()), "its body's condition");
    state.assign(out.begin() + 1, out.begin() + 1 + carried);
    for (int64_t k = 0; k < scans; ++k)
      scanned[k].push_back(out[1 + carried + k]);
  }
  Values results(state.begin(), state.end());
  for (int64_t k = 0; k < scans; ++k) {
    if (scanned[k].empty())
      nc.refuse(kNoIteration, "M is 0 or the condition false");
    results.push_back(stack(nc, scanned[k], 0,
                            "scan output '" + body.output(1 + carried + k)
                                .name() + "'"));
  }
  results.resize(nc.numOutputs());
  return results;
}

/// A per-input (or per-output) attribute list, defaulting to `dflt`; fails
/// if it is given with another length.
std::vector<int64_t> perItem(NodeContext &nc, const char *name, int64_t count,
                             int64_t dflt) {
  std::vector<int64_t> v = nc.intsAttr(name);
  if (v.empty())
    return std::vector<int64_t>(count, dflt);
  if (static_cast<int64_t>(v.size()) != count)
    nc.fail(std::string("attribute '") + name + "' has " +
            std::to_string(v.size()) + " values, not " +
            std::to_string(count));
  return v;
}

// Scan (opset 9 on): unrolled over the scan inputs' length.
Values convertScan(NodeContext &nc) {
  if (nc.opset < 9)
    nc.refuse(kScanOpset8);
  const onnx::GraphProto &body = graphAttr(nc, "body");
  int64_t numScanInputs = nc.intAttr("num_scan_inputs", -1);
  int64_t inputs = static_cast<int64_t>(nc.node.input_size());
  if (numScanInputs < 1 || numScanInputs > inputs)
    nc.fail("num_scan_inputs is " + std::to_string(numScanInputs) +
            " for " + std::to_string(inputs) + " inputs");
  int64_t states = inputs - numScanInputs;
  int64_t scans = body.output_size() - states;
  if (body.input_size() != inputs || scans < 0)
    nc.fail("its body takes " + std::to_string(body.input_size()) +
            " inputs and gives " + std::to_string(body.output_size()) +
            " outputs, for " + std::to_string(states) + " states and " +
            std::to_string(numScanInputs) + " scan inputs");
  std::vector<int64_t> inDirs =
      perItem(nc, "scan_input_directions", numScanInputs, 0);
  std::vector<int64_t> inAxes = perItem(nc, "scan_input_axes", numScanInputs, 0);
  std::vector<int64_t> outDirs = perItem(nc, "scan_output_directions", scans, 0);
  std::vector<int64_t> outAxes = perItem(nc, "scan_output_axes", scans, 0);
  std::vector<Value> xs;
  int64_t length = -1;
  for (int64_t j = 0; j < numScanInputs; ++j) {
    Value x = nc.input(states + j);
    inAxes[j] = nc.axis(inAxes[j], typeOf(x).getRank());
    int64_t n = typeOf(x).getDimSize(inAxes[j]);
    if (length >= 0 && n != length)
      nc.fail("its scan inputs have lengths " + std::to_string(length) +
              " and " + std::to_string(n));
    length = n;
    xs.push_back(x);
  }
  std::vector<Value> state;
  for (int64_t i = 0; i < states; ++i)
    state.push_back(nc.input(i));
  nc.checkUnrolling(length, body.node_size());
  std::vector<std::vector<Value>> scanned(scans);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<Value> in = state;
    for (int64_t j = 0; j < numScanInputs; ++j)
      in.push_back(sliceOut(nc, xs[j], inAxes[j],
                            inDirs[j] ? length - 1 - t : t));
    std::vector<Value> out = nc.subgraph(body, in);
    state.assign(out.begin(), out.begin() + states);
    for (int64_t k = 0; k < scans; ++k)
      scanned[k].push_back(out[states + k]);
  }
  Values results(state.begin(), state.end());
  for (int64_t k = 0; k < scans; ++k) {
    if (scanned[k].empty())
      nc.refuse(kNoIteration, "its scan inputs have length 0");
    if (outDirs[k])
      std::reverse(scanned[k].begin(), scanned[k].end());
    results.push_back(stack(nc, scanned[k], outAxes[k],
                            "scan output '" + body.output(states + k).name() +
                                "'"));
  }
  results.resize(nc.numOutputs());
  return results;
}

} // namespace

void addControlFlowConverters(llvm::StringMap<Converter> &t) {
  t["If"] = convertIf;
  t["Loop"] = convertLoop;
  t["Scan"] = convertScan;
}

} // namespace loom::onnx_import
