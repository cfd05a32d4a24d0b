// QueueDiscipline (src/policy/queue_discipline.h) at the edges of its arithmetic: a
// promotion so far away that it would overflow the clock is no promotion (found by
// fuzz/options_fuzzer's class: option values whose ms conversions overflowed).
#include "policy/queue_discipline.h"

#include <gtest/gtest.h>

namespace tiresias {
namespace {

// A waiting job in queue 2 that attained `service` GPU-ms on `gpus` GPUs and stopped at t=1 s.
Job Waiting(int gpus, Duration executed) {
  Job j;
  j.spec.gpus = gpus;
  j.state = JobState::kPending;
  j.queue = 1;
  j.executed = executed;
  j.last_stop = Seconds(1);
  return j;
}

TEST(QueueDiscipline, PromotionIsKnobTimesServiceAfterTheStop) {
  QueueDiscipline q({Seconds(3600)}, 2.0);
  const Job j = Waiting(4, Seconds(1000));  // 4000 GPU-s
  EXPECT_EQ(q.NextTransition(j, Seconds(1)), Seconds(1) + Seconds(8000));
}

TEST(QueueDiscipline, APromotionBeyondTheEndOfTimeIsNone) {
  // The largest values the inputs allow: 10^6 GPUs for ten years, knob 10^6. The wait,
  // 3.15e23 ms, does not fit in 64 bits; converting it was undefined (in practice a negative
  // time, so the job was promoted at once).
  QueueDiscipline q({Seconds(3600)}, 1e6);
  Job j = Waiting(1'000'000, Seconds(kMaxInputSeconds));
  EXPECT_EQ(q.NextTransition(j, Seconds(2)), std::nullopt);
  EXPECT_FALSE(q.Apply(j, Seconds(2)));
  EXPECT_EQ(j.queue, 1);
}

}  // namespace
}  // namespace tiresias
