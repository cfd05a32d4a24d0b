// Reads the tenants file with nlohmann-json; a parser callback over a position-counting
// iterator records the line of every key and element, so a bad value is reported at its line.
#include "engine/tenant_config.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "common/input_file.h"

namespace tiresias {
namespace {

using json = nlohmann::json;

// A `const char*` that publishes how far the parser has read.
struct CountingIt {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* p = nullptr;
  const char** cursor = nullptr;
  reference operator*() const { return *p; }
  CountingIt& operator++() {
    *cursor = ++p;
    return *this;
  }
  CountingIt operator++(int) {
    CountingIt old = *this;
    ++*this;
    return old;
  }
  bool operator==(const CountingIt& o) const { return p == o.p; }
  bool operator!=(const CountingIt& o) const { return p != o.p; }
};

class Lines {
 public:
  explicit Lines(const std::string& text) : text_(text) {}
  // The line of the last token read before `pos` (the lexer may have looked one byte ahead).
  // Counted on from the last position asked (the parser asks in order; it counted from the
  // start at every key, quadratic in the file: 20,000 VCs took 4 s; found by a tester).
  int At(size_t pos) const {
    pos = std::min(pos, text_.size());
    while (pos > 0 && std::isspace(static_cast<unsigned char>(text_[pos - 1]))) --pos;
    if (pos > 0) --pos;
    if (pos < pos_) pos_ = 0, line_ = 1;
    for (; pos_ < pos; ++pos_) line_ += text_[pos_] == '\n';
    return line_;
  }

 private:
  const std::string& text_;
  mutable size_t pos_ = 0;  // text_[0, pos_) holds line_ - 1 newlines
  mutable int line_ = 1;
};

struct Frame {
  bool array = false;
  int next = 0;
  std::string key;
  std::set<std::string> keys;  // an object's, so far
};

class Checker {
 public:
  Checker(const std::string& path, const std::map<std::string, int>& lines)
      : path_(path), lines_(lines) {}
  Status Error(const std::string& at, const std::string& what) const {
    auto it = lines_.find(at);
    return InvalidArgument(
        fmt::format("{}:{}: {}", path_, it == lines_.end() ? 1 : it->second, what));
  }

 private:
  const std::string& path_;
  const std::map<std::string, int>& lines_;
};

// `v` as a whole number in [lo, hi], or nothing. An unsigned value over int64's range is out
// of range, not wrapped (18446744073709551615 is not -1).
std::optional<int64_t> IntIn(const json& v, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) return std::nullopt;
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi)) return std::nullopt;
  const auto i = v.get<int64_t>();
  if (i < lo || i > hi) return std::nullopt;
  return i;
}

}  // namespace

StatusOr<TenantConfig> ParseTenantConfig(const std::string& text, const std::string& path) {
  const Lines lines_of(text);
  const char* cursor = text.data();
  std::vector<Frame> frames;
  std::map<std::string, int> lines;  // "/vcs/0/quota" -> line
  auto prefix = [&] {
    std::string out;
    for (const Frame& f : frames) out += "/" + (f.array ? std::to_string(f.next - 1) : f.key);
    return out;
  };
  auto element = [&]() -> std::string {  // the path of a new element of the innermost container
    if (frames.empty()) return "";
    Frame& f = frames.back();
    if (f.array) ++f.next;
    return prefix();
  };
  auto here = [&] { return lines_of.At(static_cast<size_t>(cursor - text.data())); };
  std::optional<std::string> twice;  // the first key given twice in its object
  json::parser_callback_t cb = [&](int, json::parse_event_t ev, json& parsed) {
    switch (ev) {
      case json::parse_event_t::key:
        frames.back().key = parsed.get<std::string>();
        // A key given twice: the last one won without a word (found by a tester).
        if (!frames.back().keys.insert(frames.back().key).second && !twice) {
          twice = fmt::format("{}:{}: `{}` is given twice", path, here(), frames.back().key);
        }
        lines[prefix()] = here();
        break;
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start: {
        const std::string at = element();
        if (!frames.empty() && frames.back().array) lines[at] = here();
        frames.push_back({.array = ev == json::parse_event_t::array_start});
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames.pop_back();
        break;
      case json::parse_event_t::value:
        if (!frames.empty() && frames.back().array) lines[element()] = here();
        break;
    }
    return true;
  };
  json doc;
  try {
    const char* begin = text.data();
    doc = json::parse(CountingIt{begin, &cursor}, CountingIt{begin + text.size(), &cursor}, cb,
                      /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    const std::string what = e.what();
    const auto colon = what.find("syntax error");
    return InvalidArgument(fmt::format("{}:{}: not valid JSON: {}", path,
                                       lines_of.At(e.byte > 0 ? e.byte : 1),
                                       colon == std::string::npos ? what : what.substr(colon)));
  } catch (const json::exception& e) {
    // Not a syntax error but still no JSON value, e.g. a number past a double's range (found
    // by fuzz/tenants_fuzzer: 1e1000 threw out_of_range past the parse_error handler).
    const std::string what = e.what();
    const auto close = what.find("] ");
    return InvalidArgument(fmt::format("{}:{}: not valid JSON: {}", path, here(),
                                       close == std::string::npos ? what : what.substr(close + 2)));
  }
  if (twice) return InvalidArgument(*twice);
  const Checker check(path, lines);
  if (!doc.is_object()) return check.Error("", "the tenants file must be a JSON object");
  TenantConfig cfg;
  for (const auto& [key, v] : doc.items()) {
    const std::string at = "/" + key;
    if (key == "borrow") {
      if (!v.is_boolean()) return check.Error(at, "`borrow` must be true or false");
      cfg.borrow = v.get<bool>();
    } else if (key == "half_life_hours") {
      if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
          v.get<double>() > 24.0 * 365 * 10) {
        return check.Error(at, "`half_life_hours` must be a number of hours in [0, 87600]");
      }
      cfg.half_life = static_cast<Duration>(std::llround(v.get<double>() * 3.6e6));
    } else if (key == "fair_share_margin") {
      if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
          v.get<double>() > 10) {
        return check.Error(at, "`fair_share_margin` must be a number of half-lives in [0, 10]");
      }
      cfg.fair_share_margin = v.get<double>();
    } else if (key == "quota_lead") {
      const auto lead = IntIn(v, -1, 1000);
      if (!lead) {
        return check.Error(at,
                           "`quota_lead` must be a number of queues up to 1000, or -1 for "
                           "strict quotas (got " +
                               v.dump() + ")");
      }
      cfg.quota_lead = static_cast<int>(*lead);
    } else if (key == "protect") {
      const auto p = v.is_string() ? ParseProtect(v.get<std::string>()) : std::nullopt;
      if (!p) return check.Error(at, "`protect` must be \"none\", \"borrowers\" or \"other_vcs\"");
      cfg.protect = *p;
    } else if (key == "default_vc") {
      if (!v.is_string()) return check.Error(at, "`default_vc` must be a VC's name");
      cfg.default_vc = v.get<std::string>();
    } else if (key == "vcs") {
      if (!v.is_array() || v.empty()) return check.Error(at, "`vcs` must be a list of VCs");
    } else {
      return check.Error(at, fmt::format("unknown key `{}` (expected vcs, borrow, "
                                         "half_life_hours, fair_share_margin, quota_lead, "
                                         "protect, default_vc)",
                                         key));
    }
  }
  if (!doc.contains("vcs")) return check.Error("", "no `vcs`: the file must list the VCs");
  std::set<std::string> names;
  const json& vcs = doc["vcs"];
  for (size_t i = 0; i < vcs.size(); ++i) {
    const std::string at = "/vcs/" + std::to_string(i);
    const json& o = vcs[i];
    if (!o.is_object()) return check.Error(at, "each VC must be an object with a `name`");
    if (!o.contains("name") || !o["name"].is_string() || o["name"].get<std::string>().empty()) {
      return check.Error(at, "a VC needs a `name` (a non-empty string)");
    }
    Tenant t{.name = o["name"].get<std::string>()};
    const std::string who = fmt::format("VC `{}`", t.name);
    if (!names.insert(t.name).second) return check.Error(at + "/name", who + " is declared twice");
    for (const auto& [key, v] : o.items()) {
      const std::string k = at + "/" + key;
      if (key == "name") continue;
      if (key == "quota") {
        const auto quota = IntIn(v, 0, 1000000);
        if (!quota) {
          return check.Error(k, who +
                                    ": `quota` must be a whole number of GPUs in [0, 1000000] "
                                    "(got " +
                                    v.dump() + ")");
        }
        t.quota = static_cast<int>(*quota);
      } else if (key == "weight") {
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0 ||
            v.get<double>() > 1e6) {
          return check.Error(
              k, who + ": `weight` must be a number in (0, 1000000] (got " + v.dump() + ")");
        }
        t.weight = v.get<double>();
      } else if (key == "users") {
        if (!v.is_array()) return check.Error(k, who + ": `users` must be a list of user names");
        for (size_t u = 0; u < v.size(); ++u) {
          if (!v[u].is_string() || v[u].get<std::string>().empty()) {
            return check.Error(k + "/" + std::to_string(u),
                               who + ": each user must be a non-empty string");
          }
          // No user name holds a control character (found by a tester: one drove the
          // terminal through `tiresias vcs`).
          const std::string& name = v[u].get_ref<const std::string&>();
          if (std::any_of(name.begin(), name.end(), [](char c) {
                return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
              })) {
            return check.Error(k + "/" + std::to_string(u),
                               who + ": a user name with a control character");
          }
          t.users.push_back(v[u].get<std::string>());
        }
      } else {
        return check.Error(k, fmt::format("{}: unknown key `{}` (expected name, quota, weight, "
                                          "users)",
                                          who, key));
      }
    }
    cfg.vcs.push_back(std::move(t));
  }
  if (!cfg.default_vc.empty() && !cfg.IndexOf(cfg.default_vc)) {
    return check.Error("/default_vc",
                       fmt::format("default_vc `{}` is not one of the VCs", cfg.default_vc));
  }
  return cfg;
}

StatusOr<TenantConfig> ReadTenantConfig(const std::string& path) {
  auto in = OpenInput(path, "a tenants file (JSON)");
  if (!in.ok()) return in.status();
  std::stringstream ss;
  ss << in->rdbuf();
  return ParseTenantConfig(ss.str(), path);
}

json TenantConfigToJson(const TenantConfig& cfg) {
  if (cfg.vcs.empty()) return nullptr;
  json vcs = json::array();
  for (const Tenant& t : cfg.vcs) {
    json v = {{"name", t.name}, {"weight", t.weight}, {"users", t.users}};
    if (t.quota >= 0) v["quota"] = t.quota;
    vcs.push_back(std::move(v));
  }
  json out = {{"vcs", std::move(vcs)},
              {"borrow", cfg.borrow},
              {"half_life_hours", static_cast<double>(cfg.half_life) / 3.6e6},
              {"fair_share_margin", cfg.fair_share_margin},
              {"quota_lead", cfg.quota_lead},
              {"protect", ToString(cfg.protect)}};
  if (!cfg.default_vc.empty()) out["default_vc"] = cfg.default_vc;
  return out;
}

}  // namespace tiresias
