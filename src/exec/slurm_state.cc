// Parsing what the Slurm client tools print (see slurm_state.h).
#include "exec/slurm_state.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/strings.h"

namespace tiresias {
namespace {

std::string Str(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// A number as 22.05 writes it (an integer) or as 23.02 and later do ({"set", "infinite",
// "number"}); nullopt when absent, unset or infinite.
std::optional<int64_t> NumberOf(const nlohmann::json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (!v.is_object()) return std::nullopt;
  auto flag = [&](const char* k, bool dflt) {
    auto it = v.find(k);
    return it != v.end() && it->is_boolean() ? it->get<bool>() : dflt;
  };
  auto n = v.find("number");
  if (!flag("set", true) || flag("infinite", false) || n == v.end() || !n->is_number_integer()) {
    return std::nullopt;
  }
  return n->get<int64_t>();
}

std::optional<int64_t> Num(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() ? std::nullopt : NumberOf(*it);
}

int64_t Int(const nlohmann::json& j, const char* key) {
  return Num(j, key).value_or(0);
}

// A job's state as one word, as 22.05 and 23.02 write it. 23.11 and later write the base state
// and its flags as an array; as 22.05's job_state_string(), a flag among these wins over the
// base state (a job that ended and still releases its nodes is COMPLETING).
std::string JobState(const nlohmann::json& j) {
  auto it = j.find("job_state");
  if (it == j.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (!it->is_array()) return "";
  std::vector<std::string> words;
  for (const auto& w : *it) {
    if (w.is_string()) words.push_back(w.get<std::string>());
  }
  auto has = [&](std::string_view w) {
    return std::find(words.begin(), words.end(), w) != words.end();
  };
  for (std::string_view flag :
       {"COMPLETING", "STAGE_OUT", "CONFIGURING", "RESIZING", "REQUEUED", "REQUEUE_FED",
        "REQUEUE_HOLD", "SPECIAL_EXIT", "STOPPED", "REVOKED", "RESV_DEL_HOLD", "SIGNALING"}) {
    if (has(flag)) return std::string(flag);
  }
  for (std::string_view base :
       {"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT",
        "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"}) {
    if (has(base)) return std::string(base);
  }
  return words.empty() ? "" : words.front();
}

// The wait(2) status of a job's end: 22.05 writes it as an integer, 23.02 as a number object,
// 23.11 and later as {"status", "return_code", "signal": {"id", "name"}}.
int WaitStatus(const nlohmann::json& j) {
  auto it = j.find("exit_code");
  if (it == j.end()) return 0;
  if (it->is_object() && (it->contains("return_code") || it->contains("signal"))) {
    int64_t sig = 0;
    if (auto s = it->find("signal"); s != it->end() && s->is_object()) {
      sig = Num(*s, "id").value_or(0);
    }
    if (sig > 0 && sig < 128) return static_cast<int>(sig);  // WIFSIGNALED, WTERMSIG = sig
    return static_cast<int>((Num(*it, "return_code").value_or(0) & 0xff) << 8);
  }
  return static_cast<int>(NumberOf(*it).value_or(0));
}

// A node's reason: a string, or (sinfo of 23.02 and later) {"description", ...}.
std::string Reason(const nlohmann::json& j) {
  auto it = j.find("reason");
  if (it != j.end() && it->is_object()) return Str(*it, "description");
  return Str(j, "reason");
}

std::vector<std::string> Strings(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& s : *it) {
    if (s.is_string()) out.push_back(s.get<std::string>());
  }
  return out;
}

StatusOr<nlohmann::json> ParseTop(std::string_view text, const char* what, const char* array) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument(fmt::format("{} --json: not a JSON object", what));
  }
  if (auto e = j.find("errors"); e != j.end() && e->is_array() && !e->empty()) {
    return InvalidArgument(fmt::format("{} --json: {}", what, e->dump()));
  }
  if (!j.contains(array) || !j[array].is_array()) {
    return InvalidArgument(fmt::format("{} --json: no '{}' array", what, array));
  }
  return j;
}

// Splits at commas outside brackets.
std::vector<std::string_view> TopLevelItems(std::string_view s) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[') ++depth;
    if (s[i] == ']') --depth;
    if (s[i] == ',' && depth == 0) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(s.substr(start));
  return out;
}

Status ExpandOne(std::string_view name, std::vector<std::string>& out) {
  const size_t open = name.find('[');
  if (open == std::string_view::npos) {
    if (name.find(']') != std::string_view::npos) {
      return InvalidArgument(fmt::format("hostlist '{}': ']' without '['", name));
    }
    if (!name.empty()) out.emplace_back(name);
    return Status::Ok();
  }
  const size_t close = name.find(']', open);
  if (close == std::string_view::npos) {
    return InvalidArgument(fmt::format("hostlist '{}': '[' without ']'", name));
  }
  const std::string_view prefix = name.substr(0, open), rest = name.substr(close + 1);
  for (std::string_view range : Split(name.substr(open + 1, close - open - 1), ',')) {
    const size_t dash = range.find('-');
    const std::string_view lo_s = range.substr(0, dash);
    const std::string_view hi_s = dash == std::string_view::npos ? lo_s : range.substr(dash + 1);
    auto lo = ParseInt(lo_s), hi = ParseInt(hi_s);
    if (!lo || !hi || *lo < 0 || *hi < *lo || *hi - *lo > 100000) {
      return InvalidArgument(fmt::format("hostlist '{}': bad range '{}'", name, range));
    }
    const size_t width = lo_s.size();
    for (int64_t v = *lo; v <= *hi; ++v) {
      std::string num = std::to_string(v);
      if (num.size() < width) num.insert(0, width - num.size(), '0');
      std::vector<std::string> tails;
      if (Status s = ExpandOne(rest, tails); !s.ok()) return s;
      if (tails.empty()) tails.push_back("");
      for (const auto& t : tails) out.push_back(std::string(prefix) + num + t);
    }
  }
  return Status::Ok();
}

}  // namespace

bool SlurmNode::Usable() const {
  static const std::vector<std::string_view> kBadStates = {
      "down",    "drained", "draining", "drain",      "fail",
      "failing", "unknown", "future",   "power_down", "powered_down"};
  std::string s = state;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  for (auto bad : kBadStates) {
    if (s == bad) return false;
  }
  for (const auto& f : flags) {
    // Not NOT_RESPONDING: a missed ping is often transient, and unusable capacity evicts the
    // jobs there; Slurm marks a dead node down after SlurmdTimeout (then it is not usable).
    // RESERVED: in a reservation now, which tiresias's jobs do not ask for (Slurm keeps them
    // pending there).
    if (f == "DRAIN" || f == "FAIL" || f == "POWERED_DOWN" || f == "POWER_DOWN" ||
        f == "MAINTENANCE" || f == "RESERVED" || f == "REBOOT_REQUESTED" || f == "REBOOT_ISSUED") {
      return false;
    }
  }
  return true;
}

StatusOr<std::vector<std::string>> ExpandHostlist(std::string_view list) {
  std::vector<std::string> out;
  list = Trim(list);
  if (list.empty() || list == "(null)") return out;
  for (std::string_view item : TopLevelItems(list)) {
    if (Status s = ExpandOne(Trim(item), out); !s.ok()) return s;
  }
  return out;
}

int GpusInGres(std::string_view gres) {
  int total = 0;
  for (std::string_view item : TopLevelItems(gres)) {
    item = Trim(item);
    if (item.starts_with("gres:") || item.starts_with("gres/")) item.remove_prefix(5);
    if (!item.starts_with("gpu")) continue;
    const size_t paren = item.find('(');
    if (paren != std::string_view::npos) item = item.substr(0, paren);
    const size_t colon = item.rfind(':');
    if (colon == std::string_view::npos) continue;
    if (auto n = ParseInt(item.substr(colon + 1)); n && *n > 0) total += static_cast<int>(*n);
  }
  return total;
}

bool SlurmActive(std::string_view s) {
  return s == "RUNNING" || s == "COMPLETING" || s == "CONFIGURING" || s == "SUSPENDED" ||
         s == "SIGNALING" || s == "STAGE_OUT" || s == "RESIZING" || s == "STOPPED" ||
         s == "REQUEUE_FED" || s == "REQUEUE_HOLD" || s == "REQUEUED";
}

bool SlurmEnded(std::string_view s) {
  return s == "COMPLETED" || s == "FAILED" || s == "CANCELLED" || s == "TIMEOUT" ||
         s == "NODE_FAIL" || s == "PREEMPTED" || s == "BOOT_FAIL" || s == "DEADLINE" ||
         s == "OUT_OF_MEMORY" || s == "SPECIAL_EXIT" || s == "REVOKED";
}

bool HeldByAdmin(const SlurmJob& s) {
  return s.state == "PENDING" && s.held && s.reason == "JobHeldAdmin";
}

bool IsUnknownState(std::string_view state) {
  return state == "unknown" || state == "UNKNOWN";
}

bool UnknownNodeGrace::Usable(const SlurmNode& n, bool usable, Clock::time_point now) {
  if (!IsUnknownState(n.state)) {
    unknown_.erase(n.name);
  } else if (unknown_.contains(n.name) || usable_.contains(n.name)) {
    const auto since = unknown_.try_emplace(n.name, now).first->second;
    if (!usable && now - since < grace_ && SlurmNode{.state = "idle", .flags = n.flags}.Usable()) {
      usable = true;
    }
  }
  if (usable) {
    usable_.insert(n.name);
  } else {
    usable_.erase(n.name);
  }
  return usable;
}

void UnknownNodeGrace::Forget(const std::string& name) {
  usable_.erase(name);
  unknown_.erase(name);
}

SlurmRunEnd RecordedEnd(const SlurmJob& s) {
  if (s.state != "COMPLETED" && s.wait_status == 0) return {};  // not reported (yet)
  if (WIFEXITED(s.wait_status)) return {.exit_code = WEXITSTATUS(s.wait_status)};
  if (WIFSIGNALED(s.wait_status)) return {.signal = WTERMSIG(s.wait_status)};
  return {};
}

std::string SlurmPolicyReason(std::string_view output) {
  // The line just before the policy error (not any line: a site's job_submit plugin may say
  // more).
  std::string_view before;
  for (std::string_view line : Split(output, '\n')) {
    if (line.find("accounting/QOS policy") != std::string_view::npos) {
      if (const size_t at = before.rfind("error: "); at != std::string_view::npos) {
        before.remove_prefix(at + 7);
      }
      before = Trim(before);
      const bool code = (before.starts_with("Assoc") || before.starts_with("QOS")) &&
                        before.find_first_of(" \t") == std::string_view::npos;
      return code ? std::string(before) : "";
    }
    before = line;
  }
  return "";
}

bool SlurmSubmitLimit(std::string_view output) {
  // Named: a limit on the jobs queued, or a limit the job itself is over (its size, its time:
  // the same error, "job submit limit, user's size and/or time limits"), which it never meets.
  if (const std::string reason = SlurmPolicyReason(output); !reason.empty()) {
    return reason.find("SubmitJob") != std::string::npos;
  }
  for (std::string_view m :
       {"MaxSubmitJob", "job submit limit", "MaxJobCount", "temporarily unable to accept job"}) {
    if (output.find(m) != std::string_view::npos) return true;
  }
  return false;
}

bool SlurmPlaceLimit(std::string_view output) {
  if (const std::string reason = SlurmPolicyReason(output); !reason.empty()) {
    return reason.find("SubmitJob") != std::string::npos;
  }
  // No reason named (the error alone): "job submit limit" is also in the words of a job over
  // a size or time limit; then one held job gives its place for nothing, once for that job.
  return output.find("MaxSubmitJob") != std::string_view::npos ||
         output.find("job submit limit") != std::string_view::npos;
}

bool SlurmTransientFailure(std::string_view output) {
  // Slurm's own words (slurm_errno.c in 22.05) for the controller not answering the request.
  for (std::string_view m : {"Unable to contact slurm controller",
                             "Socket timed out",
                             "Connection refused",
                             "Zero Bytes were transmitted",
                             "Communication connection failure",
                             "Communication shutdown failure",
                             "Transport endpoint",
                             "standby mode",
                             "Connection timed out",
                             "Insane message length",
                             "Unable to establish",
                             "Unexpected message received",
                             "Message send failure",
                             "Message receive failure",
                             "Failed to send entire message",
                             "try again",
                             "Connection reset by peer",
                             "Broken pipe",
                             "Network is unreachable",
                             "No route to host"}) {
    if (output.find(m) != std::string_view::npos) return true;
  }
  return false;
}

bool SlurmPingSaysUp(std::string_view output) {
  // "Slurmctld(primary) at head is UP" (a backup's line may follow, UP or DOWN).
  return output.find(" is UP") != std::string_view::npos;
}

StatusOr<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text) {
  auto top = ParseTop(text, "squeue", "jobs");
  if (!top.ok()) return top.status();
  std::vector<SlurmJob> out;
  for (const auto& j : (*top)["jobs"]) {
    if (!j.is_object()) continue;
    SlurmJob s;
    s.id = Int(j, "job_id");
    s.name = Str(j, "name");
    s.comment = Str(j, "comment");
    s.command = Str(j, "command");
    s.user = Str(j, "user_name");
    s.partition = Str(j, "partition");
    s.state = JobState(j);
    s.reason = Str(j, "state_reason");
    // A node list this parser cannot read costs that job its nodes, not the snapshot all jobs.
    s.nodelist = Str(j, "nodes");
    auto nodes = ExpandHostlist(s.nodelist);
    if (nodes.ok()) {
      s.nodes = std::move(*nodes);
    } else {
      s.nodes_unreadable = true;
    }
    if (auto req = ExpandHostlist(Str(j, "required_nodes"));
        req.ok() && j.contains("required_nodes")) {
      s.required_nodes = std::move(*req);
      s.required_nodes_known = true;
    }
    s.gpus_per_node = GpusInGres(Str(j, "tres_per_node"));
    // gres_detail has one entry per node of the allocation while it holds them.
    const auto gres = Strings(j, "gres_detail");
    if (gres.size() == s.nodes.size()) {
      for (const auto& g : gres) s.node_gpus.push_back(GpusInGres(g));
    } else if (!s.nodes.empty()) {
      s.node_gpus.assign(s.nodes.size(), s.gpus_per_node);
    }
    s.restarts = static_cast<int>(Int(j, "restart_cnt"));
    s.wait_status = WaitStatus(j);
    s.end_time = Int(j, "end_time");
    s.held = Num(j, "priority") == 0;
    out.push_back(std::move(s));
  }
  return out;
}

StatusOr<std::vector<SlurmNode>> ParseSinfoJson(std::string_view text) {
  auto top = ParseTop(text, "sinfo", "nodes");
  if (!top.ok()) return top.status();
  std::vector<SlurmNode> out;
  for (const auto& j : (*top)["nodes"]) {
    if (!j.is_object()) continue;
    SlurmNode n;
    n.name = Str(j, "name");
    n.address = Str(j, "address");
    // 22.05: "idle" and state_flags ["DRAIN"]; 23.02 and later: ["IDLE", "DRAIN"].
    n.state = Str(j, "state");
    n.flags = Strings(j, "state_flags");
    if (auto words = Strings(j, "state"); !words.empty()) {
      n.state = words.front();
      std::transform(n.state.begin(), n.state.end(), n.state.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      n.flags.insert(n.flags.end(), words.begin() + 1, words.end());
    }
    n.partitions = Strings(j, "partitions");
    n.gpus = GpusInGres(Str(j, "gres"));
    n.gpus_used = GpusInGres(Str(j, "gres_used"));
    n.reason = Reason(j);
    if (!n.name.empty()) out.push_back(std::move(n));
  }
  return out;
}

std::optional<std::pair<int, int>> ParseSlurmVersion(std::string_view text) {
  text = Trim(text.substr(0, text.find('\n')));
  const size_t space = text.rfind(' ');
  if (space != std::string_view::npos) text = text.substr(space + 1);
  auto parts = Split(text, '.');
  if (parts.size() < 2) return std::nullopt;
  auto major = ParseInt(parts[0]), minor = ParseInt(parts[1]);
  if (!major || !minor) return std::nullopt;
  return std::make_pair(static_cast<int>(*major), static_cast<int>(*minor));
}

std::vector<std::string> NodesCommand(std::pair<int, int> version) {
  if (version >= std::make_pair(23, 2)) return {"scontrol", "show", "nodes", "--json"};
  return {"sinfo", "--json"};
}

std::string SlurmVersionProblem(std::pair<int, int> version) {
  if (version >= std::make_pair(21, 8)) return "";
  return fmt::format(
      "Slurm {}.{:02} is older than 21.08, the first with squeue --json and sinfo --json, which "
      "tiresias reads",
      version.first, version.second);
}

std::map<std::string, std::string> ParseSlurmConfig(std::string_view text) {
  std::map<std::string, std::string> out;
  for (std::string_view line : Split(text, '\n')) {
    const size_t eq = line.find(" = ");
    if (eq == std::string_view::npos) continue;
    out[std::string(Trim(line.substr(0, eq)))] = std::string(Trim(line.substr(eq + 3)));
  }
  return out;
}

std::vector<std::string> SlurmConfigWarnings(const std::map<std::string, std::string>& c) {
  std::vector<std::string> w;
  auto get = [&](const char* k) {
    auto it = c.find(k);
    return it == c.end() ? std::string() : it->second;
  };
  auto seconds = [&](const char* k) -> std::optional<int64_t> {
    const std::string v = get(k);
    return ParseInt(v.substr(0, v.find(' ')));
  };
  const std::string sched = get("SchedulerParameters");
  auto has = [&](std::string_view opt) {
    for (auto item : Split(sched, ',')) {
      if (Trim(item).starts_with(opt)) return true;
    }
    return false;
  };
  if (get("GresTypes").find("gpu") == std::string::npos) {
    w.push_back("GresTypes has no gpu: Slurm cannot bind GPUs, every GPU job will be refused");
  }
  if (const std::string s = get("SelectType"); !s.empty() && s != "select/cons_tres") {
    w.push_back(
        fmt::format("SelectType is {}: GPUs are bound per job only with select/cons_tres", s));
  }
  if (const std::string p = get("PreemptType"); !p.empty() && p != "preempt/none") {
    w.push_back(fmt::format(
        "PreemptType is {}: Slurm preempts on its own and fights tiresias's decisions; use "
        "preempt/none for the partition tiresias drives",
        p));
  }
  if (!has("batch_sched_delay=0") || !has("sched_min_interval=0")) {
    w.push_back(
        "SchedulerParameters lacks batch_sched_delay=0 and sched_min_interval=0: a released job "
        "waits up to ~3 s for Slurm's next scheduling round (0.6 s with them)");
  }
  if (has("defer")) {
    w.push_back(
        "SchedulerParameters has defer: released jobs start only at Slurm's periodic "
        "scheduling round");
  }
  if (auto age = seconds("MinJobAge"); age && *age < 300) {
    w.push_back(fmt::format(
        "MinJobAge is {} s: a job that ends while serve is down longer than that is forgotten "
        "by Slurm, and its exit code with it (it is then rerun from its checkpoint)",
        *age));
  }
  if (auto kill = seconds("KillWait"); kill && *kill > 30) {
    w.push_back(fmt::format(
        "KillWait is {} s: after a preemption's grace period, Slurm's own SIGTERM-to-SIGKILL "
        "wait delays the requeue that long again",
        *kill));
  }
  if (get("ReturnToService") == "0") {
    w.push_back(
        "ReturnToService is 0: a node that went down stays down when its slurmd returns "
        "until an admin resumes it (tiresias gets its GPUs back only then)");
  }
  if (auto t = seconds("SlurmdTimeout"); t && *t > 120) {
    w.push_back(fmt::format(
        "SlurmdTimeout is {} s: a dead node's jobs are requeued (and resumed elsewhere) only "
        "that long after it died",
        *t));
  }
  if (get("JobRequeue") == "0") {
    w.push_back(
        "JobRequeue is 0: tiresias submits every job with --requeue, which overrides it; "
        "jobs submitted outside tiresias are not requeued on node failure");
  }
  if (const std::string pd = get("PrivateData"); pd.find("jobs") != std::string::npos) {
    w.push_back(
        "PrivateData hides other users' jobs: unless serve runs as root or SlurmUser, "
        "GPUs held by jobs outside tiresias are invisible and may be double-booked "
        "(Slurm then keeps tiresias's job pending)");
  }
  return w;
}

}  // namespace tiresias
