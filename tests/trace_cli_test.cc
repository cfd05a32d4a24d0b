// `tiresias trace` end to end: converted traces run through `sim` as they are (a Helios log,
// Alibaba PAI tables, a Gavel trace, and a Philly job log whose attempts `sim --attempts
// replay` honours), `trace stats` on a known file, and `trace synth` giving the same file for the
// same seed at the asked load.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace {

using tiresias::testing::ReadAll;
using tiresias::testing::RunTiresias;
using tiresias::testing::ScratchDir;

TEST(TraceCli, HeliosLogConvertsAndSimulatesAsItIs) {
  auto dir = ScratchDir("trace_helios");
  std::ofstream(dir / "cluster_log.csv")
      << "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,"
         "queue\n"
         "j1,u1,vcA,2,8,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:00:05,2020-04-01 00:01:45,"
         "100,5\n"
         "j2,u2,vcB,0,8,1,COMPLETED,2020-04-01 00:00:01,2020-04-01 00:00:05,2020-04-01 00:01:45,"
         "100,5\n"
         "j3,u2,vcB,2,8,1,FAILED,2020-04-01 00:00:10,2020-04-01 00:00:20,2020-04-01 00:01:00,40,"
         "10\n";
  auto c = RunTiresias("trace convert --from helios " + (dir / "cluster_log.csv").string() +
                       " -o " + (dir / "t.csv").string());
  ASSERT_EQ(c.rc, 0) << c.out;
  EXPECT_NE(c.out.find("helios: 3 records read, 2 jobs kept, 1 left out"), std::string::npos)
      << c.out;
  EXPECT_NE(c.out.find("a CPU job (gpu_num 0)"), std::string::npos) << c.out;
  // Two 2-GPU jobs on 2 GPUs, fifo: j1 runs 0-100 s, j3 (10 s) waits and runs 100-140 s.
  auto s = RunTiresias("sim --trace " + (dir / "t.csv").string() +
                       " --cluster 1x1x2 --policy fifo --preempt-overhead 0 --out " +
                       (dir / "run").string());
  ASSERT_EQ(s.rc, 0) << s.out;
  auto summary = nlohmann::json::parse(std::ifstream(dir / "run" / "summary.json"));
  EXPECT_EQ(summary["finished"], 2);
  EXPECT_DOUBLE_EQ(summary["jct_seconds"]["mean"].get<double>(), (100.0 + 130.0) / 2);
  EXPECT_EQ(summary["fairness"]["users"], 2);  // users and VCs came through
  EXPECT_EQ(summary["fairness"]["vcs"], 2);
  EXPECT_TRUE(std::filesystem::exists(dir / "run" / "jct_cdf.csv"));
}

// A Philly job log: job a (submitted first) failed after 30 s, was retried and ran 70 s more;
// job b (10 s later) runs 20 s. One GPU, fifo, 5 s restore.
std::string PhillyLog(const std::filesystem::path& dir) {
  std::ofstream(dir / "cluster_job_log") << R"json([
 {"status": "Pass", "vc": "v", "jobid": "a", "user": "u", "submitted_time": "2017-10-01 00:00:00",
  "attempts": [{"start_time": "2017-10-01 00:00:00", "end_time": "2017-10-01 00:00:30",
                "detail": [{"ip": "m", "gpus": ["gpu0"]}]},
               {"start_time": "2017-10-01 00:05:00", "end_time": "2017-10-01 00:06:10",
                "detail": [{"ip": "m", "gpus": ["gpu0"]}]}]},
 {"status": "Pass", "vc": "v", "jobid": "b", "user": "w", "submitted_time": "2017-10-01 00:00:10",
  "attempts": [{"start_time": "2017-10-01 00:00:10", "end_time": "2017-10-01 00:00:30",
                "detail": [{"ip": "m", "gpus": ["gpu1"]}]}]}
])json";
  auto c = RunTiresias("trace convert --from philly-joblog " + (dir / "cluster_job_log").string() +
                       " -o " + (dir / "t.csv").string());
  EXPECT_EQ(c.rc, 0) << c.out;
  EXPECT_NE(c.out.find("jobs with more than one attempt (attempts kept)"), std::string::npos);
  return (dir / "t.csv").string();
}

double MeanJct(const std::filesystem::path& run) {
  return nlohmann::json::parse(std::ifstream(run / "summary.json"))["jct_seconds"]["mean"]
      .get<double>();
}

TEST(TraceCli, PhillyAttemptsMergedOrReplayed) {
  auto dir = ScratchDir("trace_philly");
  const std::string trace = PhillyLog(dir);
  EXPECT_NE(ReadAll(trace).find(",30;70"), std::string::npos) << ReadAll(trace);
  const std::string base =
      "sim --trace " + trace + " --cluster 1x1x1 --policy fifo --preempt-overhead 5 --out ";
  // merge: a runs its 100 s at once (0-100), b 100-120: JCTs 100 and 110.
  auto m = RunTiresias(base + (dir / "merge").string());
  ASSERT_EQ(m.rc, 0) << m.out;
  EXPECT_DOUBLE_EQ(MeanJct(dir / "merge"), (100.0 + 110.0) / 2);
  // replay: a's first attempt ends at 30 s; it waits again and, submitted first, restarts at
  // once, pays the 5 s restore and runs 70 s: ends at 105. b runs 105-125 (JCT 115).
  auto r = RunTiresias(base + (dir / "replay").string() + " --attempts replay --events " +
                       (dir / "events.jsonl").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_DOUBLE_EQ(MeanJct(dir / "replay"), (105.0 + 115.0) / 2);
  EXPECT_NE(r.out.find("restarts (replayed attempts) 1"), std::string::npos) << r.out;
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(dir / "replay" / "summary.json"))["restarts"], 1);
  // The event log names the restart in the live journal's vocabulary (a requeue).
  const std::string events = ReadAll(dir / "events.jsonl");
  const auto at = events.find("\"requeue\"");
  ASSERT_NE(at, std::string::npos) << events;
  const std::string line = events.substr(events.rfind('\n', at) + 1);
  EXPECT_NE(line.substr(0, line.find('\n')).find("the trace (attempt 1 of 2 ended)"),
            std::string::npos)
      << events;
}

TEST(TraceCli, AlibabaPaiConvertsAndSimulatesAsItIs) {
  auto dir = ScratchDir("trace_pai");
  // Headerless tables in the published column order. jobA: 4 instances x 100% of a GPU = 4
  // GPUs, its GPU task ran 110-1010 s (900 s), submitted at 100 s; jobB: 3 x 50% = 1.5 GPUs,
  // rounded up to 2, 160-760 s (600 s), submitted at 150 s; jobC has no GPU task.
  std::ofstream(dir / "pai_job_table.csv") << "jobA,i1,userX,Terminated,100,2000\n"
                                              "jobB,i2,userY,Terminated,150,900\n"
                                              "jobC,i3,userX,Terminated,200,300\n";
  std::ofstream(dir / "pai_task_table.csv")
      << "jobA,worker,4,Terminated,110,1010,600,29.3,100,V100\n"
         "jobB,worker,3,Terminated,160,760,600,29.3,50,T4\n"
         "jobC,worker,1,Terminated,210,290,600,29.3,,\n";
  auto c =
      RunTiresias("trace convert --from alibaba-pai-2020 " + (dir / "pai_job_table.csv").string() +
                  " " + (dir / "pai_task_table.csv").string() + " -o " + (dir / "t.csv").string());
  ASSERT_EQ(c.rc, 0) << c.out;
  EXPECT_NE(c.out.find("3 records read, 2 jobs kept, 1 left out"), std::string::npos) << c.out;
  // 4 GPUs, fifo: jobA (at 0) runs 0-900 s; jobB (at 50 s) needs 2 of them and waits until
  // 900 s, runs to 1500 s: JCTs 900 and 1450.
  auto s = RunTiresias("sim --trace " + (dir / "t.csv").string() +
                       " --cluster 1x1x4 --policy fifo --preempt-overhead 0 --out " +
                       (dir / "run").string());
  ASSERT_EQ(s.rc, 0) << s.out;
  EXPECT_DOUBLE_EQ(MeanJct(dir / "run"), (900.0 + 1450.0) / 2);
  auto summary = nlohmann::json::parse(std::ifstream(dir / "run" / "summary.json"));
  EXPECT_EQ(summary["fairness"]["users"], 2);
}

TEST(TraceCli, GavelConvertsAndSimulatesAsItIs) {
  auto dir = ScratchDir("trace_gavel");
  std::ofstream(dir / "tput.json") << "{\"v100\": {"
                                      "\"('ResNet-50 (batch size 64)', 1)\": {\"null\": 2.0}, "
                                      "\"('ResNet-18 (batch size 32)', 2)\": {\"null\": 50.0}}}";
  // 1000 steps at 2 steps/s = 500 s on 1 GPU at 0 s; 5000 steps at 50 = 100 s on 2 GPUs at
  // 10.5 s.
  std::ofstream(dir / "t.trace")
      << "ResNet-50 (batch size 64)\tcd x && python3 main.py\t--num_steps\t1\t1000\t0\t1\n"
         "ResNet-18 (batch size 32)\tcd x && python3 main.py\t--num_steps\t1\t5000\t10.5\t2\n";
  auto c =
      RunTiresias("trace convert --from gavel " + (dir / "t.trace").string() + " --throughputs " +
                  (dir / "tput.json").string() + " -o " + (dir / "t.csv").string());
  ASSERT_EQ(c.rc, 0) << c.out;
  // 2 GPUs, fifo, packed speed: the first runs 0-500 s on one GPU; the second needs both and
  // runs 500-600 s: JCTs 500 and 589.5.
  auto s = RunTiresias("sim --trace " + (dir / "t.csv").string() +
                       " --cluster 1x1x2 --policy fifo --speed off --preempt-overhead 0 --out " +
                       (dir / "run").string());
  ASSERT_EQ(s.rc, 0) << s.out;
  EXPECT_DOUBLE_EQ(MeanJct(dir / "run"), (500.0 + 589.5) / 2);
}

TEST(TraceCli, StatsReportsMixDurationsAndLoad) {
  auto dir = ScratchDir("trace_stats");
  // 4 jobs over 1000 s: 3 x 1 GPU of 100 s, 1 x 4 GPUs of 500 s: 2300 GPU-s. On 8 GPUs the
  // offered load is 2300 / (8 x 1000) = 0.2875.
  std::ofstream(dir / "t.csv") << "job_id,num_gpu,submit_time,duration,vc\n"
                                  "0,1,0,100,a\n1,1,10,100,a\n2,4,500,500,b\n3,1,1000,100,a\n";
  auto r = RunTiresias("trace stats " + (dir / "t.csv").string() + " --cluster 1x1x8");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("4 jobs submitted over 16.7 min"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("offered load on 1x1x8 (8 GPUs): 0.287"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    1:        3   75.00%   13.04%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("largest virtual clusters: a (3) b (1)"), std::string::npos) << r.out;
}

TEST(TraceCli, SynthSameSeedSameFileAtTheAskedLoad) {
  auto dir = ScratchDir("trace_synth");
  auto synth = [&](int seed, const std::string& name) {
    return RunTiresias("trace synth --jobs 3000 --load 0.8 --cluster 2x4x8 --seed " +
                       std::to_string(seed) + " -o " + (dir / name).string());
  };
  auto a = synth(5, "a.csv");
  ASSERT_EQ(a.rc, 0) << a.out;
  EXPECT_NE(a.out.find("target 0.8, drawn 0.8"), std::string::npos) << a.out;
  ASSERT_EQ(synth(5, "b.csv").rc, 0);
  ASSERT_EQ(synth(6, "c.csv").rc, 0);
  EXPECT_EQ(ReadAll(dir / "a.csv"), ReadAll(dir / "b.csv"));
  EXPECT_NE(ReadAll(dir / "a.csv"), ReadAll(dir / "c.csv"));
  auto stats = RunTiresias("trace stats " + (dir / "a.csv").string() + " --cluster 2x4x8");
  EXPECT_NE(stats.out.find("offered load on 2x4x8 (64 GPUs): 0.8"), std::string::npos) << stats.out;
  auto sim = RunTiresias("sim --trace " + (dir / "a.csv").string() + " --cluster 2x4x8");
  ASSERT_EQ(sim.rc, 0) << sim.out;
  EXPECT_NE(sim.out.find("finished 3000"), std::string::npos) << sim.out;
  // sim --synthetic is the same workload (found by a tester: trace synth drew jobs up to the
  // cluster's size, sim up to 32 GPUs, so the two differed for one seed).
  auto direct = RunTiresias("sim --synthetic 3000 --load 0.8 --cluster 2x4x8 --seed 5");
  ASSERT_EQ(direct.rc, 0) << direct.out;
  const auto jct = [](const std::string& out) {  // the JCT row: mean, median, p95...
    const size_t at = out.find("JCT (s)");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
  };
  ASSERT_FALSE(jct(sim.out).empty()) << sim.out;
  EXPECT_EQ(jct(direct.out), jct(sim.out)) << direct.out << "\n---\n" << sim.out;
}

}  // namespace
