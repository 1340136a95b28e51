//===- OpSupport.cpp - Which ONNX operators the importer reads ------------===//
//
// `loom ops` and docs/ops.md list what the importer reads, derived from the
// tables the importer itself decides by, so the list cannot drift from the
// code: the converter table (lookupConverter), libonnx's schemas (the
// opset an operator first appears at, deprecation, function bodies), the
// rewrites of newer opsets (newerVersionForms) and the refusals the
// converters declare (declareRefusal).
//
//===----------------------------------------------------------------------===//
#include "ImporterImpl.h"

#include "loom/Frontend/ONNX/Importer.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

namespace loom {
namespace onnx_import {

namespace {
std::vector<std::unique_ptr<Refusal>> &refusalRegistry() {
  static std::vector<std::unique_ptr<Refusal>> registry;
  return registry;
}
} // namespace

const Refusal &declareRefusal(std::string ops, std::string what,
                              int64_t sinceOpset) {
  refusalRegistry().push_back(std::make_unique<Refusal>(
      Refusal{std::move(ops), std::move(what), sinceOpset}));
  return *refusalRegistry().back();
}

std::vector<const Refusal *> declaredRefusals() {
  std::vector<const Refusal *> out;
  for (const auto &r : refusalRegistry())
    out.push_back(r.get());
  return out;
}

namespace {

/// Decides, per operator and model opset, whether the importer reads a
/// node of the default domain, as importModel does: a converter, or else a
/// function body whose operators are read in turn.
class OpsetOracle {
public:
  /// The newest opset libonnx's schemas know (17).
  int64_t schemaOpset =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("")
          .second;

  /// The schema libonnx reads `op` of model opset `opset` by (opsets past
  /// libonnx's own are read in their opset-17 forms).
  const onnx::OpSchema *schema(const std::string &op, int64_t opset) const {
    return onnx::OpSchemaRegistry::Schema(op, std::min(opset, schemaOpset), "");
  }

  /// Whether a node `op` of a model of `opset` imports (its own refusals
  /// aside), and whether by its function body.
  bool reads(const std::string &op, int64_t opset, bool *byFunction = nullptr,
             int depth = 0) {
    if (byFunction)
      *byFunction = false;
    if (depth > 8) // importModel expands at most 8 rounds
      return false;
    if (opset > schemaOpset) {
      int64_t version = 0;
      NewerForm form = NewerForm::Same;
      for (auto [v, f] : newerVersionForms(op))
        if (v <= opset) {
          version = v;
          form = f;
        }
      if (version && form == NewerForm::Refused)
        return false;
    }
    const onnx::OpSchema *s = schema(op, opset);
    if (lookupConverter(op)) {
      if (s)
        return !s->Deprecated();
      // An operator new after libonnx's opsets: read from its first version.
      std::vector<std::pair<int64_t, NewerForm>> forms = newerVersionForms(op);
      return !forms.empty() && forms.front().first <= opset;
    }
    if (!s || s->Deprecated() ||
        !(s->HasFunction() || s->HasContextDependentFunction()))
      return false;
    if (byFunction)
      *byFunction = true;
    onnx::FunctionProto body;
    if (s->HasFunction())
      body = *s->GetFunction();
    else if (!buildBody(*s, body))
      return false;
    for (const onnx::NodeProto &node : body.node())
      if (!domainOf(node).empty() ||
          !reads(node.op_type(), opset, nullptr, depth + 1))
        return false;
    return true;
  }

private:
  /// The body of a function that ONNX builds from the node (its types and
  /// attributes), built for a node of float tensors with the schema's
  /// defaults; false when that node cannot have one (a body that needs an
  /// attribute or a sequence is not read ahead, so the op is not listed).
  static bool buildBody(const onnx::OpSchema &s, onnx::FunctionProto &body) {
    onnx::NodeProto node;
    node.set_op_type(s.Name());
    std::vector<onnx::TypeProto> types;
    for (size_t i = 0; i < s.inputs().size(); ++i) {
      node.add_input("in" + std::to_string(i));
      onnx::TypeProto t;
      t.mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
      types.push_back(t);
    }
    for (size_t i = 0; i < s.outputs().size(); ++i)
      node.add_output("out" + std::to_string(i));
    try {
      onnx::FunctionBodyBuildContextImpl ctx(node, types);
      return s.BuildContextDependentFunction(ctx, body);
    } catch (const std::exception &) {
      return false;
    }
  }
};

/// Inclusive runs of the opsets in `opsets` (sorted).
std::vector<std::pair<int64_t, int64_t>>
runsOf(const std::vector<int64_t> &opsets) {
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t v : opsets) {
    if (!runs.empty() && runs.back().second + 1 == v)
      runs.back().second = v;
    else
      runs.push_back({v, v});
  }
  return runs;
}

} // namespace
} // namespace onnx_import

std::pair<int64_t, int64_t> onnxOpsetRange() {
  auto [minOpset, schemaOpset] =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("");
  return {minOpset, std::max<int64_t>(schemaOpset, onnx_import::kMaxOpset)};
}

std::vector<OnnxOpSupport> onnxOpSupport() {
  using namespace onnx_import;
  OpsetOracle oracle;
  auto [first, last] = onnxOpsetRange();
  // Every operator of the default domain libonnx knows, and the converters'
  // (some are new after libonnx's opsets).
  std::set<std::string> names;
  for (const onnx::OpSchema &s :
       onnx::OpSchemaRegistry::get_all_schemas_with_history())
    if (s.domain().empty())
      names.insert(s.Name());
  for (const std::string &name : converterNames())
    names.insert(name);

  std::map<std::string, std::vector<OnnxOpSupport::Refused>> refusals;
  for (const Refusal *r : declaredRefusals()) {
    llvm::SmallVector<llvm::StringRef> ops;
    llvm::StringRef(r->ops).split(ops, ',');
    for (llvm::StringRef op : ops)
      refusals[op.str()].push_back({r->what, r->sinceOpset});
  }

  std::vector<OnnxOpSupport> out;
  for (const std::string &name : names) {
    if (isTrainingOp(name))
      continue;
    std::vector<int64_t> opsets;
    bool anyFunction = false;
    for (int64_t v = first; v <= last; ++v) {
      bool byFunction = false;
      if (oracle.reads(name, v, &byFunction)) {
        opsets.push_back(v);
        anyFunction |= byFunction;
      }
    }
    if (opsets.empty())
      continue;
    OnnxOpSupport op;
    op.name = name;
    op.how = anyFunction ? "function" : "converter";
    op.opsets = runsOf(opsets);
    op.refuses = refusals[name];
    out.push_back(std::move(op));
  }
  // The training domain's optimizers, at every version libonnx knows.
  auto [trainFirst, trainLast] =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(
          kTrainingDomain);
  for (const std::string &name : converterNames()) {
    if (!isTrainingOp(name))
      continue;
    const onnx::OpSchema *s =
        onnx::OpSchemaRegistry::Schema(name, trainLast, kTrainingDomain);
    OnnxOpSupport op;
    op.name = name;
    op.domain = kTrainingDomain;
    op.how = "converter";
    op.opsets = {{s ? s->since_version() : trainFirst, trainLast}};
    op.refuses = refusals[name];
    out.push_back(std::move(op));
  }
  // A refusal declared for an operator that is not read is a typo in its
  // declaration: it would never be listed.
  for (const auto &[name, refused] : refusals)
    if (std::none_of(out.begin(), out.end(), [&, &name = name](const auto &op) {
          return op.name == name;
        }))
      llvm::report_fatal_error(llvm::Twine("declareRefusal names '") + name +
                               "', an operator the importer does not read");
  return out;
}

} // namespace loom
