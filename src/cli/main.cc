// The `tiresias` command: simulator and comparisons, the live scheduler and its client.
// Exit codes: 0 success; 1 a runtime error (the server refused, a file is unreadable, a job
// failed to be found); 2 a usage error (an unknown command or flag, a bad value), with the
// closest command or flag suggested. `wait` exits with its jobs' worst status (README).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <iostream>
#include <optional>
#include <string_view>

#include "cli/commands.h"

namespace tiresias {

std::optional<std::string> Closest(const std::string& word,
                                   const std::vector<std::string>& candidates) {
  // Edit distance (insertions, deletions, substitutions, adjacent swaps), row by row.
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      for (size_t j = 1; j <= b.size(); ++j) {
        d[i][j] = std::min(
            {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.size()][b.size()];
  };
  std::optional<std::string> best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const size_t dist = distance(word, c);
    if (dist < best_d) {
      best_d = dist;
      best = c;
    }
  }
  return best;
}

namespace {

// The deepest subcommand the user named, and what it takes.
// The command being parsed: the deepest subcommand parsed (the app itself if none).
const CLI::App* Parsed(const CLI::App& app) {
  const CLI::App* at = &app;
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const CLI::App* sub : at->get_subcommands({})) {
      if (sub->parsed()) {
        at = sub;
        deeper = true;
        break;
      }
    }
  }
  return at;
}

// The commands of `at` a user may name (not the hidden ones, `_shim`).
std::vector<std::string> CommandNames(const CLI::App& at) {
  std::vector<std::string> out;
  for (const CLI::App* sub : at.get_subcommands({})) {
    if (!sub->get_name().starts_with("_")) out.push_back(sub->get_name());
  }
  return out;
}

std::vector<std::string> Choices(const CLI::App& app) {
  const CLI::App* at = Parsed(app);
  std::vector<std::string> out = CommandNames(*at);
  for (const CLI::Option* o : at->get_options()) {
    for (const auto& l : o->get_lnames()) out.push_back("--" + l);
  }
  return out;
}

// The first word before `--` that is written as a flag but is none of the parsed command's
// options (their values skipped: `-S -1`, `--policy -x`); nullopt when no command was parsed.
std::optional<std::string> UnknownFlag(const CLI::App& app, int argc, char** argv) {
  const CLI::App* at = Parsed(app);
  if (at == &app) return std::nullopt;
  for (int i = 1; i < argc; ++i) {
    const std::string_view w = argv[i];
    if (w == "--") break;
    if (w.size() < 2 || w[0] != '-' || std::isdigit(static_cast<unsigned char>(w[1])) ||
        w[1] == '.') {
      continue;  // a command word, a positional or a negative number
    }
    const bool long_form = w.starts_with("--");
    const std::string name(long_form ? w.substr(0, w.find('=')) : w.substr(0, 2));
    const CLI::Option* o = at->get_option_no_throw(name);
    if (!o) return name;
    const bool attached = long_form ? w.find('=') != std::string_view::npos : w.size() > 2;
    if (o->get_items_expected_min() > 0 && !attached) ++i;  // its value
  }
  return std::nullopt;
}

// The word where a command was expected that is none of its parent's commands, and that
// parent: `simulate` in `tiresias simulate --trace x`, `synthesize` in `tiresias trace
// synthesize` (CLI11 said only "A subcommand is required", and the suggestion came from
// another word). nullopt when every command word is known.
std::optional<std::pair<std::string, const CLI::App*>> UnknownCommand(const CLI::App& app, int argc,
                                                                      char** argv) {
  const CLI::App* at = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string w = argv[i];
    if (w == "--") break;
    if (w.starts_with("-")) continue;
    const auto subs = at->get_subcommands({});
    if (auto sub = std::find_if(subs.begin(), subs.end(),
                                [&](const CLI::App* c) { return c->check_name(w); });
        sub != subs.end()) {
      at = *sub;
      continue;
    }
    if (at->get_require_subcommand_min() == 0) break;  // a positional of a command
    return std::make_pair(w, at);
  }
  return std::nullopt;
}

// Where the command's first word is in `tiresias submit ...` without `--`: the first word
// not written as a flag, submit's options' values skipped; -1 at `--` or when there is none.
int CommandIndex(CLI::App& submit, int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--") return -1;
    if (!a.starts_with("-") || a == "-") return i;
    if (a.find('=') != std::string_view::npos) continue;
    const CLI::Option* o = submit.get_option_no_throw(std::string(a));
    if (o && o->get_items_expected_max() > 0) ++i;  // its value
    // An unknown one (a typo of submit's) likely takes the word after it as its value.
    if (!o && i + 1 < argc && !std::string_view(argv[i + 1]).starts_with("-")) ++i;
  }
  return -1;
}

// What to say when `submit` without `--` failed to parse because of a word written as a flag
// after the command's first word (the command's own option, or one of submit's: either way
// not submit's to read there), or nullopt: `word` is the one CLI11 did not expect, if any.
// (Those after a command that parsed are refused by submit itself: ambiguous.)
std::optional<std::string> LateFlagHint(CLI::App& submit, int argc, char** argv,
                                        const std::string& what, const std::string& word) {
  const int cmd = CommandIndex(submit, argc, argv);
  if (cmd < 0) return std::nullopt;
  for (int i = cmd + 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (!a.starts_with("-") || a == "-") continue;
    const std::string name(a.substr(0, a.find('=')));
    const CLI::Option* o = submit.get_option_no_throw(name);
    // The error is this word's: not expected, or one of submit's that wanted its value.
    const bool its = name == word || (o && what.starts_with(o->get_name() + ":"));
    if (!its) continue;
    if (o) return AmbiguousSubmitFlag(name, argv[cmd]);
    return fmt::format(
        "if {} is the command's own option, put -- before the command: tiresias submit "
        "[OPTIONS] -- COMMAND [ARGS...]",
        name);
  }
  return std::nullopt;
}

}  // namespace
}  // namespace tiresias

int main(int argc, char** argv) {
  CLI::App app{"tiresias: a GPU cluster manager for distributed deep learning (NSDI'19 Tiresias)"};
  app.set_version_flag("--version", std::string("tiresias ") + TIRESIAS_VERSION);
  app.require_subcommand(1);
  int rc = 0;
  tiresias::AddSimCommands(app, rc);
  tiresias::AddProfileCommands(app, rc);
  tiresias::AddSweepCommand(app, rc);
  tiresias::AddTraceCommands(app, rc);
  tiresias::AddServeCommand(app, rc);
  tiresias::AddJobCommands(app, rc);
  tiresias::AddClusterCommands(app, rc);
  tiresias::AddWhatIfCommand(app, rc);
  tiresias::AddShimCommand(app, rc);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string what = e.what();
    // `submit python train.py --lr 3`, `submit ls -l -a`: the command's own options were read
    // as submit's. Said instead of CLI11's error (which blamed --array for `-a`).
    if (argc > 1 && std::string_view(argv[1]) == "submit") {
      const std::string word = what.find("not expected") != std::string::npos
                                   ? what.substr(what.rfind(' ') + 1)
                                   : std::string();
      if (auto hint =
              tiresias::LateFlagHint(*app.get_subcommand("submit"), argc, argv, what, word)) {
        std::cerr << *hint << "\n";
        return 2;
      }
      // `--env A=1 B=2 -- CMD`: B=2 became the command and CMD was not expected.
      if (const int cmd = tiresias::CommandIndex(*app.get_subcommand("submit"), argc, argv);
          cmd > 0) {
        if (auto hint = tiresias::AssignmentAsCommand(argv[cmd])) {
          std::cerr << *hint << "\n";
          return 2;
        }
      }
    }
    (void)app.exit(e);
    if (what.find("A subcommand is required") != std::string::npos) {
      if (auto unknown = tiresias::UnknownCommand(app, argc, argv)) {
        const auto& [word, parent] = *unknown;
        const std::vector<std::string> names = tiresias::CommandNames(*parent);
        auto near = tiresias::Closest(word, names);
        for (const auto& n : names) {  // `simulate` for sim, `synthesize` for synth
          if (!near && n.size() >= 3 && (word.starts_with(n) || n.starts_with(word))) near = n;
        }
        std::cerr << fmt::format("{}: no such command of {}{}\n", word,
                                 parent == &app ? "tiresias" : "tiresias " + parent->get_name(),
                                 near ? fmt::format("; did you mean {}?", *near)
                                      : fmt::format(" (its commands: {})", fmt::join(names, ", ")));
        return 2;
      }
    }
    // "The following arguments were not expected: --gpu 2": suggest the closest name.
    if (what.find("not expected") != std::string::npos ||
        what.find("A subcommand is required") != std::string::npos ||
        what.find("could not be matched") != std::string::npos) {
      const auto choices = tiresias::Choices(app);
      // A misspelled flag anywhere, or a misspelled command where one was expected.
      for (int i = 1; i < argc; ++i) {
        std::string word = argv[i];
        if (word == "--") break;
        word = word.substr(0, word.find('='));
        const bool command_slot =
            i == 1 || what.find("subcommand is required") != std::string::npos;
        if (!word.starts_with("-") && !command_slot) continue;
        if (std::find(choices.begin(), choices.end(), word) != choices.end()) continue;
        if (auto near = tiresias::Closest(word, choices)) {
          std::cerr << "did you mean " << *near << "?\n";
          break;
        }
      }
      // A flag like nothing the command has (CLI11 may name another word as unexpected).
      if (auto unknown = tiresias::UnknownFlag(app, argc, argv);
          unknown && !tiresias::Closest(*unknown, choices)) {
        std::cerr << fmt::format("{}: no such option (--help lists them)\n", *unknown);
      }
    }
    return 2;
  }
  return rc;
}
