// The supervisor shim (`tiresias _shim`): leader of one job attempt's process group. Runs
// the command (or one copy per GPU with --tasks), waits for it, records how it ended in the
// exit file (see RunShim in local_executor.h).
#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "exec/exit_file.h"
#include "exec/local_executor.h"
#include "exec/log_pump.h"
#include "exec/proc_stat.h"

namespace tiresias {
namespace {

constexpr int kIgnored[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2};

// Whether the regular file on `fd` (the log) ends in the middle of a line: the job's output
// did not end with a newline, and tiresias' line must not be glued to it.
bool EndsMidLine(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return false;
  const int r = open(fmt::format("/proc/self/fd/{}", fd).c_str(), O_RDONLY | O_CLOEXEC);
  if (r < 0) return false;
  char c = '\n';
  const bool mid = pread(r, &c, 1, st.st_size - 1) == 1 && c != '\n';
  close(r);
  return mid;
}

void Say(const std::string& line) {
  std::string s = fmt::format("{}==== tiresias: {} ====\n", EndsMidLine(2) ? "\n" : "", line);
  ssize_t ignored = write(2, s.data(), s.size());
  (void)ignored;
}

}  // namespace

// Becomes uid:gid with the account's supplementary groups (the command's side of the fork).
bool BecomeUser(uid_t uid, gid_t gid) {
  std::array<char, 4096> buf{};
  passwd pw{};
  passwd* found = nullptr;
  const bool named = getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found;
  if (named ? initgroups(found->pw_name, gid) != 0 : setgroups(1, &gid) != 0) return false;
  return setgid(gid) == 0 && setuid(uid) == 0 && getuid() == uid && geteuid() == uid &&
         setuid(0) != 0;  // and there is no way back
}

namespace {

struct ShimArgs {
  std::string exit_file, out_file, err_file;
  std::string log_file;  // the log on fds 1 and 2: the job's output is pumped to it (LogPump)
  std::string cwd;       // entered by each task (as the user, if any); "": the shim's own
  int64_t log_limit = 0, log_keep_free = 0;
  std::optional<std::pair<uid_t, gid_t>> user;
  int tasks = 0;          // 0: the command once, as it is; N: N tasks (one per GPU)
  int env_fd = -1;        // the command's environment ("K=V\0" each); -1: the shim's own
  bool truncate = false;  // --open-mode truncate: --stdout/--stderr emptied before the tasks
  std::vector<std::string> cmd;
};

std::optional<ShimArgs> Parse(const std::vector<std::string>& args) {
  ShimArgs a;
  size_t i = 0;
  for (; i + 1 < args.size() && args[i] != "--"; i += 2) {
    if (args[i] == "--exit-file") {
      a.exit_file = args[i + 1];
    } else if (args[i] == "--stdout") {
      a.out_file = args[i + 1];
    } else if (args[i] == "--stderr") {
      a.err_file = args[i + 1];
    } else if (args[i] == "--user") {
      const size_t colon = args[i + 1].find(':');
      auto u = ParseInt(args[i + 1].substr(0, colon));
      auto g = colon == std::string::npos ? std::nullopt : ParseInt(args[i + 1].substr(colon + 1));
      if (!u || !g || *u < 0 || *g < 0) return std::nullopt;
      a.user = std::pair<uid_t, gid_t>(static_cast<uid_t>(*u), static_cast<gid_t>(*g));
    } else if (args[i] == "--log") {
      a.log_file = args[i + 1];
    } else if (args[i] == "--cwd") {
      a.cwd = args[i + 1];
    } else if (args[i] == "--log-limit" || args[i] == "--log-keep-free") {
      auto n = ParseInt(args[i + 1]);
      if (!n || *n < 0) return std::nullopt;
      (args[i] == "--log-limit" ? a.log_limit : a.log_keep_free) = *n;
    } else if (args[i] == "--env-fd") {
      auto n = ParseInt(args[i + 1]);
      if (!n || *n < 3 || *n > 65535) return std::nullopt;
      a.env_fd = static_cast<int>(*n);
    } else if (args[i] == "--open-mode") {
      if (args[i + 1] != "truncate" && args[i + 1] != "append") return std::nullopt;
      a.truncate = args[i + 1] == "truncate";
    } else if (args[i] == "--tasks") {
      auto n = ParseInt(args[i + 1]);
      if (!n || *n < 1 || *n > 4096) return std::nullopt;
      a.tasks = static_cast<int>(*n);
    } else {
      return std::nullopt;
    }
  }
  if (a.exit_file.empty() || i + 1 >= args.size() || args[i] != "--") return std::nullopt;
  if (a.log_file.empty() && (a.log_limit > 0 || a.log_keep_free > 0)) return std::nullopt;
  a.cmd.assign(args.begin() + static_cast<ptrdiff_t>(i) + 1, args.end());
  return a;
}

// The command's environment: read from --env-fd (serve runs the shim itself with a fixed one,
// so that nothing a user sets, e.g. LD_PRELOAD, acts in it while it runs as serve's user), or
// the shim's own when run by hand.
std::vector<std::string> CommandEnv(int fd) {
  std::vector<std::string> env;
  if (fd < 0) {
    for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
    return env;
  }
  std::string block;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    block.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  for (size_t at = 0; at < block.size();) {
    const size_t end = block.find('\0', at);
    env.push_back(block.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return env;
}

// The command's side of the fork: becomes the job's user, opens its output files and execs.
// `pump`: the pipe to the log's pump (stdout and stderr unless --stdout/--stderr), or -1.
// `env`: the command's environment, in effect only once the user is the job's. `why`: a
// close-on-exec pipe to the shim, which gets the reason when the command cannot be started
// (for the exit file: `show` says why, not only the job's log).
[[noreturn]] void Exec(const ShimArgs& a, int pump, std::vector<std::string>& env, int why) {
  const auto fail = [&](int code, const std::string& reason) {
    Say(reason);
    const std::string line = reason + "\n";
    (void)!write(why, line.data(), std::min(line.size(), size_t{PIPE_BUF}));
    _exit(code);
  };
  for (int sig : kIgnored) signal(sig, SIG_DFL);  // ignored signals survive exec
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // so does the shim's blocked SIGCHLD
  if (pump >= 0 && (dup2(pump, 1) < 0 || dup2(pump, 2) < 0)) {
    fail(126, std::string("cannot connect the job's output to its log: ") + std::strerror(errno));
  }
  umask(022);  // serve's own is 077; the job gets the usual default
  if (a.user && !BecomeUser(a.user->first, a.user->second)) {
    fail(126, fmt::format("cannot run as uid {} gid {}: {}", a.user->first, a.user->second,
                          std::strerror(errno)));
  }
  // The working directory, entered as the user (--cwd: serve runs the job as someone else):
  // a directory the user may not enter fails the job, as one that does not exist does.
  if (!a.cwd.empty() && chdir(a.cwd.c_str()) != 0) {
    fail(126,
         fmt::format("cannot enter the working directory {}{}: {}", a.cwd,
                     a.user ? fmt::format(" as uid {}", a.user->first) : "", std::strerror(errno)));
  }
  // --output / --error: opened as the command's own account, appended to (emptied once before,
  // with --open-mode truncate: TruncateOutputs).
  for (const auto& [file, fd] : {std::pair{&a.out_file, 1}, std::pair{&a.err_file, 2}}) {
    if (file->empty()) continue;
    const int f = open(file->c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (f < 0 || dup2(f, fd) < 0) {
      fail(126, fmt::format("cannot open {} for the job's {}: {}", *file,
                            fd == 1 ? "stdout" : "stderr", std::strerror(errno)));
    }
    close(f);
  }
  if (!a.out_file.empty() && a.err_file.empty()) dup2(1, 2);  // like sbatch: stderr with stdout
  std::vector<std::string> cmd = a.cmd;
  std::vector<char*> argv, envp;
  for (auto& arg : cmd) argv.push_back(arg.data());
  argv.push_back(nullptr);
  for (auto& kv : env) envp.push_back(kv.data());
  envp.push_back(nullptr);
  environ = envp.data();  // execvp looks the command up in the job's PATH
  execvp(argv[0], argv.data());
  // As a shell: 127 for a command not found, 126 for one found but not executable (a file
  // without the execute bit, a directory).
  fail(errno == ENOENT ? 127 : 126, "cannot run '" + a.cmd[0] + "': " + std::strerror(errno));
  _exit(127);  // (fail does not return)
}

// --open-mode truncate (a job's first attempt: sbatch's default): --stdout and --stderr are
// emptied once before any task starts, as the command's account in its working directory, so
// that the tasks, each appending, keep one another's lines. A file that cannot be emptied is
// left to the tasks' own open, which says why.
void TruncateOutputs(const ShimArgs& a) {
  if (!a.truncate || (a.out_file.empty() && a.err_file.empty())) return;
  const pid_t pid = fork();
  if (pid < 0) return;
  if (pid == 0) {
    if (a.user && !BecomeUser(a.user->first, a.user->second)) _exit(1);
    if (!a.cwd.empty() && chdir(a.cwd.c_str()) != 0) _exit(1);
    for (const std::string* file : {&a.out_file, &a.err_file}) {
      if (file->empty()) continue;
      // Only a regular file is emptied: a FIFO without a reader must not block the launch,
      // nor one with a reader see an end of file before the job writes.
      const int f = open(file->c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
      struct stat st;
      if (f >= 0 && fstat(f, &st) == 0 && S_ISREG(st.st_mode)) (void)!ftruncate(f, 0);
      if (f >= 0) close(f);
    }
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

ExitRecord RecordOf(int status) {
  ExitRecord rec;
  if (status != -1 && WIFSIGNALED(status)) {
    rec.signal = WTERMSIG(status);
  } else if (status != -1 && WIFEXITED(status)) {
    rec.exit_code = WEXITSTATUS(status);
  } else {
    rec.exit_code = 127;
  }
  return rec;
}

// Whether `a` is a worse end than `b`: killed by a signal over any exit, then the higher.
bool Worse(const ExitRecord& a, const ExitRecord& b) {
  if ((a.signal > 0) != (b.signal > 0)) return a.signal > 0;
  return a.signal > 0 ? a.signal > b.signal : a.exit_code > b.exit_code;
}

}  // namespace

int RunShim(const std::vector<std::string>& args) {
  // --exit-file FILE [--user UID:GID] [--cwd DIR] [--stdout FILE] [--stderr FILE]
  //   [--open-mode truncate|append] [--tasks N]
  //   [--log FILE [--log-limit BYTES] [--log-keep-free BYTES]] -- COMMAND [ARGS...]
  auto parsed = Parse(args);
  if (!parsed) {
    Say("usage: tiresias _shim --exit-file FILE [--user UID:GID] [--cwd DIR] [--stdout FILE] "
        "[--stderr FILE] [--open-mode truncate|append] [--tasks N] [--env-fd FD] [--log FILE "
        "[--log-limit BYTES] "
        "[--log-keep-free BYTES]] "
        "-- COMMAND [ARGS...]");
    return 2;
  }
  const ShimArgs& a = *parsed;
  std::vector<std::string> env = CommandEnv(a.env_fd);
  // One process per GPU: task i gets the i-th device of the attempt's.
  std::vector<std::string> devices;
  if (a.tasks > 0) {
    std::string cvd;
    for (const auto& kv : env) {
      if (kv.starts_with("CUDA_VISIBLE_DEVICES=")) cvd = kv.substr(21);
    }
    for (auto d : Split(cvd, ',')) devices.emplace_back(d);
    if (static_cast<int>(devices.size()) != a.tasks) {
      Say(fmt::format("--tasks {}: CUDA_VISIBLE_DEVICES has {} devices", a.tasks, devices.size()));
      return 2;
    }
  }

  // Who this attempt is, for a daemon that crashed before recording the launch.
  if (a.exit_file.size() > 5 && a.exit_file.ends_with(".exit")) {
    const std::string pid_file = a.exit_file.substr(0, a.exit_file.size() - 5) + ".pid";
    if (auto st = ReadProcStat(getpid())) {
      if (Status s = WritePidFile(pid_file, getpid(), st->start_ticks); !s.ok()) Say(s.message());
    }
  }

  // The daemon signals the whole group: the command gets the signal, the shim stays to
  // record the outcome. Only SIGKILL (or SIGSTOP) reaches the shim itself.
  for (int sig : kIgnored) signal(sig, SIG_IGN);
  TruncateOutputs(a);  // (a stop meanwhile reaches its tasks once they start)
  // Children's ends are read from a signalfd, beside the log's pipe: blocked from here on (the
  // tasks unblock it before they exec).
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, nullptr);
  const int chld_fd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  // With --log the tasks write to pipes that the shim copies to the log: one per task, each
  // joined into whole lines when there are several (LineJoiner).
  const int streams = std::max(a.tasks, 1);
  std::vector<std::array<int, 2>> pipes(static_cast<size_t>(a.log_file.empty() ? 0 : streams),
                                        {-1, -1});
  for (auto& p : pipes) {
    if (pipe2(p.data(), O_CLOEXEC) != 0 || fcntl(p[0], F_SETFL, O_NONBLOCK) != 0) {
      Say(std::string("cannot make the log's pipe: ") + std::strerror(errno));
      (void)WriteExitFile(a.exit_file, ExitRecord{.exit_code = 127});
      return 127;
    }
  }

  // Why a task could not start its command (Exec): read once every task has ended.
  std::array<int, 2> why{-1, -1};
  // (Both ends non-blocking: tasks that fail by the hundred lose their words, not their exit.)
  if (pipe2(why.data(), O_CLOEXEC | O_NONBLOCK) != 0) {
    why = {-1, -1};  // only the reason is lost (it is in the log)
  }

  // Starts the command (as task `task`, or as itself when -1); its pid, or -1.
  auto start = [&](int task) -> pid_t {
    const pid_t pid = fork();
    if (pid != 0) return pid;
    if (task >= 0) {  // only this process: the shim is single-threaded
      const std::string rank = std::to_string(task);
      EnvSet(env, "RANK", rank);
      EnvSet(env, "LOCAL_RANK", rank);
      EnvSet(env, "CUDA_VISIBLE_DEVICES", devices[static_cast<size_t>(task)]);
    }
    Exec(a, pipes.empty() ? -1 : pipes[static_cast<size_t>(std::max(task, 0))][1], env, why[1]);
  };
  std::map<pid_t, int> running;  // pid -> task (-1: the command)
  for (int task = a.tasks > 0 ? 0 : -1; task < std::max(a.tasks, 0); ++task) {
    const pid_t pid = start(task);
    if (pid < 0) {
      // Those already started are stopped: a job with a missing rank would only hang.
      Say(std::string("cannot fork: ") + std::strerror(errno));
      for (const auto& [p, t] : running) kill(p, SIGKILL);
      for (const auto& [p, t] : running) waitpid(p, nullptr, 0);
      (void)WriteExitFile(a.exit_file, ExitRecord{.exit_code = 127});
      return 127;
    }
    running[pid] = task;
    if (task < 0) break;
  }

  // The tasks hold the write ends: a pipe's end comes once its task (and its children) are gone.
  for (auto& p : pipes) close(p[1]);
  if (why[1] >= 0) close(why[1]);
  std::optional<LogPump> log;
  std::vector<LineJoiner> joiners;
  if (!pipes.empty()) {
    log.emplace(a.log_file, a.log_limit, a.log_keep_free, std::vector<int>{1, 2});
    if (pipes.size() > 1) joiners.assign(pipes.size(), LineJoiner(*log));
  }
  auto steady_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  // Copies up to `reads` reads of what stream `k` holds; at its end, closes it.
  auto copy_output = [&](size_t k, int reads) {
    char buf[65536];
    int& fd = pipes[k][0];
    while (fd >= 0 && reads > 0) {
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) {
        const std::string_view got(buf, static_cast<size_t>(n));
        if (joiners.empty()) {
          log->Write(got);
        } else {
          joiners[k].Write(got, steady_ms());
        }
        --reads;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || errno != EAGAIN) {
        close(fd);
        fd = -1;
      }
      break;
    }
  };
  // All a pipe can hold (64 KiB by default, up to 1 MiB), not an endless writer's output;
  // then what the stream's joiner holds.
  constexpr int kDrainReads = 16;
  auto drain = [&](size_t k) {
    copy_output(k, kDrainReads);
    if (!joiners.empty()) joiners[k].Flush();
  };

  std::optional<ExitRecord> worst;
  while (!running.empty()) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);  // the shim's only children are its tasks
    if (pid == 0) {  // none has ended: wait for one to, copying the output meanwhile
      std::vector<pollfd> fds = {{.fd = chld_fd, .events = POLLIN, .revents = 0}};
      for (const auto& p : pipes) fds.push_back({.fd = p[0], .events = POLLIN, .revents = 0});
      int timeout = chld_fd >= 0 ? -1 : 100;
      for (const LineJoiner& j : joiners) {
        if (j.Due() >= 0) {
          const auto wait = std::max<int64_t>(0, j.Due() - steady_ms());
          timeout =
              timeout < 0 ? static_cast<int>(wait) : std::min(timeout, static_cast<int>(wait));
        }
      }
      if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
        Say(std::string("lost the command: poll: ") + std::strerror(errno));
        worst = RecordOf(-1);
        break;
      }
      signalfd_siginfo info;
      while (chld_fd >= 0 && read(chld_fd, &info, sizeof info) > 0) {
      }
      for (size_t k = 0; k < pipes.size(); ++k) {
        if (fds[k + 1].revents != 0) copy_output(k, 1);
        if (!joiners.empty() && joiners[k].Due() >= 0 && joiners[k].Due() <= steady_ms()) {
          joiners[k].Flush();
        }
      }
      continue;
    }
    if (pid < 0) {
      if (errno == EINTR) continue;
      Say(std::string("lost the command: waitpid: ") + std::strerror(errno));
      worst = RecordOf(-1);
      break;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const ExitRecord rec = RecordOf(status);
    if (it->second >= 0) {
      // The task's last words before the shim's line.
      if (!pipes.empty()) drain(static_cast<size_t>(it->second));
      const ExitInfo info{.exit_code = rec.exit_code, .signal = rec.signal};
      Say(fmt::format("task {} ended: {}", it->second, info.Describe()));
    }
    if (!worst || Worse(rec, *worst)) worst = rec;
    running.erase(it);
  }
  // What the command wrote before it ended; not what anything it left running writes later.
  for (size_t k = 0; k < pipes.size(); ++k) {
    drain(k);
    if (pipes[k][0] >= 0) close(pipes[k][0]);
  }
  ExitRecord rec = *worst;
  // The words of the first task that could not start its command, when that is how it ended
  // (126 or 127, not a signal or another task's exit).
  if (why[0] >= 0 && rec.signal == 0 && (rec.exit_code == 126 || rec.exit_code == 127)) {
    char buf[PIPE_BUF];
    const ssize_t n = read(why[0], buf, sizeof buf);
    if (n > 0) {
      const std::string text(buf, static_cast<size_t>(n));
      rec.reason = text.substr(0, text.find('\n'));
    }
  }
  if (why[0] >= 0) close(why[0]);
  ExitInfo info{.exit_code = rec.exit_code, .signal = rec.signal};
  if (log) log->Closing();  // (its last line in a log deleted by hand was lost)
  Say("command ended: " + info.Describe());
  if (Status s = WriteExitFile(a.exit_file, rec); !s.ok()) Say(s.message());
  return rec.signal > 0 ? 128 + rec.signal : rec.exit_code;
}

}  // namespace tiresias
