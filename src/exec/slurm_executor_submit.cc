// SlurmExecutor's held batch jobs: Prepare and the sbatch of each (SubmitNow: one whose
// answer was lost is looked for in the next snapshot first; a submit limit waits and is tried
// again), and, under a limit on queued jobs, a started job taking the place of a held one
// (PlaceFor, GivePlace). See slurm_executor.h.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "common/atomic_file.h"
#include "common/strings.h"
#include "exec/slurm_batch.h"
#include "exec/slurm_executor.h"
#include "exec/subprocess.h"

extern char** environ;

namespace tiresias {
namespace {
namespace fs = std::filesystem;

// A root serve submits a job as its submitter (sbatch --uid), else as itself.
bool AsUser(const LaunchSpec& spec) {
  return geteuid() == 0 && spec.uid && spec.gid && *spec.uid != 0;
}
// Whose Slurm job it is: whose submit limit it counts against.
uint32_t Owner(const LaunchSpec& spec) {
  return AsUser(spec) ? *spec.uid : geteuid();
}

}  // namespace

void SlurmExecutor::Prepare(const LaunchSpec& spec) {
  std::lock_guard lk(mu_);
  Job& j = jobs_[spec.job];
  j.id = spec.job;
  j.job_dir = spec.job_dir;
  j.spec = spec;
  if ((j.slurm_id != 0 && !j.replace) || j.submit_queued || j.retired) return;
  j.submit_queued = true;
  Enqueue({.kind = OpKind::kSubmit, .job = spec.job});
}

bool SlurmExecutor::AwaitsSubmitAnswer(const Job& j) const {
  return !j.retired && j.submit_uncertain_seq != 0 && seen_seq_ <= j.submit_uncertain_seq;
}

Status SlurmExecutor::SubmitNow(JobId id) {
  LaunchSpec spec;
  {
    std::lock_guard lk(mu_);
    Job* j = Find(id);
    if (!j || j->retired) return Status::Ok();
    if (j->slurm_id != 0 && !j->replace) return Status::Ok();
    if (j->submit_uncertain_seq != 0) {
      // The last sbatch may have made the job: a second would leave one held forever (the
      // poller's sweep cancels one it finds later all the same).
      if (AwaitsSubmitAnswer(*j)) return Status::Ok();  // RunBatch waits
      j->submit_uncertain_seq = 0;
      int64_t made = 0;  // newer than the one it replaces
      for (const auto& [sid, s] : seen_) {
        if (s.comment == Tag(id) && s.state == "PENDING" && sid > std::max(made, j->slurm_id)) {
          made = sid;
        }
      }
      if (made != 0) {
        Submitted(*j, made, seen_seq_);
        return Status::Ok();
      }
    }
    spec = j->spec;
  }
  auto where = [&](const std::string& m) {
    return fmt::format("job {}: sbatch: {}", id.value(), m);
  };
  if (spec.argv.empty()) return InvalidArgument(where("empty command"));
  // The job directory: its log and checkpoint directory belong to the job's user, who runs
  // the batch script; the directory itself stays serve's (searchable, not listable).
  const bool as_user = AsUser(spec);
  std::error_code ec;
  const fs::path dir = fs::absolute(spec.job_dir, ec);
  if (!ec) fs::create_directories(dir / "checkpoint", ec);
  if (ec) return IoError(where(fmt::format("{}: {}", spec.job_dir, ec.message())));
  const fs::path log = dir / "output.log";
  {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) ::close(fd);
  }
  if (as_user) {
    for (const fs::path& p : {dir.parent_path(), dir}) (void)::chmod(p.c_str(), 0711);
    for (const fs::path& p : {dir / "checkpoint", log}) {
      if (::chown(p.c_str(), *spec.uid, *spec.gid) != 0) {
        return IoError(where(fmt::format("chown {}: {}", p.string(), std::strerror(errno))));
      }
    }
    (void)::chmod((dir / "checkpoint").c_str(), 0700);
  }
  const fs::path script = dir / "slurm-batch.sh";
  if (Status s = WriteFileAtomically(script.string(), BatchScript(spec, opts_.cpus_per_task));
      !s.ok())
    return s;
  (void)::chmod(script.c_str(), 0755);
  // Until the first release the attempt file must exist (the script sources it), and say
  // stopped: only a launch of tiresias's writes one that runs the command.
  if (!fs::exists(AttemptFile(dir.string()))) {
    (void)WriteFileAtomically(AttemptFile(dir.string()), UnlaunchedAttemptVars());
    (void)::chmod(AttemptFile(dir.string()).c_str(), 0644);
  }
  // The natural shape; every release sets the real one.
  const int per_node =
      std::max(1, std::min(spec.gpus.empty() ? 1 : static_cast<int>(spec.gpus.size()),
                           nodes_.empty() ? 1 : nodes_[0].gpus));
  std::vector<std::string> argv = {
      "sbatch", "--parsable", "--hold", "--requeue", "--open-mode=append",
      "--job-name=" + (spec.name.empty() ? "tiresias-" + spec.job.str() : spec.name),
      "--comment=" + Tag(id), "--partition=" + opts_.partition, "--nodes=1", "--ntasks=1",
      fmt::format("--cpus-per-task={}", opts_.cpus_per_task),
      fmt::format("--gres=gpu:{}", per_node),
      // --output/--error of the submission, else one log; Slurm opens them as the job's user.
      "--output=" + SlurmLiteral(spec.stdout_path.empty() ? log.string() : spec.stdout_path),
      "--chdir=" + (spec.cwd.empty() ? dir.string() : spec.cwd)};
  if (!spec.stderr_path.empty()) argv.push_back("--error=" + SlurmLiteral(spec.stderr_path));
  if (as_user) {
    argv.push_back(fmt::format("--uid={}", *spec.uid));
    argv.push_back(fmt::format("--gid={}", *spec.gid));
  }
  argv.insert(argv.end(), opts_.sbatch_args.begin(), opts_.sbatch_args.end());
  argv.push_back(script.string());
  // The job's own variables go to a file the batch script loads as the job's user; sbatch's
  // environment (which --export=ALL hands to the job too) is serve's, never the job's: a
  // user's LD_PRELOAD must not act in sbatch, run as root by a root serve. The tools' own
  // settings (SLURM_CONF) win.
  const std::string job_env = JobEnvFile(dir.string());
  if (Status s = WriteFileAtomically(job_env, JobEnvText(spec.env)); !s.ok()) return s;
  (void)::chmod(job_env.c_str(), 0600);
  if (as_user && ::chown(job_env.c_str(), *spec.uid, *spec.gid) != 0) {
    return IoError(where(fmt::format("chown {}: {}", job_env, std::strerror(errno))));
  }
  std::vector<std::string> env;
  std::map<std::string, std::string> vars;
  if (opts_.env.empty()) {
    for (char** e = environ; e && *e; ++e) {
      std::string_view kv(*e);
      vars[std::string(kv.substr(0, kv.find('=')))] = std::string(kv.substr(kv.find('=') + 1));
    }
  }
  for (std::string_view kv : opts_.env) {
    vars[std::string(kv.substr(0, kv.find('=')))] = std::string(kv.substr(kv.find('=') + 1));
  }
  for (const auto& [k, v] : vars) env.push_back(k + "=" + v);
  auto uncertain = [&](Status s) {
    std::lock_guard lk(mu_);
    if (Job* j = Find(id)) j->submit_uncertain_seq = ++op_seq_;
    return s;
  };
  auto r = RunCommand(argv, opts_.command_timeout, &env, &stopping_);
  if (!r.ok()) {
    return r.status().code() == StatusCode::kUnavailable ? uncertain(r.status()) : r.status();
  }
  if (!r->ok()) {
    if (Retryable(*r)) return uncertain(Unavailable(where(r->Summary())));
    if (SlurmSubmitLimit(r->err) || SlurmSubmitLimit(r->out)) {
      return ResourceExhausted(where(r->Summary()));
    }
    if (const std::string reason = SlurmPolicyReason(r->err); !reason.empty()) {
      // A limit of its association or QOS that the job itself is over (its size, its time).
      return IoError(where(fmt::format("exit {}: Slurm's accounting policy refuses the job: {}",
                                       r->exit_code, reason)));
    }
    return IoError(where(r->Summary()));
  }
  auto sid = ParseInt(std::string_view(r->out).substr(0, r->out.find_first_of(";\n")));
  if (!sid || *sid <= 0) return IoError(where("unexpected output '" + r->out + "'"));
  std::lock_guard lk(mu_);
  if (Job* j = Find(id)) {
    Submitted(*j, *sid, ++op_seq_);  // older snapshots do not show it yet
    if (j->retired) CancelSlurmJob(id, *sid);
  }
  cv_.notify_all();
  return Status::Ok();
}

void SlurmExecutor::Submitted(Job& j, int64_t sid, uint64_t seq) {
  if (j.replace && j.slurm_id != 0 && j.slurm_id != sid) {
    j.replaced_id = j.slurm_id;
    CancelSlurmJob(j.id, j.slurm_id);
  }
  j.replace = false;
  j.took_place = false;
  j.slurm_id = sid;
  j.known_seq = seq;
}

SlurmExecutor::Job* SlurmExecutor::PlaceFor(const Job& x) {
  // Where the core would start each waiting job: the later, the better to give a place.
  std::map<JobId, size_t> position;
  for (size_t k = 0; k < waiting_order_.size(); ++k) position.emplace(waiting_order_[k], k);
  const auto later = [&](JobId id) {
    auto it = position.find(id);
    return it == position.end() ? SIZE_MAX : it->second;  // not waiting (on hold): last
  };
  Job* best = nullptr;
  for (auto& [id, v] : jobs_) {
    if (id == x.id || v.retired || v.slurm_id == 0 || v.replace || v.submit_queued ||
        v.phase != Phase::kNone || v.holds_queued > 0 || v.spec.argv.empty() ||
        Owner(v.spec) != Owner(x.spec) || starting_.contains(id)) {
      continue;
    }
    const SlurmJob* s = Ours(v);
    if (!s || s->state != "PENDING" || !s->held) continue;
    // Ran before: an attempt here, or (after a restart) one the journal gave Prepare.
    const auto rank = [&](const Job& c) {
      return std::make_tuple(later(c.id), std::max(c.attempt, c.spec.attempt) >= 0, c.id);
    };
    if (!best || rank(v) > rank(*best)) best = &v;
  }
  return best;
}

void SlurmExecutor::GivePlace(Job& v) {
  const int64_t sid = v.slurm_id;
  v.slurm_id = 0;
  v.submit_limited.clear();
  v.submit_retry_at = {};
  strays_.insert({sid, op_seq_});  // nothing else acts on it
  Enqueue({.kind = OpKind::kGivePlace, .job = v.id, .slurm_id = sid});
}

void SlurmExecutor::Starting(const std::vector<JobId>& jobs, const std::vector<JobId>& waiting) {
  std::lock_guard lk(mu_);
  starting_ = std::set<JobId>(jobs.begin(), jobs.end());
  waiting_order_ = waiting;
}

}  // namespace tiresias
