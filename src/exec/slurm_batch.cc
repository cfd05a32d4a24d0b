// The batch script and environment files of a Slurm job of tiresias (see slurm_batch.h).
#include "exec/slurm_batch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include "common/strings.h"
#include "exec/exit_file.h"

namespace tiresias {

namespace fs = std::filesystem;

std::string ShellQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string SlurmLiteral(std::string_view path) {
  std::string out;
  for (char c : path) {
    out += c;
    if (c == '%') out += '%';
  }
  return out;
}

std::string AttemptFile(const std::string& job_dir) {
  return (fs::path(job_dir) / "slurm-attempt.env").string();
}

std::string UnlaunchedAttemptVars() {
  // Without the mark an outside release ran the command of a job never launched (an afterok
  // dependent, a `submit -H` job), and nothing of it was journalled.
  return "TIRESIAS_ATTEMPT=0\nTIRESIAS_STOPPED=1\n";
}

std::map<std::string, std::string> ReadAttemptFile(const std::string& job_dir) {
  std::map<std::string, std::string> out;
  std::ifstream in(AttemptFile(job_dir));
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string v = line.substr(eq + 1);
    if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') v = v.substr(1, v.size() - 2);
    out[line.substr(0, eq)] = v;
  }
  return out;
}

std::optional<int64_t> RecordedAttempt(const std::map<std::string, std::string>& vars) {
  auto it = vars.find("TIRESIAS_ATTEMPT");
  if (it == vars.end()) return std::nullopt;
  return ParseInt(it->second);
}

std::string PlacementString(const std::vector<std::pair<int, int>>& placement) {
  std::string out;
  for (const auto& [n, g] : placement) {
    out += fmt::format("{}{}:{}", out.empty() ? "" : ",", n, g);
  }
  return out;
}

std::vector<std::pair<int, int>> ParsePlacement(std::string_view s) {
  std::vector<std::pair<int, int>> out;
  for (auto item : Split(s, ',')) {
    const size_t colon = item.find(':');
    if (colon == std::string_view::npos) continue;
    auto n = ParseInt(item.substr(0, colon)), g = ParseInt(item.substr(colon + 1));
    if (n && g) out.emplace_back(static_cast<int>(*n), static_cast<int>(*g));
  }
  return out;
}

bool OfRecordedRun(const std::map<std::string, std::string>& vars, int restarts) {
  const auto recorded = RecordedRestarts(vars);
  return !recorded || restarts >= *recorded;
}

bool RequeuedSinceRelease(const SlurmJob& s, const std::map<std::string, std::string>& vars) {
  const auto recorded = RecordedRestarts(vars);
  return recorded && s.restarts > *recorded;
}

std::optional<int> RecordedRestarts(const std::map<std::string, std::string>& vars) {
  auto it = vars.find("TIRESIAS_SLURM_RESTARTS");
  if (it == vars.end()) return std::nullopt;
  auto n = ParseInt(it->second);
  if (!n) return std::nullopt;
  return static_cast<int>(*n);
}

bool PlacedAsRecorded(const SlurmJob& s, const std::map<std::string, std::string>& vars) {
  const auto nodes = vars.find("TIRESIAS_NODES");
  if (nodes == vars.end()) return true;
  std::vector<std::string> want;
  for (auto n : Split(nodes->second, ',')) want.emplace_back(n);
  std::sort(want.begin(), want.end());
  int most = 0;
  const auto placement = vars.find("TIRESIAS_PLACEMENT");
  for (const auto& [n, g] : ParsePlacement(placement == vars.end() ? "" : placement->second)) {
    most = std::max(most, g);
  }
  auto same_nodes = [&](std::vector<std::string> have) {
    std::sort(have.begin(), have.end());
    return have == want;
  };
  // At least the pin's GPUs on each node (more: PollNodes reports the surplus as held outside;
  // 0: not known).
  auto enough = [&](int g) { return g == 0 || g >= most; };
  const bool gpus = std::all_of(s.node_gpus.begin(), s.node_gpus.end(), enough);
  if (s.nodes_unreadable) return true;
  if (s.state == "RUNNING" || s.state == "CONFIGURING" || s.state == "SUSPENDED" ||
      s.state == "STOPPED" || s.state == "RESIZING") {
    return same_nodes(s.nodes) && gpus;
  }
  if (SlurmEnded(s.state)) return s.nodes.empty() || (same_nodes(s.nodes) && gpus);
  if (SlurmActive(s.state) && !s.state.starts_with("REQUEUE")) {
    // Ending (COMPLETING...): Slurm lists the nodes still at it.
    return std::all_of(s.nodes.begin(), s.nodes.end(), [&](const std::string& n) {
      return std::binary_search(want.begin(), want.end(), n);
    });
  }
  // Pending, or going back to it (REQUEUED...): where its pin puts it.
  if (!s.required_nodes_known) return true;
  return same_nodes(s.required_nodes) && enough(s.gpus_per_node);
}

std::string JobEnvFile(const std::string& job_dir) {
  return (fs::path(job_dir) / "slurm-job.env").string();
}

std::string JobEnvText(const std::vector<std::pair<std::string, std::string>>& env) {
  auto shell_name = [](std::string_view k) {
    return !k.empty() && !std::isdigit(static_cast<unsigned char>(k[0])) &&
           std::all_of(k.begin(), k.end(), [](char c) {
             return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
           });
  };
  std::string text;
  for (const auto& [k, v] : env) {
    if (k.starts_with("SBATCH_") || k.starts_with("SLURM_") || !shell_name(k)) continue;
    text += fmt::format("export {}={}\n", k, ShellQuote(v));
  }
  return text;
}

std::string BatchScript(const LaunchSpec& spec, int cpus_per_task) {
  const fs::path dir(spec.job_dir);
  std::string argv_text, argv_quoted;
  for (const auto& a : spec.argv) {
    if (!argv_text.empty()) argv_text += ' ';
    argv_text += a;
    argv_quoted += ' ';
    argv_quoted += ShellQuote(a);
  }
  const std::string script = fmt::format(
      "#!/bin/bash\n"
      "# Generated by tiresias serve (exec/slurm_executor) for job {job}: the command, with one\n"
      "# task per node (srun) when it spans nodes. The attempt's variables come from\n"
      "# slurm-attempt.env, written before each release; the job's own from slurm-job.env.\n"
      ". {jobenv}\n"
      "set -a\n"
      ". {env}\n"
      "set +a\n"
      "export TIRESIAS_JOB_ID={job} TIRESIAS_CHECKPOINT_DIR={ckpt} TIRESIAS_DONE_FILE={done} "
      "TIRESIAS_CHECKPOINT_FILE={marker}\n"
      "# Told to stop before it started (a signal Slurm dropped): nothing to run or save. Killed,\n"
      "# it ends as a killed run does (signal 9), as serve reads it live and after a restart.\n"
      "if [ -n \"${{TIRESIAS_STOPPED:-}}${{TIRESIAS_KILLED:-}}\" ]; then\n"
      "  printf '==== tiresias: job %s attempt %s stopped before it started ====\\n' {job} "
      "\"$TIRESIAS_ATTEMPT\"\n"
      "  if [ -n \"${{TIRESIAS_KILLED:-}}\" ]; then kill -KILL $$; fi\n"
      "  exit 0\n"
      "fi\n"
      "printf '==== tiresias: job %s attempt %s started %s on %s (Slurm job %s): %s ====\\n' "
      "{job} \"$TIRESIAS_ATTEMPT\" \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\" \"$SLURM_JOB_NODELIST\" "
      "\"$SLURM_JOB_ID\" {text}\n"
      "if [ \"${{SLURM_JOB_NUM_NODES:-1}}\" -gt 1 ]; then\n"
      "  exec srun --kill-on-bad-exit=1 --nodes=\"$SLURM_JOB_NUM_NODES\" "
      "--ntasks=\"$SLURM_JOB_NUM_NODES\" --ntasks-per-node=1 --cpus-per-task={cpus} /bin/bash -c "
      "'export RANK=$SLURM_PROCID LOCAL_RANK=$SLURM_LOCALID NODE_RANK=$SLURM_NODEID; exec "
      "\"$@\"' tiresias-task{argv}\n"
      "fi\n"
      "# One node: the command is the batch step itself (one slurmstepd per job).\n"
      "export RANK=0 LOCAL_RANK=0 NODE_RANK=0\n"
      "exec{argv}\n",
      fmt::arg("job", spec.job.value()), fmt::arg("env", ShellQuote(AttemptFile(spec.job_dir))),
      fmt::arg("jobenv", ShellQuote(JobEnvFile(spec.job_dir))),
      fmt::arg("ckpt", ShellQuote((dir / "checkpoint").string())),
      fmt::arg("done", ShellQuote(DoneFilePath(dir.string()))),
      fmt::arg("marker", ShellQuote(CheckpointMarkerPath(dir.string()))),
      fmt::arg("text", ShellQuote(argv_text)), fmt::arg("cpus", cpus_per_task),
      fmt::arg("argv", argv_quoted));
  return script;
}

}  // namespace tiresias
