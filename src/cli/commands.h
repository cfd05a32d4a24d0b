// The `tiresias` subcommands. Each Add* registers one subcommand on the CLI11 app; the
// command's work runs in the callback and sets the process exit code through `rc`.
#pragma once

#include <CLI/CLI.hpp>

namespace tiresias {

void AddSimCommands(CLI::App& app, int& rc);      // sim, compare, demo, policies
void AddProfileCommands(CLI::App& app, int& rc);  // profile

}  // namespace tiresias
