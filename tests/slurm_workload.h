// The workload of the Slurm scale test and benchmark: a `sleep` job that checkpoints (on the
// checkpoint signal it writes the milliseconds it has left to TIRESIAS_CHECKPOINT_DIR and
// exits; the next attempt sleeps only those), so a preempted job resumes where it stopped as
// the simulator assumes. Each attempt prints "tiresias-sleep start <wall ms> attempt <n>"
// first, the moment Slurm really started it (an attempt stopped before Slurm ran it prints
// nothing). Plus reading those stamps back, the whole journal through
// the API, and percentiles.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "cli/client.h"

namespace tiresias::testing {

// argv of a job that sleeps `ms` milliseconds of work in all, across its attempts.
inline std::vector<std::string> SleepJobArgv(int64_t ms) {
  static const std::string script =
      "f=$TIRESIAS_CHECKPOINT_DIR/left_ms; left=$(cat \"$f\" 2>/dev/null || echo \"$1\"); "
      "s=$(date +%s%3N); echo \"tiresias-sleep start $s attempt $TIRESIAS_ATTEMPT\"; "
      "trap 'echo $((left - $(date +%s%3N) + s)) > \"$f\"; exit 0' TERM; "
      "if [ \"$left\" -gt 0 ]; then "
      "sleep \"$((left / 1000)).$(printf %03d $((left % 1000)))\" & wait $!; fi";
  return {"sh", "-c", script, "tiresias-sleep", std::to_string(ms)};
}

// The wall-clock start stamps (ms) of a sleep job's attempts that Slurm ran, by attempt (the
// first, should Slurm have run one twice), from its log.
inline std::map<int64_t, int64_t> StartStamps(const std::string& log) {
  static const std::regex line(R"(tiresias-sleep start (\d+) attempt (\d+))");
  std::map<int64_t, int64_t> out;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), line); it != std::sregex_iterator();
       ++it) {
    out.emplace(std::stoll((*it)[2]), std::stoll((*it)[1]));
  }
  return out;
}

// Every journal event (ticks aside) through /v1/events, a page at a time.
inline StatusOr<nlohmann::json> AllEvents(const ApiClient& client) {
  nlohmann::json events = nlohmann::json::array();
  for (int64_t after = 0;;) {
    auto page = client.GetJson(fmt::format("/v1/events?after={}&limit=100000", after));
    if (!page.ok()) return page.status();
    if (page->empty()) return events;
    for (auto& e : *page) events.push_back(std::move(e));
    after = events.back()["seq"].get<int64_t>();
  }
}

// The q-quantile (0..1) of `v` by the nearest rank; 0 for an empty `v`.
inline double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t k =
      static_cast<size_t>(std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1) + 0.5);
  return v[k];
}

}  // namespace tiresias::testing
