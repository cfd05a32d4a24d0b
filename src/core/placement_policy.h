// The placement-policy interface: given a job and the free GPUs, choose a gang of GPUs.
// "No slot now" (retry later) and "never fits" (reject) are distinct results, each with a
// reason (for "no slot now", built on demand by WhyNoSlot). Placement never asks which ordering
// policy is active. Pure: no clock, no I/O; randomness (if any) comes from a seeded generator owned
// by the policy.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/allocation.h"
#include "core/cluster_state.h"
#include "core/job.h"

namespace tiresias {

struct Placed {
  Allocation alloc;
  // A compromise: the policy would rather have a packed slot that these free GPUs do not
  // offer. A preemptive core may instead place the job after lower-priority jobs give GPUs
  // back; it falls back to this allocation when that frees no better slot.
  bool fallback = false;
};
// No reason text: placing is the simulator's hot path, so the sentence is built only when
// someone asks (PlacementPolicy::WhyNoSlot, used by Explain).
struct NoSlotNow {};
struct NeverFits {
  std::string reason;
};
using PlacementResult = std::variant<Placed, NoSlotNow, NeverFits>;

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual std::string_view name() const = 0;
  // A copy with the same state (see OrderingPolicy::Clone); null: cannot be copied.
  virtual std::unique_ptr<PlacementPolicy> Clone() const { return nullptr; }
  // Could the job ever be placed on an empty cluster? Returns the reason when not.
  virtual std::optional<std::string> NeverFitsReason(const JobSpec& job,
                                                     const Topology& topo) const;
  virtual PlacementResult Place(const JobSpec& job, const ClusterState& state) = 0;
  // Place changes nothing (no learning, no random draws), and a job it cannot place on some
  // free GPUs it cannot place on fewer either. Lets a preemptive core ask once, with every
  // victim's GPUs given back, whether a job can be placed at all before giving them back one
  // by one.
  virtual bool pure_and_monotone() const { return false; }
  // Place places every job whenever enough GPUs are free, wherever they are (count, spread):
  // asking with every victim's GPUs first would then only repeat what the GPU count says.
  virtual bool places_whenever_enough_free() const { return false; }
  // Why Place would answer NoSlotNow for `job` on `state`, as a plain sentence.
  virtual std::string WhyNoSlot(const JobSpec& job, const ClusterState& state) const = 0;
  // A job completed; `job` still holds its last allocation and that run's rate (achieved
  // speed relative to packed). Learning policies update themselves here; pure, no I/O.
  virtual void OnJobFinished(const Job& /*job*/, const Topology& /*topo*/) {}
  // What the policy learned, for reports ("" when nothing).
  virtual std::string Note() const { return ""; }
};

}  // namespace tiresias
