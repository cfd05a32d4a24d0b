// tiresias: profile-based placement. A job whose model is placement-sensitive is
// consolidated and waits for a packed slot; any other job (unknown models included) takes a
// packed slot when one is free and otherwise any free GPUs, best fit. Sensitive means skew
// above a fixed PACKLIMIT (`packlimit=0.5`), or, with `packlimit=learned`, that the learned
// classifier (packlimit_learner.h) predicts the best-fit placement on offer would run slowly;
// it learns from completed jobs through OnJobFinished, and every `explore_every`th unsure
// "slow" prediction is placed spread anyway so that it keeps learning. Insensitive jobs that find
// no packed slot fill fragments: the nodes with the fewest free GPUs first, under one switch when
// one has room (the tightest such switch), so whole nodes stay free for jobs that need them. Such a
// placement is a fallback: a preemptive core first tries lower-priority victims' GPUs for a packed
// slot.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "common/strings.h"
#include "core/model_catalog.h"
#include "placement/consolidate.h"
#include "placement/packlimit_learner.h"
#include "placement/registry.h"

namespace tiresias {

namespace {

// How spread an allocation of `gpus` is beyond packed: log2(nodes / packed nodes), plus one
// per switch beyond the packed number.
double Spread(int gpus, int nodes, int switches, const Topology& t) {
  int packed_nodes = (gpus + t.gpus_per_node() - 1) / t.gpus_per_node();
  int packed_switches = (gpus + t.gpus_per_switch() - 1) / t.gpus_per_switch();
  return std::log2(static_cast<double>(nodes) / packed_nodes) +
         std::max(0, switches - packed_switches);
}

double SpreadOf(const Allocation& a, const Topology& t) {
  int switches = 0, last = -1;
  for (const auto& s : a.slices) {
    if (t.switch_of(s.node) != last) ++switches;
    last = t.switch_of(s.node);
  }
  return Spread(a.gpu_count(), a.node_count(), switches, t);
}

// Free GPUs taken from the nodes with the fewest free GPUs first (ties: lowest index), under
// the switch with the fewest free GPUs that has enough; across switches when none has.
std::optional<Allocation> FillFragments(int gpus, const ClusterState& s) {
  if (s.total_free() < gpus) return std::nullopt;
  const Topology& t = s.topology();
  int best_sw = -1;
  for (int sw = 0; sw < t.switches(); ++sw) {
    int f = s.free_on_switch(sw);
    if (f >= gpus && (best_sw < 0 || f < s.free_on_switch(best_sw))) best_sw = sw;
  }
  std::vector<int> order;
  const int first = best_sw < 0 ? 0 : best_sw * t.nodes_per_switch();
  const int last = best_sw < 0 ? t.num_nodes() : first + t.nodes_per_switch();
  for (int n = first; n < last; ++n) {
    if (s.free_on_node(n) > 0) order.push_back(n);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return s.free_on_node(x) < s.free_on_node(y); });
  return TakeInOrder(gpus, s, order);
}

class TiresiasPlacement : public PlacementPolicy {
 public:
  std::unique_ptr<PlacementPolicy> Clone() const override {
    return std::make_unique<TiresiasPlacement>(*this);
  }
  TiresiasPlacement(std::shared_ptr<const ModelCatalog> catalog, double packlimit,
                    std::optional<PackLimitLearner> learner, int64_t explore_every,
                    std::string note)
      : catalog_(std::move(catalog)),
        packlimit_(packlimit),
        learner_(std::move(learner)),
        explore_every_(explore_every),
        note_(std::move(note)) {}
  static constexpr double kExploreBelow = 0.9;
  std::string_view name() const override { return "tiresias"; }
  bool Sensitive(const ModelProfile* p) const { return !learner_ && p && p->skew > packlimit_; }
  std::optional<std::string> NeverFitsReason(const JobSpec& job,
                                             const Topology& topo) const override {
    if (auto why = PlacementPolicy::NeverFitsReason(job, topo)) return why;
    if (Sensitive(catalog_->Find(job.model)) && job.gpus > topo.gpus_per_switch()) {
      return fmt::format(
          "model {} is placement-sensitive and must sit under one switch of {} "
          "GPUs, but asks for {}",
          job.model, topo.gpus_per_switch(), job.gpus);
    }
    return std::nullopt;
  }
  PlacementResult Place(const JobSpec& job, const ClusterState& s) override {
    return Decide(job, s, /*why=*/nullptr);
  }
  // A packed slot stays one with more GPUs free, and so do enough GPUs for a fallback; the
  // learned classifier is not monotone (it judges the spread on offer) and counts its
  // explorations.
  bool pure_and_monotone() const override { return !learner_; }
  std::string WhyNoSlot(const JobSpec& job, const ClusterState& s) const override {
    std::string why;
    (void)Decide(job, s, &why);
    return why.empty() ? "a slot is free now; it starts at the next pass" : why;
  }
  void OnJobFinished(const Job& job, const Topology& topo) override {
    if (!learner_ || job.alloc.empty()) return;
    const ModelProfile* p = catalog_->Find(job.spec.model);
    if (!p) return;
    learner_->Observe(p->skew, SpreadOf(job.alloc, topo), job.rate);
  }
  std::string Note() const override {
    if (!note_.empty()) return note_;
    if (!learner_) return "";
    auto limit = learner_->PackLimit();
    const auto& w = learner_->weights();
    return fmt::format(
        "learned PACKLIMIT {} from {} spread jobs (logit = {:.2f} + {:.2f} skew + {:.2f} "
        "spread)",
        !limit                     ? std::string("none yet")
        : *limit < 0 || *limit > 1 ? fmt::format("outside [0, 1] ({:.2f})", *limit)
                                   : fmt::format("{:.3f}", *limit),
        learner_->examples(), w[0], w[1], w[2]);
  }

 private:
  // Place's logic. With `why`, only explains (sets *why when there is no slot) and changes
  // nothing; without, may count an exploration.
  PlacementResult Decide(const JobSpec& job, const ClusterState& s, std::string* why) const {
    if (auto a = FindPackedSlot(job.gpus, s)) return Placed{std::move(*a)};
    const ModelProfile* p = catalog_->Find(job.model);
    if (Sensitive(p)) {
      if (why) {
        *why = fmt::format("model {} (skew {:.2f} > PACKLIMIT {:.2f}) waits for a packed slot: {}",
                           job.model, p->skew, packlimit_, PackedSlotWait(job.gpus, s));
      }
      return NoSlotNow{};
    }
    auto a = FillFragments(job.gpus, s);
    if (!a) {
      if (why) *why = fmt::format("needs {} GPUs, {} free", job.gpus, s.total_free());
      return NoSlotNow{};
    }
    // A packed slot can only exist under one switch; larger jobs never wait for one.
    if (learner_ && p && job.gpus <= s.topology().gpus_per_switch()) {
      const double spread = SpreadOf(*a, s.topology());
      if (learner_->Sensitive(p->skew, spread)) {
        // An unsure "slow" is tested now and then: a classifier that only ever consolidates
        // sees no spread jobs and stops learning.
        if (!why && explore_every_ > 0 && learner_->PSlow(p->skew, spread) < kExploreBelow &&
            ++unsure_ % explore_every_ == 0) {
          return Placed{std::move(*a), /*fallback=*/true};
        }
        if (why) {
          *why = fmt::format(
              "model {} (skew {:.2f}) predicted slow on {} nodes (p={:.2f}, learned from {} "
              "jobs); waits for a packed slot",
              job.model, p->skew, a->node_count(), learner_->PSlow(p->skew, spread),
              learner_->examples());
        }
        return NoSlotNow{};
      }
    }
    return Placed{std::move(*a), /*fallback=*/true};
  }

  std::shared_ptr<const ModelCatalog> catalog_;
  double packlimit_;
  std::optional<PackLimitLearner> learner_;
  int64_t explore_every_;
  std::string note_;            // why every model is insensitive (no profiles), if so
  mutable int64_t unsure_ = 0;  // unsure "slow" predictions so far (Place only)
};

}  // namespace

PlacementInfo TiresiasPlacementInfo() {
  return {"tiresias",
          "consolidate only placement-sensitive models (skew > packlimit); others take any GPUs",
          {{"packlimit",
            OptionSpec::Type::kText,
            "0.5",
            "PACKLIMIT in [0, 1]: models with a larger skew (largest tensor / all) are "
            "consolidated; `learned` = a classifier over skew, placement and achieved speed "
            "trained on completed jobs",
            {}},
           {"slow_below",
            OptionSpec::Type::kDouble,
            "0.8",
            "packlimit=learned: a spread job is a sensitive example when it achieved less than "
            "this fraction of its packed speed",
            {},
            0,
            1,
            {"packlimit=learned"}},
           {"explore_every",
            OptionSpec::Type::kInt,
            "10",
            "packlimit=learned: every Nth placement predicted slow with P(slow) < 0.9 is made "
            "spread anyway, so the classifier keeps learning; 0 = never",
            {},
            0,
            1e9,
            {"packlimit=learned"}},
           {"profiles",
            OptionSpec::Type::kPath,
            std::string(TIRESIAS_SHARED_DIR) + "/profiles/tensor_sizes.csv",
            "CSV model,tensor_sizes_mb of model profiles",
            {}}},
          [](const OptionValues& v,
             const DataSource& data) -> StatusOr<std::unique_ptr<PlacementPolicy>> {
            auto catalog = data.ModelProfiles(v.Str("profiles"));
            std::string note;
            if (!catalog.ok()) {
              // The default profiles (../shared) may be absent: tiresias is the simulator's
              // default placement, so it then places every model as insensitive and says so.
              // A profiles file the user names must load.
              if (v.given("profiles") || catalog.status().code() != StatusCode::kIoError) {
                return catalog.status();
              }
              note = fmt::format("no model profiles ({}): every job placed as insensitive",
                                 catalog.status().message());
              catalog = std::make_shared<const ModelCatalog>();
            }
            std::string text = v.Str("packlimit");
            std::optional<PackLimitLearner> learner;
            double limit = 0;
            if (text == "learned") {
              double slow = v.Double("slow_below");
              if (!(slow > 0 && slow <= 1)) {
                return InvalidArgument("placement tiresias: slow_below must be in (0, 1]");
              }
              learner.emplace(slow);
            } else {
              auto d = ParseDouble(text);
              if (!d || *d < 0 || *d > 1) {
                return InvalidArgument(fmt::format(
                    "placement tiresias: packlimit={}: expected a number in [0, 1] or `learned`",
                    text));
              }
              limit = *d;
            }
            if (v.Int("explore_every") < 0) {
              return InvalidArgument("placement tiresias: explore_every must be >= 0");
            }
            return std::unique_ptr<PlacementPolicy>(new TiresiasPlacement(
                *catalog, limit, std::move(learner), v.Int("explore_every"), std::move(note)));
          }};
}

}  // namespace tiresias
