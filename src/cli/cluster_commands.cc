// The cluster and account commands of the client: nodes, events (follow, latest, JSON Lines),
// whoami, dashboard, token create/ls/revoke, version (the client's and the server's), and
// completion scripts for bash and zsh generated from the command tree itself.
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output.h"
#include "common/strings.h"
#include "core/event_log.h"
#include "core/tenants.h"
#include "placement/registry.h"
#include "policy/registry.h"

namespace tiresias {
namespace {

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
                               !g["job"].is_null()
                                   ? "job " + ShownRef(g, "job") +
                                         (g.value("starting", false)   ? " (starting)"
                                          : g.value("stopping", false) ? " (stopping)"
                                                                       : "")
                               : !g.value("usable", true) ? "unavailable"
                                                          : "free");
    }
    for (const auto& x : n.value("outside_jobs", nlohmann::json::array())) {
      std::cout << "  outside tiresias: " << x.get<std::string>() << "\n";
    }
  }
  return 0;
}

// The tenants: each VC's quota, what its jobs hold and borrow, what they wait for.
int Vcs(const Common& o) {
  int rc = 0;
  auto r = Fetch(o, "/v1/vcs", rc);
  if (!r) return rc;
  if ((*r)["vcs"].empty()) {
    std::cout << "no tenants: one cluster, no quotas (serve --tenants FILE declares them)\n";
    return 0;
  }
  const double half_life = r->value("half_life_hours", 0.0);
  std::cout << fmt::format("{} GPUs; unused quota {}; {}\n", r->value("gpus", 0),
                           r->value("borrow", true) ? "is lent, and reclaimed by preemption"
                                                    : "is not lent (fixed quotas)",
                           half_life > 0 ? fmt::format("borrowers by usage decayed with a "
                                                       "half-life of {:g} h",
                                                       half_life)
                                         : "borrowers in policy order");
  const auto protect = ParseProtect(r->value("protect", std::string("none")));
  if (const std::string rules =
          TenantRules(r->value("quota_lead", 0), protect.value_or(TenantConfig::Protect::kNone));
      !rules.empty()) {
    std::cout << rules << "\n";
  }
  // The VC column as wide as the longest name (up to 48; found by a tester: names cut to 16
  // columns without a mark looked alike), and names and users escaped.
  size_t width = 16;
  for (const auto& v : (*r)["vcs"])
    width = std::max(width, std::min<size_t>(48, Str(v, "name").size()));
  const auto name_of = [&](const nlohmann::json& v) {
    const std::string n = Str(v, "name");
    return n.size() > width ? Clip(n, width - 1) + "~" : n;
  };
  std::cout << fmt::format("{:<{}} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10}  {}\n", "VC", width,
                           "QUOTA", "RUNNING", "BORROWED", "JOBS", "WAITING", "WAIT-GPU",
                           "USAGE-GPUH", "USERS");
  for (const auto& v : (*r)["vcs"]) {
    std::string users = EscapeControl(Join(v.value("users", std::vector<std::string>{}), ","));
    if (Str(v, "name") == Str(*r, "default_vc"))
      users += users.empty() ? "(default)" : " (default)";
    std::cout << fmt::format("{:<{}} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10.2f}  {}\n",
                             name_of(v), width, v.value("quota", 0), v.value("running_gpus", 0),
                             v.value("borrowed_gpus", 0), v.value("running_jobs", 0),
                             v.value("waiting_jobs", 0), v.value("waiting_gpus", 0),
                             v.value("usage_gpu_hours", 0.0), users);
  }
  return 0;
}

void PrintEvent(const nlohmann::json& e, bool jsonl) {
  if (jsonl) {  // the simulator's --events format, for side-by-side comparison
    Event ev{.t = e.value("t_ms", Time{0}),
             .kind = ParseEventKind(e.value("kind", nlohmann::json()).is_string()
                                        ? e["kind"].get<std::string>()
                                        : "")
                         .value_or(EventKind::kTick),
             .detail = e.value("detail", nlohmann::json::object())};
    if (e["job"].is_number_integer()) ev.job = JobId(e["job"].get<int64_t>());
    std::cout << ToJsonLine(ev) << "\n";
    return;
  }
  std::cout << fmt::format("{}  {:<9} {:>7}  {}\n", IsoTime(e["time_ms"]), Str(e, "kind"),
                           e["job"].is_null() ? "" : "job " + ShownRef(e, "job"), Str(e, "text"))
            << std::flush;
}

int Events(const Common& o, int64_t after, int limit, bool follow, bool jsonl) {
  auto c = ApiClient::Connect(o.conn);
  if (!c.ok()) return Error(c.status());
  // Without --after (-1): the latest `limit` events; then, with -f, whatever comes next.
  // --after 0: from the first.
  std::string path = after >= 0 ? fmt::format("/v1/events?after={}&limit={}", after, limit)
                                : fmt::format("/v1/events?latest={}", limit);
  for (;;) {
    // Following, through a restart of serve (as logs -f and wait): the journal goes on.
    auto r = follow ? JsonOf(c->GetThroughRestarts(path, o.conn, std::chrono::seconds(600)))
                    : c->GetJson(path);
    if (!r.ok()) return Error(r.status());
    if (o.json() && !follow) {  // one JSON array; with -f one object per line as they come
      std::cout << r->dump(2) << "\n";
      return 0;
    }
    for (const auto& e : *r) {
      if (o.json()) {
        std::cout << e.dump() << "\n";
      } else {
        PrintEvent(e, jsonl);
      }
      after = std::max(after, e["seq"].get<int64_t>());
    }
    if (!follow) return 0;
    std::cout << std::flush;
    if (r->empty()) std::this_thread::sleep_for(std::chrono::milliseconds(250));
    path = fmt::format("/v1/events?after={}&limit=10000", std::max<int64_t>(after, 0));
  }
}

// The completion script's view of the command tree: subcommands and their flags.
void Walk(const CLI::App* app, const std::string& path,
          std::vector<std::pair<std::string, std::vector<std::string>>>& out) {
  std::vector<std::string> words;
  for (const CLI::App* sub : app->get_subcommands({})) {
    if (sub->get_name().starts_with("_")) continue;  // hidden (the shim)
    words.push_back(sub->get_name());
  }
  for (const CLI::Option* opt : app->get_options()) {
    for (const auto& l : opt->get_lnames()) words.push_back("--" + l);
    for (const auto& s : opt->get_snames()) words.push_back("-" + s);
  }
  out.push_back({path, words});
  for (const CLI::App* sub : app->get_subcommands({})) {
    if (sub->get_name().starts_with("_")) continue;
    Walk(sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
  }
}

std::string Completion(const CLI::App& root, const std::string& shell) {
  std::vector<std::pair<std::string, std::vector<std::string>>> tree;
  Walk(&root, "", tree);
  std::string policies = Join(OrderingPolicies().names(), " ");
  std::string placements = Join(PlacementPolicies().names(), " ");
  std::string cases;
  for (const auto& [path, words] : tree) {
    cases += fmt::format("    \"{}\") words=\"{}\" ;;\n", path, Join(words, " "));
  }
  std::string bash =
      fmt::format(R"sh(# bash completion for tiresias (generated by `tiresias completion bash`)
_tiresias() {{
  local cur prev path words w i
  cur="${{COMP_WORDS[COMP_CWORD]}}"
  prev="${{COMP_WORDS[COMP_CWORD-1]}}"
  path=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${{COMP_WORDS[i]}}"
    if [[ "$w" == "--" ]]; then  # the job's command: a program, then its arguments
      if ((i == COMP_CWORD - 1)); then
        COMPREPLY=($(compgen -c -- "$cur"))
      else
        COMPREPLY=($(compgen -f -- "$cur"))
      fi
      return
    fi
    [[ "$w" == -* ]] && continue
    case " $(_tiresias_words "$path") " in
      *" $w "*) path="${{path:+$path }}$w" ;;
    esac
  done
  case "$prev" in
    --policy|--policies) COMPREPLY=($(compgen -W "{}" -- "$cur")); return ;;
    --placement) COMPREPLY=($(compgen -W "{}" -- "$cur")); return ;;
    -o|--output-format)
      if [[ "$path" == submit && "$prev" == -o ]]; then  # sbatch's -o: the output file
        COMPREPLY=($(compgen -f -- "$cur"))
      else
        COMPREPLY=($(compgen -W "text json wide" -- "$cur"))
      fi
      return ;;
    --state-dir|--trace|--cluster|--out|--events|--profiles|--output|--error|-e)
      COMPREPLY=($(compgen -f -- "$cur")); return ;;
  esac
  COMPREPLY=($(compgen -W "$(_tiresias_words "$path")" -- "$cur"))
}}
_tiresias_words() {{
  case "$1" in
{}  esac
  echo "$words"
}}
complete -F _tiresias tiresias
)sh",
                  policies, placements, cases);
  if (shell == "bash") return bash;
  return "#compdef tiresias\n# zsh completion for tiresias (generated by `tiresias completion "
         "zsh`): the bash completion, through zsh's bashcompinit.\nautoload -U +X bashcompinit "
         "&& bashcompinit\n" +
         bash;
}

}  // namespace

void AddClusterCommands(CLI::App& app, int& rc) {
  static Common o;
  static int64_t after = -1;  // not given
  static int limit = 50;
  static bool follow = false, jsonl = false;
  static std::string token_user, shell;

  auto* nodes = app.add_subcommand("nodes", "GPUs and the jobs on them");
  AddConnFlags(nodes, o);
  AddOutputFlag(nodes, o);
  nodes->callback([&rc] { rc = Nodes(o); });

  auto* vcs = app.add_subcommand(
      "vcs", "virtual clusters: each one's quota, GPUs running and borrowed, jobs waiting");
  AddConnFlags(vcs, o);
  AddOutputFlag(vcs, o);
  vcs->callback([&rc] { rc = Vcs(o); });

  auto* events = app.add_subcommand(
      "events", "the scheduler's journal: submits, starts, preemptions, queue changes, exits");
  AddConnFlags(events, o);
  AddOutputFlag(events, o);
  events
      ->add_option("--after", after,
                   "events after this sequence number (0: from the first; default: the latest)")
      ->check(IntegerIn(0, INT64_MAX));
  events->add_option("--limit", limit, "how many (the latest ones, without --after)")
      ->check(IntegerIn(1, 100000));
  events->add_flag("-f,--follow", follow,
                   "keep printing events as they happen (through a restart of serve, for up to 10 "
                   "minutes without it)");
  events->add_flag("--jsonl", jsonl,
                   "one event per line in the format of `tiresias sim --events` (core time in "
                   "ms since the state directory was created)");
  events->callback([&rc] { rc = Events(o, after, limit, follow, jsonl); });

  auto* whoami = app.add_subcommand("whoami", "who the server takes you for");
  AddConnFlags(whoami, o);
  AddOutputFlag(whoami, o);
  whoami->callback([&rc] {
    auto me = Fetch(o, "/v1/whoami", rc);
    if (me) {
      std::cout << fmt::format("{}{} (via {})\n", Str(*me, "user"),
                               me->value("admin", false) ? ", admin" : "", Str(*me, "via"));
    }
  });

  auto* version = app.add_subcommand(
      "version", "this client's version and the server's (exit 1 if the server cannot be reached)");
  AddConnFlags(version, o);
  AddOutputFlag(version, o);
  static bool client_only = false;
  version->add_flag("--client", client_only, "this client's version only, without asking a server");
  version->callback([&rc] {
    auto c = client_only ? StatusOr<ApiClient>(FailedPrecondition("not asked (--client)"))
                         : ApiClient::Connect(o.conn);
    auto server = c.ok() ? c->GetJson("/v1/version") : StatusOr<nlohmann::json>(c.status());
    if (!server.ok() && !client_only) rc = 1;  // as kubectl version: the question was not answered
    nlohmann::json j = {{"client", TIRESIAS_VERSION},
                        {"server", server.ok() ? (*server)["version"] : nlohmann::json(nullptr)}};
    if (o.json()) {
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << fmt::format("client {}\n", TIRESIAS_VERSION);
      if (!client_only) {
        std::cout << fmt::format("server {}\n",
                                 server.ok() ? Str(*server, "version")
                                             : "unreachable (" + server.status().message() + ")");
      }
    }
  });

  auto* dash = app.add_subcommand("dashboard",
                                  "print the dashboard's address, signed in as you for 12 hours");
  AddConnFlags(dash, o);
  AddOutputFlag(dash, o);
  dash->callback([&rc] {
    auto c = ApiClient::Connect(o.conn);
    auto s = c.ok() ? c->PostJson("/v1/sessions", nlohmann::json::object())
                    : StatusOr<nlohmann::json>(c.status());
    if (!s.ok()) {
      rc = Error(s.status());
      return;
    }
    // The page is served on the TCP address (browsers do not speak to Unix sockets).
    std::ifstream addr(std::filesystem::path(StateDirOrDefault(o.conn.state_dir)) /
                       "tiresias.addr");
    std::string url;
    if (!std::getline(addr, url)) url = o.conn.server;
    // Bound to every address (--host 0.0.0.0): a browser needs the machine's name instead.
    for (const std::string any : {"//0.0.0.0:", "//[::]:"}) {
      std::array<char, 256> host{};
      if (const auto at = url.find(any);
          at != std::string::npos && gethostname(host.data(), host.size() - 1) == 0) {
        url.replace(at + 2, any.size() - 3, host.data());
      }
    }
    const std::string page = url + "/#token=" + Str(*s, "token");
    if (o.json()) {
      std::cout
          << nlohmann::json{{"url", page}, {"expires_in_s", s->value("expires_in_s", 0)}}.dump(2)
          << "\n";
    } else {
      std::cout << page << "\n";
    }
  });

  auto* token = app.add_subcommand("token", "API tokens for remote users (admin only)");
  token->require_subcommand(1);
  auto* create = token->add_subcommand(
      "create", "make (or replace) USER's token and print it; only its hash is kept");
  AddConnFlags(create, o);
  AddOutputFlag(create, o);
  create->add_option("user", token_user, "login name")->required();
  create->callback([&rc] {
    auto c = ApiClient::Connect(o.conn);
    auto r = c.ok() ? c->PostJson("/v1/tokens", {{"user", token_user}})
                    : StatusOr<nlohmann::json>(c.status());
    if (!r.ok()) {
      rc = Error(r.status());
      return;
    }
    std::cout << (o.json() ? r->dump(2) : Str(*r, "token")) << "\n";
  });
  auto* list = token->add_subcommand("ls", "users that have a token");
  AddConnFlags(list, o);
  AddOutputFlag(list, o);
  list->callback([&rc] {
    auto r = Fetch(o, "/v1/tokens", rc);
    if (r && o.json()) {
      std::cout << r->dump(2) << "\n";  // (it printed the lines, -o json or not)
    } else if (r) {
      for (const auto& u : (*r)["users"]) std::cout << u.get<std::string>() << "\n";
    }
  });
  auto* revoke = token->add_subcommand("revoke", "remove USER's token");
  AddConnFlags(revoke, o);
  AddOutputFlag(revoke, o);
  revoke->add_option("user", token_user, "login name")->required();
  revoke->callback([&rc] {
    auto c = ApiClient::Connect(o.conn);
    auto r = c.ok() ? c->Delete("/v1/tokens/" + token_user) : StatusOr<HttpReply>(c.status());
    Status s = r.ok() ? ErrorOf(*r) : r.status();
    rc = s.ok() ? 0 : Error(s);
    if (s.ok() && o.json()) std::cout << r->body;  // {"user": ..., "revoked": true}
  });

  auto* completion = app.add_subcommand(
      "completion", "print a completion script: source <(tiresias completion bash)");
  completion->add_option("shell", shell, "bash or zsh")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh"}));
  completion->callback([&app] { std::cout << Completion(app, shell); });
}

}  // namespace tiresias
