// Scheduler::Forget: a job that ended leaves the core and its slot is reused, and the core's
// decisions are the same as when it keeps every job (the simulator forgets ended jobs so that
// a million-job replay holds only the jobs in the system).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <queue>
#include <tuple>

#include "core/scheduler.h"
#include "placement/registry.h"
#include "policy/registry.h"
#include "test_files.h"
#include "trace/synthetic.h"

namespace tiresias {
namespace {

// The policies' default options, with a GPU-time history from memory (dlas and gittins read
// one; the default file is in ../shared, which CI may not have).
std::unique_ptr<Scheduler> Core(const std::string& policy, int nodes = 2) {
  static const MemoryHistory history(
      {Seconds(60), Seconds(600), Seconds(3600), Seconds(7200), Seconds(36000), Seconds(360000)});
  auto p = MakeOrderingPolicy(policy, {}, history);
  auto pl = MakePlacementPolicy("count", {}, history);
  EXPECT_TRUE(p.ok() && pl.ok());
  return std::make_unique<Scheduler>(*Topology::Create(1, nodes, 4), std::move(*p), std::move(*pl));
}

// Plays the simulator over a core (completions, arrivals, then a pass); with `forget`, each
// job that finishes is forgotten at once. One line per start, preemption and finish, and one
// for the number of instants the core asked to be woken at (stale timers must not wake it).
std::vector<std::string> Drive(const std::string& policy, const std::vector<JobSpec>& jobs,
                               bool forget, size_t* slots) {
  auto s = Core(policy);
  using Done = std::tuple<Time, int64_t, int>;  // at, job, its start number
  std::priority_queue<Done, std::vector<Done>, std::greater<>> done;
  std::vector<std::string> log;
  size_t next = 0, wakeups = 0;
  while (true) {
    Time t = next < jobs.size() ? jobs[next].submit : kNever;
    if (!done.empty()) t = std::min(t, std::get<0>(done.top()));
    if (s->NextWakeup() <= t) ++wakeups;
    t = std::min(t, s->NextWakeup());
    if (t == kNever) break;
    while (!done.empty() && std::get<0>(done.top()) == t) {
      auto [at, id, start_no] = done.top();
      done.pop();
      const Job* j = s->Find(JobId(id));
      if (!j || !j->running() || j->starts != start_no) continue;  // preempted since
      log.push_back(fmt::format("{} finish {}", t, id));
      EXPECT_TRUE(s->Finish(JobId(id), t).ok());
      if (forget) {
        EXPECT_TRUE(s->Forget(JobId(id)).ok());
      }
    }
    for (; next < jobs.size() && jobs[next].submit == t; ++next) {
      EXPECT_TRUE(s->Submit(jobs[next], t).ok());
    }
    for (const Action& a : s->Schedule(t)) {
      log.push_back(fmt::format("{} {} {} {}", t, ToString(a.kind), a.job.value(), a.alloc.str()));
      if (a.kind != Action::Kind::kStart) continue;
      const Job* j = s->Find(a.job);
      done.emplace(a.progress_start + *j->spec.duration - j->work_done, a.job.value(), j->starts);
    }
  }
  log.push_back(fmt::format("{} wake-ups", wakeups));
  *slots = s->jobs().size();
  return log;
}

TEST(Forget, DecisionsAreTheSameAsWhenTheCoreKeepsEveryJob) {
  // 400 Philly-like jobs offered at 1.5x an 8-GPU cluster: queues form, dlas demotes running
  // jobs and promotes starved ones by timer (stale timers of forgotten jobs must stay stale in
  // the slots that are reused), the others preempt by their keys.
  const auto jobs =
      SyntheticPhillyLike({.jobs = 400, .seed = 7, .load = 1.5, .cluster_gpus = 8, .max_gpus = 8});
  for (const std::string policy : {"dlas", "gittins", "srtf", "las", "fifo"}) {
    size_t kept_slots = 0, forgot_slots = 0;
    const auto kept = Drive(policy, jobs, false, &kept_slots);
    const auto forgot = Drive(policy, jobs, true, &forgot_slots);
    EXPECT_EQ(kept, forgot) << policy;
    EXPECT_GE(kept.size(), 2 * jobs.size()) << policy;  // every job started and finished
    EXPECT_EQ(kept_slots, jobs.size()) << policy;
    EXPECT_LT(forgot_slots, jobs.size() * 3 / 4) << policy;  // slots were reused
  }
}

TEST(Forget, AForgottenJobIsUnknownAndOnlyAnEndedJobCanBeForgotten) {
  auto s = Core("dlas", 1);
  ASSERT_TRUE(s->Submit({.id = JobId(1), .gpus = 4, .submit = 0, .duration = 1000}, 0).ok());
  ASSERT_TRUE(s->Submit({.id = JobId(2), .gpus = 4, .submit = 0, .duration = 1000}, 0).ok());
  s->Schedule(0);  // 1 runs, 2 waits
  EXPECT_EQ(s->Forget(JobId(1)).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s->Forget(JobId(2)).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s->Forget(JobId(9)).code(), StatusCode::kNotFound);
  ASSERT_TRUE(s->Finish(JobId(1), 1000).ok());
  ASSERT_TRUE(s->Forget(JobId(1)).ok());
  EXPECT_EQ(s->Find(JobId(1)), nullptr);
  EXPECT_EQ(s->Finish(JobId(1), 1000).code(), StatusCode::kNotFound);
  // The id may come again (a new job), and it takes the freed slot.
  ASSERT_TRUE(s->Submit({.id = JobId(1), .gpus = 4, .submit = 1000, .duration = 500}, 1000).ok());
  EXPECT_EQ(s->jobs().size(), 2u);
  const auto actions = s->Schedule(1000);
  ASSERT_EQ(actions.size(), 1u);  // 2 starts on the GPUs 1 gave back; the new 1 waits
  EXPECT_EQ(actions[0].job, JobId(2));
  EXPECT_EQ(s->Find(JobId(1))->state, JobState::kPending);
}

}  // namespace
}  // namespace tiresias
