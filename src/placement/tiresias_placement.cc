// tiresias: profile-based placement. A job whose model is placement-sensitive (skew above
// PACKLIMIT) is consolidated and waits for a packed slot; any other job (unknown models
// included) takes a packed slot when one is free and otherwise any free GPUs, best fit.
#include <fmt/format.h>

#include "placement/consolidate.h"
#include "placement/model_profile.h"
#include "placement/registry.h"

namespace tiresias {

namespace {

class TiresiasPlacement : public PlacementPolicy {
 public:
  TiresiasPlacement(ModelCatalog catalog, double packlimit)
      : catalog_(std::move(catalog)), packlimit_(packlimit) {}
  std::string_view name() const override { return "tiresias"; }
  bool Sensitive(const JobSpec& job) const {
    const ModelProfile* p = catalog_.Find(job.model);
    return p && p->skew > packlimit_;
  }
  std::optional<std::string> NeverFitsReason(const JobSpec& job,
                                             const Topology& topo) const override {
    if (auto why = PlacementPolicy::NeverFitsReason(job, topo)) return why;
    if (Sensitive(job) && job.gpus > topo.gpus_per_switch()) {
      return fmt::format(
          "model {} is placement-sensitive and must sit under one switch of {} "
          "GPUs, but asks for {}",
          job.model, topo.gpus_per_switch(), job.gpus);
    }
    return std::nullopt;
  }
  PlacementResult Place(const JobSpec& job, const ClusterState& s) override {
    if (auto a = FindPackedSlot(job.gpus, s)) return Placed{std::move(*a)};
    if (Sensitive(job)) {
      return NoSlotNow{
          fmt::format("model {} (skew {:.2f} > PACKLIMIT {:.2f}) waits for a "
                      "packed slot; {} GPUs free, scattered",
                      job.model, catalog_.Find(job.model)->skew, packlimit_, s.total_free())};
    }
    if (auto a = BestFitAny(job.gpus, s)) return Placed{std::move(*a)};
    return NoSlotNow{fmt::format("needs {} GPUs, {} free", job.gpus, s.total_free())};
  }

 private:
  ModelCatalog catalog_;
  double packlimit_;
};

}  // namespace

PlacementInfo TiresiasPlacementInfo() {
  return {
      "tiresias",
      "consolidate only placement-sensitive models (skew > packlimit); others take any GPUs",
      {{"packlimit",
        OptionSpec::Type::kDouble,
        "0.5",
        "PACKLIMIT: models with a larger skew (largest tensor / all) are consolidated",
        {}},
       {"profiles",
        OptionSpec::Type::kPath,
        std::string(TIRESIAS_SHARED_DIR) + "/profiles/tensor_sizes.csv",
        "CSV model,tensor_sizes_mb of model profiles",
        {}}},
      [](const OptionValues& v) -> StatusOr<std::unique_ptr<PlacementPolicy>> {
        auto catalog = ModelCatalog::Load(v.Str("profiles"));
        if (!catalog.ok()) return catalog.status();
        double limit = v.Double("packlimit");
        if (limit < 0 || limit > 1) {
          return InvalidArgument("placement tiresias: packlimit must be in [0, 1]");
        }
        return std::unique_ptr<PlacementPolicy>(new TiresiasPlacement(std::move(*catalog), limit));
      }};
}

}  // namespace tiresias
