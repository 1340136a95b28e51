//===- OpExecutor.cpp - Execute one graph op by name ----------------------===//
#include "loom/Runtime/OpExecutor.h"

#include "loom/Runtime/Reference.h"
#include "loom/Runtime/TargetDesc.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <functional>
#include <unordered_map>

namespace loom::rt {
namespace {

/// What an op implementation sees.
struct OpCall {
  const std::string &name;
  const AttrMap &attrs;
  const std::vector<Tensor> &in;
  const std::vector<ResultType> &results;
  ExecMode mode;
  const FastOptions &fast;

  const AttrValue &attr(const char *key) const {
    auto it = attrs.find(key);
    if (it == attrs.end())
      throw Error(name + ": missing attribute '" + key + "'");
    return it->second;
  }
  int64_t i(const char *key) const {
    const AttrValue &a = attr(key);
    if (a.ints.empty())
      throw Error(name + ": attribute '" + key + "' has no integer value");
    return a.ints[0];
  }
  bool flag(const char *key) const { return i(key) != 0; }
  double f(const char *key) const {
    const AttrValue &a = attr(key);
    if (a.floats.empty())
      throw Error(name + ": attribute '" + key + "' has no float value");
    return a.floats[0];
  }
  const std::vector<int64_t> &ints(const char *key) const {
    return attr(key).ints;
  }
  const std::vector<double> &floats(const char *key) const {
    return attr(key).floats;
  }
  const std::string &s(const char *key) const { return attr(key).str; }
  const Tensor &input(size_t k) const {
    if (k >= in.size())
      throw Error(name + ": missing operand " + std::to_string(k));
    return in[k];
  }
  /// The operand at `k`, or an empty tensor when the optional is absent.
  Tensor optional(size_t k) const { return k < in.size() ? in[k] : Tensor(); }
  const Shape &resultShape(size_t k = 0) const {
    if (k >= results.size())
      throw Error(name + ": missing result type " + std::to_string(k));
    return results[k].shape;
  }
  DType resultDType(size_t k = 0) const {
    if (k >= results.size())
      throw Error(name + ": missing result type " + std::to_string(k));
    return results[k].dtype;
  }
  /// The integer attribute `key`, or `dflt` when it is absent.
  int64_t iOr(const char *key, int64_t dflt) const {
    return attrs.count(key) ? i(key) : dflt;
  }
  /// True if operand `k` is 8-bit integer: the matrix op is an int8
  /// kernel's anchor (graph-fold-quantized).
  bool int8Operand(size_t k) const {
    DType d = input(k).dtype();
    return d == DType::I8 || d == DType::U8;
  }
  /// The fast options with the op's calibrated int8 scales (an int8
  /// policy kernel compiled with --calibrate), if it has them.
  FastOptions calibrated() const {
    FastOptions o = fast;
    auto it = attrs.find("calibrated_int8_scales");
    if (o.inputRounding == InputRounding::Int8 && it != attrs.end() &&
        it->second.floats.size() == 2) {
      o.int8Scales[0] = it->second.floats[0];
      o.int8Scales[1] = it->second.floats[1];
    }
    return o;
  }
  bool fastF32() const {
    return mode == ExecMode::Fast && input(0).dtype() == DType::F32;
  }
};

/// `t` rounded (bf16, fp16, fp8 E4M3 or int8) and back to fp32 when the kernel's
/// precision policy says so (fast mode); the reference path never rounds.
Tensor policyInput(const OpCall &c, const Tensor &t) {
  if (c.mode != ExecMode::Fast ||
      c.fast.inputRounding == InputRounding::None || t.dtype() != DType::F32)
    return t;
  Tensor r(DType::F32, t.shape());
  roundInputs(t.data<float>(), r.mutableData<float>(), t.numElements(),
              c.fast.inputRounding);
  return r;
}

using Impl = std::function<std::vector<Tensor>(const OpCall &)>;
using Results = std::vector<Tensor>;

Impl unaryImpl(ref::UnaryKind kind) {
  return [kind](const OpCall &c) -> Results {
    if (c.fastF32())
      return {fast::unary(kind, c.input(0))};
    return {ref::unary(kind, c.input(0))};
  };
}
Impl unaryAttrs(ref::UnaryKind kind, const char *a, const char *b,
                const char *g) {
  return [=](const OpCall &c) -> Results {
    ref::UnaryParams p;
    if (a)
      p.alpha = c.f(a);
    if (b)
      p.beta = c.f(b);
    if (g)
      p.gamma = c.f(g);
    return {ref::unary(kind, c.input(0), p)};
  };
}
Impl binaryImpl(ref::BinaryKind kind) {
  return [kind](const OpCall &c) -> Results {
    if (c.fastF32() && c.input(1).dtype() == DType::F32)
      return {fast::binary(kind, c.input(0), c.input(1))};
    return {ref::binary(kind, c.input(0), c.input(1))};
  };
}
Impl reduceImpl(ref::ReduceKind kind) {
  return [kind](const OpCall &c) -> Results {
    return {ref::reduce(kind, c.input(0), c.ints("axes"), c.flag("keepdims"))};
  };
}
ref::ScatterReduction reduction(const std::string &s) {
  if (s == "add") return ref::ScatterReduction::Add;
  if (s == "mul") return ref::ScatterReduction::Mul;
  if (s == "max") return ref::ScatterReduction::Max;
  if (s == "min") return ref::ScatterReduction::Min;
  return ref::ScatterReduction::None;
}

using Registry = std::unordered_map<std::string, Impl>;

/// Unary and binary elementwise ops, casts and select.
void addElementwise(Registry &t) {
  using U = ref::UnaryKind;
  using B = ref::BinaryKind;
  // Unary.
  const std::pair<const char *, U> unaries[] = {
      {"neg", U::Neg},           {"abs", U::Abs},
      {"sqrt", U::Sqrt},         {"reciprocal", U::Reciprocal},
      {"exp", U::Exp},           {"log", U::Log},
      {"erf", U::Erf},           {"tanh", U::Tanh},
      {"sigmoid", U::Sigmoid},   {"relu", U::Relu},
      {"sin", U::Sin},           {"cos", U::Cos},
      {"tan", U::Tan},           {"asin", U::Asin},
      {"acos", U::Acos},         {"atan", U::Atan},
      {"sinh", U::Sinh},         {"cosh", U::Cosh},
      {"asinh", U::Asinh},       {"acosh", U::Acosh},
      {"atanh", U::Atanh},       {"floor", U::Floor},
      {"ceil", U::Ceil},         {"round", U::Round},
      {"sign", U::Sign},         {"softsign", U::Softsign},
      {"softplus", U::Softplus}, {"not", U::Not},
      {"hard_swish", U::HardSwish}, {"is_nan", U::IsNaN}};
  for (auto &[name, kind] : unaries)
    t[name] = unaryImpl(kind);
  t["is_inf"] = [](const OpCall &c) -> Results {
    bool pos = c.flag("detect_positive"), neg = c.flag("detect_negative");
    if (!pos && !neg)
      return {Tensor(DType::Bool, c.input(0).shape())};
    U kind = pos && neg ? U::IsInf : pos ? U::IsInfPos : U::IsInfNeg;
    return {ref::unary(kind, c.input(0))};
  };
  t["leaky_relu"] = unaryAttrs(U::LeakyRelu, "alpha", nullptr, nullptr);
  t["elu"] = unaryAttrs(U::Elu, "alpha", nullptr, nullptr);
  t["celu"] = unaryAttrs(U::Celu, "alpha", nullptr, nullptr);
  t["selu"] = unaryAttrs(U::Selu, "alpha", nullptr, "gamma");
  t["hard_sigmoid"] = unaryAttrs(U::HardSigmoid, "alpha", "beta", nullptr);
  t["thresholded_relu"] =
      unaryAttrs(U::ThresholdedRelu, "alpha", nullptr, nullptr);
  t["shrink"] = unaryAttrs(U::Shrink, "lambd", "bias", nullptr);
  t["cast"] = [](const OpCall &c) -> Results {
    return {ref::cast(c.input(0), c.resultDType())};
  };
  // Binary.
  const std::pair<const char *, B> binaries[] = {
      {"add", B::Add},       {"sub", B::Sub},
      {"mul", B::Mul},       {"div", B::Div},
      {"pow", B::Pow},       {"min", B::Min},
      {"max", B::Max},       {"and", B::And},
      {"or", B::Or},         {"xor", B::Xor},
      {"equal", B::Equal},   {"less", B::Less},
      {"greater", B::Greater}, {"less_equal", B::LessEqual},
      {"greater_equal", B::GreaterEqual}, {"prelu", B::PRelu}};
  for (auto &[name, kind] : binaries)
    t[name] = binaryImpl(kind);
  t["mod"] = [](const OpCall &c) -> Results {
    return {ref::binary(c.flag("fmod") ? B::FMod : B::Mod, c.input(0),
                        c.input(1))};
  };
  t["bit_shift"] = [](const OpCall &c) -> Results {
    return {ref::binary(c.flag("left") ? B::BitShiftLeft : B::BitShiftRight,
                        c.input(0), c.input(1))};
  };
  t["select"] = [](const OpCall &c) -> Results {
    return {ref::select(c.input(0), c.input(1), c.input(2))};
  };
}

/// Reductions, arg max/min, softmax-likes, cumsum and normalisations.
void addReductions(Registry &t) {
  using R = ref::ReduceKind;
  // Reductions and normalisations.
  const std::pair<const char *, R> reductions[] = {
      {"reduce_sum", R::Sum},         {"reduce_mean", R::Mean},
      {"reduce_max", R::Max},         {"reduce_min", R::Min},
      {"reduce_prod", R::Prod},       {"reduce_l1", R::L1},
      {"reduce_l2", R::L2},           {"reduce_sum_square", R::SumSquare},
      {"reduce_log_sum", R::LogSum},  {"reduce_log_sum_exp", R::LogSumExp}};
  for (auto &[name, kind] : reductions)
    t[name] = reduceImpl(kind);
  t["arg_max"] = [](const OpCall &c) -> Results {
    return {ref::argMax(c.input(0), c.i("axis"), c.flag("keepdims"),
                        c.flag("select_last_index"))};
  };
  t["arg_min"] = [](const OpCall &c) -> Results {
    return {ref::argMin(c.input(0), c.i("axis"), c.flag("keepdims"),
                        c.flag("select_last_index"))};
  };
  t["softmax"] = [](const OpCall &c) -> Results {
    return {ref::softmax(c.input(0), c.i("axis"))};
  };
  t["log_softmax"] = [](const OpCall &c) -> Results {
    return {ref::logSoftmax(c.input(0), c.i("axis"))};
  };
  t["hardmax"] = [](const OpCall &c) -> Results {
    return {ref::hardmax(c.input(0), c.i("axis"))};
  };
  t["cumsum"] = [](const OpCall &c) -> Results {
    return {ref::cumSum(c.input(0), c.i("axis"), c.flag("exclusive"),
                        c.flag("reverse"))};
  };
  t["batch_norm"] = [](const OpCall &c) -> Results {
    return {ref::batchNorm(c.input(0), c.input(1), c.input(2), c.input(3),
                           c.input(4), c.f("epsilon"))};
  };
  t["layer_norm"] = [](const OpCall &c) -> Results {
    return {ref::layerNorm(c.input(0), c.input(1), c.optional(2), c.i("axis"),
                           c.f("epsilon"))};
  };
  t["instance_norm"] = [](const OpCall &c) -> Results {
    return {ref::instanceNorm(c.input(0), c.input(1), c.input(2),
                              c.f("epsilon"))};
  };
}

/// Matrix products, convolutions, pooling and einsum.
void addLinearAlgebra(Registry &t) {
  // Linear algebra, convolution, pooling.
  t["matmul"] = [](const OpCall &c) -> Results {
    // An int8 anchor: exact int32 accumulation, on both paths (the fast
    // kernel blocks it, the reference loops; both sums are exact).
    if (c.int8Operand(0) || c.int8Operand(1)) {
      int64_t za = c.iOr("lhs_zero_point", 0),
              zb = c.iOr("rhs_zero_point", 0);
      if (c.mode == ExecMode::Fast)
        return {fast::qmatmul(c.input(0), c.input(1), za, zb)};
      return {ref::qmatmul(c.input(0), c.input(1), za, zb)};
    }
    if (c.fastF32() && c.input(1).dtype() == DType::F32)
      return {fast::matmul(c.input(0), c.input(1), c.calibrated())};
    return {ref::matmul(c.input(0), c.input(1))};
  };
  t["conv"] = [](const OpCall &c) -> Results {
    if (c.int8Operand(0) || c.int8Operand(1)) {
      ref::ConvParams p{c.ints("strides"), c.ints("dilations"),
                        c.ints("pads"), c.i("group"), {}};
      return {ref::qconv(c.input(0), c.input(1), c.optional(2),
                         c.iOr("input_zero_point", 0),
                         c.iOr("weight_zero_point", 0), p)};
    }
    if (c.fastF32() && c.input(1).dtype() == DType::F32)
      return {fast::conv(c.input(0), c.input(1), c.optional(2),
                         c.ints("strides"), c.ints("dilations"),
                         c.ints("pads"), c.i("group"), c.calibrated())};
    ref::ConvParams p{c.ints("strides"), c.ints("dilations"), c.ints("pads"),
                      c.i("group"), {}};
    return {ref::conv(c.input(0), c.input(1), c.optional(2), p)};
  };
  t["conv_transpose"] = [](const OpCall &c) -> Results {
    ref::ConvParams p{c.ints("strides"), c.ints("dilations"), c.ints("pads"),
                      c.i("group"), c.ints("output_padding")};
    return {ref::convTranspose(policyInput(c, c.input(0)),
                               policyInput(c, c.input(1)), c.optional(2), p,
                               c.resultShape())};
  };
  t["max_pool"] = [](const OpCall &c) -> Results {
    ref::PoolParams p{c.ints("kernel_shape"), c.ints("strides"),
                      c.ints("dilations"), c.ints("pads"), false};
    if (c.results.size() < 2) {
      if (c.fastF32() && c.input(0).rank() == 4)
        return {fast::maxPool2d(c.input(0), p.kernel, p.strides,
                                p.dilations, p.pads, c.resultShape())};
      return {ref::maxPool(c.input(0), p, c.resultShape())};
    }
    Tensor indices;
    Tensor values = ref::maxPool(c.input(0), p, c.resultShape(), &indices);
    return {values, indices};
  };
  t["avg_pool"] = [](const OpCall &c) -> Results {
    ref::PoolParams p{c.ints("kernel_shape"), c.ints("strides"),
                      c.ints("dilations"), c.ints("pads"),
                      c.flag("count_include_pad")};
    return {ref::avgPool(c.input(0), p, c.resultShape())};
  };
  t["einsum"] = [](const OpCall &c) -> Results {
    std::vector<Tensor> operands;
    for (const Tensor &t : c.in)
      operands.push_back(policyInput(c, t));
    return {ref::einsum(c.s("equation"), operands)};
  };
}

/// Data movement and the collectives.
void addMovement(Registry &t) {
  // Data movement.
  t["reshape"] = [](const OpCall &c) -> Results {
    return {c.input(0).reshaped(c.resultShape())};
  };
  t["transpose"] = [](const OpCall &c) -> Results {
    return {ref::transpose(c.input(0), c.ints("perm"))};
  };
  t["broadcast_to"] = [](const OpCall &c) -> Results {
    return {ref::broadcastTo(c.input(0), c.resultShape())};
  };
  t["concat"] = [](const OpCall &c) -> Results {
    return {ref::concat(c.in, c.i("axis"))};
  };
  // Collectives: every result is the same value (one per chip).
  t["all_reduce"] = [](const OpCall &c) -> Results {
    Tensor sum = c.input(0);
    for (size_t i = 1; i < c.in.size(); ++i)
      sum = ref::binary(ref::BinaryKind::Add, sum, c.input(i));
    return Results(c.in.size(), sum);
  };
  t["all_gather"] = [](const OpCall &c) -> Results {
    return Results(c.in.size(), ref::concat(c.in, c.i("axis")));
  };
  t["slice"] = [](const OpCall &c) -> Results {
    return {ref::slice(c.input(0), c.ints("starts"), c.ints("ends"),
                       c.ints("axes"), c.ints("steps"))};
  };
  t["gather"] = [](const OpCall &c) -> Results {
    return {ref::gather(c.input(0), c.input(1), c.i("axis"))};
  };
  t["gather_elements"] = [](const OpCall &c) -> Results {
    return {ref::gatherElements(c.input(0), c.input(1), c.i("axis"))};
  };
  t["gather_nd"] = [](const OpCall &c) -> Results {
    return {ref::gatherND(c.input(0), c.input(1), c.i("batch_dims"))};
  };
  t["scatter_nd"] = [](const OpCall &c) -> Results {
    return {ref::scatterND(c.input(0), c.input(1), c.input(2),
                           reduction(c.s("reduction")))};
  };
  t["scatter_elements"] = [](const OpCall &c) -> Results {
    return {ref::scatterElements(c.input(0), c.input(1), c.input(2),
                                 c.i("axis"), reduction(c.s("reduction")))};
  };
  t["tile"] = [](const OpCall &c) -> Results {
    return {ref::tile(c.input(0), c.ints("repeats"))};
  };
  t["pad"] = [](const OpCall &c) -> Results {
    const std::string &m = c.s("mode");
    ref::PadMode mode = m == "reflect" ? ref::PadMode::Reflect
                        : m == "edge"  ? ref::PadMode::Edge
                        : m == "wrap"  ? ref::PadMode::Wrap
                                       : ref::PadMode::Constant;
    return {ref::pad(c.input(0), c.ints("pads"), mode, c.f("value"))};
  };
  t["topk"] = [](const OpCall &c) -> Results {
    Tensor values, indices;
    ref::topK(c.input(0), c.i("k"), c.i("axis"), c.flag("largest"),
              c.flag("sorted"), values, indices);
    return {values, indices};
  };
  t["trilu"] = [](const OpCall &c) -> Results {
    return {ref::trilu(c.input(0), c.i("k"), c.flag("upper"))};
  };
  t["resize"] = [](const OpCall &c) -> Results {
    ref::ResizeParams p;
    p.mode = c.s("mode");
    p.coordinateTransform = c.s("coordinate_transformation_mode");
    p.nearestMode = c.s("nearest_mode");
    p.cubicCoeffA = c.f("cubic_coeff_a");
    p.excludeOutside = c.flag("exclude_outside");
    p.extrapolationValue = c.f("extrapolation_value");
    p.scales = c.floats("scales");
    p.roi = c.floats("roi");
    return {ref::resize(c.input(0), c.resultShape(), p)};
  };
  t["depth_to_space"] = [](const OpCall &c) -> Results {
    return {ref::depthToSpace(c.input(0), c.i("blocksize"), c.s("mode"))};
  };
  t["space_to_depth"] = [](const OpCall &c) -> Results {
    return {ref::spaceToDepth(c.input(0), c.i("blocksize"))};
  };
  t["one_hot"] = [](const OpCall &c) -> Results {
    return {ref::oneHot(c.input(0), c.i("depth"), c.input(1), c.i("axis"))};
  };
}

const Registry &registry() {
  static const Registry table = [] {
    Registry t;
    addElementwise(t);
    addReductions(t);
    addLinearAlgebra(t);
    addMovement(t);
    return t;
  }();
  return table;
}

} // namespace

bool isKnownOp(const std::string &name) { return registry().count(name); }

std::optional<InputRounding> inputRoundingOf(std::string_view precision) {
  std::optional<NumericFormat> f = kernelPrecisionFormat(precision);
  if (!f)
    return std::nullopt;
  switch (*f) {
  case NumericFormat::F32:
    return InputRounding::None;
  case NumericFormat::BF16:
    return InputRounding::BF16;
  case NumericFormat::F16:
    return InputRounding::FP16;
  case NumericFormat::F8:
    return InputRounding::FP8E4M3;
  case NumericFormat::I8:
    return InputRounding::Int8;
  default:
    return std::nullopt;
  }
}

float roundInput(float v, InputRounding r) {
  switch (r) {
  case InputRounding::None:
    return v;
  case InputRounding::BF16:
    return static_cast<float>(BFloat16(v));
  case InputRounding::FP16:
    return static_cast<float>(Half(v));
  case InputRounding::FP8E4M3:
    return roundToFp8E4M3(v);
  case InputRounding::Int8:
    assert(false && "int8 rounds per tensor: use roundInputs");
    return v;
  }
  return v;
}

Tensor roundToStorage(const Tensor &t, NumericFormat format) {
  std::optional<InputRounding> r = inputRoundingOf(numericFormatName(format));
  if (!r || *r == InputRounding::None || *r == InputRounding::Int8 ||
      t.dtype() != DType::F32)
    return t;
  Tensor out(DType::F32, t.shape());
  roundInputs(t.data<float>(), out.mutableData<float>(), t.numElements(), *r);
  return out;
}

void roundInputs(const float *src, float *dst, int64_t n, InputRounding r) {
  if (r != InputRounding::Int8) {
    for (int64_t i = 0; i < n; ++i)
      dst[i] = roundInput(src[i], r);
    return;
  }
  roundInputsInt8(src, dst, n, 0.0);
}

void roundInputsInt8(const float *src, float *dst, int64_t n, double scale) {
  // The scale of the finite values (in double: it may be subnormal in
  // float, and 127 x it may overflow). An inf or NaN passes through as it
  // is; all zero stays zero.
  if (!(scale > 0.0)) {
    double maxAbs = 0.0;
    for (int64_t i = 0; i < n; ++i)
      if (std::isfinite(src[i]))
        maxAbs = std::max(maxAbs, double(std::fabs(src[i])));
    scale = maxAbs / 127.0;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(src[i]) || scale == 0.0) {
      dst[i] = src[i];
      continue;
    }
    double q = std::nearbyint(double(src[i]) / scale); // ties to even
    dst[i] = static_cast<float>(std::clamp(q, -127.0, 127.0) * scale);
  }
}

std::vector<Tensor> executeOp(const std::string &name, const AttrMap &attrs,
                              const std::vector<Tensor> &inputs,
                              const std::vector<ResultType> &results,
                              ExecMode mode, const FastOptions &fast) {
  auto it = registry().find(name);
  if (it == registry().end())
    throw Error("the runtime does not support op '" + name + "'");
  OpCall call{name, attrs, inputs, results, mode, fast};
  std::vector<Tensor> out = it->second(call);
  if (out.size() != results.size())
    throw Error(name + ": produced " + std::to_string(out.size()) +
                " results, expected " + std::to_string(results.size()));
  for (size_t k = 0; k < out.size(); ++k) {
    if (out[k].shape() != results[k].shape)
      throw Error(name + ": computed shape " + shapeToString(out[k].shape()) +
                  " differs from the declared " +
                  shapeToString(results[k].shape));
    if (out[k].dtype() != results[k].dtype)
      throw Error(name + ": computed element type " +
                  dtypeName(out[k].dtype()) + " differs from the declared " +
                  dtypeName(results[k].dtype));
  }
  return out;
}

} // namespace loom::rt
