// LocalExecutor: signals only to what provably belongs to an attempt, adoption of attempts
// that survived a daemon restart, and reaping: an attempt is reported ended once its command
// and everything it left behind (its cgroup, or its process group) are gone (see
// local_executor.h; launching is in local_executor.cc).
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "common/strings.h"
#include "exec/exit_file.h"
#include "exec/local_executor.h"
#include "exec/proc_stat.h"

namespace tiresias {

namespace fs = std::filesystem;

Status LocalExecutor::Signal(const ProcessRef& p, int sig) {
  std::string where =
      "signal " + std::to_string(sig) + " to the job of process " + std::to_string(p.pid);
  if (p.pid <= 0) return InvalidArgument(where + ": bad pid");
  Tracked* t = Find(p);
  if (t && !t->cgroup.empty()) {
    Status s = sig == SIGKILL ? cgroups_->Kill(t->cgroup) : cgroups_->Signal(t->cgroup, sig);
    if (s.ok() && sig == SIGKILL) t->sigkilled = true;
    if (s.code() == StatusCode::kNotFound) return NotFound(where + ": no process left");
    return s.ok() ? s : IoError(where + ": " + s.message());
  }
  // The process group, when its leader proves it is the attempt's: our unreaped child (its
  // pid, and so the group's id, cannot be reused before we reap it), or alive with the
  // recorded start time. A leader that is gone proves nothing: its group id may name another
  // group by now.
  const bool ours = t && !t->adopted && !t->shim_gone;
  if (!ours && Probe(p.pid, p.start_ticks) != Liveness::kAlive) {
    return NotFound(where + ": the process is gone (or cannot be proven to be the job's)");
  }
  if (kill(-p.pid, sig) != 0) {
    if (errno == ESRCH) return NotFound(where + ": the process group is gone");
    return IoError(where + ": " + std::strerror(errno));
  }
  if (t && sig == SIGKILL) t->sigkilled = true;
  return Status::Ok();
}

bool LocalExecutor::Adopt(JobId job, int attempt, const ProcessRef& p, const std::string& job_dir) {
  if (auto it = tracked_.find({job, attempt}); it != tracked_.end()) {
    return it->second.ref.pid == p.pid && it->second.ref.start_ticks == p.start_ticks;
  }
  std::error_code ec;
  fs::path abs = fs::absolute(job_dir, ec);
  Tracked t{.job = job,
            .attempt = attempt,
            .ref = p,
            .job_dir = ec ? job_dir : abs.string(),
            .adopted = true};
  const Liveness shim = Probe(p.pid, p.start_ticks);
  if (shim == Liveness::kZombie) {
    // If it is our own unreaped child (the daemon object was recreated in the same process),
    // reap it so it does not linger; its exit file says how it ended.
    int status;
    if (waitpid(p.pid, &status, WNOHANG) == p.pid) t.wait_status = status;
  }
  if (cgroups_) {
    // The cgroup decides: any live member means the attempt still runs, whatever became of
    // its shim. An unreadable cgroup is assumed to be busy (never relaunch beside it).
    const std::string name = CgroupName(job, attempt, t.job_dir);
    auto busy = cgroups_->Populated(name);
    if (!busy.ok() || *busy) {
      t.cgroup = name;
      t.shim_gone = shim == Liveness::kGone || shim == Liveness::kZombie;
      tracked_[{job, attempt}] = t;
      return true;
    }
    (void)cgroups_->Remove(name);  // empty: done with it
    // A shim outside its cgroup: launched without cgroups; tracked by its process group.
  }
  if (shim != Liveness::kAlive) return false;
  tracked_[{job, attempt}] = t;
  return true;
}

std::optional<ExitInfo> LocalExecutor::ReadExit(JobId job, int attempt,
                                                const std::string& job_dir) {
  const std::string path = ExitFilePath(job_dir, attempt);
  auto rec = ReadExitRecord(path);
  if (!rec) return std::nullopt;
  ExitInfo info{.job = job,
                .attempt = attempt,
                .exit_code = rec->exit_code,
                .signal = rec->signal,
                .reason = rec->reason,
                .completed = DoneFileExists(job_dir)};
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {  // the shim wrote it as the command ended
    info.ended_wall_ms = int64_t{st.st_mtim.tv_sec} * 1000 + st.st_mtim.tv_nsec / 1'000'000;
  }
  return info;
}

std::optional<ProcessRef> LocalExecutor::FindLaunched(JobId job, int attempt,
                                                      const std::string& job_dir) {
  if (auto p = ReadPidFile(PidFilePath(job_dir, attempt))) {
    return ProcessRef{.pid = p->first, .start_ticks = p->second};
  }
  if (!cgroups_) return std::nullopt;
  auto members = cgroups_->Members(CgroupName(job, attempt, job_dir));
  if (!members.ok()) return std::nullopt;
  for (int pid : *members) {
    if (auto st = ReadProcStat(pid)) return ProcessRef{.pid = pid, .start_ticks = st->start_ticks};
  }
  return std::nullopt;
}

bool LocalExecutor::CommandEnded(const Tracked& t) const {
  if (t.wait_status && WIFEXITED(*t.wait_status)) return true;
  return ReadExitRecord(ExitFilePath(t.job_dir, t.attempt)).has_value();
}

ExitInfo LocalExecutor::Ended(const Tracked& t) const {
  const bool done = DoneFileExists(t.job_dir);
  if (auto rec = ReadExitRecord(ExitFilePath(t.job_dir, t.attempt))) {
    return ExitInfo{.job = t.job,
                    .attempt = t.attempt,
                    .exit_code = rec->exit_code,
                    .signal = rec->signal,
                    .reason = rec->reason,
                    .completed = done};
  }
  ExitInfo info{
      .job = t.job, .attempt = t.attempt, .exit_code = -1, .signal = 0, .completed = done};
  if (t.wait_status && WIFEXITED(*t.wait_status)) {  // the shim failed before recording
    info.exit_code = WEXITSTATUS(*t.wait_status);
  } else if (t.sigkilled) {
    info.signal = SIGKILL;
  }
  // Otherwise the shim was killed by someone else, or vanished while we were away: how the
  // command ended is not known, and nothing is invented.
  return info;
}

bool LocalExecutor::DoneInCgroup(Tracked& t) {
  if (!t.shim_gone) {
    if (!t.adopted) {
      int status;
      pid_t r = waitpid(t.ref.pid, &status, WNOHANG);
      if (r == t.ref.pid) {
        t.wait_status = status;
        t.shim_gone = true;
      } else if (r < 0 && errno == ECHILD) {  // reaped behind our back
        t.shim_gone = true;
      }
    } else {
      const Liveness l = Probe(t.ref.pid, t.ref.start_ticks);
      if (l == Liveness::kZombie) {
        int status;
        if (waitpid(t.ref.pid, &status, WNOHANG) == t.ref.pid) t.wait_status = status;  // ours
      }
      if (l == Liveness::kGone || l == Liveness::kZombie) t.shim_gone = true;
    }
  }
  auto busy = cgroups_->Populated(t.cgroup);
  if (!busy.ok()) return false;  // no evidence: still running
  if (*busy) {
    // The command ended: kill what it left behind (once; the kill is prompt). Until the cgroup
    // is empty the attempt holds its GPUs.
    if (t.shim_gone && !t.leftovers_killed && CommandEnded(t)) {
      (void)cgroups_->Kill(t.cgroup);
      t.leftovers_killed = true;
    }
    return false;
  }
  // Empty. Our own shim left the cgroup as it exited: reap it first (next round if the kernel
  // has not yet made it a zombie).
  if (!t.adopted && !t.shim_gone) return false;
  (void)cgroups_->Remove(t.cgroup);
  return true;
}

bool LocalExecutor::DoneInGroup(Tracked& t) {
  if (!t.adopted) {
    // Look without reaping: while the shim is our zombie its group id is still ours, so what
    // the command left in the group can be killed safely; the exit is reported when the group
    // has no live process left.
    siginfo_t si{};
    if (waitid(P_PID, static_cast<id_t>(t.ref.pid), &si, WEXITED | WNOHANG | WNOWAIT) != 0) {
      if (errno == ECHILD) {  // reaped behind our back
        t.shim_gone = true;
        return true;
      }
      return false;
    }
    if (si.si_pid == 0) return false;  // still running
    if (si.si_code == CLD_EXITED) t.wait_status = (si.si_status & 0xff) << 8;
    if (!t.leftovers_killed && CommandEnded(t)) {
      kill(-t.ref.pid, SIGKILL);
      t.leftovers_killed = true;
    }
    if (!LiveGroupMembers(t.ref.pid).empty()) return false;
    int status;
    if (waitpid(t.ref.pid, &status, WNOHANG) == t.ref.pid) t.wait_status = status;
    t.shim_gone = true;
    return true;
  }
  // Adopted: its group can be told apart only while the shim lives. Gone needs evidence.
  const Liveness l = Probe(t.ref.pid, t.ref.start_ticks);
  if (l == Liveness::kAlive || l == Liveness::kUnknown) return false;
  if (l == Liveness::kZombie) {
    int status;
    if (waitpid(t.ref.pid, &status, WNOHANG) == t.ref.pid) t.wait_status = status;  // ours
  }
  t.shim_gone = true;
  return true;
}

bool LocalExecutor::Done(Tracked& t) {
  return t.cgroup.empty() ? DoneInGroup(t) : DoneInCgroup(t);
}

std::vector<ExitInfo> LocalExecutor::Poll() {
  std::vector<ExitInfo> ended;
  for (auto it = tracked_.begin(); it != tracked_.end();) {
    if (Done(it->second)) {
      ended.push_back(Ended(it->second));
      it = tracked_.erase(it);
    } else {
      ++it;
    }
  }
  return ended;
}

}  // namespace tiresias
