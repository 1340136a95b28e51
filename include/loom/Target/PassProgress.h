//===- PassProgress.h - Passes report the steps of their work ---*- C++ -*-===//
//
// A long pass (placement, spatial-to-sched, graph-partition) reports how
// far through its work it is without linking the runtime's progress bar:
// it counts its units with PassSteps, which calls the process's hook, and
// the driver sets the hook to rt::Progress::step (the innermost live bar
// shows the steps; LOOM_PROGRESS_LOG records them). With no hook set (a
// library user, the Python module) nothing is reported.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TARGET_PASSPROGRESS_H
#define LOOM_TARGET_PASSPROGRESS_H

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

namespace loom {

/// Where a pass's steps go: done of total units of `what`.
using PassStepHook = void (*)(int64_t done, int64_t total,
                              const std::string &what);

/// The process's hook (null: steps go nowhere).
inline std::atomic<PassStepHook> passStepHook{nullptr};

/// A pass's steps through `total` units of its work ("kernels placed"), in
/// steps of at most 5% of the work: 0 when made, then each advance() that
/// takes the units done 5% of the work past the last report (at least a
/// unit), and the end, once. Monotone; finish() reports 100%.
class PassSteps {
public:
  PassSteps(int64_t total, std::string what)
      : total_(std::max<int64_t>(0, total)), what_(std::move(what)) {
    report();
  }
  /// A search that stops once it has its answer, after at most `bound`
  /// units (rounds of an interval search): its total is the bound, so the
  /// bar's time left is an upper estimate, and finish() when it stops
  /// early reports the end in one step over the rounds it did not need.
  /// The units read "WHAT (at most)", so a reader of the steps
  /// (test/Compile/Inputs/check_steps.py) knows the total is a bound.
  static PassSteps upTo(int64_t bound, const std::string &what) {
    return PassSteps(bound, what + " (at most)");
  }
  /// `n` more units done.
  void advance(int64_t n = 1) {
    done_ = std::min(total_, done_ + std::max<int64_t>(0, n));
    const int64_t stride = std::max<int64_t>(1, total_ / 20);
    if (done_ == total_ ? reported_ < total_ : done_ - reported_ >= stride)
      report();
  }
  /// All units done: 100% (once).
  void finish() { advance(total_ - done_); }

private:
  void report() {
    reported_ = done_;
    if (PassStepHook hook = passStepHook.load())
      hook(done_, total_, what_);
  }
  int64_t total_, done_ = 0, reported_ = -1;
  std::string what_;
};

} // namespace loom

#endif // LOOM_TARGET_PASSPROGRESS_H
