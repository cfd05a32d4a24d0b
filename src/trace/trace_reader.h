// Trace readers. The format is chosen by the header:
//  - Tiresias: job_id,num_gpu,submit_time,...,duration (seconds), optional model_name, user,
//    vc and name columns (what `tiresias trace convert` writes);
//  - Philly-derived: timestamp,duration,num_gpus,gpu_time,cluster[,user]; submit times become
//    seconds after the earliest timestamp, ids the data row number (from 0); `cluster` (the
//    hashed virtual cluster) is the job's vc; `gpu_time`, when given, must be duration x
//    num_gpus (within 0.5 GPU-s), else the row is refused.
// A malformed row stops the read with "file:line: what is wrong". Jobs come back sorted by
// (submit, id), the order a driver submits them in.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "core/job.h"
#include "core/topology.h"

namespace tiresias {

struct Trace {
  std::string format;  // "tiresias" or "philly"
  std::vector<JobSpec> jobs;
};

StatusOr<Trace> ReadTrace(const std::string& path);
// "YYYY-MM-DD HH:MM:SS" -> seconds since the Unix epoch (the clock the string was written in).
std::optional<int64_t> ParseDateTime(std::string_view s);
void SortForSubmission(std::vector<JobSpec>& jobs);
// The jobs submitted in [from, to), with submit times shifted so the window starts at 0.
std::vector<JobSpec> Window(std::vector<JobSpec> jobs, Time from, Time to);
// The jobs of the trace read from `path` submitted in days [from_day, from_day + days) (days
// 0: to the end; both 0: every job), shifted so the window starts at 0 (Window). A trace with
// no job, or a window with none, is an error naming the window and the days the trace's
// submits span: a replay of nothing said nothing (found by a tester).
StatusOr<std::vector<JobSpec>> WindowOfDays(std::vector<JobSpec> jobs, const std::string& path,
                                            double from_day, double days);

// `arg` is "SxNxG" or a Tiresias cluster spec CSV
// (num_switch,num_node_p_switch,num_gpu_p_node,...).
StatusOr<Topology> ResolveCluster(const std::string& arg);

}  // namespace tiresias
