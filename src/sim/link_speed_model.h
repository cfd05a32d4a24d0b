// The simulator's placement speed model: one training iteration = compute + a ring
// all-reduce of the model's gradients over the slowest link the placement crosses
// (within a node, between nodes under one switch, across switches):
//
//   iteration(P) = compute + 2 (n - 1) / n x gradient MB / bandwidth(slowest link of P)
//
// (n = GPUs; 1 GB/s = 1 MB/ms). A job's trace duration is its time on a packed placement
// (the fewest nodes, then the fewest switches), so rate(P) = iteration(packed) /
// iteration(P), at most 1. Models without a profile are insensitive (rate 1). Parameters and
// their calibration against ../shared/profiles/pollux: sim/calibration.h and the README.
// Immutable after construction; thread-safe to share.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "core/speed_model.h"
#include "placement/model_profile.h"

namespace tiresias {

// Bandwidths in GB/s (= MB/ms). Defaults: PCIe-class within a node; the inter-node figure
// is intra / 4.36, the intra:inter ratio fitted on the Pollux measurements (README);
// across switches half of that (2:1 oversubscribed uplinks).
struct LinkBandwidths {
  double intra = 10.0;
  double inter_node = 2.3;
  double inter_switch = 1.15;
};
// "intra=10,inter-node=2.3,inter-switch=1.15"; keys may be omitted (defaults kept).
StatusOr<LinkBandwidths> ParseLinkBandwidths(const std::string& spec);
std::string ToString(const LinkBandwidths& bw);

enum class Link { kNone, kIntra, kInterNode, kInterSwitch };
const char* ToString(Link l);

// What the speed model sees of a placement.
struct PlacementShape {
  int gpus = 1, nodes = 1, switches = 1;
  Link slowest() const;
};
PlacementShape ShapeOf(const Allocation& a, const Topology& topo);
// The packed placement of `gpus` on `topo`: the fewest nodes, then the fewest switches.
PlacementShape PackedShape(int gpus, const Topology& topo);

// One iteration in ms: compute + ring all-reduce of `gradient_mb` over the slowest link.
double IterationMs(double compute_ms, double gradient_mb, const PlacementShape& p,
                   const LinkBandwidths& bw);

class LinkSpeedModel : public SpeedModel {
 public:
  // `default_compute_ms` is used for profiled models without a compute time.
  LinkSpeedModel(ModelCatalog catalog, LinkBandwidths bw, double default_compute_ms = 200);
  double Rate(const JobSpec& job, const Allocation& alloc, const Topology& topo) const override;
  bool Knows(const JobSpec& job) const override;
  // Rate of `model` on a shape, relative to the packed shape on `topo` (1 for unknown).
  double RateOf(const std::string& model, const PlacementShape& p, const Topology& topo) const;
  const ModelCatalog& catalog() const { return catalog_; }
  const LinkBandwidths& bandwidths() const { return bw_; }
  double ComputeMs(const ModelProfile& m) const {
    return m.compute_ms > 0 ? m.compute_ms : default_compute_ms_;
  }

 private:
  ModelCatalog catalog_;
  LinkBandwidths bw_;
  double default_compute_ms_;
};

// Default data: tensor sizes from ../shared/profiles/tensor_sizes.csv, compute times from
// the public simulator's 60_job.csv (1-GPU duration / iterations).
std::string DefaultProfilesPath();
std::string DefaultComputeTimesPath();
// Loads the profiles and compute times and builds the model.
StatusOr<std::shared_ptr<const LinkSpeedModel>> LoadLinkSpeedModel(const std::string& profiles,
                                                                   const std::string& compute_times,
                                                                   const LinkBandwidths& bw);

}  // namespace tiresias
