// Runs `tiresias serve` as a child process in a state directory, for end-to-end tests and
// benchmarks, plus small waiting and file helpers.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cli/client.h"
#include "test_util.h"

namespace tiresias::testing {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

inline bool WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return pred();
}

// One `tiresias serve` process in a state directory.
class ServeProcess {
 public:
  ServeProcess(fs::path dir, std::vector<std::string> args) : dir_(std::move(dir)) {
    args_ = {TIRESIAS_BINARY, "serve", "--state-dir", dir_.string(), "--port", "0"};
    args_.insert(args_.end(), args.begin(), args.end());
  }
  ~ServeProcess() { Stop(SIGTERM); }

  // Waits `wait` for serve to listen (it may wait for its cluster engine first).
  void Start(std::chrono::milliseconds wait = std::chrono::seconds(10)) {
    fs::remove(dir_ / "tiresias.addr");
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open((dir_ / "serve.out").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> argv;
      for (auto& a : args_) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    if (!WaitFor([&] { return fs::exists(dir_ / "tiresias.addr"); }, wait)) {
      throw std::runtime_error("tiresias serve did not start: " + ReadAll(dir_ / "serve.out"));
    }
  }
  void Stop(int sig) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }
  ApiClient Client() const { return *ApiClient::Connect({.state_dir = dir_.string()}); }
  // POST /v1/jobs: the new job's id, or why it was refused.
  StatusOr<int64_t> SubmitJob(const nlohmann::json& body) const {
    auto r = Client().PostJson("/v1/jobs", body);
    if (!r.ok()) return r.status();
    return (*r)["id"].get<int64_t>();
  }
  // GET /v1/jobs/ID, or null when it fails.
  nlohmann::json GetJob(int64_t id) const {
    auto r = Client().GetJson("/v1/jobs/" + std::to_string(id));
    return r.ok() ? *r : nlohmann::json();
  }

 private:
  fs::path dir_;
  std::vector<std::string> args_;
  pid_t pid_ = 0;
};

}  // namespace tiresias::testing
