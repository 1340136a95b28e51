//===- ProgressTest.cpp - Progress bars and the steps passes report -------===//
//
// Read through LOOM_PROGRESS_LOG, which records every update and step
// whether or not stderr is a terminal: no timing involved.
//
//===----------------------------------------------------------------------===//
#include "loom/Runtime/Progress.h"
#include "loom/Target/PassProgress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace {

using loom::rt::Progress;

/// Logs progress to a fresh file while it lives; text() is what was logged.
struct ProgressLog {
  std::string path;
  ProgressLog() {
    path = ::testing::TempDir() + "progress-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() +
           ".log";
    std::remove(path.c_str());
    setenv("LOOM_PROGRESS_LOG", path.c_str(), 1);
  }
  ~ProgressLog() { unsetenv("LOOM_PROGRESS_LOG"); }
  std::string text() const {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

// Tests that steps reported by code that does not own a bar (a pass) go to
// the newest live bar, after its current unit, and that a new unit starts
// its steps afresh.
TEST(Progress, StepsGoToTheNewestBar) {
  ProgressLog log;
  Progress::step(1, 2, "ignored"); // No bar: nothing.
  {
    Progress outer("compile m.onnx", 3);
    outer.update(0, "graph-partition");
    Progress::step(5, 10, "kernels placed");
    {
      Progress inner("import m.onnx", 0);
      Progress::step(1, 4, "nodes");
    }
    Progress::step(10, 10, "kernels placed");
    outer.update(1, "spatial-to-sched");
    Progress::step(12, 10, "instrs scheduled"); // Clamped to the total.
    outer.update(3);
  }
  EXPECT_EQ(log.text(), "compile m.onnx: 0/3 graph-partition\n"
                        "compile m.onnx: step 5/10 kernels placed\n"
                        "import m.onnx: step 1/4 nodes\n"
                        "compile m.onnx: step 10/10 kernels placed\n"
                        "compile m.onnx: 1/3 spatial-to-sched\n"
                        "compile m.onnx: step 10/10 instrs scheduled\n"
                        "compile m.onnx: 3/3\n");
}

// Tests that a step goes to a bar of its own thread before a newer one of
// another thread (the planner compiles layers on several threads).
TEST(Progress, StepsPreferTheirOwnThreadsBar) {
  ProgressLog log;
  Progress mine("mine", 1);
  std::thread([&] {
    Progress theirs("theirs", 1);
    Progress::step(1, 2, "a");
    // A thread without a bar of its own: the newest of all.
    std::thread([] { Progress::step(1, 2, "b"); }).join();
  }).join();
  Progress::step(2, 2, "c");
  EXPECT_EQ(log.text(), "theirs: step 1/2 a\n"
                        "theirs: step 1/2 b\n"
                        "mine: step 2/2 c\n");
}

// Tests that a pass's steps reach the bar through the hook the driver sets:
// 0, then every 5% of the work (here 2 of 40 units), then the end once; and
// that a search's steps (PassSteps::upTo) count against their bound, say
// so, and end at it when the search stops early.
TEST(Progress, PassStepsReportEveryFivePercent) {
  ProgressLog log;
  loom::passStepHook = &Progress::step;
  {
    Progress bar("c", 1);
    loom::PassSteps placed(40, "kernels placed");
    for (int i = 0; i < 5; ++i)
      placed.advance();
    placed.advance(35);
    placed.finish(); // Already at the end: nothing more.
    loom::PassSteps rounds = loom::PassSteps::upTo(64, "rounds");
    for (int i = 0; i < 7; ++i)
      rounds.advance();
    rounds.finish();
  }
  loom::passStepHook = nullptr;
  EXPECT_EQ(log.text(), "c: step 0/40 kernels placed\n"
                        "c: step 2/40 kernels placed\n"
                        "c: step 4/40 kernels placed\n"
                        "c: step 40/40 kernels placed\n"
                        "c: step 0/64 rounds (at most)\n"
                        "c: step 3/64 rounds (at most)\n"
                        "c: step 6/64 rounds (at most)\n"
                        "c: step 64/64 rounds (at most)\n");
}

} // namespace
