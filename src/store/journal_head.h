// What makes a damaged or rolled-back journal detectable: every journal row carries a
// checksum chained over the row before it (SHA-256 of the previous sum and the row), and a
// small head file beside the database records the last committed row's seq and sum and the
// highest job id ever given out. SQLite cannot tell a journal that lost its WAL, or was
// truncated or replaced, from a young one; the head file, written after every commit, can.
// The head may lag the database (a crash between the commit and its write) but never lead it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tiresias {

// The sum of the empty journal, the first row's predecessor.
inline constexpr std::string_view kJournalGenesis = "0";

// The checksum of a journal row: hex SHA-256 over the previous sum and the row's fields.
std::string ChainSum(std::string_view prev_sum, int64_t seq, int64_t t, std::string_view kind,
                     int64_t job, std::string_view detail);

struct JournalHead {
  int64_t seq = 0;  // the last committed journal row (0: none)
  std::string sum = std::string(kJournalGenesis);
  int64_t max_job = 0;  // the highest job id ever given out
};

// `<db path>.head`
std::string JournalHeadPath(const std::string& db_path);
// nullopt when the file does not exist; an error naming the file when it is unreadable or
// its record fails its own checksum.
StatusOr<std::optional<JournalHead>> ReadJournalHead(const std::string& path);

// The head file, kept open: each write replaces one fixed-size record (a JSON object padded
// to kHeadRecordBytes, with a checksum of its own) in place with one pwrite, so a commit pays
// microseconds, not a new file and a rename. A record torn by a power loss fails its checksum.
class JournalHeadFile {
 public:
  static constexpr size_t kHeadRecordBytes = 256;
  static StatusOr<std::unique_ptr<JournalHeadFile>> Open(const std::string& path, bool durable);
  ~JournalHeadFile();
  Status Write(const JournalHead& head);

 private:
  JournalHeadFile(int fd, std::string path, bool durable)
      : fd_(fd), path_(std::move(path)), durable_(durable) {}
  int fd_;
  std::string path_;
  bool durable_;
};

}  // namespace tiresias
