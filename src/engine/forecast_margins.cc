// The forecasts' margins (see forecast.h): widening a range on a log scale of the wait, and
// the tracker that adapts them to how earlier forecasts turned out.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/forecast.h"

namespace tiresias {

void WidenRange(std::array<std::optional<Time>, 3>& q, Time now, std::array<double, 2> margin) {
  // t -> ln((t - now) / 1 s + 60): an error of minutes on a wait of minutes weighs like one of
  // hours on a wait of hours.
  const auto moved = [&](Time t, double by) {
    const double s = std::exp(std::log(ToSeconds(std::max<Time>(0, t - now)) + 60) + by) - 60;
    return now + static_cast<Time>(std::llround(std::max(0.0, s) * kMsPerSecond));
  };
  if (q[0] && margin[0] > 0) q[0] = std::min(*q[0], moved(*q[0], -margin[0]));
  if (q[2] && margin[1] > 0) q[2] = std::max(*q[2], moved(*q[2], margin[1]));
}

double AdaptMargin(double margin, bool miss, double step) {
  return std::clamp(margin + step * ((miss ? 1.0 : 0.0) - kSideMiss), 0.0, kMaxMargin);
}

void MarginTracker::Record(JobId job, std::optional<Time> p10, std::optional<Time> p90) {
  pending_.push_back({.job = job, .p10 = p10, .p90 = p90});
}

nlohmann::json MarginTracker::ToJson() const {
  auto time = [](std::optional<Time> t) { return t ? nlohmann::json(*t) : nlohmann::json(); };
  nlohmann::json pending = nlohmann::json::array();
  for (const Open& o : pending_) {
    pending.push_back({o.job.value(), time(o.p10), time(o.p90), o.low, o.high});
  }
  return {{"margins", {margin_[0], margin_[1]}}, {"resolved", resolved_}, {"pending", pending}};
}

Status MarginTracker::Restore(const nlohmann::json& saved) {
  auto bad = [](const std::string& what) {
    return InvalidArgument(fmt::format("forecast margins: {}", what));
  };
  if (!saved.is_object()) return bad("not an object");
  const auto m = saved.find("margins");
  if (m == saved.end() || !m->is_array() || m->size() != 2)
    return bad("'margins' is not [low, high]");
  std::array<double, 2> margin{};
  for (size_t side = 0; side < 2; ++side) {
    const auto& v = (*m)[side];
    if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= kMaxMargin)) {
      return bad(fmt::format("'margins'[{}] is not a number in [0, {}]", side, kMaxMargin));
    }
    margin[side] = v.get<double>();
  }
  const auto r = saved.find("resolved");
  if (r == saved.end() || !r->is_number_unsigned()) return bad("'resolved' is not a count");
  const auto p = saved.find("pending");
  if (p == saved.end() || !p->is_array()) return bad("'pending' is not a list");
  std::vector<Open> pending;
  for (size_t i = 0; i < p->size(); ++i) {
    const auto& e = (*p)[i];
    auto time = [&](const nlohmann::json& t, std::optional<Time>& out) {
      if (t.is_null()) return true;
      if (!t.is_number_integer()) return false;
      out = t.get<Time>();
      return true;
    };
    Open o;
    if (!e.is_array() || e.size() != 5 || !e[0].is_number_integer() || !time(e[1], o.p10) ||
        !time(e[2], o.p90) || !e[3].is_boolean() || !e[4].is_boolean()) {
      return bad(fmt::format("'pending'[{}] is not [job, p10, p90, low, high]", i));
    }
    o.job = JobId(e[0].get<int64_t>());
    o.low = e[3].get<bool>();
    o.high = e[4].get<bool>();
    pending.push_back(o);
  }
  margin_ = margin;
  resolved_ = r->get<size_t>();
  pending_ = std::move(pending);
  return Status::Ok();
}

bool MarginTracker::Pending(JobId job) const {
  return std::any_of(pending_.begin(), pending_.end(), [&](const Open& o) { return o.job == job; });
}

void MarginTracker::Resolve(Time now, const std::function<StartSeen(JobId)>& seen) {
  std::vector<Open> still;
  for (Open& o : pending_) {
    const StartSeen s = seen(o.job);
    if (s.gone && !s.started) continue;
    if (o.low) {  // early: it started before p10 (an unset p10: it started at all)
      std::optional<bool> miss;
      if (s.started) {
        miss = !o.p10 || *s.started < *o.p10;
      } else if (o.p10 && now >= *o.p10) {
        miss = false;
      }
      if (miss.has_value()) {
        margin_[0] = AdaptMargin(margin_[0], *miss, step_);
        o.low = false;
        ++resolved_;
      }
    }
    if (o.high) {  // late: the clock passed p90 while it waited (an unset p90 never is)
      std::optional<bool> miss;
      if (s.started) {
        miss = o.p90 && *s.started > *o.p90;
      } else if (o.p90 && now > *o.p90) {
        miss = true;
      }
      if (miss.has_value()) {
        margin_[1] = AdaptMargin(margin_[1], *miss, step_);
        o.high = false;
        ++resolved_;
      }
    }
    if (o.low || o.high) still.push_back(o);
  }
  pending_ = std::move(still);
}

}  // namespace tiresias
