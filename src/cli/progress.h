// A progress line for long simulations (`sim`, `compare`): simulated time reached, jobs ended,
// wall time and an estimate of what is left, rewritten in place on stderr. Shown only when
// stderr is a terminal; TIRESIAS_PROGRESS=0 turns it off, =1 forces it (every update, for
// tests). The simulator only reports (SimConfig::progress); the clock is read here.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "common/time.h"

namespace tiresias {

class Progress {
 public:
  // `runs` simulations of `jobs` jobs each, run concurrently.
  Progress(size_t runs, size_t jobs);
  ~Progress();
  bool on() const { return on_; }
  // The callback for run i (SimConfig::progress); null when progress is off.
  std::function<void(Time, size_t, size_t)> For(size_t run);
  // The line as it would be printed (for tests): day reached, jobs ended, elapsed, ETA.
  static std::string Line(Time reached, size_t ended, size_t total, double elapsed_s);

 private:
  void Update(size_t run, Time now, size_t ended);
  bool on_ = false, every_update_ = false, printed_ = false;
  size_t jobs_;
  std::mutex mu_;
  std::vector<size_t> ended_;
  std::vector<Time> reached_;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace tiresias
