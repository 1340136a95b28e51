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

namespace loom::testing {

/// The target `nameOrPath` (a preset name or a JSON file); aborts the test
/// binary, after recording the loader's error, when it does not load.
inline TargetModel loadTarget(const std::string &nameOrPath) {
  std::string error;
  std::optional<TargetModel> target = TargetModel::load(nameOrPath, error);
  if (!target) {
    ADD_FAILURE() << error;
    std::abort();
  }
  return *target;
}

} // namespace loom::testing

#endif // LOOM_TEST_UNITTESTS_TARGETHELPERS_H
