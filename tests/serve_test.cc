// End-to-end tests of `tiresias serve` on loopback with real processes and emulated GPUs:
// a mixed workload under dlas with a real preemption and resume of the example trainer, the
// same decisions as the simulator, the SIGTERM-grace-SIGKILL protocol, API errors and the CLI
// client. Recovery and containment are in serve_recovery_test.cc.
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "cli/client.h"
#include "serve_fixture.h"
#include "sim/simulator.h"

namespace tiresias::serve_test {
namespace {

using namespace std::chrono_literals;
using testing::ReadAll;
using testing::WaitFor;

TEST_F(ServeTest, TwentyJobsOnFourGpusUnderDlasPreemptAndResumeTheTrainer) {
  // dlas with a 8 GPU-s first queue: the 4-GPU trainer is demoted after 2 s, and the short
  // jobs waiting in Q1 then preempt it. It checkpoints on SIGTERM and resumes later.
  Serve({"--gpus", "4", "--policy", "dlas", "--opt", "thresholds=8", "--grace", "10"});
  const std::string trainer = TIRESIAS_TRAINER;
  const std::vector<std::string> train_args = {"--steps", "300", "--step-ms", "10"};
  // The uninterrupted reference run, alongside.
  std::string ref_cmd = fmt::format("{} {} --checkpoint-dir {} --result {} > /dev/null", trainer,
                                    fmt::join(train_args, " "), (dir_ / "ref-ckpt").string(),
                                    (dir_ / "ref.txt").string());
  std::thread ref([&] { ASSERT_EQ(std::system(ref_cmd.c_str()), 0); });

  std::vector<std::string> argv = {trainer};
  argv.insert(argv.end(), train_args.begin(), train_args.end());
  argv.insert(argv.end(), {"--result", (dir_ / "live.txt").string()});
  const int64_t long_job = Submit({{"gpus", 4}, {"name", "trainer"}, {"argv", argv}});
  ASSERT_TRUE(WaitFor([&] { return State(long_job) == "running"; }, 5s));
  std::vector<int64_t> short_jobs;
  const int sizes[] = {1, 2, 1, 3, 1, 2, 4, 1, 1, 2, 1, 3, 2, 1, 1, 2, 1, 4, 1};
  for (int g : sizes) {
    short_jobs.push_back(Submit(
        {{"gpus", g},
         {"argv",
          {"sh", "-c", "echo \"CVD=$CUDA_VISIBLE_DEVICES WS=${WORLD_SIZE:-1}\"; sleep 0.2"}}}));
  }
  ASSERT_TRUE(WaitFor(
      [&] {
        for (int64_t id : short_jobs) {
          if (!Ended(State(id))) return false;
        }
        return Ended(State(long_job));
      },
      60s));
  ref.join();

  for (size_t i = 0; i < short_jobs.size(); ++i) {
    auto j = Job(short_jobs[i]);
    EXPECT_EQ(j["state"], "finished") << j.dump();
    const std::string log =
        ReadAll(dir_ / "tiresias-jobs" / std::to_string(short_jobs[i]) / "output.log");
    // Each job sees exactly its own GPUs.
    auto cvd = log.substr(log.rfind("CVD=") + 4);  // the last: the header echoes the command
    cvd = cvd.substr(0, cvd.find(' '));
    EXPECT_EQ(std::count(cvd.begin(), cvd.end(), ',') + 1, sizes[i]) << log;
    EXPECT_NE(log.find(fmt::format("WS={}", sizes[i])), std::string::npos) << log;
  }
  auto lj = Job(long_job);
  EXPECT_EQ(lj["state"], "finished") << lj.dump();
  EXPECT_GE(lj["preemptions"].get<int>(), 1);
  EXPECT_GE(lj["attempt"].get<int>(), 1) << "resumed in a new attempt";
  const std::string log = ReadAll(dir_ / "tiresias-jobs" / std::to_string(long_job) / "output.log");
  EXPECT_NE(log.find("resumed from step"), std::string::npos) << log;
  // Preempted several times or not, the result is the uninterrupted run's, bit for bit.
  EXPECT_EQ(ReadAll(dir_ / "live.txt"), ReadAll(dir_ / "ref.txt"));
  EXPECT_FALSE(ReadAll(dir_ / "ref.txt").empty());
  // The journal tells the story: preempt, then a later launch of the trainer.
  int preempt_seq = -1, relaunch_seq = -1;
  for (const auto& e : Events()) {
    if (e["job"] != long_job) continue;
    if (e["kind"] == "preempt" && preempt_seq < 0) preempt_seq = e["seq"];
    if (e["kind"] == "launch" && preempt_seq > 0) relaunch_seq = e["seq"];
  }
  EXPECT_GT(preempt_seq, 0);
  EXPECT_GT(relaunch_seq, preempt_seq);
}

TEST_F(ServeTest, SchedulesLikeTheSimulatorWithRealProcesses) {
  // Four trainer jobs (10 ms steps, checkpoint on SIGTERM) on 2 GPUs under dlas with a
  // 1.6 GPU-s first queue. Worked by hand (seconds):
  //   J1 (2 GPUs, 2.0 s of work) at 0: starts; demoted at 0.8 (2 x 0.8 = 1.6 GPU-s).
  //   J2 (1 GPU, 0.6 s) at 0.3: waits behind J1 in Q1; at 0.8 J1 drops to Q2 and J2
  //       preempts it; runs 0.8-1.4.
  //   J3 (1 GPU, 0.5 s) at 1.0: takes the free GPU, runs 1.0-1.5.
  //   J1 resumes at 1.5 with 1.2 s left.
  //   J4 (1 GPU, 0.4 s) at 2.0: Q1 beats J1 (Q2), and J1's gang no longer fits: J1 is
  //       preempted again; J4 runs 2.0-2.4, J1 resumes at 2.4 and ends at 3.1.
  // Events are >= 0.2 s apart, so process start-up (a few ms) cannot reorder them.
  struct Spec {
    int64_t at_ms, gpus, steps;
  };
  const std::vector<Spec> specs = {{0, 2, 200}, {300, 1, 60}, {1000, 1, 50}, {2000, 1, 40}};
  Serve({"--gpus", "2", "--policy", "dlas", "--opt", "thresholds=1.6", "--grace", "5"});
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int64_t> ids;
  for (const Spec& sp : specs) {
    std::this_thread::sleep_until(t0 + std::chrono::milliseconds(sp.at_ms));
    ids.push_back(Submit({{"gpus", sp.gpus},
                          {"argv",
                           {TIRESIAS_TRAINER, "--steps", std::to_string(sp.steps), "--step-ms",
                            "10", "--log-every", "1000"}}}));
  }
  ASSERT_TRUE(WaitFor(
      [&] {
        for (int64_t id : ids) {
          if (!Ended(State(id))) return false;
        }
        return true;
      },
      30s));
  std::vector<std::string> live;
  for (const auto& e : Events()) {
    if (e["kind"] == "start" || e["kind"] == "preempt") {
      live.push_back(fmt::format("{} {}", e["kind"].get<std::string>(), e["job"].get<int64_t>()));
    }
  }
  SimConfig cfg;
  cfg.topo = *Topology::Create(1, 1, 2);
  cfg.policy = "dlas";
  cfg.policy_opts = {"thresholds=1.6"};
  cfg.placement = "consolidate";
  cfg.preempt_overhead = 0;
  cfg.record_events = true;
  std::vector<JobSpec> jobs;
  for (size_t i = 0; i < specs.size(); ++i) {
    jobs.push_back(JobSpec{.id = JobId(ids[i]),
                           .gpus = static_cast<int>(specs[i].gpus),
                           .submit = specs[i].at_ms,
                           .duration = specs[i].steps * 10});
  }
  auto sim = RunSimulation(cfg, jobs);
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  std::vector<std::string> simulated;
  for (const Event& e : sim->event_log) {
    if (e.kind == EventKind::kStart || e.kind == EventKind::kPreempt) {
      simulated.push_back(fmt::format("{} {}", ToString(e.kind), e.job.value()));
    }
  }
  EXPECT_EQ(live, simulated);
  EXPECT_EQ(fmt::format("{}", fmt::join(simulated, ", ")),
            fmt::format("start {0}, preempt {0}, start {1}, start {2}, start {0}, preempt {0}, "
                        "start {3}, start {0}",
                        ids[0], ids[1], ids[2], ids[3]));
  const int64_t submit0 = Job(ids[0])["submitted_at_ms"];
  for (size_t i = 0; i < ids.size(); ++i) {
    SCOPED_TRACE(fmt::format("job {}", ids[i]));
    auto j = Job(ids[i]);
    EXPECT_EQ(j["state"], "finished");
    EXPECT_EQ(j["preemptions"].get<int>(), sim->jobs[i].preemptions);
    // Real processes run a little slower than their nominal work (start-up, checkpoint,
    // sleep overshoot per 10 ms step, and a loaded machine's scheduling): ends agree within a
    // quarter and a second (the decisions above are what must be exact).
    EXPECT_NEAR(j["end_ms"].get<int64_t>() - submit0, sim->jobs[i].end,
                1000 + sim->jobs[i].end / 4);
  }
}

TEST_F(ServeTest, PreemptionEscalatesToSigkillAfterTheGrace) {
  // One GPU; a job that ignores SIGTERM. dlas with 1 GPU-s: demoted after 1 s, preempted by
  // the next arrival, killed 1 s (the grace) later, then resumed as attempt 1.
  Serve({"--gpus", "1", "--policy", "dlas", "--opt", "thresholds=1", "--grace", "1"});
  const int64_t stubborn =
      Submit({{"argv", {"sh", "-c", "trap '' TERM; sleep 4"}}, {"name", "stubborn"}});
  ASSERT_TRUE(WaitFor([&] { return State(stubborn) == "running"; }, 5s));
  const int64_t next = Submit({{"argv", {"sleep", "0.2"}}});
  ASSERT_TRUE(WaitFor([&] { return State(stubborn) == "preempting"; }, 5s));
  ASSERT_TRUE(WaitFor([&] { return State(next) == "finished"; }, 10s));
  ASSERT_TRUE(WaitFor([&] { return Job(stubborn)["attempt"] == 1; }, 10s));
  int64_t preempt_ms = 0, killed_ms = 0;
  for (const auto& e : Events()) {
    if (e["job"] != stubborn) continue;
    if (e["kind"] == "preempt") preempt_ms = e["time_ms"];
    if (e["kind"] == "exit") {
      killed_ms = e["time_ms"];
      EXPECT_NE(e["text"].get<std::string>().find("signal 9"), std::string::npos) << e.dump();
      // Killed when its grace ran out: not a checkpoint (it was "checkpointed" before).
      EXPECT_EQ(e["detail"]["checkpointed"], false) << e.dump();
      EXPECT_EQ(e["text"].get<std::string>().find("checkpointed"), std::string::npos) << e.dump();
    }
  }
  EXPECT_GE(killed_ms - preempt_ms, 1000) << "SIGKILL only after the grace period";
  EXPECT_LT(killed_ms - preempt_ms, 2500);
  auto cancelled = serve_->Client().PostJson(fmt::format("/v1/jobs/{}/cancel", stubborn), {});
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().message();
  ASSERT_TRUE(WaitFor([&] { return Job(stubborn)["pid"] == 0; }, 5s));
}

TEST_F(ServeTest, AJobPastItsTimeLimitIsStoppingWithReasonTimeLimitDuringItsGrace) {
  // Found by an exploratory test: during the grace after its time limit, the job was shown
  // `running` with no reason (the README promises preempting, TimeLimit).
  // Room for the submit, ls, explain and cancel below on a loaded machine (a review: 6 s).
  Serve({"--gpus", "1", "--grace", "12"});
  const int64_t id = Submit({{"argv", {"sh", "-c", "trap '' TERM; sleep 100"}}, {"time", "0:01"}});
  ASSERT_TRUE(WaitFor([&] { return State(id) == "preempting"; }, 10s)) << Job(id).dump();
  EXPECT_EQ(Job(id)["reason"], "TimeLimit") << Job(id).dump();
  // The journal says when it was told to stop (found by an exploratory test: nothing did).
  const auto events = serve_->Client().GetJson(fmt::format("/v1/events?job={}", id));
  ASSERT_TRUE(events.ok()) << events.status().message();
  EXPECT_NE(events->dump().find(
                R"("text":"time limit 00:00:01 reached: told to stop (the checkpoint signal)"),
            std::string::npos)
      << events->dump();
  // A job submitted now has no other place: placed on its GPU, it waits for the process, and
  // `ls` says where and why (it said a bare "local").
  const int64_t next = Submit({{"argv", {"sleep", "30"}}});
  ASSERT_TRUE(WaitFor([&] { return State(next) == "starting"; }, 10s)) << Job(next).dump();
  const testing::CmdResult ls =
      testing::RunTiresias(fmt::format("ls --state-dir {}", dir_.string()));
  EXPECT_NE(ls.out.find("local:0 (Starting)"), std::string::npos) << ls.out;
  // Its explain has no forecast now (a review: the API answered 500, the core had no run).
  const testing::CmdResult explain =
      testing::RunTiresias(fmt::format("explain {} --state-dir {}", id, dir_.string()));
  EXPECT_EQ(explain.rc, 0) << explain.out;
  EXPECT_NE(explain.out.find("no forecast while it is past its time limit, stopping"),
            std::string::npos)
      << explain.out;
  // A cancel in that grace: the job ends timed out, and the CLI says so (it said "cancelled").
  const testing::CmdResult cancel =
      testing::RunTiresias(fmt::format("cancel {} --state-dir {}", id, dir_.string()));
  EXPECT_EQ(cancel.out,
            fmt::format("job {}: past its time limit, stopping: it ends timed out\n", id));
  ASSERT_TRUE(WaitFor([&] { return State(id) == "timeout"; }, 15s)) << Job(id).dump();
  // nodes: its process still holds the GPU, stopping (it said "job N" as if it ran there).
  const testing::CmdResult nodes =
      testing::RunTiresias(fmt::format("nodes --state-dir {}", dir_.string()));
  EXPECT_NE(nodes.out.find(fmt::format("job {} (stopping)", id)), std::string::npos) << nodes.out;
  // Its process, which ignores SIGTERM, is killed at the end of its grace.
  ASSERT_TRUE(WaitFor([&] { return Job(id)["pid"] == 0; }, 30s)) << Job(id).dump();
}

TEST_F(ServeTest, BadRequestsGetClearErrors) {
  Serve({"--gpus", "2"});
  // Over TCP, as a remote caller: without a token, with a wrong one, with the admin's.
  const std::string url(testing::Trimmed(ReadAll(dir_ / "tiresias.addr")));
  const std::string token(testing::Trimmed(ReadAll(dir_ / "tiresias.token")));
  auto tcp = [&](const std::string& tok) {
    return *ApiClient::Connect({.server = url, .state_dir = "/nonexistent", .token = tok});
  };
  const ApiClient anon = tcp(""), wrong = tcp("nope"), raw = tcp(token);
  auto post = [&](const std::string& body) { return *raw.Post("/v1/jobs", body); };
  EXPECT_EQ(anon.Post("/v1/jobs", "{\"argv\": [\"true\"]}")->status, 401);
  EXPECT_EQ(anon.Get("/v1/jobs")->status, 401) << "reads need an identity too";
  EXPECT_EQ(wrong.Post("/v1/jobs", "{\"argv\": [\"true\"]}")->status, 401);
  auto r = post("{not json");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("not valid JSON"), std::string::npos) << r.body;
  r = post("{\"argv\": [\"true\"], \"gpu\": 1}");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find(R"(unknown field \"gpu\")"), std::string::npos) << r.body;
  r = post("{\"argv\": [\"true\"], \"gpus\": \"two\"}");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("'gpus'"), std::string::npos) << r.body;
  r = post("{\"argv\": [\"true\"], \"env\": {\"CUDA_VISIBLE_DEVICES\": \"0\"}}");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("set by the scheduler"), std::string::npos) << r.body;
  r = post("{\"argv\": [\"true\"], \"vc\": 7}");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("field 'vc': expected a string"), std::string::npos) << r.body;
  r = post("{\"argv\": [\"true\"], \"vc\": \"vision\"}");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("this cluster has no tenants"), std::string::npos) << r.body;
  r = post("{\"argv\": [\"true\"], \"gpus\": 3}");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("can never run"), std::string::npos) << r.body;
  EXPECT_EQ(raw.Get("/v1/jobs/77")->status, 404);
  EXPECT_EQ(raw.Get("/v1/jobs/abc")->status, 400);
  EXPECT_EQ(raw.Get("/v1/nope")->status, 404);
  EXPECT_EQ(raw.Get("/v1/%ff")->status, 404);  // invalid UTF-8 in the path: no crash
  EXPECT_EQ(anon.Get("/v1/health")->status, 200);
  EXPECT_EQ(raw.Get("/v1/events?limit=0")->status, 400);
  EXPECT_EQ(raw.Get("/v1/events?latest=0")->status, 400);  // it gave every event
  EXPECT_EQ(raw.Get("/v1/events?latest=1")->status, 200);
  r = post("{\"argv\": [\"true\"], \"gpus\": 4294967297}");
  EXPECT_EQ(r.status, 400) << r.body;
  r = post("{\"argv\": [\"true\"], \"env\": {\"\": \"x\"}}");
  EXPECT_EQ(r.status, 400) << r.body;
  // A field given twice (the last was taken silently), also inside an object.
  r = post(R"({"argv": ["true"], "gpus": 1, "gpus": 2})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find(R"(field \"gpus\" given twice)"), std::string::npos) << r.body;
  r = post(R"({"argv": ["true"], "env": {"A": "1", "A": "2"}})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(raw.Get("/v1/jobs?state=sleeping")->status, 400);
  // History is of ended jobs: a state that has not ended is refused (it listed running jobs),
  // as is me=1 beside another user.
  EXPECT_EQ(raw.Get("/v1/history?state=finished,running")->status, 400);
  EXPECT_EQ(raw.Get("/v1/history?state=finished")->status, 200);
  EXPECT_EQ(raw.Get("/v1/jobs?me=2")->status, 400);
  // A parameter given twice, or two that contradict each other (the last, or one, won).
  auto twice = raw.Get("/v1/jobs?state=running&state=pending");
  EXPECT_EQ(twice->status, 400);
  EXPECT_NE(twice->body.find(R"(query parameter \"state\" given twice)"), std::string::npos)
      << twice->body;
  EXPECT_EQ(raw.Get("/v1/events?after=1&latest=5")->status, 400);
  // A body over the limit (a 2 MB name), and one nested 100,000 deep (it used to crash).
  r = post("{\"argv\": [\"true\"], \"name\": \"" + std::string(2 << 20, 'n') + "\"}");
  EXPECT_EQ(r.status, 413) << r.body.substr(0, 200);
  r = post("{\"argv\": [\"true\"], \"gpus\": " + std::string(100000, '[') +
           std::string(100000, ']') + "}");
  EXPECT_EQ(r.status, 400) << r.body.substr(0, 200);
  EXPECT_NE(r.body.find("nested deeper than 32"), std::string::npos) << r.body.substr(0, 200);
  // Nothing refused was stored.
  EXPECT_EQ(raw.Get("/v1/jobs")->body, "[]\n");

  // A failing job is marked failed with its exit code; the scheduler carries on.
  const int64_t bad = Submit({{"argv", {"sh", "-c", "exit 3"}}, {"gpus", 2}});
  const int64_t good = Submit({{"argv", {"true"}}, {"gpus", 2}});
  ASSERT_TRUE(WaitFor([&] { return Ended(State(good)); }, 10s));
  EXPECT_EQ(State(bad), "failed");
  EXPECT_EQ(Job(bad)["exit_code"], 3);
  EXPECT_EQ(State(good), "finished");
  // No cwd given: the home directory of the user it ran as (it ran in serve's own directory,
  // and show gave WorkDir= empty).
  EXPECT_EQ(Job(good)["cwd"], std::string(getpwuid(getuid())->pw_dir));
  r = *raw.Post(fmt::format("/v1/jobs/{}/cancel", good), "");
  EXPECT_EQ(r.status, 409) << r.body;
  // events?job= takes an array's task as its user names it (it took internal ids alone).
  r = post(R"({"argv": ["true"], "array": "3-4", "hold": true})");
  ASSERT_EQ(r.status, 201) << r.body;
  const int64_t arr = nlohmann::json::parse(r.body)["id"];
  auto task_events = raw.GetJson(fmt::format("/v1/events?job={}_4", arr));
  ASSERT_TRUE(task_events.ok()) << task_events.status().message();
  ASSERT_FALSE(task_events->empty());
  EXPECT_EQ((*task_events)[0]["ref"], fmt::format("{}_4", arr)) << task_events->dump();
  EXPECT_EQ(raw.Get(fmt::format("/v1/events?job={}_5", arr))->status, 404);
  auto array_events = raw.GetJson(fmt::format("/v1/events?array={}&after=0", arr));
  ASSERT_TRUE(array_events.ok()) << array_events.status().message();
  std::set<std::string> refs;
  for (const auto& e : *array_events) refs.insert(e.value("ref", ""));
  EXPECT_EQ(refs, (std::set<std::string>{fmt::format("{}_3", arr), fmt::format("{}_4", arr)}));
  EXPECT_EQ(raw.Get(fmt::format("/v1/events?array={}&job={}", arr, arr))->status, 400);
  // A second serve on the same state directory is refused.
  auto second = testing::RunTiresias("serve --gpus 2 --port 0 --state-dir " + dir_.string());
  EXPECT_NE(second.rc, 0);
  EXPECT_NE(second.out.find("another tiresias serve"), std::string::npos) << second.out;
  // The token file is private.
  struct stat st {};
  ASSERT_EQ(stat((dir_ / "tiresias.token").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
}

TEST_F(ServeTest, CliClientSubmitLsShowLogsExplainCancel) {
  Serve({"--gpus", "1", "--policy", "fifo"});
  const std::string sd = "--state-dir " + dir_.string();
  // The submitter's environment goes with the job (not CUDA_VISIBLE_DEVICES: that is the
  // scheduler's).
  setenv("MY_SETTING", "abc", 1);
  setenv("CUDA_VISIBLE_DEVICES", "7", 1);
  auto first = testing::RunTiresias(fmt::format(
      "submit {} --parsable --gpus 1 --name hello -- sh -c 'echo hello from $TIRESIAS_JOB_ID "
      "$MY_SETTING gpu $CUDA_VISIBLE_DEVICES; sleep 2'",
      sd));
  unsetenv("MY_SETTING");
  unsetenv("CUDA_VISIBLE_DEVICES");
  ASSERT_EQ(first.rc, 0) << first.out;
  const std::string id = first.out.substr(0, first.out.find('\n'));
  auto second = testing::RunTiresias(fmt::format("submit {} --parsable --name waiter -- true", sd));
  ASSERT_EQ(second.rc, 0) << second.out;
  const std::string id2 = second.out.substr(0, second.out.find('\n'));
  ASSERT_TRUE(WaitFor([&] { return State(std::stoll(id)) == "running"; }, 5s));

  auto ls = testing::RunTiresias("ls " + sd);
  EXPECT_NE(ls.out.find("hello"), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find("running"), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find("pending"), std::string::npos) << ls.out;
  auto ex = testing::RunTiresias(fmt::format("explain {} {}", sd, id2));
  EXPECT_NE(ex.out.find("is pending"), std::string::npos) << ex.out;
  EXPECT_NE(ex.out.find("needs 1 GPUs; 0 free"), std::string::npos) << ex.out;
  EXPECT_NE(ex.out.find("running ahead: job " + id), std::string::npos) << ex.out;
  // A running job's start is not a forecast: when it started (it said "likely to start in 0s").
  auto ex1 = testing::RunTiresias(fmt::format("explain {} {}", sd, id));
  EXPECT_NE(ex1.out.find("  started "), std::string::npos) << ex1.out;
  EXPECT_EQ(ex1.out.find("likely to start"), std::string::npos) << ex1.out;
  EXPECT_NE(ex1.out.find("likely to end"), std::string::npos) << ex1.out;
  auto nodes = testing::RunTiresias("nodes " + sd);
  EXPECT_NE(nodes.out.find("EMULATED"), std::string::npos) << nodes.out;
  auto cancel = testing::RunTiresias(fmt::format("cancel {} {}", sd, id2));
  EXPECT_EQ(cancel.rc, 0) << cancel.out;
  auto logs = testing::RunTiresias(fmt::format("logs {} -f {}", sd, id));
  EXPECT_EQ(logs.rc, 0) << logs.out;
  EXPECT_NE(logs.out.find("hello from " + id + " abc gpu 0"), std::string::npos) << logs.out;
  // The journal as people read it, and as the simulator's --events lines.
  auto events = testing::RunTiresias("events " + sd);
  EXPECT_NE(events.out.find("GPUs n0:0: starts"), std::string::npos) << events.out;
  auto jsonl = testing::RunTiresias("events --jsonl " + sd);
  ASSERT_EQ(jsonl.rc, 0) << jsonl.out;
  EXPECT_NE(jsonl.out.find(R"("job":)" + id + R"(,"kind":"submit")"), std::string::npos)
      << jsonl.out;
  EXPECT_NE(jsonl.out.find(R"({"detail":{"gpus":[[0,0]],"reason":"starts"},"job":)" + id),
            std::string::npos)
      << jsonl.out;
  auto show = testing::RunTiresias(fmt::format("show {} {}", sd, id));
  EXPECT_NE(show.out.find("finished"), std::string::npos) << show.out;
  EXPECT_EQ(State(std::stoll(id2)), "cancelled");
  auto missing = testing::RunTiresias(fmt::format("show {} 999", sd));
  EXPECT_NE(missing.rc, 0);
  EXPECT_NE(missing.out.find("no such job"), std::string::npos) << missing.out;
}

}  // namespace
// Found by a tester: `logs -f` lost lines when the log rotated (serve --max-log-size): the
// rest of the old file, now output.log.1, was never read, and once the new log had grown past
// the follower's offset it went on from the middle of it (a torn line). The follower now
// names the file its offset is in; a file rotated since is read to its end first.
TEST_F(ServeTest, LogsFollowReadsEveryLineAcrossRotations) {
  Serve({"--gpus", "1", "--max-log-size", "64KiB"});
  // 3,000 numbered lines of 72 bytes (216 KB: three rotations), 300 at a time.
  const int64_t id =
      Submit({{"argv",
               {"sh", "-c",
                "i=0; while [ $i -lt 3000 ]; do printf 'line %05d %060d\\n' $i 0; i=$((i+1)); "
                "[ $((i%300)) = 0 ] && sleep 0.3; done; true"}}});
  ASSERT_GT(id, 0);
  auto logs = testing::RunTiresias(fmt::format("logs --state-dir {} -f {}", dir_.string(), id));
  ASSERT_EQ(logs.rc, 0) << logs.out.substr(0, 2000);
  ASSERT_EQ(State(id), "finished");
  std::vector<int> seen;
  std::istringstream in(logs.out);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("line ")) continue;
    EXPECT_EQ(line.size(), 71u) << "a torn line: " << line;
    seen.push_back(std::atoi(line.substr(5, 5).c_str()));
  }
  ASSERT_EQ(seen.size(), 3000u) << logs.out.substr(0, 2000);
  for (int k = 0; k < 3000; ++k) ASSERT_EQ(seen[static_cast<size_t>(k)], k);
}

// Found by a tester: `logs ID` printed only the first 1 MiB of a log (one reply), cut
// mid-line, with exit 0, and `--tail N` the last 1 MiB of its N lines. Both read on to the end.
TEST_F(ServeTest, LogsWithoutFollowPrintTheWholeLogAndTailItsLinesPastOneReply) {
  Serve({"--gpus", "1"});
  // 60,000 lines of 49 bytes: 2.9 MB.
  const int64_t id = Submit(
      {{"argv", {"seq", "-f", "line %07g abcdefghijklmnopqrstuvwxyz0123456789", "0", "59999"}}});
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitFor([&] { return State(id) == "finished"; }, 30s));
  const std::string sd = "--state-dir " + dir_.string();
  const std::string whole =
      testing::ReadAll(dir_ / "tiresias-jobs" / std::to_string(id) / "output.log");
  ASSERT_GT(whole.size(), size_t{2} << 20);
  auto all = testing::RunTiresias(fmt::format("logs {} {}", sd, id));
  ASSERT_EQ(all.rc, 0);
  EXPECT_EQ(all.out.size(), whole.size());
  EXPECT_TRUE(all.out == whole) << "the log differs from output.log";
  auto tail = testing::RunTiresias(fmt::format("logs {} {} --tail 30001", sd, id));
  ASSERT_EQ(tail.rc, 0);
  // The last 30,001 lines: 30,000 numbered ones from 30000 on, then tiresias' end line.
  EXPECT_EQ(std::count(tail.out.begin(), tail.out.end(), '\n'), 30001);
  EXPECT_EQ(tail.out.rfind("line 0030000 ", 0), 0u) << tail.out.substr(0, 80);
}

}  // namespace tiresias::serve_test
