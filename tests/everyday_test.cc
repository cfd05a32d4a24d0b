// Issue "What users of a cluster scheduler expect every day", end to end through the CLI as a
// Slurm user would drive it: a real `serve` (4 emulated GPUs, --grace 1), then an array with a
// concurrency limit, a dependency chain, a held job and a job that runs past its time limit.
// Each check says what Slurm (squeue/scontrol/sacct) would say for the same story.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "serve_process.h"
#include "test_util.h"

namespace tiresias {
namespace {

namespace fs = std::filesystem;
using testing::CmdResult;
using testing::RunTiresias;
using namespace std::chrono_literals;

class EverydayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::ScratchDir(tenants_.empty() ? "everyday" : "tenants");  // short: a socket path
    std::vector<std::string> args{"--gpus", "4", "--grace", "1"};
    if (!tenants_.empty()) {
      std::ofstream(dir_ / "tenants.json") << tenants_;
      args.insert(args.end(), {"--tenants", (dir_ / "tenants.json").string()});
    }
    serve_ = std::make_unique<testing::ServeProcess>(dir_, args);
    serve_->Start();
  }
  // As a user whose shell has TIRESIAS_STATE_DIR set (flags after `--` are the job's).
  CmdResult Cli(const std::string& args) {
    return testing::RunCommandLine("TIRESIAS_STATE_DIR=" + sd() + " " + TIRESIAS_BINARY + " " +
                                   args);
  }
  nlohmann::json Json(const std::string& args) {
    CmdResult r = Cli(args + " -o json");
    EXPECT_EQ(r.rc, 0) << args << "\n" << r.out;
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << args << " -o json does not parse:\n" << r.out;
    return j;
  }
  std::string Submit(const std::string& args) {
    CmdResult r = Cli("submit --parsable " + args);
    EXPECT_EQ(r.rc, 0) << r.out;
    std::string id = r.out.substr(0, r.out.find_last_not_of("\n ") + 1);
    EXPECT_EQ(id.find_first_not_of("0123456789"), std::string::npos) << "--parsable: " << r.out;
    return id;
  }
  std::string sd() const { return dir_.string(); }

  fs::path dir_;
  std::unique_ptr<testing::ServeProcess> serve_;
  std::string tenants_;  // a tenants file's text: serve --tenants
};

TEST_F(EverydayTest, ArrayDependenciesHoldAndTimeLimitTellTheSameStoryAsSlurm) {
  // 1. An array of 4 one-GPU tasks, at most 2 at once (sbatch --array 0-3%2). sbatch
  // --parsable prints the array's id; each task sees its index and the array's id.
  const std::string a = Submit(
      "--array 0-3%2 --gpus 1 -J arr -- sh -c 'echo task $TIRESIAS_ARRAY_TASK_ID of "
      "$TIRESIAS_ARRAY_JOB_ID; sleep 2'");
  // 2. A chain: b fails (exit 3, after 4 s: the first `ls` below must see c still waiting
  // for it, also on a loaded machine); c after b ok (never: cancelled, as Slurm with
  // kill_invalid_depend); d after b failed (runs); e after d ok (runs after d).
  const std::string b = Submit("--gpus 1 -J b -- sh -c 'sleep 4; exit 3'");
  const std::string c = Submit("--gpus 1 -J c --dependency afterok:" + b + " -- true");
  const std::string d = Submit("--gpus 1 -J d -d afternotok:" + b + " -- sh -c 'sleep 1'");
  const std::string e = Submit("--gpus 1 -J e -d afterok:" + d + " -- true");
  // 3. Held at submit (sbatch -H): waits with reason Held until released.
  const std::string h = Submit("--gpus 1 -J h -H -- true");
  // 4. Two seconds of running time, then the checkpoint signal, the grace, state timeout.
  const std::string t = Submit("--gpus 1 -J t --time 0:02 -- sleep 60");

  // squeue right away: the array's last two tasks wait for the array's limit, c, d and e for
  // their dependencies, h is held. Slurm's words: JobArrayTaskLimit, Dependency, JobHeldUser.
  {
    CmdResult ls = Cli("ls");
    ASSERT_EQ(ls.rc, 0) << ls.out;
    EXPECT_NE(ls.out.find("NODELIST(REASON)"), std::string::npos) << ls.out;
    auto line = [&](const std::string& ref) {  // the row whose first column is ref
      std::istringstream rows(ls.out);
      for (std::string row, first; std::getline(rows, row);) {
        std::istringstream(row) >> first;
        if (first == ref) return row;
      }
      return std::string();
    };
    EXPECT_NE(line(a + "_3").find("(JobArrayTaskLimit)"), std::string::npos) << ls.out;
    EXPECT_NE(line(c).find("(Dependency)"), std::string::npos) << ls.out;
    EXPECT_NE(line(e).find("(Dependency)"), std::string::npos) << ls.out;
    EXPECT_NE(line(h).find("(Held)"), std::string::npos) << ls.out;
    const auto held = Json("show " + h);
    EXPECT_EQ(held["reason"], "Held");
    EXPECT_TRUE(held["held"].get<bool>());
    // explain of the array's id: its tasks, and the first that waits (it explained task 0,
    // running, alone).
    // (Tasks 0 and 1 run 2 s: on a loaded machine task 2 may have started by now.)
    const CmdResult why = Cli("explain " + a);
    EXPECT_NE(why.out.find("array " + a + ": 4 tasks ("), std::string::npos) << why.out;
    const bool two = why.out.find("; task " + a + "_2, the first waiting:\njob " + a +
                                  "_2 is pending") != std::string::npos;
    const bool three = why.out.find("; task " + a + "_3, the first waiting:\njob " + a +
                                    "_3 is pending") != std::string::npos;
    EXPECT_TRUE(two || three) << why.out;
  }
  CmdResult released = Cli("release " + h);
  ASSERT_EQ(released.rc, 0) << released.out;
  EXPECT_EQ(released.out, "released job " + h + "\n");
  // Again: it is not held any more, and says so (it said "released").
  CmdResult again = Cli("release " + h);
  EXPECT_EQ(again.rc, 0) << again.out;
  EXPECT_EQ(again.out, "job " + h + ": not held; nothing to release\n");
  EXPECT_EQ(Json("release " + h)["unchanged"], nlohmann::json::array({std::stoll(h)}));

  // wait: the worst status of the jobs (0 all finished; b's exit code 3).
  EXPECT_EQ(Cli("wait " + a + " --timeout 60").rc, 0);  // an array id waits for every task
  EXPECT_EQ(Cli("wait " + b + " " + d + " " + e + " " + h + " --timeout 60").rc, 3);
  EXPECT_EQ(Cli("wait " + c + " --timeout 60").rc, 125);  // cancelled
  EXPECT_EQ(Cli("wait " + t + " --timeout 60").rc, 124);  // timeout

  // show of the array's id: every task (as scontrol show job), it showed task 0 alone; of a
  // task, that task.
  const std::string all_tasks = Cli("show " + a).out;
  size_t shown = 0;
  for (size_t at = all_tasks.find("JobId="); at != std::string::npos;
       at = all_tasks.find("JobId=", at + 1)) {
    ++shown;
  }
  EXPECT_EQ(shown, 4u) << all_tasks;
  // Each with its own timeline, fetched for the array at once (GET /v1/events?array=ID).
  size_t timelines = 0;
  for (size_t at = all_tasks.find("Timeline:\n"); at != std::string::npos;
       at = all_tasks.find("Timeline:\n", at + 1)) {
    ++timelines;
    const size_t next = all_tasks.find("JobId=", at);  // its own, up to the next task
    EXPECT_LT(all_tasks.find(" submit ", at), next) << all_tasks;
  }
  EXPECT_EQ(timelines, 4u) << all_tasks;
  EXPECT_NE(all_tasks.find("ArrayTask=" + a + "_3"), std::string::npos) << all_tasks;
  const auto array_json = Json("show " + a);
  ASSERT_TRUE(array_json.is_array()) << array_json.dump();
  EXPECT_EQ(array_json.size(), 4u);
  EXPECT_EQ(Json("show " + a + "_2")["ref"], a + "_2");
  EXPECT_EQ(Json("show " + b)["ref"], b);  // a plain job's ref is its id (ls -o json had none)
  // A cancel of the array whose tasks all ended names them all, as their user does (it named
  // the last task alone).
  const CmdResult ended = Cli("cancel " + a);
  EXPECT_NE(ended.rc, 0) << ended.out;
  EXPECT_NE(ended.out.find(fmt::format("jobs {0}_0, {0}_1, {0}_2, {0}_3: already finished", a)),
            std::string::npos)
      << ended.out;
  // The journal's events name a task as ARRAY_INDEX too (they said its internal id).
  const CmdResult events = Cli("events --after 0 --limit 1000");
  EXPECT_NE(events.out.find("job " + a + "_3"), std::string::npos) << events.out;
  // logs of the array's id: task 0's, and it says so on stderr.
  const CmdResult log0 =
      testing::RunCommandLine("(TIRESIAS_STATE_DIR=" + sd() + " " + TIRESIAS_BINARY + " logs " + a +
                              " 2>&1 >/dev/null)");  // stderr alone
  EXPECT_NE(log0.out.find("this is task " + a + "_0's log"), std::string::npos) << log0.out;
  EXPECT_NE(Cli("logs " + a + "_1").out.find("task 1 of " + a), std::string::npos);

  // The array: never more than 2 tasks at once; each printed its own index.
  const auto tasks = Json("ls -a");
  std::vector<std::pair<int64_t, int>> edges;  // (+1 at start, -1 at end) of each task
  int seen = 0;
  for (const auto& j : tasks) {
    if (!j.contains("ref") || !j["ref"].get<std::string>().starts_with(a + "_")) continue;
    ++seen;
    EXPECT_EQ(j["state"], "finished") << j.dump();
    edges.push_back({j["first_start_ms"].get<int64_t>(), +1});
    edges.push_back({j["end_ms"].get<int64_t>(), -1});
    const std::string ref = j["ref"];
    CmdResult log = Cli("logs " + ref);
    EXPECT_NE(log.out.find("task " + ref.substr(ref.find('_') + 1) + " of " + a), std::string::npos)
        << ref << ": " << log.out;
  }
  EXPECT_EQ(seen, 4);
  std::sort(edges.begin(), edges.end());  // an end before a start at the same ms
  int running = 0, most = 0;
  for (auto [at, delta] : edges) most = std::max(most, running += delta);
  EXPECT_EQ(most, 2);

  // scontrol show job: states, reasons, the limit; a killed-at-grace preemption is said so.
  const auto cj = Json("show " + c);
  EXPECT_EQ(cj["state"], "cancelled");
  EXPECT_NE(cj["message"].get<std::string>().find("can never be met"), std::string::npos)
      << cj.dump();
  EXPECT_TRUE(cj["first_start_ms"].is_null());  // it never ran
  const auto tj = Json("show " + t);
  EXPECT_TRUE(tj["state"] == "timeout" && tj["time_limit"] == "00:00:02") << tj.dump();
  EXPECT_TRUE(tj["exit_code"].is_null() && tj["signal"] == 15) << tj.dump();  // exit_code was -1
  CmdResult show_t = Cli("show " + t);
  EXPECT_NE(show_t.out.find("State=timeout"), std::string::npos) << show_t.out;
  EXPECT_NE(show_t.out.find("TimeLimit=00:00:02"), std::string::npos) << show_t.out;
  EXPECT_NE(show_t.out.find("Timeline:"), std::string::npos) << show_t.out;
  // Ran ~2 s (its limit counts running time only), plus the grace.
  EXPECT_GE(tj["time_s"].get<double>(), 2.0);
  EXPECT_LT(tj["time_s"].get<double>(), 10.0);
  // d ran only after b ended; e only after d.
  const auto bj = Json("show " + b), dj = Json("show " + d), ej = Json("show " + e);
  EXPECT_EQ(bj["state"], "failed");
  EXPECT_TRUE(bj["exit_code"] == 3 && bj["signal"].is_null()) << bj.dump();  // signal was 0
  // The node it ran on, as its devices (show gave Devices=0 and no node once it ended).
  EXPECT_FALSE(bj["nodes"].empty()) << bj.dump();
  EXPECT_GE(dj["first_start_ms"].get<int64_t>(), bj["end_ms"].get<int64_t>());
  EXPECT_GE(ej["first_start_ms"].get<int64_t>(), dj["end_ms"].get<int64_t>());

  // sacct: every ended job with its end state and ExitCode as code:signal; filtered on the
  // server by state.
  CmdResult hist = Cli("history");
  ASSERT_EQ(hist.rc, 0) << hist.out;
  for (const char* col :
       {"SUBMIT", "START", "END", "ELAPSED", "GPU-HOURS", "LOST-GPUH", "EXITCODE", "lost to"}) {
    EXPECT_NE(hist.out.find(col), std::string::npos) << col << "\n" << hist.out;
  }
  EXPECT_NE(hist.out.find(" 3:0"), std::string::npos) << hist.out;
  const auto failed = Json("history --state failed");
  ASSERT_EQ(failed.size(), 1u) << failed.dump();
  EXPECT_EQ(failed[0]["id"].get<int64_t>(), std::stoll(b));
  const auto timeouts = Json("history -s timeout,cancelled");
  EXPECT_EQ(timeouts.size(), 2u) << timeouts.dump();
  const auto all = Json("history");
  EXPECT_EQ(all.size(), 10u);  // 4 tasks + b c d e h t
  // --limit N: the newest N (it gave the oldest), still in id order.
  const auto last2 = Json("history --limit 2");
  ASSERT_EQ(last2.size(), 2u) << last2.dump();
  EXPECT_EQ(last2[0]["id"], all[all.size() - 2]["id"]);
  EXPECT_EQ(last2[1]["id"], all.back()["id"]);

  // Cancelling one task of an array, and the rest by the array's id (scancel 42_7, 42).
  const std::string a2 = Submit("--array 0-2 --gpus 4 -- sleep 30");
  CmdResult one = Cli("cancel " + a2 + "_2");
  EXPECT_EQ(one.rc, 0) << one.out;
  EXPECT_EQ(Json("show " + a2 + "_2")["state"], "cancelled");
  EXPECT_NE(Json("show " + a2 + "_1")["state"], "cancelled");
  // The rest: the task that had ended is in the reply too, left as it was (found by a
  // tester: it was in no list).
  const nlohmann::json rest = Json("cancel " + a2);
  const int64_t first = std::stoll(a2);
  EXPECT_EQ(rest["jobs"], nlohmann::json::array({first, first + 1})) << rest.dump();
  EXPECT_EQ(rest["left"], nlohmann::json::array({first + 2})) << rest.dump();
  EXPECT_EQ(Cli("wait " + a2 + " --timeout 30").rc, 125);
  for (const char* i : {"_0", "_1", "_2"}) EXPECT_EQ(Json("show " + a2 + i)["state"], "cancelled");
  // An array whose first index is not 0: wait, show and logs of its id take every task (an
  // exploratory test: they took task 1 alone, so `wait` returned 0 when it ended).
  const std::string a3 =
      Submit("--array 1-3 -- sh -c 'sleep 1; exit $((TIRESIAS_ARRAY_TASK_ID / 3 * 3))'");
  EXPECT_EQ(Cli("wait " + a3 + " --timeout 60").rc, 3);  // task 3's exit code, the worst
  const auto a3_tasks = Json("show " + a3);
  ASSERT_TRUE(a3_tasks.is_array()) << a3_tasks.dump();
  EXPECT_EQ(a3_tasks.size(), 3u);
  EXPECT_EQ(a3_tasks[2]["ref"], a3 + "_3");
  const CmdResult log1 =
      testing::RunCommandLine("(TIRESIAS_STATE_DIR=" + sd() + " " + TIRESIAS_BINARY + " logs " +
                              a3 + " 2>&1 >/dev/null)");  // stderr alone: it said task _0
  EXPECT_NE(log1.out.find("this is task " + a3 + "_1's log"), std::string::npos) << log1.out;
  // A ref longer than the ID column widens it (it pushed the row's other columns out of line).
  const std::string wide = Submit("-H -J wide --array 3999999 -- true");
  const std::string listed = Cli("ls").out;
  const size_t header_end = listed.find('\n');
  const size_t row = listed.find(wide + "_3999999");
  ASSERT_NE(row, std::string::npos) << listed;
  const size_t row_start = listed.rfind('\n', row) + 1;
  EXPECT_EQ(listed.find("NAME"), listed.find("wide", row) - row_start) << listed;
  EXPECT_LT(listed.find("NAME"), header_end);
  ASSERT_EQ(Cli("cancel " + wide).rc, 0);

  // Errors: a job that does not exist is a runtime error (1), a bad flag a usage error (2).
  EXPECT_EQ(Cli("show 999").rc, 1);
  EXPECT_EQ(Cli("ls --stat running").rc, 2);

  // Every command's -o json parses (the ones above too).
  for (const std::string& cmd : std::vector<std::string>{
           "ls", "ls -a", "history", "nodes", "events", "whoami", "version", "explain " + t,
           "wait " + e, "show " + a + "_0", "token ls", "dashboard"}) {
    (void)Json(cmd);
  }
  const auto ver = Json("version");
  EXPECT_EQ(ver["client"], ver["server"]) << ver.dump();
}

// Two teams share the 4 GPUs, 2 each (issue "Many teams"): vision (the default VC) runs three
// jobs, one on a GPU nlp lent it; nlp runs one. Then nlp claims its quota: vision's borrower,
// which ignores SIGTERM, is killed at the end of its 1 s grace and nlp's job starts then,
// within one grace period (plus the loop's latency). The CLI shows it all by VC.
TEST_F(EverydayTest, ScriptsGetWhatTheyAskForFromLogsJsonAndTimes) {
  // Found by a review of the CLI as a Slurm user uses it; each was wrong before.
  // A job whose output does not end with a newline: tiresias' end line is a line of its own,
  // and --tail N gives N lines (it gave N + 1).
  const std::string j = Submit("-- sh -c 'printf \"a\\nb\\nc\"'");
  ASSERT_EQ(Cli("wait " + j + " --timeout 60").rc, 0);
  const std::string log = Cli("logs " + j).out;
  EXPECT_NE(log.find("\nc\n==== tiresias: command ended: exit 0 ====\n"), std::string::npos) << log;
  EXPECT_EQ(Cli("logs " + j + " --tail 1").out, "==== tiresias: command ended: exit 0 ====\n");
  EXPECT_EQ(Cli("logs " + j + " --tail 2").out, "c\n==== tiresias: command ended: exit 0 ====\n");
  // A dependency wait is explained as one, not as a hold, naming the job it waits for as held.
  const std::string first = Submit("-H -- true");
  const std::string after = Submit("-d afterok:" + first + " -- true");
  const std::string why = Cli("explain " + after).out;
  EXPECT_NE(why.find("waiting for its dependency (afterok:" + first + "; job " + first +
                     " is held by its user)"),
            std::string::npos)
      << why;
  EXPECT_EQ(why.find("(held)"), std::string::npos) << why;
  // -o json of several jobs is one document: a list.
  auto both =
      nlohmann::json::parse(Cli("cancel -o json " + after + " " + first).out, nullptr, false);
  ASSERT_TRUE(both.is_array()) << both.dump();
  EXPECT_EQ(both.size(), 2u);
  // A time as tiresias prints it (UTC, with Z) is taken back as input.
  EXPECT_EQ(Cli("history -S 2026-01-01T00:00:00Z").rc, 0);
  EXPECT_EQ(Cli("history -S 2026-01-01T00:00:00+00:00").rc, 0);
  // events --after 0 starts from the first event (it gave the latest, as without --after).
  const auto first_events = Json("events --after 0 --limit 1");
  ASSERT_EQ(first_events.size(), 1u) << first_events.dump();
  const auto latest = Json("events --limit 1");
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_LT(first_events[0]["seq"].get<int64_t>(), latest[0]["seq"].get<int64_t>());
  EXPECT_LE(first_events[0]["seq"].get<int64_t>(), 2)
      << first_events.dump();  // the journal's start
  // A job killed by a signal: EXIT:SIGNAL as sacct prints it, 0:15, not -1:15. (It kills
  // itself: a cancel would end the job before its exit is recorded.)
  const std::string killed = Submit("-- sh -c 'kill -TERM $$'");
  ASSERT_EQ(Cli("wait " + killed + " --timeout 60").rc, 128 + 15);
  const std::string show = Cli("show " + killed).out;
  EXPECT_NE(show.find("ExitCode=0:15"), std::string::npos) << show;
  // submit -o FILE -e FILE as sbatch takes them (-o was the output format: "train.log not
  // in {text, json}"); the format is still --json there.
  const std::string out = sd() + "/o-%j.log", err = sd() + "/e-%j.log";
  const std::string io = Submit("-o " + out + " -e " + err + " -- sh -c 'echo out; echo err >&2'");
  ASSERT_EQ(Cli("wait " + io + " --timeout 60").rc, 0);
  EXPECT_NE(testing::ReadAll(sd() + "/o-" + io + ".log").find("out\n"), std::string::npos);
  EXPECT_EQ(testing::ReadAll(sd() + "/e-" + io + ".log"), "err\n");
  // Every field the README calls stable is there, null when there is none (found by a
  // tester: a held job without a time limit had no time_limit, exit_code, signal,
  // dependencies, allocation or engine_state, a KeyError for a script).
  const std::string held = Submit("-H -- true");
  const nlohmann::json hj = Json("show " + held);
  for (const char* key : {"id",
                          "ref",
                          "name",
                          "user",
                          "gpus",
                          "model",
                          "state",
                          "reason",
                          "queue",
                          "held",
                          "attempt",
                          "preemptions",
                          "kills",
                          "checkpointed",
                          "time_s",
                          "wait_s",
                          "attained_gpu_s",
                          "time_limit",
                          "dependencies",
                          "submitted_at_ms",
                          "first_start_ms",
                          "last_start_ms",
                          "end_ms",
                          "exit_code",
                          "signal",
                          "message",
                          "nodes",
                          "allocation",
                          "devices",
                          "engine_job",
                          "engine_state",
                          "stdout_path",
                          "stderr_path",
                          "argv",
                          "cwd"}) {
    EXPECT_TRUE(hj.contains(key)) << key << ": " << hj.dump();
  }
  EXPECT_TRUE(hj["time_limit"].is_null() && hj["exit_code"].is_null()) << hj.dump();
  const std::string shown = Cli("show " + held).out;
  EXPECT_NE(shown.find("TimeLimit=UNLIMITED"), std::string::npos) << shown;
  EXPECT_EQ(shown.find("ExitCode"), std::string::npos) << shown;
  EXPECT_EQ(shown.find("Dependency="), std::string::npos) << shown;
  ASSERT_EQ(Cli("cancel " + held).rc, 0);
  EXPECT_EQ(Cli("wait " + held).rc, 125);
  // An -o file that cannot be opened: the job fails with exit 126 and says why (show said
  // "exit 126" alone), and `logs` says the file does not exist (it printed nothing, exit 0).
  const std::string bad = Submit("-o " + sd() + "/no-such-dir/x.log -- true");
  EXPECT_EQ(Cli("wait " + bad + " --timeout 60").rc, 126);
  const std::string bad_show = Cli("show " + bad).out;
  EXPECT_NE(bad_show.find("cannot open " + sd() +
                          "/no-such-dir/x.log for the job's stdout: No "
                          "such file or directory"),
            std::string::npos)
      << bad_show;
  // ls -a says it too, after where it ran (found by a tester: "local:1" alone).
  const std::string bad_ls = Cli("ls -a").out;
  EXPECT_NE(bad_ls.find("(exit 126: cannot open " + sd() + "/no-such-dir/x.log"), std::string::npos)
      << bad_ls;
  const CmdResult bad_logs = Cli("logs " + bad);
  EXPECT_NE(bad_logs.rc, 0);
  EXPECT_NE(bad_logs.out.find("does not exist (failed: exit 126: cannot open"), std::string::npos)
      << bad_logs.out;
  // An empty value is refused, not read as no flag (`-a ''` made a plain job).
  for (const char* flag : {"-a", "-J", "-t", "-d", "-o"}) {
    CmdResult empty = Cli(std::string("submit ") + flag + " '' -- true");
    EXPECT_NE(empty.rc, 0) << flag << ": " << empty.out;
    EXPECT_NE(empty.out.find("an empty value"), std::string::npos) << flag << ": " << empty.out;
  }
  // release of an array counts the tasks it released (it counted all six, "2 not held").
  const std::string arr = Submit("-H -a 0-5%2 -- sleep 30");
  EXPECT_EQ(Cli("release " + arr + "_0").out, "released job " + arr + "_0\n");
  EXPECT_EQ(Cli("release " + arr).out, "released job " + arr + " (5 tasks; 1 not held)\n");
  EXPECT_EQ(Cli("cancel " + arr).rc, 0);
  // A task's error names the task as the user did (it named the task's own id).
  const CmdResult again_task = Cli("cancel " + arr + "_1");
  EXPECT_NE(again_task.out.find("job " + arr + "_1: already cancelled"), std::string::npos)
      << again_task.out;
  // logs --tail 0 prints nothing (as tail -n 0; it printed everything).
  EXPECT_EQ(Cli("logs " + io + " --tail 0").out, "");
  auto json = nlohmann::json::parse(Cli("submit --json -- true").out, nullptr, false);
  EXPECT_TRUE(json.is_object() && json.contains("id")) << json.dump();
  // whatif replays the journal of $TIRESIAS_STATE_DIR, as every command reads it (it read
  // ./tiresias.db), and -o json gives its comparison as one object (it printed the tables).
  const std::string two = Submit("--gpus 2 -- true");
  ASSERT_EQ(Cli("wait " + two + " --timeout 60").rc, 0);
  const auto whatif = Json("whatif");
  EXPECT_EQ(whatif["journal"], (dir_ / "tiresias.db").string()) << whatif.dump();
  EXPECT_GE(whatif["live"]["finished"].get<int>(), 3) << whatif.dump();
  EXPECT_FALSE(whatif["jobs"].empty()) << whatif.dump();
  // The live column knows its jobs' users and the shape of their runs (it had no users, so
  // no fairness, and 0 nodes per multi-GPU job).
  EXPECT_EQ(whatif["live"]["fairness"]["users"], 1) << whatif["live"].dump();
  EXPECT_EQ(whatif["live"]["mean_nodes_multi_gpu"], 1.0) << whatif["live"].dump();
  EXPECT_EQ(whatif["users"].size(), 1u);
  // On a cluster too small for the 2-GPU job, the whatif run rejects it, and says that its
  // figures are over the jobs it finished only (found by a tester: its ratio read as a win).
  const CmdResult small = Cli("whatif --cluster 1x1x1");
  EXPECT_EQ(small.rc, 0) << small.out;
  EXPECT_NE(small.out.find("note: the whatif run finished "), std::string::npos) << small.out;
  EXPECT_NE(small.out.find("tables below compare the jobs both finished"), std::string::npos);
}

class TenantsCliTest : public EverydayTest {
 protected:
  void SetUp() override {
    tenants_ = R"({"default_vc": "vision",
                   "vcs": [{"name": "vision", "quota": 2}, {"name": "nlp", "quota": 2}]})";
    EverydayTest::SetUp();
  }
};

TEST_F(TenantsCliTest, AVcClaimingItsQuotaGetsItWithinOneGracePeriodAndTheCliShowsItByVc) {
  const std::string stubborn = "-- sh -c 'trap \"\" TERM; sleep 60'";
  std::vector<std::string> vision;
  for (int i = 0; i < 3; ++i) vision.push_back(Submit("--gpus 1 -J v " + stubborn));
  const std::string n1 = Submit("--gpus 1 -A nlp -J n1 " + stubborn);
  ASSERT_TRUE(testing::WaitFor([&] { return Json("ls -t running").size() == 4; },
                               std::chrono::seconds(20)));
  const auto vcs = Json("vcs");
  EXPECT_EQ(vcs["vcs"][0]["name"], "vision");
  EXPECT_EQ(vcs["vcs"][0]["running_gpus"], 3);
  EXPECT_EQ(vcs["vcs"][0]["borrowed_gpus"], 1);
  CmdResult table = Cli("vcs");
  EXPECT_NE(table.out.find("is lent, and reclaimed by preemption"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("BORROWED"), std::string::npos) << table.out;

  const std::string n2 = Submit("--gpus 1 --vc nlp -J n2 -- sleep 60");
  ASSERT_TRUE(testing::WaitFor([&] { return Json("show " + n2)["state"] == "running"; },
                               std::chrono::seconds(20)));
  const auto job = Json("show " + n2);
  const int64_t waited =
      job["first_start_ms"].get<int64_t>() - job["submitted_at_ms"].get<int64_t>();
  EXPECT_GE(waited, 1000) << "the borrower ignores SIGTERM: only SIGKILL at its grace frees it";
  EXPECT_LE(waited, 1000 + 2000) << "one grace period, plus the loop's latency";
  EXPECT_EQ(Json("ls --vc nlp").size(), 2u);  // and a VC serve has not is said:
  EXPECT_NE(Cli("ls --vc nlpp").out.find("no VC \"nlpp\" (VCs: vision, nlp)"), std::string::npos);
  const auto mine = Json("ls -A vision");
  ASSERT_EQ(mine.size(), 3u);
  const auto& back = mine[2];  // vision's last job gave the GPU back
  EXPECT_EQ(back["id"].get<int64_t>(), std::stoll(vision[2]));
  EXPECT_EQ(back["state"], "pending");
  CmdResult ls = Cli("ls");
  EXPECT_NE(ls.out.find("VC"), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find("(VcQuota)"), std::string::npos) << ls.out;
  CmdResult why = Cli("explain " + vision[2]);
  EXPECT_NE(why.out.find("VC `vision` has 2 of its quota of 2 GPUs in use and this job needs 1, "
                         "over the quota: it runs only on GPUs lent"),
            std::string::npos)
      << why.out;
  CmdResult show = Cli("show " + vision[2]);
  EXPECT_NE(show.out.find("VC=vision"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("over its quota of 2"), std::string::npos) << show.out;
  CmdResult bad = Cli("submit -A speech -- true");
  EXPECT_EQ(bad.rc, 1);
  EXPECT_NE(bad.out.find("VC `speech` is not one of the tenants (VCs: vision, nlp)"),
            std::string::npos)
      << bad.out;
  const std::string metrics = serve_->Client().Get("/metrics")->body;
  EXPECT_NE(metrics.find(R"(tiresias_vc_gpus{state="borrowed",vc="vision"} 0)"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find(R"(tiresias_vc_jobs{state="waiting",vc="vision"} 1)"), std::string::npos);
  for (const std::string& id : {vision[0], vision[1], vision[2], n1, n2}) Cli("cancel " + id);
}

// The generated man page and completions come from the binary (`make` builds them) and know
// every subcommand and the policy names.
TEST(EverydayDocs, CompletionKnowsCommandsFlagsAndPolicies) {
  CmdResult bash = RunTiresias("completion bash");
  ASSERT_EQ(bash.rc, 0);
  const fs::path script = testing::ScratchDir("completion") / "tiresias.bash";
  std::ofstream(script) << bash.out;
  auto complete = [&](const std::string& words, int cword) {
    return testing::RunCommandLine("bash -c 'source " + script.string() + "; COMP_WORDS=(" + words +
                                   "); COMP_CWORD=" + std::to_string(cword) +
                                   "; _tiresias; echo \"${COMPREPLY[*]}\"'")
        .out;
  };
  EXPECT_EQ(complete("tiresias subm", 1), "submit\n");
  EXPECT_EQ(complete("tiresias sim --pol", 2), "--policy\n");
  EXPECT_NE(complete("tiresias sim --policy \"\"", 3).find("dlas gittins"), std::string::npos);
  EXPECT_NE(complete("tiresias submit --dep", 2).find("--dependency"), std::string::npos);
  // After `--`: the job's command (a program), then its arguments (files), not our flags; it
  // offered tiresias's flags and subcommands there.
  const std::string program = complete("tiresias submit --gpus 2 -- bas", 5);
  EXPECT_NE((" " + program).find(" bash"), std::string::npos) << program;
  EXPECT_EQ(complete("tiresias submit --gpus 2 -- --gp", 5), "\n");
  const fs::path dir = script.parent_path();
  std::ofstream(dir / "train.py") << "";
  EXPECT_EQ(complete("tiresias submit -- python " + (dir / "tra").string(), 4),
            (dir / "train.py").string() + "\n");
  // submit's -o is the output file (sbatch's), elsewhere the format.
  EXPECT_EQ(complete("tiresias submit -o " + (dir / "tra").string(), 3),
            (dir / "train.py").string() + "\n");
  EXPECT_EQ(complete("tiresias ls -o js", 3), "json\n");
  CmdResult zsh = RunTiresias("completion zsh");
  EXPECT_EQ(zsh.out.rfind("#compdef tiresias", 0), 0u) << zsh.out.substr(0, 80);
}

TEST_F(EverydayTest, RequeueHoldStopsAJobAndHoldsItUntilReleased) {
  // scontrol requeuehold: `hold` takes only a waiting job and said "requeue it first", but a
  // requeued job starts again at once (nothing else waits), so the hold never found it
  // waiting (an exploratory test). `requeue --hold` does both in one step.
  const std::string j = Submit("--gpus 1 -J r -- sleep 60");
  ASSERT_TRUE(testing::WaitFor([&] { return Json("show " + j)["state"] == "running"; }, 10s));
  CmdResult hold = Cli("hold " + j);
  EXPECT_NE(hold.rc, 0) << hold.out;
  EXPECT_NE(hold.out.find("`tiresias requeue --hold " + j + "` stops it and holds it"),
            std::string::npos)
      << hold.out;
  CmdResult rq = Cli("requeue --hold " + j);
  ASSERT_EQ(rq.rc, 0) << rq.out;
  EXPECT_EQ(rq.out, "requeued and held job " + j + "\n");
  // Its process stops (SIGTERM: sleep exits), and it waits, held, never started again.
  ASSERT_TRUE(testing::WaitFor([&] { return Json("show " + j)["state"] == "pending"; }, 10s));
  std::this_thread::sleep_for(500ms);
  auto held = Json("show " + j);
  EXPECT_EQ(held["state"], "pending") << held.dump();
  EXPECT_EQ(held["reason"], "Held") << held.dump();
  EXPECT_EQ(held["attempt"], 0) << held.dump();
  ASSERT_EQ(Cli("release " + j).rc, 0);
  ASSERT_TRUE(testing::WaitFor([&] { return Json("show " + j)["state"] == "running"; }, 10s));
  EXPECT_EQ(Json("show " + j)["attempt"], 1);
  ASSERT_EQ(Cli("cancel " + j).rc, 0);
  // An array's task is named as its user names it (the array's id would requeue every task).
  const std::string a = Submit("--array 0-1 --gpus 1 -J ra -- sleep 60");
  ASSERT_TRUE(
      testing::WaitFor([&] { return Json("show " + a + "_0")["state"] == "running"; }, 10s));
  hold = Cli("hold " + a + "_0");
  EXPECT_NE(hold.out.find("`tiresias requeue --hold " + a + "_0`"), std::string::npos) << hold.out;
  ASSERT_EQ(Cli("cancel " + a).rc, 0);
  // requeue --hold of an array's id stops all of it: its waiting tasks are held too (they
  // started in the running ones' place).
  const std::string b = Submit("--array 0-3%2 --gpus 1 -J rb -- sleep 60");
  ASSERT_TRUE(
      testing::WaitFor([&] { return Json("show " + b + "_1")["state"] == "running"; }, 10s));
  rq = Cli("requeue --hold " + b);
  ASSERT_EQ(rq.rc, 0) << rq.out;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        for (const auto& t : Json("show " + b)) {
          if (t["state"] != "pending" || !t["held"].get<bool>()) return false;
        }
        return true;
      },
      15s))
      << Json("show " + b).dump();
  ASSERT_EQ(Cli("cancel " + b).rc, 0);
}

}  // namespace
}  // namespace tiresias
