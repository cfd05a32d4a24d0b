// The example trainer's model: dataset generation, MLP forward/backward, SGD and checksums.
#include "model.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace trainer {
namespace {

// Parameter layout inside TrainState::params.
constexpr int kW1 = 0;
constexpr int kB1 = kW1 + kHidden * kInputs;
constexpr int kW2 = kB1 + kHidden;
constexpr int kB2 = kW2 + kHidden;

double Sigmoid(double z) {
  return 1.0 / (1.0 + std::exp(-z));
}

// Forward pass for one sample; fills the hidden activations and returns the output
// probability.
double Forward(const std::vector<double>& p, const double* x, double* h) {
  double z = p[kB2];
  for (int j = 0; j < kHidden; ++j) {
    double a = p[kB1 + j];
    for (int i = 0; i < kInputs; ++i) a += p[kW1 + j * kInputs + i] * x[i];
    h[j] = std::tanh(a);
    z += p[kW2 + j] * h[j];
  }
  return Sigmoid(z);
}

void Shuffle(Rng& rng, std::vector<int32_t>& perm) {
  for (size_t i = perm.size() - 1; i > 0; --i) {
    size_t k = rng.Below(i + 1);
    std::swap(perm[i], perm[k]);
  }
}

}  // namespace

uint64_t Rng::Next() {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double Rng::Uniform(double lo, double hi) {
  return lo + (hi - lo) * (static_cast<double>(Next() >> 11) * 0x1.0p-53);
}

uint64_t Rng::Below(uint64_t n) {
  return Next() % n;
}

Dataset MakeDataset(Rng& rng) {
  Dataset d;
  d.x.resize(kSamples * kInputs);
  d.y.resize(kSamples);
  for (int s = 0; s < kSamples; ++s) {
    double* x = &d.x[s * kInputs];
    for (int i = 0; i < kInputs; ++i) x[i] = rng.Uniform(-1, 1);
    double rule = x[0] * x[1] + 0.5 * x[2] - x[3] * x[3] + 0.3 * x[4] * x[5] + 0.2;
    d.y[s] = rule > 0 ? 1.0 : 0.0;
  }
  return d;
}

TrainState InitialState(uint64_t seed, Dataset& data) {
  TrainState s;
  s.rng.state = seed;
  data = MakeDataset(s.rng);
  s.params.assign(kParams, 0.0);
  double r1 = 1.0 / std::sqrt(static_cast<double>(kInputs));
  double r2 = 1.0 / std::sqrt(static_cast<double>(kHidden));
  for (int k = kW1; k < kB1; ++k) s.params[k] = s.rng.Uniform(-r1, r1);
  for (int k = kW2; k < kB2; ++k) s.params[k] = s.rng.Uniform(-r2, r2);
  s.perm.resize(kSamples);
  for (int i = 0; i < kSamples; ++i) s.perm[i] = i;
  return s;
}

void TrainStep(const Dataset& data, TrainState& s) {
  int batch = static_cast<int>(s.step % kBatchesPerEpoch);
  if (batch == 0) Shuffle(s.rng, s.perm);
  std::vector<double> grad(kParams, 0.0);
  double h[kHidden];
  for (int b = 0; b < kBatch; ++b) {
    int n = s.perm[batch * kBatch + b];
    const double* x = &data.x[n * kInputs];
    double dz = Forward(s.params, x, h) - data.y[n];  // d(BCE)/d(logit)
    grad[kB2] += dz;
    for (int j = 0; j < kHidden; ++j) {
      grad[kW2 + j] += dz * h[j];
      double da = dz * s.params[kW2 + j] * (1.0 - h[j] * h[j]);
      grad[kB1 + j] += da;
      for (int i = 0; i < kInputs; ++i) grad[kW1 + j * kInputs + i] += da * x[i];
    }
  }
  for (int k = 0; k < kParams; ++k) s.params[k] -= kLearningRate * grad[k] / kBatch;
  ++s.step;
}

double Loss(const Dataset& data, const std::vector<double>& params) {
  double total = 0;
  double h[kHidden];
  for (int n = 0; n < kSamples; ++n) {
    double p = Forward(params, &data.x[n * kInputs], h);
    p = std::fmin(std::fmax(p, 1e-12), 1.0 - 1e-12);
    total -= data.y[n] * std::log(p) + (1.0 - data.y[n]) * std::log(1.0 - p);
  }
  return total / kSamples;
}

std::string Checksum(const std::vector<double>& params) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (double v : params) {
    unsigned char bytes[sizeof v];
    std::memcpy(bytes, &v, sizeof v);
    for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", h);
}

}  // namespace trainer
