// Tests of the Slurm job's files (exec/slurm_batch.h): the job's variables as the batch script
// loads them, paths as sbatch takes them literally, the script's order of loading, which
// Slurm end is the recorded attempt's, and whether a run is where that attempt was placed.
#include "exec/slurm_batch.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "exec/subprocess.h"
#include "test_util.h"

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
  // A stop or kill serve sent before the script started (Slurm dropped it): it exits at once.
  const size_t stopped = script.find("${TIRESIAS_STOPPED:-}${TIRESIAS_KILLED:-}");
  ASSERT_NE(stopped, std::string::npos) << script;
  EXPECT_LT(attempt, stopped);
  EXPECT_LT(stopped, script.find("exec 'python3'"));
}

TEST(SlurmBatch, AScriptToldToStopBeforeItStartedRunsNothingAndAKilledOneEndsKilled) {
  // Slurm drops a signal sent before the batch script runs, so serve writes the stop into
  // slurm-attempt.env first. A stopped script exits 0 without running the command; a killed
  // one ends by signal 9, as a run killed while running does (before, it exited 0: serve read
  // the kill as killed live, and as a stop that checkpointed after a restart).
  const std::filesystem::path dir = testing::ScratchDir("slurm_batch_early_stop");
  const std::filesystem::path ran = dir / "ran";
  const std::string script_path = (dir / "slurm-batch.sh").string();
  std::ofstream(script_path) << BatchScript(
      {.job = JobId(7), .argv = {"touch", ran.string()}, .job_dir = dir.string()}, 1);
  std::ofstream(JobEnvFile(dir.string())) << "";
  const auto run = [&](const std::string& vars) {
    std::ofstream(AttemptFile(dir.string())) << "TIRESIAS_ATTEMPT=0\n" << vars;
    auto r = RunCommand({"/bin/bash", script_path}, std::chrono::seconds(10));
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : CommandResult{};
  };
  CommandResult r = run("TIRESIAS_STOPPED=1\n");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.signal, 0);
  EXPECT_NE(r.out.find("stopped before it started"), std::string::npos) << r.out;
  r = run("TIRESIAS_STOPPED=1\nTIRESIAS_KILLED=1\n");  // a stop, then its kill
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_FALSE(std::filesystem::exists(ran));
  // Before its first launch (the attempt file Prepare writes): a release by someone else
  // (the job's owner can) runs nothing. Regression: the file said only TIRESIAS_ATTEMPT=0,
  // and the command ran; this fails without UnlaunchedAttemptVars' stop.
  std::ofstream(AttemptFile(dir.string())) << UnlaunchedAttemptVars();
  auto unlaunched = RunCommand({"/bin/bash", script_path}, std::chrono::seconds(10));
  ASSERT_TRUE(unlaunched.ok()) << unlaunched.status().message();
  EXPECT_EQ(unlaunched->exit_code, 0) << unlaunched->Summary();
  EXPECT_NE(unlaunched->out.find("stopped before it started"), std::string::npos)
      << unlaunched->out;
  EXPECT_FALSE(std::filesystem::exists(ran));
  r = run("");
  EXPECT_TRUE(r.ok()) << r.Summary();
  EXPECT_TRUE(std::filesystem::exists(ran));
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

TEST(SlurmBatch, ARunIsTheRecordedAttemptsOnlyWhereThatAttemptWasPlaced) {
  // Attempt 1 was placed on b and c, 2 GPUs on c and 1 on b: its pin asks each node for 2.
  const std::map<std::string, std::string> vars = {
      {"TIRESIAS_ATTEMPT", "1"}, {"TIRESIAS_NODES", "c,b"}, {"TIRESIAS_PLACEMENT", "1:1,2:2"}};
  // Running there (either order), 2 GPUs held on each: its own.
  SlurmJob run{.state = "RUNNING", .nodes = {"b", "c"}, .node_gpus = {2, 2}};
  EXPECT_TRUE(PlacedAsRecorded(run, vars));
  // Slurm started it by itself, where the last pin (attempt 0's) put it: not attempt 1's.
  EXPECT_FALSE(PlacedAsRecorded(
      SlurmJob{.state = "RUNNING", .nodes = {"a", "b"}, .node_gpus = {2, 2}}, vars));
  EXPECT_FALSE(
      PlacedAsRecorded(SlurmJob{.state = "RUNNING", .nodes = {"b", "c"}, .node_gpus = {1, 1}},
                       vars));  // attempt 0 had 1 GPU a node
  // Pending, not held: pinned for it, or still for the attempt before.
  SlurmJob pinned{.state = "PENDING",
                  .required_nodes = {"b", "c"},
                  .required_nodes_known = true,
                  .gpus_per_node = 2};
  EXPECT_TRUE(PlacedAsRecorded(pinned, vars));
  pinned.gpus_per_node = 1;  // attempt 0's pin: 1 GPU a node
  EXPECT_FALSE(PlacedAsRecorded(pinned, vars));
  pinned.gpus_per_node = 2;
  pinned.required_nodes = {"a"};
  EXPECT_FALSE(PlacedAsRecorded(pinned, vars));
  pinned.state = "REQUEUED";  // going back to pending: the same
  EXPECT_FALSE(PlacedAsRecorded(pinned, vars));
  EXPECT_FALSE(PlacedAsRecorded(SlurmJob{.state = "PENDING", .required_nodes_known = true},
                                vars));  // never pinned
  // A Slurm that does not say (no required_nodes): cannot tell.
  EXPECT_TRUE(PlacedAsRecorded(SlurmJob{.state = "PENDING"}, vars));
  // More GPUs than the pin asked for on each node: its own (the surplus shows as held outside).
  run.node_gpus = {4, 4};
  EXPECT_TRUE(PlacedAsRecorded(run, vars));
  // Ending: Slurm lists only the nodes still completing, some of the attempt's: its own; a
  // node that is not the attempt's: not.
  EXPECT_TRUE(PlacedAsRecorded(SlurmJob{.state = "COMPLETING", .nodes = {"c"}}, vars));
  EXPECT_TRUE(PlacedAsRecorded(SlurmJob{.state = "COMPLETING"}, vars));
  EXPECT_FALSE(PlacedAsRecorded(SlurmJob{.state = "COMPLETING", .nodes = {"a"}}, vars));
  // Ended: where it ran; an end that never ran anywhere (cancelled pending) cannot tell.
  EXPECT_TRUE(PlacedAsRecorded(
      SlurmJob{.state = "FAILED", .nodes = {"c", "b"}, .node_gpus = {2, 2}}, vars));
  EXPECT_FALSE(PlacedAsRecorded(
      SlurmJob{.state = "FAILED", .nodes = {"a", "b"}, .node_gpus = {2, 2}}, vars));
  EXPECT_TRUE(PlacedAsRecorded(SlurmJob{.state = "CANCELLED"}, vars));
  // A file from before the nodes were recorded, or nodes Slurm wrote unreadably: cannot tell.
  EXPECT_TRUE(PlacedAsRecorded(pinned, {{"TIRESIAS_ATTEMPT", "1"}}));
  EXPECT_TRUE(PlacedAsRecorded(SlurmJob{.state = "RUNNING", .nodes_unreadable = true}, vars));
}

}  // namespace
}  // namespace tiresias
