// The learned PACKLIMIT of the Tiresias paper: a linear (logistic) classifier over a
// model's skew and how spread a placement is, trained online on completed jobs' achieved
// speed. A job that ran spread and achieved less than `slow_below` of its packed speed is a
// positive ("placement-sensitive") example; one that kept up is a negative. Jobs that ran
// packed teach nothing about sensitivity and are ignored. Before any example it predicts
// "insensitive", so early jobs explore spread placements and produce the labels.
// Deterministic (fixed learning rate, examples in completion order); no clock, no I/O.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

namespace tiresias {

class PackLimitLearner {
 public:
  explicit PackLimitLearner(double slow_below = 0.8, double learning_rate = 1.0)
      : slow_below_(slow_below), lr_(learning_rate) {}

  // spread: log2(nodes / packed nodes) + 1 per extra switch; 0 = packed.
  void Observe(double skew, double spread, double achieved_rate);
  // Probability that a model of this skew runs slowly on a placement this spread.
  double PSlow(double skew, double spread) const;
  bool Sensitive(double skew, double spread) const {
    return examples_ > 0 && PSlow(skew, spread) > 0.5;
  }
  // The skew above which a one-level spread (spread = 1) is predicted slow: the learned
  // PACKLIMIT. nullopt before examples or when skew does not raise the odds.
  std::optional<double> PackLimit() const;
  int64_t examples() const { return examples_; }
  const std::array<double, 3>& weights() const { return w_; }

 private:
  double slow_below_, lr_;
  std::array<double, 3> w_{0, 0, 0};  // bias, skew, spread
  int64_t examples_ = 0;
};

}  // namespace tiresias
