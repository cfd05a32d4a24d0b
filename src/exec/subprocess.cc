// RunCommand: posix_spawn with pipes, a poll loop until the deadline, SIGKILL past it.
#include "exec/subprocess.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/strings.h"

extern char** environ;

namespace tiresias {

std::string CommandResult::Summary() const {
  std::string what =
      signal ? fmt::format("killed by signal {}", signal) : fmt::format("exit {}", exit_code);
  std::string first = err.substr(0, err.find('\n'));
  if (first.empty()) first = out.substr(0, out.find('\n'));
  return first.empty() ? what : what + ": " + first;
}

StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout,
                                   const std::vector<std::string>* env,
                                   const std::atomic<bool>* abandon) {
  if (argv.empty() || argv[0].empty()) return InvalidArgument("run: empty command");
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return IoError(fmt::format("pipe: {}", std::strerror(errno)));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(out[0]);
    ::close(out[1]);
    return IoError(fmt::format("pipe: {}", std::strerror(e)));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);  // nothing else of the daemon's
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  if (env) {
    for (const std::string& e : *env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  pid_t pid = 0;
  const int rc =
      posix_spawnp(&pid, argv[0].c_str(), &fa, &attr, args.data(), env ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(out[0]);
    ::close(err[0]);
    return IoError(fmt::format("{}: cannot run: {}", argv[0], std::strerror(rc)));
  }
  CommandResult r;
  std::string* bufs[2] = {&r.out, &r.err};
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  const auto abandoned = [&] { return abandon && abandon->load(); };
  int open_fds = 2;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || abandoned()) {
      timed_out = true;
      break;
    }
    const int n = ::poll(
        fds, 2, static_cast<int>(abandon ? std::min<int64_t>(left.count(), 100) : left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        bufs[i]->append(buf, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) ::close(f.fd);
  }
  // Its output closed; it may still linger (or have handed its pipes on): wait until the
  // deadline, then kill it.
  int status = 0;
  while (!timed_out) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline || abandoned()) {
      timed_out = true;
      break;
    }
    ::usleep(1000);
  }
  if (timed_out) {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (timed_out && abandoned()) return Unavailable(fmt::format("{}: abandoned", argv[0]));
  if (timed_out) {
    return Unavailable(fmt::format("{}: no answer within {} ms", argv[0], timeout.count()));
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

}  // namespace tiresias
