// Test fixture for LiveScheduler: a virtual clock with scripted processes (FakeWorld,
// FakeRunner), a state directory per test, Drive() to feed submissions and step until all
// ended, and the simulator run of the same workload to compare with. Used by
// src/live/live_*_test.cc
//
#pragma once

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>

#include "common/strings.h"
#include "live/live_scheduler.h"
#include "sim/simulator.h"

namespace tiresias {

// Processes that do `work` ms of progress, checkpoint instantly on SIGTERM and resume where
// they stopped. Shared across LiveScheduler instances so they "survive" a daemon crash.
struct FakeWorld {
  int64_t now = 1'000'000;  // wall ms
  std::map<JobId, Duration> work;
  std::map<JobId, Duration> done;
  struct P {
    JobId job;
    int attempt;
    int64_t launched;
    int64_t exit_at;  // wall ms
    int code = 0, sig = 0;
    bool reported = false;
    bool lost = false, cancelled = false;  // how a cluster engine may end it
    bool timed_out = false;                // the engine's own time limit ended it (TIMEOUT)
    bool done_file = false;                // it left its done file (TIRESIAS_DONE_FILE)
  };
  std::map<int, P> procs;  // pid -> process
  int next_pid = 100;
  std::vector<std::string> launches;  // "job@ms:devices"
  bool ignore_term = false;           // processes that ignore SIGTERM (only SIGKILL stops them)
  Duration linger = 0;  // a killed process is reported gone this long after SIGKILL (an engine)
  // Every exit is reported this long after it happened, with its own status (Slurm: the job
  // COMPLETING through a slow epilog); a kill meanwhile finds the process gone.
  Duration completing = 0;
  // Processes that, told to stop, finish their work instead (within the grace) and exit 0,
  // leaving their done file when `done_files`.
  bool finish_on_term = false, done_files = false;
  std::vector<std::string> overlaps;                // launches onto a GPU a live process still held
  std::map<int, std::vector<std::string>> devices;  // pid -> its GPUs
  std::optional<std::vector<NodeReport>> node_report;  // the next PollNodes answer
  bool find_launched = false;     // FindLaunched finds this world's processes (else never)
  int64_t engine_busy_until = 0;  // until then Launch is Unavailable (a queued submission)
  std::set<JobId> refused;        // Launch refuses these jobs (an engine's permanent refusal)
  std::map<JobId, std::string> not_started;  // launched, the engine keeps them pending (why)
  // Held by an admin in the engine (Executor::EngineHolds); nullopt: the engine cannot say.
  std::optional<std::map<JobId, std::string>> engine_holds;
  std::vector<std::string> signals;  // "job:sig@ms", each signal sent to a live process
  bool queued_signals = false;       // an engine whose signals are queued (SignalsAtOnce false)
  bool engine_jobs = false;  // Launch names an engine's job (Slurm's id: the pid) for each run
  std::function<void()> on_launch;  // called as each Launch begins (a fault meanwhile)

  bool Alive(const P& p) const { return !p.reported && p.exit_at > now; }

  int64_t NextExit() const {
    int64_t t = kNever;
    for (const auto& [pid, p] : procs) {
      if (!p.reported) t = std::min(t, p.exit_at);
    }
    return t;
  }
};

class FakeRunner : public Executor {
 public:
  explicit FakeRunner(FakeWorld& w) : w_(w) {}
  StatusOr<Launched> Launch(const LaunchSpec& s) override {
    if (w_.on_launch) w_.on_launch();
    if (w_.now < w_.engine_busy_until) {
      return Unavailable(
          fmt::format("job {}: its held Slurm job is being submitted", s.job.value()));
    }
    if (w_.refused.contains(s.job)) {
      return IoError(fmt::format("job {}: sbatch: exit 1: refused", s.job.value()));
    }
    const int pid = w_.next_pid++;
    std::vector<std::string> devs;
    for (const GpuId& g : s.gpus) {
      devs.push_back(g.node == 0 ? std::to_string(g.index) : fmt::format("{}:{}", g.node, g.index));
    }
    for (const auto& [other, p] : w_.procs) {
      if (!w_.Alive(p) && !(p.exit_at == w_.now && !p.reported)) continue;
      for (const auto& d : w_.devices[other]) {
        if (std::find(devs.begin(), devs.end(), d) != devs.end()) {
          w_.overlaps.push_back(fmt::format("job {} on GPU {} at {} while job {} ran there",
                                            s.job.value(), d, w_.now, p.job.value()));
        }
      }
    }
    w_.devices[pid] = devs;
    const Duration left = w_.work.at(s.job) - w_.done[s.job];
    w_.procs[pid] = {
        .job = s.job, .attempt = s.attempt, .launched = w_.now, .exit_at = w_.now + left};
    w_.launches.push_back(fmt::format("{}@{}:{}", s.job.value(), w_.now, Join(devs, ",")));
    mine_.insert(pid);
    return Launched{.ref = {.pid = pid, .start_ticks = pid * 7},
                    .visible_devices = Join(devs, ","),
                    .engine_job = w_.engine_jobs ? std::to_string(pid) : ""};
  }
  bool SignalsAtOnce() const override { return !w_.queued_signals; }
  Status Signal(const ProcessRef& r, int sig) override {
    auto& p = w_.procs.at(r.pid);
    if (p.reported || p.exit_at <= w_.now) return NotFound("gone");
    w_.signals.push_back(fmt::format("{}:{}@{}", p.job.value(), sig, w_.now));
    if (sig != SIGKILL && w_.ignore_term) return Status::Ok();
    if (sig != SIGKILL && w_.finish_on_term) {
      w_.done[p.job] += p.exit_at - p.launched;
      p.done_file = w_.done_files;
      return Status::Ok();
    }
    w_.done[p.job] += w_.now - p.launched;  // checkpoint what it did
    p.exit_at = w_.now;
    if (sig == SIGKILL) {
      p.sig = 9;
      p.exit_at += w_.linger;
    }
    return Status::Ok();
  }
  // As the local executor: a process that has exited is not adopted; its exit is read from
  // its record instead (ReadExit).
  bool Adopt(JobId, int, const ProcessRef& r, const std::string&) override {
    auto it = w_.procs.find(r.pid);
    if (it == w_.procs.end() || it->second.reported || r.start_ticks != r.pid * 7) return false;
    if (it->second.exit_at <= w_.now) return false;
    mine_.insert(r.pid);
    return true;
  }
  std::optional<ExitInfo> ReadExit(JobId job, int attempt, const std::string&) override {
    for (auto& [pid, p] : w_.procs) {
      if (p.job != job || p.attempt != attempt || p.reported || p.exit_at > w_.now) continue;
      p.reported = true;
      ExitInfo e = ExitOf(p);
      e.ended_wall_ms = p.exit_at;
      return e;
    }
    return std::nullopt;
  }
  std::optional<ProcessRef> FindLaunched(JobId job, int attempt, const std::string&) override {
    if (!w_.find_launched) return std::nullopt;
    for (const auto& [pid, p] : w_.procs) {
      if (p.job == job && p.attempt == attempt && !p.reported) {
        return ProcessRef{.pid = pid, .start_ticks = pid * 7};
      }
    }
    return std::nullopt;
  }
  std::vector<ExitInfo> Poll() override {
    std::vector<ExitInfo> out;
    for (int pid : mine_) {
      auto& p = w_.procs.at(pid);
      if (p.reported || p.exit_at + w_.completing > w_.now) continue;
      p.reported = true;
      out.push_back(ExitOf(p));
    }
    return out;
  }
  static ExitInfo ExitOf(const FakeWorld::P& p) {
    return {.job = p.job,
            .attempt = p.attempt,
            .exit_code = p.sig || p.lost || p.cancelled ? -1 : p.code,
            .signal = p.sig,
            .cancelled = p.cancelled,
            .lost = p.lost,
            .timed_out = p.timed_out,
            .reason = p.lost        ? "NODE_FAIL on n1"
                      : p.cancelled ? "scancel by bob"
                      : p.timed_out ? "Slurm job 48 TIMEOUT (TimeLimit)"
                                    : "",
            .completed = p.done_file};
  }
  std::optional<std::map<JobId, std::string>> EngineHolds() const override {
    return w_.engine_holds;
  }
  std::string NotStarted(JobId job) const override {
    auto it = w_.not_started.find(job);
    return it == w_.not_started.end() ? "" : it->second;
  }
  std::optional<std::vector<NodeReport>> PollNodes() override {
    auto r = w_.node_report;
    w_.node_report.reset();
    return r;
  }

 private:
  FakeWorld& w_;
  std::set<int> mine_;
};

struct Submission {
  Time at;  // ms after the start
  int gpus;
  Duration work;
};

class LiveSchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           fmt::format("tiresias-live-{}-{}", getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ServeConfig Config() {
    ServeConfig c;
    c.state_dir = dir_.string();
    c.policy = "dlas";
    c.policy_opts = policy_opts_;
    c.gpu_devices = {"0", "1", "2", "3"};
    if (!cluster_.empty()) {
      c.gpu_devices.clear();
      c.nodes = cluster_;
      c.executor = executor_.empty() ? "fake" : executor_;
    }
    c.launch_probe_ms = 0;
    c.grace = grace_;
    c.checkpoint_aware = checkpoint_aware_;
    c.tenants = tenants_;
    c.tenants_file = "tenants.json";
    c.disk = disk_;
    c.keep_finished = keep_finished_;
    return c;
  }

  // Touches job `id`'s checkpoint marker (TIRESIAS_CHECKPOINT_FILE) with mtime `wall_ms`.
  void TouchMarker(JobId id, int64_t wall_ms) {
    const auto marker = dir_ / "tiresias-jobs" / id.str() / "checkpoint" / ".tiresias-checkpoint";
    std::filesystem::create_directories(marker.parent_path());
    { std::ofstream(marker.string()) << "step\n"; }
    const timespec ts{.tv_sec = wall_ms / 1000, .tv_nsec = (wall_ms % 1000) * 1'000'000};
    const timespec both[2] = {ts, ts};
    ASSERT_EQ(utimensat(AT_FDCWD, marker.c_str(), both, 0), 0);
  }

  std::unique_ptr<LiveScheduler> Start() {
    auto store = Store::Open((dir_ / "tiresias.db").string(), world_.now, store_opts_);
    EXPECT_TRUE(store.ok()) << store.status().message();
    auto d = std::make_unique<LiveScheduler>(Config(), std::move(*store),
                                             std::make_unique<FakeRunner>(world_),
                                             [this] { return world_.now; });
    Status s = d->Open();
    EXPECT_TRUE(s.ok()) << s.message();
    return d;
  }

  // Feeds the submissions at their times and steps until everything ended. With
  // `crash_odds` > 0, drops the scheduler at random steps and starts a new one on the same
  // database (the processes keep running meanwhile).
  void Drive(const std::vector<Submission>& subs, double crash_odds = 0, unsigned seed = 1) {
    const int64_t t0 = world_.now;
    auto d = Start();
    std::mt19937 rng(seed);
    size_t next_sub = 0;
    for (int guard = 0; guard < 100000; ++guard) {
      while (next_sub < subs.size() && t0 + subs[next_sub].at <= world_.now) {
        SubmitRequest r{
            .name = fmt::format("j{}", next_sub), .gpus = subs[next_sub].gpus, .argv = {"train"}};
        auto id = d->Submit(r);
        ASSERT_TRUE(id.ok()) << id.status().message();
        world_.work[*id] = subs[next_sub].work;
        ++next_sub;
      }
      const int64_t due = d->Step();
      if (crash_odds > 0 && std::uniform_real_distribution<>(0, 1)(rng) < crash_odds) {
        d.reset();  // kill -9: nothing is flushed beyond what was committed
        d = Start();
        ++crashes_;
        continue;
      }
      int64_t next = std::min(due, world_.NextExit());
      if (next_sub < subs.size()) next = std::min(next, t0 + subs[next_sub].at);
      if (next == kNever) break;
      world_.now = std::max(world_.now, next);
    }
    final_ = d->List();
  }

  // dlas with an 8 GPU-s first queue on the 4 GPUs, grace 4 s, processes that ignore SIGTERM.
  // X (4 GPUs) runs from t0 and is demoted at 2 s; Y (4 GPUs, `y_work` ms) arrives at 3 s and
  // preempts it: X is told to stop and keeps its GPUs until its kill at 7 s. Returns at 3 s,
  // X preempting.
  struct Preempted {
    std::unique_ptr<LiveScheduler> d;
    JobId x, y;
    int64_t t0;
  };
  Preempted PreemptATermIgnoringJob(Duration y_work) {
    policy_opts_ = {"thresholds=8"};
    grace_ = Seconds(4);
    world_.ignore_term = true;
    Preempted p{.d = Start(), .t0 = world_.now};
    p.x = *p.d->Submit({.name = "x", .gpus = 4, .argv = {"train"}});
    world_.work[p.x] = 1'000'000;
    p.d->Step();
    world_.now = p.t0 + 3'000;
    p.d->Step();
    EXPECT_EQ((*p.d->Get(p.x))["queue"], "Q2");
    p.y = *p.d->Submit({.name = "y", .gpus = 4, .argv = {"train"}});
    world_.work[p.y] = y_work;
    p.d->Step();
    EXPECT_EQ((*p.d->Get(p.x))["state"], "preempting");
    return p;
  }

  // dlas with an 8 GPU-s first queue, and an engine that cannot take a launch (Unavailable,
  // a queued submission) until `busy_until`: a 1-GPU job of 3 s of work submitted now, not
  // stepped yet. Returns it.
  JobId OneJobTheEngineTakesAt(std::unique_ptr<LiveScheduler>& d, int64_t busy_until) {
    policy_opts_ = {"thresholds=8"};
    world_.engine_busy_until = busy_until;
    d = Start();
    const JobId a = *d->Submit({.name = "a", .gpus = 1, .argv = {"train"}});
    world_.work[a] = 3'000;
    return a;
  }

  // A 64 MiB reserve on a disk whose free space is `free` (read at every look), before Start.
  void ModelDisk(const int64_t& free) {
    disk_ = std::make_shared<DiskReserve>((dir_ / "tiresias.reserve").string(), int64_t{64} << 20,
                                          [&free]() -> StatusOr<int64_t> { return free; }, 0);
  }

  // Two nodes x 2 GPUs (a cluster executor's) with n1 down, dlas without demotion: a 2-GPU job
  // B runs on n2 from now (after one step). Returns B.
  JobId RunOnTheSecondOfTwoNodes(std::unique_ptr<LiveScheduler>& d) {
    cluster_ = {{"n1", 2}, {"n2", 2}};
    policy_opts_ = {"thresholds=100000"};
    world_.node_report = std::vector<NodeReport>{
        {.name = "n1", .state = "down", .usable = false, .gpus = 2, .reason = "maintenance"},
        {.name = "n2", .state = "idle", .gpus = 2}};
    d = Start();
    const JobId b = *d->Submit({.name = "b", .gpus = 2, .argv = {"train"}});
    world_.work[b] = 1'000'000;
    d->Step();
    EXPECT_EQ((*d->Get(b))["state"], "running");
    return b;
  }

  // Starts serve with a 1-GPU job T with a 10 s time limit, from `t0`; steps to 10 s, where T
  // is told to stop (`preempting`). Returns T.
  JobId TellToStopAtItsTimeLimit(std::unique_ptr<LiveScheduler>& d, int64_t t0) {
    d = Start();
    const JobId t = *d->Submit({.name = "t", .gpus = 1, .argv = {"train"}, .time = "0:10"});
    world_.work[t] = 1'000'000;
    d->Step();
    world_.now = t0 + 10'000;
    d->Step();
    EXPECT_EQ((*d->Get(t))["state"], "preempting");
    return t;
  }

  // From `t0`: steps at `crash` ms, kills serve there (-9: nothing flushed beyond what was
  // committed), starts it again at `restart` and steps every 100 ms until `until`.
  void Kill9AndRestart(std::unique_ptr<LiveScheduler>& d, int64_t t0, int64_t crash,
                       int64_t restart, int64_t until) {
    world_.now = t0 + crash;
    d->Step();
    d.reset();
    world_.now = t0 + restart;
    d = Start();
    for (; world_.now < t0 + until; world_.now += 100) d->Step();
  }

  std::filesystem::path dir_;
  FakeWorld world_;
  nlohmann::json final_;
  int crashes_ = 0;
  Duration grace_ = Seconds(30);
  std::optional<bool> checkpoint_aware_;
  std::optional<TenantConfig> tenants_;  // ServeConfig::tenants
  std::shared_ptr<DiskReserve> disk_;    // ServeConfig::disk
  Duration keep_finished_ = 0;           // ServeConfig::keep_finished
  Store::Options store_opts_;            // how Start() opens the journal
  std::string executor_;  // the cluster executor's name when cluster_ is set ("fake")
  std::vector<std::string> policy_opts_ = {"thresholds=20"};  // demote after 20 s on 1 GPU
  std::vector<NodeSpec> cluster_;                             // empty: one local node with 4 GPUs
};

inline std::vector<Submission> Workload() {
  // A long 4-GPU job first, then short jobs that preempt it under dlas (20 GPU-s threshold:
  // the 4-GPU job is demoted after 5 s), a 2-GPU job and a job arriving while others wait.
  return {{0, 4, 60'000},      {2'000, 1, 3'000},  {2'000, 2, 8'000},   {9'000, 1, 4'000},
          {9'500, 3, 12'000},  {10'000, 1, 1'000}, {30'000, 2, 25'000}, {31'000, 1, 2'000},
          {31'000, 4, 10'000}, {45'000, 1, 30'000}};
}

inline SimResult Simulate(const std::vector<Submission>& subs, Time t0) {
  SimConfig c;
  c.record_events = true;
  c.topo = *Topology::Create(1, 1, 4);
  c.policy = "dlas";
  c.policy_opts = {"thresholds=20"};
  c.placement = "consolidate";
  c.preempt_overhead = 0;  // the fake processes checkpoint and resume instantly
  std::vector<JobSpec> jobs;
  for (size_t i = 0; i < subs.size(); ++i) {
    jobs.push_back(JobSpec{.id = JobId(static_cast<int64_t>(i) + 1),
                           .gpus = subs[i].gpus,
                           .submit = t0 + subs[i].at,
                           .duration = subs[i].work});
  }
  auto r = RunSimulation(c, jobs);
  EXPECT_TRUE(r.ok());
  return *r;
}

inline void ExpectMatchesSimulator(const nlohmann::json& live, const SimResult& sim,
                                   int64_t epoch) {
  ASSERT_EQ(live.size(), sim.jobs.size());
  int preemptions = 0;
  for (size_t i = 0; i < sim.jobs.size(); ++i) {
    const auto& s = sim.jobs[i];
    const auto& l = live[i];
    SCOPED_TRACE(fmt::format("job {}", s.id.value()));
    EXPECT_EQ(l["state"], "finished");
    EXPECT_EQ(l["first_start_ms"].get<int64_t>() - epoch, s.first_start);
    EXPECT_EQ(l["end_ms"].get<int64_t>() - epoch, s.end);
    EXPECT_EQ(l["preemptions"].get<int>(), s.preemptions);
    preemptions += s.preemptions;
  }
  EXPECT_GE(preemptions, 2) << "the workload must exercise preemption";
}

// Every event of the journal at `db`, oldest first.
inline std::vector<Event> Journal(const std::filesystem::path& db) {
  auto store = Store::Open(db.string(), 0);
  EXPECT_TRUE(store.ok());
  auto rows = (*store)->LoadEvents();
  EXPECT_TRUE(rows.ok());
  std::vector<Event> out;
  for (const auto& r : *rows) out.push_back(r.event);
  return out;
}

// How many of `events` are of kind `k`.
inline int Count(const std::vector<Event>& events, EventKind k) {
  return static_cast<int>(
      std::count_if(events.begin(), events.end(), [&](const Event& e) { return e.kind == k; }));
}

}  // namespace tiresias
