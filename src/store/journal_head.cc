// The journal's checksum chain and head file (see journal_head.h).
#include "store/journal_head.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/atomic_file.h"

namespace tiresias {

std::string ChainSum(std::string_view prev_sum, int64_t seq, int64_t t, std::string_view kind,
                     int64_t job, std::string_view detail) {
  const std::string data =
      fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", prev_sum, seq, t, kind, job, detail);
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md.data(), &len, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

std::string JournalHeadPath(const std::string& db_path) {
  return db_path + ".head";
}

StatusOr<std::optional<JournalHead>> ReadJournalHead(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return std::optional<JournalHead>();
    return IoError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (!j.is_object() || !j.contains("seq") || !j["seq"].is_number_integer() || !j.contains("sum") ||
      !j["sum"].is_string() || !j.contains("max_job") || !j["max_job"].is_number_integer()) {
    return IoError(
        fmt::format("{}: damaged journal head (expected {{\"seq\", \"sum\", "
                    "\"max_job\"}})",
                    path));
  }
  return std::optional<JournalHead>(JournalHead{.seq = j["seq"].get<int64_t>(),
                                                .sum = j["sum"].get<std::string>(),
                                                .max_job = j["max_job"].get<int64_t>()});
}

Status WriteJournalHead(const std::string& path, const JournalHead& head, bool durable) {
  nlohmann::json j = {{"seq", head.seq}, {"sum", head.sum}, {"max_job", head.max_job}};
  return WriteFileAtomically(path, j.dump() + "\n", durable);
}

}  // namespace tiresias
