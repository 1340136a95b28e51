//===- Formats.cpp - Precisions, weight mixes and a model's cost ----------===//
//
// The bytes of a precision, the formats and shares of a weight mix
// (--weights), what one model costs per layer and per token (ModelCost),
// and the formats a target's matrix unit runs weights in and the compiled
// layers' kernel precision and KV-cache storage. See Planner.h.
//
//===----------------------------------------------------------------------===//
#include "PlannerInternal.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

namespace loom::plan {

double precisionBytes(const std::string &p) {
  if (p == "fp32")
    return 4;
  if (p == "bf16" || p == "fp16")
    return 2;
  if (p == "fp8" || p == "int8")
    return 1;
  if (p == "fp4")
    return 0.5;
  return 0;
}

std::string unknownPrecision(const std::string &precision) {
  return "precision '" + precision +
         "' is not fp32, bf16, fp16, fp8, int8 or fp4";
}

std::vector<WeightShare> weightMix(const std::string &spec,
                                   std::string &error) {
  std::vector<WeightShare> mix;
  auto fail = [&](const std::string &why) {
    error = "--weights=" + spec + ": " + why;
    return std::vector<WeightShare>{};
  };
  if (spec.find_first_of(":,") == std::string::npos) {
    if (precisionBytes(spec) == 0) {
      error = unknownPrecision(spec);
      return {};
    }
    return {WeightShare{spec, 1.0}};
  }
  const char *form = " (a mix is FORMAT:SHARE,FORMAT:SHARE,...)";
  if (spec.find_first_of(" \t\n") != std::string::npos)
    return fail(std::string("has a blank") + form);
  double sum = 0;
  size_t begin = 0;
  while (begin <= spec.size()) {
    size_t end = std::min(spec.find(',', begin), spec.size());
    std::string item = spec.substr(begin, end - begin);
    begin = end + 1;
    if (item.empty())
      return fail(std::string("has an empty item") + form);
    size_t colon = item.find(':');
    if (colon == std::string::npos)
      return fail("'" + item + "' has no share" + form);
    std::string format = item.substr(0, colon), share = item.substr(colon + 1);
    if (precisionBytes(format) == 0)
      return fail(unknownPrecision(format));
    char *last = nullptr;
    double x = std::strtod(share.c_str(), &last);
    if (share.empty() || *last != '\0' || !(x > 0) || x > 1)
      return fail(format + "'s share '" + share +
                  "' is not a number in (0, 1]");
    for (const WeightShare &w : mix)
      if (w.format == format)
        return fail(format + " is named twice");
    mix.push_back(WeightShare{format, x});
    sum += x;
  }
  if (std::abs(sum - 1) > 1e-3) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", sum);
    return fail(std::string("the shares sum to ") + buf + ", not 1");
  }
  for (WeightShare &w : mix)
    w.share /= sum;
  return mix;
}

double weightBytes(const std::vector<WeightShare> &mix) {
  double bytes = 0;
  for (const WeightShare &w : mix)
    bytes += w.share * precisionBytes(w.format);
  return bytes;
}

double weightBytes(const std::string &spec) {
  std::string error;
  return weightBytes(weightMix(spec, error));
}

double ModelCost::totalParams() const {
  return layers * (attnParams + experts * expertParams) + embedParams +
         headParams;
}

double ModelCost::activeParams() const {
  return layers * (attnParams + expertsPerToken * expertParams) + headParams;
}

double ModelCost::layerFlopsPerToken() const {
  return 2.0 * (attnParams + expertsPerToken * expertParams);
}

double ModelCost::attnFlopsPerPosition() const {
  // Scores (q . k) and context (p . v): 2 FLOPs per multiply-add each.
  return 4.0 * heads * headDim;
}

double ModelCost::kvElementsPerTokenLayer() const {
  return 2.0 * kvHeads * headDim;
}

ModelCost modelCost(const LlmConfig &c) {
  ModelCost m;
  m.layers = c.layers;
  m.hidden = c.hidden;
  m.heads = c.heads;
  m.kvHeads = c.kvHeads;
  m.headDim = c.headDim;
  m.vocab = c.vocab;
  m.experts = std::max<int64_t>(1, c.experts);
  m.expertsPerToken = std::max<int64_t>(1, c.expertsPerToken);
  double h = double(c.hidden), qd = double(c.heads) * c.headDim,
         kvd = double(c.kvHeads) * c.headDim;
  m.attnParams = h * qd + 2 * h * kvd + qd * h;
  m.expertParams = 3.0 * h * double(c.intermediate);
  m.embedParams = double(c.vocab) * h;
  m.headParams = h * double(c.vocab);
  return m;
}

namespace {
/// The formats a matrix unit may multiply weights stored as `weights` in,
/// in order of preference: the weights' own, then the others of its width
/// (fp4, which few units run, falls back to one byte).
std::vector<NumericFormat> matrixCandidates(const std::string &weights) {
  std::optional<NumericFormat> asked = rt::parseNumericFormat(weights);
  NumericFormat own = asked.value_or(NumericFormat::F8);
  std::vector<NumericFormat> c{own};
  switch (own) {
  case NumericFormat::F4:
  case NumericFormat::F8:
  case NumericFormat::I8:
    c.insert(c.end(), {NumericFormat::F8, NumericFormat::I8});
    break;
  case NumericFormat::BF16:
  case NumericFormat::F16:
    c.insert(c.end(), {NumericFormat::BF16, NumericFormat::F16});
    break;
  case NumericFormat::F32:
  case NumericFormat::TF32:
    c.insert(c.end(), {NumericFormat::F32, NumericFormat::TF32});
    break;
  }
  return c;
}
} // namespace

NumericFormat matrixFormat(const TargetModel &target,
                           const std::string &weights) {
  std::vector<NumericFormat> c = matrixCandidates(weights);
  for (NumericFormat f : c)
    if (target.matrixSupports(f))
      return f;
  return c.front();
}

std::string layerPrecision(const TargetModel &target,
                           const std::string &weights) {
  std::vector<NumericFormat> kernel;
  for (NumericFormat f : matrixCandidates(weights))
    if (rt::kernelPrecisionFormat(rt::numericFormatName(f)))
      kernel.push_back(f);
  for (NumericFormat f : kernel)
    if (target.matrixSupports(f))
      return rt::numericFormatName(f);
  return rt::numericFormatName(kernel.front());
}

std::string layerKvStorage(const std::string &kv) {
  if (rt::storageFormat(kv))
    return kv;
  return "fp8"; // int8 and fp4: the compiler's one-byte storage
}

} // namespace loom::plan
