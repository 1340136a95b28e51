//===- Progress.h - A progress bar on the terminal --------------*- C++ -*-===//
//
// For work that can take more than a couple of seconds (importing a large
// model, compiling, simulating, searching): one line on stderr, redrawn in
// place, "label [#######.......]  45% (9/20) detail  3.1 s". Quiet unless
// stderr is a terminal (and LOOM_NO_PROGRESS is unset), and silent for work
// that ends within half a second, so tests, pipes and quick runs see
// nothing (LOOM_PROGRESS_DELAY=SECONDS changes the half second; tests set
// it to 0). The line is erased when the work ends. With a total of 0 the
// bar shows elapsed time only (work of unknown size).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_PROGRESS_H
#define LOOM_RUNTIME_PROGRESS_H

#include <chrono>
#include <cstdint>
#include <string>

namespace loom::rt {

class Progress {
public:
  Progress(std::string label, int64_t total);
  ~Progress();
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  /// `done` of the total units are finished; `detail` names the current one.
  void update(int64_t done, const std::string &detail = "");
  /// Erases the line (also done by the destructor).
  void finish();

  /// True if bars are drawn at all in this process (stderr is a terminal
  /// and LOOM_NO_PROGRESS is not set).
  static bool enabled();

private:
  void draw(bool force);

  std::string label_, detail_;
  int64_t total_ = 0, done_ = 0;
  std::chrono::steady_clock::time_point start_, lastDraw_;
  bool drawn_ = false, finished_ = false;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_PROGRESS_H
