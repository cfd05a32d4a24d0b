// WorkloadArgs (workload_args.h): the workload flags of `sim` and `compare` and loading them.
#include "cli/workload_args.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include "cli/flags.h"
#include "cli/html_report.h"
#include "cli/progress.h"
#include "common/strings.h"
#include "engine/file_data_source.h"
#include "engine/tenant_config.h"
#include "placement/registry.h"
#include "policy/registry.h"
#include "sim/forecast_check.h"
#include "sim/link_speed_model.h"
#include "sim/metrics.h"
#include "sim/report.h"
#include "sim/report_data.h"
#include "sim/simulator.h"
#include "trace/synthetic.h"
#include "trace/trace_reader.h"

namespace tiresias {

bool WorkloadArgs::LoadTenants(std::vector<JobSpec>& jobs, const Topology& topo, TenantConfig& out,
                               std::string& what) const {
  out = {};
  if (tenants.empty()) {
    // (Taken and ignored before; found by a tester.)
    if (no_borrow || half_life_h >= 0 || quota_lead >= -1 || !protect.empty()) {
      std::cerr << "error: --no-borrow, --half-life, --quota-lead and --protect shape the "
                   "tenants: they need --tenants\n";
      return false;
    }
    return true;
  }
  if (tenants == "trace") {
    const bool any_vc =
        std::any_of(jobs.begin(), jobs.end(), [](const JobSpec& j) { return !j.vc.empty(); });
    std::map<std::string, double> gpu_time;
    for (JobSpec& j : jobs) {
      if (!any_vc) j.vc = j.user;  // a trace with users and no VCs: each user a tenant
      if (j.vc.empty()) j.vc = "-";
      gpu_time[j.vc] += j.gpus * ToSeconds(j.duration.value_or(0));
    }
    std::vector<std::pair<std::string, double>> by_use(gpu_time.begin(), gpu_time.end());
    std::stable_sort(by_use.begin(), by_use.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::vector<std::string> names;
    std::vector<double> shares;
    for (const auto& [n, t] : by_use) {
      names.push_back(n);
      shares.push_back(t);
    }
    out = TenantsFromUsage(names, shares, topo.total_gpus());
    what = fmt::format("{} {} from the trace, quotas by share of GPU-time", names.size(),
                       any_vc ? "VCs" : "users");
  } else {
    auto cfg = ReadTenantConfig(tenants);
    if (!cfg.ok()) {
      std::cerr << "error: " << cfg.status().message() << "\n";
      return false;
    }
    out = std::move(*cfg);
    std::map<std::string, size_t> unknown;
    for (JobSpec& j : jobs) {
      // A VC the file does not declare: its user's, else default_vc, as serve and whatif
      // decide (a listed user's job went to default_vc; found by a tester).
      if (j.vc.empty() || !out.IndexOf(j.vc)) {
        if (auto vc = out.VcFor(j.user, ""); vc.ok()) {
          j.vc = *vc;
        } else {
          ++unknown[j.vc.empty() ? "(none)" : j.vc];
        }
      }
    }
    if (!unknown.empty()) {
      std::cerr << fmt::format(
          "error: {}: the trace has jobs of VC `{}` ({} jobs{}), which the file does not "
          "declare; add it to `vcs` or set `default_vc`\n",
          tenants, unknown.begin()->first, unknown.begin()->second,
          unknown.size() > 1 ? fmt::format(", and {} more VCs", unknown.size() - 1) : "");
      return false;
    }
    what = fmt::format("{} VCs from {}", out.vcs.size(), tenants);
  }
  if (no_borrow) out.borrow = false;
  if (half_life_h >= 0) out.half_life = static_cast<Duration>(std::llround(half_life_h * 3.6e6));
  if (quota_lead >= -1) out.quota_lead = quota_lead;
  if (!protect.empty()) out.protect = *ParseProtect(protect);
  if (auto q = ResolveQuotas(out, topo.total_gpus()); !q.ok()) {
    std::cerr << "error: " << tenants << ": " << q.status().message() << "\n";
    return false;
  }
  what += out.borrow ? ", unused quota lent" : ", fixed quotas (no borrowing)";
  if (out.half_life > 0)
    what += fmt::format(", fair share half-life {} h", ToSeconds(out.half_life) / 3600);
  if (const std::string rules = TenantRules(out.quota_lead, out.protect); !rules.empty()) {
    what += "; " + rules;
  }
  return true;
}

bool WorkloadArgs::CheckpointInterval(Duration& lo, Duration& hi) const {
  lo = hi = 0;
  if (ckpt_interval.empty()) return true;
  double a = 0, b = 0;
  char tail = 0;
  if (std::sscanf(ckpt_interval.c_str(), "uniform:%lf:%lf%c", &a, &b, &tail) == 2) {
  } else if (std::sscanf(ckpt_interval.c_str(), "%lf%c", &a, &tail) == 1) {
    b = a;
  } else {
    a = -1;
  }
  if (!(a > 0 && b >= a && b <= kMaxDays * 86400)) {
    std::cerr << "error: --checkpoint-interval " << ckpt_interval
              << ": want SECONDS or uniform:LO:HI with 0 < LO <= HI\n";
    return false;
  }
  lo = std::llround(a * kMsPerSecond);
  hi = std::llround(b * kMsPerSecond);
  return true;
}

void WorkloadArgs::Add(CLI::App* c) {
  c->add_option("--tenants", tenants,
                "VCs with GPU quotas: a tenants file (JSON, README \"Many teams\"), or `trace`: "
                "the trace's VCs (or users) with quotas by their share of its GPU-time")
      ->check(NotEmpty());
  c->add_flag("--no-borrow", no_borrow,
              "with --tenants: every VC is capped at its quota (fixed partitions, YARN-CS)");
  c->add_option("--half-life", half_life_h,
                "with --tenants: fair share over usage decayed with this half-life (hours); "
                "0 = borrowers in policy order")
      ->check(NumberIn(0, 87600));
  c->add_option("--quota-lead", quota_lead,
                "with --tenants: jobs within their VC's quota go before borrowers of this many "
                "of the policy's queues earlier (0: queue first, then quota; -1: strict, "
                "every job within its quota before any borrower)")
      ->check(IntegerIn(-1, 1000));
  c->add_option("--protect", protect,
                "with --tenants: running jobs within their VC's quota keep their GPUs against "
                "borrowers (`borrowers`) or every job of another VC (`other_vcs`); `none`: the "
                "queues' order alone decides")
      ->check(CLI::IsMember({"none", "borrowers", "other_vcs"}));
  c->add_option("--checkpoint-interval", ckpt_interval,
                "checkpoint model: every job checkpoints every SECONDS of progress (or an "
                "interval drawn per job from uniform:LO:HI, seeded by --seed and its id); a "
                "preempted job loses the work since its last checkpoint (lost GPU-hours)");
  c->add_flag(
      "--checkpoint-aware", ckpt_aware,
      "victims of the same priority class (queue) that would lose the least work since their "
      "last checkpoint are preempted first (needs --checkpoint-interval to matter)");
  c->add_option("--attempts", attempts,
                "jobs with several attempts (converted Philly job logs): merge (one run of "
                "their total) or replay (each attempt but the last ends unfinished and the "
                "job waits to restart)")
      ->check(CLI::IsMember({"merge", "replay"}))
      ->capture_default_str();
  c->add_option("--forecast-every", forecast_every,
                "at the submit of every Nth job, forecast its start (forward simulation of the "
                "core, as serve's explain does) and report the error against the real start, "
                "and a naive estimate's")
      ->check(IntegerIn(0, 1000000000));
  c->add_option("--forecast-margin", forecast_margin,
                "LOW,HIGH: how far p10 is moved down and p90 up on the ln(seconds from now + "
                "60) scale (0,0: the raw spread of the samples, to fit margins)")
      ->delimiter(',')
      ->expected(2)
      ->capture_default_str()
      ->check(NumberIn(0, 20));
  c->add_option("--forecast-step", forecast_step,
                "how far each forecast whose outcome is known moves the margins (adaptive "
                "conformal: step x (miss - 0.1) on each side, from --forecast-margin); 0: "
                "fixed margins")
      ->capture_default_str()
      ->check(NumberIn(0, 5));
  c->add_option("--forecast-half-life", forecast_half_life_h,
                "hours: each job weighs 2^-(hours since its submit / this) in the duration "
                "estimate of forecasts (recent jobs count more); 0: all the same")
      ->capture_default_str()
      ->check(NumberIn(0, 100000));
  c->add_option("--forecast-burst-gap", forecast_burst_gap_min,
                "minutes: jobs of one VC and size submitted within this of the one before share "
                "one duration draw in each forecast copy (a sweep's jobs are alike); 0: each "
                "drawn alone")
      ->capture_default_str()
      ->check(NumberIn(0, 10080));
  c->add_option("--series-step", series_step,
                "seconds of simulated time between rows of timeseries.csv (with --out)")
      ->check(NumberIn(1, 86400));
  c->add_option("--capacity", capacity,
                "capacity changes: CSV time,node,gpus (seconds on the simulation clock, node "
                "index, usable GPUs from then on; 0 = node down)");
  speed.Add(c);
  c->add_option("--assign-models", assign_models,
                "seed: give each job without a model a random CNN (VGG, AlexNet, ResNet, "
                "Inception); 0 = off")
      ->check(Unsigned());
  CLI::Option* trace_opt =
      c->add_option("--trace", trace, "trace CSV (Tiresias or Philly format, chosen by header)");
  c->add_option("--synthetic", synthetic, "instead of --trace: N seeded Philly-like jobs")
      ->check(IntegerIn(1, kMaxSyntheticJobs));
  c->add_option("--seed", seed, "seed for --synthetic")->capture_default_str()->check(Unsigned());
  c->add_option("--load", load, "offered load for --synthetic (demand / GPUs)")
      ->capture_default_str()
      ->excludes(trace_opt)  // a trace brings its own (taken and ignored before)
      ->check(NumberIn(0, kMaxLoad, /*lo_open=*/true));
  c->add_option("--cluster", cluster, "SWITCHESxNODESxGPUS or a cluster spec CSV")
      ->capture_default_str();
  c->add_option("--from-day", from_day, "replay only jobs submitted from this day of the trace")
      ->capture_default_str()
      ->check(NumberIn(0, kMaxDays));
  c->add_option("--days", days, "replay only this many days (0 = to the end)")
      ->check(NumberIn(0, kMaxDays));
  c->add_option("--preempt-overhead", overhead,
                "seconds of restore charged on each resume (no progress meanwhile); 0 = the "
                "public simulator")
      ->capture_default_str()
      ->check(NumberIn(0, kMaxPreemptOverheadS));
}

void SpeedFlags::Add(CLI::App* c) {
  c->add_option("--speed", speed,
                "placement speed model: links (compute + gradient exchange over the slowest "
                "link, see --comm), "
                "off (every placement at packed speed), auto (links when the profiles load)")
      ->check(CLI::IsMember({"auto", "links", "off"}))
      ->capture_default_str();
  c->add_option("--comm", comm,
                "gradient exchange of the speed model: ps (one parameter server per node, "
                "tensors whole: the Tiresias testbed) or allreduce (ring, as calibrated)")
      ->check(CLI::IsMember({"ps", "allreduce"}))
      ->capture_default_str();
  c->add_option("--link-bw", link_bw,
                "link bandwidths in GB/s, e.g. intra=10,inter-node=2.3,inter-switch=1.15");
  profiles_ = c->add_option("--profiles", profiles, "model tensor sizes (model,tensor_sizes_mb)")
                  ->capture_default_str();
  compute_times_ = c->add_option("--compute-times", compute_times,
                                 "Tiresias-format trace giving 1-GPU iteration times per model")
                       ->capture_default_str();
}

StatusOr<std::pair<std::shared_ptr<const SpeedModel>, std::string>> SpeedFlags::Load() const {
  const auto given = [](const CLI::Option* o) { return o && o->count() > 0; };
  auto bw = ParseLinkBandwidths(link_bw);  // checked with --speed off too (a review)
  if (!bw.ok()) return bw.status();
  auto mode = ParseCommMode(comm);
  if (!mode.ok()) return mode.status();
  // (--speed off reads no files: naming one is harmless, as in a loop over --speed values.)
  if (speed == "off") {
    return std::make_pair(std::shared_ptr<const SpeedModel>(),
                          std::string("off (every placement at packed speed)"));
  }
  auto m = LoadLinkSpeedModel(profiles, compute_times, *bw, *mode);
  if (!m.ok()) {
    const std::string msg = m.status().message();
    if (speed == "auto" && !given(profiles_) && !given(compute_times_)) {
      return std::make_pair(std::shared_ptr<const SpeedModel>(), fmt::format("off ({})", msg));
    }
    // Which file it was ("nosuch.csv: cannot open" named no flag; found by a tester).
    const char* flag = msg.starts_with(profiles + ":")        ? "--profiles "
                       : msg.starts_with(compute_times + ":") ? "--compute-times "
                                                              : "";
    return Status(m.status().code(), flag + msg);
  }
  return std::make_pair(
      std::shared_ptr<const SpeedModel>(*m),
      fmt::format("links {} GB/s, {}", ToString(*bw),
                  *mode == CommMode::kParameterServer ? "parameter servers" : "all-reduce"));
}

bool WorkloadArgs::Load(std::vector<JobSpec>& jobs, Topology& topo, std::string& source,
                        std::vector<CapacityChange>& changes) const {
  if (!LoadJobs(jobs, topo, source)) return false;
  if (!capacity.empty()) {
    auto c = ReadCapacityChanges(capacity, topo);
    if (!c.ok()) {
      std::cerr << "error: " << c.status().message() << "\n";
      return false;
    }
    changes = std::move(*c);
    source += fmt::format(", {} capacity changes from {}", changes.size(), capacity);
  }
  if (assign_models > 0) {
    size_t n = AssignModels(jobs, assign_models, CnnModels());
    source += fmt::format(", models assigned to {} jobs (seed {})", n, assign_models);
  }
  return true;
}

bool WorkloadArgs::LoadJobs(std::vector<JobSpec>& jobs, Topology& topo, std::string& source) const {
  auto t = ResolveCluster(cluster);
  if (!t.ok()) {
    std::cerr << "error: " << t.status().message() << "\n";
    return false;
  }
  topo = *t;
  if (!trace.empty() == (synthetic > 0)) {
    std::cerr << "error: give exactly one of --trace FILE or --synthetic N\n";
    return false;
  }
  if (synthetic > 0) {
    if (Status s = SyntheticTakesNoTraceFlags(from_day, days, assign_models); !s.ok()) {
      std::cerr << "error: " << s.message() << "\n";
      return false;
    }
    jobs = SyntheticPhillyLike({.jobs = synthetic,
                                .seed = seed,
                                .load = load,
                                .cluster_gpus = topo.total_gpus(),
                                .max_gpus = DefaultSyntheticMaxGpus(topo.total_gpus())});
    source = fmt::format("synthetic Philly-like, {} jobs, seed {}, load {}", synthetic, seed, load);
    return true;
  }
  auto tr = ReadTrace(trace);
  if (!tr.ok()) {
    std::cerr << "error: " << tr.status().message() << "\n";
    return false;
  }
  jobs = std::move(tr->jobs);
  if (from_day > 0 && forecast_every > 0) {  // what a daemon running since day 0 has seen
    history = std::make_shared<const std::vector<PastJob>>(
        PastJobsBefore(jobs, static_cast<Time>(from_day * 86400 * kMsPerSecond)));
  }
  // Both in [0, kMaxDays]: checked by the flags. No job to replay is an error.
  auto window = WindowOfDays(std::move(jobs), trace, from_day, days);
  if (!window.ok()) {
    std::cerr << "error: " << window.status().message() << "\n";
    return false;
  }
  jobs = std::move(*window);
  if (from_day > 0 || days > 0) {
    source = fmt::format("{} ({} format, days {}..{}: {} jobs)", trace, tr->format, from_day,
                         days > 0 ? fmt::format("{}", from_day + days) : "end", jobs.size());
    return true;
  }
  source = fmt::format("{} ({} format, {} jobs)", trace, tr->format, jobs.size());
  return true;
}

Status SyntheticTakesNoTraceFlags(double from_day, double days, uint64_t assign_models) {
  if (from_day > 0 || days > 0 || assign_models > 0) {
    return InvalidArgument(
        "--from-day, --days and --assign-models take a --trace; --synthetic draws its own jobs "
        "and models");
  }
  return Status::Ok();
}

}  // namespace tiresias
