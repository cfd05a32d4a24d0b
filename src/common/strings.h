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

}  // namespace tiresias
