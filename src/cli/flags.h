// Range checks for the numeric command-line flags (CLI11 validators). Every numeric flag of
// `tiresias` has one: NaN and infinities are refused everywhere, and a value out of range
// fails at start with a message naming the flag (CLI11 puts it first), the value and the
// valid range, e.g. `--port: 83636 is out of range: expected an integer in 0..65535`.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace tiresias {

// A finite number in [lo, hi], or in (lo, hi] with `lo_open` (e.g. a load above 0).
CLI::Validator NumberIn(double lo, double hi, bool lo_open = false);
// A whole number in [lo, hi] (no fraction, no exponent).
CLI::Validator IntegerIn(int64_t lo, int64_t hi);
// A job reference: an id (0..2^63-1) or an array task ARRAY_INDEX such as 42_7.
CLI::Validator JobRef();
// A whole number in [0, 2^64 - 1], such as a seed.
CLI::Validator Unsigned();
// Job states, comma-separated (pending, running, ...; store/job_record.h), in Slurm's
// spellings too; `ended_only`: end states only (history's).
CLI::Validator JobStates(bool ended_only = false);
// Refuses an empty value (`-a ''` must not quietly mean "no array"), `--` and a long flag
// (`-J -- cmd`, `-J --gpus 1 cmd`: the name was forgotten).
CLI::Validator NotEmpty();

}  // namespace tiresias
