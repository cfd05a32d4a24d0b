// The simulator's command line on the edges an exploratory tester found (session 48): figures
// over no job, a window or trace with no job, loads over a zero span, a sweep of one
// replicate, output paths whose directory is missing, and the messages for each.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

namespace {

using tiresias::testing::ReadAll;
using tiresias::testing::RunTiresias;
using tiresias::testing::ScratchDir;

bool Has(const std::string& out, const std::string& what) {
  return out.find(what) != std::string::npos;
}

// One 4-GPU job on 1x1x4 runs from 0; at 30 s the node loses every GPU for good, so the job
// is evicted with 30 s done and never finishes. Its 4 GPUs were busy 0-30 s: the makespan
// ends with that run (30 s) and the utilisation is 4 x 30 / (4 x 30) = 1. No job finished, so
// slowdown, rho and nodes/job are over no job: "-", as summary.json's null (they read 0).
TEST(CliFindings, FiguresOverNoJobAreDashesAndAStrandedRunHasAMakespan) {
  auto dir = ScratchDir("findings_stranded");
  std::ofstream(dir / "t.csv") << "job_id,num_gpu,submit_time,duration\n0,4,0,100\n";
  std::ofstream(dir / "cap.csv") << "time,node,gpus\n30,0,0\n";
  auto r = RunTiresias("sim --trace " + (dir / "t.csv").string() + " --capacity " +
                       (dir / "cap.csv").string() +
                       " --cluster 1x1x4 --policy fifo --preempt-overhead 0 --speed off --out " +
                       (dir / "out").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "finished 0  rejected 0  unfinished 1")) << r.out;
  EXPECT_TRUE(Has(r.out, "makespan 30 s  GPU utilisation 1.000")) << r.out;
  EXPECT_TRUE(Has(r.out, "slowdown mean - p95 -")) << r.out;
  EXPECT_TRUE(Has(r.out, "nodes/job -  switches/job - (jobs > 1 GPU)")) << r.out;
  EXPECT_TRUE(Has(r.out, "rho mean - worst -, -% of jobs above 1.05")) << r.out;
  auto s = nlohmann::json::parse(std::ifstream(dir / "out" / "summary.json"));
  EXPECT_EQ(s["makespan_seconds"], 30.0);
  EXPECT_EQ(s["gpu_utilisation"], 1.0);
  EXPECT_TRUE(s["mean_nodes_multi_gpu"].is_null()) << s.dump();
  EXPECT_TRUE(s["slowdown"]["mean"].is_null());
}

// Jobs of one GPU only: nodes and switches per multi-GPU job are over none (null, not 0.0).
TEST(CliFindings, NodesPerMultiGpuJobIsNullWithoutOne) {
  auto dir = ScratchDir("findings_nodes");
  std::ofstream(dir / "t.csv") << "job_id,num_gpu,submit_time,duration\n0,1,0,10\n1,1,5,10\n";
  auto r = RunTiresias("sim --trace " + (dir / "t.csv").string() +
                       " --cluster 1x1x2 --speed off --out " + (dir / "out").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  auto s = nlohmann::json::parse(std::ifstream(dir / "out" / "summary.json"));
  EXPECT_TRUE(s["mean_nodes_multi_gpu"].is_null()) << s.dump();
  EXPECT_TRUE(s["mean_switches_multi_gpu"].is_null()) << s.dump();
  EXPECT_EQ(s["slowdown"]["mean"], 1.0);  // two finished jobs: figures, not null
  EXPECT_TRUE(Has(r.out, "nodes/job -")) << r.out;
}

// A window past the trace's end, or a trace with only a header, replayed nothing and exited 0
// with no word. Now an error naming the window and the days the trace spans (sim, sweep and
// trace stats alike).
TEST(CliFindings, AWindowOrTraceWithNoJobIsAnError) {
  auto dir = ScratchDir("findings_window");
  // Jobs at 0 s and 1.5 days (129,600 s): the trace spans days 0.00 to 1.50.
  std::ofstream(dir / "t.csv") << "job_id,num_gpu,submit_time,duration\n0,1,0,10\n1,1,129600,10\n";
  std::ofstream(dir / "empty.csv") << "job_id,num_gpu,submit_time,duration\n";
  const std::string t = (dir / "t.csv").string();
  auto r = RunTiresias("sim --trace " + t + " --cluster 1x1x1 --from-day 200 --days 7");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "error: " + t +
                             ": no job is submitted in days 200..207 (--from-day 200 --days 7); "
                             "the trace's jobs are submitted from day 0.00 to day 1.50"))
      << r.out;
  auto e = RunTiresias("sim --trace " + (dir / "empty.csv").string() + " --cluster 1x1x1");
  EXPECT_EQ(e.rc, 2) << e.out;
  EXPECT_TRUE(Has(e.out, "empty.csv: the trace has no job")) << e.out;
  auto w = RunTiresias("sweep --trace " + t + " --cluster 1x1x1 --windows 0,3 --days 1 --quiet");
  EXPECT_EQ(w.rc, 2) << w.out;
  EXPECT_TRUE(Has(w.out, "no job is submitted in days 3..4")) << w.out;
  auto st = RunTiresias("trace stats " + t + " --from-day 2");
  EXPECT_EQ(st.rc, 2) << st.out;
  EXPECT_TRUE(Has(st.out, "no job is submitted in days 2..end (--from-day 2)")) << st.out;
  // A window with jobs still runs.
  auto ok = RunTiresias("sim --trace " + t + " --cluster 1x1x1 --from-day 1 --speed off");
  EXPECT_EQ(ok.rc, 0) << ok.out;
  EXPECT_TRUE(Has(ok.out, "days 1..end: 1 jobs")) << ok.out;
}

// Every job submitted at 0 s: no span, so no offered load (it printed 0.000). One synthetic
// job: the same, with a warning that the target could not be met. --max-gpus 0 was taken as
// the default.
TEST(TraceCli, LoadOverNoSpanIsUndefined) {
  auto dir = ScratchDir("findings_load");
  std::ofstream(dir / "same.csv") << "job_id,num_gpu,submit_time,duration\n0,1,0,10\n1,1,0,10\n";
  auto r = RunTiresias("trace stats " + (dir / "same.csv").string() + " --cluster 1x1x1");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "offered load on 1x1x1 (1 GPUs): undefined (every job is submitted at "
                  "the same time"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "the jobs ask 2.000 x the cluster's GPUs at once")) << r.out;
  auto s =
      RunTiresias("trace synth --jobs 1 --load 1 --cluster 1x1x8 -o " + (dir / "one.csv").string());
  ASSERT_EQ(s.rc, 0) << s.out;
  EXPECT_TRUE(Has(s.out, "target 1, drawn undefined")) << s.out;
  EXPECT_TRUE(Has(s.out, "warning: every job is submitted at 0 s")) << s.out;
  auto z = RunTiresias("trace synth --jobs 10 --max-gpus 0 -o " + (dir / "z.csv").string());
  EXPECT_EQ(z.rc, 2) << z.out;
  EXPECT_TRUE(Has(z.out, "--max-gpus")) << z.out;
  EXPECT_TRUE(Has(z.out, "0 is out of range: expected an integer in 1..1000000")) << z.out;
}

// --windows with --days 0 was told "--windows needs --days" though --days was given.
TEST(SweepCli, WindowsWithDaysZeroNamesTheLength) {
  auto dir = ScratchDir("findings_windows");
  std::ofstream(dir / "t.csv") << "job_id,num_gpu,submit_time,duration\n0,1,0,10\n";
  auto r = RunTiresias("sweep --trace " + (dir / "t.csv").string() +
                       " --cluster 1x1x1 --windows 0,1 --days 0 --quiet");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "--windows needs --days greater than 0, the length of each window"))
      << r.out;
  // A day past --from-day's range (1e300 days overflowed the time; found by a review).
  auto far = RunTiresias("sweep --trace " + (dir / "t.csv").string() +
                         " --cluster 1x1x1 --windows 0,1e300 --days 1 --quiet");
  EXPECT_EQ(far.rc, 2) << far.out;
  EXPECT_TRUE(Has(far.out, "--windows: '1e300' is not a day from 0 to 3650")) << far.out;
}

// One replicate printed "± 0" as if the interval were known and nil; seeds that assign no
// model (every job names one) gave identical replicates with no word.
TEST(SweepCli, OneReplicateHasNoIntervalAndSeedsThatAssignNothingAreSaid) {
  auto dir = ScratchDir("findings_sweep");
  std::ofstream(dir / "t.csv") << "job_id,num_gpu,submit_time,duration,model_name\n"
                                  "0,1,0,100,vgg16\n1,1,10,50,resnet50\n";
  const std::string t = (dir / "t.csv").string();
  auto one =
      RunTiresias("sweep --trace " + t + " --cluster 1x1x1 --quiet -o " + (dir / "out").string());
  ASSERT_EQ(one.rc, 0) << one.out;
  EXPECT_TRUE(Has(one.out,
                  "cluster 1x1x1 (1 replicate): best configuration per metric; one "
                  "replicate has no interval"))
      << one.out;
  EXPECT_TRUE(Has(one.out, "(no interval)")) << one.out;
  EXPECT_FALSE(Has(one.out, "± 0")) << one.out;
  // summary.csv leaves the interval empty: mean_jct_mean then an empty mean_jct_ci95.
  const std::string summary = ReadAll(dir / "out" / "summary.csv");
  // 1 replicate; dlas on one GPU runs job 0 from 0 to 100 s, job 1 from 100 to 150 s: JCTs
  // 100 and 140 s, mean 120.
  EXPECT_TRUE(Has(summary, ",1x1x1,1,120,,")) << summary;
  // The Jain indices (no users, no VCs) have neither a mean nor an interval (it was 0): four
  // empty cells, then the mean slowdown 1 and the jobs finished, 2, each without interval.
  EXPECT_TRUE(Has(summary, ",,,,,,1,,2,\n")) << summary;
  auto seeds = RunTiresias("sweep --trace " + t + " --cluster 1x1x1 --seeds 1..3 --quiet");
  ASSERT_EQ(seeds.rc, 0) << seeds.out;
  EXPECT_TRUE(Has(seeds.out, "warning: every job of " + t +
                                 " names its model: --seeds 1..3 assigns none, so the 3 "
                                 "replicates per window are identical runs"))
      << seeds.out;
}

// --out made a missing parent directory while --report and --events were refused for one:
// now each output makes the directories it goes in.
TEST(CliFindings, FileOutputsMakeTheirDirectoriesAsOutDoes) {
  auto dir = ScratchDir("findings_outputs");
  std::ofstream(dir / "t.csv") << "job_id,num_gpu,submit_time,duration\n0,1,0,10\n";
  const auto under = dir / "missing" / "deeper";
  auto r = RunTiresias("sim --trace " + (dir / "t.csv").string() +
                       " --cluster 1x1x1 --speed off --out " + (under / "d").string() +
                       " --report " + (under / "r.html").string() + " --events " +
                       (dir / "other" / "ev.jsonl").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(std::filesystem::exists(under / "d" / "summary.json"));
  EXPECT_TRUE(std::filesystem::exists(under / "r.html"));
  EXPECT_TRUE(Has(ReadAll(dir / "other" / "ev.jsonl"), "\"kind\":\"finish\""));
  // What is there on the way must be a directory, checked before the run.
  std::ofstream(dir / "file") << "x";
  auto bad = RunTiresias("sim --trace " + (dir / "t.csv").string() + " --cluster 1x1x1 --report " +
                         (dir / "file" / "sub" / "r.html").string());
  EXPECT_EQ(bad.rc, 2) << bad.out;
  EXPECT_TRUE(Has(bad.out, (dir / "file").string() + " does not exist or is not a directory"))
      << bad.out;
}

// A number beyond a double's range was "not a finite number": 1e-400 is an underflow.
TEST(CliFindings, NumbersBeyondADoubleSaySo) {
  const std::string sim = "sim --synthetic 10 --cluster 1x1x8 ";
  auto small = RunTiresias(sim + "--preempt-overhead 1e-400");
  EXPECT_EQ(small.rc, 2) << small.out;
  EXPECT_TRUE(Has(small.out,
                  "--preempt-overhead: 1e-400 is too small, nearer 0 than a number can be "
                  "(underflow): expected a number in [0, 86400]"))
      << small.out;
  auto large = RunTiresias(sim + "--load 1e400");
  EXPECT_EQ(large.rc, 2) << large.out;
  EXPECT_TRUE(Has(large.out,
                  "--load: 1e400 is out of range, too large for a number (overflow): expected "
                  "a number in (0, 100]"))
      << large.out;
  auto nan = RunTiresias(sim + "--preempt-overhead nan");
  EXPECT_TRUE(Has(nan.out, "nan is not a finite number")) << nan.out;
}

// A history whose quantiles coincide gave thresholds 1 GPU-ms apart: refused at start, naming
// the history's file.
TEST(CliFindings, QuantilesOfAnAllEqualHistoryAreRefused) {
  auto dir = ScratchDir("findings_history");
  std::ofstream(dir / "t.csv") << "job_id,num_gpu,submit_time,duration\n0,1,0,10\n";
  std::ofstream(dir / "eq.csv") << "duration\n100\n100\n100\n";
  const std::string history = (dir / "eq.csv").string();
  auto r =
      RunTiresias("sim --trace " + (dir / "t.csv").string() +
                  " --cluster 1x1x1 --opt threshold_quantiles=0.3,0.6 --opt history=" + history);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "error: policy dlas: threshold_quantiles: the 0.3- and 0.6-quantiles of "
                  "the history " +
                      history + " are both 100 GPU-s"))
      << r.out;
}

}  // namespace
