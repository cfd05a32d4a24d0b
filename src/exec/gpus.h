// GPU discovery for the live daemon: the machine's NVIDIA GPUs as nvidia-smi lists them, or
// a number of emulated GPUs when there are none (tests, laptops, CI).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tiresias {

struct GpuInfo {
  int index = 0;           // nvidia-smi's index, the number CUDA_VISIBLE_DEVICES takes
  std::string uuid;        // "GPU-..." (or "EMU-<i>")
  std::string name;        // "NVIDIA H200"
  int64_t memory_mib = 0;  // total memory; -1 when nvidia-smi reports [N/A]
  bool emulated = false;
};

// The arguments DiscoverNvidiaGpus passes to nvidia-smi.
inline constexpr char kNvidiaSmiQuery[] = "--query-gpu=index,uuid,name,memory.total";

// Parses `nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv` output: a header
// "index, uuid, name, memory.total [MiB]" (columns are found by name, so any order works),
// then rows like "0, GPU-8f3c..., NVIDIA H200, 143771 MiB". Also takes --format=csv,noheader
// (columns in the order above), nounits, blank lines and "[N/A]" memory. Errors name the
// line and the problem.
StatusOr<std::vector<GpuInfo>> ParseNvidiaSmiCsv(std::string_view text);

// Runs nvidia-smi (searched on PATH unless `nvidia_smi` contains a '/') and parses its
// output. NotFound when it is absent; an error carrying its output when it fails or hangs.
StatusOr<std::vector<GpuInfo>> DiscoverNvidiaGpus(const std::string& nvidia_smi = "nvidia-smi");

// n emulated GPUs: index i, name "emulated-gpu-<i>", uuid "EMU-<i>", memory -1 (unknown),
// emulated = true.
std::vector<GpuInfo> EmulatedGpus(int n);

}  // namespace tiresias
