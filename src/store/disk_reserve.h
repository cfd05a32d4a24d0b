// Room kept for serve's own state on the file system of its state directory (serve
// --disk-reserve). The journal must be written for serve to go on: a write that fails stops
// serve (LiveScheduler::MustOk) so that a restart replays a consistent state, and on a full
// disk that restart would fail too. So serve keeps a reserve file of `bytes` there, and
//   - when the free space drops under `bytes`, deletes it: the journal has that much room
//     while serve is "low" (it refuses new jobs, says so in its log, /v1/health and /metrics);
//   - when the free space is back to twice `bytes`, makes it again and is no longer low;
//   - while even less than kJournalRoom is free ("full": a job ate the reserve too), serve
//     pauses: it makes no decision and accepts no change, so nothing needs writing, until
//     there is room again. Jobs keep running meanwhile.
// The free space is only looked at now and then, and a job can fill the disk between a look
// and the step's commit (on a fast disk, megabytes in a millisecond): so the journal's own
// growth is kept allocated ahead, kJournalRoom past the end of its WAL file at every look
// (KeepRoomIn), and a commit writes into blocks serve already holds.
// A serve that stops on a full disk all the same releases the reserve first.
// What fills a disk in practice is jobs' output: a job's own log stops taking space while less
// than twice `bytes` is free (the shim's log pump, exec/log_pump.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/free_space.h"
#include "common/status.h"

namespace tiresias {

class DiskReserve {
 public:
  using FreeBytes = FreeBytesFn;
  // `path`: the reserve file; `bytes`: its size (0: none, never low, but full and paused all
  // the same under kJournalRoom, with that room kept past the journal's end); `free`: the free
  // space of its file system (FreeBytesOn its directory by default). Looks at the disk at most
  // every `check_every_ms` (statvfs on a network file system is a round trip; serve steps up to 50
  // times a second).
  DiskReserve(std::string path, int64_t bytes, FreeBytes free = nullptr, int check_every_ms = 100);

  struct Change {
    bool changed = false;  // entered or left the low state
    std::string message;   // what happened, for serve's log
  };
  // Looks at the free space and releases or remakes the reserve (see above).
  Change Check();
  // Deletes the reserve file now (serve is about to stop because a write failed).
  void Release();
  // Files kept kJournalRoom allocated past their end at every look (fallocate with
  // FALLOC_FL_KEEP_SIZE: their length, all their readers see, does not change), where they
  // exist and the file system allocates ahead. Not for the SQLite database file itself:
  // closing a second descriptor of it would drop SQLite's locks on it.
  void KeepRoomIn(std::vector<std::string> files) { room_in_ = std::move(files); }
  // Allocates kJournalRoom past the end of each of those files now (best effort); Check does
  // at every look.
  void KeepRoom() const;

  // The room one step of serve writes at most (a margin over a step's journal rows).
  static constexpr int64_t kJournalRoom = int64_t{4} << 20;

  bool low() const { return low_; }
  bool full() const { return full_; }
  int64_t free_bytes() const { return free_; }  // at the last Check
  int64_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }
  // Why new jobs are refused (while low or full), naming the directory and the space needed.
  std::string LowReason() const;
  // The same without the directory, for anyone to read (/v1/health).
  std::string Summary() const;

 private:
  // Makes the reserve file; false (and no file) if the space is not there.
  bool Make();

  std::string path_;
  std::vector<std::string> room_in_;
  std::string dir_;  // path_'s directory, as messages name it
  int64_t bytes_;
  FreeBytes free_fn_;
  int check_every_ms_;
  int64_t next_check_ms_ = 0;  // steady clock
  bool made_ = false;          // the file is there, as far as we know
  bool low_ = false;
  bool full_ = false;
  int64_t free_ = -1;
};

}  // namespace tiresias
