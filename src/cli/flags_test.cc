// The CLI's shared option checks (cli/flags.h): job states as squeue's users write them.
#include "cli/flags.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace tiresias
