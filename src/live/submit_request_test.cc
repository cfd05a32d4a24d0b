// Validate: every rule a submission meets, each refusal naming the field and the value.
#include "live/submit_request.h"

#include <gtest/gtest.h>

namespace tiresias {
namespace {

SubmitRequest Ok() {
  return SubmitRequest{.gpus = 2, .argv = {"train.sh"}, .env = {{"LR", "0.1"}}};
}

std::string Why(const SubmitRequest& r) {
  Status s = Validate(r);
  EXPECT_TRUE(s.ok() || s.code() == StatusCode::kInvalidArgument);
  return s.ok() ? "" : s.message();
}

TEST(SubmitRequest, ValidRequestPasses) {
  EXPECT_EQ(Why(Ok()), "");
  SubmitRequest r = Ok();
  r.duration_s = 3600;
  EXPECT_EQ(Why(r), "");
  EXPECT_EQ(r.duration(), Seconds(3600));
}

TEST(SubmitRequest, SlurmsWordsForNoTimeLimitMeanNone) {
  // sbatch -t 0, -t UNLIMITED, -t INFINITE (any case) and -1: no limit, as in Slurm; also
  // zero in Slurm's other forms (found by a tester: 00:00 was "must be 1 s to ten years").
  for (const char* none :
       {"0", "-1", "UNLIMITED", "infinite", "Unlimited", "00:00", "0:0:0", "0-0", "0-00:00:00"}) {
    SubmitRequest r = Ok();
    r.time = none;
    EXPECT_EQ(Why(r), "") << none;
    auto plan = Plan(r);
    ASSERT_TRUE(plan.ok()) << none;
    EXPECT_FALSE(plan->time_limit) << none;
  }
  SubmitRequest r = Ok();
  r.time = "0:30";
  ASSERT_TRUE(Plan(r).ok());
  EXPECT_EQ(Plan(r)->time_limit, Seconds(30));
}

TEST(SubmitRequest, EachRuleNamesItsFieldAndValue) {
  SubmitRequest r = Ok();
  r.argv.clear();
  EXPECT_EQ(Why(r), "field 'argv': missing (the command to run)");
  r = Ok();
  r.argv = {""};
  EXPECT_EQ(Why(r), "field 'argv': missing (the command to run)");
  r = Ok();
  r.gpus = 0;
  EXPECT_EQ(Why(r), "field 'gpus': expected an integer in 1..1048576, got 0");
  r.gpus = 4294967297;  // would wrap to 1 in an int
  EXPECT_EQ(Why(r), "field 'gpus': expected an integer in 1..1048576, got 4294967297");
  r = Ok();
  r.duration_s = 0;
  EXPECT_NE(Why(r).find("field 'duration_s'"), std::string::npos);
  r.duration_s = 1e300;
  EXPECT_NE(Why(r).find("got 1e+300"), std::string::npos) << Why(r);
  r.duration_s = 1e-9;  // found by a review: stored as 0 ms, no estimate at all
  EXPECT_EQ(Why(r), "");
  EXPECT_EQ(r.duration(), 1);
  r.duration_s = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(Why(r).find("field 'duration_s'"), std::string::npos);
  r = Ok();
  r.env = {{"A=B", "x"}};
  EXPECT_EQ(Why(r), "field 'env': 'A=B' is not a variable name");
  r.env = {{"RANK", "7"}};
  EXPECT_EQ(Why(r), "field 'env': RANK is set by the scheduler for each run and cannot be given");
  // Any of the prefix, whether or not the scheduler sets it (it said so of TIRESIAS_FOO).
  r.env = {{"TIRESIAS_FOO", "7"}};
  EXPECT_EQ(Why(r),
            "field 'env': TIRESIAS_FOO: the TIRESIAS_ prefix is the scheduler's own (it sets such "
            "variables for each run); choose another name");
  r.env = {{"MASTER_PORT", "1"}};
  EXPECT_NE(Why(r).find("set by the scheduler"), std::string::npos);
  for (const char* name : {"RANK", "LOCAL_RANK", "PET_MASTER_PORT", "PET_NPROC_PER_NODE"}) {
    r.env = {{name, "1"}};
    EXPECT_NE(Why(r).find("set by the scheduler"), std::string::npos) << name;
  }
  r.env = {{"PET_MAX_RESTARTS", "3"}, {"RANKING", "x"}};  // torchrun's others are the job's
  EXPECT_EQ(Why(r), "");
  r = Ok();
  r.cwd = "data/run1";  // found by a review: it ran relative to serve's own directory
  EXPECT_EQ(Why(r), "field 'cwd': 'data/run1' is not an absolute path");
  r.cwd = "/data/run1";
  EXPECT_EQ(Why(r), "");
  r = Ok();
  r.tasks_per_gpu = 1;
  EXPECT_EQ(Why(r), "");
  r.tasks_per_gpu = 2;
  EXPECT_EQ(Why(r),
            "field 'tasks_per_gpu': expected 0 (one process for all the job's GPUs) or 1 (one "
            "process per GPU), got 2");
  r.tasks_per_gpu = -1;
  EXPECT_NE(Why(r).find("got -1"), std::string::npos);
}

// Found by a review: array indices past INT_MAX wrapped (2147483648 became -2^31, and that
// task lost its array id), and one 200 KB request of 10,000 tasks stored 400 MB.
TEST(SubmitRequest, ArrayIndicesAndSizesAreBounded) {
  SubmitRequest r = Ok();
  r.array = "2147483647-2147483648";
  EXPECT_EQ(Why(r),
            "field 'array': '2147483647-2147483648': index 2147483648 is over the largest, "
            "4000000 (e.g. 0-99, 0-99%8, 1,3,5-7, 0-15:4)");
  r.array = "4294967296";
  EXPECT_NE(Why(r).find("is over the largest"), std::string::npos);
  r.array = "3999999-4000000";
  EXPECT_EQ(Why(r), "");
  r = Ok();
  r.name = std::string(kMaxNameBytes + 1, 'x');
  EXPECT_EQ(Why(r), "field 'name': 1025 bytes, more than the 1024 allowed");
  r = Ok();
  r.cwd = "/" + std::string(kMaxPathBytes, 'd');
  EXPECT_EQ(Why(r), "field 'cwd': 4097 bytes, more than the 4096 allowed");
  r = Ok();
  r.argv = {"sh", std::string(kMaxArgvBytes, 'a')};
  EXPECT_NE(Why(r).find("field 'argv'"), std::string::npos);
  r = Ok();
  r.env = {{"X", std::string(kMaxEnvBytes, 'v')}};
  EXPECT_NE(Why(r).find("field 'env'"), std::string::npos);
  // 10,000 tasks of a 20 KB environment: 200 MB stored; 100 of them are fine.
  r = Ok();
  r.env = {{"X", std::string(20000, 'v')}};
  r.array = "0-9999";
  EXPECT_NE(Why(r).find("10000 tasks of"), std::string::npos) << Why(r);
  r.array = "0-99";
  EXPECT_EQ(Why(r), "");
}

// Regression (an exploratory test): a command beginning with a shell's assignment (`B=2 true`)
// was accepted and failed at its launch, exec finding no program "B=2".
TEST(SubmitRequest, ACommandBeginningWithAnAssignmentIsRefused) {
  SubmitRequest r = Ok();
  r.argv = {"B_2=x", "true"};
  EXPECT_EQ(Why(r),
            "field 'argv': its first word 'B_2=x' is a variable's assignment, not a program: set "
            "it in 'env', or run the command through env (argv [\"env\", \"B_2=x\", ...])");
  for (const std::string first : {"env", "./a=b", "=x", "1A=2", "/usr/bin/a=b"}) {
    r.argv = {first, "B=2"};  // a program, or a path with '=' in it: not an assignment
    EXPECT_EQ(Why(r), "") << first;
  }
}

// Found while writing fuzz/submit_fuzzer's properties (the input is in its corpus):
// "1\u0000; rm -rf /" passed Validate, and execve would have run `sleep 1`, silently not what
// was asked. Every string that reaches execve is refused with a NUL byte in it.
TEST(SubmitRequest, NulBytesThatExecveWouldCutAreRefused) {
  using namespace std::string_literals;
  SubmitRequest r = Ok();
  r.argv = {"sleep", "1\0; rm -rf /"s};
  EXPECT_EQ(Why(r), "field 'argv': argument 1 contains a NUL byte");
  r = Ok();
  r.cwd = "/tmp\0/x"s;
  EXPECT_EQ(Why(r), "field 'cwd': contains a NUL byte");
  r = Ok();
  r.env = {{"LR", "0.1\0x"s}};
  EXPECT_EQ(Why(r), "field 'env': the value of LR contains a NUL byte");
}

TEST(SubmitRequest, ADependencyNamesAJobAnArrayOrOneTaskOfIt) {
  // Slurm's JOB_TASK: afterok:16_3 waits for task 3 of array 16 alone (16 is every task).
  // Found by exploratory use: it was refused, and task 0 (whose id is the array's) could not
  // be waited for alone.
  SubmitRequest r = Ok();
  // `singleton` (sbatch's) names no job.
  r.dependency = "afterok:12:16_3,afternotok:16_0,singleton";
  auto plan = Plan(r);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  using K = Dependency::Kind;
  EXPECT_EQ(plan->dependencies, (std::vector<Dependency>{{K::kAfterOk, JobId(12)},
                                                         {K::kAfterOk, JobId(16), 3},
                                                         {K::kAfterNotOk, JobId(16), 0},
                                                         {K::kSingleton}}));
  // Written as it was given, and read back so (the store's JSON form).
  EXPECT_EQ(ToString(plan->dependencies[1]), "afterok:16_3");
  EXPECT_EQ(ToString(plan->dependencies[3]), "singleton");
  JobRecord rec;
  rec.dependencies = plan->dependencies;
  JobRecord back;
  RequestFromJson(RequestToJson(rec), back);
  EXPECT_EQ(back.dependencies, plan->dependencies);
  for (const char* bad :
       {"afterok:16_", "afterok:16_x", "afterok:_3", "afterok:+3", "afterok:3 ", "afterok:16_-1"}) {
    r.dependency = bad;
    EXPECT_NE(Why(r).find("is not a job id (ID, or ID_INDEX: one array task)"), std::string::npos)
        << bad << ": " << Why(r);
  }
  for (const char* bad : {"singleton:3", "singletons", "singleton:"}) {
    r.dependency = bad;
    EXPECT_FALSE(Plan(r).ok()) << bad;
  }
}

TEST(SubmitRequestTest, OutputPatternsExpandAsSbatchDoes) {
  // A job that is no array's task: %a is Slurm's NO_VAL (as sbatch writes it: it was -1) and
  // %A the job's own id; an array's task 7 of array 40 (job 47): its index and the array's id.
  EXPECT_EQ(ExpandOutputPattern("o-%j-%a-%A-%u-%x-%%-%q.log", 12, 12, -1, "ann", "train"),
            "o-12-4294967294-12-ann-train-%-q.log");
  EXPECT_EQ(ExpandOutputPattern("%A_%a.out", 47, 40, 7, "ann", "train"), "40_7.out");
  EXPECT_EQ(ExpandOutputPattern("trailing%", 1, 1, -1, "u", "n"), "trailing%");
}

}  // namespace
}  // namespace tiresias
