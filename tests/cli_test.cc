// End-to-end tests of the `tiresias` command as a user runs it: sim with --out, compare,
// and the error messages for a bad policy, a bad option and a malformed trace row.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/html_report.h"
#include "cli/progress.h"
#include "test_util.h"

namespace {

using Result = tiresias::testing::CmdResult;

Result Tiresias(const std::string& args) {
  return tiresias::testing::RunTiresias(args);
}

std::filesystem::path TempDir(const std::string& name) {
  return tiresias::testing::FreshDir("cli_" + name);
}

TEST(Cli, SimEventsWritesTheJournalVocabulary) {
  auto dir = TempDir("events");
  std::ofstream(dir / "t.csv") << "job_id,num_gpu,submit_time,duration,model_name\n"
                                  "0,2,0,100,vgg16\n1,2,10,50,resnet50\n2,64,20,10,alexnet\n";
  Result r = Tiresias("sim --trace " + (dir / "t.csv").string() +
                      " --cluster 1x1x2 --policy fifo --preempt-overhead 0 --events " +
                      (dir / "ev.jsonl").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  // Job 0 starts at 0 on both GPUs and ends at 100 s; job 1 then runs 100..150 s; job 2
  // (64 GPUs) is refused at submit. Trace ids are kept; times are core ms.
  const std::string want = R"jsonl({"detail":{"gpus":2,"name":""},"job":0,"kind":"submit","t_ms":0}
{"detail":{"gpus":[[0,0],[0,1]],"reason":"starts"},"job":0,"kind":"start","t_ms":0}
{"detail":{"gpus":2,"name":""},"job":1,"kind":"submit","t_ms":10000}
{"detail":{"gpus":64,"name":""},"job":2,"kind":"submit","t_ms":20000}
{"detail":{"reason":"job 2: never fits: asks for 64 GPUs but the cluster has 2 (1x1x2)"},"job":2,"kind":"reject","t_ms":20000}
{"detail":{},"job":0,"kind":"finish","t_ms":100000}
{"detail":{"gpus":[[0,0],[0,1]],"reason":"starts"},"job":1,"kind":"start","t_ms":100000}
{"detail":{},"job":1,"kind":"finish","t_ms":150000}
)jsonl";
  EXPECT_EQ(tiresias::testing::ReadAll(dir / "ev.jsonl"), want);
}

TEST(Cli, SimReplaysCapacityChanges) {
  // 2 nodes x 4 GPUs, fifo + consolidate, no restore cost. A and B (4 GPUs, 100 s) start at 0
  // on n0 and n1. At 30 s node 1 goes down: B is evicted with 30 s done. C (2 GPUs, 10 s)
  // arrives at 40 s and waits behind B (strict FIFO). At 100 s A ends and B resumes on n0 for
  // its last 70 s (ends at 170 s); C still finds no usable GPU. At 150 s node 1 is back and C
  // runs 150..160 s. Without the outage B would have ended at 100 s and C at 110 s.
  auto dir = TempDir("capacity");
  std::ofstream(dir / "t.csv") << "job_id,num_gpu,submit_time,duration,model_name\n"
                                  "0,4,0,100,vgg16\n1,4,0,100,vgg16\n2,2,40,10,vgg16\n";
  std::ofstream(dir / "cap.csv") << "time,node,gpus\n30,1,0\n150,1,4\n";
  Result r = Tiresias("sim --trace " + (dir / "t.csv").string() + " --capacity " +
                      (dir / "cap.csv").string() +
                      " --cluster 1x2x4 --policy fifo --placement consolidate --preempt-overhead "
                      "0 --speed off --out " +
                      (dir / "out").string() + " --events " + (dir / "ev.jsonl").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("2 capacity changes from"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("evictions 1 (runs stopped by capacity changes)"), std::string::npos)
      << r.out;
  const std::string ev = tiresias::testing::ReadAll(dir / "ev.jsonl");
  for (
      const char* line :
      {R"({"detail":{"node":1,"reason":"capacity change","usable":[]},"job":null,"kind":"capacity","t_ms":30000})",
       R"({"detail":{"gpus":[[1,0],[1,1],[1,2],[1,3]],"reason":"node 1 lost GPUs"},"job":1,"kind":"evict","t_ms":30000})",
       R"({"detail":{"gpus":[[0,0],[0,1],[0,2],[0,3]],"reason":"starts"},"job":1,"kind":"start","t_ms":100000})",
       R"({"detail":{},"job":1,"kind":"finish","t_ms":170000})",
       R"({"detail":{"gpus":[[1,0],[1,1]],"reason":"starts"},"job":2,"kind":"start","t_ms":150000})",
       R"({"detail":{},"job":2,"kind":"finish","t_ms":160000})"}) {
    EXPECT_NE(ev.find(line), std::string::npos) << line << "\n" << ev;
  }
  auto summary = nlohmann::json::parse(tiresias::testing::ReadAll(dir / "out/summary.json"));
  EXPECT_EQ(summary["evictions"], 1) << summary.dump();
  // A row outside the cluster names its file and line.
  std::ofstream(dir / "bad.csv") << "time,node,gpus\n10,0,4\n20,2,1\n";
  r = Tiresias("sim --trace " + (dir / "t.csv").string() + " --capacity " +
               (dir / "bad.csv").string() + " --cluster 1x2x4");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("bad.csv:3: node '2' is not a node of 1x2x4 (0..1)"), std::string::npos)
      << r.out;
}

TEST(Cli, SimWritesJobsCsvAndSummaryJson) {
  auto dir = TempDir("sim");
  std::ofstream(dir / "t.csv") << "job_id,num_gpu,submit_time,duration,model_name\n"
                                  "0,2,0,100,vgg16\n1,2,10,50,resnet50\n2,64,20,10,alexnet\n";
  Result r = Tiresias("sim --trace " + (dir / "t.csv").string() +
                      " --cluster 1x1x2 --policy fifo --preempt-overhead 0 --out " +
                      (dir / "run").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  // Job 0 runs 0..100 s; job 1 waits for it: 100..150 s, JCT 140 s. Job 2 never fits.
  std::ifstream csv(dir / "run" / "jobs.csv");
  std::stringstream ss;
  ss << csv.rdbuf();
  EXPECT_NE(ss.str().find("1,2,resnet50,finished,10.000,100.000,150.000,140.000,90.000,0,0,1"),
            std::string::npos)
      << ss.str();
  EXPECT_NE(ss.str().find("2,64,alexnet,rejected"), std::string::npos) << ss.str();
  auto summary = nlohmann::json::parse(std::ifstream(dir / "run" / "summary.json"));
  EXPECT_EQ(summary["finished"], 2);
  EXPECT_EQ(summary["rejected"], 1);
  EXPECT_DOUBLE_EQ(summary["jct_seconds"]["mean"].get<double>(), (100.0 + 140.0) / 2);
  EXPECT_EQ(summary["config"]["policy"], "fifo");
  EXPECT_EQ(summary["config"]["policy_options_in_effect"], nlohmann::json::object());
}

// summary.json records every option's value in the run, the defaults too (found by a tester:
// only what was given, so a run with the shipped dlas recorded none of its queues).
TEST(Cli, SummaryRecordsTheOptionsInEffect) {
  auto dir = TempDir("in_effect");
  Result r = Tiresias(
      "sim --synthetic 20 --cluster 1x2x8 --policy dlas --opt promote_knob=4 "
      "--speed off --out " +
      (dir / "run").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto config = nlohmann::json::parse(std::ifstream(dir / "run" / "summary.json"))["config"];
  EXPECT_EQ(config["policy_options"], nlohmann::json::array({"promote_knob=4"}));
  const auto& p = config["policy_options_in_effect"];
  EXPECT_EQ(p["promote_knob"], "4");
  EXPECT_EQ(p["queue_order"], "running-first");
  EXPECT_EQ(p["queues"], "6");  // the shipped thresholds, which no option declares as a default
  EXPECT_EQ(p["thresholds"], "1000,6687,44721,299070,2000000");
  EXPECT_EQ(config["placement"], "tiresias");
  EXPECT_EQ(config["placement_options_in_effect"]["packlimit"], "0.5");
}

TEST(Cli, UnknownPolicyListsValidOnes) {
  Result r = Tiresias("sim --synthetic 10 --cluster 1x1x8 --policy fastest");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("unknown policy 'fastest'; valid policies: fifo, fifo-backfill, sjf"),
            std::string::npos)
      << r.out;
}

TEST(Cli, BadOptionValueNamesTheOption) {
  Result r = Tiresias("sim --synthetic 10 --cluster 1x1x8 --policy dlas --opt queues=3");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("queues=3 needs thresholds"), std::string::npos) << r.out;
}

TEST(Cli, MalformedTraceRowNamesFileAndLine) {
  auto dir = TempDir("bad");
  std::ofstream(dir / "t.csv") << "job_id,num_gpu,submit_time,duration\n0,1,0,10\n1,two,5,10\n";
  Result r = Tiresias("sim --trace " + (dir / "t.csv").string() + " --cluster 1x1x2");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find((dir / "t.csv").string() + ":3: num_gpu 'two' is not a positive integer"),
            std::string::npos)
      << r.out;
}

TEST(Cli, CompareRunsPoliciesSideBySide) {
  // gittins gets a small GPU-time history of its own (the default one is in ../shared).
  auto dir = TempDir("compare");
  std::ofstream(dir / "history.csv") << "duration\n60\n300\n900\n3600\n7200\n36000\n";
  const std::string cmd =
      "compare --synthetic 300 --seed 3 --cluster 1x2x8 "
      "--runs fifo+consolidate,dlas+count,gittins+count --opt gittins.history=" +
      (dir / "history.csv").string();
  Result r = Tiresias(cmd);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("fifo+consolidate"), std::string::npos);
  EXPECT_NE(r.out.find("gittins+count"), std::string::npos);
  EXPECT_NE(r.out.find("mean JCT (s)"), std::string::npos);
  // Same inputs, same outputs, byte for byte (the wall-time lines aside).
  auto strip = [](std::string s) { return s.substr(0, s.find("fifo+consolidate: simulated")); };
  EXPECT_EQ(strip(r.out), strip(Tiresias(cmd).out));
  EXPECT_EQ(r.out.find("note: no job waited"), std::string::npos) << r.out;  // contended
}

// A job whose trace VC the tenants file does not declare goes to its user's VC, else
// default_vc, as serve and whatif decide (found by a tester: alice's jobs went to the
// default although a VC lists her). The header states quota_lead and protect when set.
TEST(Cli, SimPutsAJobOfAnUndeclaredVcInItsUsersVc) {
  auto dir = TempDir("tenants");
  std::ofstream(dir / "t.csv") << "job_id,num_gpu,submit_time,duration,user,vc\n"
                                  "0,1,0,100,alice,oldteam\n1,1,0,100,alice,oldteam\n"
                                  "2,1,0,100,bob,\n";
  std::ofstream(dir / "t.json") << R"({"default_vc": "shared", "vcs": [
      {"name": "vision", "quota": 2, "users": ["alice"]}, {"name": "shared", "quota": 2}]})";
  Result r =
      Tiresias("sim --trace " + (dir / "t.csv").string() + " --cluster 1x1x4 --tenants " +
               (dir / "t.json").string() + " --quota-lead -1 --out " + (dir / "run").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("unused quota lent; strict quotas: every job within its VC's quota "
                       "before any borrower\n"),
            std::string::npos)
      << r.out;
  std::ifstream csv(dir / "run" / "jobs.csv");
  std::string line, vcs;
  std::getline(csv, line);  // the header; vc is the last column
  while (std::getline(csv, line)) vcs += line.substr(line.rfind(',') + 1) + " ";
  EXPECT_EQ(vcs, "vision vision shared ");
}

// A run where no job waited says that the ordering policies cannot differ there (found by a
// tester: the whole Philly trace on the default cluster gave every policy the same numbers,
// without a word why).
TEST(Cli, ARunWhereNoJobWaitedSaysThePoliciesCannotDiffer) {
  Result r = Tiresias("compare --synthetic 50 --load 0.05 --cluster 4x32x8 --policies fifo,dlas");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("note: no job waited on 4x32x8 (1024 GPUs), so the ordering policies "
                       "cannot differ here"),
            std::string::npos)
      << r.out;
}

// An option given but without effect is said on stderr, once, and the run goes on (a tester
// gave dlas history= without threshold_quantiles and was not told it was ignored).
TEST(Cli, AnOptionWithoutEffectIsSaidOnce) {
  Result r = Tiresias(
      "compare --synthetic 20 --cluster 1x1x8 --policies dlas,dlas+consolidate --opt "
      "online=true");
  ASSERT_EQ(r.rc, 0) << r.out;
  const std::string note = "note: policy dlas: online has no effect without threshold_quantiles\n";
  ASSERT_NE(r.out.find(note), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(note, r.out.find(note) + 1), std::string::npos) << r.out;
}

TEST(Cli, CommModeSelectsTheSpeedModel) {
  if (!std::filesystem::exists(std::string(TIRESIAS_SHARED_DIR) + "/profiles/tensor_sizes.csv")) {
    GTEST_SKIP() << "the speed model needs ../shared/profiles/tensor_sizes.csv (absent)";
  }
  const std::string run = "sim --synthetic 50 --seed 2 --cluster 1x2x8 --placement spread ";
  Result ps = Tiresias(run);
  ASSERT_EQ(ps.rc, 0) << ps.out;
  EXPECT_NE(ps.out.find("parameter servers"), std::string::npos) << ps.out;  // the default
  Result ring = Tiresias(run + "--comm allreduce");
  ASSERT_EQ(ring.rc, 0) << ring.out;
  EXPECT_NE(ring.out.find("all-reduce"), std::string::npos) << ring.out;
  EXPECT_NE(Tiresias(run + "--comm ring").rc, 0);
}

// A long simulation shows progress on a terminal and nothing otherwise: popen's pipe is not a
// terminal, `script` gives the command a pseudo-terminal. 20,000 jobs make 4,096-event
// progress reports; TIRESIAS_PROGRESS=1 prints every one (the terminal's 250 ms pacing off).
TEST(Cli, ProgressOnATerminalOnly) {
  const std::string sim = "sim --synthetic 20000 --cluster 1x4x8 --policy dlas";
  Result quiet = Tiresias(sim);
  ASSERT_EQ(quiet.rc, 0) << quiet.out;
  EXPECT_EQ(quiet.out.find("jobs ended"), std::string::npos) << quiet.out;
  EXPECT_EQ(quiet.out.find('\r'), std::string::npos);
  Result forced = tiresias::testing::RunCommandLine("TIRESIAS_PROGRESS=1 " +
                                                    std::string(TIRESIAS_BINARY) + " " + sim);
  EXPECT_NE(forced.out.find("of 20000 jobs ended"), std::string::npos) << forced.out;
  EXPECT_NE(forced.out.find("s left"), std::string::npos) << forced.out;
  EXPECT_NE(forced.out.find("simulated day "), std::string::npos) << forced.out;
  // A real pseudo-terminal, default settings: the summary is printed after the line is cleared.
  Result tty = tiresias::testing::RunCommandLine("script -qec '" + std::string(TIRESIAS_BINARY) +
                                                 " " + sim + "' /dev/null");
  EXPECT_EQ(tty.rc, 0) << tty.out;
  EXPECT_NE(tty.out.find("JCT"), std::string::npos) << tty.out;
  EXPECT_EQ(tiresias::Progress::Line(tiresias::Seconds(86400 * 3 / 2), 50, 200, 2.0),
            "simulated day 1.5, 50 of 200 jobs ended, 2.0 s, about 6.0 s left");
  EXPECT_EQ(tiresias::Progress::Line(tiresias::Seconds(86400), 200, 200, 2.0),
            "simulated day 1.0, 200 of 200 jobs ended, 2.0 s");
}

// The report of the full Philly trace, four runs, stays far under 5 MB (it carries reduced
// CDFs and series, not the jobs), and text in it cannot end its script blocks.
TEST(Cli, ReportOfTheFullPhillyTraceIsSmall) {
  const std::string philly = std::string(TIRESIAS_SHARED_DIR) + "/traces/philly.csv";
  if (!std::filesystem::exists(philly)) GTEST_SKIP() << philly << " is absent (../shared)";
  auto dir = TempDir("report");
  const auto html = dir / "r.html";
  Result r = Tiresias("compare --trace " + philly + " --cluster 8x32x8 --policies fifo,dlas " +
                      "--report " + html.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("wrote " + html.string()), std::string::npos) << r.out;
  const auto size = std::filesystem::file_size(html);
  EXPECT_LT(size, 5u << 20);
  std::ifstream in(html);
  std::stringstream page;
  page << in.rdbuf();
  EXPECT_NE(page.str().find("<script id=\"report-data\" type=\"application/json\">"),
            std::string::npos);
  EXPECT_NE(page.str().find("\"label\":\"dlas+tiresias\""), std::string::npos);
}

TEST(Cli, ReportTextCannotCloseItsScript) {
  const std::string page = tiresias::HtmlReport(
      {{"title", "</script><script>alert(1)</script>"}, {"runs", nlohmann::json::array()}}, "");
  EXPECT_EQ(page.find("</script><script>alert"), std::string::npos);
  EXPECT_NE(page.find("&lt;/script&gt;&lt;script&gt;alert(1)"), std::string::npos);  // title
  EXPECT_NE(page.find("\\u003c/script>\\u003cscript>alert(1)"), std::string::npos);  // data
}

// A misspelled command is named, with the nearest command of the same level: `simulate
// --trace x` got only "A subcommand is required ... did you mean trace?" (from the flag
// --trace), and `trace synthesize -o x` also "-o: no such option".
TEST(Cli, AnUnknownCommandIsNamedWithTheNearestOne) {
  for (const auto& [line, message] :
       {std::pair{"simulate --trace x", "simulate: no such command of tiresias; did you mean sim?"},
        {"trace synthesize -o x.csv",
         "synthesize: no such command of tiresias trace; did you mean synth?"},
        {"token frobnicate", "frobnicate: no such command of tiresias token (its commands: "}}) {
    const Result r = Tiresias(line);
    EXPECT_EQ(r.rc, 2) << line << ": " << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << line << ": " << r.out;
    EXPECT_EQ(r.out.find("did you mean trace?"), std::string::npos) << line << ": " << r.out;
    EXPECT_EQ(r.out.find("no such option"), std::string::npos) << line << ": " << r.out;
  }
}

// A serve that fails after it took the journal's lock leaves no empty database behind (a
// review: read-only commands then called the file "not a tiresias journal").
TEST(Cli, AServeThatFailsToStartLeavesNoEmptyDatabase) {
  auto dir = TempDir("serve_fails");
  std::filesystem::create_directories(dir / "tiresias.token");  // cannot be written
  Result r = Tiresias("serve --gpus 1 --port 0 --state-dir " + dir.string());
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("cannot write the API token"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "tiresias.db"));
}

// The paper's YARN-CS baseline by name (found by a tester: `--policy fifo` alone takes the
// default tiresias placement, a better baseline than the paper's): yarn-cs is fifo with
// consolidate placement, unless --placement says otherwise.
TEST(Cli, YarnCsIsFifoWithConsolidatePlacement) {
  auto dir = TempDir("yarn_cs");
  const std::string base = "sim --synthetic 20 --cluster 1x2x8 --speed off --policy yarn-cs ";
  for (const auto& [extra, placement] :
       {std::pair{"", "consolidate"}, std::pair{"--placement spread ", "spread"}}) {
    Result r = Tiresias(base + extra + "--out " + (dir / placement).string());
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find(std::string("fifo+") + placement + ": 20 jobs"), std::string::npos)
        << r.out;
    const auto config =
        nlohmann::json::parse(std::ifstream(dir / placement / "summary.json"))["config"];
    EXPECT_EQ(config["policy"], "fifo");
    EXPECT_EQ(config["placement"], placement);
  }
  Result two = Tiresias("sim --synthetic 20 --cluster 1x2x8 --policy fifo,dlas");
  EXPECT_EQ(two.rc, 2);
  EXPECT_NE(two.out.find("--policy fifo,dlas: one policy (compare runs several)"),
            std::string::npos)
      << two.out;
}

// compare's runs: an empty item, or a run given twice (its output replaced the other's), is
// refused; each run writes DIR/<run>, one run too (it wrote DIR itself, unlike --out's help).
TEST(Cli, CompareRunsAreEachGivenOnceAndWriteTheirOwnDirectory) {
  const std::string base = "compare --synthetic 20 --cluster 1x2x8 --speed off ";
  Result twice = Tiresias(base + "--runs fifo,fifo+tiresias");
  EXPECT_EQ(twice.rc, 2);
  EXPECT_NE(twice.out.find("error: run fifo+tiresias is given twice\n"), std::string::npos)
      << twice.out;
  Result both = Tiresias(base + "--policies dlas --runs dlas");
  EXPECT_EQ(both.rc, 2);
  EXPECT_NE(both.out.find("given twice (--policies and --runs together run both lists)"),
            std::string::npos)
      << both.out;
  Result empty = Tiresias(base + "--runs fifo,,dlas");
  EXPECT_EQ(empty.rc, 2);
  EXPECT_NE(empty.out.find("--runs fifo,,dlas: an empty item"), std::string::npos) << empty.out;
  auto dir = TempDir("compare_one");
  Result one = Tiresias(base + "--policies srtf --out " + dir.string());
  ASSERT_EQ(one.rc, 0) << one.out;
  EXPECT_TRUE(std::filesystem::exists(dir / "srtf+tiresias" / "summary.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "summary.json"));
}

// A run writing into a directory an earlier run wrote leaves none of the earlier run's files
// there (found by a tester: a fifo run's forecasts.csv stayed beside a dlas run's results).
TEST(Cli, AnEarlierRunsFilesDoNotStayInOut) {
  auto dir = TempDir("stale");
  const std::string base =
      "sim --synthetic 40 --cluster 1x1x4 --speed off --out " + dir.string() + " ";
  ASSERT_EQ(Tiresias(base + "--policy fifo --forecast-every 5").rc, 0);
  ASSERT_TRUE(std::filesystem::exists(dir / "forecasts.csv"));
  Result r = Tiresias(base + "--policy dlas");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "forecasts.csv"));
  EXPECT_TRUE(std::filesystem::exists(dir / "timeseries.csv"));
}

// With threshold_quantiles the queues and the thresholds derived from the history are in the
// summary too (found by a tester: both were absent), as the thresholds a run started with
// when the history grows online.
TEST(Cli, SummaryRecordsThresholdsDerivedFromQuantiles) {
  auto dir = TempDir("quantiles");
  std::ofstream(dir / "h.csv") << "duration\n10\n20\n30\n40\n";
  for (const std::string online : {"false", "true"}) {
    Result r = Tiresias(
        "sim --synthetic 20 --cluster 1x2x8 --speed off --policy dlas --opt "
        "threshold_quantiles=0.5 --opt history=" +
        (dir / "h.csv").string() + " --opt online=" + online + " --out " + (dir / online).string());
    ASSERT_EQ(r.rc, 0) << r.out;
    const auto p = nlohmann::json::parse(
        std::ifstream(dir / online / "summary.json"))["config"]["policy_options_in_effect"];
    EXPECT_EQ(p["queues"], "2") << p.dump();
    EXPECT_TRUE(p[online == "true" ? "thresholds_at_start" : "thresholds"].is_string()) << p.dump();
    EXPECT_FALSE(p.contains(online == "true" ? "thresholds" : "thresholds_at_start")) << p.dump();
  }
}

}  // namespace
