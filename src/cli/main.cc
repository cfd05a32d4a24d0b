// The `tiresias` command: simulator and comparisons, the live scheduler and its client.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"tiresias: a GPU cluster manager for distributed deep learning (NSDI'19 Tiresias)"};
  app.require_subcommand(1);
  int rc = 0;
  tiresias::AddSimCommands(app, rc);
  tiresias::AddProfileCommands(app, rc);
  tiresias::AddSweepCommand(app, rc);
  tiresias::AddTraceCommands(app, rc);
  tiresias::AddServeCommand(app, rc);
  tiresias::AddClientCommands(app, rc);
  tiresias::AddShimCommand(app, rc);
  CLI11_PARSE(app, argc, argv);
  return rc;
}
