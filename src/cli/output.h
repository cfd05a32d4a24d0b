// What the client commands share: how to reach serve (--state-dir, --server, --token), the
// output format (-o text|json|wide: JSON is the API's own objects, stable and documented in
// the README), errors (runtime errors exit 1; usage errors exit 2 in main), and the
// renderings people read (durations, ISO-8601 times, escaped text).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/client.h"
#include "common/status.h"

namespace tiresias {

enum class OutputFormat { kText, kJson, kWide };

struct Common {
  ClientOptions conn;
  OutputFormat out = OutputFormat::kText;
  bool json() const { return out == OutputFormat::kJson; }
};

void AddConnFlags(CLI::App* c, Common& o);
// -o/--output-format text|json (and wide where `wide`).
// `short_o`: -o names the format too (submit leaves -o to its output file, as sbatch does).
void AddOutputFlag(CLI::App* c, Common& o, bool wide = false, bool short_o = true);

// Prints the error for people and returns the runtime exit code, 1.
int Error(const Status& s);

// "5s", "3m07s", "2h05m"; "-" for a negative value.
std::string Human(double seconds);
// "2026-11-30T20:52:10Z" for wall ms; "-" for null.
std::string IsoTime(const nlohmann::json& wall_ms);
// A field for people: "-" when absent, control characters escaped (EscapeControl) so that a
// job name or message cannot drive the terminal. JSON output stays exact.
std::string Str(const nlohmann::json& j, const char* key);
// Whether the job object has `key` with a value (the API writes null for none; an older
// serve left such keys out).
bool Has(const nlohmann::json& j, const char* key);
// How its user names the job an object (a job, a GPU, an event) is about: its `ref`
// (ARRAY_INDEX for an array's task), else the id under `id_key`.
std::string ShownRef(const nlohmann::json& j, const char* id_key = "id");
// A forecast (explain's "estimate", /v1/whatif): likely start and end from now with their
// p10-p90 range, who is most in the way, and the method.
void PrintEstimate(const nlohmann::json& estimate);
// The start of `s` that fits `width` terminal columns (as fmt pads: wide characters take two),
// never cutting a character.
std::string Clip(const std::string& s, size_t width);
bool Terminal(const std::string& state);
// What an output is, for CheckOutputPath: a file written in place (an existing one need only
// be writable itself: /dev/null), a file replaced atomically (its directory must be
// writable), or a directory. Missing directories on the way are made, for files as for
// directories (`--out runs/a/b` made runs/a while `--report runs/a/r.html` was refused; found
// by a tester): the nearest directory there is must be writable.
enum class OutputKind { kFile, kReplacedFile, kDirectory };
// Before the work, whether the output `flag` names can be written as `kind`. A long run
// failed only at its end.
Status CheckOutputPath(const std::string& flag, const std::string& path, OutputKind kind);
// Makes the directories a file output (checked by CheckOutputPath) goes in; an error names
// the flag, the path and the reason.
Status MakeParentDirectories(const std::string& flag, const std::string& path);

// Connects and GETs `path`. Returns the reply to render, or nothing when done: with -o json
// the reply is printed as is; on an error it is printed and `rc` set.
std::optional<nlohmann::json> Fetch(const Common& o, const std::string& path, int& rc);

}  // namespace tiresias
