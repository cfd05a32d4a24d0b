// JobsCsv and JctCdfCsv format numbers without fmt's double formatting where integer
// arithmetic gives the same text: every field must read exactly as "{:.3f}" / "{:.4f}" of the
// value would, ties and large values included (seeded random jobs).
#include "sim/report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "sim/simulator.h"

namespace tiresias {
namespace {

std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string f;
  while (std::getline(ss, f, ',')) out.push_back(f);
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

TEST(JobsCsv, EveryNumberReadsAsFmtWouldWriteIt) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<Duration> work(1, 400'000'000), ms(0, 9'000'000'000);
  std::uniform_int_distribution<int> coin(0, 5);
  SimResult r;
  for (int i = 0; i < 3000; ++i) {
    JobResult j;
    j.id = JobId(i);
    j.gpus = 1 + i % 8;
    j.model = r.names->Intern("resnet50");
    j.state = coin(rng) ? JobState::kFinished : JobState::kPending;
    j.submit = ms(rng);
    j.first_start = coin(rng) ? j.submit + ms(rng) : -1;
    j.end = j.state == JobState::kFinished ? j.submit + ms(rng) : -1;
    j.work = work(rng);
    // Slowdowns on a 4-decimal tie (x.xxxx5), whole, and arbitrary.
    j.executed = coin(rng) == 0 ? j.work * 2 + j.work / 20000 : work(rng);
    if (i == 0) j.work = 20000, j.executed = 20001;  // 1.00005: a tie as written
    j.overhead = ms(rng);
    j.lost = coin(rng) == 0 ? 0 : ms(rng) * 7;
    j.vc = r.names->Intern(i % 2 ? "vision" : "");
    r.jobs.push_back(j);
  }
  std::stringstream csv(JobsCsv(r));
  std::string line;
  std::getline(csv, line);  // header
  for (const JobResult& j : r.jobs) {
    ASSERT_TRUE(std::getline(csv, line));
    const auto f = Fields(line);
    ASSERT_EQ(f.size(), 19u) << line;
    auto secs = [](Time t) { return t < 0 ? std::string() : fmt::format("{:.3f}", ToSeconds(t)); };
    const bool done = j.state == JobState::kFinished;
    EXPECT_EQ(f[4], secs(j.submit));
    EXPECT_EQ(f[5], secs(j.first_start));
    EXPECT_EQ(f[6], secs(j.end));
    EXPECT_EQ(f[7], done ? secs(j.end - j.submit) : "");
    EXPECT_EQ(f[8], j.first_start >= 0 ? secs(j.first_start - j.submit) : "");
    EXPECT_EQ(f[12], secs(j.overhead));
    EXPECT_EQ(f[13], done ? fmt::format("{:.4f}", j.slowdown()) : "")
        << j.executed << "/" << j.work;
    EXPECT_EQ(f[17], fmt::format("{:.4f}", static_cast<double>(j.lost) / (3600.0 * kMsPerSecond)));
    EXPECT_EQ(f[18], r.name(j.vc));
  }
}

}  // namespace
}  // namespace tiresias
