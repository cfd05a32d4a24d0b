// End-to-end tests of `tiresias serve` on loopback with real processes and emulated GPUs:
// a mixed workload under dlas with a real preemption and resume of the example trainer, the
// SIGTERM-grace-SIGKILL protocol, API errors, the CLI client, kill -9 recovery under a
// stream of submissions, and containment: a job's escaped processes keep its GPUs until they
// are gone, and a job whose supervisor was killed while serve was down is adopted, not run
// twice (both skip without a writable cgroup, where serve says it uses process groups only);
// a job that completes during its grace (its done file) is not run again, and a finished job's
// checkpoint directory is removed unless kept.
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
#include "serve_process.h"
#include "sim/simulator.h"
#include "test_util.h"

namespace tiresias {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::ReadAll;
using testing::ServeProcess;
using testing::WaitFor;

class ServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshDir(
        fmt::format("serve_{}", ::testing::UnitTest::GetInstance()->current_test_info()->name()));
  }
  void TearDown() override {
    // Leave no job processes behind, whatever happened.
    serve_.reset();
    for (int pid : pids_) kill(-pid, SIGKILL);
    if (!HasFailure()) testing::RemoveServeDir(dir_);  // kept for a look when something failed
  }
  void Serve(std::vector<std::string> args) {
    serve_ = std::make_unique<ServeProcess>(dir_, std::move(args));
    serve_->Start();
  }
  int64_t Submit(const nlohmann::json& body) {
    auto id = serve_->SubmitJob(body);
    EXPECT_TRUE(id.ok()) << id.status().message();
    return id.ok() ? *id : -1;
  }
  nlohmann::json Job(int64_t id) {
    nlohmann::json j = serve_->GetJob(id);
    if (j.is_object() && j["pid"].get<int>() > 0) pids_.insert(j["pid"].get<int>());
    return j;
  }
  std::string State(int64_t id) {
    auto j = Job(id);
    return j.is_null() ? "?" : j["state"].get<std::string>();
  }
  nlohmann::json Events() { return *serve_->Client().GetJson("/v1/events?limit=100000"); }

  fs::path dir_;
  std::unique_ptr<ServeProcess> serve_;
  std::set<int> pids_;
};

bool Ended(const std::string& s) {
  return s == "finished" || s == "failed" || s == "cancelled";
}

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
  EXPECT_EQ(wrong.Post("/v1/jobs", "{\"argv\": [\"true\"]}")->status, 403);
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
  r = post("{\"argv\": [\"true\"], \"gpus\": 4294967297}");
  EXPECT_EQ(r.status, 400) << r.body;
  r = post("{\"argv\": [\"true\"], \"env\": {\"\": \"x\"}}");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(raw.Get("/v1/jobs?state=sleeping")->status, 400);
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
  r = *raw.Post(fmt::format("/v1/jobs/{}/cancel", good), "");
  EXPECT_EQ(r.status, 409) << r.body;
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

TEST_F(ServeTest, AJobThatEndedWhileServeWasDownEndsWhenItEnded) {
  // The job runs 1.5 s; serve is killed 0.3 s into it and restarted 3 s later. The job's end
  // (and so its service and JCT) is when it ended, from its exit record, not the restart.
  Serve({"--gpus", "1", "--policy", "fifo"});
  const int64_t id = Submit({{"argv", {"sleep", "1.5"}}});
  ASSERT_TRUE(WaitFor([&] { return State(id) == "running"; }, 5s));
  std::this_thread::sleep_for(300ms);
  serve_->Stop(SIGKILL);
  std::this_thread::sleep_for(3s);
  serve_->Start();
  ASSERT_TRUE(WaitFor([&] { return State(id) == "finished"; }, 5s));
  const auto j = Job(id);
  const int64_t ran_ms = j["end_ms"].get<int64_t>() - j["first_start_ms"].get<int64_t>();
  EXPECT_GE(ran_ms, 1400) << j.dump();
  EXPECT_LT(ran_ms, 2300) << "ended at the restart, not when it ended: " << j.dump();
  EXPECT_LT(j["attained_gpu_s"].get<double>(), 2.3) << j.dump();
}

TEST_F(ServeTest, DamagedJournalIsRefusedAndNoJobIdIsReused) {
  // Two jobs run and end; serve is killed; then its journal is damaged three ways. Each
  // restart is refused with the recovery choices (it used to start with fewer or zero jobs
  // and give job 1's id, and its output.log, to the next submission). Accepting the loss
  // starts serve, and the next job gets a new id and a fresh log.
  Serve({"--gpus", "1", "--policy", "fifo"});
  const int64_t a = Submit({{"argv", {"sh", "-c", "echo output-of-the-first-job"}}});
  ASSERT_TRUE(WaitFor([&] { return State(a) == "finished"; }, 10s));
  const int64_t b = Submit({{"argv", {"true"}}});
  ASSERT_TRUE(WaitFor([&] { return State(b) == "finished"; }, 10s));
  serve_->Stop(SIGKILL);
  const fs::path db = dir_ / "tiresias.db", wal = dir_ / "tiresias.db-wal";
  ASSERT_TRUE(fs::exists(wal)) << "after kill -9 the commits are in the WAL";
  const fs::path saved = dir_ / "saved";
  fs::create_directories(saved);
  for (const auto& f : {db, wal}) fs::copy_file(f, saved / f.filename());
  auto restore = [&] {
    for (const auto& f : {db, wal})
      fs::copy_file(saved / f.filename(), f, fs::copy_options::overwrite_existing);
  };
  const std::string serve = "serve --gpus 1 --policy fifo --port 0 --state-dir " + dir_.string();
  for (const std::string damage : {"wal deleted", "wal garbage", "db truncated"}) {
    SCOPED_TRACE(damage);
    restore();
    if (damage == "wal deleted") fs::remove(wal);
    if (damage == "wal garbage") std::ofstream(wal, std::ios::binary) << std::string(8192, 'x');
    if (damage == "db truncated") {
      fs::resize_file(db, 0);
      fs::remove(wal);
    }
    auto r = testing::RunTiresias(serve);
    EXPECT_NE(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("was committed"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--accept-journal-loss"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("another --state-dir"), std::string::npos) << r.out;
  }
  // The WAL is gone; the operator accepts the loss.
  restore();
  fs::remove(wal);
  Serve({"--gpus", "1", "--policy", "fifo", "--accept-journal-loss"});
  EXPECT_NE(ReadAll(dir_ / "serve.out").find("continuing (--accept-journal-loss)"),
            std::string::npos)
      << ReadAll(dir_ / "serve.out");
  const int64_t c = Submit({{"argv", {"sh", "-c", "echo output-of-the-new-job"}}});
  EXPECT_GT(c, b) << "a job id given out before the loss is never given out again";
  ASSERT_TRUE(WaitFor([&] { return State(c) == "finished"; }, 10s));
  const std::string log = ReadAll(dir_ / "tiresias-jobs" / std::to_string(c) / "output.log");
  EXPECT_NE(log.find("output-of-the-new-job"), std::string::npos) << log;
  EXPECT_EQ(log.find("output-of-the-first-job"), std::string::npos) << log;
}

// Where serve could make a cgroup per job; else the reason it gives.
std::optional<std::string> NoCgroups(const ApiClient& c) {
  auto nodes = c.GetJson("/v1/nodes");
  if (!nodes.ok()) return nodes.status().message();
  const std::string how = (*nodes)["nodes"][0]["containment"].get<std::string>();
  if (how.starts_with("cgroup")) return std::nullopt;
  return how;
}

TEST_F(ServeTest, ContainmentIsShownAndProcessGroupsCanBeChosen) {
  Serve({"--gpus", "1", "--no-cgroups"});
  auto nodes = serve_->Client().GetJson("/v1/nodes");
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  EXPECT_EQ((*nodes)["nodes"][0]["containment"], "process groups only: disabled by --no-cgroups");
  EXPECT_NE(ReadAll(dir_ / "serve.out")
                .find("jobs contained by process groups only: disabled by "
                      "--no-cgroups\n  WARNING: a job process that calls "
                      "setsid escapes"),
            std::string::npos)
      << ReadAll(dir_ / "serve.out");
  auto cli = testing::RunTiresias("nodes --state-dir " + dir_.string());
  EXPECT_NE(cli.out.find("jobs contained by process groups only"), std::string::npos) << cli.out;
  serve_.reset();
  fs::remove(dir_ / "serve.out");
  Serve({"--gpus", "1"});
  const std::string banner = ReadAll(dir_ / "serve.out");
  if (auto why = NoCgroups(serve_->Client())) {
    EXPECT_NE(banner.find("jobs contained by " + *why), std::string::npos) << banner;
  } else {
    EXPECT_NE(banner.find("jobs contained by cgroup v"), std::string::npos) << banner;
    EXPECT_EQ(banner.find("WARNING"), std::string::npos) << banner;
  }
}

TEST_F(ServeTest, GpusAreNotHandedOnWhileAFinishedJobsEscapeeRuns) {
  // Defect: a job that starts `setsid sh -c "sleep 20" &` and exits was marked finished and
  // the next job got the same GPU while the escapee still ran. Its cgroup catches it: killed
  // when the command ends, and the next job starts only once it is gone.
  Serve({"--gpus", "1", "--policy", "fifo"});
  if (auto why = NoCgroups(serve_->Client())) GTEST_SKIP() << *why;
  const std::string f = (dir_ / "escapee").string(), seen = (dir_ / "seen").string();
  const int64_t a = Submit({{"argv",
                             {"sh", "-c",
                              "setsid sh -c 'echo $$ > " + f + "; exec sleep 20' & while [ ! -s " +
                                  f + " ]; do sleep 0.01; done; exit 0"}}});
  // What the next job on that GPU sees of the escapee: its state letter, or gone.
  const int64_t b = Submit(
      {{"argv",
        {"sh", "-c",
         "s=$(sed -n 's/^State:[[:space:]]*\\(.\\).*/\\1/p' /proc/$(cat " + f +
             ")/status 2>/dev/null); echo \"gpu $CUDA_VISIBLE_DEVICES escapee ${s:-gone}\" > " +
             seen}}});
  ASSERT_TRUE(WaitFor([&] { return State(b) == "finished"; }, 10s)) << State(b);
  EXPECT_EQ(State(a), "finished");
  const std::string got = ReadAll(seen);
  EXPECT_TRUE(got == "gpu 0 escapee gone\n" || got == "gpu 0 escapee Z\n") << got;
}

TEST_F(ServeTest, ShimKilledWhileServeIsDownIsAdoptedNotRunTwice) {
  // Defect: kill -9 serve, kill -9 the job's shim while serve is down, restart serve: it
  // called the job vanished and launched attempt 1 while attempt 0's processes still ran.
  Serve({"--gpus", "1"});
  if (auto why = NoCgroups(serve_->Client())) GTEST_SKIP() << *why;
  const std::string starts = (dir_ / "starts").string(), go = (dir_ / "go").string();
  const int64_t id = Submit({{"argv",
                              {"sh", "-c",
                               "echo \"attempt $TIRESIAS_ATTEMPT\" >> " + starts +
                                   "; while [ ! -e " + go + " ]; do sleep 0.02; done"}}});
  ASSERT_TRUE(WaitFor([&] { return State(id) == "running" && !ReadAll(starts).empty(); }, 5s));
  const int shim = Job(id)["pid"].get<int>();
  serve_->Stop(SIGKILL);
  ASSERT_EQ(kill(shim, SIGKILL), 0);
  std::this_thread::sleep_for(100ms);
  serve_->Start();
  std::this_thread::sleep_for(500ms);  // a few rounds of the loop
  auto j = Job(id);
  EXPECT_EQ(j["state"], "running") << j.dump();
  EXPECT_EQ(j["attempt"], 0) << j.dump();
  bool adopted = false;
  for (const auto& e : Events()) {
    if (e["job"] != id) continue;
    adopted |= e["kind"] == "adopt";
    EXPECT_NE(e["kind"], "interrupt") << e.dump();
    EXPECT_NE(e["kind"], "requeue") << e.dump();
  }
  EXPECT_TRUE(adopted);
  std::ofstream(go) << "";
  ASSERT_TRUE(WaitFor([&] { return Ended(State(id)); }, 5s));
  EXPECT_EQ(ReadAll(starts), "attempt 0\n") << "run twice";
  // Its supervisor is gone, so nothing recorded how it ended, and serve does not pretend.
  j = Job(id);
  EXPECT_EQ(j["state"], "failed") << j.dump();
  EXPECT_EQ(j["message"], "failed: unknown (no exit record)") << j.dump();
}

TEST_F(ServeTest, Kill9AtRandomMomentsLosesNoJob) {
  Serve({"--gpus", "4", "--policy", "dlas"});
  std::atomic<bool> done = false;
  std::mutex mu;
  std::vector<int64_t> acked;
  int retries = 0;
  std::thread submitter([&] {
    std::mt19937 rng(11);
    for (int i = 0; i < 60; ++i) {
      nlohmann::json body = {{"gpus", 1 + static_cast<int>(rng() % 2)},
                             {"name", fmt::format("s{}", i)},
                             {"argv", {"sleep", "0.3"}}};
      for (;;) {
        auto c = ApiClient::Connect({.state_dir = dir_.string()});
        auto r = c.ok() ? c->PostJson("/v1/jobs", body) : StatusOr<nlohmann::json>(c.status());
        if (r.ok()) {
          std::lock_guard lk(mu);
          acked.push_back((*r)["id"].get<int64_t>());
          break;
        }
        ++retries;  // the daemon is down: try again, as a user would
        std::this_thread::sleep_for(30ms);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 40));
    }
    done = true;
  });
  std::mt19937 rng(5);
  int kills = 0;
  while (!done || kills < 4) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + rng() % 500));
    serve_->Stop(SIGKILL);
    ++kills;
    serve_->Start();
  }
  submitter.join();
  ASSERT_TRUE(WaitFor(
      [&] {
        auto all = serve_->Client().GetJson("/v1/jobs");
        if (!all.ok()) return false;
        for (const auto& j : *all) {
          if (!Ended(j["state"])) return false;
        }
        return true;
      },
      60s));
  std::set<int64_t> ids;
  const auto all = serve_->Client().GetJson("/v1/jobs");
  ASSERT_TRUE(all.ok()) << all.status().message();
  for (const auto& j : *all) {
    ids.insert(j["id"].get<int64_t>());
    EXPECT_EQ(j["state"], "finished") << j.dump();
    // Adopted across restarts, never relaunched because of one: every attempt after the
    // first is explained by a dlas preemption, and the log has one start line per attempt.
    EXPECT_EQ(j["attempt"], j["preemptions"]) << j.dump();
    const std::string log =
        ReadAll(dir_ / "tiresias-jobs" / std::to_string(j["id"].get<int64_t>()) / "output.log");
    size_t starts = 0;
    for (size_t p = log.find("started"); p != std::string::npos; p = log.find("started", p + 1)) {
      ++starts;
    }
    EXPECT_EQ(starts, j["attempt"].get<size_t>() + 1) << log;
  }
  for (int64_t id : acked) EXPECT_TRUE(ids.contains(id)) << "acknowledged job " << id << " lost";
  EXPECT_EQ(acked.size(), 60u);
  EXPECT_GE(kills, 4);
  RecordProperty("kills", kills);
  RecordProperty("retries", retries);
}

TEST_F(ServeTest, CompletedDuringItsGraceIsFinishedNotRelaunched) {
  // Two jobs that, told to stop (here by requeue), finish their work instead and exit 0. One
  // leaves its done file ($TIRESIAS_DONE_FILE): it is finished, attempt 0, never run again, and
  // its checkpoint directory is removed. The other does not: its exit 0 is a checkpoint exit,
  // and it is relaunched (attempt 1), as a job that exits 0 after checkpointing must be.
  Serve({"--gpus", "2", "--grace", "10"});
  auto job = [&](const std::string& name, const std::string& on_term) {
    const std::string started = (dir_ / (name + "-started")).string();
    return Submit({{"name", name},
                   {"argv",
                    {"sh", "-c",
                     "trap '" + on_term +
                         "' TERM; echo \"attempt $TIRESIAS_ATTEMPT\"; echo x > "
                         "\"$TIRESIAS_CHECKPOINT_DIR/state\"; touch " +
                         started + "; while :; do sleep 0.05; done"}}});
  };
  const int64_t done = job("done", "sleep 0.2; touch \"$TIRESIAS_DONE_FILE\"; exit 0");
  const int64_t silent = job("silent", "sleep 0.2; exit 0");
  ASSERT_TRUE(WaitFor(
      [&] { return fs::exists(dir_ / "done-started") && fs::exists(dir_ / "silent-started"); },
      10s));
  for (int64_t id : {done, silent}) {
    auto r = serve_->Client().PostJson(fmt::format("/v1/jobs/{}/requeue", id), {});
    ASSERT_TRUE(r.ok()) << r.status().message();
  }
  ASSERT_TRUE(WaitFor([&] { return State(done) == "finished"; }, 10s)) << Job(done).dump();
  auto j = Job(done);
  EXPECT_EQ(j["attempt"], 0) << j.dump();
  EXPECT_EQ(j["exit_code"], 0) << j.dump();
  EXPECT_NE(j["message"].get<std::string>().find("done file"), std::string::npos) << j.dump();
  EXPECT_FALSE(fs::exists(dir_ / "tiresias-jobs" / std::to_string(done) / "checkpoint"));
  bool completed_exit = false;
  for (const auto& e : Events()) {
    if (e["job"] == done && e["kind"] == "exit")
      completed_exit = e["detail"].value("completed", false);
  }
  EXPECT_TRUE(completed_exit);
  const fs::path silent_log = dir_ / "tiresias-jobs" / std::to_string(silent) / "output.log";
  ASSERT_TRUE(
      WaitFor([&] { return ReadAll(silent_log).find("attempt 1") != std::string::npos; }, 10s))
      << ReadAll(silent_log);
  EXPECT_EQ(State(silent), "running");
  EXPECT_TRUE(fs::exists(dir_ / "tiresias-jobs" / std::to_string(silent) / "checkpoint" / "state"));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(Job(done)["attempt"], 0) << "never relaunched";
  ASSERT_TRUE(serve_->Client().PostJson(fmt::format("/v1/jobs/{}/cancel", silent), {}).ok());
}

TEST_F(ServeTest, CheckpointsGoWhenAJobFinishesUnlessKept) {
  // Finished: removed. Finished with keep_checkpoints, failed, or cancelled: kept.
  Serve({"--gpus", "4"});
  const std::string write = "echo x > \"$TIRESIAS_CHECKPOINT_DIR/ckpt\"";
  const int64_t ok = Submit({{"argv", {"sh", "-c", write}}});
  const int64_t kept = Submit({{"argv", {"sh", "-c", write}}, {"keep_checkpoints", true}});
  const int64_t failed = Submit({{"argv", {"sh", "-c", write + "; exit 3"}}});
  const int64_t cancelled = Submit({{"argv", {"sh", "-c", write + "; sleep 30"}}});
  auto ckpt = [&](int64_t id) {
    return dir_ / "tiresias-jobs" / std::to_string(id) / "checkpoint" / "ckpt";
  };
  ASSERT_TRUE(WaitFor([&] { return fs::exists(ckpt(cancelled)); }, 10s));
  ASSERT_TRUE(serve_->Client().PostJson(fmt::format("/v1/jobs/{}/cancel", cancelled), {}).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        return Ended(State(ok)) && Ended(State(kept)) && Ended(State(failed)) &&
               Job(cancelled)["pid"] == 0;  // cancelled, and its process gone
      },
      10s));
  EXPECT_EQ(State(ok), "finished");
  EXPECT_FALSE(fs::exists(ckpt(ok).parent_path()));
  EXPECT_EQ(State(kept), "finished");
  EXPECT_TRUE(fs::exists(ckpt(kept)));
  EXPECT_EQ(Job(kept)["keep_checkpoints"], true);
  EXPECT_EQ(State(failed), "failed");
  EXPECT_TRUE(fs::exists(ckpt(failed)));
  EXPECT_TRUE(fs::exists(ckpt(cancelled)));
}

}  // namespace
}  // namespace tiresias
