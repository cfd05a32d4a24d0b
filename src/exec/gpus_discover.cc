// DiscoverNvidiaGpus: finds nvidia-smi, runs it with a deadline, and parses what it prints.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "common/strings.h"
#include "exec/gpus.h"

extern char** environ;

namespace tiresias {
namespace {

// nvidia-smi can hang on a wedged driver; the daemon must not hang with it.
constexpr auto kTimeout = std::chrono::seconds(30);

bool IsExecutable(const std::string& path) {
  return ::access(path.c_str(), X_OK) == 0;
}

// `name` itself when it contains a '/', else the first executable PATH entry.
std::optional<std::string> FindExecutable(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    return IsExecutable(name) ? std::optional(name) : std::nullopt;
  }
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  for (std::string_view dir : Split(path, ':')) {
    std::string candidate = fmt::format("{}/{}", dir.empty() ? "." : dir, name);
    if (IsExecutable(candidate)) return candidate;
  }
  return std::nullopt;
}

struct RunResult {
  int wait_status = 0;
  std::string out;
  std::string err;
};

// Runs `path args...` with no stdin, collecting stdout and stderr, killing it at kTimeout.
StatusOr<RunResult> Run(const std::string& path, const std::vector<std::string>& args) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return IoError(fmt::format("pipe: {}", std::strerror(errno)));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    return IoError(fmt::format("pipe: {}", std::strerror(errno)));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  std::vector<char*> argv = {const_cast<char*>(path.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, path.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(out[0]);
    ::close(err[0]);
    return IoError(fmt::format("{}: cannot run: {}", path, std::strerror(rc)));
  }
  std::string bufs[2];
  std::vector<pollfd> fds = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  auto deadline = std::chrono::steady_clock::now() + kTimeout;
  bool timed_out = false;
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    int n = ::poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;  // poll ignores negative descriptors
      } else {
        bufs[i].append(buf, static_cast<size_t>(got));
      }
    }
  }
  for (const pollfd& p : fds) {
    if (p.fd >= 0) ::close(p.fd);
  }
  if (timed_out) ::kill(pid, SIGKILL);
  RunResult r;
  while (::waitpid(pid, &r.wait_status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return IoError(fmt::format("{} did not finish within {} s", path, kTimeout.count()));
  }
  r.out = std::move(bufs[0]);
  r.err = std::move(bufs[1]);
  return r;
}

}  // namespace

StatusOr<std::vector<GpuInfo>> DiscoverNvidiaGpus(const std::string& nvidia_smi) {
  std::optional<std::string> path = FindExecutable(nvidia_smi);
  if (!path) {
    return NotFound(nvidia_smi.find('/') != std::string::npos
                        ? fmt::format("{} is not an executable file", nvidia_smi)
                        : fmt::format("{} not found on PATH", nvidia_smi));
  }
  StatusOr<RunResult> r = Run(*path, {kNvidiaSmiQuery, "--format=csv"});
  if (!r.ok()) return r.status();
  int ws = r->wait_status;
  std::string output = r->out + r->err;
  output.erase(output.find_last_not_of(" \t\r\n") + 1);  // npos + 1 == 0 clears it
  if (WIFSIGNALED(ws)) {
    return IoError(fmt::format("{} killed by signal {}: {}", *path, WTERMSIG(ws), output));
  }
  if (WEXITSTATUS(ws) != 0) {
    return FailedPrecondition(
        fmt::format("{} exited with status {}: {}", *path, WEXITSTATUS(ws), output));
  }
  StatusOr<std::vector<GpuInfo>> gpus = ParseNvidiaSmiCsv(r->out);
  if (!gpus.ok()) return Status(gpus.status().code(), *path + ": " + gpus.status().message());
  return gpus;
}

}  // namespace tiresias
