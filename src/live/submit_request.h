// A job submission as the daemon receives it, and the one place that checks it. The API only
// turns JSON into a SubmitRequest (types, unknown fields); Validate holds every rule about
// the values, so a request from any front end meets the same rules with the same words.
// Rules that depend on the running cluster (the policy needs a duration, the job can never
// fit) are checked by LiveScheduler::Submit against its core.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "store/job_record.h"

namespace tiresias {

// Numbers are kept as received (wide types), so Validate sees and names the real value.
struct SubmitRequest {
  std::string name, user, model, cwd;
  // Its virtual cluster (serve --tenants); "" = the user's (the first VC listing them) or the
  // default VC.
  std::string vc;
  int64_t gpus = 1;
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;
  std::optional<double> duration_s;  // the user's estimate; only oracle policies use it
  // The submitter's account, set by the API from the caller's identity (never from the
  // request body); the job runs as it when serve runs as root.
  std::optional<uint32_t> uid, gid;
  // The estimate in ms; call after Validate.
  std::optional<Duration> duration() const;

  // Everyday sbatch options, as text in their sbatch forms (parsed by Plan):
  std::string time;           // --time: "90" (minutes), "1:30:00", "2-12", "1-00:30:00", ...
  std::string dependency;     // --dependency: "afterok:12:13,afterany:14"
  std::string array;          // --array: "0-99", "0-99%8", "1,3,5-7", "0-15:4"
  std::string output, error;  // --output / --error patterns: %j %a %A %u %x %%
  bool hold = false;          // --hold: submitted held, until released
  // 0: one process for all the job's GPUs (it may start more itself, e.g. torchrun); 1: one
  // process per GPU, as srun --ntasks-per-gpu=1, each with its RANK and its own GPU.
  int64_t tasks_per_gpu = 0;
  // Keep the checkpoint directory after the job finished (it is removed by default).
  bool keep_checkpoints = false;
  // Preempted within this many seconds of a reported checkpoint: stopped at once, without
  // the signal and grace (JobRecord::stop_at_checkpoint). 0: never.
  double stop_at_checkpoint_s = 0;
};

// What a valid request asks for, parsed.
struct SubmitPlan {
  std::optional<Duration> time_limit;
  std::vector<Dependency> dependencies;
  std::vector<int> array_indices;  // empty: not an array
  int array_limit = 0;             // 0: no limit
};

// The longest duration a request may give: ten years (more is a typo, and ms would overflow
// sums of many jobs).
inline constexpr double kMaxRequestDurationS = 315'360'000;
// The most GPUs a request may ask for before the cluster is consulted.
inline constexpr int kMaxRequestGpus = 1 << 20;
// The longest --stop-at-checkpoint window: a day (a checkpoint older than that is stale).
inline constexpr double kMaxStopAtCheckpointS = 86'400;

// Variables the scheduler sets for each run (CUDA_VISIBLE_DEVICES, TIRESIAS_*, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT, RANK, LOCAL_RANK, LOCAL_WORLD_SIZE, NODE_RANK and torchrun's
// PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT); a job's
// env may not set them.
bool IsSchedulerEnv(std::string_view name);

// The most tasks one array may have, and its largest index (Slurm's MaxArraySize can be at
// most 4,000,001, so 4,000,000 is the largest index any Slurm allows).
inline constexpr int kMaxArrayTasks = 10000;
inline constexpr int kMaxArrayIndex = 4000000;
// Sizes a submission may have: a name, a directory or an output pattern of a path's length,
// the command line and the environment as execve allows one string (MAX_ARG_STRLEN), and an
// array's tasks together at most kMaxArrayBytes of stored request (each task keeps a copy).
inline constexpr size_t kMaxNameBytes = 1024;
inline constexpr size_t kMaxPathBytes = 4096;
inline constexpr size_t kMaxArgvBytes = 131072;
inline constexpr size_t kMaxEnvBytes = 131072;
inline constexpr size_t kMaxArrayBytes = 16 << 20;

// InvalidArgument naming the field ("field 'gpus': ...") for the first rule broken; else the
// request's parsed options.
StatusOr<SubmitPlan> Plan(const SubmitRequest& r);
inline Status Validate(const SubmitRequest& r) {
  auto p = Plan(r);
  return p.ok() ? Status::Ok() : p.status();
}

// Slurm's time formats: "minutes", "minutes:seconds", "hours:minutes:seconds",
// "days-hours", "days-hours:minutes", "days-hours:minutes:seconds". Positive, at most ten
// years.
StatusOr<Duration> ParseSlurmTime(std::string_view text);
// Slurm's ways of asking for no time limit: "0" (zero in any time format), "-1", "UNLIMITED",
// "INFINITE" (any case).
bool NoTimeLimit(std::string_view text);
// The same for people: "2:00:00", "1-00:30:00".
std::string SlurmTime(Duration d);
// sbatch's output patterns: %j job id, %a array index, %A array id, %u user, %x job name, %%.
// A job that is not an array's task (array_index < 0) has %a 4294967294 (Slurm's NO_VAL, as
// sbatch writes it) and %A its own id.
std::string ExpandOutputPattern(std::string_view pattern, int64_t job, int64_t array_id,
                                int array_index, std::string_view user, std::string_view name);

}  // namespace tiresias
