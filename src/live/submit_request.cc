// The rules every job submission meets (see submit_request.h).
#include "live/submit_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <tuple>

#include "common/strings.h"

namespace tiresias {

bool IsSchedulerEnv(std::string_view name) {
  static constexpr std::string_view kSet[] = {
      "CUDA_VISIBLE_DEVICES", "WORLD_SIZE",       "MASTER_ADDR",    "MASTER_PORT", "RANK",
      "LOCAL_RANK",           "LOCAL_WORLD_SIZE", "NODE_RANK",      "PET_NNODES",  "PET_NODE_RANK",
      "PET_NPROC_PER_NODE",   "PET_MASTER_ADDR",  "PET_MASTER_PORT"};
  return name.starts_with("TIRESIAS_") ||
         std::find(std::begin(kSet), std::end(kSet), name) != std::end(kSet);
}

std::optional<Duration> SubmitRequest::duration() const {
  if (!duration_s) return std::nullopt;
  // At least 1 ms: a positive estimate never becomes none (1e-9 s was stored as 0 ms).
  return std::max<Duration>(1, static_cast<Duration>(*duration_s * kMsPerSecond));
}

namespace {

std::optional<int64_t> Number(std::string_view s) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  return ParseInt(s);
}

StatusOr<std::vector<Dependency>> ParseDependencies(const std::string& text) {
  std::vector<Dependency> out;
  for (auto part : Split(text, ',')) {
    const auto fields = Split(part, ':');
    auto bad = [&](const std::string& why) {
      return InvalidArgument(
          fmt::format("field 'dependency': '{}': {} (e.g. afterok:12:13, "
                      "afterany:14, afternotok:15, afterok:16_3, singleton)",
                      part, why));
    };
    if (auto single = ParseDependency(part, ""); single && fields.size() == 1) {
      out.push_back(*single);  // singleton
      continue;
    }
    if (fields.size() < 2) return bad("expected KIND:JOB[:JOB...] or singleton");
    if (!ParseDependency(fields[0], "1")) {
      return bad("unknown kind (afterok, afterany, afternotok, singleton)");
    }
    for (size_t i = 1; i < fields.size(); ++i) {
      auto d = ParseDependency(fields[0], fields[i]);
      if (!d)
        return bad(
            fmt::format("'{}' is not a job id (ID, or ID_INDEX: one array task)", fields[i]));
      out.push_back(*d);
    }
  }
  return out;
}

// "0-99", "1,3,5-7", "0-15:4", each with an optional "%N" limit at the end.
Status ParseArray(const std::string& text, SubmitPlan& plan) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument(
        fmt::format("field 'array': '{}': {} (e.g. 0-99, 0-99%8, 1,3,5-7, 0-15:4)", text, why));
  };
  std::string_view spec = text;
  if (const size_t pct = spec.find('%'); pct != std::string_view::npos) {
    auto limit = Number(spec.substr(pct + 1));
    if (!limit || *limit < 1) return bad("the limit after % must be a positive number");
    plan.array_limit = static_cast<int>(std::min<int64_t>(*limit, kMaxArrayTasks));
    spec = spec.substr(0, pct);
  }
  std::vector<int> idx;
  for (auto part : Split(spec, ',')) {
    int64_t step = 1;
    if (const size_t colon = part.find(':'); colon != std::string_view::npos) {
      auto st = Number(part.substr(colon + 1));
      if (!st || *st < 1) return bad("a step must be a positive number");
      step = *st;
      part = part.substr(0, colon);
    }
    const size_t dash = part.find('-');
    auto lo = Number(part.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : Number(part.substr(dash + 1));
    if (!lo || !hi || *hi < *lo) return bad(fmt::format("'{}' is not an index or a range", part));
    if (*hi > kMaxArrayIndex) {
      return bad(fmt::format("index {} is over the largest, {}", *hi, kMaxArrayIndex));
    }
    for (int64_t i = *lo; i <= *hi; i += step) {
      if (idx.size() >= static_cast<size_t>(kMaxArrayTasks)) {
        return bad(fmt::format("more than {} tasks", kMaxArrayTasks));
      }
      idx.push_back(static_cast<int>(i));
    }
  }
  std::sort(idx.begin(), idx.end());
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  plan.array_indices = std::move(idx);
  return Status::Ok();
}

Status CheckPattern(const char* field, const std::string& p) {
  if (p.find('\0') != std::string::npos) {
    return InvalidArgument(fmt::format("field '{}': contains a NUL byte", field));
  }
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != '%') continue;
    if (i + 1 >= p.size() || std::string_view("jaAux%").find(p[i + 1]) == std::string_view::npos) {
      return InvalidArgument(fmt::format(
          "field '{}': '{}': after % expected j (job id), a (array index), A (array id), u "
          "(user), x (name) or %",
          field, p));
    }
    ++i;
  }
  return Status::Ok();
}

}  // namespace

namespace {

// The seconds a Slurm time names (any value, 0 included), or why it names none.
StatusOr<int64_t> SlurmSeconds(std::string_view text) {
  auto bad = [&] {
    return InvalidArgument(fmt::format(
        "'{}' is not a Slurm time: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS", text));
  };
  int64_t days = 0;
  std::string_view rest = text;
  const size_t dash = text.find('-');
  if (dash != std::string_view::npos) {
    auto d = Number(text.substr(0, dash));
    if (!d) return bad();
    days = *d;
    rest = text.substr(dash + 1);
  }
  std::vector<int64_t> parts;
  for (auto f : Split(rest, ':')) {
    auto v = Number(f);
    if (!v) return bad();
    parts.push_back(*v);
  }
  int64_t seconds = 0;
  if (dash != std::string_view::npos) {  // days-hours[:minutes[:seconds]]
    if (parts.empty() || parts.size() > 3) return bad();
    seconds = days * 86400 + parts[0] * 3600 + (parts.size() > 1 ? parts[1] * 60 : 0) +
              (parts.size() > 2 ? parts[2] : 0);
  } else if (parts.size() == 1) {  // minutes
    seconds = parts[0] * 60;
  } else if (parts.size() == 2) {  // minutes:seconds
    seconds = parts[0] * 60 + parts[1];
  } else if (parts.size() == 3) {  // hours:minutes:seconds
    seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];
  } else {
    return bad();
  }
  return seconds;
}

}  // namespace

StatusOr<Duration> ParseSlurmTime(std::string_view text) {
  auto seconds = SlurmSeconds(text);
  if (!seconds.ok()) return seconds.status();
  if (*seconds < 1 || *seconds > static_cast<int64_t>(kMaxRequestDurationS)) {
    return InvalidArgument(fmt::format("'{}': a time limit must be 1 s to ten years", text));
  }
  return Seconds(*seconds);
}

bool NoTimeLimit(std::string_view text) {
  std::string t(text);
  for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (t == "-1" || t == "UNLIMITED" || t == "INFINITE") return true;
  // Zero in any form (0, 00:00, 0:0:0, 0-0): as Slurm, no limit.
  auto seconds = SlurmSeconds(text);
  return seconds.ok() && *seconds == 0;
}

std::string SlurmTime(Duration d) {
  const int64_t s = (d + kMsPerSecond - 1) / kMsPerSecond;
  const int64_t days = s / 86400;
  const std::string hms = fmt::format("{:02}:{:02}:{:02}", s % 86400 / 3600, s % 3600 / 60, s % 60);
  return days > 0 ? fmt::format("{}-{}", days, hms) : hms;
}

std::string ExpandOutputPattern(std::string_view pattern, int64_t job, int64_t array_id,
                                int array_index, std::string_view user, std::string_view name) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 >= pattern.size()) {
      out += pattern[i];
      continue;
    }
    switch (pattern[++i]) {
      case 'j':
        out += std::to_string(job);
        break;
      case 'a':  // (Slurm's NO_VAL for a job that is not an array's task)
        out += array_index < 0 ? "4294967294" : std::to_string(array_index);
        break;
      case 'A':
        out += std::to_string(array_id);
        break;
      case 'u':
        out += user;
        break;
      case 'x':
        out += name;
        break;
      default:
        out += pattern[i];
    }
  }
  return out;
}

StatusOr<SubmitPlan> Plan(const SubmitRequest& r) {
  if (r.argv.empty() || r.argv[0].empty()) {
    return InvalidArgument("field 'argv': missing (the command to run)");
  }
  // `B=2 CMD` is a shell's assignment; exec would look for a program "B=2" and fail at launch.
  if (IsAssignment(r.argv[0])) {
    return InvalidArgument(fmt::format(
        "field 'argv': its first word '{}' is a variable's assignment, not a program: set it "
        "in 'env', or run the command through env (argv [\"env\", \"{}\", ...])",
        r.argv[0], r.argv[0]));
  }
  // execve takes C strings: a NUL byte would silently cut an argument (or the directory, or a
  // value) short, so the job would run something other than what was asked.
  for (size_t i = 0; i < r.argv.size(); ++i) {
    if (r.argv[i].find('\0') != std::string::npos) {
      return InvalidArgument(fmt::format("field 'argv': argument {} contains a NUL byte", i));
    }
  }
  if (r.cwd.find('\0') != std::string::npos) {
    return InvalidArgument("field 'cwd': contains a NUL byte");
  }
  if (!r.cwd.empty() && r.cwd[0] != '/') {  // relative to what? serve's own directory is no answer
    return InvalidArgument(fmt::format("field 'cwd': '{}' is not an absolute path", r.cwd));
  }
  if (r.gpus < 1 || r.gpus > kMaxRequestGpus) {
    return InvalidArgument(
        fmt::format("field 'gpus': expected an integer in 1..{}, got {}", kMaxRequestGpus, r.gpus));
  }
  if (r.tasks_per_gpu != 0 && r.tasks_per_gpu != 1) {
    return InvalidArgument(fmt::format(
        "field 'tasks_per_gpu': expected 0 (one process for all the job's GPUs) or 1 (one "
        "process per GPU), got {}",
        r.tasks_per_gpu));
  }
  if (r.duration_s && !(*r.duration_s > 0 && *r.duration_s <= kMaxRequestDurationS)) {
    return InvalidArgument(fmt::format(
        "field 'duration_s': expected a positive number of seconds (at most ten years), got {}",
        *r.duration_s));
  }
  if (!(r.stop_at_checkpoint_s >= 0 && r.stop_at_checkpoint_s <= kMaxStopAtCheckpointS)) {
    return InvalidArgument(
        fmt::format("field 'stop_at_checkpoint_s': expected 0..{} seconds, got {}",
                    kMaxStopAtCheckpointS, r.stop_at_checkpoint_s));
  }
  for (const auto& [k, v] : r.env) {
    if (k.empty() || k.find('=') != std::string::npos || k.find('\0') != std::string::npos) {
      return InvalidArgument(fmt::format("field 'env': '{}' is not a variable name", k));
    }
    if (v.find('\0') != std::string::npos) {
      return InvalidArgument(fmt::format("field 'env': the value of {} contains a NUL byte", k));
    }
    if (IsSchedulerEnv(k)) {
      return InvalidArgument(
          k.starts_with("TIRESIAS_")
              ? fmt::format("field 'env': {}: the TIRESIAS_ prefix is the scheduler's own (it "
                            "sets such variables for each run); choose another name",
                            k)
              : fmt::format(
                    "field 'env': {} is set by the scheduler for each run and cannot be given", k));
    }
  }
  // Sizes: one request is stored once per task, and listed by every `ls`.
  size_t argv_bytes = 0, env_bytes = 0;
  for (const auto& a : r.argv) argv_bytes += a.size() + 1;
  for (const auto& [k, v] : r.env) env_bytes += k.size() + v.size() + 2;
  for (const auto& [field, size, most] :
       {std::tuple{"name", r.name.size(), kMaxNameBytes},
        std::tuple{"model", r.model.size(), kMaxNameBytes},
        std::tuple{"vc", r.vc.size(), kMaxNameBytes},
        std::tuple{"cwd", r.cwd.size(), kMaxPathBytes},
        std::tuple{"output", r.output.size(), kMaxPathBytes},
        std::tuple{"error", r.error.size(), kMaxPathBytes},
        std::tuple{"argv", argv_bytes, kMaxArgvBytes}, std::tuple{"env", env_bytes, kMaxEnvBytes},
        std::tuple{"dependency", r.dependency.size(), kMaxPathBytes},
        std::tuple{"array", r.array.size(), kMaxPathBytes},
        std::tuple{"time", r.time.size(), kMaxNameBytes}}) {
    if (size > most) {
      return InvalidArgument(
          fmt::format("field '{}': {} bytes, more than the {} allowed", field, size, most));
    }
  }
  SubmitPlan plan;
  if (!r.time.empty() && !NoTimeLimit(r.time)) {
    auto t = ParseSlurmTime(r.time);
    if (!t.ok()) return InvalidArgument("field 'time': " + t.status().message());
    plan.time_limit = *t;
  }
  if (!r.dependency.empty()) {
    auto d = ParseDependencies(r.dependency);
    if (!d.ok()) return d.status();
    plan.dependencies = std::move(*d);
  }
  if (!r.array.empty()) {
    if (Status s = ParseArray(r.array, plan); !s.ok()) return s;
    const size_t each = argv_bytes + env_bytes + r.name.size() + r.cwd.size() + r.model.size() +
                        r.output.size() + r.error.size() + r.dependency.size() + r.array.size();
    if (each * plan.array_indices.size() > kMaxArrayBytes) {
      return InvalidArgument(fmt::format(
          "field 'array': {} tasks of {} bytes each are more than the {} MiB an array may store: "
          "fewer tasks, or a smaller command line and environment (a file the tasks read)",
          plan.array_indices.size(), each, kMaxArrayBytes >> 20));
    }
  }
  for (const auto& [field, p] : {std::pair{"output", &r.output}, std::pair{"error", &r.error}}) {
    if (Status s = CheckPattern(field, *p); !s.ok()) return s;
  }
  return plan;
}

}  // namespace tiresias
