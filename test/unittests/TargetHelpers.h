//===- TargetHelpers.h - Loading target presets in unit tests ---*- C++ -*-===//
//
// One way for the unit tests to load a preset or target file: a failure to
// load is a test failure, and the test stops (nothing else could run).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TEST_UNITTESTS_TARGETHELPERS_H
#define LOOM_TEST_UNITTESTS_TARGETHELPERS_H

#include "loom/Target/TargetModel.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace loom::testing {

/// `target`, or, when a load or validation gave none, an abort of the test
/// binary after recording `error`.
inline TargetModel requireTarget(std::optional<TargetModel> target,
                                 const std::string &error) {
  if (!target) {
    ADD_FAILURE() << error;
    std::abort();
  }
  return std::move(*target);
}

/// The target `nameOrPath` (a preset name or a JSON file); aborts the test
/// binary, after recording the loader's error, when it does not load.
inline TargetModel loadTarget(const std::string &nameOrPath) {
  std::string error;
  std::optional<TargetModel> target = TargetModel::load(nameOrPath, error);
  return requireTarget(std::move(target), error);
}

} // namespace loom::testing

#endif // LOOM_TEST_UNITTESTS_TARGETHELPERS_H
