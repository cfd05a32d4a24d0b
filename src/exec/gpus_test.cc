// Tests of GPU discovery: parsing recorded nvidia-smi CSV output (tests/data/nvidia-smi) and
// running a fake nvidia-smi from PATH, both when it works and when the driver is missing.
#include "exec/gpus.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_util.h"

namespace tiresias {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(TIRESIAS_TEST_DATA) / "nvidia-smi";

std::string Fixture(const std::string& name) {
  std::ifstream in(kFixtures / name);
  EXPECT_TRUE(in) << (kFixtures / name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes an executable `nvidia-smi` shell script into dir.
fs::path FakeNvidiaSmi(const fs::path& dir, const std::string& body) {
  fs::path p = dir / "nvidia-smi";
  std::ofstream(p) << "#!/bin/sh\n" << body;
  fs::permissions(p, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  return p;
}

// Sets PATH for one test and puts the old value back.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& path) {
    if (const char* old = std::getenv("PATH")) old_ = old;
    ::setenv("PATH", path.c_str(), 1);
  }
  ~ScopedPath() { ::setenv("PATH", old_.c_str(), 1); }

 private:
  std::string old_;
};

TEST(ParseNvidiaSmiCsv, EightH200Box) {
  auto gpus = ParseNvidiaSmiCsv(Fixture("h200x8.csv"));
  ASSERT_TRUE(gpus.ok()) << gpus.status().message();
  ASSERT_EQ(gpus->size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ((*gpus)[i].index, i);
    EXPECT_EQ((*gpus)[i].name, "NVIDIA H200");
    EXPECT_EQ((*gpus)[i].memory_mib, 143771);
    EXPECT_FALSE((*gpus)[i].emulated);
  }
  EXPECT_EQ((*gpus)[0].uuid, "GPU-8f3c2a71-5d0e-4b9a-9c41-2e6f0a7d13b5");
  EXPECT_EQ((*gpus)[7].uuid, "GPU-76c1e2d0-9f3b-48a4-b5e7-0a4d8c62f913");
}

TEST(ParseNvidiaSmiCsv, CapturedFromARealH200) {
  // The real thing, as nvidia-smi printed it on a 1x H200 machine (gpu_check.sh's run there).
  auto gpus = ParseNvidiaSmiCsv(Fixture("h200x1_captured.csv"));
  ASSERT_TRUE(gpus.ok()) << gpus.status().message();
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ((*gpus)[0].index, 0);
  EXPECT_EQ((*gpus)[0].uuid, "GPU-60943228-de65-6991-ad8b-d9c80f5f3816");
  EXPECT_EQ((*gpus)[0].name, "NVIDIA H200");
  EXPECT_EQ((*gpus)[0].memory_mib, 143771);
  EXPECT_FALSE((*gpus)[0].emulated);
}

TEST(ParseNvidiaSmiCsv, NoHeaderAndTrailingBlankLines) {
  auto gpus = ParseNvidiaSmiCsv(Fixture("h100x8_noheader.csv"));
  ASSERT_TRUE(gpus.ok()) << gpus.status().message();
  ASSERT_EQ(gpus->size(), 8u);
  EXPECT_EQ((*gpus)[3].index, 3);
  EXPECT_EQ((*gpus)[3].uuid, "GPU-d51b8e26-9c07-4a3f-85e4-2f6c0d9a7b13");
  EXPECT_EQ((*gpus)[3].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ((*gpus)[3].memory_mib, 81559);
}

TEST(ParseNvidiaSmiCsv, FourA100Box) {
  auto gpus = ParseNvidiaSmiCsv(Fixture("a100x4.csv"));
  ASSERT_TRUE(gpus.ok()) << gpus.status().message();
  ASSERT_EQ(gpus->size(), 4u);
  EXPECT_EQ((*gpus)[2].uuid, "GPU-59d2b8a0-1e4f-4c73-a6b9-f03e7d51c28a");
  EXPECT_EQ((*gpus)[2].name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ((*gpus)[2].memory_mib, 40960);
}

TEST(ParseNvidiaSmiCsv, OneGpuBox) {
  auto gpus = ParseNvidiaSmiCsv(Fixture("rtx4090x1.csv"));
  ASSERT_TRUE(gpus.ok()) << gpus.status().message();
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ((*gpus)[0].name, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ((*gpus)[0].memory_mib, 24564);
}

TEST(ParseNvidiaSmiCsv, MemoryNotAvailableIsMinusOne) {
  auto gpus = ParseNvidiaSmiCsv(Fixture("memory_na.csv"));
  ASSERT_TRUE(gpus.ok()) << gpus.status().message();
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ((*gpus)[0].name, "NVIDIA GH200 480GB");
  EXPECT_EQ((*gpus)[0].memory_mib, -1);
}

TEST(ParseNvidiaSmiCsv, HeaderNamesTheColumnsInAnyOrderAndNoUnits) {
  auto gpus = ParseNvidiaSmiCsv(
      "name, memory.total [MiB], uuid, index\r\nNVIDIA H200, 143771, GPU-b, 1\r\n"
      "NVIDIA H200, 143771, GPU-a, 0\r\n");
  ASSERT_TRUE(gpus.ok()) << gpus.status().message();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].index, 1);
  EXPECT_EQ((*gpus)[0].uuid, "GPU-b");
  EXPECT_EQ((*gpus)[1].index, 0);
  EXPECT_EQ((*gpus)[1].memory_mib, 143771);
}

TEST(ParseNvidiaSmiCsv, EmptyOutputIsNoGpus) {
  auto gpus = ParseNvidiaSmiCsv("index, uuid, name, memory.total [MiB]\n\n");
  ASSERT_TRUE(gpus.ok()) << gpus.status().message();
  EXPECT_TRUE(gpus->empty());
}

TEST(ParseNvidiaSmiCsv, DriverFailureTextIsAClearError) {
  auto gpus = ParseNvidiaSmiCsv(Fixture("driver_failure.txt"));
  ASSERT_FALSE(gpus.ok());
  EXPECT_EQ(gpus.status().code(), StatusCode::kInvalidArgument);
  std::string m = gpus.status().message();
  EXPECT_NE(m.find("nvidia-smi output line 1: expected 4 comma-separated fields"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("'NVIDIA-SMI has failed because it couldn't communicate"), std::string::npos)
      << m;
}

TEST(ParseNvidiaSmiCsv, GarbageNamesTheLineAndTheField) {
  const std::string header = "index, uuid, name, memory.total [MiB]\n";
  const std::string good = "0, GPU-a, NVIDIA H200, 143771 MiB\n";
  struct Case {
    std::string text;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {header + good + "x, GPU-b, NVIDIA H200, 1 MiB\n", "line 3: index 'x' is not"},
           {header + good + "1, GPU-b, NVIDIA H200, lots\n",
            "line 3: memory.total 'lots' is not '<n> MiB' or [N/A]"},
           {header + good + "0, GPU-b, NVIDIA H200, 1 MiB\n", "line 3: GPU 0 listed twice"},
           {header + good + "1, , NVIDIA H200, 1 MiB\n", "line 3: uuid '' is not a GPU UUID"},
           {header + "1, GPU-b, NVIDIA H200\n", "line 2: expected 4 comma-separated fields"},
           {"index, uuid, name\n0, GPU-a, NVIDIA H200\n",
            "line 1: header lacks the 'memory.total' column"},
           {"<html>oops</html>\n", "line 1: expected 4 comma-separated fields"},
       }) {
    auto gpus = ParseNvidiaSmiCsv(c.text);
    ASSERT_FALSE(gpus.ok()) << c.text;
    EXPECT_NE(gpus.status().message().find(c.error), std::string::npos) << gpus.status().message();
  }
}

TEST(EmulatedGpus, NamesAndUuids) {
  std::vector<GpuInfo> gpus = EmulatedGpus(3);
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[2].index, 2);
  EXPECT_EQ(gpus[2].name, "emulated-gpu-2");
  EXPECT_EQ(gpus[2].uuid, "EMU-2");
  EXPECT_TRUE(gpus[2].emulated);
  EXPECT_TRUE(EmulatedGpus(0).empty());
}

TEST(DiscoverNvidiaGpus, RunsNvidiaSmiFromPath) {
  fs::path dir = testing::ScratchDir("path");
  // The script checks its arguments and leaves a marker, so the test knows it was run.
  FakeNvidiaSmi(dir,
                "[ \"$*\" = '--query-gpu=index,uuid,name,memory.total --format=csv' ] || "
                "{ echo \"bad args: $*\" >&2; exit 2; }\n"
                "touch '" +
                    (dir / "ran").string() +
                    "'\n"
                    "cat '" +
                    (kFixtures / "h200x8.csv").string() + "'\n");
  ScopedPath path(dir.string() + ":/usr/bin:/bin");
  auto gpus = DiscoverNvidiaGpus();
  ASSERT_TRUE(gpus.ok()) << gpus.status().message();
  EXPECT_TRUE(fs::exists(dir / "ran"));
  ASSERT_EQ(gpus->size(), 8u);
  EXPECT_EQ((*gpus)[5].uuid, "GPU-2d6b7c18-f4a0-49e3-97c2-58e1a0d4bf39");
  EXPECT_FALSE((*gpus)[5].emulated);
}

TEST(DiscoverNvidiaGpus, RunsAnExplicitPath) {
  fs::path dir = testing::ScratchDir("explicit");
  fs::path smi = FakeNvidiaSmi(dir, "cat '" + (kFixtures / "a100x4.csv").string() + "'\n");
  auto gpus = DiscoverNvidiaGpus(smi.string());
  ASSERT_TRUE(gpus.ok()) << gpus.status().message();
  EXPECT_EQ(gpus->size(), 4u);
}

TEST(DiscoverNvidiaGpus, DriverFailureCarriesItsMessage) {
  fs::path dir = testing::ScratchDir("fail");
  FakeNvidiaSmi(dir, "cat '" + (kFixtures / "driver_failure.txt").string() + "'\nexit 9\n");
  ScopedPath path(dir.string() + ":/usr/bin:/bin");
  auto gpus = DiscoverNvidiaGpus();
  ASSERT_FALSE(gpus.ok());
  EXPECT_EQ(gpus.status().code(), StatusCode::kFailedPrecondition);
  std::string m = gpus.status().message();
  EXPECT_NE(m.find("exited with status 9: NVIDIA-SMI has failed because it couldn't "
                   "communicate with the NVIDIA driver. Make sure that the latest NVIDIA "
                   "driver is installed and running."),
            std::string::npos)
      << m;
}

TEST(DiscoverNvidiaGpus, BadOutputNamesTheProgram) {
  fs::path dir = testing::ScratchDir("garbage");
  fs::path smi = FakeNvidiaSmi(dir, "echo 'index, uuid, name, memory.total [MiB]'\necho 0,1\n");
  auto gpus = DiscoverNvidiaGpus(smi.string());
  ASSERT_FALSE(gpus.ok());
  EXPECT_NE(gpus.status().message().find(smi.string() + ": nvidia-smi output line 2"),
            std::string::npos)
      << gpus.status().message();
}

TEST(DiscoverNvidiaGpus, AbsentIsNotFound) {
  fs::path dir = testing::ScratchDir("absent");
  {
    ScopedPath path(dir.string());
    auto gpus = DiscoverNvidiaGpus();
    ASSERT_FALSE(gpus.ok());
    EXPECT_EQ(gpus.status().code(), StatusCode::kNotFound);
    EXPECT_EQ(gpus.status().message(), "nvidia-smi not found on PATH");
  }
  auto gpus = DiscoverNvidiaGpus((dir / "nvidia-smi").string());
  ASSERT_FALSE(gpus.ok());
  EXPECT_EQ(gpus.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tiresias
