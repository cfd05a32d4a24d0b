// Reads model profiles for placement and the speed model: a CSV `model,tensor_sizes_mb`
// (space-separated sizes), such as ../shared/profiles/tensor_sizes.csv, and per-iteration
// compute times (one GPU) from a Tiresias-format trace with `iterations`, e.g. the public
// simulator's 60_job.csv. Errors name the file and line.
#pragma once

#include <string>

#include "common/status.h"
#include "core/model_catalog.h"

namespace tiresias {

StatusOr<ModelCatalog> ReadModelCatalog(const std::string& path);
// Sets each known model's compute_ms to the fastest 1-GPU duration / iterations found in a
// Tiresias-format trace (columns num_gpu, iterations, model_name, duration).
Status ReadComputeTimes(const std::string& trace_path, ModelCatalog& catalog);

}  // namespace tiresias
