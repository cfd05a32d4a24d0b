// ApiClient: server discovery, identity (socket or token) and JSON calls over libcurl.
#include "cli/client.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

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

size_t OnBody(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

size_t OnHeader(char* data, size_t size, size_t n, void* out) {
  auto* reply = static_cast<HttpReply*>(out);
  std::string_view line(data, size * n);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  const size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(Trim(line.substr(0, colon)));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string value(Trim(line.substr(colon + 1)));
    if (name == "x-next-offset") reply->next_offset = value;
    if (name == "x-log-file") reply->log_file = value;
    if (name == "x-log-end") reply->log_end = value;
    if (name == "x-job-state") reply->job_state = value;
  }
  return size * n;
}

}  // namespace

Status ErrorOf(const HttpReply& r) {
  if (r.status / 100 == 2) return Status::Ok();
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  std::string msg =
      !j.is_discarded() && j.is_object() && j.contains("error") && j["error"].is_string()
          ? j["error"].get<std::string>()
          : r.body;
  StatusCode code = r.status == 401       ? StatusCode::kUnauthenticated
                    : r.status == 403     ? StatusCode::kPermissionDenied
                    : r.status == 404     ? StatusCode::kNotFound
                    : r.status == 409     ? StatusCode::kFailedPrecondition
                    : r.status == 503     ? StatusCode::kUnavailable
                    : r.status == 507     ? StatusCode::kResourceExhausted
                    : r.status / 100 == 4 ? StatusCode::kInvalidArgument
                                          : StatusCode::kInternal;
  return Status(code, msg);
}

StatusOr<nlohmann::json> JsonOf(const StatusOr<HttpReply>& r) {
  if (!r.ok()) return r.status();
  if (Status s = ErrorOf(*r); !s.ok()) return s;
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (j.is_discarded()) return Status(StatusCode::kInternal, "server sent invalid JSON");
  return j;
}

std::string StateDirOrDefault(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* e = std::getenv("TIRESIAS_STATE_DIR"); e && *e) return e;
  return ".";
}

StatusOr<ApiClient> ApiClient::Connect(const ClientOptions& o) {
  ApiClient c;
  c.timeout_ms_ = o.timeout_ms;
  const std::filesystem::path dir = StateDirOrDefault(o.state_dir);
  std::string server = o.server;
  if (server.empty()) {
    if (const char* e = std::getenv("TIRESIAS_SERVER"); e && *e) server = e;
  }
  if (server.starts_with("unix:")) {
    c.socket_ = server.substr(5);
  } else if (!server.empty()) {
    c.url_ = server;
  } else if (std::error_code ec; std::filesystem::exists(dir / "tiresias.sock", ec)) {
    c.socket_ = (dir / "tiresias.sock").string();
  } else if (ec) {  // e.g. a state directory this user may not enter (it aborted the CLI)
    return FailedPrecondition(fmt::format(
        "cannot reach the server's socket in {}: {} (serve's state directory and those above "
        "it must be searchable by you)",
        dir.string(), ec.message()));
  } else {
    std::string why;
    auto addr = ReadFirstLine(dir / "tiresias.addr", &why);
    if (!addr) {
      return FailedPrecondition(fmt::format(
          "no server: no socket at {}, and cannot read {}: {}. Start `tiresias serve` there, "
          "or pass --state-dir DIR / --server URL",
          (dir / "tiresias.sock").string(), (dir / "tiresias.addr").string(), why));
    }
    c.url_ = *addr;
  }
  if (!c.socket_.empty()) {
    c.url_ = "http://localhost";  // the host is not used over a Unix socket
    return c;                     // the kernel names the caller: no token
  }
  if (!o.token.empty()) {
    c.token_ = o.token;
  } else if (const char* e = std::getenv("TIRESIAS_TOKEN"); e && *e) {
    c.token_ = e;
  } else if (auto t = ReadFirstLine(dir / "tiresias.token")) {
    c.token_ = *t;
  }
  return c;
}

StatusOr<HttpReply> ApiClient::Call(const std::string& method, const std::string& path,
                                    const std::string& body,
                                    const std::vector<std::string>& headers) const {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
  if (!curl) return Status(StatusCode::kInternal, "libcurl: cannot start a request");
  CURL* h = curl.get();
  const std::string url = url_ + path;
  HttpReply reply;
  curl_slist* list = nullptr;
  for (const auto& line : headers) list = curl_slist_append(list, line.c_str());
  if (!token_.empty()) list = curl_slist_append(list, ("Authorization: Bearer " + token_).c_str());
  if (!body.empty() || method == "POST") {
    list = curl_slist_append(list, "Content-Type: application/json");
  }
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> owned(list, &curl_slist_free_all);
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  if (!socket_.empty()) curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, socket_.c_str());
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method == "POST" || !body.empty()) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &reply.body);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &reply);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms_);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  if (CURLcode rc = curl_easy_perform(h); rc != CURLE_OK) {
    return Unavailable(fmt::format("cannot reach tiresias serve at {}: {} (is it running?)",
                                   where(), curl_easy_strerror(rc)));
  }
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  reply.status = static_cast<int>(status);
  return reply;
}

StatusOr<HttpReply> ApiClient::GetThroughRestarts(const std::string& path, const ClientOptions& o,
                                                  std::chrono::seconds patience) {
  const auto give_up = std::chrono::steady_clock::now() + patience;
  for (bool said = false;; std::this_thread::sleep_for(std::chrono::seconds(1))) {
    auto r = Get(path);
    const Status s = r.ok() ? ErrorOf(*r) : r.status();
    if (s.code() != StatusCode::kUnavailable || std::chrono::steady_clock::now() >= give_up) {
      return r;
    }
    if (!said) {
      std::cerr << "tiresias: " << s.message() << "; waiting for serve to come back\n";
      said = true;
    }
    if (auto again = Connect(o); again.ok()) *this = std::move(*again);
  }
}

StatusOr<nlohmann::json> ApiClient::GetJson(const std::string& path) const {
  return JsonOf(Get(path));
}

StatusOr<nlohmann::json> ApiClient::PostJson(const std::string& path,
                                             const nlohmann::json& body) const {
  return JsonOf(Post(path, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
}

std::string UrlQuery(const std::vector<std::pair<std::string, std::string>>& kv) {
  std::string q;
  for (const auto& [k, v] : kv) {
    if (v.empty()) continue;
    char* escaped = curl_easy_escape(nullptr, v.data(), static_cast<int>(v.size()));
    if (!escaped) continue;  // out of memory
    q += (q.empty() ? "?" : "&") + k + "=" + escaped;
    curl_free(escaped);
  }
  return q;
}

}  // namespace tiresias
