// The API's listings: jobs (GET /v1/jobs, /v1/history) with their filters, and the journal's
// events (GET /v1/events), each as the caller may see them (see api_server.h).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

#include "api/api_reply.h"
#include "api/api_server.h"
#include "common/strings.h"
#include "core/event_log.h"

namespace tiresias {

using api::Echo;
using api::Fail;
using api::QueryBool;
using api::QueryInt;
using api::Reply;
using api::Visible;

HttpResponse ApiServer::List(const HttpRequest& req, const Caller& caller, bool history) {
  ListFilter f;
  if (auto it = req.query.find("state"); it != req.query.end()) {
    for (auto part : Split(it->second, ',')) {
      auto st = ParseLiveState(part);
      if (!st) {
        return Fail(400, fmt::format("unknown state {} (pending, starting, running, preempting, "
                                     "finished, failed, cancelled, timeout)",
                                     Echo(nlohmann::json(std::string(part)))));
      }
      f.states.insert(*st);
    }
  }
  if (history) {  // what has ended
    for (LiveState st : f.states) {
      if (!IsTerminal(st)) {  // it listed jobs still running as history
        return Fail(400, fmt::format("state {} has not ended: history lists finished, failed, "
                                     "cancelled and timeout jobs (GET /v1/jobs?state={} lists it)",
                                     ToString(st), ToString(st)));
      }
    }
    if (f.states.empty()) {
      f.states = {LiveState::kFinished, LiveState::kFailed, LiveState::kCancelled,
                  LiveState::kTimeout};
    }
  } else {
    auto active = QueryBool(req, "active", f.active_only);
    if (!active.ok()) return Fail(active.status());
    f.active_only = *active;
  }
  if (auto u = req.query.find("user"); u != req.query.end()) f.user = u->second;
  // me=1: the caller's own jobs, as the server knows the caller (`ls --me` sent the client's
  // login name, which a remote user's token need not match).
  auto me = QueryBool(req, "me", false);
  if (!me.ok()) return Fail(me.status());
  if (*me) {
    if (!f.user.empty() && f.user != caller.user) {
      return Fail(400, fmt::format("query me: you are {}, and user names {}", Echo(caller.user),
                                   Echo(f.user)));
    }
    f.user = caller.user;
  }
  if (auto v = req.query.find("vc"); v != req.query.end()) f.vc = v->second;
  if (req.query.contains("array")) {
    auto a = QueryInt(req, "array", 0);
    if (!a.ok()) return Fail(a.status());
    f.array = JobId(*a);
  }
  for (auto [key, field] :
       {std::pair{"since_ms", &f.ended_after}, std::pair{"until_ms", &f.ended_before}}) {
    if (!req.query.contains(key)) continue;
    auto v = QueryInt(req, key, 0);
    if (!v.ok()) return Fail(v.status());
    *field = *v;
  }
  auto offset = QueryInt(req, "offset", 0);
  if (!offset.ok()) return Fail(offset.status());
  auto limit = QueryInt(req, "limit", 0);
  if (!limit.ok()) return Fail(limit.status());
  f.offset = static_cast<size_t>(*offset);
  if (*limit > 0) f.limit = static_cast<size_t>(*limit);
  auto newest = QueryBool(req, "newest", false);
  if (!newest.ok()) return Fail(newest.status());
  f.newest = *newest;
  auto estimates = QueryBool(req, "estimates", false);
  if (!estimates.ok()) return Fail(estimates.status());
  size_t total = 0;
  nlohmann::json out = nlohmann::json::array();
  std::map<JobId, int64_t> starts;  // ?estimates=1: the likely start of jobs not started
  if (!history && *estimates) starts = sched_.StartEstimates();
  auto listed = sched_.List(f, &total);
  // A VC serve does not have, matching no job, is said, not an empty list (a tester's `ls --vc
  // visoin`); jobs kept from before a tenants change still match theirs (ls -a, history).
  if (!f.vc.empty() && total == 0) {
    std::vector<std::string> names;
    for (const auto& vc : sched_.Vcs().value("vcs", nlohmann::json::array())) {
      names.push_back(vc.value("name", ""));
    }
    if (std::find(names.begin(), names.end(), f.vc) == names.end()) {
      return Fail(400, names.empty() ? fmt::format("query vc: serve has no VCs (no --tenants), "
                                                   "and no job listed is in VC {}",
                                                   Echo(f.vc))
                                     : fmt::format("query vc: no VC {} (VCs: {})", Echo(f.vc),
                                                   Join(names, ", ")));
    }
  }
  for (auto& j : listed) {
    if (auto it = starts.find(JobId(j.value("id", int64_t{0}))); it != starts.end()) {
      j["start_estimate_ms"] = it->second;
    }
    out.push_back(Visible(std::move(j), caller));
  }
  HttpResponse r = Reply(200, out);
  r.headers.emplace_back("X-Total-Count", std::to_string(total));
  return r;
}

HttpResponse ApiServer::Events(const HttpRequest& req) {
  auto after = QueryInt(req, "after", 0);
  if (!after.ok()) return Fail(after.status());
  if (req.query.contains("after") && req.query.contains("latest")) {  // (after won, silently)
    return Fail(400, "query: after or latest, not both");
  }
  if (req.query.contains("limit") && req.query.contains("latest")) {  // (limit won, silently)
    return Fail(400, "query: latest=N gives the last N events; limit goes with after");
  }
  auto latest = QueryInt(req, "latest", 0);
  if (!latest.ok()) return Fail(latest.status());
  // latest=0 gave everything, as without latest; it is refused as limit=0 is.
  if (req.query.contains("latest") && (*latest < 1 || *latest > 100000)) {
    return Fail(400, "latest must be in 1..100000");
  }
  auto limit = QueryInt(req, "limit", *latest > 0 ? *latest : 1000);
  if (!limit.ok()) return Fail(limit.status());
  if (*limit < 1 || *limit > 100000) return Fail(400, "limit must be in 1..100000");
  // job=ID, or an array's task as its user names it (ARRAY_INDEX; it took ids alone), or
  // array=ID: every task's (`show` of an array asked once per task).
  std::optional<JobId> job;
  int64_t jobs = 1;
  if (auto a = req.query.find("array"); a != req.query.end()) {
    if (req.query.contains("job")) return Fail(400, "query: job or array, not both");
    auto tasks = sched_.Resolve(a->second, /*whole_array=*/true);
    if (!tasks.ok()) return Fail(tasks.status());
    job = tasks->front();  // (an array's tasks have ids in a row)
    jobs = tasks->back().value() - tasks->front().value() + 1;
  } else if (auto it = req.query.find("job");
             it != req.query.end() && it->second.find('_') != std::string::npos) {
    auto task = sched_.Resolve(it->second, /*whole_array=*/false);
    if (!task.ok()) return Fail(task.status());
    job = task->front();
  } else {
    auto id = QueryInt(req, "job", 0);
    if (!id.ok()) return Fail(id.status());
    // (job=0 listed every job's events; found by a tester.)
    if (req.query.contains("job") && *id == 0) return Fail(400, "query job: '0' is not a job id");
    if (*id > 0) job = JobId(*id);
  }
  auto ev = sched_.Events(*after, static_cast<int>(*limit), job, *latest > 0, jobs);
  return ev.ok() ? Reply(200, *ev) : Fail(ev.status());
}

}  // namespace tiresias
