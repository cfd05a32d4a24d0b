// The example trainer's checkpoint: a small text file holding the seed, the problem shape
// and the whole TrainState, with every double and the generator state written as the 16 hex
// digits of its bit pattern so a resumed run continues from exactly the same numbers.
// Written to a temporary file, flushed to disk and renamed over the old one, so a reader
// sees either the previous checkpoint or the new one, never a partial file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "model.h"

namespace trainer {

inline constexpr char kCheckpointFile[] = "checkpoint.txt";

std::string SerializeCheckpoint(uint64_t seed, const TrainState& s);
// Errors name the line and the problem; a checkpoint for another seed or shape is refused.
tiresias::StatusOr<TrainState> ParseCheckpoint(std::string_view text, uint64_t seed);

// Writes dir/checkpoint.txt atomically (tmp + fsync + rename + fsync of the directory).
tiresias::Status WriteCheckpoint(const std::filesystem::path& dir, uint64_t seed,
                                 const TrainState& s);
// The state in dir/checkpoint.txt; nullopt when there is none.
tiresias::StatusOr<std::optional<TrainState>> ReadCheckpoint(const std::filesystem::path& dir,
                                                             uint64_t seed);

}  // namespace trainer
