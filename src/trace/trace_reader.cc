// Trace readers for the Tiresias and Philly-derived CSV formats, and cluster specs.
#include "trace/trace_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>

#include "common/strings.h"
#include "trace/csv.h"

namespace tiresias {
namespace {

// Reads a number of seconds in [0, kMaxInputSeconds] ("121" or "66.0") as milliseconds.
std::optional<Duration> ParseSecondsMs(std::string_view s) {
  auto v = ParseDouble(s);
  if (!v || *v < 0 || *v > kMaxInputSeconds) return std::nullopt;
  return static_cast<Duration>(std::llround(*v * kMsPerSecond));
}

// "in [0, 315360000] (ten years)": the range of ParseSecondsMs, for messages.
std::string SecondsRange(const char* low) {
  return fmt::format("in {}, {}] (ten years)", low, kMaxInputSeconds);
}

// Why a duration column's `text` (read as `ms`) is no positive duration.
std::string DurationError(std::string_view text, std::optional<Time> ms) {
  if (ms && *ms == 0 && ParseDouble(Trim(text)).value_or(0) > 0) {  // (0.0001 said "not positive")
    return fmt::format("duration '{}' rounds to 0 ms: times are kept in milliseconds", text);
  }
  return fmt::format("duration '{}' is not a positive number of seconds {}", text,
                     SecondsRange("(0"));
}

}  // namespace

std::optional<int64_t> ParseDateTime(std::string_view s) {
  s = Trim(s);
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' ||
      s[16] != ':') {
    return std::nullopt;
  }
  auto y = ParseInt(s.substr(0, 4)), mo = ParseInt(s.substr(5, 2)), d = ParseInt(s.substr(8, 2));
  auto h = ParseInt(s.substr(11, 2)), mi = ParseInt(s.substr(14, 2)),
       se = ParseInt(s.substr(17, 2));
  if (!y || !mo || !d || !h || !mi || !se || *h < 0 || *h > 23 || *mi < 0 || *mi > 59 || *se < 0 ||
      *se > 60) {
    return std::nullopt;
  }
  std::chrono::year_month_day ymd{std::chrono::year(static_cast<int>(*y)),
                                  std::chrono::month(static_cast<unsigned>(*mo)),
                                  std::chrono::day(static_cast<unsigned>(*d))};
  if (!ymd.ok()) return std::nullopt;
  int64_t days = std::chrono::sys_days(ymd).time_since_epoch().count();
  return days * 86400 + *h * 3600 + *mi * 60 + *se;
}

namespace {

struct Columns {
  std::vector<size_t> idx;
  Status Require(const CsvFile& f, const std::vector<std::string>& names) {
    for (const auto& n : names) {
      auto c = f.Column(n);
      if (!c) {
        return InvalidArgument(fmt::format("{}:1: missing column '{}' (header: {})", f.path(), n,
                                           Join(f.header(), ",")));
      }
      idx.push_back(*c);
    }
    return Status::Ok();
  }
};

Status RowError(const CsvFile& f, const std::string& what) {
  return InvalidArgument(fmt::format("{}: {}", f.where(), what));
}

StatusOr<Trace> ReadTiresias(CsvFile& f) {
  Columns c;
  if (Status st = c.Require(f, {"job_id", "num_gpu", "submit_time", "duration"}); !st.ok())
    return st;
  auto model_col = f.Column("model_name");
  auto user_col = f.Column("user"), vc_col = f.Column("vc"), name_col = f.Column("name"),
       attempts_col = f.Column("attempts");
  Trace t{"tiresias", {}};
  t.jobs.reserve(f.RecordsLeft());
  std::set<int64_t> seen;
  std::vector<std::string_view> row;
  while (f.Next(row)) {
    if (row.size() != f.header().size()) {
      return RowError(f,
                      fmt::format("{} fields, the header has {}", row.size(), f.header().size()));
    }
    JobSpec j;
    auto id = ParseInt(row[c.idx[0]]);
    if (!id || *id < 0)
      return RowError(f, fmt::format("job_id '{}' is not a non-negative integer", row[c.idx[0]]));
    if (!seen.insert(*id).second) return RowError(f, fmt::format("duplicate job_id {}", *id));
    auto gpus = ParseInt(row[c.idx[1]]);
    if (!gpus || *gpus < 1 || *gpus > kMaxClusterGpus) {
      return RowError(f, fmt::format("num_gpu '{}' is not a positive integer (at most {})",
                                     row[c.idx[1]], kMaxClusterGpus));
    }
    auto submit = ParseSecondsMs(row[c.idx[2]]);
    if (!submit) {
      return RowError(f, fmt::format("submit_time '{}' is not a time in seconds {}", row[c.idx[2]],
                                     SecondsRange("[0")));
    }
    auto dur = ParseSecondsMs(row[c.idx[3]]);
    if (!dur || *dur <= 0) return RowError(f, DurationError(row[c.idx[3]], dur));
    j.id = JobId(*id);
    j.gpus = static_cast<int>(*gpus);
    j.submit = *submit;
    j.duration = *dur;
    if (model_col) j.model = std::string(Trim(row[*model_col]));
    if (user_col) j.user = std::string(Trim(row[*user_col]));
    if (vc_col) j.vc = std::string(Trim(row[*vc_col]));
    if (name_col) j.name = std::string(Trim(row[*name_col]));
    if (attempts_col && !Trim(row[*attempts_col]).empty()) {
      Duration sum = 0;
      for (auto part : Split(Trim(row[*attempts_col]), ';')) {
        auto a = ParseSecondsMs(part);
        if (!a || *a <= 0) {
          return RowError(f, fmt::format("attempts '{}': '{}' is not a positive number of seconds",
                                         row[*attempts_col], part));
        }
        j.attempts.push_back(*a);
        sum += *a;
      }
      // Each attempt is rounded to the ms on its own: allow that much per attempt.
      if (std::llabs(sum - *dur) > static_cast<Duration>(j.attempts.size())) {
        return RowError(f, fmt::format("attempts '{}' sum to {} s, not the duration {} s",
                                       row[*attempts_col], ToSeconds(sum), ToSeconds(*dur)));
      }
      j.attempts.back() += *dur - sum;  // exact: the attempts sum to the duration
    }
    t.jobs.push_back(std::move(j));
  }
  return t;
}

StatusOr<Trace> ReadPhilly(CsvFile& f) {
  Columns c;
  if (Status st = c.Require(f, {"timestamp", "duration", "num_gpus"}); !st.ok()) return st;
  auto cluster_col = f.Column("cluster");
  auto user_col = f.Column("user");
  auto gpu_time_col = f.Column("gpu_time");
  Trace t{"philly", {}};
  t.jobs.reserve(f.RecordsLeft());
  std::vector<int64_t> stamps;
  std::vector<int> lines;  // of each row, for a timestamp too far from the earliest
  stamps.reserve(t.jobs.capacity());
  std::vector<std::string_view> row;
  int64_t next_id = 0;
  while (f.Next(row)) {
    if (row.size() != f.header().size()) {
      return RowError(f,
                      fmt::format("{} fields, the header has {}", row.size(), f.header().size()));
    }
    auto ts = ParseDateTime(row[c.idx[0]]);
    if (!ts)
      return RowError(f, fmt::format("timestamp '{}' is not YYYY-MM-DD HH:MM:SS", row[c.idx[0]]));
    auto dur = ParseSecondsMs(row[c.idx[1]]);
    if (!dur || *dur <= 0) return RowError(f, DurationError(row[c.idx[1]], dur));
    auto gpus = ParseInt(row[c.idx[2]]);
    if (!gpus || *gpus < 1 || *gpus > kMaxClusterGpus) {
      return RowError(f, fmt::format("num_gpus '{}' is not a positive integer (at most {})",
                                     row[c.idx[2]], kMaxClusterGpus));
    }
    // gpu_time is duration x num_gpus in every row of philly.csv; the simulator reads those
    // two, so a row where it disagrees has one of them wrong (it was ignored; found by a
    // tester). Empty: not given.
    if (gpu_time_col && !Trim(row[*gpu_time_col]).empty()) {
      const std::string_view text = Trim(row[*gpu_time_col]);
      const auto gt = ParseDouble(text);
      const double want = ToSeconds(*dur) * static_cast<double>(*gpus);
      // (Within half a second per GPU: a duration rounded to whole seconds after gpu_time.)
      if (!gt ||
          !(std::abs(*gt - want) <= std::max(0.5 * static_cast<double>(*gpus), 1e-6 * want))) {
        return RowError(
            f, fmt::format("gpu_time '{}' is not duration x num_gpus ({} x {} = {:g} GPU-s): one "
                           "of the three is wrong",
                           text, row[c.idx[1]], row[c.idx[2]], want));
      }
    }
    JobSpec j;
    j.id = JobId(next_id++);
    j.gpus = static_cast<int>(*gpus);
    j.duration = *dur;
    if (cluster_col) j.vc = std::string(Trim(row[*cluster_col]));
    if (user_col) j.user = std::string(Trim(row[*user_col]));
    stamps.push_back(*ts);
    lines.push_back(f.line());
    t.jobs.push_back(std::move(j));
  }
  if (!stamps.empty()) {
    int64_t origin = *std::min_element(stamps.begin(), stamps.end());
    for (size_t i = 0; i < t.jobs.size(); ++i) {
      if (stamps[i] - origin > kMaxInputSeconds) {
        return InvalidArgument(fmt::format(
            "{}:{}: timestamp is {} s after the trace's earliest, more than ten years ({} s)",
            f.path(), lines[i], stamps[i] - origin, kMaxInputSeconds));
      }
      t.jobs[i].submit = Seconds(stamps[i] - origin);
    }
  }
  return t;
}

// A header as an error message shows it: at most 200 bytes, control characters and bytes
// that are not UTF-8 escaped (a binary file's first bytes drove the terminal; found by a
// tester).
std::string HeaderForPeople(const std::vector<std::string>& header) {
  std::string text = Join(header, ",");
  if (text.size() > 200) text = text.substr(0, 200) + "...";
  return EscapeControl(text);
}

}  // namespace

void SortForSubmission(std::vector<JobSpec>& jobs) {
  std::sort(jobs.begin(), jobs.end(), [](const JobSpec& a, const JobSpec& b) {
    return a.submit != b.submit ? a.submit < b.submit : a.id < b.id;
  });
}

std::vector<JobSpec> Window(std::vector<JobSpec> jobs, Time from, Time to) {
  std::vector<JobSpec> out;
  for (auto& j : jobs) {
    if (j.submit < from || j.submit >= to) continue;
    j.submit -= from;
    out.push_back(std::move(j));
  }
  return out;
}

StatusOr<std::vector<JobSpec>> WindowOfDays(std::vector<JobSpec> jobs, const std::string& path,
                                            double from_day, double days) {
  if (jobs.empty()) return InvalidArgument(fmt::format("{}: the trace has no job", path));
  constexpr double kMsPerDay = 86400.0 * kMsPerSecond;
  if (from_day <= 0 && days <= 0) return jobs;
  Time first = kNever, last = 0;
  for (const JobSpec& j : jobs) {
    first = std::min(first, j.submit);
    last = std::max(last, j.submit);
  }
  jobs = Window(std::move(jobs), static_cast<Time>(from_day * kMsPerDay),
                days > 0 ? static_cast<Time>((from_day + days) * kMsPerDay) : kNever);
  if (jobs.empty()) {
    return InvalidArgument(fmt::format(
        "{}: no job is submitted in days {}..{} (--from-day {}{}); the trace's jobs are "
        "submitted from day {:.2f} to day {:.2f}",
        path, from_day, days > 0 ? fmt::format("{}", from_day + days) : "end", from_day,
        days > 0 ? fmt::format(" --days {}", days) : "", static_cast<double>(first) / kMsPerDay,
        static_cast<double>(last) / kMsPerDay));
  }
  return jobs;
}

StatusOr<Trace> ReadTrace(const std::string& path) {
  auto f = CsvFile::Open(path);
  if (!f.ok()) return f.status();
  StatusOr<Trace> t = InvalidArgument("");
  if (f->Column("job_id") && f->Column("num_gpu")) {
    t = ReadTiresias(*f);
  } else if (f->Column("timestamp") && f->Column("num_gpus")) {
    t = ReadPhilly(*f);
  } else {
    return InvalidArgument(
        fmt::format("{}:1: unknown trace format (header: {}); expected a Tiresias trace "
                    "(job_id,num_gpu,submit_time,...,duration) or a Philly trace "
                    "(timestamp,duration,num_gpus,...)",
                    path, HeaderForPeople(f->header())));
  }
  if (t.ok()) SortForSubmission(t->jobs);
  return t;
}

StatusOr<Topology> ResolveCluster(const std::string& arg) {
  std::error_code ec;  // a path that cannot even be checked is not a spec file either
  if (!std::filesystem::exists(arg, ec)) {
    auto t = Topology::Parse(arg);
    // A spec file's name that is not there (it was taken for a bad SWITCHESxNODESxGPUS).
    if (!t.ok() && (arg.find('/') != std::string::npos || arg.ends_with(".csv"))) {
      return NotFound(fmt::format(
          "cluster '{}': no such file (a cluster is SWITCHESxNODESxGPUS such as 8x32x8, or a "
          "cluster spec CSV file)",
          arg));
    }
    return t;
  }
  auto f = CsvFile::Open(arg);
  if (!f.ok()) return f.status();
  Columns c;
  if (Status st = c.Require(*f, {"num_switch", "num_node_p_switch", "num_gpu_p_node"}); !st.ok()) {
    return st;
  }
  std::vector<std::string_view> row;
  if (!f->Next(row))
    return InvalidArgument(fmt::format("{}: no cluster row after the header", arg));
  if (row.size() != f->header().size()) {
    return RowError(*f,
                    fmt::format("{} fields, the header has {}", row.size(), f->header().size()));
  }
  int dims[3];
  for (int i = 0; i < 3; ++i) {
    auto v = ParseInt(row[c.idx[i]]);
    if (!v || *v < 1 || *v > kMaxClusterGpus) {
      return RowError(*f, fmt::format("{} '{}' is not a positive integer", f->header()[c.idx[i]],
                                      row[c.idx[i]]));
    }
    dims[i] = static_cast<int>(*v);
  }
  // One cluster a file (a second row was dropped without a word; found by a tester).
  if (f->Next(row)) {
    return RowError(*f, "a second cluster row: a cluster spec file holds one cluster");
  }
  return Topology::Create(dims[0], dims[1], dims[2]);
}

}  // namespace tiresias
