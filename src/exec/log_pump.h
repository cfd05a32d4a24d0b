// The job's output on its way to its log. The shim gives the job a pipe for stdout and stderr
// (one per task with --tasks-per-gpu, joined into whole lines: LineJoiner) and copies what
// comes through it here, so that a job that writes without end cannot fill the
// file system that holds serve's state (serve --max-log-size, --disk-reserve).
//
// Size: the log holds at most `limit` bytes of the job's output (and lines of tiresias'). A
// write that would pass the limit moves the log to `<log>.1` (replacing an older one) and
// starts a new log with a line that says so: the newest output, the part that says how a job
// ended, is always kept, and one job's log takes at most twice the limit. Rotations fall on
// a line's end: a line the log is in the middle of is finished first, up to min(limit, 64 KiB)
// past the limit (a longer one is cut). A rotation that fails (a log deleted by hand is simply
// started again) is tried again a second later; meanwhile output is dropped.
// Room: while the log's file system has less than `keep_free` bytes free, output is dropped
// (with a line saying so, and how much, once there is room again): serve's journal needs that
// room more. The free space is looked at every `recheck_ms` or min(16 MiB, keep_free / 8)
// written, whichever comes first. Output that cannot be written (a full disk all the same) is
// dropped too: the job is never blocked by its log.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/free_space.h"
#include "common/status.h"

namespace tiresias {

// Writes as much of `s` to `fd` as it can (retrying short writes and EINTR): the bytes written,
// all of them unless an error stopped it.
size_t WriteAllTo(int fd, std::string_view s);

class LogPump {
 public:
  using FreeBytes = FreeBytesFn;
  // `fds`: the descriptors open on the log at `path` (the first one is written to; every one is
  // moved to the new log on a rotation). The log's current size counts against the limit.
  // `limit` <= 0: none; `keep_free` <= 0: none. `free`: the free space of its file system
  // (FreeBytesOn its directory by default).
  // `recheck_ms`: see Room above (0: at every write).
  LogPump(std::string path, int64_t limit, int64_t keep_free, std::vector<int> fds,
          FreeBytes free = nullptr, int recheck_ms = 100);

  void Write(std::string_view data);
  // A log deleted by hand is started again (looked at every `recheck_ms`; Write does, and
  // the shim before a line of its own).
  void StartAgainIfRemoved();
  // Before the shim's last line: the log started again if deleted, and the count of output
  // dropped for want of room if it is still being dropped (found by a tester: said only when
  // the job wrote again with room back, so a job that did not lost it).
  void Closing();
  int rotations() const { return rotations_; }
  int64_t dropped() const { return dropped_total_; }  // bytes of output dropped in all

 private:
  // Moves the log to `<path>.1` and points every fd at a new one; false if it cannot.
  bool Rotate();
  // Points every fd at a new log at `path`, which starts with the line `why`; false (the
  // output dropped for a second, said in the old log) if it cannot.
  bool StartLog(const std::string& why, int64_t now);
  bool CannotStartLog(int64_t now);  // says errno's reason (once); false
  // Whether `n` more bytes leave `keep_free` free; says when output starts or stops being
  // dropped for want of room.
  bool Room(size_t n);
  void SayDropped();  // how much output was dropped since room ran out; no longer dropping
  void Note(const std::string& what);  // one line of tiresias' in the log

  std::string path_;
  int64_t limit_;
  int64_t keep_free_;
  std::vector<int> fds_;
  FreeBytes free_;
  int64_t size_ = 0;
  int rotations_ = 0;
  int64_t overshoot_;            // how far past the limit a line is finished before rotating
  bool mid_line_ = false;        // the log does not end with a newline
  int64_t retry_rotate_ms_ = 0;  // steady clock: a rotation failed; drop until then
  int64_t dropping_ = -1;        // bytes dropped since the disk got full; -1: not dropping
  int64_t dropped_total_ = 0;
  int recheck_ms_;
  int64_t next_check_ms_ = 0;        // steady clock
  int64_t next_link_check_ms_ = 0;   // steady clock
  bool rotation_pending_ = false;    // the log was moved to .1, its successor not opened yet
  bool cannot_start_said_ = false;   // since the last log started
  int64_t written_since_check_ = 0;  // bytes
  bool room_ = true;                 // as of the last look
};

// One task's output on its way to a LogPump that other tasks share (--tasks-per-gpu): passed
// on in whole lines, so that tasks writing at once never split each other's lines (they used
// to share one pipe, which keeps only writes of up to 4 KiB whole). A line ends at '\n' or at
// '\r' (a progress bar redrawn in place); one longer than kMaxHeld is passed on in pieces, and
// a line begun and not ended is passed on kHoldMs after it began (Due, Flush): a prompt or a
// bar without an end still shows.
class LineJoiner {
 public:
  static constexpr size_t kMaxHeld = 64 << 10;
  static constexpr int64_t kHoldMs = 500;
  explicit LineJoiner(LogPump& log) : log_(&log) {}
  // `now_ms`: a steady clock, for how long a partial line is held.
  void Write(std::string_view data, int64_t now_ms);
  // Passes on what is held (the task ended, or it is due).
  void Flush();
  // When the partial line held is due, or -1 when none is held.
  int64_t Due() const { return held_.empty() ? -1 : held_since_ + kHoldMs; }

 private:
  LogPump* log_;
  std::string held_;  // a line begun and not ended
  int64_t held_since_ = 0;
};

}  // namespace tiresias
