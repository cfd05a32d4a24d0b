// Range checks for the numeric command-line flags (see flags.h).
#include "cli/flags.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

#include "common/strings.h"
#include "store/job_record.h"

namespace tiresias {
namespace {

// `text` as a number of type T, all of it (a leading '+' allowed); nullopt otherwise.
template <typename T>
std::optional<T> Whole(std::string_view text) {
  if (text.starts_with('+')) text.remove_prefix(1);
  T v{};
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

// Whether `text`, which is no double, is a number beyond a double's range: +1 too large
// (overflow), -1 too near 0 (underflow: 1e-400), 0 neither.
int OutOfDoubleRange(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return 0;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno != ERANGE) return 0;
  return std::abs(v) > 1 ? 1 : -1;
}

}  // namespace

CLI::Validator NumberIn(double lo, double hi, bool lo_open) {
  const std::string range = fmt::format("{}{}, {}]", lo_open ? "(" : "[", lo, hi);
  return CLI::Validator(
      [lo, hi, lo_open, range](std::string& input) -> std::string {
        auto v = Whole<double>(input);
        // (1e-400 was "not a finite number"; found by a tester.)
        if (const int beyond = v ? 0 : OutOfDoubleRange(input); beyond > 0) {
          return fmt::format(
              "{} is out of range, too large for a number (overflow): expected a number in {}",
              input, range);
        } else if (beyond < 0) {
          return fmt::format(
              "{} is too small, nearer 0 than a number can be (underflow): expected a number "
              "in {}",
              input, range);
        }
        if (!v || !std::isfinite(*v)) {
          return fmt::format("{} is not a finite number: expected a number in {}", input, range);
        }
        if (*v < lo || (lo_open && *v == lo) || *v > hi) {
          return fmt::format("{} is out of range: expected a number in {}", input, range);
        }
        return "";
      },
      "NUMBER in " + range);
}

CLI::Validator IntegerIn(int64_t lo, int64_t hi) {
  const std::string range = fmt::format("{}..{}", lo, hi);
  return CLI::Validator(
      [lo, hi, range](std::string& input) -> std::string {
        auto v = Whole<int64_t>(input);
        if (!v) {
          // A number too large for 64 bits is out of range too, not "not an integer".
          const bool digits =
              !input.empty() && input.find_first_not_of("-0123456789") == std::string::npos;
          return fmt::format("{} is {}: expected an integer in {}", input,
                             digits ? "out of range" : "not an integer", range);
        }
        if (*v < lo || *v > hi) {
          return fmt::format("{} is out of range: expected an integer in {}", input, range);
        }
        return "";
      },
      "INT in " + range);
}

CLI::Validator NotEmpty() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        if (input.empty()) return "an empty value: give one, or leave the flag out";
        // `-J -- cmd`, `-J --gpus 1 cmd`: the value was forgotten, and what came next taken
        // for it.
        if (input == "--") return "a value is missing before `--`";
        // (Also a short one: `-J -H cmd`; "-" alone and numbers pass.)
        const bool flag =
            input.starts_with("--") || (input.size() > 1 && input[0] == '-' &&
                                        std::isalpha(static_cast<unsigned char>(input[1])));
        if (flag) return "a value is missing before " + input + " (a flag)";
        return "";
      },
      "", "NOT_EMPTY");
}

CLI::Validator JobStates(bool ended_only) {
  return CLI::Validator(
      [ended_only](std::string& input) -> std::string {
        // Slurm's spellings too: any case, COMPLETED for finished, CONFIGURING for starting,
        // COMPLETING for stopping, and squeue's short codes (PD, CF, R, CG, CD, F, CA, TO).
        static const std::map<std::string, std::string> kSlurm = {{"completed", "finished"},
                                                                  {"configuring", "starting"},
                                                                  {"completing", "preempting"},
                                                                  {"pd", "pending"},
                                                                  {"cf", "starting"},
                                                                  {"r", "running"},
                                                                  {"cg", "preempting"},
                                                                  {"cd", "finished"},
                                                                  {"f", "failed"},
                                                                  {"ca", "cancelled"},
                                                                  {"to", "timeout"}};
        std::vector<std::string> states;
        for (auto part : Split(input, ',')) {
          std::string st(Trim(part));
          for (char& ch : st) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
          if (auto it = kSlurm.find(st); it != kSlurm.end()) st = it->second;
          states.push_back(st);
        }
        input = Join(states, ",");
        for (const std::string& part : states) {
          const auto st = ParseLiveState(part);
          if (!st) {
            return fmt::format(
                "{} is not a job state (pending, starting, running, preempting, "
                "finished, failed, cancelled, timeout)",
                part);
          }
          if (ended_only && !IsTerminal(*st)) {  // history listed running jobs as ended
            return fmt::format(
                "{} is not an end state (finished, failed, cancelled, timeout): history lists "
                "jobs that ended; `tiresias ls -t {}` lists those",
                part, part);
          }
        }
        return "";
      },
      "STATE[,STATE...]");
}

CLI::Validator JobRef() {
  const CLI::Validator id = IntegerIn(1, INT64_MAX);
  return CLI::Validator(
      [id](std::string& input) -> std::string {
        const auto cut = input.find('_');
        std::string job = input.substr(0, cut);
        if (auto bad = id(job); !bad.empty()) return bad;
        if (cut == std::string::npos) return "";
        std::string task = input.substr(cut + 1);
        if (!Whole<int64_t>(task) || task.starts_with('+') || task.starts_with('-')) {
          return fmt::format("{} is not a job id or ARRAY_INDEX (e.g. 42 or 42_7)", input);
        }
        return "";
      },
      "ID[_INDEX]");
}

CLI::Validator Unsigned() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        if (!Whole<uint64_t>(input)) {
          return fmt::format("{} is not an integer in 0..{}", input, UINT64_MAX);
        }
        return "";
      },
      "UINT");
}

}  // namespace tiresias
