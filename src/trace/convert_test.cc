// The trace converters (src/trace/convert.h) on small hand-made files that follow each
// published layout: what is kept (GPUs, durations, submit times, users, VCs, attempts), every
// record left out counted under its reason, and the written CSV read back by ReadTrace.
#include "trace/convert.h"

#include <gtest/gtest.h>

#include <fstream>

#include "test_util.h"
#include "trace/trace_reader.h"

namespace tiresias {
namespace {

std::string Write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

const JobSpec* ByName(const Converted& c, const std::string& name) {
  for (const auto& j : c.jobs) {
    if (j.name == name) return &j;
  }
  return nullptr;
}

TEST(ConvertPhilly, GpusDurationsAttemptsAndEveryLeftOutJobCounted) {
  const auto dir = testing::ScratchDir("philly_joblog");
  const std::string path = Write(dir / "cluster_job_log", R"json([
 {"status": "Pass", "vc": "vc1", "jobid": "application_1", "user": "alice",
  "submitted_time": "2017-10-03 10:00:00",
  "attempts": [{"start_time": "2017-10-03 10:00:05", "end_time": "2017-10-03 10:10:05",
                "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}, {"ip": "m2", "gpus": ["gpu0", "gpu1"]}]}]},
 {"status": "Failed", "vc": "vc2", "jobid": "application_2", "user": "bob",
  "submitted_time": "2017-10-03 09:00:00",
  "attempts": [{"start_time": "2017-10-03 09:01:00", "end_time": "2017-10-03 09:02:00",
                "detail": [{"ip": "m3", "gpus": ["gpu3"]}]},
               {"start_time": "2017-10-03 09:05:00", "end_time": "2017-10-03 09:35:00",
                "detail": [{"ip": "m3", "gpus": ["gpu3"]}]},
               {"start_time": "2017-10-03 09:40:00", "end_time": null,
                "detail": [{"ip": "m3", "gpus": ["gpu3"]}]}]},
 {"status": "Killed", "vc": "vc1", "jobid": "application_3", "user": "alice",
  "submitted_time": "2017-10-03 11:00:00", "attempts": []},
 {"status": "Pass", "vc": "vc1", "jobid": "application_4", "user": "carol",
  "submitted_time": "None",
  "attempts": [{"start_time": "2017-10-03 10:00:05", "end_time": "2017-10-03 10:10:05",
                "detail": [{"ip": "m1", "gpus": ["gpu0"]}]}]},
 {"status": "Running", "vc": "vc2", "jobid": "application_5", "user": "bob",
  "submitted_time": "2017-10-03 12:00:00",
  "attempts": [{"start_time": "2017-10-03 12:00:10", "end_time": "None",
                "detail": [{"ip": "m1", "gpus": ["gpu0"]}]}]},
 {"status": "Pass", "vc": "vc3", "jobid": "application_6", "user": "dave",
  "submitted_time": "2017-10-03 13:00:00",
  "attempts": [{"start_time": "2017-10-03 13:00:00", "end_time": "2017-10-03 13:00:30",
                "detail": []}]}
])json");
  auto c = ConvertPhillyJobLog(path);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->report.records, 6);
  EXPECT_EQ(c->report.kept, 2);
  EXPECT_EQ(c->report.dropped,
            (std::map<std::string, int64_t>{
                {"no attempts (it never ran)", 1},
                {"no submitted_time", 1},
                {"no complete attempt (every attempt lacks a start or an end)", 1},
                {"no GPUs listed in any complete attempt", 1},
            }));
  // application_2's third attempt; application_5's, whose job was left out, is not counted
  // under "kept" (it was; found by a tester).
  EXPECT_EQ(
      c->report.notes.at("attempts without an end_time, running when the log ended (left out)"), 1);
  // Job 2 (the earliest, submit 0): 1 GPU, attempts of 60 s and 1800 s (the third never
  // ended), 1860 s in all. Job 1: 2 + 2 GPUs over two machines, one 600 s attempt, submitted
  // an hour later.
  ASSERT_EQ(c->jobs.size(), 2u);
  const JobSpec& j2 = c->jobs[0];
  EXPECT_EQ(j2.name, "application_2");
  EXPECT_EQ(j2.submit, 0);
  EXPECT_EQ(j2.gpus, 1);
  EXPECT_EQ(j2.duration, Seconds(1860));
  EXPECT_EQ(j2.attempts, (std::vector<Duration>{Seconds(60), Seconds(1800)}));
  EXPECT_EQ(j2.user, "bob");
  EXPECT_EQ(j2.vc, "vc2");
  const JobSpec& j1 = c->jobs[1];
  EXPECT_EQ(j1.name, "application_1");
  EXPECT_EQ(j1.submit, Seconds(3600));
  EXPECT_EQ(j1.gpus, 4);
  EXPECT_EQ(j1.duration, Seconds(600));
  EXPECT_TRUE(j1.attempts.empty());
  EXPECT_NE(c->report.Summary().find("left out:         1  no submitted_time"), std::string::npos)
      << c->report.Summary();

  // Found by a tester: a job whose only attempt ends before it starts has a start and an end,
  // yet was counted as "every attempt lacks a start or an end". It has its own reason; with
  // an attempt lacking an end beside it, both are named.
  const std::string odd = Write(dir / "reversed_log", R"json([
 {"status": "Pass", "vc": "v", "jobid": "r1", "user": "u", "submitted_time": "2017-10-03 10:00:00",
  "attempts": [{"start_time": "2017-10-03 10:10:00", "end_time": "2017-10-03 10:05:00",
                "detail": [{"ip": "m1", "gpus": ["gpu0"]}]}]},
 {"status": "Pass", "vc": "v", "jobid": "r2", "user": "u", "submitted_time": "2017-10-03 10:00:00",
  "attempts": [{"start_time": "2017-10-03 10:10:00", "end_time": "2017-10-03 10:05:00",
                "detail": [{"ip": "m1", "gpus": ["gpu0"]}]},
               {"start_time": "2017-10-03 10:20:00", "end_time": null,
                "detail": [{"ip": "m1", "gpus": ["gpu0"]}]}]}
])json");
  auto r = ConvertPhillyJobLog(odd);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->report.dropped,
            (std::map<std::string, int64_t>{
                {"no valid attempt (every attempt ends before it starts)", 1},
                {"no complete attempt (each lacks a start or an end, or ends before it starts)", 1},
            }));

  // Written and read back: the attempts survive, the sum is the duration.
  const std::string out = (dir / "out.csv").string();
  ASSERT_TRUE(WriteTraceCsv(c->jobs, out).ok());
  auto back = ReadTrace(out);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->jobs[0].attempts, j2.attempts);
  EXPECT_EQ(back->jobs[1].gpus, 4);
  EXPECT_EQ(back->jobs[1].user, "alice");
  EXPECT_EQ(back->jobs[1].name, "application_1");
}

TEST(ConvertPhilly, NotAListIsRefused) {
  const auto dir = testing::ScratchDir("philly_bad");
  auto c = ConvertPhillyJobLog(Write(dir / "log", R"({"jobid": "x"})"));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("JSON list of jobs"), std::string::npos);
  auto d = ConvertPhillyJobLog(Write(dir / "log2", R"([{"jobid": "x",)"));
  ASSERT_FALSE(d.ok());
}

// Found by a tester: a directory given to a converter aborted the process (libstdc++'s
// ifstream opens it and throws from the first read). Every converter says what it expected.
TEST(ConvertAnyFormat, ADirectoryIsRefusedSayingWhatWasExpected) {
  const auto dir = testing::ScratchDir("convert_dir");
  const std::string tput = Write(dir / "tput.json", R"({"v100": {}})");
  const std::string trace = Write(dir / "t.trace", "");
  const std::string d = dir.string();
  for (const auto& [got, expected] :
       {std::pair{ConvertPhillyJobLog(d), "expected Philly's cluster_job_log"},
        {ConvertGavel(trace, d, "v100"), "expected Gavel's throughputs JSON"},
        {ConvertGavel(d, tput, "v100"), "expected a Gavel trace file"},
        {ConvertAlibabaPai({d, d}), "expected a trace file"},
        {ConvertHelios(d), "is a directory"}}) {
    ASSERT_FALSE(got.ok()) << expected;
    EXPECT_EQ(got.status().message().rfind(d + ": is a directory", 0), 0u)
        << got.status().message();
    EXPECT_NE(got.status().message().find(expected), std::string::npos) << got.status().message();
  }
}

TEST(ConvertHelios, CpuJobsAndJobsThatNeverRanAreCounted) {
  const auto dir = testing::ScratchDir("helios");
  const std::string path = Write(
      dir / "cluster_log.csv",
      "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,"
      "queue\n"
      "j1,u1,vcA,8,64,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:01:00,2020-04-01 01:01:00,"
      "3600,60\n"
      "j2,u2,vcB,0,4,1,COMPLETED,2020-04-01 00:00:10,2020-04-01 00:00:20,2020-04-01 00:10:20,"
      "600,10\n"
      "j3,u1,vcA,1,8,1,CANCELLED,2020-04-01 00:00:20,,,0,0\n"
      "j4,u3,vcB,2,8,1,FAILED,2020-04-01 00:00:30,2020-04-01 00:01:30,2020-04-01 00:02:00,,60\n"
      "j5,u3,vcB,x,8,1,FAILED,2020-04-01 00:00:30,2020-04-01 00:01:30,2020-04-01 00:02:00,30,60\n");
  auto c = ConvertHelios(path);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->report.records, 5);
  EXPECT_EQ(c->report.dropped, (std::map<std::string, int64_t>{
                                   {"a CPU job (gpu_num 0)", 1},
                                   {"never started (no start_time)", 1},
                                   {"gpu_num is not a non-negative integer", 1},
                               }));
  EXPECT_EQ(c->report.notes.at("state COMPLETED"), 1);
  EXPECT_EQ(c->report.notes.at("state FAILED"), 1);
  // j1: 8 GPUs, 3600 s (the duration column). j4: no duration: end - start = 30 s.
  ASSERT_EQ(c->jobs.size(), 2u);
  const JobSpec* j1 = ByName(*c, "j1");
  ASSERT_NE(j1, nullptr);
  EXPECT_EQ(j1->gpus, 8);
  EXPECT_EQ(j1->duration, Seconds(3600));
  EXPECT_EQ(j1->submit, 0);
  EXPECT_EQ(j1->user, "u1");
  EXPECT_EQ(j1->vc, "vcA");
  const JobSpec* j4 = ByName(*c, "j4");
  ASSERT_NE(j4, nullptr);
  EXPECT_EQ(j4->gpus, 2);
  EXPECT_EQ(j4->duration, Seconds(30));
  EXPECT_EQ(j4->submit, Seconds(30));
}

TEST(ConvertHelios, MissingColumnSaysWhatTheLayoutIs) {
  const auto dir = testing::ScratchDir("helios_bad");
  auto c = ConvertHelios(Write(dir / "x.csv", "job_id,user\nj1,u\n"));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("missing column 'gpu_num'"), std::string::npos);
}

const char* kPaiJobs =
    "jobA,inst1,userX,Terminated,100,2000\n"
    "jobB,inst2,userY,Terminated,150,900\n"
    "jobC,inst3,userX,Failed,200,300\n"
    "jobD,inst4,userZ,Terminated,,500\n"
    "jobE,inst5,userZ,Terminated,400,800\n";
const char* kPaiTasks =
    "jobA,worker,4,Terminated,110,1010,600,29.3,100,V100\n"
    "jobA,ps,1,Terminated,105,1020,400,10,,\n"
    "jobB,worker,3,Terminated,160,760,600,29.3,50,T4\n"
    "jobC,worker,1,Terminated,210,290,600,29.3,,\n"
    "jobE,worker,1,Running,410,,600,29.3,100,V100\n"
    "jobZ,worker,1,Terminated,1,2,600,29.3,100,V100\n";

void CheckPai(const Converted& c) {
  EXPECT_EQ(c.report.records, 5);
  EXPECT_EQ(c.report.dropped, (std::map<std::string, int64_t>{
                                  {"no GPU (plan_gpu empty or 0 in every task)", 1},
                                  {"no start_time (submission)", 1},
                                  {"no GPU task with start_time and end_time", 1},
                              }));
  EXPECT_EQ(c.report.notes.at("task rows of jobs missing from the job table (ignored)"), 1);
  EXPECT_EQ(c.report.notes.at("fractional GPU demand rounded up to whole GPUs"), 1);
  ASSERT_EQ(c.jobs.size(), 2u);
  // jobA: 4 instances x 100% = 4 GPUs; its GPU task ran 110-1010 (the CPU ps task is not
  // counted): 900 s; submitted at 100 s, the earliest: 0.
  const JobSpec* a = ByName(c, "jobA");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->gpus, 4);
  EXPECT_EQ(a->duration, Seconds(900));
  EXPECT_EQ(a->submit, 0);
  EXPECT_EQ(a->user, "userX");
  // jobB: 3 x 50% = 1.5 GPUs, rounded up to 2; 600 s; 50 s after jobA.
  const JobSpec* b = ByName(c, "jobB");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->gpus, 2);
  EXPECT_EQ(b->duration, Seconds(600));
  EXPECT_EQ(b->submit, Seconds(50));
}

TEST(ConvertAlibaba, GpusFromPlanGpuPercentAndEveryLeftOutJobCounted) {
  const auto dir = testing::ScratchDir("pai");
  // Task table first: the tables are told apart by their column counts.
  auto c = ConvertAlibabaPai(
      {Write(dir / "pai_task_table.csv", kPaiTasks), Write(dir / "pai_job_table.csv", kPaiJobs)});
  ASSERT_TRUE(c.ok()) << c.status().message();
  CheckPai(*c);
  EXPECT_NE(c->report.Summary().find("columns from the published column order"), std::string::npos);
}

TEST(ConvertAlibaba, ColumnsComeFromTheHeaderFiles) {
  // The same jobs with the job table's columns in another order, named by its .header file.
  const auto dir = testing::ScratchDir("pai_header");
  std::string jobs;
  for (auto line : {"inst1,jobA,userX,Terminated,100,2000", "inst2,jobB,userY,Terminated,150,900",
                    "inst3,jobC,userX,Failed,200,300", "inst4,jobD,userZ,Terminated,,500",
                    "inst5,jobE,userZ,Terminated,400,800"}) {
    jobs += std::string(line) + "\n";
  }
  Write(dir / "pai_job_table.header", "inst_id,job_name,user,status,start_time,end_time\n");
  Write(dir / "pai_task_table.header",
        "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,"
        "gpu_type\n");
  auto c = ConvertAlibabaPai(
      {Write(dir / "pai_job_table.csv", jobs), Write(dir / "pai_task_table.csv", kPaiTasks)});
  ASSERT_TRUE(c.ok()) << c.status().message();
  CheckPai(*c);
  EXPECT_NE(c->report.Summary().find("pai_job_table.header"), std::string::npos);
}

TEST(ConvertGavel, DurationIsStepsOverThroughput) {
  const auto dir = testing::ScratchDir("gavel");
  const std::string tput = Write(dir / "throughputs.json",
                                 "{\"v100\": {"
                                 "\"('ResNet-50 (batch size 64)', 1)\": {\"null\": 2.0}, "
                                 "\"('ResNet-18 (batch size 32)', 2)\": {\"null\": 50.0}, "
                                 "\"('Transformer (batch size 16)', 1)\": {\"null\": 10.0}}, "
                                 "\"k80\": {}}");
  const std::string trace = Write(
      dir / "t.trace",
      "ResNet-50 (batch size 64)\tcd x && python3 main.py\t--num_steps\t1\t1000\t0.000000\t1\n"
      "ResNet-18 (batch size 32)\tcd x && python3 main.py\t--num_steps\t1\t5000\t10.5\t2\n"
      "Transformer (batch size 16)\tcd x && python3 train.py\t-step\t1\t100\t20\t4\n"
      "LM (batch size 5)\tcd x && python main.py\t--steps\t1\t-5\t30\t1\n");
  auto c = ConvertGavel(trace, tput, "v100");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->report.records, 4);
  EXPECT_EQ(c->report.dropped,
            (std::map<std::string, int64_t>{
                {"no throughput for ('Transformer (batch size 16)', 4) on v100", 1},
                {"total_steps is not a positive number", 1},
            }));
  ASSERT_EQ(c->jobs.size(), 2u);
  // 1000 steps at 2 steps/s = 500 s; 5000 at 50 = 100 s on 2 GPUs, 10.5 s later.
  EXPECT_EQ(c->jobs[0].duration, Seconds(500));
  EXPECT_EQ(c->jobs[0].model, "resnet50");
  EXPECT_EQ(c->jobs[0].gpus, 1);
  EXPECT_EQ(c->jobs[1].duration, Seconds(100));
  EXPECT_EQ(c->jobs[1].gpus, 2);
  EXPECT_EQ(c->jobs[1].submit, 10500);
  EXPECT_EQ(c->jobs[1].model, "resnet18");
  EXPECT_EQ(c->report.notes.at("model without a profile here (runs at packed speed)"), 1);
  // Without throughputs there is no duration: refused with what to give.
  auto none = ConvertGavel(trace, "", "v100");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("--throughputs"), std::string::npos);
  auto worker = ConvertGavel(trace, tput, "a100");
  ASSERT_FALSE(worker.ok());
  EXPECT_NE(worker.status().message().find("it has: k80, v100"), std::string::npos);
}

TEST(TraceReader, AttemptsMustSumToTheDuration) {
  const auto dir = testing::ScratchDir("attempts");
  const std::string bad = Write(dir / "bad.csv",
                                "job_id,num_gpu,submit_time,duration,attempts\n"
                                "0,1,0,100,30;60\n");
  auto t = ReadTrace(bad);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("sum to 90 s, not the duration 100 s"), std::string::npos)
      << t.status().message();
  const std::string good = Write(dir / "good.csv",
                                 "job_id,num_gpu,submit_time,duration,attempts\n"
                                 "0,1,0,100,40;60\n1,1,0,50,\n");
  auto g = ReadTrace(good);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->jobs[0].attempts, (std::vector<Duration>{Seconds(40), Seconds(60)}));
  EXPECT_TRUE(g->jobs[1].attempts.empty());
}

}  // namespace
}  // namespace tiresias
