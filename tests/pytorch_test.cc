// A real framework end to end: examples/pytorch/train_ddp.py (PyTorch DDP, gloo on CPU, two
// ranks, Adam, dropout) runs through a real `serve --gpus 2` as one process per GPU
// (--tasks-per-gpu 1), is requeued mid-run (both ranks get SIGTERM, agree on a step, write one
// checkpoint with model, optimizer, step and every rank's RNG states, exit 75), is relaunched
// and resumes; its final parameters must equal, byte for byte, those of an uninterrupted run of
// the same script outside serve. Then the same through torchrun, which serve's PET_ variables
// point at a port of the job's own. Skipped, saying why, where Debian's python3-torch (or
// torchrun) is not installed.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "exec/free_port.h"
#include "serve_fixture.h"
#include "test_util.h"

namespace tiresias {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::ReadAll;
using testing::RunCommandLine;
using testing::WaitFor;

const std::string kScript = std::string(TIRESIAS_EXAMPLES) + "/pytorch/train_ddp.py";

// The Python that has torch with gloo: Debian's first (python3-torch installs there), then
// whatever `python3` is. A quick look for the module, not an import (that takes seconds).
std::string TorchPython() {
  for (const std::string py : {"/usr/bin/python3", "python3"}) {
    const auto r = RunCommandLine(py +
                                  " -c 'import importlib.util as u, sys; "
                                  "sys.exit(u.find_spec(\"torch\") is None)' >/dev/null");
    if (r.rc == 0) return py;
  }
  return "";
}

// serve's end-to-end fixture (state directory, serve, no job process left behind), skipped
// where torch is missing.
class PyTorchTest : public serve_test::ServeTest {
 protected:
  void SetUp() override {
    python_ = TorchPython();
    if (python_.empty()) {
      GTEST_SKIP() << "python3-torch is not installed (apt-get install python3-torch): the "
                      "PyTorch example cannot run here";
    }
    ServeTest::SetUp();
  }
  // The training every test runs: 60 steps, logged every 5.
  std::vector<std::string> TrainArgs() const {
    return {kScript, "--steps", "60", "--log-every", "5", "--seed", "7"};
  }
  // The uninterrupted run: both ranks started by hand, as torchrun would, without serve.
  // Run before the live job, not beside it: the two picked free ports at once, and a rank of
  // one run joined the other's (the reference's rank 1 then waited without end).
  void Reference(const fs::path& result) {
    const int port = FreeLoopbackPort().value_or(29731);
    std::string cmd;
    for (int rank = 0; rank < 2; ++rank) {
      // A rank whose peer is gone waits for it without end: 5 minutes at most.
      std::string line =
          fmt::format("RANK={} WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT={} timeout 300 {}",
                      rank, port, python_);
      for (const auto& a : TrainArgs()) line += " " + a;
      line += fmt::format(" --checkpoint-dir {} --result {}", (dir_ / "ref-ckpt").string(),
                          result.string());
      cmd += fmt::format("{} > {} 2>&1 & p{}=$!; ", line,
                         (dir_ / fmt::format("ref{}.log", rank)).string(), rank);
    }
    cmd += "wait $p0 && wait $p1";
    const auto r = RunCommandLine(cmd);
    EXPECT_EQ(r.rc, 0) << r.out << ReadAll(dir_ / "ref0.log") << ReadAll(dir_ / "ref1.log");
  }
  std::string Log(int64_t id) {
    return ReadAll(dir_ / "tiresias-jobs" / std::to_string(id) / "output.log");
  }
  // Runs job `id` to its end, requeueing it once rank 0 has logged step 10.
  void RequeueMidwayAndFinish(int64_t id) {
    ASSERT_TRUE(WaitFor([&] { return Log(id).find("step 10 loss=") != std::string::npos; }, 60s))
        << Log(id) << Job(id).dump();
    auto r = serve_->Client().PostJson(fmt::format("/v1/jobs/{}/requeue", id), {});
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_TRUE(WaitFor(
        [&] {
          const auto j = Job(id);
          return !j.is_null() && (j["state"] == "finished" || j["state"] == "failed");
        },
        90s))
        << Log(id) << Job(id).dump();
  }
  // The step of the checkpoint written on the signal and the step resumed from must agree,
  // somewhere between the requeue and the end.
  void ExpectResumedFromTheCheckpoint(const std::string& log) {
    std::smatch wrote, resumed;
    ASSERT_TRUE(std::regex_search(
        log, wrote, std::regex(R"(checkpoint written at step (\d+) \(stop signal\))")))
        << log;
    ASSERT_TRUE(
        std::regex_search(log, resumed, std::regex(R"(resumed from step (\d+), attempt 1)")))
        << log;
    EXPECT_EQ(wrote[1], resumed[1]) << log;
    const int step = std::stoi(wrote[1]);
    EXPECT_GE(step, 10) << log;
    EXPECT_LT(step, 60) << log;
  }

  std::string python_;
};

TEST_F(PyTorchTest, DdpPerGpuRequeuedResumesBitIdentically) {
  Serve({"--gpus", "2", "--grace", "60"});
  Reference(dir_ / "ref.txt");  // first: alone on its port (a race for one crossed the runs)
  std::vector<std::string> argv = {python_};
  for (const auto& a : TrainArgs()) argv.push_back(a);
  // Periodic checkpoints too (every 5 steps), each reported through TIRESIAS_CHECKPOINT_FILE.
  argv.insert(argv.end(), {"--step-ms", "100", "--checkpoint-every", "5", "--result",
                           (dir_ / "live.txt").string()});
  const int64_t id = Submit({{"gpus", 2}, {"tasks_per_gpu", 1}, {"name", "ddp"}, {"argv", argv}});
  EXPECT_TRUE(WaitFor([&] { return !Job(id)["last_checkpoint_ms"].is_null(); }, 60s))
      << Log(id) << Job(id).dump();
  RequeueMidwayAndFinish(id);

  const auto j = Job(id);
  const std::string log = Log(id);
  EXPECT_EQ(j["state"], "finished") << j.dump() << log;
  EXPECT_EQ(j["attempt"], 1) << j.dump();
  EXPECT_EQ(j["tasks_per_gpu"], 1) << j.dump();
  // One process per GPU, each told its rank and given its own GPU.
  EXPECT_NE(log.find("rank 0 of 2: CUDA_VISIBLE_DEVICES=0 LOCAL_RANK=0 MASTER_PORT="),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("rank 1 of 2: CUDA_VISIBLE_DEVICES=1 LOCAL_RANK=1 MASTER_PORT="),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("==== tiresias: task 1 ended: exit 75 ===="), std::string::npos) << log;
  EXPECT_NE(log.find("==== tiresias: command ended: exit 0 ===="), std::string::npos) << log;
  ExpectResumedFromTheCheckpoint(log);
  // Bit for bit the uninterrupted run's parameters (4 tensors, hex of their bytes).
  const std::string live = ReadAll(dir_ / "live.txt"), want = ReadAll(dir_ / "ref.txt");
  EXPECT_EQ(std::count(want.begin(), want.end(), '\n'), 4) << want;
  EXPECT_EQ(live, want);
  // Finished: its checkpoint directory (with the done file in it) is gone.
  EXPECT_FALSE(fs::exists(dir_ / "tiresias-jobs" / std::to_string(id) / "checkpoint"));
  EXPECT_EQ(j["message"], "completed");
}

TEST_F(PyTorchTest, TorchrunOwnPortResumesBitIdentically) {
  // The job is `torchrun train_ddp.py`: one process for both GPUs, which starts a worker per
  // GPU on the port serve chose (PET_NPROC_PER_NODE, PET_MASTER_PORT), not on 29500.
  if (RunCommandLine("command -v torchrun >/dev/null").rc != 0) {
    GTEST_SKIP() << "torchrun is not on PATH";
  }
  Serve({"--gpus", "2", "--grace", "60"});
  Reference(dir_ / "ref.txt");  // first: alone on its port (a race for one crossed the runs)
  // Debian 12's torchrun (torch 1.13 under Python 3.11) cannot parse its own default
  // --redirects/--tee ("0"); naming a local rank no job has (9) redirects nothing (README).
  std::vector<std::string> argv = {"torchrun", "--redirects", "9:1", "--tee", "9:1"};
  for (const auto& a : TrainArgs()) argv.push_back(a);
  argv.insert(argv.end(), {"--step-ms", "100", "--result", (dir_ / "live.txt").string()});
  const int64_t id = Submit({{"gpus", 2}, {"name", "torchrun"}, {"argv", argv}});
  RequeueMidwayAndFinish(id);

  const auto j = Job(id);
  const std::string log = Log(id);
  EXPECT_EQ(j["state"], "finished") << j.dump() << log;
  EXPECT_EQ(j["attempt"], 1) << j.dump();
  EXPECT_NE(log.find("rank 0 of 2: CUDA_VISIBLE_DEVICES=0,1 LOCAL_RANK=0"), std::string::npos)
      << log;
  EXPECT_NE(log.find("rank 1 of 2: CUDA_VISIBLE_DEVICES=0,1 LOCAL_RANK=1"), std::string::npos)
      << log;
  // The workers rendezvous on the port serve gave the job (journalled with its launch).
  int port = 0;
  auto events = serve_->Client().GetJson(fmt::format("/v1/events?job={}&limit=1000", id));
  ASSERT_TRUE(events.ok());
  for (const auto& e : *events) {
    if (e["kind"] == "launch") port = e["detail"]["master_port"].get<int>();
  }
  EXPECT_GT(port, 0);
  EXPECT_NE(log.find(fmt::format("LOCAL_RANK=1 MASTER_PORT={}", port)), std::string::npos) << log;
  ExpectResumedFromTheCheckpoint(log);
  EXPECT_EQ(ReadAll(dir_ / "live.txt"), ReadAll(dir_ / "ref.txt"));
  EXPECT_FALSE(ReadAll(dir_ / "ref.txt").empty());
}

}  // namespace
}  // namespace tiresias
