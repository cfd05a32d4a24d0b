// The learned PACKLIMIT: online logistic regression over (skew, spread).
#include "placement/packlimit_learner.h"

#include <cmath>

namespace tiresias {

double PackLimitLearner::PSlow(double skew, double spread) const {
  double z = w_[0] + w_[1] * skew + w_[2] * spread;
  return 1.0 / (1.0 + std::exp(-z));
}

void PackLimitLearner::Observe(double skew, double spread, double achieved_rate) {
  if (spread <= 0) return;  // packed: says nothing about sensitivity
  double y = achieved_rate < slow_below_ ? 1.0 : 0.0;
  double g = y - PSlow(skew, spread);  // gradient of the log-likelihood
  w_[0] += lr_ * g;
  w_[1] += lr_ * g * skew;
  w_[2] += lr_ * g * spread;
  ++examples_;
}

std::optional<double> PackLimitLearner::PackLimit() const {
  if (examples_ == 0 || !(w_[1] > 0)) return std::nullopt;
  return -(w_[0] + w_[2]) / w_[1];
}

}  // namespace tiresias
