// The journal's checksum chain and head file (see journal_head.h).
#include "store/journal_head.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/sha256.h"

namespace tiresias {

std::string ChainSum(std::string_view prev_sum, int64_t seq, int64_t t, std::string_view kind,
                     int64_t job, std::string_view detail) {
  const std::string data =
      fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", prev_sum, seq, t, kind, job, detail);
  return Sha256Hex(data);
}

std::string JournalHeadPath(const std::string& db_path) {
  return db_path + ".head";
}

namespace {

// The record's own checksum: over its three fields.
std::string RecordCheck(const JournalHead& h) {
  return ChainSum("head", h.seq, h.max_job, h.sum, 0, "");
}

}  // namespace

StatusOr<std::optional<JournalHead>> ReadJournalHead(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return std::optional<JournalHead>();
    return IoError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  auto damaged = [&] {
    return IoError(fmt::format("{}: damaged journal head (a torn or altered record)", path));
  };
  if (!j.is_object() || !j.contains("seq") || !j["seq"].is_number_integer() || !j.contains("sum") ||
      !j["sum"].is_string() || !j.contains("max_job") || !j["max_job"].is_number_integer() ||
      !j.contains("check") || !j["check"].is_string()) {
    return damaged();
  }
  JournalHead h{.seq = j["seq"].get<int64_t>(),
                .sum = j["sum"].get<std::string>(),
                .max_job = j["max_job"].get<int64_t>()};
  if (j["check"].get<std::string>() != RecordCheck(h)) return damaged();
  return std::optional<JournalHead>(h);
}

StatusOr<std::unique_ptr<JournalHeadFile>> JournalHeadFile::Open(const std::string& path,
                                                                 bool durable) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return IoError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  return std::unique_ptr<JournalHeadFile>(new JournalHeadFile(fd, path, durable));
}

JournalHeadFile::~JournalHeadFile() {
  close(fd_);
}

Status JournalHeadFile::Write(const JournalHead& head) {
  nlohmann::json j = {{"seq", head.seq},
                      {"sum", head.sum},
                      {"max_job", head.max_job},
                      {"check", RecordCheck(head)}};
  std::string rec = j.dump();
  if (rec.size() + 1 > kHeadRecordBytes) return IoError(path_ + ": head record too long");
  rec.resize(kHeadRecordBytes - 1, ' ');
  rec += '\n';
  if (pwrite(fd_, rec.data(), rec.size(), 0) != static_cast<ssize_t>(rec.size())) {
    return IoError(fmt::format("{}: cannot write: {}", path_, std::strerror(errno)));
  }
  if (durable_ && fdatasync(fd_) != 0) {
    return IoError(fmt::format("{}: cannot sync: {}", path_, std::strerror(errno)));
  }
  return Status::Ok();
}

}  // namespace tiresias
