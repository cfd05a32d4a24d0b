// A registry of named implementations of one interface, each with typed options: the
// ordering policies and the placement policies are both instances. Make() looks a name up,
// validates the `key=value` options against the entry's declaration and builds it; an
// unknown name fails with the list of valid ones. `Args` are passed to every factory (the
// policies' DataSource). Immutable after construction; thread-safe to share.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/options.h"
#include "common/status.h"
#include "common/strings.h"

namespace tiresias {

template <typename T, typename... Args>
struct RegistryEntry {
  std::string name;
  std::string summary;
  std::vector<OptionSpec> options;
  std::function<StatusOr<std::unique_ptr<T>>(const OptionValues&, Args...)> make;
};

template <typename T, typename... Args>
class Registry {
 public:
  using Entry = RegistryEntry<T, Args...>;
  // `kind` names the registry in messages ("policy"), `plural` its entries ("policies").
  Registry(std::string kind, std::string plural, std::vector<Entry> entries)
      : kind_(std::move(kind)), plural_(std::move(plural)), entries_(std::move(entries)) {}

  const Entry* Find(const std::string& name) const {
    for (const auto& e : entries_) {
      if (e.name == name) return &e;
    }
    return nullptr;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : entries_) out.push_back(e.name);
    return out;
  }
  // The entry's options, validated (defaults filled in).
  StatusOr<OptionValues> Options(const std::string& name,
                                 const std::vector<std::string>& opts) const {
    const Entry* e = Find(name);
    if (!e) {
      return InvalidArgument(
          fmt::format("unknown {} '{}'; valid {}: {}", kind_, name, plural_, Join(names(), ", ")));
    }
    return ParseOptions(kind_ + " " + name, e->options, opts);
  }
  StatusOr<std::unique_ptr<T>> Make(const std::string& name, const std::vector<std::string>& opts,
                                    Args... args) const {
    auto values = Options(name, opts);
    if (!values.ok()) return values.status();
    return Find(name)->make(*values, std::forward<Args>(args)...);
  }
  // Every option of the entry with the value it takes under `opts` (given, else its default;
  // options without a default and not given are absent): what a run's summary records.
  StatusOr<std::map<std::string, std::string>> InEffect(
      const std::string& name, const std::vector<std::string>& opts) const {
    auto values = Options(name, opts);
    if (!values.ok()) return values.status();
    std::map<std::string, std::string> out;
    for (const OptionSpec& o : Find(name)->options) {
      if (values->has(o.name)) out[o.name] = values->Str(o.name);
    }
    return out;
  }
  // The given options that change nothing under `opts` (IneffectiveOptions): said as notes by
  // the commands that run a policy, since the run goes on without them.
  StatusOr<std::vector<std::string>> Ineffective(const std::string& name,
                                                 const std::vector<std::string>& opts) const {
    auto values = Options(name, opts);
    if (!values.ok()) return values.status();
    return IneffectiveOptions(kind_ + " " + name, Find(name)->options, *values);
  }
  // Every entry with its summary and options, for --help style listings.
  std::string Help() const {
    std::string out;
    for (const auto& e : entries_) {
      out += fmt::format("  {:<14} {}\n", e.name, e.summary);
      out += DescribeOptions(e.options);
    }
    return out;
  }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }

 private:
  std::string kind_;
  std::string plural_;
  std::vector<Entry> entries_;
};

}  // namespace tiresias
