// Tests of the Slurm job's files (exec/slurm_batch.h): the job's variables as the batch script
// loads them, paths as sbatch takes them literally, and the script's order of loading.
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

}  // namespace
}  // namespace tiresias
