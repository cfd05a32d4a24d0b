// Typed policy options: parsing and validation of `key=value` pairs.
#include "common/options.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/strings.h"

namespace tiresias {
namespace {

const char* TypeName(OptionSpec::Type t) {
  switch (t) {
    case OptionSpec::Type::kInt:
      return "integer";
    case OptionSpec::Type::kDouble:
      return "number";
    case OptionSpec::Type::kDoubleList:
      return "comma-separated numbers";
    case OptionSpec::Type::kChoice:
      return "one of";
    case OptionSpec::Type::kPath:
      return "path";
    case OptionSpec::Type::kText:
      return "text";
  }
  return "?";
}

Status CheckValue(const std::string& owner, const OptionSpec& spec, const std::string& value) {
  auto bad = [&](const std::string& what) {
    return InvalidArgument(fmt::format("{}: option {}={}: {}", owner, spec.name, value, what));
  };
  switch (spec.type) {
    case OptionSpec::Type::kInt:
      if (!ParseInt(value)) return bad("not an integer");
      break;
    case OptionSpec::Type::kDouble:
      if (!ParseDouble(value)) return bad("not a number");
      break;
    case OptionSpec::Type::kDoubleList:
      for (auto part : Split(value, ',')) {
        if (!ParseDouble(part)) return bad(fmt::format("'{}' is not a number", part));
      }
      break;
    case OptionSpec::Type::kChoice:
      if (std::find(spec.choices.begin(), spec.choices.end(), value) == spec.choices.end()) {
        return bad(fmt::format("valid values: {}", Join(spec.choices, ", ")));
      }
      break;
    case OptionSpec::Type::kPath:
      if (value.empty()) return bad("empty path");
      break;
    case OptionSpec::Type::kText:  // the policy validates it
      break;
  }
  return Status::Ok();
}

}  // namespace

int64_t OptionValues::Int(const std::string& name) const {
  return *ParseInt(values_.at(name));
}
double OptionValues::Double(const std::string& name) const {
  return *ParseDouble(values_.at(name));
}
std::vector<double> OptionValues::DoubleList(const std::string& name) const {
  std::vector<double> out;
  const std::string& v = values_.at(name);
  if (v.empty()) return out;
  for (auto part : Split(v, ',')) out.push_back(*ParseDouble(part));
  return out;
}
std::string OptionValues::Str(const std::string& name) const {
  return values_.at(name);
}

StatusOr<OptionValues> ParseOptions(const std::string& owner, const std::vector<OptionSpec>& specs,
                                    const std::vector<std::string>& pairs) {
  OptionValues out;
  for (const auto& s : specs) {
    if (!s.default_value.empty()) out.values_[s.name] = s.default_value;
  }
  for (const auto& pair : pairs) {
    auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgument(fmt::format("{}: option '{}' must be key=value", owner, pair));
    }
    std::string key = pair.substr(0, eq), value = pair.substr(eq + 1);
    auto spec = std::find_if(specs.begin(), specs.end(), [&](auto& s) { return s.name == key; });
    if (spec == specs.end()) {
      std::vector<std::string> names;
      for (const auto& s : specs) names.push_back(s.name);
      return InvalidArgument(fmt::format("{}: unknown option '{}'; valid options: {}", owner, key,
                                         names.empty() ? "(none)" : Join(names, ", ")));
    }
    if (Status st = CheckValue(owner, *spec, value); !st.ok()) return st;
    out.values_[key] = value;
    out.given_[key] = true;
  }
  return out;
}

std::string DescribeOptions(const std::vector<OptionSpec>& specs) {
  std::string out;
  for (const auto& s : specs) {
    std::string type = TypeName(s.type);
    if (s.type == OptionSpec::Type::kChoice)
      type = fmt::format("{} {}", type, Join(s.choices, "|"));
    out +=
        fmt::format("    {}=<{}>  {}{}\n", s.name, type, s.help,
                    s.default_value.empty() ? "" : fmt::format(" (default {})", s.default_value));
  }
  return out;
}

}  // namespace tiresias
