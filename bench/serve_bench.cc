// Live-scheduler figures: submit-to-start latency on an idle cluster (server-side, from the
// journal's submit and launch times, and as a client sees it by polling), and 1,000
// submissions through the REST API from 4 client threads, checking that none is lost.
// Starts a real `tiresias serve` with emulated GPUs in a temporary directory.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>

#include "serve_process.h"

namespace tiresias {
namespace {

namespace fs = std::filesystem;
using testing::ServeProcess;

fs::path BenchDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / fmt::format("tiresias_bench_{}_{}", name, getpid());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void BM_SubmitToStartIdle(benchmark::State& state) {
  const fs::path dir = BenchDir("latency");
  ServeProcess serve(dir, {"--gpus", "1", "--policy", "fifo"});
  serve.Start();
  const ApiClient c = serve.Client();
  std::vector<double> server_ms, client_ms;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = c.PostJson("/v1/jobs", {{"argv", {"true"}}, {"name", "ping"}});
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      break;
    }
    const int64_t id = (*r)["id"];
    nlohmann::json job;
    do {  // until the server reports it started
      job = *c.GetJson(fmt::format("/v1/jobs/{}", id));
    } while (job["first_start_ms"].is_null());
    client_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    server_ms.push_back(job["first_start_ms"].get<double>() - job["submitted_at_ms"].get<double>());
    // Let it finish so the next submission finds the cluster idle again.
    while (!c.GetJson(fmt::format("/v1/jobs/{}", id))->at("end_ms").is_number()) {
    }
  }
  auto max_of = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
  auto mean_of = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
  };
  if (!client_ms.empty()) {
    state.counters["server_mean_ms"] = mean_of(server_ms);
    state.counters["server_max_ms"] = max_of(server_ms);
    state.counters["client_mean_ms"] = mean_of(client_ms);
    state.counters["client_max_ms"] = max_of(client_ms);
  }
  serve.Stop(SIGTERM);
  fs::remove_all(dir);
}
BENCHMARK(BM_SubmitToStartIdle)->Iterations(30)->Unit(benchmark::kMillisecond);

void BM_Submit1000(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    const fs::path dir = BenchDir("submit");
    ServeProcess serve(dir, {"--gpus", "4", "--policy", "dlas"});
    serve.Start();
    std::mutex mu;
    std::set<int64_t> acked;
    std::atomic<int> errors = 0;
    state.ResumeTiming();
    const int64_t t0 = NowMs();
    std::vector<std::thread> clients;
    for (int t = 0; t < 4; ++t) {
      clients.emplace_back([&, t] {
        const ApiClient c = serve.Client();
        for (int i = 0; i < 250; ++i) {
          auto r = c.PostJson("/v1/jobs", {{"argv", {"true"}},
                                           {"gpus", 1 + (i + t) % 2},
                                           {"name", fmt::format("b{}-{}", t, i)}});
          if (!r.ok()) {
            ++errors;
            continue;
          }
          std::lock_guard lk(mu);
          acked.insert((*r)["id"].get<int64_t>());
        }
      });
    }
    for (auto& th : clients) th.join();
    const int64_t took = NowMs() - t0;
    state.PauseTiming();
    const auto listed = serve.Client().GetJson("/v1/jobs");
    size_t found = 0;
    if (listed.ok()) {
      for (const auto& j : *listed) found += acked.count(j["id"].get<int64_t>());
    }
    state.counters["submissions"] = static_cast<double>(acked.size());
    state.counters["errors"] = errors.load();
    state.counters["lost"] = static_cast<double>(acked.size() - found);
    state.counters["seconds"] = took / 1000.0;
    state.counters["per_second"] = 1000.0 * static_cast<double>(acked.size()) / took;
    serve.Stop(SIGTERM);
    fs::remove_all(dir);
    state.ResumeTiming();
  }
}
BENCHMARK(BM_Submit1000)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tiresias
