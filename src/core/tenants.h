// Tenants: the virtual clusters (VCs) that share the cluster, each entitled to a GPU quota,
// and the rules between them (the core's upper scheduling level; see Scheduler and
// docs/design.md "Many teams"). Plain values: the drivers read them from a config file
// (engine/tenant_config) or derive them from a trace, the core only reads them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace tiresias {

struct Tenant {
  std::string name;
  int quota = -1;                  // GPUs it is entitled to; -1: its weight's share of the cluster
  double weight = 1.0;             // share of the cluster when no quota is given; fair-share weight
  std::vector<std::string> users;  // who submits to it (the first VC listing a user is default)
};

// The default fair-share margin of a running borrower's VC, in half-lives per GPU it borrows
// (TenantConfig::half_life, fair_share_margin):
// with a half-life of 1 h, a 1-GPU borrower runs ~6 min beyond an even share before another
// VC's borrower may take its GPU.
inline constexpr double kFairShareHysteresis = 0.1;

struct TenantConfig {
  std::vector<Tenant> vcs;
  // GPUs a VC leaves unused are lent to the others and reclaimed by preemption when their
  // owner needs them. Off: every VC is capped at its quota (fixed partitions, YARN-CS style).
  bool borrow = true;
  // > 0: fair share that remembers. Borrowed GPUs go first to the VCs whose attained GPU
  // service, decayed with this half-life and divided by their weight, is smallest (and are
  // taken back first from the largest). 0: borrowers in the ordering policy's order.
  // A running borrower keeps its GPUs against other VCs' waiting borrowers until its VC's
  // service exceeds theirs by kFairShareHysteresis x half_life x its GPUs (weights applied):
  // without that margin the lent GPUs changed hands on every pass, as each holder's service
  // passed the other's (found by a tester: 4.6x the preemptions).
  Duration half_life = 0;
  // That margin, in half-lives per GPU (the tenants file's `fair_share_margin`). Journals
  // written before it had none and replay with 0: the core re-decides starts and preemptions
  // on replay, so the margin must be the one that decided them (a review).
  double fair_share_margin = kFairShareHysteresis;
  // How quotas rank against the ordering policy's priority classes (k0: the queues of dlas
  // and gittins). A job within its VC's quota in queue q goes before borrowers of queues
  // q - quota_lead and later. 0 (default): queue first, then quota: a short job of any VC
  // goes before long jobs of every VC (Tiresias' mean JCT), and in a queue jobs within their
  // VC's quota go before borrowers. -1: strict, every job within its VC's quota before any
  // borrower (also what policies without queues get).
  int quota_lead = 0;
  // Running jobs within their VC's quota, as the VC's own jobs would rank on a partition of
  // its quota's size (its jobs in policy order, waiting ones included, each fitting what is
  // left of the quota), keep their GPUs against other VCs: kBorrowers, no borrower takes
  // them; kOtherVcs, no job of another VC does, within its quota or not (a VC's in-quota jobs
  // are preempted only by its own, as on its own partition). They still give GPUs to their
  // VC's jobs of higher priority. kNone: the walk's order alone decides.
  enum class Protect { kNone, kBorrowers, kOtherVcs };
  Protect protect = Protect::kNone;
  // The VC of a job that names none, or an unknown one; "" = such jobs are rejected.
  std::string default_vc;

  // The tenant level is on with two VCs or more; with none or one, every decision is the
  // plain core's.
  bool on() const { return vcs.size() >= 2; }
  std::optional<int> IndexOf(std::string_view name) const;
  // The VC a user's job goes to: `requested` when given (it must exist, and list the user
  // when it lists any), else the first VC listing the user, else default_vc, else an error.
  StatusOr<std::string> VcFor(std::string_view user, std::string_view requested) const;
};

// "none", "borrowers", "other_vcs" (the tenants file's `protect`), and back.
std::string_view ToString(TenantConfig::Protect p);
std::optional<TenantConfig::Protect> ParseProtect(std::string_view s);
// quota_lead and protect in words, "; "-separated, for the simulator's header, `tiresias vcs`
// and the tenants event; "" for the defaults (found by a tester: they were shown nowhere).
std::string TenantRules(int quota_lead, TenantConfig::Protect protect);

// Quotas in GPUs per VC (same order), weights turned into shares of `total_gpus` (largest
// remainder, ties by order) for VCs without a quota. InvalidArgument when they do not fit:
// quotas over the cluster, duplicate names, an unknown default_vc.
StatusOr<std::vector<int>> ResolveQuotas(const TenantConfig& cfg, int total_gpus);

// Quotas proportional to each VC's share of `gpu_time` (same order as `names`), summing to
// `total_gpus` (largest remainder): what a trace replay uses when no config names quotas.
TenantConfig TenantsFromUsage(const std::vector<std::string>& names,
                              const std::vector<double>& gpu_time, int total_gpus);

}  // namespace tiresias
