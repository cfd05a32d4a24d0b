// The simulator's placement speed model: one training iteration = compute + the time to
// exchange the model's gradients, over the slowest link the placement crosses (within a
// node, between nodes under one switch, across switches), in one of two modes:
//
//   all-reduce: compute + 2 (n - 1) / n x gradient MB / bandwidth(slowest link of P)
//   ps:         compute + the busiest parameter server's time (PsCommMs below)
//
// (n = GPUs; 1 GB/s = 1 MB/ms). A job's trace duration is its time on a packed placement
// (the fewest nodes, then the fewest switches), so rate(P) = iteration(packed) /
// iteration(P), at most 1. Models without a profile are insensitive (rate 1). Parameters and
// their calibration against ../shared/profiles/pollux (all-reduce): sim/calibration.h and
// the README. Immutable after construction; thread-safe to share.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "core/model_catalog.h"
#include "core/speed_model.h"

namespace tiresias {

// Bandwidths in GB/s (= MB/ms). Defaults: PCIe-class within a node; the inter-node figure
// is intra / 4.36, the intra:inter ratio fitted on the Pollux measurements (README);
// across switches half of that (2:1 oversubscribed uplinks).
struct LinkBandwidths {
  double intra = 10.0;
  double inter_node = 2.3;
  double inter_switch = 1.15;
};
// The bandwidths --link-bw accepts, in GB/s: from a megabyte per second to 100 TB/s.
inline constexpr double kMinLinkGBps = 0.001;
inline constexpr double kMaxLinkGBps = 1e5;
// "intra=10,inter-node=2.3,inter-switch=1.15"; keys may be omitted (defaults kept).
StatusOr<LinkBandwidths> ParseLinkBandwidths(const std::string& spec);
std::string ToString(const LinkBandwidths& bw);

enum class Link { kNone, kIntra, kInterNode, kInterSwitch };
const char* ToString(Link l);

// How a job exchanges gradients: ring all-reduce (Pollux's measurements), or TensorFlow
// parameter servers, one per node spanned (the Tiresias testbed). Default: ps (design.md).
enum class CommMode { kAllReduce, kParameterServer };
StatusOr<CommMode> ParseCommMode(const std::string& s);  // "ps" | "allreduce"
const char* ToString(CommMode m);

// What the speed model sees of a placement.
struct PlacementShape {
  int gpus = 1, nodes = 1, switches = 1;
  std::vector<int> per_node = {};  // GPUs on each node; empty = as even as possible
  Link slowest() const;
  // `per_node`, or `gpus` spread over `nodes` as evenly as possible (the first get more).
  std::vector<int> GpusPerNode() const;
};
PlacementShape ShapeOf(const Allocation& a, const Topology& topo);
// The packed placement of `gpus` on `topo`: the fewest nodes, then the fewest switches.
PlacementShape PackedShape(int gpus, const Topology& topo);

// One iteration in ms: compute + ring all-reduce of `gradient_mb` over the slowest link.
double IterationMs(double compute_ms, double gradient_mb, const PlacementShape& p,
                   const LinkBandwidths& bw);

// Parameter-server communication per iteration, in ms. One PS per node of P; tensors are
// assigned whole, largest first, each to the least-loaded PS (ties: the lowest node), so PS j
// serves L_j MB. Each of the n workers pushes its gradient of those tensors to PS j and pulls
// the new values back: with g_j workers on PS j's node that is 2 g_j L_j MB over the node's
// bus (intra) and 2 (n - g_j) L_j MB over P's slowest link, carried in parallel, so PS j takes
// max(local / intra, remote / link). The iteration waits for the busiest PS. A skewed model
// (one huge tensor) loads one PS; a balanced one splits its volume over all of them.
double PsCommMs(const std::vector<double>& tensors_mb, const PlacementShape& p,
                const LinkBandwidths& bw);

class LinkSpeedModel : public SpeedModel {
 public:
  // `default_compute_ms` is used for profiled models without a compute time.
  LinkSpeedModel(ModelCatalog catalog, LinkBandwidths bw, double default_compute_ms = 200,
                 CommMode comm = CommMode::kParameterServer);
  double Rate(const JobSpec& job, const Allocation& alloc, const Topology& topo) const override;
  bool Knows(const JobSpec& job) const override;
  // Rate of `model` on a shape, relative to the packed shape on `topo` (1 for unknown).
  double RateOf(const std::string& model, const PlacementShape& p, const Topology& topo) const;
  // One iteration of `m` on `p` in ms, in this model's communication mode.
  double IterationMsOf(const ModelProfile& m, const PlacementShape& p) const;
  CommMode comm() const { return comm_; }
  const ModelCatalog& catalog() const { return catalog_; }
  const LinkBandwidths& bandwidths() const { return bw_; }
  double ComputeMs(const ModelProfile& m) const {
    return m.compute_ms > 0 ? m.compute_ms : default_compute_ms_;
  }

 private:
  ModelCatalog catalog_;
  LinkBandwidths bw_;
  double default_compute_ms_;
  CommMode comm_;
};

// Default data: tensor sizes from ../shared/profiles/tensor_sizes.csv, compute times from
// the public simulator's 60_job.csv (1-GPU duration / iterations).
std::string DefaultProfilesPath();
std::string DefaultComputeTimesPath();
// Loads the profiles and compute times and builds the model.
StatusOr<std::shared_ptr<const LinkSpeedModel>> LoadLinkSpeedModel(const std::string& profiles,
                                                                   const std::string& compute_times,
                                                                   const LinkBandwidths& bw,
                                                                   CommMode comm);

}  // namespace tiresias
