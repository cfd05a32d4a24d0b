// SlurmExecutor, what is done to Slurm: the worker thread and RunBatch, which run the queued
// operations (submissions, pins and releases, signals, requeue-holds, cancels) a kind at a
// time as few commands as possible, and retry with backoff while slurmctld does not answer
// (see slurm_executor.h).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <set>
#include <thread>

#include "common/strings.h"
#include "exec/exit_file.h"
#include "exec/slurm_executor.h"
#include "exec/subprocess.h"

namespace tiresias {

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
        const Job* j = it->kind == OpKind::kSubmit ? Find(it->job) : nullptr;
        const bool place = j && j->took_place;  // the place it took is waiting for it
        if ((it->kind == OpKind::kSubmit && !place && ++submits > kSubmitsPerBatch) ||
            (it->kind == OpKind::kLaunch && ++launches > kLaunchesPerBatch)) {
          ++it;
          continue;
        }
        batch.push_back(*it);
        it = ops_.erase(it);
      }
      running_ops_ = static_cast<int>(batch.size());
      for (const Op& o : batch) {
        batch_ids_.insert(o.slurm_id);
        batch_jobs_.insert(o.job);
      }
    }
    std::vector<Op> retry = RunBatch(std::move(batch));
    std::lock_guard lk(mu_);
    running_ops_ = 0;
    batch_ids_.clear();
    batch_jobs_.clear();
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
  // The Slurm job an op is for: the one it names (holds and kills name the one they were
  // decided for), else the job's now.
  // 0 (skipped) for one replaced since: a requeue-hold after its cancel would bring it back.
  auto slurm_id = [&](const Op& o) {
    std::lock_guard lk(mu_);
    if (o.slurm_id != 0) return strays_.contains(o.slurm_id) ? int64_t{0} : o.slurm_id;
    const Job* j = Find(o.job);
    return j ? j->slurm_id : int64_t{0};
  };
  auto state_of = [&](int64_t sid) {
    std::lock_guard lk(mu_);
    const SlurmJob* s = Seen(sid);
    return s ? std::make_pair(s->state, s->held) : std::make_pair(std::string(), false);
  };
  auto held_by_admin = [&](int64_t sid) {
    std::lock_guard lk(mu_);
    const SlurmJob* s = Seen(sid);
    return s && HeldByAdmin(*s);
  };
  // A command over several jobs: on a failure other than contact, each job alone (errors
  // such as "already completed" are the poller's to see).
  auto each = [&](std::vector<std::string> head, const std::vector<int64_t>& ids, bool comma,
                  const std::vector<Op>& those) {
    if (ids.empty()) return;
    std::vector<std::string> argv = head;
    if (comma) {
      argv.push_back(fmt::format("{}", fmt::join(ids, ",")));
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
      if (int64_t sid = slurm_id(o)) {
        ids.push_back(sid);
        those.push_back(o);
      }
    }
    each(std::move(head), ids, comma, those);
    return ids.size();
  };

  // A signal or kill queued for an attempt that has ended or been superseded since (a retry
  // after slurmctld was unreachable) must not reach the job's next state: a KILL to a job
  // that is pending again cancels it in Slurm. attempt -1: whatever Slurm started on its own,
  // until tiresias released an attempt (a launch queued meanwhile waits for it: kills come
  // before launches in a batch).
  auto current = [&](const Op& o) {
    std::lock_guard lk(mu_);
    const Job* j = Find(o.job);
    if (!j || j->retired) return false;
    if (o.attempt < 0) return j->phase != Phase::kReleased;
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
  // Those that name their Slurm job (op.slurm_id), as one command; how many.
  auto each_named = [&](OpKind kind, std::vector<std::string> head) {
    std::vector<int64_t> ids;
    std::vector<Op> those;
    for (const Op& o : by_kind(kind)) {
      ids.push_back(o.slurm_id);
      those.push_back(o);
    }
    each(std::move(head), ids, false, those);
    return ids.size();
  };
  // 1. Holds (pending jobs Slurm must not start on its own) and requeue-holds; cancels
  // (CancelSlurmJob: of retired jobs, of Slurm jobs replaced after a lost run), in whatever
  // state Slurm has them, before any launch (one waits for a replaced job's processes).
  {
    (void)each_known(OpKind::kHold, {"scontrol", "uhold"}, true);
    const size_t requeued = each_known(OpKind::kRequeueHold, {"scontrol", "requeuehold"}, true);
    RestoreAdminHolds(by_kind(OpKind::kRequeueHold));
    lap("holds", by_kind(OpKind::kHold).size() + requeued);
    // Places given (GivePlace): untagged, then cancelled, so that a later serve never reads
    // the cancel as someone's. An untag Slurm refuses: the job keeps its Slurm job.
    for (const Op& o : by_kind(OpKind::kGivePlace)) {
      StatusOr<CommandResult> untag = IoError(""), cancel = IoError("");
      if (!run({"scontrol", "update", fmt::format("JobId={}", o.slurm_id),
                fmt::format("Comment={}{}", GavePlacePrefix(), o.job.value())},
               &untag)) {
        retry.push_back(o);
        continue;
      }
      const bool untagged = untag.ok() && untag->ok();
      const bool reached =
          untagged && run({"scancel", "--quiet", std::to_string(o.slurm_id)}, &cancel);
      std::lock_guard lk(mu_);
      Job* v = Find(o.job);
      if (!untagged && v && !v->retired && v->slurm_id == 0) {  // a queued sbatch sees it
        v->slurm_id = o.slurm_id;
        strays_.erase(o.slurm_id);
      } else if (reached) {
        cancelling_[o.slurm_id] = {.done = ++op_seq_};
      } else {
        // slurmctld went away between untag and cancel; or the untag was refused and `v` has
        // another Slurm job by now (a restart picks that newer one), or ended.
        CancelSlurmJob(o.job, o.slurm_id);
      }
    }
    lap("cancelled in any state", each_named(OpKind::kCancelAny, {"scancel", "--quiet"}));
  }
  // 2. Signals: to the whole batch step of a one-node job (the command and its children), to
  // the srun tasks of a multi-node one (not to srun itself, which would forward it again); a
  // job that has not started yet is held first (the snapshot that says so may be older than
  // its start: it is signalled too; --state=RUNNING skips it if it is still pending; a stop
  // was lost so, found by a stress run, and the job ran its grace out).
  {
    const size_t retried = retry.size();
    std::map<std::pair<int, bool>, std::pair<std::vector<int64_t>, std::vector<Op>>> by_sig;
    std::vector<int64_t> hold;
    std::vector<Op> hold_ops;
    for (const Op& o : by_kind(OpKind::kSignal)) {
      const int64_t sid = slurm_id(o);
      if (!sid || !current(o)) continue;
      // (Not one an admin holds: an operator's uhold turns an admin's hold into a user's.)
      if (state_of(sid).first == "PENDING" && !held_by_admin(sid)) {
        hold.push_back(sid);
        hold_ops.push_back(o);
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
    each({"scontrol", "uhold"}, hold, true, hold_ops);
    for (const auto& [key, v] : by_sig) {
      const char* abbrev = sigabbrev_np(key.first);
      // --state=RUNNING: Slurm itself skips a job that is not running (any more) by now.
      std::vector<std::string> head = {
          "scancel", "--quiet", "--state=RUNNING",
          "--signal=" + (abbrev ? std::string(abbrev) : std::to_string(key.first))};
      if (key.second) head.push_back("--full");
      each(head, v.first, false, v.second);
    }
    // An op both held and signalled is retried once (not once for each: doubled at every
    // retry while slurmctld is away).
    std::set<std::tuple<JobId, int, int>> seen;
    retry.erase(std::remove_if(retry.begin() + static_cast<std::ptrdiff_t>(retried), retry.end(),
                               [&](const Op& o) {
                                 return !seen.insert({o.job, o.attempt, o.sig}).second;
                               }),
                retry.end());
    lap("signals", by_kind(OpKind::kSignal).size());
  }
  // 3. Kills: the grace period is over. Everything of the job is killed, then the job goes
  // back to pending, held (or, if it never started, is simply held).
  {
    std::vector<int64_t> active, pending;
    std::vector<Op> active_ops, pending_ops;
    for (const Op& o : by_kind(OpKind::kKill)) {
      const int64_t sid = slurm_id(o);
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
    const size_t before = retry.size();
    each({"scancel", "--quiet", "--state=RUNNING", "--signal=KILL", "--full"}, active, false,
         active_ops);
    // Those the KILL did not reach are retried whole (the op once): no requeue-hold yet.
    std::set<JobId> again;
    for (size_t k = before; k < retry.size(); ++k) again.insert(retry[k].job);
    std::vector<int64_t> killed;
    std::vector<Op> killed_ops;
    for (size_t k = 0; k < active.size(); ++k) {
      if (again.contains(active_ops[k].job)) continue;
      killed.push_back(active[k]);
      killed_ops.push_back(active_ops[k]);
    }
    each({"scontrol", "requeuehold"}, killed, true, killed_ops);
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
      std::lock_guard lk(mu_);
      Job* j = Find(o.job);
      if (!j || j->retired || j->phase != Phase::kLaunching || j->attempt != o.attempt) continue;
      t.placement = j->placement;
      t.sid = j->slurm_id;
      const SlurmJob* s = Seen(t.sid);
      const SlurmJob* replaced = Seen(j->replaced_id);
      // Still being stopped (e.g. started outside tiresias), or the job it replaced (its
      // processes may still write the checkpoint): later.
      if ((s && SlurmActive(s->state)) ||
          (replaced && IsOurs(o.job, j->job_dir, *replaced) && SlurmActive(replaced->state))) {
        retry.push_back(o);
        continue;
      }
      // Cancelled by someone (scancel) after our last hold or requeue-hold, as a snapshot
      // since shows: a requeue-hold now would bring it back and run it. Its cancel is the
      // job's, as Poll reports it between attempts (a cancel seen there first).
      if (s && s->state == "CANCELLED" && j->holds_queued == 0 &&
          seen_seq_ > std::max(j->hold_done_seq, j->known_seq)) {
        j->phase = Phase::kEnded;
        j->cancel_reported = true;
        j->ended = ExitInfo{
            .job = o.job,
            .attempt = o.attempt,
            .cancelled = true,
            .reason = fmt::format("Slurm job {} CANCELLED before the attempt started", s->id)};
        continue;
      }
      // The restart count this release gives, from a snapshot that shows the job stopped:
      // Launch's guess may predate a kill's requeue.
      const bool over = s && SlurmEnded(s->state);
      const int base = RestartsOnRelease(s);
      if (base != j->restart_base) NoteRestartBase(*j, base);
      if (over) {  // the previous attempt ended in a final Slurm state
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
    std::vector<Op> release_ops, admin_held;
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
      // An admin holds it in Slurm: not released (as root that would undo the admin's hold).
      // Pinned, it shows released and waiting (NotStarted); serve holds the job.
      if (held_by_admin(p.sid) || [&] {
            std::lock_guard lk(mu_);
            const Job* j = Find(p.op.job);
            return j && j->admin_hold_on_run;
          }()) {
        admin_held.push_back(p.op);
        continue;
      }
      release.push_back(p.sid);
      release_ops.push_back(p.op);
    }
    if (Status fault = SetAsideAdminHeld(&release, &release_ops, &admin_held, &retry);
        fault.code() == StatusCode::kUnavailable) {
      contact = fault;
    }
    lap("checked for admin holds", release.size());
    if (!admin_held.empty()) {
      std::lock_guard lk(mu_);
      const uint64_t seq = ++op_seq_;
      for (const Op& o : admin_held) {
        Job* j = Find(o.job);
        if (!j || j->phase != Phase::kLaunching || j->attempt != o.attempt) continue;
        j->phase = Phase::kReleased;
        j->released_seq = seq;
      }
    }
    if (!release.empty()) {
      StatusOr<CommandResult> r = IoError("");
      if (!run({"scontrol", "release", fmt::format("{}", fmt::join(release, ","))}, &r)) {
        // The pins are done; the release is repeated (an update again is harmless).
        retry.insert(retry.end(), release_ops.begin(), release_ops.end());
      } else {
        // Refused for some (Slurm releases each on its own): each alone again. One that Slurm
        // still refuses and that is still held fails its attempt (else the core would count a
        // job as running that Slurm keeps held); one the first command did release (a second
        // release of it may be refused) or that has ended since is the poller's to follow.
        std::map<JobId, std::string> refused;
        if (!r.ok() || !r->ok()) {
          for (size_t k = 0; k < release.size(); ++k) {
            const std::string sid = std::to_string(release[k]);
            StatusOr<CommandResult> one = IoError(""), prio = IoError("");
            if (!run({"scontrol", "release", sid}, &one)) {
              retry.push_back(release_ops[k]);
              refused[release_ops[k].job] = "";
            } else if ((!one.ok() || !one->ok()) &&
                       run({"squeue", "-h", "-t", "PD", "-j", sid, "-o", "%Q"}, &prio) &&
                       prio.ok() && prio->ok() &&
                       ParseInt(Trim(prio->out.substr(0, prio->out.find('\n')))) == 0) {
              refused[release_ops[k].job] = one.ok() ? one->Summary() : one.status().message();
            }
          }
        }
        lap("released", release.size());
        std::lock_guard lk(mu_);
        const uint64_t seq = ++op_seq_;
        for (const Op& o : release_ops) {
          Job* j = Find(o.job);
          if (!j || j->phase != Phase::kLaunching || j->attempt != o.attempt) continue;
          if (auto it = refused.find(o.job); it == refused.end()) {
            j->phase = Phase::kReleased;
            j->released_seq = seq;
          } else if (!it->second.empty()) {
            j->phase = Phase::kEnded;
            j->ended = ExitInfo{.job = o.job,
                                .attempt = o.attempt,
                                .exit_code = -1,
                                .signal = 0,
                                .reason = "launch failed: scontrol release: " + it->second};
          }
        }
      }
    }
  }
  // 5. Submissions, a few at a time (sbatch takes ~15 ms, mostly waiting for slurmctld),
  // after the pins and releases: a launch waits for no unrelated submission.
  {
    // One whose last sbatch lost its answer waits for a snapshot that says whether it made
    // the job (SubmitNow looks there first). Those that took a held job's place go first, on
    // their own: the place is theirs, not another new job's.
    std::vector<Op> submits;
    size_t first_ones = 0;
    for (const Op& o : by_kind(OpKind::kSubmit)) {
      std::lock_guard lk(mu_);
      const Job* j = Find(o.job);
      if (j && AwaitsSubmitAnswer(*j)) {
        retry.push_back(o);
      } else if (j && j->took_place) {
        submits.insert(submits.begin() + static_cast<std::ptrdiff_t>(first_ones++), o);
      } else {
        submits.push_back(o);
      }
    }
    std::vector<Status> result(submits.size());
    constexpr size_t kParallel = 4;
    for (size_t first = 0, end = 0; first < submits.size(); first = end) {
      end =
          std::min({submits.size(), first + kParallel, first < first_ones ? first_ones : SIZE_MAX});
      std::vector<std::thread> threads;
      for (size_t k = first; k < end; ++k) {
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
      } else if (j && AwaitsSubmitAnswer(*j)) {
        retry.push_back(submits[k]);  // its answer was lost: looked for in the next snapshot
      } else if (j) {
        j->submit_queued = false;
        j->submit_limited.clear();
        if (!result[k].ok() && j->replace && j->slurm_id != 0) {
          // No fresh Slurm job (at a submit limit the job's own may hold the last place): the
          // old one runs the next attempt rather than none.
          j->replace = false;
        } else if (result[k].code() == StatusCode::kResourceExhausted) {
          j->submit_limited = result[k].message();
          j->submit_retry_at =
              std::chrono::steady_clock::now() + std::chrono::seconds(kSubmitRetryS);
        } else if (!result[k].ok()) {
          j->submit_error = result[k].message();
        }
      }
    }
    cv_.notify_all();  // Launch may wait for a submission
    lap("sbatch", submits.size());
  }
  // 6. Cancels of stray Slurm jobs (Sweep).
  lap("strays cancelled",
      each_named(OpKind::kCancelStray, {"scancel", "--quiet", "--state=PENDING"}));
  if (trace && !timing.empty()) std::cerr << "tiresias slurm batch:" << timing << "\n";
  std::lock_guard lk(mu_);
  NoteContact(contact);
  ++op_seq_;
  // The holds and cancels done (not to be retried): snapshots from now on show them.
  std::map<std::pair<JobId, OpKind>, int> again;
  std::set<int64_t> cancel_again;
  for (const Op& o : retry) {
    ++again[{o.job, o.kind}];
    if (o.kind == OpKind::kCancelAny) cancel_again.insert(o.slurm_id);
  }
  for (const Op& o : ops) {
    if (o.kind == OpKind::kCancelAny && !cancel_again.contains(o.slurm_id)) {
      if (auto c = cancelling_.find(o.slurm_id); c != cancelling_.end()) c->second.done = op_seq_;
    }
    if (o.kind != OpKind::kHold && o.kind != OpKind::kRequeueHold && o.kind != OpKind::kKill) {
      continue;
    }
    if (int& n = again[{o.job, o.kind}]; n > 0) {
      --n;
    } else if (Job* j = Find(o.job)) {
      j->holds_queued = std::max(0, j->holds_queued - 1);
      j->hold_done_seq = op_seq_;
    }
  }
  return retry;
}

}  // namespace tiresias
