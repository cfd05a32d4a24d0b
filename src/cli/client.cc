// ApiClient: server discovery, token, and JSON calls over cpp-httplib.
#include "cli/client.h"

#include <fmt/format.h>
#include <httplib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/strings.h"

namespace tiresias {
namespace {

// The first line of `p`, trimmed; nullopt with `why` set (strerror) when it cannot be read.
std::optional<std::string> ReadFirstLine(const std::filesystem::path& p,
                                         std::string* why = nullptr) {
  std::ifstream in(p);
  std::string line;
  if (!in) {
    if (why) *why = std::strerror(errno);
    return std::nullopt;
  }
  if (!std::getline(in, line)) {
    if (why) *why = "empty file";
    return std::nullopt;
  }
  return std::string(Trim(line));
}

StatusOr<nlohmann::json> JsonOf(const StatusOr<HttpReply>& r) {
  if (!r.ok()) return r.status();
  if (Status s = ErrorOf(*r); !s.ok()) return s;
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (j.is_discarded()) return Status(StatusCode::kInternal, "server sent invalid JSON");
  return j;
}

}  // namespace

Status ErrorOf(const HttpReply& r) {
  if (r.status / 100 == 2) return Status::Ok();
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  std::string msg =
      !j.is_discarded() && j.contains("error") ? j["error"].get<std::string>() : r.body;
  StatusCode code = r.status == 404       ? StatusCode::kNotFound
                    : r.status == 409     ? StatusCode::kFailedPrecondition
                    : r.status / 100 == 4 ? StatusCode::kInvalidArgument
                                          : StatusCode::kInternal;
  return Status(code, msg);
}

std::string StateDirOrDefault(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* e = std::getenv("TIRESIAS_STATE_DIR"); e && *e) return e;
  return ".";
}

StatusOr<ApiClient> ApiClient::Connect(const ClientOptions& o) {
  ApiClient c;
  const std::filesystem::path dir = StateDirOrDefault(o.state_dir);
  c.url_ = o.server;
  if (c.url_.empty()) {
    if (const char* e = std::getenv("TIRESIAS_SERVER"); e && *e) c.url_ = e;
  }
  if (c.url_.empty()) {
    std::string why;
    auto addr = ReadFirstLine(dir / "tiresias.addr", &why);
    if (!addr) {
      return FailedPrecondition(fmt::format(
          "no server address: cannot read {}: {}. Start `tiresias serve` there, or pass "
          "--state-dir DIR / --server URL",
          (dir / "tiresias.addr").string(), why));
    }
    c.url_ = *addr;
  }
  if (const char* e = std::getenv("TIRESIAS_TOKEN"); e && *e) {
    c.token_ = e;
  } else if (auto t = ReadFirstLine(dir / "tiresias.token")) {
    c.token_ = *t;
  }
  return c;
}

namespace {
StatusOr<HttpReply> Call(const std::string& url, const std::string& token, const char* method,
                         const std::string& path, const std::string& body) {
  httplib::Client cli(url);
  cli.set_connection_timeout(5);
  cli.set_read_timeout(30);
  httplib::Headers h;
  if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
  httplib::Result r = std::string(method) == "GET"    ? cli.Get(path, h)
                      : std::string(method) == "POST" ? cli.Post(path, h, body, "application/json")
                                                      : cli.Delete(path, h);
  if (!r) {
    return IoError(fmt::format("cannot reach tiresias serve at {}: {} (is it running?)", url,
                               httplib::to_string(r.error())));
  }
  return HttpReply{.status = r->status,
                   .body = r->body,
                   .next_offset = r->get_header_value("X-Next-Offset"),
                   .job_state = r->get_header_value("X-Job-State")};
}
}  // namespace

StatusOr<HttpReply> ApiClient::Get(const std::string& path) const {
  return Call(url_, token_, "GET", path, "");
}
StatusOr<HttpReply> ApiClient::Post(const std::string& path, const std::string& body) const {
  return Call(url_, token_, "POST", path, body);
}
StatusOr<HttpReply> ApiClient::Delete(const std::string& path) const {
  return Call(url_, token_, "DELETE", path, "");
}
StatusOr<nlohmann::json> ApiClient::GetJson(const std::string& path) const {
  return JsonOf(Get(path));
}
StatusOr<nlohmann::json> ApiClient::PostJson(const std::string& path,
                                             const nlohmann::json& body) const {
  return JsonOf(Post(path, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
}

}  // namespace tiresias
