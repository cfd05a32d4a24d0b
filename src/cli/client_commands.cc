// The thin-client subcommands: submit, ls, show, logs, cancel, explain, nodes, events, whoami,
// token.
// Each is one or a few API calls (see api/api_server.h) and a human-readable rendering.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include "cli/client.h"
#include "cli/commands.h"
#include "common/strings.h"
#include "core/event_log.h"
#include "live/submit_request.h"

namespace tiresias {
namespace {

struct Common {
  ClientOptions conn;
  bool json = false;
};

void AddConnFlags(CLI::App* c, Common& o) {
  c->add_option("--state-dir", o.conn.state_dir,
                "the server's state directory (default: $TIRESIAS_STATE_DIR or .)");
  c->add_option("--server", o.conn.server,
                "server URL, e.g. http://host:8470 (needs a token), or unix:PATH (default: the "
                "state directory's tiresias.sock, where the kernel tells serve who you are)");
  c->add_option("--token", o.conn.token,
                "API token for --server over TCP (default: $TIRESIAS_TOKEN, or the state "
                "directory's tiresias.token when readable)");
}

int Error(const Status& s) {
  std::cerr << "tiresias: " << s.message() << "\n";
  return s.code() == StatusCode::kNotFound ? 3 : 1;
}

std::string Human(double seconds) {
  if (seconds < 0) return "-";
  auto s = static_cast<int64_t>(seconds);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
}

std::string Str(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "-";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

bool Terminal(const std::string& state) {
  return state == "finished" || state == "failed" || state == "cancelled";
}

// Connects and GETs `path`. Returns the reply to render, or nothing when done: with --json
// the reply is printed as is; on an error it is printed and `rc` set.
std::optional<nlohmann::json> Fetch(const Common& o, const std::string& path, int& rc) {
  rc = 0;
  auto c = ApiClient::Connect(o.conn);
  auto r = c.ok() ? c->GetJson(path) : StatusOr<nlohmann::json>(c.status());
  if (!r.ok()) {
    rc = Error(r.status());
    return std::nullopt;
  }
  if (o.json) {
    std::cout << r->dump(2) << "\n";
    return std::nullopt;
  }
  return *r;
}

int Submit(const Common& o, int gpus, const std::string& name, const std::string& model,
           double duration_s, const std::vector<std::string>& env, bool export_env,
           const std::vector<std::string>& argv) {
  auto c = ApiClient::Connect(o.conn);
  if (!c.ok()) return Error(c.status());
  nlohmann::json body = {
      {"gpus", gpus}, {"argv", argv}, {"cwd", std::filesystem::current_path().string()}};
  if (!name.empty()) body["name"] = name;
  if (!model.empty()) body["model"] = model;
  if (const char* u = std::getenv("USER"); u && *u) {
    body["user"] = u;
  } else if (const passwd* pw = getpwuid(getuid())) {
    body["user"] = pw->pw_name;
  }
  if (duration_s > 0) body["duration_s"] = duration_s;
  nlohmann::json envj = nlohmann::json::object();
  // Like sbatch's default --export=ALL: the job sees the submitter's environment (its PATH,
  // virtualenv, ...), except what the scheduler sets per run.
  for (char** e = export_env ? environ : nullptr; e && *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0 || IsSchedulerEnv(kv.substr(0, eq))) continue;
    envj[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& kv : env) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Error(InvalidArgument(fmt::format("--env {}: expected KEY=VALUE", kv)));
    }
    envj[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  if (!envj.empty()) body["env"] = envj;
  auto r = c->PostJson("/v1/jobs", body);
  if (!r.ok()) return Error(r.status());
  std::cout << (*r)["id"].get<int64_t>() << "\n";
  return 0;
}

// Where a running job runs: its GPUs here, or its Slurm job and nodes.
std::string Where(const nlohmann::json& j) {
  const std::vector<std::string> nodes = j.value("nodes", std::vector<std::string>{});
  if (!Str(j, "engine_job").empty()) {
    return fmt::format("slurm:{} {}", Str(j, "engine_job"), Join(nodes, ","));
  }
  return "gpu:" + Str(j, "devices");
}

int List(const Common& o, bool all, const std::string& state) {
  int rc = 0;
  auto r = Fetch(o, state.empty() ? "/v1/jobs" : "/v1/jobs?state=" + state, rc);
  if (!r) return rc;
  std::cout << fmt::format("{:>6} {:<16} {:<10} {:>4} {:<10} {:>5} {:>12} {:>8}  {}\n", "ID",
                           "NAME", "USER", "GPUS", "STATE", "QUEUE", "ATTAINED", "WAIT", "WHERE");
  for (const auto& j : *r) {
    const std::string st = j["state"];
    if (!all && state.empty() && Terminal(st)) continue;
    const bool on_gpus = st == "running" || st == "preempting";
    std::cout << fmt::format(
        "{:>6} {:<16} {:<10} {:>4} {:<10} {:>5} {:>11.0f}s {:>8}  {}\n", j["id"].get<int64_t>(),
        j["name"].get<std::string>().substr(0, 16), j["user"].get<std::string>().substr(0, 10),
        j["gpus"].get<int>(), st,
        j.contains("queue") ? fmt::format("Q{}", j["queue"].get<int>() + 1) : "-",
        j.value("attained_gpu_s", 0.0), Human(j["wait_s"].get<double>()),
        on_gpus ? Where(j) : (Terminal(st) ? Str(j, "message") : "-"));
  }
  return 0;
}

int Show(const Common& o, int64_t id) {
  int rc = 0;
  auto r = Fetch(o, fmt::format("/v1/jobs/{}", id), rc);
  if (!r) return rc;
  const auto& j = *r;
  std::vector<std::string> argv = j["argv"];
  std::cout << fmt::format("job {} ({})\n", id, Str(j, "name"));
  for (const char* k : {"state", "user", "model", "gpus", "devices", "engine_job", "nodes",
                        "engine_state", "attempt", "preemptions", "queue", "attained_gpu_s",
                        "wait_s", "exit_code", "signal", "message", "cwd"}) {
    if (!j.contains(k)) continue;
    if (k == std::string("nodes")) {
      const std::vector<std::string> nodes = j[k];
      if (!nodes.empty()) std::cout << fmt::format("  {:<15} {}\n", k, Join(nodes, ","));
      continue;
    }
    if ((k == std::string("engine_job") || k == std::string("devices")) && Str(j, k).empty()) {
      continue;
    }
    std::cout << fmt::format("  {:<15} {}\n", k, Str(j, k));
  }
  std::cout << fmt::format("  {:<15} {}\n", "command", Join(argv, " "));
  return 0;
}

int Logs(const Common& o, int64_t id, bool follow) {
  auto c = ApiClient::Connect(o.conn);
  if (!c.ok()) return Error(c.status());
  int64_t offset = 0;
  for (;;) {
    auto r = c->Get(fmt::format("/v1/jobs/{}/logs?offset={}", id, offset));
    if (!r.ok()) return Error(r.status());
    if (Status s = ErrorOf(*r); !s.ok()) return Error(s);
    std::cout << r->body << std::flush;
    offset = ParseInt(r->next_offset).value_or(offset);
    if (!follow || (r->body.empty() && Terminal(r->job_state))) return 0;
    if (r->body.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

int Cancel(const Common& o, const std::vector<int64_t>& ids) {
  auto c = ApiClient::Connect(o.conn);
  if (!c.ok()) return Error(c.status());
  int rc = 0;
  for (int64_t id : ids) {
    auto r = c->PostJson(fmt::format("/v1/jobs/{}/cancel", id), nlohmann::json::object());
    if (!r.ok()) {
      rc = Error(r.status());
    } else {
      std::cout << fmt::format("cancelled job {}\n", id);
    }
  }
  return rc;
}

int ExplainJob(const Common& o, int64_t id) {
  int rc = 0;
  auto r = Fetch(o, fmt::format("/v1/jobs/{}/explain", id), rc);
  if (!r) return rc;
  const auto& j = *r;
  std::cout << fmt::format("job {} is {}\n", id, Str(j, "state"));
  if (!Str(j, "where").empty()) std::cout << "  " << Str(j, "where") << "\n";
  if (j["rank"].get<int>() > 0) {
    std::cout << fmt::format("  rank {} among waiting jobs: {} waiting and {} running ahead\n",
                             j["rank"].get<int>(), j["waiting_ahead"].get<int>(),
                             j["running_ahead"].get<int>());
  }
  auto named = [&](const char* key, const char* what, int total) {
    const std::vector<int64_t> ids = j.value(key, std::vector<int64_t>{});
    if (ids.empty()) return;
    std::cout << fmt::format("  {} ahead: job {}{}\n", what, fmt::join(ids, ", job "),
                             total > static_cast<int>(ids.size()) ? ", ..." : "");
  };
  named("running_ahead_ids", "running", j["running_ahead"].get<int>());
  named("waiting_ahead_ids", "waiting", j["waiting_ahead"].get<int>());
  std::cout << fmt::format("  needs {} GPUs; {} free now\n", j["gpus_needed"].get<int>(),
                           j["gpus_free"].get<int>());
  if (j.contains("next_transition_in_s")) {
    std::cout << fmt::format("  next queue change (promotion/demotion) in {}\n",
                             Human(j["next_transition_in_s"].get<double>()));
  }
  for (const auto& reason : j["reasons"]) std::cout << "  - " << reason.get<std::string>() << "\n";
  return 0;
}

int Nodes(const Common& o) {
  int rc = 0;
  auto r = Fetch(o, "/v1/nodes", rc);
  if (!r) return rc;
  if (r->contains("engine_unreachable")) {
    std::cout << "WARNING: the cluster engine cannot be reached: "
              << Str((*r)["engine_unreachable"], "why") << " (retrying)\n";
  }
  for (const auto& n : (*r)["nodes"]) {
    std::cout << fmt::format(
        "node {}: {} GPUs{}, {} busy", Str(n, "name"), n["gpus_total"].get<int>(),
        n.value("emulated", false) ? " [EMULATED]" : "", n["gpus_busy"].get<int>());
    if (n.contains("gpus_usable") && n["gpus_usable"].get<int>() != n["gpus_total"].get<int>()) {
      std::cout << fmt::format(", {} usable", n["gpus_usable"].get<int>());
    }
    if (n.contains("state")) {
      std::cout << fmt::format(", {}{}", Str(n, "state"),
                               Str(n, "reason").empty() ? "" : " (" + Str(n, "reason") + ")");
    }
    std::cout << fmt::format(" (policy {}, placement {})\n", Str(*r, "policy"),
                             Str(*r, "placement"));
    if (n.contains("containment"))
      std::cout << "  jobs contained by " << Str(n, "containment") << "\n";
    for (const auto& g : n["gpus"]) {
      std::cout << fmt::format("  gpu {:>2}  {:<28} {}\n", g["index"].get<int>(), Str(g, "name"),
                               !g["job"].is_null()        ? "job " + g["job"].dump()
                               : !g.value("usable", true) ? "unavailable"
                                                          : "free");
    }
    for (const auto& x : n.value("outside_jobs", nlohmann::json::array())) {
      std::cout << "  outside tiresias: " << x.get<std::string>() << "\n";
    }
  }
  return 0;
}

int Events(const Common& o, int64_t after, int limit, bool jsonl) {
  int rc = 0;
  auto r = Fetch(o, fmt::format("/v1/events?after={}&limit={}", after, limit), rc);
  if (!r) return rc;
  for (const auto& e : *r) {
    if (jsonl) {  // the simulator's --events format, for side-by-side comparison
      Event ev{.t = e.value("t_ms", Time{0}),
               .kind = ParseEventKind(Str(e, "kind")).value_or(EventKind::kTick),
               .detail = e.value("detail", nlohmann::json::object())};
      if (e["job"].is_number_integer()) ev.job = JobId(e["job"].get<int64_t>());
      std::cout << ToJsonLine(ev) << "\n";
      continue;
    }
    std::cout << fmt::format("{:>6} {:>14.3f} {:<8} job {:<5} {}\n", e["seq"].get<int64_t>(),
                             e["time_ms"].get<int64_t>() / 1000.0, Str(e, "kind"), Str(e, "job"),
                             Str(e, "text"));
  }
  return 0;
}

}  // namespace

void AddClientCommands(CLI::App& app, int& rc) {
  static Common o;
  static int gpus = 1;
  static std::string name, model, state;
  static double duration_s = 0;
  static std::vector<std::string> env, argv;
  static int64_t id = 0;
  static std::vector<int64_t> ids;
  static bool follow = false, all = false, export_env = true;
  static int64_t after = 0;
  static int limit = 1000;

  auto* submit = app.add_subcommand("submit", "submit a job: tiresias submit --gpus 2 -- CMD ARGS");
  AddConnFlags(submit, o);
  submit->add_option("--gpus", gpus, "GPUs (gang-scheduled)")->check(CLI::PositiveNumber);
  submit->add_option("--name", name, "job name (default: the command)");
  submit->add_option("--model", model, "model name, for placement (e.g. resnet50, vgg16)");
  submit->add_option("--duration", duration_s,
                     "expected run time in seconds (only sjf/srtf/srsf use it)");
  submit->add_option("--env", env, "extra environment KEY=VALUE (repeatable)");
  submit->add_flag("--export-env,!--no-export-env", export_env,
                   "pass this shell's environment to the job (default; like sbatch)");
  submit->add_option("command", argv, "the command, after --")->required();
  submit->callback([&rc] { rc = Submit(o, gpus, name, model, duration_s, env, export_env, argv); });

  auto* ls = app.add_subcommand("ls", "list jobs (like squeue)");
  AddConnFlags(ls, o);
  ls->add_flag("-a,--all", all, "include finished, failed and cancelled jobs");
  ls->add_option("--state", state, "only jobs in this state");
  ls->add_flag("--json", o.json, "print JSON");
  ls->callback([&rc] { rc = List(o, all, state); });

  auto* show = app.add_subcommand("show", "show one job");
  AddConnFlags(show, o);
  show->add_option("id", id, "job id")->required();
  show->add_flag("--json", o.json, "print JSON");
  show->callback([&rc] { rc = Show(o, id); });

  auto* logs = app.add_subcommand("logs", "print a job's output");
  AddConnFlags(logs, o);
  logs->add_option("id", id, "job id")->required();
  logs->add_flag("-f,--follow", follow, "keep printing until the job ends");
  logs->callback([&rc] { rc = Logs(o, id, follow); });

  auto* cancel = app.add_subcommand("cancel", "cancel jobs");
  AddConnFlags(cancel, o);
  cancel->add_option("ids", ids, "job ids")->required();
  cancel->callback([&rc] { rc = Cancel(o, ids); });

  auto* explain = app.add_subcommand("explain", "why is my job pending?");
  AddConnFlags(explain, o);
  explain->add_option("id", id, "job id")->required();
  explain->add_flag("--json", o.json, "print JSON");
  explain->callback([&rc] { rc = ExplainJob(o, id); });

  auto* nodes = app.add_subcommand("nodes", "GPUs and the jobs on them");
  AddConnFlags(nodes, o);
  nodes->add_flag("--json", o.json, "print JSON");
  nodes->callback([&rc] { rc = Nodes(o); });

  auto* events =
      app.add_subcommand("events", "the scheduler's journal: starts, preemptions, exits");
  AddConnFlags(events, o);
  events->add_option("--after", after, "only events after this sequence number");
  events->add_option("--limit", limit, "at most this many");
  events->add_flag("--json", o.json, "print JSON");
  static bool jsonl = false;
  events->add_flag("--jsonl", jsonl,
                   "print one event per line in the format of `tiresias sim --events` (core time "
                   "in ms since the state directory was created)");
  events->callback([&rc] { rc = Events(o, after, limit, jsonl); });

  auto* whoami = app.add_subcommand("whoami", "who the server takes you for");
  AddConnFlags(whoami, o);
  whoami->add_flag("--json", o.json, "print JSON");
  whoami->callback([&rc] {
    auto me = Fetch(o, "/v1/whoami", rc);
    if (me) {
      std::cout << fmt::format("{}{} (via {})\n", Str(*me, "user"),
                               me->value("admin", false) ? ", admin" : "", Str(*me, "via"));
    }
  });

  auto* token = app.add_subcommand("token", "API tokens for remote users (admin only)");
  token->require_subcommand(1);
  static std::string token_user;
  auto* create = token->add_subcommand(
      "create", "make (or replace) USER's token and print it; only its hash is kept");
  AddConnFlags(create, o);
  create->add_option("user", token_user, "login name")->required();
  create->callback([&rc] {
    auto c = ApiClient::Connect(o.conn);
    auto r = c.ok() ? c->PostJson("/v1/tokens", {{"user", token_user}})
                    : StatusOr<nlohmann::json>(c.status());
    if (!r.ok()) {
      rc = Error(r.status());
      return;
    }
    std::cout << Str(*r, "token") << "\n";
  });
  auto* list = token->add_subcommand("ls", "users that have a token");
  AddConnFlags(list, o);
  list->callback([&rc] {
    auto r = Fetch(o, "/v1/tokens", rc);
    if (r) {
      for (const auto& u : (*r)["users"]) std::cout << u.get<std::string>() << "\n";
    }
  });
  auto* revoke = token->add_subcommand("revoke", "remove USER's token");
  AddConnFlags(revoke, o);
  revoke->add_option("user", token_user, "login name")->required();
  revoke->callback([&rc] {
    auto c = ApiClient::Connect(o.conn);
    auto r = c.ok() ? c->Delete("/v1/tokens/" + token_user) : StatusOr<HttpReply>(c.status());
    Status s = r.ok() ? ErrorOf(*r) : r.status();
    rc = s.ok() ? 0 : Error(s);
  });
}

}  // namespace tiresias
