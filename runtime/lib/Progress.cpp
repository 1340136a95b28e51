//===- Progress.cpp - A progress bar on the terminal ----------------------===//
#include "loom/Runtime/Progress.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <vector>

namespace loom::rt {

namespace {

/// The live bars, oldest first, with the thread that made each: step()
/// goes to the newest of its own thread's (a pass runs on the thread that
/// runs its pass manager), else to the newest of all.
struct LiveBars {
  std::mutex mutex;
  std::vector<std::pair<Progress *, std::thread::id>> bars;
};
LiveBars &liveBars() {
  static LiveBars live;
  return live;
}

/// Read at each event, so a test can set it at any time.
const char *logPath() { return std::getenv("LOOM_PROGRESS_LOG"); }

/// "12 s", "3.1 s" or "2 min".
std::string duration(double seconds) {
  char buf[32];
  if (seconds < 10)
    std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  else if (seconds < 120)
    std::snprintf(buf, sizeof buf, "%.0f s", seconds);
  else
    std::snprintf(buf, sizeof buf, "%.0f min", seconds / 60);
  return buf;
}

} // namespace

bool Progress::enabled() {
  static const bool on = isatty(2) && !std::getenv("LOOM_NO_PROGRESS");
  return on;
}

Progress::Progress(std::string label, int64_t total)
    : label_(std::move(label)), total_(std::max<int64_t>(0, total)),
      start_(std::chrono::steady_clock::now()), lastDraw_(start_),
      stepStart_(start_) {
  std::lock_guard<std::mutex> lock(liveBars().mutex);
  liveBars().bars.emplace_back(this, std::this_thread::get_id());
}

Progress::~Progress() {
  {
    std::lock_guard<std::mutex> lock(liveBars().mutex);
    auto &bars = liveBars().bars;
    bars.erase(std::remove_if(bars.begin(), bars.end(),
                              [this](const auto &b) { return b.first == this; }),
               bars.end());
  }
  finish();
}

void Progress::update(int64_t done, const std::string &detail) {
  std::lock_guard<std::mutex> lock(mutex_);
  done_ = std::max<int64_t>(0, done);
  if (detail != detail_) {
    stepDone_ = stepTotal_ = 0;
    stepWhat_.clear();
    stepStart_ = std::chrono::steady_clock::now();
  }
  detail_ = detail;
  log(std::to_string(done_) + "/" + std::to_string(total_) +
      (detail_.empty() ? "" : " " + detail_));
  draw(false);
}

void Progress::tick() {
  std::lock_guard<std::mutex> lock(mutex_);
  draw(false);
}

void Progress::step(int64_t done, int64_t total, const std::string &what) {
  std::lock_guard<std::mutex> lock(liveBars().mutex);
  auto &bars = liveBars().bars;
  if (bars.empty())
    return;
  Progress *bar = bars.back().first;
  for (auto it = bars.rbegin(); it != bars.rend(); ++it)
    if (it->second == std::this_thread::get_id()) {
      bar = it->first;
      break;
    }
  std::lock_guard<std::mutex> barLock(bar->mutex_);
  if (what != bar->stepWhat_ || total != bar->stepTotal_ ||
      done < bar->stepDone_)
    bar->stepStart_ = std::chrono::steady_clock::now();
  bar->stepDone_ = std::clamp<int64_t>(done, 0, std::max<int64_t>(0, total));
  bar->stepTotal_ = std::max<int64_t>(0, total);
  bar->stepWhat_ = what;
  bar->log("step " + std::to_string(bar->stepDone_) + "/" +
           std::to_string(bar->stepTotal_) + " " + what);
  bar->draw(false);
}

void Progress::log(const std::string &event) {
  if (!logPath())
    return;
  if (FILE *f = std::fopen(logPath(), "a")) {
    std::fprintf(f, "%s: %s\n", label_.c_str(), event.c_str());
    std::fclose(f);
  }
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
  // The time left: of the current unit's steps when they are reported,
  // else of the units, at the rate so far.
  double left = -1;
  if (stepTotal_ > 0) {
    char steps[96];
    std::snprintf(steps, sizeof steps, "%s%s %lld/%lld",
                  detail_.empty() ? " " : ": ", stepWhat_.c_str(),
                  static_cast<long long>(stepDone_),
                  static_cast<long long>(stepTotal_));
    line += steps;
    double spent = std::chrono::duration<double>(now - stepStart_).count();
    if (stepDone_ > 0 && stepDone_ < stepTotal_)
      left = spent * double(stepTotal_ - stepDone_) / double(stepDone_);
  } else if (total_ > 0 && done_ > 0 && done_ < total_) {
    left = elapsed * double(total_ - done_) / double(done_);
  }
  // The times stay whole when the line is too long: the detail is cut.
  std::string times = "  " + duration(elapsed);
  if (left >= 0)
    times += ", ~" + duration(left) + " left";
  if (line.size() + times.size() > 150)
    line = line.substr(0, 150 - times.size() - 3) + "...";
  line += times;
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_)
    return;
  finished_ = true;
  if (drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
}

ProgressTicker::ProgressTicker(Progress &bar) {
  if (!Progress::enabled())
    return;
  thread_ = std::thread([this, &bar] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(250),
                           [this] { return done_; }))
      bar.tick();
  });
}

ProgressTicker::~ProgressTicker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

} // namespace loom::rt
