// cancel, hold, release, requeue [--hold] (see commands.h): one API call per job or array
// named, and what each did, in words or -o json.
#include <fmt/format.h>

#include <iostream>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/output.h"

namespace tiresias {

int ActOnJobs(const Common& o, const std::string& verb, const std::vector<std::string>& refs) {
  auto c = ApiClient::Connect(o.conn);
  if (!c.ok()) return Error(c.status());
  int rc = 0;
  nlohmann::json replies = nlohmann::json::array();  // -o json: one document, as promised
  for (const auto& ref : refs) {
    auto r = c->PostJson(fmt::format("/v1/jobs/{}/{}", ref, verb), nlohmann::json::object());
    if (!r.ok()) {
      rc = Error(r.status());
    } else if (o.json()) {
      replies.push_back(std::move(*r));
    } else {
      const size_t n = (*r)["jobs"].size();
      const size_t same = r->contains("unchanged") ? (*r)["unchanged"].size() : 0;
      const std::string done = verb == "cancel"        ? "cancelled"
                               : verb == "hold"        ? "held"
                               : verb == "requeuehold" ? "requeued and held"
                                                       : verb + "d";
      // A hold or release that changed nothing says so (as `scontrol release` of a job
      // that is not held).
      const std::string already = verb == "hold" ? "already held" : "not held";
      if (same > 0 && same == n) {
        std::cout << fmt::format("job {}{}: {}; nothing to {}\n", ref,
                                 n > 1 ? fmt::format(" ({} tasks)", n) : "", already, verb);
      } else if (n > 1) {  // the tasks it changed; those it found so already
        const size_t timed = r->contains("timed_out") ? (*r)["timed_out"].size() : 0;
        std::cout << fmt::format(
            "{} job {} ({} task{}{}{})\n", done, ref, n - same, n - same == 1 ? "" : "s",
            same > 0 ? fmt::format("; {} {}", same, already) : "",
            timed > 0 ? fmt::format("; {} past its time limit, ending timed out", timed) : "");
      } else if (r->contains("timed_out") && !(*r)["timed_out"].empty()) {
        // Cancelled in its time limit's grace: it ends as its time limit made it (sacct's
        // TIMEOUT), not cancelled.
        std::cout << fmt::format("job {}: past its time limit, stopping: it ends timed out\n", ref);
      } else {
        std::cout << fmt::format("{} job {}\n", done, ref);
      }
      if (r->contains("refused")) {  // some tasks were not: an admin's hold, a fault
        rc = Error(Status(StatusCode::kFailedPrecondition,
                          fmt::format("not all of job {}: {}", ref, Str(*r, "refused"))));
      }
    }
  }
  // One job: its reply; several: the list of them.
  if (o.json() && !replies.empty()) {
    std::cout << (refs.size() == 1 ? replies.front() : replies).dump() << "\n";
  }
  return rc;
}

}  // namespace tiresias
