// Calibration of the placement speed model (link_speed_model.h) against measured step
// times, such as ../shared/profiles/pollux/<model>/placements.csv (placement = GPUs per
// node, e.g. "4", "22", "1111"; local batch size; step time in seconds).
//
// Per model and batch size, compute = the 1-GPU step time. The model predicts
//   step(P) = compute + V x 2 (n - 1) / n x (1 on one node, R across nodes)
// with V (the model's gradient volume over the intra-node bandwidth, in s) fitted per model
// and R = intra / inter-node bandwidth shared by all models (a property of the cluster):
// the geometric mean of each model's own least-squares intra:inter ratio. The error is that
// of the predicted slowdown step(P) / step(one node), for the placements of 2-4 GPUs that
// span nodes, against the measured one. The noise floor is the error of the best predictor
// that sees only (model, batch size, GPUs, spans nodes): the group median; no model of the
// slowest link can beat it, since the data give different times to e.g. "22" and "1111".
// Pure functions apart from the reader.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace tiresias {

struct StepSample {
  std::string placement;  // GPUs per node, e.g. "22"
  int local_bsz = 0;
  double step_s = 0;
};
struct StepProfile {
  std::string model;
  std::vector<StepSample> samples;
};

// Reads DIR/<model>/placements.csv for every model directory, sorted by name.
StatusOr<std::vector<StepProfile>> ReadStepProfiles(const std::string& dir);

struct PlacementFit {
  std::string placement;
  int gpus = 0, nodes = 0;
  double measured = 0, predicted = 0;  // slowdown vs one node, averaged over batch sizes
  double mean_error = 0;               // mean |predicted - measured| / measured over sizes
};
struct ModelFit {
  std::string model;
  double volume_s = 0;    // V: gradient volume / intra-node bandwidth, seconds
  double own_ratio = 0;   // this model's least-squares intra:inter ratio
  double mean_error = 0;  // over its (batch size, placement) samples
  double max_error = 0;
  double noise_floor = 0;  // mean error of the group-median predictor
  std::vector<PlacementFit> placements;
};
struct Calibration {
  double ratio = 0;  // R = intra / inter-node bandwidth
  double mean_error = 0, p90_error = 0, max_error = 0, noise_floor = 0;
  size_t samples = 0;
  std::vector<ModelFit> models;
};

// Fails when no model has both the 1-GPU placement and multi-GPU samples.
StatusOr<Calibration> Calibrate(const std::vector<StepProfile>& profiles);

}  // namespace tiresias
