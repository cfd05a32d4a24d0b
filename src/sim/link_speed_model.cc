// The placement speed model: compute plus a ring all-reduce, or parameter-server traffic,
// over the slowest link.
#include "sim/link_speed_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "common/strings.h"
#include "trace/model_profile_reader.h"

namespace tiresias {

StatusOr<LinkBandwidths> ParseLinkBandwidths(const std::string& spec) {
  LinkBandwidths bw;
  for (auto part : Split(spec, ',')) {
    part = Trim(part);
    if (part.empty()) continue;
    auto eq = part.find('=');
    std::string key(Trim(part.substr(0, eq)));
    auto v = eq == std::string_view::npos ? std::nullopt : ParseDouble(Trim(part.substr(eq + 1)));
    if (!v || !(*v >= kMinLinkGBps && *v <= kMaxLinkGBps)) {
      return InvalidArgument(
          fmt::format("link bandwidth '{}': expected key=GB/s with a value in [{}, {}]", part,
                      kMinLinkGBps, kMaxLinkGBps));
    }
    if (key == "intra") {
      bw.intra = *v;
    } else if (key == "inter-node") {
      bw.inter_node = *v;
    } else if (key == "inter-switch") {
      bw.inter_switch = *v;
    } else {
      return InvalidArgument(fmt::format(
          "link bandwidth '{}': unknown link; valid: intra, inter-node, inter-switch", key));
    }
  }
  return bw;
}

std::string ToString(const LinkBandwidths& bw) {
  return fmt::format("intra={},inter-node={},inter-switch={}", bw.intra, bw.inter_node,
                     bw.inter_switch);
}

const char* ToString(Link l) {
  switch (l) {
    case Link::kNone:
      return "none";
    case Link::kIntra:
      return "intra";
    case Link::kInterNode:
      return "inter-node";
    case Link::kInterSwitch:
      return "inter-switch";
  }
  return "?";
}

StatusOr<CommMode> ParseCommMode(const std::string& s) {
  if (s == "ps") return CommMode::kParameterServer;
  if (s == "allreduce") return CommMode::kAllReduce;
  return InvalidArgument(fmt::format("communication mode '{}': valid: ps, allreduce", s));
}

const char* ToString(CommMode m) {
  return m == CommMode::kParameterServer ? "ps" : "allreduce";
}

std::vector<int> PlacementShape::GpusPerNode() const {
  if (!per_node.empty()) return per_node;
  std::vector<int> out;
  for (int i = 0; i < nodes; ++i) out.push_back(gpus / nodes + (i < gpus % nodes ? 1 : 0));
  return out;
}

Link PlacementShape::slowest() const {
  if (gpus <= 1) return Link::kNone;
  if (nodes <= 1) return Link::kIntra;
  return switches <= 1 ? Link::kInterNode : Link::kInterSwitch;
}

PlacementShape ShapeOf(const Allocation& a, const Topology& topo) {
  PlacementShape p{a.gpu_count(), a.node_count(), 0, {}};
  int last = -1;
  for (const auto& s : a.slices) {  // slices are ordered by node, so switches ascend
    p.per_node.push_back(s.count());
    int sw = topo.switch_of(s.node);
    if (sw != last) ++p.switches;
    last = sw;
  }
  return p;
}

PlacementShape PackedShape(int gpus, const Topology& topo) {
  auto ceil_div = [](int a, int b) { return (a + b - 1) / b; };
  PlacementShape p{
      gpus, ceil_div(gpus, topo.gpus_per_node()), ceil_div(gpus, topo.gpus_per_switch()), {}};
  for (int left = gpus; left > 0; left -= topo.gpus_per_node()) {  // full nodes, then the rest
    p.per_node.push_back(std::min(left, topo.gpus_per_node()));
  }
  return p;
}

namespace {

// GB/s of the slowest link of `p` (0 for one GPU: nothing crosses a link).
double SlowestBandwidth(const PlacementShape& p, const LinkBandwidths& bw) {
  switch (p.slowest()) {
    case Link::kNone:
      return 0;
    case Link::kIntra:
      return bw.intra;
    case Link::kInterNode:
      return bw.inter_node;
    case Link::kInterSwitch:
      return bw.inter_switch;
  }
  return 0;
}

}  // namespace

double IterationMs(double compute_ms, double gradient_mb, const PlacementShape& p,
                   const LinkBandwidths& bw) {
  double link = SlowestBandwidth(p, bw);
  if (link == 0) return compute_ms;
  double n = p.gpus;
  return compute_ms + 2.0 * (n - 1) / n * gradient_mb / link;
}

double PsCommMs(const std::vector<double>& tensors_mb, const PlacementShape& p,
                const LinkBandwidths& bw) {
  double link = SlowestBandwidth(p, bw);
  if (link == 0) return 0;
  std::vector<int> workers = p.GpusPerNode();
  std::vector<double> load(workers.size(), 0.0), sorted = tensors_mb;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  for (double t : sorted) *std::min_element(load.begin(), load.end()) += t;  // first minimum
  double busiest = 0;
  for (size_t j = 0; j < workers.size(); ++j) {
    double local = 2.0 * workers[j] * load[j], remote = 2.0 * (p.gpus - workers[j]) * load[j];
    busiest = std::max(busiest, std::max(local / bw.intra, remote / link));
  }
  return busiest;
}

LinkSpeedModel::LinkSpeedModel(ModelCatalog catalog, LinkBandwidths bw, double default_compute_ms,
                               CommMode comm)
    : catalog_(std::move(catalog)), bw_(bw), default_compute_ms_(default_compute_ms), comm_(comm) {}

double LinkSpeedModel::IterationMsOf(const ModelProfile& m, const PlacementShape& p) const {
  if (comm_ == CommMode::kAllReduce) return IterationMs(ComputeMs(m), m.total_mb, p, bw_);
  return ComputeMs(m) + PsCommMs(m.tensors_mb, p, bw_);
}

bool LinkSpeedModel::Knows(const JobSpec& job) const {
  return catalog_.Find(job.model) != nullptr;
}

double LinkSpeedModel::RateOf(const std::string& model, const PlacementShape& p,
                              const Topology& topo) const {
  const ModelProfile* m = catalog_.Find(model);
  if (!m || p.gpus <= 1) return 1.0;
  PlacementShape packed = PackedShape(p.gpus, topo);
  if (p.nodes <= packed.nodes && p.switches <= packed.switches) return 1.0;
  return std::clamp(IterationMsOf(*m, packed) / IterationMsOf(*m, p), kMinRate, 1.0);
}

double LinkSpeedModel::Rate(const JobSpec& job, const Allocation& alloc,
                            const Topology& topo) const {
  if (job.gpus <= 1 || alloc.node_count() <= 1) return 1.0;  // one node: packed
  return RateOf(job.model, ShapeOf(alloc, topo), topo);
}

std::string DefaultProfilesPath() {
  return std::string(TIRESIAS_SHARED_DIR) + "/profiles/tensor_sizes.csv";
}
std::string DefaultComputeTimesPath() {
  return std::string(TIRESIAS_SHARED_DIR) + "/traces/tiresias/60_job.csv";
}

StatusOr<std::shared_ptr<const LinkSpeedModel>> LoadLinkSpeedModel(const std::string& profiles,
                                                                   const std::string& compute_times,
                                                                   const LinkBandwidths& bw,
                                                                   CommMode comm) {
  auto catalog = ReadModelCatalog(profiles);
  if (!catalog.ok()) return catalog.status();
  if (!compute_times.empty()) {
    if (Status st = ReadComputeTimes(compute_times, *catalog); !st.ok()) return st;
  }
  return std::shared_ptr<const LinkSpeedModel>(
      std::make_shared<LinkSpeedModel>(std::move(*catalog), bw, 200, comm));
}

}  // namespace tiresias
