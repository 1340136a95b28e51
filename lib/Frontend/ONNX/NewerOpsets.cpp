//===- NewerOpsets.cpp - Opsets 18 to 21 in their opset-17 forms ----------===//
//
// libonnx 1.12, whose schemas and shape inference the importer uses, knows
// the default domain up to opset 17. A model of opsets 18 to 21 is read by
// rewriting each node whose operator changed after opset 17 into the
// opset-17 form that means the same, before the schemas see it:
//
// - versions that only widened the element types (float8, int4, string:
//   which Loom refuses where they occur) are read as they are;
// - Reduce* of opset 18 take their axes as an input: a constant one becomes
//   the attribute again, and noop_with_empty_axes with no axes the identity;
// - Split 18's num_outputs, Cast 19's saturate (float8 only), Resize 18/19's
//   antialias, axes and keep_aspect_ratio_policy, AveragePool 19's
//   dilations and the quantizers' block_size and
//   output_dtype (21) are dropped when they hold the value that means the
//   opset-17 behaviour, and refused otherwise;
// - ScatterElements and ScatterND 18 add the reductions max and min, which
//   the converters take as they are;
// - operators new after opset 17 have converters of their own (Mish, Gelu,
//   BitwiseAnd/Or/Xor/Not, CenterCropPad, GroupNormalization 18 and 21) or
//   are refused as unsupported.
//
// Anything else that changed (Pad 18's axes input, Col2Im, ...) is refused,
// naming the node, the operator and the opset.
//
//===----------------------------------------------------------------------===//
#include "ImporterImpl.h"

#include "loom/Runtime/TensorIO.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace loom::onnx_import {
namespace {

/// The opsets after 17 at which each operator of the default domain got a
/// new version (ONNX's docs/Changelog.md).
const llvm::StringMap<std::vector<int64_t>> &newerVersions() {
  static const llvm::StringMap<std::vector<int64_t>> table = {
      {"AffineGrid", {20}},
      {"AveragePool", {19}},
      {"BitwiseAnd", {18}},
      {"BitwiseNot", {18}},
      {"BitwiseOr", {18}},
      {"BitwiseXor", {18}},
      {"Cast", {19, 21}},
      {"CastLike", {19, 21}},
      {"CenterCropPad", {18}},
      {"Col2Im", {18}},
      {"Constant", {19, 21}},
      {"ConstantOfShape", {20, 21}},
      {"DFT", {20}},
      {"DeformConv", {19}},
      {"DequantizeLinear", {19, 21}},
      {"Equal", {19}},
      {"Flatten", {21}},
      {"Gelu", {20}},
      {"GridSample", {20}},
      {"GroupNormalization", {18, 21}},
      {"Identity", {19, 21}},
      {"If", {19, 21}},
      {"ImageDecoder", {20}},
      {"IsInf", {20}},
      {"IsNaN", {20}},
      {"Loop", {19, 21}},
      {"LpPool", {18}},
      {"Mish", {18}},
      {"OptionalGetElement", {18}},
      {"OptionalHasElement", {18}},
      {"Pad", {18, 19, 21}},
      {"QuantizeLinear", {19, 21}},
      {"ReduceL1", {18}},
      {"ReduceL2", {18}},
      {"ReduceLogSum", {18}},
      {"ReduceLogSumExp", {18}},
      {"ReduceMax", {18, 20}},
      {"ReduceMean", {18}},
      {"ReduceMin", {18, 20}},
      {"ReduceProd", {18}},
      {"ReduceSumSquare", {18}},
      {"RegexFullMatch", {20}},
      {"Reshape", {19, 21}},
      {"Resize", {18, 19}},
      {"Scan", {19, 21}},
      {"ScatterElements", {18}},
      {"ScatterND", {18}},
      {"Shape", {19, 21}},
      {"Size", {19, 21}},
      {"Split", {18}},
      {"Squeeze", {21}},
      {"StringConcat", {20}},
      {"StringSplit", {20}},
      {"Transpose", {21}},
      {"Unsqueeze", {21}},
  };
  return table;
}

/// Versions that only widened the element types: the opset-17 form means
/// the same for every type Loom reads.
bool typesOnly(const std::string &op, int64_t version) {
  static const llvm::StringSet<> always = {
      "Constant", "ConstantOfShape", "Equal", "Flatten", "Identity",
      "If",       "IsInf",           "IsNaN", "Loop",    "Reshape",
      "Scan",     "Shape",           "Size",  "Squeeze", "Transpose",
      "Unsqueeze"};
  if (always.contains(op))
    return true;
  if (op == "ReduceMax" || op == "ReduceMin")
    return version == 20; // bool; 18 moved axes to an input
  if (op == "Pad")
    return version == 21;
  return false;
}

/// How a changed operator's newer versions are read in their opset-17
/// form; an operator that changed (newerVersions) and is neither here nor
/// typesOnly is refused at its newer versions.
enum class Rewrite {
  ReduceAxes,
  Split,
  Cast,
  Quantize,
  Resize,
  AveragePool,
  Pad,
  /// Read as it is: new reductions of Scatter*, or an operator new after
  /// opset 17 with a converter of its own (GroupNormalization's reads the
  /// opset: scale and bias per group in 18, per channel in 21).
  AsIs,
};

const llvm::StringMap<Rewrite> &rewrites() {
  static const llvm::StringMap<Rewrite> table = {
      {"ReduceL1", Rewrite::ReduceAxes},
      {"ReduceL2", Rewrite::ReduceAxes},
      {"ReduceLogSum", Rewrite::ReduceAxes},
      {"ReduceLogSumExp", Rewrite::ReduceAxes},
      {"ReduceMax", Rewrite::ReduceAxes},
      {"ReduceMean", Rewrite::ReduceAxes},
      {"ReduceMin", Rewrite::ReduceAxes},
      {"ReduceProd", Rewrite::ReduceAxes},
      {"ReduceSumSquare", Rewrite::ReduceAxes},
      {"Split", Rewrite::Split},
      {"Cast", Rewrite::Cast},
      {"CastLike", Rewrite::Cast},
      {"QuantizeLinear", Rewrite::Quantize},
      {"DequantizeLinear", Rewrite::Quantize},
      {"Resize", Rewrite::Resize},
      {"AveragePool", Rewrite::AveragePool},
      {"Pad", Rewrite::Pad},
      {"ScatterElements", Rewrite::AsIs},
      {"ScatterND", Rewrite::AsIs},
      {"Mish", Rewrite::AsIs},
      {"Gelu", Rewrite::AsIs},
      {"BitwiseAnd", Rewrite::AsIs},
      {"BitwiseNot", Rewrite::AsIs},
      {"BitwiseOr", Rewrite::AsIs},
      {"BitwiseXor", Rewrite::AsIs},
      {"CenterCropPad", Rewrite::AsIs},
      {"GroupNormalization", Rewrite::AsIs},
  };
  return table;
}

// What the rewrites refuse, by the version they read (listed by loom ops).
const Refusal &kNoopNoAxes =
    declareRefusal("ReduceL1,ReduceL2,ReduceLogSum,ReduceLogSumExp",
                   "noop_with_empty_axes with no axes", 18);
const Refusal &kSplitNumOutputs =
    declareRefusal("Split", "num_outputs other than the number of outputs", 18);
const Refusal &kBlockSize =
    declareRefusal("QuantizeLinear,DequantizeLinear",
                   "attribute 'block_size' other than 0", 21);
const Refusal &kOutputDtype = declareRefusal(
    "QuantizeLinear", "attribute 'output_dtype' other than 0", 21);
const Refusal &kAntialias =
    declareRefusal("Resize", "attribute 'antialias' other than 0", 18);
const Refusal &kAspectPolicy = declareRefusal(
    "Resize", "attribute 'keep_aspect_ratio_policy' other than 'stretch'", 18);
const Refusal &kResizeAxes = declareRefusal("Resize", "attribute 'axes'", 18);
const Refusal &kHalfPixelSymmetric = declareRefusal(
    "Resize", "coordinate_transformation_mode 'half_pixel_symmetric'", 19);
const Refusal &kPoolDilations =
    declareRefusal("AveragePool", "attribute 'dilations' other than 1", 19);
const Refusal &kPadAxes = declareRefusal("Pad", "the axes input", 18);

const onnx::AttributeProto *findAttr(const onnx::NodeProto &node,
                                     const std::string &name) {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

void removeAttr(onnx::NodeProto &node, const std::string &name) {
  auto *attrs = node.mutable_attribute();
  for (int i = 0; i < attrs->size(); ++i)
    if (attrs->Get(i).name() == name) {
      attrs->DeleteSubrange(i, 1);
      return;
    }
}

class Downgrader {
public:
  Downgrader(onnx::GraphProto &graph, int64_t opset)
      : graph(graph), opset(opset) {
    for (const auto &init : graph.initializer())
      initializers[init.name()] = &init;
    for (const auto &node : graph.node())
      if (node.op_type() == "Constant")
        for (const auto &out : node.output())
          constants[out] = &node;
  }

  void run() {
    for (auto &node : *graph.mutable_node())
      if (domainOf(node).empty())
        rewrite(node);
  }

private:
  onnx::GraphProto &graph;
  int64_t opset;
  llvm::StringMap<const onnx::TensorProto *> initializers;
  llvm::StringMap<const onnx::NodeProto *> constants;

  [[noreturn]] void refuse(const onnx::NodeProto &node, int64_t version,
                           const Refusal &refusal) {
    refuse(node, version, refusal.what);
  }
  [[noreturn]] void refuse(const onnx::NodeProto &node, int64_t version,
                           const std::string &what) {
    throw ImportError(nodeLabel(node) + ": unsupported: " + what + " (" +
                      node.op_type() + " of opset " + std::to_string(version) +
                      "; Loom reads opsets 18 to 21 in their opset-17 forms)");
  }

  /// Drops attribute `name` if absent or equal to `neutral` (as text for
  /// strings, as an integer otherwise); refuses any other value with
  /// `refusal`.
  void dropIfNeutral(onnx::NodeProto &node, int64_t version,
                     const std::string &name, const std::string &neutral,
                     const Refusal &refusal) {
    const onnx::AttributeProto *a = findAttr(node, name);
    if (!a)
      return;
    bool isNeutral = a->type() == onnx::AttributeProto::STRING
                         ? a->s() == neutral
                         : std::to_string(a->i()) == neutral;
    if (a->type() == onnx::AttributeProto::INTS) {
      isNeutral = true;
      for (int64_t v : a->ints())
        isNeutral &= std::to_string(v) == neutral;
    }
    if (!isNeutral)
      refuse(node, version, refusal);
    removeAttr(node, name);
  }

  /// The value of node input `i`, which must be an initializer or the output
  /// of a Constant node; throws NeedsConstantError otherwise, so that a
  /// caller who knows the graph inputs (loom eval) can freeze it.
  rt::Tensor constantInput(const onnx::NodeProto &node, int i,
                           const std::string &what) {
    const std::string &name = node.input(i);
    if (auto it = initializers.find(name); it != initializers.end())
      return rt::tensorFromProto(*it->second, nodeLabel(node));
    if (auto it = constants.find(name); it != constants.end())
      if (const onnx::AttributeProto *v = findAttr(*it->second, "value"))
        return rt::tensorFromProto(v->t(), nodeLabel(node));
    throw NeedsConstantError(nodeLabel(node) + ": unsupported: " + what +
                                 " must be a compile-time constant (dynamic "
                                 "shapes are not supported)",
                             name);
  }

  /// Reduce* of opset 18: axes from input 1 back to the attribute.
  void reduceAxesToAttribute(onnx::NodeProto &node) {
    bool noop = false;
    if (const onnx::AttributeProto *a = findAttr(node, "noop_with_empty_axes"))
      noop = a->i() != 0;
    removeAttr(node, "noop_with_empty_axes");
    std::vector<int64_t> axes;
    bool given = node.input_size() > 1 && !node.input(1).empty();
    if (given)
      axes = constantInput(node, 1, "axes").toInts();
    node.mutable_input()->DeleteSubrange(1, node.input_size() - 1);
    if (axes.empty() && noop) {
      // No axes and noop_with_empty_axes: nothing is reduced, the
      // elementwise part is still applied (ReduceSumSquare squares, as
      // ONNX Runtime does).
      const std::string &op = node.op_type();
      if (op == "ReduceSumSquare") {
        node.add_input(node.input(0));
        node.set_op_type("Mul");
      } else if (op == "ReduceMax" || op == "ReduceMin" || op == "ReduceMean" ||
                 op == "ReduceProd") {
        node.set_op_type("Identity");
      } else {
        refuse(node, 18, kNoopNoAxes);
      }
      node.clear_attribute();
      return;
    }
    if (!axes.empty()) {
      onnx::AttributeProto *a = node.add_attribute();
      a->set_name("axes");
      a->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : axes)
        a->add_ints(v);
    }
  }

  void rewrite(onnx::NodeProto &node) {
    const std::string &op = node.op_type();
    auto it = newerVersions().find(op);
    if (it == newerVersions().end())
      return;
    int64_t version = 0; // the newest version at or below the model's opset
    for (int64_t v : it->second)
      if (v <= opset)
        version = v;
    if (version == 0 || typesOnly(op, version))
      return;
    auto rewrite = rewrites().find(op);
    if (rewrite == rewrites().end())
      refuse(node, version, "this version");
    switch (rewrite->second) {
    case Rewrite::ReduceAxes:
      reduceAxesToAttribute(node);
      return;
    case Rewrite::Split: {
      const onnx::AttributeProto *n = findAttr(node, "num_outputs");
      if (n && n->i() != node.output_size())
        refuse(node, version, kSplitNumOutputs);
      removeAttr(node, "num_outputs");
      return;
    }
    case Rewrite::Cast:
      // saturate applies to float8 targets, which Loom does not read.
      removeAttr(node, "saturate");
      return;
    case Rewrite::Quantize:
      removeAttr(node, "saturate");
      dropIfNeutral(node, version, "block_size", "0", kBlockSize);
      dropIfNeutral(node, version, "output_dtype", "0", kOutputDtype);
      return;
    case Rewrite::Resize:
      dropIfNeutral(node, version, "antialias", "0", kAntialias);
      dropIfNeutral(node, version, "keep_aspect_ratio_policy", "stretch",
                    kAspectPolicy);
      if (findAttr(node, "axes"))
        refuse(node, version, kResizeAxes);
      if (const onnx::AttributeProto *m =
              findAttr(node, "coordinate_transformation_mode"))
        if (m->s() == "half_pixel_symmetric")
          refuse(node, version, kHalfPixelSymmetric);
      return;
    case Rewrite::AveragePool:
      dropIfNeutral(node, version, "dilations", "1", kPoolDilations);
      return;
    case Rewrite::Pad:
      if (node.input_size() > 3 && !node.input(3).empty())
        refuse(node, version, kPadAxes);
      return;
    case Rewrite::AsIs:
      return;
    }
  }
};

} // namespace

void downgradeNewerOpsets(onnx::GraphProto &graph, int64_t opset,
                          int64_t schemaOpset) {
  if (opset > schemaOpset)
    Downgrader(graph, opset).run();
}

std::vector<std::pair<int64_t, NewerForm>>
newerVersionForms(const std::string &op) {
  std::vector<std::pair<int64_t, NewerForm>> forms;
  auto it = newerVersions().find(op);
  if (it == newerVersions().end())
    return forms;
  for (int64_t version : it->second)
    forms.push_back({version, typesOnly(op, version) ? NewerForm::Same
                              : rewrites().count(op) ? NewerForm::Rewritten
                                                     : NewerForm::Refused});
  return forms;
}

} // namespace loom::onnx_import
