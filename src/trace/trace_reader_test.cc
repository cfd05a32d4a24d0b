// Trace readers (src/trace/trace_reader.h) on small temp CSV files: the Tiresias and Philly
// formats, ordering by (submit, id), errors of the form "path:LINE: what" for malformed rows,
// ResolveCluster for "SxNxG" strings and spec CSVs, and the shared Philly trace when present.
#include "trace/trace_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace tiresias {
namespace {

// A CSV file in the temp directory, removed at the end of the test.
class TempCsv {
 public:
  explicit TempCsv(const std::string& content) {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    path_ = (std::filesystem::temp_directory_path() /
             (std::string("tiresias_") + info->name() + "_" + std::to_string(counter_++) + ".csv"))
                .string();
    std::ofstream(path_) << content;
  }
  ~TempCsv() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

const char* kTiresiasHeader =
    "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n";
const char* kPhillyHeader = "timestamp,duration,num_gpus,gpu_time,cluster\n";

// The error message of reading `content`, or "" when it parses.
std::string ErrorOf(const TempCsv& f) {
  auto t = ReadTrace(f.path());
  return t.ok() ? "" : t.status().message();
}

TEST(TiresiasTrace, ParsesAndSortsBySubmitThenId) {
  TempCsv f(std::string(kTiresiasHeader) +
            "2,4,30,100,vgg19,1800,10\n"
            "0,1,0,606,resnet50,164,30\n"
            "1,8,30,133, vgg11 ,147.5,23\n"
            "3,2,12.5,10,alexnet,121,5\n");
  auto t = ReadTrace(f.path());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->format, "tiresias");
  ASSERT_EQ(t->jobs.size(), 4u);
  // (submit, id): (0, 0), (12.5 s, 3), (30 s, 1), (30 s, 2).
  EXPECT_EQ(t->jobs[0].id, JobId(0));
  EXPECT_EQ(t->jobs[1].id, JobId(3));
  EXPECT_EQ(t->jobs[2].id, JobId(1));
  EXPECT_EQ(t->jobs[3].id, JobId(2));
  EXPECT_EQ(t->jobs[1].submit, 12500);  // seconds -> ms
  EXPECT_EQ(t->jobs[2].submit, 30000);
  EXPECT_EQ(t->jobs[2].gpus, 8);
  EXPECT_EQ(t->jobs[2].duration, 147500);
  EXPECT_EQ(t->jobs[2].model, "vgg11");  // trimmed
  EXPECT_EQ(t->jobs[0].model, "resnet50");
}

TEST(TiresiasTrace, UserVcAndNameColumnsAreKept) {
  // What `tiresias trace convert` writes: the Tiresias columns plus user, vc and name.
  TempCsv f(
      "job_id,num_gpu,submit_time,duration,model_name,user,vc,name\n"
      "0,2,0,60,resnet50,alice,vc1,application_17\n"
      "1,1,5,30,,bob,,\n");
  auto t = ReadTrace(f.path());
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->jobs.size(), 2u);
  EXPECT_EQ(t->jobs[0].user, "alice");
  EXPECT_EQ(t->jobs[0].vc, "vc1");
  EXPECT_EQ(t->jobs[0].name, "application_17");
  EXPECT_EQ(t->jobs[1].user, "bob");
  EXPECT_EQ(t->jobs[1].vc, "");
  EXPECT_EQ(t->jobs[1].model, "");
}

TEST(PhillyTrace, SubmitIsSecondsAfterEarliestAndIdIsRowNumber) {
  TempCsv f(std::string(kPhillyHeader) +
            "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
            "2017-10-09 06:13:03,2951.0,2,5902.0,6214e9\n"
            "\n"
            "2017-10-09 06:13:03,10,4,40,abc\n");
  auto t = ReadTrace(f.path());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->format, "philly");
  ASSERT_EQ(t->jobs.size(), 3u);
  // Earliest 06:13:03 (rows 1 and 2) is 0; row 0 is 48 min 52 s = 2932 s later.
  EXPECT_EQ(t->jobs[0].id, JobId(1));
  EXPECT_EQ(t->jobs[0].submit, 0);
  EXPECT_EQ(t->jobs[0].gpus, 2);
  EXPECT_EQ(t->jobs[0].duration, 2951000);
  EXPECT_EQ(t->jobs[0].vc, "6214e9");
  EXPECT_EQ(t->jobs[0].user, "");
  EXPECT_EQ(t->jobs[1].id, JobId(2));
  EXPECT_EQ(t->jobs[1].submit, 0);
  EXPECT_EQ(t->jobs[2].id, JobId(0));
  EXPECT_EQ(t->jobs[2].submit, 2932000);
  EXPECT_EQ(t->jobs[2].duration, 66000);
}

TEST(PhillyTrace, TimestampAcrossMidnightAndMonths) {
  TempCsv f(std::string(kPhillyHeader) +
            "2017-10-31 23:59:59,5,1,5,a\n"
            "2017-11-01 00:00:01,5,1,5,a\n");
  auto t = ReadTrace(f.path());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->jobs[1].submit, 2000);  // 2 s later, next month
}

TEST(TraceErrors, BadNumGpu) {
  TempCsv f(std::string(kTiresiasHeader) + "0,1,0,1,m,10,1\n1,x,0,1,m,10,1\n");
  EXPECT_EQ(ErrorOf(f), f.path() + ":3: num_gpu 'x' is not a positive integer (at most 1000000)");
  TempCsv z(std::string(kTiresiasHeader) + "0,0,0,1,m,10,1\n");
  EXPECT_EQ(ErrorOf(z), z.path() + ":2: num_gpu '0' is not a positive integer (at most 1000000)");
  TempCsv p(std::string(kPhillyHeader) + "2017-10-09 07:01:55,66.0,2.5,66.0,a\n");
  EXPECT_EQ(ErrorOf(p),
            p.path() + ":2: num_gpus '2.5' is not a positive integer (at most 1000000)");
}

// Found by a tester: gpu_time was read by nothing, so a row whose gpu_time disagrees with its
// duration x num_gpus (one of the three wrong) went through silently. philly.csv's gpu_time
// is that product in every row; within 0.5 GPU-s passes, and an empty one is not given.
TEST(TraceErrors, PhillyGpuTimeMustBeDurationTimesGpus) {
  TempCsv f(std::string(kPhillyHeader) + "2017-10-09 07:01:55,66.0,1,999.0,a\n");
  EXPECT_EQ(ErrorOf(f), f.path() +
                            ":2: gpu_time '999.0' is not duration x num_gpus (66.0 x 1 = 66 "
                            "GPU-s): one of the three is wrong");
  TempCsv x(std::string(kPhillyHeader) + "2017-10-09 07:01:55,66.0,1,lots,a\n");
  EXPECT_NE(ErrorOf(x).find(":2: gpu_time 'lots' is not duration x num_gpus"), std::string::npos)
      << ErrorOf(x);
  TempCsv ok(std::string(kPhillyHeader) +
             "2017-10-09 07:01:55,66.5,2,133.4,a\n"
             "2017-10-09 07:01:56,10,3,,a\n");
  EXPECT_EQ(ErrorOf(ok), "");
}

TEST(TraceErrors, BadTimestamp) {
  TempCsv f(std::string(kPhillyHeader) + "2017-13-09 07:01:55,66.0,1,66.0,a\n");
  EXPECT_EQ(ErrorOf(f),
            f.path() + ":2: timestamp '2017-13-09 07:01:55' is not YYYY-MM-DD HH:MM:SS");
  TempCsv g(std::string(kPhillyHeader) + "2017-10-09T07:01:55,66.0,1,66.0,a\n");
  EXPECT_NE(ErrorOf(g).find(g.path() + ":2: timestamp"), std::string::npos) << ErrorOf(g);
  TempCsv h(std::string(kPhillyHeader) + "2017-02-30 07:01:55,66.0,1,66.0,a\n");
  EXPECT_NE(ErrorOf(h).find(h.path() + ":2: timestamp"), std::string::npos) << ErrorOf(h);
}

TEST(TraceErrors, NegativeTimeFieldsAreNotATimestamp) {
  TempCsv f(std::string(kPhillyHeader) + "2017-10-09 -1:00:00,66.0,1,66.0,a\n");
  EXPECT_NE(ErrorOf(f).find(f.path() + ":2: timestamp"), std::string::npos) << ErrorOf(f);
}

TEST(TraceErrors, WrongFieldCount) {
  TempCsv f(std::string(kTiresiasHeader) + "0,1,0,1,m,10\n");
  EXPECT_EQ(ErrorOf(f), f.path() + ":2: 6 fields, the header has 7");
  TempCsv p(std::string(kPhillyHeader) + "2017-10-09 07:01:55,66.0,1,66.0,a,extra\n");
  EXPECT_EQ(ErrorOf(p), p.path() + ":2: 6 fields, the header has 5");
}

TEST(TraceErrors, DuplicateJobId) {
  TempCsv f(std::string(kTiresiasHeader) + "7,1,0,1,m,10,1\n8,1,0,1,m,10,1\n7,2,5,1,m,10,1\n");
  EXPECT_EQ(ErrorOf(f), f.path() + ":4: duplicate job_id 7");
}

TEST(TraceErrors, LineNumbersCountBlankLines) {
  TempCsv f(std::string(kTiresiasHeader) + "\n0,1,0,1,m,10,1\n\n1,1,-3,1,m,10,1\n");
  EXPECT_EQ(ErrorOf(f), f.path() +
                            ":5: submit_time '-3' is not a time in seconds in [0, 315360000] "
                            "(ten years)");
  TempCsv d(std::string(kTiresiasHeader) + "0,1,0,1,m,0,1\n");
  EXPECT_EQ(ErrorOf(d), d.path() +
                            ":2: duration '0' is not a positive number of seconds in "
                            "(0, 315360000] (ten years)");
  // A positive duration below half a millisecond says that it rounds to 0 (found by a tester:
  // "not a positive number").
  TempCsv tiny(std::string(kTiresiasHeader) + "0,1,0,1,m,0.0001,1\n");
  EXPECT_EQ(ErrorOf(tiny),
            tiny.path() + ":2: duration '0.0001' rounds to 0 ms: times are kept in milliseconds");
}

// Values that parse as numbers but make no sense as a workload (found by fuzz/trace_fuzzer
// and history_fuzzer: in ms, times the GPUs, they overflowed int64 downstream) are refused
// with the range: durations and submit times beyond ten years, more GPUs than any cluster.
TEST(TraceErrors, NumbersBeyondTheBoundsAreRefused) {
  TempCsv d(std::string(kTiresiasHeader) + "0,1,0,1,m,1e13,1\n");
  EXPECT_EQ(ErrorOf(d), d.path() +
                            ":2: duration '1e13' is not a positive number of seconds in "
                            "(0, 315360000] (ten years)");
  TempCsv s(std::string(kTiresiasHeader) + "0,1,315360000.5,1,m,10,1\n");
  EXPECT_NE(ErrorOf(s).find(s.path() + ":2: submit_time '315360000.5'"), std::string::npos)
      << ErrorOf(s);
  TempCsv g(std::string(kTiresiasHeader) + "0,1000001,0,1,m,10,1\n");
  EXPECT_NE(ErrorOf(g).find(g.path() + ":2: num_gpu '1000001'"), std::string::npos) << ErrorOf(g);
  TempCsv ok(std::string(kTiresiasHeader) + "0,1000000,315360000,1,m,315360000,1\n");
  EXPECT_EQ(ErrorOf(ok), "");
  // Philly: submit times are offsets from the earliest row; the row too far away is named.
  TempCsv p(std::string(kPhillyHeader) +
            "2017-10-09 07:01:55,66.0,1,66.0,a\n"
            "1990-01-01 00:00:00,5,1,5,a\n"
            "2017-10-09 07:01:56,66.0,1,66.0,a\n");
  EXPECT_EQ(ErrorOf(p), p.path() +
                            ":2: timestamp is 876380515 s after the trace's earliest, more than "
                            "ten years (315360000 s)");
}

TEST(TraceReader, AUtf8ByteOrderMarkIsSkipped) {
  TempCsv f("\xEF\xBB\xBF" + std::string(kTiresiasHeader) + "0,1,0,1,m,10,1\n");
  auto t = ReadTrace(f.path());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->format, "tiresias");
  EXPECT_EQ(t->jobs.size(), 1u);
}

TEST(TraceReader, ADirectoryIsRefusedWithTheReason) {
  const auto dir = std::filesystem::temp_directory_path();
  auto t = ReadTrace(dir.string());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), dir.string() + ": is a directory, expected a CSV file");
  auto c = ResolveCluster(dir.string());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), dir.string() + ": is a directory, expected a CSV file");
}

TEST(TraceErrors, UnknownHeaderMissingColumnNoFile) {
  TempCsv f("a,b,c\n1,2,3\n");
  std::string e = ErrorOf(f);
  EXPECT_EQ(e.rfind(f.path() + ":1: unknown trace format (header: a,b,c)", 0), 0u) << e;
  // A binary file's first bytes are escaped and cut, not sent to the terminal as they are.
  TempCsv binary(std::string("\x1b[2J\x7f\xff") + std::string(300, 'x') + "\n");
  e = ErrorOf(binary);
  EXPECT_NE(e.find("(header: \\x1b[2J\\x7f\\xffxxx"), std::string::npos) << e;
  EXPECT_NE(e.find("xxx...)"), std::string::npos) << e;
  EXPECT_EQ(e.find('\x1b'), std::string::npos) << e;
  TempCsv m("job_id,num_gpu,duration\n0,1,10\n");
  EXPECT_EQ(ErrorOf(m).rfind(m.path() + ":1: missing column 'submit_time'", 0), 0u) << ErrorOf(m);
  TempCsv empty("");
  EXPECT_NE(ErrorOf(empty).find("empty file"), std::string::npos) << ErrorOf(empty);
  auto none = ReadTrace("/nonexistent/tiresias_trace.csv");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kIoError);
  EXPECT_EQ(none.status().message(),
            "/nonexistent/tiresias_trace.csv: cannot open: No such file or directory");
}

TEST(TraceReader, ReadsFromANamedPipe) {
  // A pipe (e.g. `--trace <(zcat trace.csv.gz)`) has no size to seek to.
  auto path = std::filesystem::temp_directory_path() / "tiresias_trace_fifo_test.csv";
  std::filesystem::remove(path);
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  std::thread writer([&] {
    sigset_t set;  // a reader that gives up early must not kill the test with SIGPIPE
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    int fd = open(path.c_str(), O_WRONLY);
    if (fd < 0) return;
    std::string data = std::string(kTiresiasHeader) + "0,1,0,1,m,10,1\n";
    ssize_t n = write(fd, data.data(), data.size());
    (void)n;
    close(fd);
  });
  std::string error;
  size_t jobs = 0;
  try {
    auto t = ReadTrace(path.string());
    if (t.ok()) jobs = t->jobs.size();
    if (!t.ok()) error = t.status().message();
  } catch (const std::exception& e) {
    error = std::string("exception: ") + e.what();
  }
  writer.join();
  std::filesystem::remove(path);
  EXPECT_EQ(error, "");
  EXPECT_EQ(jobs, 1u);
}

TEST(TraceWindow, KeepsJobsInRangeShiftedToZero) {
  std::vector<JobSpec> jobs;
  for (int i = 0; i < 5; ++i) jobs.push_back({.id = JobId(i), .submit = Seconds(10 * i)});
  auto w = Window(jobs, Seconds(10), Seconds(40));  // submits 10, 20, 30 (40 excluded)
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].id, JobId(1));
  EXPECT_EQ(w[0].submit, 0);
  EXPECT_EQ(w[2].id, JobId(3));
  EXPECT_EQ(w[2].submit, Seconds(20));
  EXPECT_TRUE(Window(jobs, Seconds(100), Seconds(200)).empty());
}

TEST(ResolveCluster, DimensionString) {
  auto t = ResolveCluster("2x4x8");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->switches(), 2);
  EXPECT_EQ(t->nodes_per_switch(), 4);
  EXPECT_EQ(t->gpus_per_node(), 8);
  EXPECT_EQ(t->total_gpus(), 64);
  EXPECT_EQ(t->str(), "2x4x8");
}

TEST(ResolveCluster, ASpecFileHoldsOneCluster) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tiresias_cluster_rows_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string one = (dir / "one.csv").string(), two = (dir / "two.csv").string();
  std::ofstream{one} << "num_switch,num_node_p_switch,num_gpu_p_node\n1,2,4\n";
  std::ofstream{two} << "num_switch,num_node_p_switch,num_gpu_p_node\n1,2,4\n1,4,4\n";
  ASSERT_TRUE(ResolveCluster(one).ok());
  EXPECT_EQ(ResolveCluster(one)->str(), "1x2x4");
  auto t = ResolveCluster(two);  // (its second row was dropped without a word)
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            two + ":3: a second cluster row: a cluster spec file holds one cluster");
  std::filesystem::remove_all(dir);
}

TEST(ResolveCluster, BadStrings) {
  auto a = ResolveCluster("2x4");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("expected SWITCHESxNODESxGPUS"), std::string::npos)
      << a.status().message();
  // A spec file that is not there is said so (it was "expected SWITCHESxNODESxGPUS").
  for (const char* missing : {"nosuch.csv", "/no/such/dir/n2g4"}) {
    auto m = ResolveCluster(missing);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().message(),
              fmt::format("cluster '{}': no such file (a cluster is SWITCHESxNODESxGPUS such as "
                          "8x32x8, or a cluster spec CSV file)",
                          missing));
  }
  auto b = ResolveCluster("2xax8");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(), "cluster '2xax8': 'a' is not a positive integer");
  auto c = ResolveCluster("1x1x65");  // a node's GPUs are a 64-bit mask
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("at most 64"), std::string::npos) << c.status().message();
}

// --cluster 100000x100000x64 used to run out of memory; a cluster above kMaxClusterGpus is
// refused with the bound, however its dimensions are written (no int overflow on the way).
TEST(ResolveCluster, RefusesClustersBeyondTheBound) {
  auto big = ResolveCluster("100000x100000x64");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().message(),
            "cluster 100000x100000x64: 640000000000 GPUs, at most 1000000 supported");
  EXPECT_FALSE(ResolveCluster("1000000x1000000x1").ok());
  EXPECT_FALSE(ResolveCluster("1000x1000x2").ok());
  auto edge = ResolveCluster("1000x1000x1");
  ASSERT_TRUE(edge.ok()) << edge.status().message();
  EXPECT_EQ(edge->total_gpus(), kMaxClusterGpus);
  TempCsv f("num_switch,num_node_p_switch,num_gpu_p_node\n1000,1000,64\n");
  auto csv = ResolveCluster(f.path());
  ASSERT_FALSE(csv.ok());
  EXPECT_NE(csv.status().message().find("at most 1000000 supported"), std::string::npos);
}

TEST(ResolveCluster, SpecCsv) {
  TempCsv f(
      "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n1,2,4,40,256\n");
  auto t = ResolveCluster(f.path());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->str(), "1x2x4");
  EXPECT_EQ(t->total_gpus(), 8);
  TempCsv bad("num_switch,num_node_p_switch,num_gpu_p_node\n1,2,0\n");
  auto b = ResolveCluster(bad.path());
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(), bad.path() + ":2: num_gpu_p_node '0' is not a positive integer");
  TempCsv header_only("num_switch,num_node_p_switch,num_gpu_p_node\n");
  EXPECT_FALSE(ResolveCluster(header_only.path()).ok());
}

TEST(SharedTraces, PhillyHas82247Jobs) {
  const std::string path = std::string(TIRESIAS_SHARED_DIR) + "/traces/philly.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent";
  auto t = ReadTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->format, "philly");
  ASSERT_EQ(t->jobs.size(), 82247u);
  EXPECT_EQ(t->jobs.front().submit, 0);
  for (size_t i = 1; i < t->jobs.size(); ++i) {
    const auto &a = t->jobs[i - 1], &b = t->jobs[i];
    ASSERT_TRUE(a.submit < b.submit || (a.submit == b.submit && a.id < b.id)) << "row " << i;
  }
}

}  // namespace
}  // namespace tiresias
