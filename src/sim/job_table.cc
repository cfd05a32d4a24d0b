// JobTable: see job_table.h.
#include "sim/job_table.h"

#include <utility>

namespace tiresias {

JobTable::JobTable(std::vector<JobSpec>&& jobs) {
  size_t name_bytes = 0, attempts = 0;  // reserved exactly: no growth beside the list
  for (const JobSpec& j : jobs) {
    name_bytes += j.name.size();
    attempts += j.attempts.size();
  }
  rows_.reserve(jobs.size());
  names_.reserve(name_bytes);
  attempts_.reserve(attempts);
  for (JobSpec& j : jobs) {
    names_ += j.name;
    attempts_.insert(attempts_.end(), j.attempts.begin(), j.attempts.end());
    rows_.push_back(Row{.id = j.id.value(),
                        .submit = j.submit,
                        .duration = j.duration.value_or(-1),
                        .gpus = j.gpus,
                        .user = Intern(j.user),
                        .vc = Intern(j.vc),
                        .model = Intern(j.model),
                        .name_end = static_cast<uint32_t>(names_.size()),
                        .attempts_end = static_cast<uint32_t>(attempts_.size())});
  }
  std::vector<JobSpec>().swap(jobs);
}

uint32_t JobTable::Intern(const std::string& s) {
  if (s.empty()) return 0;
  auto [it, added] = index_.try_emplace(s, static_cast<uint32_t>(strings_.size()));
  if (added) strings_.push_back(s);
  return it->second;
}

JobSpec JobTable::spec(size_t i) const {
  const Row& r = rows_[i];
  const uint32_t name_from = i ? rows_[i - 1].name_end : 0;
  const uint32_t attempts_from = i ? rows_[i - 1].attempts_end : 0;
  JobSpec j{.id = JobId(r.id),
            .gpus = r.gpus,
            .submit = r.submit,
            .name = names_.substr(name_from, r.name_end - name_from),
            .user = strings_[r.user],
            .vc = strings_[r.vc],
            .model = strings_[r.model]};
  if (r.duration >= 0) j.duration = r.duration;
  j.attempts.assign(attempts_.begin() + attempts_from, attempts_.begin() + r.attempts_end);
  return j;
}

}  // namespace tiresias
