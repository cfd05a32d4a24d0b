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

// "in [0.001, 3600]" or "" for an unbounded spec.
std::string RangeOf(const OptionSpec& spec) {
  if (!spec.bounded()) return "";
  if (spec.type == OptionSpec::Type::kInt)
    return fmt::format("in [{:.0f}, {:.0f}]", spec.min, spec.max);
  return fmt::format("in [{}, {}]", spec.min, spec.max);
}

Status CheckValue(const std::string& owner, const OptionSpec& spec, const std::string& value) {
  auto bad = [&](const std::string& what) {
    return InvalidArgument(fmt::format("{}: option {}={}: {}", owner, spec.name, value, what));
  };
  auto in_range = [&](double v) { return v >= spec.min && v <= spec.max; };
  switch (spec.type) {
    case OptionSpec::Type::kInt: {
      auto v = ParseInt(value);
      if (!v) return bad(fmt::format("not an integer {}", RangeOf(spec)));
      if (!in_range(static_cast<double>(*v)))
        return bad(fmt::format("out of range: expected an integer {}", RangeOf(spec)));
      break;
    }
    case OptionSpec::Type::kDouble: {
      auto v = ParseDouble(value);
      if (!v) return bad(fmt::format("not a number {}", RangeOf(spec)));
      if (!in_range(*v))
        return bad(fmt::format("out of range: expected a number {}", RangeOf(spec)));
      break;
    }
    case OptionSpec::Type::kDoubleList:
      for (auto part : Split(value, ',')) {
        auto v = ParseDouble(part);
        if (!v) return bad(fmt::format("'{}' is not a number", part));
        if (!in_range(*v)) {
          return bad(fmt::format("'{}' is out of range: expected numbers {}", part, RangeOf(spec)));
        }
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
    if (s.bounded()) type = fmt::format("{} {}", type, RangeOf(s));
    out +=
        fmt::format("    {}=<{}>  {}{}\n", s.name, type, s.help,
                    s.default_value.empty() ? "" : fmt::format(" (default {})", s.default_value));
  }
  return out;
}

std::vector<std::string> IneffectiveOptions(const std::string& owner,
                                            const std::vector<OptionSpec>& specs,
                                            const OptionValues& v) {
  std::vector<std::string> out;
  for (const auto& s : specs) {
    if (!v.given(s.name)) continue;
    std::vector<std::string> missing;
    for (const auto& need : s.needs) {
      const auto eq = need.find('=');
      const std::string key = need.substr(0, eq);
      const bool met =
          eq == std::string::npos ? v.has(key) : v.has(key) && v.Str(key) == need.substr(eq + 1);
      if (!met) missing.push_back(need);
    }
    if (!missing.empty()) {
      out.push_back(
          fmt::format("{}: {} has no effect without {}", owner, s.name, Join(missing, " and ")));
    }
  }
  return out;
}

}  // namespace tiresias
