// The `tiresias` subcommands. Each Add* registers one subcommand on the CLI11 app; the
// command's work runs in the callback and sets the process exit code through `rc`.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tiresias {

struct Common;  // the connection and output flags (cli/output.h)

void AddSimCommands(CLI::App& app, int& rc);      // sim, compare, demo, policies
void AddProfileCommands(CLI::App& app, int& rc);  // profile
void AddSweepCommand(CLI::App& app, int& rc);     // sweep: grids of options x clusters x seeds
void AddTraceCommands(CLI::App& app, int& rc);    // trace convert, stats, synth
void AddShimCommand(CLI::App& app, int& rc);      // _shim (hidden): supervises one job attempt
void AddServeCommand(CLI::App& app, int& rc);     // serve: the live scheduler
void AddWhatIfCommand(CLI::App& app, int& rc);    // whatif: another configuration, a new job
// Clients of serve's API. submit, ls, show, logs, cancel, hold, release, requeue, wait,
// history, explain:
void AddJobCommands(CLI::App& app, int& rc);
void AddSubmitCommand(CLI::App& app, int& rc);  // submit (AddJobCommands adds it)
// submit's refusal of one of its own flags after the command's first word, without `--`.
std::string AmbiguousSubmitFlag(const std::string& flag, const std::string& command);
// submit's refusal of a command whose first word is a shell's variable assignment (`B=2`:
// `--env A=1 B=2 -- CMD` took it for the command), or nullopt when `first` is none.
std::optional<std::string> AssignmentAsCommand(const std::string& first);
void AddExplainCommand(CLI::App& app, int& rc);  // explain (AddJobCommands adds it)
// cancel, hold, release, requeue, requeuehold (`verb`) of each job or array in `refs`; the exit
// code (act_command.cc, which AddJobCommands' commands call).
int ActOnJobs(const Common& o, const std::string& verb, const std::vector<std::string>& refs);
// nodes, events, whoami, version, dashboard, token, completion:
void AddClusterCommands(CLI::App& app, int& rc);
// The closest of `candidates` to a misspelled `word`, if one is close enough to suggest.
std::optional<std::string> Closest(const std::string& word,
                                   const std::vector<std::string>& candidates);

}  // namespace tiresias
