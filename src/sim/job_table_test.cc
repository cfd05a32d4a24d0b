// JobTable keeps every field of every job, and the simulator gives the same result from a
// table as from the list it was made of.
#include "sim/job_table.h"

#include <gtest/gtest.h>

#include "sim/simulator.h"
#include "trace/synthetic.h"

namespace tiresias {
namespace {

bool Same(const JobSpec& a, const JobSpec& b) {
  return a.id == b.id && a.gpus == b.gpus && a.submit == b.submit && a.name == b.name &&
         a.user == b.user && a.vc == b.vc && a.model == b.model && a.duration == b.duration &&
         a.attempts == b.attempts;
}

TEST(JobTable, GivesBackEveryFieldOfEveryJob) {
  std::vector<JobSpec> jobs = {
      {.id = JobId(7),
       .gpus = 8,
       .submit = 0,
       .name = "a-rather-long-job-name-past-sso",
       .user = "alice",
       .vc = "vision",
       .model = "resnet50",
       .duration = 5000,
       .attempts = {1000, 4000}},
      {.id = JobId(3), .gpus = 1, .submit = 10, .name = "", .user = "bob", .duration = 0},
      {.id = JobId(9), .gpus = 2, .submit = 10, .name = "x", .user = "alice", .vc = "vision"},
  };
  const std::vector<JobSpec> copy = jobs;
  const JobTable t(std::move(jobs));
  EXPECT_TRUE(jobs.empty());
  ASSERT_EQ(t.size(), 3u);
  for (size_t i = 0; i < copy.size(); ++i) {
    EXPECT_TRUE(Same(t.spec(i), copy[i])) << i;
    EXPECT_EQ(t.id(i), copy[i].id);
    EXPECT_EQ(t.submit(i), copy[i].submit);
    EXPECT_EQ(t.has_duration(i), copy[i].duration.has_value());
  }
}

TEST(JobTable, TheSimulatorGivesTheSameResultFromATable) {
  auto jobs = SyntheticPhillyLike({.jobs = 300, .seed = 3, .load = 1.4, .cluster_gpus = 16});
  SimConfig cfg;
  cfg.topo = *Topology::Create(1, 2, 8);
  cfg.policy = "dlas";
  const auto from_list = RunSimulation(cfg, jobs);
  ASSERT_TRUE(from_list.ok());
  const auto from_table = RunSimulation(cfg, JobTable(std::move(jobs)));
  ASSERT_TRUE(from_table.ok());
  ASSERT_EQ(from_list->jobs.size(), from_table->jobs.size());
  EXPECT_GT(from_list->preemptions, 0u);
  EXPECT_EQ(from_list->preemptions, from_table->preemptions);
  EXPECT_EQ(from_list->passes, from_table->passes);
  for (size_t i = 0; i < from_list->jobs.size(); ++i) {
    const JobResult& a = from_list->jobs[i];
    const JobResult& b = from_table->jobs[i];
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.first_start, b.first_start);
    EXPECT_EQ(a.end, b.end);
    EXPECT_EQ(from_list->name(a.model), from_table->name(b.model));
    EXPECT_EQ(from_list->name(a.vc), from_table->name(b.vc));
  }
}

}  // namespace
}  // namespace tiresias
