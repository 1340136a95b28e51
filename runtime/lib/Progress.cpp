//===- Progress.cpp - A progress bar on the terminal ----------------------===//
#include "loom/Runtime/Progress.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace loom::rt {

bool Progress::enabled() {
  static const bool on = isatty(2) && !std::getenv("LOOM_NO_PROGRESS");
  return on;
}

Progress::Progress(std::string label, int64_t total)
    : label_(std::move(label)), total_(std::max<int64_t>(0, total)),
      start_(std::chrono::steady_clock::now()), lastDraw_(start_) {}

Progress::~Progress() { finish(); }

void Progress::update(int64_t done, const std::string &detail) {
  done_ = std::max<int64_t>(0, done);
  detail_ = detail;
  draw(false);
}

void Progress::draw(bool force) {
  if (!enabled() || finished_)
    return;
  auto now = std::chrono::steady_clock::now();
  double elapsed = std::chrono::duration<double>(now - start_).count();
  // Nothing for quick work (LOOM_PROGRESS_DELAY seconds, default 0.5);
  // then at most ten redraws a second.
  static const double delay = [] {
    const char *v = std::getenv("LOOM_PROGRESS_DELAY");
    return v ? std::atof(v) : 0.5;
  }();
  if (elapsed < delay ||
      (!force && drawn_ &&
       std::chrono::duration<double>(now - lastDraw_).count() <
           std::min(0.1, delay)))
    return;
  lastDraw_ = now;
  std::string line = label_;
  if (total_ > 0) {
    const int width = 30;
    double f = std::min(1.0, double(done_) / double(total_));
    int filled = static_cast<int>(f * width);
    line += " [" + std::string(static_cast<size_t>(filled), '#') +
            std::string(static_cast<size_t>(width - filled), '.') + "] ";
    char pct[64];
    std::snprintf(pct, sizeof pct, "%3d%% (%lld/%lld)",
                  static_cast<int>(f * 100), static_cast<long long>(done_),
                  static_cast<long long>(total_));
    line += pct;
  }
  if (!detail_.empty())
    line += " " + detail_;
  char secs[32];
  std::snprintf(secs, sizeof secs, "  %.1f s", elapsed);
  line += secs;
  if (line.size() > 150)
    line = line.substr(0, 147) + "...";
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (finished_)
    return;
  finished_ = true;
  if (drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
}

} // namespace loom::rt
