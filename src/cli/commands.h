// The `tiresias` subcommands. Each Add* registers one subcommand on the CLI11 app; the
// command's work runs in the callback and sets the process exit code through `rc`.
#pragma once

#include <CLI/CLI.hpp>

namespace tiresias {

void AddSimCommands(CLI::App& app, int& rc);      // sim, compare, demo, policies
void AddProfileCommands(CLI::App& app, int& rc);  // profile
void AddSweepCommand(CLI::App& app, int& rc);     // sweep: grids of options x clusters x seeds
void AddTraceCommands(CLI::App& app, int& rc);    // trace convert, stats, synth
void AddShimCommand(CLI::App& app, int& rc);      // _shim (hidden): supervises one job attempt
void AddServeCommand(CLI::App& app, int& rc);     // serve: the live scheduler
// submit, ls, show, logs, cancel, explain, nodes, events: clients of serve's API
void AddClientCommands(CLI::App& app, int& rc);

}  // namespace tiresias
