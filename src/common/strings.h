// Small string helpers shared by the readers and option parsers.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tiresias {

std::vector<std::string_view> Split(std::string_view s, char sep);
std::string_view Trim(std::string_view s);
std::optional<int64_t> ParseInt(std::string_view s);
std::optional<double> ParseDouble(std::string_view s);
std::string Join(const std::vector<std::string>& parts, std::string_view sep);
// An environment as KEY=VALUE strings: every entry of `key` removed; `key` set to `value` (as
// the last entry, once).
void EnvUnset(std::vector<std::string>& env, std::string_view key);
void EnvSet(std::vector<std::string>& env, std::string_view key, std::string_view value);
// A name a shell can give a variable: letters, digits and _, not beginning with a digit.
bool IsVariableName(std::string_view key);
// A shell's variable assignment, NAME=VALUE (what `B=2 CMD` begins with).
bool IsAssignment(std::string_view word);
// `s` made safe to print on a terminal: control characters (C0, DEL, and C1 such as the
// 8-bit CSI) and Unicode's bidirectional controls (U+202E) become escapes (\n, \r, \t, \x1b,
// \u009b, \u202e) and bytes that are not valid UTF-8 become \xHH, so a job name cannot move the
// cursor, recolour, rewrite or reorder the screen. Valid printable UTF-8 (accents, CJK) is kept
// as is.
std::string EscapeControl(std::string_view s);

}  // namespace tiresias
