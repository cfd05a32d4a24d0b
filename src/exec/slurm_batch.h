// The files a Slurm job of tiresias runs from, in its job directory: the batch script, the
// job's own variables (slurm-job.env, which the script loads as the job's user: sbatch itself
// runs with serve's environment, never a user's) and the attempt's (slurm-attempt.env, written
// before each release), and whether what Slurm runs is what such a file records. Used by
// exec/slurm_executor.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/executor.h"
#include "exec/slurm_state.h"

namespace tiresias {

// `s` in single quotes, for bash.
std::string ShellQuote(std::string_view s);
// A path as sbatch --output/--error take it literally: tiresias expanded its patterns already,
// and Slurm would expand a '%' in it again (a job named "50%j"), so each is doubled.
std::string SlurmLiteral(std::string_view path);
// `<job_dir>/slurm-attempt.env` and its KEY=VALUE lines.
std::string AttemptFile(const std::string& job_dir);
std::map<std::string, std::string> ReadAttemptFile(const std::string& job_dir);
// What slurm-attempt.env says before the job's first launch writes it: attempt 0, stopped. A
// release of the held Slurm job by anyone else (its owner can) then runs nothing: the batch
// script exits at its start, as it does for a stop that came before it.
std::string UnlaunchedAttemptVars();
// The attempt slurm-attempt.env was written for; nullopt when it names none.
std::optional<int64_t> RecordedAttempt(const std::map<std::string, std::string>& vars);
// "0:4,1:4" <-> [(0, 4), (1, 4)]: the core's nodes and GPU counts of an attempt
// (TIRESIAS_PLACEMENT).
std::string PlacementString(const std::vector<std::pair<int, int>>& placement);
std::vector<std::pair<int, int>> ParsePlacement(std::string_view s);
// Whether a Slurm job's end with `restarts` (restart_cnt) can be the end of the run
// slurm-attempt.env `vars` was written for: the file names the restart count Slurm's job has
// once that attempt is released (TIRESIAS_SLURM_RESTARTS). An end with fewer is an earlier
// attempt's (the launch was cut off before its requeue and release); more: the attempt was
// requeued since (a node failure, an admin's requeue), still its own. No count (a file from
// before it was recorded): yes.
bool OfRecordedRun(const std::map<std::string, std::string>& vars, int restarts);
// TIRESIAS_SLURM_RESTARTS of slurm-attempt.env `vars`; nullopt when it names none.
std::optional<int> RecordedRestarts(const std::map<std::string, std::string>& vars);
// Whether Slurm requeued job `s` since the release `vars` was written for (its restart count
// is above the recorded one): by itself (a node failure, an admin) while serve was away.
bool RequeuedSinceRelease(const SlurmJob& s, const std::map<std::string, std::string>& vars);
// Whether Slurm runs (or ran) job `s` where the attempt slurm-attempt.env `vars` was written
// for was placed (TIRESIAS_NODES, and TIRESIAS_PLACEMENT's most GPUs on a node, which the pin
// asks of each): running or ended, on those nodes with at least those GPUs; ending
// (COMPLETING...), on some of them (Slurm lists the nodes still completing); pending (and not
// held), pinned there (required_nodes, tres_per_node). No: Slurm started or requeued the job
// by itself (a node failure, an admin) after the file was written and before that attempt's
// pin ran, so the run is not that attempt's. A file without nodes, a job whose node list
// cannot be read, or an end that never ran anywhere: yes (as before the check).
bool PlacedAsRecorded(const SlurmJob& s, const std::map<std::string, std::string>& vars);
// `<job_dir>/slurm-job.env` and its text: `export NAME='value'` per variable, less those that
// would change Slurm's tools (SBATCH_*, SLURM_*) and names bash cannot export.
std::string JobEnvFile(const std::string& job_dir);
std::string JobEnvText(const std::vector<std::pair<std::string, std::string>>& env);
// The batch script: the command, with one task per node (srun) when it spans nodes.
std::string BatchScript(const LaunchSpec& spec, int cpus_per_task);

}  // namespace tiresias
