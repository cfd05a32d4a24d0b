// `tiresias explain JOB`: why a job waits (or where it runs), the jobs ahead of it, the
// policy's reasons and the forecast of its start and end; for an array's id, its tasks by
// state and the first that waits. One API call (GET /v1/jobs/REF/explain), or its JSON with
// -o json.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output.h"
#include "common/strings.h"
#include "store/job_record.h"

namespace tiresias {
namespace {

int ExplainJob(const Common& o, const std::string& ref) {
  int rc = 0;
  auto r = Fetch(o, "/v1/jobs/" + ref + "/explain", rc);
  if (!r) return rc;
  const auto& j = *r;
  std::string who = ref;
  if (j.contains("array")) {  // an array's id: its tasks, and the one explained
    const auto& a = j["array"];
    std::vector<std::string> states;
    for (const auto& [st, n] : a["by_state"].items()) {
      states.push_back(fmt::format("{} {}", n.get<int>(), st));
    }
    who = Str(a, "explained");
    std::cout << fmt::format(
        "array {}: {} tasks ({}); task {}, {}:\n", ref, a["tasks"].get<int>(), Join(states, ", "),
        who, a.value("explained_waits", false) ? "the first waiting" : "none waits");
  }
  std::cout << fmt::format("job {} is {}\n", who, Str(j, "state"));
  if (!Str(j, "where").empty()) std::cout << "  " << Str(j, "where") << "\n";
  if (j["rank"].get<int>() > 0) {
    std::cout << fmt::format("  rank {} among waiting jobs: {} waiting and {} running ahead\n",
                             j["rank"].get<int>(), j["waiting_ahead"].get<int>(),
                             j["running_ahead"].get<int>());
  }
  // Named as their users name them (an array's task as ARRAY_INDEX, not its internal id).
  auto named = [&](const char* what, int total) {
    const std::string refs = fmt::format("{}_ahead_refs", what);
    std::vector<std::string> ids = j.value(refs, std::vector<std::string>{});
    if (!j.contains(refs)) {  // an older serve: ids
      for (int64_t id : j.value(fmt::format("{}_ahead_ids", what), std::vector<int64_t>{})) {
        ids.push_back(std::to_string(id));
      }
    }
    if (ids.empty()) return;
    std::cout << fmt::format("  {} ahead: job {}{}\n", what, fmt::join(ids, ", job "),
                             total > static_cast<int>(ids.size()) ? ", ..." : "");
  };
  named("running", j["running_ahead"].get<int>());
  named("waiting", j["waiting_ahead"].get<int>());
  if (const auto s = ParseLiveState(Str(j, "state")); !s || !IsTerminal(*s)) {  // (it ended)
    std::cout << fmt::format("  needs {} GPUs; {} free now\n", j["gpus_needed"].get<int>(),
                             j["gpus_free"].get<int>());
  }
  if (j.contains("next_transition_in_s")) {
    std::cout << fmt::format("  next queue change (promotion/demotion) in {}\n",
                             Human(j["next_transition_in_s"].get<double>()));
  }
  for (const auto& reason : j["reasons"]) {
    std::cout << "  - " << EscapeControl(reason.get<std::string>()) << "\n";
  }
  if (j.contains("estimate") && j["estimate"].is_object()) PrintEstimate(j["estimate"]);
  return 0;
}

}  // namespace

void AddExplainCommand(CLI::App& app, int& rc) {
  static Common o;
  static std::string ref;
  auto* explain = app.add_subcommand("explain", "why is my job pending?");
  AddConnFlags(explain, o);
  AddOutputFlag(explain, o);
  explain->add_option("job", ref, "job id or ARRAY_INDEX")->required()->check(JobRef());
  explain->callback([&rc] { rc = ExplainJob(o, ref); });
}

}  // namespace tiresias
