// The tenant level of the core (the Scheduler's TenantConfig, two VCs or more): the upper of the
// two scheduling levels. Inside a VC the ordering policy decides as always; between VCs the
// walk goes through the policy's priority classes (its queues, k0, for dlas and gittins; one
// class for the other policies, or with TenantConfig::quota_lead -1), and in each class:
//
//   phase 1  walk the class's jobs in policy order; a job is selected when its gang fits what
//            is left of the cluster and of its VC's quota (its entitlement);
//   phase 2  (borrowing) the jobs phase 1 set aside because their VC had used its quota, in
//            policy order (or, with a half-life, VCs with the least decayed usage per weight
//            first), take what is left of the cluster.
//
// (quota_lead N > 0: in-quota jobs of queue q go before the borrowers of queues q - N and
// later.) So a short job of any VC (an earlier queue) still goes before long jobs of every VC,
// which is where Tiresias gets its mean JCT, and within a class a VC's jobs within its quota go
// before other VCs' borrowers. Running jobs selected by neither are victims, a class's
// borrowers after its owners, so they give their GPUs back first: an owner returning to its
// quota reclaims lent GPUs by preemption (the ordinary checkpoint protocol) from borrowers in
// its job's class or a later one. Without borrowing, phase 2 selects nothing and every VC is a
// fixed partition of its quota's size. The selected jobs are then placed by the plain pass's
// code (PreemptivePass), so placement, deferral and victims' release are unchanged.
//
// With one VC holding a quota of the whole cluster, phase 1 is exactly the plain walk and
// phase 2 sees nothing (a job over the quota is over the budget), so every decision is the
// plain core's (src/sim/tenants_sim_test.cc checks it for every policy).
#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <deque>
#include <limits>

#include "core/scheduler.h"

namespace tiresias {

void Scheduler::CountTenant(const Job& j, int sign, Time now) {
  if (!tenant_on() || j.tenant < 0) return;
  AccrueUsage(now);
  vc_running_[static_cast<size_t>(j.tenant)] += sign * j.gpus();
}

void Scheduler::AccrueUsage(Time now) {
  const Duration h = tenants_.half_life;
  if (h <= 0 || now <= usage_at_) return;
  // U(t) = U(t0) d + r h / ln 2 (1 - d), d = 2^-((t - t0) / h): r GPUs held over [t0, t],
  // each GPU-ms weighted 2^-(age / h).
  const double d = std::exp2(-static_cast<double>(now - usage_at_) / static_cast<double>(h));
  const double per_gpu = static_cast<double>(h) / std::log(2.0) * (1 - d);
  for (size_t v = 0; v < vc_usage_.size(); ++v) {
    vc_usage_[v] = vc_usage_[v] * d + vc_running_[v] * per_gpu;
  }
  usage_at_ = now;
}

bool Scheduler::TenantMayTake(const Job& j) const {
  if (!tenant_on() || tenants_.borrow || j.tenant < 0) return true;
  const size_t v = static_cast<size_t>(j.tenant);
  return vc_running_[v] + j.gpus() <= vc_quota_[v];
}

void Scheduler::TenantWalk(Time now, std::vector<uint32_t>& victims,
                           std::vector<uint32_t>& candidates, std::vector<uint32_t>& kept) {
  AccrueUsage(now);
  std::vector<int> used(vc_quota_.size(), 0);
  int budget = cluster_.total_usable();
  const int min_wait = opts_.reference_pass ? 0 : MinWaitingGpus();
  struct Aside {
    uint32_t slot;
    bool running;
    int64_t k0;
  };
  std::deque<Aside> aside;  // over their VC's quota, in walk order
  // Protected running jobs (TenantConfig::protect): each VC's jobs walked alone in policy
  // order against its quota, as on a partition of its own; the running jobs that fit are
  // protected (one flag per running job, in running_ order). reserved[v] counts the GPUs of
  // VC v's protected jobs the walk has not reached yet, reserved_all all VCs'.
  const auto protect = tenants_.protect;
  std::vector<char> protected_run;
  std::vector<int> reserved(vc_quota_.size(), 0);
  int reserved_all = 0;
  if (protect != TenantConfig::Protect::kNone) {
    std::vector<int> left = vc_quota_;
    protected_run.reserve(running_.size());
    auto pr = running_.begin();
    auto pw = waiting_.begin();
    while (pr != running_.end()) {  // waiting jobs after the last running one change nothing
      const bool run = pw == waiting_.end() || pr->first < pw->first;
      const Job& j = jobs_[run ? (pr++)->second : (pw++)->second];
      const auto v = static_cast<size_t>(j.tenant);
      const bool fits = j.gpus() <= left[v];
      if (fits) left[v] -= j.gpus();
      if (!run) continue;
      protected_run.push_back(fits);
      if (fits) {
        reserved[v] += j.gpus();
        reserved_all += j.gpus();
      }
    }
  }
  size_t run_index = 0;
  // Phase 2 up to class `upto`: the borrowers set aside so far with k0 <= upto, a prefix of
  // `aside`, take what is left of the cluster.
  auto lend = [&](int64_t upto) {
    auto end = aside.begin();
    while (end != aside.end() && end->k0 <= upto) ++end;
    if (tenants_.half_life > 0) {
      // Fair share that remembers: the VC that used least of its weight borrows first. A VC's
      // running borrowers lower its key by a margin per GPU they hold (fair_share_margin), so
      // that lent GPUs do not change hands at every pass; one key per VC keeps the policy's
      // order inside it (a review: a margin per running job put a VC's long-running borrower
      // ahead of its own shorter waiting one).
      std::vector<double> held(vc_quota_.size(), 0);
      for (auto it = aside.begin(); it != end; ++it) {
        if (it->running)
          held[static_cast<size_t>(jobs_[it->slot].tenant)] += jobs_[it->slot].gpus();
      }
      const double margin = tenants_.fair_share_margin * static_cast<double>(tenants_.half_life);
      const auto share = [&](const Aside& a) {
        const auto v = static_cast<size_t>(jobs_[a.slot].tenant);
        return (vc_usage_[v] - margin * held[v]) / tenants_.vcs[v].weight;
      };
      std::stable_sort(aside.begin(), end,
                       [&](const Aside& a, const Aside& b) { return share(a) < share(b); });
    }
    for (auto it = aside.begin(); it != end; ++it) {
      Job& j = jobs_[it->slot];
      if (tenants_.borrow && j.gpus() <= budget - reserved_all) {  // 0 without protect
        budget -= j.gpus();
        used[static_cast<size_t>(j.tenant)] += j.gpus();
        (it->running ? kept : candidates).push_back(it->slot);
      } else if (it->running) {
        NoteWait(j, WaitKind::kOverQuota);  // if it is stopped, this is why
        victims.push_back(it->slot);
      } else {
        NoteWait(j, WaitKind::kOverQuota);
      }
    }
    aside.erase(aside.begin(), end);
  };
  // Jobs within their VC's quota in class k0 rank with the borrowers of class k0 - lead (and
  // before them); strict quotas or a policy without classes: every in-quota job goes first.
  constexpr int64_t kNever = std::numeric_limits<int64_t>::max() / 4;
  const int64_t lead =
      tenants_.quota_lead < 0 || policy_->num_queues() <= 1 ? kNever : tenants_.quota_lead;
  int64_t cls = -kNever;  // the borrowers with k0 <= cls are lent
  auto r = running_.begin();
  auto w = waiting_.begin();
  while (r != running_.end() || w != waiting_.end()) {
    if (budget < min_wait) w = waiting_.end();  // no waiting job can fit any more
    if (r == running_.end() && w == waiting_.end()) break;
    const bool take_running = w == waiting_.end() || (r != running_.end() && r->first < w->first);
    const int64_t k0 = take_running ? r->first.k0 : w->first.k0;
    if (lead != kNever && k0 - lead - 1 > cls) {
      cls = k0 - lead - 1;  // borrowers of earlier classes go before this job's owners
      lend(cls);
    }
    const uint32_t slot = take_running ? (r++)->second : (w++)->second;
    Job& j = jobs_[slot];
    const auto v = static_cast<size_t>(j.tenant);
    if (take_running && !protected_run.empty() && protected_run[run_index++]) {
      reserved[v] -= j.gpus();  // reached: it takes its GPUs from the budget below
      reserved_all -= j.gpus();
    }
    // kOtherVcs: what other VCs' protected jobs further on hold is not this job's to take
    // (borrowers are kept off all protected GPUs when they are lent).
    const int others = protect == TenantConfig::Protect::kOtherVcs ? reserved_all - reserved[v] : 0;
    int& u = used[v];
    const bool over_quota = u + j.gpus() > vc_quota_[v];
    if (j.gpus() > budget - (over_quota ? 0 : others)) {
      NoteWait(j, WaitKind::kNotConsidered);  // a running one: priority, not its quota
      if (take_running) victims.push_back(slot);
      continue;
    }
    if (over_quota) {
      aside.push_back({slot, take_running, k0});
      continue;
    }
    u += j.gpus();
    budget -= j.gpus();
    (take_running ? kept : candidates).push_back(slot);
  }
  lend(kNever);
}

void Scheduler::TenantNonPreemptivePass(Time now, std::vector<Action>& out) {
  const bool strict = policy_->stops_at_first_misfit();
  std::vector<char> blocked(vc_quota_.size(), 0);  // strict FIFO: per VC, as YARN-CS queues
  std::vector<uint32_t> aside;
  auto over = [&](const Job& j) {
    const auto v = static_cast<size_t>(j.tenant);
    return vc_running_[v] + j.gpus() > vc_quota_[v];
  };
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    const int free = cluster_.total_free();
    if (NoneFits(free)) break;
    const uint32_t slot = it->second;
    ++it;  // Start() moves the job out of waiting_
    Job& j = jobs_[slot];
    const auto v = static_cast<size_t>(j.tenant);
    if (blocked[v]) {
      NoteWait(j, WaitKind::kNotConsidered);
      continue;
    }
    if (j.gpus() > free) {
      NoteWait(j, over(j) ? WaitKind::kOverQuota : WaitKind::kNotConsidered);
      if (strict) blocked[v] = 1;
      continue;
    }
    if (over(j)) {
      NoteWait(j, WaitKind::kOverQuota);
      aside.push_back(slot);
      if (strict) blocked[v] = 1;
      continue;
    }
    if (!TryStart(slot, now, out) && strict) blocked[v] = 1;
  }
  if (!tenants_.borrow) return;
  std::fill(blocked.begin(), blocked.end(), 0);
  for (uint32_t slot : aside) {
    Job& j = jobs_[slot];
    const auto v = static_cast<size_t>(j.tenant);
    if (blocked[v]) continue;
    if (j.gpus() > cluster_.total_free() || !TryStart(slot, now, out)) {
      if (strict) blocked[v] = 1;
    }
  }
}

std::vector<VcUsage> Scheduler::VcUsages(Time now) const {
  std::vector<VcUsage> out;
  if (!tenant_on()) return out;
  const Duration h = tenants_.half_life;
  const double d = h > 0 && now > usage_at_
                       ? std::exp2(-static_cast<double>(now - usage_at_) / static_cast<double>(h))
                       : 1.0;
  for (size_t v = 0; v < vc_quota_.size(); ++v) {
    double u = vc_usage_[v] * d;
    if (h > 0) u += vc_running_[v] * static_cast<double>(h) / std::log(2.0) * (1 - d);
    out.push_back({.name = tenants_.vcs[v].name,
                   .quota = vc_quota_[v],
                   .running_gpus = vc_running_[v],
                   .decayed_gpu_hours = u / 3.6e6});
  }
  for (const auto& [key, slot] : running_)
    ++out[static_cast<size_t>(jobs_[slot].tenant)].running_jobs;
  for (const auto& [key, slot] : waiting_) {
    VcUsage& u = out[static_cast<size_t>(jobs_[slot].tenant)];
    ++u.waiting_jobs;
    u.waiting_gpus += jobs_[slot].gpus();
  }
  return out;
}

std::string Scheduler::BorrowerReason(const Job& j, int held) const {
  const auto v = static_cast<size_t>(j.tenant);
  // (Said of every borrower stopped: the GPUs may go to another VC's borrower, not only to a
  // VC claiming its quota; found by a tester.)
  return fmt::format(
      "its VC `{}` holds {} GPUs, over its quota of {}: lent GPUs go to jobs within their VCs' "
      "quotas first, then to borrowers {}",
      tenants_.vcs[v].name, held, vc_quota_[v],
      tenants_.half_life > 0 ? "by fair share (the VC that used least of its weight first)"
                             : "in policy order");
}

std::string Scheduler::TenantReason(const Job& j, Time /*now*/) const {
  if (!tenant_on() || j.tenant < 0) return "";
  const auto v = static_cast<size_t>(j.tenant);
  const std::string& name = tenants_.vcs[v].name;
  const int q = vc_quota_[v], used = vc_running_[v];
  if (j.running()) {
    if (used <= q) return "";
    return fmt::format(
        "VC `{}` is above its share: {} of {} GPUs, {} borrowed; its jobs that are last in its "
        "order give borrowed GPUs back first when their owners need them",
        name, used, q, used - q);
  }
  if (j.wait == WaitKind::kOverQuota) {
    if (used > q && tenants_.borrow) {
      return fmt::format(
          "VC `{}` is above its share: {} of {} GPUs, {} borrowed; it borrows more only when "
          "other VCs leave GPUs unused",
          name, used, q, used - q);
    }
    // Free GPUs need not be lendable: the jobs ahead of it (other VCs' within their quotas
    // first) may claim them, and the pass saw the cluster before this job's turn.
    int ahead = 0;  // the VC's waiting jobs ahead of it take their share of the quota first
    for (const auto& [key, slot] : waiting_) {
      if (!(key < j.key)) break;
      if (jobs_[slot].tenant == j.tenant) ahead += jobs_[slot].gpus();
    }
    const std::string over = fmt::format(
        "VC `{}` has {} of its quota of {} GPUs in use{} and this job needs {}, over the quota",
        name, used, q,
        ahead > 0 ? fmt::format(", its jobs waiting ahead of this one want {} more", ahead) : "",
        j.gpus());
    if (!tenants_.borrow) return over + "; borrowing is off";
    return fmt::format(
        "{}: it runs only on GPUs lent, those that every VC's jobs within "
        "their quotas and the borrowers ahead of it leave unused, and {} left",
        over, j.gpus() == 1 ? "none was" : fmt::format("fewer than {} were", j.gpus()));
  }
  int lent = 0;
  for (size_t o = 0; o < vc_quota_.size(); ++o) {
    if (vc_running_[o] > vc_quota_[o]) lent += vc_running_[o] - vc_quota_[o];
  }
  if (used < q && lent > 0) {
    return fmt::format(
        "VC `{}` is below its share: {} of {} GPUs; {} GPUs are lent to other VCs and are taken "
        "back by preemption as its jobs need them",
        name, used, q, lent);
  }
  return "";
}

namespace {

// The VC of `cfg` a job belongs to: the one it names, else its user's (or default_vc).
std::optional<int> VcIndexOf(const TenantConfig& cfg, const JobSpec& spec) {
  if (auto v = cfg.IndexOf(spec.vc)) return v;
  auto name = cfg.VcFor(spec.user, "");
  return name.ok() ? cfg.IndexOf(*name) : std::nullopt;
}

}  // namespace

std::optional<std::string> Scheduler::TenantAdmit(Job& j) const {
  if (!tenant_on()) return std::nullopt;
  auto v = VcIndexOf(tenants_, j.spec);
  if (!v) return fmt::format("VC `{}` is not one of the tenants", j.spec.vc);
  j.tenant = *v;
  const int q = vc_quota_[static_cast<size_t>(*v)];
  if (!tenants_.borrow && j.gpus() > q) {
    return fmt::format("needs {} GPUs, more than VC `{}`'s quota of {}, and borrowing is off",
                       j.gpus(), tenants_.vcs[static_cast<size_t>(*v)].name, q);
  }
  return std::nullopt;
}

Status Scheduler::EveryJobHasAVc(const TenantConfig& cfg) const {
  for (const Job& j : jobs_) {
    if (j.ended() || VcIndexOf(cfg, j.spec)) continue;
    return FailedPrecondition(fmt::format(
        "job {} (user {}{}) belongs to no VC of the new tenants: keep its VC, list its user "
        "in a VC or name a default_vc",
        j.spec.id.value(), j.spec.user, j.spec.vc.empty() ? "" : ", VC " + j.spec.vc));
  }
  return Status::Ok();
}

Status Scheduler::SetTenants(TenantConfig cfg, Time now) {
  std::vector<int> quotas;
  if (cfg.on()) {
    auto q = ResolveQuotas(cfg, topo_.total_gpus());
    if (!q.ok()) return q.status();
    quotas = std::move(*q);
  }
  if (cfg.on()) {
    if (Status s = EveryJobHasAVc(cfg); !s.ok()) return s;
  }
  std::vector<int32_t> vc(jobs_.size(), -1);
  for (size_t slot = 0; cfg.on() && slot < jobs_.size(); ++slot) {
    const Job& j = jobs_[slot];
    if (j.ended()) continue;
    const auto v = VcIndexOf(cfg, j.spec);
    if (!cfg.borrow && j.gpus() > quotas[static_cast<size_t>(*v)]) {
      return FailedPrecondition(fmt::format(
          "job {} needs {} GPUs, more than VC `{}`'s new quota of {}, and borrowing is off",
          j.spec.id.value(), j.gpus(), cfg.vcs[static_cast<size_t>(*v)].name,
          quotas[static_cast<size_t>(*v)]));
    }
    vc[slot] = *v;
  }
  AccrueUsage(now);
  std::vector<double> usage(quotas.size(), 0.0);
  for (size_t v = 0; v < quotas.size(); ++v) {
    if (auto old = tenants_.IndexOf(cfg.vcs[v].name); old && tenant_on()) {
      usage[v] = vc_usage_[static_cast<size_t>(*old)];
    }
  }
  tenants_ = std::move(cfg);
  vc_quota_ = std::move(quotas);
  vc_usage_ = std::move(usage);
  vc_running_.assign(vc_quota_.size(), 0);
  usage_at_ = now;
  for (size_t slot = 0; slot < jobs_.size(); ++slot) {
    Job& j = jobs_[slot];
    j.tenant = vc[slot];
    if (j.running() && j.tenant >= 0) vc_running_[static_cast<size_t>(j.tenant)] += j.gpus();
    // Held back by the old quotas: the next pass says again (found by a tester: after
    // `--tenants none` a waiting job still showed VcQuota, and explain gave no reason).
    if (j.wait == WaitKind::kOverQuota) j.wait = WaitKind::kNotConsidered;
  }
  walk_from_ = SortKey{.k0 = std::numeric_limits<int64_t>::min()};  // the next pass walks all
  dirty_ = true;
  return Status::Ok();
}

}  // namespace tiresias
