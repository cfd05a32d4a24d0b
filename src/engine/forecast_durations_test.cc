// Forecasts' durations (engine/forecast.h): where a job's duration is drawn from (finished jobs,
// its VC's, its VC's jobs of its size, the trace before a window, a prior) and the tails past
// what is known, pinned on cases worked out by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/forecast.h"
#include "forecast_fixture.h"

namespace tiresias {
namespace {

using forecast_fixture::Core;
using forecast_fixture::OneRunsOneWaits;
using forecast_fixture::Spec;

// In every quantile (p10, p50, p90): `running` ends at `running_end`, and `waiting` starts
// then and ends at `waiting_end`.
void ExpectRunsThenWaits(const Forecast& f, int64_t running, Time running_end, int64_t waiting,
                         Time waiting_end) {
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(f.jobs.at(JobId(running)).end[k], running_end);
    EXPECT_EQ(f.jobs.at(JobId(waiting)).start[k], running_end);
    EXPECT_EQ(f.jobs.at(JobId(waiting)).end[k], waiting_end);
  }
}

TEST(Forecast, UnknownDurationsAreDrawnFromFinishedJobsAboveWhatTheJobAttained) {
  // 1 GPU, dlas (one queue: nothing is preempted). 20 jobs of 100 s finish one after the other
  // (0..2000 s): the history is 20 x 100 GPU-s. Then R starts at 2000 and W waits. At 2050 R has
  // attained 50 GPU-s, so its total is drawn from the history above 50: 100 (every draw), and
  // it ends at 2100; W (attained 0) draws 100 s too and runs 2100..2200. (Every sample agrees:
  // the samples' spread, without the shipped margins, is a point.)
  auto core = Core("dlas", {"queues=1"}, 1);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(core->Submit(Spec(i, 1, 0, std::nullopt), 0).ok());
  }
  (void)core->Schedule(0);
  for (int i = 0; i < 20; ++i) {
    const Time end = Seconds(100) * (i + 1);
    ASSERT_TRUE(core->Finish(JobId(i), end).ok());
    (void)core->Schedule(end);
  }
  ASSERT_TRUE(core->Submit(Spec(100, 1, Seconds(2000), std::nullopt), Seconds(2000)).ok());
  ASSERT_TRUE(core->Submit(Spec(101, 1, Seconds(2000), std::nullopt), Seconds(2000)).ok());
  (void)core->Schedule(Seconds(2000));
  ASSERT_TRUE(core->Find(JobId(100))->running());
  auto f = ForecastJobs(*core, Seconds(2050), {.samples = 8, .margin = {0, 0}});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->history, 20u);
  ExpectRunsThenWaits(*f, 100, Seconds(2100), 101, Seconds(2200));
}

// Each VC's durations come from its own history once it has kMinGroupHistory (50) finished
// jobs. The history: 50 jobs of VC a of 100 GPU-s and 50 of VC b of 400 GPU-s. On 1 GPU (dlas,
// one queue), R (VC a) starts at 0 and W (VC b) waits: R's total is drawn from a's history
// only, 100 s in every sample, so W starts at 100; W draws from b's, 400 s, and ends at 500.
// (From everyone's history, half the draws would be the other VC's.)
TEST(Forecast, AVcsDurationsAreDrawnFromItsOwnHistory) {
  JobSpec r = Spec(1, 1, 0, std::nullopt), w = Spec(2, 1, 0, std::nullopt);
  r.vc = "a";
  w.vc = "b";
  auto core = OneRunsOneWaits(1, r, w);
  auto history = std::make_shared<std::vector<PastJob>>();
  for (int i = 0; i < 50; ++i) {
    history->push_back({.service = Seconds(100), .vc = "a"});
    history->push_back({.service = Seconds(400), .vc = "b"});
  }
  auto f = ForecastJobs(*core, 0, {.samples = 8, .margin = {0, 0}, .history = history});
  ASSERT_TRUE(f.ok()) << f.status().message();
  ExpectRunsThenWaits(*f, 1, Seconds(100), 2, Seconds(500));
}

// Within a VC, durations come from its jobs of the same size class (1, 2-4, 5-8, more GPUs)
// once those number kMinGroupHistory (50). The history of VC a: 50 one-GPU jobs of 100 GPU-s
// and 50 eight-GPU jobs of 8,000 GPU-s (1,000 s each). On 8 GPUs (dlas, one queue), R (1 GPU)
// runs from 0 and W (8 GPUs) waits for it: R draws 100 GPU-s in every sample and ends at
// 100 s, W starts then and draws 8,000 GPU-s, 1,000 s on its 8 GPUs: it ends at 1,100 s.
// (From the VC's history as a whole, half of R's draws would be 8,000 GPU-s: 8,000 s.)
TEST(Forecast, AJobsDurationIsDrawnFromItsVcsJobsOfItsSize) {
  JobSpec r = Spec(1, 1, 0, std::nullopt), w = Spec(2, 8, 0, std::nullopt);
  r.vc = w.vc = "a";
  auto core = OneRunsOneWaits(8, r, w);
  auto history = std::make_shared<std::vector<PastJob>>();
  for (int i = 0; i < 50; ++i) {
    history->push_back({.service = Seconds(100), .gpus = 1, .vc = "a"});
    history->push_back({.service = Seconds(8000), .gpus = 8, .vc = "a"});
  }
  auto f = ForecastJobs(*core, 0, {.samples = 64, .margin = {0, 0}, .history = history});
  ASSERT_TRUE(f.ok()) << f.status().message();
  ExpectRunsThenWaits(*f, 1, Seconds(100), 2, Seconds(1100));
  // V (VC a, 4 GPUs, alone on 4 GPUs from 0) has no group of its size (2-4 GPUs): it draws
  // from the VC's, 100 GPU-s (25 s on 4 GPUs) or 8,000 (2,000 s), about half and half over 64
  // samples (32 +- 4): p10 ends at 25 s, p90 at 2,000 s.
  auto alone = Core("dlas", {"queues=1"}, 4);
  JobSpec v = Spec(3, 4, 0, std::nullopt);
  v.vc = "a";
  ASSERT_TRUE(alone->Submit(v, 0).ok());
  (void)alone->Schedule(0);
  auto g = ForecastJobs(*alone, 0, {.samples = 64, .margin = {0, 0}, .history = history});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->jobs.at(JobId(3)).end[0], Seconds(25));
  EXPECT_EQ(g->jobs.at(JobId(3)).end[2], Seconds(2000));
  // Jobs of no VC have no size class: U (1 GPU, alone on 1 GPU) with the same history given
  // no VC draws from everyone's, 100 s or 8,000 s: p10 100 s, p90 8,000 s.
  for (auto& p : *history) p.vc.clear();
  auto one = Core("dlas", {"queues=1"}, 1);
  ASSERT_TRUE(one->Submit(Spec(4, 1, 0, std::nullopt), 0).ok());
  (void)one->Schedule(0);
  auto u = ForecastJobs(*one, 0, {.samples = 64, .margin = {0, 0}, .history = history});
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->jobs.at(JobId(4)).end[0], Seconds(100));
  EXPECT_EQ(u->jobs.at(JobId(4)).end[2], Seconds(8000));
}

TEST(Forecast, AnEarlierHistoryIsAddedToTheFinishedJobs) {
  // 1 GPU, fifo, nothing finished yet: A (unknown duration) runs from 0, B waits. Without a
  // history the durations come from the wide prior (kMinHistory); with 20 earlier jobs of
  // exactly 100 GPU-s, A's remaining service is drawn from them: it ends at 100 s in every
  // sample, and B starts then.
  auto core = Core("fifo", {}, 1);
  ASSERT_TRUE(core->Submit(Spec(1, 1, 0, std::nullopt), 0).ok());
  ASSERT_TRUE(core->Submit(Spec(2, 1, 0, std::nullopt), 0).ok());
  (void)core->Schedule(0);
  auto f = ForecastJobs(*core, 0, {.samples = 8, .use_given_durations = false});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->history, 0u);
  auto with = ForecastJobs(
      *core, 0,
      {.samples = 8,
       .use_given_durations = false,
       .margin = {0, 0},
       .history = std::make_shared<const std::vector<PastJob>>(20, PastJob{.service = 100'000})});
  ASSERT_TRUE(with.ok());
  EXPECT_EQ(with->history, 20u);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(with->jobs.at(JobId(2)).start[k], Seconds(100));
}

TEST(Forecast, PastJobsAreTakenAsRunningFromTheirSubmitOnTheWindowsClock) {
  // From 1000 s: A (2 GPUs, submitted at 0, 100 s): 200 GPU-s from -1000 s to -900 s. B (4
  // GPUs, at 900 s, 200 s): 800 GPU-s from -100 s to 100 s, still running at the window's
  // start. E (1 GPU, at 400 s, 600 s) ends exactly at it (0). C (submitted at 1000 s) and D
  // (no duration) are not history.
  std::vector<JobSpec> jobs = {Spec(1, 2, 0, Seconds(100)), Spec(2, 4, Seconds(900), Seconds(200)),
                               Spec(3, 1, Seconds(1000), Seconds(5)),
                               Spec(4, 1, Seconds(10), std::nullopt),
                               Spec(5, 1, Seconds(400), Seconds(600))};
  jobs[1].vc = "b";
  auto past = PastJobsBefore(jobs, Seconds(1000));
  ASSERT_EQ(past.size(), 3u);
  EXPECT_EQ(past[0].service, Seconds(200));
  EXPECT_EQ(past[0].submit, -Seconds(1000));
  EXPECT_EQ(past[0].end, -Seconds(900));
  EXPECT_EQ(past[1].service, Seconds(800));
  EXPECT_EQ(past[1].vc, "b");
  EXPECT_EQ(past[1].gpus, 4);
  EXPECT_EQ(past[1].submit, -Seconds(100));
  EXPECT_EQ(past[1].end, Seconds(100));
  EXPECT_EQ(past[2].service, Seconds(600));
  EXPECT_EQ(past[2].end, 0);
}

TEST(Forecast, APastJobStillRunningIsKnownByWhatItHasAttained) {
  // 1 GPU, fifo: A (unknown duration) starts at 0; its end is its drawn service. History: 20
  // jobs ended at 60 GPU-s and 20 that run from -600 s to 600 s (1,200 GPU-s), at 0 still
  // running with 600 GPU-s attained (A itself is censored at 0 and leaves the risk set first).
  // Kaplan-Meier: at 60 s, 20 of the 40 at risk end: S(60) = 0.5, and nothing is known to end
  // after it, so a draw below 0.5 lies past the last finished value, in the tail
  // P(S > s | S > 60) = 60 / s. A's end: 60 s with probability 0.5 (p10 exactly 60 s: 200
  // samples, 100 +- 7 of them, far from rank 20), else 60 s / v (v uniform): P(end > x) =
  // 0.5 x 60 / x, so p90 = 300 s; rank 180 of 200 lies in (120, 600) s unless more than 20 of
  // 200 fall beyond 600 s (mean 10 +- 3) or fewer than 20 beyond 120 s (mean 50 +- 6). Were
  // the 20 taken as finished with their 1,200 GPU-s, A's p90 would be 1,200 s exactly.
  auto core = Core("fifo", {}, 1);
  ASSERT_TRUE(core->Submit(Spec(1, 1, 0, std::nullopt), 0).ok());
  (void)core->Schedule(0);
  auto history = std::make_shared<std::vector<PastJob>>(20, PastJob{.service = Seconds(60)});
  history->insert(history->end(), 20,
                  PastJob{.service = Seconds(1200), .submit = -Seconds(600), .end = Seconds(600)});
  ForecastOptions o{
      .samples = 200, .use_given_durations = false, .margin = {0, 0}, .history = history};
  auto f = ForecastJobs(*core, 0, o);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->history, 20u);
  EXPECT_EQ(f->jobs.at(JobId(1)).end[0], Seconds(60));
  EXPECT_GT(f->jobs.at(JobId(1)).end[2], Seconds(120));
  EXPECT_LT(f->jobs.at(JobId(1)).end[2], Seconds(600));
  // At 700 s they have ended: 20 at 60 GPU-s and 20 at 1,200 are finished, and A (running
  // since 0, 700 s attained) ends at 1,200 s in every sample (everything that ran past 700 s
  // ended at 1,200).
  auto later = ForecastJobs(*core, Seconds(700), o);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->history, 40u);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(later->jobs.at(JobId(1)).end[k], Seconds(1200));
}

TEST(Forecast, BeforeAnyHistoryAJobThatRanADayIsGivenTheTailPastIt) {
  // 1 GPU, no history (the prior): A has run 22 h. Survival of running time s: log-uniform
  // from 1 min to 1 day with T = 1 / (1 + ln 1440) = 0.1209 of the jobs past the day, where
  // P(S > s) = T x 86400 / s. S(22 h) = 1 - (1 - T) ln(1320) / ln(1440) = 0.1314. A's end
  // is the s with S(s) = 0.1314 u: p10 (u = 0.9, 0.1183 < T, in the tail) 88,300 s = 24.5 h,
  // p50 159,000 s = 44.2 h, p90 795,000 s = 9.2 days. Over 1,000 samples: beyond 23.5 h fall
  // 940 +- 8 and beyond 26 h 849 +- 11 (p10, rank 100, between them); beyond 40 h 552 +- 16,
  // beyond 49 h 451 +- 16 (p50); beyond 6 days 153 +- 11, beyond 15 days 61 +- 8 (p90, rank
  // 900). (The prior before it had no job longer than a day: A would have ended within 2 h.)
  auto core = Core("fifo", {}, 1);
  ASSERT_TRUE(core->Submit(Spec(1, 1, 0, std::nullopt), 0).ok());
  (void)core->Schedule(0);
  const Time now = Seconds(22 * 3600);
  auto f = ForecastJobs(
      *core, now,
      {.samples = 1000, .use_given_durations = false, .arrival_window = 0, .margin = {0, 0}});
  ASSERT_TRUE(f.ok());
  const auto& end = f->jobs.at(JobId(1)).end;
  constexpr Duration h = Seconds(3600);
  EXPECT_GT(end[0], 23.5 * h);
  EXPECT_LT(end[0], 26 * h);
  EXPECT_GT(end[1], 40 * h);
  EXPECT_LT(end[1], 49 * h);
  EXPECT_GT(end[2], 6 * 24 * h);
  EXPECT_LT(end[2], 15 * 24 * h);
}

TEST(Forecast, PastTheLongestFinishedJobAJobLastsAsLongAgainAsItHas) {
  // 1 GPU, fifo: A (unknown duration) started at 0 and has run 100 s; every finished job
  // took 60 GPU-s, so its total service lies past the history: P(S > s | S > 100) = 100 / s,
  // S = 100 s / v, v uniform. Its end quantiles: p10 111 s, p50 200 s, p90 1000 s. With
  // 1,000 samples the p50 (rank 500) lies in (180, 220) s: beyond 180 s fall 556 +- 16, beyond
  // 220 s 455 +- 16; the p90 (rank 900) in (750, 1400) s: beyond 750 s 133 +- 11, beyond
  // 1400 s 71 +- 8. (The rule before it, twice the larger of attained and the last finished
  // value, gave 200 s at every quantile: no range where the history knows nothing.)
  auto core = Core("fifo", {}, 1);
  ASSERT_TRUE(core->Submit(Spec(1, 1, 0, std::nullopt), 0).ok());
  (void)core->Schedule(0);
  auto history = std::make_shared<std::vector<PastJob>>(20, PastJob{.service = Seconds(60)});
  auto f = ForecastJobs(*core, Seconds(100),
                        {.samples = 1000,
                         .use_given_durations = false,
                         .arrival_window = 0,
                         .margin = {0, 0},
                         .history = history});
  ASSERT_TRUE(f.ok());
  const auto& end = f->jobs.at(JobId(1)).end;
  EXPECT_GT(*end[0], Seconds(100));
  EXPECT_LT(*end[0], *end[1]);
  EXPECT_GT(end[1], Seconds(180));
  EXPECT_LT(end[1], Seconds(220));
  EXPECT_GT(end[2], Seconds(750));
  EXPECT_LT(end[2], Seconds(1400));
}

TEST(Forecast, WithAHalfLifeRecentJobsWeighMore) {
  // 1 GPU, fifo: A (unknown duration) starts at 0 and its end is its drawn service. History:
  // 10 jobs of 60 GPU-s submitted at 0 and 20 of 600 GPU-s submitted 3 h before. A itself is
  // censored at 0 attained, below every value: it leaves the risk set first.
  //   Unweighted Kaplan-Meier: P(S = 60 s) = 10 / 30 = 1/3, so A's p50 end is 600 s.
  //   Half-life 1 h: the old jobs weigh 2^-3 = 1/8 each, 20/8 = 2.5 in all against 10;
  //   P(S = 60 s) = 10 / 12.5 = 0.8, so A's p50 end is 60 s (p90 still 600 s: 0.2 > 0.1).
  // With 200 samples the draws of 60 s are Binomial(200, 1/3) (67 +- 7) and (200, 0.8)
  // (160 +- 6): the p50 and p90 (ranks 100 and 180) are far from their edges.
  auto core = Core("fifo", {}, 1);
  ASSERT_TRUE(core->Submit(Spec(1, 1, 0, std::nullopt), 0).ok());
  (void)core->Schedule(0);
  auto history =
      std::make_shared<std::vector<PastJob>>(10, PastJob{.service = Seconds(60), .submit = 0});
  history->insert(history->end(), 20,
                  PastJob{.service = Seconds(600), .submit = -Seconds(3 * 3600)});
  ForecastOptions o{
      .samples = 200, .use_given_durations = false, .margin = {0, 0}, .history = history};
  auto plain = ForecastJobs(*core, 0, o);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->jobs.at(JobId(1)).end[1], Seconds(600));
  o.half_life = Seconds(3600);
  auto recent = ForecastJobs(*core, 0, o);
  ASSERT_TRUE(recent.ok());
  EXPECT_EQ(recent->jobs.at(JobId(1)).end[0], Seconds(60));
  EXPECT_EQ(recent->jobs.at(JobId(1)).end[1], Seconds(60));
  EXPECT_EQ(recent->jobs.at(JobId(1)).end[2], Seconds(600));
}

TEST(Forecast, WithoutHistoryTheRangeIsWideButOrdered) {
  auto core = Core("dlas", {}, 2);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(core->Submit(Spec(i, 1, 0, std::nullopt), 0).ok());
  (void)core->Schedule(0);
  auto f = ForecastJobs(*core, 0, {.samples = 32});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->history, 0u);
  const auto& last = f->jobs.at(JobId(5));
  ASSERT_TRUE(last.start[0] && last.start[2]);
  EXPECT_LE(*last.start[0], *last.start[1]);
  EXPECT_LT(*last.start[1], *last.start[2]);  // a range, not a point
  // Same seed, same forecast.
  auto again = ForecastJobs(*core, 0, {.samples = 32});
  EXPECT_EQ(again->jobs.at(JobId(5)).start, last.start);
}

}  // namespace
}  // namespace tiresias
