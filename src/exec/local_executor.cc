// LocalExecutor: vfork + exec of the supervisor shim into the attempt's cgroup (see
// local_executor.h). Signals to what provably belongs to an attempt, reaping and adoption are
// in local_executor_track.cc.
#include "exec/local_executor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string_view>

#include "common/accounts.h"
#include "common/sha256.h"
#include "common/strings.h"
#include "exec/exit_file.h"
#include "exec/free_port.h"
#include "exec/log_pump.h"
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
  int stage;  // kStageExec or kStageCgroup
  int err;    // errno
};
constexpr int kStageExec = 2;
constexpr int kStageCgroup = 3;

// Async-signal-safe: between vfork and exec.
[[noreturn]] void ChildFail(int pipe_fd, int stage) {
  ChildError e{stage, errno};
  ssize_t ignored = write(pipe_fd, &e, sizeof e);
  (void)ignored;
  _exit(127);
}

// What the shim's child needs, all prepared before vfork.
struct SpawnArgs {
  const char* exec_path;
  char* const* argv;
  char* const* envp;
  const char* cgroup_procs;  // null: no cgroup
  std::string_view header;   // written to the log first: a header means a process ran
  int stdin_fd, log_fd, err_fd;
  int env_fd;  // the job's environment for the shim (--env-fd), kept open across exec
};

// Starts the shim: its pid, or -errno. vfork, not fork: the child borrows the daemon's memory
// until execve instead of copying its page tables (with thousands of jobs, fork's copy and
// unmap were ~30% of serve's loop). The child only reads `a` and makes system calls; its
// signal dispositions are its own (no CLONE_SIGHAND), and this thread waits until it has
// exec'd. A function of its own, out of line, so no caller's variable lives across vfork.
[[gnu::noinline]] pid_t SpawnShim(const SpawnArgs& a) {
  // Block all signals so the child runs none of the daemon's handlers before it resets them.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t pid = vfork();
  if (pid == 0) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);  // EINVAL: fine
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    setsid();
    // Into the attempt's cgroup before anything runs: every process of the job is born there.
    if (a.cgroup_procs) {
      const int fd = open(a.cgroup_procs, O_WRONLY | O_CLOEXEC);
      if (fd < 0 || write(fd, "0", 1) != 1) ChildFail(a.err_fd, kStageCgroup);
      close(fd);
    }
    dup2(a.stdin_fd, 0);
    dup2(a.log_fd, 1);
    dup2(a.log_fd, 2);
    for (size_t off = 0; off < a.header.size();) {  // write(2) only: async-signal-safe
      const ssize_t w = write(1, a.header.data() + off, a.header.size() - off);
      if (w <= 0) break;
      off += static_cast<size_t>(w);
    }
    // Whatever else the daemon has open (and did not mark close-on-exec) stays behind.
    close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);  // fails only on old kernels
    if (fcntl(a.env_fd, F_SETFD, 0) != 0) ChildFail(a.err_fd, kStageExec);
    execve(a.exec_path, a.argv, a.envp);
    ChildFail(a.err_fd, kStageExec);
  }
  const int err = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return pid < 0 ? -err : pid;
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
// The default PATH of a job that brings none (and of the shim itself).
constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// The job's environment: `base`, less `drop`, with `set` on top.
std::vector<std::string> BuildEnv(std::vector<std::string> base,
                                  const std::vector<std::pair<std::string, std::string>>& set,
                                  const std::vector<std::string>& drop) {
  std::vector<std::string> env = std::move(base);
  for (const auto& key : drop) EnvUnset(env, key);
  for (const auto& [key, value] : set) EnvSet(env, key, value);
  return env;
}

// Where a job starts from before its request's variables: serve's own environment when serve
// runs it as serve's user (a personal serve), else only what a login would set for the
// submitter (serve as root must not hand its environment, secrets and all, to every user).
std::vector<std::string> BaseEnv(std::optional<uid_t> as_user) {
  std::vector<std::string> env;
  if (!as_user) {
    for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
    return env;
  }
  env.push_back(std::string("PATH=") + kDefaultPath);
  if (const auto account = AccountById(*as_user)) {
    env.push_back("HOME=" + account->home);
    env.push_back("USER=" + account->name);
    env.push_back("LOGNAME=" + account->name);
    env.push_back("SHELL=" + account->shell);
  }
  return env;
}

// The job's environment in a sealed memory file ("K=V\0" each), for the shim's --env-fd: the
// shim itself runs with a fixed environment of its own, so that nothing a user sets (e.g.
// LD_PRELOAD) acts in it while it still runs as serve's user.
int EnvFile(const std::vector<std::string>& env) {
  const int fd = memfd_create("tiresias-job-env", MFD_CLOEXEC);
  if (fd < 0) return -1;
  std::string block;
  for (const auto& kv : env) block.append(kv).push_back('\0');
  if (WriteAllTo(fd, block) != block.size() || lseek(fd, 0, SEEK_SET) != 0) {
    close(fd);
    return -1;
  }
  return fd;
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

std::string Where(const LaunchSpec& spec) {
  return "launch job " + spec.job.str() + " attempt " + std::to_string(spec.attempt);
}

// A short name for a job directory, stable across builds and restarts: the first 64 bits of
// its SHA-256.
uint64_t DirHash(std::string_view s) {
  const auto md = Sha256(s);
  uint64_t h = 0;
  for (int i = 0; i < 8; ++i) h = h << 8 | md[static_cast<size_t>(i)];
  return h;
}

}  // namespace

LocalExecutor::LocalExecutor(std::vector<std::string> shim_argv, std::vector<std::string> devices,
                             StatusOr<CgroupTree> cgroups)
    : shim_argv_(std::move(shim_argv)), devices_(std::move(devices)) {
  if (cgroups.ok()) {
    cgroups_ = *cgroups;
  } else {
    no_cgroups_ = cgroups.status().message();
  }
}

std::string LocalExecutor::Containment() const {
  if (cgroups_) return cgroups_->Describe() + " (one cgroup per job attempt)";
  return "process groups only: " + no_cgroups_;
}

std::string LocalExecutor::CgroupName(JobId job, int attempt, const std::string& job_dir) const {
  if (!cgroups_) return "";
  // The job directory names the state directory too, so two daemons' job 1 differ.
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(fs::absolute(job_dir, ec), ec);
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(DirHash(ec ? job_dir : dir.string())));
  return "job" + job.str() + "-a" + std::to_string(attempt) + "-" + hash;
}

LocalExecutor::Tracked* LocalExecutor::Find(const ProcessRef& p) {
  for (auto& [key, t] : tracked_) {
    if (t.ref.pid == p.pid && t.ref.start_ticks == p.start_ticks) return &t;
  }
  return nullptr;
}

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
  if (spec.tasks_per_gpu < 0 || spec.tasks_per_gpu > 1) {
    return InvalidArgument(Where(spec) + ": tasks_per_gpu " + std::to_string(spec.tasks_per_gpu) +
                           " is not 0 or 1");
  }
  // One process per GPU needs at least one GPU to give each its own.
  const int tasks = spec.tasks_per_gpu > 0 ? world_size : 0;
  if (spec.tasks_per_gpu > 0 && tasks == 0) {
    return InvalidArgument(Where(spec) + ": one process per GPU, but no GPUs");
  }
  // Every run gets a rendezvous port of its own: MASTER_PORT for a distributed run, and
  // PET_MASTER_PORT for torchrun, whose default (29500) two jobs would share, even on one GPU.
  if (spec.master_port < 0 || spec.master_port > 65535)
    return InvalidArgument(Where(spec) + ": master_port " + std::to_string(spec.master_port) +
                           " is not in 1..65535");
  // A kernel-chosen free port; should none be had, a fixed one per job.
  const int master_port =
      spec.master_port > 0
          ? spec.master_port
          : FreeLoopbackPort().value_or(29500 + static_cast<int>(spec.job.value() % 2000));
  for (const auto& [key, value] : spec.env)
    if (key.empty() || key.find('=') != std::string::npos)
      return InvalidArgument(Where(spec) + ": bad environment variable name '" + key + "'");

  // As root, the command runs as its submitter (never as root unless root submitted it).
  const bool as_user = geteuid() == 0 && spec.uid && spec.gid && *spec.uid != 0;

  // The job directory, its checkpoint directory and the log.
  std::error_code ec;
  fs::path dir = fs::absolute(spec.job_dir, ec);
  if (!ec) fs::create_directories(dir / "checkpoint", ec);
  if (ec) return IoError(Where(spec) + ": job_dir " + spec.job_dir + ": " + ec.message());
  if (as_user) {
    // The submitter reaches its checkpoint directory (theirs, 0700) through directories it
    // may search but not list; the exit and pid files stay root's, so a job cannot forge
    // what serve reads about it.
    for (const fs::path& p : {dir.parent_path(), dir}) {
      if (chmod(p.c_str(), 0711) != 0) {
        return IoError(Where(spec) + ": chmod " + p.string() + ": " + std::strerror(errno));
      }
    }
    const fs::path ckpt = dir / "checkpoint";
    if (chown(ckpt.c_str(), *spec.uid, *spec.gid) != 0 || chmod(ckpt.c_str(), 0700) != 0) {
      return IoError(Where(spec) + ": chown " + ckpt.string() + ": " + std::strerror(errno));
    }
  }
  if (Status s = RemoveDoneFile(dir.string()); !s.ok())
    return IoError(Where(spec) + ": " + s.message());
  std::string exit_file = ExitFilePath(dir.string(), spec.attempt);
  for (const std::string& stale : {exit_file, PidFilePath(dir.string(), spec.attempt)}) {
    if (unlink(stale.c_str()) != 0 && errno != ENOENT)  // from an earlier try
      return IoError(Where(spec) + ": " + stale + ": " + std::strerror(errno));
  }
  // The attempt's cgroup: fresh, or left empty by an earlier try of the same attempt.
  const std::string cgroup = CgroupName(spec.job, spec.attempt, dir.string());
  std::string cgroup_procs;
  if (cgroups_) {
    auto busy = cgroups_->Populated(cgroup);
    if (!busy.ok() || *busy) {
      return FailedPrecondition(
          Where(spec) + ": cgroup " + cgroups_->PathOf(cgroup) +
          (busy.ok() ? " still has processes of an earlier try" : ": " + busy.status().message()));
    }
    if (Status s = cgroups_->Create(cgroup); !s.ok())
      return IoError(Where(spec) + ": " + s.message());
    cgroup_procs = cgroups_->ProcsFile(cgroup);
  }
  auto drop_cgroup = [&] {
    if (cgroups_) (void)cgroups_->Remove(cgroup);
  };
  std::string log_path = (dir / "output.log").string();
  Fd log(open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (log.get() < 0) {
    const int err = errno;
    drop_cgroup();
    return IoError(Where(spec) + ": " + log_path + ": " + std::strerror(err));
  }
  Fd devnull(open("/dev/null", O_RDONLY | O_CLOEXEC));
  int pipe_fds[2];
  if (devnull.get() < 0 || pipe2(pipe_fds, O_CLOEXEC) != 0) {
    const int err = errno;
    drop_cgroup();
    return IoError(Where(spec) + ": " + std::strerror(err));
  }
  Fd err_read(pipe_fds[0]), err_write(pipe_fds[1]);
  if (!log.MoveAbove2() || !devnull.MoveAbove2() || !err_write.MoveAbove2()) {
    const int err = errno;
    drop_cgroup();
    return IoError(Where(spec) + ": " + std::strerror(err));
  }

  // Everything the child needs, prepared before vfork: after it only async-signal-safe calls.
  std::string shim_path = SearchPath(shim_argv_[0]);
  std::vector<std::string> argv = shim_argv_;
  argv.insert(argv.end(), {"--exit-file", exit_file});
  if (as_user) argv.insert(argv.end(), {"--user", fmt::format("{}:{}", *spec.uid, *spec.gid)});
  // The shim's tasks enter the working directory, as the user when there is one (a directory
  // the user may not enter fails the job; one on root-squashed NFS is entered): one that is
  // gone fails the job with exit 126 and the reason, for root's jobs too (they were a launch
  // failure without an exit code; found by a tester).
  if (!spec.cwd.empty()) argv.insert(argv.end(), {"--cwd", spec.cwd});
  if (tasks > 0) argv.insert(argv.end(), {"--tasks", std::to_string(tasks)});
  if (!spec.stdout_path.empty()) argv.insert(argv.end(), {"--stdout", spec.stdout_path});
  if (!spec.stderr_path.empty()) argv.insert(argv.end(), {"--stderr", spec.stderr_path});
  // As sbatch: the first run empties the files, later ones (after a preemption) append.
  if (spec.attempt == 0 && (!spec.stdout_path.empty() || !spec.stderr_path.empty())) {
    argv.insert(argv.end(), {"--open-mode", "truncate"});
  }
  // Only for output that goes to the log: with --output, stderr follows stdout there.
  if ((max_log_size_ > 0 || log_keep_free_ > 0) && spec.stdout_path.empty()) {
    argv.insert(argv.end(), {"--log", log_path, "--log-limit", std::to_string(max_log_size_),
                             "--log-keep-free", std::to_string(log_keep_free_)});
  }
  argv.push_back("--");
  argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
  std::vector<std::pair<std::string, std::string>> set = {
      {"CUDA_VISIBLE_DEVICES", Join(visible, ",")},
      {"TIRESIAS_JOB_ID", spec.job.str()},
      {"TIRESIAS_ATTEMPT", std::to_string(spec.attempt)},
      {"TIRESIAS_CHECKPOINT_DIR", (dir / "checkpoint").string()},
      {"TIRESIAS_DONE_FILE", DoneFilePath(dir.string())},
      {"TIRESIAS_CHECKPOINT_FILE", CheckpointMarkerPath(dir.string())},
  };
  // Stale distributed variables in the daemon's environment never reach a job; then what
  // this run is: one process for all GPUs (torchrun's PET_ variables, so that a plain
  // `torchrun script.py` starts one worker per GPU on this run's port), or one process per
  // GPU (the shim gives each its RANK, LOCAL_RANK and GPU).
  const std::vector<std::string> drop = {
      "WORLD_SIZE",    "MASTER_ADDR",        "MASTER_PORT",     "RANK",
      "LOCAL_RANK",    "LOCAL_WORLD_SIZE",   "NODE_RANK",       "PET_NNODES",
      "PET_NODE_RANK", "PET_NPROC_PER_NODE", "PET_MASTER_ADDR", "PET_MASTER_PORT"};
  const std::string port = std::to_string(master_port), size = std::to_string(world_size);
  if (world_size > 1 || tasks > 0) {
    set.insert(set.end(),
               {{"WORLD_SIZE", size}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", port}});
  }
  if (tasks > 0) {
    set.insert(set.end(), {{"LOCAL_WORLD_SIZE", size}, {"NODE_RANK", "0"}});
  } else {
    set.insert(set.end(), {{"PET_NNODES", "1"},
                           {"PET_NODE_RANK", "0"},
                           {"PET_NPROC_PER_NODE", std::to_string(std::max(world_size, 1))},
                           {"PET_MASTER_ADDR", "127.0.0.1"},
                           {"PET_MASTER_PORT", port}});
  }
  set.insert(set.end(), spec.env.begin(), spec.env.end());
  std::vector<std::string> env = BuildEnv(
      BaseEnv(as_user ? std::optional<uid_t>(static_cast<uid_t>(*spec.uid)) : std::nullopt), set,
      drop);
  Fd env_fd(EnvFile(env));
  if (env_fd.get() < 0 || !env_fd.MoveAbove2()) {
    const int err = errno;
    drop_cgroup();
    return IoError(Where(spec) + ": the job's environment: " + std::strerror(err));
  }
  // Before "--": the shim reads the job's environment from that descriptor.
  argv.insert(argv.end() - static_cast<ptrdiff_t>(spec.argv.size()) - 1,
              {"--env-fd", std::to_string(env_fd.get())});
  std::vector<std::string> shim_env = {std::string("PATH=") + kDefaultPath};
  std::vector<char*> argv_c = CStrings(argv), env_c = CStrings(shim_env);

  std::string header = "==== tiresias: job " + spec.job.str() + " attempt " +
                       std::to_string(spec.attempt) + " started " + UtcNow() + ":";
  for (const auto& a : spec.argv) header += " " + EscapeControl(a);  // one line, as `show`
  header += " ====\n";  // written by the child: a header in the log means a process ran

  const pid_t pid =
      SpawnShim({.exec_path = shim_path.c_str(),
                 .argv = argv_c.data(),
                 .envp = env_c.data(),
                 .cgroup_procs = cgroup_procs.empty() ? nullptr : cgroup_procs.c_str(),
                 .header = header,
                 .stdin_fd = devnull.get(),
                 .log_fd = log.get(),
                 .err_fd = err_write.get(),
                 .env_fd = env_fd.get()});
  if (pid < 0) {
    drop_cgroup();
    return IoError(Where(spec) + ": vfork: " + std::strerror(-pid));
  }

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
    std::string what = child_err.stage == kStageCgroup ? "cannot join cgroup " + cgroup_procs
                                                       : "cannot execute shim '" + shim_path + "'";
    what += ": " + std::string(std::strerror(child_err.err));
    (void)WriteAllTo(log.get(), "==== tiresias: " + what + " ====\n");
    drop_cgroup();
    return IoError(Where(spec) + ": " + what);
  }

  auto st = ReadProcStat(pid);  // our unreaped child: its /proc entry exists
  if (!st) {
    // Without its start time the shim cannot be named safely: stop it while it is ours.
    if (cgroups_) (void)cgroups_->Kill(cgroup);
    kill(-pid, SIGKILL);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    drop_cgroup();
    return Status(StatusCode::kInternal, Where(spec) + ": no /proc entry for new pid");
  }
  ProcessRef ref{.pid = pid, .start_ticks = st->start_ticks};
  tracked_[{spec.job, spec.attempt}] = Tracked{.job = spec.job,
                                               .attempt = spec.attempt,
                                               .ref = ref,
                                               .job_dir = dir.string(),
                                               .adopted = false,
                                               .cgroup = cgroup};
  // Recorded here as well as by the shim, so that a daemon that dies right after this call
  // still finds the attempt (the shim's copy covers a death before it).
  (void)WritePidFile(PidFilePath(dir.string(), spec.attempt), pid, st->start_ticks);
  return Launched{.ref = ref,
                  .visible_devices = Join(visible, ","),
                  .master_port = world_size > 1 || tasks > 0 ? master_port : 0};
}

std::vector<std::string> DefaultShimArgv() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path shim = self.parent_path() / "tiresias-shim";
    if (access(shim.c_str(), X_OK) == 0) return {shim.string()};
  }
  return {"/proc/self/exe", "_shim"};
}

}  // namespace tiresias
