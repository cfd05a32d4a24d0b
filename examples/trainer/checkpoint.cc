// The example trainer's checkpoint format and its atomic write.
#include "checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/strings.h"

namespace trainer {
namespace {

using tiresias::InvalidArgument;
using tiresias::IoError;
using tiresias::Status;
using tiresias::StatusOr;

constexpr std::string_view kMagic = "tiresias-example-trainer checkpoint v1";

std::optional<uint64_t> ParseHex64(std::string_view s) {
  if (s.size() != 16) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// Splits "key v1 v2 ..." into its words.
std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> out;
  for (std::string_view w : tiresias::Split(tiresias::Trim(line), ' ')) {
    if (!w.empty()) out.push_back(w);
  }
  return out;
}

Status WriteAll(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError(fmt::format("{}: write: {}", path, std::strerror(errno)));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

std::string SerializeCheckpoint(uint64_t seed, const TrainState& s) {
  std::string out =
      fmt::format("{}\nseed {}\nshape {} {} {} {}\nstep {}\nrng {:016x}\nperm", kMagic, seed,
                  kInputs, kHidden, kSamples, kBatch, s.step, s.rng.state);
  for (int32_t p : s.perm) out += fmt::format(" {}", p);
  out += "\nparams";
  for (double v : s.params) out += fmt::format(" {:016x}", std::bit_cast<uint64_t>(v));
  out += "\nend\n";
  return out;
}

StatusOr<TrainState> ParseCheckpoint(std::string_view text, uint64_t seed) {
  std::vector<std::string_view> lines = tiresias::Split(text, '\n');
  auto bad = [](size_t line, const std::string& what) {
    return InvalidArgument(fmt::format("checkpoint line {}: {}", line + 1, what));
  };
  const std::vector<std::string_view> keys = {"seed", "shape", "step", "rng", "perm", "params"};
  if (lines.size() < keys.size() + 2 || tiresias::Trim(lines[0]) != kMagic) {
    return bad(0, fmt::format("expected '{}'", kMagic));
  }
  std::vector<std::vector<std::string_view>> f;
  for (size_t k = 0; k < keys.size(); ++k) {
    f.push_back(Words(lines[k + 1]));
    if (f.back().empty() || f.back()[0] != keys[k]) {
      return bad(k + 1, fmt::format("expected '{}'", keys[k]));
    }
  }
  if (tiresias::Trim(lines[keys.size() + 1]) != "end") {
    return bad(keys.size() + 1, "expected 'end' (truncated checkpoint?)");
  }
  if (f[0].size() != 2 || f[0][1] != std::to_string(seed)) {
    return bad(1, fmt::format("checkpoint is for another seed (this run uses {})", seed));
  }
  std::string shape = fmt::format("shape {} {} {} {}", kInputs, kHidden, kSamples, kBatch);
  if (tiresias::Trim(lines[2]) != shape) return bad(2, "expected '" + shape + "'");
  TrainState s;
  auto step = f[2].size() == 2 ? tiresias::ParseInt(f[2][1]) : std::nullopt;
  if (!step || *step < 0) return bad(3, "step is not a non-negative integer");
  s.step = *step;
  auto rng = f[3].size() == 2 ? ParseHex64(f[3][1]) : std::nullopt;
  if (!rng) return bad(4, "rng is not 16 hex digits");
  s.rng.state = *rng;
  if (f[4].size() != kSamples + 1) return bad(5, fmt::format("perm needs {} values", kSamples));
  std::vector<bool> seen(kSamples, false);
  for (size_t i = 1; i < f[4].size(); ++i) {
    auto v = tiresias::ParseInt(f[4][i]);
    if (!v || *v < 0 || *v >= kSamples || seen[*v]) return bad(5, "perm is not a permutation");
    seen[*v] = true;
    s.perm.push_back(static_cast<int32_t>(*v));
  }
  if (f[5].size() != kParams + 1) return bad(6, fmt::format("params needs {} values", kParams));
  for (size_t i = 1; i < f[5].size(); ++i) {
    auto v = ParseHex64(f[5][i]);
    if (!v) return bad(6, fmt::format("param {} is not 16 hex digits", i - 1));
    s.params.push_back(std::bit_cast<double>(*v));
  }
  return s;
}

Status WriteCheckpoint(const std::filesystem::path& dir, uint64_t seed, const TrainState& s) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(fmt::format("{}: {}", dir.string(), ec.message()));
  std::string final_path = (dir / kCheckpointFile).string();
  std::string tmp_path = final_path + ".tmp";
  int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(fmt::format("{}: open: {}", tmp_path, std::strerror(errno)));
  Status st = WriteAll(fd, SerializeCheckpoint(seed, s), tmp_path);
  if (st.ok() && ::fsync(fd) != 0) {
    st = IoError(fmt::format("{}: fsync: {}", tmp_path, std::strerror(errno)));
  }
  ::close(fd);
  if (st.ok() && ::rename(tmp_path.c_str(), final_path.c_str()) != 0) {
    st = IoError(fmt::format("{}: rename: {}", final_path, std::strerror(errno)));
  }
  if (!st.ok()) {
    ::unlink(tmp_path.c_str());
    return st;
  }
  // Make the rename itself durable.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

StatusOr<std::optional<TrainState>> ReadCheckpoint(const std::filesystem::path& dir,
                                                   uint64_t seed) {
  std::filesystem::path path = dir / kCheckpointFile;
  std::ifstream in(path);
  if (!in) {
    if (!std::filesystem::exists(path)) return std::optional<TrainState>();
    return IoError(fmt::format("{}: cannot read", path.string()));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  StatusOr<TrainState> s = ParseCheckpoint(ss.str(), seed);
  if (!s.ok()) return Status(s.status().code(), path.string() + ": " + s.status().message());
  return std::optional<TrainState>(std::move(s).value());
}

}  // namespace trainer
