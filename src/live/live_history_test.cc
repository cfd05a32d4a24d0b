// LiveScheduler with jobs that ended beside jobs that have not: the loop walks only the open
// ones (LiveScheduler::open_), and /metrics counts the ended ones apart; both must agree with
// the records, as the jobs end and after a restart loads them (tests/live_fixture.h's virtual
// clock).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <regex>

#include "live_fixture.h"

namespace tiresias {
namespace {

// The value of /metrics' gauge tiresias_jobs{state="STATE"} (-1 if absent).
int JobsIn(LiveScheduler& d, const std::string& state) {
  const std::string text = d.MetricsText();
  std::smatch m;
  const std::regex re("\ntiresias_jobs\\{state=\"" + state + "\"\\} ([0-9]+)");
  return std::regex_search(text, m, re) ? std::stoi(m[1]) : -1;
}

TEST_F(LiveSchedulerTest, EndedJobsAreCountedApartAndOpenOnesStillFollowedAcrossARestart) {
  policy_opts_ = {"thresholds=100000"};  // no demotion: nothing is preempted
  auto d = Start();
  auto submit = [&](const SubmitRequest& r, Duration work) {
    std::vector<JobId> ids;
    EXPECT_TRUE(d->Submit(r, &ids).ok());
    for (JobId id : ids) world_.work[id] = work;
    return ids;
  };
  const JobId ok = submit({.name = "ok", .gpus = 1, .argv = {"train"}}, 1'000)[0];
  const JobId gone = submit({.name = "gone", .gpus = 1, .argv = {"train"}, .hold = true}, 1'000)[0];
  // Three tasks, one at a time, 10 s each; and a job with a one-minute limit that runs longer.
  const std::vector<JobId> tasks =
      submit({.name = "arr", .gpus = 1, .argv = {"train"}, .array = "0-2%1"}, 10'000);
  const JobId slow =
      submit({.name = "slow", .gpus = 1, .argv = {"train"}, .time = "1"}, 3'600'000)[0];
  ASSERT_TRUE(d->Cancel(gone).ok());
  const int64_t t0 = world_.now;
  for (; world_.now < t0 + 5'000; world_.now += 500) d->Step();
  // ok finished; gone cancelled; task 0 and slow run; tasks 1, 2 wait for the array's slot.
  EXPECT_EQ((*d->Get(ok))["state"], "finished");
  EXPECT_EQ(JobsIn(*d, "finished"), 1);
  EXPECT_EQ(JobsIn(*d, "cancelled"), 1);
  EXPECT_EQ(JobsIn(*d, "running"), 2);
  EXPECT_EQ(JobsIn(*d, "pending"), 2);
  EXPECT_EQ(JobsIn(*d, "timeout"), 0);  // every state, at 0 too (timeout was absent until one)
  EXPECT_EQ(d->List({.active_only = true}).size(), 4u);
  EXPECT_EQ(d->List({.states = {LiveState::kRunning}}).size(), 2u);
  EXPECT_EQ(d->List({.states = {LiveState::kFinished, LiveState::kRunning}}).size(), 3u);
  EXPECT_EQ(*d->Resolve(fmt::format("{}_2", tasks[0].value()), false),
            std::vector<JobId>{tasks[2]});
  EXPECT_EQ(*d->Resolve(std::to_string(tasks[0].value()), true), tasks);
  EXPECT_FALSE(d->Resolve(fmt::format("{}_3", tasks[0].value()), false).ok());

  d.reset();
  d = Start();  // loads ended and open records alike
  EXPECT_EQ(JobsIn(*d, "finished"), 1);
  EXPECT_EQ(JobsIn(*d, "cancelled"), 1);
  EXPECT_EQ(JobsIn(*d, "running"), 2);
  EXPECT_EQ(d->List({.active_only = true, .limit = 1, .newest = true})[0]["id"], slow.value());
  // The loaded open jobs are still followed: the array's next tasks start as each ends, and
  // the slow job stops at its time limit (60 s of running, from t0).
  for (; world_.now < t0 + 65'000; world_.now += 500) d->Step();
  for (JobId t : tasks) EXPECT_EQ((*d->Get(t))["state"], "finished") << t.value();
  EXPECT_EQ((*d->Get(slow))["state"], "timeout");
  EXPECT_EQ(JobsIn(*d, "finished"), 4);
  EXPECT_EQ(JobsIn(*d, "timeout"), 1);
  EXPECT_EQ(JobsIn(*d, "running"), 0);
  EXPECT_EQ(JobsIn(*d, "pending"), 0);
  EXPECT_TRUE(d->List({.active_only = true}).empty());
}

// tiresias_journal_commit_seconds counts the commits that wrote something: the loop's steps
// with nothing to record (50 a second on an idle serve) were most of it (found by a tester).
TEST_F(LiveSchedulerTest, TheCommitHistogramCountsOnlyCommitsThatWrote) {
  auto d = Start();
  const auto commits = [&] {
    std::smatch m;
    const std::string text = d->MetricsText();
    const std::regex re("\ntiresias_journal_commit_seconds_count ([0-9]+)");
    return std::regex_search(text, m, re) ? std::stoi(m[1]) : -1;
  };
  d->Step();
  const int before = commits();
  for (int i = 0; i < 50; ++i, world_.now += 20) d->Step();  // idle: nothing to write
  EXPECT_EQ(commits(), before);
  const JobId a = *d->Submit({.name = "a", .gpus = 1, .argv = {"train"}});
  world_.work[a] = 60'000;
  d->Step();  // starts it: written
  EXPECT_EQ(commits(), before + 1);
}

}  // namespace
}  // namespace tiresias
