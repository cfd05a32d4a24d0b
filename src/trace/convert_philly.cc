// The Philly cluster_job_log converter (rules in convert.h). The log is one JSON list of
// jobs; it is parsed one job at a time (each job object is handed over and discarded as soon
// as it is complete), so the whole log is never held as a document.
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/input_file.h"
#include "trace/convert.h"
#include "trace/trace_reader.h"

namespace tiresias {
namespace {

// A time field: "YYYY-MM-DD HH:MM:SS", or null / "None" / "" for none.
std::optional<int64_t> TimeOf(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_string()) return std::nullopt;
  return ParseDateTime(j[key].get<std::string>());
}

std::string Text(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) return "";
  if (j[key].is_string()) return j[key].get<std::string>();
  if (j[key].is_null()) return "";
  return j[key].dump();
}

void OneJob(const nlohmann::json& job, int64_t index, const std::string& path, Converted& c) {
  ++c.report.records;
  const std::string id = Text(job, "jobid");
  const std::string where =
      fmt::format("{}: job #{}{}", path, index, id.empty() ? "" : " (" + id + ")");
  if (!job.is_object()) {
    c.report.Drop("not a JSON object", where);
    return;
  }
  auto submit = TimeOf(job, "submitted_time");
  if (!submit) {
    c.report.Drop("no submitted_time", where);
    return;
  }
  if (!job.contains("attempts") || !job["attempts"].is_array() || job["attempts"].empty()) {
    c.report.Drop("no attempts (it never ran)", where);
    return;
  }
  int gpus = 0;
  std::vector<Duration> runs;
  // Notes on attempts left out, said under "kept" only if their job is (a job left out for
  // them was counted as kept with them; found by a tester).
  std::vector<std::string> attempt_notes;
  bool lacking = false, reversed = false;  // why attempts were left out
  for (const auto& a : job["attempts"]) {
    auto start = a.is_object() ? TimeOf(a, "start_time") : std::nullopt;
    auto end = a.is_object() ? TimeOf(a, "end_time") : std::nullopt;
    if (!start) {
      attempt_notes.emplace_back("attempts without a start_time (left out of their job)");
      lacking = true;
      continue;
    }
    if (!end) {
      attempt_notes.emplace_back(
          "attempts without an end_time, running when the log ended (left out)");
      lacking = true;
      continue;
    }
    if (*end < *start) {
      attempt_notes.emplace_back("attempts that end before they start (left out)");
      reversed = true;
      continue;
    }
    int n = 0;
    if (a.contains("detail") && a["detail"].is_array()) {
      for (const auto& d : a["detail"]) {
        if (d.is_object() && d.contains("gpus") && d["gpus"].is_array()) {
          n += static_cast<int>(d["gpus"].size());
        }
      }
    }
    gpus = std::max(gpus, n);
    runs.push_back(Seconds(*end - *start));
  }
  if (runs.empty()) {  // (one that ends before it starts has both; found by a tester)
    c.report.Drop(!reversed ? "no complete attempt (every attempt lacks a start or an end)"
                  : !lacking
                      ? "no valid attempt (every attempt ends before it starts)"
                      : "no complete attempt (each lacks a start or an end, or ends before it "
                        "starts)",
                  where);
    return;
  }
  if (gpus == 0) {
    c.report.Drop("no GPUs listed in any complete attempt", where);
    return;
  }
  Duration total = 0;
  for (Duration r : runs) total += r;
  if (total <= 0) {
    c.report.Drop("zero run time", where);
    return;
  }
  // Zero-length attempts add nothing to replay.
  std::erase(runs, Duration{0});
  JobSpec j;
  j.id = JobId(static_cast<int64_t>(c.jobs.size()));
  j.gpus = gpus;
  j.submit = Seconds(*submit);
  j.duration = total;
  j.name = id;
  j.user = Text(job, "user");
  j.vc = Text(job, "vc");
  if (runs.size() > 1) {
    j.attempts = runs;
    c.report.Note("jobs with more than one attempt (attempts kept)");
  }
  for (const std::string& n : attempt_notes) c.report.Note(n);
  c.report.Note(fmt::format("status {}", Text(job, "status")));
  c.jobs.push_back(std::move(j));
}

}  // namespace

StatusOr<Converted> ConvertPhillyJobLog(const std::string& path) {
  auto opened = OpenInput(path, "Philly's cluster_job_log (JSON)");
  if (!opened.ok()) return opened.status();
  std::ifstream& in = *opened;
  Converted c;
  c.report.format = "philly-joblog";
  int64_t index = 0;
  bool top_is_array = false;
  // Each job (an object at depth 1 of the top-level list) is converted when it is complete
  // and then discarded (the callback returns false for it).
  nlohmann::json::parser_callback_t cb = [&](int depth, nlohmann::json::parse_event_t event,
                                             nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (depth == 0 && event == E::array_start) top_is_array = true;
    if (depth == 1 && (event == E::object_end || event == E::value)) {
      OneJob(parsed, index++, path, c);
      return false;
    }
    return true;
  };
  try {
    const nlohmann::json rest = nlohmann::json::parse(in, cb);  // jobs were handled and dropped
    (void)rest;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(
        fmt::format("{}: not a JSON list of jobs (after {} jobs): {}", path, index, e.what()));
  }
  if (!top_is_array) {
    return InvalidArgument(fmt::format(
        "{}: a Philly cluster_job_log is a JSON list of jobs ([{{\"jobid\": ..., \"attempts\": "
        "[...]}}, ...])",
        path));
  }
  c.Finish();
  return c;
}

}  // namespace tiresias
