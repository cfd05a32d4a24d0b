// The client commands' shared flags, errors and renderings (see output.h).
#include "cli/output.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "common/strings.h"

namespace tiresias {

void AddConnFlags(CLI::App* c, Common& o) {
  c->add_option("--state-dir", o.conn.state_dir,
                "the server's state directory (default: $TIRESIAS_STATE_DIR or .)");
  c->add_option("--server", o.conn.server,
                "server URL, e.g. http://host:8470 (needs a token), or unix:PATH (default: the "
                "state directory's tiresias.sock, where the kernel tells serve who you are)");
  c->add_option("--token", o.conn.token,
                "API token for --server over TCP (default: $TIRESIAS_TOKEN, or the state "
                "directory's tiresias.token when readable)");
}

void AddOutputFlag(CLI::App* c, Common& o, bool wide, bool short_o) {
  std::map<std::string, OutputFormat> formats = {{"text", OutputFormat::kText},
                                                 {"json", OutputFormat::kJson}};
  if (wide) formats["wide"] = OutputFormat::kWide;
  c->add_option(short_o ? "-o,--output-format" : "--output-format", o.out,
                wide ? "text, wide (more columns) or json" : "text or json")
      ->transform(CLI::CheckedTransformer(formats, CLI::ignore_case));
  c->add_flag_callback(
      "--json", [&o] { o.out = OutputFormat::kJson; }, "same as -o json");
}

int Error(const Status& s) {
  // Escaped: a message may quote what a user gave (a job's command, a path) or a server sent.
  std::cerr << "tiresias: " << EscapeControl(s.message()) << "\n";
  return 1;
}

std::string Human(double seconds) {
  if (seconds < 0) return "-";
  auto s = static_cast<int64_t>(seconds);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
  return fmt::format("{}d{:02}h", s / 86400, s % 86400 / 3600);
}

std::string IsoTime(const nlohmann::json& wall_ms) {
  if (!wall_ms.is_number_integer()) return "-";
  const auto t =
      std::chrono::system_clock::time_point(std::chrono::milliseconds(wall_ms.get<int64_t>()));
  return fmt::format("{:%FT%T}Z", std::chrono::floor<std::chrono::seconds>(t));
}

std::string Str(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "-";
  return EscapeControl(j[key].is_string() ? j[key].get<std::string>() : j[key].dump());
}

bool Has(const nlohmann::json& j, const char* key) {
  return j.contains(key) && !j[key].is_null();
}

std::string ShownRef(const nlohmann::json& j, const char* id_key) {
  return Str(j, j.contains("ref") ? "ref" : id_key);
}

std::string Clip(const std::string& s, size_t width) {
  // Column by column as fmt pads them: its display width (fmt/format.h; a wide East Asian
  // character or an emoji takes two), whole characters only.
  size_t used = 0, end = 0;
  fmt::detail::for_each_codepoint(fmt::string_view(s), [&](uint32_t, fmt::string_view cp) {
    const size_t w = fmt::detail::compute_width(cp);
    if (used + w > width) return false;
    used += w;
    end += cp.size();
    return true;
  });
  return s.substr(0, end);
}

Status CheckOutputPath(const std::string& flag, const std::string& path, OutputKind kind) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool dir = kind == OutputKind::kDirectory;
  fs::path p = fs::absolute(path, ec);
  const bool exists = fs::exists(p, ec);
  if (exists && fs::is_directory(p, ec) != dir) {
    return InvalidArgument(
        fmt::format("{} {}: {}", flag, path, dir ? "is not a directory" : "is a directory"));
  }
  if (exists && kind == OutputKind::kFile) {  // written in place: the file's own rights
    if (access(p.c_str(), W_OK) != 0) {
      return InvalidArgument(
          fmt::format("{} {}: not writable: {}", flag, path, std::strerror(errno)));
    }
    return Status::Ok();
  }
  // The directory it goes in, or the nearest one there is of those to make.
  fs::path in = dir && exists ? p : p.parent_path();
  while (!in.empty() && !fs::exists(in, ec) && in != in.parent_path()) in = in.parent_path();
  if (!fs::is_directory(in, ec)) {
    return InvalidArgument(
        fmt::format("{} {}: {} does not exist or is not a directory", flag, path, in.string()));
  }
  if (access(in.c_str(), W_OK | X_OK) != 0) {
    return InvalidArgument(fmt::format("{} {}: {} is not writable: {}", flag, path, in.string(),
                                       std::strerror(errno)));
  }
  return Status::Ok();
}

Status MakeParentDirectories(const std::string& flag, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path parent = fs::absolute(path, ec).parent_path();
  if (ec || parent.empty() || fs::is_directory(parent, ec)) return Status::Ok();
  fs::create_directories(parent, ec);
  if (ec) {
    return IoError(
        fmt::format("{} {}: cannot make {}: {}", flag, path, parent.string(), ec.message()));
  }
  return Status::Ok();
}

bool Terminal(const std::string& state) {
  return state == "finished" || state == "failed" || state == "cancelled" || state == "timeout";
}

std::optional<nlohmann::json> Fetch(const Common& o, const std::string& path, int& rc) {
  rc = 0;
  auto c = ApiClient::Connect(o.conn);
  auto r = c.ok() ? c->GetJson(path) : StatusOr<nlohmann::json>(c.status());
  if (!r.ok()) {
    rc = Error(r.status());
    return std::nullopt;
  }
  if (o.json()) {
    std::cout << r->dump(2) << "\n";
    return std::nullopt;
  }
  return *r;
}

// "in 2h 10m (1h 30m to 4h 0m)": a p10/p50/p90 range of wall times, from now.
namespace {

// Without a median (a held job, one waiting on what never ends): "not within a year" once,
// not three times over.
std::string FromNow(const nlohmann::json& range, int64_t now_ms) {
  auto known = [&](const char* k) { return range.contains(k) && range[k].is_number(); };
  auto in = [&](const char* k) -> std::string {
    if (!known(k)) return "beyond a year";
    return Human(std::max<double>(0, (range[k].get<int64_t>() - now_ms) / 1000.0));
  };
  if (!known("p50_ms")) return "not within a year";
  return fmt::format("in {} ({} to {}, p10-p90)", in("p50_ms"), in("p10_ms"), in("p90_ms"));
}

}  // namespace

void PrintEstimate(const nlohmann::json& e) {
  if (e.contains("unknown")) {  // held back: nothing to forecast until that ends
    std::cout << "  no forecast while it is " << Str(e, "unknown") << "\n";
    return;
  }
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const auto& st = e["start"];
  if (e.value("running", false) && st.value("p50_ms", nlohmann::json()).is_number()) {
    std::cout << "  started         "
              << Human(std::max<double>(0, (now - st["p50_ms"].get<int64_t>()) / 1000.0))
              << " ago\n";  // not a forecast
  } else {
    std::cout << "  likely to start " << FromNow(st, now) << "\n";
  }
  std::cout << "  likely to end   " << FromNow(e["end"], now) << "\n";
  std::vector<std::string> way;
  for (const auto& w : e.value("in_the_way", nlohmann::json::array())) {
    way.push_back(fmt::format("job {} ({}, {:.0f}%)", ShownRef(w), EscapeControl(Str(w, "user")),
                              100 * w.value("share", 0.0)));
  }
  if (const double arrivals = e.value("arrivals_share", 0.0); arrivals >= 0.005) {
    way.push_back(fmt::format("jobs yet to arrive ({:.0f}%)", 100 * arrivals));
  }
  if (!way.empty()) std::cout << "  most in the way: " << Join(way, ", ") << "\n";
  std::cout << "  (" << Str(e, "method") << ")\n";
}

}  // namespace tiresias
