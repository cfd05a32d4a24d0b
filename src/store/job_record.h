// What the daemon keeps about one live job: the request (command, GPUs, model) and what has
// happened to it (state, attempts, process, exit). Stored as a row by Store, shown by the API.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "common/time.h"
#include "core/allocation.h"

namespace tiresias {

// Daemon-level job states. The core knows pending/running/finished/cancelled; the daemon
// adds the process side: a start waiting for its GPUs to drain, a preemption in its grace
// period, failure with an exit code, and the end of a job that ran out of its time limit.
enum class LiveState {
  kPending,
  kStarting,
  kRunning,
  kPreempting,
  kFinished,
  kFailed,
  kCancelled,
  kTimeout
};
const char* ToString(LiveState s);
std::optional<LiveState> ParseLiveState(std::string_view s);
bool IsTerminal(LiveState s);

// `afterok:12` and its kin (sbatch --dependency). `singleton` names no job: it waits until
// every job submitted before it with the same name and user has ended.
struct Dependency {
  enum class Kind { kAfterOk, kAfterAny, kAfterNotOk, kSingleton };
  Kind kind = Kind::kAfterAny;
  JobId job;      // a job, or an array's id: every task of it (Slurm's rule)
  int task = -1;  // >= 0: that task of the array `job` alone (Slurm's JOB_TASK)
  auto operator<=>(const Dependency&) const = default;
};
// "afterok:42", "afterok:42_3", "singleton"; ParseDependency reads it back (nullopt if it is
// not one; `ref` is "" for singleton).
std::string ToString(const Dependency& d);
std::optional<Dependency> ParseDependency(std::string_view kind, std::string_view ref);
// The job a dependency names, as written: "42", "42_3" ("" for singleton).
std::string DependencyTarget(const Dependency& d);

struct JobRecord {
  // Request.
  JobId id;
  std::string name;
  std::string user;
  std::string vc;  // its virtual cluster (serve --tenants), resolved at submit; "" = none
  int64_t uid = -1, gid = -1;  // the submitter's account (-1: unknown); see SubmitRequest
  std::string model;
  int gpus = 1;
  std::vector<std::string> argv;
  std::string cwd;
  std::vector<std::pair<std::string, std::string>> env;
  std::optional<Duration> duration;  // user's estimate; only oracle policies (sjf, srtf) use it
  Time submit = 0;                   // core time (ms since the daemon's epoch)
  // Running time allowed (time waiting or preempted does not count); past it the job is
  // stopped like a preempted one and ends as `timeout`.
  std::optional<Duration> time_limit;
  std::vector<Dependency> dependencies;  // all must hold before it may run
  JobId array_id;        // the array it is a task of (its first task's id), or JobId()
  int array_index = -1;  // its index in the array
  int array_limit = 0;   // at most this many tasks of the array eligible at once (0: all)
  // Where stdout / stderr go, sbatch patterns (%j %a %A %u %x %%) resolved at launch;
  // "" = the job's log (stderr: with stdout).
  std::string output, error;
  int tasks_per_gpu = 0;          // 1: one process per GPU (SubmitRequest::tasks_per_gpu)
  bool keep_checkpoints = false;  // its checkpoint directory stays after it finished
  // Preempted within this long of a checkpoint it reported, it is stopped at once (SIGKILL,
  // no signal and grace): it opted in to losing at most this much work. 0: never.
  Duration stop_at_checkpoint = 0;

  // What happened.
  LiveState state = LiveState::kPending;
  int attempt = -1;  // -1 before the first launch; +1 per launch
  int pid = 0;       // current/last process group (0: none)
  int64_t start_ticks = 0;
  std::vector<GpuId> gpus_held;  // the GPUs of the current/last run (recovery reads these)
  std::string devices;           // what the job was told: CUDA_VISIBLE_DEVICES (display only)
  // Cluster engines: the engine's id of the job (the Slurm job id; kept across attempts, as
  // Slurm requeues the same job) and the nodes of the current/last run. "" and {} locally.
  std::string engine_job;
  std::vector<std::string> nodes;
  int exit_code = -1;
  int signal = 0;
  Time first_start = -1;
  Time last_start = -1;
  Time end = -1;
  int preemptions = 0;
  int kills = 0;  // preemptions that ended at the grace deadline (not checkpointed)
  // Preemptions (evictions) whose run the engine lost with its node in their grace: neither a
  // checkpoint nor a kill. Stored in the `engine` column (`lost_runs`), which older builds
  // ignore.
  int lost_runs = 0;
  // GPU-ms of work lost to preemptions: a run killed at the grace deadline or stopped at a
  // reported checkpoint loses its progress since its last reported checkpoint (or its start).
  Service lost = 0;
  // The stop in progress (its process told to stop and not yet gone): whether a preemption or
  // an eviction started it (only those count in `kills`), kept so that a restart goes on
  // counting it as it began. (What its run loses is the core's: Job::stop_loss.)
  bool stop_preempted = false;
  // When the current process (pid) was sent the stop signal (core time; -1: not sent), kept
  // so that a restart in its grace neither signals it again nor moves its kill deadline.
  Time stop_sent = -1;
  // When that process is killed if still there: stop_sent + the grace of the serve that sent
  // it, kept so that restarts with other graces keep it (-1: none; a stop a build before
  // schema 7 began has only stop_sent).
  Time stop_deadline = -1;
  bool held = false;  // held by its user (or an admin) until released
  // Held by an admin on another user's job (Slurm's admin hold): only an admin releases it.
  // Stored in the `held` column as 2 (1: a user's hold), which older builds read as held.
  bool held_by_admin = false;
  // Held because an admin holds its job in the engine (Slurm: `scontrol hold`), beside any
  // hold of tiresias's own: ends when the engine's hold is gone, never by tiresias. Stored in
  // the `engine` column (`held`), which older builds ignore.
  bool held_in_engine = false;
  // Held one way or the other: it does not run.
  bool Held() const { return held || held_in_engine; }
  bool timing_out = false;  // stopping because it ran out of time (not stored: recomputed)
  std::string message;      // the last reason (start, preemption, failure)
};

// How its user names a job: an array's task as ARRAY_INDEX ("42_3"), else its id ("42").
std::string RefOf(const JobRecord& r);

// JSON for the API and the store's request column. Times are rendered by the caller.
nlohmann::json RequestToJson(const JobRecord& r);
void RequestFromJson(const nlohmann::json& j, JobRecord& r);
// The store's engine column: {"job": engine_job, "nodes": [...]}.
nlohmann::json EngineToJson(const JobRecord& r);
void EngineFromJson(const nlohmann::json& j, JobRecord& r);

}  // namespace tiresias
