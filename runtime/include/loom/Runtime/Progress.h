//===- Progress.h - A progress bar on the terminal --------------*- C++ -*-===//
//
// For work that can take more than a couple of seconds (importing a large
// model, compiling, simulating, searching): one line on stderr, redrawn in
// place, "label [#######.......]  45% (9/20) detail  3.1 s, ~4 s left".
// Quiet unless stderr is a terminal (and LOOM_NO_PROGRESS is unset), and
// silent for work that ends within half a second, so tests, pipes and quick
// runs see nothing (LOOM_PROGRESS_DELAY=SECONDS changes the half second;
// tests set it to 0). The line is erased when the work ends. With a total
// of 0 the bar shows elapsed time only (work of unknown size).
//
// Code that does not own a bar (a pass the driver runs) reports its own
// steps with Progress::step: the innermost live bar shows them after its
// detail ("spatial-to-sched: kernels 120/400"), with the time left.
//
// LOOM_PROGRESS_LOG=FILE appends every update and step to FILE, one line
// each, whether or not a terminal is there and however quick the work:
// what the tests read (no timing involved).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_PROGRESS_H
#define LOOM_RUNTIME_PROGRESS_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace loom::rt {

class Progress {
public:
  Progress(std::string label, int64_t total);
  ~Progress();
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  /// `done` of the total units are finished; `detail` names the current one
  /// (and ends the steps reported for the previous one).
  void update(int64_t done, const std::string &detail = "");
  /// Redraws the line so its elapsed time moves, with no new progress (a
  /// ticker thread calls it while a long step runs).
  void tick();
  /// Erases the line (also done by the destructor).
  void finish();

  /// `done` of `total` steps of the current unit of the innermost live bar
  /// (made by any thread) are finished; `what` names the steps ("kernels
  /// placed"). Does nothing when no bar is live.
  static void step(int64_t done, int64_t total, const std::string &what);

  /// True if bars are drawn at all in this process (stderr is a terminal
  /// and LOOM_NO_PROGRESS is not set).
  static bool enabled();

private:
  void draw(bool force);
  void log(const std::string &event);

  std::mutex mutex_;
  std::string label_, detail_, stepWhat_;
  int64_t total_ = 0, done_ = 0, stepDone_ = 0, stepTotal_ = 0;
  std::chrono::steady_clock::time_point start_, lastDraw_, stepStart_;
  bool drawn_ = false, finished_ = false;
};

/// Redraws `bar` a few times a second while it lives, so work that reports
/// nothing for a while (a long pass, a verifier) still shows its time
/// moving and is never silent for seconds. No thread when bars are not
/// drawn.
class ProgressTicker {
public:
  explicit ProgressTicker(Progress &bar);
  ~ProgressTicker();
  ProgressTicker(const ProgressTicker &) = delete;
  ProgressTicker &operator=(const ProgressTicker &) = delete;

private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_PROGRESS_H
