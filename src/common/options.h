// Typed policy options: each policy declares the options it takes; `--opt key=value` pairs
// are validated against that declaration at start-up, and errors list what is valid.
#pragma once

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace tiresias {

struct OptionSpec {
  enum class Type { kInt, kDouble, kDoubleList, kChoice, kPath, kText };
  std::string name;
  Type type;
  std::string default_value;  // "" = no default (absent unless given)
  std::string help;
  std::vector<std::string> choices;  // kChoice only
  // kInt, kDouble and each number of a kDoubleList: the valid range, inclusive. Every numeric
  // option of a policy declares one (a test checks), so a value whose arithmetic would
  // overflow (quantum=1e308) is refused with the range at start-up. Never NaN or infinite.
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool bounded() const { return min > -max && max < std::numeric_limits<double>::infinity(); }
  // The option changes nothing unless each of these holds: "key" (that option has a value)
  // or "key=value" (it has that value). A given option whose conditions fail is reported by
  // IneffectiveOptions, so `history=` without `threshold_quantiles` is not silently ignored.
  std::vector<std::string> needs = {};
};

// Validated option values; accessors return the default when the option was not given.
class OptionValues {
 public:
  bool has(const std::string& name) const { return values_.contains(name); }
  int64_t Int(const std::string& name) const;
  double Double(const std::string& name) const;
  std::vector<double> DoubleList(const std::string& name) const;
  std::string Str(const std::string& name) const;
  bool given(const std::string& name) const { return given_.contains(name); }

 private:
  friend StatusOr<OptionValues> ParseOptions(const std::string&, const std::vector<OptionSpec>&,
                                             const std::vector<std::string>&);
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> given_;
};

// `pairs` are "key=value" strings. `owner` names the policy in error messages.
StatusOr<OptionValues> ParseOptions(const std::string& owner, const std::vector<OptionSpec>& specs,
                                    const std::vector<std::string>& pairs);
std::string DescribeOptions(const std::vector<OptionSpec>& specs);
// One line per given option that changes nothing under `v` (its `needs` fail), naming the
// option and what it needs: "policy dlas: history has no effect without threshold_quantiles".
std::vector<std::string> IneffectiveOptions(const std::string& owner,
                                            const std::vector<OptionSpec>& specs,
                                            const OptionValues& v);

}  // namespace tiresias
