// The live scheduler's loop: scheduling passes, preemption and grace (see live_scheduler.h).
// Launches are in live_scheduler_launch.cc, users' requests (submit, cancel, hold, requeue)
// in live_scheduler_requests.cc, what happens when a process ends in
// live_scheduler_exits.cc, recovery in live_scheduler_recovery.cc, capacity (node reports,
// GPUs of stopping processes) in live_scheduler_capacity.cc, the API views in
// live_scheduler_views.cc (logs: live_scheduler_logs.cc). Here too: how messages name nodes
// and jobs (NodeNames, JobRefOf).
#include "live/live_scheduler.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <utility>

#include "common/strings.h"
#include "live/journal_replay.h"

namespace tiresias {

LiveScheduler::LiveScheduler(ServeConfig cfg, std::unique_ptr<Store> store,
                             std::unique_ptr<Executor> executor, WallClock clock)
    : cfg_(std::move(cfg)),
      store_(std::move(store)),
      executor_(std::move(executor)),
      clock_(std::move(clock)) {
  store_->SetCommitSink([](const std::string& line) { std::cout << line << std::flush; });
}

Time LiveScheduler::Now() {
  last_now_ = std::max(last_now_, clock_() - store_->epoch_ms());
  return last_now_;
}

void LiveScheduler::Warn(const std::string& m) {
  std::cerr << "tiresias serve: " << m << "\n";
}

std::string LiveScheduler::JobsDir() const {
  return (std::filesystem::path(cfg_.state_dir) / "tiresias-jobs").string();
}

std::string LiveScheduler::JobDir(JobId id) const {
  return (std::filesystem::path(JobsDir()) / id.str()).string();
}

std::vector<NodeSpec> LiveScheduler::ClusterNodes() const {
  if (!cfg_.nodes.empty()) return cfg_.nodes;
  return {NodeSpec{.name = "local", .gpus = static_cast<int>(cfg_.gpu_devices.size())}};
}

LaunchSpec LiveScheduler::PrepareSpec(const JobRecord& r) const {
  LaunchSpec spec{.job = r.id,
                  .name = r.name,
                  .attempt = r.attempt,
                  .argv = r.argv,
                  .cwd = r.cwd,
                  .env = r.env,
                  .job_dir = JobDir(r.id),
                  .tasks_per_gpu = r.tasks_per_gpu};
  if (r.uid >= 0 && r.gid >= 0) {
    spec.uid = static_cast<uint32_t>(r.uid);
    spec.gid = static_cast<uint32_t>(r.gid);
  }
  if (r.array_id != JobId()) {  // a task of an array (names reserved: Validate refuses them)
    spec.env.emplace_back("TIRESIAS_ARRAY_JOB_ID", r.array_id.str());
    spec.env.emplace_back("TIRESIAS_ARRAY_TASK_ID", std::to_string(r.array_index));
  }
  if (!r.output.empty()) spec.stdout_path = OutputPath(r, false);
  if (!r.error.empty()) spec.stderr_path = OutputPath(r, true);
  return spec;
}

void LiveScheduler::RetireEnded(const std::vector<JobId>& ids) {
  for (JobId id : ids) {
    auto it = records_.find(id);
    if (it != records_.end() && IsTerminal(it->second.state) && !procs_.contains(id)) {
      executor_->Retire(id);
      NoteEndedDir(id);
    }
  }
}

JobSpec LiveScheduler::SpecOf(const JobRecord& r) const {
  return SpecOfRecord(r);
}

Status LiveScheduler::Committed(Store::Txn& txn) {
  Status s = txn.Commit();
  if (s.ok() || !txn.committed()) return s;
  // Committed, and only the journal's head file failed after it (a review): the journal holds
  // the change, which a restart replays, so this serve applies it too (it said "failed", and
  // a resubmitted job ran twice after the restart).
  Warn(s.message());
  return Status::Ok();
}

Status LiveScheduler::Note(const Event& e) {
  auto r = store_->AppendEvent(e);
  if (!r.ok()) return r.status();
  if (cfg_.log_events && e.kind != EventKind::kTick) {  // printed once committed
    const auto wall =
        std::chrono::system_clock::time_point(std::chrono::milliseconds(e.t + store_->epoch_ms()));
    store_->OnCommit(fmt::format(
        "{:%FT%T}Z {:<8} {:<9} {}\n", std::chrono::floor<std::chrono::milliseconds>(wall),
        ToString(e.kind), e.job == JobId() ? "" : fmt::format("job {}", JobRefOf(e.job)),
        Describe(e, store_->epoch_ms())));
  }
  return Status::Ok();
}

Status LiveScheduler::SaveRows(const std::vector<JobId>& ids) {
  for (JobId id : ids) {
    if (Status s = store_->UpdateJob(records_.at(id)); !s.ok()) return s;
  }
  return Status::Ok();
}

const JobRecord* LiveScheduler::DependedOn(const Dependency& d) const {
  auto t = records_.find(d.job);
  if (t == records_.end() || d.task < 0) return t == records_.end() ? nullptr : &t->second;
  // One task of an array: among the records from the array's id on with that array id (tasks
  // take consecutive ids).
  for (auto it = t; it != records_.end() && it->second.array_id == d.job; ++it) {
    if (it->second.array_index == d.task) return &it->second;
  }
  return nullptr;
}

const JobRecord* LiveScheduler::SingletonBlocker(const JobRecord& rec) const {
  auto it = open_names_.find({rec.user, rec.name});
  if (it == open_names_.end() || it->second.empty() || *it->second.begin() >= rec.id) {
    return nullptr;
  }
  return &records_.at(*it->second.begin());
}

std::string LiveScheduler::WhyIneligible(const JobRecord& rec, std::string* never) const {
  // Every dependency is looked at: one that can never be met ends the job, whichever others
  // it waits for (Slurm's kill_invalid_depend; `singleton,afterok:FAILED` waited).
  bool waits = false;
  for (const Dependency& d : rec.dependencies) {
    if (d.kind == Dependency::Kind::kSingleton) {
      waits = waits || SingletonBlocker(rec);
      continue;
    }
    const JobRecord* on = DependedOn(d);
    if (!on) continue;  // checked at submit; a job is never removed
    auto t = records_.find(on->id);
    // An array's id stands for all its tasks (Slurm's rule): the records from it on with that
    // array id (tasks take consecutive ids); ID_INDEX for one task alone.
    const bool array = d.task < 0 && t->second.array_id == d.job;
    bool all_ended = true, any_failed = false;
    const JobRecord* failed = nullptr;  // the first task that ended other than finished
    for (auto it = t; it != records_.end() && (it == t || (array && it->second.array_id == d.job));
         ++it) {
      const LiveState st = it->second.state;
      all_ended = all_ended && IsTerminal(st);
      if (IsTerminal(st) && st != LiveState::kFinished && !any_failed) {
        any_failed = true;
        failed = &it->second;
      }
    }
    const bool met = d.kind == Dependency::Kind::kAfterAny  ? all_ended
                     : d.kind == Dependency::Kind::kAfterOk ? all_ended && !any_failed
                                                            : all_ended && any_failed;
    if (met) continue;
    waits = true;
    if (never && d.kind == Dependency::Kind::kAfterOk && any_failed) {
      *never = fmt::format("dependency {} can never be met: job {} ended {}", ToString(d),
                           array || d.task >= 0
                               ? fmt::format("{}_{}", d.job.value(), failed->array_index)
                               : std::to_string(d.job.value()),
                           ToString(failed->state));
    } else if (never && d.kind == Dependency::Kind::kAfterNotOk && all_ended) {
      *never = fmt::format("dependency {} can never be met: job {} {}", ToString(d),
                           DependencyTarget(d), array ? "finished, every task of it" : "finished");
    }
    if (never && !never->empty()) return "dependency";
  }
  if (waits) return "dependency";
  return rec.Held() ? "held" : "";
}

JobRecord& LiveScheduler::AddRecord(JobRecord rec) {
  total_preemptions_ += rec.preemptions;
  const JobId id = rec.id;
  JobRecord& r = records_.insert_or_assign(id, std::move(rec)).first->second;
  if (IsTerminal(r.state)) {
    ++ended_count_[r.state];
  } else {
    open_[id] = &r;
    open_names_[{r.user, r.name}].insert(id);
  }
  return r;
}

std::vector<JobRecord*> LiveScheduler::OpenRecords() const {
  std::vector<JobRecord*> out;
  out.reserve(open_.size());
  for (const auto& [id, r] : open_) out.push_back(r);
  return out;
}

void LiveScheduler::UpdateEligibility(Time now, std::vector<JobId>& changed) {
  if (!eligibility_dirty_) return;
  eligibility_dirty_ = false;
  // An array's limit bounds its tasks that run or may start: the running ones count first
  // (also one past its time limit whose process is stopping: it ends at its exit), then
  // waiting ones are made eligible in index order (records_ is in id order) while the count
  // is under the limit; the rest are held with reason "array limit".
  std::map<JobId, int> active;
  const std::vector<JobRecord*> open = OpenRecords();
  for (const JobRecord* rec : open) {
    if (rec->array_limit <= 0) continue;
    const Job* cj = sched_->Find(rec->id);
    if ((cj && cj->running()) || rec->timing_out) ++active[rec->array_id];
  }
  for (JobRecord* r : open) {
    JobRecord& rec = *r;
    const JobId id = rec.id;
    if (IsTerminal(rec.state)) continue;
    const Job* cj = sched_->Find(id);
    if (!cj || (cj->state != JobState::kPending && cj->state != JobState::kHeld)) continue;
    std::string never;
    std::string why = WhyIneligible(rec, &never);
    if (!never.empty()) {  // ends the job, which may settle the dependencies of others
      Journal({.t = now, .kind = EventKind::kCancel, .job = id, .detail = {{"why", never}}});
      MustOk(sched_->Cancel(id, now));
      to_launch_.erase(id);
      EndRecord(rec, LiveState::kCancelled, now, never);
      changed.push_back(id);
      continue;
    }
    const bool have = cj->state == JobState::kPending;
    bool want = why.empty();
    if (want && rec.array_limit > 0) {
      if (active[rec.array_id] >= rec.array_limit) {
        want = false;
        why = "array limit";
      } else {
        ++active[rec.array_id];
      }
    }
    if (want == have) continue;
    Journal({.t = now,
             .kind = EventKind::kEligible,
             .job = id,
             .detail = {{"eligible", want}, {"why", want ? "" : why}}});
    MustOk(sched_->SetEligible(id, want, now));
    changed.push_back(id);
  }
}

void LiveScheduler::ApplyAction(const Action& a, Time now, std::vector<JobId>& changed) {
  JobRecord& rec = records_.at(a.job);
  changed.push_back(a.job);
  rec.message = a.reason();
  if (a.kind == Action::Kind::kStart) {
    Journal(EventOf(a, now));
    to_launch_[a.job] = a.alloc.Gpus();
    rec.state = LiveState::kStarting;
    return;
  }
  Journal(EventOf(a, now));
  if (to_launch_.erase(a.job) || !procs_.contains(a.job)) {
    rec.state = LiveState::kPending;  // never launched: nothing to stop, nothing counted
    return;
  }
  ++rec.preemptions;  // the times its process was told to stop
  ++total_preemptions_;
  rec.stop_preempted = true;
  metrics_.CountPreemption();
  rec.state = LiveState::kPreempting;
}

void LiveScheduler::StopProcess(JobId id, Time now, int sig) {
  auto it = procs_.find(id);
  if (it == procs_.end()) return;  // it ended meanwhile
  Proc& p = it->second;
  if (p.stopping) return;
  p.stopping = true;
  JobRecord& rec = records_.at(id);
  if (rec.stop_sent >= 0 && rec.pid == p.ref.pid) {
    // Told to stop by a serve before a restart: its stop goes on as it began, without a
    // second signal (it may be checkpointing), and it is killed at the first deadline. (An
    // engine that queues signals may have lost it with that serve: sent again.) A stop begun
    // before schema 7 has no deadline kept: its serve's grace (meta kGraceKey) gives it.
    if (rec.stop_deadline < 0) {
      rec.stop_deadline = rec.stop_sent + grace_before_;
      unsaved_.insert(id);
    }
    p.kill_at = rec.stop_deadline;
    p.loss = LossOfStop(id);
    if (!executor_->SignalsAtOnce()) (void)executor_->Signal(p.ref, sig);
    return;
  }
  p.kill_at = now + cfg_.grace;
  p.loss = LossOfStop(id);
  (void)executor_->Signal(p.ref, sig);  // NotFound: already gone, Poll reports it
  rec.stop_sent = now;
  rec.stop_deadline = p.kill_at;
  unsaved_.insert(id);  // saved by this step's transaction, or the next one's
}

Service LiveScheduler::LossOfStop(JobId id) const {
  const Job* cj = sched_->Find(id);
  return cj ? cj->stop_loss : 0;
}

void LiveScheduler::PreemptProcess(JobId id, Time now) {
  auto it = procs_.find(id);
  const Job* cj = sched_->Find(id);
  const auto rec = records_.find(id);
  if (it == procs_.end() || it->second.stopping || !cj || rec == records_.end() ||
      rec->second.stop_at_checkpoint <= 0 || cj->ckpt_at < cj->progress_start ||
      now - cj->ckpt_at > rec->second.stop_at_checkpoint) {
    StopProcess(id, now, cfg_.preempt_signal);
    return;
  }
  // It opted in and checkpointed moments ago: its GPUs are free as soon as it is gone.
  Proc& p = it->second;
  p.stopping = p.killed = p.at_checkpoint = true;
  p.kill_at = kNever;
  p.gone_by = now + Seconds(1);
  p.loss = cj->stop_loss;
  (void)executor_->Signal(p.ref, SIGKILL);
  // (No stop_sent: at_checkpoint is not kept, and a restart that found it still going would
  // count the kill's end as a kill that lost work; it signals it again instead.)
}

void LiveScheduler::Journal(const Event& e) {
  MustOk(Note(e));
}

void LiveScheduler::MustOk(const Status& s) {
  if (s.ok()) return;
  Warn("cannot journal (" + s.message() +
       "); stopping so that a restart replays a consistent "
       "state");
  if (cfg_.disk) cfg_.disk->Release();  // a full disk: room for the restart
  std::abort();
}

int64_t LiveScheduler::Paused(Time now) {
  // A grace period still ends (a kill needs no journal row), ended jobs' directories due for
  // removal go (their rows later), and the step is tried again.
  if (!std::exchange(paused_, true)) pause_began_ = now;
  KillOverdue(now);
  const size_t kept = unjournalled_.size();
  // What is due frees room; not while the journal is away from its path (a state restored
  // from a backup there may still run the jobs of those directories).
  if (store_->InPlace().ok()) RemoveEndedDirs(now, /*journal_now=*/false);
  // Not every retry (it may wait), but while a stop's record waits (StopProcess).
  if (unjournalled_.size() > kept || !unsaved_.empty()) FlushOutsideStep();
  return now + kPausedRetryMs + store_->epoch_ms();
}

void LiveScheduler::PublishWarnings() {
  std::vector<std::string> w;
  if (cfg_.disk && (cfg_.disk->low() || cfg_.disk->full())) w.push_back(cfg_.disk->Summary());
  if (!journal_blocked_.empty()) w.push_back(journal_blocked_);
  std::lock_guard lk(warnings_mu_);
  warnings_ = std::move(w);
}

int64_t LiveScheduler::Step() {
  std::lock_guard lk(mu_);
  const Time now = Now();
  if (cfg_.disk) {
    if (auto c = cfg_.disk->Check(); c.changed) Warn(c.message);
    // No room to journal a decision: make none (jobs run on), and look again shortly.
    if (cfg_.disk->full()) {
      PublishWarnings();
      return Paused(now);
    }
  }
  std::vector<JobId> changed, stop;
  {
    const int64_t changes_before = store_->Changes();
    Store::Txn txn(*store_);
    if (!txn.begun().ok()) {
      // Another process holds the journal's write lock past the busy timeout, or the journal
      // is no longer at its path (Store::InPlace: found by a tester, a state directory removed
      // under serve went unnoticed and every decision after it was lost): the same as no
      // room, decide nothing now and look again shortly.
      const bool moved = txn.begun().code() == StatusCode::kUnavailable;
      std::string why =
          moved ? "the journal is no longer at its path in the state directory (removed, "
                  "renamed or replaced): serve makes no decision and takes no request until it "
                  "is back; running jobs go on"
                : "the journal is locked by another process: serve makes no decision until it "
                  "can write it";
      if (journal_blocked_ != why) {
        Warn(moved ? txn.begun().message()
                   : "cannot begin a journal transaction (" + txn.begun().message() +
                         "): serve makes no decision until it can (another process holds "
                         "tiresias.db?)");
      }
      journal_blocked_ = std::move(why);
      PublishWarnings();
      return Paused(now);
    }
    if (!journal_blocked_.empty()) Warn("the journal can be written again: serve goes on");
    journal_blocked_.clear();
    PublishWarnings();
    if (std::exchange(paused_, false)) DrainWaitingToNow(now, pause_began_, "serve was paused");
    // Capacity before exits: a run lost with its node is then already an eviction.
    if (auto nodes = executor_->PollNodes()) ApplyNodes(*nodes, now, changed, stop);
    for (const ExitInfo& e : executor_->Poll()) HandleExit(e, now, changed);
    PollCheckpoints(now);
    PinEngineWaits(now, changed);
    SyncEngineHolds(now, changed);
    if (!procs_.empty() && now - alive_stamped_ >= kAliveStampMs) {
      MustOk(store_->SetMeta(kAliveKey, std::to_string(now)));  // all tracked ones alive now
      alive_stamped_ = now;
    }
    UpdateEligibility(now, changed);
    time_limit_due_ = EnforceTimeLimits(now, changed);
    removal_due_ = RemoveEndedDirs(now);
    SyncStoppingGpus(now, changed, stop);  // the GPUs of processes still stopping, for the pass
    RelocateParked(now, changed);
    if (dirty_ || now >= sched_->NextWakeup()) {
      MustOk(Note({.t = now, .kind = EventKind::kTick}));
      const auto pass_start = std::chrono::steady_clock::now();
      const std::vector<Action> actions = sched_->Schedule(now);
      metrics_.ObservePass(SecondsSince(pass_start));
      for (const Transition& t : sched_->TakeTransitions()) {
        Journal(EventOf(t.job, t.at, t.from_queue, t.to_queue));
        metrics_.CountTransition(/*promotion=*/t.to_queue < t.from_queue);
      }
      for (const Action& a : actions) {
        ApplyAction(a, now, changed);
        if (a.kind == Action::Kind::kPreempt &&
            records_.at(a.job).state == LiveState::kPreempting) {
          stop.push_back(a.job);
        }
      }
      dirty_ = false;
    }
    changed.insert(changed.end(), unsaved_.begin(), unsaved_.end());
    unsaved_.clear();
    MustOk(SaveRows(changed));
    const auto commit_start = std::chrono::steady_clock::now();
    const bool wrote = store_->Changes() != changes_before;
    MustOk(txn.Commit());
    // (Not the empty ones of an idle loop: they were most of the histogram; found by a tester.)
    if (wrote) metrics_.ObserveCommit(SecondsSince(commit_start));
  }
  for (JobId id : stop) PreemptProcess(id, now);
  RetireEnded(changed);
  KillOverdue(now);  // before deciding what can launch
  LaunchReady(now);
  SampleCluster(now);
  Time next = std::min({sched_->NextWakeup(), time_limit_due_, removal_due_});
  for (const auto& [id, p] : procs_) next = std::min(next, p.kill_at);
  if (dirty_ || eligibility_dirty_) next = now;
  return next == kNever ? kNever : next + store_->epoch_ms();
}

double LiveScheduler::SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

void LiveScheduler::SampleCluster(Time now) {
  const int64_t wall = now + store_->epoch_ms();
  if (!metrics_.SampleDue(wall)) return;
  ClusterSample s{.wall_ms = wall, .gpus_total = sched_->topology().total_gpus()};
  s.gpus_busy = s.gpus_total - FreeGpusNow();
  s.gpus_fragmented = FragmentedGpus();
  s.running = static_cast<int>(sched_->num_running());
  std::vector<int> running_by_queue;
  sched_->CountByQueue(s.waiting_by_queue, running_by_queue);
  s.preemptions = total_preemptions_;
  metrics_.Sample(std::move(s));
}

int LiveScheduler::FragmentedGpus() const {
  // Free while the first waiting job (policy order) fits them in count but has no slot.
  const Job* head = sched_->FirstWaiting();
  const int free = FreeGpusNow();
  return head && free > 0 && head->gpus() <= free ? free : 0;
}

void LiveScheduler::Wake() {
  {
    std::lock_guard lk(mu_);
    wake_ = true;
  }
  cv_.notify_all();
}

void LiveScheduler::Run(const std::atomic<bool>& stop, int poll_ms) {
  while (!stop) {
    const int64_t next = Step();
    const int64_t wait =
        std::clamp<int64_t>(next == kNever ? poll_ms : next - clock_(), 0, poll_ms);
    std::unique_lock lk(mu_);
    cv_.wait_for(lk, std::chrono::milliseconds(wait), [&] { return wake_; });
    wake_ = false;
  }
  std::lock_guard lk(mu_);
  FlushOutsideStep();  // the stops of the last step (and of requests since) are kept
}

std::vector<std::string> LiveScheduler::NodeNames(const std::vector<GpuId>& gpus) const {
  const std::vector<NodeSpec> cluster = ClusterNodes();
  std::vector<std::string> names;
  for (const GpuId& g : gpus) {
    if (g.node < 0 || static_cast<size_t>(g.node) >= cluster.size()) continue;
    const std::string& name = cluster[g.node].name;
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

std::string LiveScheduler::JobRefOf(JobId id) const {
  auto it = records_.find(id);
  return it == records_.end() ? id.str() : RefOf(it->second);
}

std::vector<std::string> LiveScheduler::RefsOf(const std::vector<JobId>& ids) const {
  std::vector<std::string> out;
  for (JobId id : ids) out.push_back(JobRefOf(id));
  return out;
}

}  // namespace tiresias
