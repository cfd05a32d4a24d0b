// libFuzzer target: the typed option parser with the options every registered policy
// declares. The first byte picks an ordering or placement policy; each further line is one
// `key=value` pair, as `--opt`/`--popt` would pass it. Options that parse are read back
// through the typed accessors (which trust the parser's validation), the policy is built from
// them with data from memory, and a few jobs are simulated under it (promotions, demotions,
// the Gittins index, placement), so a value the parser lets through cannot crash a factory
// or overflow the scheduling arithmetic.
#include <memory>
#include <string>
#include <vector>

#include "common/strings.h"
#include "fuzz_support.h"
#include "placement/registry.h"
#include "policy/registry.h"
#include "sim/simulator.h"

namespace {

using namespace tiresias;

// Every path names the same small history and catalogue; "" names nothing.
class MemoryData : public DataSource {
 public:
  MemoryData() {
    history_ = std::make_shared<const std::vector<Service>>(
        std::vector<Service>{Seconds(10), Seconds(100), Seconds(5000)});
    auto c = std::make_shared<ModelCatalog>();
    FUZZ_CHECK(c->Add("vgg16", {392, 64, 16}).ok());
    catalog_ = c;
  }
  StatusOr<std::shared_ptr<const std::vector<Service>>> GpuTimeHistory(
      const std::string& path) const override {
    if (path.empty()) return NotFound("no history");
    return history_;
  }
  StatusOr<std::shared_ptr<const ModelCatalog>> ModelProfiles(
      const std::string& path) const override {
    if (path.empty()) return NotFound("no profiles");
    return catalog_;
  }

 private:
  std::shared_ptr<const std::vector<Service>> history_;
  std::shared_ptr<const ModelCatalog> catalog_;
};

// A few jobs that queue, get demoted and preempted on 8 GPUs: long and short, 1 to 8 GPUs.
const std::vector<JobSpec>& Jobs() {
  static const std::vector<JobSpec> jobs = [] {
    std::vector<JobSpec> out;
    const int gpus[] = {4, 1, 8, 2, 1, 4};
    const Duration dur[] = {Seconds(86400), Seconds(60),   Seconds(7200),
                            Seconds(1),     Seconds(3600), Seconds(315'360'000)};
    for (int i = 0; i < 6; ++i) {
      out.push_back({.id = JobId(i),
                     .gpus = gpus[i],
                     .submit = Seconds(10 * i),
                     .model = i % 2 ? "vgg16" : "resnet50",
                     .duration = dur[i]});
    }
    return out;
  }();
  return jobs;
}

template <typename Reg>
void Exercise(const Reg& reg, size_t pick, const std::vector<std::string>& pairs, bool ordering) {
  static const auto data = std::make_shared<const MemoryData>();
  auto it = reg.begin() + static_cast<std::ptrdiff_t>(pick % reg.size());
  auto values = reg.Options(it->name, pairs);
  if (!values.ok()) {
    FUZZ_CHECK(!values.status().message().empty());
    return;
  }
  for (const OptionSpec& s : it->options) {
    if (!values->has(s.name)) continue;
    switch (s.type) {
      case OptionSpec::Type::kInt:
        (void)values->Int(s.name);
        break;
      case OptionSpec::Type::kDouble:
        (void)values->Double(s.name);
        break;
      case OptionSpec::Type::kDoubleList:
        (void)values->DoubleList(s.name);
        break;
      default:
        (void)values->Str(s.name);
    }
  }
  if (!reg.Make(it->name, pairs, *data).ok()) return;
  SimConfig cfg{.topo = *Topology::Create(1, 2, 4), .data = data};
  if (ordering) {
    cfg.policy = it->name;
    cfg.policy_opts = pairs;
  } else {
    cfg.placement = it->name;
    cfg.placement_opts = pairs;
  }
  auto r = RunSimulation(cfg, Jobs());
  FUZZ_CHECK(r.ok());
  for (const JobResult& j : r->jobs)
    FUZZ_CHECK(j.state == JobState::kFinished && j.end >= j.submit);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t pick = data[0];
  std::vector<std::string> pairs;
  for (auto line : Split(fuzz::AsText(data + 1, size - 1), '\n')) pairs.emplace_back(line);
  if (pick % 2 == 0) {
    Exercise(OrderingPolicies(), pick / 2, pairs, true);
  } else {
    Exercise(PlacementPolicies(), pick / 2, pairs, false);
  }
  return 0;
}
