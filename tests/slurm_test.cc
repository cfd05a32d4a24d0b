// End-to-end tests of `tiresias serve --executor slurm` on a real Slurm 22.05 cluster on this
// machine (tests/slurm_cluster.h: 4 logical nodes x 4 fake GPUs, private munged, slurmctld and
// slurmd): mixed sizes under dlas with a preemption and a bit-identical resume of the example
// trainer; an 8-GPU job across two nodes whose two ranks see their variables; a node killed
// mid-run (no job lost, its job resumes); kill -9 of serve mid-run (none lost, no attempt run
// twice); GPUs held by a job outside tiresias never double-booked and shown; a job cancelled
// with scancel marked so; slurmctld down for a while (retried, nothing lost); a job started
// under a submit limit takes a held job's place. Each test skips
// with the reason when the Slurm packages or root are missing.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <thread>

#include "cli/client.h"
#include "serve_process.h"
#include "slurm_cluster.h"
#include "test_util.h"

namespace tiresias {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::ReadAll;
using testing::ServeProcess;
using testing::SlurmCluster;
using testing::WaitFor;

bool Ended(const std::string& s) {
  return s == "finished" || s == "failed" || s == "cancelled";
}

class SlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = SlurmCluster::Missing(); !why.empty()) GTEST_SKIP() << why;
    // Short: serve's Unix socket lives in the state directory below it.
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = testing::ScratchDir("slurm_" + name.substr(0, 12));
    cluster_ = std::make_unique<SlurmCluster>(4, 4);
    ASSERT_TRUE(cluster_->up()) << "could not bring up Slurm: " << cluster_->error();
    state_ = dir_ / "state";
    fs::create_directories(state_);
  }
  void TearDown() override {
    serve_.reset();
    if (HasFailure() && cluster_) {
      // Keep what explains a failure in the test's output.
      std::cerr << "--- serve.out\n" << ReadAll(state_ / "serve.out").substr(0, 20000) << "\n";
      std::cerr << "--- squeue\n" << cluster_->Sh("squeue -a -o '%i %j %T %r %N %b'").out;
      std::cerr << "--- cluster kept in " << cluster_->dir() << "\n";
      cluster_->keep = true;
    }
    cluster_.reset();
  }
  void Serve(std::vector<std::string> args, std::chrono::milliseconds wait = 10s) {
    args.insert(args.begin(), {"--executor", "slurm", "--partition", "gpu"});
    serve_ = std::make_unique<ServeProcess>(state_, std::move(args));
    serve_->Start(wait);
  }
  int64_t Submit(const nlohmann::json& body) {
    auto r = serve_->Client().PostJson("/v1/jobs", body);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? (*r)["id"].get<int64_t>() : -1;
  }
  nlohmann::json Job(int64_t id) {
    auto r = serve_->Client().GetJson(fmt::format("/v1/jobs/{}", id));
    return r.ok() ? *r : nlohmann::json();
  }
  std::string State(int64_t id) {
    auto j = Job(id);
    return j.is_null() ? "?" : j["state"].get<std::string>();
  }
  bool AllEnded(const std::vector<int64_t>& ids, std::chrono::milliseconds timeout) {
    return WaitFor(
        [&] {
          for (int64_t id : ids) {
            if (!Ended(State(id))) return false;
          }
          return true;
        },
        timeout);
  }
  nlohmann::json Events() { return *serve_->Client().GetJson("/v1/events?limit=100000"); }
  std::string Log(int64_t id) {
    return ReadAll(state_ / "tiresias-jobs" / std::to_string(id) / "output.log");
  }
  // How many times each attempt of a job started, from its log's header lines.
  std::map<int, int> Starts(int64_t id) {
    std::map<int, int> out;
    const std::string log = Log(id);
    static const std::regex header(R"(==== tiresias: job \d+ attempt (\d+) started)");
    for (auto it = std::sregex_iterator(log.begin(), log.end(), header);
         it != std::sregex_iterator(); ++it) {
      ++out[std::stoi((*it)[1])];
    }
    return out;
  }

  fs::path dir_, state_;
  std::unique_ptr<SlurmCluster> cluster_;
  std::unique_ptr<ServeProcess> serve_;
};

// The trainer's uninterrupted result for `args`, run here directly.
std::string Reference(const fs::path& dir, const std::vector<std::string>& args) {
  const std::string cmd =
      fmt::format("{} {} --checkpoint-dir {} --result {} > /dev/null", TIRESIAS_TRAINER,
                  fmt::join(args, " "), (dir / "ref-ckpt").string(), (dir / "ref.txt").string());
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return ReadAll(dir / "ref.txt");
}

TEST_F(SlurmTest, MixedSizesUnderDlasPreemptAndResumeTheTrainerBitIdentically) {
  // dlas with an 8 GPU-s first queue: the 4-GPU trainer is demoted after 2 s; then 12 short
  // jobs (29 GPUs in all, one of 8 GPUs over two nodes) arrive in the first queue and need its
  // node, so it is preempted: SIGTERM to its Slurm tasks, it checkpoints and exits, the Slurm
  // job is requeued held; it resumes later (TIRESIAS_ATTEMPT 1, same checkpoint directory).
  Serve({"--policy", "dlas", "--opt", "thresholds=8", "--grace", "20"});
  const std::vector<std::string> train = {"--steps", "400", "--step-ms", "20"};
  std::string ref;
  std::jthread reference([&] { ref = Reference(dir_, train); });
  std::vector<std::string> argv = {TIRESIAS_TRAINER};
  argv.insert(argv.end(), train.begin(), train.end());
  argv.insert(argv.end(), {"--result", (dir_ / "live.txt").string()});
  const int64_t trainer = Submit({{"gpus", 4}, {"name", "trainer"}, {"argv", argv}});
  ASSERT_TRUE(WaitFor([&] { return State(trainer) == "running"; }, 30s)) << Job(trainer).dump();
  ASSERT_TRUE(WaitFor([&] { return Log(trainer).find("step 40") != std::string::npos; }, 30s))
      << Log(trainer);
  const std::vector<int> sizes = {1, 2, 1, 4, 2, 8, 1, 4, 2, 1, 1, 2};
  std::vector<int64_t> shorts;
  for (int g : sizes) {
    shorts.push_back(Submit(
        {{"gpus", g},
         {"argv",
          {"sh", "-c",
           "echo \"CVD=$CUDA_VISIBLE_DEVICES WS=$WORLD_SIZE RANK=$RANK GPUS=$TIRESIAS_GPUS\"; "
           "sleep 1"}}}));
  }
  std::vector<int64_t> all = shorts;
  all.push_back(trainer);
  ASSERT_TRUE(AllEnded(all, 240s));
  reference.join();  // (a jthread: also joined when an assertion returns early)

  for (size_t i = 0; i < shorts.size(); ++i) {
    const auto j = Job(shorts[i]);
    EXPECT_EQ(j["state"], "finished") << j.dump();
    EXPECT_FALSE(j["engine_job"].get<std::string>().empty()) << "a Slurm job id is kept";
    const std::string log = Log(shorts[i]);
    // Every node of a job sees the GPUs Slurm bound there: all 4 for 8 GPUs over two nodes.
    const int per_node = sizes[i] > 4 ? 4 : sizes[i];
    const std::string cvd =
        per_node == 1 ? "CVD=[0-3] " : fmt::format("CVD=([0-3],){{{}}}[0-3] ", per_node - 1);
    EXPECT_TRUE(std::regex_search(log, std::regex(cvd))) << cvd << "\n" << log;
    EXPECT_NE(log.find(fmt::format("GPUS={}", sizes[i])), std::string::npos) << log;
    EXPECT_EQ(j["nodes"].size(), sizes[i] > 4 ? 2u : 1u) << j.dump();
  }
  const auto t = Job(trainer);
  EXPECT_EQ(t["state"], "finished") << t.dump();
  EXPECT_GE(t["preemptions"].get<int>(), 1) << t.dump();
  EXPECT_GE(t["attempt"].get<int>(), 1) << "resumed in a new attempt";
  EXPECT_NE(Log(trainer).find("resumed from step"), std::string::npos) << Log(trainer);
  // Preempted or not, the result is the uninterrupted run's, bit for bit.
  EXPECT_FALSE(ref.empty());
  EXPECT_EQ(ReadAll(dir_ / "live.txt"), ref);
  // One Slurm job for the trainer's whole life (requeued, not resubmitted), each attempt once.
  for (const auto& [attempt, n] : Starts(trainer)) EXPECT_EQ(n, 1) << "attempt " << attempt;
  int preempt = -1, relaunch = -1;
  for (const auto& e : Events()) {
    if (e["job"] != trainer) continue;
    if (e["kind"] == "preempt" && preempt < 0) preempt = e["seq"];
    if (e["kind"] == "launch" && preempt > 0 && relaunch < 0) {
      relaunch = e["seq"];
      EXPECT_EQ(e["detail"]["engine_job"], t["engine_job"]) << e.dump();
    }
  }
  EXPECT_GT(preempt, 0);
  EXPECT_GT(relaunch, preempt);
}

TEST_F(SlurmTest, EightGpusAcrossTwoNodesBothRanksSeeTheirVariables) {
  Serve({"--policy", "fifo"});
  const int64_t id = Submit(
      {{"gpus", 8},
       {"name", "ddp"},
       // The job's own variables reach every rank intact (through slurm-job.env: sbatch runs
       // with serve's environment, never a user's).
       {"env", {{"GREETING", "it's \"q\" $X"}}},
       {"argv",
        {"sh", "-c",
         "echo \"greet=[$GREETING]\"; "
         "echo \"rank=$RANK local=$LOCAL_RANK world=$WORLD_SIZE master=$MASTER_ADDR:$MASTER_PORT "
         "node=$SLURMD_NODENAME cvd=$CUDA_VISIBLE_DEVICES attempt=$TIRESIAS_ATTEMPT "
         "job=$TIRESIAS_JOB_ID ckpt=${TIRESIAS_CHECKPOINT_DIR:+set}\"; "
         "touch \"$TIRESIAS_CHECKPOINT_FILE\"; sleep 3"}}});
  ASSERT_TRUE(WaitFor([&] { return State(id) == "running"; }, 30s)) << Job(id).dump();
  // The checkpoint marker works through Slurm too (shared job directory): serve sees it.
  EXPECT_TRUE(WaitFor([&] { return !Job(id)["last_checkpoint_ms"].is_null(); }, 10s))
      << Job(id).dump();
  // `ls` and `show` say where it runs in Slurm.
  const auto ls = testing::RunTiresias("ls --state-dir " + state_.string());
  const auto j = Job(id);
  EXPECT_NE(ls.out.find("slurm:" + j["engine_job"].get<std::string>()), std::string::npos)
      << ls.out;
  const auto show =
      testing::RunTiresias(fmt::format("show {} --state-dir {}", id, state_.string()));
  EXPECT_NE(show.out.find("SlurmJobId=" + j["engine_job"].get<std::string>() + " SlurmState="),
            std::string::npos)
      << show.out;
  ASSERT_TRUE(AllEnded({id}, 60s));
  EXPECT_EQ(State(id), "finished");
  const std::string log = Log(id);
  std::set<std::string> nodes;
  for (int rank : {0, 1}) {
    std::smatch m;
    const std::regex line(fmt::format(
        R"(rank={} local=0 world=2 master=127\.0\.0\.1:(\d+) node=(node\d) cvd=0,1,2,3 attempt=0 job={} ckpt=set)",
        rank, id));
    ASSERT_TRUE(std::regex_search(log, m, line)) << "rank " << rank << "\n" << log;
    nodes.insert(m[2]);
  }
  EXPECT_EQ(nodes.size(), 2u) << "one task on each of two nodes\n" << log;
  size_t greetings = 0;
  for (size_t at = log.find("greet=[it's \"q\" $X]\n"); at != std::string::npos;
       at = log.find("greet=[it's \"q\" $X]\n", at + 1)) {
    ++greetings;
  }
  EXPECT_EQ(greetings, 2u) << log;
  EXPECT_EQ(Job(id)["nodes"].size(), 2u);
}

TEST_F(SlurmTest, ANodeKilledMidRunLosesNoJob) {
  // Four 4-GPU trainers (30 s each) fill the 4 nodes. node3's machine dies (slurmd, its steps
  // and its job processes killed): Slurm notices within SlurmdTimeout (10 s) and a ping round,
  // requeues the job there; tiresias marks node3 unusable and stops placing there: 12 GPUs for
  // four 4-GPU jobs, so one waits (under dlas the last submitted: the evicted job, earlier in
  // the first queue, may take its node). node3 comes back: every job runs to the end, the
  // evicted one resumed from its last periodic checkpoint, and every result is the
  // uninterrupted run's.
  Serve({"--policy", "dlas", "--grace", "5"});
  const std::vector<std::string> train = {
      "--steps", "1500", "--step-ms", "20", "--checkpoint-every", "50"};
  std::string ref;
  std::jthread reference([&] { ref = Reference(dir_, train); });
  std::vector<int64_t> ids;
  for (int k = 0; k < 4; ++k) {
    std::vector<std::string> argv = {TIRESIAS_TRAINER};
    argv.insert(argv.end(), train.begin(), train.end());
    argv.insert(argv.end(), {"--result", (dir_ / fmt::format("live{}.txt", k)).string()});
    ids.push_back(Submit({{"gpus", 4}, {"name", fmt::format("t{}", k)}, {"argv", argv}}));
  }
  ASSERT_TRUE(WaitFor(
      [&] {
        for (int64_t id : ids) {
          if (Log(id).find("step 100") == std::string::npos) return false;
        }
        return true;
      },
      60s));
  int64_t victim = -1;
  for (int64_t id : ids) {
    if (Job(id)["nodes"] == nlohmann::json::array({"node3"})) victim = id;
  }
  ASSERT_GT(victim, 0);
  cluster_->KillNode("node3");
  // Slurm declares it down within SlurmdTimeout (10 s) plus a ping round; tiresias follows.
  ASSERT_TRUE(WaitFor(
      [&] {
        auto n = serve_->Client().GetJson("/v1/nodes");
        return n.ok() && (*n)["nodes"][2]["gpus_usable"] == 0;
      },
      90s));
  int64_t waiting = -1;
  ASSERT_TRUE(WaitFor(
      [&] {
        int running = 0;
        for (int64_t id : ids) {
          const std::string st = State(id);
          running += st == "running";
          if (st == "pending") waiting = id;
        }
        return running == 3 && waiting > 0;
      },
      60s));
  std::this_thread::sleep_for(2s);  // nothing is placed on node3 meanwhile
  EXPECT_EQ(State(waiting), "pending");
  auto why = serve_->Client().GetJson(fmt::format("/v1/jobs/{}/explain", waiting));
  ASSERT_TRUE(why.ok());
  EXPECT_NE(why->dump().find("GPUs are unavailable"), std::string::npos) << why->dump();
  cluster_->StartNode("node3");
  ASSERT_TRUE(AllEnded(ids, 180s));
  reference.join();  // (a jthread: also joined when an assertion returns early)
  for (size_t k = 0; k < ids.size(); ++k) {
    EXPECT_EQ(State(ids[k]), "finished") << Job(ids[k]).dump();
    EXPECT_EQ(ReadAll(dir_ / fmt::format("live{}.txt", k)), ref) << "job " << ids[k];
  }
  EXPECT_GE(Job(victim)["attempt"].get<int>(), 1);
  EXPECT_NE(Log(victim).find("resumed from step"), std::string::npos) << Log(victim);
  bool down = false, evicted = false;
  for (const auto& e : Events()) {
    if (e["kind"] == "capacity" && e["detail"]["node"] == 2 && e["detail"]["usable"].empty()) {
      down = true;
    }
    if (e["job"] == victim && (e["kind"] == "evict" || e["kind"] == "relaunch")) evicted = true;
  }
  EXPECT_TRUE(down);
  EXPECT_TRUE(evicted);
}

TEST_F(SlurmTest, Kill9OfServeMidRunLosesNoneAndRunsNoneTwice) {
  // 16 jobs of 1-4 GPUs under dlas with a 4 GPU-s first queue (preemptions), each holding a
  // lock directory while it runs (a second concurrent run would find it taken). serve is
  // SIGKILLed three times at random moments and restarted; every job finishes once, no run
  // ever overlaps another of the same job, and every attempt started at most once.
  const fs::path locks = dir_ / "locks";
  fs::create_directories(locks);
  Serve({"--policy", "dlas", "--opt", "thresholds=4", "--grace", "10"});
  const std::string body = fmt::format(
      "L={}; mkdir $L/$TIRESIAS_JOB_ID 2>/dev/null || echo $TIRESIAS_JOB_ID >> $L/twice; "
      "trap 'rmdir $L/$TIRESIAS_JOB_ID; exit 75' TERM; sleep 3 & wait $!; "
      "rmdir $L/$TIRESIAS_JOB_ID; echo $TIRESIAS_JOB_ID >> $L/done",
      locks.string());
  std::vector<int64_t> ids;
  std::mt19937 rng(5);
  for (int k = 0; k < 16; ++k) {
    ids.push_back(Submit({{"gpus", 1 << (k % 3)}, {"argv", {"sh", "-c", body}}}));
    if (k == 8) std::this_thread::sleep_for(1500ms);
  }
  for (int kill = 0; kill < 3; ++kill) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500 + rng() % 2500));
    serve_->Stop(SIGKILL);
    serve_ = std::make_unique<ServeProcess>(
        state_, std::vector<std::string>{"--executor", "slurm", "--partition", "gpu", "--policy",
                                         "dlas", "--opt", "thresholds=4", "--grace", "10"});
    serve_->Start();
  }
  ASSERT_TRUE(AllEnded(ids, 240s));
  const std::string done = ReadAll(locks / "done");
  for (int64_t id : ids) {
    EXPECT_EQ(State(id), "finished") << Job(id).dump();
    const std::regex once(fmt::format(R"((^|\n){}\n)", id));
    EXPECT_EQ(
        std::distance(std::sregex_iterator(done.begin(), done.end(), once), std::sregex_iterator()),
        1)
        << "job " << id << " completed once\n"
        << done;
    for (const auto& [attempt, n] : Starts(id)) {
      EXPECT_EQ(n, 1) << "job " << id << " attempt " << attempt << " started twice";
    }
  }
  EXPECT_FALSE(fs::exists(locks / "twice")) << ReadAll(locks / "twice");
  // Not vacuous: runs survived a kill and were adopted, and dlas preempted some.
  int adopted = 0, preempted = 0;
  for (const auto& e : Events()) {
    adopted += e["kind"] == "adopt";
    preempted += e["kind"] == "preempt";
  }
  EXPECT_GE(adopted, 1);
  EXPECT_GE(preempted, 1);
}

TEST_F(SlurmTest, OutsideJobsGpusAreNeverDoubleBookedAndScancelIsACancel) {
  // A job submitted to Slurm directly holds 3 GPUs of node1. tiresias sees it (nodes shows
  // it), and of four 4-GPU jobs runs only three: node1 has one usable GPU. The fourth waits,
  // and explain says GPUs are unavailable. When the outside job is cancelled the fourth runs.
  // Then one tiresias job is cancelled with scancel: it is marked cancelled, with the reason.
  Serve({"--policy", "fifo"});
  const auto outside =
      cluster_->Sh("sbatch --parsable -w node1 -n1 --gres=gpu:3 -o /dev/null --wrap 'sleep 300'");
  ASSERT_EQ(outside.rc, 0) << outside.out;
  const std::string oid = testing::Trimmed(outside.out);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto n = serve_->Client().GetJson("/v1/nodes");
        return n.ok() && (*n)["nodes"][0]["gpus_usable"] == 1;
      },
      30s));
  std::vector<int64_t> ids;
  for (int k = 0; k < 4; ++k) {
    ids.push_back(Submit({{"gpus", 4}, {"argv", {"sleep", "600"}}}));
  }
  ASSERT_TRUE(WaitFor(
      [&] {
        int running = 0;
        for (int64_t id : ids) running += State(id) == "running";
        return running == 3;
      },
      60s));
  std::this_thread::sleep_for(2s);  // and it stays so
  int pending = 0;
  int64_t waiting = -1;
  for (int64_t id : ids) {
    if (State(id) == "pending") {
      ++pending;
      waiting = id;
    }
  }
  ASSERT_EQ(pending, 1);
  auto why = serve_->Client().GetJson(fmt::format("/v1/jobs/{}/explain", waiting));
  EXPECT_NE(why->dump().find("3 of the cluster's 16 GPUs are unavailable"), std::string::npos)
      << why->dump();
  const auto nodes = testing::RunTiresias("nodes --state-dir " + state_.string());
  EXPECT_NE(nodes.out.find("outside tiresias: slurm " + oid + " (root, 3 GPUs)"), std::string::npos)
      << nodes.out;
  // Slurm agrees: no node has more GPUs allocated than it has.
  const auto used = cluster_->Sh("sinfo -N -h -o '%N %G %b'");
  EXPECT_EQ(used.out.find("gpu:5"), std::string::npos) << used.out;
  ASSERT_EQ(cluster_->Sh("scancel " + oid).rc, 0);
  ASSERT_TRUE(WaitFor([&] { return State(waiting) == "running"; }, 60s)) << Job(waiting).dump();
  // scancel of a tiresias job from outside: cancelled, with Slurm's word for it.
  const std::string sid = Job(ids[0])["engine_job"];
  ASSERT_EQ(cluster_->Sh("scancel " + sid).rc, 0);
  ASSERT_TRUE(WaitFor([&] { return State(ids[0]) == "cancelled"; }, 30s)) << Job(ids[0]).dump();
  EXPECT_NE(Job(ids[0])["message"].get<std::string>().find("cancelled outside tiresias"),
            std::string::npos)
      << Job(ids[0]).dump();
  // And through tiresias: the held Slurm job goes away too.
  for (int64_t id : ids) (void)serve_->Client().PostJson(fmt::format("/v1/jobs/{}/cancel", id), {});
  ASSERT_TRUE(AllEnded(ids, 60s));
  ASSERT_TRUE(WaitFor([&] { return cluster_->Sh("squeue -h -t PD,R,CG -o %i").out.empty(); }, 30s))
      << cluster_->Sh("squeue -o '%i %T %r'").out;
}

TEST_F(SlurmTest, SlurmctldDownIsRetriedAndLosesNothing) {
  // slurmctld stops (it saves its state) while jobs run and more are submitted. serve keeps
  // answering, says the engine is unreachable, retries with backoff; when slurmctld is back
  // every job runs and finishes.
  Serve({"--policy", "fifo"});
  std::vector<int64_t> ids;
  for (int k = 0; k < 3; ++k) ids.push_back(Submit({{"gpus", 2}, {"argv", {"sleep", "3"}}}));
  ASSERT_TRUE(WaitFor([&] { return State(ids[0]) == "running"; }, 30s));
  cluster_->StopController();
  for (int k = 0; k < 3; ++k) ids.push_back(Submit({{"gpus", 4}, {"argv", {"sleep", "1"}}}));
  ASSERT_TRUE(WaitFor(
      [&] {
        auto n = serve_->Client().GetJson("/v1/nodes");
        return n.ok() && n->contains("engine_unreachable");
      },
      30s));
  std::this_thread::sleep_for(3s);
  cluster_->StartController();
  ASSERT_TRUE(AllEnded(ids, 120s));
  for (int64_t id : ids) EXPECT_EQ(State(id), "finished") << Job(id).dump();
  auto n = serve_->Client().GetJson("/v1/nodes");
  EXPECT_FALSE(n->contains("engine_unreachable")) << n->dump();
  // Nothing was evicted (the nodes are UNKNOWN for a few seconds after the restart: they stay
  // usable).
  for (int64_t id : ids) EXPECT_EQ(Job(id)["preemptions"], 0) << Job(id).dump();
  // serve started while slurmctld is down waits for it (squeue/sinfo --json exit 0 then, and
  // said only "Unspecified error": serve exited at once), and runs jobs once it answers.
  serve_->Stop(SIGTERM);
  cluster_->StopController();
  std::thread later([&] {
    std::this_thread::sleep_for(6s);  // sinfo takes 4 s to give up on it: one try fails
    cluster_->StartController();
  });
  Serve({"--policy", "fifo"}, 40s);
  later.join();
  const std::string out = ReadAll(state_ / "serve.out");
  EXPECT_NE(out.find("slurmctld unreachable"), std::string::npos) << out;
  const int64_t last = Submit({{"gpus", 1}, {"argv", {"true"}}});
  ASSERT_TRUE(AllEnded({last}, 60s));
  EXPECT_EQ(State(last), "finished") << Job(last).dump();
}

TEST_F(SlurmTest, AJobThePolicyStartsUnderASubmitLimitTakesAHeldJobsPlace) {
  // Each tiresias job waits in Slurm as a held job, and here Slurm takes 2 jobs of the user at
  // most (an sbatch that counts them, as MaxSubmitJobsPerUser does). dlas, 8 GPU-s first
  // queue, 16-GPU jobs: A runs and is demoted; B arrives, preempts it and is demoted; A and B
  // fill the limit, so C's held job is refused. C arrives in the first queue and preempts B:
  // it takes the place of A's or B's held job and runs. Before, C held the whole cluster with
  // no Slurm job of its own until its 2-minute wait lapsed (the jobs that filled the limit
  // could not run while it held their GPUs).
  const fs::path bin = dir_ / "bin";
  fs::create_directories(bin);
  std::ofstream(bin / "sbatch")
      << "#!/bin/sh\n"
         "n=$(/usr/bin/squeue -h -t PD,R,CG,CF -o %i | wc -l)\n"
         "if [ \"$n\" -ge 2 ]; then\n"
         "  echo 'sbatch: error: Batch job submission failed: Job violates accounting/QOS policy "
         "(job submit limit, user'\\''s size and/or time limits)' >&2; exit 1\n"
         "fi\n"
         "exec /usr/bin/sbatch \"$@\"\n";
  fs::permissions(bin / "sbatch",
                  fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  const std::string path = std::getenv("PATH");
  ::setenv("PATH", (bin.string() + ":" + path).c_str(), 1);
  Serve({"--policy", "dlas", "--opt", "thresholds=8", "--grace", "5"});
  ::setenv("PATH", path.c_str(), 1);  // serve has it
  // Each ignores SIGTERM: it runs through its grace, so the limit stays full while C's held
  // job is submitted (a stopped job is out of the count until its requeue-hold).
  const nlohmann::json job = {{"gpus", 16}, {"argv", {"sh", "-c", "trap '' TERM; sleep 600"}}};
  const int64_t a = Submit(job);
  ASSERT_TRUE(WaitFor([&] { return State(a) == "running"; }, 30s)) << Job(a).dump();
  std::this_thread::sleep_for(2s);  // demoted
  const int64_t b = Submit(job);
  ASSERT_TRUE(WaitFor([&] { return State(b) == "running" && State(a) == "pending"; }, 60s))
      << Job(a).dump() << Job(b).dump();
  std::this_thread::sleep_for(2s);  // demoted
  const int64_t c = Submit(job);
  ASSERT_TRUE(WaitFor([&] { return State(c) == "running"; }, 60s)) << Job(c).dump();
  EXPECT_EQ(State(a), "pending") << Job(a).dump();
  EXPECT_EQ(State(b), "pending") << Job(b).dump();
  const std::string gave = cluster_->Sh("squeue -h -t CA -o %k").out;
  EXPECT_NE(gave.find(":gave-place-of:"), std::string::npos) << gave;
  for (int64_t id : {a, b, c}) {
    (void)serve_->Client().PostJson(fmt::format("/v1/jobs/{}/cancel", id), {});
  }
  ASSERT_TRUE(AllEnded({a, b, c}, 60s));
  ASSERT_TRUE(WaitFor([&] { return cluster_->Sh("squeue -h -t PD,R,CG -o %i").out.empty(); }, 30s))
      << cluster_->Sh("squeue -o '%i %T %r %k'").out;
}

}  // namespace
}  // namespace tiresias
