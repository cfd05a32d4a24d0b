// LocalExecutor: fork + exec of the supervisor shim, group signals, reaping and adoption
// (see executor.h).
#include "exec/local_executor.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string_view>

#include "common/strings.h"
#include "exec/exit_file.h"
#include "exec/free_port.h"
#include "exec/proc_stat.h"

extern char** environ;

namespace tiresias {
namespace {

namespace fs = std::filesystem;

// Owns a file descriptor.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  void Reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }
  // Moves the descriptor to 3 or above (close-on-exec), so the child's dup2 onto 0..2
  // cannot clobber it when the daemon runs with a standard descriptor closed.
  bool MoveAbove2() {
    if (fd_ > 2) return true;
    int moved = fcntl(fd_, F_DUPFD_CLOEXEC, 3);
    if (moved < 0) return false;
    Reset(moved);
    return true;
  }

 private:
  int fd_;
};

// What the child reports through the close-on-exec pipe when it fails before exec.
struct ChildError {
  int stage;  // kStageChdir or kStageExec
  int err;    // errno
};
constexpr int kStageChdir = 1;
constexpr int kStageExec = 2;

// Async-signal-safe: between fork and exec.
[[noreturn]] void ChildFail(int pipe_fd, int stage) {
  ChildError e{stage, errno};
  ssize_t ignored = write(pipe_fd, &e, sizeof e);
  (void)ignored;
  _exit(127);
}

std::string SearchPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) return name;  // exec reports ENOENT
    dirs.remove_prefix(colon + 1);
  }
}

// The daemon's environment with `set` applied in order (later entries win), and
// stale distributed-run variables dropped when `drop` holds their names.
std::vector<std::string> BuildEnv(const std::vector<std::pair<std::string, std::string>>& set,
                                  const std::vector<std::string>& drop) {
  auto key_of = [](std::string_view kv) { return kv.substr(0, kv.find('=')); };
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  auto erase_key = [&](std::string_view key) {
    std::erase_if(env, [&](const std::string& kv) { return key_of(kv) == key; });
  };
  for (const auto& key : drop) erase_key(key);
  for (const auto& [key, value] : set) {
    erase_key(key);
    env.push_back(key + "=" + value);
  }
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& strs) {
  std::vector<char*> out;
  for (auto& s : strs) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::string UtcNow() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void WriteAll(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

std::string Where(const LaunchSpec& spec) {
  return "launch job " + spec.job.str() + " attempt " + std::to_string(spec.attempt);
}

}  // namespace

LocalExecutor::LocalExecutor(std::vector<std::string> shim_argv, std::vector<std::string> devices)
    : shim_argv_(std::move(shim_argv)), devices_(std::move(devices)) {}

StatusOr<Launched> LocalExecutor::Launch(const LaunchSpec& spec) {
  if (shim_argv_.empty()) return InvalidArgument(Where(spec) + ": no shim command configured");
  if (spec.argv.empty() || spec.argv[0].empty())
    return InvalidArgument(Where(spec) + ": empty command");
  if (spec.job_dir.empty()) return InvalidArgument(Where(spec) + ": empty job_dir");
  std::vector<std::string> visible;
  for (const GpuId& g : spec.gpus) {
    if (g.node != 0 || g.index < 0 || g.index >= static_cast<int>(devices_.size())) {
      return InvalidArgument(Where(spec) + ": GPU " + std::to_string(g.index) + " of node " +
                             std::to_string(g.node) + ": this machine has " +
                             std::to_string(devices_.size()) + " GPUs on node 0");
    }
    visible.push_back(devices_[static_cast<size_t>(g.index)]);
  }
  const int world_size = static_cast<int>(spec.gpus.size());
  int master_port = 0;
  if (world_size > 1) {
    if (spec.master_port < 0 || spec.master_port > 65535)
      return InvalidArgument(Where(spec) + ": master_port " + std::to_string(spec.master_port) +
                             " is not in 1..65535");
    // A kernel-chosen free port; should none be had, a fixed one per job.
    master_port =
        spec.master_port > 0
            ? spec.master_port
            : FreeLoopbackPort().value_or(29500 + static_cast<int>(spec.job.value() % 2000));
  }
  for (const auto& [key, value] : spec.env)
    if (key.empty() || key.find('=') != std::string::npos)
      return InvalidArgument(Where(spec) + ": bad environment variable name '" + key + "'");

  // The job directory, its checkpoint directory and the log.
  std::error_code ec;
  fs::path dir = fs::absolute(spec.job_dir, ec);
  if (!ec) fs::create_directories(dir / "checkpoint", ec);
  if (ec) return IoError(Where(spec) + ": job_dir " + spec.job_dir + ": " + ec.message());
  std::string exit_file = ExitFilePath(dir.string(), spec.attempt);
  for (const std::string& stale : {exit_file, PidFilePath(dir.string(), spec.attempt)}) {
    if (unlink(stale.c_str()) != 0 && errno != ENOENT)  // from an earlier try
      return IoError(Where(spec) + ": " + stale + ": " + std::strerror(errno));
  }
  std::string log_path = (dir / "output.log").string();
  Fd log(open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (log.get() < 0) return IoError(Where(spec) + ": " + log_path + ": " + std::strerror(errno));
  Fd devnull(open("/dev/null", O_RDONLY | O_CLOEXEC));
  int pipe_fds[2];
  if (devnull.get() < 0 || pipe2(pipe_fds, O_CLOEXEC) != 0)
    return IoError(Where(spec) + ": " + std::strerror(errno));
  Fd err_read(pipe_fds[0]), err_write(pipe_fds[1]);
  if (!log.MoveAbove2() || !devnull.MoveAbove2() || !err_write.MoveAbove2())
    return IoError(Where(spec) + ": " + std::strerror(errno));

  // Everything the child needs, prepared before fork: after it only async-signal-safe calls.
  std::string shim_path = SearchPath(shim_argv_[0]);
  std::vector<std::string> argv = shim_argv_;
  argv.insert(argv.end(), {"--exit-file", exit_file, "--"});
  argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
  std::vector<std::pair<std::string, std::string>> set = {
      {"CUDA_VISIBLE_DEVICES", Join(visible, ",")},
      {"TIRESIAS_JOB_ID", spec.job.str()},
      {"TIRESIAS_ATTEMPT", std::to_string(spec.attempt)},
      {"TIRESIAS_CHECKPOINT_DIR", (dir / "checkpoint").string()},
  };
  std::vector<std::string> drop;
  if (world_size > 1) {
    set.insert(set.end(), {{"WORLD_SIZE", std::to_string(world_size)},
                           {"MASTER_ADDR", "127.0.0.1"},
                           {"MASTER_PORT", std::to_string(master_port)}});
  } else {
    drop = {"WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"};
  }
  set.insert(set.end(), spec.env.begin(), spec.env.end());
  std::vector<std::string> env = BuildEnv(set, drop);
  std::vector<char*> argv_c = CStrings(argv), env_c = CStrings(env);
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();

  std::string header = "==== tiresias: job " + spec.job.str() + " attempt " +
                       std::to_string(spec.attempt) + " started " + UtcNow() + ":";
  for (const auto& a : spec.argv) header += " " + a;
  header += " ====\n";  // written by the child: a header in the log means a process ran

  // Block all signals so the child runs none of the daemon's handlers before it resets them.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = fork();
  if (pid == 0) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);  // EINVAL: fine
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    setsid();
    dup2(devnull.get(), 0);
    dup2(log.get(), 1);
    dup2(log.get(), 2);
    for (size_t off = 0; off < header.size();) {  // write(2) only: async-signal-safe
      const ssize_t w = write(1, header.data() + off, header.size() - off);
      if (w <= 0) break;
      off += static_cast<size_t>(w);
    }
    if (cwd && chdir(cwd) != 0) ChildFail(err_write.get(), kStageChdir);
    // Whatever else the daemon has open (and did not mark close-on-exec) stays behind.
    close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);  // fails only on old kernels
    execve(shim_path.c_str(), argv_c.data(), env_c.data());
    ChildFail(err_write.get(), kStageExec);
  }
  int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) return IoError(Where(spec) + ": fork: " + std::strerror(fork_errno));

  // The pipe closes on a successful exec; otherwise it carries what failed.
  err_write.Reset();
  ChildError child_err{};
  ssize_t n;
  do {
    n = read(err_read.get(), &child_err, sizeof child_err);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof child_err)) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::string what = child_err.stage == kStageChdir
                           ? "cannot enter working directory '" + spec.cwd + "'"
                           : "cannot execute shim '" + shim_path + "'";
    what += ": " + std::string(std::strerror(child_err.err));
    WriteAll(log.get(), "==== tiresias: " + what + " ====\n");
    return IoError(Where(spec) + ": " + what);
  }

  auto st = ReadProcStat(pid);  // our unreaped child: its /proc entry exists
  if (!st) return Status(StatusCode::kInternal, Where(spec) + ": no /proc entry for new pid");
  ProcessRef ref{.pid = pid, .start_ticks = st->start_ticks};
  tracked_[pid] = Tracked{spec.job, spec.attempt, ref, dir.string(), /*adopted=*/false};
  // Recorded here as well as by the shim, so that a daemon that dies right after this call
  // still finds the attempt (the shim's copy covers a death before it).
  (void)WritePidFile(PidFilePath(dir.string(), spec.attempt), pid, st->start_ticks);
  return Launched{.ref = ref, .visible_devices = Join(visible, ","), .master_port = master_port};
}

Status LocalExecutor::Signal(const ProcessRef& p, int sig) {
  std::string where =
      "signal " + std::to_string(sig) + " to process group " + std::to_string(p.pid);
  if (p.pid <= 0) return InvalidArgument(where + ": bad pid");
  // A pid with another start time was reused, so the group we want is gone. A missing pid may
  // still lead a group whose other members live on; the kernel does not reuse its number for
  // a new process while that group exists, so signalling it is safe.
  auto st = ReadProcStat(p.pid);
  if (st && st->start_ticks != p.start_ticks) return NotFound(where + ": the process is gone");
  if (kill(-p.pid, sig) != 0) {
    if (errno == ESRCH) return NotFound(where + ": the process group is gone");
    return IoError(where + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

bool LocalExecutor::Adopt(JobId job, int attempt, const ProcessRef& p, const std::string& job_dir) {
  auto st = ReadProcStat(p.pid);
  if (!st || st->start_ticks != p.start_ticks) return false;
  if (st->state == 'Z' || st->state == 'X') {
    // Dead. If it is our own unreaped child (the daemon object was recreated in the same
    // process), reap it so it does not linger; its exit file says how it ended.
    int status;
    waitpid(p.pid, &status, WNOHANG);
    return false;
  }
  auto it = tracked_.find(p.pid);
  if (it != tracked_.end()) return it->second.ref.start_ticks == p.start_ticks;
  std::error_code ec;
  fs::path dir = fs::absolute(job_dir, ec);
  tracked_[p.pid] = Tracked{job, attempt, p, ec ? job_dir : dir.string(), /*adopted=*/true};
  return true;
}

std::optional<ExitInfo> LocalExecutor::ReadExit(JobId job, int attempt,
                                                const std::string& job_dir) {
  auto rec = ReadExitRecord(ExitFilePath(job_dir, attempt));
  if (!rec) return std::nullopt;
  return ExitInfo{
      .job = job, .attempt = attempt, .exit_code = rec->exit_code, .signal = rec->signal};
}

std::optional<ProcessRef> LocalExecutor::FindLaunched(JobId /*job*/, int attempt,
                                                      const std::string& job_dir) {
  auto p = ReadPidFile(PidFilePath(job_dir, attempt));
  if (!p) return std::nullopt;
  return ProcessRef{.pid = p->first, .start_ticks = p->second};
}

ExitInfo LocalExecutor::Ended(const Tracked& t, std::optional<int> wait_status) {
  if (auto info = ReadExit(t.job, t.attempt, t.job_dir)) return *info;
  ExitInfo info{.job = t.job, .attempt = t.attempt, .exit_code = -1, .signal = SIGKILL};
  if (wait_status && WIFSIGNALED(*wait_status)) {
    info.signal = WTERMSIG(*wait_status);
  } else if (wait_status && WIFEXITED(*wait_status)) {  // the shim failed before recording
    info.exit_code = WEXITSTATUS(*wait_status);
    info.signal = 0;
  }
  return info;
}

std::vector<ExitInfo> LocalExecutor::Poll() {
  std::vector<ExitInfo> ended;
  for (auto it = tracked_.begin(); it != tracked_.end();) {
    const Tracked& t = it->second;
    int pid = t.ref.pid;
    std::optional<int> wait_status;
    bool done = false;
    if (!t.adopted) {
      int status;
      pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        wait_status = status;
        done = true;
      } else if (r < 0 && errno == ECHILD) {  // reaped behind our back
        done = true;
      }
    } else {
      auto st = ReadProcStat(pid);
      if (!st || st->start_ticks != t.ref.start_ticks) {
        done = true;
      } else if (st->state == 'Z' || st->state == 'X') {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) wait_status = status;  // ours after all
        done = true;
      }
    }
    if (done) {
      ended.push_back(Ended(t, wait_status));
      it = tracked_.erase(it);
    } else {
      ++it;
    }
  }
  return ended;
}

}  // namespace tiresias
