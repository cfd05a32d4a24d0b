// Small string helpers shared by the readers and option parsers.
#include "common/strings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace tiresias {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  s = Trim(s);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> ParseDouble(std::string_view s) {
  s = Trim(s);
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

bool IsVariableName(std::string_view key) {
  return !key.empty() && !std::isdigit(static_cast<unsigned char>(key[0])) &&
         std::all_of(key.begin(), key.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
         });
}

bool IsAssignment(std::string_view word) {
  const size_t eq = word.find('=');
  return eq != std::string_view::npos && IsVariableName(word.substr(0, eq));
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

namespace {

// The length of the valid UTF-8 sequence at the start of `s` (1-4), or 0 if it is not one.
size_t Utf8Length(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // beyond U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

namespace {

// The code point of `c` (one UTF-8 character) if it is a bidirectional control (Unicode's
// Bidi_Control: ALM, LRM, RLM, embeddings, overrides, isolates); else 0.
char32_t BidiControl(std::string_view c) {
  if (c == "\xd8\x9c") return 0x061C;  // ARABIC LETTER MARK, the one of two bytes
  if (c.size() != 3) return 0;
  const auto b = [&](size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(c[k])); };
  const char32_t cp = ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  const bool bidi = cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
                    (cp >= 0x2066 && cp <= 0x2069);
  return bidi ? cp : 0;
}

}  // namespace

std::string EscapeControl(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = Utf8Length(s.substr(i));
    if (n == 0) {  // not UTF-8: show the byte
      out += fmt::format("\\x{:02x}", c);
      i += 1;
    } else if (c == '\n') {
      out += "\\n";
      i += 1;
    } else if (c == '\r') {
      out += "\\r";
      i += 1;
    } else if (c == '\t') {
      out += "\\t";
      i += 1;
    } else if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
      i += 1;
    } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1]));  // C1: U+0080-9F
      i += 2;
    } else if (const char32_t cp = BidiControl(s.substr(i, n)); cp != 0) {
      // They reorder what follows on the screen: a name could show another's text (found by
      // a tester).
      out += fmt::format("\\u{:04x}", static_cast<uint32_t>(cp));
      i += n;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

void EnvUnset(std::vector<std::string>& env, std::string_view key) {
  std::erase_if(env, [&](const std::string& kv) {
    return std::string_view(kv).substr(0, kv.find('=')) == key;
  });
}

void EnvSet(std::vector<std::string>& env, std::string_view key, std::string_view value) {
  EnvUnset(env, key);
  env.push_back(std::string(key) + "=" + std::string(value));
}

}  // namespace tiresias
