// Calibration of the placement speed model against measured step times.
#include "sim/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "common/strings.h"
#include "sim/link_speed_model.h"
#include "trace/csv.h"

namespace tiresias {
namespace {

PlacementShape ShapeOfString(const std::string& p) {
  PlacementShape s{0, static_cast<int>(p.size()), 1};
  for (char c : p) s.gpus += c - '0';
  return s;
}

// Ring factors on one node and across nodes: 2 (n - 1) / n on the slowest link.
std::pair<double, double> Factors(const PlacementShape& s) {
  if (s.gpus <= 1) return {0, 0};
  double f = 2.0 * (s.gpus - 1) / s.gpus;
  return s.nodes <= 1 ? std::pair{f, 0.0} : std::pair{0.0, f};
}

bool ValidPlacement(std::string_view p) {
  return !p.empty() && std::all_of(p.begin(), p.end(), [](char c) { return c >= '1' && c <= '9'; });
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

using BySize = std::map<int, std::map<std::string, double>>;  // bsz -> placement -> step

}  // namespace

StatusOr<std::vector<StepProfile>> ReadStepProfiles(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return NotFound(fmt::format("{}: not a directory", dir));
  }
  std::vector<std::string> models;
  // The error_code forms throughout: an unreadable entry is an error to report, not a throw.
  std::filesystem::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    if (it->is_directory(entry_ec) &&
        std::filesystem::exists(it->path() / "placements.csv", entry_ec)) {
      models.push_back(it->path().filename().string());
    }
  }
  if (ec) return IoError(fmt::format("{}: cannot list: {}", dir, ec.message()));
  std::sort(models.begin(), models.end());
  std::vector<StepProfile> out;
  for (const auto& m : models) {
    std::string path = dir + "/" + m + "/placements.csv";
    auto f = CsvFile::Open(path);
    if (!f.ok()) return f.status();
    auto pc = f->Column("placement"), bc = f->Column("local_bsz"), sc = f->Column("step_time");
    if (!pc || !bc || !sc) {
      return InvalidArgument(
          fmt::format("{}:1: expected columns placement,local_bsz,step_time", path));
    }
    StepProfile p{m, {}};
    std::vector<std::string_view> row;
    while (f->Next(row)) {
      if (row.size() != f->header().size()) {
        return InvalidArgument(fmt::format("{}: {} fields, the header has {}", f->where(),
                                           row.size(), f->header().size()));
      }
      auto place = Trim(row[*pc]);
      auto bsz = ParseInt(Trim(row[*bc]));
      auto step = ParseDouble(Trim(row[*sc]));
      if (!ValidPlacement(place) || !bsz || !step || !(*step > 0)) {
        return InvalidArgument(
            fmt::format("{}: bad placement, batch size or step time", f->where()));
      }
      p.samples.push_back({std::string(place), static_cast<int>(*bsz), *step});
    }
    out.push_back(std::move(p));
  }
  return out;
}

StatusOr<Calibration> Calibrate(const std::vector<StepProfile>& profiles) {
  // Group by model and batch size; keep sizes that have the 1-GPU step (the compute time).
  std::vector<std::pair<std::string, BySize>> data;
  for (const auto& p : profiles) {
    BySize by;
    for (const auto& s : p.samples) by[s.local_bsz][s.placement] = s.step_s;
    std::erase_if(by, [](const auto& kv) { return !kv.second.contains("1"); });
    if (!by.empty()) data.emplace_back(p.model, std::move(by));
  }
  // Each model's own intra and inter coefficients (2-variable least squares on step -
  // compute); R is the geometric mean of their ratios.
  Calibration cal;
  std::vector<double> log_ratios(data.size(), 0);
  double sum_log = 0;
  int n_ratios = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    double s11 = 0, s12 = 0, s22 = 0, b1 = 0, b2 = 0;
    for (const auto& [bsz, pl] : data[i].second) {
      double c = pl.at("1");
      for (const auto& [p, t] : pl) {
        auto [fi, fx] = Factors(ShapeOfString(p));
        s11 += fi * fi, s12 += fi * fx, s22 += fx * fx, b1 += fi * (t - c), b2 += fx * (t - c);
      }
    }
    double det = s11 * s22 - s12 * s12;
    if (det <= 0) continue;
    double a = (b1 * s22 - b2 * s12) / det, b = (s11 * b2 - s12 * b1) / det;
    if (a > 0 && b > 0) {
      log_ratios[i] = std::log(b / a);
      sum_log += log_ratios[i];
      ++n_ratios;
    }
  }
  if (n_ratios == 0) {
    return InvalidArgument("calibration: no model has 1-GPU, one-node and multi-node samples");
  }
  cal.ratio = std::exp(sum_log / n_ratios);
  const LinkBandwidths unit{1.0, 1.0 / cal.ratio, 1.0 / cal.ratio};

  std::vector<double> all_errors, all_floor;
  for (size_t i = 0; i < data.size(); ++i) {
    const auto& [model, by] = data[i];
    ModelFit mf{model, 0, log_ratios[i] != 0 ? std::exp(log_ratios[i]) : 0};
    // V by least squares with R fixed: step - compute = V x g, g = fi + R fx.
    double num = 0, den = 0;
    for (const auto& [bsz, pl] : by) {
      double c = pl.at("1");
      for (const auto& [p, t] : pl) {
        auto [fi, fx] = Factors(ShapeOfString(p));
        double g = fi + cal.ratio * fx;
        num += g * (t - c), den += g * g;
      }
    }
    mf.volume_s = den > 0 ? std::max(0.0, num / den) : 0;
    // Slowdown errors: multi-node placements of 2-4 GPUs against the one-node placement.
    std::map<std::string, std::vector<std::pair<double, double>>> per_placement;
    std::map<std::pair<int, int>, std::vector<double>> groups;  // (bsz, gpus) -> measured
    std::vector<double> errors;
    for (const auto& [bsz, pl] : by) {
      const double c_ms = pl.at("1") * 1000, v_mb = mf.volume_s * 1000;  // V x (1 MB/ms)
      for (const auto& [p, t] : pl) {
        PlacementShape s = ShapeOfString(p);
        auto one = pl.find(std::to_string(s.gpus));
        if (s.gpus > 4 || s.nodes < 2 || one == pl.end()) continue;
        PlacementShape packed{s.gpus, 1, 1};
        double measured = t / one->second;
        double predicted = IterationMs(c_ms, v_mb, s, unit) / IterationMs(c_ms, v_mb, packed, unit);
        per_placement[p].push_back({measured, predicted});
        groups[{bsz, s.gpus}].push_back(measured);
        errors.push_back(std::abs(predicted - measured) / measured);
      }
    }
    if (errors.empty()) continue;
    for (const auto& [p, mp] : per_placement) {
      PlacementFit pf{p, ShapeOfString(p).gpus, static_cast<int>(p.size())};
      for (auto [m, pr] : mp) {
        pf.measured += m / mp.size();
        pf.predicted += pr / mp.size();
        pf.mean_error += std::abs(pr - m) / m / mp.size();
      }
      mf.placements.push_back(pf);
    }
    std::sort(mf.placements.begin(), mf.placements.end(), [](const auto& x, const auto& y) {
      return std::tie(x.gpus, x.nodes, x.placement) < std::tie(y.gpus, y.nodes, y.placement);
    });
    std::vector<double> floor;
    for (const auto& [key, measured] : groups) {
      double med = Median(measured);
      for (double m : measured) floor.push_back(std::abs(med - m) / m);
    }
    for (double e : errors) mf.mean_error += e / errors.size();
    mf.max_error = *std::max_element(errors.begin(), errors.end());
    for (double e : floor) mf.noise_floor += e / floor.size();
    all_errors.insert(all_errors.end(), errors.begin(), errors.end());
    all_floor.insert(all_floor.end(), floor.begin(), floor.end());
    cal.models.push_back(std::move(mf));
  }
  if (all_errors.empty()) return InvalidArgument("calibration: no multi-node samples of 2-4 GPUs");
  std::sort(all_errors.begin(), all_errors.end());
  cal.samples = all_errors.size();
  for (double e : all_errors) cal.mean_error += e / all_errors.size();
  for (double e : all_floor) cal.noise_floor += e / all_floor.size();
  cal.p90_error = all_errors[static_cast<size_t>(0.9 * (all_errors.size() - 1))];
  cal.max_error = all_errors.back();
  return cal;
}

}  // namespace tiresias
