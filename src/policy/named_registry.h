// What the ordering and placement registries share: look a name up in a fixed list of
// {name, summary, options, make} entries, validate the options against the entry's
// declaration, build; unknown names fail with the list of valid ones.
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

#include "common/strings.h"
#include "policy/options.h"

namespace tiresias {

// `kind` names the registry in messages ("policy"), `plural` its entries ("policies").
template <typename Info>
auto MakeRegistered(const std::vector<Info>& all, const std::string& kind,
                    const std::string& plural, const std::string& name,
                    const std::vector<std::string>& opts)
    -> decltype(all.front().make(std::declval<const OptionValues&>())) {
  std::vector<std::string> names;
  for (const auto& info : all) {
    if (info.name == name) {
      auto values = ParseOptions(kind + " " + name, info.options, opts);
      if (!values.ok()) return values.status();
      return info.make(*values);
    }
    names.push_back(info.name);
  }
  return InvalidArgument(
      fmt::format("unknown {} '{}'; valid {}: {}", kind, name, plural, Join(names, ", ")));
}

template <typename Info>
std::string RegistryHelp(const std::vector<Info>& all) {
  std::string out;
  for (const auto& info : all) {
    out += fmt::format("  {:<14} {}\n", info.name, info.summary);
    out += DescribeOptions(info.options);
  }
  return out;
}

}  // namespace tiresias
