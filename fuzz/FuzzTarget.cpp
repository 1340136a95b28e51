//===- FuzzTarget.cpp - Fuzz the target description loader ---------------===//
//
// JSON text -> loom::TargetModel::parse, then every derived figure of an
// accepted target (what `loom target show` prints). The loader's API does not
// throw: any exception escaping it is a failure.
//
//===----------------------------------------------------------------------===//
#include "FuzzCheck.h"

#include "loom/Target/TargetModel.h"

#include <string_view>

bool loom::fuzz::runOne(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  std::string error;
  std::optional<TargetModel> target =
      TargetModel::parse(text, "fuzz.json", error);
  if (!target) {
    checkErrorLine(error, "fuzz.json");
    return false;
  }
  for (const DerivedFigure &figure : target->derivedFigures())
    if (figure.key.empty())
      std::abort();
  return true;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  loom::fuzz::runOne(data, size);
  return 0;
}
