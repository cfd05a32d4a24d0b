// The live scheduler's loop with a long history: what a step, a job's end and a /metrics
// scrape cost when `serve` has already run thousands of jobs (their records stay, for
// `history`). Drives LiveScheduler in-process on a virtual clock with an executor whose
// processes exist only in this file (no fork), and a real SQLite state in a temporary
// directory; the history is built through Submit and Step as serve would.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <chrono>
#include <deque>
#include <filesystem>

#include "live/live_scheduler.h"

namespace tiresias {
namespace {

namespace fs = std::filesystem;

// Processes that run until the virtual clock reaches their end, and stop at once on a signal.
class InstantRunner : public Executor {
 public:
  explicit InstantRunner(const int64_t& now) : now_(now) {}
  // How long the next launches run (virtual ms).
  Duration run_ms = 1;

  StatusOr<Launched> Launch(const LaunchSpec& s) override {
    const int pid = next_pid_++;
    procs_[pid] = {s.job, s.attempt, now_ + run_ms};
    return Launched{.ref = {.pid = pid, .start_ticks = pid}, .visible_devices = ""};
  }
  Status Signal(const ProcessRef& r, int sig) override {
    auto it = procs_.find(r.pid);
    if (it == procs_.end()) return NotFound("gone");
    it->second.end = now_;
    it->second.sig = sig;
    return Status::Ok();
  }
  bool Adopt(JobId, int, const ProcessRef&, const std::string&) override { return false; }
  std::optional<ExitInfo> ReadExit(JobId, int, const std::string&) override { return std::nullopt; }
  std::optional<ProcessRef> FindLaunched(JobId, int, const std::string&) override {
    return std::nullopt;
  }
  std::vector<ExitInfo> Poll() override {
    std::vector<ExitInfo> out;
    for (auto it = procs_.begin(); it != procs_.end();) {
      if (it->second.end > now_) {
        ++it;
        continue;
      }
      out.push_back({.job = it->second.job,
                     .attempt = it->second.attempt,
                     .exit_code = it->second.sig ? -1 : 0,
                     .signal = it->second.sig});
      it = procs_.erase(it);
    }
    return out;
  }

 private:
  struct P {
    JobId job;
    int attempt;
    int64_t end;
    int sig = 0;
  };
  const int64_t& now_;
  std::map<int, P> procs_;
  int next_pid_ = 100;
};

// serve on 8 GPUs (dlas) that has run `history` one-GPU jobs to their end, then runs 8 jobs
// with a time limit and has 8 more waiting.
struct LiveWithHistory {
  fs::path dir;
  int64_t now = 1'000'000;
  InstantRunner* runner = nullptr;
  std::unique_ptr<LiveScheduler> d;
  std::deque<JobId> live_jobs;  // submitted after the history, oldest first (8 run)

  explicit LiveWithHistory(int history) {
    dir = fs::temp_directory_path() / fmt::format("tiresias_bench_live_{}", getpid());
    fs::remove_all(dir);
    fs::create_directories(dir);
    Open();
    for (int done = 0; done < history; done += 8) {
      for (int i = 0; i < 8; ++i) Submit("h", "");
      Settle();
    }
    runner->run_ms = Seconds(3600);
    for (int i = 0; i < 16; ++i) live_jobs.push_back(Submit("live", "120"));
    Settle();
  }
  ~LiveWithHistory() {
    d.reset();
    fs::remove_all(dir);
  }
  // serve's start on the state directory (made on the first).
  void Open() {
    ServeConfig c;
    c.state_dir = dir.string();
    c.gpu_devices = {"0", "1", "2", "3", "4", "5", "6", "7"};
    c.launch_probe_ms = 0;
    auto store = Store::Open((dir / "tiresias.db").string(), now);
    auto r = std::make_unique<InstantRunner>(now);
    runner = r.get();
    d = std::make_unique<LiveScheduler>(c, std::move(*store), std::move(r), [this] { return now; });
    (void)d->Open();
  }
  // `time`: an sbatch --time ("" for none).
  JobId Submit(const std::string& name, const std::string& time) {
    return *d->Submit({.name = name, .gpus = 1, .argv = {"train"}, .time = time});
  }
  // A few steps, 1 ms apart: a job submitted before starts, and one of 1 ms ends.
  void Settle() {
    for (int i = 0; i < 4; ++i) {
      d->Step();
      ++now;
    }
  }
};

double MicrosPer(std::chrono::steady_clock::time_point t0, int n) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
         n;
}

void BM_LiveHistory(benchmark::State& state) {
  const int history = static_cast<int>(state.range(0));
  LiveWithHistory live(history);
  for (auto _ : state) {
    // A step with nothing to do (serve steps every 20 ms at most).
    auto t0 = std::chrono::steady_clock::now();
    constexpr int kIdle = 2000;
    for (int i = 0; i < kIdle; ++i) {
      ++live.now;
      live.d->Step();
    }
    state.counters["idle_step_us"] = MicrosPer(t0, kIdle);
    // A running job cancelled, another submitted: both steps that follow.
    constexpr int kTurns = 200;
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kTurns; ++i) {
      (void)live.d->Cancel(live.live_jobs.front());  // the oldest: it runs
      live.live_jobs.pop_front();
      live.live_jobs.push_back(live.Submit("turn", "120"));
      ++live.now;
      live.d->Step();
      ++live.now;
      live.d->Step();
    }
    state.counters["end_and_submit_us"] = MicrosPer(t0, kTurns);
    constexpr int kScrapes = 50;
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kScrapes; ++i) benchmark::DoNotOptimize(live.d->MetricsText());
    state.counters["metrics_us"] = MicrosPer(t0, kScrapes);
    // `explain` of a waiting job, with its forecast (forward simulations of a copy of the core).
    constexpr int kEstimates = 5;
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kEstimates; ++i) {
      benchmark::DoNotOptimize(live.d->Estimate(live.live_jobs.back()));
    }
    state.counters["estimate_ms"] = MicrosPer(t0, kEstimates) / 1000;
    // A restart of serve (an upgrade, a crash): the state is loaded and the journal replayed
    // into a fresh core before the first step.
    live.d.reset();
    t0 = std::chrono::steady_clock::now();
    live.Open();
    state.counters["restart_ms"] = MicrosPer(t0, 1) / 1000;
  }
  state.counters["history_jobs"] = history;
  state.counters["open_jobs"] = static_cast<double>(live.d->List({.active_only = true}).size());
}
BENCHMARK(BM_LiveHistory)
    ->Arg(1000)
    ->Arg(20000)
    ->Arg(100000)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tiresias
