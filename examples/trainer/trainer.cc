// tiresias-example-trainer: a small, real, preemptible training job for the live daemon
// and its tests. It trains a 2-layer MLP on a seeded synthetic dataset (see model.h) and
// survives preemption: on SIGTERM (or SIGINT) it finishes the current step, writes a
// checkpoint and exits; started again with the same checkpoint directory it resumes from
// exactly that state, so the final result is bit-identical to an uninterrupted run.
//
// Usage: tiresias-example-trainer --steps N [--step-ms M] [--seed S] [--checkpoint-dir DIR]
//          [--checkpoint-every K] [--log-every L] [--result FILE] [--preempted-exit-code C]
// Environment: TIRESIAS_CHECKPOINT_DIR (used when --checkpoint-dir is absent),
//              TIRESIAS_ATTEMPT (only logged: which launch of the job this is),
//              TIRESIAS_CHECKPOINT_FILE (touched after each checkpoint: serve then knows the
//              work up to it is safe, for checkpoint-aware preemption and `show`),
//              TIRESIAS_DONE_FILE (created once training is finished: a stop signal that
//              arrives after it does not make the job run again).
// Exit codes: 0 training finished (final line printed, --result written);
//             75 (EX_TEMPFAIL, or --preempted-exit-code) stopped by SIGTERM/SIGINT after
//                writing the checkpoint (or with no checkpoint dir, after losing progress);
//             1 a checkpoint or result file could not be read or written;
//             2 bad command line or environment.
#include <fmt/format.h>
#include <signal.h>
#include <time.h>
#include <utime.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "checkpoint.h"
#include "common/strings.h"
#include "model.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;

void OnStop(int) {
  g_stop = 1;
}

void InstallHandlers() {
  struct sigaction sa = {};
  sa.sa_handler = OnStop;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a pending sleep ends early
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

// Sleeps `ms` milliseconds unless a stop signal arrives first.
void SleepMs(int ms) {
  timespec left = {ms / 1000, (ms % 1000) * 1000000L};
  while (!g_stop && nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

void Say(const std::string& line) {
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

int Fail(int code, const std::string& msg) {
  std::fputs(("tiresias-example-trainer: " + msg + "\n").c_str(), stderr);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Trains a small MLP on synthetic data; checkpoints on SIGTERM and resumes."};
  int64_t steps = 0;
  int step_ms = 0;
  uint64_t seed = 42;
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  int64_t log_every = 10;
  std::string result_file;
  int preempted_code = 75;
  app.add_option("--steps", steps, "SGD steps to train in total")
      ->required()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--step-ms", step_ms, "Sleep this long after each step (to be preemptible)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", seed, "Seed of the dataset, the weights and the shuffles");
  app.add_option("--checkpoint-dir", checkpoint_dir,
                 "Checkpoint directory (default: $TIRESIAS_CHECKPOINT_DIR)");
  app.add_option("--checkpoint-every", checkpoint_every, "Also checkpoint every K steps (0: off)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--log-every", log_every, "Print a progress line every L steps")
      ->check(CLI::PositiveNumber);
  app.add_option("--result", result_file, "Also write the final line to this file");
  app.add_option("--preempted-exit-code", preempted_code,
                 "Exit code after a SIGTERM checkpoint (default 75, EX_TEMPFAIL)")
      ->check(CLI::Range(0, 255));
  CLI11_PARSE(app, argc, argv);

  InstallHandlers();
  if (checkpoint_dir.empty()) {
    if (const char* env = std::getenv("TIRESIAS_CHECKPOINT_DIR")) checkpoint_dir = env;
  }
  int64_t attempt = 0;
  if (const char* env = std::getenv("TIRESIAS_ATTEMPT"); env && *env) {
    auto a = tiresias::ParseInt(env);
    if (!a || *a < 0) return Fail(2, fmt::format("TIRESIAS_ATTEMPT '{}' is not an integer", env));
    attempt = *a;
  }

  trainer::Dataset data;
  trainer::TrainState state = trainer::InitialState(seed, data);
  bool resumed = false;
  if (!checkpoint_dir.empty()) {
    auto saved = trainer::ReadCheckpoint(checkpoint_dir, seed);
    if (!saved.ok()) return Fail(1, saved.status().message());
    if (saved->has_value()) {
      state = std::move(**saved);
      resumed = true;
      Say(fmt::format("resumed from step {}, attempt {}", state.step, attempt));
    }
  }
  if (!resumed) Say(fmt::format("starting from step 0, attempt {}", attempt));
  Say(fmt::format("training {} steps, seed {}, checkpoint dir '{}'", steps, seed, checkpoint_dir));

  // The protocol's marker files (README, "Checkpoints"): touched, or created, when set.
  const auto touch = [](const char* var) {
    const char* path = std::getenv(var);
    if (!path || !*path) return true;
    std::ofstream(path, std::ios::app).close();
    if (::utime(path, nullptr) == 0) return true;
    Fail(1, fmt::format("{}: cannot touch {}: {}", var, path, std::strerror(errno)));
    return false;
  };
  auto checkpoint = [&]() -> bool {
    if (checkpoint_dir.empty()) return true;
    tiresias::Status st = trainer::WriteCheckpoint(checkpoint_dir, seed, state);
    if (!st.ok()) Fail(1, st.message());
    return st.ok() && touch("TIRESIAS_CHECKPOINT_FILE");
  };

  while (state.step < steps) {
    if (g_stop) {
      if (!checkpoint()) return 1;
      Say(checkpoint_dir.empty()
              ? fmt::format("stopped at step {}; no checkpoint dir, progress lost", state.step)
              : fmt::format("stopped at step {}; checkpoint written", state.step));
      return preempted_code;
    }
    trainer::TrainStep(data, state);
    if (state.step % log_every == 0) {
      Say(fmt::format("step {} loss={:.6f}", state.step, trainer::Loss(data, state.params)));
    }
    if (checkpoint_every > 0 && state.step % checkpoint_every == 0) {
      if (!checkpoint()) return 1;
      Say(fmt::format("checkpoint at step {}", state.step));
    }
    if (step_ms > 0) SleepMs(step_ms);
  }
  // A finished run leaves its final state behind, so a relaunch reports the same result.
  if (!checkpoint()) return 1;
  std::string final_line =
      fmt::format("final loss={:.17g} checksum={}", trainer::Loss(data, state.params),
                  trainer::Checksum(state.params));
  Say(final_line);
  if (!result_file.empty()) {
    std::ofstream out(result_file);
    out << final_line << "\n";
    out.close();
    if (!out) return Fail(1, fmt::format("{}: cannot write result", result_file));
  }
  return touch("TIRESIAS_DONE_FILE") ? 0 : 1;
}
