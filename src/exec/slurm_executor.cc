// SlurmExecutor: Open, held batch jobs pinned and released on the core's nodes (Launch),
// signals, kills and retirement (see slurm_executor.h). Submissions:
// slurm_executor_submit.cc; the worker's batches: slurm_executor_ops.cc; Slurm's state turned
// into exits and capacity: slurm_executor_poll.cc; restarts: slurm_executor_recovery.cc.
#include "exec/slurm_executor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "common/atomic_file.h"
#include "common/strings.h"
#include "exec/exit_file.h"
#include "exec/slurm_batch.h"
#include "exec/subprocess.h"

namespace tiresias {
namespace {

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

StatusOr<CommandResult> SlurmExecutor::Slurm(const std::vector<std::string>& argv, size_t items,
                                             std::chrono::milliseconds extra) const {
  // A command over many jobs makes one request per job (scancel): ~10 ms each, 50-100 ms when
  // slurmctld is busy. Its deadline grows with them: killed halfway, it would be repeated whole.
  const auto timeout = opts_.command_timeout + std::chrono::milliseconds(100) * items + extra;
  auto r = RunCommand(argv, timeout, opts_.env.empty() ? nullptr : &opts_.env, &stopping_);
  if (!r.ok()) {
    if (r.status().code() == StatusCode::kUnavailable) return r.status();
    return IoError(fmt::format("{}: {}", argv[0], r.status().message()));
  }
  if (!r->ok() && Retryable(*r)) {
    return Unavailable(fmt::format("{}: slurmctld unreachable: {}", argv[0], r->Summary()));
  }
  return r;
}

bool SlurmExecutor::Retryable(const CommandResult& r) const {
  if (SlurmTransientFailure(r.err) || SlurmTransientFailure(r.out)) return true;
  // Words we do not know: a refusal only if a controller answers now.
  auto ping = RunCommand({"scontrol", "ping"}, opts_.command_timeout,
                         opts_.env.empty() ? nullptr : &opts_.env, &stopping_);
  return !ping.ok() || !SlurmPingSaysUp(ping->out);
}

void SlurmExecutor::RestoreAdminHolds(const std::vector<Op>& requeue_holds) {
  std::vector<int64_t> ids;
  {
    std::lock_guard lk(mu_);
    for (const Op& o : requeue_holds) {
      if (const Job* j = Find(o.job); j && j->admin_hold_on_run && j->slurm_id != 0) {
        ids.push_back(j->slurm_id);
      }
    }
  }
  // (Failed: EngineHolds still says it, by the flag, and the next requeue-hold tries again.)
  if (!ids.empty()) (void)Slurm({"scontrol", "hold", fmt::format("{}", fmt::join(ids, ","))});
}

Status SlurmExecutor::SetAsideAdminHeld(std::vector<int64_t>* release, std::vector<Op>* ops,
                                        std::vector<Op>* held, std::vector<Op>* again) const {
  if (release->empty()) return Status::Ok();
  auto r = Slurm({"squeue", "-h", "-t", "PD", "-j", fmt::format("{}", fmt::join(*release, ",")),
                  "-o", "%i %r"},
                 1, std::chrono::milliseconds(squeue_extra_ms_.load()));
  Status fault = r.status();
  // One id that Slurm no longer knows is an error (several are not): that job holds nothing.
  if (r.ok() && !r->ok() &&
      !(release->size() == 1 && (r->err + r->out).find("Invalid job id") != std::string::npos)) {
    fault = IoError("squeue: " + r->Summary());
  }
  if (!fault.ok()) {
    if (fault.message() != release_check_fault_) {
      std::cerr << fmt::format(
          "tiresias: launches wait: Slurm could not say whether an admin holds their jobs ({}); "
          "retrying\n",
          fault.message());
      release_check_fault_ = fault.message();
    }
    again->insert(again->end(), ops->begin(), ops->end());
    release->clear();
    ops->clear();
    return fault;
  }
  release_check_fault_.clear();
  std::set<int64_t> held_now;
  for (std::string_view line : Split(r->out, '\n')) {
    const size_t space = line.find(' ');
    if (space == std::string_view::npos || Trim(line.substr(space + 1)) != "JobHeldAdmin") continue;
    if (auto id = ParseInt(line.substr(0, space))) held_now.insert(*id);
  }
  for (size_t k = release->size(); k-- > 0;) {
    if (!held_now.contains((*release)[k])) continue;
    held->push_back((*ops)[k]);
    release->erase(release->begin() + static_cast<std::ptrdiff_t>(k));
    ops->erase(ops->begin() + static_cast<std::ptrdiff_t>(k));
  }
  return Status::Ok();
}

Status SlurmExecutor::JsonFault(const Status& s) const {
  // squeue/sinfo --json exit 0 while slurmctld is down, their JSON's errors saying only
  // "Unspecified error" (22.05): unreachable if no controller answers a ping now.
  CommandResult said;
  said.out = s.message();
  if (Retryable(said)) return Unavailable("slurmctld unreachable: " + s.message());
  return s;
}

StatusOr<std::vector<SlurmJob>> SlurmExecutor::Squeue(std::chrono::milliseconds extra) const {
  auto r = Slurm({"squeue", "--json"}, 1, extra);
  if (!r.ok()) return r.status();
  if (!r->ok()) return IoError("squeue --json: " + r->Summary());
  auto jobs = ParseSqueueJson(r->out);
  if (!jobs.ok()) return JsonFault(jobs.status());
  return jobs;
}

StatusOr<std::vector<SlurmNode>> SlurmExecutor::Sinfo() const {
  auto r = Slurm(nodes_command_);
  if (!r.ok()) return r.status();
  if (!r->ok()) return IoError(Join(nodes_command_, " ") + ": " + r->Summary());
  auto nodes = ParseSinfoJson(r->out);
  if (!nodes.ok()) return JsonFault(nodes.status());
  return nodes;
}

std::string SlurmExecutor::Tag(JobId id) const {
  return fmt::format("tiresias:{}:{}", opts_.tag, id.value());
}

std::string SlurmExecutor::GavePlacePrefix() const {
  return fmt::format("tiresias:{}:gave-place-of:", opts_.tag);
}

StatusOr<std::unique_ptr<SlurmExecutor>> SlurmExecutor::Open(SlurmOptions opts) {
  std::unique_ptr<SlurmExecutor> x(new SlurmExecutor(std::move(opts)));
  // Which Slurm: what its JSON looks like, and which command lists nodes one by one. Asked of
  // the tools (no controller needed); one that does not say is taken for 22.05.
  if (auto v = x->Slurm({"sinfo", "--version"}); v.ok() && v->ok()) {
    if (auto version = ParseSlurmVersion(v->out)) {
      if (std::string why = SlurmVersionProblem(*version); !why.empty()) {
        return FailedPrecondition(why);
      }
      x->nodes_command_ = NodesCommand(*version);
    }
  }
  auto nodes = x->Sinfo();
  if (!nodes.ok()) {
    return Status(nodes.status().code(), "cannot read Slurm's nodes: " + nodes.status().message());
  }
  for (const SlurmNode& n : *nodes) {
    if (n.gpus <= 0) continue;
    if (std::find(n.partitions.begin(), n.partitions.end(), x->opts_.partition) ==
        n.partitions.end()) {
      continue;
    }
    x->node_index_[n.name] = static_cast<int>(x->nodes_.size());
    x->nodes_.push_back(n);
    x->unknown_grace_.Trust(n.name);  // (serve and slurmctld may start together)
  }
  if (x->nodes_.empty()) {
    return FailedPrecondition(fmt::format(
        "Slurm partition '{}' has no node with GPUs (gres/gpu); `sinfo -p {} -o \"%N %G\"` "
        "shows what it has",
        x->opts_.partition, x->opts_.partition));
  }
  x->node_state_ = *nodes;
  auto jobs = x->Squeue(kOpenSqueueExtra);  // a big cluster's squeue may need it
  if (!jobs.ok()) {
    return Status(jobs.status().code(), "cannot read Slurm's jobs: " + jobs.status().message());
  }
  const std::string prefix = fmt::format("tiresias:{}:", x->opts_.tag);
  // Normally one per job. Of several (a stray of an sbatch whose answer was lost, one replaced
  // just before serve stopped): the newest (highest id) of those Slurm runs (a replaced one is
  // not adopted: Adopt), else of those pending, else the newest.
  std::map<JobId, std::pair<int, int64_t>> newest;
  for (SlurmJob& s : *jobs) {
    if (s.comment.starts_with(prefix)) {
      if (auto id = ParseInt(std::string_view(s.comment).substr(prefix.size()))) {
        auto& best = newest[JobId(*id)];
        const int rank = SlurmActive(s.state) ? 2 : SlurmEnded(s.state) ? 0 : 1;
        best = std::max(best, std::make_pair(rank, s.id));
      }
    }
    x->seen_[s.id] = std::move(s);
  }
  for (const auto& [id, best] : newest) {
    Job& j = x->jobs_[id];
    j.id = id;
    j.slurm_id = best.second;
  }
  x->seen_seq_ = ++x->op_seq_;
  x->poller_ = std::thread([p = x.get()] { p->PollerLoop(); });
  x->worker_ = std::thread([p = x.get()] { p->WorkerLoop(); });
  return x;
}

SlurmExecutor::~SlurmExecutor() {
  (void)Drain(std::chrono::seconds(2));  // what was decided reaches Slurm if it can
  stopping_ = true;
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (poller_.joinable()) poller_.join();
  if (worker_.joinable()) worker_.join();
}

StatusOr<std::vector<std::string>> SlurmExecutor::CheckConfig() {
  auto r = Slurm({"scontrol", "show", "config"});
  if (!r.ok()) return r.status();
  if (!r->ok()) return IoError("scontrol show config: " + r->Summary());
  return SlurmConfigWarnings(ParseSlurmConfig(r->out));
}

std::string SlurmExecutor::Containment() const {
  return fmt::format("Slurm partition {} ({} nodes): Slurm starts, tracks and stops job processes",
                     opts_.partition, nodes_.size());
}

SlurmExecutor::Job& SlurmExecutor::Track(JobId id, const std::string& job_dir) {
  Job& j = jobs_[id];
  j.id = id;
  j.job_dir = job_dir;
  return j;
}

SlurmExecutor::Job* SlurmExecutor::Find(JobId id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

const SlurmJob* SlurmExecutor::Seen(int64_t slurm_id) const {
  auto it = seen_.find(slurm_id);
  return it == seen_.end() ? nullptr : &it->second;
}

const SlurmJob* SlurmExecutor::Ours(const Job& j) const {
  const SlurmJob* s = Seen(j.slurm_id);
  // An id Slurm gave out again (its state was reset) to a job that is not this one: ours is
  // gone, and the other job is never acted on.
  return s && IsOurs(j.id, j.job_dir, *s) ? s : nullptr;
}

bool SlurmExecutor::IsOurs(JobId id, const std::string& job_dir, const SlurmJob& s) const {
  if (s.comment == Tag(id)) return true;
  // The recorded id is the job's identity; the comment only finds jobs whose id was never
  // recorded. Its owner may change it (scontrol update Comment=): that job, read as vanished,
  // was replaced and ran twice. An id Slurm reissued runs another script than this job's.
  if (s.command.empty() || job_dir.empty()) return false;
  std::error_code ec;
  const std::filesystem::path script = std::filesystem::absolute(job_dir, ec) / "slurm-batch.sh";
  return !ec && std::filesystem::path(s.command).lexically_normal() == script.lexically_normal();
}

int64_t SlurmExecutor::SlurmId(JobId job) const {
  std::lock_guard lk(mu_);
  auto it = jobs_.find(job);
  return it == jobs_.end() ? 0 : it->second.slurm_id;
}

void SlurmExecutor::NoteContact(const Status& s) {
  if (s.ok()) {
    contact_lost_.reset();
  } else if (s.code() == StatusCode::kUnavailable && !contact_lost_) {
    contact_lost_ = std::make_pair(WallMs(), s.message());
  }
}

std::optional<std::pair<int64_t, std::string>> SlurmExecutor::ContactLost() const {
  std::lock_guard lk(mu_);
  return contact_lost_;
}

void SlurmExecutor::Enqueue(Op op) {
  ops_.push_back(op);
  cv_.notify_all();
}

void SlurmExecutor::EnqueueHold(Job& j, Op op) {
  ++j.holds_queued;
  if (op.slurm_id == 0) op.slurm_id = j.slurm_id;  // not a fresh one that replaced it since
  Enqueue(op);
}

bool SlurmExecutor::Drain(std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  return cv_.wait_for(lk, timeout, [&] { return ops_.empty() && running_ops_ == 0; });
}

void SlurmExecutor::NoteRestartBase(Job& j, int base) {
  const std::string was = fmt::format("TIRESIAS_SLURM_RESTARTS={}\n", j.restart_base);
  j.restart_base = base;
  if (auto at = j.attempt_vars.find(was); at != std::string::npos) {
    j.attempt_vars.replace(at, was.size(), fmt::format("TIRESIAS_SLURM_RESTARTS={}\n", base));
    (void)WriteFileAtomically(AttemptFile(j.job_dir), j.attempt_vars);
    (void)::chmod(AttemptFile(j.job_dir).c_str(), 0644);
  }
}

void SlurmExecutor::NoteStop(Job& j, bool kill) {
  const std::string line = kill ? "TIRESIAS_KILLED=1\n" : "TIRESIAS_STOPPED=1\n";
  if (!j.attempt_vars.empty() && j.attempt_vars.find(line) == std::string::npos) {
    j.attempt_vars += line;
  }
  std::ofstream(AttemptFile(j.job_dir), std::ios::app) << line;
}

void SlurmExecutor::Replace(Job& j) {
  if (j.replace || j.retired) return;
  j.replace = true;
  // Submitted now if its command is known (else by Prepare, as after a restart, or Launch).
  if (!j.submit_queued && !j.spec.argv.empty()) {
    j.submit_queued = true;
    Enqueue({.kind = OpKind::kSubmit, .job = j.id});
  }
}

StatusOr<Launched> SlurmExecutor::Launch(const LaunchSpec& spec) {
  const std::string where = fmt::format("launch job {} attempt {}", spec.job.value(), spec.attempt);
  if (spec.gpus.empty()) return InvalidArgument(where + ": no GPUs");
  if (spec.tasks_per_gpu > 0) {
    return InvalidArgument(where + ": one process per GPU (tasks_per_gpu) is not supported here");
  }
  if (spec.argv.empty() || spec.argv[0].empty()) return InvalidArgument(where + ": empty command");
  std::map<int, int> per_node;
  for (const GpuId& g : spec.gpus) {
    if (g.node < 0 || g.node >= static_cast<int>(nodes_.size())) {
      return InvalidArgument(
          fmt::format("{}: node {}: the partition has {} nodes", where, g.node, nodes_.size()));
    }
    ++per_node[g.node];
  }
  std::vector<std::pair<int, int>> placement(per_node.begin(), per_node.end());
  std::vector<std::string> names;
  for (const auto& [n, g] : placement) names.push_back(nodes_[static_cast<size_t>(n)].name);
  {
    std::unique_lock lk(mu_);
    Job& j = jobs_[spec.job];
    j.id = spec.job;
    j.job_dir = spec.job_dir;
    j.spec.job = spec.job;
    if (j.spec.argv.empty() || j.spec.job_dir.empty()) j.spec = spec;
    if (j.phase == Phase::kLaunching || j.phase == Phase::kReleased) {
      return FailedPrecondition(
          fmt::format("{}: attempt {} still runs in Slurm", where, j.attempt));
    }
    if (!j.submit_error.empty()) return IoError(where + ": " + j.submit_error);
    if (j.slurm_id == 0 || j.replace) {
      // Its held batch job is not submitted yet (Prepare's sbatch is queued, Slurm forgot the
      // job, or a lost run's job is being replaced): the worker submits it; the launch is
      // tried again then. Never blocks.
      // Refused for a limit on the jobs a user (or account, QOS) has queued: it takes the
      // place of a job of the same user whose held Slurm job only waits, and submits at once
      // (first in the queue and its batch). Once until it has a Slurm job: if that did not
      // get it in, the limit is not one our held jobs fill.
      const auto now = std::chrono::steady_clock::now();
      if (SlurmPlaceLimit(j.submit_limited) && j.slurm_id == 0 && !j.took_place &&
          !j.submit_queued && !j.retired) {
        if (Job* v = PlaceFor(j)) {
          GivePlace(*v);
          j.took_place = true;
          j.submit_queued = true;
          ops_.push_front({.kind = OpKind::kSubmit, .job = spec.job});
          cv_.notify_all();
        }
      }
      // After a submit limit, not before the retry time: no sbatch every round.
      if (!j.submit_queued && !j.retired && now >= j.submit_retry_at) {
        j.submit_queued = true;
        Enqueue({.kind = OpKind::kSubmit, .job = spec.job});
      }
      return Unavailable(
          where + (contact_lost_ ? ": " + contact_lost_->second
                   : !j.submit_limited.empty()
                       ? fmt::format(": Slurm takes no more jobs now ({}); tried again every {} s",
                                     j.submit_limited, kSubmitRetryS)
                   : j.replace && j.slurm_id != 0
                       ? fmt::format(": Slurm job {}'s last run was lost; a fresh "
                                     "held Slurm job replaces it and is being submitted",
                                     j.slurm_id)
                       : ": its held Slurm job is being submitted"));
    }
  }
  std::lock_guard lk(mu_);
  Job& j = jobs_[spec.job];
  // The restart count Slurm's job will have once this attempt is released (a guess the
  // release checks again).
  const int restarts = RestartsOnRelease(Ours(j));
  // The attempt's variables, read by the batch script at its start.
  const SlurmNode& first = nodes_[static_cast<size_t>(placement.front().first)];
  // MASTER_PORT: spread by job and attempt, and never one another of our runs on the same
  // first node uses (job 1 attempt 7 and job 2 attempt 0 once shared one).
  std::set<int> taken;
  for (const auto& [id, other] : jobs_) {
    if (id != spec.job && !other.placement.empty() &&
        other.placement.front().first == placement.front().first &&
        (other.phase == Phase::kLaunching || other.phase == Phase::kReleased)) {
      taken.insert(other.master_port);
    }
  }
  int master_port = 20000 + static_cast<int>((spec.job.value() * 7 + spec.attempt) % 20000);
  while (taken.contains(master_port)) master_port = master_port == 39999 ? 20000 : master_port + 1;
  const std::string vars = fmt::format(
      "TIRESIAS_ATTEMPT={}\nTIRESIAS_SLURM_RESTARTS={}\nMASTER_ADDR={}\nMASTER_PORT={}\n"
      "WORLD_SIZE={}\nTIRESIAS_GPUS={}\nTIRESIAS_NODES={}\nTIRESIAS_PLACEMENT={}\n",
      spec.attempt, restarts, ShellQuote(first.address.empty() ? first.name : first.address),
      master_port, placement.size(), spec.gpus.size(), ShellQuote(Join(names, ",")),
      PlacementString(placement));
  if (Status s = RemoveDoneFile(spec.job_dir); !s.ok()) return IoError(where + ": " + s.message());
  if (Status s = WriteFileAtomically(AttemptFile(spec.job_dir), vars); !s.ok()) {
    return IoError(where + ": " + s.message());
  }
  (void)::chmod(AttemptFile(spec.job_dir).c_str(), 0644);
  j.attempt = spec.attempt;
  j.phase = Phase::kLaunching;
  j.placement = placement;
  j.master_port = master_port;
  j.released_seq = 0;
  // Slurm's requeue of this run is a count above the one its release gives, even one the
  // first snapshot after the release already shows (the release checks it again).
  j.restart_base = restarts;
  j.attempt_vars = vars;
  j.seen_active = j.stop_requested = j.kill_requested = false;
  j.ended_itself.reset();
  j.ended.reset();
  Enqueue({.kind = OpKind::kLaunch, .job = spec.job, .attempt = spec.attempt});
  return Launched{.ref = {.pid = static_cast<int>(j.slurm_id), .start_ticks = spec.attempt},
                  .visible_devices = "",
                  .master_port = master_port,
                  .engine_job = std::to_string(j.slurm_id),
                  .nodes = names};
}

Status SlurmExecutor::Signal(const ProcessRef& p, int sig) {
  std::lock_guard lk(mu_);
  const std::string where = fmt::format("signal {} to Slurm job {}", sig, p.pid);
  Job* j = nullptr;
  for (auto& [id, x] : jobs_) {
    if (x.slurm_id == p.pid && x.attempt == p.start_ticks) j = &x;
  }
  if (!j || (j->phase != Phase::kLaunching && j->phase != Phase::kReleased)) {
    // A run of a job this serve never launched nor adopted (FindLaunched found it: the
    // journal lost the job): SIGKILL cancels its Slurm job outright.
    for (auto& [id, x] : jobs_) {
      const SlurmJob* s = Ours(x);
      if (sig != SIGKILL || x.slurm_id != p.pid || x.attempt >= 0 || !s || !SlurmActive(s->state)) {
        continue;
      }
      x.retired = true;  // no journal knows it: nothing of it is reported
      x.retired_seq = ++op_seq_;
      CancelSlurmJob(id, s->id);
      return Status::Ok();
    }
    return NotFound(where + ": no attempt of it runs");
  }
  if (j->phase == Phase::kLaunching) {
    auto it = std::find_if(ops_.begin(), ops_.end(), [&](const Op& o) {
      return o.kind == OpKind::kLaunch && o.job == j->id && o.attempt == j->attempt;
    });
    if (it != ops_.end()) {  // never released: nothing ran
      ops_.erase(it);
      j->phase = Phase::kEnded;
      j->ended = ExitInfo{.job = j->id,
                          .attempt = j->attempt,
                          .exit_code = -1,
                          .signal = sig == SIGKILL ? SIGKILL : 0,
                          .reason = "stopped before Slurm started it"};
      return Status::Ok();
    }
  }
  if (sig == SIGKILL) {
    j->kill_requested = true;
    NoteStop(*j, /*kill=*/true);
    EnqueueHold(*j, {.kind = OpKind::kKill, .job = j->id, .attempt = j->attempt, .sig = sig});
  } else {
    j->stop_requested = true;
    NoteStop(*j, /*kill=*/false);
    Enqueue({.kind = OpKind::kSignal, .job = j->id, .attempt = j->attempt, .sig = sig});
  }
  return Status::Ok();
}

void SlurmExecutor::Retire(JobId job) {
  std::lock_guard lk(mu_);
  Job* j = Find(job);
  if (!j || j->retired) return;
  j->retired = true;
  j->retired_seq = ++op_seq_;
  if (j->slurm_id != 0) CancelSlurmJob(job, j->slurm_id);
}

std::pair<size_t, size_t> SlurmExecutor::Remembered() const {
  std::lock_guard lk(mu_);
  return {jobs_.size(), strays_.size()};
}

void SlurmExecutor::CancelSlurmJob(JobId job, int64_t sid) {
  strays_.insert({sid, op_seq_});  // not Sweep's to cancel, nor a hold's or kill's to act on
  cancelling_[sid] = {};
  Enqueue({.kind = OpKind::kCancelAny, .job = job, .slurm_id = sid});
}

}  // namespace tiresias
