// Slurm executor figures on a real local cluster of 64 logical nodes x 8 fake GPUs
// (scripts/slurm_up.sh, brought up per benchmark): release-to-running latency (serve hands an
// attempt to Slurm, journalled as its launch, until the job's first output, its own wall-clock
// stamp) p50/p99 for jobs arriving one at a time, and a burst of 500 one-GPU jobs (1 s of
// work each) submitted at once: jobs/s from the first submission to all running and to all
// finished. The machine's cores and load go in the header (Slurm and serve share them); each
// benchmark's time is its measured phase. TIRESIAS_BENCH_KEEP=1 keeps serve's directory
// (serve.out; with TIRESIAS_SLURM_TRACE=1 it times each batch of Slurm commands). Skips with
// the reason without root or the Slurm packages.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <fstream>
#include <thread>

#include "serve_process.h"
#include "slurm_cluster.h"
#include "slurm_workload.h"

namespace tiresias {
namespace {

namespace fs = std::filesystem;
using testing::Quantile;
using testing::ServeProcess;
using testing::SlurmCluster;

constexpr int kNodes = 64, kGpusPerNode = 8;

double Load1() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  in >> load;
  return load;
}

const bool kContext = [] {
  std::ifstream in("/proc/loadavg");
  std::string load;
  std::getline(in, load);
  benchmark::AddCustomContext("cores", std::to_string(std::thread::hardware_concurrency()));
  benchmark::AddCustomContext("loadavg", load);
  return true;
}();

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A cluster, a serve on it (fifo: every job starts at once on an idle cluster) in a fresh
// directory; the reason in `why` when there is none.
struct Bed {
  explicit Bed(const std::string& name) {
    if (why = SlurmCluster::Missing(); !why.empty()) return;
    dir = fs::temp_directory_path() / fmt::format("tsb_{}_{}", name, getpid());
    fs::remove_all(dir);
    fs::create_directories(dir);
    cluster = std::make_unique<SlurmCluster>(kNodes, kGpusPerNode);
    if (!cluster->up()) {
      why = "could not bring up Slurm: " + cluster->error();
      return;
    }
    serve = std::make_unique<ServeProcess>(
        dir,
        std::vector<std::string>{"--executor", "slurm", "--partition", "gpu", "--policy", "fifo"});
    serve->Start();
  }
  ~Bed() {
    serve.reset();
    cluster.reset();
    std::error_code ec;
    if (!std::getenv("TIRESIAS_BENCH_KEEP")) fs::remove_all(dir, ec);
  }
  int64_t Submit(const ApiClient& c, int64_t work_ms) {
    auto r = c.PostJson("/v1/jobs", {{"argv", testing::SleepJobArgv(work_ms)}});
    return r.ok() ? (*r)["id"].get<int64_t>() : -1;
  }
  // The start stamp of a job's first attempt (0: not started yet).
  int64_t Started(int64_t id) const {
    auto s = testing::StartStamps(
        testing::ReadAll(dir / "tiresias-jobs" / std::to_string(id) / "output.log"));
    auto it = s.find(0);
    return it == s.end() ? 0 : it->second;
  }

  std::string why;
  fs::path dir;
  std::unique_ptr<SlurmCluster> cluster;
  std::unique_ptr<ServeProcess> serve;
};

void BM_SlurmReleaseToRunning(benchmark::State& state) {
  for (auto _ : state) {
    state.counters["load1_before"] = Load1();
    Bed bed("latency");
    if (!bed.why.empty()) {
      state.SkipWithError(bed.why.c_str());
      return;
    }
    const ApiClient c = bed.serve->Client();
    // 60 jobs of 2 s, one every 250 ms: Slurm is never idle, never swamped.
    const int64_t t0 = WallMs();
    std::vector<int64_t> ids;
    for (int k = 0; k < 60; ++k) {
      ids.push_back(bed.Submit(c, 2000));
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    const bool all = testing::WaitFor(
        [&] {
          for (int64_t id : ids) {
            if (bed.Started(id) == 0) return false;
          }
          return true;
        },
        std::chrono::seconds(120));
    state.SetIterationTime((WallMs() - t0) / 1000.0);
    auto events = testing::AllEvents(c);
    if (!all || !events.ok()) {
      state.SkipWithError("not every job started within 2 minutes");
      return;
    }
    std::vector<double> release_ms, submit_ms;
    std::map<int64_t, int64_t> submitted;
    for (const auto& e : *events) {
      if (e["kind"] == "submit") submitted[e["job"]] = e["time_ms"];
      if (e["kind"] != "launch" || e["detail"]["attempt"] != 0) continue;
      const int64_t id = e["job"], launched = e["time_ms"];
      release_ms.push_back(static_cast<double>(bed.Started(id) - launched));
      submit_ms.push_back(static_cast<double>(bed.Started(id) - submitted[id]));
    }
    state.counters["jobs"] = static_cast<double>(release_ms.size());
    state.counters["release_p50_ms"] = Quantile(release_ms, 0.5);
    state.counters["release_p99_ms"] = Quantile(release_ms, 0.99);
    state.counters["submit_p50_ms"] = Quantile(submit_ms, 0.5);
    state.counters["submit_p99_ms"] = Quantile(submit_ms, 0.99);
  }
}
BENCHMARK(BM_SlurmReleaseToRunning)->Iterations(1)->Unit(benchmark::kSecond)->UseManualTime();

void BM_SlurmBurst500(benchmark::State& state) {
  for (auto _ : state) {
    state.counters["load1_before"] = Load1();
    Bed bed("burst");
    if (!bed.why.empty()) {
      state.SkipWithError(bed.why.c_str());
      return;
    }
    constexpr int kJobs = 500, kClients = 4;
    std::vector<std::vector<int64_t>> ids(kClients);
    const int64_t t0 = WallMs();
    std::vector<std::thread> clients;
    for (int t = 0; t < kClients; ++t) {
      clients.emplace_back([&, t] {
        const ApiClient c = bed.serve->Client();
        for (int k = t; k < kJobs; k += kClients) ids[t].push_back(bed.Submit(c, 1000));
      });
    }
    for (auto& th : clients) th.join();
    const int64_t submitted = WallMs();
    const ApiClient c = bed.serve->Client();
    int64_t all_running = 0, all_finished = 0;
    const bool done = testing::WaitFor(
        [&] {
          auto active = c.GetJson("/v1/jobs?active=1&limit=1");
          if (!active.ok() || !active->empty()) return false;
          all_finished = WallMs();
          return true;
        },
        std::chrono::seconds(300));
    int64_t last_start = 0;
    int started = 0;
    for (const auto& v : ids) {
      for (int64_t id : v) {
        if (const int64_t s = bed.Started(id)) {
          last_start = std::max(last_start, s);
          ++started;
        }
      }
    }
    if (!done || started < kJobs) {
      state.SkipWithError(
          fmt::format("{} of {} jobs started, all ended: {}", started, kJobs, done).c_str());
      return;
    }
    all_running = last_start;
    state.counters["submit_s"] = (submitted - t0) / 1000.0;
    state.counters["all_running_s"] = (all_running - t0) / 1000.0;
    state.counters["all_finished_s"] = (all_finished - t0) / 1000.0;
    state.counters["started_per_s"] = kJobs * 1000.0 / static_cast<double>(all_running - t0);
    state.counters["finished_per_s"] = kJobs * 1000.0 / static_cast<double>(all_finished - t0);
    state.SetIterationTime((all_finished - t0) / 1000.0);
  }
}
BENCHMARK(BM_SlurmBurst500)->Iterations(1)->Unit(benchmark::kSecond)->UseManualTime();

}  // namespace
}  // namespace tiresias
