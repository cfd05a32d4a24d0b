// The CLI's shared option checks (cli/flags.h): job states as squeue's users write them.
#include "cli/flags.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace tiresias {
namespace {

// The validator's answer for `input`: "" when accepted (then `input` is rewritten).
std::string Check(std::string& input) {
  return JobStates()(input);
}

TEST(CliFlags, JobStatesTakeOursSlurmsNamesAndSqueuesShortCodes) {
  // Found by exploratory use: `ls -t PD,R` (squeue's habit) was refused.
  std::string in = "PD,R,cg , CD,F,CA,TO,CF,Completed,running";
  EXPECT_EQ(Check(in), "");
  EXPECT_EQ(in,
            "pending,running,preempting,finished,failed,cancelled,timeout,starting,finished,"
            "running");
  in = "runing";
  EXPECT_NE(Check(in).find("runing is not a job state"), std::string::npos);
  in = "P";
  EXPECT_NE(Check(in), "");
}

// Every numeric flag of every command has a range check of ours (NumberIn, IntegerIn), which
// refuses NaN and infinities and names the flag and the range. Found by a tester: `trace
// stats --from-day nan` took the whole trace, `--half-life nan` was ignored (CLI11's Range
// lets NaN through); this walks the real command line, so a new flag without one fails here.
TEST(CliFlags, EveryNumericFlagOfEveryCommandHasARangeCheck) {
  CLI::App app;
  int rc = 0;
  for (auto add :
       {AddSimCommands, AddProfileCommands, AddSweepCommand, AddTraceCommands, AddServeCommand,
        AddJobCommands, AddClusterCommands, AddWhatIfCommand, AddShimCommand}) {
    add(app, rc);
  }
  std::vector<std::string> unchecked;
  int numeric = 0;
  std::function<void(const CLI::App&, const std::string&)> walk = [&](const CLI::App& at,
                                                                      const std::string& path) {
    for (const CLI::Option* o : at.get_options()) {
      const std::string type = o->get_type_name();
      if (!type.starts_with("FLOAT") && !type.starts_with("INT") && !type.starts_with("UINT")) {
        continue;
      }
      ++numeric;
      // Ours ("NUMBER in [0, 1]", "INT in 0..9"), 64-bit seeds (Unsigned) or sizes (checked
      // after parsing); not CLI11's Range ("FLOAT in [0 - 1]"), which takes NaN.
      const bool ours =
          type.find("NUMBER in ") != std::string::npos ||
          (type.find("INT in ") != std::string::npos && type.find("..") != std::string::npos) ||
          type == "UINT:UINT" || type.find(":SIZE [") != std::string::npos;
      if (!ours) {
        unchecked.push_back(path + " " + o->get_name() + " (" + type + ")");
      }
    }
    for (const CLI::App* sub : at.get_subcommands({})) walk(*sub, path + " " + sub->get_name());
  };
  walk(app, "tiresias");
  EXPECT_GT(numeric, 40);  // the walk reached them
  EXPECT_TRUE(unchecked.empty()) << ::testing::PrintToString(unchecked);
}

}  // namespace
}  // namespace tiresias
