// The model-profile readers (src/trace/model_profile_reader.h) and the bounds on what a
// profile may give (core/model_catalog.h). Found by fuzz/model_profile_fuzzer: two tensor
// sizes of 1e308 MB summed to infinity, the skew became 0 and the speed model's rates NaN.
#include "trace/model_profile_reader.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "sim/link_speed_model.h"
#include "test_util.h"

namespace tiresias {
namespace {

std::string Write(const std::string& content) {
  static int n = 0;
  auto path = testing::ScratchDir("profiles") / (fmt::format("p{}.csv", n++));
  std::ofstream(path, std::ios::binary) << content;
  return path.string();
}

TEST(ModelProfileReader, ReadsSizesAndSkew) {
  auto c = ReadModelCatalog(Write("model,tensor_sizes_mb\nvgg,1 2 5 2\nres, 0.5 0.5 \n"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_NE(c->Find("vgg"), nullptr);
  EXPECT_DOUBLE_EQ(c->Find("vgg")->total_mb, 10);
  EXPECT_DOUBLE_EQ(c->Find("vgg")->skew, 0.5);
  EXPECT_DOUBLE_EQ(c->Find("res")->skew, 0.5);
}

TEST(ModelProfileReader, SizesBeyondTheBoundAreRefused) {
  const std::string path = Write("model,tensor_sizes_mb\nvgg16,1.1e308 1.01e308 2.8 20\n");
  auto c = ReadModelCatalog(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            path + ":2: model vgg16: tensor size 1.1e+308 MB is not in (0, 1000000]");
  EXPECT_FALSE(ReadModelCatalog(Write("model,tensor_sizes_mb\nm,0 1\n")).ok());
  EXPECT_TRUE(ReadModelCatalog(Write("model,tensor_sizes_mb\nm,1000000 1\n")).ok());
}

TEST(ModelProfileReader, ComputeTimesBeyondTheBoundAreRefused) {
  ModelCatalog c;
  ASSERT_TRUE(c.Add("vgg16", {392, 64}).ok());
  const std::string path = Write(
      "job_id,num_gpu,submit_time,iterations,model_name,duration\n"
      "0,1,0,100,vgg16,50\n"
      "1,1,0,1e-300,vgg16,1e300\n");
  Status st = ReadComputeTimes(path, c);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), path +
                              ":3: duration 1e300 s / 1e-300 iterations is more than 3600000 ms "
                              "per iteration");
  ASSERT_TRUE(
      ReadComputeTimes(Write("num_gpu,iterations,model_name,duration\n1,100,vgg16,50\n"), c).ok());
  EXPECT_DOUBLE_EQ(c.Find("vgg16")->compute_ms, 500);
}

// The largest profile the bounds allow still gives the simulator a usable rate: at least
// kMinRate, so remaining work / rate fits in 64-bit ms.
TEST(ModelProfileReader, ExtremeProfilesKeepRatesInRange) {
  ModelCatalog c;
  ASSERT_TRUE(c.Add("huge", std::vector<double>(1000, kMaxTensorMb)).ok());
  ASSERT_TRUE(c.SetComputeMs("huge", 0.001).ok());
  const Topology topo = *Topology::Create(2, 4, 4);
  for (CommMode mode : {CommMode::kParameterServer, CommMode::kAllReduce}) {
    LinkSpeedModel m(c, {.intra = 1e5, .inter_node = 1e5, .inter_switch = kMinLinkGBps}, 200, mode);
    const double rate = m.RateOf("huge", {.gpus = 8, .nodes = 8, .switches = 2}, topo);
    EXPECT_EQ(rate, kMinRate);
  }
}

}  // namespace
}  // namespace tiresias
