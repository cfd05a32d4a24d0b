// A seeded, portable synthetic workload fitted to a trace's figures.
#include "trace/synthetic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <random>

namespace tiresias {
namespace {

uint64_t SplitMix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t Rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

size_t ClassOf(int gpus) {
  return gpus <= 1 ? 0 : gpus <= 4 ? 1 : gpus <= 8 ? 2 : 3;
}

// Linear interpolation between order statistics, as sim/metrics' Quantile.
double QuantileOf(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

// One drawn job before arrivals: 16 bytes, so a million take 16 MB.
struct Drawn {
  int32_t gpus;
  int16_t model;
  int16_t vc;  // -1: none
  int64_t seconds;
};

struct Drawing {
  std::vector<Drawn> jobs;
  double gpu_seconds = 0;
};

Drawing DrawJobs(const SyntheticConfig& cfg, const WorkloadFigures& f, PortableRng& rng) {
  std::vector<std::pair<int, int64_t>> sizes;
  int64_t size_total = 0;
  for (const auto& [g, n] : f.sizes) {
    if (g <= cfg.max_gpus && n > 0) {
      sizes.emplace_back(g, n);
      size_total += n;
    }
  }
  if (sizes.empty()) {  // nothing fits max_gpus: one-GPU jobs
    sizes.emplace_back(1, 1);
    size_total = 1;
  }
  int64_t vc_total = 0;
  for (const auto& [name, n] : f.vcs) vc_total += n;
  const std::vector<double>& levels = QuantileLevels();
  Drawing d;
  d.jobs.resize(static_cast<size_t>(std::max<int64_t>(cfg.jobs, 0)));
  for (Drawn& j : d.jobs) {
    int64_t r = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(size_total)));
    size_t s = 0;
    while (r >= sizes[s].second) r -= sizes[s++].second;
    j.gpus = sizes[s].first;
    const std::vector<double>& table = f.durations[ClassOf(j.gpus)];
    const double u = rng.Uniform();
    double secs = 1;
    if (table.size() == levels.size()) {
      size_t i =
          static_cast<size_t>(std::upper_bound(levels.begin(), levels.end(), u) - levels.begin());
      i = std::clamp<size_t>(i, 1, levels.size() - 1);
      const double p0 = levels[i - 1], p1 = levels[i];
      secs = table[i - 1] + (table[i] - table[i - 1]) * ((u - p0) / (p1 - p0));
    }
    j.seconds =
        std::max<int64_t>(1, static_cast<int64_t>(std::floor(secs * cfg.duration_scale + 0.5)));
    j.model = cfg.models ? static_cast<int16_t>(rng.Below(CnnModels().size())) : -1;
    j.vc = -1;
    if (vc_total > 0) {
      int64_t v = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(vc_total)));
      size_t k = 0;
      while (v >= f.vcs[k].second) v -= f.vcs[k++].second;
      j.vc = static_cast<int16_t>(k);
    }
    d.gpu_seconds += static_cast<double>(j.seconds) * j.gpus;
  }
  return d;
}

// Submit times (whole seconds from 0): Poisson arrivals (exponential gaps), scaled so that
// the span from the first to the last offers exactly `load` (a uniform stretch keeps them a
// Poisson process conditioned on its span).
template <typename Emit>
double Arrivals(const SyntheticConfig& cfg, const Drawing& d, PortableRng& rng, Emit emit) {
  const size_t n = d.jobs.size();
  const double gpus = static_cast<double>(std::max(1, cfg.cluster_gpus));
  const double span = d.gpu_seconds / (cfg.load * gpus);
  std::vector<double> at(n, 0.0);
  for (size_t i = 1; i < n; ++i) at[i] = at[i - 1] + rng.Exponential(1.0);
  const double scale = n > 1 && at[n - 1] > 0 ? span / at[n - 1] : 0;
  int64_t last = 0;
  for (size_t i = 0; i < n; ++i) {
    last = static_cast<int64_t>(std::floor(at[i] * scale + 0.5));
    emit(i, last);
  }
  return last > 0 ? d.gpu_seconds / (gpus * static_cast<double>(last)) : NAN;
}

}  // namespace

PortableRng::PortableRng(uint64_t seed) {
  uint64_t x = seed;
  for (auto& s : s_) s = SplitMix64(x);
}

uint64_t PortableRng::Next() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

double PortableRng::Uniform() {
  return static_cast<double>(Next() >> 11) * 0x1.0p-53;
}

uint64_t PortableRng::Below(uint64_t n) {
  const uint64_t threshold = (0 - n) % n;  // 2^64 mod n: values below it would bias
  while (true) {
    const uint64_t x = Next();
    if (x >= threshold) return x % n;
  }
}

double PortableRng::Exponential(double mean) {
  return -mean * PortableLog(1.0 - Uniform());
}

double PortableLog(double x) {
  int e = 0;
  double m = std::frexp(x, &e);  // exact: x = m x 2^e, 0.5 <= m < 1
  if (m < 0.70710678118654752440) {
    m *= 2;  // exact
    --e;
  }
  // ln m = 2 atanh(t), t = (m - 1) / (m + 1), |t| <= 0.172: 21 odd terms reach 1e-33.
  const double t = (m - 1) / (m + 1), t2 = t * t;
  double sum = 0, term = t;
  for (int k = 1; k <= 41; k += 2) {
    sum += term / k;
    term *= t2;
  }
  return 2 * sum + e * 0.69314718055994530942;
}

const std::vector<double>& QuantileLevels() {
  static const std::vector<double> kLevels = [] {
    std::vector<double> l;
    for (int k = 0; k < 100; ++k) l.push_back(k / 100.0);
    l.push_back(0.995);
    l.push_back(0.999);
    l.push_back(1.0);
    return l;
  }();
  return kLevels;
}

WorkloadFigures FitFigures(const std::vector<JobSpec>& jobs, std::string source) {
  WorkloadFigures f;
  f.source = std::move(source);
  std::map<int, int64_t> sizes;
  std::map<std::string, int64_t> vcs;
  std::array<std::vector<double>, 4> secs;
  for (const auto& j : jobs) {
    ++sizes[j.gpus];
    if (!j.vc.empty()) ++vcs[j.vc];
    if (j.duration) secs[ClassOf(j.gpus)].push_back(ToSeconds(*j.duration));
  }
  f.sizes.assign(sizes.begin(), sizes.end());
  f.vcs.assign(vcs.begin(), vcs.end());
  for (size_t c = 0; c < secs.size(); ++c) {
    std::sort(secs[c].begin(), secs[c].end());
    if (secs[c].empty()) continue;
    for (double q : QuantileLevels())
      f.durations[c].push_back(std::floor(QuantileOf(secs[c], q) + 0.5));
  }
  return f;
}

std::vector<JobSpec> SyntheticPhillyLike(const SyntheticConfig& cfg) {
  const WorkloadFigures& f = cfg.figures ? *cfg.figures : PhillyFigures();
  PortableRng rng(cfg.seed);
  const Drawing d = DrawJobs(cfg, f, rng);
  std::vector<JobSpec> jobs(d.jobs.size());
  Arrivals(cfg, d, rng, [&](size_t i, int64_t submit) {
    const Drawn& x = d.jobs[i];
    JobSpec& j = jobs[i];
    j.id = JobId(static_cast<int64_t>(i));
    j.gpus = x.gpus;
    j.submit = Seconds(submit);
    j.duration = Seconds(x.seconds);
    j.name = fmt::format("job{}", i);
    if (x.model >= 0) j.model = CnnModels()[static_cast<size_t>(x.model)];
    if (x.vc >= 0) j.vc = f.vcs[static_cast<size_t>(x.vc)].first;
  });
  return jobs;
}

StatusOr<double> WriteSyntheticCsv(const SyntheticConfig& cfg, const std::string& path) {
  const WorkloadFigures& f = cfg.figures ? *cfg.figures : PhillyFigures();
  PortableRng rng(cfg.seed);
  const Drawing d = DrawJobs(cfg, f, rng);
  std::ofstream out(path, std::ios::binary);
  if (!out) return IoError(fmt::format("{}: cannot write", path));
  std::string buf = "job_id,num_gpu,submit_time,duration,model_name,vc\n";
  const double load = Arrivals(cfg, d, rng, [&](size_t i, int64_t submit) {
    const Drawn& x = d.jobs[i];
    fmt::format_to(std::back_inserter(buf), "{},{},{},{},{},{}\n", i, x.gpus, submit, x.seconds,
                   x.model >= 0 ? CnnModels()[static_cast<size_t>(x.model)] : "",
                   x.vc >= 0 ? f.vcs[static_cast<size_t>(x.vc)].first : "");
    if (buf.size() > (1 << 20)) {
      out << buf;
      buf.clear();
    }
  });
  out << buf;
  out.close();
  if (!out) return IoError(fmt::format("{}: write failed", path));
  return load;
}

const std::vector<std::string>& CnnModels() {
  static const std::vector<std::string> kModels = {"vgg19",    "vgg16",      "vgg11",
                                                   "alexnet",  "resnet152",  "resnet101",
                                                   "resnet50", "inception4", "inception3"};
  return kModels;
}

size_t AssignModels(std::vector<JobSpec>& jobs, uint64_t seed,
                    const std::vector<std::string>& models) {
  if (models.empty()) return 0;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, models.size() - 1);
  size_t n = 0;
  for (auto& j : jobs) {
    if (!j.model.empty()) continue;
    j.model = models[pick(rng)];
    ++n;
  }
  return n;
}

}  // namespace tiresias
