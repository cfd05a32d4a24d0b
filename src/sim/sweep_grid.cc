// Parameter sweeps' grids (see sweep.h): `--grid KEY=V1,V2` axes and `--seeds A..B` ranges
// parsed, and their combinations expanded into configurations, each checked by the policy
// registries (a typo is an error, a refused combination is skipped).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/strings.h"
#include "engine/core_builder.h"
#include "sim/simulator.h"
#include "sim/sweep.h"  // (declares what this file defines)

namespace tiresias {
namespace {

bool Declares(const std::vector<std::string>& names, const std::string& key) {
  return std::find(names.begin(), names.end(), key) != names.end();
}

std::string Slashes(std::string v) {
  std::replace(v.begin(), v.end(), '/', ',');
  return v;
}

// "LO:HI" thresholds for K queues: K-1 values spaced geometrically, whole GPU-seconds.
StatusOr<std::string> GeometricThresholds(const std::string& range, int64_t queues) {
  auto parts = Split(range, ':');
  auto lo = ParseDouble(parts[0]), hi = parts.size() == 2 ? ParseDouble(parts[1]) : std::nullopt;
  if (parts.size() != 2 || !lo || !hi || *lo <= 0 || *hi < *lo) {
    return InvalidArgument(fmt::format("thresholds={}: expected LO:HI with 0 < LO <= HI", range));
  }
  if (queues <= 1) return std::string();
  std::vector<std::string> out;
  for (int64_t i = 0; i < queues - 1; ++i) {
    const double f = queues == 2 ? 0.0 : static_cast<double>(i) / static_cast<double>(queues - 2);
    out.push_back(fmt::format("{}", std::llround(*lo * std::pow(*hi / *lo, f))));
  }
  return Join(out, ",");
}

// Whether `key=value` of a grid axis is a valid value on its own (its name, type and range,
// CheckOptionValues) for some policy (and placement) of the grid that it applies to; the
// first refusal otherwise. (How it goes with other options is the combinations' matter.)
Status AloneValid(const std::string& key, const std::string& value, const GridBase& base,
                  const std::vector<GridAxis>& axes,
                  const std::map<std::string, std::vector<std::string>>& options_of) {
  std::vector<std::string> placements;
  for (const auto& a : axes) {
    if (a.key == "placement") placements = a.values;
  }
  if (placements.empty()) {
    placements = {base.placement.empty() ? SimConfig{}.placement : base.placement};
  }
  Status first = Status::Ok();
  for (const auto& [policy, names] : options_of) {
    for (const auto& placement : placements) {
      Status s = Status::Ok();
      if (key == "policy") {
        s = CheckOptionValues(value, {}, placement, {});
      } else if (key == "placement") {
        s = CheckOptionValues(policy, {}, value, {});
      } else if (key.rfind("placement.", 0) == 0) {
        auto names = PlacementOptionNames(placement);
        if (names.ok() && !Declares(*names, key.substr(10))) continue;  // not this placement's
        s = CheckOptionValues(policy, {}, placement, {key.substr(10) + "=" + Slashes(value)});
      } else if (!Declares(names, key) || (key == "thresholds" && value.find(':') != value.npos)) {
        continue;
      } else {
        s = CheckOptionValues(policy, {key + "=" + Slashes(value)}, placement, {});
      }
      if (s.ok()) return s;
      if (first.ok()) first = s;
    }
  }
  return first;
}

}  // namespace

StatusOr<GridAxis> ParseGridAxis(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return InvalidArgument(fmt::format("--grid {}: expected KEY=V1,V2,...", text));
  }
  GridAxis a{text.substr(0, eq), {}};
  for (auto v : Split(std::string_view(text).substr(eq + 1), ',')) {
    v = Trim(v);
    if (v.empty()) return InvalidArgument(fmt::format("--grid {}: an empty value", text));
    a.values.emplace_back(v);
  }
  return a;
}

StatusOr<std::vector<int64_t>> ParseIntRange(const std::string& text) {
  std::vector<int64_t> out;
  for (auto part : Split(text, ',')) {
    part = Trim(part);
    auto dots = part.find("..");
    if (dots == std::string_view::npos) {
      auto v = ParseInt(part);
      if (!v) return InvalidArgument(fmt::format("'{}' is not an integer", part));
      out.push_back(*v);
      continue;
    }
    auto rest = part.substr(dots + 2);
    int64_t step = 1;
    if (auto slash = rest.find('/'); slash != std::string_view::npos) {
      auto s = ParseInt(rest.substr(slash + 1));
      if (!s || *s < 1) return InvalidArgument(fmt::format("'{}': bad step", part));
      step = *s;
      rest = rest.substr(0, slash);
    }
    auto a = ParseInt(part.substr(0, dots)), b = ParseInt(rest);
    if (!a || !b || *b < *a) {
      return InvalidArgument(fmt::format("'{}' is not a range A..B (A <= B)", part));
    }
    if ((*b - *a) / step > 100000) {  // (it said "not a range")
      return InvalidArgument(fmt::format("'{}': more than 100,000 values", part));
    }
    for (int64_t v = *a; v <= *b; v += step) out.push_back(v);
  }
  if (out.empty()) return InvalidArgument("an empty list");
  return out;
}

StatusOr<std::vector<SweepPoint>> ExpandGrid(const GridBase& base,
                                             const std::vector<GridAxis>& axes,
                                             const DataSource& data,
                                             std::vector<std::string>* skipped) {
  for (const auto& a : axes) {
    if (a.values.empty()) return InvalidArgument(fmt::format("--grid {}: no values", a.key));
  }
  std::vector<SweepPoint> out;
  std::set<std::string> seen, reasons;
  std::vector<size_t> idx(axes.size(), 0);
  // Found by a tester: an axis no policy of the grid takes (a typo) was ignored, and a value
  // valid in no combination was only "skipped", both with exit 0 and a "best" configuration.
  // An option of some policies only, or a value valid with some others only, stays.
  std::vector<bool> taken(axes.size(), false);
  std::vector<std::vector<bool>> valid(axes.size());
  for (size_t a = 0; a < axes.size(); ++a) valid[a].assign(axes[a].values.size(), false);
  std::map<std::string, std::vector<std::string>> options_of;  // each policy of the grid's
  for (bool more = true; more;) {
    SweepPoint p{.policy = base.policy,
                 .placement = base.placement.empty() ? SimConfig{}.placement : base.placement};
    std::map<std::string, std::string> opts, popts;
    auto put = [](std::map<std::string, std::string>& m, const std::string& kv) {
      auto eq = kv.find('=');
      m[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
    };
    for (const auto& o : base.policy_opts) put(opts, o);
    for (const auto& o : base.placement_opts) put(popts, o);
    for (size_t a = 0; a < axes.size(); ++a) {
      if (axes[a].key == "policy") p.policy = axes[a].values[idx[a]];
      if (axes[a].key == "placement") p.placement = axes[a].values[idx[a]];
    }
    auto declared = PolicyOptionNames(p.policy);
    if (!declared.ok()) return declared.status();
    options_of[p.policy] = *declared;
    std::string range;  // thresholds=LO:HI, resolved once the queue count is known
    std::vector<bool> applied(axes.size(), false);  // the axes this combination's policy takes
    for (size_t a = 0; a < axes.size(); ++a) {
      const std::string& key = axes[a].key;
      const std::string& v = axes[a].values[idx[a]];
      if (key == "policy" || key == "placement" || key.rfind("placement.", 0) == 0 ||
          Declares(*declared, key)) {
        taken[a] = applied[a] = true;
      }
      if (key == "policy" || key == "placement") {
        p.knobs[key] = v;
      } else if (v == "-") {
        p.knobs[key] = v;  // the option is not given: its default (or another axis) holds
      } else if (key.rfind("placement.", 0) == 0) {
        popts[key.substr(10)] = Slashes(v);
        p.knobs[key] = v;
      } else if (Declares(*declared, key)) {
        if (key == "thresholds" && v.find(':') != std::string::npos) {
          range = v;
        } else {
          opts[key] = Slashes(v);
        }
        p.knobs[key] = v;
      }
    }
    bool ok = true;
    if (!range.empty()) {
      if (!opts.contains("queues")) {
        return InvalidArgument(fmt::format(
            "--grid thresholds={}: a LO:HI range needs the number of queues (--grid queues=... "
            "or --opt queues=K)",
            range));
      }
      auto k = ParseInt(opts["queues"]);
      auto th = GeometricThresholds(range, k ? *k : 0);
      if (!th.ok()) return th.status();
      if (th->empty()) {
        opts.erase("thresholds");
      } else {
        opts["thresholds"] = *th;
      }
    }
    for (const auto& [k, v] : opts) p.policy_opts.push_back(k + "=" + v);
    for (const auto& [k, v] : popts) p.placement_opts.push_back(k + "=" + v);
    p.label = p.policy;
    for (const auto& o : p.policy_opts) p.label += " " + o;
    p.label += " +" + p.placement;
    for (const auto& o : p.placement_opts) p.label += " " + o;
    if (Status st = ValidatePolicies(p.policy, p.policy_opts, p.placement, p.placement_opts, data);
        !st.ok()) {
      reasons.insert(st.message());
      ok = false;
    }
    if (ok) {
      // (A value another policy ignores is not shown valid: fifo with queues=0.)
      for (size_t a = 0; a < axes.size(); ++a) {
        if (applied[a]) valid[a][idx[a]] = true;
      }
    }
    if (ok && seen.insert(p.label).second) out.push_back(std::move(p));
    // Next combination: the last axis varies fastest.
    more = false;
    for (size_t a = axes.size(); a-- > 0;) {
      if (++idx[a] < axes[a].values.size()) {
        more = true;
        break;
      }
      idx[a] = 0;
    }
  }
  if (skipped) skipped->assign(reasons.begin(), reasons.end());
  const std::string why =
      reasons.empty() ? std::string()
                      : ": " + Join(std::vector<std::string>(reasons.begin(), reasons.end()), "; ");
  for (size_t a = 0; a < axes.size(); ++a) {
    if (!taken[a]) {
      std::vector<std::string> each;
      for (const auto& [policy, names] : options_of) {
        each.push_back(fmt::format("{}: {}", policy, names.empty() ? "none" : Join(names, ", ")));
      }
      return InvalidArgument(fmt::format("--grid {}: no policy of the sweep has this option ({})",
                                         axes[a].key, Join(each, "; ")));
    }
    for (size_t k = 0; k < axes[a].values.size(); ++k) {
      if (valid[a][k] || axes[a].values[k] == "-" || out.empty()) continue;
      // Refused in every combination: an error when refused on its own too (a typo, a value
      // out of range), else a combination matter (skipped, as above).
      if (Status alone = AloneValid(axes[a].key, axes[a].values[k], base, axes, options_of);
          !alone.ok()) {
        return InvalidArgument(
            fmt::format("--grid {}={}: {}", axes[a].key, axes[a].values[k], alone.message()));
      }
    }
  }
  if (out.empty()) {
    return InvalidArgument("the grid has no valid configuration" + why);
  }
  return out;
}

}  // namespace tiresias
