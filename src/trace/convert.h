// Converters from public cluster traces to the simulator's trace format, and its writer.
//
// Every converter reads the published layout, keeps users and virtual clusters where the
// trace has them, and never drops a record silently: each one left out is counted under its
// reason (with the first few cited by file and record), and rules applied to kept records
// (fractional GPUs rounded up, attempts merged) are counted too. Submit times become seconds
// after the earliest submission. The output (WriteTraceCsv) is the Tiresias format plus
// user, vc, name and attempts columns, which ReadTrace reads and `sim` replays as it is.
//
//  - Philly (msr-fiddle/philly-traces) cluster_job_log: a JSON list of jobs {status, vc, jobid,
//    user, submitted_time, attempts: [{start_time, end_time, detail: [{ip, gpus: [...]}]}]}.
//    An attempt's GPUs are the GPUs listed over its detail; the job's GPUs the largest count
//    of its complete attempts (start and end). Its duration is the sum of its complete
//    attempts' run times (end - start: the time it held GPUs; gaps between attempts are the
//    scheduler's and are left to ours), and with more than one the run time of each is kept
//    (attempts column) for `sim --attempts replay`. Attempts without an end (running when the
//    log was cut) or ending before they start are left out and counted.
//  - Helios / AcmeTrace cluster_log.csv (job_id,user,vc,gpu_num,cpu_num,node_num,state,
//    submit_time,start_time,end_time,duration,queue): GPUs = gpu_num (0 = a CPU job, left
//    out); duration = the duration column, else end - start; jobs that never started are left
//    out; every state that ran is kept (counted by state).
//  - Alibaba PAI 2020: pai_job_table (job_name,inst_id,user,status,start_time,end_time) and
//    pai_task_table (job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,
//    plan_gpu,gpu_type), without headers; the columns come from FILE.header beside each file
//    when there is one, else the published order. plan_gpu is a percentage of one GPU per
//    instance: a job's GPUs = ceil(sum over its tasks of inst_num x plan_gpu / 100) (PAI shares
//    GPUs between instances; fractions rounded up are counted). Submit = the job's
//    start_time; duration = the last task end - the first task start (tasks with GPUs).
//  - Gavel .trace (tab-separated job_type, command, num_steps_arg, needs_data_dir,
//    total_steps, arrival_time, scale_factor): GPUs = scale_factor; duration = total_steps /
//    the job type's throughput at that scale on one worker type, from Gavel's throughputs
//    JSON ({"v100": {"('ResNet-50 (batch size 64)', 1)": {"null": steps/s}}}); model = the
//    job type's name without its batch size, lower case, no punctuation (resnet50).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "core/job.h"

namespace tiresias {

struct ConvertReport {
  std::string format;
  int64_t records = 0;  // jobs (records) read
  int64_t kept = 0;
  std::map<std::string, int64_t> dropped;  // reason -> records left out
  std::map<std::string, int64_t> notes;    // rule applied to kept records -> how many
  std::vector<std::string> examples;       // the first few records left out, and why
  std::vector<std::string> info;           // where the columns came from, and the like
  void Drop(const std::string& reason, const std::string& where);
  void Note(const std::string& what, int64_t n = 1) { notes[what] += n; }
  std::string Summary() const;  // what `trace convert` prints
};

struct Converted {
  std::vector<JobSpec> jobs;  // sorted by (submit, id), submit 0 = the earliest
  ConvertReport report;
  // Once every job is in: submit times relative to the earliest, sorted for submission, the
  // count kept.
  void Finish();
};

StatusOr<Converted> ConvertPhillyJobLog(const std::string& path);
StatusOr<Converted> ConvertHelios(const std::string& path);
// `files` are pai_job_table and pai_task_table, in either order (told apart by their column
// counts, 6 and 10).
StatusOr<Converted> ConvertAlibabaPai(const std::vector<std::string>& files);
StatusOr<Converted> ConvertGavel(const std::string& path, const std::string& throughputs,
                                 const std::string& worker_type = "v100");

// job_id,num_gpu,submit_time,duration,model_name,user,vc,name[,attempts] with seconds
// (fractions kept to the millisecond); attempts as run seconds separated by ';'.
Status WriteTraceCsv(const std::vector<JobSpec>& jobs, const std::string& path);

}  // namespace tiresias
