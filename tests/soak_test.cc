// The bounded soak: 6,000 jobs through the API of a real `tiresias serve` (8 emulated GPUs,
// dlas with a tiny threshold so jobs are demoted and preempted all the time), random cancels,
// and 20 `kill -9`s of serve at random moments. At the end: no acknowledged job is lost,
// every job ended once, no job ever ran two attempts at once (each attempt holds an flock on
// a per-job file; one that finds it held fails with kDouble), and the API's final state
// equals an independent replay of the journal through a fresh core. Prints the figures the
// README quotes. TIRESIAS_SOAK_JOBS and TIRESIAS_SOAK_KILLS scale it.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "cli/client.h"
#include "core/event_log.h"
#include "engine/core_builder.h"
#include "exec/exit_file.h"
#include "serve_process.h"
#include "store/store.h"
#include "test_files.h"
#include "test_util.h"

namespace tiresias {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

int EnvInt(const char* name, int def) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : def;
}

constexpr int kGpus = 8;
// The exit code of an attempt that found its job's lock held: two attempts at once.
constexpr int kDouble = 75;
// The options are pinned (the paper's FIFO inside a queue, no promotion): with the shipped
// PROMOTEKNOB 8 a 0.05 GPU-s threshold promotes a job after 0.4 s of waiting, and every
// promotion preempts a job that then takes its 1 s grace to leave: the cluster thrashes (with
// those defaults this soak did not end its jobs within 10 minutes).
const std::vector<std::string> kServeArgs = {
    "--gpus",           "8",     "--policy",       "dlas",    "--opt", "thresholds=0.05", "--opt",
    "queue_order=fifo", "--opt", "promote_knob=0", "--grace", "1"};

// Every attempt that exited with kDouble, as its supervisor recorded it (the attempt's exit
// file): also one that serve lost track of. "job N: attempt-K.exit". `read`: the exit files.
std::vector<std::string> DoubledAttempts(const fs::path& state, int& read) {
  std::vector<std::string> out;
  read = 0;
  for (const auto& f : fs::recursive_directory_iterator(state / "tiresias-jobs")) {
    const std::string name = f.path().filename().string();
    if (!name.starts_with("attempt-") || !name.ends_with(".exit")) continue;
    const auto r = ReadExitRecord(f.path().string());
    read += r.has_value();
    if (r && r->exit_code == kDouble) {
      out.push_back(fmt::format("job {}: {}", f.path().parent_path().filename().string(), name));
    }
  }
  return out;
}

// The journal replayed through a fresh core, independently of serve's own recovery: the
// final core state of every job.
std::map<int64_t, JobState> ReplayJournal(const fs::path& db) {
  auto store = Store::Open(db.string(), 0);
  EXPECT_TRUE(store.ok()) << store.status().message();
  std::map<JobId, JobRecord> rows;
  auto loaded = (*store)->LoadJobs();
  EXPECT_TRUE(loaded.ok());
  if (loaded.ok()) {
    for (auto& r : *loaded) rows.emplace(r.id, r);
  }
  auto core =
      BuildCore(CoreConfig{.topo = *Topology::Create(1, 1, kGpus),
                           .policy = "dlas",
                           .policy_opts = {"thresholds=0.05", "queue_order=fifo", "promote_knob=0"},
                           .placement = "consolidate"},
                TestFiles());
  EXPECT_TRUE(core.ok());
  Scheduler& s = **core;
  auto events = (*store)->LoadEvents(0, 0, /*inputs_only=*/true);
  EXPECT_TRUE(events.ok());
  for (const EventRow& row : *events) {
    const Event& e = row.event;
    Status st;
    switch (e.kind) {
      case EventKind::kTick:
        (void)s.Schedule(e.t);
        break;
      case EventKind::kSubmit: {
        const JobRecord& r = rows.at(e.job);
        st = s.Submit(JobSpec{.id = r.id,
                              .gpus = r.gpus,
                              .submit = r.submit,
                              .name = r.name,
                              .user = r.user,
                              .duration = r.duration},
                      e.t);
        break;
      }
      case EventKind::kFinish:
        st = s.Finish(e.job, e.t);
        break;
      case EventKind::kCancel:
        st = s.Cancel(e.job, e.t);
        break;
      case EventKind::kLaunch:
        st = s.SetProgressStart(e.job, e.t, e.t);
        break;
      case EventKind::kDrain:
        st = s.SetProgressStart(e.job, e.detail["until_ms"].get<Time>(), e.t);
        break;
      case EventKind::kInterrupt:
        st = s.Interrupted(e.job, e.detail["last_alive_ms"].get<Time>(), e.t);
        break;
      case EventKind::kCapacity: {  // (GPUs a cancelled job's stopping process holds: avoided)
        const auto usable = MaskFromJson(e.detail["usable"]);
        const auto avoid = MaskFromJson(e.detail.value("stopping", nlohmann::json::array()));
        EXPECT_TRUE(usable && avoid) << "journal row " << row.seq;
        if (usable && avoid) {
          st = s.SetNodeAvailability(e.detail["node"].get<int>(), *usable, e.t, *avoid).status();
        }
        break;
      }
      case EventKind::kRelocate: {  // (a job placed on such GPUs, moved when others free)
        std::vector<Action> started;
        st = s.Relocate(e.job, e.t, started, GpusFromJson(e.detail.value("held", nlohmann::json())))
                 .status();
        break;
      }
      default:
        ADD_FAILURE() << "journal row " << row.seq << ": " << ToString(e.kind)
                      << " is not an input this replay knows";
        break;
    }
    EXPECT_TRUE(st.ok()) << "journal row " << row.seq << ": " << st.message();
  }
  std::map<int64_t, JobState> out;
  for (const Job& j : s.jobs()) out[j.spec.id.value()] = j.state;
  return out;
}

TEST(SoakTest, ThousandsOfJobsAndRepeatedKill9LoseNothingAndRunNothingTwice) {
  const int jobs = EnvInt("TIRESIAS_SOAK_JOBS", 6000);
  const int kills = EnvInt("TIRESIAS_SOAK_KILLS", 20);
  const fs::path dir = testing::FreshDir("soak");
  const fs::path locks = dir / "locks";
  fs::create_directories(locks);
  testing::ServeProcess serve(dir, kServeArgs);
  serve.Start();
  const auto t0 = Clock::now();

  // Submitters: 4 threads. A submission whose reply is lost (serve killed meanwhile) is
  // looked up by its unique name once serve is back, and sent again only if it is not there,
  // so every job goes through exactly once, as a careful client would do it.
  std::atomic<int> next = 0, acked_n = 0, lost_replies = 0;
  std::mutex mu;
  std::map<int64_t, int> acked;  // id -> submission index
  std::set<int> cancel_wanted;
  auto submitter = [&](unsigned seed) {
    std::mt19937 rng(seed);
    for (int i = next++; i < jobs; i = next++) {
      const std::string lock = (locks / std::to_string(i)).string();
      // flock exits kDouble when another attempt holds the job's lock (no shell: the soak
      // is mostly process creation, and one exec fewer per attempt is a quarter of it).
      nlohmann::json body = {{"name", fmt::format("soak-{}", i)},
                             {"gpus", 1 + static_cast<int>(rng() % 4 == 0)},
                             {"argv",
                              {"flock", "-n", "-E", std::to_string(kDouble), lock, "sleep",
                               fmt::format("0.{:03}", 5 + rng() % 60)}}};
      int64_t id = -1;
      for (bool retry = false; id < 0; retry = true) {
        auto c = ApiClient::Connect({.state_dir = dir.string()});
        if (retry && c.ok()) {  // did the lost one get in?
          auto all = c->GetJson("/v1/jobs");
          if (!all.ok()) {
            std::this_thread::sleep_for(20ms);  // serve is restarting
            continue;
          }
          for (const auto& j : *all) {
            if (j["name"] == body["name"]) id = j["id"].get<int64_t>();
          }
          if (id >= 0) break;
        }
        auto r = c.ok() ? c->PostJson("/v1/jobs", body) : StatusOr<nlohmann::json>(c.status());
        if (r.ok()) {
          id = (*r)["id"].get<int64_t>();
        } else {
          ++lost_replies;
          std::this_thread::sleep_for(20ms);
        }
      }
      std::lock_guard lk(mu);
      acked[id] = i;
      ++acked_n;
      if (rng() % 20 == 0) cancel_wanted.insert(static_cast<int>(id));
    }
  };
  std::vector<std::thread> subs;
  for (unsigned k = 0; k < 4; ++k) subs.emplace_back(submitter, 100 + k);

  // Cancels and kill -9s while the jobs stream in.
  std::mt19937 rng(7);
  int killed = 0, cancels = 0;
  while (killed < kills || next < jobs) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50 + rng() % 150));
    {
      std::set<int> todo;
      {
        std::lock_guard lk(mu);
        todo.swap(cancel_wanted);
      }
      auto c = ApiClient::Connect({.state_dir = dir.string()});
      for (int id : todo) {
        auto r = c.ok() ? c->Post(fmt::format("/v1/jobs/{}/cancel", id), "")
                        : StatusOr<HttpReply>(c.status());
        if (r.ok() && r->status == 200) ++cancels;  // 409: it had ended already
      }
    }
    const int due = static_cast<int>(static_cast<int64_t>(jobs) * (killed + 1) / (kills + 1));
    if (killed < kills && next >= due) {
      serve.Stop(SIGKILL);
      ++killed;
      serve.Start();
    }
  }
  for (auto& t : subs) t.join();
  const double submit_s = std::chrono::duration<double>(Clock::now() - t0).count();

  // Everything ends. The wait polls the jobs not yet ended, twice a second (polling the whole
  // list of 10,000 every 20 ms kept serve busy serialising it), and gives up only when none
  // has ended for two minutes, saying what is left and what serve last logged.
  nlohmann::json active = nlohmann::json::array();
  std::string poll_error;
  size_t left = SIZE_MAX;
  auto progress = Clock::now();
  for (;;) {
    auto r = serve.Client().GetJson("/v1/jobs?active=1");
    poll_error = r.ok() ? "" : r.status().message();
    if (r.ok()) {
      active = std::move(*r);
      if (active.empty()) break;
      if (active.size() < left) {
        left = active.size();
        progress = Clock::now();
      }
    }
    if (Clock::now() - progress > 120s) break;
    std::this_thread::sleep_for(500ms);
  }
  if (!active.empty() || !poll_error.empty()) {
    std::map<std::string, int> states;
    std::string some;
    for (const auto& j : active) {
      ++states[j["state"].get<std::string>()];
      if (some.size() < 600) some += fmt::format(" {}", j.dump());
    }
    std::string log = testing::ReadAll(dir / "serve.out");
    FAIL() << "no job ended for two minutes; " << active.size()
           << " not ended:" << fmt::format(" {}", states)
           << (poll_error.empty() ? "" : "; last poll: " + poll_error) << "\nsome:" << some
           << "\nserve's log ends:\n"
           << log.substr(log.size() - std::min<size_t>(log.size(), 3000));
  }
  auto listed = serve.Client().GetJson("/v1/jobs");
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  const nlohmann::json all = std::move(*listed);
  const double total_s = std::chrono::duration<double>(Clock::now() - t0).count();

  // No acknowledged job lost; names unique; nothing ran twice.
  std::map<int64_t, nlohmann::json> by_id;
  std::set<std::string> names;
  int preemptions = 0, finished = 0, cancelled = 0, failed = 0;
  for (const auto& j : all) {
    by_id[j["id"].get<int64_t>()] = j;
    EXPECT_TRUE(names.insert(j["name"].get<std::string>()).second) << "twice: " << j["name"];
    preemptions += j["preemptions"].get<int>();
    const std::string st = j["state"];
    finished += st == "finished";
    cancelled += st == "cancelled";
    failed += st == "failed";
  }
  for (const auto& [id, i] : acked) {
    ASSERT_TRUE(by_id.contains(id)) << "acknowledged job " << id << " (soak-" << i << ") lost";
    EXPECT_EQ(by_id[id]["name"], fmt::format("soak-{}", i));
  }
  EXPECT_EQ(acked.size(), static_cast<size_t>(jobs));
  EXPECT_EQ(by_id.size(), static_cast<size_t>(jobs)) << "a job was stored twice";
  int exit_files = 0;
  const auto doubles = DoubledAttempts(dir, exit_files);
  EXPECT_TRUE(doubles.empty()) << "attempts ran at once: " << fmt::format("{}", doubles);
  EXPECT_GE(exit_files, finished);  // (every attempt that ran has one)
  // A job fails only if it was killed by something other than its own preemption.
  EXPECT_EQ(failed, 0);

  // The API's final state equals an independent replay of the journal.
  serve.Stop(SIGTERM);
  const auto core = ReplayJournal(dir / "tiresias.db");
  ASSERT_EQ(core.size(), by_id.size());
  for (const auto& [id, j] : by_id) {
    const std::string st = j["state"];
    const JobState want = st == "cancelled" ? JobState::kCancelled : JobState::kFinished;
    EXPECT_EQ(core.at(id), want) << "job " << id << " is " << st << " in the API";
  }

  std::cout << fmt::format(
      "soak: {} jobs submitted ({} acknowledged, {} calls lost to a kill), {} kill -9s of "
      "serve, {} cancels, {} preemptions; {} finished, {} cancelled, {} failed; submissions "
      "took {:.1f} s, all done in {:.1f} s; nothing lost, nothing ran twice, the journal's "
      "replay agrees\n",
      jobs, acked_n.load(), lost_replies.load(), killed, cancels, preemptions, finished, cancelled,
      failed, submit_s, total_s);
  if (!::testing::Test::HasFailure()) testing::RemoveServeDir(dir);
}

}  // namespace
}  // namespace tiresias
