// Converters for Helios, Alibaba PAI 2020 and Gavel traces, the conversion report and the
// trace writer (Philly's job log is in convert_philly.cc).
#include "trace/convert.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "common/input_file.h"
#include "common/strings.h"
#include "trace/csv.h"
#include "trace/synthetic.h"
#include "trace/trace_reader.h"

namespace tiresias {
namespace {

constexpr size_t kExamples = 5;

// Seconds (possibly fractional) as ms; nullopt unless a finite number >= 0.
std::optional<Time> SecondsMs(std::string_view s) {
  auto v = ParseDouble(Trim(s));
  if (!v || !std::isfinite(*v) || *v < 0 || *v > 1e12) return std::nullopt;
  return static_cast<Time>(std::llround(*v * kMsPerSecond));
}

// Lines of a file without a header, split on commas.
class RawCsv {
 public:
  static StatusOr<RawCsv> Open(const std::string& path) {
    auto in = OpenInput(path, "a trace file");
    if (!in.ok()) return in.status();
    RawCsv r;
    r.path_ = path;
    r.in_ = std::move(*in);
    return r;
  }
  bool Next(std::vector<std::string>& fields) {
    std::string line;
    while (std::getline(in_, line)) {
      ++line_no_;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (Trim(line).empty()) continue;
      fields.clear();
      for (auto f : Split(line, ',')) fields.emplace_back(Trim(f));
      return true;
    }
    return false;
  }
  std::string where() const { return fmt::format("{}:{}", path_, line_no_); }

 private:
  std::string path_;
  std::ifstream in_;
  int64_t line_no_ = 0;
};

// The column names of a headerless PAI file: FILE.header beside it (one line, comma
// separated), else `fallback`.
std::vector<std::string> HeaderOf(const std::string& path, const std::vector<std::string>& fallback,
                                  std::string* from) {
  std::filesystem::path p(path);
  std::vector<std::filesystem::path> candidates = {
      p.parent_path() / (p.stem().string() + ".header"), std::filesystem::path(path + ".header")};
  for (const auto& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_directory(c, ec)) continue;  // (an ifstream would throw)
    std::ifstream in(c);
    std::string line;
    if (in && std::getline(in, line)) {
      std::vector<std::string> cols;
      for (auto f : Split(line, ',')) cols.emplace_back(Trim(f));
      if (!cols.empty()) {
        *from = c.string();
        return cols;
      }
    }
  }
  *from = "the published column order";
  return fallback;
}

}  // namespace

void Converted::Finish() {
  if (!jobs.empty()) {
    Time origin = jobs[0].submit;
    for (const auto& j : jobs) origin = std::min(origin, j.submit);
    for (auto& j : jobs) j.submit -= origin;
  }
  SortForSubmission(jobs);
  report.kept = static_cast<int64_t>(jobs.size());
}

void ConvertReport::Drop(const std::string& reason, const std::string& where) {
  ++dropped[reason];
  if (examples.size() < kExamples) examples.push_back(fmt::format("{}: {}", where, reason));
}

std::string ConvertReport::Summary() const {
  int64_t left_out = 0;
  for (const auto& [r, n] : dropped) left_out += n;
  std::string out = fmt::format("{}: {} records read, {} jobs kept, {} left out\n", format, records,
                                kept, left_out);
  for (const auto& i : info) out += "  " + i + "\n";
  for (const auto& [r, n] : dropped) out += fmt::format("  left out: {:>9}  {}\n", n, r);
  for (const auto& [r, n] : notes) out += fmt::format("  kept:     {:>9}  {}\n", n, r);
  if (!examples.empty()) {
    out += "  first records left out:\n";
    for (const auto& e : examples) out += "    " + e + "\n";
  }
  return out;
}

StatusOr<Converted> ConvertHelios(const std::string& path) {
  auto f = CsvFile::Open(path);
  if (!f.ok()) return f.status();
  Converted c;
  c.report.format = "helios";
  std::vector<size_t> col;
  for (const char* name : {"job_id", "gpu_num", "submit_time", "start_time", "end_time"}) {
    auto i = f->Column(name);
    if (!i) {
      return InvalidArgument(fmt::format(
          "{}:1: missing column '{}'; a Helios/AcmeTrace cluster_log.csv has job_id,user,vc,"
          "gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue",
          path, name));
    }
    col.push_back(*i);
  }
  auto user = f->Column("user"), vc = f->Column("vc"), state = f->Column("state"),
       duration = f->Column("duration");
  std::vector<std::string_view> row;
  while (f->Next(row)) {
    ++c.report.records;
    if (row.size() != f->header().size()) {
      c.report.Drop(
          fmt::format("{} fields where the header has {}", row.size(), f->header().size()),
          f->where());
      continue;
    }
    auto gpus = ParseInt(Trim(row[col[1]]));
    if (!gpus || *gpus < 0) {
      c.report.Drop("gpu_num is not a non-negative integer", f->where());
      continue;
    }
    if (*gpus == 0) {
      c.report.Drop("a CPU job (gpu_num 0)", f->where());
      continue;
    }
    auto submit = ParseDateTime(row[col[2]]);
    if (!submit) {
      c.report.Drop("submit_time is not YYYY-MM-DD HH:MM:SS", f->where());
      continue;
    }
    auto start = ParseDateTime(row[col[3]]), end = ParseDateTime(row[col[4]]);
    std::optional<Time> run;
    if (duration) {
      if (auto d = SecondsMs(row[*duration]); d && *d > 0) run = d;
    }
    if (!run && start && end && *end > *start) run = Seconds(*end - *start);
    if (!start && !run) {
      c.report.Drop("never started (no start_time)", f->where());
      continue;
    }
    if (!run) {
      c.report.Drop("no run time (duration 0 and no end_time after its start_time)", f->where());
      continue;
    }
    JobSpec j;
    j.id = JobId(static_cast<int64_t>(c.jobs.size()));
    j.gpus = static_cast<int>(*gpus);
    j.submit = Seconds(*submit);
    j.duration = *run;
    j.name = std::string(Trim(row[col[0]]));
    if (user) j.user = std::string(Trim(row[*user]));
    if (vc) j.vc = std::string(Trim(row[*vc]));
    if (state) c.report.Note(fmt::format("state {}", Trim(row[*state])));
    c.jobs.push_back(std::move(j));
  }
  c.Finish();
  return c;
}

StatusOr<Converted> ConvertAlibabaPai(const std::vector<std::string>& files) {
  if (files.size() != 2) {
    return InvalidArgument(
        "alibaba-pai-2020 takes two files: pai_job_table.csv and pai_task_table.csv");
  }
  static const std::vector<std::string> kJobCols = {"job_name", "inst_id",    "user",
                                                    "status",   "start_time", "end_time"};
  static const std::vector<std::string> kTaskCols = {
      "job_name", "task_name", "inst_num", "status",   "start_time",
      "end_time", "plan_cpu",  "plan_mem", "plan_gpu", "gpu_type"};
  // Tell the tables apart by their first record's field count.
  std::string job_path, task_path;
  for (const auto& path : files) {
    auto raw = RawCsv::Open(path);
    if (!raw.ok()) return raw.status();
    std::vector<std::string> first;
    if (!raw->Next(first)) return InvalidArgument(fmt::format("{}: no records", path));
    std::string from;
    const auto job_cols = HeaderOf(path, kJobCols, &from);
    if (first.size() == job_cols.size() && job_cols.size() < kTaskCols.size()) {
      job_path = path;
    } else {
      task_path = path;
    }
  }
  if (job_path.empty() || task_path.empty()) {
    return InvalidArgument(fmt::format(
        "alibaba-pai-2020: cannot tell pai_job_table ({} columns) from pai_task_table ({} "
        "columns) in {}",
        kJobCols.size(), kTaskCols.size(), Join(files, ", ")));
  }
  Converted c;
  c.report.format = "alibaba-pai-2020";
  std::string job_from, task_from;
  const auto job_cols = HeaderOf(job_path, kJobCols, &job_from);
  const auto task_cols = HeaderOf(task_path, kTaskCols, &task_from);
  auto index = [](const std::vector<std::string>& cols, const std::string& name) -> int {
    auto it = std::find(cols.begin(), cols.end(), name);
    return it == cols.end() ? -1 : static_cast<int>(it - cols.begin());
  };
  for (const char* n : {"job_name", "user", "status", "start_time"}) {
    if (index(job_cols, n) < 0) {
      return InvalidArgument(
          fmt::format("{}: no column '{}' (columns from {})", job_path, n, job_from));
    }
  }
  for (const char* n : {"job_name", "inst_num", "start_time", "end_time", "plan_gpu"}) {
    if (index(task_cols, n) < 0) {
      return InvalidArgument(
          fmt::format("{}: no column '{}' (columns from {})", task_path, n, task_from));
    }
  }
  c.report.info.push_back(fmt::format("job table {}: columns from {}", job_path, job_from));
  c.report.info.push_back(fmt::format("task table {}: columns from {}", task_path, task_from));

  // The tasks first: per job, GPU demand (percent of a GPU, summed over instances) and the span
  // of its GPU tasks.
  struct Tasks {
    double gpu_percent = 0;
    Time first_start = std::numeric_limits<Time>::max(), last_end = -1;
    bool fractional = false, any = false;
  };
  std::unordered_map<std::string, Tasks> tasks;
  {
    auto raw = RawCsv::Open(task_path);
    if (!raw.ok()) return raw.status();
    const size_t jn = static_cast<size_t>(index(task_cols, "job_name")),
                 in = static_cast<size_t>(index(task_cols, "inst_num")),
                 st = static_cast<size_t>(index(task_cols, "start_time")),
                 en = static_cast<size_t>(index(task_cols, "end_time")),
                 pg = static_cast<size_t>(index(task_cols, "plan_gpu"));
    std::vector<std::string> r;
    while (raw->Next(r)) {
      if (r.size() != task_cols.size()) {
        ++c.report.notes[fmt::format("task rows with {} fields, not {} (ignored)", r.size(),
                                     task_cols.size())];
        continue;
      }
      Tasks& t = tasks[r[jn]];
      t.any = true;
      auto gpu = ParseDouble(r[pg]);
      auto inst = ParseDouble(r[in]);
      if (!gpu || !std::isfinite(*gpu) || *gpu <= 0) continue;  // a CPU task
      const double n = inst && *inst > 0 ? *inst : 1;
      t.gpu_percent += n * *gpu;
      if (std::fmod(*gpu, 100.0) != 0) t.fractional = true;
      auto s = SecondsMs(r[st]), e = SecondsMs(r[en]);
      if (s && e && *e > *s) {
        t.first_start = std::min(t.first_start, *s);
        t.last_end = std::max(t.last_end, *e);
      }
    }
  }
  std::set<std::string> seen;
  auto raw = RawCsv::Open(job_path);
  if (!raw.ok()) return raw.status();
  const size_t jn = static_cast<size_t>(index(job_cols, "job_name")),
               us = static_cast<size_t>(index(job_cols, "user")),
               ss = static_cast<size_t>(index(job_cols, "status")),
               st = static_cast<size_t>(index(job_cols, "start_time"));
  std::vector<std::string> r;
  while (raw->Next(r)) {
    ++c.report.records;
    if (r.size() != job_cols.size()) {
      c.report.Drop(fmt::format("{} fields where the job table has {}", r.size(), job_cols.size()),
                    raw->where());
      continue;
    }
    if (!seen.insert(r[jn]).second) {
      c.report.Drop("a job_name seen before", raw->where());
      continue;
    }
    auto submit = SecondsMs(r[st]);
    if (!submit) {
      c.report.Drop("no start_time (submission)", raw->where());
      continue;
    }
    auto t = tasks.find(r[jn]);
    if (t == tasks.end() || !t->second.any) {
      c.report.Drop("no task rows", raw->where());
      continue;
    }
    if (t->second.gpu_percent <= 0) {
      c.report.Drop("no GPU (plan_gpu empty or 0 in every task)", raw->where());
      continue;
    }
    if (t->second.last_end < 0) {
      c.report.Drop("no GPU task with start_time and end_time", raw->where());
      continue;
    }
    JobSpec j;
    j.id = JobId(static_cast<int64_t>(c.jobs.size()));
    j.gpus = std::max(1, static_cast<int>(std::ceil(t->second.gpu_percent / 100.0 - 1e-9)));
    if (t->second.fractional || std::fmod(t->second.gpu_percent, 100.0) != 0) {
      c.report.Note("fractional GPU demand rounded up to whole GPUs");
    }
    j.submit = *submit;
    j.duration = t->second.last_end - t->second.first_start;
    j.name = r[jn];
    j.user = r[us];
    c.report.Note(fmt::format("status {}", r[ss]));
    c.jobs.push_back(std::move(j));
  }
  for (const auto& [name, t] : tasks) {
    if (!seen.contains(name))
      ++c.report.notes["task rows of jobs missing from the job table (ignored)"];
  }
  c.Finish();
  return c;
}

namespace {

// "ResNet-50 (batch size 64)" -> "resnet50"; "CycleGAN" -> "cyclegan".
std::string GavelModel(const std::string& job_type) {
  std::string base = job_type.substr(0, job_type.find('('));
  std::string out;
  for (char ch : base) {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
  }
  return out;
}

}  // namespace

StatusOr<Converted> ConvertGavel(const std::string& path, const std::string& throughputs,
                                 const std::string& worker_type) {
  if (throughputs.empty()) {
    return InvalidArgument(
        "gavel traces give steps, not seconds: --throughputs FILE (Gavel's throughputs JSON, "
        "e.g. simulation_throughputs.json) is needed to turn total_steps into a duration");
  }
  auto tf = OpenInput(throughputs, "Gavel's throughputs JSON");
  if (!tf.ok()) return tf.status();
  auto tj = nlohmann::json::parse(*tf, nullptr, /*allow_exceptions=*/false);
  if (tj.is_discarded() || !tj.is_object()) {
    return InvalidArgument(fmt::format("{}: not a JSON object", throughputs));
  }
  if (!tj.contains(worker_type) || !tj[worker_type].is_object()) {
    std::vector<std::string> workers;
    for (const auto& [k, v] : tj.items()) workers.push_back(k);
    return InvalidArgument(fmt::format("{}: no worker type '{}' (it has: {})", throughputs,
                                       worker_type, Join(workers, ", ")));
  }
  const auto& table = tj[worker_type];
  auto opened = OpenInput(path, "a Gavel trace file");
  if (!opened.ok()) return opened.status();
  std::ifstream& in = *opened;
  Converted c;
  c.report.format = "gavel";
  std::string line;
  int64_t line_no = 0;
  std::set<std::string> unknown_models;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (Trim(line).empty()) continue;
    ++c.report.records;
    const std::string where = fmt::format("{}:{}", path, line_no);
    auto f = Split(line, '\t');
    if (f.size() != 7) {
      c.report.Drop(fmt::format("{} tab-separated fields, not 7", f.size()), where);
      continue;
    }
    const std::string job_type(Trim(f[0]));
    auto steps = ParseDouble(Trim(f[4]));
    auto arrival = SecondsMs(f[5]);
    auto scale = ParseInt(Trim(f[6]));
    if (!steps || *steps <= 0) {
      c.report.Drop("total_steps is not a positive number", where);
      continue;
    }
    if (!arrival) {
      c.report.Drop("arrival_time is not a time in seconds", where);
      continue;
    }
    if (!scale || *scale < 1) {
      c.report.Drop("scale_factor is not a positive integer", where);
      continue;
    }
    const std::string key = fmt::format("('{}', {})", job_type, *scale);
    double rate = 0;
    if (table.contains(key) && table[key].is_object() && table[key].contains("null") &&
        table[key]["null"].is_number()) {
      rate = table[key]["null"].get<double>();
    }
    if (!(rate > 0)) {
      c.report.Drop(fmt::format("no throughput for {} on {}", key, worker_type), where);
      continue;
    }
    JobSpec j;
    j.id = JobId(static_cast<int64_t>(c.jobs.size()));
    j.gpus = static_cast<int>(*scale);
    j.submit = *arrival;
    j.duration = std::max<Duration>(1, std::llround(*steps / rate * kMsPerSecond));
    j.name = job_type;
    j.model = GavelModel(job_type);
    if (std::find(CnnModels().begin(), CnnModels().end(), j.model) == CnnModels().end()) {
      c.report.Note("model without a profile here (runs at packed speed)");
    }
    c.jobs.push_back(std::move(j));
  }
  c.Finish();
  return c;
}

Status WriteTraceCsv(const std::vector<JobSpec>& jobs, const std::string& path) {
  bool attempts = false;
  for (const auto& j : jobs) attempts |= j.attempts.size() > 1;
  auto secs = [](Time ms) {
    return ms % kMsPerSecond == 0 ? fmt::format("{}", ms / kMsPerSecond)
                                  : fmt::format("{:.3f}", ToSeconds(ms));
  };
  auto field = [](const std::string& s) {  // the format has no quoting: commas become spaces
    std::string out = s;
    std::replace(out.begin(), out.end(), ',', ' ');
    std::replace(out.begin(), out.end(), '\n', ' ');
    return out;
  };
  std::ofstream out(path, std::ios::binary);
  if (!out) return IoError(fmt::format("{}: cannot write", path));
  std::string buf = "job_id,num_gpu,submit_time,duration,model_name,user,vc,name";
  buf += attempts ? ",attempts\n" : "\n";
  for (const auto& j : jobs) {
    fmt::format_to(std::back_inserter(buf), "{},{},{},{},{},{},{},{}", j.id.value(), j.gpus,
                   secs(j.submit), j.duration ? secs(*j.duration) : "", field(j.model),
                   field(j.user), field(j.vc), field(j.name));
    if (attempts) {
      buf += ',';
      if (j.attempts.size() > 1) {
        for (size_t i = 0; i < j.attempts.size(); ++i) {
          if (i) buf += ';';
          buf += secs(j.attempts[i]);
        }
      }
    }
    buf += '\n';
    if (buf.size() > (1 << 20)) {
      out << buf;
      buf.clear();
    }
  }
  out << buf;
  out.close();
  if (!out) return IoError(fmt::format("{}: write failed", path));
  return Status::Ok();
}

}  // namespace tiresias
