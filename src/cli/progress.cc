// A progress line for long simulations (see progress.h).
#include "cli/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace tiresias {

Progress::Progress(size_t runs, size_t jobs)
    : jobs_(jobs), ended_(runs, 0), reached_(runs, 0), start_(std::chrono::steady_clock::now()) {
  const char* env = std::getenv("TIRESIAS_PROGRESS");
  const std::string mode = env ? env : "";
  every_update_ = mode == "1";
  on_ = mode != "0" && (every_update_ || isatty(STDERR_FILENO));
  last_ = start_;
}

Progress::~Progress() {
  if (printed_) std::fputs("\r\033[K", stderr);  // clear the line: the report follows
}

std::function<void(Time, size_t, size_t)> Progress::For(size_t run) {
  if (!on_) return nullptr;
  return [this, run](Time now, size_t ended, size_t) { Update(run, now, ended); };
}

std::string Progress::Line(Time reached, size_t ended, size_t total, double elapsed_s) {
  std::string line = fmt::format("simulated day {:.1f}, {} of {} jobs ended, {:.1f} s",
                                 ToSeconds(reached) / 86400.0, ended, total, elapsed_s);
  if (ended > 0 && ended < total) {
    line += fmt::format(", about {:.1f} s left", elapsed_s * static_cast<double>(total - ended) /
                                                     static_cast<double>(ended));
  }
  return line;
}

void Progress::Update(size_t run, Time now, size_t ended) {
  std::lock_guard lk(mu_);
  ended_[run] = ended;
  reached_[run] = now;
  const auto t = std::chrono::steady_clock::now();
  if (!every_update_ && t - last_ < std::chrono::milliseconds(250)) return;
  last_ = t;
  const size_t done = std::accumulate(ended_.begin(), ended_.end(), size_t{0});
  const Time slowest = *std::min_element(reached_.begin(), reached_.end());
  const double elapsed = std::chrono::duration<double>(t - start_).count();
  std::fputs(("\r\033[K" + Line(slowest, done, jobs_ * ended_.size(), elapsed)).c_str(), stderr);
  if (every_update_) std::fputc('\n', stderr);
  std::fflush(stderr);
  printed_ = true;
}

}  // namespace tiresias
