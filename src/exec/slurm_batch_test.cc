// Tests of the Slurm job's files (exec/slurm_batch.h): the job's variables as the batch script
// loads them, paths as sbatch takes them literally, the script's order of loading, and which
// Slurm end is the recorded attempt's.
#include "exec/slurm_batch.h"

#include <gtest/gtest.h>

namespace tiresias {
namespace {

TEST(SlurmBatch, JobVariablesAreQuotedAndSlurmsOwnOrUnexportableOnesLeftOut) {
  // A value with a quote, a dollar and a newline survives bash; SLURM_*/SBATCH_* would change
  // Slurm's tools; "A B" and "1X" are no bash names.
  const std::string text = JobEnvText({{"GREETING", "it's $X\nnext"},
                                       {"SLURM_CONF", "/x"},
                                       {"SBATCH_ACCOUNT", "a"},
                                       {"A B", "c"},
                                       {"1X", "d"},
                                       {"_ok9", ""}});
  EXPECT_EQ(text, "export GREETING='it'\\''s $X\nnext'\nexport _ok9=''\n");
}

TEST(SlurmBatch, PercentSignsInAPathAreTakenLiterallyBySbatch) {
  EXPECT_EQ(SlurmLiteral("/logs/50%j-%%.out"), "/logs/50%%j-%%%%.out");
  EXPECT_EQ(SlurmLiteral("/plain.log"), "/plain.log");
}

TEST(SlurmBatch, TheScriptLoadsTheJobsVariablesBeforeTheAttemptsAndTiresias) {
  // The scheduler's variables win over the job's: slurm-job.env first, then the attempt's,
  // then TIRESIAS_*.
  const std::string script =
      BatchScript({.job = JobId(7), .argv = {"python3", "train.py"}, .job_dir = "/s/jobs/7"}, 2);
  const size_t job_env = script.find(". '/s/jobs/7/slurm-job.env'\n");
  const size_t attempt = script.find(". '/s/jobs/7/slurm-attempt.env'\n");
  const size_t ours = script.find("export TIRESIAS_JOB_ID=7");
  ASSERT_NE(job_env, std::string::npos) << script;
  ASSERT_NE(attempt, std::string::npos) << script;
  ASSERT_NE(ours, std::string::npos) << script;
  EXPECT_LT(job_env, attempt);
  EXPECT_LT(attempt, ours);
  EXPECT_NE(script.find("exec 'python3' 'train.py'\n"), std::string::npos) << script;
}

TEST(SlurmBatch, AnEndIsTheRecordedAttemptsOnlyAtOrPastItsRestartCount) {
  // Attempt 1 was recorded for restart count 1 (attempt 0 ended at 0; the launch requeues it
  // first). An end at 0 is attempt 0's (the launch was cut off before the requeue); at 1 its
  // own; at 2 its own after a requeue of Slurm's (a node failure while serve was down). A file
  // without the count (from an older serve) cannot tell: yes.
  const std::map<std::string, std::string> vars = {{"TIRESIAS_ATTEMPT", "1"},
                                                   {"TIRESIAS_SLURM_RESTARTS", "1"}};
  EXPECT_FALSE(OfRecordedRun(vars, 0));
  EXPECT_TRUE(OfRecordedRun(vars, 1));
  EXPECT_TRUE(OfRecordedRun(vars, 2));
  EXPECT_TRUE(OfRecordedRun({{"TIRESIAS_ATTEMPT", "1"}}, 0));
}

}  // namespace
}  // namespace tiresias
