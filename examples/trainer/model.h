// The example trainer's model: a seeded synthetic binary-classification dataset and a
// 2-layer MLP (tanh hidden layer, sigmoid output) trained by minibatch SGD. Everything is
// plain single-threaded C++ with a fixed iteration order, so a given seed and step count
// always yields the same weights bit for bit, and so does any run resumed from TrainState.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trainer {

// Fixed problem size; a checkpoint records it so a mismatched binary refuses to resume.
inline constexpr int kInputs = 8;
inline constexpr int kHidden = 16;
inline constexpr int kSamples = 512;
inline constexpr int kBatch = 16;
inline constexpr double kLearningRate = 0.5;

// splitmix64: a tiny generator whose whole state is one integer, so it checkpoints exactly.
struct Rng {
  uint64_t state = 0;
  uint64_t Next();
  double Uniform(double lo, double hi);  // [lo, hi), from the top 53 bits
  uint64_t Below(uint64_t n);            // [0, n), n > 0
};

struct Dataset {
  std::vector<double> x;  // kSamples rows of kInputs
  std::vector<double> y;  // 0 or 1
};

// Everything that changes while training: a checkpoint is exactly this plus the seed.
struct TrainState {
  int64_t step = 0;            // steps completed
  Rng rng;                     // after the data, the initial weights and every shuffle so far
  std::vector<int32_t> perm;   // sample order of the current epoch
  std::vector<double> params;  // w1 (kHidden x kInputs), b1, w2 (kHidden), b2
};

inline constexpr int kParams = kHidden * kInputs + kHidden + kHidden + 1;
inline constexpr int kBatchesPerEpoch = kSamples / kBatch;

// The dataset for `seed`: uniform inputs, labels from a fixed nonlinear rule. Consumes the
// generator so the same stream then initialises the weights.
Dataset MakeDataset(Rng& rng);
// Fresh state for `seed`; also returns the dataset drawn from the same stream.
TrainState InitialState(uint64_t seed, Dataset& data);
// One SGD step on the next minibatch; reshuffles at each epoch start.
void TrainStep(const Dataset& data, TrainState& s);
// Mean binary cross-entropy over the whole dataset.
double Loss(const Dataset& data, const std::vector<double>& params);
// FNV-1a 64 over the parameters' raw bytes, as 16 hex digits.
std::string Checksum(const std::vector<double>& params);

}  // namespace trainer
