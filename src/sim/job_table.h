// A job list stored compactly, for replays of a million jobs: a JobSpec is ~190 bytes (four
// strings, an optional, a vector), a row here is 48 plus its name's characters. Users, VCs and
// models are kept once each, names end to end in one buffer, attempts in one vector. The
// simulator reads the jobs through it (RunSimulation) and builds each JobSpec as it submits it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/job.h"

namespace tiresias {

class JobTable {
 public:
  JobTable() = default;
  // Takes the jobs: the list is left empty, its memory freed.
  explicit JobTable(std::vector<JobSpec>&& jobs);
  size_t size() const { return rows_.size(); }
  bool empty() const { return rows_.empty(); }
  JobId id(size_t i) const { return JobId(rows_[i].id); }
  Time submit(size_t i) const { return rows_[i].submit; }
  bool has_duration(size_t i) const { return rows_[i].duration >= 0; }
  // The job as it was given.
  JobSpec spec(size_t i) const;

 private:
  struct Row {
    int64_t id;
    Time submit;
    Duration duration;  // -1: none
    int32_t gpus;
    uint32_t user, vc, model;  // into strings_ (0 = "")
    uint32_t name_end;         // names_[previous row's name_end, name_end)
    uint32_t attempts_end;     // attempts_[previous row's attempts_end, attempts_end)
  };
  uint32_t Intern(const std::string& s);

  std::vector<Row> rows_;
  std::string names_;
  std::vector<Duration> attempts_;
  std::vector<std::string> strings_{""};
  std::unordered_map<std::string, uint32_t> index_;
};

}  // namespace tiresias
