// End-to-end tests of what the `tiresias` command accepts and how it words a refusal: every
// numeric flag is range-checked (NaN and inf too) with the flag, the value and the range in
// the message; a directory or an oversized cluster is refused, not a crash; an --opt that
// reaches no run and an explicit --profiles that cannot be read are errors; serve says what
// really failed with its state directory; and job names are printed with control
// characters escaped (JSON output stays exact).
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve_process.h"
#include "store/store.h"
#include "test_util.h"

namespace tiresias::testing {
namespace {

bool Has(const std::string& out, const std::string& what) {
  return out.find(what) != std::string::npos;
}

struct BadFlag {
  std::string args;     // the command line after `tiresias`
  std::string message;  // expected in the output
};

// A value out of range fails at parse time (exit 105 = CLI11's validation error) and names
// the flag, the value and the range.
TEST(CliInput, NumericFlagsAreRangeChecked) {
  const std::string sim = "sim --synthetic 10 --cluster 1x1x8 ";
  const std::vector<BadFlag> cases = {
      {"serve --port 83636", "--port: 83636 is out of range: expected an integer in 0..65535"},
      {"serve --port -1", "--port: -1 is out of range: expected an integer in 0..65535"},
      {"serve --grace nan", "--grace: nan is not a finite number: expected a number in [0, 86400]"},
      {"serve --grace 1e300", "--grace: 1e300 is out of range: expected a number in [0, 86400]"},
      {"serve --gpus 65", "--gpus: 65 is out of range: expected an integer in 1..64"},
      {"serve --disk-reserve 1MiB", "--disk-reserve 1048576 bytes: 8MiB to 1TiB, or 0 for none"},
      {"serve --disk-reserve 2TiB", "--disk-reserve 2199023255552 bytes: 8MiB to 1TiB"},
      {"serve --max-log-size 1KiB", "--max-log-size 1024: at least 65536 bytes (64KiB)"},
      {"serve --max-log-size lots", "--max-log-size: lots unit not recognized"},
      // Found by a tester: refused by name but taken as numbers (SIGSTOP froze every victim).
      {"serve --preempt-signal 9", "--preempt-signal 9: SIGKILL cannot be caught"},
      {"serve --preempt-signal 19", "--preempt-signal 19: SIGSTOP cannot be caught"},
      {"serve --preempt-signal SIGKILL", "--preempt-signal SIGKILL: use TERM"},
      {sim + "--from-day 1e300",
       "--from-day: 1e300 is out of range: expected a number in [0, 3650]"},
      {sim + "--from-day nan", "--from-day: nan is not a finite number"},
      {sim + "--from-day -1", "--from-day: -1 is out of range"},
      {sim + "--days inf", "--days: inf is not a finite number: expected a number in [0, 3650]"},
      {sim + "--days -2", "--days: -2 is out of range"},
      {sim + "--load 0", "--load: 0 is out of range: expected a number in (0, 100]"},
      {sim + "--load -1", "--load: -1 is out of range: expected a number in (0, 100]"},
      {sim + "--load nan", "--load: nan is not a finite number: expected a number in (0, 100]"},
      {sim + "--preempt-overhead -5", "--preempt-overhead: -5 is out of range"},
      // Outputs are checked before the run (found by a tester: after a whole replay).
      {sim + "--events /dev/null/x.jsonl",
       "--events /dev/null/x.jsonl: /dev/null does not exist or is not a directory"},
      {sim + "--report /tmp", "--report /tmp: is a directory"},
      // Flags that something else overrides, or that need another, were taken and ignored
      // (found by a tester).
      {sim + "--no-borrow", "they need --tenants"},
      {sim + "--quota-lead 1", "they need --tenants"},
      {sim + "--from-day 3", "--from-day, --days and --assign-models take a --trace"},
      {sim + "--assign-models 5", "--from-day, --days and --assign-models take a --trace"},
      {"sweep --synthetic 10 --cluster 1x1x8 --seeds 1,1", "--seeds 1,1: a seed given twice"},
      {"sweep --synthetic 10 --cluster 1x1x8 --days 2", "take a --trace"},
      {"sim --trace t.csv --load 2", "--trace excludes --load"},
      {"compare --trace t.csv --policies fifo --load 2", "--trace excludes --load"},
      {"sweep --trace t.csv --load 2", "--trace excludes --load"},
      {"trace stats t.csv --from-day nan", "--from-day: nan is not a finite number"},
      {sim + "--half-life nan", "--half-life: nan is not a finite number"},
      {"serve --gpus 1 --tenants ''", "--tenants: an empty value"},
      {"sweep --trace t.csv --cluster 1x1x8 --seeds 1,2 --assign-models 5",
       "--assign-models and --seeds both seed the models"},
      {"sweep --trace t.csv --cluster 1x1x8 --windows 1,2 --days 1 --from-day 3",
       "--from-day with --windows"},
      {"sweep --synthetic 10 --cluster 1x1x8 -o /dev/null", "-o /dev/null: is not a directory"},
      {sim + "--preempt-overhead inf", "--preempt-overhead: inf is not a finite number"},
      {sim + "--seed -1", "--seed: -1 is not an integer in 0..18446744073709551615"},
      {sim + "--assign-models 1.5", "--assign-models: 1.5 is not an integer"},
      {"sim --synthetic 0 --cluster 1x1x8", "--synthetic: 0 is out of range: expected an integer"},
      {"profile --model vgg16 --packlimit 2",
       "--packlimit: 2 is out of range: expected a number "
       "in [0, 1]"},
      {"submit --gpus 0 -- true", "--gpus: 0 is out of range: expected an integer in 1..1048576"},
      {"submit --duration nan -- true", "--duration: nan is not a finite number"},
      {"submit --duration 1e300 -- true", "--duration: 1e300 is out of range"},
      {"events --limit 0", "--limit: 0 is out of range: expected an integer in 1..100000"},
      {"show -1", "job: -1 is out of range: expected an integer in 1..9223372036854775807"},
      // Ids start at 1 (found by a tester: 0 passed here, and the server said "not a job id").
      {"show 0", "job: 0 is out of range: expected an integer in 1.."},
      {"show 99999999999999999999", "job: 99999999999999999999 is out of range"},
      {"show 4_x", "job: 4_x is not a job id or ARRAY_INDEX (e.g. 42 or 42_7)"},
      {"explain 4_-1", "job: 4_-1 is not a job id or ARRAY_INDEX"},
      {"cancel 3 -4", "jobs: -4 is out of range"},
      {"wait 3 x", "jobs: x is not an integer"},
      {"ls -t runing", "--state: runing is not a job state (pending, starting, running"},
      {"history -s FAILED,done", "--state: done is not a job state"},
      // history listed running jobs (an exploratory test).
      {"history -s F,R", "--state: running is not an end state (finished, failed, cancelled"},
      {"submit --env FOO -- true", "--env FOO: expected KEY=VALUE"},
      {"submit python3 train.py --gpus 2",
       "--gpus comes after the command ('python3'), so it is ambiguous"},
  };
  for (const auto& c : cases) {
    CmdResult r = RunTiresias(c.args);
    EXPECT_NE(r.rc, 0) << c.args << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, c.message)) << c.args << "\nwant: " << c.message << "\ngot: " << r.out;
  }
}

TEST(CliInput, ValuesAtTheEdgesOfTheRangesAreAccepted) {
  auto dir = ScratchDir("edges");
  std::ofstream(dir / "t.csv") << "job_id,num_gpu,submit_time,duration\n0,1,0,10\n1,1,86400,10\n";
  CmdResult r = RunTiresias("sim --trace " + (dir / "t.csv").string() +
                            " --cluster 1x1x1 --from-day 1 --days 3650 --preempt-overhead 0");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "days 1..3651: 1 jobs")) << r.out;
  r = RunTiresias("sim --synthetic 5 --load 100 --cluster 1x1x8 --seed 18446744073709551615");
  EXPECT_EQ(r.rc, 0) << r.out;
}

TEST(CliInput, DirectoriesAreRefusedNotACrash) {
  const std::string d = ScratchDir("a_dir").string();
  for (const std::string& args :
       {"sim --trace " + d + " --cluster 1x1x8", "sim --synthetic 5 --cluster " + d,
        "sim --synthetic 5 --cluster 1x1x8 --profiles " + d,
        "compare --trace " + d + " --cluster 1x1x8 --policies fifo,dlas",
        "profile --model vgg16 --profiles " + d}) {
    CmdResult r = RunTiresias(args);
    EXPECT_EQ(r.rc, 2) << args << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, d + ": is a directory, expected a CSV file")) << args << "\n" << r.out;
    EXPECT_FALSE(Has(r.out, "terminate")) << r.out;
  }
}

TEST(CliInput, ClusterBeyondTheBoundIsRefused) {
  CmdResult r = RunTiresias("sim --synthetic 5 --cluster 100000x100000x64");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(
      Has(r.out, "error: cluster 100000x100000x64: 640000000000 GPUs, at most 1000000 supported"))
      << r.out;
}

TEST(CliInput, AnOptionThatReachesNoRunIsAnError) {
  const std::string cmp = "compare --synthetic 20 --cluster 1x2x8 --runs fifo+count,srtf+count ";
  CmdResult r = RunTiresias(cmp + "--opt dlas.queues=3");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "--opt dlas.queues=3: 'dlas' is not the policy of any run (policies "
                  "run: fifo, srtf)"))
      << r.out;
  r = RunTiresias(cmp + "--opt dlsa.queues=3");
  EXPECT_TRUE(Has(r.out, "'dlsa' is not the policy of any run")) << r.out;
  r = RunTiresias(cmp + "--opt queus=3");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "--opt queus=3: no policy run takes option 'queus' (options: srtf.ties)"))
      << r.out;
  r = RunTiresias("sim --synthetic 20 --cluster 1x2x8 --policy fifo --opt dlas.queues=3");
  EXPECT_EQ(r.rc, 2) << r.out;
  // Still fine: a prefixed option for a policy that runs, a plain one that some run takes.
  r = RunTiresias(cmp + "--opt srtf.ties=stable");
  EXPECT_EQ(r.rc, 0) << r.out;
  r = RunTiresias(cmp + "--opt ties=stable");
  EXPECT_EQ(r.rc, 0) << r.out;
}

// `submit python train.py --lr 3` without `--`: the command's option is not submit's. The
// refusal says where `--` goes (it only suggested submit's nearest flag, --vc); a misspelled
// submit flag, before the command, gets only its suggestion (`submit --gpu 2 sleep 1` got
// both: the hint about `--` was wrong there).
TEST(CliInput, ACommandsOwnOptionWithoutDashDashSaysWhereItGoes) {
  CmdResult r = RunTiresias("submit python train.py --lr 3");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "if --lr is the command's own option, put -- before the command: tiresias "
                  "submit [OPTIONS] -- COMMAND [ARGS...]"))
      << r.out;
  EXPECT_FALSE(Has(r.out, "did you mean")) << r.out;
  // After submit's own options and their values, still the command's.
  r = RunTiresias("submit --gpus 2 -t 1:00 --name x python train.py --gpu 3");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(Has(r.out, "if --gpu is the command's own option")) << r.out;
  EXPECT_FALSE(Has(r.out, "did you mean")) << r.out;
  for (const char* typo : {"submit --gpu 2 -- sleep 1", "submit --gpu 2 sleep 1",
                           "submit --name x --gpu=2 sleep 1", "submit --gpu 2 --nmae x sleep 1"}) {
    r = RunTiresias(typo);
    EXPECT_EQ(r.rc, 2) << typo << ": " << r.out;
    EXPECT_TRUE(Has(r.out, "did you mean --gpus?")) << typo << ": " << r.out;
    EXPECT_FALSE(Has(r.out, "put -- before")) << typo << ": " << r.out;
  }
}

// Regressions (exploratory tests): one of submit's own flags after the command, which then
// lacked its value, was blamed instead (`submit -H ls -l -a`: "--array: 1 required TEXT
// missing"); `-J -- ls` named the job "--"; `--env -X=1` set a variable named "-X"; and
// `--env A=1 python3 train.py` took python3 for another KEY=VALUE; `--env A=1 B=2 -- true`
// blamed `true`, and `-- B=2 true` failed at its launch (no program "B=2").
TEST(CliInput, SubmitsFlagsAndValuesAreReadAsWritten) {
  for (const auto& [line, message] :
       {std::pair{"submit -H ls -l -a", "-a comes after the command ('ls'), so it is ambiguous"},
        {"submit ls -a", "-a comes after the command ('ls'), so it is ambiguous"},
        {"submit -H ls -l", "if -l is the command's own option, put -- before"},
        {"submit -J -- ls", "--name: a value is missing before `--`"},
        {"submit -J --gpus 1 ls", "--name: a value is missing before --gpus (a flag)"},
        {"submit --model --gpus 2 -- ls", "--model: a value is missing before --gpus (a flag)"},
        {"submit -J -H -- true", "--name: a value is missing before -H (a flag)"},
        {"submit --env -X=1 ls", "--env -X=1: '-X' is not a variable name"},
        // B=2 became the command, and `true` was "not expected" (it blamed true).
        {"submit --env A=1 B=2 -- true", "the command would begin with B=2, a variable's"},
        {"submit --env A=1 B=2 true", "set it with --env B=2"},
        {"submit -- B=2 true", "or run the command through env: -- env B=2 CMD ARGS"},
        // A usage error, as submit's (it exited 1, as a fault).
        {"whatif --submit --gpus 1 --time abc", "--time abc: 'abc' is not a Slurm time"}}) {
    CmdResult r = RunTiresias(line);
    EXPECT_EQ(r.rc, 2) << line << ": " << r.out;
    EXPECT_TRUE(Has(r.out, message)) << line << ": " << r.out;
    EXPECT_FALSE(Has(r.out, "required TEXT missing")) << line << ": " << r.out;
  }
  // Read as meant: it goes on to ask a server (none there).
  const std::string none = "--state-dir " + ScratchDir("no_server").string();
  for (const std::string args : {"--env A=1 python3 train.py", "--env A=1 --env B_2=x -- sleep 1",
                                 "-- env B=2 true", "-- ./=x true"}) {
    const std::string line = "submit " + none + " " + args;
    CmdResult r = RunTiresias(line);
    EXPECT_TRUE(Has(r.out, "no server")) << line << ": " << r.out;
  }
  // No limit, in each of Slurm's spellings, as submit takes it (a review: whatif refused it).
  for (const std::string time : {"UNLIMITED", "0", "INFINITE"}) {
    const std::string line = "whatif --submit --gpus 1 --time " + time + " " + none;
    CmdResult r = RunTiresias(line);
    EXPECT_TRUE(Has(r.out, "no server")) << line << ": " << r.out;
  }
}

// Regression (an exploratory test): a typo in serve's --policy exited 1, as a fault does, and
// left a state directory behind (its database, token and 128 MiB reserve).
TEST(CliInput, ServeRefusesAnUnknownPolicyBeforeMakingItsState) {
  const auto dir = ScratchDir("serve_typo") / "state";
  for (const auto& [flags, message] :
       {std::pair{"--policy dlsa", "unknown policy 'dlsa'; valid policies: fifo"},
        {"--opt knob=1", "policy dlas: unknown option 'knob'"},
        {"--placement packed", "unknown placement 'packed'"},
        // (These two made the directory and its lock file first.)
        {"--preempt-signal 19", "SIGSTOP cannot be caught"},
        {"--executor slrum", "--executor slrum: use local"}}) {
    const std::string line = fmt::format("serve --state-dir {} --gpus 1 {}", dir.string(), flags);
    CmdResult r = RunTiresias(line);
    EXPECT_EQ(r.rc, 2) << line << ": " << r.out;
    EXPECT_TRUE(Has(r.out, message)) << line << ": " << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir)) << line;
  }
}

// A flag like none of the command's is named (found by an exploratory test: `submit --bogus
// 1 -- true` said only "The following argument was not expected: true").
TEST(CliInput, AFlagLikeNoneOfTheCommandsIsNamed) {
  // An option's value that looks like a flag is its value (a review: `-1` and `-x` were named).
  for (const auto& [line, flag] : {std::pair{"submit --gpus 1 --bogus 1 -- true", "--bogus"},
                                   {"submit -Z -- true", "-Z"},
                                   {"history -S -1 --bogus", "--bogus"},
                                   {"whatif --policy -x --bogus", "--bogus"}}) {
    CmdResult r = RunTiresias(line);
    EXPECT_EQ(r.rc, 2) << line << ": " << r.out;
    EXPECT_TRUE(Has(r.out, std::string(flag) + ": no such option (--help lists them)"))
        << line << ": " << r.out;
    EXPECT_EQ(r.out.find("no such option"), r.out.rfind("no such option")) << r.out;
  }
  // An unknown command: its flags are not judged (`--gpus` was said to be no option).
  CmdResult r = RunTiresias("sbatch --gpus 2 -- true");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_FALSE(Has(r.out, "no such option")) << r.out;
}

// whatif's two modes take their own flags (found by an exploratory test: the other mode's were
// taken and ignored), and a journal its caller cannot read says whose it is.
TEST(CliInput, WhatIfTakesEachModesFlagsAndSaysWhoseAJournalIs) {
  for (const auto& [line, says] :
       {std::pair{"whatif --gpus 1", "--gpus requires --submit"},
        {"whatif --submit --policy fifo", "--policy excludes --submit"},
        {"whatif --journal x.db --submit", "--journal excludes --submit"}}) {
    CmdResult r = RunTiresias(line);
    EXPECT_EQ(r.rc, 2) << line << ": " << r.out;
    EXPECT_TRUE(Has(r.out, says)) << line << ": " << r.out;
  }
  // A directory, and a file that is no journal, say so (found by a tester: "disk I/O error",
  // and "schema unknown ... use the tiresias that wrote it").
  const auto odd = ScratchDir("whatif_odd");
  std::ofstream(odd / "t.csv") << "job_id,num_gpu,submit_time,duration\n0,1,0,10\n";
  for (const auto& [line, says] :
       {std::pair{"whatif --journal " + odd.string(), "is a directory, expected serve's journal"},
        {"whatif --journal " + (odd / "t.csv").string(), "t.csv: not a tiresias journal"}}) {
    CmdResult r = RunTiresias(line);
    EXPECT_NE(r.rc, 0) << line << ": " << r.out;
    EXPECT_TRUE(Has(r.out, says)) << line << ": " << r.out;
  }
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to act as another user (runuser)";
  auto dir = ScratchDir("whatif_unreadable");
  fs::permissions(dir, fs::perms::all);
  const std::string db = (dir / "tiresias.db").string();
  ASSERT_TRUE(Store::Open(db, 1000).ok());
  fs::permissions(db, fs::perms::owner_read | fs::perms::owner_write);
  CmdResult r = testing::RunCommandLine("runuser -u nobody -- " + std::string(TIRESIAS_BINARY) +
                                        " whatif --journal " + db);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "cannot read it (Permission denied): serve's state is its own user's"))
      << r.out;
  fs::remove_all(dir);
}

// Only the default profile paths (../shared) may be absent; a file named on the command line
// must load, or the run stops (it used to fall back to "speed model: off" silently).
TEST(CliInput, AnExplicitProfilesFileMustLoad) {
  auto dir = ScratchDir("profiles");
  const std::string p = (dir / "p.csv").string(), c = (dir / "c.csv").string();
  std::ofstream(p) << "model,tensor_sizes_mb\nvgg16,392 64 16\n";
  std::ofstream(c) << "num_gpu,iterations,model_name,duration\n1,100,vgg16,20\n";
  const std::string sim = "sim --synthetic 20 --cluster 1x2x8 ";
  CmdResult r = RunTiresias(sim + "--profiles " + p + " --compute-times " + c);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "speed model: links")) << r.out;
  // The error names the flag (found by a tester: only the file's name), in sweep too, where a
  // named file that did not load turned the model off without a word.
  for (const std::string& cmd : {sim, std::string("sweep --synthetic 20 --cluster 1x2x8 -o ") +
                                          (dir / "sw").string() + " "}) {
    r = RunTiresias(cmd + "--profiles /missing.csv --compute-times " + c);
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(
        Has(r.out, "error: --profiles /missing.csv: cannot open: No such file or directory"))
        << r.out;
    r = RunTiresias(cmd + "--profiles " + p + " --compute-times /missing.csv");
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_TRUE(
        Has(r.out, "error: --compute-times /missing.csv: cannot open: No such file or directory"))
        << r.out;
  }
  // --speed off reads no profiles, so naming one is harmless.
  r = RunTiresias(sim + "--speed off --profiles /missing.csv");
  EXPECT_EQ(r.rc, 0) << r.out;
}

TEST(CliInput, TraceWithAByteOrderMarkReads) {
  auto dir = ScratchDir("bom");
  std::ofstream(dir / "t.csv") << "\xEF\xBB\xBFjob_id,num_gpu,submit_time,duration\r\n0,1,0,10\r\n";
  CmdResult r = RunTiresias("sim --trace " + (dir / "t.csv").string() + " --cluster 1x1x1");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "(tiresias format, 1 jobs)")) << r.out;
}

TEST(CliInput, FileErrorsSayWhy) {
  // (Before the run: a usage error naming the flag.)
  CmdResult r = RunTiresias("sim --synthetic 5 --cluster 1x1x8 --events /dev/null/ev.jsonl");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "--events /dev/null/ev.jsonl: /dev/null does not exist or is not a "
                  "directory"))
      << r.out;
  // A file that exists need only be writable itself (found by a review: /dev/null was
  // refused for a user who may not write /dev).
  if (geteuid() == 0) {
    r = testing::RunCommandLine("runuser -u nobody -- " + std::string(TIRESIAS_BINARY) +
                                " sim --synthetic 5 --cluster 1x1x8 --events /dev/null");
    EXPECT_EQ(r.rc, 0) << r.out;
  }
  r = RunTiresias("ls --state-dir /nonexistent");
  EXPECT_NE(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "cannot read /nonexistent/tiresias.addr: No such file or directory"))
      << r.out;
}

// serve said "another tiresias serve is using this state directory" whenever it could not
// take the lock, e.g. in a read-only directory. Now it says what failed.
TEST(CliInput, ServeSaysWhatReallyFailedWithTheStateDir) {
  auto dir = ScratchDir("serve_lockdir");
  std::filesystem::create_directory(dir / "tiresias.lock");  // cannot be opened for writing
  CmdResult r = RunTiresias("serve --gpus 1 --port 0 --state-dir " + dir.string());
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "cannot open " + (dir / "tiresias.lock").string() + ": Is a directory"))
      << r.out;
  EXPECT_FALSE(Has(r.out, "another tiresias serve")) << r.out;
  std::ofstream(dir / "a_file") << "x";  // a file where the state directory should be
  r = RunTiresias("serve --gpus 1 --port 0 --state-dir " + (dir / "a_file" / "state").string());
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "a_file/state: cannot create: Not a directory")) << r.out;
  if (geteuid() != 0) {  // root writes into read-only directories
    auto ro = ScratchDir("serve_readonly");
    std::filesystem::permissions(
        ro, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    r = RunTiresias("serve --gpus 1 --port 0 --state-dir " + ro.string());
    std::filesystem::permissions(ro, std::filesystem::perms::owner_all);
    EXPECT_TRUE(Has(r.out, "Permission denied")) << r.out;
    EXPECT_FALSE(Has(r.out, "another tiresias serve")) << r.out;
  }
}

// Found by an exploratory test: a user who may not enter serve's state directory got
// "terminate called after throwing ... filesystem_error" and SIGABRT from every command; and
// serve made the missing directories above its state directory 0700, so that no other user
// could reach its socket.
TEST(CliInput, AStateDirTheCallerCannotEnterIsAnErrorAndServeMakesItsParentsSearchable) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to act as another user (runuser)";
  auto dir = ScratchDir("private_state");
  std::filesystem::create_directories(dir / "x");
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all);  // 0700
  const std::string bin = TIRESIAS_BINARY, x = (dir / "x").string();
  for (const std::string& cmd :
       {"runuser -u nobody -- " + bin + " ls --state-dir " + x,
        "runuser -u nobody -- env TIRESIAS_STATE_DIR=" + x + " " + bin + " version"}) {
    CmdResult r = RunCommandLine(cmd);
    EXPECT_EQ(r.rc, 1) << cmd << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, "Permission denied")) << r.out;
    EXPECT_FALSE(Has(r.out, "terminate called")) << r.out;
  }
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all |
                                        std::filesystem::perms::group_exec |
                                        std::filesystem::perms::others_exec);  // 0711
  // serve makes new/deeper/state and each directory it made on the way is searchable.
  const auto state = dir / "new" / "deeper" / "state";
  {
    ServeProcess serve(state, {"--gpus", "1"});
    serve.Start();
    for (const auto& d : {dir / "new", dir / "new" / "deeper", state}) {
      struct stat st {};
      ASSERT_EQ(stat(d.c_str(), &st), 0) << d;
      EXPECT_EQ(st.st_mode & 07777, 0711u) << d;
    }
    CmdResult r =
        RunCommandLine("runuser -u nobody -- " + bin + " ls --state-dir " + state.string());
    EXPECT_EQ(r.rc, 0) << r.out;
  }
}

// Found by an exploratory test: a serve that could not listen (its port taken) had already
// recorded its settings, so the next start with other settings was refused although no serve
// had ever run there.
TEST(CliInput, AServeThatCannotListenLeavesTheStateUnwritten) {
  auto dir = ScratchDir("serve_port_taken");
  const int held = socket(AF_INET, SOCK_STREAM, 0);  // a port something else listens on
  sockaddr_in a{.sin_family = AF_INET, .sin_port = 0, .sin_addr = {htonl(INADDR_LOOPBACK)}};
  ASSERT_EQ(bind(held, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(held, 1), 0);
  socklen_t len = sizeof a;
  ASSERT_EQ(getsockname(held, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const std::string port = std::to_string(ntohs(a.sin_port));
  CmdResult r = RunTiresias("serve --gpus 1 --port " + port + " --state-dir " + dir.string());
  close(held);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "Address already in use")) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "tiresias.db"));
  EXPECT_FALSE(std::filesystem::exists(dir / "tiresias.reserve"));  // 128 MiB left (a test)
  ServeProcess second(dir, {"--gpus", "2"});
  second.Start();  // other settings: fine, nothing was recorded
  EXPECT_EQ(RunTiresias("ls --state-dir " + dir.string()).rc, 0);
}

// Found by an exploratory test: --host localhost was "reachable from other machines".
TEST(CliInput, ServeTakesLocalhostForLoopback) {
  auto dir = ScratchDir("serve_localhost");
  ServeProcess serve(dir, {"--gpus", "1", "--host", "localhost"});
  serve.Start();
  EXPECT_EQ(ReadAll(dir / "tiresias.addr").rfind("http://127.0.0.1:", 0), 0u)
      << ReadAll(dir / "serve.out");
}

// Found by a review: with the lock file removed under a running serve, a second one took the
// state over (the first aborted on its next journal write); and SIGHUP (a closed terminal)
// killed serve without its clean stop, leaving tiresias.addr behind.
TEST(CliInput, ServeRefusesAStateDirAnotherServeAnswersOnAndStopsOnSighup) {
  auto dir = ScratchDir("serve_twice");
  ServeProcess first(dir, {"--gpus", "1"});
  first.Start();
  std::filesystem::remove(dir / "tiresias.lock");
  CmdResult second = RunTiresias("serve --gpus 1 --port 0 --state-dir " + dir.string());
  EXPECT_EQ(second.rc, 1) << second.out;
  EXPECT_TRUE(Has(second.out,
                  "another tiresias serve is using this state directory (it "
                  "answers on"))
      << second.out;
  EXPECT_EQ(first.Client().Get("/v1/whoami")->status, 200) << "the first one carries on";
  // The socket removed as well (a /tmp cleaner): the database's own lock says so (found by a
  // tester: a second serve ran on the same journal).
  std::filesystem::remove(dir / "tiresias.sock");
  second = RunTiresias("serve --gpus 1 --port 0 --state-dir " + dir.string());
  EXPECT_EQ(second.rc, 1) << second.out;
  EXPECT_TRUE(Has(second.out, "another tiresias serve is using this state directory (it holds " +
                                  (dir / "tiresias.db").string()))
      << second.out;
  EXPECT_EQ(first.Client().Get("/v1/whoami")->status, 200) << "the first one carries on";
  first.Stop(SIGHUP);
  EXPECT_FALSE(std::filesystem::exists(dir / "tiresias.addr")) << "stopped cleanly";
  EXPECT_TRUE(Has(ReadAll(dir / "serve.out"), "SIGHUP: stopping")) << ReadAll(dir / "serve.out");
}

// A job name with a newline and terminal escapes is shown escaped by ls, show and events;
// --json keeps it exact.
TEST(CliInput, ControlCharactersInJobNamesAreEscaped) {
  auto dir = ScratchDir("serve_names");
  ServeProcess serve(dir, {"--gpus", "1"});
  serve.Start();
  const std::string name = "evil\n\x1b[2J\x1b[31mred\tend\x7f";
  auto c = serve.Client();
  auto r = c.PostJson("/v1/jobs", {{"name", name}, {"argv", {"sleep", "0"}}, {"gpus", 1}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::string id = std::to_string((*r)["id"].get<int64_t>());
  const std::string state = " --state-dir " + dir.string();
  const std::string escaped = "evil\\n\\x1b[2J\\x1b[31mred\\tend\\x7f";
  for (const std::string& cmd : {std::string("ls -a"), "show " + id, std::string("events")}) {
    CmdResult out = RunTiresias(cmd + state);
    ASSERT_EQ(out.rc, 0) << cmd << "\n" << out.out;
    EXPECT_EQ(out.out.find('\x1b'), std::string::npos) << cmd << ": raw escape in\n" << out.out;
    EXPECT_EQ(out.out.find('\x7f'), std::string::npos) << cmd;
    // ls cuts the name to its column (16 bytes).
    EXPECT_TRUE(Has(out.out, cmd == "ls -a" ? escaped.substr(0, 16) : escaped)) << cmd << "\n"
                                                                                << out.out;
  }
  CmdResult json = RunTiresias("show " + id + " -o json" + state);
  ASSERT_EQ(json.rc, 0) << json.out;
  EXPECT_EQ(nlohmann::json::parse(json.out)["name"], name);
}

// Found by a review: bytes that are not UTF-8 in the command, its directory or its name were
// replaced (U+FFFD) and the job ran something other than what was asked, exit 0; and a value
// the server refuses (-t -5) was exit 1, not a usage error. Now both are refused before any
// request (2), and an inherited variable that JSON cannot carry is left out with a warning.
TEST(CliInput, SubmitRefusesWhatTheRequestCannotCarryAndBadValuesAreUsageErrors) {
  auto dir = ScratchDir("serve_utf8");
  ServeProcess serve(dir, {"--gpus", "1"});
  serve.Start();
  const std::string state = " --state-dir " + dir.string();
  CmdResult argv = RunTiresias("submit" + state + " -- echo \"$(printf 'a\\377b')\"");
  EXPECT_EQ(argv.rc, 2) << argv.out;
  EXPECT_TRUE(Has(argv.out, "argv 1: not valid UTF-8")) << argv.out;
  const auto odd = dir / "d\xff";
  std::filesystem::create_directories(odd);
  CmdResult cwd = RunCommandLine("cd '" + odd.string() + "' && " + TIRESIAS_BINARY + " submit" +
                                 state + " -- true");
  EXPECT_EQ(cwd.rc, 2) << cwd.out;
  EXPECT_TRUE(Has(cwd.out, "cwd: not valid UTF-8")) << cwd.out;
  CmdResult name = RunTiresias("submit" + state + " -J \"$(printf 'n\\376')\" -- true");
  EXPECT_EQ(name.rc, 2) << name.out;
  EXPECT_TRUE(Has(name.out, "name: not valid UTF-8")) << name.out;
  CmdResult time = RunTiresias("submit" + state + " -t -5 -- true");
  EXPECT_EQ(time.rc, 2) << time.out;
  EXPECT_TRUE(Has(time.out, "field 'time'")) << time.out;
  EXPECT_EQ(serve.Client().GetJson("/v1/jobs?active=0")->size(), 0u) << "nothing was sent";
  CmdResult env = RunCommandLine("ODD=\"$(printf 'x\\377')\" " + std::string(TIRESIAS_BINARY) +
                                 " submit" + state + " -- true");
  EXPECT_EQ(env.rc, 0) << env.out;
  EXPECT_TRUE(Has(env.out, "warning: \"ODD\" is not passed to the job")) << env.out;
  // An environment over the limit says how to leave it behind (found by a tester: a user
  // with a big environment could not submit at all, and was not told why).
  CmdResult big = RunCommandLine("BIG=\"$(printf '%070000d' 0)\" BIG2=\"$(printf '%070000d' 0)\" " +
                                 std::string(TIRESIAS_BINARY) + " submit" + state + " -- true");
  EXPECT_EQ(big.rc, 2) << big.out;
  EXPECT_TRUE(Has(big.out, "field 'env'")) << big.out;
  EXPECT_TRUE(Has(big.out, "--no-export-env sends only the --env variables")) << big.out;
  CmdResult bare = RunCommandLine(
      "BIG=\"$(printf '%070000d' 0)\" BIG2=\"$(printf '%070000d' 0)\" " +
      std::string(TIRESIAS_BINARY) + " submit" + state + " --no-export-env --parsable -- true");
  EXPECT_EQ(bare.rc, 0) << bare.out;
}

// Found by a review: a date that does not exist was moved to another day (2026-02-30 read as
// March 2nd), and a huge age overflowed.
TEST(CliInput, HistoryRefusesTimesThatDoNotExist) {
  for (const char* when : {"2026-02-30", "2026-13-01", "2026-11-30T24:61", "99999999999999999d"}) {
    CmdResult r = RunTiresias(std::string("history -S ") + when + " --state-dir /nonexistent");
    EXPECT_EQ(r.rc, 2) << when << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, "is not a time")) << when << "\n" << r.out;
  }
}

}  // namespace
}  // namespace tiresias::testing

namespace tiresias::testing {
namespace {

TEST(CliInput, VersionWithoutAServerFailsAsKubectlDoesAndClientOnlyDoesNot) {
  // Found by a review: `version` exited 0 when the server could not be asked.
  const CmdResult asked = RunTiresias("version --state-dir /nonexistent-tiresias");
  EXPECT_EQ(asked.rc, 1) << asked.out;
  EXPECT_NE(asked.out.find("server unreachable"), std::string::npos) << asked.out;
  const CmdResult client = RunTiresias("version --client --state-dir /nonexistent-tiresias");
  EXPECT_EQ(client.rc, 0) << client.out;
  EXPECT_EQ(client.out, "client " TIRESIAS_VERSION "\n");
}

}  // namespace
}  // namespace tiresias::testing
