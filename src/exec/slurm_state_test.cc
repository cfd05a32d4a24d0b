// Parsing the Slurm client tools' output: squeue/sinfo --json captured from a real Slurm
// 22.05 cluster (tests/data/slurm: a 2-node job of tiresias's, a job outside it, a held job, a
// failed one; a node that went down) and documents in the shapes of 23.02 and later, hostlists,
// GRES strings, versions and the configuration checklist.
#include "exec/slurm_state.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace tiresias {
namespace {

std::string Data(const std::string& name) {
  return testing::ReadAll(std::string(TIRESIAS_TEST_DATA) + "/slurm/" + name);
}

TEST(SlurmState, SqueueJsonOfARealCluster) {
  auto jobs = ParseSqueueJson(Data("squeue_22.05.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 4u);
  // Job 1: tiresias's, pinned to node[2-3] with 3 GPUs on each.
  const SlurmJob& a = (*jobs)[0];
  EXPECT_EQ(a.id, 1);
  EXPECT_EQ(a.comment, "tiresias:1:5");
  // Its batch script: what identifies it once its owner changed the comment.
  EXPECT_EQ(a.command, "/tmp/slurm-tmp/c1/jobs/t.sh");
  EXPECT_EQ(a.state, "RUNNING");
  EXPECT_EQ(a.nodes, (std::vector<std::string>{"node2", "node3"}));
  EXPECT_EQ(a.node_gpus, (std::vector<int>{3, 3}));
  EXPECT_EQ(a.required_nodes, (std::vector<std::string>{"node2", "node3"}));  // its pin
  EXPECT_EQ(a.gpus_per_node, 3);
  EXPECT_TRUE(a.required_nodes_known);
  EXPECT_FALSE(a.held);
  // Job 2: outside tiresias, 1 GPU on node1.
  EXPECT_EQ((*jobs)[1].comment, "");
  EXPECT_EQ((*jobs)[1].node_gpus, std::vector<int>{1});
  // Job 3: held (priority 0), no nodes yet.
  EXPECT_TRUE((*jobs)[2].held);
  EXPECT_EQ((*jobs)[2].reason, "JobHeldUser");
  EXPECT_TRUE((*jobs)[2].nodes.empty());
  // Job 4: `exit 3` -> FAILED with wait status 3 << 8 = 768.
  EXPECT_EQ((*jobs)[3].state, "FAILED");
  EXPECT_EQ((*jobs)[3].wait_status, 768);
  EXPECT_TRUE(SlurmEnded((*jobs)[3].state));
  EXPECT_TRUE(SlurmActive("COMPLETING"));
  EXPECT_FALSE(SlurmActive("PENDING"));
  EXPECT_FALSE(SlurmEnded("PENDING"));
}

TEST(SlurmState, AnEndWhoseExitSlurmdHasNotReportedHasNoExitYet) {
  // Regression (CI): Slurm marks a job CANCELLED as soon as scancel --signal=KILL is asked
  // and records the batch script's end when slurmd reports it, seconds later on a loaded
  // node. Read before then, its 0:0 was an exit 0 (so serve's kill read as a clean exit).
  auto jobs = ParseSqueueJson(Data("squeue_23.11_shape.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  SlurmJob cancelled = (*jobs)[4];
  ASSERT_EQ(cancelled.state, "CANCELLED");
  EXPECT_EQ(RecordedEnd(cancelled).signal, 9);  // reported: killed by signal 9
  EXPECT_EQ(RecordedEnd(cancelled).exit_code, -1);
  cancelled.wait_status = 0;  // not reported yet
  EXPECT_EQ(RecordedEnd(cancelled).exit_code, -1);
  EXPECT_EQ(RecordedEnd(cancelled).signal, 0);
  // So is any end state's but COMPLETED's (a TIMEOUT is set when the limit hits, its end
  // reported later; a FAILED launch never ran): `exit 3` is 3, a completed job's 0 is 0.
  EXPECT_EQ(RecordedEnd((*jobs)[3]).exit_code, 3);
  SlurmJob ended = (*jobs)[3];
  for (const char* state : {"TIMEOUT", "FAILED", "NODE_FAIL"}) {
    ended.state = state;
    ended.wait_status = 0;
    EXPECT_EQ(RecordedEnd(ended).exit_code, -1) << state;
    EXPECT_EQ(RecordedEnd(ended).signal, 0) << state;
  }
  ended.state = "COMPLETED";
  EXPECT_EQ(RecordedEnd(ended).exit_code, 0);
  EXPECT_EQ(RecordedEnd(ended).signal, 0);
}

// Slurm 23.11's shapes (data_parser v0.0.40; 23.02 to 25.05 write these fields alike, see
// slurm_state.h): no cluster of those versions is at hand, so these documents were written
// after Slurm's parsers (src/plugins/data_parser/v0.0.4x/parsers.c) and recorded outputs of
// them; the jobs mirror squeue_22.05.json's, plus a killed and a completing job.
TEST(SlurmState, SqueueJsonInTheShapesOf23Point02AndLater) {
  auto jobs = ParseSqueueJson(Data("squeue_23.11_shape.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 6u);
  const SlurmJob& a = (*jobs)[0];
  EXPECT_EQ(a.state, "RUNNING");  // ["RUNNING"]
  EXPECT_EQ(a.comment, "tiresias:1:5");
  EXPECT_EQ(a.nodes, (std::vector<std::string>{"node2", "node3"}));
  EXPECT_EQ(a.node_gpus, (std::vector<int>{3, 3}));
  EXPECT_EQ(a.end_time, 1827607625);     // {"set": true, "number": ...}
  EXPECT_FALSE(a.required_nodes_known);  // not in these documents: placement is not checked
  EXPECT_FALSE(a.held);                  // priority {"number": 4294901759}
  EXPECT_EQ((*jobs)[1].user, "alice");
  EXPECT_TRUE((*jobs)[2].held);  // priority {"set": true, "number": 0}
  EXPECT_EQ((*jobs)[2].state, "PENDING");
  // exit_code {"status": ["ERROR"], "return_code": {"number": 3}}: wait status 3 << 8.
  EXPECT_EQ((*jobs)[3].state, "FAILED");
  EXPECT_EQ((*jobs)[3].wait_status, 768);
  // {"status": ["SIGNALED"], "signal": {"id": {"number": 9}}}: killed by signal 9.
  EXPECT_EQ((*jobs)[4].state, "CANCELLED");
  EXPECT_EQ((*jobs)[4].wait_status, 9);
  EXPECT_EQ((*jobs)[4].restarts, 2);
  // ["COMPLETED", "COMPLETING"]: still holding its node, as 22.05's single word says.
  EXPECT_EQ((*jobs)[5].state, "COMPLETING");
  EXPECT_TRUE(SlurmActive((*jobs)[5].state));
  EXPECT_EQ((*jobs)[5].node_gpus, std::vector<int>{1});
}

TEST(SlurmState, NodesJsonInTheShapesOf23Point02AndLater) {
  // `scontrol show nodes --json`: one entry per node, state as [base, flags...].
  auto nodes = ParseSinfoJson(Data("scontrol_nodes_23.11_shape.json"));
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 4u);
  EXPECT_EQ((*nodes)[0].state, "mixed");
  EXPECT_TRUE((*nodes)[0].flags.empty());
  EXPECT_EQ((*nodes)[0].gpus, 4);
  EXPECT_EQ((*nodes)[0].gpus_used, 1);
  EXPECT_TRUE((*nodes)[0].Usable());
  EXPECT_EQ((*nodes)[1].gpus_used, 4);
  EXPECT_EQ((*nodes)[2].state, "down");
  EXPECT_EQ((*nodes)[2].flags, std::vector<std::string>{"NOT_RESPONDING"});
  EXPECT_EQ((*nodes)[2].reason, "Not responding");
  EXPECT_FALSE((*nodes)[2].Usable());
  EXPECT_EQ((*nodes)[3].flags, std::vector<std::string>{"DRAIN"});
  EXPECT_EQ((*nodes)[3].reason, "ECC memory error");
  EXPECT_FALSE((*nodes)[3].Usable());
}

TEST(SlurmState, TheVersionChoosesHowNodesAreListedAndOldOnesAreRefused) {
  EXPECT_EQ(ParseSlurmVersion("slurm 22.05.8\n"), std::make_pair(22, 5));
  EXPECT_EQ(ParseSlurmVersion("slurm-wlm 23.11.4\n"), std::make_pair(23, 11));
  EXPECT_EQ(ParseSlurmVersion("slurm 24.05.0-0rc1"), std::make_pair(24, 5));
  EXPECT_FALSE(ParseSlurmVersion("sinfo: command not found"));
  EXPECT_EQ(NodesCommand({22, 5}), (std::vector<std::string>{"sinfo", "--json"}));
  EXPECT_EQ(NodesCommand({23, 2}),
            (std::vector<std::string>{"scontrol", "show", "nodes", "--json"}));
  EXPECT_EQ(SlurmVersionProblem({21, 8}), "");
  EXPECT_EQ(SlurmVersionProblem({25, 5}), "");
  EXPECT_NE(SlurmVersionProblem({20, 11}).find("older than 21.08"), std::string::npos);
  // GRES as 23.02 and later write tres_per_node.
  EXPECT_EQ(GpusInGres("gres/gpu:2"), 2);
  EXPECT_EQ(GpusInGres("gres/gpu:a100:4,gres/mps:100"), 4);
}

TEST(SlurmState, OneJobWithANodeListThatCannotBeReadCostsOnlyItsNodes) {
  // Regression: a hostlist the parser could not expand failed the whole snapshot, so serve
  // saw no job at all (and said Slurm was unreachable) for as long as that job lived.
  auto doc = nlohmann::json::parse(Data("squeue_22.05.json"));
  doc["jobs"][1]["nodes"] = "node[3-";
  auto jobs = ParseSqueueJson(doc.dump());
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 4u);
  EXPECT_TRUE((*jobs)[1].nodes.empty());
  EXPECT_TRUE((*jobs)[1].nodes_unreadable);
  EXPECT_EQ((*jobs)[1].nodelist, "node[3-");
  EXPECT_EQ((*jobs)[1].state, "RUNNING");
  EXPECT_FALSE((*jobs)[0].nodes_unreadable);
  EXPECT_EQ((*jobs)[0].nodes, (std::vector<std::string>{"node2", "node3"}));
}

TEST(SlurmState, SinfoJsonWithANodeDown) {
  auto nodes = ParseSinfoJson(Data("sinfo_22.05.json"));
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 4u);
  EXPECT_EQ((*nodes)[0].name, "node1");
  EXPECT_EQ((*nodes)[0].address, "127.0.0.1");
  EXPECT_EQ((*nodes)[0].gpus, 4);
  EXPECT_EQ((*nodes)[0].gpus_used, 1);
  EXPECT_EQ((*nodes)[0].partitions, std::vector<std::string>{"gpu"});
  EXPECT_TRUE((*nodes)[0].Usable());
  // node3's slurmd was killed: down, not responding.
  EXPECT_EQ((*nodes)[2].state, "down");
  EXPECT_EQ((*nodes)[2].flags, std::vector<std::string>{"NOT_RESPONDING"});
  EXPECT_EQ((*nodes)[2].reason, "Not responding");
  EXPECT_FALSE((*nodes)[2].Usable());
  // Drained nodes are not usable either, whatever the base state says.
  SlurmNode drained{.state = "idle", .flags = {"DRAIN"}};
  EXPECT_FALSE(drained.Usable());
  EXPECT_TRUE(SlurmNode{.state = "mixed"}.Usable());
  // A node that missed Slurm's pings ("idle*") but is not down stays usable: unusable
  // capacity evicts its jobs, and a missed ping is often transient (Slurm marks a dead node
  // down after SlurmdTimeout; SlurmTest.ANodeKilledMidRunLosesNoJob relies on that).
  EXPECT_TRUE((SlurmNode{.state = "idle", .flags = {"NOT_RESPONDING"}}.Usable()));
  // A node in an active reservation: tiresias's jobs do not ask for it (Slurm would keep them
  // pending there). UNKNOWN (slurmctld has not heard from it) is not usable by itself (the
  // executor keeps a node usable before usable for a while: KeepUsableWhileUnknown).
  EXPECT_FALSE((SlurmNode{.state = "idle", .flags = {"RESERVED"}}.Usable()));
  EXPECT_FALSE(SlurmNode{.state = "unknown"}.Usable());
  EXPECT_TRUE(IsUnknownState("unknown"));
  EXPECT_FALSE(IsUnknownState("idle"));
}

TEST(SlurmState, ANodeUsableBeforeStaysUsableWhileUnknownForTheGraceOnly) {
  // 60 s of grace. node1 usable at 0, UNKNOWN (slurmctld restarted) from 1 s: usable until
  // 61 s, not at 61 s. node2 UNKNOWN from the start (never usable): no grace. node3 usable,
  // then UNKNOWN and drained: no grace. node4 usable, gone from sinfo (Forget), back UNKNOWN:
  // no grace. node1 idle again, then UNKNOWN again at 100 s: a new grace.
  using std::chrono::seconds;
  UnknownNodeGrace g(seconds(60));
  const UnknownNodeGrace::Clock::time_point t0{};
  const SlurmNode idle1{.name = "node1", .state = "idle"},
      unknown1{.name = "node1", .state = "unknown"};
  EXPECT_TRUE(g.Usable(idle1, true, t0));
  EXPECT_TRUE(g.Usable(unknown1, false, t0 + seconds(1)));
  EXPECT_TRUE(g.Usable(unknown1, false, t0 + seconds(60)));
  EXPECT_FALSE(g.Usable(unknown1, false, t0 + seconds(61)));
  EXPECT_FALSE(g.Usable(unknown1, false, t0 + seconds(62)));  // stays unusable
  EXPECT_FALSE(g.Usable({.name = "node2", .state = "unknown"}, false, t0));
  EXPECT_TRUE(g.Usable({.name = "node3", .state = "idle"}, true, t0));
  EXPECT_FALSE(
      g.Usable({.name = "node3", .state = "unknown", .flags = {"DRAIN"}}, false, t0 + seconds(1)));
  EXPECT_TRUE(g.Usable({.name = "node4", .state = "idle"}, true, t0));
  g.Forget("node4");
  EXPECT_FALSE(g.Usable({.name = "node4", .state = "unknown"}, false, t0 + seconds(1)));
  EXPECT_TRUE(g.Usable(idle1, true, t0 + seconds(90)));
  EXPECT_TRUE(g.Usable(unknown1, false, t0 + seconds(100)));
  EXPECT_TRUE(g.Usable(unknown1, false, t0 + seconds(159)));
}

TEST(SlurmState, OnlyAnAdminsHoldIsHeldByAdmin) {
  // tiresias's own holds: sbatch --hold / uhold (JobHeldUser) and requeuehold ("job requeued
  // in held state", as root too); an admin's scontrol hold: JobHeldAdmin. Slurm's own after
  // max_batch_requeue is JobHoldMaxRequeue.
  EXPECT_TRUE((HeldByAdmin({.state = "PENDING", .reason = "JobHeldAdmin", .held = true})));
  EXPECT_FALSE((HeldByAdmin({.state = "PENDING", .reason = "JobHeldUser", .held = true})));
  EXPECT_FALSE(
      (HeldByAdmin({.state = "PENDING", .reason = "job requeued in held state", .held = true})));
  EXPECT_FALSE((HeldByAdmin({.state = "PENDING", .reason = "JobHoldMaxRequeue", .held = true})));
  EXPECT_FALSE((HeldByAdmin({.state = "RUNNING", .reason = "JobHeldAdmin", .held = true})));
}

TEST(SlurmState, BadJsonIsAnErrorNotAnEmptyCluster) {
  EXPECT_FALSE(ParseSqueueJson("squeue: error: Unable to contact slurm controller").ok());
  EXPECT_FALSE(ParseSinfoJson(R"({"nodes": 3})").ok());
  auto e = ParseSqueueJson(R"({"errors": [{"error": "boom"}], "jobs": []})");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("boom"), std::string::npos);
}

TEST(SlurmState, TransientFailuresAreTheControllerNotAnsweringNotARefusal) {
  // Captured from 22.05's client tools while slurmctld was stopped, stopping (a CI run saw
  // the pin of a launch fail with "Unexpected message received" and failed two jobs) or busy.
  for (const char* said : {
           "scontrol: error: Unable to contact slurm controller (connect failure)",
           "scontrol update: exit 1: Unexpected message received for job 1",
           "squeue: error: Socket timed out on send/recv operation",
           "sbatch: error: Batch job submission failed: Unable to create job record, try again",
           "scontrol: error: Job can not be altered now, try again later",
           "sinfo: error: Controller is in standby mode, try a different controller",
           "scancel: error: Message receive failure",
           "sbatch: error: Batch job submission failed: Connection reset by peer",
       }) {
    EXPECT_TRUE(SlurmTransientFailure(said)) << said;
  }
  // The request's own faults are not retried: they would fail the same way forever.
  for (const char* said : {
           "scontrol: error: Invalid job id specified",
           "sbatch: error: Batch job submission failed: Requested node configuration is not "
           "available",
           "scontrol: error: Invalid node name specified",
           "scancel: error: Kill job error on job id 7: Job/step already completing or completed",
           "",
       }) {
    EXPECT_FALSE(SlurmTransientFailure(said)) << said;
  }
}

TEST(SlurmState, ASubmitLimitIsToldApartFromARefusal) {
  // Slurm's words (slurm_errno.c; a QOS's MaxSubmitJobsPerUser, the cluster's MaxJobCount).
  for (const char* said : {
           "sbatch: error: QOSMaxSubmitJobPerUserLimit",
           "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job "
           "submit limit, user's size and/or time limits)",
           "sbatch: error: Slurm temporarily unable to accept job, sleeping and retrying",
           "sbatch: error: AssocMaxSubmitJobLimit",
       }) {
    EXPECT_TRUE(SlurmSubmitLimit(said)) << said;
    // A limit on the jobs queued (a cancel frees a place at once), not on the cluster's
    // records (MaxJobCount: a cancelled job counts until MinJobAge).
    EXPECT_EQ(SlurmPlaceLimit(said),
              std::string_view(said).find("temporarily") == std::string::npos)
        << said;
  }
  for (const char* said : {
           "sbatch: error: Batch job submission failed: Requested node configuration is not "
           "available",
           "sbatch: error: invalid partition specified: gpux",
           "",
       }) {
    EXPECT_FALSE(SlurmSubmitLimit(said)) << said;
  }
}

TEST(SlurmState, AJobOverALimitOnItsOwnSizeOrTimeIsRefusedNotKeptWaiting) {
  // Regression: slurmctld refuses a job over its QOS's MaxTRESPerJob (with DenyOnLimit) or
  // its association's MaxWall by the same error as a full MaxSubmitJobs, "job submit limit,
  // user's size and/or time limits": such a job waited for ever as if for a place, and took
  // a held job's place for nothing. The line before the error names the reason (job_reason
  // codes); only a *SubmitJob* reason is a limit on the jobs queued.
  const std::string error =
      "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job "
      "submit limit, user's size and/or time limits)\n";
  for (const char* reason : {"QOSMaxGRESPerJob", "AssocMaxWallDurationPerJobLimit",
                             "QOSMaxNodePerJobLimit", "AssocGrpGRES"}) {
    const std::string said = fmt::format("sbatch: error: {}\n{}", reason, error);
    EXPECT_EQ(SlurmPolicyReason(said), reason);
    EXPECT_FALSE(SlurmSubmitLimit(said)) << said;
    EXPECT_FALSE(SlurmPlaceLimit(said)) << said;
  }
  for (const char* reason : {"QOSMaxSubmitJobPerUserLimit", "AssocMaxSubmitJobLimit",
                             "QOSGrpSubmitJobsLimit", "AssocGrpSubmitJobsLimit"}) {
    const std::string said = fmt::format("sbatch: error: {}\n{}", reason, error);
    EXPECT_EQ(SlurmPolicyReason(said), reason);
    EXPECT_TRUE(SlurmSubmitLimit(said)) << said;
    EXPECT_TRUE(SlurmPlaceLimit(said)) << said;
  }
  // The error alone (no reason named): a limit on the jobs queued, as before.
  EXPECT_EQ(SlurmPolicyReason(error), "");
  EXPECT_TRUE(SlurmSubmitLimit(error));
  EXPECT_TRUE(SlurmPlaceLimit(error));
  // Words that are not a reason code are not taken for one.
  EXPECT_EQ(SlurmPolicyReason("sbatch: error: QOS name not found\n" + error), "");
  // Only the line just before the policy error: a one-word line elsewhere (a site's job_submit
  // plugin) is not a reason, nor is one with no policy error after it.
  EXPECT_EQ(SlurmPolicyReason("sbatch: QOSGold\nsbatch: error: note\n" + error), "");
  EXPECT_EQ(SlurmPolicyReason("sbatch: error: QOSMaxGRESPerJob\n"), "");
}

TEST(SlurmState, PingSaysWhetherAControllerAnswers) {
  EXPECT_TRUE(SlurmPingSaysUp("Slurmctld(primary) at head is UP\n"));
  EXPECT_TRUE(SlurmPingSaysUp("Slurmctld(primary) at a is UP\nSlurmctld(backup) at b is DOWN\n"));
  EXPECT_FALSE(SlurmPingSaysUp("Slurmctld(primary) at head is DOWN\n"));
  EXPECT_FALSE(SlurmPingSaysUp(""));
}

TEST(SlurmState, Hostlists) {
  auto x = ExpandHostlist("node[1-3,5],gpu07");
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(*x, (std::vector<std::string>{"node1", "node2", "node3", "node5", "gpu07"}));
  EXPECT_EQ(*ExpandHostlist("n[08-10]"), (std::vector<std::string>{"n08", "n09", "n10"}));
  EXPECT_EQ(*ExpandHostlist("r[1-2]n[1-2]"),
            (std::vector<std::string>{"r1n1", "r1n2", "r2n1", "r2n2"}));
  EXPECT_TRUE(ExpandHostlist("")->empty());
  EXPECT_FALSE(ExpandHostlist("node[3-1]").ok());
  EXPECT_FALSE(ExpandHostlist("node[1-2").ok());
}

TEST(SlurmState, GpusInGres) {
  EXPECT_EQ(GpusInGres("gpu:4"), 4);
  EXPECT_EQ(GpusInGres("gpu:a100:2(IDX:0-1)"), 2);
  EXPECT_EQ(GpusInGres("gpu:2,mps:100"), 2);
  EXPECT_EQ(GpusInGres("gres:gpu:3"), 3);
  EXPECT_EQ(GpusInGres("gpu:a100:2,gpu:v100:1"), 3);
  EXPECT_EQ(GpusInGres("(null)"), 0);
  EXPECT_EQ(GpusInGres(""), 0);
}

TEST(SlurmState, ConfigChecklist) {
  // The test cluster's settings pass; a default-ish site gets one sentence per problem.
  auto ok = ParseSlurmConfig(
      "Configuration data as of 2026-11-30T20:48:59\n"
      "GresTypes               = gpu\nJobRequeue              = 1\nKillWait                = "
      "5 sec\nMinJobAge               = 600 sec\nPreemptType             = preempt/none\n"
      "ReturnToService         = 2\nSchedulerParameters     = "
      "batch_sched_delay=0,sched_min_interval=0\nSelectType              = select/cons_tres\n"
      "SlurmdTimeout           = 10 sec\nPrivateData             = none\n");
  EXPECT_EQ(ok.at("KillWait"), "5 sec");
  EXPECT_TRUE(SlurmConfigWarnings(ok).empty());
  auto bad = ok;
  bad["SchedulerParameters"] = "(null)";
  bad["PreemptType"] = "preempt/qos";
  bad["MinJobAge"] = "60 sec";
  bad["KillWait"] = "120 sec";
  bad["ReturnToService"] = "0";
  bad["GresTypes"] = "(null)";
  const auto w = SlurmConfigWarnings(bad);
  ASSERT_EQ(w.size(), 6u);
  auto has = [&](const std::string& s) {
    for (const auto& x : w) {
      if (x.find(s) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("GresTypes has no gpu"));
  EXPECT_TRUE(has("PreemptType is preempt/qos"));
  EXPECT_TRUE(has("batch_sched_delay=0"));
  EXPECT_TRUE(has("MinJobAge is 60 s"));
  EXPECT_TRUE(has("KillWait is 120 s"));
  EXPECT_TRUE(has("ReturnToService is 0"));
}

}  // namespace
}  // namespace tiresias
