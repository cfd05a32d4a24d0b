// `tiresias whatif`: what if the live daemon had run another configuration? The journal is
// replayed through a fresh core of the live configuration (the same state the daemon had:
// when each job was submitted, how much work each did), then the stream of jobs that
// finished (submit times, sizes, the work they did) is replayed by the simulator under the
// configuration asked for, and both runs are reported side by side with compare's metrics,
// per user, and the jobs that gain or lose most. With the live configuration and a journal
// whose jobs all finished, the replay is the live run.
//
// `tiresias whatif --submit --gpus N [--time T | --duration S]` asks the server instead when
// such a job would start and end if submitted now (a forecast, engine/forecast.h).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output.h"
#include "cli/whatif.h"
#include "common/strings.h"
#include "engine/core_builder.h"
#include "engine/file_data_source.h"
#include "engine/tenant_config.h"
#include "live/journal_replay.h"
#include "live/submit_request.h"
#include "sim/metrics.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "store/store.h"

namespace tiresias {
namespace {

struct WhatIfFlags : WhatIfConfig {
  std::string journal, state_dir;
  bool submit = false;
  int gpus = 1;
  std::string time, vc;
  double duration = 0;
};

// The job results of the live run: the replayed core's view of every job that finished,
// with its user, VC and the shape of its last run (nodes, switches) from its record.
SimResult LiveResult(const Scheduler& core, const std::map<JobId, JobRecord>& records,
                     const std::string& label) {
  SimResult r;
  r.label = label;
  r.topology = core.topology().str();
  r.total_gpus = core.topology().total_gpus();
  for (const Job& j : core.jobs()) {
    if (j.state != JobState::kFinished) continue;
    std::set<int> nodes, switches;
    if (auto rec = records.find(j.spec.id); rec != records.end()) {
      for (const GpuId& g : rec->second.gpus_held) {
        nodes.insert(g.node);
        if (g.node >= 0 && g.node < core.topology().num_nodes()) {
          switches.insert(core.topology().switch_of(g.node));
        }
      }
    }
    r.jobs.push_back(JobResult{.id = j.spec.id,
                               .submit = j.spec.submit,
                               .first_start = j.first_start,
                               .end = j.end,
                               .overhead = j.overhead,
                               .executed = j.executed,
                               .work = j.work_done,
                               .model = r.names->Intern(j.spec.model),
                               .user = r.names->Intern(j.spec.user),
                               .vc = r.names->Intern(j.spec.vc),
                               .gpus = j.gpus(),
                               .preemptions = j.preemptions,
                               .promotions = j.promotions,
                               .nodes = Saturate<uint16_t>(nodes.size()),
                               .switches = Saturate<uint16_t>(switches.size()),
                               .final_queue = Saturate<int8_t>(j.queue),
                               .state = j.state});
    r.preemptions += static_cast<uint64_t>(j.preemptions);
  }
  return r;
}

}  // namespace

StatusOr<WhatIfRun> ReplayJournal(const std::string& path, const WhatIfConfig& f) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound(path + ": no such journal");
  if (std::filesystem::is_directory(path, ec)) {  // (SQLite said "disk I/O error")
    return InvalidArgument(path +
                           ": is a directory, expected serve's journal (DIR/tiresias.db; "
                           "--state-dir DIR names it)");
  }
  if (access(path.c_str(), R_OK) != 0) {  // serve keeps its state to its own user (0600)
    return PermissionDenied(fmt::format(
        "{}: cannot read it ({}): serve's state is its own user's; run whatif as that user", path,
        std::strerror(errno)));
  }
  // Beside a running serve, maybe of another build: read only (nothing upgraded or written).
  auto store = Store::Open(path, 0, {.read_only = true});
  if (!store.ok()) return store.status();
  auto conf_text = (*store)->GetMeta("config");
  auto conf = nlohmann::json::parse(conf_text.value_or(""), nullptr, false);
  if (!conf.is_object()) return FailedPrecondition(path + ": no serve configuration recorded");
  // The live core: 1 switch x nodes x the largest node (as serve builds it).
  int nodes = 1, most = conf.value("gpus", 1);
  std::vector<int> node_gpus;  // each node's (Slurm's may differ)
  if (conf.contains("nodes") && conf["nodes"].is_array() && !conf["nodes"].empty()) {
    nodes = static_cast<int>(conf["nodes"].size());
    most = 0;
    for (const auto& n : conf["nodes"]) {
      most = std::max(most, n[1].get<int>());
      node_gpus.push_back(n[1].get<int>());
    }
  }
  auto live_topo = Topology::Create(1, nodes, most);
  if (!live_topo.ok()) return live_topo.status();
  const auto strings = [&](const char* key) { return conf.value(key, std::vector<std::string>{}); };
  FileDataSource files;
  auto core =
      BuildCore(CoreConfig{.topo = *live_topo,
                           .policy = conf.value("policy", std::string("dlas")),
                           .policy_opts = strings("policy_options"),
                           .placement = conf.value("placement", std::string("consolidate")),
                           .placement_opts = strings("placement_options"),
                           .options = {.checkpoint_aware = conf.value("checkpoint_aware", false)},
                           .defaults_version = conf.value("defaults", 1),
                           .even_split = conf.value("even_split", false),
                           .node_gpus = node_gpus},
                files);
  if (!core.ok()) return core.status();
  auto rows = (*store)->LoadJobs();
  if (!rows.ok()) return rows.status();
  WhatIfRun run;
  std::map<JobId, JobRecord>& records = run.records;
  for (auto& r : *rows) records.emplace(r.id, std::move(r));
  auto events = (*store)->LoadEvents(0, 0, /*inputs_only=*/true);
  if (!events.ok()) return events.status();
  for (const EventRow& row : *events) {
    Status s = ReplayInput(**core, row, [&](JobId id) -> const JobRecord* {
      auto it = records.find(id);
      return it == records.end() ? nullptr : &it->second;
    });
    if (!s.ok()) return s;
  }
  const std::string live_label =
      "live " + conf.value("policy", std::string()) + "+" + conf.value("placement", std::string());
  run.live = LiveResult(**core, records, live_label);
  const SimResult& live = run.live;
  if (live.jobs.empty()) return FailedPrecondition(path + ": no finished job to replay");
  // The stream: every finished job with the work it did (packed ms), by submit.
  std::vector<JobSpec> stream;
  for (const JobResult& j : live.jobs) {
    const Job* cj = (*core)->Find(j.id);
    JobSpec spec = cj->spec;
    spec.duration = std::max<Duration>(1, cj->work_done);
    stream.push_back(spec);
  }
  std::sort(stream.begin(), stream.end(), [](const JobSpec& a, const JobSpec& b) {
    return a.submit != b.submit ? a.submit < b.submit : a.id < b.id;
  });
  SimConfig cfg;
  cfg.topo = *live_topo;
  if (!f.cluster.empty()) {
    auto t = Topology::Parse(f.cluster);
    if (!t.ok()) return t.status();
    cfg.topo = *t;
  }
  const bool same_policy = f.policy.empty();
  cfg.policy = same_policy ? conf.value("policy", std::string("dlas")) : f.policy;
  cfg.policy_opts = same_policy && f.opts.empty() ? strings("policy_options") : f.opts;
  cfg.placement =
      f.placement.empty() ? conf.value("placement", std::string("consolidate")) : f.placement;
  cfg.placement_opts =
      f.placement.empty() && f.popts.empty() ? strings("placement_options") : f.popts;
  cfg.preempt_overhead = static_cast<Duration>(f.overhead * kMsPerSecond);
  cfg.even_split = conf.value("even_split", false);  // Slurm's, on any --cluster
  cfg.tenants = (*core)->tenants();                  // the live ones, as the journal last set them
  if (f.tenants == "none") {
    cfg.tenants = {};
  } else if (!f.tenants.empty()) {
    auto t = ReadTenantConfig(f.tenants);
    if (!t.ok()) return t.status();
    cfg.tenants = std::move(*t);
  }
  // Checked before the run and said of where they come from (found by a tester: a job in no
  // VC of the file was rejected by the replay, with only a count in a note, and the live
  // tenants' quotas over a smaller --cluster named no source).
  if (cfg.tenants.on()) {
    const std::string source =
        f.tenants.empty()
            ? "the live tenants (from the journal; --tenants FILE or none replaces them)"
            : "--tenants " + f.tenants;
    if (auto q = ResolveQuotas(cfg.tenants, cfg.topo.total_gpus()); !q.ok()) {
      return Status(q.status().code(), source + ": " + q.status().message());
    }
    // An explicit file only: the live tenants may have come after jobs of users they do not
    // list had ended (serve keeps those), and the replay then says how many it rejected.
    if (!f.tenants.empty()) {
      for (const JobSpec& spec : stream) {
        if (cfg.tenants.IndexOf(spec.vc) || cfg.tenants.VcFor(spec.user, "").ok()) continue;
        return FailedPrecondition(fmt::format(
            "{}: job {} (user {}{}) belongs to no VC of them: list its user in a VC or name a "
            "default_vc",
            source, spec.id.value(), spec.user, spec.vc.empty() ? "" : ", VC " + spec.vc));
      }
    }
  }
  cfg.label = "whatif " + cfg.policy + "+" + cfg.placement;
  auto whatif = RunSimulation(cfg, stream);
  if (!whatif.ok()) return whatif.status();
  run.whatif = std::move(*whatif);
  run.summary = fmt::format("journal: {} ({} finished jobs replayed; live cluster {}, whatif {})",
                            path, stream.size(), live_topo->str(), cfg.topo.str());
  return run;
}

namespace {

// The replay's comparison: the whole run, per user and VC, and the jobs that gain and lose
// most; as text, or with -o json as one object.
int FromJournal(const WhatIfFlags& f, bool json) {
  const std::string path =
      !f.journal.empty()
          ? f.journal
          : (std::filesystem::path(StateDirOrDefault(f.state_dir)) / "tiresias.db").string();
  auto run = ReplayJournal(path, f);
  if (!run.ok()) return Error(run.status());
  const SimResult& live = run->live;
  const SimResult* whatif = &run->whatif;
  const auto& records = run->records;
  std::vector<Metrics> m = {ComputeMetrics(live), ComputeMetrics(*whatif)};
  // Per user and per job.
  std::map<JobId, const JobResult*> after;
  for (const JobResult& j : whatif->jobs) after[j.id] = &j;
  struct User {
    int n = 0;
    double live = 0, whatif = 0;
  };
  std::map<std::string, User> users, vcs;
  std::vector<std::pair<double, JobId>> delta;  // whatif JCT - live JCT, seconds
  for (const JobResult& j : live.jobs) {
    const JobResult* w = after.at(j.id);
    if (w->state != JobState::kFinished) continue;
    const double a = ToSeconds(j.end - j.submit), b = ToSeconds(w->end - w->submit);
    for (User* u : {&users[records.at(j.id).user], &vcs[records.at(j.id).vc]}) {
      ++u->n;
      u->live += a;
      u->whatif += b;
    }
    delta.push_back({b - a, j.id});
  }
  const bool by_vc = vcs.size() > 1 || (vcs.size() == 1 && !vcs.begin()->first.empty());
  std::sort(delta.begin(), delta.end());
  if (json) {
    auto rows = [](const std::map<std::string, User>& of) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& [name, u] : of) {
        out.push_back({{"name", name},
                       {"jobs", u.n},
                       {"mean_jct_live_s", u.live / u.n},
                       {"mean_jct_whatif_s", u.whatif / u.n}});
      }
      return out;
    };
    nlohmann::json jobs = nlohmann::json::array();  // by what they gain, most first
    for (const auto& [d, id] : delta) jobs.push_back({{"id", id.value()}, {"jct_change_s", d}});
    const nlohmann::json out = {
        {"journal", path},      {"summary", run->summary},
        {"live", ToJson(m[0])}, {"whatif", ToJson(m[1])},
        {"users", rows(users)}, {"vcs", by_vc ? rows(vcs) : nlohmann::json::array()},
        {"jobs", jobs}};
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << run->summary << "\n";
  std::cout << CompareTable(m);
  // Its ratios are over each run's own finished jobs (found by a tester: a whatif cluster
  // that rejected 5 of 7 jobs read as 2x better); the tables below compare the same jobs.
  for (size_t k = 0; k < m.size(); ++k) {
    if (m[k].finished == m[k].jobs) continue;
    std::cout << fmt::format(
        "note: the {} run finished {} of {} jobs ({} rejected, {} unfinished): its figures above "
        "are over those {} only; the tables below compare the jobs both finished\n",
        k == 0 ? "live" : "whatif", m[k].finished, m[k].jobs, m[k].rejected, m[k].unfinished,
        m[k].finished);
  }
  auto table = [](const char* who, const std::map<std::string, User>& rows) {
    std::cout << fmt::format("\n{:<16} {:>6} {:>14} {:>14} {:>7}\n", who, "jobs", "mean JCT live",
                             "mean JCT whatif", "ratio");
    for (const auto& [name, u] : rows) {
      std::cout << fmt::format("{:<16} {:>6} {:>14} {:>14} {:>7.3f}\n", Clip(name, 16), u.n,
                               Human(u.live / u.n), Human(u.whatif / u.n),
                               u.live > 0 ? u.whatif / u.live : 1.0);
    }
  };
  table("user", users);
  if (by_vc) table("VC", vcs);
  auto show = [&](const char* what, auto begin, auto end) {
    std::vector<std::string> out;
    for (auto it = begin; it != end && out.size() < 5; ++it) {
      if ((what[0] == 'g' && it->first >= 0) || (what[0] == 'l' && it->first <= 0)) break;
      out.push_back(fmt::format("job {} ({}{})", it->second.value(), it->first < 0 ? "-" : "+",
                                Human(std::abs(it->first))));
    }
    std::cout << fmt::format("{}: {}\n", what, out.empty() ? std::string("none") : Join(out, ", "));
  };
  std::cout << "\n";
  show("gain most", delta.begin(), delta.end());
  show("lose most", delta.rbegin(), delta.rend());
  return 0;
}

int ForNewJob(const Common& o, const WhatIfFlags& f) {
  nlohmann::json body = {{"gpus", f.gpus}};
  if (!f.time.empty()) {
    // A usage error (2), as submit says of the same value (it was the server's fault, 1).
    if (auto t = ParseSlurmTime(f.time); !NoTimeLimit(f.time) && !t.ok()) {
      std::cerr << fmt::format("tiresias: --time {}: {}\n", f.time, t.status().message());
      return 2;
    }
    body["time"] = f.time;
  }
  if (f.duration > 0) body["duration"] = f.duration;
  if (!f.vc.empty()) body["vc"] = f.vc;
  auto c = ApiClient::Connect(o.conn);
  if (!c.ok()) return Error(c.status());
  auto r = c->PostJson("/v1/whatif", body);
  if (!r.ok()) return Error(r.status());
  if (o.json()) {
    std::cout << r->dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("a {}-GPU job submitted now:\n", f.gpus);
  PrintEstimate(*r);
  return 0;
}

}  // namespace

void AddWhatIfCommand(CLI::App& app, int& rc) {
  static WhatIfFlags f;
  static Common o;
  auto* w = app.add_subcommand(
      "whatif",
      "replay what the live scheduler saw under another configuration (--journal), or ask when "
      "a job would run if submitted now (--submit)");
  AddConnFlags(w, o);
  AddOutputFlag(w, o);
  w->add_option("--journal", f.journal, "the live state database (default: STATE_DIR/tiresias.db)");
  w->add_option("--policy", f.policy, "ordering policy for the replay (default: the live one)");
  w->add_option("--opt", f.opts, "policy option key=value (repeatable)");
  w->add_option("--placement", f.placement, "placement policy (default: the live one)");
  w->add_option("--popt", f.popts, "placement option key=value (repeatable)");
  w->add_option("--cluster", f.cluster, "SWITCHESxNODESxGPUS (default: the live cluster)");
  w->add_option("--preempt-overhead", f.overhead,
                "seconds a resumed job restores (default 0: the live times already hold it)")
      ->check(NumberIn(0, 86400));
  w->add_option("--tenants", f.tenants,
                "tenants file for the replay (default: the live tenants; `none`: no tenants)")
      ->check(NotEmpty());
  auto* submit =
      w->add_flag("--submit", f.submit, "when would a new job start and end (asks the server)");
  // Each mode's flags need it (they were taken and ignored by the other).
  const std::vector<CLI::Option*> replay_only = {
      w->get_option("--journal"),          w->get_option("--policy"), w->get_option("--opt"),
      w->get_option("--placement"),        w->get_option("--popt"),   w->get_option("--cluster"),
      w->get_option("--preempt-overhead"), w->get_option("--tenants")};
  for (CLI::Option* opt : replay_only) opt->excludes(submit);
  for (CLI::Option* opt :
       {w->add_option("--gpus", f.gpus, "with --submit: GPUs")
            ->check(IntegerIn(1, kMaxRequestGpus)),
        w->add_option("-t,--time", f.time, "with --submit: its time limit (Slurm formats)"),
        w->add_option("--vc,-A,--account", f.vc, "with --submit: its VC (default: yours)"),
        w->add_option("--duration", f.duration, "with --submit: its expected running time, seconds")
            ->check(NumberIn(0, kMaxRequestDurationS))}) {
    opt->needs(submit);
  }
  w->callback([&rc] {
    if (f.submit) {
      rc = ForNewJob(o, f);
    } else {
      f.state_dir = o.conn.state_dir;
      rc = FromJournal(f, o.json());
    }
  });
}

}  // namespace tiresias
