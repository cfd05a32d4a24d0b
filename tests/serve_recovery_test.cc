// End-to-end tests of `tiresias serve` across crashes and under containment, with real
// processes: a job that ended while serve was down, a damaged journal, kill -9 recovery under
// a stream of submissions; a job's escaped processes keep its GPUs until they are gone, and a
// job whose supervisor was killed while serve was down is adopted, not run twice (both skip
// without a writable cgroup); a job that completes during its grace (its done file) is not run
// again, and a finished job's checkpoint directory is removed unless kept.
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
#include "serve_fixture.h"
#include "sim/simulator.h"

namespace tiresias::serve_test {
namespace {

using namespace std::chrono_literals;
using testing::ReadAll;
using testing::WaitFor;

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

TEST_F(ServeTest, WaitAndLogsFollowRideThroughARestartOfServe) {
  // Found by an exploratory test: `wait` and `logs -f` gave up ("cannot reach tiresias
  // serve", exit 1, as wait's own timeout) when serve was restarted, though the job went on.
  Serve({"--gpus", "1"});
  const int64_t id = Submit({{"argv", {"sh", "-c", "sleep 3; echo done"}}});
  ASSERT_TRUE(WaitFor([&] { return State(id) == "running"; }, 5s));
  const std::string sd = dir_.string(), bin = TIRESIAS_BINARY;
  for (const char* what : {"wait", "logs -f"}) {
    const std::string out = sd + "/" + std::string(what).substr(0, 4) + ".out";
    ASSERT_EQ(std::system(fmt::format("({} {} {} --state-dir {} > {} 2>&1; echo rc=$? >> {}) &",
                                      bin, what, id, sd, out, out)
                              .c_str()),
              0);
  }
  // events -f follows too (it exited, rc 1); it runs until stopped (here by timeout).
  const std::string events_out = sd + "/events.out";
  ASSERT_EQ(std::system(fmt::format("timeout 30 {} events -f --state-dir {} > {} 2>&1 &", bin, sd,
                                    events_out)
                            .c_str()),
            0);
  std::this_thread::sleep_for(500ms);
  serve_->Stop(SIGTERM);
  std::this_thread::sleep_for(2s);
  serve_->Start();
  ASSERT_TRUE(WaitFor(
      [&] {
        const std::string got = ReadAll(events_out);
        const size_t back = got.find("waiting for serve to come back");
        return back != std::string::npos && got.find("finish", back) != std::string::npos;
      },
      30s))
      << ReadAll(events_out);
  for (const char* out : {"/wait.out", "/logs.out"}) {
    ASSERT_TRUE(WaitFor([&] { return ReadAll(sd + out).find("rc=") != std::string::npos; }, 30s))
        << out << ": " << ReadAll(sd + out);
    const std::string got = ReadAll(sd + out);
    EXPECT_NE(got.find("rc=0"), std::string::npos) << got;
    EXPECT_NE(got.find("waiting for serve to come back"), std::string::npos) << got;
  }
  EXPECT_NE(ReadAll(sd + "/wait.out").find(fmt::format("job {}: finished", id)), std::string::npos);
  EXPECT_NE(ReadAll(sd + "/logs.out").find("done\n"), std::string::npos);
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
}  // namespace tiresias::serve_test
