// `tiresias _shim`: the hidden subcommand that runs one job attempt under supervision for
// `tiresias serve` (see RunShim in exec/local_executor.h). Everything after `_shim` passes through.
#include "cli/commands.h"
#include "exec/local_executor.h"

namespace tiresias {

void AddShimCommand(CLI::App& app, int& rc) {
  auto* shim = app.add_subcommand("_shim", "supervise one job attempt (internal)");
  shim->group("");  // hidden from --help
  shim->prefix_command();
  shim->set_help_flag();  // `--help` belongs to the command being run
  shim->callback([shim, &rc] { rc = RunShim(shim->remaining()); });
}

}  // namespace tiresias
