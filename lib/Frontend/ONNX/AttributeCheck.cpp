//===- AttributeCheck.cpp - ONNX node attributes against the op schema ----===//
//
// Every node's attributes are checked before ONNX shape inference or a
// converter reads them: against the op's schema (known names, declared
// types, required ones present), then for the values that libonnx's
// inference functions divide by, index with or allocate from without a
// check of their own. A converter reading an attribute of the wrong type
// would see the field's default (an INT alpha read as a float is 0), so a
// mismatch is an error, as it is in ONNX Runtime.
//
//===----------------------------------------------------------------------===//
#include "ImporterImpl.h"

#include <onnx/defs/schema.h>

#include <limits>
#include <set>

namespace loom::onnx_import {
namespace {

using AttrType = onnx::AttributeProto::AttributeType;

std::string typeName(AttrType type) {
  return onnx::AttributeProto_AttributeType_IsValid(type)
             ? onnx::AttributeProto_AttributeType_Name(type)
             : std::to_string(static_cast<int>(type));
}

/// The kinds of value an attribute actually holds (proto2: a scalar field
/// is present only when it was written).
std::vector<AttrType> heldKinds(const onnx::AttributeProto &a) {
  std::vector<AttrType> kinds;
  auto add = [&](bool present, AttrType t) {
    if (present)
      kinds.push_back(t);
  };
  add(a.has_f(), onnx::AttributeProto::FLOAT);
  add(a.has_i(), onnx::AttributeProto::INT);
  add(a.has_s(), onnx::AttributeProto::STRING);
  add(a.has_t(), onnx::AttributeProto::TENSOR);
  add(a.has_g(), onnx::AttributeProto::GRAPH);
  add(a.has_sparse_tensor(), onnx::AttributeProto::SPARSE_TENSOR);
  add(a.has_tp(), onnx::AttributeProto::TYPE_PROTO);
  add(a.floats_size() > 0, onnx::AttributeProto::FLOATS);
  add(a.ints_size() > 0, onnx::AttributeProto::INTS);
  add(a.strings_size() > 0, onnx::AttributeProto::STRINGS);
  add(a.tensors_size() > 0, onnx::AttributeProto::TENSORS);
  add(a.graphs_size() > 0, onnx::AttributeProto::GRAPHS);
  add(a.sparse_tensors_size() > 0, onnx::AttributeProto::SPARSE_TENSORS);
  add(a.type_protos_size() > 0, onnx::AttributeProto::TYPE_PROTOS);
  return kinds;
}

/// Checks one attribute's declared type against the schema's; an attribute
/// without a declared type (IR version 1) takes the kind of value it holds.
void checkType(const onnx::NodeProto &node, onnx::AttributeProto &a,
               AttrType expected) {
  std::string what = nodeLabel(node) + ": attribute '" + a.name() + "'";
  std::vector<AttrType> held = heldKinds(a);
  if (a.type() == onnx::AttributeProto::UNDEFINED) {
    if (held.size() != 1)
      throw ImportError(what + " has no type and " +
                        (held.empty() ? "no value" : "several values"));
    a.set_type(held[0]);
  }
  if (a.type() != expected)
    throw ImportError(what + " is " + typeName(a.type()) + " but " +
                      node.op_type() + " takes " + typeName(expected));
  // A value of another kind beside, or instead of, the declared one is
  // read as the declared field's default: refuse it.
  for (AttrType t : held)
    if (t != expected)
      throw ImportError(what + " is declared " + typeName(expected) +
                        " but holds a " + typeName(t) + " value");
}

/// Fails unless every value of the INTS attribute `name` is at least `min`.
void checkAtLeast(const onnx::NodeProto &node, const onnx::AttributeProto &a,
                  int64_t min) {
  auto values = a.type() == onnx::AttributeProto::INTS
                    ? std::vector<int64_t>(a.ints().begin(), a.ints().end())
                    : std::vector<int64_t>{a.i()};
  for (int64_t v : values)
    if (v < min)
      throw ImportError(nodeLabel(node) + ": attribute '" + a.name() +
                        "' has value " + std::to_string(v) +
                        (min == 1 ? "; it must be positive"
                                  : "; it must be at least " +
                                        std::to_string(min)));
}

/// Value checks for what libonnx 1.12's inference functions take for
/// granted: the divisors of convolution and pooling output sizes, the
/// block size DepthToSpace divides the channels by (squared), GatherND's
/// batch_dims (an index into both shapes).
void checkValues(const onnx::NodeProto &node, const onnx::OpSchema &schema) {
  bool convLike = schema.attributes().count("kernel_shape") ||
                  schema.attributes().count("strides");
  for (const auto &a : node.attribute()) {
    const std::string &name = a.name();
    if (convLike && (name == "strides" || name == "dilations" ||
                     name == "kernel_shape"))
      checkAtLeast(node, a, 1);
    else if (convLike && (name == "pads" || name == "output_padding"))
      checkAtLeast(node, a, 0);
    else if (name == "blocksize") {
      checkAtLeast(node, a, 1);
      // Squared by the inference function: keep the square in 64 bits.
      if (a.i() > (int64_t(1) << 31))
        throw ImportError(nodeLabel(node) + ": attribute 'blocksize' has "
                          "value " + std::to_string(a.i()) +
                          ", more than 2^31");
    } else if (name == "batch_dims" && node.op_type() == "GatherND") {
      checkAtLeast(node, a, 0);
    }
  }
}

} // namespace

void checkNodeAttributes(onnx::NodeProto &node, int64_t opset) {
  const onnx::OpSchema *schema =
      onnx::OpSchemaRegistry::Schema(node.op_type(), opset, domainOf(node));
  if (!schema)
    return; // Unknown operators are reported by the caller.
  std::set<std::string> seen;
  for (auto &a : *node.mutable_attribute()) {
    if (!seen.insert(a.name()).second)
      throw ImportError(nodeLabel(node) + ": attribute '" + a.name() +
                        "' is given twice");
    auto it = schema->attributes().find(a.name());
    if (it == schema->attributes().end()) {
      // ONNX reserves names starting "__" for implementation details.
      if (a.name().rfind("__", 0) == 0)
        continue;
      throw ImportError(nodeLabel(node) + ": unknown attribute '" + a.name() +
                        "' (opset " + std::to_string(opset) + "'s " +
                        node.op_type() + " has no such attribute)");
    }
    if (!a.ref_attr_name().empty())
      throw ImportError(nodeLabel(node) + ": attribute '" + a.name() +
                        "' refers to a function attribute outside a function");
    checkType(node, a, it->second.type);
  }
  for (const auto &[name, attribute] : schema->attributes())
    if (attribute.required && !seen.count(name))
      throw ImportError(nodeLabel(node) + ": required attribute '" + name +
                        "' is missing");
  checkValues(node, *schema);
  auto checkCount = [&](const char *what, int n, int min, int max) {
    if (n >= min && n <= max)
      return;
    std::string range = min == max ? std::to_string(min)
                        : max == std::numeric_limits<int>::max()
                            ? "at least " + std::to_string(min)
                            : std::to_string(min) + " to " + std::to_string(max);
    throw ImportError(nodeLabel(node) + ": has " + std::to_string(n) + " " +
                      what + "; opset " + std::to_string(opset) + "'s " +
                      node.op_type() + " takes " + range);
  };
  checkCount("inputs", node.input_size(), schema->min_input(),
             schema->max_input());
  checkCount("outputs", node.output_size(), schema->min_output(),
             schema->max_output());
  // The rest of ONNX's own node check: input and output counts.
  try {
    schema->Verify(node);
  } catch (const std::exception &e) {
    std::string msg = e.what();
    throw ImportError(nodeLabel(node) + ": " + msg.substr(0, msg.find('\n')));
  }
}

} // namespace loom::onnx_import
