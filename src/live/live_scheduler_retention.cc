// LiveScheduler's retention of ended jobs' directories (ServeConfig::keep_finished, serve
// --keep-finished): a job's directory (its own log, checkpoints, Slurm files) is removed that
// long after the job ended (renamed in the loop, removed by a TreeReaper off it), journalled as
// `cleanup`; its record stays, for history and show.
// A job that asked to keep its checkpoints keeps its directory. See live_scheduler.h.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <utility>

#include "live/live_scheduler.h"

namespace tiresias {

std::string RetentionText(Duration d) {
  const int64_t s = d / kMsPerSecond;
  if (s > 0 && s % 86400 == 0) return fmt::format("{}d", s / 86400);
  if (s > 0 && s % 3600 == 0) return fmt::format("{}h", s / 3600);
  if (s > 0 && s % 60 == 0) return fmt::format("{}m", s / 60);
  return fmt::format("{}s", s);
}

void LiveScheduler::NoteEndedDir(JobId id) {
  if (cfg_.keep_finished <= 0) return;
  const JobRecord& r = records_.at(id);
  if (r.keep_checkpoints || r.end < 0) return;
  std::error_code ec;
  if (std::filesystem::exists(JobDir(id), ec)) ended_dirs_.insert({r.end, id});
}

void LiveScheduler::StartRetention() {
  auto start = [&] {
    if (!reaper_) {
      reaper_ = std::make_unique<TreeReaper>([](const std::string& path, const Status& why) {
        std::cerr << "tiresias serve: removing " << path << ": " << why.message() << "\n";
      });
    }
  };
  if (cfg_.keep_finished > 0) start();
  // What an earlier serve renamed and did not finish removing (also if retention is off now).
  std::error_code ec;
  for (const auto& d : std::filesystem::directory_iterator(JobsDir(), ec)) {
    if (!d.path().filename().string().starts_with(kRemovedPrefix)) continue;
    start();
    reaper_->Remove(d.path());
  }
}

Time LiveScheduler::RemoveEndedDirs(Time now, bool journal_now) {
  if (journal_now) {
    for (const Event& e : std::exchange(unjournalled_, {})) Journal(e);
  }
  for (size_t removed = 0; !ended_dirs_.empty(); ++removed) {
    const auto [end, id] = *ended_dirs_.begin();
    if (end + cfg_.keep_finished > now) return end + cfg_.keep_finished;
    if (removed == kRemovedPerStep) return now;  // the rest in the next step
    ended_dirs_.erase(ended_dirs_.begin());
    if (procs_.contains(id)) continue;  // RetireEnded notes it again once it is gone
    // Renamed now (gone from where it was), removed off the loop.
    const std::string dir = JobDir(id);
    const auto renamed = std::filesystem::path(JobsDir()) / (kRemovedPrefix + id.str());
    std::error_code ec;
    std::filesystem::rename(dir, renamed, ec);
    if (ec) {
      if (ec != std::errc::no_such_file_or_directory) {
        Warn(fmt::format("job {}: removing its directory: {}", id.value(), ec.message()));
      }
      continue;
    }
    reaper_->Remove(renamed.string());
    Event e{.t = now,
            .kind = EventKind::kCleanup,
            .job = id,
            .detail = {{"dir", dir}, {"after", RetentionText(cfg_.keep_finished)}}};
    if (journal_now) {
      Journal(e);
    } else {
      unjournalled_.push_back(std::move(e));
    }
  }
  return kNever;
}

void LiveScheduler::FlushOutsideStep() {
  // Narrative rows and records (no decision): a write that fails (the disk is full) leaves
  // them for later.
  if ((unjournalled_.empty() && unsaved_.empty()) || !journal_blocked_.empty()) return;
  Store::Txn txn(*store_);
  if (!txn.begun().ok()) return;
  for (const Event& e : unjournalled_) {
    if (!Note(e).ok()) return;  // rolled back
  }
  if (!SaveRows({unsaved_.begin(), unsaved_.end()}).ok()) return;
  if (txn.Commit().ok()) {
    unjournalled_.clear();
    unsaved_.clear();
  }
}

std::string LiveScheduler::Removed(const JobRecord& r) const {
  std::error_code ec;
  // (A job that never started, its launch failed or never came, never had a log.)
  if (cfg_.keep_finished <= 0 || !IsTerminal(r.state) || r.end < 0 || r.first_start < 0 ||
      r.end + cfg_.keep_finished > last_now_ || std::filesystem::exists(JobDir(r.id), ec)) {
    return "";
  }
  return fmt::format(
      "job {}: its log was removed with its directory {} after it ended (serve "
      "--keep-finished)",
      RefOf(r), RetentionText(cfg_.keep_finished));
}

}  // namespace tiresias
