// Runs scripts/gpu_check.sh (the real-GPU check of serve) against a fake nvidia-smi with two
// GPUs that honours CUDA_VISIBLE_DEVICES, so the script and serve's nvidia-smi path are
// exercised in CI. On a machine with NVIDIA GPUs the same script runs against the real one.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

namespace {

TEST(GpuCheckScript, PassesAgainstAFakeTwoGpuNvidiaSmi) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(TIRESIAS_TEST_DATA).parent_path().parent_path();
  const std::string cmd = "PATH=" + (fs::path(TIRESIAS_TEST_DATA) / "fake-nvidia-smi").string() +
                          ":$PATH BUILD=" + fs::path(TIRESIAS_BINARY).parent_path().string() +
                          " bash " + (root / "scripts" / "gpu_check.sh").string() + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
  EXPECT_NE(out.find("PASS: serve found 2 GPUs through nvidia-smi"), std::string::npos) << out;
  EXPECT_NE(out.find("PASS: the two concurrent jobs got different GPUs"), std::string::npos) << out;
}

}  // namespace
