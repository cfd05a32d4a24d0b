// SlurmExecutor: held batch jobs pinned and released on the core's nodes, signals and requeues,
// Slurm's state turned into exits and capacity (see slurm_executor.h).
#include "exec/slurm_executor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/atomic_file.h"
#include "common/strings.h"
#include "exec/exit_file.h"
#include "exec/subprocess.h"

extern char** environ;

namespace tiresias {
namespace {

namespace fs = std::filesystem;

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// slurmctld did not answer now (retry with backoff, do not fail the job).
bool Transient(const CommandResult& r) {
  return SlurmTransientFailure(r.err) || SlurmTransientFailure(r.out);
}

std::string ShellQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string JoinIds(const std::vector<int64_t>& ids, char sep) {
  std::string out;
  for (int64_t id : ids) {
    if (!out.empty()) out += sep;
    out += std::to_string(id);
  }
  return out;
}

std::string AttemptFile(const std::string& job_dir) {
  return (fs::path(job_dir) / "slurm-attempt.env").string();
}

// The attempt file's KEY=VALUE lines.
std::map<std::string, std::string> ReadAttemptFile(const std::string& job_dir) {
  std::map<std::string, std::string> out;
  std::ifstream in(AttemptFile(job_dir));
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string v = line.substr(eq + 1);
    if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') v = v.substr(1, v.size() - 2);
    out[line.substr(0, eq)] = v;
  }
  return out;
}

// "0:4,1:4" <-> [(0, 4), (1, 4)]: the core's nodes and GPU counts of an attempt.
std::string PlacementString(const std::vector<std::pair<int, int>>& p) {
  std::string out;
  for (const auto& [n, g] : p) out += fmt::format("{}{}:{}", out.empty() ? "" : ",", n, g);
  return out;
}

std::vector<std::pair<int, int>> ParsePlacement(std::string_view s) {
  std::vector<std::pair<int, int>> out;
  for (auto item : Split(s, ',')) {
    const size_t colon = item.find(':');
    if (colon == std::string_view::npos) continue;
    auto n = ParseInt(item.substr(0, colon)), g = ParseInt(item.substr(colon + 1));
    if (n && g) out.emplace_back(static_cast<int>(*n), static_cast<int>(*g));
  }
  return out;
}

}  // namespace

StatusOr<CommandResult> SlurmExecutor::Slurm(const std::vector<std::string>& argv,
                                             size_t items) const {
  // A command over many jobs makes one request per job (scancel): ~10 ms each, 50-100 ms when
  // slurmctld is busy. Its deadline grows with them: killed halfway, it would be repeated whole.
  const auto timeout = opts_.command_timeout + std::chrono::milliseconds(100) * items;
  auto r = RunCommand(argv, timeout, opts_.env.empty() ? nullptr : &opts_.env);
  if (!r.ok()) {
    if (r.status().code() == StatusCode::kUnavailable) return r.status();
    return IoError(fmt::format("{}: {}", argv[0], r.status().message()));
  }
  if (!r->ok() && Transient(*r)) {
    return Unavailable(fmt::format("{}: slurmctld unreachable: {}", argv[0], r->Summary()));
  }
  return r;
}

StatusOr<std::vector<SlurmJob>> SlurmExecutor::Squeue() const {
  auto r = Slurm({"squeue", "--json"});
  if (!r.ok()) return r.status();
  if (!r->ok()) return IoError("squeue --json: " + r->Summary());
  return ParseSqueueJson(r->out);
}

StatusOr<std::vector<SlurmNode>> SlurmExecutor::Sinfo() const {
  auto r = Slurm({"sinfo", "--json"});
  if (!r.ok()) return r.status();
  if (!r->ok()) return IoError("sinfo --json: " + r->Summary());
  return ParseSinfoJson(r->out);
}

std::string SlurmExecutor::Tag(JobId id) const {
  return fmt::format("tiresias:{}:{}", opts_.tag, id.value());
}

StatusOr<std::unique_ptr<SlurmExecutor>> SlurmExecutor::Open(SlurmOptions opts) {
  std::unique_ptr<SlurmExecutor> x(new SlurmExecutor(std::move(opts)));
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
  }
  if (x->nodes_.empty()) {
    return FailedPrecondition(fmt::format(
        "Slurm partition '{}' has no node with GPUs (gres/gpu); `sinfo -p {} -o \"%N %G\"` "
        "shows what it has",
        x->opts_.partition, x->opts_.partition));
  }
  x->node_state_ = *nodes;
  auto jobs = x->Squeue();
  if (!jobs.ok()) {
    return Status(jobs.status().code(), "cannot read Slurm's jobs: " + jobs.status().message());
  }
  const std::string prefix = fmt::format("tiresias:{}:", x->opts_.tag);
  for (SlurmJob& s : *jobs) {
    if (s.comment.starts_with(prefix)) {
      if (auto id = ParseInt(std::string_view(s.comment).substr(prefix.size()))) {
        Job& j = x->jobs_[JobId(*id)];
        j.id = JobId(*id);
        // Normally one per job; of several, the newest (highest id) is the live one.
        if (!SlurmEnded(s.state) || j.slurm_id == 0) j.slurm_id = std::max(j.slurm_id, s.id);
      }
    }
    x->seen_[s.id] = std::move(s);
  }
  x->seen_seq_ = ++x->op_seq_;
  x->poller_ = std::thread([p = x.get()] { p->PollerLoop(); });
  x->worker_ = std::thread([p = x.get()] { p->WorkerLoop(); });
  return x;
}

SlurmExecutor::~SlurmExecutor() {
  (void)Drain(std::chrono::seconds(2));  // what was decided reaches Slurm if it can
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

SlurmExecutor::Job* SlurmExecutor::Find(JobId id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

const SlurmJob* SlurmExecutor::Seen(int64_t slurm_id) const {
  auto it = seen_.find(slurm_id);
  return it == seen_.end() ? nullptr : &it->second;
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

bool SlurmExecutor::Drain(std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  return cv_.wait_for(lk, timeout, [&] { return ops_.empty() && running_ops_ == 0; });
}

std::string SlurmExecutor::WriteBatchScript(const LaunchSpec& spec) const {
  const fs::path dir(spec.job_dir);
  std::string argv_text, argv_quoted;
  for (const auto& a : spec.argv) {
    if (!argv_text.empty()) argv_text += ' ';
    argv_text += a;
    argv_quoted += ' ';
    argv_quoted += ShellQuote(a);
  }
  const std::string script = fmt::format(
      "#!/bin/bash\n"
      "# Generated by tiresias serve (exec/slurm_executor) for job {job}: the command, with one\n"
      "# task per node (srun) when it spans nodes. The attempt's variables come from\n"
      "# slurm-attempt.env, written before each release.\n"
      "set -a\n"
      ". {env}\n"
      "set +a\n"
      "export TIRESIAS_JOB_ID={job} TIRESIAS_CHECKPOINT_DIR={ckpt} TIRESIAS_DONE_FILE={done} "
      "TIRESIAS_CHECKPOINT_FILE={marker}\n"
      "printf '==== tiresias: job %s attempt %s started %s on %s (Slurm job %s): %s ====\\n' "
      "{job} \"$TIRESIAS_ATTEMPT\" \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\" \"$SLURM_JOB_NODELIST\" "
      "\"$SLURM_JOB_ID\" {text}\n"
      "if [ \"${{SLURM_JOB_NUM_NODES:-1}}\" -gt 1 ]; then\n"
      "  exec srun --kill-on-bad-exit=1 --nodes=\"$SLURM_JOB_NUM_NODES\" "
      "--ntasks=\"$SLURM_JOB_NUM_NODES\" --ntasks-per-node=1 --cpus-per-task={cpus} /bin/bash -c "
      "'export RANK=$SLURM_PROCID LOCAL_RANK=$SLURM_LOCALID NODE_RANK=$SLURM_NODEID; exec "
      "\"$@\"' tiresias-task{argv}\n"
      "fi\n"
      "# One node: the command is the batch step itself (one slurmstepd per job).\n"
      "export RANK=0 LOCAL_RANK=0 NODE_RANK=0\n"
      "exec{argv}\n",
      fmt::arg("job", spec.job.value()), fmt::arg("env", ShellQuote(AttemptFile(spec.job_dir))),
      fmt::arg("ckpt", ShellQuote((dir / "checkpoint").string())),
      fmt::arg("done", ShellQuote(DoneFilePath(dir.string()))),
      fmt::arg("marker", ShellQuote(CheckpointMarkerPath(dir.string()))),
      fmt::arg("text", ShellQuote(argv_text)), fmt::arg("cpus", opts_.cpus_per_task),
      fmt::arg("argv", argv_quoted));
  return script;
}

void SlurmExecutor::Prepare(const LaunchSpec& spec) {
  std::lock_guard lk(mu_);
  Job& j = jobs_[spec.job];
  j.id = spec.job;
  j.job_dir = spec.job_dir;
  j.spec = spec;
  if (j.slurm_id != 0 || j.submit_queued || j.retired) return;
  j.submit_queued = true;
  Enqueue({.kind = OpKind::kSubmit, .job = spec.job});
}

Status SlurmExecutor::SubmitNow(JobId id) {
  LaunchSpec spec;
  {
    std::lock_guard lk(mu_);
    Job* j = Find(id);
    if (!j || j->retired) return Status::Ok();
    if (j->slurm_id != 0) return Status::Ok();
    spec = j->spec;
  }
  auto where = [&](const std::string& m) {
    return fmt::format("job {}: sbatch: {}", id.value(), m);
  };
  if (spec.argv.empty()) return InvalidArgument(where("empty command"));
  // The job directory: its log and checkpoint directory belong to the job's user, who runs
  // the batch script; the directory itself stays serve's (searchable, not listable).
  const bool as_user = geteuid() == 0 && spec.uid && spec.gid && *spec.uid != 0;
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
  if (Status s = WriteFileAtomically(script.string(), WriteBatchScript(spec)); !s.ok()) return s;
  (void)::chmod(script.c_str(), 0755);
  // Until the first release the attempt file must exist (the script sources it).
  if (!fs::exists(AttemptFile(dir.string()))) {
    (void)WriteFileAtomically(AttemptFile(dir.string()), "TIRESIAS_ATTEMPT=0\n");
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
      "--output=" + (spec.stdout_path.empty() ? log.string() : spec.stdout_path),
      "--chdir=" + (spec.cwd.empty() ? dir.string() : spec.cwd)};
  if (!spec.stderr_path.empty()) argv.push_back("--error=" + spec.stderr_path);
  if (as_user) {
    argv.push_back(fmt::format("--uid={}", *spec.uid));
    argv.push_back(fmt::format("--gid={}", *spec.gid));
  }
  argv.insert(argv.end(), opts_.sbatch_args.begin(), opts_.sbatch_args.end());
  argv.push_back(script.string());
  // The job's environment (sbatch --export=ALL hands sbatch's to the job), without variables
  // that would change sbatch itself; the tools' own settings (SLURM_CONF) win.
  std::vector<std::string> env;
  std::map<std::string, std::string> vars;
  if (opts_.env.empty()) {
    for (char** e = environ; e && *e; ++e) {
      std::string_view kv(*e);
      vars[std::string(kv.substr(0, kv.find('=')))] = std::string(kv.substr(kv.find('=') + 1));
    }
  }
  for (const auto& [k, v] : spec.env) {
    if (k.starts_with("SBATCH_") || k.starts_with("SLURM_")) continue;
    vars[k] = v;
  }
  for (std::string_view kv : opts_.env) {
    vars[std::string(kv.substr(0, kv.find('=')))] = std::string(kv.substr(kv.find('=') + 1));
  }
  for (const auto& [k, v] : vars) env.push_back(k + "=" + v);
  auto r = RunCommand(argv, opts_.command_timeout, &env);
  if (!r.ok()) return r.status();
  if (!r->ok()) {
    if (Transient(*r)) return Unavailable(where(r->Summary()));
    return IoError(where(r->Summary()));
  }
  auto sid = ParseInt(std::string_view(r->out).substr(0, r->out.find_first_of(";\n")));
  if (!sid || *sid <= 0) return IoError(where("unexpected output '" + r->out + "'"));
  std::lock_guard lk(mu_);
  if (Job* j = Find(id)) {
    j->slurm_id = *sid;
    j->known_seq = ++op_seq_;  // older snapshots do not show it yet
    if (j->retired) Enqueue({.kind = OpKind::kCancel, .job = id});
  }
  cv_.notify_all();
  return Status::Ok();
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
    if (j.slurm_id == 0) {
      // Its held batch job is not submitted yet (Prepare's sbatch is queued, or Slurm forgot
      // the job): the worker submits it; the launch is tried again then. Never blocks.
      if (!j.submit_queued && !j.retired) {
        j.submit_queued = true;
        Enqueue({.kind = OpKind::kSubmit, .job = spec.job});
      }
      return Unavailable(where + (contact_lost_ ? ": " + contact_lost_->second
                                                : ": its held Slurm job is being submitted"));
    }
  }
  std::lock_guard lk(mu_);
  Job& j = jobs_[spec.job];
  // The attempt's variables, read by the batch script at its start.
  const SlurmNode& first = nodes_[static_cast<size_t>(placement.front().first)];
  const int master_port = 20000 + static_cast<int>((spec.job.value() * 7 + spec.attempt) % 20000);
  const std::string vars = fmt::format(
      "TIRESIAS_ATTEMPT={}\nMASTER_ADDR={}\nMASTER_PORT={}\nWORLD_SIZE={}\nTIRESIAS_GPUS={}\n"
      "TIRESIAS_NODES={}\nTIRESIAS_PLACEMENT={}\n",
      spec.attempt, ShellQuote(first.address.empty() ? first.name : first.address), master_port,
      placement.size(), spec.gpus.size(), ShellQuote(Join(names, ",")), PlacementString(placement));
  if (Status s = RemoveDoneFile(spec.job_dir); !s.ok()) return IoError(where + ": " + s.message());
  if (Status s = WriteFileAtomically(AttemptFile(spec.job_dir), vars); !s.ok()) {
    return IoError(where + ": " + s.message());
  }
  (void)::chmod(AttemptFile(spec.job_dir).c_str(), 0644);
  j.attempt = spec.attempt;
  j.phase = Phase::kLaunching;
  j.placement = placement;
  j.released_seq = 0;
  j.restart_base.reset();
  j.seen_active = j.stop_requested = j.kill_requested = false;
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
    Enqueue({.kind = OpKind::kKill, .job = j->id, .attempt = j->attempt, .sig = sig});
  } else {
    j->stop_requested = true;
    Enqueue({.kind = OpKind::kSignal, .job = j->id, .attempt = j->attempt, .sig = sig});
  }
  return Status::Ok();
}

void SlurmExecutor::Retire(JobId job) {
  std::lock_guard lk(mu_);
  Job* j = Find(job);
  if (!j || j->retired) return;
  j->retired = true;
  if (j->slurm_id != 0) Enqueue({.kind = OpKind::kCancel, .job = job});
}

bool SlurmExecutor::Adopt(JobId job, int attempt, const ProcessRef& p, const std::string& job_dir) {
  std::lock_guard lk(mu_);
  Job& j = jobs_[job];
  j.id = job;
  j.job_dir = job_dir;
  j.spec.job = job;
  j.spec.job_dir = job_dir;
  const SlurmJob* s = Seen(p.pid);
  if (!s || s->comment != Tag(job)) return false;
  j.slurm_id = s->id;
  if (j.phase == Phase::kReleased && j.attempt == attempt) return true;
  const bool released = SlurmActive(s->state) || (s->state == "PENDING" && !s->held);
  if (!released) return false;
  const auto vars = ReadAttemptFile(job_dir);
  if (auto it = vars.find("TIRESIAS_ATTEMPT");
      it == vars.end() || ParseInt(it->second) != attempt) {
    return false;  // Slurm runs another attempt than the one recorded: not this one
  }
  j.attempt = attempt;
  j.phase = Phase::kReleased;
  j.placement =
      ParsePlacement(vars.count("TIRESIAS_PLACEMENT") ? vars.at("TIRESIAS_PLACEMENT") : "");
  j.released_seq = 0;
  j.restart_base = s->restarts;
  j.seen_active = SlurmActive(s->state);
  j.stop_requested = j.kill_requested = false;
  return true;
}

std::optional<ExitInfo> SlurmExecutor::ReadExit(JobId job, int attempt,
                                                const std::string& job_dir) {
  std::lock_guard lk(mu_);
  Job& j = jobs_[job];
  j.id = job;
  j.job_dir = job_dir;
  const SlurmJob* s = Seen(j.slurm_id);
  if (!s || !SlurmEnded(s->state)) return std::nullopt;  // held or forgotten: vanished
  const auto vars = ReadAttemptFile(job_dir);
  if (auto it = vars.find("TIRESIAS_ATTEMPT");
      it != vars.end() && ParseInt(it->second) != attempt) {
    return std::nullopt;
  }
  Job probe = j;
  probe.attempt = attempt;
  return ExitOf(probe, s);
}

std::optional<ProcessRef> SlurmExecutor::FindLaunched(JobId job, int attempt,
                                                      const std::string& job_dir) {
  std::lock_guard lk(mu_);
  Job& j = jobs_[job];
  j.id = job;
  j.job_dir = job_dir;
  const SlurmJob* s = Seen(j.slurm_id);
  if (!s) return std::nullopt;
  const auto vars = ReadAttemptFile(job_dir);
  auto it = vars.find("TIRESIAS_ATTEMPT");
  if (it == vars.end() || ParseInt(it->second) != attempt) return std::nullopt;
  // Released (running, or about to): that attempt is Slurm's now. Ended: it ran and ended.
  if (SlurmActive(s->state) || SlurmEnded(s->state) || (s->state == "PENDING" && !s->held)) {
    return ProcessRef{.pid = static_cast<int>(s->id), .start_ticks = attempt};
  }
  return std::nullopt;
}

ExitInfo SlurmExecutor::ExitOf(const Job& j, const SlurmJob* s) const {
  ExitInfo e{.job = j.id, .attempt = j.attempt, .exit_code = -1, .signal = 0};
  if (!s) {
    e.reason = fmt::format("Slurm no longer knows job {}", j.slurm_id);
    e.lost = !j.stop_requested && !j.kill_requested;
    return e;
  }
  if (WIFEXITED(s->wait_status)) e.exit_code = WEXITSTATUS(s->wait_status);
  if (WIFSIGNALED(s->wait_status)) e.signal = WTERMSIG(s->wait_status);
  if (j.kill_requested && !e.known()) e.signal = SIGKILL;
  if (s->end_time > 0) e.ended_wall_ms = s->end_time * 1000;
  e.completed = DoneFileExists(j.job_dir);
  const bool stopped = j.stop_requested || j.kill_requested;
  if (s->state == "CANCELLED") {
    e.cancelled = !stopped;
    e.reason = fmt::format("Slurm job {} CANCELLED outside tiresias{}", s->id,
                           s->reason.empty() || s->reason == "None" ? "" : " (" + s->reason + ")");
  } else if (s->state == "NODE_FAIL" || s->state == "PREEMPTED" || s->state == "BOOT_FAIL") {
    e.lost = !stopped;
    e.reason = fmt::format("Slurm job {} {} on {}", s->id, s->state, Join(s->nodes, ","));
  } else if (s->state != "COMPLETED" && s->state != "FAILED") {
    e.reason = fmt::format("Slurm job {} {}{}", s->id, s->state,
                           s->reason.empty() || s->reason == "None" ? "" : " (" + s->reason + ")");
  }
  return e;
}

std::vector<ExitInfo> SlurmExecutor::Poll() {
  std::lock_guard lk(mu_);
  std::vector<ExitInfo> out;
  for (auto& [id, j] : jobs_) {
    if (j.retired) continue;
    if (j.phase == Phase::kEnded) {
      if (j.ended) out.push_back(*j.ended);
      j.ended.reset();
      j.phase = Phase::kNone;
      continue;
    }
    if (j.slurm_id == 0) continue;
    const SlurmJob* s = Seen(j.slurm_id);
    if (j.phase == Phase::kNone) {
      // Held between attempts. What happened to it outside tiresias?
      // Only snapshots that can show our last hold, or the job at all.
      if (seen_seq_ <= std::max(j.hold_sent_seq, j.known_seq)) continue;
      if (!s) {
        j.slurm_id = 0;  // forgotten by Slurm (e.g. slurmctld -c): submitted again at launch
      } else if (s->state == "CANCELLED" && !j.cancel_reported) {
        j.cancel_reported = true;
        ExitInfo e = ExitOf(j, s);
        e.cancelled = true;
        out.push_back(e);
      } else if (s->state == "PENDING" && !s->held) {
        Enqueue({.kind = OpKind::kHold, .job = id});  // Slurm must not start it on its own
        j.hold_sent_seq = op_seq_;
      } else if (SlurmActive(s->state) && s->state != "COMPLETING") {
        // Started without tiresias: stop whatever runs.
        Enqueue({.kind = OpKind::kKill, .job = id, .attempt = -1});
        j.hold_sent_seq = op_seq_;
      }
      continue;
    }
    if (j.phase != Phase::kReleased || seen_seq_ <= j.released_seq) continue;
    std::optional<ExitInfo> ended;
    if (!s) {
      ended = ExitOf(j, nullptr);
      j.slurm_id = 0;
    } else {
      if (!j.restart_base) j.restart_base = s->restarts;
      if (s->restarts > *j.restart_base) {
        // Requeued since the release: by tiresias (the kill), or by Slurm (node failure).
        ended = ExitInfo{.job = id, .attempt = j.attempt, .exit_code = -1, .signal = 0};
        if (j.kill_requested) {
          ended->signal = SIGKILL;
        } else if (!j.stop_requested) {
          ended->lost = true;
          ended->reason = fmt::format("Slurm requeued job {} ({})", s->id, s->reason);
        }
        if (!s->held) {
          Enqueue({.kind = OpKind::kHold, .job = id});
          j.hold_sent_seq = op_seq_;
        }
      } else if (SlurmActive(s->state)) {
        j.seen_active = true;
      } else if (SlurmEnded(s->state)) {
        ended = ExitOf(j, s);
        // Keep the Slurm job for the next attempt: back to pending, held.
        if (j.stop_requested || j.kill_requested || ended->lost) {
          Enqueue({.kind = OpKind::kRequeueHold, .job = id});
          j.hold_sent_seq = op_seq_;
        }
      } else if (s->held && (j.stop_requested || j.kill_requested)) {
        ended = ExitInfo{.job = id,
                         .attempt = j.attempt,
                         .exit_code = -1,
                         .signal = j.kill_requested ? SIGKILL : 0,
                         .reason = "stopped before Slurm started it"};
      }
    }
    if (ended) {
      j.phase = Phase::kNone;
      out.push_back(*ended);
    }
  }
  return out;
}

std::optional<std::vector<NodeReport>> SlurmExecutor::PollNodes() {
  std::lock_guard lk(mu_);
  if (seen_seq_ <= reported_nodes_seq_) return std::nullopt;
  reported_nodes_seq_ = seen_seq_;
  std::map<std::string, const SlurmNode*> state;
  for (const SlurmNode& n : node_state_) state[n.name] = &n;
  std::vector<NodeReport> out;
  for (const SlurmNode& n : nodes_) {
    NodeReport r{.name = n.name, .gpus = n.gpus};
    if (auto it = state.find(n.name); it != state.end()) {
      r.state = it->second->state;
      for (const auto& f : it->second->flags) r.state += "+" + f;
      r.usable = it->second->Usable();
      r.reason = it->second->reason;
    } else {
      r.state = "missing";
      r.usable = false;
      r.reason = "not in sinfo";
    }
    out.push_back(std::move(r));
  }
  // Who holds GPUs: jobs outside tiresias, and what Slurm holds for ours beyond the core's
  // allocation (a job asks every node for its largest per-node count).
  std::map<int64_t, const Job*> ours;
  for (const auto& [id, j] : jobs_) {
    if (j.slurm_id != 0 && (j.phase == Phase::kReleased || j.phase == Phase::kLaunching)) {
      ours[j.slurm_id] = &j;
    }
  }
  const std::string prefix = fmt::format("tiresias:{}:", opts_.tag);
  for (const auto& [sid, s] : seen_) {
    if (!SlurmActive(s.state)) continue;
    auto mine = ours.find(sid);
    for (size_t k = 0; k < s.nodes.size() && k < s.node_gpus.size(); ++k) {
      auto idx = node_index_.find(s.nodes[k]);
      if (idx == node_index_.end()) continue;
      int extra = s.node_gpus[k];
      if (mine != ours.end()) {
        for (const auto& [n, g] : mine->second->placement) {
          if (n == idx->second) extra -= g;
        }
      }
      if (extra <= 0) continue;
      NodeReport& r = out[static_cast<size_t>(idx->second)];
      r.gpus_outside += extra;
      r.outside_jobs.push_back(
          fmt::format("slurm {} ({}, {} GPU{}{})", sid, s.user, extra, extra == 1 ? "" : "s",
                      s.comment.starts_with(prefix) ? ", tiresias's beyond its allocation" : ""));
    }
  }
  return out;
}

std::string SlurmExecutor::EngineState(JobId job) const {
  std::lock_guard lk(mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end() || it->second.slurm_id == 0) return "";
  const SlurmJob* s = Seen(it->second.slurm_id);
  if (!s) return fmt::format("Slurm job {}", it->second.slurm_id);
  std::string out = fmt::format("Slurm job {} {}", s->id, s->state);
  if (s->state == "PENDING" && !s->reason.empty()) out += " (" + s->reason + ")";
  if (!s->nodes.empty()) out += " on " + Join(s->nodes, ",");
  return out;
}

void SlurmExecutor::PollerLoop() {
  auto next_sinfo = std::chrono::steady_clock::now();
  auto backoff = opts_.poll_interval;
  while (true) {
    uint64_t seq;
    {
      std::lock_guard lk(mu_);
      if (stop_) return;
      seq = ++op_seq_;
    }
    const auto began = std::chrono::steady_clock::now();
    auto jobs = Squeue();
    static const bool trace = std::getenv("TIRESIAS_SLURM_TRACE") != nullptr;
    if (trace) {
      std::cerr << fmt::format("tiresias slurm poll: squeue {} jobs in {} ms\n",
                               jobs.ok() ? jobs->size() : 0,
                               std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now() - began)
                                   .count());
    }
    std::optional<StatusOr<std::vector<SlurmNode>>> nodes;
    if (jobs.ok() && std::chrono::steady_clock::now() >= next_sinfo) {
      nodes = Sinfo();
      next_sinfo = std::chrono::steady_clock::now() + opts_.node_poll_interval;
    }
    std::unique_lock lk(mu_);
    if (jobs.ok()) {
      std::map<int64_t, SlurmJob> seen;
      for (SlurmJob& s : *jobs) seen[s.id] = std::move(s);
      seen_.swap(seen);
      seen_seq_ = seq;
      if (nodes && nodes->ok()) node_state_ = std::move(**nodes);
      backoff = opts_.poll_interval;
    } else {
      backoff = std::min(opts_.max_backoff, backoff * 2);
    }
    NoteContact(jobs.status());
    cv_.notify_all();
    cv_.wait_for(lk, jobs.ok() ? opts_.poll_interval : backoff,
                 [&] { return stop_ || poke_poller_; });
    poke_poller_ = false;
  }
}

void SlurmExecutor::WorkerLoop() {
  auto backoff = std::chrono::milliseconds(100);
  auto retry_at = std::chrono::steady_clock::now();
  while (true) {
    std::vector<Op> batch;
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return stop_ || !ops_.empty(); });
      if (stop_) return;
      if (std::chrono::steady_clock::now() < retry_at) {
        cv_.wait_until(lk, retry_at, [&] { return stop_; });
        if (stop_) return;
      }
      // Everything queued, but at most kSubmitsPerBatch submissions and kLaunchesPerBatch
      // launches (one `scontrol update` each, ~10 ms, seconds when slurmctld is busy): a burst
      // of new jobs must not hold up the launches queued behind it, nor a burst of launches
      // the checkpoint signals and kills (preemptions) queued behind them.
      constexpr int kSubmitsPerBatch = 32, kLaunchesPerBatch = 32;
      int submits = 0, launches = 0;
      for (auto it = ops_.begin(); it != ops_.end();) {
        if ((it->kind == OpKind::kSubmit && ++submits > kSubmitsPerBatch) ||
            (it->kind == OpKind::kLaunch && ++launches > kLaunchesPerBatch)) {
          ++it;
          continue;
        }
        batch.push_back(*it);
        it = ops_.erase(it);
      }
      running_ops_ = static_cast<int>(batch.size());
    }
    std::vector<Op> retry = RunBatch(std::move(batch));
    std::lock_guard lk(mu_);
    running_ops_ = 0;
    if (!retry.empty()) {
      ops_.insert(ops_.begin(), retry.begin(), retry.end());
      retry_at = std::chrono::steady_clock::now() + backoff;
      backoff = std::min(opts_.max_backoff, backoff * 2);
    } else {
      backoff = std::chrono::milliseconds(100);
    }
    poke_poller_ = true;
    cv_.notify_all();
  }
}

std::vector<SlurmExecutor::Op> SlurmExecutor::RunBatch(std::vector<Op> ops) {
  std::vector<Op> retry;
  Status contact = Status::Ok();
  // Runs `argv`; false (and the ops go back to the queue) when slurmctld is unreachable.
  auto run = [&](const std::vector<std::string>& argv, StatusOr<CommandResult>* result = nullptr,
                 size_t items = 1) {
    auto r = Slurm(argv, items);
    if (result) *result = r;
    if (!r.ok() && r.status().code() == StatusCode::kUnavailable) {
      contact = r.status();
      return false;
    }
    return true;
  };
  auto by_kind = [&](OpKind k) {
    std::vector<Op> out;
    for (const Op& o : ops) {
      if (o.kind == k) out.push_back(o);
    }
    return out;
  };
  auto slurm_id = [&](JobId id) {
    std::lock_guard lk(mu_);
    const Job* j = jobs_.count(id) ? &jobs_.at(id) : nullptr;
    return j ? j->slurm_id : 0;
  };
  auto state_of = [&](int64_t sid) {
    std::lock_guard lk(mu_);
    const SlurmJob* s = Seen(sid);
    return s ? std::make_pair(s->state, s->held) : std::make_pair(std::string(), false);
  };
  // A command over several jobs: on a failure other than contact, each job alone (errors
  // such as "already completed" are the poller's to see).
  auto each = [&](std::vector<std::string> head, const std::vector<int64_t>& ids, bool comma,
                  const std::vector<Op>& those) {
    if (ids.empty()) return;
    std::vector<std::string> argv = head;
    if (comma) {
      argv.push_back(JoinIds(ids, ','));
    } else {
      for (int64_t id : ids) argv.push_back(std::to_string(id));
    }
    StatusOr<CommandResult> r = IoError("");
    if (!run(argv, &r, ids.size())) {
      retry.insert(retry.end(), those.begin(), those.end());
      return;
    }
    if (r.ok() && r->ok()) return;
    for (size_t k = 0; k < ids.size() && ids.size() > 1; ++k) {
      std::vector<std::string> one = head;
      one.push_back(std::to_string(ids[k]));
      if (!run(one)) {
        retry.push_back(those[k]);
      }
    }
  };
  // The ops of `kind` on jobs Slurm knows, as one command over their ids; how many.
  auto each_known = [&](OpKind kind, std::vector<std::string> head, bool comma) {
    std::vector<int64_t> ids;
    std::vector<Op> those;
    for (const Op& o : by_kind(kind)) {
      if (int64_t sid = slurm_id(o.job)) {
        ids.push_back(sid);
        those.push_back(o);
      }
    }
    each(std::move(head), ids, comma, those);
    return ids.size();
  };

  // A signal or kill queued for an attempt that has ended or been superseded since (a retry
  // after slurmctld was unreachable) must not reach the job's next state: a KILL to a job
  // that is pending again cancels it in Slurm. attempt -1: whatever Slurm started on its own.
  auto current = [&](const Op& o) {
    std::lock_guard lk(mu_);
    const Job* j = Find(o.job);
    if (!j || j->retired) return false;
    if (o.attempt < 0) return j->phase == Phase::kNone;
    return j->attempt == o.attempt &&
           (j->phase == Phase::kLaunching || j->phase == Phase::kReleased);
  };

  // With TIRESIAS_SLURM_TRACE set, each batch's parts and their times go to stderr.
  static const bool trace = std::getenv("TIRESIAS_SLURM_TRACE") != nullptr;
  auto t0 = std::chrono::steady_clock::now();
  std::string timing;
  auto lap = [&](const char* what, size_t n) {
    if (!trace || n == 0) return;
    const auto t = std::chrono::steady_clock::now();
    timing += fmt::format(" {} {} in {} ms;", n, what,
                          std::chrono::duration_cast<std::chrono::milliseconds>(t - t0).count());
    t0 = t;
  };
  // 1. Holds (pending jobs Slurm must not start on its own) and requeue-holds.
  {
    (void)each_known(OpKind::kHold, {"scontrol", "uhold"}, true);
    const size_t requeued = each_known(OpKind::kRequeueHold, {"scontrol", "requeuehold"}, true);
    lap("holds", by_kind(OpKind::kHold).size() + requeued);
  }
  // 2. Signals: to the whole batch step of a one-node job (the command and its children), to
  // the srun tasks of a multi-node one (not to srun itself, which would forward it again); a
  // job that has not started yet is held instead.
  {
    std::map<std::pair<int, bool>, std::pair<std::vector<int64_t>, std::vector<Op>>> by_sig;
    std::vector<int64_t> hold;
    std::vector<Op> hold_ops;
    for (const Op& o : by_kind(OpKind::kSignal)) {
      const int64_t sid = slurm_id(o.job);
      if (!sid || !current(o)) continue;
      if (state_of(sid).first == "PENDING") {
        hold.push_back(sid);
        hold_ops.push_back(o);
        continue;
      }
      bool one_node;
      {
        std::lock_guard lk(mu_);
        const Job* j = Find(o.job);
        one_node = !j || j->placement.size() <= 1;
      }
      auto& v = by_sig[{o.sig, one_node}];
      v.first.push_back(sid);
      v.second.push_back(o);
    }
    for (const auto& [key, v] : by_sig) {
      const char* abbrev = sigabbrev_np(key.first);
      // --state=RUNNING: Slurm itself skips a job that is not running (any more) by now.
      std::vector<std::string> head = {
          "scancel", "--quiet", "--state=RUNNING",
          "--signal=" + (abbrev ? std::string(abbrev) : std::to_string(key.first))};
      if (key.second) head.push_back("--full");
      each(head, v.first, false, v.second);
    }
    each({"scontrol", "uhold"}, hold, true, hold_ops);
    lap("signals", by_kind(OpKind::kSignal).size());
  }
  // 3. Kills: the grace period is over. Everything of the job is killed, then the job goes
  // back to pending, held (or, if it never started, is simply held).
  {
    std::vector<int64_t> active, pending;
    std::vector<Op> active_ops, pending_ops;
    for (const Op& o : by_kind(OpKind::kKill)) {
      const int64_t sid = slurm_id(o.job);
      if (!sid || !current(o)) continue;
      const auto [state, held] = state_of(sid);
      if (state == "PENDING") {
        if (!held) {
          pending.push_back(sid);
          pending_ops.push_back(o);
        }
      } else {
        active.push_back(sid);
        active_ops.push_back(o);
      }
    }
    // --state=RUNNING: a KILL to a job that is pending (our snapshot is older) cancels it.
    each({"scancel", "--quiet", "--state=RUNNING", "--signal=KILL", "--full"}, active, false,
         active_ops);
    each({"scontrol", "requeuehold"}, active, true, active_ops);
    each({"scontrol", "uhold"}, pending, true, pending_ops);
    lap("kills", active.size() + pending.size());
  }
  // 4. Launches: pin each (one update per job, a few at a time), then release them all at once.
  {
    struct Pin {
      Op op;
      int64_t sid;
      std::vector<std::string> argv;
      Status status = IoError("not run");  // of running the command
      CommandResult out;
    };
    struct Todo {
      Op op;
      int64_t sid;
      std::vector<std::pair<int, int>> placement;
    };
    std::vector<Todo> todo;
    std::vector<int64_t> ended;
    std::vector<Op> ended_ops;
    for (const Op& o : by_kind(OpKind::kLaunch)) {
      Todo t{.op = o};
      {
        std::lock_guard lk(mu_);
        Job* j = Find(o.job);
        if (!j || j->retired || j->phase != Phase::kLaunching || j->attempt != o.attempt) continue;
        t.placement = j->placement;
        t.sid = j->slurm_id;
      }
      const auto [state, held] = state_of(t.sid);
      if (SlurmActive(state)) {  // still being stopped (e.g. started outside tiresias): later
        retry.push_back(o);
        continue;
      }
      if (SlurmEnded(state)) {  // the previous attempt ended in a final Slurm state
        ended.push_back(t.sid);
        ended_ops.push_back(o);
      }
      todo.push_back(std::move(t));
    }
    // Those go back to pending, held: one command for all (a preempted job that checkpointed
    // and exited is COMPLETED; after a burst of preemptions there are many).
    const size_t retried = retry.size();
    each({"scontrol", "requeuehold"}, ended, true, ended_ops);
    std::set<JobId> unreachable;  // their requeue-hold waits for slurmctld: so does the pin
    for (size_t k = retried; k < retry.size(); ++k) unreachable.insert(retry[k].job);
    lap("requeue-holds", ended.size());
    std::vector<Pin> pins;
    for (const Todo& t : todo) {
      if (unreachable.contains(t.op.job)) continue;
      const Op& o = t.op;
      const int64_t sid = t.sid;
      const auto& placement = t.placement;
      int most = 0;
      std::vector<std::string> names;
      for (const auto& [n, g] : placement) {
        most = std::max(most, g);
        names.push_back(nodes_[static_cast<size_t>(n)].name);
      }
      const int n = static_cast<int>(placement.size());
      pins.push_back(
          {o,
           sid,
           {"scontrol", "update", fmt::format("JobId={}", sid), fmt::format("NumNodes={}-{}", n, n),
            fmt::format("NumTasks={}", n), fmt::format("NumCPUs={}", n * opts_.cpus_per_task),
            fmt::format("TresPerNode=gres:gpu:{}", most), "ReqNodeList=" + Join(names, ","),
            "StartTime=now"}});
    }
    constexpr size_t kParallel = 4;
    for (size_t first = 0; first < pins.size(); first += kParallel) {
      std::vector<std::thread> threads;
      for (size_t k = first; k < std::min(pins.size(), first + kParallel); ++k) {
        threads.emplace_back([&, k] {
          auto r = Slurm(pins[k].argv);
          pins[k].status = r.status();
          if (r.ok()) pins[k].out = *r;
        });
      }
      for (auto& t : threads) t.join();
    }
    lap("pins", pins.size());
    std::vector<int64_t> release;
    std::vector<Op> release_ops;
    for (Pin& p : pins) {
      if (p.status.code() == StatusCode::kUnavailable) {
        contact = p.status;
        retry.push_back(p.op);
        continue;
      }
      if (!p.status.ok() || !p.out.ok()) {
        // Slurm refused the placement: the attempt fails, and says why.
        std::lock_guard lk(mu_);
        if (Job* j = Find(p.op.job); j && j->attempt == p.op.attempt) {
          j->phase = Phase::kEnded;
          j->ended = ExitInfo{.job = p.op.job,
                              .attempt = p.op.attempt,
                              .exit_code = -1,
                              .signal = 0,
                              .reason = "launch failed: scontrol update: " +
                                        (p.status.ok() ? p.out.Summary() : p.status.message())};
        }
        continue;
      }
      release.push_back(p.sid);
      release_ops.push_back(p.op);
    }
    if (!release.empty()) {
      StatusOr<CommandResult> r = IoError("");
      if (!run({"scontrol", "release", JoinIds(release, ',')}, &r)) {
        // The pins are done; the release is repeated (an update again is harmless).
        retry.insert(retry.end(), release_ops.begin(), release_ops.end());
      } else {
        if (!r.ok() || !r->ok()) {
          for (int64_t sid : release) (void)run({"scontrol", "release", std::to_string(sid)});
        }
        lap("released", release.size());
        std::lock_guard lk(mu_);
        const uint64_t seq = ++op_seq_;
        for (const Op& o : release_ops) {
          if (Job* j = Find(o.job); j && j->phase == Phase::kLaunching && j->attempt == o.attempt) {
            j->phase = Phase::kReleased;
            j->released_seq = seq;
          }
        }
      }
    }
  }
  // 5. Submissions, a few at a time (sbatch takes ~15 ms, mostly waiting for slurmctld),
  // after the pins and releases: a launch waits for no unrelated submission.
  {
    const std::vector<Op> submits = by_kind(OpKind::kSubmit);
    std::vector<Status> result(submits.size());
    constexpr size_t kParallel = 4;
    for (size_t first = 0; first < submits.size(); first += kParallel) {
      std::vector<std::thread> threads;
      for (size_t k = first; k < std::min(submits.size(), first + kParallel); ++k) {
        threads.emplace_back([&, k] { result[k] = SubmitNow(submits[k].job); });
      }
      for (auto& t : threads) t.join();
    }
    std::lock_guard lk(mu_);
    for (size_t k = 0; k < submits.size(); ++k) {
      Job* j = Find(submits[k].job);
      if (result[k].code() == StatusCode::kUnavailable) {
        contact = result[k];
        retry.push_back(submits[k]);
      } else if (j) {
        j->submit_queued = false;
        if (!result[k].ok()) j->submit_error = result[k].message();
      }
    }
    cv_.notify_all();  // Launch may wait for a submission
    lap("sbatch", submits.size());
  }
  // 6. Cancels of retired jobs.
  (void)each_known(OpKind::kCancel, {"scancel", "--quiet"}, false);
  if (trace && !timing.empty()) std::cerr << "tiresias slurm batch:" << timing << "\n";
  std::lock_guard lk(mu_);
  NoteContact(contact);
  ++op_seq_;
  return retry;
}

}  // namespace tiresias
